/* An ILP64 BLACS stand-in for the ILP64 test (blacs_standin.c): Debian ships only an LP64 BLACS,
 * and libredist_ilp64 calls the C BLACS interface with 64-bit integers. Grid creation here is
 * the test's (collective over MPI_COMM_WORLD); the Cblacs_* functions libredist_ilp64 calls are
 * defined with the BLACS names. */
#ifndef REDIST_TESTS_BLACS_STANDIN_H
#define REDIST_TESTS_BLACS_STANDIN_H

#ifdef __cplusplus
extern "C" {
#endif

typedef long long standin_int;

/* BLACS_GRIDMAP: usermap[pr + pc*ldumap] is the world rank at grid position (pr, pc). Sets
 * *ctxt to the new context on its members, -1 elsewhere. Collective over MPI_COMM_WORLD. */
void standin_gridmap(standin_int *ctxt, const standin_int *usermap, standin_int ldumap,
                     standin_int nprow, standin_int npcol);
/* BLACS_GRIDINIT: 'R' puts world rank pr*npcol + pc at (pr, pc), 'C' rank pc*nprow + pr. */
void standin_gridinit(standin_int *ctxt, char order, standin_int nprow, standin_int npcol);
/* BLACS_GRIDEXIT on a member's context (ctxt >= 0). */
void standin_gridexit(standin_int ctxt);
/* Live system handles (Cblacs_get(ctxt, 10, ...) not yet freed): 0 when redist frees all. */
long long standin_live_system_handles(void);

#ifdef __cplusplus
}
#endif

#endif
