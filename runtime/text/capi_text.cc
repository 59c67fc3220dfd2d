#include "text/capi_text.h"

#include <cstring>

namespace edgemt::capi {

bool copy_text(const std::string& text, char* out, size_t capacity) {
  if (text.size() + 1 > capacity) return false;
  std::memcpy(out, text.data(), text.size());
  out[text.size()] = '\0';
  return true;
}

bool is_blank(const edgemt_text& text) {
  for (size_t i = 0; i < text.length; ++i) {
    const char c = text.data[i];
    if (c != ' ' && c != '\t' && c != '\r' && c != '\n' && c != '\v' && c != '\f') return false;
  }
  return true;
}

void keep_on_one_line(std::string* text) {
  for (char& c : *text) {
    if (c == '\n' || c == '\r') c = ' ';
  }
}

Status target_prefix_id(const Tokenizer& tokenizer, const char* language, const char* call,
                        int32_t* id) {
  const std::string name = language;
  const std::string piece = name.size() > 4 && name.rfind(">>", 0) == 0 ? name : ">>" + name + "<<";
  const Status status = tokenizer.piece_id(piece, id);
  if (status.is_ok()) return status;
  return Status::error(StatusCode::kInvalidArgument, "%s: target prefix %s: %s", call, language,
                       status.message());
}

}  // namespace edgemt::capi
