#include "kernels/attention.h"

#include "core/cpu_features.h"
#include "kernels/reduce.h"
#include "kernels/softmax.h"

namespace edgemt::kernels {
namespace {

// o[d] += p0·v0[d] + ... + p3·v3[d], added one key after the other: the same
// rounding as four separate passes, with one load/store of o per element.
void accumulate4(const float* __restrict p, const float* __restrict v0,
                 const float* __restrict v1, const float* __restrict v2,
                 const float* __restrict v3, size_t n, float* __restrict o) {
  const float p0 = p[0], p1 = p[1], p2 = p[2], p3 = p[3];
  for (size_t d = 0; d < n; ++d) {
    float acc = o[d];
    acc += p0 * v0[d];
    acc += p1 * v1[d];
    acc += p2 * v2[d];
    acc += p3 * v3[d];
    o[d] = acc;
  }
}

void accumulate1(float p0, const float* __restrict v0, size_t n, float* __restrict o) {
  for (size_t d = 0; d < n; ++d) o[d] += p0 * v0[d];
}

}  // namespace

// out must not overlap q, k, v or probs (the row loops are __restrict).
void scaled_dot_product_attention_portable(const AttentionShape& shape, const float* q, const float* k,
                                  const float* v, float* probs, float* out) {
  const size_t head_dim = shape.head_dim;
  const size_t* rows = shape.key_offsets;
  // Keys query row i sees: [0, visible_keys(i)).
  auto visible_keys = [&](size_t i) {
    const size_t last = shape.query_offset + i + 1;
    return shape.causal && last < shape.key_len ? last : shape.key_len;
  };
  // Three passes over the rows (scores, softmax, weighted sums), not one
  // row at a time: a row's softmax is a chain of dependent steps, and in a
  // pass of softmaxes alone the CPU overlaps several rows' chains
  // (BM_Attention with EDGEMT_CPU_FEATURES=portable, Zen 4: Tq 15 Tk 15
  // head_dim 32 2917 -> 2737 ns; the AVX2 kernel's 1371 -> 1112).
  for (size_t i = 0; i < shape.query_len; ++i) {
    const float* __restrict qi = q + i * shape.q_stride;  // [head_dim]
    float* __restrict p = probs + i * shape.key_len;      // [key_len]
    float* __restrict o = out + i * shape.out_stride;     // [head_dim]
    const size_t visible = visible_keys(i);

    // The output row doubles as scratch for q·scale (scaling q first, as
    // PyTorch's attention does, rounds differently from scaling the scores).
    for (size_t d = 0; d < head_dim; ++d) o[d] = qi[d] * shape.scale;

    // scores[j] = (q·scale)·k_j; masked keys get exactly 0 (softmax of -inf).
    for (size_t j = 0; j < visible; ++j) {
      p[j] = detail::dot(o, k + (rows ? rows[j] : j * shape.k_stride), head_dim);
    }
    for (size_t j = visible; j < shape.key_len; ++j) p[j] = 0.0f;
  }
  for (size_t i = 0; i < shape.query_len; ++i) softmax(probs + i * shape.key_len, visible_keys(i));
  auto value = [&](size_t j) { return v + (rows ? rows[j] : j * shape.v_stride); };
  for (size_t i = 0; i < shape.query_len; ++i) {
    const float* __restrict p = probs + i * shape.key_len;  // [key_len]
    float* __restrict o = out + i * shape.out_stride;       // [head_dim]
    const size_t visible = visible_keys(i);
    // out = probs · v, in key order (deterministic); a query that sees no
    // key keeps the all-zero row.
    for (size_t d = 0; d < head_dim; ++d) o[d] = 0.0f;
    size_t j = 0;
    for (; j + 4 <= visible; j += 4) {
      accumulate4(p + j, value(j), value(j + 1), value(j + 2), value(j + 3), head_dim, o);
    }
    for (; j < visible; ++j) accumulate1(p[j], value(j), head_dim, o);
  }
}

void scaled_dot_product_attention(const AttentionShape& shape, const float* q, const float* k,
                                  const float* v, float* probs, float* out) {
#if defined(__x86_64__)
  if (cpu_features().avx512) {
    scaled_dot_product_attention_avx512(shape, q, k, v, probs, out);
    return;
  }
  if (cpu_features().avx2) {
    scaled_dot_product_attention_avx2(shape, q, k, v, probs, out);
    return;
  }
#endif
  scaled_dot_product_attention_portable(shape, q, k, v, probs, out);
}

}  // namespace edgemt::kernels
