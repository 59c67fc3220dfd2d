#include "edgemt/utf8.h"

#include <cstdint>

namespace edgemt {

bool is_valid_utf8(std::string_view text, size_t* error_offset) {
  const auto* bytes = reinterpret_cast<const uint8_t*>(text.data());
  const size_t n = text.size();
  size_t i = 0;
  while (i < n) {
    const uint8_t lead = bytes[i];
    size_t length = 0;
    uint32_t code = 0;
    if (lead < 0x80) {
      ++i;
      continue;
    } else if ((lead & 0xE0) == 0xC0) {
      length = 2;
      code = lead & 0x1F;
    } else if ((lead & 0xF0) == 0xE0) {
      length = 3;
      code = lead & 0x0F;
    } else if ((lead & 0xF8) == 0xF0) {
      length = 4;
      code = lead & 0x07;
    } else {
      break;  // continuation byte or 0xF8..0xFF as a lead
    }
    if (i + length > n) break;
    bool ok = true;
    for (size_t k = 1; k < length; ++k) {
      if ((bytes[i + k] & 0xC0) != 0x80) ok = false;
      code = (code << 6) | (bytes[i + k] & 0x3F);
    }
    static constexpr uint32_t kMinimum[5] = {0, 0, 0x80, 0x800, 0x10000};
    if (!ok || code < kMinimum[length] || code > 0x10FFFF || (code >= 0xD800 && code <= 0xDFFF)) {
      break;
    }
    i += length;
  }
  if (i < n) {
    if (error_offset != nullptr) *error_offset = i;
    return false;
  }
  return true;
}

}  // namespace edgemt
