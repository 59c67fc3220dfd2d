"""The Transformer family (runtime/models/transformer/): its config, and the
rules of its tensor table schema/transformer_tensors.def."""

from dataclasses import dataclass
from typing import Optional

from .family import Family
from .tensor_table import TableSyntax, TensorTable, read_tensor_table, table_path

ACTIVATIONS = ("relu", "gelu", "swish")
NORM_PLACEMENTS = ("post", "pre")


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


# ---- the tensor table -------------------------------------------------------

TENSOR_TABLE = table_path("transformer")
SYNTAX = TableSyntax(
    macro="TRANSFORMER_TENSOR",
    groups=("MODEL", "ENCODER_LAYER", "ENCODER_END", "DECODER_LAYER", "DECODER_END"),
    kinds=("MATRIX", "PROJECTION", "TABLE", "VECTOR", "LINEAR", "NORM"),
    dims=("D", "D2", "D3", "F", "V", "S", "P", "N"),
    conditions=("ALWAYS", "IF_OUTPUT_BIAS", "IF_ENCODER_FINAL_NORM", "IF_DECODER_FINAL_NORM",
                "ALIAS_IF_SHARED_EMBEDDINGS", "ALIAS_IF_TIED_OUTPUT"))


def _size(dim: str, cfg: TransformerConfig, layer: Optional[int]) -> int:
    return {"D": cfg.d_model, "D2": 2 * cfg.d_model, "D3": 3 * cfg.d_model, "F": cfg.ffn_dim,
            "V": cfg.vocab_size, "S": cfg.source_vocab_size or cfg.vocab_size,
            "P": cfg.max_positions, "N": 0}[dim]


def _present(condition: str, cfg: TransformerConfig) -> bool:
    return {"IF_OUTPUT_BIAS": cfg.output_bias,
            "IF_ENCODER_FINAL_NORM": cfg.encoder_final_norm,
            "IF_DECODER_FINAL_NORM": cfg.decoder_final_norm}.get(condition, True)


def _owner(condition: str, cfg: TransformerConfig) -> Optional[str]:
    if condition == "ALIAS_IF_SHARED_EMBEDDINGS" and cfg.shared_embeddings:
        return "kSourceEmbedding"
    if condition == "ALIAS_IF_TIED_OUTPUT" and cfg.tied_output:
        return "kTargetEmbedding"
    return None


def _layers(group: str, cfg: TransformerConfig) -> Optional[int]:
    return {"ENCODER_LAYER": cfg.encoder_layers,
            "DECODER_LAYER": cfg.decoder_layers}.get(group)


FAMILY = Family(
    name="transformer", title="Transformer", config_type=TransformerConfig,
    tensors=TensorTable(read_tensor_table(TENSOR_TABLE, SYNTAX), SYNTAX, size=_size,
                        present=_present, layers=_layers, owner=_owner, smoothable=True))
