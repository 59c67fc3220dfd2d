// The RNN family: LSTM or GRU encoder-decoders with global attention
// (Luong dot / general / concat, Bahdanau additive, OpenNMT-py's variants)
// behind the EncoderDecoder interface. Its parts, all in this folder:
//   config.*         hyper-parameters, their limits, their check
//   config_schema.*  reading them from the file's RnnConfig table
//   tensor_layout.*  the tensors a config implies (schema/rnn_tensors.def)
//   weights.*        those tensors resolved into Linears at load
//   workspace.*      run-phase buffers and their lifetimes
//   encoder.*, decoder.*   the computation
//   rnn.cc           the EncoderDecoder and the family's record (kFamily)
#pragma once

#include <memory>

#include "edgemt/model.h"
#include "edgemt/status.h"
#include "models/encoder_decoder.h"
#include "models/families.h"

namespace edgemt::rnn {

extern const Family kFamily;

}  // namespace edgemt::rnn
