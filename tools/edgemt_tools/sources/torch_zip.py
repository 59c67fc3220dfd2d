"""Reads the files `torch.save` writes (PyTorch >= 1.6, its zip format)
WITHOUT torch and without running anything the file names: checkpoints are
untrusted input. This module never imports torch.

The format (torch/serialization.py): a zip archive whose records sit under
one top folder, `<top>/data.pkl` (a pickle of the saved object),
`<top>/data/<key>` (the raw bytes of each tensor storage), `<top>/version`,
and since PyTorch 2.0 `<top>/byteorder` ("little" or "big"; little when
absent) and `<top>/.data/serialization_id`. In data.pkl a tensor is
`torch._utils._rebuild_tensor_v2(storage, offset, size, stride,
requires_grad, backward_hooks[, metadata])` over a typed storage
(torch.FloatStorage, ...) or, for dtypes without one (float8),
`_rebuild_tensor_v3(..., dtype[, metadata])` over a torch.storage.UntypedStorage;
a Parameter wraps one in `_rebuild_parameter(tensor, requires_grad, hooks)`;
storages arrive through the pickle's persistent ids
`('storage', storage class, key, location, numel)`.

The unpickler resolves ONLY the (module, name) pairs of an allow-list, and
only to this module's own functions and markers or to immutable built-in
types (collections.OrderedDict, tuple, set, frozenset,
types.SimpleNamespace); anything else (os.system, builtins.exec, a class
of the trainer's) is refused, naming it, before it is called. Because
every object the pickle can reach is immutable or created by this load,
the pickle's BUILD and SETITEM opcodes cannot alter anything outside it.

`load` returns plain containers whose tensors are numpy arrays: float32,
float64, float16 and the integer and bool types as they are; bfloat16 and
float8 widened to float32 exactly (tensor_elements.py).
"""

import io
import math
import pickle
import pickletools
import types
import zipfile
from collections import OrderedDict
from dataclasses import dataclass
from typing import Dict, Mapping, Optional, Set, Tuple

import numpy as np

from .tensor_elements import ELEMENTS, Element

STATE_DICT = "a PyTorch state dict"

# What `torch.load` would give an argparse.Namespace (OpenNMT-py's `opt`)
# becomes this: attribute access alike, but an immutable C type.
Namespace = types.SimpleNamespace

# The first bytes of torch's legacy (pre-1.6, non-zip) format: its pickled
# magic number (torch/serialization.py MAGIC_NUMBER, protocol 2).
_LEGACY_MAGIC = b"\x80\x02\x8a\x0a\x6c\xfc\x9c\x46\xf9\x20\x6a\xa8\x50\x19"


class CheckpointError(Exception):
    """A file this module cannot read, or will not: a one-line reason."""


# torch's typed storage classes (torch.FloatStorage, ...) -> their element.
_STORAGE_CLASSES = {
    "FloatStorage": "float32", "DoubleStorage": "float64", "HalfStorage": "float16",
    "BFloat16Storage": "bfloat16", "LongStorage": "int64", "IntStorage": "int32",
    "ShortStorage": "int16", "CharStorage": "int8", "ByteStorage": "uint8",
    "BoolStorage": "bool"}


@dataclass(frozen=True, slots=True)
class _StorageClass:
    """Stands in for a storage class in the pickle; element None: untyped."""
    element: Optional[Element]


@dataclass(frozen=True, slots=True)
class _Dtype:
    """Stands in for a torch dtype (torch.float8_e4m3fn, ...) in the pickle."""
    element: Element


@dataclass(frozen=True, slots=True)
class _Storage:
    """One storage of the checkpoint: its record's bytes, typed or untyped."""
    key: str
    element: Optional[Element]
    data: bytes


class _Rebuilder:
    """A rebuild function the pickle may call: immutable (no __dict__), so
    the pickle cannot change it for later loads."""
    __slots__ = ("_build",)

    def __init__(self, build):
        object.__setattr__(self, "_build", build)

    def __setattr__(self, name, value):
        raise AttributeError(f"{name} is read-only")

    def __call__(self, *args):
        return self._build(*args)


def _is_count(value) -> bool:
    return isinstance(value, int) and not isinstance(value, bool) and value >= 0


def _tensor(storage, offset, size, stride, element: Element, byteorder: str) -> np.ndarray:
    """The numpy copy of one tensor view of `storage`, every index checked."""
    if not isinstance(storage, _Storage):
        raise CheckpointError("a tensor whose storage is not one of the checkpoint's")
    if not (_is_count(offset) and isinstance(size, tuple) and isinstance(stride, tuple)
            and len(size) == len(stride) and all(map(_is_count, size))
            and all(map(_is_count, stride))):
        raise CheckpointError(f"storage {storage.key}: a tensor view with a malformed offset, "
                              "size or stride")
    if len(storage.data) % element.itemsize:
        raise CheckpointError(f"storage {storage.key}: {len(storage.data)} bytes is not a "
                              f"whole number of {element.name} values")
    values = element.read(storage.data, byteorder)
    count = math.prod(size)
    if count:
        last = offset + sum((n - 1) * s for n, s in zip(size, stride))
        # More elements than the storage holds would be a view repeating
        # values (stride 0); refused so that a tiny file cannot ask for a
        # huge copy.
        if last >= values.size or count > values.size:
            raise CheckpointError(f"storage {storage.key}: a tensor of shape {list(size)} "
                                  f"(offset {offset}, strides {list(stride)}) reaches past its "
                                  f"{values.size} {element.name} values")
        view = np.lib.stride_tricks.as_strided(
            values[offset:], shape=size, strides=[s * values.itemsize for s in stride])
    else:
        view = values[:0].reshape(size)
    return element.to_numpy(view)


def _check_plain_tensor(requires_grad, metadata) -> None:
    if not isinstance(requires_grad, bool):
        raise CheckpointError("a tensor whose requires_grad is not a bool")
    if metadata:  # torch writes it only for views with extra flags (negated, conjugated)
        raise CheckpointError(f"a tensor with metadata {sorted(metadata)!r}, which edgemt does "
                              "not read")


class _Unpickler(pickle.Unpickler):
    """pickle's Unpickler that resolves only the allow-list, and storages
    from the archive."""

    def __init__(self, data: bytes, archive: "_Archive", allowed: Mapping, what: str):
        super().__init__(io.BytesIO(data), encoding="utf-8")  # torch.load's encoding
        self._archive = archive
        self._allowed = allowed
        self._what = what

    def find_class(self, module, name):
        module = {"__builtin__": "builtins"}.get(module, module)  # protocol 2 names
        found = self._allowed.get((module, name))
        if found is None:
            raise CheckpointError(f"the checkpoint holds a {module}.{name}, which {self._what} "
                                  "does not")
        return found

    def persistent_load(self, pid):
        if isinstance(pid, tuple) and pid and isinstance(pid[0], bytes):
            pid = (pid[0].decode("ascii", "replace"),) + pid[1:]
        if not (isinstance(pid, tuple) and len(pid) == 5 and isinstance(pid[0], str)
                and pid[0] == "storage" and isinstance(pid[1], _StorageClass)
                and isinstance(pid[2], str) and _is_count(pid[4])):
            raise CheckpointError(f"an unknown persistent id {str(pid)[:60]}")
        _, storage_class, key, _location, numel = pid
        return self._archive.storage(key, storage_class.element, numel)


class _Archive:
    """An open torch zip: its top folder, byte order and storages."""

    def __init__(self, zip_file: zipfile.ZipFile):
        self.zip = zip_file
        self.top = _top_folder(zip_file)
        self._records: Dict[str, bytes] = {}  # storage key -> its bytes, read once
        order = self.record("byteorder", required=False)
        if order is None or order == b"little":
            self.byteorder = "<"
        elif order == b"big":
            self.byteorder = ">"
        else:
            raise CheckpointError(f"its byteorder record says {order[:20]!r}")

    def record(self, name: str, required: bool = True) -> Optional[bytes]:
        full = f"{self.top}/{name}"
        try:
            return self.zip.read(full)
        except KeyError:
            if required:
                raise CheckpointError(f"the archive has no {full}") from None
            return None

    def storage(self, key: str, element: Optional[Element], numel: int) -> _Storage:
        """Storage `key` as the pickle describes it (tensors may share one)."""
        if key not in self._records:
            self._records[key] = self.record(f"data/{key}")
        data = self._records[key]
        expected = numel * (element.itemsize if element else 1)
        if len(data) != expected:
            raise CheckpointError(f"storage {key} holds {len(data)} bytes, the pickle "
                                  f"says {expected}")
        return _Storage(key, element, data)


def _top_folder(zip_file: zipfile.ZipFile) -> str:
    names = zip_file.namelist()
    tops = {name.split("/", 1)[0] for name in names}
    if any(name.endswith("/constants.pkl") for name in names):
        raise CheckpointError("a TorchScript archive (torch.jit.save), not a torch.save "
                              "checkpoint")
    if len(tops) != 1 or f"{next(iter(tops))}/data.pkl" not in names:
        raise CheckpointError("a zip archive, but not one torch.save wrote (no single "
                              "<folder>/data.pkl)")
    return tops.pop()


def _allow_list(archive: _Archive, extra: Mapping) -> Dict[Tuple[str, str], object]:
    """(module, name) -> what the pickle gets for it. Made anew for each
    load: whatever the pickle does to these objects ends with it."""
    order = archive.byteorder

    def rebuild_v2(storage, offset, size, stride, requires_grad, _hooks, metadata=None):
        _check_plain_tensor(requires_grad, metadata)
        if not isinstance(storage, _Storage) or storage.element is None:
            raise CheckpointError("_rebuild_tensor_v2 over an untyped storage")
        return _tensor(storage, offset, size, stride, storage.element, order)

    def rebuild_v3(storage, offset, size, stride, requires_grad, _hooks, dtype, metadata=None):
        _check_plain_tensor(requires_grad, metadata)
        if not isinstance(dtype, _Dtype):
            raise CheckpointError("_rebuild_tensor_v3 without a dtype")
        return _tensor(storage, offset, size, stride, dtype.element, order)

    def rebuild_parameter(data, requires_grad, _hooks):
        if not isinstance(data, np.ndarray) or not isinstance(requires_grad, bool):
            raise CheckpointError("a Parameter that does not hold a tensor")
        return data

    allowed = {
        ("collections", "OrderedDict"): OrderedDict,
        ("torch._utils", "_rebuild_tensor_v2"): _Rebuilder(rebuild_v2),
        ("torch._utils", "_rebuild_tensor_v3"): _Rebuilder(rebuild_v3),
        ("torch._utils", "_rebuild_parameter"): _Rebuilder(rebuild_parameter),
        ("torch", "Size"): tuple,
        ("torch.storage", "UntypedStorage"): _StorageClass(None),
        ("torch", "UntypedStorage"): _StorageClass(None),
    }
    for storage_class, element in _STORAGE_CLASSES.items():
        allowed[("torch", storage_class)] = _StorageClass(ELEMENTS[element])
    for name, element in ELEMENTS.items():
        allowed[("torch", name)] = _Dtype(element)
    allowed.update(extra)
    return allowed


# What OpenNMT-py's training options (`opt`) add to a state dict's pickle.
TRAINING_OPTIONS = {("argparse", "Namespace"): Namespace, ("builtins", "set"): set,
                    ("builtins", "frozenset"): frozenset}


def _open(path: str) -> zipfile.ZipFile:
    """The zip archive at `path`, or a CheckpointError saying what it is instead."""
    try:
        with open(path, "rb") as handle:
            head = handle.read(len(_LEGACY_MAGIC))
    except OSError as err:
        raise CheckpointError(err.strerror or str(err)) from None
    if not head:
        raise CheckpointError("the file is empty")
    if head == _LEGACY_MAGIC:
        raise CheckpointError("a checkpoint in torch's legacy format (PyTorch < 1.6, not a zip), "
                              "which edgemt does not read: load it in PyTorch >= 1.13 with "
                              "weights_only=True and torch.save it again")
    try:
        return zipfile.ZipFile(path)
    except Exception as err:  # noqa: BLE001 - zipfile fails in many ways on damaged files
        kind = "a damaged zip archive" if head.startswith(b"PK") else "not a zip archive"
        raise CheckpointError(f"not a PyTorch checkpoint ({kind}: {_first_line(err)})") from None


def _first_line(err: BaseException) -> str:
    lines = str(err).strip().splitlines()
    return lines[0] if lines else type(err).__name__


def load(path: str, what: str = STATE_DICT, extra: Mapping = None) -> object:
    """The object `torch.save` stored at `path`, tensors as numpy arrays.
    `what` names the expected content in the refusal of a class outside the
    allow-list; `extra` adds (module, name) -> object pairs to it (only
    immutable types and functions: see the module docstring).
    Raises CheckpointError (one line) for anything it cannot or will not read."""
    zip_file = _open(path)
    try:
        with zip_file:
            archive = _Archive(zip_file)
            data = archive.record("data.pkl")
            for _ in _opcodes(data):
                pass  # the whole stream is well-formed before anything is built from it
            unpickler = _Unpickler(data, archive, _allow_list(archive, extra or {}), what)
            return unpickler.load()
    except CheckpointError:
        raise
    except Exception as err:  # noqa: BLE001 - a malformed file fails in many ways
        raise CheckpointError(f"a damaged checkpoint ({_first_line(err)})") from None


def _opcodes(data: bytes):
    """pickletools' parse of a pickle: it checks every length against the
    bytes that remain (pickle's C unpickler first allocates what a length
    claims, and prints a stray line when that fails)."""
    try:
        yield from pickletools.genops(data)
    except Exception as err:  # noqa: BLE001 - ValueError and others on a damaged stream
        raise CheckpointError(f"a damaged checkpoint (its pickle: {_first_line(err)})") from None


def pickle_names(path: str) -> Optional[Set[str]]:
    """The strings and global names data.pkl mentions (dict keys, class
    names), read with pickletools without unpickling anything; None when
    `path` is not a torch zip. For telling checkpoint kinds apart."""
    try:
        with _open(path) as zip_file:
            data = _Archive(zip_file).record("data.pkl")
        names = set()
        for opcode, argument, _ in _opcodes(data):
            if isinstance(argument, str):
                names.update(argument.split(" ") if opcode.name == "GLOBAL" else (argument,))
        return names
    except Exception:  # noqa: BLE001 - whatever cannot be read is simply not a torch zip
        return None
