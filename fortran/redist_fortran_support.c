/* C side of the Fortran module `redist`: what iso_c_binding alone cannot do portably.
 *   - MPI communicators arrive as Fortran handles (MPI_Fint) and become MPI_Comm here;
 *   - plans from ScaLAPACK descriptors go to redist_plan_create_scalapack (redist_scalapack.h);
 *   - N-d layouts arrive with the module's codes for distributions and storage orders, which
 *     become MPI's (whose values only C knows) and redist_darray here;
 *   - a thread-local message for errors the Fortran layer finds itself (read before redist's). */
#include "redist_fortran_support.h"

#include <redist_scalapack.h>

#include <stdio.h>

static _Thread_local char fortran_message[1024];

void redist_f_set_message(const char *text) {
  snprintf(fortran_message, sizeof fortran_message, "%s", text);
}

const char *redist_f_message(void) {
  return fortran_message[0] != '\0' ? fortran_message : redist_last_error();
}

int redist_f_plan_create(MPI_Fint comm, int64_t m, int64_t n, int type, const redist_layout *a,
                         const redist_layout *b, int region, int unit_diag,
                         const redist_options *options, redist_plan *plan) {
  const MPI_Comm c_comm = MPI_Comm_f2c(comm);
  if (options == NULL)
    return redist_plan_create(c_comm, m, n, (redist_type)type, a, b, (redist_region)region,
                              unit_diag, plan);
  return redist_plan_create_opt(c_comm, m, n, (redist_type)type, a, b, (redist_region)region,
                                unit_diag, options, plan);
}

int redist_f_calibrate(MPI_Fint comm, double *alpha, double *beta) {
  return redist_calibrate(MPI_Comm_f2c(comm), alpha, beta);
}

int redist_f_propose_grid_ranks(MPI_Fint comm, int64_t m, int64_t n, int type,
                                const redist_layout *a, const redist_layout *b, int *ranks,
                                int64_t *bytes_kept_before, int64_t *bytes_kept_after) {
  return redist_propose_grid_ranks(MPI_Comm_f2c(comm), m, n, (redist_type)type, a, b, ranks,
                                   bytes_kept_before, bytes_kept_after);
}

int redist_f_plan_create_desc(redist_int m, redist_int n, int type, const redist_int *desca,
                              redist_int ia, redist_int ja, const redist_int *descb, redist_int ib,
                              redist_int jb, redist_int ictxt, int region, int unit_diag,
                              const redist_options *options, redist_plan *plan) {
  redist_f_set_message("");
  return redist_plan_create_scalapack(m, n, type, desca, ia, ja, descb, ib, jb, ictxt, region,
                                      unit_diag, options, plan);
}

int redist_f_plan_create_op(MPI_Fint comm, int op, int64_t m, int64_t n, int type,
                            const redist_layout *a, const redist_layout *b, int region,
                            const redist_options *options, redist_plan *plan) {
  return redist_plan_create_op(MPI_Comm_f2c(comm), (redist_op)op, m, n, (redist_type)type, a, b,
                               (redist_region)region, options, plan);
}

int redist_f_plan_create_batch(MPI_Fint comm, int count, const redist_batch_op *ops,
                               const redist_options *options, redist_plan *plan) {
  return redist_plan_create_batch(MPI_Comm_f2c(comm), count, ops, options, plan);
}

int redist_f_plan_create_ext(MPI_Fint comm, int64_t m, int64_t n, int type,
                             const redist_layout_ext *a, const redist_layout_ext *b, int region,
                             int unit_diag, const redist_options *options, redist_plan *plan) {
  return redist_plan_create_ext(MPI_Comm_f2c(comm), m, n, (redist_type)type, a, b,
                                (redist_region)region, unit_diag, options, plan);
}

int redist_f_plan_create_op_ext(MPI_Fint comm, int op, int64_t m, int64_t n, int type,
                                const redist_layout_ext *a, const redist_layout_ext *b, int region,
                                const redist_options *options, redist_plan *plan) {
  return redist_plan_create_op_ext(MPI_Comm_f2c(comm), (redist_op)op, m, n, (redist_type)type, a, b,
                                   (redist_region)region, options, plan);
}

int redist_f_plan_create_batch_ext(MPI_Fint comm, int count, const redist_batch_op_ext *ops,
                                   const redist_options *options, redist_plan *plan) {
  return redist_plan_create_batch_ext(MPI_Comm_f2c(comm), count, ops, options, plan);
}

int redist_f_grid_plan_create(MPI_Fint comm, int op, int64_t m, int64_t n, int type, int a_kind,
                              const redist_layout_ext *a_cyclic, const redist_block_grid *a_grid,
                              int b_kind, const redist_layout_ext *b_cyclic,
                              const redist_block_grid *b_grid, const redist_options *options,
                              redist_plan *plan) {
  const redist_any_layout a = {.kind = (redist_layout_kind)a_kind, .cyclic = a_cyclic,
                               .grid = a_grid};
  const redist_any_layout b = {.kind = (redist_layout_kind)b_kind, .cyclic = b_cyclic,
                               .grid = b_grid};
  return redist_grid_plan_create(MPI_Comm_f2c(comm), (redist_op)op, m, n, (redist_type)type, &a,
                                 &b, options, plan);
}

int redist_f_grid_batch_create(MPI_Fint comm, int count, const redist_grid_batch_op *ops,
                               const redist_options *options, redist_plan *plan) {
  return redist_grid_batch_create(MPI_Comm_f2c(comm), count, ops, options, plan);
}

enum { max_dims = 7 };

/* MPI's code for a distribution of the module; an unknown code stays an invalid one, which
 * redist_nd_plan_create then reports naming the field and dimension. */
static int mpi_distribution(int kind) {
  switch (kind) {
  case REDIST_F_DIST_NONE:
    return MPI_DISTRIBUTE_NONE;
  case REDIST_F_DIST_BLOCK:
    return MPI_DISTRIBUTE_BLOCK;
  case REDIST_F_DIST_CYCLIC:
    return MPI_DISTRIBUTE_CYCLIC;
  case REDIST_F_DIST_GEN_BLOCK:
    return REDIST_DISTRIBUTE_GEN_BLOCK;
  default:
    return -1;
  }
}

/* The redist_darray of @p in, its arrays in @p distribs, @p dargs and @p gen_blocks. A layout
 * of more than max_dims dimensions keeps its ndims and no arrays: redist_nd_plan_create
 * rejects the ndims before it reads them. */
static redist_darray to_darray(const redist_f_nd_layout *in, int distribs[max_dims],
                               int64_t dargs[max_dims], const int64_t *gen_blocks[max_dims]) {
  redist_darray out = {.ndims = in->ndims,
                       .gsizes = in->gsizes,
                       .distribs = distribs,
                       .dargs = dargs,
                       .gen_blocks = gen_blocks,
                       .psizes = in->psizes,
                       .order = in->order == REDIST_F_ORDER_C ? MPI_ORDER_C : MPI_ORDER_FORTRAN,
                       .ranks = in->ranks,
                       .starts = in->starts,
                       .subsizes = in->subsizes,
                       .local_extents = in->local_extents};
  if (in->order != REDIST_F_ORDER_C && in->order != REDIST_F_ORDER_FORTRAN) out.order = -1;
  if (in->ndims < 1 || in->ndims > max_dims) return out;
  const int64_t *next_extents = in->gen_block_extents;
  for (int d = 0; d < in->ndims; ++d) {
    distribs[d] = mpi_distribution(in->kinds[d]);
    dargs[d] = in->blocks[d] != 0 ? in->blocks[d] : MPI_DISTRIBUTE_DFLT_DARG;
    gen_blocks[d] = NULL;
    if (in->kinds[d] == REDIST_F_DIST_GEN_BLOCK) {
      gen_blocks[d] = next_extents;
      next_extents += in->psizes[d] > 1 ? in->psizes[d] : 1; /* as the module lays them out */
    }
  }
  return out;
}

int redist_f_nd_plan_create(MPI_Fint comm, int type, const redist_f_nd_layout *a,
                            const redist_f_nd_layout *b, const int *perm,
                            const redist_options *options, redist_plan *plan) {
  int distribs_a[max_dims], distribs_b[max_dims];
  int64_t dargs_a[max_dims], dargs_b[max_dims];
  const int64_t *gen_blocks_a[max_dims], *gen_blocks_b[max_dims];
  const redist_darray darray_a = to_darray(a, distribs_a, dargs_a, gen_blocks_a);
  const redist_darray darray_b = to_darray(b, distribs_b, dargs_b, gen_blocks_b);
  return redist_nd_plan_create_perm(MPI_Comm_f2c(comm), (redist_type)type, &darray_a, &darray_b,
                                    perm, options, plan);
}
