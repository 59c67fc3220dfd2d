#include "support/unity_reporter.h"

#include <ostream>
#include <sstream>

namespace edgemt::testing {
namespace {

// Unity's result lines are parsed line by line: no newlines inside a message.
std::string one_line(std::string text) {
  for (char& c : text) {
    if (c == '\n' || c == '\r') c = ' ';
  }
  return text;
}

// INFO()/CAPTURE() contexts active at the failing assertion, "; "-separated.
std::string active_contexts() {
  std::string result;
  const int count = doctest::IReporter::get_num_active_contexts();
  const doctest::IContextScope* const* contexts = doctest::IReporter::get_active_contexts();
  for (int i = 0; i < count; ++i) {
    std::ostringstream text;
    contexts[i]->stringify(&text);
    if (!result.empty()) result += "; ";
    result += text.str();
  }
  return result;
}

}  // namespace

UnityReporter::UnityReporter(const doctest::ContextOptions& options)
    : out_(*options.cout), options_(options) {}

void UnityReporter::report_query(const doctest::QueryData& data) {
  // Listing queries print plain names, one per line (Unity has no listing
  // format of its own); other queries (help, version, reporters) print nothing.
  if (options_.list_test_cases) {
    for (unsigned i = 0; i < data.num_data; ++i) out_ << data.data[i]->m_name << '\n';
  } else if (options_.list_test_suites) {
    for (unsigned i = 0; i < data.num_data; ++i) out_ << data.data[i]->m_test_suite << '\n';
  }
}

void UnityReporter::test_run_start() {}

void UnityReporter::test_run_end(const doctest::TestRunStats& /*stats*/) {
  // Unity's closing block, including the space after "Ignored".
  out_ << "\n-----------------------\n"
       << tests_ << " Tests " << failed_ << " Failures " << ignored_ << " Ignored \n"
       << (failed_ == 0 ? "OK" : "FAIL") << '\n';
  out_.flush();
}

void UnityReporter::test_case_start(const doctest::TestCaseData& test_case) {
  current_ = &test_case;
  subcase_path_.clear();
  first_failure_line_ = 0;
  first_failure_.clear();
  failures_in_case_ = 0;
}

void UnityReporter::test_case_reenter(const doctest::TestCaseData& /*test_case*/) {
  subcase_path_.clear();
}

void UnityReporter::test_case_end(const doctest::CurrentTestCaseStats& stats) {
  ++tests_;
  if (stats.testCaseSuccess) {
    print_result(*current_, current_->m_line, "PASS", "");
  } else {
    ++failed_;
    std::string message = first_failure_;
    if (failures_in_case_ > 1) {
      message += " (+" + std::to_string(failures_in_case_ - 1) + " more failures)";
    }
    if (message.empty()) {
      // Failed through a decorator rather than an assertion.
      using Reason = doctest::TestCaseFailureReason::Enum;
      const int flags = stats.failure_flags;
      if (flags & Reason::Timeout) message = "timed out";
      else if (flags & Reason::ShouldHaveFailedButDidnt) message = "should have failed but did not";
      else if (flags & Reason::DidntFailExactlyNumTimes) message = "did not fail the expected number of times";
      else if (flags & Reason::TooManyFailedAsserts) message = "too many failed assertions";
      else message = "failed";
    }
    const int line = first_failure_line_ != 0 ? first_failure_line_ : current_->m_line;
    print_result(*current_, line, "FAIL", message);
  }
  current_ = nullptr;
}

void UnityReporter::test_case_exception(const doctest::TestCaseException& exception) {
  // With -fno-exceptions this is a crash (signal) caught by doctest.
  const std::string what = exception.is_crash ? "crashed: " : "exception: ";
  record_failure(0, what + exception.error_string.c_str());
}

void UnityReporter::subcase_start(const doctest::SubcaseSignature& signature) {
  if (!subcase_path_.empty()) subcase_path_ += " / ";
  subcase_path_ += signature.m_name.c_str();
}

void UnityReporter::subcase_end() {
  const size_t cut = subcase_path_.rfind(" / ");
  subcase_path_.erase(cut == std::string::npos ? 0 : cut);
}

void UnityReporter::log_assert(const doctest::AssertData& data) {
  if (!data.m_failed) return;
  std::string message = doctest::assertString(data.m_at);
  message += "( ";
  message += data.m_expr;
  message += " )";
  if (data.m_threw) {
    message += " threw: ";
    message += data.m_exception.c_str();
  } else if (data.m_decomp.size() != 0) {
    message += " with expansion: ";
    message += data.m_decomp.c_str();
  }
  record_failure(data.m_line, message);
}

void UnityReporter::log_message(const doctest::MessageData& data) {
  // MESSAGE()/WARN() are informational; FAIL_CHECK()/FAIL() are failures.
  if ((data.m_severity & doctest::assertType::is_warn) != 0) return;
  record_failure(data.m_line, data.m_string.c_str());
}

void UnityReporter::test_case_skipped(const doctest::TestCaseData& test_case) {
  // doctest reports filtered-out test cases here too: only skip-decorated
  // cases that the filters select count as ignored.
  if (!test_case.m_skip || options_.no_skip || !passes_filters(test_case)) return;
  ++tests_;
  ++ignored_;
  print_result(test_case, test_case.m_line, "IGNORE", "");
}

void UnityReporter::record_failure(int line, const std::string& message) {
  ++failures_in_case_;
  if (failures_in_case_ > 1) return;
  first_failure_line_ = line;
  first_failure_ = message;
  if (!subcase_path_.empty()) first_failure_ += " [subcase: " + subcase_path_ + "]";
  const std::string contexts = active_contexts();
  if (!contexts.empty()) first_failure_ += " [" + contexts + "]";
  first_failure_ = one_line(first_failure_);
}

void UnityReporter::print_result(const doctest::TestCaseData& test_case, int line,
                                 const char* status, const std::string& message) {
  out_ << doctest::skipPathFromFilename(test_case.m_file.c_str()) << ':' << line << ':'
       << one_line(test_case.m_name) << ':' << status;
  if (!message.empty()) out_ << ": " << message;
  out_ << '\n';
}

}  // namespace edgemt::testing
