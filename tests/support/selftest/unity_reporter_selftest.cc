// Self-test of the "unity" reporter (tests/support/unity_reporter.h): one
// passing, one failing and one skipped test case. Built as its own
// executable (not part of edgemt_runtime_tests, whose run must stay green);
// ctest checks the printed lines and summary (tests/CMakeLists.txt).
#include <doctest/doctest.h>

TEST_CASE("unity selftest: passing case") {
  CHECK(1 + 1 == 2);
}

TEST_CASE("unity selftest: failing case") {
  const int answer = 41;
  INFO("deliberate failure");
  CHECK(answer == 42);
}

TEST_CASE("unity selftest: skipped case" * doctest::skip()) {
  CHECK(false);
}
