#include "core/xnnpack_runtime.h"

#if EDGEMT_WITH_XNNPACK
#include <xnnpack.h>
#endif

#include <atomic>
#include <cstdlib>
#include <mutex>

#include "core/prefaulted_memory.h"

namespace edgemt {

#if !EDGEMT_WITH_XNNPACK
// A build without XNNPACK (WebAssembly: platforms/wasm): nothing to set up,
// nothing ever allocated by it.
Status ensure_xnnpack_initialized() { return Status::ok(); }
uint64_t xnnpack_allocation_count() { return 0; }
#else
namespace {

// Constant-initialized (no global constructors): atomics with constexpr
// constructors and a plain struct of function pointers.
std::atomic<uint64_t> g_allocations{0};
std::atomic<bool> g_initialized{false};

void* counting_allocate(void*, size_t size) {
  g_allocations.fetch_add(1, std::memory_order_relaxed);
  return std::malloc(size);
}
void* counting_reallocate(void*, void* pointer, size_t size) {
  g_allocations.fetch_add(1, std::memory_order_relaxed);
  return std::realloc(pointer, size);
}
void counting_deallocate(void*, void* pointer) { std::free(pointer); }
// XNNPACK's aligned blocks are its packed weights, written in full at
// operator creation: prefaulted (see core/prefaulted_memory.h for why).
void* counting_aligned_allocate(void*, size_t alignment, size_t size) {
  g_allocations.fetch_add(1, std::memory_order_relaxed);
  return allocate_prefaulted(alignment, size);
}
void counting_aligned_deallocate(void*, void* pointer) { free_prefaulted(pointer); }

const xnn_allocator kCountingAllocator = {
    nullptr,           counting_allocate,         counting_reallocate,
    counting_deallocate, counting_aligned_allocate, counting_aligned_deallocate,
};

}  // namespace

Status ensure_xnnpack_initialized() {
  if (g_initialized.load(std::memory_order_acquire)) return Status::ok();
  static std::mutex mutex;  // function-local: constructed on first use
  std::lock_guard<std::mutex> lock(mutex);
  if (g_initialized.load(std::memory_order_relaxed)) return Status::ok();
  const xnn_status status = xnn_initialize(&kCountingAllocator);
  if (status != xnn_status_success) {
    return Status::error(StatusCode::kBackendError,
                         "XNNPACK initialization failed (status %d): this CPU may be unsupported",
                         static_cast<int>(status));
  }
  g_initialized.store(true, std::memory_order_release);
  return Status::ok();
}

uint64_t xnnpack_allocation_count() { return g_allocations.load(std::memory_order_relaxed); }
#endif  // EDGEMT_WITH_XNNPACK

}  // namespace edgemt
