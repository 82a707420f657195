/* First blocks and row-major local arrays (docs/guide.md, "First blocks and row-major local
 * arrays" and "PBLAS's 11-integer descriptors").
 *
 * 1. PBLAS's way: A is a 9 x 7 matrix described by an 11-integer descriptor (DTYPE_ = 2),
 *    whose first block row holds IMB_ = 2 rows and first block column INB_ = 3 columns, then
 *    blocks of 3 x 2, on a BLACS grid of all processes; C has a 9-integer descriptor with
 *    4 x 4 blocks. redist_pdgeadd_ computes sub(C) := 0.5 sub(C) + 2 sub(A) on a 6 x 5
 *    window, as PDGEADD does.
 * 2. The C API's way: the same A, as a redist_layout_ext with imb = 2, inb = 3, is copied into
 *    B, whose local arrays are row-major (a C array b[rows][cols]) with first blocks of 1 x 4.
 *
 * Every element of C and B (the padding of the local arrays too) is checked against a value
 * computed here from the definitions. Prints "OK: every element checked, 0 wrong". */
#include <redist.h>
#include <redist_scalapack.h>

#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>

/* BLACS ships no C header. */
/* NOLINTBEGIN(readability-identifier-naming): BLACS names */
void Cblacs_get(int ictxt, int what, int *val);
void Cblacs_gridinit(int *ictxt, const char *order, int nprow, int npcol);
void Cblacs_gridinfo(int ictxt, int *nprow, int *npcol, int *myrow, int *mycol);
void Cblacs_gridexit(int ictxt);
/* NOLINTEND(readability-identifier-naming) */

enum { M = 9, N = 7 };

/* One dimension: extent, first block, block, source process, processes. */
typedef struct Dim {
  int extent, first, block, src, procs;
} Dim;

/* Global index g's owner and its index there: block 0 holds `first` indices on `src`, the
 * blocks after it `block` each, dealt round-robin from src + 1. */
static void locate(const Dim *d, int g, int *owner, int *local) {
  const int b = g < d->first ? 0 : 1 + (g - d->first) / d->block;
  const int start = b == 0 ? 0 : d->first + (b - 1) * d->block;
  const int k = b / d->procs; /* the owner's k-th block */
  *owner = (d->src + b) % d->procs;
  const int k_start =
      *owner == d->src ? (k == 0 ? 0 : d->first + (k - 1) * d->block) : k * d->block;
  *local = k_start + g - start;
}

/* Indices of `d` on process p. */
static int local_count(const Dim *d, int p) {
  int count = 0;
  for (int g = 0; g < d->extent; ++g) {
    int owner = 0, local = 0;
    locate(d, g, &owner, &local);
    count += owner == p;
  }
  return count;
}

static double a_value(int gi, int gj) {
  return 100.0 * gi + gj;
}
static double c_value(int gi, int gj) {
  return -(double)(gi + 10 * gj);
}

int main(int argc, char **argv) {
  MPI_Init(&argc, &argv);
  int rank = 0, size = 1;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  int nprow = 1;
  for (int d = 1; d * d <= size; ++d)
    if (size % d == 0) nprow = d;
  const int npcol = size / nprow;
  int ctxt = 0, myrow = 0, mycol = 0, pr = 0, pc = 0;
  Cblacs_get(-1, 0, &ctxt);
  Cblacs_gridinit(&ctxt, "Row", nprow, npcol);
  Cblacs_gridinfo(ctxt, &pr, &pc, &myrow, &mycol);
  long long wrong = 0;

  /* A: IMB_ = 2, INB_ = 3, MB_ = 3, NB_ = 2, first block on process row and column 0. */
  const Dim ar = {M, 2, 3, 0, nprow}, ac = {N, 3, 2, 0, npcol};
  const int a_rows = local_count(&ar, myrow), a_cols = local_count(&ac, mycol);
  const int a_lld = a_rows > 0 ? a_rows : 1;
  double *a = calloc((size_t)a_lld * (size_t)(a_cols > 0 ? a_cols : 1), sizeof(double));
  for (int gi = 0; gi < M; ++gi)
    for (int gj = 0; gj < N; ++gj) {
      int orow = 0, ocol = 0, li = 0, lj = 0;
      locate(&ar, gi, &orow, &li);
      locate(&ac, gj, &ocol, &lj);
      if (orow == myrow && ocol == mycol) a[li + lj * a_lld] = a_value(gi, gj);
    }
  const int desca[11] = {2, ctxt, M, N, 2, 3, 3, 2, 0, 0, a_lld};

  /* 1. C: 4 x 4 blocks from process row and column 1 % the grid, a 9-integer descriptor;
   * sub(C) = C(2:7, 3:7) := 0.5 sub(C) + 2 A(3:8, 1:5) (1-based, as PBLAS counts). */
  const Dim cr = {M, 4, 4, 1 % nprow, nprow}, cc = {N, 4, 4, 1 % npcol, npcol};
  const int c_rows = local_count(&cr, myrow), c_cols = local_count(&cc, mycol);
  const int c_lld = (c_rows > 0 ? c_rows : 1) + 1; /* one padding row */
  const size_t c_len = (size_t)c_lld * (size_t)(c_cols > 0 ? c_cols : 1);
  double *c = malloc(c_len * sizeof(double));
  double *expected = malloc(c_len * sizeof(double));
  for (size_t k = 0; k < c_len; ++k)
    c[k] = expected[k] = -1e9 - (double)k; /* padding keeps this */
  const int m = 6, n = 5, ia = 3, ja = 1, ic = 2, jc = 3;
  for (int gi = 0; gi < M; ++gi)
    for (int gj = 0; gj < N; ++gj) {
      int orow = 0, ocol = 0, li = 0, lj = 0;
      locate(&cr, gi, &orow, &li);
      locate(&cc, gj, &ocol, &lj);
      if (orow != myrow || ocol != mycol) continue;
      c[li + lj * c_lld] = expected[li + lj * c_lld] = c_value(gi, gj);
      const int wi = gi - (ic - 1), wj = gj - (jc - 1);
      if (wi >= 0 && wi < m && wj >= 0 && wj < n)
        expected[li + lj * c_lld] = 0.5 * c_value(gi, gj) + 2.0 * a_value(ia - 1 + wi, ja - 1 + wj);
    }
  const int descc[9] = {1, ctxt, M, N, 4, 4, 1 % nprow, 1 % npcol, c_lld};
  const double alpha = 2.0, beta = 0.5;
  redist_pdgeadd_("N", &m, &n, &alpha, a, &ia, &ja, desca, &beta, c, &ic, &jc, descc);
  if (redist_scalapack_last_status() != REDIST_SUCCESS) {
    fprintf(stderr, "rank %d: redist_pdgeadd_: %s\n", rank, redist_last_error());
    MPI_Abort(MPI_COMM_WORLD, 1);
  }
  for (size_t k = 0; k < c_len; ++k)
    wrong += c[k] != expected[k];

  /* 2. B := A whole, B row-major with first blocks of 1 x 4, then blocks of 2 x 3, on the same
   * grid positions (ranks in BLACS's row-major order). */
  int *ranks = malloc((size_t)size * sizeof(int));
  for (int r = 0; r < nprow; ++r) /* position (r, q) at r + q * nprow, as redist_layout */
    for (int q = 0; q < npcol; ++q)
      ranks[r + q * nprow] = r * npcol + q;
  const Dim br = {M, 1, 2, 0, nprow}, bcd = {N, 4, 3, 0, npcol};
  const int b_rows = local_count(&br, myrow), b_cols = local_count(&bcd, mycol);
  const int b_lld = (b_cols > 0 ? b_cols : 1) + 2; /* row-major: lld counts columns, 2 padding */
  const size_t b_len = (size_t)b_lld * (size_t)(b_rows > 0 ? b_rows : 1);
  double *b = malloc(b_len * sizeof(double));
  double *b_expected = malloc(b_len * sizeof(double));
  for (size_t k = 0; k < b_len; ++k)
    b[k] = b_expected[k] = -2e9 - (double)k;
  for (int gi = 0; gi < M; ++gi)
    for (int gj = 0; gj < N; ++gj) {
      int orow = 0, ocol = 0, li = 0, lj = 0;
      locate(&br, gi, &orow, &li);
      locate(&bcd, gj, &ocol, &lj);
      if (orow == myrow && ocol == mycol) b_expected[li * b_lld + lj] = a_value(gi, gj);
    }
  const redist_layout_ext la = {
      {M, N, 3, 2, nprow, npcol, 0, 0, ranks, 0, 0, a_lld}, 2, 3, REDIST_ORDER_COLUMN_MAJOR};
  const redist_layout_ext lb = {
      {M, N, 2, 3, nprow, npcol, 0, 0, ranks, 0, 0, b_lld}, 1, 4, REDIST_ORDER_ROW_MAJOR};
  redist_plan plan = NULL;
  int rc = redist_plan_create_ext(MPI_COMM_WORLD, M, N, REDIST_DOUBLE, &la, &lb, REDIST_REGION_FULL,
                                  0, NULL, &plan);
  if (rc == REDIST_SUCCESS) rc = redist_plan_execute(plan, a, b);
  if (rc != REDIST_SUCCESS) {
    fprintf(stderr, "rank %d: %s\n", rank, redist_last_error());
    MPI_Abort(MPI_COMM_WORLD, 1);
  }
  redist_plan_destroy(&plan);
  for (size_t k = 0; k < b_len; ++k)
    wrong += b[k] != b_expected[k];

  MPI_Allreduce(MPI_IN_PLACE, &wrong, 1, MPI_LONG_LONG, MPI_SUM, MPI_COMM_WORLD);
  if (rank == 0)
    printf("%s: every element checked, %lld wrong\n", wrong == 0 ? "OK" : "FAIL", wrong);
  free(a);
  free(c);
  free(expected);
  free(b);
  free(b_expected);
  free(ranks);
  Cblacs_gridexit(ctxt);
  MPI_Finalize();
  return wrong == 0 ? 0 : 1;
}
