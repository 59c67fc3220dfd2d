// Search: drives decoder steps for a batch and picks the output tokens.
//
// Greedy (beam_size 1) and beam search follow tools/edgemt_tools/SEARCH.md
// literally, under the model's rules (SearchRules: each source framework's
// own), so a framework and edgemt agree token for token:
//   - the model's banned tokens are never emitted (masked after the
//     log_softmax); EOS ends a hypothesis;
//   - at most max_len generated tokens (counting EOS) per sentence
//     (Hugging Face: the last one is forced to be EOS);
//   - beam: per sentence, the top N of (hypothesis score + log_softmax) over
//     its live hypotheses × vocab, best first (ties: lower flat index), with
//     N = 2K (edgemt, Hugging Face), K (OpenNMT) or the live count (Marian;
//     K at the first step); EOS candidates finish (edgemt and Hugging Face:
//     rank < K only), others become live until K are;
//   - done: edgemt when K have finished; Hugging Face when K have finished
//     and none live can beat the worst of them; OpenNMT when K have
//     finished and the best candidate of some step was EOS; Marian when
//     none is live; any at max_len (live ones are then finished as they
//     stand);
//   - the best normalized score wins (ties: earliest finished).
//
// A sentence whose scores cannot be trusted fails alone (Translation::status
// kNumericError), the rest of the batch goes on:
//   - a live row whose log-sum-exp is not finite (a NaN or +inf logit, or
//     every logit -inf: the model overflowed);
//   - no candidate with a finite score once pad and bos are banned (greedy:
//     the arg-max is -inf or there is none; beam: an empty top 2K), even
//     when some hypotheses had finished: with verified, finite weights a
//     -inf logit only comes from an overflow, so nothing of it is trusted.
// So every token the search emits or feeds back to the decoder is a real
// vocabulary id with a finite score, and every sentence ends with a defined
// result.
//
// Greedy without scores (SearchRequest::greedy_scores false): the family
// may return a row's arg-max instead of its logits
// (EncoderDecoder::decode_step_argmax), only when it proved every logit of
// the row finite; such a row is usable and its arg-max is the token, with
// the same choice as above. Rows it returns as logits go through the rules
// above, their log-sum-exp only tested for being finite
// (kernels::log_sum_exp_finite), not computed. Results then carry score NaN.
//
// With a shortlist (SearchRequest::columns) the rows hold the candidates'
// logits only: the log-softmax, the arg-max and the beam's top N run over
// them, and a column becomes its id when a token is chosen.
//
// Live hypotheses of a sentence occupy consecutive decoder rows, compacted
// after each step (token history double-buffered); their decoder state
// (whatever the family keeps per hypothesis) stays in the sentence's own
// slots and is reordered within them only when beams swap parents (never
// for greedy).
#pragma once

#include <cstddef>
#include <cstdint>

#include "core/arena.h"
#include "edgemt/model.h"
#include "edgemt/decoding.h"
#include "kernels/vocab_row.h"
#include "models/encoder_decoder.h"

namespace edgemt {

struct SearchShape {
  size_t max_batch = 0;
  size_t max_beam = 0;
  size_t max_target_len = 0;
  size_t max_source_len = 0;
  bool attention = false;  // keep every step's attention weights (Limits::attention)
};

struct SearchBuffers {
  size_t* row_source[2] = {};  // [R]
  float* row_score[2] = {};    // [R] sum of log-probabilities
  int32_t* history[2] = {};    // [R, T] generated tokens
  int32_t* row_token = nullptr;  // [R] decoder input of the next step
  size_t* parent = nullptr;    // [R] row (then index in its sentence) of each new row's parent
  size_t* row_slot = nullptr;  // [R] decoder state slot of each row
  size_t* row_best = nullptr;  // [R] greedy: arg-max of each row's logits (pad/bos banned)
  // [R] greedy without scores: the family's arg-max of each row, or
  // EncoderDecoder::kFullLogits (the row's logits were computed instead).
  size_t* row_pick = nullptr;
  // [R] log-sum-exp of each row's logits (finite = usable; greedy without
  // scores: 0 or NaN, whether it is finite)
  float* row_lse = nullptr;
  kernels::RowNormalizer* row_norm = nullptr;  // [R] beam: each row's log_softmax normalizer
  // Per sentence.
  size_t* live_begin = nullptr;  // [B]
  size_t* live_count = nullptr;  // [B]
  size_t* max_len = nullptr;     // [B]
  size_t* finished_count = nullptr;  // [B]
  uint8_t* failed = nullptr;         // [B] SentenceFailure
  // Finished hypotheses: up to 2K per sentence.
  int32_t* finished_tokens = nullptr;  // [B, 2K, T]
  size_t* finished_len = nullptr;      // [B, 2K]
  float* finished_score = nullptr;     // [B, 2K] normalized
  float* finished_raw = nullptr;       // [B, 2K] un-normalized log-probability
  uint8_t* best_ended = nullptr;       // [B] OpenNMT: the top candidate of a step was EOS
  size_t* finished_total = nullptr;    // [B] hypotheses finished so far, kept or not
  // Beam candidates: each sentence's top 2K (score, j·V + token), best first.
  float* candidate_score = nullptr;   // [B, 2K]
  size_t* candidate_index = nullptr;  // [B, 2K]
  size_t* candidate_count = nullptr;  // [B]
  // Attention history (shape.attention only): the weights each row of each
  // step attended with, the row each row continued (its parent at the step
  // before), and where each finished hypothesis chose its last token; a
  // result's rows are read back through the parents.
  float* step_attention = nullptr;   // [T, R, S]
  size_t* step_parent = nullptr;     // [T, R]
  size_t* finished_step = nullptr;   // [B, 2K]
  size_t* finished_row = nullptr;    // [B, 2K]
  SearchShape shape;
};

void plan_search(const SearchShape& shape, Arena* arena, SearchBuffers* buffers);

struct SearchRequest {
  const PackedSequences* sources = nullptr;
  const DecodeOptions* options = nullptr;
  const SpecialTokens* special = nullptr;
  SearchRules rules = SearchRules::kEdgemt;
  const int32_t* banned = nullptr;  // [banned_count] ids never emitted
  size_t banned_count = 0;
  size_t vocab = 0;
  // A lexical shortlist's candidates (search/shortlist.h): the decoder's
  // logits cover ids columns[0..column_count) only, ascending, EOS among
  // them; nullptr: every id of the vocabulary.
  const int32_t* columns = nullptr;
  size_t column_count = 0;
  const size_t* max_len = nullptr;  // [count] per sentence
  bool attention = false;  // some result asked for attention weights (planned)
  // Greedy reports each sentence's score (its log-probability). false: the
  // family may find each step's arg-max without every logit
  // (EncoderDecoder::decode_step_argmax) and results get score NaN; the
  // tokens and the failures are the same. Beam search always scores.
  bool greedy_scores = true;
};

// Runs `network`'s decoder steps (after its encode()) until every sentence
// is done and writes `results`.
[[nodiscard]] Status run_search(EncoderDecoder& network, const Execution& execution,
                                const SearchRequest& request, SearchBuffers* buffers,
                                Translation* results);

}  // namespace edgemt
