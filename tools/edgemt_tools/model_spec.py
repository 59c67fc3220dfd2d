"""What an edgemt model file holds, independent of any checkpoint format.

The dataclasses mirror the tables of schema/edgemt.fbs; `expected_tensors`
lists every tensor name of schema/TENSORS.md with the shape the config implies
and whether it is a matrix (stored in the file's weight dtype) or a vector /
table (always F32). In int8 files every matrix `X` is followed by its per-row
scales `X_scale` (F32 [out]; QuantizationScheme.Int8PerRowDynamic). The
converter validates against this list and the reader uses it to check a file,
so both sides agree on one definition.
"""

from collections import OrderedDict
from dataclasses import dataclass, field
from typing import Dict, Mapping, Optional, Tuple

import numpy as np

ACTIVATIONS = ("relu", "gelu", "swish")
NORM_PLACEMENTS = ("post", "pre")
WEIGHT_DTYPES = ("fp32", "fp16", "int8")

# Model.quantization (schema QuantizationScheme), by the names of its values.
QUANTIZATION_NONE = "None"
QUANTIZATION_INT8 = "Int8PerRowDynamic"

MATRIX = "matrix"  # stored in the weight dtype (F32, F16 or I8)
VECTOR = "f32"     # biases, LayerNorm parameters, the position table, int8 scales: always F32

SCALE_SUFFIX = "_scale"  # int8 files: `X_scale` holds the per-row scales of matrix `X`


def quantization_scheme(weight_dtype: str) -> str:
    """The only scheme a file with this weight dtype may declare: int8 files
    are Int8PerRowDynamic, fp32/fp16 files None (schema/edgemt.fbs)."""
    if weight_dtype not in WEIGHT_DTYPES:
        raise ValueError(f"unknown weight dtype {weight_dtype!r} (known: {WEIGHT_DTYPES})")
    return QUANTIZATION_INT8 if weight_dtype == "int8" else QUANTIZATION_NONE


def scale_name(matrix_name: str) -> str:
    """Name of the F32 per-row scale tensor of an int8 matrix."""
    return matrix_name + SCALE_SUFFIX


@dataclass(frozen=True)
class TransformerConfig:
    """Architecture; field names follow the FlatBuffers `TransformerConfig` table."""
    encoder_layers: int
    decoder_layers: int
    d_model: int
    heads: int
    ffn_dim: int
    vocab_size: int
    max_positions: int
    activation: str = "relu"
    norm_placement: str = "post"
    layer_norm_eps: float = 1e-5
    encoder_final_norm: bool = False
    decoder_final_norm: bool = False
    embedding_scale: float = 1.0
    tied_output: bool = False
    output_bias: bool = False
    shared_embeddings: bool = False


@dataclass(frozen=True)
class SpecialTokens:
    pad: int
    unk: int
    bos: int
    eos: int
    decoder_start: int


@dataclass(frozen=True)
class Provenance:
    source_format: str = ""
    source_checkpoint: str = ""
    source_sha256: str = ""
    converter_version: str = ""
    created_utc: str = ""


@dataclass(frozen=True)
class ModelHeader:
    """Everything in the FlatBuffer except the tensor table."""
    config: TransformerConfig
    special_tokens: SpecialTokens
    source_language: str
    target_language: str
    weight_dtype: str                 # "fp32" | "fp16" | "int8"
    tokenizer_model: bytes            # serialized SentencePiece ModelProto
    append_eos_to_source: bool = True
    provenance: Provenance = field(default_factory=Provenance)
    # QUANTIZATION_NONE | QUANTIZATION_INT8. None lets the writer store the
    # scheme weight_dtype implies; the reader always fills in what the file says.
    # Set explicitly only to write deliberately inconsistent test files.
    quantization: Optional[str] = None


@dataclass
class ModelSpec:
    """What a checkpoint source (sources/) hands the writer (writer.py): the
    family's config, the header fields, and the weights as float32 arrays
    under their canonical names and layouts (schema/TENSORS.md): every tensor
    of `expected_tensors(config, "fp32")` that is not an alias. No storage
    type yet: the writer quantizes (int8) or narrows (fp16)."""
    config: TransformerConfig
    special_tokens: SpecialTokens
    source_language: str
    target_language: str
    tokenizer_model: bytes            # serialized SentencePiece ModelProto
    weights: Mapping[str, np.ndarray]
    append_eos_to_source: bool = True
    provenance: Provenance = field(default_factory=Provenance)


@dataclass(frozen=True)
class TensorSpec:
    shape: Tuple[int, ...]
    kind: str                         # MATRIX or VECTOR
    alias_of: Optional[str] = None    # same bytes as this tensor


def _attention_self(prefix: str, d: int, out: Dict[str, TensorSpec]) -> None:
    out[f"{prefix}.self_attn.qkv.weight"] = TensorSpec((3 * d, d), MATRIX)
    out[f"{prefix}.self_attn.qkv.bias"] = TensorSpec((3 * d,), VECTOR)
    out[f"{prefix}.self_attn.out.weight"] = TensorSpec((d, d), MATRIX)
    out[f"{prefix}.self_attn.out.bias"] = TensorSpec((d,), VECTOR)
    _norm(f"{prefix}.self_attn_norm", d, out)


def _attention_cross(prefix: str, d: int, out: Dict[str, TensorSpec]) -> None:
    out[f"{prefix}.cross_attn.q.weight"] = TensorSpec((d, d), MATRIX)
    out[f"{prefix}.cross_attn.q.bias"] = TensorSpec((d,), VECTOR)
    out[f"{prefix}.cross_attn.kv.weight"] = TensorSpec((2 * d, d), MATRIX)
    out[f"{prefix}.cross_attn.kv.bias"] = TensorSpec((2 * d,), VECTOR)
    out[f"{prefix}.cross_attn.out.weight"] = TensorSpec((d, d), MATRIX)
    out[f"{prefix}.cross_attn.out.bias"] = TensorSpec((d,), VECTOR)
    _norm(f"{prefix}.cross_attn_norm", d, out)


def _ffn(prefix: str, d: int, f: int, out: Dict[str, TensorSpec]) -> None:
    out[f"{prefix}.ffn.in.weight"] = TensorSpec((f, d), MATRIX)
    out[f"{prefix}.ffn.in.bias"] = TensorSpec((f,), VECTOR)
    out[f"{prefix}.ffn.out.weight"] = TensorSpec((d, f), MATRIX)
    out[f"{prefix}.ffn.out.bias"] = TensorSpec((d,), VECTOR)
    _norm(f"{prefix}.ffn_norm", d, out)


def _norm(prefix: str, d: int, out: Dict[str, TensorSpec]) -> None:
    out[f"{prefix}.weight"] = TensorSpec((d,), VECTOR)
    out[f"{prefix}.bias"] = TensorSpec((d,), VECTOR)


def expected_tensors(cfg: TransformerConfig,
                     weight_dtype: str = "fp32") -> "OrderedDict[str, TensorSpec]":
    """Every tensor a file with this config and weight dtype must hold
    (schema/TENSORS.md), in a stable, readable order (embeddings, positions,
    output, encoder, decoder). Aliases carry `alias_of` and own no bytes.
    With weight_dtype "int8" each matrix is directly followed by its scales."""
    if weight_dtype not in WEIGHT_DTYPES:
        raise ValueError(f"unknown weight dtype {weight_dtype!r} (known: {WEIGHT_DTYPES})")
    specs = _float_tensors(cfg)
    return _with_scales(specs) if weight_dtype == "int8" else specs


def _with_scales(specs: "OrderedDict[str, TensorSpec]") -> "OrderedDict[str, TensorSpec]":
    """Insert `X_scale` [out] (F32) after every matrix X; the scales of an alias
    alias the scales of its target (output.weight_scale -> embedding.target_scale)."""
    out: "OrderedDict[str, TensorSpec]" = OrderedDict()
    for name, spec in specs.items():
        out[name] = spec
        if spec.kind == MATRIX:
            target = scale_name(spec.alias_of) if spec.alias_of is not None else None
            out[scale_name(name)] = TensorSpec((spec.shape[0],), VECTOR, target)
    return out


def _float_tensors(cfg: TransformerConfig) -> "OrderedDict[str, TensorSpec]":
    """The tensors of an fp32/fp16 file (no scales)."""
    d, f, v, p = cfg.d_model, cfg.ffn_dim, cfg.vocab_size, cfg.max_positions
    out: "OrderedDict[str, TensorSpec]" = OrderedDict()
    out["embedding.source"] = TensorSpec((v, d), MATRIX)
    out["embedding.target"] = TensorSpec(
        (v, d), MATRIX, "embedding.source" if cfg.shared_embeddings else None)
    out["position.table"] = TensorSpec((p, d), VECTOR)
    out["output.weight"] = TensorSpec(
        (v, d), MATRIX, "embedding.target" if cfg.tied_output else None)
    if cfg.output_bias:
        out["output.bias"] = TensorSpec((v,), VECTOR)
    for i in range(cfg.encoder_layers):
        prefix = f"encoder.layers.{i}"
        _attention_self(prefix, d, out)
        _ffn(prefix, d, f, out)
    if cfg.encoder_final_norm:
        _norm("encoder.final_norm", d, out)
    for i in range(cfg.decoder_layers):
        prefix = f"decoder.layers.{i}"
        _attention_self(prefix, d, out)
        _attention_cross(prefix, d, out)
        _ffn(prefix, d, f, out)
    if cfg.decoder_final_norm:
        _norm("decoder.final_norm", d, out)
    return out


def resolve_alias(specs: Dict[str, TensorSpec], name: str) -> str:
    """Follow alias links to the tensor that owns the bytes
    (output.weight -> embedding.target -> embedding.source)."""
    seen = set()
    while specs[name].alias_of is not None:
        if name in seen:
            raise ValueError(f"alias cycle at {name}")
        seen.add(name)
        name = specs[name].alias_of
    return name
