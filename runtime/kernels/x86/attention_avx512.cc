// scaled_dot_product_attention (attention.h) with AVX-512: the portable
// kernel's bits. The scores are detail::dot's eight lanes (element i adds
// into lane i % 8, in index order; a 16-wide product adds its low eight,
// then its high eight), four keys at a time so that four addition chains
// overlap; the weighted sum of values adds keys in order into each output
// element as the portable loop does, with the output row held in registers.
// GCC 12's avx512fintrin.h warns about its own "undefined" vectors (GCC bug
// 105593), as in int8_gemm_avx512_vnni.cc.
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wuninitialized"
#if !defined(__clang__)
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#endif
#include <immintrin.h>
#pragma GCC diagnostic pop

#include "kernels/attention.h"
#include "kernels/reduce.h"
#include "kernels/softmax.h"

namespace edgemt::kernels {
namespace {

inline __mmask16 lanes(size_t count) {
  return count >= 16 ? static_cast<__mmask16>(0xFFFF)
                     : static_cast<__mmask16>((1u << count) - 1u);
}

inline float combine(__m256 acc) {
  alignas(32) float l[detail::kLanes];
  _mm256_store_ps(l, acc);
  return detail::combine_lanes(l);
}

// acc += a[c..c+16) · b[c..c+16) in the portable lane order (masked lanes
// add +0, which leaves a sum that started at +0 unchanged).
inline __m256 add_products(__m256 acc, __m512 a, __m512 b) {
  const __m512 prod = _mm512_mul_ps(a, b);
  acc = _mm256_add_ps(acc, _mm512_castps512_ps256(prod));
  return _mm256_add_ps(acc, _mm512_extractf32x8_ps(prod, 1));
}

// p[j] = dot(q, key j) for j in [0, count), count <= 4.
void dots(const float* q, const float* const* keys, size_t count, size_t n, float* p) {
  __m256 acc[4] = {_mm256_setzero_ps(), _mm256_setzero_ps(), _mm256_setzero_ps(),
                   _mm256_setzero_ps()};
  for (size_t c = 0; c < n; c += 16) {
    const __mmask16 m = lanes(n - c);
    const __m512 qc = _mm512_maskz_loadu_ps(m, q + c);
    for (size_t j = 0; j < count; ++j) {
      acc[j] = add_products(acc[j], qc, _mm512_maskz_loadu_ps(m, keys[j] + c));
    }
  }
  for (size_t j = 0; j < count; ++j) p[j] = combine(acc[j]);
}

}  // namespace

void scaled_dot_product_attention_avx512(const AttentionShape& shape, const float* q,
                                         const float* k, const float* v, float* probs,
                                         float* out) {
  const size_t head_dim = shape.head_dim;
  const size_t* rows = shape.key_offsets;
  auto key = [&](size_t j) { return k + (rows ? rows[j] : j * shape.k_stride); };
  auto value = [&](size_t j) { return v + (rows ? rows[j] : j * shape.v_stride); };
  const __m512 scale = _mm512_set1_ps(shape.scale);
  for (size_t i = 0; i < shape.query_len; ++i) {
    const float* qi = q + i * shape.q_stride;
    float* p = probs + i * shape.key_len;
    float* o = out + i * shape.out_stride;
    size_t visible = shape.key_len;
    if (shape.causal) {
      const size_t last = shape.query_offset + i + 1;
      if (last < visible) visible = last;
    }
    // o = q·scale (scratch), then the scores, as the portable kernel.
    for (size_t c = 0; c < head_dim; c += 16) {
      const __mmask16 m = lanes(head_dim - c);
      _mm512_mask_storeu_ps(o + c, m, _mm512_mul_ps(_mm512_maskz_loadu_ps(m, qi + c), scale));
    }
    for (size_t j = 0; j < visible; j += 4) {
      const size_t count = visible - j < 4 ? visible - j : 4;
      const float* keys[4] = {key(j), count > 1 ? key(j + 1) : nullptr,
                              count > 2 ? key(j + 2) : nullptr, count > 3 ? key(j + 3) : nullptr};
      dots(o, keys, count, head_dim, p + j);
    }
    for (size_t j = visible; j < shape.key_len; ++j) p[j] = 0.0f;
    softmax(p, visible);
    // o[d] = sum_j p[j]·v_j[d], keys added in order from 0 (the portable
    // accumulate4/accumulate1 round the same: one add per key).
    for (size_t c = 0; c < head_dim; c += 64) {
      const size_t width = head_dim - c < 64 ? head_dim - c : 64;
      const size_t chunks = (width + 15) / 16;
      __m512 acc[4] = {_mm512_setzero_ps(), _mm512_setzero_ps(), _mm512_setzero_ps(),
                       _mm512_setzero_ps()};
      for (size_t j = 0; j < visible; ++j) {
        const __m512 pj = _mm512_set1_ps(p[j]);
        const float* vj = value(j) + c;
        for (size_t u = 0; u < chunks; ++u) {
          const __m512 vv = _mm512_maskz_loadu_ps(lanes(width - 16 * u), vj + 16 * u);
          acc[u] = _mm512_add_ps(acc[u], _mm512_mul_ps(pj, vv));
        }
      }
      for (size_t u = 0; u < chunks; ++u) {
        _mm512_mask_storeu_ps(o + c + 16 * u, lanes(width - 16 * u), acc[u]);
      }
    }
  }
}

}  // namespace edgemt::kernels
