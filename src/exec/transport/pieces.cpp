// The copies of Pieces: its plans, and the walks of a message's pieces (2-D and N-d) that pack,
// unpack and copy the local part or a message from a sender's mapped array, through the
// Copier. Transposed plans' copies are pieces_transposed.cpp's, the single-copy ways' reads
// pieces_read.cpp's.

#include "pieces.hpp"

#include "copy.hpp"

#include <algorithm>
#include <cstring>
#include <optional>
#include <stdexcept>
#include <utility>

namespace redist {
namespace {

// `count` pieces of N bytes, piece e from from + e * from_step to to + e * to_step (bytes):
// a loop of fixed-size moves instead of a call per piece.
template <std::size_t N>
void copy_fixed_pieces(std::byte *to, Index to_step, const std::byte *from, Index from_step,
                       Index count) {
  for (Index e = 0; e < count; ++e) {
    std::memcpy(to + e * to_step, from + e * from_step, N);
  }
}

// The same for pieces of `bytes` bytes; false (nothing copied) for sizes without such a loop
// (up to 192 bytes: blocks of 12, 16 and 24 doubles too, where a call of memcpy per piece made a
// cached 128 x 128 call at 2 ranks, blocks 16 -> 24, a tenth slower). Every size is below the
// pieces that are collected or streamed instead of copied here.
constexpr std::size_t kLongestShortPiece = 192;
static_assert(kLongestShortPiece < kCollectedPieceBytes && kLongestShortPiece < kStreamedPieceBytes,
              "a piece this loop copies is neither collected nor streamed");
bool copy_short_pieces(std::byte *to, Index to_step, const std::byte *from, Index from_step,
                       Index count, std::size_t bytes) {
  switch (bytes) {
  case 4:
    copy_fixed_pieces<4>(to, to_step, from, from_step, count);
    return true;
  case 8:
    copy_fixed_pieces<8>(to, to_step, from, from_step, count);
    return true;
  case 16:
    copy_fixed_pieces<16>(to, to_step, from, from_step, count);
    return true;
  case 24:
    copy_fixed_pieces<24>(to, to_step, from, from_step, count);
    return true;
  case 32:
    copy_fixed_pieces<32>(to, to_step, from, from_step, count);
    return true;
  case 48:
    copy_fixed_pieces<48>(to, to_step, from, from_step, count);
    return true;
  case 64:
    copy_fixed_pieces<64>(to, to_step, from, from_step, count);
    return true;
  case 96:
    copy_fixed_pieces<96>(to, to_step, from, from_step, count);
    return true;
  case 128:
    copy_fixed_pieces<128>(to, to_step, from, from_step, count);
    return true;
  case kLongestShortPiece:
    copy_fixed_pieces<kLongestShortPiece>(to, to_step, from, from_step, count);
    return true;
  default:
    return false;
  }
}

} // namespace

// Copies pieces between a local array and a message buffer (one side "packed": positions
// are consecutive in message order) or between two local arrays. Consecutive pieces that are
// contiguous on both sides are joined first (whole columns with lld == column length become
// one copy); groups of single elements run through a fixed-size loop. With an operation, each
// piece is combined into the destination instead of copied (B := alpha * A + beta * B).
class Copier {
public:
  /// On the packed side only message positions [window_lo, window_hi) are copied, to or from
  /// buffer position (position - window_lo): a piece of a message split across steps.
  /// `streaming`: large pieces bypass the cache (copy.hpp).
  /// `collected`: where pieces of at least kCollectedPieceBytes go instead of being copied
  /// (Pieces::collect), or null.
  Copier(const std::byte *src, std::byte *dst, std::size_t element_size, bool src_packed,
         bool dst_packed, bool streaming, Index window_lo = 0, Index window_hi = INT64_MAX,
         std::vector<PieceCopy> *collected = nullptr)
      : src_(src), dst_(dst), es_(element_size), src_packed_(src_packed), dst_packed_(dst_packed),
        streaming_(streaming), window_lo_(window_lo), window_hi_(window_hi), collected_(collected) {
  }
  /// Pieces combined by `op` (which must outlive the copier), never collected or streamed.
  Copier(const Operation &op, const std::byte *src, std::byte *dst, bool src_packed,
         Index window_lo, Index window_hi)
      : Copier(src, dst, op.element_size(), src_packed, false, false, window_lo, window_hi) {
    combine_.emplace(op);
  }
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
    copy_columns(g, src_col, 0, dst_col, 0, 1);
  }

  /// add_group for `columns` columns, column j's first local rows at src_col + j * src_col_step
  /// and dst_col + j * dst_col_step: inside the window, the columns' pieces without a call each.
  void add_columns(const RowGroup &g, Index src_col, Index src_col_step, Index dst_col,
                   Index dst_col_step, Index columns) {
    if (g.count == 1 && (src_packed_ || src_col_step == g.length) &&
        (dst_packed_ || dst_col_step == g.length)) {
      add(src_col + g.src, dst_col + g.dst, columns * g.length); // whole columns: one stretch
      return;
    }
    if (g.count == 1 || packed_ < window_lo_ ||
        packed_ + columns * g.count * g.length > window_hi_) {
      for (Index j = 0; j < columns; ++j) { // joined where contiguous, or clipped
        add_group(g, src_col + j * src_col_step, dst_col + j * dst_col_step);
      }
      return;
    }
    copy_columns(g, src_col, src_col_step, dst_col, dst_col_step, columns);
  }

  /// A height x width rectangle of the message at the next positions: element (e, w) at
  /// src + e * src_e + w * src_w, dst + e * dst_e + w * dst_w (in the arrays that are not
  /// packed) and position + w * height + e (a group of strided pieces: an N-d transposition),
  /// copied in cache-sized sub-blocks.
  void add_rectangle(Index src, Index src_e, Index src_w, Index dst, Index dst_e, Index dst_w,
                     Index height, Index width) {
    const Index total = height * width;
    if (packed_ + total <= window_lo_ || packed_ >= window_hi_) {
      packed_ += total; // wholly outside the window
      return;
    }
    flush();
    if (packed_ < window_lo_ || packed_ + total > window_hi_) {
      // Clipped by the window: the elements inside it one at a time.
      for (Index w = 0; w < width; ++w) {
        for (Index e = 0; e < height; ++e) {
          add(src + e * src_e + w * src_w, dst + e * dst_e + w * dst_w, 1);
        }
      }
      flush();
      return;
    }
    const Index from = src_packed_ ? packed_ - window_lo_ : src;
    const Index to = dst_packed_ ? packed_ - window_lo_ : dst;
    packed_ += total;
    if (combine_) {
      apply_operation(combine_->operation(), dst_ + static_cast<std::size_t>(to) * es_,
                      dst_packed_ ? 1 : dst_e, dst_packed_ ? height : dst_w,
                      src_ + static_cast<std::size_t>(from) * es_, src_packed_ ? 1 : src_e,
                      src_packed_ ? height : src_w, height, width);
      return;
    }
    copy_rectangle(dst_ + static_cast<std::size_t>(to) * es_, dst_packed_ ? 1 : dst_e,
                   dst_packed_ ? height : dst_w, src_ + static_cast<std::size_t>(from) * es_,
                   src_packed_ ? 1 : src_e, src_packed_ ? height : src_w, height, width, es_,
                   streaming_);
  }

private:
  // The pieces of `g` in `columns` columns, all inside the window (add_columns).
  void copy_columns(const RowGroup &g, Index src_col, Index src_col_step, Index dst_col,
                    Index dst_col_step, Index columns) {
    flush();
    const Index total = g.count * g.length;
    const Index src = src_packed_ ? packed_ - window_lo_ : src_col + g.src;
    const Index dst = dst_packed_ ? packed_ - window_lo_ : dst_col + g.dst;
    const Index src_step = src_packed_ ? g.length : g.src_step;
    const Index dst_step = dst_packed_ ? g.length : g.dst_step;
    const Index src_next = src_packed_ ? total : src_col_step;
    const Index dst_next = dst_packed_ ? total : dst_col_step;
    packed_ += columns * total;
    const auto es = static_cast<Index>(es_);
    std::byte *to = dst_ + static_cast<std::size_t>(dst) * es_;
    const std::byte *from = src_ + static_cast<std::size_t>(src) * es_;
    const std::size_t bytes = static_cast<std::size_t>(g.length) * es_;
    for (Index j = 0; j < columns; ++j, to += dst_next * es, from += src_next * es) {
      if (!combine_ && copy_short_pieces(to, dst_step * es, from, src_step * es, g.count, bytes)) {
        continue;
      }
      for (Index e = 0; e < g.count; ++e) {
        copy(to + static_cast<std::size_t>(e * dst_step) * es_,
             from + static_cast<std::size_t>(e * src_step) * es_, bytes);
      }
    }
  }

  void flush() {
    if (count_ == 0) {
      return;
    }
    std::byte *to = dst_ + static_cast<std::size_t>(dst_off_) * es_;
    const std::byte *from = src_ + static_cast<std::size_t>(src_off_) * es_;
    const std::size_t bytes = static_cast<std::size_t>(count_) * es_;
    count_ = 0;
    copy(to, from, bytes);
  }

  void copy(std::byte *to, const std::byte *from, std::size_t bytes) {
    if (combine_) {
      (*combine_)(to, 1, from, 1, static_cast<Index>(bytes / es_));
      return;
    }
    if (collected_ != nullptr && bytes >= kCollectedPieceBytes) {
      collected_->push_back({to, from, bytes});
      return;
    }
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
  std::vector<PieceCopy> *collected_;
  std::optional<OperationKernel> combine_; ///< set: pieces are combined, not copied
  Index packed_ = 0;
  Index src_off_ = 0;
  Index dst_off_ = 0;
  Index count_ = 0;
};

Pieces::Pieces(RankPlan plan, std::size_t element_size, Index lld_src, Index lld_dst, bool copies)
    : plan_(std::move(plan)), element_size_(element_size), lld_src_(lld_src), lld_dst_(lld_dst) {
  if (copies) {
    send_groups_ = group_rows(plan_.send_rows, plan_.sends, &plan_.self);
    recv_groups_ = group_rows(plan_.recv_rows, plan_.recvs, nullptr);
  }
}

namespace {

// The 2-D view of a plan whose messages are its own (N-d, block grid): its peers' ranks and
// element counts, row_slot the index in its sends / recvs (-1: self).
template <class P> RankPlan skeleton_of(const P &plan) {
  RankPlan out;
  out.rank = plan.rank;
  const auto skeleton = [](const auto &p, int slot) {
    Peer q;
    q.rank = p.rank;
    q.row_slot = slot;
    q.elements = p.elements;
    return q;
  };
  for (std::size_t i = 0; i < plan.sends.size(); ++i) {
    out.sends.push_back(skeleton(plan.sends[i], static_cast<int>(i)));
  }
  for (std::size_t i = 0; i < plan.recvs.size(); ++i) {
    out.recvs.push_back(skeleton(plan.recvs[i], static_cast<int>(i)));
  }
  out.self = skeleton(plan.self, -1);
  return out;
}

} // namespace

RankPlan nd_skeleton(const NdRankPlan &plan) {
  RankPlan out = skeleton_of(plan);
  out.in_src = plan.in_src;
  out.in_dst = plan.in_dst;
  return out;
}

RankPlan grid_skeleton(const GridRankPlan &plan) {
  RankPlan out = skeleton_of(plan);
  out.self.rank = plan.rank;
  out.in_src = !plan.sends.empty() || plan.self.elements > 0;
  out.in_dst = !plan.recvs.empty() || plan.self.elements > 0;
  return out;
}

Pieces::Pieces(NdRankPlan plan, std::size_t element_size, const Strides &src_strides,
               const Strides &dst_strides)
    : plan_(nd_skeleton(plan)), element_size_(element_size), lld_src_(0), lld_dst_(0),
      nd_(std::make_shared<const NdRankPlan>(std::move(plan))), nd_src_strides_(src_strides),
      nd_dst_strides_(dst_strides), nd_sender_strides_(plan_.recvs.size()) {}

void Pieces::copy_nd(const NdPeer &peer, bool sending, PieceSide side, const Strides &src_strides,
                     const std::byte *from, std::byte *to, Index lo, Index hi) const {
  const bool streaming = static_cast<std::size_t>(peer.elements) * element_size_ >= kStreamingBytes;
  // Packed side: message positions from lo; array side: the groups' offsets.
  const bool from_packed = side == PieceSide::destination;
  const bool to_packed = side == PieceSide::source;
  Copier copier(from, to, element_size_, from_packed, to_packed, streaming, lo, hi,
                sending ? collected_ : nullptr);
  for_each_nd_group(
      nd_->message(peer, sending), side, src_strides, nd_dst_strides_, lo, hi,
      [&](const NdPieceGroup &g) {
        const NdPiece &p = g.first;
        copier.skip_to(p.position);
        if ((from_packed || p.src_step == 1) && (to_packed || p.dst_step == 1)) {
          copier.add_group({p.src, p.dst, p.count, g.pieces, g.src_advance, g.dst_advance}, 0, 0);
        } else {
          copier.add_rectangle(p.src, p.src_step, g.src_advance, p.dst, p.dst_step, g.dst_advance,
                               p.count, g.pieces);
        }
      });
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
  const Index columns = cols.total();
  const Index hi = std::min(copier.window_hi(), per_column * columns);
  // A whole message (the usual case) needs no division, and no search below.
  const Index first = copier.window_lo() == 0 ? 0 : copier.window_lo() / per_column;
  const Index last = hi == per_column * columns ? columns : (hi + per_column - 1) / per_column;
  if (first >= last) {
    return;
  }
  copier.skip_to(first * per_column);
  const Index begin = first == 0 ? 0 : cols.index_of(first);
  const Index end = last == columns ? cols.window_length() : cols.index_of(last - 1) + 1;
  const RowGroup *only = groups.only();
  cols.for_each(begin, end, [&](const Run &c) {
    if (only != nullptr) { // every column of the run in one call
      copier.add_columns(*only, c.src_local * src_lld, src_lld, c.dst_local * lld_dst_, lld_dst_,
                         c.length);
      return;
    }
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
  if (batch_) {
    copy_batch(peer, true, a, out, lo, hi);
    return;
  }
  if (grid_) {
    copy_grid(grid_->plan->sends[static_cast<std::size_t>(peer.row_slot)], true, a, out, lo, hi);
    return;
  }
  if (nd_) {
    copy_nd(nd_->sends[static_cast<std::size_t>(peer.row_slot)], true, PieceSide::source,
            nd_src_strides_, a, out, lo, hi);
    return;
  }
  if (plan_.transposed()) {
    copy_transposed(plan_.send_rows[static_cast<std::size_t>(peer.row_slot)],
                    plan_.send_cols[static_cast<std::size_t>(peer.col_slot)], a, lld_src_, out,
                    true, lo, std::min(hi, peer.elements), streams(peer));
    return;
  }
  Copier copier(a, out, element_size_, false, true, streams(peer), lo, hi, collected_);
  const auto r = static_cast<std::size_t>(peer.row_slot);
  copy_message(plan_.send_rows[r], send_groups_[r],
               plan_.send_cols[static_cast<std::size_t>(peer.col_slot)], copier, lld_src_);
}

void Pieces::apply_pieces(const RunPattern &rows, const RowGroups &groups, const RunPattern &cols,
                          const std::byte *from, bool packed, std::byte *b, Index lo, Index hi,
                          Index src_lld) const {
  Copier copier(*operation_, from, b, packed, lo, hi);
  copy_message(rows, groups, cols, copier, src_lld);
}

void Pieces::unpack(const Peer &peer, const std::byte *in, std::byte *b, Index lo, Index hi) const {
  if (batch_) {
    copy_batch(peer, false, in, b, lo, hi);
    return;
  }
  if (grid_) {
    copy_grid(grid_->plan->recvs[static_cast<std::size_t>(peer.row_slot)], false, in, b, lo, hi);
    return;
  }
  if (nd_) {
    copy_nd(nd_->recvs[static_cast<std::size_t>(peer.row_slot)], false, PieceSide::destination,
            nd_src_strides_, in, b, lo, hi);
    return;
  }
  if (operation_ != nullptr) {
    const auto r = static_cast<std::size_t>(peer.row_slot);
    apply_pieces(plan_.recv_rows[r], recv_groups_[r],
                 plan_.recv_cols[static_cast<std::size_t>(peer.col_slot)], in, true, b, lo, hi,
                 lld_src_);
    return;
  }
  Copier copier(in, b, element_size_, true, false, streams(peer), lo, hi);
  const auto r = static_cast<std::size_t>(peer.row_slot);
  copy_message(plan_.recv_rows[r], recv_groups_[r],
               plan_.recv_cols[static_cast<std::size_t>(peer.col_slot)], copier, lld_src_);
}

void Pieces::copy_local_in_parts(const std::byte *a, std::byte *b, std::size_t window_bytes,
                                 const std::function<void()> &between) const {
  if (batch_) {
    copy_batch_local(a, b, between);
    return;
  }
  if (!windows_local()) {
    copy_local(a, b);
    between();
    return;
  }
  const Index elements = plan_.self.elements;
  const auto window = std::max<Index>(static_cast<Index>(window_bytes / element_size_), 1);
  for (Index lo = 0; lo < elements; lo += window) {
    copy_local(a, b, lo, std::min(elements, lo + window));
    between();
  }
}

void Pieces::copy_local(const std::byte *a, std::byte *b, Index lo, Index hi) const {
  if (plan_.self.elements == 0) {
    return;
  }
  if ((lo != 0 || hi < plan_.self.elements) && !windows_local()) {
    throw std::logic_error("redist: a window of a local copy that takes none");
  }
  if (batch_) {
    copy_batch_local(a, b);
    return;
  }
  if (grid_) {
    copy_grid_local(a, b);
    return;
  }
  if (nd_) {
    copy_nd(nd_->self, true, PieceSide::both, nd_src_strides_, a, b, lo, hi);
    return;
  }
  if (plan_.transposed()) {
    copy_transposed(plan_.send_rows[static_cast<std::size_t>(plan_.self.row_slot)],
                    plan_.send_cols[static_cast<std::size_t>(plan_.self.col_slot)], a, lld_src_, b,
                    false, 0, plan_.self.elements, streams(plan_.self));
    return;
  }
  if (operation_ != nullptr) {
    const auto r = static_cast<std::size_t>(plan_.self.row_slot);
    apply_pieces(plan_.send_rows[r], send_groups_[r],
                 plan_.send_cols[static_cast<std::size_t>(plan_.self.col_slot)], a, false, b, 0,
                 plan_.self.elements, lld_src_);
    return;
  }
  Copier copier(a, b, element_size_, false, false, streams(plan_.self), lo, hi, collected_);
  const auto r = static_cast<std::size_t>(plan_.self.row_slot);
  copy_message(plan_.send_rows[r], send_groups_[r],
               plan_.send_cols[static_cast<std::size_t>(plan_.self.col_slot)], copier, lld_src_);
}

void Pieces::copy_from_array(const Peer &peer, const std::byte *src, Index src_lld, std::byte *b,
                             Index lo, Index hi) const {
  if (grid_) {
    copy_tiles(grid_->reads[static_cast<std::size_t>(peer.row_slot)], src, b, lo, hi);
    return;
  }
  if (nd_) {
    copy_nd(nd_->recvs[static_cast<std::size_t>(peer.row_slot)], false, PieceSide::both,
            nd_sender_strides_[static_cast<std::size_t>(peer.row_slot)], src, b, lo, hi);
    return;
  }
  if (plan_.transposed()) {
    copy_transposed(plan_.recv_rows[static_cast<std::size_t>(peer.row_slot)],
                    plan_.recv_cols[static_cast<std::size_t>(peer.col_slot)], src, src_lld, b,
                    false, lo, std::min(hi, peer.elements), streams(peer));
    return;
  }
  if (operation_ != nullptr) {
    const auto r = static_cast<std::size_t>(peer.row_slot);
    apply_pieces(plan_.recv_rows[r], recv_groups_[r],
                 plan_.recv_cols[static_cast<std::size_t>(peer.col_slot)], src, false, b, lo, hi,
                 src_lld);
    return;
  }
  Copier copier(src, b, element_size_, false, false, streams(peer), lo, hi);
  const auto r = static_cast<std::size_t>(peer.row_slot);
  copy_message(plan_.recv_rows[r], recv_groups_[r],
               plan_.recv_cols[static_cast<std::size_t>(peer.col_slot)], copier, src_lld);
}

} // namespace redist
