// Bipartite matching primitives against brute force: every matching of graphs with at most 7
// vertices a side is enumerated, and each primitive's answer is compared with the best one.
#include "matching.hpp"
#include "schedule_support.hpp"

#include <algorithm>
#include <functional>
#include <optional>
#include <stdexcept>
#include <tuple>

namespace redist::test {
namespace {

/// A random bipartite graph from random_graph: weights are the volumes minus `shift` (so some
/// are zero or negative when shift > 0), and with `parallel_percent` chance an edge is doubled
/// with another weight (a multigraph).
BipartiteGraph random_bipartite(Random &rng, int max_nodes, Index max_weight, Index shift,
                                int parallel_percent) {
  const VolumeGraph g = random_graph(rng, max_nodes, rng.uniform_int(10, 100), max_weight);
  BipartiteGraph out{g.senders, g.receivers, {}};
  for (const Message &m : g.messages) {
    out.edges.push_back({m.src, m.dst, m.volume - shift});
    if (rng.chance(parallel_percent)) {
      out.edges.push_back({m.src, m.dst, rng.uniform(1, max_weight) - shift});
    }
  }
  return out;
}

std::string describe(const BipartiteGraph &g) {
  std::ostringstream os;
  os << "BipartiteGraph{" << g.left << "x" << g.right << ":";
  for (const WeightedEdge &e : g.edges) {
    os << " " << e.left << "-" << e.right << ":" << e.weight;
  }
  os << "}";
  return os.str();
}

/// Calls visit(matching) for every matching of `graph` (the empty one included), choosing for
/// each left vertex in turn no edge or one edge to a free right vertex.
void for_each_matching(const BipartiteGraph &graph,
                       const std::function<void(const Matching &)> &visit) {
  std::vector<std::vector<std::size_t>> at_left(static_cast<std::size_t>(graph.left));
  for (std::size_t e = 0; e < graph.edges.size(); ++e) {
    at_left[static_cast<std::size_t>(graph.edges[e].left)].push_back(e);
  }
  std::vector<bool> right_used(static_cast<std::size_t>(graph.right), false);
  Matching chosen;
  std::function<void(std::size_t)> extend = [&](std::size_t left) {
    if (left == at_left.size()) {
      Matching sorted = chosen;
      std::sort(sorted.begin(), sorted.end());
      visit(sorted);
      return;
    }
    extend(left + 1);
    for (const std::size_t e : at_left[left]) {
      const auto r = static_cast<std::size_t>(graph.edges[e].right);
      if (!right_used[r]) {
        right_used[r] = true;
        chosen.push_back(e);
        extend(left + 1);
        chosen.pop_back();
        right_used[r] = false;
      }
    }
  };
  extend(0);
}

Index min_weight(const BipartiteGraph &graph, const Matching &m) {
  Index lightest = std::numeric_limits<Index>::max();
  for (const std::size_t e : m) {
    lightest = std::min(lightest, graph.edges[e].weight);
  }
  return lightest;
}

/// A matching picked greedily at random, to seed the searches that accept a start.
Matching random_start(Random &rng, const BipartiteGraph &graph) {
  std::vector<bool> left_used(static_cast<std::size_t>(graph.left), false);
  std::vector<bool> right_used(static_cast<std::size_t>(graph.right), false);
  Matching m;
  for (std::size_t e = 0; e < graph.edges.size(); ++e) {
    const auto l = static_cast<std::size_t>(graph.edges[e].left);
    const auto r = static_cast<std::size_t>(graph.edges[e].right);
    if (!left_used[l] && !right_used[r] && rng.chance(40)) {
      left_used[l] = true;
      right_used[r] = true;
      m.push_back(e);
    }
  }
  return m;
}

TEST(Matching, MaximumCardinalityMatchesBruteForce) {
  Random rng(test_seed(201));
  for (int trial = 0; trial < 1500; ++trial) {
    const BipartiteGraph g = random_bipartite(rng, 7, 9, 0, 10);
    std::size_t best = 0;
    for_each_matching(g, [&](const Matching &m) { best = std::max(best, m.size()); });
    const Matching start = rng.chance(50) ? random_start(rng, g) : Matching{};
    const Matching m = maximum_cardinality_matching(g, start);
    ASSERT_EQ(matching_problem(g, m), "") << describe(g);
    ASSERT_EQ(m.size(), best) << describe(g);
  }
}

/// Random tie-break values, one per edge, or none.
std::vector<Index> random_tie_break(Random &rng, const BipartiteGraph &g) {
  std::vector<Index> tie_break;
  if (rng.chance(50)) {
    for (std::size_t e = 0; e < g.edges.size(); ++e) {
      tie_break.push_back(rng.uniform(0, 6));
    }
  }
  return tie_break;
}

Index tie_total(const std::vector<Index> &tie_break, const Matching &m) {
  Index sum = 0;
  for (const std::size_t e : m) {
    sum += tie_break.empty() ? 0 : tie_break[e];
  }
  return sum;
}

TEST(Matching, MaximumWeightMatchesBruteForce) {
  Random rng(test_seed(202));
  for (int trial = 0; trial < 1500; ++trial) {
    const Index shift = rng.chance(30) ? 5 : 0;
    const BipartiteGraph g = random_bipartite(rng, 7, 20, shift, 10);
    const std::vector<Index> tie_break = random_tie_break(rng, g);
    std::pair<Index, Index> best{0, 0};
    for_each_matching(g, [&](const Matching &m) {
      best = std::max(best, std::pair{matching_weight(g, m), tie_total(tie_break, m)});
    });
    const Matching m = maximum_weight_matching(g, tie_break);
    ASSERT_EQ(matching_problem(g, m), "") << describe(g);
    ASSERT_EQ(matching_weight(g, m), best.first) << describe(g);
    ASSERT_EQ(tie_total(tie_break, m), best.second) << describe(g);
    for (const std::size_t e : m) {
      const bool adds = g.edges[e].weight > 0 || (g.edges[e].weight == 0 && tie_break[e] > 0);
      ASSERT_TRUE(adds) << "edge " << e << " adds nothing in " << describe(g);
    }
  }
}

TEST(Matching, CoveringMarkedVerticesFirstThenWeightThenTieBreak) {
  Random rng(test_seed(203));
  int all_covered = 0;
  for (int trial = 0; trial < 1500; ++trial) {
    const BipartiteGraph g = random_bipartite(rng, 7, 20, rng.chance(20) ? 3 : 0, 5);
    const std::vector<Index> tie_break = random_tie_break(rng, g);
    std::vector<bool> left_marked(static_cast<std::size_t>(g.left));
    std::vector<bool> right_marked(static_cast<std::size_t>(g.right));
    const int percent = rng.uniform_int(0, 100);
    for (auto &&mark : left_marked) {
      mark = rng.chance(percent);
    }
    for (auto &&mark : right_marked) {
      mark = rng.chance(percent);
    }
    const auto covered = [&](const Matching &m) {
      Index count = 0;
      for (const std::size_t e : m) {
        count += left_marked[static_cast<std::size_t>(g.edges[e].left)] ? 1 : 0;
        count += right_marked[static_cast<std::size_t>(g.edges[e].right)] ? 1 : 0;
      }
      return count;
    };
    std::tuple<Index, Index, Index> best{0, 0, 0};
    for_each_matching(g, [&](const Matching &m) {
      best = std::max(best, std::tuple{covered(m), matching_weight(g, m), tie_total(tie_break, m)});
    });
    const Matching m = maximum_weight_matching_covering(g, left_marked, right_marked, tie_break);
    ASSERT_EQ(matching_problem(g, m), "") << describe(g);
    ASSERT_EQ(covered(m), std::get<0>(best)) << describe(g);
    ASSERT_EQ(matching_weight(g, m), std::get<1>(best)) << describe(g);
    ASSERT_EQ(tie_total(tie_break, m), std::get<2>(best)) << describe(g);
    const auto marked = std::count(left_marked.begin(), left_marked.end(), true) +
                        std::count(right_marked.begin(), right_marked.end(), true);
    all_covered += covered(m) == marked && marked > 0 ? 1 : 0;
  }
  EXPECT_GT(all_covered, 100); // the case Stepwise relies on is well represented
}

TEST(Matching, PerfectMatchingExactlyWhenOneExists) {
  Random rng(test_seed(204));
  int perfect_seen = 0;
  for (int trial = 0; trial < 2000; ++trial) {
    BipartiteGraph g = random_bipartite(rng, 7, 9, 0, 10);
    g.right = g.left; // square, dropping the edges that fall outside
    std::erase_if(g.edges, [&](const WeightedEdge &e) { return e.right >= g.right; });
    bool exists = false;
    for_each_matching(g, [&](const Matching &m) {
      exists = exists || m.size() == static_cast<std::size_t>(g.left);
    });
    const std::optional<Matching> m = perfect_matching(g, random_start(rng, g));
    ASSERT_EQ(m.has_value(), exists) << describe(g);
    if (m) {
      ASSERT_EQ(matching_problem(g, *m), "") << describe(g);
      ASSERT_EQ(m->size(), static_cast<std::size_t>(g.left)) << describe(g);
      ++perfect_seen;
    }
  }
  EXPECT_GT(perfect_seen, 200);
}

TEST(Matching, RegularAndWeightRegularGraphsHaveAPerfectMatching) {
  // A d-regular bipartite multigraph as a union of d random permutations, and a
  // weight-regular one by giving each permutation its own weight; larger than brute force
  // reaches, so only the defining property is checked.
  Random rng(test_seed(205));
  for (int trial = 0; trial < 300; ++trial) {
    const int n = rng.uniform_int(1, 60);
    const int d = rng.uniform_int(1, 6);
    const bool weighted = rng.chance(50);
    BipartiteGraph g{n, n, {}};
    std::vector<int> perm(static_cast<std::size_t>(n));
    for (int layer = 0; layer < d; ++layer) {
      for (int i = 0; i < n; ++i) {
        perm[static_cast<std::size_t>(i)] = i;
      }
      for (int i = n - 1; i > 0; --i) {
        std::swap(perm[static_cast<std::size_t>(i)],
                  perm[static_cast<std::size_t>(rng.uniform_int(0, i))]);
      }
      const Index w = weighted ? rng.uniform(1, 50) : 1;
      for (int i = 0; i < n; ++i) {
        g.edges.push_back({i, perm[static_cast<std::size_t>(i)], w});
      }
    }
    // Shuffle the edge order so that the permutation structure is not handed over.
    for (std::size_t i = g.edges.size() - 1; i > 0; --i) {
      std::swap(g.edges[i],
                g.edges[static_cast<std::size_t>(rng.uniform(0, static_cast<Index>(i)))]);
    }
    const std::optional<Matching> m = perfect_matching(g);
    ASSERT_TRUE(m.has_value()) << describe(g);
    ASSERT_EQ(matching_problem(g, *m), "");
    ASSERT_EQ(m->size(), static_cast<std::size_t>(n));
    const std::optional<Matching> b = bottleneck_perfect_matching(g);
    ASSERT_TRUE(b.has_value()) << describe(g);
    ASSERT_EQ(b->size(), static_cast<std::size_t>(n));
  }
}

TEST(Matching, BottleneckPerfectMatchingMatchesBruteForce) {
  Random rng(test_seed(206));
  int perfect_seen = 0;
  for (int trial = 0; trial < 2000; ++trial) {
    BipartiteGraph g = random_bipartite(rng, 7, 12, rng.chance(20) ? 4 : 0, 10);
    g.right = g.left;
    std::erase_if(g.edges, [&](const WeightedEdge &e) { return e.right >= g.right; });
    if (rng.chance(25)) { // weights spread over the whole 64-bit range, some repeated
      constexpr Index wide = Index{1} << 62;
      std::vector<Index> pool(6);
      for (Index &w : pool) {
        w = rng.uniform(-wide, wide);
      }
      for (WeightedEdge &e : g.edges) {
        e.weight = pool[static_cast<std::size_t>(rng.uniform_int(0, 5))];
      }
    }
    std::optional<Index> best;
    for_each_matching(g, [&](const Matching &m) {
      if (m.size() == static_cast<std::size_t>(g.left)) {
        best = std::max(best.value_or(std::numeric_limits<Index>::min()), min_weight(g, m));
      }
    });
    const std::optional<Matching> m = bottleneck_perfect_matching(g, random_start(rng, g));
    ASSERT_EQ(m.has_value(), best.has_value()) << describe(g);
    if (m) {
      ASSERT_EQ(matching_problem(g, *m), "") << describe(g);
      ASSERT_EQ(m->size(), static_cast<std::size_t>(g.left)) << describe(g);
      ASSERT_EQ(min_weight(g, *m), *best) << describe(g);
      ++perfect_seen;
    }
  }
  EXPECT_GT(perfect_seen, 200);
}

TEST(Matching, WeightAndCardinalityAgreeOnUnitWeightsOfLargerGraphs) {
  // Two independent algorithms: with every weight 1, a maximum weight matching is a maximum
  // cardinality one.
  Random rng(test_seed(207));
  for (int trial = 0; trial < 200; ++trial) {
    BipartiteGraph g = random_bipartite(rng, 80, 1, 0, 0);
    const Matching by_weight = maximum_weight_matching(g);
    const Matching by_count = maximum_cardinality_matching(g);
    ASSERT_EQ(matching_problem(g, by_weight), "");
    ASSERT_EQ(matching_problem(g, by_count), "");
    ASSERT_EQ(by_weight.size(), by_count.size()) << describe(g);
  }
}

TEST(Matching, SameInputSameMatching) {
  // Results depend on the input only: two graphs built separately from the same seed give
  // identical edge lists.
  const std::uint64_t seed = test_seed(208);
  Random first(seed);
  Random second(seed);
  for (int trial = 0; trial < 200; ++trial) {
    const BipartiteGraph g = random_bipartite(first, 30, 5, 0, 20);
    const BipartiteGraph same = random_bipartite(second, 30, 5, 0, 20);
    ASSERT_EQ(maximum_weight_matching(g), maximum_weight_matching(same));
    ASSERT_EQ(maximum_cardinality_matching(g), maximum_cardinality_matching(same));
    ASSERT_EQ(bottleneck_perfect_matching(g), bottleneck_perfect_matching(same));
  }
}

TEST(Matching, RefusesEdgesOutsideTheGraphAndBadStarts) {
  const BipartiteGraph bad{2, 2, {{0, 0, 1}, {2, 1, 1}}};
  EXPECT_THROW((void)maximum_weight_matching(bad), std::invalid_argument);
  EXPECT_THROW((void)maximum_cardinality_matching(bad), std::invalid_argument);
  EXPECT_THROW((void)perfect_matching(bad), std::invalid_argument);
  const BipartiteGraph g{2, 2, {{0, 0, 1}, {0, 1, 1}, {1, 1, 1}}};
  EXPECT_NE(matching_problem(g, {0, 1}), ""); // shares left vertex 0
  EXPECT_NE(matching_problem(g, {2, 0}), ""); // not increasing
  EXPECT_NE(matching_problem(g, {3}), "");    // no such edge
  EXPECT_EQ(matching_problem(g, {0, 2}), "");
  EXPECT_THROW((void)maximum_cardinality_matching(g, {0, 1}), std::invalid_argument);
  EXPECT_THROW((void)maximum_weight_matching_covering(g, {true}, {true, true}),
               std::invalid_argument);
  EXPECT_THROW((void)maximum_weight_matching(g, {1, 2}), std::invalid_argument);
  EXPECT_FALSE(perfect_matching(BipartiteGraph{2, 3, {}}).has_value());
  EXPECT_FALSE(
      bottleneck_perfect_matching(BipartiteGraph{2, 2, {{0, 0, 1}, {1, 0, 1}}}).has_value());
}

} // namespace
} // namespace redist::test
