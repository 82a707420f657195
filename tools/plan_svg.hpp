#pragma once
// The picture of a block-cyclic redistribution plan (redist-plan --svg with --1d or --2d): one
// SVG with three panels, (a) the source and destination ownership maps, (b) the volume matrix
// as a heat map, (c) the schedule as steps x senders. Pure: no MPI. The parts that decide what
// is drawn (ownership rectangles, heat map bins) are separate functions so that tests can check
// them against brute force.

#include "plan.hpp"
#include "planner.hpp"
#include "schedule.hpp"

#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

namespace redist::plan_svg {

/// Cells [row0, row1) x [col0, col1) of an ownership map, all owned by grid position `node`
/// (pr + pc * nprow), all inside or all outside the window being copied.
struct OwnedRect {
  Index row0 = 0;
  Index row1 = 0;
  Index col0 = 0;
  Index col1 = 0;
  int node = 0;
  bool in_window = false;
};

/// One layout as drawn. A 2-D map's cell (r, c) is matrix element (r, c); a 1-D vector is
/// folded into rows of `fold` elements, element g at cell (g / fold, g % fold). The rectangles
/// tile the drawn part, rows [first_row, end_row) x columns [first_col, end_col), exactly; when
/// the whole matrix would need too many rectangles the drawn part is a crop starting at the
/// window (the ownership pattern is periodic, so a crop shows it truly, where merging cells
/// would mix owners).
struct OwnershipMap {
  Index rows = 0; ///< cell rows of the whole matrix or folded vector
  Index cols = 0;
  Index fold = 0; ///< 1-D: elements per row; 0 for a 2-D map
  Index first_row = 0;
  Index end_row = 0;
  Index first_col = 0;
  Index end_col = 0;
  std::vector<OwnedRect> rects;

  [[nodiscard]] bool cropped() const {
    return first_row > 0 || end_row < rows || first_col > 0 || end_col < cols;
  }
};

/// The 2-D map of `layout` with an m x n window at (layout.i, layout.j): one rectangle per
/// block, cut at the window's edges; at most max_rects rectangles and max_per_side rows or
/// columns of them.
[[nodiscard]] OwnershipMap ownership_map(const Layout &layout, Index m, Index n,
                                         std::size_t max_rects, std::size_t max_per_side);
/// The 1-D map of `dim` (whole vector of dim.extent elements) with the window [start, start +
/// length), folded at `fold` elements per row: one rectangle per block piece in a row, cut at
/// the window's edges; at most max_rects rectangles and max_per_side rows. A row needs up to
/// fold + 2 rectangles: with a smaller max_rects nothing is drawn.
[[nodiscard]] OwnershipMap ownership_map_1d(const BlockCyclic &dim, Index start, Index length,
                                            Index fold, std::size_t max_rects,
                                            std::size_t max_per_side);
/// Elements per row for the 1-D maps of `t`: the whole vector when short, the source period
/// P * r when that is at most 48 of the smaller blocks (the source map then shows one column
/// per process), else 32 of the smaller blocks.
[[nodiscard]] Index fold_width(const Transfer1D &t);

/// The volume matrix binned to at most max_side x max_side cells: cell (a, b) sums the
/// messages from senders [a * senders_per_cell, (a + 1) * senders_per_cell) to receivers
/// [b * receivers_per_cell, ...).
struct HeatMap {
  int senders_per_cell = 1;
  int receivers_per_cell = 1;
  int rows = 0;
  int cols = 0;
  std::vector<Index> volume; ///< rows x cols, row-major

  [[nodiscard]] Index at(int row, int col) const {
    return volume[static_cast<std::size_t>(row) * static_cast<std::size_t>(cols) +
                  static_cast<std::size_t>(col)];
  }
};
[[nodiscard]] HeatMap heat_map(const VolumeGraph &graph, int max_side);

/// The whole picture of a plan: the three panels for each phase (one; two for Kaushik et al.'s
/// two-phase plans, one below the other), from the phases as global_phases made them.
/// one_d: the transfers are 1-D problems (t.rows() is the vector, as redist-plan --1d builds
/// them); detail: how the plan was chosen, shown with a two-phase plan.
[[nodiscard]] std::string plan_svg(const std::vector<GlobalPhase> &phases, bool one_d,
                                   std::string_view detail);

} // namespace redist::plan_svg
