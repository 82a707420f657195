/* redist_plan_create with the enum arguments as plain ints, compiled as C: a C caller may
 * pass any int for an enum, and the error tests pass out-of-range values (42, -1), which C++
 * cannot hold in an enum without undefined behaviour (UBSan's enum check flags it). The _opt
 * variant does the same for redist_plan_create_opt. */
#include "capi_raw.h"

int capitest_plan_create(MPI_Comm comm, int64_t m, int64_t n, int type, const redist_layout *a,
                         const redist_layout *b, int region, int unit_diag, redist_plan *plan) {
  return redist_plan_create(comm, m, n, (redist_type)type, a, b, (redist_region)region, unit_diag,
                            plan);
}

int capitest_plan_create_opt(MPI_Comm comm, int64_t m, int64_t n, int type, const redist_layout *a,
                             const redist_layout *b, int region, int unit_diag,
                             const redist_options *options, redist_plan *plan) {
  return redist_plan_create_opt(comm, m, n, (redist_type)type, a, b, (redist_region)region,
                                unit_diag, options, plan);
}
