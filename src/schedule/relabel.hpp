#pragma once
// Relabelling the destination grid: when the caller lets redist choose which
// rank holds which position of a destination grid that is being created, propose the rank order
// that keeps the most elements on their own process, so fewer bytes cross the network.
//
// The weight of placing rank c at destination position (i, j) is the volume c would keep
// locally: the elements its source positions send to (i, j). For a full window (no trapezoid)
// the 2-D volume is the product of the 1-D ones, V((a, b) -> (i, j)) = R[a][i] * C[b][j], so the
// weights come from the two 1-D volume graphs (the product of their messages, as the 2-D graph).
// A maximum-weight assignment of candidate ranks to positions (matching.hpp's Hungarian method
// on the positive weights, the identity order as tie-break) gives the proposed order.
//
// Limits: the assignment is the Hungarian method of maximum_weight_matching, O(V E log V) at
// worst with E <= positions x candidates; meant for grids of up to a few thousand positions
// (the weights themselves take O(messages of the 2-D volume graph) time and memory). Node
// weighting (credit for keeping data on the same node rather than the same process) is left
// out: only same-process volume counts. Pure; no MPI.

#include "plan.hpp"

#include <cstddef>
#include <vector>

namespace redist {

struct Relabelling {
  /// The destination grid with the proposed ranks (shape of t.dst.grid, column-major ranks).
  Grid grid;
  /// The same shape with the default order: the first nprow*npcol candidates, column-major.
  Grid identity;
  Index total_elements = 0; ///< elements of the window
  Index kept_before = 0;    ///< elements kept on their process with the identity order
  Index kept_after = 0;     ///< ... with the proposed order
  std::size_t element_bytes = 8;

  [[nodiscard]] Index bytes_kept_before() const {
    return kept_before * static_cast<Index>(element_bytes);
  }
  [[nodiscard]] Index bytes_kept_after() const {
    return kept_after * static_cast<Index>(element_bytes);
  }
  [[nodiscard]] Index bytes_total() const {
    return total_elements * static_cast<Index>(element_bytes);
  }
  /// Bytes that no longer cross the network: bytes_kept_after() - bytes_kept_before().
  [[nodiscard]] Index bytes_saved() const { return bytes_kept_after() - bytes_kept_before(); }
};

/// The candidate ranks by default: the source grid's ranks in column-major order (each once),
/// then, when the destination grid has more positions, the smallest non-negative ranks not in
/// the source grid.
[[nodiscard]] std::vector<int> default_candidates(const Layout &src, int positions);

/// Elements rank `rank` keeps locally if placed at destination position (pr, pc): the elements
/// the source positions it holds send to (pr, pc). t.dst.grid's ranks are ignored.
[[nodiscard]] Index kept_volume(const Transfer &t, int rank, int pr, int pc);

/// The proposed rank order of t.dst.grid (its shape, block sizes, RSRC/CSRC and window are
/// used, its ranks ignored) among `candidates` (empty: default_candidates; at least
/// nprow*npcol distinct ranks, else std::invalid_argument). The identity order is the first
/// nprow*npcol candidates column-major; among assignments of maximum kept volume the one that
/// moves fewest ranks from it is preferred. @pre t.region is full (std::invalid_argument).
[[nodiscard]] Relabelling propose_relabelling(const Transfer &t, std::vector<int> candidates = {},
                                              std::size_t element_bytes = 8);

} // namespace redist
