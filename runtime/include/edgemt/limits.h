// Limits: the largest model file and the largest request edgemt accepts.
//
// Each limit is enforced where the value first enters (the model verifier at
// load, Translator::prepare()/translate(), Tokenizer::encode(), the CLI's
// line reader) with a message naming it, never by a crash or silent
// truncation. They exist so that every size computation stays far from
// integer overflow whatever a file or a caller says, and so that memory is
// bounded by what the caller configured, not by the input.
//
// The converter (tools/edgemt_tools/limits.py) reads the model limits from
// this header and the families' config headers and refuses to write a file
// outside them: keep each an `inline constexpr` of literals, shifts, products
// and sums.
#pragma once

#include <cstddef>
#include <cstdint>

namespace edgemt {

// ---- Model files (checked by the verifier at load) --------------------------

// Limits of every family; each family adds its own for its config
// (runtime/models/<family>/config.h).
inline constexpr uint32_t kMaxVocabSize = 1u << 24;  // 16,777,216 ids
inline constexpr uint32_t kMaxPositions = 65536;     // longest sequence a model may declare
// A whole file: FlatBuffer header plus weight segment. The FlatBuffer part is
// also below 2 GiB (a limit of the FlatBuffers verifier).
inline constexpr uint64_t kMaxModelBytes = uint64_t{64} << 30;  // 64 GiB
// Entries of the tensor table: above what the largest config any family
// allows implies (today 2057 float tensors, fewer than 4114 with int8
// scales); the rest is headroom, not a promise.
inline constexpr uint32_t kMaxTensors = 8192;
// The embedded SentencePiece model (real ones are 0.2-5 MB).
inline constexpr uint32_t kMaxTokenizerBytes = 64u << 20;  // 64 MiB

// ---- Requests (Translator::prepare() and translate()) -----------------------

inline constexpr size_t kMaxBatch = 1024;  // Limits::max_batch
inline constexpr size_t kMaxBeam = 64;     // Limits::max_beam
// Limits::max_source_len and max_target_len are at most the model's
// max_sequence_length() (itself <= kMaxPositions).

// ---- Text (Tokenizer::encode(), edgemt translate) ---------------------------

// Default of TokenizerOptions::max_input_bytes and of edgemt translate's
// --max-line-bytes: SentencePiece needs about 80 bytes of memory per input
// byte, so a line is refused before it is tokenized, not after. 64 KiB is
// far above what a model with a few hundred positions can translate.
inline constexpr size_t kDefaultMaxInputBytes = 64u << 10;
inline constexpr size_t kMaxInputBytes = 64u << 20;  // largest value either accepts

}  // namespace edgemt
