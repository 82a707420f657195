#include "exec.hpp"

#include "error.hpp"

#include <algorithm>
#include <atomic>
#include <climits>
#include <cstring>
#include <string>

namespace redist {
namespace {

std::atomic<std::size_t> max_message_bytes{static_cast<std::size_t>(INT_MAX) / 64 * 64};

} // namespace

void Executor::set_max_message_bytes(std::size_t bytes) {
  max_message_bytes = std::max<std::size_t>(bytes, 1);
}

Executor::Executor(MPI_Comm comm, RankPlan plan, std::size_t element_size, Index lld_src,
                   Index lld_dst, ScheduleChoice schedule, int tag)
    : comm_(comm), tag_(tag), plan_(std::move(plan)), schedule_(std::move(schedule)),
      element_size_(element_size), lld_src_(lld_src), lld_dst_(lld_dst) {
  if (const TwoPhase *two = schedule_.phases.get()) {
    // Each phase tags its messages apart, so a fast rank's second phase never meets a slow
    // rank's first.
    phases_[0] = std::make_unique<Executor>(comm, two->plans[0], element_size, lld_src,
                                            two->mid_lld, two->choices[0], tag + 1);
    phases_[1] = std::make_unique<Executor>(comm, two->plans[1], element_size, two->mid_lld,
                                            lld_dst, two->choices[1], tag + 2);
    mid_.resize(static_cast<std::size_t>(two->mid_elements) * element_size_);
    return;
  }
  for (const RankStep &step : schedule_.steps) {
    const Index chunk = schedule_.chunk_elements > 0 ? schedule_.chunk_elements : INT64_MAX;
    step_send_bytes_ =
        std::max(step_send_bytes_,
                 static_cast<std::size_t>(std::min(step.send_count, chunk)) * element_size_);
    step_recv_bytes_ =
        std::max(step_recv_bytes_,
                 static_cast<std::size_t>(std::min(step.recv_count, chunk)) * element_size_);
  }
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
  send_groups_ = group_rows(plan_.send_rows, plan_.sends, &plan_.self);
  recv_groups_ = group_rows(plan_.recv_rows, plan_.recvs, nullptr);
  // Allocated with the plan, where running out of memory is agreed between the processes,
  // never in the middle of an execution.
  const bool all_at_once = schedule_.strategy == Strategy::all_at_once;
  send_buffer_.resize(all_at_once ? send_offsets_.back() : step_send_bytes_);
  recv_buffer_.resize(all_at_once ? recv_offsets_.back() : step_recv_bytes_);
}

void Executor::record(int mpi_code, const char *what, int peer) {
  if (mpi_code == MPI_SUCCESS || !failure_.empty()) {
    return;
  }
  char text[MPI_MAX_ERROR_STRING];
  int length = 0;
  MPI_Error_string(mpi_code, text, &length);
  failure_ = std::string("redist execute: ") + what +
             (peer >= 0 ? " with peer rank " + std::to_string(peer) : " (peer unknown)") +
             " failed: " + std::string(text, static_cast<std::size_t>(length));
}

template <class PeerRank, class Done>
void Executor::wait_each(std::size_t first, std::size_t end, const char *what, PeerRank peer_rank,
                         Done done) {
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
      record(rc, what, peer_rank(k));
    }
  }
}

namespace {

template <std::size_t N>
void copy_strided_elements(std::byte *to, Index to_step, const std::byte *from, Index from_step,
                           Index count) {
  for (Index e = 0; e < count; ++e) {
    std::memcpy(to + static_cast<std::size_t>(e * to_step) * N,
                from + static_cast<std::size_t>(e * from_step) * N, N);
  }
}

} // namespace

// Copies pieces between a local array and a message buffer (one side "packed": positions
// are consecutive in message order) or between two local arrays. Consecutive pieces that are
// contiguous on both sides are joined first (whole columns with lld == column length become
// one copy); groups of single elements run through a fixed-size loop.
class Copier {
public:
  /// On the packed side only message positions [window_lo, window_hi) are copied, to or from
  /// buffer position (position - window_lo): a piece of a message split across steps.
  Copier(const std::byte *src, std::byte *dst, std::size_t element_size, bool src_packed,
         bool dst_packed, Index window_lo = 0, Index window_hi = INT64_MAX)
      : src_(src), dst_(dst), es_(element_size), src_packed_(src_packed), dst_packed_(dst_packed),
        window_lo_(window_lo), window_hi_(window_hi) {}
  Copier(const Copier &) = delete;
  Copier &operator=(const Copier &) = delete;
  ~Copier() { flush(); }

  void add(Index src, Index dst, Index count) {
    const Index begin = std::max(packed_, window_lo_);
    const Index end = std::min(packed_ + count, window_hi_);
    const Index skip = begin - packed_;
    packed_ += count;
    if (begin >= end) {
      return;
    }
    count = end - begin;
    src = src_packed_ ? begin - window_lo_ : src + skip;
    dst = dst_packed_ ? begin - window_lo_ : dst + skip;
    if (count_ > 0 && src == src_off_ + count_ && dst == dst_off_ + count_) {
      count_ += count;
      return;
    }
    flush();
    src_off_ = src;
    dst_off_ = dst;
    count_ = count;
  }

  /// The pieces of `g` in one column whose first local rows are at src_col / dst_col.
  void add_group(const RowGroup &g, Index src_col, Index dst_col) {
    const Index total = g.count * g.length;
    if (g.count == 1 || packed_ < window_lo_ || packed_ + total > window_hi_) {
      if (packed_ + total <= window_lo_ || packed_ >= window_hi_) {
        packed_ += total; // wholly outside the window
        return;
      }
      for (Index e = 0; e < g.count; ++e) {
        add(src_col + g.src + e * g.src_step, dst_col + g.dst + e * g.dst_step, g.length);
      }
      return;
    }
    flush();
    const Index src = src_packed_ ? packed_ - window_lo_ : src_col + g.src;
    const Index dst = dst_packed_ ? packed_ - window_lo_ : dst_col + g.dst;
    const Index src_step = src_packed_ ? g.length : g.src_step;
    const Index dst_step = dst_packed_ ? g.length : g.dst_step;
    packed_ += total;
    std::byte *to = dst_ + static_cast<std::size_t>(dst) * es_;
    const std::byte *from = src_ + static_cast<std::size_t>(src) * es_;
    if (g.length == 1) {
      switch (es_) {
      case 4:
        return copy_strided_elements<4>(to, dst_step, from, src_step, g.count);
      case 8:
        return copy_strided_elements<8>(to, dst_step, from, src_step, g.count);
      case 16:
        return copy_strided_elements<16>(to, dst_step, from, src_step, g.count);
      default:
        break;
      }
    }
    const std::size_t bytes = static_cast<std::size_t>(g.length) * es_;
    for (Index e = 0; e < g.count; ++e) {
      std::memmove(to + static_cast<std::size_t>(e * dst_step) * es_,
                   from + static_cast<std::size_t>(e * src_step) * es_, bytes);
    }
  }

private:
  void flush() {
    if (count_ == 0) {
      return;
    }
    std::byte *to = dst_ + static_cast<std::size_t>(dst_off_) * es_;
    const std::byte *from = src_ + static_cast<std::size_t>(src_off_) * es_;
    const std::size_t bytes = static_cast<std::size_t>(count_) * es_;
    count_ = 0;
    // memmove: a local copy between user arrays may overlap.
    std::memmove(to, from, bytes);
  }

  const std::byte *src_;
  std::byte *dst_;
  std::size_t es_;
  bool src_packed_;
  bool dst_packed_;
  Index window_lo_;
  Index window_hi_;
  Index packed_ = 0;
  Index src_off_ = 0;
  Index dst_off_ = 0;
  Index count_ = 0;
};

std::vector<std::vector<RowGroup>> Executor::group_rows(const std::vector<RunPattern> &patterns,
                                                        const std::vector<Peer> &peers,
                                                        const Peer *self) const {
  std::vector<std::vector<RowGroup>> groups(patterns.size());
  if (plan_.region.kind != Region::Kind::full) {
    return groups; // trapezoids clip rows per column: for_each_piece walks them directly
  }
  const auto build = [&](const Peer &p) {
    auto &g = groups[static_cast<std::size_t>(p.row_slot)];
    if (g.empty()) g = row_groups(patterns[static_cast<std::size_t>(p.row_slot)]);
  };
  for (const Peer &p : peers)
    build(p);
  if (self != nullptr && self->elements > 0) build(*self);
  return groups;
}

void Executor::copy_message(const RunPattern &rows, const std::vector<RowGroup> &groups,
                            const RunPattern &cols, Copier &copier) const {
  if (plan_.region.kind != Region::Kind::full) {
    for_each_piece(rows, cols, plan_.region, plan_.m, plan_.n, lld_src_, lld_dst_,
                   [&](Index src, Index dst, Index count) { copier.add(src, dst, count); });
    return;
  }
  cols.for_each([&](const Run &c) {
    for (Index dc = 0; dc < c.length; ++dc) {
      const Index src_col = (c.src_local + dc) * lld_src_;
      const Index dst_col = (c.dst_local + dc) * lld_dst_;
      for (const RowGroup &g : groups) {
        copier.add_group(g, src_col, dst_col);
      }
    }
  });
}

void Executor::pack(const Peer &peer, const std::byte *a, std::byte *out, Index lo,
                    Index hi) const {
  Copier copier(a, out, element_size_, false, true, lo, hi);
  const auto r = static_cast<std::size_t>(peer.row_slot);
  copy_message(plan_.send_rows[r], send_groups_[r],
               plan_.send_cols[static_cast<std::size_t>(peer.col_slot)], copier);
}

void Executor::unpack(const Peer &peer, const std::byte *in, std::byte *b, Index lo,
                      Index hi) const {
  Copier copier(in, b, element_size_, true, false, lo, hi);
  const auto r = static_cast<std::size_t>(peer.row_slot);
  copy_message(plan_.recv_rows[r], recv_groups_[r],
               plan_.recv_cols[static_cast<std::size_t>(peer.col_slot)], copier);
}

void Executor::copy_local(const std::byte *a, std::byte *b) const {
  if (plan_.self.elements == 0) {
    return;
  }
  Copier copier(a, b, element_size_, false, false);
  const auto r = static_cast<std::size_t>(plan_.self.row_slot);
  copy_message(plan_.send_rows[r], send_groups_[r],
               plan_.send_cols[static_cast<std::size_t>(plan_.self.col_slot)], copier);
}

void Executor::post(bool send, std::byte *buffer, std::size_t bytes, int peer) {
  const std::size_t max_bytes = max_message_bytes;
  for (std::size_t done = 0; done < bytes; done += max_bytes) {
    const auto piece = static_cast<int>(std::min(max_bytes, bytes - done));
    requests_.emplace_back();
    const int rc =
        send ? MPI_Isend(buffer + done, piece, MPI_BYTE, peer, tag_, comm_, &requests_.back())
             : MPI_Irecv(buffer + done, piece, MPI_BYTE, peer, tag_, comm_, &requests_.back());
    if (rc != MPI_SUCCESS) {
      requests_.back() = MPI_REQUEST_NULL; // never completes: a receive is never unpacked
      record(rc, send ? "MPI_Isend" : "MPI_Irecv", peer);
    }
  }
}

void Executor::execute(const void *a_void, void *b_void) {
  const auto *a = static_cast<const std::byte *>(a_void);
  auto *b = static_cast<std::byte *>(b_void);
  failure_.clear();
  if (phases_[0]) {
    execute_two_phases(a, b);
  } else if (schedule_.strategy == Strategy::all_at_once) {
    execute_all_at_once(a, b);
  } else {
    execute_steps(a, b);
  }
  if (!failure_.empty()) {
    throw Error(REDIST_ERR_MPI, failure_);
  }
}

void Executor::execute_two_phases(const std::byte *a, std::byte *b) {
  // The second phase runs even if the first failed: peers wait for its messages.
  for (int phase = 0; phase < 2; ++phase) {
    try {
      phases_[phase]->execute(phase == 0 ? a : mid_.data(), phase == 0 ? mid_.data() : b);
    } catch (const Error &e) {
      if (failure_.empty()) failure_ = e.what();
    }
  }
}

void Executor::execute_all_at_once(const std::byte *a, std::byte *b) {
  send_buffer_.resize(send_offsets_.back());
  recv_buffer_.resize(recv_offsets_.back());
  requests_.clear();
  request_peer_.clear();
  pieces_pending_.assign(plan_.recvs.size(), 0);

  for (std::size_t i = 0; i < plan_.recvs.size(); ++i) {
    const std::size_t before = requests_.size();
    post(false, recv_buffer_.data() + recv_offsets_[i], recv_offsets_[i + 1] - recv_offsets_[i],
         plan_.recvs[i].rank);
    request_peer_.resize(requests_.size(), static_cast<int>(i));
    pieces_pending_[i] = static_cast<int>(requests_.size() - before);
  }
  const std::size_t receive_requests = requests_.size();
  for (std::size_t i = 0; i < plan_.sends.size(); ++i) {
    std::byte *out = send_buffer_.data() + send_offsets_[i];
    pack(plan_.sends[i], a, out);
    post(true, out, send_offsets_[i + 1] - send_offsets_[i], plan_.sends[i].rank);
    request_peer_.resize(requests_.size(), static_cast<int>(i));
  }
  copy_local(a, b);

  const auto peer_of = [&](std::size_t k) { return static_cast<std::size_t>(request_peer_[k]); };
  // A message with a failed piece never reaches zero pending pieces: it is not unpacked.
  wait_each(
      0, receive_requests, "MPI_Waitany (receive)",
      [&](std::size_t k) { return plan_.recvs[peer_of(k)].rank; },
      [&](std::size_t k) {
        const std::size_t peer = peer_of(k);
        if (--pieces_pending_[peer] == 0) {
          unpack(plan_.recvs[peer], recv_buffer_.data() + recv_offsets_[peer], b);
        }
      });
  wait_each(
      receive_requests, requests_.size(), "MPI_Waitany (send)",
      [&](std::size_t k) { return plan_.sends[peer_of(k)].rank; }, [](std::size_t) {});
}

// Stepwise execution: in each step this rank exchanges only with that step's partners (no
// barrier: a step waits for its own two messages only); pieces longer than the chunk go in
// sub-steps, so the buffers never exceed one chunk each way.
void Executor::execute_steps(const std::byte *a, std::byte *b) {
  send_buffer_.resize(step_send_bytes_);
  recv_buffer_.resize(step_recv_bytes_);
  bool local_done = false;
  for (const RankStep &step : schedule_.steps) {
    const Index longest = std::max(step.send_count, step.recv_count);
    const Index chunk = schedule_.chunk_elements > 0 ? schedule_.chunk_elements : longest;
    for (Index begin = 0; begin < longest; begin += chunk) {
      requests_.clear();
      const Index recv_n = std::clamp<Index>(step.recv_count - begin, 0, chunk);
      const Index send_n = std::clamp<Index>(step.send_count - begin, 0, chunk);
      const Peer *from = recv_n > 0 ? &plan_.recvs[static_cast<std::size_t>(step.recv)] : nullptr;
      const Peer *to = send_n > 0 ? &plan_.sends[static_cast<std::size_t>(step.send)] : nullptr;
      if (from != nullptr) {
        post(false, recv_buffer_.data(), static_cast<std::size_t>(recv_n) * element_size_,
             from->rank);
      }
      const std::size_t receive_requests = requests_.size();
      if (to != nullptr) {
        const Index lo = step.send_offset + begin;
        pack(*to, a, send_buffer_.data(), lo, lo + send_n);
        post(true, send_buffer_.data(), static_cast<std::size_t>(send_n) * element_size_, to->rank);
      }
      if (!local_done) {
        copy_local(a, b);
        local_done = true;
      }
      if (from != nullptr) {
        std::size_t received = 0;
        wait_each(
            0, receive_requests, "MPI_Waitany (receive)", [&](std::size_t) { return from->rank; },
            [&](std::size_t) { ++received; });
        if (received == receive_requests) { // else a piece failed: not unpacked
          const Index lo = step.recv_offset + begin;
          unpack(*from, recv_buffer_.data(), b, lo, lo + recv_n);
        }
      }
      if (to != nullptr) {
        wait_each(
            receive_requests, requests_.size(), "MPI_Waitany (send)",
            [&](std::size_t) { return to->rank; }, [](std::size_t) {});
      }
    }
  }
  if (!local_done) {
    copy_local(a, b);
  }
}

std::size_t Executor::buffer_bytes() const {
  if (phases_[0]) {
    return static_cast<std::size_t>(schedule_.phases->mid_elements) * element_size_ +
           phases_[0]->buffer_bytes() + phases_[1]->buffer_bytes();
  }
  if (schedule_.strategy == Strategy::all_at_once) {
    return send_offsets_.back() + recv_offsets_.back();
  }
  return step_send_bytes_ + step_recv_bytes_;
}

} // namespace redist
