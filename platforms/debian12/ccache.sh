# Sourced by the build scripts (build.sh, test-extended.sh, test-aarch64.sh),
# with $root set to the checkout: puts Debian's ccache (installed by
# install-deps.sh) in front of the compilers of every CMake build.
#
#   cmake_launcher_args   the -D flags for cmake's configure step, one per
#                         line: ccache as compiler launcher, or (without
#                         ccache, or with EDGEMT_CCACHE=0) the flags that
#                         remove a launcher an earlier configure set
#
# CCACHE_BASEDIR makes paths under the checkout relative, so that two clones
# of the tree share hits; CCACHE_NOHASHDIR lets the -g builds (sanitizers)
# hit too (their debug info may then name another clone's folder as the
# compilation directory). A cold cache costs nothing but the misses.

export CCACHE_BASEDIR="${CCACHE_BASEDIR:-$root}"
export CCACHE_NOHASHDIR="${CCACHE_NOHASHDIR:-true}"

cmake_launcher_args() {
  if [ "${EDGEMT_CCACHE:-1}" != 0 ] && command -v ccache >/dev/null 2>&1; then
    printf '%s\n' -DCMAKE_C_COMPILER_LAUNCHER=ccache -DCMAKE_CXX_COMPILER_LAUNCHER=ccache
  else
    printf '%s\n' -UCMAKE_C_COMPILER_LAUNCHER -UCMAKE_CXX_COMPILER_LAUNCHER
  fi
}
