"""Error-compensating rounding of an int8 matrix (GPTQ: Frantar et al.,
"GPTQ: Accurate Post-Training Quantization for Generative Pre-trained
Transformers", 2022, Algorithm 1 with lazy batch updates and the columns
taken in order of decreasing activation energy).

Round-to-nearest makes each weight's error as small as it can be on its
own; what a translation sees is the product's error x · (w - q·s)ᵀ over
real inputs x. Given H = XᵀX of calibration inputs X [rows, K], GPTQ rounds
one input column at a time and spreads that column's rounding error over
the columns not yet rounded, weighted by H's inverse, so that the product
error over X is (nearly) least squares. The file format does not change:
codes stay in [-127, 127] with the per-row scale max|w[r, :]| / 127
(quantize.quantize_rows); only which side of a rounding boundary a code
falls on differs.
"""

from typing import Tuple

import numpy as np

from .quantize import QMAX, quantize_rows

BLOCK = 128          # columns rounded between two lazy updates
DAMPING = 0.01       # of the mean diagonal, added to H (keeps it well conditioned)


def gptq_rows(w: np.ndarray, hessian: np.ndarray,
              name: str = "matrix") -> Tuple[np.ndarray, np.ndarray]:
    """w [out, K] (float) and H = XᵀX [K, K] (float64, X the projection's
    inputs) -> (codes int8 [out, K], scale float32 [out]) with quantize_rows'
    scales. Columns no input ever reaches (H[j, j] = 0) round to nearest."""
    _, scale = quantize_rows(w, name)                  # checks finiteness too
    out_features, depth = w.shape
    h = np.array(hessian, dtype=np.float64)
    dead = np.diag(h) <= 0
    h[dead, dead] = 1.0
    order = np.argsort(-np.diag(h), kind="stable")     # most energy first
    h = h[order][:, order]
    h[np.diag_indices(depth)] += DAMPING * np.mean(np.diag(h))
    try:
        inverse = np.linalg.cholesky(np.linalg.inv(h)).T  # upper: H⁻¹ = UᵀU
    except np.linalg.LinAlgError:
        return quantize_rows(w, name)                  # degenerate inputs: nearest
    step = np.where(scale > 0, scale, 1).astype(np.float64)[:, None]   # [out, 1]
    work = np.asarray(w, dtype=np.float64)[:, order] / step             # in code units
    codes = np.zeros((out_features, depth), dtype=np.float64)
    for begin in range(0, depth, BLOCK):
        end = min(begin + BLOCK, depth)
        block = work[:, begin:end].copy()
        errors = np.zeros_like(block)
        for j in range(end - begin):
            column = block[:, j]
            q = np.clip(np.rint(column), -QMAX, QMAX)
            codes[:, begin + j] = q
            error = (column - q) / inverse[begin + j, begin + j]
            block[:, j + 1:] -= np.outer(error, inverse[begin + j, begin + j + 1:end])
            errors[:, j] = error
        work[:, end:] -= errors @ inverse[begin:end, end:]
    codes[scale == 0] = 0
    restored = np.empty_like(codes)
    restored[:, order] = codes
    return restored.astype(np.int8), scale


def hessian(x: np.ndarray) -> np.ndarray:
    """XᵀX [K, K] in float64 of inputs x [rows, K]."""
    x64 = np.asarray(x, dtype=np.float64)
    return x64.T @ x64
