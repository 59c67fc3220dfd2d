// verify_sentencepiece_model: the real SentencePiece models pass (the bundled
// model's, with its nmt_nfkc charsmap, and the test builder's), every kind of
// corruption is refused with its message, and whatever the verifier accepts
// after random corruption of the charsmap's trie is proved safe by an
// independent, bounds-checked re-implementation of the traversal
// SentencePiece runs (Darts-clone's commonPrefixSearch), and loads in
// SentencePiece itself.
#include "format/sentencepiece_verifier.h"

#include <doctest/doctest.h>
#include <sentencepiece_processor.h>

#include <chrono>
#include <cmath>
#include <cstring>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "edgemt/model.h"
#include "format/protobuf_reader.h"
#include "support/sentencepiece_builder.h"

namespace edgemt {
namespace {

using testing::ProtoWriter;
using testing::sentencepiece_piece;
using testing::tiny_sentencepiece_model;

Status verify(const std::string& blob, uint32_t vocab = 8000) {
  // An exact-size heap copy, so AddressSanitizer sees any read past the end.
  std::unique_ptr<uint8_t[]> copy(new uint8_t[blob.size() + 1]);
  std::memcpy(copy.get(), blob.data(), blob.size());
  return verify_sentencepiece_model(copy.get(), blob.size(), vocab);
}

#define CHECK_REFUSED(status_expr, text)                                                 \
  do {                                                                                   \
    const Status s_ = (status_expr);                                                     \
    CHECK(s_.code() == StatusCode::kInvalidModel);                                       \
    CHECK_MESSAGE(std::strstr(s_.message(), text) != nullptr, std::string(s_.message())); \
  } while (0)

std::string bundled_blob() {
  std::unique_ptr<Model> model;
  const Status loaded = Model::load(EDGEMT_BUNDLED_MODEL, &model);
  REQUIRE_MESSAGE(loaded.is_ok(), loaded.message());
  size_t size = 0;
  const uint8_t* bytes = model->tokenizer_model(&size);
  return std::string(reinterpret_cast<const char*>(bytes), size);
}

// Where a ModelProto's normalizer charsmap bytes are (offset, length), found
// with the same reader the verifier uses.
struct Span {
  size_t offset = 0;
  size_t length = 0;
};

Span find_charsmap(const std::string& blob) {
  const auto* data = reinterpret_cast<const uint8_t*>(blob.data());
  ProtobufReader model(data, blob.size());
  ProtobufField field;
  while (model.next(&field)) {
    if (field.number != 3 || field.wire_type != 2) continue;
    ProtobufReader spec(field.bytes, field.length);
    ProtobufField inner;
    while (spec.next(&inner)) {
      if (inner.number == 2 && inner.wire_type == 2) {
        return {static_cast<size_t>(inner.bytes - data), inner.length};
      }
    }
  }
  return {};
}

// ---- An independent model of what SentencePiece reads ------------------------

struct Trie {
  const uint8_t* units;
  size_t count;
  const uint8_t* strings;
  size_t strings_length;
  uint32_t unit(size_t i) const {
    uint32_t u;
    std::memcpy(&u, units + 4 * i, 4);
    return u;
  }
};

Trie trie_of(const std::string& blob, Span charsmap) {
  const auto* map = reinterpret_cast<const uint8_t*>(blob.data()) + charsmap.offset;
  uint32_t trie_bytes;
  std::memcpy(&trie_bytes, map, 4);
  return {map + 4, trie_bytes / 4, map + 4 + trie_bytes, charsmap.length - 4 - trie_bytes};
}

// Darts-clone's commonPrefixSearch written out with a bounds check before
// every read, as SentencePiece's NormalizePrefix calls it (results counted
// past 32 are read back from a 32-entry array). False on any read that
// would be out of bounds there.
bool checked_prefix_search(const Trie& t, const std::vector<uint8_t>& key) {
  auto offset = [](uint32_t u) { return (u >> 10) << ((u & (1u << 9)) >> 6); };
  size_t matches = 0;
  size_t pos = offset(t.unit(0));
  for (uint8_t c : key) {
    pos ^= c;
    if (pos >= t.count) return false;
    const uint32_t u = t.unit(pos);
    if ((u & ((1u << 31) | 0xff)) != c) break;
    pos ^= offset(u);
    if ((u >> 8) & 1) {
      if (pos >= t.count) return false;
      const uint32_t value = t.unit(pos) & ((1u << 31) - 1);
      if (value >= t.strings_length) return false;
      if (std::memchr(t.strings + value, 0, t.strings_length - value) == nullptr) return false;
      ++matches;
    }
  }
  return matches <= 32;
}

// A key that follows real edges of the trie for a while, then random bytes:
// random bytes alone almost never get past the first level.
std::vector<uint8_t> walk_key(const Trie& t, std::mt19937* rng) {
  std::vector<uint8_t> key;
  auto offset = [](uint32_t u) { return (u >> 10) << ((u & (1u << 9)) >> 6); };
  size_t pos = offset(t.unit(0));
  for (int step = 0; step < 12; ++step) {
    std::vector<uint8_t> labels;
    for (uint32_t c = 0; c < 256; ++c) {
      if ((pos ^ c) < t.count && (t.unit(pos ^ c) & ((1u << 31) | 0xff)) == c) {
        labels.push_back(static_cast<uint8_t>(c));
      }
    }
    if (labels.empty()) break;
    const uint8_t c = labels[(*rng)() % labels.size()];
    key.push_back(c);
    pos = (pos ^ c) ^ offset(t.unit(pos ^ c));
  }
  for (int extra = (*rng)() % 3; extra > 0; --extra) key.push_back(static_cast<uint8_t>((*rng)()));
  return key;
}

// ---- Real models pass ------------------------------------------------------------

TEST_CASE("format/sentencepiece_verifier: the bundled model's tokenizer passes, in milliseconds") {
  const std::string blob = bundled_blob();
  const auto start = std::chrono::steady_clock::now();
  const Status status = verify(blob);
  const double ms =
      std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
  CHECK_MESSAGE(status.is_ok(), status.message());
  MESSAGE("verified the bundled " << blob.size() << "-byte SentencePiece model in " << ms << " ms");
  const Span charsmap = find_charsmap(blob);
  REQUIRE(charsmap.length > 1000);  // nmt_nfkc: a real trie
}

TEST_CASE("format/sentencepiece_verifier: the test builder's models pass and SentencePiece loads them") {
  for (uint32_t vocab : {5u, 32u, 40u, 300u}) {
    const std::string blob = tiny_sentencepiece_model(vocab);
    CAPTURE(vocab);
    CHECK(verify(blob, vocab).is_ok());
    sentencepiece::SentencePieceProcessor processor;
    CHECK(processor.LoadFromSerializedProto(blob).ok());
    CHECK(processor.GetPieceSize() == static_cast<int>(vocab));
  }
}

// ---- Malformed protobuf ---------------------------------------------------------

TEST_CASE("format/sentencepiece_verifier: malformed wire format is refused at every level") {
  const std::string good = tiny_sentencepiece_model(32);
  CHECK_REFUSED(verify(""), "tokenizer model: empty");
  CHECK_REFUSED(verify(good + "\x0a\xff\xff\xff\xff\xff\xff\xff\xff\xff\xff\x01"),
                "a varint is longer than 64 bits");
  CHECK_REFUSED(verify(good + "\x08\x80\x80"), "a varint runs past the end");
  CHECK_REFUSED(verify(good + "\x0a\x7f" + "abc"), "a length runs past the end");
  CHECK_REFUSED(verify(good + "\x0b"), "group or unknown wire type");
  CHECK_REFUSED(verify(good + "\x0d\x01\x02"), "a fixed32 field runs past the end");
  CHECK_REFUSED(verify(good + "\x09\x01\x02"), "a fixed64 field runs past the end");
  CHECK_REFUSED(verify(good + std::string("\x00", 1)), "field number is 0");
  // Inside a piece and inside the normalizer spec.
  CHECK_REFUSED(verify(ProtoWriter().bytes(1, "\x0a\x09<unk>").data() + good), "in a piece");
  CHECK_REFUSED(verify(good + ProtoWriter().bytes(3, "\x12\x05" "ab").data()), "in a normalizer spec");
  // Every truncation of a valid model is refused or still a valid proto
  // (a cut between pieces); never a crash or a read past the end.
  for (size_t cut = 0; cut < good.size(); ++cut) (void)verify(good.substr(0, cut), 32);
}

TEST_CASE("format/sentencepiece_verifier: pieces must be real: text, finite score, known type, one <unk>") {
  const std::string rest = tiny_sentencepiece_model(32);
  auto with_first = [&](const std::string& piece) { return ProtoWriter().bytes(1, piece).data() + rest; };
  CHECK_REFUSED(verify(with_first(sentencepiece_piece("", 0.0f, 1))), "piece 0 is empty");
  CHECK_REFUSED(verify(with_first(sentencepiece_piece("\xff\xfe", 0.0f, 1))), "piece 0 is not valid UTF-8");
  CHECK_REFUSED(verify(with_first(sentencepiece_piece("x", NAN, 1))), "piece 0 has a non-finite score");
  // Found by the fuzzer: SentencePiece's trie throws on these (process abort).
  CHECK_REFUSED(verify(with_first(sentencepiece_piece(std::string(1, '\0'), 0.0f, 1))),
                "piece 0 contains a NUL byte");
  CHECK_REFUSED(verify(with_first(sentencepiece_piece(std::string("a\0b", 3), 0.0f, 1))),
                "piece 0 contains a NUL byte");
  CHECK_REFUSED(verify(with_first(sentencepiece_piece("x", INFINITY, 1))), "non-finite score");
  CHECK_REFUSED(verify(with_first(ProtoWriter().bytes(1, "x").varint(3, 9).data())),
                "piece 0 has unknown type 9");
  CHECK_REFUSED(verify(with_first(ProtoWriter().fixed32(2, 0).data())), "piece 0 has no text");
  CHECK_REFUSED(verify(with_first(sentencepiece_piece("<unk2>", 0.0f, 2))), "2 UNKNOWN pieces");
  CHECK_REFUSED(verify(ProtoWriter().bytes(1, sentencepiece_piece("a", 0.0f, 1)).data()),
                "0 UNKNOWN pieces");
  CHECK_REFUSED(verify(ProtoWriter().bytes(3, "").data()), "no pieces");
  CHECK_REFUSED(verify(rest, 31), "more pieces than the model's 31 vocabulary entries");
  CHECK_REFUSED(verify(rest + ProtoWriter().bytes(2, ProtoWriter().varint(3, 7).data()).data(), 32),
                "unknown model type 7");
  CHECK_REFUSED(verify(rest + ProtoWriter().bytes(2, ProtoWriter().bytes(44, "\xc0").data()).data(), 32),
                "unk_surface is not valid UTF-8");
}

// ---- The charsmap ------------------------------------------------------------------

TEST_CASE("format/sentencepiece_verifier: charsmap blob layout: size prefix, NUL-terminated strings") {
  const std::string good = tiny_sentencepiece_model(32);
  auto with_charsmap = [&](const std::string& map) {
    return good + ProtoWriter().bytes(3, ProtoWriter().bytes(2, map).data()).data();
  };
  CHECK_REFUSED(verify(with_charsmap("abc"), 32), "its trie size does not fit");
  CHECK_REFUSED(verify(with_charsmap(std::string("\x08\x00\x00\x00", 4) + "12345678"), 32),
                "its trie size does not fit");  // no room for strings
  CHECK_REFUSED(verify(with_charsmap(std::string("\xff\xff\xff\x7f", 4) + "12345678"), 32),
                "its trie size does not fit");
  CHECK_REFUSED(verify(with_charsmap(std::string("\x04\x00\x00\x00", 4) + "1234" + "ab"), 32),
                "does not end with a NUL");
  // The bundled charsmap with its last byte changed: no final NUL.
  std::string blob = bundled_blob();
  const Span charsmap = find_charsmap(blob);
  blob[charsmap.offset + charsmap.length - 1] = 'x';
  CHECK_REFUSED(verify(blob), "does not end with a NUL");
  // Moved into the denormalizer spec, it is checked there too.
  const std::string map = bundled_blob().substr(charsmap.offset, charsmap.length);
  std::string bad = map;
  bad[bad.size() - 1] = 'x';
  CHECK_REFUSED(verify(good + ProtoWriter().bytes(5, ProtoWriter().bytes(2, bad).data()).data(), 32),
                "the denormalizer charsmap");
}

// Finds, by walking the bundled trie, a reachable unit with a leaf: index
// of the child unit and of its leaf unit.
struct LeafAt {
  size_t unit = 0;
  size_t leaf = 0;
};

LeafAt first_leaf(const Trie& t) {
  auto offset = [](uint32_t u) { return (u >> 10) << ((u & (1u << 9)) >> 6); };
  const size_t base = offset(t.unit(0));
  for (uint32_t c = 1; c < 256; ++c) {
    const uint32_t u = t.unit(base ^ c);
    if ((u & ((1u << 31) | 0xff)) == c && ((u >> 8) & 1)) return {base ^ c, (base ^ c) ^ offset(u)};
  }
  return {};
}

void set_unit(std::string* blob, Span charsmap, size_t index, uint32_t value) {
  std::memcpy(&(*blob)[charsmap.offset + 4 + 4 * index], &value, 4);
}

TEST_CASE("format/sentencepiece_verifier: a leaf value past the strings and an offset out of the trie") {
  const std::string original = bundled_blob();
  const Span charsmap = find_charsmap(original);
  const Trie trie = trie_of(original, charsmap);
  const LeafAt leaf = first_leaf(trie);
  REQUIRE(leaf.unit != 0);

  std::string value_past = original;
  set_unit(&value_past, charsmap, leaf.leaf, (1u << 31) | 0x7ffffff0u);  // a leaf unit, huge value
  CHECK_REFUSED(verify(value_past), "points past its");

  std::string offset_out = original;
  const uint32_t child = trie.unit(leaf.unit);
  // Same label and flags, offset field (bits 10..30, no extension bit) maximal.
  set_unit(&offset_out, charsmap, leaf.unit, (child & 0x1ffu) | (0x1fffffu << 10));
  CHECK_REFUSED(verify(offset_out), "outside its");

  // A child whose offset leads back to the root's children: a cycle.
  std::string cycle = original;
  const uint32_t root_base = (trie.unit(0) >> 10) << ((trie.unit(0) & (1u << 9)) >> 6);
  const uint32_t back = static_cast<uint32_t>(leaf.unit) ^ root_base;  // index ^ offset == root base
  if (back < (1u << 21)) {
    set_unit(&cycle, charsmap, leaf.unit, (child & 0xffu) | (back << 10));  // no leaf, plain offset
    const Status status = verify(cycle);
    CHECK(status.code() == StatusCode::kInvalidModel);
    CHECK_MESSAGE(std::strstr(status.message(), "cycle") != nullptr, status.message());
  }
}

// The property behind the verifier: any charsmap it accepts is one that
// SentencePiece's traversal reads only inside of, for any input. Checked on
// 1,500 random corruptions of the real trie (a unit's bits, a few units, the
// size prefix), each probed with 200 keys that follow the trie's edges.
TEST_CASE("format/sentencepiece_verifier: whatever it accepts after random corruption is safe to walk") {
  const std::string original = bundled_blob();
  const Span charsmap = find_charsmap(original);
  const Trie clean = trie_of(original, charsmap);
  std::mt19937 rng(2026);
  size_t accepted = 0;
  size_t refused = 0;
  for (int trial = 0; trial < 1500; ++trial) {
    std::string blob = original;
    const int changes = 1 + static_cast<int>(rng() % 3);
    for (int k = 0; k < changes; ++k) {
      const size_t index = rng() % clean.count;
      uint32_t u = clean.unit(index);
      switch (rng() % 4) {
        case 0: u ^= 1u << (rng() % 32); break;            // one bit
        case 1: u = static_cast<uint32_t>(rng()); break;  // anything
        case 2: u ^= 0x100; break;                        // the leaf flag
        default: u = (u & 0x3ff) | ((rng() % 4096) << 10); break;  // another offset
      }
      set_unit(&blob, charsmap, index, u);
    }
    if (!verify(blob).is_ok()) {
      ++refused;
      continue;
    }
    ++accepted;
    const Trie trie = trie_of(blob, charsmap);
    for (int probe = 0; probe < 200; ++probe) {
      const std::vector<uint8_t> key = walk_key(trie, &rng);
      CAPTURE(trial);
      REQUIRE(checked_prefix_search(trie, key));
    }
    if (accepted % 50 == 1) {  // and SentencePiece itself loads and uses it
      sentencepiece::SentencePieceProcessor processor;
      if (processor.LoadFromSerializedProto(blob).ok()) {
        std::vector<int> ids;
        (void)processor.Encode("Ａ ｆｕｌｌ-width ﬁne TEST, e\xcc\x81 \xe2\x80\x8b ok.", &ids);
      }
    }
  }
  MESSAGE(accepted << " corrupted charsmaps accepted (each walked safely), " << refused
                   << " refused");
  // Fixed seed, so fixed counts on every platform: a change here is a change
  // in what the verifier accepts (re-derive them only on purpose).
  CHECK(accepted == 521);
  CHECK(refused == 979);
}

// Issue 13, defect 8: 3,900 bytes of the tokenizer overwritten passed inspect.
// Overwrites of that size anywhere in the model are refused or harmless.
TEST_CASE("format/sentencepiece_verifier: large overwrites anywhere in the blob") {
  const std::string original = bundled_blob();
  std::mt19937 rng(13);
  size_t refused = 0;
  for (size_t at = 0; at + 3900 < original.size(); at += 9000) {
    std::string blob = original;
    for (size_t i = at; i < at + 3900; ++i) blob[i] = static_cast<char>(rng());
    const Status status = verify(blob);
    refused += status.is_ok() ? 0 : 1;
    if (status.is_ok()) {
      sentencepiece::SentencePieceProcessor processor;
      if (processor.LoadFromSerializedProto(blob).ok()) {
        std::vector<int> ids;
        (void)processor.Encode("A dog runs in the snow.", &ids);
      }
    }
  }
  const size_t overwrites = (original.size() - 3900 + 8999) / 9000;
  MESSAGE(refused << " of " << overwrites << " overwrites refused");
  CHECK(overwrites >= 40);
  CHECK(refused == overwrites);  // every one
}

}  // namespace
}  // namespace edgemt
