#include "models/transformer/tensor_layout.h"

#include <cstdarg>
#include <cstdio>

namespace edgemt {

namespace {

// Walks the layout, handing each tensor to the visitor. `stopped` latches once
// the visitor returns false, so the emit calls below can be written straight.
class Emitter {
 public:
  Emitter(DType weight_dtype, ExpectedTensorVisitor visit, void* context)
      : weight_dtype_(weight_dtype), visit_(visit), context_(context) {}

  bool stopped() const { return stopped_; }

  // `name` is "<prefix>.<suffix>" (prefix may be empty). In an I8 file the
  // matrix is followed by its row scales `<name>_scale` [rows] (F32), which
  // alias `scale_alias_of` when the matrix aliases another.
  void matrix(const char* prefix, const char* suffix, uint32_t rows, uint32_t cols,
              const char* alias_of = nullptr, const char* scale_alias_of = nullptr) {
    emit(prefix, suffix, TensorRole::kMatrix, weight_dtype_, 2, rows, cols, alias_of);
    if (weight_dtype_ != DType::kI8) return;
    char scale[kMaxTensorNameLength];
    format_tensor_name(scale, sizeof(scale), "%s_scale", suffix);
    emit(prefix, scale, TensorRole::kVector, DType::kF32, 1, rows, 0, scale_alias_of);
  }
  void table(const char* name, uint32_t rows, uint32_t cols) {  // F32 2-D (position table)
    emit("", name, TensorRole::kVector, DType::kF32, 2, rows, cols, nullptr);
  }
  void vector(const char* prefix, const char* suffix, uint32_t length) {
    emit(prefix, suffix, TensorRole::kVector, DType::kF32, 1, length, 0, nullptr);
  }
  // A Linear: `<prefix>.weight` [out, in] and `<prefix>.bias` [out].
  void linear(const char* scope, const char* part, uint32_t out, uint32_t in) {
    char prefix[kMaxTensorNameLength];
    format_tensor_name(prefix, sizeof(prefix), "%s.%s", scope, part);
    matrix(prefix, "weight", out, in);
    vector(prefix, "bias", out);
  }
  // A LayerNorm: `<prefix>.weight` and `<prefix>.bias`, both [d].
  void norm(const char* scope, const char* part, uint32_t d) {
    char prefix[kMaxTensorNameLength];
    if (scope[0] != '\0') {
      format_tensor_name(prefix, sizeof(prefix), "%s.%s", scope, part);
    } else {
      format_tensor_name(prefix, sizeof(prefix), "%s", part);
    }
    vector(prefix, "weight", d);
    vector(prefix, "bias", d);
  }

 private:
  void emit(const char* prefix, const char* suffix, TensorRole role, DType dtype, uint32_t rank,
            uint32_t dim0, uint32_t dim1, const char* alias_of) {
    if (stopped_) return;
    ExpectedTensor tensor;
    if (prefix[0] != '\0') {
      format_tensor_name(tensor.name, sizeof(tensor.name), "%s.%s", prefix, suffix);
    } else {
      format_tensor_name(tensor.name, sizeof(tensor.name), "%s", suffix);
    }
    tensor.role = role;
    tensor.dtype = dtype;
    tensor.rank = rank;
    tensor.shape[0] = dim0;
    tensor.shape[1] = rank > 1 ? dim1 : 0;
    tensor.alias_of = alias_of;
    if (!visit_(tensor, context_)) stopped_ = true;
  }

  DType weight_dtype_;
  ExpectedTensorVisitor visit_;
  void* context_;
  bool stopped_ = false;
};

}  // namespace

bool for_each_expected_tensor(const TransformerConfig& config, DType weight_dtype,
                              ExpectedTensorVisitor visit, void* context) {
  const uint32_t d = config.d_model;
  const uint32_t f = config.ffn_dim;
  const uint32_t v = config.vocab_size;
  Emitter out(weight_dtype, visit, context);

  out.matrix("", "embedding.source", v, d);
  out.matrix("", "embedding.target", v, d,
             config.shared_embeddings ? "embedding.source" : nullptr,
             config.shared_embeddings ? "embedding.source_scale" : nullptr);
  out.table("position.table", config.max_positions, d);
  out.matrix("", "output.weight", v, d, config.tied_output ? "embedding.target" : nullptr,
             config.tied_output ? "embedding.target_scale" : nullptr);
  if (config.output_bias) out.vector("", "output.bias", v);

  char scope[kMaxTensorNameLength];
  for (uint32_t i = 0; i < config.encoder_layers && !out.stopped(); ++i) {
    format_tensor_name(scope, sizeof(scope), "encoder.layers.%u", i);
    out.linear(scope, "self_attn.qkv", 3 * d, d);
    out.linear(scope, "self_attn.out", d, d);
    out.norm(scope, "self_attn_norm", d);
    out.linear(scope, "ffn.in", f, d);
    out.linear(scope, "ffn.out", d, f);
    out.norm(scope, "ffn_norm", d);
  }
  if (config.encoder_final_norm) out.norm("", "encoder.final_norm", d);

  for (uint32_t i = 0; i < config.decoder_layers && !out.stopped(); ++i) {
    format_tensor_name(scope, sizeof(scope), "decoder.layers.%u", i);
    out.linear(scope, "self_attn.qkv", 3 * d, d);
    out.linear(scope, "self_attn.out", d, d);
    out.norm(scope, "self_attn_norm", d);
    out.linear(scope, "cross_attn.q", d, d);
    out.linear(scope, "cross_attn.kv", 2 * d, d);
    out.linear(scope, "cross_attn.out", d, d);
    out.norm(scope, "cross_attn_norm", d);
    out.linear(scope, "ffn.in", f, d);
    out.linear(scope, "ffn.out", d, f);
    out.norm(scope, "ffn_norm", d);
  }
  if (config.decoder_final_norm) out.norm("", "decoder.final_norm", d);
  return !out.stopped();
}

size_t expected_tensor_count(const TransformerConfig& config, DType weight_dtype) {
  // Per layer: encoder 4 linears + 2 norms = 12 tensors; decoder 7 linears +
  // 3 norms = 20 tensors.
  size_t count = 4;  // embedding.source, embedding.target, position.table, output.weight
  if (config.output_bias) count += 1;
  count += size_t{12} * config.encoder_layers;
  count += size_t{20} * config.decoder_layers;
  if (config.encoder_final_norm) count += 2;
  if (config.decoder_final_norm) count += 2;
  if (weight_dtype == DType::kI8) {  // one `_scale` per matrix
    count += 3 + size_t{4} * config.encoder_layers + size_t{7} * config.decoder_layers;
  }
  return count;
}

}  // namespace edgemt
