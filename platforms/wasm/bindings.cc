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
#include <vector>

#include <emscripten/emscripten.h>

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

// JSON text of a UTF-8 string (control characters escaped; the C API's
// strings are valid UTF-8).
void append_string(std::string* out, const char* text, size_t length) {
  out->push_back('"');
  for (size_t i = 0; i < length; ++i) {
    const unsigned char c = static_cast<unsigned char>(text[i]);
    if (c == '"' || c == '\\') {
      out->push_back('\\');
      out->push_back(static_cast<char>(c));
    } else if (c < 0x20) {
      char escaped[8];
      std::snprintf(escaped, sizeof(escaped), "\\u%04x", c);
      out->append(escaped);
    } else {
      out->push_back(static_cast<char>(c));
    }
  }
  out->push_back('"');
}

void append_number(std::string* out, double value) {
  if (!std::isfinite(value)) {
    out->append("null");
    return;
  }
  char number[32];
  std::snprintf(number, sizeof(number), "%.9g", value);
  out->append(number);
}

void append_piece(std::string* out, const edgemt_tokenizer* tokenizer, int side, int32_t id) {
  char piece[256];
  size_t length = 0;
  edgemt_error error;
  if (edgemt_tokenizer_piece(tokenizer, side, id, piece, sizeof(piece), &length, &error) != EDGEMT_OK) {
    length = 0;
  }
  append_string(out, piece, length);
}

// What the sentence callback writes: each sentence of each line, as JSON
// objects, grouped by line.
struct SentenceLog {
  const edgemt_tokenizer* tokenizer = nullptr;
  std::vector<std::string> per_line;  // "{...},{...}" of each line's sentences
};

void log_sentence(void* user, const edgemt_document_sentence* s) {
  SentenceLog& log = *static_cast<SentenceLog*>(user);
  std::string& out = log.per_line[s->line];
  if (!out.empty()) out.push_back(',');
  out.append("{\"source_pieces\":[");
  for (size_t i = 0; i < s->source_length; ++i) {
    if (i > 0) out.push_back(',');
    append_piece(&out, log.tokenizer, 0, s->source[i]);
  }
  out.append("],\"target_pieces\":[");
  for (size_t i = 0; i < s->token_length; ++i) {
    if (i > 0) out.push_back(',');
    append_piece(&out, log.tokenizer, 1, s->tokens[i]);
  }
  out.append("],\"translation\":");
  append_string(&out, s->translation, s->translation_length);
  out.append(",\"attention\":[");
  for (size_t r = 0; r < s->attention_rows; ++r) {
    out.append(r > 0 ? ",[" : "[");
    for (size_t c = 0; c < s->attention_columns; ++c) {
      if (c > 0) out.push_back(',');
      append_number(&out, static_cast<double>(s->attention[r * s->attention_columns + c]));
    }
    out.push_back(']');
  }
  out.append("]}");
}

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
  std::string out = "{\"family\":";
  append_string(&out, info.family, std::strlen(info.family));
  out.append(",\"source_language\":");
  append_string(&out, info.source_language, std::strlen(info.source_language));
  out.append(",\"target_language\":");
  append_string(&out, info.target_language, std::strlen(info.target_language));
  out.append(",\"weight_dtype\":");
  append_string(&out, info.weight_dtype, std::strlen(info.weight_dtype));
  out.append(",\"format_version\":" + std::to_string(info.format_version));
  out.append(",\"max_sequence_length\":" + std::to_string(info.max_sequence_length));
  out.append(",\"beam_size\":" + std::to_string(d.beam_size) + ",\"length_penalty\":");
  append_number(&out, static_cast<double>(d.length_penalty));
  out.append(",\"max_len_a\":");
  append_number(&out, static_cast<double>(d.max_len_a));
  out.append(",\"max_len_b\":");
  append_number(&out, static_cast<double>(d.max_len_b));
  out.append("}");
  return strdup(out.c_str());
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
  log.per_line.assign(count, std::string());
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
    log.per_line[i].clear();
    if (failed(edgemt_translate_document_sentences(s->translator, s->tokenizer, &lines[i], 1,
                                                   &document, &options, &results[i], attention,
                                                   nullptr, nullptr, &error),
               error)) {
      return nullptr;
    }
    if (attention) {
      // The sentences of this line again, numbered as line 0 of that call.
      SentenceLog again;
      again.tokenizer = s->tokenizer;
      again.per_line.assign(1, std::string());
      bind(i);
      if (failed(edgemt_translate_document_sentences(s->translator, s->tokenizer, &lines[i], 1,
                                                     &document, &options, &results[i], 1,
                                                     log_sentence, &again, &error),
                 error)) {
        return nullptr;
      }
      log.per_line[i] = again.per_line[0];
    }
  }
  std::string out = "[";
  for (size_t i = 0; i < count; ++i) {
    const edgemt_document_result& r = results[i];
    const bool ok = r.translation.code == EDGEMT_OK;
    if (i > 0) out.push_back(',');
    out.append("{\"text\":");
    append_string(&out, ok ? r.translation.text : "", ok ? r.translation.text_length : 0);
    out.append(",\"tokens\":[");
    for (size_t t = 0; ok && t < r.translation.token_length; ++t) {
      if (t > 0) out.push_back(',');
      out.append(std::to_string(r.translation.tokens[t]));
    }
    out.append("],\"score\":");
    append_number(&out, ok ? static_cast<double>(r.translation.score) : static_cast<double>(NAN));
    out.append(",\"sentences\":" + std::to_string(r.sentence_count) + ",\"error\":");
    if (ok) {
      out.append("null");
    } else {
      const std::string message = std::string(edgemt_code_name(r.translation.code)) + ": " +
                                  r.translation.error;
      append_string(&out, message.data(), message.size());
    }
    if (align) {
      out.append(",\"alignment\":[");
      for (size_t a = 0; ok && a < r.alignment_length; ++a) {
        if (a > 0) out.push_back(',');
        out.append("[" + std::to_string(r.alignment[a].source_word) + "," +
                   std::to_string(r.alignment[a].target_word) + "]");
      }
      out.push_back(']');
    }
    if (attention) out.append(",\"details\":[" + log.per_line[i] + "]");
    out.push_back('}');
  }
  out.push_back(']');
  return strdup(out.c_str());
}

EMSCRIPTEN_KEEPALIVE void ejs_free(void* pointer) { std::free(pointer); }

}  // extern "C"
