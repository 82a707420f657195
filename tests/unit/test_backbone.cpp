// The backbone model (backbone.hpp): the cost of a schedule, the lower bound against the exact
// optimum of tiny instances found by exhaustive search, and the fluid all-at-once model on
// cases computed by hand (docs/references.md, Jeannot & Wagner 2004) and on random graphs.
#include "backbone.hpp"
#include "schedule_support.hpp"

#include <cmath>
#include <functional>
#include <iostream>
#include <limits>
#include <map>
#include <stdexcept>

namespace redist::test {
namespace {

VolumeGraph graph_of(int senders, int receivers, std::vector<Message> messages) {
  VolumeGraph g{senders, receivers, std::move(messages)};
  g.normalize();
  return g;
}

/// The least cost sum over steps of (beta + largest piece) of any schedule whose pieces are
/// whole elements, found by exhaustive search memoised on the elements left of each message:
/// a step sends 1..left elements of each message of a set of messages with elements left, no
/// two sharing a sender or a receiver, at most k of them (k <= 0: no limit). Independent of
/// the library but for the graph type; tiny graphs only.
double exact_optimum(const VolumeGraph &g, int k, double beta) {
  const std::size_t m = g.messages.size();
  std::map<std::vector<Index>, double> best;
  std::function<double(const std::vector<Index> &)> solve = [&](const std::vector<Index> &left) {
    if (std::all_of(left.begin(), left.end(), [](Index v) { return v == 0; })) {
      return 0.0;
    }
    if (const auto it = best.find(left); it != best.end()) {
      return it->second;
    }
    double cheapest = std::numeric_limits<double>::infinity();
    std::vector<Index> after = left;
    // Chooses the piece of message i (0 = none), then of the messages after it.
    std::function<void(std::size_t, int, Index, std::vector<int> &, std::vector<int> &)> choose =
        [&](std::size_t i, int pieces, Index largest, std::vector<int> &src_busy,
            std::vector<int> &dst_busy) {
          if (i == m) {
            if (pieces > 0) {
              cheapest = std::min(cheapest, beta + static_cast<double>(largest) + solve(after));
            }
            return;
          }
          choose(i + 1, pieces, largest, src_busy, dst_busy);
          const Message &msg = g.messages[i];
          int &src = src_busy[static_cast<std::size_t>(msg.src)];
          int &dst = dst_busy[static_cast<std::size_t>(msg.dst)];
          if (left[i] == 0 || src != 0 || dst != 0 || (k > 0 && pieces == k)) {
            return;
          }
          src = dst = 1;
          for (Index piece = 1; piece <= left[i]; ++piece) {
            after[i] = left[i] - piece;
            choose(i + 1, pieces + 1, std::max(largest, piece), src_busy, dst_busy);
          }
          after[i] = left[i];
          src = dst = 0;
        };
    std::vector<int> src_busy(static_cast<std::size_t>(g.senders), 0);
    std::vector<int> dst_busy(static_cast<std::size_t>(g.receivers), 0);
    choose(0, 0, 0, src_busy, dst_busy);
    best[left] = cheapest;
    return cheapest;
  };
  std::vector<Index> volumes;
  for (const Message &msg : g.messages) {
    volumes.push_back(msg.volume);
  }
  return solve(volumes);
}

/// Every bipartite graph of two or three messages up to isomorphism: 2K2, the two P3 (a
/// sender or a receiver shared), the two stars of three, P4, the two P3 + K2, 3K2.
const std::vector<VolumeGraph> &tiny_shapes() {
  static const std::vector<VolumeGraph> shapes{
      {2, 2, {{0, 0, 1}, {1, 1, 1}}},
      {1, 2, {{0, 0, 1}, {0, 1, 1}}},
      {2, 1, {{0, 0, 1}, {1, 0, 1}}},
      {1, 3, {{0, 0, 1}, {0, 1, 1}, {0, 2, 1}}},
      {3, 1, {{0, 0, 1}, {1, 0, 1}, {2, 0, 1}}},
      {2, 2, {{0, 0, 1}, {0, 1, 1}, {1, 1, 1}}},
      {2, 3, {{0, 0, 1}, {0, 1, 1}, {1, 2, 1}}},
      {3, 2, {{0, 0, 1}, {1, 0, 1}, {2, 1, 1}}},
      {3, 3, {{0, 0, 1}, {1, 1, 1}, {2, 2, 1}}},
  };
  return shapes;
}

VolumeGraph scaled(VolumeGraph g, Index factor) {
  for (Message &msg : g.messages) {
    msg.volume *= factor;
  }
  return g;
}

TEST(BackboneModel, ExactOptimumOfHandCheckedCases) {
  // k = 1: three steps, each a whole message.
  EXPECT_DOUBLE_EQ(exact_optimum(graph_of(2, 2, {{0, 0, 3}, {0, 1, 2}, {1, 0, 4}}), 1, 1.0), 12.0);
  // a-x 6, b-y 1, beta = 1: one step of both, 1 + 6.
  EXPECT_DOUBLE_EQ(exact_optimum(graph_of(2, 2, {{0, 0, 6}, {1, 1, 1}}), 0, 1.0), 7.0);
  // a-x 4, a-y 4, beta = 0.5: the node a takes two steps, of 4 each at best.
  EXPECT_DOUBLE_EQ(exact_optimum(graph_of(1, 2, {{0, 0, 4}, {0, 1, 4}}), 0, 0.5), 9.0);
}

TEST(BackboneModel, NotesT1AndT2ThroughTheModel) {
  // T1: one message of 10, k = 2, beta = 1: one step, cost 11 = lower bound = optimum.
  const VolumeGraph t1 = graph_of(1, 1, {{0, 0, 10}});
  // T2: a-x, b-y, c-z of 2, k = 2, beta = 1: three steps of two pieces of 1, cost 6, the
  // optimum (two steps would need a whole message of 2 in each); lower bound 5.
  const VolumeGraph t2 = graph_of(3, 3, {{0, 0, 2}, {1, 1, 2}, {2, 2, 2}});
  EXPECT_DOUBLE_EQ(backbone_lower_bound(t1, 2, 1.0), 11.0);
  EXPECT_DOUBLE_EQ(backbone_lower_bound(t2, 2, 1.0), 5.0);
  EXPECT_DOUBLE_EQ(exact_optimum(t1, 2, 1.0), 11.0);
  EXPECT_DOUBLE_EQ(exact_optimum(t2, 2, 1.0), 6.0);
  for (const auto scheduler : {schedule_ggp, schedule_oggp}) {
    EXPECT_DOUBLE_EQ(backbone_schedule_cost(t1, scheduler(t1, 2, 1), 2, 1.0), 11.0);
    EXPECT_DOUBLE_EQ(backbone_schedule_cost(t2, scheduler(t2, 2, 1), 2, 1.0), 6.0);
  }
  // All at once: T1's message at one stream's rate, 1 + 10. T2's three messages share the
  // backbone's two streams, 2/3 each, and complete together at 3: 1 + 3.
  EXPECT_DOUBLE_EQ(backbone_all_at_once_cost(t1, 2, 1.0), 11.0);
  EXPECT_NEAR(backbone_all_at_once_cost(t2, 2, 1.0), 4.0, 1e-12);
}

TEST(BackboneModel, ScheduleCostIsSetupPlusLargestPiecePerStep) {
  const VolumeGraph g = graph_of(2, 2, {{0, 0, 5}, {0, 1, 2}, {1, 1, 4}});
  Schedule s;
  s.steps.push_back({{{0, 0, 0, 3}, {1, 1, 0, 4}}});
  s.steps.push_back({{{0, 0, 3, 2}}});
  s.steps.push_back({{{0, 1, 0, 2}}});
  EXPECT_DOUBLE_EQ(backbone_schedule_cost(g, s, 2, 1.5), (1.5 + 4) + (1.5 + 2) + (1.5 + 2));
  // Two pieces in a step where the backbone carries one.
  EXPECT_THROW((void)backbone_schedule_cost(g, s, 1, 1.5), std::invalid_argument);
  // Not a matching: sender 0 twice.
  EXPECT_THROW((void)backbone_schedule_cost(g, schedule_all_at_once(g), 0, 1.0),
               std::invalid_argument);
  EXPECT_THROW((void)backbone_schedule_cost(g, s, 2, -1.0), std::invalid_argument);
  EXPECT_THROW((void)backbone_all_at_once_cost(g, 2, std::nan("")), std::invalid_argument);
}

TEST(BackboneModel, LowerBoundAtMostTheExactOptimum) {
  // Every tiny shape, every volume 1..4 per message, k = 1..3, beta = 1, 2. The bound holds for
  // pieces of any real size; the exhaustive search splits into whole elements, and with
  // volumes and beta doubled into halves (volumes up to 3, beta = 1). Every GGP and OGGP
  // schedule is one of those searched (integer beta), so the optimum is at most theirs.
  int tight = 0;
  int instances = 0;
  double worst[2] = {1.0, 1.0}; // GGP and OGGP cost / optimum
  for (VolumeGraph g : tiny_shapes()) {
    const std::size_t m = g.messages.size();
    for (int code = 0; code < (1 << (2 * m)); ++code) {
      for (std::size_t i = 0; i < m; ++i) {
        g.messages[i].volume = 1 + ((code >> (2 * i)) & 3);
      }
      for (int k = 1; k <= 3; ++k) {
        for (Index beta = 1; beta <= 2; ++beta) {
          const auto setup = static_cast<double>(beta);
          const double bound = backbone_lower_bound(g, k, setup);
          const double optimum = exact_optimum(g, k, setup);
          ASSERT_LE(bound, optimum + 1e-9) << describe(g) << " k=" << k << " beta=" << beta;
          ++instances;
          tight += bound >= optimum - 1e-9 ? 1 : 0;
          for (const int o : {0, 1}) {
            const Schedule s = o == 0 ? schedule_ggp(g, k, beta) : schedule_oggp(g, k, beta);
            const double cost = backbone_schedule_cost(g, s, k, setup);
            ASSERT_GE(cost, optimum - 1e-9) << describe(g) << " k=" << k << " beta=" << beta;
            worst[o] = std::max(worst[o], cost / optimum);
          }
          if (beta == 1 && g.max_node_volume() <= 6 &&
              std::all_of(g.messages.begin(), g.messages.end(),
                          [](const Message &msg) { return msg.volume <= 3; })) {
            const double halves = exact_optimum(scaled(g, 2), k, 2.0) / 2;
            ASSERT_LE(bound, halves + 1e-9) << describe(g) << " k=" << k;
            ASSERT_LE(halves, optimum + 1e-9) << describe(g) << " k=" << k;
          }
        }
      }
    }
  }
  std::cout << "[  BOUND   ] lower bound = exact optimum on " << tight << " of " << instances
            << " tiny instances; cost / optimum at worst: GGP " << worst[0] << ", OGGP " << worst[1]
            << "\n";
}

TEST(BackboneModel, LowerBoundIgnoresEmptyMessages) {
  VolumeGraph g = graph_of(2, 2, {{0, 0, 4}, {1, 1, 3}});
  const double bound = backbone_lower_bound(g, 1, 1.0); // 1 * 2 + 7
  EXPECT_DOUBLE_EQ(bound, 9.0);
  g.messages.insert(g.messages.begin() + 1, Message{0, 1, 0});
  g.messages.push_back({1, 0, 0});
  EXPECT_DOUBLE_EQ(backbone_lower_bound(g, 1, 1.0), bound);
  EXPECT_DOUBLE_EQ(backbone_all_at_once_cost(g, 1, 1.0), 1.0 + 7.0);
}

TEST(BackboneModel, LowerBoundAtMostGgpAndOggpOnPaperSizedGraphs) {
  // Jeannot & Wagner 2004, Sec. 5.1's setting: up to 40 nodes, up to 400 messages, volumes 1..20 or
  // 1..10000.
  Random rng(test_seed(602));
  for (int trial = 0; trial < 1000; ++trial) {
    const VolumeGraph g =
        random_graph(rng, 20, rng.uniform_int(5, 100), rng.chance(50) ? 20 : 10000);
    const int k = rng.uniform_int(1, 20);
    const Index beta = rng.chance(70) ? 1 : rng.uniform(2, 30);
    const double bound = backbone_lower_bound(g, k, static_cast<double>(beta));
    for (const auto scheduler : {schedule_ggp, schedule_oggp}) {
      const double cost =
          backbone_schedule_cost(g, scheduler(g, k, beta), k, static_cast<double>(beta));
      ASSERT_GE(cost, bound - 1e-9) << describe(g) << " k=" << k << " beta=" << beta;
    }
  }
}

// --- All at once through the backbone, as a fluid model (times with beta = 0). ---

TEST(BackboneAllAtOnce, HandComputedCases) {
  // One sender, three receivers of 3: the sender's card shares one stream, 1/3 each, all end
  // at 9 (unlimited k is min(1, 3) = 1 stream anyway).
  EXPECT_NEAR(backbone_all_at_once_cost(graph_of(1, 3, {{0, 0, 3}, {0, 1, 3}, {0, 2, 3}}), 0, 0.0),
              9.0, 1e-9);
  // k = 2, a-x 4, b-y 1, c-z 1: 2/3 each until the small ones end at 1.5; a-x has 3 left at
  // rate 1: 4.5, where giving a-x a whole stream from the start ends at 4 (fair is not optimal).
  EXPECT_NEAR(backbone_all_at_once_cost(graph_of(3, 3, {{0, 0, 4}, {1, 1, 1}, {2, 2, 1}}), 2, 0.0),
              4.5, 1e-9);
  // k = 1, disjoint messages of 1, 2, 3: rates 1/3 until 3, 1/2 until 5, then 1 until 6 = P.
  EXPECT_NEAR(backbone_all_at_once_cost(graph_of(3, 3, {{0, 0, 1}, {1, 1, 2}, {2, 2, 3}}), 1, 2.0),
              2.0 + 6.0, 1e-9);
  // k = 2, a-x 3, a-y 3, b-z 6: a's card fills first (1/2 each); b-z takes the backbone's
  // other stream at rate 1; all three end at 6.
  EXPECT_NEAR(backbone_all_at_once_cost(graph_of(2, 3, {{0, 0, 3}, {0, 1, 3}, {1, 2, 6}}), 2, 0.0),
              6.0, 1e-9);
  // k = 2, a-x 2, b-x 2, c-y 6: x's card gives 1/2 each until 4; c-y runs at 1 and ends at 6.
  EXPECT_NEAR(backbone_all_at_once_cost(graph_of(3, 2, {{0, 0, 2}, {1, 0, 2}, {2, 1, 6}}), 2, 0.0),
              6.0, 1e-9);
  EXPECT_DOUBLE_EQ(backbone_all_at_once_cost(VolumeGraph{3, 3, {}}, 2, 1.0), 0.0);
}

TEST(BackboneAllAtOnce, BoundsOnRandomGraphs) {
  // No schedule, fluid or not, beats max(W, P / k) (the lower bound without setups); with one
  // stream the backbone is always full, so the time is P; and a max-min fair share always has
  // a full capacity on each message's path (its sender's, its receiver's or the backbone), each
  // full no longer than its work, so the last message ends by w(sender) + w(receiver) + P / k.
  Random rng(test_seed(603));
  for (int trial = 0; trial < 500; ++trial) {
    const VolumeGraph g = random_graph(rng, 12, rng.uniform_int(5, 100), 50);
    if (g.messages.empty()) {
      continue;
    }
    const int k = rng.uniform_int(0, 12);
    const double streams = backbone_streams(g, k);
    const auto total = static_cast<double>(g.total());
    const auto heaviest = static_cast<double>(g.max_node_volume());
    const double time = backbone_all_at_once_cost(g, k, 0.0);
    ASSERT_GE(time, std::max(heaviest, total / streams) * (1 - 1e-9)) << describe(g) << " k=" << k;
    ASSERT_LE(time, (2 * heaviest + total / streams) * (1 + 1e-9)) << describe(g) << " k=" << k;
    ASSERT_NEAR(backbone_all_at_once_cost(g, 1, 0.0), total, 1e-9 * total) << describe(g);
  }
}

TEST(BackboneAllAtOnce, DisjointMessagesWithinTheBackboneRunAtFullRate) {
  // Node-disjoint messages, at most k of them: each gets a whole stream, so the time is the
  // largest message.
  Random rng(test_seed(604));
  for (int trial = 0; trial < 200; ++trial) {
    const int n = rng.uniform_int(1, 10);
    VolumeGraph g{n, n, {}};
    Index largest = 0;
    for (int p = 0; p < n; ++p) {
      if (rng.chance(70)) {
        g.messages.push_back({p, p, rng.uniform(1, 100)});
        largest = std::max(largest, g.messages.back().volume);
      }
    }
    const int k = static_cast<int>(g.messages.size()) + rng.uniform_int(0, 3);
    EXPECT_NEAR(backbone_all_at_once_cost(g, k, 0.0), static_cast<double>(largest), 1e-9)
        << describe(g);
  }
}

} // namespace
} // namespace redist::test
