#pragma once
// Closed-form schedules for 1-D block-cyclic redistributions: CYCLIC(r) on P processes to
// CYCLIC(s) on Q processes. Each step is a matching (one piece per sender and per receiver);
// the step structure comes from the papers' formulas, not from a matching algorithm:
//   schedule_class_based  Desprez et al. 1998, Sec. 4.3.2 (gcd(r,Q) = gcd(s,P) = 1)
//   schedule_walker_otto  Walker & Otto 1996 (CYCLIC(x) <-> CYCLIC(kx), same P)
//   schedule_circulant    Park, Prasanna & Raghavendra 1999 (x on P <-> kx on Q)
// plus Kaushik et al. 1994/1995's two-phase redistribution through CYCLIC(lcm) or CYCLIC(gcd),
// and closed-form counts and statistics. Pure code, no MPI. Walker & Otto, Park et al. and
// Kaushik et al. are read through the Evers 2025 review (Secs. 4.2.3, 4.2.6, 4.2.1-4.2.2); its
// equation and table numbers are the ones cited below. What each paper contributes, and where
// the printed formulas are wrong, is in docs/references.md.
//
// The closed forms describe the aligned pattern: window index k owned by source process
// (k / r) mod P and destination process (k / s) mod Q. A transfer whose window starts on a block
// boundary on each side (src_start % r == 0, dst_start % s == 0) has that pattern with processes
// relabelled, p = (p_aligned + src.src + src_start / r) mod P (same for q), so every function
// accepts it. A side with a single process is aligned whatever its start, and its block size is
// irrelevant: it is treated as CYCLIC(1). Other starts give std::nullopt.
//
// Complexity: a schedule costs O(steps x max(P, Q)) closed-form evaluations (senders without
// data skipped), each with an O(log) lookup among its sender's messages, plus the volumes from
// volume_graph(Transfer1D) (one sweep of at most one period); nothing is O(P * Q) unless the
// messages are. The *_stats functions give N, T and the predicted time of whole-period transfers in
// O(1) to O(r + s). ClosedFormSchedule evaluates a form without building it: one process's
// partners in O(steps), the step sizes in O(steps) for whole periods, and
// product_closed_form_stats the statistics of a 2-D product from those of its dimensions.

#include "schedule.hpp"

#include <array>
#include <cstddef>
#include <memory>
#include <optional>
#include <utility>
#include <vector>

namespace redist {

/// Steps a redistribution needs (Desprez et al. 1998, Prop. 5 and Thm. 1, with the ceilings
/// reconstructed in docs/references.md), for the full pattern (whole periods, aligned).
struct CyclicCounts {
  Index m_r = 0;           ///< most messages one sender sends (m_R)
  Index m_c = 0;           ///< most messages one receiver receives (m_C)
  Index steps_optimal = 0; ///< fewest matching steps, max(m_R, m_C) (Koenig)
  bool all_to_all = false; ///< every sender sends to every receiver (Lemma 2)
};

/// O(log) closed form for CYCLIC(r) on P to CYCLIC(s) on Q.
/// @pre r, s, P, Q >= 1
[[nodiscard]] CyclicCounts cyclic_counts(Index r, Index s, Index P, Index Q);
/// The same for a transfer's layouts (a single-process side counts as CYCLIC(1)).
[[nodiscard]] CyclicCounts cyclic_counts(const Transfer1D &t);

/// Desprez et al. 1998, Sec. 4.3.2 and Prop. 4: with D = gcd(r, s), r' = r/D, s' = s/D and
/// gcd(r', Q) = gcd(s', P) = 1 (so g = gcd(P r', Q s') = gcd(P, Q)), the pairs of class
/// k = (p r' - q s') mod g are scheduled class after class, each class in max(P,Q)/g steps.
/// Full periods: N = min(g, r'+s'-1) max(P,Q)/g = max(m_R, m_C) and T = D r' s' max(P,Q)/g per
/// period, both optimal. Returns nullopt unless the gcd condition holds on the aligned pattern.
[[nodiscard]] std::optional<Schedule> schedule_class_based(const Transfer1D &t);

/// Walker & Otto 1996 (Evers 2025 review, Sec. 4.2.3, Eqs. 4.16-4.19, Tables 4.7-4.10):
/// CYCLIC(x) to CYCLIC(kx) on the same P processes, or CYCLIC(kx) to CYCLIC(x) (the transpose).
/// k steps; in step n process p sends its block B(n, p) of each superblock of kP blocks. When
/// k > P a process sends several blocks to one receiver, in different steps: the message is
/// split into pieces (offsets laid end to end in step order). Returns nullopt unless P == Q,
/// one block size divides the other and the pattern is aligned.
[[nodiscard]] std::optional<Schedule> schedule_walker_otto(const Transfer1D &t);

/// Park, Prasanna & Raghavendra 1999 (Evers 2025 review, Sec. 4.2.6, Eqs. 4.23-4.24):
/// CYCLIC(x) on P to CYCLIC(kx) on Q with P <= Q, or CYCLIC(kx) on P to CYCLIC(x) on Q with
/// Q <= P (the transpose). With G1 = gcd(P,k), P1 = P/G1, k1 = k/G1, G2 = gcd(P1,Q),
/// Q1 = Q/G2 and n = k1^-1 mod P1, step i sends from j to
///   C(i, j) = (n (j1 - i1) mod P1 + ((j2 - i2) mod Q1) P1) mod Q,
/// i1 = i / Q1, i2 = i % Q1, j1 = j / G1, j2 = j % G1 (the sign of (j2 - i2) is the one that
/// reproduces the review's Table 4.16; the printed formula has (i2 - j2), also valid). Steps
/// i < min(k1, G2) Q1: lcm(P, kQ)/P when G2 > k1 (not all-to-all), else Q with the block rows
/// folded modulo G2 (messages of ceil(k1/G2) or floor(k1/G2) blocks). Every step of a
/// full-period transfer holds messages of one length. Returns nullopt outside these conditions.
[[nodiscard]] std::optional<Schedule> schedule_circulant(const Transfer1D &t);

/// The cheapest (by `model`) of the three closed forms that apply, or nullopt when none does.
[[nodiscard]] std::optional<Schedule>
schedule_closed_form(const Transfer1D &t, const CostModel &model, std::size_t element_bytes);

enum class ClosedFormKind { class_based, walker_otto, circulant };
/// "class", "W&O" or "circulant", for tables.
[[nodiscard]] const char *closed_form_name(ClosedFormKind kind);

/// One step of a matching schedule: its largest piece and its number of pieces.
struct StepSize {
  Index largest = 0;
  Index pieces = 0;
};

/// schedule_stats of a schedule of matching steps with these sizes (steps without pieces
/// skipped), computed the same way, step by step.
[[nodiscard]] ScheduleStats matching_step_stats(const std::vector<StepSize> &steps, Index elements,
                                                const CostModel &model, std::size_t element_bytes);

/// One of the closed forms above, evaluated on demand instead of built: the formula tells each
/// sender its receiver in each step, so nothing of size processes x steps is stored.
/// build() is the schedule the schedule_* function of the same stem returns.
class ClosedFormSchedule {
public:
  /// nullopt unless the form's conditions (documented with its schedule_* function) hold.
  [[nodiscard]] static std::optional<ClosedFormSchedule> make(ClosedFormKind kind,
                                                              const Transfer1D &t);

  [[nodiscard]] ClosedFormKind kind() const;
  /// Steps of the formula. A window that is not whole periods may leave some empty; build()
  /// drops those.
  [[nodiscard]] Index formula_steps() const;
  /// Whether a sender can send to one receiver in several steps (Walker & Otto with k > P).
  [[nodiscard]] bool splits_messages() const;

  [[nodiscard]] Schedule build() const;
  /// The size of each formula step: O(steps) for aligned whole periods, else one sweep of
  /// volume_graph's per sender plus O(senders x steps) formula evaluations, in O(receivers +
  /// steps) memory.
  [[nodiscard]] std::vector<StepSize> step_sizes() const;
  /// schedule_stats(build()), from step_sizes().
  [[nodiscard]] ScheduleStats stats(const CostModel &model, std::size_t element_bytes) const;

  /// For each formula step, the receiver source process `src` sends to (first) and the sender
  /// destination process `dst` receives from (second); -1 when idle or when `src` / `dst` is -1.
  /// Pairs without data may be named on partial windows. One of the two comes from the formula
  /// in O(steps); the other is searched among the candidates, in O(steps x candidates):
  /// `receivers_of_src` must hold every destination process src has data for, `senders_of_dst`
  /// every source process with data for dst.
  [[nodiscard]] std::vector<std::pair<int, int>>
  partners(int src, int dst, const std::vector<int> &receivers_of_src,
           const std::vector<int> &senders_of_dst) const;

private:
  struct Impl;
  std::shared_ptr<const Impl> impl_;
};

/// The closed form schedule_closed_form builds, without building it.
[[nodiscard]] std::optional<ClosedFormSchedule>
best_closed_form(const Transfer1D &t, const CostModel &model, std::size_t element_bytes);

/// Statistics of the product (product_schedule) of the row and the column schedules that
/// schedule_closed_form picks for a 2-D transfer with a full window: N = N_R N_C,
/// T = T_R T_C, largest piece L_R L_C (derivation in schedule_cyclic.cpp). O(steps) for
/// whole periods in both dimensions (see ClosedFormSchedule::step_sizes otherwise); nullopt
/// when a dimension has no closed form or the region is a trapezoid.
[[nodiscard]] std::optional<ScheduleStats>
product_closed_form_stats(const Transfer &t, const CostModel &model, std::size_t element_bytes);

/// Statistics of the schedule the function of the same stem would return, in O(1) to
/// O(r + s) time without building it, for aligned transfers of whole periods (length a multiple
/// of lcm(P r, Q s)); nullopt otherwise. Equal to schedule_stats of the built schedule (up to
/// rounding of `seconds`).
[[nodiscard]] std::optional<ScheduleStats>
class_based_stats(const Transfer1D &t, const CostModel &model, std::size_t element_bytes);
[[nodiscard]] std::optional<ScheduleStats>
walker_otto_stats(const Transfer1D &t, const CostModel &model, std::size_t element_bytes);
[[nodiscard]] std::optional<ScheduleStats>
circulant_stats(const Transfer1D &t, const CostModel &model, std::size_t element_bytes);

/// Kaushik et al. 1994/1995 (Evers 2025 review, Secs. 4.2.1-4.2.2, Eq. 4.12): intermediate
/// layouts for a two-phase redistribution, CYCLIC(lcm(r, s)) and CYCLIC(gcd(r, s)) on the
/// source or the destination processes, keeping those for which both phases are
/// one-divides-the-other pairs that Walker & Otto (same process count) or Park et al. (the
/// smaller block on no more processes) schedule, and that differ from both end layouts. Each
/// has extent t.length, source process 0, and holds the window from index 0. Empty when r
/// divides s (or s divides r) on equal process counts: one phase is already a closed form.
[[nodiscard]] std::vector<BlockCyclic> multiphase_intermediates(const Transfer1D &t);

/// The two phases through `mid`: t.src -> mid (window at 0) and mid -> t.dst.
[[nodiscard]] std::array<Transfer1D, 2> multiphase_phases(const Transfer1D &t,
                                                          const BlockCyclic &mid);

/// Predicted seconds of the two phases through `mid`, each scheduled by the cheapest closed form
/// that applies (else the caterpillar), to compare with a single-phase schedule.
[[nodiscard]] double multiphase_cost(const Transfer1D &t, const BlockCyclic &mid,
                                     const CostModel &model, std::size_t element_bytes);

} // namespace redist
