// Fuzz target: the embedded SentencePiece model, alone.
//
// Arbitrary bytes go to verify_sentencepiece_model (the check a model file's
// tokenizer gets at load). Whatever it accepts is handed to SentencePiece
// itself, which loads it and encodes and decodes a few texts (fixed ones
// that exercise normalization, and one taken from the input): accepting a
// model SentencePiece then reads out of bounds on shows up as a crash. The
// verifier's own reads are checked by ASan and UBSan.
//
// Seeds: tests/fuzz/corpus/sentencepiece_model/ (a model written by the
// test builder, and a tiny trained one with a precompiled charsmap).
#include <sentencepiece_processor.h>

#include <string>
#include <string_view>
#include <vector>

#include "format/sentencepiece_verifier.h"
#include "fuzz_check.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  // The vocabulary the model file would declare: large enough for any seed.
  constexpr uint32_t kVocabulary = 4096;
  const edgemt::Status status = edgemt::verify_sentencepiece_model(data, size, kVocabulary);
  if (!status.is_ok()) {
    FUZZ_CHECK(status.code() == edgemt::StatusCode::kInvalidModel);
    return 0;
  }
  sentencepiece::SentencePieceProcessor processor;
  const std::string_view proto(reinterpret_cast<const char*>(data), size);
  if (!processor.LoadFromSerializedProto(proto).ok()) return 0;
  FUZZ_CHECK(processor.GetPieceSize() <= static_cast<int>(kVocabulary));
  const std::string texts[] = {
      "A dog runs in the snow.", "ＡＢＣ ﬁne e\xcc\x81 \xe3\x80\x80 spaces  ",
      std::string(proto.substr(0, proto.size() < 64 ? proto.size() : 64))};
  for (const std::string& text : texts) {
    std::vector<int> ids;
    if (!processor.Encode(text, &ids).ok()) continue;
    for (int id : ids) FUZZ_CHECK(id >= 0 && id < processor.GetPieceSize());
    std::string decoded;
    (void)processor.Decode(ids, &decoded);
  }
  return 0;
}
