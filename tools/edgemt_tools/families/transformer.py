"""The Transformer family (runtime/models/transformer/): its config, its
limits and checks, its FlatBuffers table and the rules of its tensor table
schema/transformer_tensors.def; its int8 files are calibrated with
numpy_transformer.py's forward pass."""

import dataclasses
from dataclasses import dataclass
from typing import Optional

from .. import limits
from ..errors import UserError
from ..numpy_transformer import NumpyTransformer
from .checks import check_choice, check_int, check_positive_float
from .config_table import ConfigTable, generated_class
from .family import Family
from .tensor_table import TableSyntax, TensorTable, read_tensor_table, table_path

ACTIVATIONS = ("relu", "gelu", "swish")
NORM_PLACEMENTS = ("post", "pre")
# A decoder layer's first block (schema/edgemt.fbs DecoderAutoregression).
DECODER_AUTOREGRESSIONS = ("self-attention", "ssru")
SSRU_FORMAT_VERSION = 6

# runtime/models/transformer/config.h
_LIMITS = limits.family_constants("transformer")
MAX_LAYERS_PER_STACK = _LIMITS["kMaxLayersPerStack"]  # encoder and decoder layers, each
MAX_D_MODEL = _LIMITS["kMaxDModel"]
MAX_FFN_DIM = _LIMITS["kMaxFfnDim"]


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
    # "self-attention", or "ssru": Marian's SSRU block instead (post-norm).
    decoder_autoregression: str = "self-attention"


def check_config(cfg: TransformerConfig) -> None:
    """The values, as the runtime's config check takes them
    (runtime/models/transformer/config.cc)."""
    check_int("encoder_layers", cfg.encoder_layers, 1, MAX_LAYERS_PER_STACK)
    check_int("decoder_layers", cfg.decoder_layers, 1, MAX_LAYERS_PER_STACK)
    check_int("d_model", cfg.d_model, 1, MAX_D_MODEL)
    check_int("heads", cfg.heads, 1, cfg.d_model)
    if cfg.d_model % cfg.heads:
        raise UserError(f"heads = {cfg.heads} does not divide d_model = {cfg.d_model}")
    check_int("ffn_dim", cfg.ffn_dim, 1, MAX_FFN_DIM)
    check_int("vocab_size", cfg.vocab_size, 1, limits.MAX_VOCAB_SIZE)
    check_int("max_positions", cfg.max_positions, 1, limits.MAX_POSITIONS)
    check_int("source_vocab_size", cfg.source_vocab_size, 0, limits.MAX_VOCAB_SIZE)
    if cfg.shared_embeddings and cfg.source_vocab_size not in (0, cfg.vocab_size):
        raise UserError(f"shared_embeddings needs source_vocab_size = vocab_size "
                        f"({cfg.source_vocab_size} and {cfg.vocab_size})")
    check_positive_float("layer_norm_eps", cfg.layer_norm_eps)
    check_positive_float("embedding_scale", cfg.embedding_scale)
    check_choice("activation", cfg.activation, ACTIVATIONS)
    if cfg.raw_decoder_self_memory and cfg.norm_placement != "pre":
        raise UserError("raw_decoder_self_memory needs a pre-norm decoder")
    check_choice("norm_placement", cfg.norm_placement, NORM_PLACEMENTS)
    check_choice("decoder_autoregression", cfg.decoder_autoregression, DECODER_AUTOREGRESSIONS)
    if cfg.decoder_autoregression == "ssru" and cfg.norm_placement != "post":
        raise UserError("decoder_autoregression = ssru needs a post-norm decoder")


# ---- the FlatBuffers table --------------------------------------------------

_ACTIVATION = generated_class("Activation")
_NORM = generated_class("NormPlacement")
_AUTOREGRESSION = generated_class("DecoderAutoregression")
CONFIG_TABLE = ConfigTable(
    "TransformerConfig", TransformerConfig,
    enums={"activation": {"relu": _ACTIVATION.Relu, "gelu": _ACTIVATION.Gelu,
                          "swish": _ACTIVATION.Swish},
           "norm_placement": {"post": _NORM.PostNorm, "pre": _NORM.PreNorm},
           "decoder_autoregression": {"self-attention": _AUTOREGRESSION.SelfAttention,
                                      "ssru": _AUTOREGRESSION.Ssru}},
    # The schema's order, which the files have been written in since version 1.
    order=("encoder_layers", "decoder_layers", "d_model", "heads", "ffn_dim", "activation",
           "norm_placement", "layer_norm_eps", "encoder_final_norm", "decoder_final_norm",
           "embedding_scale", "tied_output", "output_bias", "shared_embeddings", "vocab_size",
           "max_positions", "source_vocab_size", "zero_decoder_start",
           "raw_decoder_self_memory", "decoder_autoregression"))


# ---- the tensor table -------------------------------------------------------

TENSOR_TABLE = table_path("transformer")
SYNTAX = TableSyntax(
    macro="TRANSFORMER_TENSOR",
    groups=("MODEL", "ENCODER_LAYER", "ENCODER_END", "DECODER_LAYER", "DECODER_END"),
    kinds=("MATRIX", "PROJECTION", "TABLE", "VECTOR", "LINEAR", "NORM"),
    dims=("D", "D2", "D3", "F", "V", "S", "P", "N"),
    conditions=("ALWAYS", "IF_OUTPUT_BIAS", "IF_ENCODER_FINAL_NORM", "IF_DECODER_FINAL_NORM",
                "IF_DECODER_SELF_ATTENTION", "IF_DECODER_SSRU",
                "ALIAS_IF_SHARED_EMBEDDINGS", "ALIAS_IF_TIED_OUTPUT"))


def _size(dim: str, cfg: TransformerConfig, layer: Optional[int]) -> int:
    return {"D": cfg.d_model, "D2": 2 * cfg.d_model, "D3": 3 * cfg.d_model, "F": cfg.ffn_dim,
            "V": cfg.vocab_size, "S": cfg.source_vocab_size or cfg.vocab_size,
            "P": cfg.max_positions, "N": 0}[dim]


def _present(condition: str, cfg: TransformerConfig) -> bool:
    ssru = cfg.decoder_autoregression == "ssru"
    return {"IF_OUTPUT_BIAS": cfg.output_bias,
            "IF_ENCODER_FINAL_NORM": cfg.encoder_final_norm,
            "IF_DECODER_FINAL_NORM": cfg.decoder_final_norm,
            "IF_DECODER_SELF_ATTENTION": not ssru,
            "IF_DECODER_SSRU": ssru}.get(condition, True)


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
    name="transformer", title="Transformer", config_table=CONFIG_TABLE, check=check_config,
    tensors=TensorTable(read_tensor_table(TENSOR_TABLE, SYNTAX), SYNTAX, size=_size,
                        present=_present, layers=_layers, owner=_owner, smoothable=True),
    format_v1=generated_class("ModelFamily").TransformerEncoderDecoder,
    forward_pass=NumpyTransformer,
    format_version=lambda cfg: SSRU_FORMAT_VERSION if cfg.decoder_autoregression == "ssru" else 0,
    untied=lambda cfg: dataclasses.replace(cfg, tied_output=False))
