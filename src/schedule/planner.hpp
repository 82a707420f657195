#pragma once
// Schedule layer: choosing a schedule for a 2-D transfer and laying out one rank's part
// of it. Pure: every rank computes the same global choice from the same inputs.
//
// One function decides: choose_schedule picks the strategy (for `automatic`, the cheapest by
// the cost model) and whether to run two phases, through choose_phases (the decision it shares
// with N-d plans) and the one-phase and two-phase parts of that decision in planner.cpp.
// Everything else computes: the all_at_once_* inputs and other predictions (planner_cost.cpp),
// the schedule of a chosen strategy (planner_build.cpp) and one rank's steps of it
// (planner_steps.cpp), and global_schedule / global_phases, which ask choose_schedule (as every
// rank would decide) and build the schedule it chose. No computing function calls back into
// the decision.

#include "plan.hpp"
#include "schedule.hpp"

#include <array>
#include <cstddef>
#include <functional>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <vector>

namespace redist {

struct ScheduleOptions {
  Strategy strategy = Strategy::automatic;
  int max_concurrent = 0; ///< pieces per step; 0 = no limit
  Index max_memory = 0;   ///< buffer bytes per process; 0 = no cap
  CostModel model;        ///< the one-level model; with a node map, the intra-node level
  /// The two-level model (NodeLevels in schedule.hpp): the machine node of every rank of the
  /// communicator, by rank; empty for the one-level model. Used when the transfer's ranks are on
  /// more than one node; messages between nodes then cost `inter`.
  std::vector<int> node_of_rank;
  /// Inter-node alpha, beta: defaults of the order of TCP over a 10 Gbit/s link (20 us per
  /// message, 1 GB/s per node link); measure them with redist_calibrate_nodes.
  CostModel inter{2e-5, 1e-9, 0.0};
};

/// The two-level levels of the transfer's grid positions under `options`: none when the node
/// map is empty, does not cover every rank of the grids, or puts all of them on one node (the
/// one-level model then applies, unchanged).
[[nodiscard]] std::optional<NodeLevels> node_levels(const Transfer &t,
                                                    const ScheduleOptions &options);

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

struct TwoPhase;
struct NdTwoPhase;

/// The schedule chosen for a transfer, its predicted cost, and this rank's steps.
struct ScheduleChoice {
  Strategy strategy = Strategy::all_at_once;   ///< never `automatic`
  std::string detail;                          ///< how it was built, e.g. "rows x columns"
  ScheduleStats stats;                         ///< whole transfer, all ranks
  Index chunk_elements = 0;                    ///< largest piece the executor sends; 0 = no cut
  std::vector<RankStep> steps;                 ///< this rank's steps; empty for all-at-once
  std::shared_ptr<const TwoPhase> phases;      ///< multiphase: the two phases; else null
  std::shared_ptr<const NdTwoPhase> nd_phases; ///< the same for N-d plans (nd_planner.hpp)
};

/// Kaushik et al. 1994/1995's two-phase redistribution (Evers 2025 review, Secs. 4.2.1-4.2.2) as
/// one rank runs it:
/// the source is copied into an intermediate layout on the source or the destination grid,
/// then from there into the destination. The intermediate's rows and columns are
/// CYCLIC(lcm) / CYCLIC(gcd) of the two ends' block sizes (multiphase_intermediates) or one
/// end's own block size starting on the process that holds the end's first window block; the
/// intermediate holds the window only (extent m x n, window at 0; n x m for a transposed
/// transfer's intermediate on the source grid, which has A's shape: its first phase copies,
/// its second transposes, where on the destination grid the first transposes).
struct TwoPhase {
  Layout mid;
  std::array<Transfer, 2> transfers; ///< source -> mid, mid -> destination
  std::array<RankPlan, 2> plans;     ///< this rank's part of each
  std::array<ScheduleChoice, 2> choices;
  ScheduleOptions phase_options; ///< the limits each phase honours (strategy: automatic);
                                 ///< without the node map (O(ranks), not kept by a plan)
  Index mid_lld = 1;             ///< leading dimension of this rank's intermediate array
  Index mid_elements = 0; ///< size of this rank's intermediate array (0 outside the mid grid)
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

/// The all-at-once inputs of a transfer estimated without rank plans, from its row and column
/// volume graphs: a node's messages and elements are the products of its 1-D degrees and
/// sums, less the part it keeps (exact for full windows, an upper bound for trapezoids).
/// O(grid nodes + 1-D volume graphs).
ScheduleInputs all_at_once_estimate(const Transfer &t, const CostModel &model,
                                    std::size_t element_bytes);

/// Choose the schedule for `t` under `options` and lay out the steps of the rank whose plan
/// is `plan` (made by make_rank_plan for this transfer). Returns an empty string on success,
/// else why the options cannot be honoured (the same on every rank).
/// `multiphase` runs two phases through the cheapest intermediate layout by the model (each
/// phase scheduled as `automatic` would under the same limits, the intermediate array
/// counted against max_memory); when no intermediate layout applies, one phase as
/// `automatic` (choice.strategy then says which). `automatic` takes two phases when the model
/// predicts they are faster than its one-phase choice.
std::string choose_schedule(const Transfer &t, const RankPlan &plan, const ScheduleOptions &options,
                            const ScheduleInputs &inputs, std::size_t element_bytes,
                            ScheduleChoice &choice);

/// The whole 2-D schedule the ranks execute, over grid positions (as volume_graph(const
/// Transfer&)), for tools and tests: `automatic` resolved as every rank would (from rank
/// plans of all ranks), self messages (same rank on both sides) removed, the concurrency and
/// memory limits applied. Returns an empty string on success, else why not.
/// A plan that runs in two phases has no single schedule: global_schedule then says so, and
/// global_phases gives each phase's transfer and schedule.
std::string global_schedule(const Transfer &t, const ScheduleOptions &options,
                            std::size_t element_bytes, Schedule &out, std::string &detail);

/// The 1-D schedule a product strategy (caterpillar, stepwise, greedy, circulant) takes along
/// one dimension, as global_schedule builds it before taking the product of the rows' and the
/// columns' schedules; `how` names it ("closed form", "stepwise matchings", ...). For tools that
/// evaluate a product step by step instead of materialising it.
[[nodiscard]] Schedule dimension_schedule(Strategy s, const Transfer1D &t, const CostModel &model,
                                          std::size_t element_bytes, std::string &how);

struct GlobalPhase {
  Transfer transfer;
  Schedule schedule; ///< over the phase's grid positions, as global_schedule
  std::string detail;
};
/// The phases of the plan every rank would make: two for a two-phase plan, else one (the
/// transfer itself and its global_schedule). Returns an empty string on success, else why not.
std::string global_phases(const Transfer &t, const ScheduleOptions &options,
                          std::size_t element_bytes, std::vector<GlobalPhase> &phases,
                          std::string &detail);

// --- Shared by the 2-D planner and the N-d one (nd_planner.hpp) ---

/// One dimension of an intermediate layout (Kaushik et al.); its window starts at index 0.
struct MidDimension {
  BlockCyclic layout;
  bool intermediate = false; ///< CYCLIC(lcm) / CYCLIC(gcd), not an end's own block size
};

/// The choices for one dimension of an intermediate layout on the grid of the end whose
/// distribution along it is `own`, its window starting at own_start and `length` long: the
/// end's own block size, its first window block on the process that holds it (the end's own
/// owners when the window starts on a block boundary), and those of `intermediates`
/// (multiphase_intermediates) with own's process count. Each holds only the window: a rank's
/// intermediate array grows with its share of the window, never with the indices before it.
[[nodiscard]] std::vector<MidDimension> mid_dimensions(Index length, const BlockCyclic &own,
                                                       Index own_start,
                                                       std::span<const BlockCyclic> intermediates);

/// Why a multiphase request runs in one phase when no intermediate layout applies or fits.
inline constexpr const char *kNoIntermediateLayout = "multiphase: no intermediate layout applies";
/// Why a multiphase request runs in one phase for first blocks or row-major arrays (the
/// intermediate layouts are laid out from uniform column-major ones).
inline constexpr const char *kFirstBlocksOrRowMajor =
    "multiphase: no intermediate layout for first blocks or row-major arrays";

/// One rank's part of the all-at-once exchange, in messages and elements.
struct AllAtOnceTotals {
  Index sent_messages = 0;
  Index sent = 0;
  Index received_messages = 0;
  Index received = 0;
};
/// The all-at-once inputs from every rank's totals: the largest buffer and the largest time
/// (a rank's sends and its receives each serialised at its network port).
[[nodiscard]] ScheduleInputs all_at_once_maxima(std::span<const AllAtOnceTotals> ranks,
                                                const CostModel &model, std::size_t element_bytes);

/// The options each phase of a two-phase plan honours: `automatic` under the options' limits,
/// the memory cap less the intermediate array's mid_bytes halved between the phases (the array
/// and both phases' buffers are held together). False when that leaves less than one element
/// each way.
bool two_phase_options(const ScheduleOptions &options, Index mid_bytes, std::size_t element_bytes,
                       ScheduleOptions &phase_options);

/// The statistics of a two-phase plan: its phases' summed (steps, pieces, elements, time) or
/// their maxima (largest piece, pieces per node).
[[nodiscard]] ScheduleStats two_phase_stats(const std::array<ScheduleChoice, 2> &phases);

/// Empty when `o`'s limits are valid for elements of element_bytes, else why not; `chunk`:
/// the largest piece the memory cap leaves (half of it for sending, half for receiving; 0: no
/// cap).
std::string check_options(const ScheduleOptions &o, std::size_t element_bytes, Index &chunk);

/// The node levels of grid positions whose ranks are src_ranks (senders) and dst_ranks
/// (receivers), as node_levels(const Transfer&, ...).
[[nodiscard]] std::optional<NodeLevels> node_levels(std::span<const int> src_ranks,
                                                    std::span<const int> dst_ranks,
                                                    const ScheduleOptions &options);

/// `s` without the pieces whose sender's rank (src_ranks by sender node) is its receiver's
/// (dst_ranks): the executor copies those locally. Steps left empty are dropped unless
/// keep_empty_steps (the caterpillar's).
[[nodiscard]] Schedule without_self(const Schedule &s, std::span<const int> src_ranks,
                                    std::span<const int> dst_ranks, bool keep_empty_steps);

/// The 1-D (or whole-graph) schedule of strategy s on graph g without a closed form: the
/// caterpillar, greedy matchings, else (stepwise, circulant) Desprez et al.'s Stepwise
/// matchings; `how` names it.
[[nodiscard]] Schedule graph_schedule(Strategy s, const VolumeGraph &g, std::string &how);

/// Jeannot & Wagner 2004's bound on concurrent transfers applied to a contention-free
/// schedule: each step cut into consecutive groups of at most k pieces (k <= 0: unchanged).
[[nodiscard]] Schedule limit_concurrency(const Schedule &s, int k);

/// The memory cap: every piece longer than `chunk` elements cut into chunks sent in
/// consecutive sub-steps (sub-step j of a step carries chunk j of each of its pieces).
[[nodiscard]] Schedule cut_pieces(const Schedule &s, Index chunk);

/// GGP / OGGP's step setup in elements: `level`'s start-up plus the model's step setup over
/// the time of one element at `level`'s rate.
[[nodiscard]] Index step_setup_elements(const ScheduleOptions &o, const CostModel &level,
                                        std::size_t element_bytes);

/// The all-at-once choice under `o`'s limits (why not when they cannot be honoured):
/// one step, `elements` moved in `seconds`.
std::string all_at_once_choice(const ScheduleOptions &o, const ScheduleInputs &inputs,
                               Index elements, double seconds, ScheduleChoice &choice);

/// Builds the choice of one explicit strategy (neither automatic nor multiphase) for the rank
/// being planned; empty, or why the options cannot be honoured.
using OnePhaseBuilder = std::function<std::string(const ScheduleOptions &, ScheduleChoice &)>;

/// Builds a transfer's two-phase choice if one is predicted faster than `bound` seconds;
/// false when no intermediate layout applies, fits or beats the bound.
using TwoPhaseBuilder = std::function<bool(double bound, ScheduleChoice &)>;

/// The least any two-phase plan is predicted to take: two start-ups of the cheaper level. Were
/// one of its phases to move no element between processes, the other would send exactly the
/// one-phase plan's messages, at its cost; so a two-phase plan can be faster only by sending in
/// both phases, each costing at least one start-up.
[[nodiscard]] double two_phase_floor(const ScheduleOptions &options);

/// The whole decision of choose_schedule and choose_nd_schedule; `one` makes the one-phase
/// choice under the options it is given (never multiphase). `multiphase`: two phases where
/// `two` builds them, else one phase as `automatic` would, its detail prefixed by
/// `why_one_phase`. Otherwise `one`'s choice, which for `automatic` gives way to two phases
/// predicted faster than one_phase_seconds(its choice) (Kaushik et al.: when the messages they
/// save cost more start-ups than the second copy of the data costs bandwidth). Where the one
/// phase is predicted at or below two_phase_floor, `two` is not called: no intermediate layout
/// is planned for transfers that small.
std::string choose_phases(const ScheduleOptions &options, std::size_t element_bytes,
                          const OnePhaseBuilder &one, const TwoPhaseBuilder &two,
                          const std::function<double(const ScheduleChoice &)> &one_phase_seconds,
                          const std::string &why_one_phase, ScheduleChoice &choice);

/// The one-phase decision: `options.strategy` itself, or for `automatic` all-at-once when no
/// limit asks for steps, else the cheapest step schedule by the model (stepwise, greedy, and
/// with max_concurrent OGGP and GGP). `build` makes each candidate.
std::string choose_one_phase(const ScheduleOptions &options, const ScheduleInputs &inputs,
                             std::size_t element_bytes, const OnePhaseBuilder &build,
                             ScheduleChoice &choice);

} // namespace redist
