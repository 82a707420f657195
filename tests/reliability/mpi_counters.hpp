#pragma once
// Live MPI handles of this process, counted by interposing the MPI calls that create and free
// them (mpi_counters.cpp, linked into the test executable only): communicators, groups,
// datatypes, requests (created by the non-blocking calls, released when a wait/test completes
// them or MPI_Request_free frees them), reduction ops and infos. Thread-safe.

#include <mpi.h>

#include <ostream>
#include <string>

namespace counters {

struct Snapshot {
  long long comms = 0, groups = 0, types = 0, requests = 0, ops = 0, infos = 0;
  bool operator==(const Snapshot &) const = default;
  [[nodiscard]] std::string describe() const;
};

/// For GoogleTest's messages.
inline void PrintTo(const Snapshot &s, std::ostream *os) {
  *os << s.describe();
}

/// The handles live now (created minus freed since MPI_Init).
Snapshot now();
/// Communicators created since MPI_Init (never decreases): proves the interposition is active.
long long communicators_created();

} // namespace counters
