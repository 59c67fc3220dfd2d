"""The element types of checkpoint tensors (torch zips, safetensors): how
their bytes are stored and how they become numpy values.

numpy has no bfloat16 or float8; those are widened to float32 exactly.
bfloat16 is the top half of a float32, so shifting its bits up 16 places
gives the float32 of the same value (NaNs keep their payload). Every float8
value is a float32 too: E4M3 "fn" (as torch and safetensors define it: no
infinities, NaN only at S.1111.111) and E5M2 (IEEE-style, with infinities
and NaNs) are decoded through 256-entry tables computed here from the
formats' definitions (tests/tools/test_torch_zip.py checks
both against what PyTorch 2.x computes, all 256 codes).
"""

from dataclasses import dataclass
from typing import Callable, Optional

import numpy as np


def bfloat16_bits_to_float32(bits: np.ndarray) -> np.ndarray:
    """uint16 bfloat16 bit patterns (any shape) -> float32, exactly."""
    return (bits.astype(np.uint32) << 16).view(np.float32)


def _float8_table(exponent_bits: int, mantissa_bits: int, ieee_specials: bool) -> np.ndarray:
    bias = (1 << (exponent_bits - 1)) - 1
    top_exponent = (1 << exponent_bits) - 1
    top_mantissa = (1 << mantissa_bits) - 1
    table = np.empty(256, dtype=np.float32)
    for code in range(256):
        sign = -1.0 if code & 0x80 else 1.0
        exponent = (code >> mantissa_bits) & top_exponent
        mantissa = code & top_mantissa
        if ieee_specials and exponent == top_exponent:
            value = np.inf if mantissa == 0 else np.nan
        elif not ieee_specials and exponent == top_exponent and mantissa == top_mantissa:
            value = np.nan
        elif exponent == 0:  # subnormal: 0.mantissa * 2^(1 - bias)
            value = np.ldexp(float(mantissa), 1 - bias - mantissa_bits)
        else:  # 1.mantissa * 2^(exponent - bias)
            value = np.ldexp(float((1 << mantissa_bits) + mantissa),
                             exponent - bias - mantissa_bits)
        table[code] = sign * value
    return table


_E4M3FN = _float8_table(4, 3, ieee_specials=False)
_E5M2 = _float8_table(5, 2, ieee_specials=True)


def float8_e4m3fn_to_float32(codes: np.ndarray) -> np.ndarray:
    """uint8 float8 E4M3 ("fn") codes -> float32, exactly."""
    return _E4M3FN[codes]


def float8_e5m2_to_float32(codes: np.ndarray) -> np.ndarray:
    """uint8 float8 E5M2 codes -> float32, exactly."""
    return _E5M2[codes]


@dataclass(frozen=True, slots=True)
class Element:
    """One element type: `stored` is the numpy dtype of its raw bytes (no
    byte order); `widen` turns those into float32 when numpy lacks the type."""
    name: str
    stored: str
    widen: Optional[Callable[[np.ndarray], np.ndarray]] = None

    @property
    def itemsize(self) -> int:
        return np.dtype(self.stored).itemsize

    def read(self, raw: bytes, byteorder: str = "<") -> np.ndarray:
        """The flat values of `raw` (a whole number of elements)."""
        return np.frombuffer(raw, dtype=np.dtype(self.stored).newbyteorder(byteorder))

    def to_numpy(self, values: np.ndarray) -> np.ndarray:
        """A native-order, contiguous copy of stored values (any shape or
        strides), widened when numpy lacks the type."""
        array = np.array(values, dtype=np.dtype(self.stored))
        return self.widen(array) if self.widen else array


# By torch's dtype names (torch.float32 is "float32").
ELEMENTS = {e.name: e for e in (
    Element("float32", "f4"), Element("float64", "f8"), Element("float16", "f2"),
    Element("bfloat16", "u2", bfloat16_bits_to_float32),
    Element("float8_e4m3fn", "u1", float8_e4m3fn_to_float32),
    Element("float8_e5m2", "u1", float8_e5m2_to_float32),
    Element("int64", "i8"), Element("int32", "i4"), Element("int16", "i2"),
    Element("int8", "i1"), Element("uint64", "u8"), Element("uint32", "u4"),
    Element("uint16", "u2"), Element("uint8", "u1"), Element("bool", "?"))}
