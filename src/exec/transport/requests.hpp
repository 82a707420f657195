#pragma once
// The executor's list of non-blocking MPI requests for one step (or the whole execution), with
// what each one moves, and the record of the first failure of an execution. Transports post
// through it; the executor waits on it and hands each completed request to its transport, and
// each failed one too (Transport::failed), so that no peer waits for a message this rank
// skipped. A failed post is retried once; what still fails is marked against its message
// (mark_send / mark_recv), and the executor repairs the marked messages after agreeing with
// the other ranks (docs/reliability.md, Faults).

#include "index.hpp"

#include <mpi.h>

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <string>
#include <utility>
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
  /// `capacity`: requests reserved up front (no allocation while executing); `call` begins
  /// the failure messages.
  Requests(MPI_Comm comm, std::size_t capacity, const char *call = "redist execute");

  /// Post a non-blocking send or receive of `bytes` with `tag`, in several messages when larger
  /// than the message limit (data; `control` messages are never split: their receiver acts on
  /// the whole); each request is appended with `info`. A post that fails is retried once; if
  /// that fails too, the failure is recorded, the request stays MPI_REQUEST_NULL and
  /// info.transport->failed() is told. False then.
  bool post(bool send, std::byte *buffer, std::size_t bytes, int tag, const RequestInfo &info,
            bool control = false);
  /// Post one non-blocking send or receive of `count` elements of `type`, never split, tried
  /// once more where the post fails; false (the failure recorded, the request
  /// MPI_REQUEST_NULL) when that fails too. Transports are not told.
  bool post_one(bool send, void *buffer, int count, MPI_Datatype type, int tag,
                const RequestInfo &info);
  void clear();
  [[nodiscard]] std::size_t size() const { return requests_.size(); }
  [[nodiscard]] const RequestInfo &info(std::size_t k) const { return info_[k]; }
  /// Whether request k was posted and has not completed yet.
  [[nodiscard]] bool active(std::size_t k) const { return requests_[k] != MPI_REQUEST_NULL; }

  /// Wait for one of requests [first, end) to complete: done(k) if it completed, a failure
  /// recorded against its peer rank and failed(k) if it completed with an error. False when
  /// none was active (when MPI cannot say which request failed, every one is waited for).
  template <class Done, class Failed>
  bool wait_one(std::size_t first, std::size_t end, const char *what, Done done, Failed failed);
  /// wait_one() until none of requests [first, end) is active.
  template <class Done, class Failed>
  void wait_each(std::size_t first, std::size_t end, const char *what, Done done, Failed failed) {
    while (wait_one(first, end, what, done, failed)) {
    }
  }
  /// wait_each() one request at a time with MPI_Wait (after MPI_Waitany failed without naming
  /// a request).
  template <class Done, class Failed>
  void wait_alone(std::size_t first, std::size_t end, const char *what, Done done, Failed failed);

  /// Per-message failure marks of the running execution (bits of Mark), for the repair.
  enum Mark : std::uint8_t {
    kTransferFailed = 1, ///< an MPI call of the message failed here
    kReadFailed = 2,     ///< a single-copy read (or the copy from a mapping) failed
  };
  void set_messages(std::size_t sends, std::size_t recvs);
  void mark_send(std::size_t i, std::uint8_t why) {
    send_marks_[i] |= why;
    marked_ = true;
  }
  void mark_recv(std::size_t i, std::uint8_t why) {
    recv_marks_[i] |= why;
    marked_ = true;
  }
  /// Whether a message was marked since clear_marks().
  [[nodiscard]] bool marked() const { return marked_; }
  [[nodiscard]] const std::vector<std::uint8_t> &send_marks() const { return send_marks_; }
  [[nodiscard]] const std::vector<std::uint8_t> &recv_marks() const { return recv_marks_; }
  void clear_marks();
  /// Operation plans (B := alpha op(A) + beta B): receive elements [lo, hi) of message i were
  /// combined into b in this execution. The repair combines only the others (combining an
  /// element twice is wrong unless beta = 0).
  void note_combined(std::size_t i, Index lo, Index hi);
  /// f(from, to) for each part of receive elements [lo, hi) of message i not combined yet in
  /// this execution, in order.
  template <class F> void for_each_uncombined(std::size_t i, Index lo, Index hi, F f) const;
  /// A new execution: nothing combined yet.
  void forget_combined();
  /// Whether a post failed twice since forget_unposted(): the peer's matching message (or
  /// receive) may still wait on the communicator, and would be matched by a later execution.
  [[nodiscard]] bool unposted() const { return unposted_; }
  void forget_unposted() { unposted_ = false; }
  [[nodiscard]] MPI_Comm comm() const { return comm_; }

  /// Remember the first MPI failure of this execution.
  void record(int mpi_code, const char *what, int peer);
  /// Remember `message` unless a failure was recorded before.
  void fail(const std::string &message);
  [[nodiscard]] const std::string &failure() const { return failure_; }
  void forget_failure() { failure_.clear(); }

  static void set_max_message_bytes(std::size_t bytes);

private:
  /// Request k completed with `rc`: done(k), or the failure recorded and failed(k).
  template <class Done, class Failed>
  void completed(std::size_t k, int rc, const char *what, Done &done, Failed &failed);

  MPI_Comm comm_;
  const char *call_;
  std::vector<MPI_Request> requests_;
  std::vector<RequestInfo> info_;
  std::string failure_; // first MPI failure of the running execution, "" if none
  bool unposted_ = false;
  bool marked_ = false;
  std::vector<std::uint8_t> send_marks_; // per plan.sends / plan.recvs: bits of Mark
  std::vector<std::uint8_t> recv_marks_;
  // Per plan.recvs: the element ranges [first, second) combined into b in this execution,
  // sorted and disjoint, adjacent ones joined (one range per message unless it failed).
  std::vector<std::vector<std::pair<Index, Index>>> combined_;
};

template <class F>
void Requests::for_each_uncombined(std::size_t i, Index lo, Index hi, F f) const {
  Index next = lo;
  for (const auto &[first, second] : combined_[i]) {
    if (first >= hi) {
      break;
    }
    if (first > next) {
      f(next, first);
    }
    next = std::max(next, second);
  }
  if (next < hi) {
    f(next, hi);
  }
}

template <class Done, class Failed>
bool Requests::wait_one(std::size_t first, std::size_t end, const char *what, Done done,
                        Failed failed) {
  if (first >= end) {
    return false;
  }
  int index = MPI_UNDEFINED;
  MPI_Status status;
  const int rc =
      MPI_Waitany(static_cast<int>(end - first), requests_.data() + first, &index, &status);
  if (index == MPI_UNDEFINED) {
    if (rc != MPI_SUCCESS) {
      // MPI cannot say which request failed: each remaining one is waited for alone, so
      // that none is abandoned (its peer may wait for it) and each failure is told to its
      // message. The error stands: this process reports it.
      record(rc, what, -1);
      wait_alone(first, end, what, done, failed);
    }
    return false;
  }
  completed(first + static_cast<std::size_t>(index), rc, what, done, failed);
  return true;
}

template <class Done, class Failed>
void Requests::completed(std::size_t k, int rc, const char *what, Done &done, Failed &failed) {
  requests_[k] = MPI_REQUEST_NULL; // completed, with or without an error
  if (rc == MPI_SUCCESS) {
    done(k);
  } else {
    record(rc, what, info_[k].rank);
    failed(k);
  }
}

template <class Done, class Failed>
void Requests::wait_alone(std::size_t first, std::size_t end, const char *what, Done done,
                          Failed failed) {
  for (std::size_t k = first; k < end; ++k) {
    if (requests_[k] == MPI_REQUEST_NULL) continue;
    MPI_Status status;
    completed(k, MPI_Wait(&requests_[k], &status), what, done, failed);
  }
}

} // namespace redist
