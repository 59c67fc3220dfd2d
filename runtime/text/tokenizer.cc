#include "edgemt/tokenizer.h"

#include <sentencepiece_processor.h>

#include <exception>
#include <new>

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

}  // namespace

struct Tokenizer::Impl {
  sentencepiece::SentencePieceProcessor processor;
  SpecialTokens special;
  bool append_eos = true;
  int vocab = 0;
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
  size_t size = 0;
  const uint8_t* bytes = model.tokenizer_model(&size);
  if (bytes == nullptr || size == 0) {
    return Status::error(StatusCode::kInvalidModel, "the model file has no SentencePiece model");
  }
  std::unique_ptr<Impl> impl(new (std::nothrow) Impl);
  if (!impl) return Status::error(StatusCode::kOutOfMemory, "cannot allocate the tokenizer");
  EDGEMT_RETURN_IF_ERROR(call_sentencepiece(
      StatusCode::kInvalidModel, "cannot read the SentencePiece model", [&] {
        return impl->processor.LoadFromSerializedProto(
            std::string_view(reinterpret_cast<const char*>(bytes), size));
      }));
  impl->vocab = impl->processor.GetPieceSize();
  if (static_cast<uint32_t>(impl->vocab) > model.vocab_size()) {
    return Status::error(StatusCode::kInvalidModel,
                         "SentencePiece model has %d pieces but the model vocabulary is %u",
                         impl->vocab, model.vocab_size());
  }
  impl->special = model.special_tokens();
  impl->append_eos = model.append_eos_to_source();
  impl->max_input_bytes = options.max_input_bytes;
  out->reset(new Tokenizer(impl.release()));
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
  std::vector<int> pieces;
  EDGEMT_RETURN_IF_ERROR(call_sentencepiece(StatusCode::kInvalidArgument, "tokenization failed",
                                            [&] { return impl_->processor.Encode(text, &pieces); }));
  ids->assign(pieces.begin(), pieces.end());
  if (impl_->append_eos) ids->push_back(impl_->special.eos);
  return Status::ok();
}

Status Tokenizer::decode(const int32_t* ids, size_t count, std::string* text) const {
  std::vector<int> pieces;
  pieces.reserve(count);
  for (size_t i = 0; i < count; ++i) {
    const int32_t id = ids[i];
    if (id == impl_->special.pad || id == impl_->special.bos || id == impl_->special.eos) continue;
    if (id < 0 || id >= impl_->vocab) {
      return Status::error(StatusCode::kInvalidArgument, "token id %d is outside the tokenizer's %d pieces",
                           id, impl_->vocab);
    }
    pieces.push_back(id);
  }
  return call_sentencepiece(StatusCode::kInvalidArgument, "detokenization failed",
                            [&] { return impl_->processor.Decode(pieces, text); });
}

}  // namespace edgemt
