"""Source `torch`: torch.nn.Transformer checkpoints (the multi30k-en-de layout).

Input: a `state_dict` saved with `torch.save(model.state_dict())` of a wrapper
module with `embed` (nn.Embedding [V, d]), `transformer` (nn.Transformer,
batch_first) and `generator` (nn.Linear d -> V), plus its config.json.
Output: a `ModelSpec` (model_spec.py): the Transformer config, header fields
and float32 weights named as in schema/TENSORS.md; the writer (writer.py)
stores them in the asked dtype.

Name mapping (torch -> edgemt), layer i, d = d_model:
  embed.weight [V,d]                          -> embedding.source (+ alias embedding.target)
  generator.weight [V,d] (== embed.weight)    -> alias output.weight  (tied_output)
  generator.bias [V]                          -> output.bias
  encoder.layers.i.self_attn.in_proj_{weight [3d,d], bias [3d]}
                                              -> encoder.layers.i.self_attn.qkv.*  (rows q,k,v: as is)
  *.self_attn.out_proj.*                      -> *.self_attn.out.*
  encoder: norm1 -> self_attn_norm, norm2 -> ffn_norm
  decoder.layers.i.multihead_attn.in_proj_weight [3d,d]
                                              -> cross_attn.q.weight = rows [0,d),
                                                 cross_attn.kv.weight = rows [d,3d)   (bias alike)
  *.multihead_attn.out_proj.*                 -> *.cross_attn.out.*
  decoder: norm1 -> self_attn_norm, norm2 -> cross_attn_norm, norm3 -> ffn_norm
  linear1 -> ffn.in, linear2 -> ffn.out
  encoder.norm / decoder.norm                 -> encoder.final_norm / decoder.final_norm
  (computed) position table [max_len, d]      -> position.table

The cross-attention rows are split here, before the writer quantizes (int8
per output row): each row is quantized on its own, so splitting before or
after gives the same codes and scales.
"""

import hashlib
import os
from collections import OrderedDict
from typing import Dict, List, Mapping, Tuple

import numpy as np

from .. import limits
from ..errors import UserError
from ..families.checks import check_int, check_positive_float
from ..families.transformer import (MAX_D_MODEL, MAX_FFN_DIM, MAX_LAYERS_PER_STACK,
                                   TransformerConfig)
from ..model_spec import MATRIX, ModelSpec, Provenance, SpecialTokens, expected_tensors
from ..positions import TABLES
from ..validate import first_line
from .common import check_key_types, read_json_object
from . import torch_zip
from .detect import KINDS, detect, wrong_source

# The model families it writes (families/; edgemt-convert asks them about int8 calibration).
FAMILIES = ("transformer",)

TORCH_PREFIX = "transformer."

# config.json key -> expected Python type(s); all required.
_CONFIG_KEYS = {
    "d_model": int, "heads": int, "encoder_layers": int, "decoder_layers": int, "ffn_dim": int,
    "activation": str, "norm_first": bool, "vocab_size": int, "max_len": int,
    "pad_id": int, "unk_id": int, "bos_id": int, "eos_id": int,
    "positional_encoding": str, "embedding_scale": (int, float), "tied_embeddings": bool,
}


def read_config(path: str) -> dict:
    """Load and check config.json (types, and every value against the
    runtime's limits, before anything is built from it); raises UserError."""
    config = read_json_object(path)
    try:
        check_key_types(config, _CONFIG_KEYS)
        _check_config_values(config)
    except UserError as err:
        raise UserError(f"config {path}: {err}") from None
    return config


def _check_config_values(config: Mapping) -> None:
    """Ranges, named by their config.json keys (the limits of limits.py and
    families/transformer.py)."""
    for key in ("encoder_layers", "decoder_layers"):
        check_int(key, config[key], 1, MAX_LAYERS_PER_STACK)
    check_int("d_model", config["d_model"], 1, MAX_D_MODEL)
    check_int("heads", config["heads"], 1, config["d_model"])
    if config["d_model"] % config["heads"]:
        raise UserError(f"d_model {config['d_model']} is not a multiple of heads "
                        f"{config['heads']}")
    check_int("ffn_dim", config["ffn_dim"], 1, MAX_FFN_DIM)
    check_int("vocab_size", config["vocab_size"], 1, limits.MAX_VOCAB_SIZE)
    check_int("max_len", config["max_len"], 1, limits.MAX_POSITIONS)
    check_positive_float("embedding_scale", config["embedding_scale"])
    check_positive_float("layer_norm_eps", config.get("layer_norm_eps", 1e-5))
    if config["activation"] not in ("relu", "gelu"):
        raise UserError(f"activation '{config['activation']}' is not supported by "
                        "nn.Transformer conversion (relu, gelu)")
    if config["positional_encoding"] not in TABLES:
        raise UserError(f"positional_encoding '{config['positional_encoding']}' unknown "
                        f"(known: {', '.join(sorted(TABLES))})")
    for key in ("pad_id", "unk_id", "bos_id", "eos_id"):
        check_int(key, config[key], 0, config["vocab_size"] - 1)


def transformer_config(config: Mapping, tied_output: bool) -> TransformerConfig:
    return TransformerConfig(
        encoder_layers=config["encoder_layers"], decoder_layers=config["decoder_layers"],
        d_model=config["d_model"], heads=config["heads"], ffn_dim=config["ffn_dim"],
        vocab_size=config["vocab_size"], max_positions=config["max_len"],
        activation=config["activation"],
        norm_placement="pre" if config["norm_first"] else "post",
        layer_norm_eps=float(config.get("layer_norm_eps", 1e-5)),
        encoder_final_norm=True, decoder_final_norm=True,  # nn.Transformer always has them
        embedding_scale=float(config["embedding_scale"]),
        tied_output=tied_output, output_bias=True, shared_embeddings=True)


def torch_key_map(cfg: TransformerConfig) -> "OrderedDict[str, List[Tuple[str, int, int]]]":
    """torch state_dict key -> [(edgemt name, first row, end row)]; rows slice dim 0
    (end -1 = all rows). `generator.weight` is handled separately (tying)."""
    d = cfg.d_model
    m: "OrderedDict[str, List[Tuple[str, int, int]]]" = OrderedDict()
    m["embed.weight"] = [("embedding.source", 0, -1)]
    m["generator.bias"] = [("output.bias", 0, -1)]

    def linear(torch_name: str, edgemt_name: str) -> None:
        for part in ("weight", "bias"):
            m[f"{torch_name}.{part}"] = [(f"{edgemt_name}.{part}", 0, -1)]

    for stack, layers in (("encoder", cfg.encoder_layers), ("decoder", cfg.decoder_layers)):
        norms = (["self_attn_norm", "ffn_norm"] if stack == "encoder"
                 else ["self_attn_norm", "cross_attn_norm", "ffn_norm"])
        for i in range(layers):
            t = f"{TORCH_PREFIX}{stack}.layers.{i}."
            e = f"{stack}.layers.{i}."
            m[t + "self_attn.in_proj_weight"] = [(e + "self_attn.qkv.weight", 0, -1)]
            m[t + "self_attn.in_proj_bias"] = [(e + "self_attn.qkv.bias", 0, -1)]
            linear(t + "self_attn.out_proj", e + "self_attn.out")
            if stack == "decoder":
                m[t + "multihead_attn.in_proj_weight"] = [
                    (e + "cross_attn.q.weight", 0, d), (e + "cross_attn.kv.weight", d, 3 * d)]
                m[t + "multihead_attn.in_proj_bias"] = [
                    (e + "cross_attn.q.bias", 0, d), (e + "cross_attn.kv.bias", d, 3 * d)]
                linear(t + "multihead_attn.out_proj", e + "cross_attn.out")
            linear(t + "linear1", e + "ffn.in")
            linear(t + "linear2", e + "ffn.out")
            for k, norm in enumerate(norms, start=1):
                linear(t + f"norm{k}", e + norm)
        linear(f"{TORCH_PREFIX}{stack}.norm", f"{stack}.final_norm")
    return m


def is_matrix_key(cfg: TransformerConfig, torch_key: str) -> bool:
    """True when this torch tensor is stored in the weight dtype (F16 in fp16
    files, I8 + scales in int8 files)."""
    if torch_key == "generator.weight":
        return True
    specs = expected_tensors(cfg)
    return specs[torch_key_map(cfg)[torch_key][0][0]].kind == MATRIX


def load_state_dict(path: str) -> Dict[str, np.ndarray]:
    """A state_dict saved with torch.save -> name -> float32 numpy array.
    Read by torch_zip, which runs nothing the file names."""
    if not os.path.isfile(path):
        raise UserError(f"checkpoint not found (or not a regular file): {path}")
    try:
        state = torch_zip.load(path)
    except torch_zip.CheckpointError as err:
        raise UserError(f"cannot load checkpoint {path}: {err}") from None
    if not isinstance(state, Mapping) or not all(
            isinstance(k, str) and isinstance(v, np.ndarray) for k, v in state.items()):
        raise UserError(f"checkpoint {path}: expected a state_dict (name -> tensor), "
                        f"got {type(state).__name__}")
    out = {}
    for key, tensor in state.items():
        if not np.issubdtype(tensor.dtype, np.floating):
            raise UserError(f"checkpoint {path}: tensor {key} has non-float dtype {tensor.dtype}")
        out[key] = tensor.astype(np.float32)
    return out


def _check_keys(state: Mapping[str, np.ndarray], keymap: Mapping) -> None:
    expected = set(keymap) | {"generator.weight"}
    missing = sorted(expected - set(state))
    unexpected = sorted(set(state) - expected)
    if missing:
        raise UserError(f"checkpoint is missing {len(missing)} key(s): {', '.join(missing[:5])}"
                        + (" ..." if len(missing) > 5 else ""))
    if unexpected:
        raise UserError(f"checkpoint has {len(unexpected)} unexpected key(s): "
                        f"{', '.join(unexpected[:5])}" + (" ..." if len(unexpected) > 5 else ""))


def _expected_torch_shape(specs, targets) -> Tuple[int, ...]:
    """Shape of the torch tensor implied by the edgemt pieces it is split into."""
    first = specs[targets[0][0]].shape
    rows = sum(specs[name].shape[0] for name, _, _ in targets)
    return (rows,) + tuple(first[1:])


def convert_state_dict(state: Mapping[str, np.ndarray], config: Mapping):
    """Validate `state` against `config` and map it to edgemt's canonical
    tensors. Returns (TransformerConfig, weights: OrderedDict name -> float32
    array, every tensor the config implies but aliases, in file order).
    Raises UserError on missing/unexpected keys, shape mismatches, non-finite values.
    """
    tied = "generator.weight" in state and "embed.weight" in state and \
        state["generator.weight"].shape == state["embed.weight"].shape and \
        np.array_equal(state["generator.weight"], state["embed.weight"])
    cfg = transformer_config(config, tied_output=tied)
    keymap = torch_key_map(cfg)
    _check_keys(state, keymap)
    specs = expected_tensors(cfg, "fp32")

    for key, targets in keymap.items():
        want = _expected_torch_shape(specs, targets)
        if tuple(state[key].shape) != want:
            raise UserError(f"shape mismatch: {key} is {list(state[key].shape)}, "
                            f"config implies {list(want)}")
    if tuple(state["generator.weight"].shape) != specs["output.weight"].shape:
        raise UserError(f"shape mismatch: generator.weight is "
                        f"{list(state['generator.weight'].shape)}, config implies "
                        f"{list(specs['output.weight'].shape)}")
    for key, array in state.items():
        if not np.isfinite(array).all():
            raise UserError(f"tensor {key} contains non-finite values (nan or inf)")

    pieces: Dict[str, np.ndarray] = {}
    for key, targets in keymap.items():
        for name, begin, end in targets:
            pieces[name] = state[key] if end < 0 else state[key][begin:end]
    if not tied:
        pieces["output.weight"] = state["generator.weight"]
    pieces["position.table"] = TABLES[config["positional_encoding"]](cfg.max_positions,
                                                                     cfg.d_model)

    weights: "OrderedDict[str, np.ndarray]" = OrderedDict()
    for name, spec in specs.items():
        if spec.alias_of is None:
            weights[name] = np.asarray(pieces[name], dtype=np.float32)
    return cfg, weights


def sha256_file(path: str) -> str:
    digest = hashlib.sha256()
    with open(path, "rb") as handle:
        for block in iter(lambda: handle.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def read_tokenizer(path: str, config: Mapping) -> bytes:
    """Read the SentencePiece model and check it agrees with the config's ids."""
    import sentencepiece as spm
    if not os.path.isfile(path):
        raise UserError(f"SentencePiece model not found: {path}")
    with open(path, "rb") as handle:
        proto = handle.read()
    try:
        sp = spm.SentencePieceProcessor(model_proto=proto)
    except Exception as err:  # noqa: BLE001 - sentencepiece raises plain RuntimeError/OSError
        raise UserError(f"cannot load SentencePiece model {path}: "
                        f"{first_line(err)}") from None
    if sp.get_piece_size() != config["vocab_size"]:
        raise UserError(f"SentencePiece model has {sp.get_piece_size()} pieces, config "
                        f"vocab_size is {config['vocab_size']}")
    for key, got in (("pad_id", sp.pad_id()), ("unk_id", sp.unk_id()), ("bos_id", sp.bos_id()),
                     ("eos_id", sp.eos_id())):
        if got != config[key]:
            raise UserError(f"SentencePiece {key} is {got}, config says {config[key]}")
    return proto


def build(checkpoint: str, config: Mapping, tokenizer_model: bytes, src_lang: str,
          tgt_lang: str, converter_version: str, created_utc: str) -> ModelSpec:
    """The ModelSpec of `checkpoint`; `config` is the dict returned by
    `read_config`, `tokenizer_model` the bytes `read_tokenizer` returned."""
    state = load_state_dict(checkpoint)
    cfg, weights = convert_state_dict(state, config)
    return ModelSpec(
        config=cfg,
        special_tokens=SpecialTokens(pad=config["pad_id"], unk=config["unk_id"],
                                     bos=config["bos_id"], eos=config["eos_id"],
                                     decoder_start=config["bos_id"]),
        source_language=src_lang, target_language=tgt_lang,
        tokenizer_model=tokenizer_model, weights=weights, append_eos_to_source=True,
        provenance=Provenance(source_format="torch",
                              source_checkpoint=os.path.basename(checkpoint),
                              source_sha256=sha256_file(checkpoint),
                              converter_version=converter_version, created_utc=created_utc))


def read(inputs) -> "Tuple[ModelSpec, List[str]]":
    """The source's entry point (sources/__init__.py): `inputs` is a
    SourceInputs. Returns the spec and notes for the user."""
    if not os.path.isfile(inputs.checkpoint):
        kind = detect(inputs.checkpoint)
        raise UserError(wrong_source(inputs.checkpoint, "torch", KINDS["torch"]) if kind
                        else f"checkpoint {inputs.checkpoint} is not a regular file")
    kind = detect(inputs.checkpoint)
    if kind not in (None, "torch"):
        raise UserError(wrong_source(inputs.checkpoint, "torch", KINDS["torch"]))
    if inputs.config is None or inputs.spm is None:
        raise UserError("--from torch needs --config FILE and --spm FILE")
    if inputs.src_spm is not None or inputs.tgt_spm is not None:
        raise UserError("--from torch takes one SentencePiece model (--spm), not --src-spm / "
                        "--tgt-spm")
    config = read_config(inputs.config)
    src_lang = inputs.src_lang or config.get("src_lang")
    tgt_lang = inputs.tgt_lang or config.get("tgt_lang")
    if not src_lang or not tgt_lang:
        raise UserError("languages unknown: pass --src-lang and --tgt-lang")
    proto = read_tokenizer(inputs.spm, config)
    spec = build(inputs.checkpoint, config, proto, src_lang, tgt_lang,
                 inputs.converter_version, inputs.created_utc)
    notes = []
    if config["tied_embeddings"] and not spec.config.tied_output:
        notes.append("config says tied_embeddings but generator.weight differs from "
                     "embed.weight; storing output.weight separately")
    return spec, notes
