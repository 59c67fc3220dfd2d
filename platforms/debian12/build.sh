#!/usr/bin/env bash
# Configures and builds edgemt into build/ (Release, warnings as errors),
# through ccache when it is installed (platforms/debian12/ccache.sh).
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
source "$root/platforms/debian12/ccache.sh"
jobs=$(nproc 2>/dev/null || echo 2)
mapfile -t launcher < <(cmake_launcher_args)
cmake -S "$root" -B "$root/build" -DCMAKE_BUILD_TYPE=Release -DEDGEMT_WERROR=ON "${launcher[@]}"
cmake --build "$root/build" -j "$jobs"
