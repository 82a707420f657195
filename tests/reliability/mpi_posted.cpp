#include "mpi_posted.hpp"

#include <mpi.h>

#include <atomic>

namespace posted {
namespace {
std::atomic<long long> posts{0};
} // namespace

long long messages() {
  return posts.load();
}

void count_post() {
  ++posts;
}

} // namespace posted

// NOLINTBEGIN(readability-identifier-naming): the MPI names, interposed
extern "C" int MPI_Isend(const void *buf, int count, MPI_Datatype type, int dest, int tag,
                         MPI_Comm comm, MPI_Request *request) {
  posted::count_post();
  return PMPI_Isend(buf, count, type, dest, tag, comm, request);
}

extern "C" int MPI_Irecv(void *buf, int count, MPI_Datatype type, int source, int tag,
                         MPI_Comm comm, MPI_Request *request) {
  posted::count_post();
  return PMPI_Irecv(buf, count, type, source, tag, comm, request);
}
// NOLINTEND(readability-identifier-naming)
