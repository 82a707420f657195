#include "index.hpp"
#include "reference.hpp"

#include <gtest/gtest.h>

#include <numeric>
#include <string>
#include <vector>

namespace redist::test {
namespace {

// Shape rules every visit must obey: non-empty runs, increasing and disjoint in k, and no
// two consecutive runs that could have been one.
std::string check_run_shape(const std::vector<Run> &runs) {
  for (std::size_t i = 0; i < runs.size(); ++i) {
    const Run &r = runs[i];
    if (r.length < 1) {
      return "run " + std::to_string(i) + " " + to_string(r) + " is empty";
    }
    if (i > 0) {
      const Run &prev = runs[i - 1];
      if (prev.k + prev.length > r.k) {
        return "runs " + to_string(prev) + " and " + to_string(r) + " not increasing in k";
      }
      if (prev.k + prev.length == r.k && prev.src_local + prev.length == r.src_local &&
          prev.dst_local + prev.length == r.dst_local) {
        return "runs " + to_string(prev) + " and " + to_string(r) + " are not maximal";
      }
    }
  }
  return {};
}

std::vector<Element> clip(const std::vector<Element> &elements, Index lo, Index hi) {
  std::vector<Element> out;
  for (const Element &e : elements) {
    if (lo <= e.k && e.k < hi) {
      out.push_back(e);
    }
  }
  return out;
}

struct PatternCheck {
  int random_windows = 4;
  Index exhaustive_count_limit = 2000; // count_below at every x up to this window length
  int sampled_counts = 200;
};

// One pattern against the brute-force elements of its (source, destination) pair.
std::string check_pattern(const RunPattern &pattern, const std::vector<Element> &elements,
                          Index length, Random &rng, const PatternCheck &opt) {
  const std::vector<Run> runs = visit(pattern);
  if (std::string err = check_run_shape(runs); !err.empty()) {
    return "for_each(): " + err;
  }
  if (std::string err = run_diff(merge_elements(elements), runs); !err.empty()) {
    return "for_each(): " + err;
  }
  if (pattern.total() != static_cast<Index>(elements.size())) {
    return "total() = " + std::to_string(pattern.total()) + ", expected " +
           std::to_string(elements.size());
  }
  if (pattern.empty() != elements.empty()) {
    return "empty() = " + std::to_string(pattern.empty()) + " with " +
           std::to_string(elements.size()) + " elements";
  }
  if (pattern.window_length() != length) {
    return "window_length() = " + std::to_string(pattern.window_length());
  }

  const auto expected_below = [&](Index x) {
    const auto it = std::partition_point(elements.begin(), elements.end(),
                                         [x](const Element &e) { return e.k < x; });
    return static_cast<Index>(it - elements.begin());
  };
  const auto check_count = [&](Index x) -> std::string {
    const Index expected = expected_below(x);
    if (pattern.count_below(x) != expected) {
      return "count_below(" + std::to_string(x) + ") = " + std::to_string(pattern.count_below(x)) +
             ", expected " + std::to_string(expected);
    }
    return {};
  };
  if (length <= opt.exhaustive_count_limit) {
    for (Index x = 0; x <= length; ++x) {
      if (std::string err = check_count(x); !err.empty()) {
        return err;
      }
    }
  } else {
    for (int s = 0; s < opt.sampled_counts; ++s) {
      if (std::string err = check_count(rng.uniform(0, length)); !err.empty()) {
        return err;
      }
    }
    const std::size_t step = std::max<std::size_t>(1, runs.size() / 256);
    for (std::size_t i = 0; i < runs.size(); i += step) {
      const Run &r = runs[i];
      for (const Index x : {r.k, r.k + 1, r.k + r.length - 1, r.k + r.length}) {
        if (std::string err = check_count(x); !err.empty()) {
          return err;
        }
      }
    }
  }

  for (int w = 0; w < opt.random_windows; ++w) {
    Index lo = rng.uniform(0, length);
    Index hi = rng.uniform(0, length);
    if (rng.chance(70) && lo > hi) {
      std::swap(lo, hi);
    }
    if (rng.chance(10)) {
      lo -= rng.uniform(1, 5);
    }
    if (rng.chance(10)) {
      hi += rng.uniform(1, 5);
    }
    const std::vector<Run> clipped = visit(pattern, lo, hi);
    std::string err = check_run_shape(clipped);
    if (err.empty()) {
      err = run_diff(merge_elements(clip(elements, lo, hi)), clipped);
    }
    if (!err.empty()) {
      return "for_each(" + std::to_string(lo) + ", " + std::to_string(hi) + "): " + err;
    }
  }
  return {};
}

std::string pair_name(const char *fn, int p, int q) {
  return std::string(fn) + " p=" + std::to_string(p) + " q=" + std::to_string(q) + ": ";
}

// Everything about one 1-D transfer: both directions of lookup, every pair, against brute force.
std::string check_transfer(const Transfer1D &t, Random &rng, const PatternCheck &opt = {}) {
  const int np = t.src.nprocs;
  const int nq = t.dst.nprocs;
  const auto at = [nq](int p, int q) {
    return static_cast<std::size_t>(p) * static_cast<std::size_t>(nq) + static_cast<std::size_t>(q);
  };
  const auto pairs = brute_force_pairs(t);
  std::vector<std::vector<Run>> from_runs(pairs.size());
  for (int p = 0; p < np; ++p) {
    const std::vector<RunPattern> from = runs_from_source(t, p);
    if (from.size() != static_cast<std::size_t>(nq)) {
      return "runs_from_source p=" + std::to_string(p) + " returned " +
             std::to_string(from.size()) + " patterns";
    }
    for (int q = 0; q < nq; ++q) {
      const RunPattern &pattern = from[static_cast<std::size_t>(q)];
      if (std::string err = check_pattern(pattern, pairs[at(p, q)], t.length, rng, opt);
          !err.empty()) {
        return pair_name("runs_from_source", p, q) + err;
      }
      from_runs[at(p, q)] = visit(pattern);
    }
  }
  for (int q = 0; q < nq; ++q) {
    const std::vector<RunPattern> to = runs_to_destination(t, q);
    if (to.size() != static_cast<std::size_t>(np)) {
      return "runs_to_destination q=" + std::to_string(q) + " returned " +
             std::to_string(to.size()) + " patterns";
    }
    for (int p = 0; p < np; ++p) {
      const RunPattern &pattern = to[static_cast<std::size_t>(p)];
      if (std::string err = check_pattern(pattern, pairs[at(p, q)], t.length, rng, opt);
          !err.empty()) {
        return pair_name("runs_to_destination", p, q) + err;
      }
      if (std::string err = run_diff(from_runs[at(p, q)], visit(pattern)); !err.empty()) {
        return pair_name("runs_to_destination vs runs_from_source", p, q) + err;
      }
    }
  }
  return {};
}

void run_random_cases(std::uint64_t default_seed, int cases, Index max_extent, Index max_block,
                      int max_procs, const PatternCheck &opt = {}) {
  Random rng(test_seed(default_seed));
  int failures = 0;
  for (int c = 0; c < cases && failures < 5; ++c) {
    const Transfer1D t = random_transfer(rng, max_extent, max_block, max_procs);
    if (const std::string err = check_transfer(t, rng, opt); !err.empty()) {
      ADD_FAILURE() << "case " << c << " " << describe(t) << "\n  " << err;
      ++failures;
    }
  }
}

TEST(Index1D, RandomCasesMatchBruteForce) {
  run_random_cases(1, 12000, 500, 40, 17);
}

// Long windows with short patterns: many stored periods, merging across period boundaries.
TEST(Index1D, RandomLongWindowsMatchBruteForce) {
  run_random_cases(2, 200, 200000, 12, 6, {.random_windows = 6, .sampled_counts = 300});
}

// Periods longer than the window, or just a few periods in it.
TEST(Index1D, RandomLargeBlocksMatchBruteForce) {
  run_random_cases(3, 400, 6000, 400, 9);
}

TEST(Index1D, PeriodInfoIsAPeriodOfTheWindow) {
  Random rng(test_seed(4));
  for (int c = 0; c < 3000; ++c) {
    const Transfer1D t =
        c % 2 == 0 ? random_transfer(rng, 3000, 40, 17) : random_transfer(rng, 40000, 12, 8);
    const PeriodInfo info = period_info(t);
    SCOPED_TRACE(describe(t));
    ASSERT_GE(info.period, 1);
    if (info.period >= t.length) {
      continue;
    }
    for (Index k = 0; k + info.period < t.length; ++k) {
      const Index gs = t.src_start + k;
      const Index gd = t.dst_start + k;
      ASSERT_EQ(ref_owner(t.src, gs + info.period), ref_owner(t.src, gs)) << "k=" << k;
      ASSERT_EQ(ref_owner(t.dst, gd + info.period), ref_owner(t.dst, gd)) << "k=" << k;
      ASSERT_EQ(ref_local(t.src, gs + info.period), ref_local(t.src, gs) + info.src_stride);
      ASSERT_EQ(ref_local(t.dst, gd + info.period), ref_local(t.dst, gd) + info.dst_stride);
    }
  }
}

struct EdgeCase {
  const char *name;
  Transfer1D t;
  std::vector<Run> only_runs; // when non-empty: the runs of the one non-empty pair
  int only_p = 0;
  int only_q = 0;
};

TEST(Index1D, EdgeCases) {
  const EdgeCase cases[] = {
      {"length 0", {{100, 7, 3, 1}, {50, 4, 5, 2}, 10, 20, 0}, {}},
      {"length 0 of empty extents", {{0, 7, 3, 1}, {0, 4, 5, 2}, 0, 0, 0}, {}},
      {"P=Q=1", {{300, 7, 1, 0}, {300, 13, 1, 0}, 17, 40, 250}, {{0, 250, 17, 40}}},
      {"P=Q=1 long",
       {{10'000'000, 7, 1, 0}, {9'999'999, 1, 1, 0}, 1, 0, 9'999'999},
       {{0, 9'999'999, 1, 0}}},
      {"block larger than extent",
       {{50, 64, 4, 2}, {50, 100, 3, 1}, 0, 0, 50},
       {{0, 50, 0, 0}},
       2,
       1},
      {"block larger than extent, offsets",
       {{50, 64, 4, 2}, {70, 100, 3, 1}, 10, 30, 40},
       {{0, 40, 10, 30}},
       2,
       1},
      {"window at the very end", {{500, 40, 17, 16}, {321, 7, 5, 3}, 179, 0, 321}, {}},
      {"window at the very end of both", {{400, 9, 6, 5}, {250, 11, 4, 3}, 390, 240, 10}, {}},
      {"last element only",
       {{400, 9, 6, 5}, {250, 11, 4, 3}, 399, 249, 1},
       {{0, 1, (399 / 54) * 9 + 399 % 9, (249 / 44) * 11 + 249 % 11}},
       static_cast<int>((399 / 9 + 5) % 6),
       static_cast<int>((249 / 11 + 3) % 4)},
      {"src != 0 both sides", {{200, 5, 7, 6}, {200, 3, 4, 3}, 13, 29, 150}, {}},
      {"identity layout", {{333, 8, 5, 2}, {333, 8, 5, 2}, 0, 0, 333}, {}},
      {"block 1, coprime P and Q", {{400, 1, 17, 16}, {400, 1, 16, 15}, 3, 1, 390}, {}},
      {"P=1 to Q=17", {{500, 40, 1, 0}, {500, 3, 17, 9}, 0, 11, 489}, {}},
      {"P=17 to Q=1", {{500, 3, 17, 9}, {500, 40, 1, 0}, 11, 0, 489}, {}},
      {"one element", {{1, 1, 1, 0}, {1, 1, 1, 0}, 0, 0, 1}, {{0, 1, 0, 0}}},
      {"two whole periods", {{12800, 64, 4, 1}, {12800, 100, 4, 2}, 0, 0, 12800}, {}},
  };
  Random rng(test_seed(5));
  for (const EdgeCase &c : cases) {
    SCOPED_TRACE(std::string(c.name) + " " + describe(c.t));
    if (c.t.length <= 100000) {
      EXPECT_EQ(check_transfer(c.t, rng), "");
    }
    if (c.t.length == 0) {
      for (int p = 0; p < c.t.src.nprocs; ++p) {
        for (const RunPattern &pattern : runs_from_source(c.t, p)) {
          EXPECT_TRUE(pattern.empty());
          EXPECT_EQ(pattern.total(), 0);
          EXPECT_EQ(pattern.count_below(0), 0);
          EXPECT_TRUE(visit(pattern).empty());
        }
      }
    }
    if (!c.only_runs.empty()) {
      for (int p = 0; p < c.t.src.nprocs; ++p) {
        const std::vector<RunPattern> from = runs_from_source(c.t, p);
        for (int q = 0; q < c.t.dst.nprocs; ++q) {
          const RunPattern &pattern = from[static_cast<std::size_t>(q)];
          if (p == c.only_p && q == c.only_q) {
            EXPECT_EQ(run_diff(c.only_runs, visit(pattern)), "");
            EXPECT_EQ(pattern.total(), c.t.length);
            EXPECT_EQ(pattern.count_below(c.t.length / 2), c.t.length / 2);
          } else {
            EXPECT_EQ(pattern.total(), 0) << "p=" << p << " q=" << q;
          }
        }
      }
    }
  }
}

TEST(Index1D, ForEachOnEmptyRangeCallsNothing) {
  const Transfer1D t{{100, 7, 3, 1}, {100, 4, 5, 2}, 0, 0, 100};
  for (const RunPattern &pattern : runs_from_source(t, 1)) {
    for (const auto &[lo, hi] :
         {std::pair<Index, Index>{0, 0}, {50, 50}, {60, 40}, {100, 200}, {-10, 0}, {100, 100}}) {
      EXPECT_TRUE(visit(pattern, lo, hi).empty()) << "lo=" << lo << " hi=" << hi;
    }
  }
}

TEST(RunPattern, AppendMergesAndPeriodsRepeat) {
  RunPattern pattern(12, 6, 3, 6);
  pattern.append({0, 1, 0, 0});
  pattern.append({1, 2, 1, 1});
  pattern.append({4, 1, 5, 5});
  pattern.finish();
  EXPECT_EQ(run_diff({{0, 3, 0, 0}, {4, 1, 5, 5}}, pattern.period_runs()), "");
  EXPECT_EQ(pattern.total(), 8);
  EXPECT_EQ(run_diff({{0, 3, 0, 0}, {4, 1, 5, 5}, {6, 3, 3, 6}, {10, 1, 8, 11}}, visit(pattern)),
            "");
  EXPECT_EQ(run_diff({{2, 1, 2, 2}, {4, 1, 5, 5}, {6, 1, 3, 6}}, visit(pattern, 2, 7)), "");
  const Index below[] = {0, 1, 2, 3, 3, 4, 4, 5, 6, 7, 7, 8, 8};
  for (Index x = 0; x <= 12; ++x) {
    EXPECT_EQ(pattern.count_below(x), below[x]) << "x=" << x;
  }
}

TEST(RunPattern, ForEachMergesAcrossPeriods) {
  RunPattern pattern(10, 4, 2, 4);
  pattern.append({2, 2, 0, 0});
  pattern.finish();
  EXPECT_EQ(run_diff({{2, 2, 0, 0}, {6, 2, 2, 4}}, visit(pattern)), "");
  RunPattern whole(10, 4, 4, 4);
  whole.append({0, 4, 7, 9});
  whole.finish();
  EXPECT_EQ(run_diff({{0, 10, 7, 9}}, visit(whole)), "");
  EXPECT_EQ(run_diff({{3, 6, 10, 12}}, visit(whole, 3, 9)), "");
}

// Elements of pair (p, q) with window index < x, computed by brute force over one period of
// the joint pattern and its remainder (the pattern repeats every lcm of the two periods).
struct PeriodicCounter {
  Transfer1D t;
  Index lcm = 1;

  [[nodiscard]] Index count_below(int p, int q, Index x) const {
    const auto in_prefix = [&](Index n) {
      Index count = 0;
      for (Index k = 0; k < n; ++k) {
        count += ref_owner(t.src, t.src_start + k) == p && ref_owner(t.dst, t.dst_start + k) == q;
      }
      return count;
    };
    return (x / lcm) * in_prefix(lcm) + in_prefix(x % lcm);
  }
};

TEST(Index1D, ScaleMemoryAndCountsDoNotGrowWithExtent) {
  constexpr int kProcs = 4;
  const Index lcm = std::lcm(Index{64} * kProcs, Index{100} * kProcs);
  Random rng(test_seed(6));
  std::size_t memory_at_million = 0;
  for (const Index extent :
       {Index{1000}, Index{1'000'000}, Index{1'000'000'000}, Index{1'000'000'000'000}}) {
    const Transfer1D t{{extent, 64, kProcs, 1}, {extent + 5, 100, kProcs, 2}, 37, 42, extent - 37};
    SCOPED_TRACE(describe(t));
    const PeriodicCounter counter{t, lcm};
    ASSERT_LE(period_info(t).period, std::max(lcm, Index{4096}));

    std::size_t memory = 0;
    std::vector<Index> into_destination(kProcs, 0);
    const Index probes[] = {t.length,
                            t.length - 1,
                            std::min(lcm, t.length),
                            std::min(lcm + 1, t.length),
                            rng.uniform(0, t.length),
                            rng.uniform(0, t.length)};
    for (int p = 0; p < kProcs; ++p) {
      const std::vector<RunPattern> from = runs_from_source(t, p);
      Index from_source = 0;
      for (int q = 0; q < kProcs; ++q) {
        const RunPattern &pattern = from[static_cast<std::size_t>(q)];
        memory = std::max(memory, pattern.memory_bytes());
        from_source += pattern.total();
        into_destination[static_cast<std::size_t>(q)] += pattern.total();
        for (const Index x : probes) {
          EXPECT_EQ(pattern.count_below(x), counter.count_below(p, q, x))
              << "p=" << p << " q=" << q << " x=" << x;
        }
        const Index lo = std::max(Index{0}, t.length - 3000);
        std::vector<Element> tail;
        for (Index k = lo; k < t.length; ++k) {
          const Index gs = t.src_start + k;
          const Index gd = t.dst_start + k;
          if (ref_owner(t.src, gs) == p && ref_owner(t.dst, gd) == q) {
            tail.push_back({k, ref_local(t.src, gs), ref_local(t.dst, gd)});
          }
        }
        EXPECT_EQ(run_diff(merge_elements(tail), visit(pattern, lo, t.length)), "")
            << "p=" << p << " q=" << q;
      }
      EXPECT_EQ(from_source, owned_in_range(t.src, p, t.src_start, t.src_start + t.length));
    }
    for (int q = 0; q < kProcs; ++q) {
      EXPECT_EQ(into_destination[static_cast<std::size_t>(q)],
                owned_in_range(t.dst, q, t.dst_start, t.dst_start + t.length))
          << "q=" << q;
      for (const RunPattern &pattern : runs_to_destination(t, q)) {
        memory = std::max(memory, pattern.memory_bytes());
      }
    }
    std::cout << "[   INFO   ] extent " << extent << ": largest RunPattern " << memory
              << " bytes\n";
    EXPECT_LE(memory, std::size_t{16} * 1024);
    if (extent == 1'000'000) {
      memory_at_million = memory;
    } else if (extent > 1'000'000) {
      EXPECT_LE(memory, 2 * memory_at_million);
    }
  }
}

} // namespace
} // namespace redist::test
