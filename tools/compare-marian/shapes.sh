#!/usr/bin/env bash
# edgemt against Marian's translator on random-weight Marian models of shapes
# no fixture has (shapes.py: SSRU and self-attention decoders, post-norm and
# pre-norm, heads of 16 to 64, odd feed-forward sizes, 1-4 decoder layers,
# relu / swish / gelu, with and without a shortlist; intgemm8 files too):
# pieces line by line, and every greedy difference checked to be a near tie
# of edgemt's own logits. About 2 minutes.
#
#   tools/compare-marian/shapes.sh [WORK_DIR]   (default: a temporary folder)
# Needs build/edgemt and build/tests/edgemt_force_decode; Marian comes from
# the pymarian wheel in a venv outside the checkout (pymarian_venv.sh).
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
for binary in build/edgemt build/tests/edgemt_force_decode; do
  [ -x "$root/$binary" ] || { echo "shapes.sh: $root/$binary is missing: build first" >&2; exit 2; }
done
if [ $# -gt 1 ] || [[ "${1:-}" == -* ]]; then
  echo "usage: tools/compare-marian/shapes.sh [WORK_DIR]" >&2
  exit 2
fi
venv="$("$root/tools/compare-marian/pymarian_venv.sh")"
if [ $# -eq 1 ]; then
  work="$1"
  mkdir -p "$work"
else
  work="$(mktemp -d)"
  trap 'rm -rf "$work"' EXIT
fi
export OMP_NUM_THREADS=1 OPENBLAS_NUM_THREADS=1 MKL_NUM_THREADS=1
/usr/bin/python3 "$root/tools/compare-marian/shapes.py" make "$work"
"$venv/bin/python" "$root/tools/compare-marian/shapes.py" marian "$work"
/usr/bin/python3 "$root/tools/compare-marian/shapes.py" check "$work" "$root"
