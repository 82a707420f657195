#include "exec.hpp"

#include "copy.hpp"
#include "error.hpp"

#include <sys/mman.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
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
  const bool shareable = single_copy::mode_from_environment() != single_copy::Mode::never;
  if (!all_at_once) { // one step's buffer, reused by every step: its pages fault in once
    segment_ = single_copy::SharedBuffer(step_send_bytes_, shareable);
  } else if (!plan_.sends.empty()) {
    send_buffer_ = std::make_unique_for_overwrite<std::byte[]>(send_offsets_.back());
    if (shareable) {
      segment_ = single_copy::SharedBuffer(send_offsets_.back(), true);
    }
  }
  recv_buffer_ = std::make_unique_for_overwrite<std::byte[]>(all_at_once ? recv_offsets_.back()
                                                                         : step_recv_bytes_);
  const std::size_t requests = 2 * (plan_.sends.size() + plan_.recvs.size()) + 4;
  requests_.reserve(requests);
  request_info_.reserve(requests);
  pieces_pending_.assign(plan_.recvs.size(), 0);
  if (!plan_.recvs.empty()) { // pages touched only if a message is bounced or read packed
    bounce_ = std::make_unique_for_overwrite<std::byte[]>(single_copy::kBounceBytes);
  }
  send_way_.assign(plan_.sends.size(), single_copy::Way::sent);
  recv_way_.assign(plan_.recvs.size(), single_copy::Way::sent);
  later_send_way_ = send_way_;
  later_recv_way_ = recv_way_;
  address_out_.resize(plan_.sends.size());
  sender_identity_.resize(plan_.recvs.size());
  peer_address_.resize(plan_.recvs.size());
  peer_array_.resize(plan_.recvs.size());
  copied_from_array_.resize(plan_.recvs.size());
  peer_segment_.resize(plan_.recvs.size());
  reply_in_.resize(plan_.sends.size());
  reply_out_.resize(plan_.recvs.size());
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
  /// `streaming`: large pieces bypass the cache (copy.hpp).
  Copier(const std::byte *src, std::byte *dst, std::size_t element_size, bool src_packed,
         bool dst_packed, bool streaming, Index window_lo = 0, Index window_hi = INT64_MAX)
      : src_(src), dst_(dst), es_(element_size), src_packed_(src_packed), dst_packed_(dst_packed),
        streaming_(streaming), window_lo_(window_lo), window_hi_(window_hi) {}
  [[nodiscard]] Index window_lo() const { return window_lo_; }
  [[nodiscard]] Index window_hi() const { return window_hi_; }
  /// Continue at message position `position` (no piece before it is added).
  void skip_to(Index position) { packed_ = position; }
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
      copy_bytes(to + static_cast<std::size_t>(e * dst_step) * es_,
                 from + static_cast<std::size_t>(e * src_step) * es_, bytes, streaming_);
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
    copy_bytes(to, from, bytes, streaming_); // as memmove: user arrays may overlap
  }

  const std::byte *src_;
  std::byte *dst_;
  std::size_t es_;
  bool src_packed_;
  bool dst_packed_;
  bool streaming_;
  Index window_lo_;
  Index window_hi_;
  Index packed_ = 0;
  Index src_off_ = 0;
  Index dst_off_ = 0;
  Index count_ = 0;
};

std::vector<RowGroups> Executor::group_rows(const std::vector<RunPattern> &patterns,
                                            const std::vector<Peer> &peers,
                                            const Peer *self) const {
  std::vector<RowGroups> groups(patterns.size());
  if (plan_.region.kind != Region::Kind::full) {
    return groups; // trapezoids clip rows per column: for_each_piece walks them directly
  }
  const auto build = [&](const Peer &p) {
    auto &g = groups[static_cast<std::size_t>(p.row_slot)];
    if (g.period.empty() && g.tail.empty())
      g = row_groups(patterns[static_cast<std::size_t>(p.row_slot)]);
  };
  for (const Peer &p : peers)
    build(p);
  if (self != nullptr && self->elements > 0) build(*self);
  return groups;
}

void Executor::copy_message(const RunPattern &rows, const RowGroups &groups, const RunPattern &cols,
                            Copier &copier, Index src_lld) const {
  if (plan_.region.kind != Region::Kind::full) {
    for_each_piece(rows, cols, plan_.region, plan_.m, plan_.n, src_lld, lld_dst_,
                   [&](Index src, Index dst, Index count) { copier.add(src, dst, count); });
    return;
  }
  // Every column carries the same rows: a window of the message starts and ends in known
  // columns, so chunks and steps visit only their own.
  const Index per_column = rows.total();
  if (per_column == 0) {
    return;
  }
  const Index hi = std::min(copier.window_hi(), per_column * cols.total());
  const Index first = copier.window_lo() / per_column;
  const Index last = (hi + per_column - 1) / per_column;
  if (first >= last) {
    return;
  }
  copier.skip_to(first * per_column);
  cols.for_each(cols.index_of(first), cols.index_of(last - 1) + 1, [&](const Run &c) {
    for (Index dc = 0; dc < c.length; ++dc) {
      const Index src_col = (c.src_local + dc) * src_lld;
      const Index dst_col = (c.dst_local + dc) * lld_dst_;
      groups.for_each([&](const RowGroup &g, Index src_shift, Index dst_shift) {
        copier.add_group(g, src_col + src_shift, dst_col + dst_shift);
      });
    }
  });
}

bool Executor::streams(const Peer &peer) const {
  return static_cast<std::size_t>(peer.elements) * element_size_ >= kStreamingBytes;
}

void Executor::pack(const Peer &peer, const std::byte *a, std::byte *out, Index lo,
                    Index hi) const {
  Copier copier(a, out, element_size_, false, true, streams(peer), lo, hi);
  const auto r = static_cast<std::size_t>(peer.row_slot);
  copy_message(plan_.send_rows[r], send_groups_[r],
               plan_.send_cols[static_cast<std::size_t>(peer.col_slot)], copier, lld_src_);
}

void Executor::unpack(const Peer &peer, const std::byte *in, std::byte *b, Index lo,
                      Index hi) const {
  Copier copier(in, b, element_size_, true, false, streams(peer), lo, hi);
  const auto r = static_cast<std::size_t>(peer.row_slot);
  copy_message(plan_.recv_rows[r], recv_groups_[r],
               plan_.recv_cols[static_cast<std::size_t>(peer.col_slot)], copier, lld_src_);
}

void Executor::copy_local(const std::byte *a, std::byte *b) const {
  if (plan_.self.elements == 0) {
    return;
  }
  Copier copier(a, b, element_size_, false, false, streams(plan_.self));
  const auto r = static_cast<std::size_t>(plan_.self.row_slot);
  copy_message(plan_.send_rows[r], send_groups_[r],
               plan_.send_cols[static_cast<std::size_t>(plan_.self.col_slot)], copier, lld_src_);
}

void Executor::post(bool send, std::byte *buffer, std::size_t bytes, int tag,
                    const RequestInfo &info) {
  const std::size_t max_bytes = max_message_bytes;
  for (std::size_t done = 0; done < bytes; done += max_bytes) {
    const auto piece = static_cast<int>(std::min(max_bytes, bytes - done));
    requests_.emplace_back();
    request_info_.push_back(info);
    const int rc =
        send ? MPI_Isend(buffer + done, piece, MPI_BYTE, info.rank, tag, comm_, &requests_.back())
             : MPI_Irecv(buffer + done, piece, MPI_BYTE, info.rank, tag, comm_, &requests_.back());
    if (rc != MPI_SUCCESS) {
      requests_.back() = MPI_REQUEST_NULL; // never completes: a receive is never unpacked
      record(rc, send ? "MPI_Isend" : "MPI_Irecv", info.rank);
    }
  }
}

namespace {

// Tags of the single-copy control messages, apart from the data (tag) and from the other
// phase's executors (tag + 1, tag + 2).
constexpr int kAddressTag = 16;
constexpr int kReplyTag = 32;

template <class T> std::byte *bytes_of(T &value) {
  return reinterpret_cast<std::byte *>(&value);
}

} // namespace

void Executor::negotiate(const std::byte *a) {
  negotiated_ = true;
  identity_ = single_copy::identify(probe_, lld_src_, segment_, a);
  const single_copy::Mode mode = single_copy::mode_from_environment();
  requests_.clear();
  request_info_.clear();
  for (std::size_t i = 0; i < plan_.recvs.size(); ++i) {
    post(false, bytes_of(sender_identity_[i]), sizeof(single_copy::Identity), tag_ + kAddressTag,
         {RequestKind::address_receive, static_cast<int>(i), plan_.recvs[i].rank, 0, 0, nullptr});
  }
  const std::size_t identities = requests_.size();
  for (std::size_t i = 0; i < plan_.sends.size(); ++i) {
    const RequestInfo info{
        RequestKind::reply_receive, static_cast<int>(i), plan_.sends[i].rank, 0, 0, nullptr};
    post(false, bytes_of(reply_in_[i]), sizeof(std::int64_t), tag_ + kReplyTag, info);
    post(true, bytes_of(identity_), sizeof identity_, tag_ + kAddressTag,
         {RequestKind::send, static_cast<int>(i), plan_.sends[i].rank, 0, 0, nullptr});
  }
  wait_each(
      0, identities, "MPI_Waitany (single-copy negotiation)",
      [&](std::size_t k) { return request_info_[k].rank; },
      [&](std::size_t k) {
        const auto i = static_cast<std::size_t>(request_info_[k].peer);
        const single_copy::Identity &sender = sender_identity_[i];
        if (single_copy::can_read(sender)) {
          const single_copy::PieceCounts counts = estimate_pieces(plan_.recvs[i]);
          const bool array = peer_array_[i].map(sender.pid, sender.array);
          const single_copy::Way unmapped =
              single_copy::cheapest_way(counts, mode, {.buffer = false, .array = array});
          single_copy::Way later =
              single_copy::cheapest_way(counts, mode, {.buffer = true, .array = array});
          if (later == single_copy::Way::mapped &&
              !peer_segment_[i].map(sender.pid, sender.buffer)) {
            later = unmapped;
          }
          const bool by_model = mode == single_copy::Mode::automatic ||
                                mode == single_copy::Mode::always; // else forced from the start
          recv_way_[i] = later == single_copy::Way::mapped && by_model ? unmapped : later;
          later_recv_way_[i] = later;
        }
        reply_out_[i] = static_cast<std::int64_t>(recv_way_[i]) |
                        static_cast<std::int64_t>(later_recv_way_[i]) << 8;
        post(true, bytes_of(reply_out_[i]), sizeof(std::int64_t), tag_ + kReplyTag,
             {RequestKind::send, static_cast<int>(i), plan_.recvs[i].rank, 0, 0, nullptr});
      });
  wait_each(
      identities, requests_.size(), "MPI_Waitany (single-copy negotiation)",
      [&](std::size_t k) { return request_info_[k].rank; },
      [&](std::size_t k) {
        if (request_info_[k].kind == RequestKind::reply_receive) {
          const auto i = static_cast<std::size_t>(request_info_[k].peer);
          send_way_[i] = static_cast<single_copy::Way>(reply_in_[i] & 0xFF);
          later_send_way_[i] = static_cast<single_copy::Way>(reply_in_[i] >> 8 & 0xFF);
        }
      });
  segment_.release_fd(); // every receiver has mapped it or chosen otherwise
}

single_copy::PieceCounts Executor::estimate_pieces(const Peer &peer) const {
  // Stretches contiguous on each side in one column, times the columns: a column's stretches
  // that continue into the next one (whole columns with lld = column length) count apart.
  std::size_t remote = 0;
  std::size_t local = 0;
  Index next_src = -1;
  Index next_dst = -1;
  plan_.recv_rows[static_cast<std::size_t>(peer.row_slot)].for_each([&](const Run &r) {
    remote += r.src_local == next_src ? 0 : 1;
    local += r.dst_local == next_dst ? 0 : 1;
    next_src = r.src_local + r.length;
    next_dst = r.dst_local + r.length;
  });
  const auto columns =
      static_cast<std::size_t>(plan_.recv_cols[static_cast<std::size_t>(peer.col_slot)].total());
  return {static_cast<std::size_t>(peer.elements) * element_size_, remote * columns,
          local * columns};
}

void Executor::gather(std::size_t i, Index lo, Index hi, bool packed) {
  const Peer &peer = plan_.recvs[i];
  const Index lld = sender_identity_[i].lld;
  const std::size_t es = element_size_;
  Index position = 0;
  for_each_piece(plan_.recv_rows[static_cast<std::size_t>(peer.row_slot)],
                 plan_.recv_cols[static_cast<std::size_t>(peer.col_slot)], plan_.region, plan_.m,
                 plan_.n, lld, lld_dst_, [&](Index src, Index dst, Index count) {
                   const Index begin = std::max(position, lo);
                   const Index end = std::min(position + count, hi);
                   if (begin < end) {
                     const Index skip = begin - position;
                     reader_.add(static_cast<std::size_t>(packed ? begin - lo : src + skip) * es,
                                 static_cast<std::size_t>(dst + skip) * es,
                                 static_cast<std::size_t>(end - begin) * es);
                   }
                   position += count;
                 });
}

int Executor::read(std::size_t i, Index lo, Index hi, std::byte *b) {
  const single_copy::Identity &sender = sender_identity_[i];
  const Peer &peer = plan_.recvs[i];
  if (recv_way_[i] == single_copy::Way::mapped) {
    const std::byte *in = peer_segment_[i].at(peer_address_[i].address,
                                              static_cast<std::size_t>(hi - lo) * element_size_);
    if (in == nullptr) {
      return EFAULT;
    }
    unpack(peer, in, b, lo, hi);
    return 0;
  }
  const bool packed = recv_way_[i] == single_copy::Way::read_packed;
  if (packed && plan_.region.kind == Region::Kind::full) {
    // Bounce-sized windows of the message: unpack visits only their columns.
    const auto chunk = static_cast<Index>(single_copy::kBounceBytes / element_size_);
    for (Index position = lo; position < hi; position += chunk) {
      const Index n = std::min(chunk, hi - position);
      reader_.start(sender.pid,
                    peer_address_[i].address +
                        static_cast<std::size_t>(position - lo) * element_size_,
                    bounce_.get(), nullptr);
      reader_.add(0, 0, static_cast<std::size_t>(n) * element_size_);
      if (!reader_.finish()) {
        return reader_.error();
      }
      unpack(peer, bounce_.get(), b, position, position + n);
    }
    return 0;
  }
  if (single_copy::reads_array(recv_way_[i]) && peer_address_[i].array.fd >= 0) {
    const single_copy::Segment &array = peer_address_[i].array;
    if (peer_array_[i].id() != array.id) { // another array than the last one: map it
      peer_array_[i].map(sender.pid, array);
    }
    if (!peer_array_[i].empty()) {
      return copy_from_array(i, lo, hi, b);
    }
  }
  reader_.start(sender.pid, peer_address_[i].address, b,
                recv_way_[i] == single_copy::Way::direct ? nullptr : bounce_.get(), streams(peer));
  gather(i, lo, hi, packed);
  reader_.finish();
  return reader_.error();
}

void Executor::post_receive(std::size_t i, Index lo, Index hi, std::byte *buffer) {
  const int rank = plan_.recvs[i].rank;
  if (recv_way_[i] != single_copy::Way::sent) {
    post(false, bytes_of(peer_address_[i]), sizeof(single_copy::Address), tag_ + kAddressTag,
         {RequestKind::address_receive, static_cast<int>(i), rank, lo, hi, nullptr});
    return;
  }
  const RequestInfo info{RequestKind::data_receive, static_cast<int>(i), rank, lo, hi, buffer};
  const std::size_t before = requests_.size();
  post(false, buffer, static_cast<std::size_t>(hi - lo) * element_size_, tag_, info);
  pieces_pending_[i] = static_cast<int>(requests_.size() - before);
}

void Executor::post_send(std::size_t i, Index lo, Index hi, const std::byte *a,
                         std::size_t offset) {
  const int rank = plan_.sends[i].rank;
  const RequestInfo info{RequestKind::send, static_cast<int>(i), rank, lo, hi, nullptr};
  const single_copy::Way way = send_way_[i];
  std::byte *buffer =
      (way == single_copy::Way::mapped || !send_buffer_ ? segment_.data() : send_buffer_.get()) +
      offset;
  if (!single_copy::reads_array(way)) {
    pack(plan_.sends[i], a, buffer, lo, hi);
    streaming_fence(); // the receiver, or MPI, reads the buffer from another process
  }
  if (way == single_copy::Way::sent) {
    post(true, buffer, static_cast<std::size_t>(hi - lo) * element_size_, tag_, info);
    return;
  }
  post(false, bytes_of(reply_in_[i]), sizeof(std::int64_t), tag_ + kReplyTag,
       {RequestKind::reply_receive, static_cast<int>(i), rank, lo, hi, nullptr});
  if (single_copy::reads_array(way)) {
    address_out_[i] = {reinterpret_cast<std::uintptr_t>(a), single_copy::shared_array_of(a)};
  } else {
    address_out_[i] = {reinterpret_cast<std::uintptr_t>(buffer), {}};
  }
  post(true, bytes_of(address_out_[i]), sizeof(single_copy::Address), tag_ + kAddressTag, info);
}

void Executor::complete(std::size_t first, std::size_t end, std::byte *b, const char *what) {
  wait_each(
      first, end, what, [&](std::size_t k) { return request_info_[k].rank; },
      [&](std::size_t k) {
        const RequestInfo &info = request_info_[k];
        const auto i = static_cast<std::size_t>(info.peer);
        switch (info.kind) {
        case RequestKind::data_receive:
          // A message with a failed piece never reaches zero pending pieces: not unpacked.
          if (--pieces_pending_[i] == 0) {
            unpack(plan_.recvs[i], info.buffer, b, info.lo, info.hi);
          }
          break;
        case RequestKind::address_receive: {
          const int error = read(i, info.lo, info.hi, b);
          reply_out_[i] = error;
          if (error != 0 && failure_.empty()) {
            failure_ = "redist execute: single-copy read from rank " + std::to_string(info.rank) +
                       " failed: " + (error > 0 ? std::strerror(error) : "short read");
          }
          // Copied after the read: the reply may be posted while request_info_ grows.
          const RequestInfo reply{RequestKind::send, info.peer, info.rank, 0, 0, nullptr};
          post(true, bytes_of(reply_out_[i]), sizeof(std::int64_t), tag_ + kReplyTag, reply);
          break;
        }
        case RequestKind::reply_receive:
          if (reply_in_[i] != 0 && failure_.empty()) {
            failure_ = "redist execute: rank " + std::to_string(info.rank) +
                       " could not read this rank's array in a single copy (errno " +
                       std::to_string(reply_in_[i]) + ")";
          }
          break;
        case RequestKind::send:
          break;
        }
      });
}

void Executor::execute(const void *a_void, void *b_void) {
  const auto *a = static_cast<const std::byte *>(a_void);
  auto *b = static_cast<std::byte *>(b_void);
  failure_.clear();
  if (phases_[0]) {
    execute_two_phases(a, b);
  } else {
    std::fill(copied_from_array_.begin(), copied_from_array_.end(), 0);
    if (!negotiated_) {
      negotiate(a);
    } else if (!later_ways_in_use_) {
      use_later_ways();
    }
    if (schedule_.strategy == Strategy::all_at_once) {
      execute_all_at_once(a, b);
    } else {
      execute_steps(a, b);
    }
  }
  streaming_fence();
  if (!failure_.empty()) {
    throw Error(REDIST_ERR_MPI, failure_);
  }
}

namespace {

// Give the whole pages inside [begin, begin + bytes) back to the system; they read as zeros
// if touched again.
void release_pages(std::byte *begin, std::size_t bytes) {
  const auto page = static_cast<std::uintptr_t>(sysconf(_SC_PAGESIZE));
  const std::uintptr_t first = (reinterpret_cast<std::uintptr_t>(begin) + page - 1) / page * page;
  const std::uintptr_t end = (reinterpret_cast<std::uintptr_t>(begin) + bytes) / page * page;
  if (first < end) {
    // NOLINTNEXTLINE(performance-no-int-to-ptr): a page boundary inside the buffer
    madvise(reinterpret_cast<void *>(first), end - first, MADV_DONTNEED);
  }
}

} // namespace

void Executor::use_later_ways() {
  // Same sizes: copying allocates nothing.
  send_way_ = later_send_way_;
  recv_way_ = later_recv_way_;
  later_ways_in_use_ = true;
  if (!send_buffer_) {
    return; // stepwise: one buffer for every way
  }
  for (std::size_t i = 0; i < send_way_.size(); ++i) {
    if (send_way_[i] == single_copy::Way::mapped || single_copy::reads_array(send_way_[i])) {
      release_pages(send_buffer_.get() + send_offsets_[i], send_offsets_[i + 1] - send_offsets_[i]);
    }
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
  requests_.clear();
  request_info_.clear();
  for (std::size_t i = 0; i < plan_.recvs.size(); ++i) {
    post_receive(i, 0, plan_.recvs[i].elements, recv_buffer_.get() + recv_offsets_[i]);
  }
  const std::size_t receives = requests_.size();
  for (std::size_t i = 0; i < plan_.sends.size(); ++i) {
    post_send(i, 0, plan_.sends[i].elements, a, send_offsets_[i]);
  }
  copy_local(a, b);
  complete(0, receives, b, "MPI_Waitany (receive)");
  complete(receives, requests_.size(), b, "MPI_Waitany (send)");
}

// Stepwise execution: in each step this rank exchanges only with that step's partners (no
// barrier: a step waits for its own two messages only); packed pieces longer than the chunk
// go in sub-steps, so the buffers never exceed one chunk each way. A single-copy piece moves
// whole in the first sub-step: it needs no buffer.
void Executor::execute_steps(const std::byte *a, std::byte *b) {
  bool local_done = false;
  for (const RankStep &step : schedule_.steps) {
    const auto recv = static_cast<std::size_t>(step.recv);
    const auto send = static_cast<std::size_t>(step.send);
    const bool recv_direct = step.recv_count > 0 && single_copy::reads_array(recv_way_[recv]);
    const bool send_direct = step.send_count > 0 && single_copy::reads_array(send_way_[send]);
    const Index recv_packed = recv_direct ? 0 : step.recv_count;
    const Index send_packed = send_direct ? 0 : step.send_count;
    const Index longest = std::max(recv_packed, send_packed);
    const Index chunk =
        schedule_.chunk_elements > 0 ? schedule_.chunk_elements : std::max<Index>(longest, 1);
    for (Index begin = 0; begin == 0 || begin < longest; begin += chunk) {
      requests_.clear();
      request_info_.clear();
      const Index recv_n = std::clamp<Index>(recv_packed - begin, 0, chunk);
      const Index send_n = std::clamp<Index>(send_packed - begin, 0, chunk);
      if (begin == 0 && recv_direct) {
        post_receive(recv, step.recv_offset, step.recv_offset + step.recv_count, nullptr);
      }
      if (recv_n > 0) {
        const Index lo = step.recv_offset + begin;
        post_receive(recv, lo, lo + recv_n, recv_buffer_.get());
      }
      const std::size_t receives = requests_.size();
      if (begin == 0 && send_direct) {
        post_send(send, step.send_offset, step.send_offset + step.send_count, a, 0);
      }
      if (send_n > 0) {
        const Index lo = step.send_offset + begin;
        post_send(send, lo, lo + send_n, a, 0);
      }
      if (!local_done) {
        copy_local(a, b);
        local_done = true;
      }
      complete(0, receives, b, "MPI_Waitany (receive)");
      complete(receives, requests_.size(), b, "MPI_Waitany (send)");
    }
  }
  if (!local_done) {
    copy_local(a, b);
  }
}

std::size_t Executor::single_copy_sends() const {
  if (phases_[0]) { // its own plan_ is the whole transfer: the phases hold the messages
    return phases_[0]->single_copy_sends() + phases_[1]->single_copy_sends();
  }
  return plan_.sends.size() - static_cast<std::size_t>(std::count(
                                  send_way_.begin(), send_way_.end(), single_copy::Way::sent));
}

std::size_t Executor::single_copy_receives() const {
  if (phases_[0]) { // its own plan_ is the whole transfer: the phases hold the messages
    return phases_[0]->single_copy_receives() + phases_[1]->single_copy_receives();
  }
  return plan_.recvs.size() - static_cast<std::size_t>(std::count(
                                  recv_way_.begin(), recv_way_.end(), single_copy::Way::sent));
}

std::size_t Executor::mapped_receives() const {
  if (phases_[0]) {
    return phases_[0]->mapped_receives() + phases_[1]->mapped_receives();
  }
  return static_cast<std::size_t>(
      std::count(recv_way_.begin(), recv_way_.end(), single_copy::Way::mapped));
}

std::size_t Executor::array_copies() const {
  if (phases_[0]) {
    return phases_[0]->array_copies() + phases_[1]->array_copies();
  }
  return static_cast<std::size_t>(
      std::count(copied_from_array_.begin(), copied_from_array_.end(), 1));
}

namespace {

// Elements of a sender's array (leading dimension lld) up to the last one a message reads:
// local indices grow with the window index, so that is its last column's last row.
Index source_extent(const RunPattern &rows, const RunPattern &cols, Index lld) {
  if (rows.total() == 0 || cols.total() == 0) {
    return 0;
  }
  Index row_end = 0;
  Index last_column = 0;
  rows.for_each(rows.index_of(rows.total() - 1), rows.window_length(),
                [&](const Run &r) { row_end = r.src_local + r.length; });
  cols.for_each(cols.index_of(cols.total() - 1), cols.window_length(),
                [&](const Run &c) { last_column = c.src_local + c.length - 1; });
  return last_column * lld + row_end;
}

} // namespace

int Executor::copy_from_array(std::size_t i, Index lo, Index hi, std::byte *b) {
  const Peer &peer = plan_.recvs[i];
  const auto r = static_cast<std::size_t>(peer.row_slot);
  const RunPattern &cols = plan_.recv_cols[static_cast<std::size_t>(peer.col_slot)];
  const Index lld = sender_identity_[i].lld;
  const auto extent = static_cast<std::size_t>(source_extent(plan_.recv_rows[r], cols, lld));
  const std::byte *a = peer_array_[i].at(peer_address_[i].address, extent * element_size_);
  if (a == nullptr) {
    return EFAULT; // the sender's array ends before the message does
  }
  Copier copier(a, b, element_size_, false, false, streams(peer), lo, hi);
  copy_message(plan_.recv_rows[r], recv_groups_[r], cols, copier, lld);
  copied_from_array_[i] = 1;
  return 0;
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
