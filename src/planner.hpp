#pragma once
// Layer 4 (continued): choosing a schedule for a 2-D transfer and laying out one rank's part
// of it. Pure: every rank computes the same global choice from the same inputs.

#include "plan.hpp"
#include "schedule.hpp"

#include <cstddef>
#include <string>
#include <vector>

namespace redist {

struct ScheduleOptions {
  Strategy strategy = Strategy::automatic;
  int max_concurrent = 0; ///< pieces per step; 0 = no limit
  Index max_memory = 0;   ///< buffer bytes per process; 0 = no cap
  CostModel model;
};

/// What one rank does in one step: at most one piece sent and one received, given as
/// indices into RankPlan::sends / RankPlan::recvs (-1: none) and element ranges of the
/// message. The executor may cut a piece into chunks to honour the memory cap.
struct RankStep {
  int send = -1;
  Index send_offset = 0;
  Index send_count = 0;
  int recv = -1;
  Index recv_offset = 0;
  Index recv_count = 0;
};

/// The schedule chosen for a transfer, its predicted cost, and this rank's steps.
struct ScheduleChoice {
  Strategy strategy = Strategy::all_at_once; ///< never `automatic`
  std::string detail;                        ///< how it was built, e.g. "rows x columns"
  ScheduleStats stats;                       ///< whole transfer, all ranks
  Index chunk_elements = 0;                  ///< largest piece the executor sends; 0 = no cut
  std::vector<RankStep> steps;               ///< this rank's steps; empty for all-at-once
};

/// The global facts a choice needs beyond the transfer, as maxima over the ranks of
/// all_at_once_local() (from an allreduce, or a loop over the ranks offline).
struct ScheduleInputs {
  Index all_at_once_buffer_max = 0; ///< bytes a rank buffers: sent + received
  double all_at_once_seconds = 0;   ///< predicted time of a rank's part
};

/// This rank's part of the all-at-once exchange: its buffer bytes and its predicted time
/// (its sends and its receives each serialised at its network port).
ScheduleInputs all_at_once_local(const RankPlan &plan, const CostModel &model,
                                 std::size_t element_bytes);

/// Choose the schedule for `t` under `options` and lay out the steps of the rank whose plan
/// is `plan` (made by make_rank_plan for this transfer). Returns an empty string on success,
/// else why the options cannot be honoured (the same on every rank).
std::string choose_schedule(const Transfer &t, const RankPlan &plan, const ScheduleOptions &options,
                            const ScheduleInputs &inputs, std::size_t element_bytes,
                            ScheduleChoice &choice);

/// The whole 2-D schedule the ranks execute, over grid positions (as volume_graph(const
/// Transfer&)), for tools and tests: `automatic` resolved as every rank would (from rank
/// plans of all ranks), self messages (same rank on both sides) removed, the concurrency and
/// memory limits applied. Returns an empty string on success, else why not.
std::string global_schedule(const Transfer &t, const ScheduleOptions &options,
                            std::size_t element_bytes, Schedule &out, std::string &detail);

} // namespace redist
