#pragma once
// The few BLACS routines the ScaLAPACK-compatible entries use (BLACS ships no C header).

#include "redist_scalapack.h"

#include <mpi.h>

// NOLINTBEGIN(readability-identifier-naming): BLACS names
extern "C" {
void Cblacs_gridinfo(redist_int ctxt, redist_int *nprow, redist_int *npcol, redist_int *myrow,
                     redist_int *mycol);
void Cblacs_get(redist_int ctxt, redist_int what, redist_int *val);
MPI_Comm Cblacs2sys_handle(redist_int sysctxt);
void Cfree_blacs_system_handle(redist_int handle);
void Cigamx2d(redist_int ctxt, const char *scope, const char *top, redist_int m, redist_int n,
              redist_int *a, redist_int lda, redist_int *ra, redist_int *ca, redist_int ldia,
              redist_int rdest, redist_int cdest);
void Cdgamx2d(redist_int ctxt, const char *scope, const char *top, redist_int m, redist_int n,
              double *a, redist_int lda, redist_int *ra, redist_int *ca, redist_int ldia,
              redist_int rdest, redist_int cdest);
// BLACS internals, used only to tell a valid context handle from garbage before calling
// BLACS with it (BLACS itself does not check). Weak: absent in other BLACS builds.
extern redist_int BI_MaxNCtxt __attribute__((weak));
extern void **BI_MyContxts __attribute__((weak));
}
// NOLINTEND(readability-identifier-naming)

namespace redist::blacs {

/// Cblacs_get WHAT: the system handle of a context's communicator.
constexpr redist_int kGetContextComm = 10;

/// False when `ctxt` is certainly not a live BLACS context handle.
inline bool context_handle_valid(redist_int ctxt) {
  if (ctxt < 0) {
    return false;
  }
  if (&BI_MaxNCtxt == nullptr || &BI_MyContxts == nullptr) {
    return true; // cannot tell; trust the caller
  }
  return ctxt < BI_MaxNCtxt && BI_MyContxts != nullptr && BI_MyContxts[ctxt] != nullptr;
}

struct GridInfo {
  redist_int nprow = -1, npcol = -1, myrow = -1, mycol = -1;
  [[nodiscard]] bool member() const { return nprow > 0 && myrow >= 0 && mycol >= 0; }
};

inline GridInfo grid_info(redist_int ctxt) {
  GridInfo g;
  if (context_handle_valid(ctxt)) {
    Cblacs_gridinfo(ctxt, &g.nprow, &g.npcol, &g.myrow, &g.mycol);
  }
  return g;
}

} // namespace redist::blacs
