// edgemt: command-line front end of the runtime.
#include <cstdio>
#include <cstring>

#include "cli/commands.h"
#include "edgemt/edgemt.h"
#include "edgemt/model.h"

namespace {

constexpr const char* kUsage =
    "usage: edgemt <command> [options]\n"
    "\n"
    "commands:\n"
    "  translate -m MODEL [options]   translate lines of text (stdin or -i FILE);\n"
    "                                 paragraphs, alignments, attention heat maps, JSON\n"
    "  inspect MODEL [options]        a one-screen summary of a model file (--tensors,\n"
    "                                 --arena, --all for the full listing)\n"
    "  bench -m MODEL [options]       time loading, latency, throughput (and a profile)\n"
    "\n"
    "Run 'edgemt <command> --help' for a command's options.\n";

}  // namespace

int main(int argc, char** argv) {
  if (argc < 2 || std::strcmp(argv[1], "--help") == 0 || std::strcmp(argv[1], "-h") == 0) {
    std::fputs(kUsage, argc < 2 ? stderr : stdout);
    return argc < 2 ? edgemt::cli::kExitUsage : edgemt::cli::kExitOk;
  }
  if (std::strcmp(argv[1], "--version") == 0) {
    // The version is CMake's project() version (edgemt.h is checked against
    // it at configure time); the Python package and the converter read the
    // same line.
    std::printf("edgemt %d.%d.%d (reads model format versions %u to %u)\n", EDGEMT_VERSION_MAJOR,
                EDGEMT_VERSION_MINOR, EDGEMT_VERSION_PATCH,
                static_cast<unsigned>(edgemt::kOldestFormatVersion),
                static_cast<unsigned>(edgemt::kFormatVersion));
    return edgemt::cli::kExitOk;
  }
  if (std::strcmp(argv[1], "translate") == 0) return edgemt::cli::run_translate(argc, argv);
  if (std::strcmp(argv[1], "inspect") == 0) return edgemt::cli::run_inspect(argc, argv);
  if (std::strcmp(argv[1], "bench") == 0) return edgemt::cli::run_bench(argc, argv);
  std::fprintf(stderr, "edgemt: unknown command '%s'\n\n%s", argv[1], kUsage);
  return edgemt::cli::kExitUsage;
}
