// embed_tokens against a naive reference, for every stored table dtype.
#include "kernels/embedding.h"

#include <doctest/doctest.h>

#include <cmath>
#include <initializer_list>
#include <vector>

#include "kernels/fp16.h"
#include "support/kernel_testing.h"

namespace edgemt::kernels {
namespace {

using testing::Random;

// out[t] = table[ids[t]]·scale + positions[first + t·step], in float with the
// same two roundings (multiply, then add): the kernel must match exactly.
// `table` holds the f32 values the stored table means.
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

// One table in the three stored forms, with the f32 values each one means.
struct StoredTables {
  std::vector<float> f32;
  std::vector<uint16_t> f16;
  std::vector<float> f16_meaning;
  std::vector<int8_t> i8;
  std::vector<float> i8_row_scale;
  std::vector<float> i8_meaning;
};

StoredTables make_tables(Random& rng, size_t vocab, size_t dim) {
  StoredTables t;
  t.f32 = rng.normal_vector(vocab * dim, 0.0f, 1.0f);
  for (float v : t.f32) {
    t.f16.push_back(f32_to_f16(v));
    t.f16_meaning.push_back(f16_to_f32(t.f16.back()));
  }
  for (size_t r = 0; r < vocab; ++r) {
    const float row_scale = 0.01f + 0.001f * static_cast<float>(r);
    t.i8_row_scale.push_back(row_scale);
    for (size_t d = 0; d < dim; ++d) {
      const int8_t q = static_cast<int8_t>(static_cast<int>(rng.index(0, 254)) - 127);
      t.i8.push_back(q);
      t.i8_meaning.push_back(static_cast<float>(q) * row_scale);
    }
  }
  return t;
}

TEST_CASE("kernels/embed_tokens: f32, f16 and i8 tables, encoder (step 1) and decoder (step 0), match the reference") {
  Random rng(41);
  const size_t vocab = 50, max_positions = 40;
  for (size_t dim : {size_t{1}, size_t{3}, size_t{17}, size_t{255}, size_t{256}}) {
    const StoredTables tables = make_tables(rng, vocab, dim);
    const auto positions = rng.normal_vector(max_positions * dim, 0.0f, 1.0f);
    struct Case {
      EmbeddingTable table;
      const std::vector<float>* meaning;
    };
    const Case cases[] = {
        {{tables.f32.data(), DType::kF32, nullptr, vocab, dim, {}, {}}, &tables.f32},
        {{tables.f16.data(), DType::kF16, nullptr, vocab, dim, {}, {}}, &tables.f16_meaning},
        {{tables.i8.data(), DType::kI8, tables.i8_row_scale.data(), vocab, dim, {}, {}}, &tables.i8_meaning},
    };
    for (const Case& c : cases) {
      for (size_t step : {size_t{1}, size_t{0}}) {
        for (size_t count : {size_t{1}, size_t{7}, size_t{20}}) {
          std::vector<int32_t> ids = {static_cast<int32_t>(vocab - 1)};  // last table row
          while (ids.size() < count) ids.push_back(static_cast<int32_t>(rng.index(0, vocab - 1)));
          const size_t first = step == 1 ? max_positions - count : 13;
          const float scale = 22.627417f;  // sqrt(512)
          std::vector<float> out(count * dim, NAN);
          embed_tokens(c.table, ids.data(), count, scale, positions.data(), first, step, out.data());
          const auto ref = reference_embed(*c.meaning, dim, ids, scale, positions, first, step);
          CAPTURE(dtype_name(c.table.dtype));
          CAPTURE(dim);
          CAPTURE(step);
          CAPTURE(count);
          CHECK(testing::same_bits(out.data(), ref.data(), out.size()));
        }
      }
    }
  }
}

TEST_CASE("kernels/embed_tokens: scale 1 - repeated ids - count 0") {
  const size_t dim = 3;
  const std::vector<float> table = {1, 2, 3, 4, 5, 6};
  const std::vector<float> positions = {0.5f, 0.5f, 0.5f, 10, 20, 30};
  const std::vector<int32_t> ids = {1, 1};
  const EmbeddingTable view{table.data(), DType::kF32, nullptr, 2, dim, {}, {}};
  std::vector<float> out(6);
  embed_tokens(view, ids.data(), 2, 1.0f, positions.data(), 0, 1, out.data());
  const std::vector<float> expected = {4.5f, 5.5f, 6.5f, 14, 25, 36};
  CHECK(out == expected);
  float untouched = 7.0f;
  embed_tokens(view, ids.data(), 0, 1.0f, positions.data(), 0, 1, &untouched);
  CHECK(untouched == 7.0f);
}

TEST_CASE("kernels/embed_tokens: i8 row scale applies per row, zero rows stay zero") {
  const size_t dim = 2;
  const std::vector<int8_t> table = {127, -127, 0, 0, 2, -3};
  const std::vector<float> row_scale = {0.5f, 0.0f, 0.25f};
  const std::vector<float> positions = {0, 0};
  const EmbeddingTable view{table.data(), DType::kI8, row_scale.data(), 3, dim, {}, {}};
  const std::vector<int32_t> ids = {0, 1, 2};
  std::vector<float> out(6, NAN);
  embed_tokens(view, ids.data(), 3, 2.0f, positions.data(), 0, 0, out.data());
  const std::vector<float> expected = {127.0f, -127.0f, 0, 0, 1.0f, -1.5f};
  CHECK(out == expected);
}

}  // namespace
}  // namespace edgemt::kernels

namespace edgemt::kernels {
namespace {

TEST_CASE("kernels/embed_tokens: i8 rows read from a tied projection's packed weights equal the table's") {
  // Vocabulary and width not multiples of the 16-column blocks and 4-deep
  // groups, so padding lanes and groups are crossed.
  testing::Random rng(51);
  for (size_t vocab : {1, 17, 50}) {
    for (size_t dim : {1, 6, 35}) {
      std::vector<int8_t> table(vocab * dim);
      for (int8_t& q : table) q = static_cast<int8_t>(static_cast<int>(rng.index(0, 254)) - 127);
      std::vector<float> row_scale(vocab);
      for (float& s : row_scale) s = rng.uniform(0.001f, 0.1f);
      std::vector<uint8_t> storage(int8::packed_bytes(vocab, dim) + 64);
      void* aligned = storage.data() + (64 - reinterpret_cast<uintptr_t>(storage.data()) % 64) % 64;
      int8::PackedWeights packed;
      REQUIRE(int8::pack_weights(table.data(), row_scale.data(), nullptr, vocab, dim, aligned, &packed));
      const EmbeddingTable plain{table.data(), DType::kI8, row_scale.data(), vocab, dim, {}, {}};
      const EmbeddingTable tied{nullptr, DType::kI8, nullptr, vocab, dim, packed, {}};
      std::vector<int32_t> ids;
      for (size_t i = 0; i < vocab; ++i) ids.push_back(static_cast<int32_t>(i));
      const std::vector<float> positions = rng.normal_vector(dim, 0.0f, 1.0f);
      std::vector<float> want(vocab * dim), got(vocab * dim);
      embed_tokens(plain, ids.data(), vocab, 1.5f, positions.data(), 0, 0, want.data());
      embed_tokens(tied, ids.data(), vocab, 1.5f, positions.data(), 0, 0, got.data());
      CHECK(testing::same_bits(got.data(), want.data(), got.size()));
    }
  }
}

TEST_CASE("kernels/embed_tokens: i8 rows with residual codes match the reference, table or pack") {
  // The row means f32(q · s) + f32(r · s2), r the 4-bit code of column d
  // (the low half of byte d / 2 for even d, the high half for odd d, two's
  // complement); then · scale + position as for any table.
  testing::Random rng(53);
  for (size_t vocab : {1, 17}) {
    for (size_t dim : {1, 6, 35}) {
      CAPTURE(vocab);
      CAPTURE(dim);
      const size_t bytes_per_row = (dim + 1) / 2;
      std::vector<int8_t> table(vocab * dim);
      for (int8_t& q : table) q = static_cast<int8_t>(static_cast<int>(rng.index(0, 254)) - 127);
      std::vector<uint8_t> residual(vocab * bytes_per_row);
      for (uint8_t& byte : residual) {
        byte = static_cast<uint8_t>(rng.index(0, 255));  // any halves, -8 included
        if (dim % 2 == 1 && (&byte - residual.data()) % bytes_per_row == bytes_per_row - 1) byte &= 0x0F;
      }
      std::vector<float> row_scale(vocab), residual_scale;
      for (float& s : row_scale) s = rng.uniform(0.001f, 0.1f);
      residual_scale.push_back(0.0f);  // a row the codes give exactly
      while (residual_scale.size() < vocab) residual_scale.push_back(rng.uniform(0.0001f, 0.01f));
      std::vector<float> meaning(vocab * dim);
      for (size_t r = 0; r < vocab; ++r) {
        for (size_t d = 0; d < dim; ++d) {
          const uint8_t byte = residual[r * bytes_per_row + d / 2];
          const int half = d % 2 == 0 ? (byte & 0x0F) : (byte >> 4);
          const float first = static_cast<float>(table[r * dim + d]) * row_scale[r];
          const float second = static_cast<float>(half >= 8 ? half - 16 : half) * residual_scale[r];
          meaning[r * dim + d] = first + second;
        }
      }
      std::vector<uint8_t> storage(int8::packed_bytes(vocab, dim) + 64);
      void* aligned = storage.data() + (64 - reinterpret_cast<uintptr_t>(storage.data()) % 64) % 64;
      int8::PackedWeights packed;
      REQUIRE(int8::pack_weights(table.data(), row_scale.data(), nullptr, vocab, dim, aligned, &packed));
      EmbeddingTable plain{table.data(), DType::kI8, row_scale.data(), vocab, dim, {}, {}};
      EmbeddingTable tied{nullptr, DType::kI8, nullptr, vocab, dim, packed, {}};
      for (EmbeddingTable* t : {&plain, &tied}) {
        t->residual = residual.data();
        t->residual_scale = residual_scale.data();
      }
      std::vector<int32_t> ids;
      for (size_t i = 0; i < vocab; ++i) ids.push_back(static_cast<int32_t>(vocab - 1 - i));
      const std::vector<float> positions = rng.normal_vector(dim * 2, 0.0f, 1.0f);
      const std::vector<float> want = reference_embed(meaning, dim, ids, 1.5f, positions, 1, 0);
      std::vector<float> got(vocab * dim), got_tied(vocab * dim), rows(vocab * dim);
      embed_tokens(plain, ids.data(), vocab, 1.5f, positions.data(), 1, 0, got.data());
      embed_tokens(tied, ids.data(), vocab, 1.5f, positions.data(), 1, 0, got_tied.data());
      CHECK(testing::same_bits(got.data(), want.data(), want.size()));
      CHECK(testing::same_bits(got_tied.data(), want.data(), want.size()));
      gather_rows(plain, ids.data(), vocab, rows.data(), dim);  // rows as they are
      for (size_t t = 0; t < vocab; ++t) {
        CHECK(testing::same_bits(rows.data() + t * dim, meaning.data() + (vocab - 1 - t) * dim, dim));
      }
    }
  }
}

}  // namespace
}  // namespace edgemt::kernels

namespace edgemt::kernels {
namespace {

TEST_CASE("kernels/embed_tokens: f32 rows read from a tied projection's own f32 pack equal the table's") {
  testing::Random rng(52);
  for (size_t vocab : {1, 17, 50}) {
    for (size_t dim : {1, 6, 35}) {
      const std::vector<float> table = rng.normal_vector(vocab * dim, 0.0f, 1.0f);
      std::vector<uint8_t> storage(f32::packed_bytes(vocab, dim) + 64);
      void* aligned = storage.data() + (64 - reinterpret_cast<uintptr_t>(storage.data()) % 64) % 64;
      f32::PackedWeights packed;
      f32::pack_weights(table.data(), nullptr, vocab, dim, aligned, &packed);
      const EmbeddingTable plain{table.data(), DType::kF32, nullptr, vocab, dim, {}, {}};
      const EmbeddingTable tied{nullptr, DType::kF32, nullptr, vocab, dim, {}, packed};
      std::vector<int32_t> ids;
      for (size_t i = 0; i < vocab; ++i) ids.push_back(static_cast<int32_t>(vocab - 1 - i));
      const std::vector<float> positions = rng.normal_vector(dim, 0.0f, 1.0f);
      std::vector<float> want(vocab * dim), got(vocab * dim);
      embed_tokens(plain, ids.data(), vocab, 16.0f, positions.data(), 0, 0, want.data());
      embed_tokens(tied, ids.data(), vocab, 16.0f, positions.data(), 0, 0, got.data());
      CHECK(testing::same_bits(got.data(), want.data(), got.size()));
    }
  }
}

}  // namespace
}  // namespace edgemt::kernels
