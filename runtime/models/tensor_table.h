// A family's tensor table and the one walker over it. Each family lists its
// tensors once, in schema/<family>_tensors.def (its columns are explained
// in schema/TENSORS.md and the file's header), compiled here as an X-macro
// into an array of TableEntry; walk_tensor_table() turns that array and a
// config into every tensor the config implies (ExpectedTensor: the
// verifier's list, the test builder's files), in file order, and
// tensor_name() names one entry for the loaders. A family supplies only
// what its config decides (TableRules): dims, conditions, aliases, layer
// counts.
#pragma once

#include <cstddef>
#include <cstdint>
#include <iterator>

#include "edgemt/model.h"
#include "models/expected_tensor.h"

namespace edgemt {

// The `group` column: tensors once (MODEL, first), per encoder layer
// ("encoder.layers.{i}.<name>"), after the encoder layers, per decoder
// layer, after the decoder layers: the file's order.
enum class TableGroup : uint8_t { MODEL, ENCODER_LAYER, ENCODER_END, DECODER_LAYER, DECODER_END };

// The `kind` column: MATRIX [rows, cols] in the weight dtype (int8 files add
// <name>_scale [rows] F32); PROJECTION, a MATRIX only used as a product's
// weight; TABLE [rows, cols] F32; VECTOR [rows] F32; LINEAR = <name>.weight
// (a projection) + <name>.bias [rows] F32; NORM = <name>.weight and
// <name>.bias [rows] F32. Projections that own their bytes get a smoothing
// vector in smoothed int8 files (ExpectedTensor::projection).
enum class TableKind : uint8_t { MATRIX, PROJECTION, TABLE, VECTOR, LINEAR, NORM };

template <typename Id, typename Dim, typename Condition>
struct TableEntry {
  Id id;
  TableGroup group;
  const char* name;
  TableKind kind;
  Dim rows;
  Dim cols;
  Condition condition;
};

// One line of a family's .def as a TableEntry of its Tensor ids (the
// family's own Dim and Condition enums in scope): its X-macro expands to
// EDGEMT_TABLE_ROW(Tensor, <the line's columns>) inside its table array.
#define EDGEMT_TABLE_ROW(Tensor, id, group, name, kind, rows, cols, condition) \
  {Tensor::id, TableGroup::group, name, TableKind::kind, Dim::rows, Dim::cols, Condition::condition},

// Declares, in a family's namespace, what its tensor_layout.cc defines over
// its table (models/family_kit.h asks for both):
//   tensor_name(id, layer, out, size)   the name of one entry in a file, as
//                                       table_tensor_name() below gives it
//   for_each_expected_tensor(config, types, visit, context)
//                                       every tensor `config` implies, as
//                                       walk_tensor_table() below gives them;
//                                       false if the visitor stopped early
#define EDGEMT_TENSOR_TABLE_FUNCTIONS(Tensor, Config)                           \
  bool tensor_name(Tensor tensor, uint32_t layer, char* out, size_t size);      \
  bool for_each_expected_tensor(const Config& config, WeightTypes types,        \
                                ExpectedTensorVisitor visit, void* context)

// What a family's config decides about its table's entries.
template <typename Entry, typename Config>
struct TableRules {
  // A dim's size (layer: the entry's layer, 0 outside the layer groups).
  uint32_t (*size)(decltype(Entry::rows) dim, const Config& config, uint32_t layer);
  // Whether an entry of this condition is in the file at all.
  bool (*present)(decltype(Entry::condition) condition, const Config& config);
  // The entry whose bytes one of this condition shares, or nullptr.
  const Entry* (*owner)(decltype(Entry::condition) condition, const Config& config);
  // How many times a layer group repeats (the other groups: once).
  uint32_t encoder_layers;
  uint32_t decoder_layers;
};

// True when the table's ids are its indices (kTable[id] is id's entry).
template <typename Entry, size_t N>
constexpr bool ids_follow(const Entry (&table)[N]) {
  for (size_t i = 0; i < N; ++i) {
    if (static_cast<size_t>(table[i].id) != i) return false;
  }
  return true;
}

namespace tensor_table {

// "encoder.layers.{layer}" / "decoder.layers.{layer}" for the layer groups, "".
void group_scope(TableGroup group, uint32_t layer, char* out, size_t size);

// Hands each tensor of the walk to the visitor; stops once it returns false.
class Emitter {
 public:
  Emitter(WeightTypes types, ExpectedTensorVisitor visit, void* context)
      : types_(types), visit_(visit), context_(context) {}
  bool stopped() const { return stopped_; }
  // One entry of `kind`, named `scope`.`name`; `owner`: the name of the
  // entry whose bytes it shares (MATRIX, PROJECTION), or nullptr.
  void entry(TableKind kind, const char* scope, const char* name, uint32_t rows, uint32_t cols,
             const char* owner);

 private:
  void matrix(const char* name, uint32_t rows, uint32_t cols, const char* owner, bool projection);
  void emit(const char* name, TensorRole role, DType dtype, uint32_t rank, uint32_t dim0,
            uint32_t dim1, const char* alias_of, bool projection = false);

  WeightTypes types_;
  ExpectedTensorVisitor visit_;
  void* context_;
  bool stopped_ = false;
};

}  // namespace tensor_table

// Calls `visit` for every tensor `config` implies: each group in file
// order, the layer groups once per layer, each entry as its kind says.
// False if the visitor stopped early.
template <const auto& table, typename Entry, typename Config>
bool walk_tensor_table(const TableRules<Entry, Config>& rules, const Config& config,
                       WeightTypes types, ExpectedTensorVisitor visit, void* context) {
  tensor_table::Emitter out(types, visit, context);
  const TableGroup order[] = {TableGroup::MODEL, TableGroup::ENCODER_LAYER, TableGroup::ENCODER_END,
                              TableGroup::DECODER_LAYER, TableGroup::DECODER_END};
  for (TableGroup group : order) {
    const uint32_t repeats = group == TableGroup::ENCODER_LAYER   ? rules.encoder_layers
                             : group == TableGroup::DECODER_LAYER ? rules.decoder_layers
                                                                  : 1;
    for (uint32_t layer = 0; layer < repeats && !out.stopped(); ++layer) {
      char scope[kMaxTensorNameLength];
      tensor_table::group_scope(group, layer, scope, sizeof(scope));
      for (const Entry& e : table) {
        if (e.group != group || !rules.present(e.condition, config)) continue;
        const Entry* owner = rules.owner(e.condition, config);
        out.entry(e.kind, scope, e.name, rules.size(e.rows, config, layer),
                  rules.size(e.cols, config, layer), owner != nullptr ? owner->name : nullptr);
      }
    }
  }
  return !out.stopped();
}

// The name entry `id` of `table` has in a file ("encoder.layers.{layer}.
// <name>" for layer parts); for a LINEAR or NORM entry the prefix of its
// ".weight" and ".bias". False when it does not fit or there is no such entry.
template <const auto& table, typename Id>
bool table_tensor_name(Id id, uint32_t layer, char* out, size_t size) {
  static_assert(ids_follow(table), "a table's ids are its indices: table[id] is id's entry");
  const size_t index = static_cast<size_t>(id);
  if (index >= std::size(table)) return false;
  const auto& e = table[index];
  char scope[kMaxTensorNameLength];
  tensor_table::group_scope(e.group, layer, scope, sizeof(scope));
  if (scope[0] == '\0') return format_tensor_name(out, size, "%s", e.name);
  return format_tensor_name(out, size, "%s.%s", scope, e.name);
}

}  // namespace edgemt
