// Tokenizer on the bundled model's SentencePiece model: encode appends EOS
// (id 3) when the model asks for it, decode skips pad/bos/eos, English
// sentences round-trip, and the errors: invalid UTF-8 and out-of-range ids
// (kInvalidArgument), a tokenizer blob that is not a usable SentencePiece
// model (kInvalidModel).
#include "edgemt/tokenizer.h"

#include <doctest/doctest.h>

#include <sentencepiece_processor.h>
#include <sys/stat.h>

#include <algorithm>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include "edgemt/model.h"
#include "support/model_builder.h"
#include "support/sentencepiece_builder.h"
#include "models/transformer/config.h"

using namespace edgemt::transformer;  // the family under test

namespace edgemt {
namespace {

using testing::ModelBuilder;
using testing::TempFile;

// The bundled model is committed with the sources: a test that needs it
// fails without it (it used to pass silently).
bool bundled_model_present() {
  struct stat info;
  if (::stat(EDGEMT_BUNDLED_MODEL, &info) == 0) return true;
  MESSAGE("bundled model " EDGEMT_BUNDLED_MODEL " is missing (it is part of the repository)");
  return false;
}

struct Bundled {
  std::unique_ptr<Model> model;
  std::unique_ptr<Tokenizer> tokenizer;
};

Bundled load_bundled() {
  Bundled b;
  const Status loaded = Model::load(EDGEMT_BUNDLED_MODEL, &b.model);
  REQUIRE_MESSAGE(loaded.is_ok(), loaded.message());
  const Status created = Tokenizer::create(*b.model, &b.tokenizer);
  REQUIRE_MESSAGE(created.is_ok(), created.message());
  REQUIRE(b.tokenizer != nullptr);
  return b;
}

bool contains(const Status& status, const char* text) {
  return std::strstr(status.message(), text) != nullptr;
}

TEST_CASE("text/tokenizer: encode gives SentencePiece ids followed by EOS") {
  REQUIRE(bundled_model_present());
  Bundled b = load_bundled();
  REQUIRE(b.model->special_tokens().eos == 3);
  REQUIRE(b.model->append_eos_to_source());

  // Ids as the Python sentencepiece package gives them for this model.
  std::vector<int32_t> ids = {99, 99};  // replaced, not appended to
  REQUIRE(b.tokenizer->encode("Two dogs play in the snow.", &ids).is_ok());
  CHECK(ids == (std::vector<int32_t>{42, 274, 245, 6, 13, 186, 4, 3}));

  REQUIRE(b.tokenizer->encode("", &ids).is_ok());
  CHECK(ids == (std::vector<int32_t>{3}));

  const char* sentences[] = {
      "A man is riding a bicycle down the street.",
      "The girl in the red dress is smiling!",
      "Two young children are playing with a ball in the park.",
  };
  for (const char* sentence : sentences) {
    CAPTURE(std::string(sentence));
    REQUIRE(b.tokenizer->encode(sentence, &ids).is_ok());
    REQUIRE(ids.size() >= 2);
    CHECK(ids.back() == 3);
    for (size_t i = 0; i + 1 < ids.size(); ++i) {
      CHECK(ids[i] > 3);  // no special token inside ordinary text
      CHECK(ids[i] < 8000);
    }
  }
}

TEST_CASE("text/tokenizer: English sentences round-trip through encode and decode") {
  REQUIRE(bundled_model_present());
  Bundled b = load_bundled();
  const char* sentences[] = {
      "A man is riding a bicycle down the street.",
      "Two dogs play in the snow.",
      "The girl in the red dress is smiling!",
      "Hello, world",
      "A woman with a hat sits on a bench and reads a book.",
  };
  for (const char* sentence : sentences) {
    CAPTURE(std::string(sentence));
    std::vector<int32_t> ids;
    REQUIRE(b.tokenizer->encode(sentence, &ids).is_ok());
    std::string text = "stale";
    REQUIRE(b.tokenizer->decode(ids.data(), ids.size(), &text).is_ok());
    CHECK(text == sentence);
  }
}

TEST_CASE("text/tokenizer: decode skips pad bos and eos wherever they are") {
  REQUIRE(bundled_model_present());
  Bundled b = load_bundled();
  const std::vector<int32_t> ids = {2, 42, 0, 274, 245, 3, 6, 13, 2, 186, 4, 3, 0, 0};
  std::string text;
  REQUIRE(b.tokenizer->decode(ids.data(), ids.size(), &text).is_ok());
  CHECK(text == "Two dogs play in the snow.");

  const std::vector<int32_t> only_special = {2, 3, 0};
  REQUIRE(b.tokenizer->decode(only_special.data(), only_special.size(), &text).is_ok());
  CHECK(text.empty());
  REQUIRE(b.tokenizer->decode(nullptr, 0, &text).is_ok());
  CHECK(text.empty());

  // unk is not skipped: SentencePiece renders it as " ⁇ ".
  const std::vector<int32_t> with_unk = {42, 1};
  REQUIRE(b.tokenizer->decode(with_unk.data(), with_unk.size(), &text).is_ok());
  CHECK(text != "Two");
  CHECK(text.rfind("Two", 0) == 0);
}

TEST_CASE("text/tokenizer: invalid UTF-8 input is kInvalidArgument naming the byte") {
  REQUIRE(bundled_model_present());
  Bundled b = load_bundled();
  std::vector<int32_t> ids = {7};
  const std::string bad = std::string("caf\xC3") + "!";  // truncated 2-byte sequence at 3
  const Status status = b.tokenizer->encode(bad, &ids);
  CHECK(status.code() == StatusCode::kInvalidArgument);
  CHECK_MESSAGE(contains(status, "byte 3"), status.message());
  CHECK(ids == (std::vector<int32_t>{7}));  // output untouched on error

  const std::string surrogate = "x\xED\xA0\x80";
  CHECK(b.tokenizer->encode(surrogate, &ids).code() == StatusCode::kInvalidArgument);

  // Valid non-ASCII text is fine (German umlauts, an emoji becomes unk).
  REQUIRE(b.tokenizer->encode("\xC3\x9C" "ber die Br\xC3\xBC" "cke \xF0\x9F\x98\x80", &ids).is_ok());
  CHECK(ids.back() == 3);
}

TEST_CASE("text/tokenizer: decoding an id outside the vocabulary is kInvalidArgument") {
  REQUIRE(bundled_model_present());
  Bundled b = load_bundled();
  std::string text;
  for (int32_t bad : {8000, 123456, -1, -5}) {
    CAPTURE(bad);
    const std::vector<int32_t> ids = {42, bad, 274};
    const Status status = b.tokenizer->decode(ids.data(), ids.size(), &text);
    CHECK(status.code() == StatusCode::kInvalidArgument);
    CHECK_MESSAGE(contains(status, std::to_string(bad).c_str()), status.message());
  }
  const std::vector<int32_t> last = {7999};
  CHECK(b.tokenizer->decode(last.data(), last.size(), &text).is_ok());
}

// Issue 13, defect 8: a corrupt tokenizer blob used to load, pass inspect,
// and fail only when SentencePiece parsed it. The verifier refuses it at load.
TEST_CASE("text/tokenizer: a tokenizer blob that is not SentencePiece is refused at load") {
  ModelBuilder builder;
  builder.tokenizer_model = "not a real sentencepiece model";
  TempFile file(builder.build());
  REQUIRE(file.ok());
  std::unique_ptr<Model> model;
  const Status loaded = Model::load(file.path().c_str(), &model);
  CHECK(loaded.code() == StatusCode::kInvalidModel);
  CHECK_MESSAGE(contains(loaded, "tokenizer model:"), loaded.message());
}

TEST_CASE("text/tokenizer: what the verifier passes but SentencePiece refuses is kInvalidModel") {
  // A duplicate piece: well-formed, but SentencePiece will not load it.
  ModelBuilder builder;
  builder.tokenizer_model = testing::tiny_sentencepiece_model(31) +
                            testing::ProtoWriter()
                                .bytes(1, testing::sentencepiece_piece("a", -1.0f, 1))
                                .data();
  TempFile file(builder.build());
  std::unique_ptr<Model> model;
  const Status loaded = Model::load(file.path().c_str(), &model);
  REQUIRE_MESSAGE(loaded.is_ok(), loaded.message());
  std::unique_ptr<Tokenizer> tokenizer;
  const Status status = Tokenizer::create(*model, &tokenizer);
  CHECK(status.code() == StatusCode::kInvalidModel);
  CHECK_MESSAGE(contains(status, "SentencePiece"), status.message());
  CHECK(tokenizer == nullptr);
}

TEST_CASE("text/tokenizer: the test builder's tokenizer encodes and decodes") {
  ModelBuilder builder;
  TempFile file(builder.build());
  std::unique_ptr<Model> model;
  REQUIRE(Model::load(file.path().c_str(), &model).is_ok());
  std::unique_ptr<Tokenizer> tokenizer;
  REQUIRE(Tokenizer::create(*model, &tokenizer).is_ok());
  std::vector<int32_t> ids;
  REQUIRE(tokenizer->encode("a cab.", &ids).is_ok());
  CHECK(ids.back() == builder.special_tokens.eos);
  for (int32_t id : ids) CHECK((id >= 0 && id < 32));
  std::string text;
  REQUIRE(tokenizer->decode(ids.data(), ids.size(), &text).is_ok());
  CHECK(text == "a cab.");
}

// The two sides share one SentencePiece processor only when their models
// are the same bytes. The target's here is as long as the source's but
// swaps the pieces "a" and "b": each side must spell and decode its own.
TEST_CASE("text/tokenizer: a target SentencePiece model of the same size is its own") {
  ModelBuilder builder;
  std::string target = builder.tokenizer_model;
  // A piece entry: field 1 (the text, 1 byte long), then field 2 (the score).
  const size_t a = target.find(std::string("\x0a\x01" "a" "\x15", 4));
  const size_t b = target.find(std::string("\x0a\x01" "b" "\x15", 4));
  REQUIRE(a != std::string::npos);
  REQUIRE(b != std::string::npos);
  std::swap(target[a + 2], target[b + 2]);
  REQUIRE(target.size() == builder.tokenizer_model.size());
  for (const bool own_target : {false, true}) {
    CAPTURE(own_target);
    ModelBuilder made;
    made.target_tokenizer_model = own_target ? target : made.tokenizer_model;
    TempFile file(made.build());
    std::unique_ptr<Model> model;
    REQUIRE(Model::load(file.path().c_str(), &model).is_ok());
    std::unique_ptr<Tokenizer> tokenizer;
    REQUIRE(Tokenizer::create(*model, &tokenizer).is_ok());
    std::vector<int32_t> ids;
    REQUIRE(tokenizer->encode("a", &ids).is_ok());  // "▁", "a", </s>
    REQUIRE(ids.size() == 3);
    std::string source_piece, target_piece, text;
    REQUIRE(tokenizer->piece(TextSide::kSource, ids[1], &source_piece).is_ok());
    REQUIRE(tokenizer->piece(TextSide::kTarget, ids[1], &target_piece).is_ok());
    REQUIRE(tokenizer->decode(ids.data(), ids.size(), &text).is_ok());
    CHECK(source_piece == "a");
    CHECK(target_piece == (own_target ? "b" : "a"));
    CHECK(text == (own_target ? "b" : "a"));
  }
}

TEST_CASE("text/tokenizer: more SentencePiece pieces than the model vocabulary is refused at load") {
  REQUIRE(bundled_model_present());
  Bundled bundled = load_bundled();
  size_t size = 0;
  const uint8_t* bytes = bundled.model->tokenizer_model(&size);
  ModelBuilder builder;  // vocabulary 32 < 8000 pieces
  builder.tokenizer_model.assign(reinterpret_cast<const char*>(bytes), size);
  TempFile file(builder.build());
  std::unique_ptr<Model> model;
  const Status loaded = Model::load(file.path().c_str(), &model);
  CHECK(loaded.code() == StatusCode::kInvalidModel);
  CHECK_MESSAGE(contains(loaded, "more pieces than the model's 32 vocabulary entries"),
                loaded.message());
}

TEST_CASE("text/tokenizer: no EOS is appended when the model does not want it") {
  REQUIRE(bundled_model_present());
  Bundled bundled = load_bundled();
  size_t size = 0;
  const uint8_t* bytes = bundled.model->tokenizer_model(&size);
  edgemt::transformer::TransformerConfig config = testing::tiny_config();
  config.vocab_size = 8000;
  ModelBuilder builder(config);
  builder.tokenizer_model.assign(reinterpret_cast<const char*>(bytes), size);
  builder.append_eos_to_source = false;
  TempFile file(builder.build());
  std::unique_ptr<Model> model;
  const Status loaded = Model::load(file.path().c_str(), &model);
  REQUIRE_MESSAGE(loaded.is_ok(), loaded.message());
  std::unique_ptr<Tokenizer> tokenizer;
  REQUIRE(Tokenizer::create(*model, &tokenizer).is_ok());
  std::vector<int32_t> ids;
  REQUIRE(tokenizer->encode("Two dogs play in the snow.", &ids).is_ok());
  CHECK(ids == (std::vector<int32_t>{42, 274, 245, 6, 13, 186, 4}));
}

TEST_CASE("text/tokenizer: special token ids come from the model file not SentencePiece") {
  // SentencePiece drops its own control pieces (<pad>, <s>, </s>) when
  // decoding anyway; ids that are ordinary pieces show that the tokenizer
  // skips the model file's pad, bos and eos, and appends the file's eos.
  REQUIRE(bundled_model_present());
  Bundled bundled = load_bundled();
  size_t size = 0;
  const uint8_t* bytes = bundled.model->tokenizer_model(&size);
  edgemt::transformer::TransformerConfig config = testing::tiny_config();
  config.vocab_size = 8000;
  ModelBuilder builder(config);
  builder.tokenizer_model.assign(reinterpret_cast<const char*>(bytes), size);
  builder.special_tokens.pad = 13;  // "the"
  builder.special_tokens.bos = 42;  // "Two"
  builder.special_tokens.eos = 4;   // "."
  builder.special_tokens.decoder_start = 42;
  TempFile file(builder.build());
  std::unique_ptr<Model> model;
  const Status loaded = Model::load(file.path().c_str(), &model);
  REQUIRE_MESSAGE(loaded.is_ok(), loaded.message());
  std::unique_ptr<Tokenizer> tokenizer;
  REQUIRE(Tokenizer::create(*model, &tokenizer).is_ok());

  std::vector<int32_t> ids;
  REQUIRE(tokenizer->encode("Two dogs play in the snow.", &ids).is_ok());
  CHECK(ids == (std::vector<int32_t>{42, 274, 245, 6, 13, 186, 4, 4}));
  std::string text;
  REQUIRE(tokenizer->decode(ids.data(), ids.size(), &text).is_ok());
  CHECK(text == "dogs play in snow");
  // SentencePiece's own control ids are left to SentencePiece (rendered as nothing).
  const std::vector<int32_t> control = {2, 274, 3, 245, 0};
  REQUIRE(tokenizer->decode(control.data(), control.size(), &text).is_ok());
  CHECK(text == "dogs play");
}

// Issue 13, defect 4: the whole of a 50 MB line was tokenized (4 GB of
// SentencePiece memory) before its length was checked. encode() now refuses
// text over max_input_bytes before touching it.
TEST_CASE("text/tokenizer: text longer than max_input_bytes is kOutOfRange before tokenizing") {
  REQUIRE(bundled_model_present());
  std::unique_ptr<Model> model;
  REQUIRE(Model::load(EDGEMT_BUNDLED_MODEL, &model).is_ok());
  TokenizerOptions options;
  options.max_input_bytes = 100;
  std::unique_ptr<Tokenizer> tokenizer;
  REQUIRE(Tokenizer::create(*model, options, &tokenizer).is_ok());
  std::vector<int32_t> ids;
  CHECK(tokenizer->encode(std::string(100, 'a'), &ids).is_ok());
  const Status status = tokenizer->encode(std::string(101, 'a'), &ids);
  CHECK(status.code() == StatusCode::kOutOfRange);
  CHECK_MESSAGE(contains(status, "input has 101 bytes, more than the limit of 100"),
                status.message());
  // The default is kDefaultMaxInputBytes; 50 MB is refused at once.
  std::unique_ptr<Tokenizer> by_default;
  REQUIRE(Tokenizer::create(*model, &by_default).is_ok());
  CHECK(by_default->encode(std::string(kDefaultMaxInputBytes, 'a'), &ids).is_ok());
  CHECK(by_default->encode(std::string(50u << 20, 'a'), &ids).code() == StatusCode::kOutOfRange);
  for (size_t bad : {size_t{0}, kMaxInputBytes + 1}) {
    options.max_input_bytes = bad;
    CHECK(Tokenizer::create(*model, options, &tokenizer).code() == StatusCode::kInvalidArgument);
  }
}

// Format 3: a model with piece vocabularies of its own (OpenNMT-py, Marian):
// the bundled model's SentencePiece model cuts the text, but the model's ids
// are a different numbering of its pieces (reversed here), one piece is
// missing (it becomes unk) and two target-language tokens follow. The
// bundled tokenizer (SentencePiece ids) is the reference.
struct PieceVocabulary {
  std::unique_ptr<TempFile> file;
  std::unique_ptr<Model> model;
  std::unique_ptr<Tokenizer> tokenizer;
  size_t spm_pieces = 0;
  int32_t missing_spm_id = 0;  // the piece the vocabulary lacks
};

PieceVocabulary make_piece_vocabulary(const Model& bundled) {
  size_t size = 0;
  const uint8_t* bytes = bundled.tokenizer_model(&size);
  sentencepiece::SentencePieceProcessor spm;
  REQUIRE(spm.LoadFromSerializedProto(
                 std::string_view(reinterpret_cast<const char*>(bytes), size))
              .ok());
  PieceVocabulary v;
  v.spm_pieces = static_cast<size_t>(spm.GetPieceSize());
  v.missing_spm_id = spm.PieceToId("\xe2\x96\x81Two");  // "▁Two"
  REQUIRE(v.missing_spm_id > 3);
  std::vector<std::string> pieces;
  for (size_t i = 0; i < v.spm_pieces; ++i) {
    const int id = static_cast<int>(v.spm_pieces - 1 - i);  // reversed
    pieces.push_back(id == v.missing_spm_id ? "<not-a-piece>" : spm.IdToPiece(id));
  }
  pieces.push_back(">>fra<<");
  pieces.push_back(">>deu<<");
  TransformerConfig config = testing::tiny_config();
  config.vocab_size = static_cast<uint32_t>(pieces.size());
  ModelBuilder builder(config);
  builder.tokenizer_model.assign(reinterpret_cast<const char*>(bytes), size);
  auto reversed = [&](int spm_id) { return static_cast<int32_t>(v.spm_pieces - 1) - spm_id; };
  builder.special_tokens.pad = reversed(spm.pad_id());
  builder.special_tokens.unk = reversed(spm.unk_id());
  builder.special_tokens.bos = reversed(spm.bos_id());
  builder.special_tokens.eos = reversed(spm.eos_id());
  builder.special_tokens.decoder_start = builder.special_tokens.bos;
  builder.source_pieces = pieces;
  builder.target_pieces = pieces;
  v.file = std::make_unique<TempFile>(builder.build());
  REQUIRE(v.file->ok());
  const Status loaded = Model::load(v.file->path().c_str(), &v.model);
  REQUIRE_MESSAGE(loaded.is_ok(), loaded.message());
  const Status created = Tokenizer::create(*v.model, &v.tokenizer);
  REQUIRE_MESSAGE(created.is_ok(), created.message());
  return v;
}

TEST_CASE("text/tokenizer: a piece vocabulary maps pieces by string, unknown ones to unk") {
  REQUIRE(bundled_model_present());
  Bundled b = load_bundled();
  PieceVocabulary v = make_piece_vocabulary(*b.model);
  const int32_t last = static_cast<int32_t>(v.spm_pieces - 1);
  const char* sentences[] = {"Two dogs play in the snow.", "A man is riding a bicycle.",
                             "Zwei Hunde spielen im Schnee."};
  for (const char* sentence : sentences) {
    CAPTURE(std::string(sentence));
    std::vector<int32_t> spm_ids;
    std::vector<int32_t> ids;
    REQUIRE(b.tokenizer->encode(sentence, &spm_ids).is_ok());
    REQUIRE(v.tokenizer->encode(sentence, &ids).is_ok());
    REQUIRE(ids.size() == spm_ids.size());
    for (size_t i = 0; i < ids.size(); ++i) {
      const int32_t want = spm_ids[i] == v.missing_spm_id ? v.model->unk_id(TextSide::kSource)
                                                          : last - spm_ids[i];
      CHECK(ids[i] == want);
    }
    CHECK(ids.back() == v.model->eos_id(TextSide::kSource));
    // Decoding the reversed ids gives the bundled tokenizer's text.
    std::vector<int32_t> body(spm_ids.begin(), spm_ids.end() - 1);
    body.erase(std::remove(body.begin(), body.end(), v.missing_spm_id), body.end());
    std::vector<int32_t> mapped;
    for (int32_t id : body) mapped.push_back(last - id);
    std::string want_text;
    std::string text;
    REQUIRE(b.tokenizer->decode(body.data(), body.size(), &want_text).is_ok());
    REQUIRE(v.tokenizer->decode(mapped.data(), mapped.size(), &text).is_ok());
    CHECK(text == want_text);
  }
  std::string text;
  const int32_t outside = static_cast<int32_t>(v.spm_pieces + 2);
  CHECK(v.tokenizer->decode(&outside, 1, &text).code() == StatusCode::kInvalidArgument);
}

TEST_CASE("text/tokenizer: target-language tokens of a piece vocabulary") {
  REQUIRE(bundled_model_present());
  Bundled b = load_bundled();
  PieceVocabulary v = make_piece_vocabulary(*b.model);
  int32_t id = -1;
  REQUIRE(v.tokenizer->piece_id(">>fra<<", &id).is_ok());
  CHECK(id == static_cast<int32_t>(v.spm_pieces));
  REQUIRE(v.tokenizer->piece_id(">>deu<<", &id).is_ok());
  CHECK(id == static_cast<int32_t>(v.spm_pieces + 1));
  const Status missing = v.tokenizer->piece_id(">>ita<<", &id);
  CHECK(missing.code() == StatusCode::kInvalidArgument);
  CHECK(contains(missing, "no piece '>>ita<<'"));
  CHECK(v.tokenizer->target_language_tokens() == std::vector<std::string>{">>fra<<", ">>deu<<"});
  CHECK(b.tokenizer->target_language_tokens().empty());
}

TEST_CASE("text/tokenizer: piece spells ids of SentencePiece and of a piece vocabulary") {
  REQUIRE(bundled_model_present());
  Bundled b = load_bundled();
  std::vector<int32_t> ids;
  REQUIRE(b.tokenizer->encode("Two dogs", &ids).is_ok());
  std::string joined;
  for (int32_t id : ids) {
    std::string piece;
    REQUIRE(b.tokenizer->piece(TextSide::kSource, id, &piece).is_ok());
    joined += piece + "|";
  }
  CHECK(joined == "\xe2\x96\x81" "Two|\xe2\x96\x81" "dogs|</s>|");
  std::string piece;
  REQUIRE(b.tokenizer->piece(TextSide::kTarget, 3, &piece).is_ok());
  CHECK(piece == "</s>");
  const Status outside = b.tokenizer->piece(TextSide::kTarget, 8000, &piece);
  CHECK(outside.code() == StatusCode::kInvalidArgument);
  CHECK(contains(outside, "outside the target vocabulary (8000 pieces)"));
  CHECK(b.tokenizer->piece(TextSide::kSource, -1, &piece).code() == StatusCode::kInvalidArgument);

  PieceVocabulary v = make_piece_vocabulary(*b.model);
  REQUIRE(v.tokenizer->piece(TextSide::kSource, static_cast<int32_t>(v.spm_pieces), &piece).is_ok());
  CHECK(piece == ">>fra<<");
  REQUIRE(v.tokenizer->piece(TextSide::kTarget, 0, &piece).is_ok());  // reversed: the last spm piece
  CHECK(piece != "");
  CHECK(v.tokenizer->piece(TextSide::kTarget, static_cast<int32_t>(v.spm_pieces + 2), &piece).code() ==
        StatusCode::kInvalidArgument);
}

}  // namespace
}  // namespace edgemt
