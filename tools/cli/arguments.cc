#include "cli/arguments.h"

#include <cerrno>
#include <cmath>
#include <cstdlib>

namespace edgemt::cli {

bool Arguments::parse(int argc, char** argv, int first, const std::vector<FlagSpec>& specs,
                      std::string* error) {
  bool options_ended = false;  // after "--" every argument is positional (a text "-x")
  for (int i = first; i < argc; ++i) {
    std::string arg = argv[i];
    if (options_ended) {
      positional_.push_back(arg);
      continue;
    }
    if (arg == "--") {
      options_ended = true;
      continue;
    }
    const FlagSpec* spec = nullptr;
    std::string value;
    bool has_inline_value = false;
    if (arg.size() > 2 && arg.compare(0, 2, "--") == 0) {
      std::string name = arg.substr(2);
      const size_t eq = name.find('=');
      if (eq != std::string::npos) {
        value = name.substr(eq + 1);
        name = name.substr(0, eq);
        has_inline_value = true;
      }
      for (const FlagSpec& s : specs) {
        if (s.name == name) spec = &s;
      }
      if (spec == nullptr) {
        *error = "unknown option '--" + name + "'";
        return false;
      }
    } else if (arg.size() == 2 && arg[0] == '-' && arg[1] != '-') {
      for (const FlagSpec& s : specs) {
        if (s.alias == arg[1]) spec = &s;
      }
      if (spec == nullptr) {
        *error = "unknown option '" + arg + "'";
        return false;
      }
    } else {
      positional_.push_back(arg);
      continue;
    }
    if (!spec->takes_value) {
      if (has_inline_value && spec->optional_value) {
        values_[spec->name] = value;
        continue;
      }
      if (has_inline_value) {
        *error = "option '--" + spec->name + "' takes no value";
        return false;
      }
      values_[spec->name] = spec->optional_value ? "" : "1";
      continue;
    }
    if (!has_inline_value) {
      if (i + 1 >= argc) {
        *error = "option '--" + spec->name + "' needs a value";
        return false;
      }
      value = argv[++i];
    }
    values_[spec->name] = value;
  }
  return true;
}

std::string Arguments::get(const std::string& name, const std::string& fallback) const {
  const auto it = values_.find(name);
  return it == values_.end() ? fallback : it->second;
}

bool Arguments::get_size(const std::string& name, size_t fallback, size_t min, size_t max,
                         size_t* out, std::string* error) const {
  const auto it = values_.find(name);
  if (it == values_.end()) {
    *out = fallback;
    return true;
  }
  const std::string& text = it->second;
  char* end = nullptr;
  errno = 0;
  const unsigned long long value = std::strtoull(text.c_str(), &end, 10);
  if (text.empty() || text[0] == '-' || *end != '\0' || errno != 0 || value < min || value > max) {
    *error = "option '--" + name + "' wants a whole number in [" + std::to_string(min) + ", " +
             std::to_string(max) + "], got '" + text + "'";
    return false;
  }
  *out = static_cast<size_t>(value);
  return true;
}

bool Arguments::get_float(const std::string& name, float fallback, float* out,
                          std::string* error) const {
  const auto it = values_.find(name);
  if (it == values_.end()) {
    *out = fallback;
    return true;
  }
  const std::string& text = it->second;
  char* end = nullptr;
  errno = 0;
  const float value = std::strtof(text.c_str(), &end);
  if (text.empty() || *end != '\0' || errno != 0 || !std::isfinite(value)) {
    *error = "option '--" + name + "' wants a number, got '" + text + "'";
    return false;
  }
  *out = value;
  return true;
}

bool Arguments::get_model_only(std::string* model_path, std::string* error) const {
  if (!positional_.empty()) {
    *error = "unexpected argument '" + positional_[0] + "'";
    return false;
  }
  *model_path = get("model", "");
  if (model_path->empty()) {
    *error = "a model is required (-m MODEL)";
    return false;
  }
  return true;
}

}  // namespace edgemt::cli
