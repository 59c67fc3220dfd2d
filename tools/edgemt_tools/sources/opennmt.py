"""Source `opennmt`: OpenNMT-py v3 checkpoints, Transformer (this module)
and RNN encoder-decoders (`encoder_type` rnn / brnn with `decoder_type`
rnn: opennmt_rnn.py, which maps their options and tensors; everything
else -- loading, options every model shares, vocabularies, tokenizers,
special ids, search rules -- is here and the same for both).

Input: the `.pt` file `onmt_train` saves, a dict with `model` (the
encoder-decoder's state dict), `generator` (its own state dict), `vocab`
(`src` and `tgt`: lists of piece strings) and `opt` (the training options,
an argparse Namespace), plus the SentencePiece model(s) that cut the text
for it: `--spm` when both sides share one, `--src-spm` / `--tgt-spm`
otherwise. The file is read by torch_zip.py, which allows only the
classes such a checkpoint holds (tensors, OrderedDict, argparse.Namespace,
set): nothing the file names runs, whichever torch is installed.

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

Refused, naming the option: encoders or decoders other than transformer
(and rnn / brnn + rnn, opennmt_rnn.py), mixed families, relative
positions (max_relative_positions; -1 rotary, -2 alibi), rms norm, gated
FFN (silu), multi-query / grouped K/V, parallel residual, average
attention, copy attention, source features, LoRA or quantized layers.

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
import os
from typing import Dict, List, Mapping, Tuple

import numpy as np

from ..errors import UserError
from ..model_spec import Decoding, ModelSpec, Provenance, SideTokenizer, SpecialTokens
from ..model_spec import TransformerConfig
from ..validate import validate_config
from .common import (TensorSource, WeightAssembler, read_sentencepiece,
                     sha256_file)
from . import torch_zip
from .detect import detect, wrong_source

NAME = "opennmt"
LAYER_NORM_EPS = 1e-6
# The stored position buffer has 5000 rows; edgemt keeps the first ones (the
# longest source or output it translates).
MAX_POSITIONS = 1024
# onmt_translate's defaults (onmt/opts.py translate_opts, v3.2).
DEFAULT_BEAM = 5
DEFAULT_ALPHA = 1.0   # length_penalty "avg": score / length^alpha
DEFAULT_MAX_LENGTH = 250

_ACTIVATIONS = {"relu": "relu", "gelu": "gelu"}


def load_checkpoint(path: str) -> dict:
    """The checkpoint's dict, read by torch_zip: only what such a checkpoint
    holds (tensors, OrderedDict, argparse.Namespace -> torch_zip.Namespace,
    set) is allowed, nothing the file names runs."""
    if not os.path.isfile(path):
        raise UserError(wrong_source(path, NAME, "an OpenNMT-py checkpoint (.pt)"))
    try:
        checkpoint = torch_zip.load(path, "an OpenNMT-py v3 checkpoint",
                                    torch_zip.TRAINING_OPTIONS)
    except torch_zip.CheckpointError as err:
        kind = detect(path)
        if kind not in (None, NAME):
            raise UserError(wrong_source(path, NAME, "")) from None
        raise UserError(f"cannot load OpenNMT-py checkpoint {path}: {err}") from None
    if not isinstance(checkpoint, dict) or not {"model", "generator", "vocab", "opt"} <= set(
            checkpoint):
        kind = detect(path)
        if kind not in (None, NAME):
            raise UserError(wrong_source(path, NAME, ""))
        raise UserError(f"{path}: not an OpenNMT-py checkpoint (expected a dict with model, "
                        "generator, vocab and opt)")
    return checkpoint


def _opt(opt, key: str, default=None):
    return getattr(opt, key, default)


def _refuse(where: str, option: str, value, why: str) -> None:
    raise UserError(f"{where}: OpenNMT-py option {option} = {value!r} is not supported ({why})")


def model_family(opt, where: str) -> str:
    """"transformer" or "rnn" from encoder_type / decoder_type; refuses
    the other encoders and decoders (and a mix of the two families)."""
    encoder = _opt(opt, "encoder_type", "rnn")
    decoder = _opt(opt, "decoder_type", "rnn")
    if encoder not in ("transformer", "rnn", "brnn"):
        _refuse(where, "encoder_type", encoder, "only transformer, rnn or brnn")
    if decoder not in ("transformer", "rnn"):
        _refuse(where, "decoder_type", decoder, "only transformer or rnn")
    family = "transformer" if decoder == "transformer" else "rnn"
    if (encoder == "transformer") != (family == "transformer"):
        _refuse(where, "encoder_type", encoder,
                f"with decoder_type {decoder!r}: a transformer decoder needs a transformer "
                "encoder, an rnn decoder an rnn or brnn encoder")
    return family


def check_options(opt, where: str) -> str:
    """Refuse, naming the option, what edgemt cannot run; returns the model
    family ("transformer" or "rnn", whose own options are checked too)."""
    if not isinstance(opt, torch_zip.Namespace):
        raise UserError(f"{where}: 'opt' is a {type(opt).__name__}, not OpenNMT-py's options")
    family = model_family(opt, where)
    if _opt(opt, "model_task", "seq2seq") != "seq2seq":
        _refuse(where, "model_task", _opt(opt, "model_task"), "only seq2seq")
    if _opt(opt, "model_type", "text") != "text":
        _refuse(where, "model_type", _opt(opt, "model_type"), "only text")
    _refuse_set(opt, where, (
        ("copy_attn", False, "copy attention"),
        ("n_src_feats", 0, "source features"),
        ("lora_layers", [], "LoRA layers"),
        ("quant_layers", [], "quantized layers")))
    if _opt(opt, "src_feats"):
        _refuse(where, "src_feats", _opt(opt, "src_feats"), "source features")
    if family == "rnn":
        from . import opennmt_rnn  # imported here: it uses this module's helpers
        opennmt_rnn.check_options(opt, where)
    else:
        _check_transformer_options(opt, where)
    return family


def _refuse_set(opt, where: str, options) -> None:
    """Refuse each (option, neutral value, why) set to something else."""
    for option, neutral, why in options:
        value = _opt(opt, option, neutral)
        if value not in (neutral, None) and value != neutral:
            _refuse(where, option, value, why)


def _check_transformer_options(opt, where: str) -> None:
    relative = _opt(opt, "max_relative_positions", 0)
    if relative:
        kind = {-1: "rotary", -2: "alibi"}.get(relative, "relative positions")
        _refuse(where, "max_relative_positions", relative, kind)
    if _opt(opt, "layer_norm", "standard") != "standard":
        _refuse(where, "layer_norm", _opt(opt, "layer_norm"), "only standard LayerNorm")
    if _opt(opt, "pos_ffn_activation_fn", "relu") not in _ACTIVATIONS:
        _refuse(where, "pos_ffn_activation_fn", _opt(opt, "pos_ffn_activation_fn"),
                "relu or gelu; silu is a gated SwiGLU FFN")
    _refuse_set(opt, where, (
        ("multiquery", False, "multi-query attention"),
        ("parallel_residual", False, "parallel residual layers"),
        ("aan_useffn", False, "average attention"),
        ("num_experts", 0, "mixture of experts")))
    if _opt(opt, "self_attn_type", "scaled-dot") != "scaled-dot":
        _refuse(where, "self_attn_type", _opt(opt, "self_attn_type"),
                "only scaled-dot (average attention is not)")
    heads = _opt(opt, "heads")
    num_kv = _opt(opt, "num_kv", 0)
    if num_kv not in (0, None, heads):
        _refuse(where, "num_kv", num_kv, "grouped K/V heads")


def _model_dim(opt, where: str) -> int:
    for key in ("hidden_size", "rnn_size", "enc_hid_size"):
        value = _opt(opt, key)
        if isinstance(value, int) and value > 0:
            return value
    raise UserError(f"{where}: the options name no model size (hidden_size)")


def _vocabularies(vocab, where: str):
    if not isinstance(vocab, dict) or not isinstance(vocab.get("src"), list) or \
            not isinstance(vocab.get("tgt"), list):
        raise UserError(f"{where}: 'vocab' is not OpenNMT-py v3's (lists of pieces under 'src' "
                        "and 'tgt'); a v2 checkpoint must first be converted by OpenNMT-py's "
                        "own tools")
    out = []
    for side in ("src", "tgt"):
        pieces = vocab[side]
        if not all(isinstance(p, str) and p and "\0" not in p for p in pieces):
            raise UserError(f"{where}: vocab['{side}'] holds a piece that is not a non-empty "
                            "string")
        ids: Dict[str, int] = {}
        for i, piece in enumerate(pieces):
            # A piece twice would make its id depend on which one a reader keeps.
            if piece in ids:
                raise UserError(f"{where}: vocab['{side}'] holds the piece {piece!r} twice "
                                f"(ids {ids[piece]} and {i})")
            ids[piece] = i
        for special in ("<unk>", "<blank>", "</s>"):
            if special not in ids:
                raise UserError(f"{where}: vocab['{side}'] has no {special}")
        out.append((tuple(pieces), ids))
    return out


def transformer_config(opt, state: Mapping[str, np.ndarray], generator: Mapping,
                       where: str, vocab_sizes: Tuple[int, int]) -> TransformerConfig:
    d = _model_dim(opt, where)
    for key in ("word_vec_size", "src_word_vec_size", "tgt_word_vec_size"):
        value = _opt(opt, key)
        if isinstance(value, int) and value > 0 and value != d:
            _refuse(where, key, value, f"embeddings of another size than the model ({d})")
    shared = bool(_opt(opt, "share_embeddings", False))
    tied = bool(_opt(opt, "share_decoder_embeddings", False))
    if shared and vocab_sizes[0] != vocab_sizes[1]:
        raise UserError(f"{where}: share_embeddings with vocabularies of {vocab_sizes[0]} and "
                        f"{vocab_sizes[1]} pieces")
    position = bool(_opt(opt, "position_encoding", True))
    return TransformerConfig(
        encoder_layers=_opt(opt, "enc_layers"), decoder_layers=_opt(opt, "dec_layers"),
        d_model=d, heads=_opt(opt, "heads"), ffn_dim=_opt(opt, "transformer_ff"),
        vocab_size=vocab_sizes[1], max_positions=MAX_POSITIONS,
        activation=_ACTIVATIONS[_opt(opt, "pos_ffn_activation_fn", "relu")],
        norm_placement="pre", layer_norm_eps=float(_opt(opt, "norm_eps", LAYER_NORM_EPS) or
                                                   LAYER_NORM_EPS),
        encoder_final_norm=True, decoder_final_norm=True,
        embedding_scale=math.sqrt(d) if position else 1.0, tied_output=tied,
        output_bias="bias" in generator, shared_embeddings=shared,
        source_vocab_size=0 if shared else vocab_sizes[0])


def _numpy_state(state, where: str, what: str) -> Dict[str, np.ndarray]:
    """A state dict's tensors, floating ones as float32."""
    if not isinstance(state, Mapping):
        raise UserError(f"{where}: '{what}' is not a state dict")
    out = {}
    for key, tensor in state.items():
        if not isinstance(tensor, np.ndarray):
            raise UserError(f"{where}: {what} entry {key} is not a tensor")
        out[key] = tensor.astype(np.float32) if np.issubdtype(tensor.dtype, np.floating) \
            else tensor
    return out


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


def check_shared_embeddings(source: np.ndarray, target: np.ndarray, where: str) -> None:
    """share_embeddings: the two stored tables must be one."""
    if source.shape != target.shape or not np.array_equal(source, target):
        raise UserError(f"{where}: share_embeddings but the encoder and decoder embedding "
                        "tables differ")


def _positions(src: TensorSource, cfg: TransformerConfig, opt, where: str) -> np.ndarray:
    """The stored position buffer (the encoder's and the decoder's must be
    the same), its first max_positions rows; zeros without positions."""
    d = cfg.d_model
    keys = [f"{stack}.embeddings.make_embedding.pe.pe" for stack in ("encoder", "decoder")]
    if not _opt(opt, "position_encoding", True):
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


def read(inputs) -> "Tuple[ModelSpec, List[str]]":
    path = inputs.checkpoint
    if os.path.isdir(path):
        raise UserError(wrong_source(path, NAME, "an OpenNMT-py checkpoint (.pt file)"))
    checkpoint = load_checkpoint(path)
    opt = checkpoint["opt"]
    family = check_options(opt, path)
    (src_pieces, src_ids), (tgt_pieces, tgt_ids) = _vocabularies(checkpoint["vocab"], path)
    state = _numpy_state(checkpoint["model"], path, "model")
    generator = _numpy_state(checkpoint["generator"], path, "generator")
    if "weight" not in generator and "0.weight" in generator:
        # An nn.Sequential(Linear, ...) generator (OpenNMT-py before v3).
        generator = {key[2:]: value for key, value in generator.items() if key.startswith("0.")}
    vocab_sizes = (len(src_pieces), len(tgt_pieces))
    if family == "rnn":
        from . import opennmt_rnn  # imported here: it uses this module's helpers
        cfg, weights = opennmt_rnn.convert(opt, state, generator, path, vocab_sizes,
                                           MAX_POSITIONS)
        notes = [f"max_positions {MAX_POSITIONS}: sources and outputs up to {MAX_POSITIONS} "
                 "tokens"]
    else:
        cfg = transformer_config(opt, state, generator, path, vocab_sizes)
        validate_config(cfg)
        weights = convert_tensors(state, generator, cfg, opt, path)
        notes = [f"positions: the first {MAX_POSITIONS} rows of the stored buffer are kept "
                 f"(sources and outputs up to {MAX_POSITIONS} tokens)"]
    if inputs.spm is not None:
        source_spm = target_spm = read_sentencepiece(inputs.spm, "shared")
    elif inputs.src_spm is not None and inputs.tgt_spm is not None:
        source_spm = read_sentencepiece(inputs.src_spm, "source")
        target_spm = read_sentencepiece(inputs.tgt_spm, "target")
    else:
        raise UserError("--from opennmt needs the SentencePiece model(s) the checkpoint was "
                        "trained on: --spm S, or --src-spm S --tgt-spm T")
    if not (inputs.src_lang and inputs.tgt_lang):
        raise UserError("an OpenNMT-py checkpoint does not name its languages: pass --src-lang "
                        "and --tgt-lang")
    start_piece = checkpoint["vocab"].get("decoder_start_token", "<s>")
    if start_piece not in tgt_ids:
        raise UserError(f"{path}: the decoder start token {start_piece!r} is not in "
                        "vocab['tgt']")
    special = SpecialTokens(pad=tgt_ids["<blank>"], unk=tgt_ids["<unk>"],
                            bos=tgt_ids.get("<s>", tgt_ids[start_piece]), eos=tgt_ids["</s>"],
                            decoder_start=tgt_ids[start_piece])
    decoding = Decoding(rules="opennmt", beam_size=DEFAULT_BEAM, length_penalty=DEFAULT_ALPHA,
                        max_len_a=0.0, max_len_b=float(DEFAULT_MAX_LENGTH), banned_tokens=())
    spec = ModelSpec(
        config=cfg, special_tokens=special, source_language=inputs.src_lang,
        target_language=inputs.tgt_lang, tokenizer_model=source_spm, weights=weights,
        append_eos_to_source=False,
        provenance=Provenance(source_format=NAME, source_checkpoint=os.path.basename(path),
                              source_sha256=sha256_file(path),
                              converter_version=inputs.converter_version,
                              created_utc=inputs.created_utc),
        source_pieces=src_pieces, source_unk_id=src_ids["<unk>"], source_eos_id=src_ids["</s>"],
        target_tokenizer=SideTokenizer(target_spm, tgt_pieces), decoding=decoding)
    return spec, notes
