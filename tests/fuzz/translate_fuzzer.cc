// Fuzz target: the whole Translator::translate() call (and force_decode) on
// small models, with whatever a caller could pass: prepare() limits in and
// past their bounds, batches of sources of any length with any ids, beam
// sizes, length rules (NaN, ±inf, huge, negative), result buffers too small.
//
// The models (built once, in memory, by the test ModelBuilder) cover every
// weight dtype and option (Marian's per-tensor int8 arithmetic with a
// pre-norm self-attention decoder among them), plus two whose finite weights
// overflow: one for a single source token (NaN in the encoder for sentences
// holding it), one that leaves only pad and bos with finite logits.
//
// Properties checked (a violation aborts, which libFuzzer reports):
//   - every call returns, with kOk or an error code the API documents;
//   - after kOk every result is either kOk with length <= capacity and
//     every id a real, non-special vocabulary id, or kNumericError with
//     length 0 and a message;
//   - nothing is read or written out of bounds (ASan) and no undefined
//     behaviour happens (UBSan).
#include <fuzzer/FuzzedDataProvider.h>

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <vector>

#include "edgemt/limits.h"
#include "edgemt/model.h"
#include "edgemt/translator.h"
#include "models/families.h"
#include "support/model_builder.h"
#include "fuzz_check.h"
#include "models/transformer/config.h"

namespace {

using edgemt::DType;
using edgemt::StatusCode;
using edgemt::testing::ModelBuilder;

struct Engine {
  std::unique_ptr<edgemt::testing::AlignedBuffer> bytes;
  std::unique_ptr<edgemt::Model> model;
  std::unique_ptr<edgemt::Translator> translators[2];  // 1 and 2 threads
};

std::vector<Engine>* g_engines = nullptr;

ModelBuilder variant(int index) {
  edgemt::transformer::TransformerConfig c = edgemt::testing::tiny_config();
  switch (index) {
    case 0:
      return ModelBuilder(c, DType::kF32, 11);
    case 1:
      c.norm_placement = edgemt::transformer::NormPlacement::kPreNorm;
      c.activation = edgemt::Activation::kGelu;
      c.encoder_final_norm = c.decoder_final_norm = true;
      c.output_bias = true;
      return ModelBuilder(c, DType::kF16, 12);
    case 2:
      c.activation = edgemt::Activation::kSwish;
      c.shared_embeddings = true;
      c.tied_output = true;
      return ModelBuilder(c, DType::kI8, 13);
    case 3: {  // source token 20 overflows the encoder
      ModelBuilder builder(c, DType::kF32, 14);
      std::vector<float>& table = builder.find("embedding.source")->values;
      for (size_t i = 0; i < c.d_model; ++i) table[20 * c.d_model + i] = i % 2 ? -3e38f : 3e38f;
      return builder;
    }
    case 4: {  // Marian's int8 arithmetic (Int8PerTensorDynamic), self-attention
      // decoder: every step multiplies all earlier positions' inputs again
      c.norm_placement = edgemt::transformer::NormPlacement::kPreNorm;
      c.encoder_final_norm = c.decoder_final_norm = true;
      c.zero_decoder_start = true;
      c.raw_decoder_self_memory = true;
      ModelBuilder builder(c, DType::kI8, 16);
      builder.per_tensor = true;
      builder.regenerate_tensors();
      return builder;
    }
    default: {  // every allowed logit is -inf, pad and bos are finite
      c.norm_placement = edgemt::transformer::NormPlacement::kPreNorm;
      c.encoder_final_norm = c.decoder_final_norm = true;
      ModelBuilder builder(c, DType::kF32, 15);
      for (float& v : builder.find("decoder.final_norm.weight")->values) v = 0.0f;
      for (float& v : builder.find("decoder.final_norm.bias")->values) v = 1.0f;
      std::vector<float>& output = builder.find("output.weight")->values;
      for (size_t v = 0; v < c.vocab_size; ++v) {
        const bool banned = v == 0 || v == 2;  // pad, bos
        for (size_t i = 0; i < c.d_model; ++i) output[v * c.d_model + i] = banned ? 0.0f : -3e38f;
      }
      return builder;
    }
  }
}

constexpr int kVariants = 6;

Engine make_engine(int index) {
  Engine engine;
  engine.bytes = std::make_unique<edgemt::testing::AlignedBuffer>(variant(index).build());
  const edgemt::Status loaded =
      edgemt::Model::from_buffer(engine.bytes->data(), engine.bytes->size(), &engine.model);
  if (!loaded.is_ok()) {
    std::fprintf(stderr, "translate_fuzzer: model %d does not load: %s\n", index, loaded.message());
    std::abort();
  }
  for (size_t t = 0; t < 2; ++t) {
    edgemt::TranslatorOptions options;
    options.threads = t + 1;
    options.min_parallel_nanoseconds = 0;  // split every call: the threaded paths too
    FUZZ_CHECK(edgemt::Translator::create(*engine.model, options, &engine.translators[t]).is_ok());
  }
  return engine;
}

// A float for a length rule: usually ordinary, sometimes the worst there is.
float pick_float(FuzzedDataProvider& data) {
  static const float kSpecial[] = {NAN,  INFINITY, -INFINITY, -1.0f, 0.0f, 0.5f,
                                   1.0f, 2.0f,     1e30f,     -1e30f, 3.0f, 1e-30f};
  if (data.ConsumeBool()) {
    return kSpecial[data.ConsumeIntegralInRange<size_t>(0, sizeof(kSpecial) / sizeof(kSpecial[0]) - 1)];
  }
  return data.ConsumeFloatingPointInRange<float>(-4.0f, 4.0f);
}

bool is_documented_error(StatusCode code) {
  return code == StatusCode::kInvalidArgument || code == StatusCode::kOutOfRange ||
         code == StatusCode::kFailedPrecondition;
}

void check_results(const edgemt::Model& model, const std::vector<edgemt::Translation>& results) {
  const edgemt::SpecialTokens& special = model.special_tokens();
  const int32_t vocab = static_cast<int32_t>(edgemt::family_vocab_size(edgemt::family_config(model)));
  for (const edgemt::Translation& r : results) {
    FUZZ_CHECK(r.error != nullptr);
    if (r.status == StatusCode::kOk) {
      FUZZ_CHECK(r.length <= r.capacity);
      FUZZ_CHECK(r.error[0] == '\0');
      for (size_t i = 0; i < r.length; ++i) {
        const int32_t id = r.tokens[i];
        FUZZ_CHECK(id >= 0 && id < vocab);
        FUZZ_CHECK(id != special.pad && id != special.bos && id != special.eos);
      }
    } else {
      FUZZ_CHECK(r.status == StatusCode::kNumericError);
      FUZZ_CHECK(r.length == 0);
      FUZZ_CHECK(r.error[0] != '\0');
    }
  }
}

}  // namespace

extern "C" int LLVMFuzzerInitialize(int*, char***) {
  g_engines = new std::vector<Engine>();
  for (int i = 0; i < kVariants; ++i) g_engines->push_back(make_engine(i));
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* input, size_t size) {
  FuzzedDataProvider data(input, size);
  Engine& engine = (*g_engines)[data.ConsumeIntegralInRange<int>(0, kVariants - 1)];
  edgemt::Translator& translator = *engine.translators[data.ConsumeBool() ? 1 : 0];
  const edgemt::transformer::TransformerConfig& config = edgemt::transformer::transformer_config(*engine.model);
  const size_t positions = config.max_positions;

  // Limits: mostly valid and small, sometimes past the model or the bounds.
  edgemt::Limits limits;
  limits.max_batch = data.ConsumeIntegralInRange<size_t>(0, 6);
  limits.max_beam = data.ConsumeIntegralInRange<size_t>(0, 5);
  limits.max_source_len = data.ConsumeIntegralInRange<size_t>(0, positions + 1);
  limits.max_target_len = data.ConsumeIntegralInRange<size_t>(0, positions + 1);
  if (data.ConsumeIntegralInRange<int>(0, 31) == 0) limits.max_batch = edgemt::kMaxBatch + 1;
  const edgemt::Status prepared = translator.prepare(limits);
  if (!prepared.is_ok()) {
    FUZZ_CHECK(prepared.code() == StatusCode::kInvalidArgument);
    return 0;
  }

  const size_t count = data.ConsumeIntegralInRange<size_t>(0, limits.max_batch + 1);
  std::vector<std::vector<int32_t>> sources(count);
  std::vector<edgemt::TokenSpan> spans(count);
  for (size_t s = 0; s < count; ++s) {
    const size_t length = data.ConsumeIntegralInRange<size_t>(0, limits.max_source_len + 1);
    for (size_t i = 0; i < length; ++i) {
      // Mostly real ids; now and then one just outside the vocabulary.
      const int32_t vocab = static_cast<int32_t>(config.vocab_size);
      sources[s].push_back(data.ConsumeIntegralInRange<int>(0, 15) == 0
                               ? data.ConsumeIntegralInRange<int32_t>(-2, vocab + 1)
                               : data.ConsumeIntegralInRange<int32_t>(0, vocab - 1));
    }
    spans[s].ids = sources[s].empty() ? nullptr : sources[s].data();
    spans[s].length = sources[s].size();
  }

  edgemt::DecodeOptions options;
  options.beam_size = data.ConsumeIntegralInRange<size_t>(0, limits.max_beam + 1);
  options.length_penalty = pick_float(data);
  options.max_len_a = pick_float(data);
  options.max_len_b = pick_float(data);

  std::vector<std::vector<int32_t>> buffers(count);
  std::vector<edgemt::Translation> results(count);
  for (size_t s = 0; s < count; ++s) {
    const size_t capacity = data.ConsumeBool()
                                ? limits.max_target_len
                                : data.ConsumeIntegralInRange<size_t>(0, limits.max_target_len + 2);
    buffers[s].assign(capacity, -7);
    results[s].tokens = capacity == 0 ? nullptr : buffers[s].data();
    results[s].capacity = capacity;
  }

  const edgemt::Status status = translator.translate(spans.data(), count, options, results.data());
  if (status.is_ok()) {
    check_results(*engine.model, results);
  } else {
    FUZZ_CHECK(is_documented_error(status.code()));
  }

  // Teacher forcing on the first source, with a target from what is left.
  if (count > 0 && data.ConsumeBool()) {
    std::vector<int32_t> target;
    const size_t length = data.ConsumeIntegralInRange<size_t>(0, limits.max_target_len + 1);
    for (size_t i = 0; i < length; ++i) {
      target.push_back(data.ConsumeIntegralInRange<int32_t>(-1, static_cast<int32_t>(config.vocab_size)));
    }
    std::vector<float> logits((target.size() + 1) * config.vocab_size);
    const edgemt::TokenSpan target_span{target.empty() ? nullptr : target.data(), target.size()};
    const edgemt::Status forced = translator.force_decode(spans[0], target_span, logits.data());
    FUZZ_CHECK(forced.is_ok() || is_documented_error(forced.code()));
  }
  return 0;
}
