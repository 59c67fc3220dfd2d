#include "search/search.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>

#include "core/parallel.h"
#include "core/profile.h"
#include "kernels/softmax.h"
#include "search/candidates.h"

namespace edgemt {

void plan_search(const SearchShape& shape, Arena* arena, SearchBuffers* b) {
  const size_t rows = shape.max_batch * shape.max_beam;
  const size_t finished = shape.max_batch * 2 * shape.max_beam;
  for (size_t i = 0; i < 2; ++i) {
    b->row_source[i] = arena->allocate<size_t>(rows, kWholeDecode);
    b->row_score[i] = arena->allocate<float>(rows, kWholeDecode);
    b->history[i] = arena->allocate<int32_t>(rows * shape.max_target_len, kWholeDecode);
  }
  b->row_token = arena->allocate<int32_t>(rows, kWholeDecode);
  b->parent = arena->allocate<size_t>(rows, kWholeDecode);
  b->row_slot = arena->allocate<size_t>(rows, kWholeDecode);
  b->row_best = arena->allocate<size_t>(rows, kWholeDecode);
  b->row_pick = arena->allocate<size_t>(rows, kWholeDecode);
  b->row_lse = arena->allocate<float>(rows, kWholeDecode);
  b->row_norm = arena->allocate<kernels::RowNormalizer>(rows, kWholeDecode);
  b->live_begin = arena->allocate<size_t>(shape.max_batch, kWholeDecode);
  b->live_count = arena->allocate<size_t>(shape.max_batch, kWholeDecode);
  b->max_len = arena->allocate<size_t>(shape.max_batch, kWholeDecode);
  b->finished_count = arena->allocate<size_t>(shape.max_batch, kWholeDecode);
  b->failed = arena->allocate<uint8_t>(shape.max_batch, kWholeDecode);
  b->finished_tokens = arena->allocate<int32_t>(finished * shape.max_target_len, kWholeDecode);
  b->finished_len = arena->allocate<size_t>(finished, kWholeDecode);
  b->finished_score = arena->allocate<float>(finished, kWholeDecode);
  b->finished_raw = arena->allocate<float>(finished, kWholeDecode);
  b->best_ended = arena->allocate<uint8_t>(shape.max_batch, kWholeDecode);
  b->finished_total = arena->allocate<size_t>(shape.max_batch, kWholeDecode);
  b->candidate_score = arena->allocate<float>(shape.max_batch * 2 * shape.max_beam, kWholeDecode);
  b->candidate_index = arena->allocate<size_t>(shape.max_batch * 2 * shape.max_beam, kWholeDecode);
  b->candidate_count = arena->allocate<size_t>(shape.max_batch, kWholeDecode);
  if (shape.attention) {
    b->step_attention = arena->allocate<float>(shape.max_target_len * rows * shape.max_source_len, kWholeDecode);
    b->step_parent = arena->allocate<size_t>(shape.max_target_len * rows, kWholeDecode);
    b->finished_step = arena->allocate<size_t>(finished, kWholeDecode);
    b->finished_row = arena->allocate<size_t>(finished, kWholeDecode);
  }
  b->shape = shape;
}

namespace {

// Why a sentence failed (SearchBuffers::failed); the messages are static.
enum SentenceFailure : uint8_t { kNotFailed = 0, kNonFiniteScores, kNoFiniteCandidate };

const char* failure_message(uint8_t failure) {
  return failure == kNonFiniteScores
             ? "the model computed NaN or infinite scores for this sentence (its activations "
               "overflowed); no translation"
             : "the model gave no token other than pad and bos a finite score for this "
               "sentence; no translation";
}

// One search over a batch; `cur` indexes the row buffers of this step,
// `next` those being built for the following step.
class BatchSearch {
 public:
  BatchSearch(EncoderDecoder& network, const Execution& execution, const SearchRequest& request,
              SearchBuffers* buffers)
      : network_(network), exec_(execution), req_(request), b_(*buffers), T_(buffers->shape.max_target_len),
        K_(request.options->beam_size),
        V_(request.columns != nullptr ? request.column_count : request.vocab),
        R_(buffers->shape.max_batch * buffers->shape.max_beam), S_(buffers->shape.max_source_len),
        eos_column_(column_of(request.special->eos)) {}

  Status run(Translation* results);

 private:
  void score_rows(size_t rows, size_t step);
  // The vocabulary id of logit column c, and the column of id (SIZE_MAX:
  // not a candidate). The identity without a shortlist.
  int32_t id_of(size_t c) const {
    return req_.columns != nullptr ? req_.columns[c] : static_cast<int32_t>(c);
  }
  size_t column_of(int32_t id) const;
  // Sets the banned ids' logits of a row to -inf.
  void ban(float* row) const;
  // Greedy without scores: whether row r's arg-max came from the family
  // (its logits were not computed).
  bool picked(size_t r) const {
    return K_ == 1 && !req_.greedy_scores && b_.row_pick[r] != EncoderDecoder::kFullLogits;
  }
  // Candidates a sentence keeps this step (at most 2K, the buffers' room).
  size_t candidate_capacity(size_t s, size_t step) const;
  // Hugging Face: the step whose token must be EOS.
  bool forces_eos(size_t s, size_t step) const {
    return req_.rules == SearchRules::kHuggingFace && step + 1 >= b_.max_len[s];
  }
  void select_greedy(size_t s, size_t step);
  void select_beam(size_t s, size_t step);
  // Whether sentence s stops after this step (its live hypotheses dropped).
  bool done(size_t s, size_t step, float best_candidate) const;
  // The finished score of a hypothesis of log-probability `score` that
  // generated `generated` tokens (its EOS counted), per the rules.
  float normalized(float score, size_t generated) const;
  // The slot a finished hypothesis of normalized score `score` goes to, or
  // SIZE_MAX when the rules drop it (Hugging Face keeps the K best,
  // OpenNMT only the best: it only needs how many have finished).
  size_t finished_slot(size_t s, float score);
  // Row `r` (current buffers) extended by `token` (-1: none, i.e. EOS).
  void finish(size_t s, size_t r, size_t step, int32_t token, float score);
  void add_live(size_t s, size_t r, size_t step, int32_t token, float score);
  // True when every live row of sentence s has a finite log-sum-exp.
  bool rows_finite(size_t s) const;
  // Attention history (req_.attention): keeps this step's weights.
  void keep_attention(size_t rows, size_t step);
  void write_attention(size_t s, size_t slot, Translation* result) const;
  void write_result(size_t s, Translation* result) const;

  EncoderDecoder& network_;
  const Execution& exec_;
  const SearchRequest& req_;
  SearchBuffers& b_;
  const size_t T_;
  const size_t K_;
  const size_t V_;
  const size_t R_;  // rows of the attention history per step
  const size_t S_;  // its source positions per row
  const size_t eos_column_;  // EOS's column (a shortlist always holds it)
  float* logits_ = nullptr;  // [rows, V] of the current step (the network's buffer)
  const kernels::VocabRowKernels kernels_ = kernels::best_vocab_row_kernels();
  size_t cur_ = 0;
  size_t new_rows_ = 0;
};

size_t BatchSearch::column_of(int32_t id) const {
  if (req_.columns == nullptr) return static_cast<size_t>(id);
  const int32_t* end = req_.columns + req_.column_count;
  const int32_t* at = std::lower_bound(req_.columns, end, id);
  return at != end && *at == id ? static_cast<size_t>(at - req_.columns) : SIZE_MAX;
}

void BatchSearch::ban(float* row) const {
  for (size_t i = 0; i < req_.banned_count; ++i) {
    const size_t c = column_of(req_.banned[i]);
    if (c != SIZE_MAX) row[c] = -INFINITY;
  }
}

float BatchSearch::normalized(float score, size_t generated) const {
  if (K_ == 1) return score;
  const float penalty = req_.options->length_penalty;
  switch (req_.rules) {
    case SearchRules::kOpenNMT:
      // The length counts the <s> as well.
      return score / std::pow(static_cast<float>(generated + 1), penalty);
    case SearchRules::kMarian:
      return (score - req_.options->word_penalty * static_cast<float>(generated)) /
             std::pow(static_cast<float>(generated), penalty);
    case SearchRules::kEdgemt:
    case SearchRules::kHuggingFace:
      break;
  }
  return score / std::pow(static_cast<float>(generated), penalty);
}

size_t BatchSearch::finished_slot(size_t s, float score) {
  const size_t first = s * 2 * K_;
  size_t& count = b_.finished_count[s];
  ++b_.finished_total[s];
  if (req_.rules == SearchRules::kOpenNMT && count > 0) {
    return score > b_.finished_score[first] ? first : SIZE_MAX;
  }
  if (req_.rules == SearchRules::kHuggingFace && count >= K_) {
    size_t worst = first;
    for (size_t i = 1; i < count; ++i) {
      if (b_.finished_score[first + i] < b_.finished_score[worst]) worst = first + i;
    }
    return score > b_.finished_score[worst] ? worst : SIZE_MAX;
  }
  return first + count++;
}

void BatchSearch::finish(size_t s, size_t r, size_t step, int32_t token, float score) {
  // Generated length counts the EOS (or the final token at max_len).
  const float final_score = normalized(score, step + 1);
  const size_t slot = finished_slot(s, final_score);
  if (slot == SIZE_MAX) return;
  int32_t* tokens = b_.finished_tokens + slot * T_;
  std::memcpy(tokens, b_.history[cur_] + r * T_, step * sizeof(int32_t));
  size_t length = step;
  if (token >= 0) tokens[length++] = token;
  b_.finished_len[slot] = length;
  b_.finished_raw[slot] = score;
  b_.finished_score[slot] = final_score;
  if (req_.attention) {
    b_.finished_step[slot] = step;
    b_.finished_row[slot] = r;
  }
}

void BatchSearch::add_live(size_t s, size_t r, size_t step, int32_t token, float score) {
  const size_t next = 1 - cur_;
  const size_t i = new_rows_++;
  b_.parent[i] = r;
  b_.row_source[next][i] = s;
  b_.row_score[next][i] = score;
  b_.row_token[i] = token;
  int32_t* history = b_.history[next] + i * T_;
  std::memcpy(history, b_.history[cur_] + r * T_, step * sizeof(int32_t));
  history[step] = token;
  if (req_.attention && step + 1 < T_) b_.step_parent[(step + 1) * R_ + i] = r;
}

void BatchSearch::keep_attention(size_t rows, size_t step) {
  size_t stride = 0;
  const float* weights = network_.attention_weights(&stride);
  const size_t* offsets = req_.sources->offsets;
  for (size_t r = 0; r < rows; ++r) {
    const size_t s = b_.row_source[cur_][r];
    std::memcpy(b_.step_attention + (step * R_ + r) * S_, weights + r * stride,
                (offsets[s + 1] - offsets[s]) * sizeof(float));
  }
}

void BatchSearch::write_attention(size_t s, size_t slot, Translation* result) const {
  const size_t columns = req_.sources->offsets[s + 1] - req_.sources->offsets[s];
  const size_t last = b_.finished_step[slot];
  size_t r = b_.finished_row[slot];
  // Back from the step that chose the last token, through the parents.
  for (size_t u = last + 1; u-- > 0;) {
    std::memcpy(result->attention + u * columns, b_.step_attention + (u * R_ + r) * S_,
                columns * sizeof(float));
    if (u > 0) r = b_.step_parent[u * R_ + r];
  }
  result->attention_rows = last + 1;
  result->attention_columns = columns;
}

void BatchSearch::score_rows(size_t rows, size_t step) {
  // The per-row vocabulary passes are independent: run them on the pool
  // (results do not depend on the thread count). Each row's log-sum-exp is
  // over all its logits, banned ones included; banned logits are then set to
  // -inf in place, so neither the arg-max nor the beam scan can pick them.
  float* logits = logits_;
  const size_t eos = eos_column_;
  const kernels::VocabRowKernels& k = kernels_;
  auto task = [&](size_t r, size_t) {
    if (picked(r)) {
      // Every logit of the row is finite (decode_step_argmax), so its
      // log-sum-exp is: the row is usable.
      b_.row_lse[r] = 0.0f;
      const bool force_eos = forces_eos(b_.row_source[cur_][r], step);
      b_.row_best[r] = force_eos ? eos : b_.row_pick[r];
      return;
    }
    float* row = logits + r * V_;
    if (K_ == 1 && !req_.greedy_scores) {
      // No score to report: only whether the row's log-sum-exp is finite
      // matters (select_greedy fails the sentence otherwise), not its value.
      b_.row_lse[r] = kernels::log_sum_exp_finite(row, V_) ? 0.0f : NAN;
      ban(row);
      const bool force_eos = forces_eos(b_.row_source[cur_][r], step);
      b_.row_best[r] = force_eos ? eos : k.argmax(row, V_);
      return;
    }
    const kernels::RowNormalizer norm = k.normalize(row, V_);
    b_.row_norm[r] = norm;
    b_.row_lse[r] = norm.max + norm.log_total;
    ban(row);
    if (K_ == 1) {
      const bool force_eos = forces_eos(b_.row_source[cur_][r], step);
      b_.row_best[r] = force_eos ? eos : k.argmax(row, V_);
    }
  };
  parallel_for(exec_.parallel, rows, V_ * k.picoseconds_per_entry / 1000, task);
  if (K_ == 1) return;
  // Beam: each sentence's top 2K candidates over its live rows × vocab, also
  // independent per sentence. A candidate's score is
  // row score + log_softmax(logits)[token], computed as log_softmax() would
  // (kernels::beam_score); the scan skips, 16 at a time, entries that cannot
  // beat the k-th best kept so far, and feeds the rest to TopK in index order.
  const size_t batch = req_.sources->count;
  auto candidates = [&](size_t s, size_t) {
    b_.candidate_count[s] = 0;
    // An overflowed row's log-sum-exp is NaN: select_beam fails the sentence.
    if (b_.live_count[s] == 0 || !rows_finite(s)) return;
    const size_t begin = b_.live_begin[s];
    const size_t capacity = candidate_capacity(s, step);
    TopK top(b_.candidate_score + s * 2 * K_, b_.candidate_index + s * 2 * K_, capacity);
    for (size_t j = 0; j < b_.live_count[s]; ++j) {
      const size_t r = begin + j;
      const float* row = logits + r * V_;  // logits, banned = -inf
      const float base = b_.row_score[cur_][r];
      const kernels::RowNormalizer norm = b_.row_norm[r];
      if (forces_eos(b_.row_source[cur_][r], step)) {
        // Hugging Face's last step: EOS is the row's only candidate.
        top.push(kernels::beam_score(row[eos], base, norm), j * V_ + eos);
        continue;
      }
      for (size_t v = 0;; ++v) {
        // TopK keeps nothing at or below its k-th best once full.
        const float threshold = top.size() < capacity ? -INFINITY
                                : capacity == 0        ? INFINITY
                                                       : top.score(capacity - 1);
        v = k.first_above(row, v, V_, base, norm, threshold);
        if (v >= V_) break;
        top.push(kernels::beam_score(row[v], base, norm), j * V_ + v);
      }
    }
    b_.candidate_count[s] = top.size();
  };
  // ~0.1 ns per entry scanned, plus a push per survivor.
  parallel_for(exec_.parallel, batch, K_ * V_ / 8, candidates);
}

size_t BatchSearch::candidate_capacity(size_t s, size_t step) const {
  switch (req_.rules) {
    case SearchRules::kOpenNMT: return K_;
    case SearchRules::kMarian: return step == 0 ? K_ : b_.live_count[s];
    case SearchRules::kEdgemt:
    case SearchRules::kHuggingFace:
      break;
  }
  return 2 * K_;
}

bool BatchSearch::rows_finite(size_t s) const {
  bool finite = true;
  for (size_t j = 0; j < b_.live_count[s]; ++j) {
    finite &= std::isfinite(b_.row_lse[b_.live_begin[s] + j]);
  }
  return finite;
}

void BatchSearch::select_greedy(size_t s, size_t step) {
  const size_t r = b_.live_begin[s];
  const float* logits = logits_ + r * V_;
  const size_t token = b_.row_best[r];
  if (!picked(r)) {
    if (!std::isfinite(b_.row_lse[r])) {
      b_.failed[s] = kNonFiniteScores;
      return;
    }
    // The arg-max (taken with banned logits set to -inf) is V_ when every
    // entry is NaN (impossible with a finite log-sum-exp, but the id must be
    // valid by construction), or -inf when only banned tokens are finite.
    if (token >= V_ || logits[token] == -INFINITY) {
      b_.failed[s] = kNoFiniteCandidate;
      return;
    }
  }
  const float score = !req_.greedy_scores ? NAN
                      : b_.row_score[cur_][r] + (logits[token] - b_.row_lse[r]);
  const int32_t id = id_of(token);
  if (id == req_.special->eos) {
    finish(s, r, step, -1, score);
  } else if (step + 1 >= b_.max_len[s]) {
    finish(s, r, step, id, score);
  } else {
    add_live(s, r, step, id, score);
  }
}

void BatchSearch::select_beam(size_t s, size_t step) {
  if (!rows_finite(s)) {
    b_.failed[s] = kNonFiniteScores;
    return;
  }
  if (b_.candidate_count[s] == 0) {
    b_.failed[s] = kNoFiniteCandidate;
    return;
  }
  const size_t begin = b_.live_begin[s];
  const float* scores = b_.candidate_score + s * 2 * K_;     // best first (score_rows)
  const size_t* indices = b_.candidate_index + s * 2 * K_;  // j·V + token
  const size_t first_new = new_rows_;
  // edgemt and Hugging Face read 2K candidates, of which only EOS of rank
  // < K finish; OpenNMT and Marian read exactly the candidates they keep.
  const bool eos_ranks_limited =
      req_.rules == SearchRules::kEdgemt || req_.rules == SearchRules::kHuggingFace;
  size_t live = 0;
  for (size_t rank = 0; rank < b_.candidate_count[s] && live < K_; ++rank) {
    const size_t r = begin + indices[rank] / V_;
    const int32_t token = id_of(indices[rank] % V_);
    if (token == req_.special->eos) {
      if (!eos_ranks_limited || rank < K_) finish(s, r, step, -1, scores[rank]);
      if (rank == 0) b_.best_ended[s] = 1;
    } else {
      add_live(s, r, step, token, scores[rank]);
      ++live;
    }
  }
  if (done(s, step, scores[0])) {
    new_rows_ = first_new;  // done: drop the live ones
  } else if (step + 1 >= b_.max_len[s]) {
    // Out of length: every live hypothesis competes as it is.
    const size_t next = 1 - cur_;
    for (size_t i = first_new; i < new_rows_; ++i) {
      const float final_score = normalized(b_.row_score[next][i], step + 1);
      const size_t slot = finished_slot(s, final_score);
      if (slot == SIZE_MAX) continue;
      std::memcpy(b_.finished_tokens + slot * T_, b_.history[next] + i * T_,
                  (step + 1) * sizeof(int32_t));
      b_.finished_len[slot] = step + 1;
      b_.finished_raw[slot] = b_.row_score[next][i];
      b_.finished_score[slot] = final_score;
      if (req_.attention) {
        b_.finished_step[slot] = step;
        b_.finished_row[slot] = b_.parent[i];  // still the row of this step
      }
    }
    new_rows_ = first_new;
  }
}

bool BatchSearch::done(size_t s, size_t step, float best_candidate) const {
  const size_t finished = b_.finished_count[s];
  switch (req_.rules) {
    case SearchRules::kEdgemt:
      return finished >= K_;
    case SearchRules::kHuggingFace: {
      // Done when no live hypothesis can beat the K kept: the best
      // candidate's score, normalized at this length, is no better than
      // the worst kept.
      if (finished < K_) return false;
      const float* kept = b_.finished_score + s * 2 * K_;
      float worst = kept[0];
      for (size_t i = 1; i < finished; ++i) worst = std::min(worst, kept[i]);
      return worst >= normalized(best_candidate, step + 1);
    }
    case SearchRules::kOpenNMT:
      // OpenNMT-py also wants K finished (beam_search.py update_finished).
      return b_.best_ended[s] != 0 && b_.finished_total[s] >= K_;
    case SearchRules::kMarian:
      return false;  // runs until no hypothesis is live
  }
  return false;
}

void BatchSearch::write_result(size_t s, Translation* result) const {
  // A sentence ends with at least one finished hypothesis unless it failed
  // (a greedy row always finishes or stays live; beam search finalizes
  // every live hypothesis at max_len): checked anyway, so a result is never
  // read from slots this sentence did not write.
  if (b_.failed[s] != kNotFailed || b_.finished_count[s] == 0) {
    result->length = 0;
    result->score = 0.0f;
    result->status = StatusCode::kNumericError;
    const uint8_t failure = b_.failed[s];
    result->error = failure_message(failure != kNotFailed ? failure : uint8_t{kNoFiniteCandidate});
    return;
  }
  size_t best = 0;
  const size_t first = s * 2 * K_;
  for (size_t i = 1; i < b_.finished_count[s]; ++i) {
    if (b_.finished_score[first + i] > b_.finished_score[first + best]) best = i;
  }
  const size_t slot = first + best;
  const size_t length = b_.finished_len[slot];
  std::memcpy(result->tokens, b_.finished_tokens + slot * T_, length * sizeof(int32_t));
  result->length = length;
  result->score = b_.finished_score[slot];
  result->status = StatusCode::kOk;
  result->error = "";
  if (req_.attention && result->attention != nullptr) write_attention(s, slot, result);
}

Status BatchSearch::run(Translation* results) {
  const size_t batch = req_.sources->count;
  {
    ProfileScope timed(exec_.profile, ProfilePart::kSearch);
    for (size_t s = 0; s < batch; ++s) {
      b_.live_begin[s] = s;
      b_.live_count[s] = 1;
      b_.finished_count[s] = 0;
      b_.failed[s] = kNotFailed;
      b_.best_ended[s] = 0;
      b_.finished_total[s] = 0;
      b_.max_len[s] = req_.max_len[s];
      b_.row_source[0][s] = s;
      b_.row_score[0][s] = 0.0f;
      b_.row_token[s] = req_.special->decoder_start;
    }
  }
  size_t rows = batch;
  for (size_t step = 0; rows > 0; ++step) {
    // Hypothesis j of sentence s keeps its decoder state in slot s·K + j.
    for (size_t s = 0; s < batch; ++s) {
      for (size_t j = 0; j < b_.live_count[s]; ++j) b_.row_slot[b_.live_begin[s] + j] = s * K_ + j;
    }
    DecoderStep decoder_step;
    decoder_step.rows = rows;
    decoder_step.step = step;
    decoder_step.tokens = b_.row_token;
    decoder_step.row_source = b_.row_source[cur_];
    decoder_step.row_slot = b_.row_slot;
    decoder_step.attention = req_.attention;
    if (K_ == 1 && !req_.greedy_scores) {
      EDGEMT_RETURN_IF_ERROR(network_.decode_step_argmax(exec_, *req_.sources, decoder_step,
                                                         req_.banned, req_.banned_count,
                                                         b_.row_pick));
    } else {
      EDGEMT_RETURN_IF_ERROR(network_.decode_step(exec_, *req_.sources, decoder_step));
    }
    logits_ = network_.logits();
    if (req_.attention) keep_attention(rows, step);

    // Everything from here to the next decoder step is search bookkeeping.
    ProfileScope timed(exec_.profile, ProfilePart::kSearch);
    score_rows(rows, step);
    new_rows_ = 0;
    for (size_t s = 0; s < batch; ++s) {
      if (b_.live_count[s] == 0) continue;
      const size_t old_begin = b_.live_begin[s];
      const size_t old_count = b_.live_count[s];
      const size_t first_new = new_rows_;
      if (K_ == 1) {
        select_greedy(s, step);
      } else {
        select_beam(s, step);
      }
      b_.live_begin[s] = first_new;
      b_.live_count[s] = new_rows_ - first_new;
      if (b_.live_count[s] == 0) {
        write_result(s, &results[s]);
        continue;
      }
      // The sentence's state slots follow its surviving hypotheses; nothing
      // moves when every one kept its place (always so for greedy).
      bool identity = true;
      for (size_t j = 0; j < b_.live_count[s]; ++j) {
        b_.parent[first_new + j] -= old_begin;  // now local to the sentence
        identity &= b_.parent[first_new + j] == j;
      }
      if (!identity) {
        network_.reorder_state(exec_, s * K_, old_count, b_.parent + first_new, b_.live_count[s], step + 1);
      }
    }
    cur_ = 1 - cur_;
    rows = new_rows_;
  }
  return Status::ok();
}

}  // namespace

Status run_search(EncoderDecoder& network, const Execution& execution, const SearchRequest& request,
                  SearchBuffers* buffers, Translation* results) {
  BatchSearch search(network, execution, request, buffers);
  return search.run(results);
}

}  // namespace edgemt
