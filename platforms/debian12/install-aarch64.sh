#!/usr/bin/env bash
# Sets up cross-building edgemt for aarch64 Linux and running it under
# qemu-user on this Debian 12 x86_64 machine (run as root). Idempotent.
#
#   host (apt-get install):  g++-aarch64-linux-gnu qemu-user, and the arm64
#       C/C++ runtime libc6:arm64 libgcc-s1:arm64 libstdc++6:arm64 (Multi-Arch:
#       same, so they install beside the amd64 ones; qemu is run with `-L /`
#       and needs /lib/ld-linux-aarch64.so.1 from libc6:arm64)
#   sysroot (apt-get download + dpkg-deb -x): the arm64 libraries and headers
#       the build and the tests need. They are NOT installed with apt: Debian's
#       arm64 XNNPACK, pthreadpool and sentencepiece packages are not
#       Multi-Arch: same, and installing them removes amd64 packages
#       (python3-torch among them).
#
# The sysroot is $EDGEMT_AARCH64_SYSROOT, default /opt/edgemt-aarch64-sysroot:
# outside the work tree, so that every build directory (build-aarch64,
# build-aarch64-*) and every clone on this machine share it, and deleting a
# build directory does not cost a download. platforms/cmake/aarch64-linux-gnu.cmake
# reads the same default. A stamp file lists the package versions extracted;
# when they match the apt candidates, nothing is done.
set -euo pipefail

sysroot=${EDGEMT_AARCH64_SYSROOT:-/opt/edgemt-aarch64-sysroot}
export DEBIAN_FRONTEND=noninteractive

host_packages=(
  g++-aarch64-linux-gnu qemu-user
  libc6:arm64 libgcc-s1:arm64 libstdc++6:arm64
)
# Extracted into the sysroot. libxnnpack0 links libcpuinfo0 and
# libpthreadpool0; Debian's libsentencepiece0 needs nothing beyond
# libstdc++/libgcc/libc (no libprotobuf-lite32); libflatbuffers2 is there
# because libflatbuffers-dev's CMake package checks that libflatbuffers.so
# exists; doctest-dev (Architecture: all)
# so that find_package(doctest) is found in the sysroot like everything else.
sysroot_packages=(
  libxnnpack0:arm64 libxnnpack-dev:arm64
  libpthreadpool0:arm64 libpthreadpool-dev:arm64
  libcpuinfo0:arm64
  libsentencepiece0:arm64 libsentencepiece-dev:arm64
  libflatbuffers2:arm64 libflatbuffers-dev:arm64
  doctest-dev                                # Architecture: all
)

updated=0
apt_update() {
  if [ "$updated" = 0 ]; then
    apt-get update -q
    updated=1
  fi
}

if ! dpkg --print-foreign-architectures | grep -qx arm64; then
  echo "install-aarch64: dpkg --add-architecture arm64"
  dpkg --add-architecture arm64
  apt_update
fi

missing=()
for p in "${host_packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ ${#missing[@]} -gt 0 ]; then
  echo "install-aarch64: installing ${missing[*]}"
  apt_update
  apt-get install -y -q --no-install-recommends "${missing[@]}"
else
  echo "install-aarch64: host packages present"
fi

# "package=candidate version" for each sysroot package, in one apt-cache call;
# fails when apt does not know one yet (e.g. before the first apt-get update
# after adding the arch).
wanted_stamp() {
  local out
  out=$(apt-cache policy "${sysroot_packages[@]}" 2>/dev/null |
        awk '/^[^ ].*:$/ {name = substr($0, 1, length($0) - 1)}
             /^  Candidate:/ {if ($2 != "(none)") print name "=" $2}')
  [ "$(printf '%s\n' "$out" | grep -c .)" = "${#sysroot_packages[@]}" ] || return 1
  printf '%s\n' "$out"
}
stamp_file="$sysroot/.edgemt-sysroot-packages"
if ! wanted=$(wanted_stamp); then
  apt_update
  wanted=$(wanted_stamp) || { echo "install-aarch64: arm64 packages not found by apt" >&2; exit 1; }
fi

if [ -f "$stamp_file" ] && [ "$(cat "$stamp_file")" = "$wanted" ]; then
  echo "install-aarch64: sysroot $sysroot up to date"
else
  # Only a folder this script made (or an empty one) is replaced.
  if [ -d "$sysroot" ] && [ ! -f "$stamp_file" ] && [ -n "$(ls -A "$sysroot" 2>/dev/null)" ] &&
     [ ! -d "$sysroot/.debs" ]; then
    echo "install-aarch64: $sysroot exists and is not an edgemt sysroot; not touching it" >&2
    exit 1
  fi
  echo "install-aarch64: extracting ${#sysroot_packages[@]} arm64 packages into $sysroot"
  rm -rf "$sysroot"
  mkdir -p "$sysroot/.debs"
  # apt downloads as user _apt when it can write there (else it warns).
  if id _apt >/dev/null 2>&1; then chown _apt "$sysroot/.debs"; fi
  (cd "$sysroot/.debs" && apt-get download -q $wanted)
  for deb in "$sysroot"/.debs/*.deb; do
    dpkg-deb -x "$deb" "$sysroot"
  done
  rm -rf "$sysroot/.debs" "$sysroot/usr/share/doc"
  echo "$wanted" > "$stamp_file"
fi

# The toolchain file expects these; fail here rather than in CMake.
lib="$sysroot/usr/lib/aarch64-linux-gnu"
for f in /lib/ld-linux-aarch64.so.1 "$lib/libXNNPACK.so" "$lib/libpthreadpool.so" \
         "$lib/libsentencepiece.so" "$lib/pkgconfig/sentencepiece.pc" \
         "$sysroot/usr/include/xnnpack.h" "$sysroot/usr/include/flatbuffers/flatbuffers.h" \
         "$sysroot/usr/lib/cmake/doctest/doctestConfig.cmake"; do
  [ -e "$f" ] || { echo "install-aarch64: missing $f" >&2; exit 1; }
done
echo "install-aarch64: ready (sysroot $sysroot, $(qemu-aarch64 --version | head -1))"
