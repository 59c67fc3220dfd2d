// f32 GEMM on the runtime's own packed layout, for the one matrix a model
// reads both ways: a tied output projection, whose rows are also the
// embedding table. Packing it once and serving embedding rows from the pack
// (kernels/embedding.h) keeps it resident once instead of twice (XNNPACK's
// packed copy plus the file's table: 8 MiB at 8k × 256 in f32).
//
//   y[m, n] = bias[n] + Σ_k x[m, k] · w[n, k]
//
// accumulated for k = 0, 1, 2, ... with one fused multiply-add per step
// (acc = fma(x, w, acc), starting from the bias): the order and rounding of
// XNNPACK's f32 GEMM micro-kernels, then XNNPACK's x86 clamp
// y = max_ps(y, low) with low = -inf (0 for a fused ReLU): a NaN sum becomes
// low, -0 under ReLU +0. So y has the bits a Linear on XNNPACK gives on x86
// (tests/runtime/layers/packed_f32_linear_test.cc checks it against one);
// XNNPACK's NEON clamp keeps a NaN, so on AArch64 only NaN sums differ.
//
// Packed layout: output columns in blocks of 16; block b is [K][16] floats,
// blocks[(b·K + k)·16 + c] = w[16·b + c][k] (zero past N), then the bias,
// [block_count·16] (zero past N or without a bias).
#pragma once

#include <cstddef>
#include <cstdint>

namespace edgemt::kernels::f32 {

inline constexpr size_t kBlockColumns = 16;

// Nonzero values below this in magnitude are "tiny": the WebAssembly
// kernel's double arithmetic is exact only without them in its inputs
// (kernels/wasm/f32_gemm_wasm_simd.cc), and computes a block that holds one
// with math::fma_f32. A trained model has none.
inline constexpr float kTinyMagnitude = 0x1p-65f;

// Whether a pack holds a tiny weight (kTinyMagnitude): kUnknown for a view
// made without looking, which the WebAssembly kernel then checks block by
// block on every call.
enum class TinyWeights : unsigned char { kUnknown, kNone, kSome };

// Whether a kernel of this build reads PackedWeights::tiny (only the
// WebAssembly one does): packs made at run time look for tiny weights only
// then (a lexical shortlist's candidates, packed once per batch: the check
// was ~1% of a tiny11-shaped int8 sentence at batch 1 on x86).
#if defined(__wasm__)
inline constexpr bool kTinyWeightsRead = true;
#else
inline constexpr bool kTinyWeightsRead = false;
#endif

struct PackedWeights {
  const float* blocks = nullptr;  // [block_count, K, 16]
  const float* bias = nullptr;    // [block_count·16]
  size_t columns = 0;             // N
  size_t depth = 0;               // K
  size_t block_count = 0;         // ceil(N / 16)
  TinyWeights tiny = TinyWeights::kUnknown;
};

// Bytes pack_weights needs for an [N, K] matrix.
size_t packed_bytes(size_t columns, size_t depth);

// Packs w [N, K] (row-major) and bias [N] (or nullptr) into `storage`
// (packed_bytes(N, K) bytes, 64-byte aligned). With `ids` ([N]), column n
// is row ids[n] of w (pack_rows, column_gather.h). `check_tiny`: look for
// tiny weights (out->tiny); false for a pack made for one product, which
// the check would only slow (out->tiny kUnknown).
void pack_weights(const float* w, const float* bias, size_t columns, size_t depth, void* storage,
                  PackedWeights* out, const int32_t* ids = nullptr, bool check_tiny = true);

// The part of pack_weights that writes blocks [first_block, first_block +
// block_count) (rows 16·first_block.. of w) and their biases, in place in
// the whole pack's `storage`: packing a large matrix a part at a time.
// With `ids` ([columns]), column n is row ids[n] of w (bias[ids[n]]):
// pack_rows (column_gather.h). Returns whether a weight written is tiny
// (kTinyMagnitude), for PackedWeights::tiny; false without `check_tiny`.
bool pack_block_range(const float* w, const float* bias, size_t columns, size_t depth,
                      size_t first_block, size_t block_count, void* storage,
                      const int32_t* ids = nullptr, bool check_tiny = true);

// One block of a pack from its 16 columns' weights: block[k·16 + c] =
// lanes[c][k·stride] for k < depth, 0 where lanes[c] is null (a column past
// N). `next`: the next block's lanes (or nullptr), whose rows (stride 1)
// are prefetched meanwhile. pack_block_range, pack_rows and gather_columns
// fill their blocks with it.
void pack_block(const float* const* lanes, const float* const* next, size_t stride, size_t depth,
                float* block);
#if defined(__x86_64__)
// pack_block's work for 16 non-null lanes of stride 1, with AVX-512 or
// AVX2 (the same floats moved; pack_block calls them where it can).
void pack_rows_block_avx512(const float* const* lanes, size_t depth, float* block);
void pack_rows_block_avx2(const float* const* lanes, size_t depth, float* block);
#endif

// Whether some v[i], i < n, is tiny: nonzero and below kTinyMagnitude.
// The packers run it on each block just written, while it is in cache:
// checked inside pack_block's scalar loop it made loading a 125 MB fp32
// file 12% slower.
bool has_tiny_values(const float* v, size_t n);

// Row n of w (the embedding row of id n) from the pack: out[k] = w[n][k].
void unpack_row(const PackedWeights& w, size_t n, float* out);

struct GemmArgs {
  const float* x = nullptr;  // [rows, x_stride]
  size_t x_stride = 0;
  size_t rows = 0;
  const PackedWeights* weights = nullptr;
  float* y = nullptr;        // [rows, y_stride]; only columns < N are written
  size_t y_stride = 0;
  // A fused ReLU: the sums are clamped below at 0 instead of -inf.
  bool relu = false;
};

// Computes the columns of blocks [first_block, first_block + block_count).
using GemmKernel = void (*)(const GemmArgs& args, size_t first_block, size_t block_count);

// The portable kernel (one fused multiply-add per step, math::fma_f32;
// every CPU).
void gemm_portable(const GemmArgs& args, size_t first_block, size_t block_count);
#if defined(__x86_64__)
void gemm_avx512(const GemmArgs& args, size_t first_block, size_t block_count);
void gemm_avx2(const GemmArgs& args, size_t first_block, size_t block_count);  // AVX2 + FMA3
#elif defined(__aarch64__)
void gemm_neon(const GemmArgs& args, size_t first_block, size_t block_count);
#elif defined(__wasm_simd128__)
// The portable kernel's fma emulated in double two lanes at a time
// (kernels/wasm/f32_gemm_wasm_simd.cc says why that gives its bits).
void gemm_wasm_simd(const GemmArgs& args, size_t first_block, size_t block_count);
#endif

// The kernel that runs this matrix at least as fast as XNNPACK would: the
// AVX-512 one on x86 CPUs that have it, else the AVX2 + FMA3 one, the NEON
// one on AArch64, the WebAssembly SIMD one in a -msimd128 build; nullptr on
// older x86 (XNNPACK keeps the matrix); the portable one elsewhere and with
// EDGEMT_CPU_FEATURES=portable (native builds).
GemmKernel fast_gemm_kernel();

// Whether the own kernel replaces XNNPACK for every f32 matrix, not only the
// tied output projection: on x86 with AVX2 + FMA3 or AVX-512. Measured
// (edgemt_kernels_benchmark, BM_Gemm against BM_PackedF32Gemm, 256 x 8000):
// on a Zen 3 VM (AVX2) 1.7x XNNPACK's speed at 1 row, 2.1x at 128; on
// AVX-512 faster at 1-4 rows (its 4 x 64 tile: 16 FMAs per 8 loads and
// broadcasts, XNNPACK's 7 x 16 tile 7 per 8). Not on AArch64 (not measured
// against XNNPACK on an ARM CPU), where the NEON kernel serves the tied
// projection (for its memory), shortlists and the arg-max shortcut.
bool replaces_xnnpack();

// The name of fast_gemm_kernel() ("avx512", "avx2+fma3", "neon",
// "wasm-simd128", "portable"; "" when there is none), for `edgemt inspect`
// and `bench`.
const char* fast_gemm_kernel_name();

}  // namespace edgemt::kernels::f32
