/* Prototypes of the BLACS and ScaLAPACK routines used by tests, examples and the benchmark
 * (Debian ships no header for them). LP64: the BLACS/Fortran integer is int. */
#ifndef REDIST_TESTS_SCALAPACK_DECLS_H
#define REDIST_TESTS_SCALAPACK_DECLS_H

#ifdef __cplusplus
extern "C" {
#endif

void Cblacs_pinfo(int *mypnum, int *nprocs);
void Cblacs_get(int ictxt, int what, int *val);
void Cblacs_set(int ictxt, int what, int *val); /* what 15: repeatable combines, 16: coherent */
void Cblacs_gridinit(int *ictxt, const char *order, int nprow, int npcol);
void Cblacs_gridmap(int *ictxt, int *usermap, int ldumap, int nprow, int npcol);
void Cblacs_gridinfo(int ictxt, int *nprow, int *npcol, int *myrow, int *mycol);
void Cblacs_gridexit(int ictxt);
void Cblacs_exit(int notdone);
void Cblacs_barrier(int ictxt, const char *scope);
int Cblacs_pnum(int ictxt, int prow, int pcol);

int numroc_(const int *n, const int *nb, const int *iproc, const int *isrcproc,
            const int *nprocs);
void descinit_(int *desc, const int *m, const int *n, const int *mb, const int *nb,
               const int *irsrc, const int *icsrc, const int *ictxt, const int *lld, int *info);

/* ScaLAPACK's own redistribution routines (the oracle). */
#define REDIST_TESTS_DECLARE(x, T)                                                           \
  void p##x##gemr2d_(const int *m, const int *n, const T *a, const int *ia, const int *ja,    \
                     const int *desca, T *b, const int *ib, const int *jb, const int *descb,  \
                     const int *ictxt);                                                       \
  void p##x##trmr2d_(const char *uplo, const char *diag, const int *m, const int *n,          \
                     const T *a, const int *ia, const int *ja, const int *desca, T *b,        \
                     const int *ib, const int *jb, const int *descb, const int *ictxt);
REDIST_TESTS_DECLARE(s, float)
REDIST_TESTS_DECLARE(d, double)
REDIST_TESTS_DECLARE(c, void)
REDIST_TESTS_DECLARE(z, void)
REDIST_TESTS_DECLARE(i, int)
#undef REDIST_TESTS_DECLARE

void pdsyev_(const char *jobz, const char *uplo, const int *n, double *a, const int *ia,
             const int *ja, const int *desca, double *w, double *z, const int *iz,
             const int *jz, const int *descz, double *work, const int *lwork, int *info);

#ifdef __cplusplus
}
#endif

#endif
