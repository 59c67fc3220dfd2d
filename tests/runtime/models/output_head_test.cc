// output_head.cc: an embedding table reads its rows from the output
// projection's pack only when it is that matrix (a tie the config declares:
// the same bytes, dtype, shape and, for i8, row scales). A file can point a
// table of another shape, or with other scales, at the projection's bytes
// (a fuzzer found one whose larger source table read beyond the pack); the
// table then reads its own rows from the file.
#include "models/output_head.h"

#include <doctest/doctest.h>

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "kernels/embedding.h"
#include "kernels/f32_gemm.h"
#include "models/transformer/weights.h"
#include "support/model_builder.h"

namespace edgemt {
namespace {

using testing::ModelBuilder;
using testing::TempFile;
using transformer::TransformerWeights;

// A model whose source vocabulary is 2 larger than the target one, with
// its own tokenizer, in `dtype`.
ModelBuilder larger_source(DType dtype, bool tied_output) {
  ModelBuilder builder(testing::tiny_config(), dtype);
  builder.config.source_vocab_size = builder.config.vocab_size + 2;
  builder.config.shared_embeddings = false;
  builder.config.tied_output = tied_output;
  builder.target_tokenizer_model = builder.tokenizer_model;
  builder.regenerate_tensors();
  return builder;
}

// Points tensor `name` at the bytes of `owner` (its size field stays its own).
void share_offset(ModelBuilder* builder, const std::string& name, const std::string& owner) {
  testing::BuiltLayout layout;
  (void)builder->build(&layout);
  builder->find(name)->offset = layout.tensor_offsets.at(owner);
}

struct Loaded {
  std::unique_ptr<TempFile> file;
  std::unique_ptr<Model> model;
  std::unique_ptr<TransformerWeights> weights;
};

// Loads the file's weights as a translator would without a shortlist.
Loaded load(const ModelBuilder& builder) {
  Loaded loaded;
  loaded.file = std::make_unique<TempFile>(builder.build());
  REQUIRE(loaded.file->ok());
  const Status status = Model::load(loaded.file->path().c_str(), &loaded.model);
  REQUIRE_MESSAGE(status.is_ok(), status.message());
  loaded.weights = std::make_unique<TransformerWeights>();
  REQUIRE(transformer::load_weights(*loaded.model, NetworkOptions{}, loaded.weights.get()).is_ok());
  REQUIRE(loaded.weights->head.finish_load(/*shortlisted=*/false).is_ok());
  return loaded;
}

// Row `id` of `table` as the lookup reads it, against its value in the file.
void check_row_from_file(const kernels::EmbeddingTable& table, int32_t id) {
  std::vector<float> row(table.dim);
  kernels::gather_rows(table, &id, 1, row.data(), table.dim);
  for (size_t d = 0; d < table.dim; ++d) {
    const size_t at = static_cast<size_t>(id) * table.dim + d;
    const float expected = table.dtype == DType::kI8
                               ? static_cast<float>(static_cast<const int8_t*>(table.data)[at]) *
                                     table.row_scale[id]
                               : static_cast<const float*>(table.data)[at];
    CHECK(row[d] == expected);
  }
}

// Whether the table reads its rows from the output projection's pack.
bool reads_pack(const kernels::EmbeddingTable& table) {
  return table.packed_f32_rows.blocks != nullptr || table.packed_rows.blocks != nullptr;
}

TEST_CASE("models/output_head: a larger table at a tied projection's bytes reads the file") {
  for (DType dtype : {DType::kF32, DType::kI8}) {
    CAPTURE(dtype_name(dtype));
    ModelBuilder builder = larger_source(dtype, /*tied_output=*/true);
    share_offset(&builder, "embedding.source", "embedding.target");
    const Loaded loaded = load(builder);
    const TransformerWeights& w = *loaded.weights;
    REQUIRE(w.source_embedding.data == w.target_embedding.data);
    CHECK(!reads_pack(w.source_embedding));
    // The declared tie still serves the target table from the pack (f32:
    // where the projection is on the own f32 GEMM).
    const bool packed = dtype == DType::kI8 || kernels::f32::fast_gemm_kernel() != nullptr;
    CHECK(reads_pack(w.target_embedding) == packed);
    const int32_t vocab = static_cast<int32_t>(builder.config.vocab_size);
    for (int32_t id : {0, vocab - 1, vocab, vocab + 1}) check_row_from_file(w.source_embedding, id);
    for (int32_t id : {0, vocab - 1}) check_row_from_file(w.target_embedding, id);
  }
}

TEST_CASE("models/output_head: an i8 projection at a table's bytes with its own scales is no tie") {
  ModelBuilder builder = larger_source(DType::kI8, /*tied_output=*/false);
  share_offset(&builder, "output.weight", "embedding.target");
  std::vector<float>& scales = builder.find("output.weight_scale")->values;
  for (float& scale : scales) scale *= 2.0f;  // not the table's
  const Loaded loaded = load(builder);
  const TransformerWeights& w = *loaded.weights;
  CHECK(!reads_pack(w.target_embedding));
  const int32_t vocab = static_cast<int32_t>(builder.config.vocab_size);
  for (int32_t id : {0, 1, vocab - 1}) check_row_from_file(w.target_embedding, id);
}

TEST_CASE("models/output_head: i8 tables sharing bytes keep the residual codes of their shape") {
  // The source table (first in name order) at the target's bytes: the
  // target's own residual codes, not the larger table's, are the target's.
  ModelBuilder builder = larger_source(DType::kI8, /*tied_output=*/true);
  builder.residual_tables = true;
  builder.regenerate_tensors();
  share_offset(&builder, "embedding.source", "embedding.target");
  const Loaded loaded = load(builder);
  const TransformerWeights& w = *loaded.weights;
  REQUIRE(w.source_embedding.data == w.target_embedding.data);
  const TensorView* source = loaded.model->find_tensor("embedding.source_residual");
  const TensorView* target = loaded.model->find_tensor("embedding.target_residual");
  REQUIRE((source != nullptr && target != nullptr));
  CHECK(w.source_embedding.residual == source->data);
  CHECK(w.target_embedding.residual == target->data);
}

}  // namespace
}  // namespace edgemt
