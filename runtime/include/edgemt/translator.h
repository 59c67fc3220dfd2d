// Translator: token ids in, token ids out, without heap allocation per call.
//
// Phases (as TFLite Micro and XNNPACK):
//   1. create()   load phase: the model's family (runtime/models/) resolves
//                 its tensors, widens f16 weights to f32 where the CPU
//                 computes in f32 and creates its operators (XNNPACK packs
//                 its own weight copies); the thread pool starts. Allocates.
//   2. prepare()  sizes one arena for the largest request the caller will
//                 make (Limits) and takes it from the heap or the caller;
//                 the first one also packs what create() left for it to
//                 decide (see set_greedy_scores).
//   3. translate() the run phase: the family's encoder and decoder steps and
//                 the search on arena memory. No malloc/new, no exceptions,
//                 no XNNPACK allocation.
//
// Arena: prepare() plans it from buffer lifetimes (each buffer is live for
// a span of run steps), so buffers never live together share memory: the
// encoder's temporaries, the decoder's per-step activations and the search
// state overlap, while what a whole decode needs (the source-side state the
// decoder attends to, each hypothesis's own decoder state, the logits) stays.
// arena_plan() reports the size with and without that sharing, and `edgemt
// inspect` prints it for a few limits.
//
// Threading: a Translator is used by one thread at a time. With threads > 1
// it starts threads - 1 workers at create() (its own pool, core/thread_pool.h)
// that help the calling thread inside translate(): the caller always works
// too and never waits for a worker that has not got a CPU, so a busy machine
// costs at most the speed of one thread; between calls the workers sleep
// (no CPU used) after ~50 µs. Output is identical for every thread count.
// The Model must outlive the Translator.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>

#include "edgemt/decoding.h"
#include "edgemt/model.h"
#include "edgemt/profile.h"
#include "edgemt/status.h"

namespace edgemt {

// Whose int8 sums a file in Marian's int8 arithmetic (converted from a
// Marian intgemm8 model, with or without alphas: QuantizationScheme
// kInt8PerTensorDynamic / kInt8PerTensorStatic) reproduces. Marian's
// intgemm sums exactly only on CPUs with AVX-512 VNNI; on the others it adds
// 16-bit pairs with saturation, which changes some outputs of deep products
// (kernels/int8_gemm_marian.h). kExact (the default) gives what Marian
// computes with VNNI; the others what it computes on a CPU of that kind,
// on any CPU edgemt runs on (int8_gemm_marian's kernels: with alphas
// (Int8PerTensorStatic) faster than the exact sums on an x86 CPU without
// VNNI; otherwise slower).
enum class MarianInt8Sums : uint8_t {
  kExact = 0,
  kAvx2 = 1,      // AVX2 without AVX-512 (and AVX-VNNI CPUs: intgemm has no level for them)
  kAvx512bw = 2,  // AVX-512 BW without VNNI (Skylake-SP/X)
  kSsse3 = 3,     // SSSE3 without AVX2
};

struct TranslatorOptions {
  size_t threads = 1;  // threads in translate(), the caller's included; 1 = the caller only
  // With threads > 1: a kernel call whose work is estimated below this runs
  // on the calling thread, because handing it to the pool costs more than it
  // saves (a dispatch to spinning workers costs ~0.2-0.5 µs on a 2-vCPU
  // x86 VM; slower cores or busier machines may want more). 0 splits every
  // call that can be split. Never changes the output.
  size_t min_parallel_nanoseconds = 2000;
  // Anything but kExact needs a file in Marian's int8 arithmetic
  // (kInvalidArgument otherwise).
  MarianInt8Sums marian_int8_sums = MarianInt8Sums::kExact;
};

// The largest request translate() will accept after prepare(). Each at
// least 1; max_batch <= kMaxBatch, max_beam <= kMaxBeam (edgemt/limits.h),
// lengths <= the model's max_sequence_length().
struct Limits {
  size_t max_batch = 16;        // sentences per translate() call
  size_t max_source_len = 256;  // source tokens, counting EOS; <= model.max_sequence_length()
  size_t max_beam = 4;
  size_t max_target_len = 256;  // generated tokens, counting EOS; <= model.max_sequence_length()
  // Plan memory for the attention weights of every step (Translation::
  // attention): max_target_len x max_batch·max_beam x max_source_len floats
  // more (a multi-head attention: (its head count + 1) x max_batch·max_beam
  // x max_source_len more still). Off: no cost, and asking for weights is refused; on, the
  // decoder copies them out only for calls that ask for them.
  bool attention = false;
  // Which attention the weights are: the decoder layer's attention over the
  // source (0-based; -1 = the last layer) and its head (0-based; -1 = the
  // mean over every head, as PyTorch's average_attn_weights). A model with a
  // single attention takes -1 / -1 (or 0 / 0).
  // Checked by prepare() (kInvalidArgument names the model's range).
  int attention_layer = -1;
  int attention_head = -1;
};

// What prepare() would lay out for some limits (Translator::arena_plan).
struct ArenaPlan {
  size_t bytes = 0;           // the arena: buffers never live together share memory
  size_t unshared_bytes = 0;  // the same buffers each with memory of its own
  size_t buffers = 0;
};

class Translator {
 public:
  // Errors: kUnsupported (model family/dtype), kBackendError, kOutOfMemory.
  [[nodiscard]] static Status create(const Model& model, const TranslatorOptions& options,
                                     std::unique_ptr<Translator>* out);
  ~Translator();
  Translator(const Translator&) = delete;
  Translator& operator=(const Translator&) = delete;

  // Bytes of arena prepare() needs for `limits` (kInvalidArgument if the
  // limits exceed the model, e.g. max_source_len > max_sequence_length()).
  [[nodiscard]] Status arena_bytes(const Limits& limits, size_t* bytes) const;
  // The same, with what planning by lifetime saved (for reports).
  [[nodiscard]] Status arena_plan(const Limits& limits, ArenaPlan* plan) const;
  // Allocates the arena (load-time allocation).
  [[nodiscard]] Status prepare(const Limits& limits);
  // Uses caller memory (64-byte aligned, at least arena_bytes(limits)).
  // A prepare() that fails leaves the translator as it was (prepared for
  // its previous limits, or not at all).
  [[nodiscard]] Status prepare(const Limits& limits, void* arena, size_t arena_size);
  const Limits& limits() const;

  // Translates `count` sentences of source ids (each ending with EOS if the
  // model expects it; see Model::append_eos_to_source). Errors (the whole
  // call; no result is written): kFailedPrecondition (not prepared),
  // kInvalidArgument (count or beam over the limits, id outside the
  // vocabulary, empty source), kOutOfRange (a source longer than
  // Limits::max_source_len). An ok return means every result is written:
  // check each result's `status` (a sentence can fail alone, see Translation).
  [[nodiscard]] Status translate(const TokenSpan* sources, size_t count,
                                 const DecodeOptions& options, Translation* results);

  // Teacher-forced decoding of one sentence, for scoring and for testing
  // against a reference: feeds the decoder start token, then target[0..n-1),
  // and writes the logits of each of the n = target.length steps to
  // `logits` [n, vocab]. Same errors as translate(); n <= max_target_len.
  [[nodiscard]] Status force_decode(const TokenSpan& source, const TokenSpan& target,
                                    float* logits);

  // Attaches caller-owned counters (edgemt/profile.h) that every later
  // translate() and force_decode() adds its time per part to; nullptr
  // detaches (the default: no clock is read). The Profile must outlive its
  // attachment; the Translator never resets it. Allocates nothing.
  void set_profile(Profile* profile);

  // Whether greedy translations (beam_size 1) report their score; true by
  // default. Load phase (allocates; not during translate()).
  //
  // false: greedy results get score NaN, and the decoder does not compute
  // every logit of a step when it can prove which one is largest: for an
  // f32 output projection on the own f32 GEMM, this builds an int8 copy of
  // it (vocab x (hidden size + 28) bytes: 2 MiB for 8000 x 256, 29 MiB for
  // OPUS-MT-base's 58k x 512) from which each step's arg-max is bounded,
  // and only the few ids that can be largest are computed in f32
  // (layers/argmax_shortcut.h). At batch 1 a step then reads about a
  // quarter of that matrix's bytes. The tokens, and which sentences fail,
  // are exactly those of true: an arg-max the shortcut cannot prove (NaN or
  // inf in the decoder's state, bounds that overflow) is taken from the
  // full row. Beam search is not affected. Other models build nothing.
  // Set before the first prepare(), the translator also never makes its f32
  // pack of such a projection (the same size as the matrix: 119 MiB for
  // OPUS-MT-base) and reads its rows from the model file instead: the
  // candidates' rows at each step, and all of them for a row the shortcut
  // cannot prove and for beam search, which then runs from the file's rows
  // packed 64 at a time (the same results, the projection slower).
  // true frees the copy; the next prepare() packs the projection if it was
  // left unpacked. With a shortlist (set_shortlist) such a projection is
  // never packed, scores or not: each batch gathers its candidates' rows
  // from the file (prepare() then plans room for the whole vocabulary's).
  // Errors: kOutOfMemory (the translator unchanged).
  [[nodiscard]] Status set_greedy_scores(bool report);
  bool greedy_scores() const;
  // Bytes of the int8 copy set_greedy_scores(false) built (0: none).
  size_t greedy_shortcut_bytes() const;

  // Whether translate() uses the model file's lexical shortlist (on by
  // default when it has one; Model::shortlist()). On, each call's output
  // covers only its candidate target ids (search/shortlist.h: the first ids,
  // every source token's list, EOS), Marian's rule: the decoder computes
  // those logits only and the log-softmax normalizes over them, so scores
  // and some translations differ from the full vocabulary's, and a
  // sentence's translation depends on the sentences batched with it.
  // Takes effect at the next prepare() (its buffers are planned there).
  // force_decode() always covers the whole vocabulary (for an f32 output
  // layer a shortlist leaves in the file, from its rows packed 64 at a
  // time: the same logits, slower).
  // Errors: kFailedPrecondition (on, for a model without a shortlist).
  [[nodiscard]] Status set_shortlist(bool use);
  bool shortlist() const;

  // How matrices are computed, e.g. "f32 (f16 weights widened at load)".
  const char* compute_path() const;

  struct Impl;

 private:
  explicit Translator(Impl* impl);
  Impl* impl_;
};

}  // namespace edgemt
