// PMPI interposition: this file defines MPI_Comm_dup, MPI_Comm_free, MPI_Isend, ... in the
// test executable. The executable's definitions take precedence over libmpi's for every
// caller in the process (libredist, BLACS, the test), and each one calls the PMPI_ version
// and counts the handles it creates and frees.
//
// Two builds share some MPI symbols with the fault layer, which the executable links too:
//   REDIST_COUNTERS_WITHOUT_REQUESTS   the request calls (MPI_Isend, the waits, ...,
//                                      MPI_Iallreduce, MPI_Iallgather) are left to
//                                      mpi_faults.cpp / mpi_coll_faults.cpp; requests are not
//                                      counted here (Snapshot::requests stays 0).
//   REDIST_COUNTERS_WITH_COLL_FAULTS   (with the above) MPI_Comm_dup, MPI_Comm_idup,
//                                      MPI_Comm_split, MPI_Comm_split_type and MPI_Comm_free are
//                                      left to mpi_coll_faults.cpp, whose set of live
//                                      communicators (faults::live_communicators()) is then
//                                      the count: the other communicator creations here add
//                                      theirs to that set, so every communicator is counted
//                                      once, by one interposer per symbol.

#include "mpi_counters.hpp"

#ifdef REDIST_COUNTERS_WITH_COLL_FAULTS
#ifndef REDIST_COUNTERS_WITHOUT_REQUESTS
#error "REDIST_COUNTERS_WITH_COLL_FAULTS needs REDIST_COUNTERS_WITHOUT_REQUESTS"
#endif
#include "mpi_faults.hpp"
#endif

#include <atomic>

namespace counters {
namespace {
std::atomic<long long> groups{0}, types{0}, requests{0}, ops{0}, infos{0};
#ifndef REDIST_COUNTERS_WITH_COLL_FAULTS
std::atomic<long long> comms{0}, comm_creations{0};
#endif

int count_new_comm(int rc, const MPI_Comm *c) {
  if (rc == MPI_SUCCESS && c != nullptr && *c != MPI_COMM_NULL) {
#ifdef REDIST_COUNTERS_WITH_COLL_FAULTS
    faults::detail::comm_made(*c); // counted in the fault layer's set
#else
    ++comms;
    ++comm_creations;
#endif
  }
  return rc;
}
int count_new_group(int rc, const MPI_Group *g) {
  if (rc == MPI_SUCCESS && g != nullptr && *g != MPI_GROUP_NULL && *g != MPI_GROUP_EMPTY) ++groups;
  return rc;
}
int count_new_type(int rc) {
  if (rc == MPI_SUCCESS) ++types;
  return rc;
}
#ifndef REDIST_COUNTERS_WITHOUT_REQUESTS
int count_new_request(int rc, const MPI_Request *r) {
  if (rc == MPI_SUCCESS && r != nullptr && *r != MPI_REQUEST_NULL) ++requests;
  return rc;
}
long long live_requests(int n, const MPI_Request *r) {
  long long live = 0;
  for (int i = 0; i < n; ++i)
    live += r[i] != MPI_REQUEST_NULL ? 1 : 0;
  return live;
}
#endif
} // namespace

Snapshot now() {
#ifdef REDIST_COUNTERS_WITH_COLL_FAULTS
  const long long live_comms = faults::live_communicators();
#else
  const long long live_comms = comms.load();
#endif
  return {live_comms, groups.load(), types.load(), requests.load(), ops.load(), infos.load()};
}
long long communicators_created() {
#ifdef REDIST_COUNTERS_WITH_COLL_FAULTS
  return faults::communicators_made();
#else
  return comm_creations.load();
#endif
}

std::string Snapshot::describe() const {
  return "communicators " + std::to_string(comms) + ", groups " + std::to_string(groups) +
         ", datatypes " + std::to_string(types) + ", requests " + std::to_string(requests) +
         ", ops " + std::to_string(ops) + ", infos " + std::to_string(infos);
}

} // namespace counters

#ifndef REDIST_COUNTERS_WITH_COLL_FAULTS
using counters::comms;
#endif
using counters::groups;
using counters::infos;
#ifndef REDIST_COUNTERS_WITHOUT_REQUESTS
using counters::live_requests;
#endif
using counters::ops;
using counters::requests;
using counters::types;

// NOLINTBEGIN(readability-identifier-naming): MPI names
extern "C" {

// ---- communicators -----------------------------------------------------------------------------
#ifndef REDIST_COUNTERS_WITH_COLL_FAULTS // else mpi_coll_faults.cpp's, counted there
int MPI_Comm_dup(MPI_Comm comm, MPI_Comm *out) {
  return counters::count_new_comm(PMPI_Comm_dup(comm, out), out);
}
int MPI_Comm_idup(MPI_Comm comm, MPI_Comm *out, MPI_Request *request) {
  // The new communicator's handle is valid at once (MPI 4.0 section 7.4.2).
  const int rc = counters::count_new_comm(PMPI_Comm_idup(comm, out, request), out);
#ifndef REDIST_COUNTERS_WITHOUT_REQUESTS
  counters::count_new_request(rc, request);
#endif
  return rc;
}
#endif
int MPI_Comm_dup_with_info(MPI_Comm comm, MPI_Info info, MPI_Comm *out) {
  return counters::count_new_comm(PMPI_Comm_dup_with_info(comm, info, out), out);
}
int MPI_Comm_create(MPI_Comm comm, MPI_Group group, MPI_Comm *out) {
  return counters::count_new_comm(PMPI_Comm_create(comm, group, out), out);
}
int MPI_Comm_create_group(MPI_Comm comm, MPI_Group group, int tag, MPI_Comm *out) {
  return counters::count_new_comm(PMPI_Comm_create_group(comm, group, tag, out), out);
}
#ifndef REDIST_COUNTERS_WITH_COLL_FAULTS // else mpi_coll_faults.cpp's, counted there
int MPI_Comm_split(MPI_Comm comm, int color, int key, MPI_Comm *out) {
  return counters::count_new_comm(PMPI_Comm_split(comm, color, key, out), out);
}
int MPI_Comm_split_type(MPI_Comm comm, int type, int key, MPI_Info info, MPI_Comm *out) {
  return counters::count_new_comm(PMPI_Comm_split_type(comm, type, key, info, out), out);
}
#endif
int MPI_Cart_create(MPI_Comm comm, int ndims, const int dims[], const int periods[], int reorder,
                    MPI_Comm *out) {
  return counters::count_new_comm(PMPI_Cart_create(comm, ndims, dims, periods, reorder, out), out);
}
int MPI_Intercomm_create(MPI_Comm local, int local_leader, MPI_Comm peer, int remote_leader,
                         int tag, MPI_Comm *out) {
  return counters::count_new_comm(
      PMPI_Intercomm_create(local, local_leader, peer, remote_leader, tag, out), out);
}
int MPI_Intercomm_merge(MPI_Comm inter, int high, MPI_Comm *out) {
  return counters::count_new_comm(PMPI_Intercomm_merge(inter, high, out), out);
}
#ifndef REDIST_COUNTERS_WITH_COLL_FAULTS // else mpi_coll_faults.cpp's, which forgets it in the set
int MPI_Comm_free(MPI_Comm *comm) {
  const bool live = comm != nullptr && *comm != MPI_COMM_NULL;
  const int rc = PMPI_Comm_free(comm);
  if (rc == MPI_SUCCESS && live) --comms;
  return rc;
}
#endif

// ---- groups ------------------------------------------------------------------------------------
int MPI_Comm_group(MPI_Comm comm, MPI_Group *g) {
  return counters::count_new_group(PMPI_Comm_group(comm, g), g);
}
int MPI_Group_incl(MPI_Group group, int n, const int ranks[], MPI_Group *g) {
  return counters::count_new_group(PMPI_Group_incl(group, n, ranks, g), g);
}
int MPI_Group_excl(MPI_Group group, int n, const int ranks[], MPI_Group *g) {
  return counters::count_new_group(PMPI_Group_excl(group, n, ranks, g), g);
}
int MPI_Group_union(MPI_Group a, MPI_Group b, MPI_Group *g) {
  return counters::count_new_group(PMPI_Group_union(a, b, g), g);
}
int MPI_Group_intersection(MPI_Group a, MPI_Group b, MPI_Group *g) {
  return counters::count_new_group(PMPI_Group_intersection(a, b, g), g);
}
int MPI_Group_difference(MPI_Group a, MPI_Group b, MPI_Group *g) {
  return counters::count_new_group(PMPI_Group_difference(a, b, g), g);
}
int MPI_Group_free(MPI_Group *g) {
  const bool live = g != nullptr && *g != MPI_GROUP_NULL && *g != MPI_GROUP_EMPTY;
  const int rc = PMPI_Group_free(g);
  if (rc == MPI_SUCCESS && live) --groups;
  return rc;
}

// ---- datatypes ---------------------------------------------------------------------------------
int MPI_Type_contiguous(int count, MPI_Datatype old, MPI_Datatype *out) {
  return counters::count_new_type(PMPI_Type_contiguous(count, old, out));
}
int MPI_Type_vector(int count, int length, int stride, MPI_Datatype old, MPI_Datatype *out) {
  return counters::count_new_type(PMPI_Type_vector(count, length, stride, old, out));
}
int MPI_Type_create_hvector(int count, int length, MPI_Aint stride, MPI_Datatype old,
                            MPI_Datatype *out) {
  return counters::count_new_type(PMPI_Type_create_hvector(count, length, stride, old, out));
}
int MPI_Type_indexed(int count, const int lengths[], const int displs[], MPI_Datatype old,
                     MPI_Datatype *out) {
  return counters::count_new_type(PMPI_Type_indexed(count, lengths, displs, old, out));
}
int MPI_Type_create_hindexed(int count, const int lengths[], const MPI_Aint displs[],
                             MPI_Datatype old, MPI_Datatype *out) {
  return counters::count_new_type(PMPI_Type_create_hindexed(count, lengths, displs, old, out));
}
int MPI_Type_create_indexed_block(int count, int length, const int displs[], MPI_Datatype old,
                                  MPI_Datatype *out) {
  return counters::count_new_type(PMPI_Type_create_indexed_block(count, length, displs, old, out));
}
int MPI_Type_create_struct(int count, const int lengths[], const MPI_Aint displs[],
                           const MPI_Datatype types_in[], MPI_Datatype *out) {
  return counters::count_new_type(PMPI_Type_create_struct(count, lengths, displs, types_in, out));
}
int MPI_Type_create_resized(MPI_Datatype old, MPI_Aint lb, MPI_Aint extent, MPI_Datatype *out) {
  return counters::count_new_type(PMPI_Type_create_resized(old, lb, extent, out));
}
int MPI_Type_create_subarray(int ndims, const int sizes[], const int subsizes[], const int starts[],
                             int order, MPI_Datatype old, MPI_Datatype *out) {
  return counters::count_new_type(
      PMPI_Type_create_subarray(ndims, sizes, subsizes, starts, order, old, out));
}
int MPI_Type_dup(MPI_Datatype old, MPI_Datatype *out) {
  return counters::count_new_type(PMPI_Type_dup(old, out));
}
int MPI_Type_free(MPI_Datatype *t) {
  const int rc = PMPI_Type_free(t);
  if (rc == MPI_SUCCESS) --types;
  return rc;
}

// ---- ops and infos -----------------------------------------------------------------------------
int MPI_Op_create(MPI_User_function *f, int commute, MPI_Op *op) {
  const int rc = PMPI_Op_create(f, commute, op);
  if (rc == MPI_SUCCESS) ++ops;
  return rc;
}
int MPI_Op_free(MPI_Op *op) {
  const int rc = PMPI_Op_free(op);
  if (rc == MPI_SUCCESS) --ops;
  return rc;
}
int MPI_Info_create(MPI_Info *info) {
  const int rc = PMPI_Info_create(info);
  if (rc == MPI_SUCCESS) ++infos;
  return rc;
}
int MPI_Info_free(MPI_Info *info) {
  const int rc = PMPI_Info_free(info);
  if (rc == MPI_SUCCESS) --infos;
  return rc;
}

#ifndef REDIST_COUNTERS_WITHOUT_REQUESTS // the soak counts them through mpi_faults.cpp instead
// ---- requests: created by the non-blocking calls, released when completed or freed ------------
int MPI_Isend(const void *buf, int count, MPI_Datatype type, int dest, int tag, MPI_Comm comm,
              MPI_Request *r) {
  return counters::count_new_request(PMPI_Isend(buf, count, type, dest, tag, comm, r), r);
}
int MPI_Issend(const void *buf, int count, MPI_Datatype type, int dest, int tag, MPI_Comm comm,
               MPI_Request *r) {
  return counters::count_new_request(PMPI_Issend(buf, count, type, dest, tag, comm, r), r);
}
int MPI_Irsend(const void *buf, int count, MPI_Datatype type, int dest, int tag, MPI_Comm comm,
               MPI_Request *r) {
  return counters::count_new_request(PMPI_Irsend(buf, count, type, dest, tag, comm, r), r);
}
int MPI_Ibsend(const void *buf, int count, MPI_Datatype type, int dest, int tag, MPI_Comm comm,
               MPI_Request *r) {
  return counters::count_new_request(PMPI_Ibsend(buf, count, type, dest, tag, comm, r), r);
}
int MPI_Irecv(void *buf, int count, MPI_Datatype type, int source, int tag, MPI_Comm comm,
              MPI_Request *r) {
  return counters::count_new_request(PMPI_Irecv(buf, count, type, source, tag, comm, r), r);
}
int MPI_Ibarrier(MPI_Comm comm, MPI_Request *r) {
  return counters::count_new_request(PMPI_Ibarrier(comm, r), r);
}
int MPI_Iallreduce(const void *s, void *rbuf, int count, MPI_Datatype type, MPI_Op op,
                   MPI_Comm comm, MPI_Request *r) {
  return counters::count_new_request(PMPI_Iallreduce(s, rbuf, count, type, op, comm, r), r);
}
int MPI_Iallgather(const void *s, int scount, MPI_Datatype stype, void *rbuf, int rcount,
                   MPI_Datatype rtype, MPI_Comm comm, MPI_Request *r) {
  return counters::count_new_request(
      PMPI_Iallgather(s, scount, stype, rbuf, rcount, rtype, comm, r), r);
}
int MPI_Request_free(MPI_Request *r) {
  const bool live = r != nullptr && *r != MPI_REQUEST_NULL;
  const int rc = PMPI_Request_free(r);
  if (rc == MPI_SUCCESS && live) --requests;
  return rc;
}
int MPI_Wait(MPI_Request *r, MPI_Status *s) {
  const long long before = live_requests(1, r);
  const int rc = PMPI_Wait(r, s);
  requests -= before - live_requests(1, r);
  return rc;
}
int MPI_Test(MPI_Request *r, int *flag, MPI_Status *s) {
  const long long before = live_requests(1, r);
  const int rc = PMPI_Test(r, flag, s);
  requests -= before - live_requests(1, r);
  return rc;
}
int MPI_Waitall(int n, MPI_Request r[], MPI_Status s[]) {
  const long long before = live_requests(n, r);
  const int rc = PMPI_Waitall(n, r, s);
  requests -= before - live_requests(n, r);
  return rc;
}
int MPI_Testall(int n, MPI_Request r[], int *flag, MPI_Status s[]) {
  const long long before = live_requests(n, r);
  const int rc = PMPI_Testall(n, r, flag, s);
  requests -= before - live_requests(n, r);
  return rc;
}
int MPI_Waitany(int n, MPI_Request r[], int *index, MPI_Status *s) {
  const long long before = live_requests(n, r);
  const int rc = PMPI_Waitany(n, r, index, s);
  requests -= before - live_requests(n, r);
  return rc;
}
int MPI_Testany(int n, MPI_Request r[], int *index, int *flag, MPI_Status *s) {
  const long long before = live_requests(n, r);
  const int rc = PMPI_Testany(n, r, index, flag, s);
  requests -= before - live_requests(n, r);
  return rc;
}
int MPI_Waitsome(int n, MPI_Request r[], int *outcount, int indices[], MPI_Status s[]) {
  const long long before = live_requests(n, r);
  const int rc = PMPI_Waitsome(n, r, outcount, indices, s);
  requests -= before - live_requests(n, r);
  return rc;
}
int MPI_Testsome(int n, MPI_Request r[], int *outcount, int indices[], MPI_Status s[]) {
  const long long before = live_requests(n, r);
  const int rc = PMPI_Testsome(n, r, outcount, indices, s);
  requests -= before - live_requests(n, r);
  return rc;
}

#endif

} // extern "C"
// NOLINTEND(readability-identifier-naming)
