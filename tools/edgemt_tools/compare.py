"""edgemt-compare: PyTorch eager vs edgemt on the same checkpoint and sentences.

Two configurations, each at every --threads count, systems interleaved per
repetition (machine drift cancels), medians over --repeat:
  * batch-1 greedy latency per sentence (p50, p90, mean);
  * batch-32 beam-4 throughput (source sentences/s), with
    PyTorch running a batched beam search (torch_batched.py) and edgemt
    `translate --batch 32 --beam 4` minus its load time (measured on an
    empty input, reported as its own column).
Systems: PyTorch eager fp32, PyTorch dynamic int8 (quantize_dynamic on
nn.Linear), edgemt fp32 (converted here) and the bundled edgemt fp16 and int8
files. Every table gives BLEU on its sentences and speed and peak RSS
relative to PyTorch eager fp32; after it, edgemt fp16 and int8 against
edgemt fp32 (speed, RSS, identical outputs).
At the defaults (all 1,000 sentences, 320 for throughput, 5 repetitions,
1 and 2 threads) a run takes about 50 minutes on 2 cores, most of it PyTorch.
Each measurement runs in its own process; peak RSS is that process's.
PyTorch's BLAS is checked first and printed: Debian's torch on the netlib
reference BLAS is ~5x slower than on OpenBLAS, a baseline that would flatter
edgemt, so that is refused unless --allow-reference-blas.
"""
import argparse
import json
import os
import platform
import statistics
import subprocess
import sys
import tempfile
import time

from .textio import read_lines

REPO_ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.realpath(__file__))))
BUNDLED_FP16 = os.path.join(REPO_ROOT, "models", "multi30k-en-de.fp16.emt")
BUNDLED_INT8 = os.path.join(REPO_ROOT, "models", "multi30k-en-de.int8.emt")
SKIP_MESSAGE = "SKIPPED: ../shared checkpoint not found"


def _vmhwm_mib(pid="self"):
    with open(f"/proc/{pid}/status") as handle:
        for line in handle:
            if line.startswith("VmHWM:"):
                return int(line.split()[1]) / 1024.0
    return float("nan")


def torch_child(argv):
    """Runs in its own process: greedy latency per sentence (or, with a batch
    size, batched beam-4 throughput), prints JSON."""
    mode, ckpt, cfg, spm, threads, src = argv[:6]
    batch = int(argv[6]) if len(argv) > 6 else 0
    import torch
    from .torch_reference import TorchReference
    torch.set_num_threads(int(threads))
    ref = TorchReference(ckpt, cfg, spm)
    if mode == "int8":
        ref.model = torch.quantization.quantize_dynamic(ref.model, {torch.nn.Linear},
                                                        dtype=torch.qint8)
        # The eval fast-path check reads `.weight` of quantized Linears (a method) and fails;
        # this flag makes both TransformerEncoder and its layers take the regular path.
        for module in ref.model.modules():
            if isinstance(module, torch.nn.TransformerEncoderLayer):
                module.activation_relu_or_gelu = False
    sources = read_lines(src)
    times, outputs = [], []
    if batch:
        from .torch_batched import beam_search_batch
        ids = [ref.encode_text(line) for line in sources]
        start = time.perf_counter()
        tokens = 0
        for first in range(0, len(ids), batch):
            for out in beam_search_batch(ref, ids[first:first + batch], 4):
                outputs.append(ref.decode_ids(out))
                tokens += len(out)
        seconds = time.perf_counter() - start
        print(json.dumps({"seconds": seconds, "tokens": tokens, "outputs": outputs,
                          "rss": _vmhwm_mib()}))
        return 0
    with torch.no_grad():
        for line in sources:
            start = time.perf_counter()
            out = ref.decode_ids(ref.greedy(ref.encode_text(line))) if line.strip() else ""
            times.append(time.perf_counter() - start)
            outputs.append(out)
    print(json.dumps({"times": times, "outputs": outputs, "rss": _vmhwm_mib()}))
    return 0


def torch_probe():
    """PyTorch's version, BLAS (fp32 GEMMs) and quantized engine (dynamic int8
    Linear), from a child process started as the measured ones are."""
    result = subprocess.run([sys.executable, "-c",
                             "import sys, json; sys.path.insert(0, %r); import torch; "
                             "from edgemt_tools.torch_blas import torch_blas; "
                             "print(json.dumps([torch.__version__, torch_blas()._asdict(), "
                             "torch.backends.quantized.engine]))"
                             % os.path.join(REPO_ROOT, "tools")],
                            capture_output=True, text=True, check=True)
    return json.loads(result.stdout)


def run_torch(mode, paths, threads, src, batch=0):
    result = subprocess.run([sys.executable, "-c",
                             "import sys; sys.path.insert(0, %r); from edgemt_tools.compare import "
                             "torch_child; sys.exit(torch_child(sys.argv[1:]))"
                             % os.path.join(REPO_ROOT, "tools"),
                             mode, paths["checkpoint"], paths["config"], paths["spm"],
                             str(threads), src] + ([str(batch)] if batch else []),
                            capture_output=True, text=True, check=True)
    return json.loads(result.stdout)


def run_edgemt(binary, model, threads, sources):
    """One process; warm-up line, then time write->answer per sentence (pipe overhead ~tens of us)."""
    proc = subprocess.Popen([binary, "translate", "-m", model, "--batch", "1", "--threads",
                             str(threads)], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                            text=True, bufsize=1)
    proc.stdin.write(sources[0] + "\n"); proc.stdin.flush(); proc.stdout.readline()
    times, outputs = [], []
    for line in sources:
        start = time.perf_counter()
        proc.stdin.write(line + "\n"); proc.stdin.flush()
        outputs.append(proc.stdout.readline().rstrip("\n"))
        times.append(time.perf_counter() - start)
    proc.stdin.close()
    _, status, usage = os.wait4(proc.pid, 0)
    if status != 0:
        raise RuntimeError(f"edgemt exited with status {status}")
    return {"times": times, "outputs": outputs, "rss": usage.ru_maxrss / 1024.0}


def run_edgemt_throughput(binary, model, threads, src, empty, out):
    """Batch-32 beam-4 translation of `src`; seconds exclude the load time,
    measured on an empty input right before."""
    def timed(path):
        start = time.perf_counter()
        proc = subprocess.Popen([binary, "translate", "-m", model, "--batch", "32", "--beam", "4",
                                 "--threads", str(threads), "-i", path, "-o", out])
        _, status, usage = os.wait4(proc.pid, 0)
        if status != 0:
            raise RuntimeError(f"edgemt exited with status {status}")
        return time.perf_counter() - start, usage.ru_maxrss / 1024.0
    load, _ = timed(empty)
    total, rss = timed(src)
    outputs = read_lines(out)
    return {"seconds": total - load, "load": load, "rss": rss, "outputs": outputs,
            "tokens": None}


def print_against_edgemt_fp32(summary, lower_is_faster):
    """One line per other edgemt precision: speed and peak RSS relative to edgemt
    fp32 in the same run, and how many outputs are identical to fp32's."""
    if "edgemt fp32" not in summary:
        return
    speed32, rss32, out32 = summary["edgemt fp32"]
    for name in ("edgemt fp16", "edgemt int8"):
        if name not in summary:
            continue
        speed, rss, out = summary[name]
        faster = speed32 / speed if lower_is_faster else speed / speed32
        same = sum(a == b for a, b in zip(out, out32))
        print(f"  {name} vs edgemt fp32: {faster:.2f}x the speed, {rss / rss32:.2f}x the peak RSS, "
              f"{same}/{len(out32)} outputs identical")


def _pct(values, q):
    values = sorted(values)
    return values[min(len(values) - 1, int(round(q * (len(values) - 1))))]


def main(argv=None):
    parser = argparse.ArgumentParser(prog="edgemt-compare", description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--edgemt", default=os.path.join(REPO_ROOT, "build", "edgemt"),
                        help="the edgemt executable (default build/edgemt)")
    parser.add_argument("--shared", default=os.path.join(os.path.dirname(REPO_ROOT), "shared"),
                        help="folder with models/multi30k-en-de and data/multi30k (default "
                             "../shared); without it the command prints SKIPPED and exits 0")
    parser.add_argument("--threads", default="1,2",
                        help="thread counts, comma separated; one table per count (default 1,2)")
    parser.add_argument("--repeat", type=int, default=5,
                        help="repetitions per system, interleaved; figures are medians (default 5)")
    parser.add_argument("--latency-sentences", type=int, default=0,
                        help="first N sentences of test_2016_flickr for batch-1 greedy latency "
                             "(default 0: all 1,000)")
    parser.add_argument("--throughput-sentences", type=int, default=320,
                        help="first N sentences for batch-32 beam-4 throughput (default 320, "
                             "10 batches)")
    parser.add_argument("--quick", action="store_true", help="20 sentences, repeat 1")
    parser.add_argument("--allow-reference-blas", action="store_true",
                        help="measure PyTorch even when it runs on the netlib reference BLAS "
                             "(install libopenblas0-openmp instead: a fair baseline)")
    args = parser.parse_args(argv)
    for name in ("repeat", "latency_sentences", "throughput_sentences"):
        if getattr(args, name) < (1 if name == "repeat" else 0):
            parser.error(f"--{name.replace('_', '-')} must be "
                         f"{'>= 1' if name == 'repeat' else '>= 0'}")
    try:
        thread_counts = [int(t) for t in args.threads.split(",")]
    except ValueError:
        thread_counts = []
    if not thread_counts or min(thread_counts) < 1:
        parser.error(f"--threads wants positive integers separated by commas, got {args.threads!r}")
    args.thread_counts = thread_counts
    if args.quick:
        args.latency_sentences, args.throughput_sentences, args.repeat = 20, 32, 1
    mdir = os.path.join(args.shared, "models", "multi30k-en-de")
    ddir = os.path.join(args.shared, "data", "multi30k")
    paths = {k: os.path.join(mdir, f) for k, f in
             [("checkpoint", "model.pt"), ("config", "config.json"), ("spm", "spm.model")]}
    src_gz, ref_gz = (os.path.join(ddir, f"test_2016_flickr.{l}.gz") for l in ("en", "de"))
    if not all(os.path.isfile(p) for p in [*paths.values(), src_gz, ref_gz]):
        print(SKIP_MESSAGE)
        return 0
    if not os.access(args.edgemt, os.X_OK):
        print(f"edgemt-compare: no edgemt executable at {args.edgemt} (build it, or pass "
              "--edgemt)", file=sys.stderr)
        return 2
    torch_version, blas, quantized_engine = torch_probe()
    if blas["kind"] == "reference" and not args.allow_reference_blas:
        print("edgemt-compare: PyTorch runs on the netlib reference BLAS "
              f"({blas['path']}), about 5x slower than an optimized one: the "
              "comparison would flatter edgemt. Install libopenblas0-openmp (Debian switches "
              "libblas.so.3 to it) or pass --allow-reference-blas.", file=sys.stderr)
        return 2
    from .bleu import corpus_bleu
    sources, refs = read_lines(src_gz), read_lines(ref_gz)
    n = args.latency_sentences or len(sources)
    sources, refs = sources[:n], refs[:n]
    cpu = next((l.split(":", 1)[1].strip() for l in open("/proc/cpuinfo")
                if l.startswith("model name")), platform.processor())
    print(f"machine: {cpu}, nproc {os.cpu_count()}")
    print(f"PyTorch {torch_version} on {blas['name']} ({blas['path'] or '-'})")
    print("command: " + " ".join([os.path.basename(sys.argv[0])] + (argv or sys.argv[1:])))
    print(f"batch-1 greedy latency, {n} sentences of test_2016_flickr, repeat {args.repeat}")
    print(f"PyTorch int8: quantize_dynamic on nn.Linear only (FFN + generator; attention "
          f"in_proj/out_proj stay fp32), quantized engine {quantized_engine}")
    print("edgemt latency includes the stdin/stdout pipe round trip (tens of microseconds)")
    with tempfile.TemporaryDirectory(prefix="edgemt-compare-") as tmp:
        src = os.path.join(tmp, "src.en")
        with open(src, "w", encoding="utf-8") as h:
            h.write("".join(l + "\n" for l in sources))
        fp32 = os.path.join(tmp, "model.fp32.emt")
        subprocess.run([sys.executable, os.path.join(REPO_ROOT, "tools", "edgemt-convert"),
                        "--from", "torch", "--checkpoint", paths["checkpoint"], "--config",
                        paths["config"], "--spm", paths["spm"], "--src-lang", "en",
                        "--tgt-lang", "de", "--dtype", "fp32", "-o", fp32],
                       check=True, capture_output=True)
        systems = [("PyTorch eager fp32", lambda t: run_torch("fp32", paths, t, src),
                    paths["checkpoint"]),
                   ("PyTorch dynamic int8", lambda t: run_torch("int8", paths, t, src),
                    paths["checkpoint"]),
                   ("edgemt fp32", lambda t: run_edgemt(args.edgemt, fp32, t, sources), fp32),
                   ("edgemt fp16", lambda t: run_edgemt(args.edgemt, BUNDLED_FP16, t, sources),
                    BUNDLED_FP16),
                   ("edgemt int8", lambda t: run_edgemt(args.edgemt, BUNDLED_INT8, t, sources),
                    BUNDLED_INT8)]
        for threads in args.thread_counts:
            res = {name: [] for name, _, _ in systems}
            for _ in range(args.repeat):          # interleaved: every system once per repetition
                for name, fn, _ in systems:
                    res[name].append(fn(threads))
            print(f"\nthreads {threads}")
            print(f"{'system':22} {'p50 ms':>8} {'p90 ms':>8} {'mean ms':>8} {'RSS MiB':>8} "
                  f"{'file MB':>8} {'BLEU':>6} {'speed-up':>8} {'mem':>6}")
            base = None
            summary = {}
            for name, _, path in systems:
                runs = res[name]
                p50 = statistics.median(_pct(r["times"], .5) for r in runs) * 1e3
                p90 = statistics.median(_pct(r["times"], .9) for r in runs) * 1e3
                mean = statistics.median(statistics.mean(r["times"]) for r in runs) * 1e3
                rss = statistics.median(r["rss"] for r in runs)
                bleu = corpus_bleu(runs[0]["outputs"], refs).score
                base = base or (p50, rss)
                summary[name] = (p50, rss, runs[0]["outputs"])
                print(f"{name:22} {p50:8.2f} {p90:8.2f} {mean:8.2f} {rss:8.1f} "
                      f"{os.path.getsize(path) / 1e6:8.1f} {bleu:6.2f} "
                      f"{base[0] / p50:7.2f}x {rss / base[1]:6.2f}")
            print_against_edgemt_fp32(summary, lower_is_faster=True)
        throughput(args, paths, fp32, tmp, corpus_bleu)
    return 0


def throughput(args, paths, fp32, tmp, corpus_bleu):
    n = args.throughput_sentences
    sources = read_lines(os.path.join(args.shared, "data", "multi30k", "test_2016_flickr.en.gz"))[:n]
    refs = read_lines(os.path.join(args.shared, "data", "multi30k", "test_2016_flickr.de.gz"))[:n]
    src = os.path.join(tmp, "throughput.en")
    empty = os.path.join(tmp, "empty.en")
    out = os.path.join(tmp, "throughput.de")
    with open(src, "w", encoding="utf-8") as h:
        h.write("".join(l + "\n" for l in sources))
    open(empty, "w").close()
    systems = [("PyTorch eager fp32", lambda t: run_torch("fp32", paths, t, src, 32)),
               ("PyTorch dynamic int8", lambda t: run_torch("int8", paths, t, src, 32)),
               ("edgemt fp32", lambda t: run_edgemt_throughput(args.edgemt, fp32, t, src, empty, out)),
               ("edgemt fp16", lambda t: run_edgemt_throughput(args.edgemt, BUNDLED_FP16, t, src,
                                                               empty, out)),
               ("edgemt int8", lambda t: run_edgemt_throughput(args.edgemt, BUNDLED_INT8, t, src,
                                                               empty, out))]
    print(f"\nbatch-32 beam-4 throughput, {n} sentences of test_2016_flickr, repeat {args.repeat}"
          " (edgemt: seconds exclude its load time, shown separately)")
    for threads in args.thread_counts:
        res = {name: [] for name, _ in systems}
        for _ in range(args.repeat):
            for name, fn in systems:
                res[name].append(fn(threads))
        print(f"\nthreads {threads}")
        print(f"{'system':22} {'sent/s':>8} {'load ms':>8} {'RSS MiB':>8} {'BLEU':>6} "
              f"{'speed-up':>8} {'mem':>6}")
        base = None
        summary = {}
        for name, _ in systems:
            runs = res[name]
            seconds = statistics.median(r["seconds"] for r in runs)
            rate = n / seconds
            rss = statistics.median(r["rss"] for r in runs)
            load = statistics.median(r["load"] for r in runs) * 1e3 if "load" in runs[0] else None
            bleu = corpus_bleu(runs[0]["outputs"], refs).score
            base = base or (rate, rss)
            load_text = f"{load:8.1f}" if load is not None else f"{'-':>8}"
            summary[name] = (rate, rss, runs[0]["outputs"])
            print(f"{name:22} {rate:8.2f} {load_text} {rss:8.1f} {bleu:6.2f} "
                  f"{rate / base[0]:7.2f}x {rss / base[1]:6.2f}")
        print_against_edgemt_fp32(summary, lower_is_faster=False)
