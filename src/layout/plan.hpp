#pragma once
// Layout layer: one rank's part of a redistribution -- its peers, message sizes, and the runs to
// pack and unpack. Pure: ranks are plain integers, no MPI.

#include "index.hpp"
#include "layout.hpp"

#include <array>
#include <cstddef>
#include <vector>

namespace redist {

/// The whole redistribution, identical on every rank: B := op(A) on the region of B's m x n
/// window, A = src, B = dst.
///
/// op is an axis permutation: B's dimension d holds A's dimension perm[d]. In 2-D,
/// perm = {0, 1} copies (A's window is m x n, B(i, j) <- A(i, j)) and perm = {1, 0}
/// transposes (A's window is n x m, B(i, j) <- A(j, i)), as PBLAS PxTRAN / PxGEADD:
/// sub(C) := beta sub(C) + alpha sub(A)^T with sub(C) M x N and sub(A) N x M; m, n and the
/// region are always B's (PxTRADD's trapezoid is on sub(C)). Window indices are B's: along
/// B's dimension d they index A's dimension perm[d].
struct Transfer {
  Layout src;
  Layout dst;
  Index m = 0; ///< rows of B's window
  Index n = 0; ///< columns of B's window
  Region region;
  std::array<int, 2> perm{0, 1};

  [[nodiscard]] bool transposed() const { return perm[0] != 0; }
  /// B's dimension d (0: rows, 1: columns) and the dimension perm[d] of A it holds.
  [[nodiscard]] Transfer1D dim(int d) const {
    const int a = perm[static_cast<std::size_t>(d)];
    return {src.dim(a), dst.dim(d), src.start(a), dst.start(d), d == 0 ? m : n};
  }
  [[nodiscard]] Transfer1D rows() const { return dim(0); }
  [[nodiscard]] Transfer1D cols() const { return dim(1); }
  /// A's grid position along the dimension B's dimension d holds.
  [[nodiscard]] int src_coordinate(int d, int grid_row, int grid_col) const {
    return perm[static_cast<std::size_t>(d)] == 0 ? grid_row : grid_col;
  }
};

/// A message between this rank and one remote peer (or itself).
struct Peer {
  int rank = -1;      ///< the peer's rank in the communicator
  int row_slot = 0;   ///< index into the rank plan's row patterns (B's rows)
  int col_slot = 0;   ///< index into the rank plan's column patterns (B's columns)
  Index elements = 0; ///< elements in the message
  int grid_row = 0;   ///< the peer's position in its grid (A's grid for a receive)
  int grid_col = 0;
};

/// One rank's part of a Transfer. Only the grid rows and columns this rank exchanges data with
/// have patterns, so the plan's size grows with the rank's peers, not with the grids.
/// Patterns are per dimension of B (Transfer::dim): the row patterns pair B's rows with A's
/// dimension perm[0] (A's columns when transposed), so a Run's src_local is then a local column
/// of A and its dst_local a local row of B.
struct RankPlan {
  int rank = -1;
  bool in_src = false;
  bool in_dst = false;
  // As a source: runs to the destination grid rows / columns it sends to, by increasing grid
  // index (Peer::grid_row / grid_col name them).
  std::vector<RunPattern> send_rows;
  std::vector<RunPattern> send_cols;
  // As a destination: runs from the source grid rows / columns it receives from (source grid
  // columns / rows when transposed).
  std::vector<RunPattern> recv_rows;
  std::vector<RunPattern> recv_cols;
  std::vector<Peer> sends; ///< remote destinations with data, in the order to send
  std::vector<Peer> recvs; ///< remote sources with data
  Peer self;               ///< elements this rank copies to itself (slots index send_*)
  Index m = 0;
  Index n = 0;
  Region region;
  std::array<int, 2> perm{0, 1}; ///< Transfer::perm

  [[nodiscard]] bool transposed() const { return perm[0] != 0; }
  [[nodiscard]] Index elements_sent() const;
  [[nodiscard]] Index elements_received() const;
  [[nodiscard]] std::size_t memory_bytes() const;
};

/// The same element moves with both layouts column-major: a row-major local array is the
/// column-major array of its transpose with the same leading dimension, so a row-major layout
/// becomes its transpose (rows and columns, window corner and grid swapped), the operation
/// transposes once more for each side that was row-major, and a row-major B's window and region
/// are stated on B's transpose (an upper trapezoid of B is a lower one of its transpose, the
/// diagonal rule kept). Identity when neither layout is row-major.
[[nodiscard]] Transfer column_major_equivalent(const Transfer &t);

/// A transfer between uniform block-cyclic layouts (no first blocks, column-major) that moves
/// every element of the window between the same two ranks as t, when there is one (index.hpp's
/// uniform_owners along both dimensions of column_major_equivalent(t)): the rank plans of both
/// have the same peers and message sizes, so schedules computed from block sizes and source
/// processes (closed forms, product schedules) hold for t. Local indices differ: plans for
/// execution are t's.
[[nodiscard]] bool uniform_owners(const Transfer &t, Transfer &uniform);

/// Which dimensions of a layout are replicated (PBLAS's RSRC_ or CSRC_ = -1): every process row
/// (column) of the grid holds a copy of all of the matrix's rows (columns), local index = global
/// index. The layout's `src` along a replicated dimension is not read.
struct Replication {
  bool rows = false;
  bool cols = false;
  [[nodiscard]] bool any() const { return rows || cols; }
  [[nodiscard]] bool along(int axis) const { return axis == 0 ? rows : cols; }
};

/// How a transfer with replicated sides is planned: in parts, one batch operation each. Along
/// each dimension d of B (rows, columns), one part per process coordinate c of B's grid along d
/// where B is replicated along d (the part writes copy c of B), or, with `local_reads`, where A is
/// replicated along the dimension B's d holds (the part moves only the elements B holds at
/// coordinate c, read from A's copy c mod A's processes: on one grid, a process's own copy);
/// else one part along d.
struct ReplicaParts {
  std::array<int, 2> count{1, 1};
  std::array<bool, 2> restricted{false, false}; ///< part c along d keeps B's coordinate c only
  [[nodiscard]] int total() const { return count[0] * count[1]; }
};
[[nodiscard]] ReplicaParts replica_parts(const Transfer &t, Replication a, Replication b,
                                         bool local_reads);

/// Make t (between layouts whose replicated dimensions are described by their extent) the
/// block-cyclic transfer of part `part` (c0 * parts.count[1] + c1), in place: a copy of B it
/// writes held as one block of the whole extent on process row c0 (column c1); A read from its
/// copy held the same way on process row (column) c mod A's processes along the dimension B's
/// holds where the parts run along it, else on 0. Replicas of A must hold the same values, as
/// PBLAS assumes. Returns the coordinates of B's grid along its rows and columns the part's
/// messages are restricted to (-1: none), for keep_destinations.
std::array<int, 2> make_part(Transfer &t, Replication a, Replication b, const ReplicaParts &parts,
                             int part);

/// Keep only the messages of `plan` (rank `rank`'s plan of t) whose
/// destination lies at B's grid row at[0] and column at[1] (-1: any): the sends to other
/// destinations, and this rank's receives and own copy unless it is such a destination, are
/// dropped.
void keep_destinations(RankPlan &plan, const Transfer &t, int rank, std::array<int, 2> at);

/// Build `rank`'s plan. Sends are ordered by (destination - rank) mod comm_size so that in
/// each round of the all-at-once exchange every receiver is targeted by one sender.
/// Row-major layouts are planned as column_major_equivalent(t): the plan's m, n, region and
/// perm are then that transfer's, its messages run along B's rows, and the copy loops address
/// both local arrays with their leading dimensions as for column-major ones.
RankPlan make_rank_plan(const Transfer &t, int rank, int comm_size);

/// Number of elements a message carries: product of row and column counts for a full
/// window; for a trapezoid, the sum over the columns of the rows inside the region.
Index message_elements(const RunPattern &rows, const RunPattern &cols, const Region &region,
                       Index m, Index n);

/// Row pieces of a message, grouped: `count` runs of `length`
/// elements, run i at local rows src + i*src_step and dst + i*dst_step. Element-cyclic
/// layouts give a few long groups of single elements instead of one piece per element.
struct RowGroup {
  Index src = 0;
  Index dst = 0;
  Index length = 0;
  Index count = 0;
  Index src_step = 0;
  Index dst_step = 0;
};
/// The groups of a message's rows, kept for one period of the pattern (and the window's last,
/// partial period) so that their memory follows the pattern, not the matrix. Where each period
/// is one group that the next continues at the same steps, `period` holds that one group for
/// the whole window instead (periods = 1, no tail). A pattern of several segments
/// (RunPattern::head_length) has the groups of its segments before the last in `head`.
struct RowGroups {
  std::vector<RowGroup> head;   ///< window indices [0, head_length), local indices included
  std::vector<RowGroup> period; ///< the first of `periods` periods after the head
  Index periods = 0;            ///< whole periods in the window after the head
  Index src_stride = 0;         ///< advance of the local indices per period
  Index dst_stride = 0;
  std::vector<RowGroup> tail; ///< the rest of the window (its local indices included)

  /// The window's one group, if it has exactly one (then with shifts 0), else null.
  [[nodiscard]] const RowGroup *only() const {
    if (!head.empty()) {
      return head.size() == 1 && periods == 0 && tail.empty() ? head.data() : nullptr;
    }
    if (periods == 1 && period.size() == 1 && tail.empty()) return period.data();
    if (periods == 0 && tail.size() == 1) return tail.data();
    return nullptr;
  }
  /// f(group, src_shift, dst_shift) for every group in window order, shifts to add to its
  /// local indices.
  template <class F> void for_each(F &&f) const {
    for (const RowGroup &g : head) {
      f(g, Index{0}, Index{0});
    }
    for (Index t = 0; t < periods; ++t) {
      for (const RowGroup &g : period) {
        f(g, t * src_stride, t * dst_stride);
      }
    }
    for (const RowGroup &g : tail) {
      f(g, Index{0}, Index{0});
    }
  }
};
RowGroups row_groups(const RunPattern &rows);

/// Visit the contiguous pieces of one message in message order:
/// f(src_offset, dst_offset, count), offsets in elements into the local arrays (leading
/// dimensions lld_src, lld_dst; column-major).
template <class F>
void for_each_piece(const RunPattern &rows, const RunPattern &cols, const Region &region, Index m,
                    Index n, Index lld_src, Index lld_dst, F &&f) {
  cols.for_each([&](const Run &c) {
    for (Index dc = 0; dc < c.length; ++dc) {
      const Index src_col = (c.src_local + dc) * lld_src;
      const Index dst_col = (c.dst_local + dc) * lld_dst;
      const auto [lo, hi] = region.rows_in_column(c.k + dc, m, n);
      rows.for_each(
          lo, hi, [&](const Run &r) { f(r.src_local + src_col, r.dst_local + dst_col, r.length); });
    }
  });
}

} // namespace redist
