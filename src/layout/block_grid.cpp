#include "block_grid.hpp"

#include <algorithm>
#include <array>
#include <optional>
#include <tuple>

namespace redist {
namespace {

// Rows [i0, i1) x columns [j0, j1): of the matrix (block_extent) or of a window.
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
      out.push_back({p.peer, 0, {}, {}});
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

// A part before its position is known, with the rectangle's corner for the message order.
struct PartPiece {
  int peer = -1;
  Index i0 = 0;
  Index j0 = 0;
  GridPart part;
};

// The cyclic side of a grid / block-cyclic transfer along B's window dimension d: its
// dimension, the global index of B's window index 0, and its local element strides along B's
// window rows (step[0]) and columns (step[1]).
struct CyclicSide {
  const Layout *layout = nullptr;
  bool is_source = false;
  bool transposed = false; ///< A of a transposition: B's window rows are its columns
  Index lld = 1;

  [[nodiscard]] int axis(int d) const { return transposed ? 1 - d : d; }
  [[nodiscard]] const BlockCyclic &dim(int d) const { return layout->dim(axis(d)); }
  [[nodiscard]] Index start(int d) const { return layout->start(axis(d)); }
  [[nodiscard]] Index step(int d) const {
    const bool along_rows = axis(d) == 0;
    return along_rows == layout->row_major ? lld : 1;
  }
};

// The 1-D transfer between B's window indices [lo, lo + length) of a grid block (one process,
// local index = offset from lo) and the cyclic side along B's window dimension d.
Transfer1D block_against_cyclic(const CyclicSide &c, int d, Index lo, Index length) {
  const BlockCyclic block{length, std::max<Index>(1, length), 1, 0};
  return c.is_source ? Transfer1D{c.dim(d), block, c.start(d) + lo, 0, length}
                     : Transfer1D{block, c.dim(d), 0, c.start(d) + lo, length};
}

// Runs of the grid block over [lo, lo + length) of dimension d with the cyclic side's
// processes (`from_grid`: this rank holds the block), or with cyclic process `proc` only.
std::vector<PeerRuns> block_runs(const CyclicSide &c, int d, Index lo, Index length, bool from_grid,
                                 int proc) {
  const Transfer1D t = block_against_cyclic(c, d, lo, length);
  if (from_grid) {
    return c.is_source ? peer_runs_to_destination(t, 0) : peer_runs_from_source(t, 0);
  }
  return c.is_source ? peer_runs_from_source(t, proc) : peer_runs_to_destination(t, proc);
}

// This rank's blocks of the grid side met with every process of the cyclic side: one part per
// block and cyclic process with data (sent when the grid is A, received when it is B).
void parts_of_own_blocks(const GridTransfer &t, const CyclicSide &c, int rank,
                         std::vector<PartPiece> &out) {
  const bool grid_is_source = !c.is_source;
  const BlockGrid &g = grid_is_source ? *t.src : *t.dst;
  const bool swapped = grid_is_source && t.transposed;
  for (const LocalBlock &lb : g.local) {
    const Rect own = window_part(g, lb, swapped ? t.n : t.m, swapped ? t.m : t.n);
    if (own.i0 >= own.i1 || own.j0 >= own.j1) {
      continue;
    }
    const Rect r = swapped ? Rect{own.j0, own.j1, own.i0, own.i1} : own;
    const std::vector<PeerRuns> rows = block_runs(c, 0, r.i0, r.i1 - r.i0, true, 0);
    const std::vector<PeerRuns> cols = block_runs(c, 1, r.j0, r.j1 - r.j0, true, 0);
    const Placement at =
        place(g, lb, g.i + (swapped ? r.j0 : r.i0), g.j + (swapped ? r.i0 : r.j0), swapped);
    for (const PeerRuns &pc : cols) {
      for (const PeerRuns &pr : rows) {
        // the cyclic process at (pr, pc) along B's window rows and columns
        const int row_proc = c.axis(0) == 0 ? pr.peer : pc.peer;
        const int col_proc = c.axis(0) == 0 ? pc.peer : pr.peer;
        PartPiece p{c.layout->grid.rank_at(row_proc, col_proc), r.i0, r.j0, {}};
        if (!grid_is_source && p.peer == rank) {
          continue; // the local copy is planned from the sending side
        }
        p.part.rows = pr.runs;
        p.part.cols = pc.runs;
        (grid_is_source ? p.part.src : p.part.dst) = at.offset;
        (grid_is_source ? p.part.src_row_step : p.part.dst_row_step) = at.e_step;
        (grid_is_source ? p.part.src_col_step : p.part.dst_col_step) = at.w_step;
        if (grid_is_source && p.peer == rank) {
          p.part.dst_row_step = c.step(0);
          p.part.dst_col_step = c.step(1);
        }
        out.push_back(std::move(p));
      }
    }
  }
}

// The grid side's blocks in the window along B's window dimension d that hold some of this
// rank's cyclic indices: (block, first window index, runs).
struct BlockLine {
  Index block = 0;
  Index lo = 0;
  RunPattern runs;
};
std::vector<BlockLine> lines_meeting(const GridTransfer &t, const CyclicSide &c, int d, int proc) {
  const bool grid_is_source = !c.is_source;
  const BlockGrid &g = grid_is_source ? *t.src : *t.dst;
  const bool swapped = grid_is_source && t.transposed;
  const bool along_rows = (d == 0) != swapped; // the grid's rows carry B's dimension d
  const std::vector<Index> &splits = along_rows ? g.row_splits : g.col_splits;
  const Index origin = along_rows ? g.i : g.j;
  std::vector<BlockLine> out;
  for_each_block_meeting(
      splits, origin, origin + (d == 0 ? t.m : t.n), [&](Index block, Index from, Index to) {
        for (PeerRuns &r : block_runs(c, d, from - origin, to - from, false, proc)) {
          out.push_back({block, from - origin, std::move(r.runs)});
        }
      });
  return out;
}

// This rank's part of the cyclic side met with the grid side's blocks: one part per block
// holding some of its elements (sent when the cyclic side is A, received when it is B).
// Blocks of the grid side this rank owns but does not list go to `unplaced` when given.
void parts_of_cyclic_rank(const GridTransfer &t, const CyclicSide &c, int rank,
                          const LocalBlocks &own_grid_blocks, std::vector<PartPiece> &out,
                          std::vector<std::pair<Index, Index>> *unplaced = nullptr) {
  int pr = 0;
  int pc = 0;
  if (!c.layout->grid.find(rank, pr, pc)) {
    return;
  }
  const bool grid_is_source = !c.is_source;
  const BlockGrid &g = grid_is_source ? *t.src : *t.dst;
  const bool swapped = grid_is_source && t.transposed;
  const std::vector<BlockLine> rows = lines_meeting(t, c, 0, c.axis(0) == 0 ? pr : pc);
  const std::vector<BlockLine> cols = lines_meeting(t, c, 1, c.axis(0) == 0 ? pc : pr);
  for (const BlockLine &col : cols) {
    for (const BlockLine &row : rows) {
      const Index block_row = swapped ? col.block : row.block;
      const Index block_col = swapped ? row.block : col.block;
      PartPiece p{g.owner(block_row, block_col), row.lo, col.lo, {}};
      if (grid_is_source && p.peer == rank) {
        continue; // the local copy is planned from the sending side
      }
      p.part.rows = row.runs;
      p.part.cols = col.runs;
      (c.is_source ? p.part.src_row_step : p.part.dst_row_step) = c.step(0);
      (c.is_source ? p.part.src_col_step : p.part.dst_col_step) = c.step(1);
      if (c.is_source && p.peer == rank) {
        const LocalBlock *lb = own_grid_blocks.find(block_row, block_col);
        if (lb != nullptr) {
          const Placement at = place(g, *lb, g.i + row.lo, g.j + col.lo, false);
          p.part.dst = at.offset;
          p.part.dst_row_step = at.e_step;
          p.part.dst_col_step = at.w_step;
        } else if (unplaced != nullptr) {
          unplaced->emplace_back(block_row, block_col);
        }
      }
      out.push_back(std::move(p));
    }
  }
}

// The messages of `pieces` by peer, parts in message order with their positions.
std::vector<GridMessage> part_messages(std::vector<PartPiece> pieces) {
  std::sort(pieces.begin(), pieces.end(), [](const PartPiece &x, const PartPiece &y) {
    return std::tie(x.peer, x.j0, x.i0) < std::tie(y.peer, y.j0, y.i0);
  });
  std::vector<GridMessage> out;
  for (PartPiece &p : pieces) {
    if (out.empty() || out.back().rank != p.peer) {
      out.push_back({p.peer, 0, {}, {}});
    }
    GridMessage &m = out.back();
    p.part.position = m.elements;
    m.elements += p.part.elements();
    m.parts.push_back(std::move(p.part));
  }
  return out;
}

CyclicSide cyclic_side(const GridTransfer &t) {
  const bool cyclic_source = t.src == nullptr;
  return {cyclic_source ? t.src_cyclic : t.dst_cyclic, cyclic_source, cyclic_source && t.transposed,
          cyclic_source ? t.src_lld : t.dst_lld};
}

// make_grid_rank_plan with one side block-cyclic.
GridRankPlan plan_with_cyclic_side(const GridTransfer &t, int rank) {
  GridRankPlan plan;
  plan.rank = rank;
  const bool cyclic_source = t.src == nullptr;
  const CyclicSide c = cyclic_side(t);
  std::vector<PartPiece> sent;
  std::vector<PartPiece> received;
  if (cyclic_source) {
    parts_of_cyclic_rank(t, c, rank, LocalBlocks(*t.dst), sent);
    parts_of_own_blocks(t, c, rank, received);
  } else {
    parts_of_own_blocks(t, c, rank, sent);
    parts_of_cyclic_rank(t, c, rank, LocalBlocks(*t.src), received);
  }
  for (GridMessage &m : part_messages(std::move(sent))) {
    (m.rank == rank ? plan.self : plan.sends.emplace_back()) = std::move(m);
  }
  plan.recvs = part_messages(std::move(received));
  return plan;
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

namespace {

// A block-cyclic side: the window inside, this rank's leading dimension large enough.
std::string check_cyclic(const Layout &l, const std::string &side, Index rows, Index cols,
                         Index lld, int rank, int comm_size) {
  if (l.rows.nprocs != l.grid.nprow || l.cols.nprocs != l.grid.npcol ||
      l.grid.ranks.size() !=
          static_cast<std::size_t>(l.grid.nprow) * static_cast<std::size_t>(l.grid.npcol)) {
    return side + "grid: the process counts differ from the grid's";
  }
  for (const int r : l.grid.ranks) {
    if (r < 0 || r >= comm_size) {
      return side + "grid: rank " + std::to_string(r) + " is not in [0, " +
             std::to_string(comm_size) + ")";
    }
  }
  if (l.i < 0 || l.i > l.rows.extent - rows || l.j < 0 || l.j > l.cols.extent - cols) {
    return side + "i, j: the window is not inside the matrix";
  }
  int pr = 0;
  int pc = 0;
  if (l.grid.find(rank, pr, pc)) {
    const Index along = l.row_major ? l.cols.local_extent(pc) : l.rows.local_extent(pr);
    if (lld < std::max<Index>(1, along)) {
      return side + "lld: " + std::to_string(lld) + " is below max(1, " + std::to_string(along) +
             "), this rank's local " + (l.row_major ? "columns" : "rows");
    }
  }
  return {};
}

} // namespace

std::string check_grid_transfer(const GridTransfer &t, int rank, int comm_size) {
  if ((t.src == nullptr) == (t.src_cyclic == nullptr)) return "a: one layout, grid or cyclic";
  if ((t.dst == nullptr) == (t.dst_cyclic == nullptr)) return "b: one layout, grid or cyclic";
  if (t.src == nullptr && t.dst == nullptr) return "a, b: one of them must be a block grid";
  if (t.m < 0) return "m: must be >= 0";
  if (t.n < 0) return "n: must be >= 0";
  const Index a_rows = t.transposed ? t.n : t.m;
  const Index a_cols = t.transposed ? t.m : t.n;
  if (std::string why = t.src != nullptr ? check_grid(*t.src, "a->", a_rows, a_cols, rank)
                                         : check_cyclic(*t.src_cyclic, "a->", a_rows, a_cols,
                                                        t.src_lld, rank, comm_size);
      !why.empty()) {
    return why;
  }
  if (std::string why = t.dst != nullptr ? check_grid(*t.dst, "b->", t.m, t.n, rank)
                                         : check_cyclic(*t.dst_cyclic, "b->", t.m, t.n, t.dst_lld,
                                                        rank, comm_size);
      !why.empty()) {
    return why;
  }
  if (t.m == 0 || t.n == 0) return {};
  if (t.src == nullptr || t.dst == nullptr) {
    // The owners of the grid blocks met, as the plan asks them, and this rank's among them
    // listed.
    const CyclicSide c = cyclic_side(t);
    const std::string grid_side = c.is_source ? "b->" : "a->";
    std::vector<PartPiece> pieces;
    std::vector<std::pair<Index, Index>> unplaced;
    parts_of_cyclic_rank(t, c, rank, LocalBlocks(c.is_source ? *t.dst : *t.src), pieces, &unplaced);
    parts_of_own_blocks(t, c, rank, pieces);
    for (const PartPiece &p : pieces) {
      if (p.peer < 0 || p.peer >= comm_size) {
        return grid_side + "owner: rank " + std::to_string(p.peer) + " is not in [0, " +
               std::to_string(comm_size) + ")";
      }
    }
    if (!unplaced.empty()) {
      return grid_side + "local: block (" + std::to_string(unplaced[0].first) + ", " +
             std::to_string(unplaced[0].second) + ") is this rank's but not among its local blocks";
    }
    return {};
  }
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

namespace {

// The same grid with rows and columns swapped: its row-major blocks are column-major here.
BlockGrid transposed_view(const BlockGrid &g) {
  BlockGrid v;
  v.row_splits = g.col_splits;
  v.col_splits = g.row_splits;
  v.owner = [&g](Index r, Index c) { return g.owner(c, r); };
  v.row_major = !g.row_major;
  v.local.reserve(g.local.size());
  for (const LocalBlock &b : g.local) {
    v.local.push_back({b.block_col, b.block_row, b.offset, b.ld});
  }
  v.i = g.j;
  v.j = g.i;
  return v;
}

GridRankPlan plan_transfer(const GridTransfer &t, int rank);

} // namespace

// A transfer whose every side is row-major is planned as the transfer of the transposed
// matrices, whose sides are column-major: the same elements at the same local offsets, but
// the messages run along the rows that are contiguous at both ends.
GridRankPlan make_grid_rank_plan(const GridTransfer &t, int rank) {
  const bool src_row_major = t.src != nullptr ? t.src->row_major : t.src_cyclic->row_major;
  const bool dst_row_major = t.dst != nullptr ? t.dst->row_major : t.dst_cyclic->row_major;
  if (!src_row_major || !dst_row_major) {
    return plan_transfer(t, rank);
  }
  GridTransfer v = t;
  std::optional<BlockGrid> src_grid;
  std::optional<BlockGrid> dst_grid;
  std::optional<Layout> src_cyclic;
  std::optional<Layout> dst_cyclic;
  if (t.src != nullptr) {
    v.src = &src_grid.emplace(transposed_view(*t.src));
  } else {
    v.src_cyclic = &src_cyclic.emplace(transposed_layout(*t.src_cyclic));
  }
  if (t.dst != nullptr) {
    v.dst = &dst_grid.emplace(transposed_view(*t.dst));
  } else {
    v.dst_cyclic = &dst_cyclic.emplace(transposed_layout(*t.dst_cyclic));
  }
  v.m = t.n;
  v.n = t.m;
  return plan_transfer(v, rank);
}

namespace {

GridRankPlan plan_transfer(const GridTransfer &t, int rank) {
  if (t.m > 0 && t.n > 0 && (t.src == nullptr || t.dst == nullptr)) {
    return plan_with_cyclic_side(t, rank);
  }
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

} // namespace

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
