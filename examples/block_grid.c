/* Block grids (docs/guide.md, "Block grids"): a 7 x 6 matrix cut into irregular blocks
 *
 *            columns 0-1   2-4   5
 *   rows 0-2  [ P0 ]   [ P1 ] [ P0 ]
 *   rows 3-3  [ P1 ]   [ P0 ] [ P2 ]
 *   rows 4-6  [ P2 ]   [ P2 ] [ P1 ]
 *
 * (P2 is P0 on 2 processes, every block P0's on 1), each process keeping its blocks one after
 * another in one local array (in the grid's column order), with a gap before each. It is moved into
 * a 2-D block-cyclic layout (2 x 2 blocks on a 1 x size grid), then B := 2 A^T + B back into a
 * second block grid (row-major blocks, the columns cut elsewhere), and every element is checked
 * against the definitions. Prints "OK: every element checked, 0 wrong". */
#include <redist.h>

#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>

enum { M = 7, N = 6 };

/* The value of A(gi, gj). */
static double a_value(int64_t gi, int64_t gj) {
  return (double)(100 * gi + gj);
}

/* A block grid as every process describes it, with this process's blocks placed: each block
 * after the previous one, a gap of 2 elements before it, ld its height (column-major) or
 * width (row-major) plus 1. `elements`: its local array's length. */
typedef struct Grid {
  int64_t rows[4], cols[4];
  int br, bc;
  int owners[9];
  redist_grid_block local[9];
  int64_t count, elements;
  redist_block_grid g;
} Grid;

static void place(Grid *grid, const int *owners, int rank, int size, int row_major) {
  grid->count = 0;
  grid->elements = 0;
  for (int c = 0; c < grid->bc; ++c) {
    for (int r = 0; r < grid->br; ++r) {
      const int k = r + c * grid->br;
      grid->owners[k] = owners[k] % size; /* any owner, for any block */
      if (grid->owners[k] != rank) continue;
      const int64_t height = grid->rows[r + 1] - grid->rows[r];
      const int64_t width = grid->cols[c + 1] - grid->cols[c];
      const int64_t ld = (row_major ? width : height) + 1;
      const redist_grid_block b = {r, c, grid->elements + 2, ld};
      grid->local[grid->count++] = b;
      grid->elements = b.offset + ld * (row_major ? height : width);
    }
  }
  const redist_block_grid g = {grid->rows[grid->br],
                               grid->cols[grid->bc],
                               grid->br,
                               grid->bc,
                               grid->rows,
                               grid->cols,
                               grid->owners,
                               row_major,
                               grid->count,
                               grid->local,
                               0,
                               0};
  grid->g = g;
}

/* Where global (gi, gj) of a grid lives: its owner, and the offset on that owner. */
static int locate(const Grid *grid, int64_t gi, int64_t gj, int64_t *offset) {
  int r = 0, c = 0;
  while (gi >= grid->rows[r + 1])
    ++r;
  while (gj >= grid->cols[c + 1])
    ++c;
  /* Recompute the owner's placement: the blocks it owns, in the same order. */
  const int owner = grid->owners[r + c * grid->br];
  int64_t end = 0;
  for (int cc = 0; cc < grid->bc; ++cc) {
    for (int rr = 0; rr < grid->br; ++rr) {
      if (grid->owners[rr + cc * grid->br] != owner) continue;
      const int64_t height = grid->rows[rr + 1] - grid->rows[rr];
      const int64_t width = grid->cols[cc + 1] - grid->cols[cc];
      const int64_t ld = (grid->g.row_major ? width : height) + 1;
      const int64_t start = end + 2;
      end = start + ld * (grid->g.row_major ? height : width);
      if (rr == r && cc == c) {
        const int64_t lr = gi - grid->rows[r], lc = gj - grid->cols[c];
        *offset = start + (grid->g.row_major ? lr * ld + lc : lr + lc * ld);
      }
    }
  }
  return owner;
}

int main(int argc, char **argv) {
  MPI_Init(&argc, &argv);
  int rank = 0, size = 1;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);

  /* A: the grid of the picture, column-major blocks; block (r, c) is owners[r + 3 c]. */
  const int owners_a[9] = {0, 1, 2, 1, 0, 2, 0, 2, 1};
  Grid a = {{0, 3, 4, 7}, {0, 2, 5, 6}, 3, 3, {0}, {{0}}, 0, 0, {0}};
  place(&a, owners_a, rank, size, 0);
  /* B: 6 x 7 (A transposed), row-major blocks, the columns cut at 1 and 1 (an empty block). */
  const int owners_b[6] = {2, 0, 1, 1, 0, 2};
  Grid b = {{0, 4, 6, 0}, {0, 1, 1, 7}, 2, 3, {0}, {{0}}, 0, 0, {0}};
  place(&b, owners_b, rank, size, 1);

  /* The block-cyclic layout in between: 2 x 2 blocks on a 1 x size grid. */
  int *ranks = malloc(sizeof(int) * (size_t)size);
  for (int p = 0; p < size; ++p)
    ranks[p] = p;
  int64_t local_cols = 0;
  for (int64_t gj = 0; gj < N; ++gj)
    local_cols += (gj / 2) % size == rank;
  const redist_layout_ext cyclic = {{M, N, 2, 2, 1, size, 0, 0, ranks, 0, 0, M}, 0, 0,
                                    REDIST_ORDER_COLUMN_MAJOR};

  double *a_local = calloc((size_t)a.elements + 1, sizeof(double));
  double *mid = calloc((size_t)(M * local_cols) + 1, sizeof(double));
  double *b_local = calloc((size_t)b.elements + 1, sizeof(double));
  for (int64_t gi = 0; gi < M; ++gi) {
    for (int64_t gj = 0; gj < N; ++gj) {
      int64_t at = 0;
      if (locate(&a, gi, gj, &at) == rank) a_local[at] = a_value(gi, gj);
    }
  }
  for (int64_t k = 0; k < b.elements; ++k)
    b_local[k] = 1.0; /* B := 2 A^T + B adds to 1 */

  /* A (block grid) -> the block-cyclic layout: a copy. */
  const redist_any_layout grid_a = {REDIST_LAYOUT_BLOCK_GRID, NULL, &a.g};
  const redist_any_layout cyclic_side = {REDIST_LAYOUT_BLOCK_CYCLIC, &cyclic, NULL};
  const redist_any_layout grid_b = {REDIST_LAYOUT_BLOCK_GRID, NULL, &b.g};
  redist_plan to_cyclic = NULL, to_b = NULL;
  int rc = redist_grid_plan_create(MPI_COMM_WORLD, REDIST_OP_N, M, N, REDIST_DOUBLE, &grid_a,
                                   &cyclic_side, NULL, &to_cyclic);
  if (rc == REDIST_SUCCESS) rc = redist_plan_execute(to_cyclic, a_local, mid);
  /* The block-cyclic layout -> B (block grid): B := 2 A^T + B, B being N x M. */
  if (rc == REDIST_SUCCESS)
    rc = redist_grid_plan_create(MPI_COMM_WORLD, REDIST_OP_T, N, M, REDIST_DOUBLE, &cyclic_side,
                                 &grid_b, NULL, &to_b);
  const double alpha = 2.0, beta = 1.0;
  if (rc == REDIST_SUCCESS) rc = redist_plan_execute_op(to_b, &alpha, mid, &beta, b_local);
  if (rc != REDIST_SUCCESS) {
    fprintf(stderr, "rank %d: %s\n", rank, redist_last_error());
    MPI_Abort(MPI_COMM_WORLD, 1);
  }

  long long wrong = 0;
  for (int64_t gi = 0; gi < N; ++gi) {
    for (int64_t gj = 0; gj < M; ++gj) {
      int64_t at = 0;
      if (locate(&b, gi, gj, &at) == rank && b_local[at] != 2.0 * a_value(gj, gi) + 1.0) ++wrong;
    }
  }
  long long total = 0;
  MPI_Reduce(&wrong, &total, 1, MPI_LONG_LONG, MPI_SUM, 0, MPI_COMM_WORLD);
  if (rank == 0)
    printf("%s: every element checked, %lld wrong\n", total == 0 ? "OK" : "FAILED", total);

  redist_plan_destroy(&to_cyclic);
  redist_plan_destroy(&to_b);
  free(a_local);
  free(mid);
  free(b_local);
  free(ranks);
  MPI_Finalize();
  return total == 0 ? 0 : 1;
}
