// What the C API's text calls share (text/edgemt_c_text.cc: tokenizer and
// translate_text; text/edgemt_c_document.cc: sentences and documents): the
// exception guard, text copying and the target-prefix lookup.
#pragma once

#include <cstddef>
#include <cstdint>
#include <exception>
#include <new>
#include <string>

#include "capi/handles.h"
#include "edgemt/edgemt.h"
#include "edgemt/tokenizer.h"

struct edgemt_tokenizer {
  std::unique_ptr<edgemt::Tokenizer> tokenizer;
};

namespace edgemt::capi {

// Runs `body` (returns edgemt_code); an exception becomes OUT_OF_MEMORY
// (std::bad_alloc) or BACKEND_ERROR with its message, so that none crosses
// into C.
template <typename Body>
edgemt_code guarded(edgemt_error* error, const char* call, Body body) {
  try {
    return body();
  } catch (const std::bad_alloc&) {
    return report(error, Status::error(StatusCode::kOutOfMemory, "%s: out of memory", call));
  } catch (const std::exception& e) {
    return report(error, Status::error(StatusCode::kBackendError, "%s: %s", call, e.what()));
  } catch (...) {
    return report(error, Status::error(StatusCode::kBackendError, "%s: unknown exception", call));
  }
}

// Copies `text` and a NUL into out[0..capacity); false if it does not fit.
bool copy_text(const std::string& text, char* out, size_t capacity);

// Whitespace only: translated as "" without running the model, as edgemt
// translate does with blank lines.
bool is_blank(const edgemt_text& text);

// A line break inside a translation would split one output line in two
// for line-oriented callers (edgemt translate does the same).
void keep_on_one_line(std::string* text);

// The source id of target prefix `language` (">>fra<<" or "fra"); `call`
// names the C function in the error. kInvalidArgument when the vocabulary
// has no such token.
[[nodiscard]] Status target_prefix_id(const Tokenizer& tokenizer, const char* language,
                                      const char* call, int32_t* id);

}  // namespace edgemt::capi
