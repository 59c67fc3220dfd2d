#!/usr/bin/env bash
# A lexical shortlist on the OPUS-MT-base-shaped Marian model, Marian and
# edgemt side by side (issue 42, acceptance 4: "a shortlist cuts batch-1
# greedy time per token by >= 40% with output identical to Marian using the
# same shortlist").
#
#   tools/compare-marian/shortlist_opus_base.sh [BUILD_DIR] [WORK_DIR]
#   (defaults: build, /tmp/edgemt-opus-marian; ~1 GB there; run it under
#   `nice -n 19` on a shared machine, and read its times accordingly)
#
# 1. WORK/marian: the model folder of tools/fixtures/opus_mt_base/
#    make_marian_model.py (random weights, d 512, 6 + 6 layers, 58,101 ids,
#    and a synthetic lex.s2t), plus lex.bin from marian-conv
#    (`--shortlist lex.s2t 50 50 0 --dump-shortlist lex.bin`).
# 2. Marian (pymarian 1.12.42 in $VENV) translates the first $SENTENCES
#    lines of Multi30k's test_2016_flickr.en greedy, batch 1, 1 thread,
#    with and without `--shortlist lex.bin 0`, max-length-factor $FACTOR
#    (shortlist_opus_base.py: outputs, time per generated token, and the
#    exact length rule Marian applies).
# 3. edgemt: the folder converted without and with `--shortlist lex.bin`,
#    `edgemt translate` with and without `--no-shortlist`, outputs compared
#    line by line with Marian's, and `edgemt bench` time per token with the
#    shortlist on and off, fp32 and int8 (greedy scores on and off: off is
#    what `edgemt translate` does, with the arg-max shortcut).
#
# Environment: SENTENCES (100), FACTOR (1.2, as tools/fixtures/opus_mt_base/
# bench.sh; edgemt takes factor x length in float32 as Marian does, see
# shortlist_opus_base.py), ROUNDS (2), DATA (/work/shared/data/multi30k),
# VENV (/work/venvs/pymarian; made with pymarian 1.12.42 when missing).
set -euo pipefail
HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
REPO="$(cd "$HERE/../.." && pwd)"
BUILD="$(cd "${1:-$REPO/build}" && pwd)"
WORK="${2:-/tmp/edgemt-opus-marian}"
SENTENCES="${SENTENCES:-100}"
FACTOR="${FACTOR:-1.2}"
ROUNDS="${ROUNDS:-2}"
DATA="${DATA:-$(cd "$REPO/.." && pwd)/shared/data/multi30k}"
VENV="${VENV:-/work/venvs/pymarian}"
EDGEMT="$BUILD/edgemt"
CONVERT="$REPO/tools/edgemt-convert"
WORK="$(realpath -m "$WORK")"
case "$WORK/" in
  "$REPO"/*)
    echo "shortlist_opus_base: WORK_DIR $WORK is inside the checkout (~1 GB): use another" >&2
    exit 2 ;;
esac
mkdir -p "$WORK"
started=$(date +%s)
echo "cpu family $(grep -m1 'cpu family' /proc/cpuinfo | cut -d: -f2 | tr -d ' ')" \
     "($(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //')), $(nproc) CPUs"
export OMP_NUM_THREADS=1 OPENBLAS_NUM_THREADS=1 MKL_NUM_THREADS=1

VENV="$(VENV="$VENV" "$HERE/pymarian_venv.sh")"

# --- 1. the model folder and its shortlists ---------------------------------
FOLDER="$WORK/marian"
if [ ! -f "$FOLDER/lex.s2t" ]; then
  /usr/bin/python3 "$REPO/tools/fixtures/opus_mt_base/make_marian_model.py" "$FOLDER"
fi
if [ ! -f "$FOLDER/lex.bin" ]; then
  (cd "$FOLDER" && "$VENV/bin/python" -c '
import sys
from pymarian import _pymarian
sys.exit(_pymarian.main(["convert", "--shortlist", "lex.s2t", "50", "50", "0",
                         "--dump-shortlist", "lex.bin", "--vocabs", "vocab.yml", "vocab.yml"]))
' 2> "$WORK/marian-conv.log") || { cat "$WORK/marian-conv.log" >&2; exit 1; }
fi
# (awk reads to the end: head would stop zcat with SIGPIPE, an error under pipefail)
zcat "$DATA/test_2016_flickr.en.gz" | awk -v n="$SENTENCES" 'NR <= n' > "$WORK/source.en"

# --- 2. Marian ------------------------------------------------------------------
echo
"$VENV/bin/python" "$HERE/shortlist_opus_base.py" marian --folder "$FOLDER" \
  --source "$WORK/source.en" --work "$WORK" --factor "$FACTOR" --rounds "$ROUNDS"
sample() {  # the first 8 pieces of line 1 (awk reads to the end, as above)
  awk 'NR == 1 { for (i = 1; i <= 8 && i <= NF; ++i) printf "%s ", $i
                 printf "... (%d pieces)", NF }' "$1"
}
echo "  line 1: $(awk 'NR == 1' "$WORK/source.en")"
echo "    source pieces: $(sample "$WORK/source.pieces")"
echo "    Marian, full vocabulary: $(sample "$WORK/marian.full.pieces")"
echo "    Marian, shortlist:       $(sample "$WORK/marian.shortlist.pieces")"

# --- 3. edgemt's side ------------------------------------------------------------
# The same sentences, the same length rule (--max-len-a FACTOR --max-len-b 0:
# ceil for Marian models), batch 1, greedy, 1 thread; outputs compared with
# Marian's line by line, as pieces (--json "tokens") and as text.
echo
echo "edgemt ($EDGEMT)"
if [ ! -x "$EDGEMT" ]; then
  echo "  no $EDGEMT: build it first; edgemt's side skipped"
  echo "total $(( $(date +%s) - started )) s"
  exit 0
fi
translate() {  # translate MODEL NAME [FLAGS...]: WORK/edgemt.NAME.{de,json}
  local model="$1" name="$2"
  shift 2
  local flags=(-m "$model" -i "$WORK/source.en" --beam 1 --batch 1 --threads 1
               --no-split-sentences --max-len-a "$FACTOR" --max-len-b 0 --no-progress "$@")
  "$EDGEMT" translate "${flags[@]}" -o "$WORK/edgemt.$name.de"
  "$EDGEMT" translate "${flags[@]}" --json -o "$WORK/edgemt.$name.json"
}
compare() {  # compare NAME MARIAN_RUN LABEL
  "$VENV/bin/python" "$HERE/shortlist_opus_base.py" compare --folder "$FOLDER" \
    --marian "$WORK/marian.$2.pieces" --edgemt-json "$WORK/edgemt.$1.json" \
    --edgemt-text "$WORK/edgemt.$1.de" --label "$3"
}
# shellcheck disable=SC2054  # on,off is one value
BENCH=(--sentences "$SENTENCES" -i "$WORK/source.en" --batch 1 --beam 1 --threads 1
       --max-len-a "$FACTOR" --max-len-b 0 --idle-seconds 0 --greedy-scores on,off)

FULL="$WORK/opus-base.fp32.emt"
"$CONVERT" --from marian --checkpoint "$FOLDER" --src-lang en --tgt-lang de -o "$FULL" \
  2> "$WORK/convert.log" > /dev/null || { cat "$WORK/convert.log" >&2; exit 1; }
echo "  converted without a shortlist: $FULL"
translate "$FULL" full
compare full full "no shortlist in the file"

SHORT="$WORK/opus-base.shortlist.fp32.emt"
"$CONVERT" --from marian --checkpoint "$FOLDER" --shortlist "$FOLDER/lex.bin" \
  --src-lang en --tgt-lang de -o "$SHORT" 2> "$WORK/convert-shortlist.log" > /dev/null \
  || { cat "$WORK/convert-shortlist.log" >&2; exit 1; }
echo "  converted with --shortlist lex.bin: $SHORT"
translate "$SHORT" shortlist
compare shortlist shortlist "shortlist (Marian: --shortlist lex.bin)"
translate "$SHORT" no-shortlist --no-shortlist
compare no-shortlist full "shortlist file, --no-shortlist (Marian: none)"
echo
echo "== fp32: edgemt bench, shortlist on and off in one run =="
"$EDGEMT" bench -m "$SHORT" "${BENCH[@]}" --shortlist on,off | tee "$WORK/edgemt.bench.txt"
# int8 of the same folder (calibrated as by default): its output is not
# Marian's (int8 arithmetic), the shortlist's cut is what is measured.
SHORT8="$WORK/opus-base.shortlist.int8.emt"
"$CONVERT" --from marian --checkpoint "$FOLDER" --shortlist "$FOLDER/lex.bin" --dtype int8 \
  --src-lang en --tgt-lang de -o "$SHORT8" 2> "$WORK/convert-int8.log" > /dev/null \
  || { cat "$WORK/convert-int8.log" >&2; exit 1; }
echo
echo "== int8: edgemt bench, shortlist on and off in one run =="
"$EDGEMT" bench -m "$SHORT8" "${BENCH[@]}" --shortlist on,off | tee "$WORK/edgemt.bench.int8.txt"
echo
echo "total $(( $(date +%s) - started )) s; files in $WORK"
