// AlignedFloats: zeroed floats at a 64-byte boundary, as arena buffers are
// (the own f32 kernels load packed blocks and biases with aligned loads).
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

namespace edgemt::testing {

class AlignedFloats {
 public:
  explicit AlignedFloats(size_t count) : storage_(count + 16, 0.0f) {
    const uintptr_t address = reinterpret_cast<uintptr_t>(storage_.data());
    data_ = storage_.data() + ((64 - address % 64) % 64) / sizeof(float);
  }
  float* data() { return data_; }

 private:
  std::vector<float> storage_;
  float* data_ = nullptr;
};

}  // namespace edgemt::testing
