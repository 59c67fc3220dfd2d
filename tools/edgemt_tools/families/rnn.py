"""The RNN encoder-decoder with attention (runtime/models/rnn/): its config,
its limits and checks, its FlatBuffers table and the rules of its tensor
table schema/rnn_tensors.def."""

import dataclasses
from dataclasses import dataclass
from typing import Optional

from .. import limits
from ..errors import UserError
from .checks import check_choice, check_int
from .config_table import ConfigTable, enum_values
from .family import Family
from .tensor_table import TableSyntax, TensorTable, read_tensor_table, table_path

# RnnConfig's enums (schema/edgemt.fbs), by the names of their values.
RNN_CELLS = ("Lstm", "Gru")
RNN_SCORES = ("Dot", "General", "Additive")
RNN_QUERIES = ("Current", "Previous")
RNN_DECODER_INPUTS = ("Embedding", "EmbeddingContext", "EmbeddingInputFeed")
RNN_OUTPUTS = ("TanhCombine", "LinearCombine", "StateContext")
RNN_GATES = {"Lstm": 4, "Gru": 3}

# runtime/models/rnn/config.h
_LIMITS = limits.family_constants("rnn")
MAX_LAYERS = _LIMITS["kMaxRnnLayers"]
MAX_HIDDEN = _LIMITS["kMaxRnnHidden"]
MAX_EMBEDDING_DIM = _LIMITS["kMaxRnnEmbeddingDim"]


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


def check_config(cfg: RnnConfig) -> None:
    """The values, as the runtime's verify_rnn_config checks them
    (runtime/models/rnn/config.cc): known enum values, sizes inside its
    limits, and the combinations it accepts."""
    for key, known in (("cell", RNN_CELLS), ("score", RNN_SCORES), ("query", RNN_QUERIES),
                       ("decoder_input", RNN_DECODER_INPUTS), ("output", RNN_OUTPUTS)):
        check_choice(key, getattr(cfg, key), known)
    check_int("layers", cfg.layers, 1, MAX_LAYERS)
    check_int("hidden", cfg.hidden, 1, MAX_HIDDEN)
    for key in ("source_embedding_dim", "target_embedding_dim"):
        check_int(key, getattr(cfg, key), 1, MAX_EMBEDDING_DIM)
    check_int("vocab_size", cfg.vocab_size, 1, limits.MAX_VOCAB_SIZE)
    check_int("max_positions", cfg.max_positions, 1, limits.MAX_POSITIONS)
    check_int("source_vocab_size", cfg.source_vocab_size, 0, limits.MAX_VOCAB_SIZE)
    if cfg.bidirectional_encoder and cfg.hidden % 2:
        raise UserError(f"hidden = {cfg.hidden} must be even with a bidirectional "
                        "encoder (hidden/2 units per direction)")
    if cfg.query_bias and cfg.score != "Additive":
        raise UserError(f"query_bias needs the Additive score (score is {cfg.score})")
    if cfg.combine_bias and cfg.output == "StateContext":
        raise UserError("combine_bias needs a TanhCombine or LinearCombine output")
    if (cfg.query == "Previous") != (cfg.decoder_input == "EmbeddingContext"):
        raise UserError(f"query {cfg.query} with decoder_input {cfg.decoder_input}: "
                        "query Previous goes with decoder_input EmbeddingContext, and only "
                        "with it")
    if cfg.decoder_input == "EmbeddingInputFeed" and cfg.output == "StateContext":
        raise UserError("decoder_input EmbeddingInputFeed needs a TanhCombine or "
                        "LinearCombine output (an attentional vector to feed)")


# ---- the FlatBuffers table --------------------------------------------------

# The enum fields hold the schema's value names (RnnCell.Lstm: "Lstm"); the
# fields are added in the dataclass's order, as the files have been written.
CONFIG_TABLE = ConfigTable(
    "RnnConfig", RnnConfig,
    enums={field_name: enum_values(enum) for field_name, enum in (
        ("cell", "RnnCell"), ("score", "RnnScore"), ("query", "RnnQuery"),
        ("decoder_input", "RnnDecoderInput"), ("output", "RnnOutput"))},
    order=tuple(item.name for item in dataclasses.fields(RnnConfig)))


# ---- the tensor table -------------------------------------------------------

TENSOR_TABLE = table_path("rnn")
SYNTAX = TableSyntax(
    macro="RNN_TENSOR",
    groups=("MODEL", "ENCODER_LAYER", "DECODER_LAYER"),
    kinds=("MATRIX", "VECTOR", "LINEAR"),
    dims=("H", "H2", "ES", "ET", "V", "S", "GE", "GD", "EU", "EI", "DI", "OI", "N"),
    conditions=("ALWAYS", "IF_KEY", "IF_ADDITIVE", "IF_QUERY_BIAS", "IF_COMBINE",
                "IF_COMBINE_BIAS", "IF_BIDIRECTIONAL"))


def rnn_encoder_units(cfg: RnnConfig) -> int:
    """Units per direction of an encoder layer (EU): hidden/2 when bidirectional."""
    return cfg.hidden // 2 if cfg.bidirectional_encoder else cfg.hidden


def _size(dim: str, cfg: RnnConfig, layer: Optional[int]) -> int:
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


def _present(condition: str, cfg: RnnConfig) -> bool:
    combine = cfg.output in ("TanhCombine", "LinearCombine")
    return {"IF_KEY": cfg.score in ("General", "Additive"),
            "IF_ADDITIVE": cfg.score == "Additive",
            "IF_QUERY_BIAS": cfg.query_bias,
            "IF_COMBINE": combine,
            "IF_COMBINE_BIAS": cfg.combine_bias,
            "IF_BIDIRECTIONAL": cfg.bidirectional_encoder}.get(condition, True)


def _layers(group: str, cfg: RnnConfig) -> Optional[int]:
    return cfg.layers if group in ("ENCODER_LAYER", "DECODER_LAYER") else None


FAMILY = Family(
    name="rnn", title="RNN", config_table=CONFIG_TABLE, check=check_config,
    tensors=TensorTable(read_tensor_table(TENSOR_TABLE, SYNTAX), SYNTAX, size=_size,
                        present=_present, layers=_layers))
