"""Source `torch-rnn`: checkpoints of the PyTorch RNN trainer
(../shared/training/train_rnn_attention.py, class RnnSeq2Seq): a state_dict
saved with `torch.save(model.state_dict())`, its config.json and spm.model.

Output: a `ModelSpec` (model_spec.py) whose config is an `RnnConfig` (the
RNN family, schema/rnn_tensors.def), with float32 weights named as there;
the writer (writer.py) stores them in the asked dtype.

config.json (the trainer's): attention (luong-dot | luong-general |
luong-concat | bahdanau), cell (lstm | gru; lstm when absent, as the trainer
reads it), layers, hidden H, emb_dim E, vocab_size V, pad_id, bos_id,
eos_id, src_lang, tgt_lang.

Name mapping (torch -> edgemt), layer k:
  src_embed.weight [V,E]                 -> embedding.source
  tgt_embed.weight [V,E]                 -> embedding.target
  encoder.weight_ih_l{k} / weight_hh_l{k} / bias_ih_l{k} / bias_hh_l{k}
                                         -> encoder.layers.{k}.ih.weight / hh.weight /
                                            ih.bias / hh.bias
  encoder.*_l{k}_reverse (bahdanau)      -> encoder.layers.{k}.ih_reverse.* / hh_reverse.*
  decoder.*_l{k}                         -> decoder.layers.{k}.ih.* / hh.*
  W.weight [H,H] (luong-general)         -> attention.key   (e_i = (W h_i) . s)
  Wa.weight [H,2H] (luong-concat)        -> attention.query = Wa[:, :H] (acts on s),
                                            attention.key = Wa[:, H:] (acts on h_i)
  va.weight [1,H] (luong-concat)         -> attention.v = va[0]
  W1.weight, W2.weight [H,H] (bahdanau)  -> attention.query, attention.key
  v.weight [1,H] (bahdanau)              -> attention.v = v[0]
  Wc.weight [H,2H] (luong-*)             -> attention.combine  (acts on [c; s])
  out.weight [V,H] or [V,2H], out.bias   -> output.weight, output.bias

The columns of Wa are split here, before the writer quantizes (int8 per
output row): the two halves are quantized as matrices of their own.
"""

import os
from collections import OrderedDict
from typing import Callable, List, Mapping, Tuple

import numpy as np

from .. import limits
from ..errors import UserError
from ..families.checks import check_int
from ..families.rnn import MAX_EMBEDDING_DIM, MAX_HIDDEN, MAX_LAYERS, RnnConfig
from ..model_spec import Decoding, ModelSpec, Provenance, SpecialTokens
from ..validate import first_line
from .common import TensorSource, WeightAssembler, check_key_types, read_json_object, sha256_file
from .detect import KINDS, detect, wrong_source
from .torch import load_state_dict

SOURCE = "torch-rnn"
# The model families it writes (families/; edgemt-convert asks them about int8 calibration).
FAMILIES = ("rnn",)

# The trainer's --attention -> the RnnConfig fields it implies.
ATTENTIONS = {
    "luong-dot": dict(score="Dot", query="Current", decoder_input="Embedding",
                      output="TanhCombine", bidirectional_encoder=False),
    "luong-general": dict(score="General", query="Current", decoder_input="Embedding",
                          output="TanhCombine", bidirectional_encoder=False),
    "luong-concat": dict(score="Additive", query="Current", decoder_input="Embedding",
                         output="TanhCombine", bidirectional_encoder=False),
    "bahdanau": dict(score="Additive", query="Previous", decoder_input="EmbeddingContext",
                     output="StateContext", bidirectional_encoder=True),
}
CELLS = {"lstm": "Lstm", "gru": "Gru"}

# The trainer's greedy(): at most 60 generated tokens (EOS included when it
# comes); sources are cut to 200 pieces, which the position limit covers.
MAX_GENERATED = 60
DEFAULT_MAX_POSITIONS = 256

# config.json key -> expected Python type; all required ("cell" defaults to
# lstm, as in the trainer).
_CONFIG_KEYS = {"attention": str, "layers": int, "hidden": int, "emb_dim": int,
                "vocab_size": int, "pad_id": int, "bos_id": int, "eos_id": int}


def read_config(path: str) -> dict:
    """Load and check the trainer's config.json; raises UserError."""
    config = read_json_object(path)
    try:
        check_config(config)
    except UserError as err:
        raise UserError(f"config {path}: {err}") from None
    return config


def check_config(config: Mapping) -> None:
    """Keys, types and ranges of a trainer config (UserError naming the key)."""
    family = config.get("family", "rnn_attention")
    if family != "rnn_attention":
        raise UserError(f"family {family!r} is not the RNN trainer's ('rnn_attention')")
    check_key_types(config, _CONFIG_KEYS)
    if config["attention"] not in ATTENTIONS:
        raise UserError(f"attention '{config['attention']}' unknown (known: "
                        f"{', '.join(ATTENTIONS)})")
    cell = config.get("cell", "lstm")
    if cell not in CELLS:
        raise UserError(f"cell {cell!r} unknown (known: {', '.join(CELLS)})")
    check_int("layers", config["layers"], 1, MAX_LAYERS)
    check_int("hidden", config["hidden"], 1, MAX_HIDDEN)
    check_int("emb_dim", config["emb_dim"], 1, MAX_EMBEDDING_DIM)
    check_int("vocab_size", config["vocab_size"], 1, limits.MAX_VOCAB_SIZE)
    if config["attention"] == "bahdanau" and config["hidden"] % 2:
        raise UserError(f"hidden {config['hidden']} must be even for bahdanau (a "
                        "bidirectional encoder of hidden/2 units per direction)")
    for key in ("pad_id", "bos_id", "eos_id"):
        check_int(key, config[key], 0, config["vocab_size"] - 1)


def rnn_config(config: Mapping, max_positions: int = DEFAULT_MAX_POSITIONS) -> RnnConfig:
    """The RnnConfig of a checked trainer config."""
    return RnnConfig(
        cell=CELLS[config.get("cell", "lstm")], layers=config["layers"],
        source_embedding_dim=config["emb_dim"], target_embedding_dim=config["emb_dim"],
        hidden=config["hidden"], vocab_size=config["vocab_size"], source_vocab_size=0,
        max_positions=max_positions, query_bias=False, combine_bias=False,
        **ATTENTIONS[config["attention"]])


Extract = Callable[[np.ndarray], np.ndarray]


def _whole(array: np.ndarray) -> np.ndarray:
    return array


def key_plan(cfg: RnnConfig, attention: str, shape_of: Callable[[str], Tuple[int, ...]]
             ) -> "OrderedDict[str, Tuple[Tuple[int, ...], List[Tuple[str, Extract]]]]":
    """torch key -> (its expected shape, [(edgemt name, how to take it from
    the torch tensor)]); `shape_of(name)` is an edgemt tensor's fp32 shape."""
    h = cfg.hidden
    plan: "OrderedDict[str, Tuple[Tuple[int, ...], List[Tuple[str, Extract]]]]" = OrderedDict()

    def same(key: str, name: str) -> None:
        plan[key] = (shape_of(name), [(name, _whole)])

    def row_vector(key: str, name: str) -> None:  # nn.Linear(H, 1).weight [1, H] -> [H]
        plan[key] = ((1,) + shape_of(name), [(name, lambda a: a[0])])

    same("src_embed.weight", "embedding.source")
    same("tgt_embed.weight", "embedding.target")
    if attention == "luong-general":
        same("W.weight", "attention.key")
    elif attention == "luong-concat":
        plan["Wa.weight"] = ((h, 2 * h), [("attention.query", lambda a: a[:, :h]),
                                          ("attention.key", lambda a: a[:, h:])])
        row_vector("va.weight", "attention.v")
    elif attention == "bahdanau":
        same("W1.weight", "attention.query")
        same("W2.weight", "attention.key")
        row_vector("v.weight", "attention.v")
    if cfg.output != "StateContext":
        same("Wc.weight", "attention.combine")
    same("out.weight", "output.weight")
    same("out.bias", "output.bias")
    for stack in ("encoder", "decoder"):
        directions = ("", "_reverse") if stack == "encoder" and cfg.bidirectional_encoder \
            else ("",)
        for k in range(cfg.layers):
            for suffix in directions:
                for part in ("ih", "hh"):
                    for kind in ("weight", "bias"):
                        same(f"{stack}.{kind}_{part}_l{k}{suffix}",
                             f"{stack}.layers.{k}.{part}{suffix}.{kind}")
    return plan


def convert_state_dict(state: Mapping[str, np.ndarray], config: Mapping,
                       max_positions: int = DEFAULT_MAX_POSITIONS):
    """Validate `state` against the (checked) trainer `config` and map it to
    edgemt's tensors. Returns (RnnConfig, weights: OrderedDict name -> float32
    array in file order). UserError on missing or unexpected keys, shape
    mismatches, non-finite values."""
    cfg = rnn_config(config, max_positions)
    assembler = WeightAssembler(cfg)  # checks cfg against the limits first
    plan = key_plan(cfg, config["attention"], lambda name: assembler.specs[name].shape)
    missing = [key for key in plan if key not in state]
    unexpected = sorted(set(state) - set(plan))
    if missing:
        raise UserError(f"checkpoint is missing {len(missing)} key(s) that attention "
                        f"'{config['attention']}' with {cfg.layers} layer(s) needs: "
                        f"{', '.join(missing[:5])}" + (" ..." if len(missing) > 5 else ""))
    if unexpected:
        raise UserError(f"checkpoint has {len(unexpected)} unexpected key(s) for attention "
                        f"'{config['attention']}' with {cfg.layers} layer(s): "
                        f"{', '.join(unexpected[:5])}" + (" ..." if len(unexpected) > 5 else ""))
    source = TensorSource(state, "checkpoint")
    for key, (shape, targets) in plan.items():
        array = source.take(key, shape)
        for name, extract in targets:
            assembler.put(name, extract(array), key)
    return cfg, assembler.result()


def read_tokenizer(path: str, config: Mapping) -> Tuple[bytes, int]:
    """The SentencePiece model's bytes and its unk id, checked against the
    config's vocabulary size and pad / bos / eos ids."""
    import sentencepiece as spm
    if not os.path.isfile(path):
        raise UserError(f"SentencePiece model not found: {path}")
    with open(path, "rb") as handle:
        proto = handle.read()
    try:
        sp = spm.SentencePieceProcessor(model_proto=proto)
    except Exception as err:  # noqa: BLE001 - sentencepiece raises plain RuntimeError/OSError
        raise UserError(f"cannot load SentencePiece model {path}: {first_line(err)}") from None
    if sp.get_piece_size() != config["vocab_size"]:
        raise UserError(f"SentencePiece model has {sp.get_piece_size()} pieces, config "
                        f"vocab_size is {config['vocab_size']}")
    for key, got in (("pad_id", sp.pad_id()), ("bos_id", sp.bos_id()), ("eos_id", sp.eos_id())):
        if got != config[key]:
            raise UserError(f"SentencePiece {key} is {got}, config says {config[key]}")
    unk = sp.unk_id()
    if not 0 <= unk < config["vocab_size"]:
        raise UserError(f"SentencePiece model {path} has no unk id inside the vocabulary")
    return proto, unk


def build(checkpoint: str, config: Mapping, tokenizer_model: bytes, unk_id: int,
          src_lang: str, tgt_lang: str, converter_version: str, created_utc: str,
          max_positions: int = DEFAULT_MAX_POSITIONS) -> ModelSpec:
    """The ModelSpec of `checkpoint` (config: `read_config`'s dict)."""
    state = load_state_dict(checkpoint)
    cfg, weights = convert_state_dict(state, config, max_positions)
    pad, bos, eos = config["pad_id"], config["bos_id"], config["eos_id"]
    return ModelSpec(
        config=cfg,
        special_tokens=SpecialTokens(pad=pad, unk=unk_id, bos=bos, eos=eos, decoder_start=bos),
        source_language=src_lang, target_language=tgt_lang,
        tokenizer_model=tokenizer_model, weights=weights, append_eos_to_source=True,
        provenance=Provenance(source_format=SOURCE,
                              source_checkpoint=os.path.basename(checkpoint),
                              source_sha256=sha256_file(checkpoint),
                              converter_version=converter_version, created_utc=created_utc),
        # The trainer's greedy(): arg-max, at most 60 tokens; pad and bos are
        # never generated (what files without a Decoding table ban, as
        # --from torch's do).
        decoding=Decoding(rules="edgemt", beam_size=1, length_penalty=1.0, max_len_a=0.0,
                          max_len_b=float(MAX_GENERATED), banned_tokens=(pad, bos)))


def read(inputs) -> "Tuple[ModelSpec, List[str]]":
    """The source's entry point (sources/__init__.py)."""
    kind = detect(inputs.checkpoint)
    if not os.path.isfile(inputs.checkpoint) or kind not in (None, SOURCE):
        raise UserError(wrong_source(inputs.checkpoint, SOURCE, KINDS[SOURCE]) if kind
                        else f"checkpoint {inputs.checkpoint} is not a regular file")
    if inputs.config is None or inputs.spm is None:
        raise UserError(f"--from {SOURCE} needs --config FILE and --spm FILE")
    if inputs.src_spm is not None or inputs.tgt_spm is not None:
        raise UserError(f"--from {SOURCE} takes one SentencePiece model (--spm), not "
                        "--src-spm / --tgt-spm")
    max_positions = inputs.max_positions or DEFAULT_MAX_POSITIONS
    check_int("--max-positions", max_positions, 1, limits.MAX_POSITIONS)
    config = read_config(inputs.config)
    src_lang = inputs.src_lang or config.get("src_lang")
    tgt_lang = inputs.tgt_lang or config.get("tgt_lang")
    if not src_lang or not tgt_lang or not isinstance(src_lang, str) \
            or not isinstance(tgt_lang, str):
        raise UserError("languages unknown: pass --src-lang and --tgt-lang")
    proto, unk = read_tokenizer(inputs.spm, config)
    spec = build(inputs.checkpoint, config, proto, unk, src_lang, tgt_lang,
                 inputs.converter_version, inputs.created_utc, max_positions)
    return spec, []
