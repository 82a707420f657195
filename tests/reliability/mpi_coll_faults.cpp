// PMPI interposition of the collective, communicator and attribute calls for the collective
// faults of mpi_faults.hpp (their state, and the completion of nonblocking collectives, live in
// mpi_faults.cpp, which must be linked too). Kept apart from mpi_faults.cpp because other test
// executables link that file with definitions of their own of MPI_Comm_dup, MPI_Allreduce, ...
//
// Each call asks whether it is selected (only while a collective fault is armed); if not, it
// calls the PMPI_ version (communicators made and freed are counted either way, and nonblocking
// collectives are tracked until their completion). A selected call fails as its mode says:
// not_done without calling PMPI, done after the PMPI call with its outputs made garbage.

#include "mpi_faults.hpp"

#include <cstdint>
#include <cstring>

namespace {

using faults::CollMode;
namespace detail = faults::detail;

/// Bytes of `count` elements of `type` as a receive buffer holds them.
std::size_t bytes_of(int count, MPI_Datatype type) {
  MPI_Aint lb = 0;
  MPI_Aint extent = 0;
  if (count <= 0 || PMPI_Type_get_extent(type, &lb, &extent) != MPI_SUCCESS || extent <= 0) return 0;
  return static_cast<std::size_t>(count) * static_cast<std::size_t>(extent);
}

int comm_size(MPI_Comm comm) {
  int size = 0;
  PMPI_Comm_size(comm, &size);
  return size;
}

void scramble(void *buf, std::size_t bytes) {
  if (buf != nullptr && bytes > 0) std::memset(buf, 0x5A, bytes);
}

/// A blocking collective: `real` called unless the fault is not_done; on a selected call, the
/// receive buffer (`bytes` at `recv`) filled with garbage and the error returned.
template <class Real> int blocking(unsigned call, MPI_Comm comm, void *recv, std::size_t bytes, Real &&real) {
  CollMode mode{};
  if (!detail::coll_selected(call, mode)) return real();
  if (mode == CollMode::not_done) return detail::coll_fail(comm);
  real();
  scramble(recv, bytes);
  return detail::coll_fail(comm);
}

/// A nonblocking collective: not_done posts nothing (*request = MPI_REQUEST_NULL); done posts
/// it and its completion fails.
template <class Real>
int nonblocking(unsigned call, MPI_Comm comm, void *recv, std::size_t bytes, MPI_Request *request,
                Real &&real) {
  CollMode mode{};
  const bool selected = detail::coll_selected(call, mode);
  if (selected && mode == CollMode::not_done) {
    *request = MPI_REQUEST_NULL;
    return detail::coll_fail(comm);
  }
  const int rc = real();
  if (rc == MPI_SUCCESS) detail::coll_posted(*request, comm, selected, recv, bytes, nullptr);
  return rc;
}

/// A blocking communicator creation: not_done makes none; done makes it, frees it again and
/// returns MPI_COMM_NULL.
template <class Real> int creation(unsigned call, MPI_Comm comm, MPI_Comm *out, Real &&real) {
  CollMode mode{};
  const bool selected = detail::coll_selected(call, mode);
  if (selected && mode == CollMode::not_done) {
    *out = MPI_COMM_NULL;
    return detail::coll_fail(comm);
  }
  const int rc = real();
  if (!selected) {
    if (rc == MPI_SUCCESS) detail::comm_made(*out);
    return rc;
  }
  if (rc == MPI_SUCCESS && *out != MPI_COMM_NULL) PMPI_Comm_free(out);
  *out = MPI_COMM_NULL;
  return detail::coll_fail(comm);
}

} // namespace

// NOLINTBEGIN(readability-identifier-naming): MPI names
extern "C" {

int MPI_Allreduce(const void *send, void *recv, int count, MPI_Datatype type, MPI_Op op,
                  MPI_Comm comm) {
  return blocking(faults::allreduce, comm, recv, bytes_of(count, type),
                  [&] { return PMPI_Allreduce(send, recv, count, type, op, comm); });
}

int MPI_Iallreduce(const void *send, void *recv, int count, MPI_Datatype type, MPI_Op op,
                   MPI_Comm comm, MPI_Request *request) {
  return nonblocking(faults::iallreduce, comm, recv, bytes_of(count, type), request,
                     [&] { return PMPI_Iallreduce(send, recv, count, type, op, comm, request); });
}

int MPI_Allgather(const void *send, int send_count, MPI_Datatype send_type, void *recv,
                  int recv_count, MPI_Datatype recv_type, MPI_Comm comm) {
  return blocking(faults::allgather, comm, recv, bytes_of(recv_count * comm_size(comm), recv_type),
                  [&] {
                    return PMPI_Allgather(send, send_count, send_type, recv, recv_count,
                                          recv_type, comm);
                  });
}

int MPI_Iallgather(const void *send, int send_count, MPI_Datatype send_type, void *recv,
                   int recv_count, MPI_Datatype recv_type, MPI_Comm comm, MPI_Request *request) {
  return nonblocking(faults::iallgather, comm, recv,
                     bytes_of(recv_count * comm_size(comm), recv_type), request, [&] {
                       return PMPI_Iallgather(send, send_count, send_type, recv, recv_count,
                                              recv_type, comm, request);
                     });
}

int MPI_Alltoall(const void *send, int send_count, MPI_Datatype send_type, void *recv,
                 int recv_count, MPI_Datatype recv_type, MPI_Comm comm) {
  return blocking(faults::alltoall, comm, recv, bytes_of(recv_count * comm_size(comm), recv_type),
                  [&] {
                    return PMPI_Alltoall(send, send_count, send_type, recv, recv_count, recv_type,
                                         comm);
                  });
}

int MPI_Ialltoall(const void *send, int send_count, MPI_Datatype send_type, void *recv,
                  int recv_count, MPI_Datatype recv_type, MPI_Comm comm, MPI_Request *request) {
  return nonblocking(faults::ialltoall, comm, recv,
                     bytes_of(recv_count * comm_size(comm), recv_type), request, [&] {
                       return PMPI_Ialltoall(send, send_count, send_type, recv, recv_count,
                                             recv_type, comm, request);
                     });
}

int MPI_Barrier(MPI_Comm comm) {
  return blocking(faults::barrier, comm, nullptr, 0, [&] { return PMPI_Barrier(comm); });
}

int MPI_Ibarrier(MPI_Comm comm, MPI_Request *request) {
  return nonblocking(faults::ibarrier, comm, nullptr, 0, request,
                     [&] { return PMPI_Ibarrier(comm, request); });
}

int MPI_Comm_dup(MPI_Comm comm, MPI_Comm *out) {
  return creation(faults::comm_dup, comm, out, [&] { return PMPI_Comm_dup(comm, out); });
}

int MPI_Comm_split(MPI_Comm comm, int color, int key, MPI_Comm *out) {
  return creation(faults::comm_split, comm, out,
                  [&] { return PMPI_Comm_split(comm, color, key, out); });
}

int MPI_Comm_split_type(MPI_Comm comm, int type, int key, MPI_Info info, MPI_Comm *out) {
  return creation(faults::comm_split_type, comm, out,
                  [&] { return PMPI_Comm_split_type(comm, type, key, info, out); });
}

int MPI_Comm_idup(MPI_Comm comm, MPI_Comm *out, MPI_Request *request) {
  CollMode mode{};
  const bool selected = detail::coll_selected(faults::comm_idup, mode);
  if (selected && mode == CollMode::not_done) {
    *out = MPI_COMM_NULL;
    *request = MPI_REQUEST_NULL;
    return detail::coll_fail(comm);
  }
  const int rc = PMPI_Comm_idup(comm, out, request);
  if (rc == MPI_SUCCESS) {
    detail::comm_made(*out);
    detail::coll_posted(*request, comm, selected, nullptr, 0, out);
  }
  return rc;
}

int MPI_Comm_free(MPI_Comm *comm) {
  if (comm != nullptr) detail::comm_freed(*comm);
  return PMPI_Comm_free(comm);
}

int MPI_Comm_set_attr(MPI_Comm comm, int key, void *value) {
  CollMode mode{};
  if (!detail::coll_selected(faults::comm_set_attr, mode)) {
    return PMPI_Comm_set_attr(comm, key, value);
  }
  if (mode == CollMode::done) PMPI_Comm_set_attr(comm, key, value);
  return detail::coll_fail(comm);
}

int MPI_Comm_get_attr(MPI_Comm comm, int key, void *value, int *flag) {
  CollMode mode{};
  if (!detail::coll_selected(faults::comm_get_attr, mode)) {
    return PMPI_Comm_get_attr(comm, key, value, flag);
  }
  if (mode == CollMode::not_done) {
    *flag = 0;
  } else {
    PMPI_Comm_get_attr(comm, key, value, flag);
    // Garbage: found, with a value no attribute has.
    *flag = 1;
    const auto garbage = static_cast<std::uintptr_t>(0x5A5A5A5A5A5A5A5AULL);
    void *pointer = nullptr;
    std::memcpy(&pointer, &garbage, sizeof pointer);
    std::memcpy(value, &pointer, sizeof pointer);
  }
  return detail::coll_fail(comm);
}

} // extern "C"
// NOLINTEND(readability-identifier-naming)
