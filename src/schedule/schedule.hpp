#pragma once
// Schedule layer: communication schedules. Pure functions from a bipartite volume graph (senders x
// receivers, elements per pair) to a sequence of steps. Contention-free strategies make every
// step a matching (each sender sends at most one piece, each receiver receives at most one);
// all-at-once is a single step with everything. Validity is checked in one place
// (check_schedule), costs in another (schedule_stats). No MPI.

#include "index.hpp"
#include "plan.hpp"

#include <cstddef>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace redist {

/// One message of a redistribution: `volume` elements from sender `src` to receiver `dst`.
struct Message {
  int src = 0;
  int dst = 0;
  Index volume = 0;
};

/// The bipartite communication graph: one entry per (sender, receiver) pair with data,
/// sorted by (src, dst). Senders and receivers are numbered separately (a process may be both).
struct VolumeGraph {
  int senders = 0;
  int receivers = 0;
  std::vector<Message> messages;

  /// Elements of message (src, dst), 0 when there is none. O(log messages).
  [[nodiscard]] Index volume(int src, int dst) const;
  [[nodiscard]] Index total() const;
  /// Maximum number of messages at one node (Delta(G)).
  [[nodiscard]] int max_degree() const;
  /// Maximum over nodes of the elements at that node (W(G)).
  [[nodiscard]] Index max_node_volume() const;
  /// Sort by (src, dst), merge duplicate pairs, drop empty messages.
  void normalize();
};

/// Part of a message sent in one step: elements [offset, offset + volume) of message
/// (src, dst), in message order.
struct Piece {
  int src = 0;
  int dst = 0;
  Index offset = 0;
  Index volume = 0;
};

struct Step {
  std::vector<Piece> pieces;
  /// Largest piece (the step's cost in the paper's model), 0 for an empty step.
  [[nodiscard]] Index largest() const;
};

struct Schedule {
  std::vector<Step> steps;
};

/// Strategies selectable per plan. `automatic` chooses by the cost model.
enum class Strategy {
  automatic,
  all_at_once,
  caterpillar,
  stepwise,
  greedy,
  circulant,
  ggp,
  oggp,
  multiphase,
};
/// The names of REDIST_SCHEDULE: "auto", "all-at-once", "caterpillar", ...
[[nodiscard]] std::string_view strategy_name(Strategy s);
[[nodiscard]] std::optional<Strategy> parse_strategy(std::string_view name);
/// Every name, comma separated, for error messages and --help.
[[nodiscard]] std::string strategy_names();

/// What a valid schedule must respect.
struct ScheduleLimits {
  bool matching = true;   ///< one piece per sender and per receiver in each step
  int max_concurrent = 0; ///< at most this many pieces per step; 0 = no limit
};

/// Empty when `schedule` is a valid schedule of `graph` under `limits`: every piece names a
/// message of the graph, the pieces of each message are disjoint and cover it exactly, no
/// piece is empty, and every step respects the limits. Otherwise a description of the first
/// violation found.
[[nodiscard]] std::string check_schedule(const VolumeGraph &graph, const Schedule &schedule,
                                         const ScheduleLimits &limits);

/// Linear cost model: alpha seconds per message start-up, beta seconds per byte, plus an
/// optional fixed cost per step (the backbone model's setup). Defaults are of the order of an
/// MPI message on one node; calibrate for a machine with redist_calibrate.
struct CostModel {
  double alpha = 2e-6;
  double beta = 2.5e-10;
  double step_setup = 0.0;
};

struct ScheduleStats {
  Index steps = 0;           ///< N
  Index pieces = 0;          ///< messages sent, a split message counted once per piece
  Index elements = 0;        ///< elements moved
  Index sum_step_max = 0;    ///< T: sum over steps of the largest piece, in elements
  Index largest_piece = 0;   ///< elements
  Index max_node_pieces = 0; ///< most pieces one node sends or receives in one step
  double seconds = 0.0;      ///< predicted time
};

/// Statistics and predicted time. A step costs, at its busiest node, alpha per piece plus
/// beta per byte (for a matching: alpha + beta * largest piece, the model of Desprez et al.
/// 1998, Sec. 3), plus step_setup.
[[nodiscard]] ScheduleStats schedule_stats(const Schedule &schedule, const CostModel &model,
                                           std::size_t element_bytes);

/// One step at its busiest node, the per-step term of schedule_stats without step_setup.
struct StepPortTime {
  double seconds = 0.0;      ///< alpha per piece + beta per byte; alpha for an empty step
  Index max_node_pieces = 0; ///< most pieces one node sends or receives in the step
};
[[nodiscard]] StepPortTime step_port_time(const Step &step, const CostModel &model,
                                          std::size_t element_bytes);

/// The two-level form of the cost model (docs/studies/cluster.md): which machine node each
/// sender and each receiver of a schedule is on, and the inter-node level. A piece between two
/// ranks of one node costs its port the intra-node alpha and beta (the CostModel passed with
/// it), as in the one-level model. A piece between nodes costs its rank's port the inter-node
/// alpha and its nodes' network links the inter-node beta per byte: a node's link is shared
/// by all of its ranks in each direction (a node's network interface), so a step lasts as long
/// as its busiest rank port or node link. When every sender and receiver is on one node, this
/// is the one-level model exactly.
struct NodeLevels {
  CostModel inter;
  std::vector<int> src_node; ///< by sender (grid position of the source)
  std::vector<int> dst_node; ///< by receiver (grid position of the destination)
};
[[nodiscard]] StepPortTime step_port_time(const Step &step, const CostModel &intra,
                                          const NodeLevels &levels, std::size_t element_bytes);
[[nodiscard]] ScheduleStats schedule_stats(const Schedule &schedule, const CostModel &intra,
                                           const NodeLevels &levels, std::size_t element_bytes);

/// Volume graph of a 1-D transfer: senders are the source processes, receivers the
/// destination processes. One sweep over at most one period of the window: O(W/r + W/s + P +
/// M log M) time for W = min(length, lcm(P r, Q s)) and M messages, no O(P * Q) table
/// (defined in schedule_cyclic.cpp).
[[nodiscard]] VolumeGraph volume_graph(const Transfer1D &t);
/// Volume graph of a 2-D transfer over grid positions: node pr + pc * nprow of each grid.
[[nodiscard]] VolumeGraph volume_graph(const Transfer &t);

/// Builds a schedule from steps of (src, dst) pairs: pairs without data are dropped, steps
/// left empty are kept only when keep_empty_steps is set (the caterpillar's convention).
/// Every message of the graph must appear in exactly one step.
[[nodiscard]] Schedule schedule_from_pairs(const VolumeGraph &graph,
                                           const std::vector<std::vector<Message>> &pair_steps,
                                           bool keep_empty_steps);

/// Sets each piece's offset to the elements of its message sent in earlier steps (pieces
/// of one message are laid end to end in step order).
void assign_offsets(Schedule &schedule);

/// The tensor product of a row schedule and a column schedule of a 2-D transfer (Desprez et
/// al. 1998, Sec. 6): step (a, b) pairs every row piece of row step a with every column piece of
/// column step b; node numbering as volume_graph(const Transfer&). Volumes are taken from
/// `graph` (the 2-D graph), so trapezoids are handled; pairs without data are dropped, and
/// steps left empty too unless keep_empty_steps (the caterpillar's convention). `transposed`
/// (Transfer::transposed()): the row schedule's senders are A's grid columns and the column
/// schedule's A's grid rows (Transfer::dim pairs B's rows with A's columns).
[[nodiscard]] Schedule product_schedule(const VolumeGraph &graph, const Schedule &rows,
                                        const Schedule &cols, int src_nprow, int dst_nprow,
                                        bool keep_empty_steps = false, bool transposed = false);

// --- The strategies (each in its own file; references to the papers there). ---

/// Walker & Otto 1996's unsynchronised exchange: one step holding every message.
[[nodiscard]] Schedule schedule_all_at_once(const VolumeGraph &graph);
/// Prylli & Tourancheau's caterpillar, as in ScaLAPACK: max(senders, receivers) steps, step t
/// pairing sender i with receiver (i + t) mod max; empty steps kept. O(max + messages): each
/// message is placed in its step (q - i) mod max, no pair without data is visited.
[[nodiscard]] Schedule schedule_caterpillar(const VolumeGraph &graph);

} // namespace redist
