/**
 * @file redist_scalapack.h
 * @brief ScaLAPACK-compatible redistribution entry points implemented by redist.
 *
 * Same arguments and results as ScaLAPACK's PxGEMR2D / PxTRMR2D (1-based IA, JA, IB, JB;
 * 9-integer descriptors; DESCx(CTXT_) = -1 on processes outside a grid). Unlike ScaLAPACK,
 * bad input never terminates the program: every process of ICTXT prints one line
 *   "{ redist } PDGEMR2D: argument 6 (DESCA(MB_)) = 0: block size must be >= 1"
 * to stderr, the call returns and B is left untouched. redist_scalapack_last_status()
 * tells a program whether the last call on this thread succeeded.
 *
 * The names declared here carry a "redist_" prefix so that a program can call redist and
 * ScaLAPACK side by side. Linking the library redist_scalapack ahead of ScaLAPACK also
 * provides the unprefixed names (pdgemr2d_, PDGEMR2D, Cpdgemr2d, ...), which route
 * existing programs -- and ScaLAPACK's own internal calls -- to redist.
 *
 * All calls are collective over every process of ICTXT.
 */
#ifndef REDIST_SCALAPACK_H
#define REDIST_SCALAPACK_H

#ifdef __cplusplus
extern "C" {
#endif

/** The BLACS / Fortran default integer (32-bit unless built with REDIST_ILP64). */
#ifdef REDIST_ILP64
typedef long long redist_int;
#else
typedef int redist_int;
#endif

struct redist_options;
struct redist_plan_s;

/**
 * Declares, for the type letter @p x (s, d, c, z, i) and element type @p T, the Fortran-style
 * entries redist_pxgemr2d_ and redist_pxtrmr2d_ (arguments by reference, as ScaLAPACK's
 * PxGEMR2D and PxTRMR2D) and the C-style redist_Cpxgemr2d and redist_Cpxtrmr2d (as
 * ScaLAPACK's Cpxgemr2d and Cpxtrmr2d). Declared for s (float), d (double), c and z (void:
 * pairs of float and double) and i (redist_int).
 */
#define REDIST_DECLARE_GEMR(x, T)                                                                  \
  void redist_p##x##gemr2d_(const redist_int *m, const redist_int *n, const T *a,                  \
                            const redist_int *ia, const redist_int *ja, const redist_int *desca,   \
                            T *b, const redist_int *ib, const redist_int *jb,                      \
                            const redist_int *descb, const redist_int *ictxt);                     \
  void redist_p##x##trmr2d_(const char *uplo, const char *diag, const redist_int *m,               \
                            const redist_int *n, const T *a, const redist_int *ia,                 \
                            const redist_int *ja, const redist_int *desca, T *b,                   \
                            const redist_int *ib, const redist_int *jb, const redist_int *descb,   \
                            const redist_int *ictxt);                                              \
  void redist_Cp##x##gemr2d(redist_int m, redist_int n, T *a, redist_int ia, redist_int ja,        \
                            redist_int *desca, T *b, redist_int ib, redist_int jb,                 \
                            redist_int *descb, redist_int ictxt);                                  \
  void redist_Cp##x##trmr2d(const char *uplo, const char *diag, redist_int m, redist_int n, T *a,  \
                            redist_int ia, redist_int ja, redist_int *desca, T *b, redist_int ib,  \
                            redist_int jb, redist_int *descb, redist_int ictxt);

REDIST_DECLARE_GEMR(s, float)
REDIST_DECLARE_GEMR(d, double)
REDIST_DECLARE_GEMR(c, void) /* complex float: pairs of float */
REDIST_DECLARE_GEMR(z, void) /* complex double: pairs of double */
REDIST_DECLARE_GEMR(i, redist_int)

#undef REDIST_DECLARE_GEMR

/**
 * PBLAS's transposes and additions, sub(C) := beta sub(C) + alpha op(sub(A)), with PBLAS's
 * arguments (PxTRAN / PxTRANU / PxTRANC: op = transpose / transpose / conjugate transpose;
 * PxGEADD: TRANS 'N', 'T', 'C'; PxTRADD: UPLO 'U' or 'L' of sub(C), the diagonal through
 * its top-left corner). ALPHA and BETA have the element type (pairs for c and z). The
 * context is DESCC(CTXT_); results are bit for bit PBLAS's (docs/guide.md). Errors as for
 * the copies: reported on every process, C untouched, no abort.
 * This macro declares, for the type letter @p x (s, d, c, z) and element type @p T,
 * redist_pxgeadd_ and redist_pxtradd_ (Fortran-style, arguments by reference).
 */
#define REDIST_DECLARE_OPERATIONS(x, T)                                                            \
  void redist_p##x##geadd_(const char *trans, const redist_int *m, const redist_int *n,            \
                           const T *alpha, const T *a, const redist_int *ia, const redist_int *ja, \
                           const redist_int *desca, const T *beta, T *c, const redist_int *ic,     \
                           const redist_int *jc, const redist_int *descc);                         \
  void redist_p##x##tradd_(const char *uplo, const char *trans, const redist_int *m,               \
                           const redist_int *n, const T *alpha, const T *a, const redist_int *ia,  \
                           const redist_int *ja, const redist_int *desca, const T *beta, T *c,     \
                           const redist_int *ic, const redist_int *jc, const redist_int *descc);
/** Declares redist_<name>_ for PBLAS's @p name (pstran, pdtran, pctranu, pztranu, pctranc,
 * pztranc) with element type @p T: sub(C) := beta sub(C) + alpha op(sub(A)). */
#define REDIST_DECLARE_TRAN(name, T)                                                               \
  void redist_##name##_(const redist_int *m, const redist_int *n, const T *alpha, const T *a,      \
                        const redist_int *ia, const redist_int *ja, const redist_int *desca,       \
                        const T *beta, T *c, const redist_int *ic, const redist_int *jc,           \
                        const redist_int *descc);

REDIST_DECLARE_OPERATIONS(s, float)
REDIST_DECLARE_OPERATIONS(d, double)
REDIST_DECLARE_OPERATIONS(c, void)
REDIST_DECLARE_OPERATIONS(z, void)
REDIST_DECLARE_TRAN(pstran, float)
REDIST_DECLARE_TRAN(pdtran, double)
REDIST_DECLARE_TRAN(pctranu, void)
REDIST_DECLARE_TRAN(pztranu, void)
REDIST_DECLARE_TRAN(pctranc, void)
REDIST_DECLARE_TRAN(pztranc, void)

#undef REDIST_DECLARE_OPERATIONS
#undef REDIST_DECLARE_TRAN

/** Status (redist_status from redist.h) of the last ScaLAPACK-style call on this thread. */
int redist_scalapack_last_status(void);

/** Number of ScaLAPACK-style calls redist has served in this process (for tests). */
long long redist_scalapack_call_count(void);

/**
 * Create a plan of the C API (redist.h: execute with redist_plan_execute, free with
 * redist_plan_destroy) from ScaLAPACK descriptors and a BLACS context, as PxGEMR2D
 * (region REDIST_REGION_FULL) or PxTRMR2D take them: 1-based IA, JA, IB, JB; DESCx(CTXT_) = -1
 * on processes outside x's grid; descriptors of 9 integers (DTYPE_ = 1) or PBLAS's 11
 * (DTYPE_ = 2, first blocks IMB_, INB_: the plan is then redist_plan_create_ext's).
 * Collective over every process of ICTXT. type is a redist_type, region a redist_region,
 * options NULL for the defaults.
 * Bad input gives an error status on every process of ICTXT, never a crash or a hang: the
 * process that saw it its own message (redist_last_error()), the others REDIST_ERR_REMOTE
 * naming the lowest such rank of ICTXT; arguments that differ between processes give
 * REDIST_ERR_MISMATCH everywhere. Checked: descriptor contexts that are not BLACS contexts,
 * DTYPE_, IMB_ and INB_, and everything redist_plan_create_opt checks on the layouts (block sizes,
 * sources, window, LLD on every process, options). An ICTXT that is not a BLACS context of a
 * process is an error on that process only: there is no communicator to tell the others, which then
 * wait for it, as in the PxGEMR2D entries.
 */
int redist_plan_create_scalapack(redist_int m, redist_int n, int type, const redist_int *desca,
                                 redist_int ia, redist_int ja, const redist_int *descb,
                                 redist_int ib, redist_int jb, redist_int ictxt, int region,
                                 int unit_diag, const struct redist_options *options,
                                 struct redist_plan_s **plan);

/** Free every cached plan and communicator of the ScaLAPACK-style entries. Local; safe to
 * call at any time between calls. */
void redist_scalapack_clear_cache(void);

#ifdef __cplusplus
}
#endif

#endif /* REDIST_SCALAPACK_H */
