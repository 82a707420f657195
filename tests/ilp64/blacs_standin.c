/* ILP64 BLACS stand-in (blacs_standin.h). It follows netlib BLACS built with -DInt=long where
 * libredist_ilp64 depends on it:
 *   - context handles index BI_MyContxts (NULL where this process is not in the grid), and
 *     BI_MaxNCtxt bounds them; non-members get the handle -1;
 *   - a context's communicator ranks its processes in row-major grid order;
 *   - Cblacs_get(ctxt, 10, &h) gives a system handle of that communicator (0 for
 *     MPI_COMM_WORLD with ctxt -1 and what 0), Cblacs2sys_handle(h) the MPI_Comm,
 *     Cfree_blacs_system_handle(h) releases the handle;
 *   - Cigamx2d / Cdgamx2d with scope "All", no location arrays (ldia -1) and rdest -1 replace
 *     the m x n matrix on every process of the context by the elementwise absolute maximum.
 * Anything else (other scopes, locations, destinations, topologies) is not implemented and
 * aborts the test program. */
#include "blacs_standin.h"

#include <mpi.h>

#include <math.h>
#include <stdio.h>
#include <stdlib.h>

typedef standin_int Int;

/* NOLINTBEGIN(readability-identifier-naming): BLACS names */
Int BI_MaxNCtxt = 0;
void **BI_MyContxts = NULL;
/* NOLINTEND(readability-identifier-naming) */

struct context {
  MPI_Comm comm;
  Int nprow, npcol, myrow, mycol;
};

static MPI_Comm *system_handles = NULL;
static Int system_handle_count = 0;

static void standin_abort(const char *what) {
  fprintf(stderr, "blacs stand-in: %s\n", what);
  MPI_Abort(MPI_COMM_WORLD, 99);
}

static struct context *context_of(Int ctxt) {
  if (ctxt < 0 || ctxt >= BI_MaxNCtxt) return NULL;
  return (struct context *)BI_MyContxts[ctxt];
}

void standin_gridmap(Int *ctxt, const Int *usermap, Int ldumap, Int nprow, Int npcol) {
  int rank = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  Int myrow = -1, mycol = -1;
  for (Int pc = 0; pc < npcol; ++pc)
    for (Int pr = 0; pr < nprow; ++pr)
      if (usermap[pr + pc * ldumap] == rank) {
        myrow = pr;
        mycol = pc;
      }
  const int member = myrow >= 0;
  MPI_Comm comm = MPI_COMM_NULL;
  MPI_Comm_split(MPI_COMM_WORLD, member ? 0 : MPI_UNDEFINED,
                 member ? (int)(myrow * npcol + mycol) : 0, &comm);
  *ctxt = -1;
  if (!member) return;
  struct context *c = malloc(sizeof *c);
  if (c == NULL) standin_abort("out of memory");
  *c = (struct context){comm, nprow, npcol, myrow, mycol};
  Int slot = 0;
  while (slot < BI_MaxNCtxt && BI_MyContxts[slot] != NULL)
    ++slot;
  if (slot == BI_MaxNCtxt) {
    void **grown = realloc(BI_MyContxts, sizeof(void *) * (size_t)(BI_MaxNCtxt + 1));
    if (grown == NULL) standin_abort("out of memory");
    BI_MyContxts = grown;
    ++BI_MaxNCtxt;
  }
  BI_MyContxts[slot] = c;
  *ctxt = slot;
}

void standin_gridinit(Int *ctxt, char order, Int nprow, Int npcol) {
  Int *map = malloc(sizeof(Int) * (size_t)(nprow * npcol));
  if (map == NULL) standin_abort("out of memory");
  for (Int pr = 0; pr < nprow; ++pr)
    for (Int pc = 0; pc < npcol; ++pc)
      map[pr + pc * nprow] = order == 'R' ? pr * npcol + pc : pc * nprow + pr;
  standin_gridmap(ctxt, map, nprow, nprow, npcol);
  free(map);
}

void standin_gridexit(Int ctxt) {
  struct context *c = context_of(ctxt);
  if (c == NULL) standin_abort("gridexit of an invalid context");
  MPI_Comm_free(&c->comm);
  free(c);
  BI_MyContxts[ctxt] = NULL;
}

long long standin_live_system_handles(void) {
  long long live = 0;
  for (Int h = 0; h < system_handle_count; ++h)
    live += system_handles[h] != MPI_COMM_NULL;
  return live;
}

/* NOLINTBEGIN(readability-identifier-naming): BLACS names */
void Cblacs_gridinfo(Int ctxt, Int *nprow, Int *npcol, Int *myrow, Int *mycol) {
  const struct context *c = context_of(ctxt);
  *nprow = c ? c->nprow : -1;
  *npcol = c ? c->npcol : -1;
  *myrow = c ? c->myrow : -1;
  *mycol = c ? c->mycol : -1;
}

void Cblacs_get(Int ctxt, Int what, Int *val) {
  MPI_Comm comm = MPI_COMM_NULL;
  if (what == 0 && ctxt == -1) {
    comm = MPI_COMM_WORLD;
  } else if (what == 10 && context_of(ctxt) != NULL) {
    comm = context_of(ctxt)->comm;
  } else {
    standin_abort("Cblacs_get: only (-1, 0) and (context, 10) are implemented");
  }
  Int handle = 0;
  while (handle < system_handle_count && system_handles[handle] != MPI_COMM_NULL)
    ++handle;
  if (handle == system_handle_count) {
    MPI_Comm *grown = realloc(system_handles, sizeof(MPI_Comm) * (size_t)(handle + 1));
    if (grown == NULL) standin_abort("out of memory");
    system_handles = grown;
    ++system_handle_count;
  }
  system_handles[handle] = comm;
  *val = handle;
}

MPI_Comm Cblacs2sys_handle(Int handle) {
  if (handle < 0 || handle >= system_handle_count || system_handles[handle] == MPI_COMM_NULL)
    standin_abort("Cblacs2sys_handle: not a live system handle");
  return system_handles[handle];
}

void Cfree_blacs_system_handle(Int handle) {
  if (handle < 0 || handle >= system_handle_count) standin_abort("bad system handle");
  system_handles[handle] = MPI_COMM_NULL;
}
/* NOLINTEND(readability-identifier-naming) */

static void absmax_int(void *in, void *inout, int *len, MPI_Datatype *type) {
  (void)type;
  const Int *a = in;
  Int *b = inout;
  for (int k = 0; k < *len; ++k)
    if (llabs(a[k]) > llabs(b[k])) b[k] = a[k];
}

static void absmax_double(void *in, void *inout, int *len, MPI_Datatype *type) {
  (void)type;
  const double *a = in;
  double *b = inout;
  for (int k = 0; k < *len; ++k)
    if (fabs(a[k]) > fabs(b[k])) b[k] = a[k];
}

/* The m x n matrix at a (leading dimension lda, elements of `size` bytes) replaced by its
 * elementwise combination over the context's processes. */
static void combine_all(Int ctxt, const char *scope, Int m, Int n, void *a, Int lda, Int ldia,
                        Int rdest, size_t size, MPI_Datatype type, MPI_User_function *f) {
  const struct context *c = context_of(ctxt);
  if (c == NULL || scope == NULL || (scope[0] != 'A' && scope[0] != 'a') || ldia != -1 ||
      rdest != -1)
    standin_abort("gamx2d: only scope \"All\" on a member, ldia = -1, rdest = -1");
  char *packed = malloc(size * (size_t)(m * n) + 1);
  if (packed == NULL) standin_abort("out of memory");
  for (Int j = 0; j < n; ++j)
    for (Int i = 0; i < m; ++i)
      for (size_t b = 0; b < size; ++b)
        packed[(size_t)(i + j * m) * size + b] = ((char *)a)[(size_t)(i + j * lda) * size + b];
  MPI_Op op;
  MPI_Op_create(f, 1, &op);
  MPI_Allreduce(MPI_IN_PLACE, packed, (int)(m * n), type, op, c->comm);
  MPI_Op_free(&op);
  for (Int j = 0; j < n; ++j)
    for (Int i = 0; i < m; ++i)
      for (size_t b = 0; b < size; ++b)
        ((char *)a)[(size_t)(i + j * lda) * size + b] = packed[(size_t)(i + j * m) * size + b];
  free(packed);
}

/* NOLINTBEGIN(readability-identifier-naming): BLACS names */
void Cigamx2d(Int ctxt, const char *scope, const char *top, Int m, Int n, Int *a, Int lda, Int *ra,
              Int *ca, Int ldia, Int rdest, Int cdest) {
  (void)top, (void)ra, (void)ca, (void)cdest;
  combine_all(ctxt, scope, m, n, a, lda, ldia, rdest, sizeof(Int), MPI_LONG_LONG, absmax_int);
}

void Cdgamx2d(Int ctxt, const char *scope, const char *top, Int m, Int n, double *a, Int lda,
              Int *ra, Int *ca, Int ldia, Int rdest, Int cdest) {
  (void)top, (void)ra, (void)ca, (void)cdest;
  combine_all(ctxt, scope, m, n, a, lda, ldia, rdest, sizeof(double), MPI_DOUBLE, absmax_double);
}
/* NOLINTEND(readability-identifier-naming) */
