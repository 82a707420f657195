#pragma once
/* See capi_raw.c. */
#include <redist.h>

#ifdef __cplusplus
extern "C" {
#endif
int capitest_plan_create(MPI_Comm comm, int64_t m, int64_t n, int type, const redist_layout *a,
                         const redist_layout *b, int region, int unit_diag, redist_plan *plan);
int capitest_plan_create_opt(MPI_Comm comm, int64_t m, int64_t n, int type, const redist_layout *a,
                             const redist_layout *b, int region, int unit_diag,
                             const redist_options *options, redist_plan *plan);
#ifdef __cplusplus
}
#endif
