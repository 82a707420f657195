// The ring planner of Renard, Robert & Vivien 2004: the model's assumptions checked (Sec. 2),
// then Algorithm 1 or 2 on a unidirectional ring (Secs. 3-4), Algorithm 3 on a homogeneous
// bidirectional one (Sec. 5), else System 6's light flow or the search over flows around its
// optimum (Sec. 6). Pure, no MPI.

#include "ring.hpp"
#include "ring_arithmetic.hpp"

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <limits>
#include <utility>
#include <vector>

namespace redist::ring {
namespace {

bool all_equal_finite(const std::vector<double> &a, const std::vector<double> &b, double &c) {
  c = a.empty() ? 1.0 : a.front();
  const auto same = [&](double v) { return v == c; };
  return std::isfinite(c) && std::all_of(a.begin(), a.end(), same) &&
         std::all_of(b.begin(), b.end(), same);
}

std::vector<Index> net_flows(std::size_t n, const std::vector<Move> &moves) {
  std::vector<Index> flow(n, 0);
  for (const Move &m : moves)
    flow[static_cast<std::size_t>(m.rightward ? m.from : m.to)] += m.rightward ? m.items : -m.items;
  return flow;
}

/// Whether every process holds each item it sends when the send starts (an item received at t
/// may leave at t).
bool holds_every_item(const Problem &p, const std::vector<Move> &moves) {
  struct Event {
    double t;
    int arrival; // 1 before 0 at equal times
    std::size_t proc;
  };
  std::vector<Event> events;
  for (const Move &m : moves) {
    const double c = (m.finish - m.start) / static_cast<double>(m.items);
    for (Index j = 0; j < m.items; ++j) {
      events.push_back({m.start + static_cast<double>(j) * c, 0, static_cast<std::size_t>(m.from)});
      events.push_back(
          {m.start + static_cast<double>(j + 1) * c, 1, static_cast<std::size_t>(m.to)});
    }
  }
  std::sort(events.begin(), events.end(), [](const Event &a, const Event &b) {
    return a.t < b.t || (a.t == b.t && a.arrival > b.arrival);
  });
  std::vector<Index> load = p.loads;
  for (const Event &e : events) {
    load[e.proc] += e.arrival ? 1 : -1;
    if (load[e.proc] < 0) return false;
  }
  return true;
}

/// Bidirectional flows by System 6. Light optimum (Proposition 1's rounding x): optimal, with
/// Lemma 9's schedule. Otherwise every schedule with flow x takes at least s6(x) (each process
/// sends and receives serially), and the greedy schedule of a light flow takes exactly s6(x)
/// (Lemma 9). Walk the integers outward from the minimizer in increasing s6 order (convexity)
/// and stop once s6 reaches the best simulated time: the result is the best flow for the greedy
/// schedule, never worse than System 12's light optimum, which is tried first.
Plan search_flows(const Problem &p, const System6 &s6, Index x, const std::vector<Index> &delta) {
  Plan out;
  if (s6.is_light(x)) {
    out.algorithm = Algorithm::light_bi;
    out.flow = flows_with(x, delta);
    out.moves = greedy_schedule(p, out.flow, out.time);
    out.candidates = 1;
    return out;
  }
  double best = inf;
  Index best_x = x;
  const auto evaluate = [&](Index cand) {
    double t = 0.0;
    std::vector<Move> moves = best_greedy_schedule(p, flows_with(cand, delta), t);
    ++out.candidates;
    if (t < best) {
      best = t;
      best_x = cand;
      out.moves = std::move(moves);
    }
  };
  Index lo12 = 0;
  Index hi12 = 0;
  if (s6.light_interval(lo12, hi12)) evaluate(std::clamp(x, lo12, hi12)); // System 12
  evaluate(x);
  Index l = x - 1;
  Index r = x + 1;
  out.search_complete = false;
  while (out.candidates < heuristic_max_candidates) {
    const double fl = s6.at(l);
    const double fr = s6.at(r);
    if (!(std::min(fl, fr) < best)) {
      out.search_complete = true;
      break;
    }
    if (fl <= fr) {
      evaluate(l--);
    } else {
      evaluate(r++);
    }
  }
  out.flow = flows_with(best_x, delta);
  out.time = best;
  out.light = s6.is_light(best_x);
  out.algorithm = out.light && best == s6.at(best_x) && best == s6.at(x) ? Algorithm::light_bi
                                                                         : Algorithm::heuristic_bi;
  return out;
}

} // namespace

const char *algorithm_name(Algorithm a) {
  switch (a) {
  case Algorithm::none:
    return "none";
  case Algorithm::homogeneous_uni:
    return "algorithm-1";
  case Algorithm::heterogeneous_uni:
    return "algorithm-2";
  case Algorithm::homogeneous_bi:
    return "algorithm-3";
  case Algorithm::light_bi:
    return "system-6";
  case Algorithm::heuristic_bi:
    return "heuristic";
  }
  return "?";
}

void validate(const Problem &p) {
  const std::size_t n = p.loads.size();
  if (n == 0) throw InputError("n", "0", "the ring needs at least one process");
  if (n > static_cast<std::size_t>(std::numeric_limits<int>::max()))
    throw InputError("n", std::to_string(n), "too many processes");
  if (p.targets.size() != n)
    throw InputError("targets", std::to_string(p.targets.size()), "one target per process");
  if (p.c_next.size() != n)
    throw InputError("c_next", std::to_string(p.c_next.size()), "one cost per process");
  const bool bi = p.direction == Direction::bidirectional;
  if (bi && p.c_prev.size() != n)
    throw InputError("c_prev", std::to_string(p.c_prev.size()), "one cost per process");
  constexpr Index limit = Index{1} << 52;
  Index sum_loads = 0;
  Index sum_targets = 0;
  for (std::size_t k = 0; k < n; ++k) {
    if (p.loads[k] < 1)
      throw InputError(indexed("loads", k), std::to_string(p.loads[k]),
                       "every process must hold at least one item before the redistribution "
                       "(Renard, Robert & Vivien assume L_k >= 1); leave empty processes out of "
                       "the ring");
    if (p.targets[k] < 1)
      throw InputError(indexed("targets", k), std::to_string(p.targets[k]),
                       "every process must keep at least one item after the redistribution "
                       "(the paper assumes L_k - delta_k >= 1); leave empty processes out of the "
                       "ring");
    if (p.loads[k] > limit - sum_loads || p.targets[k] > limit - sum_targets)
      throw InputError(indexed("loads", k), std::to_string(p.loads[k]), "total items above 2^52");
    sum_loads += p.loads[k];
    sum_targets += p.targets[k];
  }
  if (sum_loads != sum_targets)
    throw InputError("targets", std::to_string(sum_targets),
                     "targets must add up to the items held, " + std::to_string(sum_loads));
  const auto check_costs = [&](const std::vector<double> &c, const char *name) {
    for (std::size_t k = 0; k < n; ++k) {
      if (!(c[k] > 0.0)) // NaN fails too
        throw InputError(indexed(name, k), show(c[k]),
                         "link cost must be > 0 (+infinity forbids the link)");
    }
  };
  check_costs(p.c_next, "c_next");
  if (bi) check_costs(p.c_prev, "c_prev");
  const std::vector<Index> delta = unbalances(p);
  if (!bi) {
    const std::vector<Index> flow = unidirectional_flows(delta);
    for (std::size_t k = 0; k < n; ++k) {
      if (flow[k] > 0 && std::isinf(p.c_next[k]))
        throw InputError(indexed("c_next", k), "inf",
                         "a unidirectional redistribution must move " + std::to_string(flow[k]) +
                             " items over this link (P" + std::to_string(k) + " -> P" +
                             std::to_string(wrap(static_cast<Index>(k) + 1, n)) +
                             "); on a path items only move forward");
    }
  } else if (n > 1) {
    static_cast<void>(System6(p)); // throws if the infinite links leave no feasible flow
  }
}

namespace {

// No process sends more items than it holds before.
bool sends_only_held_items(const Problem &p, const std::vector<Move> &moves) {
  std::vector<Index> sent(p.loads.size(), 0);
  for (const Move &m : moves)
    sent[static_cast<std::size_t>(m.from)] += m.items;
  for (std::size_t k = 0; k < sent.size(); ++k) {
    if (sent[k] > p.loads[k]) return false;
  }
  return true;
}

// Algorithm 1 when every link costs the same, else Algorithm 2 (Secs. 3 and 4).
void plan_unidirectional(const Problem &p, const std::vector<Index> &delta, Plan &out) {
  const std::size_t n = p.loads.size();
  out.flow = unidirectional_flows(delta);
  if (double c = 1.0; all_equal_finite(p.c_next, {}, c)) {
    // Algorithm 1: P_{start+l} sends in steps 1..delta_{start,start+l}, i.e. back to back.
    out.algorithm = Algorithm::homogeneous_uni;
    out.steps = lemma1_delta_max(delta);
    for (std::size_t k = 0; k < n; ++k) {
      if (out.flow[k] > 0)
        out.moves.push_back({static_cast<int>(k),
                             static_cast<int>(wrap(static_cast<Index>(k) + 1, n)), out.flow[k], 0.0,
                             cost_of(out.flow[k], c), true});
    }
    out.time = cost_of(out.steps, c);
    out.lower_bound = out.time; // Lemma 1
  } else {
    out.algorithm = Algorithm::heterogeneous_uni; // Algorithm 2
    out.moves = greedy_schedule(p, out.flow, out.time);
    out.lower_bound = theorem2_bound(delta, p.c_next);
  }
  out.light = sends_only_held_items(p, out.moves);
}

// Proposition 1: rounding System 6's rational optimum R_0 = xr down or up gives an integer
// optimum.
Index integer_optimum(const System6 &s6, double xr) {
  auto x = static_cast<Index>(std::floor(xr));
  if (x < s6.feasible_lo() || (x + 1 <= s6.feasible_hi() && s6.at(x + 1) < s6.at(x))) ++x;
  return x;
}

// Algorithm 3 on a ring whose every link costs c (Sec. 5). It ignores loads: it may ask a
// process to send an item it will only receive during the same step. Then its net flows are
// kept with the greedy schedule, or the flow search around System 6's optimum x, whichever is
// faster.
void plan_homogeneous_bidirectional(const Problem &p, const System6 &s6, Index x,
                                    const std::vector<Index> &delta, double c, Plan &out) {
  const std::size_t n = p.loads.size();
  out.algorithm = Algorithm::homogeneous_bi;
  out.lower_bound = cost_of(lemma6_steps(delta), c);
  std::vector<Move> moves = algorithm3_schedule(delta, out.steps);
  for (Move &m : moves) {
    m.start *= c;
    m.finish *= c;
  }
  if (holds_every_item(p, moves)) {
    out.moves = std::move(moves);
    out.flow = net_flows(n, out.moves);
    out.time = cost_of(out.steps, c);
    out.light = sends_only_held_items(p, out.moves);
    return;
  }
  out.algorithm3_repaired = true;
  out.flow = net_flows(n, moves);
  out.moves = best_greedy_schedule(p, out.flow, out.time);
  const Plan searched = search_flows(p, s6, x, delta);
  out.candidates = searched.candidates;
  out.search_complete = searched.search_complete;
  if (searched.time < out.time) {
    out.flow = searched.flow;
    out.moves = searched.moves;
    out.time = searched.time;
  }
  out.light = sends_only_held_items(p, out.moves);
}

} // namespace

// --- The planner ---------------------------------------------------------------------------------

Plan plan(const Problem &p) {
  validate(p);
  const std::vector<Index> delta = unbalances(p);
  Plan out;
  out.direction = p.direction;
  out.flow.assign(p.loads.size(), 0);
  if (std::all_of(delta.begin(), delta.end(), [](Index d) { return d == 0; })) return out;
  if (p.direction == Direction::unidirectional) {
    plan_unidirectional(p, delta, out);
    return out;
  }
  const System6 s6(p);
  double xr = 0.0;
  out.system6_rational = s6.rational_min(xr);
  const Index x = integer_optimum(s6, xr);
  out.system6_integer = s6.at(x);
  out.lower_bound = lemma12_bound(delta, p.c_next, p.c_prev);
  if (double c = 1.0; all_equal_finite(p.c_next, p.c_prev, c)) {
    plan_homogeneous_bidirectional(p, s6, x, delta, c, out);
    return out;
  }
  const Plan searched = search_flows(p, s6, x, delta);
  out.algorithm = searched.algorithm;
  out.flow = searched.flow;
  out.moves = searched.moves;
  out.time = searched.time;
  out.light = searched.light;
  out.candidates = searched.candidates;
  out.search_complete = searched.search_complete;
  return out;
}

} // namespace redist::ring
