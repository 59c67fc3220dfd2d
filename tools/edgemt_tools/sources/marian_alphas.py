"""The alphas of Firefox's Marian models: Int8PerTensorStatic matrices.

A `model.<pair>.intgemm.alphas.bin` holds, beside the intgemm8 weights, a
float `<weight>_QuantMultA` [1, 1] per int8 product: a fixed activation
multiplier qA. browsermt's Marian (Bergamot, Firefox; `gemm-precision:
int8shiftAlphaAll`) quantizes the product's input as round(x · qA) clamped
to ±127 and scales the int32 sums by unquant = 1 / (qA · qB)
(docs/marian-formats.md 1.5), its product shifted: activations go in as
unsigned codes + 127 and a corrected bias, bias + Σ_k q_w · m with
m = -(127 / qA)(127 / qB) / 127, takes the shift out again in float32 (the
runtime adds 127 · Σ_k q_w to its exact sums to round alike: GemmArgs::
sum_shift). In that mode the output layer is an int8
product too: the float Wemb (browsermt widens its codes) quantized again
with qB = 127 / max|Wemb|, its alpha `Wemb_QuantMultA`, with a shortlist
too (Bergamot 0.4.5: halving `Wemb_QuantMultA` changed 58 and 48 of 300
greedy lines without and with the shortlist, halving `none_QuantMultA`,
which extract_stats.py adds for the shortlist's case, none).

static_matrices gives each edgemt projection (codes, row scales = unquant
as Marian computes it in float32, qA, the corrected bias). A fused projection (qkv, the
cross-attention kv, the SSRU gates) reads one input, so its parts' alphas
must agree; they do when extract_stats.py made them from that input.
"""

import dataclasses
from typing import Dict, Mapping, Tuple

import numpy as np

from ..errors import UserError
from ..model_spec import ModelSpec, expected_tensors, resolve_alias

SUFFIX = "_QuantMultA"

# edgemt projection (after "<stack>.layers.<i>.") -> Marian weights (after "<stack>_l<i+1>_").
PARTS = {"self_attn.qkv": ("self_Wq", "self_Wk", "self_Wv"), "self_attn.out": ("self_Wo",),
         "ffn.in": ("ffn_W1",), "ffn.out": ("ffn_W2",), "ssru.gates": ("rnn_W", "rnn_Wf"),
         "cross_attn.q": ("context_Wq",), "cross_attn.kv": ("context_Wk", "context_Wv"),
         "cross_attn.out": ("context_Wo",)}

Static = Dict[str, Tuple[np.ndarray, np.ndarray, np.float32, np.ndarray]]


def alphas_of(items: Mapping[str, np.ndarray]) -> Dict[str, np.float32]:
    """Marian weight name -> its alpha, for every `*_QuantMultA` item."""
    return {name[:-len(SUFFIX)]: np.float32(np.asarray(value, np.float32).reshape(-1)[0])
            for name, value in items.items() if name.endswith(SUFFIX)}


def unquant(alpha: np.float32, quant_mults: np.ndarray) -> np.ndarray:
    """Marian's 1.0f / (aQuantMult * bQuantMult) for each row's quantMult,
    in float32 (every numpy operation on float32 rounds to float32)."""
    return np.float32(1) / (np.float32(alpha) * np.asarray(quant_mults, np.float32))


def shifted_bias(codes: np.ndarray, alpha: np.float32, quant_mults: np.ndarray,
                 bias: np.ndarray) -> np.ndarray:
    """intgemm's Int8Shift::PrepareBias as browsermt's Marian calls it: per
    output n, float(Σ_k codes[n, k]) · m[n] + bias[n] (float32, multiply then
    add), m = (-1 · ((127 / qA) · (127 / qB[n]))) / 127."""
    f32 = np.float32
    m = -((f32(127) / f32(alpha)) * (f32(127) / np.asarray(quant_mults, f32))) / f32(127)
    sums = codes.astype(np.int64).sum(axis=1).astype(f32)
    return sums * m + np.asarray(bias, f32)


def output_weight_name(cfg) -> str:
    """The Marian weight of the output layer, whose alpha it reads."""
    if not cfg.tied_output:
        return "decoder_ff_logit_out_Wt"
    return "Wemb" if cfg.shared_embeddings else "decoder_Wemb"


def marian_parts(matrix: str) -> Tuple[str, ...]:
    """The Marian weights of edgemt matrix `matrix` ("decoder.layers.0.ssru.gates.weight")."""
    stack, _, layer, rest = matrix[:-len(".weight")].split(".", 3)
    return tuple(f"{stack}_l{int(layer) + 1}_{part}" for part in PARTS[rest])


def _alpha(alphas: Mapping[str, np.float32], names, where: str, matrix: str) -> np.float32:
    missing = [name + SUFFIX for name in names if name not in alphas]
    if missing:
        raise UserError(f"{where}: the model has alphas but not {missing[0]}")
    for name in names:
        if not (np.isfinite(alphas[name]) and alphas[name] > 0):
            raise UserError(f"{where}: {name}{SUFFIX} is {float(alphas[name])}; an alpha (the "
                            "activations' fixed quantization multiplier) must be a positive number")
    values = {float(alphas[name]) for name in names}
    if len(values) > 1:
        raise UserError(f"{where}: {' / '.join(n + SUFFIX for n in names)} differ ({sorted(values)}); "
                        f"edgemt computes {matrix} as one product, so its parts need one alpha "
                        "(convert with --per-row-activations to ignore the alphas)")
    return alphas[names[0]]


def static_matrices(alphas: Mapping[str, np.float32], codes: Mapping[str, Tuple[np.ndarray, np.ndarray]],
                    quant_mults: Mapping[str, np.ndarray], weights: Mapping[str, np.ndarray],
                    output_table: np.ndarray, output_alpha: str, where: str) -> Static:
    """edgemt matrix -> (codes, row scales, qA, corrected bias) for every
    projection of `codes` (Marian's intgemm8 matrices; `quant_mults` their
    rows' quantMult, marian.intgemm8_quant_mults; `weights` the model's, for
    the biases) and the output projection, quantized from `output_table`
    (the float Wemb) with the alpha of Marian weight `output_alpha`
    (output_weight_name)."""
    static: Static = {}
    for matrix, (q, _) in codes.items():
        if matrix.startswith("embedding.") or matrix == "output.weight":
            continue
        alpha = _alpha(alphas, marian_parts(matrix), where, matrix)
        scales = unquant(alpha, quant_mults[matrix])
        bias = weights.get(matrix[:-len("weight")] + "bias", np.zeros(len(q), np.float32))
        static[matrix] = (q, scales, alpha, shifted_bias(q, alpha, quant_mults[matrix], bias))
    alpha = _alpha(alphas, (output_alpha,), where, "output.weight")
    table = np.asarray(output_table, np.float32)
    quant_mult = np.float32(127) / np.float32(np.abs(table).max())
    q = np.clip(np.rint(table * quant_mult), -127, 127).astype(np.int8)
    mults = np.full(len(table), quant_mult, np.float32)
    bias = weights.get("output.bias", np.zeros(len(q), np.float32))
    static["output.weight"] = (q, unquant(alpha, mults), alpha, shifted_bias(q, alpha, mults, bias))
    return static


def static_spec(spec: ModelSpec) -> ModelSpec:
    """`spec` as an Int8PerTensorStatic file holds it: an output projection
    of its own (an int8 matrix; the embedding tables stay float32) with a
    bias, and every projection's bias with Marian's shift correction
    (ModelSpec.int8_static)."""
    weights = dict(spec.weights)
    if spec.config.tied_output:
        weights["output.weight"] = weights[resolve_alias(expected_tensors(spec.config, "fp32"),
                                                         "output.weight")]
    for matrix, (_, _, _, bias) in spec.int8_static.items():
        weights[matrix[:-len("weight")] + "bias"] = bias
    config = dataclasses.replace(spec.config, tied_output=False, output_bias=True)
    return dataclasses.replace(spec, config=config, weights=weights)
