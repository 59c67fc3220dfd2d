// Whether two names are one regular file, so that opening one for writing
// (which truncates it) would destroy the other before it is read:
// `edgemt translate -i a.txt -o a.txt` once read an empty file, wrote
// nothing and exited 0, and `-o` naming the model file truncates the mapped
// model under the translator.
//
// Files are compared by device and inode, so hard links, symlinks and other
// spellings of a path are the same file. Only regular files count: reading
// a terminal and writing to it (-i /dev/tty -o /dev/tty) harms nothing.
#pragma once

#include <string>

namespace edgemt::cli {

// True when `path` exists and is the regular file open on `fd`.
bool is_same_regular_file(int fd, const std::string& path);

// True when both paths exist and are the same regular file.
bool is_same_regular_file(const std::string& a, const std::string& b);

}  // namespace edgemt::cli
