#include "edgemt/translator.h"

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <new>

#include "core/arena.h"
#include "core/parallel.h"
#include "core/profile.h"
#include "core/thread_pool.h"
#include "core/xnnpack_runtime.h"
#include "edgemt/limits.h"
#include "models/encoder_decoder.h"
#include "models/families.h"
#include "search/search.h"
#include "search/shortlist.h"

namespace edgemt {

static_assert(TranslatorOptions{}.min_parallel_nanoseconds == kMinParallelNanoseconds,
              "the public default and core/parallel.h agree");

struct Translator::Impl {
  const Model* model = nullptr;
  std::unique_ptr<EncoderDecoder> network;  // the model's family
  std::unique_ptr<ThreadPool> pool;  // nullptr with 1 thread
  size_t workers = 1;
  size_t min_parallel_nanoseconds = kMinParallelNanoseconds;
  // describe_compute_path()'s longest is ~250, Marian's sums add ~90.
  char compute_path[400] = "f32";
  Profile* profile = nullptr;  // caller's, while attached
  bool greedy_scores = true;   // set_greedy_scores
  bool use_shortlist = false;  // set_shortlist (planned at the next prepare())

  // Every run-phase buffer, carved from the arena by plan().
  struct Buffers {
    SearchBuffers search;
    int32_t* packed_ids = nullptr;  // [max_batch * max_source_len]
    size_t* offsets = nullptr;      // [max_batch + 1]
    size_t* max_len = nullptr;      // [max_batch]
    // With a shortlist: the batch's candidate ids [V] and the marks that
    // make them [V] (search/shortlist.h); nullptr without.
    int32_t* candidates = nullptr;
    uint8_t* candidate_marks = nullptr;
  };

  // Prepared state: replaced only by a prepare() that succeeds.
  bool prepared = false;
  Limits limits;
  bool shortlist_planned = false;  // the prepared plan has the shortlist's buffers
  void* owned_arena = nullptr;
  Arena planner;  // planning scratch of prepare() (the last plan made)
  Buffers buffers;

  ~Impl() { std::free(owned_arena); }  // the pool joins its workers

  Execution execution() const {
    Execution e;
    e.parallel = Parallel(pool.get(), min_parallel_nanoseconds);
    e.profile = profile;
    return e;
  }

  // Requests every run-phase buffer from `arena` (planning or bound): the
  // family's (into its pending set) and the translator's own.
  void plan(const Limits& l, Arena* arena, Buffers* out) const {
    RunShape shape;
    shape.source_rows = l.max_batch * l.max_source_len;
    shape.max_source_len = l.max_source_len;
    shape.rows = l.max_batch * l.max_beam;
    shape.max_beam = l.max_beam;
    shape.max_target_len = l.max_target_len;
    shape.workers = workers;
    shape.attention = l.attention;
    shape.attention_layer = l.attention_layer;
    shape.attention_head = l.attention_head;
    shape.output_columns = use_shortlist ? gathered_columns(l) : 0;
    network->plan(shape, arena);
    SearchShape search_shape;
    search_shape.max_batch = l.max_batch;
    search_shape.max_beam = l.max_beam;
    search_shape.max_target_len = l.max_target_len;
    search_shape.max_source_len = l.max_source_len;
    search_shape.attention = l.attention;
    plan_search(search_shape, arena, &out->search);
    out->packed_ids =
        arena->allocate<int32_t>(l.max_batch * l.max_source_len, {run_step::kPack, encoder_step(0)});
    out->offsets = arena->allocate<size_t>(l.max_batch + 1, {run_step::kPack, run_step::kDecodeSearch});
    out->max_len = arena->allocate<size_t>(l.max_batch, {run_step::kPack, run_step::kDecodeSearch});
    if (use_shortlist) {
      const size_t vocab = model->vocab_size();
      out->candidates = arena->allocate<int32_t>(vocab, {run_step::kPack, run_step::kDecodeSearch});
      out->candidate_marks = arena->allocate<uint8_t>(vocab, {run_step::kPack, run_step::kPack});
    }
  }

  // How many output columns a batch's candidates may have and still be
  // gathered into a pack of their own: all a batch of these limits can
  // bring, but at most a quarter of the vocabulary (at least 2048 ids) or
  // kGatheredPerSentence per sentence of the batch (at most half the
  // vocabulary), whichever is more, so that the pack stays small beside
  // the model; a batch with more takes a slower way at every step (every
  // logit, or its candidates packed anew; no shortcut) to the same values.
  // Where every logit is slow (an f32 projection left in the file for the
  // shortlist, no shortcut), the whole vocabulary: the pack then takes the
  // place of the matrix's own (not made).
  //
  // The trained tiny11 student (vocabulary 8,000, shortlist 50 50) over
  // Multi30k's test sentences, sorted, batches of 32: 1,069-2,703
  // candidates, up to 84 a sentence; with the quarter's 2,048, 8 of 32
  // batches took the slow way. With room for 128 a sentence (4,000
  // columns here: about 5 MB of f32 pack and int8 rows, inside the arena's
  // peak, which the encoder sets: 281.3 MiB either way), greedy at batch 32
  // on 1 thread, means of 10 alternate runs, Intel Xeon (cpu family 6 model
  // 167): fp32 2.29 -> 2.24 s, int8 1.18 -> 1.13 s.
  static constexpr size_t kGatheredPerSentence = 128;
  size_t gathered_columns(const Limits& l) const {
    const LexicalShortlist& list = *model->shortlist();
    const size_t vocab = model->vocab_size();
    size_t longest = 0;
    for (size_t s = 0; s < list.source_ids; ++s) {
      const size_t length = list.offsets[s + 1] - list.offsets[s];
      longest = length > longest ? length : longest;
    }
    const size_t per_token = longest + (list.add_source_ids ? 1 : 0);
    const size_t reachable = list.first + l.max_batch * l.max_source_len * per_token + 1 + 7;
    const size_t quarter = vocab / 4 > 2048 ? vocab / 4 : 2048;
    const size_t for_sentences = kGatheredPerSentence * l.max_batch;
    const size_t per_batch = for_sentences < vocab / 2 ? for_sentences : vocab / 2;
    const size_t cap = network->every_logit_slow() ? vocab : quarter > per_batch ? quarter : per_batch;
    size_t columns = reachable < cap ? reachable : cap;
    return columns < vocab ? columns : vocab;
  }

  // Lays the plan in `planner` (made by plan_arena for `l`) over caller
  // memory and makes it the prepared one. Until this succeeds the translator
  // stays prepared as it was: its buffers are only replaced at the end.
  Status bind_plan(const Limits& l, void* base, size_t size) {
    if (base == nullptr || reinterpret_cast<uintptr_t>(base) % Arena::kAlignment != 0) {
      return Status::error(StatusCode::kInvalidArgument, "arena must be %zu-byte aligned",
                           Arena::kAlignment);
    }
    if (size < planner.size()) {
      return Status::error(StatusCode::kOutOfMemory, "arena of %zu bytes is too small: %zu needed",
                           size, planner.size());
    }
    Buffers bound;
    planner.bind(base);
    plan(l, &planner, &bound);
    if (planner.overflowed()) {
      return Status::error(StatusCode::kOutOfMemory, "arena layout differs from its plan (internal error)");
    }
    buffers = bound;
    shortlist_planned = use_shortlist;
    network->commit_plan();
    limits = l;
    prepared = true;
    if (owned_arena != nullptr && owned_arena != base) {
      std::free(owned_arena);
      owned_arena = nullptr;
    }
    return Status::ok();
  }

  // Checks the limits and plans the arena for them into `arena`.
  Status plan_arena(const Limits& l, Arena* arena) const {
    EDGEMT_RETURN_IF_ERROR(check_limits(l));
    arena->reset();
    Buffers ignored;
    plan(l, arena, &ignored);
    if (!arena->finish_plan()) {
      return Status::error(
          StatusCode::kOutOfMemory, "arena plan failed (internal error: %zu buffers requested, at most %zu)",
          arena->request_count(), Arena::kMaxRequests);
    }
    return Status::ok();
  }

  Status check_limits(const Limits& l) const {
    if (l.max_batch == 0 || l.max_beam == 0 || l.max_source_len == 0 || l.max_target_len == 0) {
      return Status::error(StatusCode::kInvalidArgument, "limits must all be at least 1");
    }
    // edgemt/limits.h: with these bounds no arena size computation overflows.
    if (l.max_batch > kMaxBatch || l.max_beam > kMaxBeam) {
      return Status::error(StatusCode::kInvalidArgument,
                           "limits exceed what a translator accepts: max_batch %zu (at most %zu), "
                           "max_beam %zu (at most %zu)",
                           l.max_batch, kMaxBatch, l.max_beam, kMaxBeam);
    }
    const uint32_t longest = model->max_sequence_length();
    if (l.max_source_len > longest || l.max_target_len > longest) {
      return Status::error(StatusCode::kInvalidArgument,
                           "limits exceed the model's longest sequence (%u tokens): source %zu, target %zu",
                           longest, l.max_source_len, l.max_target_len);
    }
    if (l.attention) {
      const Status choice = network->check_attention_choice(l.attention_layer, l.attention_head);
      if (!choice.is_ok()) {
        return Status::error(choice.code(), "attention weights of this %s model: %s", model->family(),
                             choice.message());
      }
    }
    return Status::ok();
  }

  // A result that asks for attention weights (Translation::attention):
  // planned, provided by the family, and room for max_len rows of the
  // source's length.
  Status check_attention_request(const Translation& result, size_t s, size_t max_len,
                                 size_t source_len) const {
    if (!limits.attention) {
      return Status::error(StatusCode::kFailedPrecondition,
                           "result %zu asks for attention weights; prepare() with Limits::attention", s);
    }
    size_t stride = 0;
    if (network->attention_weights(&stride) == nullptr) {
      return Status::error(StatusCode::kUnsupported,
                           "this model family (%s) does not provide attention weights", model->family());
    }
    if (result.attention_capacity / source_len < max_len) {
      return Status::error(StatusCode::kInvalidArgument,
                           "result %zu has room for %zu attention weights; up to %zu x %zu may be written",
                           s, result.attention_capacity, max_len, source_len);
    }
    return Status::ok();
  }

  // Validates the sources and packs them into packed_ids/offsets.
  Status pack_sources(const TokenSpan* sources, size_t count) {
    const uint32_t vocab = model->source_vocab_size();
    size_t* offsets = buffers.offsets;
    offsets[0] = 0;
    for (size_t s = 0; s < count; ++s) {
      const TokenSpan& source = sources[s];
      if (source.length == 0 || source.ids == nullptr) {
        return Status::error(StatusCode::kInvalidArgument, "source %zu is empty", s);
      }
      if (source.length > limits.max_source_len) {
        return Status::error(StatusCode::kOutOfRange,
                             "source %zu has %zu tokens; the limit is %zu (the model accepts %u)",
                             s, source.length, limits.max_source_len, model->max_sequence_length());
      }
      for (size_t i = 0; i < source.length; ++i) {
        if (source.ids[i] < 0 || static_cast<uint32_t>(source.ids[i]) >= vocab) {
          return Status::error(StatusCode::kInvalidArgument,
                               "source %zu token %zu has id %d, outside the vocabulary [0, %u)", s,
                               i, source.ids[i], vocab);
        }
      }
      std::memcpy(buffers.packed_ids + offsets[s], source.ids, source.length * sizeof(int32_t));
      offsets[s + 1] = offsets[s] + source.length;
    }
    return Status::ok();
  }
};

Translator::Translator(Impl* impl) : impl_(impl) {}
Translator::~Translator() { delete impl_; }

DecodeOptions decode_options(const Model& model) {
  const DecodingDefaults& defaults = model.decoding();
  DecodeOptions options;
  options.beam_size = defaults.beam_size;
  options.length_penalty = defaults.length_penalty;
  options.max_len_a = defaults.max_len_a;
  options.max_len_b = defaults.max_len_b;
  options.word_penalty = defaults.word_penalty;
  return options;
}

namespace {

// TranslatorOptions::marian_int8_sums as NetworkOptions' lane count
// (kernels/int8_gemm_marian.h), checked against the file's arithmetic.
Status marian_lanes(const Model& model, MarianInt8Sums sums, int32_t* lanes) {
  switch (sums) {
    case MarianInt8Sums::kExact: *lanes = 0; return Status::ok();
    case MarianInt8Sums::kSsse3: *lanes = 8; break;
    case MarianInt8Sums::kAvx2: *lanes = 16; break;
    case MarianInt8Sums::kAvx512bw: *lanes = 32; break;
    default:
      return Status::error(StatusCode::kInvalidArgument, "unknown Marian int8 sums %d",
                           static_cast<int>(sums));
  }
  const QuantizationScheme scheme = model.quantization();
  if (scheme != QuantizationScheme::kInt8PerTensorDynamic &&
      scheme != QuantizationScheme::kInt8PerTensorStatic) {
    return Status::error(StatusCode::kInvalidArgument,
                         "Marian's int8 sums apply to int8 files in Marian's arithmetic (converted "
                         "from a Marian intgemm8 model); this file's scheme is %s",
                         quantization_scheme_name(scheme));
  }
  return Status::ok();
}

}  // namespace

Status Translator::create(const Model& model, const TranslatorOptions& options,
                          std::unique_ptr<Translator>* out) {
  if (options.threads == 0 || options.threads > 256) {
    return Status::error(StatusCode::kInvalidArgument, "threads must be in [1, 256], got %zu",
                         options.threads);
  }
  NetworkOptions network;
  network.threads = options.threads;
  EDGEMT_RETURN_IF_ERROR(marian_lanes(model, options.marian_int8_sums, &network.marian_saturating_lanes));
  EDGEMT_RETURN_IF_ERROR(ensure_xnnpack_initialized());
  Impl* impl = new (std::nothrow) Impl;
  if (impl == nullptr) return Status::error(StatusCode::kOutOfMemory, "cannot allocate translator");
  std::unique_ptr<Translator> translator(new (std::nothrow) Translator(impl));
  if (!translator) {
    delete impl;
    return Status::error(StatusCode::kOutOfMemory, "cannot allocate translator");
  }
  impl->model = &model;
  impl->use_shortlist = model.shortlist() != nullptr;
  impl->workers = options.threads;
  impl->min_parallel_nanoseconds = options.min_parallel_nanoseconds;
  if (options.threads > 1) EDGEMT_RETURN_IF_ERROR(ThreadPool::create(options.threads, &impl->pool));
  EDGEMT_RETURN_IF_ERROR(create_encoder_decoder(model, network, &impl->network));
  impl->network->describe_compute_path(impl->compute_path, sizeof(impl->compute_path));
  if (network.marian_saturating_lanes != 0) {
    const size_t used = std::strlen(impl->compute_path);
    std::snprintf(impl->compute_path + used, sizeof(impl->compute_path) - used,
                  "; Marian's int8 sums of a CPU without VNNI instead (%d lanes of 16 bits, "
                  "saturating: kernels of their own)", static_cast<int>(network.marian_saturating_lanes));
  }
  *out = std::move(translator);
  return Status::ok();
}

Status Translator::arena_bytes(const Limits& limits, size_t* bytes) const {
  ArenaPlan plan;
  EDGEMT_RETURN_IF_ERROR(arena_plan(limits, &plan));
  *bytes = plan.bytes;
  return Status::ok();
}

Status Translator::arena_plan(const Limits& limits, ArenaPlan* plan) const {
  Arena arena;
  EDGEMT_RETURN_IF_ERROR(impl_->plan_arena(limits, &arena));
  plan->bytes = arena.size();
  plan->unshared_bytes = arena.unshared_size();
  plan->buffers = arena.request_count();
  return Status::ok();
}

Status Translator::prepare(const Limits& limits) {
  Impl& impl = *impl_;
  EDGEMT_RETURN_IF_ERROR(impl.network->finish_load(impl.use_shortlist));
  EDGEMT_RETURN_IF_ERROR(impl.plan_arena(limits, &impl.planner));
  const size_t bytes = impl.planner.size();  // a multiple of Arena::kAlignment
  void* arena = std::aligned_alloc(Arena::kAlignment, bytes);
  if (arena == nullptr) {
    return Status::error(StatusCode::kOutOfMemory, "cannot allocate a %zu-byte arena", bytes);
  }
  const Status status = impl.bind_plan(limits, arena, bytes);
  if (!status.is_ok()) {
    std::free(arena);
    return status;
  }
  std::free(impl.owned_arena);
  impl.owned_arena = arena;
  return Status::ok();
}

Status Translator::prepare(const Limits& limits, void* arena_base, size_t arena_size) {
  EDGEMT_RETURN_IF_ERROR(impl_->network->finish_load(impl_->use_shortlist));
  EDGEMT_RETURN_IF_ERROR(impl_->plan_arena(limits, &impl_->planner));
  return impl_->bind_plan(limits, arena_base, arena_size);
}

const Limits& Translator::limits() const { return impl_->limits; }
const char* Translator::compute_path() const { return impl_->compute_path; }
void Translator::set_profile(Profile* profile) { impl_->profile = profile; }

Status Translator::set_greedy_scores(bool report) {
  EDGEMT_RETURN_IF_ERROR(impl_->network->set_argmax_shortcut(!report));
  impl_->greedy_scores = report;
  return Status::ok();
}

bool Translator::greedy_scores() const { return impl_->greedy_scores; }

Status Translator::set_shortlist(bool use) {
  if (use && impl_->model->shortlist() == nullptr) {
    return Status::error(StatusCode::kFailedPrecondition, "the model file has no shortlist");
  }
  impl_->use_shortlist = use;
  return Status::ok();
}

bool Translator::shortlist() const { return impl_->use_shortlist; }

size_t Translator::greedy_shortcut_bytes() const { return impl_->network->argmax_shortcut_bytes(); }

Status Translator::translate(const TokenSpan* sources, size_t count, const DecodeOptions& options,
                             Translation* results) {
  Impl& impl = *impl_;
  ProfileScope timed(impl.profile, ProfilePart::kTranslate);
  if (!impl.prepared) {
    return Status::error(StatusCode::kFailedPrecondition, "translate() called before prepare()");
  }
  if (count == 0) return Status::ok();
  if (sources == nullptr || results == nullptr) {
    return Status::error(StatusCode::kInvalidArgument, "sources and results must not be null");
  }
  if (count > impl.limits.max_batch) {
    return Status::error(StatusCode::kInvalidArgument, "batch of %zu sentences exceeds the prepared limit %zu",
                         count, impl.limits.max_batch);
  }
  if (options.beam_size == 0 || options.beam_size > impl.limits.max_beam) {
    return Status::error(StatusCode::kInvalidArgument, "beam size %zu is outside [1, %zu]",
                         options.beam_size, impl.limits.max_beam);
  }
  if (!std::isfinite(options.length_penalty) || !std::isfinite(options.max_len_a) ||
      !std::isfinite(options.max_len_b) || options.max_len_a < 0.0f ||
      !std::isfinite(options.word_penalty)) {
    return Status::error(StatusCode::kInvalidArgument,
                         "length_penalty, word_penalty, max_len_a and max_len_b must be finite "
                         "(a >= 0)");
  }
  EDGEMT_RETURN_IF_ERROR(impl.pack_sources(sources, count));
  // A call reads every weight at least once, at most ~32 bytes per ns: when
  // that alone is worth waking the pool's sleeping workers, wake them now so
  // that they take part in the call's jobs, even ones too small to wake
  // them (ThreadPool::wake_for).
  if (impl.pool != nullptr) impl.pool->wake_for(impl.model->file_size() / 32);
  bool wants_attention = false;
  for (size_t s = 0; s < count; ++s) {
    // floor(a·len + b) in double, as tools/edgemt_tools/SEARCH.md says
    // (Marian: ceil, as it stops once the length reaches factor · len, a
    // product it takes in float32: 1.2f · 5 is 6, not 6.0000002).
    const bool marian = impl.model->decoding().rules == SearchRules::kMarian;
    const double product =
        marian ? static_cast<double>(options.max_len_a * static_cast<float>(sources[s].length))
               : static_cast<double>(options.max_len_a) * static_cast<double>(sources[s].length);
    const double raw = product + static_cast<double>(options.max_len_b);
    const double wanted = marian ? std::ceil(raw) : std::floor(raw);
    size_t max_len = impl.limits.max_target_len;
    if (wanted < static_cast<double>(max_len)) max_len = wanted < 1.0 ? 1 : static_cast<size_t>(wanted);
    if (results[s].tokens == nullptr || results[s].capacity < max_len) {
      return Status::error(StatusCode::kInvalidArgument,
                           "result %zu has room for %zu tokens; up to %zu may be generated", s,
                           results[s].capacity, max_len);
    }
    if (results[s].attention != nullptr) {
      EDGEMT_RETURN_IF_ERROR(impl.check_attention_request(results[s], s, max_len, sources[s].length));
      wants_attention = true;
    }
    impl.buffers.max_len[s] = max_len;
    results[s].attention_rows = 0;
    results[s].attention_columns = 0;
    results[s].length = 0;
    results[s].status = StatusCode::kOk;
    results[s].error = "";
  }

  PackedSequences packed;
  packed.count = count;
  packed.offsets = impl.buffers.offsets;
  const Execution execution = impl.execution();
  size_t candidates = 0;
  if (impl.shortlist_planned) {
    // From the packed ids, before the encoder's buffers take their memory.
    candidates = shortlist_candidates(*impl.model->shortlist(), impl.buffers.packed_ids,
                                      impl.buffers.offsets[count], impl.model->special_tokens().eos,
                                      impl.model->vocab_size(), impl.buffers.candidate_marks,
                                      impl.buffers.candidates);
  }
  EDGEMT_RETURN_IF_ERROR(impl.network->encode(execution, impl.buffers.packed_ids, packed));
  impl.network->select_output_columns(impl.shortlist_planned ? impl.buffers.candidates : nullptr,
                                      candidates);

  SearchRequest request;
  request.sources = &packed;
  request.options = &options;
  request.special = &impl.model->special_tokens();
  request.rules = impl.model->decoding().rules;
  request.banned = impl.model->decoding().banned_tokens;
  request.banned_count = impl.model->decoding().banned_count;
  request.vocab = impl.model->vocab_size();
  if (impl.shortlist_planned) {
    request.columns = impl.buffers.candidates;
    request.column_count = candidates;
  }
  request.max_len = impl.buffers.max_len;
  request.attention = wants_attention;
  request.greedy_scores = impl.greedy_scores;
  return run_search(*impl.network, execution, request, &impl.buffers.search, results);
}

Status Translator::force_decode(const TokenSpan& source, const TokenSpan& target, float* logits) {
  Impl& impl = *impl_;
  if (!impl.prepared) {
    return Status::error(StatusCode::kFailedPrecondition, "force_decode() called before prepare()");
  }
  if (target.length > impl.limits.max_target_len || (target.length > 0 && target.ids == nullptr)) {
    return Status::error(StatusCode::kOutOfRange, "target of %zu tokens exceeds the limit %zu",
                         target.length, impl.limits.max_target_len);
  }
  const uint32_t vocab = impl.model->vocab_size();
  for (size_t i = 0; i < target.length; ++i) {
    if (target.ids[i] < 0 || static_cast<uint32_t>(target.ids[i]) >= vocab) {
      return Status::error(StatusCode::kInvalidArgument, "target token %zu has id %d, outside the vocabulary", i,
                           target.ids[i]);
    }
  }
  EDGEMT_RETURN_IF_ERROR(impl.pack_sources(&source, 1));
  PackedSequences packed;
  packed.count = 1;
  packed.offsets = impl.buffers.offsets;
  const Execution execution = impl.execution();
  EDGEMT_RETURN_IF_ERROR(impl.network->encode(execution, impl.buffers.packed_ids, packed));
  impl.network->select_output_columns(nullptr, 0);  // every logit, shortlist or not

  size_t row_source = 0;
  int32_t* token = impl.buffers.search.row_token;
  for (size_t step = 0; step < target.length; ++step) {
    token[0] = step == 0 ? impl.model->special_tokens().decoder_start : target.ids[step - 1];
    DecoderStep decoder_step;
    decoder_step.rows = 1;
    decoder_step.step = step;
    decoder_step.tokens = token;
    decoder_step.row_source = &row_source;
    decoder_step.row_slot = &row_source;  // one sentence: state slot 0
    EDGEMT_RETURN_IF_ERROR(impl.network->decode_step(execution, packed, decoder_step));
    std::memcpy(logits + step * vocab, impl.network->logits(), vocab * sizeof(float));
  }
  return Status::ok();
}

}  // namespace edgemt
