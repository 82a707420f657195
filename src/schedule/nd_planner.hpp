#pragma once
// Schedule layer: the schedules of an N-d transfer (issue 16), with the meaning they have for
// 2-D transfers (planner.hpp). Pure.
//
// The volume between a source and a destination grid position is the product over B's
// dimensions of the per-dimension volumes (dim_volumes, nd_index.hpp: one period per pair, or
// the GEN_BLOCK intervals met), so the graph is a tensor product of 1-D graphs and never
// enumerates elements (Chung & Hsu 1998; review Sec. 3.2.7). Product strategies (caterpillar,
// stepwise, greedy, circulant) are the product of one 1-D schedule per dimension, as the 2-D
// product of a row and a column schedule (Desprez et al. 1998, Sec. 6), folded one dimension
// at a time; stepwise and greedy also run on the whole graph when it is small, the cheaper by
// the model winning; GGP and OGGP run on the whole graph. Two-phase (multiphase) plans are 2-D
// only: an N-d multiphase request runs in one phase as `automatic` would, and says so.

#include "nd_plan.hpp"
#include "planner.hpp"
#include "schedule.hpp"

#include <cstddef>
#include <string>
#include <vector>

namespace redist {

/// The schedule's numbering of an N-d transfer's grid positions: a sender is a position of A's
/// grid numbered by its coordinates along A's dimensions perm[0], perm[1], ... (perm[0]
/// fastest), a receiver a position of B's grid by its coordinates along B's dimensions 0, 1,
/// ... (0 fastest) -- the 2-D numbering pr + pc * nprow for m = 2.
struct NdScheduleGrids {
  int ndims = 0;
  std::array<int, kMaxDims> src_extent{}; ///< by B's dimension d: A's processes along perm[d]
  std::array<int, kMaxDims> dst_extent{}; ///< B's processes along d
  std::array<int, kMaxDims> perm{};
  std::vector<int> src_ranks; ///< by sender number
  std::vector<int> dst_ranks; ///< by receiver number

  /// The number of A's grid position with coordinates `a` (by A's dimension).
  [[nodiscard]] int src_node(const Coords &a) const;
  /// The number of B's grid position with coordinates `b` (by B's dimension).
  [[nodiscard]] int dst_node(const Coords &b) const;
};
[[nodiscard]] NdScheduleGrids nd_schedule_grids(const NdTransfer &t);

/// The volume graph of a valid N-d transfer over NdScheduleGrids' numbering, the product of
/// its dimensions' dim_volumes. O(messages) memory; no element is enumerated.
[[nodiscard]] VolumeGraph nd_volume_graph(const NdTransfer &t);

/// choose_schedule for an N-d transfer: the strategy (automatic resolved by the model) and the
/// steps of the rank whose plan is `plan` (make_nd_rank_plan; RankStep's send / recv index its
/// sends / recvs). Empty, or why the options cannot be honoured (the same on every rank).
std::string choose_nd_schedule(const NdTransfer &t, const NdRankPlan &plan,
                               const ScheduleOptions &options, const ScheduleInputs &inputs,
                               std::size_t element_bytes, ScheduleChoice &choice);

/// The whole schedule of the explicit strategy `options.strategy` (neither automatic nor
/// multiphase) over NdScheduleGrids' numbering, self messages removed, the concurrency and
/// memory limits applied, as the ranks execute it; `how` says how it was built. For tests and
/// tools. Empty, or why not.
std::string nd_global_schedule(const NdTransfer &t, const ScheduleOptions &options,
                               std::size_t element_bytes, Schedule &out, std::string &how);

} // namespace redist
