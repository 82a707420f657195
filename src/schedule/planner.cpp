#include "planner.hpp"
#include "planner_internal.hpp"
#include "schedule_cyclic.hpp"

#include <algorithm>
#include <array>
#include <limits>
#include <memory>
#include <string>
#include <utility>
#include <vector>

namespace redist {

using namespace planning;

namespace {

// The one-phase part of the decision: `options.strategy` itself, or for `automatic` the
// cheapest one-phase strategy by the model. `options.strategy` is not multiphase.
std::string choose_one_phase(const Transfer &t, const RankPlan &plan,
                             const ScheduleOptions &options, const ScheduleInputs &inputs,
                             std::size_t element_bytes, ScheduleChoice &choice) {
  Index chunk = 0;
  static_cast<void>(check_options(options, element_bytes, chunk));
  return choose_one_phase(
      options, inputs, element_bytes,
      [&](const ScheduleOptions &o, ScheduleChoice &c) {
        return build_one_phase(t, plan, o, inputs, element_bytes, chunk, c);
      },
      choice);
}

// The two phases to try: through an intermediate layout on the source grid and on the
// destination grid, every combination of dimension choices with at least one intermediate.
// On the source grid the intermediate has A's shape (a transposed transfer's first phase
// copies, its second transposes), on the destination grid B's (the first phase transposes,
// the second copies). A transposed trapezoid's region is stated on B's window: its
// intermediate lies on the destination grid only.
std::vector<std::array<Transfer, 2>> two_phase_candidates(const Transfer &t) {
  std::vector<std::array<Transfer, 2>> out;
  for (const bool source : {true, false}) {
    if (source && t.transposed() && t.region.kind != Region::Kind::full) {
      continue;
    }
    const Layout &end = source ? t.src : t.dst;
    // Along the end's axis a: B's dimension d holding it, and d's 1-D transfer.
    const auto choices = [&](int a) {
      const int d = source && t.transposed() ? 1 - a : a;
      const Transfer1D along = t.dim(d);
      return mid_dimensions(along.length, end.dim(a), end.start(a),
                            multiphase_intermediates(along));
    };
    const std::vector<MidDimension> rows = choices(0);
    const std::vector<MidDimension> cols = choices(1);
    for (const MidDimension &r : rows) {
      for (const MidDimension &c : cols) {
        if (!r.intermediate && !c.intermediate) {
          continue;
        }
        const Layout mid{r.layout, c.layout, end.grid, 0, 0};
        if (source) {
          out.push_back({Transfer{t.src, mid, r.layout.extent, c.layout.extent, t.region},
                         Transfer{mid, t.dst, t.m, t.n, t.region, t.perm}});
        } else {
          out.push_back({Transfer{t.src, mid, t.m, t.n, t.region, t.perm},
                         Transfer{mid, t.dst, t.m, t.n, t.region}});
        }
      }
    }
  }
  return out;
}

// Bytes of the largest intermediate array of `mid` over its grid.
Index mid_bytes_max(const Layout &mid, std::size_t element_bytes) {
  Index rows = 0;
  Index cols = 0;
  for (int p = 0; p < mid.grid.nprow; ++p)
    rows = std::max(rows, mid.rows.local_extent(p));
  for (int p = 0; p < mid.grid.npcol; ++p)
    cols = std::max(cols, mid.cols.local_extent(p));
  return rows * cols * static_cast<Index>(element_bytes);
}

// The two-phase part of the decision: Kaushik et al.'s two phases through the intermediate
// layout the model finds cheapest, each phase chosen as `automatic` would under the options'
// limits (the intermediate array counted against max_memory). False when no intermediate
// layout applies or fits, or none is predicted faster than `bound` seconds (a candidate is
// dropped as soon as its first phase alone reaches the bound or the best candidate's time).
bool choose_two_phase(const Transfer &t, const RankPlan &plan, const ScheduleOptions &options,
                      std::size_t element_bytes, ScheduleChoice &choice, double bound) {
  const int comm_size = std::max(comm_size_of(t), plan.rank + 1);
  std::shared_ptr<TwoPhase> best;
  const auto seconds = [](const TwoPhase &p) {
    return p.choices[0].stats.seconds + p.choices[1].stats.seconds;
  };
  for (const std::array<Transfer, 2> &phases : two_phase_candidates(t)) {
    const Layout &mid = phases[0].dst;
    ScheduleOptions phase_options;
    if (!two_phase_options(options, mid_bytes_max(mid, element_bytes), element_bytes,
                           phase_options)) {
      continue;
    }
    auto two = std::make_shared<TwoPhase>();
    two->mid = mid;
    two->transfers = phases;
    const double to_beat = best ? std::min(bound, seconds(*best)) : bound;
    bool feasible = true;
    for (std::size_t phase = 0; phase < 2 && feasible; ++phase) {
      const Transfer &pt = two->transfers[phase];
      two->plans[phase] = make_rank_plan(pt, plan.rank, comm_size);
      feasible = choose_one_phase(pt, two->plans[phase], phase_options,
                                  all_at_once_estimate(pt, options.model, element_bytes),
                                  element_bytes, two->choices[phase])
                     .empty() &&
                 two->choices[phase].stats.seconds < to_beat;
    }
    if (feasible && seconds(*two) < to_beat) {
      two->phase_options = phase_options;
      two->phase_options.node_of_rank = {}; // O(ranks): not kept by an executing plan
      best = std::move(two);
    }
  }
  if (!best) {
    return false;
  }
  int pr = -1;
  int pc = -1;
  if (best->mid.grid.find(plan.rank, pr, pc)) {
    best->mid_lld = std::max<Index>(1, best->mid.rows.local_extent(pr));
    best->mid_elements = best->mid_lld * best->mid.cols.local_extent(pc);
  }
  choice = ScheduleChoice{};
  choice.strategy = Strategy::multiphase;
  const auto side = [&](const Layout &mid) {
    return mid.grid.ranks == t.src.grid.ranks && mid.grid.nprow == t.src.grid.nprow ? "source"
                                                                                    : "destination";
  };
  const auto dimension = [](const BlockCyclic &d) {
    return "CYCLIC(" + std::to_string(d.block) + ")";
  };
  choice.detail = "two phases through " + dimension(best->mid.rows) + " x " +
                  dimension(best->mid.cols) + " on the " + side(best->mid) +
                  " grid: " + std::string(strategy_name(best->choices[0].strategy)) + " then " +
                  std::string(strategy_name(best->choices[1].strategy));
  choice.stats = two_phase_stats(best->choices);
  choice.phases = std::move(best);
  return true;
}

// The choice every rank makes for `t` (choose_schedule's, for rank 0), from the maxima over
// all ranks of the transfer: how the offline callers get the decision.
std::string whole_transfer_choice(const Transfer &t, const ScheduleOptions &options,
                                  std::size_t element_bytes, ScheduleChoice &choice) {
  const int comm_size = comm_size_of(t);
  ScheduleInputs inputs;
  for (int r = 0; r < comm_size; ++r) {
    const ScheduleInputs local =
        all_at_once_local(make_rank_plan(t, r, comm_size), options.model, element_bytes);
    inputs.all_at_once_buffer_max =
        std::max(inputs.all_at_once_buffer_max, local.all_at_once_buffer_max);
    inputs.all_at_once_seconds = std::max(inputs.all_at_once_seconds, local.all_at_once_seconds);
  }
  return choose_schedule(t, make_rank_plan(t, 0, comm_size), options, inputs, element_bytes,
                         choice);
}

// The whole schedule of `chosen`, the one-phase strategy choose_schedule chose for a transfer
// planned under `options`; the detail says how it was built and whether it was chosen for
// `automatic` or `multiphase`.
std::string chosen_schedule(const Transfer &t, const ScheduleOptions &options, Strategy chosen,
                            std::size_t element_bytes, Schedule &out, std::string &detail) {
  ScheduleOptions resolved = options;
  resolved.strategy = chosen;
  std::string how;
  if (std::string why = build_schedule(t, resolved, element_bytes, out, how); !why.empty()) {
    return why;
  }
  if (options.strategy == Strategy::multiphase) {
    detail = std::string(kNoIntermediateLayout) + ", one phase: " + how;
  } else if (options.strategy == Strategy::automatic && chosen != Strategy::all_at_once) {
    detail = "auto: " + how;
  } else {
    detail = how;
  }
  return {};
}

} // namespace

std::string choose_one_phase(const ScheduleOptions &options, const ScheduleInputs &inputs,
                             std::size_t element_bytes, const OnePhaseBuilder &build,
                             ScheduleChoice &choice) {
  choice = ScheduleChoice{};
  Index chunk = 0;
  if (std::string why = check_options(options, element_bytes, chunk); !why.empty()) {
    return why;
  }
  if (options.strategy != Strategy::automatic) {
    return build(options, choice);
  }
  ScheduleOptions explicit_options = options;
  // On the linear model without contention no step schedule beats posting everything at
  // once (a step costs its largest message); steps pay off when limits are set. Then the
  // cheapest step schedule by the model wins.
  const bool all_at_once_fits =
      options.max_memory == 0 || inputs.all_at_once_buffer_max <= options.max_memory;
  if (options.max_concurrent == 0 && all_at_once_fits) {
    explicit_options.strategy = Strategy::all_at_once;
    return build(explicit_options, choice);
  }
  std::vector<Strategy> candidates = {Strategy::stepwise, Strategy::greedy};
  if (options.max_concurrent > 0) {
    candidates.push_back(Strategy::oggp);
    candidates.push_back(Strategy::ggp);
  }
  bool found = false;
  for (const Strategy candidate : candidates) {
    explicit_options.strategy = candidate;
    ScheduleChoice trial;
    if (build(explicit_options, trial).empty() &&
        (!found || trial.stats.seconds < choice.stats.seconds)) {
      choice = std::move(trial);
      found = true;
    }
  }
  if (!found) {
    return "no schedule honours the limits";
  }
  choice.detail = "auto: " + choice.detail;
  return {};
}

std::vector<MidDimension> mid_dimensions(Index length, const BlockCyclic &own, Index own_start,
                                         std::span<const BlockCyclic> intermediates) {
  std::vector<MidDimension> out;
  const auto first_owner =
      static_cast<int>((own_start / own.block + own.src) % static_cast<Index>(own.nprocs));
  out.push_back({BlockCyclic{length, own.block, own.nprocs, first_owner}, false});
  if (own.nprocs > 1) {
    for (const BlockCyclic &mid : intermediates) {
      if (mid.nprocs == own.nprocs) {
        out.push_back({mid, true});
      }
    }
  }
  return out;
}

bool two_phase_options(const ScheduleOptions &options, Index mid_bytes, std::size_t element_bytes,
                       ScheduleOptions &phase_options) {
  phase_options = options;
  phase_options.strategy = Strategy::automatic;
  if (options.max_memory > 0) {
    phase_options.max_memory = (options.max_memory - mid_bytes) / 2;
    return phase_options.max_memory >= static_cast<Index>(2 * element_bytes);
  }
  return true;
}

std::string choose_phases(const ScheduleOptions &options, std::size_t element_bytes,
                          const OnePhaseBuilder &one, const TwoPhaseBuilder &two,
                          const std::function<double(const ScheduleChoice &)> &one_phase_seconds,
                          const std::string &why_one_phase, ScheduleChoice &choice) {
  if (options.strategy == Strategy::multiphase) {
    Index chunk = 0;
    if (std::string why = check_options(options, element_bytes, chunk); !why.empty()) {
      return why;
    }
    if (two(std::numeric_limits<double>::infinity(), choice)) {
      return {};
    }
    ScheduleOptions automatic = options;
    automatic.strategy = Strategy::automatic;
    std::string why = one(automatic, choice);
    choice.detail = why_one_phase + ", one phase: " + choice.detail;
    return why;
  }
  if (std::string why = one(options, choice);
      !why.empty() || options.strategy != Strategy::automatic) {
    return why;
  }
  const double bound = one_phase_seconds(choice);
  if (ScheduleChoice faster; bound > two_phase_floor(options) && two(bound, faster)) {
    choice = std::move(faster);
    choice.detail = "auto: " + choice.detail;
  }
  return {};
}

namespace {

bool uniform_column_major(const Layout &l) {
  return !l.row_major && l.rows.uniform() && l.cols.uniform();
}

// Owners no uniform block-cyclic transfer has (a first block larger than the block size inside
// the window, along a dimension of several processes): every message at once, the one schedule
// that needs only the rank plans.
std::string choose_all_at_once_only(const RankPlan &plan, const ScheduleOptions &options,
                                    const ScheduleInputs &inputs, std::size_t element_bytes,
                                    ScheduleChoice &choice) {
  choice = ScheduleChoice{};
  Index chunk = 0;
  if (std::string why = check_options(options, element_bytes, chunk); !why.empty()) return why;
  const Strategy s = options.strategy;
  if (s != Strategy::automatic && s != Strategy::multiphase && s != Strategy::all_at_once) {
    return std::string(strategy_name(s)) +
           " needs block-cyclic owners, and a first block larger than the block size lies in "
           "the window: only all-at-once applies";
  }
  choice.strategy = Strategy::all_at_once;
  return all_at_once_choice(options, inputs, plan.m * plan.n, inputs.all_at_once_seconds, choice);
}

} // namespace

std::string choose_schedule(const Transfer &t, const RankPlan &plan, const ScheduleOptions &options,
                            const ScheduleInputs &inputs, std::size_t element_bytes,
                            ScheduleChoice &choice) {
  // The schedules are computed from block sizes and source processes: first blocks and
  // row-major arrays are scheduled as the uniform column-major transfer with the same peers and
  // message sizes (plan.hpp's uniform_owners).
  // Two phases move through an intermediate array laid out from t's own layouts.
  const bool phases_apply = uniform_column_major(t.src) && uniform_column_major(t.dst);
  Transfer uniform;
  if (phases_apply) {
    uniform = t;
  } else if (!uniform_owners(t, uniform)) {
    return choose_all_at_once_only(plan, options, inputs, element_bytes, choice);
  }
  return choose_phases(
      options, element_bytes,
      [&](const ScheduleOptions &o, ScheduleChoice &c) {
        return choose_one_phase(uniform, plan, o, inputs, element_bytes, c);
      },
      [&](double bound, ScheduleChoice &c) {
        return phases_apply && choose_two_phase(uniform, plan, options, element_bytes, c, bound);
      },
      // All-at-once is compared on the estimate the phases are costed with.
      [&](const ScheduleChoice &one) {
        return one.strategy == Strategy::all_at_once && !node_levels(uniform, options)
                   ? all_at_once_estimate(uniform, options.model, element_bytes).all_at_once_seconds
                   : one.stats.seconds;
      },
      phases_apply ? kNoIntermediateLayout : kFirstBlocksOrRowMajor, choice);
}

std::string global_schedule(const Transfer &t, const ScheduleOptions &options,
                            std::size_t element_bytes, Schedule &out, std::string &detail) {
  Index chunk = 0;
  if (std::string why = check_options(options, element_bytes, chunk); !why.empty()) {
    return why;
  }
  Strategy chosen = options.strategy;
  if (options.strategy == Strategy::automatic || options.strategy == Strategy::multiphase) {
    ScheduleChoice choice;
    if (std::string why = whole_transfer_choice(t, options, element_bytes, choice); !why.empty()) {
      return why;
    }
    if (choice.phases) {
      return "the plan runs in two phases (" + choice.detail + "); each phase has its own schedule";
    }
    chosen = choice.strategy;
  }
  return chosen_schedule(t, options, chosen, element_bytes, out, detail);
}

std::string global_phases(const Transfer &t, const ScheduleOptions &options,
                          std::size_t element_bytes, std::vector<GlobalPhase> &phases,
                          std::string &detail) {
  phases.clear();
  ScheduleChoice choice;
  if (std::string why = whole_transfer_choice(t, options, element_bytes, choice); !why.empty()) {
    return why;
  }
  if (!choice.phases) {
    GlobalPhase one{t, {}, {}};
    std::string why =
        chosen_schedule(t, options, choice.strategy, element_bytes, one.schedule, one.detail);
    detail = one.detail;
    phases.push_back(std::move(one));
    return why;
  }
  detail = choice.detail;
  for (std::size_t i = 0; i < 2; ++i) {
    // Each phase as if its strategy had been asked for: the detail names no `auto`.
    ScheduleOptions phase_options = choice.phases->phase_options;
    phase_options.strategy = choice.phases->choices[i].strategy;
    phase_options.node_of_rank = options.node_of_rank;
    GlobalPhase phase{choice.phases->transfers[i], {}, {}};
    if (std::string why = chosen_schedule(phase.transfer, phase_options, phase_options.strategy,
                                          element_bytes, phase.schedule, phase.detail);
        !why.empty()) {
      return why;
    }
    phases.push_back(std::move(phase));
  }
  return {};
}

} // namespace redist
