/* Linked into an unchanged legacy program: at exit, each process prints how many
 * ScaLAPACK-style calls redist served, proving that the link order routed them to redist. */
#include <redist_scalapack.h>

#include <stdio.h>

__attribute__((destructor)) static void report_calls_served(void) {
  printf("redist served %lld ScaLAPACK calls on this process\n", redist_scalapack_call_count());
  fflush(stdout);
}
