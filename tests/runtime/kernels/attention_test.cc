// scaled_dot_product_attention against a double-precision reference, with
// strided (fused QKV / cache) layouts, causal and length masks.
#include "kernels/attention.h"

#include <doctest/doctest.h>

#include <cmath>
#include <initializer_list>
#include <vector>

#include "support/kernel_testing.h"

namespace edgemt::kernels {
namespace {

using testing::Random;

struct Reference {
  std::vector<double> probs;  // [query_len, key_len]
  std::vector<double> out;    // [query_len, head_dim]
  std::vector<double> bound;  // [query_len, head_dim]: sum_j p_j·|v_j[d]|, the output's scale
};

Reference reference_attention(const AttentionShape& s, const float* q, const float* k,
                              const float* v) {
  Reference r;
  r.probs.assign(s.query_len * s.key_len, 0.0);
  r.out.assign(s.query_len * s.head_dim, 0.0);
  r.bound.assign(s.query_len * s.head_dim, 0.0);
  for (size_t i = 0; i < s.query_len; ++i) {
    size_t visible = s.key_len;
    if (s.causal && s.query_offset + i + 1 < visible) visible = s.query_offset + i + 1;
    if (visible == 0) continue;
    std::vector<double> score(visible);
    double m = -HUGE_VAL;
    for (size_t j = 0; j < visible; ++j) {
      double dot = 0.0;
      for (size_t d = 0; d < s.head_dim; ++d) {
        dot += static_cast<double>(q[i * s.q_stride + d]) * static_cast<double>(s.scale) *
               static_cast<double>(k[j * s.k_stride + d]);
      }
      score[j] = dot;
      m = dot > m ? dot : m;
    }
    double sum = 0.0;
    for (size_t j = 0; j < visible; ++j) sum += std::exp(score[j] - m);
    for (size_t j = 0; j < visible; ++j) {
      const double p = std::exp(score[j] - m) / sum;
      r.probs[i * s.key_len + j] = p;
      for (size_t d = 0; d < s.head_dim; ++d) {
        const double vd = static_cast<double>(v[j * s.v_stride + d]);
        r.out[i * s.head_dim + d] += p * vd;
        r.bound[i * s.head_dim + d] += p * std::fabs(vd);
      }
    }
  }
  return r;
}

// Buffers laid out as the runtime has them: rows of `stride` floats of which
// the first head_dim belong to this head; everything else (other heads,
// padding, key rows past key_len) is NaN, so reading it would show.
struct Buffers {
  std::vector<float> q, k, v, probs, out;
};

Buffers make_buffers(Random& rng, const AttentionShape& s, size_t key_rows) {
  Buffers b;
  b.q.assign(s.query_len * s.q_stride + 1, NAN);
  b.k.assign(key_rows * s.k_stride + 1, NAN);
  b.v.assign(key_rows * s.v_stride + 1, NAN);
  for (size_t i = 0; i < s.query_len; ++i) {
    for (size_t d = 0; d < s.head_dim; ++d) b.q[i * s.q_stride + d] = rng.normal(0.0f, 1.0f);
  }
  for (size_t j = 0; j < s.key_len; ++j) {
    for (size_t d = 0; d < s.head_dim; ++d) {
      b.k[j * s.k_stride + d] = rng.normal(0.0f, 1.0f);
      b.v[j * s.v_stride + d] = rng.normal(0.5f, 2.0f);
    }
  }
  b.probs.assign(s.query_len * s.key_len + 1, NAN);  // scratch: garbage on entry
  b.out.assign(s.query_len * s.out_stride + 1, NAN);
  return b;
}

// Checks one call against the reference; returns false on any mismatch.
bool check_against_reference(const AttentionShape& s, const Buffers& b) {
  const Reference ref = reference_attention(s, b.q.data(), b.k.data(), b.v.data());
  double worst_p = 0.0, worst_o = 0.0, worst_sum = 0.0;
  bool masked_zero = true;
  for (size_t i = 0; i < s.query_len; ++i) {
    double total = 0.0;
    for (size_t j = 0; j < s.key_len; ++j) {
      const double p = static_cast<double>(b.probs[i * s.key_len + j]);
      const double rp = ref.probs[i * s.key_len + j];
      if (rp == 0.0) masked_zero = masked_zero && testing::bits_of(b.probs[i * s.key_len + j]) == 0;
      const double e = std::fabs(p - rp) / (rp > 1e-30 ? rp : 1e-30);
      if (rp != 0.0 && !(e <= worst_p)) worst_p = e;
      total += p;
    }
    if (total != 0.0 && !(std::fabs(total - 1.0) <= worst_sum)) worst_sum = std::fabs(total - 1.0);
    for (size_t d = 0; d < s.head_dim; ++d) {
      const double o = static_cast<double>(b.out[i * s.out_stride + d]);
      const double e = std::fabs(o - ref.out[i * s.head_dim + d]) /
                       (ref.bound[i * s.head_dim + d] + 1e-30);
      if (ref.bound[i * s.head_dim + d] == 0.0) {
        masked_zero = masked_zero && testing::bits_of(b.out[i * s.out_stride + d]) == 0;
      } else if (!(e <= worst_o)) {
        worst_o = e;
      }
    }
  }
  CAPTURE(worst_p);
  CAPTURE(worst_o);
  CAPTURE(worst_sum);
  CHECK(masked_zero);
  // Probabilities: relative error from the float scores (|score| <~ 10 here).
  CHECK(worst_p <= 4e-6);
  CHECK(worst_sum <= 1e-6);
  // Output: error relative to sum_j p_j·|v_j| (its natural scale).
  CHECK(worst_o <= 4e-6);
  return masked_zero && worst_p <= 4e-6 && worst_o <= 4e-6 && worst_sum <= 1e-6;
}

TEST_CASE("kernels/attention: matches double reference over shapes - strides and masks") {
  Random rng(51);
  int cases = 0, failed = 0;
  for (size_t head_dim : {size_t{1}, size_t{3}, size_t{17}, size_t{64}, size_t{255}, size_t{256}}) {
    for (size_t query_len : {size_t{1}, size_t{2}, size_t{5}, size_t{9}}) {
      for (size_t key_len : {size_t{1}, size_t{3}, size_t{17}, size_t{40}}) {
        for (bool causal : {false, true}) {
          for (size_t query_offset : {size_t{0}, size_t{2}, size_t{30}}) {
            if (!causal && query_offset != 0) continue;
            AttentionShape s;
            s.query_len = query_len;
            s.key_len = key_len;
            s.head_dim = head_dim;
            // Strides as in a fused [T, 3·d_model] QKV buffer, a K/V cache
            // with other heads interleaved, and a packed output.
            s.q_stride = 3 * head_dim + 2;
            s.k_stride = head_dim + rng.index(0, 7);
            s.v_stride = 2 * head_dim + 1;
            s.out_stride = head_dim + (query_len % 2);
            s.scale = 1.0f / std::sqrt(static_cast<float>(head_dim));
            s.causal = causal;
            s.query_offset = query_offset;
            // The key buffer holds more rows than key_len (a cache sized for
            // the maximum length): rows past key_len must not be read.
            Buffers b = make_buffers(rng, s, key_len + 5);
            scaled_dot_product_attention(s, b.q.data(), b.k.data(), b.v.data(), b.probs.data(),
                                         b.out.data());
            CAPTURE(head_dim);
            CAPTURE(query_len);
            CAPTURE(key_len);
            CAPTURE(causal);
            CAPTURE(query_offset);
            ++cases;
            if (!check_against_reference(s, b)) ++failed;
          }
        }
      }
    }
  }
  CHECK(cases > 300);
  CHECK(failed == 0);
}

TEST_CASE("kernels/attention: no visible key gives all-zero output and probabilities") {
  Random rng(52);
  AttentionShape s;
  s.query_len = 3;
  s.key_len = 0;  // an empty source / nothing in the cache yet
  s.head_dim = 17;
  s.q_stride = s.k_stride = s.v_stride = s.out_stride = 17;
  Buffers b = make_buffers(rng, s, 1);
  scaled_dot_product_attention(s, b.q.data(), b.k.data(), b.v.data(), b.probs.data(),
                               b.out.data());
  bool zeros = true;
  for (size_t i = 0; i < s.query_len * s.head_dim; ++i) zeros = zeros && b.out[i] == 0.0f;
  CHECK(zeros);
}

TEST_CASE("kernels/attention: causal rows see exactly keys 0..offset+i") {
  Random rng(53);
  AttentionShape s;
  s.query_len = 4;
  s.key_len = 6;
  s.head_dim = 8;
  s.q_stride = s.k_stride = s.v_stride = s.out_stride = 8;
  s.scale = 0.35f;
  s.causal = true;
  s.query_offset = 1;  // query i sees keys 0..i+1; the last row sees 5 of 6
  Buffers b = make_buffers(rng, s, s.key_len);
  scaled_dot_product_attention(s, b.q.data(), b.k.data(), b.v.data(), b.probs.data(),
                               b.out.data());
  for (size_t i = 0; i < s.query_len; ++i) {
    for (size_t j = 0; j < s.key_len; ++j) {
      const float p = b.probs[i * s.key_len + j];
      CAPTURE(i);
      CAPTURE(j);
      if (j <= s.query_offset + i) CHECK(p > 0.0f);
      else CHECK(p == 0.0f);
    }
  }
  CHECK(check_against_reference(s, b));
}

TEST_CASE("kernels/attention: one-hot values return the probabilities") {
  // v_j = e_j (head_dim == key_len): out row i == probs row i.
  Random rng(54);
  AttentionShape s;
  s.query_len = 5;
  s.key_len = 9;
  s.head_dim = 9;
  s.q_stride = s.k_stride = s.v_stride = s.out_stride = 9;
  s.scale = 0.5f;
  Buffers b = make_buffers(rng, s, s.key_len);
  for (size_t j = 0; j < s.key_len; ++j) {
    for (size_t d = 0; d < s.head_dim; ++d) b.v[j * s.v_stride + d] = j == d ? 1.0f : 0.0f;
  }
  scaled_dot_product_attention(s, b.q.data(), b.k.data(), b.v.data(), b.probs.data(),
                               b.out.data());
  CHECK(testing::same_bits(b.out.data(), b.probs.data(), s.query_len * s.key_len));
}

TEST_CASE("kernels/attention: incremental decoding equals the full causal pass bit for bit") {
  // The decoder runs one query at a time against a growing cache
  // (query_offset = t, key_len = t + 1); it must reproduce the rows of the
  // whole-sequence causal pass exactly, or greedy outputs could diverge.
  Random rng(55);
  for (size_t head_dim : {size_t{3}, size_t{64}, size_t{255}}) {
    AttentionShape full;
    full.query_len = 11;
    full.key_len = 11;
    full.head_dim = head_dim;
    full.q_stride = full.k_stride = full.v_stride = full.out_stride = head_dim;
    full.scale = 1.0f / std::sqrt(static_cast<float>(head_dim));
    full.causal = true;
    Buffers b = make_buffers(rng, full, full.key_len);
    scaled_dot_product_attention(full, b.q.data(), b.k.data(), b.v.data(), b.probs.data(),
                                 b.out.data());
    bool same = true;
    for (size_t t = 0; t < full.query_len; ++t) {
      AttentionShape step = full;
      step.query_len = 1;
      step.key_len = t + 1;
      step.query_offset = t;
      std::vector<float> probs(step.key_len), out(head_dim);
      scaled_dot_product_attention(step, b.q.data() + t * head_dim, b.k.data(), b.v.data(),
                                   probs.data(), out.data());
      same = same && testing::same_bits(out.data(), b.out.data() + t * head_dim, head_dim);
      same = same && testing::same_bits(probs.data(), b.probs.data() + t * full.key_len, t + 1);
    }
    CAPTURE(head_dim);
    CHECK(same);
  }
}

TEST_CASE("kernels/attention: repeated calls are deterministic") {
  Random rng(56);
  AttentionShape s;
  s.query_len = 7;
  s.key_len = 33;
  s.head_dim = 64;
  s.q_stride = s.k_stride = s.v_stride = s.out_stride = 64;
  s.scale = 0.125f;
  Buffers b = make_buffers(rng, s, s.key_len);
  scaled_dot_product_attention(s, b.q.data(), b.k.data(), b.v.data(), b.probs.data(),
                               b.out.data());
  const auto first = b.out;
  scaled_dot_product_attention(s, b.q.data(), b.k.data(), b.v.data(), b.probs.data(),
                               b.out.data());
  CHECK(testing::same_bits(first.data(), b.out.data(), first.size() - 1));
}

}  // namespace
}  // namespace edgemt::kernels

namespace edgemt::kernels {
namespace {

TEST_CASE("kernels/attention: keys found through key_offsets give the bits of the contiguous layout") {
  // A decoder cache whose rows sit in scattered slots (beam reordering
  // without copies): the same keys and values, gathered through offsets,
  // must give exactly the output of the same keys laid out in order.
  Random rng(31);
  for (size_t key_len : {1, 3, 4, 5, 9, 17}) {
    const size_t head_dim = 64, stride = 256, slots = 4;
    const std::vector<float> q = rng.normal_vector(head_dim, 0.0f, 1.0f);
    std::vector<float> k_cache(slots * key_len * stride), v_cache(slots * key_len * stride);
    for (float& x : k_cache) x = rng.normal(0.0f, 1.0f);
    for (float& x : v_cache) x = rng.normal(0.0f, 1.0f);
    std::vector<size_t> offsets(key_len);
    std::vector<float> k(key_len * head_dim), v(key_len * head_dim);
    for (size_t j = 0; j < key_len; ++j) {
      offsets[j] = (rng.index(0, slots - 1) * key_len + j) * stride;
      for (size_t d = 0; d < head_dim; ++d) {
        k[j * head_dim + d] = k_cache[offsets[j] + d];
        v[j * head_dim + d] = v_cache[offsets[j] + d];
      }
    }
    AttentionShape shape;
    shape.query_len = 1;
    shape.key_len = key_len;
    shape.head_dim = head_dim;
    shape.q_stride = shape.out_stride = head_dim;
    shape.k_stride = shape.v_stride = head_dim;
    shape.scale = 0.125f;
    std::vector<float> probs(key_len), want(head_dim), got(head_dim);
    scaled_dot_product_attention(shape, q.data(), k.data(), v.data(), probs.data(), want.data());
    shape.key_offsets = offsets.data();
    shape.k_stride = shape.v_stride = 0;
    scaled_dot_product_attention(shape, q.data(), k_cache.data(), v_cache.data(), probs.data(),
                                 got.data());
    for (size_t d = 0; d < head_dim; ++d) CHECK(got[d] == want[d]);
  }
}

}  // namespace
}  // namespace edgemt::kernels
