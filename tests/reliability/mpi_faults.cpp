// PMPI interposition for mpi_faults.hpp. The executable's definitions of MPI_Isend, ... take
// precedence over libmpi's for every caller in the process (libredist included); each one
// calls the PMPI_ version. The waits and tests here also complete the nonblocking collectives
// that mpi_coll_faults.cpp tracks (their state lives here).

#include "mpi_faults.hpp"

#include <algorithm>
#include <cstring>
#include <map>
#include <mutex>
#include <set>
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
  /// Live requests with a tracked tag, and whether their completion must fail. A handle may be
  /// live more than once: Open MPI hands out one shared handle for sends that completed at once.
  std::multimap<MPI_Request, std::pair<MPI_Comm, bool>> live;

  // Collective faults (mpi_coll_faults.cpp).
  bool coll_armed = false;
  CollFault coll_fault;
  std::vector<unsigned> coll_log; ///< the calls selected since arm_collectives()
  long long coll_injected = 0;
  /// A nonblocking collective posted and not yet completed: what its completion does.
  struct CollRequest {
    MPI_Comm comm = MPI_COMM_NULL;
    bool fail = false;
    void *garbage = nullptr; ///< receive buffer to fill with 0x5A on a failed completion
    std::size_t bytes = 0;
    MPI_Comm *idup = nullptr; ///< MPI_Comm_idup's new communicator, freed on a failure
  };
  std::map<MPI_Request, CollRequest> coll_live;
  std::set<MPI_Comm> comms; ///< communicators made and not yet freed
  long long comms_made = 0; ///< communicators made since the start
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
    s.live.emplace(*r, std::pair{comm, selected(s, type, peer, tag, send ? wait_send : wait_recv)});
  }
  return rc;
}

/// Before a wait or test: the handles, to see afterwards which ones completed.
std::vector<MPI_Request> snapshot(int n, const MPI_Request *r) {
  return {r, r + n};
}

/// A nonblocking collective whose completion was selected has completed: its outputs made
/// garbage; MPI_ERR_OTHER.
int coll_completion_fails(State &s, State::CollRequest &r) {
  if (r.garbage != nullptr) std::memset(r.garbage, 0x5A, r.bytes);
  if (r.idup != nullptr && *r.idup != MPI_COMM_NULL) {
    s.comms.erase(*r.idup);
    PMPI_Comm_free(r.idup);
  }
  ++s.coll_injected;
  return fail(s, r.comm);
}

/// After a wait or test (or a free: `may_fail` false) that completed request handles
/// before[k] (now MPI_REQUEST_NULL): forget them; MPI_ERR_OTHER if one of them was targeted by
/// a completion fault, else rc.
/// Whether this MPI_Waitany is selected by a waitany_unnamed fault (counted here): armed, and
/// one of its requests watched; `comm` then names the communicator of one.
bool unnamed_selected(int n, const MPI_Request *r, MPI_Comm &comm) {
  State &s = state();
  std::lock_guard lock(s.mutex);
  if (!s.armed) return false;
  const MPI_Request *watched =
      std::find_if(r, r + n, [&](MPI_Request q) { return s.live.count(q) != 0; });
  if (watched == r + n) return false;
  bool hit = false;
  for (std::size_t k = 0; k < s.armed_faults.size(); ++k) {
    const Fault &f = s.armed_faults[k];
    if ((f.calls & waitany_unnamed) == 0) continue;
    const long long m = s.seen[k]++;
    hit = hit || (m >= f.skip && (f.count < 0 || m < f.skip + f.count));
  }
  if (hit) {
    comm = s.live.find(*watched)->second.first;
    ++s.injected;
  }
  return hit;
}

int completed(int rc, const std::vector<MPI_Request> &before, const MPI_Request *after,
              bool may_fail = true) {
  State &s = state();
  std::lock_guard lock(s.mutex);
  int result = rc;
  for (std::size_t k = 0; k < before.size(); ++k) {
    if (before[k] == MPI_REQUEST_NULL || after[k] != MPI_REQUEST_NULL) continue;
    // Of the posts that share this handle, one whose completion must fail goes first.
    const auto [first, last] = s.live.equal_range(before[k]);
    auto it = std::find_if(first, last, [](const auto &entry) { return entry.second.second; });
    if (it == last) it = first;
    if (it != last) {
      if (may_fail && it->second.second && result == MPI_SUCCESS) {
        result = fail(s, it->second.first);
      }
      s.live.erase(it);
    }
    const auto coll = s.coll_live.find(before[k]);
    if (coll != s.coll_live.end()) {
      // A failed collective completion fails even when another request of the same call
      // failed already: its outputs must be garbage either way.
      if (may_fail && coll->second.fail) {
        const int rc_coll = coll_completion_fails(s, coll->second);
        if (result == MPI_SUCCESS) result = rc_coll;
      }
      s.coll_live.erase(coll);
    }
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

const char *coll_call_name(unsigned call) {
  switch (call) {
  case allreduce:
    return "MPI_Allreduce";
  case iallreduce:
    return "MPI_Iallreduce";
  case allgather:
    return "MPI_Allgather";
  case iallgather:
    return "MPI_Iallgather";
  case alltoall:
    return "MPI_Alltoall";
  case ialltoall:
    return "MPI_Ialltoall";
  case barrier:
    return "MPI_Barrier";
  case ibarrier:
    return "MPI_Ibarrier";
  case comm_dup:
    return "MPI_Comm_dup";
  case comm_idup:
    return "MPI_Comm_idup";
  case comm_split:
    return "MPI_Comm_split";
  case comm_split_type:
    return "MPI_Comm_split_type";
  case comm_set_attr:
    return "MPI_Comm_set_attr";
  case comm_get_attr:
    return "MPI_Comm_get_attr";
  default:
    return "MPI_(several calls)";
  }
}

bool not_done_applies(unsigned call) {
  return (call & (nonblocking_collectives | comm_idup | attributes)) != 0 &&
         (call & (blocking_collectives | comm_creations)) == 0;
}

void arm_collectives(const CollFault &fault) {
  State &s = state();
  std::lock_guard lock(s.mutex);
  s.coll_armed = true;
  s.coll_fault = fault;
  s.coll_log.clear();
}

void disarm_collectives() {
  State &s = state();
  std::lock_guard lock(s.mutex);
  s.coll_armed = false;
}

long long collectives_matched() {
  State &s = state();
  std::lock_guard lock(s.mutex);
  return static_cast<long long>(s.coll_log.size());
}

std::vector<unsigned> collectives_log() {
  State &s = state();
  std::lock_guard lock(s.mutex);
  return s.coll_log;
}

long long collectives_injected() {
  State &s = state();
  std::lock_guard lock(s.mutex);
  return s.coll_injected;
}

long long live_collective_requests() {
  State &s = state();
  std::lock_guard lock(s.mutex);
  return static_cast<long long>(s.coll_live.size());
}

long long live_communicators() {
  State &s = state();
  std::lock_guard lock(s.mutex);
  return static_cast<long long>(s.comms.size());
}

long long communicators_made() {
  State &s = state();
  std::lock_guard lock(s.mutex);
  return s.comms_made;
}

namespace detail {

bool coll_selected(unsigned call, CollMode &mode) {
  State &s = state();
  std::lock_guard lock(s.mutex);
  if (!s.coll_armed || (s.coll_fault.calls & call) == 0) return false;
  const auto n = static_cast<long long>(s.coll_log.size());
  s.coll_log.push_back(call);
  mode = s.coll_fault.mode;
  return n >= s.coll_fault.skip &&
         (s.coll_fault.count < 0 || n < s.coll_fault.skip + s.coll_fault.count);
}

int coll_fail(MPI_Comm comm) {
  State &s = state();
  std::lock_guard lock(s.mutex);
  ++s.coll_injected;
  return fail(s, comm);
}

void coll_posted(MPI_Request request, MPI_Comm comm, bool fail_it, void *garbage, std::size_t bytes,
                 MPI_Comm *idup) {
  State &s = state();
  std::lock_guard lock(s.mutex);
  s.coll_live[request] = State::CollRequest{comm, fail_it, garbage, bytes, idup};
}

void comm_made(MPI_Comm comm) {
  if (comm == MPI_COMM_NULL) return;
  State &s = state();
  std::lock_guard lock(s.mutex);
  s.comms.insert(comm);
  ++s.comms_made;
}

void comm_freed(MPI_Comm comm) {
  State &s = state();
  std::lock_guard lock(s.mutex);
  s.comms.erase(comm);
}

} // namespace detail

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
  MPI_Comm comm = MPI_COMM_NULL;
  if (faults::unnamed_selected(n, r, comm)) {
    *index = MPI_UNDEFINED;
    PMPI_Comm_call_errhandler(comm, MPI_ERR_OTHER);
    return MPI_ERR_OTHER;
  }
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

int MPI_Testall(int n, MPI_Request r[], int *flag, MPI_Status statuses[]) {
  const auto before = faults::snapshot(n, r);
  return faults::completed(PMPI_Testall(n, r, flag, statuses), before, r);
}

int MPI_Testsome(int n, MPI_Request r[], int *outcount, int indices[], MPI_Status statuses[]) {
  const auto before = faults::snapshot(n, r);
  return faults::completed(PMPI_Testsome(n, r, outcount, indices, statuses), before, r);
}

int MPI_Request_free(MPI_Request *r) {
  const auto before = faults::snapshot(1, r);
  const int rc = PMPI_Request_free(r);
  faults::completed(MPI_SUCCESS, before, r, false);
  return rc;
}

} // extern "C"
// NOLINTEND(readability-identifier-naming)
