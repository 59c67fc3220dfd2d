// Micro-benchmarks of the own kernels and of the XNNPACK GEMMs at the shapes
// the bundled model runs (d 256, 4 heads of 64, ffn 1024, vocab 8000), with
// achieved GFLOP/s so the distance to the machine's GEMM peak is visible.
//
//   build/tests/benchmarks/edgemt_kernels_benchmark [--benchmark_filter=Gemm]
//
// Decoder GEMMs run at M = beam rows (1, 4) and batch×beam (32, 128); encoder
// GEMMs at M = source tokens of a batch (20, 320, 640).
#include <benchmark/benchmark.h>

#include <chrono>
#include <cmath>
#include <memory>
#include <random>
#include <utility>
#include <vector>

#include <xnnpack.h>

#include "core/thread_pool.h"
#include "core/xnnpack_runtime.h"
#include "kernels/int8_gemm.h"
#include "kernels/int8_gemm_marian.h"
#include "kernels/int8_gemm_sparse.h"
#include "kernels/activation.h"
#include "kernels/attention.h"
#include "kernels/crc32c.h"
#include "kernels/layer_norm.h"
#include "kernels/softmax.h"
#include "layers/argmax_shortcut.h"
#include "layers/linear.h"
#include "layers/unpacked_f32_linear.h"

namespace {

std::vector<float> random_vector(size_t n, uint32_t seed) {
  std::mt19937 rng(seed);
  std::normal_distribution<float> normal(0.0f, 1.0f);
  std::vector<float> v(n + 64);  // room for XNN_EXTRA_BYTES reads
  for (float& x : v) x = normal(rng);
  return v;
}

void set_flops(benchmark::State& state, double flops_per_iteration) {
  state.counters["GFLOP/s"] = benchmark::Counter(
      flops_per_iteration * static_cast<double>(state.iterations()) / 1e9,
      benchmark::Counter::kIsRate);
}

// Times linear.run on x [m, k] (y [m, n]); FLOP/s of the dense product.
void time_linear(benchmark::State& state, const edgemt::Linear& linear,
                 const std::vector<float>& x, size_t m, size_t k, size_t n) {
  std::vector<float> y(m * n + 64);
  for (auto _ : state) {
    if (!linear.run(x.data(), m, y.data(), nullptr).is_ok()) state.SkipWithError("run failed");
    benchmark::DoNotOptimize(y.data());
  }
  set_flops(state, 2.0 * static_cast<double>(m * k * n));
}

// Args: M (rows), K (in), N (out).
void BM_Gemm(benchmark::State& state) {
  const size_t m = static_cast<size_t>(state.range(0));
  const size_t k = static_cast<size_t>(state.range(1));
  const size_t n = static_cast<size_t>(state.range(2));
  if (!edgemt::ensure_xnnpack_initialized().is_ok()) {
    state.SkipWithError("XNNPACK unavailable");
    return;
  }
  const std::vector<float> w = random_vector(n * k, 1), b = random_vector(n, 2);
  const std::vector<float> x = random_vector(m * k, 3);
  edgemt::Linear linear;
  if (!linear.create(w.data(), b.data(), k, n, false).is_ok()) {
    state.SkipWithError("create failed");
    return;
  }
  time_linear(state, linear, x, m, k, n);
}
BENCHMARK(BM_Gemm)
    ->ArgNames({"M", "K", "N"})
    // Decoder step (M = live rows): qkv, out/q, ffn in, ffn out, output projection.
    ->Args({1, 256, 768})->Args({1, 256, 256})->Args({1, 256, 1024})->Args({1, 1024, 256})
    ->Args({1, 256, 8000})->Args({4, 256, 1024})->Args({4, 256, 8000})
    ->Args({32, 256, 1024})->Args({32, 256, 8000})->Args({128, 256, 8000})
    // Encoder (M = source tokens): one sentence, a batch of 16 and of 32.
    ->Args({20, 256, 768})->Args({320, 256, 1024})->Args({320, 1024, 256})
    ->Args({640, 256, 1024});

// The own packed f32 GEMM (a tied output projection); Args: M, K, N.
void BM_PackedF32Gemm(benchmark::State& state) {
  const size_t m = static_cast<size_t>(state.range(0));
  const size_t k = static_cast<size_t>(state.range(1));
  const size_t n = static_cast<size_t>(state.range(2));
  const std::vector<float> w = random_vector(n * k, 1), b = random_vector(n, 2);
  const std::vector<float> x = random_vector(m * k, 3);
  edgemt::Linear linear;
  if (!linear.create_packed_f32(w.data(), b.data(), k, n).is_ok()) {
    state.SkipWithError("no own f32 GEMM kernel on this CPU");
    return;
  }
  time_linear(state, linear, x, m, k, n);
}
BENCHMARK(BM_PackedF32Gemm)
    ->ArgNames({"M", "K", "N"})
    ->Args({1, 256, 8000})->Args({4, 256, 8000})->Args({32, 256, 8000})->Args({128, 256, 8000})
    ->Args({128, 256, 768})->Args({128, 256, 1024})->Args({128, 1024, 256})->Args({320, 256, 1024})
    ->Args({128, 512, 58101})->Args({128, 512, 2048})->Args({128, 2048, 512});

// A feed-forward block's second matrix on a ReLU's output, x with
// `nonzero` percent of its values nonzero (the rest 0), through a Linear
// with set_sparse_input() (sparse 1) or without (0): where the
// zero-skipping kernel gets ahead of the dense one. FLOP/s count every
// multiply-add of the dense product, so the two rates compare as times.
// `shared`: rows in runs of this many have their nonzeros at the same
// depths (as a trained student's tokens of one sentence nearly do), which
// the x86 kernels' shared tiles use; 1: each row its own; 16: runs that
// end the 6-row tiles at varied rows, as sentences do in an encoder batch.
void BM_SparseF32Gemm(benchmark::State& state) {
  const size_t m = static_cast<size_t>(state.range(0));
  const size_t k = static_cast<size_t>(state.range(1));
  const size_t n = static_cast<size_t>(state.range(2));
  const uint32_t nonzero = static_cast<uint32_t>(state.range(3));
  const size_t shared = static_cast<size_t>(state.range(5));
  const std::vector<float> w = random_vector(n * k, 1), b = random_vector(n, 2);
  std::vector<float> x = random_vector(m * k, 3);
  std::mt19937 rng(4);
  for (size_t i = 0; i < x.size(); ++i) {
    const size_t row = i / k, first_of_run = row - row % shared;
    const bool kept = row == first_of_run ? rng() % 100 < nonzero : x[first_of_run * k + i % k] != 0.0f;
    x[i] = kept ? std::fabs(x[i]) + 1e-3f : 0.0f;
  }
  edgemt::Linear linear;
  if (!linear.create_packed_f32(w.data(), b.data(), k, n).is_ok() ||
      (state.range(4) != 0 && !linear.set_sparse_input())) {
    state.SkipWithError("no own f32 GEMM kernel on this CPU");
    return;
  }
  time_linear(state, linear, x, m, k, n);
}
BENCHMARK(BM_SparseF32Gemm)
    ->ArgNames({"M", "K", "N", "nonzero%", "sparse", "shared"})
    ->ArgsProduct({{1, 32, 512}, {1536}, {256}, {1, 5, 10, 20, 25, 30, 50}, {0, 1}, {1}})
    ->ArgsProduct({{32, 512}, {1536}, {256}, {5, 10, 20}, {1}, {2, 12, 16}})
    ->ArgsProduct({{512}, {2048}, {512}, {5, 25}, {0, 1}, {1}});

// Shape of one [n, k] weight matrix (k inputs, n outputs).
struct MatrixShape {
  size_t k, n;
};

// `layers` repeats of `layer`'s matrices, then `tail`'s, as own packed f32
// Linears with random weights (matrix i from seed 10 + i). False on CPUs
// without the own f32 kernel.
bool make_packed_chain(const std::vector<MatrixShape>& layer, size_t layers,
                       std::vector<edgemt::Linear>* chain, const std::vector<MatrixShape>& tail = {}) {
  const size_t repeated = layers * layer.size();
  *chain = std::vector<edgemt::Linear>(repeated + tail.size());
  for (size_t i = 0; i < chain->size(); ++i) {
    const MatrixShape shape = i < repeated ? layer[i % layer.size()] : tail[i - repeated];
    const std::vector<float> w = random_vector(shape.n * shape.k, static_cast<uint32_t>(10 + i));
    const std::vector<float> b = random_vector(shape.n, 2);
    if (!(*chain)[i].create_packed_f32(w.data(), b.data(), shape.k, shape.n).is_ok()) return false;
  }
  return true;
}

// A run-phase pool of `threads`, or nullptr after marking the benchmark
// skipped.
std::unique_ptr<edgemt::ThreadPool> make_pool_or_skip(benchmark::State& state, size_t threads) {
  std::unique_ptr<edgemt::ThreadPool> pool;
  if (!edgemt::ThreadPool::create(threads, &pool).is_ok()) {
    state.SkipWithError("ThreadPool::create failed");
    return nullptr;
  }
  return pool;
}

// Floating-point operations of running every Linear of `chain` on `rows` rows.
double chain_flops(const std::vector<edgemt::Linear>& chain, size_t rows) {
  double flops = 0;
  for (const edgemt::Linear& linear : chain) {
    flops += 2.0 * static_cast<double>(rows * linear.in_features() * linear.out_features());
  }
  return flops;
}

// The own packed f32 GEMM over a chain of 24 encoder matrices (6 layers of
// qkv, out, ffn in, ffn out at d 256, ffn 1024: 19 MB, more than L2 and than
// a VM's share of L3), as an encoder runs them: each product's weights come
// from L3 or memory, not from the cache of the previous iteration. Before
// each iteration `evict_mb` of other data is read, untimed, as a sentence's
// decoding does between two encoder passes at batch 1 (0: the chain's
// weights may stay in L3). Args: M (source tokens), evict_mb.
// BM_PackedF32Gemm at the same M is the cache-hot figure.
void BM_PackedF32GemmChain(benchmark::State& state) {
  const size_t m = static_cast<size_t>(state.range(0));
  std::vector<edgemt::Linear> chain;
  if (!make_packed_chain({{256, 768}, {256, 256}, {256, 1024}, {1024, 256}}, 6, &chain)) {
    state.SkipWithError("no own f32 GEMM kernel on this CPU");
    return;
  }
  const double flops = chain_flops(chain, m);
  const std::vector<float> x = random_vector(m * 1024, 3);
  std::vector<float> y(m * 1024 + 64);
  const size_t evict_floats = static_cast<size_t>(state.range(1)) * 1024 * 1024 / sizeof(float);
  std::vector<float> other(evict_floats + 1, 1.0f);
  for (auto _ : state) {
    float sum = 0;
    for (size_t i = 0; i < evict_floats; i += 16) sum += other[i];  // one float per 64-byte line
    benchmark::DoNotOptimize(sum);
    const auto start = std::chrono::steady_clock::now();
    for (const edgemt::Linear& linear : chain) {
      if (!linear.run(x.data(), m, y.data(), nullptr).is_ok()) state.SkipWithError("run failed");
    }
    benchmark::DoNotOptimize(y.data());
    state.SetIterationTime(std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count());
  }
  set_flops(state, flops);
}
BENCHMARK(BM_PackedF32GemmChain)->ArgNames({"M", "evict_mb"})
    ->ArgsProduct({{3, 6, 13, 20, 32, 128}, {0, 64}})->UseManualTime();

// A batch-1 f32 decoder step's products (3 layers of self qkv, self out,
// cross q, cross out, ffn in, ffn out at d 256, ffn 1024: 10 MiB) one row
// at a time, on 1 or 2 threads of the run phase's pool: how far the second
// thread speeds up memory-bound products. Each iteration is one step; every
// 15 steps (about one sentence) `evict_mb` of other data is read, as a
// sentence's encoder pass does in a real decode, and that read is not timed.
// Args: threads, evict_mb. On the Zen 3 VM: 57 GB/s on 1 thread and 100 on
// 2 with nothing evicted, 54 and 73 with 12 MiB.
void BM_PackedF32DecoderChain(benchmark::State& state) {
  const size_t threads = static_cast<size_t>(state.range(0));
  std::vector<edgemt::Linear> chain;
  if (!make_packed_chain({{256, 768}, {256, 256}, {256, 256}, {256, 256}, {256, 1024}, {1024, 256}}, 3,
                         &chain)) {
    state.SkipWithError("no own f32 GEMM kernel on this CPU");
    return;
  }
  std::unique_ptr<edgemt::ThreadPool> pool = make_pool_or_skip(state, threads);
  if (pool == nullptr) return;
  const std::vector<float> x = random_vector(1024, 3);
  std::vector<float> y(1024 + 64);
  size_t bytes = 0;
  for (const edgemt::Linear& linear : chain) bytes += linear.in_features() * linear.out_features() * sizeof(float);
  const size_t evict_floats = static_cast<size_t>(state.range(1)) * 1024 * 1024 / sizeof(float);
  std::vector<float> other(evict_floats + 1, 1.0f);
  size_t step = 0;
  for (auto _ : state) {
    if (evict_floats != 0 && step++ % 15 == 0) {
      float sum = 0;
      for (size_t i = 0; i < evict_floats; i += 16) sum += other[i];  // one float per 64-byte line
      benchmark::DoNotOptimize(sum);
    }
    const auto start = std::chrono::steady_clock::now();
    pool->wake_for(edgemt::ThreadPool::kWakeNanoseconds);
    for (const edgemt::Linear& linear : chain) {
      if (!linear.run(x.data(), 1, y.data(), edgemt::Parallel(pool.get())).is_ok()) state.SkipWithError("run failed");
    }
    benchmark::DoNotOptimize(y.data());
    state.SetIterationTime(std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count());
  }
  state.SetBytesProcessed(static_cast<int64_t>(state.iterations() * bytes));
}
BENCHMARK(BM_PackedF32DecoderChain)->ArgNames({"threads", "evict_mb"})->ArgsProduct({{1, 2}, {0, 12, 24}})->UseManualTime();

// A batch-32 × beam-4 f32 decoder step's products on an OPUS-MT-base-shaped
// model (6 layers of self qkv, self out, cross q, cross out, ffn in, ffn out
// at d 512, ffn 2048, then the 58,101 × 512 output projection: 203 MB, all
// read from memory each step) at 128 rows, on 1 or 2 threads of the run
// phase's pool: the GEMM part of that workload's step and how far a second
// thread speeds it up. Arg: threads.
void BM_PackedF32BeamStepChain(benchmark::State& state) {
  const size_t threads = static_cast<size_t>(state.range(0));
  constexpr size_t kRows = 128;
  std::vector<edgemt::Linear> chain;
  if (!make_packed_chain({{512, 1536}, {512, 512}, {512, 512}, {512, 512}, {512, 2048}, {2048, 512}}, 6,
                         &chain, {{512, 58101}})) {
    state.SkipWithError("no own f32 GEMM kernel on this CPU");
    return;
  }
  std::unique_ptr<edgemt::ThreadPool> pool = make_pool_or_skip(state, threads);
  if (pool == nullptr) return;
  const double flops = chain_flops(chain, kRows);
  const std::vector<float> x = random_vector(kRows * 2048, 3);
  std::vector<float> y(kRows * 58101 + 64);
  for (auto _ : state) {
    pool->wake_for(edgemt::ThreadPool::kWakeNanoseconds);
    for (const edgemt::Linear& linear : chain) {
      if (!linear.run(x.data(), kRows, y.data(), edgemt::Parallel(pool.get())).is_ok()) {
        state.SkipWithError("run failed");
      }
    }
    benchmark::DoNotOptimize(y.data());
  }
  set_flops(state, flops);
}
BENCHMARK(BM_PackedF32BeamStepChain)->ArgName("threads")->Arg(1)->Arg(2)->UseRealTime()->Unit(benchmark::kMillisecond);

// Args: query rows, keys, head size (scale 1/8).
void BM_Attention(benchmark::State& state) {
  const size_t queries = static_cast<size_t>(state.range(0));
  const size_t keys = static_cast<size_t>(state.range(1));
  const size_t head_dim = static_cast<size_t>(state.range(2));
  const std::vector<float> q = random_vector(queries * head_dim, 1);
  const std::vector<float> k = random_vector(keys * head_dim, 2);
  const std::vector<float> v = random_vector(keys * head_dim, 3);
  std::vector<float> probs(queries * keys), out(queries * head_dim);
  edgemt::kernels::AttentionShape shape;
  shape.query_len = queries;
  shape.key_len = keys;
  shape.head_dim = head_dim;
  shape.q_stride = shape.k_stride = shape.v_stride = shape.out_stride = head_dim;
  shape.scale = 0.125f;
  for (auto _ : state) {
    edgemt::kernels::scaled_dot_product_attention(shape, q.data(), k.data(), v.data(),
                                                  probs.data(), out.data());
    benchmark::DoNotOptimize(out.data());
  }
  set_flops(state, 4.0 * static_cast<double>(queries * keys * head_dim));
}
// Head size 32: a tiny student's (d 256, 8 heads) encoder over a 15-piece
// sentence (and 17 and 20: a third of Multi30k's test sentences have more
// than 16 pieces), and its decoder's one query.
BENCHMARK(BM_Attention)->ArgNames({"Tq", "Tk", "head_dim"})->Args({1, 16, 64})->Args({1, 64, 64})
    ->Args({1, 256, 64})->Args({20, 20, 64})->Args({64, 64, 64})->Args({1, 15, 32})
    ->Args({4, 15, 32})->Args({15, 15, 32})->Args({17, 17, 32})->Args({20, 20, 32})
    ->Args({40, 40, 32});

// Args: rows (dim 256).
// The model file's CRC-32C (kernels/crc32c.h) over 1 MiB (cached) and
// 256 MiB (from memory, as a large model file at load): portable (kind 0)
// and the CPU's (kind 1). Bytes per second are the figure.
void BM_Crc32c(benchmark::State& state) {
  const bool dispatched = state.range(0) == 1;
  const size_t bytes = static_cast<size_t>(state.range(1)) << 20;
  std::vector<uint8_t> data(bytes);
  for (size_t i = 0; i < bytes; ++i) data[i] = static_cast<uint8_t>(i * 2654435761u >> 24);
  uint32_t crc = 0;
  for (auto _ : state) {
    crc = dispatched ? edgemt::kernels::crc32c(data.data(), bytes, crc)
                     : edgemt::kernels::crc32c_portable(data.data(), bytes, crc);
    benchmark::DoNotOptimize(crc);
  }
  state.SetBytesProcessed(static_cast<int64_t>(state.iterations()) * static_cast<int64_t>(bytes));
}
BENCHMARK(BM_Crc32c)->ArgNames({"kind", "MiB"})->ArgsProduct({{0, 1}, {1, 256}})->Unit(benchmark::kMillisecond);

void BM_AddLayerNorm(benchmark::State& state) {
  const size_t rows = static_cast<size_t>(state.range(0)), dim = 256;
  std::vector<float> x = random_vector(rows * dim, 1);
  const std::vector<float> r = random_vector(rows * dim, 2), g = random_vector(dim, 3),
                           b = random_vector(dim, 4);
  for (auto _ : state) {
    edgemt::kernels::add_layer_norm(x.data(), r.data(), g.data(), b.data(), rows, dim, 1e-5f,
                                    x.data());
    benchmark::DoNotOptimize(x.data());
  }
  state.SetBytesProcessed(static_cast<int64_t>(state.iterations() * rows * dim * 3 * sizeof(float)));
}
BENCHMARK(BM_AddLayerNorm)->ArgName("rows")->Arg(1)->Arg(4)->Arg(32)->Arg(320);

void BM_LogSoftmax(benchmark::State& state) {
  const size_t n = static_cast<size_t>(state.range(0));
  const std::vector<float> source = random_vector(n, 1);
  std::vector<float> x(n);
  for (auto _ : state) {
    std::copy(source.begin(), source.begin() + static_cast<std::ptrdiff_t>(n), x.begin());
    benchmark::DoNotOptimize(edgemt::kernels::log_softmax(x.data(), n));
    benchmark::DoNotOptimize(x.data());
  }
  state.SetItemsProcessed(static_cast<int64_t>(state.iterations() * n));
}
BENCHMARK(BM_LogSoftmax)->ArgName("vocab")->Arg(8000)->Arg(32000);

void BM_Activation(benchmark::State& state) {
  const auto activation = static_cast<edgemt::Activation>(state.range(0));
  const size_t n = 32 * 1024;
  const std::vector<float> source = random_vector(n, 1);
  std::vector<float> x(n);
  for (auto _ : state) {
    std::copy(source.begin(), source.begin() + static_cast<std::ptrdiff_t>(n), x.begin());
    edgemt::kernels::apply_activation(activation, x.data(), n);
    benchmark::DoNotOptimize(x.data());
  }
  state.SetLabel(edgemt::activation_name(activation));
  state.SetItemsProcessed(static_cast<int64_t>(state.iterations() * n));
}
BENCHMARK(BM_Activation)->ArgName("kind")->Arg(0)->Arg(1)->Arg(2);

}  // namespace


// The shapes of BM_Gemm, for the int8 GEMMs below, and OPUS-MT-base's
// output projection and first feed-forward product at batch 32 × beam 4
// (an output larger than the caches, and one that fits).
void gemm_shapes(benchmark::internal::Benchmark* b, bool with_kernel_arg) {
  const std::vector<std::vector<int64_t>> shapes = {
      {1, 256, 768}, {1, 256, 256}, {1, 256, 1024}, {1, 1024, 256}, {1, 256, 8000},
      {4, 256, 1024}, {4, 256, 8000}, {32, 256, 1024}, {32, 256, 8000}, {128, 256, 8000},
      {20, 256, 768}, {320, 256, 1024}, {320, 1024, 256}, {640, 256, 1024},
      {128, 512, 58101}, {128, 512, 2048}};
  if (!with_kernel_arg) {
    b->ArgNames({"M", "K", "N"});
    for (const auto& s : shapes) b->Args(s);
    return;
  }
  b->ArgNames({"M", "K", "N", "kernel"});
  edgemt::kernels::int8::GemmVariant kernels[8];
  const size_t count = edgemt::kernels::int8::available_gemm_kernels(kernels, 8);
  for (const auto& s : shapes) {
    for (size_t i = 0; i < count; ++i) b->Args({s[0], s[1], s[2], static_cast<int64_t>(i)});
  }
}

// Random n × k int8 weights (codes from rng, in [-127, 127]) with random
// scales and biases, packed into `storage` (64-byte aligned in it).
bool pack_random_weights(size_t n, size_t k, std::mt19937& rng, std::vector<uint8_t>* storage,
                         edgemt::kernels::int8::PackedWeights* packed) {
  namespace q8 = edgemt::kernels::int8;
  std::vector<int8_t> w(n * k);
  for (int8_t& v : w) v = static_cast<int8_t>(static_cast<int>(rng() % 255) - 127);
  const std::vector<float> scale = random_vector(n, 5), bias = random_vector(n, 6);
  storage->resize(q8::packed_bytes(n, k) + 64);
  void* aligned = storage->data() + (64 - reinterpret_cast<uintptr_t>(storage->data()) % 64) % 64;
  return q8::pack_weights(w.data(), scale.data(), bias.data(), n, k, aligned, packed);
}

// Times quantization and `kernel` (with `variant`'s quantizer) on random
// M x K rows and a random N x K pack; with `nonzero` below 100, only that
// percent of the input is nonzero and none negative (a ReLU's output).
void time_int8_gemm(benchmark::State& state, const edgemt::kernels::int8::GemmVariant& variant,
                    edgemt::kernels::int8::GemmKernel kernel, int32_t code_limit,
                    uint32_t nonzero = 100, int32_t sum_shift = 0, int32_t saturating_lanes = 0,
                    bool relu_input = false, bool outliers = false) {
  namespace q8 = edgemt::kernels::int8;
  const size_t m = static_cast<size_t>(state.range(0));
  const size_t k = static_cast<size_t>(state.range(1));
  const size_t n = static_cast<size_t>(state.range(2));
  state.SetLabel(variant.name);
  std::mt19937 rng(4);
  std::vector<uint8_t> storage;
  q8::PackedWeights packed;
  if (!pack_random_weights(n, k, rng, &storage, &packed)) {
    state.SkipWithError("pack failed");
    return;
  }
  std::vector<float> x = random_vector(m * k, 3);
  if (nonzero < 100) {
    for (float& v : x) v = rng() % 100 < nonzero ? std::fabs(v) : 0.0f;
  }
  if (relu_input) {
    for (float& v : x) v = v > 0.0f ? v : 0.0f;
  }
  if (outliers) {  // one value of 4.5 per row sets its range
    for (size_t r = 0; r < m; ++r) x[r * k + (r * 7) % k] = 4.5f;
  }
  std::vector<int8_t> xq(m * q8::padded_depth(k));
  std::vector<float> x_scale(m), y(m * n);
  q8::GemmArgs args{xq.data(), q8::padded_depth(k), x_scale.data(), m, &packed, y.data(), n, false,
                    code_limit};
  args.sum_shift = sum_shift;
  args.saturating_lanes = saturating_lanes;
  for (auto _ : state) {
    variant.quantize(x.data(), m, k, k, code_limit, nullptr, xq.data(), x_scale.data());
    kernel(args, 0, packed.block_count);
    benchmark::DoNotOptimize(y.data());
  }
  set_flops(state, 2.0 * static_cast<double>(m * k * n));
}

// The own int8 GEMM (Int8PerRowDynamic) end to end as Linear runs it: f32 in,
// per-row activation quantization, integer GEMM, f32 out. Args: M, K, N and
// the kernel's index in available_gemm_kernels (0 = the one the runtime uses;
// the label names it).
void run_int8_gemm(benchmark::State& state, int32_t code_limit, bool relu_input = false) {
  namespace q8 = edgemt::kernels::int8;
  q8::GemmVariant kernels[8];
  const size_t count = q8::available_gemm_kernels(kernels, 8);
  const q8::GemmVariant kernel = kernels[static_cast<size_t>(state.range(3)) % count];
  time_int8_gemm(state, kernel, kernel.kernel, code_limit, 100, 0, 0, relu_input);
}
// Narrow activation codes, as int8 models run (kernels/int8_gemm.h).
void BM_Int8Gemm(benchmark::State& state) {
  run_int8_gemm(state, edgemt::kernels::int8::kNarrowCodes);
}
BENCHMARK(BM_Int8Gemm)->Apply([](benchmark::internal::Benchmark* b) { gemm_shapes(b, true); });
// Full codes, as the arg-max shortcut runs its int8 copy.
void BM_Int8GemmFullCodes(benchmark::State& state) {
  run_int8_gemm(state, edgemt::kernels::int8::kFullCodes);
}
BENCHMARK(BM_Int8GemmFullCodes)->Apply([](benchmark::internal::Benchmark* b) { gemm_shapes(b, true); });
// Full codes of layer-normalized rows: normal values, one of 4.5 per row
// (its max): codes mostly within ±64, 2% beyond, as in a Marian student's
// encoder (the AVX2 kernel's split tiles). M 320: an encoder's batch.
void BM_Int8GemmNormalizedCodes(benchmark::State& state) {
  namespace q8 = edgemt::kernels::int8;
  q8::GemmVariant kernels[8];
  const size_t count = q8::available_gemm_kernels(kernels, 8);
  const q8::GemmVariant kernel = kernels[static_cast<size_t>(state.range(3)) % count];
  time_int8_gemm(state, kernel, kernel.kernel, q8::kFullCodes, 100, 0, 0, false, true);
}
BENCHMARK(BM_Int8GemmNormalizedCodes)
    ->ArgNames({"M", "K", "N", "kernel"})
    ->Apply([](benchmark::internal::Benchmark* b) {
      edgemt::kernels::int8::GemmVariant kernels[8];
      const size_t count = edgemt::kernels::int8::available_gemm_kernels(kernels, 8);
      for (int64_t m : {1, 4, 16, 32, 320}) {
        for (auto [k, n] : {std::pair<int64_t, int64_t>{256, 768}, {256, 1536}, {512, 2048}}) {
          for (size_t i = 0; i < count; ++i) b->Args({m, k, n, static_cast<int64_t>(i)});
        }
      }
    });
// Full codes of a ReLU's output (all >= 0, about half zero: a feed-forward
// block's second product), dense: the AVX2 kernel's offset tiles.
void BM_Int8GemmReluCodes(benchmark::State& state) {
  run_int8_gemm(state, edgemt::kernels::int8::kFullCodes, true);
}
BENCHMARK(BM_Int8GemmReluCodes)->Apply([](benchmark::internal::Benchmark* b) { gemm_shapes(b, true); });

// The own int8 GEMM over a decoder step's products at OPUS-MT-base's
// shape (6 layers of self qkv, self out, cross q, cross out, ffn in, ffn out
// at d 512, ffn 2048: 22 MB of int8 weights, more than L2 and than a VM's
// share of L3), M rows at a time, as a batch-1 decoder runs them: each
// product's weights come from L3 or memory, not from the previous
// iteration's cache (BM_Int8GemmNormalizedCodes at one shape is the
// cache-hot figure). Inputs: layer-normalized rows (codes mostly small, one
// outlier per row), the ffn out product's a ReLU's output. Quantization
// included. Args: M (beam rows), the kernel's index in
// available_gemm_kernels (the label names it).
void BM_Int8GemmDecoderChain(benchmark::State& state) {
  namespace q8 = edgemt::kernels::int8;
  q8::GemmVariant kernels[8];
  const size_t count = q8::available_gemm_kernels(kernels, 8);
  const q8::GemmVariant kernel = kernels[static_cast<size_t>(state.range(1)) % count];
  const size_t m = static_cast<size_t>(state.range(0));
  const std::vector<MatrixShape> layer = {{512, 1536}, {512, 512}, {512, 512},
                                          {512, 512},  {512, 2048}, {2048, 512}};
  struct Product {
    size_t k, n;
    std::vector<uint8_t> storage;
    q8::PackedWeights packed;
  };
  std::vector<Product> chain(6 * layer.size());
  std::mt19937 rng(4);
  double flops = 0;
  for (size_t i = 0; i < chain.size(); ++i) {
    Product& p = chain[i];
    p.k = layer[i % layer.size()].k;
    p.n = layer[i % layer.size()].n;
    if (!pack_random_weights(p.n, p.k, rng, &p.storage, &p.packed)) {
      state.SkipWithError("pack failed");
      return;
    }
    flops += 2.0 * static_cast<double>(m * p.k * p.n);
  }
  // [m, 512] layer-normalized rows (one value of 4.5 per row sets its
  // range) and [m, 2048] ReLU outputs.
  std::vector<float> normalized = random_vector(m * 512, 3), relu = random_vector(m * 2048, 7);
  for (size_t r = 0; r < m; ++r) normalized[r * 512 + (r * 7) % 512] = 4.5f;
  for (float& v : relu) v = v > 0.0f ? v : 0.0f;
  std::vector<int8_t> xq(m * q8::padded_depth(2048));
  std::vector<float> x_scale(m), y(m * 2048);
  for (auto _ : state) {
    for (const Product& p : chain) {
      const float* x = p.k == 2048 ? relu.data() : normalized.data();
      kernel.quantize(x, m, p.k, p.k, q8::kFullCodes, nullptr, xq.data(), x_scale.data());
      q8::GemmArgs args{xq.data(), q8::padded_depth(p.k), x_scale.data(), m, &p.packed, y.data(),
                        p.n, false, q8::kFullCodes};
      kernel.kernel(args, 0, p.packed.block_count);
    }
    benchmark::DoNotOptimize(y.data());
  }
  state.SetLabel(kernel.name);
  set_flops(state, flops);
}
BENCHMARK(BM_Int8GemmDecoderChain)
    ->ArgNames({"M", "kernel"})
    ->Apply([](benchmark::internal::Benchmark* b) {
      edgemt::kernels::int8::GemmVariant kernels[8];
      const size_t count = edgemt::kernels::int8::available_gemm_kernels(kernels, 8);
      for (int64_t m : {1, 4}) {
        for (size_t i = 0; i < count; ++i) b->Args({m, static_cast<int64_t>(i)});
      }
    });

// Marian's int8 arithmetic (full codes; shifted: sum_shift 127, the alphas
// files): the exact sums of the kernel the runtime uses (lanes 0) against
// intgemm's saturating sums without VNNI (lanes 16: AVX2's; kernels/
// int8_gemm_marian.h), quantization included; relu 1: the input is a
// ReLU's output (no negative codes), as a feed-forward block's second
// product's is.
void BM_MarianInt8Gemm(benchmark::State& state) {
  namespace q8 = edgemt::kernels::int8;
  const q8::GemmVariant exact = q8::best_gemm_kernel();
  const int32_t lanes = static_cast<int32_t>(state.range(4));
  const int32_t shift = state.range(3) != 0 ? q8::kFullCodes : 0;
  time_int8_gemm(state, exact, lanes != 0 ? q8::marian_gemm_kernel() : exact.kernel,
                 q8::kFullCodes, 100, shift, lanes, state.range(5) != 0);
  if (lanes != 0) state.SetLabel("marian-sums");
}
BENCHMARK(BM_MarianInt8Gemm)
    ->ArgNames({"M", "K", "N", "shifted", "lanes", "relu"})
    ->Apply([](benchmark::internal::Benchmark* b) {
      // a tiny student's attention, feed-forward in and out products
      for (int64_t m : {1, 4, 320}) {
        for (auto [k, n] : {std::pair<int64_t, int64_t>{256, 256}, {256, 1536}, {1536, 256}}) {
          for (int64_t shifted : {0, 1}) {
            for (int64_t lanes : {0, 16, 32}) {
              b->Args({m, k, n, shifted, lanes, 0});
              if (k == 1536) b->Args({m, k, n, shifted, lanes, 1});
            }
          }
        }
      }
    });

// The int8 product on a ReLU's output with `nonzero` percent of its values
// nonzero, dense (sparse 0) or zero-skipping (1: kernels/
// int8_gemm_sparse.h beside the best dense kernel), quantization included.
// FLOP/s count the dense product, so the two rates compare as times.
void BM_SparseInt8Gemm(benchmark::State& state) {
  namespace q8 = edgemt::kernels::int8;
  const q8::GemmVariant dense = q8::best_gemm_kernel();
  const q8::GemmKernel kernel = state.range(4) != 0 ? q8::sparse_gemm_kernel(dense.kernel)
                                                    : dense.kernel;
  if (kernel == nullptr) {
    state.SkipWithError("no zero-skipping int8 kernel on this CPU");
    return;
  }
  time_int8_gemm(state, dense, kernel, q8::kFullCodes, static_cast<uint32_t>(state.range(3)));
}
BENCHMARK(BM_SparseInt8Gemm)
    ->ArgNames({"M", "K", "N", "nonzero%", "sparse"})
    ->ArgsProduct({{1, 32, 512}, {1536}, {256}, {1, 5, 10, 25, 50}, {0, 1}});

// What XNNPACK 2022 offers for int8 instead: static scales fixed at create
// time (per-tensor, fully_connected_nc_qs8), so a layer runs f32 -> qs8
// convert, the qs8 GEMM (int8 out, requantized) and qs8 -> f32 convert. The
// scales here are arbitrary (speed only: the quality cost of calibrated
// static scales is measured separately, see models/MODEL_CARD.md).
void BM_XnnpackQs8Gemm(benchmark::State& state) {
  const size_t m = static_cast<size_t>(state.range(0));
  const size_t k = static_cast<size_t>(state.range(1));
  const size_t n = static_cast<size_t>(state.range(2));
  if (!edgemt::ensure_xnnpack_initialized().is_ok()) {
    state.SkipWithError("XNNPACK unavailable");
    return;
  }
  std::mt19937 rng(4);
  std::vector<int8_t> w(n * k);
  for (int8_t& v : w) v = static_cast<int8_t>(static_cast<int>(rng() % 255) - 127);
  const std::vector<int32_t> bias(n, 0);
  xnn_operator_t to_q = nullptr, gemm = nullptr, to_f = nullptr;
  bool ok = xnn_create_convert_nc_f32_qs8(k, k, k, 0.05f, 0, -127, 127, 0, &to_q) == xnn_status_success &&
            xnn_create_fully_connected_nc_qs8(k, n, k, n, 0, 0.05f, 0.01f, w.data(), bias.data(), 0,
                                              0.5f, -127, 127, 0, &gemm) == xnn_status_success &&
            xnn_create_convert_nc_qs8_f32(n, n, n, 0.5f, 0, 0, &to_f) == xnn_status_success;
  const std::vector<float> x = random_vector(m * k, 3);
  std::vector<int8_t> xq(m * k + 64), yq(m * n + 64);
  std::vector<float> y(m * n);
  ok = ok && xnn_setup_convert_nc_f32_qs8(to_q, m, x.data(), xq.data(), nullptr) == xnn_status_success &&
       xnn_setup_fully_connected_nc_qs8(gemm, m, xq.data(), yq.data(), nullptr) == xnn_status_success &&
       xnn_setup_convert_nc_qs8_f32(to_f, m, yq.data(), y.data(), nullptr) == xnn_status_success;
  if (!ok) {
    state.SkipWithError("XNNPACK qs8 operators unavailable");
  } else {
    for (auto _ : state) {
      (void)xnn_run_operator(to_q, nullptr);
      (void)xnn_run_operator(gemm, nullptr);
      (void)xnn_run_operator(to_f, nullptr);
      benchmark::DoNotOptimize(y.data());
    }
    set_flops(state, 2.0 * static_cast<double>(m * k * n));
  }
  for (xnn_operator_t op : {to_q, gemm, to_f}) {
    if (op != nullptr) (void)xnn_delete_operator(op);
  }
}
BENCHMARK(BM_XnnpackQs8Gemm)->Apply([](benchmark::internal::Benchmark* b) { gemm_shapes(b, false); });

// Load time of greedy's arg-max shortcut (layers/argmax_shortcut.h) over
// an f32 output projection [vocab, K] read in place: its int8 copy and
// per-row bound constants, made each time an fp32 model is prepared for
// greedy translation without scores (Firefox's tiny students: 32,000 x
// 256; OPUS-MT-base: 58,101 x 512). 32,000 x 256 on an Intel Xeon at
// 2.3 GHz (cpu family 6): 42.6-43.1 ms with scalar row passes and packing,
// 10.6-10.8 ms with kernels/row_codes.h and the vector packers.
void BM_ArgmaxShortcutCreate(benchmark::State& state) {
  const size_t vocab = static_cast<size_t>(state.range(0));
  const size_t depth = static_cast<size_t>(state.range(1));
  const std::vector<float> w = random_vector(vocab * depth, 11);
  edgemt::UnpackedF32Linear rows;
  if (!rows.create(w.data(), nullptr, depth, vocab).is_ok()) {
    state.SkipWithError("UnpackedF32Linear::create failed");
    return;
  }
  for (auto _ : state) {
    edgemt::ArgmaxShortcut shortcut;
    if (!shortcut.create(rows).is_ok()) {
      state.SkipWithError("ArgmaxShortcut::create failed");
      return;
    }
    benchmark::DoNotOptimize(shortcut);
  }
  state.counters["weights/s"] = benchmark::Counter(static_cast<double>(vocab * depth),
                                                   benchmark::Counter::kIsIterationInvariantRate);
}
BENCHMARK(BM_ArgmaxShortcutCreate)->Args({8000, 256})->Args({32000, 256})->Unit(benchmark::kMillisecond);

BENCHMARK_MAIN();
