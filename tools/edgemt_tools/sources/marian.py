"""Source `marian`: a Marian release folder, as OPUS-MT publishes them.

Input: a folder with the model, `.npz` or Marian's binary `.bin` (float32
or intgemm8; sources/marian_binary.py), its config as YAML in the entry
`special:model.yml`, `decoder.yml` (which names the model and the two
vocabularies, and holds the release's decoding options), the vocabularies
(`.yml`: piece -> id, or `.spm`) and, for `.yml` vocabularies,
`source.spm` / `target.spm` (OPUS-MT cuts text with them before Marian sees
it). Facts, checked against marian-dev src/models/transformer.h and
src/graph/node_initializers.cpp (v1.12):

- `y = x·W + b`: W is [in, out], so every matrix is transposed here;
- post-norm ("dan") or pre-norm ("n" / "da" / top "n") layers, LayerNorm
  eps 1e-6; activation `transformer-ffn-activation` (swish, relu, gelu);
- pre-norm: Marian's step-by-step decoding keeps the raw (un-normalized)
  layer inputs as the decoder self-attention memory after the first step
  (transformer.h DecoderLayerSelfAttention / LayerAttention: keys are
  normalized only when they are the query's own input), which the model
  file records (raw_decoder_self_memory) so edgemt decodes the same way;
- embeddings × sqrt(d) with sinusoidal positions (Marian's own table:
  positions.marian), or with `transformer-train-positions` learned
  positions `Wpos` copied as stored (not with
  `transformer-train-position-embeddings`, which the Transformer ignores);
- the first decoder input is a zero vector (zero_decoder_start);
- tied-embeddings-all (`Wemb`), tied-embeddings (`decoder_Wemb` is the
  output), tied-embeddings-src, or none (`decoder_ff_logit_out_W`); output
  bias `decoder_ff_logit_out_b`;
- ids from the vocabularies; `</s>` appended to the source; `<unk>` never
  generated (Marian's default, --allow-unk off);
- `<unk>` and control-character pieces are never generated (Marian's
  suppressed words unless --allow-unk / --allow-special);
- search: Marian's beam search (SearchRules Marian) with decoder.yml's
  beam-size, normalize, word-penalty, max-length-factor (Marian's defaults
  where it is silent); generated tokens stop at ceil(factor × source
  tokens with </s>), at most max-length (the position table's rows);
- a lexical shortlist in the folder (lex*.bin, lex*.s2t) is only named in
  a note: edgemt-convert --shortlist stores one (shortlist.py);
- intgemm8 items (Firefox's int8 models) give their codes' values as the
  weights, and the codes themselves (ModelSpec.int8_codes), which an int8
  file stores as they are: Marian's codes, scale 1/quantMult on every row.

Name mapping (layer l = i + 1; Marian numbers layers from 1):
  {encoder,decoder}_l{l}_self_W{q,k,v}ᵀ / b{q,k,v}   -> self_attn.qkv
  *_self_Woᵀ / bo                                    -> self_attn.out
  *_self_Wo_ln_{scale,bias}[_pre]                    -> self_attn_norm
  decoder_l{l}_context_Wqᵀ / Wk, Wvᵀ / Woᵀ           -> cross_attn.q / .kv / .out
  decoder_ff_logit_out_Wt (or _Wᵀ), _b               -> output.weight, output.bias
  *_context_Wo_ln_{scale,bias}[_pre]                 -> cross_attn_norm
  *_ffn_W1ᵀ, W2ᵀ (b1, b2); *_ffn_ffn_ln_*[_pre]      -> ffn.in, ffn.out; ffn_norm
  {encoder,decoder}_top_ln_{scale,bias}              -> final norms (pre-norm)
"""

import json
import os
import zipfile
from typing import Dict, List, Mapping, Optional, Tuple

import numpy as np

from .. import input_files
from .. import limits
from ..errors import UserError
from ..families.transformer import TransformerConfig
from ..model_spec import (MATRIX, Decoding, ModelSpec, Provenance, SideTokenizer,
                          SpecialTokens, expected_tensors)
from ..positions import marian as marian_positions
from ..validate import first_line, validate_config
from .common import (TensorSource, WeightAssembler, check_covers_sentencepiece, pieces_by_id,
                     read_sentencepiece, sha256_file)
from .config_values import finite_number, flag, whole_number
from .detect import detect, is_marian_binary_model, wrong_source
from . import marian_alphas
from .marian_binary import Intgemm8Item, read_marian_binary
from .duplicate_keys import PlainLoader, SafeLoader

NAME = "marian"
# The model families it writes (families/; edgemt-convert asks them about int8 calibration).
FAMILIES = ("transformer",)
LAYER_NORM_EPS = 1e-6
# Marian's translator defaults (src/common/config_parser.cpp) where decoder.yml is silent.
DEFAULT_BEAM = 12
DEFAULT_NORMALIZE = 0.0
DEFAULT_WORD_PENALTY = 0.0
DEFAULT_MAX_LENGTH_FACTOR = 3.0
DEFAULT_MAX_LENGTH = 1000
# The key Marian's Transformer reads for learned positions (Transformer::
# addSpecialEmbeddings, src/models/transformer.h). The training option
# --transformer-train-position-embeddings, which model.yml records, is read
# only by Marian's BERT models: a Transformer trained with it still adds
# sinusoids (to embeddings times sqrt(d)) and has no `Wpos`.
LEARNED_POSITIONS = "transformer-train-positions"

_ACTIVATIONS = {"swish": "swish", "relu": "relu", "gelu": "gelu"}


def _yaml(text: str, where: str, plain_strings: bool = False):
    """Parsed YAML; a key given twice is refused (duplicate_keys.py).
    plain_strings: every scalar stays a string (a vocabulary's pieces such as
    `yes`, `null` or `1` are pieces, not booleans or numbers)."""
    import yaml
    try:
        return yaml.load(text, Loader=PlainLoader if plain_strings else SafeLoader)
    except yaml.YAMLError as err:
        raise UserError(f"cannot read {where}: {first_line(err)}") from None


def _read_vocabulary(path: str, what: str) -> Dict[str, int]:
    """A Marian .yml / .json vocabulary: piece -> id."""
    mapping = _read_yaml_file(path, what, plain_strings=True)
    if not isinstance(mapping, dict):
        raise UserError(f"{path}: expected piece: id lines")
    out = {}
    for piece, index in mapping.items():
        try:
            out[piece] = int(index)
        except (TypeError, ValueError):
            raise UserError(f"{path}: piece {piece!r} has id {index!r}, not a whole "
                            "number") from None
    return out


def _read_yaml_file(path: str, what: str, plain_strings: bool = False):
    if not input_files.regular_file(path, what):
        raise UserError(f"{what} not found: {path}")
    try:
        with open(path, "r", encoding="utf-8") as handle:
            text = handle.read()
    except FileNotFoundError:
        raise UserError(f"{what} not found: {path}") from None
    except (OSError, UnicodeDecodeError) as err:
        raise UserError(f"cannot read {what} {path}: {first_line(err)}") from None
    return _yaml(text, path, plain_strings)


def _model_yml(npz: Mapping[str, np.ndarray], where: str) -> dict:
    if "special:model.yml" not in npz:
        raise UserError(f"{where}: no special:model.yml entry (not a Marian model, or one "
                        "saved without its config)")
    raw = np.asarray(npz["special:model.yml"]).astype(np.uint8).tobytes().split(b"\0")[0]
    config = _yaml(raw.decode("utf-8", "replace"), f"{where} special:model.yml")
    if not isinstance(config, dict):
        raise UserError(f"{where}: special:model.yml is not a mapping")
    return config


def _option(config: Mapping, key: str, where: str, default=None):
    value = config.get(key, default)
    if value is None:
        raise UserError(f"{where}: special:model.yml has no {key}")
    return value


def _size(config: Mapping, key: str, where: str, default=None) -> int:
    """A size option: a whole number >= 0."""
    value = _option(config, key, where, default)
    if isinstance(value, bool) or not isinstance(value, int) or value < 0:
        raise UserError(f"{where}: special:model.yml {key} is {value!r}, expected a whole "
                        "number >= 0")
    return value


def _flag(config: Mapping, key: str, where: str) -> bool:
    """A boolean option of model.yml, read as Marian (yaml-cpp) reads it."""
    return flag(config, key, f"{where} special:model.yml", False, yaml_cpp_text=True)


def _refuse(where: str, option: str, value, supported: str) -> None:
    raise UserError(f"{where}: Marian option {option}: {value!r} is not supported "
                    f"({supported})")


def transformer_config(config: Mapping, where: str, max_positions: int) -> TransformerConfig:
    """The TransformerConfig of a model.yml; refuses, naming the option, what
    edgemt cannot run."""
    if config.get("type", "transformer") != "transformer":
        _refuse(where, "type", config.get("type"), "only transformer")
    autoregression = _decoder_autoregression(config, where)
    for option, neutral in (("transformer-tied-layers", []), ("transformer-pool", False),
                            ("transformer-no-projection", False), ("skip", False),
                            ("transformer-no-bias", False), ("transformer-no-affine", False),
                            ("factors-dim-emb", 0), ("lemma-dim-emb", 0), ("ulr", False),
                            ("right-left", False), ("transformer-alibi-shift", False),
                            ("transformer-rnn-projection", False),
                            ("transformer-disable-position-embeddings", False)):
        value = config.get(option, neutral)
        if value not in (neutral, None, "") and value != neutral:
            _refuse(where, option, value, f"only {neutral!r}")
    if config.get("input-types") not in (None, [], ["sequence"]):
        _refuse(where, "input-types", config.get("input-types"), "only plain sequences")
    ffn_depth = config.get("transformer-ffn-depth", 2)
    decoder_ffn_depth = config.get("transformer-decoder-ffn-depth", 0) or ffn_depth
    if ffn_depth != 2 or decoder_ffn_depth != 2:
        _refuse(where, "transformer-ffn-depth", ffn_depth, "only 2")
    ffn = _size(config, "transformer-dim-ffn", where)
    decoder_ffn = _size(config, "transformer-decoder-dim-ffn", where, 0) or ffn
    if decoder_ffn != ffn:
        _refuse(where, "transformer-decoder-dim-ffn", decoder_ffn,
                f"only equal to transformer-dim-ffn ({ffn})")
    activation_name = config.get("transformer-ffn-activation", "swish")
    activation = _ACTIVATIONS.get(activation_name) if isinstance(activation_name, str) else None
    if activation is None:
        _refuse(where, "transformer-ffn-activation", config.get("transformer-ffn-activation"),
                "swish, relu, gelu")
    pre = config.get("transformer-preprocess", "")
    post = config.get("transformer-postprocess", "dan")
    top = config.get("transformer-postprocess-top", "")
    if (pre, post, top) == ("", "dan", ""):
        placement = "post"
    elif (pre, post, top) == ("n", "da", "n"):
        placement = "pre"
    else:
        _refuse(where, "transformer-preprocess/postprocess/postprocess-top", [pre, post, top],
                "post-norm '', dan, '' or pre-norm n, da, n")
    if autoregression == "ssru" and placement != "post":
        _refuse(where, "transformer-preprocess/postprocess/postprocess-top", [pre, post, top],
                "with an SSRU decoder only post-norm '', dan, ''")
    if config.get("transformer-postprocess-emb", "d") not in ("d", ""):
        _refuse(where, "transformer-postprocess-emb", config.get("transformer-postprocess-emb"),
                "only d (no embedding normalization)")
    vocabs = _option(config, "dim-vocabs", where)
    if not isinstance(vocabs, list) or len(vocabs) != 2 or not all(
            isinstance(v, int) and not isinstance(v, bool) and v > 0 for v in vocabs):
        _refuse(where, "dim-vocabs", vocabs, "one source and one target vocabulary size")
    d = _size(config, "dim-emb", where)
    learned = _flag(config, LEARNED_POSITIONS, where)
    tied_all = _flag(config, "tied-embeddings-all", where)
    tied_src = _flag(config, "tied-embeddings-src", where)
    tied = _flag(config, "tied-embeddings", where) or tied_all
    shared = tied_all or tied_src
    if shared and vocabs[0] != vocabs[1]:
        raise UserError(f"{where}: tied source and target embeddings with vocabularies of "
                        f"{vocabs[0]} and {vocabs[1]} pieces")
    return TransformerConfig(
        encoder_layers=_size(config, "enc-depth", where),
        decoder_layers=_size(config, "dec-depth", where), d_model=d,
        heads=_size(config, "transformer-heads", where), ffn_dim=ffn, vocab_size=vocabs[1],
        max_positions=max_positions, activation=activation, norm_placement=placement,
        layer_norm_eps=LAYER_NORM_EPS, encoder_final_norm=placement == "pre",
        decoder_final_norm=placement == "pre",
        embedding_scale=1.0 if learned else float(np.sqrt(d)), tied_output=tied,
        output_bias=not _flag(config, "output-omit-bias", where), shared_embeddings=shared,
        source_vocab_size=0 if vocabs[0] == vocabs[1] and shared else vocabs[0],
        zero_decoder_start=True, raw_decoder_self_memory=placement == "pre",
        decoder_autoregression=autoregression)


def _decoder_autoregression(config: Mapping, where: str) -> str:
    """"self-attention", or "ssru" for Marian's SSRU decoder
    (transformer-decoder-autoreg: rnn with dec-cell: ssru: Firefox
    Translations' students); other cells and average attention are refused."""
    kind = config.get("transformer-decoder-autoreg", "self-attention")
    if kind == "self-attention":
        return kind
    if kind == "rnn":
        if config.get("dec-cell", "gru") != "ssru":
            _refuse(where, "dec-cell", config.get("dec-cell", "gru"),
                    "with transformer-decoder-autoreg: rnn only ssru")
        return "ssru"
    _refuse(where, "transformer-decoder-autoreg", kind,
            "self-attention, or rnn with dec-cell: ssru; average-attention decoders are not")
    return kind


def convert_tensors(npz: Mapping[str, np.ndarray], config: Mapping, cfg: TransformerConfig,
                    where: str) -> "Dict[str, np.ndarray]":
    d, f, v = cfg.d_model, cfg.ffn_dim, cfg.vocab_size
    vs = cfg.source_vocab_size or v
    # Static activation scales of Marian's int8 products (the "alphas" of
    # Firefox's .intgemm.alphas.bin): edgemt quantizes activations itself.
    alphas = [name for name in npz if name.endswith("_QuantMultA")]
    src = TensorSource(npz, where, ignored=["special:model.yml", *alphas])
    out = WeightAssembler(cfg)
    if cfg.shared_embeddings:  # tied-embeddings-all or tied-embeddings-src
        out.put("embedding.source", src.take("Wemb", (v, d)), "Wemb")
        target_key = "Wemb"
    else:
        out.put("embedding.source", src.take("encoder_Wemb", (vs, d)), "encoder_Wemb")
        target_key = "decoder_Wemb"
        out.put("embedding.target", src.take(target_key, (v, d)), target_key)
    if not cfg.tied_output:
        # Marian >= 1.9 stores it transposed, [V, d], as `_Wt`; older
        # models as `_W` [d, V] (src/layers/output.cpp).
        if src.has("decoder_ff_logit_out_Wt"):
            out.put("output.weight", src.take("decoder_ff_logit_out_Wt", (v, d)),
                    "decoder_ff_logit_out_Wt")
        else:
            out.put("output.weight", src.take("decoder_ff_logit_out_W", (d, v)).T,
                    "decoder_ff_logit_out_W")
    if cfg.output_bias:
        out.put("output.bias", src.take("decoder_ff_logit_out_b", (1, v)).reshape(v),
                "decoder_ff_logit_out_b")
    if _flag(config, LEARNED_POSITIONS, where):
        table = src.take("Wpos")
        if table.ndim != 2 or table.shape[1] != d or table.shape[0] < cfg.max_positions:
            raise UserError(f"shape mismatch: Wpos is {list(table.shape)}, expected at least "
                            f"[{cfg.max_positions}, {d}]")
        out.put("position.table", table[:cfg.max_positions], "Wpos")
    else:
        out.put("position.table", marian_positions(cfg.max_positions, d), "(computed)")
    suffix = "_pre" if cfg.norm_placement == "pre" else ""
    for stack, layers in (("encoder", cfg.encoder_layers), ("decoder", cfg.decoder_layers)):
        for i in range(layers):
            m = f"{stack}_l{i + 1}"
            e = f"{stack}.layers.{i}"
            if stack == "decoder" and cfg.decoder_autoregression == "ssru":
                _put_ssru(out, src, f"{m}_rnn", f"{e}.ssru", d)
                _put_norm(out, src, f"{m}_rnn_ffn_ln", suffix, f"{e}.ssru_norm", d)
            else:
                _put_attention(out, src, f"{m}_self", f"{e}.self_attn", d, fused_kv=False)
                _put_norm(out, src, f"{m}_self_Wo_ln", suffix, f"{e}.self_attn_norm", d)
            if stack == "decoder":
                _put_attention(out, src, f"{m}_context", f"{e}.cross_attn", d, fused_kv=True)
                _put_norm(out, src, f"{m}_context_Wo_ln", suffix, f"{e}.cross_attn_norm", d)
            _put_dense(out, src, f"{m}_ffn_W1", f"{m}_ffn_b1", f"{e}.ffn.in", d, f)
            _put_dense(out, src, f"{m}_ffn_W2", f"{m}_ffn_b2", f"{e}.ffn.out", f, d)
            _put_norm(out, src, f"{m}_ffn_ffn_ln", suffix, f"{e}.ffn_norm", d)
        if cfg.norm_placement == "pre":
            _put_norm(out, src, f"{stack}_top_ln", "", f"{stack}.final_norm", d)
    src.refuse_unused()
    return out.result()


def intgemm8_codes(items: Mapping[str, np.ndarray], quantized: Mapping[str, Intgemm8Item],
                   config: Mapping, cfg: TransformerConfig,
                   where: str) -> "Dict[str, Tuple[np.ndarray, np.ndarray]]":
    """edgemt matrix name -> (codes int8 [out, in], scale float32 [out]) for
    every matrix made only of intgemm8 items (`quantized`, of the model's
    `items`): Marian's codes, and on each row the step 1/quantMult of the
    item the row comes from (a fused matrix, such as qkv, has one per part).

    convert_tensors only transposes, reshapes and concatenates, so it places
    codes and steps exactly where it places the weights: it runs once on the
    codes and once on each element's step (0 for a float item, so a matrix
    with any float part keeps no codes)."""
    codes = _placed(items, quantized, config, cfg, where, lambda item: item.codes.astype(np.float32))
    steps = _placed(items, quantized, config, cfg, where,
                    lambda item: np.full(item.codes.shape, item.step, np.float32))
    specs = expected_tensors(cfg, "fp32")
    kept = {}
    for name, step in steps.items():
        if specs[name].kind == MATRIX and (step > 0).all() and (step == step[:, :1]).all():
            kept[name] = (codes[name].astype(np.int8), np.ascontiguousarray(step[:, 0]))
    return kept


def intgemm8_quant_mults(items: Mapping[str, np.ndarray], quantized: Mapping[str, Intgemm8Item],
                         config: Mapping, cfg: TransformerConfig,
                         where: str) -> "Dict[str, np.ndarray]":
    """edgemt matrix name -> each row's Marian quantMult [out] (0 where a
    row is no intgemm8 item's), placed as intgemm8_codes places the steps."""
    placed = _placed(items, quantized, config, cfg, where,
                     lambda item: np.full(item.codes.shape, item.quant_mult, np.float32))
    return {name: np.ascontiguousarray(rows[:, 0]) for name, rows in placed.items()
            if np.ndim(rows) == 2}


def _placed(items, quantized, config, cfg, where, value) -> "Dict[str, np.ndarray]":
    """convert_tensors of value(item) for each intgemm8 item, zeros elsewhere."""
    view = {name: value(quantized[name]) if name in quantized
            else np.zeros(np.shape(array), np.float32) for name, array in items.items()}
    return convert_tensors(view, config, cfg, where)


def _put_dense(out: WeightAssembler, src: TensorSource, w: str, b: str, name: str,
               in_dim: int, out_dim: int) -> None:
    out.put(f"{name}.weight", src.take(w, (in_dim, out_dim)).T, w)
    out.put(f"{name}.bias", src.take(b, (1, out_dim)).reshape(out_dim), b)


def _put_norm(out: WeightAssembler, src: TensorSource, prefix: str, suffix: str, name: str,
              d: int) -> None:
    scale, bias = f"{prefix}_scale{suffix}", f"{prefix}_bias{suffix}"
    out.put(f"{name}.weight", src.take(scale, (1, d)).reshape(d), scale)
    out.put(f"{name}.bias", src.take(bias, (1, d)).reshape(d), bias)


def _put_ssru(out: WeightAssembler, src: TensorSource, m: str, name: str, d: int) -> None:
    """An SSRU's two products as one [2d, d] linear: x~ = x W (no bias) in
    rows [0, d), the forget gate's x Wf + bf in rows [d, 2d); the x~ half's
    bias is 0, which adds nothing (schema/edgemt.fbs DecoderAutoregression)."""
    w = src.take(f"{m}_W", (d, d)).T
    wf = src.take(f"{m}_Wf", (d, d)).T
    bf = src.take(f"{m}_bf", (1, d)).reshape(d)
    out.put(f"{name}.gates.weight", np.concatenate([w, wf]), f"{m}_W")
    out.put(f"{name}.gates.bias", np.concatenate([np.zeros(d, np.float32), bf]), f"{m}_bf")


def _put_attention(out: WeightAssembler, src: TensorSource, m: str, name: str, d: int,
                   fused_kv: bool) -> None:
    """Q, K, V and output projections of one attention ([in, out] -> [out, in])."""
    w = {p: src.take(f"{m}_W{p}", (d, d)).T for p in "qkvo"}
    b = {p: src.take(f"{m}_b{p}", (1, d)).reshape(d) for p in "qkvo"}
    if fused_kv:
        out.put(f"{name}.q.weight", w["q"], f"{m}_Wq")
        out.put(f"{name}.q.bias", b["q"], f"{m}_bq")
        out.put(f"{name}.kv.weight", np.concatenate([w["k"], w["v"]]), f"{m}_Wk")
        out.put(f"{name}.kv.bias", np.concatenate([b["k"], b["v"]]), f"{m}_bk")
    else:
        out.put(f"{name}.qkv.weight", np.concatenate([w["q"], w["k"], w["v"]]), f"{m}_Wq")
        out.put(f"{name}.qkv.bias", np.concatenate([b["q"], b["k"], b["v"]]), f"{m}_bq")
    out.put(f"{name}.out.weight", w["o"], f"{m}_Wo")
    out.put(f"{name}.out.bias", b["o"], f"{m}_bo")


class Vocabulary:
    """One side's vocabulary file: pieces by id, and the SentencePiece model
    that cuts text for it. A .yml (or .json) vocabulary must give every id of
    the model's `size` one piece and hold every piece the SentencePiece model
    outputs (common.pieces_by_id, check_covers_sentencepiece); `note` tells
    the pieces it lacks when `allow_missing` lets them pass."""

    def __init__(self, path: str, size: int, spm_path: Optional[str], side: str,
                 allow_missing: bool = False):
        self.path = path
        self.note = None
        sentencepiece_vocabulary = input_files.without_gz(path).endswith(".spm")
        if sentencepiece_vocabulary:
            # Marian runs SentencePiece itself: its ids are the vocabulary.
            self.spm = read_sentencepiece(path, side)
            import sentencepiece
            sp = sentencepiece.SentencePieceProcessor(model_proto=self.spm)
            if sp.get_piece_size() != size:
                raise UserError(f"{path} has {sp.get_piece_size()} pieces, the model "
                                f"{size} {side} ids")
            mapping = {sp.id_to_piece(i): i for i in range(size)}
            # Marian names SentencePiece's eos and unk </s> and <unk>.
            mapping = {("</s>" if i == sp.eos_id() else "<unk>" if i == sp.unk_id() else p): i
                       for p, i in mapping.items()}
            self.byte_control_ids = [i for p, i in mapping.items() if _is_control_byte(p)]
        else:
            mapping = _read_vocabulary(path, f"{side} vocabulary")
            if spm_path is None or not input_files.regular_file(spm_path, f"{side}.spm"):
                raise UserError(f"the {side} vocabulary {path} is a .yml file: the "
                                f"SentencePiece model that cuts text for it is needed "
                                f"({side}.spm in the folder, or --{side[:3]}-spm)")
            self.spm = read_sentencepiece(spm_path, side)
            # DefaultVocab::addSpecialWords: pieces that are one control character.
            self.byte_control_ids = [i for p, i in mapping.items()
                                     if isinstance(p, str) and len(p) == 1 and _is_control(p)]
        mapping = {str(p): i for p, i in mapping.items()}
        self.pieces = pieces_by_id(mapping, size, path)
        if not sentencepiece_vocabulary:
            self.note = check_covers_sentencepiece(mapping, self.spm, path, spm_path,
                                                   allow_missing)
        for special in ("</s>", "<unk>"):
            if special not in mapping:
                raise UserError(f"{path} has no {special} piece")
        self.eos = mapping["</s>"]
        self.unk = mapping["<unk>"]


def _is_control(char: str) -> bool:
    return ord(char) < 0x20 or ord(char) == 0x7F


def _is_control_byte(piece: str) -> bool:
    """SentencePiece byte-fallback pieces of control characters (<0x00>..<0x1F>, <0x7F>)."""
    if len(piece) != 6 or not piece.startswith("<0x") or not piece.endswith(">"):
        return False
    try:
        value = int(piece[3:5], 16)
    except ValueError:
        return False
    return value < 0x20 or value == 0x7F


def _in_folder(folder: str, name: str) -> str:
    """A file decoder.yml names: relative to the folder (relative-paths), or
    absolute as written when the release was made, in which case the file of
    that name in the folder."""
    path = os.path.join(folder, name)
    if not os.path.exists(path) and os.path.isabs(name):
        path = os.path.join(folder, os.path.basename(name))
    return path


def _find_model(folder: str, decoder: Mapping) -> str:
    models = decoder.get("models") if isinstance(decoder, dict) else None
    if isinstance(models, list) and models:
        path = _in_folder(folder, str(models[0]))
        if len(models) > 1:
            raise UserError(f"decoder.yml lists {len(models)} models (an ensemble); edgemt "
                            "converts one model")
        return path
    # A shortlist (lex.*.bin) is no model: a .bin counts by its header.
    found = sorted(name for name in os.listdir(folder) if name.endswith(".npz") or (
        input_files.without_gz(name).endswith(".bin")
        and is_marian_binary_model(os.path.join(folder, name))))
    if len(found) != 1:
        raise UserError(f"{folder}: expected one model, .npz or .bin (found {len(found)}), or a "
                        "decoder.yml naming it")
    return os.path.join(folder, found[0])


def _firefox_vocabularies(folder: str) -> List[str]:
    """Without a decoder.yml naming them, the vocabularies of a folder as
    Firefox Translations downloads a model (model, lex.*.bin and either one
    vocab.<pair>.spm for both sides, or srcvocab.<pair>.spm and
    trgvocab.<pair>.spm; each also .gz, as its model repository has them):
    [source, target] file names. UserError when the folder holds neither
    layout, or both."""
    def named(prefix: str) -> List[str]:
        return sorted(name for name in os.listdir(folder)
                      if name.startswith(prefix) and input_files.without_gz(name).endswith(".spm"))
    joint, source, target = named("vocab"), named("srcvocab"), named("trgvocab")
    if len(joint) == 1 and not source and not target:
        return [joint[0], joint[0]]
    if len(source) == 1 and len(target) == 1 and not joint:
        return [source[0], target[0]]
    found = ", ".join(joint + source + target) or "none"
    raise UserError(f"{folder}: no decoder.yml naming the vocabularies, and not one vocab*.spm "
                    "for both sides nor one srcvocab*.spm with one trgvocab*.spm (found: "
                    f"{found}); write a decoder.yml with 'vocabs: [SOURCE, TARGET]'")


def firefox_languages(folder: str, source: Optional[str],
                      target: Optional[str]) -> Tuple[str, str]:
    """(source, target) language: as given, else from the folder's
    metadata.json (sourceLanguage, targetLanguage), which Firefox
    Translations' model repository writes beside each model. UserError when
    one is still missing."""
    path = os.path.join(folder, "metadata.json")
    if not (source and target) and input_files.regular_file(path, "metadata.json"):
        try:
            with open(path, encoding="utf-8") as handle:
                metadata = json.load(handle)
        except (OSError, ValueError) as err:
            raise UserError(f"{path}: not JSON ({str(err).splitlines()[0]}); pass --src-lang "
                            "and --tgt-lang") from None
        if isinstance(metadata, dict):
            named = [metadata.get(key) for key in ("sourceLanguage", "targetLanguage")]
            source, target = (given or (value if isinstance(value, str) and value else None)
                              for given, value in zip((source, target), named))
    if not (source and target):
        raise UserError("a Marian folder does not name its languages: pass --src-lang and "
                        "--tgt-lang")
    return source, target


def _shortlist_note(folder: str) -> Optional[str]:
    """A note suggesting the folder's lexical shortlist (lex*.bin, else
    lex*.s2t; Firefox Translations ships lex.50.50.<pair>.s2t.bin), which
    is stored only when named with --shortlist."""
    kinds = {name: input_files.without_gz(name) for name in os.listdir(folder)}
    found = sorted((not kind.endswith(".bin"), name) for name, kind in kinds.items()
                   if name.startswith("lex") and kind.endswith((".bin", ".s2t")))
    if not found:
        return None
    path = os.path.join(folder, found[0][1])
    return (f"{folder} holds a lexical shortlist: add --shortlist {path} to translate over "
            "its candidates only, as Marian does with it")


def _decoder_number(decoder: Mapping, key: str, default, **bounds) -> float:
    """A decoding option of decoder.yml (Marian's default when absent); a
    number written as text counts, as yaml-cpp reads it."""
    return finite_number(decoder, key, "decoder.yml", default, numeric_text=True, **bounds)


def decoding_defaults(decoder: Mapping, unk: int, control_ids: List[int]) -> Decoding:
    """Marian's translator options as decoder.yml gives them (Marian's defaults
    where it is silent); <unk> banned unless allow-unk."""
    allow_unk = flag(decoder, "allow-unk", "decoder.yml", False, yaml_cpp_text=True)
    banned = [] if allow_unk else [unk]
    beam = whole_number(decoder, "beam-size", "decoder.yml", DEFAULT_BEAM, low=1,
                        high=limits.MAX_BEAM, numeric_text=True)
    return Decoding(rules="marian", beam_size=beam,
                    length_penalty=_decoder_number(decoder, "normalize", DEFAULT_NORMALIZE),
                    word_penalty=_decoder_number(decoder, "word-penalty", DEFAULT_WORD_PENALTY),
                    max_len_a=_decoder_number(decoder, "max-length-factor",
                                              DEFAULT_MAX_LENGTH_FACTOR, above=0.0),
                    max_len_b=0.0, banned_tokens=tuple(sorted(set(banned + control_ids))))


def _load_npz(path: str) -> Dict[str, np.ndarray]:
    if not input_files.regular_file(path, "Marian model"):
        raise UserError(f"Marian model not found: {path}")
    # np.load(allow_pickle=False) calls anything that is not a zip or .npy
    # file "pickled data"; say what is wrong with it instead.
    input_files.refuse_empty(path, "Marian model")
    if not zipfile.is_zipfile(path):
        raise UserError(f"Marian model {path} is not a valid .npz archive (not a zip file, or "
                        "a truncated one)")
    try:
        with np.load(path, allow_pickle=False) as archive:
            return {name: archive[name] for name in archive.files}
    except Exception as err:  # noqa: BLE001 - numpy raises many kinds for a bad archive
        raise UserError(f"cannot read {path}: {first_line(err)}") from None


def read(inputs) -> "Tuple[ModelSpec, List[str]]":
    folder = inputs.checkpoint
    if not os.path.isdir(folder) or detect(folder) not in (None, NAME):
        raise UserError(wrong_source(folder, NAME, "a Marian release folder (model .npz, "
                                                   "decoder.yml, vocabularies, source.spm, "
                                                   "target.spm)"))
    # Before the model is read (seconds for an OPUS-MT model).
    src_lang, tgt_lang = firefox_languages(folder, inputs.src_lang, inputs.tgt_lang)
    decoder_path = os.path.join(folder, "decoder.yml")
    decoder = (_read_yaml_file(decoder_path, "decoder.yml")
               if input_files.regular_file(decoder_path, "decoder.yml") else {})
    if not isinstance(decoder, dict):
        raise UserError(f"{decoder_path}: expected a mapping")
    npz_path = _find_model(folder, decoder)
    binary = input_files.without_gz(npz_path).endswith(".bin")
    npz, quantized = read_marian_binary(npz_path) if binary else (_load_npz(npz_path), {})
    config = _model_yml(npz, npz_path)
    notes = []
    max_length = whole_number(decoder, "max-length", "decoder.yml", DEFAULT_MAX_LENGTH, low=1,
                              high=limits.MAX_POSITIONS, numeric_text=True)
    cfg = transformer_config(config, npz_path, max_positions=max_length)
    validate_config(cfg)
    vocab_paths = decoder.get("vocabs")
    if vocab_paths is None:
        vocab_paths = _firefox_vocabularies(folder)
    if not isinstance(vocab_paths, list) or len(vocab_paths) != 2:
        raise UserError(f"{decoder_path}: expected 'vocabs' with a source and a target "
                        "vocabulary")
    source_vocab = Vocabulary(_in_folder(folder, str(vocab_paths[0])),
                              cfg.source_vocab_size or cfg.vocab_size,
                              inputs.src_spm or os.path.join(folder, "source.spm"), "source",
                              inputs.allow_missing_pieces)
    target_vocab = Vocabulary(_in_folder(folder, str(vocab_paths[1])), cfg.vocab_size,
                              inputs.tgt_spm or os.path.join(folder, "target.spm"), "target",
                              inputs.allow_missing_pieces)
    notes.extend(vocab.note for vocab in (source_vocab, target_vocab) if vocab.note)
    shortlist_note = _shortlist_note(folder) if inputs.shortlist is None else None
    notes.extend([shortlist_note] if shortlist_note else [])
    weights = convert_tensors(npz, config, cfg, npz_path)
    int8_codes = intgemm8_codes(npz, quantized, config, cfg, npz_path) if quantized else {}
    int8_static = {}
    alphas = marian_alphas.alphas_of(npz)
    if int8_codes and alphas:
        table = weights.get("output.weight", weights.get("embedding.target",
                                                         weights.get("embedding.source")))
        int8_static = marian_alphas.static_matrices(
            alphas, int8_codes, intgemm8_quant_mults(npz, quantized, config, cfg, npz_path),
            weights, table, marian_alphas.output_weight_name(cfg), npz_path)
    special = SpecialTokens(pad=target_vocab.eos, unk=target_vocab.unk, bos=target_vocab.eos,
                            eos=target_vocab.eos, decoder_start=target_vocab.eos)
    spec = ModelSpec(
        config=cfg, special_tokens=special, source_language=src_lang,
        target_language=tgt_lang, tokenizer_model=source_vocab.spm, weights=weights,
        append_eos_to_source=True,
        provenance=Provenance(source_format=NAME, source_checkpoint=os.path.basename(npz_path),
                              source_sha256=sha256_file(npz_path),
                              converter_version=inputs.converter_version,
                              created_utc=inputs.created_utc),
        source_pieces=source_vocab.pieces, source_unk_id=source_vocab.unk,
        source_eos_id=source_vocab.eos,
        target_tokenizer=SideTokenizer(target_vocab.spm, target_vocab.pieces),
        decoding=decoding_defaults(decoder, target_vocab.unk, target_vocab.byte_control_ids),
        int8_codes=int8_codes, int8_static=int8_static,
        # Marian's rule (translator.h): one vocabulary when both sides name
        # the same file; a shortlist then adds the source's ids.
        shared_vocabulary=str(vocab_paths[0]) == str(vocab_paths[1]))
    return spec, notes
