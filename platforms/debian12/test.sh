#!/usr/bin/env bash
# Installs dependencies, builds, and runs every test (C++ and Python) under
# ctest. Tests that need ../shared (the PyTorch checkpoint, Multi30k) carry
# the label 'checkpoint' and report SKIPPED when it is absent.
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
bash "$root/platforms/debian12/install-deps.sh"
bash "$root/platforms/debian12/build.sh"
jobs=$(nproc 2>/dev/null || echo 2)
cd "$root/build"
ctest --output-on-failure -j "$jobs"
