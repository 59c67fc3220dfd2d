#!/usr/bin/python3
"""edgemt against PyTorch eager on the same RNN checkpoint (the trainer of
../shared/training/train_rnn_attention.py): batch-1 greedy latency, measured
side by side in one run.

For each round and thread count: PyTorch runs the trainer's own model
(model.encode + model.step, the loop of its greedy(), one sentence at a
time, torch.set_num_threads(T)) in a child process; edgemt runs
`edgemt bench --batch 1 --threads T` on the same sentences, for every
--dtypes file (converted here with edgemt-convert --from torch-rnn).
Latency per sentence excludes tokenization on both sides. Medians over the
rounds; the ratio is PyTorch's p50 over edgemt's. Also prints how many
edgemt fp32 outputs equal PyTorch's (edgemt translate on the same lines).
A benchmark, not a test: figures move with the machine; `cpu family` is
printed beside them.

usage: tools/compare-torch-rnn/compare.py --checkpoint DIR [--spm FILE]
           [--edgemt build/edgemt] [--threads 1,2] [--sentences 300] [--rounds 3]
"""

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, os.path.join(REPO, "tools"))
from edgemt_tools.torch_blas import torch_blas  # noqa: E402


def cpu_family() -> str:
    with open("/proc/cpuinfo") as f:
        for line in f:
            if line.startswith("cpu family"):
                return line.split(":", 1)[1].strip()
    return "?"


def torch_worker(args) -> int:
    """Child process: PyTorch greedy per sentence; prints JSON."""
    import sentencepiece as spm
    import torch
    torch.set_num_threads(args.threads_one)
    sys.path.insert(0, args.training_dir)
    from train_rnn_attention import RnnSeq2Seq, PAD, BOS, EOS
    with open(os.path.join(args.checkpoint, "config.json")) as f:
        cfg = json.load(f)
    model = RnnSeq2Seq(cfg)
    model.load_state_dict(torch.load(os.path.join(args.checkpoint, "model.pt"), map_location="cpu"))
    model.eval()
    sp = spm.SentencePieceProcessor(model_file=args.spm)
    with open(args.input, encoding="utf-8") as f:
        lines = [line.rstrip("\n") for line in f][:args.sentences]
    sources = [torch.tensor([sp.encode(s)[:200] + [EOS]]) for s in lines]
    times, outputs = [], []
    with torch.no_grad():
        for i, src in enumerate([sources[0]] + sources):  # the first one warms up
            t0 = time.perf_counter()
            enc, state = model.encode(src)
            y = torch.tensor([BOS])
            ids = []
            for _ in range(60):
                logits, state, _ = model.step(y, state, enc, src.eq(PAD))
                y = logits.argmax(-1)
                if y.item() == EOS:
                    break
                ids.append(y.item())
            if i > 0:
                times.append((time.perf_counter() - t0) * 1000.0)
                outputs.append(sp.decode(ids))
    blas = torch_blas()
    print(json.dumps({"ms": times, "outputs": outputs, "blas": f"{blas.name} ({blas.path})"}))
    return 0


def percentile(values, p):
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, max(0, int(round(p / 100.0 * len(ordered) + 0.5)) - 1))]


def edgemt_bench(edgemt, model, source, sentences, threads):
    out = subprocess.run([edgemt, "bench", "-m", model, "-i", source, "--sentences", str(sentences),
                          "--batch", "1", "--threads", str(threads), "--idle-seconds", "0"],
                         capture_output=True, text=True, check=True).stdout
    for line in out.splitlines():
        fields = line.split()
        if len(fields) >= 9 and fields[0] == str(threads) and fields[1] == "1":
            return float(fields[3]), float(fields[4])
    raise RuntimeError(f"no row for {threads} threads in:\n{out}")


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--checkpoint", required=True, help="folder with model.pt and config.json")
    ap.add_argument("--spm", help="SentencePiece model (default: CHECKPOINT/spm.model)")
    ap.add_argument("--training-dir", default=os.path.join(REPO, "..", "shared", "training"))
    ap.add_argument("--edgemt", default=os.path.join(REPO, "build", "edgemt"))
    ap.add_argument("--input", default=os.path.join(REPO, "models", "reference", "test_2016_flickr.en"))
    ap.add_argument("--threads", default="1,2")
    ap.add_argument("--dtypes", default="fp32,int8")
    ap.add_argument("--sentences", type=int, default=300)
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--torch-worker", action="store_true", help=argparse.SUPPRESS)
    ap.add_argument("--threads-one", type=int, default=1, help=argparse.SUPPRESS)
    args = ap.parse_args()
    args.spm = args.spm or os.path.join(args.checkpoint, "spm.model")
    if args.torch_worker:
        return torch_worker(args)

    work = tempfile.mkdtemp(prefix="edgemt-compare-rnn-")
    models = {}
    for dtype in args.dtypes.split(","):
        models[dtype] = os.path.join(work, f"model.{dtype}.emt")
        subprocess.run(["/usr/bin/python3", os.path.join(REPO, "tools", "edgemt-convert"), "--from",
                        "torch-rnn", "--checkpoint", os.path.join(args.checkpoint, "model.pt"),
                        "--config", os.path.join(args.checkpoint, "config.json"), "--spm", args.spm,
                        "--dtype", dtype, "-o", models[dtype]], check=True, capture_output=True)
    lines_file = os.path.join(work, "source.txt")
    with open(args.input, encoding="utf-8") as f, open(lines_file, "w", encoding="utf-8") as out:
        out.writelines([line for line in f][:args.sentences])
    threads = [int(t) for t in args.threads.split(",")]
    torch_runs = {t: [] for t in threads}
    edgemt_runs = {(d, t): [] for d in models for t in threads}
    torch_outputs, blas = None, "?"
    for _ in range(args.rounds):
        for t in threads:
            # Interleaved per round, so machine drift hits both.
            child = subprocess.run([sys.executable, __file__, "--torch-worker", "--threads-one", str(t),
                                    "--checkpoint", args.checkpoint, "--spm", args.spm, "--training-dir",
                                    args.training_dir, "--input", lines_file, "--sentences",
                                    str(args.sentences)],
                                   capture_output=True, text=True, check=True,
                                   env=dict(os.environ, OMP_NUM_THREADS=str(t)))
            result = json.loads(child.stdout)
            torch_runs[t].append((percentile(result["ms"], 50), percentile(result["ms"], 90)))
            torch_outputs, blas = result["outputs"], result["blas"]
            for dtype, model in models.items():
                edgemt_runs[(dtype, t)].append(edgemt_bench(args.edgemt, model, lines_file,
                                                            args.sentences, t))
    ours = subprocess.run([args.edgemt, "translate", "-m", models.get("fp32", next(iter(models.values()))),
                           "-i", lines_file], capture_output=True, text=True, check=True).stdout.splitlines()
    same = sum(a == b for a, b in zip(ours, torch_outputs))

    with open(os.path.join(args.checkpoint, "config.json")) as f:
        cfg = json.load(f)
    print(f"model: {args.checkpoint}: {cfg.get('attention')} {cfg.get('cell', 'lstm')}, "
          f"{cfg.get('layers')} layer(s), hidden {cfg.get('hidden')}, emb {cfg.get('emb_dim')}, "
          f"vocab {cfg.get('vocab_size')}")
    print(f"machine: cpu family {cpu_family()}, nproc {os.cpu_count()}; PyTorch {blas}")
    print(f"batch-1 greedy latency, {args.sentences} sentences, median of {args.rounds} rounds")
    print(f"edgemt fp32 outputs identical to PyTorch's: {same}/{len(torch_outputs)}")
    for t in threads:
        torch_p50 = statistics.median(r[0] for r in torch_runs[t])
        torch_p90 = statistics.median(r[1] for r in torch_runs[t])
        print(f"\nthreads {t}\nsystem              p50 ms   p90 ms  speed-up (PyTorch p50 / p50)")
        print(f"PyTorch eager fp32  {torch_p50:7.3f}  {torch_p90:7.3f}     1.00x")
        for dtype in models:
            p50 = statistics.median(r[0] for r in edgemt_runs[(dtype, t)])
            p90 = statistics.median(r[1] for r in edgemt_runs[(dtype, t)])
            print(f"edgemt {dtype:<12} {p50:7.3f}  {p90:7.3f}  {torch_p50 / p50:7.2f}x")
    return 0


if __name__ == "__main__":
    sys.exit(main())
