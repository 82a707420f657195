/* C side of the Fortran module `redist`: what iso_c_binding alone cannot do portably.
 *   - MPI communicators arrive as Fortran handles (MPI_Fint) and become MPI_Comm here;
 *   - plans from ScaLAPACK descriptors: one MPI_Allgather over ICTXT's communicator tells every
 *     process the grids, descriptors and window offsets of A and B (processes outside a grid pass
 *     CTXT_ = -1 and learn them from the members), then redist_plan_create_opt;
 *   - a thread-local message for errors the Fortran layer finds itself (read before redist's). */
#include "redist_fortran_support.h"

#include <redist_scalapack.h>

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* BLACS ships no C header. */
/* NOLINTBEGIN(readability-identifier-naming): BLACS names */
void Cblacs_gridinfo(redist_int ctxt, redist_int *nprow, redist_int *npcol, redist_int *myrow,
                     redist_int *mycol);
void Cblacs_get(redist_int ctxt, redist_int what, redist_int *val);
MPI_Comm Cblacs2sys_handle(redist_int sysctxt);
void Cfree_blacs_system_handle(redist_int handle);
/* NOLINTEND(readability-identifier-naming) */

enum { blacs_get_context_comm = 10 };

static _Thread_local char fortran_message[1024];

static void set_message(const char *format, ...) __attribute__((format(printf, 1, 2)));
static void set_message(const char *format, ...) {
  va_list args;
  va_start(args, format);
  vsnprintf(fortran_message, sizeof fortran_message, format, args);
  va_end(args);
}

void redist_f_set_message(const char *text) {
  snprintf(fortran_message, sizeof fortran_message, "%s", text);
}

const char *redist_f_message(void) {
  return fortran_message[0] != '\0' ? fortran_message : redist_last_error();
}

int redist_f_plan_create(MPI_Fint comm, int64_t m, int64_t n, int type, const redist_layout *a,
                         const redist_layout *b, int region, int unit_diag,
                         const redist_options *options, redist_plan *plan) {
  const MPI_Comm c_comm = MPI_Comm_f2c(comm);
  if (options == NULL)
    return redist_plan_create(c_comm, m, n, (redist_type)type, a, b, (redist_region)region,
                              unit_diag, plan);
  return redist_plan_create_opt(c_comm, m, n, (redist_type)type, a, b, (redist_region)region,
                                unit_diag, options, plan);
}

int redist_f_calibrate(MPI_Fint comm, double *alpha, double *beta) {
  return redist_calibrate(MPI_Comm_f2c(comm), alpha, beta);
}

/* ------------------------------------------------------------------------------------------ */
/* Plans from ScaLAPACK descriptors. */

enum { DTYPE_ = 0, CTXT_, M_, N_, MB_, NB_, RSRC_, CSRC_, LLD_ };

/* What one process knows about one side (A or B) of the call. */
enum {
  side_member = 0,
  side_nprow,
  side_npcol,
  side_myrow,
  side_mycol,
  side_m,
  side_n,
  side_mb,
  side_nb,
  side_rsrc,
  side_csrc,
  side_i,
  side_j,
  side_fields
};
enum {
  record_error = 0,
  record_a = 1,
  record_b = 1 + side_fields,
  record_fields = 1 + 2 * side_fields
};

static void describe_side(const redist_int *desc, redist_int i, redist_int j, int64_t *out) {
  memset(out, 0, sizeof(int64_t) * side_fields);
  if (desc[CTXT_] < 0) return;
  redist_int nprow = -1, npcol = -1, myrow = -1, mycol = -1;
  Cblacs_gridinfo(desc[CTXT_], &nprow, &npcol, &myrow, &mycol);
  if (nprow < 1 || npcol < 1 || myrow < 0 || mycol < 0) return;
  const int64_t values[side_fields] = {
      1,         nprow,     npcol,       myrow,       mycol,          desc[M_],      desc[N_],
      desc[MB_], desc[NB_], desc[RSRC_], desc[CSRC_], (int64_t)i - 1, (int64_t)j - 1};
  memcpy(out, values, sizeof values);
}

/* Build the layout of one side from every process's record. Returns REDIST_SUCCESS, or an error
 * status with the message set (REDIST_ERR_MISMATCH when members disagree on a global value);
 * every process sees the same records, so every process reaches the same verdict. */
static int gather_layout(const int64_t *records, int size, int rank, int side, char name,
                         redist_int lld, int *ranks, redist_layout *layout) {
  const int64_t *first = NULL;
  for (int p = 0; p < size && first == NULL; ++p)
    if (records[(size_t)p * record_fields + side + side_member] != 0)
      first = records + (size_t)p * record_fields + side;
  if (first == NULL) {
    set_message("redist_plan_create: no process of ICTXT is in %c's grid (DESC%c(CTXT_) = -1 "
                "everywhere)",
                name, name);
    return REDIST_ERR_ARGUMENT;
  }
  const int64_t nprow = first[side_nprow], npcol = first[side_npcol];
  if (nprow * npcol > size) {
    set_message("redist_plan_create: %c's grid (%lld x %lld) has more processes than ICTXT (%d)",
                name, (long long)nprow, (long long)npcol, size);
    return REDIST_ERR_ARGUMENT;
  }
  for (int64_t pos = 0; pos < nprow * npcol; ++pos)
    ranks[pos] = -1;
  static const char *const field_names[side_fields] = {
      "",    "grid rows", "grid columns", "",      "",  "M_", "N_",
      "MB_", "NB_",       "RSRC_",        "CSRC_", "I", "J"};
  for (int p = 0; p < size; ++p) {
    const int64_t *r = records + (size_t)p * record_fields + side;
    if (r[side_member] == 0) continue;
    for (int f = side_nprow; f < side_fields; ++f) {
      if (f == side_myrow || f == side_mycol || r[f] == first[f]) continue;
      char what[16];
      if (f >= side_m && f <= side_csrc)
        snprintf(what, sizeof what, "DESC%c(%s)", name, field_names[f]);
      else if (f == side_i || f == side_j)
        snprintf(what, sizeof what, "%c%c", f == side_i ? 'I' : 'J', name);
      else
        snprintf(what, sizeof what, "%s", field_names[f]);
      set_message("redist_plan_create: processes of %c's grid disagree on %s (%lld on one, %lld "
                  "on rank %d of ICTXT)",
                  name, what, (long long)first[f], (long long)r[f], p);
      return REDIST_ERR_MISMATCH;
    }
    const int64_t pos = r[side_myrow] + r[side_mycol] * nprow;
    if (r[side_myrow] >= nprow || r[side_mycol] >= npcol || ranks[pos] != -1) {
      set_message("redist_plan_create: BLACS reports two processes at (%lld, %lld) of %c's grid",
                  (long long)r[side_myrow], (long long)r[side_mycol], name);
      return REDIST_ERR_ARGUMENT;
    }
    ranks[pos] = p;
  }
  for (int64_t pos = 0; pos < nprow * npcol; ++pos) {
    if (ranks[pos] < 0) {
      set_message("redist_plan_create: position (%lld, %lld) of %c's grid is not a process of "
                  "ICTXT",
                  (long long)(pos % nprow), (long long)(pos / nprow), name);
      return REDIST_ERR_ARGUMENT;
    }
  }
  const int member = records[(size_t)rank * record_fields + side + side_member] != 0;
  const redist_layout out = {.m = first[side_m],
                             .n = first[side_n],
                             .mb = first[side_mb],
                             .nb = first[side_nb],
                             .nprow = (int)nprow,
                             .npcol = (int)npcol,
                             .rsrc = (int)first[side_rsrc],
                             .csrc = (int)first[side_csrc],
                             .ranks = ranks,
                             .i = first[side_i],
                             .j = first[side_j],
                             .lld = member ? lld : 1};
  *layout = out;
  return REDIST_SUCCESS;
}

int redist_f_plan_create_desc(redist_int m, redist_int n, int type, const redist_int *desca,
                              redist_int ia, redist_int ja, const redist_int *descb, redist_int ib,
                              redist_int jb, redist_int ictxt, int region, int unit_diag,
                              const redist_options *options, redist_plan *plan) {
  *plan = NULL;
  if (ictxt < 0) {
    set_message("redist_plan_create: argument ictxt = %lld: not a BLACS context of this process",
                (long long)ictxt);
    return REDIST_ERR_ARGUMENT;
  }
  redist_int system_handle = -1;
  Cblacs_get(ictxt, blacs_get_context_comm, &system_handle);
  const MPI_Comm comm = Cblacs2sys_handle(system_handle);
  Cfree_blacs_system_handle(system_handle);
  int size = 0, rank = 0;
  if (MPI_Comm_size(comm, &size) != MPI_SUCCESS || MPI_Comm_rank(comm, &rank) != MPI_SUCCESS) {
    set_message("redist_plan_create: MPI_Comm_size/rank failed on ICTXT's communicator");
    return REDIST_ERR_MPI;
  }

  int64_t mine[record_fields];
  describe_side(desca, ia, ja, mine + record_a);
  describe_side(descb, ib, jb, mine + record_b);
  mine[record_error] = 0;
  char local_error[512] = "";
  if (mine[record_a + side_member] != 0 && desca[DTYPE_] != 1)
    snprintf(local_error, sizeof local_error, "DESCA(DTYPE_) = %lld", (long long)desca[DTYPE_]);
  else if (mine[record_b + side_member] != 0 && descb[DTYPE_] != 1)
    snprintf(local_error, sizeof local_error, "DESCB(DTYPE_) = %lld", (long long)descb[DTYPE_]);
  mine[record_error] = local_error[0] != '\0';

  int64_t *records = malloc(sizeof(int64_t) * record_fields * (size_t)size);
  int *ranks_a = malloc(sizeof(int) * (size_t)size);
  int *ranks_b = malloc(sizeof(int) * (size_t)size);
  int status = REDIST_SUCCESS;
  if (records == NULL || ranks_a == NULL || ranks_b == NULL) {
    set_message("redist_plan_create: out of memory for %d processes", size);
    status = REDIST_ERR_NO_MEMORY; /* the others wait in MPI_Allgather: as fatal as in MPI */
  } else if (MPI_Allgather(mine, record_fields, MPI_INT64_T, records, record_fields, MPI_INT64_T,
                           comm) != MPI_SUCCESS) {
    set_message("redist_plan_create: MPI_Allgather over ICTXT's communicator failed");
    status = REDIST_ERR_MPI;
  } else {
    int first_error = -1;
    for (int p = 0; p < size && first_error < 0; ++p)
      if (records[(size_t)p * record_fields + record_error] != 0) first_error = p;
    redist_layout a, b;
    if (local_error[0] != '\0') {
      set_message("redist_plan_create: %s on rank %d of ICTXT: descriptor type must be 1",
                  local_error, rank);
      status = REDIST_ERR_ARGUMENT;
    } else if (first_error >= 0) {
      set_message("redist_plan_create: an argument is invalid on rank %d of ICTXT (see its "
                  "message)",
                  first_error);
      status = REDIST_ERR_REMOTE;
    } else if ((status = gather_layout(records, size, rank, record_a, 'A', desca[LLD_], ranks_a,
                                       &a)) != REDIST_SUCCESS ||
               (status = gather_layout(records, size, rank, record_b, 'B', descb[LLD_], ranks_b,
                                       &b)) != REDIST_SUCCESS) {
      /* status and message set by gather_layout */
    } else {
      redist_f_set_message("");
      status = redist_f_plan_create(MPI_Comm_c2f(comm), m, n, type, &a, &b, region, unit_diag,
                                    options, plan);
    }
  }
  free(records);
  free(ranks_a);
  free(ranks_b);
  return status;
}
