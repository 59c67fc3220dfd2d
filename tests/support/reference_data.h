// Reads the committed reference data in models/reference/ (source ids and
// PyTorch translations as space-separated ids, one sentence per line).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace edgemt::testing {

// Path of a file in models/reference/.
std::string reference_path(const std::string& name);

// One vector of ids per line; empty when the file is missing.
std::vector<std::vector<int32_t>> read_id_lines(const std::string& path);

std::vector<std::string> read_lines(const std::string& path);

}  // namespace edgemt::testing
