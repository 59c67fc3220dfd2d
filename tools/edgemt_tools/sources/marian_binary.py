"""Marian's binary model format (`marian-conv -f model.npz -t model.bin`),
read into the same {name: array} mapping a model .npz gives
(docs/marian-formats.md, section 1, has every byte):

    u64 version (1)   u64 N   N x {u64 name length, u64 type, u64 shape
    length, u64 data length}   the N names (NUL-terminated)   the N shapes
    (int32 each)   u64 padding length P   P bytes   the N data blocks

A data block holds the item's elements (its logical size: elements x the
type's element size) and then the allocator's padding, up to its data
length. The file is untrusted: every count and length is checked against
the file's size before it is used, so a hostile header cannot make the
reader allocate more than the file holds or read past it.

Item types read: float32, float16 (as float32), int8 (the config item
`special:model.yml`) and intgemm8 (Firefox Translations'
`.intgemm.alphas.bin`, either fork's type code), read as the float32
weights their codes stand for and, by read_marian_binary, also as the
codes and quantMult themselves (Intgemm8Item): an int8 file stores those
codes as they are (sources/marian.py, intgemm8_codes). The CPU-specific
packed types (FBGEMM, intgemm8avx2, ...) are refused as such.
"""

import struct
from dataclasses import dataclass
from typing import Dict, List, Tuple

import numpy as np

from .. import input_files, limits
from ..errors import UserError

SUPPORTED_VERSION = 1
_HEADER = struct.Struct("<4Q")
_U64 = struct.Struct("<Q")

# Marian's `enum class Type` (src/common/types.h): the types read here, and
# names for the ones refused (both forks' codes; see docs/marian-formats.md).
INT8, FLOAT16, FLOAT32 = 0x101, 0x402, 0x404
_ELEMENTS = {INT8: np.int8, FLOAT16: np.float16, FLOAT32: np.float32}
_INTGEMM8 = {0x4101: "intgemm8 (browsermt)", 0x10001: "intgemm8"}
_REFUSED = {
    0x4102: "intgemm16 (browsermt)", 0x10002: "intgemm16", 0x802: "packed16 (FBGEMM)",
    0x1801: "packed8avx2 (FBGEMM)", 0x2801: "packed8avx512 (FBGEMM)",
    0x18001: "intgemm8ssse3", 0x11001: "intgemm8avx2", 0x12001: "intgemm8avx512",
    0x13001: "intgemm8avx512vnni", 0x14002: "intgemm16sse2", 0x11002: "intgemm16avx2",
    0x12002: "intgemm16avx512",
}


class _Reader:
    """Little-endian fields of `data`, each checked to lie inside it."""

    def __init__(self, data: bytes, where: str):
        self.data = memoryview(data)  # slices without copies
        self.where = where
        self.position = 0

    def take(self, size: int, what: str) -> bytes:
        if size < 0 or self.position + size > len(self.data):
            raise UserError(f"{self.where}: truncated Marian binary model ({what} runs past the "
                            f"end of the {len(self.data)}-byte file)")
        chunk = self.data[self.position:self.position + size]
        self.position += size
        return chunk

    def u64(self, what: str) -> int:
        return _U64.unpack(self.take(8, what))[0]


def _headers(reader: _Reader) -> List[Tuple[int, int, int, int]]:
    version = reader.u64("the version")
    if version != SUPPORTED_VERSION:
        kind = " (encrypted: Marian built with SSL)" if version == 2 else ""
        raise UserError(f"{reader.where}: Marian binary model version {version}{kind}; edgemt "
                        f"reads version {SUPPORTED_VERSION}")
    count = reader.u64("the item count")
    # Every item needs a 32-byte header: more than the file can hold is a lie.
    if count == 0 or count > (len(reader.data) - 16) // _HEADER.size:
        raise UserError(f"{reader.where}: Marian binary model with {count} items in a "
                        f"{len(reader.data)}-byte file")
    return [_HEADER.unpack(reader.take(_HEADER.size, "the item headers")) for _ in range(count)]


def _names_and_shapes(reader: _Reader, headers) -> Tuple[List[str], List[Tuple[int, ...]]]:
    names = []
    for name_length, _, _, _ in headers:
        raw = bytes(reader.take(name_length, "the item names"))
        if not raw.endswith(b"\0") or b"\0" in raw[:-1]:
            raise UserError(f"{reader.where}: an item name is not one NUL-terminated string")
        names.append(raw[:-1].decode("utf-8", "replace"))
    if len(set(names)) != len(names):
        raise UserError(f"{reader.where}: an item name appears twice")
    shapes = []
    for name, (_, _, shape_length, _) in zip(names, headers):
        raw = reader.take(4 * shape_length, "the item shapes")
        shape = struct.unpack(f"<{shape_length}i", raw)
        if any(d < 0 for d in shape):
            raise UserError(f"{reader.where}: item {name} has a negative dimension {list(shape)}")
        shapes.append(shape)
    return names, shapes


@dataclass(frozen=True)
class Intgemm8Item:
    """An intgemm8 item's codes, in Marian's shape [R, C] as its float32
    weights have it (transposed back from the stored Wᵀ), and its quantMult:
    w = q * step, step = float32(1) / quantMult (docs/marian-formats.md 1.3)."""
    codes: np.ndarray          # int8 [R, C], in [-127, 127]
    quant_mult: np.float32

    @property
    def step(self) -> np.float32:
        return np.float32(1) / self.quant_mult

    def weights(self) -> np.ndarray:
        """The float32 weights the codes stand for, as browsermt's loader
        widens Wemb: q * (1 / qm), one float32 product per code."""
        return self.codes.astype(np.float32) * self.step


def _intgemm8(name: str, shape, block, where: str) -> Intgemm8Item:
    """An intgemm8 item (docs/marian-formats.md 1.3): the codes are Wᵀ
    ([C][R], row-major; a `Wemb` item, which only browsermt's converter
    quantizes, keeps [R][C]), then the float32 quantMult. A code -128 is
    refused: Marian's quantizer clamps to [-127, 127], and edgemt's int8
    files keep these codes."""
    if len(shape) != 2:
        raise UserError(f"{where}: int8 item {name} has shape {list(shape)}, not a matrix")
    rows, cols = shape
    count = rows * cols
    if count + 4 > len(block):
        raise UserError(f"{where}: int8 item {name} of shape {list(shape)} needs {count + 4} "
                        f"bytes, its data has {len(block)}")
    codes = np.frombuffer(block, dtype=np.int8, count=count)
    quant_mult = np.frombuffer(block, dtype="<f4", count=1, offset=count)[0]
    if not np.isfinite(quant_mult) or quant_mult <= 0:
        raise UserError(f"{where}: int8 item {name} has quantMult {quant_mult}")
    if (codes == -128).any():
        raise UserError(f"{where}: int8 item {name} holds the code -128, which Marian never "
                        "writes (its codes lie in [-127, 127]): a damaged file?")
    if "Wemb" in name:
        stored = codes.reshape(rows, cols).copy()
    else:
        stored = np.ascontiguousarray(codes.reshape(cols, rows).T)
    return Intgemm8Item(stored, np.float32(quant_mult))


def _item(name: str, kind: int, shape, block: bytes, where: str) -> np.ndarray:
    if kind in _REFUSED:
        raise UserError(f"{where}: item {name} is of type {_REFUSED[kind]}, a CPU-specific "
                        "packed layout; convert the model's float32 form")
    if kind not in _ELEMENTS:
        raise UserError(f"{where}: item {name} has an unknown type {kind:#x}")
    dtype = np.dtype(_ELEMENTS[kind]).newbyteorder("<")
    elements = int(np.prod(shape, dtype=np.int64)) if shape else 1
    needed = elements * dtype.itemsize
    if needed > len(block):
        raise UserError(f"{where}: item {name} of shape {list(shape)} needs {needed} bytes, its "
                        f"data has {len(block)}")
    array = np.frombuffer(block, dtype=dtype, count=elements).reshape(shape)
    # A copy (native order, writable), as np.load gives: the file's bytes go.
    return array.astype(np.float32 if kind == FLOAT16 else dtype.newbyteorder("="))


def read_marian_binary(path: str) -> Tuple[Dict[str, np.ndarray], Dict[str, Intgemm8Item]]:
    """({item name: array}, {name of an intgemm8 item: its codes}) of a
    Marian .bin model: the arrays as np.load gives a .npz's (special:model.yml
    included, as its int8 bytes; an intgemm8 item as the float32 weights its
    codes stand for); UserError naming what is wrong with a file edgemt
    cannot read."""
    if not input_files.regular_file(path, "Marian model"):
        raise UserError(f"Marian model not found: {path}")
    input_files.refuse_empty(path, "Marian model")
    data = input_files.read_bytes(path, "Marian model", limits.MAX_MODEL_BYTES)
    reader = _Reader(data, path)
    headers = _headers(reader)
    names, shapes = _names_and_shapes(reader, headers)
    reader.take(reader.u64("the padding length"), "the padding")
    items, quantized = {}, {}
    for name, shape, (_, kind, _, data_length) in zip(names, shapes, headers):
        block = reader.take(data_length, f"the data of item {name}")
        if kind in _INTGEMM8:
            quantized[name] = _intgemm8(name, shape, block, path)
            items[name] = quantized[name].weights()
        else:
            items[name] = _item(name, kind, shape, block, path)
    return items, quantized


def load_marian_binary(path: str) -> Dict[str, np.ndarray]:
    """{item name: array} of a Marian .bin model (read_marian_binary's first half)."""
    return read_marian_binary(path)[0]
