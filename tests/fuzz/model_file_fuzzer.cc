// Fuzz target: loading a model file from bytes, and using what loads.
//
// Every input goes through Model::from_buffer (the whole verifier). What it
// accepts must then be safe to use: the tokenizer is created and round-trips
// a sentence, the Translator resolves the weights, prepares an arena and
// translates a short source greedily and with beam 2. A verifier that lets
// through something the runtime trusts blindly shows up here as an ASan or
// UBSan report, or as an abort of the checks below.
//
// Mutation is structure-aware (LLVMFuzzerCustomMutator): two times in three
// the file is taken apart (model_file_parts.h), one field is changed, and it
// is written again, so inputs reach the semantic checks and, through
// regenerated consistent tensor tables, the Translator; otherwise libFuzzer's
// byte mutations run on the whole file. Version-4 files are written again
// with fresh checksums (model_file_parts.cc); byte-mutated ones are also
// loaded without their checksums (below). Seeds: tests/fuzz/corpus/model_file/
// (small valid models of every dtype, written by make_seed_models).
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "edgemt/model.h"
#include "edgemt/tokenizer.h"
#include "edgemt/translator.h"
#include "model_file_parts.h"
#include "fuzz_check.h"

extern "C" size_t LLVMFuzzerMutate(uint8_t* data, size_t size, size_t max_size);

namespace {

// Arenas above this are skipped (a verified model of legal but large shape).
constexpr size_t kMaxArenaBytes = 64u << 20;

// A 64-byte aligned copy (the format's alignment; from_buffer requires it).
struct Aligned {
  explicit Aligned(const uint8_t* data, size_t size)
      : bytes(static_cast<uint8_t*>(std::aligned_alloc(64, (size + 63) / 64 * 64 + 64))),
        length(size) {
    if (size > 0) std::memcpy(bytes, data, size);
  }
  ~Aligned() { std::free(bytes); }
  uint8_t* bytes;
  size_t length;
};

void use_tokenizer(const edgemt::Model& model) {
  std::unique_ptr<edgemt::Tokenizer> tokenizer;
  if (!edgemt::Tokenizer::create(model, &tokenizer).is_ok()) return;
  std::vector<int32_t> ids;
  if (!tokenizer->encode("a small test sentence.", &ids).is_ok()) return;
  for (int32_t id : ids) FUZZ_CHECK(id >= 0 && static_cast<uint32_t>(id) < model.source_vocab_size());
  std::string text;
  (void)tokenizer->decode(ids.data(), ids.size(), &text);
}

void use_translator(const edgemt::Model& model) {
  std::unique_ptr<edgemt::Translator> translator;
  if (!edgemt::Translator::create(model, edgemt::TranslatorOptions(), &translator).is_ok()) return;
  const uint32_t longest = model.max_sequence_length();  // any family
  edgemt::Limits limits;
  limits.max_batch = 2;
  limits.max_beam = 2;
  limits.max_source_len = longest < 6 ? longest : 6;
  limits.max_target_len = longest < 6 ? longest : 6;
  size_t bytes = 0;
  FUZZ_CHECK(translator->arena_bytes(limits, &bytes).is_ok());
  if (bytes > kMaxArenaBytes || !translator->prepare(limits).is_ok()) return;

  const int32_t source_vocab = static_cast<int32_t>(model.source_vocab_size());
  const int32_t vocab = static_cast<int32_t>(model.vocab_size());
  std::vector<int32_t> source;
  for (size_t i = 0; i + 1 < limits.max_source_len; ++i) source.push_back(static_cast<int32_t>(i * 7 + 4) % source_vocab);
  source.push_back(model.special_tokens().eos);
  const edgemt::TokenSpan spans[2] = {{source.data(), source.size()}, {source.data(), 1}};
  std::vector<int32_t> buffers[2] = {std::vector<int32_t>(limits.max_target_len),
                                     std::vector<int32_t>(limits.max_target_len)};
  for (size_t beam : {size_t{1}, size_t{2}}) {
    edgemt::Translation results[2];
    for (int s = 0; s < 2; ++s) {
      results[s].tokens = buffers[s].data();
      results[s].capacity = buffers[s].size();
    }
    edgemt::DecodeOptions options;
    options.beam_size = beam;
    const edgemt::Status status = translator->translate(spans, 2, options, results);
    FUZZ_CHECK(status.is_ok());
    for (const edgemt::Translation& r : results) {
      FUZZ_CHECK(r.status == edgemt::StatusCode::kOk || r.status == edgemt::StatusCode::kNumericError);
      FUZZ_CHECK(r.length <= r.capacity);
      for (size_t i = 0; i < r.length; ++i) FUZZ_CHECK(r.tokens[i] >= 0 && r.tokens[i] < vocab);
    }
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  Aligned copy(data, size);
  std::unique_ptr<edgemt::Model> model;
  // With the checksums (format version 4) first: what that accepts is used
  // below all the same. Then, when that refused, without them, so that the
  // byte mutations of a version-4 file (whose checksums they break) still
  // reach every other check: skipping the CRC pass must leave a verifier
  // that refuses whatever the runtime cannot use.
  edgemt::Status status = edgemt::Model::from_buffer(copy.bytes, copy.length, &model);
  if (!status.is_ok()) {
    FUZZ_CHECK(model == nullptr);
    edgemt::LoadOptions trusting;
    trusting.verify_checksum = false;
    status = edgemt::Model::from_buffer(copy.bytes, copy.length, trusting, &model);
  }
  if (!status.is_ok()) {
    FUZZ_CHECK(model == nullptr);
    FUZZ_CHECK(status.message()[0] != '\0');
    return 0;
  }
  use_tokenizer(*model);
  use_translator(*model);
  return 0;
}

extern "C" size_t LLVMFuzzerCustomMutator(uint8_t* data, size_t size, size_t max_size,
                                          unsigned int seed) {
  std::mt19937 rng(seed);
  edgemt::fuzz::ModelFileParts parts;
  if (rng() % 3 == 0 || !edgemt::fuzz::decode(data, size, &parts)) {
    return LLVMFuzzerMutate(data, size, max_size);
  }
  const int changes = 1 + static_cast<int>(rng() % 3);
  for (int i = 0; i < changes; ++i) edgemt::fuzz::mutate(&parts, &rng, LLVMFuzzerMutate);
  const std::vector<uint8_t> out = edgemt::fuzz::encode(parts);
  if (out.size() > max_size) return LLVMFuzzerMutate(data, size, max_size);
  std::memcpy(data, out.data(), out.size());
  return out.size();
}
