#include "pieces.hpp"

#include "copy.hpp"
#include "tiles.hpp"

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

// Element (e, w) of a height x width rectangle from `from` (steps from_e, from_w, in elements)
// to `to` (to_e, to_w), in kTransposeTile x kTransposeTile sub-blocks so that both sides of a
// transposition stay in the cache. N: the element size, 0 for `es` given at run time.
// `streaming` (a large copy): where `to` is contiguous along e, its columns are written with
// streaming stores (copy.hpp's stream_gather).
constexpr Index kTransposeTile = 32;
// The rows of a rectangle a transposed read reads at once (Pieces::read_transposed): the bounce
// buffer holds 256 of its columns in doubles, pieces of A of 2 KiB.
constexpr Index kReadRectangleRows = 128;

constexpr Index kCacheLine = 64;

// The first element at or after e (of a column starting at `column`, `height` elements of
// `size` bytes) that starts a cache line of the destination; e itself where lines and elements
// do not meet.
Index line_edge(const std::byte *column, Index e, Index height, std::size_t size) {
  constexpr auto kLine = static_cast<std::size_t>(kCacheLine);
  if (e <= 0 || e >= height) {
    return std::clamp<Index>(e, 0, height);
  }
  const std::size_t into =
      reinterpret_cast<std::uintptr_t>(column + static_cast<std::size_t>(e) * size) % kLine;
  if (into == 0 || (kLine - into) % size != 0) {
    return e;
  }
  return std::min(height, e + static_cast<Index>((kLine - into) / size));
}

template <std::size_t N, bool Gather>
void copy_rectangle(std::byte *to, Index to_e, Index to_w, const std::byte *from, Index from_e,
                    Index from_w, Index height, Index width, std::size_t es) {
  const std::size_t size = N > 0 ? N : es;
  for (Index w0 = 0; w0 < width; w0 += kTransposeTile) {
    const Index w1 = std::min(width, w0 + kTransposeTile);
    for (Index e0 = 0; e0 < height; e0 += kTransposeTile) {
      const Index e1 = std::min(height, e0 + kTransposeTile);
      if constexpr ((N == 8 || N == 4) && !Gather) {
        if (to_e == 1 && from_w == 1 && from_e != 1) { // a transposition, along its two axes
          (N == 8 ? transpose_8 : transpose_4)(
              to + static_cast<std::size_t>(e0 + w0 * to_w) * N, to_w * Index{N},
              from + static_cast<std::size_t>(e0 * from_e + w0) * N, from_e * Index{N},
              static_cast<std::size_t>(e1 - e0), static_cast<std::size_t>(w1 - w0));
          continue;
        }
      }
      for (Index w = w0; w < w1; ++w) {
        std::byte *t = to + static_cast<std::size_t>(w * to_w) * size;
        const std::byte *f = from + static_cast<std::size_t>(w * from_w) * size;
        if constexpr (Gather) { // to_e == 1
          // A sub-block's edges inside the column fall on the destination's cache lines: a
          // line split between two sub-blocks would be written through the cache, twice,
          // instead of streamed (with columns at 16 bytes past a line, pdtran 4000^2 at 2
          // ranks took 1.7x as long as with aligned ones).
          const Index lo = line_edge(t, e0, height, size);
          const Index hi = line_edge(t, e1, height, size);
          if constexpr (N == 8) {
            // Two columns at the same place in their lines: read in pairs along A's rows.
            if (w + 1 < w1 && from_w == 1 && to_w * Index{N} % kCacheLine == 0) {
              stream_gather_pair_8(t + static_cast<std::size_t>(lo) * N, to_w * Index{N},
                                   f + static_cast<std::size_t>(lo * from_e) * N, from_e * Index{N},
                                   static_cast<std::size_t>(hi - lo));
              ++w;
              continue;
            }
          }
          stream_gather(t + static_cast<std::size_t>(lo) * size,
                        f + static_cast<std::size_t>(lo * from_e) * size,
                        static_cast<std::ptrdiff_t>(from_e * static_cast<Index>(size)),
                        static_cast<std::size_t>(hi - lo), size);
        } else {
          for (Index e = e0; e < e1; ++e) {
            std::memcpy(t + static_cast<std::size_t>(e * to_e) * size,
                        f + static_cast<std::size_t>(e * from_e) * size, N > 0 ? N : es);
          }
        }
      }
    }
  }
}

template <std::size_t N>
void copy_rectangle(std::byte *to, Index to_e, Index to_w, const std::byte *from, Index from_e,
                    Index from_w, Index height, Index width, std::size_t es, bool streaming) {
  // Transpositions of 4-byte elements stay in the cache even when large: transpose_4's 4 x 4
  // blocks move 64 MiB of floats in 21 ms here, streaming stores a column at a time in 61 ms
  // and four columns at once in 31 ms (copy_bench).
  const bool floats_transposed = N == 4 && from_w == 1 && from_e != 1;
  // So do transpositions of doubles whose destination columns are at different places in their
  // cache lines (a leading dimension not a multiple of 8), which stream_gather_pair_8 cannot
  // pair: transpose_8's 2 x 2 blocks took 15.3-15.8 ms for 64 MiB, streaming a column at a
  // time 24.5-25.2 ms (copy_bench, "columns n + 1 apart").
  const bool doubles_unpaired =
      N == 8 && from_w == 1 && from_e != 1 && to_w * static_cast<Index>(N) % kCacheLine != 0;
  if (streaming && to_e == 1 && !floats_transposed && !doubles_unpaired) {
    copy_rectangle<N, true>(to, to_e, to_w, from, from_e, from_w, height, width, es);
  } else {
    copy_rectangle<N, false>(to, to_e, to_w, from, from_e, from_w, height, width, es);
  }
}

void copy_rectangle(std::byte *to, Index to_e, Index to_w, const std::byte *from, Index from_e,
                    Index from_w, Index height, Index width, std::size_t es,
                    bool streaming = false) {
  switch (es) {
  case 4:
    return copy_rectangle<4>(to, to_e, to_w, from, from_e, from_w, height, width, es, streaming);
  case 8:
    return copy_rectangle<8>(to, to_e, to_w, from, from_e, from_w, height, width, es, streaming);
  case 16:
    return copy_rectangle<16>(to, to_e, to_w, from, from_e, from_w, height, width, es, streaming);
  default:
    return copy_rectangle<0>(to, to_e, to_w, from, from_e, from_w, height, width, es, streaming);
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

// The pattern's stretches contiguous in the source's local indices and in the destination's.
std::pair<std::size_t, std::size_t> stretches(const RunPattern &pattern) {
  std::size_t src = 0;
  std::size_t dst = 0;
  Index next_src = -1;
  Index next_dst = -1;
  pattern.for_each([&](const Run &r) {
    src += r.src_local == next_src ? 0 : 1;
    dst += r.dst_local == next_dst ? 0 : 1;
    next_src = r.src_local + r.length;
    next_dst = r.dst_local + r.length;
  });
  return {src, dst};
}

// Adds to `reader` the part of each piece (src, dst, count) that lies in positions [lo, hi) of
// the message (pieces in message order); from the sender's array at src, or from its packed
// message (from lo) when `packed`.
class WindowReads {
public:
  WindowReads(single_copy::Reader &reader, std::size_t element_size, Index lo, Index hi,
              bool packed)
      : reader_(reader), es_(element_size), lo_(lo), hi_(hi), packed_(packed) {}
  void operator()(Index src, Index dst, Index count) {
    const Index begin = std::max(position_, lo_);
    const Index end = std::min(position_ + count, hi_);
    if (begin < end) {
      const Index skip = begin - position_;
      reader_.add(static_cast<std::size_t>(packed_ ? begin - lo_ : src + skip) * es_,
                  static_cast<std::size_t>(dst + skip) * es_,
                  static_cast<std::size_t>(end - begin) * es_);
    }
    position_ += count;
  }

private:
  single_copy::Reader &reader_;
  std::size_t es_;
  Index lo_;
  Index hi_;
  bool packed_;
  Index position_ = 0;
};

} // namespace

Pieces::Pieces(RankPlan plan, std::size_t element_size, Index lld_src, Index lld_dst, bool copies)
    : plan_(std::move(plan)), element_size_(element_size), lld_src_(lld_src), lld_dst_(lld_dst) {
  if (copies) {
    send_groups_ = group_rows(plan_.send_rows, plan_.sends, &plan_.self);
    recv_groups_ = group_rows(plan_.recv_rows, plan_.recvs, nullptr);
  }
}

RankPlan nd_skeleton(const NdRankPlan &plan) {
  RankPlan out;
  out.rank = plan.rank;
  out.in_src = plan.in_src;
  out.in_dst = plan.in_dst;
  const auto skeleton = [](const NdPeer &p, int slot) {
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

void Pieces::copy_transposed(const RunPattern &rows, const RunPattern &cols, const std::byte *a,
                             Index src_lld, std::byte *to, bool packed, Index lo, Index hi,
                             bool streaming) const {
  const std::size_t es = element_size_;
  for_each_tile(
      rows, cols, plan_.region, plan_.m, plan_.n, true, src_lld, lld_dst_, [&](const Tile &tile) {
        // Only message positions [lo, hi): column w of the tile holds positions
        // base(w) + [0, height), base(w) = position + w * position_width_step.
        const Index step = tile.position_width_step;
        Index w_begin = 0;
        Index w_end = tile.width;
        if (tile.width > 1) {                                   // then step >= height > 0
          const Index below = lo - tile.position - tile.height; // base(w) <= below: out
          w_begin = below < 0 ? 0 : below / step + 1;
          w_end = hi <= tile.position
                      ? 0
                      : std::min(tile.width, (hi - tile.position + step - 1) / step);
        }
        // Elements [e0, e1) x [w0, w1) of the tile.
        const auto copy = [&](Index e0, Index e1, Index w0, Index w1) {
          if (e0 >= e1 || w0 >= w1) {
            return;
          }
          const std::byte *from = a + static_cast<std::size_t>(tile.src + e0 * tile.src_step +
                                                               w0 * tile.src_width_step) *
                                          es;
          if (packed) {
            copy_rectangle(to + static_cast<std::size_t>(tile.position + w0 * step + e0 - lo) * es,
                           1, step, from, tile.src_step, tile.src_width_step, e1 - e0, w1 - w0, es,
                           streaming);
          } else if (operation_ != nullptr) {
            apply_operation(*operation_,
                            to + static_cast<std::size_t>(tile.dst + e0 * tile.dst_step +
                                                          w0 * tile.dst_width_step) *
                                     es,
                            tile.dst_step, tile.dst_width_step, from, tile.src_step,
                            tile.src_width_step, e1 - e0, w1 - w0);
          } else {
            copy_rectangle(to + static_cast<std::size_t>(tile.dst + e0 * tile.dst_step +
                                                         w0 * tile.dst_width_step) *
                                    es,
                           tile.dst_step, tile.dst_width_step, from, tile.src_step,
                           tile.src_width_step, e1 - e0, w1 - w0, es, streaming);
          }
        };
        // Whole columns in one blocked copy; only the first and last may be clipped.
        const auto clip = [&](Index w) {
          const Index base = tile.position + w * step;
          return std::pair<Index, Index>{std::max<Index>(0, lo - base),
                                         std::min(tile.height, hi - base)};
        };
        Index w0 = w_begin;
        Index w1 = w_end;
        if (w0 < w1) {
          if (const auto [e0, e1] = clip(w0); e0 > 0 || e1 < tile.height) {
            copy(e0, e1, w0, w0 + 1);
            ++w0;
          }
        }
        if (w0 < w1) {
          if (const auto [e0, e1] = clip(w1 - 1); e0 > 0 || e1 < tile.height) {
            copy(e0, e1, w1 - 1, w1);
            --w1;
          }
        }
        copy(0, tile.height, w0, w1);
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

single_copy::PieceCounts Pieces::estimate_nd_pieces(const Peer &peer) const {
  const NdMessage m = nd_->message(nd_->recvs[static_cast<std::size_t>(peer.row_slot)], false);
  const Strides &sender = nd_sender_strides_[static_cast<std::size_t>(peer.row_slot)];
  return {static_cast<std::size_t>(peer.elements) * element_size_,
          static_cast<std::size_t>(
              redist::estimate_nd_pieces(m, PieceSide::source, sender, nd_dst_strides_)),
          static_cast<std::size_t>(
              redist::estimate_nd_pieces(m, PieceSide::destination, sender, nd_dst_strides_))};
}

void Pieces::gather_nd(const Peer &peer, Index lo, Index hi, bool packed,
                       single_copy::Reader &reader) const {
  const NdMessage m = nd_->message(nd_->recvs[static_cast<std::size_t>(peer.row_slot)], false);
  for_each_piece_nd(m, nd_sender_strides_[static_cast<std::size_t>(peer.row_slot)], nd_dst_strides_,
                    WindowReads(reader, element_size_, lo, hi, packed));
}

Index Pieces::nd_source_extent(const Peer &peer) const {
  // Local indices grow with the window index: each dimension's last run ends the furthest.
  const NdMessage m = nd_->message(nd_->recvs[static_cast<std::size_t>(peer.row_slot)], false);
  const Strides &sender = nd_sender_strides_[static_cast<std::size_t>(peer.row_slot)];
  Index last = 0;
  for (int d = 0; d < m.ndims; ++d) {
    const RunPattern &p = *m.dims[static_cast<std::size_t>(d)];
    if (p.total() == 0) {
      return 0;
    }
    Index end = 0;
    p.for_each(p.index_of(p.total() - 1), p.window_length(),
               [&](const Run &r) { end = r.src_local + r.length - 1; });
    last += end * sender[static_cast<std::size_t>(m.perm[static_cast<std::size_t>(d)])];
  }
  return last + 1;
}

std::size_t Pieces::local_source_stretches() const {
  if (nd_) {
    return static_cast<std::size_t>(redist::estimate_nd_pieces(
        nd_->message(nd_->self, true), PieceSide::source, nd_src_strides_, nd_dst_strides_));
  }
  return stretches(plan_.send_rows[static_cast<std::size_t>(plan_.self.row_slot)]).first *
         static_cast<std::size_t>(
             plan_.send_cols[static_cast<std::size_t>(plan_.self.col_slot)].total());
}

single_copy::PieceCounts Pieces::estimate_pieces(const Peer &peer) const {
  if (batch_) {
    return estimate_batch_pieces(peer);
  }
  if (nd_) {
    return estimate_nd_pieces(peer);
  }
  const RunPattern &rows = plan_.recv_rows[static_cast<std::size_t>(peer.row_slot)];
  const RunPattern &cols = plan_.recv_cols[static_cast<std::size_t>(peer.col_slot)];
  const auto bytes = static_cast<std::size_t>(peer.elements) * element_size_;
  if (plan_.transposed()) {
    // read_transposed: each of A's columns (B's rows) in pieces along A's rows (B's columns),
    // cut where A is not contiguous and between rectangles; b written along B's columns.
    const auto rows_total = static_cast<std::size_t>(rows.total());
    const auto cols_total = static_cast<std::size_t>(cols.total());
    const std::size_t width = single_copy::kBounceBytes / element_size_ /
                              std::clamp<std::size_t>(rows_total, 1, kReadRectangleRows);
    return {bytes,
            (stretches(cols).first + cols_total / std::max<std::size_t>(width, 1)) * rows_total,
            (stretches(rows).second + rows_total / static_cast<std::size_t>(kReadRectangleRows)) *
                cols_total,
            true};
  }
  // Stretches contiguous on each side in one column, times the columns: a column's stretches
  // that continue into the next one (whole columns with lld = column length) count apart.
  const auto [remote, local] = stretches(rows);
  const auto columns = static_cast<std::size_t>(cols.total());
  return {bytes, remote * columns, local * columns};
}

void Pieces::gather(const Peer &peer, Index sender_lld, Index lo, Index hi, bool packed,
                    single_copy::Reader &reader) const {
  if (nd_) {
    gather_nd(peer, lo, hi, packed, reader);
    return;
  }
  for_each_piece(plan_.recv_rows[static_cast<std::size_t>(peer.row_slot)],
                 plan_.recv_cols[static_cast<std::size_t>(peer.col_slot)], plan_.region, plan_.m,
                 plan_.n, sender_lld, lld_dst_, WindowReads(reader, element_size_, lo, hi, packed));
}

int Pieces::read_combined(const Peer &peer, Index sender_lld, Index lo, Index hi, bool packed,
                          ReadScratch &scratch, std::int64_t pid, std::uint64_t address,
                          std::byte *b, Index &done) const {
  const std::size_t es = element_size_;
  const auto capacity = static_cast<Index>(single_copy::kBounceBytes / es);
  single_copy::Reader &reader = scratch.reader;
  std::byte *bounce = scratch.bounce.get();
  std::vector<ReadScratch::BouncedPiece> &pending = scratch.bounced; // in the bounce buffer
  pending.clear();
  Index filled = 0; // elements in the bounce buffer
  int error = 0;    // the failed read's (reader.start() forgets it)
  // Read what is gathered, then combine it into b piece by piece.
  const auto combine = [&] {
    if (error != 0 || filled == 0) {
      return;
    }
    if (!reader.finish()) {
      error = reader.error();
      return;
    }
    const OperationKernel combine_piece(*operation_);
    Index offset = 0;
    for (const ReadScratch::BouncedPiece &p : pending) {
      combine_piece(b + static_cast<std::size_t>(p.dst) * es, 1,
                    bounce + static_cast<std::size_t>(offset) * es, 1, p.count);
      offset += p.count;
    }
    done += filled;
    pending.clear();
    filled = 0;
  };
  done = lo;
  reader.start(pid, address, bounce, nullptr);
  Index position = 0;
  for_each_piece(plan_.recv_rows[static_cast<std::size_t>(peer.row_slot)],
                 plan_.recv_cols[static_cast<std::size_t>(peer.col_slot)], plan_.region, plan_.m,
                 plan_.n, sender_lld, lld_dst_, [&](Index src, Index dst, Index count) {
                   Index begin = std::max(position, lo);
                   const Index end = std::min(position + count, hi);
                   while (error == 0 && begin < end) {
                     if (filled == capacity) {
                       combine();
                       reader.start(pid, address, bounce, nullptr);
                       continue;
                     }
                     const Index skip = begin - position;
                     const Index take = std::min(end - begin, capacity - filled);
                     reader.add(static_cast<std::size_t>(packed ? begin - lo : src + skip) * es,
                                static_cast<std::size_t>(filled) * es,
                                static_cast<std::size_t>(take) * es);
                     pending.push_back({dst + skip, take});
                     filled += take;
                     begin += take;
                   }
                   position += count;
                 });
  combine();
  return error;
}

int Pieces::read_transposed(const Peer &peer, Index sender_lld, Index lo, Index hi,
                            ReadScratch &scratch, std::int64_t pid, std::uint64_t address,
                            std::byte *b, Index &done) const {
  const RunPattern &rows = plan_.recv_rows[static_cast<std::size_t>(peer.row_slot)];
  const RunPattern &cols = plan_.recv_cols[static_cast<std::size_t>(peer.col_slot)];
  const std::size_t es = element_size_;
  const Index per_column = rows.total();
  scratch.combined_apart.clear();
  done = lo;
  hi = std::min(hi, peer.elements);
  if (per_column == 0 || lo >= hi) {
    return 0;
  }
  // Message element (s, t) -- B's local row of the message's row s, B's local column of its
  // column t; A's local column and row -- is message position t * per_column + s. A rectangle
  // [s0, s1) x [t0, t1) of the message is read into the bounce buffer row by row (element
  // (s, t) at (s - s0) * width + t - t0): each of its rows is one of A's columns, a few long
  // pieces of the sender's array; then it is transposed out of the cache into b.
  const auto capacity = static_cast<Index>(single_copy::kBounceBytes / es);
  single_copy::Reader &reader = scratch.reader;
  std::byte *bounce = scratch.bounce.get();
  const auto read_rectangle = [&](Index s0, Index s1, Index t0, Index t1) {
    const Index width = t1 - t0;
    const Index row_lo = rows.index_of(s0);
    const Index row_hi = rows.index_of(s1 - 1) + 1;
    const Index col_lo = cols.index_of(t0);
    const Index col_hi = cols.index_of(t1 - 1) + 1;
    reader.start(pid, address, bounce, nullptr);
    Index s = 0;
    rows.for_each(row_lo, row_hi, [&](const Run &r) {
      for (Index dr = 0; dr < r.length; ++dr, ++s) {
        const Index column = (r.src_local + dr) * sender_lld;
        Index t = 0;
        cols.for_each(col_lo, col_hi, [&](const Run &c) {
          reader.add(static_cast<std::size_t>(column + c.src_local) * es,
                     static_cast<std::size_t>(s * width + t) * es,
                     static_cast<std::size_t>(c.length) * es);
          t += c.length;
        });
      }
    });
    if (!reader.finish()) {
      return reader.error();
    }
    Index t = 0;
    cols.for_each(col_lo, col_hi, [&](const Run &c) {
      Index s_run = 0;
      rows.for_each(row_lo, row_hi, [&](const Run &r) {
        std::byte *to = b + static_cast<std::size_t>(r.dst_local + c.dst_local * lld_dst_) * es;
        const std::byte *from = bounce + static_cast<std::size_t>(s_run * width + t) * es;
        if (operation_ != nullptr) {
          apply_operation(*operation_, to, 1, lld_dst_, from, width, 1, r.length, c.length);
        } else {
          copy_rectangle(to, 1, lld_dst_, from, width, 1, r.length, c.length, es);
        }
        s_run += r.length;
      });
      t += c.length;
    });
    return 0;
  };
  Index position = lo;
  while (position < hi) {
    const Index t0 = position / per_column;
    const Index s0 = position % per_column;
    if (s0 != 0 || hi - position < per_column) {
      // Part of one column (a window of the message starts or ends inside it).
      const Index s1 = std::min({per_column, s0 + capacity, s0 + (hi - position)});
      if (const int error = read_rectangle(s0, s1, t0, t0 + 1); error != 0) {
        return error;
      }
      position += s1 - s0;
      done = position;
      continue;
    }
    // Whole columns [t0, t1), a band of kReadRectangleRows rows at a time.
    const Index height = std::min(per_column, kReadRectangleRows);
    const Index t1 =
        t0 + std::max<Index>(1, std::min(capacity / height, (hi - position) / per_column));
    for (Index s = 0; s < per_column; s += height) {
      if (const int error = read_rectangle(s, std::min(per_column, s + height), t0, t1);
          error != 0) {
        // Rows [0, s) of columns [t0, t1) are combined: the first continues [lo, done).
        done = t0 * per_column + s;
        for (Index t = t0 + 1; t < t1 && s > 0; ++t) {
          scratch.combined_apart.emplace_back(t * per_column, t * per_column + s);
        }
        return error;
      }
    }
    position = t1 * per_column;
    done = position;
  }
  return 0;
}

Index Pieces::source_extent(const Peer &peer, Index lld) const {
  if (nd_) {
    return nd_source_extent(peer);
  }
  if (plan_.transposed()) { // B's rows are A's columns
    return redist::source_extent(plan_.recv_cols[static_cast<std::size_t>(peer.col_slot)],
                                 plan_.recv_rows[static_cast<std::size_t>(peer.row_slot)], lld);
  }
  return redist::source_extent(plan_.recv_rows[static_cast<std::size_t>(peer.row_slot)],
                               plan_.recv_cols[static_cast<std::size_t>(peer.col_slot)], lld);
}

void Pieces::copy_from_array(const Peer &peer, const std::byte *src, Index src_lld, std::byte *b,
                             Index lo, Index hi) const {
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
