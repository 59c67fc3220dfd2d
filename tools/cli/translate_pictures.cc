#include "cli/translate_pictures.h"

#include <sys/ioctl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <utility>
#include <vector>

#include "cli/attention_views.h"

namespace edgemt::cli {

namespace {

// Columns for the terminal heat map: stderr's width, or 100 when stderr is
// not a terminal (a log file).
size_t heat_map_width() {
  winsize size = {};
  if (::isatty(STDERR_FILENO) != 0 && ::ioctl(STDERR_FILENO, TIOCGWINSZ, &size) == 0 &&
      size.ws_col > 0) {
    return size.ws_col;
  }
  return 100;
}

}  // namespace

AttentionPictures::AttentionPictures(std::string directory, bool show, const PieceSpeller& pieces,
                                     const SpecialSourceIds& special)
    : directory_(std::move(directory)), show_(show), pieces_(pieces), special_(special) {}

bool AttentionPictures::prepare_directory(std::string* error) const {
  if (directory_.empty()) return true;
  std::error_code code;
  std::filesystem::create_directories(directory_, code);
  if (code) {
    *error = "cannot create the --attention folder '" + directory_ + "': " + code.message();
    return false;
  }
  if (!std::filesystem::is_directory(directory_, code)) {
    *error = "--attention '" + directory_ + "' is not a folder";
    return false;
  }
  if (::access(directory_.c_str(), W_OK | X_OK) != 0) {
    *error = "cannot write into the --attention folder '" + directory_ + "': " + std::strerror(errno);
    return false;
  }
  return true;
}

bool AttentionPictures::draw(const LineWork& line, ProgressBar* progress) {
  if (line.failed()) return true;
  bool ok = true;
  for (size_t k = 0; k < line.sentences.size(); ++k) {
    std::vector<bool> source_special;
    std::vector<bool> target_special;
    const SentenceAttention attention =
        sentence_attention(line, k, pieces_, special_, &source_special, &target_special);
    const std::string name =
        std::to_string(line.number) + (line.split ? "-" + std::to_string(k + 1) : std::string());
    if (show_) {
      progress->print_above("edgemt: attention of line " + std::to_string(line.number) +
                            (line.split ? ", sentence " + std::to_string(k + 1) : std::string()) +
                            ":\n" + attention_terminal(attention, heat_map_width()));
    }
    if (directory_.empty() || files_failed_) continue;
    const std::string path = (std::filesystem::path(directory_) / (name + ".svg")).string();
    std::ofstream file(path, std::ios::binary | std::ios::trunc);
    if (file) file << attention_svg(attention);
    if (file) file.close();
    if (!file) {
      progress->print_above("edgemt: cannot write '" + path + "': " + std::strerror(errno) +
                            "; no more attention pictures are written\n");
      files_failed_ = true;
      ok = false;
    }
  }
  return ok;
}

}  // namespace edgemt::cli
