// scaled_dot_product_attention (attention.h) with AVX2, for x86 CPUs without
// AVX-512: the portable kernel's bits. The scores are detail::dot's eight
// lanes (one register: element i adds into lane i % 8, in index order),
// eight keys at a time so that eight addition chains overlap and their lanes
// are combined together; the softmax is softmax.cc's in the same order; the
// weighted sum of values adds keys in order into each output element as the
// portable loop does, with the output row held in registers.
// In the softmax, lanes past a row get e^0, zeroed after, rather than e^-inf:
// exp8 took its slow path for every row of a length not a multiple of 8.
// (The AVX-512 kernel's transposed keys for many queries did not pay here:
// with 8 keys a register, the broadcasts cost what they save, BM_Attention.)
#include "kernels/attention.h"
#include "kernels/reduce.h"
#include "kernels/x86/avx2_math.h"

namespace edgemt::kernels {
namespace {

using avx2::combine8;
using avx2::exp8;
using avx2::kNegInf;
using avx2::load_or_fill;
using avx2::row_max;
using avx2::store_first;
using avx2::tail_mask;

// kernels::softmax (softmax.cc) in the same order: the eight-lane max, e^(x -
// max) stored, summed in blocks of detail::kBlock over eight lanes, scaled by
// 1 / sum. An all -inf row becomes zeros.
void softmax_row(float* x, size_t n) {
  const float m = row_max(x, n);
  if (m == kNegInf) {
    for (size_t i = 0; i < n; ++i) x[i] = 0.0f;
    return;
  }
  const __m256 vm = _mm256_set1_ps(m);
  float total = 0.0f;
  for (size_t b = 0; b < n; b += detail::kBlock) {
    const size_t len = n - b < detail::kBlock ? n - b : detail::kBlock;
    __m256 acc = _mm256_setzero_ps();
    for (size_t i = 0; i < len; i += 8) {
      // Lanes past the row: e^0, zeroed (not e^-inf: above).
      const __m256 lanes_in_row = _mm256_castsi256_ps(tail_mask(len - i));
      const __m256 e = _mm256_and_ps(
          lanes_in_row, exp8(_mm256_sub_ps(load_or_fill(x + b + i, len - i, vm), vm)));
      store_first(x + b + i, len - i, e);
      acc = _mm256_add_ps(acc, e);
    }
    total += avx2::combine(acc);
  }
  const __m256 inv = _mm256_set1_ps(1.0f / total);
  const __m256 zero = _mm256_setzero_ps();
  for (size_t i = 0; i < n; i += 8) {
    store_first(x + i, n - i, _mm256_mul_ps(load_or_fill(x + i, n - i, zero), inv));
  }
}

// p[j] = dot(q, key j) for j in [0, count), count <= 8 (absent keys read
// key 0 and are not stored): eight independent addition chains. Lanes past
// n load +0 in both operands: their products add +0, which leaves a sum
// that started at +0 unchanged.
void dots(const float* q, const float* const* keys, size_t count, size_t n, float* p) {
  __m256 acc[8];
  for (__m256& a : acc) a = _mm256_setzero_ps();
  const __m256 zero = _mm256_setzero_ps();
  for (size_t c = 0; c < n; c += 8) {
    const __m256 qc = load_or_fill(q + c, n - c, zero);
    for (size_t j = 0; j < 8; ++j) {
      acc[j] = _mm256_add_ps(acc[j], _mm256_mul_ps(qc, load_or_fill(keys[j] + c, n - c, zero)));
    }
  }
  store_first(p, count, combine8(acc));
}

// o[0 .. 8·kChunks) = Σ_j p[j]·v_j[0 .. 8·kChunks) over j in [0, visible),
// keys added in order, for whole chunks of 8: a fixed count keeps the
// accumulators in registers (with a variable one GCC kept them on the stack,
// a load and a store per key and chunk).
template <size_t kChunks>
void weighted_values(const float* p, size_t visible, const float* v, const size_t* rows,
                     size_t v_stride, float* o) {
  __m256 acc[kChunks];
  for (__m256& a : acc) a = _mm256_setzero_ps();
  for (size_t j = 0; j < visible; ++j) {
    const __m256 pj = _mm256_set1_ps(p[j]);
    const float* vj = v + (rows ? rows[j] : j * v_stride);
    for (size_t u = 0; u < kChunks; ++u) {
      acc[u] = _mm256_add_ps(acc[u], _mm256_mul_ps(pj, _mm256_loadu_ps(vj + 8 * u)));
    }
  }
  for (size_t u = 0; u < kChunks; ++u) _mm256_storeu_ps(o + 8 * u, acc[u]);
}

using WeightedValuesFn = void (*)(const float*, size_t, const float*, const size_t*, size_t, float*);
constexpr WeightedValuesFn kWeightedValues[8] = {  // [chunks - 1]
    weighted_values<1>, weighted_values<2>, weighted_values<3>, weighted_values<4>,
    weighted_values<5>, weighted_values<6>, weighted_values<7>, weighted_values<8>};

// weighted_values for two rows side by side (p0, p1: their probabilities,
// visible0 <= visible1 keys; o0, o1: their outputs): each value row is
// loaded once for both, and the two rows' addition chains overlap (one row
// at a time waits on the adder's latency: kChunks chains of `visible` adds).
// Each row adds its keys in order, as weighted_values does. BM_Attention,
// Intel Xeon (cpu family 6 model 167) capped to AVX2, 2 alternate runs: Tq
// 20 Tk 20 head_dim 32 2028-2034 -> 1760-1881 ns, head_dim 64 2926-2933 ->
// 2683-2722; Tq 40 Tk 40 head_dim 32 6232-6245 -> 5589-6007.
template <size_t kChunks>
void weighted_values_pair(const float* p0, const float* p1, size_t visible0, size_t visible1,
                          const float* v, const size_t* rows, size_t v_stride, float* o0, float* o1) {
  __m256 acc0[kChunks], acc1[kChunks];
  for (size_t u = 0; u < kChunks; ++u) acc0[u] = acc1[u] = _mm256_setzero_ps();
  size_t j = 0;
  for (; j < visible0; ++j) {
    const __m256 pj0 = _mm256_set1_ps(p0[j]), pj1 = _mm256_set1_ps(p1[j]);
    const float* vj = v + (rows ? rows[j] : j * v_stride);
    for (size_t u = 0; u < kChunks; ++u) {
      const __m256 vv = _mm256_loadu_ps(vj + 8 * u);
      acc0[u] = _mm256_add_ps(acc0[u], _mm256_mul_ps(pj0, vv));
      acc1[u] = _mm256_add_ps(acc1[u], _mm256_mul_ps(pj1, vv));
    }
  }
  for (; j < visible1; ++j) {  // a causal second row may see one key more
    const __m256 pj1 = _mm256_set1_ps(p1[j]);
    const float* vj = v + (rows ? rows[j] : j * v_stride);
    for (size_t u = 0; u < kChunks; ++u) {
      acc1[u] = _mm256_add_ps(acc1[u], _mm256_mul_ps(pj1, _mm256_loadu_ps(vj + 8 * u)));
    }
  }
  for (size_t u = 0; u < kChunks; ++u) {
    _mm256_storeu_ps(o0 + 8 * u, acc0[u]);
    _mm256_storeu_ps(o1 + 8 * u, acc1[u]);
  }
}

using WeightedPairFn = void (*)(const float*, const float*, size_t, size_t, const float*,
                                const size_t*, size_t, float*, float*);
// Up to 4 chunks (32 output elements): 2 × 4 accumulators, 4 values and 2
// probabilities in the 16 registers.
constexpr WeightedPairFn kWeightedPairs[4] = {  // [chunks - 1]
    weighted_values_pair<1>, weighted_values_pair<2>, weighted_values_pair<3>,
    weighted_values_pair<4>};

}  // namespace

void scaled_dot_product_attention_avx2(const AttentionShape& shape, const float* q,
                                       const float* k, const float* v, float* probs, float* out) {
  const size_t head_dim = shape.head_dim;
  const size_t* rows = shape.key_offsets;
  auto key = [&](size_t j) { return k + (rows ? rows[j] : j * shape.k_stride); };
  auto value = [&](size_t j) { return v + (rows ? rows[j] : j * shape.v_stride); };
  const __m256 scale = _mm256_set1_ps(shape.scale);
  const __m256 zero = _mm256_setzero_ps();
  // The keys query row i sees: all, or with `causal` those up to its
  // position.
  auto visible_keys = [&](size_t i) {
    const size_t last = shape.query_offset + i + 1;
    return shape.causal && last < shape.key_len ? last : shape.key_len;
  };
  // Three passes over the rows (scores, softmax, weighted sums), not one
  // row at a time: a row's softmax is a chain of dependent steps (max,
  // exponentials, sum, reciprocal), and in a pass of softmaxes alone the
  // CPU runs several rows' chains at once (BM_Attention, AVX2 kernel, Zen 4:
  // Tq 15 Tk 15 head_dim 32 1371 -> 1112 ns; Tq 1 unchanged).
  for (size_t i = 0; i < shape.query_len; ++i) {
    const float* qi = q + i * shape.q_stride;
    float* p = probs + i * shape.key_len;
    float* o = out + i * shape.out_stride;
    const size_t visible = visible_keys(i);
    // o = q·scale (scratch), then the scores, as the portable kernel.
    for (size_t c = 0; c < head_dim; c += 8) {
      store_first(o + c, head_dim - c, _mm256_mul_ps(load_or_fill(qi + c, head_dim - c, zero), scale));
    }
    for (size_t j = 0; j < visible; j += 8) {
      const size_t count = visible - j < 8 ? visible - j : 8;
      const float* keys[8];
      for (size_t u = 0; u < 8; ++u) keys[u] = key(u < count ? j + u : j);
      dots(o, keys, count, head_dim, p + j);
    }
    for (size_t j = visible; j < shape.key_len; ++j) p[j] = 0.0f;
  }
  for (size_t i = 0; i < shape.query_len; ++i) softmax_row(probs + i * shape.key_len, visible_keys(i));
  size_t first = 0;  // rows before it have their weighted sums
  if (head_dim % 8 == 0) {
    // Two rows at a time (weighted_values_pair), 32 output elements at a time.
    for (; first + 2 <= shape.query_len; first += 2) {
      const size_t visible0 = visible_keys(first), visible1 = visible_keys(first + 1);
      const float* p0 = probs + first * shape.key_len;
      float* o0 = out + first * shape.out_stride;
      for (size_t c = 0; c < head_dim; c += 32) {
        const size_t chunks = head_dim - c < 32 ? (head_dim - c) / 8 : 4;
        kWeightedPairs[chunks - 1](p0, p0 + shape.key_len, visible0, visible1, v + c, rows,
                                   shape.v_stride, o0 + c, o0 + shape.out_stride + c);
      }
    }
  }
  for (size_t i = first; i < shape.query_len; ++i) {
    float* p = probs + i * shape.key_len;
    float* o = out + i * shape.out_stride;
    const size_t visible = visible_keys(i);
    // o[d] = sum_j p[j]·v_j[d], keys added in order from 0 (the portable
    // accumulate4/accumulate1 round the same: one add per key); 64 output
    // elements (eight registers) at a time.
    for (size_t c = 0; c < head_dim; c += 64) {
      const size_t width = head_dim - c < 64 ? head_dim - c : 64;
      const size_t chunks = (width + 7) / 8;
      if (width % 8 == 0) {
        kWeightedValues[chunks - 1](p, visible, v + c, rows, shape.v_stride, o + c);
        continue;
      }
      __m256 acc[8];
      for (__m256& a : acc) a = _mm256_setzero_ps();
      for (size_t j = 0; j < visible; ++j) {
        const __m256 pj = _mm256_set1_ps(p[j]);
        const float* vj = value(j) + c;
        for (size_t u = 0; u < chunks; ++u) {
          const __m256 vv = load_or_fill(vj + 8 * u, width - 8 * u, zero);
          acc[u] = _mm256_add_ps(acc[u], _mm256_mul_ps(pj, vv));
        }
      }
      for (size_t u = 0; u < chunks; ++u) store_first(o + c + 8 * u, width - 8 * u, acc[u]);
    }
  }
}

}  // namespace edgemt::kernels
