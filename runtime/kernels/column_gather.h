// Packs of some columns of a matrix (a lexical shortlist's candidate ids of
// the output projection), in the layouts of kernels/f32_gemm.h and
// kernels/int8_gemm.h: column j of the new pack is column ids[j] of the
// source, with its bias (and int8 scale and column sum). Each kernel
// computes an output column from that column's values alone, in the same
// order wherever it sits, so a product on the gathered pack gives exactly
// the bits of those columns of the full product.
//
// Run phase: no allocation; `storage` is the caller's (packed_bytes(count,
// depth) of the layout, 64-byte aligned).
#pragma once

#include <cstddef>
#include <cstdint>

#include "kernels/f32_gemm.h"
#include "kernels/int8_gemm.h"

namespace edgemt::kernels {

// ids [count]: columns of `source` (each < source.columns, any order).
void gather_columns(const f32::PackedWeights& source, const int32_t* ids, size_t count,
                    void* storage, f32::PackedWeights* out);
void gather_columns(const int8::PackedWeights& source, const int32_t* ids, size_t count,
                    void* storage, int8::PackedWeights* out);

// Columns [first, first + count) of `source` as a view into its storage (no
// copy): int8 packs hold 16 columns per block, each with all its depth, so
// whole blocks are a pack of their own (a fused Q|K|V matrix's K|V part).
// `first` must be a multiple of int8::kBlockColumns and first + count one
// too or source.columns; otherwise (or count 0, or past the end) the view
// returned has no columns.
int8::PackedWeights column_range(const int8::PackedWeights& source, size_t first, size_t count);

// The f32 pack of rows ids[0..count) of w [N, depth] (row-major, the file's
// layout) and their biases (bias [N] or nullptr): what f32::pack_weights
// gives for those rows alone (`check_tiny` as there).
void pack_rows(const float* w, const float* bias, size_t depth, const int32_t* ids, size_t count,
               void* storage, f32::PackedWeights* out, bool check_tiny = true);

}  // namespace edgemt::kernels
