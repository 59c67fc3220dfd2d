#!/usr/bin/env bash
# Installs dependencies, builds, and runs every test (C++ and Python) under
# ctest. Tests that need ../shared (the PyTorch checkpoint, Multi30k) carry
# the label 'checkpoint' and report SKIPPED when it is absent.
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
bash "$root/platforms/debian12/install-deps.sh"
bash "$root/platforms/debian12/build.sh"
cd "$root/build"
# Serially: several tests run 2-3 threads of their own, and pthreadpool
# workers that share a core with another test wait for each other.
ctest --output-on-failure
