"""edgemt against Bergamot (the translator Firefox runs) on a Marian model
with alphas, in the arithmetic Firefox uses (gemm-precision
int8shiftAlphaAll; edgemt's Int8PerTensorStatic conversion of the same
file), side by side in one run, 1 thread, greedy, the same binary
shortlist (issue 42, acceptance 3).

Run with the Python of the Bergamot venv (tools/fixtures/marian_ssru/
make_fixture.sh, step `bergamot`: PyPI bergamot 0.4.5, Python 3.10):

    bergamot_alphas.py --folder DIR --source FILE --cli build/edgemt
                       --model EMT [--max-length-factor F] [--rounds N]

DIR holds model.intgemm8.alphas.bin, vocab.spm and lex.bin; EMT is its
edgemt-convert --dtype int8 --shortlist DIR/lex.bin conversion. The lines
are sorted by their number of pieces for both (as compare.py
--sort-by-length). Batch 1: Bergamot translates one line per call; batch
32: 32 consecutive lines per call (one batch: mini-batch-words is large
enough). Bergamot's time is its translate() calls (model loaded, warmed
up); edgemt's the whole `edgemt translate` process, start and load
included. Each cell is the best of --rounds alternating runs; it prints
sentences/s, the ratio edgemt / Bergamot, the lines translated
identically and the cpu family.
"""

import argparse
import os
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "fixtures",
                                "marian_ssru"))
from bergamot_refs import load_extension  # noqa: E402


def cpu_family() -> str:
    with open("/proc/cpuinfo", encoding="utf-8") as handle:
        for line in handle:
            if line.startswith("cpu family"):
                return line.split(":")[1].strip()
    return "?"


def bergamot_config(folder: str, factor: float) -> str:
    return "\n".join([
        f"models:\n  - {folder}/model.intgemm8.alphas.bin",
        f"vocabs:\n  - {folder}/vocab.spm\n  - {folder}/vocab.spm",
        f"shortlist:\n  - {folder}/lex.bin\n  - false",
        "beam-size: 1", "normalize: 0", "word-penalty: 0", f"max-length-factor: {factor}",
        "max-length-break: 1000", "mini-batch-words: 100000", "workspace: 512",
        "cpu-threads: 0", "quiet: true", "quiet-translation: true", "ssplit-mode: sentence",
        "gemm-precision: int8shiftAlphaAll"]) + "\n"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--folder", required=True)
    parser.add_argument("--source", required=True)
    parser.add_argument("--cli", required=True)
    parser.add_argument("--model", required=True)
    parser.add_argument("--max-length-factor", type=float, default=3.0)
    parser.add_argument("--rounds", type=int, default=3)
    args = parser.parse_args()
    import sentencepiece  # pylint: disable=import-outside-toplevel
    spm = sentencepiece.SentencePieceProcessor(model_file=os.path.join(args.folder, "vocab.spm"))
    with open(args.source, encoding="utf-8") as handle:
        lines = [line.rstrip("\n") for line in handle]
    lines.sort(key=lambda line: len(spm.encode(line)))
    bg = load_extension()
    service = bg.Service(bg.ServiceConfig(numWorkers=1, logLevel="off"))
    model = service.modelFromConfig(bergamot_config(os.path.abspath(args.folder),
                                                    args.max_length_factor))
    options = bg.ResponseOptions(qualityScores=False, alignment=False)

    def bergamot(batch: int):
        out = []
        start = time.perf_counter()
        for first in range(0, len(lines), batch):
            responses = service.translate(model, bg.VectorString(lines[first:first + batch]), options)
            out.extend(response.target.text for response in responses)
        return time.perf_counter() - start, out

    with tempfile.TemporaryDirectory() as tmp:
        source = os.path.join(tmp, "sorted.txt")
        with open(source, "w", encoding="utf-8") as handle:
            handle.write("".join(line + "\n" for line in lines))

        def edgemt(batch: int):
            start = time.perf_counter()
            result = subprocess.run([args.cli, "translate", "-m", args.model, "-i", source,
                                     "--batch", str(batch), "--threads", "1", "--beam", "1",
                                     "--no-split-sentences", "--max-len-a",
                                     str(args.max_length_factor), "--max-len-b", "0"],
                                    capture_output=True, text=True, check=True)
            return time.perf_counter() - start, result.stdout.splitlines()

        bergamot(32)  # warm up
        print(f"{len(lines)} lines, 1 thread, greedy, shortlist, int8shiftAlphaAll / "
              f"Int8PerTensorStatic; cpu family {cpu_family()}")
        print("| batch | Bergamot sent/s | edgemt sent/s | edgemt / Bergamot | identical lines |")
        print("|---|---|---|---|---|")
        for batch in (1, 32):
            best_b = best_e = float("inf")
            for _ in range(args.rounds):
                seconds, theirs = bergamot(batch)
                best_b = min(best_b, seconds)
                seconds, mine = edgemt(batch)
                best_e = min(best_e, seconds)
            same = sum(a == b for a, b in zip(mine, theirs))
            print(f"| {batch} | {len(lines) / best_b:.1f} | {len(lines) / best_e:.1f} | "
                  f"**{best_b / best_e:.2f}x** | {same}/{len(lines)} |")


if __name__ == "__main__":
    main()
