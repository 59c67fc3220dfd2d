// config.cc: the RNN config's checks and description. (Whole files go
// through the verifier in tests/runtime/models/rnn/rnn_test.cc.)
#include "models/rnn/config.h"

#include <doctest/doctest.h>

#include <cstring>
#include <string>

#include "edgemt/limits.h"

using namespace edgemt::rnn;  // the family under test

namespace edgemt {
namespace {

RnnConfig luong() {
  RnnConfig c;
  c.layers = 2;
  c.source_embedding_dim = 8;
  c.target_embedding_dim = 6;
  c.hidden = 10;
  c.vocab_size = 40;
  c.max_positions = 32;
  return c;
}

RnnConfig bahdanau() {
  RnnConfig c = luong();
  c.bidirectional_encoder = true;
  c.score = RnnScore::kAdditive;
  c.query = RnnQuery::kPrevious;
  c.decoder_input = RnnDecoderInput::kEmbeddingContext;
  c.output = RnnOutput::kStateContext;
  return c;
}

bool fails_naming(const RnnConfig& c, const char* fragment) {
  const Status status = verify_rnn_config(c);
  return status.code() == StatusCode::kInvalidModel && std::strstr(status.message(), fragment) != nullptr;
}

TEST_CASE("models/rnn/config: the limits bound every field") {
  CHECK(verify_rnn_config(luong()).is_ok());
  CHECK(verify_rnn_config(bahdanau()).is_ok());
  RnnConfig c = luong();
  c.layers = kMaxRnnLayers + 1;
  CHECK(fails_naming(c, "config.layers"));
  c = luong();
  c.hidden = 0;
  CHECK(fails_naming(c, "config.hidden"));
  c = luong();
  c.target_embedding_dim = kMaxRnnEmbeddingDim + 1;
  CHECK(fails_naming(c, "config.target_embedding_dim"));
  c = luong();
  c.vocab_size = kMaxVocabSize + 1;
  CHECK(fails_naming(c, "config.vocab_size"));
  c = luong();
  c.max_positions = 0;
  CHECK(fails_naming(c, "config.max_positions"));
  c = luong();
  c.source_vocab_size = kMaxVocabSize + 1;
  CHECK(fails_naming(c, "config.source_vocab_size"));
}

TEST_CASE("models/rnn/config: contradictory choices are refused") {
  RnnConfig c = bahdanau();
  c.hidden = 9;  // two directions of hidden/2
  CHECK(fails_naming(c, "must be even"));
  c = luong();
  c.query_bias = true;  // only additive scores have a query projection
  CHECK(fails_naming(c, "query_bias"));
  c = bahdanau();
  c.combine_bias = true;  // StateContext has no combine
  CHECK(fails_naming(c, "combine_bias"));
  c = luong();
  c.query = RnnQuery::kPrevious;  // a previous-state query feeds the step
  CHECK(fails_naming(c, "query Previous"));
  c = bahdanau();
  c.query = RnnQuery::kCurrent;
  CHECK(fails_naming(c, "query Previous"));
  c = bahdanau();
  c.decoder_input = RnnDecoderInput::kEmbeddingInputFeed;
  CHECK(fails_naming(c, "query Previous"));
  c = luong();
  c.decoder_input = RnnDecoderInput::kEmbeddingInputFeed;
  CHECK(verify_rnn_config(c).is_ok());
  c.output = RnnOutput::kStateContext;  // input feed needs an attentional vector
  CHECK(fails_naming(c, "EmbeddingInputFeed"));
}

TEST_CASE("models/rnn/config: derived sizes and description") {
  const RnnConfig l = luong();
  CHECK(rnn_gates(l) == 4);
  CHECK(rnn_encoder_units(l) == 10);
  CHECK(rnn_decoder_input_dim(l) == 6);
  CHECK(rnn_output_input_dim(l) == 10);
  CHECK(source_vocab_size(l) == 40);
  RnnConfig b = bahdanau();
  b.cell = RnnCell::kGru;
  CHECK(rnn_gates(b) == 3);
  CHECK(rnn_encoder_units(b) == 5);
  CHECK(rnn_decoder_input_dim(b) == 16);
  CHECK(rnn_output_input_dim(b) == 20);
  char text[1024];
  describe_config(b, text, sizeof(text));
  const std::string described = text;
  CHECK(described.find("GRU, 2 layers, hidden 10") != std::string::npos);
  CHECK(described.find("bidirectional") != std::string::npos);
  CHECK(described.find("additive score") != std::string::npos);
  CHECK(described.find("previous decoder state") != std::string::npos);
  CHECK(described.find("W_o [state; context]") != std::string::npos);
}

}  // namespace
}  // namespace edgemt
