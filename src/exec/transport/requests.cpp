#include "requests.hpp"

#include "transport.hpp"

#include <algorithm>
#include <atomic>
#include <climits>
#include <iterator>

namespace redist {
namespace {

std::atomic<std::size_t> max_message_bytes{static_cast<std::size_t>(INT_MAX) / 64 * 64};

} // namespace

void Requests::set_max_message_bytes(std::size_t bytes) {
  max_message_bytes = std::max<std::size_t>(bytes, 1);
}

Requests::Requests(MPI_Comm comm, std::size_t capacity, const char *call)
    : comm_(comm), call_(call) {
  requests_.reserve(capacity);
  info_.reserve(capacity);
}

void Requests::clear() {
  requests_.clear();
  info_.clear();
}

bool Requests::post(bool send, std::byte *buffer, std::size_t bytes, int tag,
                    const RequestInfo &info, bool control) {
  const std::size_t max_bytes =
      control ? std::max<std::size_t>(bytes, 1) : max_message_bytes.load(std::memory_order_relaxed);
  bool posted = true;
  for (std::size_t done = 0; done < bytes; done += max_bytes) {
    const auto piece = static_cast<int>(std::min(max_bytes, bytes - done));
    posted = post_one(send, buffer + done, piece, MPI_BYTE, tag, info) && posted;
  }
  if (!posted && info.transport != nullptr) {
    info.transport->failed(*this, info);
  }
  return posted;
}

bool Requests::post_one(bool send, void *buffer, int count, MPI_Datatype type, int tag,
                        const RequestInfo &info) {
  requests_.emplace_back();
  info_.push_back(info);
  int rc = MPI_SUCCESS;
  // A post that fails posts nothing: tried once more, so that the peer's matching call
  // completes (a message the peer sent is received, a receive it posted is matched).
  for (int attempt = 0; attempt < 2; ++attempt) {
    MPI_Request *request = &requests_.back();
    rc = send ? MPI_Isend(buffer, count, type, info.rank, tag, comm_, request)
              : MPI_Irecv(buffer, count, type, info.rank, tag, comm_, request);
    if (rc == MPI_SUCCESS) {
      return true;
    }
    requests_.back() = MPI_REQUEST_NULL;
  }
  // Never completes: a receive is never unpacked.
  record(rc, send ? "MPI_Isend" : "MPI_Irecv", info.rank);
  unposted_ = true;
  return false;
}

void Requests::set_messages(std::size_t sends, std::size_t recvs) {
  send_marks_.assign(sends, 0);
  recv_marks_.assign(recvs, 0);
  combined_.assign(recvs, {});
}

void Requests::clear_marks() {
  marked_ = false;
  std::fill(send_marks_.begin(), send_marks_.end(), 0);
  std::fill(recv_marks_.begin(), recv_marks_.end(), 0);
}

void Requests::note_combined(std::size_t i, Index lo, Index hi) {
  if (lo >= hi) {
    return;
  }
  std::vector<std::pair<Index, Index>> &ranges = combined_[i];
  auto at = std::lower_bound(ranges.begin(), ranges.end(), std::pair<Index, Index>{lo, hi});
  at = ranges.insert(at, {lo, hi});
  if (at != ranges.begin() && std::prev(at)->second >= at->first) { // join the one before
    std::prev(at)->second = std::max(std::prev(at)->second, at->second);
    at = std::prev(ranges.erase(at));
  }
  while (std::next(at) != ranges.end() && std::next(at)->first <= at->second) {
    at->second = std::max(at->second, std::next(at)->second);
    ranges.erase(std::next(at));
  }
}

void Requests::forget_combined() {
  for (auto &ranges : combined_) {
    ranges.clear();
  }
}

void Requests::record(int mpi_code, const char *what, int peer) {
  if (mpi_code == MPI_SUCCESS || !failure_.empty()) {
    return;
  }
  char text[MPI_MAX_ERROR_STRING];
  int length = 0;
  MPI_Error_string(mpi_code, text, &length);
  failure_ = std::string(call_) + ": " + what +
             (peer >= 0 ? " with peer rank " + std::to_string(peer) : " (peer unknown)") +
             " failed: " + std::string(text, static_cast<std::size_t>(length));
}

void Requests::fail(const std::string &message) {
  if (failure_.empty()) {
    failure_ = message;
  }
}

} // namespace redist
