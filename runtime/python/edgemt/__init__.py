"""edgemt: on-device machine translation, from Python.

A thin layer (ctypes) over the C API of the shared library libedgemt.so
(runtime/include/edgemt/edgemt.h), for people who evaluate and script:

    import edgemt
    model = edgemt.Model("models/multi30k-en-de.int8.emt")
    translator = edgemt.Translator(model, threads=2)
    for t in translator.translate(["A man is riding a bike."], beam_size=4):
        print(t.text, t.score, t.tokens)

The library is found through $EDGEMT_LIBRARY (a path to libedgemt.so), then
beside an installed package (<prefix>/lib[/<multiarch>]), then the system's
library path. Errors raise edgemt.Error (its .code names the C API's code).
Translations equal `edgemt translate`'s for the same options.
"""

import ctypes
import ctypes.util
import numbers
import os
from dataclasses import dataclass, field
from typing import Iterable, List, Optional, Sequence

__all__ = ["Error", "Model", "Translator", "Translation", "version", "library_path"]

# ---- The C API's types (edgemt/edgemt.h) ------------------------------------

_CODE_NAMES = ["ok", "invalid-argument", "out-of-range", "failed-precondition", "not-found",
               "io-error", "invalid-model", "unsupported-version", "unsupported",
               "out-of-memory", "backend-error", "numeric-error"]


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


class Error(RuntimeError):
    """A failed call: .code is the C API's code name ("invalid-model", ...)."""

    def __init__(self, code: int, message: str):
        self.code = _CODE_NAMES[code] if 0 <= code < len(_CODE_NAMES) else "unknown"
        self.message = message
        super().__init__(f"{message} ({self.code})")


# ---- Loading the library ------------------------------------------------------

def _candidates() -> List[str]:
    found = []
    if os.environ.get("EDGEMT_LIBRARY"):
        return [os.environ["EDGEMT_LIBRARY"]]
    here = os.path.dirname(os.path.abspath(__file__))
    # <prefix>/lib/python3/dist-packages/edgemt -> <prefix>/lib, <prefix>/lib/<multiarch>
    libdir = os.path.normpath(os.path.join(here, "..", "..", ".."))
    for sub in ("", "x86_64-linux-gnu", "aarch64-linux-gnu"):
        found.append(os.path.join(libdir, sub, "libedgemt.so.0"))
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
_declare("edgemt_translator_prepare", ctypes.c_int, ctypes.c_void_p, _P(_Limits),
         ctypes.c_void_p, ctypes.c_size_t, _P(_Error))
_declare("edgemt_decode_options_default", ctypes.c_int, ctypes.c_void_p, _P(_DecodeOptions),
         _P(_Error))
_declare("edgemt_translate", ctypes.c_int, ctypes.c_void_p, _P(_Tokens), ctypes.c_size_t,
         _P(_DecodeOptions), _P(_Result), _P(_Error))
_declare("edgemt_tokenizer_create", ctypes.c_int, ctypes.c_void_p, _c_void_pp, _P(_Error))
_declare("edgemt_tokenizer_free", None, ctypes.c_void_p)
_declare("edgemt_translate_text", ctypes.c_int, ctypes.c_void_p, ctypes.c_void_p, _P(_Text),
         ctypes.c_size_t, ctypes.c_char_p, _P(_DecodeOptions), _P(_TextResult), _P(_Error))


def _check(code: int, error: _Error) -> None:
    if code != 0:
        raise Error(code, error.message.decode("utf-8", "replace"))


def version() -> str:
    """The library's version, "MAJOR.MINOR.PATCH"."""
    return _lib.edgemt_version().decode()


def library_path() -> str:
    """The libedgemt.so this module loaded."""
    return _library_path


# ---- Model ---------------------------------------------------------------------

class Model:
    """A verified model file (.emt), mapped read-only; shareable by translators."""

    def __init__(self, path: str):
        self._handle = ctypes.c_void_p()
        self._buffer = None
        error = _Error()
        _check(_lib.edgemt_model_open(os.fsencode(path), ctypes.byref(self._handle),
                                      ctypes.byref(error)), error)
        self._read_info()

    @classmethod
    def from_bytes(cls, data: bytes) -> "Model":
        """A model from the file's bytes (copied once into aligned memory)."""
        model = cls.__new__(cls)
        model._handle = ctypes.c_void_p()
        # 64-byte alignment (EDGEMT_MODEL_ALIGNMENT): over-allocate and offset.
        raw = ctypes.create_string_buffer(len(data) + 64)
        offset = (-ctypes.addressof(raw)) % 64
        ctypes.memmove(ctypes.addressof(raw) + offset, data, len(data))
        model._buffer = raw  # lives as long as the model
        error = _Error()
        _check(_lib.edgemt_model_open_memory(ctypes.addressof(raw) + offset, len(data),
                                             ctypes.byref(model._handle), ctypes.byref(error)),
               error)
        model._read_info()
        return model

    def _read_info(self):
        info = _ModelInfo()
        error = _Error()
        _check(_lib.edgemt_model_get_info(self._handle, ctypes.byref(info), ctypes.byref(error)),
               error)
        self.format_version = info.format_version
        self.family = info.family.decode()
        self.source_language = info.source_language.decode()
        self.target_language = info.target_language.decode()
        self.weight_dtype = info.weight_dtype.decode()
        self.source_vocab_size = info.source_vocab_size
        self.target_vocab_size = info.target_vocab_size
        self.max_sequence_length = info.max_sequence_length
        self.source_eos_id = info.source_eos_id
        self.append_eos_to_source = bool(info.append_eos_to_source)
        self.has_tokenizer = bool(info.has_tokenizer)

    def decode_defaults(self) -> dict:
        """The model's decoding defaults (beam_size, length_penalty, ...)."""
        options = _DecodeOptions()
        error = _Error()
        _check(_lib.edgemt_decode_options_default(self._handle, ctypes.byref(options),
                                                  ctypes.byref(error)), error)
        return {name: getattr(options, name) for name, _ in _DecodeOptions._fields_}

    def detokenize(self, ids: Sequence[int]) -> str:
        """Text of target ids from the model's piece table (no SentencePiece)."""
        array = (ctypes.c_int32 * max(1, len(ids)))(*ids)
        capacity = 64 + 64 * len(ids)
        text = ctypes.create_string_buffer(capacity)
        length = ctypes.c_size_t()
        error = _Error()
        _check(_lib.edgemt_model_detokenize(self._handle, array, len(ids), text, capacity,
                                            ctypes.byref(length), ctypes.byref(error)), error)
        return text.raw[:length.value].decode("utf-8", "replace")

    def close(self) -> None:
        if getattr(self, "_handle", None) and self._handle.value:
            _lib.edgemt_model_free(self._handle)
            self._handle = ctypes.c_void_p()

    def __del__(self):
        self.close()


# ---- Translator ----------------------------------------------------------------

@dataclass
class Translation:
    text: str
    score: float                      # log-probability (beam: length-normalized); NaN: greedy_scores=False
    tokens: List[int] = field(default_factory=list)  # target ids, without EOS
    # translate_ids(attention=True): one row per decoder step of the result
    # (its tokens, then its EOS if it ended with one), one weight per source
    # token; None when not asked.
    attention: Optional[List[List[float]]] = None


class Translator:
    """Translates batches of sentences with one model. Use from one thread at a
    time (create one per thread; they can share the Model)."""

    def __init__(self, model: Model, threads: int = 1, max_batch: int = 16,
                 max_source_len: Optional[int] = None, max_beam: Optional[int] = None,
                 max_target_len: Optional[int] = None, attention: bool = False,
                 attention_layer: int = -1, attention_head: int = -1,
                 greedy_scores: bool = True):
        """Limits left None: sources and translations up to 256 tokens (or
        the model's longest), beams up to 4 or the model's default beam.
        attention: plan for attention weights (translate_ids(attention=True));
        of a Transformer, decoder layer attention_layer's cross-attention (-1:
        the last) and its head attention_head (-1: the mean over heads).
        greedy_scores=False: greedy (beam 1) results get score NaN, and a
        model with an f32 output projection finds each step's token without
        computing every logit (faster at small batches; an int8 copy of that
        matrix, vocab x (hidden size + 28) bytes, is kept instead of an f32
        one; beam search reads the model's rows, the same results slower).
        Same tokens."""
        self._model = model  # keeps the model alive while the translator is
        self._handle = ctypes.c_void_p()
        self._tokenizer = ctypes.c_void_p()
        error = _Error()
        options = _lib.edgemt_translator_options_default()
        options.threads = threads
        _check(_lib.edgemt_translator_create(model._handle, ctypes.byref(options),
                                             ctypes.byref(self._handle), ctypes.byref(error)),
               error)
        if not greedy_scores:
            _check(_lib.edgemt_translator_set_greedy_scores(self._handle, 0, ctypes.byref(error)),
                   error)
        longest = min(256, model.max_sequence_length)
        if max_beam is None:
            max_beam = max(4, int(model.decode_defaults()["beam_size"]))
        self.limits = _Limits(max_batch, max_source_len or longest, max_beam,
                              max_target_len or longest, 1 if attention else 0,
                              attention_layer, attention_head)
        # The library allocates the arena (a caller arena is for C callers).
        _check(_lib.edgemt_translator_prepare(self._handle, ctypes.byref(self.limits), None, 0,
                                              ctypes.byref(error)), error)

    def _text_tokenizer(self) -> ctypes.c_void_p:
        """The SentencePiece tokenizer, made on the first text call (~4 MiB
        for an 8k vocabulary that translate_ids callers never need)."""
        if not self._tokenizer.value:
            if not self._model.has_tokenizer:
                raise Error(8, "this model file has no tokenizer: use translate_ids")
            error = _Error()
            _check(_lib.edgemt_tokenizer_create(self._model._handle, ctypes.byref(self._tokenizer),
                                                ctypes.byref(error)), error)
        return self._tokenizer

    def _decode_options(self, beam_size, length_penalty, max_len_a, max_len_b, word_penalty):
        options = _DecodeOptions(**self._model.decode_defaults())
        for name, value in (("beam_size", beam_size), ("length_penalty", length_penalty),
                            ("max_len_a", max_len_a), ("max_len_b", max_len_b),
                            ("word_penalty", word_penalty)):
            if value is not None:
                setattr(options, name, value)
        return options

    def translate(self, texts: Iterable[str], beam_size: Optional[int] = None,
                  length_penalty: Optional[float] = None, max_len_a: Optional[float] = None,
                  max_len_b: Optional[float] = None, word_penalty: Optional[float] = None,
                  target_prefix: Optional[str] = None) -> List[Translation]:
        """Translations of `texts` (any number: sent in batches of max_batch).
        Options left None take the model's defaults, as `edgemt translate`."""
        if isinstance(texts, (str, bytes)):
            # list("Hello") would translate each character as a sentence.
            raise TypeError("translate() takes a list of texts, not one string: "
                            "use translate([text])")
        tokenizer = self._text_tokenizer()
        texts = list(texts)
        options = self._decode_options(beam_size, length_penalty, max_len_a, max_len_b,
                                       word_penalty)
        prefix = target_prefix.encode() if target_prefix else None
        out: List[Translation] = []
        batch = self.limits.max_batch
        for first in range(0, len(texts), batch):
            chunk = [t.encode("utf-8") for t in texts[first:first + batch]]
            n = len(chunk)
            inputs = (_Text * n)(*[_Text(b, len(b)) for b in chunk])
            results = (_TextResult * n)()
            keep = []
            for r in results:
                text = ctypes.create_string_buffer(16 * self.limits.max_target_len + 64)
                tokens = (ctypes.c_int32 * self.limits.max_target_len)()
                keep.append((text, tokens))
                r.text = ctypes.cast(text, _P(ctypes.c_char))
                r.text_capacity = len(text)
                r.tokens = tokens
                r.token_capacity = len(tokens)
            error = _Error()
            _check(_lib.edgemt_translate_text(self._handle, tokenizer, inputs, n, prefix,
                                              ctypes.byref(options), results,
                                              ctypes.byref(error)), error)
            for k, r in enumerate(results):
                if r.code != 0:
                    raise Error(r.code, f"text {first + k}: " + r.error.decode())
                text = ctypes.string_at(r.text, r.text_length).decode("utf-8", "replace")
                out.append(Translation(text, r.score, list(keep[k][1][:r.token_length])))
        return out

    def translate_ids(self, sources: Iterable[Sequence[int]], beam_size: Optional[int] = None,
                      length_penalty: Optional[float] = None, max_len_a: Optional[float] = None,
                      max_len_b: Optional[float] = None,
                      word_penalty: Optional[float] = None,
                      attention: bool = False) -> List[Translation]:
        """Translations of token-id sources (each ending with the model's
        source EOS when it wants one); .text is from Model.detokenize.
        attention: also each result's attention weights (a Translator made
        with attention=True, a model family that has them)."""
        # A string or a flat id list would be read as sources of one token each.
        sources = list(sources)
        for k, s in enumerate(sources):
            if isinstance(s, (numbers.Integral, str, bytes)):
                raise TypeError(f"translate_ids() takes a list of token-id sequences (e.g. "
                                f"[[5, 6, 7]]); source {k} is of type {type(s).__name__}")
        sources = [list(s) for s in sources]
        options = self._decode_options(beam_size, length_penalty, max_len_a, max_len_b,
                                       word_penalty)
        out: List[Translation] = []
        batch = self.limits.max_batch
        for first in range(0, len(sources), batch):
            chunk = sources[first:first + batch]
            n = len(chunk)
            arrays = [(ctypes.c_int32 * max(1, len(s)))(*s) for s in chunk]
            spans = (_Tokens * n)(*[_Tokens(a, len(s)) for a, s in zip(arrays, chunk)])
            buffers = [(ctypes.c_int32 * self.limits.max_target_len)() for _ in chunk]
            results = (_Result * n)()
            weights = [(ctypes.c_float * (self.limits.max_target_len * max(1, len(s))))()
                       for s in chunk] if attention else []
            for k, (r, b) in enumerate(zip(results, buffers)):
                r.tokens = b
                r.capacity = len(b)
                if attention:
                    r.attention = weights[k]
                    r.attention_capacity = len(weights[k])
            error = _Error()
            _check(_lib.edgemt_translate(self._handle, spans, n, ctypes.byref(options), results,
                                         ctypes.byref(error)), error)
            for k, r in enumerate(results):
                if r.code != 0:
                    raise Error(r.code, f"source {first + k}: " + r.error.decode())
                ids = list(buffers[k][:r.length])
                rows = None
                if attention:
                    cols = r.attention_columns
                    rows = [list(weights[k][i * cols:(i + 1) * cols]) for i in range(r.attention_rows)]
                out.append(Translation(self._model.detokenize(ids), r.score, ids, rows))
        return out

    def close(self) -> None:
        if getattr(self, "_tokenizer", None) and self._tokenizer.value:
            _lib.edgemt_tokenizer_free(self._tokenizer)
            self._tokenizer = ctypes.c_void_p()
        if getattr(self, "_handle", None) and self._handle.value:
            _lib.edgemt_translator_free(self._handle)
            self._handle = ctypes.c_void_p()

    def __del__(self):
        self.close()
