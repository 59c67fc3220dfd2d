#include "format/model_verifier.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <new>

#include "format/crc32.h"
#include "format/integrity.h"
#include "format/sentencepiece_verifier.h"
#include "format/weight_values.h"
#include "kernels/crc32c.h"
#include "models/families.h"
#include "models/family_schema.h"
#include "schema/edgemt_generated.h"

namespace edgemt {
namespace {

namespace fb = ::edgemt::format;

constexpr size_t kSizePrefixBytes = sizeof(flatbuffers::uoffset_t);
// A FlatBuffer with an identifier is at least a root offset + 4 identifier bytes.
constexpr uint32_t kMinFlatBufferSize = 8;

Status invalid(const char* what) {
  return Status::error(StatusCode::kInvalidModel, "%s", what);
}

uint32_t read_u32_le(const uint8_t* bytes) {
  uint32_t value;
  std::memcpy(&value, bytes, sizeof(value));
  return flatbuffers::EndianScalar(value);
}

// Identifier bytes for a message: printable ASCII as is, anything else as '?'.
void printable_identifier(const uint8_t* bytes, char out[5]) {
  for (int i = 0; i < 4; ++i) {
    out[i] = (bytes[i] >= 0x20 && bytes[i] < 0x7f) ? static_cast<char>(bytes[i]) : '?';
  }
  out[4] = '\0';
}

// ---- Steps 1-3: container, version, FlatBuffer --------------------------

// Reads one scalar field of the root table after checking only what that
// read touches: the root offset, the root table's vtable and the field
// itself (format_version, so that a file of another version is reported as
// such; weights_size, which the integrity trailer's place depends on, before
// the whole FlatBuffer is verified).
template <typename T>
Status read_root_scalar(const uint8_t* buffer, size_t buffer_size, flatbuffers::voffset_t field,
                        T* value) {
  flatbuffers::Verifier::Options options;
  options.max_depth = kMaxFlatBufferDepth;
  options.max_tables = kMaxFlatBufferTables;
  flatbuffers::Verifier verifier(buffer, buffer_size, options);
  const flatbuffers::uoffset_t root = verifier.VerifyOffset(kSizePrefixBytes);
  if (root == 0) return invalid("model FlatBuffer is corrupt: bad root table offset");
  const auto* table = reinterpret_cast<const flatbuffers::Table*>(buffer + kSizePrefixBytes + root);
  if (!table->VerifyTableStart(verifier) || !table->VerifyField<T>(verifier, field, sizeof(T))) {
    return invalid("model FlatBuffer is corrupt: bad root table");
  }
  *value = table->GetField<T>(field, 0);
  return Status::ok();
}

// The weight segment's bounds (step 5's first check), from the size prefix
// and weights_size.
Status segment_bounds(uint64_t flatbuffer_end, uint64_t weights_size, size_t size,
                      uint64_t* segment) {
  *segment = align_to_weight_alignment(flatbuffer_end);
  if (*segment > size || weights_size > size - *segment) {
    return Status::error(StatusCode::kInvalidModel,
                         "model file is truncated: its weight segment needs %llu bytes from "
                         "offset %llu, the file has %zu bytes",
                         static_cast<unsigned long long>(weights_size),
                         static_cast<unsigned long long>(*segment), size);
  }
  return Status::ok();
}

Status verify_container(const uint8_t* data, size_t size, bool verify_checksum,
                        const fb::Model** root, uint32_t* flatbuffer_size,
                        IntegrityTrailer* trailer) {
  // Size prefix + root offset + identifier.
  constexpr size_t kHeaderBytes = 2 * kSizePrefixBytes + flatbuffers::kFileIdentifierLength;
  if (size < kHeaderBytes) {
    return Status::error(StatusCode::kInvalidModel,
                         "model file is too small (%zu bytes) to be an edgemt model", size);
  }
  // The identifier first: a file of another kind (a checkpoint passed by
  // mistake) gets "not an edgemt model file", not a confusing size error.
  if (uint64_t{size} > kMaxModelBytes) {
    return Status::error(StatusCode::kInvalidModel,
                         "model file has %zu bytes; the limit is %llu", size,
                         static_cast<unsigned long long>(kMaxModelBytes));
  }
  if (!flatbuffers::BufferHasIdentifier(data, fb::ModelIdentifier(), /*size_prefixed=*/true)) {
    char found[5];
    printable_identifier(data + 2 * kSizePrefixBytes, found);
    return Status::error(StatusCode::kInvalidModel,
                         "not an edgemt model file: identifier is '%s', expected '%s'", found,
                         fb::ModelIdentifier());
  }
  const uint32_t fb_size = read_u32_le(data);
  if (fb_size < kMinFlatBufferSize) {
    return Status::error(StatusCode::kInvalidModel,
                         "model FlatBuffer size %u is too small to hold a model", fb_size);
  }
  // The Verifier handles buffers below 2 GiB only.
  if (fb_size >= FLATBUFFERS_MAX_BUFFER_SIZE - kSizePrefixBytes) {
    return Status::error(StatusCode::kInvalidModel,
                         "model FlatBuffer size %u is too large (limit 2 GiB)", fb_size);
  }
  const uint64_t fb_end = uint64_t{kSizePrefixBytes} + fb_size;
  if (fb_end > size) {
    return Status::error(StatusCode::kInvalidModel,
                         "model file is truncated: its FlatBuffer needs %llu bytes, the file "
                         "has %zu",
                         static_cast<unsigned long long>(fb_end), size);
  }

  uint32_t version = 0;
  EDGEMT_RETURN_IF_ERROR(
      read_root_scalar(data, static_cast<size_t>(fb_end), fb::Model::VT_FORMAT_VERSION, &version));
  if (version < kOldestFormatVersion || version > kFormatVersion) {
    return Status::error(StatusCode::kUnsupportedVersion,
                         "model format version %u is not supported (this runtime reads versions "
                         "%u to %u)",
                         version, kOldestFormatVersion, kFormatVersion);
  }

  // Step 3b: version 4 and later, the integrity trailer and the header's
  // checksum, before the FlatBuffer is walked (a damaged file is named as
  // such rather than as a corrupt FlatBuffer).
  if (version >= kFirstChecksummedFormatVersion) {
    uint64_t weights_size = 0;
    uint64_t segment = 0;
    EDGEMT_RETURN_IF_ERROR(read_root_scalar(data, static_cast<size_t>(fb_end),
                                            fb::Model::VT_WEIGHTS_SIZE, &weights_size));
    EDGEMT_RETURN_IF_ERROR(segment_bounds(fb_end, weights_size, size, &segment));
    EDGEMT_RETURN_IF_ERROR(read_integrity_trailer(data, size, segment + weights_size, trailer));
    if (verify_checksum) EDGEMT_RETURN_IF_ERROR(check_header_checksum(data, segment, *trailer));
  }

  flatbuffers::Verifier::Options options;
  options.max_depth = kMaxFlatBufferDepth;
  options.max_tables = kMaxFlatBufferTables;
  flatbuffers::Verifier verifier(data, static_cast<size_t>(fb_end), options);
  if (!fb::VerifySizePrefixedModelBuffer(verifier)) {
    return invalid("model FlatBuffer is corrupt (the FlatBuffers verifier rejected it)");
  }
  *root = fb::GetSizePrefixedModel(data);
  *flatbuffer_size = fb_size;
  return Status::ok();
}

// ---- Step 4: header -------------------------------------------------------

const char* string_or_empty(const flatbuffers::String* s) { return s != nullptr ? s->c_str() : ""; }


Status read_weight_dtype(fb::DType in, DType* out) {
  switch (in) {
    case fb::DType::F32: *out = DType::kF32; return Status::ok();
    case fb::DType::F16: *out = DType::kF16; return Status::ok();
    case fb::DType::I8: *out = DType::kI8; return Status::ok();
  }
  return Status::error(StatusCode::kUnsupported, "weight dtype %d is not supported",
                       static_cast<int>(in));
}

// The first format versions with Int8SmoothedPerRowDynamic,
// Int8PerTensorDynamic and Int8PerTensorStatic files.
constexpr uint32_t kFirstSmoothedFormatVersion = 5;
constexpr uint32_t kFirstPerTensorFormatVersion = 7;
constexpr uint32_t kFirstStaticFormatVersion = 8;
constexpr uint32_t kFirstF32TablesFormatVersion = 9;
constexpr uint32_t kFirstF16TablesFormatVersion = 10;
constexpr uint32_t kFirstResidualTablesFormatVersion = 11;

// The file's scheme, refused before the format version that added it.
Status scheme_since(QuantizationScheme scheme, uint32_t first_version, uint32_t version,
                    QuantizationScheme* out) {
  if (version < first_version) {
    return Status::error(StatusCode::kInvalidModel,
                         "quantization scheme %s needs format version %u or later (the file "
                         "says %u)",
                         quantization_scheme_name(scheme), first_version, version);
  }
  *out = scheme;
  return Status::ok();
}

// The scheme must be one the weight dtype implies (schema/edgemt.fbs); the
// smoothed one exists since format version 5, the per-tensor ones since 7
// and 8.
Status read_quantization(fb::QuantizationScheme in, DType weight_dtype, uint32_t version,
                         QuantizationScheme* out) {
  switch (in) {
    case fb::QuantizationScheme::None: *out = QuantizationScheme::kNone; break;
    case fb::QuantizationScheme::Int8PerRowDynamic: *out = QuantizationScheme::kInt8PerRowDynamic; break;
    case fb::QuantizationScheme::Int8SmoothedPerRowDynamic:
      EDGEMT_RETURN_IF_ERROR(scheme_since(QuantizationScheme::kInt8SmoothedPerRowDynamic,
                                          kFirstSmoothedFormatVersion, version, out));
      break;
    case fb::QuantizationScheme::Int8PerTensorDynamic:
      EDGEMT_RETURN_IF_ERROR(scheme_since(QuantizationScheme::kInt8PerTensorDynamic,
                                          kFirstPerTensorFormatVersion, version, out));
      break;
    case fb::QuantizationScheme::Int8PerTensorStatic:
      EDGEMT_RETURN_IF_ERROR(scheme_since(QuantizationScheme::kInt8PerTensorStatic,
                                          kFirstStaticFormatVersion, version, out));
      break;
    default:
      return Status::error(StatusCode::kUnsupported, "quantization scheme %d is not supported",
                           static_cast<int>(in));
  }
  const bool int8 = *out != QuantizationScheme::kNone;
  const QuantizationScheme implied =
      weight_dtype == DType::kI8 ? QuantizationScheme::kInt8PerRowDynamic : QuantizationScheme::kNone;
  if (int8 != (weight_dtype == DType::kI8)) {
    return Status::error(StatusCode::kInvalidModel,
                         "quantization scheme %s does not fit weight dtype %s (expected %s)",
                         quantization_scheme_name(*out), dtype_name(weight_dtype),
                         quantization_scheme_name(implied));
  }
  return Status::ok();
}

// f32_tables (version 9), f16_tables (version 10) and residual_tables
// (version 11), one flag at most, are for the per-row int8 schemes only (the
// per-tensor ones have F32 tables anyway, float files no tables to keep),
// and for the families that say their int8 files may have them.
Status read_float_table(const fb::Model& root, const FamilyConfig& family,
                        QuantizationScheme scheme, const char* flag, uint32_t first_version) {
  if (root.format_version() < first_version) {
    return Status::error(StatusCode::kInvalidModel,
                         "%s needs format version %u or later (the file says %u)", flag,
                         first_version, root.format_version());
  }
  if (scheme != QuantizationScheme::kInt8PerRowDynamic &&
      scheme != QuantizationScheme::kInt8SmoothedPerRowDynamic) {
    return Status::error(StatusCode::kInvalidModel,
                         "%s is set in a file of quantization scheme %s (only per-row "
                         "int8 files have it)",
                         flag, quantization_scheme_name(scheme));
  }
  const Family* record = find_family(family.id);
  if (record == nullptr || !record->int8_float_tables) {
    return Status::error(StatusCode::kInvalidModel,
                         "%s is set in a %s model (its family's int8 files keep their "
                         "tables as plain int8)",
                         flag, family_name(family.id));
  }
  return Status::ok();
}

Status read_float_tables(const fb::Model& root, const FamilyConfig& family,
                         QuantizationScheme scheme, bool* f32_tables, bool* f16_tables,
                         bool* residual_tables) {
  *f32_tables = root.f32_tables();
  *f16_tables = root.f16_tables();
  *residual_tables = root.residual_tables();
  if (*f32_tables && *f16_tables) return invalid("f32_tables and f16_tables are both set");
  if (*residual_tables && (*f32_tables || *f16_tables)) {
    return invalid("residual_tables is set with f32_tables or f16_tables (residual codes are "
                   "for I8 tables)");
  }
  if (*residual_tables) {
    // The same gates as float tables: a more precise lookup than the codes.
    return read_float_table(root, family, scheme, "residual_tables",
                            kFirstResidualTablesFormatVersion);
  }
  if (*f32_tables) {
    return read_float_table(root, family, scheme, "f32_tables", kFirstF32TablesFormatVersion);
  }
  if (*f16_tables) {
    return read_float_table(root, family, scheme, "f16_tables", kFirstF16TablesFormatVersion);
  }
  return Status::ok();
}

Status check_special_token(const char* which, int32_t id, uint32_t vocab_size) {
  if (id < 0 || static_cast<uint32_t>(id) >= vocab_size) {
    return Status::error(StatusCode::kInvalidModel,
                         "special token %s = %d is outside the vocabulary [0, %u)", which, id,
                         vocab_size);
  }
  return Status::ok();
}

// One side's tokenizer: its SentencePiece model (checksum, structure), its
// piece vocabulary and its unk/eos ids, for a side of `vocab` ids.
Status read_tokenizer(const fb::Tokenizer& tokenizer, const char* side, uint32_t vocab,
                      const SpecialTokens& special, VerifiedTokenizer* out) {
  if (tokenizer.kind() != fb::TokenizerKind::SentencePiece) {
    return Status::error(StatusCode::kUnsupported, "%s tokenizer kind %d is not supported", side,
                         static_cast<int>(tokenizer.kind()));
  }
  const flatbuffers::Vector<uint8_t>* spm = tokenizer.model();
  if (spm == nullptr || spm->size() == 0) {
    return Status::error(StatusCode::kInvalidModel, "model has an empty %s tokenizer model", side);
  }
  // The checksum first: storage corruption is named as such, even where the
  // damaged bytes would still be well-formed.
  const int64_t recorded = tokenizer.model_crc32();
  if (recorded != -1) {
    const uint32_t actual = crc32(spm->data(), spm->size());
    if (recorded < 0 || recorded > 0xffffffffll || static_cast<uint32_t>(recorded) != actual) {
      return Status::error(StatusCode::kInvalidModel,
                           "%s tokenizer model: CRC-32 is %08x, the file records %08llx (the file "
                           "is corrupt)",
                           side, actual, static_cast<unsigned long long>(recorded));
    }
  }
  const auto* pieces = tokenizer.pieces();
  // With a piece vocabulary, SentencePiece's own ids index nothing: its
  // pieces are looked up by string, so their count is not bounded by ours.
  EDGEMT_RETURN_IF_ERROR(
      verify_sentencepiece_model(spm->data(), spm->size(), pieces != nullptr ? kMaxVocabSize : vocab));
  out->model = spm->data();
  out->model_size = spm->size();
  out->pieces = pieces;
  out->piece_count = 0;
  if (pieces != nullptr) {
    if (pieces->size() != vocab) {
      return Status::error(StatusCode::kInvalidModel,
                           "the %s vocabulary has %u pieces, the model %u %s ids", side,
                           pieces->size(), vocab, side);
    }
    for (uint32_t i = 0; i < pieces->size(); ++i) {
      const flatbuffers::String* piece = pieces->Get(i);
      if (piece == nullptr || piece->size() == 0 || std::memchr(piece->data(), 0, piece->size())) {
        return Status::error(StatusCode::kInvalidModel,
                             "%s vocabulary piece %u is empty or holds a NUL byte", side, i);
      }
    }
    out->piece_count = pieces->size();
  }
  out->unk = tokenizer.unk_id() != -1 ? tokenizer.unk_id() : special.unk;
  out->eos = tokenizer.eos_id() != -1 ? tokenizer.eos_id() : special.eos;
  char which[32];
  std::snprintf(which, sizeof(which), "%s unk", side);
  EDGEMT_RETURN_IF_ERROR(check_special_token(which, out->unk, vocab));
  std::snprintf(which, sizeof(which), "%s eos", side);
  return check_special_token(which, out->eos, vocab);
}

Status read_search_rules(fb::SearchRules in, SearchRules* out) {
  switch (in) {
    case fb::SearchRules::Edgemt: *out = SearchRules::kEdgemt; return Status::ok();
    case fb::SearchRules::OpenNMT: *out = SearchRules::kOpenNMT; return Status::ok();
    case fb::SearchRules::Marian: *out = SearchRules::kMarian; return Status::ok();
    case fb::SearchRules::HuggingFace: *out = SearchRules::kHuggingFace; return Status::ok();
  }
  return Status::error(StatusCode::kUnsupported, "search rules %d are not supported",
                       static_cast<int>(in));
}

Status check_finite(const char* field, float value, float min) {
  if (!std::isfinite(value) || value < min) {
    return Status::error(StatusCode::kInvalidModel, "decoding.%s = %g must be finite and >= %g",
                         field, static_cast<double>(value), static_cast<double>(min));
  }
  return Status::ok();
}

// The lexical shortlist: lists that index only the vocabularies, so that
// computing a batch's candidates (search/shortlist.h) needs no checks.
Status read_shortlist(const fb::Model& root, uint32_t source_vocab, uint32_t vocab,
                      VerifiedModel* out) {
  out->has_shortlist = false;
  const fb::Shortlist* in = root.shortlist();
  if (in == nullptr) return Status::ok();
  const flatbuffers::Vector<uint32_t>* offsets = in->offsets();
  const flatbuffers::Vector<uint32_t>* targets = in->targets();
  const uint32_t target_count = targets != nullptr ? targets->size() : 0;
  if (offsets == nullptr || offsets->size() == 0) return invalid("the shortlist has no offsets");
  const uint32_t sources = offsets->size() - 1;
  if (sources > source_vocab) {
    return Status::error(StatusCode::kInvalidModel,
                         "the shortlist has lists for %u source ids, the source vocabulary %u",
                         sources, source_vocab);
  }
  if (in->first() > vocab) {
    return Status::error(StatusCode::kInvalidModel,
                         "the shortlist's first %u ids exceed the %u-token vocabulary",
                         in->first(), vocab);
  }
  if (offsets->Get(0) != 0 || offsets->Get(sources) != target_count) {
    return invalid("the shortlist's offsets do not run from 0 to its target count");
  }
  for (uint32_t s = 0; s < sources; ++s) {
    const uint32_t begin = offsets->Get(s);
    const uint32_t end = offsets->Get(s + 1);
    if (end < begin || end > target_count) {
      return Status::error(StatusCode::kInvalidModel,
                           "the shortlist's offsets fall at source id %u", s);
    }
    for (uint32_t i = begin; i < end; ++i) {
      const uint32_t id = targets->Get(i);
      if (id >= vocab || (i > begin && id <= targets->Get(i - 1))) {
        return Status::error(StatusCode::kInvalidModel,
                             "the shortlist of source id %u is not ascending ids below %u", s,
                             vocab);
      }
    }
  }
  LexicalShortlist& list = out->shortlist;
  list.first = in->first();
  list.best = in->best();
  list.add_source_ids = in->add_source_ids();
  list.offsets = offsets->data();
  list.source_ids = sources;
  list.targets = targets != nullptr ? targets->data() : nullptr;
  out->has_shortlist = true;
  return Status::ok();
}

// The decoding defaults (files before version 3 have none: edgemt's rules,
// pad and bos banned).
Status read_decoding(const fb::Model& root, uint32_t vocab, VerifiedModel* out) {
  DecodingDefaults& d = out->decoding;
  d = DecodingDefaults();
  out->default_banned[0] = out->special_tokens.pad;
  out->default_banned[1] = out->special_tokens.bos;
  d.banned_tokens = out->default_banned;
  d.banned_count = 2;
  const fb::Decoding* in = root.decoding();
  if (in == nullptr) return Status::ok();
  EDGEMT_RETURN_IF_ERROR(read_search_rules(in->rules(), &d.rules));
  d.beam_size = in->beam_size();
  if (d.beam_size < 1 || d.beam_size > kMaxBeam) {
    return Status::error(StatusCode::kInvalidModel, "decoding.beam_size = %u is out of range (1 to %zu)",
                         d.beam_size, kMaxBeam);
  }
  d.length_penalty = in->length_penalty();
  d.word_penalty = in->word_penalty();
  d.max_len_a = in->max_len_a();
  d.max_len_b = in->max_len_b();
  EDGEMT_RETURN_IF_ERROR(check_finite("length_penalty", d.length_penalty, -1e6f));
  EDGEMT_RETURN_IF_ERROR(check_finite("word_penalty", d.word_penalty, -1e6f));
  EDGEMT_RETURN_IF_ERROR(check_finite("max_len_a", d.max_len_a, 0.0f));
  EDGEMT_RETURN_IF_ERROR(check_finite("max_len_b", d.max_len_b, -1e9f));
  d.banned_count = 0;
  d.banned_tokens = nullptr;
  if (const auto* banned = in->banned_tokens()) {
    if (banned->size() > vocab) {
      return Status::error(StatusCode::kInvalidModel, "decoding bans %u tokens of a %u-token vocabulary",
                           banned->size(), vocab);
    }
    for (uint32_t i = 0; i < banned->size(); ++i) {
      EDGEMT_RETURN_IF_ERROR(check_special_token("banned", banned->Get(i), vocab));
    }
    d.banned_tokens = banned->data();
    d.banned_count = banned->size();
  }
  return Status::ok();
}

Status read_header(const fb::Model& root, VerifiedModel* out) {
  EDGEMT_RETURN_IF_ERROR(read_family_config(root, &out->family));
  EDGEMT_RETURN_IF_ERROR(read_weight_dtype(root.weight_dtype(), &out->weight_dtype));
  EDGEMT_RETURN_IF_ERROR(read_quantization(root.quantization(), out->weight_dtype,
                                           root.format_version(), &out->quantization));
  EDGEMT_RETURN_IF_ERROR(read_float_tables(root, out->family, out->quantization,
                                           &out->f32_tables, &out->f16_tables,
                                           &out->residual_tables));

  const fb::SpecialTokens* special = root.special_tokens();
  if (special == nullptr) return invalid("model has no special tokens");
  const uint32_t vocab = family_vocab_size(out->family);
  EDGEMT_RETURN_IF_ERROR(check_special_token("pad", special->pad(), vocab));
  EDGEMT_RETURN_IF_ERROR(check_special_token("unk", special->unk(), vocab));
  EDGEMT_RETURN_IF_ERROR(check_special_token("bos", special->bos(), vocab));
  EDGEMT_RETURN_IF_ERROR(check_special_token("eos", special->eos(), vocab));
  EDGEMT_RETURN_IF_ERROR(check_special_token("decoder_start", special->decoder_start(), vocab));
  out->special_tokens.pad = special->pad();
  out->special_tokens.unk = special->unk();
  out->special_tokens.bos = special->bos();
  out->special_tokens.eos = special->eos();
  out->special_tokens.decoder_start = special->decoder_start();

  const fb::Tokenizer* tokenizer = root.tokenizer();
  if (tokenizer == nullptr) return invalid("model has no tokenizer");
  const uint32_t source_vocab = family_source_vocab_size(out->family);
  VerifiedTokenizer& source = out->tokenizers[static_cast<size_t>(TextSide::kSource)];
  VerifiedTokenizer& target = out->tokenizers[static_cast<size_t>(TextSide::kTarget)];
  EDGEMT_RETURN_IF_ERROR(read_tokenizer(*tokenizer, "source", source_vocab, out->special_tokens, &source));
  if (const fb::Tokenizer* own = root.target_tokenizer()) {
    EDGEMT_RETURN_IF_ERROR(read_tokenizer(*own, "target", vocab, out->special_tokens, &target));
  } else {
    if (source_vocab != vocab) {
      return Status::error(StatusCode::kInvalidModel,
                           "the source vocabulary (%u ids) differs from the target's (%u) but the "
                           "model has one tokenizer",
                           source_vocab, vocab);
    }
    target = source;
  }
  out->append_eos_to_source = tokenizer->append_eos_to_source();
  EDGEMT_RETURN_IF_ERROR(read_decoding(root, vocab, out));
  EDGEMT_RETURN_IF_ERROR(read_shortlist(root, source_vocab, vocab, out));

  out->source_language = string_or_empty(root.source_language());
  out->target_language = string_or_empty(root.target_language());
  if (const fb::Provenance* provenance = root.provenance()) {
    out->provenance.source_format = string_or_empty(provenance->source_format());
    out->provenance.source_checkpoint = string_or_empty(provenance->source_checkpoint());
    out->provenance.source_sha256 = string_or_empty(provenance->source_sha256());
    out->provenance.converter_version = string_or_empty(provenance->converter_version());
    out->provenance.created_utc = string_or_empty(provenance->created_utc());
  }
  out->format_version = root.format_version();
  return Status::ok();
}

// ---- Step 6: tensor entries -----------------------------------------------

bool read_tensor_dtype(fb::DType in, DType* out) {
  switch (in) {
    case fb::DType::F32: *out = DType::kF32; return true;
    case fb::DType::F16: *out = DType::kF16; return true;
    case fb::DType::I8: *out = DType::kI8; return true;
  }
  return false;
}

Status read_tensor(const fb::Tensor& in, size_t index, const uint8_t* segment,
                   uint64_t weights_size, TensorView* out) {
  const flatbuffers::String* name = in.name();
  if (name == nullptr || name->size() == 0) {
    return Status::error(StatusCode::kInvalidModel, "tensor %zu has no name", index);
  }
  // Names are used as C strings (strcmp, printf): no embedded NUL.
  if (std::strlen(name->c_str()) != name->size()) {
    return Status::error(StatusCode::kInvalidModel, "tensor %zu has a name with a NUL byte",
                         index);
  }
  out->name = name->c_str();

  const flatbuffers::Vector<uint32_t>* shape = in.shape();
  const uint32_t rank = shape != nullptr ? shape->size() : 0;
  if (rank < 1 || rank > kMaxTensorRank) {
    return Status::error(StatusCode::kInvalidModel,
                         "tensor '%s' has rank %u (ranks 1 to %u are supported)", out->name, rank,
                         kMaxTensorRank);
  }
  out->rank = rank;
  uint64_t elements = 1;
  bool overflow = false;
  for (uint32_t i = 0; i < rank; ++i) {
    out->shape[i] = shape->Get(i);
    overflow |= __builtin_mul_overflow(elements, uint64_t{out->shape[i]}, &elements);
  }

  if (!read_tensor_dtype(in.dtype(), &out->dtype)) {
    return Status::error(StatusCode::kInvalidModel, "tensor '%s' has unknown dtype %d", out->name,
                         static_cast<int>(in.dtype()));
  }

  const uint64_t offset = in.offset();
  const uint64_t size = in.size();
  if (offset % kWeightAlignment != 0) {
    return Status::error(StatusCode::kInvalidModel,
                         "tensor '%s' offset %llu is not a multiple of %llu", out->name,
                         static_cast<unsigned long long>(offset),
                         static_cast<unsigned long long>(kWeightAlignment));
  }
  if (offset > weights_size || size > weights_size - offset) {
    return Status::error(StatusCode::kInvalidModel,
                         "tensor '%s' (offset %llu, %llu bytes) lies outside the weight segment "
                         "(%llu bytes)",
                         out->name, static_cast<unsigned long long>(offset),
                         static_cast<unsigned long long>(size),
                         static_cast<unsigned long long>(weights_size));
  }
  uint64_t expected_size = 0;
  overflow |= __builtin_mul_overflow(elements, uint64_t{dtype_size(out->dtype)}, &expected_size);
  if (overflow || size != expected_size) {
    char shape_text[64];
    format_shape(shape_text, sizeof(shape_text), out->shape, rank);
    return Status::error(StatusCode::kInvalidModel,
                         "tensor '%s' has %llu bytes, but shape %s of %s needs %s%llu", out->name,
                         static_cast<unsigned long long>(size), shape_text,
                         dtype_name(out->dtype), overflow ? "more than " : "",
                         static_cast<unsigned long long>(overflow ? UINT64_MAX : expected_size));
  }
  out->offset = offset;
  out->size_bytes = size;
  out->data = segment + offset;
  return Status::ok();
}

Status read_tensors(const fb::Model& root, const uint8_t* segment, VerifiedModel* out) {
  const auto* tensors = root.tensors();
  const size_t count = tensors != nullptr ? tensors->size() : 0;
  if (count == 0) return invalid("model has no tensors");
  if (count > kMaxTensors) {
    return Status::error(StatusCode::kInvalidModel, "model has %zu tensors; the limit is %u", count,
                         kMaxTensors);
  }
  out->tensors.reset(new (std::nothrow) TensorView[count]);
  if (!out->tensors) {
    return Status::error(StatusCode::kOutOfMemory, "cannot allocate the tensor table (%zu entries)",
                         count);
  }
  out->tensor_count = count;
  for (size_t i = 0; i < count; ++i) {
    EDGEMT_RETURN_IF_ERROR(
        read_tensor(*tensors->Get(static_cast<flatbuffers::uoffset_t>(i)), i, segment,
                    out->weights_size, &out->tensors[i]));
    if (i > 0) {
      const int order = std::strcmp(out->tensors[i - 1].name, out->tensors[i].name);
      if (order == 0) {
        return Status::error(StatusCode::kInvalidModel, "duplicate tensor '%s'",
                             out->tensors[i].name);
      }
      if (order > 0) {
        return Status::error(StatusCode::kInvalidModel,
                             "tensor table is not sorted by name ('%s' comes before '%s')",
                             out->tensors[i - 1].name, out->tensors[i].name);
      }
    }
  }
  return Status::ok();
}

// ---- Step 7: layout ---------------------------------------------------------

struct LayoutCheck {
  const TensorView* tensors;
  size_t count;
  bool* seen;  // [count]
  QuantizationScheme scheme;
  Status status;
};

bool check_expected(const ExpectedTensor& expected, LayoutCheck* check);

// A projection matrix that owns its bytes has, in a smoothed int8 file, its
// smoothing vector `<name>_smooth` [in], in an Int8PerTensorStatic file its
// activation multiplier `<name>_input_scale` [1]; both F32
// (schema/edgemt.fbs).
bool check_projection_vector(const ExpectedTensor& matrix, LayoutCheck* check) {
  const bool smoothed = check->scheme == QuantizationScheme::kInt8SmoothedPerRowDynamic;
  const bool fixed_range = check->scheme == QuantizationScheme::kInt8PerTensorStatic;
  if (!(smoothed || fixed_range) || !matrix.projection || matrix.alias_of != nullptr) return true;
  const char* suffix = smoothed ? "_smooth" : "_input_scale";
  ExpectedTensor vector;
  if (!format_tensor_name(vector.name, sizeof(vector.name), "%s%s", matrix.name, suffix)) {
    check->status = Status::error(StatusCode::kInvalidModel, "tensor name '%s%s' is too long",
                                  matrix.name, suffix);
    return false;
  }
  vector.role = TensorRole::kVector;
  vector.dtype = DType::kF32;
  vector.rank = 1;
  vector.shape[0] = smoothed ? matrix.shape[1] : 1;
  return check_expected(vector, check);
}

bool check_expected(const ExpectedTensor& expected, LayoutCheck* check) {
  // An int8 file's F16 tables (f16_tables) serve lookups only: the runtime
  // has no F16 product beside int8 ones, so a projection must not share one.
  if (expected.role == TensorRole::kMatrix && expected.projection &&
      expected.alias_of != nullptr && expected.dtype == DType::kF16 &&
      check->scheme != QuantizationScheme::kNone) {
    check->status = Status::error(StatusCode::kInvalidModel,
                                  "tensor '%s' is tied to an F16 embedding table, which int8 "
                                  "files keep for lookups only (f16_tables needs it untied)",
                                  expected.name);
    return false;
  }
  const TensorView* tensor = find_tensor_view(check->tensors, check->count, expected.name);
  if (tensor == nullptr) {
    check->status = Status::error(StatusCode::kInvalidModel,
                                  "model has no tensor '%s' (its config implies one)",
                                  expected.name);
    return false;
  }
  check->seen[tensor - check->tensors] = true;
  bool same_shape = tensor->rank == expected.rank;
  for (uint32_t i = 0; same_shape && i < expected.rank; ++i) {
    same_shape = tensor->shape[i] == expected.shape[i];
  }
  if (!same_shape) {
    char found[64];
    char implied[64];
    format_shape(found, sizeof(found), tensor->shape, tensor->rank);
    format_shape(implied, sizeof(implied), expected.shape, expected.rank);
    check->status = Status::error(StatusCode::kInvalidModel,
                                  "tensor '%s' has shape %s, config implies %s", expected.name,
                                  found, implied);
    return false;
  }
  if (tensor->dtype != expected.dtype) {
    check->status = Status::error(
        StatusCode::kInvalidModel, "tensor '%s' has dtype %s, expected %s (%s)", expected.name,
        dtype_name(tensor->dtype), dtype_name(expected.dtype),
        expected.role == TensorRole::kMatrix     ? "the model's weight dtype"
        : expected.role == TensorRole::kResidual ? "always i8"
                                                 : "always f32");
    return false;
  }
  if (expected.alias_of != nullptr) {
    // The owner comes earlier in the enumeration, so it is known to exist.
    const TensorView* owner = find_tensor_view(check->tensors, check->count, expected.alias_of);
    if (owner == nullptr || owner->offset != tensor->offset ||
        owner->size_bytes != tensor->size_bytes) {
      check->status = Status::error(StatusCode::kInvalidModel,
                                    "tensor '%s' must share its bytes with '%s' (the config "
                                    "ties them)",
                                    expected.name, expected.alias_of);
      return false;
    }
  }
  return expected.role != TensorRole::kMatrix || check_projection_vector(expected, check);
}

Status check_layout(const VerifiedModel& model) {
  std::unique_ptr<bool[]> seen(new (std::nothrow) bool[model.tensor_count]());
  if (!seen) return Status::error(StatusCode::kOutOfMemory, "cannot allocate verifier scratch");
  LayoutCheck check{model.tensors.get(), model.tensor_count, seen.get(), model.quantization,
                    Status::ok()};
  const bool complete = for_each_expected_tensor(
      model.family,
      weight_types(model.weight_dtype, model.quantization, model.f32_tables, model.f16_tables,
                   model.residual_tables),
      [](const ExpectedTensor& expected, void* context) {
        return check_expected(expected, static_cast<LayoutCheck*>(context));
      },
      &check);
  if (!complete) return check.status;
  for (size_t i = 0; i < model.tensor_count; ++i) {
    if (!seen[i]) {
      return Status::error(StatusCode::kInvalidModel,
                           "unexpected tensor '%s' (the config does not imply it)",
                           model.tensors[i].name);
    }
  }
  return Status::ok();
}

// ---- Step 8: values -------------------------------------------------------

// "[12, 7]": the coordinates of flat element `index` of `tensor`.
void format_coordinates(char* buffer, size_t size, const TensorView& tensor, uint64_t index) {
  uint32_t coordinates[kMaxTensorRank] = {};
  for (uint32_t i = tensor.rank; i-- > 0;) {
    coordinates[i] = tensor.shape[i] == 0 ? 0 : static_cast<uint32_t>(index % tensor.shape[i]);
    index = tensor.shape[i] == 0 ? 0 : index / tensor.shape[i];
  }
  format_shape(buffer, size, coordinates, tensor.rank);
}

Status bad_value(const TensorView& tensor, uint64_t index, const char* what, const char* rule) {
  char at[64];
  format_coordinates(at, sizeof(at), tensor, index);
  return Status::error(StatusCode::kInvalidModel, "tensor '%s' holds %s at %s: %s", tensor.name,
                       what, at, rule);
}

const char* describe_f32(float value) {
  return std::isnan(value) ? "NaN" : (value > 0.0f ? "+inf" : "-inf");
}

// Values [begin, end) of one tensor: finite floats (and, for int8 row
// scales, >= 0: 0 only for an all-zero row), int8 codes in [-127, 127].
Status check_tensor_values(const TensorView& tensor, size_t begin, size_t end) {
  const size_t count = end - begin;
  switch (tensor.dtype) {
    case DType::kF32: {
      const float* values = static_cast<const float*>(tensor.data) + begin;
      const size_t at = find_non_finite_f32(values, count);
      if (at != count) {
        return bad_value(tensor, begin + at, describe_f32(values[at]), "weights must be finite");
      }
      const size_t length = std::strlen(tensor.name);
      const bool smooth = length >= 7 && std::strcmp(tensor.name + length - 7, "_smooth") == 0;
      const bool input = length >= 12 && std::strcmp(tensor.name + length - 12, "_input_scale") == 0;
      if (!input && length >= 6 && std::strcmp(tensor.name + length - 6, "_scale") == 0) {
        for (size_t r = 0; r < count; ++r) {
          if (values[r] < 0.0f) {
            return bad_value(tensor, begin + r, "a negative value", "int8 row scales must be >= 0");
          }
        }
      }
      for (size_t k = 0; (smooth || input) && k < count; ++k) {
        if (!(values[k] > 0.0f)) {
          return bad_value(tensor, begin + k, values[k] == 0.0f ? "zero" : "a negative value",
                           smooth ? "int8 smoothing vectors must be > 0"
                                  : "int8 input scales must be > 0");
        }
      }
      return Status::ok();
    }
    case DType::kF16: {
      const uint16_t* values = static_cast<const uint16_t*>(tensor.data) + begin;
      const size_t at = find_non_finite_f16(values, count);
      if (at == count) return Status::ok();
      const bool nan = (values[at] & 0x3ff) != 0;
      return bad_value(tensor, begin + at, nan ? "NaN" : ((values[at] & 0x8000) ? "-inf" : "+inf"),
                       "weights must be finite");
    }
    case DType::kI8: {
      const size_t length = std::strlen(tensor.name);
      if (length >= 9 && std::strcmp(tensor.name + length - 9, "_residual") == 0) {
        // Residual codes, two per byte, each in [-7, 7]: no 4-bit half is 8 (-8).
        const uint8_t* bytes = static_cast<const uint8_t*>(tensor.data) + begin;
        for (size_t i = 0; i < count; ++i) {
          if ((bytes[i] & 0x0F) == 0x08 || (bytes[i] & 0xF0) == 0x80) {
            return bad_value(tensor, begin + i, "the residual code -8",
                             "residual codes are in [-7, 7]");
          }
        }
        return Status::ok();
      }
      const size_t at = find_int8_min(static_cast<const int8_t*>(tensor.data) + begin, count);
      if (at == count) return Status::ok();
      return bad_value(tensor, begin + at, "the int8 code -128",
                       "Int8PerRowDynamic codes are in [-127, 127]");
    }
  }
  return Status::ok();
}

// CRC-32C of the weight segment, fed in file order as the value check walks
// it, so that each piece is checksummed while it is still in the cache.
class SegmentChecksum {
 public:
  SegmentChecksum(const uint8_t* segment, bool enabled) : segment_(segment), enabled_(enabled) {}
  // Covers the segment up to `end` (bytes from its start); nothing when
  // already there.
  void cover_to(uint64_t end) {
    if (!enabled_ || end <= covered_) return;
    crc_ = kernels::crc32c(segment_ + covered_, static_cast<size_t>(end - covered_), crc_);
    covered_ = end;
  }
  uint32_t value() const { return crc_; }

 private:
  const uint8_t* segment_;
  bool enabled_;
  uint64_t covered_ = 0;
  uint32_t crc_ = 0;
};

// Bytes per piece of a tensor: its values checked, then checksummed while
// in L2.
constexpr size_t kCheckPieceBytes = size_t{256} << 10;

// Checks each stored tensor once: aliases share their owner's bytes, so
// tensors are visited in offset order and a repeat of the previous
// (offset, size) is skipped. With `checksum` enabled every byte of the
// segment, gaps included, is fed to it on the way.
Status check_values(const VerifiedModel& model, SegmentChecksum* checksum,
                    const VerifyOptions& options) {
  std::unique_ptr<uint32_t[]> order(new (std::nothrow) uint32_t[model.tensor_count]);
  if (!order) return Status::error(StatusCode::kOutOfMemory, "cannot allocate verifier scratch");
  for (size_t i = 0; i < model.tensor_count; ++i) order[i] = static_cast<uint32_t>(i);
  const TensorView* tensors = model.tensors.get();
  std::sort(order.get(), order.get() + model.tensor_count, [tensors](uint32_t a, uint32_t b) {
    return tensors[a].offset != tensors[b].offset ? tensors[a].offset < tensors[b].offset
                                                  : std::strcmp(tensors[a].name, tensors[b].name) < 0;
  });
  for (size_t k = 0; k < model.tensor_count; ++k) {
    const TensorView& tensor = tensors[order[k]];
    if (k > 0) {
      const TensorView& previous = tensors[order[k - 1]];
      if (previous.offset == tensor.offset && previous.size_bytes == tensor.size_bytes &&
          previous.dtype == tensor.dtype) {
        continue;
      }
    }
    const size_t count = static_cast<size_t>(tensor.element_count());
    const size_t element_bytes = count == 0 ? 1 : static_cast<size_t>(tensor.size_bytes / count);
    const size_t piece = kCheckPieceBytes / element_bytes;
    checksum->cover_to(tensor.offset);
    for (size_t begin = 0; begin < count; begin += piece) {
      const size_t end = std::min(count, begin + piece);
      // Values first: their scan streams the piece in from memory at full
      // speed (one sequential stream), then the checksum's three chains read
      // it from L2 (reading it first from memory they ran at about half).
      EDGEMT_RETURN_IF_ERROR(check_tensor_values(tensor, begin, end));
      checksum->cover_to(tensor.offset + end * element_bytes);
    }
    if (options.checked != nullptr) options.checked(options.context, tensor);
  }
  checksum->cover_to(model.weights_size);
  return Status::ok();
}

}  // namespace

// ---- Public -----------------------------------------------------------------

const char* vocabulary_piece(const VerifiedTokenizer& tokenizer, size_t id, size_t* length) {
  const auto* pieces =
      static_cast<const flatbuffers::Vector<flatbuffers::Offset<flatbuffers::String>>*>(tokenizer.pieces);
  if (pieces == nullptr || id >= tokenizer.piece_count) {
    if (length != nullptr) *length = 0;
    return "";
  }
  const flatbuffers::String* piece = pieces->Get(static_cast<flatbuffers::uoffset_t>(id));
  if (length != nullptr) *length = piece->size();
  return piece->data();
}

const TensorView* find_tensor_view(const TensorView* tensors, size_t count, const char* name) {
  if (tensors == nullptr || name == nullptr) return nullptr;
  size_t low = 0;
  size_t high = count;
  while (low < high) {
    const size_t mid = low + (high - low) / 2;
    const int order = std::strcmp(tensors[mid].name, name);
    if (order == 0) return &tensors[mid];
    if (order < 0) {
      low = mid + 1;
    } else {
      high = mid;
    }
  }
  return nullptr;
}

void format_shape(char* buffer, size_t size, const uint32_t* shape, uint32_t rank) {
  if (buffer == nullptr || size == 0) return;
  // Worst case "[4294967295, 4294967295, 4294967295, 4294967295]" is 49 bytes.
  char text[64];
  size_t used = 0;
  text[used++] = '[';
  for (uint32_t i = 0; i < rank && i < kMaxTensorRank; ++i) {
    if (i > 0) {
      text[used++] = ',';
      text[used++] = ' ';
    }
    const int n = std::snprintf(text + used, sizeof(text) - used, "%u", shape[i]);
    if (n > 0) used += static_cast<size_t>(n);
  }
  text[used++] = ']';
  text[used] = '\0';
  std::snprintf(buffer, size, "%s", text);
}

Status verify_model(const uint8_t* data, size_t size, VerifiedModel* out,
                    const VerifyOptions& options) {
  if (data == nullptr || out == nullptr) {
    return Status::error(StatusCode::kInvalidArgument, "verify_model: null argument");
  }
  const fb::Model* root = nullptr;
  uint32_t fb_size = 0;
  IntegrityTrailer trailer;
  EDGEMT_RETURN_IF_ERROR(
      verify_container(data, size, options.verify_checksum, &root, &fb_size, &trailer));
  if (root == nullptr) return invalid("model FlatBuffer has no root table");
  const bool has_trailer = root->format_version() >= kFirstChecksummedFormatVersion;

  // Step 5 (checked here, before the header, for step 3b): the weight segment.
  uint64_t segment = 0;
  const uint64_t weights_size = root->weights_size();
  EDGEMT_RETURN_IF_ERROR(
      segment_bounds(uint64_t{kSizePrefixBytes} + fb_size, weights_size, size, &segment));
  EDGEMT_RETURN_IF_ERROR(read_header(*root, out));
  out->weights_offset = segment;
  out->weights_size = weights_size;
  out->checksum.present = has_trailer;
  out->checksum.header_crc32c = trailer.header_crc32c;
  out->checksum.weights_crc32c = trailer.weights_crc32c;

  EDGEMT_RETURN_IF_ERROR(read_tensors(*root, data + segment, out));
  EDGEMT_RETURN_IF_ERROR(check_layout(*out));
  SegmentChecksum checksum(data + segment, has_trailer && options.verify_checksum);
  EDGEMT_RETURN_IF_ERROR(check_values(*out, &checksum, options));
  if (has_trailer && options.verify_checksum) {
    EDGEMT_RETURN_IF_ERROR(check_weights_checksum(checksum.value(), trailer));
    out->checksum.verified = true;
  }
  return Status::ok();
}

}  // namespace edgemt
