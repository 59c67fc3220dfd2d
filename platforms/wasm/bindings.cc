// The WebAssembly module's exports: a few flat functions over the C API
// (edgemt/edgemt.h) that JavaScript can call with numbers and strings, so
// that edgemt.mjs never lays out C structs by hand. A session holds one
// model (opened from bytes the module owns), its tokenizer and one
// translator. Results come back as one JSON string per call, with what the
// C API gives a line: its translation, tokens, score, error, and on request
// its word alignment and each sentence's attention weights with the pieces
// that label them.
//
// Not part of the runtime core: this glue may allocate (std::string).
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <new>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include <emscripten/emscripten.h>

#include "cli/json_writer.h"  // the CLI's JSON, as `edgemt translate --json` writes it
#include "edgemt/edgemt.h"

namespace {

struct Session {
  void* bytes = nullptr;  // the model file, EDGEMT_MODEL_ALIGNMENT-aligned
  edgemt_model* model = nullptr;
  edgemt_tokenizer* tokenizer = nullptr;
  edgemt_translator* translator = nullptr;
  edgemt_limits limits{};
};

std::string g_error;  // the last call's error message ("" after a success)

bool failed(edgemt_code code, const edgemt_error& error) {
  if (code == EDGEMT_OK) return false;
  g_error = std::string(edgemt_code_name(code)) + ": " + error.message;
  return true;
}

void close_session(Session* s) {
  edgemt_translator_free(s->translator);
  edgemt_tokenizer_free(s->tokenizer);
  edgemt_model_free(s->model);
  std::free(s->bytes);
  delete s;
}

// The piece of `id` on `side` (0 source, 1 target), "" if it has none.
std::string piece_of(const edgemt_tokenizer* tokenizer, int side, int32_t id) {
  char piece[256];
  size_t length = 0;
  edgemt_error error;
  if (edgemt_tokenizer_piece(tokenizer, side, id, piece, sizeof(piece), &length, &error) != EDGEMT_OK) {
    return std::string();
  }
  return std::string(piece, length);
}

// One sentence as the sentence callback hands it over, kept until the
// results are written.
struct SentenceDetail {
  std::vector<std::string> source_pieces;
  std::vector<std::string> target_pieces;
  std::string translation;
  std::vector<float> attention;  // [rows, columns]
  size_t columns = 0;
};

// What the sentence callback collects: each line's sentences, in order.
struct SentenceLog {
  const edgemt_tokenizer* tokenizer = nullptr;
  std::vector<std::vector<SentenceDetail>> per_line;
};

void log_sentence(void* user, const edgemt_document_sentence* s) {
  SentenceLog& log = *static_cast<SentenceLog*>(user);
  SentenceDetail d;
  for (size_t i = 0; i < s->source_length; ++i) {
    d.source_pieces.push_back(piece_of(log.tokenizer, 0, s->source[i]));
  }
  for (size_t i = 0; i < s->token_length; ++i) {
    d.target_pieces.push_back(piece_of(log.tokenizer, 1, s->tokens[i]));
  }
  d.translation.assign(s->translation, s->translation_length);
  d.attention.assign(s->attention, s->attention + s->attention_rows * s->attention_columns);
  d.columns = s->attention_columns;
  log.per_line[s->line].push_back(std::move(d));
}

void write_strings(const std::vector<std::string>& strings, edgemt::cli::JsonWriter* json) {
  json->begin_array();
  for (const std::string& text : strings) json->value(text);
  json->end_array();
}

void write_details(const std::vector<SentenceDetail>& sentences, edgemt::cli::JsonWriter* json) {
  json->begin_array();
  for (const SentenceDetail& d : sentences) {
    json->begin_object().key("source_pieces");
    write_strings(d.source_pieces, json);
    json->key("target_pieces");
    write_strings(d.target_pieces, json);
    json->key("translation").value(d.translation).key("attention").begin_array();
    for (size_t r = 0; d.columns > 0 && r < d.attention.size() / d.columns; ++r) {
      json->begin_array();
      for (size_t c = 0; c < d.columns; ++c) json->value(static_cast<double>(d.attention[r * d.columns + c]));
      json->end_array();
    }
    json->end_array().end_object();
  }
  json->end_array();
}

// A copy the caller frees with ejs_free.
char* released(const std::string& text) { return strdup(text.c_str()); }

// Room for one line's results: text and tokens sized from the limits, the
// alignment from the text.
struct LineRoom {
  std::vector<char> text;
  std::vector<int32_t> tokens;
  std::vector<edgemt_word_pair> alignment;
};

}  // namespace

extern "C" {

// The last failed call's message ("" when the last call succeeded).
EMSCRIPTEN_KEEPALIVE const char* ejs_last_error() { return g_error.c_str(); }

EMSCRIPTEN_KEEPALIVE const char* ejs_version() { return edgemt_version(); }

// Copies `size` bytes of a model file into memory of the module's own,
// verifies the model and makes its tokenizer and translator (threads 1:
// the page's worker is the thread). Returns the session, or 0 with
// ejs_last_error() set.
EMSCRIPTEN_KEEPALIVE Session* ejs_open(const uint8_t* data, size_t size) {
  g_error.clear();
  Session* s = new (std::nothrow) Session;
  if (s == nullptr) {
    g_error = "out-of-memory: no room for a session";
    return nullptr;
  }
  const size_t rounded = (size + EDGEMT_MODEL_ALIGNMENT - 1) / EDGEMT_MODEL_ALIGNMENT * EDGEMT_MODEL_ALIGNMENT;
  s->bytes = std::aligned_alloc(EDGEMT_MODEL_ALIGNMENT, rounded > 0 ? rounded : EDGEMT_MODEL_ALIGNMENT);
  if (s->bytes == nullptr) {
    g_error = "out-of-memory: no room for a model of " + std::to_string(size) + " bytes";
    delete s;
    return nullptr;
  }
  std::memcpy(s->bytes, data, size);
  edgemt_error error;
  if (failed(edgemt_model_open_memory(s->bytes, size, &s->model, &error), error) ||
      failed(edgemt_tokenizer_create(s->model, &s->tokenizer, &error), error) ||
      failed(edgemt_translator_create(s->model, nullptr, &s->translator, &error), error)) {
    close_session(s);
    return nullptr;
  }
  return s;
}

EMSCRIPTEN_KEEPALIVE void ejs_close(Session* s) {
  if (s != nullptr) close_session(s);
}

// Plans the translator for batches of max_batch sentences of up to
// max_len tokens each way (0: the model's longest), beams up to max_beam,
// attention weights when `attention` is nonzero. 0 on success.
EMSCRIPTEN_KEEPALIVE int ejs_prepare(Session* s, size_t max_batch, size_t max_len, size_t max_beam,
                                     int attention, int greedy_scores) {
  g_error.clear();
  edgemt_model_info info;
  edgemt_error error;
  if (failed(edgemt_model_get_info(s->model, &info, &error), error)) return 1;
  edgemt_limits limits = edgemt_limits_default();
  const size_t longest = info.max_sequence_length < 256 ? info.max_sequence_length : 256;
  limits.max_batch = max_batch;
  limits.max_source_len = max_len > 0 ? max_len : longest;
  limits.max_target_len = max_len > 0 ? max_len : longest;
  limits.max_beam = max_beam;
  limits.attention = attention;
  if (failed(edgemt_translator_set_greedy_scores(s->translator, greedy_scores, &error), error) ||
      failed(edgemt_translator_prepare(s->translator, &limits, nullptr, 0, &error), error)) {
    return 1;
  }
  s->limits = limits;
  return 0;
}

// JSON of the model's facts and decoding defaults, or 0 with the error set.
EMSCRIPTEN_KEEPALIVE char* ejs_model_info(Session* s) {
  g_error.clear();
  edgemt_model_info info;
  edgemt_decode_options d;
  edgemt_error error;
  if (failed(edgemt_model_get_info(s->model, &info, &error), error) ||
      failed(edgemt_decode_options_default(s->model, &d, &error), error)) {
    return nullptr;
  }
  edgemt::cli::JsonWriter json;
  json.begin_object()
      .key("family").value(info.family)
      .key("source_language").value(info.source_language)
      .key("target_language").value(info.target_language)
      .key("weight_dtype").value(info.weight_dtype)
      .key("format_version").value(uint64_t{info.format_version})
      .key("max_sequence_length").value(uint64_t{info.max_sequence_length})
      .key("beam_size").value(uint64_t{d.beam_size})
      .key("length_penalty").value(static_cast<double>(d.length_penalty))
      .key("max_len_a").value(static_cast<double>(d.max_len_a))
      .key("max_len_b").value(static_cast<double>(d.max_len_b))
      .end_object();
  return released(json.text());
}

// Translates `count` lines, `texts` holding them one after another, line i
// `lengths[i]` bytes. beam 0, and NaN for the floats: the model's defaults.
// language/target_prefix: NUL-terminated or 0. Returns a JSON array with
// one object per line ({"text", "tokens", "score", "error", "sentences",
// and on request "alignment" and "details": each sentence's pieces and
// attention}), to be freed with ejs_free; or 0 with the error set (the
// whole call failed).
EMSCRIPTEN_KEEPALIVE char* ejs_translate(Session* s, const char* texts, const size_t* lengths,
                                         size_t count, size_t beam, float length_penalty,
                                         float max_len_a, float max_len_b, int split_sentences,
                                         const char* language, const char* target_prefix,
                                         int align, int attention) {
  g_error.clear();
  edgemt_error error;
  edgemt_decode_options options;
  if (failed(edgemt_decode_options_default(s->model, &options, &error), error)) return nullptr;
  if (beam > 0) options.beam_size = beam;
  if (!std::isnan(length_penalty)) options.length_penalty = length_penalty;
  if (!std::isnan(max_len_a)) options.max_len_a = max_len_a;
  if (!std::isnan(max_len_b)) options.max_len_b = max_len_b;
  edgemt_document_options document = edgemt_document_options_default();
  document.split_sentences = split_sentences;
  document.language = language;
  document.target_prefix = target_prefix;
  document.align = align;

  std::vector<edgemt_text> lines(count);
  std::vector<LineRoom> room(count);
  std::vector<edgemt_document_result> results(count);
  size_t offset = 0;
  for (size_t i = 0; i < count; ++i) {
    lines[i] = {texts + offset, lengths[i]};
    offset += lengths[i];
    // Every sentence of a line can be max_target_len tokens of up to 16
    // bytes each; lines longer than that come back OUT_OF_RANGE with the
    // length they need, and are asked again below.
    const size_t sentences = lengths[i] / 2 + 1;
    room[i].text.resize(4096 + 4 * lengths[i]);
    room[i].tokens.resize(s->limits.max_target_len * (sentences < 64 ? sentences : 64));
    room[i].alignment.resize(align ? 64 + 4 * lengths[i] : 0);
  }
  auto bind = [&](size_t i) {
    edgemt_document_result& r = results[i];
    r = edgemt_document_result{};
    r.translation.text = room[i].text.data();
    r.translation.text_capacity = room[i].text.size();
    r.translation.tokens = room[i].tokens.data();
    r.translation.token_capacity = room[i].tokens.size();
    r.alignment = room[i].alignment.empty() ? nullptr : room[i].alignment.data();
    r.alignment_capacity = room[i].alignment.size();
  };
  for (size_t i = 0; i < count; ++i) bind(i);
  SentenceLog log;
  log.tokenizer = s->tokenizer;
  log.per_line.assign(count, {});
  if (failed(edgemt_translate_document_sentences(s->translator, s->tokenizer, lines.data(), count,
                                                 &document, &options, results.data(), attention,
                                                 attention ? log_sentence : nullptr, &log, &error),
             error)) {
    return nullptr;
  }
  // Lines whose output did not fit: once more, alone, with the room they said they need.
  for (size_t i = 0; i < count; ++i) {
    const edgemt_document_result& r = results[i];
    if (r.translation.code != EDGEMT_OUT_OF_RANGE) continue;
    if (r.translation.text_length < room[i].text.size() &&
        r.translation.token_length <= room[i].tokens.size() &&
        r.alignment_length <= room[i].alignment.size()) {
      continue;  // out of range for another reason (a sentence too long)
    }
    room[i].text.resize(r.translation.text_length + 1);
    room[i].tokens.resize(r.translation.token_length);
    if (align) room[i].alignment.resize(r.alignment_length);
    bind(i);
    // Its sentences again, numbered as line 0 of this call.
    SentenceLog again;
    again.tokenizer = s->tokenizer;
    again.per_line.resize(1);
    if (failed(edgemt_translate_document_sentences(s->translator, s->tokenizer, &lines[i], 1,
                                                   &document, &options, &results[i], attention,
                                                   attention ? log_sentence : nullptr, &again,
                                                   &error),
               error)) {
      return nullptr;
    }
    log.per_line[i] = std::move(again.per_line[0]);
  }
  edgemt::cli::JsonWriter json;
  json.begin_array();
  for (size_t i = 0; i < count; ++i) {
    const edgemt_document_result& r = results[i];
    const bool ok = r.translation.code == EDGEMT_OK;
    json.begin_object().key("text").value(
        std::string_view(ok ? r.translation.text : "", ok ? r.translation.text_length : 0));
    json.key("tokens").begin_array();
    for (size_t t = 0; ok && t < r.translation.token_length; ++t) {
      json.value(uint64_t{static_cast<uint32_t>(r.translation.tokens[t])});
    }
    json.end_array()
        .key("score").value(ok ? static_cast<double>(r.translation.score) : static_cast<double>(NAN))
        .key("sentences").value(uint64_t{r.sentence_count})
        .key("error");
    if (ok) {
      json.null();
    } else {
      json.value(std::string(edgemt_code_name(r.translation.code)) + ": " + r.translation.error);
    }
    if (align) {
      json.key("alignment").begin_array();
      for (size_t a = 0; ok && a < r.alignment_length; ++a) {
        json.begin_array()
            .value(uint64_t{r.alignment[a].source_word})
            .value(uint64_t{r.alignment[a].target_word})
            .end_array();
      }
      json.end_array();
    }
    if (attention) {
      json.key("details");
      write_details(log.per_line[i], &json);
    }
    json.end_object();
  }
  json.end_array();
  return released(json.text());
}

EMSCRIPTEN_KEEPALIVE void ejs_free(void* pointer) { std::free(pointer); }

}  // extern "C"
