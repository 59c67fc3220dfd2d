"""The .emt container: writer and reader.

Layout (schema/edgemt.fbs):

    [0, 4)                    uint32 LE: size S of the FlatBuffer
    [4, 4 + S)                FlatBuffer `Model`, identifier "EMT1"
    [4 + S, W)                zero padding, W = align64(4 + S)
    [W, W + weights_size)     weight segment; every tensor starts at a multiple
                              of 64 from W, gaps are zero; weights_size is a
                              multiple of 64
    [E, E + 12)               version 4 and later, E = W + weights_size: the
                              integrity trailer, b"EMTC", then the CRC-32C of
                              [0, W) and of [W, E) (uint32 LE each;
                              runtime/format/integrity.h). The file ends there
                              (before version 4: at E).

The writer takes already-converted numpy arrays (float32, float16 or int8,
any shape) and lays them out in the order given; aliases are extra table entries
pointing at the same offset/size. The tensor table is sorted by the UTF-8 bytes
of the names, as FlatBuffers `(key)` lookups require. `write_model` first
validates everything (validate.py: config inside the runtime's limits,
tokenizer, shortlist, tensors exactly as the config implies, every value
finite) and writes nothing when anything is wrong; `write_unvalidated` skips
that, for tests that need deliberately broken files (`testing.write_unchecked`).

Int8 files (weight_dtype "int8", quantization Int8PerRowDynamic, or
Int8SmoothedPerRowDynamic with a `<name>_smooth` vector per projection, or
Int8PerTensorDynamic, whose embedding tables stay F32): matrices
are I8 codes in [-127, 127] with F32 per-row `<name>_scale` tensors (see
`quantize`); `check_against_config` also checks those values (no -128 code,
scales finite and >= 0, smoothing values > 0), since a reader cannot trust
them otherwise.
"""

import zlib
from dataclasses import dataclass
from typing import Dict, Mapping, Optional, Sequence, Tuple

import flatbuffers
import google_crc32c
import numpy as np

from . import families, fbs
from .atomic_file import atomic_write
from .errors import ModelFileError, UserError
from .model_spec import (INT8_QUANTIZATIONS, QUANTIZATION_INT8, QUANTIZATION_INT8_PER_TENSOR,
                         QUANTIZATION_INT8_STATIC,
                         QUANTIZATION_INT8_SMOOTHED, QUANTIZATION_NONE, SEARCH_RULES, Decoding,
                         ModelHeader, Provenance, Shortlist, SideTokenizer, SpecialTokens,
                         quantization_scheme)
from .validate import validate_model, validate_shortlist, validate_tensors

ALIGNMENT = 64

_NUMPY_TO_DTYPE = {np.dtype(np.float32): fbs.DType.F32, np.dtype(np.float16): fbs.DType.F16,
                   np.dtype(np.int8): fbs.DType.I8}
_DTYPE_NAMES = {fbs.DType.F32: "f32", fbs.DType.F16: "f16", fbs.DType.I8: "i8"}
_NAME_TO_DTYPE = {name: dtype for dtype, name in _DTYPE_NAMES.items()}
_NAME_TO_NUMPY = {"f32": np.dtype("<f4"), "f16": np.dtype("<f2"), "i8": np.dtype("i1")}
_WEIGHT_DTYPE = {"fp32": fbs.DType.F32, "fp16": fbs.DType.F16, "int8": fbs.DType.I8}
_QUANTIZATION = {QUANTIZATION_NONE: fbs.QuantizationScheme.None_,
                 QUANTIZATION_INT8: fbs.QuantizationScheme.Int8PerRowDynamic,
                 QUANTIZATION_INT8_SMOOTHED: fbs.QuantizationScheme.Int8SmoothedPerRowDynamic,
                 QUANTIZATION_INT8_PER_TENSOR: fbs.QuantizationScheme.Int8PerTensorDynamic,
                 QUANTIZATION_INT8_STATIC: fbs.QuantizationScheme.Int8PerTensorStatic}
_RULES = {"edgemt": fbs.SearchRules.Edgemt, "opennmt": fbs.SearchRules.OpenNMT,
          "marian": fbs.SearchRules.Marian, "huggingface": fbs.SearchRules.HuggingFace}
assert tuple(_RULES) == SEARCH_RULES


def align(value: int, alignment: int = ALIGNMENT) -> int:
    return (value + alignment - 1) // alignment * alignment


@dataclass(frozen=True)
class TensorEntry:
    """One row of the tensor table. `offset` is relative to the weight segment."""
    name: str
    shape: Tuple[int, ...]
    dtype: str   # "f32" | "f16" | "i8"
    offset: int
    size: int


# --------------------------------------------------------------------------- writer

def _layout(tensors: Mapping[str, np.ndarray], aliases: Mapping[str, str]):
    """Assign 64-aligned offsets in insertion order; returns (entries, total size)."""
    entries: Dict[str, TensorEntry] = {}
    offset = 0
    for name, array in tensors.items():
        if array.dtype not in _NUMPY_TO_DTYPE:
            raise ValueError(f"tensor {name}: unsupported dtype {array.dtype}")
        dtype = _DTYPE_NAMES[_NUMPY_TO_DTYPE[array.dtype]]
        entries[name] = TensorEntry(name, tuple(int(s) for s in array.shape), dtype,
                                    offset, int(array.nbytes))
        offset = align(offset + array.nbytes)
    for alias, target in aliases.items():
        if alias in entries:
            raise ValueError(f"alias {alias} is also a stored tensor")
        if target not in entries:
            raise ValueError(f"alias {alias} -> {target}: target is not a stored tensor")
        owner = entries[target]
        entries[alias] = TensorEntry(alias, owner.shape, owner.dtype, owner.offset, owner.size)
    return entries, offset


def _create_string(b: flatbuffers.Builder, text: str) -> int:
    """b.CreateString of text's UTF-8 bytes. Given a str, flatbuffers 2.0.8
    (Debian 12's) moves its head by the character count and then writes the
    encoded bytes, so every multi-byte character is inserted into the buffer:
    the same file, but each such string copies everything written before it
    (writing OPUS-MT's 2 x 58,101 pieces took 8 of a conversion's 11 s)."""
    return b.CreateString(text.encode("utf-8"))


def _build_tokenizer(b: flatbuffers.Builder, side: SideTokenizer, append_eos: bool) -> int:
    spm_vec = b.CreateByteVector(bytes(side.spm))
    pieces_vec = None
    if side.pieces is not None:
        offsets = [_create_string(b, piece) for piece in side.pieces]
        fbs.tokenizer_fb.StartPiecesVector(b, len(offsets))
        for off in reversed(offsets):
            b.PrependUOffsetTRelative(off)
        pieces_vec = b.EndVector()
    fbs.tokenizer_fb.Start(b)
    fbs.tokenizer_fb.AddKind(b, fbs.TokenizerKind.SentencePiece)
    fbs.tokenizer_fb.AddModel(b, spm_vec)
    fbs.tokenizer_fb.AddAppendEosToSource(b, bool(append_eos))
    fbs.tokenizer_fb.AddModelCrc32(b, zlib.crc32(bytes(side.spm)))
    if pieces_vec is not None:
        fbs.tokenizer_fb.AddPieces(b, pieces_vec)
    fbs.tokenizer_fb.AddUnkId(b, side.unk_id)
    fbs.tokenizer_fb.AddEosId(b, side.eos_id)
    return fbs.tokenizer_fb.End(b)


def _build_decoding(b: flatbuffers.Builder, decoding: Decoding) -> int:
    banned = b.CreateNumpyVector(np.asarray(decoding.banned_tokens, dtype=np.int32))
    fbs.decoding_fb.Start(b)
    fbs.decoding_fb.AddRules(b, _RULES[decoding.rules])
    fbs.decoding_fb.AddBeamSize(b, decoding.beam_size)
    fbs.decoding_fb.AddLengthPenalty(b, float(decoding.length_penalty))
    fbs.decoding_fb.AddWordPenalty(b, float(decoding.word_penalty))
    fbs.decoding_fb.AddMaxLenA(b, float(decoding.max_len_a))
    fbs.decoding_fb.AddMaxLenB(b, float(decoding.max_len_b))
    fbs.decoding_fb.AddBannedTokens(b, banned)
    return fbs.decoding_fb.End(b)


def _build_shortlist(b: flatbuffers.Builder, shortlist: Shortlist) -> int:
    offsets = b.CreateNumpyVector(np.ascontiguousarray(shortlist.offsets, dtype=np.uint32))
    targets = b.CreateNumpyVector(np.ascontiguousarray(shortlist.targets, dtype=np.uint32))
    fbs.shortlist_fb.Start(b)
    fbs.shortlist_fb.AddFirst(b, shortlist.first)
    fbs.shortlist_fb.AddBest(b, shortlist.best)
    fbs.shortlist_fb.AddAddSourceIds(b, bool(shortlist.add_source_ids))
    fbs.shortlist_fb.AddOffsets(b, offsets)
    fbs.shortlist_fb.AddTargets(b, targets)
    return fbs.shortlist_fb.End(b)


def _read_tokenizer(t, what: str) -> SideTokenizer:
    spm = t.ModelAsNumpy().tobytes() if t.ModelLength() else b""
    recorded = t.ModelCrc32()  # -1: a file from before the field
    if recorded != -1 and recorded != zlib.crc32(spm):
        raise ModelFileError(f"{what}tokenizer model: CRC-32 is {zlib.crc32(spm):08x}, "
                             f"the file records {recorded:08x} (the file is corrupt)")
    pieces = (tuple(_str(t.Pieces(i)) for i in range(t.PiecesLength()))
              if not t.PiecesIsNone() else None)
    return SideTokenizer(spm, pieces, t.UnkId(), t.EosId())


def _read_decoding(d) -> Decoding:
    inv_rules = {v: k for k, v in _RULES.items()}
    if d.Rules() not in inv_rules:
        raise ModelFileError(f"unknown search rules {d.Rules()}")
    banned = tuple(int(x) for x in d.BannedTokensAsNumpy()) if d.BannedTokensLength() else ()
    return Decoding(rules=inv_rules[d.Rules()], beam_size=d.BeamSize(),
                    length_penalty=d.LengthPenalty(), word_penalty=d.WordPenalty(),
                    max_len_a=d.MaxLenA(), max_len_b=d.MaxLenB(), banned_tokens=banned)


def _read_shortlist(t) -> Shortlist:
    """The table as stored (copies: the file's bytes may go away); the
    caller checks it against the config's vocabulary sizes."""
    def vector(length: int, as_numpy) -> np.ndarray:
        return np.array(as_numpy(), dtype=np.uint32) if length else np.zeros(0, np.uint32)
    return Shortlist(first=t.First(), best=t.Best(), add_source_ids=t.AddSourceIds(),
                     offsets=vector(t.OffsetsLength(), t.OffsetsAsNumpy),
                     targets=vector(t.TargetsLength(), t.TargetsAsNumpy))


def _build_flatbuffer(header: ModelHeader, entries: Mapping[str, TensorEntry],
                      weights_size: int) -> bytes:
    b = flatbuffers.Builder(1 << 16)
    cfg = header.config

    # Tensor table, sorted by name bytes (FlatBuffers key order).
    tensor_offsets = []
    for name in sorted(entries, key=lambda n: n.encode("utf-8")):
        entry = entries[name]
        name_off = _create_string(b, name)
        shape_off = b.CreateNumpyVector(np.asarray(entry.shape, dtype=np.uint32))
        fbs.tensor_fb.Start(b)
        fbs.tensor_fb.AddName(b, name_off)
        fbs.tensor_fb.AddShape(b, shape_off)
        fbs.tensor_fb.AddDtype(b, _NAME_TO_DTYPE[entry.dtype])
        fbs.tensor_fb.AddOffset(b, entry.offset)
        fbs.tensor_fb.AddSize(b, entry.size)
        tensor_offsets.append(fbs.tensor_fb.End(b))
    fbs.model_fb.StartTensorsVector(b, len(tensor_offsets))
    for off in reversed(tensor_offsets):
        b.PrependUOffsetTRelative(off)
    tensors_vec = b.EndVector()

    tokenizer = _build_tokenizer(b, SideTokenizer(
        header.tokenizer_model, header.source_pieces, header.source_unk_id,
        header.source_eos_id), header.append_eos_to_source)
    target_tokenizer = (_build_tokenizer(b, header.target_tokenizer, True)
                        if header.target_tokenizer is not None else None)
    decoding = _build_decoding(b, header.decoding) if header.decoding is not None else None
    shortlist = _build_shortlist(b, header.shortlist) if header.shortlist is not None else None

    prov = header.provenance
    prov_strings = [_create_string(b, s) for s in (prov.source_format, prov.source_checkpoint,
                                                   prov.source_sha256, prov.converter_version,
                                                   prov.created_utc)]
    fbs.provenance_fb.Start(b)
    fbs.provenance_fb.AddSourceFormat(b, prov_strings[0])
    fbs.provenance_fb.AddSourceCheckpoint(b, prov_strings[1])
    fbs.provenance_fb.AddSourceSha256(b, prov_strings[2])
    fbs.provenance_fb.AddConverterVersion(b, prov_strings[3])
    fbs.provenance_fb.AddCreatedUtc(b, prov_strings[4])
    provenance = fbs.provenance_fb.End(b)

    src_lang = _create_string(b, header.source_language)
    tgt_lang = _create_string(b, header.target_language)

    tok = header.special_tokens
    fbs.special_tokens_fb.Start(b)
    fbs.special_tokens_fb.AddPad(b, tok.pad)
    fbs.special_tokens_fb.AddUnk(b, tok.unk)
    fbs.special_tokens_fb.AddBos(b, tok.bos)
    fbs.special_tokens_fb.AddEos(b, tok.eos)
    fbs.special_tokens_fb.AddDecoderStart(b, tok.decoder_start)
    special = fbs.special_tokens_fb.End(b)

    family = families.of(cfg)
    config_table = family.config_table
    config = config_table.build(b, cfg)

    fbs.model_fb.Start(b)
    scheme_version = {QUANTIZATION_INT8_PER_TENSOR: fbs.PER_TENSOR_FORMAT_VERSION,
                      QUANTIZATION_INT8_STATIC: fbs.STATIC_FORMAT_VERSION}.get(header.quantization, 0)
    if header.f32_tables:
        scheme_version = fbs.F32_TABLES_FORMAT_VERSION
    if header.f16_tables:
        scheme_version = fbs.F16_TABLES_FORMAT_VERSION
    if header.residual_tables:
        scheme_version = fbs.RESIDUAL_TABLES_FORMAT_VERSION
    fbs.model_fb.AddFormatVersion(b, max(fbs.FORMAT_VERSION, family.format_version(cfg),
                                         scheme_version))
    fbs.model_fb.AddFamilyConfigType(b, config_table.union_type)
    fbs.model_fb.AddFamilyConfig(b, config)
    fbs.model_fb.AddSpecialTokens(b, special)
    fbs.model_fb.AddSourceLanguage(b, src_lang)
    fbs.model_fb.AddTargetLanguage(b, tgt_lang)
    fbs.model_fb.AddWeightDtype(b, _WEIGHT_DTYPE[header.weight_dtype])
    fbs.model_fb.AddTokenizer(b, tokenizer)
    fbs.model_fb.AddProvenance(b, provenance)
    fbs.model_fb.AddWeightsSize(b, weights_size)
    fbs.model_fb.AddTensors(b, tensors_vec)
    quantization = (header.quantization if header.quantization is not None
                    else quantization_scheme(header.weight_dtype))
    fbs.model_fb.AddQuantization(b, _QUANTIZATION[quantization])
    if target_tokenizer is not None:
        fbs.model_fb.AddTargetTokenizer(b, target_tokenizer)
    if decoding is not None:
        fbs.model_fb.AddDecoding(b, decoding)
    if header.f32_tables:
        fbs.model_fb.AddF32Tables(b, True)
    if header.f16_tables:
        fbs.model_fb.AddF16Tables(b, True)
    if header.residual_tables:
        fbs.model_fb.AddResidualTables(b, True)
    if shortlist is not None:  # any version: the format version stays the family's
        fbs.model_fb.AddShortlist(b, shortlist)
    root = fbs.model_fb.End(b)
    b.FinishSizePrefixed(root, fbs.FILE_IDENTIFIER)
    return bytes(b.Output())


def write_model(path: str, header: ModelHeader, tensors: Mapping[str, np.ndarray],
                aliases: Optional[Mapping[str, str]] = None, inputs: Sequence[str] = ()) -> int:
    """Validate (validate.validate_model: raises UserError naming the key or
    tensor), then write `path` atomically; returns the file size in bytes.
    Nothing is written when validation fails, nor when `path` is not a
    regular file or is one of `inputs` (atomic_file.atomic_write).

    tensors: name -> float32 / float16 / int8 array, stored in this order.
    aliases: alias name -> stored tensor name (same bytes, one copy).
    """
    validate_model(header, tensors, aliases)
    return write_unvalidated(path, header, tensors, aliases, inputs)


def write_unvalidated(path: str, header: ModelHeader, tensors: Mapping[str, np.ndarray],
                      aliases: Optional[Mapping[str, str]] = None,
                      inputs: Sequence[str] = ()) -> int:
    """write_model without the validation: only for tests that need files the
    runtime must refuse. Converters call write_model."""
    aliases = dict(aliases or {})
    entries, weights_size = _layout(tensors, aliases)
    buffer = _build_flatbuffer(header, entries, weights_size)
    segment_start = align(len(buffer))
    with atomic_write(path, inputs) as out:
        head = buffer + b"\0" * (segment_start - len(buffer))
        out.write(head)
        weights_crc = 0
        position = 0
        for name, array in tensors.items():
            entry = entries[name]
            gap = b"\0" * (entry.offset - position)
            data = np.ascontiguousarray(array, dtype=array.dtype.newbyteorder("<")).tobytes()
            weights_crc = google_crc32c.extend(google_crc32c.extend(weights_crc, gap), data)
            out.write(gap)
            out.write(data)
            position = entry.offset + entry.size
        tail = b"\0" * (weights_size - position)
        weights_crc = google_crc32c.extend(weights_crc, tail)
        out.write(tail)
        out.write(integrity_trailer(google_crc32c.value(head), weights_crc))
    return segment_start + weights_size + TRAILER_BYTES


# The integrity trailer (format version 4 and later).
TRAILER_MAGIC = b"EMTC"
TRAILER_BYTES = 12


def integrity_trailer(header_crc32c: int, weights_crc32c: int) -> bytes:
    return TRAILER_MAGIC + np.array([header_crc32c, weights_crc32c], dtype="<u4").tobytes()


# --------------------------------------------------------------------------- reader

def _str(value) -> str:
    return value.decode("utf-8") if value is not None else ""


class ModelFile:
    """A parsed .emt file; `array(name)` returns a read-only numpy view of a tensor."""

    def __init__(self, data: bytes):
        self._data = data
        if len(data) < 8:
            raise ModelFileError("file too small")
        (fb_size,) = np.frombuffer(data, dtype="<u4", count=1)
        fb_size = int(fb_size)
        if 4 + fb_size > len(data):
            raise ModelFileError("FlatBuffer size prefix exceeds the file")
        if not fbs.model_fb.Model.ModelBufferHasIdentifier(data, 0, size_prefixed=True):
            raise ModelFileError("missing file identifier EMT1")
        model = fbs.model_fb.Model.GetRootAs(data, 4)
        self.format_version = model.FormatVersion()
        if not fbs.OLDEST_FORMAT_VERSION <= self.format_version <= fbs.NEWEST_FORMAT_VERSION:
            raise ModelFileError(f"unknown format_version {self.format_version}")
        self.segment_start = align(4 + fb_size)
        self.weights_size = model.WeightsSize()
        segment_end = self.segment_start + self.weights_size
        trailer = TRAILER_BYTES if self.format_version >= 4 else 0
        if segment_end + trailer != len(data):
            raise ModelFileError(
                f"file size {len(data)} != segment start {self.segment_start} + "
                f"weights_size {self.weights_size}" + (" + trailer 12" if trailer else ""))
        self.checksums = None  # (header, weights) CRC-32C, version 4 and later
        if trailer:
            self.checksums = self._check_trailer(data, segment_end)
        self.header = self._read_header(model)
        self.entries: Dict[str, TensorEntry] = {}
        self.table_order = []
        for i in range(model.TensorsLength()):
            t = model.Tensors(i)
            entry = TensorEntry(_str(t.Name()), tuple(int(s) for s in t.ShapeAsNumpy())
                                if t.ShapeLength() else (), _DTYPE_NAMES.get(t.Dtype(), "?"),
                                int(t.Offset()), int(t.Size()))
            self._check_entry(entry)
            self.entries[entry.name] = entry
            self.table_order.append(entry.name)
        keys = [n.encode("utf-8") for n in self.table_order]
        if keys != sorted(keys) or len(set(keys)) != len(keys):
            raise ModelFileError("tensor table is not sorted by unique name")

    def _check_trailer(self, data: bytes, segment_end: int) -> Tuple[int, int]:
        if bytes(data[segment_end:segment_end + 4]) != TRAILER_MAGIC:
            raise ModelFileError("no integrity trailer after the weights")
        recorded = tuple(int(v) for v in np.frombuffer(data, dtype="<u4", count=2,
                                                       offset=segment_end + 4))
        computed = (google_crc32c.value(bytes(data[:self.segment_start])),
                    google_crc32c.value(bytes(data[self.segment_start:segment_end])))
        for part, want, got in zip(("header's", "weights'"), recorded, computed):
            if want != got:
                raise ModelFileError(f"the {part} CRC-32C is {got:08x}, the file records {want:08x}")
        return recorded

    @staticmethod
    def _family_config(model):
        """The family's config dataclass, read by its family's ConfigTable:
        from `config` in version 1 (whose `family` names the family), from
        the `family_config` union (its type names the family) later."""
        if model.FormatVersion() == 1:
            family = next((family for family in families.FAMILIES.values()
                           if family.format_v1 == model.Family()), None)
            config = model.Config()
            if family is None or config is None:
                wanted = families.titles(lambda family: family.format_v1 is not None)
                raise ModelFileError(f"version-1 file without a {wanted} config")
            return family.config_table.read(config._tab)  # pylint: disable=protected-access
        kind = model.FamilyConfigType()
        family = next((family for family in families.FAMILIES.values()
                       if family.config_table.union_type == kind), None)
        if family is None:
            raise ModelFileError(f"unknown family_config type {kind}")
        table = model.FamilyConfig()
        if table is None:
            raise ModelFileError("the family_config table is missing")
        return family.config_table.read(table)

    @staticmethod
    def _read_header(model) -> ModelHeader:
        cfg = ModelFile._family_config(model)
        s = model.SpecialTokens()
        special = SpecialTokens(pad=s.Pad(), unk=s.Unk(), bos=s.Bos(), eos=s.Eos(),
                                decoder_start=s.DecoderStart())
        t = model.Tokenizer()
        p = model.Provenance()
        prov = Provenance(_str(p.SourceFormat()), _str(p.SourceCheckpoint()),
                          _str(p.SourceSha256()), _str(p.ConverterVersion()),
                          _str(p.CreatedUtc())) if p is not None else Provenance()
        inv_wd = {v: k for k, v in _WEIGHT_DTYPE.items()}
        inv_quant = {v: k for k, v in _QUANTIZATION.items()}
        weight_dtype = inv_wd.get(model.WeightDtype())
        if weight_dtype is None:
            raise ModelFileError(f"unknown weight_dtype {model.WeightDtype()}")
        quantization = inv_quant.get(model.Quantization())
        if quantization is None:
            raise ModelFileError(f"unknown quantization scheme {model.Quantization()}")
        if (quantization in INT8_QUANTIZATIONS) != (weight_dtype == "int8"):
            raise ModelFileError(
                f"quantization {quantization} does not fit weight_dtype {weight_dtype}: "
                f"{' or '.join(INT8_QUANTIZATIONS)} is required for int8 weights and allowed "
                "only for them")
        if quantization == QUANTIZATION_INT8_SMOOTHED and model.FormatVersion() < 5:
            raise ModelFileError(f"quantization {quantization} needs format version 5 or later")
        first = {QUANTIZATION_INT8_PER_TENSOR: fbs.PER_TENSOR_FORMAT_VERSION,
                 QUANTIZATION_INT8_STATIC: fbs.STATIC_FORMAT_VERSION}.get(quantization, 0)
        if model.FormatVersion() < first:
            raise ModelFileError(f"quantization {quantization} needs format version {first} or "
                                 "later")
        f32_tables, f16_tables = bool(model.F32Tables()), bool(model.F16Tables())
        residual_tables = bool(model.ResidualTables())
        for flag, is_set, first in (("f32_tables", f32_tables, fbs.F32_TABLES_FORMAT_VERSION),
                                    ("f16_tables", f16_tables, fbs.F16_TABLES_FORMAT_VERSION),
                                    ("residual_tables", residual_tables,
                                     fbs.RESIDUAL_TABLES_FORMAT_VERSION)):
            if is_set and model.FormatVersion() < first:
                raise ModelFileError(f"{flag} needs format version {first} or later")
            if is_set and quantization not in (QUANTIZATION_INT8, QUANTIZATION_INT8_SMOOTHED):
                raise ModelFileError(f"{flag} is set in a file of quantization {quantization} "
                                     "(only per-row int8 files have it)")
        if f32_tables and f16_tables:
            raise ModelFileError("f32_tables and f16_tables are both set")
        if residual_tables and (f32_tables or f16_tables):
            raise ModelFileError("residual_tables is set with float tables")
        source = _read_tokenizer(t, "")
        target = (_read_tokenizer(model.TargetTokenizer(), "target ")
                  if model.TargetTokenizer() is not None else None)
        decoding = _read_decoding(model.Decoding()) if model.Decoding() is not None else None
        shortlist = _read_shortlist(model.Shortlist()) if model.Shortlist() is not None else None
        if shortlist is not None:
            try:
                validate_shortlist(shortlist, cfg.source_vocab_size or cfg.vocab_size,
                                   cfg.vocab_size)
            except UserError as err:
                raise ModelFileError(str(err)) from None
        return ModelHeader(
            config=cfg, special_tokens=special,
            source_language=_str(model.SourceLanguage()),
            target_language=_str(model.TargetLanguage()),
            weight_dtype=weight_dtype,
            tokenizer_model=source.spm,
            append_eos_to_source=t.AppendEosToSource(), provenance=prov,
            quantization=quantization, source_pieces=source.pieces,
            source_unk_id=source.unk_id, source_eos_id=source.eos_id,
            target_tokenizer=target, decoding=decoding, shortlist=shortlist,
            f32_tables=f32_tables, f16_tables=f16_tables, residual_tables=residual_tables)

    def _check_entry(self, e: TensorEntry) -> None:
        if e.dtype not in _NAME_TO_NUMPY:
            raise ModelFileError(f"tensor {e.name}: unsupported dtype {e.dtype}")
        if e.offset % ALIGNMENT:
            raise ModelFileError(f"tensor {e.name}: offset {e.offset} not 64-aligned")
        itemsize = _NAME_TO_NUMPY[e.dtype].itemsize
        if int(np.prod(e.shape, dtype=np.int64)) * itemsize != e.size:
            raise ModelFileError(f"tensor {e.name}: size {e.size} disagrees with shape {e.shape}")
        if e.offset + e.size > self.weights_size:
            raise ModelFileError(f"tensor {e.name}: bytes past the weight segment")

    def array(self, name: str) -> np.ndarray:
        """Tensor `name` as a read-only numpy array of its stored dtype (shape as
        stored): float32, float16, or int8 codes (scales are `name + "_scale"`)."""
        e = self.entries[name]
        dtype = _NAME_TO_NUMPY[e.dtype]
        start = self.segment_start + e.offset
        return np.frombuffer(self._data, dtype=dtype, count=e.size // dtype.itemsize,
                             offset=start).reshape(e.shape)

    def stored_tensors(self) -> Tuple[Dict[str, np.ndarray], Dict[str, str]]:
        """(name -> read-only array of each tensor that owns its bytes, alias
        -> owner), as write_model takes them: the first name in table order
        at an (offset, size) owns it."""
        tensors: Dict[str, np.ndarray] = {}
        aliases: Dict[str, str] = {}
        owners: Dict[Tuple[int, int], str] = {}
        for name in self.table_order:
            entry = self.entries[name]
            owner = owners.setdefault((entry.offset, entry.size), name)
            if owner != name:
                aliases[name] = owner
            else:
                tensors[name] = self.array(name)
        return tensors, aliases

    def check_against_config(self) -> None:
        """Raise ModelFileError unless the tensor table is exactly what the config
        and weight dtype imply (names, shapes, dtypes, aliases sharing bytes) and
        every value is valid (finite floats; int8 codes and scales) — the checks
        the writer makes (validate.validate_tensors), on what was read."""
        tensors, aliases = self.stored_tensors()
        try:
            validate_tensors(self.header, tensors, aliases)
        except UserError as err:
            raise ModelFileError(str(err)) from None


def read_model(path: str) -> ModelFile:
    """Read and structurally check an .emt file."""
    with open(path, "rb") as handle:
        return ModelFile(handle.read())
