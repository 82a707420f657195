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
// same element at both ends without either knowing the other's local placement.

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
struct GridTransfer {
  const BlockGrid *src = nullptr;
  const BlockGrid *dst = nullptr;
  Index m = 0;
  Index n = 0;
  bool transposed = false;
};

/// Empty when the transfer is valid for `rank` of comm_size ranks, else its first problem
/// ("a->row_splits[3]: ..."). Owners are checked for this rank's blocks and those they meet.
[[nodiscard]] std::string check_grid_transfer(const GridTransfer &t, int rank, int comm_size);

/// One message: its rectangles in message order. A sent message's tiles have no destination
/// offsets (the receiver's placement is its own), a received one's no source offsets; the
/// rank's message to itself has both.
struct GridMessage {
  int rank = -1; ///< the peer
  Index elements = 0;
  std::vector<Tile> tiles;
};

/// One rank's part of a GridTransfer: messages by increasing peer rank; the self copy apart.
struct GridRankPlan {
  int rank = -1;
  std::vector<GridMessage> sends;
  std::vector<GridMessage> recvs;
  GridMessage self;

  [[nodiscard]] std::size_t memory_bytes() const;
};

/// `rank`'s plan of a valid transfer (check_grid_transfer).
GridRankPlan make_grid_rank_plan(const GridTransfer &t, int rank);

} // namespace redist
