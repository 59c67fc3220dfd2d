"""OpenNMT-py v3 RNN encoder-decoders for `--from opennmt` (the package's
__init__.py loads the checkpoint, checks the options every model shares,
and makes the vocabularies, tokenizers, special ids and search rules
exactly as for its Transformers; this module maps the RNN options and
tensors onto an `RnnConfig`, schema/rnn_tensors.def).

What `onmt_translate` (v3.2) computes, and so what is mapped
(tests/fixtures/opennmt_rnn/FACTS.md gives the equations):
- encoder `encoder_type` rnn (one direction) or brnn (H/2 units per
  direction, outputs and final states [forward; backward]), `nn.LSTM` /
  `nn.GRU` of `rnn_type` LSTM / GRU, zero initial states, no BOS/EOS on
  the source, plain embedding lookup (no scaling, no positions);
- decoder `decoder_type` rnn starting from the encoder's final state per
  layer (no bridge, so enc_layers == dec_layers), with `input_feed` the
  previous attentional vector after the embedding (StackedLSTM/StackedGRU,
  keys decoder.rnn.layers.{k}.*), without it the embedding only
  (nn.LSTM/nn.GRU, keys decoder.rnn.*_l{k}); the query is the top layer's
  new state;
- GlobalAttention `global_attention` dot (h_j . s), general
  (h_j . (W_a s) = (W_a^T h_j) . s: attention.key = linear_in^T) or mlp
  (v . tanh(W_q s + b_q + U_a h_j)), softmax; output tanh(W_out [c; s])
  (dot, general; no bias) or W_out [c; s] + b_out (mlp; no tanh);
- generator: logits = W_gen o + b_gen.

Name mapping (layer k, d = "" or "_reverse"):
  encoder.embeddings.make_embedding.emb_luts.0.weight -> embedding.source
  decoder.embeddings.make_embedding.emb_luts.0.weight -> embedding.target
  encoder.rnn.{weight,bias}_{ih,hh}_l{k}{d}            -> encoder.layers.{k}.{ih,hh}{d}.{weight,bias}
  decoder.rnn.layers.{k}.{weight,bias}_{ih,hh} (input feed)
  decoder.rnn.{weight,bias}_{ih,hh}_l{k} (no input feed) -> decoder.layers.{k}.{ih,hh}.{weight,bias}
  decoder.attn.linear_in.weight (general)              -> attention.key, transposed
  decoder.attn.linear_query.{weight,bias} (mlp)        -> attention.query, attention.query_bias
  decoder.attn.linear_context.weight (mlp)             -> attention.key
  decoder.attn.v.weight [1, H] (mlp)                   -> attention.v = v[0]
  decoder.attn.linear_out.weight [H, 2H], .bias (mlp)  -> attention.combine, attention.combine_bias
  generator.{weight,bias}                              -> output.weight, output.bias

Refused, naming the option: rnn_type SRU, global_attention none (or any
other than dot / general / mlp), global_attention_function sparsemax,
bridge, context_gate, coverage_attn, position_encoding, enc_layers !=
dec_layers, enc_hid_size != dec_hid_size, brnn with an odd hidden size;
and (as for Transformers) any state-dict key this mapping does not use.
"""

from typing import Callable, Mapping, Tuple

import numpy as np

from ...errors import UserError
from ...families.rnn import RnnConfig
from ..common import TensorSource, WeightAssembler
from .checkpoint import check_shared_embeddings, option, refuse, refuse_set

CELLS = {"LSTM": "Lstm", "GRU": "Gru"}

# global_attention -> the RnnConfig fields it implies (FACTS.md §4).
ATTENTIONS = {
    "dot": dict(score="Dot", query_bias=False, output="TanhCombine", combine_bias=False),
    "general": dict(score="General", query_bias=False, output="TanhCombine",
                    combine_bias=False),
    "mlp": dict(score="Additive", query_bias=True, output="LinearCombine", combine_bias=True),
}

# OpenNMT-py 3.2's defaults (onmt/opts.py model_opts) for options a
# checkpoint may lack (ArgumentParser.ckpt_model_opts fills them in).
_DEFAULTS = {"rnn_type": "LSTM", "global_attention": "general",
             "global_attention_function": "softmax", "input_feed": 1, "layers": -1,
             "enc_layers": 2, "dec_layers": 2, "hidden_size": -1, "enc_hid_size": 500,
             "dec_hid_size": 500}

_EMBEDDING = "{}.embeddings.make_embedding.emb_luts.0.weight"


def _option(opt, key: str):
    return option(opt, key, _DEFAULTS.get(key))


def _count(opt, where: str, key: str) -> int:
    value = _option(opt, key)
    if not isinstance(value, int) or isinstance(value, bool):
        refuse(where, key, value, "not a whole number")
    return value


def _effective(opt, where: str, shared: str, encoder: str, decoder: str) -> Tuple[int, int]:
    """utils/parse.py update_model_opts: `layers` / `hidden_size` > 0
    overrides the encoder's and decoder's own."""
    both = _count(opt, where, shared)
    if both > 0:
        return both, both
    return _count(opt, where, encoder), _count(opt, where, decoder)


def layers_and_hidden(opt, where: str) -> Tuple[int, int]:
    enc_layers, dec_layers = _effective(opt, where, "layers", "enc_layers", "dec_layers")
    if enc_layers != dec_layers:
        refuse(where, "enc_layers", enc_layers,
                f"dec_layers is {dec_layers}; without a bridge the decoder starts from the "
                "encoder's final state per layer, so the two must be equal")
    if enc_layers < 1:
        refuse(where, "enc_layers", enc_layers, "at least one layer")
    enc_hid, dec_hid = _effective(opt, where, "hidden_size", "enc_hid_size", "dec_hid_size")
    if enc_hid != dec_hid:
        refuse(where, "enc_hid_size", enc_hid, f"dec_hid_size is {dec_hid}; they must be equal")
    if enc_hid < 1:
        refuse(where, "hidden_size", enc_hid, "at least one unit")
    return enc_layers, enc_hid


def check_options(opt, where: str) -> None:
    """The RNN options edgemt runs (opennmt.check_options has checked the
    shared ones and that encoder_type is rnn / brnn, decoder_type rnn)."""
    if _option(opt, "rnn_type") not in CELLS:
        refuse(where, "rnn_type", _option(opt, "rnn_type"), "only LSTM or GRU")
    if _option(opt, "global_attention") not in ATTENTIONS:
        refuse(where, "global_attention", _option(opt, "global_attention"),
                "only dot, general or mlp")
    if _option(opt, "global_attention_function") != "softmax":
        refuse(where, "global_attention_function", _option(opt, "global_attention_function"),
                "only softmax")
    refuse_set(opt, where, (
        ("bridge", False, "a ReLU layer between the encoder's final state and the decoder's "
                          "initial state"),
        ("context_gate", None, "context gates"),
        ("coverage_attn", False, "coverage attention"),
        ("position_encoding", False, "position encoding of RNN embeddings")))
    if _option(opt, "input_feed") not in (0, 1, False, True):
        refuse(where, "input_feed", _option(opt, "input_feed"), "only 0 or 1")
    _, hidden = layers_and_hidden(opt, where)
    if option(opt, "encoder_type") == "brnn" and hidden % 2:
        refuse(where, "hidden_size", hidden, "a brnn encoder needs an even size (half per "
                                              "direction)")


Extract = Callable[[np.ndarray], np.ndarray]


def _whole(array: np.ndarray) -> np.ndarray:
    return array


def convert(opt, state: Mapping[str, np.ndarray], generator: Mapping[str, np.ndarray],
            where: str, vocab_sizes: Tuple[int, int], max_positions: int):
    """(RnnConfig, weights: OrderedDict edgemt name -> float32 array in file
    order) of a checkpoint whose options check_options accepted. UserError
    on a missing, misshapen, non-finite or unused tensor."""
    layers, hidden = layers_and_hidden(opt, where)
    attention = _option(opt, "global_attention")
    input_feed = bool(_option(opt, "input_feed"))
    src = TensorSource(state, where)
    gen = TensorSource(generator, where + " generator")
    tables = []
    for stack, rows in zip(("encoder", "decoder"), vocab_sizes):
        key = _EMBEDDING.format(stack)
        table = src.take(key)
        if table.ndim != 2 or table.shape[0] != rows:
            raise UserError(f"shape mismatch: {key} is {list(table.shape)}, expected [{rows}, "
                            f"embedding size] (the vocabulary has {rows} pieces)")
        tables.append(table)
    if option(opt, "share_embeddings", False):
        check_shared_embeddings(tables[0], tables[1], where)
    cfg = RnnConfig(
        cell=CELLS[_option(opt, "rnn_type")], layers=layers,
        bidirectional_encoder=option(opt, "encoder_type") == "brnn",
        source_embedding_dim=tables[0].shape[1], target_embedding_dim=tables[1].shape[1],
        hidden=hidden, vocab_size=vocab_sizes[1],
        source_vocab_size=0 if vocab_sizes[0] == vocab_sizes[1] else vocab_sizes[0],
        max_positions=max_positions, query="Current",
        decoder_input="EmbeddingInputFeed" if input_feed else "Embedding",
        **ATTENTIONS[attention])
    out = WeightAssembler(cfg)  # checks the config against the runtime's limits first

    def put(name: str, key: str, extract: Extract = _whole, source: TensorSource = src,
            shape=None) -> None:
        array = source.take(key, shape if shape is not None else out.specs[name].shape)
        out.put(name, extract(array), f"generator.{key}" if source is gen else key)

    out.put("embedding.source", tables[0], _EMBEDDING.format("encoder"))
    out.put("embedding.target", tables[1], _EMBEDDING.format("decoder"))
    h = hidden
    if attention == "general":
        put("attention.key", "decoder.attn.linear_in.weight", np.transpose)
    elif attention == "mlp":
        put("attention.query", "decoder.attn.linear_query.weight")
        put("attention.query_bias", "decoder.attn.linear_query.bias")
        put("attention.key", "decoder.attn.linear_context.weight")
        put("attention.v", "decoder.attn.v.weight", lambda a: a[0], shape=(1, h))
    put("attention.combine", "decoder.attn.linear_out.weight")
    if cfg.combine_bias:
        put("attention.combine_bias", "decoder.attn.linear_out.bias")
    put("output.weight", "weight", source=gen)
    put("output.bias", "bias", source=gen)
    directions = ("", "_reverse") if cfg.bidirectional_encoder else ("",)
    for k in range(layers):
        for suffix in directions:
            for part in ("ih", "hh"):
                for kind in ("weight", "bias"):
                    put(f"encoder.layers.{k}.{part}{suffix}.{kind}",
                        f"encoder.rnn.{kind}_{part}_l{k}{suffix}")
        for part in ("ih", "hh"):
            for kind in ("weight", "bias"):
                key = (f"decoder.rnn.layers.{k}.{kind}_{part}" if input_feed
                       else f"decoder.rnn.{kind}_{part}_l{k}")
                put(f"decoder.layers.{k}.{part}.{kind}", key)
    src.refuse_unused()
    gen.refuse_unused()
    return cfg, out.result()
