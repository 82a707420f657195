/* The unprefixed ScaLAPACK names, forwarding to redist. Linked ahead of ScaLAPACK, this
 * library routes existing programs -- and ScaLAPACK's own internal calls (PDSYEV, PDGESVD,
 * PDLAQR3, ...) -- to redist. Every Fortran spelling seen in the wild is provided:
 * lowercase, lowercase_, lowercase__ and UPPERCASE. Fortran's hidden string lengths after
 * the last argument of p?trmr2d are not needed (only the first character is read). */
#include "redist_scalapack.h"

#define GEMR_PARAMS(T)                                                                             \
  const redist_int *m, const redist_int *n, const T *a, const redist_int *ia,                      \
      const redist_int *ja, const redist_int *desca, T *b, const redist_int *ib,                   \
      const redist_int *jb, const redist_int *descb, const redist_int *ictxt
#define TRMR_PARAMS(T) const char *uplo, const char *diag, GEMR_PARAMS(T)

#define FORTRAN_GEMR(name, x, T)                                                                   \
  void name(GEMR_PARAMS(T));                                                                       \
  void name(GEMR_PARAMS(T)) {                                                                      \
    redist_p##x##gemr2d_(m, n, a, ia, ja, desca, b, ib, jb, descb, ictxt);                         \
  }
#define FORTRAN_TRMR(name, x, T)                                                                   \
  void name(TRMR_PARAMS(T));                                                                       \
  void name(TRMR_PARAMS(T)) {                                                                      \
    redist_p##x##trmr2d_(uplo, diag, m, n, a, ia, ja, desca, b, ib, jb, descb, ictxt);             \
  }

#define C_ENTRIES(x, T)                                                                            \
  void Cp##x##gemr2d(redist_int m, redist_int n, T *a, redist_int ia, redist_int ja,               \
                     redist_int *desca, T *b, redist_int ib, redist_int jb, redist_int *descb,     \
                     redist_int ictxt);                                                            \
  void Cp##x##gemr2d(redist_int m, redist_int n, T *a, redist_int ia, redist_int ja,               \
                     redist_int *desca, T *b, redist_int ib, redist_int jb, redist_int *descb,     \
                     redist_int ictxt) {                                                           \
    redist_Cp##x##gemr2d(m, n, a, ia, ja, desca, b, ib, jb, descb, ictxt);                         \
  }                                                                                                \
  void Cp##x##trmr2d(const char *uplo, const char *diag, redist_int m, redist_int n, T *a,         \
                     redist_int ia, redist_int ja, redist_int *desca, T *b, redist_int ib,         \
                     redist_int jb, redist_int *descb, redist_int ictxt);                          \
  void Cp##x##trmr2d(const char *uplo, const char *diag, redist_int m, redist_int n, T *a,         \
                     redist_int ia, redist_int ja, redist_int *desca, T *b, redist_int ib,         \
                     redist_int jb, redist_int *descb, redist_int ictxt) {                         \
    redist_Cp##x##trmr2d(uplo, diag, m, n, a, ia, ja, desca, b, ib, jb, descb, ictxt);             \
  }

#define ALL_SPELLINGS(x, X, T)                                                                     \
  FORTRAN_GEMR(p##x##gemr2d, x, T)                                                                 \
  FORTRAN_GEMR(p##x##gemr2d_, x, T)                                                                \
  FORTRAN_GEMR(p##x##gemr2d__, x, T)                                                               \
  FORTRAN_GEMR(P##X##GEMR2D, x, T)                                                                 \
  FORTRAN_TRMR(p##x##trmr2d, x, T)                                                                 \
  FORTRAN_TRMR(p##x##trmr2d_, x, T)                                                                \
  FORTRAN_TRMR(p##x##trmr2d__, x, T)                                                               \
  FORTRAN_TRMR(P##X##TRMR2D, x, T)                                                                 \
  C_ENTRIES(x, T)

ALL_SPELLINGS(s, S, float)
ALL_SPELLINGS(d, D, double)
ALL_SPELLINGS(c, C, void)
ALL_SPELLINGS(z, Z, void)
ALL_SPELLINGS(i, I, redist_int)

/* PBLAS's transposes and additions (hidden string lengths after the last argument unused). */
#define TRAN_PARAMS(T)                                                                             \
  const redist_int *m, const redist_int *n, const T *alpha, const T *a, const redist_int *ia,      \
      const redist_int *ja, const redist_int *desca, const T *beta, T *c, const redist_int *ic,    \
      const redist_int *jc, const redist_int *descc
#define GEADD_PARAMS(T) const char *trans, TRAN_PARAMS(T)
#define TRADD_PARAMS(T) const char *uplo, GEADD_PARAMS(T)

#define FORTRAN_TRAN(name, target, T)                                                              \
  void name(TRAN_PARAMS(T));                                                                       \
  void name(TRAN_PARAMS(T)) {                                                                      \
    target(m, n, alpha, a, ia, ja, desca, beta, c, ic, jc, descc);                                 \
  }
#define FORTRAN_GEADD(name, x, T)                                                                  \
  void name(GEADD_PARAMS(T));                                                                      \
  void name(GEADD_PARAMS(T)) {                                                                     \
    redist_p##x##geadd_(trans, m, n, alpha, a, ia, ja, desca, beta, c, ic, jc, descc);             \
  }
#define FORTRAN_TRADD(name, x, T)                                                                  \
  void name(TRADD_PARAMS(T));                                                                      \
  void name(TRADD_PARAMS(T)) {                                                                     \
    redist_p##x##tradd_(uplo, trans, m, n, alpha, a, ia, ja, desca, beta, c, ic, jc, descc);       \
  }

#define TRAN_SPELLINGS(lower, UPPER, T)                                                            \
  FORTRAN_TRAN(lower, redist_##lower##_, T)                                                        \
  FORTRAN_TRAN(lower##_, redist_##lower##_, T)                                                     \
  FORTRAN_TRAN(lower##__, redist_##lower##_, T)                                                    \
  FORTRAN_TRAN(UPPER, redist_##lower##_, T)
#define ADD_SPELLINGS(x, X, T)                                                                     \
  FORTRAN_GEADD(p##x##geadd, x, T)                                                                 \
  FORTRAN_GEADD(p##x##geadd_, x, T)                                                                \
  FORTRAN_GEADD(p##x##geadd__, x, T)                                                               \
  FORTRAN_GEADD(P##X##GEADD, x, T)                                                                 \
  FORTRAN_TRADD(p##x##tradd, x, T)                                                                 \
  FORTRAN_TRADD(p##x##tradd_, x, T)                                                                \
  FORTRAN_TRADD(p##x##tradd__, x, T)                                                               \
  FORTRAN_TRADD(P##X##TRADD, x, T)

ADD_SPELLINGS(s, S, float)
ADD_SPELLINGS(d, D, double)
ADD_SPELLINGS(c, C, void)
ADD_SPELLINGS(z, Z, void)
TRAN_SPELLINGS(pstran, PSTRAN, float)
TRAN_SPELLINGS(pdtran, PDTRAN, double)
TRAN_SPELLINGS(pctranu, PCTRANU, void)
TRAN_SPELLINGS(pztranu, PZTRANU, void)
TRAN_SPELLINGS(pctranc, PCTRANC, void)
TRAN_SPELLINGS(pztranc, PZTRANC, void)
