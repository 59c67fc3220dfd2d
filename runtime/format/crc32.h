// CRC-32 as zlib computes it (polynomial 0xEDB88320 reflected, initial and
// final value ~0), so the converter's zlib.crc32 and the runtime agree. The
// verifier checks the embedded tokenizer with it (Tokenizer.model_crc32).
// Slicing-by-8 tables, built at compile time (no global constructor): about
// 2 GB/s on x86-64, portable C++.
#pragma once

#include <cstddef>
#include <cstdint>

namespace edgemt {

// CRC-32 of [data, data + size), continuing from `crc` (0 to start), as
// zlib's crc32(crc, data, size).
uint32_t crc32(const void* data, size_t size, uint32_t crc = 0);

}  // namespace edgemt
