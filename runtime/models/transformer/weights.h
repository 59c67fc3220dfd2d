// TransformerWeights: everything the encoder and decoder read, resolved once
// at load from the Model's tensor table (names as in schema/TENSORS.md).
//
// Matrices become Linears: f32 and f16 ones XNNPACK operators (which pack
// their own copies, so f16 matrices are widened into a temporary buffer that
// is freed right after), I8 ones the own int8 GEMM's packs. Vectors (biases, LayerNorm) are f32 in every file and are read in
// place from the mapping. Embedding tables are read in place too, in their
// stored dtype (the lookup widens the few rows it needs).
#pragma once

#include <cstddef>
#include <memory>

#include "models/transformer/config.h"
#include "edgemt/model.h"
#include "edgemt/status.h"
#include "kernels/embedding.h"
#include "layers/linear.h"
#include "models/network_options.h"
#include "models/output_head.h"

namespace edgemt::transformer {

inline constexpr size_t kMaxLayers = kMaxLayersPerStack;  // models/transformer/config.h

struct NormWeights {
  const float* weight = nullptr;  // [d]
  const float* bias = nullptr;    // [d]
};

struct EncoderLayerWeights {
  Linear self_qkv;  // d -> 3d
  Linear self_out;  // d -> d
  NormWeights self_norm;
  Linear ffn_in;    // d -> f (ReLU fused when the activation is ReLU)
  Linear ffn_out;   // f -> d
  NormWeights ffn_norm;
};

struct DecoderLayerWeights {
  Linear self_qkv;   // d -> 3d (self-attention decoders)
  Linear self_out;   // d -> d
  NormWeights self_norm;
  Linear ssru_gates;  // d -> 2d: x~ | forget-gate input (SSRU decoders)
  NormWeights ssru_norm;
  Linear cross_q;    // d -> d
  Linear cross_kv;   // d -> 2d (run once per source, on the encoder output)
  Linear cross_out;  // d -> d
  NormWeights cross_norm;
  Linear ffn_in;
  Linear ffn_out;
  NormWeights ffn_norm;
};

struct TransformerWeights {
  kernels::EmbeddingTable source_embedding;  // [V, d], in the file
  kernels::EmbeddingTable target_embedding;  // [V, d] (the same bytes when the model shares them)
  const float* positions = nullptr;  // [max_positions, d]
  OutputHead head;  // d -> V (+ output bias): models/output_head.h
  NormWeights encoder_final_norm;    // weight == nullptr when absent
  NormWeights decoder_final_norm;
  // [encoder_layers] and [decoder_layers], allocated by load_weights: fixed
  // arrays of kMaxLayers held 2.2 MB of empty Linears in every translator
  // (page faults at load, resident memory after).
  std::unique_ptr<EncoderLayerWeights[]> encoder;
  std::unique_ptr<DecoderLayerWeights[]> decoder;
  bool f16_native = false;  // f16 matrices on XNNPACK's f16 GEMM (else widened to f32)
  // An I8 file: its projections run on the own int8 GEMM and need scratch
  // for their quantized inputs (its output projection may be F32 even so).
  bool int8 = false;
  size_t matrix_bytes = 0;  // bytes of packed matrices (XNNPACK's f32 copies or int8 packs)
};

// `options`: the run phase's threads (the XNNPACK Linears' column blocks,
// layers/column_blocks.h) and Marian's int8 sums (models/network_options.h).
// Errors: kUnsupported (too many layers), kInvalidModel (an int8 weight of
// -128), kOutOfMemory, kBackendError.
[[nodiscard]] Status load_weights(const Model& model, const NetworkOptions& options,
                                  TransformerWeights* weights);


}  // namespace edgemt::transformer
