// What edgemt does when the mapped model file is truncated under it.
//
// A model loaded with LoadMode::kMap reads its weights from a mapping of the
// file. If another process truncates or rewrites the file in place while
// edgemt runs, reading a page that is gone raises SIGBUS, which would kill
// the process with "Bus error" and maybe a core dump. The commands catch it
// and exit with status 1 and a line saying what happened and what to do.
// (The runtime library installs no handler: signals belong to the host.)
#pragma once

#include <string>

namespace edgemt::cli {

// Installs the SIGBUS handler for a model mapped from `model_path`. The
// handler writes the message prepared here (async-signal-safe) and calls
// _exit(1). Call once, before translating.
void exit_cleanly_on_bus_error(const std::string& model_path);

}  // namespace edgemt::cli
