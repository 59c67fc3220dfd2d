// Profile: where translate() spends its time, for benchmarks.
//
// A caller-owned set of counters that a Translator adds to while it is
// attached (Translator::set_profile). Nothing is measured, and no clock is
// read, while no Profile is attached; attached, each part costs two
// clock_gettime(CLOCK_MONOTONIC) reads per call and no allocation.
//
// Parts nest; the decoder-step parts are measured inside kDecoderStep. They
// are categories every model family fills in its own way (see each family's
// decoder under runtime/models/):
//
//   kTranslate  ┬ kEncoder       the whole source side, including what the
//               │                decoder will attend to
//               ├ kDecoderStep   ┬ kEmbedding         target embedding (+ positions)
//               │  (per step)    ├ kLayerNorm         normalization (+ the residual add)
//               │                ├ kAttentionGemm     projections into and out of attention
//               │                ├ kDecoderState      the decoder's own state: attention over
//               │                │                    its past (cache append + kernel) or a
//               │                │                    recurrent cell
//               │                ├ kSourceAttention   attention kernel over the source
//               │                ├ kFeedForwardGemm   feed-forward GEMMs
//               │                ├ kOutputProjection  logits GEMM [R, vocab]
//               │                └ (untimed rest: non-fused activations, loop overhead)
//               └ kSearch        bookkeeping between steps: log-softmax, top-k or
//                                argmax, history copies, beam state reorder,
//                                results
//
// force_decode() adds to kEncoder and kDecoderStep (and its parts) only.
//
// Threading: the Translator writes the counters from the thread that called
// translate(); read them after it returns, never during.
#pragma once

#include <cstddef>
#include <cstdint>

namespace edgemt {

enum class ProfilePart : uint32_t {
  kTranslate,
  kEncoder,
  kDecoderStep,
  kEmbedding,
  kLayerNorm,
  kAttentionGemm,
  kDecoderState,
  kSourceAttention,
  kFeedForwardGemm,
  kOutputProjection,
  kSearch,
  kCount
};

inline constexpr size_t kProfilePartCount = static_cast<size_t>(ProfilePart::kCount);

// Short stable name of a part ("decoder-state", ...), for reports.
const char* profile_part_name(ProfilePart part);

struct Profile {
  uint64_t nanoseconds[kProfilePartCount] = {};  // total time per part
  uint64_t calls[kProfilePartCount] = {};        // times each part ran

  void reset() { *this = Profile(); }
  uint64_t ns(ProfilePart part) const { return nanoseconds[static_cast<size_t>(part)]; }
  uint64_t count(ProfilePart part) const { return calls[static_cast<size_t>(part)]; }
  void add(ProfilePart part, uint64_t ns) {
    nanoseconds[static_cast<size_t>(part)] += ns;
    calls[static_cast<size_t>(part)] += 1;
  }
};

}  // namespace edgemt
