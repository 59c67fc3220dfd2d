"""Sinusoidal position tables, computed the way the source model computes them.

The multi30k-en-de README defines (interleaved, d = d_model):

    PE[p, 2i]   = sin(p / 10000^(2i/d))
    PE[p, 2i+1] = cos(p / 10000^(2i/d))

Formula choice (made explicit because float32 rounding differs between
variants): we evaluate the README expression literally, in float32 torch ops,

    exponent = arange(0, d, 2, float32) / d          # 2i/d
    denom    = pow(10000.0, exponent)                # float32
    angle    = arange(P, float32)[:, None] / denom   # [P, d/2]
    PE[:, 0::2] = sin(angle);  PE[:, 1::2] = cos(angle)

and NOT the common `exp(2i * -ln(10000)/d)` rewrite, nor float64 then cast.
The variants differ by a few float32 ulps of the angle (< 3e-5 absolute at
p = 255, d = 256), far below what changes a translation; the table is stored
in the file (F32, never F16) so the runtime never recomputes it, and the
PyTorch reference module uses this same function, so file and reference agree
bit for bit.
"""

import numpy as np

from .errors import UserError


def interleaved_sinusoidal(max_positions: int, d_model: int) -> np.ndarray:
    """Position table [max_positions, d_model] float32 (row p is added at position p)."""
    if d_model % 2:
        raise ValueError(f"d_model must be even for sinusoidal positions, got {d_model}")
    try:
        import torch  # here: the other tables, and what imports this module, need no torch
    except ImportError:
        raise UserError("this position table is computed as PyTorch computes it, which needs "
                        "PyTorch: pip install 'edgemt[torch]' (or Debian's python3-torch)") from None
    exponent = torch.arange(0, d_model, 2, dtype=torch.float32) / float(d_model)
    denom = torch.pow(torch.tensor(10000.0, dtype=torch.float32), exponent)
    positions = torch.arange(max_positions, dtype=torch.float32).unsqueeze(1)
    angle = positions / denom                                   # [P, d/2]
    table = torch.zeros(max_positions, d_model, dtype=torch.float32)
    table[:, 0::2] = torch.sin(angle)
    table[:, 1::2] = torch.cos(angle)
    return table.numpy()


def hugging_face_marian(max_positions: int, d_model: int) -> np.ndarray:
    """transformers' MarianSinusoidalPositionalEmbedding: NOT interleaved,
    sin of the even-index angles in the first half, cos of the odd-index
    angles in the second, angle = pos / 10000^(2·(j//2)/d), in float64
    (numpy), then float32."""
    dim = d_model
    j = np.arange(dim)
    angle = np.array([[pos / np.power(10000, 2 * (k // 2) / dim) for k in j]
                      for pos in range(max_positions)], dtype=np.float64)
    sentinel = dim // 2 if dim % 2 == 0 else dim // 2 + 1
    table = np.zeros((max_positions, dim), dtype=np.float32)
    table[:, :sentinel] = np.sin(angle[:, 0::2]).astype(np.float32)
    table[:, sentinel:] = np.cos(angle[:, 1::2]).astype(np.float32)
    return table


def marian(max_positions: int, d_model: int) -> np.ndarray:
    """Marian's sinusoidal table (marian-dev, node_initializers.cpp
    sinusoidalPositionEmbeddings), in float32 as Marian computes it: h = d/2
    timescales, increment = log(10000) / (h - 1), angle = p · exp(i ·
    -increment); sin in [:, :h], cos in [:, h:]. The float32 functions are
    the C library's (expf, sinf, cosf, logf), as Marian calls them."""
    if d_model % 2:
        raise ValueError(f"d_model must be even for Marian's positions, got {d_model}")
    libm = _libm()
    h = d_model // 2
    increment = np.float32(libm.logf(10000.0) / np.float32(h - 1.0))
    table = np.zeros((max_positions, d_model), dtype=np.float32)
    scales = np.array([libm.expf(np.float32(i) * -increment) for i in range(h)], dtype=np.float32)
    for p in range(max_positions):
        for i in range(h):
            v = float(np.float32(p) * scales[i])
            table[p, i] = libm.sinf(v)
            table[p, h + i] = libm.cosf(v)
    return table


def _libm():
    import ctypes
    import ctypes.util
    libm = ctypes.CDLL(ctypes.util.find_library("m"))
    for name in ("expf", "sinf", "cosf", "logf"):
        function = getattr(libm, name)
        function.restype = ctypes.c_float
        function.argtypes = [ctypes.c_float]
    return libm


# Names used in a config's "positional_encoding" field.
TABLES = {"sinusoidal_interleaved": interleaved_sinusoidal}
