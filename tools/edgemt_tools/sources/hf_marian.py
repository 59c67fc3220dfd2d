"""Source `hf-marian`: a Hugging Face MarianMT folder (opus-mt models).

Input: a folder with `config.json` (model_type "marian"), the weights as
`model.safetensors` (safetensors_file.py; any float dtype, bf16 and f8
too) or `pytorch_model.bin` (torch_zip.py: nothing it names runs),
`source.spm`, `target.spm`, `vocab.json` (and `target_vocab.json` when the
two sides have vocabularies of their own), and `generation_config.json`
when present. Everything the model file needs comes from these files,
checked against transformers/models/marian/modeling_marian.py (4.40):

- post-norm layers, LayerNorm eps 1e-5, no final stack norm; activation
  from `activation_function` (swish/silu, gelu, relu);
- embeddings × sqrt(d_model) when `scale_embedding`; positions not
  interleaved (sin half, then cos half; positions.hugging_face_marian), not
  stored in the checkpoint, `max_position_embeddings` rows;
- `lm_head.weight` tied to `model.shared.weight` (absent from many
  safetensors files), plus the buffer `final_logits_bias` [1, V];
- ids come from vocab.json, not from SentencePiece; the source gets `</s>`;
  the decoder starts with `decoder_start_token_id` (pad);
- search: transformers' generate() (SearchRules HuggingFace) with the
  generation config's num_beams, length_penalty, max_length (EOS forced at
  max_length - 1 decoder tokens) and bad_words_ids (pad).

Name mapping (layer i; Linear weights are [out, in] as edgemt's):
  model.shared.weight                     -> embedding.source (= target, output)
  model.{encoder,decoder}.layers.i.self_attn.{q,k,v}_proj -> self_attn.qkv (rows q, k, v)
  *.self_attn.out_proj                    -> self_attn.out
  *.self_attn_layer_norm                  -> self_attn_norm
  model.decoder.layers.i.encoder_attn.q_proj -> cross_attn.q; {k,v}_proj -> cross_attn.kv
  *.encoder_attn.out_proj / _layer_norm   -> cross_attn.out / cross_attn_norm
  *.fc1, *.fc2, *.final_layer_norm        -> ffn.in, ffn.out, ffn_norm
  final_logits_bias [1, V]                -> output.bias [V]
"""

import json
import os
from dataclasses import replace
from typing import Dict, List, Mapping, Optional, Tuple

import numpy as np

from .. import input_files
from .. import limits
from ..errors import UserError
from ..hub import HubFiles
from ..families.transformer import (MAX_D_MODEL, MAX_FFN_DIM, MAX_LAYERS_PER_STACK,
                                   TransformerConfig)
from ..model_spec import Decoding, ModelSpec, Provenance, SideTokenizer, SpecialTokens
from ..positions import hugging_face_marian
from ..validate import first_line, validate_config
from . import safetensors_file, torch_zip
from .config_values import REQUIRED, finite_number, flag, text, whole_number
from .common import (TensorSource, WeightAssembler, check_covers_sentencepiece, pieces_by_id,
                     read_sentencepiece, sha256_file)
from .detect import wrong_source
from .duplicate_keys import json_object

NAME = "hf-marian"
# The model families it writes (families/; edgemt-convert asks them about int8 calibration).
FAMILIES = ("transformer",)
# What a Hub model id fetches (hub.py): the files read() reads, and of the
# weights the first the repository has (many OPUS-MT repositories also hold
# TensorFlow, Flax and Rust copies of the weights, which are not fetched).
HUB_FILES = HubFiles(
    required=("config.json", "vocab.json", "source.spm", "target.spm"),
    optional=("generation_config.json", "tokenizer_config.json", "target_vocab.json"),
    weights=("model.safetensors", "pytorch_model.bin"))

_ACTIVATIONS = {"swish": "swish", "silu": "swish", "gelu": "gelu", "relu": "relu"}
# generate() options whose non-default values edgemt does not reproduce.
_UNREPRODUCED = {"no_repeat_ngram_size": 0, "repetition_penalty": 1.0, "min_length": 0,
                 "do_sample": False, "num_beam_groups": 1, "diversity_penalty": 0.0,
                 "encoder_no_repeat_ngram_size": 0, "forced_bos_token_id": None,
                 "min_new_tokens": None, "max_new_tokens": None, "early_stopping": False,
                 "suppress_tokens": None, "begin_suppress_tokens": None}


def _read_json(path: str, what: str) -> dict:
    if not input_files.regular_file(path, what):
        raise UserError(f"{what} not found: {path}")
    try:
        with open(path, "r", encoding="utf-8") as handle:
            value = json.load(handle, object_pairs_hook=json_object)
    except FileNotFoundError:
        raise UserError(f"{what} not found: {path}") from None
    except (OSError, ValueError) as err:
        raise UserError(f"cannot read {what} {path}: {first_line(err)}") from None
    if not isinstance(value, dict):
        raise UserError(f"{what} {path}: expected a JSON object")
    return value


def _int(config: Mapping, key: str, where: str, default=REQUIRED, low: int = 0,
         high: Optional[int] = None) -> int:
    return whole_number(config, key, where, default, low, high)


def _size(config: Mapping, key: str, where: str, high: int) -> int:
    """A size of the architecture: 1 to the runtime's limit (limits.py)."""
    return _int(config, key, where, low=1, high=high)


def read_config(folder: str) -> dict:
    path = os.path.join(folder, "config.json")
    config = _read_json(path, "config.json")
    if config.get("model_type") != "marian":
        raise UserError(f"{path}: model_type is {config.get('model_type')!r}, not 'marian' "
                        "(only MarianMT folders convert with --from hf-marian)")
    return config


def transformer_config(config: Mapping, where: str) -> TransformerConfig:
    """The TransformerConfig of a MarianConfig; refuses what edgemt cannot run."""
    d = _size(config, "d_model", where, MAX_D_MODEL)
    heads = _size(config, "encoder_attention_heads", where, d)
    if _size(config, "decoder_attention_heads", where, d) != heads:
        raise UserError(f"{where}: encoder and decoder have different head counts "
                        f"({heads} and {config['decoder_attention_heads']}); edgemt needs one")
    ffn = _size(config, "encoder_ffn_dim", where, MAX_FFN_DIM)
    if _size(config, "decoder_ffn_dim", where, MAX_FFN_DIM) != ffn:
        raise UserError(f"{where}: encoder and decoder have different FFN sizes "
                        f"({ffn} and {config['decoder_ffn_dim']}); edgemt needs one")
    activation = _ACTIVATIONS.get(text(config, "activation_function", where))
    if activation is None:
        raise UserError(f"{where}: activation_function {config.get('activation_function')!r} "
                        f"is not supported (supported: {', '.join(sorted(_ACTIVATIONS))})")
    vocab = _size(config, "vocab_size", where, limits.MAX_VOCAB_SIZE)
    # Absent or null in older folders: the shared vocabulary's size.
    decoder_vocab = (vocab if config.get("decoder_vocab_size") is None
                     else _size(config, "decoder_vocab_size", where, limits.MAX_VOCAB_SIZE))
    shared = flag(config, "share_encoder_decoder_embeddings", where, True)
    if decoder_vocab != vocab and shared:
        raise UserError(f"{where}: decoder_vocab_size {decoder_vocab} differs from vocab_size "
                        f"{vocab} with shared embeddings")
    if not flag(config, "static_position_embeddings", where, True):
        raise UserError(f"{where}: learned position embeddings are not supported")
    for option in ("normalize_before", "add_final_layer_norm", "normalize_embedding",
                   "add_bias_logits"):
        if flag(config, option, where, False):
            raise UserError(f"{where}: {option} = true is not supported (MarianMT models have "
                            "post-norm layers without embedding or final normalization)")
    scale = float(np.sqrt(d)) if flag(config, "scale_embedding", where, False) else 1.0
    return TransformerConfig(
        encoder_layers=_size(config, "encoder_layers", where, MAX_LAYERS_PER_STACK),
        decoder_layers=_size(config, "decoder_layers", where, MAX_LAYERS_PER_STACK),
        d_model=d, heads=heads,
        ffn_dim=ffn, vocab_size=decoder_vocab,
        max_positions=_size(config, "max_position_embeddings", where, limits.MAX_POSITIONS),
        activation=activation,
        norm_placement="post", layer_norm_eps=1e-5, encoder_final_norm=False,
        decoder_final_norm=False, embedding_scale=scale, tied_output=False, output_bias=True,
        shared_embeddings=shared, source_vocab_size=0 if shared else vocab)


def load_tensors(folder: str) -> Tuple[Dict[str, np.ndarray], str]:
    """The checkpoint's tensors as numpy arrays and the file they came from:
    model.safetensors when present, else pytorch_model.bin."""
    safetensors_path = os.path.join(folder, "model.safetensors")
    bin_path = os.path.join(folder, "pytorch_model.bin")
    if input_files.regular_file(safetensors_path, "model.safetensors"):
        input_files.refuse_empty(safetensors_path, "model.safetensors")
        return safetensors_file.load(safetensors_path), safetensors_path
    if input_files.regular_file(bin_path, "pytorch_model.bin"):
        input_files.refuse_empty(bin_path, "pytorch_model.bin")
        try:
            state = torch_zip.load(bin_path)
        except torch_zip.CheckpointError as err:
            raise UserError(f"cannot load {bin_path}: {err}") from None
        if not isinstance(state, Mapping):
            raise UserError(f"{bin_path}: expected a state_dict, got {type(state).__name__}")
        out = {}
        for key, tensor in state.items():
            if not isinstance(tensor, np.ndarray):
                raise UserError(f"{bin_path}: entry {key} is not a tensor")
            out[key] = (tensor.astype(np.float32) if np.issubdtype(tensor.dtype, np.floating)
                        else tensor)
        return out, bin_path
    raise UserError(f"{folder} has neither model.safetensors nor pytorch_model.bin")


def _linear(src: TensorSource, key: str, out_dim: int, in_dim: int):
    return src.take(f"{key}.weight", (out_dim, in_dim)), src.take(f"{key}.bias", (out_dim,))


def convert_tensors(tensors: Mapping[str, np.ndarray], cfg: TransformerConfig, where: str):
    """Map the checkpoint's tensors onto edgemt's names. Returns the config
    (tied_output set from what the checkpoint holds) and the weights."""
    d, f, v = cfg.d_model, cfg.ffn_dim, cfg.vocab_size
    vs = cfg.source_vocab_size or v
    src = TensorSource(tensors, where,
                       ignored=[k for k in tensors if k.endswith("embed_positions.weight")])
    target_key = ("model.shared.weight" if cfg.shared_embeddings
                  else "model.decoder.embed_tokens.weight")
    target = src.take(target_key, (v, d))
    # lm_head is tied to the target embedding in MarianMT (tie_word_embeddings
    # defaults to true); a checkpoint may store it or leave it out.
    head = None
    if src.has("lm_head.weight"):
        head = src.take("lm_head.weight", (v, d))
        if np.array_equal(head, target):
            head = None
    cfg = replace(cfg, tied_output=head is None)
    out = WeightAssembler(cfg)
    if cfg.shared_embeddings:
        for key in ("model.encoder.embed_tokens.weight", "model.decoder.embed_tokens.weight"):
            if src.has(key) and not np.array_equal(src.take(key), target):
                raise UserError(f"{where}: {key} differs from model.shared.weight although the "
                                "config shares the embeddings")
        out.put("embedding.source", target, target_key)
    else:
        out.put("embedding.source", src.take("model.encoder.embed_tokens.weight", (vs, d)),
                "model.encoder.embed_tokens.weight")
        out.put("embedding.target", target, target_key)
        if src.has("model.shared.weight"):
            src.take("model.shared.weight")
    if head is not None:
        out.put("output.weight", head, "lm_head.weight")
    out.put("output.bias", src.take("final_logits_bias", (1, v)).reshape(v), "final_logits_bias")
    out.put("position.table", hugging_face_marian(cfg.max_positions, d), "(computed)")
    for stack, layers in (("encoder", cfg.encoder_layers), ("decoder", cfg.decoder_layers)):
        for i in range(layers):
            h = f"model.{stack}.layers.{i}"
            e = f"{stack}.layers.{i}"
            _put_stacked(out, src, [f"{h}.self_attn.{p}_proj" for p in "qkv"],
                         f"{e}.self_attn.qkv", d)
            _put_linear(out, src, f"{h}.self_attn.out_proj", f"{e}.self_attn.out", d, d)
            _put_linear(out, src, f"{h}.self_attn_layer_norm", f"{e}.self_attn_norm", d, None)
            if stack == "decoder":
                _put_linear(out, src, f"{h}.encoder_attn.q_proj", f"{e}.cross_attn.q", d, d)
                _put_stacked(out, src, [f"{h}.encoder_attn.{p}_proj" for p in "kv"],
                             f"{e}.cross_attn.kv", d)
                _put_linear(out, src, f"{h}.encoder_attn.out_proj", f"{e}.cross_attn.out", d, d)
                _put_linear(out, src, f"{h}.encoder_attn_layer_norm", f"{e}.cross_attn_norm",
                            d, None)
            _put_linear(out, src, f"{h}.fc1", f"{e}.ffn.in", f, d)
            _put_linear(out, src, f"{h}.fc2", f"{e}.ffn.out", d, f)
            _put_linear(out, src, f"{h}.final_layer_norm", f"{e}.ffn_norm", d, None)
    src.refuse_unused()
    return cfg, out.result()


def _put_stacked(out: WeightAssembler, src: TensorSource, keys: List[str], name: str,
                 d: int) -> None:
    """Linears [d, d] stacked by rows into one (q, k, v -> qkv; k, v -> kv)."""
    out.put(f"{name}.weight", np.concatenate([src.take(f"{k}.weight", (d, d)) for k in keys]),
            f"{keys[0]}.weight")
    out.put(f"{name}.bias", np.concatenate([src.take(f"{k}.bias", (d,)) for k in keys]),
            f"{keys[0]}.bias")


def _put_linear(out: WeightAssembler, src: TensorSource, key: str, name: str, rows: int,
                cols: Optional[int]) -> None:
    """A Linear (cols given) or a LayerNorm (cols None): weight and bias."""
    shape = (rows, cols) if cols is not None else (rows,)
    out.put(f"{name}.weight", src.take(f"{key}.weight", shape), f"{key}.weight")
    out.put(f"{name}.bias", src.take(f"{key}.bias", (rows,)), f"{key}.bias")


def generation_defaults(folder: str, config: Mapping, cfg: TransformerConfig,
                        pad: int) -> Tuple[Decoding, List[str]]:
    """generate()'s defaults for this model: generation_config.json, else the
    generation keys of config.json (older folders), else transformers'."""
    path = os.path.join(folder, "generation_config.json")
    present = input_files.regular_file(path, "generation_config.json")
    gen = _read_json(path, "generation_config.json") if present else config
    where = path if present else os.path.join(folder, "config.json")
    notes = []
    beams = whole_number(gen, "num_beams", where, 1, low=1, high=limits.MAX_BEAM)
    # At least 2: the decoder start and one generated token.
    max_length = whole_number(gen, "max_length", where, 20, low=2)
    penalty = finite_number(gen, "length_penalty", where, 1.0)
    banned = set()
    for words in _bad_words(gen, where, cfg.vocab_size):
        if len(words) != 1:
            notes.append(f"bad_words_ids entry {words!r} (a word of several tokens) is not "
                         "reproduced")
            continue
        banned.add(words[0])
    for key, default in _UNREPRODUCED.items():
        if key in gen and gen[key] != default:
            notes.append(f"generation option {key} = {gen[key]!r} is not reproduced "
                         f"(edgemt decodes as with {default!r})")
    if max_length - 1 > cfg.max_positions:
        notes.append(f"max_length {max_length} is above the position table "
                     f"({cfg.max_positions}); edgemt stops at {cfg.max_positions} tokens")
    return Decoding(rules="huggingface", beam_size=beams, length_penalty=penalty,
                    max_len_a=0.0, max_len_b=float(max_length - 1),
                    banned_tokens=tuple(sorted(banned))), notes


def _bad_words(gen: Mapping, where: str, vocab: int) -> List[List[int]]:
    """bad_words_ids: null, or a list of token id lists, each id inside the
    vocabulary (what transformers' NoBadWordsLogitsProcessor accepts)."""
    value = gen.get("bad_words_ids")
    if value is None:
        return []
    expected = f"a list of lists of token ids (0 to {vocab - 1})"
    if not isinstance(value, list):
        raise UserError(f"{where}: bad_words_ids is {value!r}, expected {expected}")
    for words in value:
        if not isinstance(words, list) or not words or not all(
                isinstance(t, int) and not isinstance(t, bool) and 0 <= t < vocab for t in words):
            raise UserError(f"{where}: bad_words_ids entry {words!r} is not valid, expected "
                            f"{expected}")
    return value


def _vocabularies(folder: str, cfg: TransformerConfig, spms: Mapping[str, Tuple[bytes, str]],
                  allow_missing: bool):
    """(source pieces, target pieces, vocab.json, notes) from vocab.json (+
    target_vocab.json), each side checked against the model's ids and its
    SentencePiece model (`spms`: side -> (bytes, path))."""
    vocab_path = os.path.join(folder, "vocab.json")
    vocab = _read_json(vocab_path, "vocab.json")
    target_path = os.path.join(folder, "target_vocab.json")
    target_vocab = vocab
    if input_files.regular_file(target_path, "target_vocab.json"):
        target_vocab = _read_json(target_path, "target_vocab.json")
    else:
        target_path = vocab_path
    pieces, notes = {}, []
    for side, mapping, path, size in (
            ("source", vocab, vocab_path, cfg.source_vocab_size or cfg.vocab_size),
            ("target", target_vocab, target_path, cfg.vocab_size)):
        pieces[side] = pieces_by_id(mapping, size, path)
        note = check_covers_sentencepiece(mapping, spms[side][0], path, spms[side][1],
                                          allow_missing)
        notes.extend([note] if note else [])
    return pieces["source"], pieces["target"], vocab, notes


def _languages(folder: str, inputs) -> Tuple[str, str]:
    src, tgt = inputs.src_lang, inputs.tgt_lang
    path = os.path.join(folder, "tokenizer_config.json")
    if input_files.regular_file(path, "tokenizer_config.json"):
        tokenizer_config = _read_json(path, "tokenizer_config.json")
        src = src or text(tokenizer_config, "source_lang", path, None)
        tgt = tgt or text(tokenizer_config, "target_lang", path, None)
    if not src or not tgt:
        raise UserError("languages unknown (tokenizer_config.json has no source_lang / "
                        "target_lang): pass --src-lang and --tgt-lang")
    return src, tgt


def read(inputs) -> "Tuple[ModelSpec, List[str]]":
    folder = inputs.checkpoint
    if not os.path.isdir(folder) or not os.path.isfile(os.path.join(folder, "config.json")):
        raise UserError(wrong_source(folder, NAME, "a Hugging Face MarianMT folder (config.json, "
                                                   "model.safetensors or pytorch_model.bin, "
                                                   "source.spm, target.spm, vocab.json)"))
    config = read_config(folder)
    where = os.path.join(folder, "config.json")
    cfg = transformer_config(config, where)
    validate_config(cfg)
    tensors, weights_path = load_tensors(folder)
    cfg, weights = convert_tensors(tensors, cfg, weights_path)
    spm_paths = {"source": inputs.src_spm or os.path.join(folder, "source.spm"),
                 "target": inputs.tgt_spm or os.path.join(folder, "target.spm")}
    spms = {side: (read_sentencepiece(path, side), path) for side, path in spm_paths.items()}
    source_pieces, target_pieces, vocab, vocab_notes = _vocabularies(
        folder, cfg, spms, inputs.allow_missing_pieces)
    pad = _int(config, "pad_token_id", where)
    eos = _int(config, "eos_token_id", where)
    start = _int(config, "decoder_start_token_id", where, pad)
    unk = vocab.get("<unk>")
    if not isinstance(unk, int):
        raise UserError(f"{os.path.join(folder, 'vocab.json')} has no <unk> piece")
    for name, value in (("pad_token_id", pad), ("eos_token_id", eos),
                        ("decoder_start_token_id", start)):
        if not 0 <= value < cfg.vocab_size:
            raise UserError(f"{where}: {name} {value} is outside the vocabulary")
    decoding, notes = generation_defaults(folder, config, cfg, pad)
    notes = vocab_notes + notes
    src_lang, tgt_lang = _languages(folder, inputs)
    source_spm, target_spm = spms["source"][0], spms["target"][0]
    spec = ModelSpec(
        config=cfg,
        special_tokens=SpecialTokens(pad=pad, unk=unk, bos=start, eos=eos, decoder_start=start),
        source_language=src_lang, target_language=tgt_lang, tokenizer_model=source_spm,
        weights=weights, append_eos_to_source=True,
        provenance=Provenance(source_format=NAME,
                              source_checkpoint=(inputs.checkpoint_name or
                                                 os.path.basename(os.path.normpath(folder))),
                              source_sha256=sha256_file(weights_path),
                              converter_version=inputs.converter_version,
                              created_utc=inputs.created_utc),
        source_pieces=source_pieces,
        target_tokenizer=SideTokenizer(target_spm, target_pieces),
        decoding=decoding)
    return spec, notes
