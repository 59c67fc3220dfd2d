// The C API's text part (edgemt/edgemt.h, "Text"): tokenizer and
// translate_text over edgemt::Tokenizer. In the text library: it allocates
// (SentencePiece, std::string), and catches whatever the standard library
// throws so that no exception crosses into C.
#include <cstring>
#include <string>
#include <vector>

#include "text/capi_text.h"

namespace {

using edgemt::Status;
using edgemt::StatusCode;
using edgemt::capi::copy_text;
using edgemt::capi::fail;
using edgemt::capi::guarded;
using edgemt::capi::is_blank;
using edgemt::capi::keep_on_one_line;
using edgemt::capi::report;

}  // namespace

extern "C" {

edgemt_code edgemt_tokenizer_create(const edgemt_model* model, edgemt_tokenizer** out,
                                    edgemt_error* error) {
  if (model == nullptr || out == nullptr) {
    return fail(error, StatusCode::kInvalidArgument,
                "edgemt_tokenizer_create: model and out must not be NULL");
  }
  return guarded(error, "edgemt_tokenizer_create", [&] {
    std::unique_ptr<edgemt_tokenizer> tokenizer(new edgemt_tokenizer);
    const Status status = edgemt::Tokenizer::create(*model->model, &tokenizer->tokenizer);
    if (!status.is_ok()) return report(error, status);
    *out = tokenizer.release();
    return report(error, Status::ok());
  });
}

void edgemt_tokenizer_free(edgemt_tokenizer* tokenizer) { delete tokenizer; }

edgemt_code edgemt_tokenizer_encode(const edgemt_tokenizer* tokenizer, const char* text,
                                    size_t text_length, int32_t* ids, size_t capacity,
                                    size_t* length, edgemt_error* error) {
  if (tokenizer == nullptr || (text == nullptr && text_length != 0) ||
      (ids == nullptr && capacity != 0) || length == nullptr) {
    return fail(error, StatusCode::kInvalidArgument, "edgemt_tokenizer_encode: NULL argument");
  }
  return guarded(error, "edgemt_tokenizer_encode", [&] {
    std::vector<int32_t> encoded;
    const Status status = tokenizer->tokenizer->encode(
        std::string_view(text != nullptr ? text : "", text_length), &encoded);
    if (!status.is_ok()) return report(error, status);
    *length = encoded.size();
    if (encoded.size() > capacity) {
      return report(error, Status::error(StatusCode::kOutOfRange,
                                         "edgemt_tokenizer_encode: %zu ids, more than the "
                                         "capacity %zu",
                                         encoded.size(), capacity));
    }
    if (!encoded.empty()) std::memcpy(ids, encoded.data(), encoded.size() * sizeof(int32_t));
    return report(error, Status::ok());
  });
}

edgemt_code edgemt_tokenizer_decode(const edgemt_tokenizer* tokenizer, const int32_t* ids,
                                    size_t count, char* text, size_t capacity, size_t* length,
                                    edgemt_error* error) {
  if (tokenizer == nullptr || (ids == nullptr && count != 0) || text == nullptr ||
      capacity == 0 || length == nullptr) {
    return fail(error, StatusCode::kInvalidArgument,
                "edgemt_tokenizer_decode: NULL argument or capacity 0");
  }
  return guarded(error, "edgemt_tokenizer_decode", [&] {
    std::string decoded;
    const Status status = tokenizer->tokenizer->decode(ids, count, &decoded);
    if (!status.is_ok()) return report(error, status);
    *length = decoded.size();
    if (!copy_text(decoded, text, capacity)) {
      text[0] = '\0';
      return report(error, Status::error(StatusCode::kOutOfRange,
                                         "edgemt_tokenizer_decode: %zu bytes of text do not fit "
                                         "in %zu",
                                         decoded.size() + 1, capacity));
    }
    return report(error, Status::ok());
  });
}

edgemt_code edgemt_tokenizer_piece(const edgemt_tokenizer* tokenizer, int side, int32_t id,
                                   char* piece, size_t capacity, size_t* length,
                                   edgemt_error* error) {
  if (tokenizer == nullptr || piece == nullptr || capacity == 0 || length == nullptr) {
    return fail(error, StatusCode::kInvalidArgument,
                "edgemt_tokenizer_piece: NULL argument or capacity 0");
  }
  if (side != 0 && side != 1) {
    return report(error, Status::error(StatusCode::kInvalidArgument,
                                       "edgemt_tokenizer_piece: side is %d; it must be 0 "
                                       "(source) or 1 (target)",
                                       side));
  }
  return guarded(error, "edgemt_tokenizer_piece", [&] {
    std::string text;
    const Status status = tokenizer->tokenizer->piece(
        side == 0 ? edgemt::TextSide::kSource : edgemt::TextSide::kTarget, id, &text);
    if (!status.is_ok()) return report(error, status);
    *length = text.size();
    if (!copy_text(text, piece, capacity)) {
      piece[0] = '\0';
      return report(error, Status::error(StatusCode::kOutOfRange,
                                         "edgemt_tokenizer_piece: %zu bytes do not fit in %zu",
                                         text.size() + 1, capacity));
    }
    return report(error, Status::ok());
  });
}

edgemt_code edgemt_translate_text(edgemt_translator* translator,
                                  const edgemt_tokenizer* tokenizer, const edgemt_text* texts,
                                  size_t count, const char* target_prefix,
                                  const edgemt_decode_options* options,
                                  edgemt_text_result* results, edgemt_error* error) {
  if (translator == nullptr || tokenizer == nullptr ||
      (count != 0 && (texts == nullptr || results == nullptr))) {
    return fail(error, StatusCode::kInvalidArgument, "edgemt_translate_text: NULL argument");
  }
  return guarded(error, "edgemt_translate_text", [&] {
    const edgemt::Tokenizer& tok = *tokenizer->tokenizer;
    int32_t prefix_id = 0;
    if (target_prefix != nullptr && target_prefix[0] != '\0') {
      const Status status =
          edgemt::capi::target_prefix_id(tok, target_prefix, "edgemt_translate_text", &prefix_id);
      if (!status.is_ok()) return report(error, status);
    }
    std::vector<std::vector<int32_t>> sources(count);
    std::vector<edgemt_tokens> spans;
    std::vector<size_t> todo;  // indices of the texts that are not blank
    for (size_t i = 0; i < count; ++i) {
      if (texts[i].data == nullptr && texts[i].length != 0) {
        return report(error, Status::error(StatusCode::kInvalidArgument,
                                           "edgemt_translate_text: text %zu is NULL", i));
      }
      if (results[i].text == nullptr || results[i].text_capacity == 0) {
        return report(error, Status::error(StatusCode::kInvalidArgument,
                                           "edgemt_translate_text: result %zu has no text memory",
                                           i));
      }
      edgemt_text_result& r = results[i];
      r.text[0] = '\0';
      r.text_length = 0;
      r.token_length = 0;
      r.score = 0.0f;
      r.code = EDGEMT_OK;
      r.error = "";
      if (is_blank(texts[i])) continue;
      const Status status = tok.encode(
          std::string_view(texts[i].data != nullptr ? texts[i].data : "", texts[i].length),
          &sources[i]);
      if (!status.is_ok()) {
        return report(error, Status::error(status.code(), "edgemt_translate_text: text %zu: %s",
                                           i, status.message()));
      }
      if (target_prefix != nullptr && target_prefix[0] != '\0') {
        sources[i].insert(sources[i].begin(), prefix_id);
      }
      spans.push_back(edgemt_tokens{sources[i].data(), sources[i].size()});
      todo.push_back(i);
    }
    if (todo.empty()) return report(error, Status::ok());
    if (translator->spans == nullptr) {  // before tokens are sized by the limits
      return fail(error, StatusCode::kFailedPrecondition,
                  "edgemt_translate_text: the translator is not prepared (call "
                  "edgemt_translator_prepare first)");
    }
    const size_t max_target_len = translator->translator->limits().max_target_len;
    std::vector<std::vector<int32_t>> tokens(todo.size(), std::vector<int32_t>(max_target_len));
    std::vector<edgemt_result> translated(todo.size());
    for (size_t k = 0; k < todo.size(); ++k) {
      translated[k].tokens = tokens[k].data();
      translated[k].capacity = tokens[k].size();
    }
    const edgemt_code code = edgemt_translate(translator, spans.data(), spans.size(), options,
                                              translated.data(), error);
    if (code != EDGEMT_OK) return code;
    for (size_t k = 0; k < todo.size(); ++k) {
      const size_t i = todo[k];
      edgemt_text_result& r = results[i];
      const edgemt_result& t = translated[k];
      r.score = t.score;
      r.code = t.code;
      r.error = t.error;
      r.token_length = t.length;
      if (r.tokens != nullptr) {
        const size_t n = t.length < r.token_capacity ? t.length : r.token_capacity;
        if (n != 0) std::memcpy(r.tokens, t.tokens, n * sizeof(int32_t));
      }
      if (t.code != EDGEMT_OK) continue;
      std::string decoded;
      const Status status = tok.decode(t.tokens, t.length, &decoded);
      if (!status.is_ok()) {
        return report(error, Status::error(status.code(), "edgemt_translate_text: result %zu: %s",
                                           i, status.message()));
      }
      keep_on_one_line(&decoded);
      r.text_length = decoded.size();
      if (!copy_text(decoded, r.text, r.text_capacity)) {
        r.code = EDGEMT_OUT_OF_RANGE;
        r.error = "the translation does not fit in text_capacity (text_length says how many "
                  "bytes it needs, without the NUL)";
      } else if (r.tokens != nullptr && t.length > r.token_capacity) {
        r.code = EDGEMT_OUT_OF_RANGE;
        r.error = "the translation's tokens do not fit in token_capacity (token_length says how "
                  "many)";
      }
    }
    return report(error, Status::ok());
  });
}

}  // extern "C"
