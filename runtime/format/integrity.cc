#include "format/integrity.h"

#include <cstring>

#include "kernels/crc32c.h"

namespace edgemt {
namespace {

uint32_t read_u32_le(const uint8_t* bytes) {
  uint32_t value;
  std::memcpy(&value, bytes, sizeof(value));  // little-endian hosts (x86-64, AArch64)
  return value;
}

}  // namespace

Status read_integrity_trailer(const uint8_t* data, size_t size, uint64_t segment_end,
                              IntegrityTrailer* out) {
  if (segment_end > size || size - segment_end < kIntegrityTrailerBytes) {
    return Status::error(StatusCode::kInvalidModel,
                         "model file is truncated: its %zu-byte checksum trailer should follow "
                         "the weights at offset %llu, the file has %zu bytes",
                         kIntegrityTrailerBytes, static_cast<unsigned long long>(segment_end), size);
  }
  const uint8_t* trailer = data + segment_end;
  if (std::memcmp(trailer, kIntegrityTrailerMagic, sizeof(kIntegrityTrailerMagic)) != 0) {
    return Status::error(StatusCode::kInvalidModel,
                         "model file is corrupt: no checksum trailer after the weights (offset "
                         "%llu); the file was damaged or cut",
                         static_cast<unsigned long long>(segment_end));
  }
  out->header_crc32c = read_u32_le(trailer + 4);
  out->weights_crc32c = read_u32_le(trailer + 8);
  return Status::ok();
}

Status check_header_checksum(const uint8_t* data, uint64_t segment_start,
                             const IntegrityTrailer& trailer) {
  const uint32_t computed = kernels::crc32c(data, static_cast<size_t>(segment_start));
  if (computed == trailer.header_crc32c) return Status::ok();
  return Status::error(StatusCode::kInvalidModel,
                       "model file is corrupt: the header's CRC-32C is %08x, the file records "
                       "%08x (a damaged download or storage?)",
                       computed, trailer.header_crc32c);
}

Status check_weights_checksum(uint32_t computed, const IntegrityTrailer& trailer) {
  if (computed == trailer.weights_crc32c) return Status::ok();
  return Status::error(StatusCode::kInvalidModel,
                       "model file is corrupt: the weights' CRC-32C is %08x, the file records "
                       "%08x (a damaged download or storage?)",
                       computed, trailer.weights_crc32c);
}

}  // namespace edgemt
