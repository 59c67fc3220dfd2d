// RnnWeights: everything the RNN encoder and decoder read, resolved once at
// load from the Model's tensor table (schema/rnn_tensors.def) through the
// shared MatrixLoader (models/matrix_loader.h): matrices become Linears on
// the f32, f16 or int8 path of the file, vectors are read in place.
#pragma once

#include <cstddef>
#include <memory>

#include "edgemt/model.h"
#include "edgemt/status.h"
#include "kernels/embedding.h"
#include "layers/linear.h"
#include "models/network_options.h"
#include "models/output_head.h"
#include "models/rnn/config.h"

namespace edgemt::rnn {

// One direction of one recurrent layer: gx = ih(x), gh = hh(h).
struct RnnLayerWeights {
  Linear ih;  // in -> G·U
  Linear hh;  // U -> G·U
};

struct RnnWeights {
  kernels::EmbeddingTable source_embedding;  // [S, Es]
  kernels::EmbeddingTable target_embedding;  // [V, Et]
  // [layers] each (encoder_reverse: bidirectional only, else none),
  // allocated by load_weights rather than fixed arrays of kMaxRnnLayers.
  std::unique_ptr<RnnLayerWeights[]> encoder;          // forward direction
  std::unique_ptr<RnnLayerWeights[]> encoder_reverse;  // bidirectional only
  std::unique_ptr<RnnLayerWeights[]> decoder;
  Linear attention_key;       // H -> H, no bias (General, Additive)
  Linear attention_query;     // H -> H, + query bias (Additive)
  const float* attention_v = nullptr;  // [H] (Additive)
  Linear attention_combine;   // 2H -> H, + combine bias (TanhCombine, LinearCombine)
  OutputHead head;            // H or 2H -> V: models/output_head.h
  bool f16_native = false;
  // An I8 file: its projections run on the own int8 GEMM and need scratch
  // for their quantized inputs (its output projection may be F32 even so).
  bool int8 = false;
  size_t matrix_bytes = 0;
};

// `options`: the run phase's threads (XNNPACK column blocks) and Marian's
// int8 sums (models/network_options.h). Errors: kInvalidModel (a missing
// tensor, an int8 weight of -128), kOutOfMemory, kBackendError.
[[nodiscard]] Status load_weights(const Model& model, const NetworkOptions& options,
                                  RnnWeights* weights);

}  // namespace edgemt::rnn
