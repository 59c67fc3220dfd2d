#!/usr/bin/env bash
# The kernel tests in WebAssembly (every kernel against its naive
# reference, the WebAssembly SIMD int8 and f32 GEMMs among them), under Node.js:
#   bash platforms/wasm/test_kernels.sh     (after platforms/wasm/build.sh)
# Prints "SKIPPED: ..." and succeeds when the build is missing.
set -euo pipefail
dist="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)/dist"
if [ ! -f "$dist/edgemt-kernel-tests.js" ] || ! command -v node > /dev/null; then
  echo "SKIPPED: no $dist/edgemt-kernel-tests.js or no node (run platforms/wasm/build.sh)"
  exit 0
fi
cd "$dist"
exec node edgemt-kernel-tests.js --no-colors=true "$@"
