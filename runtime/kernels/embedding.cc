#include "kernels/embedding.h"

#include "kernels/fp16.h"

namespace edgemt::kernels {
namespace {

// Adds row id's residual codes times their scale to the i8 row just
// widened: two 4-bit codes per byte, low half first, sign-extended.
void add_residual(const EmbeddingTable& table, size_t id, float* __restrict row) {
  const size_t dim = table.dim;
  const uint8_t* codes = table.residual + id * ((dim + 1) / 2);
  const float residual_scale = table.residual_scale[id];
  for (size_t d = 0; d < dim; ++d) {
    const uint8_t half = (d % 2 == 0) ? (codes[d / 2] & 0x0F) : (codes[d / 2] >> 4);
    const int code = (half ^ 0x08) - 0x08;  // [-8, 7]
    row[d] = row[d] + static_cast<float>(code) * residual_scale;
  }
}

// Widens one stored row into f32 (exact for f16; one rounding for i8, and
// one more per residual product and sum).
void load_row(const EmbeddingTable& table, size_t id, float* __restrict row) {
  const size_t dim = table.dim;
  switch (table.dtype) {
    case DType::kF32: {
      if (table.packed_f32_rows.blocks != nullptr) {
        f32::unpack_row(table.packed_f32_rows, id, row);
        return;
      }
      const float* src = static_cast<const float*>(table.data) + id * dim;
      for (size_t d = 0; d < dim; ++d) row[d] = src[d];
      return;
    }
    case DType::kF16:
      f16_to_f32_array(static_cast<const uint16_t*>(table.data) + id * dim, row, dim);
      return;
    case DType::kI8: {
      const int8::PackedWeights& packed = table.packed_rows;
      if (packed.blocks != nullptr) {
        // Column id of the packed [N, K] layout (int8_gemm.h): block id / 16,
        // lane id % 16, depth in groups of 4 bytes 64 bytes apart.
        const int8_t* column = packed.blocks + (id / int8::kBlockColumns) * packed.groups * int8::kGroupBytes +
                               (id % int8::kBlockColumns) * int8::kGroupDepth;
        const float row_scale = packed.scale[id];
        for (size_t d = 0; d < dim; ++d) {
          const int8_t q = column[(d / int8::kGroupDepth) * int8::kGroupBytes + d % int8::kGroupDepth];
          row[d] = static_cast<float>(q) * row_scale;
        }
      } else {
        const int8_t* src = static_cast<const int8_t*>(table.data) + id * dim;
        const float row_scale = table.row_scale[id];
        for (size_t d = 0; d < dim; ++d) row[d] = static_cast<float>(src[d]) * row_scale;
      }
      if (table.residual != nullptr) add_residual(table, id, row);
      return;
    }
  }
}

}  // namespace

void embed_tokens(const EmbeddingTable& table, const int32_t* ids, size_t count, float scale,
                  const float* positions, size_t first_position, size_t position_step,
                  float* out) {
  const size_t dim = table.dim;
  for (size_t t = 0; t < count; ++t) {
    // ids are validated at the API boundary (0 <= id < vocab). The row is
    // widened into the output row itself, then finished in place.
    float* __restrict o = out + t * dim;
    load_row(table, static_cast<size_t>(ids[t]), o);
    const float* __restrict pos = positions + (first_position + t * position_step) * dim;
    // [dim]: scale first, then add the position (fairseq's order).
    for (size_t d = 0; d < dim; ++d) o[d] = o[d] * scale + pos[d];
  }
}

void gather_rows(const EmbeddingTable& table, const int32_t* ids, size_t count, float* out,
                 size_t out_stride) {
  for (size_t t = 0; t < count; ++t) load_row(table, static_cast<size_t>(ids[t]), out + t * out_stride);
}

}  // namespace edgemt::kernels
