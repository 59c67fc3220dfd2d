"""What an edgemt model file holds, independent of any checkpoint format.

The dataclasses mirror the tables of schema/edgemt.fbs; `expected_tensors`
lists every tensor the config implies, walked from the family's tensor table
(schema/transformer_tensors.def, which the runtime compiles too), with its
shape and whether it is a matrix (stored in the file's weight dtype) or a
vector / table (always F32). In int8 files every matrix `X` is followed by its
per-row scales `X_scale` (F32 [out]; QuantizationScheme.Int8PerRowDynamic).
The converter validates against this list and the reader uses it to check a
file; the runtime's verifier and loader read the same table.
"""

import os
import re
from collections import OrderedDict
from dataclasses import dataclass, field
from typing import Dict, Mapping, Optional, Tuple

import numpy as np

ACTIVATIONS = ("relu", "gelu", "swish")
# Model.decoding.rules (schema SearchRules): whose beam search the model follows.
SEARCH_RULES = ("edgemt", "opennmt", "marian", "huggingface")
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
    # Rows of embedding.source when the source side has a vocabulary of its
    # own; 0: vocab_size.
    source_vocab_size: int = 0
    # The first decoder input is a zero vector plus its position (Marian).
    zero_decoder_start: bool = False
    # Pre-norm decoder self-attention memory from the raw layer input after
    # the first step (Marian's decoding; schema/edgemt.fbs).
    raw_decoder_self_memory: bool = False


@dataclass(frozen=True)
class Decoding:
    """The source framework's search rules and decoding defaults
    (schema `Decoding`; tools/edgemt_tools/SEARCH.md)."""
    rules: str = "edgemt"             # one of SEARCH_RULES
    beam_size: int = 1
    length_penalty: float = 1.0
    word_penalty: float = 0.0
    max_len_a: float = 2.0
    max_len_b: float = 10.0
    banned_tokens: Tuple[int, ...] = ()  # target ids never generated


@dataclass(frozen=True)
class SideTokenizer:
    """One side's tokenizer beyond a bare SentencePiece model: the model's
    own vocabulary of pieces (id i = pieces[i]; looked up by string) and
    that side's unk/eos ids (-1: SpecialTokens')."""
    spm: bytes
    pieces: Optional[Tuple[str, ...]] = None
    unk_id: int = -1
    eos_id: int = -1


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
    # Format version 3 (models from other frameworks). source_pieces etc.
    # extend the source tokenizer (`tokenizer_model`); target_tokenizer is the
    # target side's when it differs; decoding None: edgemt's defaults.
    source_pieces: Optional[Tuple[str, ...]] = None
    source_unk_id: int = -1
    source_eos_id: int = -1
    target_tokenizer: Optional[SideTokenizer] = None
    decoding: Optional[Decoding] = None


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
    source_pieces: Optional[Tuple[str, ...]] = None
    source_unk_id: int = -1
    source_eos_id: int = -1
    target_tokenizer: Optional[SideTokenizer] = None
    decoding: Optional[Decoding] = None


@dataclass(frozen=True)
class TensorSpec:
    shape: Tuple[int, ...]
    kind: str                         # MATRIX or VECTOR
    alias_of: Optional[str] = None    # same bytes as this tensor


# The Transformer's tensors come from the family's one table,
# schema/transformer_tensors.def, which the runtime compiles as an X-macro;
# here its lines are parsed (the file documents the columns).
TENSOR_TABLE = os.path.join(os.path.dirname(os.path.abspath(__file__)), os.pardir, os.pardir,
                            "schema", "transformer_tensors.def")
_TABLE_LINE = re.compile(r'^TRANSFORMER_TENSOR\((\w+),\s*(\w+),\s*"([^"]+)",\s*(\w+),'
                         r'\s*(\w+),\s*(\w+),\s*(\w+)\)\s*$')
_GROUPS = ("MODEL", "ENCODER_LAYER", "ENCODER_END", "DECODER_LAYER", "DECODER_END")
_KINDS = ("MATRIX", "TABLE", "VECTOR", "LINEAR", "NORM")
_DIMS = ("D", "D2", "D3", "F", "V", "S", "P", "N")
_CONDITIONS = ("ALWAYS", "IF_OUTPUT_BIAS", "IF_ENCODER_FINAL_NORM", "IF_DECODER_FINAL_NORM",
               "ALIAS_IF_SHARED_EMBEDDINGS", "ALIAS_IF_TIED_OUTPUT")


@dataclass(frozen=True)
class TableEntry:
    id: str
    group: str
    name: str
    kind: str
    rows: str
    cols: str
    condition: str


def read_tensor_table(path: str = TENSOR_TABLE) -> Tuple[TableEntry, ...]:
    """The entries of a family tensor table, in file order; ValueError on a
    line that is neither a comment, blank, nor a well-formed entry."""
    entries = []
    with open(path, encoding="utf-8") as handle:
        for number, line in enumerate(handle, 1):
            text = line.strip()
            if not text or text.startswith("//"):
                continue
            match = _TABLE_LINE.match(text)
            if match is None:
                raise ValueError(f"{path}:{number}: not a TRANSFORMER_TENSOR line: {text}")
            entry = TableEntry(*match.groups())
            for value, known in ((entry.group, _GROUPS), (entry.kind, _KINDS),
                                 (entry.rows, _DIMS), (entry.cols, _DIMS),
                                 (entry.condition, _CONDITIONS)):
                if value not in known:
                    raise ValueError(f"{path}:{number}: unknown value {value}")
            entries.append(entry)
    return tuple(entries)


_TABLE = read_tensor_table()
_BY_ID = {entry.id: entry for entry in _TABLE}


def _size(dim: str, cfg: TransformerConfig) -> int:
    return {"D": cfg.d_model, "D2": 2 * cfg.d_model, "D3": 3 * cfg.d_model, "F": cfg.ffn_dim,
            "V": cfg.vocab_size, "S": cfg.source_vocab_size or cfg.vocab_size,
            "P": cfg.max_positions, "N": 0}[dim]


def _present(condition: str, cfg: TransformerConfig) -> bool:
    return {"IF_OUTPUT_BIAS": cfg.output_bias,
            "IF_ENCODER_FINAL_NORM": cfg.encoder_final_norm,
            "IF_DECODER_FINAL_NORM": cfg.decoder_final_norm}.get(condition, True)


def _owner(condition: str, cfg: TransformerConfig) -> Optional[str]:
    if condition == "ALIAS_IF_SHARED_EMBEDDINGS" and cfg.shared_embeddings:
        return _BY_ID["kSourceEmbedding"].name
    if condition == "ALIAS_IF_TIED_OUTPUT" and cfg.tied_output:
        return _BY_ID["kTargetEmbedding"].name
    return None


def _add_entry(entry: TableEntry, scope: str, cfg: TransformerConfig,
               out: "OrderedDict[str, TensorSpec]") -> None:
    name = f"{scope}.{entry.name}" if scope else entry.name
    rows, cols = _size(entry.rows, cfg), _size(entry.cols, cfg)
    if entry.kind == "MATRIX":
        out[name] = TensorSpec((rows, cols), MATRIX, _owner(entry.condition, cfg))
    elif entry.kind == "TABLE":
        out[name] = TensorSpec((rows, cols), VECTOR)
    elif entry.kind == "VECTOR":
        out[name] = TensorSpec((rows,), VECTOR)
    elif entry.kind == "LINEAR":
        out[f"{name}.weight"] = TensorSpec((rows, cols), MATRIX)
        out[f"{name}.bias"] = TensorSpec((rows,), VECTOR)
    else:  # NORM
        out[f"{name}.weight"] = TensorSpec((rows,), VECTOR)
        out[f"{name}.bias"] = TensorSpec((rows,), VECTOR)


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
    """The tensors of an fp32/fp16 file (no scales): the table's groups in
    file order, the layer groups once per layer."""
    out: "OrderedDict[str, TensorSpec]" = OrderedDict()
    for group in _GROUPS:
        if group == "ENCODER_LAYER":
            scopes = [f"encoder.layers.{i}" for i in range(cfg.encoder_layers)]
        elif group == "DECODER_LAYER":
            scopes = [f"decoder.layers.{i}" for i in range(cfg.decoder_layers)]
        else:
            scopes = [""]
        for scope in scopes:
            for entry in _TABLE:
                if entry.group == group and _present(entry.condition, cfg):
                    _add_entry(entry, scope, cfg, out)
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
