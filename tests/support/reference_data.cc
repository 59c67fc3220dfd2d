#include "support/reference_data.h"

#include <fstream>
#include <sstream>

namespace edgemt::testing {

std::string reference_path(const std::string& name) {
  return std::string(EDGEMT_SOURCE_DIR) + "/models/reference/" + name;
}

std::vector<std::vector<int32_t>> read_id_lines(const std::string& path) {
  std::vector<std::vector<int32_t>> lines;
  std::ifstream in(path);
  std::string line;
  while (std::getline(in, line)) {
    std::istringstream fields(line);
    std::vector<int32_t> ids;
    int32_t id = 0;
    while (fields >> id) ids.push_back(id);
    lines.push_back(ids);
  }
  return lines;
}

std::vector<std::string> read_lines(const std::string& path) {
  std::vector<std::string> lines;
  std::ifstream in(path);
  std::string line;
  while (std::getline(in, line)) lines.push_back(line);
  return lines;
}

}  // namespace edgemt::testing
