// The tensor table of a model file, for `edgemt inspect`: totals and groups
// for the summary, every entry for --tensors.
//
// Groups come from the names alone (schema/TENSORS.md): the part before the
// first dot ("encoder", "embedding", "output"), with "<part>.layers.<i>."
// counted as layers. No family is named here, so a new family's tensors
// group without a change.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "edgemt/model.h"

namespace edgemt::cli {

inline constexpr size_t kDTypeCount = 3;  // DType::kF32, kF16, kI8

struct TensorGroup {
  std::string name;  // "encoder"
  size_t entries = 0;
  size_t aliases = 0;         // entries sharing an earlier entry's bytes
  uint64_t stored_bytes = 0;  // aliases count once
  uint64_t bytes_by_dtype[kDTypeCount] = {0, 0, 0};
  std::vector<size_t> layer_entries;  // entries of "<name>.layers.<i>.", by i
  // Entries outside the layers, by their second name part ("final_norm").
  std::vector<std::pair<std::string, size_t>> other_parts;
};

struct TensorSummary {
  size_t entries = 0;
  size_t aliases = 0;
  uint64_t parameters = 0;      // elements of stored tensors, scales excluded
  uint64_t scale_elements = 0;  // elements of int8 files' "<matrix>_scale" tensors
  // Smoothed int8 files: elements of the "<matrix>_smooth" vectors, and how
  // many of those vectors are not all ones.
  uint64_t smoothing_elements = 0;
  size_t smoothing_vectors = 0;
  size_t smoothed_projections = 0;
  size_t input_scales = 0;  // Int8PerTensorStatic: `<matrix>_input_scale` tensors
  uint64_t residual_bytes = 0;  // `<table>_residual` codes (residual_tables files)
  uint64_t stored_bytes = 0;
  uint64_t bytes_by_dtype[kDTypeCount] = {0, 0, 0};
  std::vector<TensorGroup> groups;  // embedding, position, encoder, ..., output, then others
  // For each entry (table order): the index of the entry whose bytes it
  // shares, or its own index.
  std::vector<size_t> owner;
};

TensorSummary summarize_tensors(const Model& model);

// The summary's tensor section: totals by dtype, then one line per group.
void print_tensor_groups(const TensorSummary& summary);

// --tensors: every entry (name, dtype, shape, bytes, which entry an alias
// shares), then the exact totals.
void print_tensor_table(const Model& model, const TensorSummary& summary);

}  // namespace edgemt::cli
