#include "pieces.hpp"

#include "copy.hpp"

#include <algorithm>
#include <cstring>
#include <utility>

namespace redist {
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

Pieces::Pieces(RankPlan plan, std::size_t element_size, Index lld_src, Index lld_dst, bool copies)
    : plan_(std::move(plan)), element_size_(element_size), lld_src_(lld_src), lld_dst_(lld_dst) {
  if (copies) {
    send_groups_ = group_rows(plan_.send_rows, plan_.sends, &plan_.self);
    recv_groups_ = group_rows(plan_.recv_rows, plan_.recvs, nullptr);
  }
}

std::vector<RowGroups> Pieces::group_rows(const std::vector<RunPattern> &patterns,
                                          const std::vector<Peer> &peers, const Peer *self) const {
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

void Pieces::copy_message(const RunPattern &rows, const RowGroups &groups, const RunPattern &cols,
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

bool Pieces::streams(const Peer &peer) const {
  return static_cast<std::size_t>(peer.elements) * element_size_ >= kStreamingBytes;
}

void Pieces::pack(const Peer &peer, const std::byte *a, std::byte *out, Index lo, Index hi) const {
  Copier copier(a, out, element_size_, false, true, streams(peer), lo, hi);
  const auto r = static_cast<std::size_t>(peer.row_slot);
  copy_message(plan_.send_rows[r], send_groups_[r],
               plan_.send_cols[static_cast<std::size_t>(peer.col_slot)], copier, lld_src_);
}

void Pieces::unpack(const Peer &peer, const std::byte *in, std::byte *b, Index lo, Index hi) const {
  Copier copier(in, b, element_size_, true, false, streams(peer), lo, hi);
  const auto r = static_cast<std::size_t>(peer.row_slot);
  copy_message(plan_.recv_rows[r], recv_groups_[r],
               plan_.recv_cols[static_cast<std::size_t>(peer.col_slot)], copier, lld_src_);
}

void Pieces::copy_local(const std::byte *a, std::byte *b) const {
  if (plan_.self.elements == 0) {
    return;
  }
  Copier copier(a, b, element_size_, false, false, streams(plan_.self));
  const auto r = static_cast<std::size_t>(plan_.self.row_slot);
  copy_message(plan_.send_rows[r], send_groups_[r],
               plan_.send_cols[static_cast<std::size_t>(plan_.self.col_slot)], copier, lld_src_);
}

single_copy::PieceCounts Pieces::estimate_pieces(const Peer &peer) const {
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

void Pieces::gather(const Peer &peer, Index sender_lld, Index lo, Index hi, bool packed,
                    single_copy::Reader &reader) const {
  const Index lld = sender_lld;
  const std::size_t es = element_size_;
  Index position = 0;
  for_each_piece(plan_.recv_rows[static_cast<std::size_t>(peer.row_slot)],
                 plan_.recv_cols[static_cast<std::size_t>(peer.col_slot)], plan_.region, plan_.m,
                 plan_.n, lld, lld_dst_, [&](Index src, Index dst, Index count) {
                   const Index begin = std::max(position, lo);
                   const Index end = std::min(position + count, hi);
                   if (begin < end) {
                     const Index skip = begin - position;
                     reader.add(static_cast<std::size_t>(packed ? begin - lo : src + skip) * es,
                                static_cast<std::size_t>(dst + skip) * es,
                                static_cast<std::size_t>(end - begin) * es);
                   }
                   position += count;
                 });
}

Index Pieces::source_extent(const Peer &peer, Index lld) const {
  return redist::source_extent(plan_.recv_rows[static_cast<std::size_t>(peer.row_slot)],
                               plan_.recv_cols[static_cast<std::size_t>(peer.col_slot)], lld);
}

void Pieces::copy_from_array(const Peer &peer, const std::byte *src, Index src_lld, std::byte *b,
                             Index lo, Index hi) const {
  Copier copier(src, b, element_size_, false, false, streams(peer), lo, hi);
  const auto r = static_cast<std::size_t>(peer.row_slot);
  copy_message(plan_.recv_rows[r], recv_groups_[r],
               plan_.recv_cols[static_cast<std::size_t>(peer.col_slot)], copier, src_lld);
}

} // namespace redist
