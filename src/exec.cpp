#include "exec.hpp"

#include "error.hpp"

#include <algorithm>
#include <atomic>
#include <climits>
#include <cstring>
#include <string>

namespace redist {
namespace {

constexpr int kTag = 7411;
std::atomic<std::size_t> max_message_bytes{static_cast<std::size_t>(INT_MAX) / 64 * 64};

} // namespace

void Executor::set_max_message_bytes(std::size_t bytes) {
  max_message_bytes = std::max<std::size_t>(bytes, 1);
}

Executor::Executor(MPI_Comm comm, RankPlan plan, std::size_t element_size, Index lld_src,
                   Index lld_dst)
    : comm_(comm), plan_(std::move(plan)), element_size_(element_size), lld_src_(lld_src),
      lld_dst_(lld_dst) {
  std::size_t offset = 0;
  for (const Peer &p : plan_.sends) {
    send_offsets_.push_back(offset);
    offset += static_cast<std::size_t>(p.elements) * element_size_;
  }
  send_offsets_.push_back(offset);
  offset = 0;
  for (const Peer &p : plan_.recvs) {
    recv_offsets_.push_back(offset);
    offset += static_cast<std::size_t>(p.elements) * element_size_;
  }
  recv_offsets_.push_back(offset);
}

void Executor::check(int mpi_code, const char *what, int peer) const {
  if (mpi_code == MPI_SUCCESS) {
    return;
  }
  char text[MPI_MAX_ERROR_STRING];
  int length = 0;
  MPI_Error_string(mpi_code, text, &length);
  throw Error(REDIST_ERR_MPI, std::string("redist execute: ") + what + " with peer rank " +
                                  std::to_string(peer) + " failed: " +
                                  std::string(text, static_cast<std::size_t>(length)));
}

void Executor::pack(const Peer &peer, const std::byte *a, std::byte *out) const {
  const auto slot_r = static_cast<std::size_t>(peer.row_slot);
  const auto slot_c = static_cast<std::size_t>(peer.col_slot);
  const std::size_t es = element_size_;
  for_each_piece(plan_.send_rows[slot_r], plan_.send_cols[slot_c], plan_.region, plan_.m,
                 plan_.n, lld_src_, lld_dst_, [&](Index src, Index, Index count) {
                   const std::size_t bytes = static_cast<std::size_t>(count) * es;
                   std::memcpy(out, a + static_cast<std::size_t>(src) * es, bytes);
                   out += bytes;
                 });
}

void Executor::unpack(const Peer &peer, const std::byte *in, std::byte *b) const {
  const auto slot_r = static_cast<std::size_t>(peer.row_slot);
  const auto slot_c = static_cast<std::size_t>(peer.col_slot);
  const std::size_t es = element_size_;
  for_each_piece(plan_.recv_rows[slot_r], plan_.recv_cols[slot_c], plan_.region, plan_.m,
                 plan_.n, lld_src_, lld_dst_, [&](Index, Index dst, Index count) {
                   const std::size_t bytes = static_cast<std::size_t>(count) * es;
                   std::memcpy(b + static_cast<std::size_t>(dst) * es, in, bytes);
                   in += bytes;
                 });
}

void Executor::copy_local(const std::byte *a, std::byte *b) const {
  if (plan_.self.elements == 0) {
    return;
  }
  const auto slot_r = static_cast<std::size_t>(plan_.self.row_slot);
  const auto slot_c = static_cast<std::size_t>(plan_.self.col_slot);
  const std::size_t es = element_size_;
  for_each_piece(plan_.send_rows[slot_r], plan_.send_cols[slot_c], plan_.region, plan_.m,
                 plan_.n, lld_src_, lld_dst_, [&](Index src, Index dst, Index count) {
                   std::memmove(b + static_cast<std::size_t>(dst) * es,
                                a + static_cast<std::size_t>(src) * es,
                                static_cast<std::size_t>(count) * es);
                 });
}

void Executor::execute(const void *a_void, void *b_void) {
  const auto *a = static_cast<const std::byte *>(a_void);
  auto *b = static_cast<std::byte *>(b_void);
  const std::size_t max_bytes = max_message_bytes;
  send_buffer_.resize(send_offsets_.back());
  recv_buffer_.resize(recv_offsets_.back());
  requests_.clear();
  request_peer_.clear();
  pieces_pending_.assign(plan_.recvs.size(), 0);

  for (std::size_t i = 0; i < plan_.recvs.size(); ++i) {
    const std::size_t bytes = recv_offsets_[i + 1] - recv_offsets_[i];
    for (std::size_t done = 0; done < bytes; done += max_bytes) {
      const auto piece = static_cast<int>(std::min(max_bytes, bytes - done));
      requests_.emplace_back();
      request_peer_.push_back(static_cast<int>(i));
      ++pieces_pending_[i];
      check(MPI_Irecv(recv_buffer_.data() + recv_offsets_[i] + done, piece, MPI_BYTE,
                      plan_.recvs[i].rank, kTag, comm_, &requests_.back()),
            "MPI_Irecv", plan_.recvs[i].rank);
    }
  }
  const std::size_t receive_requests = requests_.size();
  for (std::size_t i = 0; i < plan_.sends.size(); ++i) {
    std::byte *out = send_buffer_.data() + send_offsets_[i];
    pack(plan_.sends[i], a, out);
    const std::size_t bytes = send_offsets_[i + 1] - send_offsets_[i];
    for (std::size_t done = 0; done < bytes; done += max_bytes) {
      const auto piece = static_cast<int>(std::min(max_bytes, bytes - done));
      requests_.emplace_back();
      check(MPI_Isend(out + done, piece, MPI_BYTE, plan_.sends[i].rank, kTag, comm_,
                      &requests_.back()),
            "MPI_Isend", plan_.sends[i].rank);
    }
  }
  copy_local(a, b);

  for (std::size_t left = receive_requests; left > 0; --left) {
    int index = MPI_UNDEFINED;
    MPI_Status status;
    check(MPI_Waitany(static_cast<int>(receive_requests), requests_.data(), &index, &status),
          "MPI_Waitany (receive)", index == MPI_UNDEFINED ? -1 : status.MPI_SOURCE);
    const auto peer = static_cast<std::size_t>(request_peer_[static_cast<std::size_t>(index)]);
    if (--pieces_pending_[peer] == 0) {
      unpack(plan_.recvs[peer], recv_buffer_.data() + recv_offsets_[peer], b);
    }
  }
  if (requests_.size() > receive_requests) {
    check(MPI_Waitall(static_cast<int>(requests_.size() - receive_requests),
                      requests_.data() + receive_requests, MPI_STATUSES_IGNORE),
          "MPI_Waitall (send)", -1);
  }
}

} // namespace redist
