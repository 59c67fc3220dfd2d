"""Checks of the values that enter the module, before they reach ctypes.

ctypes converts a Python int to a C integer by keeping its low bits: 2**32 + 9
becomes the int32 9, and True becomes 1. A Python float becomes a C float
that may be infinite (1e300). So each value is checked here against the C
type it becomes and its documented meaning in edgemt/edgemt.h, and a bad one
raises an error that names the argument and the range. Upper limits that
the library owns (256 threads, max_batch 1024, the model's longest
sequence, ...) are left to it: its errors name them.
"""

import ctypes
import math
import numbers
import os
from typing import Iterable, Iterator, List, NamedTuple, Optional

from ._errors import ArgumentTypeError, ArgumentValueError

SIZE_MAX = 2 ** (8 * ctypes.sizeof(ctypes.c_size_t)) - 1
INT_MIN = -2 ** (8 * ctypes.sizeof(ctypes.c_int) - 1)
INT_MAX = 2 ** (8 * ctypes.sizeof(ctypes.c_int) - 1) - 1


def _range(low: int, high: int) -> str:
    if high == SIZE_MAX:
        return f"at least {low} (and at most 2**{high.bit_length()} - 1: a C size_t)"
    if (low, high) == (INT_MIN, INT_MAX):
        return f"from -2**{high.bit_length()} to 2**{high.bit_length()} - 1 (a C int)"
    return f"from {low} to {high}"


def integer(name: str, value, low: int, high: int, meaning: str = "") -> int:
    """`value` as an int in [low, high]; bools and floats are refused (True
    is not a count, and 2.5 threads is a mistake, not 2). `meaning` says
    where the bounds come from, for the message."""
    if isinstance(value, bool) or not isinstance(value, numbers.Integral):
        raise ArgumentTypeError(f"{name} must be an integer, not {type(value).__name__} "
                                f"({value!r})")
    value = int(value)
    if not low <= value <= high:
        raise ArgumentValueError(f"{name} is {value}; it must be {_range(low, high)}{meaning}")
    return value


def size(name: str, value) -> int:
    """A C size_t that must be at least 1 (a count, a length, a beam)."""
    return integer(name, value, 1, SIZE_MAX)


def optional_size(name: str, value) -> Optional[int]:
    """None (the default), or a size as size(): 0 is refused, not read as
    "the default" (the C API refuses 0 too)."""
    return None if value is None else size(name, value)


def real(name: str, value) -> float:
    """A finite number as a C float (inf and NaN would be refused by the C
    API without saying which option; 1e300 would become inf)."""
    if isinstance(value, bool) or not isinstance(value, numbers.Real):
        raise ArgumentTypeError(f"{name} must be a number, not {type(value).__name__} "
                                f"({value!r})")
    as_float32 = ctypes.c_float(float(value)).value
    if not math.isfinite(as_float32):
        raise ArgumentValueError(f"{name} is {value!r}; it must be a finite number "
                                 f"(a C float: below 3.4e38 in magnitude)")
    return float(value)


def optional_real(name: str, value) -> Optional[float]:
    return None if value is None else real(name, value)


def flag(name: str, value) -> bool:
    """A bool: a string such as "False" or a number would silently be true."""
    if not isinstance(value, bool):
        raise ArgumentTypeError(f"{name} must be True or False, not {type(value).__name__} "
                                f"({value!r})")
    return value


def token_ids(what: str, ids, vocab_size: int) -> List[int]:
    """The sequence of token ids `what` ("ids", "sources[2]"), each in
    [0, vocab_size) (so in int32)."""
    if isinstance(ids, (numbers.Number, str, bytes)) or not isinstance(ids, Iterable):
        raise ArgumentTypeError(f"{what} must be a sequence of token ids (e.g. [5, 6, 7]), not "
                                f"{type(ids).__name__}")
    out = []
    for position, value in enumerate(ids):
        out.append(integer(f"{what}[{position}]", value, 0, vocab_size - 1,
                           " (the vocabulary's ids)"))
    return out


def token_id_sequences(sources, vocab_size: int) -> List[List[int]]:
    """translate_ids()'s sources: a list of id sequences. A flat id list or a
    string would otherwise be read as many sources of one token each."""
    if isinstance(sources, (str, bytes)) or not isinstance(sources, Iterable):
        raise ArgumentTypeError("translate_ids() takes a list of token-id sequences (e.g. "
                                f"[[5, 6, 7]]), not {type(sources).__name__}")
    checked = []
    for k, source in enumerate(sources):
        if isinstance(source, (numbers.Number, str, bytes)) or not isinstance(source, Iterable):
            raise ArgumentTypeError(f"translate_ids() takes a list of token-id sequences (e.g. "
                                    f"[[5, 6, 7]]); source {k} is of type "
                                    f"{type(source).__name__}")
        checked.append(token_ids(f"sources[{k}]", source, vocab_size))
    return checked


class Text(NamedTuple):
    """One text of translate() or translate_iter(), checked."""
    index: int      # its place in the input
    text: str
    encoded: bytes  # what the library reads (UTF-8 unless it has lone surrogates)


def texts(values) -> Iterator[Text]:
    """translate()'s texts, checked as they are read (a generator's texts
    are not read ahead): an iterable of str (not one str: list("Hello")
    would translate each character as a sentence). The container is checked
    now; each element when it is reached. A str with lone surrogates is
    data, not a programming error: the bytes it stands for go to the
    library, which fails that text alone as `edgemt translate` fails a line
    that is not UTF-8 (same message)."""
    if isinstance(values, (str, bytes)):
        raise ArgumentTypeError("translate() takes a list of texts, not one string: "
                                "use translate([text])")
    if not isinstance(values, Iterable):
        raise ArgumentTypeError(f"translate() takes a list of texts, not "
                                f"{type(values).__name__}")
    return _each_text(values)


def _each_text(values) -> Iterator[Text]:
    for k, value in enumerate(values):
        if not isinstance(value, str):
            raise ArgumentTypeError(f"translate() takes a list of str; text {k} is of type "
                                    f"{type(value).__name__}")
        yield Text(k, value, _bytes_of(value))


def _bytes_of(value: str) -> bytes:
    """UTF-8, or for a str with lone surrogates the bytes they stand for:
    those a file's line had when it was read with errors="surrogateescape"
    (os.fsdecode too), else CESU-style "surrogatepass" bytes."""
    try:
        return value.encode("utf-8")
    except UnicodeEncodeError:
        pass
    try:
        return value.encode("utf-8", "surrogateescape")
    except UnicodeEncodeError:
        return value.encode("utf-8", "surrogatepass")


def text(name: str, value) -> bytes:
    """One str as UTF-8 (NULs allowed: the C call takes a length)."""
    if not isinstance(value, str):
        raise ArgumentTypeError(f"{name} must be a str, not {type(value).__name__}")
    return _utf8(name, value)


def _utf8(name: str, value: str) -> bytes:
    try:
        return value.encode("utf-8")
    except UnicodeEncodeError as e:  # a lone surrogate, e.g. from surrogateescape
        raise ArgumentValueError(f"{name} cannot be written in UTF-8 ({e.reason} at "
                                 f"character {e.start})") from None


def c_string(name: str, value: str) -> bytes:
    """UTF-8 for a NUL-terminated C string: a NUL inside would cut it short
    silently (a path "a\\0b" would open "a")."""
    if not isinstance(value, str):
        raise ArgumentTypeError(f"{name} must be a str, not {type(value).__name__}")
    if "\0" in value:
        raise ArgumentValueError(f"{name} contains a NUL character")
    return _utf8(name, value)


def path(value) -> bytes:
    """A file path as bytes for the C API (str, bytes or os.PathLike)."""
    try:
        encoded = os.fsencode(value)
    except TypeError:
        raise ArgumentTypeError(f"the model path must be a str, bytes or os.PathLike, not "
                                f"{type(value).__name__}") from None
    if b"\0" in encoded:
        raise ArgumentValueError("the model path contains a NUL character")
    return encoded


def byte_string(name: str, value) -> bytes:
    """Any bytes-like object (bytes, bytearray, memoryview) as bytes."""
    if isinstance(value, bytes):
        return value
    try:
        return memoryview(value).tobytes()
    except TypeError:
        raise ArgumentTypeError(f"{name} must be bytes-like, not {type(value).__name__}") from None

