"""Emulates int8 embedding tables with a residual code (a study, not a format).

The idea under test (docs/int8-quality.md, "What is left"): an int8 file
keeps one int8 code per table weight, shared with the tied output
projection as today, plus a short second code per weight for what the
first one misses, so that lookups are nearly exact while the output layer
stays an int8 product. The runtime has no such tables; this module rewrites
an int8 file made with `--fp32-embeddings lookup` (float32 tables, the tied
output projection an int8 copy of its own, calibrated) so that each float32
table holds exactly what such a lookup would compute:

  row r = c1[r, :] + s2[r] * q2[r, :]       (float64, then float32)
  c1    = s1[r] * q1[r, :] * m              the output projection's stored
                                            codes q1 [V, d], row scales s1
                                            [V] and smoothing m [d] (ones if
                                            none) when it is the table's
                                            copy; else the table's own
                                            nearest int8 codes
  q2    = round((table - c1) / s2), |q2| <= 2^(bits-1) - 1, s2 per row

The projection is the table's copy when it has the table's shape and its
dequantized rows lie within 4 code steps of the table on average; the
untied output of an untied model (OpenNMT-py A) does not.
"""

from typing import List

import numpy as np

from edgemt_tools.model_file import read_model, write_model
from edgemt_tools.model_spec import expected_tensors, is_table, scale_name, smooth_name
from edgemt_tools.quantize import quantize_rows


def _copy_codes(table: np.ndarray, tensors, name: str):
    """c1 of a projection `name` [V, d] when it is `table`'s int8 copy, else None."""
    codes = tensors.get(name)
    if codes is None or codes.dtype != np.int8 or codes.shape != table.shape:
        return None
    scale = np.asarray(tensors[scale_name(name)], np.float64)
    c1 = codes.astype(np.float64) * scale[:, None]
    if smooth_name(name) in tensors:
        c1 = c1 * np.asarray(tensors[smooth_name(name)], np.float64)[None, :]
    step = np.maximum(scale.mean(), np.finfo(np.float64).tiny)
    return c1 if np.abs(c1 - table).mean() <= 4.0 * step else None


def rewrite(path: str, bits: int) -> List[str]:
    """Rewrite the int8 file at `path` (float32 tables) in place as above;
    returns one line per table: its first codes and the largest error."""
    if not 2 <= bits <= 8:
        raise ValueError("bits must be in 2..8")
    qmax = 2 ** (bits - 1) - 1
    model = read_model(path)
    header = model.header
    tensors, aliases = model.stored_tensors()
    tensors = {name: np.array(array) for name, array in tensors.items()}
    specs = expected_tensors(header.config, "fp32")
    lines = []
    for name, spec in specs.items():
        if not is_table(spec) or spec.alias_of is not None:
            continue
        if tensors[name].dtype != np.float32:
            raise ValueError(f"{path}: table {name} is not float32 (convert with "
                             "--fp32-embeddings lookup)")
        table = tensors[name].astype(np.float64)
        partners = [other for other, ospec in specs.items() if ospec.projection
                    and ospec.alias_of is None
                    and _copy_codes(table, tensors, other) is not None]
        if partners:
            c1 = _copy_codes(table, tensors, partners[0])
        else:
            q1, s1 = quantize_rows(tensors[name], name)
            c1 = q1.astype(np.float64) * s1.astype(np.float64)[:, None]
        residue = table - c1
        s2 = np.abs(residue).max(axis=1) / qmax
        s2 = np.where(s2 > 0, s2, 1.0)
        q2 = np.clip(np.rint(residue / s2[:, None]), -qmax, qmax)
        tensors[name] = (c1 + q2 * s2[:, None]).astype(np.float32)
        lines.append(f"{name}: first codes of {partners[0] if partners else 'its own'}, "
                     f"largest error {np.abs(tensors[name] - table).max():.3g} with a "
                     f"{bits}-bit residue")
    write_model(path, header, tensors, aliases)
    return lines
