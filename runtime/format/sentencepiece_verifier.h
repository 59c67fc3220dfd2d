// The embedded SentencePiece model, checked before SentencePiece reads it.
//
// An .emt file carries its tokenizer as a serialized SentencePiece
// ModelProto, which edgemt_text hands to the SentencePiece library. That
// library checks what a trainer could get wrong (duplicate or empty pieces,
// a missing <unk>) but trusts the normalizer's precompiled_charsmap blindly:
// a Darts-clone double-array trie whose unit offsets it follows without
// bounds checks, leaf values it uses as indexes into a string blob it reads
// up to a NUL, and a trie-size prefix it does not compare with the blob. A
// file from anywhere could turn those into reads outside the model. So the
// verifier walks the proto itself (format/protobuf_reader.h) and proves,
// for every charsmap, what SentencePiece assumes:
//
//   blob      <uint32 LE trie bytes T><T bytes of units><strings>, with
//             4 + T < size, T >= 4, the strings ending with a NUL;
//   trie      every node reachable from the root by ANY byte sequence has
//             all 256 child slots inside the trie, is reached once (no
//             cycles or shared nodes, as in a built trie), and no path holds
//             more than 32 leaves (SentencePiece collects at most 32 prefix
//             matches into a stack array and then reads as many as it found);
//   leaves    every value indexes the string blob, at a valid UTF-8 string.
//
// and, for the rest of the proto: well-formed wire format at every level it
// descends, 1 to vocab_size pieces, each with non-empty valid UTF-8 text, a
// finite score and a known type, exactly one UNKNOWN piece, a known model
// type. Fields it does not know are allowed (protobuf skips them too).
//
// A real 8k-piece model with the nmt_nfkc charsmap (380 KB) verifies in
// about 2 ms (the trie walk: 256 probes per reachable node).
#pragma once

#include <cstddef>
#include <cstdint>

#include "edgemt/status.h"

namespace edgemt {

// Errors: kInvalidModel, with a message starting "tokenizer model: ".
// Allocates (a bitmap over the trie units) at load only.
[[nodiscard]] Status verify_sentencepiece_model(const uint8_t* data, size_t size,
                                                uint32_t vocab_size);

}  // namespace edgemt
