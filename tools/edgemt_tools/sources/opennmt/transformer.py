"""OpenNMT-py Transformer checkpoints (`encoder_type` and `decoder_type`
transformer): their own options, config and tensors.

Facts, checked against OpenNMT-py 3.2 (onmt/encoders/transformer.py,
onmt/decoders/transformer.py, onmt/modules/*, onmt/translate/*):
- pre-norm layers (`layer_norm: standard`), LayerNorm eps 1e-6, final
  stack norms `encoder.layer_norm` / `decoder.layer_norm`;
- FFN relu or gelu (`pos_ffn_activation_fn`; silu is a gated SwiGLU FFN,
  refused); Q/K/V/output and FFN biases only when trained with
  `add_qkvbias` / `add_ffnbias` (decided by the tensors present);
- embeddings × sqrt(d) then the stored position buffer `pe.pe` [5000, 1, d]
  (copied as is, whatever its formula), when `position_encoding`;
- `share_embeddings` (one vocabulary and table), `share_decoder_embeddings`
  (the generator is the target table), a generator with its bias;
- vocabularies: `<unk>`, `<blank>` (pad), `<s>`, `</s>` then the pieces;
  SentencePiece pieces are looked up by string; the source gets no BOS or
  EOS; the decoder starts with `vocab['decoder_start_token']` (`<s>`);
- search: OpenNMT-py's beam search (SearchRules OpenNMT) with
  onmt_translate's defaults: beam 5, length penalty `avg` (alpha 1),
  max_length 250, nothing banned.

Refused, naming the option: relative positions (max_relative_positions;
-1 rotary, -2 alibi), rms norm, gated FFN (silu), multi-query / grouped
K/V, parallel residual, average attention, mixture of experts.

Name mapping (layer i):
  encoder.embeddings.make_embedding.emb_luts.0.weight -> embedding.source
  decoder.embeddings.make_embedding.emb_luts.0.weight -> embedding.target
  *.embeddings.make_embedding.pe.pe [P, 1, d]         -> position.table [min(P, 1024), d]
  encoder.transformer.i.layer_norm / decoder.transformer_layers.i.layer_norm_1 -> self_attn_norm
  *.self_attn.linear_{query,keys,values} / final_linear -> self_attn.qkv / .out
  decoder.transformer_layers.i.layer_norm_2            -> cross_attn_norm
  *.context_attn.linear_query / linear_{keys,values} / final_linear -> cross_attn.q / .kv / .out
  *.feed_forward.{layer_norm, w_1, w_2}                -> ffn_norm, ffn.in, ffn.out
  {encoder,decoder}.layer_norm                         -> {encoder,decoder}.final_norm
  generator.{weight,bias}                              -> output.weight (or tied), output.bias
"""

import math
from typing import Mapping, Tuple

import numpy as np

from ...errors import UserError
from ...families.transformer import TransformerConfig
from ..common import TensorSource, WeightAssembler
from .checkpoint import check_shared_embeddings, option, refuse, refuse_set

LAYER_NORM_EPS = 1e-6
_ACTIVATIONS = {"relu": "relu", "gelu": "gelu"}


def check_options(opt, where: str) -> None:
    """Refuse, naming the option, what edgemt's Transformer cannot run."""
    relative = option(opt, "max_relative_positions", 0)
    if relative:
        kind = {-1: "rotary", -2: "alibi"}.get(relative, "relative positions")
        refuse(where, "max_relative_positions", relative, kind)
    if option(opt, "layer_norm", "standard") != "standard":
        refuse(where, "layer_norm", option(opt, "layer_norm"), "only standard LayerNorm")
    if option(opt, "pos_ffn_activation_fn", "relu") not in _ACTIVATIONS:
        refuse(where, "pos_ffn_activation_fn", option(opt, "pos_ffn_activation_fn"),
                "relu or gelu; silu is a gated SwiGLU FFN")
    refuse_set(opt, where, (
        ("multiquery", False, "multi-query attention"),
        ("parallel_residual", False, "parallel residual layers"),
        ("aan_useffn", False, "average attention"),
        ("num_experts", 0, "mixture of experts")))
    if option(opt, "self_attn_type", "scaled-dot") != "scaled-dot":
        refuse(where, "self_attn_type", option(opt, "self_attn_type"),
                "only scaled-dot (average attention is not)")
    heads = option(opt, "heads")
    num_kv = option(opt, "num_kv", 0)
    if num_kv not in (0, None, heads):
        refuse(where, "num_kv", num_kv, "grouped K/V heads")


def _model_dim(opt, where: str) -> int:
    for key in ("hidden_size", "rnn_size", "enc_hid_size"):
        value = option(opt, key)
        if isinstance(value, int) and value > 0:
            return value
    raise UserError(f"{where}: the options name no model size (hidden_size)")


def config(opt, state: Mapping[str, np.ndarray], generator: Mapping,
                       where: str, vocab_sizes: Tuple[int, int], max_positions: int) -> TransformerConfig:
    d = _model_dim(opt, where)
    for key in ("word_vec_size", "src_word_vec_size", "tgt_word_vec_size"):
        value = option(opt, key)
        if isinstance(value, int) and value > 0 and value != d:
            refuse(where, key, value, f"embeddings of another size than the model ({d})")
    shared = bool(option(opt, "share_embeddings", False))
    tied = bool(option(opt, "share_decoder_embeddings", False))
    if shared and vocab_sizes[0] != vocab_sizes[1]:
        raise UserError(f"{where}: share_embeddings with vocabularies of {vocab_sizes[0]} and "
                        f"{vocab_sizes[1]} pieces")
    position = bool(option(opt, "position_encoding", True))
    return TransformerConfig(
        encoder_layers=option(opt, "enc_layers"), decoder_layers=option(opt, "dec_layers"),
        d_model=d, heads=option(opt, "heads"), ffn_dim=option(opt, "transformer_ff"),
        vocab_size=vocab_sizes[1], max_positions=max_positions,
        activation=_ACTIVATIONS[option(opt, "pos_ffn_activation_fn", "relu")],
        norm_placement="pre", layer_norm_eps=float(option(opt, "norm_eps", LAYER_NORM_EPS) or
                                                   LAYER_NORM_EPS),
        encoder_final_norm=True, decoder_final_norm=True,
        embedding_scale=math.sqrt(d) if position else 1.0, tied_output=tied,
        output_bias="bias" in generator, shared_embeddings=shared,
        source_vocab_size=0 if shared else vocab_sizes[0])


def convert_tensors(state: Mapping[str, np.ndarray], generator: Mapping[str, np.ndarray],
                    cfg: TransformerConfig, opt, where: str):
    d, f, v = cfg.d_model, cfg.ffn_dim, cfg.vocab_size
    vs = cfg.source_vocab_size or v
    src = TensorSource(state, where)
    gen = TensorSource(generator, where + " generator")
    out = WeightAssembler(cfg)
    emb = ".embeddings.make_embedding"
    source_embedding = src.take(f"encoder{emb}.emb_luts.0.weight", (vs, d))
    target_embedding = src.take(f"decoder{emb}.emb_luts.0.weight", (v, d))
    out.put("embedding.source", source_embedding, f"encoder{emb}.emb_luts.0.weight")
    if cfg.shared_embeddings:
        check_shared_embeddings(source_embedding, target_embedding, where)
    else:
        out.put("embedding.target", target_embedding, f"decoder{emb}.emb_luts.0.weight")
    generator_weight = gen.take("weight", (v, d))
    if cfg.tied_output:
        if not np.array_equal(generator_weight, target_embedding):
            raise UserError(f"{where}: share_decoder_embeddings but the generator differs from "
                            "the decoder's embedding table")
    else:
        out.put("output.weight", generator_weight, "generator.weight")
    if cfg.output_bias:
        out.put("output.bias", gen.take("bias", (v,)), "generator.bias")
    gen.refuse_unused()
    out.put("position.table", _positions(src, cfg, opt, where), f"encoder{emb}.pe.pe")
    for stack, layers, layer_key in (("encoder", cfg.encoder_layers, "transformer"),
                                     ("decoder", cfg.decoder_layers, "transformer_layers")):
        for i in range(layers):
            o = f"{stack}.{layer_key}.{i}"
            e = f"{stack}.layers.{i}"
            _put_norm(out, src, f"{o}.layer_norm" if stack == "encoder" else f"{o}.layer_norm_1",
                      f"{e}.self_attn_norm", d)
            _put_attention(out, src, f"{o}.self_attn", f"{e}.self_attn", d, cross=False)
            if stack == "decoder":
                _put_norm(out, src, f"{o}.layer_norm_2", f"{e}.cross_attn_norm", d)
                _put_attention(out, src, f"{o}.context_attn", f"{e}.cross_attn", d, cross=True)
            _put_norm(out, src, f"{o}.feed_forward.layer_norm", f"{e}.ffn_norm", d)
            _put_linear(out, src, f"{o}.feed_forward.w_1", f"{e}.ffn.in", f, d)
            _put_linear(out, src, f"{o}.feed_forward.w_2", f"{e}.ffn.out", d, f)
        _put_norm(out, src, f"{stack}.layer_norm", f"{stack}.final_norm", d)
    src.refuse_unused()
    return out.result()


def _positions(src: TensorSource, cfg: TransformerConfig, opt, where: str) -> np.ndarray:
    """The stored position buffer (the encoder's and the decoder's must be
    the same), its first max_positions rows; zeros without positions."""
    d = cfg.d_model
    keys = [f"{stack}.embeddings.make_embedding.pe.pe" for stack in ("encoder", "decoder")]
    if not option(opt, "position_encoding", True):
        for key in keys:
            if src.has(key):
                raise UserError(f"{where}: position_encoding is off but {key} is stored")
        return np.zeros((cfg.max_positions, d), dtype=np.float32)
    tables = []
    for key in keys:
        table = src.take(key)
        if table.ndim == 3 and table.shape[1] == 1:
            table = table[:, 0, :]
        if table.ndim != 2 or table.shape[1] != d or table.shape[0] < 2:
            raise UserError(f"shape mismatch: {key} is {list(src.tensors[key].shape)}, expected "
                            f"[positions, 1, {d}]")
        tables.append(table)
    if not np.array_equal(tables[0], tables[1]):
        raise UserError(f"{where}: the encoder's and decoder's position buffers differ")
    rows = min(cfg.max_positions, tables[0].shape[0])
    if rows < cfg.max_positions:
        raise UserError(f"{where}: the position buffer has {tables[0].shape[0]} rows; edgemt "
                        f"needs {cfg.max_positions}")
    return tables[0][:rows]


def _put_norm(out: WeightAssembler, src: TensorSource, key: str, name: str, d: int) -> None:
    out.put(f"{name}.weight", src.take(f"{key}.weight", (d,)), f"{key}.weight")
    out.put(f"{name}.bias", src.take(f"{key}.bias", (d,)), f"{key}.bias")


def _bias(src: TensorSource, key: str, rows: int) -> np.ndarray:
    """A Linear's bias, or zeros when it was trained without one."""
    return src.take(key, (rows,)) if src.has(key) else np.zeros(rows, dtype=np.float32)


def _put_linear(out: WeightAssembler, src: TensorSource, key: str, name: str, rows: int,
                cols: int) -> None:
    out.put(f"{name}.weight", src.take(f"{key}.weight", (rows, cols)), f"{key}.weight")
    out.put(f"{name}.bias", _bias(src, f"{key}.bias", rows), f"{key}.bias")


def _put_attention(out: WeightAssembler, src: TensorSource, key: str, name: str, d: int,
                   cross: bool) -> None:
    parts = {p: (src.take(f"{key}.linear_{p}.weight", (d, d)),
                 _bias(src, f"{key}.linear_{p}.bias", d)) for p in ("query", "keys", "values")}
    if cross:
        out.put(f"{name}.q.weight", parts["query"][0], f"{key}.linear_query.weight")
        out.put(f"{name}.q.bias", parts["query"][1], f"{key}.linear_query.bias")
        out.put(f"{name}.kv.weight", np.concatenate([parts["keys"][0], parts["values"][0]]),
                f"{key}.linear_keys.weight")
        out.put(f"{name}.kv.bias", np.concatenate([parts["keys"][1], parts["values"][1]]),
                f"{key}.linear_keys.bias")
    else:
        out.put(f"{name}.qkv.weight", np.concatenate([parts[p][0] for p in parts]),
                f"{key}.linear_query.weight")
        out.put(f"{name}.qkv.bias", np.concatenate([parts[p][1] for p in parts]),
                f"{key}.linear_query.bias")
    _put_linear(out, src, f"{key}.final_linear", f"{name}.out", d, d)
