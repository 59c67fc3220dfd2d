"""Reads a `.safetensors` file into numpy arrays, every dtype the format
has that a model's weights use, bfloat16 and float8 included (widened to
float32 exactly: tensor_elements.py); the `safetensors` package's numpy
reader refuses those ("data type 'bfloat16' not understood").

The format (github.com/huggingface/safetensors, README "Format"): an
8-byte little-endian header length N, N bytes of JSON mapping each tensor
name to {"dtype", "shape", "data_offsets": [begin, end]} (plus an optional
"__metadata__" of strings), then the tensors' raw little-endian bytes,
offsets counted from the end of the header. Every length and offset is
checked against the file before anything is read.
"""

import json
import math
import os
from typing import Dict

import numpy as np

from ..errors import UserError
from .tensor_elements import ELEMENTS

# safetensors' dtype names -> tensor_elements' (torch's) names.
DTYPES = {"F64": "float64", "F32": "float32", "F16": "float16", "BF16": "bfloat16",
          "F8_E4M3": "float8_e4m3fn", "F8_E5M2": "float8_e5m2", "I64": "int64", "I32": "int32",
          "I16": "int16", "I8": "int8", "U64": "uint64", "U32": "uint32", "U16": "uint16",
          "U8": "uint8", "BOOL": "bool"}
# The safetensors reference implementation refuses longer headers.
MAX_HEADER_BYTES = 100_000_000


def _is_count(value) -> bool:
    return isinstance(value, int) and not isinstance(value, bool) and value >= 0


def _header(handle, path: str, file_size: int) -> dict:
    prefix = handle.read(8)
    if len(prefix) < 8:
        raise UserError(f"cannot read {path}: shorter than the 8-byte header length")
    length = int.from_bytes(prefix, "little")
    if length > min(MAX_HEADER_BYTES, file_size - 8):
        raise UserError(f"cannot read {path}: its header length {length} exceeds the file "
                        f"({file_size} bytes)")
    try:
        header = json.loads(handle.read(length).decode("utf-8"))
    except (UnicodeDecodeError, ValueError) as err:
        raise UserError(f"cannot read {path}: its header is not JSON ({err})") from None
    if not isinstance(header, dict):
        raise UserError(f"cannot read {path}: its header is not a JSON object")
    header.pop("__metadata__", None)
    return header


def _checked_entry(name: str, entry, path: str, data_size: int):
    """(Element, shape, begin, end) of one header entry, or a UserError."""
    if not (isinstance(entry, dict) and isinstance(entry.get("dtype"), str)
            and isinstance(entry.get("shape"), list) and all(map(_is_count, entry["shape"]))
            and isinstance(entry.get("data_offsets"), list) and len(entry["data_offsets"]) == 2
            and all(map(_is_count, entry["data_offsets"]))):
        raise UserError(f"cannot read {path}: tensor {name} has a malformed header entry")
    dtype = entry["dtype"]
    if dtype not in DTYPES:
        raise UserError(f"{path}: tensor {name} has dtype {dtype[:20]}, which edgemt does not "
                        f"read (it reads {', '.join(DTYPES)})")
    element = ELEMENTS[DTYPES[dtype]]
    shape = tuple(entry["shape"])
    begin, end = entry["data_offsets"]
    if not begin <= end <= data_size or end - begin != math.prod(shape) * element.itemsize:
        raise UserError(f"cannot read {path}: tensor {name} ({dtype} {list(shape)}) has data "
                        f"offsets [{begin}, {end}] that do not fit its size or the file")
    return element, shape, begin, end


def load(path: str) -> Dict[str, np.ndarray]:
    """name -> numpy array of every tensor in the file (UserError when it
    is malformed or holds a dtype edgemt does not read)."""
    try:
        with open(path, "rb") as handle:
            file_size = os.fstat(handle.fileno()).st_size
            header = _header(handle, path, file_size)
            data_start = handle.tell()
            entries = {name: _checked_entry(name, entry, path, file_size - data_start)
                       for name, entry in header.items()}
            tensors = {}
            for name, (element, shape, begin, end) in entries.items():
                handle.seek(data_start + begin)
                raw = handle.read(end - begin)
                tensors[name] = element.to_numpy(element.read(raw).reshape(shape))
            return tensors
    except OSError as err:
        raise UserError(f"cannot read {path}: {err.strerror or err}") from None
