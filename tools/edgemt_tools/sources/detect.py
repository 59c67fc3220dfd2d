"""What kind of checkpoint a path holds, so that a `--from` that does not fit
gets "this is an OpenNMT-py checkpoint: use --from opennmt", not a missing
key. Looks only at names and headers (a .pt file is unpickled with
weights_only, which runs no code)."""

import json
import os
import zipfile
from typing import Optional

# --from name -> what users call it.
KINDS = {
    "torch": "a torch.nn.Transformer state_dict (edgemt's own layout)",
    "torch-rnn": "a state_dict of the RNN trainer (train_rnn_attention.py)",
    "opennmt": "an OpenNMT-py checkpoint",
    "marian": "a Marian model (.npz)",
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


def _torch_file_kind(path: str) -> Optional[str]:
    if _is_onmt_pickle(path):
        return "opennmt"
    try:
        import torch
        state = torch.load(path, map_location="cpu", weights_only=True)
    except Exception:  # noqa: BLE001 - any file torch cannot read is simply not one of ours
        return None
    if not isinstance(state, dict):
        return None
    keys = [k for k in state if isinstance(k, str)]
    if any(k.startswith("model.shared.") or k.startswith("model.encoder.layers.") for k in keys):
        return "hf-marian"
    if "embed.weight" in keys and any(k.startswith("transformer.") for k in keys):
        return "torch"
    if "src_embed.weight" in keys and "tgt_embed.weight" in keys and \
            any(k.startswith("encoder.weight_ih_l") for k in keys):
        return "torch-rnn"
    return None


def _is_onmt_pickle(path: str) -> bool:
    """True for a torch zip whose pickle names OpenNMT-py's checkpoint keys.
    Those checkpoints hold an argparse Namespace (`opt`), which a weights-only
    load refuses; the names decide, nothing is unpickled."""
    try:
        with zipfile.ZipFile(path) as archive:
            pickles = [n for n in archive.namelist() if n.endswith("data.pkl")]
            data = archive.read(pickles[0]) if pickles else b""
    except (OSError, zipfile.BadZipFile, KeyError):
        return False
    return b"generator" in data and b"vocab" in data and b"opt" in data and \
        b"argparse" in data


def detect(path: str) -> Optional[str]:
    """The --from name of what `path` holds, or None when unknown."""
    if os.path.isdir(path):
        kind = _hf_folder_kind(path)
        if kind is not None:
            return kind
        if any(name.endswith(".npz") and _npz_is_marian(os.path.join(path, name))
               for name in os.listdir(path)):
            return "marian"
        return None
    if not os.path.isfile(path):
        return None
    if path.endswith(".npz"):
        return "marian" if _npz_is_marian(path) else None
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
