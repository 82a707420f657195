/* Choose the ranks of a new process grid so that most of the matrix stays where it is.
 *
 * A 600 x 480 matrix of doubles lives on an R x C grid numbered row by row (BLACS_GRIDINIT
 * "Row": rank pr*C + pc at position (pr, pc)) with 16 x 16 blocks. The program moves it to a
 * new R x C grid with 16 x 32 blocks. Numbered column by column, as a new grid is by default,
 * most elements would change process; redist_propose_grid_ranks proposes the order that keeps
 * the most in place. The destination is created with that order, the matrix copied by a plan,
 * every element checked, and the bytes saved printed.
 * Run with any number of ranks: mpirun -n 4 ./redist_example_relabel */
#include <redist.h>

#include <inttypes.h>
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>

enum { M = 600, N = 480, BLOCK = 16, DST_COLUMNS = 32 };

/* Rows (or columns) of a block-cyclic dimension held by grid coordinate p (ScaLAPACK's NUMROC,
 * first block on coordinate 0). */
static int64_t local_extent(int64_t n, int64_t nb, int p, int nprocs) {
  const int64_t blocks = n / nb;
  int64_t count = (blocks / nprocs) * nb;
  if (p < blocks % nprocs)
    count += nb;
  else if (p == blocks % nprocs)
    count += n % nb;
  return count;
}

/* Global index of local index l on coordinate p. */
static int64_t global_index(int64_t l, int64_t nb, int p, int nprocs) {
  return (l / nb) * nb * nprocs + p * nb + l % nb;
}

/* This rank's part of a matrix of `layout`: its grid position and local array. */
typedef struct {
  int pr, pc;
  int64_t rows, cols;
  double *data;
} Local;

static Local local_part(redist_layout *layout, int rank) {
  Local l = {-1, -1, 0, 0, NULL};
  for (int p = 0; p < layout->nprow * layout->npcol; ++p)
    if (layout->ranks[p] == rank) {
      l.pr = p % layout->nprow;
      l.pc = p / layout->nprow;
      l.rows = local_extent(layout->m, layout->mb, l.pr, layout->nprow);
      l.cols = local_extent(layout->n, layout->nb, l.pc, layout->npcol);
    }
  layout->lld = l.rows > 1 ? l.rows : 1;
  l.data = calloc((size_t)(layout->lld * l.cols + 1), sizeof(double));
  return l;
}

static double value_at(int64_t gi, int64_t gj) {
  return (double)gi * 1000.0 + (double)gj;
}

static void check(int status, int rank, const char *what) {
  if (status == REDIST_SUCCESS) return;
  fprintf(stderr, "rank %d: %s: %s\n", rank, what, redist_last_error());
  MPI_Abort(MPI_COMM_WORLD, 1);
}

int main(int argc, char **argv) {
  MPI_Init(&argc, &argv);
  int rank = 0, size = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  int nprow = 1;
  for (int r = 1; r * r <= size; ++r)
    if (size % r == 0) nprow = r;
  const int npcol = size / nprow;

  /* The source grid, numbered row by row. */
  int *src_ranks = malloc(sizeof(int) * (size_t)size);
  for (int pr = 0; pr < nprow; ++pr)
    for (int pc = 0; pc < npcol; ++pc)
      src_ranks[pr + pc * nprow] = pr * npcol + pc;
  redist_layout a = {M, N, BLOCK, BLOCK, nprow, npcol, 0, 0, src_ranks, 0, 0, 1};
  /* The destination grid being created: its shape and blocks, ranks to be chosen. */
  redist_layout b = {M, N, BLOCK, DST_COLUMNS, nprow, npcol, 0, 0, NULL, 0, 0, 1};

  int *dst_ranks = malloc(sizeof(int) * (size_t)size);
  int64_t kept_before = 0, kept_after = 0;
  check(redist_propose_grid_ranks(MPI_COMM_WORLD, M, N, REDIST_DOUBLE, &a, &b, dst_ranks,
                                  &kept_before, &kept_after),
        rank, "redist_propose_grid_ranks");
  b.ranks = dst_ranks;

  Local la = local_part(&a, rank), lb = local_part(&b, rank);
  for (int64_t c = 0; c < la.cols; ++c)
    for (int64_t r = 0; r < la.rows; ++r)
      la.data[r + c * a.lld] =
          value_at(global_index(r, BLOCK, la.pr, nprow), global_index(c, BLOCK, la.pc, npcol));
  redist_plan plan = NULL;
  check(
      redist_plan_create(MPI_COMM_WORLD, M, N, REDIST_DOUBLE, &a, &b, REDIST_REGION_FULL, 0, &plan),
      rank, "redist_plan_create");
  check(redist_plan_execute(plan, la.data, lb.data), rank, "redist_plan_execute");
  redist_plan_info info;
  check(redist_plan_get_info(plan, &info), rank, "redist_plan_get_info");
  check(redist_plan_destroy(&plan), rank, "redist_plan_destroy");

  long long wrong = 0;
  for (int64_t c = 0; c < lb.cols; ++c)
    for (int64_t r = 0; r < lb.rows; ++r)
      if (lb.data[r + c * b.lld] != value_at(global_index(r, BLOCK, lb.pr, nprow),
                                             global_index(c, DST_COLUMNS, lb.pc, npcol)))
        ++wrong;
  long long total_wrong = 0;
  int64_t local_bytes = 0;
  MPI_Reduce(&wrong, &total_wrong, 1, MPI_LONG_LONG, MPI_SUM, 0, MPI_COMM_WORLD);
  MPI_Reduce(&info.bytes_local, &local_bytes, 1, MPI_INT64_T, MPI_SUM, 0, MPI_COMM_WORLD);
  if (rank == 0) {
    printf("relabel: %d x %d doubles, %d x %d grid numbered by rows, blocks %d x %d -> %d x %d\n",
           M, N, nprow, npcol, BLOCK, BLOCK, BLOCK, DST_COLUMNS);
    printf("proposed ranks (column-major):");
    for (int p = 0; p < size; ++p)
      printf(" %d", dst_ranks[p]);
    printf("\nkept on their process: %" PRId64 " bytes in column order, %" PRId64
           " bytes proposed (the plan copies %" PRId64 " locally): %" PRId64 " bytes saved\n",
           kept_before, kept_after, local_bytes, kept_after - kept_before);
    printf("%s: every element checked, %lld wrong\n",
           total_wrong == 0 && local_bytes == kept_after ? "OK" : "FAILED", total_wrong);
  }
  free(la.data);
  free(lb.data);
  free(src_ranks);
  free(dst_ranks);
  MPI_Finalize();
  return total_wrong == 0 ? 0 : 1;
}
