#pragma once
// Layout layer: arbitrary block grids (COSTA's custom layouts, DBCSR-style distributions) and
// one rank's messages between two of them. Pure: ranks are plain integers, no MPI.
//
// A block grid cuts the rows at row_splits and the columns at col_splits (any offsets, empty
// blocks allowed); any rank owns any block; a rank keeps each of its blocks anywhere in its
// local memory, column- or row-major (one order per layout), with a leading dimension of its
// own. A rank knows the splits, the owner of every block (asked, not stored) and the placement
// of its own blocks only.
//
// The messages of one rank come from interval sweeps: each of the rank's blocks, clipped to the
// window, meets the other layout's blocks in the rows and columns its rectangle spans (a binary
// search in the other layout's splits, then a walk along them), so planning takes time and
// memory in the rectangles the rank's blocks give, never the number of blocks squared. A
// message between two ranks is a list of rectangles, each a Tile (tiles.hpp) whose element
// (e, w) is at row e, column w of the rectangle in B's window.
//
// Message order, the same for both ends: the rectangles by their first column, then first row,
// in B's window; each rectangle column by column (e fastest). Sender and receiver find the same
// rectangles (a block of A met with a block of B) and sort them alike, so position p is the
// same element at both ends without either knowing the other's local placement. When both
// sides are row-major, the transfer is planned as that of the transposed matrices (their
// blocks column-major): the order is then by first row, then first column, each rectangle row
// by row, contiguous at both ends.
//
// Against a 2-D block-cyclic layout (GridTransfer's *_cyclic), a grid block's rectangle meets
// one process row and column of the cyclic side in index.hpp's runs (one period stored, the
// block being a one-process dimension): a message is then a list of GridParts, one per grid
// block, ordered the same way. The grid side sweeps its own blocks; a cyclic rank sweeps the
// grid's row and column splits inside the window (its indices are spread over all of them) and
// meets the blocks holding some of its elements.

#include "index.hpp"
#include "layout.hpp"
#include "tiles.hpp"

#include <functional>
#include <string>
#include <vector>

namespace redist {

/// Where one of this rank's blocks lives in its local array.
struct LocalBlock {
  Index block_row = 0;
  Index block_col = 0;
  Index offset = 0; ///< elements from the array's start to the block's first element
  Index ld = 1;     ///< leading dimension: between columns (column-major) or rows (row-major)
};

/// A block grid with the window being copied, as one rank sees it.
struct BlockGrid {
  std::vector<Index> row_splits; ///< 0 = r0 <= r1 <= ... <= r_R = global rows; R >= 1
  std::vector<Index> col_splits; ///< likewise for the columns
  /// The rank owning block (block_row, block_col); asked while planning, for the blocks that
  /// meet this rank's own.
  std::function<int(Index, Index)> owner;
  bool row_major = false;
  std::vector<LocalBlock> local; ///< this rank's blocks, each of those it owns once
  Index i = 0;                   ///< window's first global row
  Index j = 0;                   ///< window's first global column

  [[nodiscard]] Index block_rows() const { return static_cast<Index>(row_splits.size()) - 1; }
  [[nodiscard]] Index block_cols() const { return static_cast<Index>(col_splits.size()) - 1; }
  [[nodiscard]] Index rows() const { return row_splits.back(); }
  [[nodiscard]] Index cols() const { return col_splits.back(); }
};

/// B's m x n window := A's window (m x n, or n x m when transposed: B(i, j) <- A(j, i)).
/// One side may be a 2-D block-cyclic layout instead (its grid pointer null): `*_cyclic`, with
/// first blocks and row-major storage as Layout has them, and this rank's leading dimension.
struct GridTransfer {
  const BlockGrid *src = nullptr;
  const BlockGrid *dst = nullptr;
  Index m = 0;
  Index n = 0;
  bool transposed = false;
  const Layout *src_cyclic = nullptr;
  Index src_lld = 1;
  const Layout *dst_cyclic = nullptr;
  Index dst_lld = 1;
};

/// Empty when the transfer is valid for `rank` of comm_size ranks, else its first problem
/// ("a->row_splits[3]: ..."). Owners are checked for this rank's blocks and those they meet.
[[nodiscard]] std::string check_grid_transfer(const GridTransfer &t, int rank, int comm_size);

/// The part of a message one block of the grid side gives when the other side is block-cyclic:
/// that block's rectangle of B's window met with the cyclic side's rows and columns of one
/// process, as index.hpp's runs (one period stored, so an element-cyclic side costs no more
/// than a blocked one). A run's src_local / dst_local index, along B's window rows (`rows`) or
/// columns (`cols`), the rectangle from its corner on the grid side and the local array on the
/// cyclic side. Element (r, c) of the runs is at
///   A:        src + r.src_local * src_row_step + c.src_local * src_col_step
///   B:        dst + r.dst_local * dst_row_step + c.dst_local * dst_col_step
///   message:  position + (rows before r's strip) * cols.total()
///             + (columns before c) * (rows of r's strip) + (rows before r in its strip)
/// (strips of rows outer, then columns, then the rows of the strip; for_each_part_tile).
struct GridPart {
  RunPattern rows;
  RunPattern cols;
  Index position = 0;
  Index src = 0;
  Index src_row_step = 0;
  Index src_col_step = 0;
  Index dst = 0;
  Index dst_row_step = 0;
  Index dst_col_step = 0;

  [[nodiscard]] Index elements() const { return rows.total() * cols.total(); }
};

/// The tiles of a part in message order, f(const Tile&) (tiles.hpp's strips: runs of single
/// elements at constant steps join): a strip of the rows at a time, and in it a column at a
/// time, so that each tile's columns are consecutive in the message, as the tiles of two block
/// grids are (a receiver reads a message from its sender's array a tile at a time, in message
/// order).
template <class F> void for_each_part_tile(const GridPart &part, F &&f) {
  const Index columns = part.cols.total();
  Index rows_before = 0;
  for_each_strip(part.rows, 0, part.rows.window_length(), [&](const Strip &r) {
    Index columns_before = 0;
    for_each_strip(part.cols, 0, part.cols.window_length(), [&](const Strip &c) {
      f(Tile{part.src + r.src_local * part.src_row_step + c.src_local * part.src_col_step,
             part.dst + r.dst_local * part.dst_row_step + c.dst_local * part.dst_col_step,
             part.position + rows_before * columns + columns_before * r.count, r.count, c.count,
             r.src_step * part.src_row_step, c.src_step * part.src_col_step,
             r.dst_step * part.dst_row_step, c.dst_step * part.dst_col_step, r.count});
      columns_before += c.count;
    });
    rows_before += r.count;
  });
}

/// One message: its rectangles in message order, as tiles (two block grids) or parts (a block
/// grid and a block-cyclic layout; for_each_part_tile gives their tiles). A sent message has
/// no destination offsets (the receiver's placement is its own), a received one no source
/// offsets; the rank's message to itself has both.
struct GridMessage {
  int rank = -1; ///< the peer
  Index elements = 0;
  std::vector<Tile> tiles;
  std::vector<GridPart> parts;

  /// f(const Tile&) for every tile of the message, in message order.
  template <class F> void for_each_tile(F &&f) const {
    for (const Tile &t : tiles)
      f(t);
    for (const GridPart &p : parts)
      for_each_part_tile(p, f);
  }
};

/// One rank's part of a GridTransfer: messages by increasing peer rank; the self copy apart.
struct GridRankPlan {
  int rank = -1;
  std::vector<GridMessage> sends;
  std::vector<GridMessage> recvs;
  GridMessage self;

  [[nodiscard]] std::size_t memory_bytes() const;
};

/// Empty when this rank's blocks of `g` (whose splits and local blocks check_grid_transfer
/// accepted) have their last element below 2^63 bytes of element_size-byte elements and no two
/// share an element of the local array, else the first problem, `side` first
/// ("a->local[3].offset: ..."). O(k log k) in the rank's k blocks when they share a leading
/// dimension (blocks of one local matrix); blocks of different leading dimensions whose
/// extents overlap are compared pairwise.
[[nodiscard]] std::string check_local_placement(const BlockGrid &g, std::size_t element_size,
                                                const std::string &side);

/// `rank`'s plan of a valid transfer (check_grid_transfer).
GridRankPlan make_grid_rank_plan(const GridTransfer &t, int rank);

} // namespace redist
