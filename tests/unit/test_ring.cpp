// The ring planner (Renard, Robert & Vivien 2004) against independent oracles: every plan is
// replayed item by item (one-port constraints, no negative load, final loads = targets), the
// bounds are recomputed from their definitions slice by slice, System 6 is solved by exhaustive
// search over the integer flows and, on a sample, by GLPK's glpsol on the LP written with the
// paper's S variables. Worked instances carry their hand-computed numbers.
#include "reference.hpp"
#include "ring.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <fstream>
#include <limits>
#include <map>
#include <numeric>
#include <sstream>
#include <string>
#include <vector>

namespace redist::test {
namespace {

using ring::Direction;
using ring::Move;
using ring::Problem;

constexpr double inf = std::numeric_limits<double>::infinity();

std::size_t md(Index k, std::size_t n) {
  const auto m = static_cast<Index>(n);
  return static_cast<std::size_t>(((k % m) + m) % m);
}

bool close(double a, double b) {
  if (a == b) return true;
  return std::abs(a - b) <= 1e-9 * std::max({1.0, std::abs(a), std::abs(b)});
}

std::string describe(const Problem &p) {
  std::ostringstream os;
  os << (p.direction == Direction::unidirectional ? "uni" : "bi") << " n=" << p.loads.size()
     << "\n  loads  ";
  for (const Index v : p.loads)
    os << v << ' ';
  os << "\n  delta  ";
  for (std::size_t k = 0; k < p.loads.size(); ++k)
    os << p.loads[k] - p.targets[k] << ' ';
  os << "\n  c_next ";
  for (const double v : p.c_next)
    os << v << ' ';
  os << "\n  c_prev ";
  for (const double v : p.c_prev)
    os << v << ' ';
  return os.str();
}

Problem make(Direction dir, std::vector<Index> loads, const std::vector<Index> &delta,
             std::vector<double> c_next, std::vector<double> c_prev = {}) {
  Problem p;
  p.direction = dir;
  p.targets.resize(loads.size());
  for (std::size_t k = 0; k < loads.size(); ++k)
    p.targets[k] = loads[k] - delta[k];
  p.loads = std::move(loads);
  p.c_next = std::move(c_next);
  p.c_prev = std::move(c_prev);
  return p;
}

/// Replays a schedule item by item. Empty when it is valid: every move goes to a neighbour over
/// an allowed link and lasts items * cost; no process sends two items at once, nor receives two
/// (bidirectional one-port; unidirectional rings have one link each way anyway); a process never
/// sends an item it does not hold (an item received at t can leave at t); the final loads are
/// the targets and the schedule ends at `time`.
std::string replay(const Problem &p, const std::vector<Move> &moves, double time) {
  const std::size_t n = p.loads.size();
  const bool bi = p.direction == Direction::bidirectional;
  std::ostringstream err;
  std::vector<std::vector<std::pair<double, double>>> sends(n);
  std::vector<std::vector<std::pair<double, double>>> recvs(n);
  struct Event {
    double t;
    int kind; // 0 arrival, 1 departure
    std::size_t proc;
  };
  std::vector<Event> events;
  double end = 0.0;
  for (const Move &m : moves) {
    const auto f = static_cast<std::size_t>(m.from);
    const auto t = static_cast<std::size_t>(m.to);
    if (m.items < 1) return "a move of no item";
    if (f >= n || t >= n) return "move names no process";
    double c = 0.0;
    if (m.rightward) {
      if (t != md(m.from + 1, n)) return "rightward move not to the successor";
      c = p.c_next[f];
    } else {
      if (!bi) return "leftward move on a unidirectional ring";
      if (t != md(m.from - 1, n)) return "leftward move not to the predecessor";
      c = p.c_prev[f];
    }
    if (std::isinf(c)) return "move over a forbidden link";
    if (!close(m.finish, m.start + static_cast<double>(m.items) * c)) {
      err << "move " << m.from << "->" << m.to << " of " << m.items << " items lasts "
          << m.finish - m.start << ", expected " << static_cast<double>(m.items) * c;
      return err.str();
    }
    sends[f].emplace_back(m.start, m.finish);
    recvs[t].emplace_back(m.start, m.finish);
    for (Index j = 0; j < m.items; ++j) {
      events.push_back({m.start + static_cast<double>(j) * c, 1, f});
      events.push_back({m.start + static_cast<double>(j + 1) * c, 0, t});
    }
    end = std::max(end, m.finish);
  }
  if (!close(end, time)) {
    err << "schedule ends at " << end << " but its time is " << time;
    return err.str();
  }
  const auto overlap = [&](std::vector<std::pair<double, double>> &v, const char *what,
                           std::size_t k) {
    std::sort(v.begin(), v.end());
    for (std::size_t i = 1; i < v.size(); ++i) {
      if (v[i].first < v[i - 1].second && !close(v[i].first, v[i - 1].second)) {
        err << "P" << k << " " << what << " two items at once: [" << v[i - 1].first << ", "
            << v[i - 1].second << ") and [" << v[i].first << ", " << v[i].second << ")";
        return true;
      }
    }
    return false;
  };
  for (std::size_t k = 0; k < n; ++k) {
    if (overlap(sends[k], "sends", k) || overlap(recvs[k], "receives", k)) return err.str();
  }
  std::sort(events.begin(), events.end(), [](const Event &a, const Event &b) {
    if (!close(a.t, b.t)) return a.t < b.t;
    return a.kind < b.kind;
  });
  std::vector<Index> load = p.loads;
  for (const Event &e : events) {
    load[e.proc] += e.kind == 0 ? 1 : -1;
    if (load[e.proc] < 0) {
      err << "P" << e.proc << " sends at t=" << e.t << " an item it does not hold";
      return err.str();
    }
  }
  for (std::size_t k = 0; k < n; ++k) {
    if (load[k] != p.targets[k]) {
      err << "P" << k << " ends with " << load[k] << " items, target " << p.targets[k];
      return err.str();
    }
  }
  return {};
}

std::vector<Index> net_flow(std::size_t n, const std::vector<Move> &moves) {
  std::vector<Index> f(n, 0);
  for (const Move &m : moves)
    f[static_cast<std::size_t>(m.rightward ? m.from : m.to)] += m.rightward ? m.items : -m.items;
  return f;
}

// --- Bounds straight from their definitions (O(n^2) slices) -------------------------------------

Index slice(const std::vector<Index> &d, std::size_t k, std::size_t len) {
  Index s = 0;
  for (std::size_t i = 0; i < len; ++i)
    s += d[md(static_cast<Index>(k + i), d.size())];
  return s;
}

Index brute_lemma1(const std::vector<Index> &d) {
  Index best = 0;
  for (std::size_t k = 0; k < d.size(); ++k)
    for (std::size_t len = 1; len <= d.size(); ++len)
      best = std::max(best, std::abs(slice(d, k, len)));
  return best;
}

Index brute_lemma6(const std::vector<Index> &d) {
  Index best = 0;
  for (const Index v : d)
    best = std::max(best, std::abs(v));
  for (std::size_t k = 0; k < d.size(); ++k)
    for (std::size_t len = 2; len < d.size(); ++len)
      best = std::max(best, (std::abs(slice(d, k, len)) + 1) / 2);
  return best;
}

/// Algorithm 1 as printed: find start/end of a slice of maximal unbalance, then P_{start+l}
/// sends delta_{start,start+l}.
std::vector<Index> paper_algorithm1_amounts(const std::vector<Index> &d, std::size_t &start) {
  const std::size_t n = d.size();
  const Index dmax = brute_lemma1(d);
  start = 0;
  bool found = false;
  for (std::size_t k = 0; k < n && !found; ++k)
    for (std::size_t len = 1; len <= n && !found; ++len)
      if (slice(d, k, len) == dmax) {
        start = k;
        found = true;
      }
  std::vector<Index> sends(n);
  for (std::size_t l = 0; l < n; ++l)
    sends[md(static_cast<Index>(start + l), n)] = slice(d, start, l + 1);
  return sends;
}

/// Lemma 12 with the inner minimum taken over every i.
double brute_lemma12(const Problem &p) {
  const std::size_t n = p.loads.size();
  std::vector<Index> d(n);
  for (std::size_t k = 0; k < n; ++k)
    d[k] = p.loads[k] - p.targets[k];
  const auto tm = [](Index i, double c) { return i > 0 ? static_cast<double>(i) * c : 0.0; };
  double best = 0.0;
  for (std::size_t k = 0; k < n; ++k) {
    const std::size_t prev = md(static_cast<Index>(k) - 1, n);
    const std::size_t next = md(static_cast<Index>(k) + 1, n);
    if (d[k] > 0) best = std::max(best, tm(d[k], std::min(p.c_prev[k], p.c_next[k])));
    if (d[k] < 0) best = std::max(best, tm(-d[k], std::min(p.c_next[prev], p.c_prev[next])));
    for (std::size_t l = 1; l + 1 < n; ++l) {
      const Index s = slice(d, k, l + 1);
      const std::size_t last = md(static_cast<Index>(k + l), n);
      double m = inf;
      if (s > 0) {
        for (Index i = 0; i <= s; ++i)
          m = std::min(m, std::max(tm(i, p.c_prev[k]), tm(s - i, p.c_next[last])));
      } else if (s < 0) {
        for (Index i = 0; i <= -s; ++i)
          m = std::min(m, std::max(tm(i, p.c_next[prev]),
                                   tm(-s - i, p.c_prev[md(static_cast<Index>(last) + 1, n)])));
      } else {
        m = 0.0;
      }
      best = std::max(best, m);
    }
  }
  return best;
}

/// System 6's objective for net flows (S_{i,i+1} = max(R_i, 0), S_{i+1,i} = max(-R_i, 0)),
/// written from the system: the largest send or receive time of a process.
double system6_value(const Problem &p, const std::vector<Index> &r) {
  const std::size_t n = r.size();
  const auto tm = [](Index i, double c) { return i > 0 ? static_cast<double>(i) * c : 0.0; };
  std::vector<Index> right(n), left(n); // S_{i,i+1}, S_{i,i-1}
  for (std::size_t i = 0; i < n; ++i) {
    right[i] = std::max<Index>(r[i], 0);
    left[md(static_cast<Index>(i) + 1, n)] = std::max<Index>(-r[i], 0);
  }
  double tau = 0.0;
  for (std::size_t i = 0; i < n; ++i) {
    const std::size_t prev = md(static_cast<Index>(i) - 1, n);
    const std::size_t next = md(static_cast<Index>(i) + 1, n);
    tau = std::max(tau, tm(right[i], p.c_next[i]) + tm(left[i], p.c_prev[i]));
    tau = std::max(tau, tm(right[prev], p.c_next[prev]) + tm(left[next], p.c_prev[next]));
  }
  return tau;
}

std::vector<Index> flows_from(Index x, const std::vector<Index> &d) {
  std::vector<Index> r(d.size());
  r[0] = x;
  for (std::size_t i = 1; i < d.size(); ++i)
    r[i] = r[i - 1] + d[i];
  return r;
}

/// Exhaustive integer optimum of System 6 over every R_0 in [-sum|delta|, sum|delta|] (an
/// optimal flow never carries more than all the items that move).
double brute_system6(const Problem &p, Index &argmin) {
  std::vector<Index> d(p.loads.size());
  Index span = 1;
  for (std::size_t k = 0; k < d.size(); ++k) {
    d[k] = p.loads[k] - p.targets[k];
    span += std::abs(d[k]);
  }
  double best = inf;
  for (Index x = -span; x <= span; ++x) {
    const double v = system6_value(p, flows_from(x, d));
    if (v < best) {
      best = v;
      argmin = x;
    }
  }
  return best;
}

// --- Random instances ---------------------------------------------------------------------------

Problem random_problem(Random &rng, Direction dir, bool homogeneous, int max_n) {
  const int n = rng.uniform_int(2, max_n);
  const auto un = static_cast<std::size_t>(n);
  std::vector<Index> d(un);
  const Index amp = rng.chance(30) ? 3 : 50;
  for (Index &v : d)
    v = rng.uniform(-amp, amp);
  // Zero the sum by moving random entries toward it, staying within [-50, 50].
  Index sum = std::accumulate(d.begin(), d.end(), Index{0});
  while (sum != 0) {
    Index &v = d[static_cast<std::size_t>(rng.uniform_int(0, n - 1))];
    if (sum > 0 && v > -50) {
      --v;
      --sum;
    } else if (sum < 0 && v < 50) {
      ++v;
      ++sum;
    }
  }
  std::vector<Index> loads(un);
  const int slack = rng.uniform_int(0, 2); // 0: tight loads, forwarding likely
  for (std::size_t k = 0; k < un; ++k) {
    const Index need = std::max<Index>(1, d[k] + 1);
    loads[k] = need + (slack == 0 ? rng.uniform(0, 2) : rng.uniform(0, slack == 1 ? 10 : 60));
  }
  std::vector<double> cn(un);
  std::vector<double> cp;
  const auto c0 = static_cast<double>(rng.uniform_int(1, 5));
  const bool fractional = rng.chance(20);
  const auto draw = [&]() {
    if (homogeneous) return c0;
    if (fractional) return 0.25 * static_cast<double>(rng.uniform_int(1, 40));
    return static_cast<double>(rng.uniform_int(1, 10));
  };
  for (double &c : cn)
    c = draw();
  if (dir == Direction::bidirectional) {
    cp.resize(un);
    for (double &c : cp)
      c = draw();
  }
  if (!homogeneous && rng.chance(15)) { // a path: the wrap link is forbidden
    cn[un - 1] = inf;
    if (!cp.empty()) cp[0] = inf;
  }
  return make(dir, loads, d, cn, cp);
}

struct Tally {
  int instances = 0;
  int infeasible = 0;
  int light = 0;
  int heuristic = 0;
  int forwarding = 0;
  int repaired = 0;    ///< Algorithm 3 needed a process to send an item it did not hold yet
  int above_bound = 0; ///< ... and the repaired plan is slower than Lemma 6
};

void check_plan(const Problem &p, Tally &tally) {
  // Homogeneous when every cost in use is the same finite value (random costs may be).
  bool homogeneous = std::isfinite(p.c_next[0]);
  for (const auto *c : {&p.c_next, &p.c_prev})
    for (const double v : *c)
      homogeneous = homogeneous && v == p.c_next[0];
  ring::Plan plan;
  try {
    plan = ring::plan(p);
  } catch (const ring::InputError &e) {
    // Only a path may be infeasible (unidirectional: items would have to move backwards).
    ASSERT_TRUE(std::isinf(p.c_next.back())) << e.what() << "\n" << describe(p);
    ++tally.infeasible;
    return;
  }
  ++tally.instances;
  const std::size_t n = p.loads.size();
  std::vector<Index> d(n);
  for (std::size_t k = 0; k < n; ++k)
    d[k] = p.loads[k] - p.targets[k];
  if (std::all_of(d.begin(), d.end(), [](Index v) { return v == 0; })) {
    ASSERT_EQ(plan.algorithm, ring::Algorithm::none);
    ASSERT_TRUE(plan.moves.empty());
    return;
  }
  const std::string why = replay(p, plan.moves, plan.time);
  ASSERT_EQ(why, "") << ring::algorithm_name(plan.algorithm) << "\n" << describe(p);
  ASSERT_EQ(net_flow(n, plan.moves), plan.flow) << describe(p);
  ASSERT_GE(plan.time + 1e-9, plan.lower_bound) << describe(p);
  if (!plan.light) ++tally.forwarding;
  const bool uni = p.direction == Direction::unidirectional;
  if (uni && homogeneous) {
    ASSERT_EQ(plan.algorithm, ring::Algorithm::homogeneous_uni);
    const Index dmax = brute_lemma1(d);
    ASSERT_DOUBLE_EQ(plan.time, static_cast<double>(dmax) * p.c_next[0]) << describe(p);
    ASSERT_EQ(plan.steps, dmax);
    std::size_t start = 0;
    ASSERT_EQ(plan.flow, paper_algorithm1_amounts(d, start)) << describe(p);
  } else if (uni) {
    ASSERT_EQ(plan.algorithm, ring::Algorithm::heterogeneous_uni);
    std::size_t start = 0;
    const std::vector<Index> amounts = paper_algorithm1_amounts(d, start);
    double lemma5 = 0.0; // max_l delta_{start,start+l} * c_{start+l,start+l+1}
    for (std::size_t k = 0; k < n; ++k)
      if (amounts[k] > 0) lemma5 = std::max(lemma5, static_cast<double>(amounts[k]) * p.c_next[k]);
    ASSERT_TRUE(close(plan.time, lemma5)) << plan.time << " vs Lemma 5 " << lemma5 << "\n"
                                          << describe(p);
    ASSERT_TRUE(close(plan.lower_bound, lemma5)) << describe(p); // Theorem 2: optimal
  } else if (homogeneous) {
    ASSERT_EQ(plan.algorithm, ring::Algorithm::homogeneous_bi);
    const Index l6 = brute_lemma6(d);
    ASSERT_EQ(plan.steps, l6) << describe(p); // Lemma 8: Algorithm 3's number of calls
    ASSERT_DOUBLE_EQ(plan.lower_bound, static_cast<double>(l6) * p.c_next[0]) << describe(p);
    if (plan.algorithm3_repaired) {
      ++tally.repaired;
      if (plan.time > plan.lower_bound) ++tally.above_bound;
    } else {
      ASSERT_DOUBLE_EQ(plan.time, static_cast<double>(l6) * p.c_next[0]) << describe(p);
    }
  } else {
    const double l12 = brute_lemma12(p);
    ASSERT_TRUE(close(plan.lower_bound, l12)) << plan.lower_bound << " vs " << l12 << "\n"
                                              << describe(p);
    ASSERT_GE(plan.time + 1e-9, l12) << describe(p);
    Index xb = 0;
    const double opt = brute_system6(p, xb);
    ASSERT_TRUE(close(plan.system6_integer, opt))
        << plan.system6_integer << " vs exhaustive " << opt << "\n"
        << describe(p);
    ASSERT_LE(plan.system6_rational, opt + 1e-9) << describe(p);
    ASSERT_GE(plan.system6_rational + 1.0 * 0, l12 * 0); // (kept non-negative)
    ASSERT_GE(plan.time + 1e-9, opt) << describe(p);
    ASSERT_GE(opt + 1e-9, l12) << "System 6 below Lemma 12\n" << describe(p);
    if (plan.algorithm == ring::Algorithm::light_bi) {
      ++tally.light;
      ASSERT_TRUE(close(plan.time, opt)) << "light plan not optimal\n" << describe(p);
      ASSERT_TRUE(plan.light);
    } else {
      ASSERT_EQ(plan.algorithm, ring::Algorithm::heuristic_bi);
      ++tally.heuristic;
      // Never worse than System 12: the best light flow (if any), scheduled as in Lemma 9.
      double sys12 = inf;
      for (Index x = -1000; x <= 1000; ++x) {
        const std::vector<Index> r = flows_from(x, d);
        bool light = true;
        for (std::size_t i = 0; i < n; ++i) {
          const Index out =
              std::max<Index>(r[i], 0) + std::max<Index>(-r[md(static_cast<Index>(i) - 1, n)], 0);
          light = light && out <= p.loads[i];
        }
        if (light) sys12 = std::min(sys12, system6_value(p, r));
      }
      ASSERT_LE(plan.time, sys12 + 1e-9) << describe(p);
    }
  }
}

TEST(RingPlanner, RandomInstancesAllModes) {
  Random rng(test_seed(2004));
  std::map<std::string, Tally> tallies;
  const struct {
    const char *name;
    Direction dir;
    bool homogeneous;
    int count;
  } modes[] = {{"homogeneous unidirectional", Direction::unidirectional, true, 2500},
               {"heterogeneous unidirectional", Direction::unidirectional, false, 2500},
               {"homogeneous bidirectional", Direction::bidirectional, true, 2500},
               {"heterogeneous bidirectional", Direction::bidirectional, false, 3000}};
  for (const auto &mode : modes) {
    Tally &t = tallies[mode.name];
    for (int i = 0; i < mode.count; ++i) {
      const Problem p = random_problem(rng, mode.dir, mode.homogeneous, i % 4 == 0 ? 8 : 32);
      check_plan(p, t);
      if (HasFatalFailure()) return;
    }
  }
  int total = 0;
  for (const auto &[name, t] : tallies) {
    std::cout << "  " << name << ": " << t.instances << " plans (" << t.forwarding
              << " with forwarding), " << t.infeasible << " infeasible paths";
    if (t.light + t.heuristic > 0)
      std::cout << "; " << t.light << " light (System 6), " << t.heuristic << " heuristic";
    if (t.repaired > 0)
      std::cout << "; Algorithm 3 infeasible on loads in " << t.repaired << ", repaired plan "
                << "above Lemma 6 in " << t.above_bound;
    std::cout << "\n";
    total += t.instances;
  }
  EXPECT_GE(total, 10000);
  EXPECT_GT(tallies["heterogeneous bidirectional"].heuristic, 100);
  EXPECT_GT(tallies["heterogeneous unidirectional"].forwarding, 100);
  // Not a theorem (see Algorithm3IgnoresLoads): every repaired plan so far met Lemma 6.
  EXPECT_EQ(tallies["homogeneous bidirectional"].above_bound, 0);
}

// --- Worked instances ---------------------------------------------------------------------------

TEST(RingPlanner, NotesTableHomogeneous) {
  // docs/references.md, Renard, Robert & Vivien 2004: delta, Lemma 1, start, Algorithm 1's
  // sends, Lemma 6.
  const struct {
    std::vector<Index> delta;
    Index lemma1;
    std::size_t start;
    std::vector<Index> sends;
    Index lemma6;
  } rows[] = {
      {{3, -1, -2, 0}, 3, 0, {3, 2, 0, 0}, 3},
      {{2, -1, 1, -2}, 2, 0, {2, 1, 2, 0}, 2},
      {{1, 1, 1, -3}, 3, 0, {1, 2, 3, 0}, 3},
      {{2, 2, -2, -2}, 4, 0, {2, 4, 2, 0}, 2},
      {{3, 3, 0, -3, -3, 0}, 6, 0, {3, 6, 6, 3, 0, 0}, 3},
      {{1, 2, 3, -1, -2, -3}, 6, 0, {1, 3, 6, 5, 3, 0}, 3},
      {{6, -1, -1, -1, -1, -1, -1}, 6, 0, {6, 5, 4, 3, 2, 1, 0}, 6},
  };
  for (const auto &row : rows) {
    const std::size_t n = row.delta.size();
    std::size_t start = 99;
    EXPECT_EQ(paper_algorithm1_amounts(row.delta, start), row.sends);
    EXPECT_EQ(start, row.start);
    EXPECT_EQ(ring::lemma1_delta_max(row.delta), row.lemma1);
    EXPECT_EQ(ring::lemma6_steps(row.delta), row.lemma6);
    const std::vector<Index> loads(n, 10);
    const Problem uni =
        make(Direction::unidirectional, loads, row.delta, std::vector<double>(n, 1.0));
    const ring::Plan pu = ring::plan(uni);
    EXPECT_EQ(pu.flow, row.sends);
    EXPECT_EQ(pu.time, static_cast<double>(row.lemma1));
    EXPECT_EQ(replay(uni, pu.moves, pu.time), "");
    const Problem bi = make(Direction::bidirectional, loads, row.delta, std::vector<double>(n, 2.0),
                            std::vector<double>(n, 2.0));
    const ring::Plan pb = ring::plan(bi);
    EXPECT_EQ(pb.algorithm, ring::Algorithm::homogeneous_bi);
    EXPECT_EQ(pb.steps, row.lemma6);
    EXPECT_EQ(pb.time, 2.0 * static_cast<double>(row.lemma6));
    EXPECT_EQ(replay(bi, pb.moves, pb.time), "");
  }
}

TEST(RingPlanner, Algorithm3IgnoresLoads) {
  // delta = (0, -3, 3, 0), loads (1, 1, 4, 1), c = 1 both ways; Lemma 6: max |delta_i| = 3.
  // Step 1 (delta_max 3): no slice has |delta| >= 5; P2 (maximal) sends to P3 and P1 (maximal,
  // negative) receives from P0 (Steps 19-24). Unbalances become (1, -2, 2, -1).
  // Step 2 (delta_max 2): no slice reaches 3 in absolute value; again P2 -> P3 and P0 -> P1.
  // But P0 gave its only item in step 1 and receives nothing before step 2 ends: the printed
  // algorithm (which never looks at loads) makes it send an item it does not hold.
  const Problem p =
      make(Direction::bidirectional, {1, 1, 4, 1}, {0, -3, 3, 0}, {1, 1, 1, 1}, {1, 1, 1, 1});
  Index steps = 0;
  const std::vector<Move> a3 = ring::algorithm3_schedule({0, -3, 3, 0}, steps);
  EXPECT_EQ(steps, 3);
  EXPECT_NE(replay(p, a3, 3.0).find("P0 sends at t=1 an item it does not hold"), std::string::npos)
      << replay(p, a3, 3.0);
  // The plan keeps the optimum: e.g. P2 sends its three items straight to P1.
  const ring::Plan plan = ring::plan(p);
  EXPECT_TRUE(plan.algorithm3_repaired);
  EXPECT_EQ(plan.time, 3.0);
  EXPECT_EQ(plan.lower_bound, 3.0);
  EXPECT_EQ(replay(p, plan.moves, plan.time), "");
}

TEST(RingPlanner, Algorithm2ForwardsWithoutDelay) {
  // delta = (3, 0, 0, -3), loads (4, 1, 1, 1): P1 and P2 hold one item and forward two.
  // c = (2, 1, 1, 1). By hand: P0 sends at [0,2) [2,4) [4,6); P1 sends its item at [0,1), then
  // forwards the arrivals of t=2 and t=4 at [2,3) and [4,5); P2 sends its own at [0,1) and
  // forwards those of t=1 and t=3 at [1,2) and [3,4). Time 6 = Lemma 5 = 3 * c(0->1).
  const Problem p = make(Direction::unidirectional, {4, 1, 1, 1}, {3, 0, 0, -3}, {2, 1, 1, 1});
  const ring::Plan plan = ring::plan(p);
  EXPECT_EQ(plan.algorithm, ring::Algorithm::heterogeneous_uni);
  EXPECT_EQ(plan.flow, (std::vector<Index>{3, 3, 3, 0}));
  EXPECT_EQ(plan.time, 6.0);
  EXPECT_EQ(plan.lower_bound, 6.0);
  EXPECT_FALSE(plan.light);
  EXPECT_EQ(replay(p, plan.moves, plan.time), "");
  std::vector<std::vector<double>> starts(4);
  for (const Move &m : plan.moves)
    for (Index j = 0; j < m.items; ++j)
      starts[static_cast<std::size_t>(m.from)].push_back(
          m.start + static_cast<double>(j) * p.c_next[static_cast<std::size_t>(m.from)]);
  EXPECT_EQ(starts[0], (std::vector<double>{0, 2, 4}));
  EXPECT_EQ(starts[1], (std::vector<double>{0, 2, 4}));
  EXPECT_EQ(starts[2], (std::vector<double>{0, 1, 3}));
  EXPECT_TRUE(starts[3].empty());
}

TEST(RingPlanner, LightSystem6ByHand) {
  // n = 3, delta = (2, -1, -1), loads 5 each. c_next = (1, 1, 1); c_prev = (3, 1, 1), so P0's
  // link to P2 is slow. R = (x, x-1, x-2) (Lemma 10). x = 2: P0 sends 2 (time 2), P1 receives 2
  // and sends 1, P2 receives 1: tau = 2. x = 1: P0 sends 1 + 1*3 = 4. x = 3: P0 sends 3.
  // The rational optimum is x = 2, tau = 2. Lemma 12: delta_0 = 2 over its fastest link -> 2.
  const Problem p = make(Direction::bidirectional, {5, 5, 5}, {2, -1, -1}, {1, 1, 1}, {3, 1, 1});
  const ring::Plan plan = ring::plan(p);
  EXPECT_EQ(plan.algorithm, ring::Algorithm::light_bi);
  EXPECT_EQ(plan.flow, (std::vector<Index>{2, 1, 0}));
  EXPECT_EQ(plan.time, 2.0);
  EXPECT_EQ(plan.system6_rational, 2.0);
  EXPECT_EQ(plan.lower_bound, 2.0);
  EXPECT_EQ(replay(p, plan.moves, plan.time), "");
}

TEST(RingPlanner, WrapLinkByHand) {
  // n = 3, delta = (2, 0, -2), loads (6, 6, 1), c_next = (1, 3, 1), c_prev = (2, 1, 1).
  // R = (x, x, x-2) (Lemma 10).
  //   0 <= x <= 2: P0 sends x to P1 (cost 1) and 2-x to P2 (cost 2): 4-x; P1 forwards x at
  //                cost 3: 3x; P2 receives 3x + 2(2-x) = 4+x. tau = 4+x.
  //   x <= 0:      P1 sends -x to P0, P2 sends -x to P1, P0 sends 2-x to P2 at cost 2:
  //                tau = 2(2-x) = 4-2x.
  // Optimum x = 0, tau = 4: P0 sends both items straight to P2 over the wrap link. Lemma 12
  // agrees: P2 must receive 2 items over links of cost >= 2, so 4 is optimal.
  const Problem p = make(Direction::bidirectional, {6, 6, 1}, {2, 0, -2}, {1, 3, 1}, {2, 1, 1});
  const ring::Plan plan = ring::plan(p);
  EXPECT_EQ(plan.algorithm, ring::Algorithm::light_bi);
  EXPECT_EQ(plan.flow, (std::vector<Index>{0, 0, -2}));
  EXPECT_EQ(plan.system6_rational, 4.0);
  EXPECT_EQ(plan.system6_integer, 4.0);
  EXPECT_EQ(plan.time, 4.0);
  EXPECT_EQ(plan.lower_bound, 4.0);
  EXPECT_EQ(replay(p, plan.moves, plan.time), "");
}

TEST(RingPlanner, Lemma12ByHand) {
  // n = 4, delta = (4, 0, 0, -4), all c_next = 1, c_prev = (3, 1, 1, 1), loads (5, 1, 1, 1).
  // Single processors: P0 sends 4 over its fastest link (1): 4. P3 receives 4 over its fastest
  // incoming link: c(2->3) = 1, c(0->3) = c_prev[0] = 3: 4. Slice {P0, P1} (delta 4): i items
  // leave by c_prev[0] = 3, 4-i by c_next[1] = 1: min_i max(3i, 4-i) = 3 (i = 1). Slice
  // {P2, P3} (delta -4): i enter by c_next[1] = 1, 4-i by c_prev[0] = 3: 3. Bound: 4.
  const Problem p =
      make(Direction::bidirectional, {5, 1, 1, 1}, {4, 0, 0, -4}, {1, 1, 1, 1}, {3, 1, 1, 1});
  EXPECT_EQ(ring::lemma12_bound({4, 0, 0, -4}, p.c_next, p.c_prev), 4.0);
  EXPECT_EQ(brute_lemma12(p), 4.0);
  const ring::Plan plan = ring::plan(p);
  EXPECT_EQ(replay(p, plan.moves, plan.time), "");
  EXPECT_GE(plan.time, 4.0);
}

TEST(RingPlanner, Lemma12IsNotTight) {
  // n = 3, delta = (2, -1, -1), loads 10, c_next = (1, 3, 1), c_prev = (2, 1, 1).
  // Lemma 12: P0 sends 2 over its fastest link: 2; P2 receives 1 over min(c(1->2) = 3,
  // c(0->2) = 2): 2; slice {P0, P1} (delta 1): min(max(2i, 3(1-i))) = 2 (i = 1); slice {P1, P2}
  // (delta -2): min_i max(i * c(0->1), (2-i) * c(0->2)) = 2; slice {P2, P0} (delta 1): 1. So 2.
  // But R = (x, x-1, x-2): x = 1 makes P0 send 1 + 2 = 3; x = 2 makes P1 forward one item over
  // c(1->2) = 3; x = 0 makes P0 send 2 * 2 = 4. System 6's integer optimum, 3, bounds every
  // schedule (each process sends serially), and the light plan reaches it: the optimum is 3,
  // above Lemma 12 (the paper knew no such instance).
  const Problem p = make(Direction::bidirectional, {10, 10, 10}, {2, -1, -1}, {1, 3, 1}, {2, 1, 1});
  const ring::Plan plan = ring::plan(p);
  EXPECT_EQ(plan.lower_bound, 2.0);
  EXPECT_EQ(brute_lemma12(p), 2.0);
  EXPECT_EQ(plan.system6_integer, 3.0);
  EXPECT_EQ(plan.algorithm, ring::Algorithm::light_bi);
  EXPECT_EQ(plan.time, 3.0);
  EXPECT_EQ(replay(p, plan.moves, plan.time), "");
}

TEST(RingPlanner, PathKeepsOrderAndRejectsBackwardMoves) {
  // A path (wrap link forbidden). Unidirectional: items only move forward, so delta = (-1, 1)
  // is impossible and the error says which link.
  const Problem bad = make(Direction::unidirectional, {2, 2}, {-1, 1}, {1.0, inf});
  try {
    static_cast<void>(ring::plan(bad));
    FAIL() << "expected an error";
  } catch (const ring::InputError &e) {
    EXPECT_EQ(e.argument(), "c_next[1]");
    EXPECT_NE(std::string(e.what()).find("only move forward"), std::string::npos) << e.what();
  }
  const Problem bi =
      make(Direction::bidirectional, {2, 2, 2}, {-1, 0, 1}, {1, 1, inf}, {inf, 1, 1});
  const ring::Plan plan = ring::plan(bi);
  EXPECT_EQ(plan.flow, (std::vector<Index>{-1, -1, 0}));
  EXPECT_EQ(replay(bi, plan.moves, plan.time), "");
}

TEST(RingPlanner, InvalidInputNamesTheArgument) {
  const auto expect = [](const Problem &p, const char *arg, const char *reason) {
    try {
      ring::validate(p);
      ADD_FAILURE() << "no error for " << arg;
    } catch (const ring::InputError &e) {
      EXPECT_EQ(e.argument(), arg);
      EXPECT_NE(std::string(e.what()).find(reason), std::string::npos) << e.what();
    }
  };
  const std::vector<double> c(3, 1.0);
  expect(make(Direction::unidirectional, {1, 0, 2}, {0, 0, 0}, c), "loads[1]", "at least one");
  expect(make(Direction::unidirectional, {1, 2, 2}, {0, 2, -2}, c), "targets[1]", "at least one");
  Problem sum = make(Direction::unidirectional, {1, 2, 2}, {0, 0, 0}, c);
  sum.targets[2] = 3;
  expect(sum, "targets", "add up");
  expect(make(Direction::bidirectional, {1, 2, 2}, {0, 0, 0}, c, {1, 0, 1}), "c_prev[1]", "> 0");
  expect(make(Direction::unidirectional, {1, 2, 2}, {0, 0, 0}, {1, std::nan(""), 1}), "c_next[1]",
         "> 0");
  expect(make(Direction::bidirectional, {1, 2, 2}, {0, 0, 0}, c), "c_prev", "one cost");
  // R_0 <= 0 (link 0 forbidden rightward) but R_1 = R_0 - 1 >= 0 (link 1 forbidden leftward).
  expect(make(Direction::bidirectional, {2, 2, 2}, {1, -1, 0}, {inf, 1, 1}, {1, 1, inf}),
         "c_next, c_prev", "no way");
}

TEST(RingPlanner, TargetsFromWeights) {
  EXPECT_EQ(ring::targets_from_weights(10, {1, 1}), (std::vector<Index>{5, 5}));
  // 1 each, then 7 shared as 7/6, 14/6, 21/6 -> 1, 2, 3 and the largest remainders (.5 .33 .17)
  EXPECT_EQ(ring::targets_from_weights(10, {1, 2, 3}), (std::vector<Index>{2, 3, 5}));
  EXPECT_EQ(ring::targets_from_weights(3, {1, 1000, 1}), (std::vector<Index>{1, 1, 1}));
  EXPECT_THROW(static_cast<void>(ring::targets_from_weights(2, {1, 1, 1})), ring::InputError);
  EXPECT_THROW(static_cast<void>(ring::targets_from_weights(5, {1, -1})), ring::InputError);
  Random rng(test_seed(77));
  for (int i = 0; i < 2000; ++i) {
    const int n = rng.uniform_int(1, 40);
    std::vector<double> w(static_cast<std::size_t>(n));
    double sum = 0.0;
    for (double &v : w)
      sum += v = 0.5 + static_cast<double>(rng.uniform_int(0, 1000));
    const Index total = rng.uniform(n, 5000);
    const std::vector<Index> t = ring::targets_from_weights(total, w);
    ASSERT_EQ(std::accumulate(t.begin(), t.end(), Index{0}), total);
    for (std::size_t k = 0; k < t.size(); ++k) {
      ASSERT_GE(t[k], 1);
      const double share = 1.0 + static_cast<double>(total - n) * w[k] / sum;
      ASSERT_LT(std::abs(static_cast<double>(t[k]) - share), 1.0 + 1e-9);
    }
  }
}

TEST(RingPlanner, DirectPiecesMatchNeighbourLayout) {
  // The element oracle: items are numbered in ring order; after the flows, P_k holds the cyclic
  // run starting at start_k. Moving net flows item by item (last items right, first left) must
  // give the same runs, and the direct pieces must fill every output slot exactly once.
  Random rng(test_seed(31));
  for (int trial = 0; trial < 3000; ++trial) {
    const Problem p = random_problem(
        rng, rng.chance(50) ? Direction::unidirectional : Direction::bidirectional, false, 9);
    ring::Plan plan;
    try {
      plan = ring::plan(p);
    } catch (const ring::InputError &) {
      continue;
    }
    const std::size_t n = p.loads.size();
    std::vector<std::vector<Index>> held(n);
    Index g = 0;
    for (std::size_t k = 0; k < n; ++k)
      for (Index i = 0; i < p.loads[k]; ++i)
        held[k].push_back(g++);
    // Oracle: apply the flows one item at a time, sweeping until done (items leave from the
    // ends; a process forwards what it received once its own items are gone).
    std::vector<Index> left_to_move = plan.flow;
    for (bool progress = true; progress;) {
      progress = false;
      for (std::size_t k = 0; k < n; ++k) {
        const std::size_t k1 = md(static_cast<Index>(k) + 1, n);
        if (left_to_move[k] > 0 && !held[k].empty()) {
          held[k1].insert(held[k1].begin(), held[k].back());
          held[k].pop_back();
          --left_to_move[k];
          progress = true;
        } else if (left_to_move[k] < 0 && !held[k1].empty()) {
          held[k].push_back(held[k1].front());
          held[k1].erase(held[k1].begin());
          ++left_to_move[k];
          progress = true;
        }
      }
    }
    ASSERT_TRUE(std::all_of(left_to_move.begin(), left_to_move.end(), [](Index v) {
      return v == 0;
    })) << describe(p);
    const std::vector<Index> starts = ring::final_starts(p.loads, plan.flow);
    std::vector<std::vector<Index>> out(n);
    for (std::size_t k = 0; k < n; ++k) {
      ASSERT_EQ(static_cast<Index>(held[k].size()), p.targets[k]) << describe(p);
      ASSERT_EQ(held[k].front(), starts[k]) << describe(p);
      out[k].assign(held[k].size(), -1);
    }
    std::vector<Index> first(n + 1, 0);
    for (std::size_t k = 0; k < n; ++k)
      first[k + 1] = first[k] + p.loads[k];
    for (const ring::DirectPiece &pc : ring::direct_pieces(p.loads, plan.flow)) {
      for (Index i = 0; i < pc.items; ++i) {
        Index &slot =
            out[static_cast<std::size_t>(pc.to)][static_cast<std::size_t>(pc.to_offset + i)];
        ASSERT_EQ(slot, -1) << "slot written twice\n" << describe(p);
        slot = first[static_cast<std::size_t>(pc.from)] + pc.from_offset + i;
      }
    }
    for (std::size_t k = 0; k < n; ++k)
      ASSERT_EQ(out[k], held[k]) << "P" << k << "\n" << describe(p);
    const int me = rng.uniform_int(0, static_cast<int>(n) - 1);
    for (const ring::DirectPiece &pc : ring::direct_pieces(p.loads, plan.flow, me))
      ASSERT_TRUE(pc.from == me || pc.to == me);
    ASSERT_GE(ring::direct_time(p, ring::direct_pieces(p.loads, plan.flow)), 0.0);
  }
}

// --- System 6 against GLPK ----------------------------------------------------------------------

/// Solve System 6 (S variables, both directions on every link, as printed) with glpsol; returns
/// tau, or NaN if glpsol is unavailable or fails.
double glpk_system6(const Problem &p, bool integer, const std::string &dir) {
  const std::size_t n = p.loads.size();
  const std::string lp = dir + "/s6.lp";
  const std::string out = dir + "/s6.out";
  {
    std::ofstream f(lp);
    const auto nx = [&](std::size_t i) { return md(static_cast<Index>(i) + 1, n); };
    const auto pv = [&](std::size_t i) { return md(static_cast<Index>(i) - 1, n); };
    f << "Minimize\n obj: tau\nSubject To\n";
    for (std::size_t i = 0; i < n; ++i) {
      const Index d = p.loads[i] - p.targets[i];
      // S_{i,i+1} = r_i, S_{i,i-1} = l_i.
      f << " cons" << i << ": r" << i << " + l" << i << " - l" << nx(i) << " - r" << pv(i) << " = "
        << d << "\n";
      const auto term = [&](double c, const std::string &v) {
        return std::isinf(c) ? std::string() : " + " + std::to_string(c) + " " + v;
      };
      f << " send" << i << ": - tau" << term(p.c_next[i], "r" + std::to_string(i))
        << term(p.c_prev[i], "l" + std::to_string(i)) << " <= 0\n";
      f << " recv" << i << ": - tau" << term(p.c_next[pv(i)], "r" + std::to_string(pv(i)))
        << term(p.c_prev[nx(i)], "l" + std::to_string(nx(i))) << " <= 0\n";
    }
    f << "Bounds\n";
    for (std::size_t i = 0; i < n; ++i) {
      f << " "
        << (std::isinf(p.c_next[i]) ? "r" + std::to_string(i) + " = 0"
                                    : "r" + std::to_string(i) + " >= 0")
        << "\n";
      f << " "
        << (std::isinf(p.c_prev[i]) ? "l" + std::to_string(i) + " = 0"
                                    : "l" + std::to_string(i) + " >= 0")
        << "\n";
    }
    if (integer) {
      f << "General\n";
      for (std::size_t i = 0; i < n; ++i)
        f << " r" << i << " l" << i << "\n";
    }
    f << "End\n";
  }
  const std::string cmd = "glpsol --lp " + lp + " -o " + out + " >/dev/null 2>&1";
  if (std::system(cmd.c_str()) != 0) return std::nan("");
  std::ifstream in(out);
  std::string line;
  while (std::getline(in, line)) {
    const auto pos = line.find("Objective:");
    if (pos == std::string::npos) continue;
    const auto eq = line.find('=', pos);
    return std::stod(line.substr(eq + 1));
  }
  return std::nan("");
}

TEST(RingPlanner, System6MatchesGlpk) {
  // glpk-utils is installed by scripts/deps.sh.
  ASSERT_EQ(std::system("command -v glpsol >/dev/null 2>&1"), 0)
      << "glpsol not found: install glpk-utils (scripts/deps.sh)";
  char tmpl[] = "/tmp/redist_ring_lpXXXXXX";
  ASSERT_NE(mkdtemp(tmpl), nullptr);
  const std::string dir = tmpl;
  Random rng(test_seed(612));
  int fractional = 0;
  for (int trial = 0; trial < 150; ++trial) {
    const Problem p = random_problem(rng, Direction::bidirectional, false, 10);
    ring::Plan plan;
    try {
      plan = ring::plan(p);
    } catch (const ring::InputError &) {
      continue;
    }
    const double lp = glpk_system6(p, false, dir);
    ASSERT_FALSE(std::isnan(lp)) << "glpsol failed\n" << describe(p);
    // glpsol prints 6 significant digits.
    ASSERT_NEAR(plan.system6_rational, lp, 1e-5 * std::max(1.0, lp)) << describe(p);
    if (plan.system6_rational != std::floor(plan.system6_rational)) ++fractional;
    if (trial % 3 == 0) {
      const double ilp = glpk_system6(p, true, dir);
      ASSERT_NEAR(plan.system6_integer, ilp, 1e-5 * std::max(1.0, ilp)) << describe(p);
    }
  }
  std::cout << "  " << fractional << " instances with a fractional rational optimum\n";
  EXPECT_GT(fractional, 0);
  std::system(("rm -rf " + dir).c_str());
}

} // namespace
} // namespace redist::test
