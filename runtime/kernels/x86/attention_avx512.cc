// scaled_dot_product_attention (attention.h) with AVX-512: the portable
// kernel's bits. The scores are detail::dot's eight lanes (element i adds
// into lane i % 8, in index order; a 16-wide product adds its low eight,
// then its high eight), eight keys at a time so that eight addition chains
// overlap and their lanes are combined together; the softmax is softmax.cc's
// in the same order; the weighted sum of values adds keys in order into each
// output element as the portable loop does, with the output row held in
// registers.
#include "kernels/attention.h"
#include "kernels/reduce.h"
#include "kernels/x86/avx2_math.h"
#include "kernels/x86/avx512_math.h"

namespace edgemt::kernels {
namespace {

using avx2::combine8;
using avx512::exp16;
using avx512::kNegInf;
using avx512::row_max;

// kernels::softmax (softmax.cc) in the same order: the eight-lane max, e^(x -
// max) stored, summed in blocks of detail::kBlock over eight lanes, scaled by
// 1 / sum. An all -inf row becomes zeros.
void softmax_row(float* x, size_t n) {
  const float m = row_max(x, n);
  if (m == kNegInf) {
    for (size_t i = 0; i < n; ++i) x[i] = 0.0f;
    return;
  }
  const __m512 vm = _mm512_set1_ps(m);
  float total = 0.0f;
  for (size_t b = 0; b < n; b += detail::kBlock) {
    const size_t len = n - b < detail::kBlock ? n - b : detail::kBlock;
    __m256 acc = _mm256_setzero_ps();
    for (size_t i = 0; i < len; i += 16) {
      const __mmask16 m16 = avx512::tail_mask(len - i);
      const __m512 e = exp16(_mm512_sub_ps(_mm512_mask_loadu_ps(_mm512_set1_ps(kNegInf), m16, x + b + i), vm));
      _mm512_mask_storeu_ps(x + b + i, m16, e);
      acc = _mm256_add_ps(acc, _mm512_castps512_ps256(e));
      acc = _mm256_add_ps(acc, _mm512_extractf32x8_ps(e, 1));
    }
    total += avx512::combine(acc);
  }
  const __m512 inv = _mm512_set1_ps(1.0f / total);
  for (size_t i = 0; i < n; i += 16) {
    const __mmask16 m16 = avx512::tail_mask(n - i);
    _mm512_mask_storeu_ps(x + i, m16, _mm512_mul_ps(_mm512_maskz_loadu_ps(m16, x + i), inv));
  }
}

// acc += a[c..c+16) · b[c..c+16) in the portable lane order (masked lanes
// add +0, which leaves a sum that started at +0 unchanged).
inline __m256 add_products(__m256 acc, __m512 a, __m512 b) {
  const __m512 prod = _mm512_mul_ps(a, b);
  acc = _mm256_add_ps(acc, _mm512_castps512_ps256(prod));
  return _mm256_add_ps(acc, _mm512_extractf32x8_ps(prod, 1));
}

// p[j] = dot(q, key j) for j in [0, count), count <= 8 (absent keys read
// key 0 and are not stored): eight independent addition chains.
void dots(const float* q, const float* const* keys, size_t count, size_t n, float* p) {
  __m256 acc[8];
  for (__m256& a : acc) a = _mm256_setzero_ps();
  for (size_t c = 0; c < n; c += 16) {
    const __mmask16 m = avx512::tail_mask(n - c);
    const __m512 qc = _mm512_maskz_loadu_ps(m, q + c);
    for (size_t j = 0; j < 8; ++j) {
      acc[j] = add_products(acc[j], qc, _mm512_maskz_loadu_ps(m, keys[j] + c));
    }
  }
  _mm256_mask_storeu_ps(p, static_cast<__mmask8>((1u << count) - 1u), combine8(acc));
}

// o[0 .. 16·kChunks) = Σ_j p[j]·v_j[0 .. 16·kChunks) over j in [0, visible),
// keys added in order, for whole chunks of 16: a fixed count keeps the
// accumulators in registers (with a variable one GCC kept them on the
// stack, a load and a store per key and chunk: perf, tiny11 at batch 32,
// 22% of this kernel's samples on those two instructions), as the AVX2
// kernel's weighted_values.
template <size_t kChunks>
void weighted_values(const float* p, size_t visible, const float* v, const size_t* rows,
                     size_t v_stride, float* o) {
  __m512 acc[kChunks];
  for (__m512& a : acc) a = _mm512_setzero_ps();
  for (size_t j = 0; j < visible; ++j) {
    const __m512 pj = _mm512_set1_ps(p[j]);
    const float* vj = v + (rows ? rows[j] : j * v_stride);
    for (size_t u = 0; u < kChunks; ++u) {
      acc[u] = _mm512_add_ps(acc[u], _mm512_mul_ps(pj, _mm512_loadu_ps(vj + 16 * u)));
    }
  }
  for (size_t u = 0; u < kChunks; ++u) _mm512_storeu_ps(o + 16 * u, acc[u]);
}

using WeightedValuesFn = void (*)(const float*, size_t, const float*, const size_t*, size_t, float*);
constexpr WeightedValuesFn kWeightedValues[4] = {  // [chunks - 1]
    weighted_values<1>, weighted_values<2>, weighted_values<3>, weighted_values<4>};

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
      const __mmask16 m = avx512::tail_mask(head_dim - c);
      _mm512_mask_storeu_ps(o + c, m, _mm512_mul_ps(_mm512_maskz_loadu_ps(m, qi + c), scale));
    }
    for (size_t j = 0; j < visible; j += 8) {
      const size_t count = visible - j < 8 ? visible - j : 8;
      const float* keys[8];
      for (size_t u = 0; u < 8; ++u) keys[u] = key(u < count ? j + u : j);
      dots(o, keys, count, head_dim, p + j);
    }
    for (size_t j = visible; j < shape.key_len; ++j) p[j] = 0.0f;
    softmax_row(p, visible);
    // o[d] = sum_j p[j]·v_j[d], keys added in order from 0 (the portable
    // accumulate4/accumulate1 round the same: one add per key).
    for (size_t c = 0; c < head_dim; c += 64) {
      const size_t width = head_dim - c < 64 ? head_dim - c : 64;
      const size_t chunks = (width + 15) / 16;
      if (width % 16 == 0) {
        kWeightedValues[chunks - 1](p, visible, v + c, rows, shape.v_stride, o + c);
        continue;
      }
      __m512 acc[4] = {_mm512_setzero_ps(), _mm512_setzero_ps(), _mm512_setzero_ps(),
                       _mm512_setzero_ps()};
      for (size_t j = 0; j < visible; ++j) {
        const __m512 pj = _mm512_set1_ps(p[j]);
        const float* vj = value(j) + c;
        for (size_t u = 0; u < chunks; ++u) {
          const __m512 vv = _mm512_maskz_loadu_ps(avx512::tail_mask(width - 16 * u), vj + 16 * u);
          acc[u] = _mm512_add_ps(acc[u], _mm512_mul_ps(pj, vv));
        }
      }
      for (size_t u = 0; u < chunks; ++u) {
        _mm512_mask_storeu_ps(o + c + 16 * u, avx512::tail_mask(width - 16 * u), acc[u]);
      }
    }
  }
}

}  // namespace edgemt::kernels
