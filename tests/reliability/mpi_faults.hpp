#pragma once
// Fault injection by interposing MPI_Isend, MPI_Irecv and the wait and test calls
// (mpi_faults.cpp, linked into the test executable only). Only MPI_BYTE messages whose tag is
// watched are affected (the executor's), so BLACS and the test's own collectives run normally.
//
// A fault behaves as MPI does under MPI_ERRORS_RETURN: the communicator's error handler is
// called (MPI_Comm_call_errhandler) and the call returns MPI_ERR_OTHER. Were the handler
// MPI_ERRORS_ARE_FATAL, the job would abort: the test also checks the library's handlers.
//
// A post fault makes MPI_Isend / MPI_Irecv fail at once, posting nothing. A completion fault
// lets the request be posted and complete (the data moves), but the wait or test that
// completes it fails. Faults select by peer, tag, call and occurrence: the matching calls
// (posts, or posts of requests whose completion fails) are counted from arm(), the first
// `skip` are let through, then `count` fail.

#include <mpi.h>

#include <cstddef>
#include <vector>

namespace faults {

enum class Mode {
  post,      ///< MPI_Isend / MPI_Irecv with the peer fail at once; nothing is posted
  completion ///< they are posted and complete, but the wait that completes them fails
};

/// The calls a fault selects (bits).
enum Call : unsigned {
  isend = 1,     ///< MPI_Isend fails, nothing posted
  irecv = 2,     ///< MPI_Irecv fails, nothing posted
  wait_send = 4, ///< a send completes, its MPI_Wait* / MPI_Test* fails
  wait_recv = 8, ///< a receive completes (the data arrived), its MPI_Wait* / MPI_Test* fails
  posts = isend | irecv,
  completions = wait_send | wait_recv,
};

struct Fault {
  int peer = -1;                        ///< rank of the communicator used; -1: any peer
  unsigned calls = posts | completions; ///< which calls fail
  std::vector<int> tags;                ///< the watched tags
  long long skip = 0;                   ///< matching calls let through first
  long long count = -1;                 ///< then this many fail; -1: every one
};

/// From now on, on this process, the calls `fault` selects fail.
void arm(const Fault &fault);
/// Several faults at once, each counting its own occurrences.
void arm(const std::vector<Fault> &faults);
/// Every MPI_Isend to / MPI_Irecv from rank `peer` with a tag in [tag_lo, tag_hi] fails as
/// `mode` says.
void arm(int peer, Mode mode, int tag_lo, int tag_hi);
void disarm();
/// Watch messages of any datatype in the tag range, not only MPI_BYTE ones (the ring's direct
/// transport sends strided datatypes). Off by default.
void watch_any_type(bool on);

/// Calls armed fault `k` selected since arm() (failed or let through): with a `skip` beyond
/// reach, a count of the calls it watches.
long long matched(std::size_t k = 0);
/// Faults injected on this process since the start.
long long injected();
/// Watched requests that were posted and are not yet completed or freed.
long long live_requests();

} // namespace faults
