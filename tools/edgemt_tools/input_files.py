"""The files a conversion reads: each must be a regular file, and each is
remembered, so that the output is never written over one of them.

A FIFO or a device as an input never ends (`/dev/zero`) or blocks until a
writer comes; the converter's inputs are files on disk, so anything else is
refused by name before it is opened. The sources call `regular_file` for
every file they read; `convert.run` reads the list inside `recording()` and
hands it to the writer (output_target.py), which refuses an output that is
one of them: `-o model.npz` inside a Marian folder would otherwise replace
the checkpoint being converted.

Binary inputs may be gzip-compressed (`read_bytes`): Firefox Translations'
model repository (mozilla/firefox-translations-models) ships every file so,
`model.<pair>.intgemm.alphas.bin.gz`, `vocab.<pair>.spm.gz`,
`lex.50.50.<pair>.s2t.bin.gz`, and a converter that refused them would send
users to gunzip each one first.
"""

import contextlib
import gzip
import io
import os
import stat
import zlib
from typing import Iterator, List, Optional

from .errors import UserError

# The paths read by the conversion running now (None: no conversion is
# recording, e.g. a source used from a test or another tool).
_recorded: Optional[List[str]] = None


def kind_of(mode: int) -> str:
    """What a stat mode is, in words, for messages."""
    for test, name in ((stat.S_ISDIR, "a directory"), (stat.S_ISFIFO, "a FIFO"),
                       (stat.S_ISCHR, "a character device"), (stat.S_ISBLK, "a block device"),
                       (stat.S_ISSOCK, "a socket"), (stat.S_ISREG, "a regular file")):
        if test(mode):
            return name
    return "of an unknown kind"


def regular_file(path: str, what: str) -> bool:
    """True when `path` is a regular file (symlinks followed), which is then
    recorded as an input; False when nothing is there. UserError naming
    `what` when something else is (a FIFO, a device, a directory, ...)."""
    try:
        mode = os.stat(path).st_mode
    except FileNotFoundError:
        return False
    except OSError as err:
        raise UserError(f"cannot read {what} {path}: {err.strerror}") from None
    if not stat.S_ISREG(mode):
        raise UserError(f"{what} {path} is not a regular file (it is {kind_of(mode)})")
    if _recorded is not None:
        _recorded.append(path)
    return True


def refuse_empty(path: str, what: str) -> None:
    """UserError when the file at `path` has no bytes: the libraries that read
    checkpoints report that as "EOFError" or "pickled data", not as empty."""
    if os.path.getsize(path) == 0:
        raise UserError(f"{what} {path} is empty (0 bytes)")


@contextlib.contextmanager
def recording() -> Iterator[List[str]]:
    """Collects the paths `regular_file` accepts while the block runs."""
    global _recorded
    outer, _recorded = _recorded, []
    try:
        yield _recorded
    finally:
        _recorded = outer


GZIP_MAGIC = b"\x1f\x8b"
_CHUNK = 1 << 24


def without_gz(name: str) -> str:
    """A file name without a trailing `.gz`: the kind of file it holds."""
    return name[:-3] if name.endswith(".gz") else name


def available_memory() -> Optional[int]:
    """The memory a process can still take without swapping, in bytes
    (MemAvailable of /proc/meminfo); None where that is not known."""
    try:
        with open("/proc/meminfo", encoding="ascii") as handle:
            for line in handle:
                if line.startswith("MemAvailable:"):
                    return int(line.split()[1]) * 1024
    except (OSError, ValueError, IndexError):
        pass
    return None


def read_bytes(path: str, what: str, limit: int) -> bytes:
    """The bytes of the file at `path`, decompressed when they are gzip's
    (told by the magic bytes, not the name), at most `limit` of them.
    UserError naming `what` when the file cannot be read, is a broken gzip
    stream, or decompresses to more than `limit` bytes or than the memory
    available (a small file must not get the converter killed for memory)."""
    try:
        with open(path, "rb") as handle:
            data = handle.read()
    except OSError as err:
        raise UserError(f"cannot read {what} {path}: {err.strerror}") from None
    if not data.startswith(GZIP_MAGIC):
        return data
    memory = available_memory()
    cap = limit if memory is None else min(limit, memory)
    out = bytearray()
    try:
        with gzip.GzipFile(fileobj=io.BytesIO(data)) as stream:
            while len(out) <= cap:  # bounded pieces: read(n) would allocate n at once
                piece = stream.read(_CHUNK)
                if not piece:
                    return bytes(out)
                out += piece
    except (OSError, EOFError, zlib.error) as err:  # gzip.BadGzipFile is an OSError
        reason = str(err).splitlines()[0] if str(err) else type(err).__name__
        raise UserError(f"{what} {path} is gzip-compressed but cannot be decompressed "
                        f"({reason})") from None
    if cap < limit:
        raise UserError(f"{what} {path} decompresses to more than the {cap >> 20:,} MiB of "
                        "memory available")
    raise UserError(f"{what} {path} decompresses to more than {limit:,} bytes")


def gzip_head(path: str, size: int) -> bytes:
    """The first `size` bytes of the file at `path`, decompressed when it is
    gzip's; fewer (or none) when it is shorter, unreadable or broken."""
    try:
        with open(path, "rb") as handle:
            head = handle.read(size)
            if not head.startswith(GZIP_MAGIC):
                return head
            handle.seek(0)
            with gzip.GzipFile(fileobj=handle) as stream:
                return stream.read(size)
    except (OSError, EOFError, zlib.error):
        return b""
