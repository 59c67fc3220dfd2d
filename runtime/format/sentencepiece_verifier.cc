#include "format/sentencepiece_verifier.h"

#include <cmath>
#include <cstdarg>
#include <cstdio>
#include <cstring>
#include <memory>
#include <new>
#include <string_view>

#include "edgemt/limits.h"
#include "edgemt/utf8.h"
#include "format/protobuf_reader.h"

namespace edgemt {
namespace {

// Field numbers of sentencepiece_model.proto (SentencePiece 0.1.x).
constexpr uint32_t kModelPieces = 1;
constexpr uint32_t kModelTrainerSpec = 2;
constexpr uint32_t kModelNormalizerSpec = 3;
constexpr uint32_t kModelDenormalizerSpec = 5;
constexpr uint32_t kPieceText = 1;
constexpr uint32_t kPieceScore = 2;
constexpr uint32_t kPieceType = 3;
constexpr uint32_t kTrainerModelType = 3;
constexpr uint32_t kTrainerUnkSurface = 44;
constexpr uint32_t kNormalizerCharsmap = 2;

constexpr uint64_t kPieceTypeUnknown = 2;  // NORMAL 1 ... BYTE 6
constexpr uint64_t kMaxPieceType = 6;
constexpr uint64_t kMaxModelType = 4;      // UNIGRAM 1, BPE 2, WORD 3, CHAR 4
constexpr uint32_t kMaxTrieResults = 32;   // Normalizer::kMaxTrieResultsSize

constexpr uint8_t kVarint = 0;
constexpr uint8_t kFixed32 = 5;
constexpr uint8_t kLengthDelimited = 2;

Status invalid(const char* format, ...) __attribute__((format(printf, 1, 2)));

Status invalid(const char* format, ...) {
  char message[Status::kMessageCapacity];
  va_list args;
  va_start(args, format);
  std::vsnprintf(message, sizeof(message), format, args);
  va_end(args);
  return Status::error(StatusCode::kInvalidModel, "tokenizer model: %s", message);
}

Status malformed(const ProtobufReader& reader, const char* where) {
  return invalid("malformed protobuf in %s: %s", where, reader.error());
}

bool valid_utf8(const uint8_t* bytes, size_t length) {
  return is_valid_utf8(std::string_view(reinterpret_cast<const char*>(bytes), length), nullptr);
}

// ---- Pieces and trainer spec ------------------------------------------------

Status check_piece(const uint8_t* bytes, size_t length, uint32_t index, bool* unknown) {
  ProtobufReader reader(bytes, length);
  ProtobufField field;
  bool has_text = false;
  *unknown = false;
  while (reader.next(&field)) {
    if (field.number == kPieceText && field.wire_type == kLengthDelimited) {
      if (field.length == 0) return invalid("piece %u is empty", index);
      if (!valid_utf8(field.bytes, field.length)) return invalid("piece %u is not valid UTF-8", index);
      // SentencePiece puts pieces into a Darts-clone trie as C strings: a NUL
      // makes it throw ("zero-length key", "wrong key order"), which ends
      // the process (found by the sentencepiece_model fuzzer).
      if (std::memchr(field.bytes, 0, field.length) != nullptr) {
        return invalid("piece %u contains a NUL byte", index);
      }
      has_text = true;
    } else if (field.number == kPieceScore && field.wire_type == kFixed32) {
      float score;
      const uint32_t bits = static_cast<uint32_t>(field.value);
      std::memcpy(&score, &bits, sizeof(score));
      if (!std::isfinite(score)) return invalid("piece %u has a non-finite score", index);
    } else if (field.number == kPieceType && field.wire_type == kVarint) {
      if (field.value < 1 || field.value > kMaxPieceType) {
        return invalid("piece %u has unknown type %llu", index,
                       static_cast<unsigned long long>(field.value));
      }
      *unknown = field.value == kPieceTypeUnknown;
    }
  }
  if (reader.failed()) return malformed(reader, "a piece");
  if (!has_text) return invalid("piece %u has no text", index);
  return Status::ok();
}

Status check_trainer_spec(const uint8_t* bytes, size_t length) {
  ProtobufReader reader(bytes, length);
  ProtobufField field;
  while (reader.next(&field)) {
    if (field.number == kTrainerModelType && field.wire_type == kVarint &&
        (field.value < 1 || field.value > kMaxModelType)) {
      return invalid("unknown model type %llu", static_cast<unsigned long long>(field.value));
    }
    // The text decode() shows for <unk>.
    if (field.number == kTrainerUnkSurface && field.wire_type == kLengthDelimited &&
        !valid_utf8(field.bytes, field.length)) {
      return invalid("unk_surface is not valid UTF-8");
    }
  }
  if (reader.failed()) return malformed(reader, "the trainer spec");
  return Status::ok();
}

// ---- The precompiled charsmap's double-array trie -----------------------------

// A Darts-clone unit (darts.h, DoubleArrayUnit), read little-endian.
struct Unit {
  uint32_t bits;
  bool has_leaf() const { return ((bits >> 8) & 1) == 1; }
  uint32_t value() const { return bits & ((1u << 31) - 1); }
  uint32_t label() const { return bits & ((1u << 31) | 0xff); }  // leaves: MSB set, never a byte
  uint32_t offset() const { return (bits >> 10) << ((bits & (1u << 9)) >> 6); }
};

class TrieCheck {
 public:
  TrieCheck(const uint8_t* units, size_t count, const uint8_t* strings, size_t strings_length)
      : units_(units), count_(count), strings_(strings), strings_length_(strings_length) {}

  Status run(const char* which);

 private:
  Unit unit(size_t index) const {
    Unit u;
    std::memcpy(&u.bits, units_ + 4 * index, 4);
    return u;
  }
  Status check_value(uint32_t value, const char* which) const;
  // Lists every unit under the one base it can be a child of (below);
  // false when out of memory.
  bool index_children();

  const uint8_t* units_;
  size_t count_;
  const uint8_t* strings_;
  size_t strings_length_;
  // The children of the node whose children start at base b are
  // child_list_[child_end_[b - 1] .. child_end_[b]) (from 0 for b = 0),
  // in index order.
  std::unique_ptr<uint32_t[]> child_end_;   // count_ entries
  std::unique_ptr<uint32_t[]> child_list_;  // count_ entries
};

Status TrieCheck::check_value(uint32_t value, const char* which) const {
  if (value >= strings_length_) {
    return invalid("%s charsmap: a leaf value %u points past its %zu-byte string blob", which, value,
                   strings_length_);
  }
  // The blob ends with a NUL (checked), so this stays inside it.
  const size_t length = std::strlen(reinterpret_cast<const char*>(strings_ + value));
  if (!valid_utf8(strings_ + value, length)) {
    return invalid("%s charsmap: the replacement at %u is not valid UTF-8", which, value);
  }
  return Status::ok();
}

// Unit j is the child for byte c of a node whose children start at `base`
// when j = base ^ c and its label (low byte; bit 31 clear) is c, so the
// only base it can be a child of is j ^ label. One counting sort by that
// base lists each node's children, instead of testing its 256 slots per
// node (29,424 nodes in OPUS-MT's nmt_nfkc charsmap: 3.4 ms a tokenizer
// load, now ~0.3 ms). A base at or past count_ has no complete block of
// slots, which the walk refuses before it asks for children: such units are
// left out.
bool TrieCheck::index_children() {
  child_end_.reset(new (std::nothrow) uint32_t[count_]());
  child_list_.reset(new (std::nothrow) uint32_t[count_]);
  if (!child_end_ || !child_list_) return false;
  auto parent_base = [&](size_t j) -> size_t {
    const uint32_t bits = unit(j).bits;
    return (bits & (1u << 31)) != 0 ? count_ : j ^ (bits & 0xffu);
  };
  uint32_t* end = child_end_.get();
  for (size_t j = 0; j < count_; ++j) {
    const size_t base = parent_base(j);
    if (base < count_) ++end[base];
  }
  // Counts to starts, then each child placed at its base's cursor: that
  // leaves end[b] at the end of b's children.
  uint32_t start = 0;
  for (size_t b = 0; b < count_; ++b) {
    const uint32_t children = end[b];
    end[b] = start;
    start += children;
  }
  for (size_t j = 0; j < count_; ++j) {
    const size_t base = parent_base(j);
    if (base < count_) child_list_[end[base]++] = static_cast<uint32_t>(j);
  }
  return true;
}

// Depth-first over every node any input can reach. SentencePiece's
// commonPrefixSearch, at a node whose children start at `base`, reads unit
// base ^ c for the next input byte c (any of 256), follows it when its label
// is c, and then reads unit (base ^ c) ^ offset when it has a leaf.
//
// Darts-clone builds its array from a DAWG, so a unit can be the child of
// several nodes (shared suffixes): the walk is over a DAG. It visits each
// unit once, keeps for each the most leaves on a path below it (memoized),
// and refuses a cycle (an input could then collect matches without end).
Status TrieCheck::run(const char* which) {
  if (count_ == 0) return invalid("%s charsmap has an empty trie", which);
  enum : uint8_t { kUnseen = 0, kOpen, kDone };
  std::unique_ptr<uint8_t[]> state(new (std::nothrow) uint8_t[count_]());
  std::unique_ptr<uint8_t[]> below(new (std::nothrow) uint8_t[count_]());  // leaves, <= 33
  struct Frame {
    uint32_t unit;  // the unit this node was entered through (0: the root)
    uint32_t best;  // most leaves on a path below, so far
    uint32_t next;  // its children not yet visited: child_list_[next .. end)
    uint32_t end;
  };
  // Each unit is open at most once at a time, so count_ + 1 frames suffice.
  std::unique_ptr<Frame[]> stack(new (std::nothrow) Frame[count_ + 1]);
  if (!state || !below || !stack || !index_children()) {
    return Status::error(StatusCode::kOutOfMemory, "cannot allocate verifier scratch");
  }
  size_t depth = 0;
  auto open = [&](uint32_t index, uint32_t base) -> Status {
    if ((static_cast<size_t>(base) | 0xff) >= count_) {
      return invalid("%s charsmap: a trie node's children (units %u..%u) lie outside its %zu units",
                     which, base & ~0xffu, base | 0xffu, count_);
    }
    state[index] = kOpen;
    Frame& frame = stack[depth++];
    frame.unit = index;
    frame.best = 0;
    frame.next = base == 0 ? 0 : child_end_[base - 1];
    frame.end = child_end_[base];
    return Status::ok();
  };
  EDGEMT_RETURN_IF_ERROR(open(0, unit(0).offset()));
  while (depth > 0) {
    Frame& frame = stack[depth - 1];
    if (frame.next == frame.end) {  // every child seen: close the node
      const Unit self = unit(frame.unit);
      const uint32_t leaves = frame.best + (frame.unit != 0 && self.has_leaf() ? 1 : 0);
      if (leaves > kMaxTrieResults) {
        return invalid("%s charsmap: a trie path has more than %u matches", which, kMaxTrieResults);
      }
      below[frame.unit] = static_cast<uint8_t>(leaves);
      state[frame.unit] = kDone;
      --depth;
      if (depth > 0 && leaves > stack[depth - 1].best) stack[depth - 1].best = leaves;
      continue;
    }
    const uint32_t index = child_list_[frame.next++];
    const Unit child = unit(index);
    // Unit 0 is the root: reaching it again would be a cycle.
    if (index == 0) return invalid("%s charsmap: the trie leads back to its root", which);
    if (state[index] == kOpen) {
      return invalid("%s charsmap: the trie has a cycle through unit %u", which, index);
    }
    if (state[index] == kDone) {
      if (below[index] > frame.best) frame.best = below[index];
      continue;
    }
    const uint32_t base = index ^ child.offset();
    if (child.has_leaf()) {
      if (base >= count_) {
        return invalid("%s charsmap: a trie leaf (unit %u) lies outside its %zu units", which, base,
                       count_);
      }
      EDGEMT_RETURN_IF_ERROR(check_value(unit(base).value(), which));
    }
    EDGEMT_RETURN_IF_ERROR(open(index, base));
  }
  return Status::ok();
}

// <uint32 LE trie size T><T bytes of units><NUL-terminated strings>
Status check_charsmap(const uint8_t* blob, size_t size, const char* which) {
  if (size == 0) return Status::ok();  // no normalization
  uint32_t trie_bytes = 0;
  if (size > 4) std::memcpy(&trie_bytes, blob, 4);
  if (size <= 4 || trie_bytes < 4 || uint64_t{trie_bytes} + 4 >= size) {
    return invalid("%s charsmap: its trie size does not fit its %zu bytes", which, size);
  }
  const uint8_t* strings = blob + 4 + trie_bytes;
  const size_t strings_length = size - 4 - trie_bytes;
  if (strings[strings_length - 1] != 0) {
    return invalid("%s charsmap: its string blob does not end with a NUL", which);
  }
  return TrieCheck(blob + 4, trie_bytes / 4, strings, strings_length).run(which);
}

Status check_normalizer_spec(const uint8_t* bytes, size_t length, const char* which) {
  ProtobufReader reader(bytes, length);
  ProtobufField field;
  while (reader.next(&field)) {
    // Every occurrence: protobuf keeps the last, so all must be sound.
    if (field.number == kNormalizerCharsmap && field.wire_type == kLengthDelimited) {
      EDGEMT_RETURN_IF_ERROR(check_charsmap(field.bytes, field.length, which));
    }
  }
  if (reader.failed()) return malformed(reader, "a normalizer spec");
  return Status::ok();
}

}  // namespace

Status verify_sentencepiece_model(const uint8_t* data, size_t size, uint32_t vocab_size) {
  if (data == nullptr || size == 0) return invalid("empty");
  if (size > kMaxTokenizerBytes) {
    return invalid("%zu bytes, more than the limit of %u", size, kMaxTokenizerBytes);
  }
  ProtobufReader reader(data, size);
  ProtobufField field;
  uint32_t pieces = 0;
  uint32_t unknown_pieces = 0;
  while (reader.next(&field)) {
    if (field.wire_type != kLengthDelimited) continue;  // not a field it knows: protobuf skips it
    switch (field.number) {
      case kModelPieces: {
        if (pieces == vocab_size) {
          return invalid("more pieces than the model's %u vocabulary entries", vocab_size);
        }
        bool unknown = false;
        EDGEMT_RETURN_IF_ERROR(check_piece(field.bytes, field.length, pieces, &unknown));
        unknown_pieces += unknown ? 1 : 0;
        ++pieces;
        break;
      }
      case kModelTrainerSpec:
        EDGEMT_RETURN_IF_ERROR(check_trainer_spec(field.bytes, field.length));
        break;
      case kModelNormalizerSpec:
        EDGEMT_RETURN_IF_ERROR(check_normalizer_spec(field.bytes, field.length, "the normalizer"));
        break;
      case kModelDenormalizerSpec:
        EDGEMT_RETURN_IF_ERROR(check_normalizer_spec(field.bytes, field.length, "the denormalizer"));
        break;
      default:
        break;
    }
  }
  if (reader.failed()) {
    return invalid("malformed protobuf at byte %zu: %s", reader.offset(data), reader.error());
  }
  if (pieces == 0) return invalid("no pieces");
  if (unknown_pieces != 1) return invalid("%u UNKNOWN pieces; exactly one (<unk>) is needed", unknown_pieces);
  return Status::ok();
}

}  // namespace edgemt
