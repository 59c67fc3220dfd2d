"""Int8 per-row symmetric quantization: QuantizationScheme.Int8PerRowDynamic.

Weights (done once, by the converter): every matrix [out, in] is stored as
int8 codes q and one float32 scale per output row,

    scale[r] = float32(max|w[r, :]|) / float32(127)        (float32 division)
    q[r, c]  = clip(rint(w[r, c] / scale[r]), -127, 127)   (float64 division)
    w[r, c] ~ q[r, c] * scale[r]                           (float32 product)

Symmetric, so the code -128 is never used (the C++ kernels may negate codes
without overflow). `rint` rounds half to even; the division is evaluated in
float64 from the float32 operands so that which side of a .5 boundary a
weight falls on is well defined (and reproducible in C++ with doubles). An
all-zero row gets scale 0 and codes 0 (no division by zero).

Those are the nearest codes; a calibrated conversion (int8_calibration.py)
may round some weights the other way (gptq.py), within the same codes and
scales, and in smoothed files the matrix stored is w / m column by column
for its smoothing vector m (`<matrix>_smooth`, which multiplies the inputs).

Activations (done at run time, by the runtime's dynamic int8 GEMM; here for
the references): each row x of a projection's input (times m in smoothed
files, one float32 product per value) is quantized on its own, in float32
only, to codes in [-127, 127] (A = ACTIVATION_QMAX = 127, the runtime's
kFullCodes: runtime/kernels/int8_gemm.h),

    amax = max|x|;  if float32(A) / amax is inf (amax 0, or below
                    A / FLT_MAX ~ 3.7e-37) the row is 0 with scale 0, else
    q    = clip(rint(x * (float32(A) / amax)), -A, A)
    x   ~ q * (amax / float32(A))

which mirrors the runtime operation for operation, so the reference rounds
exactly where the runtime does. (Files converted before format version 5
were translated with codes in [-64, 64]; the runtime now uses full codes
for every int8 file.)
"""

from typing import Tuple

import numpy as np

from .errors import UserError

QMAX = 127  # largest weight code; weight codes lie in [-QMAX, QMAX]
ACTIVATION_QMAX = 127  # largest activation code (the runtime's kFullCodes)


def quantize_rows(w: np.ndarray, name: str = "matrix") -> Tuple[np.ndarray, np.ndarray]:
    """Matrix w [out, in] (float) -> (codes int8 [out, in], scale float32 [out]).

    Raises UserError naming `name` when w holds nan or inf (a scale computed
    from them would silently zero or poison the whole row)."""
    w32 = np.asarray(w, dtype=np.float32)
    if w32.ndim != 2:
        raise ValueError(f"tensor {name}: quantize_rows needs a matrix, got shape {w32.shape}")
    if not np.isfinite(w32).all():
        raise UserError(f"tensor {name} contains non-finite values (nan or inf); "
                        "cannot quantize it to int8")
    amax = np.abs(w32).max(axis=1, initial=np.float32(0))              # [out] float32
    scale = (amax / np.float32(QMAX)).astype(np.float32)                # [out] float32
    # Rows with scale 0 (all zero, or a max so tiny that max/127 underflows)
    # divide by 1 and are then zeroed: no division by zero, no warnings.
    divisor = np.where(scale > 0, scale, np.float32(1)).astype(np.float64)
    codes = np.rint(w32.astype(np.float64) / divisor[:, None])
    q = np.clip(codes, -QMAX, QMAX).astype(np.int8)
    q[scale == 0] = 0
    return q, scale


def dequantize_rows(q: np.ndarray, scale: np.ndarray) -> np.ndarray:
    """Codes [out, in] and scales [out] -> float32 [out, in], q * scale[r] in
    float32 (what the runtime's embedding lookup and the reference use)."""
    q = np.asarray(q)
    scale = np.asarray(scale, dtype=np.float32)
    if q.ndim != 2 or scale.shape != (q.shape[0],):
        raise ValueError(f"dequantize_rows: codes {q.shape} and scales {scale.shape} "
                         "do not match (need [out, in] and [out])")
    return q.astype(np.float32) * scale[:, None]


RESIDUAL_QMAX = 7  # residual codes of an int8 table lie in [-7, 7] (4 bits)


def residual_rows(table: np.ndarray, codes: np.ndarray,
                  scale: np.ndarray) -> Tuple[np.ndarray, np.ndarray]:
    """What an int8 table's codes [rows, dim] and scales [rows] miss of the
    float table, as (packed residual codes int8 [rows, ceil(dim / 2)], their
    scales float32 [rows]): the residue table - codes * scale (in float64)
    rounded to [-RESIDUAL_QMAX, RESIDUAL_QMAX] per row, two codes to a byte
    (pack_nibbles). A lookup then reads dequantize_table_rows."""
    table64 = np.asarray(table, dtype=np.float32).astype(np.float64)
    residue = table64 - (np.asarray(codes).astype(np.float64)
                         * np.asarray(scale, np.float32).astype(np.float64)[:, None])
    step = (np.abs(residue).max(axis=1, initial=0.0) / RESIDUAL_QMAX).astype(np.float32)
    divisor = np.where(step > 0, step, np.float32(1)).astype(np.float64)
    q = np.clip(np.rint(residue / divisor[:, None]), -RESIDUAL_QMAX, RESIDUAL_QMAX)
    q[step == 0] = 0
    return pack_nibbles(q.astype(np.int8)), step


def pack_nibbles(q: np.ndarray) -> np.ndarray:
    """int8 codes [rows, dim] in [-8, 7] -> int8 [rows, ceil(dim / 2)]: column
    2j in the low 4 bits, 2j + 1 in the high 4 bits (two's complement; an odd
    last column's high bits 0), as schema/edgemt.fbs stores residual codes."""
    q = np.asarray(q, dtype=np.int8)
    if q.shape[1] % 2:
        q = np.concatenate([q, np.zeros((q.shape[0], 1), np.int8)], axis=1)
    low = q[:, 0::2].astype(np.uint8) & 0x0F
    high = (q[:, 1::2].astype(np.uint8) & 0x0F) << 4
    return (low | high).astype(np.uint8).view(np.int8)


def unpack_nibbles(packed: np.ndarray, dim: int) -> np.ndarray:
    """pack_nibbles undone: int8 [rows, ceil(dim / 2)] -> int8 [rows, dim]."""
    b = np.asarray(packed).view(np.uint8)
    low = (b & 0x0F).astype(np.int8)
    high = (b >> 4).astype(np.int8)
    q = np.empty((b.shape[0], 2 * b.shape[1]), np.int8)
    q[:, 0::2] = np.where(low > 7, low - 16, low)
    q[:, 1::2] = np.where(high > 7, high - 16, high)
    return q[:, :dim]


def dequantize_table_rows(q: np.ndarray, scale: np.ndarray, residual: np.ndarray,
                          residual_scale: np.ndarray) -> np.ndarray:
    """The float32 rows an embedding lookup reads from an int8 table with
    residual codes: f32(q * scale[r]) + f32(residual * residual_scale[r]),
    each product and the sum rounded to float32 (as the runtime computes)."""
    first = dequantize_rows(q, scale)
    second = dequantize_rows(unpack_nibbles(residual, first.shape[1]), residual_scale)
    return first + second


def quantize_activation_rows(x: np.ndarray) -> Tuple[np.ndarray, np.ndarray]:
    """Activations [..., K] -> (codes int8 [..., K], scale float32 [..., 1]):
    each row (last axis) quantized dynamically on its own, all in float32."""
    x32 = np.asarray(x, dtype=np.float32)
    amax = np.abs(x32).max(axis=-1, keepdims=True, initial=np.float32(0))  # [..., 1]
    # A row whose A / amax overflows (amax 0 or < ~1.9e-37) is a zero row:
    # it uses amax 1 (x * A then rounds to 0 for every code) and scale 0.
    # Scales of rows with amax < A · FLT_MIN are subnormal, as in the runtime.
    with np.errstate(divide="ignore", over="ignore", under="ignore"):
        usable = np.isfinite(np.float32(ACTIVATION_QMAX) / amax)
        safe = np.where(usable, amax, np.float32(1)).astype(np.float32)
        limit = np.float32(ACTIVATION_QMAX)
        inverse = limit / safe                                             # float32
        q = np.clip(np.rint(np.where(usable, x32, np.float32(0)) * inverse), -limit, limit)
        scale = np.where(usable, safe / limit, np.float32(0)).astype(np.float32)
    q = q.astype(np.int8)
    return q, scale


def fake_quantize_activation_rows(x: np.ndarray) -> np.ndarray:
    """Activations [..., K] -> float32 [..., K] with each row replaced by the
    values its int8 codes stand for (q * amax / 127): the input the runtime's
    dynamic int8 GEMM effectively multiplies."""
    q, scale = quantize_activation_rows(x)
    return q.astype(np.float32) * scale
