"""Write a file so that readers see either nothing or the complete file.

The bytes go to a temporary file in the destination's folder (same file
system, so the final rename is atomic), are fsync'ed, and the temp file is
renamed over the destination. On any exception the temp file is removed and
the destination is left untouched.

A rename replaces whatever the destination is, so the destination is
checked (output_target.check_output) before the temp file is made and
again right before the rename: it must be absent or a regular file, and
none of `inputs`. A device, FIFO, socket or directory is never replaced.
"""

import contextlib
import os
import tempfile
from typing import Iterable

from .output_target import check_output


@contextlib.contextmanager
def atomic_write(path: str, inputs: Iterable[str] = ()):
    """Yield a binary file object; on normal exit it becomes `path`.
    `inputs`: files the destination must not be (UserError if it is)."""
    inputs = list(inputs)
    check_output(path, inputs)
    directory = os.path.dirname(os.path.abspath(path))
    fd, tmp_path = tempfile.mkstemp(prefix="." + os.path.basename(path) + ".", suffix=".tmp",
                                    dir=directory)
    try:
        with os.fdopen(fd, "wb") as handle:
            yield handle
            handle.flush()
            os.fsync(handle.fileno())
        os.chmod(tmp_path, 0o644)
        # The destination may have changed while the file was written.
        check_output(path, inputs)
        os.replace(tmp_path, path)
    except BaseException:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(tmp_path)
        raise
    # Persist the rename itself.
    dir_fd = os.open(directory, os.O_RDONLY)
    try:
        os.fsync(dir_fd)
    finally:
        os.close(dir_fd)
