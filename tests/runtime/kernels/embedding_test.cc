// embed_tokens against a naive reference.
#include "kernels/embedding.h"

#include <doctest/doctest.h>

#include <vector>
#include <initializer_list>

#include "support/kernel_testing.h"

namespace edgemt::kernels {
namespace {

using testing::Random;

// out[t] = table[ids[t]]·scale + positions[first + t·step], in float with the
// same two roundings (multiply, then add): the kernel must match exactly.
std::vector<float> reference_embed(const std::vector<float>& table, size_t dim,
                                   const std::vector<int32_t>& ids, float scale,
                                   const std::vector<float>& positions, size_t first,
                                   size_t step) {
  std::vector<float> out(ids.size() * dim);
  for (size_t t = 0; t < ids.size(); ++t) {
    for (size_t d = 0; d < dim; ++d) {
      const float scaled = table[static_cast<size_t>(ids[t]) * dim + d] * scale;
      out[t * dim + d] = scaled + positions[(first + t * step) * dim + d];
    }
  }
  return out;
}

TEST_CASE("kernels/embed_tokens: encoder (step 1) and decoder (step 0) match the reference") {
  Random rng(41);
  const size_t vocab = 50, max_positions = 40;
  for (size_t dim : {size_t{1}, size_t{3}, size_t{17}, size_t{255}, size_t{256}}) {
    const auto table = rng.normal_vector(vocab * dim, 0.0f, 1.0f);
    const auto positions = rng.normal_vector(max_positions * dim, 0.0f, 1.0f);
    for (size_t step : {size_t{1}, size_t{0}}) {
      for (size_t count : {size_t{1}, size_t{7}, size_t{20}}) {
        std::vector<int32_t> ids = {static_cast<int32_t>(vocab - 1)};  // last table row
        while (ids.size() < count) ids.push_back(static_cast<int32_t>(rng.index(0, vocab - 1)));
        const size_t first = step == 1 ? max_positions - count : 13;
        const float scale = 22.627417f;  // sqrt(512)
        std::vector<float> out(count * dim, NAN);
        embed_tokens(table.data(), dim, ids.data(), count, scale, positions.data(), first, step,
                     out.data());
        const auto ref = reference_embed(table, dim, ids, scale, positions, first, step);
        CAPTURE(dim);
        CAPTURE(step);
        CAPTURE(count);
        CHECK(testing::same_bits(out.data(), ref.data(), out.size()));
      }
    }
  }
}

TEST_CASE("kernels/embed_tokens: scale 1 - repeated ids - count 0") {
  const size_t dim = 3;
  const std::vector<float> table = {1, 2, 3, 4, 5, 6};
  const std::vector<float> positions = {0.5f, 0.5f, 0.5f, 10, 20, 30};
  const std::vector<int32_t> ids = {1, 1};
  std::vector<float> out(6);
  embed_tokens(table.data(), dim, ids.data(), 2, 1.0f, positions.data(), 0, 1, out.data());
  const std::vector<float> expected = {4.5f, 5.5f, 6.5f, 14, 25, 36};
  CHECK(out == expected);
  float untouched = 7.0f;
  embed_tokens(table.data(), dim, ids.data(), 0, 1.0f, positions.data(), 0, 1, &untouched);
  CHECK(untouched == 7.0f);
}

}  // namespace
}  // namespace edgemt::kernels
