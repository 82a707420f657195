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

// Joins consecutive pieces that are contiguous on the side(s) being copied (whole columns
// with lld == column length become one copy), then copies each joined piece with one memcpy.
class Coalescer {
public:
  Coalescer(const std::byte *src, std::byte *dst, std::size_t element_size, bool src_packed,
            bool dst_packed)
      : src_(src), dst_(dst), es_(element_size), src_packed_(src_packed),
        dst_packed_(dst_packed) {}
  Coalescer(const Coalescer &) = delete;
  Coalescer &operator=(const Coalescer &) = delete;
  ~Coalescer() { flush(); }

  void add(Index src, Index dst, Index count) {
    if (src_packed_) src = packed_;
    if (dst_packed_) dst = packed_;
    packed_ += count;
    if (count_ > 0 && src == src_off_ + count_ && dst == dst_off_ + count_) {
      count_ += count;
      return;
    }
    flush();
    src_off_ = src;
    dst_off_ = dst;
    count_ = count;
  }

private:
  void flush() {
    if (count_ == 0) {
      return;
    }
    std::byte *to = dst_ + static_cast<std::size_t>(dst_off_) * es_;
    const std::byte *from = src_ + static_cast<std::size_t>(src_off_) * es_;
    const std::size_t bytes = static_cast<std::size_t>(count_) * es_;
    if (src_packed_ || dst_packed_) {
      std::memcpy(to, from, bytes);
    } else {
      std::memmove(to, from, bytes); // a local copy between user arrays that may overlap
    }
    count_ = 0;
  }

  const std::byte *src_;
  std::byte *dst_;
  std::size_t es_;
  bool src_packed_;
  bool dst_packed_;
  Index packed_ = 0;
  Index src_off_ = 0;
  Index dst_off_ = 0;
  Index count_ = 0;
};

void Executor::pack(const Peer &peer, const std::byte *a, std::byte *out) const {
  Coalescer copy(a, out, element_size_, false, true);
  for_each_piece(plan_.send_rows[static_cast<std::size_t>(peer.row_slot)],
                 plan_.send_cols[static_cast<std::size_t>(peer.col_slot)], plan_.region,
                 plan_.m, plan_.n, lld_src_, lld_dst_,
                 [&](Index src, Index dst, Index count) { copy.add(src, dst, count); });
}

void Executor::unpack(const Peer &peer, const std::byte *in, std::byte *b) const {
  Coalescer copy(in, b, element_size_, true, false);
  for_each_piece(plan_.recv_rows[static_cast<std::size_t>(peer.row_slot)],
                 plan_.recv_cols[static_cast<std::size_t>(peer.col_slot)], plan_.region,
                 plan_.m, plan_.n, lld_src_, lld_dst_,
                 [&](Index src, Index dst, Index count) { copy.add(src, dst, count); });
}

void Executor::copy_local(const std::byte *a, std::byte *b) const {
  if (plan_.self.elements == 0) {
    return;
  }
  Coalescer copy(a, b, element_size_, false, false);
  for_each_piece(plan_.send_rows[static_cast<std::size_t>(plan_.self.row_slot)],
                 plan_.send_cols[static_cast<std::size_t>(plan_.self.col_slot)], plan_.region,
                 plan_.m, plan_.n, lld_src_, lld_dst_,
                 [&](Index src, Index dst, Index count) { copy.add(src, dst, count); });
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
