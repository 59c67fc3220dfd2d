#!/usr/bin/env bash
# ctest wasm.size (tests/platform/wasm.cmake): the WebAssembly module
# without a model, gzip -9, is at most 2 MB (issue 43), both sizes printed.
#
#   bash tests/platform/wasm/check_size.sh STAMP
#
# STAMP is the file wasm.build writes after a build; without it (no emcc)
# prints "SKIPPED: ...".
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/../../.." && pwd)"
wasm="$root/platforms/wasm/dist/edgemt-module.wasm"
limit=$((2 * 1024 * 1024))
if [ ! -f "$1" ]; then
  echo "SKIPPED: the WebAssembly build did not run (wasm.build: no emcc or node)"
  exit 0
fi
size=$(stat -c %s "$wasm")
gzipped=$(gzip -9 < "$wasm" | wc -c)
echo "edgemt-module.wasm: $size bytes, $gzipped gzipped (-9); limit $limit gzipped"
if [ "$gzipped" -gt "$limit" ]; then
  echo "FAILED: $gzipped bytes gzipped, over the $limit of issue 43" >&2
  exit 1
fi
