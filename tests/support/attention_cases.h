// Cases for the CPU-specific attention kernels (kernels/attention.h): head
// sizes around the 8- and 16-lane chunks (and past the 256 of the AVX-512
// kernel's transposed keys), strided, causal, masked and
// offset-addressed layouts, each compared bit for bit with the portable
// kernel. Call inside a TEST_CASE (doctest checks).
#pragma once

#include <doctest/doctest.h>

#include <cmath>
#include <cstring>
#include <vector>

#include "kernels/attention.h"
#include "support/kernel_testing.h"

namespace edgemt::testing {

using AttentionKernel = void (*)(const kernels::AttentionShape& shape, const float* q,
                                 const float* k, const float* v, float* probs, float* out);

inline void check_same_bits_as_portable(AttentionKernel variant) {
  Random rng(41);
  for (size_t head_dim : {1, 7, 8, 16, 17, 24, 32, 40, 48, 56, 64, 80, 128, 200, 264}) {
    // 5-7 and 9-11: AVX-512's 4-row groups and 1, 2 or 3 more (below 8
    // queries scored row by row, from 8 in blocks of keys)
    for (size_t query_len : {1, 3, 5, 6, 7, 9, 10, 11, 20}) {
      // 16, 17, 32: AVX-512's rows in one or two registers of keys
      for (size_t key_len : {0, 1, 4, 5, 16, 17, 32, 33}) {
        for (int layout = 0; layout < 3; ++layout) {  // 0 plain, 1 causal, 2 key_offsets
          CAPTURE(head_dim);
          CAPTURE(query_len);
          CAPTURE(key_len);
          CAPTURE(layout);
          const size_t stride = head_dim + 5;
          kernels::AttentionShape s;
          s.query_len = query_len;
          s.key_len = key_len;
          s.head_dim = head_dim;
          s.q_stride = s.k_stride = s.v_stride = s.out_stride = stride;
          s.scale = 0.2f;
          s.causal = layout == 1;
          s.query_offset = key_len > query_len ? key_len - query_len : 0;
          const size_t slots = 3;
          std::vector<float> q = rng.normal_vector(query_len * stride, 0.0f, 1.0f);
          std::vector<float> k = rng.normal_vector(slots * (key_len + 1) * stride, 0.0f, 2.0f);
          std::vector<float> v = rng.normal_vector(slots * (key_len + 1) * stride, 0.0f, 1.0f);
          // Causal: the last key's value holds an infinity, which the rows
          // that do not see that key must not touch (0 · inf is NaN).
          if (layout == 1 && key_len >= 2) v[(key_len - 1) * stride] = INFINITY;
          std::vector<size_t> offsets(key_len);
          if (layout == 2) {
            for (size_t j = 0; j < key_len; ++j) offsets[j] = (rng.index(0, slots - 1) * key_len + j) * stride;
            s.key_offsets = offsets.data();
          }
          std::vector<float> p_want(query_len * key_len + 1), p_got(query_len * key_len + 1);
          std::vector<float> want(query_len * stride, 7.0f), got(query_len * stride, 7.0f);
          kernels::scaled_dot_product_attention_portable(s, q.data(), k.data(), v.data(), p_want.data(),
                                                want.data());
          variant(s, q.data(), k.data(), v.data(), p_got.data(), got.data());
          CHECK(std::memcmp(want.data(), got.data(), want.size() * sizeof(float)) == 0);
          CHECK(std::memcmp(p_want.data(), p_got.data(), query_len * key_len * sizeof(float)) == 0);
        }
      }
    }
  }
  // Scores over exp's whole range, one query, head size 1 (score j = k[j]):
  // every probability is e^(score - max) scaled by 1 / total, so a single
  // exp that differs in one bit shows. Spans: the fast in-range path only,
  // mixed with the clamped and underflowing one, and exp of subnormals.
  for (float spread : {80.0f, 100.0f, 200.0f}) {
    CAPTURE(spread);
    kernels::AttentionShape s;
    s.query_len = 1;
    s.key_len = 4099;
    s.head_dim = 1;
    s.q_stride = s.k_stride = s.v_stride = s.out_stride = 1;
    s.scale = 1.0f;
    const std::vector<float> q = {1.0f};
    std::vector<float> k(s.key_len), v = rng.normal_vector(s.key_len, 0.0f, 1.0f);
    for (size_t j = 0; j < s.key_len; ++j) {
      k[j] = -spread * static_cast<float>(j) / static_cast<float>(s.key_len - 1) + rng.normal(0.0f, 0.5f);
    }
    std::vector<float> p_want(s.key_len), p_got(s.key_len);
    float want = 7.0f, got = 7.0f;
    kernels::scaled_dot_product_attention_portable(s, q.data(), k.data(), v.data(), p_want.data(), &want);
    variant(s, q.data(), k.data(), v.data(), p_got.data(), &got);
    CHECK(std::memcmp(p_want.data(), p_got.data(), s.key_len * sizeof(float)) == 0);
    CHECK(std::memcmp(&want, &got, sizeof want) == 0);
  }
}

}  // namespace edgemt::testing
