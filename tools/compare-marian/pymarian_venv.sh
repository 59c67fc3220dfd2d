#!/usr/bin/env bash
# Prints the folder of a venv holding pymarian 1.12.42 (Marian's translator
# and marian-conv; PyPI, about 1 GB, outside the checkout), for run.sh,
# tiny11.sh and shortlist_opus_base.sh: $VENV, default /work/venvs/pymarian,
# made when missing.
set -euo pipefail
venv="${VENV:-/work/venvs/pymarian}"
if [ ! -x "$venv/bin/python" ] || ! "$venv/bin/python" -c 'import pymarian' 2>/dev/null; then
  echo "compare-marian: installing pymarian 1.12.42 into $venv (about 1 GB)" >&2
  /usr/bin/python3 -m venv "$venv" >&2
  "$venv/bin/pip" install -q pymarian==1.12.42 sentencepiece >&2
fi
echo "$venv"
