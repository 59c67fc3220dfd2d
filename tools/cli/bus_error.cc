#include "cli/bus_error.h"

#include <signal.h>
#include <unistd.h>

#include <cstdio>
#include <cstring>

namespace edgemt::cli {
namespace {

// Prepared before the signal can arrive: the handler may only write it.
char g_message[1024];
size_t g_message_length = 0;

void on_bus_error(int) {
  ssize_t ignored = ::write(STDERR_FILENO, g_message, g_message_length);
  (void)ignored;
  ::_exit(1);
}

}  // namespace

void exit_cleanly_on_bus_error(const std::string& model_path) {
  const int n = std::snprintf(
      g_message, sizeof(g_message),
      "edgemt: bus error reading the model file '%s': it was truncated or rewritten in place "
      "while in use. Replace model files by renaming a new file over the old one, or run with "
      "--copy-model to read the file into memory at load.\n",
      model_path.c_str());
  g_message_length = n < 0 ? 0 : std::strlen(g_message);
  struct sigaction action;
  std::memset(&action, 0, sizeof(action));
  action.sa_handler = on_bus_error;
  sigemptyset(&action.sa_mask);
  (void)sigaction(SIGBUS, &action, nullptr);
}

}  // namespace edgemt::cli
