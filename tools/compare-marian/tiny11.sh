#!/usr/bin/env bash
# edgemt against Marian on a tiny-sized Firefox-style SSRU student, with
# the same lexical shortlist, beside Bergamot's published figure (issue 42,
# acceptance 3).
#
#   tools/compare-marian/tiny11.sh [WORK_DIR] [--shape SHAPE] [--alphas] [compare.py options]
#   (--shape and --alphas may also come among or after compare.py's options)
#   (default /tmp/edgemt-tiny11, ~120 MB there; run.sh's own work files,
#   ~250 MB, go to a temporary folder it removes)
#
# SHAPE: tiny (the default), or base-memory or base, Firefox's two larger
# students (make_marian_model.py --shape; WORK/SHAPE, ~200 and ~270 MB;
# no Bergamot figure beside them: it is the tiny model's), or trained: the
# tiny shape trained by Marian on Multi30k (tools/fixtures/marian_tiny11/
# train.sh WORK/trained, ~50 min on 2 threads when the folder is missing;
# 8,000 pieces, a shortlist from the training data, lines end at </s>, so
# no max-length-factor: both engines keep their default of 3).
#
# 1. WORK/tiny11: tools/fixtures/marian_tiny11/make_marian_model.py's
#    folder (student.tiny11's shape: d 256, 6 encoder and 2 SSRU decoder
#    layers, FFN 1536, 8 heads, 32,000 shared pieces; random weights, a
#    synthetic lex.s2t), then marian-conv (marian_conv.py): lex.bin (50 50
#    0) and model.intgemm8.bin. Made once; kept for the next run.
# 2. run.sh on it and the SSRU fixture's 1,000 Multi30k test lines:
#    Marian and edgemt, 1 thread, greedy, batch 1 and 32, fp32 and int8,
#    both with lex.bin, max-length-factor 1.2 (random weights never end a
#    sentence), lines sorted by length (compare.py says why), and
#    Bergamot's figure beside edgemt's.
# 3. With --alphas (--shape trained only): the student as Firefox ships
#    it, model.intgemm8.alphas.bin (tools/fixtures/marian_ssru/alphas.py,
#    made once), against Bergamot itself, Firefox's engine
#    (bergamot_alphas.py: Bergamot 0.4.5 in $BERGAMOT_VENV, default
#    /work/venvs/bergamot, made with pyenv's Python 3.10 when missing), on
#    the same lines with lex.bin; --avx2-only (or --avx-vnni-only,
#    --avx512bw-only) and --rounds N among the options go to it too.
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
root="$(cd "$here/../.." && pwd)"
case "${1:-}" in
  -*) echo "tiny11.sh: WORK_DIR comes first (tiny11.sh WORK_DIR --shape SHAPE ...)" >&2; exit 2 ;;
esac
work="$(realpath -m "${1:-/tmp/edgemt-tiny11}")"
case "$work/" in
  "$root"/*) echo "tiny11.sh: WORK_DIR $work is inside the checkout: use another" >&2; exit 2 ;;
esac
shift $(( $# > 0 ? 1 : 0 ))
shape=tiny
alphas=0
rest=()  # compare.py's options, in their order; --shape and --alphas may come anywhere
while [ $# -gt 0 ]; do
  case "$1" in
    --shape) shape="${2:-}"; shift 2 || shift ;;
    --alphas) alphas=1; shift ;;
    *) rest+=("$1"); shift ;;
  esac
done
set -- "${rest[@]}"
case "$shape" in
  tiny) folder="$work/tiny11"; bergamot=(--bergamot) ;;
  trained) folder="$work/trained"; bergamot=(--bergamot) ;;
  base-memory|base) folder="$work/$shape"; bergamot=() ;;
  *) echo "tiny11.sh: --shape '$shape': expected tiny, trained, base-memory or base" >&2; exit 2 ;;
esac
if [ "$alphas" = 1 ] && [ "$shape" != trained ]; then
  echo "tiny11.sh: --alphas needs --shape trained (alphas come from a model that translates)" >&2
  exit 2
fi
# random weights never end a sentence: 1.2 target pieces per source piece
length=(--max-length-factor 1.2)
venv="$("$here/pymarian_venv.sh")"
started=$(date +%s)
if [ "$shape" = trained ]; then
  length=()
  [ -f "$folder/lex.s2t" ] || "$root/tools/fixtures/marian_tiny11/train.sh" "$folder"
elif [ ! -f "$folder/lex.s2t" ]; then
  /usr/bin/python3 "$root/tools/fixtures/marian_tiny11/make_marian_model.py" --shape "$shape" \
    "$folder"
fi
conv() {  # conv OUTPUT ARGS...: marian_conv.py ARGS unless OUTPUT exists
  local output="$1"
  shift
  [ -f "$output" ] && return 0
  "$venv/bin/python" "$here/marian_conv.py" "$@" 2> "$work/marian-conv.log" \
    || { cat "$work/marian-conv.log" >&2; exit 1; }
}
conv "$folder/lex.bin" shortlist "$folder/lex.s2t" "$folder/vocab.spm" "$folder/lex.bin"
conv "$folder/model.intgemm8.bin" intgemm8 "$folder/model.npz" "$folder/model.intgemm8.bin"
"$here/run.sh" "$folder" "$root/tests/fixtures/marian_ssru/reference/source.en" \
  --shortlist "$folder/lex.bin" "${length[@]}" --sort-by-length "${bergamot[@]}" "$@"
if [ "$alphas" = 1 ]; then
  [ -f "$folder/model.intgemm8.alphas.bin" ] \
    || /usr/bin/python3 "$root/tools/fixtures/marian_ssru/alphas.py" "$folder"
  bergamot_venv="${BERGAMOT_VENV:-/work/venvs/bergamot}"
  if [ ! -x "$bergamot_venv/bin/python" ] \
      || ! "$bergamot_venv/bin/python" -c 'import importlib.util as u, sys
sys.exit(not (u.find_spec("bergamot") and u.find_spec("sentencepiece")))' 2>/dev/null; then
    # find_spec, not import: importing bergamot asks translatelocally.com for its model list
    "$(pyenv root)/versions/$(pyenv versions --bare | grep -m1 '^3\.10')/bin/python" -m venv \
      "$bergamot_venv"
    "$bergamot_venv/bin/pip" install bergamot==0.4.5 sentencepiece==0.2.3 pyyaml requests appdirs
  fi
  passed=()
  while [ $# -gt 0 ]; do
    case "$1" in
      --avx2-only|--avx-vnni-only|--avx512bw-only) passed+=("$1") ;;
      --rounds) passed+=("$1" "${2:-}"); shift ;;
    esac
    shift
  done
  firefox="$(mktemp -d)"  # Firefox's files of the model, as bergamot_alphas.py reads them
  trap 'rm -rf "$firefox"' EXIT
  for name in model.intgemm8.alphas.bin vocab.spm lex.bin; do ln -s "$folder/$name" "$firefox/"; done
  OMP_NUM_THREADS=1 "$bergamot_venv/bin/python" "$here/bergamot_alphas.py" --folder "$firefox" \
    --source "$root/tests/fixtures/marian_ssru/reference/source.en" --cli "$root/build/edgemt" \
    "${passed[@]}"
fi
echo "tiny11.sh: $(( $(date +%s) - started )) s in all"
