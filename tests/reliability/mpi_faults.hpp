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
  /// an MPI_Waitany over requests of which one at least is watched fails at once, naming no
  /// request (index MPI_UNDEFINED) and completing nothing (tags and peer are not looked at)
  waitany_unnamed = 16,
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

/// The hook of a test that runs executions 0, 1, 2, ... of one plan (called with e before
/// execution e and with -1 after the last): on `rank` 0, the completion of one receive of the
/// executor's data or addresses (tags 7411 and 7411 + 16) fails in execution 1.
inline auto one_receive_fails_in_second_execution(int rank) {
  return [rank](int e) {
    if (e == 1 && rank == 0) {
      Fault f;
      f.calls = wait_recv;
      f.tags = {7411, 7411 + 16};
      f.count = 1;
      arm(f);
    } else if (e == -1) {
      disarm();
    }
  };
}
/// Watched requests that were posted and are not yet completed or freed.
long long live_requests();

// ---------------------------------------------------------------------------------------------
// Collective, communicator and attribute faults. The calls themselves are interposed by
// mpi_coll_faults.cpp (link it with mpi_faults.cpp to use them; it defines MPI_Comm_dup, ...,
// which mpi_counters.cpp defines too: an executable that links both builds mpi_counters.cpp with
// REDIST_COUNTERS_WITH_COLL_FAULTS, as the soak does); the completion of nonblocking
// collectives goes through the waits and tests of mpi_faults.cpp.
//
// As with point-to-point faults, a failing call calls the communicator's error handler
// (MPI_Comm_call_errhandler) and returns MPI_ERR_OTHER. Only calls made while a collective
// fault is armed are counted or failed: a test arms right before the library's call and
// disarms right after, so its own collectives are never touched.

/// The calls a collective fault selects (bits).
enum CollCall : unsigned {
  allreduce = 1U << 0,
  iallreduce = 1U << 1,
  allgather = 1U << 2,
  iallgather = 1U << 3,
  alltoall = 1U << 4,
  ialltoall = 1U << 5,
  barrier = 1U << 6,
  ibarrier = 1U << 7,
  comm_dup = 1U << 8,
  comm_idup = 1U << 9,
  comm_split = 1U << 10,
  comm_split_type = 1U << 11,
  comm_set_attr = 1U << 12,
  comm_get_attr = 1U << 13,
  blocking_collectives = allreduce | allgather | alltoall | barrier,
  nonblocking_collectives = iallreduce | iallgather | ialltoall | ibarrier,
  comm_creations = comm_dup | comm_split | comm_split_type, ///< blocking
  attributes = comm_set_attr | comm_get_attr,
  all_collective_calls =
      blocking_collectives | nonblocking_collectives | comm_creations | comm_idup | attributes,
};

/// "MPI_Allreduce", ... for one bit of CollCall.
const char *coll_call_name(unsigned call);
/// Whether a not_done fault of `call` leaves the caller's peers able to finish (a nonblocking
/// post or an attribute call; a blocking collective failing before it starts hangs them).
bool not_done_applies(unsigned call);

enum class CollMode {
  /// The call returns the error without doing anything: a nonblocking post posts nothing
  /// (*request = MPI_REQUEST_NULL), a communicator is not made (*newcomm = MPI_COMM_NULL),
  /// MPI_Comm_set_attr sets nothing, MPI_Comm_get_attr finds nothing (flag 0).
  not_done,
  /// The call does its work, then returns the error with its outputs made garbage: a blocking
  /// collective's receive buffer filled with 0x5A bytes; a nonblocking collective is posted,
  /// and the wait or test that completes it fails with the receive buffer filled; a new
  /// communicator is freed again (*newcomm = MPI_COMM_NULL; MPI_Comm_idup: at completion);
  /// MPI_Comm_set_attr has set the attribute; MPI_Comm_get_attr reports flag 1 and a garbage
  /// value.
  done,
};

struct CollFault {
  unsigned calls = all_collective_calls; ///< which calls are selected (and counted)
  CollMode mode = CollMode::done;
  long long skip = 0;   ///< selected calls let through first
  long long count = -1; ///< then this many fail; -1: every one
};

/// From now on, on this process, the calls `fault` selects fail (replaces any collective fault
/// armed before; point-to-point faults are separate).
void arm_collectives(const CollFault &fault);
void disarm_collectives();
/// Calls the armed collective fault selected since arm_collectives() (failed or let through):
/// with a `skip` beyond reach, a count of the positions.
long long collectives_matched();
/// The CollCall bit of each call selected since arm_collectives(), in order.
std::vector<unsigned> collectives_log();
/// Collective faults injected on this process since the start.
long long collectives_injected();
/// Nonblocking collectives (and MPI_Comm_idup) posted and not yet completed or freed, armed or
/// not.
long long live_collective_requests();
/// Communicators made by MPI_Comm_dup / _idup / _split / _split_type (any caller, armed or not)
/// and not yet freed by MPI_Comm_free.
long long live_communicators();
/// Communicators made since the start (never decreases; comm_made() counts them).
long long communicators_made();

/// Used by mpi_coll_faults.cpp.
namespace detail {
/// Whether the call is selected and must fail (counted when armed).
bool coll_selected(unsigned call, CollMode &mode);
/// MPI_Comm_call_errhandler(comm, MPI_ERR_OTHER), counted; returns MPI_ERR_OTHER.
int coll_fail(MPI_Comm comm);
/// Track a nonblocking collective posted: at its completion, if `fail`, fill `bytes` bytes at
/// `garbage` with 0x5A and free *idup (when not null), then fail.
void coll_posted(MPI_Request request, MPI_Comm comm, bool fail, void *garbage, std::size_t bytes,
                 MPI_Comm *idup);
void comm_made(MPI_Comm comm);
void comm_freed(MPI_Comm comm);
} // namespace detail

} // namespace faults
