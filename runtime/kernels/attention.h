// Scaled dot-product attention for one (sequence, head) pair:
//
//   scores = (q * scale) · kᵀ           [query_len, key_len]
//   scores[i, j] = -inf  where key j is masked for query i
//   probs  = softmax(scores)             per row
//   out    = probs · v                   [query_len, head_dim]
//
// Masks: keys j >= key_len do not exist (padding is expressed by passing the
// sequence's real key_len); with `causal`, query i sits at position
// query_offset + i of the key sequence and sees keys j <= query_offset + i.
// A query that sees no key gets an all-zero output.
//
// q, k, v and out are row-major with the given strides (in floats), so a head
// can be read straight out of a fused [T, 3·d_model] QKV buffer or a K/V cache
// without copies; or keys and values are found through key_offsets. `probs` is caller scratch of query_len * key_len floats and
// holds the attention probabilities on return (for alignment / heat maps).
// No allocation; the caller parallelizes over sequences and heads.
#pragma once

#include <cstddef>

namespace edgemt::kernels {

struct AttentionShape {
  size_t query_len = 0;
  size_t key_len = 0;
  size_t head_dim = 0;
  size_t q_stride = 0;    // floats between consecutive query rows
  size_t k_stride = 0;    // floats between consecutive key rows
  size_t v_stride = 0;    // floats between consecutive value rows
  size_t out_stride = 0;  // floats between consecutive output rows
  float scale = 1.0f;     // usually 1 / sqrt(head_dim)
  bool causal = false;
  size_t query_offset = 0;  // position of query row 0 among the keys (causal)
  // When set, key j is at k + key_offsets[j] and value j at v + key_offsets[j]
  // (strides unused): a decoder's cache whose rows are not in position order.
  const size_t* key_offsets = nullptr;  // [key_len]
};

// Runs the fastest variant this CPU has (core/cpu_features.h); every
// variant computes the portable one's bits.
void scaled_dot_product_attention(const AttentionShape& shape, const float* q,
                                  const float* k, const float* v, float* probs,
                                  float* out);

void scaled_dot_product_attention_portable(const AttentionShape& shape, const float* q,
                                           const float* k, const float* v, float* probs,
                                           float* out);
#if defined(__x86_64__)
void scaled_dot_product_attention_avx512(const AttentionShape& shape, const float* q,
                                         const float* k, const float* v, float* probs,
                                         float* out);
void scaled_dot_product_attention_avx2(const AttentionShape& shape, const float* q,
                                       const float* k, const float* v, float* probs, float* out);
#endif

// Rough time of one call, for deciding whether to split work over threads
// (core/parallel.h): query_len * key_len * head_dim multiply-adds for the
// scores and as many for probs · v, at ~10 per ns (edgemt_kernels_benchmark
// BM_Attention: 16-21 GFLOP/s on this project's Zen 4 VM).
constexpr size_t attention_nanoseconds(size_t query_len, size_t key_len, size_t head_dim) {
  return query_len * key_len * head_dim * 2 / 10;
}

}  // namespace edgemt::kernels
