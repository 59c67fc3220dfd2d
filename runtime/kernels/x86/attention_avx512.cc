// scaled_dot_product_attention (attention.h) with AVX-512: the portable
// kernel's bits. The scores are detail::dot's eight lanes (element i adds
// into lane i % 8, in index order; a 16-wide product adds its low eight,
// then its high eight), eight keys at a time so that eight addition chains
// overlap and their lanes are combined together; the softmax is softmax.cc's
// in the same order; the weighted sum of values adds keys in order into each
// output element as the portable loop does, with the output row held in
// registers.
//
// Eight or more queries (an encoder's self-attention) have their scores made
// in another order with the same operations: the keys are transposed 16 at
// a time on the stack, so that lane l of a dot product (elements l, l + 8,
// ... in order) is one vector over 16 keys and a query's 16 scores come out
// of one register, combined in combine8's tree, with no per-key loads and
// no transposition of the sums. Rows of up to 32 keys (heads of up to 64)
// then take their softmax and weighted sum in registers, four rows side by
// side (short_rows; the last 2 or 3 together). In the softmax, lanes past a
// row get e^0, zeroed after, rather than e^-inf: exp16's clamp made
// denormal products there, a slow path every row of a length not a
// multiple of 16 took.
// BM_Attention, Zen 4 (cpu family 25 model 17), ns per call, before / after
// these three: Tq 15 Tk 15 head_dim 32 1984 / 1090, Tq 64 Tk 64 head_dim 64
// 29019 / 23600, Tq 1 Tk 15 head_dim 32 131 / 105-111. Rows of 17-32 keys
// (a third of Multi30k's test sentences have more than 16 pieces) went
// one at a time through softmax_row and weighted_sum; in short_rows, Intel
// Xeon (cpu family 6 model 167), head_dim 32, 2 alternate runs: Tq 17 Tk 17
// 2102-2162 -> 1709-1772, Tq 20 Tk 20 2689-2729 -> 2121-2163, Tq 32 Tk 32
// 4624-4643 -> 3580-3995, Tq 3 Tk 20 497-513 -> 443-445; Tq 1 the same.
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
      // Lanes past the row: e^0, zeroed (not e^-inf: above).
      const __m512 e = _mm512_maskz_mov_ps(
          m16, exp16(_mm512_sub_ps(_mm512_mask_loadu_ps(vm, m16, x + b + i), vm)));
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

// o[0 .. head_dim) = Σ_j p[j]·v_j over j in [0, visible), keys added in
// order from 0 (the portable accumulate4/accumulate1 round the same: one
// add per key); 64 output elements (four registers) at a time.
void weighted_sum(const AttentionShape& shape, const float* p, size_t visible, const float* v,
                  float* o) {
  const size_t head_dim = shape.head_dim;
  const size_t* rows = shape.key_offsets;
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
      const float* vj = v + (rows ? rows[j] : j * shape.v_stride) + c;
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

// Query i's scores (probs row i) against the `visible` keys it sees (key j
// at key(j)), eight keys at a time: dots() on its scaled q (its out row).
// Not inlined: as a lambda in the kernel's body, the blocked path (which
// never calls it) measured 4-7% slower in BM_Attention Tq 15 Tk 15.
template <typename KeyFn>
__attribute__((noinline)) void score_row(const AttentionShape& shape, KeyFn key, const float* out,
                                         size_t i, size_t visible, float* probs) {
  for (size_t j = 0; j < visible; j += 8) {
    const size_t count = visible - j < 8 ? visible - j : 8;
    const float* keys[8];
    for (size_t u = 0; u < 8; ++u) keys[u] = key(u < count ? j + u : j);
    dots(out + i * shape.out_stride, keys, count, shape.head_dim, probs + i * shape.key_len + j);
  }
}

// The blocked path (above): keys per block, the largest head it takes (kt:
// 16 KiB on the stack).
constexpr size_t kKeyBlock = 16;
constexpr size_t kMaxBlockDim = 256;
// From this many queries the transposition pays for itself (BM_Attention:
// Tq 4 Tk 15 head_dim 32 19% slower, Tq 15 Tk 15 11% faster).
constexpr size_t kMinBlockQueries = 8;

// kt[d][u] = key j0 + u at d for u < count, 0 past it: 16 elements of the
// 16 keys at a time transposed in registers, the last 1-15 one by one (a
// float at a time throughout took a tenth of BM_Attention's Tq 15 Tk 15
// head_dim 32).
template <typename KeyFn>
void transpose_keys(KeyFn key, size_t j0, size_t count, size_t head_dim, float* kt) {
  const float* keys[kKeyBlock];
  for (size_t u = 0; u < kKeyBlock; ++u) keys[u] = u < count ? key(j0 + u) : nullptr;
  size_t d0 = 0;
  for (; d0 + 16 <= head_dim; d0 += 16) {
    __m512 r[kKeyBlock];
    for (size_t u = 0; u < kKeyBlock; ++u) {
      r[u] = keys[u] != nullptr ? _mm512_loadu_ps(keys[u] + d0) : _mm512_setzero_ps();
    }
    avx512::transpose16(r);
    for (size_t d = 0; d < 16; ++d) _mm512_store_ps(kt + kKeyBlock * (d0 + d), r[d]);
  }
  for (size_t u = 0; u < kKeyBlock; ++u) {
    for (size_t d = d0; d < head_dim; ++d) kt[kKeyBlock * d + u] = keys[u] != nullptr ? keys[u][d] : 0.0f;
  }
}

// p_i[j0 + u] = dot(query i's q·scale (its out row), key j0 + u) for
// u < count and every query: dots()' lanes and tree as vectors over 16 keys.
void block_scores(const AttentionShape& shape, const float* scaled_q, const float* kt, size_t j0,
                  size_t count, float* probs) {
  const size_t head_dim = shape.head_dim;
  for (size_t i = 0; i < shape.query_len; ++i) {
    const float* qs = scaled_q + i * shape.out_stride;
    __m512 lane[8];
    for (__m512& l : lane) l = _mm512_setzero_ps();
    size_t d0 = 0;
    for (; d0 + 8 <= head_dim; d0 += 8) {
      for (size_t l = 0; l < 8; ++l) {
        const __m512 k = _mm512_load_ps(kt + kKeyBlock * (d0 + l));
        lane[l] = _mm512_add_ps(lane[l], _mm512_mul_ps(_mm512_set1_ps(qs[d0 + l]), k));
      }
    }
    for (size_t l = 0; d0 + l < head_dim; ++l) {  // the last 1-7 elements
      const __m512 k = _mm512_load_ps(kt + kKeyBlock * (d0 + l));
      lane[l] = _mm512_add_ps(lane[l], _mm512_mul_ps(_mm512_set1_ps(qs[d0 + l]), k));
    }
    const __m512 low = _mm512_add_ps(_mm512_add_ps(lane[0], lane[4]), _mm512_add_ps(lane[1], lane[5]));
    const __m512 high = _mm512_add_ps(_mm512_add_ps(lane[2], lane[6]), _mm512_add_ps(lane[3], lane[7]));
    _mm512_mask_storeu_ps(probs + i * shape.key_len + j0, avx512::tail_mask(count),
                          _mm512_add_ps(low, high));
  }
}

// softmax_row then weighted_sum for kRows rows of at most 16·kVecs scores
// each (row r: probs row p[r] with visible[r] keys, 1..16·kVecs, output
// o[r]) and a head of 16·kChunks, in registers and side by side: the
// scores are loaded once, the probabilities stored once, each key's
// probability broadcast from its register (loading it back from the row
// just stored with a masked store waits for that store to retire), and the
// rows' chains of dependent operations (max, exp, sum, the weighted sum)
// overlap. Each row's operations are softmax_row's and weighted_sum's, in
// their order (a row shorter than 16·kVecs adds +0 for its missing
// registers' sums: the sum, started at +0, stays the same). False, with
// nothing stored, when a row's scores are all -inf (the general path zeroes
// it).
template <size_t kRows, size_t kChunks, size_t kVecs>
bool short_rows(const AttentionShape& shape, float* const (&p)[kRows],
                const size_t (&visible)[kRows], const float* v, float* const (&o)[kRows]) {
  __mmask16 live[kRows][kVecs];
  __m512 x[kRows][kVecs], vm[kRows];
  for (size_t r = 0; r < kRows; ++r) {
    // avx512::row_max: the eight-lane max, then the lanes in order.
    __m256 max8 = _mm256_set1_ps(kNegInf);
    for (size_t s = 0; s < kVecs; ++s) {
      live[r][s] = visible[r] > 16 * s ? avx512::tail_mask(visible[r] - 16 * s) : 0;
      x[r][s] = _mm512_mask_loadu_ps(_mm512_set1_ps(kNegInf), live[r][s], p[r] + 16 * s);
      max8 = _mm256_max_ps(_mm512_castps512_ps256(x[r][s]), max8);
      max8 = _mm256_max_ps(_mm512_extractf32x8_ps(x[r][s], 1), max8);
    }
    alignas(32) float lanes[detail::kLanes];
    _mm256_store_ps(lanes, max8);
    float m = lanes[0];
    for (size_t l = 1; l < detail::kLanes; ++l) m = lanes[l] > m ? lanes[l] : m;
    if (m == kNegInf) return false;
    vm[r] = _mm512_set1_ps(m);
  }
  __m512 probs[kRows][kVecs];
  for (size_t r = 0; r < kRows; ++r) {
    __m512 e[kVecs];
    __m256 acc = _mm256_setzero_ps();
    for (size_t s = 0; s < kVecs; ++s) {
      e[s] = _mm512_maskz_mov_ps(
          live[r][s], exp16(_mm512_sub_ps(_mm512_mask_mov_ps(vm[r], live[r][s], x[r][s]), vm[r])));
      acc = _mm256_add_ps(acc, _mm512_castps512_ps256(e[s]));
      acc = _mm256_add_ps(acc, _mm512_extractf32x8_ps(e[s], 1));
    }
    float total = 0.0f;
    total += avx512::combine(acc);
    const __m512 inverse = _mm512_set1_ps(1.0f / total);
    for (size_t s = 0; s < kVecs; ++s) {
      probs[r][s] = _mm512_maskz_mul_ps(live[r][s], e[s], inverse);
      _mm512_mask_storeu_ps(p[r] + 16 * s, live[r][s], probs[r][s]);
    }
  }
  const size_t* keys = shape.key_offsets;
  size_t longest = 0;
  for (size_t r = 0; r < kRows; ++r) longest = visible[r] > longest ? visible[r] : longest;
  __m512 out[kRows][kChunks];
  for (size_t r = 0; r < kRows; ++r) {
    for (__m512& a : out[r]) a = _mm512_setzero_ps();
  }
  for (size_t s = 0; s < kVecs; ++s) {  // keys [16s, 16s + 16), in order
    const size_t end = longest < 16 * s + 16 ? longest : 16 * s + 16;
    for (size_t j = 16 * s; j < end; ++j) {
      const __m512i lane = _mm512_set1_epi32(static_cast<int>(j - 16 * s));
      const float* vj = v + (keys ? keys[j] : j * shape.v_stride);
      for (size_t r = 0; r < kRows; ++r) {
        if (j >= visible[r]) continue;  // a causal row sees fewer keys
        const __m512 pj = _mm512_permutexvar_ps(lane, probs[r][s]);
        for (size_t u = 0; u < kChunks; ++u) {
          out[r][u] = _mm512_add_ps(out[r][u], _mm512_mul_ps(pj, _mm512_loadu_ps(vj + 16 * u)));
        }
      }
    }
  }
  for (size_t r = 0; r < kRows; ++r) {
    for (size_t u = 0; u < kChunks; ++u) _mm512_storeu_ps(o[r] + 16 * u, out[r][u]);
  }
  return true;
}

// Rows of up to 32 keys, four at a time (short_rows), the last 2 or 3
// together, by score registers (up to 16 keys: one, else two) and head
// size / 16 (four rows: BM_Attention Tq 15 Tk 15 head_dim 32 1090 ns, two
// 1195, one 1358).
template <size_t kRows>
using ShortRowsFn = bool (*)(const AttentionShape&, float* const (&)[kRows], const size_t (&)[kRows],
                             const float*, float* const (&)[kRows]);
template <size_t kRows>
constexpr ShortRowsFn<kRows> kShortRows[2][4] = {
    {short_rows<kRows, 1, 1>, short_rows<kRows, 2, 1>, short_rows<kRows, 3, 1>, short_rows<kRows, 4, 1>},
    {short_rows<kRows, 1, 2>, short_rows<kRows, 2, 2>, short_rows<kRows, 3, 2>, short_rows<kRows, 4, 2>}};

// The short_rows variant for a head: score registers, head size / 16.
template <size_t kRows>
ShortRowsFn<kRows> short_rows_for(const AttentionShape& shape) {
  return kShortRows<kRows>[shape.key_len <= 16 ? 0 : 1][shape.head_dim / 16 - 1];
}

// Rows [first, first + kRows), scored already, in registers (short_rows):
// false, with nothing stored, where the loop in
// scaled_dot_product_attention_avx512 must take them (a row that sees no
// key, or all -inf scores).
template <size_t kRows, typename VisibleFn>
bool short_row_group(const AttentionShape& shape, size_t first, VisibleFn visible_keys,
                     const float* v, float* probs, float* out) {
  float* p[kRows];
  size_t visible[kRows];
  float* o[kRows];
  for (size_t r = 0; r < kRows; ++r) {
    p[r] = probs + (first + r) * shape.key_len;
    visible[r] = visible_keys(first + r);
    o[r] = out + (first + r) * shape.out_stride;
  }
  if (visible[0] == 0) return false;  // causal: the first row sees the fewest
  for (size_t r = 0; r < kRows; ++r) {
    for (size_t j = visible[r]; j < shape.key_len; ++j) p[r][j] = 0.0f;
  }
  return short_rows_for<kRows>(shape)(shape, p, visible, v, o);
}

}  // namespace

void scaled_dot_product_attention_avx512(const AttentionShape& shape, const float* q,
                                         const float* k, const float* v, float* probs,
                                         float* out) {
  const size_t head_dim = shape.head_dim;
  const size_t* rows = shape.key_offsets;
  auto key = [&](size_t j) { return k + (rows ? rows[j] : j * shape.k_stride); };
  auto visible_keys = [&](size_t i) {
    const size_t last = shape.query_offset + i + 1;
    return shape.causal && last < shape.key_len ? last : shape.key_len;
  };
  // o = q·scale (scratch), then the scores, as the portable kernel.
  const __m512 scale = _mm512_set1_ps(shape.scale);
  for (size_t i = 0; i < shape.query_len; ++i) {
    const float* qi = q + i * shape.q_stride;
    float* o = out + i * shape.out_stride;
    for (size_t c = 0; c < head_dim; c += 16) {
      const __mmask16 m = avx512::tail_mask(head_dim - c);
      _mm512_mask_storeu_ps(o + c, m, _mm512_mul_ps(_mm512_maskz_loadu_ps(m, qi + c), scale));
    }
  }
  const bool blocked = shape.query_len >= kMinBlockQueries && head_dim <= kMaxBlockDim;
  // Rows of up to 32 keys, heads of up to 64 in whole registers: short_rows.
  const bool short_rows_ok = shape.key_len <= 32 && head_dim % 16 == 0 && head_dim <= 64 &&
                             head_dim > 0;
  // Rows scored before the softmax: all with the blocked path, and 2-7
  // queries that short_rows takes, so that they go in groups as there
  // (BM_Attention Tq 4 Tk 15 head_dim 32: 542-548 -> 386-388 ns; one at a
  // time they were slower than the AVX2 kernel's 400); else each row in
  // the loop below.
  bool scored = blocked;
  if (blocked) {  // every query's scores, 16 keys at a time
    alignas(64) float kt[kMaxBlockDim * kKeyBlock];
    for (size_t j0 = 0; j0 < shape.key_len; j0 += kKeyBlock) {
      const size_t count = shape.key_len - j0 < kKeyBlock ? shape.key_len - j0 : kKeyBlock;
      transpose_keys(key, j0, count, head_dim, kt);
      block_scores(shape, out, kt, j0, count, probs);
    }
  } else if (short_rows_ok && shape.query_len > 1) {
    for (size_t i = 0; i < shape.query_len; ++i) score_row(shape, key, out, i, visible_keys(i), probs);
    scored = true;
  }
  size_t first = 0;  // rows before it are done
  if (short_rows_ok && scored) {
    // Rows four at a time in registers, then the last 2 or
    // 3 (the loop below takes the rest: one row, or from a group that
    // short_row_group left).
    while (first + 4 <= shape.query_len && short_row_group<4>(shape, first, visible_keys, v, probs, out)) {
      first += 4;
    }
    // Past a group left to the loop, 4 rows or more are left: neither here.
    const size_t left = shape.query_len - first;
    if (left == 3 && short_row_group<3>(shape, first, visible_keys, v, probs, out)) first += 3;
    if (left == 2 && short_row_group<2>(shape, first, visible_keys, v, probs, out)) first += 2;
  }
  for (size_t i = first; i < shape.query_len; ++i) {
    float* p = probs + i * shape.key_len;
    const size_t visible = visible_keys(i);
    if (!scored) score_row(shape, key, out, i, visible, probs);
    // Keys a query does not see (scored anyway by the blocked path).
    for (size_t j = visible; j < shape.key_len; ++j) p[j] = 0.0f;
    float* const o[1] = {out + i * shape.out_stride};
    const size_t visible_row[1] = {visible};
    float* const p_row[1] = {p};
    if (short_rows_ok && visible > 0 &&
        short_rows_for<1>(shape)(shape, p_row, visible_row, v, o)) {
      continue;
    }
    softmax_row(p, visible);
    weighted_sum(shape, p, visible, v, o[0]);
  }
}

}  // namespace edgemt::kernels
