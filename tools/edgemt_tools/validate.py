"""Everything the writer checks before a model file is written.

`model_file.write_model` calls `validate_model` before it opens the output,
for every checkpoint source, so the converter never writes a file the
runtime's verifier (runtime/format/model_verifier.h) would refuse, and never
a file whose weights cannot be computed with. Each problem is a UserError of
one line naming the key or tensor and the bad value:

  header   the config by its family's check (families/<family>.py: its
           values inside the runtime's limits, limits.py's and the
           family's own), special token ids inside the vocabulary,
           languages without NUL, the tokenizer a SentencePiece model
           SentencePiece loads, with at most vocab_size pieces, each
           non-empty, NUL-free, with a finite score, exactly one <unk>;
           a lexical shortlist's lists inside the vocabularies, ascending;
  tensors  exactly the names `model_spec.expected_tensors` implies, with its
           shapes and dtypes (matrices in the weight dtype, vectors float32)
           and its aliases; at most MAX_TENSORS entries and MAX_MODEL_BYTES;
  values   every float32/float16 value finite, int8 codes in [-127, 127],
           int8 row scales >= 0 (vectorized: a 30 MB model in well under a
           second).

`model_file.ModelFile.check_against_config` runs the same tensor checks on a
file that was read, so writer and reader agree.
"""

import math
from typing import Mapping, Optional

import numpy as np

from . import families, limits
from .errors import UserError
from .families.checks import check_int, check_positive_float
from .model_spec import (INT8_QUANTIZATIONS, MATRIX, QUANTIZATION_INT8, QUANTIZATION_INT8_SMOOTHED,
                         RESIDUAL, SCALE_SUFFIX, SEARCH_RULES, SMOOTH_SUFFIX, WEIGHT_DTYPES, Decoding,
                         ModelHeader, Shortlist, expected_tensors, matrix_dtype, resolve_alias)

_MATRIX_DTYPES = {"fp32": np.dtype(np.float32), "fp16": np.dtype(np.float16),
                  "int8": np.dtype(np.int8)}


def validate_config(cfg) -> None:
    """The architecture's values, by its family's check (families/<family>.py)
    against the runtime's limits; its UserError names the key, after
    "config "."""
    try:
        family = families.of(cfg)
    except TypeError:
        raise UserError(f"internal: {type(cfg).__name__} is not a family config") from None
    try:
        family.check(cfg)
    except UserError as err:
        raise UserError(f"config {err}") from None


def validate_tokenizer(model: bytes, vocab_size: int, pieces=None, side: str = "") -> None:
    """One side's SentencePiece model: loadable, and what the runtime's
    verifier asks; with a piece vocabulary, that it has `vocab_size` pieces,
    none empty or holding a NUL (SentencePiece's own ids then index
    nothing, so its piece count is not bounded)."""
    if pieces is not None:
        if len(pieces) != vocab_size:
            raise UserError(f"the {side}vocabulary has {len(pieces)} pieces, the model "
                            f"{vocab_size} {side}ids")
        for i, piece in enumerate(pieces):
            if not piece or "\0" in piece:
                raise UserError(f"{side}vocabulary piece {i} ({piece!r}) is empty or holds a NUL")
        vocab_size = limits.MAX_VOCAB_SIZE
    import sentencepiece as spm
    if not model:
        raise UserError("the SentencePiece model is empty")
    if len(model) > limits.MAX_TOKENIZER_BYTES:
        raise UserError(f"the SentencePiece model has {len(model)} bytes, more than the limit "
                        f"of {limits.MAX_TOKENIZER_BYTES}")
    try:
        sp = spm.SentencePieceProcessor(model_proto=bytes(model))
    except Exception as err:  # noqa: BLE001 - sentencepiece raises RuntimeError/OSError
        raise UserError(f"cannot load the SentencePiece model: {first_line(err)}") from None
    pieces = sp.get_piece_size()
    if pieces > vocab_size:
        raise UserError(f"the SentencePiece model has {pieces} pieces, more than the "
                        f"vocabulary's {vocab_size}")
    unknown = 0
    for i in range(pieces):
        piece = sp.id_to_piece(i)
        if not piece or "\0" in piece:
            raise UserError(f"SentencePiece piece {i} ({piece!r}) is empty or holds a NUL")
        if not math.isfinite(sp.get_score(i)):
            raise UserError(f"SentencePiece piece {i} ({piece!r}) has a non-finite score")
        unknown += 1 if sp.is_unknown(i) else 0
    if unknown != 1:
        raise UserError(f"the SentencePiece model has {unknown} <unk> pieces; exactly one is needed")


def validate_header(header: ModelHeader) -> None:
    validate_config(header.config)
    if header.weight_dtype not in WEIGHT_DTYPES:
        raise UserError(f"weight dtype {header.weight_dtype!r} is not one of {WEIGHT_DTYPES}")
    vocab = header.config.vocab_size
    for name in ("pad", "unk", "bos", "eos", "decoder_start"):
        check_int(f"special token {name}", getattr(header.special_tokens, name), 0, vocab - 1)
    for key, text in (("source_language", header.source_language),
                      ("target_language", header.target_language)):
        if not text or "\0" in text:
            raise UserError(f"{key} {text!r} must be non-empty and hold no NUL")
    source_vocab = header.config.source_vocab_size or vocab
    if header.target_tokenizer is None and source_vocab != vocab:
        raise UserError(f"the source vocabulary ({source_vocab} ids) differs from the target's "
                        f"({vocab}) but the model has one tokenizer")
    validate_tokenizer(header.tokenizer_model, source_vocab, header.source_pieces, "source ")
    for name, value, side_vocab in (("source unk", header.source_unk_id, source_vocab),
                                    ("source eos", header.source_eos_id, source_vocab)):
        if value != -1:
            check_int(name, value, 0, side_vocab - 1)
    target = header.target_tokenizer
    if target is not None:
        validate_tokenizer(target.spm, vocab, target.pieces, "target ")
        for name, value in (("target unk", target.unk_id), ("target eos", target.eos_id)):
            if value != -1:
                check_int(name, value, 0, vocab - 1)
    if header.decoding is not None:
        validate_decoding(header.decoding, vocab)
    if header.shortlist is not None:
        validate_shortlist(header.shortlist, source_vocab, vocab)


def validate_decoding(decoding: Decoding, vocab: int) -> None:
    """The decoding defaults, as the runtime's verifier checks them."""
    if decoding.rules not in SEARCH_RULES:
        raise UserError(f"decoding rules {decoding.rules!r} are not one of {SEARCH_RULES}")
    check_int("decoding beam_size", decoding.beam_size, 1, limits.MAX_BEAM)
    for key in ("length_penalty", "word_penalty", "max_len_a", "max_len_b"):
        value = getattr(decoding, key)
        if not math.isfinite(value):
            raise UserError(f"decoding {key} = {value} is not finite")
    if decoding.max_len_a < 0:
        raise UserError(f"decoding max_len_a = {decoding.max_len_a} must be >= 0")
    for token in decoding.banned_tokens:
        check_int("decoding banned token", token, 0, vocab - 1)


def validate_shortlist(shortlist: Shortlist, source_vocab: int, vocab: int) -> None:
    """The lexical shortlist, as the runtime's verifier checks it (so that
    a batch's candidates need no checks), and no list longer than `best`."""
    if shortlist.first > vocab:
        raise UserError(f"the shortlist's first {shortlist.first} ids exceed the {vocab}-piece "
                        "target vocabulary")
    sources = len(shortlist.offsets) - 1
    if not 0 <= sources <= source_vocab:
        raise UserError(f"the shortlist has lists for {sources} source ids, the source "
                        f"vocabulary {source_vocab}")
    problem = lists_problem(shortlist.offsets, shortlist.targets, vocab)
    if problem:
        raise UserError(f"the shortlist: {problem}")
    longest = int(np.diff(np.asarray(shortlist.offsets, np.int64)).max(initial=0))
    if longest > shortlist.best:
        raise UserError(f"the shortlist lists {longest} target ids for a source id, more than "
                        f"its best {shortlist.best}")


def lists_problem(offsets: np.ndarray, targets: np.ndarray, vocab: int) -> Optional[str]:
    """What is wrong with per-source lists in the Shortlist layout, or None:
    offsets from 0 rising to len(targets); in each list strictly ascending
    ids below `vocab` (also the binary shortlist reader's check)."""
    offsets = np.asarray(offsets, np.int64)
    targets = np.asarray(targets, np.int64)
    if offsets.size == 0 or offsets[0] != 0 or offsets[-1] != targets.size:
        return f"the offsets do not run from 0 to the {targets.size} target ids"
    falling = np.flatnonzero(np.diff(offsets) < 0)
    if falling.size:
        return f"the offsets fall at source id {falling[0]}"
    outside = np.flatnonzero(targets >= vocab)
    if outside.size:
        return f"target id {targets[outside[0]]} is outside the {vocab}-piece target vocabulary"
    same_list = np.ones(max(targets.size - 1, 0), bool)  # (i, i + 1) in one list
    starts = offsets[1:-1]
    same_list[starts[(starts > 0) & (starts < targets.size)] - 1] = False
    unsorted = np.flatnonzero(same_list & (np.diff(targets) <= 0))
    if unsorted.size:
        source = int(np.searchsorted(offsets, unsorted[0], side="right")) - 1
        return f"the list of source id {source} is not strictly ascending"
    return None


def _where(array: np.ndarray, flat_index: int) -> str:
    return str(list(int(i) for i in np.unravel_index(flat_index, array.shape)))


def validate_values(name: str, array: np.ndarray, kind: str = MATRIX) -> None:
    """Finite floats; int8 codes in [-127, 127]; int8 row scales >= 0;
    residual codes (kind RESIDUAL) two to a byte, each in [-7, 7]."""
    if array.dtype.kind == "f":
        bad = np.flatnonzero(~np.isfinite(array))
        if bad.size:
            first = array.reshape(-1)[bad[0]]
            raise UserError(f"tensor {name}: {bad.size} non-finite value(s) (first {first} at "
                            f"{_where(array, int(bad[0]))}): weights must be finite")
        if name.endswith(SCALE_SUFFIX):
            negative = np.flatnonzero(array < 0)
            if negative.size:
                raise UserError(f"tensor {name}: int8 row scale {array.reshape(-1)[negative[0]]} "
                                f"at {_where(array, int(negative[0]))} is negative")
        if name.endswith(SMOOTH_SUFFIX):
            bad = np.flatnonzero(~(array > 0))
            if bad.size:
                raise UserError(f"tensor {name}: smoothing value {array.reshape(-1)[bad[0]]} "
                                f"at {_where(array, int(bad[0]))} is not > 0")
    elif array.dtype == np.int8 and kind == RESIDUAL:
        nibbles = array.view(np.uint8)
        bad = np.flatnonzero(((nibbles & 0x0F) == 8) | ((nibbles >> 4) == 8))
        if bad.size:
            raise UserError(f"tensor {name}: residual code -8 at {_where(array, int(bad[0]))} "
                            "(residual codes are in [-7, 7])")
    elif array.dtype == np.int8:
        low = np.flatnonzero(array == -128)
        if low.size:
            raise UserError(f"tensor {name}: int8 code -128 at {_where(array, int(low[0]))} "
                            "(Int8PerRowDynamic codes are in [-127, 127])")


def validate_tensors(header: ModelHeader, tensors: Mapping[str, np.ndarray],
                     aliases: Optional[Mapping[str, str]] = None) -> None:
    """The tensor table against the config: names, shapes, dtypes, aliases, values."""
    aliases = dict(aliases or {})
    if header.weight_dtype == "int8" and header.quantization not in (None,) + INT8_QUANTIZATIONS:
        raise UserError(f"quantization {header.quantization!r} is not an int8 scheme "
                        f"({', '.join(INT8_QUANTIZATIONS)})")
    if header.quantization == QUANTIZATION_INT8_SMOOTHED and \
            not families.of(header.config).tensors.smoothable:
        smoothable = families.titles(lambda family: family.tensors.smoothable)
        raise UserError(f"{QUANTIZATION_INT8_SMOOTHED} is defined for the {smoothable} family only")
    for flag, dtype in (("f32_tables", "fp32"), ("f16_tables", "fp16")):
        if getattr(header, flag) and (header.weight_dtype != "int8" or header.quantization not in (
                None, QUANTIZATION_INT8, QUANTIZATION_INT8_SMOOTHED)):
            raise UserError(f"{flag} is for per-row int8 files only")
        if getattr(header, flag) and not families.of(header.config).tensors.smoothable:
            transformer = families.titles(lambda family: family.tensors.smoothable)
            raise UserError(f"{dtype} embedding tables in an int8 file are defined for the "
                            f"{transformer} family only")
    if header.f32_tables and header.f16_tables:
        raise UserError("f32_tables and f16_tables are both set (a file has one table dtype)")
    if header.residual_tables and (header.weight_dtype != "int8" or header.quantization not in (
            None, QUANTIZATION_INT8, QUANTIZATION_INT8_SMOOTHED)):
        raise UserError("residual_tables is for per-row int8 files only")
    if header.residual_tables and (header.f32_tables or header.f16_tables):
        raise UserError("residual_tables is for int8 tables, not with f32_tables or f16_tables")
    if header.residual_tables and not families.of(header.config).tensors.smoothable:
        transformer = families.titles(lambda family: family.tensors.smoothable)
        raise UserError("residual codes for int8 embedding tables are defined for the "
                        f"{transformer} family only")
    specs = expected_tensors(header.config, header.weight_dtype, header.quantization,
                             header.f32_tables, header.f16_tables, header.residual_tables)
    if header.f16_tables and any(spec.projection and spec.alias_of is not None
                                 for spec in specs.values()):
        raise UserError("f16_tables needs an untied output projection (an int8 file computes "
                        "no fp16 product)")
    present = set(tensors) | set(aliases)
    missing = [name for name in specs if name not in present]
    extra = sorted(present - set(specs))
    if missing:
        raise UserError(f"tensor {missing[0]} is missing (the config implies it)"
                        + (f"; {len(missing) - 1} more missing" if len(missing) > 1 else ""))
    if extra:
        raise UserError(f"tensor {extra[0]} is not implied by the config"
                        + (f"; {len(extra) - 1} more" if len(extra) > 1 else ""))
    if len(specs) > limits.MAX_TENSORS:
        raise UserError(f"{len(specs)} tensors, more than the limit of {limits.MAX_TENSORS}")
    for name, spec in specs.items():
        if spec.alias_of is not None:
            owner = resolve_alias(specs, name)
            got = aliases.get(name)
            if got is None or _resolve(aliases, got) != owner:
                raise UserError(f"tensor {name} must share its bytes with {owner} (the config "
                                "ties them)")
            continue
        if name in aliases:
            raise UserError(f"tensor {name} is stored as an alias of {aliases[name]}, but the "
                            "config gives it its own bytes")
        array = np.asarray(tensors[name])
        if tuple(array.shape) != spec.shape:
            raise UserError(f"tensor {name} has shape {list(array.shape)}, the config implies "
                            f"{list(spec.shape)}")
        want = (_MATRIX_DTYPES[matrix_dtype(spec, header.weight_dtype, header.quantization,
                                            header.f32_tables, header.f16_tables)]
                if spec.kind == MATRIX else np.dtype(np.int8) if spec.kind == RESIDUAL
                else np.dtype(np.float32))
        if array.dtype != want:
            raise UserError(f"tensor {name} has dtype {array.dtype}, expected {want}")
        validate_values(name, array, spec.kind)
    total = sum((np.asarray(a).nbytes + 63) // 64 * 64 for a in tensors.values())
    if total > limits.MAX_MODEL_BYTES:
        raise UserError(f"the weights take {total} bytes, more than the limit of "
                        f"{limits.MAX_MODEL_BYTES}")


def _resolve(aliases: Mapping[str, str], name: str) -> str:
    seen = set()
    while name in aliases and name not in seen:
        seen.add(name)
        name = aliases[name]
    return name


def validate_model(header: ModelHeader, tensors: Mapping[str, np.ndarray],
                   aliases: Optional[Mapping[str, str]] = None) -> None:
    validate_header(header)
    validate_tensors(header, tensors, aliases)


def first_line(err: BaseException) -> str:
    """The first line of an exception's message, or its type when it has none
    (an EOFError from an empty file has no message)."""
    lines = str(err).strip().splitlines()
    return lines[0] if lines else type(err).__name__
