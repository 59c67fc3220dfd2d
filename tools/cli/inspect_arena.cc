#include "cli/inspect_arena.h"

#include <cstdio>
#include <string>

#include "cli/inspect_lines.h"

namespace edgemt::cli {
namespace {

constexpr size_t kShortLength = 128;
// batch x beam: one sentence greedy, then what a server or a batch job asks.
constexpr size_t kShapes[4][2] = {{1, 1}, {16, 1}, {16, 4}, {32, 4}};

Status plan_for(const Translator& translator, size_t tokens, size_t batch, size_t beam,
                ArenaPlan* plan) {
  Limits limits;
  limits.max_batch = batch;
  limits.max_beam = beam;
  limits.max_source_len = limits.max_target_len = tokens;
  return translator.arena_plan(limits, plan);
}

double mib(size_t bytes) { return static_cast<double>(bytes) / (1 << 20); }

// "1.5 MiB (batch 1, beam 1, 128 tokens)", or why there is no plan.
std::string planned(const Translator& translator, size_t tokens, size_t batch, size_t beam) {
  ArenaPlan plan;
  const Status status = plan_for(translator, tokens, batch, beam, &plan);
  const std::string limits = text_printf("batch %zu, beam %zu, %zu tokens", batch, beam, tokens);
  if (!status.is_ok()) return limits + ": " + status.message();
  return text_printf("%.1f MiB (%s)", mib(plan.bytes), limits.c_str());
}

}  // namespace

void print_arena_range(const Model& model, const Translator& translator) {
  const size_t longest = model.max_sequence_length();
  const size_t shortest = longest < kShortLength ? longest : kShortLength;
  print_field(0, "arena",
              planned(translator, shortest, 1, 1) + " to " + planned(translator, longest, 32, 4));
}

void print_arena_table(const Model& model, const Translator& translator) {
  const size_t longest = model.max_sequence_length();
  std::printf(
      "\narena (run-phase memory, one prepare(); MiB; 'unshared': every buffer its own memory)\n");
  std::printf("  %6s %5s %5s %10s %10s\n", "tokens", "batch", "beam", "arena", "unshared");
  const size_t lengths[2] = {longest < kShortLength ? longest : kShortLength, longest};
  for (size_t i = 0; i < 2; ++i) {
    if (i == 1 && lengths[1] == lengths[0]) break;
    for (const auto& shape : kShapes) {
      ArenaPlan plan;
      const Status status = plan_for(translator, lengths[i], shape[0], shape[1], &plan);
      if (!status.is_ok()) {
        std::printf("  %6zu %5zu %5zu  %s\n", lengths[i], shape[0], shape[1], status.message());
        continue;
      }
      std::printf("  %6zu %5zu %5zu %10.1f %10.1f\n", lengths[i], shape[0], shape[1],
                  mib(plan.bytes), mib(plan.unshared_bytes));
    }
  }
}

}  // namespace edgemt::cli
