#include "support/reference_transformer.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <cstdio>
#include <string>

#include "kernels/fp16.h"
#include "kernels/int8_gemm.h"
#include "models/transformer/config.h"

using namespace edgemt::transformer;  // the family under test

namespace edgemt::testing {
namespace {

using Matrix = std::vector<double>;

// y [rows, out] = x [rows, in] · Wᵀ + b, W [out, in].
Matrix linear(const Matrix& x, size_t rows, const Matrix& w, const Matrix* b, size_t in,
              size_t out) {
  Matrix y(rows * out, 0.0);
  for (size_t r = 0; r < rows; ++r) {
    for (size_t o = 0; o < out; ++o) {
      double sum = b != nullptr ? (*b)[o] : 0.0;
      for (size_t i = 0; i < in; ++i) sum += x[r * in + i] * w[o * in + i];
      y[r * out + o] = sum;
    }
  }
  return y;
}

// Column block `block` [rows, width] of m [rows, blocks · width] (q, k or v
// of a fused projection's output).
Matrix column_block(const Matrix& m, size_t rows, size_t width, size_t blocks, size_t block) {
  Matrix out(rows * width);
  for (size_t r = 0; r < rows; ++r) {
    for (size_t c = 0; c < width; ++c) out[r * width + c] = m[r * blocks * width + block * width + c];
  }
  return out;
}

void layer_norm(Matrix* x, size_t rows, size_t d, const Matrix& g, const Matrix& b, double eps) {
  for (size_t r = 0; r < rows; ++r) {
    double mean = 0.0;
    for (size_t i = 0; i < d; ++i) mean += (*x)[r * d + i];
    mean /= static_cast<double>(d);
    double var = 0.0;
    for (size_t i = 0; i < d; ++i) var += ((*x)[r * d + i] - mean) * ((*x)[r * d + i] - mean);
    var /= static_cast<double>(d);
    for (size_t i = 0; i < d; ++i) {
      (*x)[r * d + i] = ((*x)[r * d + i] - mean) / std::sqrt(var + eps) * g[i] + b[i];
    }
  }
}

// Multi-head attention: q [tq, d], k, v [tk, d]; causal masks keys j > i.
Matrix attention(const Matrix& q, const Matrix& k, const Matrix& v, size_t tq, size_t tk,
                 size_t d, size_t heads, bool causal) {
  const size_t hd = d / heads;
  Matrix out(tq * d, 0.0);
  std::vector<double> p(tk);
  for (size_t h = 0; h < heads; ++h) {
    for (size_t i = 0; i < tq; ++i) {
      double max_score = -std::numeric_limits<double>::infinity();
      for (size_t j = 0; j < tk; ++j) {
        double s = 0.0;
        for (size_t c = 0; c < hd; ++c) s += q[i * d + h * hd + c] * k[j * d + h * hd + c];
        s /= std::sqrt(static_cast<double>(hd));
        if (causal && j > i) s = -std::numeric_limits<double>::infinity();
        p[j] = s;
        max_score = std::max(max_score, s);
      }
      double sum = 0.0;
      for (size_t j = 0; j < tk; ++j) {
        p[j] = std::isinf(p[j]) ? 0.0 : std::exp(p[j] - max_score);
        sum += p[j];
      }
      for (size_t j = 0; j < tk; ++j) {
        for (size_t c = 0; c < hd; ++c) out[i * d + h * hd + c] += p[j] / sum * v[j * d + h * hd + c];
      }
    }
  }
  return out;
}

void activate(Matrix* x, Activation activation) {
  for (double& value : *x) {
    switch (activation) {
      case Activation::kRelu: value = value > 0.0 ? value : 0.0; break;
      case Activation::kGelu: value = 0.5 * value * (1.0 + std::erf(value / std::sqrt(2.0))); break;
      case Activation::kSwish: value = value / (1.0 + std::exp(-value)); break;
    }
  }
}

}  // namespace

ReferenceTransformer::ReferenceTransformer(const Model& model) : model_(model) {}

Matrix ReferenceTransformer::project(const Matrix& x, size_t rows, const std::string& weight,
                                     const Matrix* b, size_t in, size_t out,
                                     bool one_product) const {
  const Matrix w = tensor(weight.c_str());
  // F32 and F16 files, and the F32 tables of Int8PerTensorDynamic ones.
  if (model_.find_tensor(weight.c_str())->dtype != DType::kI8) return linear(x, rows, w, b, in, out);
  // Int8PerRowDynamic: every input row (times the projection's smoothing
  // vector in a smoothed file) is rounded to the 255 levels of its own
  // max|x| / 127 (Int8Linear's full codes, kernels/int8_gemm.h) before the
  // product (weights are already q · scale).
  Matrix quantized(x);
  if (model_.find_tensor((weight + "_smooth").c_str()) != nullptr) {
    const Matrix m = tensor((weight + "_smooth").c_str());
    for (size_t r = 0; r < rows; ++r) {
      for (size_t i = 0; i < in; ++i) quantized[r * in + i] *= m[i];
    }
  }
  // Int8PerTensorStatic: codes of x · a clamped to ±127 (a the projection's
  // input scale), shifted by 127 as Marian's product is; the row scales
  // already hold 1 / a.
  if (model_.quantization() == QuantizationScheme::kInt8PerTensorStatic) {
    const double a = tensor((weight + "_input_scale").c_str())[0];
    for (double& value : quantized) {
      const double code = std::nearbyint(static_cast<double>(static_cast<float>(value) * static_cast<float>(a)));
      value = std::min(127.0, std::max(-127.0, code)) + 127.0;
    }
    return linear(quantized, rows, w, b, in, out);
  }
  // Int8PerTensorDynamic: one product's rows share the range of them all.
  const bool whole = one_product && model_.quantization() == QuantizationScheme::kInt8PerTensorDynamic;
  double tensor_max = 0.0;
  for (size_t i = 0; whole && i < rows * in; ++i) tensor_max = std::max(tensor_max, std::fabs(quantized[i]));
  for (size_t r = 0; r < rows; ++r) {
    double max_abs = tensor_max;
    for (size_t i = 0; !whole && i < in; ++i) max_abs = std::max(max_abs, std::fabs(quantized[r * in + i]));
    if (max_abs == 0.0) continue;
    const double step = max_abs / kernels::int8::kFullCodes;
    for (size_t i = 0; i < in; ++i) {
      quantized[r * in + i] = std::nearbyint(quantized[r * in + i] / step) * step;
    }
  }
  return linear(quantized, rows, w, b, in, out);
}

Matrix ReferenceTransformer::tensor(const char* name) const {
  const TensorView* t = model_.find_tensor(name);
  if (t == nullptr) {
    std::fprintf(stderr, "reference: missing tensor %s\n", name);
    std::abort();
  }
  const size_t n = t->element_count();
  Matrix m(n);
  if (t->dtype == DType::kI8) {  // q · row scale (Int8PerRowDynamic)
    const Matrix scale = tensor((std::string(name) + "_scale").c_str());
    const size_t cols = n / scale.size();
    for (size_t i = 0; i < n; ++i) {
      m[i] = static_cast<double>(static_cast<const int8_t*>(t->data)[i]) * scale[i / cols];
    }
    return m;
  }
  for (size_t i = 0; i < n; ++i) {
    m[i] = t->dtype == DType::kF16
               ? static_cast<double>(kernels::f16_to_f32(static_cast<const uint16_t*>(t->data)[i]))
               : static_cast<double>(static_cast<const float*>(t->data)[i]);
  }
  return m;
}

Matrix ReferenceTransformer::table(const char* name) const {
  Matrix m = tensor(name);
  if (!model_.residual_tables()) return m;
  // The codes are the owner's: a shared target table aliases the source's.
  std::string owner = name;
  if (model_.find_tensor((owner + "_residual").c_str()) == nullptr) owner = "embedding.source";
  const TensorView* codes = model_.find_tensor((owner + "_residual").c_str());
  const Matrix scale = tensor((owner + "_residual_scale").c_str());
  if (codes == nullptr) {
    std::fprintf(stderr, "reference: missing tensor %s_residual\n", owner.c_str());
    std::abort();
  }
  const size_t cols = m.size() / scale.size();
  const uint8_t* bytes = static_cast<const uint8_t*>(codes->data);
  for (size_t r = 0; r < scale.size(); ++r) {
    for (size_t c = 0; c < cols; ++c) {
      const uint8_t byte = bytes[r * ((cols + 1) / 2) + c / 2];
      const int half = c % 2 == 0 ? byte & 0x0F : byte >> 4;
      m[r * cols + c] += static_cast<double>(half >= 8 ? half - 16 : half) * scale[r];
    }
  }
  return m;
}

namespace {

std::string layer_name(const char* stack, size_t i, const char* part) {
  return std::string(stack) + ".layers." + std::to_string(i) + "." + part;
}

}  // namespace

Matrix ReferenceTransformer::encode(const std::vector<int32_t>& source) const {
  const TransformerConfig& c = transformer_config(model_);
  const size_t d = c.d_model, t = source.size();
  const bool pre = c.norm_placement == NormPlacement::kPreNorm;
  const double eps = static_cast<double>(c.layer_norm_eps);
  const Matrix emb = table("embedding.source"), pos = tensor("position.table");
  Matrix x(t * d);
  for (size_t i = 0; i < t; ++i) {
    for (size_t k = 0; k < d; ++k) {
      x[i * d + k] = emb[static_cast<size_t>(source[i]) * d + k] * static_cast<double>(c.embedding_scale) + pos[i * d + k];
    }
  }
  for (size_t l = 0; l < c.encoder_layers; ++l) {
    auto N = [&](const char* part) { return layer_name("encoder", l, part); };
    auto T = [&](const char* part) { return tensor(N(part).c_str()); };
    // Self-attention.
    Matrix h = x;
    if (pre) layer_norm(&h, t, d, T("self_attn_norm.weight"), T("self_attn_norm.bias"), eps);
    const Matrix bqkv = T("self_attn.qkv.bias");
    const Matrix qkv = project(h, t, N("self_attn.qkv.weight"), &bqkv, d, 3 * d, true);
    const Matrix q = column_block(qkv, t, d, 3, 0), k = column_block(qkv, t, d, 3, 1),
                 v = column_block(qkv, t, d, 3, 2);
    const Matrix bo = T("self_attn.out.bias");
    Matrix a = project(attention(q, k, v, t, t, d, c.heads, false), t, N("self_attn.out.weight"), &bo, d,
                       d, true);
    for (size_t i = 0; i < x.size(); ++i) x[i] += a[i];
    if (!pre) layer_norm(&x, t, d, T("self_attn_norm.weight"), T("self_attn_norm.bias"), eps);
    // Feed-forward.
    h = x;
    if (pre) layer_norm(&h, t, d, T("ffn_norm.weight"), T("ffn_norm.bias"), eps);
    const Matrix b1 = T("ffn.in.bias"), b2 = T("ffn.out.bias");
    Matrix f = project(h, t, N("ffn.in.weight"), &b1, d, c.ffn_dim, true);
    activate(&f, c.activation);
    a = project(f, t, N("ffn.out.weight"), &b2, c.ffn_dim, d, true);
    for (size_t i = 0; i < x.size(); ++i) x[i] += a[i];
    if (!pre) layer_norm(&x, t, d, T("ffn_norm.weight"), T("ffn_norm.bias"), eps);
  }
  if (c.encoder_final_norm) {
    layer_norm(&x, t, d, tensor("encoder.final_norm.weight"), tensor("encoder.final_norm.bias"), eps);
  }
  return x;
}

std::vector<double> ReferenceTransformer::logits(const std::vector<int32_t>& source,
                                                 const std::vector<int32_t>& target_in) const {
  const TransformerConfig& c = transformer_config(model_);
  const size_t d = c.d_model, t = target_in.size(), s = source.size();
  const bool pre = c.norm_placement == NormPlacement::kPreNorm;
  const double eps = static_cast<double>(c.layer_norm_eps);
  const Matrix memory = encode(source);
  const Matrix emb = table("embedding.target"), pos = tensor("position.table");
  Matrix x(t * d);
  for (size_t i = 0; i < t; ++i) {
    for (size_t k = 0; k < d; ++k) {
      x[i * d + k] = emb[static_cast<size_t>(target_in[i]) * d + k] * static_cast<double>(c.embedding_scale) + pos[i * d + k];
    }
  }
  for (size_t l = 0; l < c.decoder_layers; ++l) {
    auto N = [&](const char* part) { return layer_name("decoder", l, part); };
    auto T = [&](const char* part) { return tensor(N(part).c_str()); };
    auto residual = [&](const Matrix& a, const char* norm) {
      for (size_t i = 0; i < x.size(); ++i) x[i] += a[i];
      if (!pre) {
        layer_norm(&x, t, d, T((std::string(norm) + ".weight").c_str()),
                   T((std::string(norm) + ".bias").c_str()), eps);
      }
    };
    auto input = [&](const char* norm) {
      Matrix h = x;
      if (pre) {
        layer_norm(&h, t, d, T((std::string(norm) + ".weight").c_str()),
                   T((std::string(norm) + ".bias").c_str()), eps);
      }
      return h;
    };
    Matrix h;
    if (has_ssru_decoder(c)) {
      // Marian's SSRU over the positions in order (post-norm): c_0 = 0,
      // gates = x W_g^T + b_g ([x~ | forget input]), f = 1/(1 + e^-g),
      // c_t = f c_{t-1} + (1 - f) x~, h_t = max(c_t, 0); x = norm(x + h).
      const Matrix bg = T("ssru.gates.bias");
      const Matrix gates = project(x, t, N("ssru.gates.weight"), &bg, d, 2 * d);
      Matrix out(t * d), cell(d, 0.0);
      for (size_t i = 0; i < t; ++i) {
        for (size_t k = 0; k < d; ++k) {
          const double f = 1.0 / (1.0 + std::exp(-gates[i * 2 * d + d + k]));
          cell[k] = f * cell[k] + (1.0 - f) * gates[i * 2 * d + k];
          out[i * d + k] = std::max(cell[k], 0.0);
        }
      }
      residual(out, "ssru_norm");
    } else {
      // Masked self-attention.
      h = input("self_attn_norm");
      const Matrix bqkv = T("self_attn.qkv.bias");
      const Matrix qkv = project(h, t, N("self_attn.qkv.weight"), &bqkv, d, 3 * d);
      const Matrix q = column_block(qkv, t, d, 3, 0), k = column_block(qkv, t, d, 3, 1),
                   v = column_block(qkv, t, d, 3, 2);
      Matrix context = attention(q, k, v, t, t, d, c.heads, true);
      // Marian's pre-norm decoder keeps the raw layer inputs x as the
      // self-attention memory: after the first position every key and value
      // is of raw x (the first attends to its own normalized h).
      const bool raw = c.raw_decoder_self_memory;
      // In Marian's int8 arithmetic its decoder multiplies the memory rows
      // 0..i again at each step i, in one product: one quantization range,
      // so the keys and values of earlier positions change with i
      // (transformer.h DecoderLayerSelfAttention).
      const bool again = model_.quantization() == QuantizationScheme::kInt8PerTensorDynamic;
      if (raw || again) {
        const Matrix raw_kv = raw ? project(x, t, N("self_attn.qkv.weight"), &bqkv, d, 3 * d) : Matrix();
        for (size_t i = 0; i < t; ++i) {
          const Matrix& rows = raw && i > 0 ? x : h;  // the memory position i attends over
          Matrix kv_i;
          if (again) {
            const Matrix prefix(rows.begin(), rows.begin() + static_cast<std::ptrdiff_t>((i + 1) * d));
            kv_i = project(prefix, i + 1, N("self_attn.qkv.weight"), &bqkv, d, 3 * d, true);
          } else {
            const Matrix& all = i > 0 ? raw_kv : qkv;
            kv_i.assign(all.begin(), all.begin() + static_cast<std::ptrdiff_t>((i + 1) * 3 * d));
          }
          const Matrix q_i(q.begin() + static_cast<std::ptrdiff_t>(i * d),
                           q.begin() + static_cast<std::ptrdiff_t>((i + 1) * d));
          const Matrix row = attention(q_i, column_block(kv_i, i + 1, d, 3, 1),
                                       column_block(kv_i, i + 1, d, 3, 2), 1, i + 1, d, c.heads, false);
          std::copy(row.begin(), row.end(), context.begin() + static_cast<std::ptrdiff_t>(i * d));
        }
      }
      const Matrix bo = T("self_attn.out.bias");
      residual(project(context, t, N("self_attn.out.weight"), &bo, d, d), "self_attn_norm");
    }
    // Cross-attention.
    h = input("cross_attn_norm");
    const Matrix bq = T("cross_attn.q.bias"), bkv = T("cross_attn.kv.bias");
    const Matrix q = project(h, t, N("cross_attn.q.weight"), &bq, d, d);
    const Matrix kv = project(memory, s, N("cross_attn.kv.weight"), &bkv, d, 2 * d, true);
    const Matrix mk = column_block(kv, s, d, 2, 0), mv = column_block(kv, s, d, 2, 1);
    const Matrix bco = T("cross_attn.out.bias");
    residual(project(attention(q, mk, mv, t, s, d, c.heads, false), t, N("cross_attn.out.weight"), &bco, d, d),
             "cross_attn_norm");
    // Feed-forward.
    h = input("ffn_norm");
    const Matrix b1 = T("ffn.in.bias"), b2 = T("ffn.out.bias");
    Matrix f = project(h, t, N("ffn.in.weight"), &b1, d, c.ffn_dim);
    activate(&f, c.activation);
    residual(project(f, t, N("ffn.out.weight"), &b2, c.ffn_dim, d), "ffn_norm");
  }
  if (c.decoder_final_norm) {
    layer_norm(&x, t, d, tensor("decoder.final_norm.weight"), tensor("decoder.final_norm.bias"), eps);
  }
  Matrix bout;
  if (c.output_bias) bout = tensor("output.bias");
  return project(x, t, "output.weight", c.output_bias ? &bout : nullptr, d, c.vocab_size);
}

std::vector<int32_t> ReferenceTransformer::greedy(const std::vector<int32_t>& source,
                                                  size_t max_len) const {
  const SpecialTokens& special = model_.special_tokens();
  const size_t vocab = transformer_config(model_).vocab_size;
  std::vector<int32_t> inputs = {special.decoder_start};
  std::vector<int32_t> output;
  while (output.size() < max_len) {
    const std::vector<double> all = logits(source, inputs);
    const double* last = all.data() + (inputs.size() - 1) * vocab;
    size_t best = vocab;
    for (size_t v = 0; v < vocab; ++v) {
      if (static_cast<int32_t>(v) == special.pad || static_cast<int32_t>(v) == special.bos) continue;
      if (best == vocab || last[v] > last[best]) best = v;
    }
    const int32_t token = static_cast<int32_t>(best);
    if (token == special.eos) break;
    output.push_back(token);
    inputs.push_back(token);
  }
  return output;
}

}  // namespace edgemt::testing
