// Token embedding lookup for the first layer:
//
//   out[t, :] = table[ids[t], :] * scale + positions[first_position + t * position_step, :]
//
// table: [vocab, dim] read in place from the model file in its stored dtype:
// f32; f16 (widened per row, exactly); or i8 with one f32 scale per row (the
// row's value is q · row_scale[id], rounded once to f32, as the converter's
// dequantized reference computes it). positions: [max_positions, dim] f32;
// out: [count, dim]. position_step is 1 for a whole sequence (encoder) and 0
// for one decoder step over many hypotheses that all sit at the same position.
// The caller guarantees ids < vocab and that every position used is
// < max_positions (checked once, at the API boundary).
//
// An i8 table tied to the output projection can instead be read from that
// projection's packed int8 GEMM weights (packed_rows: row id is output
// column id, the same int8 values and row scales), so the model's largest
// matrix is resident once, not twice (30 MiB for an OPUS-MT-base vocabulary).
// An f32 table likewise from the own f32 GEMM's pack (packed_f32_rows).
//
// An i8 table may have residual codes (format version 11): a second code
// per weight, two per byte (column 2j in the low 4 bits, 2j + 1 in the high
// ones, two's complement), with one f32 scale per row; the row's value is
// then f32(q · row_scale) + f32(r · residual_scale), each product and the
// sum rounded to f32 (quantize.dequantize_table_rows in the converter).
#pragma once

#include <cstddef>
#include <cstdint>

#include "edgemt/model.h"
#include "kernels/f32_gemm.h"
#include "kernels/int8_gemm.h"

namespace edgemt::kernels {

struct EmbeddingTable {
  const void* data = nullptr;          // [vocab, dim] of `dtype`
  DType dtype = DType::kF32;
  const float* row_scale = nullptr;    // [vocab], i8 only
  size_t vocab = 0;                    // rows
  size_t dim = 0;
  // i8 only: when packed_rows.blocks is set, rows come from it, not data.
  int8::PackedWeights packed_rows;
  // f32 only: likewise, from a tied projection on the own f32 GEMM.
  f32::PackedWeights packed_f32_rows;
  // i8 only, or nullptr: residual codes [vocab, ceil(dim / 2)] and their
  // scales [vocab], added to the row wherever it comes from.
  const uint8_t* residual = nullptr;
  const float* residual_scale = nullptr;
};

void embed_tokens(const EmbeddingTable& table, const int32_t* ids, size_t count, float scale,
                  const float* positions, size_t first_position, size_t position_step,
                  float* out);

// Rows without scale or positions (the RNN family): out[t, 0:dim] =
// table[ids[t], :], rows `out_stride` floats apart (a row may be the first
// part of a wider concatenated input).
void gather_rows(const EmbeddingTable& table, const int32_t* ids, size_t count, float* out,
                 size_t out_stride);

}  // namespace edgemt::kernels
