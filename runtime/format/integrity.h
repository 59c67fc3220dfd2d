// The integrity trailer of format version 4 and later (schema/edgemt.fbs):
// 12 bytes right after the weight segment,
//
//   "EMTC"  uint32 LE CRC-32C of [0, W)   uint32 LE CRC-32C of [W, W + weights_size)
//
// where W is the segment's start: the first checksum covers the size prefix,
// the FlatBuffer and its padding, the second the weights. A flipped bit
// anywhere in the file is then found at load: in the header, the weights, the
// padding or the trailer itself (bytes past the trailer, such as a flash
// image's padding, are not the model's). Two checksums rather than one so
// that a damaged header is named before anything in it is trusted, and the
// weights' checksum is computed during the verifier's pass over the values
// (kernels/crc32c.h; one read of the weights, not two).
#pragma once

#include <cstddef>
#include <cstdint>

#include "edgemt/status.h"

namespace edgemt {

inline constexpr uint32_t kFirstChecksummedFormatVersion = 4;
inline constexpr size_t kIntegrityTrailerBytes = 12;
inline constexpr char kIntegrityTrailerMagic[4] = {'E', 'M', 'T', 'C'};

struct IntegrityTrailer {
  uint32_t header_crc32c = 0;
  uint32_t weights_crc32c = 0;
};

// Reads the trailer at `segment_end` of [data, data + size) and checks its
// magic. kInvalidModel when the file ends before it or the magic differs.
[[nodiscard]] Status read_integrity_trailer(const uint8_t* data, size_t size, uint64_t segment_end,
                                            IntegrityTrailer* out);

// kInvalidModel, naming both checksums, when CRC-32C of [0, segment_start)
// is not the trailer's.
[[nodiscard]] Status check_header_checksum(const uint8_t* data, uint64_t segment_start,
                                           const IntegrityTrailer& trailer);

// kInvalidModel when the weights' CRC-32C, computed by the caller, is not
// the trailer's.
[[nodiscard]] Status check_weights_checksum(uint32_t computed, const IntegrityTrailer& trailer);

}  // namespace edgemt
