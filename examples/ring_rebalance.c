/*
 * The iterative application of Renard, Robert & Vivien (2004), Section 8, with redist_ring.h:
 * the columns of a 1000 x 1000 matrix are distributed over the processes in proportion to their
 * speeds; every process's (simulated) speed changes twice, once between iterations 20 and 40
 * and once between 60 and 80. Each scheme runs 100 iterations and rebalances every P iterations
 * (P = never, 50, 20, 10, 5) on a heterogeneous bidirectional ring.
 *
 * An iteration takes, on the slowest process, columns x seconds_per_column / speed (simulated:
 * the processes of a test machine share its cores); every column is really updated so the data
 * can be checked. Redistributions are real MPI transfers of the columns, timed with MPI_Wtime.
 *
 *   mpirun -n 4 ./redist_ring_rebalance [--seconds-per-column S] [--seed N] [--direct]
 */
#include <redist_ring.h>

#include <math.h>
#include <mpi.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define ROWS 1000
#define COLUMNS 1000
#define ITERATIONS 100

static unsigned long long rng_state;
static double uniform(double lo, double hi) { /* xorshift64*, the same stream on every rank */
  rng_state ^= rng_state >> 12;
  rng_state ^= rng_state << 25;
  rng_state ^= rng_state >> 27;
  const unsigned long long r = rng_state * 2685821657736338717ULL;
  return lo + (hi - lo) * (double)(r >> 11) / 9007199254740992.0;
}

static void die(const char *what, int rc) {
  fprintf(stderr, "%s: %s: %s\n", what, redist_status_name(rc), redist_last_error());
  MPI_Abort(MPI_COMM_WORLD, 1);
}

int main(int argc, char **argv) {
  MPI_Init(&argc, &argv);
  int rank = 0, np = 1;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &np);
  double seconds_per_column = 2e-5;
  unsigned long long seed = 1;
  int transport = REDIST_RING_NEIGHBOUR;
  for (int i = 1; i < argc; ++i) {
    if (strcmp(argv[i], "--seconds-per-column") == 0 && i + 1 < argc) {
      seconds_per_column = atof(argv[++i]);
    } else if (strcmp(argv[i], "--seed") == 0 && i + 1 < argc) {
      seed = strtoull(argv[++i], NULL, 10);
    } else if (strcmp(argv[i], "--direct") == 0) {
      transport = REDIST_RING_DIRECT;
    } else {
      if (rank == 0) fprintf(stderr, "unknown argument %s\n", argv[i]);
      MPI_Abort(MPI_COMM_WORLD, 2);
    }
  }

  /* Speeds (every rank draws all of them identically, then keeps its own), link costs. */
  rng_state = 0x9E3779B97F4A7C15ULL ^ (seed * 0xBF58476D1CE4E5B9ULL);
  double speed[3] = {0, 0, 0};
  int change[2] = {0, 0};
  double cost_next = 1.0, cost_prev = 1.0;
  for (int k = 0; k < np; ++k) {
    const double s0 = uniform(1.0, 4.0), s1 = uniform(1.0, 4.0), s2 = uniform(1.0, 4.0);
    const int c1 = 20 + (int)uniform(0.0, 21.0), c2 = 60 + (int)uniform(0.0, 21.0);
    const double cn = uniform(1.0, 3.0), cp = uniform(1.0, 3.0);
    if (k == rank) {
      speed[0] = s0, speed[1] = s1, speed[2] = s2;
      change[0] = c1, change[1] = c2;
      cost_next = cn, cost_prev = cp;
    }
  }

  const size_t column_bytes = ROWS * sizeof(double);
  const char *names[] = {"no rebalancing", "every 50", "every 20", "every 10", "every 5"};
  const int periods[] = {0, 50, 20, 10, 5};
  double results[5][3];
  int rebalances[5];
  long long wrong_total = 0;
  if (rank == 0) {
    printf("ring_rebalance: %d x %d matrix, columns over %d processes, %d iterations, speeds "
           "change twice (seed %llu)\n",
           ROWS, COLUMNS, np, ITERATIONS, seed);
    printf("compute simulated: columns x %g s / speed on the slowest process per iteration; "
           "redistributions measured (%s transport)\n",
           seconds_per_column, transport == REDIST_RING_DIRECT ? "direct" : "neighbour");
  }
  for (int scheme = 0; scheme < 5; ++scheme) {
    /* Initial distribution in proportion to the initial speeds. */
    int64_t load = COLUMNS / np + (rank < COLUMNS % np ? 1 : 0), target = 0;
    int rc = redist_ring_target_from_weight(MPI_COMM_WORLD, load, speed[0], &target);
    if (rc != REDIST_SUCCESS) die("redist_ring_target_from_weight", rc);
    load = target;
    int64_t first = 0; /* global column of my first column */
    MPI_Exscan(&load, &first, 1, MPI_INT64_T, MPI_SUM, MPI_COMM_WORLD);
    if (rank == 0) first = 0;
    double *a = malloc((size_t)load * column_bytes);
    for (int64_t j = 0; j < load; ++j)
      for (int i = 0; i < ROWS; ++i)
        a[j * ROWS + i] = (double)((first + j) * 1000 + i);

    double compute = 0.0, redistribute = 0.0;
    rebalances[scheme] = 0;
    for (int it = 1; it <= ITERATIONS; ++it) {
      const double s = it <= change[0] ? speed[0] : it <= change[1] ? speed[1] : speed[2];
      for (int64_t j = 0; j < load; ++j)
        a[j * ROWS] += 1.0; /* the iteration's update */
      double mine = (double)load * seconds_per_column / s, slowest = 0.0;
      MPI_Allreduce(&mine, &slowest, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
      compute += slowest;
      if (periods[scheme] == 0 || it % periods[scheme] != 0 || it == ITERATIONS) continue;
      /* Rebalance in proportion to the speeds measured in the iteration just done. */
      MPI_Barrier(MPI_COMM_WORLD);
      const double t0 = MPI_Wtime();
      rc = redist_ring_target_from_weight(MPI_COMM_WORLD, load, s, &target);
      if (rc != REDIST_SUCCESS) die("redist_ring_target_from_weight", rc);
      redist_ring_plan plan = NULL;
      rc = redist_ring_plan_create(MPI_COMM_WORLD, REDIST_RING_BIDIRECTIONAL, transport, load,
                                   target, cost_next, cost_prev, (int64_t)column_bytes, 0, &plan);
      if (rc != REDIST_SUCCESS) die("redist_ring_plan_create", rc);
      double *b = malloc((size_t)target * column_bytes);
      rc = redist_ring_plan_execute(plan, a, (int64_t)column_bytes, b, (int64_t)column_bytes);
      if (rc != REDIST_SUCCESS) die("redist_ring_plan_execute", rc);
      redist_ring_plan_destroy(&plan);
      free(a);
      a = b;
      load = target;
      MPI_Barrier(MPI_COMM_WORLD);
      redistribute += MPI_Wtime() - t0;
      ++rebalances[scheme];
    }
    /* Check: my columns are consecutive (cyclically) and each was updated every iteration; all
       columns are somewhere exactly once. */
    long long wrong = 0;
    const int64_t g0 = (int64_t)(a[0] - ITERATIONS) / 1000;
    for (int64_t j = 0; j < load; ++j) {
      const int64_t g = (g0 + j) % COLUMNS;
      for (int i = 0; i < ROWS; ++i) {
        const double want = (double)(g * 1000 + i) + (i == 0 ? ITERATIONS : 0);
        if (a[j * ROWS + i] != want) ++wrong;
      }
    }
    int64_t count = load, all = 0;
    MPI_Allreduce(&count, &all, 1, MPI_INT64_T, MPI_SUM, MPI_COMM_WORLD);
    if (all != COLUMNS) ++wrong;
    long long w = 0;
    MPI_Allreduce(&wrong, &w, 1, MPI_LONG_LONG, MPI_SUM, MPI_COMM_WORLD);
    wrong_total += w;
    free(a);
    results[scheme][0] = compute;
    results[scheme][1] = redistribute;
    results[scheme][2] = compute + redistribute;
  }
  if (rank == 0) {
    printf("%-16s %10s %12s %16s %10s %10s\n", "scheme", "rebalances", "compute(s)",
           "redistribute(s)", "total(s)", "vs none");
    for (int s = 0; s < 5; ++s)
      printf("%-16s %10d %12.4f %16.4f %10.4f %10.3f\n", names[s], rebalances[s], results[s][0],
             results[s][1], results[s][2], results[s][2] / results[0][2]);
    printf("%s: every column checked, %lld wrong\n", wrong_total == 0 ? "OK" : "FAILED",
           wrong_total);
  }
  MPI_Finalize();
  return wrong_total == 0 ? 0 : 1;
}
