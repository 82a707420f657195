#pragma once
// Layout layer: one rank's part of an N-d redistribution -- its peers, message
// sizes, and the contiguous pieces to pack, unpack and copy. Pure: ranks are plain integers.
//
// Index computation is a product of periods (Chung & Hsu 1998; review Sec. 3.2.7): along each
// of B's dimensions d the runs between a process and its peers are dim_peer_runs (nd_index.hpp,
// one period per pair), and a message between two ranks is the tensor product of one pattern
// per dimension. A rank's peers are the product of its per-dimension peer sets mapped to ranks
// through the grids; a message's element count is the product of the per-dimension totals. The
// plan's memory grows with the rank's peers and patterns, not with the extents.
//
// Message order (the same on both sides): B's window in B's storage order -- B's slowest
// dimension outermost, its fastest innermost -- each dimension's runs in increasing window
// index. Position p of a packed message is the same element for sender and receiver. The 2-D
// plan (plan.hpp) is this plan with m = 2 (make_rank_plan calls plan_rank).

#include "index.hpp"
#include "nd_index.hpp"
#include "nd_layout.hpp"

#include <algorithm>
#include <array>
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

namespace redist {

/// The whole N-d redistribution, identical on every rank: B's window := A's window with axes
/// permuted: B's dimension d holds A's dimension perm[d] (empty perm: the identity, a copy).
/// The window extents are B's subsizes; A's subsizes[perm[d]] must equal B's subsizes[d].
struct NdTransfer {
  NdLayout src;
  NdLayout dst;
  std::vector<int> perm;

  [[nodiscard]] int ndims() const { return dst.ndims(); }
  [[nodiscard]] int perm_at(int d) const {
    return perm.empty() ? d : perm[static_cast<std::size_t>(d)];
  }
  /// B's dimension d and the dimension perm[d] of A it holds.
  [[nodiscard]] DimTransfer dim(int d) const;
};

/// Empty when the transfer is valid, else its first problem naming argument, field and
/// dimension ("b->dargs[2]: ..."); local extents are checked for `rank` (rank < 0: not).
[[nodiscard]] std::string check_nd_transfer(const NdTransfer &t, int comm_size, int rank = -1);

/// A message between this rank and one peer (or itself).
struct NdPeer {
  int rank = -1;      ///< the peer's rank in the communicator
  Coords slots{};     ///< per dimension d of B: index into the plan's patterns of dimension d
  Coords grid{};      ///< the peer's grid position (B's grid for a send, A's for a receive)
  Index elements = 0; ///< elements in the message
};

/// One message's patterns, one per dimension of B, and how to walk them.
struct NdMessage {
  int ndims = 0;
  std::array<const RunPattern *, kMaxDims> dims{}; ///< B's dimension d's runs with the peer
  std::array<int, kMaxDims> perm{};                ///< B's dimension d is A's perm[d]
  StorageOrder order = StorageOrder::c;            ///< B's storage order: the message order
};

/// One rank's part of an NdTransfer. Patterns are per dimension of B (send_patterns[d][slot]),
/// pairing B's dimension d with A's dimension perm[d]: a Run's src_local is a local index of A
/// along A's dimension perm[d], its dst_local one of B along d.
struct NdRankPlan {
  int rank = -1;
  bool in_src = false;
  bool in_dst = false;
  int ndims = 0;
  std::array<int, kMaxDims> perm{};
  StorageOrder order = StorageOrder::c; ///< B's storage order (message order)
  /// As a source: runs to the destination grid coordinates it sends to along each of B's
  /// dimensions, by increasing coordinate. As a destination: runs from the source grid
  /// coordinates (along A's dimension perm[d]) it receives from.
  std::array<std::vector<RunPattern>, kMaxDims> send_patterns;
  std::array<std::vector<RunPattern>, kMaxDims> recv_patterns;
  std::vector<NdPeer> sends; ///< remote destinations with data, in the order to send
  std::vector<NdPeer> recvs; ///< remote sources with data, in the order to receive
  NdPeer self;               ///< elements this rank copies to itself (slots index send_patterns)

  /// The patterns of a message: a send or the self copy (sending), or a receive.
  [[nodiscard]] NdMessage message(const NdPeer &peer, bool sending) const;
  [[nodiscard]] Index elements_sent() const;
  [[nodiscard]] Index elements_received() const;
  [[nodiscard]] std::size_t memory_bytes() const;
};

/// The shared planning core of the N-d and 2-D plans: per dimension of B its DimTransfer, the
/// axis permutation, the grids, B's storage order.
struct NdPlanInput {
  int ndims = 0;
  std::array<DimTransfer, kMaxDims> dims;
  std::array<int, kMaxDims> perm{};
  GridView src_grid;
  GridView dst_grid;
  StorageOrder order = StorageOrder::c;
};
/// Elements of a message given its per-dimension patterns; empty: the product of their totals.
using MessageCount = std::function<Index(const std::array<const RunPattern *, kMaxDims> &)>;

/// `rank`'s plan: peers in the product of the per-dimension peer sets (B's dimension 0 varying
/// fastest), messages without elements dropped, sends ordered by (destination - rank) mod
/// comm_size and receives by (rank - source) mod comm_size, so that in each round of the
/// all-at-once exchange every receiver is targeted by one sender.
NdRankPlan plan_rank(const NdPlanInput &in, int rank, int comm_size,
                     const MessageCount &count = {});
/// `rank`'s plan of a valid transfer (check_nd_transfer).
NdRankPlan make_nd_rank_plan(const NdTransfer &t, int rank, int comm_size);

/// Consecutive elements of a message: element e (e < count) is at src + e * src_step in A's
/// local array, dst + e * dst_step in B's, and position + e in the packed message.
struct NdPiece {
  Index src = 0;
  Index dst = 0;
  Index position = 0;
  Index count = 0;
  Index src_step = 1;
  Index dst_step = 1;
};

/// `pieces` NdPieces of the same count and steps, consecutive in the message: piece i is
/// `first` moved by i * src_advance in A's local array, i * dst_advance in B's and
/// i * first.count in the message (a row of short pieces at constant strides, as cyclic
/// distributions give: the 2-D Copier's row groups, for N-d messages).
struct NdPieceGroup {
  NdPiece first;
  Index pieces = 1;
  Index src_advance = 0;
  Index dst_advance = 0;

  [[nodiscard]] NdPiece at(Index i) const {
    return {first.src + i * src_advance,
            first.dst + i * dst_advance,
            first.position + i * first.count,
            first.count,
            first.src_step,
            first.dst_step};
  }
};

/// Which local arrays a walk addresses: both (the local copy, a receiver reading the sender's
/// array), only A's (packing: dst is then not computed), or only B's (unpacking: src not
/// computed). Pieces merge as far as the addressed arrays are contiguous.
enum class PieceSide { both, source, destination };

/// True when the pattern's elements are contiguous in both local arrays (then `run` has the
/// first element's local indices and the pattern's total as length), though not necessarily in
/// window indices (the same cyclic distribution on both sides).
bool locally_contiguous(const RunPattern &pattern, Run &run);

namespace detail {

// The walk of for_each_nd_piece: levels are B's dimensions from slowest to fastest; levels
// above `emit` are walked element by element, each run of level `emit` gives a piece of
// run.length * inner elements (the levels below `emit` are contiguous in both arrays and fill
// the stride of the level above, so they fold in: the collapse of contiguous dimensions).
// Grouped: f is given NdPieceGroups, the row's runs of equal pieces at constant strides as one
// group each (the pieces are those of the ungrouped walk, joined the same way).
template <class F, bool Grouped = false> class NdWalk {
public:
  NdWalk(const NdMessage &m, PieceSide side, const Strides &src_strides, const Strides &dst_strides,
         F &f)
      : n_(m.ndims), side_(side), f_(f) {
    for (int i = 0; i < n_; ++i) {
      const auto lvl = static_cast<std::size_t>(i);
      const int d = m.order == StorageOrder::c ? i : n_ - 1 - i;
      const auto du = static_cast<std::size_t>(d);
      pattern_[lvl] = m.dims[du];
      src_step_[lvl] =
          side == PieceSide::destination ? 0 : src_strides[static_cast<std::size_t>(m.perm[du])];
      dst_step_[lvl] = side == PieceSide::source ? 0 : dst_strides[du];
    }
    Index elements = 1;
    for (int i = n_ - 1; i >= 0; --i) {
      position_step_[static_cast<std::size_t>(i)] = elements;
      elements *= pattern_[static_cast<std::size_t>(i)]->total();
    }
    if (elements == 0) {
      return;
    }
    emit_ = n_ - 1;
    const auto is = [&](const Strides &steps, int lvl, Index want, PieceSide ignored) {
      return side == ignored || steps[static_cast<std::size_t>(lvl)] == want;
    };
    contiguous_ = is(src_step_, emit_, 1, PieceSide::destination) &&
                  is(dst_step_, emit_, 1, PieceSide::source);
    Run run;
    while (contiguous_ && emit_ > 0 &&
           locally_contiguous(*pattern_[static_cast<std::size_t>(emit_)], run) &&
           is(src_step_, emit_ - 1, inner_ * run.length, PieceSide::destination) &&
           is(dst_step_, emit_ - 1, inner_ * run.length, PieceSide::source)) {
      fixed_src_ += run.src_local * src_step_[static_cast<std::size_t>(emit_)];
      fixed_dst_ += run.dst_local * dst_step_[static_cast<std::size_t>(emit_)];
      inner_ *= run.length;
      --emit_;
    }
    empty_ = false;
  }

  /// Walk the pieces; only those holding message positions in [lo, hi) are sure to be given
  /// (whole iterations of the levels above the pieces' outside it are skipped).
  void run(Index lo = 0, Index hi = INT64_MAX) {
    if (empty_) {
      return;
    }
    lo_ = lo;
    hi_ = hi;
    cache_row();
    walk(0, fixed_src_, fixed_dst_, 0);
    if (pending_.count > 0) {
      give(pending_);
    }
  }

  /// The pieces run() gives, from the runs of the piece level alone: its runs that do not
  /// continue the one before on the addressed side(s), times the iterations of the levels
  /// above (pieces joined across those are counted apart). Strided pieces count per element.
  [[nodiscard]] Index estimate() const {
    if (empty_) {
      return 0;
    }
    Index outer = 1;
    for (int lvl = 0; lvl < emit_; ++lvl) {
      outer *= pattern_[static_cast<std::size_t>(lvl)]->total();
    }
    const auto l = static_cast<std::size_t>(emit_);
    if (!contiguous_) {
      return outer * pattern_[l]->total() * inner_;
    }
    Index pieces = 0;
    Index next_src = -1;
    Index next_dst = -1;
    pattern_[l]->for_each([&](const Run &r) {
      const Index src = r.src_local * src_step_[l];
      const Index dst = r.dst_local * dst_step_[l];
      const bool joins = (side_ == PieceSide::destination || src == next_src) &&
                         (side_ == PieceSide::source || dst == next_dst);
      pieces += joins ? 0 : 1;
      next_src = src + r.length * inner_;
      next_dst = dst + r.length * inner_;
    });
    return outer * pieces;
  }

private:
  // The pieces of the piece level once, relative to its start and joined as emit() joins:
  // every iteration of the levels above gives them again (no pattern walk per iteration).
  // Only for a level of at most kCachedRow elements (then its pieces are at most that many).
  static constexpr Index kCachedRow = Index{1} << 16;
  void cache_row() {
    const auto l = static_cast<std::size_t>(emit_);
    if (emit_ == 0 || pattern_[l]->total() > kCachedRow) {
      return;
    }
    Index before = 0;
    pattern_[l]->for_each([&](const Run &r) {
      const NdPiece p{r.src_local * src_step_[l],     r.dst_local * dst_step_[l],
                      before * position_step_[l],     r.length * inner_,
                      contiguous_ ? 1 : src_step_[l], contiguous_ ? 1 : dst_step_[l]};
      if (!row_.empty() && joins(row_.back(), p)) {
        row_.back().count += p.count;
      } else {
        row_.push_back(p);
      }
      before += r.length;
    });
    if constexpr (Grouped) {
      group_row();
    }
  }

  // The row's pieces as groups: consecutive pieces of the same count and steps whose offsets
  // advance by the same amounts (they never join: the row is joined already).
  void group_row() {
    for (const NdPiece &p : row_) {
      if (!row_groups_.empty()) {
        NdPieceGroup &g = row_groups_.back();
        const NdPiece &q = g.first;
        if (q.count == p.count && q.src_step == p.src_step && q.dst_step == p.dst_step) {
          if (g.pieces == 1) {
            g.src_advance = p.src - q.src;
            g.dst_advance = p.dst - q.dst;
            g.pieces = 2;
            continue;
          }
          if (p.src == q.src + g.pieces * g.src_advance &&
              p.dst == q.dst + g.pieces * g.dst_advance) {
            ++g.pieces;
            continue;
          }
        }
      }
      row_groups_.push_back({p, 1, 0, 0});
    }
  }

  void give(const NdPiece &p) {
    if constexpr (Grouped) {
      f_(NdPieceGroup{p, 1, 0, 0});
    } else {
      f_(p);
    }
  }

  // The cached row's groups at (src, dst, position): groups of a few pieces piece by piece; a
  // longer group's first piece may join the piece before and its last the piece after, the
  // others go as one group.
  void walk_groups(Index src, Index dst, Index position) {
    constexpr Index kShortestGroup = 3;
    for (const NdPieceGroup &relative : row_groups_) {
      NdPieceGroup g = relative;
      g.first.src += src;
      g.first.dst += dst;
      g.first.position += position;
      if (g.pieces < kShortestGroup) {
        for (Index i = 0; i < g.pieces; ++i) {
          emit(g.at(i));
        }
        continue;
      }
      emit(g.first);
      give(pending_);
      pending_ = g.at(g.pieces - 1);
      g.first = g.at(1);
      g.pieces -= 2;
      f_(g);
    }
  }

  [[nodiscard]] bool joins(const NdPiece &q, const NdPiece &p) const {
    return q.count > 0 && q.src_step == p.src_step && q.dst_step == p.dst_step &&
           (side_ == PieceSide::destination || q.src + q.count * q.src_step == p.src) &&
           (side_ == PieceSide::source || q.dst + q.count * q.dst_step == p.dst);
  }

  void walk(int lvl, Index src, Index dst, Index position) {
    if constexpr (Grouped) {
      if (lvl == emit_ && !row_groups_.empty()) {
        walk_groups(src, dst, position);
        return;
      }
    }
    if (lvl == emit_ && !row_.empty()) {
      // The first piece may join the one before; the others do not (joined in the row).
      emit({src + row_[0].src, dst + row_[0].dst, position + row_[0].position, row_[0].count,
            row_[0].src_step, row_[0].dst_step});
      for (std::size_t i = 1; i < row_.size(); ++i) {
        const NdPiece &r = row_[i];
        give(pending_);
        pending_ = {src + r.src, dst + r.dst, position + r.position,
                    r.count,     r.src_step,  r.dst_step};
      }
      return;
    }
    const auto l = static_cast<std::size_t>(lvl);
    const Index ss = src_step_[l];
    const Index ds = dst_step_[l];
    const Index ps = position_step_[l];
    Index before = 0; // elements of this level's pattern before the run
    pattern_[l]->for_each([&](const Run &r) {
      if (lvl == emit_) {
        emit({src + r.src_local * ss, dst + r.dst_local * ds, position + before * ps,
              r.length * inner_, contiguous_ ? 1 : ss, contiguous_ ? 1 : ds});
      } else if (position + (before + r.length) * ps > lo_ && position + before * ps < hi_) {
        // Elements whose positions [p, p + ps) meet the window only.
        const Index first = std::max<Index>(0, (lo_ - position) / ps - before);
        const Index end = std::min(r.length, (hi_ - position - 1) / ps + 1 - before);
        for (Index e = first; e < end; ++e) {
          walk(lvl + 1, src + (r.src_local + e) * ss, dst + (r.dst_local + e) * ds,
               position + (before + e) * ps);
        }
      }
      before += r.length;
    });
  }

  void emit(const NdPiece &p) {
    NdPiece &q = pending_;
    if (joins(q, p)) {
      q.count += p.count;
      return;
    }
    if (q.count > 0) {
      give(q);
    }
    q = p;
  }

  int n_;
  PieceSide side_;
  F &f_;
  std::array<const RunPattern *, kMaxDims> pattern_{};
  Strides src_step_{};
  Strides dst_step_{};
  Strides position_step_{};
  int emit_ = 0;
  bool empty_ = true;
  bool contiguous_ = false;
  Index inner_ = 1;
  Index fixed_src_ = 0;
  Index fixed_dst_ = 0;
  NdPiece pending_;
  std::vector<NdPiece> row_;
  std::vector<NdPieceGroup> row_groups_;
  Index lo_ = 0;
  Index hi_ = INT64_MAX;
};

} // namespace detail

/// Visit a message's pieces in message order, f(const NdPiece&). src_strides are A's local
/// strides by A's dimension, dst_strides B's by B's dimension (local_strides, nd_layout.hpp).
/// Along B's fastest dimension B is contiguous; A is too when A's fastest dimension is the one
/// B's fastest holds (same storage order and perm[fastest] = fastest), and then dimensions
/// whose pattern is one run covering both local extents are collapsed into longer pieces.
/// Otherwise (a transposition) pieces are strided on A's side (src_step = A's stride).
template <class F>
void for_each_nd_piece(const NdMessage &m, PieceSide side, const Strides &src_strides,
                       const Strides &dst_strides, F &&f) {
  if (m.ndims > 0) {
    detail::NdWalk<F> walk(m, side, src_strides, dst_strides, f);
    walk.run();
  }
}

/// The same walk given the pieces that hold message positions [lo, hi) (and maybe a few
/// around them: the caller clips), in O(pieces given + runs of the levels above them):
/// a window of a message (a chunk of a step, a bounce buffer of a packed read).
template <class F>
void for_each_nd_piece(const NdMessage &m, PieceSide side, const Strides &src_strides,
                       const Strides &dst_strides, Index lo, Index hi, F &&f) {
  if (m.ndims > 0 && lo < hi) {
    detail::NdWalk<F> walk(m, side, src_strides, dst_strides, f);
    walk.run(lo, hi);
  }
}

/// The walk of for_each_nd_piece over message positions [lo, hi), its pieces given in groups:
/// f(const NdPieceGroup&), each group's pieces being pieces of for_each_nd_piece, in order.
/// The copies take a group in one fixed-size loop instead of a call per piece.
template <class F>
void for_each_nd_group(const NdMessage &m, PieceSide side, const Strides &src_strides,
                       const Strides &dst_strides, Index lo, Index hi, F &&f) {
  if (m.ndims > 0 && lo < hi) {
    detail::NdWalk<F, true> walk(m, side, src_strides, dst_strides, f);
    walk.run(lo, hi);
  }
}

/// The number of pieces for_each_nd_piece gives, estimated in O(runs of one dimension)
/// (NdWalk::estimate: joins across the outer dimensions are not seen).
Index estimate_nd_pieces(const NdMessage &m, PieceSide side, const Strides &src_strides,
                         const Strides &dst_strides);

/// The message's pieces contiguous in both arrays, f(src_offset, dst_offset, count), in
/// message order (strided pieces split into single elements).
template <class F>
void for_each_piece_nd(const NdMessage &m, const Strides &src_strides, const Strides &dst_strides,
                       F &&f) {
  for_each_nd_piece(m, PieceSide::both, src_strides, dst_strides, [&](const NdPiece &p) {
    if (p.src_step == 1 && p.dst_step == 1) {
      f(p.src, p.dst, p.count);
      return;
    }
    for (Index e = 0; e < p.count; ++e) {
      f(p.src + e * p.src_step, p.dst + e * p.dst_step, Index{1});
    }
  });
}

} // namespace redist
