"""`edgemt-evaluate`: translation quality of edgemt against PyTorch, side by side.

On Multi30k test_2016_flickr (1,000 sentences) it runs, in one invocation:
  * PyTorch greedy on the checkpoint (fp32, live; or read from the committed
    reference with --torch-from-reference),
  * edgemt fp32 greedy and fp32 beam 4 (a file converted from the checkpoint
    into a temporary folder), and edgemt fp16 and int8 greedy (the bundled
    models),
and prints corpus BLEU (sacreBLEU, through edgemt_tools.bleu) per system,
how many outputs are identical to the matching PyTorch output, and the wall
time. With --check it exits 1 unless the issue's thresholds hold:
  fp32 greedy identical to PyTorch greedy for >= 995 sentences,
  fp32 beam 4 identical to the PyTorch reference beam search for >= 980,
  fp16 greedy BLEU within 0.2 of fp32 greedy BLEU,
  int8 greedy BLEU within 0.5 of fp32 greedy BLEU,
  int8 greedy identical to edgemt fp32 greedy for >= 80% of the sentences.
"""

import argparse
import os
import subprocess
import sys
import tempfile
import time
from typing import List

from . import __version__
from .bleu import corpus_bleu
from .errors import UserError
from .textio import read_lines

REPO_ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
REFERENCE_DIR = os.path.join(REPO_ROOT, "models", "reference")
BUNDLED_FP16 = os.path.join(REPO_ROOT, "models", "multi30k-en-de.fp16.emt")
BUNDLED_INT8 = os.path.join(REPO_ROOT, "models", "multi30k-en-de.int8.emt")
SKIP_MESSAGE = "SKIPPED: ../shared checkpoint not found"


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="edgemt-evaluate",
        description="Corpus BLEU on Multi30k test_2016 for PyTorch greedy and every edgemt "
                    "configuration, side by side, with agreement counts.")
    parser.add_argument("--edgemt", required=True, help="path of the built edgemt binary")
    parser.add_argument("--shared", default=os.path.join(os.path.dirname(REPO_ROOT), "shared"),
                        help="folder with models/multi30k-en-de and data/multi30k "
                             "(default: ../shared beside the repository)")
    parser.add_argument("--threads", type=int, default=2, help="edgemt threads (default 2)")
    parser.add_argument("--limit", type=int, default=0,
                        help="only the first N sentences (default: all 1,000)")
    parser.add_argument("--torch-from-reference", action="store_true",
                        help="read PyTorch greedy output from models/reference/ instead of "
                             "running PyTorch")
    parser.add_argument("--check", action="store_true",
                        help="exit 1 unless the acceptance thresholds hold")
    parser.add_argument("--version", action="version", version=f"%(prog)s {__version__}")
    return parser


def run_edgemt(binary: str, model: str, source: str, output: str, beam: int,
               threads: int) -> float:
    start = time.perf_counter()
    result = subprocess.run([binary, "translate", "-m", model, "-i", source, "-o", output,
                             "--beam", str(beam), "--threads", str(threads), "--batch", "32"],
                            capture_output=True, text=True, check=False)
    if result.returncode != 0:
        raise UserError(f"edgemt translate failed ({result.returncode}): {result.stderr.strip()}")
    return time.perf_counter() - start


def torch_greedy(paths: dict, sources: List[str]) -> List[str]:
    from .torch_reference import TorchReference
    reference = TorchReference(paths["checkpoint"], paths["config"], paths["spm"])
    outputs = []
    for line in sources:
        if not line.strip():
            outputs.append("")
            continue
        outputs.append(reference.decode_ids(reference.greedy(reference.encode_text(line))))
    return outputs


def identical(a: List[str], b: List[str]) -> int:
    return sum(x == y for x, y in zip(a, b))


def main(argv=None) -> int:
    args = build_parser().parse_args(argv)
    checkpoint_dir = os.path.join(args.shared, "models", "multi30k-en-de")
    data_dir = os.path.join(args.shared, "data", "multi30k")
    paths = {"checkpoint": os.path.join(checkpoint_dir, "model.pt"),
             "config": os.path.join(checkpoint_dir, "config.json"),
             "spm": os.path.join(checkpoint_dir, "spm.model")}
    source_gz = os.path.join(data_dir, "test_2016_flickr.en.gz")
    target_gz = os.path.join(data_dir, "test_2016_flickr.de.gz")
    if not all(os.path.isfile(p) for p in [*paths.values(), source_gz, target_gz]):
        print(SKIP_MESSAGE)
        return 0
    try:
        sources = read_lines(source_gz)
        references = read_lines(target_gz)
        if args.limit > 0:
            sources, references = sources[:args.limit], references[:args.limit]
        n = len(sources)
        beam_reference = read_lines(os.path.join(REFERENCE_DIR, "torch_fp32_beam4.de"))[:n]

        with tempfile.TemporaryDirectory(prefix="edgemt-evaluate-") as tmp:
            source_file = os.path.join(tmp, "source.en")
            with open(source_file, "w", encoding="utf-8") as handle:
                handle.write("".join(line + "\n" for line in sources))
            fp32_model = os.path.join(tmp, "model.fp32.emt")
            convert = subprocess.run(
                [sys.executable, os.path.join(REPO_ROOT, "tools", "edgemt-convert"),
                 "--from", "torch", "--checkpoint", paths["checkpoint"], "--config",
                 paths["config"], "--spm", paths["spm"], "--src-lang", "en", "--tgt-lang", "de",
                 "--dtype", "fp32", "-o", fp32_model], capture_output=True, text=True)
            if convert.returncode != 0:
                raise UserError(f"conversion failed: {convert.stderr.strip()}")

            start = time.perf_counter()
            if args.torch_from_reference:
                torch_out = read_lines(os.path.join(REFERENCE_DIR, "torch_fp32_greedy.de"))[:n]
                torch_label = "PyTorch fp32 greedy (committed reference)"
            else:
                torch_out = torch_greedy(paths, sources)
                torch_label = "PyTorch fp32 greedy (eager, live)"
            torch_seconds = time.perf_counter() - start

            runs = []
            for label, model, beam, compare, compare_label in [
                    ("edgemt fp32 greedy", fp32_model, 1, torch_out, "PyTorch greedy"),
                    ("edgemt fp32 beam 4", fp32_model, 4, beam_reference, "PyTorch beam 4"),
                    ("edgemt fp16 greedy", BUNDLED_FP16, 1, torch_out, "PyTorch greedy"),
                    ("edgemt int8 greedy", BUNDLED_INT8, 1, None, "edgemt fp32 greedy")]:
                output = os.path.join(tmp, label.replace(" ", "_") + ".de")
                seconds = run_edgemt(args.edgemt, model, source_file, output, beam, args.threads)
                hyps = read_lines(output)
                if compare is None:  # int8 is held to edgemt's own fp32 output
                    compare = runs[0][1]
                runs.append((label, hyps, seconds, identical(hyps, compare), compare_label))
    except (UserError, OSError) as error:
        print(f"edgemt-evaluate: {error}", file=sys.stderr)
        return 1

    print(f"Multi30k test_2016_flickr, {n} sentences, corpus BLEU (13a, BLEU-4), "
          f"edgemt threads {args.threads}")
    print(f"{'system':<44} {'BLEU':>6} {'identical to':>26} {'seconds':>8}")
    bleu = {}
    rows = [(torch_label, torch_out, torch_seconds, None, "")] + runs
    for label, hyps, seconds, same, compare_label in rows:
        score = corpus_bleu(hyps, references).score
        bleu[label] = score
        agreement = f"{same}/{n} {compare_label}" if same is not None else "-"
        print(f"{label:<44} {score:6.2f} {agreement:>26} {seconds:8.1f}")

    fp32, beam, fp16, int8 = runs
    checks = [
        (f"fp32 greedy identical to PyTorch greedy >= {0.995 * n:.0f}", fp32[3] >= 0.995 * n),
        (f"fp32 beam 4 identical to PyTorch beam 4 >= {0.98 * n:.0f}", beam[3] >= 0.98 * n),
        ("fp16 greedy BLEU within 0.2 of fp32 greedy",
         abs(bleu[fp16[0]] - bleu[fp32[0]]) <= 0.2),
        ("int8 greedy BLEU within 0.5 of fp32 greedy",
         abs(bleu[int8[0]] - bleu[fp32[0]]) <= 0.5),
        (f"int8 greedy identical to fp32 greedy >= {0.8 * n:.0f}", int8[3] >= 0.8 * n),
    ]
    print()
    for text, ok in checks:
        print(f"{'PASS' if ok else 'FAIL'}  {text}")
    if args.check and not all(ok for _, ok in checks):
        return 1
    return 0
