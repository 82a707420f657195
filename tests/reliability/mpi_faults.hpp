#pragma once
// Fault injection by interposing MPI_Isend, MPI_Irecv and the wait calls (mpi_faults.cpp,
// linked into the test executable only). Only MPI_BYTE messages whose tag lies in the armed
// range are watched (the executor's), so BLACS and the test's own collectives run normally.
//
// A fault behaves as MPI does under MPI_ERRORS_RETURN: the communicator's error handler is
// called (MPI_Comm_call_errhandler) and the call returns MPI_ERR_OTHER. Were the handler
// MPI_ERRORS_ARE_FATAL, the job would abort: the test also checks the library's handlers.

#include <mpi.h>

namespace faults {

enum class Mode {
  post,      ///< MPI_Isend / MPI_Irecv with the peer fail at once; nothing is posted
  completion ///< they are posted and complete, but the wait that completes them fails
};

/// From now on, on this process: every MPI_Isend to / MPI_Irecv from rank `peer` (of the
/// communicator used) with a tag in [tag_lo, tag_hi] fails as `mode` says.
void arm(int peer, Mode mode, int tag_lo, int tag_hi);
void disarm();
/// Watch messages of any datatype in the tag range, not only MPI_BYTE ones (the ring's direct
/// transport sends strided datatypes). Off by default.
void watch_any_type(bool on);

/// Faults injected on this process since the start.
long long injected();
/// Watched requests that were posted and are not yet completed or freed.
long long live_requests();

} // namespace faults
