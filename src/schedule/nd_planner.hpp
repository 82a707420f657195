#pragma once
// Schedule layer: the schedules of an N-d transfer, with the meaning they have for
// 2-D transfers (planner.hpp). Pure.
//
// The volume between a source and a destination grid position is the product over B's
// dimensions of the per-dimension volumes (dim_volumes, nd_index.hpp: one period per pair, or
// the GEN_BLOCK intervals met), so the graph is a tensor product of 1-D graphs and never
// enumerates elements (Chung & Hsu 1998; review Sec. 3.2.7). Product strategies (caterpillar,
// stepwise, greedy, circulant) are the product of one 1-D schedule per dimension, as the 2-D
// product of a row and a column schedule (Desprez et al. 1998, Sec. 6), folded one dimension
// at a time; stepwise and greedy also run on the whole graph when it is small, the cheaper by
// the model winning; GGP and OGGP run on the whole graph. Two-phase (multiphase) plans go
// through an N-d intermediate layout (NdTwoPhase), each dimension's as for 2-D plans.

#include "nd_plan.hpp"
#include "planner.hpp"
#include "schedule.hpp"

#include <array>
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

/// Kaushik et al. 1994/1995's two-phase redistribution (TwoPhase, planner.hpp) of an N-d
/// transfer as one rank runs it. The intermediate layout lies either on the source grid, in
/// A's dimension and storage order (the first phase a copy, the second carrying the axis
/// permutation), or on the destination grid, in B's (the first phase permuting, the second a
/// copy). It holds the window only (its extents are the window's, at 0); along each dimension
/// it is the end's own distribution of the window or, both ends block-cyclic there, one of
/// mid_dimensions' CYCLIC(lcm) / CYCLIC(gcd) with the end's process count.
struct NdTwoPhase {
  NdLayout mid;
  bool on_source = true; ///< mid lies on the source grid (else on the destination grid)
  std::array<NdTransfer, 2> transfers; ///< source -> mid, mid -> destination
  std::array<NdRankPlan, 2> plans;     ///< this rank's part of each
  std::array<ScheduleChoice, 2> choices;
  ScheduleOptions phase_options; ///< as TwoPhase's
  Strides mid_strides{};         ///< this rank's intermediate array (dense, in mid.order)
  Index mid_elements = 0;        ///< its size (0 outside the mid grid)
};

/// The intermediate layouts a two-phase plan of `t` tries: on the source grid, then on the
/// destination grid, each combination of per-dimension choices with at least one
/// intermediate (past kNdMidCombinations combinations on a grid, the combinations that take
/// the same choice, the own one or the i-th intermediate, along every dimension).
struct NdMidLayout {
  NdLayout layout;
  bool on_source = true;
};
[[nodiscard]] std::vector<NdMidLayout> nd_mid_layouts(const NdTransfer &t);
inline constexpr std::size_t kNdMidCombinations = 64;

/// The two phases of `t` through `mid` (one of nd_mid_layouts(t)).
[[nodiscard]] std::array<NdTransfer, 2> nd_two_phases(const NdTransfer &t, const NdMidLayout &mid);

/// all_at_once_estimate for an N-d transfer, without rank plans: a grid position's messages
/// and elements are the products of its per-dimension degrees and totals (dim_volumes), less
/// the part its rank keeps; exact. O(grid positions x dimensions + per-dimension volumes).
[[nodiscard]] ScheduleInputs nd_all_at_once_estimate(const NdTransfer &t, const CostModel &model,
                                                     std::size_t element_bytes);

/// choose_schedule for an N-d transfer: the strategy (automatic resolved by the model) and the
/// steps of the rank whose plan is `plan` (make_nd_rank_plan; RankStep's send / recv index its
/// sends / recvs). Empty, or why the options cannot be honoured (the same on every rank).
/// `multiphase` and `automatic` decide on two phases (choice.nd_phases) as choose_schedule
/// does for 2-D transfers.
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
