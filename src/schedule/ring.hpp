#pragma once
// Load rebalancing on processor rings: Renard, Robert & Vivien 2004, "Data redistribution
// algorithms for heterogeneous processor rings", LIP research report 2004-28 (what the code
// takes from it: docs/references.md). Pure planning, no MPI.
//
// Vocabulary (0-based; the paper counts from 1):
//   P_k        process k of the ring, 0 <= k < n; P_{k+1} and P_{k-1} are taken modulo n.
//   L_k        items P_k holds before (loads[k] >= 1); it holds targets[k] >= 1 after.
//   delta_k    L_k - targets[k], the unbalance (sum 0).
//   link k     joins P_k and P_{k+1}; c_next[k] = c(k -> k+1), c_prev[k+1] = c(k+1 -> k):
//              time to move one item over it. +infinity forbids that direction: a path
//              P_0 ... P_{n-1} is the ring whose wrap link n-1 costs +infinity both ways.
//   flow[k]    R_k, the net number of items crossing link k, > 0 from P_k to P_{k+1}.
//              Conservation fixes all flows from one of them (Lemma 10): R_k = R_{k-1} + delta_k.
// Items are contiguous ranges in ring order: P_k sends its last items to P_{k+1} and its first
// items to P_{k-1}, so the cyclic order of all items along the ring is kept.

#include "layout.hpp"

#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

namespace redist::ring {

enum class Direction { unidirectional, bidirectional };

enum class Algorithm {
  none,              ///< nothing moves (every delta_k = 0)
  homogeneous_uni,   ///< Algorithm 1, optimal (Theorem 1)
  heterogeneous_uni, ///< Algorithm 2, as soon as possible, optimal (Lemma 5, Theorem 2)
  homogeneous_bi,    ///< Algorithm 3, optimal (Lemma 8, Theorem 3)
  light_bi,          ///< System 6 + Proposition 1 rounding, optimal for a light redistribution
  heuristic_bi,      ///< non-light: best flow for the greedy schedule, never worse than System 12
};

[[nodiscard]] const char *algorithm_name(Algorithm a);

struct Problem {
  Direction direction = Direction::bidirectional;
  std::vector<Index> loads;   ///< L_k >= 1
  std::vector<Index> targets; ///< >= 1, same sum as loads
  std::vector<double> c_next; ///< c(k -> k+1) > 0, may be +infinity
  std::vector<double> c_prev; ///< c(k -> k-1) > 0, may be +infinity; unused if unidirectional
};

/// Invalid input: names the argument (e.g. "targets[3]"), its value and the reason. The C API
/// turns it into REDIST_ERR_ARGUMENT with the name of the call.
class InputError : public std::invalid_argument {
public:
  InputError(std::string argument, std::string value, const std::string &reason)
      : std::invalid_argument(reason), argument_(std::move(argument)), value_(std::move(value)) {}
  [[nodiscard]] const std::string &argument() const { return argument_; }
  [[nodiscard]] const std::string &value() const { return value_; }

private:
  std::string argument_;
  std::string value_;
};

/// `items` items move over one link from `from` to its neighbour `to` during
/// [start, finish), one after the other: finish = start + items * cost of the link.
struct Move {
  int from = 0;
  int to = 0;
  Index items = 0;
  double start = 0.0;
  double finish = 0.0;
  bool rightward = true; ///< over link `from` (to = from+1) rather than link `to` (to = from-1)
};

struct Plan {
  Algorithm algorithm = Algorithm::none;
  Direction direction = Direction::bidirectional;
  std::vector<Index> flow; ///< R_k
  std::vector<Move> moves; ///< the schedule, ordered by start time
  double time = 0.0;       ///< latest finish of the schedule (the predicted time)
  /// Lemma 1 (homogeneous uni), Theorem 2 (heterogeneous uni), Lemma 6 (homogeneous bi),
  /// Lemma 12 (heterogeneous bi).
  double lower_bound = 0.0;
  Index steps = 0;   ///< homogeneous algorithms: synchronous steps of length c
  bool light = true; ///< no process sends more items than it holds before
  /// Heterogeneous bidirectional: System 6's rational optimum, and its integer optimum (a
  /// lower bound on every schedule, light or not: each process sends and receives serially).
  double system6_rational = 0.0;
  double system6_integer = 0.0;
  /// Algorithm 3 as printed asked a process to send an item it did not hold yet (the paper does
  /// not model loads); the plan is its net flows with the greedy schedule, or the System 6 flow
  /// search, whichever is faster.
  bool algorithm3_repaired = false;
  Index candidates = 0;        ///< heuristic: flows whose greedy schedule was simulated
  bool search_complete = true; ///< heuristic: the best-first search was not capped
};

/// Throws InputError if `p` is not a valid problem (sizes, loads and targets >= 1 as the paper
/// assumes, equal sums, costs > 0 or +infinity, a feasible flow exists).
void validate(const Problem &p);

/// Plan the redistribution (validates first). Unidirectional: Algorithm 1 if every c_next is the
/// same finite value, else Algorithm 2. Bidirectional: Algorithm 3 if every cost is the same
/// finite value, else System 6 (light) or the heuristic.
[[nodiscard]] Plan plan(const Problem &p);

/// Hard limit of the heuristic's best-first search (flows simulated).
inline constexpr Index heuristic_max_candidates = 256;

// --- Building blocks (exposed for the tests and the study) ------------------------------------

[[nodiscard]] std::vector<Index> unbalances(const Problem &p);
/// Lemma 1: max over slices of |delta_{k,k+l}|, computed as max - min of the prefix sums.
[[nodiscard]] Index lemma1_delta_max(const std::vector<Index> &delta);
/// Theorem 2: max over slices of delta_{k,l} * c(l -> l+1) (positive slices) and
/// -delta_{k,l} * c(k-1 -> k) (negative slices).
[[nodiscard]] double theorem2_bound(const std::vector<Index> &delta,
                                    const std::vector<double> &c_next);
/// Lemma 6: max(max_i |delta_i|, max over non-trivial slices ceil(|delta_{k,l}| / 2)), in steps.
[[nodiscard]] Index lemma6_steps(const std::vector<Index> &delta);
/// Lemma 12 (System 11).
[[nodiscard]] double lemma12_bound(const std::vector<Index> &delta,
                                   const std::vector<double> &c_next,
                                   const std::vector<double> &c_prev);

/// The flows with R_0 = x (Lemma 10).
[[nodiscard]] std::vector<Index> flows_with(Index x, const std::vector<Index> &delta);
/// Algorithm 1/2's amounts: P_{start+l} sends delta_{start,start+l} items to its successor.
[[nodiscard]] std::vector<Index> unidirectional_flows(const std::vector<Index> &delta);

/// System 6 restricted to net flows, as a function of R_0 = x (Lemma 10): the largest time a
/// process spends sending or receiving. Convex piecewise linear; +infinity where a flow uses a
/// forbidden direction.
class System6 {
public:
  explicit System6(const Problem &p);
  [[nodiscard]] double operator()(double x) const;
  [[nodiscard]] double at(Index x) const { return (*this)(static_cast<double>(x)); }
  /// Integer x where the value is finite: [lo, hi] (throws InputError if empty).
  [[nodiscard]] Index feasible_lo() const { return lo_; }
  [[nodiscard]] Index feasible_hi() const { return hi_; }
  /// Integer minimizer (smallest one), by bisection on the forward difference (convexity).
  [[nodiscard]] Index integer_argmin() const;
  /// Rational minimum: returns tau and sets x (exact up to rounding: the crossing of two
  /// linear pieces on a unit interval next to the integer minimizer).
  [[nodiscard]] double rational_min(double &x) const;
  /// Integer interval of light flows (each process sends at most L_k): false if none.
  [[nodiscard]] bool light_interval(Index &lo, Index &hi) const;
  [[nodiscard]] bool is_light(Index x) const;

private:
  [[nodiscard]] double component(std::size_t j, double x) const;
  [[nodiscard]] Index sends(std::size_t i, Index x) const;
  const Problem &p_;
  std::vector<Index> q_; ///< R_k = x + q_[k]
  Index lo_ = 0;
  Index hi_ = 0;
};

/// Which stream gets a port first when two compete (bidirectional rings).
enum class Priority {
  rightward, ///< Lemma 9's order: successors first
  leftward,
  feeders, ///< streams whose receiver forwards items first (then rightward)
};

/// The greedy one-port schedule of net flows `flow`: every item is sent as soon as its sender
/// holds it and both ports are free, competing streams served in `priority` order (Algorithm 2
/// on a unidirectional ring; the schedule of Lemma 9 for a light flow). A process sends its own
/// items first, then forwards what it receives, in arrival order.
[[nodiscard]] std::vector<Move> greedy_schedule(const Problem &p, const std::vector<Index> &flow,
                                                double &time,
                                                Priority priority = Priority::rightward);
/// The fastest of the greedy schedules over the three priorities.
[[nodiscard]] std::vector<Move> best_greedy_schedule(const Problem &p,
                                                     const std::vector<Index> &flow, double &time);

/// Algorithm 3's synchronous schedule with unit cost per step; returns the moves (one item per
/// move, step s = [s-1, s)).
[[nodiscard]] std::vector<Move> algorithm3_schedule(const std::vector<Index> &delta, Index &steps);

/// Targets proportional to `weights` (> 0, finite), each >= 1, summing to `total` >= n; largest
/// remainders, ties to the lower index.
[[nodiscard]] std::vector<Index> targets_from_weights(Index total,
                                                      const std::vector<double> &weights);

/// Where each process's items start after the flows, as a position in the cyclic sequence of
/// all items (P_0's first item before the move is position 0): start_k = a_k - R_{k-1} mod N.
[[nodiscard]] std::vector<Index> final_starts(const std::vector<Index> &loads,
                                              const std::vector<Index> &flow);

/// Direct transfer of the same rebalance (same final ranges, any process to any process): items
/// process p sends to process q, as (p, q, items) with p != q, ordered by (p, q).
/// One piece is a run of consecutive items, contiguous in the sender's input (from index
/// `from_offset`) and in the receiver's output (from `to_offset`). A pair of processes shares at
/// most two pieces (the wrap-around splits one). Pieces with from == to are local copies.
struct DirectPiece {
  int from = 0;
  int to = 0;
  Index from_offset = 0;
  Index to_offset = 0;
  Index items = 0;
};
/// Every piece, ordered by (from, to, from_offset). O(n) per process; `only_rank` >= 0 keeps the
/// pieces that process sends or receives.
[[nodiscard]] std::vector<DirectPiece>
direct_pieces(const std::vector<Index> &loads, const std::vector<Index> &flow, int only_rank = -1);
/// Model time of the direct transfer: a message p -> q costs items * max(out_p, in_q), where
/// out_p / in_q are p's cheapest outgoing / q's cheapest incoming link; with preemption the
/// one-port time is the largest send or receive total of a process (preemptive open shop,
/// Gonzalez & Sahni 1976).
[[nodiscard]] double direct_time(const Problem &p, const std::vector<DirectPiece> &pieces);

} // namespace redist::ring
