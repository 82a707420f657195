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
  std::vector<Fault> armed_faults;
  std::vector<long long> seen; ///< per fault: matching calls since arm()
  long long injected = 0;
  bool any_type = false; ///< watch_any_type(): not only MPI_BYTE messages
  /// Every tag of requests tracked (the union of what was ever armed: requests outlive arm).
  std::vector<int> tracked;
  /// Live requests with a tracked tag, and whether their completion must fail.
  std::map<MPI_Request, std::pair<MPI_Comm, bool>> live;
};

State &state() {
  static State s;
  return s;
}

bool tracked(const State &s, MPI_Datatype type, int tag) {
  return (type == MPI_BYTE || s.any_type) &&
         std::find(s.tracked.begin(), s.tracked.end(), tag) != s.tracked.end();
}

/// Whether this call is selected: armed, its tag, peer and call watched, and within the
/// occurrences to fail (counted here).
bool selected(State &s, MPI_Datatype type, int peer, int tag, unsigned call) {
  if (!s.armed || (type != MPI_BYTE && !s.any_type)) return false;
  bool hit = false;
  for (std::size_t k = 0; k < s.armed_faults.size(); ++k) {
    const Fault &f = s.armed_faults[k];
    if ((f.calls & call) == 0) continue;
    if (std::find(f.tags.begin(), f.tags.end(), tag) == f.tags.end()) continue;
    if (f.peer >= 0 && peer != f.peer) continue;
    const long long n = s.seen[k]++;
    hit = hit || (n >= f.skip && (f.count < 0 || n < f.skip + f.count));
  }
  return hit;
}

int fail(State &s, MPI_Comm comm) {
  ++s.injected;
  PMPI_Comm_call_errhandler(comm, MPI_ERR_OTHER);
  return MPI_ERR_OTHER;
}

template <class Post>
int post(bool send, MPI_Datatype type, int peer, int tag, MPI_Comm comm, MPI_Request *r,
         Post &&real) {
  State &s = state();
  std::lock_guard lock(s.mutex);
  if (selected(s, type, peer, tag, send ? isend : irecv)) return fail(s, comm);
  const int rc = real();
  if (rc == MPI_SUCCESS && tracked(s, type, tag)) {
    s.live[*r] = {comm, selected(s, type, peer, tag, send ? wait_send : wait_recv)};
  }
  return rc;
}

/// Before a wait or test: the handles, to see afterwards which ones completed.
std::vector<MPI_Request> snapshot(int n, const MPI_Request *r) {
  return {r, r + n};
}

/// After a wait or test (or a free: `may_fail` false) that completed request handles
/// before[k] (now MPI_REQUEST_NULL): forget them; MPI_ERR_OTHER if one of them was targeted by
/// a completion fault, else rc.
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

void arm(const std::vector<Fault> &list) {
  State &s = state();
  std::lock_guard lock(s.mutex);
  s.armed = true;
  s.armed_faults = list;
  s.seen.assign(list.size(), 0);
  for (const Fault &fault : list) {
    for (const int tag : fault.tags) {
      if (std::find(s.tracked.begin(), s.tracked.end(), tag) == s.tracked.end()) {
        s.tracked.push_back(tag);
      }
    }
  }
}

void arm(const Fault &fault) {
  arm(std::vector<Fault>{fault});
}

void arm(int peer, Mode mode, int tag_lo, int tag_hi) {
  Fault f;
  f.peer = peer;
  f.calls = mode == Mode::post ? posts : completions;
  for (int tag = tag_lo; tag <= tag_hi; ++tag)
    f.tags.push_back(tag);
  arm(f);
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

long long matched(std::size_t k) {
  State &s = state();
  std::lock_guard lock(s.mutex);
  return k < s.seen.size() ? s.seen[k] : 0;
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
  return faults::post(true, type, dest, tag, comm, r,
                      [&] { return PMPI_Isend(buf, count, type, dest, tag, comm, r); });
}

int MPI_Irecv(void *buf, int count, MPI_Datatype type, int source, int tag, MPI_Comm comm,
              MPI_Request *r) {
  return faults::post(false, type, source, tag, comm, r,
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

int MPI_Waitsome(int n, MPI_Request r[], int *outcount, int indices[], MPI_Status statuses[]) {
  const auto before = faults::snapshot(n, r);
  return faults::completed(PMPI_Waitsome(n, r, outcount, indices, statuses), before, r);
}

int MPI_Test(MPI_Request *r, int *flag, MPI_Status *status) {
  const auto before = faults::snapshot(1, r);
  return faults::completed(PMPI_Test(r, flag, status), before, r);
}

int MPI_Testany(int n, MPI_Request r[], int *index, int *flag, MPI_Status *status) {
  const auto before = faults::snapshot(n, r);
  return faults::completed(PMPI_Testany(n, r, index, flag, status), before, r);
}

int MPI_Request_free(MPI_Request *r) {
  const auto before = faults::snapshot(1, r);
  const int rc = PMPI_Request_free(r);
  faults::completed(MPI_SUCCESS, before, r, false);
  return rc;
}

} // extern "C"
// NOLINTEND(readability-identifier-naming)
