"""marian-conv as the pymarian wheel holds it (`_pymarian.main(['convert',
...])`, Marian v1.12.42), for tiny11.sh. Run with the venv's Python.

  marian_conv.py shortlist LEX_S2T VOCAB OUT   binary shortlist, 50 50 0
      (as Firefox's lex.50.50.<pair>.s2t.bin: `--shortlist LEX_S2T 50 50 0
      --dump-shortlist OUT --vocabs VOCAB VOCAB`, a shared vocabulary)
  marian_conv.py intgemm8 MODEL_NPZ OUT        `-f MODEL_NPZ -t OUT
      --gemm-type intgemm8` (the _W matrices as int8 codes; upstream keeps
      Wemb float32)

Marian logs to stderr; it aborts the process on errors it cannot report.
"""

import sys


def main() -> int:
    from pymarian import _pymarian
    if len(sys.argv) == 5 and sys.argv[1] == "shortlist":
        _, _, lex, vocab, out = sys.argv
        return _pymarian.main(["convert", "--shortlist", lex, "50", "50", "0",
                               "--dump-shortlist", out, "--vocabs", vocab, vocab])
    if len(sys.argv) == 4 and sys.argv[1] == "intgemm8":
        _, _, model, out = sys.argv
        return _pymarian.main(["convert", "-f", model, "-t", out, "--gemm-type", "intgemm8"])
    print(__doc__, file=sys.stderr)
    return 2


if __name__ == "__main__":
    sys.exit(main())
