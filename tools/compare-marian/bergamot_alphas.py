"""edgemt against Bergamot (the translator Firefox runs) on a Marian model
with alphas, in the arithmetic Firefox uses (gemm-precision
int8shiftAlphaAll; edgemt's Int8PerTensorStatic conversion of the same
file), side by side in one run, 1 thread, greedy, the same binary
shortlist (issue 42, acceptance 3).

Run with the Python of the Bergamot venv (tools/fixtures/marian_ssru/
make_fixture.sh, step `bergamot`: PyPI bergamot 0.4.5, Python 3.10):

    bergamot_alphas.py --folder DIR --source FILE --cli build/edgemt
                       [--model EMT] [--max-length-factor F] [--rounds N]
                       [--avx2-only | --avx-vnni-only | --avx512bw-only]

DIR is a Firefox model folder as Firefox downloads it or as
mozilla/firefox-translations-models keeps it (files may be .gz): the model
`model*.bin` (with alphas; of several, the one named `*alphas*`), `vocab*.spm`
or `srcvocab*.spm` + `trgvocab*.spm`, and the shortlist `lex*.bin`. Both
engines read the same uncompressed copies in a scratch folder; EMT, when
not given, is edgemt-convert's `--dtype int8 --shortlist` conversion of them
(tools/edgemt-convert beside this script; the languages of a metadata.json
are kept). The lines are sorted by their number of source pieces for both
(as compare.py --sort-by-length). Batch 1: Bergamot translates one line per
call; batch 32: 32 consecutive lines per call (one batch:
mini-batch-words is large enough). Bergamot's time is its translate() calls
(model loaded, warmed up); edgemt's the whole `edgemt translate` process,
start and load included ("no load": edgemt's time less an empty input's
run, best of 3). Each cell is the best of --rounds runs; the rounds come
one after another, each over both batch sizes and both engines; it
prints sentences/s, the ratio edgemt / Bergamot, the lines translated
identically and the cpu family. Where Bergamot's intgemm does not sum
exactly (a CPU without AVX-512 VNNI, or INTGEMM_CPUID naming other code:
intgemm_cpu.py) edgemt also runs, timed as well, with `--marian-int8-sums`
naming that code: the output Bergamot gives there. --avx2-only and the
other two run both engines as on a CPU of that kind (compare.py's
KERNEL_MODES: INTGEMM_CPUID for Bergamot's intgemm, EDGEMT_CPU_FEATURES).
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
from compare import add_kernel_modes, apply_kernel_mode, keep_fastest, positive_int  # noqa: E402
from intgemm_cpu import intgemm_sums  # noqa: E402
from marian_folder import Folder, uncompressed_copy  # noqa: E402


CONVERT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "edgemt-convert")


def cpu_family() -> str:
    """'F model M (name)' of /proc/cpuinfo's first CPU."""
    found = {}
    with open("/proc/cpuinfo", encoding="utf-8") as handle:
        for line in handle:
            key, _, value = line.partition(":")
            found.setdefault(key.strip(), value.strip())
    return (f"{found.get('cpu family', '?')} model {found.get('model', '?')} "
            f"({found.get('model name', '?')})")


def firefox_files(folder: str):
    """{role: file name in `folder`} for model, source and target vocabulary
    and shortlist; SystemExit naming what is missing or ambiguous."""
    found = Folder(folder, "bergamot_alphas.py")
    files = {"model": found.pick("model*.bin",
                                 lambda n: n.startswith("model") and n.endswith(".bin"),
                                 prefer=lambda n: "alphas" in n),
             "shortlist": found.pick("lex*.bin",
                                     lambda n: n.startswith("lex") and n.endswith(".bin"))}
    return {**files, **found.vocabularies()}


def scratch_copies(folder: str, files, scratch: str):
    """The files, uncompressed, in `scratch` under their names without .gz
    (metadata.json too, when there): {role: path}."""
    if os.path.isfile(os.path.join(folder, "metadata.json")):
        files = {**files, "metadata": "metadata.json"}
    return {role: uncompressed_copy(os.path.join(folder, name), scratch)
            for role, name in files.items()}


def convert(paths, scratch: str) -> str:
    """edgemt-convert --dtype int8 --shortlist of the scratch folder."""
    output = os.path.join(os.path.dirname(scratch), "static.emt")
    languages = [] if "metadata" in paths else ["--src-lang", "und", "--tgt-lang", "und"]
    # The converter's Python (Debian's numpy and sentencepiece), not this venv's.
    subprocess.run(["/usr/bin/python3", CONVERT, "--from", "marian",
                    "--checkpoint", scratch, *languages, "--dtype", "int8", "--shortlist",
                    paths["shortlist"], "-o", output], check=True)
    return output


def bergamot_config(paths, factor: float) -> str:
    return "\n".join([
        f"models:\n  - {paths['model']}",
        f"vocabs:\n  - {paths['source_vocab']}\n  - {paths['target_vocab']}",
        f"shortlist:\n  - {paths['shortlist']}\n  - false",
        "beam-size: 1", "normalize: 0", "word-penalty: 0", f"max-length-factor: {factor}",
        "max-length-break: 1000", "mini-batch-words: 100000", "workspace: 512",
        "cpu-threads: 0", "quiet: true", "quiet-translation: true", "ssplit-mode: sentence",
        "gemm-precision: int8shiftAlphaAll"]) + "\n"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--folder", required=True)
    parser.add_argument("--source", required=True)
    parser.add_argument("--cli", required=True)
    parser.add_argument("--model", help="edgemt's int8 file of the folder's model "
                                        "[converted here]")
    parser.add_argument("--max-length-factor", type=float, default=3.0)
    parser.add_argument("--rounds", type=positive_int, default=3)
    add_kernel_modes(parser)
    args = parser.parse_args()
    apply_kernel_mode(args, "bergamot_alphas.py")  # before Bergamot loads
    for path, what in ((args.source, "--source"), (args.cli, "--cli")):
        if not os.path.isfile(path):
            raise SystemExit(f"bergamot_alphas.py: {what} {path}: no such file")
    files = firefox_files(args.folder)
    import sentencepiece  # pylint: disable=import-outside-toplevel
    bg = load_extension()
    with tempfile.TemporaryDirectory() as tmp:
        scratch = os.path.join(tmp, "model")
        os.mkdir(scratch)
        paths = scratch_copies(args.folder, files, scratch)
        emt = args.model or convert(paths, scratch)
        spm = sentencepiece.SentencePieceProcessor(model_file=paths["source_vocab"])
        with open(args.source, encoding="utf-8") as handle:
            lines = [line.rstrip("\n") for line in handle]
        lines.sort(key=lambda line: len(spm.encode(line)))
        service = bg.Service(bg.ServiceConfig(numWorkers=1, logLevel="off"))
        model = service.modelFromConfig(bergamot_config(paths, args.max_length_factor))
        options = bg.ResponseOptions(qualityScores=False, alignment=False)

        def bergamot(batch: int):
            out = []
            start = time.perf_counter()
            for first in range(0, len(lines), batch):
                responses = service.translate(model, bg.VectorString(lines[first:first + batch]),
                                              options)
                out.extend(response.target.text for response in responses)
            return time.perf_counter() - start, out

        source = os.path.join(tmp, "sorted.txt")
        with open(source, "w", encoding="utf-8") as handle:
            handle.write("".join(line + "\n" for line in lines))

        def edgemt(batch: int, *extra: str, text: str = source):
            start = time.perf_counter()
            result = subprocess.run([args.cli, "translate", "-m", emt, "-i", text,
                                     "--batch", str(batch), "--threads", "1", "--beam", "1",
                                     "--no-split-sentences", "--max-len-a",
                                     str(args.max_length_factor), "--max-len-b", "0", *extra],
                                    capture_output=True, text=True, check=True)
            return time.perf_counter() - start, result.stdout.splitlines()

        bergamot(32)  # warm up
        empty = os.path.join(tmp, "empty.txt")
        open(empty, "w", encoding="utf-8").close()
        startup = min(edgemt(1, text=empty)[0] for _ in range(3))
        sums = intgemm_sums()
        print(f"{files['model']}: {len(lines)} lines, 1 thread, greedy, shortlist, "
              f"int8shiftAlphaAll / Int8PerTensorStatic; Bergamot's intgemm sums: {sums}; "
              f"cpu family {cpu_family()}")
        also = (f" edgemt --marian-int8-sums {sums} sent/s | edgemt / Bergamot | no load | "
                f"identical lines |" if sums != "exact" else "")
        print(f"| batch | Bergamot sent/s | edgemt sent/s | edgemt / Bergamot | no load | "
              f"identical lines |{also}")
        print("|---|---|---|---|---|---|" + ("---|---|---|---|" if also else ""))
        # Rounds one after another, each over both batch sizes (as compare.py's
        # time_cells), so a slow spell of the machine falls on one round of
        # every cell. best[engine, batch] = (seconds, outputs).
        best = {}

        def keep(key, seconds_and_outputs):
            keep_fastest(best, key, seconds_and_outputs)

        started = time.perf_counter()
        for round_number in range(1, args.rounds + 1):
            for batch in (1, 32):
                keep(("bergamot", batch), bergamot(batch))
                keep(("edgemt", batch), edgemt(batch))
                if also:  # Bergamot's saturating sums
                    keep(("sums", batch), edgemt(batch, "--marian-int8-sums", sums))
            print(f"bergamot_alphas.py: round {round_number} of {args.rounds} done "
                  f"({time.perf_counter() - started:.0f} s)", file=sys.stderr, flush=True)
        for batch in (1, 32):
            best_b, theirs = best["bergamot", batch]
            row = f"| {batch} | {len(lines) / best_b:.1f} |"
            for engine in ("edgemt", "sums") if also else ("edgemt",):
                best_mine, outputs = best[engine, batch]
                same = sum(a == b for a, b in zip(outputs, theirs))
                row += (f" {len(lines) / best_mine:.1f} | **{best_b / best_mine:.2f}x** | "
                        f"{best_b / max(best_mine - startup, 1e-9):.2f}x | {same}/{len(lines)} |")
            print(row, flush=True)
        print(f"edgemt's start and load: {1000 * startup:.0f} ms (an empty input, best of 3)")


if __name__ == "__main__":
    main()
