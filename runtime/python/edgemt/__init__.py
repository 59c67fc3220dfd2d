"""edgemt: on-device machine translation, from Python.

A thin layer (ctypes) over the C API of the shared library libedgemt.so
(runtime/include/edgemt/edgemt.h), at the level of `edgemt translate`:
sentence splitting, per-text errors, pieces, attention and alignments.

    import edgemt
    model = edgemt.Model("models/multi30k-en-de.int8.emt")
    translator = edgemt.Translator(model, threads=2)
    texts = ["Two dogs play. A cat sleeps.", "A man is riding a bike."]
    for t in translator.translate(texts, beam_size=4):
        if t.ok:                            # one Translation per text
            print(t.text, t.score, t.pieces)
        else:                               # this text failed, the others not
            print("failed:", t.error)
    with open("big.en", encoding="utf-8", errors="surrogateescape") as f:
        for t in translator.translate_iter(line.rstrip("\\n") for line in f):
            print(t.text)

What you get: Translator.translate(texts) returns one Translation per text,
in order. A text of several sentences is split (split_sentences=True, as
the CLI), its sentences translated and joined (Translation.sentences holds
each). A text that cannot be translated (a sentence longer than the
translator's max_source_len, a str with a lone surrogate, scores that
overflowed) does not fail the call: its Translation.error holds the reason
`edgemt translate` prints for such a line (Translation.ok is False, .text
""), and the other texts are translated; errors="raise" raises edgemt.Error
instead. Translation.tokens and .pieces are the target ids and their pieces
("▁Hund"), .source_tokens and .source_pieces what the model read.
Translator(model, attention=True) adds attention weights to each
translation (target steps x source ids; per sentence in .sentences) and
allows align=True (word links, as `edgemt translate --align`).
Translator.translate_iter(texts) is the same as a stream, for inputs too
large for memory. Translator.translate_ids works on token ids.

The library is found through $EDGEMT_LIBRARY (a path to libedgemt.so), then
inside the package (pip install), beside an installed package
(<prefix>/lib[/<multiarch>]), in the checkout's build/ folder, then the
system's library path. Errors raise edgemt.Error (its .code names the C API's code).
Translations equal `edgemt translate`'s for the same options.

Threads: every object may be used from any number of threads. A Translator
runs one call at a time (the others wait for it; for parallel translation
make one Translator per thread, sharing the Model). close() waits for the
call in flight, and a call after close() raises edgemt.Error.

Arguments are checked before they reach the C library: a number outside its
C type or its meaning (an id outside the vocabulary, a count of 0, 2**40 for
a layer), a bool or float where an int belongs, or a non-finite float raise
ValueError or TypeError, which are also edgemt.Error (code
"invalid-argument"); nothing is silently wrapped or truncated.
"""

import ctypes
import ctypes.util
import math
import os
from dataclasses import dataclass, field
from typing import Iterable, Iterator, List, NamedTuple, Optional, Sequence, Tuple

from . import _arguments as check
from ._errors import (FAILED_PRECONDITION, INVALID_ARGUMENT, OUT_OF_RANGE, UNSUPPORTED,
                      ArgumentTypeError, ArgumentValueError, Error)
from ._handles import ExclusiveHandle, SharedHandle

__all__ = ["Error", "Model", "Translator", "Translation", "version", "library_path",
           "split_sentences"]
Error.__module__ = __name__  # tracebacks say edgemt.Error, where callers find it

# ---- The C API's types (edgemt/edgemt.h) ------------------------------------

class _Error(ctypes.Structure):
    _fields_ = [("code", ctypes.c_int), ("message", ctypes.c_char * 256)]


class _ModelInfo(ctypes.Structure):
    _fields_ = [("format_version", ctypes.c_uint32), ("family", ctypes.c_char_p),
                ("source_language", ctypes.c_char_p), ("target_language", ctypes.c_char_p),
                ("weight_dtype", ctypes.c_char_p), ("source_vocab_size", ctypes.c_uint32),
                ("target_vocab_size", ctypes.c_uint32), ("max_sequence_length", ctypes.c_uint32),
                ("source_eos_id", ctypes.c_int32), ("append_eos_to_source", ctypes.c_int),
                ("has_tokenizer", ctypes.c_int)]


class _TranslatorOptions(ctypes.Structure):
    _fields_ = [("threads", ctypes.c_size_t), ("min_parallel_nanoseconds", ctypes.c_size_t)]


class _Limits(ctypes.Structure):
    _fields_ = [("max_batch", ctypes.c_size_t), ("max_source_len", ctypes.c_size_t),
                ("max_beam", ctypes.c_size_t), ("max_target_len", ctypes.c_size_t),
                ("attention", ctypes.c_int), ("attention_layer", ctypes.c_int),
                ("attention_head", ctypes.c_int)]


class _DecodeOptions(ctypes.Structure):
    _fields_ = [("beam_size", ctypes.c_size_t), ("length_penalty", ctypes.c_float),
                ("max_len_a", ctypes.c_float), ("max_len_b", ctypes.c_float),
                ("word_penalty", ctypes.c_float)]


class _Tokens(ctypes.Structure):
    _fields_ = [("ids", ctypes.POINTER(ctypes.c_int32)), ("length", ctypes.c_size_t)]


class _Result(ctypes.Structure):
    _fields_ = [("tokens", ctypes.POINTER(ctypes.c_int32)), ("capacity", ctypes.c_size_t),
                ("length", ctypes.c_size_t), ("score", ctypes.c_float), ("code", ctypes.c_int),
                ("error", ctypes.c_char_p), ("attention", ctypes.POINTER(ctypes.c_float)),
                ("attention_capacity", ctypes.c_size_t), ("attention_rows", ctypes.c_size_t),
                ("attention_columns", ctypes.c_size_t)]


class _Text(ctypes.Structure):
    _fields_ = [("data", ctypes.c_char_p), ("length", ctypes.c_size_t)]


class _TextResult(ctypes.Structure):
    _fields_ = [("text", ctypes.POINTER(ctypes.c_char)), ("text_capacity", ctypes.c_size_t),
                ("text_length", ctypes.c_size_t), ("tokens", ctypes.POINTER(ctypes.c_int32)),
                ("token_capacity", ctypes.c_size_t), ("token_length", ctypes.c_size_t),
                ("score", ctypes.c_float), ("code", ctypes.c_int), ("error", ctypes.c_char_p)]


class _Span(ctypes.Structure):
    _fields_ = [("begin", ctypes.c_size_t), ("end", ctypes.c_size_t)]


class _WordPair(ctypes.Structure):
    _fields_ = [("source_word", ctypes.c_size_t), ("target_word", ctypes.c_size_t)]


class _DocumentOptions(ctypes.Structure):
    _fields_ = [("split_sentences", ctypes.c_int), ("language", ctypes.c_char_p),
                ("target_prefix", ctypes.c_char_p), ("align", ctypes.c_int)]


class _DocumentResult(ctypes.Structure):
    _fields_ = [("translation", _TextResult), ("sentence_count", ctypes.c_size_t),
                ("alignment", ctypes.POINTER(_WordPair)), ("alignment_capacity", ctypes.c_size_t),
                ("alignment_length", ctypes.c_size_t)]


class _DocumentSentence(ctypes.Structure):
    _fields_ = [("line", ctypes.c_size_t), ("index", ctypes.c_size_t), ("span", _Span),
                ("source", ctypes.POINTER(ctypes.c_int32)), ("source_length", ctypes.c_size_t),
                ("tokens", ctypes.POINTER(ctypes.c_int32)), ("token_length", ctypes.c_size_t),
                ("score", ctypes.c_float), ("translation", ctypes.POINTER(ctypes.c_char)),
                ("translation_length", ctypes.c_size_t),
                ("attention", ctypes.POINTER(ctypes.c_float)), ("attention_rows", ctypes.c_size_t),
                ("attention_columns", ctypes.c_size_t)]


_SentenceCallback = ctypes.CFUNCTYPE(None, ctypes.c_void_p, ctypes.POINTER(_DocumentSentence))


# ---- Loading the library ------------------------------------------------------

def _candidates() -> List[str]:
    """Where libedgemt.so may be, in the order tried: $EDGEMT_LIBRARY alone
    when set; inside the package (a pip install puts it there); beside an
    installed package (<prefix>/lib[/<multiarch>]); the build tree of the
    checkout this module is in (build/, the README's build folder); the
    system's library path."""
    if os.environ.get("EDGEMT_LIBRARY"):
        return [os.environ["EDGEMT_LIBRARY"]]
    here = os.path.dirname(os.path.abspath(__file__))
    found = [os.path.join(here, "libedgemt.so")]
    # Installed: <prefix>/lib/python3/dist-packages/edgemt -> <prefix>/lib[/<multiarch>];
    # a checkout: <checkout>/runtime/python/edgemt -> <checkout>/build/runtime.
    up_three = os.path.normpath(os.path.join(here, "..", "..", ".."))
    for sub in ("", "x86_64-linux-gnu", "aarch64-linux-gnu", os.path.join("build", "runtime")):
        found.append(os.path.join(up_three, sub, "libedgemt.so.0"))
    system = ctypes.util.find_library("edgemt")
    if system:
        found.append(system)
    return found


def _load():
    tried = []
    for path in _candidates():
        if os.path.sep in path and not os.path.exists(path):
            tried.append(path)
            continue
        try:
            return ctypes.CDLL(path), path
        except OSError as e:
            tried.append(f"{path} ({e})")
    raise ImportError("edgemt: cannot find libedgemt.so; set EDGEMT_LIBRARY to its path (tried: "
                      + ", ".join(tried) + ")")


_lib, _library_path = _load()


def _declare(name, restype, *argtypes):
    function = getattr(_lib, name)
    function.restype = restype
    function.argtypes = list(argtypes)
    return function


_P = ctypes.POINTER
_c_void_pp = _P(ctypes.c_void_p)
_declare("edgemt_version", ctypes.c_char_p)
_declare("edgemt_model_open", ctypes.c_int, ctypes.c_char_p, _c_void_pp, _P(_Error))
_declare("edgemt_model_open_with", ctypes.c_int, ctypes.c_char_p, ctypes.c_uint32, _c_void_pp,
         _P(_Error))
_declare("edgemt_model_open_memory_with", ctypes.c_int, ctypes.c_void_p, ctypes.c_size_t,
         ctypes.c_uint32, _c_void_pp, _P(_Error))
_declare("edgemt_model_open_memory", ctypes.c_int, ctypes.c_void_p, ctypes.c_size_t, _c_void_pp,
         _P(_Error))
_declare("edgemt_model_free", None, ctypes.c_void_p)
_declare("edgemt_model_get_info", ctypes.c_int, ctypes.c_void_p, _P(_ModelInfo), _P(_Error))
_declare("edgemt_model_detokenize", ctypes.c_int, ctypes.c_void_p, _P(ctypes.c_int32),
         ctypes.c_size_t, ctypes.c_char_p, ctypes.c_size_t, _P(ctypes.c_size_t), _P(_Error))
_declare("edgemt_translator_options_default", _TranslatorOptions)
_declare("edgemt_translator_create", ctypes.c_int, ctypes.c_void_p, _P(_TranslatorOptions),
         _c_void_pp, _P(_Error))
_declare("edgemt_translator_free", None, ctypes.c_void_p)
_declare("edgemt_translator_arena_size", ctypes.c_int, ctypes.c_void_p, _P(_Limits),
         _P(ctypes.c_size_t), _P(_Error))
_declare("edgemt_translator_set_greedy_scores", ctypes.c_int, ctypes.c_void_p, ctypes.c_int,
         _P(_Error))
_declare("edgemt_translator_set_shortlist", ctypes.c_int, ctypes.c_void_p, ctypes.c_int,
         _P(_Error))
_declare("edgemt_translator_set_marian_int8_sums", ctypes.c_int, ctypes.c_void_p, ctypes.c_int,
         _P(_Error))
_declare("edgemt_translator_prepare", ctypes.c_int, ctypes.c_void_p, _P(_Limits),
         ctypes.c_void_p, ctypes.c_size_t, _P(_Error))
_declare("edgemt_decode_options_default", ctypes.c_int, ctypes.c_void_p, _P(_DecodeOptions),
         _P(_Error))
_declare("edgemt_translate", ctypes.c_int, ctypes.c_void_p, _P(_Tokens), ctypes.c_size_t,
         _P(_DecodeOptions), _P(_Result), _P(_Error))
_declare("edgemt_tokenizer_create", ctypes.c_int, ctypes.c_void_p, _c_void_pp, _P(_Error))
_declare("edgemt_tokenizer_free", None, ctypes.c_void_p)
_declare("edgemt_split_sentences", ctypes.c_int, ctypes.c_char_p, ctypes.c_size_t,
         ctypes.c_char_p, _P(_Span), ctypes.c_size_t, _P(ctypes.c_size_t), _P(_Error))
_declare("edgemt_document_options_default", _DocumentOptions)
_declare("edgemt_translate_document", ctypes.c_int, ctypes.c_void_p, ctypes.c_void_p, _P(_Text),
         ctypes.c_size_t, _P(_DocumentOptions), _P(_DecodeOptions), _P(_DocumentResult),
         _P(_Error))
_declare("edgemt_translate_document_sentences", ctypes.c_int, ctypes.c_void_p, ctypes.c_void_p,
         _P(_Text), ctypes.c_size_t, _P(_DocumentOptions), _P(_DecodeOptions),
         _P(_DocumentResult), ctypes.c_int, _SentenceCallback, ctypes.c_void_p, _P(_Error))
_declare("edgemt_tokenizer_encode", ctypes.c_int, ctypes.c_void_p, ctypes.c_char_p,
         ctypes.c_size_t, _P(ctypes.c_int32), ctypes.c_size_t, _P(ctypes.c_size_t), _P(_Error))
_declare("edgemt_tokenizer_piece", ctypes.c_int, ctypes.c_void_p, ctypes.c_int, ctypes.c_int32,
         ctypes.c_char_p, ctypes.c_size_t, _P(ctypes.c_size_t), _P(_Error))


def _check(code: int, error: _Error) -> None:
    if code != 0:
        raise Error(code, error.message.decode("utf-8", "replace"))


def version() -> str:
    """The library's version, "MAJOR.MINOR.PATCH"."""
    return _lib.edgemt_version().decode()


def library_path() -> str:
    """The libedgemt.so this module loaded."""
    return _library_path


def _sentence_spans(text: bytes, language: Optional[bytes]) -> List[tuple]:
    """[(begin, end)] byte ranges of edgemt_split_sentences."""
    count = ctypes.c_size_t()
    error = _Error()
    spans = (_Span * 8)()
    code = _lib.edgemt_split_sentences(text, len(text), language, spans, len(spans),
                                       ctypes.byref(count), ctypes.byref(error))
    if code == OUT_OF_RANGE:
        spans = (_Span * count.value)()
        code = _lib.edgemt_split_sentences(text, len(text), language, spans, len(spans),
                                           ctypes.byref(count), ctypes.byref(error))
    _check(code, error)
    return [(spans[i].begin, spans[i].end) for i in range(count.value)]


def split_sentences(text: str, language: str = "") -> List[str]:
    """The sentences of one line of text, as `edgemt translate` and
    Translator.translate split it (conservative rules: runtime/include/
    edgemt/sentences.h). language: an ISO 639-1 code ("en", "de" and "fr"
    have rules of their own; "" or any other: the union of theirs). A blank
    text gives []."""
    encoded = check.text("text", text)
    spans = _sentence_spans(encoded, check.c_string("language", language))
    return [encoded[begin:end].decode("utf-8") for begin, end in spans]


def _detokenize(model_pointer: int, ids: List[int], longest_text: int) -> str:
    """Model.detokenize's text, with a buffer that grows until it fits. The C
    call does not say how much it needs, but no text is longer than
    `longest_text` (each id writes at most one piece from the model file),
    so doubling ends there at the latest."""
    array = (ctypes.c_int32 * max(1, len(ids)))(*ids)
    capacity = min(64 + 64 * len(ids), longest_text)
    while True:
        text = ctypes.create_string_buffer(capacity)
        length = ctypes.c_size_t()
        error = _Error()
        code = _lib.edgemt_model_detokenize(model_pointer, array, len(ids), text, capacity,
                                            ctypes.byref(length), ctypes.byref(error))
        if code == OUT_OF_RANGE and capacity < longest_text:
            capacity = min(2 * capacity, longest_text)
            continue
        _check(code, error)
        return text.raw[:length.value].decode("utf-8", "replace")


# edgemt_tokenizer_piece's sides.
_SOURCE, _TARGET = 0, 1


def _encode(tokenizer: int, text: bytes) -> Tuple[int, int, str]:
    """(code, number of source ids, message) of edgemt_tokenizer_encode."""
    capacity = len(text) + 2  # a piece is at least one byte; then EOS
    ids = (ctypes.c_int32 * capacity)()
    length = ctypes.c_size_t()
    error = _Error()
    code = _lib.edgemt_tokenizer_encode(tokenizer, text, len(text), ids, capacity,
                                        ctypes.byref(length), ctypes.byref(error))
    return code, length.value, error.message.decode("utf-8", "replace")


def _piece(tokenizer: int, side: int, token: int) -> str:
    """One id's piece through edgemt_tokenizer_piece."""
    capacity = 64
    while True:
        piece = ctypes.create_string_buffer(capacity)
        length = ctypes.c_size_t()
        error = _Error()
        code = _lib.edgemt_tokenizer_piece(tokenizer, side, token, piece, capacity,
                                           ctypes.byref(length), ctypes.byref(error))
        if code == OUT_OF_RANGE and length.value + 1 > capacity:
            capacity = length.value + 1
            continue
        _check(code, error)
        return piece.raw[:length.value].decode("utf-8", "replace")


class _TextRequest:
    """The checked options of one translate() or translate_iter() call."""
    options: "_DecodeOptions"
    document: "_DocumentOptions"
    language: Optional[bytes]
    has_prefix: bool
    attention: bool
    raise_errors: bool


class _Sentence(NamedTuple):
    """What the C call reported of one sentence (copied)."""
    begin: int
    end: int
    source: List[int]
    tokens: List[int]
    score: float
    translation: str
    attention: Optional[List[List[float]]]


class _Line(NamedTuple):
    """What the C call reported of one text: code 0 and its translation, or
    a code and the C message in `text`."""
    code: int
    text_length: int
    text: str
    score: float = math.nan
    tokens: List[int] = []
    alignment: Optional[List[Tuple[int, int]]] = None
    sentences: List[_Sentence] = []
    # The sources the C call translated the text as: more than the split
    # counted when a sentence over max_source_len was cut into pieces.
    sentence_count: int = 0


# ---- Model ---------------------------------------------------------------------

# edgemt.h: EDGEMT_OPEN_SKIP_CHECKSUM.
_OPEN_SKIP_CHECKSUM = 2


class Model:
    """A verified model file (.emt), mapped read-only; shareable by translators
    and threads. close() (or garbage collection) frees it once its
    translators are closed: they keep it alive."""

    def __init__(self, path: str, verify_checksum: bool = True):
        """verify_checksum: files of format version 4 and later carry CRC-32C
        checksums, computed at load so that a damaged file is refused
        (edgemt.Error "invalid-model"); False only for a file verified
        elsewhere (a signed image, a download checked against its hash)."""
        self._open(check.path(path), None, check.flag("verify_checksum", verify_checksum))

    @classmethod
    def from_bytes(cls, data: bytes, verify_checksum: bool = True) -> "Model":
        """A model from the file's bytes (copied once into aligned memory)."""
        data = check.byte_string("data", data)
        model = cls.__new__(cls)
        model._open(None, data, check.flag("verify_checksum", verify_checksum))
        return model

    def _open(self, path: Optional[bytes], data: Optional[bytes], verify_checksum: bool) -> None:
        pointer = ctypes.c_void_p()
        error = _Error()
        flags = 0 if verify_checksum else _OPEN_SKIP_CHECKSUM
        if path is not None:
            self._buffer = None
            _check(_lib.edgemt_model_open_with(path, flags, ctypes.byref(pointer),
                                               ctypes.byref(error)),
                   error)
        else:
            # 64-byte alignment (EDGEMT_MODEL_ALIGNMENT): over-allocate and offset.
            raw = ctypes.create_string_buffer(len(data) + 64)
            offset = (-ctypes.addressof(raw)) % 64
            ctypes.memmove(ctypes.addressof(raw) + offset, data, len(data))
            self._buffer = raw  # lives as long as the model object (its translators hold it)
            _check(_lib.edgemt_model_open_memory_with(ctypes.addressof(raw) + offset, len(data),
                                                      flags, ctypes.byref(pointer),
                                                      ctypes.byref(error)),
                   error)
        self._handle = SharedHandle(pointer.value, _lib.edgemt_model_free, "model")
        try:
            # Bounds the text of Model.detokenize (_longest_text).
            self._bytes = os.path.getsize(path) if path is not None else len(data)
            self._read_info()
        except BaseException:
            self.close()
            raise

    def _read_info(self):
        info = _ModelInfo()
        error = _Error()
        with self._handle.use() as pointer:  # the strings are the model's: copy them now
            _check(_lib.edgemt_model_get_info(pointer, ctypes.byref(info), ctypes.byref(error)),
                   error)
            self.family = info.family.decode()
            self.source_language = info.source_language.decode()
            self.target_language = info.target_language.decode()
            self.weight_dtype = info.weight_dtype.decode()
        self.format_version = info.format_version
        self.source_vocab_size = info.source_vocab_size
        self.target_vocab_size = info.target_vocab_size
        self.max_sequence_length = info.max_sequence_length
        self.source_eos_id = info.source_eos_id
        self.append_eos_to_source = bool(info.append_eos_to_source)
        self.has_tokenizer = bool(info.has_tokenizer)
        self._decode_defaults = self._read_decode_defaults()

    def _read_decode_defaults(self) -> dict:
        options = _DecodeOptions()
        error = _Error()
        with self._handle.use() as pointer:
            _check(_lib.edgemt_decode_options_default(pointer, ctypes.byref(options),
                                                      ctypes.byref(error)), error)
        return {name: getattr(options, name) for name, _ in _DecodeOptions._fields_}

    def decode_defaults(self) -> dict:
        """The model's decoding defaults (beam_size, length_penalty, ...)."""
        return dict(self._decode_defaults)

    def detokenize(self, ids: Sequence[int]) -> str:
        """Text of target ids from the model's piece table (no SentencePiece)."""
        ids = check.token_ids("ids", ids, self.target_vocab_size)
        with self._handle.use() as pointer:
            return _detokenize(pointer, ids, self._longest_text(len(ids)))

    def _longest_text(self, count: int) -> int:
        """Bytes (with the NUL) that detokenizing `count` ids can need at most:
        a piece is inside the model file, or the unknown piece's 5 bytes."""
        return 1 + count * max(self._bytes, 5)

    def close(self) -> None:
        """Frees the model now, or when the last of its translators closes.
        Later calls on it raise edgemt.Error. A second close() does nothing."""
        if getattr(self, "_handle", None) is not None:
            self._handle.close()

    def __del__(self):
        self.close()


# ---- Translator ----------------------------------------------------------------

@dataclass
class Translation:
    """One translation: of a text (Translator.translate, translate_iter), of
    one sentence of a text (Translation.sentences), or of token ids
    (Translator.translate_ids).

    A text that cannot be translated (a sentence longer than the
    translator's max_source_len, a lone surrogate, a sentence over the
    tokenizer's 64 KiB, scores that overflowed) gives a Translation with
    `error` set to the one-line reason `edgemt translate` prints for such a
    line, `ok` False, `text` "", `score` NaN and no tokens; the other texts
    of the call are translated as usual.

    Fields:
      text       the translation ("" for a blank text or a failed one)
      score      log-probability (beam: length-normalized); the sum of the
                 sentences' for a split text; NaN with greedy_scores=False
                 or when the text failed
      tokens     target ids without EOS (of every sentence, in order)
      attention  rows of weights over the source ids: one row per decoder
                 step (each sentence's tokens, then its EOS if it ended
                 with one), one column per id of `source_tokens`. A text of
                 several sentences gets them block-diagonally (a sentence's
                 rows weigh only its own source ids; 0.0 elsewhere); each
                 sentence's own matrix is in `sentences`. None unless asked
                 (a Translator made with attention=True)
      alignment  translate(align=True): (source word, target word) links
                 over the text's and the translation's whitespace words, as
                 `edgemt translate --align` prints them ("0-0 1-2"); else None
      error      None when translated, else why not (see above)
      pieces     the pieces of `tokens` ("▁Hund"), as `edgemt translate
                 --json` lists them (text translations only)
      source     the text (or the sentence) that was translated
      source_tokens  the ids the model read: per sentence its target
                 prefix, pieces and EOS (what attention columns are)
      source_pieces  their pieces
      sentences  per sentence of a text: a Translation each (its own text,
                 score, tokens, attention, source ...); [] for a blank or
                 failed text and for translate_ids
    """

    text: str
    score: float
    tokens: List[int] = field(default_factory=list)
    attention: Optional[List[List[float]]] = None
    alignment: Optional[List[Tuple[int, int]]] = None
    error: Optional[str] = None
    pieces: List[str] = field(default_factory=list)
    source: Optional[str] = None
    source_tokens: List[int] = field(default_factory=list)
    source_pieces: List[str] = field(default_factory=list)
    sentences: List["Translation"] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        """True when the text was translated (error is None)."""
        return self.error is None


def _block_attention(sentences: List[Translation]) -> List[List[float]]:
    """The sentences' attention matrices as one: their rows in order, each
    row over every sentence's source ids, zeros outside its own."""
    width = sum(len(s.source_tokens) for s in sentences)
    rows: List[List[float]] = []
    offset = 0
    for sentence in sentences:
        columns = len(sentence.source_tokens)
        for row in sentence.attention or []:
            rows.append([0.0] * offset + row + [0.0] * (width - offset - columns))
        offset += columns
    return rows


class Translator:
    """Translates texts (translate, translate_iter) or token ids
    (translate_ids) with one model, in batches of up to max_batch sentences.

    Safe from any number of threads: its calls run one at a time (a lock;
    the others wait), so sharing one Translator gives the same results as
    using it from one thread. For parallel translation make one Translator
    per thread; they can share the Model. close() waits for the call in
    flight; calls after it raise edgemt.Error."""

    def __init__(self, model: Model, threads: int = 1, max_batch: int = 16,
                 max_source_len: Optional[int] = None, max_beam: Optional[int] = None,
                 max_target_len: Optional[int] = None, attention: bool = False,
                 attention_layer: int = -1, attention_head: int = -1,
                 greedy_scores: bool = True, shortlist: bool = True,
                 marian_int8_sums: str = "exact"):
        """threads: 1..256 worker threads inside each call (1: the caller's).
        Limits (each at least 1; None: the default): sources and
        translations up to max_source_len and max_target_len tokens counting
        EOS (default 256 or the model's longest, at most the model's
        longest), beams up to max_beam (default 4 or the model's default
        beam, at most 64), up to max_batch sentences per C call (at most
        1024; longer lists are sent in batches).
        attention: plan for attention weights: translate() and
        translate_iter() then return them with every translation (and allow
        align=True), translate_ids() when asked (attention=True); of a
        Transformer, decoder layer attention_layer's cross-attention (-1:
        the last) and its head attention_head (-1: the mean over heads).
        greedy_scores=False: greedy (beam 1) results get score NaN, and a
        model with an f32 output projection finds each step's token without
        computing every logit (faster at small batches; an int8 copy of that
        matrix, vocab x (hidden size + 28) bytes, is kept instead of an f32
        one; beam search reads the model's rows, the same results slower).
        Same tokens.
        shortlist=False: a model converted with a lexical shortlist
        chooses from the whole vocabulary; with it (the default) each C
        call computes only its sentences' candidate ids, as Marian does,
        so a translation may depend on the sentences sent with it
        (max_batch=1 matches Marian's --mini-batch 1).
        marian_int8_sums: for an int8 file converted from a Marian intgemm8
        model, "exact" (Marian's sums on AVX-512 VNNI CPUs), or "avx2",
        "avx512bw", "ssse3": the 16-bit saturating sums Marian (and Firefox's
        Bergamot) computes on such CPUs, on any CPU (slower)."""
        if not isinstance(model, Model):
            raise ArgumentTypeError(f"Translator() takes an edgemt.Model, not "
                                    f"{type(model).__name__}")
        options = _lib.edgemt_translator_options_default()
        options.threads = check.size("threads", threads)
        sums = ("exact", "avx2", "avx512bw", "ssse3")
        if marian_int8_sums not in sums:
            raise ArgumentValueError(f"marian_int8_sums must be one of {', '.join(sums)}, not "
                                     f"{marian_int8_sums!r}")
        longest = min(256, model.max_sequence_length)
        defaults = model.decode_defaults()
        max_beam = check.optional_size("max_beam", max_beam)
        self._limits = _Limits(
            check.size("max_batch", max_batch),
            check.optional_size("max_source_len", max_source_len) or longest,
            max_beam or max(4, int(defaults["beam_size"])),
            check.optional_size("max_target_len", max_target_len) or longest,
            1 if check.flag("attention", attention) else 0,
            # The library checks them against the model (and names its layers).
            check.integer("attention_layer", attention_layer, check.INT_MIN, check.INT_MAX),
            check.integer("attention_head", attention_head, check.INT_MIN, check.INT_MAX))
        greedy_scores = check.flag("greedy_scores", greedy_scores)
        shortlist = check.flag("shortlist", shortlist)
        self._model = model
        self._model_pointer = model._handle.acquire()  # released by close()
        self._decode_defaults = defaults
        self._longest_text = model._longest_text
        self._source_vocab_size = model.source_vocab_size
        self._has_tokenizer = model.has_tokenizer
        self._tokenizer = None  # made by the first text call
        self._piece_cache: Tuple[dict, dict] = ({}, {})  # source, target: id -> piece
        pointer = ctypes.c_void_p()
        error = _Error()
        code = _lib.edgemt_translator_create(self._model_pointer, ctypes.byref(options),
                                             ctypes.byref(pointer), ctypes.byref(error))
        if code != 0:
            model._handle.release()
            _check(code, error)
        self._handle = ExclusiveHandle(pointer.value, _lib.edgemt_translator_free, "translator")
        try:
            with self._handle.use() as translator:
                if marian_int8_sums != "exact":
                    _check(_lib.edgemt_translator_set_marian_int8_sums(
                        translator, sums.index(marian_int8_sums), ctypes.byref(error)), error)
                if not greedy_scores:
                    _check(_lib.edgemt_translator_set_greedy_scores(translator, 0,
                                                                    ctypes.byref(error)), error)
                if not shortlist:
                    _check(_lib.edgemt_translator_set_shortlist(translator, 0,
                                                                ctypes.byref(error)), error)
                # The library allocates the arena (a caller arena is for C callers).
                _check(_lib.edgemt_translator_prepare(translator, ctypes.byref(self._limits),
                                                      None, 0, ctypes.byref(error)), error)
        except BaseException:
            self.close()
            raise

    @property
    def limits(self) -> "_Limits":
        """The limits it was prepared with (a copy: changing it changes nothing)."""
        return _Limits.from_buffer_copy(self._limits)

    def _text_tokenizer(self) -> int:
        """The SentencePiece tokenizer, made on the first text call (~4 MiB
        for an 8k vocabulary that translate_ids callers never need). Called
        under the translator's lock."""
        if self._tokenizer is None:
            if not self._has_tokenizer:
                raise Error(UNSUPPORTED, "this model file has no tokenizer: use translate_ids")
            pointer = ctypes.c_void_p()
            error = _Error()
            _check(_lib.edgemt_tokenizer_create(self._model_pointer, ctypes.byref(pointer),
                                                ctypes.byref(error)), error)
            self._tokenizer = pointer.value
        return self._tokenizer

    def _decode_options(self, beam_size, length_penalty, max_len_a, max_len_b, word_penalty):
        options = _DecodeOptions(**self._decode_defaults)
        if beam_size is not None:
            beam_size = check.integer("beam_size", beam_size, 1, self._limits.max_beam,
                                      " (the Translator's max_beam)")
        for name, value in (("beam_size", beam_size),
                            ("length_penalty", check.optional_real("length_penalty",
                                                                   length_penalty)),
                            ("max_len_a", check.optional_real("max_len_a", max_len_a)),
                            ("max_len_b", check.optional_real("max_len_b", max_len_b)),
                            ("word_penalty", check.optional_real("word_penalty", word_penalty))):
            if value is not None:
                setattr(options, name, value)
        return options

    def translate(self, texts: Iterable[str], beam_size: Optional[int] = None,
                  length_penalty: Optional[float] = None, max_len_a: Optional[float] = None,
                  max_len_b: Optional[float] = None, word_penalty: Optional[float] = None,
                  target_prefix: Optional[str] = None, split_sentences: bool = True,
                  source_language: Optional[str] = None, align: bool = False,
                  attention: Optional[bool] = None, errors: str = "return") -> List[Translation]:
        """Translations of `texts` (any number of str), one per text, in
        order, as `edgemt translate` gives them for the same lines.

        A text that cannot be translated gets a Translation with .error set
        (.ok False) and the others are translated; errors="raise" raises
        edgemt.Error for the first such text instead. Wrong argument types,
        bad options and a closed translator raise in either case.

        Options left None take the model's defaults (beam_size,
        length_penalty, max_len_a, max_len_b, word_penalty).
        split_sentences: a text of several sentences is translated sentence
        by sentence and the translations joined (the text's own spaces
        between them kept; score: their sum; tokens: all of theirs; each in
        .sentences); source_language: the splitting rules' language (None:
        the model's source language; "": the generic rules). target_prefix:
        the target-language token of a multi-target model (">>fra<<").
        align: each translation's word alignment; attention: each
        translation's attention weights (None: when the Translator was made
        with attention=True). Both need a Translator made with
        attention=True (else edgemt.Error "failed-precondition").
        The texts are all read first; translate_iter() reads them lazily."""
        request = self._text_request(beam_size, length_penalty, max_len_a, max_len_b,
                                     word_penalty, target_prefix, split_sentences,
                                     source_language, align, attention, errors)
        items = list(check.texts(texts))  # every argument error before any work
        out: List[Translation] = []
        with self._handle.use() as translator:
            tokenizer = self._text_tokenizer()
            for chunk in self._chunks(items, request):
                out.extend(self._translate_chunk(translator, tokenizer, chunk, request))
        return out

    def translate_iter(self, texts: Iterable[str], beam_size: Optional[int] = None,
                       length_penalty: Optional[float] = None, max_len_a: Optional[float] = None,
                       max_len_b: Optional[float] = None, word_penalty: Optional[float] = None,
                       target_prefix: Optional[str] = None, split_sentences: bool = True,
                       source_language: Optional[str] = None, align: bool = False,
                       attention: Optional[bool] = None,
                       errors: str = "return") -> Iterator[Translation]:
        """translate() as a stream: yields each text's Translation in order
        while reading `texts` (any iterable, e.g. a file or a generator)
        lazily, about max_batch sentences at a time: a huge input never
        lands in memory at once. The same options and results as
        translate(). Options are checked now; the texts as they are read (a
        text that is not a str raises when it is reached). The translator
        is held during each batch, not between them (close() in between
        makes the next batch raise edgemt.Error).

            with open("big.en", encoding="utf-8") as f:
                for t in translator.translate_iter(line.rstrip("\\n") for line in f):
                    print(t.text if t.ok else "", file=out)
        """
        request = self._text_request(beam_size, length_penalty, max_len_a, max_len_b,
                                     word_penalty, target_prefix, split_sentences,
                                     source_language, align, attention, errors)
        return self._stream(check.texts(texts), request)

    def _stream(self, items: Iterator["check.Text"], request: "_TextRequest") -> Iterator[Translation]:
        for chunk in self._chunks(items, request):
            with self._handle.use() as translator:
                results = self._translate_chunk(translator, self._text_tokenizer(), chunk,
                                                request)
            yield from results

    def _text_request(self, beam_size, length_penalty, max_len_a, max_len_b, word_penalty,
                      target_prefix, split_sentences, source_language, align, attention,
                      errors) -> "_TextRequest":
        """The options of translate() and translate_iter(), checked."""
        request = _TextRequest()
        request.options = self._decode_options(beam_size, length_penalty, max_len_a, max_len_b,
                                               word_penalty)
        document = _lib.edgemt_document_options_default()
        document.split_sentences = 1 if check.flag("split_sentences", split_sentences) else 0
        if source_language is not None:
            document.language = check.c_string("source_language", source_language)
        if target_prefix is not None:
            document.target_prefix = check.c_string("target_prefix", target_prefix)
        document.align = 1 if check.flag("align", align) else 0
        request.document = document
        request.language = document.language if source_language is not None else \
            self._model.source_language.encode()
        request.has_prefix = bool(target_prefix)
        request.attention = bool(self._limits.attention) if attention is None else \
            check.flag("attention", attention)
        if request.attention and not self._limits.attention:
            raise Error(FAILED_PRECONDITION, "attention=True needs a Translator made with "
                                             "attention=True")
        if errors not in ("return", "raise"):
            raise ArgumentValueError(f"errors is {errors!r}; it must be \"return\" (a failed "
                                     f"text's Translation.error) or \"raise\"")
        request.raise_errors = errors == "raise"
        return request

    def _chunks(self, items: Iterable["check.Text"],
                request: "_TextRequest") -> Iterator[List[Tuple["check.Text", int]]]:
        """(text, its sentence count) in groups of about max_batch sentences
        (at least one text): each group is one C call. Reads no text past
        the group it yields."""
        chunk: List[Tuple[check.Text, int]] = []
        sentences = 0
        for item in items:
            count = 1
            if request.document.split_sentences:
                count = max(1, len(_sentence_spans(item.encoded, request.language)))
            if chunk and sentences + count > self._limits.max_batch:
                yield chunk
                chunk, sentences = [], 0
            chunk.append((item, count))
            sentences += count
            if sentences >= self._limits.max_batch:
                yield chunk
                chunk, sentences = [], 0
        if chunk:
            yield chunk

    def _translate_chunk(self, translator, tokenizer, chunk, request) -> List[Translation]:
        """One group of texts through edgemt_translate_document_sentences. A
        translation whose text does not fit its buffer (long pieces) is
        translated again with the size the C call reported it needs, once."""
        per_sentence = 16 * self._limits.max_target_len + 64
        capacities = [per_sentence * count for _, count in chunk]
        lines = self._call_document(translator, tokenizer, [item.encoded for item, _ in chunk],
                                    [count for _, count in chunk], capacities, request)
        # Buffers too small: a text longer than guessed, or more sources than
        # the split counted (a sentence cut to fit max_source_len).
        too_long = [k for k, line in enumerate(lines)
                    if line.code == OUT_OF_RANGE and (line.text_length + 1 > capacities[k]
                                                      or line.sentence_count > chunk[k][1])]
        if too_long:
            counts = [max(chunk[k][1], lines[k].sentence_count) for k in too_long]
            again = self._call_document(translator, tokenizer,
                                        [chunk[k][0].encoded for k in too_long], counts,
                                        [max(lines[k].text_length + 1, per_sentence * count)
                                         for k, count in zip(too_long, counts)], request)
            for k, line in zip(too_long, again):
                lines[k] = line
        out = []
        for (item, _), line in zip(chunk, lines):
            code, reason = line.code, line.text
            if code == OUT_OF_RANGE or code == INVALID_ARGUMENT:
                reason = self._explain(tokenizer, item.encoded, request, reason)
            if code != 0:
                if request.raise_errors:
                    raise Error(code, f"text {item.index}: {reason}")
                out.append(Translation("", math.nan, error=reason, source=item.text))
                continue
            out.append(self._text_translation(item, line, request))
        return out

    def _text_translation(self, item, line, request) -> Translation:
        """The Translation of a text that was translated."""
        sentences = []
        for s in line.sentences:
            sentences.append(Translation(
                s.translation, s.score, s.tokens, s.attention if request.attention else None,
                pieces=self._pieces(_TARGET, s.tokens),
                source=item.encoded[s.begin:s.end].decode("utf-8", "replace"),
                source_tokens=s.source, source_pieces=self._pieces(_SOURCE, s.source)))
        source_tokens = [i for s in sentences for i in s.source_tokens]
        return Translation(
            line.text, line.score, line.tokens,
            _block_attention(sentences) if request.attention else None,
            line.alignment if request.document.align else None,
            pieces=self._pieces(_TARGET, line.tokens), source=item.text,
            source_tokens=source_tokens, source_pieces=self._pieces(_SOURCE, source_tokens),
            sentences=sentences)

    def _call_document(self, translator, tokenizer, texts, counts, capacities,
                       request) -> List["_Line"]:
        """One edgemt_translate_document_sentences call: a _Line per text."""
        n = len(texts)
        if n == 0:
            return []
        inputs = (_Text * n)(*[_Text(t, len(t)) for t in texts])
        results = (_DocumentResult * n)()
        buffers = []
        align = bool(request.document.align)
        for document_result, capacity, count in zip(results, capacities, counts):
            r = document_result.translation
            text = ctypes.create_string_buffer(capacity)
            tokens = (ctypes.c_int32 * (count * self._limits.max_target_len))()
            # One link per target word at most: no more than the tokens.
            pairs = (_WordPair * len(tokens))() if align else None
            buffers.append((text, tokens, pairs))
            r.text = ctypes.cast(text, _P(ctypes.c_char))
            r.text_capacity = len(text)
            r.tokens = tokens
            r.token_capacity = len(tokens)
            if pairs is not None:
                document_result.alignment = pairs
                document_result.alignment_capacity = len(pairs)
        sentences: List[List[_Sentence]] = [[] for _ in range(n)]

        def keep(_user, pointer):  # copies: the C pointers die when it returns
            s = pointer.contents
            columns = s.attention_columns
            weights = None
            if s.attention:
                weights = [s.attention[i * columns:(i + 1) * columns]
                           for i in range(s.attention_rows)]
            sentences[s.line].append(_Sentence(
                s.span.begin, s.span.end, s.source[:s.source_length], s.tokens[:s.token_length],
                s.score, ctypes.string_at(s.translation, s.translation_length).decode(
                    "utf-8", "replace"), weights))

        callback = _SentenceCallback(keep)
        error = _Error()
        _check(_lib.edgemt_translate_document_sentences(
            translator, tokenizer, inputs, n, ctypes.byref(request.document),
            ctypes.byref(request.options), results, 1 if request.attention else 0, callback,
            None, ctypes.byref(error)), error)
        out = []
        for k, (document_result, (_, tokens, pairs)) in enumerate(zip(results, buffers)):
            r = document_result.translation
            if r.code != 0:
                out.append(_Line(r.code, r.text_length, r.error.decode("utf-8", "replace"),
                                 sentence_count=document_result.sentence_count))
                continue
            text = ctypes.string_at(r.text, r.text_length).decode("utf-8", "replace")
            links = [(pairs[i].source_word, pairs[i].target_word)
                     for i in range(document_result.alignment_length)] if pairs is not None else None
            out.append(_Line(0, r.text_length, text, r.score, list(tokens[:r.token_length]), links,
                             sentences[k]))
        return out

    def _explain(self, tokenizer, encoded: bytes, request, message: str) -> str:
        """Why a text failed, as `edgemt translate` says it of a line: which
        sentence (of a split text) and how long it is; the C call's static
        message when the sentences do not say."""
        try:
            encoded.decode("utf-8")
        except UnicodeDecodeError:  # the CLI checks the whole line first
            code, _, reason = _encode(tokenizer, encoded)
            return reason if code != 0 else message
        spans = _sentence_spans(encoded, request.language) if request.document.split_sentences \
            else [(0, len(encoded))]
        longest = self._limits.max_source_len
        for k, (begin, end) in enumerate(spans):
            which = f"sentence {k + 1} of {len(spans)}: " if len(spans) > 1 else ""
            code, count, reason = _encode(tokenizer, encoded[begin:end])
            if code != 0:
                return which + reason
            count += 1 if request.has_prefix else 0
            if count > longest:
                limit = "the model takes" if longest == self._model.max_sequence_length else \
                    "the translator's max_source_len allows"
                return which + f"source has {count} tokens, more than the {longest} {limit}"
        return message

    def pieces(self, ids: Sequence[int], side: str = "target") -> List[str]:
        """The pieces of token ids as the model's vocabulary spells them
        ("▁Hund", "</s>", ">>fra<<"); side: "target" or "source"."""
        if side not in ("source", "target"):
            raise ArgumentValueError(f"side is {side!r}; it must be \"source\" or \"target\"")
        which = _SOURCE if side == "source" else _TARGET
        ids = check.token_ids("ids", ids, self._model.source_vocab_size if which == _SOURCE
                              else self._model.target_vocab_size)
        with self._handle.use():
            self._text_tokenizer()
            return self._pieces(which, ids)

    def _pieces(self, side: int, ids: Sequence[int]) -> List[str]:
        """Pieces of ids (checked) through edgemt_tokenizer_piece, each looked
        up once per translator. Called under the translator's lock."""
        cache = self._piece_cache[side]
        for i in ids:
            if i not in cache:
                cache[i] = _piece(self._tokenizer, side, i)
        return [cache[i] for i in ids]

    def translate_ids(self, sources: Iterable[Sequence[int]], beam_size: Optional[int] = None,
                      length_penalty: Optional[float] = None, max_len_a: Optional[float] = None,
                      max_len_b: Optional[float] = None,
                      word_penalty: Optional[float] = None,
                      attention: bool = False) -> List[Translation]:
        """Translations of token-id sources (each ending with the model's
        source EOS when it wants one; ids below source_vocab_size); .text is
        from Model.detokenize.
        attention: also each result's attention weights (a Translator made
        with attention=True, a model family that has them)."""
        sources = check.token_id_sequences(sources, self._source_vocab_size)
        attention = check.flag("attention", attention)
        options = self._decode_options(beam_size, length_penalty, max_len_a, max_len_b,
                                       word_penalty)
        out: List[Translation] = []
        batch = self._limits.max_batch
        with self._handle.use() as translator:
            for first in range(0, len(sources), batch):
                out.extend(self._translate_ids(translator, sources[first:first + batch], first,
                                               options, attention))
        return out

    def _translate_ids(self, translator, chunk, first, options, attention):
        """One batch through edgemt_translate."""
        n = len(chunk)
        max_target_len = self._limits.max_target_len
        arrays = [(ctypes.c_int32 * max(1, len(s)))(*s) for s in chunk]
        spans = (_Tokens * n)(*[_Tokens(a, len(s)) for a, s in zip(arrays, chunk)])
        buffers = [(ctypes.c_int32 * max_target_len)() for _ in chunk]
        results = (_Result * n)()
        # Rows: at most max_target_len steps (EOS counted); columns: the source.
        weights = [(ctypes.c_float * (max_target_len * max(1, len(s))))()
                   for s in chunk] if attention else []
        for k, (r, b) in enumerate(zip(results, buffers)):
            r.tokens = b
            r.capacity = len(b)
            if attention:
                r.attention = weights[k]
                r.attention_capacity = len(weights[k])
        error = _Error()
        _check(_lib.edgemt_translate(translator, spans, n, ctypes.byref(options), results,
                                     ctypes.byref(error)), error)
        out = []
        for k, r in enumerate(results):
            if r.code != 0:
                raise Error(r.code, f"source {first + k}: " + r.error.decode())
            ids = list(buffers[k][:r.length])
            rows = None
            if attention:
                cols = r.attention_columns
                rows = [list(weights[k][i * cols:(i + 1) * cols]) for i in range(r.attention_rows)]
            text = _detokenize(self._model_pointer, ids, self._longest_text(len(ids)))
            out.append(Translation(text, r.score, ids, rows))
        return out

    def close(self) -> None:
        """Waits for a call in flight, then frees the translator (and lets the
        model go). Later calls raise edgemt.Error; a second close() does
        nothing."""
        if getattr(self, "_handle", None) is not None:
            self._handle.close(after_free=self._free_the_rest)

    def _free_the_rest(self) -> None:
        """After the translator: its tokenizer, then its hold on the model
        (edgemt.h: translators and tokenizers are freed before their model)."""
        if self._tokenizer is not None:
            _lib.edgemt_tokenizer_free(self._tokenizer)
            self._tokenizer = None
        self._model._handle.release()

    def __del__(self):
        self.close()
