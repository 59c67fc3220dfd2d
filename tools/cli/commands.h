// The edgemt subcommands. Each returns the process exit status:
// 0 success, 1 a runtime or input error (reported on stderr), 2 bad usage.
#pragma once

namespace edgemt::cli {

inline constexpr int kExitOk = 0;
inline constexpr int kExitFailure = 1;
inline constexpr int kExitUsage = 2;

int run_translate(int argc, char** argv);  // argv[1] == "translate"
int run_inspect(int argc, char** argv);    // argv[1] == "inspect"
int run_bench(int argc, char** argv);      // argv[1] == "bench"

}  // namespace edgemt::cli
