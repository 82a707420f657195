/* Shrink a computation from a 2 x 3 process grid to 2 x 2 and grow it back, with redist's
 * ScaLAPACK-compatible entry (redist_Cpdgemr2d, prefixed so that ScaLAPACK stays usable beside
 * it). While the matrix lives on the 2 x 2 grid, processes 4 and 5 are idle: they still take
 * part in the redistribution calls, passing DESC(CTXT_) = -1 for the grid they are not in.
 * Every element is checked at the end. Run with 6 processes: mpirun -n 6
 * ./redist_example_shrink_grow */
#include <redist.h>
#include <redist_scalapack.h>

#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>

/* BLACS and ScaLAPACK's TOOLS ship no C header. */
/* NOLINTBEGIN(readability-identifier-naming): BLACS and ScaLAPACK names */
void Cblacs_pinfo(int *mypnum, int *nprocs);
void Cblacs_get(int ictxt, int what, int *val);
void Cblacs_gridinit(int *ictxt, const char *order, int nprow, int npcol);
void Cblacs_gridinfo(int ictxt, int *nprow, int *npcol, int *myrow, int *mycol);
void Cblacs_gridexit(int ictxt);
void Cblacs_exit(int notdone);
int numroc_(const int *n, const int *nb, const int *iproc, const int *isrcproc, const int *nprocs);
int indxl2g_(const int *indxloc, const int *nb, const int *iproc, const int *isrcproc,
             const int *nprocs);
/* NOLINTEND(readability-identifier-naming) */

enum { M = 300, N = 200, BLOCK = 16 };

/* One process's view of the matrix on one grid. */
typedef struct {
  int ctxt, nprow, npcol, myrow, mycol, rows, cols;
  int desc[9];
  double *data;
} Distributed;

static Distributed distribute(int ctxt) {
  Distributed d = {.ctxt = ctxt, .myrow = -1, .mycol = -1};
  d.desc[1] = -1; /* CTXT_: not in this grid */
  if (ctxt < 0) return d;
  Cblacs_gridinfo(ctxt, &d.nprow, &d.npcol, &d.myrow, &d.mycol);
  const int m = M, n = N, block = BLOCK, zero = 0;
  d.rows = numroc_(&m, &block, &d.myrow, &zero, &d.nprow);
  d.cols = numroc_(&n, &block, &d.mycol, &zero, &d.npcol);
  const int lld = d.rows > 1 ? d.rows : 1;
  const int desc[9] = {1, ctxt, M, N, BLOCK, BLOCK, 0, 0, lld};
  for (int k = 0; k < 9; ++k)
    d.desc[k] = desc[k];
  d.data = calloc((size_t)lld * (size_t)(d.cols > 0 ? d.cols : 1), sizeof(double));
  return d;
}

static int global_index(int local, int coordinate, int nprocs) {
  const int one_based = local + 1, block = BLOCK, zero = 0;
  return indxl2g_(&one_based, &block, &coordinate, &zero, &nprocs) - 1;
}

static double initial_value(int i, int j) {
  return (double)i + (double)j / 1000.0;
}

static void redistribute(const Distributed *from, Distributed *to, int ictxt, const char *what) {
  redist_Cpdgemr2d(M, N, from->data, 1, 1, (redist_int *)from->desc, to->data, 1, 1, to->desc,
                   ictxt);
  if (redist_scalapack_last_status() != REDIST_SUCCESS) {
    fprintf(stderr, "%s failed: %s\n", what, redist_status_name(redist_scalapack_last_status()));
    MPI_Abort(MPI_COMM_WORLD, 1);
  }
}

int main(void) {
  int me = 0, nprocs = 0;
  Cblacs_pinfo(&me, &nprocs);
  if (nprocs != 6) {
    if (me == 0) fprintf(stderr, "run with 6 processes\n");
    Cblacs_exit(0);
    return 1;
  }
  int ctxt6 = 0, ctxt4 = 0;
  Cblacs_get(-1, 0, &ctxt6);
  Cblacs_gridinit(&ctxt6, "Row", 2, 3); /* all six processes; also the ICTXT of both calls */
  Cblacs_get(-1, 0, &ctxt4);
  Cblacs_gridinit(&ctxt4, "Row", 2, 2); /* processes 0-3; 4 and 5 get -1 */

  Distributed wide = distribute(ctxt6), narrow = distribute(ctxt4);
  for (int c = 0; c < wide.cols; ++c)
    for (int r = 0; r < wide.rows; ++r)
      wide.data[r + c * wide.desc[8]] = initial_value(global_index(r, wide.myrow, wide.nprow),
                                                      global_index(c, wide.mycol, wide.npcol));

  redistribute(&wide, &narrow, ctxt6, "shrinking 2 x 3 -> 2 x 2");
  for (int c = 0; c < narrow.cols; ++c) /* the computation, on four processes */
    for (int r = 0; r < narrow.rows; ++r)
      narrow.data[r + c * narrow.desc[8]] *= 2.0;
  for (int k = 0; k < wide.desc[8] * wide.cols; ++k)
    wide.data[k] = -1.0;
  redistribute(&narrow, &wide, ctxt6, "growing 2 x 2 -> 2 x 3");

  long long wrong = 0;
  for (int c = 0; c < wide.cols; ++c)
    for (int r = 0; r < wide.rows; ++r) {
      const double expected = 2.0 * initial_value(global_index(r, wide.myrow, wide.nprow),
                                                  global_index(c, wide.mycol, wide.npcol));
      if (wide.data[r + c * wide.desc[8]] != expected) ++wrong;
    }
  long long total_wrong = 0;
  MPI_Reduce(&wrong, &total_wrong, 1, MPI_LONG_LONG, MPI_SUM, 0, MPI_COMM_WORLD);
  if (me == 0) {
    printf("shrink/grow: %d x %d matrix, 2 x 3 grid -> 2 x 2 grid (processes 4, 5 idle, "
           "CTXT_ = -1) -> 2 x 3 grid\n",
           M, N);
    printf("%s: %lld elements wrong\n", total_wrong == 0 ? "OK" : "FAILED", total_wrong);
  }
  free(wide.data);
  free(narrow.data);
  if (ctxt4 >= 0) Cblacs_gridexit(ctxt4);
  Cblacs_gridexit(ctxt6);
  Cblacs_exit(0);
  return total_wrong == 0 ? 0 : 1;
}
