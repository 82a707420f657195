// Studies of the ring planner (docs/studies/ring.md), printing CSV. Built as the target
// ring_study and by scripts/ring_study.py (which also draws the plots); standalone:
//   c++ -std=c++20 -O2 -Isrc/schedule -Isrc/layout research/tools/ring_study.cpp
//   src/schedule/ring*.cpp -o ring_study
//   ./ring_study gap [instances] [seed]        heuristic vs Lemma 12 on non-light instances
//   ./ring_study section8 [platforms] [seed] [noise] [factor]   the paper's Section 8, simulated
//        (factor 0: a changing speed is drawn anew from the list; > 1: multiplied by a random
//        factor in [1/factor, factor])
#include "ring.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <numeric>
#include <random>
#include <string>
#include <vector>

using redist::Index;
namespace ring = redist::ring;

namespace {

struct Rng {
  std::mt19937_64 eng;
  Index uniform(Index lo, Index hi) { return std::uniform_int_distribution<Index>(lo, hi)(eng); }
  double real(double lo, double hi) { return std::uniform_real_distribution<double>(lo, hi)(eng); }
};

// Random heterogeneous bidirectional instances as in tests/unit/test_ring.cpp: n <= 32,
// |delta| <= 50, integer costs 1..10, tight loads (forwarding likely).
ring::Problem random_instance(Rng &rng) {
  const auto n = static_cast<std::size_t>(rng.uniform(3, 32));
  std::vector<Index> d(n);
  for (Index &v : d)
    v = rng.uniform(-50, 50);
  Index sum = std::accumulate(d.begin(), d.end(), Index{0});
  while (sum != 0) {
    Index &v = d[static_cast<std::size_t>(rng.uniform(0, static_cast<Index>(n) - 1))];
    if (sum > 0 && v > -50) {
      --v;
      --sum;
    } else if (sum < 0 && v < 50) {
      ++v;
      ++sum;
    }
  }
  ring::Problem p;
  p.direction = ring::Direction::bidirectional;
  for (std::size_t k = 0; k < n; ++k) {
    p.loads.push_back(std::max<Index>(1, d[k] + 1) + rng.uniform(0, 3));
    p.targets.push_back(p.loads.back() - d[k]);
    p.c_next.push_back(static_cast<double>(rng.uniform(1, 10)));
    p.c_prev.push_back(static_cast<double>(rng.uniform(1, 10)));
  }
  return p;
}

void gap(int instances, std::uint64_t seed) {
  Rng rng{std::mt19937_64(seed)};
  std::printf("n,moved,time,lemma12,system6,system12,candidates,complete\n");
  int found = 0;
  while (found < instances) {
    const ring::Problem p = random_instance(rng);
    const ring::Plan plan = ring::plan(p);
    if (plan.algorithm != ring::Algorithm::heuristic_bi) continue;
    ++found;
    Index moved = 0;
    for (std::size_t k = 0; k < p.loads.size(); ++k)
      moved += std::max<Index>(0, p.loads[k] - p.targets[k]);
    // System 12: the best light flow (if any) with Lemma 9's schedule, i.e. System 6's value.
    const ring::System6 s6(p);
    Index lo = 0;
    Index hi = 0;
    double sys12 = -1.0;
    if (s6.light_interval(lo, hi)) sys12 = s6.at(std::clamp(s6.integer_argmin(), lo, hi));
    std::printf("%zu,%lld,%g,%g,%g,%g,%lld,%d\n", p.loads.size(), static_cast<long long>(moved),
                plan.time, plan.lower_bound, plan.system6_integer, sys12,
                static_cast<long long>(plan.candidates), plan.search_complete ? 1 : 0);
  }
}

// Section 8: an iterative application on 1000 columns; each processor's speed changes twice
// (once in iterations 20-40, once in 60-80, each time to a new speed drawn from the same list);
// rebalancing every P iterations to targets in proportion to the speeds measured in the
// iteration just done, with the heterogeneous bidirectional planner (predicted time). The
// computation-to-communication ratio r is the paper's "relative (average) cost of a
// redistribution versus the cost of an iteration": per platform, the mean planned time of the
// rebalances of the every-10 scheme is r times a perfectly balanced iteration at the initial
// speeds. Speeds are measured with up to `noise` relative error (default 5%), so every
// rebalance moves some columns, as with real measurements.
struct Platform {
  ring::Problem base;
  std::vector<double> s[3];
  std::vector<int> change[2];
  [[nodiscard]] double speed(std::size_t k, int it) const {
    return it <= change[0][k] ? s[0][k] : it <= change[1][k] ? s[1][k] : s[2][k];
  }
};

struct Run {
  double compute = 0.0;
  double redistribute = 0.0;
  int rebalances = 0;
  int heuristic = 0;
};

constexpr Index columns = 1000;

/// `work`: time to process one column at speed 1. A rebalance sees each speed through a
/// measurement with up to `noise` relative error (seeded by `seed`, the same for every scheme).
Run simulate(const Platform &pl, int period, double work, double noise, std::uint64_t seed) {
  Rng rng{std::mt19937_64(seed)};
  const std::size_t n = pl.base.loads.size();
  std::vector<double> w(n);
  for (std::size_t k = 0; k < n; ++k)
    w[k] = pl.s[0][k];
  std::vector<Index> cols = ring::targets_from_weights(columns, w);
  Run run;
  for (int it = 1; it <= 100; ++it) {
    double slowest = 0.0;
    for (std::size_t k = 0; k < n; ++k)
      slowest = std::max(slowest, static_cast<double>(cols[k]) * work / pl.speed(k, it));
    run.compute += slowest;
    if (period == 0 || it % period != 0 || it == 100) continue;
    for (std::size_t k = 0; k < n; ++k)
      w[k] = pl.speed(k, it) * (1.0 + rng.real(-noise, noise));
    ring::Problem p = pl.base;
    p.loads = cols;
    p.targets = ring::targets_from_weights(columns, w);
    const ring::Plan plan = ring::plan(p);
    run.redistribute += plan.time;
    run.heuristic += plan.algorithm == ring::Algorithm::heuristic_bi ? 1 : 0;
    cols = p.targets;
    ++run.rebalances;
  }
  return run;
}

void section8(int platforms, std::uint64_t seed, double noise, double factor) {
  const double speeds[] = {200, 350, 400, 800, 1400, 1700, 2000}; // MFlops-like classes
  const double link_class[] = {1.0, 1.0, 1.0, 4.0, 4.0, 10.0};    // LAN, MAN, WAN
  const int periods[] = {0, 50, 20, 10, 5};
  std::printf("n,ratio,period,platform,total,compute,redistribute,rebalances,heuristic\n");
  for (const int n : {8, 32}) {
    Rng rng{std::mt19937_64(seed + static_cast<std::uint64_t>(n))};
    for (int platform = 0; platform < platforms; ++platform) {
      const auto un = static_cast<std::size_t>(n);
      Platform pl;
      for (auto &v : pl.s)
        v.resize(un);
      for (auto &v : pl.change)
        v.resize(un);
      pl.base.direction = ring::Direction::bidirectional;
      pl.base.loads.assign(un, 1);
      pl.base.c_next.resize(un);
      pl.base.c_prev.resize(un);
      double total_speed = 0.0;
      for (std::size_t k = 0; k < un; ++k) {
        for (auto &v : pl.s)
          v[k] = speeds[rng.uniform(0, 6)];
        if (factor > 1.0) { // milder changes: old speed times a factor in [1/factor, factor]
          for (int c = 1; c < 3; ++c)
            pl.s[c][k] = pl.s[c - 1][k] * std::exp(rng.real(-std::log(factor), std::log(factor)));
        }
        pl.change[0][k] = static_cast<int>(rng.uniform(20, 40));
        pl.change[1][k] = static_cast<int>(rng.uniform(60, 80));
        pl.base.c_next[k] = link_class[rng.uniform(0, 5)]; // the slowest link of the route
        total_speed += pl.s[0][k];
      }
      for (std::size_t k = 0; k < un; ++k)
        pl.base.c_prev[(k + 1) % un] = pl.base.c_next[k];
      const std::uint64_t noise_seed = seed * 7919 + static_cast<std::uint64_t>(platform);
      const Run calibration = simulate(pl, 10, 1.0, noise, noise_seed);
      const double mean_redistribution = calibration.redistribute / calibration.rebalances;
      for (int r = 1; r <= 10; ++r) {
        // Balanced iteration at the initial speeds: columns * work / total_speed.
        const double work = mean_redistribution * total_speed / (static_cast<double>(columns) * r);
        for (const int period : periods) {
          const Run run = simulate(pl, period, work, noise, noise_seed);
          std::printf("%d,%d,%d,%d,%g,%g,%g,%d,%d\n", n, r, period, platform,
                      run.compute + run.redistribute, run.compute, run.redistribute, run.rebalances,
                      run.heuristic);
        }
      }
    }
  }
}

} // namespace

int main(int argc, char **argv) {
  const std::string what = argc > 1 ? argv[1] : "";
  const int count = argc > 2 ? std::atoi(argv[2]) : 0;
  const std::uint64_t seed = argc > 3 ? std::strtoull(argv[3], nullptr, 10) : 1;
  const double noise = argc > 4 ? std::atof(argv[4]) : 0.05;
  const double factor = argc > 5 ? std::atof(argv[5]) : 0.0;
  if (what == "gap") {
    gap(count > 0 ? count : 5000, seed);
  } else if (what == "section8") {
    section8(count > 0 ? count : 20, seed, noise, factor);
  } else {
    std::fprintf(stderr, "usage: %s gap|section8 [count] [seed] [noise] [factor]\n", argv[0]);
    return 2;
  }
  return 0;
}
