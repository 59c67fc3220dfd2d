// PackedMatrix: allocate gives an aligned block and a zeroed view; moves
// hand over block, size and view and leave the source empty; a failed
// allocation leaves the matrix as it was.
#include "layers/packed_matrix.h"

#include <doctest/doctest.h>

#include <cstdint>
#include <cstring>
#include <limits>
#include <utility>

namespace edgemt {
namespace {

struct View {
  const float* data = nullptr;
  size_t columns = 0;
};

TEST_CASE("layers/packed_matrix: allocate, move, failed allocation") {
  PackedMatrix<View> a;
  CHECK(a.empty());
  CHECK(a.bytes() == 0);
  REQUIRE(a.allocate(1000));
  CHECK_FALSE(a.empty());
  CHECK(a.bytes() == 1000);
  CHECK(reinterpret_cast<uintptr_t>(a.data()) % 64 == 0);
  CHECK(a.view().data == nullptr);
  std::memset(a.data(), 0x5A, 1000);  // all of it is writable
  a.mutable_view()->data = static_cast<const float*>(a.data());
  a.mutable_view()->columns = 7;

  PackedMatrix<View> b(std::move(a));
  CHECK(a.empty());  // NOLINT(bugprone-use-after-move): a moved-from matrix is empty
  CHECK(a.bytes() == 0);
  CHECK(a.view().data == nullptr);
  CHECK(a.view().columns == 0);
  CHECK(b.bytes() == 1000);
  CHECK(b.view().columns == 7);
  CHECK(b.view().data == static_cast<const float*>(b.data()));

  PackedMatrix<View> c;
  REQUIRE(c.allocate(64));
  c = std::move(b);  // c's old block is freed (ASan in CI would report a leak otherwise)
  CHECK(c.bytes() == 1000);
  CHECK(c.view().columns == 7);
  CHECK(b.empty());  // NOLINT(bugprone-use-after-move)

  // An allocation that cannot succeed keeps the matrix unchanged.
  CHECK_FALSE(c.allocate(std::numeric_limits<size_t>::max() / 2));
  CHECK(c.bytes() == 1000);
  CHECK(c.view().columns == 7);
}

}  // namespace
}  // namespace edgemt
