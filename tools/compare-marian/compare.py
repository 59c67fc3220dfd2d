"""edgemt against Marian's own translator on one SSRU model, side by side in
one run on one machine, 1 thread (issue 42, acceptance 3).

Run with the Python of a venv holding pymarian (tools/compare-marian/run.sh
makes one): it times pymarian.Translator (Marian v1.12.42, the library
inside the pymarian wheel) and the edgemt CLI on the same lines, greedy,
batch 1 and batch 32, fp32 (Marian: model.npz; edgemt: its fp32
conversion) and int8 (Marian: marian-conv's intgemm8 .bin; edgemt: its int8
conversion of the same float model, uncalibrated), and prints sentences/s,
words/s (target words, whitespace-split, of edgemt's output) and the ratio
edgemt / Marian, with the cpu family. Each cell is the best of --rounds
alternating runs. Outputs are compared too (lines identical).

    compare.py --folder FOLDER --source FILE --cli build/edgemt --work DIR
FOLDER holds model.npz, model.intgemm8.bin (optional) and vocab.spm.
"""

import argparse
import os
import platform
import shutil
import subprocess
import sys
import time


def cpu_family() -> str:
    try:
        with open("/proc/cpuinfo", encoding="utf-8") as handle:
            for line in handle:
                if line.startswith("cpu family"):
                    return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return "unknown"


def cpu_name() -> str:
    try:
        with open("/proc/cpuinfo", encoding="utf-8") as handle:
            for line in handle:
                if line.startswith("model name"):
                    return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or "unknown"


def marian_run(model: str, vocab: str, lines, batch: int):
    """(seconds translating, outputs) of pymarian.Translator, 1 thread."""
    import pymarian  # the venv's; imported here so --help needs nothing
    options = (f"-m {model} -v {vocab} {vocab} --cpu-threads 1 --mini-batch {batch} "
               f"--maxi-batch 1 --workspace 256 --quiet --quiet-translation --beam-size 1")
    translator = pymarian.Translator(options)
    translator.translate(lines[:4])  # warm up
    start = time.perf_counter()
    outputs = translator.translate(lines)
    return time.perf_counter() - start, outputs


def edgemt_run(cli: str, model: str, source: str, batch: int):
    """(seconds of the whole `edgemt translate` process, outputs)."""
    start = time.perf_counter()
    result = subprocess.run([cli, "translate", "-m", model, "-i", source, "--beam", "1",
                             "--batch", str(batch), "--threads", "1", "--no-split-sentences",
                             "--length-penalty", "0"],
                            capture_output=True, text=True, check=True)
    return time.perf_counter() - start, result.stdout.split("\n")[:-1]


def convert(args, dtype: str) -> str:
    folder = os.path.join(args.work, "folder")
    if not os.path.isdir(folder):
        os.makedirs(folder)
        shutil.copyfile(os.path.join(args.folder, "model.npz"), os.path.join(folder, "model.npz"))
        shutil.copyfile(os.path.join(args.folder, "vocab.spm"), os.path.join(folder, "vocab.spm"))
        with open(os.path.join(folder, "decoder.yml"), "w", encoding="utf-8") as handle:
            handle.write("models:\n  - model.npz\nvocabs:\n  - vocab.spm\n  - vocab.spm\n")
    output = os.path.join(args.work, f"model.{dtype}.emt")
    extra = ["--no-calibration"] if dtype == "int8" else []
    subprocess.run(["/usr/bin/python3", args.convert, "--checkpoint", folder, "--src-lang", "en",
                    "--tgt-lang", "de", "--dtype", dtype, *extra, "-o", output],
                   check=True, capture_output=True)
    return output


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--folder", required=True)
    parser.add_argument("--source", required=True)
    parser.add_argument("--cli", required=True)
    parser.add_argument("--convert", required=True, help="tools/edgemt-convert")
    parser.add_argument("--work", required=True)
    parser.add_argument("--lines", type=int, default=1000)
    parser.add_argument("--rounds", type=int, default=3)
    args = parser.parse_args()
    os.makedirs(args.work, exist_ok=True)
    with open(args.source, encoding="utf-8") as handle:
        lines = handle.read().split("\n")[:args.lines]
    source = os.path.join(args.work, "source.txt")
    with open(source, "w", encoding="utf-8") as handle:
        handle.write("\n".join(lines) + "\n")
    vocab = os.path.join(args.folder, "vocab.spm")
    cells = [("fp32", os.path.join(args.folder, "model.npz"), convert(args, "fp32"))]
    intgemm = os.path.join(args.folder, "model.intgemm8.bin")
    if os.path.isfile(intgemm):
        cells.append(("int8", intgemm, convert(args, "int8")))
    print(f"edgemt vs Marian (pymarian), 1 thread, greedy, {len(lines)} lines; "
          f"cpu family {cpu_family()} ({cpu_name()})")
    print(f"{'cell':<16}{'Marian sent/s':>14}{'edgemt sent/s':>15}{'edgemt words/s':>16}"
          f"{'ratio':>8}{'identical':>11}")
    for dtype, marian_model, edgemt_model in cells:
        for batch in (1, 32):
            best_marian = best_edgemt = float("inf")
            for _ in range(args.rounds):
                seconds, marian_out = marian_run(marian_model, vocab, lines, batch)
                best_marian = min(best_marian, seconds)
                seconds, edgemt_out = edgemt_run(args.cli, edgemt_model, source, batch)
                best_edgemt = min(best_edgemt, seconds)
            words = sum(len(line.split()) for line in edgemt_out)
            same = sum(a == b for a, b in zip(marian_out, edgemt_out))
            print(f"{dtype + ' batch ' + str(batch):<16}{len(lines) / best_marian:>14.1f}"
                  f"{len(lines) / best_edgemt:>15.1f}{words / best_edgemt:>16.0f}"
                  f"{best_marian / best_edgemt:>7.2f}x{same:>7}/{len(lines)}")
    sys.stdout.flush()
    return 0


if __name__ == "__main__":
    sys.exit(main())
