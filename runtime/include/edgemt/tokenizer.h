// Tokenizer: source text -> source ids and target ids -> target text, with
// the SentencePiece model(s) stored in the model file: one for both sides or
// one per side. Where the file holds a side's piece vocabulary (models
// converted from OpenNMT-py or Marian), text is cut into pieces and each
// piece is looked up by string (unknown: that side's unk id), and target ids
// become pieces again for detokenizing; otherwise SentencePiece ids are the
// model's ids. Part of the edgemt_text library, above the core: it allocates
// (std::string, std::vector) and is not for the allocation-free path.
// Firmware that tokenizes elsewhere links edgemt_core alone.
//
// Thread-safety: encode/decode are const and may be called concurrently.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "edgemt/limits.h"
#include "edgemt/model.h"
#include "edgemt/status.h"
#include "edgemt/utf8.h"  // is_valid_utf8, which encode() applies

namespace edgemt {

struct TokenizerOptions {
  // encode() refuses longer text before tokenizing it: SentencePiece needs
  // ~80 bytes of memory per input byte, so this bounds the memory a line can
  // take (a 50 MB line once took 4 GB). At most kMaxInputBytes.
  size_t max_input_bytes = kDefaultMaxInputBytes;
};

class Tokenizer {
 public:
  // Errors: kInvalidModel (no or unreadable SentencePiece model),
  // kInvalidArgument (max_input_bytes 0 or above kMaxInputBytes).
  [[nodiscard]] static Status create(const Model& model, std::unique_ptr<Tokenizer>* out);
  [[nodiscard]] static Status create(const Model& model, const TokenizerOptions& options,
                                     std::unique_ptr<Tokenizer>* out);
  ~Tokenizer();

  // Source ids for `text` (EOS appended when the model wants it). Errors:
  // kOutOfRange for text longer than max_input_bytes (checked first, so
  // memory stays bounded), kInvalidArgument for text that is not valid UTF-8.
  [[nodiscard]] Status encode(std::string_view text, std::vector<int32_t>* ids) const;

  // Text of target ids; special tokens (pad, bos, eos) are skipped.
  [[nodiscard]] Status decode(const int32_t* ids, size_t count, std::string* text) const;

  // The source id of one whole piece of the source vocabulary, such as a
  // target-language token ">>fra<<" that multi-target models expect first
  // in the source. kInvalidArgument when the vocabulary has no such piece.
  [[nodiscard]] Status piece_id(std::string_view piece, int32_t* id) const;

  // The piece of `id` on `side` as the side's vocabulary spells it ("▁Hund",
  // "</s>", ">>fra<<"): for token lists and attention labels.
  // kInvalidArgument for an id outside the side's vocabulary.
  [[nodiscard]] Status piece(TextSide side, int32_t id, std::string* piece) const;

  // The source vocabulary's target-language tokens (pieces ">>xx<<"), in id
  // order: empty for a single-target model.
  std::vector<std::string> target_language_tokens() const;

  struct Impl;

 private:
  explicit Tokenizer(Impl* impl);
  Impl* impl_;
};

}  // namespace edgemt
