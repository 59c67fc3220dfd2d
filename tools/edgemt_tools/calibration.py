"""`edgemt-convert --calibrate`: how close int8 greedy decoding stays to fp32.

Int8PerRowDynamic quantizes activations at run time, so a file needs no
activation statistics; what a calibration text can still tell is whether the
int8 weights and activations change translations. This runs the PyTorch
reference (torch_reference.py) in fp32 and in its exact int8 mode on the first
N non-blank lines of the text and counts the lines whose greedy output ids are
identical. Nothing from the text is stored in the model file.
"""

import gzip
import os
from dataclasses import dataclass
from typing import List

from .errors import UserError

# The longest calibration line read, in bytes: a sentence is far shorter, and
# without a bound a file that never ends its first line (/dev/zero) is read
# forever.
MAX_LINE_BYTES = 1 << 20


@dataclass(frozen=True)
class Agreement:
    identical: int   # lines whose int8 greedy ids equal the fp32 ones
    compared: int    # lines decoded
    too_long: int    # lines skipped: more source ids than the model's positions


def read_calibration_lines(path: str, count: int) -> List[str]:
    """The first `count` non-blank lines of a UTF-8 text file (`.gz` allowed).

    Reads the file once, front to back, so a pipe (`<(zcat ...)`) works too.
    Raises UserError when it is missing, not a readable file, not UTF-8 text
    (checked on every line read), has a line longer than MAX_LINE_BYTES or
    has no non-blank line."""
    if not os.path.exists(path):
        raise UserError(f"calibration file not found: {path}")
    if os.path.isdir(path):
        raise UserError(f"calibration file is a directory: {path}")
    opener = gzip.open if path.endswith(".gz") else open
    lines: List[str] = []
    try:
        with opener(path, "rb") as handle:
            number = 0
            while len(lines) < count:
                raw = handle.readline(MAX_LINE_BYTES + 1)
                if not raw:
                    break
                number += 1
                lines.extend(_decoded(raw, number, path))
                if len(raw) > MAX_LINE_BYTES and not raw.endswith(b"\n"):
                    raise UserError(f"calibration file {path}: line {number} is longer than "
                                    f"{MAX_LINE_BYTES} bytes (not a text of sentences)")
    except (OSError, EOFError) as err:
        raise UserError(f"cannot read calibration file {path}: {err}") from None
    if not lines:
        raise UserError(f"calibration file {path} has no non-blank line")
    return lines[:count]


def _decoded(raw: bytes, number: int, path: str) -> List[str]:
    """[line] for a non-blank line, [] for a blank one; UserError for non-text."""
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as err:
        raise UserError(f"calibration file {path} is not UTF-8 text (line {number}, "
                        f"byte {err.start + 1})") from None
    if "\0" in text:
        raise UserError(f"calibration file {path} is not text (NUL byte on line {number})")
    text = text.rstrip("\r\n")
    return [text] if text.strip() else []


def int8_greedy_agreement(checkpoint: str, config: str, spm: str,
                          lines: List[str]) -> Agreement:
    """Greedy-decode `lines` with the fp32 and the int8 PyTorch reference and
    count identical outputs. Lines longer than the position table are skipped
    (neither model can encode them)."""
    from .torch_reference import TorchReference  # torch: imported only when calibrating
    fp32 = TorchReference(checkpoint, config, spm, "fp32")
    int8 = TorchReference(checkpoint, config, spm, "int8")
    identical = compared = too_long = 0
    for line in lines:
        src = fp32.encode_text(line)
        if len(src) > fp32.max_positions:
            too_long += 1
            continue
        compared += 1
        identical += fp32.greedy(src) == int8.greedy(src)
    return Agreement(identical, compared, too_long)


def summary(agreement: Agreement, path: str) -> str:
    """The one line edgemt-convert prints."""
    skipped = (f"; {agreement.too_long} line(s) longer than the position table skipped"
               if agreement.too_long else "")
    return (f"calibration: int8 greedy output identical to fp32 on "
            f"{agreement.identical}/{agreement.compared} lines of {path}{skipped} "
            "(Int8PerRowDynamic quantizes activations at run time: nothing from "
            f"{path} is stored)")
