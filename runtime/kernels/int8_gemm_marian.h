// Marian's int8 sums as intgemm forms them on CPUs without VNNI, bit for
// bit, for files in Marian's int8 arithmetic (the Int8PerTensorDynamic and
// Int8PerTensorStatic schemes; TranslatorOptions::marian_int8_sums).
//
// intgemm (kpu/intgemm, inside Marian and Bergamot) sums a product exactly
// only with AVX-512 VNNI, which is what the other int8 kernels compute. With
// SSSE3, AVX2 and AVX-512 BW it adds vpmaddubsw's 16-bit pairs with
// saturation (intgemm/multiply.h, avx512_gemm.h):
//   - unshifted (Int8PerTensorDynamic, Marian intgemm8 without alphas):
//     vpmaddubsw(|x|, w with x's sign) gives 16-bit lane i of a register of
//     L lanes the pair of depths (2Lt + 2i, 2Lt + 2i + 1) of register step
//     t; the lanes are accumulated over the steps with saturating 16-bit
//     adds (vpaddsw), then widened and added exactly:
//        S = Σ_i s_i,  s_i = sat16(... sat16(p_0,i + p_1,i) ... + p_T-1,i),
//        p_t,i = x[k]·w[k] + x[k+1]·w[k+1], k = 2Lt + 2i (|p| <= 32258),
//     L = 8 (SSSE3), 16 (AVX2), 32 (AVX-512 BW): GemmArgs::saturating_lanes.
//     A lane saturates once its running sum leaves [-32768, 32767], which a
//     deep product (a 1536-wide feed-forward input: 48 pairs per lane at
//     L = 16) reaches on real activations.
//   - shifted (Int8PerTensorStatic, the alphas files Bergamot runs):
//     vpmaddubsw(x + 127, w) saturates each pair (up to 2·254·127), then
//     vpmaddwd widens and the pairs add exactly, for every L:
//        S = Σ_j sat16((x[2j] + 127)·w[2j] + (x[2j+1] + 127)·w[2j+1]).
//     S is the shifted sum itself (GemmArgs::sum_shift's term included).
// S then goes through dequantize() as every kernel's exact sum does, so
// without saturation these kernels give the exact kernels' bits.
#pragma once

#include <cstddef>

#include "kernels/int8_gemm.h"

namespace edgemt::kernels::int8 {

// The lane counts Marian's intgemm registers have (saturating_lanes).
inline constexpr int32_t kSsse3Lanes = 8;
inline constexpr int32_t kAvx2Lanes = 16;
inline constexpr int32_t kAvx512bwLanes = 32;

// GemmKernel's contract with args.saturating_lanes one of the three (any of
// them for a shifted product, args.sum_shift 127) and full codes.
void gemm_marian_portable(const GemmArgs& args, size_t first_block, size_t block_count);
#if defined(__x86_64__)
void gemm_marian_avx2(const GemmArgs& args, size_t first_block, size_t block_count);
// The shifted product alone (args.sum_shift 127, any lanes), in the AVX2
// int8 kernel's tiles (x86/int8_gemm_avx2.cc); gemm_marian_avx2 runs it.
void gemm_marian_shifted_avx2(const GemmArgs& args, size_t first_block, size_t block_count);
#endif

// The fastest of them this CPU runs (the same bits).
GemmKernel marian_gemm_kernel();

}  // namespace edgemt::kernels::int8
