"""Where a written file may land: a new name, or an existing regular file
that is none of the command's inputs.

The atomic writer renames its temporary file over the target, and a rename
replaces whatever the name points at: run as root, `-o /dev/null` replaced
the null device with a plain file, and `-o` naming the checkpoint replaced
it. The checks follow symlinks (a link to a device is a device) and compare
files by device and inode, so another spelling of a path, a hard link or a
symlink to an input is caught as that input.
"""

import os
import stat
from typing import Iterable, Optional, Tuple

from .errors import UserError
from .input_files import kind_of


def _identity(path: str) -> Optional[Tuple[int, int]]:
    try:
        info = os.stat(path)
    except OSError:
        return None
    return info.st_dev, info.st_ino


def check_output(path: str, inputs: Iterable[str] = ()) -> None:
    """UserError unless `path` is absent or a regular file that is none of
    `inputs` (paths; missing ones are ignored)."""
    try:
        info = os.stat(path)
    except FileNotFoundError:
        return  # a new file (or a dangling symlink, which the rename replaces)
    except OSError as err:
        raise UserError(f"cannot check the output {path}: {err.strerror}") from None
    if not stat.S_ISREG(info.st_mode):
        raise UserError(f"output {path} is not a regular file (it is {kind_of(info.st_mode)}): "
                        "only a regular file is ever replaced (nothing was changed)")
    for source in inputs:
        if _identity(source) == (info.st_dev, info.st_ino):
            raise UserError(f"output {path} is the input {source}: writing it would replace "
                            "what is being read (nothing was changed)")
