// ArgmaxShortcut against the naive arg-max of the full product (the same
// matrix on PackedF32Linear, banned ids skipped, the lowest id among
// equals), built over the pack and over unpacked rows: random matrices, rows that int8 cannot tell apart, exact ties, a
// case where the int8 ranking is wrong, bans, a selection of columns (a
// lexical shortlist), and the inputs it must refuse.
#include "layers/argmax_shortcut.h"

#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <string>
#include <vector>

#include "kernels/column_gather.h"
#include "kernels/f32_gemm.h"
#include "kernels/int8_gemm.h"
#include "layers/packed_f32_linear.h"
#include "support/aligned_floats.h"
#include "support/int8_scratch.h"
#include "support/kernel_testing.h"
#include "support/thread_pool.h"

namespace edgemt {
namespace {

using testing::Random;

constexpr size_t kNoPick = ArgmaxShortcut::kNoPick;

using Scratch = testing::Int8Scratch;

// The full product's arg-max over the ids not banned (lowest among equals),
// kNoPick when every id is banned.
size_t naive_argmax(const float* y, size_t n_out, const std::vector<int32_t>& banned) {
  size_t best = kNoPick;
  for (size_t n = 0; n < n_out; ++n) {
    bool skip = false;
    for (int32_t id : banned) skip |= static_cast<size_t>(id) == n;
    if (skip) continue;
    if (best == kNoPick || y[n] > y[best]) best = n;
  }
  return best;
}

// One matrix, its exact product and its shortcut, built both over the pack
// and over the unpacked rows (whose candidates are packed on the fly).
struct Fixture {
  Fixture(const std::vector<float>& w, const std::vector<float>* b, size_t in_features,
          size_t out_features)
      : in(in_features), out(out_features), weight(w) {
    if (b != nullptr) bias = *b;
    const float* bias_data = b != nullptr ? bias.data() : nullptr;
    REQUIRE(exact.create(weight.data(), bias_data, in, out, false).is_ok());
    REQUIRE(shortcut.create(exact.packed(), kernels::f32::fast_gemm_kernel()).is_ok());
    REQUIRE(rows.create(weight.data(), bias_data, in, out).is_ok());
    REQUIRE(from_rows.create(rows).is_ok());
    CHECK(from_rows.bytes() == shortcut.bytes());
  }

  // Checks pick() against the naive arg-max for x [rows, in]; returns how
  // many rows it proved. The shortcut over the rows answers the same.
  size_t check(const std::vector<float>& x, size_t row_count, const std::vector<int32_t>& banned,
               const Parallel& parallel = Parallel()) {
    std::vector<float> y(row_count * out);
    exact.run(x.data(), row_count, y.data(), Parallel());
    return proved(pick_both(x, row_count, banned, out, parallel), y, out, banned);
  }

  // The same over the columns ids (ascending), as a lexical shortlist selects
  // them: best[r] is a position in ids, checked against the naive arg-max
  // of those columns of the full product (banned ids are vocabulary ids,
  // selected or not). Both shortcuts are back on the whole matrix after.
  size_t check_selected(const std::vector<float>& x, size_t row_count,
                        const std::vector<int32_t>& banned, const std::vector<int32_t>& ids,
                        const Parallel& parallel = Parallel()) {
    const size_t count = ids.size();
    std::vector<float> y(row_count * out), kept(row_count * count);
    exact.run(x.data(), row_count, y.data(), Parallel());
    std::vector<int32_t> banned_columns;
    for (size_t j = 0; j < count; ++j) {
      for (int32_t id : banned) {
        if (id == ids[j]) banned_columns.push_back(static_cast<int32_t>(j));
      }
      for (size_t r = 0; r < row_count; ++r) kept[r * count + j] = y[r * out + ids[j]];
    }
    // Their f32 packs: gathered from the pack, and packed from the rows (as
    // OutputHead does for each kind); the shortcuts' own gathers.
    testing::AlignedFloats gathered(kernels::f32::packed_bytes(count, in) / sizeof(float));
    testing::AlignedFloats packed_rows(kernels::f32::packed_bytes(count, in) / sizeof(float));
    kernels::f32::PackedWeights from_pack_exact, from_rows_exact;
    kernels::gather_columns(exact.packed(), ids.data(), count, gathered.data(), &from_pack_exact);
    kernels::pack_rows(weight.data(), bias.empty() ? nullptr : bias.data(), in, ids.data(), count,
                       packed_rows.data(), &from_rows_exact);
    testing::AlignedFloats storage(shortcut.selection_bytes(count) / sizeof(float));
    testing::AlignedFloats rows_storage(from_rows.selection_bytes(count) / sizeof(float));
    REQUIRE(from_rows.set_rows(true).is_ok());  // as OutputHead with a shortlist
    shortcut.select(ids.data(), count, &from_pack_exact, storage.data());
    from_rows.select(ids.data(), count, &from_rows_exact, rows_storage.data());
    REQUIRE(shortcut.selected());
    REQUIRE(from_rows.selected());
    const std::vector<size_t> best = pick_both(x, row_count, banned, count, parallel);
    shortcut.select(nullptr, 0, nullptr, nullptr);
    from_rows.select(nullptr, 0, nullptr, nullptr);
    CHECK_FALSE(shortcut.selected());
    // As rows, no pick without a selection; as a pack again, the same codes
    // (check() compares the whole matrix's bounds with `shortcut`'s).
    std::vector<float> approx(row_count * out);
    std::vector<size_t> none(row_count);
    Scratch scratch(row_count, in);
    testing::AlignedFloats blocks(parallel.workers * UnpackedF32Linear::scratch_floats(in));
    CHECK(from_rows.pick(x.data(), row_count, nullptr, 0, approx.data(), scratch.view,
                         blocks.data(), parallel, none.data()).code() ==
          StatusCode::kFailedPrecondition);
    REQUIRE(from_rows.set_rows(false).is_ok());
    return proved(best, kept, count, banned_columns);
  }

  // pick() of both shortcuts over their `columns` active columns; they must
  // answer alike, from the same bounds bit for bit (`from_rows` makes its
  // selections from its int8 copy kept as rows, `shortcut` gathers them
  // from its pack).
  std::vector<size_t> pick_both(const std::vector<float>& x, size_t row_count,
                                const std::vector<int32_t>& banned, size_t columns,
                                const Parallel& parallel) {
    std::vector<float> approx(row_count * columns), approx_from_rows(row_count * columns);
    Scratch scratch(row_count, in);
    std::vector<size_t> best(row_count, 12345), best_from_rows(row_count, 54321);
    REQUIRE(shortcut.pick(x.data(), row_count, banned.data(), banned.size(), approx.data(),
                          scratch.view, nullptr, parallel, best.data()).is_ok());
    testing::AlignedFloats blocks(parallel.workers * UnpackedF32Linear::scratch_floats(in));
    REQUIRE(from_rows.pick(x.data(), row_count, banned.data(), banned.size(),
                           approx_from_rows.data(), scratch.view, blocks.data(), parallel,
                           best_from_rows.data()).is_ok());
    CHECK(best_from_rows == best);
    CHECK(std::memcmp(approx.data(), approx_from_rows.data(), approx.size() * sizeof(float)) == 0);
    return best;
  }

  // How many rows pick() proved, each checked against the naive arg-max of
  // y [rows, columns] without the banned columns.
  static size_t proved(const std::vector<size_t>& best, const std::vector<float>& y,
                       size_t columns, const std::vector<int32_t>& banned) {
    size_t count = 0;
    for (size_t r = 0; r < best.size(); ++r) {
      CAPTURE(r);
      if (best[r] == kNoPick) continue;
      ++count;
      CHECK(best[r] == naive_argmax(y.data() + r * columns, columns, banned));
    }
    return count;
  }

  size_t in, out;
  std::vector<float> weight, bias;
  PackedF32Linear exact;
  ArgmaxShortcut shortcut;
  UnpackedF32Linear rows;
  ArgmaxShortcut from_rows;
};

bool has_kernel() { return kernels::f32::fast_gemm_kernel() != nullptr; }

TEST_CASE("layers/argmax_shortcut: the full product's arg-max on random matrices" * doctest::skip(!has_kernel())) {
  Random rng(31);
  testing::Pool pool = testing::make_pool(2);
  REQUIRE(pool != nullptr);
  const Parallel always(pool.get(), 0);
  const std::vector<int32_t> banned = {0, 2};
  for (size_t out : {size_t{3}, size_t{17}, size_t{300}, size_t{8000}}) {
    for (size_t in : {size_t{1}, size_t{7}, size_t{64}, size_t{256}}) {
      CAPTURE(out);
      CAPTURE(in);
      const std::vector<float> w = rng.normal_vector(out * in, 0.0f, 0.3f);
      const std::vector<float> b = rng.normal_vector(out, 0.0f, 0.5f);
      for (bool with_bias : {false, true}) {
        Fixture f(w, with_bias ? &b : nullptr, in, out);
        CHECK(f.shortcut.bytes() >= out * in);
        const size_t rows = 5;
        std::vector<float> x = rng.normal_vector(rows * in, 0.0f, 1.0f);
        x[in] = 40.0f;  // an outlier: a coarse quantization of row 1
        CHECK(f.check(x, rows, banned) == rows);
        CHECK(f.check(x, rows, banned, always) == rows);
        // One row, two threads: its passes cut into column ranges.
        CHECK(f.check(x, 1, banned, always) == 1);
      }
    }
  }
}

TEST_CASE("layers/argmax_shortcut: rows int8 cannot tell apart, and exact ties" * doctest::skip(!has_kernel())) {
  // Every row is one base row plus noise far below an int8 step, so the
  // approximations overlap and many candidates need their exact value; rows
  // 40 and 41 (and 90 and 91) are equal, so ties go to the lower id.
  Random rng(32);
  const size_t in = 96, out = 200;
  const std::vector<float> base = rng.normal_vector(in, 0.0f, 1.0f);
  std::vector<float> w(out * in);
  for (size_t n = 0; n < out; ++n) {
    for (size_t k = 0; k < in; ++k) w[n * in + k] = base[k] + rng.normal(0.0f, 1e-4f);
  }
  for (size_t k = 0; k < in; ++k) {
    w[41 * in + k] = w[40 * in + k];
    w[91 * in + k] = w[90 * in + k];
  }
  Fixture f(w, nullptr, in, out);
  size_t proved = 0;
  for (int trial = 0; trial < 200; ++trial) {
    std::vector<float> x = rng.normal_vector(in, 0.0f, 1.0f);
    proved += f.check(x, 1, {});
  }
  CHECK(proved == 200);
  // Rows 40 and 41 a little longer than the rest (2e-4, a fortieth of an
  // int8 step) and x = the base row: they tie for the maximum, and the
  // lower id wins.
  for (size_t k = 0; k < in; ++k) w[40 * in + k] = w[41 * in + k] = base[k] * 1.0002f;
  Fixture tied(w, nullptr, in, out);
  CHECK(tied.check(base, 1, {}) == 1);
  Scratch scratch(1, in);
  std::vector<float> approx(out);
  size_t best = kNoPick;
  REQUIRE(tied.shortcut.pick(base.data(), 1, nullptr, 0, approx.data(), scratch.view, nullptr, Parallel(), &best).is_ok());
  CHECK(best == 40);
}

TEST_CASE("layers/argmax_shortcut: one row over column ranges, ties across a range's edge" * doctest::skip(!has_kernel())) {
  // 200 ids are 13 blocks of 16; two threads cut one row into 8 ranges of
  // whole blocks, the second starting at id 16 and the third at id 48 (c·13/8
  // blocks). Ids 15 and 16, 47 and 48 are equal rows a little longer than
  // the rest: each pair ties across an edge, and the lower id must win.
  Random rng(35);
  const size_t in = 64, out = 200;
  const std::vector<float> base = rng.normal_vector(in, 0.0f, 1.0f);
  std::vector<float> w(out * in);
  for (size_t n = 0; n < out; ++n) {
    for (size_t k = 0; k < in; ++k) w[n * in + k] = base[k] + rng.normal(0.0f, 1e-4f);
  }
  testing::Pool pool = testing::make_pool(2);
  REQUIRE(pool != nullptr);
  const Parallel always(pool.get(), 0);
  for (size_t first : {size_t{15}, size_t{47}}) {
    CAPTURE(first);
    std::vector<float> tied_w = w;
    for (size_t k = 0; k < in; ++k) {
      tied_w[first * in + k] = tied_w[(first + 1) * in + k] = base[k] * 1.0002f;
    }
    Fixture tied(tied_w, nullptr, in, out);
    CHECK(tied.check(base, 1, {}, always) == 1);
    Scratch scratch(1, in);
    std::vector<float> approx(out);
    size_t best = kNoPick;
    REQUIRE(tied.shortcut.pick(base.data(), 1, nullptr, 0, approx.data(), scratch.view, nullptr,
                               always, &best).is_ok());
    CHECK(best == first);
    // The same with the lower of the two banned: the higher one wins.
    const std::vector<int32_t> banned = {static_cast<int32_t>(first)};
    REQUIRE(tied.shortcut.pick(base.data(), 1, banned.data(), banned.size(), approx.data(),
                               scratch.view, nullptr, always, &best).is_ok());
    CHECK(best == first + 1);
  }
}

TEST_CASE("layers/argmax_shortcut: a selection of columns, as a lexical shortlist makes" * doctest::skip(!has_kernel())) {
  // Random matrices and a random third of their ids (the matrix's best id
  // among them or not), banned ids in and out of the selection; then rows
  // int8 cannot tell apart with two equal columns selected: the lower
  // position wins, and banning it gives the other.
  Random rng(36);
  testing::Pool pool = testing::make_pool(2);
  REQUIRE(pool != nullptr);
  const Parallel always(pool.get(), 0);
  for (size_t out : {size_t{40}, size_t{3000}}) {
    for (size_t in : {size_t{8}, size_t{256}}) {
      CAPTURE(out);
      CAPTURE(in);
      const std::vector<float> w = rng.normal_vector(out * in, 0.0f, 0.3f);
      const std::vector<float> b = rng.normal_vector(out, 0.0f, 0.5f);
      Fixture f(w, &b, in, out);
      std::vector<int32_t> ids;
      for (size_t n = 0; n < out; ++n) {
        if (n == 1 || n == 4 || rng.uniform(0.0f, 1.0f) < 0.33f) ids.push_back(static_cast<int32_t>(n));
      }
      const std::vector<int32_t> banned = {1, 2, static_cast<int32_t>(out + 5)};  // 2: not selected
      const size_t rows = 6;
      const std::vector<float> x = rng.normal_vector(rows * in, 0.0f, 1.0f);
      CHECK(f.check_selected(x, rows, banned, ids) == rows);
      CHECK(f.check_selected(x, rows, banned, ids, always) == rows);
      CHECK(f.check_selected(x, 1, banned, ids, always) == 1);
      CHECK(f.check(x, rows, banned) == rows);  // the whole matrix again
    }
  }
  const size_t in = 64, out = 300;
  const std::vector<float> base = rng.normal_vector(in, 0.0f, 1.0f);
  std::vector<float> w(out * in);
  for (size_t n = 0; n < out; ++n) {
    for (size_t k = 0; k < in; ++k) w[n * in + k] = base[k] + rng.normal(0.0f, 1e-4f);
  }
  for (size_t k = 0; k < in; ++k) w[120 * in + k] = w[250 * in + k] = base[k] * 1.0002f;
  Fixture tied(w, nullptr, in, out);
  std::vector<int32_t> ids;
  for (int32_t n = 3; n < static_cast<int32_t>(out); n += 7) ids.push_back(n);  // 3, 10, ..., 297
  ids.insert(std::lower_bound(ids.begin(), ids.end(), 120), 120);
  ids.insert(std::lower_bound(ids.begin(), ids.end(), 250), 250);
  CHECK(tied.check_selected(base, 1, {}, ids, always) == 1);
  CHECK(tied.check_selected(base, 1, {120}, ids, always) == 1);
  // Directly: position of id 120, then of 250 with 120 banned.
  const auto position = [&](int32_t id) {
    return static_cast<size_t>(std::lower_bound(ids.begin(), ids.end(), id) - ids.begin());
  };
  testing::AlignedFloats gathered(kernels::f32::packed_bytes(ids.size(), in) / sizeof(float));
  kernels::f32::PackedWeights exact;
  kernels::gather_columns(tied.exact.packed(), ids.data(), ids.size(), gathered.data(), &exact);
  testing::AlignedFloats storage(tied.shortcut.selection_bytes(ids.size()) / sizeof(float));
  tied.shortcut.select(ids.data(), ids.size(), &exact, storage.data());
  Scratch scratch(1, in);
  std::vector<float> approx(ids.size());
  size_t best = kNoPick;
  REQUIRE(tied.shortcut.pick(base.data(), 1, nullptr, 0, approx.data(), scratch.view, nullptr,
                             Parallel(), &best).is_ok());
  CHECK(best == position(120));
  const std::vector<int32_t> banned = {120};
  REQUIRE(tied.shortcut.pick(base.data(), 1, banned.data(), 1, approx.data(), scratch.view, nullptr,
                             Parallel(), &best).is_ok());
  CHECK(best == position(250));
}

TEST_CASE("layers/argmax_shortcut: rows too small for an int8 scale" * doctest::skip(!has_kernel())) {
  // Rows whose largest weight is ~1e-38: 1 / (largest / 127) overflows
  // float, so their codes are zero and D[n] their largest weight. Their
  // bias wins the arg-max; a row of normal weights in between competes.
  Random rng(36);
  const size_t in = 40, out = 50;
  std::vector<float> w = rng.normal_vector(out * in, 0.0f, 0.01f);
  std::vector<float> b(out, 0.0f);
  for (size_t n : {size_t{7}, size_t{8}}) {
    for (size_t k = 0; k < in; ++k) w[n * in + k] = rng.uniform(-1.0f, 1.0f) * 1e-38f;
  }
  b[7] = 2.0f;
  b[8] = 2.0f;
  b[20] = 1.99f;
  Fixture f(w, &b, in, out);
  for (int trial = 0; trial < 20; ++trial) {
    const std::vector<float> x = rng.normal_vector(3 * in, 0.0f, 1.0f);
    CHECK(f.check(x, 3, {}) == 3);
  }
}

TEST_CASE("layers/argmax_shortcut: the bound keeps the id int8 ranks lower" * doctest::skip(!has_kernel())) {
  // x = [1, 1]. Row 0 = [1, 0.00395]: codes [127, 1] (0.00395·127 = 0.50
  // rounds up), int8 value 1.00787, exact 1.00395. Row 1 = [0.99, 0.0142]:
  // codes [127, 2], int8 value 1.00559, exact 1.0042. int8 ranks row 0
  // first; the product's arg-max is row 1.
  const std::vector<float> w = {1.0f, 0.00395f, 0.99f, 0.0142f, 0.0f, 0.5f};
  Fixture f(w, nullptr, 2, 3);
  const std::vector<float> x = {1.0f, 1.0f};
  std::vector<float> y(3);
  f.exact.run(x.data(), 1, y.data(), Parallel());
  REQUIRE(y[1] > y[0]);
  Scratch scratch(1, 2);
  std::vector<float> approx(3);
  size_t best = kNoPick;
  REQUIRE(f.shortcut.pick(x.data(), 1, nullptr, 0, approx.data(), scratch.view, nullptr, Parallel(), &best).is_ok());
  CHECK(best == 1);
}

TEST_CASE("layers/argmax_shortcut: banned ids are never picked" * doctest::skip(!has_kernel())) {
  Random rng(33);
  const size_t in = 32, out = 50;
  std::vector<float> w = rng.normal_vector(out * in, 0.0f, 0.1f);
  for (size_t k = 0; k < in; ++k) w[3 * in + k] = 1.0f;  // row 3 wins for x = 1
  Fixture f(w, nullptr, in, out);
  const std::vector<float> x(in, 1.0f);
  CHECK(f.check(x, 1, {}) == 1);
  CHECK(f.check(x, 1, {3}) == 1);
  CHECK(f.check(x, 1, {3, 3, 0, 1}) == 1);  // listed twice: still proved
  std::vector<int32_t> all_but_one;
  for (int32_t n = 0; n < static_cast<int32_t>(out); ++n) {
    if (n != 17) all_but_one.push_back(n);
  }
  Scratch scratch(1, in);
  std::vector<float> approx(out);
  size_t best = kNoPick;
  REQUIRE(f.shortcut.pick(x.data(), 1, all_but_one.data(), all_but_one.size(), approx.data(),
                          scratch.view, nullptr, Parallel(), &best).is_ok());
  CHECK(best == 17);
  all_but_one.push_back(17);  // every id banned: nothing to prove
  REQUIRE(f.shortcut.pick(x.data(), 1, all_but_one.data(), all_but_one.size(), approx.data(),
                          scratch.view, nullptr, Parallel(), &best).is_ok());
  CHECK(best == kNoPick);
}

TEST_CASE("layers/argmax_shortcut: NaN, inf and overflowing states are left to the full row" * doctest::skip(!has_kernel())) {
  Random rng(34);
  const size_t in = 16, out = 40;
  const std::vector<float> w = rng.normal_vector(out * in, 0.0f, 1.0f);
  Fixture f(w, nullptr, in, out);
  const size_t rows = 4;
  std::vector<float> x = rng.normal_vector(rows * in, 0.0f, 1.0f);
  x[0 * in + 3] = std::numeric_limits<float>::quiet_NaN();
  x[1 * in + 5] = std::numeric_limits<float>::infinity();
  x[2 * in + 7] = 3e37f;  // finite, but the sums could overflow
  Scratch scratch(rows, in);
  std::vector<float> approx(rows * out);
  testing::AlignedFloats blocks(UnpackedF32Linear::scratch_floats(in));
  for (bool over_rows : {false, true}) {
    CAPTURE(over_rows);
    std::vector<size_t> best(rows, 0);
    const ArgmaxShortcut& shortcut = over_rows ? f.from_rows : f.shortcut;
    REQUIRE(shortcut.pick(x.data(), rows, nullptr, 0, approx.data(), scratch.view,
                          over_rows ? blocks.data() : nullptr, Parallel(), best.data()).is_ok());
    CHECK(best[0] == kNoPick);
    CHECK(best[1] == kNoPick);
    CHECK(best[2] == kNoPick);
    CHECK(best[3] != kNoPick);  // the ordinary row is still proved
  }
  // One row at a time with two threads (the column-range passes).
  testing::Pool pool = testing::make_pool(2);
  REQUIRE(pool != nullptr);
  const Parallel always(pool.get(), 0);
  testing::AlignedFloats two_blocks(2 * UnpackedF32Linear::scratch_floats(in));
  for (bool over_rows : {false, true}) {
    CAPTURE(over_rows);
    const ArgmaxShortcut& shortcut = over_rows ? f.from_rows : f.shortcut;
    for (size_t r = 0; r < rows; ++r) {
      CAPTURE(r);
      size_t best = 0;
      REQUIRE(shortcut.pick(x.data() + r * in, 1, nullptr, 0, approx.data(), scratch.view,
                            over_rows ? two_blocks.data() : nullptr, always, &best).is_ok());
      CHECK((best == kNoPick) == (r < 3));
    }
  }
}

TEST_CASE("layers/argmax_shortcut: errors") {
  ArgmaxShortcut empty;
  CHECK(empty.empty());
  CHECK(empty.bytes() == 0);
  Scratch scratch(1, 4);
  std::vector<float> x(4, 1.0f), approx(4);
  size_t best = 0;
  CHECK(empty.pick(x.data(), 1, nullptr, 0, approx.data(), scratch.view, nullptr, Parallel(), &best).code() ==
        StatusCode::kFailedPrecondition);
  if (!has_kernel()) return;
  const std::vector<float> w(4 * 4, 0.5f);
  Fixture f(w, nullptr, 4, 4);
  Scratch small(1, 2);  // too shallow for depth 4
  CHECK(f.shortcut.pick(x.data(), 1, nullptr, 0, approx.data(), small.view, nullptr, Parallel(), &best)
            .code() == StatusCode::kFailedPrecondition);
  // Over unpacked rows, the candidates need somewhere to be packed.
  CHECK(f.from_rows.pick(x.data(), 1, nullptr, 0, approx.data(), scratch.view, nullptr, Parallel(), &best)
            .code() == StatusCode::kFailedPrecondition);
  CHECK(ArgmaxShortcut().create(UnpackedF32Linear()).code() == StatusCode::kInvalidArgument);
  // A non-finite weight (row 5) or bias (row 9) is refused, over the pack
  // and over the rows alike, naming the first such row.
  std::vector<float> bad_w(20 * 4, 0.25f);
  bad_w[5 * 4 + 2] = std::numeric_limits<float>::quiet_NaN();
  std::vector<float> bad_b(20, 0.0f);
  bad_b[9] = std::numeric_limits<float>::infinity();
  for (bool with_bad_weight : {true, false}) {
    CAPTURE(with_bad_weight);
    const std::vector<float> weights = with_bad_weight ? bad_w : std::vector<float>(20 * 4, 0.25f);
    PackedF32Linear exact;
    REQUIRE(exact.create(weights.data(), bad_b.data(), 4, 20, false).is_ok());
    ArgmaxShortcut over_pack;
    const Status from_pack = over_pack.create(exact.packed(), kernels::f32::fast_gemm_kernel());
    UnpackedF32Linear rows;
    REQUIRE(rows.create(weights.data(), bad_b.data(), 4, 20).is_ok());
    ArgmaxShortcut over_rows;
    const Status from_rows = over_rows.create(rows);
    const std::string row = with_bad_weight ? "row 5 " : "row 9 ";
    for (const Status* status : {&from_pack, &from_rows}) {
      CHECK(status->code() == StatusCode::kInvalidArgument);
      CHECK(std::string(status->message()).find(row) != std::string::npos);
    }
    CHECK(over_pack.empty());
    CHECK(over_rows.empty());
  }
}

}  // namespace
}  // namespace edgemt
