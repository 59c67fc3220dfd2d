"""`edgemt-quant-study`: what static activation scales would cost in quality.

edgemt's int8 scheme (Int8PerRowDynamic, quantize.py) quantizes every input
row of a projection at run time with its own scale. Debian's XNNPACK (2022)
only has static activation scales: `fully_connected_nc_qs8` (per-tensor
weights) or `convolution2d_nhwc_qc8` 1x1 (per-output-channel weights), both
with an input scale fixed at operator creation and an int8 output requantized
with an output scale also fixed at creation. This study greedy-decodes the
first N sentences of a test set with the PyTorch reference under each scheme
and reports BLEU and how many outputs stay identical to fp32:

  fp32          the reference itself (sanity: must equal the committed
                models/reference/torch_fp32_greedy.de on those lines);
  dynamic       int8 per-row weights, each input row quantized with its own
                scale max|row|/64 (the shipped scheme, codes in [-64, 64];
                max|row|/127 before issue 17; TorchReference "int8");
  static        int8 per-row weights, every projection input quantized with ONE
                calibrated scale per projection (symmetric, max|x|/127 over the
                calibration data, clipped to that range at run time), float32
                output: what a qc8 1x1 convolution computes for the product;
  static-out    as static, and every projection's output requantized to int8
                with a static per-tensor scale (max|y|/127, clipped), which is
                what XNNPACK's qs8/qc8 operators actually return (one scale
                for a packed self-attention q,k,v output, as one operator has);
  static-out-f32-logits
                as static-out except the generator (output projection): its
                logits stay float32 (isolates the cost of int8 logits);
  static-pXX    as static with scale = the XX-th percentile of |x| (default
                99.99) instead of the max: the usual remedy for outliers.

All static scales are symmetric (zero point 0), like the weights; XNNPACK
would also accept an input zero point, which could win one bit on the
non-negative (ReLU) inputs of the FFN output projections.

Opt-in (only when named in --schemes), for diagnosis:
  static-out-f32-ffn-out
                as static-out except the FFN output projections (linear2),
                whose outputs stay float32 (isolates the cost of requantizing
                the outputs with the largest range, see --show-scales).

Calibration runs the fp32 model on the first M lines of a held-out set (by
default Multi30k val, never the test sentences) and records, per projection,
max|input|, max|output| and the top of the |input| distribution (for the
percentile). Default mode "teacher": one forward pass per pair with the
reference German translation as decoder input (teacher forcing). It is cheap
(one decoder pass per sentence instead of one per generated token), covers
every decoder position exactly once (so the percentile is not skewed towards
early positions, which greedy decoding recomputes at every step), and does not
depend on the model's own output. Mode "greedy" records the activations of fp32
greedy decoding instead (the distribution the model sees at test time).

Projections are identified by the weight they multiply (data pointer and shape
of the tensor F.linear receives) and named by module, e.g.
`decoder.layers.0.multihead_attn.in_proj[kv]`, so scales calibrated on the fp32
model apply to the same projection of the int8 model. All fake quantization
runs through torch_reference.int8_projections(), which routes every F.linear
call (PyTorch's fused fast paths disabled) through a projection function.
"""

import argparse
import math
import os
import sys
import time
from dataclasses import dataclass, field
from typing import Callable, Dict, List, Optional, Sequence, Tuple

import numpy as np

from edgemt_tools.bleu import corpus_bleu
from edgemt_tools.errors import UserError
from edgemt_tools.quantize import QMAX, fake_quantize_activation_rows
from edgemt_tools.textio import read_lines
from research.study_cli import REPO_ROOT, StudyParser, add_model_arguments, model_paths

PROG = "edgemt-quant-study"
DEFAULT_FP32_REFERENCE = os.path.join(REPO_ROOT, "models", "reference", "torch_fp32_greedy.de")
DEFAULT_PERCENTILE = 99.99
TOP_K = 8192  # largest |x| kept per projection input: exact percentiles up to n*(1-p) < TOP_K

# Scheme key -> description (table order).
FP32, DYNAMIC, STATIC, STATIC_OUT, STATIC_OUT_F32_LOGITS = (
    "fp32", "dynamic", "static", "static-out", "static-out-f32-logits")
STATIC_OUT_F32_FFN_OUT = "static-out-f32-ffn-out"  # opt-in diagnosis
PERCENTILE_PREFIX = "static-p"


def scheme_descriptions(percentile: float = DEFAULT_PERCENTILE) -> Dict[str, str]:
    return {
        FP32: "fp32 (PyTorch reference)",
        DYNAMIC: "int8 w/row, act dynamic per-row (shipped)",
        STATIC: "int8 w/row, act static per-tensor (max), f32 out",
        STATIC_OUT: "as static + int8 outputs, static scale (max)",
        STATIC_OUT_F32_LOGITS: "as static-out, logits left f32",
        percentile_scheme(percentile): f"as static, act scale = p{percentile:g} of |x|",
        STATIC_OUT_F32_FFN_OUT: "as static-out, FFN-out outputs left f32",
    }


def default_schemes(percentile: float = DEFAULT_PERCENTILE) -> List[str]:
    """The schemes a run without --schemes compares (the opt-in ones excluded)."""
    return [s for s in scheme_descriptions(percentile) if s != STATIC_OUT_F32_FFN_OUT]


def percentile_scheme(percentile: float) -> str:
    return f"{PERCENTILE_PREFIX}{percentile:g}"


# ---------------------------------------------------------------- fake quantization
def quantize_static(x: np.ndarray, amax: float) -> Tuple[np.ndarray, np.float32]:
    """x (any shape) with ONE static symmetric scale for the whole tensor ->
    (codes int8, scale float32), in float32 as quantize_activation_rows:

        scale = amax / 127;  q = clip(rint(x * (127 / amax)), -127, 127)

    Values beyond +-amax saturate at +-127 (the calibrated range clips them).
    amax <= 0 (a projection that only ever saw zeros) gives codes 0, scale 0."""
    x32 = np.asarray(x, dtype=np.float32)
    amax32 = np.float32(amax)
    if not np.isfinite(amax32) or amax32 < 0:
        raise ValueError(f"static activation range must be finite and >= 0, got {amax}")
    if amax32 == 0:
        return np.zeros(x32.shape, dtype=np.int8), np.float32(0)
    inverse = np.float32(QMAX) / amax32
    q = np.clip(np.rint(x32 * inverse), -QMAX, QMAX).astype(np.int8)
    return q, np.float32(amax32 / np.float32(QMAX))


def fake_quantize_static(x: np.ndarray, amax: float) -> np.ndarray:
    """float32 values the static int8 codes of x stand for (q * amax / 127)."""
    q, scale = quantize_static(x, amax)
    return q.astype(np.float32) * scale


def fake_quantize_per_row(x: np.ndarray) -> np.ndarray:
    """The dynamic scheme for comparison: each row (last axis) its own scale."""
    return fake_quantize_activation_rows(x)


def _fq_tensor(t, amax: float):
    import torch
    return torch.from_numpy(fake_quantize_static(t.detach().numpy(), amax))


# ---------------------------------------------------------------- projection names
WeightKey = Tuple[int, Tuple[int, ...]]


def projection_names(model) -> Dict[WeightKey, str]:
    """(data_ptr, shape) of every weight F.linear can receive -> stable name.

    nn.MultiheadAttention passes its packed in_proj_weight whole for
    self-attention ([qkv]) and split into the q rows and the k,v rows for
    cross-attention ([q], [kv]); views share storage, so the data pointer plus
    shape tells them apart. The generator's weight is tied to the embedding
    table but only the generator multiplies it."""
    from torch import nn
    names: Dict[WeightKey, str] = {}

    def add(pointer: int, shape, name: str) -> None:
        key = (pointer, tuple(int(s) for s in shape))
        if key in names and names[key] != name:
            raise ValueError(f"projections {names[key]} and {name} share a weight")
        names[key] = name

    for module_name, module in model.named_modules():
        short = module_name[len("transformer."):] if module_name.startswith(
            "transformer.") else module_name
        if isinstance(module, nn.MultiheadAttention):
            w = module.in_proj_weight
            e = w.shape[1]
            add(w.data_ptr(), (3 * e, e), f"{short}.in_proj[qkv]")
            add(w.data_ptr(), (e, e), f"{short}.in_proj[q]")
            add(w.data_ptr() + e * e * w.element_size(), (2 * e, e), f"{short}.in_proj[kv]")
        elif isinstance(module, nn.Linear):
            add(module.weight.data_ptr(), module.weight.shape, short)
    return names


def _lookup(names: Dict[WeightKey, str], weight) -> str:
    key = (weight.data_ptr(), tuple(weight.shape))
    try:
        return names[key]
    except KeyError:
        raise RuntimeError(f"F.linear called with an unknown weight of shape "
                           f"{tuple(weight.shape)}") from None


# ---------------------------------------------------------------- calibration
@dataclass
class RangeStats:
    """Activation statistics of one projection over the calibration data."""
    input_amax: float = 0.0
    output_amax: float = 0.0
    input_count: int = 0            # number of input values seen
    calls: int = 0
    input_top: Optional[np.ndarray] = None  # largest |x| seen, descending (<= TOP_K)

    def input_percentile(self, percentile: float) -> float:
        """np.percentile(all |x| seen, percentile) ('linear' method), from the top
        values kept. Raises ValueError when TOP_K values are not enough."""
        n = self.input_count
        if n == 0:
            return 0.0
        from_top = (1.0 - percentile / 100.0) * (n - 1)  # position in descending order
        lo = int(math.floor(from_top))
        hi = min(lo + 1, n - 1)
        top = self.input_top
        if hi >= len(top):
            raise ValueError(f"percentile {percentile} of {n} values needs the {hi + 1} "
                             f"largest, only {len(top)} kept (raise TOP_K)")
        frac = from_top - lo
        return float(top[lo] * (1.0 - frac) + top[hi] * frac)


class RangeRecorder:
    """A projection function (see torch_reference.int8_projections) that runs
    the plain float32 product and records input/output ranges per projection."""

    def __init__(self, names: Dict[WeightKey, str], top_k: int = TOP_K):
        self.names = names
        self.top_k = top_k
        self.stats: Dict[str, RangeStats] = {}

    def __call__(self, linear, input, weight, bias=None):  # pylint: disable=redefined-builtin
        import torch
        out = linear(input, weight, bias)
        stats = self.stats.setdefault(_lookup(self.names, weight), RangeStats())
        x = input.detach().abs().reshape(-1)
        stats.calls += 1
        if x.numel():
            stats.input_amax = max(stats.input_amax, float(x.max()))
            stats.input_count += x.numel()
            top = torch.topk(x, min(self.top_k, x.numel())).values.numpy()
            if stats.input_top is not None:
                top = np.concatenate([stats.input_top, top])
            stats.input_top = -np.sort(-top)[: self.top_k]
        y = out.detach().abs()
        if y.numel():
            stats.output_amax = max(stats.output_amax, float(y.max()))
        return out


class StaticProjection:
    """A projection function: input fake-quantized with a static per-tensor scale
    (input_amax[name] / 127, clipped), product with the (int8-valued) weight in
    float32, and optionally the output fake-quantized with a static scale
    (output_amax[name] / 127, clipped), except projections in `float_outputs`."""

    def __init__(self, names: Dict[WeightKey, str], input_amax: Dict[str, float],
                 output_amax: Optional[Dict[str, float]] = None,
                 float_outputs: Sequence[str] = ()):
        self.names = names
        self.input_amax = dict(input_amax)
        self.output_amax = None if output_amax is None else dict(output_amax)
        self.float_outputs = set(float_outputs)

    def _range(self, table: Dict[str, float], name: str, what: str) -> float:
        if name not in table:
            raise RuntimeError(f"no calibrated {what} range for projection {name}")
        return table[name]

    def __call__(self, linear, input, weight, bias=None):  # pylint: disable=redefined-builtin
        name = _lookup(self.names, weight)
        out = linear(_fq_tensor(input, self._range(self.input_amax, name, "input")), weight, bias)
        if self.output_amax is not None and name not in self.float_outputs:
            out = _fq_tensor(out, self._range(self.output_amax, name, "output"))
        return out


@dataclass
class Calibration:
    stats: Dict[str, RangeStats]
    pairs: int        # calibration lines used
    skipped: int      # pairs skipped (blank, or longer than the position table)
    mode: str

    def input_amax(self) -> Dict[str, float]:
        return {n: s.input_amax for n, s in self.stats.items()}

    def output_amax(self) -> Dict[str, float]:
        return {n: s.output_amax for n, s in self.stats.items()}

    def input_percentile(self, percentile: float) -> Dict[str, float]:
        return {n: s.input_percentile(percentile) for n, s in self.stats.items()}


def _teacher_forced_forward(model, src_ids: Sequence[int], tgt_in: Sequence[int]) -> None:
    """Encoder on the source, decoder on the whole target input (causal mask) and
    the generator on every position: every projection sees every position once."""
    import torch
    src = torch.tensor([list(src_ids)], dtype=torch.long)
    tgt = torch.tensor([list(tgt_in)], dtype=torch.long)
    memory = model.transformer.encoder(model.embed_tokens(src))
    t = tgt.shape[1]
    causal = torch.triu(torch.full((t, t), -math.inf), diagonal=1)
    h = model.transformer.decoder(model.embed_tokens(tgt), memory, tgt_mask=causal)
    model.generator(h)


def calibrate(ref32, sources: Sequence[str], targets: Optional[Sequence[str]],
              mode: str = "teacher", top_k: int = TOP_K) -> Calibration:
    """Activation ranges of the fp32 TorchReference `ref32` on source lines
    (and their reference translations for mode "teacher")."""
    if mode not in ("teacher", "greedy"):
        raise ValueError(f"calibration mode must be teacher or greedy, got {mode}")
    if mode == "teacher" and (targets is None or len(targets) < len(sources)):
        raise ValueError("teacher-forced calibration needs a reference for every source line")
    model = ref32.model
    recorder = RangeRecorder(projection_names(model), top_k)
    saved_flags = [(p, p.requires_grad) for p in model.parameters()]
    model.requires_grad_(True)  # with grad mode on: PyTorch declines its fused fast paths
    try:
        pairs, skipped = _calibration_pass(ref32, recorder, sources, targets, mode)
    finally:
        for param, flag in saved_flags:
            param.requires_grad_(flag)
    if pairs == 0:
        raise UserError("no usable calibration line")
    return Calibration(recorder.stats, pairs, skipped, mode)


def _calibration_pass(ref32, recorder: RangeRecorder, sources: Sequence[str],
                      targets: Optional[Sequence[str]], mode: str) -> Tuple[int, int]:
    import torch
    from edgemt_tools.torch_reference import int8_projections
    model = ref32.model
    pairs = skipped = 0
    for i, line in enumerate(sources):
        if not line.strip() or (mode == "teacher" and not targets[i].strip()):
            skipped += 1
            continue
        src = ref32.encode_text(line)
        if len(src) > ref32.max_positions:
            skipped += 1
            continue
        if mode == "teacher":
            tgt_in = [ref32.bos] + list(ref32.spm.encode(targets[i]))
            if len(tgt_in) > ref32.max_positions:
                skipped += 1
                continue
            with torch.no_grad(), int8_projections(recorder):  # grad re-enabled inside
                _teacher_forced_forward(model, src, tgt_in)
        else:
            saved = model.quantize_activations, model.projection
            model.quantize_activations, model.projection = True, recorder
            try:
                ref32.greedy(src)
            finally:
                model.quantize_activations, model.projection = saved
        pairs += 1
    return pairs, skipped


# ---------------------------------------------------------------- the study
@dataclass
class SchemeResult:
    scheme: str
    description: str
    texts: List[str]
    ids: List[Optional[List[int]]]  # None: source too long, not decoded
    bleu: float
    identical: int                  # outputs equal (ids) to fp32
    seconds: float


@dataclass
class StudyResult:
    sentences: int
    too_long: int
    calibration: Calibration
    rows: List[SchemeResult] = field(default_factory=list)
    fp32_check: Optional[Tuple[int, int, str]] = None  # (equal lines, compared, file)


def all_schemes(percentile: float = DEFAULT_PERCENTILE) -> List[str]:
    """Every scheme known, in table order (defaults and opt-in)."""
    return list(scheme_descriptions(percentile))


def decode_all(ref, sources: Sequence[Optional[List[int]]]) -> List[Optional[List[int]]]:
    return [None if src is None else ref.greedy(src) for src in sources]


def run_study(checkpoint: str, config: str, spm: str, sources: Sequence[str],
              references: Sequence[str], calibrate_sources: Sequence[str],
              calibrate_targets: Optional[Sequence[str]], schemes: Sequence[str],
              calibrate_mode: str = "teacher", percentile: float = DEFAULT_PERCENTILE,
              fp32_reference: Optional[str] = None,
              log: Callable[[str], None] = lambda message: None) -> StudyResult:
    """Calibrate on `calibrate_sources` (fp32 model), then greedy-decode
    `sources` under fp32 and every scheme in `schemes`."""
    from edgemt_tools.torch_reference import TorchReference
    if len(references) != len(sources):
        raise ValueError(f"{len(sources)} sources but {len(references)} references")
    known = all_schemes(percentile)
    unknown = [s for s in schemes if s not in known]
    if unknown:
        raise UserError(f"unknown scheme(s) {', '.join(unknown)}; known: {', '.join(known)}")
    descriptions = scheme_descriptions(percentile)
    ref32 = TorchReference(checkpoint, config, spm, "fp32")
    start = time.perf_counter()
    calibration = calibrate(ref32, calibrate_sources, calibrate_targets, calibrate_mode)
    log(f"calibration ({calibration.mode}): {calibration.pairs} lines, "
        f"{len(calibration.stats)} projections, {time.perf_counter() - start:.1f} s")

    encoded = [ref32.encode_text(line) for line in sources]
    src_ids = [ids if len(ids) <= ref32.max_positions else None for ids in encoded]
    result = StudyResult(len(sources), sum(s is None for s in src_ids), calibration)

    ref8 = None
    fp32_ids: List[Optional[List[int]]] = []
    for scheme in [FP32] + [s for s in known if s in schemes and s != FP32]:
        if scheme == FP32:
            ref = ref32
        else:
            if ref8 is None:
                ref8 = TorchReference(checkpoint, config, spm, "int8")
            ref = ref8
            ref8.model.projection = _projection_for(scheme, ref8.model, calibration, percentile)
        start = time.perf_counter()
        ids = decode_all(ref, src_ids)
        seconds = time.perf_counter() - start
        if scheme == FP32:
            fp32_ids = ids
        texts = ["" if i is None else ref.decode_ids(i) for i in ids]
        bleu = corpus_bleu(texts, references).score
        same = sum(a is not None and a == b for a, b in zip(ids, fp32_ids))
        result.rows.append(SchemeResult(scheme, descriptions[scheme], texts, ids, bleu, same,
                                        seconds))
        log(f"{scheme}: BLEU {bleu:.2f}, identical to fp32 {same}/{len(sources)}, "
            f"{seconds:.0f} s")
    if ref8 is not None:
        ref8.model.projection = None
    if fp32_reference:
        want = read_lines(fp32_reference)[: len(sources)]
        got = result.rows[0].texts[: len(want)]
        result.fp32_check = (sum(a == b for a, b in zip(got, want)), len(want), fp32_reference)
    return result


def _projection_for(scheme: str, model, calibration: Calibration, percentile: float):
    if scheme == DYNAMIC:
        return None  # int8_projections' default: per-row dynamic
    names = projection_names(model)
    if scheme == STATIC:
        return StaticProjection(names, calibration.input_amax())
    if scheme == STATIC_OUT:
        return StaticProjection(names, calibration.input_amax(), calibration.output_amax())
    if scheme == STATIC_OUT_F32_LOGITS:
        return StaticProjection(names, calibration.input_amax(), calibration.output_amax(),
                                float_outputs=["generator"])
    if scheme == STATIC_OUT_F32_FFN_OUT:
        return StaticProjection(names, calibration.input_amax(), calibration.output_amax(),
                                float_outputs=[n for n in names.values()
                                               if n.endswith(".linear2")])
    if scheme == percentile_scheme(percentile):
        return StaticProjection(names, calibration.input_percentile(percentile))
    raise ValueError(f"no projection for scheme {scheme}")


# ---------------------------------------------------------------- report
def format_table(result: StudyResult) -> str:
    n = result.sentences
    width = max(len(r.scheme) for r in result.rows)
    dwidth = max(len(r.description) for r in result.rows)
    lines = [f"{'scheme':<{width}}  {'':<{dwidth}}  {'BLEU':>6}  {'identical to fp32':>17}  "
             f"{'decode s':>8}"]
    for r in result.rows:
        lines.append(f"{r.scheme:<{width}}  {r.description:<{dwidth}}  {r.bleu:6.2f}  "
                     f"{f'{r.identical} / {n}':>17}  {r.seconds:8.0f}")
    return "\n".join(lines)


def format_scales(calibration: Calibration, percentile: float, limit: int = 0) -> str:
    """Per projection: calibrated max|x|, percentile, ratio, max|y|; sorted by
    the ratio max/percentile (outliers first); `limit` rows (0 = all)."""
    rows = []
    for name, s in calibration.stats.items():
        p = s.input_percentile(percentile)
        rows.append((s.input_amax / p if p > 0 else math.inf, name, s.input_amax, p,
                     s.output_amax))
    rows.sort(key=lambda r: (-r[0], r[1]))
    if limit:
        rows = rows[:limit]
    width = max(len(r[1]) for r in rows)
    out = [f"{'projection':<{width}}  {'max|x|':>8}  {f'p{percentile:g}|x|':>10}  "
           f"{'ratio':>6}  {'max|y|':>8}"]
    for ratio, name, amax, p, ymax in rows:
        out.append(f"{name:<{width}}  {amax:8.3f}  {p:10.3f}  {ratio:6.1f}  {ymax:8.3f}")
    return "\n".join(out)


# ---------------------------------------------------------------- command line
def build_parser() -> argparse.ArgumentParser:
    p = StudyParser(prog=PROG, allow_abbrev=False,
                    description="Greedy-decode the first N test sentences with the PyTorch "
                                "reference under fp32, edgemt's dynamic int8 scheme and static "
                                "activation-scale int8 schemes (what XNNPACK 2022's qs8/qc8 "
                                "operators compute); print BLEU and agreement with fp32.")
    add_model_arguments(p, "models/multi30k-en-de and data/multi30k")
    p.add_argument("--source", metavar="FILE",
                   help="test sources (default SHARED/data/multi30k/test_2016_flickr.en.gz)")
    p.add_argument("--references", metavar="FILE",
                   help="their translations (default ...test_2016_flickr.de.gz)")
    p.add_argument("--calibrate-source", metavar="FILE",
                   help="calibration sources (default SHARED/data/multi30k/val.en.gz)")
    p.add_argument("--calibrate-references", metavar="FILE",
                   help="their translations, for --calibrate-mode teacher (default "
                        "...val.de.gz)")
    p.add_argument("--sentences", type=int, default=300, metavar="N",
                   help="first N test sentences (default 300)")
    p.add_argument("--calibrate-lines", type=int, default=200, metavar="M",
                   help="first M calibration lines (default 200)")
    p.add_argument("--calibrate-mode", choices=["teacher", "greedy"], default="teacher",
                   help="teacher: fp32 forward pass with the reference translation as "
                        "decoder input; greedy: fp32 greedy decoding (default teacher)")
    p.add_argument("--percentile", type=float, default=DEFAULT_PERCENTILE, metavar="P",
                   help=f"percentile of |x| for the static-pP scheme (default "
                        f"{DEFAULT_PERCENTILE:g})")
    p.add_argument("--schemes", metavar="LIST",
                   help="comma-separated subset of: " + ", ".join(all_schemes()) +
                        " (default all but " + STATIC_OUT_F32_FFN_OUT + "; fp32 always "
                        "runs)")
    p.add_argument("--fp32-reference", metavar="FILE",
                   help="committed fp32 greedy output to check the fp32 row against "
                        "(default models/reference/torch_fp32_greedy.de when --source is "
                        "not given; '' to skip)")
    p.add_argument("--threads", type=int, default=1, metavar="N",
                   help="torch intra-op threads (default 1, as the committed reference)")
    p.add_argument("--out-dir", metavar="DIR",
                   help="write each scheme's translations to DIR/<scheme>.de")
    p.add_argument("--show-scales", type=int, default=8, metavar="K",
                   help="print the K projections with the largest max/percentile ratio "
                        "(0 = none, -1 = all; default 8)")
    return p


def main(argv=None) -> int:
    args = build_parser().parse_args(argv)
    try:
        return _run(args)
    except (UserError, OSError, ValueError, UnicodeDecodeError) as err:
        print(f"{PROG}: error: {err}", file=sys.stderr)
        return 1


def _run(args) -> int:
    import torch
    if args.sentences < 1 or args.calibrate_lines < 1:
        raise UserError("--sentences and --calibrate-lines must be >= 1")
    if not 0 < args.percentile < 100:
        raise UserError("--percentile must lie strictly between 0 and 100")
    data_dir = os.path.join(args.shared, "data", "multi30k")
    paths = {
        **model_paths(args),
        "source": args.source or os.path.join(data_dir, "test_2016_flickr.en.gz"),
        "references": args.references or os.path.join(data_dir, "test_2016_flickr.de.gz"),
        "calibrate_source": args.calibrate_source or os.path.join(data_dir, "val.en.gz"),
        "calibrate_references": (args.calibrate_references
                                 or os.path.join(data_dir, "val.de.gz")),
    }
    if args.calibrate_mode == "greedy" and not args.calibrate_references:
        del paths["calibrate_references"]
    for what, path in paths.items():
        if not os.path.isfile(path):
            raise UserError(f"{what.replace('_', ' ')} file not found: {path}")
    fp32_reference = args.fp32_reference
    if fp32_reference is None and args.source is None:
        fp32_reference = DEFAULT_FP32_REFERENCE
    schemes = default_schemes(args.percentile)
    if args.schemes:
        schemes = [s.strip() for s in args.schemes.split(",") if s.strip()]
    torch.set_num_threads(max(1, args.threads))

    sources = read_lines(paths["source"])[: args.sentences]
    references = read_lines(paths["references"])[: args.sentences]
    cal_sources = read_lines(paths["calibrate_source"])[: args.calibrate_lines]
    cal_targets = (read_lines(paths["calibrate_references"])[: args.calibrate_lines]
                   if "calibrate_references" in paths else None)

    def log(message: str) -> None:
        print(f"{PROG}: {message}", file=sys.stderr, flush=True)

    result = run_study(paths["checkpoint"], paths["config"], paths["spm"], sources, references,
                       cal_sources, cal_targets, schemes, args.calibrate_mode, args.percentile,
                       fp32_reference or None, log)

    cal = result.calibration
    print(f"{result.sentences} sentences of {paths['source']}"
          + (f" ({result.too_long} longer than the position table left empty)"
             if result.too_long else "")
          + f"; greedy; torch threads {max(1, args.threads)}")
    print(f"calibration: {cal.pairs} lines of {paths['calibrate_source']} "
          + ("(teacher-forced on " + paths["calibrate_references"] + ")"
             if cal.mode == "teacher" else "(fp32 greedy decoding)")
          + (f", {cal.skipped} skipped" if cal.skipped else "")
          + f"; {len(cal.stats)} projections")
    print()
    print(format_table(result))
    status = 0
    if result.fp32_check is not None:
        equal, compared, path = result.fp32_check
        verdict = "OK" if equal == compared == result.sentences else "MISMATCH"
        print(f"\nfp32 check: {equal}/{compared} lines equal {path} ({verdict})")
        status = 0 if verdict == "OK" else 1
    if args.show_scales:
        print(f"\nprojection inputs with the largest max/p{args.percentile:g} ratio "
              "(calibration data):")
        print(format_scales(cal, args.percentile, max(0, args.show_scales)))
    if args.out_dir:
        os.makedirs(args.out_dir, exist_ok=True)
        for row in result.rows:
            with open(os.path.join(args.out_dir, f"{row.scheme}.de"), "w",
                      encoding="utf-8") as handle:
                handle.writelines(text + "\n" for text in row.texts)
    return status
