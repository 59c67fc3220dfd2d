/* Proof that the example's allocation guard fires: a program that
 * allocates in the run phase must be stopped with alloc_guard's message
 * (test platform.embedded_c.guard_fires). Not part of the example. */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include "alloc_guard.h"

/* The guard ends the program with abort(): end it with status 0 instead,
 * so that the test runner reads the guard's message, not a crash. */
static void on_abort(int signal_number) {
  static const char message[] = "alloc_guard_check: stopped by the guard\n";
  ssize_t ignored = write(STDERR_FILENO, message, sizeof message - 1);
  (void)ignored;
  (void)signal_number;
  _exit(0);
}

int main(void) {
  signal(SIGABRT, on_abort);
  void* before = malloc(16); /* start-up: allowed */
  free(before);
  alloc_guard_begin_run_phase();
  void* volatile during = malloc(16); /* refused: abort() */
  alloc_guard_end_run_phase();
  free(during);
  printf("the guard did not fire\n");
  return 0;
}
