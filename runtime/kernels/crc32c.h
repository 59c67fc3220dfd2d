// CRC-32C (Castagnoli: reflected polynomial 0x82F63B78, initial and final
// value ~0), the model file's checksum (schema/edgemt.fbs, "integrity
// trailer"). The converter computes the same with google_crc32c.
//
// Variants give the same bits (a CRC has one right answer), chosen at run
// time (core/cpu_features.h):
//   x86/crc32c_sse42.cc   SSE4.2's crc32 instruction
//   arm/crc32c_armv8.cc   ARMv8's CRC32C instructions
//   portable (here)       slicing-by-8 tables, ~2 GB/s
// Each hardware variant runs three independent CRCs over three adjacent
// blocks at once (the instruction's latency is three times its throughput)
// and joins them with kernels/crc_tables.h's shift tables: memory speed.
#pragma once

#include <cstddef>
#include <cstdint>

namespace edgemt {
namespace kernels {

// CRC-32C of [data, data + size), continuing from `crc` (0 to start):
// crc32c(B, crc32c(A)) == crc32c(A followed by B).
uint32_t crc32c(const void* data, size_t size, uint32_t crc = 0);

// The portable variant alone (tests hold the others to it).
uint32_t crc32c_portable(const void* data, size_t size, uint32_t crc = 0);

// Block of the three-way variants, and the map that appends that many zero
// bytes to a raw state (no inversions).
inline constexpr size_t kCrc32cBlock = 4096;
uint32_t crc32c_shift_block(uint32_t raw_state);

// Raw-state kernels (the register without the ~ at either end); only on
// the CPUs that have them.
uint32_t crc32c_raw_sse42(uint32_t state, const uint8_t* data, size_t size);
uint32_t crc32c_raw_armv8(uint32_t state, const uint8_t* data, size_t size);

}  // namespace kernels
}  // namespace edgemt
