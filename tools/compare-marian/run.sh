#!/usr/bin/env bash
# edgemt against Marian's own translator, side by side, 1 thread (compare.py).
#
#   tools/compare-marian/run.sh [FOLDER] [SOURCE]
# FOLDER: model.npz, model.intgemm8.bin, vocab.spm (default: the SSRU
# fixture, tests/fixtures/marian_ssru); SOURCE: the lines to translate
# (default: its reference/source.en). Needs build/edgemt. Marian comes from
# the pymarian wheel (PyPI, about 1 GB) in a venv outside the checkout:
# $VENV (default /work/venvs/pymarian), made when missing.
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
folder="${1:-$root/tests/fixtures/marian_ssru}"
source="${2:-$folder/reference/source.en}"
venv="${VENV:-/work/venvs/pymarian}"
if [ ! -x "$venv/bin/python" ] || ! "$venv/bin/python" -c 'import pymarian' 2>/dev/null; then
  echo "compare-marian: installing pymarian 1.12.42 into $venv (about 1 GB)" >&2
  /usr/bin/python3 -m venv "$venv"
  "$venv/bin/pip" install -q pymarian==1.12.42
fi
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
export OMP_NUM_THREADS=1 OPENBLAS_NUM_THREADS=1 MKL_NUM_THREADS=1
"$venv/bin/python" "$root/tools/compare-marian/compare.py" --folder "$folder" --source "$source" \
  --cli "$root/build/edgemt" --convert "$root/tools/edgemt-convert" --work "$work" "${@:3}"
