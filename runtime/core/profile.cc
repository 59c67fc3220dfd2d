#include "core/profile.h"

#include <time.h>

namespace edgemt {

uint64_t monotonic_ns() {
  timespec now;
  clock_gettime(CLOCK_MONOTONIC, &now);
  return static_cast<uint64_t>(now.tv_sec) * 1000000000u + static_cast<uint64_t>(now.tv_nsec);
}

const char* profile_part_name(ProfilePart part) {
  switch (part) {
    case ProfilePart::kTranslate: return "translate";
    case ProfilePart::kEncoder: return "encoder";
    case ProfilePart::kDecoderStep: return "decoder-step";
    case ProfilePart::kEmbedding: return "embedding";
    case ProfilePart::kLayerNorm: return "layer-norm";
    case ProfilePart::kAttentionGemm: return "attention-gemm";
    case ProfilePart::kDecoderState: return "decoder-state";
    case ProfilePart::kSourceAttention: return "source-attention";
    case ProfilePart::kFeedForwardGemm: return "feed-forward-gemm";
    case ProfilePart::kOutputProjection: return "output-projection";
    case ProfilePart::kSearch: return "search";
    case ProfilePart::kCount: break;
  }
  return "unknown";
}

}  // namespace edgemt
