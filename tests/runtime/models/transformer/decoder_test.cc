// Encoder + incremental decoder against the naive reference Transformer
// (tests/support/reference_transformer.h) on small random models covering
// every config switch: post/pre-norm, ReLU/GELU/swish, final norms or not,
// shared/separate embeddings, tied/untied output with/without bias, f32/f16,
// int8 (per row, smoothed, per tensor; per row with F32 tables), self-attention
// or SSRU decoder layers.
#include <doctest/doctest.h>

#include <cmath>
#include <memory>
#include <string>
#include <vector>

#include "edgemt/model.h"
#include "edgemt/translator.h"
#include "support/kernel_testing.h"
#include "support/model_builder.h"
#include "support/reference_transformer.h"
#include "models/transformer/config.h"

using namespace edgemt::transformer;  // the family under test

namespace {

using edgemt::testing::ModelBuilder;
using edgemt::testing::ReferenceTransformer;
using edgemt::testing::TempFile;

struct Variant {
  const char* name;
  edgemt::transformer::NormPlacement norm;
  edgemt::Activation activation;
  bool final_norms;
  bool shared;
  bool tied;
  bool bias;
  edgemt::DType dtype;
  bool smoothed = false;  // I8: an Int8SmoothedPerRowDynamic file
  bool ssru = false;      // SSRU decoder layers (Marian's; post-norm only)
  bool per_tensor = false;  // I8: an Int8PerTensorDynamic file (Marian's intgemm8 arithmetic)
  bool fixed_range = false;  // I8: an Int8PerTensorStatic file (Firefox's, with alphas)
  bool f32_tables = false;   // I8 per row: embedding tables F32 (format version 9)
  bool f16_tables = false;   // I8 per row: embedding tables F16 (format version 10; untied)
  bool residual_tables = false;  // I8 per row: tables with residual codes (format version 11)
  // 16: whole blocks of the int8 pack's columns, so per-tensor int8 self-
  // attention computes q and k|v apart; 24: its fused Q|K|V product.
  size_t d_model = 16;
  bool raw_memory = false;  // pre-norm: Marian's raw self-attention memory
};

constexpr Variant kVariants[] = {
    {"post-norm relu (torch.nn.Transformer)", edgemt::transformer::NormPlacement::kPostNorm,
     edgemt::Activation::kRelu, true, true, true, true, edgemt::DType::kF32},
    {"pre-norm gelu", edgemt::transformer::NormPlacement::kPreNorm, edgemt::Activation::kGelu, true, true,
     true, false, edgemt::DType::kF32},
    {"post-norm swish no final norms untied (Marian-like)", edgemt::transformer::NormPlacement::kPostNorm,
     edgemt::Activation::kSwish, false, false, false, true, edgemt::DType::kF32},
    {"pre-norm relu separate embeddings f16", edgemt::transformer::NormPlacement::kPreNorm,
     edgemt::Activation::kRelu, true, false, true, true, edgemt::DType::kF16},
    {"post-norm relu int8 (Int8PerRowDynamic)", edgemt::transformer::NormPlacement::kPostNorm,
     edgemt::Activation::kRelu, true, true, true, true, edgemt::DType::kI8},
    {"pre-norm gelu untied int8", edgemt::transformer::NormPlacement::kPreNorm, edgemt::Activation::kGelu,
     false, false, false, true, edgemt::DType::kI8},
    {"post-norm swish untied smoothed int8 (calibrated Marian-like)", edgemt::transformer::NormPlacement::kPostNorm,
     edgemt::Activation::kSwish, false, false, false, true, edgemt::DType::kI8, true},
    {"pre-norm relu tied smoothed int8", edgemt::transformer::NormPlacement::kPreNorm, edgemt::Activation::kRelu,
     true, true, true, true, edgemt::DType::kI8, true},
    {"post-norm relu SSRU decoder tied (Firefox Translations' students)",
     edgemt::transformer::NormPlacement::kPostNorm, edgemt::Activation::kRelu, false, true, true, true,
     edgemt::DType::kF32, false, true},
    {"post-norm swish SSRU decoder untied int8", edgemt::transformer::NormPlacement::kPostNorm,
     edgemt::Activation::kSwish, false, false, false, true, edgemt::DType::kI8, false, true},
    {"post-norm relu SSRU decoder tied per-tensor int8 (Firefox's students as Marian runs them)",
     edgemt::transformer::NormPlacement::kPostNorm, edgemt::Activation::kRelu, false, true, true, true,
     edgemt::DType::kI8, false, true, true},
    {"post-norm swish untied per-tensor int8", edgemt::transformer::NormPlacement::kPostNorm,
     edgemt::Activation::kSwish, false, false, false, true, edgemt::DType::kI8, false, false, true},
    {"post-norm swish untied per-tensor int8, d 24", edgemt::transformer::NormPlacement::kPostNorm,
     edgemt::Activation::kSwish, false, false, false, true, edgemt::DType::kI8, false, false, true,
     false, false, false, false, 24},
    {"pre-norm relu untied, raw self-attention memory (Marian's pre-norm)",
     edgemt::transformer::NormPlacement::kPreNorm, edgemt::Activation::kRelu, true, false, false, true,
     edgemt::DType::kF32, false, false, false, false, false, false, false, 16, true},
    {"pre-norm relu untied per-tensor int8, raw self-attention memory",
     edgemt::transformer::NormPlacement::kPreNorm, edgemt::Activation::kRelu, true, false, false, true,
     edgemt::DType::kI8, false, false, true, false, false, false, false, 16, true},
    {"pre-norm gelu untied per-tensor int8, raw self-attention memory, d 24",
     edgemt::transformer::NormPlacement::kPreNorm, edgemt::Activation::kGelu, true, false, false, true,
     edgemt::DType::kI8, false, false, true, false, false, false, false, 24, true},
    {"post-norm relu SSRU decoder static int8 (Firefox's students as Firefox runs them)",
     edgemt::transformer::NormPlacement::kPostNorm, edgemt::Activation::kRelu, false, true, false, true,
     edgemt::DType::kI8, false, true, false, true},
    {"pre-norm gelu static int8", edgemt::transformer::NormPlacement::kPreNorm, edgemt::Activation::kGelu,
     true, false, false, true, edgemt::DType::kI8, false, false, false, true},
    {"post-norm relu tied smoothed int8, f32 tables (--fp32-embeddings)",
     edgemt::transformer::NormPlacement::kPostNorm, edgemt::Activation::kRelu, true, true, true, true,
     edgemt::DType::kI8, true, false, false, false, true},
    {"pre-norm gelu untied int8, f32 tables", edgemt::transformer::NormPlacement::kPreNorm,
     edgemt::Activation::kGelu, false, false, false, true, edgemt::DType::kI8, false, false, false, false,
     true},
    {"post-norm relu shared untied smoothed int8, f16 tables (--fp16-embeddings)",
     edgemt::transformer::NormPlacement::kPostNorm, edgemt::Activation::kRelu, true, true, false, true,
     edgemt::DType::kI8, true, false, false, false, false, true},
    {"pre-norm gelu separate untied int8, f16 tables", edgemt::transformer::NormPlacement::kPreNorm,
     edgemt::Activation::kGelu, false, false, false, true, edgemt::DType::kI8, false, false, false, false,
     false, true},
    {"post-norm relu shared tied smoothed int8, residual tables (the converter's default)",
     edgemt::transformer::NormPlacement::kPostNorm, edgemt::Activation::kRelu, true, true, true, true,
     edgemt::DType::kI8, true, false, false, false, false, false, true},
    {"pre-norm gelu separate untied int8, residual tables", edgemt::transformer::NormPlacement::kPreNorm,
     edgemt::Activation::kGelu, false, false, false, true, edgemt::DType::kI8, false, false, false, false,
     false, false, true},
    {"post-norm swish SSRU decoder separate tied int8, residual tables",
     edgemt::transformer::NormPlacement::kPostNorm, edgemt::Activation::kSwish, false, false, true, true,
     edgemt::DType::kI8, true, true, false, false, false, false, true},
};

edgemt::transformer::TransformerConfig config_for(const Variant& v) {
  edgemt::transformer::TransformerConfig c = edgemt::testing::tiny_config();
  c.encoder_layers = 2;
  c.decoder_layers = 2;
  c.d_model = v.d_model;
  c.heads = 4;
  c.ffn_dim = 24;
  c.vocab_size = 40;
  c.max_positions = 32;
  c.norm_placement = v.norm;
  c.activation = v.activation;
  c.encoder_final_norm = c.decoder_final_norm = v.final_norms;
  c.shared_embeddings = v.shared;
  c.tied_output = v.tied;
  c.output_bias = v.bias;
  c.embedding_scale = 4.0f;
  c.raw_decoder_self_memory = v.raw_memory;
  if (v.ssru) c.decoder_autoregression = edgemt::transformer::DecoderAutoregression::kSsru;
  return c;
}

struct Fixture {
  std::unique_ptr<TempFile> file;
  std::unique_ptr<edgemt::Model> model;
  std::unique_ptr<edgemt::Translator> translator;
};

Fixture make(const Variant& v, size_t threads,
             edgemt::MarianInt8Sums sums = edgemt::MarianInt8Sums::kExact) {
  Fixture f;
  ModelBuilder builder(config_for(v), v.dtype, 7);
  if (v.smoothed || v.per_tensor || v.fixed_range || v.f32_tables || v.f16_tables ||
      v.residual_tables) {
    builder.smoothed = v.smoothed;
    builder.per_tensor = v.per_tensor;
    builder.fixed_range = v.fixed_range;
    builder.f32_tables = v.f32_tables;
    builder.f16_tables = v.f16_tables;
    builder.residual_tables = v.residual_tables;
    builder.regenerate_tensors();
  }
  f.file = std::make_unique<TempFile>(builder.build());
  REQUIRE(f.file->ok());
  const edgemt::Status loaded = edgemt::Model::load(f.file->path().c_str(), &f.model);
  REQUIRE_MESSAGE(loaded.is_ok(), loaded.message());
  edgemt::TranslatorOptions options;
  options.threads = threads;
  options.min_parallel_nanoseconds = 0;  // tiny model: split anyway, to test the threaded kernels
  options.marian_int8_sums = sums;
  REQUIRE(edgemt::Translator::create(*f.model, options, &f.translator).is_ok());
  edgemt::Limits limits;
  limits.max_batch = 4;
  limits.max_beam = 3;
  limits.max_source_len = 32;
  limits.max_target_len = 32;
  REQUIRE(f.translator->prepare(limits).is_ok());
  return f;
}

}  // namespace

TEST_CASE("decoder logits match the naive reference for every config variant") {
  const std::vector<int32_t> source = {5, 17, 9, 30, 12, 3};
  const std::vector<int32_t> target = {8, 21, 4, 39, 3};  // teacher-forced continuation
  for (const Variant& v : kVariants) {
    CAPTURE(std::string(v.name));
    Fixture f = make(v, 1);
    const size_t vocab = transformer_config(*f.model).vocab_size;
    std::vector<float> logits(target.size() * vocab);
    const edgemt::Status status =
        f.translator->force_decode({source.data(), source.size()},
                                   {target.data(), target.size()}, logits.data());
    REQUIRE_MESSAGE(status.is_ok(), status.message());

    std::vector<int32_t> inputs = {f.model->special_tokens().decoder_start};
    inputs.insert(inputs.end(), target.begin(), target.end() - 1);
    const std::vector<double> expected = ReferenceTransformer(*f.model).logits(source, inputs);
    double max_error = 0.0;
    for (size_t i = 0; i < logits.size(); ++i) {
      max_error = std::max(max_error, std::fabs(static_cast<double>(logits[i]) - expected[i]));
    }
    // XNNPACK's f16 GEMMs (fp16-arithmetic CPUs, or EDGEMT_CPU_FEATURES=fp16)
    // round inputs, sums and outputs to half: a looser bound for them.
    const bool f16_native = std::string(f.translator->compute_path()).rfind("f16", 0) == 0;
    MESSAGE(std::string(v.name) << ": " << std::string(f.translator->compute_path()) << ", max |logit error| "
                                << max_error);
    CHECK(max_error < (f16_native ? 3e-2 : 2e-4));
  }
}

// TranslatorOptions::marian_int8_sums: only for files in Marian's int8
// arithmetic. At d 16 a lane of 16 holds one pair, which never saturates,
// so an Int8PerTensorDynamic file gives the exact sums' logits, bit for bit
// (the sums themselves: kernels and layers tests; Bergamot's on AVX2:
// tests/tools/test_sources_marian_ssru.py).
TEST_CASE("Marian's int8 sums are for Marian's int8 arithmetic only") {
  const std::vector<int32_t> source = {5, 17, 9, 30, 12, 3};
  const std::vector<int32_t> target = {8, 21, 4, 39, 3};
  for (const Variant& v : kVariants) {
    CAPTURE(std::string(v.name));
    if (v.per_tensor || v.fixed_range) {
      Fixture exact = make(v, 1);
      Fixture marian = make(v, 2, edgemt::MarianInt8Sums::kAvx2);
      const size_t vocab = transformer_config(*exact.model).vocab_size;
      std::vector<float> want(target.size() * vocab), got(target.size() * vocab);
      REQUIRE(exact.translator->force_decode({source.data(), source.size()},
                                             {target.data(), target.size()}, want.data()).is_ok());
      REQUIRE(marian.translator->force_decode({source.data(), source.size()},
                                              {target.data(), target.size()}, got.data()).is_ok());
      if (v.per_tensor) CHECK(edgemt::testing::same_bits(got.data(), want.data(), got.size()));
      // No zero-skipping kernel: it sums exactly.
      const std::string path = marian.translator->compute_path();
      CHECK(path.find("zeros skipped") == std::string::npos);
      // The compute path says so, whole (after the family's own text).
      const std::string said = "; Marian's int8 sums of a CPU without VNNI instead (16 lanes of 16 "
                               "bits, saturating: kernels of their own)";
      CHECK(path.size() > said.size());
      CHECK(path.compare(path.size() - said.size(), said.size(), said) == 0);
      CHECK(std::string(exact.translator->compute_path()).find("Marian's int8 sums") ==
            std::string::npos);
    } else {
      Fixture f = make(v, 1);
      std::unique_ptr<edgemt::Translator> translator;
      edgemt::TranslatorOptions options;
      options.marian_int8_sums = edgemt::MarianInt8Sums::kSsse3;
      const edgemt::Status status = edgemt::Translator::create(*f.model, options, &translator);
      CHECK(status.code() == edgemt::StatusCode::kInvalidArgument);
      CHECK(std::string(status.message()).find("Marian's int8 sums apply to int8 files in Marian's "
                                               "arithmetic") != std::string::npos);
    }
  }
}

// `edgemt inspect` says when ReLU feed-forward products skip zero inputs
// (the own f32 GEMM, f16 weights widened to it included, or an int8 kernel
// with a zero-skipping twin: every x86 one), and never for GELU or swish,
// whose outputs are rarely zero, nor on XNNPACK's products. The whole text
// fits (the int8 ones are the longest).
TEST_CASE("the compute path says when feed-forward zeros are skipped") {
  for (const Variant& v : kVariants) {
    CAPTURE(std::string(v.name));
    Fixture f = make(v, 1);
    const std::string path = f.translator->compute_path();
    CAPTURE(path);
    const bool says = path.find("ReLU zeros skipped") != std::string::npos;
    if (v.activation != edgemt::Activation::kRelu) {
      CHECK_FALSE(says);
    } else if (path.rfind("f16", 0) == 0 || path.rfind("f32 (XNNPACK", 0) == 0) {
      CHECK_FALSE(says);
    } else {
#if defined(__x86_64__)
      CHECK(says);
#endif
    }
    CHECK(path.back() == ')');
  }
}

TEST_CASE("greedy translation matches the naive reference greedy decoding") {
  const std::vector<std::vector<int32_t>> sources = {
      {5, 17, 9, 30, 12, 3}, {7, 3}, {11, 12, 13, 14, 15, 16, 17, 18, 19, 3}, {25, 4, 3}};
  for (const Variant& v : kVariants) {
    CAPTURE(std::string(v.name));
    Fixture f = make(v, 2);
    const ReferenceTransformer reference(*f.model);
    std::vector<edgemt::TokenSpan> spans;
    std::vector<std::vector<int32_t>> buffers(sources.size(), std::vector<int32_t>(32));
    std::vector<edgemt::Translation> results(sources.size());
    for (size_t i = 0; i < sources.size(); ++i) {
      spans.push_back({sources[i].data(), sources[i].size()});
      results[i].tokens = buffers[i].data();
      results[i].capacity = buffers[i].size();
    }
    edgemt::DecodeOptions options;
    options.max_len_a = 1.0f;
    options.max_len_b = 3.0f;
    if (v.per_tensor) {
      // One activation range per product spans every sentence of a batch
      // (as in Marian): the reference's, one sentence at a time.
      for (size_t i = 0; i < sources.size(); ++i) {
        REQUIRE(f.translator->translate(&spans[i], 1, options, &results[i]).is_ok());
      }
    } else {
      REQUIRE(f.translator->translate(spans.data(), spans.size(), options, results.data()).is_ok());
    }
    for (size_t i = 0; i < sources.size(); ++i) {
      CAPTURE(i);
      const size_t max_len = sources[i].size() + 3;
      const std::vector<int32_t> expected = reference.greedy(sources[i], max_len);
      const std::vector<int32_t> actual(results[i].tokens, results[i].tokens + results[i].length);
      CHECK(actual == expected);
    }
  }
}
