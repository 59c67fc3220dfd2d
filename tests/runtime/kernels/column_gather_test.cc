// Packs of selected columns (kernels/column_gather.h): a product on the
// gathered pack gives, bit for bit, those columns of the naive reference
// (and of the full pack's product), for every f32 and int8 kernel this CPU
// runs, with column counts and depths that leave partial blocks and groups.
#include "kernels/column_gather.h"

#include <doctest/doctest.h>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <vector>

#include "support/f32_gemm_reference.h"
#include "support/int8_reference.h"
#include "support/kernel_testing.h"

namespace edgemt::kernels {
namespace {

using testing::Random;

using testing::PackStorage;

// Distinct ids in [0, n), in an order that is not sorted.
std::vector<int32_t> pick_ids(Random& rng, size_t n, size_t count) {
  std::vector<int32_t> ids;
  std::vector<bool> used(n, false);
  while (ids.size() < count) {
    const size_t id = rng.index(0, n - 1);
    if (used[id]) continue;
    used[id] = true;
    ids.push_back(static_cast<int32_t>(id));
  }
  return ids;
}

// y [m, pack.columns] of `kernel` on the quantized rows xq [m, pack.depth].
std::vector<float> run_int8(int8::GemmKernel kernel, const testing::QuantizedRows& xq, size_t m,
                            const int8::PackedWeights& pack, int32_t code_limit) {
  std::vector<float> y(m * pack.columns, NAN);
  int8::GemmArgs args;
  args.xq = xq.q.data();
  args.xq_stride = int8::padded_depth(pack.depth);
  args.x_scale = xq.scale.data();
  args.rows = m;
  args.weights = &pack;
  args.y = y.data();
  args.y_stride = pack.columns;
  args.code_limit = code_limit;
  kernel(args, 0, pack.block_count);
  return y;
}

std::vector<f32::GemmKernel> f32_kernels() {
  std::vector<f32::GemmKernel> kernels = {f32::gemm_portable};
  if (f32::fast_gemm_kernel() != nullptr) kernels.push_back(f32::fast_gemm_kernel());
  return kernels;
}

TEST_CASE("kernels/column_gather: f32 gathered and row-packed columns give the reference's bits") {
  Random rng(4201);
  for (size_t k : {1, 7, 64}) {
    for (size_t count : {1, 15, 16, 17, 40}) {
      const size_t n = 70, m = 5;
      CAPTURE(k);
      CAPTURE(count);
      const std::vector<float> x = rng.normal_vector(m * k, 0.0f, 1.0f);
      const std::vector<float> w = rng.normal_vector(n * k, 0.0f, 0.5f);
      const std::vector<float> bias = rng.normal_vector(n, 0.0f, 1.0f);
      const std::vector<int32_t> ids = pick_ids(rng, n, count);
      const testing::PackedF32 full = testing::pack_f32(w, bias, n, k);
      PackStorage gathered_storage(f32::packed_bytes(count, k));
      PackStorage rows_storage(f32::packed_bytes(count, k));
      f32::PackedWeights gathered;
      f32::PackedWeights from_rows;
      gather_columns(full.weights, ids.data(), count, gathered_storage.aligned(), &gathered);
      pack_rows(w.data(), bias.data(), k, ids.data(), count, rows_storage.aligned(), &from_rows);
      CHECK(gathered.columns == count);
      CHECK(gathered.block_count == (count + 15) / 16);
      CHECK(gathered.tiny == f32::TinyWeights::kNone);
      CHECK(from_rows.tiny == f32::TinyWeights::kNone);
      f32::PackedWeights unchecked;
      pack_rows(w.data(), bias.data(), k, ids.data(), count, rows_storage.aligned(), &unchecked,
                false);
      CHECK(unchecked.tiny == f32::TinyWeights::kUnknown);
      // The two packs are the same bytes, padding included.
      CHECK(std::memcmp(gathered.blocks, from_rows.blocks, f32::packed_bytes(count, k)) == 0);
      for (f32::GemmKernel kernel : f32_kernels()) {
        std::vector<float> got(m * count, NAN);
        f32::GemmArgs args;
        args.x = x.data();
        args.x_stride = k;
        args.rows = m;
        args.weights = &gathered;
        args.y = got.data();
        args.y_stride = count;
        kernel(args, 0, gathered.block_count);
        for (size_t i = 0; i < m; ++i) {
          for (size_t j = 0; j < count; ++j) {
            const size_t id = static_cast<size_t>(ids[j]);
            float want = bias[id];
            for (size_t d = 0; d < k; ++d) want = kernels::math::fma_f32(x[i * k + d], w[id * k + d], want);
            CHECK(std::memcmp(&got[i * count + j], &want, sizeof(float)) == 0);
          }
        }
      }
    }
  }
}

TEST_CASE("kernels/column_gather: f32 gathers tell tiny weights from their source") {
  // Column 3 holds a tiny weight (nonzero, below kTinyMagnitude): a gather
  // with it has some; one without it none, from a source known to have some
  // (looked at) or not known (kUnknown: a view); columns of a source with
  // none have none without looking.
  Random rng(4202);
  const size_t n = 40, k = 8;
  std::vector<float> w = rng.normal_vector(n * k, 0.0f, 0.5f);
  w[3 * k + 5] = f32::kTinyMagnitude / 4;
  const testing::PackedF32 full = testing::pack_f32(w, {}, n, k);
  REQUIRE(full.weights.tiny == f32::TinyWeights::kSome);
  f32::PackedWeights unknown = full.weights;
  unknown.tiny = f32::TinyWeights::kUnknown;
  const std::vector<int32_t> with = {1, 3, 30};
  const std::vector<int32_t> without = {1, 4, 30};
  PackStorage storage(f32::packed_bytes(3, k));
  f32::PackedWeights gathered;
  const f32::PackedWeights* sources[] = {&full.weights, &unknown};
  for (const f32::PackedWeights* source : sources) {
    gather_columns(*source, with.data(), 3, storage.aligned(), &gathered);
    CHECK(gathered.tiny == f32::TinyWeights::kSome);
    gather_columns(*source, without.data(), 3, storage.aligned(), &gathered);
    CHECK(gathered.tiny == f32::TinyWeights::kNone);
  }
  // A source that says it has none is believed (it is the packer's word).
  f32::PackedWeights none = full.weights;
  none.tiny = f32::TinyWeights::kNone;
  gather_columns(none, with.data(), 3, storage.aligned(), &gathered);
  CHECK(gathered.tiny == f32::TinyWeights::kNone);
}

TEST_CASE("kernels/column_gather: int8 gathered columns give the reference's bits on every kernel") {
  Random rng(4202);
  int8::GemmVariant variants[8];
  const size_t variant_count = int8::available_gemm_kernels(variants, 8);
  REQUIRE(variant_count >= 1);
  for (size_t k : {3, 4, 37, 64}) {
    for (size_t count : {1, 16, 17, 33}) {
      const size_t n = 60, m = 3;
      CAPTURE(k);
      CAPTURE(count);
      const testing::QuantizedWeights w = testing::random_int8_weights(rng, n, k);
      const std::vector<float> bias = rng.normal_vector(n, 0.0f, 1.0f);
      const testing::TestPack full(w, bias.data(), n, k);
      const std::vector<int32_t> ids = pick_ids(rng, n, count);
      PackStorage storage(int8::packed_bytes(count, k));
      int8::PackedWeights gathered;
      gather_columns(full.view, ids.data(), count, storage.aligned(), &gathered);
      CHECK(gathered.columns == count);
      // The selected columns' weights, scales and biases, for the reference.
      testing::QuantizedWeights picked{std::vector<int8_t>(count * k), std::vector<float>(count)};
      std::vector<float> picked_bias(count);
      for (size_t j = 0; j < count; ++j) {
        const size_t id = static_cast<size_t>(ids[j]);
        std::memcpy(&picked.q[j * k], &w.q[id * k], k);
        picked.scale[j] = w.scale[id];
        picked_bias[j] = bias[id];
      }
      // What pack_weights makes of those rows is the gathered pack, byte for byte.
      const testing::TestPack direct(picked, picked_bias.data(), count, k);
      CHECK(std::memcmp(direct.view.blocks, gathered.blocks, int8::packed_bytes(count, k)) == 0);
      const std::vector<float> x = rng.normal_vector(m * k, 0.0f, 1.0f);
      for (int32_t limit : {int8::kFullCodes, int8::kNarrowCodes}) {
        const testing::QuantizedRows xq = testing::reference_quantize_rows(x, m, k, limit);
        const std::vector<float> want = testing::reference_int8_gemm(
            xq, m, k, picked.q, picked.scale, picked_bias.data(), count, false);
        for (size_t v = 0; v < variant_count; ++v) {
          CAPTURE(variants[v].name);
          const std::vector<float> got = run_int8(variants[v].kernel, xq, m, gathered, limit);
          CHECK(std::memcmp(got.data(), want.data(), got.size() * sizeof(float)) == 0);
        }
      }
    }
  }
}

TEST_CASE("kernels/column_gather: int8 column ranges of whole blocks give the reference's bits") {
  // Ranges of a 70-column pack (4 whole blocks and 6 columns): each a view of
  // the same storage whose product is those columns of the naive one.
  Random rng(4203);
  int8::GemmVariant variants[8];
  const size_t variant_count = int8::available_gemm_kernels(variants, 8);
  REQUIRE(variant_count >= 1);
  const size_t n = 70, m = 4;
  for (size_t k : {5, 64}) {
    CAPTURE(k);
    const testing::QuantizedWeights w = testing::random_int8_weights(rng, n, k);
    const std::vector<float> bias = rng.normal_vector(n, 0.0f, 1.0f);
    const testing::TestPack full(w, bias.data(), n, k);
    const std::vector<float> x = rng.normal_vector(m * k, 0.0f, 1.0f);
    const testing::QuantizedRows xq = testing::reference_quantize_rows(x, m, k, int8::kFullCodes);
    const std::vector<float> want =
        testing::reference_int8_gemm(xq, m, k, w.q, w.scale, bias.data(), n, false);
    const size_t ranges[][2] = {{0, 16}, {16, 32}, {32, 38}, {64, 6}, {0, 70}};
    for (const auto& range : ranges) {
      const size_t first = range[0], count = range[1];
      CAPTURE(first);
      CAPTURE(count);
      const int8::PackedWeights view = column_range(full.view, first, count);
      REQUIRE(view.columns == count);
      CHECK(view.block_count == (count + 15) / 16);
      CHECK(view.depth == k);
      for (size_t v = 0; v < variant_count; ++v) {
        CAPTURE(variants[v].name);
        const std::vector<float> got =
            run_int8(variants[v].kernel, xq, m, view, int8::kFullCodes);
        for (size_t i = 0; i < m; ++i) {
          CHECK(std::memcmp(&got[i * count], &want[i * n + first], count * sizeof(float)) == 0);
        }
      }
    }
    // Not whole blocks, empty, or past the end: no view.
    const size_t bad[][2] = {{8, 16}, {0, 20}, {16, 60}, {64, 0}, {80, 16}};
    for (const auto& range : bad) {
      CAPTURE(range[0]);
      CAPTURE(range[1]);
      CHECK(column_range(full.view, range[0], range[1]).columns == 0);
    }
  }
}

}  // namespace
}  // namespace edgemt::kernels
