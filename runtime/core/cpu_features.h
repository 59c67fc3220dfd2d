// CpuFeatures: the instruction-set extensions the runtime's own kernels can
// use, read once from the CPU (x86: CPUID via __builtin_cpu_supports;
// AArch64: the kernel's HWCAP bits). Kernels are chosen at load time from
// these; every variant computes the same bits as the portable one, so the
// choice changes speed, never results.
//
// EDGEMT_CPU_FEATURES in the environment overrides the detection, for tests
// and measurements: "portable" disables every extension (the portable
// kernels run); "fp16" claims fp16 arithmetic on top of what the CPU has, so
// f16 files run on XNNPACK's f16 GEMMs wherever XNNPACK offers them (x86
// too, emulated with F16C; XNNPACK itself refuses where it cannot); "avx2"
// hides AVX-512 and both VNNIs, so that an AVX-512 machine runs the kernels
// of an AVX2-only CPU (AMD family 25 before Zen 4, say) for measurements;
// "avx-vnni" hides AVX-512 only (an Intel Core from Alder Lake on, when the
// machine has AVX-VNNI).
// XNNPACK detects the CPU on its own and is not told.
// Thread-safe; no global constructors (a function-local static).
#pragma once

namespace edgemt {

struct CpuFeatures {
  // x86-64
  bool sse42 = false;        // crc32 (the model file's CRC-32C, kernels/crc32c.h)
  bool avx2 = false;
  bool fma = false;          // FMA3 (with AVX2: the own f32 GEMM's x86 kernel)
  bool avx512 = false;       // AVX-512 F, BW, VL, DQ (the vocabulary-row passes)
  bool avx512_vnni = false;  // with AVX-512 F/BW/VL: vpdpbusd on 512-bit registers
  bool avx_vnni = false;     // with AVX2: vpdpbusd on 256-bit registers (AVX-VNNI)
  bool intel = false;        // GenuineIntel: which AVX2 int8 kernel is faster
  // AArch64
  bool neon = false;         // always on AArch64
  bool neon_dotprod = false; // SDOT/UDOT (ARMv8.2 DotProd, e.g. Cortex-A76)
  bool fp16_arith = false;   // FP16 arithmetic in scalar and NEON (ARMv8.2 FP16)
  bool crc32 = false;        // CRC32/CRC32C instructions (optional in ARMv8.0)
};

const CpuFeatures& cpu_features();

}  // namespace edgemt
