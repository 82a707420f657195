/**
 * @file redist.h
 * @brief redist C API: copy a (sub)matrix between two 2-D block-cyclic layouts over MPI.
 *
 * Conventions
 * - Indices in this API are 0-based (window offsets @c i, @c j, grid coordinates, source
 *   processes). The ScaLAPACK-compatible entry points (redist_scalapack.h) keep ScaLAPACK's
 *   1-based IA/JA/IB/JB.
 * - Local arrays are column-major with leading dimension @c lld (in elements); layouts of
 *   redist_layout_ext may be row-major and have first blocks of their own.
 * - Every function returns a status (REDIST_SUCCESS or an error code); after an error,
 *   redist_last_error() returns a message naming the call, the argument and the reason.
 *   The message is thread-local.
 * - A plan is created collectively on a communicator, executed collectively any number of
 *   times, and destroyed collectively. One plan must not be executed by two threads at once;
 *   distinct plans on distinct communicators may.
 */
#ifndef REDIST_H
#define REDIST_H

#include <mpi.h>
#include <stddef.h>
#include <stdint.h>

/**
 * @defgroup version Version
 * The version of these headers. redist_get_version() returns the version of the library a
 * program runs with, which may differ (a newer libredist.so.0 under an older program).
 * @{
 */
#define REDIST_VERSION_MAJOR 0 /**< incremented with an incompatible ABI change */
#define REDIST_VERSION_MINOR 1 /**< incremented when functions or constants are added */
#define REDIST_VERSION_PATCH 0 /**< incremented with fixes that add nothing */
#define REDIST_VERSION "0.1.0" /**< "MAJOR.MINOR.PATCH" */
/** One integer that grows with the version, for preprocessor tests:
 *  MAJOR * 10000 + MINOR * 100 + PATCH (0.1.0 is 100). */
#define REDIST_VERSION_NUMBER                                                                      \
  (REDIST_VERSION_MAJOR * 10000 + REDIST_VERSION_MINOR * 100 + REDIST_VERSION_PATCH)
/** @} */

#ifdef __cplusplus
extern "C" {
#endif

/** Status codes returned by every function of the C API. */
typedef enum redist_status {
  REDIST_SUCCESS = 0,
  REDIST_ERR_ARGUMENT = 1,  /**< an argument is invalid on this process */
  REDIST_ERR_REMOTE = 2,    /**< an argument is invalid on another process */
  REDIST_ERR_MISMATCH = 3,  /**< processes passed different values for a global argument */
  REDIST_ERR_MPI = 4,       /**< an MPI call failed */
  REDIST_ERR_NO_MEMORY = 5, /**< an allocation failed */
  REDIST_ERR_INTERNAL = 6   /**< a bug in redist: please report it */
} redist_status;

/** Element types; only the size matters for a copy. */
typedef enum redist_type {
  REDIST_FLOAT = 0,          /**< 4 bytes */
  REDIST_DOUBLE = 1,         /**< 8 bytes */
  REDIST_COMPLEX_FLOAT = 2,  /**< 8 bytes */
  REDIST_COMPLEX_DOUBLE = 3, /**< 16 bytes */
  REDIST_INT32 = 4,          /**< 4 bytes */
  REDIST_INT64 = 5           /**< 8 bytes */
} redist_type;

/**
 * One 2-D block-cyclic layout as seen from the calling process, with the window that is
 * copied. Every process of the plan's communicator passes the same values for every field
 * except @c lld, which is this process's local leading dimension (ignored on processes
 * outside the grid).
 */
typedef struct redist_layout {
  int64_t m;        /**< global rows of the whole matrix (M_) */
  int64_t n;        /**< global columns of the whole matrix (N_) */
  int64_t mb;       /**< block rows (MB_), >= 1 */
  int64_t nb;       /**< block columns (NB_), >= 1 */
  int nprow;        /**< process grid rows, >= 1 */
  int npcol;        /**< process grid columns, >= 1 */
  int rsrc;         /**< grid row owning the first block, 0-based (RSRC_); -1: every grid row
                         holds all the rows at their global indices (replicated, as PBLAS's
                         RSRC_ = -1; redist_plan_create and _op, _ext, and their batches) */
  int csrc;         /**< grid column owning the first block, 0-based (CSRC_); -1: replicated
                         over the grid columns likewise */
  const int *ranks; /**< nprow*npcol ranks in the communicator; grid position (pr, pc)
                         is ranks[pr + pc*nprow] (column-major, like BLACS_GRIDMAP) */
  int64_t i;        /**< 0-based global row where the copied window starts */
  int64_t j;        /**< 0-based global column where the copied window starts */
  int64_t lld;      /**< local leading dimension on this process, >= max(1, local rows) */
} redist_layout;

/** Which part of the m x n window is copied. */
typedef enum redist_region {
  REDIST_REGION_FULL = 0,  /**< the whole window (PxGEMR2D) */
  REDIST_REGION_UPPER = 1, /**< upper trapezoid, ScaLAPACK PxTRMR2D convention, UPLO='U' */
  REDIST_REGION_LOWER = 2  /**< lower trapezoid, UPLO='L' */
} redist_region;

/** A plan: everything about one redistribution that does not depend on the data (opaque). */
typedef struct redist_plan_s *redist_plan;

/**
 * Communication schedules (see docs/schedules.md). The names in parentheses are the values of
 * REDIST_SCHEDULE for the ScaLAPACK entry points.
 */
typedef enum redist_schedule {
  REDIST_SCHEDULE_AUTO = 0,        /**< (auto) chosen by the cost model */
  REDIST_SCHEDULE_ALL_AT_ONCE = 1, /**< (all-at-once) every message posted at once */
  REDIST_SCHEDULE_CATERPILLAR = 2, /**< (caterpillar) ScaLAPACK's max(P,Q) steps */
  REDIST_SCHEDULE_STEPWISE = 3,    /**< (stepwise) fewest steps, Desprez et al. */
  REDIST_SCHEDULE_GREEDY = 4,      /**< (greedy) maximum-weight matchings, Desprez et al. */
  REDIST_SCHEDULE_CIRCULANT = 5,   /**< (circulant) Park et al., CYCLIC(x) -> CYCLIC(kx) */
  REDIST_SCHEDULE_GGP = 6,         /**< (ggp) at most k transfers per step, Jeannot & Wagner */
  REDIST_SCHEDULE_OGGP = 7,        /**< (oggp) GGP with bottleneck matchings */
  REDIST_SCHEDULE_MULTIPHASE = 8   /**< (multiphase) two phases through an intermediate
                                        CYCLIC(lcm) / CYCLIC(gcd) layout, Kaushik et al. 1995; one
                                        phase when none applies (get_info says which runs) */
} redist_schedule;

/** Plan options. Initialise with redist_options_init, then set what you need. */
typedef struct redist_options {
  int schedule;       /**< a redist_schedule; default REDIST_SCHEDULE_AUTO */
  int max_concurrent; /**< at most this many transfers in one step; 0 = no limit */
  int64_t max_memory; /**< cap on the extra buffer bytes per process; 0 = no cap */
  double alpha;       /**< cost model: seconds per message; 0 = built-in default */
  double beta;        /**< cost model: seconds per byte; 0 = built-in default */
} redist_options;

/** Set @p options to the defaults (automatic schedule, no limits, default cost model). */
void redist_options_init(redist_options *options);

/**
 * Create a plan that copies the m x n window of layout @p a onto the window of layout @p b.
 * Collective over @p comm. The plan runs on its own duplicate of the communicator and does
 * not keep @p a / @p b; it decides which way each message travels (sent through MPI, or,
 * between processes of one node, read in a single copy or mapped; docs/performance.md).
 * @param comm       the communicator; every process of it calls.
 * @param m          rows of the window copied.
 * @param n          columns of the window copied.
 * @param type       the element type.
 * @param a          the source layout and the window's start in it.
 * @param b          the destination layout and the window's start in it.
 * @param region     which part of the window to copy (trapezoids follow PxTRMR2D).
 * @param unit_diag  for trapezoids: non-zero means the diagonal is not copied (DIAG='U').
 * @param plan       receives the plan.
 * @pre every process passes the same m, n, type, region, unit_diag and layouts (but lld).
 * @return REDIST_SUCCESS, or an error status on every process (then *plan is NULL).
 */
int redist_plan_create(MPI_Comm comm, int64_t m, int64_t n, redist_type type,
                       const redist_layout *a, const redist_layout *b, redist_region region,
                       int unit_diag, redist_plan *plan);

/**
 * redist_plan_create with options (NULL = defaults). Every process passes the same options.
 * An unknown schedule, a negative limit or a schedule that cannot honour the limits is an
 * error (REDIST_ERR_ARGUMENT), never a silent default.
 */
int redist_plan_create_opt(MPI_Comm comm, int64_t m, int64_t n, redist_type type,
                           const redist_layout *a, const redist_layout *b, redist_region region,
                           int unit_diag, const redist_options *options, redist_plan *plan);

/**
 * Measure the cost model on @p comm by ping-pong between ranks 0 and 1 (collective; every
 * process gets the same values). With one process, returns the defaults.
 */
int redist_calibrate(MPI_Comm comm, double *alpha, double *beta);

/**
 * The two-level cost model (docs/across-nodes.md): start-up and per-byte time between two ranks of
 * one node and between ranks of two nodes, nodes as MPI groups them (MPI_Comm_split_type with
 * MPI_COMM_TYPE_SHARED). The inter-node beta is the time per byte of one node's network link,
 * which the node's ranks share.
 */
typedef struct redist_calibration {
  double intra_alpha; /**< seconds per message inside a node; the default if !has_intra */
  double intra_beta;  /**< seconds per byte inside a node; the default if !has_intra */
  double inter_alpha; /**< seconds per message between nodes; 0 if !has_inter */
  double inter_beta;  /**< seconds per byte of a node's link; 0 if !has_inter */
  int has_intra;      /**< non-zero: two ranks of @p comm share a node */
  int has_inter;      /**< non-zero: two ranks of @p comm are on different nodes */
} redist_calibration;

/**
 * Measure both levels on @p comm by ping-pong: inside a node between the lowest rank with a
 * second rank on its node and that rank, across nodes between rank 0 and the lowest rank on
 * another node (collective; every process gets the same values). A level without such a pair
 * is reported absent. redist_calibrate measures one level between ranks 0 and 1.
 */
int redist_calibrate_nodes(MPI_Comm comm, redist_calibration *out);

/**
 * redist_plan_create_opt with the two-level cost model of @p levels (NULL: as
 * redist_plan_create_opt). Where the plan's ranks are on more than one node, the automatic
 * schedule is chosen by the two-level model: messages inside a node cost intra_alpha,
 * intra_beta (if has_intra, else options->alpha, beta), messages between nodes inter_alpha,
 * inter_beta (if has_inter, else the built-in inter-node defaults). Without levels the
 * inter-node level is the defaults. A separate function, not fields appended to
 * redist_options: that struct carries no size or version. Every process passes the same
 * levels.
 */
int redist_plan_create_calibrated(MPI_Comm comm, int64_t m, int64_t n, redist_type type,
                                  const redist_layout *a, const redist_layout *b,
                                  redist_region region, int unit_diag,
                                  const redist_options *options, const redist_calibration *levels,
                                  redist_plan *plan);

/** The REDIST_SCHEDULE name of a schedule ("auto", "stepwise", ...), or NULL if unknown. */
const char *redist_schedule_name(int schedule);

/**
 * Execute the plan: copy from local array @p a to local array @p b. Collective over the
 * plan's communicator. @p a may be NULL on processes that own no element of the source
 * window, @p b likewise for the destination. Elements of b outside the window (and outside
 * the trapezoid) are left untouched.
 * After an execution that failed (REDIST_ERR_MPI on some process), the plan stays valid: the
 * next redist_plan_execute makes it anew on every process, on a fresh duplicate of the
 * communicator (a message of the failed execution cannot be taken for a later one's), before
 * any data moves; if that fails (REDIST_ERR_NO_MEMORY here, REDIST_ERR_REMOTE elsewhere),
 * destroy the plan.
 */
int redist_plan_execute(redist_plan plan, const void *a, void *b);

/** op(A) of redist_plan_create_op: A, A transposed, or A conjugated and transposed. */
typedef enum redist_op {
  REDIST_OP_N = 0, /**< B := alpha A + beta B (PxGEADD TRANS='N') */
  REDIST_OP_T = 1, /**< B := alpha A^T + beta B (PxTRAN, PxTRANU, TRANS='T') */
  REDIST_OP_C = 2  /**< B := alpha A^H + beta B (PxTRANC, TRANS='C'; = T for real types) */
} redist_op;

/**
 * Create a plan for B := alpha op(A) + beta B on the m x n window of layout @p b (PBLAS
 * PxTRAN / PxGEADD / PxTRADD). For REDIST_OP_T and REDIST_OP_C, A's window (from a->i, a->j)
 * is n x m. @p region: the whole window, or its upper (i <= j) or lower (i >= j) trapezoid,
 * diagonal included and running through the window's top-left corner (PxTRADD; unlike the
 * copy's PxTRMR2D convention). alpha and beta are given per execution
 * (redist_plan_execute_op). Integer types allow only alpha = 1, beta = 0 (a copy or a
 * transpose). Collective, as redist_plan_create_opt (@p options may be NULL).
 */
int redist_plan_create_op(MPI_Comm comm, redist_op op, int64_t m, int64_t n, redist_type type,
                          const redist_layout *a, const redist_layout *b, redist_region region,
                          const redist_options *options, redist_plan *plan);

/** The local storage order of a 2-D layout's local array (redist_layout_ext::order). */
typedef enum redist_order {
  REDIST_ORDER_COLUMN_MAJOR = 0, /**< local element (r, c) at r + c*lld (as redist_layout) */
  REDIST_ORDER_ROW_MAJOR = 1     /**< local element (r, c) at r*lld + c (C's order) */
} redist_order;

/**
 * A 2-D block-cyclic layout with a first block of its own and a local storage order (PBLAS's
 * 11-integer descriptors, DTYPE_ = 2, and C's row-major local arrays). A separate struct, not
 * fields appended to redist_layout: that struct carries no size or version. Every process
 * passes the same values for every field except layout.lld.
 *
 * Along the rows, the first block row holds @c imb rows (global rows 0..imb-1) on grid row
 * layout.rsrc; the following blocks of layout.mb rows go round-robin from grid row rsrc+1
 * (PBLAS's IMB_; likewise @c inb, layout.nb and layout.csrc along the columns). imb may be
 * below, equal to or above mb; @c imb = mb (or 0) is redist_layout's distribution.
 * Row-major (REDIST_ORDER_ROW_MAJOR): local element (r, c) is at r*lld + c, and layout.lld
 * must be >= max(1, local columns); column-major: at r + c*lld, lld >= max(1, local rows).
 */
typedef struct redist_layout_ext {
  redist_layout layout; /**< the layout and window as redist_layout has them */
  int64_t imb;          /**< rows of the first block row (IMB_), >= 1; 0 = layout.mb */
  int64_t inb;          /**< columns of the first block column (INB_), >= 1; 0 = layout.nb */
  int order;            /**< a redist_order: the local arrays' storage order on this layout */
} redist_layout_ext;

/**
 * redist_plan_create_opt on layouts with first blocks or row-major local arrays
 * (redist_layout_ext). Everything else is as redist_plan_create_opt (@p options may be NULL);
 * errors name the fields as "a->layout.lld", "b->imb", "b->order". The plan is executed,
 * split, reported and destroyed as any other.
 */
int redist_plan_create_ext(MPI_Comm comm, int64_t m, int64_t n, redist_type type,
                           const redist_layout_ext *a, const redist_layout_ext *b,
                           redist_region region, int unit_diag, const redist_options *options,
                           redist_plan *plan);

/**
 * redist_plan_create_op on layouts with first blocks or row-major local arrays
 * (redist_layout_ext): B := alpha op(A) + beta B, executed by redist_plan_execute_op.
 */
int redist_plan_create_op_ext(MPI_Comm comm, redist_op op, int64_t m, int64_t n, redist_type type,
                              const redist_layout_ext *a, const redist_layout_ext *b,
                              redist_region region, const redist_options *options,
                              redist_plan *plan);

/** Where one of this process's blocks of a block grid lives in its local array. */
typedef struct redist_grid_block {
  int64_t block_row; /**< the block's row in the grid, 0 .. block_rows-1 */
  int64_t block_col; /**< the block's column, 0 .. block_cols-1 */
  int64_t offset;    /**< elements from the local array's start to the block's first element */
  int64_t ld;        /**< leading dimension: elements between the block's columns
                          (column-major) or rows (row-major), >= max(1, its rows / columns) */
} redist_grid_block;

/**
 * An arbitrary block grid (docs/guide.md, "Block grids"; COSTA's custom layouts): the global
 * rows cut at row_splits, the columns at col_splits, any process owning any block, and each
 * process keeping each of its blocks anywhere in its local array with a leading dimension of
 * its own. Blocks may be empty (equal splits). Every process passes the same splits, owners,
 * order and window; `local` is this process's own.
 */
typedef struct redist_block_grid {
  int64_t m;                      /**< global rows of the whole matrix: row_splits[block_rows] */
  int64_t n;                      /**< global columns: col_splits[block_cols] */
  int64_t block_rows;             /**< blocks down, >= 1 */
  int64_t block_cols;             /**< blocks across, >= 1 */
  const int64_t *row_splits;      /**< block_rows + 1 offsets: 0 = row_splits[0] <= ... <=
                                       row_splits[block_rows] = the global rows */
  const int64_t *col_splits;      /**< block_cols + 1 offsets, likewise for the columns */
  const int *owners;              /**< block_rows * block_cols ranks in the communicator; block
                                       (r, c) is owners[r + c * block_rows] (column-major, like
                                       redist_layout::ranks). Read only while the plan is made. */
  int row_major;                  /**< 0: every block column-major; 1: row-major */
  int64_t local_count;            /**< this process's blocks: how many are listed in `local` */
  const redist_grid_block *local; /**< each block this process owns, once (NULL if none) */
  int64_t i;                      /**< 0-based global row where the copied window starts */
  int64_t j;                      /**< 0-based global column where the copied window starts */
} redist_block_grid;

/** Which layout a redist_any_layout holds. */
typedef enum redist_layout_kind {
  REDIST_LAYOUT_BLOCK_CYCLIC = 0, /**< a 2-D block-cyclic redist_layout_ext */
  REDIST_LAYOUT_BLOCK_GRID = 1    /**< a redist_block_grid */
} redist_layout_kind;

/** One side of redist_grid_plan_create: a block grid or a 2-D block-cyclic layout. */
typedef struct redist_any_layout {
  redist_layout_kind kind;         /**< which of the two this side is */
  const redist_layout_ext *cyclic; /**< REDIST_LAYOUT_BLOCK_CYCLIC: the layout, with first
                                       blocks and order if any (else unused) */
  const redist_block_grid *grid;   /**< REDIST_LAYOUT_BLOCK_GRID: the grid (else unused) */
} redist_any_layout;

/**
 * Create a plan for B := alpha op(A) + beta B on the m x n window of @p b, where each side is
 * a block grid or a 2-D block-cyclic layout and at least one is a block grid. For REDIST_OP_T
 * and REDIST_OP_C, A's window is n x m. The plan is executed as a plan of
 * redist_plan_create_op: redist_plan_execute (a copy, op(A) without conjugation),
 * redist_plan_execute_op, their _begin / _end forms; redist_plan_get_info and
 * redist_plan_destroy as any plan. The local arrays passed to an execution hold this
 * process's blocks at their offsets. Messages are packed by their senders, all at once
 * (options->schedule must be REDIST_SCHEDULE_AUTO or REDIST_SCHEDULE_ALL_AT_ONCE). Planning
 * takes time and memory in this process's blocks and its peers; the owners are read once.
 * Collective over @p comm; every process returns the same status: the argument error where an
 * argument is wrong (splits not increasing, an owner outside the communicator, a local block
 * listed twice, not owned by this process, overlapping another or too far for 64-bit offsets,
 * an ld below the block's rows / columns, a window outside the matrix, ...), REDIST_ERR_REMOTE
 * on the others, REDIST_ERR_MISMATCH when the processes disagree on m, n, op, type, options,
 * splits, owners, orders, windows or the block-cyclic side's global fields.
 */
int redist_grid_plan_create(MPI_Comm comm, redist_op op, int64_t m, int64_t n, redist_type type,
                            const redist_any_layout *a, const redist_any_layout *b,
                            const redist_options *options, redist_plan *plan);

/** HPF's GEN_BLOCK in redist_darray::distribs: an explicit extent per process. */
#define REDIST_DISTRIBUTE_GEN_BLOCK 4101

/**
 * An N-dimensional distributed array (docs/nd.md), in MPI_Type_create_darray's terms: the
 * same elements on the same processes in the same local order as MPI's darray type.
 */
typedef struct redist_darray {
  int ndims;                        /**< 1..7 */
  const int64_t *gsizes;            /**< global extents */
  const int *distribs;              /**< MPI_DISTRIBUTE_BLOCK / _CYCLIC / _NONE, or
                                         REDIST_DISTRIBUTE_GEN_BLOCK */
  const int64_t *dargs;             /**< block per dimension, or MPI_DISTRIBUTE_DFLT_DARG */
  const int64_t *const *gen_blocks; /**< GEN_BLOCK dimensions: psizes[d] extents; may be NULL
                                         otherwise */
  const int *psizes;                /**< process grid extents */
  int order;                        /**< MPI_ORDER_C or MPI_ORDER_FORTRAN: local storage order */
  const int *ranks;                 /**< rank of each grid position (row-major over the grid,
                                         as in MPI_Type_create_darray); NULL = position p is
                                         rank p */
  const int64_t *starts;            /**< the window's first index per dimension (0-based);
                                         NULL = the whole array */
  const int64_t *subsizes;          /**< the window's extents; NULL = the whole array */
  const int64_t *local_extents;     /**< this process's allocated extents (>= its local
                                         counts); NULL = dense */
} redist_darray;

/**
 * A plan copying the window of N-d array @p a onto the window of @p b (same extents).
 * Collective over @p comm; executed by redist_plan_execute, reported by redist_plan_get_info,
 * destroyed by redist_plan_destroy. Every field is checked on every process (an error names
 * the field and dimension, on every process; *plan is then NULL). @p options may be NULL
 * (the defaults); every schedule, max_concurrent, max_memory and the cost model's alpha and
 * beta mean what they mean for 2-D plans (redist_plan_create_opt); REDIST_SCHEDULE_MULTIPHASE
 * runs two phases through an N-d intermediate layout (docs/nd.md); limits no schedule can
 * honour are REDIST_ERR_ARGUMENT on every process.
 * Between processes of one node messages are read in a single copy as for 2-D plans
 * (REDIST_SINGLE_COPY applies; docs/nd.md).
 */
int redist_nd_plan_create(MPI_Comm comm, redist_type type, const redist_darray *a,
                          const redist_darray *b, const redist_options *options, redist_plan *plan);
/**
 * redist_nd_plan_create with an axis permutation: B's dimension d holds A's dimension
 * perm[d] (a permutation of 0..ndims-1; NULL = the identity). A's window extent along
 * perm[d] must equal B's along d.
 */
int redist_nd_plan_create_perm(MPI_Comm comm, redist_type type, const redist_darray *a,
                               const redist_darray *b, const int *perm,
                               const redist_options *options, redist_plan *plan);

/**
 * Execute a plan of redist_plan_create_op: B := alpha op(A) + beta B, bit for bit as PBLAS
 * (docs/guide.md). @p alpha and @p beta point to one value of the plan's element type
 * (two floats / doubles for complex types) and must be the same on every process. With
 * beta = 0, B is not read (NaN or Inf there never reaches the result); with alpha = 0, A's
 * values do not matter. A plan of redist_plan_create may not be executed with this call;
 * redist_plan_execute on a plan of redist_plan_create_op is alpha = 1, beta = 0.
 */
int redist_plan_execute_op(redist_plan plan, const void *alpha, const void *a, const void *beta,
                           void *b);

/**
 * Split execution (docs/guide.md, "Split execution"): redist_plan_execute_begin starts
 * redist_plan_execute(plan, a, b), redist_plan_execute_end completes it, and between them the
 * caller may compute on other data. Until the end returns, @p a must not change and @p b must
 * not be read or written. Both are collective, in the same order on every process. Argument
 * errors are reported by the begin (on every process, nothing posted, b untouched); transfer
 * failures by the end, as redist_plan_execute reports them. All-at-once plans post every
 * message and copy the process-local part in the begin; stepwise and two-phase plans only
 * check in the begin and move everything in the end. A plan has at most one execution in
 * flight: a begin, redist_plan_execute or redist_plan_execute_op while one is in flight, or an
 * end with none, is REDIST_ERR_ARGUMENT (on every process, without a collective) and leaves
 * the execution in flight as it was. redist_plan_destroy completes an execution in flight.
 * Under REDIST_PROGRESS=thread (read when the plan is made; needs MPI_THREAD_MULTIPLE) an
 * all-at-once begin with messages to other processes leaves a thread entering MPI every
 * 200 us until the end, so that messages between nodes move while the caller computes.
 */
int redist_plan_execute_begin(redist_plan plan, const void *a, void *b);
/** The begin of redist_plan_execute_op (alpha and beta are read in the begin). */
int redist_plan_execute_op_begin(redist_plan plan, const void *alpha, const void *a,
                                 const void *beta, void *b);
/** Complete the execution begun by redist_plan_execute_begin / _op_begin / _batch_begin. */
int redist_plan_execute_end(redist_plan plan);

/**
 * One operation of a batch (redist_plan_create_batch): B := alpha op(A) + beta B on the m x n
 * window of @p b, as redist_plan_create_op describes it (its own op, type, layouts and
 * region; A's window is n x m for REDIST_OP_T and REDIST_OP_C).
 */
typedef struct redist_batch_op {
  redist_op op;           /**< op(A): A, A^T or A^H */
  int64_t m;              /**< rows of the window of b */
  int64_t n;              /**< columns of the window of b */
  redist_type type;       /**< the element type of A and B */
  const redist_layout *a; /**< A's layout and window start */
  const redist_layout *b; /**< B's layout and window start */
  redist_region region;   /**< the whole window or a trapezoid, as redist_plan_create_op */
} redist_batch_op;

/**
 * Create one plan for @p count operations moved together (docs/guide.md, "Batches"): each
 * execution sends one message per pair of processes, carrying the pieces of all the
 * operations between them, instead of one per operation. Collective over @p comm; every
 * process passes the same count and the same fields of every operation (but lld), each
 * checked as redist_plan_create_op checks it: an error names the operation
 * ("redist_plan_create_batch: argument ops[3].m = -1: ..."), and every other process returns
 * REDIST_ERR_REMOTE naming the same operation ("ops[3]: an argument is invalid on rank 1").
 * @p options may be NULL; a batch runs all at once (REDIST_SCHEDULE_AUTO or
 * REDIST_SCHEDULE_ALL_AT_ONCE, no max_concurrent, no max_memory: anything else is
 * REDIST_ERR_ARGUMENT). Its messages are packed by their sender: sent through MPI, or, between
 * processes of one node where that is cheaper, unpacked by the receiver from the sender's
 * packed buffer mapped into its memory (REDIST_SINGLE_COPY applies). Executed by
 * redist_plan_execute_batch (redist_plan_execute and _op refuse it), reported by
 * redist_plan_get_info (the combined messages: send_peers, bytes_sent, ...), destroyed by
 * redist_plan_destroy.
 */
int redist_plan_create_batch(MPI_Comm comm, int count, const redist_batch_op *ops,
                             const redist_options *options, redist_plan *plan);

/** One operation of redist_plan_create_batch_ext: redist_batch_op on redist_layout_ext. */
typedef struct redist_batch_op_ext {
  redist_op op;               /**< op(A): A, A^T or A^H */
  int64_t m;                  /**< rows of the window of b */
  int64_t n;                  /**< columns of the window of b */
  redist_type type;           /**< the element type of A and B */
  const redist_layout_ext *a; /**< A's layout and window start */
  const redist_layout_ext *b; /**< B's layout and window start */
  redist_region region;       /**< the whole window or a trapezoid, as redist_plan_create_op */
} redist_batch_op_ext;

/**
 * redist_plan_create_batch on layouts with first blocks or row-major local arrays: each
 * operation checked as redist_plan_create_op_ext checks it ("ops[3].b->imb"), executed by
 * redist_plan_execute_batch.
 */
int redist_plan_create_batch_ext(MPI_Comm comm, int count, const redist_batch_op_ext *ops,
                                 const redist_options *options, redist_plan *plan);

/**
 * One operation of redist_grid_batch_create: B := alpha op(A) + beta B on the m x n window of
 * @p b, as redist_grid_plan_create describes it (A's window is n x m for REDIST_OP_T and
 * REDIST_OP_C); each side a block grid or a 2-D block-cyclic layout, both block-cyclic allowed.
 */
typedef struct redist_grid_batch_op {
  redist_op op;               /**< op(A): A, A^T or A^H */
  int64_t m;                  /**< rows of the window of b */
  int64_t n;                  /**< columns of the window of b */
  redist_type type;           /**< the element type of A and B */
  const redist_any_layout *a; /**< A's block grid or block-cyclic layout, and window start */
  const redist_any_layout *b; /**< B's block grid or block-cyclic layout, and window start */
} redist_grid_batch_op;

/**
 * Create one plan for @p count operations on block grids and 2-D block-cyclic layouts moved
 * together (docs/guide.md, "Block grids"): each execution sends one message per pair of
 * processes, carrying the pieces of all the operations between them. Each operation is checked
 * as redist_grid_plan_create checks it, except that both its sides may be block-cyclic; an
 * error names the operation ("redist_grid_batch_create: argument ops[2].a->grid->row_splits[3]
 * = ..."), and every other process returns REDIST_ERR_REMOTE naming the same operation
 * ("ops[2]: an argument is invalid on rank 1"); REDIST_ERR_MISMATCH when the processes disagree
 * on count or on an operation's global fields (named: "ops[2]: processes passed different
 * ..."). @p options may be NULL; the plan runs all at once (REDIST_SCHEDULE_AUTO or
 * REDIST_SCHEDULE_ALL_AT_ONCE). Planning takes time and memory in this process's blocks and
 * peers, per operation. Executed by redist_plan_execute_batch or redist_plan_execute_batch_begin
 * and redist_plan_execute_end (alphas[k], betas[k] per operation; the local arrays hold this
 * process's blocks at their offsets), reported by redist_plan_get_info, destroyed by
 * redist_plan_destroy. Collective over @p comm.
 */
int redist_grid_batch_create(MPI_Comm comm, int count, const redist_grid_batch_op *ops,
                             const redist_options *options, redist_plan *plan);

/**
 * Execute a batch plan: for every operation k, B_k := alphas[k] op_k(A_k) + betas[k] B_k, bit
 * for bit as redist_plan_execute_op would compute it alone. @p a and @p b hold one local array
 * per operation; a[k] (b[k]) may be NULL on a process that owns no element of operation k's
 * source (destination) window, and @p a (@p b) itself NULL where that holds for every
 * operation. alphas[k] and betas[k] point to one value of operation k's element type (the same
 * on every process); @p alphas NULL means alpha = 1 for every operation, @p betas NULL beta = 0
 * (a batch of copies and transposes). Integer types allow only alpha = 1, beta = 0. Errors name
 * the operation (a[3], betas[3]; elsewhere "ops[3]: an argument is invalid on rank r"), on
 * every process, and leave every B untouched. Collective.
 */
int redist_plan_execute_batch(redist_plan plan, const void *const *alphas, const void *const *a,
                              const void *const *betas, void *const *b);
/**
 * The begin of redist_plan_execute_batch (split execution, as redist_plan_execute_begin; the
 * arrays of pointers and the alphas and betas are read in the begin, the local arrays until
 * the end). Complete it with redist_plan_execute_end.
 */
int redist_plan_execute_batch_begin(redist_plan plan, const void *const *alphas,
                                    const void *const *a, const void *const *betas, void *const *b);

/**
 * Propose the rank order of a destination grid that is being created (a new BLACS grid, say):
 * which rank of @p comm to put at each position of @p b's grid so that the most of the m x n
 * window copied from @p a stays on its own process and the fewest bytes cross the network
 * (docs/guide.md, "Choosing the ranks of a new grid"). Nothing moves: every process computes
 * the same order from the same arguments (a maximum-weight assignment of ranks to positions;
 * among orders that keep as much, the one closest to the identity). Collective over @p comm.
 * For a copy of the whole window (redist_plan_create with REDIST_REGION_FULL): trapezoids and
 * redist_plan_create_op's transposes are not covered; only bytes kept on the same process
 * count (not on the same node). Meant for grids of up to a few thousand positions.
 * @param comm       the communicator; every process of it calls. Every one of its ranks is a
 *                   candidate.
 * @param m          rows of the window to be copied.
 * @param n          columns of the window to be copied.
 * @param type       the element type (bytes are elements times its size).
 * @param a          the source layout and the window's start in it (lld is ignored).
 * @param b          the destination layout: its m, n, mb, nb, nprow, npcol, rsrc, csrc, i and j
 *                   are used, its ranks and lld ignored (ranks may be NULL).
 * @param ranks      receives b's nprow*npcol positions' ranks: distinct ranks of @p comm,
 *                   column-major (position (pr, pc) is ranks[pr + pc*nprow], as in
 *                   redist_layout::ranks), the same on every process.
 * @param bytes_kept_before  receives the bytes of the window that stay on their process with
 *                   the identity order, rank p at position p (BLACS_GRIDINIT's column-major
 *                   order); may be NULL.
 * @param bytes_kept_after   the same with the proposed order, never less; the bytes saved are
 *                   after - before. May be NULL.
 * @pre every process passes the same m, n, type and layouts (but lld and b's ranks).
 * @return REDIST_SUCCESS, or an error status on every process (a grid with more positions than
 *         @p comm has processes is REDIST_ERR_ARGUMENT); nothing is written then.
 */
int redist_propose_grid_ranks(MPI_Comm comm, int64_t m, int64_t n, redist_type type,
                              const redist_layout *a, const redist_layout *b, int *ranks,
                              int64_t *bytes_kept_before, int64_t *bytes_kept_after);

/** Destroy a plan and set *plan to NULL. Collective; a NULL plan is accepted. If an execution
 * is in flight, it is completed first (its failure is not reported). */
int redist_plan_destroy(redist_plan *plan);

/**
 * Allocate @p bytes, zero-filled, for a local array that the other processes of this node can
 * map: a process receiving from an array allocated here then copies the pieces it needs
 * straight from it, in user space, instead of reading them through the kernel or having them
 * packed (docs/performance.md). Any array works as a source; only these are mapped. The
 * memory lives in a memory file whose descriptor stays open until redist_free. Local (not
 * collective). *memory is NULL when @p bytes is 0; REDIST_ERR_NO_MEMORY when the system gives
 * no memory file of that size.
 */
int redist_alloc(size_t bytes, void **memory);

/**
 * Free memory from redist_alloc. NULL is accepted; any other pointer is an error. Local.
 * Another process whose plan copied from this array keeps it mapped until that plan is
 * destroyed (for the ScaLAPACK entries: evicted from the cache, or
 * redist_scalapack_clear_cache()); until then the pages are not given back to the system
 * (docs/performance.md, "Shared arrays"). Nothing is read from a freed array.
 */
int redist_free(void *memory);

/** Statistics of this process's part of a plan. */
typedef struct redist_plan_info {
  int64_t send_peers;       /**< remote processes this one sends to */
  int64_t recv_peers;       /**< remote processes this one receives from */
  int64_t bytes_sent;       /**< bytes sent per execution */
  int64_t bytes_received;   /**< bytes received per execution */
  int64_t bytes_local;      /**< bytes copied within this process per execution */
  int schedule;             /**< the schedule used (never REDIST_SCHEDULE_AUTO) */
  int64_t steps;            /**< steps of the schedule (1 for all-at-once) */
  int64_t buffer_bytes;     /**< buffer memory this process holds for execution */
  double predicted_seconds; /**< the cost model's time for the whole plan */
} redist_plan_info;

/** Fill @p info with this process's part of @p plan. Local (not collective). */
int redist_plan_get_info(redist_plan plan, redist_plan_info *info);

/**
 * Bytes per execution this process sends to and receives from processes on its own node and on
 * other nodes, nodes as MPI groups them (MPI_Comm_split_type with MPI_COMM_TYPE_SHARED): the
 * plan's bytes_sent and bytes_received of redist_plan_info, split. Single copy is used only
 * inside a node (docs/performance.md). A separate struct, not fields appended to
 * redist_plan_info: that struct carries no size or version, and a program built against the
 * older, shorter struct would have its memory overwritten past the end.
 */
typedef struct redist_plan_node_info {
  int64_t bytes_sent_inside;     /**< bytes sent to peers on this node */
  int64_t bytes_sent_across;     /**< bytes sent to peers on other nodes */
  int64_t bytes_received_inside; /**< bytes received from peers on this node */
  int64_t bytes_received_across; /**< bytes received from peers on other nodes */
  int64_t send_peers_inside;     /**< of send_peers, those on this node */
  int64_t recv_peers_inside;     /**< of recv_peers, those on this node */
} redist_plan_node_info;

/** Fill @p info with this process's bytes inside its node and across nodes. Local. */
int redist_plan_get_node_info(redist_plan plan, redist_plan_node_info *info);

/** The message of the last error on this thread ("" if none). */
const char *redist_last_error(void);

/** A short name for a status code. */
const char *redist_status_name(int status);

/** Size in bytes of an element type, or 0 for an unknown type. */
int redist_type_size(redist_type type);

/**
 * The version of the library this program runs with (compare REDIST_VERSION_MAJOR, ... of
 * the headers it was compiled with). Any pointer may be NULL. Local; may be called before
 * MPI_Init.
 * @ingroup version
 * @return REDIST_SUCCESS.
 */
int redist_get_version(int *major, int *minor, int *patch);

#ifdef __cplusplus
}
#endif

#endif /* REDIST_H */
