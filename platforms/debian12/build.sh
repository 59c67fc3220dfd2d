#!/usr/bin/env bash
# Configures and builds edgemt into build/ (Release, warnings as errors).
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
jobs=$(nproc 2>/dev/null || echo 2)
cmake -S "$root" -B "$root/build" -DCMAKE_BUILD_TYPE=Release -DEDGEMT_WERROR=ON
cmake --build "$root/build" -j "$jobs"
