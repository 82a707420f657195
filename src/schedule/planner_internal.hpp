#pragma once
// The parts of the 2-D planner that its files share (planner.cpp decides, planner_build.cpp
// builds a chosen strategy, planner_steps.cpp lays out one rank's steps, planner_cost.cpp
// predicts); not part of planner.hpp's interface. The 2-D schedules are products of 1-D ones
// (Desprez et al. 1998, Sec. 6) or, on small grids, schedules of the whole graph. Pure, no MPI.

#include "planner.hpp"
#include "schedule_cyclic.hpp"

#include <cstddef>
#include <optional>
#include <string>
#include <vector>

namespace redist::planning {

// Communicator size implied by the grids: one more than the largest rank in either.
int comm_size_of(const Transfer &t);

// A 2-D schedule either as the product of a row and a column schedule (Desprez et al. 1998,
// Sec. 6: never materialised, so its size grows with the 1-D problems only) or as an
// explicit schedule over the grid positions.
struct TwoDimensional {
  bool product = true;
  Schedule rows;
  Schedule cols;
  Schedule direct;
  std::string detail;
};

// Direct 2-D schedules (on the full graph of grid positions) are computed only up to this
// many sender-receiver pairs; beyond, the product of 1-D schedules is used.
inline constexpr Index kDirectPairs = 4096;

// Sender-receiver pairs of grid positions: the size of the 2-D graph a direct schedule covers.
Index grid_pairs(const Transfer &t);

// The two-level model is costed exactly on materialised schedules, which are built up to
// kDirectPairs grid pairs. Beyond, where only 1-D step sizes are known, the one-level model
// with the inter-node level stands for it: every message costed as if it crossed the network
// (an upper bound at each rank's port, blind to a node link its ranks share).
bool two_level_exact(const Transfer &t);

// The model one-level formulas use: the options' model, or the inter-node level where the
// two-level model applies but is not costed exactly.
const CostModel &flat_model(const Transfer &t, const ScheduleOptions &o);

// A materialised schedule's statistics under the options' model, one- or two-level.
ScheduleStats stats_of(const Transfer &t, const ScheduleOptions &o, const Schedule &s,
                       std::size_t element_bytes);

// `s` without the pieces whose sender and receiver are the same rank (the executor copies
// those locally); empty steps dropped unless keep_empty_steps.
Schedule without_self(const Transfer &t, const Schedule &s, bool keep_empty_steps);

// The product's statistics from the 1-D step sizes, without materialising it: step (a, b)
// is at most max_a * max_b elements (exact for full windows; an upper bound for trapezoids).
ScheduleStats product_stats(const std::vector<StepSize> &rows, const std::vector<StepSize> &cols,
                            const CostModel &model, Index chunk, std::size_t element_bytes);

ScheduleStats product_stats(const TwoDimensional &two, const CostModel &model, Index chunk,
                            std::size_t element_bytes);

// The predicted time of all-at-once: `inputs` (the busiest rank's part, one level), or with two
// levels all messages in one step (every rank port and node link loaded at once).
double all_at_once_seconds(const Transfer &t, const ScheduleOptions &o,
                           const ScheduleInputs &inputs, std::size_t element_bytes);

// The rank of `plan`'s steps of the product schedule `two`: product step (a, b) pairs it with
// its row partner in a and its column partner in b.
std::vector<RankStep> rank_steps_of_product(const Transfer &t, const RankPlan &plan,
                                            const TwoDimensional &two);

// The rank of `plan`'s steps of a materialised schedule over grid positions.
std::vector<RankStep> rank_steps_of_schedule(const Transfer &t, const RankPlan &plan,
                                             const Schedule &s);

// The stepwise (or circulant) product when both dimensions have a closed form, laid out for
// one rank without building the 1-D schedules: the choice the product path of
// build_two_dimensional yields (same 1-D schedules, statistics and steps), in time and memory
// that grow with the steps and the rank's peers instead of the processes (a 1-D schedule of
// 65,536 processes has millions of pieces). False when it does not apply: other strategies,
// limits on concurrency, trapezoids (not products), small grids where stepwise may take the
// direct 2-D schedule, and closed forms that split messages across steps.
bool closed_form_product_choice(const Transfer &t, const RankPlan &plan, const ScheduleOptions &o,
                                std::size_t element_bytes, ScheduleChoice &choice);

// The whole schedule of `o.strategy`, which is neither automatic nor multiphase; `how` says
// how it was built.
std::string build_schedule(const Transfer &t, const ScheduleOptions &o, std::size_t element_bytes,
                           Schedule &out, std::string &how);

// The choice of `o.strategy`, which is neither automatic nor multiphase, for the rank of
// `plan`: its statistics and the rank's steps, or why the options cannot be honoured.
// `choice` comes in empty; `chunk` is check_options' chunk for `o`.
std::string build_one_phase(const Transfer &t, const RankPlan &plan, const ScheduleOptions &o,
                            const ScheduleInputs &inputs, std::size_t element_bytes, Index chunk,
                            ScheduleChoice &choice);

} // namespace redist::planning
