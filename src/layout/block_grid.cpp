#include "block_grid.hpp"

#include <algorithm>
#include <array>
#include <tuple>

namespace redist {
namespace {

// Rows [i0, i1) x columns [j0, j1) of B's window.
struct Rect {
  Index i0 = 0;
  Index i1 = 0;
  Index j0 = 0;
  Index j1 = 0;
};

// One rectangle of a message before its position is known.
struct Piece {
  int peer = -1;
  Index block_row = 0; ///< the block of the other layout the rectangle is in
  Index block_col = 0;
  Rect rect;
  Tile tile; ///< offsets and steps; position and position_width_step set later
};

// f(block, lo', hi') for the blocks of `splits` meeting [lo, hi), in order, clipped to it:
// a binary search for the first, then a walk (empty blocks are skipped).
template <class F>
void for_each_block_meeting(const std::vector<Index> &splits, Index lo, Index hi, F &&f) {
  if (lo >= hi) {
    return;
  }
  auto b = static_cast<std::size_t>(std::upper_bound(splits.begin(), splits.end(), lo) -
                                    splits.begin()) -
           1;
  for (; b + 1 < splits.size() && splits[b] < hi; ++b) {
    const Index from = std::max(lo, splits[b]);
    const Index to = std::min(hi, splits[b + 1]);
    if (from < to) {
      f(static_cast<Index>(b), from, to);
    }
  }
}

// Element steps in a local block along its rows (to the next row) and columns.
std::array<Index, 2> steps(const BlockGrid &g, const LocalBlock &b) {
  return g.row_major ? std::array<Index, 2>{b.ld, 1} : std::array<Index, 2>{1, b.ld};
}

// The global rows [first, last) and columns of a block.
Rect block_extent(const BlockGrid &g, Index block_row, Index block_col) {
  const auto r = static_cast<std::size_t>(block_row);
  const auto c = static_cast<std::size_t>(block_col);
  return {g.row_splits[r], g.row_splits[r + 1], g.col_splits[c], g.col_splits[c + 1]};
}

// This rank's blocks of a layout, found by (block_row, block_col) in O(log blocks).
class LocalBlocks {
public:
  explicit LocalBlocks(const BlockGrid &g) : grid_(g) {
    keys_.reserve(g.local.size());
    for (std::size_t k = 0; k < g.local.size(); ++k) {
      keys_.emplace_back(g.local[k].block_row, g.local[k].block_col, k);
    }
    std::sort(keys_.begin(), keys_.end());
  }
  [[nodiscard]] const LocalBlock *find(Index block_row, Index block_col) const {
    const auto it = std::lower_bound(keys_.begin(), keys_.end(),
                                     std::make_tuple(block_row, block_col, std::size_t{0}));
    if (it == keys_.end() || std::get<0>(*it) != block_row || std::get<1>(*it) != block_col) {
      return nullptr;
    }
    return &grid_.local[std::get<2>(*it)];
  }

private:
  const BlockGrid &grid_;
  std::vector<std::tuple<Index, Index, std::size_t>> keys_;
};

// Offset and steps along B's window rows (e) and columns (w) of a rectangle's first element
// in a local block of `g`; `swapped`: B's window rows are g's columns (A of a transposition).
struct Placement {
  Index offset = 0;
  Index e_step = 0;
  Index w_step = 0;
};
Placement place(const BlockGrid &g, const LocalBlock &b, Index global_row, Index global_col,
                bool swapped) {
  const Rect extent = block_extent(g, b.block_row, b.block_col);
  const auto [row_step, col_step] = steps(g, b);
  return {b.offset + (global_row - extent.i0) * row_step + (global_col - extent.j0) * col_step,
          swapped ? col_step : row_step, swapped ? row_step : col_step};
}

// The window rectangle of one local block of `g`, in g's window coordinates; empty rows or
// columns when the block misses the window (rows x cols in g's orientation).
Rect window_part(const BlockGrid &g, const LocalBlock &b, Index rows, Index cols) {
  const Rect e = block_extent(g, b.block_row, b.block_col);
  return {std::max(e.i0, g.i) - g.i, std::min(e.i1, g.i + rows) - g.i, std::max(e.j0, g.j) - g.j,
          std::min(e.j1, g.j + cols) - g.j};
}

// The pieces this rank sends: its blocks of A met with B's blocks.
void send_pieces(const GridTransfer &t, int rank, const LocalBlocks &own_b,
                 std::vector<Piece> &out) {
  const BlockGrid &a = *t.src;
  const BlockGrid &b = *t.dst;
  const Index a_rows = t.transposed ? t.n : t.m;
  const Index a_cols = t.transposed ? t.m : t.n;
  for (const LocalBlock &lb : a.local) {
    const Rect in_a = window_part(a, lb, a_rows, a_cols);
    if (in_a.i0 >= in_a.i1 || in_a.j0 >= in_a.j1) {
      continue;
    }
    const Rect in_b = t.transposed ? Rect{in_a.j0, in_a.j1, in_a.i0, in_a.i1} : in_a;
    for_each_block_meeting(
        b.col_splits, b.j + in_b.j0, b.j + in_b.j1, [&](Index bc, Index c0, Index c1) {
          for_each_block_meeting(b.row_splits, b.i + in_b.i0, b.i + in_b.i1,
                                 [&](Index br, Index r0, Index r1) {
                                   Piece p;
                                   p.peer = b.owner(br, bc);
                                   p.block_row = br;
                                   p.block_col = bc;
                                   p.rect = {r0 - b.i, r1 - b.i, c0 - b.j, c1 - b.j};
                                   const Index ai = a.i + (t.transposed ? p.rect.j0 : p.rect.i0);
                                   const Index aj = a.j + (t.transposed ? p.rect.i0 : p.rect.j0);
                                   const Placement from = place(a, lb, ai, aj, t.transposed);
                                   p.tile.src = from.offset;
                                   p.tile.src_step = from.e_step;
                                   p.tile.src_width_step = from.w_step;
                                   if (p.peer == rank) {
                                     if (const LocalBlock *to = own_b.find(br, bc); to != nullptr) {
                                       const Placement at = place(b, *to, r0, c0, false);
                                       p.tile.dst = at.offset;
                                       p.tile.dst_step = at.e_step;
                                       p.tile.dst_width_step = at.w_step;
                                     }
                                   }
                                   out.push_back(p);
                                 });
        });
  }
}

// The pieces this rank receives: its blocks of B met with A's blocks; from itself too when
// `with_self`.
void receive_pieces(const GridTransfer &t, int rank, std::vector<Piece> &out,
                    bool with_self = false) {
  const BlockGrid &a = *t.src;
  const BlockGrid &b = *t.dst;
  for (const LocalBlock &lb : b.local) {
    const Rect in_b = window_part(b, lb, t.m, t.n);
    if (in_b.i0 >= in_b.i1 || in_b.j0 >= in_b.j1) {
      continue;
    }
    const Rect in_a = t.transposed ? Rect{in_b.j0, in_b.j1, in_b.i0, in_b.i1} : in_b;
    for_each_block_meeting(
        a.col_splits, a.j + in_a.j0, a.j + in_a.j1, [&](Index ac, Index c0, Index c1) {
          for_each_block_meeting(
              a.row_splits, a.i + in_a.i0, a.i + in_a.i1, [&](Index ar, Index r0, Index r1) {
                Piece p;
                p.peer = a.owner(ar, ac);
                p.block_row = ar;
                p.block_col = ac;
                if (p.peer == rank && !with_self) {
                  return; // the local copy is planned from the sending side
                }
                const Rect part{r0 - a.i, r1 - a.i, c0 - a.j, c1 - a.j};
                p.rect = t.transposed ? Rect{part.j0, part.j1, part.i0, part.i1} : part;
                const Placement at = place(b, lb, b.i + p.rect.i0, b.j + p.rect.j0, false);
                p.tile.dst = at.offset;
                p.tile.dst_step = at.e_step;
                p.tile.dst_width_step = at.w_step;
                out.push_back(p);
              });
        });
  }
}

// The messages of `pieces`, by peer, rectangles in message order with their positions.
std::vector<GridMessage> messages(std::vector<Piece> pieces) {
  std::sort(pieces.begin(), pieces.end(), [](const Piece &x, const Piece &y) {
    return std::tie(x.peer, x.rect.j0, x.rect.i0) < std::tie(y.peer, y.rect.j0, y.rect.i0);
  });
  std::vector<GridMessage> out;
  for (Piece &p : pieces) {
    if (out.empty() || out.back().rank != p.peer) {
      out.push_back({p.peer, 0, {}});
    }
    GridMessage &m = out.back();
    p.tile.height = p.rect.i1 - p.rect.i0;
    p.tile.width = p.rect.j1 - p.rect.j0;
    p.tile.position = m.elements;
    p.tile.position_width_step = p.tile.height;
    m.elements += p.tile.height * p.tile.width;
    m.tiles.push_back(p.tile);
  }
  for (GridMessage &m : out) {
    m.tiles.shrink_to_fit();
  }
  return out;
}

} // namespace

namespace {

std::string check_splits(const std::vector<Index> &splits, const std::string &name) {
  if (splits.size() < 2) {
    return name + ": needs at least two entries (0 and the extent), got " +
           std::to_string(splits.size());
  }
  if (splits[0] != 0) {
    return name + "[0]: must be 0, not " + std::to_string(splits[0]);
  }
  for (std::size_t k = 1; k < splits.size(); ++k) {
    if (splits[k] < splits[k - 1]) {
      return name + "[" + std::to_string(k) + "]: " + std::to_string(splits[k]) +
             " is below the split before it, " + std::to_string(splits[k - 1]);
    }
  }
  return {};
}

std::string check_local_block(const BlockGrid &g, const LocalBlock &b, int rank,
                              const std::string &name) {
  if (b.block_row < 0 || b.block_row >= g.block_rows() || b.block_col < 0 ||
      b.block_col >= g.block_cols()) {
    return name + ": block (" + std::to_string(b.block_row) + ", " + std::to_string(b.block_col) +
           ") is not in the " + std::to_string(g.block_rows()) + " x " +
           std::to_string(g.block_cols()) + " grid";
  }
  if (const int owner = g.owner(b.block_row, b.block_col); owner != rank) {
    return name + ": block (" + std::to_string(b.block_row) + ", " + std::to_string(b.block_col) +
           ") is owned by rank " + std::to_string(owner) + ", not by this rank " +
           std::to_string(rank);
  }
  const Rect e = block_extent(g, b.block_row, b.block_col);
  const Index along = g.row_major ? e.j1 - e.j0 : e.i1 - e.i0;
  if (b.ld < std::max<Index>(1, along)) {
    return name + ".ld: " + std::to_string(b.ld) + " is below max(1, " + std::to_string(along) +
           "), the block's " + (g.row_major ? "columns (row-major)" : "rows (column-major)");
  }
  if (b.offset < 0) {
    return name + ".offset: must be >= 0, not " + std::to_string(b.offset);
  }
  return {};
}

std::string check_grid(const BlockGrid &g, const std::string &side, Index rows, Index cols,
                       int rank) {
  if (std::string why = check_splits(g.row_splits, side + "row_splits"); !why.empty()) return why;
  if (std::string why = check_splits(g.col_splits, side + "col_splits"); !why.empty()) return why;
  if (!g.owner) return side + "owner: missing";
  if (g.i < 0 || g.i > g.rows() - rows) {
    return side + "i: the window's rows " + std::to_string(g.i) + " + " + std::to_string(rows) +
           " are not inside the " + std::to_string(g.rows()) + " rows";
  }
  if (g.j < 0 || g.j > g.cols() - cols) {
    return side + "j: the window's columns " + std::to_string(g.j) + " + " + std::to_string(cols) +
           " are not inside the " + std::to_string(g.cols()) + " columns";
  }
  std::vector<std::pair<Index, Index>> seen;
  seen.reserve(g.local.size());
  for (std::size_t k = 0; k < g.local.size(); ++k) {
    const LocalBlock &b = g.local[k];
    const std::string name = side + "local[" + std::to_string(k) + "]";
    if (std::string why = check_local_block(g, b, rank, name); !why.empty()) return why;
    seen.emplace_back(b.block_row, b.block_col);
  }
  std::sort(seen.begin(), seen.end());
  if (std::adjacent_find(seen.begin(), seen.end()) != seen.end()) {
    return side + "local: a block is listed twice";
  }
  return {};
}

} // namespace

std::string check_grid_transfer(const GridTransfer &t, int rank, int comm_size) {
  if (t.src == nullptr || t.dst == nullptr) return "a, b: missing";
  if (t.m < 0) return "m: must be >= 0";
  if (t.n < 0) return "n: must be >= 0";
  const Index a_rows = t.transposed ? t.n : t.m;
  const Index a_cols = t.transposed ? t.m : t.n;
  if (std::string why = check_grid(*t.src, "a->", a_rows, a_cols, rank); !why.empty()) return why;
  if (std::string why = check_grid(*t.dst, "b->", t.m, t.n, rank); !why.empty()) return why;
  if (t.m == 0 || t.n == 0) return {};
  // The owners of the blocks met by this rank's, as the plan will ask them; the blocks this
  // rank owns there must be among its local ones.
  const auto met = [&](const std::vector<Piece> &pieces, const BlockGrid &other,
                       const std::string &side) -> std::string {
    const LocalBlocks own(other);
    for (const Piece &p : pieces) {
      std::string why = side;
      if (p.peer < 0 || p.peer >= comm_size) {
        why += "owner: block (" + std::to_string(p.block_row) + ", " + std::to_string(p.block_col) +
               ") is owned by rank " + std::to_string(p.peer) + ", not in [0, " +
               std::to_string(comm_size) + ")";
        return why;
      }
      if (p.peer == rank && own.find(p.block_row, p.block_col) == nullptr) {
        why += "local: block (" + std::to_string(p.block_row) + ", " + std::to_string(p.block_col) +
               ") is this rank's but not among its local blocks";
        return why;
      }
    }
    return {};
  };
  std::vector<Piece> sent;
  send_pieces(t, rank, LocalBlocks(*t.dst), sent);
  if (std::string why = met(sent, *t.dst, "b->"); !why.empty()) return why;
  std::vector<Piece> received;
  receive_pieces(t, rank, received, true);
  return met(received, *t.src, "a->");
}

GridRankPlan make_grid_rank_plan(const GridTransfer &t, int rank) {
  GridRankPlan plan;
  plan.rank = rank;
  if (t.m <= 0 || t.n <= 0) {
    return plan;
  }
  std::vector<Piece> pieces;
  send_pieces(t, rank, LocalBlocks(*t.dst), pieces);
  for (GridMessage &m : messages(std::move(pieces))) {
    if (m.rank == rank) {
      plan.self = std::move(m);
    } else {
      plan.sends.push_back(std::move(m));
    }
  }
  pieces.clear();
  receive_pieces(t, rank, pieces);
  plan.recvs = messages(std::move(pieces));
  return plan;
}

std::size_t GridRankPlan::memory_bytes() const {
  std::size_t bytes = sizeof(GridRankPlan) + self.tiles.capacity() * sizeof(Tile);
  for (const auto *side : {&sends, &recvs}) {
    bytes += side->capacity() * sizeof(GridMessage);
    for (const GridMessage &m : *side) {
      bytes += m.tiles.capacity() * sizeof(Tile);
    }
  }
  return bytes;
}

} // namespace redist
