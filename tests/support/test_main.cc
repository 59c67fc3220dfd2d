// doctest main for the edgemt test executables. Builds and runs with
// -fno-exceptions (DOCTEST_CONFIG_NO_EXCEPTIONS, as on firmware): tests use
// CHECK-style assertions only, since REQUIRE needs exceptions to stop a test.
//
// Reporters: doctest's own ("console", "xml", "junit") plus "unity"
// (UnityReporter, Unity embedded framework format): --reporters=unity.
#define DOCTEST_CONFIG_IMPLEMENT
#include <doctest/doctest.h>

#include "support/unity_reporter.h"

REGISTER_REPORTER("unity", 1, edgemt::testing::UnityReporter);

namespace edgemt::testing {

// Mirrors the filter checks of doctest::Context::run() (doctest 2.4): filters
// 0/1 source file include/exclude, 2/3 test suite, 4/5 test case.
bool passes_filters(const doctest::TestCaseData& test_case) {
  const auto* state = doctest::detail::g_cs;
  if (state == nullptr) return true;
  const bool cs = state->case_sensitive;
  const auto& f = state->filters;
  return doctest::matchesAny(test_case.m_file.c_str(), f[0], true, cs) &&
         !doctest::matchesAny(test_case.m_file.c_str(), f[1], false, cs) &&
         doctest::matchesAny(test_case.m_test_suite, f[2], true, cs) &&
         !doctest::matchesAny(test_case.m_test_suite, f[3], false, cs) &&
         doctest::matchesAny(test_case.m_name, f[4], true, cs) &&
         !doctest::matchesAny(test_case.m_name, f[5], false, cs);
}

}  // namespace edgemt::testing

int main(int argc, char** argv) {
  doctest::Context context;
  context.applyCommandLine(argc, argv);
  return context.run();
}
