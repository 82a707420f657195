/* C functions behind the Fortran module `redist` (fortran/redist.f90); not a public API. */
#ifndef REDIST_FORTRAN_SUPPORT_H
#define REDIST_FORTRAN_SUPPORT_H

#include <redist.h>
#include <redist_scalapack.h>

#include <mpi.h>

void redist_f_set_message(const char *text);
const char *redist_f_message(void);
int redist_f_plan_create(MPI_Fint comm, int64_t m, int64_t n, int type, const redist_layout *a,
                         const redist_layout *b, int region, int unit_diag,
                         const redist_options *options, redist_plan *plan);
int redist_f_plan_create_desc(redist_int m, redist_int n, int type, const redist_int *desca,
                              redist_int ia, redist_int ja, const redist_int *descb, redist_int ib,
                              redist_int jb, redist_int ictxt, int region, int unit_diag,
                              const redist_options *options, redist_plan *plan);
int redist_f_calibrate(MPI_Fint comm, double *alpha, double *beta);

#endif
