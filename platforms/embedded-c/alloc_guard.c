/* alloc_guard.c: see alloc_guard.h. The executable's definitions of the
 * allocation functions take precedence over the C library's for every
 * shared object in the process, so nothing allocates past the guard. */
#define _POSIX_C_SOURCE 200809L
#include "alloc_guard.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#if defined(EDGEMT_EXAMPLE_NO_ALLOC_GUARD)
/* Sanitizer builds: the sanitizer runtime owns malloc; no guard. */
void alloc_guard_begin_run_phase(void) {}
void alloc_guard_end_run_phase(void) {}
size_t alloc_guard_allocations(void) { return 0; }
size_t alloc_guard_bytes(void) { return 0; }
#else

/* glibc's allocator under its internal names (exported, GLIBC_2.0+). */
extern void* __libc_malloc(size_t size);
extern void* __libc_calloc(size_t count, size_t size);
extern void* __libc_realloc(void* pointer, size_t size);
extern void __libc_free(void* pointer);
extern void* __libc_memalign(size_t alignment, size_t size);
extern void* __libc_valloc(size_t size);
extern void* __libc_pvalloc(size_t size);

static volatile int run_phase;
static size_t allocations;
static size_t bytes;

/* write(2) and abort(): neither allocates. */
static void refuse(const char* function) {
  static const char prefix[] = "alloc_guard: ";
  static const char suffix[] = "() called in the run phase: the program allocated after start-up\n";
  ssize_t ignored = write(STDERR_FILENO, prefix, sizeof prefix - 1);
  ignored = write(STDERR_FILENO, function, strlen(function));
  ignored = write(STDERR_FILENO, suffix, sizeof suffix - 1);
  (void)ignored;
  abort();
}

static void count(const char* function, size_t size) {
  if (run_phase) refuse(function);
  __atomic_fetch_add(&allocations, 1, __ATOMIC_RELAXED);
  __atomic_fetch_add(&bytes, size, __ATOMIC_RELAXED);
}

void* malloc(size_t size) {
  count("malloc", size);
  return __libc_malloc(size);
}

void* calloc(size_t count_, size_t size) {
  count("calloc", count_ * size);
  return __libc_calloc(count_, size);
}

void* realloc(void* pointer, size_t size) {
  count("realloc", size);
  return __libc_realloc(pointer, size);
}

void free(void* pointer) {
  if (pointer != NULL && run_phase) refuse("free");
  __libc_free(pointer);
}

void* memalign(size_t alignment, size_t size) {
  count("memalign", size);
  return __libc_memalign(alignment, size);
}

void* aligned_alloc(size_t alignment, size_t size) {
  count("aligned_alloc", size);
  return __libc_memalign(alignment, size);
}

int posix_memalign(void** out, size_t alignment, size_t size) {
  count("posix_memalign", size);
  if (alignment < sizeof(void*) || (alignment & (alignment - 1)) != 0) return EINVAL;
  void* pointer = __libc_memalign(alignment, size);
  if (pointer == NULL) return ENOMEM;
  *out = pointer;
  return 0;
}

void* valloc(size_t size) {
  count("valloc", size);
  return __libc_valloc(size);
}

void* pvalloc(size_t size) {
  count("pvalloc", size);
  return __libc_pvalloc(size);
}

void alloc_guard_begin_run_phase(void) { run_phase = 1; }
void alloc_guard_end_run_phase(void) { run_phase = 0; }
size_t alloc_guard_allocations(void) { return __atomic_load_n(&allocations, __ATOMIC_RELAXED); }
size_t alloc_guard_bytes(void) { return __atomic_load_n(&bytes, __ATOMIC_RELAXED); }

#endif
