#!/usr/bin/env bash
# Quick start: install dependencies, build, translate a few sentences with the
# bundled English->German model.
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
bash "$root/platforms/debian12/install-deps.sh"
bash "$root/platforms/debian12/build.sh"
model="$root/models/multi30k-en-de.int8.emt"
echo
echo "== edgemt translate -m models/$(basename "$model")"
printf '%s\n' \
  "A man in a blue shirt is standing on a ladder." \
  "Two dogs are playing in the snow." \
  "A little girl is reading a book." \
  | tee /dev/stderr | "$root/build/edgemt" translate -m "$model"
