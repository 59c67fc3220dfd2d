"""What an edgemt model file holds, independent of any checkpoint format.

The dataclasses mirror the tables of schema/edgemt.fbs; `expected_tensors`
lists every tensor the config implies, walked from the family's tensor table
(schema/transformer_tensors.def for a TransformerConfig,
schema/rnn_tensors.def for an RnnConfig; the runtime compiles both), with its
shape and whether it is a matrix (stored in the file's weight dtype) or a
vector / table (always F32). In int8 files every matrix `X` is followed by its
per-row scales `X_scale` (F32 [out]; QuantizationScheme.Int8PerRowDynamic),
and in smoothed int8 files every projection matrix that owns its bytes then
by its smoothing vector `X_smooth` (F32 [in]; Int8SmoothedPerRowDynamic,
format version 5).
The converter validates against this list and the reader uses it to check a
file; the runtime's verifier and loader read the same table.

Families: a config's type names its family (the member of the schema's
FamilyConfig union). Each family is one `Family` record in FAMILIES (its
tensor table, the table's vocabulary of groups, dims and conditions, and how
a config sizes the dims and decides the conditions); everything else here,
and the writer, reader and validator, is family-neutral and looks the family
up with `family_of(config)`.
"""

import os
import re
from collections import OrderedDict
from dataclasses import dataclass, field
from typing import Callable, Dict, Mapping, Optional, Tuple, Union

import numpy as np

ACTIVATIONS = ("relu", "gelu", "swish")
# Model.decoding.rules (schema SearchRules): whose beam search the model follows.
SEARCH_RULES = ("edgemt", "opennmt", "marian", "huggingface")
NORM_PLACEMENTS = ("post", "pre")
WEIGHT_DTYPES = ("fp32", "fp16", "int8")

# Model.quantization (schema QuantizationScheme), by the names of its values.
QUANTIZATION_NONE = "None"
QUANTIZATION_INT8 = "Int8PerRowDynamic"
QUANTIZATION_INT8_SMOOTHED = "Int8SmoothedPerRowDynamic"
INT8_QUANTIZATIONS = (QUANTIZATION_INT8, QUANTIZATION_INT8_SMOOTHED)

MATRIX = "matrix"  # stored in the weight dtype (F32, F16 or I8)
VECTOR = "f32"     # biases, LayerNorm parameters, the position table, int8 scales: always F32

SCALE_SUFFIX = "_scale"  # int8 files: `X_scale` holds the per-row scales of matrix `X`
SMOOTH_SUFFIX = "_smooth"  # smoothed int8 files: `X_smooth` multiplies projection X's inputs


def quantization_scheme(weight_dtype: str) -> str:
    """The only scheme a file with this weight dtype may declare: int8 files
    are Int8PerRowDynamic, fp32/fp16 files None (schema/edgemt.fbs)."""
    if weight_dtype not in WEIGHT_DTYPES:
        raise ValueError(f"unknown weight dtype {weight_dtype!r} (known: {WEIGHT_DTYPES})")
    return QUANTIZATION_INT8 if weight_dtype == "int8" else QUANTIZATION_NONE


def scale_name(matrix_name: str) -> str:
    """Name of the F32 per-row scale tensor of an int8 matrix."""
    return matrix_name + SCALE_SUFFIX


def smooth_name(matrix_name: str) -> str:
    """Name of the F32 smoothing vector of a projection in a smoothed int8 file."""
    return matrix_name + SMOOTH_SUFFIX


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


# RnnConfig's enums (schema/edgemt.fbs), by the names of their values.
RNN_CELLS = ("Lstm", "Gru")
RNN_SCORES = ("Dot", "General", "Additive")
RNN_QUERIES = ("Current", "Previous")
RNN_DECODER_INPUTS = ("Embedding", "EmbeddingContext", "EmbeddingInputFeed")
RNN_OUTPUTS = ("TanhCombine", "LinearCombine", "StateContext")
RNN_GATES = {"Lstm": 4, "Gru": 3}


@dataclass(frozen=True)
class RnnConfig:
    """The RNN encoder-decoder with attention; field names follow the
    FlatBuffers `RnnConfig` table, enum fields hold the schema's value names
    (RNN_CELLS, RNN_SCORES, ...)."""
    layers: int
    source_embedding_dim: int
    target_embedding_dim: int
    hidden: int
    vocab_size: int
    max_positions: int
    cell: str = "Lstm"
    bidirectional_encoder: bool = False
    score: str = "Dot"
    query_bias: bool = False
    query: str = "Current"
    decoder_input: str = "Embedding"
    output: str = "TanhCombine"
    combine_bias: bool = False
    # Rows of embedding.source; 0: vocab_size.
    source_vocab_size: int = 0


FamilyConfig = Union[TransformerConfig, RnnConfig]


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
    config: FamilyConfig              # TransformerConfig or RnnConfig
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
    config: FamilyConfig              # TransformerConfig or RnnConfig
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
    # A matrix used as a product's weight (a LINEAR's .weight, a PROJECTION),
    # not an embedding table: smoothed int8 files give it `X_smooth`.
    projection: bool = False


# Each family's tensors come from its one table, schema/<family>_tensors.def,
# which the runtime compiles as an X-macro; here its lines are parsed (each
# file documents its columns, dims and conditions).
_SCHEMA_DIR = os.path.join(os.path.dirname(os.path.abspath(__file__)), os.pardir, os.pardir,
                           "schema")
TENSOR_TABLE = os.path.join(_SCHEMA_DIR, "transformer_tensors.def")
RNN_TENSOR_TABLE = os.path.join(_SCHEMA_DIR, "rnn_tensors.def")


@dataclass(frozen=True)
class TableEntry:
    id: str
    group: str
    name: str
    kind: str
    rows: str
    cols: str
    condition: str


@dataclass(frozen=True)
class TableSyntax:
    """What one family's table may say: its X-macro's name and the values
    each column accepts."""
    macro: str
    groups: Tuple[str, ...]
    kinds: Tuple[str, ...]
    dims: Tuple[str, ...]
    conditions: Tuple[str, ...]


_TRANSFORMER_SYNTAX = TableSyntax(
    macro="TRANSFORMER_TENSOR",
    groups=("MODEL", "ENCODER_LAYER", "ENCODER_END", "DECODER_LAYER", "DECODER_END"),
    kinds=("MATRIX", "PROJECTION", "TABLE", "VECTOR", "LINEAR", "NORM"),
    dims=("D", "D2", "D3", "F", "V", "S", "P", "N"),
    conditions=("ALWAYS", "IF_OUTPUT_BIAS", "IF_ENCODER_FINAL_NORM", "IF_DECODER_FINAL_NORM",
                "ALIAS_IF_SHARED_EMBEDDINGS", "ALIAS_IF_TIED_OUTPUT"))
_RNN_SYNTAX = TableSyntax(
    macro="RNN_TENSOR",
    groups=("MODEL", "ENCODER_LAYER", "DECODER_LAYER"),
    kinds=("MATRIX", "VECTOR", "LINEAR"),
    dims=("H", "H2", "ES", "ET", "V", "S", "GE", "GD", "EU", "EI", "DI", "OI", "N"),
    conditions=("ALWAYS", "IF_KEY", "IF_ADDITIVE", "IF_QUERY_BIAS", "IF_COMBINE",
                "IF_COMBINE_BIAS", "IF_BIDIRECTIONAL"))
_SYNTAX_BY_MACRO = {syntax.macro: syntax for syntax in (_TRANSFORMER_SYNTAX, _RNN_SYNTAX)}


def read_tensor_table(path: str = TENSOR_TABLE,
                      syntax: Optional[TableSyntax] = None) -> Tuple[TableEntry, ...]:
    """The entries of a family tensor table, in file order; ValueError on a
    line that is neither a comment, blank, nor a well-formed entry. Without
    `syntax`, the first entry's macro (TRANSFORMER_TENSOR, RNN_TENSOR) picks
    the family's; anything else is read as a Transformer table."""
    entries = []
    with open(path, encoding="utf-8") as handle:
        for number, line in enumerate(handle, 1):
            text = line.strip()
            if not text or text.startswith("//"):
                continue
            if syntax is None:
                macro = re.match(r"(\w+)\(", text)
                syntax = _SYNTAX_BY_MACRO.get(macro.group(1) if macro else "",
                                              _TRANSFORMER_SYNTAX)
            match = re.match(r'^' + syntax.macro + r'\((\w+),\s*(\w+),\s*"([^"]+)",\s*(\w+),'
                             r'\s*(\w+),\s*(\w+),\s*(\w+)\)\s*$', text)
            if match is None:
                raise ValueError(f"{path}:{number}: not a {syntax.macro} line: {text}")
            entry = TableEntry(*match.groups())
            for value, known in ((entry.group, syntax.groups), (entry.kind, syntax.kinds),
                                 (entry.rows, syntax.dims), (entry.cols, syntax.dims),
                                 (entry.condition, syntax.conditions)):
                if value not in known:
                    raise ValueError(f"{path}:{number}: unknown value {value}")
            entries.append(entry)
    return tuple(entries)


@dataclass(frozen=True)
class Family:
    """One model family: the member of the schema's FamilyConfig union whose
    type is `config_type`, and its tensor table with the rules that size its
    dims (`size(dim, cfg, layer)`, layer None outside layer groups), decide
    its conditions (`present`) and aliases (`owner`: the id of the table
    entry that owns the bytes, or None), and repeat its layer groups
    (`layers(group, cfg)`: count, or None for a group that is not per layer).
    `smoothable`: its LINEARs are projections that smoothed int8 files give a
    smoothing vector (the runtime's walk marks them alike)."""
    name: str
    config_type: type
    table: Tuple[TableEntry, ...]
    syntax: TableSyntax
    size: Callable[[str, object, Optional[int]], int]
    present: Callable[[str, object], bool]
    owner: Callable[[str, object], Optional[str]]
    layers: Callable[[str, object], Optional[int]]
    smoothable: bool = False


def _transformer_size(dim: str, cfg: TransformerConfig, layer: Optional[int]) -> int:
    return {"D": cfg.d_model, "D2": 2 * cfg.d_model, "D3": 3 * cfg.d_model, "F": cfg.ffn_dim,
            "V": cfg.vocab_size, "S": cfg.source_vocab_size or cfg.vocab_size,
            "P": cfg.max_positions, "N": 0}[dim]


def _transformer_present(condition: str, cfg: TransformerConfig) -> bool:
    return {"IF_OUTPUT_BIAS": cfg.output_bias,
            "IF_ENCODER_FINAL_NORM": cfg.encoder_final_norm,
            "IF_DECODER_FINAL_NORM": cfg.decoder_final_norm}.get(condition, True)


def _transformer_owner(condition: str, cfg: TransformerConfig) -> Optional[str]:
    if condition == "ALIAS_IF_SHARED_EMBEDDINGS" and cfg.shared_embeddings:
        return "kSourceEmbedding"
    if condition == "ALIAS_IF_TIED_OUTPUT" and cfg.tied_output:
        return "kTargetEmbedding"
    return None


def _transformer_layers(group: str, cfg: TransformerConfig) -> Optional[int]:
    return {"ENCODER_LAYER": cfg.encoder_layers,
            "DECODER_LAYER": cfg.decoder_layers}.get(group)


def rnn_encoder_units(cfg: RnnConfig) -> int:
    """Units per direction of an encoder layer (EU): hidden/2 when bidirectional."""
    return cfg.hidden // 2 if cfg.bidirectional_encoder else cfg.hidden


def _rnn_size(dim: str, cfg: RnnConfig, layer: Optional[int]) -> int:
    gates = RNN_GATES.get(cfg.cell, 0)
    units = rnn_encoder_units(cfg)
    h = cfg.hidden
    if dim == "EI":
        return cfg.source_embedding_dim if layer == 0 else h
    if dim == "DI":
        if layer != 0:
            return h
        fed = cfg.decoder_input in ("EmbeddingContext", "EmbeddingInputFeed")
        return cfg.target_embedding_dim + (h if fed else 0)
    return {"H": h, "H2": 2 * h, "ES": cfg.source_embedding_dim,
            "ET": cfg.target_embedding_dim, "V": cfg.vocab_size,
            "S": cfg.source_vocab_size or cfg.vocab_size, "GE": gates * units,
            "GD": gates * h, "EU": units, "OI": 2 * h if cfg.output == "StateContext" else h,
            "N": 0}[dim]


def _rnn_present(condition: str, cfg: RnnConfig) -> bool:
    combine = cfg.output in ("TanhCombine", "LinearCombine")
    return {"IF_KEY": cfg.score in ("General", "Additive"),
            "IF_ADDITIVE": cfg.score == "Additive",
            "IF_QUERY_BIAS": cfg.query_bias,
            "IF_COMBINE": combine,
            "IF_COMBINE_BIAS": cfg.combine_bias,
            "IF_BIDIRECTIONAL": cfg.bidirectional_encoder}.get(condition, True)


def _no_alias(condition: str, cfg) -> Optional[str]:
    return None


def _rnn_layers(group: str, cfg: RnnConfig) -> Optional[int]:
    return cfg.layers if group in ("ENCODER_LAYER", "DECODER_LAYER") else None


# Family name -> Family; a config's type picks one (family_of).
FAMILIES = {
    "transformer": Family("transformer", TransformerConfig,
                          read_tensor_table(TENSOR_TABLE, _TRANSFORMER_SYNTAX),
                          _TRANSFORMER_SYNTAX, _transformer_size, _transformer_present,
                          _transformer_owner, _transformer_layers, smoothable=True),
    "rnn": Family("rnn", RnnConfig, read_tensor_table(RNN_TENSOR_TABLE, _RNN_SYNTAX),
                  _RNN_SYNTAX, _rnn_size, _rnn_present, _no_alias, _rnn_layers),
}


def family_of(cfg) -> Family:
    """The family whose config type `cfg` is; TypeError for anything else."""
    for family in FAMILIES.values():
        if type(cfg) is family.config_type:
            return family
    raise TypeError(f"not a family config: {type(cfg).__name__}")


def _add_entry(family: Family, entry: TableEntry, scope: str, layer: Optional[int], cfg,
               out: "OrderedDict[str, TensorSpec]") -> None:
    name = f"{scope}.{entry.name}" if scope else entry.name
    rows, cols = family.size(entry.rows, cfg, layer), family.size(entry.cols, cfg, layer)
    if entry.kind in ("MATRIX", "PROJECTION"):
        owner = family.owner(entry.condition, cfg)
        alias = None
        if owner is not None:
            alias = next(e.name for e in family.table if e.id == owner)
        out[name] = TensorSpec((rows, cols), MATRIX, alias, entry.kind == "PROJECTION")
    elif entry.kind == "TABLE":
        out[name] = TensorSpec((rows, cols), VECTOR)
    elif entry.kind == "VECTOR":
        out[name] = TensorSpec((rows,), VECTOR)
    elif entry.kind == "LINEAR":
        out[f"{name}.weight"] = TensorSpec((rows, cols), MATRIX, projection=family.smoothable)
        out[f"{name}.bias"] = TensorSpec((rows,), VECTOR)
    else:  # NORM
        out[f"{name}.weight"] = TensorSpec((rows,), VECTOR)
        out[f"{name}.bias"] = TensorSpec((rows,), VECTOR)


def expected_tensors(cfg: FamilyConfig, weight_dtype: str = "fp32",
                     quantization: Optional[str] = None) -> "OrderedDict[str, TensorSpec]":
    """Every tensor a file with this config (either family), weight dtype
    and quantization scheme (None: the one weight_dtype implies) must hold
    (schema/TENSORS.md), in the family table's order (its groups in file
    order, layer groups once per layer). Aliases carry `alias_of` and own no
    bytes.
    With weight_dtype "int8" each matrix is directly followed by its scales,
    and with QUANTIZATION_INT8_SMOOTHED each projection that owns its bytes
    then by its smoothing vector."""
    if weight_dtype not in WEIGHT_DTYPES:
        raise ValueError(f"unknown weight dtype {weight_dtype!r} (known: {WEIGHT_DTYPES})")
    specs = _float_tensors(cfg)
    if weight_dtype != "int8":
        return specs
    return _with_scales(specs, quantization == QUANTIZATION_INT8_SMOOTHED)


def _with_scales(specs: "OrderedDict[str, TensorSpec]",
                 smoothed: bool) -> "OrderedDict[str, TensorSpec]":
    """Insert `X_scale` [out] (F32) after every matrix X; the scales of an alias
    alias the scales of its target (output.weight_scale -> embedding.target_scale).
    `smoothed`: also `X_smooth` [in] (F32) after the scales of a projection
    that is not an alias."""
    out: "OrderedDict[str, TensorSpec]" = OrderedDict()
    for name, spec in specs.items():
        out[name] = spec
        if spec.kind == MATRIX:
            target = scale_name(spec.alias_of) if spec.alias_of is not None else None
            out[scale_name(name)] = TensorSpec((spec.shape[0],), VECTOR, target)
            if smoothed and spec.projection and spec.alias_of is None:
                out[smooth_name(name)] = TensorSpec((spec.shape[1],), VECTOR)
    return out


def _float_tensors(cfg: FamilyConfig) -> "OrderedDict[str, TensorSpec]":
    """The tensors of an fp32/fp16 file (no scales): the table's groups in
    file order, the layer groups once per layer."""
    family = family_of(cfg)
    out: "OrderedDict[str, TensorSpec]" = OrderedDict()
    for group in family.syntax.groups:
        count = family.layers(group, cfg)
        if count is None:
            scopes = [("", None)]
        else:
            stack = "encoder" if group.startswith("ENCODER") else "decoder"
            scopes = [(f"{stack}.layers.{i}", i) for i in range(count)]
        for scope, layer in scopes:
            for entry in family.table:
                if entry.group == group and family.present(entry.condition, cfg):
                    _add_entry(family, entry, scope, layer, cfg, out)
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
