#!/usr/bin/env bash
# Runs compare.py (edgemt vs CTranslate2) with its own Python environment:
# creates the venv $VENV (default /work/venvs/ct2, on top of the system's
# Python with --system-site-packages, for Debian's torch, numpy and
# sentencepiece) when it is missing or lacks its packages, installs the
# pinned packages into it, then passes every argument on to compare.py.
#
# usage: tools/compare-ctranslate2/run.sh [compare.py options]   (see --help)
set -euo pipefail
HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
VENV="${VENV:-/work/venvs/ct2}"
# An install cut short (Ctrl-C, a lost connection) leaves a venv without its
# packages: check what compare.py imports, not just the venv's python.
if [ ! -x "$VENV/bin/python" ] \
    || ! "$VENV/bin/python" -c 'import ctranslate2, transformers, sacrebleu' 2>/dev/null; then
  echo "compare-ctranslate2: installing CTranslate2 4.8.5 and its tools into $VENV" >&2
  /usr/bin/python3 -m venv --system-site-packages "$VENV" >&2
  "$VENV/bin/pip" install --no-deps ctranslate2==4.8.5 transformers==4.40.2 tokenizers==0.19.1 \
    safetensors==0.4.3 huggingface-hub==0.23.4 filelock==4.2.12 packaging==26.3 tqdm==4.70.1 \
    fsspec==2026.9.0 sacrebleu==2.4.3 pyyaml >&2  # stdout is compare.py's report
fi
exec "$VENV/bin/python" "$HERE/compare.py" "$@"
