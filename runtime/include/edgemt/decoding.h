// What a translate() call is asked and gives back, per sentence: the
// decoding options, the source spans and the translations. Its own header
// (translator.h includes it) so that the search (runtime/search/), which
// fills these in, does not depend on the Translator class above it.
#pragma once

#include <cstddef>
#include <cstdint>

#include "edgemt/model.h"
#include "edgemt/status.h"

namespace edgemt {

// How to decode. The search follows the model's rules (Model::decoding():
// its source framework's beam search, tools/edgemt_tools/SEARCH.md) and
// never emits the model's banned tokens; these options are the numbers.
// decode_options(model) gives the model's own defaults.
struct DecodeOptions {
  size_t beam_size = 1;         // 1 = greedy
  // Beam: the exponent of the length normalization (score / L^penalty; L
  // per the rules).
  float length_penalty = 1.0f;
  // Generated tokens (counting EOS) are at most floor(a·source_len + b)
  // (Marian's rules: ceil), source_len counting EOS, and at most
  // Limits::max_target_len.
  float max_len_a = 2.0f;
  float max_len_b = 10.0f;
  // Marian's rules: subtracted once per generated token from a finished
  // hypothesis's score before normalizing.
  float word_penalty = 0.0f;
};

// The model's decoding defaults (Model::decoding()) as DecodeOptions.
DecodeOptions decode_options(const Model& model);

struct TokenSpan {
  const int32_t* ids = nullptr;
  size_t length = 0;
};

// One output; `tokens` is caller memory of `capacity` ids (capacity >=
// Limits::max_target_len never truncates). EOS, BOS and pad are not included.
//
// A sentence can fail on its own while the rest of its batch is translated:
// then `status` is not kOk, `error` says why, and length is 0. Today the one
// such failure is kNumericError: the model's scores for the sentence were
// NaN or infinite (its activations overflowed, as an fp16 model can), or
// gave no token but pad/bos a finite score, so no translation is defined.
// Every token id written is inside the vocabulary.
//
// Attention weights, on request (a translator prepared with
// Limits::attention; the chosen decoder layer's attention over the source,
// or a family's one attention):
// `attention` is caller memory of `attention_capacity` floats, at least
// (the sentence's most generated tokens) x (its source length, EOS
// counted). On success it holds [attention_rows, attention_columns]
// row-major: row t is the distribution over the source tokens the decoder
// step that chose output t attended with (rows: one per generated token,
// and one more for the step that chose EOS when the translation ended with
// it; columns: the source tokens). Beam search returns the rows of the
// hypothesis it returns. nullptr: none asked (no cost).
struct Translation {
  int32_t* tokens = nullptr;
  size_t capacity = 0;
  size_t length = 0;
  // Log-probability (beam: length-normalized); 0 on failure; NaN for greedy
  // after Translator::set_greedy_scores(false) (not computed).
  float score = 0.0f;
  StatusCode status = StatusCode::kOk;
  const char* error = "";  // static text, never null; "" when status is kOk
  float* attention = nullptr;
  size_t attention_capacity = 0;
  size_t attention_rows = 0;
  size_t attention_columns = 0;
};

}  // namespace edgemt
