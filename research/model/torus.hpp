#pragma once
// Link-load model of a d-dimensional k-torus: Azizoğlu & Eğecioğlu 1998, "Lower Bounds on
// Communication Loads and Optimal Placements in Torus Networks" (what the code takes from it,
// and the corrected Theorem 3: docs/references.md). Ranks sit on torus nodes, messages follow
// shortest (Lee-distance) paths chosen by ordered or unordered dimensional routing, and every
// directed link accumulates the bytes (expected bytes, for a message spread over several
// paths) that cross it. Pure, no MPI.
//
// Vocabulary (0-based; the paper counts dimensions from 1):
//   node      a point (p_0, ..., p_{d-1}) of Z_k^d, numbered sum_i p_i k^i.
//   link      the directed link leaving a node in one dimension, direction +1 (p_i -> p_i + 1 mod
//             k) or -1. For k >= 3 a node has 2d out-links, 2d k^d links in all. For k = 2 the
//             +1 and -1 neighbours coincide and, as in the paper's Definition 1 (the links are a
//             set of node pairs), there is ONE link each way: d 2^d links, the hypercube. A
//             machine with two cables per size-2 dimension is modelled by doubling the link
//             bandwidth. Routing never uses the -1 direction when k = 2 (the tie rule below).
//   direction of a dimension: the shortest way round, +1 when (q_i - p_i) mod k < k/2, -1 when
//             it is > k/2, and +1 at the tie k/2 (the paper's canonical ODR, Sec. 6). Both
//             routings use this rule for every dimension.
//   ODR       ordered dimensional routing: dimensions corrected in the order 0, 1, ..., d-1.
//   UDR       unordered dimensional routing: the s dimensions in which the endpoints differ are
//             corrected in each of the s! orders with probability 1/s! (Sec. 7); a message puts
//             1/s! of its bytes on each order's path.
//
// Costs, for M messages of Lee distance at most L, s <= d differing dimensions:
//   route (ODR)       O(links + M L) time, O(links) memory: one pass along each message's path.
//   route (UDR)       O(links + M 2^(s-1) L): the segment in dimension j depends only on WHICH
//                     of the other s-1 dimensions come before j, not on their order, so 2^(s-1)
//                     subsets per dimension with weight t! (s-1-t)! / s! (t = subset size)
//                     replace the s! orders (docs/references.md, Azizoğlu & Eğecioğlu 1998).
//   load_bounds       O(d M log M + d k (M + k)) time, O(k + M) memory.
// Loads are kept per link (dense, 2d k^d doubles); no rank-by-rank table is ever built.

#include "schedule.hpp"

#include <cstddef>
#include <string>
#include <vector>

namespace redist::torus {

/// Which node holds rank r.
enum class Placement {
  /// Rank r on node r: its base-k digits, least significant first, are (p_0, ..., p_{d-1}).
  /// Needs ranks <= k^d.
  rank_order,
  /// Azizoğlu & Eğecioğlu's linear placement (Sec. 5, Definition 10): the nodes with
  /// sum_i c_i p_i = c (mod k), k^(d-1) of them. The base-k digits of rank r (least
  /// significant first) give (p_0, ..., p_{d-2}) and p_{d-1} = (c - sum_{i<d-1} c_i p_i) *
  /// c_{d-1}^(-1) mod k. Needs ranks <= k^(d-1), c_0 and c_{d-1} coprime to k.
  linear,
};

enum class Routing { ordered, unordered };

struct Spec {
  int k = 0; ///< nodes per dimension, >= 2
  int d = 0; ///< dimensions, >= 1
  Placement placement = Placement::rank_order;
  /// linear: c_0 .. c_{d-1} (the paper's c_1 .. c_d), each in [0, k); empty = all 1
  std::vector<int> coefficients;
  int constant = 0; ///< linear: c in [0, k)
};

/// "rank-order" or "linear"; "odr" or "udr".
[[nodiscard]] const char *placement_name(Placement p);
[[nodiscard]] const char *routing_name(Routing r);

/// One directed link: leaves `node` in dimension `dim` towards p_dim + direction (mod k).
struct Link {
  Index node = 0;
  int dim = 0;
  int direction = 1;
};

/// A torus with `ranks` ranks placed on it. Immutable after construction.
class Torus {
public:
  /// @throws std::invalid_argument, the message naming the field, its value and the reason
  ///   ("k = 1: must be >= 2", "coefficients[0] (c_1) = 2: not coprime to k = 4 ...", "ranks =
  ///   10: more than the 9 nodes of the torus", ...) when the spec is invalid, the ranks do not
  ///   fit, or the torus has more than 2^28 directed links (the loads are stored per link).
  Torus(const Spec &spec, int ranks);

  [[nodiscard]] const Spec &spec() const { return spec_; }
  [[nodiscard]] int k() const { return spec_.k; }
  [[nodiscard]] int d() const { return spec_.d; }
  [[nodiscard]] int ranks() const { return static_cast<int>(rank_nodes_.size()); }
  [[nodiscard]] Index nodes() const { return nodes_; }
  /// Directed links: 2d k^d, or d 2^d when k = 2.
  [[nodiscard]] Index links() const { return nodes_ * d() * directions(); }
  /// Out-links (= in-links) of a node: 2d, or d when k = 2.
  [[nodiscard]] int degree() const { return d() * directions(); }

  [[nodiscard]] Index node_of_rank(int rank) const;
  [[nodiscard]] std::vector<int> coordinates(Index node) const;
  [[nodiscard]] Index node_at(const std::vector<int> &coordinates) const;
  /// Link id in [0, links()). For k = 2, direction -1 names the same link as +1.
  [[nodiscard]] Index link_id(Index node, int dim, int direction) const;
  [[nodiscard]] Link link(Index id) const;
  /// Lee distance: the sum over dimensions of the cyclic distances.
  [[nodiscard]] int distance(Index a, Index b) const;

  /// k^dim: the difference of node numbers between neighbours in dimension dim.
  [[nodiscard]] Index stride(int dim) const { return strides_[static_cast<std::size_t>(dim)]; }

private:
  [[nodiscard]] int directions() const { return k() == 2 ? 1 : 2; }

  Spec spec_;
  Index nodes_ = 0;
  std::vector<Index> strides_; ///< k^i
  std::vector<Index> rank_nodes_;
};

/// Bytes on every directed link.
struct LinkLoads {
  std::vector<double> bytes; ///< indexed by Torus::link_id
  double max = 0.0;          ///< the largest entry (E_max in bytes)
  Index busiest = -1;        ///< a link carrying `max`; -1 when nothing moves
};

/// Route `traffic` (m.volume elements of element_bytes bytes from rank m.src to rank m.dst; any
/// order, duplicates add up). A message between ranks on one node uses no link.
/// @throws std::invalid_argument for a rank outside [0, ranks()) or a negative volume.
[[nodiscard]] LinkLoads route(const Torus &torus, const std::vector<Message> &traffic,
                              std::size_t element_bytes, Routing routing);

/// Lower bounds on the largest link load (bytes) of `traffic` under ANY routing on shortest
/// paths (the node and slab bounds hold for any routing at all).
struct LoadBounds {
  /// sum of bytes x Lee distance / links(): the links carry at least that much in all.
  double distance = 0.0;
  /// Bound (1) generalised (Lemma 1 with S = one node): max over nodes of the bytes it sends
  /// (receives) over its degree() out-links (in-links). (|P| - 1)/(2d) for a complete exchange
  /// of unit messages.
  double node = 0.0;
  Index node_at = -1; ///< the node giving `node`; -1 when nothing moves
  /// Lemma 1 on slabs S = {p : p_dim in [start, start + width) mod k}, 1 <= width <= k/2 (the
  /// complement slabs are covered by swapping directions): max(bytes leaving S, bytes entering
  /// S) / (|dS| / 2), |dS| / 2 = 2 k^(d-1) links each way (k^(d-1) when k = 2). For a complete
  /// exchange this is Lemma 1's 2|S|(|P| - |S|)/|dS|; in general it is at least Lemma 1's
  /// (bytes crossing both ways) / |dS|.
  double slab = 0.0;
  int slab_dim = -1; ///< the slab giving `slab`; -1 when nothing moves
  int slab_start = 0;
  int slab_width = 0;

  [[nodiscard]] double best() const;
};

/// The three bounds of `traffic`, as for route().
[[nodiscard]] LoadBounds load_bounds(const Torus &torus, const std::vector<Message> &traffic,
                                     std::size_t element_bytes);

/// The traffic of one step of a schedule over grid positions: piece (src, dst) becomes a
/// message from rank src_ranks[src] to rank dst_ranks[dst]; pieces within one rank are dropped
/// (local copies).
/// @throws std::invalid_argument for a piece naming no position of src_ranks / dst_ranks.
[[nodiscard]] std::vector<Message> step_traffic(const Step &step, const std::vector<int> &src_ranks,
                                                const std::vector<int> &dst_ranks);

/// Link loads of a schedule, step by step (each step's traffic is its pieces, routed alone) and
/// in total (the loads of all steps added link by link).
struct ScheduleLoads {
  std::vector<double> step_max;        ///< largest link load of each step, bytes
  std::vector<LoadBounds> step_bounds; ///< bounds of each step's traffic
  double sum_step_max = 0.0;           ///< sum of step_max
  double sum_step_bounds = 0.0;        ///< sum of step_bounds[s].best(), <= sum_step_max
  LinkLoads total;                     ///< per link, summed over the steps
  LoadBounds total_bounds;             ///< bounds of all steps' traffic together, <= total.max
};

/// Ranks as step_traffic. Costs route() and load_bounds() of each step's traffic, load_bounds()
/// of all of it, and O(links) once: a step's loaded links are tracked, not rescanned.
/// @throws std::invalid_argument as step_traffic and route().
[[nodiscard]] ScheduleLoads schedule_loads(const Torus &torus, const Schedule &schedule,
                                           const std::vector<int> &src_ranks,
                                           const std::vector<int> &dst_ranks,
                                           std::size_t element_bytes, Routing routing);

/// Predicted time of `schedule` on the torus, one entry per step. A step takes the longer of
/// its node-port time in the crossbar model (step_port_time: alpha per piece plus beta per
/// byte at the busiest node) and its largest link load over the link bandwidth, plus
/// model.step_setup:
///   t_s = max(port_s, step_max_s / link_bandwidth) + step_setup;  total = sum_s t_s.
/// All-at-once is one step. Steps are assumed separated (no traffic of two steps shares a link
/// at the same time); within a step every link's bytes are assumed to flow at full bandwidth.
/// @param link_bandwidth bytes per second of one directed link, > 0 (may be infinite).
/// @throws std::invalid_argument when link_bandwidth is not > 0 or the loads have another
///   number of steps than the schedule.
[[nodiscard]] std::vector<double> step_seconds(const Schedule &schedule, const ScheduleLoads &loads,
                                               const CostModel &model, std::size_t element_bytes,
                                               double link_bandwidth);

} // namespace redist::torus
