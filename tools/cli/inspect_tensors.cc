#include "cli/inspect_tensors.h"

#include <algorithm>
#include <cinttypes>
#include <cstdio>
#include <cstring>
#include <map>

#include "cli/inspect_lines.h"

namespace edgemt::cli {
namespace {

// The order a reader follows a translation in; groups of other names follow
// in table order.
constexpr const char* kGroupOrder[] = {"embedding", "position", "encoder",
                                       "attention", "decoder",  "output"};

size_t group_rank(const std::string& name) {
  for (size_t i = 0; i < sizeof(kGroupOrder) / sizeof(kGroupOrder[0]); ++i) {
    if (name == kGroupOrder[i]) return i;
  }
  return sizeof(kGroupOrder) / sizeof(kGroupOrder[0]);
}

bool ends_with(const char* text, const char* suffix) {
  const size_t length = std::strlen(text);
  const size_t suffix_length = std::strlen(suffix);
  return length >= suffix_length && std::strcmp(text + length - suffix_length, suffix) == 0;
}

// "encoder.layers.12.out.weight" -> 12; -1 when the name (after
// "<group>.") does not start with "layers.<digits>.".
long layer_index(const std::string& rest) {
  constexpr const char kLayers[] = "layers.";
  if (rest.compare(0, sizeof(kLayers) - 1, kLayers) != 0) return -1;
  size_t at = sizeof(kLayers) - 1;
  long index = 0;
  const size_t digits_start = at;
  while (at < rest.size() && rest[at] >= '0' && rest[at] <= '9' && at - digits_start < 6) {
    index = index * 10 + (rest[at] - '0');
    ++at;
  }
  if (at == digits_start || at >= rest.size() || rest[at] != '.') return -1;
  return index;
}

void add_entry(TensorGroup* group, const std::string& rest) {
  ++group->entries;
  const long layer = layer_index(rest);
  if (layer >= 0) {
    if (group->layer_entries.size() <= static_cast<size_t>(layer)) {
      group->layer_entries.resize(static_cast<size_t>(layer) + 1, 0);
    }
    ++group->layer_entries[static_cast<size_t>(layer)];
    return;
  }
  const std::string part = rest.substr(0, rest.find('.'));
  for (auto& other : group->other_parts) {
    if (other.first == part) {
      ++other.second;
      return;
    }
  }
  group->other_parts.emplace_back(part, 1);
}

// "56 entries: 3 layers x 18, final_norm 2"; "4 entries (2 aliases)".
std::string group_structure(const TensorGroup& group) {
  std::string text = text_printf("%zu %s", group.entries, group.entries == 1 ? "entry" : "entries");
  if (group.aliases > 0)
    text += text_printf(" (%zu alias%s)", group.aliases, group.aliases == 1 ? "" : "es");
  if (group.layer_entries.empty()) return text;
  const size_t layers = group.layer_entries.size();
  const auto [fewest, most] =
      std::minmax_element(group.layer_entries.begin(), group.layer_entries.end());
  text += *fewest == *most
              ? text_printf(": %zu layer%s x %zu", layers, layers == 1 ? "" : "s", *most)
              : text_printf(": %zu layers of %zu to %zu", layers, *fewest, *most);
  for (const auto& other : group.other_parts) {
    text += text_printf(", %s %zu", other.first.c_str(), other.second);
  }
  return text;
}

// "i8 6.0 MiB, f32 0.5 MiB": the dtypes that hold bytes, largest first.
std::string dtype_bytes(const uint64_t (&bytes)[kDTypeCount], bool with_sizes) {
  size_t order[kDTypeCount] = {0, 1, 2};
  std::stable_sort(order, order + kDTypeCount,
                   [&](size_t a, size_t b) { return bytes[a] > bytes[b]; });
  std::string text;
  for (size_t i : order) {
    if (bytes[i] == 0) continue;
    if (!text.empty()) text += with_sizes ? ", " : " ";
    text += dtype_name(static_cast<DType>(i));
    if (with_sizes) text += " " + human_bytes(bytes[i]);
  }
  return text.empty() ? "none" : text;
}

std::string shape_text(const TensorView& tensor) {
  std::string text = "[";
  for (uint32_t i = 0; i < tensor.rank; ++i) {
    if (i > 0) text += ", ";
    text += std::to_string(tensor.shape[i]);
  }
  return text + "]";
}

}  // namespace

TensorSummary summarize_tensors(const Model& model) {
  TensorSummary summary;
  const bool int8_file = model.weight_dtype() == DType::kI8;
  std::map<uint64_t, size_t> owner_by_offset;  // first entry at each offset holding bytes
  std::map<std::string, size_t> group_by_name;
  summary.entries = model.tensor_count();
  summary.owner.resize(summary.entries);
  for (size_t i = 0; i < summary.entries; ++i) {
    const TensorView& tensor = model.tensor(i);
    size_t owner = i;
    const auto earlier = owner_by_offset.find(tensor.offset);
    if (earlier != owner_by_offset.end()) {
      owner = earlier->second;
    } else if (tensor.size_bytes > 0) {
      owner_by_offset.emplace(tensor.offset, i);
    }
    summary.owner[i] = owner;
    const std::string name = tensor.name;
    const size_t dot = name.find('.');
    const std::string group_name = name.substr(0, dot);
    auto found = group_by_name.find(group_name);
    if (found == group_by_name.end()) {
      found = group_by_name.emplace(group_name, summary.groups.size()).first;
      summary.groups.emplace_back();
      summary.groups.back().name = group_name;
    }
    TensorGroup& group = summary.groups[found->second];
    add_entry(&group, dot == std::string::npos ? std::string() : name.substr(dot + 1));
    if (owner != i) {
      ++group.aliases;
      ++summary.aliases;
      continue;
    }
    const size_t dtype = static_cast<size_t>(tensor.dtype);
    group.stored_bytes += tensor.size_bytes;
    summary.stored_bytes += tensor.size_bytes;
    if (dtype < kDTypeCount) {
      group.bytes_by_dtype[dtype] += tensor.size_bytes;
      summary.bytes_by_dtype[dtype] += tensor.size_bytes;
    }
    // An int8 file's per-row scales are how its matrices are stored, not
    // parameters of the network: counted apart so that the int8 and float
    // files of one model show the same parameter count.
    if (int8_file && tensor.dtype == DType::kF32 && ends_with(tensor.name, "_input_scale")) {
      // An Int8PerTensorStatic file's fixed activation ranges: not parameters either.
      ++summary.input_scales;
    } else if (int8_file && tensor.dtype == DType::kI8 && ends_with(tensor.name, "_residual")) {
      // A table's residual codes: a finer storage of its weights, as scales are.
      summary.residual_bytes += tensor.size_bytes;
    } else if (int8_file && tensor.dtype == DType::kF32 && ends_with(tensor.name, "_scale")) {
      summary.scale_elements += tensor.element_count();
    } else if (int8_file && tensor.dtype == DType::kF32 && ends_with(tensor.name, "_smooth")) {
      // Likewise the smoothing vectors of a smoothed int8 file.
      summary.smoothing_elements += tensor.element_count();
      ++summary.smoothing_vectors;
      const float* values = static_cast<const float*>(tensor.data);
      bool ones = true;
      for (uint64_t k = 0; k < tensor.element_count() && ones; ++k) ones = values[k] == 1.0f;
      summary.smoothed_projections += ones ? 0 : 1;
    } else {
      summary.parameters += tensor.element_count();
    }
  }
  std::stable_sort(summary.groups.begin(), summary.groups.end(),
                   [](const TensorGroup& a, const TensorGroup& b) {
                     return group_rank(a.name) < group_rank(b.name);
                   });
  return summary;
}

void print_tensor_groups(const TensorSummary& summary) {
  print_field(
      0, "tensors",
      text_printf(
          "%zu entries%s, %s: %s", summary.entries,
          summary.aliases == 0 ? "" : text_printf(" (%zu aliases)", summary.aliases).c_str(),
          human_bytes(summary.stored_bytes).c_str(),
          dtype_bytes(summary.bytes_by_dtype, true).c_str()));
  for (const TensorGroup& group : summary.groups) {
    // [structure, padded] [size] [dtypes]: the sizes line up for comparing.
    std::string structure = group_structure(group);
    if (structure.size() < 40) structure.resize(40, ' ');
    print_field(
        2, group.name.c_str(),
        text_printf("%s %9s  %s", structure.c_str(), human_bytes(group.stored_bytes).c_str(),
                    dtype_bytes(group.bytes_by_dtype, false).c_str()));
  }
}

void print_tensor_table(const Model& model, const TensorSummary& summary) {
  // Columns as wide as this file's widest entry: the table stays narrow for
  // short names and never misaligns for long ones.
  size_t name_width = 4;
  size_t shape_width = 5;
  size_t bytes_width = 5;
  for (size_t i = 0; i < model.tensor_count(); ++i) {
    const TensorView& tensor = model.tensor(i);
    name_width = std::max(name_width, std::strlen(tensor.name));
    shape_width = std::max(shape_width, shape_text(tensor).size());
    bytes_width = std::max(bytes_width, std::to_string(tensor.size_bytes).size());
  }
  const int nw = static_cast<int>(name_width);
  const int sw = static_cast<int>(shape_width);
  const int bw = static_cast<int>(bytes_width);
  std::printf(
      "\ntensors (every entry of the file's table; '= NAME': an alias sharing NAME's bytes)\n");
  std::printf("  %-*s %-5s %-*s %*s\n", nw, "name", "dtype", sw, "shape", bw, "bytes");
  for (size_t i = 0; i < model.tensor_count(); ++i) {
    const TensorView& tensor = model.tensor(i);
    const size_t owner = summary.owner[i];
    std::printf("  %-*s %-5s %-*s %*" PRIu64 "%s%s\n", nw, tensor.name, dtype_name(tensor.dtype),
                sw, shape_text(tensor).c_str(), bw, tensor.size_bytes, owner != i ? "  = " : "",
                owner != i ? model.tensor(owner).name : "");
  }
  std::printf("\ntotals\n");
  print_field(2, "tensors",
              text_printf("%zu entries, %zu of them aliases (aliases share bytes and count once)",
                          summary.entries, summary.aliases));
  print_field(2, "parameters",
              summary.scale_elements == 0
                  ? std::to_string(summary.parameters)
                  : text_printf("%" PRIu64 " (%" PRIu64 " with the int8 row scales%s)",
                                summary.parameters,
                                summary.parameters + summary.scale_elements + summary.smoothing_elements,
                                summary.smoothing_elements > 0 ? " and smoothing vectors" : ""));
  print_field(2, "weight bytes",
              text_printf("%" PRIu64 " (f32 %" PRIu64 ", f16 %" PRIu64 ", i8 %" PRIu64 ")",
                          summary.stored_bytes, summary.bytes_by_dtype[0],
                          summary.bytes_by_dtype[1], summary.bytes_by_dtype[2]));
  print_field(2, "weight segment",
              text_printf("%" PRIu64 " bytes (tensors 64-byte aligned)", model.weights_size()));
  print_field(2, "file size", text_printf("%" PRIu64 " bytes", model.file_size()));
}

}  // namespace edgemt::cli
