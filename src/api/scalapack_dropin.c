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
