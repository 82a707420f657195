/* Matrices replicated over the process rows (docs/guide.md, "B := α·op(A) + β·B", replicated
 * matrices): a descriptor whose RSRC_ is -1 says that every process row of the grid holds all the
 * rows of the matrix, at their global indices (LLD_ >= M_), the columns dealt as usual.
 *
 * 1. C, 10 x 8 replicated over the process rows (2 x 2 blocks of columns), is updated from A,
 *    block-cyclic with 3 x 2 blocks: C := 0.5 C + 2 A through redist_pdgeadd_, as PDGEADD does:
 *    every copy of C is written.
 * 2. B := C^T through redist_pdtran_, C now the replicated source: each process row reads the
 *    copy it holds.
 *
 * Every element of every process's C and B (the padding too) is checked against a value computed
 * here. Prints "OK: every element checked, 0 wrong". */
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

enum { M = 10, N = 8 };

/* Block-cyclic blocks of `block` from process 0 over `procs` processes: the owner of global
 * index g and its index there; src -1: replicated, every process holds g at g. */
static int owner_of(int g, int block, int procs, int src) {
  return src < 0 ? -1 : (g / block) % procs;
}
static int local_of(int g, int block, int procs, int src) {
  return src < 0 ? g : (g / (block * procs)) * block + g % block;
}
static int count_on(int extent, int block, int procs, int src, int p) {
  int count = 0;
  for (int g = 0; g < extent; ++g)
    count += src < 0 || owner_of(g, block, procs, src) == p;
  return count;
}

static double a_value(int gi, int gj) {
  return 100.0 * gi + gj;
}
static double c_value(int gi, int gj) {
  return 7.0 - gi - 10.0 * gj;
}

/* The local array of a matrix (rows x cols, blocks mb x nb, sources rsrc, 0) on this process,
 * every element it holds set by value(gi, gj), the others (padding) to `pad`; its LLD. */
static double *make_local(int rows, int cols, int mb, int nb, int rsrc, int nprow, int npcol,
                          int myrow, int mycol, double (*value)(int, int), double pad, int *lld,
                          size_t *len) {
  const int lr = count_on(rows, mb, nprow, rsrc, myrow);
  const int lc = count_on(cols, nb, npcol, 0, mycol);
  *lld = (lr > 0 ? lr : 1) + 1; /* one padding row */
  *len = (size_t)*lld * (size_t)(lc > 0 ? lc : 1);
  double *x = malloc(*len * sizeof(double));
  for (size_t k = 0; k < *len; ++k)
    x[k] = pad;
  for (int gi = 0; gi < rows; ++gi)
    for (int gj = 0; gj < cols; ++gj) {
      const int orow = owner_of(gi, mb, nprow, rsrc), ocol = owner_of(gj, nb, npcol, 0);
      if ((orow >= 0 && orow != myrow) || ocol != mycol) continue;
      x[local_of(gi, mb, nprow, rsrc) + local_of(gj, nb, npcol, 0) * *lld] = value(gi, gj);
    }
  return x;
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
  const int one = 1, m = M, n = N;

  /* 1. C := 0.5 C + 2 A, C replicated over the process rows. */
  int a_lld = 0, c_lld = 0;
  size_t a_len = 0, c_len = 0;
  double *a = make_local(M, N, 3, 2, 0, nprow, npcol, myrow, mycol, a_value, 0.0, &a_lld, &a_len);
  double *c = make_local(M, N, 2, 2, -1, nprow, npcol, myrow, mycol, c_value, -1e9, &c_lld, &c_len);
  const int desca[9] = {1, ctxt, M, N, 3, 2, 0, 0, a_lld};
  const int descc[9] = {1, ctxt, M, N, 2, 2, -1, 0, c_lld};
  const double alpha = 2.0, beta = 0.5, zero = 0.0, unit = 1.0;
  redist_pdgeadd_("N", &m, &n, &alpha, a, &one, &one, desca, &beta, c, &one, &one, descc);
  if (redist_scalapack_last_status() != REDIST_SUCCESS) {
    fprintf(stderr, "rank %d: redist_pdgeadd_: %s\n", rank, redist_last_error());
    MPI_Abort(MPI_COMM_WORLD, 1);
  }
  for (int gi = 0; gi < M; ++gi) /* this process's copy holds every row of its columns */
    for (int gj = 0; gj < N; ++gj)
      if (owner_of(gj, 2, npcol, 0) == mycol)
        wrong += c[gi + local_of(gj, 2, npcol, 0) * c_lld] !=
                 0.5 * c_value(gi, gj) + 2.0 * a_value(gi, gj);
  for (size_t k = 0; k < c_len; k += (size_t)c_lld) /* the padding row */
    wrong += c[k + (size_t)c_lld - 1] != -1e9;

  /* 2. B := C^T (8 x 10, blocks of 3 x 3), C the replicated source. */
  int b_lld = 0;
  size_t b_len = 0;
  double *b = make_local(N, M, 3, 3, 0, nprow, npcol, myrow, mycol, c_value, -2e9, &b_lld, &b_len);
  for (size_t k = 0; k < b_len; ++k)
    b[k] = -2e9;
  const int descb[9] = {1, ctxt, N, M, 3, 3, 0, 0, b_lld};
  redist_pdtran_(&n, &m, &unit, c, &one, &one, descc, &zero, b, &one, &one, descb);
  if (redist_scalapack_last_status() != REDIST_SUCCESS) {
    fprintf(stderr, "rank %d: redist_pdtran_: %s\n", rank, redist_last_error());
    MPI_Abort(MPI_COMM_WORLD, 1);
  }
  for (size_t k = 0; k < b_len; ++k) {
    const int li = (int)(k % (size_t)b_lld), lj = (int)(k / (size_t)b_lld);
    double want = -2e9; /* padding, or an element of another process */
    for (int gi = 0; gi < N; ++gi)
      for (int gj = 0; gj < M; ++gj)
        if (owner_of(gi, 3, nprow, 0) == myrow && owner_of(gj, 3, npcol, 0) == mycol &&
            local_of(gi, 3, nprow, 0) == li && local_of(gj, 3, npcol, 0) == lj)
          want = 0.5 * c_value(gj, gi) + 2.0 * a_value(gj, gi);
    wrong += b[k] != want;
  }

  MPI_Allreduce(MPI_IN_PLACE, &wrong, 1, MPI_LONG_LONG, MPI_SUM, MPI_COMM_WORLD);
  if (rank == 0)
    printf("%s: every element checked, %lld wrong\n", wrong == 0 ? "OK" : "FAIL", wrong);
  free(a);
  free(c);
  free(b);
  Cblacs_gridexit(ctxt);
  MPI_Finalize();
  return wrong == 0 ? 0 : 1;
}
