"""The RNN encoder-decoder with attention (runtime/models/rnn/): its config,
and the rules of its tensor table schema/rnn_tensors.def."""

from dataclasses import dataclass
from typing import Optional

from .family import Family
from .tensor_table import TableSyntax, TensorTable, read_tensor_table, table_path

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
    name="rnn", title="RNN", config_type=RnnConfig,
    tensors=TensorTable(read_tensor_table(TENSOR_TABLE, SYNTAX), SYNTAX, size=_size,
                        present=_present, layers=_layers))
