// A small command-line flag reader for the edgemt subcommands.
//
// Flags are `--name value`, `--name=value` or a one-letter alias `-x value`
// (flags with an optional value: `--name` or `--name=value`);
// anything else is positional, and so is everything after `--`. Unknown
// flags, missing values and malformed numbers are errors with a message
// naming the flag.
#pragma once

#include <cstddef>
#include <map>
#include <string>
#include <vector>

namespace edgemt::cli {

struct FlagSpec {
  std::string name;     // "beam"
  char alias = '\0';    // 'm' for -m
  bool takes_value = true;
  // With takes_value false: `--name=value` is accepted too (a flag with an
  // optional value, as `--busy` / `--busy=3`; bare, its value is "").
  bool optional_value = false;
};

class Arguments {
 public:
  // Returns false with *error set on an unknown flag or a missing value.
  bool parse(int argc, char** argv, int first, const std::vector<FlagSpec>& specs,
             std::string* error);

  bool has(const std::string& name) const { return values_.count(name) != 0; }
  std::string get(const std::string& name, const std::string& fallback) const;
  // Whole number in [min, max]; false with *error on a bad value.
  bool get_size(const std::string& name, size_t fallback, size_t min, size_t max, size_t* out,
                std::string* error) const;
  bool get_float(const std::string& name, float fallback, float* out, std::string* error) const;
  const std::vector<std::string>& positional() const { return positional_; }
  // The -m/--model path of a command that takes no positional argument:
  // false with *error set when one is given or the model is missing.
  bool get_model_only(std::string* model_path, std::string* error) const;

 private:
  std::map<std::string, std::string> values_;
  std::vector<std::string> positional_;
};

}  // namespace edgemt::cli
