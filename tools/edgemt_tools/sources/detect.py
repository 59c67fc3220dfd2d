"""What kind of checkpoint a path holds, so that a `--from` that does not fit
gets "this is an OpenNMT-py checkpoint: use --from opennmt", not a missing
key. Looks only at names and headers (of a .pt file, the names its pickle
mentions, read without unpickling it)."""

import json
import os
import struct
import zipfile
from typing import Optional

from .. import input_files
from . import torch_zip

# --from name -> what users call it.
KINDS = {
    "torch": "a torch.nn.Transformer state_dict (edgemt's own layout)",
    "torch-rnn": "a state_dict of the RNN trainer (train_rnn_attention.py)",
    "opennmt": "an OpenNMT-py checkpoint",
    "marian": "a Marian model (.npz or .bin)",
    "hf-marian": "a Hugging Face MarianMT folder",
}


def _hf_folder_kind(folder: str) -> Optional[str]:
    path = os.path.join(folder, "config.json")
    if not os.path.isfile(path):  # a FIFO would block the open
        return None
    try:
        with open(path, "r", encoding="utf-8") as handle:
            config = json.load(handle)
    except (OSError, ValueError):
        return None
    return "hf-marian" if isinstance(config, dict) and config.get("model_type") == "marian" \
        else None


def _npz_is_marian(path: str) -> bool:
    if not os.path.isfile(path):  # a FIFO would block the open
        return False
    try:
        with zipfile.ZipFile(path) as archive:
            names = archive.namelist()
    except (OSError, zipfile.BadZipFile):
        return False
    return any(n.startswith("special:model.yml") for n in names) or \
        any(n.startswith(("encoder_l1_", "Wemb", "decoder_l1_")) for n in names)


def is_marian_binary_model(path: str) -> bool:
    """A Marian binary model: version 1, a plausible item count, and the
    first item header's name length and type fit (marian_binary.py)."""
    if not os.path.isfile(path):
        return False
    head = input_files.gzip_head(path, 48)  # Firefox's model repository: .bin.gz
    if len(head) < 48:
        return False
    version, count, name_length, kind = struct.unpack("<4Q", head[:32])
    return version == 1 and 0 < count < 1 << 20 and 0 < name_length < 1 << 16 and kind < 1 << 20


def _is_marian_model(path: str) -> bool:
    return (path.endswith(".npz") and _npz_is_marian(path)) or \
        (input_files.without_gz(path).endswith(".bin") and is_marian_binary_model(path))


def _torch_file_kind(path: str) -> Optional[str]:
    """Tells torch zips apart by the names their pickle mentions (keys,
    class names); nothing is unpickled (torch_zip.pickle_names)."""
    names = torch_zip.pickle_names(path)
    if names is None:
        return None
    # OpenNMT-py's checkpoint: a dict with these keys, `opt` an argparse Namespace.
    if {"generator", "vocab", "opt", "argparse"} <= names:
        return "opennmt"
    if any(n.startswith("model.shared.") or n.startswith("model.encoder.layers.") for n in names):
        return "hf-marian"
    if "embed.weight" in names and any(n.startswith("transformer.") for n in names):
        return "torch"
    if "src_embed.weight" in names and "tgt_embed.weight" in names and \
            any(n.startswith("encoder.weight_ih_l") for n in names):
        return "torch-rnn"
    return None


def detect(path: str) -> Optional[str]:
    """The --from name of what `path` holds, or None when unknown."""
    if os.path.isdir(path):
        kind = _hf_folder_kind(path)
        if kind is not None:
            return kind
        if any(_is_marian_model(os.path.join(path, name)) for name in os.listdir(path)):
            return "marian"
        return None
    if not os.path.isfile(path):
        return None
    if path.endswith((".npz", ".bin", ".bin.gz")):
        return "marian" if _is_marian_model(path) else None
    if path.endswith(".safetensors") or os.path.basename(path) == "config.json":
        return "hf-marian" if _hf_folder_kind(os.path.dirname(os.path.abspath(path))) else None
    return _torch_file_kind(path)


def wrong_source(path: str, asked: str, expected: str) -> str:
    """The message for `path` that --from `asked` cannot read: what it is and
    which --from reads it, when that can be told; else what was expected."""
    if not os.path.exists(path):
        return f"checkpoint not found: {path}"
    kind = detect(path)
    if kind is not None and kind != asked:
        return f"{path}: this is {KINDS[kind]}: use --from {kind}"
    return f"{path}: not {expected}"
