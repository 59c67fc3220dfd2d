"""`edgemt-bleu HYP REF`: corpus BLEU by sacreBLEU with its defaults (bleu.py)."""

import argparse
import sys

from .bleu import corpus_bleu
from .textio import read_lines

PROG = "edgemt-bleu"


class _Parser(argparse.ArgumentParser):
    def error(self, message):
        self.exit(2, f"{PROG}: error: {message} (see --help)\n")


def build_parser() -> argparse.ArgumentParser:
    p = _Parser(prog=PROG, allow_abbrev=False,
                description="Corpus BLEU of HYP against REF (one segment per line, .gz "
                            "allowed), computed by sacreBLEU with its defaults (13a "
                            "tokenizer, mixed case, exp smoothing, BLEU-4).")
    p.add_argument("hypotheses", metavar="HYP", help="system output, one segment per line")
    p.add_argument("references", metavar="REF", help="reference translations, same order")
    p.add_argument("-b", "--score-only", action="store_true",
                   help="print only the score with two decimals")
    return p


def main(argv=None) -> int:
    args = build_parser().parse_args(argv)
    try:
        hyps, refs = read_lines(args.hypotheses), read_lines(args.references)
        if len(hyps) != len(refs):
            raise ValueError(f"{args.hypotheses} has {len(hyps)} lines, {args.references} "
                             f"has {len(refs)}")
        result = corpus_bleu(hyps, refs)
    except (OSError, ValueError, UnicodeDecodeError, ImportError) as err:
        print(f"{PROG}: error: {err}", file=sys.stderr)
        return 1
    print(f"{result.score:.2f}" if args.score_only else str(result))
    return 0
