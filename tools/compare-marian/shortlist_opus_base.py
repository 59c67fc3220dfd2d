"""Marian's side of shortlist_opus_base.sh (issue 42, acceptance 4), and the
line-by-line comparison of edgemt's outputs with Marian's.

Run with the Python of the pymarian venv (Marian v1.12.42, the library
inside the pymarian wheel).

  marian  --folder F --source S --work W [--factor 1.2] [--rounds 2]
      Translates the lines of S (raw text) with pymarian.Translator, greedy,
      --mini-batch 1 --maxi-batch 1, 1 thread, once over the whole
      vocabulary and once with `--shortlist F/lex.bin 0`. Marian reads
      pieces (F/vocab.yml is not a SentencePiece model): S is cut with
      F/source.spm first, as OPUS-MT does (W/source.pieces). Writes
      W/marian.{full,shortlist}.pieces (Marian's output, pieces), .de (the
      pieces joined by F/target.spm's decode_pieces) and W/marian.json
      (options, seconds, generated tokens, ms per token, cpu family).
      Each of --rounds passes translates every line with both translators,
      alternately; the fastest pass of each counts.
  compare --folder F --marian W/marian.X.pieces --edgemt-json FILE
          [--edgemt-text FILE]
      Lines whose pieces (edgemt translate --json "tokens") equal Marian's,
      and whose text equals Marian's pieces decoded by target.spm.

Length: random weights never choose </s>, so every output has exactly the
length at which Marian stops (marian-dev src/translator/beam_search.cpp,
BeamSearch::search, v1.12.42): after the step whose hypotheses bring the
history to n tokens, it stops when `n >= max-length-factor * batchWidth`,
evaluated in float32 (`options_->get<float>(...) * size_t`), batchWidth
being the batch's longest source in tokens with </s> (batch 1: the
sentence's). So n = the smallest n >= 1 with float32(n) >=
float32(factor) * float32(source tokens + 1) (marian_length below). For a
factor that is not a binary fraction this is not ceil of the exact product:
with 1.2, float32(1.2) * 5 rounds to 6.0, and Marian stops at 6 where
ceil(1.2000000476837158 * 5) = 7 (edgemt took the product in double until
it learnt this; it now does as Marian).
"""

import argparse
import json
import os
import platform
import struct
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


def float32(x: float) -> float:
    """x rounded to float32 (to nearest, as a float32 operation rounds)."""
    return struct.unpack("f", struct.pack("f", x))[0]


def marian_length(factor: float, source_tokens: int) -> int:
    """Tokens Marian generates before stopping at its max-length-factor
    (see the module comment); source_tokens counts </s>. The product is
    Marian's float32 one: two float32 values multiply exactly in double, so
    rounding that to float32 gives the float32 product. (No numpy: the
    script runs in pymarian's venv, which has none.)"""
    limit = float32(float32(factor) * float32(source_tokens))
    n = 1
    while float32(n) < limit:
        n += 1
    return n


def read_lines(path: str) -> list:
    with open(path, encoding="utf-8") as handle:
        return handle.read().splitlines()


def write_lines(path: str, lines: list) -> None:
    with open(path, "w", encoding="utf-8") as handle:
        handle.write("".join(line + "\n" for line in lines))


def marian(args) -> int:
    import pymarian
    import sentencepiece as spm

    folder = os.path.abspath(args.folder)
    source_spm = spm.SentencePieceProcessor(model_file=os.path.join(folder, "source.spm"))
    target_spm = spm.SentencePieceProcessor(model_file=os.path.join(folder, "target.spm"))
    lines = read_lines(args.source)
    pieces = [" ".join(source_spm.encode(line, out_type=str)) for line in lines]
    write_lines(os.path.join(args.work, "source.pieces"), pieces)
    vocab = os.path.join(folder, "vocab.yml")
    # One vocabulary path for both sides: Marian's shortlist is then `shared`
    # (every source id is a candidate too; docs/marian-formats.md 3.3).
    base = (f"-m {folder}/model.npz -v {vocab} {vocab} --beam-size 1 --normalize 1 "
            f"--word-penalty 0 --max-length-factor {args.factor} --cpu-threads 1 "
            f"--mini-batch 1 --maxi-batch 1 --workspace 512 --quiet --quiet-translation")
    runs = {"full": base, "shortlist": f"{base} --shortlist {folder}/lex.bin 0"}
    translators, info = {}, {"marian": "pymarian " + getattr(pymarian, "__version__", "?"),
                             "cpu_family": cpu_family(), "machine": platform.machine(),
                             "sentences": len(lines), "max_length_factor": args.factor,
                             "rounds": args.rounds, "runs": {}}
    for name, options in runs.items():
        start = time.perf_counter()
        translators[name] = pymarian.Translator(options)
        load = time.perf_counter() - start
        translators[name].translate(pieces[:2])  # warm up
        info["runs"][name] = {"options": options, "load_seconds": round(load, 2)}
    best, outputs = {}, {}
    for _ in range(args.rounds):
        for name, translator in translators.items():
            start = time.perf_counter()
            hyps = translator.translate(pieces)
            seconds = time.perf_counter() - start
            if name in outputs and outputs[name] != hyps:
                raise SystemExit(f"Marian {name}: outputs changed between passes")
            outputs[name] = hyps
            best[name] = min(best.get(name, float("inf")), seconds)
    expected = [marian_length(args.factor, len(p.split()) + 1) for p in pieces]
    for name, hyps in outputs.items():
        write_lines(os.path.join(args.work, f"marian.{name}.pieces"), hyps)
        write_lines(os.path.join(args.work, f"marian.{name}.de"),
                    [target_spm.decode_pieces(h.split()) for h in hyps])
        tokens = sum(len(h.split()) for h in hyps)
        run = info["runs"][name]
        run.update({"seconds": round(best[name], 3), "generated_tokens": tokens,
                    "ms_per_token": round(1000 * best[name] / tokens, 3),
                    "lines_at_length_limit": sum(len(h.split()) == n
                                                 for h, n in zip(hyps, expected)),
                    "lines_longer_than_limit": sum(len(h.split()) > n
                                                   for h, n in zip(hyps, expected)),
                    "distinct_pieces": len({p for h in hyps for p in h.split()})})
    full, short = info["runs"]["full"], info["runs"]["shortlist"]
    info["shortlist_time_per_token_cut_percent"] = round(
        100 * (1 - short["ms_per_token"] / full["ms_per_token"]), 1)
    info["same_lines_full_vs_shortlist"] = sum(
        a == b for a, b in zip(outputs["full"], outputs["shortlist"]))
    with open(os.path.join(args.work, "marian.json"), "w", encoding="utf-8") as handle:
        json.dump(info, handle, indent=1, ensure_ascii=False)
        handle.write("\n")
    print(f"Marian ({info['marian']}), greedy, batch 1, 1 thread, {len(lines)} sentences, "
          f"max-length-factor {args.factor}, best of {args.rounds}")
    for name in runs:
        run = info["runs"][name]
        print(f"  {name:<10} {run['ms_per_token']:8.3f} ms/token  ({run['generated_tokens']} "
              f"tokens in {run['seconds']:.2f} s; load {run['load_seconds']:.1f} s; "
              f"{run['lines_at_length_limit']}/{len(lines)} lines end at the length limit; "
              f"{run['distinct_pieces']} distinct pieces)")
    print(f"  the shortlist cuts Marian's time per token by "
          f"{info['shortlist_time_per_token_cut_percent']}%; "
          f"{info['same_lines_full_vs_shortlist']}/{len(lines)} lines equal without it")
    return 0


def compare(args) -> int:
    import sentencepiece as spm

    target_spm = spm.SentencePieceProcessor(model_file=os.path.join(args.folder, "target.spm"))
    reference = read_lines(args.marian)
    objects = [json.loads(line) for line in read_lines(args.edgemt_json)]
    pieces = [" ".join(o.get("tokens", [])) for o in objects]
    if len(pieces) != len(reference):
        raise SystemExit(f"{args.edgemt_json}: {len(pieces)} lines, Marian has {len(reference)}")
    same = [a == b for a, b in zip(pieces, reference)]
    message = f"{sum(same)}/{len(reference)} lines with Marian's pieces"
    if args.edgemt_text:
        text = read_lines(args.edgemt_text)
        decoded = [target_spm.decode_pieces(h.split()) for h in reference]
        message += f", {sum(a == b for a, b in zip(text, decoded))}/{len(reference)} with its text"
    print(f"  {args.label}: {message}")
    for i, ok in enumerate(same):
        if not ok:
            a, b = pieces[i].split(), reference[i].split()
            at = next((k for k, (x, y) in enumerate(zip(a, b)) if x != y), min(len(a), len(b)))
            print(f"    first different line {i + 1}: from piece {at + 1}, edgemt "
                  f"{' '.join(a[at:at + 3])!r} ({len(a)} pieces), Marian "
                  f"{' '.join(b[at:at + 3])!r} ({len(b)} pieces)")
            break
    return 0


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    sub = parser.add_subparsers(dest="step", required=True)
    m = sub.add_parser("marian")
    m.add_argument("--folder", required=True)
    m.add_argument("--source", required=True)
    m.add_argument("--work", required=True)
    m.add_argument("--factor", type=float, default=1.2)
    m.add_argument("--rounds", type=int, default=2)
    c = sub.add_parser("compare")
    c.add_argument("--folder", required=True)
    c.add_argument("--marian", required=True)
    c.add_argument("--edgemt-json", required=True)
    c.add_argument("--edgemt-text")
    c.add_argument("--label", default="edgemt")
    args = parser.parse_args()
    return marian(args) if args.step == "marian" else compare(args)


if __name__ == "__main__":
    sys.exit(main())
