#!/usr/bin/env python3
"""edgemt vs CTranslate2, side by side, on one model converted for both.

A benchmark (not a test). Every measurement runs in its own child process
(this script with --child JOBFILE), which imports its engine, reads VmRSS,
loads the model (timed), makes one untimed warm-up call, runs the timed
workload and reports peak RSS (VmHWM). Workloads, each at every --threads
count and --dtypes precision:
  latency     batch-1 greedy: every sentence alone, one call each;
              median and p90 ms per sentence, sentences/s
  throughput  batch-32 beam-4: consecutive chunks of 32 sentences (file
              order unless --sort-by-length), source sentences/s
CTranslate2 runs in several variants (default ISA; CT2_FORCE_CPU_ISA=AVX512
when the CPU has avx512f; at 2+ threads the Translator created inside a
short-lived thread as well); its best per cell is the comparison value.
Rounds repeat every child in interleaved order; a cell's value is the median
over rounds. Ratios are edgemt speed / CTranslate2 speed (>1: edgemt faster).

Models (one checkpoint converted for both engines, cached in --work-dir):
  --torch-checkpoint DIR   edgemt's own nn.Transformer layout (model.pt,
                           config.json, spm.model); CTranslate2 model built
                           by ct2_torch_model.py with its spec API
  --hf-marian DIR          a Hugging Face MarianMT folder; CTranslate2's
                           TransformersConverter (ct2_hf_marian.py). Random
                           weights never end a sentence: every sentence is
                           decoded to --fixed-target-len tokens on both.
"""

import argparse
import hashlib
import json
import os
import platform
import shlex
import statistics
import subprocess
import sys
import tempfile
import threading
import time

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(os.path.dirname(HERE))
WORKLOAD_NAMES = {"latency": "batch-1 greedy latency", "throughput": "batch-32 beam-4 throughput"}


# ---- small helpers --------------------------------------------------------------

def status_mib(field: str) -> float:
    with open("/proc/self/status") as f:
        for line in f:
            if line.startswith(field + ":"):
                return int(line.split()[1]) / 1024.0
    return float("nan")


def log(message: str) -> None:
    print(message, file=sys.stderr, flush=True)


def cpu_info() -> dict:
    info = {"model name": platform.processor() or "?", "cpu family": "?", "flags": ""}
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if ":" not in line:
                    continue
                key, value = (s.strip() for s in line.split(":", 1))
                if key in ("model name", "cpu family", "flags") and key not in info.get("_seen", ()):
                    info[key] = value
                    info.setdefault("_seen", set()).add(key)
    except OSError:
        pass
    info.pop("_seen", None)
    info["nproc"] = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count()
    info["avx512f"] = "avx512f" in info["flags"].split()
    return info


def median(values):
    values = [v for v in values if v is not None]
    return statistics.median(values) if values else None


def percentile(values, q):
    import numpy as np

    return float(np.percentile(np.asarray(values, dtype=float), q)) if values else None


# ---- child: one measurement ------------------------------------------------------

def run_child(job_path: str) -> int:
    with open(job_path) as f:
        job = json.load(f)
    engine = job["engine"]
    if engine == "edgemt":
        sys.path.insert(0, os.path.join(REPO, "runtime", "python"))
        import edgemt  # noqa: F401
    else:
        import ctranslate2  # noqa: F401
    rss_before = status_mib("VmRSS")
    sources = job["sources"]
    threads = job["threads"]
    beam = job["beam"]
    batch = job["batch"]

    t0 = time.perf_counter()
    if engine == "edgemt":
        model = edgemt.Model(job["model"])
        limits = job["edgemt_limits"]
        # CTranslate2 runs with return_scores=False: by default neither engine
        # scores greedy outputs (edgemt then skips most of an f32 output
        # projection, for an int8 copy of it in memory; a beam-search
        # translator has no use for that copy).
        translator = edgemt.Translator(model, threads=threads, max_batch=batch, max_beam=beam,
                                       max_source_len=limits.get("max_source_len"),
                                       max_target_len=limits.get("max_target_len"),
                                       greedy_scores=job["edgemt_greedy_scores"] or beam > 1)
        options = dict(beam_size=beam, length_penalty=job["length_penalty"])
        if job.get("max_len_a") is not None:
            options["max_len_a"] = job["max_len_a"]
        if job.get("max_len_b") is not None:
            options["max_len_b"] = job["max_len_b"]

        def translate(chunk):
            return [t.tokens for t in translator.translate_ids(chunk, **options)]
    else:
        def create():
            return ctranslate2.Translator(job["model"], device="cpu", compute_type="default",
                                          intra_threads=threads, inter_threads=1)

        if job.get("create_in_thread"):
            holder = {}
            creator = threading.Thread(target=lambda: holder.update(t=create()))
            creator.start()
            creator.join()
            translator = holder["t"]
        else:
            translator = create()
        options = dict(beam_size=beam, max_batch_size=0, return_scores=False,
                       length_penalty=job["length_penalty"],
                       max_decoding_length=job["max_decoding_length"])

        def translate(chunk):
            return [r.hypotheses[0] for r in translator.translate_batch(chunk, **options)]
    load_ms = (time.perf_counter() - t0) * 1000.0

    if engine == "probe":  # only the CT2_VERBOSE lines are wanted
        translate(sources[:1])
        print(json.dumps({"load_ms": load_ms}))
        return 0

    chunks = [sources[i:i + batch] for i in range(0, len(sources), batch)]
    translate(chunks[0])  # warm-up, untimed
    outputs, latencies = [], []
    start = time.perf_counter()
    for chunk in chunks:
        t = time.perf_counter()
        outputs.extend(translate(chunk))
        latencies.append((time.perf_counter() - t) * 1000.0)
    seconds = time.perf_counter() - start
    peak = status_mib("VmHWM")
    print(json.dumps({
        "load_ms": load_ms, "rss_before_mib": rss_before, "peak_rss_mib": peak,
        "peak_minus_before_mib": peak - rss_before, "seconds": seconds,
        "latencies_ms": latencies if batch == 1 else [], "outputs": outputs,
        "generated_tokens": sum(len(o) for o in outputs),
    }))
    return 0


# ---- models: converting and caching -------------------------------------------------

def file_stamp(paths):
    h = hashlib.sha1()
    for p in paths:
        st = os.stat(p)
        h.update(f"{os.path.abspath(p)}:{st.st_size}:{st.st_mtime_ns};".encode())
    return h.hexdigest()


def convert_models(args, kind, model_dir, dtypes, edgemt_version, ct2_version):
    """{dtype: (edgemt .emt path, CTranslate2 directory)}, converting what the
    cache in --work-dir lacks (or everything with --reconvert)."""
    model_dir = os.path.abspath(model_dir)
    tag = hashlib.sha1(model_dir.encode()).hexdigest()[:10]
    work = os.path.join(os.path.abspath(args.work_dir), f"{kind}-{os.path.basename(model_dir)}-{tag}")
    os.makedirs(work, exist_ok=True)
    if kind == "torch":
        inputs = [os.path.join(model_dir, n) for n in ("model.pt", "config.json", "spm.model")]
    else:
        inputs = [os.path.join(model_dir, n) for n in sorted(os.listdir(model_dir))
                  if os.path.isfile(os.path.join(model_dir, n))]
    # Both engines' converters: edgemt's own package too, so that a
    # converter change (a new int8 default, say) converts again.
    edgemt_tools = os.path.join(REPO, "tools", "edgemt_tools")
    converter_files = [os.path.join(HERE, "ct2_torch_model.py"), os.path.join(HERE, "ct2_hf_marian.py")]
    converter_files += sorted(os.path.join(folder, name)
                              for folder, _, names in os.walk(edgemt_tools)
                              for name in names if name.endswith(".py"))
    stamp = {"inputs": file_stamp(inputs), "converters": file_stamp(converter_files),
             "edgemt": edgemt_version, "ctranslate2": ct2_version}
    stamp_path = os.path.join(work, "stamp.json")
    old = {}
    if os.path.exists(stamp_path) and not args.reconvert:
        with open(stamp_path) as f:
            old = json.load(f)
    fresh = old.get("stamp") == stamp
    done = set(old.get("done", [])) if fresh else set()
    out = {}
    convert = os.path.join(REPO, "tools", "edgemt-convert")
    for dtype in dtypes:
        emt = os.path.join(work, f"edgemt.{dtype}.emt")
        ct2 = os.path.join(work, f"ct2.{dtype}")
        quant = None if dtype == "fp32" else "int8"
        if f"edgemt.{dtype}" not in done or not os.path.exists(emt):
            log(f"converting for edgemt ({dtype}) -> {emt}")
            if kind == "torch":
                cmd = [sys.executable, convert, "--from", "torch",
                       "--checkpoint", os.path.join(model_dir, "model.pt"),
                       "--config", os.path.join(model_dir, "config.json"),
                       "--spm", os.path.join(model_dir, "spm.model")]
            else:
                cmd = [sys.executable, convert, "--from", "hf-marian", "--checkpoint", model_dir]
            subprocess.run(cmd + ["--dtype", dtype, "-o", emt], check=True, stdout=subprocess.DEVNULL)
            done.add(f"edgemt.{dtype}")
        if f"ct2.{dtype}" not in done or not os.path.exists(os.path.join(ct2, "model.bin")):
            log(f"converting for CTranslate2 ({quant or 'float32'}) -> {ct2}")
            script = "ct2_torch_model.py" if kind == "torch" else "ct2_hf_marian.py"
            cmd = [sys.executable, os.path.join(HERE, script), model_dir, ct2]
            if quant:
                cmd += ["--quantization", quant]
            result = subprocess.run(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
            if result.returncode != 0:
                sys.exit(f"CTranslate2 conversion failed:\n{result.stderr[-3000:]}")
            done.add(f"ct2.{dtype}")
        with open(stamp_path, "w") as f:
            json.dump({"stamp": stamp, "done": sorted(done)}, f)
        out[dtype] = (emt, ct2)
    return out, work


# ---- tokens: one source tokenization for both engines -------------------------------

def load_vocabularies(kind, model_dir):
    """id -> piece for edgemt's source and target ids, and the target
    SentencePiece model for detokenizing."""
    import sentencepiece as spm

    if kind == "torch":
        spm_path = os.path.join(model_dir, "spm.model")
        sp = spm.SentencePieceProcessor(model_file=spm_path)
        pieces = [sp.id_to_piece(i) for i in range(sp.get_piece_size())]
        return pieces, pieces, sp
    with open(os.path.join(model_dir, "vocab.json")) as f:
        vocab = json.load(f)
    pieces = [None] * (max(vocab.values()) + 1)
    for piece, i in vocab.items():
        pieces[i] = piece
    sp = spm.SentencePieceProcessor(model_file=os.path.join(model_dir, "target.spm"))
    return pieces, pieces, sp


def edgemt_source_ids(emt_path, texts):
    """Source ids as the model file's own tokenizer makes them (EOS appended
    when the model wants it), through the C API's edgemt_tokenizer_encode."""
    import ctypes

    sys.path.insert(0, os.path.join(REPO, "runtime", "python"))
    import edgemt

    lib = edgemt._lib
    lib.edgemt_tokenizer_encode.restype = ctypes.c_int
    lib.edgemt_tokenizer_encode.argtypes = [
        ctypes.c_void_p, ctypes.c_char_p, ctypes.c_size_t, ctypes.POINTER(ctypes.c_int32),
        ctypes.c_size_t, ctypes.POINTER(ctypes.c_size_t), ctypes.POINTER(edgemt._Error)]
    model = edgemt.Model(emt_path)
    tokenizer = ctypes.c_void_p()
    error = edgemt._Error()
    # The model's handle is a SharedHandle (runtime/python/edgemt/_handles.py):
    # the C pointer while it is in use.
    with model._handle.use() as pointer:
        edgemt._check(lib.edgemt_tokenizer_create(pointer, ctypes.byref(tokenizer),
                                                  ctypes.byref(error)), error)
    out = []
    try:
        for text in texts:
            data = text.encode("utf-8")
            capacity = 4 * len(data) + 16
            ids = (ctypes.c_int32 * capacity)()
            length = ctypes.c_size_t()
            edgemt._check(lib.edgemt_tokenizer_encode(tokenizer, data, len(data), ids, capacity,
                                                      ctypes.byref(length), ctypes.byref(error)),
                          error)
            out.append(list(ids[:length.value]))
    finally:
        lib.edgemt_tokenizer_free(tokenizer)
    defaults = model.decode_defaults()
    model.close()
    return out, defaults


def ct2_vocabulary(ct2_dir, side):
    for name in (f"{side}_vocabulary.json", "shared_vocabulary.json"):
        path = os.path.join(ct2_dir, name)
        if os.path.exists(path):
            with open(path) as f:
                return json.load(f)
    for name in (f"{side}_vocabulary.txt", "shared_vocabulary.txt"):
        path = os.path.join(ct2_dir, name)
        if os.path.exists(path):
            with open(path, encoding="utf-8") as f:
                return [line.rstrip("\n") for line in f]
    raise FileNotFoundError(f"no {side} vocabulary in {ct2_dir}")


# ---- running children ----------------------------------------------------------------

# The kernel options (--avx2-only, ...), by their argparse names: what each
# engine's children see (an AVX2-only CPU's kernels; those of an AVX2 CPU
# with AVX-VNNI, oneDNN's AVX2_VNNI and oneMKL's AVX2_E1 levels; those of an
# AVX-512 CPU without VNNI, oneDNN's AVX512_CORE and oneMKL's AVX512), the
# /proc/cpuinfo flag the option needs and its name there, and what the
# report's header calls the run.
KERNEL_MODES = {
    "avx2_only": ({"EDGEMT_CPU_FEATURES": "avx2", "CT2_FORCE_CPU_ISA": "AVX2",
                   "ONEDNN_MAX_CPU_ISA": "AVX2", "MKL_ENABLE_INSTRUCTIONS": "AVX2"},
                  None, "AVX2-only: --avx2-only"),
    "avx_vnni_only": ({"EDGEMT_CPU_FEATURES": "avx-vnni", "CT2_FORCE_CPU_ISA": "AVX2",
                       "ONEDNN_MAX_CPU_ISA": "AVX2_VNNI", "MKL_ENABLE_INSTRUCTIONS": "AVX2_E1"},
                      ("avx_vnni", "AVX-VNNI"), "AVX2 + AVX-VNNI: --avx-vnni-only"),
    "avx512bw_only": ({"EDGEMT_CPU_FEATURES": "avx512bw", "CT2_FORCE_CPU_ISA": "AVX512",
                       "ONEDNN_MAX_CPU_ISA": "AVX512_CORE", "MKL_ENABLE_INSTRUCTIONS": "AVX512"},
                      ("avx512bw", "AVX-512 BW"), "AVX-512 without VNNI: --avx512bw-only"),
}
forced_env = {}


def run_job(job, env_extra, job_dir):
    fd, path = tempfile.mkstemp(prefix="job-", suffix=".json", dir=job_dir)
    with os.fdopen(fd, "w") as f:
        json.dump(job, f)
    env = dict(os.environ)
    env.pop("CT2_FORCE_CPU_ISA", None)
    env.pop("CT2_VERBOSE", None)
    env.update(forced_env)
    env.update(env_extra)
    try:
        result = subprocess.run([sys.executable, os.path.abspath(__file__), "--child", path],
                                env=env, capture_output=True, text=True)
    finally:
        os.unlink(path)
    if result.returncode != 0:
        raise RuntimeError(f"child failed ({job['engine']} {job.get('variant')} {job.get('dtype')} "
                           f"{job.get('workload')} t{job.get('threads')}):\n{result.stderr[-3000:]}")
    lines = [line for line in result.stdout.splitlines() if line.startswith("{")]
    return json.loads(lines[-1]), result.stderr


def ct2_variants(threads, avx512, wanted):
    variants = [("default", {}, False)]
    if avx512:
        variants.append(("avx512", {"CT2_FORCE_CPU_ISA": "AVX512"}, False))
    if threads >= 2:
        variants += [(name + "+thread", env, True) for name, env, _ in list(variants)]
    return [v for v in variants if wanted is None or v[0] in wanted]


# ---- report helpers ---------------------------------------------------------------------

def speed_of(cell):
    """Higher is faster: sentences/s for throughput, 1/median latency for latency."""
    if cell is None:
        return None
    if cell["workload"] == "latency":
        return 1000.0 / cell["median_ms"] if cell["median_ms"] else None
    return cell["sentences_per_s"]


def aggregate(runs, workload):
    """Median over rounds of one (engine, variant, dtype, workload, threads)."""
    out = {"workload": workload, "rounds": len(runs)}
    n = len(runs[0]["outputs"])
    out["sentences"] = n
    out["sentences_per_s"] = median([n / r["seconds"] for r in runs])
    out["tokens_per_s"] = median([r["counted_tokens"] / r["seconds"] for r in runs])
    if workload == "latency":
        out["median_ms"] = median([statistics.median(r["latencies_ms"]) for r in runs])
        out["p90_ms"] = median([percentile(r["latencies_ms"], 90) for r in runs])
    for key in ("load_ms", "rss_before_mib", "peak_rss_mib", "peak_minus_before_mib"):
        out[key] = median([r[key] for r in runs])
    out["outputs"] = runs[0]["outputs"]
    out["outputs_stable"] = all(r["outputs"] == runs[0]["outputs"] for r in runs)
    return out


# ---- main -----------------------------------------------------------------------------------

def parse_args(argv):
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--child", help=argparse.SUPPRESS)
    kind = parser.add_mutually_exclusive_group()
    kind.add_argument("--torch-checkpoint", metavar="DIR",
                      help="edgemt's nn.Transformer layout (default: "
                           "<repo>/../shared/models/multi30k-en-de)")
    kind.add_argument("--hf-marian", metavar="DIR", help="a Hugging Face MarianMT folder")
    parser.add_argument("--edgemt-build", metavar="DIR", default=os.path.join(REPO, "build"),
                        help="edgemt build folder holding runtime/libedgemt.so.0 (default <repo>/build)")
    parser.add_argument("--input", default=os.path.join(REPO, "models", "reference",
                                                        "test_2016_flickr.en"))
    parser.add_argument("--reference", default=os.path.join(REPO, "models", "reference",
                                                            "test_2016_flickr.de"),
                        help="reference translations for BLEU (used when the file exists)")
    parser.add_argument("--sentences", type=int, default=500, help="for latency (default 500)")
    parser.add_argument("--throughput-sentences", type=int, default=320,
                        help="for throughput (default 320)")
    parser.add_argument("--rounds", type=int, default=3, help="default 3; medians per cell")
    parser.add_argument("--threads", default="1,2")
    parser.add_argument("--dtypes", default="fp32,int8")
    parser.add_argument("--workloads", default="latency,throughput")
    kernels = parser.add_mutually_exclusive_group()
    kernels.add_argument("--avx2-only", action="store_true",
                        help="run both engines as on a CPU with AVX2 but no AVX-512 (AMD family "
                             "25 before Zen 4, say): edgemt with EDGEMT_CPU_FEATURES=avx2, "
                             "CTranslate2 with CT2_FORCE_CPU_ISA=AVX2 and its libraries capped "
                             "(ONEDNN_MAX_CPU_ISA, MKL_ENABLE_INSTRUCTIONS); no avx512 variants")
    kernels.add_argument("--avx-vnni-only", action="store_true",
                        help="run both engines as on a CPU with AVX2 and AVX-VNNI but no AVX-512 "
                             "(Intel Core from Alder Lake on): as --avx2-only, with "
                             "EDGEMT_CPU_FEATURES=avx-vnni and the libraries capped at AVX2_VNNI "
                             "(oneDNN) and AVX2_E1 (oneMKL); needs a CPU with avx_vnni")
    kernels.add_argument("--avx512bw-only", action="store_true",
                        help="run both engines as on a CPU with AVX-512 but no VNNI (Intel "
                             "Skylake-SP/X Xeons): edgemt with EDGEMT_CPU_FEATURES=avx512bw, "
                             "CTranslate2 with CT2_FORCE_CPU_ISA=AVX512 and its libraries "
                             "capped at AVX512_CORE (oneDNN) and AVX512 (oneMKL); needs a CPU "
                             "with avx512bw")
    parser.add_argument("--ct2-variants", default=None,
                        help="subset of default,avx512,default+thread,avx512+thread (default: all "
                             "that apply)")
    parser.add_argument("--fixed-target-len", type=int, default=32,
                        help="hf-marian: tokens decoded per sentence on both engines (default 32)")
    parser.add_argument("--sort-by-length", action="store_true",
                        help="throughput: both engines get the same chunks of length-sorted sentences")
    parser.add_argument("--edgemt-limits", choices=["default", "tight"], default="default",
                        help="edgemt Translator limits: the Python module's defaults (sources and "
                             "targets up to 256 tokens or the model's longest) or the smallest that "
                             "fit the workload's sentences (outputs unchanged; smaller arena)")
    parser.add_argument("--work-dir", default="/tmp/edgemt-compare-ctranslate2",
                        help="converted models are cached here (default %(default)s)")
    parser.add_argument("--edgemt-greedy-scores", choices=["off", "on"], default="off",
                        help="edgemt's greedy runs score their outputs (on) or not (off, the "
                             "default, as CTranslate2 here: return_scores=False; an f32 model "
                             "then keeps an int8 copy of its output projection)")
    parser.add_argument("--reconvert", action="store_true", help="convert again even if cached")
    parser.add_argument("--json", metavar="FILE", help="save everything to FILE")
    args = parser.parse_args(argv)
    return args


def main(argv=None):
    args = parse_args(argv if argv is not None else sys.argv[1:])
    if args.child:
        return run_child(args.child)
    global forced_env
    mode = next((name for name in KERNEL_MODES if getattr(args, name)), None)
    if mode is not None:
        forced_env, needed, _ = KERNEL_MODES[mode]
        if needed is not None and needed[0] not in cpu_info()["flags"].split():
            option = "--" + mode.replace("_", "-")
            raise SystemExit(f"compare.py: {option} needs a CPU with {needed[1]} "
                             f"({needed[0]} in /proc/cpuinfo); this one has none")

    started = time.time()
    load_at_start = os.getloadavg()
    kind = "hf-marian" if args.hf_marian else "torch"
    model_dir = os.path.abspath(args.hf_marian or args.torch_checkpoint or os.path.join(
        os.path.dirname(REPO), "shared", "models", "multi30k-en-de"))
    if not os.path.exists(os.path.join(model_dir, "config.json")):
        sys.exit(f"{model_dir}: not a model folder (no config.json)")
    library = os.path.join(os.path.abspath(args.edgemt_build), "runtime", "libedgemt.so.0")
    if not os.path.exists(library):
        sys.exit(f"{library} not found: build edgemt (cmake --build BUILD --target edgemt_shared) "
                 f"or pass --edgemt-build")
    os.environ["EDGEMT_LIBRARY"] = library
    threads_list = [int(t) for t in args.threads.split(",") if t]
    dtypes = [d for d in args.dtypes.split(",") if d]
    workloads = [w for w in args.workloads.split(",") if w]
    for d in dtypes:
        if d not in ("fp32", "int8"):
            sys.exit(f"--dtypes: {d} is not fp32 or int8")
    for w in workloads:
        if w not in WORKLOAD_NAMES:
            sys.exit(f"--workloads: {w} is not latency or throughput")
    wanted_variants = set(args.ct2_variants.split(",")) if args.ct2_variants else None

    import ctranslate2
    sys.path.insert(0, os.path.join(REPO, "runtime", "python"))
    import edgemt

    cpu = cpu_info()
    edgemt_version = edgemt.version()
    models, work = convert_models(args, kind, model_dir, dtypes, edgemt_version,
                                  ctranslate2.__version__)

    # Sentences and their tokens (the same tokens for both engines).
    with open(args.input, encoding="utf-8") as f:
        lines = [line.rstrip("\n") for line in f]
    n_lat = min(args.sentences, len(lines))
    n_thr = min(args.throughput_sentences, len(lines))
    texts = lines[:max(n_lat if "latency" in workloads else 0,
                       n_thr if "throughput" in workloads else 0)]
    source_pieces_table, target_pieces, target_sp = load_vocabularies(kind, model_dir)
    any_emt, any_ct2 = models[dtypes[0]]
    source_ids, edgemt_defaults = edgemt_source_ids(any_emt, texts)
    source_pieces = [[source_pieces_table[i] for i in ids] for ids in source_ids]
    ct2_source_vocab = ct2_vocabulary(any_ct2, "source")
    ct2_index = {p: i for i, p in enumerate(ct2_source_vocab)}
    mismatched = sum(1 for ids, ps in zip(source_ids, source_pieces)
                     if any(ct2_index.get(p) != i for i, p in zip(ids, ps)))
    if mismatched:
        sys.exit(f"{mismatched} sentences have source pieces whose CTranslate2 id is not edgemt's id")
    ct2_target_vocab = ct2_vocabulary(any_ct2, "target")
    if any(ct2_target_vocab[i] != target_pieces[i] for i in range(len(ct2_target_vocab))):
        sys.exit("CTranslate2's target vocabulary is not edgemt's id order")
    references = None
    if kind == "torch" and args.reference and os.path.exists(args.reference):
        with open(args.reference, encoding="utf-8") as f:
            references = [line.rstrip("\n") for line in f]

    # Decoding options, the same rules for both engines.
    L = args.fixed_target_len
    longest_allowed = 256
    if kind == "torch":
        # One length rule for both: CTranslate2's max_decoding_length is a
        # number of tokens per batch, edgemt's floor(a * source + b) per
        # sentence; a = 0, b = 256 is the same limit (edgemt's own default,
        # floor(2 * source + 10), would stop degenerate repetitions earlier).
        edgemt_len = dict(max_len_a=0.0, max_len_b=256.0)
        len_a, len_b = 0.0, 256.0
        ct2_max = 256
        length_note = ("max length 256 generated tokens on both: edgemt max_len_a=0 max_len_b=256, "
                       "CTranslate2 max_decoding_length=256")
    else:
        edgemt_len = dict(max_len_a=0.0, max_len_b=float(L))
        len_a, len_b = 0.0, float(L)
        ct2_max = L
        length_note = (f"fixed length {L}: edgemt max_len_a=0 max_len_b={L} (its Hugging Face rules "
                       f"force </s> on the last step: {L - 1} tokens + </s>), CTranslate2 "
                       f"max_decoding_length={L} ({L} tokens); both run {L} decoder steps per "
                       f"sentence, counted as {L} generated tokens each")

    def sentence_max_len(ids, limit):
        import math
        wanted = math.floor(len_a * len(ids) + len_b)
        return max(1, min(limit, wanted))

    workload_sets = {}
    for w in workloads:
        n = n_lat if w == "latency" else n_thr
        order = list(range(n))
        if w == "throughput" and args.sort_by_length:
            order.sort(key=lambda i: len(source_ids[i]))
        beam, batch = (1, 1) if w == "latency" else (4, 32)
        ids = [source_ids[i] for i in order]
        limits = {}
        if args.edgemt_limits == "tight":
            limits["max_source_len"] = max(len(s) for s in ids)
            limits["max_target_len"] = max(sentence_max_len(s, longest_allowed) for s in ids)
        workload_sets[w] = dict(order=order, beam=beam, batch=batch, ids=ids,
                                pieces=[source_pieces[i] for i in order], limits=limits)

    # CT2's chosen CPU/ISA/backend, per ISA variant (CT2_VERBOSE=1, once each).
    job_dir = tempfile.mkdtemp(prefix="jobs-", dir=work)
    ct2_lines = {}
    if forced_env:
        cpu["avx512f"] = False  # no avx512 variants, and the header says so
    isa_variants = [("default", {})] + ([("avx512", {"CT2_FORCE_CPU_ISA": "AVX512"})]
                                        if cpu["avx512f"] else [])
    for name, env in isa_variants:
        probe = {"engine": "probe", "model": any_ct2, "threads": 1, "beam": 1, "batch": 1,
                 "sources": [source_pieces[0]], "length_penalty": 1.0,
                 "max_decoding_length": ct2_max}
        _, stderr = run_job(probe, dict(env, CT2_VERBOSE="1"), job_dir)
        ct2_lines[name] = [line.split("] ", 3)[-1] if "[ctranslate2]" in line else line
                           for line in stderr.splitlines()
                           if "[ctranslate2]" in line and any(
                               k in line for k in ("CPU", "ISA", "backend", "MKL", "compute type"))]

    # Header.
    header = []
    header.append(f"machine: {cpu['model name']}, cpu family {cpu['cpu family']}, nproc {cpu['nproc']}"
                  f"{', avx512f' if cpu['avx512f'] else ''}"
                  f"{f' (run as {KERNEL_MODES[mode][2]})' if mode else ''}")
    git = subprocess.run(["git", "-C", REPO, "rev-parse", "--short", "HEAD"], capture_output=True,
                         text=True).stdout.strip()
    header.append(f"edgemt {edgemt_version} ({library}, repo {git or '?'}); ctranslate2 "
                  f"{ctranslate2.__version__}; python {platform.python_version()}")
    for name, lines_ in ct2_lines.items():
        header.append(f"CTranslate2 ISA variant '{name}':")
        header += [f"    {line}" for line in lines_]
    header.append("command: " + " ".join(shlex.quote(a) for a in sys.argv))
    header.append(f"model: {kind} {model_dir} (converted into {work})")
    header.append(f"sentences: {args.input}: latency first {n_lat}, throughput first {n_thr}"
                  f"{' (sorted by source length into chunks)' if args.sort_by_length else ' (file order)'}")
    header.append(f"decoding: length penalty 1 on both; {length_note}")
    header.append(f"edgemt translator limits: {args.edgemt_limits}"
                  + ("" if args.edgemt_limits == "default" else " " + json.dumps(
                      {w: s["limits"] for w, s in workload_sets.items()})))
    header.append(f"edgemt greedy scores: {args.edgemt_greedy_scores}")
    header.append(f"CTranslate2: compute_type=default, inter_threads=1, max_batch_size=0; rounds "
                  f"{args.rounds}, medians per cell")
    header.append("load average at start (1, 5, 15 min): " + ", ".join(f"{x:.2f}" for x in load_at_start)
                  + ("  WARNING: other processes use the CPUs; timings (2 threads especially) "
                     "will be noisy" if load_at_start[0] >= 0.5 else ""))
    print("\n".join(header), flush=True)

    # Jobs, interleaved per round.
    cells = []  # (workload, threads, dtype)
    for w in workloads:
        for t in threads_list:
            for d in dtypes:
                cells.append((w, t, d))
    plan = []
    for w, t, d in cells:
        emt, ct2 = models[d]
        s = workload_sets[w]
        common = dict(workload=w, threads=t, dtype=d, beam=s["beam"], batch=s["batch"],
                      length_penalty=1.0)
        plan.append(("edgemt", "edgemt", dict(common, engine="edgemt", model=emt, sources=s["ids"],
                                              edgemt_limits=s["limits"],
                                              edgemt_greedy_scores=args.edgemt_greedy_scores == "on",
                                              **edgemt_len), {}))
        for name, env, in_thread in ct2_variants(t, cpu["avx512f"], wanted_variants):
            plan.append(("ct2", name, dict(common, engine="ct2", variant=name, model=ct2,
                                           sources=s["pieces"], create_in_thread=in_thread,
                                           max_decoding_length=ct2_max), env))
    runs = {}
    total = len(plan) * args.rounds
    k = 0
    for r in range(args.rounds):
        for engine, variant, job, env in plan:
            k += 1
            key = (job["workload"], job["threads"], job["dtype"], engine, variant)
            load_before = os.getloadavg()[0]
            result, _ = run_job(job, env, job_dir)
            result["loadavg_before"] = load_before
            s = workload_sets[job["workload"]]
            # Outputs back to file order, as pieces, with the tokens counted.
            outputs = [None] * len(result["outputs"])
            counted = 0
            for pos, out in enumerate(result["outputs"]):
                if engine == "edgemt":
                    out = [target_pieces[i] for i in out]
                    limit = s["limits"].get("max_target_len", longest_allowed)
                    cap = sentence_max_len(s["ids"][pos], limit)
                else:
                    cap = ct2_max
                counted += len(out) if len(out) >= cap else len(out) + 1  # + the </s> step
                outputs[s["order"][pos]] = out
            result["outputs"] = outputs
            result["counted_tokens"] = counted
            runs.setdefault(key, []).append(result)
            speed = (f"median {statistics.median(result['latencies_ms']):.2f} ms"
                     if job["workload"] == "latency" else
                     f"{len(outputs) / result['seconds']:.1f} sent/s")
            log(f"[{k}/{total}] round {r + 1} {engine} {variant} {job['dtype']} {job['workload']} "
                f"t{job['threads']}: {speed}, peak +{result['peak_minus_before_mib']:.1f} MiB")
    os.rmdir(job_dir)

    # Aggregates.
    agg = {key: aggregate(v, key[0]) for key, v in runs.items()}

    def detok(pieces_list):
        return [target_sp.decode_pieces(p) for p in pieces_list]

    def same(e, c):
        if kind == "torch":
            return e == c
        # hf-marian: edgemt's last step is a forced </s>: L-1 tokens vs CT2's L.
        if len(c) == L and len(e) == L - 1:
            return e == c[:L - 1]
        return e == c

    def equal_counts(e_out, c_out):
        if kind == "torch":
            return None
        return sum(1 for e, c in zip(e_out, c_out) if len(e) + 1 == len(c) == L)

    import sacrebleu

    def bleu(hyps, refs):
        return sacrebleu.corpus_bleu(detok(hyps), [detok(refs)]).score

    def bleu_ref(hyps):
        return sacrebleu.corpus_bleu(detok(hyps), [references[:len(hyps)]]).score

    table_rows = []
    details = []
    summary = {"throughput_ratio": [], "latency_ratio": [], "fp32_identical": [], "int8_bleu": [],
               "peak_rss": []}
    report_cells = []
    for w, t, d in cells:
        e = agg[(w, t, d, "edgemt", "edgemt")]
        variants = {key[4]: a for key, a in agg.items() if key[:4] == (w, t, d, "ct2")}
        best_name = max(variants, key=lambda n: speed_of(variants[n]) or 0)
        best = variants[best_name]
        ratio = speed_of(e) / speed_of(best)
        cell = {"workload": w, "threads": t, "dtype": d, "edgemt": e, "ct2": variants,
                "ct2_best": best_name, "ratio": ratio}
        lines_ = [f"{WORKLOAD_NAMES[w]}, {t} thread{'s' if t > 1 else ''}, {d} "
                  f"({e['sentences']} sentences):"]

        def speed_text(a):
            if w == "latency":
                text = (f"median {a['median_ms']:.2f} ms, p90 {a['p90_ms']:.2f} ms, "
                        f"{a['sentences_per_s']:.1f} sent/s")
            else:
                text = f"{a['sentences_per_s']:.1f} sent/s"
            return (text + f", {a['tokens_per_s']:.0f} tok/s; load {a['load_ms']:.0f} ms; peak RSS "
                    f"+{a['peak_minus_before_mib']:.1f} MiB (raw {a['peak_rss_mib']:.1f}, before "
                    f"{a['rss_before_mib']:.1f})")
        lines_.append(f"  {'edgemt':<19} {speed_text(e)}")
        for name, a in variants.items():
            mark = "  <- best" if name == best_name else ""
            lines_.append(f"  {'CT2 ' + name:<19} {speed_text(a)}{mark}")
        lines_.append(f"  ratio (edgemt / CT2 {best_name}): {ratio:.2f}x")
        # Outputs.
        c_out = best["outputs"]
        identical = sum(1 for a_, b_ in zip(e["outputs"], c_out) if same(a_, b_))
        cell["identical"] = identical
        # Differences where edgemt stopped at its max length (floor(a*src+b))
        # while CTranslate2 (max_decoding_length) went on.
        limit = workload_sets[w]["limits"].get("max_target_len", longest_allowed)
        cut = sum(1 for i, (a_, b_) in enumerate(zip(e["outputs"], c_out))
                  if not same(a_, b_) and kind == "torch"
                  and len(a_) >= sentence_max_len(source_ids[i], limit) and len(b_) > len(a_))
        cell["differ_by_max_length"] = cut
        variants_agree = all(v["outputs"] == c_out for v in variants.values())
        stable = e["outputs_stable"] and all(v["outputs_stable"] for v in variants.values())
        agreement = (f"  outputs: identical tokens {identical}/{len(c_out)} (edgemt vs CT2 {best_name}"
                     f"{'' if kind == 'torch' else f': its {L - 1} tokens vs CT2 first {L - 1}'})"
                     f"{'' if variants_agree else '; CT2 variants differ among themselves'}"
                     f"{'' if stable else '; outputs changed between rounds'}")
        if cut:
            agreement += (f"; {cut} more where edgemt stopped at its max length and CT2 went on")
        counts = equal_counts(e["outputs"], c_out)
        if counts is not None:
            cell["equal_token_counts"] = counts
            agreement += f"; {counts}/{len(c_out)} sentences with {L} generated tokens on both"
        lines_.append(agreement)
        if d == "fp32":
            summary["fp32_identical"].append((w, t, identical, cut, len(c_out)))
        if d == "int8":
            e32 = agg.get((w, t, "fp32", "edgemt", "edgemt"))
            c32_variants = {key[4]: a for key, a in agg.items() if key[:4] == (w, t, "fp32", "ct2")}
            c32 = (c32_variants[max(c32_variants, key=lambda n: speed_of(c32_variants[n]) or 0)]
                   if c32_variants else None)
            parts = []
            if references is not None:
                be, bc = bleu_ref(e["outputs"]), bleu_ref(c_out)
                cell.update(bleu_edgemt=be, bleu_ct2=bc, bleu_delta=be - bc)
                parts.append(f"BLEU vs reference: edgemt {be:.2f}, CT2 {bc:.2f}, delta {be - bc:+.2f}")
                summary["int8_bleu"].append((w, t, be, bc))
            else:
                parts.append("BLEU vs reference: n/a"
                             + (" (random weights)" if kind == "hf-marian" else " (no reference file)"))
            if e32 is not None and c32 is not None:
                n_e = sum(1 for a_, b_ in zip(e["outputs"], e32["outputs"]) if a_ == b_)
                n_c = sum(1 for a_, b_ in zip(c_out, c32["outputs"]) if a_ == b_)
                cell.update(identical_edgemt_vs_fp32=n_e, identical_ct2_vs_fp32=n_c)
                text = f"int8 vs own fp32: identical edgemt {n_e}/{len(c_out)}, CT2 {n_c}/{len(c_out)}"
                if kind == "torch":
                    s_e, s_c = bleu(e["outputs"], e32["outputs"]), bleu(c_out, c32["outputs"])
                    cell.update(bleu_edgemt_vs_fp32=s_e, bleu_ct2_vs_fp32=s_c)
                    text += f"; BLEU edgemt {s_e:.2f}, CT2 {s_c:.2f}, delta {s_e - s_c:+.2f}"
                parts.append(text)
            lines_.append("  int8 " + "; ".join(parts))
        ct2_min_rss = min(v["peak_minus_before_mib"] for v in variants.values())
        rss_ok = e["peak_minus_before_mib"] < ct2_min_rss
        summary["peak_rss"].append((w, t, d, e["peak_minus_before_mib"], ct2_min_rss))
        lines_.append(f"  peak RSS minus before-load: edgemt {e['peak_minus_before_mib']:.1f} MiB vs "
                      f"CT2 {ct2_min_rss:.1f} MiB (its smallest variant){'' if rss_ok else '  (edgemt not below)'}")
        lines_.append(f"  load: edgemt {e['load_ms']:.0f} ms, CT2 " + ", ".join(
            f"{n} {a['load_ms']:.0f} ms" for n, a in variants.items()))
        summary["throughput_ratio" if w == "throughput" else "latency_ratio"].append((t, d, ratio))
        details.append("\n".join(lines_))
        report_cells.append(cell)

    print()
    print("speed ratio = edgemt speed / CTranslate2 speed (>1: edgemt faster), CTranslate2's best "
          "variant per cell;")
    print("latency: ratio of median ms per sentence; throughput: ratio of source sentences/s")
    print()
    by_row = {}
    for cell in report_cells:
        by_row.setdefault((cell["workload"], cell["threads"]), {})[cell["dtype"]] = cell
    col = {d: max(len(d), 22) for d in dtypes}
    head = f"| {'workload':<27} | threads | " + " | ".join(f"{d:<{col[d]}}" for d in dtypes) + " |"
    print(head)
    print("|" + "-" * 29 + "|---------|" + "|".join("-" * (col[d] + 2) for d in dtypes) + "|")
    for (w, t), row in by_row.items():
        vals = []
        for d in dtypes:
            c = row.get(d)
            vals.append(f"{c['ratio']:.2f}x ({c['ct2_best']})" if c else "")
        print(f"| {WORKLOAD_NAMES[w]:<27} | {t:<7} | " + " | ".join(
            f"{v:<{col[d]}}" for v, d in zip(vals, dtypes)) + " |")
    print()
    print("\n\n".join(details))

    # PASS/FAIL.
    print()
    print("targets:")
    lat_target = 3.0 if kind == "torch" else 1.0
    thr_target = 1.3 if kind == "torch" else 1.0
    verdicts = []

    def verdict(name, ok, text):
        verdicts.append({"target": name, "pass": ok, "detail": text})
        print(f"  {'PASS' if ok else 'FAIL' if ok is not None else 'n/a '}  {name}: {text}")

    if summary["throughput_ratio"]:
        worst = min(r for _, _, r in summary["throughput_ratio"])
        verdict(f"throughput ratio >= {thr_target}", worst >= thr_target,
                ", ".join(f"t{t} {d} {r:.2f}x" for t, d, r in summary["throughput_ratio"]))
    if summary["latency_ratio"]:
        worst = min(r for _, _, r in summary["latency_ratio"])
        verdict(f"batch-1 latency ratio >= {lat_target}", worst >= lat_target,
                ", ".join(f"t{t} {d} {r:.2f}x" for t, d, r in summary["latency_ratio"]))
    if summary["fp32_identical"]:
        ok = all(i + c_ == n for _, _, i, c_, n in summary["fp32_identical"])
        verdict("fp32 outputs identical (apart from edgemt's max-length stops)", ok, ", ".join(
            f"{w} t{t} {i}/{n}" + (f" (+{c_} max-length)" if c_ else "")
            for w, t, i, c_, n in summary["fp32_identical"]))
    if summary["int8_bleu"]:
        ok = all(be >= bc - 0.5 for _, _, be, bc in summary["int8_bleu"])
        verdict("int8 BLEU within 0.5 of CT2 int8 (edgemt >= CT2 - 0.5)", ok, ", ".join(
            f"{w} t{t} {be:.2f} vs {bc:.2f}" for w, t, be, bc in summary["int8_bleu"]))
    elif "int8" in dtypes:
        verdict("int8 BLEU within 0.5 of CT2 int8", None,
                "no BLEU" + (" (random weights)" if kind == "hf-marian" else " (no reference)"))
    if summary["peak_rss"]:
        ok = all(e_ < c_ for _, _, _, e_, c_ in summary["peak_rss"])
        verdict("peak RSS (minus before-load) below CT2's in every cell", ok, ", ".join(
            f"{w} t{t} {d} {e_:.1f} vs {c_:.1f} MiB" for w, t, d, e_, c_ in summary["peak_rss"]))
    elapsed = time.time() - started
    loads = [r["loadavg_before"] for v in runs.values() for r in v]
    print(f"\n{total} measurements in {elapsed:.0f} s; 1-min load average before each: median "
          f"{statistics.median(loads):.2f}, max {max(loads):.2f} (one busy child adds up to its "
          f"thread count; more means other processes competed)")

    if args.json:
        data = {
            "args": vars(args), "argv": sys.argv, "kind": kind, "model_dir": model_dir,
            "work_dir": work, "machine": {k: v for k, v in cpu.items() if k != "flags"},
            "versions": {"edgemt": edgemt_version, "edgemt_library": library, "repo": git,
                         "ctranslate2": ctranslate2.__version__,
                         "python": platform.python_version()},
            "ct2_verbose": ct2_lines, "header": header,
            "cells": report_cells,
            "runs": [{"workload": k_[0], "threads": k_[1], "dtype": k_[2], "engine": k_[3],
                      "variant": k_[4],
                      "rounds": [{x: y for x, y in r.items() if x != "outputs"} for r in v]}
                     for k_, v in runs.items()],
            "targets": verdicts, "seconds": elapsed,
        }
        with open(args.json, "w") as f:
            json.dump(data, f, indent=1)
        print(f"saved {args.json}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
