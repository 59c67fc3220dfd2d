"""int8 calibration at conversion: smoothing vectors and error-compensating
rounding (docs/int8-quality.md), for the model families that give a numpy
forward pass (`forward_pass` of their record, families/; the
Transformer's is numpy_transformer.py).

The runtime quantizes each projection's input row by row (codes in
[-127, 127], one scale per row). A channel that is large in every row (the
outlier channels trained Transformers grow, often after a LayerNorm) sets
every row's scale, and the other channels keep only a few codes. With
calibration inputs X of a projection y = x · Wᵀ:

1. Smoothing (SmoothQuant: Xiao et al., 2022). For each alpha in ALPHAS,
   s_j = max|X[:, j]|^alpha / max|W[:, j]|^(1 - alpha); the file stores the
   codes of W·diag(s) and the multiplier m = 1/s (`<matrix>_smooth`), and
   the runtime quantizes x ⊙ m: the product is unchanged, the outliers'
   range moves into the weights.
2. Rounding (gptq.py) of the (smoothed) weights against (X ⊙ m)ᵀ(X ⊙ m).
The alphas are ranked by the int8 product's error (the runtime's activation
codes included) against the float one on the calibration rows, with nearest
rounding; the best one and no smoothing at all are then rounded as in 2 and
measured again. Smoothing is stored only when it lowers that error by
MIN_GAIN or more, else m is all ones.

Tied output projections (the matrix is also the target embedding table)
keep plain per-row rounding and no smoothing: the table's rows are looked
up as stored. Matrices whose int8 codes the source gives
(ModelSpec.int8_codes: Marian's intgemm8 items) keep those codes: no
smoothing, no rounding of ours (in a smoothed file their vectors are ones).

Calibration inputs come from the first lines of a text in the source
language (`edgemt-convert --calibrate FILE`) or, without one, from
DEFAULT_SENTENCES sentences sampled from the source SentencePiece model's
piece probabilities (seeded: the same file every time). The decoder's
inputs are the model's own greedy translations of them, from the numpy
forward pass. Nothing from the text is stored.

The same source makes the same file on every CPU: the forward pass and
every measure computed from its recordings run in float64
(numpy_transformer.py says why), so the BLAS kernels and SIMD code that
numpy picks per CPU change nothing the file stores
(tests/tools/test_int8_calibration.py converts under two of them).

A forward pass is `forward_pass(config, weights, dtype)` (weights: every
fp32 tensor of the config, aliases included, as resolved_weights gives
them; dtype: what it computes in, float64 here),
an object with `greedy(sources, start, eos, max_lens, banned)` (output ids
per source), `logits(src, tgt_in)`, and `project(name, x)`, through which
every projection's product x · Wᵀ + b goes (`name`: its weight's name
without ".weight"; "output" for the output projection), and `exact`, the
unswapped `project`: recorded_inputs swaps it to record the inputs.
"""

from dataclasses import dataclass, field
from typing import Dict, List, Mapping, Optional, Sequence, Tuple

import numpy as np

from . import families
from .choices import DEFAULT_CALIBRATION_SENTENCES
from .errors import UserError
from .gptq import gptq_rows, hessian
from .model_spec import ModelSpec, expected_tensors, resolve_alias
from .quantize import dequantize_rows, fake_quantize_activation_rows, quantize_rows

DEFAULT_SENTENCES = DEFAULT_CALIBRATION_SENTENCES
SEED = 20261128
ALPHAS = (0.25, 0.5, 0.75)
MIN_GAIN = 0.03              # relative error drop needed to keep a smoothing vector
ROWS_PER_PROJECTION = 4096   # calibration rows kept per projection
ERROR_ROWS = 512             # rows the smoothing choice is measured on
MAX_OUTPUT_TOKENS = 64       # per calibration sentence
SYNTHETIC_PIECES = (4, 40)   # sampled sentence lengths, in pieces


@dataclass
class Int8Plan:
    """What calibration decided, per projection matrix name ("...weight", or
    "output.weight"): its codes and scales, and its input multiplier (ones
    where smoothing did not help)."""
    codes: Dict[str, Tuple[np.ndarray, np.ndarray]] = field(default_factory=dict)
    multipliers: Dict[str, np.ndarray] = field(default_factory=dict)
    sentences: int = 0
    synthetic: bool = True
    error_before: float = 0.0   # mean relative product error, nearest rounding, no smoothing
    error_after: float = 0.0    # the same with the plan

    def summary(self) -> str:
        smoothed = sum(1 for m in self.multipliers.values() if not np.all(m == 1))
        text = ("synthetic sentences sampled from the source SentencePiece model" if self.synthetic
                else "lines of the calibration text")
        return (f"int8 calibration on {self.sentences} {text}: {smoothed} of "
                f"{len(self.multipliers)} projections smoothed, rounding error-compensated; "
                f"mean relative product error {self.error_before:.4f} -> {self.error_after:.4f}")


def projections_to_calibrate(spec: ModelSpec) -> List[str]:
    """The projection matrices calibration decides for: those that own their
    bytes and whose codes the source does not give (spec.int8_codes)."""
    return [name for name, tensor in expected_tensors(spec.config, "fp32").items()
            if tensor.projection and tensor.alias_of is None and name not in spec.int8_codes]


def tied_projections(spec: ModelSpec) -> Dict[str, str]:
    """Projection name -> the embedding table whose bytes it shares (a tied
    output projection), for tables whose codes the source does not give."""
    specs = expected_tensors(spec.config, "fp32")
    tied = {name: resolve_alias(specs, name) for name, tensor in specs.items()
            if tensor.projection and tensor.alias_of is not None}
    return {name: owner for name, owner in tied.items() if owner not in spec.int8_codes}


def calibrates(family) -> bool:
    """Whether int8 files of `family` (a families.Family) are calibrated."""
    return family.forward_pass is not None


def calibrated_families() -> str:
    """The titles of the families calibration is for ("Transformer")."""
    return families.titles(calibrates)


# ---- calibration sentences ------------------------------------------------

def _processor(model_proto: bytes):
    import sentencepiece
    return sentencepiece.SentencePieceProcessor(model_proto=model_proto)


def synthetic_sentences(model_proto: bytes, count: int, seed: int = SEED) -> List[str]:
    """`count` sentences of random length, pieces drawn independently with
    the model's piece probabilities (exp(score) for unigram models; a Zipf
    law over the piece order for BPE ones, whose scores are ranks)."""
    sp = _processor(model_proto)
    ids = [i for i in range(sp.get_piece_size())
           if not (sp.is_control(i) or sp.is_unknown(i) or sp.is_unused(i))]
    if not ids:
        raise UserError("the source SentencePiece model has no ordinary piece to calibrate with")
    scores = np.array([sp.get_score(i) for i in ids], dtype=np.float64)
    if np.all(scores == np.round(scores)):
        weights = 1.0 / (np.arange(len(ids)) + 10.0)
    else:
        weights = np.exp(scores - scores.max())
    weights /= weights.sum()
    rng = np.random.default_rng(seed)
    low, high = SYNTHETIC_PIECES
    sentences = []
    for _ in range(count):
        length = int(rng.integers(low, high + 1))
        sentences.append(sp.decode([int(i) for i in rng.choice(ids, size=length, p=weights)]))
    return sentences


def source_ids(spec: ModelSpec, sp, text: str) -> List[int]:
    """The runtime's source ids of `text` (runtime/text/tokenizer.cc)."""
    if spec.source_pieces:
        by_piece = {piece: i for i, piece in enumerate(spec.source_pieces)}
        unk = spec.source_unk_id if spec.source_unk_id >= 0 else spec.special_tokens.unk
        ids = [by_piece.get(piece, unk) for piece in sp.encode(text, out_type=str)]
        eos = spec.source_eos_id if spec.source_eos_id >= 0 else spec.special_tokens.eos
    else:
        ids = sp.encode(text)
        eos = spec.special_tokens.eos
    return ids + [eos] if spec.append_eos_to_source else ids


# ---- the forward pass -----------------------------------------------------

def resolved_weights(config, weights: Mapping[str, np.ndarray]) -> Dict[str, np.ndarray]:
    """Every fp32 tensor name of `config` -> float32 array, aliases included
    (output.weight is embedding.target's array when tied), from a spec's
    weights (which hold no aliases)."""
    specs = expected_tensors(config, "fp32")
    return {name: np.asarray(weights[resolve_alias(specs, name)], dtype=np.float32)
            for name in specs}


def recorded_inputs(model, pairs: Sequence,
                    rows_per_projection: Optional[int] = None,
                    seed: int = 0) -> Dict[str, np.ndarray]:
    """Every projection's input rows over teacher-forced `pairs` ((src,
    tgt_in) each): name -> [rows, K] (the pass's dtype), at most rows_per_projection
    rows (an evenly spread, seeded sample) when given.

    A first pass whose products are zeros counts each projection's rows;
    the sample is drawn from the counts, and the real pass copies just the
    drawn rows into arrays of their final size. So the rows are those a
    draw over all of them would give, without holding all of them (an
    OPUS-MT-base-shaped conversion peaked at 5.1 GB instead of 3.2 GB)."""
    rng = np.random.default_rng(seed)
    kept = {}
    for name, count in _row_counts(model, pairs).items():
        if rows_per_projection is not None and count > rows_per_projection:
            kept[name] = np.sort(rng.choice(count, rows_per_projection, replace=False))
        else:
            kept[name] = np.arange(count)
    return _kept_rows(model, pairs, kept)


def _row_counts(model, pairs: Sequence) -> Dict[str, int]:
    """name -> how many input rows its projection gets over `pairs`, in the
    order of the first product of each, from a pass whose products are
    zeros (one row computed, for the width)."""
    counts: Dict[str, int] = {}

    def count(name: str, x: np.ndarray) -> np.ndarray:
        counts[name] = counts.get(name, 0) + len(x)
        width = model.exact(name, x[:1]).shape[1]
        return np.zeros((len(x), width), x.dtype)
    _run(model, pairs, count)
    return counts


def _kept_rows(model, pairs: Sequence, kept: Mapping[str, np.ndarray]) -> Dict[str, np.ndarray]:
    """name -> the rows of sorted indices kept[name] (counted over the whole
    pass) of the inputs its projection gets over `pairs`."""
    out: Dict[str, np.ndarray] = {}
    seen: Dict[str, int] = {}

    def record(name: str, x: np.ndarray) -> np.ndarray:
        first = seen.get(name, 0)
        seen[name] = first + len(x)
        wanted = kept[name]
        if name not in out:
            out[name] = np.empty((len(wanted), x.shape[1]), x.dtype)
        lo, hi = np.searchsorted(wanted, [first, first + len(x)])
        out[name][lo:hi] = x[wanted[lo:hi] - first]
        if name == "output":  # the logits are not used: skip the largest product
            return np.zeros((len(x), 0), x.dtype)
        return model.exact(name, x)
    _run(model, pairs, record)
    return out


def _run(model, pairs: Sequence, project) -> None:
    """model.logits over teacher-forced `pairs` with every product through
    `project`."""
    model.project = project
    try:
        for src, tgt_in in pairs:
            model.logits(src, tgt_in)
    finally:
        model.project = model.exact


# ---- the plan -------------------------------------------------------------

def _sample(x: np.ndarray) -> np.ndarray:
    """At most ERROR_ROWS rows of x, evenly spread."""
    return x[np.linspace(0, len(x) - 1, min(len(x), ERROR_ROWS)).astype(int)]


def exact_product(x: np.ndarray, weight: np.ndarray) -> np.ndarray:
    """x · weightᵀ in float64 (float32 products round differently per CPU)."""
    return np.asarray(x, np.float64) @ np.asarray(weight, np.float64).T


def product_error(x: np.ndarray, exact: np.ndarray, multiplier: np.ndarray,
                  codes: np.ndarray, scale: np.ndarray) -> float:
    """||int8 product - float product|| / ||float product|| over rows x, the
    float product being `exact` (exact_product(x, weight)): the runtime's
    full activation codes on x ⊙ multiplier, times the stored codes · scale
    (which stand for weight / multiplier), multiplied in float64."""
    approx = (fake_quantize_activation_rows((x * multiplier[None, :]).astype(np.float32))
              .astype(np.float64) @ dequantize_rows(codes, scale).astype(np.float64).T)
    norm = float(np.linalg.norm(exact))
    return float(np.linalg.norm(approx - exact)) / norm if norm > 0 else 0.0


def smoothing_multiplier(x: np.ndarray, weight: np.ndarray, alpha: float) -> np.ndarray:
    """m = 1 / s, s_j = max|x_j|^alpha / max|w_j|^(1 - alpha) (float32; 1 where
    a channel or column is all zero)."""
    act = np.abs(x).max(axis=0).astype(np.float64)
    wmax = np.abs(weight).max(axis=0).astype(np.float64)
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        s = act ** alpha / wmax ** (1.0 - alpha)
    s = np.where(np.isfinite(s) & (s > 0), s, 1.0)
    return (1.0 / s).astype(np.float32)


@dataclass
class _Choice:
    multiplier: np.ndarray   # [K]
    codes: np.ndarray        # [out, K] int8
    scale: np.ndarray        # [out]
    error: float             # product_error on the sample rows


def _nearest_error(sample: np.ndarray, exact: np.ndarray, weight: np.ndarray,
                   multiplier: np.ndarray) -> float:
    """product_error of nearest rounding of weight / multiplier."""
    q, scale = quantize_rows((weight / multiplier[None, :]).astype(np.float32))
    return product_error(sample, exact, multiplier, q, scale)


def choose(x: np.ndarray, weight: np.ndarray) -> Tuple[_Choice, float]:
    """The stored form of one projection with calibration inputs x [rows, K]
    and weight [out, K], and the error nearest rounding without smoothing
    would have (for the summary). The alphas of ALPHAS are ranked by their
    error with nearest rounding; the best and no smoothing at all are then
    rounded against the inputs (gptq.py) and measured, and smoothing is kept
    only when it lowers the error by MIN_GAIN."""
    sample = _sample(x)
    exact = exact_product(sample, weight)             # [sample rows, out], once per projection
    h = hessian(x)                                    # XᵀX; (X ⊙ m)ᵀ(X ⊙ m) = H ⊙ m mᵀ
    ones = np.ones(weight.shape[1], np.float32)
    plain_nearest = _nearest_error(sample, exact, weight, ones)
    candidates = [smoothing_multiplier(x, weight, alpha) for alpha in ALPHAS]
    best_alpha = min(candidates, key=lambda m: _nearest_error(sample, exact, weight, m))

    def rounded(m: np.ndarray) -> _Choice:
        stored = (weight / m[None, :]).astype(np.float32)
        m64 = m.astype(np.float64)
        codes, scale = gptq_rows(stored, h * np.outer(m64, m64))
        return _Choice(m, codes, scale, product_error(sample, exact, m, codes, scale))
    plain, smoothed = rounded(ones), rounded(best_alpha)
    best = smoothed if smoothed.error <= plain.error * (1.0 - MIN_GAIN) else plain
    return best, plain_nearest


def calibrate(spec: ModelSpec, lines: Optional[Sequence[str]] = None,
              sentences: int = DEFAULT_SENTENCES, tied_tables: bool = False) -> Int8Plan:
    """The int8 plan of a spec of a family that calibrates from calibration
    `lines` (source text) or, when None, `sentences` synthetic ones.
    `tied_tables`: a tied output projection's codes are error-compensated
    too (no smoothing: the codes are the table's, which lookups read without
    multipliers) and planned under the table's name; for files whose tables
    have residual codes, which keep the lookups near the float table
    whatever the codes (docs/int8-quality.md)."""
    cfg = spec.config
    family = families.of(cfg)
    if not calibrates(family):
        raise UserError(f"int8 calibration is for the {calibrated_families()} family")
    synthetic = lines is None
    texts = synthetic_sentences(spec.tokenizer_model, sentences) if synthetic else list(lines)
    sp = _processor(spec.tokenizer_model)
    model = family.forward_pass(cfg, resolved_weights(cfg, spec.weights), np.float64)
    tokens = spec.special_tokens
    banned = sorted(set(spec.decoding.banned_tokens if spec.decoding is not None
                        else (tokens.pad, tokens.bos)) - {tokens.eos})
    sources = [ids[:cfg.max_positions] for ids in (source_ids(spec, sp, text) for text in texts)]
    sources = [ids for ids in sources if ids]
    if not sources:
        raise UserError("no calibration sentence could be encoded")
    limits = [min(MAX_OUTPUT_TOKENS, 2 * len(ids) + 10, cfg.max_positions - 1) for ids in sources]
    outputs = model.greedy(sources, tokens.decoder_start, tokens.eos, limits, banned)
    pairs = [(src, [tokens.decoder_start] + out) for src, out in zip(sources, outputs)]
    inputs = recorded_inputs(model, pairs, ROWS_PER_PROJECTION, SEED)

    wanted = set(projections_to_calibrate(spec))  # not tied ones, not the source's codes
    tied = tied_projections(spec) if tied_tables else {}
    plan = Int8Plan(sentences=len(pairs), synthetic=synthetic)
    before = after = 0.0
    for prefix, x in inputs.items():
        name = prefix + ".weight"
        if name in tied:
            table = np.asarray(spec.weights[tied[name]], dtype=np.float32)
            plan.codes[tied[name]] = gptq_rows(table, hessian(x))
            continue
        if name not in wanted:
            continue
        weight = np.asarray(spec.weights[name], dtype=np.float32)
        chosen, nearest_error = choose(x, weight)
        plan.codes[name] = (chosen.codes, chosen.scale)
        plan.multipliers[name] = chosen.multiplier
        before += nearest_error
        after += chosen.error
    count = max(len(plan.multipliers), 1)
    plan.error_before, plan.error_after = before / count, after / count
    return plan

