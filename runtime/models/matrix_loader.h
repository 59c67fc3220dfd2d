// MatrixLoader: a family's weights resolved from a verified Model at load,
// the same way for every family (models/<family>/weights.cc use it).
//
// A matrix becomes a Linear: f32 ones the own f32 GEMM where it beats
// XNNPACK on this CPU (else XNNPACK), f16 ones XNNPACK's f16 GEMM on CPUs
// with fp16 arithmetic (else widened to f32 through one reused buffer), I8
// ones the own int8 GEMM's packs. Vectors (biases, norms, scales) are f32 in
// every file and read in place; embedding tables too, in their stored dtype.
#pragma once

#include <cstddef>
#include <memory>

#include "edgemt/model.h"
#include "edgemt/status.h"
#include "kernels/embedding.h"
#include "layers/linear.h"
#include "models/network_options.h"

namespace edgemt {

// A tensor by name (kInvalidModel when missing: a verifier/loader mismatch).
[[nodiscard]] Status find_tensor(const Model& model, const char* name, const TensorView** out);
// An F32 vector by name.
[[nodiscard]] Status find_vector(const Model& model, const char* name, const float** out);
// An I8 matrix's row scales: `<name>_scale` [rows].
[[nodiscard]] Status find_row_scales(const Model& model, const char* matrix_name, const float** out);
// An embedding table [rows, dim] in its stored dtype (+ row scales for I8).
[[nodiscard]] Status find_embedding_table(const Model& model, const char* name,
                                          kernels::EmbeddingTable* table);

// Whether an f32 matrix goes to the own f32 GEMM on this CPU (else
// XNNPACK): every one where the own kernel beats XNNPACK, and one that also
// serves an f32 embedding table (a tied output projection) wherever there
// is a fast own kernel.
bool f32_matrix_on_own_gemm(bool serves_embedding);

class MatrixLoader {
 public:
  // `options`: the run phase's threads (column blocks of XNNPACK Linears)
  // and, for files in Marian's int8 arithmetic, its int8 sums. Packed bytes
  // are added to *matrix_bytes.
  MatrixLoader(const Model& model, const NetworkOptions& options, size_t* matrix_bytes)
      : model_(model),
        threads_(options.threads),
        marian_lanes_(options.marian_saturating_lanes),
        order_relu_units_(options.order_relu_units),
        matrix_bytes_(matrix_bytes) {}

  // For f16 files: decides native f16 GEMMs or widening, and allocates the
  // widening buffer (as large as the model's largest matrix). Call once
  // before the first matrix(); kOutOfMemory.
  [[nodiscard]] Status prepare();
  bool f16_native() const { return f16_native_; }

  // Creates `out` from matrix `weight_name` [out, in] (+ `_scale` for int8)
  // and vector `bias_name` (nullptr: none). fused_relu: ReLU in the GEMM's
  // clamp. serves_embedding: the matrix is also an f32 embedding table (a
  // tied output projection); it goes to the own f32 GEMM wherever this CPU
  // has a fast kernel, whose pack the table then reads rows from.
  [[nodiscard]] Status matrix(Linear* out, const char* weight_name, const char* bias_name,
                              bool fused_relu, bool serves_embedding = false);

  // A table's LINEAR entry: matrix `<prefix>.weight` and vector
  // `<prefix>.bias`, as matrix() loads them.
  [[nodiscard]] Status linear(Linear* out, const char* prefix, bool fused_relu);
  // A ReLU feed-forward block: LINEAR entries `first` [F, D] (ReLU fused)
  // and `second` [D, F], as linear() loads them, except that when both are
  // int8 with exact sums (no Marian saturating lanes) their F hidden units
  // go in relu_unit_order (models/relu_units.h): the first's rows, scales
  // and bias, the second's columns and smoothing vector. The same output.
  [[nodiscard]] Status relu_block(Linear* first, Linear* second, const char* first_prefix,
                                  const char* second_prefix);

  // Frees the widening and reordering buffers (end of the load).
  void finish() {
    widen_.reset();
    reorder_.reset();
    reorder_bytes_ = 0;
  }

 private:
  struct FreePrefaulted {
    void operator()(void* p) const;
  };
  // relu_block's buffer with room for `bytes` (kOutOfMemory).
  Status reorder_room(size_t bytes);
  Status f32_matrix(Linear* out, const float* weight, const float* bias, size_t in, size_t rows,
                    bool fused_relu, bool serves_embedding);
  // An I8 matrix `weight` from the given codes [rows, in], row scales, bias
  // and smoothing vector (the file's, or reordered copies).
  Status int8_matrix(Linear* out, const TensorView& weight, const int8_t* codes,
                     const float* scale, const float* bias, const float* smoothing,
                     bool fused_relu);

  const Model& model_;
  size_t threads_;
  int32_t marian_lanes_;
  bool order_relu_units_;
  size_t* matrix_bytes_;
  bool f16_native_ = false;
  std::unique_ptr<float, FreePrefaulted> widen_;  // f16 files on CPUs without fp16 GEMMs
  // relu_block's reordered copies, reused by every block (prefaulted: fresh
  // memory for each block faulted in a page at a time, ~10 µs a page on a VM).
  std::unique_ptr<unsigned char, FreePrefaulted> reorder_;
  size_t reorder_bytes_ = 0;
};

}  // namespace edgemt
