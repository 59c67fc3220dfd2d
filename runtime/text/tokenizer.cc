#include "edgemt/tokenizer.h"

#include <sentencepiece_processor.h>

#include <cstring>
#include <exception>
#include <memory>
#include <new>
#include <unordered_map>
#include <utility>

namespace edgemt {
namespace {

// Runs one SentencePiece call, turning both of its ways to fail into a
// Status: a returned error status, and an exception. It throws on some
// input it does not check (its trie library, on keys it cannot hold; the
// verifier refuses the ones known) and when allocation fails; nothing may
// be thrown out of the text library, whose callers build without
// exceptions (an escaping one ends the process).
template <typename Call>
Status call_sentencepiece(StatusCode code, const char* what, Call&& call) {
  try {
    const sentencepiece::util::Status status = call();
    if (status.ok()) return Status::ok();
    return Status::error(code, "%s: %s", what, status.ToString().c_str());
  } catch (const std::bad_alloc&) {
    return Status::error(StatusCode::kOutOfMemory, "%s: out of memory", what);
  } catch (const std::exception& error) {
    return Status::error(code, "%s: %s", what, error.what());
  } catch (...) {
    return Status::error(code, "%s: an unknown exception", what);
  }
}

// Runs `body` (which may allocate), turning an exception into a Status.
template <typename Body>
Status guarded(const char* what, Body&& body) {
  try {
    return body();
  } catch (const std::bad_alloc&) {
    return Status::error(StatusCode::kOutOfMemory, "%s: out of memory", what);
  } catch (...) {
    return Status::error(StatusCode::kInvalidModel, "%s: an unexpected exception", what);
  }
}

bool is_target_language_token(std::string_view piece) {
  return piece.size() > 4 && piece.substr(0, 2) == ">>" && piece.substr(piece.size() - 2) == "<<";
}

}  // namespace

// One side: its SentencePiece model and, when the file has one, its piece
// vocabulary (model id -> piece, and piece -> lowest model id).
struct TokenizerSide {
  // Both sides share one processor when their SentencePiece models are the
  // same bytes (one vocabulary for both languages, as in most Marian and
  // Firefox models): loading Firefox's 32,000-piece model takes ~25 ms, a
  // fifth of a short `edgemt translate` run. Its calls are all const.
  std::shared_ptr<sentencepiece::SentencePieceProcessor> processor;
  std::vector<std::string> pieces;                  // [vocab] or empty
  std::unordered_map<std::string, int32_t> by_piece;  // piece -> id; the source side's only
  int32_t unk = 0;
  int32_t eos = 0;
  size_t ids = 0;  // ids this side can hold: pieces, or SentencePiece's own count

  // `loaded`: the other side's processor when it holds this side's model
  // (nullptr: this side loads its own).
  Status load(const Model& model, TextSide side, const char* name,
              std::shared_ptr<sentencepiece::SentencePieceProcessor> loaded) {
    size_t size = 0;
    const uint8_t* bytes = model.tokenizer_model(side, &size);
    if (bytes == nullptr || size == 0) {
      return Status::error(StatusCode::kInvalidModel, "the model file has no %s SentencePiece model",
                           name);
    }
    if (loaded != nullptr) {
      processor = std::move(loaded);
    } else {
      EDGEMT_RETURN_IF_ERROR(guarded("the SentencePiece model", [&] {
        processor = std::make_shared<sentencepiece::SentencePieceProcessor>();
        return Status::ok();
      }));
      EDGEMT_RETURN_IF_ERROR(call_sentencepiece(
          StatusCode::kInvalidModel, "cannot read the SentencePiece model", [&] {
            return processor->LoadFromSerializedProto(
                std::string_view(reinterpret_cast<const char*>(bytes), size));
          }));
    }
    unk = model.unk_id(side);
    eos = model.eos_id(side);
    const size_t count = model.vocabulary_size(side);
    const uint32_t vocab = side == TextSide::kSource ? model.source_vocab_size() : model.vocab_size();
    if (count == 0) {
      ids = static_cast<size_t>(processor->GetPieceSize());
      if (ids > vocab) {
        return Status::error(StatusCode::kInvalidModel,
                             "%s SentencePiece model has %zu pieces but the model vocabulary is %u",
                             name, ids, vocab);
      }
      return Status::ok();
    }
    // Only text is looked up by piece (encode, piece_id): a map for the
    // target side would be 32,000 allocations nothing reads.
    const bool indexed = side == TextSide::kSource;
    return guarded("loading the vocabulary", [&] {
      pieces.reserve(count);
      if (indexed) by_piece.reserve(count);
      for (size_t id = 0; id < count; ++id) {
        size_t length = 0;
        const char* piece = model.vocabulary_piece(side, id, &length);
        pieces.emplace_back(piece, length);
        if (indexed) by_piece.emplace(pieces.back(), static_cast<int32_t>(id));  // keeps the lowest id
      }
      ids = count;
      return Status::ok();
    });
  }
};

namespace {

// Whether the two sides' SentencePiece models are the same bytes.
bool same_sentencepiece_models(const Model& model) {
  size_t source_size = 0;
  size_t target_size = 0;
  const uint8_t* source = model.tokenizer_model(TextSide::kSource, &source_size);
  const uint8_t* target = model.tokenizer_model(TextSide::kTarget, &target_size);
  return source != nullptr && target != nullptr && source_size == target_size &&
         (source == target || std::memcmp(source, target, source_size) == 0);
}

}  // namespace

struct Tokenizer::Impl {
  TokenizerSide source;
  TokenizerSide target;
  SpecialTokens special;
  bool append_eos = true;
  size_t max_input_bytes = kDefaultMaxInputBytes;
};

Tokenizer::Tokenizer(Impl* impl) : impl_(impl) {}
Tokenizer::~Tokenizer() { delete impl_; }

Status Tokenizer::create(const Model& model, std::unique_ptr<Tokenizer>* out) {
  return create(model, TokenizerOptions(), out);
}

Status Tokenizer::create(const Model& model, const TokenizerOptions& options,
                         std::unique_ptr<Tokenizer>* out) {
  if (options.max_input_bytes == 0 || options.max_input_bytes > kMaxInputBytes) {
    return Status::error(StatusCode::kInvalidArgument,
                         "max_input_bytes must be in [1, %zu], got %zu", kMaxInputBytes,
                         options.max_input_bytes);
  }
  std::unique_ptr<Impl> impl(new (std::nothrow) Impl);
  if (!impl) return Status::error(StatusCode::kOutOfMemory, "cannot allocate the tokenizer");
  EDGEMT_RETURN_IF_ERROR(impl->source.load(model, TextSide::kSource, "source", nullptr));
  EDGEMT_RETURN_IF_ERROR(impl->target.load(
      model, TextSide::kTarget, "target",
      same_sentencepiece_models(model) ? impl->source.processor : nullptr));
  impl->special = model.special_tokens();
  impl->append_eos = model.append_eos_to_source();
  impl->max_input_bytes = options.max_input_bytes;
  out->reset(new (std::nothrow) Tokenizer(impl.get()));
  if (!*out) return Status::error(StatusCode::kOutOfMemory, "cannot allocate the tokenizer");
  impl.release();
  return Status::ok();
}

Status Tokenizer::encode(std::string_view text, std::vector<int32_t>* ids) const {
  if (text.size() > impl_->max_input_bytes) {
    return Status::error(StatusCode::kOutOfRange, "input has %zu bytes, more than the limit of %zu",
                         text.size(), impl_->max_input_bytes);
  }
  size_t bad = 0;
  if (!is_valid_utf8(text, &bad)) {
    return Status::error(StatusCode::kInvalidArgument, "input is not valid UTF-8 (byte %zu)", bad);
  }
  const TokenizerSide& side = impl_->source;
  if (side.pieces.empty()) {
    std::vector<int> pieces;
    EDGEMT_RETURN_IF_ERROR(call_sentencepiece(StatusCode::kInvalidArgument, "tokenization failed",
                                              [&] { return side.processor->Encode(text, &pieces); }));
    ids->assign(pieces.begin(), pieces.end());
  } else {
    std::vector<std::string> pieces;
    EDGEMT_RETURN_IF_ERROR(call_sentencepiece(StatusCode::kInvalidArgument, "tokenization failed",
                                              [&] { return side.processor->Encode(text, &pieces); }));
    ids->clear();
    ids->reserve(pieces.size() + 1);
    for (const std::string& piece : pieces) {
      const auto found = side.by_piece.find(piece);
      ids->push_back(found != side.by_piece.end() ? found->second : side.unk);
    }
  }
  if (impl_->append_eos) ids->push_back(side.eos);
  return Status::ok();
}

Status Tokenizer::decode(const int32_t* ids, size_t count, std::string* text) const {
  const TokenizerSide& side = impl_->target;
  const SpecialTokens& special = impl_->special;
  auto skipped = [&](int32_t id) {
    return id == special.pad || id == special.bos || id == special.eos || id == side.eos;
  };
  auto check = [&](int32_t id) {
    if (id < 0 || static_cast<size_t>(id) >= side.ids) {
      return Status::error(StatusCode::kInvalidArgument,
                           "token id %d is outside the target vocabulary's %zu ids", id, side.ids);
    }
    return Status::ok();
  };
  if (side.pieces.empty()) {
    std::vector<int> pieces;
    pieces.reserve(count);
    for (size_t i = 0; i < count; ++i) {
      if (skipped(ids[i])) continue;
      EDGEMT_RETURN_IF_ERROR(check(ids[i]));
      pieces.push_back(ids[i]);
    }
    return call_sentencepiece(StatusCode::kInvalidArgument, "detokenization failed",
                              [&] { return side.processor->Decode(pieces, text); });
  }
  std::vector<std::string> pieces;
  pieces.reserve(count);
  for (size_t i = 0; i < count; ++i) {
    if (skipped(ids[i])) continue;
    EDGEMT_RETURN_IF_ERROR(check(ids[i]));
    pieces.push_back(side.pieces[static_cast<size_t>(ids[i])]);
  }
  return call_sentencepiece(StatusCode::kInvalidArgument, "detokenization failed",
                            [&] { return side.processor->Decode(pieces, text); });
}

Status Tokenizer::piece_id(std::string_view piece, int32_t* id) const {
  const TokenizerSide& side = impl_->source;
  if (!side.pieces.empty()) {
    const auto found = side.by_piece.find(std::string(piece));
    if (found != side.by_piece.end()) {
      *id = found->second;
      return Status::ok();
    }
  } else {
    const int found = side.processor->PieceToId(piece);
    if (found != side.processor->unk_id() || piece == side.processor->IdToPiece(found)) {
      *id = found;
      return Status::ok();
    }
  }
  return Status::error(StatusCode::kInvalidArgument, "the source vocabulary has no piece '%.*s'",
                       static_cast<int>(piece.size()), piece.data());
}

Status Tokenizer::piece(TextSide side_id, int32_t id, std::string* piece) const {
  const TokenizerSide& side = side_id == TextSide::kSource ? impl_->source : impl_->target;
  if (id < 0 || static_cast<size_t>(id) >= side.ids) {
    return Status::error(StatusCode::kInvalidArgument, "id %d is outside the %s vocabulary (%zu pieces)",
                         id, side_id == TextSide::kSource ? "source" : "target", side.ids);
  }
  if (!side.pieces.empty()) {
    *piece = side.pieces[static_cast<size_t>(id)];
    return Status::ok();
  }
  return guarded("spelling a piece", [&] {
    *piece = side.processor->IdToPiece(id);
    return Status::ok();
  });
}

std::vector<std::string> Tokenizer::target_language_tokens() const {
  std::vector<std::string> tokens;
  const TokenizerSide& side = impl_->source;
  if (!side.pieces.empty()) {
    for (const std::string& piece : side.pieces) {
      if (is_target_language_token(piece)) tokens.push_back(piece);
    }
  } else {
    for (int id = 0; id < side.processor->GetPieceSize(); ++id) {
      const std::string& piece = side.processor->IdToPiece(id);
      if (is_target_language_token(piece)) tokens.push_back(piece);
    }
  }
  return tokens;
}

}  // namespace edgemt
