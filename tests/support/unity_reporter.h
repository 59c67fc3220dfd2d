// UnityReporter: a doctest reporter that prints results in the format of the
// Unity embedded test framework (ThrowTheSwitch), so CI tooling that parses
// Unity output can read doctest results. Select it with --reporters=unity
// (registered in test_main.cc).
//
//   path/to/file_test.cc:12:test name:PASS
//   path/to/file_test.cc:40:other test:FAIL: CHECK( a == b ) with expansion: 1 == 2
//   path/to/file_test.cc:55:skipped test:IGNORE
//
//   -----------------------
//   3 Tests 1 Failures 1 Ignored 
//   FAIL
//
// One line per test case (Unity stops a test at its first failure; doctest
// goes on, so the line names the first failed assertion — its line number —
// and counts the rest). Test cases with the doctest::skip() decorator are
// IGNORE; test cases excluded by the command-line filters are not listed.
// Messages are flattened to one line.
#pragma once

#include <doctest/doctest.h>

#include <string>

namespace edgemt::testing {

class UnityReporter : public doctest::IReporter {
 public:
  explicit UnityReporter(const doctest::ContextOptions& options);

  void report_query(const doctest::QueryData& data) override;
  void test_run_start() override;
  void test_run_end(const doctest::TestRunStats& stats) override;
  void test_case_start(const doctest::TestCaseData& test_case) override;
  void test_case_reenter(const doctest::TestCaseData& test_case) override;
  void test_case_end(const doctest::CurrentTestCaseStats& stats) override;
  void test_case_exception(const doctest::TestCaseException& exception) override;
  void subcase_start(const doctest::SubcaseSignature& signature) override;
  void subcase_end() override;
  void log_assert(const doctest::AssertData& data) override;
  void log_message(const doctest::MessageData& data) override;
  void test_case_skipped(const doctest::TestCaseData& test_case) override;

 private:
  void record_failure(int line, const std::string& message);
  void print_result(const doctest::TestCaseData& test_case, int line, const char* status,
                    const std::string& message);

  std::ostream& out_;
  const doctest::ContextOptions& options_;
  const doctest::TestCaseData* current_ = nullptr;
  std::string subcase_path_;  // "a / b" of the innermost entered subcases
  // First failure of the current test case.
  int first_failure_line_ = 0;
  std::string first_failure_;
  int failures_in_case_ = 0;
  // Totals.
  int tests_ = 0;
  int failed_ = 0;
  int ignored_ = 0;
};

// True when `test_case` passes the command-line filters (file, suite and name
// includes/excludes). Defined in test_main.cc, the translation unit that
// holds doctest's implementation (doctest tells reporters about filtered-out
// and skip-decorated test cases through the same callback).
bool passes_filters(const doctest::TestCaseData& test_case);

}  // namespace edgemt::testing
