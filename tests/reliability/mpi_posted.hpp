#pragma once
// The point-to-point messages a test program posts (MPI_Isend and MPI_Irecv, interposed by
// mpi_posted.cpp in the programs that link it).

namespace posted {

/// MPI_Isend and MPI_Irecv calls of this process (every thread) since it started.
long long messages();
/// Counts one (the interposed calls).
void count_post();

} // namespace posted
