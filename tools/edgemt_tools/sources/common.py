"""What the framework sources (opennmt, marian, hf_marian, torch_rnn) share:
reading SentencePiece models, provenance, and assembling a model's weights,
of any family, from per-layer pieces under edgemt's canonical names
(schema/TENSORS.md).

Each source maps its own names onto these layer dictionaries; the checks
here (every expected tensor present with its shape, all values finite) then
name the source's own key in their messages.
"""

import hashlib
import json
import os
from collections import OrderedDict
from typing import Dict, List, Mapping, Optional, Sequence, Tuple

import numpy as np

from .. import input_files, limits
from ..errors import UserError
from ..model_spec import expected_tensors
from ..validate import first_line, validate_config
from .duplicate_keys import json_object


def sha256_file(path: str) -> str:
    """Hex digest of a file, or of a folder's files in name order."""
    digest = hashlib.sha256()
    paths = ([os.path.join(path, name) for name in sorted(os.listdir(path))]
             if os.path.isdir(path) else [path])
    for item in paths:
        if not os.path.isfile(item):
            continue
        with open(item, "rb") as handle:
            for block in iter(lambda: handle.read(1 << 20), b""):
                digest.update(block)
    return digest.hexdigest()


def _refuse_constant(name: str):
    raise ValueError(f"{name} is not a valid JSON number")


def read_json_object(path: str, what: str = "config") -> dict:
    """A JSON file holding one object (a checkpoint's config.json); NaN and
    Infinity are refused (Python's json accepts them, JSON does not), and so
    is a key given twice. Raises UserError naming the file."""
    if not input_files.regular_file(path, f"{what} file"):
        raise UserError(f"{what} file not found: {path}")
    try:
        with open(path, "r", encoding="utf-8") as handle:
            value = json.load(handle, parse_constant=_refuse_constant,
                              object_pairs_hook=json_object)
    except FileNotFoundError:
        raise UserError(f"{what} file not found: {path}") from None
    except (OSError, ValueError) as err:
        raise UserError(f"cannot read {what} {path}: {first_line(err)}") from None
    if not isinstance(value, dict):
        raise UserError(f"{what} {path}: expected a JSON object")
    return value


def check_key_types(config: Mapping, kinds: Mapping[str, type]) -> None:
    """Every key of `kinds` present in `config` with that Python type (a bool
    is not an int); UserError "missing key 'k'" / "'k' has the wrong type"."""
    for key, kind in kinds.items():
        if key not in config:
            raise UserError(f"missing key '{key}'")
        value = config[key]
        if isinstance(value, bool) and kind is not bool or not isinstance(value, kind):
            raise UserError(f"'{key}' has the wrong type ({value!r})")


def read_sentencepiece(path: str, what: str) -> bytes:
    """The bytes of a SentencePiece model that loads; UserError otherwise."""
    import sentencepiece as spm
    if not input_files.regular_file(path, f"{what} SentencePiece model"):
        raise UserError(f"{what} SentencePiece model not found: {path}")
    input_files.refuse_empty(path, f"the {what} SentencePiece model")
    proto = input_files.read_bytes(path, f"the {what} SentencePiece model",
                                   limits.MAX_TOKENIZER_BYTES)
    try:
        spm.SentencePieceProcessor(model_proto=proto)
    except Exception as err:  # noqa: BLE001 - sentencepiece raises RuntimeError/OSError
        raise UserError(f"cannot load the {what} SentencePiece model {path}: "
                        f"{first_line(err)}") from None
    return proto


def pieces_by_id(vocab: Mapping[str, int], size: int, where: str) -> Tuple[str, ...]:
    """A piece -> id mapping as the id -> piece list of the model's `size`
    ids (its embedding rows). Every id must have exactly one piece: an id
    outside [0, size), two pieces on one id, or an id without a piece (a
    short vocabulary, or one of another model, whose rows would translate
    into placeholders) is refused, naming it."""
    pieces = [None] * size
    for piece, index in vocab.items():
        if not isinstance(index, int) or isinstance(index, bool) or not 0 <= index < size:
            raise UserError(f"{where}: piece {piece!r} has id {index!r}, outside the model's "
                            f"{size} ids")
        if pieces[index] is not None:
            raise UserError(f"{where}: pieces {pieces[index]!r} and {piece!r} share id {index}")
        if not piece or "\0" in piece:
            raise UserError(f"{where}: piece {piece!r} (id {index}) is empty or holds a NUL")
        pieces[index] = piece
    empty = [i for i, piece in enumerate(pieces) if piece is None]
    if empty:
        raise UserError(f"{where}: {len(vocab)} pieces for the model's {size} embedding rows: "
                        f"{len(empty)} id(s) have no piece (first id {empty[0]})")
    return tuple(pieces)


def missing_pieces(vocab: Mapping[str, int], spm_proto: bytes) -> List[str]:
    """The pieces SentencePiece can cut text into that `vocab` lacks, in id
    order. Control pieces (<s>, </s>), <unk> and unused pieces are never
    output by encoding, so they need no entry."""
    import sentencepiece as spm
    sp = spm.SentencePieceProcessor(model_proto=spm_proto)
    return [sp.id_to_piece(i) for i in range(sp.get_piece_size())
            if not (sp.is_control(i) or sp.is_unknown(i) or sp.is_unused(i))
            and sp.id_to_piece(i) not in vocab]


def check_covers_sentencepiece(vocab: Mapping[str, int], spm_proto: bytes, where: str,
                               spm_where: str, allow_missing: bool) -> Optional[str]:
    """Every piece the SentencePiece model cuts text into has an id in
    `vocab`. A piece without one would read as <unk>: a vocabulary that
    does not belong to the model translates into junk. Refused naming the
    first missing piece and how many are missing, unless `allow_missing`
    (--allow-missing-pieces), which returns that as a note instead."""
    missing = missing_pieces(vocab, spm_proto)
    if not missing:
        return None
    what = (f"{len(missing)} piece(s) of the SentencePiece model {spm_where} are not in "
            f"{where} (first {missing[0]!r})")
    if allow_missing:
        return f"{what}: they read as <unk>, as Marian and transformers read them"
    raise UserError(f"{what}; if this vocabulary is the model's own, --allow-missing-pieces "
                    "converts it with them read as <unk>")


def check_finite(name: str, array: np.ndarray) -> None:
    if not np.isfinite(array).all():
        raise UserError(f"tensor {name} contains non-finite values (nan or inf)")


class WeightAssembler:
    """Collects float32 weights under edgemt names, each with the source key
    it came from, and checks shapes against what the config (of any
    family) implies."""

    def __init__(self, cfg):
        # The config first, against the runtime's limits: a checkpoint's
        # claim of a billion layers is refused, not enumerated.
        validate_config(cfg)
        self.cfg = cfg
        self.specs = expected_tensors(cfg, "fp32")
        self.weights: Dict[str, np.ndarray] = {}
        self.origin: Dict[str, str] = {}

    def put(self, name: str, array: np.ndarray, source_key: str) -> None:
        spec = self.specs.get(name)
        if spec is None:
            raise UserError(f"internal: {name} is not a tensor of this config")
        array = np.asarray(array, dtype=np.float32)
        if tuple(array.shape) != tuple(spec.shape):
            raise UserError(f"shape mismatch: {source_key} gives {list(array.shape)}, the "
                            f"config implies {list(spec.shape)} for it")
        check_finite(source_key, array)
        self.weights[name] = np.ascontiguousarray(array)
        self.origin[name] = source_key

    def result(self) -> "OrderedDict[str, np.ndarray]":
        """Every stored tensor in file order; UserError naming the first missing one."""
        out: "OrderedDict[str, np.ndarray]" = OrderedDict()
        for name, spec in self.specs.items():
            if spec.alias_of is not None:
                continue
            if name not in self.weights:
                raise UserError(f"internal: no weight for {name}")
            out[name] = self.weights[name]
        return out


class TensorSource:
    """A checkpoint's tensors by their own names: `take` returns one as
    float32 (refusing a missing one by name), `unused` lists what was not
    taken, so that a tensor the source does not understand is refused too."""

    def __init__(self, tensors: Mapping[str, np.ndarray], where: str,
                 ignored: Sequence[str] = ()):
        self.tensors = tensors
        self.where = where
        self.taken = set(ignored)

    def has(self, key: str) -> bool:
        return key in self.tensors

    def take(self, key: str, shape: Optional[Tuple[int, ...]] = None) -> np.ndarray:
        if key not in self.tensors:
            raise UserError(f"{self.where}: missing tensor {key}")
        self.taken.add(key)
        array = np.asarray(self.tensors[key])
        if not np.issubdtype(array.dtype, np.floating):
            raise UserError(f"{self.where}: tensor {key} has non-float dtype {array.dtype}")
        array = array.astype(np.float32)
        if shape is not None and tuple(array.shape) != tuple(shape):
            raise UserError(f"shape mismatch: {key} is {list(array.shape)}, the config implies "
                            f"{list(shape)}")
        check_finite(key, array)
        return array

    def unused(self):
        return sorted(set(self.tensors) - self.taken)

    def refuse_unused(self) -> None:
        left = self.unused()
        if left:
            raise UserError(f"{self.where}: {len(left)} tensor(s) this converter does not "
                            f"understand: {', '.join(left[:5])}" + (" ..." if len(left) > 5 else ""))
