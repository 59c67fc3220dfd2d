/* alloc_guard: proof that the program allocates no heap memory once it runs.
 *
 * alloc_guard.c replaces malloc, calloc, realloc, free, posix_memalign,
 * aligned_alloc, memalign, valloc and pvalloc for the whole process
 * (XNNPACK, libstdc++ and the C library included), forwarding them to
 * glibc's own __libc_* functions. Between alloc_guard_begin_run_phase() and
 * alloc_guard_end_run_phase() any call that allocates or frees a block
 * writes a message to stderr and aborts. glibc only; one thread
 * changes the phase. */
#ifndef EDGEMT_EXAMPLE_ALLOC_GUARD_H_
#define EDGEMT_EXAMPLE_ALLOC_GUARD_H_

#include <stddef.h>

void alloc_guard_begin_run_phase(void);
void alloc_guard_end_run_phase(void);

/* Heap calls (and bytes requested) since the program started. */
size_t alloc_guard_allocations(void);
size_t alloc_guard_bytes(void);

#endif /* EDGEMT_EXAMPLE_ALLOC_GUARD_H_ */
