#!/usr/bin/env bash
# edgemt against Marian's own translator, side by side, 1 thread (compare.py).
#
#   tools/compare-marian/run.sh [FOLDER] [SOURCE] [compare.py options]
# FOLDER: a float32 *.npz, marian-conv's model*intgemm8*.bin (optional),
# vocab*.spm or srcvocab*.spm + trgvocab*.spm, .gz or not (default: the SSRU
# fixture, tests/fixtures/marian_ssru); SOURCE: the lines to translate
# (default: its reference/source.en); further arguments go to compare.py
# (tiny11.sh passes --shortlist and others). Needs build/edgemt. Marian
# comes from the pymarian wheel in a venv outside the checkout
# (pymarian_venv.sh: $VENV, default /work/venvs/pymarian, made when missing).
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
folder="${1:-$root/tests/fixtures/marian_ssru}"
source="${2:-$folder/reference/source.en}"
venv="$("$root/tools/compare-marian/pymarian_venv.sh")"
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
export OMP_NUM_THREADS=1 OPENBLAS_NUM_THREADS=1 MKL_NUM_THREADS=1
"$venv/bin/python" "$root/tools/compare-marian/compare.py" --folder "$folder" --source "$source" \
  --cli "$root/build/edgemt" --convert "$root/tools/edgemt-convert" --work "$work" "${@:3}"
