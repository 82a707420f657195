/* redist demo: redistribute a 1000 x 800 matrix of doubles from a 2 x 2 grid with 32 x 32
 * blocks onto a 1 x P grid with 50 x 50 blocks (a different grid shape and block size), copy
 * a window at an odd offset, print what moved, and check every element of the result.
 * Run with 4 ranks or more: mpirun -n 4 ./redist_demo */
#include <redist.h>

#include <inttypes.h>
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>

/* Local extent of a block-cyclic dimension (ScaLAPACK's NUMROC). */
static int64_t numroc(int64_t n, int64_t nb, int p, int src, int nprocs) {
  int64_t dist = (p - src + nprocs) % nprocs, blocks = n / nb;
  int64_t count = (blocks / nprocs) * nb, extra = blocks % nprocs;
  if (dist < extra)
    count += nb;
  else if (dist == extra)
    count += n % nb;
  return count;
}

/* Global index of local index l on process p. */
static int64_t global_index(int64_t l, int64_t nb, int p, int src, int nprocs) {
  int64_t dist = (p - src + nprocs) % nprocs;
  return (l / nb) * nb * nprocs + dist * nb + l % nb;
}

static double value_at(int64_t gi, int64_t gj) {
  return (double)gi * 10000.0 + (double)gj;
}

int main(int argc, char **argv) {
  MPI_Init(&argc, &argv);
  int rank = 0, size = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  if (size < 4) {
    if (rank == 0) fprintf(stderr, "redist_demo needs at least 4 MPI ranks\n");
    MPI_Finalize();
    return 1;
  }
  const int64_t M = 1000, N = 800, m = 900, n = 700;
  int src_ranks[4] = {0, 1, 2, 3}; /* 2 x 2, column-major */
  int *dst_ranks = malloc(sizeof(int) * (size_t)size);
  for (int r = 0; r < size; ++r)
    dst_ranks[r] = size - 1 - r; /* 1 x P in reverse order */

  redist_layout a = {M, N, 32, 32, 2, 2, 0, 1, src_ranks, 7, 3, 1};
  redist_layout b = {M, N, 50, 50, 1, size, 0, 0, dst_ranks, 61, 99, 1};
  /* This rank's grid positions and local sizes. */
  int apr = -1, apc = -1, bpc = -1;
  for (int p = 0; p < 4; ++p)
    if (src_ranks[p] == rank) {
      apr = p % 2;
      apc = p / 2;
    }
  for (int p = 0; p < size; ++p)
    if (dst_ranks[p] == rank) bpc = p;
  const int64_t a_rows = apr >= 0 ? numroc(M, 32, apr, 0, 2) : 0;
  const int64_t a_cols = apr >= 0 ? numroc(N, 32, apc, 1, 2) : 0;
  const int64_t b_rows = M, b_cols = numroc(N, 50, bpc, 0, size);
  a.lld = a_rows > 1 ? a_rows : 1;
  b.lld = b_rows;

  double *la = malloc(sizeof(double) * (size_t)(a_rows * a_cols + 1));
  double *lb = malloc(sizeof(double) * (size_t)(b_rows * b_cols + 1));
  for (int64_t c = 0; c < a_cols; ++c)
    for (int64_t r = 0; r < a_rows; ++r)
      la[r + c * a.lld] = value_at(global_index(r, 32, apr, 0, 2), global_index(c, 32, apc, 1, 2));
  for (int64_t e = 0; e < b_rows * b_cols; ++e)
    lb[e] = -1.0;

  redist_plan plan = NULL;
  if (redist_plan_create(MPI_COMM_WORLD, m, n, REDIST_DOUBLE, &a, &b, REDIST_REGION_FULL, 0,
                         &plan) != REDIST_SUCCESS) {
    fprintf(stderr, "rank %d: %s\n", rank, redist_last_error());
    MPI_Abort(MPI_COMM_WORLD, 1);
  }
  double t0 = MPI_Wtime();
  if (redist_plan_execute(plan, la, lb) != REDIST_SUCCESS) {
    fprintf(stderr, "rank %d: %s\n", rank, redist_last_error());
    MPI_Abort(MPI_COMM_WORLD, 1);
  }
  double elapsed = MPI_Wtime() - t0;

  /* Check: inside the destination window, B holds A's window; outside, it is untouched. */
  long long wrong = 0;
  for (int64_t c = 0; c < b_cols; ++c) {
    int64_t gj = global_index(c, 50, bpc, 0, size);
    for (int64_t r = 0; r < b_rows; ++r) {
      int64_t gi = r;
      int inside = gi >= b.i && gi < b.i + m && gj >= b.j && gj < b.j + n;
      double expect = inside ? value_at(gi - b.i + a.i, gj - b.j + a.j) : -1.0;
      if (lb[r + c * b.lld] != expect) ++wrong;
    }
  }
  redist_plan_info info;
  redist_plan_get_info(plan, &info);
  if (rank == 0)
    printf("redist demo: %" PRId64 " x %" PRId64 " window of a %" PRId64 " x %" PRId64
           " matrix of doubles\n  from a 2 x 2 grid, 32 x 32 blocks, window at (7, 3)\n"
           "  to   a 1 x %d grid, 50 x 50 blocks, window at (61, 99)\n",
           m, n, M, N, size);
  for (int r = 0; r < size; ++r) {
    if (r == rank)
      printf("  rank %d: sent %" PRId64 " bytes to %" PRId64 " peers, received %" PRId64
             " bytes from %" PRId64 " peers, copied %" PRId64 " bytes locally; %lld wrong\n",
             rank, info.bytes_sent, info.send_peers, info.bytes_received, info.recv_peers,
             info.bytes_local, wrong);
    fflush(stdout);
    MPI_Barrier(MPI_COMM_WORLD);
  }
  long long total_wrong = 0;
  MPI_Reduce(&wrong, &total_wrong, 1, MPI_LONG_LONG, MPI_SUM, 0, MPI_COMM_WORLD);
  double max_elapsed = 0;
  MPI_Reduce(&elapsed, &max_elapsed, 1, MPI_DOUBLE, MPI_MAX, 0, MPI_COMM_WORLD);
  if (rank == 0)
    printf("%s: every element checked, %lld wrong (%.3f ms)\n", total_wrong == 0 ? "OK" : "FAILED",
           total_wrong, max_elapsed * 1e3);
  redist_plan_destroy(&plan);
  free(la);
  free(lb);
  free(dst_ranks);
  MPI_Finalize();
  return total_wrong == 0 ? 0 : 1;
}
