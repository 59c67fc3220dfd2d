// Model: loading files built by ModelBuilder (and the bundled model), every
// accessor, and the file-level errors. The verifier's individual checks are in
// model_verifier_test.cc.
#include "edgemt/model.h"

#include <doctest/doctest.h>

#include <sys/stat.h>
#include <unistd.h>

#include <cstring>
#include <fstream>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "models/transformer/tensor_layout.h"
#include "kernels/fp16.h"
#include "support/model_builder.h"

using namespace edgemt::transformer;  // the family under test

namespace edgemt {
namespace {

using testing::AlignedBuffer;
using testing::BuiltLayout;
using testing::ModelBuilder;
using testing::TempFile;

bool contains(const Status& status, const std::string& text) {
  return std::strstr(status.message(), text.c_str()) != nullptr;
}

Status load_bytes(const std::vector<uint8_t>& bytes, std::unique_ptr<Model>* model) {
  TempFile file(bytes);
  if (!file.ok()) return Status::error(StatusCode::kIoError, "cannot write a temp file");
  return Model::load(file.path().c_str(), model);
}

// The tensor's data decoded to float.
std::vector<float> read_floats(const TensorView& tensor) {
  std::vector<float> values(static_cast<size_t>(tensor.element_count()));
  if (tensor.dtype == DType::kF32) {
    std::memcpy(values.data(), tensor.data, values.size() * sizeof(float));
  } else if (tensor.dtype == DType::kF16) {
    const auto* half = static_cast<const uint16_t*>(tensor.data);
    for (size_t i = 0; i < values.size(); ++i) values[i] = kernels::f16_to_f32(half[i]);
  }
  return values;
}

// Every tensor the builder wrote is in the model, with the builder's values.
void check_tensors_match(const Model& model, const ModelBuilder& builder) {
  CHECK(model.tensor_count() == builder.tensors.size());
  for (size_t i = 0; i < model.tensor_count(); ++i) {
    const TensorView& tensor = model.tensor(i);
    CAPTURE(tensor.name);
    if (i > 0) CHECK(std::strcmp(model.tensor(i - 1).name, tensor.name) < 0);
    CHECK(model.find_tensor(tensor.name) == &tensor);
    CHECK(reinterpret_cast<uintptr_t>(tensor.data) % 64 == 0);
    CHECK(tensor.offset % 64 == 0);
    CHECK(tensor.size_bytes == tensor.element_count() * dtype_size(tensor.dtype));
    const testing::BuilderTensor* built = builder.find(tensor.name);
    CHECK(built != nullptr);
    if (built == nullptr) continue;
    CHECK(std::vector<uint32_t>(tensor.shape, tensor.shape + tensor.rank) == built->shape);
    CHECK(tensor.dtype == built->dtype);
    CHECK(read_floats(tensor) == builder.values(tensor.name));
  }
}

TEST_CASE("format/model: a valid f32 model loads and every accessor returns what was built") {
  ModelBuilder builder;
  BuiltLayout layout;
  const std::vector<uint8_t> bytes = builder.build(&layout);
  std::unique_ptr<Model> model;
  const Status status = load_bytes(bytes, &model);
  CHECK_MESSAGE(status.is_ok(), std::string(status.message()));
  if (!model) return;

  CHECK(model->format_version() == kFormatVersion);
  const TransformerConfig& c = transformer_config(*model);
  CHECK(c.encoder_layers == 1);
  CHECK(c.decoder_layers == 1);
  CHECK(c.d_model == 8);
  CHECK(c.heads == 2);
  CHECK(c.ffn_dim == 16);
  CHECK(c.vocab_size == 32);
  CHECK(c.max_positions == 16);
  CHECK(c.activation == Activation::kRelu);
  CHECK(c.norm_placement == NormPlacement::kPostNorm);
  CHECK(c.layer_norm_eps == 1e-5f);
  CHECK(c.embedding_scale == 1.0f);
  CHECK_FALSE(c.encoder_final_norm);
  CHECK_FALSE(c.decoder_final_norm);
  CHECK_FALSE(c.tied_output);
  CHECK_FALSE(c.output_bias);
  CHECK_FALSE(c.shared_embeddings);

  const SpecialTokens& s = model->special_tokens();
  CHECK(s.pad == 0);
  CHECK(s.unk == 1);
  CHECK(s.bos == 2);
  CHECK(s.eos == 3);
  CHECK(s.decoder_start == 2);
  CHECK(model->weight_dtype() == DType::kF32);
  CHECK(std::strcmp(model->source_language(), "en") == 0);
  CHECK(std::strcmp(model->target_language(), "de") == 0);
  const Provenance& p = model->provenance();
  CHECK(std::strcmp(p.source_format, "test") == 0);
  CHECK(std::strcmp(p.source_checkpoint, "tiny.pt") == 0);
  CHECK(std::strcmp(p.source_sha256, "0123456789abcdef") == 0);
  CHECK(std::strcmp(p.converter_version, "model_builder") == 0);
  CHECK(std::strcmp(p.created_utc, "2026-01-01T00:00:00Z") == 0);

  size_t tokenizer_size = 0;
  const uint8_t* tokenizer = model->tokenizer_model(&tokenizer_size);
  CHECK(tokenizer_size == builder.tokenizer_model.size());
  CHECK(std::string(reinterpret_cast<const char*>(tokenizer), tokenizer_size) ==
        builder.tokenizer_model);
  CHECK(model->append_eos_to_source());

  CHECK(model->file_size() == bytes.size());
  CHECK(model->weights_size() == layout.weights_size);
  CHECK(model->tensor_count() == expected_tensor_count(c));
  check_tensors_match(*model, builder);
  CHECK(model->find_tensor("no.such.tensor") == nullptr);
  CHECK(model->find_tensor("") == nullptr);
  CHECK(model->find_tensor(nullptr) == nullptr);
}

TEST_CASE("format/model: an f16 model holds the builder's values rounded to f16") {
  ModelBuilder builder(testing::tiny_config(), DType::kF16, 7);
  std::unique_ptr<Model> model;
  const Status status = load_bytes(builder.build(), &model);
  CHECK_MESSAGE(status.is_ok(), std::string(status.message()));
  if (!model) return;
  CHECK(model->weight_dtype() == DType::kF16);
  const TensorView* matrix = model->find_tensor("decoder.layers.0.cross_attn.kv.weight");
  const TensorView* bias = model->find_tensor("decoder.layers.0.cross_attn.kv.bias");
  CHECK(matrix != nullptr);
  CHECK(bias != nullptr);
  if (matrix == nullptr || bias == nullptr) return;
  CHECK(matrix->dtype == DType::kF16);
  CHECK(matrix->size_bytes == 16 * 8 * 2);
  CHECK(bias->dtype == DType::kF32);  // vectors stay f32 in f16 files
  check_tensors_match(*model, builder);
}

TEST_CASE("format/model: every config option round-trips - aliases share bytes") {
  TransformerConfig config = testing::tiny_config();
  config.encoder_layers = 2;
  config.decoder_layers = 3;
  config.d_model = 12;
  config.heads = 3;
  config.ffn_dim = 20;
  config.vocab_size = 40;
  config.max_positions = 9;
  config.activation = Activation::kGelu;
  config.norm_placement = NormPlacement::kPreNorm;
  config.layer_norm_eps = 1e-6f;
  config.encoder_final_norm = true;
  config.decoder_final_norm = true;
  config.embedding_scale = 3.4641016f;
  config.tied_output = true;
  config.output_bias = true;
  config.shared_embeddings = true;
  ModelBuilder builder(config, DType::kF16, 3);
  builder.special_tokens = {39, 38, 37, 36, 35};
  builder.append_eos_to_source = false;
  builder.include_provenance = false;
  builder.source_language = "fr";
  builder.target_language = "";

  std::unique_ptr<Model> model;
  const Status status = load_bytes(builder.build(), &model);
  CHECK_MESSAGE(status.is_ok(), std::string(status.message()));
  if (!model) return;
  const TransformerConfig& c = transformer_config(*model);
  CHECK(c.encoder_layers == 2);
  CHECK(c.decoder_layers == 3);
  CHECK(c.d_model == 12);
  CHECK(c.heads == 3);
  CHECK(c.ffn_dim == 20);
  CHECK(c.vocab_size == 40);
  CHECK(c.max_positions == 9);
  CHECK(c.activation == Activation::kGelu);
  CHECK(c.norm_placement == NormPlacement::kPreNorm);
  CHECK(c.layer_norm_eps == 1e-6f);
  CHECK(c.encoder_final_norm);
  CHECK(c.decoder_final_norm);
  CHECK(c.embedding_scale == 3.4641016f);
  CHECK(c.tied_output);
  CHECK(c.output_bias);
  CHECK(c.shared_embeddings);
  CHECK(model->special_tokens().pad == 39);
  CHECK(model->special_tokens().decoder_start == 35);
  CHECK_FALSE(model->append_eos_to_source());
  CHECK(std::strcmp(model->source_language(), "fr") == 0);
  CHECK(std::strcmp(model->target_language(), "") == 0);
  CHECK(std::strcmp(model->provenance().converter_version, "") == 0);  // absent table

  const TensorView* source = model->find_tensor("embedding.source");
  const TensorView* target = model->find_tensor("embedding.target");
  const TensorView* output = model->find_tensor("output.weight");
  CHECK(source != nullptr);
  CHECK(target != nullptr);
  CHECK(output != nullptr);
  if (source == nullptr || target == nullptr || output == nullptr) return;
  CHECK(target->data == source->data);
  CHECK(output->data == source->data);
  CHECK(model->find_tensor("output.bias") != nullptr);
  CHECK(model->find_tensor("decoder.final_norm.weight") != nullptr);
  check_tensors_match(*model, builder);
}

TEST_CASE("format/model: from_buffer borrows an aligned buffer and rejects an unaligned one") {
  ModelBuilder builder;
  const std::vector<uint8_t> bytes = builder.build();
  AlignedBuffer buffer(bytes);
  std::unique_ptr<Model> model;
  Status status = Model::from_buffer(buffer.data(), buffer.size(), &model);
  CHECK_MESSAGE(status.is_ok(), std::string(status.message()));
  if (model) {
    const TensorView* tensor = model->find_tensor("position.table");
    CHECK(tensor != nullptr);
    if (tensor != nullptr) {
      const auto* base = buffer.data();
      const auto* data = static_cast<const uint8_t*>(tensor->data);
      CHECK(data >= base);
      CHECK(data + tensor->size_bytes <= base + buffer.size());  // in place, no copy
    }
    CHECK(model->file_size() == bytes.size());
  }

  std::vector<uint8_t> shifted(bytes.size() + 64);
  uint8_t* unaligned = shifted.data();
  while (reinterpret_cast<uintptr_t>(unaligned) % 64 == 0) ++unaligned;
  std::memcpy(unaligned, bytes.data(), bytes.size());
  std::unique_ptr<Model> other;
  status = Model::from_buffer(unaligned, bytes.size(), &other);
  CHECK(status.code() == StatusCode::kInvalidArgument);
  CHECK_MESSAGE(contains(status, "64-byte aligned"), std::string(status.message()));
  CHECK(other == nullptr);
}

TEST_CASE("format/model: a missing file is kNotFound and leaves the output empty") {
  std::unique_ptr<Model> model;
  const Status status = Model::load("/nonexistent/dir/x.emt", &model);
  CHECK(status.code() == StatusCode::kNotFound);
  CHECK_MESSAGE(
      contains(status, "cannot open model file '/nonexistent/dir/x.emt': No such file or directory"),
      std::string(status.message()));
  CHECK(model == nullptr);
}

TEST_CASE("format/model: an empty file is kInvalidModel") {
  std::unique_ptr<Model> model;
  const Status status = load_bytes({}, &model);
  CHECK(status.code() == StatusCode::kInvalidModel);
  CHECK_MESSAGE(contains(status, "empty"), std::string(status.message()));
  CHECK(model == nullptr);
}

TEST_CASE("format/model: a file cut anywhere is kInvalidModel saying it is truncated or small") {
  ModelBuilder builder;
  BuiltLayout layout;
  const std::vector<uint8_t> bytes = builder.build(&layout);
  const size_t fb_end = 4 + layout.flatbuffer_size;
  const size_t cuts[] = {1, 3, 4, 7, 8, 11, 12, 100, fb_end / 2, fb_end - 1,
                         fb_end, layout.weights_offset, layout.weights_offset + 1,
                         layout.weights_offset + static_cast<size_t>(layout.weights_size) / 2,
                         bytes.size() - 1};
  for (size_t cut : cuts) {
    CAPTURE(cut);
    std::vector<uint8_t> truncated(bytes.begin(), bytes.begin() + static_cast<ptrdiff_t>(cut));
    std::unique_ptr<Model> model;
    const Status status = load_bytes(truncated, &model);
    CHECK(status.code() == StatusCode::kInvalidModel);
    CHECK_MESSAGE((contains(status, "truncated") || contains(status, "too small")),
                  std::string(status.message()));
    CHECK(model == nullptr);
  }
}

TEST_CASE("format/model: unsupported version through load") {
  ModelBuilder builder;
  builder.format_version = kFormatVersion + 1;
  std::unique_ptr<Model> model;
  const Status status = load_bytes(builder.build(), &model);
  CHECK(status.code() == StatusCode::kUnsupportedVersion);
  const std::string want = "model format version " + std::to_string(kFormatVersion + 1) +
                           " is not supported (this runtime reads versions 1 to " +
                           std::to_string(kFormatVersion) + ")";
  CHECK_MESSAGE(contains(status, want), std::string(status.message()));
  CHECK(model == nullptr);
}

void check_bundled_model(const char* path, DType dtype, QuantizationScheme scheme) {
  CAPTURE(std::string(path));
  std::unique_ptr<Model> model;
  const Status status = Model::load(path, &model);
  REQUIRE_MESSAGE(status.is_ok(), std::string(status.message()));
  const TransformerConfig& c = transformer_config(*model);
  CHECK(c.d_model == 256);
  CHECK(c.heads == 4);
  CHECK(c.encoder_layers == 3);
  CHECK(c.decoder_layers == 3);
  CHECK(c.vocab_size == 8000);
  CHECK(model->weight_dtype() == dtype);
  CHECK(model->quantization() == scheme);
  // A smoothed int8 file adds a smoothing vector per projection: 4 per
  // encoder layer, 7 per decoder layer, and the output's when untied.
  const size_t smoothing = scheme != QuantizationScheme::kInt8SmoothedPerRowDynamic
                               ? 0
                               : 4 * c.encoder_layers + 7 * c.decoder_layers + (c.tied_output ? 0 : 1);
  // The int8 file's one table (shared, tied) has residual codes: its
  // `_residual` and `_residual_scale`, which expected_tensor_count(c,
  // dtype) leaves out (WeightTypes without them).
  CHECK(model->residual_tables() == (dtype == DType::kI8));
  const size_t residual = model->residual_tables() ? 2 : 0;
  CHECK(model->tensor_count() == expected_tensor_count(c, dtype) + smoothing + residual);
  size_t tokenizer_size = 0;
  CHECK(model->tokenizer_model(&tokenizer_size) != nullptr);
  CHECK(tokenizer_size > 0);
  const TensorView* positions = model->find_tensor("position.table");
  REQUIRE(positions != nullptr);
  CHECK(positions->dtype == DType::kF32);
  CHECK(positions->shape[0] == c.max_positions);
  CHECK(positions->shape[1] == 256);
}

TEST_CASE("format/model: the bundled models (int8 default, fp16) load with the expected config") {
  check_bundled_model(EDGEMT_BUNDLED_MODEL, DType::kI8, QuantizationScheme::kInt8SmoothedPerRowDynamic);
  check_bundled_model(EDGEMT_BUNDLED_FP16_MODEL, DType::kF16, QuantizationScheme::kNone);
}

TEST_CASE("format/model: LoadMode::kCopy gives the same model, and it survives truncation") {
  ModelBuilder builder;
  TempFile file(builder.build());
  REQUIRE(file.ok());
  std::unique_ptr<Model> mapped;
  std::unique_ptr<Model> copied;
  REQUIRE(Model::load(file.path().c_str(), &mapped).is_ok());
  LoadOptions options;
  options.mode = LoadMode::kCopy;
  const Status status = Model::load(file.path().c_str(), options, &copied);
  REQUIRE_MESSAGE(status.is_ok(), std::string(status.message()));
  REQUIRE(copied->tensor_count() == mapped->tensor_count());
  for (size_t i = 0; i < mapped->tensor_count(); ++i) {
    const TensorView& a = mapped->tensor(i);
    const TensorView& b = copied->tensor(i);
    CHECK(std::string(a.name) == b.name);
    CHECK(a.data != b.data);
    CHECK(std::memcmp(a.data, b.data, a.size_bytes) == 0);
  }
  // What a mapping cannot survive (its pages would raise SIGBUS):
  REQUIRE(::truncate(file.path().c_str(), 0) == 0);
  const TensorView* output = copied->find_tensor("output.weight");
  REQUIRE(output != nullptr);
  CHECK(read_floats(*output) == builder.values("output.weight"));
  copied->release_tensor_pages(*output);  // a no-op for a copy: the bytes stay
  CHECK(read_floats(*output) == builder.values("output.weight"));
}

// The [begin, end) address range mapping `path` in this process (from
// /proc/self/maps), or {0, 0}.
std::pair<uintptr_t, uintptr_t> mapping_of(const std::string& path) {
  std::ifstream maps("/proc/self/maps");
  std::string line;
  std::pair<uintptr_t, uintptr_t> range{0, 0};
  while (std::getline(maps, line)) {
    if (line.size() < path.size() || line.compare(line.size() - path.size(), path.size(), path) != 0) continue;
    const uintptr_t begin = std::stoull(line.substr(0, line.find('-')), nullptr, 16);
    const uintptr_t end = std::stoull(line.substr(line.find('-') + 1), nullptr, 16);
    if (range.first == 0 || begin < range.first) range.first = begin;
    if (end > range.second) range.second = end;
  }
  return range;
}

TEST_CASE("format/model: a mapped file's vectors are private copies, its matrices stay in the file") {
  // Vectors are read in place on every call; in the file they sit between
  // matrices the translator packs and drops, and reading one would map a
  // whole page-cache folio of its neighbours (up to 2 MiB).
  ModelBuilder builder;
  TempFile file(builder.build());
  REQUIRE(file.ok());
  std::unique_ptr<Model> model;
  REQUIRE(Model::load(file.path().c_str(), &model).is_ok());
  const std::pair<uintptr_t, uintptr_t> mapping = mapping_of(file.path());
  REQUIRE(mapping.first != 0);
  size_t vectors = 0;
  size_t matrices = 0;
  for (size_t i = 0; i < model->tensor_count(); ++i) {
    const TensorView& tensor = model->tensor(i);
    CAPTURE(std::string(tensor.name));
    const uintptr_t address = reinterpret_cast<uintptr_t>(tensor.data);
    const bool in_file = address >= mapping.first && address < mapping.second;
    CHECK(address % 64 == 0);
    if (tensor.rank == 1) {
      ++vectors;
      CHECK_FALSE(in_file);
    } else {
      ++matrices;
      CHECK(in_file);
    }
  }
  CHECK(vectors > 10);  // biases and norms of every layer
  CHECK(matrices > 10);
  check_tensors_match(*model, builder);  // the copies hold the file's values
}

TEST_CASE("format/model: a FIFO or a device as model path is refused at once, both modes") {
  for (LoadMode mode : {LoadMode::kMap, LoadMode::kCopy}) {
    LoadOptions options;
    options.mode = mode;
    std::unique_ptr<Model> model;
    Status status = Model::load("/dev/zero", options, &model);
    CHECK(status.code() == StatusCode::kIoError);
    CHECK_MESSAGE(contains(status, "is a character device"), std::string(status.message()));
    CHECK(model == nullptr);
  }
  // The FIFO itself: format/regular_file_test.cc (it must not block).
}

}  // namespace
}  // namespace edgemt
