#!/usr/bin/env bash
# Builds the WebAssembly module: platforms/wasm/dist/{edgemt-module.mjs,
# edgemt-module.wasm} (edgemt.mjs, translate.mjs and the demo page use them).
#
#   bash platforms/wasm/build.sh [BUILD_DIR]     (default: build-wasm)
#
# Installs what it needs when missing (Debian: emscripten, flatbuffers
# headers, nodejs; pip: the SentencePiece source distribution, whose C++
# sources and bundled protobuf-lite are built for WebAssembly here), then
# configures the project with emcmake: runtime + SentencePiece + the
# bindings, WebAssembly SIMD (128-bit) on, no XNNPACK (the own kernels run
# every matrix), no threads.
set -euo pipefail
HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
REPO="$(cd "$HERE/../.." && pwd)"
BUILD="$(realpath -m "${1:-$REPO/build-wasm}")"
SPM_VERSION=0.2.0
# Debian's node does not search Debian's module folder; emcc's tools need acorn from it.
export NODE_PATH="${NODE_PATH:-/usr/share/nodejs}"

need=()
command -v emcc > /dev/null || need+=(emscripten)
command -v node > /dev/null || need+=(nodejs)
command -v flatc > /dev/null || need+=(flatbuffers-compiler)
[ -f /usr/include/flatbuffers/flatbuffers.h ] || need+=(libflatbuffers-dev)
[ -f /usr/include/doctest/doctest.h ] || need+=(doctest-dev)
if [ ${#need[@]} -gt 0 ]; then
  echo "wasm build: installing ${need[*]}" >&2
  SUDO=""; [ "$(id -u)" -ne 0 ] && SUDO=sudo
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq "${need[@]}" > /dev/null
fi

DEPS="$BUILD/deps"
mkdir -p "$DEPS/include" "$DEPS/lib" "$BUILD/src"
if [ ! -f "$DEPS/lib/libsentencepiece.a" ]; then
  SRC="$BUILD/src/sentencepiece-$SPM_VERSION"
  if [ ! -d "$SRC" ]; then
    /usr/bin/python3 -m pip download -q --no-binary :all: --no-deps \
      "sentencepiece==$SPM_VERSION" -d "$BUILD/src"
    tar -xzf "$BUILD/src/sentencepiece-$SPM_VERSION.tar.gz" -C "$BUILD/src"
  fi
  emcmake cmake -S "$SRC/sentencepiece" -B "$BUILD/sentencepiece" -DCMAKE_BUILD_TYPE=Release \
    -DSPM_ENABLE_SHARED=OFF -DSPM_ENABLE_TCMALLOC=OFF > "$BUILD/sentencepiece.log"
  cmake --build "$BUILD/sentencepiece" -j"$(nproc)" --target sentencepiece-static \
    >> "$BUILD/sentencepiece.log"
  cp "$BUILD/sentencepiece/src/libsentencepiece.a" "$DEPS/lib/"
  cp "$SRC/sentencepiece/src/sentencepiece_processor.h" "$DEPS/include/"
fi
rm -rf "$DEPS/include/flatbuffers" "$DEPS/include/doctest"
cp -r /usr/include/flatbuffers "$DEPS/include/flatbuffers"
cp -r /usr/include/doctest "$DEPS/include/doctest"  # the kernel tests'

emcmake cmake -S "$REPO" -B "$BUILD/edgemt" -DCMAKE_BUILD_TYPE=Release \
  -DEDGEMT_WASM_DEPS="$DEPS" -DEDGEMT_BUILD_TESTS=OFF -DEDGEMT_BUILD_TOOLS=OFF \
  -DEDGEMT_BUILD_EXAMPLES=OFF -DEDGEMT_BUILD_SHARED=OFF -DEDGEMT_INSTALL=OFF \
  -DCMAKE_CXX_FLAGS="-msimd128" -DCMAKE_C_FLAGS="-msimd128" > "$BUILD/configure.log"
cmake --build "$BUILD/edgemt" -j"$(nproc)" --target edgemt_wasm edgemt_wasm_kernel_tests
mkdir -p "$HERE/dist"
cp "$BUILD/edgemt/platforms/wasm/edgemt-module.mjs" "$BUILD/edgemt/platforms/wasm/edgemt-module.wasm" \
  "$BUILD/edgemt/platforms/wasm/edgemt-kernel-tests.js" "$BUILD/edgemt/platforms/wasm/edgemt-kernel-tests.wasm" \
  "$HERE/dist/"
wasm="$HERE/dist/edgemt-module.wasm"
echo "built $wasm: $(stat -c %s "$wasm") bytes, $(gzip -9 -c "$wasm" | wc -c) gzipped"
