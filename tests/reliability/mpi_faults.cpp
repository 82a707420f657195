// PMPI interposition for mpi_faults.hpp. The executable's definitions of MPI_Isend, ... take
// precedence over libmpi's for every caller in the process (libredist included); each one
// calls the PMPI_ version.

#include "mpi_faults.hpp"

#include <algorithm>
#include <map>
#include <mutex>
#include <vector>

namespace faults {
namespace {

struct State {
  std::mutex mutex;
  bool armed = false;
  int peer = -1;
  Mode mode = Mode::post;
  int tag_lo = 0, tag_hi = -1;
  long long injected = 0;
  bool any_type = false; // watch_any_type()
  /// Live requests in the tag range, and whether their completion must fail.
  std::map<MPI_Request, std::pair<MPI_Comm, bool>> live;
};

State &state() {
  static State s;
  return s;
}

/// The executor's messages: bytes with a tag in the range.
bool watched(const State &s, MPI_Datatype type, int tag) {
  return (type == MPI_BYTE || s.any_type) && tag >= s.tag_lo && tag <= s.tag_hi;
}

int fail(State &s, MPI_Comm comm) {
  ++s.injected;
  PMPI_Comm_call_errhandler(comm, MPI_ERR_OTHER);
  return MPI_ERR_OTHER;
}

template <class Post>
int post(MPI_Datatype type, int peer, int tag, MPI_Comm comm, MPI_Request *r, Post &&real) {
  State &s = state();
  std::lock_guard lock(s.mutex);
  const bool targeted = s.armed && watched(s, type, tag) && peer == s.peer;
  if (targeted && s.mode == Mode::post) return fail(s, comm);
  const int rc = real();
  if (rc == MPI_SUCCESS && watched(s, type, tag)) s.live[*r] = {comm, targeted};
  return rc;
}

/// Before a wait: the handles, to see afterwards which ones completed.
std::vector<MPI_Request> snapshot(int n, const MPI_Request *r) {
  return {r, r + n};
}

/// After a wait (or a free: `may_fail` false) that completed request handles before[k] (now
/// MPI_REQUEST_NULL): forget them; MPI_ERR_OTHER if one of them was targeted by a completion
/// fault, else rc.
int completed(int rc, const std::vector<MPI_Request> &before, const MPI_Request *after,
              bool may_fail = true) {
  State &s = state();
  std::lock_guard lock(s.mutex);
  int result = rc;
  for (std::size_t k = 0; k < before.size(); ++k) {
    if (before[k] == MPI_REQUEST_NULL || after[k] != MPI_REQUEST_NULL) continue;
    const auto it = s.live.find(before[k]);
    if (it == s.live.end()) continue;
    if (may_fail && it->second.second && result == MPI_SUCCESS) result = fail(s, it->second.first);
    s.live.erase(it);
  }
  return result;
}

} // namespace

void arm(int peer, Mode mode, int tag_lo, int tag_hi) {
  State &s = state();
  std::lock_guard lock(s.mutex);
  s.armed = true;
  s.peer = peer;
  s.mode = mode;
  s.tag_lo = tag_lo;
  s.tag_hi = tag_hi;
}

void disarm() {
  State &s = state();
  std::lock_guard lock(s.mutex);
  s.armed = false;
}

void watch_any_type(bool on) {
  State &s = state();
  std::lock_guard lock(s.mutex);
  s.any_type = on;
}

long long injected() {
  State &s = state();
  std::lock_guard lock(s.mutex);
  return s.injected;
}

long long live_requests() {
  State &s = state();
  std::lock_guard lock(s.mutex);
  return static_cast<long long>(s.live.size());
}

} // namespace faults

// NOLINTBEGIN(readability-identifier-naming): MPI names
extern "C" {

int MPI_Isend(const void *buf, int count, MPI_Datatype type, int dest, int tag, MPI_Comm comm,
              MPI_Request *r) {
  return faults::post(type, dest, tag, comm, r,
                      [&] { return PMPI_Isend(buf, count, type, dest, tag, comm, r); });
}

int MPI_Irecv(void *buf, int count, MPI_Datatype type, int source, int tag, MPI_Comm comm,
              MPI_Request *r) {
  return faults::post(type, source, tag, comm, r,
                      [&] { return PMPI_Irecv(buf, count, type, source, tag, comm, r); });
}

int MPI_Wait(MPI_Request *r, MPI_Status *status) {
  const auto before = faults::snapshot(1, r);
  return faults::completed(PMPI_Wait(r, status), before, r);
}

int MPI_Waitany(int n, MPI_Request r[], int *index, MPI_Status *status) {
  const auto before = faults::snapshot(n, r);
  return faults::completed(PMPI_Waitany(n, r, index, status), before, r);
}

int MPI_Waitall(int n, MPI_Request r[], MPI_Status statuses[]) {
  const auto before = faults::snapshot(n, r);
  return faults::completed(PMPI_Waitall(n, r, statuses), before, r);
}

int MPI_Request_free(MPI_Request *r) {
  const auto before = faults::snapshot(1, r);
  const int rc = PMPI_Request_free(r);
  faults::completed(MPI_SUCCESS, before, r, false);
  return rc;
}

} // extern "C"
// NOLINTEND(readability-identifier-naming)
