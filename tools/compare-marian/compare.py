"""edgemt against Marian's own translator on one SSRU model, side by side in
one run on one machine, 1 thread (issue 42, acceptance 3).

Run with the Python of a venv holding pymarian (tools/compare-marian/run.sh
makes one): it times pymarian.Translator (Marian v1.12.42, the library
inside the pymarian wheel) and the edgemt CLI on the same lines, greedy,
batch 1 and batch 32, fp32 (Marian: model.npz; edgemt: its fp32
conversion) and int8 (Marian: marian-conv's intgemm8 .bin, chosen by its
item types: the translator has no --gemm-type intgemm8; edgemt: its int8
conversion of that same .bin, which keeps Marian's int8 codes: "int8" in
Marian's arithmetic, the default, and "int8 per-row" with
--per-row-activations, edgemt's own), and prints
sentences/s, source words/s (whitespace words of the input, the same for
both engines) and edgemt's output words/s, the ratio edgemt / Marian, the
lines the two engines translate identically, and the cpu family. Each cell
is the best of --rounds runs of each engine, Marian's and edgemt's in turn;
the rounds come one after another, each over every cell, so that a slow
spell of the machine (minutes long on shared VMs) falls on one round of
every cell, not on every round of one. The int8 cells share Marian's runs
(edgemt's two conversions of one intgemm8 .bin). Marian's time is its
translate() call (model loaded, warmed up); edgemt's is the whole `edgemt
translate` process (start and model load included: printed apart, from an
empty input).

    compare.py --folder FOLDER --source FILE --cli build/edgemt --convert
               tools/edgemt-convert --work DIR [--shortlist lex.bin]
               [--max-length-factor F] [--sort-by-length] [--bergamot]
               [--avx2-only | --avx-vnni-only | --avx512bw-only] [--encoder-split]
FOLDER holds a float32 model (one *.npz, training's *.optimizer.npz aside),
optionally marian-conv's intgemm8 .bin (model*intgemm8*.bin without
"alphas": pymarian reads upstream's intgemm8, not browsermt's; for Firefox's
alphas files see bergamot_alphas.py), and the vocabularies: one vocab*.spm,
or srcvocab*.spm and trgvocab*.spm. Files may be .gz (as Firefox's model
repository keeps them): both engines read uncompressed copies in WORK.
--shortlist: both engines use marian-conv's binary shortlist (Marian
`--shortlist FILE 0`, edgemt a file converted with `--shortlist FILE`).
--max-length-factor: Marian's, and edgemt's --max-len-a F --max-len-b 0
(a model with random weights never ends a sentence: this sets its length).
--sort-by-length: the lines ordered by their number of pieces (stable), for
both engines. Marian stops a batch at factor x its longest source, edgemt
each sentence at its own limit; sentences that never end (random weights)
would make Marian's batch-32 outputs longer than edgemt's (more work, and
lines that differ) unless a batch's sources have one length (Bergamot's
figure sorts too: --maxi-batch 100 --maxi-batch-sort src).
--bergamot: Bergamot's published figure for its es-en tiny11 student
(BERGAMOT) beside edgemt's batch-32 figures.
--avx2-only, --avx-vnni-only, --avx512bw-only: both engines run the
kernels of a CPU without AVX-512 (Zen 3, older Intel), of one with AVX2 and
AVX-VNNI but no AVX-512 (Intel Core from Alder Lake on), or of an AVX-512
CPU without VNNI (Skylake-SP/X): edgemt with EDGEMT_CPU_FEATURES, Marian's
int8 products (intgemm) with INTGEMM_CPUID and its float ones (oneMKL)
with MKL_ENABLE_INSTRUCTIONS (KERNEL_MODES).
Marian's intgemm sums int8 products exactly only with AVX-512 VNNI; where
it runs other code (those options, or a CPU without VNNI) its sums
saturate, so the "int8" cell is also run (and timed, as the others) with
edgemt's `--marian-int8-sums` naming that code (intgemm_cpu.py): the output
Marian gives there. The table's runs keep edgemt's exact sums.
The table's edgemt/Marian counts edgemt's process start and model load
(an empty input's run, best of 3) and Marian's translate() calls only;
the column beside it takes edgemt's start and load out too.
--encoder-split: at batch 32, each cell is also run with outputs cut to
one target token (Marian --max-length-factor 0.001, edgemt --max-len-a 0
--max-len-b 1), in the same rounds, best of --rounds: the encoders and one
decoder step, and by difference the rest of the decoding, each engine's
and their ratio.
Whole-run ratios lie between the two parts' (weighted by Marian's time).
"""

import argparse
import os
import platform
import sys
import time

from edgemt_side import convert_marian, translate
from intgemm_cpu import intgemm_sums
from marian_folder import Folder, uncompressed_copy

# browsermt/students esen/README.md ("Students", Spanish-English): student
# tiny11 on newstest2013, "3,000 sentences (ca. 62k Spanish tokens and 56k
# English tokens)", marian-dev (intgemm-reintegrated-computestats branch),
# Intel(R) Xeon(R) Gold 6248 CPU @ 2.50GHz (avx512vnni), single thread,
# mini-batch 32, beam size 1, lexical shortlist (speed.cpu*.sh: --maxi-batch
# 100 --maxi-batch-sort src, --shortlist lex.s2t.gz 50 50)
BERGAMOT_SENTENCES = 3000
BERGAMOT_SOURCE_TOKENS = 62000
BERGAMOT_SECONDS = {"fp32": 25.0, "intgemm8": 17.0, "intgemm8 + alphas": 16.0}
# edgemt's cell -> the Bergamot figure of the same kind (Marian's intgemm8
# .bin without alphas is what compare.py measures as int8)
BERGAMOT_PEER = {"fp32": "fp32", "int8": "intgemm8", "int8 per-row": "intgemm8"}


# The kernel options, by their argparse names: the environment both engines
# run with, the /proc/cpuinfo flag the option needs and its name there, and
# what the report's header calls the run. intgemm has no 256-bit VNNI level,
# so AVX-VNNI CPUs run its AVX2 code. oneMKL is capped at AVX2 for them too:
# the oneMKL inside pymarian 1.12.42 does not know AVX2_E1 and ignores it
# (running its AVX-512 code), and its float products have no use for VNNI.
KERNEL_MODES = {
    "avx2_only": ({"EDGEMT_CPU_FEATURES": "avx2", "INTGEMM_CPUID": "AVX2",
                   "MKL_ENABLE_INSTRUCTIONS": "AVX2"}, None, "AVX2-only"),
    "avx_vnni_only": ({"EDGEMT_CPU_FEATURES": "avx-vnni", "INTGEMM_CPUID": "AVX2",
                       "MKL_ENABLE_INSTRUCTIONS": "AVX2"}, ("avx_vnni", "AVX-VNNI"),
                      "AVX2 + AVX-VNNI"),
    "avx512bw_only": ({"EDGEMT_CPU_FEATURES": "avx512bw", "INTGEMM_CPUID": "AVX512BW",
                       "MKL_ENABLE_INSTRUCTIONS": "AVX512"}, ("avx512bw", "AVX-512 BW"),
                      "AVX-512 without VNNI"),
}


def positive_int(text: str) -> int:
    """argparse type: a whole number of 1 or more (--rounds, --lines)."""
    try:
        value = int(text)
    except ValueError:
        value = 0
    if value < 1:
        raise argparse.ArgumentTypeError(f"'{text}': expected a whole number of 1 or more")
    return value


def add_kernel_modes(parser) -> None:
    """--avx2-only, --avx-vnni-only, --avx512bw-only (KERNEL_MODES), one at most."""
    kernels = parser.add_mutually_exclusive_group()
    for mode, (env, _, name) in KERNEL_MODES.items():
        kernels.add_argument("--" + mode.replace("_", "-"), action="store_true",
                             help=f"both engines as on a CPU of kind '{name}': "
                                  + ", ".join(f"{k}={v}" for k, v in env.items()))


def apply_kernel_mode(args, program: str):
    """The KERNEL_MODES name args ask for (None: none), its environment set
    for this process and those it starts; SystemExit when this CPU lacks
    what the mode needs. Call before the engines load (intgemm reads
    INTGEMM_CPUID when it loads, oneMKL its variable at its first call)."""
    mode = next((name for name in KERNEL_MODES if getattr(args, name)), None)
    if mode is not None:
        env, needed, _ = KERNEL_MODES[mode]
        if needed is not None and needed[0] not in cpuinfo("flags").split():
            raise SystemExit(f"{program}: --{mode.replace('_', '-')} needs a CPU with "
                             f"{needed[1]} ({needed[0]} in /proc/cpuinfo); this one has none")
        os.environ.update(env)
    return mode


def cpuinfo(key: str) -> str:
    """The first `key : value` of /proc/cpuinfo ("" when none)."""
    try:
        with open("/proc/cpuinfo", encoding="utf-8") as handle:
            for line in handle:
                name, _, value = line.partition(":")
                if name.strip() == key:
                    return value.strip()
    except OSError:
        pass
    return ""


def cpu_name() -> str:
    return cpuinfo("model name") or platform.processor() or "unknown"


def cpu_family() -> str:
    """'cpu family F model M', as docs/performance.md names machines."""
    family, model = cpuinfo("cpu family"), cpuinfo("model")
    return f"cpu family {family or 'unknown'}" + (f" model {model}" if model else "")


def folder_files(folder: str) -> dict:
    """{role: file name in `folder`}: "npz" (float32 model), "intgemm8"
    (when there), "source_vocab", "target_vocab"; SystemExit naming what
    is missing or ambiguous."""
    found = Folder(folder, "compare.py")
    files = {"npz": found.pick("*.npz model",
                               lambda n: n.endswith(".npz") and "optimizer" not in n),
             "intgemm8": found.pick("model*intgemm8*.bin", lambda n: n.startswith("model") and
                                    "intgemm8" in n and "alphas" not in n and n.endswith(".bin"),
                                    required=False)}
    files.update(found.vocabularies())
    return {role: name for role, name in files.items() if name is not None}


def marian_run(args, model: str, lines, batch: int, one_token: bool = False):
    """(seconds translating, outputs) of pymarian.Translator, 1 thread;
    with one_token, outputs of one target token (--encoder-split)."""
    import pymarian  # the venv's; imported here so --help needs nothing
    vocabs = f"{args.paths['source_vocab']} {args.paths['target_vocab']}"
    options = (f"-m {model} -v {vocabs} --cpu-threads 1 --mini-batch {batch} "
               f"--maxi-batch 1 --workspace 256 --quiet --quiet-translation --beam-size 1")
    if args.shortlist:
        options += f" --shortlist {args.shortlist} 0"
    if one_token:
        options += " --max-length-factor 0.001"
    elif args.max_length_factor:
        options += f" --max-length-factor {args.max_length_factor}"
    translator = pymarian.Translator(options)
    translator.translate(lines[:4])  # warm up
    start = time.perf_counter()
    outputs = translator.translate(lines)
    return time.perf_counter() - start, outputs


def edgemt_run(args, model: str, source: str, batch: int, *extra: str, one_token: bool = False):
    """(seconds of the whole `edgemt translate` process, outputs), greedy;
    with one_token, outputs of one target token (--encoder-split)."""
    if one_token:
        return translate(args.cli, model, source, batch, 1, None, "--length-penalty", "0",
                         *extra, "--max-len-a", "0", "--max-len-b", "1")
    return translate(args.cli, model, source, batch, 1, args.max_length_factor,
                     "--length-penalty", "0", *extra)


def convert(args, dtype: str, role: str, *flags: str) -> str:
    """edgemt's file of the model `role` of args.paths, with the shortlist
    when given and `flags` (edgemt_side.convert_marian: int8 keeps an
    intgemm8 .bin's codes; with --per-row-activations only its float32
    matrices, Wemb in upstream marian-conv's files, are rounded)."""
    shortlist = ["--shortlist", args.shortlist] if args.shortlist else []
    name = f"{dtype}{''.join(flags)}"
    return convert_marian(args.convert, args.paths[role],
                          (args.paths["source_vocab"], args.paths["target_vocab"]),
                          os.path.join(args.work, f"folder.{name}"),
                          os.path.join(args.work, f"model.{name}.emt"), dtype, *flags, *shortlist)


def read_lines(args) -> list:
    with open(args.source, encoding="utf-8") as handle:
        lines = handle.read().splitlines()[:args.lines]
    if args.sort_by_length:
        import sentencepiece as spm
        sp = spm.SentencePieceProcessor(model_file=args.paths["source_vocab"])
        lines.sort(key=lambda line: len(sp.encode(line)))
    return lines


def words(lines) -> int:
    return sum(len(line.split()) for line in lines)


def bergamot_lines(best: dict, lines) -> list:
    """Bergamot's published figure and edgemt's batch-32 ones, per second."""
    per_sentence = BERGAMOT_SOURCE_TOKENS / BERGAMOT_SENTENCES
    out = [f"Bergamot (published, browsermt/students esen/README.md): es-en student tiny11, "
           f"newstest2013, {BERGAMOT_SENTENCES} sentences, ca. {BERGAMOT_SOURCE_TOKENS:,} "
           f"Spanish tokens ({per_sentence:.1f} per sentence), 1 thread of an Intel Xeon "
           f"Gold 6248 (avx512vnni), batch 32 greedy, sorted, shortlist 50 50:"]
    out += [f"  {name:<18} {seconds:4.0f} s  {BERGAMOT_SENTENCES / seconds:7.1f} sent/s "
            f"{bergamot_rate(name):7.0f} source tokens/s"
            for name, seconds in BERGAMOT_SECONDS.items()]
    out.append(f"edgemt here, batch 32 ({cpu_name()}; {len(lines)} lines of "
               f"{words(lines) / len(lines):.1f} source words each, not newstest2013's "
               f"{per_sentence:.1f}: per sentence not comparable, words/s closer):")
    for (dtype, batch), seconds in best.items():
        if batch == 32:
            peer = BERGAMOT_PEER[dtype]
            rate = words(lines) / seconds
            out.append(f"  {dtype:<18} {seconds:4.1f} s  {len(lines) / seconds:7.1f} sent/s "
                       f"{rate:7.0f} source words/s = {rate / bergamot_rate(peer):.2f}x "
                       f"Bergamot's {peer} source tokens/s (other machine, other text)")
    return out


def encoder_split_lines(args, cells, timed, startups) -> list:
    """--encoder-split: each cell at batch 32 with one target token, and by
    difference the rest of the decoding, Marian's and edgemt's (edgemt
    without its start and load)."""
    out = [f"--encoder-split: batch 32, outputs cut to one target token (the encoders and "
           f"one decoder step), best of {args.rounds}, and the rest of the decoding by "
           f"difference; seconds Marian / edgemt (without its start and load), edgemt / Marian:"]
    for dtype, marian_model, edgemt_model in cells:
        marian_one = timed["marian one token", marian_model, 32][0]
        edgemt_one = timed["edgemt one token", dtype, 32][0] - startups[edgemt_model]
        marian_rest = timed["marian", marian_model, 32][0] - marian_one
        edgemt_rest = timed["edgemt", dtype, 32][0] - startups[edgemt_model] - edgemt_one
        out.append(f"  {dtype:<14} one token {marian_one:6.2f} / {edgemt_one:5.2f} s "
                   f"{marian_one / max(edgemt_one, 1e-9):5.2f}x;  the rest {marian_rest:6.2f} / "
                   f"{edgemt_rest:5.2f} s {marian_rest / max(edgemt_rest, 1e-9):5.2f}x")
    return out


def keep_fastest(best: dict, key, seconds_and_outputs) -> None:
    """best[key] = (seconds, outputs) of the fastest run so far of `key`
    (its outputs too: Bergamot's batch-32 output moves between runs)."""
    if seconds_and_outputs[0] < best.get(key, (float("inf"),))[0]:
        best[key] = seconds_and_outputs


def time_cells(args, cells, lines, source, sums: str) -> dict:
    """Every run the table needs, --rounds rounds one after another, each
    over every cell: per batch size and Marian model, Marian's run, then
    edgemt's of each cell on that model (and with --marian-int8-sums `sums`
    for the "int8" cell where Marian's sums are not exact; with
    --encoder-split, at batch 32, each engine's one-token runs too). A slow
    spell of the machine then falls on one round of every cell. Returns
    {(engine, model or dtype, batch): (best seconds, outputs)}, engine
    "marian" (keyed by model), "edgemt" or "sums" (by dtype), or "marian one
    token" / "edgemt one token" (--encoder-split)."""
    results = {}

    def keep(key, seconds_and_outputs):
        keep_fastest(results, key, seconds_and_outputs)

    marian_models = list(dict.fromkeys(model for _, model, _ in cells))
    started = time.perf_counter()
    for round_number in range(1, args.rounds + 1):
        for batch in (1, 32):
            for marian_model in marian_models:
                split = args.encoder_split and batch == 32
                keep(("marian", marian_model, batch), marian_run(args, marian_model, lines, batch))
                if split:
                    keep(("marian one token", marian_model, batch),
                         marian_run(args, marian_model, lines, batch, one_token=True))
                for dtype, model, edgemt_model in cells:
                    if model != marian_model:
                        continue
                    keep(("edgemt", dtype, batch), edgemt_run(args, edgemt_model, source, batch))
                    if dtype == "int8" and sums != "exact":
                        keep(("sums", dtype, batch), edgemt_run(args, edgemt_model, source,
                                                                batch, "--marian-int8-sums", sums))
                    if split:
                        keep(("edgemt one token", dtype, batch),
                             edgemt_run(args, edgemt_model, source, batch, one_token=True))
        print(f"compare.py: round {round_number} of {args.rounds} done "
              f"({time.perf_counter() - started:.0f} s)", file=sys.stderr, flush=True)
    return results


def bergamot_rate(name: str) -> float:
    return BERGAMOT_SOURCE_TOKENS / BERGAMOT_SECONDS[name]


def main() -> int:
    started = time.perf_counter()
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--folder", required=True)
    parser.add_argument("--source", required=True)
    parser.add_argument("--cli", required=True)
    parser.add_argument("--convert", required=True, help="tools/edgemt-convert")
    parser.add_argument("--work", required=True)
    parser.add_argument("--lines", type=positive_int, default=1000)
    parser.add_argument("--rounds", type=positive_int, default=3)
    parser.add_argument("--shortlist", help="marian-conv's binary shortlist, for both")
    parser.add_argument("--max-length-factor", type=float)
    parser.add_argument("--sort-by-length", action="store_true")
    parser.add_argument("--bergamot", action="store_true")
    parser.add_argument("--encoder-split", action="store_true")
    add_kernel_modes(parser)
    args = parser.parse_args()
    mode = apply_kernel_mode(args, "compare.py")  # before pymarian is imported
    for path, what in ((args.source, "--source"), (args.cli, "--cli")):
        if not os.path.isfile(path):
            raise SystemExit(f"compare.py: {what} {path}: no such file")
    os.makedirs(args.work, exist_ok=True)
    copies = os.path.join(args.work, "files")  # uncompressed: pymarian reads no .gz
    args.paths = {role: uncompressed_copy(os.path.join(args.folder, name), copies)
                  for role, name in folder_files(args.folder).items()}
    if args.shortlist:
        args.shortlist = uncompressed_copy(args.shortlist, copies)
    lines = read_lines(args)
    source = os.path.join(args.work, "source.txt")
    with open(source, "w", encoding="utf-8") as handle:
        handle.write("\n".join(lines) + "\n")
    cells = [("fp32", args.paths["npz"], convert(args, "fp32", "npz"))]
    if "intgemm8" in args.paths:
        intgemm8 = args.paths["intgemm8"]
        cells.append(("int8", intgemm8, convert(args, "int8", "intgemm8")))
        cells.append(("int8 per-row", intgemm8,
                      convert(args, "int8", "intgemm8", "--per-row-activations")))
    empty = os.path.join(args.work, "empty.txt")
    open(empty, "w", encoding="utf-8").close()
    # Each file's process start and load: an empty input, best of 3.
    startups = {model: min(edgemt_run(args, model, empty, 1)[0] for _ in range(3))
                for _, _, model in cells}
    settings = [f"{len(lines)} lines ({words(lines)} source words)"]
    if args.sort_by_length:
        settings.append("sorted by length")
    if args.shortlist:
        settings.append(f"shortlist {os.path.basename(args.shortlist)}")
    if args.max_length_factor:
        settings.append(f"max-length-factor {args.max_length_factor}")
    if mode is not None:
        settings.append(f"run as {KERNEL_MODES[mode][2]} (--{mode.replace('_', '-')})")
    print(f"edgemt vs Marian (pymarian), 1 thread, greedy, {', '.join(settings)}; "
          f"{cpu_family()} ({cpu_name()})")
    print(f"{'cell':<24}{'Marian':>8}{'edgemt':>8}{'Marian':>9}{'edgemt':>9}{'edgemt':>9}"
          f"{'edgemt/':>9}{'no load':>9}{'identical':>11}")
    print(f"{'':<24}{'sent/s':>8}{'sent/s':>8}{'src w/s':>9}{'src w/s':>9}{'out w/s':>9}"
          f"{'Marian':>9}{'':>9}{'lines':>11}", flush=True)
    sums = intgemm_sums()  # Marian's here (after KERNEL_MODES set INTGEMM_CPUID)
    timed = time_cells(args, cells, lines, source, sums)
    best, notes, sums_notes = {}, [], []
    for dtype, marian_model, edgemt_model in cells:
        for batch in (1, 32):
            startup = startups[edgemt_model]
            best_marian, marian_out = timed["marian", marian_model, batch]
            best_edgemt, edgemt_out = timed["edgemt", dtype, batch]
            best[dtype, batch] = best_edgemt
            same = sum(a == b for a, b in zip(marian_out, edgemt_out))
            print(f"{dtype + ' batch ' + str(batch):<24}{len(lines) / best_marian:>8.1f}"
                  f"{len(lines) / best_edgemt:>8.1f}{words(lines) / best_marian:>9.0f}"
                  f"{words(lines) / best_edgemt:>9.0f}{words(edgemt_out) / best_edgemt:>9.0f}"
                  f"{best_marian / best_edgemt:>8.2f}x"
                  f"{best_marian / max(best_edgemt - startup, 1e-9):>8.2f}x{same:>6}/{len(lines)}")
            if ("sums", dtype, batch) in timed:
                best_sums, sums_out = timed["sums", dtype, batch]
                sums_notes.append(
                    f"  {dtype} batch {batch}: {sum(a == b for a, b in zip(marian_out, sums_out))}"
                    f"/{len(lines)} identical, {len(lines) / best_sums:.1f} sent/s, "
                    f"{best_marian / best_sums:.2f}x Marian "
                    f"({best_marian / max(best_sums - startup, 1e-9):.2f}x without the load)")
            starts = sum(a != b and a.startswith(b) for a, b in zip(marian_out, edgemt_out))
            notes.append(f"  {dtype} batch {batch}: {words(marian_out)} / {words(edgemt_out)}"
                         + (f"; {starts} more lines where edgemt's is the start of Marian's "
                            "(Marian's length limit is its batch's longest source's)"
                            if starts else ""))
    print("output words, Marian / edgemt:\n" + "\n".join(notes))
    if sums_notes:
        print(f"edgemt with --marian-int8-sums {sums} (the sums of the intgemm code Marian runs "
              f"here), best of {args.rounds} as the table:\n" + "\n".join(sums_notes))
    print("edgemt's times include its process start and model load (an empty input, best of 3: "
          + ", ".join(f"{dtype} {1000 * startups[model]:.0f} ms" for dtype, _, model in cells)
          + "; 'no load' takes it out); Marian's exclude its load")
    if args.encoder_split:
        print("\n".join(encoder_split_lines(args, cells, timed, startups)))
    if args.bergamot:
        print("\n".join(bergamot_lines(best, lines)))
    print(f"compare.py: {time.perf_counter() - started:.0f} s, best of {args.rounds} rounds")
    sys.stdout.flush()
    return 0


if __name__ == "__main__":
    sys.exit(main())
