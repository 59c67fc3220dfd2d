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
import torch


def interleaved_sinusoidal(max_positions: int, d_model: int) -> np.ndarray:
    """Position table [max_positions, d_model] float32 (row p is added at position p)."""
    if d_model % 2:
        raise ValueError(f"d_model must be even for sinusoidal positions, got {d_model}")
    exponent = torch.arange(0, d_model, 2, dtype=torch.float32) / float(d_model)
    denom = torch.pow(torch.tensor(10000.0, dtype=torch.float32), exponent)
    positions = torch.arange(max_positions, dtype=torch.float32).unsqueeze(1)
    angle = positions / denom                                   # [P, d/2]
    table = torch.zeros(max_positions, d_model, dtype=torch.float32)
    table[:, 0::2] = torch.sin(angle)
    table[:, 1::2] = torch.cos(angle)
    return table.numpy()


# Names used in a config's "positional_encoding" field.
TABLES = {"sinusoidal_interleaved": interleaved_sinusoidal}
