// For tests that run an EncoderDecoder directly: a built model loaded, and a
// network planned for a run shape over arena memory of its own, as a
// Translator plans it (measure, then bind).
#pragma once

#include <doctest/doctest.h>

#include <cstdlib>
#include <memory>

#include "core/arena.h"
#include "edgemt/model.h"
#include "models/encoder_decoder.h"
#include "support/model_builder.h"

namespace edgemt::testing {

// The model `builder` writes, loaded from a temporary file.
inline std::unique_ptr<Model> load_built_model(const ModelBuilder& builder) {
  TempFile file(builder.build());
  std::unique_ptr<Model> model;
  REQUIRE(file.ok());
  REQUIRE(Model::load(file.path().c_str(), &model).is_ok());
  return model;
}

struct FreeArenaMemory {
  void operator()(void* memory) const { std::free(memory); }
};
using ArenaMemory = std::unique_ptr<void, FreeArenaMemory>;

// Plans `network` for `shape` (measured, then bound to memory of that size),
// commits the plan and returns the memory, which must outlive the runs.
inline ArenaMemory plan_network(EncoderDecoder& network, const RunShape& shape) {
  Arena arena;
  network.plan(shape, &arena);
  REQUIRE(arena.finish_plan());
  const size_t bytes = (arena.size() + Arena::kAlignment - 1) / Arena::kAlignment * Arena::kAlignment;
  ArenaMemory memory(std::aligned_alloc(Arena::kAlignment, bytes));
  REQUIRE(memory != nullptr);
  arena.bind(memory.get());
  network.plan(shape, &arena);
  REQUIRE_FALSE(arena.overflowed());
  network.commit_plan();
  return memory;
}

}  // namespace edgemt::testing
