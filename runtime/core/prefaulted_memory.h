// Load-phase memory for large blocks that are written in full right away:
// packed weights (XNNPACK's f32/f16 copies, the own int8 GEMM's layout).
//
// Why: fresh memory is mapped one 4 KiB page per fault on first touch. On
// virtual machines a fault costs ~10 µs (measured on this project's VM: 32 MiB
// touched page by page 81 ms, with MAP_POPULATE 16 ms), so faulting 30 MB of
// packed fp32 weights in took longer than packing them. Blocks of at least
// kPrefaultThreshold bytes are mmap()ed with MAP_POPULATE (all pages mapped
// in one call); smaller ones come from the C heap.
//
// Only for memory that is written in full: populating a block that is mostly
// left untouched (the run-phase arena, sized for the worst case) would add
// resident memory for nothing.
//
//   base ─┬─────────┬──────────┬──────────────────────────┐
//         │ padding │ Header   │ block (alignment-aligned) │
//         └─────────┴──────────┴──────────────────────────┘
//                              ▲ returned pointer; the Header just before it
//                                says how to give the memory back.
//
// Thread-safe (no shared state). Not for the run phase: it allocates.
#pragma once

#include <cstddef>

namespace edgemt {

constexpr size_t kPrefaultThreshold = size_t{64} * 1024;

// `size` bytes aligned to `alignment` (a power of two, at most 4096), or
// nullptr when out of memory or the alignment is not supported. size 0 gives
// a valid, unique pointer.
void* allocate_prefaulted(size_t alignment, size_t size);

// Gives back a block from allocate_prefaulted; nullptr is ignored.
void free_prefaulted(void* block);

}  // namespace edgemt
