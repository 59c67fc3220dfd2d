// The RNN family end to end from committed files (tests/fixtures/torch_rnn/:
// the trained fixtures converted; their README says how), so that it runs
// in every build, sanitizers and the AArch64 emulator included:
//   - the fp32 GRU (2 layers, Luong general) translates the first reference
//     sentences greedily exactly as the trainer's own greedy() did
//     (greedy.ids), and beam 4 as PyTorch's beam search under edgemt's
//     rules (beam4.ids);
//   - the int8 bidirectional LSTM (Bahdanau) translates with both searches,
//     its attention rows summing to 1;
//   - compute path and config description name the family's parts.
#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <fstream>
#include <memory>
#include <sstream>
#include <string>
#include <vector>

#include "edgemt/model.h"
#include "kernels/f32_gemm.h"
#include "edgemt/tokenizer.h"
#include "edgemt/translator.h"

namespace edgemt {
namespace {

const std::string kFixture = EDGEMT_SOURCE_DIR "/tests/fixtures/torch_rnn/";
constexpr size_t kLines = 24;

std::vector<std::string> read_lines(const std::string& path, size_t count) {
  std::vector<std::string> lines;
  std::ifstream in(path);
  std::string line;
  while (lines.size() < count && std::getline(in, line)) lines.push_back(line);
  return lines;
}

std::vector<std::vector<int32_t>> read_ids(const std::string& path, size_t count) {
  std::vector<std::vector<int32_t>> rows;
  for (const std::string& line : read_lines(path, count)) {
    std::istringstream fields(line);
    std::vector<int32_t> ids;
    int32_t id = 0;
    while (fields >> id) ids.push_back(id);
    rows.push_back(ids);
  }
  return rows;
}

struct Run {
  std::vector<std::vector<int32_t>> tokens;
  std::vector<std::vector<float>> attention;
  std::vector<size_t> rows, columns;
};

Run translate(const Model& model, size_t beam, size_t threads) {
  std::unique_ptr<Tokenizer> tokenizer;
  REQUIRE(Tokenizer::create(model, &tokenizer).is_ok());
  const std::vector<std::string> lines = read_lines(EDGEMT_SOURCE_DIR "/models/reference/test_2016_flickr.en", kLines);
  REQUIRE(lines.size() == kLines);
  std::vector<std::vector<int32_t>> ids(kLines);
  std::vector<TokenSpan> spans(kLines);
  for (size_t i = 0; i < kLines; ++i) {
    REQUIRE(tokenizer->encode(lines[i], &ids[i]).is_ok());
    spans[i] = {ids[i].data(), ids[i].size()};
  }
  TranslatorOptions options;
  options.threads = threads;
  std::unique_ptr<Translator> translator;
  REQUIRE(Translator::create(model, options, &translator).is_ok());
  Limits limits;
  limits.max_batch = 8;
  limits.max_beam = 4;
  limits.max_source_len = 64;
  limits.max_target_len = 64;
  limits.attention = true;
  REQUIRE(translator->prepare(limits).is_ok());
  DecodeOptions decode = decode_options(model);
  decode.beam_size = beam;
  Run run;
  run.tokens.assign(kLines, std::vector<int32_t>(64));
  run.attention.assign(kLines, std::vector<float>(64 * 64));
  std::vector<Translation> results(kLines);
  for (size_t i = 0; i < kLines; ++i) {
    results[i].tokens = run.tokens[i].data();
    results[i].capacity = 64;
    results[i].attention = run.attention[i].data();
    results[i].attention_capacity = run.attention[i].size();
  }
  for (size_t first = 0; first < kLines; first += 8) {
    REQUIRE(translator->translate(spans.data() + first, 8, decode, results.data() + first).is_ok());
  }
  for (size_t i = 0; i < kLines; ++i) {
    REQUIRE(results[i].status == StatusCode::kOk);
    run.tokens[i].resize(results[i].length);
    run.rows.push_back(results[i].attention_rows);
    run.columns.push_back(results[i].attention_columns);
    CHECK(results[i].attention_columns == spans[i].length);
    CHECK((results[i].attention_rows == results[i].length || results[i].attention_rows == results[i].length + 1));
    for (size_t r = 0; r < results[i].attention_rows; ++r) {
      double sum = 0.0;
      for (size_t c = 0; c < results[i].attention_columns; ++c) {
        sum += static_cast<double>(run.attention[i][r * results[i].attention_columns + c]);
      }
      CHECK(std::fabs(sum - 1.0) < 1e-5);
    }
  }
  return run;
}

std::unique_ptr<Model> load(const std::string& name) {
  std::unique_ptr<Model> model;
  const Status status = Model::load((kFixture + name).c_str(), &model);
  REQUIRE_MESSAGE(status.is_ok(), status.message());
  return model;
}

TEST_CASE("models/rnn: fp32 GRU greedy and beam 4 equal PyTorch's on the first reference lines") {
  const std::unique_ptr<Model> model = load("luong-general-gru.fp32.emt");
  CHECK(std::string(model->family()) == "rnn");
  for (size_t threads : {size_t{1}, size_t{2}}) {
    CAPTURE(threads);
    CHECK(translate(*model, 1, threads).tokens == read_ids(kFixture + "luong-general-gru/greedy.ids", kLines));
    CHECK(translate(*model, 4, threads).tokens == read_ids(kFixture + "luong-general-gru/beam4.ids", kLines));
  }
}

TEST_CASE("models/rnn: greedy without scores takes the shared arg-max shortcut, the same tokens") {
  // The output head (models/output_head.h) is every family's: an f32 RNN's
  // projection on the own f32 GEMM gets the shortcut the Transformer has.
  const std::unique_ptr<Model> model = load("luong-general-gru.fp32.emt");
  std::unique_ptr<Tokenizer> tokenizer;
  REQUIRE(Tokenizer::create(*model, &tokenizer).is_ok());
  const std::vector<std::string> lines =
      read_lines(EDGEMT_SOURCE_DIR "/models/reference/test_2016_flickr.en", 200);
  for (size_t threads : {size_t{1}, size_t{2}}) {
    CAPTURE(threads);
    std::vector<std::vector<int32_t>> outputs[2];
    size_t shortcut_bytes = 0;
    for (bool scores : {true, false}) {
      TranslatorOptions options;
      options.threads = threads;
      std::unique_ptr<Translator> translator;
      REQUIRE(Translator::create(*model, options, &translator).is_ok());
      REQUIRE(translator->set_greedy_scores(scores).is_ok());
      Limits limits;
      limits.max_batch = 4;
      limits.max_beam = 1;
      limits.max_source_len = 128;
      limits.max_target_len = 64;
      REQUIRE(translator->prepare(limits).is_ok());
      if (!scores) shortcut_bytes = translator->greedy_shortcut_bytes();
      for (size_t first = 0; first < lines.size(); first += 4) {
        std::vector<int32_t> ids[4];
        TokenSpan spans[4];
        std::vector<int32_t> tokens[4];
        Translation results[4];
        for (size_t i = 0; i < 4; ++i) {
          REQUIRE(tokenizer->encode(lines[first + i], &ids[i]).is_ok());
          spans[i] = {ids[i].data(), std::min<size_t>(ids[i].size(), 128)};
          tokens[i].resize(64);
          results[i].tokens = tokens[i].data();
          results[i].capacity = 64;
        }
        DecodeOptions decode = decode_options(*model);
        decode.beam_size = 1;
        REQUIRE(translator->translate(spans, 4, decode, results).is_ok());
        for (size_t i = 0; i < 4; ++i) {
          tokens[i].resize(results[i].length);
          outputs[scores ? 0 : 1].push_back(tokens[i]);
        }
      }
    }
    CHECK(outputs[0] == outputs[1]);
    if (kernels::f32::fast_gemm_kernel() != nullptr) CHECK(shortcut_bytes > 0);
  }
}

TEST_CASE("models/rnn: int8 bidirectional LSTM with Bahdanau attention translates, same for any thread count") {
  const std::unique_ptr<Model> model = load("bahdanau-lstm.int8.emt");
  for (size_t beam : {size_t{1}, size_t{4}}) {
    CAPTURE(beam);
    const Run one = translate(*model, beam, 1);
    const Run two = translate(*model, beam, 2);
    CHECK(one.tokens == two.tokens);
    CHECK(one.attention == two.attention);
    size_t produced = 0;
    for (const auto& tokens : one.tokens) produced += tokens.empty() ? 0 : 1;
    CHECK(produced == kLines);
  }
}

TEST_CASE("models/rnn: inspect names the family's parts") {
  const std::unique_ptr<Model> model = load("bahdanau-lstm.int8.emt");
  char config[1024];
  model->describe_config(config, sizeof(config));
  const std::string text = config;
  CHECK(text.find("LSTM, 2 layers") != std::string::npos);
  CHECK(text.find("bidirectional") != std::string::npos);
  std::unique_ptr<Translator> translator;
  REQUIRE(Translator::create(*model, TranslatorOptions(), &translator).is_ok());
  CHECK(std::string(translator->compute_path()).find("own int8 GEMM") != std::string::npos);
  CHECK(std::string(translator->compute_path()).find("RNN cell and attention") != std::string::npos);
}

}  // namespace
}  // namespace edgemt
