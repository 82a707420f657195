/* C side of the Fortran module `redist`: what iso_c_binding alone cannot do portably.
 *   - MPI communicators arrive as Fortran handles (MPI_Fint) and become MPI_Comm here;
 *   - plans from ScaLAPACK descriptors go to redist_plan_create_scalapack (redist_scalapack.h);
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

int redist_f_plan_create_desc(redist_int m, redist_int n, int type, const redist_int *desca,
                              redist_int ia, redist_int ja, const redist_int *descb, redist_int ib,
                              redist_int jb, redist_int ictxt, int region, int unit_diag,
                              const redist_options *options, redist_plan *plan) {
  redist_f_set_message("");
  return redist_plan_create_scalapack(m, n, type, desca, ia, ja, descb, ib, jb, ictxt, region,
                                      unit_diag, options, plan);
}
