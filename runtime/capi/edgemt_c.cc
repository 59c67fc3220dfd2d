// The C API (edgemt/edgemt.h) over the core: model, translator, translate,
// detokenize. The text part (tokenizer, translate_text) is in
// runtime/text/edgemt_c_text.cc, in the text library.
//
// Each handle wraps the C++ object. A translator's run-phase arena holds,
// after the C++ Translator's own buffers, the TokenSpan and Translation
// arrays edgemt_translate() converts the caller's C structs into: so a
// caller arena makes translation allocation-free through this API too.
#include "edgemt/edgemt.h"

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <new>

#include "capi/handles.h"
#include "edgemt/limits.h"
#include "format/protobuf_reader.h"

namespace {

using edgemt::Status;
using edgemt::StatusCode;

constexpr size_t kArenaAlignment = EDGEMT_ARENA_ALIGNMENT;
static_assert(kArenaAlignment == 64, "the C++ Translator's arena alignment (core/arena.h)");
static_assert(static_cast<int>(StatusCode::kNumericError) == EDGEMT_NUMERIC_ERROR,
              "edgemt_code mirrors edgemt::StatusCode");

size_t round_up(size_t bytes) { return (bytes + kArenaAlignment - 1) / kArenaAlignment * kArenaAlignment; }

// Bytes of the C API's own arrays at the end of the arena.
size_t conversion_bytes(size_t max_batch) {
  return round_up(max_batch * sizeof(edgemt::TokenSpan)) +
         round_up(max_batch * sizeof(edgemt::Translation));
}

edgemt::Limits to_limits(const edgemt_limits& l) {
  edgemt::Limits limits;
  limits.max_batch = l.max_batch;
  limits.max_source_len = l.max_source_len;
  limits.max_beam = l.max_beam;
  limits.max_target_len = l.max_target_len;
  limits.attention = l.attention != 0;
  limits.attention_layer = l.attention_layer;
  limits.attention_head = l.attention_head;
  return limits;
}

edgemt::DecodeOptions to_decode(const edgemt_decode_options& o) {
  edgemt::DecodeOptions decode;
  decode.beam_size = o.beam_size;
  decode.length_penalty = o.length_penalty;
  decode.max_len_a = o.max_len_a;
  decode.max_len_b = o.max_len_b;
  decode.word_penalty = o.word_penalty;
  return decode;
}

// SentencePiece ModelProto: field 1 = pieces (SentencePiece: 1 piece, 3 type).
constexpr uint32_t kModelPieces = 1;
constexpr uint32_t kPieceText = 1;
constexpr uint32_t kPieceType = 3;
constexpr uint64_t kTypeUnknown = 2, kTypeControl = 3, kTypeUnused = 5, kTypeByte = 6;

// Fills model->pieces from the target side's vocabulary or SentencePiece
// model (verified at load, so malformed input here is an error, not a crash).
Status index_target_pieces(edgemt_model* model) {
  const edgemt::Model& m = *model->model;
  const edgemt::TextSide target = edgemt::TextSide::kTarget;
  const size_t count = m.vocab_size();
  const size_t vocabulary = m.vocabulary_size(target);
  size_t sp_size = 0;
  const uint8_t* sp = m.tokenizer_model(target, &sp_size);
  if (vocabulary == 0 && sp_size == 0) return Status::ok();  // detokenize says UNSUPPORTED
  model->pieces = new (std::nothrow) edgemt_model::Piece[count]();
  if (model->pieces == nullptr) {
    return Status::error(StatusCode::kOutOfMemory, "cannot allocate the piece table (%zu pieces)", count);
  }
  model->piece_count = count;
  if (vocabulary != 0) {
    for (size_t id = 0; id < count && id < vocabulary; ++id) {
      size_t length = 0;
      model->pieces[id].text = m.vocabulary_piece(target, id, &length);
      model->pieces[id].length = length;
    }
    model->pieces[static_cast<size_t>(m.unk_id(target))].kind = edgemt_model::kUnknown;
    return Status::ok();
  }
  edgemt::ProtobufReader reader(sp, sp_size);
  edgemt::ProtobufField field;
  size_t id = 0;
  while (reader.next(&field)) {
    if (field.number != kModelPieces || field.wire_type != 2) continue;
    if (id >= count) break;  // pieces beyond the model's ids are never produced
    edgemt::ProtobufReader piece_reader(field.bytes, field.length);
    edgemt::ProtobufField piece_field;
    edgemt_model::Piece& piece = model->pieces[id++];
    while (piece_reader.next(&piece_field)) {
      if (piece_field.number == kPieceText && piece_field.wire_type == 2) {
        piece.text = reinterpret_cast<const char*>(piece_field.bytes);
        piece.length = piece_field.length;
      } else if (piece_field.number == kPieceType && piece_field.wire_type == 0) {
        const uint64_t type = piece_field.value;
        piece.kind = type == kTypeUnknown                          ? edgemt_model::kUnknown
                     : type == kTypeControl || type == kTypeUnused ? edgemt_model::kSkipped
                     : type == kTypeByte                           ? edgemt_model::kByte
                                                                   : edgemt_model::kNormal;
      }
    }
    if (piece_reader.failed()) {
      return Status::error(StatusCode::kInvalidModel, "target SentencePiece model: %s",
                           piece_reader.error());
    }
  }
  if (reader.failed()) {
    return Status::error(StatusCode::kInvalidModel, "target SentencePiece model: %s", reader.error());
  }
  return Status::ok();
}

edgemt_code finish_open(std::unique_ptr<edgemt::Model> loaded, edgemt_model** out,
                        edgemt_error* error) {
  edgemt_model* model = new (std::nothrow) edgemt_model;
  if (model == nullptr) {
    return edgemt::capi::fail(error, StatusCode::kOutOfMemory, "cannot allocate the model handle");
  }
  model->model = std::move(loaded);
  const Status indexed = index_target_pieces(model);
  if (!indexed.is_ok()) {
    edgemt_model_free(model);
    return edgemt::capi::report(error, indexed);
  }
  *out = model;
  return edgemt::capi::report(error, Status::ok());
}

}  // namespace

namespace edgemt {
namespace capi {

edgemt_code report(edgemt_error* error, const Status& status) {
  if (error != nullptr) {
    error->code = static_cast<edgemt_code>(status.code());
    std::snprintf(error->message, sizeof(error->message), "%s", status.message());
  }
  return static_cast<edgemt_code>(status.code());
}

edgemt_code fail(edgemt_error* error, StatusCode code, const char* message) {
  return report(error, Status::error(code, "%s", message));
}

}  // namespace capi
}  // namespace edgemt

edgemt_model::~edgemt_model() { delete[] pieces; }

using edgemt::capi::fail;
using edgemt::capi::report;

extern "C" {

const char* edgemt_version(void) {
#define EDGEMT_STRINGIFY_(x) #x
#define EDGEMT_STRINGIFY(x) EDGEMT_STRINGIFY_(x)
  return EDGEMT_STRINGIFY(EDGEMT_VERSION_MAJOR) "." EDGEMT_STRINGIFY(
      EDGEMT_VERSION_MINOR) "." EDGEMT_STRINGIFY(EDGEMT_VERSION_PATCH);
}

uint32_t edgemt_format_version(void) { return edgemt::kFormatVersion; }
uint32_t edgemt_oldest_format_version(void) { return edgemt::kOldestFormatVersion; }

const char* edgemt_code_name(edgemt_code code) {
  if (static_cast<int>(code) < 0 || code > EDGEMT_NUMERIC_ERROR) return "unknown";
  return edgemt::status_code_name(static_cast<StatusCode>(code));
}

// ---- Model ------------------------------------------------------------------

edgemt_code edgemt_model_open(const char* path, edgemt_model** out, edgemt_error* error) {
  return edgemt_model_open_with(path, 0, out, error);
}

edgemt_code edgemt_model_open_memory(const void* data, size_t size, edgemt_model** out,
                                     edgemt_error* error) {
  return edgemt_model_open_memory_with(data, size, 0, out, error);
}

edgemt_code edgemt_model_open_with(const char* path, uint32_t flags, edgemt_model** out,
                                   edgemt_error* error) {
  if (path == nullptr || out == nullptr) {
    return fail(error, StatusCode::kInvalidArgument, "edgemt_model_open: path and out must not be NULL");
  }
  if ((flags & ~(EDGEMT_OPEN_COPY | EDGEMT_OPEN_SKIP_CHECKSUM)) != 0) {
    return report(error, Status::error(StatusCode::kInvalidArgument,
                                       "edgemt_model_open_with: unknown flags 0x%x", flags));
  }
  edgemt::LoadOptions options;
  options.mode = (flags & EDGEMT_OPEN_COPY) != 0 ? edgemt::LoadMode::kCopy : edgemt::LoadMode::kMap;
  options.verify_checksum = (flags & EDGEMT_OPEN_SKIP_CHECKSUM) == 0;
  std::unique_ptr<edgemt::Model> loaded;
  const Status status = edgemt::Model::load(path, options, &loaded);
  if (!status.is_ok()) return report(error, status);
  return finish_open(std::move(loaded), out, error);
}

edgemt_code edgemt_model_open_memory_with(const void* data, size_t size, uint32_t flags,
                                          edgemt_model** out, edgemt_error* error) {
  if (data == nullptr || out == nullptr) {
    return fail(error, StatusCode::kInvalidArgument,
                "edgemt_model_open_memory: data and out must not be NULL");
  }
  if ((flags & ~uint32_t{EDGEMT_OPEN_SKIP_CHECKSUM}) != 0) {
    return report(error, Status::error(StatusCode::kInvalidArgument,
                                       "edgemt_model_open_memory_with: flags 0x%x: only "
                                       "EDGEMT_OPEN_SKIP_CHECKSUM applies to a buffer",
                                       flags));
  }
  if (reinterpret_cast<uintptr_t>(data) % EDGEMT_MODEL_ALIGNMENT != 0) {
    return report(error, Status::error(StatusCode::kInvalidArgument,
                                       "edgemt_model_open_memory: the model buffer at %p is not "
                                       "%d-byte aligned (EDGEMT_MODEL_ALIGNMENT)",
                                       data, EDGEMT_MODEL_ALIGNMENT));
  }
  edgemt::LoadOptions options;
  options.verify_checksum = (flags & EDGEMT_OPEN_SKIP_CHECKSUM) == 0;
  std::unique_ptr<edgemt::Model> loaded;
  const Status status = edgemt::Model::from_buffer(data, size, options, &loaded);
  if (!status.is_ok()) return report(error, status);
  return finish_open(std::move(loaded), out, error);
}

void edgemt_model_free(edgemt_model* model) { delete model; }

edgemt_code edgemt_model_get_info(const edgemt_model* model, edgemt_model_info* out,
                                  edgemt_error* error) {
  if (model == nullptr || out == nullptr) {
    return fail(error, StatusCode::kInvalidArgument, "edgemt_model_get_info: model and out must not be NULL");
  }
  const edgemt::Model& m = *model->model;
  edgemt_model_info info;
  info.format_version = m.format_version();
  info.family = m.family();
  info.source_language = m.source_language();
  info.target_language = m.target_language();
  info.weight_dtype = edgemt::dtype_name(m.weight_dtype());
  info.source_vocab_size = m.source_vocab_size();
  info.target_vocab_size = m.vocab_size();
  info.max_sequence_length = m.max_sequence_length();
  info.source_eos_id = m.eos_id(edgemt::TextSide::kSource);
  info.append_eos_to_source = m.append_eos_to_source() ? 1 : 0;
  size_t tokenizer_bytes = 0;
  (void)m.tokenizer_model(&tokenizer_bytes);
  info.has_tokenizer = tokenizer_bytes != 0 ? 1 : 0;
  *out = info;
  return report(error, Status::ok());
}

edgemt_code edgemt_model_detokenize(const edgemt_model* model, const int32_t* ids, size_t count,
                                    char* text, size_t capacity, size_t* length,
                                    edgemt_error* error) {
  if (model == nullptr || (ids == nullptr && count != 0) || text == nullptr || capacity == 0 ||
      length == nullptr) {
    return fail(error, StatusCode::kInvalidArgument,
                "edgemt_model_detokenize: NULL argument or capacity 0");
  }
  if (model->pieces == nullptr) {
    return fail(error, StatusCode::kUnsupported,
                "edgemt_model_detokenize: the model file has no target vocabulary of pieces");
  }
  const edgemt::SpecialTokens& special = model->model->special_tokens();
  const int32_t target_eos = model->model->eos_id(edgemt::TextSide::kTarget);
  static const char kSpace[] = "\xe2\x96\x81";  // U+2581, SentencePiece's word boundary
  static const char kUnknownSurface[] = " \xe2\x81\x87 ";  // SentencePiece's default for unk
  size_t used = 0;  // bytes of text written; a piece is written whole or not at all
  // Writes one byte of the current piece; false when the text is full (the
  // last byte of `text` is kept for the NUL). SentencePiece drops the space
  // the first word carries: no space before any text.
  auto put = [&](char c) {
    if (c == ' ' && used == 0) return true;
    if (used + 1 >= capacity) return false;
    text[used++] = c;
    return true;
  };
  for (size_t i = 0; i < count; ++i) {
    const int32_t id = ids[i];
    if (id < 0 || static_cast<size_t>(id) >= model->piece_count) {
      text[used] = '\0';
      *length = used;
      return report(error, Status::error(StatusCode::kInvalidArgument,
                                         "edgemt_model_detokenize: id %d is outside the target "
                                         "vocabulary's %zu ids",
                                         id, model->piece_count));
    }
    if (id == special.pad || id == special.bos || id == special.eos || id == target_eos) continue;
    const edgemt_model::Piece& piece = model->pieces[static_cast<size_t>(id)];
    if (piece.kind == edgemt_model::kSkipped) continue;
    const size_t piece_start = used;
    bool fits = true;
    if (piece.kind == edgemt_model::kUnknown) {
      for (size_t k = 0; fits && k + 1 < sizeof(kUnknownSurface); ++k) fits = put(kUnknownSurface[k]);
    } else if (piece.kind == edgemt_model::kByte && piece.length == 6 &&
               std::strncmp(piece.text, "<0x", 3) == 0) {
      const char hex[3] = {piece.text[3], piece.text[4], '\0'};
      fits = put(static_cast<char>(std::strtol(hex, nullptr, 16)));
    } else {
      for (size_t k = 0; fits && k < piece.length;) {
        const bool space = piece.length - k >= 3 && std::memcmp(piece.text + k, kSpace, 3) == 0;
        fits = put(space ? ' ' : piece.text[k]);
        k += space ? 3 : 1;
      }
    }
    if (!fits) {
      used = piece_start;
      text[used] = '\0';
      *length = used;
      return report(error, Status::error(StatusCode::kOutOfRange,
                                         "edgemt_model_detokenize: the text does not fit in %zu bytes",
                                         capacity));
    }
  }
  text[used] = '\0';
  *length = used;
  return report(error, Status::ok());
}

// ---- Translator -------------------------------------------------------------

edgemt_translator_options edgemt_translator_options_default(void) {
  const edgemt::TranslatorOptions defaults;
  edgemt_translator_options options;
  options.threads = defaults.threads;
  options.min_parallel_nanoseconds = defaults.min_parallel_nanoseconds;
  return options;
}

edgemt_limits edgemt_limits_default(void) {
  const edgemt::Limits defaults;
  edgemt_limits limits;
  limits.max_batch = defaults.max_batch;
  limits.max_source_len = defaults.max_source_len;
  limits.max_beam = defaults.max_beam;
  limits.max_target_len = defaults.max_target_len;
  limits.attention = defaults.attention ? 1 : 0;
  limits.attention_layer = defaults.attention_layer;
  limits.attention_head = defaults.attention_head;
  return limits;
}

edgemt_code edgemt_translator_create(const edgemt_model* model,
                                     const edgemt_translator_options* options,
                                     edgemt_translator** out, edgemt_error* error) {
  if (model == nullptr || out == nullptr) {
    return fail(error, StatusCode::kInvalidArgument,
                "edgemt_translator_create: model and out must not be NULL");
  }
  const edgemt_translator_options o = options != nullptr ? *options : edgemt_translator_options_default();
  edgemt::TranslatorOptions cpp;
  cpp.threads = o.threads;
  cpp.min_parallel_nanoseconds = o.min_parallel_nanoseconds;
  edgemt_translator* translator = new (std::nothrow) edgemt_translator;
  if (translator == nullptr) {
    return fail(error, StatusCode::kOutOfMemory, "cannot allocate the translator handle");
  }
  translator->model = model;
  translator->options = cpp;
  const Status status = edgemt::Translator::create(*model->model, cpp, &translator->translator);
  if (!status.is_ok()) {
    delete translator;
    return report(error, status);
  }
  *out = translator;
  return report(error, Status::ok());
}

edgemt_translator::~edgemt_translator() { std::free(owned_arena); }

void edgemt_translator_free(edgemt_translator* translator) { delete translator; }

edgemt_code edgemt_translator_set_greedy_scores(edgemt_translator* translator, int scores,
                                                 edgemt_error* error) {
  if (translator == nullptr) {
    return fail(error, StatusCode::kInvalidArgument,
                "edgemt_translator_set_greedy_scores: translator must not be NULL");
  }
  const Status status = translator->translator->set_greedy_scores(scores != 0);
  if (status.is_ok()) translator->greedy_scores = scores != 0 ? 1 : 0;
  return report(error, status);
}

edgemt_code edgemt_translator_set_shortlist(edgemt_translator* translator, int use,
                                            edgemt_error* error) {
  if (translator == nullptr) {
    return fail(error, StatusCode::kInvalidArgument,
                "edgemt_translator_set_shortlist: translator must not be NULL");
  }
  const Status status = translator->translator->set_shortlist(use != 0);
  if (status.is_ok()) translator->shortlist = use != 0 ? 1 : 0;
  return report(error, status);
}

edgemt_code edgemt_translator_set_marian_int8_sums(edgemt_translator* translator, int sums,
                                                   edgemt_error* error) {
  if (translator == nullptr) {
    return fail(error, StatusCode::kInvalidArgument,
                "edgemt_translator_set_marian_int8_sums: translator must not be NULL");
  }
  if (sums < 0 || sums > 3) {
    return report(error, Status::error(StatusCode::kInvalidArgument,
                                       "edgemt_translator_set_marian_int8_sums: sums is 0..3 "
                                       "(exact, AVX2, AVX-512 BW, SSSE3), not %d",
                                       sums));
  }
  if (translator->spans != nullptr) {
    return fail(error, StatusCode::kFailedPrecondition,
                "edgemt_translator_set_marian_int8_sums: call it before edgemt_translator_prepare");
  }
  // The layers choose their kernels when made: a new C++ translator, with
  // the choices made on the old one.
  edgemt::TranslatorOptions options = translator->options;
  options.marian_int8_sums = static_cast<edgemt::MarianInt8Sums>(sums);
  std::unique_ptr<edgemt::Translator> made;
  Status status = edgemt::Translator::create(*translator->model->model, options, &made);
  if (status.is_ok() && translator->greedy_scores >= 0) {
    status = made->set_greedy_scores(translator->greedy_scores != 0);
  }
  if (status.is_ok() && translator->shortlist >= 0) {
    status = made->set_shortlist(translator->shortlist != 0);
  }
  if (!status.is_ok()) return report(error, status);
  translator->translator = std::move(made);
  translator->options = options;
  return report(error, Status::ok());
}

edgemt_code edgemt_translator_arena_size(const edgemt_translator* translator,
                                         const edgemt_limits* limits, size_t* bytes,
                                         edgemt_error* error) {
  if (translator == nullptr || limits == nullptr || bytes == nullptr) {
    return fail(error, StatusCode::kInvalidArgument,
                "edgemt_translator_arena_size: NULL argument");
  }
  size_t translator_bytes = 0;
  const Status status = translator->translator->arena_bytes(to_limits(*limits), &translator_bytes);
  if (!status.is_ok()) return report(error, status);
  *bytes = round_up(translator_bytes) + conversion_bytes(limits->max_batch);
  return report(error, Status::ok());
}

edgemt_code edgemt_translator_prepare(edgemt_translator* translator, const edgemt_limits* limits,
                                      void* arena, size_t arena_size, edgemt_error* error) {
  if (translator == nullptr || limits == nullptr) {
    return fail(error, StatusCode::kInvalidArgument,
                "edgemt_translator_prepare: translator and limits must not be NULL");
  }
  if (arena != nullptr && reinterpret_cast<uintptr_t>(arena) % kArenaAlignment != 0) {
    return report(error, Status::error(StatusCode::kInvalidArgument,
                                       "edgemt_translator_prepare: the arena at %p is not %zu-byte "
                                       "aligned (EDGEMT_ARENA_ALIGNMENT)",
                                       arena, kArenaAlignment));
  }
  if (arena == nullptr && arena_size != 0) {
    return fail(error, StatusCode::kInvalidArgument,
                "edgemt_translator_prepare: arena NULL with a non-zero arena_size");
  }
  const edgemt::Limits cpp_limits = to_limits(*limits);
  size_t translator_bytes = 0;
  Status status = translator->translator->arena_bytes(cpp_limits, &translator_bytes);
  if (!status.is_ok()) return report(error, status);
  translator_bytes = round_up(translator_bytes);
  const size_t needed = translator_bytes + conversion_bytes(limits->max_batch);
  void* owned = nullptr;
  if (arena == nullptr) {
    owned = std::aligned_alloc(kArenaAlignment, needed);
    if (owned == nullptr) {
      return report(error, Status::error(StatusCode::kOutOfMemory,
                                         "cannot allocate a %zu-byte arena", needed));
    }
    arena = owned;
    arena_size = needed;
  }
  if (arena_size < needed) {
    return report(error, Status::error(StatusCode::kOutOfMemory,
                                       "edgemt_translator_prepare: the arena has %zu bytes; these "
                                       "limits need %zu (edgemt_translator_arena_size)",
                                       arena_size, needed));
  }
  status = translator->translator->prepare(cpp_limits, arena, translator_bytes);
  if (!status.is_ok()) {
    std::free(owned);
    return report(error, status);
  }
  char* tail = static_cast<char*>(arena) + translator_bytes;
  translator->spans = reinterpret_cast<edgemt::TokenSpan*>(tail);
  translator->results = reinterpret_cast<edgemt::Translation*>(
      tail + round_up(limits->max_batch * sizeof(edgemt::TokenSpan)));
  translator->max_batch = limits->max_batch;
  std::free(translator->owned_arena);
  translator->owned_arena = owned;
  return report(error, Status::ok());
}

edgemt_code edgemt_decode_options_default(const edgemt_model* model, edgemt_decode_options* out,
                                          edgemt_error* error) {
  if (model == nullptr || out == nullptr) {
    return fail(error, StatusCode::kInvalidArgument,
                "edgemt_decode_options_default: model and out must not be NULL");
  }
  const edgemt::DecodeOptions d = edgemt::decode_options(*model->model);
  out->beam_size = d.beam_size;
  out->length_penalty = d.length_penalty;
  out->max_len_a = d.max_len_a;
  out->max_len_b = d.max_len_b;
  out->word_penalty = d.word_penalty;
  return report(error, Status::ok());
}

edgemt_code edgemt_translate(edgemt_translator* translator, const edgemt_tokens* sources,
                             size_t count, const edgemt_decode_options* options,
                             edgemt_result* results, edgemt_error* error) {
  if (translator == nullptr || (count != 0 && (sources == nullptr || results == nullptr))) {
    return fail(error, StatusCode::kInvalidArgument, "edgemt_translate: NULL argument");
  }
  if (translator->spans == nullptr) {
    return fail(error, StatusCode::kFailedPrecondition,
                "edgemt_translate: the translator is not prepared (call edgemt_translator_prepare "
                "first)");
  }
  if (count > translator->max_batch) {
    return report(error, Status::error(StatusCode::kInvalidArgument,
                                       "edgemt_translate: %zu sentences, more than the prepared "
                                       "max_batch %zu",
                                       count, translator->max_batch));
  }
  for (size_t i = 0; i < count; ++i) {
    if (results[i].tokens == nullptr && results[i].capacity != 0) {
      return report(error, Status::error(StatusCode::kInvalidArgument,
                                         "edgemt_translate: result %zu has capacity %zu but no "
                                         "tokens memory",
                                         i, results[i].capacity));
    }
    translator->spans[i].ids = sources[i].ids;
    translator->spans[i].length = sources[i].length;
    translator->results[i] = edgemt::Translation();
    translator->results[i].tokens = results[i].tokens;
    translator->results[i].capacity = results[i].capacity;
    translator->results[i].attention = results[i].attention;
    translator->results[i].attention_capacity = results[i].attention_capacity;
  }
  const edgemt::DecodeOptions decode = options != nullptr
                                           ? to_decode(*options)
                                           : edgemt::decode_options(*translator->model->model);
  const Status status =
      translator->translator->translate(translator->spans, count, decode, translator->results);
  if (!status.is_ok()) return report(error, status);
  for (size_t i = 0; i < count; ++i) {
    const edgemt::Translation& t = translator->results[i];
    results[i].length = t.length;
    results[i].score = t.score;
    results[i].code = static_cast<edgemt_code>(t.status);
    results[i].error = t.error != nullptr ? t.error : "";
    results[i].attention_rows = t.attention_rows;
    results[i].attention_columns = t.attention_columns;
  }
  return report(error, Status::ok());
}

}  // extern "C"
