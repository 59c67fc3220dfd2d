// A naive, obviously-correct encoder-decoder Transformer in double precision,
// reading the same Model the runtime reads (f32, f16 or int8: for int8 the
// weights are q · scale and projection inputs are quantized per row). The runtime's incremental,
// packed, multi-threaded implementation is tested against it.
//
// It recomputes everything per call (full causal decoder over the prefix), as
// the textbook describes, with no caches and no shortcuts.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "edgemt/model.h"

namespace edgemt::testing {

class ReferenceTransformer {
 public:
  explicit ReferenceTransformer(const Model& model);

  // Logits [target_in.size(), vocab] for decoder inputs target_in (starting
  // with the decoder start token), teacher-forced.
  std::vector<double> logits(const std::vector<int32_t>& source,
                             const std::vector<int32_t>& target_in) const;

  // Greedy decoding with the runtime's rules (pad/bos banned, ties to the
  // lowest id, at most max_len tokens counting EOS); EOS not included.
  std::vector<int32_t> greedy(const std::vector<int32_t>& source, size_t max_len) const;

 private:
  using Matrix = std::vector<double>;  // row-major
  // The tensor's values as the file means them (f16 widened, i8 · scale).
  Matrix tensor(const char* name) const;
  // An embedding table as lookups read it: tensor(name), plus its residual
  // codes times their row scales in a file with residual_tables.
  Matrix table(const char* name) const;
  // y [rows, out] = x [rows, in] · Wᵀ + b, W the tensor named `weight`; for
  // an I8 W, x (times W's smoothing vector in smoothed files) is quantized
  // first: per row (Int8PerRowDynamic), or with one range for all rows in an
  // Int8PerTensorDynamic file when `one_product` (the runtime multiplies
  // these rows in one product: the encoder's, the cross-attention memory's;
  // the decoder's rows, one per step of one sentence, stay per row).
  Matrix project(const Matrix& x, size_t rows, const std::string& weight, const Matrix* b,
                 size_t in, size_t out, bool one_product = false) const;
  Matrix encode(const std::vector<int32_t>& source) const;

  const Model& model_;
};

}  // namespace edgemt::testing
