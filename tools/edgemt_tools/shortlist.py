"""Marian's lexical shortlists, read for one model (docs/marian-formats.md,
section 3), into a model_spec.Shortlist that edgemt-convert stores in the
model file.

Two forms, told apart by the first 8 bytes as Marian does:

  binary  marian-conv's `lex.*.bin` (BinaryShortlistGenerator): magic
          0xF11A48D5013417F5, checksum, firstNum, bestNum, S + 1 u64 offsets,
          L u32 target ids. Checked as Marian's loader checks it (exact size,
          checksum) and then so that the runtime can trust it: offsets from
          0 rising to L, target ids ascending per list and inside the target
          vocabulary, S the model's source vocabulary size. FIRST and BEST
          are the header's; numbers from the command line do not apply.
  text    `lex.s2t` (LexicalShortlistGenerator): whitespace-separated
          triples TARGET SOURCE PROB, pieces looked up by string in the
          model's vocabularies, pruned to FIRST/BEST/THRESHOLD exactly as
          Marian's translator prunes it (not as marian-conv's import, which
          differs on duplicates and the threshold).

The lists are stored ascending, one per source id (empty when the file has
none for it). add_source_ids is Marian's `shared`: both sides read one
vocabulary file; here, as the source declares it (ModelSpec.
shared_vocabulary: a Marian folder naming one file twice), else when both
sides have the same pieces.
"""

import re
import struct
from dataclasses import dataclass
from fractions import Fraction
from typing import List, Optional, Sequence, Tuple, Union

import numpy as np

from . import input_files, limits
from .errors import UserError
from .model_spec import ModelSpec, Shortlist
from .validate import lists_problem

MAGIC = 0xF11A48D5013417F5  # BINARY_SHORTLIST_MAGIC
_HEADER = struct.Struct("<6Q")  # magic, checksum, firstNum, bestNum, S + 1, L
# LexicalShortlistGenerator's defaults for `--shortlist FILE`.
DEFAULT_FIRST = 100
DEFAULT_BEST = 100
DEFAULT_THRESHOLD = 0.0
# What `std::istream >> float` reads (no nan, inf, hex or digit separators).
_NUMBER = re.compile(rb"[+-]?(?:[0-9]+\.?[0-9]*|\.[0-9]+)(?:[eE][+-]?[0-9]+)?")


@dataclass(frozen=True)
class Vocabularies:
    """The model's two vocabularies as a shortlist is read against them:
    pieces by id (fewer than the side's size when SentencePiece's own ids
    are the model's and the embedding has spare rows), sizes and unk ids."""
    source: Sequence[str]
    target: Sequence[str]
    source_size: int
    target_size: int
    source_unk: int
    target_unk: int
    # One vocabulary for both sides, as the source declares it (None: when
    # the pieces and sizes are the same).
    declared_shared: Optional[bool] = None

    @property
    def shared(self) -> bool:
        if self.declared_shared is not None:
            return self.declared_shared
        return self.source_size == self.target_size and list(self.source) == list(self.target)


def vocabularies(spec: ModelSpec) -> Vocabularies:
    """The vocabularies of a converted model (model_spec.ModelSpec): each
    side's piece list, or its SentencePiece model's pieces when it has none."""
    cfg = spec.config
    source_pieces = spec.source_pieces or _sentencepiece_pieces(spec.tokenizer_model)
    target = spec.target_tokenizer
    if target is None:  # one tokenizer and vocabulary for both sides
        target_pieces, target_unk = source_pieces, spec.source_unk_id
    else:
        target_pieces = target.pieces or _sentencepiece_pieces(target.spm)
        target_unk = target.unk_id

    def unk(side_unk: int) -> int:  # -1: special_tokens' (schema Tokenizer.unk_id)
        return side_unk if side_unk != -1 else spec.special_tokens.unk

    return Vocabularies(source_pieces, target_pieces, cfg.source_vocab_size or cfg.vocab_size,
                        cfg.vocab_size, unk(spec.source_unk_id), unk(target_unk),
                        spec.shared_vocabulary)


def _sentencepiece_pieces(model: bytes) -> Tuple[str, ...]:
    import sentencepiece as spm  # pylint: disable=import-outside-toplevel
    sp = spm.SentencePieceProcessor(model_proto=bytes(model))
    return tuple(sp.id_to_piece(i) for i in range(sp.get_piece_size()))


def read_shortlist(path: str, vocab: Vocabularies, first: Optional[int] = None,
                   best: Optional[int] = None, threshold: Union[str, float, None] = None
                   ) -> Tuple[Shortlist, List[str]]:
    """(the shortlist of `path` for a model of these vocabularies, notes).
    first/best/threshold apply to a text file (None: Marian's defaults); a
    binary file has its own (a note says so when some were given). FIRST
    and BEST beyond the target vocabulary count as all of it, as in Marian.
    The threshold is best given as written: it is rounded to float32 from
    its text, as Marian's std::stof does, and compared with the
    probabilities so rounded. UserError, naming the file, for anything
    Marian or the runtime would not accept."""
    data = input_files.read_bytes(path, "shortlist", limits.MAX_MODEL_BYTES)
    notes = []
    if len(data) >= 8 and struct.unpack_from("<Q", data)[0] == MAGIC:
        if (first, best, threshold) != (None, None, None):
            notes.append(f"{path} is a binary shortlist: its own FIRST and BEST apply, not "
                         "the numbers given")
        offsets, targets, first, best = _binary_lists(data, path, vocab, notes)
    else:
        first = DEFAULT_FIRST if first is None else first
        best = DEFAULT_BEST if best is None else best
        threshold = DEFAULT_THRESHOLD if threshold is None else threshold
        offsets, targets = _text_lists(data, path, vocab, best, threshold)
    return Shortlist(first=min(first, vocab.target_size), best=min(best, vocab.target_size),
                     add_source_ids=vocab.shared, offsets=offsets.astype(np.uint32),
                     targets=targets.astype(np.uint32)), notes


# --------------------------------------------------------------------------- binary

def marian_checksum(words: np.ndarray) -> int:
    """util::hashMem<uint64_t, uint64_t> (Marian's src/common/hash.h) of u64
    words: seed ^= hash(w) + 0x9e3779b9 + (seed << 6) + (seed >> 2), with
    std::hash<uint64_t> the identity (libstdc++, libc++). Sequential; about
    0.2 s for a 32k-vocabulary lex.50.50 file (830k words)."""
    seed, mask = 0, (1 << 64) - 1
    for word in words.tolist():
        seed ^= (word + 0x9E3779B9 + (seed << 6) + (seed >> 2)) & mask
    return seed


def _binary_lists(data: bytes, path: str, vocab: Vocabularies, notes: List[str]):
    """(offsets [S + 1], targets, firstNum, bestNum) of a binary file."""
    if len(data) < _HEADER.size:
        raise UserError(f"shortlist {path}: {len(data)} bytes, fewer than a binary "
                        f"shortlist's {_HEADER.size}-byte header (truncated)")
    _, checksum, first, best, offset_count, target_count = _HEADER.unpack_from(data)
    expected = _HEADER.size + 8 * offset_count + 4 * target_count
    if offset_count == 0 or expected != len(data):
        raise UserError(f"shortlist {path}: {len(data)} bytes, its header implies {expected} "
                        "(truncated or damaged)")
    # Marian hashes whole u64 words from firstNum on: an odd L leaves the
    # last target id out.
    if marian_checksum(np.frombuffer(data, "<u8", (len(data) - 16) // 8, 16)) != checksum:
        raise UserError(f"shortlist {path}: the checksum does not match (the file is damaged)")
    offsets = np.frombuffer(data, "<u8", offset_count, _HEADER.size)
    targets = np.frombuffer(data, "<u4", target_count, _HEADER.size + 8 * offset_count)
    sources = offset_count - 1
    if sources != vocab.source_size:
        if not 0 < sources < vocab.source_size or offsets[-2] == offsets[-1]:
            raise UserError(f"shortlist {path} has lists for {sources} source ids, the model's "
                            f"source vocabulary {vocab.source_size}: it was made for another "
                            "vocabulary")
        # browsermt's marian-conv of March to May 2021 stopped after the
        # last source id with a list; Marian reads the rest as no list.
        notes.append(f"shortlist {path} ends at source id {sources - 1} of "
                     f"{vocab.source_size}, as early marian-conv wrote them: the later ids "
                     "list nothing")
        offsets = np.concatenate([offsets, np.full(vocab.source_size - sources, offsets[-1])])
    if target_count >= 1 << 32:
        raise UserError(f"shortlist {path}: {target_count} target ids, more than 2^32 - 1")
    problem = lists_problem(offsets, targets, vocab.target_size)
    if problem:
        raise UserError(f"shortlist {path}: {problem}")
    return offsets, targets, first, best


# --------------------------------------------------------------------------- text

def _text_lists(data: bytes, path: str, vocab: Vocabularies, best: int,
                threshold: Union[str, float]):
    """(offsets [S + 1], targets) of a text file, as LexicalShortlistGenerator
    loads and prunes it."""
    try:
        data.decode("utf-8")
    except UnicodeDecodeError:
        raise UserError(f"shortlist {path} is neither a binary shortlist (magic "
                        f"{MAGIC:#x}) nor UTF-8 text") from None
    words = data.split()  # std::istream's whitespace: ASCII space, \t, \n, \v, \f, \r
    if not words:
        raise UserError(f"shortlist {path} holds no TARGET SOURCE PROB triples")
    if len(words) % 3:
        raise UserError(f"shortlist {path}: {len(words)} words, not TARGET SOURCE PROB "
                        "triples")
    prob_words = words[2::3]
    bad = _first_non_number(prob_words)
    if bad is not None:
        raise UserError(f"shortlist {path}, line {_line_of(data, 3 * bad + 2)}: "
                        f"{prob_words[bad].decode()!r} is not a probability")
    probs = _float32(prob_words)
    if not np.isfinite(probs).all():
        raise UserError(f"shortlist {path}: a probability is beyond the float range")
    source_ids = {piece.encode("utf-8"): i for i, piece in enumerate(vocab.source)}
    target_ids = {piece.encode("utf-8"): i for i, piece in enumerate(vocab.target)}
    count = len(probs)
    used = np.fromiter((s != b"NULL" and t != b"NULL" for t, s in zip(words[0::3], words[1::3])),
                       bool, count)
    src = np.fromiter((source_ids.get(w, vocab.source_unk) for w in words[1::3]), np.int64, count)
    trg = np.fromiter((target_ids.get(w, vocab.target_unk) for w in words[0::3]), np.int64, count)
    src, trg, probs = src[used], trg[used], probs[used]
    # A pair listed twice: the last line wins (data_[sId][tId] = prob).
    _, first_from_end = np.unique((src * vocab.target_size + trg)[::-1], return_index=True)
    last = src.size - 1 - first_from_end
    src, trg, probs = src[last], trg[last], probs[last]
    # Per source id, (prob, target id) descending; keep the first `best`
    # with prob > threshold (strictly; prob descends, so a prefix).
    order = np.lexsort((-trg, -probs, src))
    src, trg, probs = src[order], trg[order], probs[order]
    counts = np.bincount(src, minlength=vocab.source_size)
    rank = np.arange(src.size) - (np.cumsum(counts) - counts)[src]
    limit = [str(threshold).encode()]
    if _first_non_number(limit) is not None or not np.isfinite(_float32(limit)).all():
        raise UserError(f"shortlist THRESHOLD {threshold!r} is not a number")
    kept = (rank < best) & (probs > _float32(limit)[0])
    src, trg = src[kept], trg[kept]
    order = np.lexsort((trg, src))
    offsets = np.concatenate([[0], np.cumsum(np.bincount(src, minlength=vocab.source_size))])
    return offsets, trg[order]


def _first_non_number(texts: List[bytes]) -> Optional[int]:
    """The index of the first text `std::istream >> float` would not read
    whole, or None."""
    return next((i for i, text in enumerate(texts) if not _NUMBER.fullmatch(text)), None)


def _float32(texts: List[bytes]) -> np.ndarray:
    """Numbers (each _NUMBER) as `std::istream >> float` reads them: rounded
    once, from the decimal, to the nearest float32. Through float64 that is
    the same but where the float64 lands on the halfway point between two
    float32s (the decimal may lie on either side): those are rounded
    again, exactly. Too large: inf."""
    wide = np.array(texts, dtype=bytes).astype(np.float64) if texts else np.zeros(0)
    with np.errstate(over="ignore"):
        narrow = wide.astype(np.float32)
    neighbour = np.nextafter(narrow, np.where(wide > narrow, np.inf, -np.inf).astype(np.float32))
    halfway = np.flatnonzero(wide == (narrow.astype(np.float64) + neighbour) / 2)
    for i in halfway:
        exact = Fraction(texts[i].decode())
        narrow[i] = min((narrow[i], neighbour[i]), key=lambda f: (
            abs(Fraction(float(f)) - exact), int(f.view(np.uint32)) & 1))  # ties to even
    return narrow


def _line_of(data: bytes, word_index: int) -> int:
    """The 1-based line of the word_index-th whitespace-separated word."""
    seen = 0
    for number, line in enumerate(data.split(b"\n"), 1):
        seen += len(line.split())
        if seen > word_index:
            return number
    return number
