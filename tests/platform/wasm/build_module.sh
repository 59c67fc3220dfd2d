#!/usr/bin/env bash
# ctest wasm.build (tests/platform/wasm.cmake): the WebAssembly module,
# platforms/wasm/build.sh into BUILD_DIR (its dist/ copy is what the other
# wasm tests load), then the stamp BUILD_DIR/built they look for.
#
#   bash tests/platform/wasm/build_module.sh BUILD_DIR
#
# Prints "SKIPPED: ..." and succeeds without emcc or node: tests do not
# install packages (platforms/debian12/install-deps.sh installs emscripten
# and nodejs, so CI has them). Compiles through ccache when it is installed
# (EM_COMPILER_WRAPPER puts it in front of emcc's clang; EDGEMT_CCACHE=0
# turns it off): a rebuild from an empty build folder then takes ~25 s
# instead of ~90 s on 2 cores.
set -euo pipefail
build="$(realpath -m "$1")"
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/../../.." && pwd)"
rm -f "$build/built"
for tool in emcc node; do
  if ! command -v "$tool" > /dev/null; then
    echo "SKIPPED: $tool not found (platforms/debian12/install-deps.sh installs emscripten and nodejs)"
    exit 0
  fi
done
source "$root/platforms/debian12/ccache.sh"
if [ "${EDGEMT_CCACHE:-1}" != 0 ] && command -v ccache > /dev/null; then
  export EM_COMPILER_WRAPPER=ccache
fi
bash "$root/platforms/wasm/build.sh" "$build"
mkdir -p "$build"
touch "$build/built"
