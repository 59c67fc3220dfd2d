"""Plain or gzip-compressed UTF-8 text, one segment per line."""

import gzip
from typing import List


def read_lines(path: str) -> List[str]:
    """Lines without their trailing newline; `.gz` files are decompressed."""
    opener = gzip.open if path.endswith(".gz") else open
    with opener(path, "rt", encoding="utf-8", newline="\n") as handle:
        return [line[:-1] if line.endswith("\n") else line for line in handle]
