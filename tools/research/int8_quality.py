"""`edgemt-int8-quality`: int8 against fp32 for every source, greedy and beam 4.

Converts each of the repository's real-architecture fixtures (and the
bundled checkpoint in ../shared when present) to an fp32 and an int8 file
with edgemt-convert, translates Multi30k test_2016_flickr (1,000 lines)
with `edgemt translate` at beam 1 and 4, and prints per model: lines of the
int8 output identical to the fp32 output, BLEU of both (sacreBLEU against
the German reference) and their difference. The README's quality table and
docs/int8-quality.md come from it.

  torch        ../shared/models/multi30k-en-de (the bundled model's checkpoint)
  torch-rnn    tests/fixtures/torch_rnn/* (8 RNN models of the PyTorch trainer)
  opennmt      tests/fixtures/opennmt/{A,B} (Transformers)
  opennmt-rnn  tests/fixtures/opennmt_rnn/* (6 RNN models)
  marian       tests/fixtures/marian/npz
  hf-marian    tests/fixtures/marian/hf

--int8-args passes more arguments to the int8 conversion (e.g.
"--no-calibration" for plain nearest rounding). --residual-bits N converts
int8 with `--fp32-embeddings lookup` and rewrites each file's tables as
int8 codes plus an N-bit residual code would look them up (a study of a
format edgemt does not have: research/residual_tables.py).
"""

import argparse
import os
import shlex
import subprocess
import sys
import tempfile
from typing import Dict, List, Sequence, Tuple

from research.study_cli import REPO_ROOT, StudyParser

sys.path.insert(0, os.path.join(REPO_ROOT, "tools"))
from edgemt_tools.bleu import corpus_bleu  # noqa: E402
from research import residual_tables  # noqa: E402

FIXTURES = os.path.join(REPO_ROOT, "tests", "fixtures")
REFERENCE = os.path.join(REPO_ROOT, "models", "reference")
LANGS = ("--src-lang", "en", "--tgt-lang", "de")


def models(shared: str) -> List[Tuple[str, str, Sequence[str]]]:
    """(source, name, edgemt-convert arguments without --dtype and -o)."""
    out = []
    checkpoint = os.path.join(shared, "models", "multi30k-en-de")
    if os.path.isdir(checkpoint):
        out.append(("torch", "multi30k", ("--from", "torch", "--checkpoint",
                                          os.path.join(checkpoint, "model.pt"), "--config",
                                          os.path.join(checkpoint, "config.json"), "--spm",
                                          os.path.join(checkpoint, "spm.model"))))
    rnn = os.path.join(FIXTURES, "torch_rnn")
    for name in sorted(os.listdir(rnn)):
        if os.path.exists(os.path.join(rnn, name, "model.pt")):
            out.append(("torch-rnn", name, ("--from", "torch-rnn", "--checkpoint",
                                            os.path.join(rnn, name, "model.pt"), "--config",
                                            os.path.join(rnn, name, "config.json"), "--spm",
                                            os.path.join(rnn, "spm.model"))))
    onmt = os.path.join(FIXTURES, "opennmt")
    out.append(("opennmt", "A", ("--from", "opennmt", "--checkpoint", os.path.join(onmt, "A.pt"),
                                 "--src-spm", os.path.join(onmt, "A.src.spm"), "--tgt-spm",
                                 os.path.join(onmt, "A.tgt.spm"), *LANGS)))
    out.append(("opennmt", "B", ("--from", "opennmt", "--checkpoint", os.path.join(onmt, "B.pt"),
                                 "--spm", os.path.join(onmt, "B.spm"), *LANGS)))
    onmt_rnn = os.path.join(FIXTURES, "opennmt_rnn")
    for name in ("L1", "L2", "L3", "G1", "G2", "G3"):
        out.append(("opennmt-rnn", name, ("--from", "opennmt", "--checkpoint",
                                          os.path.join(onmt_rnn, name + ".pt"), "--spm",
                                          os.path.join(onmt_rnn, "R.spm"), *LANGS)))
    marian = os.path.join(FIXTURES, "marian")
    out.append(("marian", "npz", ("--from", "marian", "--checkpoint", os.path.join(marian, "npz"),
                                  *LANGS)))
    out.append(("hf-marian", "hf", ("--from", "hf-marian", "--checkpoint",
                                    os.path.join(marian, "hf"))))
    return out


def read_lines(path: str) -> List[str]:
    with open(path, encoding="utf-8") as handle:
        return handle.read().splitlines()


def run(command: Sequence[str]) -> str:
    result = subprocess.run(list(command), capture_output=True, text=True, check=False)
    if result.returncode != 0:
        raise SystemExit(f"edgemt-int8-quality: {' '.join(command[:3])} failed: "
                         f"{result.stderr.strip()[-500:]}")
    return result.stdout


def main(argv=None) -> int:
    parser = StudyParser(prog="edgemt-int8-quality", description=__doc__.split("\n\n")[0],
                         formatter_class=argparse.RawDescriptionHelpFormatter,
                         epilog=__doc__.split("\n\n", 1)[1])
    parser.add_argument("--cli", default=os.path.join(REPO_ROOT, "build", "edgemt"),
                        help="the edgemt binary [%(default)s]")
    parser.add_argument("--shared", default=os.environ.get(
        "EDGEMT_SHARED_DIR", os.path.join(os.path.dirname(REPO_ROOT), "shared")),
        help="folder with the multi30k checkpoint [%(default)s]")
    parser.add_argument("--only", metavar="SOURCE[,SOURCE]", help="these sources only")
    parser.add_argument("--int8-args", default="", help="more edgemt-convert arguments for int8")
    parser.add_argument("--residual-bits", type=int, choices=range(2, 9), metavar="N",
                        help="emulate int8 tables with an N-bit residual code (2..8)")
    args = parser.parse_args(argv)
    if not os.path.isfile(args.cli):
        parser.error(f"{args.cli} not found: build edgemt first")
    source = os.path.join(REFERENCE, "test_2016_flickr.en")
    reference = read_lines(os.path.join(REFERENCE, "test_2016_flickr.de"))
    wanted = set(args.only.split(",")) if args.only else None
    convert = [sys.executable, os.path.join(REPO_ROOT, "tools", "edgemt-convert")]
    print(f"{'source':12s} {'model':18s} {'beam':>4s} {'identical':>10s} {'BLEU fp32':>10s} "
          f"{'int8':>7s} {'delta':>7s}")
    with tempfile.TemporaryDirectory(prefix="edgemt-int8-quality-") as tmp:
        for kind, name, convert_args in models(args.shared):
            if wanted is not None and kind not in wanted:
                continue
            outputs: Dict[Tuple[str, int], List[str]] = {}
            int8_extra = shlex.split(args.int8_args)
            if args.residual_bits is not None:
                int8_extra += ["--fp32-embeddings", "lookup"]
            for dtype, extra in (("fp32", []), ("int8", int8_extra)):
                path = os.path.join(tmp, f"{kind}.{name}.{dtype}.emt")
                run(convert + list(convert_args) + ["--dtype", dtype, *extra, "-o", path])
                if dtype == "int8" and args.residual_bits is not None:
                    for line in residual_tables.rewrite(path, args.residual_bits):
                        print(f"  {kind} {name}: {line}", file=sys.stderr)
                for beam in (1, 4):
                    outputs[dtype, beam] = run([args.cli, "translate", "-m", path, "--beam",
                                                str(beam), "-i", source]).splitlines()
            for beam in (1, 4):
                fp32, int8 = outputs["fp32", beam], outputs["int8", beam]
                same = sum(a == b for a, b in zip(fp32, int8))
                b32, b8 = corpus_bleu(fp32, reference).score, corpus_bleu(int8, reference).score
                print(f"{kind:12s} {name:18s} {beam:4d} {same:5d}/{len(fp32):<4d} {b32:10.2f} "
                      f"{b8:7.2f} {b8 - b32:+7.2f}", flush=True)
    return 0
