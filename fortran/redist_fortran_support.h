/* C functions behind the Fortran module `redist` (fortran/redist.f90); not a public API. */
#ifndef REDIST_FORTRAN_SUPPORT_H
#define REDIST_FORTRAN_SUPPORT_H

#include <redist.h>
#include <redist_scalapack.h>

#include <mpi.h>

void redist_f_set_message(const char *text);
/* In libredist (src/api/capi_execute.cpp): this thread's next execution call fails with
 * `message` as for an invalid argument of this process, agreed with the others. */
void redist_internal_refuse_next_execution(const char *message);
const char *redist_f_message(void);
int redist_f_plan_create(MPI_Fint comm, int64_t m, int64_t n, int type, const redist_layout *a,
                         const redist_layout *b, int region, int unit_diag,
                         const redist_options *options, redist_plan *plan);
int redist_f_plan_create_desc(redist_int m, redist_int n, int type, const redist_int *desca,
                              redist_int ia, redist_int ja, const redist_int *descb, redist_int ib,
                              redist_int jb, redist_int ictxt, int region, int unit_diag,
                              const redist_options *options, redist_plan *plan);
int redist_f_calibrate(MPI_Fint comm, double *alpha, double *beta);
int redist_f_propose_grid_ranks(MPI_Fint comm, int64_t m, int64_t n, int type,
                                const redist_layout *a, const redist_layout *b, int *ranks,
                                int64_t *bytes_kept_before, int64_t *bytes_kept_after);
int redist_f_plan_create_op(MPI_Fint comm, int op, int64_t m, int64_t n, int type,
                            const redist_layout *a, const redist_layout *b, int region,
                            const redist_options *options, redist_plan *plan);
int redist_f_plan_create_batch(MPI_Fint comm, int count, const redist_batch_op *ops,
                               const redist_options *options, redist_plan *plan);
int redist_f_plan_create_ext(MPI_Fint comm, int64_t m, int64_t n, int type,
                             const redist_layout_ext *a, const redist_layout_ext *b, int region,
                             int unit_diag, const redist_options *options, redist_plan *plan);
int redist_f_plan_create_op_ext(MPI_Fint comm, int op, int64_t m, int64_t n, int type,
                                const redist_layout_ext *a, const redist_layout_ext *b, int region,
                                const redist_options *options, redist_plan *plan);
/* redist_grid_plan_create with each side's kind (a redist_layout_kind) and the layout of that
 * kind (the other pointer is unused): the enum's size stays on the C side. */
int redist_f_grid_plan_create(MPI_Fint comm, int op, int64_t m, int64_t n, int type, int a_kind,
                              const redist_layout_ext *a_cyclic, const redist_block_grid *a_grid,
                              int b_kind, const redist_layout_ext *b_cyclic,
                              const redist_block_grid *b_grid, const redist_options *options,
                              redist_plan *plan);
int redist_f_plan_create_batch_ext(MPI_Fint comm, int count, const redist_batch_op_ext *ops,
                                   const redist_options *options, redist_plan *plan);
int redist_f_grid_batch_create(MPI_Fint comm, int count, const redist_grid_batch_op *ops,
                               const redist_options *options, redist_plan *plan);

/* An N-d array as module redist describes it: distributions by the module's codes
 * (REDIST_F_DIST_*), GEN_BLOCK extents of all GEN_BLOCK dimensions one after another, the
 * storage order by the module's codes (REDIST_F_ORDER_*). The other fields are
 * redist_darray's. */
enum {
  REDIST_F_DIST_NONE = 0,
  REDIST_F_DIST_BLOCK = 1,
  REDIST_F_DIST_CYCLIC = 2,
  REDIST_F_DIST_GEN_BLOCK = 3
};
enum { REDIST_F_ORDER_FORTRAN = 0, REDIST_F_ORDER_C = 1 };
typedef struct redist_f_nd_layout {
  int ndims, order;
  const int64_t *gsizes;
  const int *kinds;
  const int64_t *blocks; /* 0: the default block */
  const int64_t *gen_block_extents;
  const int *psizes;
  const int *ranks;
  const int64_t *starts, *subsizes, *local_extents;
} redist_f_nd_layout;

int redist_f_nd_plan_create(MPI_Fint comm, int type, const redist_f_nd_layout *a,
                            const redist_f_nd_layout *b, const int *perm,
                            const redist_options *options, redist_plan *plan);

#endif
