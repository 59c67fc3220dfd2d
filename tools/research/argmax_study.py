"""`edgemt-argmax-study`: how much of the output projection greedy search must read.

At batch 1 an f32 model reads every weight once per generated token, and the
tied output projection is the largest matrix: 8000 x 256 floats (8 MB) of the
19 MB the multi30k en->de decoder reads per step, ~40% of fp32 batch-1 decode
time (`edgemt bench --profile`). Greedy search keeps only the arg-max of each
step's logits. When no score is reported (the log-sum-exp needs every logit
exactly), that arg-max can be found exactly without computing every logit:

  1. an int8 copy of the projection (per-row symmetric codes q[n, k], scale
     s[n], as the converter quantizes) and the step's hidden state x quantized
     per row (codes p[k], scale t, as the runtime's int8 GEMM does) give
     A[n] = t·s[n]·Σ_k p[k]·q[n, k] + b[n] with an exact integer sum;
  2. every logit L[n] lies within B[n] of A[n] (below), whatever float32
     summation order computes it, so an entry can be the arg-max only if
     A[n] + B[n] >= max_m (A[m] - B[m]) over the entries that may be emitted;
  3. only those candidates need their exact f32 product (one row each); the
     arg-max among them, ties to the lower id as the full scan, is the arg-max.

The bound. Write x = t·p + e and w[n] = s[n]·q[n] + d[n] (the rounding errors
of the two quantizations). Then, in real arithmetic,
  Σ x·w - Σ (t·p)·(s·q) = Σ (t·p)·d + Σ e·w,
so |Σ x·w - (A - b)| <= D[n]·‖t·p‖₁ + E·‖w[n]‖₁ with D[n] = max_k |d[n, k]|
(kept per row at load) and E = max_k |e[k]| (per step). A float32 sum of b
and K products in any order is within γ(K+1)·(|b| + Σ|x|·|w|) of the real
value (γ(n) = n·u / (1 - n·u), u = 2^-24; Higham, Accuracy and Stability of
Numerical Algorithms, 3.1), and Σ|x|·|w| <= min(‖x‖₁·max|w[n]|, ‖x‖∞·‖w[n]‖₁).
A float32 implementation of A adds at most 4u·(|A| + |b|) (int32 -> float,
two products, the bias add); this study computes A exactly and adds that term
anyway, so its counts are what a float32 runtime would see. The sum of
non-negative terms is then widened by 2^-10 for its own rounding.

The study greedy-decodes sentences with the PyTorch reference, takes the
decoder's final hidden state at every step (the generator's input) and
reports how many candidates step 3 is left with, and how many bytes a step
would read instead of the whole f32 matrix. Every step is checked: the
arg-max of the reference's own float32 logits (pad and bos banned) must be
among the candidates, else the study stops with an error (the bound would
be wrong). Beam search cannot use it: it ranks log-probabilities, which
need the exact log-sum-exp of every row.
"""

import argparse
import os
import sys
from dataclasses import dataclass
from typing import List, Optional, Sequence, Tuple

import numpy as np

from edgemt_tools.errors import UserError
from edgemt_tools.quantize import quantize_activation_rows, quantize_rows
from edgemt_tools.textio import read_lines
from research.study_cli import REPO_ROOT, StudyParser, add_model_arguments, model_paths

PROG = "edgemt-argmax-study"
UNIT_ROUNDOFF = 2.0 ** -24  # float32
BOUND_WIDENING = 1.0 + 2.0 ** -10


def gamma(n: int) -> float:
    """Higham's γ(n) = n·u / (1 - n·u) for float32."""
    return n * UNIT_ROUNDOFF / (1.0 - n * UNIT_ROUNDOFF)


@dataclass
class ShadowProjection:
    """The int8 copy of an output projection w [V, K] (bias b [V]) and the
    per-row constants the bound needs; what a runtime would keep at load."""
    codes: np.ndarray      # int8 [V, K]
    scale: np.ndarray      # float32 [V]
    bias: np.ndarray       # float32 [V]
    max_error: np.ndarray  # float64 [V]: D[n] = max_k |w[n, k] - s[n]·q[n, k]|
    l1: np.ndarray         # float64 [V]: ‖w[n]‖₁
    max_abs: np.ndarray    # float64 [V]: max_k |w[n, k]|
    # The codes, scales and bias widened once, not per step: float64 holds
    # every code sum exactly (|Σ| <= 127·127·K < 2^53).
    wide_codes: np.ndarray  # float64 [V, K]
    wide_scale: np.ndarray  # float64 [V]
    wide_bias: np.ndarray   # float64 [V]

    @property
    def bytes(self) -> int:
        """What a runtime would keep: the codes and four floats per row."""
        return self.codes.size + 16 * self.codes.shape[0]


def make_shadow(weight: np.ndarray, bias: Optional[np.ndarray] = None) -> ShadowProjection:
    """weight [V, K] float32 (finite), bias [V] or None."""
    w = np.asarray(weight, dtype=np.float32)
    codes, scale = quantize_rows(w, "output projection")
    dequantized = codes.astype(np.float64) * scale.astype(np.float64)[:, None]
    w64 = w.astype(np.float64)
    b = np.zeros(w.shape[0], np.float32) if bias is None else np.asarray(bias, np.float32)
    return ShadowProjection(codes=codes, scale=scale, bias=b,
                            max_error=np.abs(w64 - dequantized).max(axis=1),
                            l1=np.abs(w64).sum(axis=1), max_abs=np.abs(w64).max(axis=1),
                            wide_codes=codes.astype(np.float64),
                            wide_scale=scale.astype(np.float64), wide_bias=b.astype(np.float64))


def bounded_logits(shadow: ShadowProjection, x: np.ndarray) -> Tuple[np.ndarray, np.ndarray]:
    """x [K] float32 (finite) -> (A [V], B [V]) with |L[n] - A[n]| <= B[n] for
    L = b + x·w[n] summed in float32 in any order."""
    x32 = np.asarray(x, dtype=np.float32).reshape(-1)
    if not np.all(np.isfinite(x32)):
        raise ValueError("hidden state has NaN or infinite values (the full scan handles those)")
    depth = x32.size
    codes, scale = quantize_activation_rows(x32[None, :])
    p = codes[0].astype(np.float64)
    t = float(scale.reshape(-1)[0])
    x64 = x32.astype(np.float64)
    tp = t * p
    e_max = float(np.abs(x64 - tp).max())
    integer = shadow.wide_codes @ p  # exact (see ShadowProjection)
    b64 = shadow.wide_bias
    approx = integer * (t * shadow.wide_scale) + b64
    quantization = shadow.max_error * np.abs(tp).sum() + e_max * shadow.l1
    products = np.minimum(np.abs(x64).sum() * shadow.max_abs, np.abs(x64).max() * shadow.l1)
    summation = gamma(depth + 1) * (np.abs(b64) + products)
    evaluation = 4 * UNIT_ROUNDOFF * (np.abs(approx) + np.abs(b64))
    return approx, (quantization + summation + evaluation) * BOUND_WIDENING


def candidates(approx: np.ndarray, bound: np.ndarray, banned: Sequence[int] = ()) -> np.ndarray:
    """Ids (ascending) that can be the arg-max: A + B >= max(A - B) over the
    ids not banned; banned ids are never candidates."""
    allowed = np.ones(approx.shape[0], dtype=bool)
    allowed[list(banned)] = False
    threshold = (approx - bound)[allowed].max()
    return np.nonzero(allowed & (approx + bound >= threshold))[0]


def exact_argmax(logits: np.ndarray, banned: Sequence[int] = ()) -> int:
    """The full scan's choice: banned ids at -inf, first id among equals."""
    masked = np.asarray(logits, dtype=np.float32).copy()
    masked[list(banned)] = -np.inf
    return int(np.argmax(masked))


@dataclass
class StudyResult:
    steps: int
    counts: np.ndarray        # candidates per step
    vocab: int
    depth: int
    shadow_bytes: int

    def report(self) -> str:
        c = self.counts
        full = self.vocab * self.depth * 4
        filtered = self.shadow_bytes + c.mean() * self.depth * 4
        lines = [
            f"steps {self.steps} (vocabulary {self.vocab}, depth {self.depth}); true arg-max "
            f"among the candidates at every step",
            f"candidates per step: mean {c.mean():.2f}, p50 {np.percentile(c, 50):.0f}, "
            f"p90 {np.percentile(c, 90):.0f}, p99 {np.percentile(c, 99):.0f}, max {c.max()}; "
            f"one candidate at {100.0 * np.mean(c == 1):.1f}% of steps",
            f"bytes read per step for the projection: f32 {full / 2**20:.2f} MiB, int8 pre-pass "
            f"+ candidate rows {filtered / 2**20:.2f} MiB ({filtered / full:.1%})",
            f"memory: the int8 copy and its row constants add {self.shadow_bytes / 2**20:.2f} MiB "
            f"beside the f32 matrix (still needed for beam search, scores and embedding rows)",
        ]
        return "\n".join(lines)


def run_study(checkpoint: str, config: str, spm: str, sources: Sequence[str]) -> StudyResult:
    """Greedy-decodes `sources` with the fp32 PyTorch reference and checks
    the pre-pass at every step (UserError if the arg-max is ever missed)."""
    from edgemt_tools.torch_reference import TorchReference

    reference = TorchReference(checkpoint, config, spm)
    model = reference.model
    weight = model.generator.weight.detach().numpy()
    bias = model.generator.bias.detach().numpy() if model.generator.bias is not None else None
    shadow = make_shadow(weight, bias)
    hidden: List[np.ndarray] = []
    logits: List[np.ndarray] = []

    def record(_module, inputs, output):
        hidden.append(inputs[0].detach().reshape(-1, inputs[0].shape[-1]).numpy().copy())
        logits.append(output.detach().reshape(-1, output.shape[-1]).numpy().copy())

    handle = model.generator.register_forward_hook(record)
    try:
        for text in sources:
            reference.greedy(reference.encode_text(text))  # no_grad itself
    finally:
        handle.remove()
    if not hidden:
        raise UserError("no decoder steps (no sentences?)")
    counts = []
    for x_rows, l_rows in zip(hidden, logits):
        for x, row in zip(x_rows, l_rows):
            approx, bound = bounded_logits(shadow, x)
            chosen = candidates(approx, bound, reference.banned)
            best = exact_argmax(row, reference.banned)
            if best not in chosen:
                raise UserError(f"step {len(counts)}: the arg-max {best} is not among the "
                                f"{len(chosen)} candidates (the bound is wrong)")
            counts.append(len(chosen))
    return StudyResult(steps=len(counts), counts=np.array(counts), vocab=weight.shape[0],
                       depth=weight.shape[1], shadow_bytes=shadow.bytes)


def build_parser() -> argparse.ArgumentParser:
    p = StudyParser(prog=PROG, allow_abbrev=False,
                    description="Greedy-decode sentences with the PyTorch reference and report "
                                "how many vocabulary entries an exact int8 pre-pass over the "
                                "output projection leaves for the arg-max (the bound is "
                                "derived in tools/research/argmax_study.py); every step is "
                                "checked against the full arg-max.")
    add_model_arguments(p, "models/multi30k-en-de")
    p.add_argument("--source", metavar="FILE",
                   default=os.path.join(REPO_ROOT, "models", "reference", "test_2016_flickr.en"),
                   help="sentences, one per line (default: the bundled Multi30k test_2016 "
                        "English side)")
    p.add_argument("--sentences", type=int, default=200, metavar="N",
                   help="the first N lines (default 200)")
    return p


def main(argv=None) -> int:
    args = build_parser().parse_args(argv)
    try:
        if args.sentences < 1:
            raise UserError("--sentences must be >= 1")
        paths = {**model_paths(args), "source": args.source}
        for what, path in paths.items():
            if not os.path.isfile(path):
                raise UserError(f"{what} file not found: {path}")
        sources = read_lines(paths["source"])[: args.sentences]
        result = run_study(paths["checkpoint"], paths["config"], paths["spm"], sources)
        print(result.report())
        return 0
    except (UserError, OSError, ValueError, UnicodeDecodeError) as err:
        print(f"{PROG}: error: {err}", file=sys.stderr)
        return 1
