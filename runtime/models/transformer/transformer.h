// The Transformer family: an encoder-decoder Transformer (torch.nn.Transformer
// and its pre-norm, GELU, tied-embedding variants) behind the EncoderDecoder
// interface. Its parts, all in this folder:
//   config.*         hyper-parameters, their limits, their check
//   tensor_layout.*  the tensors a config implies (names, shapes, dtypes)
//   weights.*        those tensors resolved into Linears at load
//   workspace.*      its run-phase buffers and their lifetimes
//   encoder.*, decoder.*, residual.*   the computation
//   transformer.cc   the EncoderDecoder and the family's record (kTransformerFamily)
#pragma once

#include <memory>

#include "edgemt/model.h"
#include "edgemt/status.h"
#include "models/encoder_decoder.h"
#include "models/families.h"

namespace edgemt {

// Load phase: resolves `model`'s weights (which must be of this family),
// its operators laid out for `threads` run-phase threads.
// Errors: kUnsupported, kInvalidModel, kOutOfMemory, kBackendError.
[[nodiscard]] Status create_transformer(const Model& model, size_t threads,
                                        std::unique_ptr<EncoderDecoder>* out);

// The family's record for the registry (models/families.cc).
extern const Family kTransformerFamily;

}  // namespace edgemt
