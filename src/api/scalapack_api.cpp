// ScaLAPACK-compatible entries (redist_p?gemr2d_, redist_p?trmr2d_, redist_Cp?...) and PBLAS
// ones (redist_p?geadd_, redist_p?tradd_, redist_p?tran*_): each turns its arguments into a
// Call for run_call (scalapack_call.cpp) and keeps the status for redist_scalapack_last_status.

#include "call_timers.hpp"
#include "scalapack_call.hpp"

#include <cctype>
#include <string>

namespace redist::scalapack {
namespace {

thread_local int last_status = REDIST_SUCCESS;

void entry(const char *routine, std::size_t element_size, bool trapezoid, const char *uplo,
           const char *diag, redist_int m, redist_int n, const void *a, redist_int ia,
           redist_int ja, const redist_int *desca, void *b, redist_int ib, redist_int jb,
           const redist_int *descb, redist_int ictxt) {
  const Positions pos = trapezoid ? kTrmr : kGemr;
  Call c{
      routine,
      element_size,
      trapezoid,
      trapezoid && uplo ? static_cast<char>(std::toupper(static_cast<unsigned char>(*uplo))) : ' ',
      trapezoid && diag ? static_cast<char>(std::toupper(static_cast<unsigned char>(*diag))) : ' ',
      m,
      n,
      ictxt,
      Side{'A', desca ? desca : kNoGrid, ia, ja, a, {}, pos.desca, pos.ia, pos.ja, pos.a, {}},
      Side{'B', descb ? descb : kNoGrid, ib, jb, b, {}, pos.descb, pos.ib, pos.jb, pos.b, {}},
      b,
      pos};
  last_status = c_barrier(routine, [&] {
    call_timers::begin_call();
    const int status = run_call(c);
    call_timers::end_call();
    if (status != REDIST_SUCCESS) throw Error(static_cast<redist_status>(status), "");
  });
  // Not yet reported: an exception run_call did not catch (its own errors carry no message).
  if ((last_status == REDIST_ERR_INTERNAL || last_status == REDIST_ERR_NO_MEMORY) &&
      *redist_last_error() != '\0') {
    report(redist_last_error());
  }
}

char upper(const char *ch) {
  return ch != nullptr ? static_cast<char>(std::toupper(static_cast<unsigned char>(*ch))) : '\0';
}

/// PBLAS PxTRAN, PxTRANU, PxTRANC (trans 'T' or 'C', no TRANS argument), PxGEADD (trans from
/// its argument) and PxTRADD (uplo too): sub(C) := beta sub(C) + alpha op(sub(A)) on the
/// processes of DESCC(CTXT_), through run_call as the copies.
void operation_entry(const char *routine, Scalar type, const Positions &pos, char trans,
                     const char *uplo, redist_int m, redist_int n, const void *alpha, const void *a,
                     redist_int ia, redist_int ja, const redist_int *desca, const void *beta,
                     void *c, redist_int ic, redist_int jc, const redist_int *descc) {
  const bool trapezoid = pos.uplo > 0;
  static const unsigned char kZero[16] = {};
  // A NULL alpha or beta is reported as an argument (checked before any use).
  const Operation op =
      Operation::make(type, trans == 'C', alpha ? alpha : kZero, beta ? beta : kZero);
  Call call{routine,
            op.element_size(),
            trapezoid,
            trapezoid ? (uplo != nullptr ? upper(uplo) : '\0') : ' ',
            trapezoid ? 'N' : ' ',
            m,
            n,
            descc != nullptr ? descc[CTXT_] : -1,
            Side{'A', desca ? desca : kNoGrid, ia, ja, a, {}, pos.desca, pos.ia, pos.ja, pos.a, {}},
            Side{'C', descc ? descc : kNoGrid, ic, jc, c, {}, pos.descb, pos.ib, pos.jb, pos.b, {}},
            c,
            pos,
            &op,
            trans};
  last_status = c_barrier(routine, [&] {
    if (alpha == nullptr || beta == nullptr) {
      const bool a_missing = alpha == nullptr;
      report(std::string(routine) + ": argument " +
             std::to_string(a_missing ? pos.alpha : pos.beta) + " (" +
             (a_missing ? "ALPHA" : "BETA") + "): NULL pointer; nothing was computed");
      throw Error(REDIST_ERR_ARGUMENT, "");
    }
    const int status = run_call(call);
    if (status != REDIST_SUCCESS) throw Error(static_cast<redist_status>(status), "");
  });
  if ((last_status == REDIST_ERR_INTERNAL || last_status == REDIST_ERR_NO_MEMORY) &&
      *redist_last_error() != '\0') {
    report(redist_last_error());
  }
}

} // namespace
} // namespace redist::scalapack

using namespace redist::scalapack;

#define REDIST_DEFINE_ENTRIES(x, X, T, SIZE)                                                       \
  extern "C" void redist_p##x##gemr2d_(                                                            \
      const redist_int *m, const redist_int *n, const T *a, const redist_int *ia,                  \
      const redist_int *ja, const redist_int *desca, T *b, const redist_int *ib,                   \
      const redist_int *jb, const redist_int *descb, const redist_int *ictxt) {                    \
    entry("P" #X "GEMR2D", SIZE, false, nullptr, nullptr, *m, *n, a, *ia, *ja, desca, b, *ib, *jb, \
          descb, *ictxt);                                                                          \
  }                                                                                                \
  extern "C" void redist_p##x##trmr2d_(const char *uplo, const char *diag, const redist_int *m,    \
                                       const redist_int *n, const T *a, const redist_int *ia,      \
                                       const redist_int *ja, const redist_int *desca, T *b,        \
                                       const redist_int *ib, const redist_int *jb,                 \
                                       const redist_int *descb, const redist_int *ictxt) {         \
    entry("P" #X "TRMR2D", SIZE, true, uplo, diag, *m, *n, a, *ia, *ja, desca, b, *ib, *jb, descb, \
          *ictxt);                                                                                 \
  }                                                                                                \
  extern "C" void redist_Cp##x##gemr2d(redist_int m, redist_int n, T *a, redist_int ia,            \
                                       redist_int ja, redist_int *desca, T *b, redist_int ib,      \
                                       redist_int jb, redist_int *descb, redist_int ictxt) {       \
    entry("CP" #X "GEMR2D", SIZE, false, nullptr, nullptr, m, n, a, ia, ja, desca, b, ib, jb,      \
          descb, ictxt);                                                                           \
  }                                                                                                \
  extern "C" void redist_Cp##x##trmr2d(const char *uplo, const char *diag, redist_int m,           \
                                       redist_int n, T *a, redist_int ia, redist_int ja,           \
                                       redist_int *desca, T *b, redist_int ib, redist_int jb,      \
                                       redist_int *descb, redist_int ictxt) {                      \
    entry("CP" #X "TRMR2D", SIZE, true, uplo, diag, m, n, a, ia, ja, desca, b, ib, jb, descb,      \
          ictxt);                                                                                  \
  }

// PBLAS's names; TRANS of PxGEADD / PxTRADD passed as given (checked by run_call).
#define REDIST_DEFINE_OPERATIONS(x, X, T, SCALAR)                                                  \
  extern "C" void redist_p##x##geadd_(                                                             \
      const char *trans, const redist_int *m, const redist_int *n, const T *alpha, const T *a,     \
      const redist_int *ia, const redist_int *ja, const redist_int *desca, const T *beta, T *c,    \
      const redist_int *ic, const redist_int *jc, const redist_int *descc) {                       \
    operation_entry("P" #X "GEADD", SCALAR, kGeadd, upper(trans), nullptr, *m, *n, alpha, a, *ia,  \
                    *ja, desca, beta, c, *ic, *jc, descc);                                         \
  }                                                                                                \
  extern "C" void redist_p##x##tradd_(                                                             \
      const char *uplo, const char *trans, const redist_int *m, const redist_int *n,               \
      const T *alpha, const T *a, const redist_int *ia, const redist_int *ja,                      \
      const redist_int *desca, const T *beta, T *c, const redist_int *ic, const redist_int *jc,    \
      const redist_int *descc) {                                                                   \
    operation_entry("P" #X "TRADD", SCALAR, kTradd, upper(trans), uplo, *m, *n, alpha, a, *ia,     \
                    *ja, desca, beta, c, *ic, *jc, descc);                                         \
  }
#define REDIST_DEFINE_TRAN(name, NAME, T, SCALAR, TRANS)                                           \
  extern "C" void redist_##name##_(                                                                \
      const redist_int *m, const redist_int *n, const T *alpha, const T *a, const redist_int *ia,  \
      const redist_int *ja, const redist_int *desca, const T *beta, T *c, const redist_int *ic,    \
      const redist_int *jc, const redist_int *descc) {                                             \
    operation_entry(#NAME, SCALAR, kTran, TRANS, nullptr, *m, *n, alpha, a, *ia, *ja, desca, beta, \
                    c, *ic, *jc, descc);                                                           \
  }

REDIST_DEFINE_OPERATIONS(s, S, float, redist::Scalar::f32)
REDIST_DEFINE_OPERATIONS(d, D, double, redist::Scalar::f64)
REDIST_DEFINE_OPERATIONS(c, C, void, redist::Scalar::c32)
REDIST_DEFINE_OPERATIONS(z, Z, void, redist::Scalar::c64)
REDIST_DEFINE_TRAN(pstran, PSTRAN, float, redist::Scalar::f32, 'T')
REDIST_DEFINE_TRAN(pdtran, PDTRAN, double, redist::Scalar::f64, 'T')
REDIST_DEFINE_TRAN(pctranu, PCTRANU, void, redist::Scalar::c32, 'T')
REDIST_DEFINE_TRAN(pztranu, PZTRANU, void, redist::Scalar::c64, 'T')
REDIST_DEFINE_TRAN(pctranc, PCTRANC, void, redist::Scalar::c32, 'C')
REDIST_DEFINE_TRAN(pztranc, PZTRANC, void, redist::Scalar::c64, 'C')

REDIST_DEFINE_ENTRIES(s, S, float, 4)
REDIST_DEFINE_ENTRIES(d, D, double, 8)
REDIST_DEFINE_ENTRIES(c, C, void, 8)
REDIST_DEFINE_ENTRIES(z, Z, void, 16)
REDIST_DEFINE_ENTRIES(i, I, redist_int, sizeof(redist_int))

extern "C" int redist_scalapack_last_status(void) {
  return redist::scalapack::last_status;
}
