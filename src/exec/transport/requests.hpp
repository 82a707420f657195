#pragma once
// The executor's list of non-blocking MPI requests for one step (or the whole execution), with
// what each one moves, and the record of the first failure of an execution. Transports post
// through it; the executor waits on it and hands each completed request to its transport.

#include "index.hpp"

#include <mpi.h>

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

namespace redist {

class Transport;

struct RequestInfo {
  Transport *transport = nullptr; // told of the completion; null: nothing to do
  std::uint8_t kind = 0;          // the transport's own meaning
  int peer = 0;                   // index into plan.recvs or plan.sends, as `kind` says
  int rank = -1;
  Index lo = 0; // message elements [lo, hi) the request moves
  Index hi = 0;
  std::byte *buffer = nullptr;
};

class Requests {
public:
  /// `capacity`: requests reserved up front (no allocation while executing).
  Requests(MPI_Comm comm, std::size_t capacity);

  /// Post a non-blocking send or receive of `bytes` with `tag`, in several messages when larger
  /// than the message limit; each request is appended with `info`.
  void post(bool send, std::byte *buffer, std::size_t bytes, int tag, const RequestInfo &info);
  void clear();
  [[nodiscard]] std::size_t size() const { return requests_.size(); }
  [[nodiscard]] const RequestInfo &info(std::size_t k) const { return info_[k]; }

  /// Wait for requests [first, end) one at a time: done(k) for each one that completed, a
  /// failure recorded against its peer rank.
  template <class Done>
  void wait_each(std::size_t first, std::size_t end, const char *what, Done done);

  /// Remember the first MPI failure of this execution.
  void record(int mpi_code, const char *what, int peer);
  /// Remember `message` unless a failure was recorded before.
  void fail(const std::string &message);
  [[nodiscard]] const std::string &failure() const { return failure_; }
  void forget_failure() { failure_.clear(); }

  static void set_max_message_bytes(std::size_t bytes);

private:
  MPI_Comm comm_;
  std::vector<MPI_Request> requests_;
  std::vector<RequestInfo> info_;
  std::string failure_; // first MPI failure of the running execution, "" if none
};

template <class Done>
void Requests::wait_each(std::size_t first, std::size_t end, const char *what, Done done) {
  while (first < end) {
    int index = MPI_UNDEFINED;
    MPI_Status status;
    const int rc =
        MPI_Waitany(static_cast<int>(end - first), requests_.data() + first, &index, &status);
    if (index == MPI_UNDEFINED) {
      record(rc, what, -1); // no request left, or MPI cannot say which failed
      return;
    }
    const std::size_t k = first + static_cast<std::size_t>(index);
    requests_[k] = MPI_REQUEST_NULL; // completed, with or without an error
    if (rc == MPI_SUCCESS) {
      done(k);
    } else {
      record(rc, what, info_[k].rank);
    }
  }
}

} // namespace redist
