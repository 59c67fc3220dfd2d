"""`edgemt-convert --calibrate FILE`: the calibration text's lines.

int8 calibration (int8_calibration.py) runs the model over source-language
sentences; this reads them, bounded and checked, from a text file. Nothing
from the text is stored in the model file.
"""

import gzip
import os
from typing import List

from .errors import UserError

# The longest calibration line read, in bytes: a sentence is far shorter, and
# without a bound a file that never ends its first line (/dev/zero) is read
# forever.
MAX_LINE_BYTES = 1 << 20


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
