#include "models/expected_tensor.h"

#include <cstdarg>
#include <cstdio>

namespace edgemt {

bool format_tensor_name(char* buffer, size_t size, const char* format, ...) {
  if (buffer == nullptr || size == 0) return false;
  va_list args;
  va_start(args, format);
  const int length = std::vsnprintf(buffer, size, format, args);
  va_end(args);
  return length >= 0 && static_cast<size_t>(length) < size;
}

}  // namespace edgemt
