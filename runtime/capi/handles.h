// The C API's handles (edgemt/edgemt.h declares them opaque) and its error
// reporting, shared by the core part (capi/edgemt_c.cc) and the text part
// (text/edgemt_c_text.cc).
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>

#include "edgemt/edgemt.h"
#include "edgemt/model.h"
#include "edgemt/status.h"
#include "edgemt/translator.h"

struct edgemt_model {
  // How edgemt_model_detokenize() writes a target piece.
  enum Kind : uint8_t { kNormal = 0, kSkipped, kUnknown, kByte };
  struct Piece {
    const char* text = "";  // into the model file; not NUL-terminated
    size_t length = 0;
    Kind kind = kNormal;
  };

  std::unique_ptr<edgemt::Model> model;
  Piece* pieces = nullptr;  // [piece_count] target pieces by id; nullptr: none in the file
  size_t piece_count = 0;

  edgemt_model() = default;
  edgemt_model(const edgemt_model&) = delete;
  edgemt_model& operator=(const edgemt_model&) = delete;
  ~edgemt_model();
};

struct edgemt_translator {
  const edgemt_model* model = nullptr;
  std::unique_ptr<edgemt::Translator> translator;
  edgemt::TranslatorOptions options;  // what `translator` was made with
  // The set_greedy_scores / set_shortlist choices (-1: none made), made
  // again when set_marian_int8_sums makes the translator again.
  int greedy_scores = -1;
  int shortlist = -1;
  void* owned_arena = nullptr;  // the arena when the library allocated it
  // In the arena's tail, after the C++ translator's buffers (set by prepare):
  edgemt::TokenSpan* spans = nullptr;      // [max_batch]
  edgemt::Translation* results = nullptr;  // [max_batch]
  size_t max_batch = 0;

  edgemt_translator() = default;
  edgemt_translator(const edgemt_translator&) = delete;
  edgemt_translator& operator=(const edgemt_translator&) = delete;
  ~edgemt_translator();
};

namespace edgemt {
namespace capi {

// Writes `status` into *error (when not NULL) and returns its code.
edgemt_code report(edgemt_error* error, const Status& status);
edgemt_code fail(edgemt_error* error, StatusCode code, const char* message);

}  // namespace capi
}  // namespace edgemt
