// The Transformer family: an encoder-decoder Transformer (torch.nn.Transformer
// and its pre-norm, GELU, tied-embedding variants) behind the EncoderDecoder
// interface. Its parts, all in this folder:
//   config.*         hyper-parameters, their limits, their check
//   tensor_layout.*  the tensors a config implies (names, shapes, dtypes)
//   weights.*        those tensors resolved into Linears at load
//   workspace.*      its run-phase buffers and their lifetimes
//   encoder.*, decoder.*, residual.*   the computation
//   transformer.cc   the EncoderDecoder and the family's record (kFamily)
#pragma once

#include <memory>

#include "edgemt/model.h"
#include "edgemt/status.h"
#include "models/encoder_decoder.h"
#include "models/families.h"

namespace edgemt::transformer {

// The family's record for the registry (models/families.cc).
extern const Family kFamily;

}  // namespace edgemt::transformer
