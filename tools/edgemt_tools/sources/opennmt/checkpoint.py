"""What every OpenNMT-py v3 checkpoint holds, Transformer or RNN: loading
it without running anything it names, its options, its vocabularies and
its state dicts (the package's __init__.py says what the file is)."""

import os
from typing import Dict, Mapping

import numpy as np

from ...errors import UserError
from .. import torch_zip
from ..detect import detect, wrong_source

NAME = "opennmt"


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


def option(opt, key: str, default=None):
    """A training option, `default` when the checkpoint's options lack it."""
    return getattr(opt, key, default)


def refuse(where: str, name: str, value, why: str) -> None:
    raise UserError(f"{where}: OpenNMT-py option {name} = {value!r} is not supported ({why})")


def refuse_set(opt, where: str, options) -> None:
    """Refuse each (option, neutral value, why) set to something else."""
    for name, neutral, why in options:
        value = option(opt, name, neutral)
        if value not in (neutral, None) and value != neutral:
            refuse(where, name, value, why)


def vocabularies(vocab, where: str):
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


def numpy_state(state, where: str, what: str) -> Dict[str, np.ndarray]:
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


def check_shared_embeddings(source: np.ndarray, target: np.ndarray, where: str) -> None:
    """share_embeddings: the two stored tables must be one."""
    if source.shape != target.shape or not np.array_equal(source, target):
        raise UserError(f"{where}: share_embeddings but the encoder and decoder embedding "
                        "tables differ")
