// The schedule layer's common parts: volume graphs against element enumeration, the validity
// checker against hand-made bad schedules, statistics, all-at-once and caterpillar.
#include "schedule_support.hpp"

#include <tuple>

namespace redist::test {
namespace {

TEST(VolumeGraph, OneDimensionMatchesEnumeration) {
  Random rng(test_seed(11));
  for (int trial = 0; trial < 2000; ++trial) {
    const Transfer1D t = random_transfer(rng, 300, 9, 7);
    const VolumeGraph g = volume_graph(t);
    const auto pairs = brute_force_pairs(t);
    Index messages = 0;
    for (int p = 0; p < t.src.nprocs; ++p) {
      for (int q = 0; q < t.dst.nprocs; ++q) {
        const auto expected =
            static_cast<Index>(pairs[static_cast<std::size_t>(p * t.dst.nprocs + q)].size());
        ASSERT_EQ(g.volume(p, q), expected) << describe(t) << " p=" << p << " q=" << q;
        messages += expected > 0 ? 1 : 0;
      }
    }
    ASSERT_EQ(static_cast<Index>(g.messages.size()), messages) << describe(t);
    ASSERT_EQ(g.total(), t.length) << describe(t);
  }
}

TEST(VolumeGraph, TwoDimensionsCountTrapezoidElements) {
  Random rng(test_seed(12));
  for (int trial = 0; trial < 300; ++trial) {
    int comm_size = 0;
    const Transfer t = random_transfer_2d(rng, 40, 5, 3, comm_size);
    const Transfer1D r = t.rows();
    const Transfer1D c = t.cols();
    const VolumeGraph g = volume_graph(t);
    std::vector<Index> expected(static_cast<std::size_t>(g.senders * g.receivers), 0);
    for (Index j = 0; j < t.n; ++j) {
      for (Index i = 0; i < t.m; ++i) {
        if (!reference_copied(t.region.kind, t.region.unit_diag, i, j, t.m, t.n)) {
          continue;
        }
        const int src =
            ref_owner(r.src, r.src_start + i) + ref_owner(c.src, c.src_start + j) * r.src.nprocs;
        const int dst =
            ref_owner(r.dst, r.dst_start + i) + ref_owner(c.dst, c.dst_start + j) * r.dst.nprocs;
        ++expected[static_cast<std::size_t>(src * g.receivers + dst)];
      }
    }
    for (int s = 0; s < g.senders; ++s) {
      for (int d = 0; d < g.receivers; ++d) {
        ASSERT_EQ(g.volume(s, d), expected[static_cast<std::size_t>(s * g.receivers + d)])
            << "trial " << trial << " " << s << "->" << d;
      }
    }
  }
}

VolumeGraph two_by_two() {
  VolumeGraph g;
  g.senders = 2;
  g.receivers = 2;
  g.messages = {{0, 0, 4}, {0, 1, 3}, {1, 0, 2}, {1, 1, 5}};
  return g;
}

TEST(CheckSchedule, AcceptsAValidSplitSchedule) {
  const VolumeGraph g = two_by_two();
  Schedule s;
  s.steps = {{{{0, 0, 0, 4}, {1, 1, 0, 2}}}, {{{0, 1, 0, 3}, {1, 0, 0, 2}}}, {{{1, 1, 2, 3}}}};
  EXPECT_EQ(check_schedule(g, s, {}), "");
  EXPECT_EQ(check_schedule(g, s, {true, 2}), "");
}

TEST(CheckSchedule, RefusesEachKindOfViolation) {
  const VolumeGraph g = two_by_two();
  const auto why = [&](std::vector<Step> steps, ScheduleLimits limits = {}) {
    Schedule s;
    s.steps = std::move(steps);
    return check_schedule(g, s, limits);
  };
  // a message never sent
  EXPECT_NE(why({{{{0, 0, 0, 4}, {1, 1, 0, 5}}}, {{{0, 1, 0, 3}}}}).find("never sent"),
            std::string::npos);
  // not a matching: sender 0 twice
  EXPECT_NE(why({{{{0, 0, 0, 4}, {0, 1, 0, 3}}}, {{{1, 0, 0, 2}}}, {{{1, 1, 0, 5}}}})
                .find("not a matching"),
            std::string::npos);
  // receiver 0 twice
  EXPECT_NE(
      why({{{{0, 0, 0, 4}, {1, 0, 0, 2}}}, {{{0, 1, 0, 3}}}, {{{1, 1, 0, 5}}}}).find("receiver 0"),
      std::string::npos);
  // the same schedule is fine without the matching rule
  EXPECT_EQ(why({{{{0, 0, 0, 4}, {1, 0, 0, 2}}}, {{{0, 1, 0, 3}}}, {{{1, 1, 0, 5}}}}, {false, 0}),
            "");
  // too many pieces for k = 1
  EXPECT_NE(why({{{{0, 0, 0, 4}, {1, 1, 0, 5}}}, {{{0, 1, 0, 3}, {1, 0, 0, 2}}}}, {true, 1})
                .find("more than the limit"),
            std::string::npos);
  // pieces overlap / leave a gap / do not add up
  EXPECT_NE(why({{{{0, 0, 0, 4}, {1, 1, 0, 3}}}, {{{0, 1, 0, 3}, {1, 0, 0, 2}}}, {{{1, 1, 2, 3}}}})
                .find("overlap"),
            std::string::npos);
  EXPECT_NE(why({{{{0, 0, 0, 4}, {1, 1, 0, 2}}}, {{{0, 1, 0, 3}, {1, 0, 0, 2}}}, {{{1, 1, 3, 2}}}})
                .find("gap"),
            std::string::npos);
  EXPECT_NE(why({{{{0, 0, 0, 4}, {1, 1, 0, 2}}}, {{{0, 1, 0, 3}, {1, 0, 0, 2}}}, {{{1, 1, 2, 2}}}})
                .find("add up to 4 of 5"),
            std::string::npos);
  // a piece that is not a message, an empty piece, a node out of range
  EXPECT_NE(why({{{{0, 0, 0, 4}, {1, 1, 0, 5}}}, {{{0, 1, 0, 3}, {1, 0, 0, 2}}}, {{{0, 0, 4, 0}}}})
                .find("empty"),
            std::string::npos);
  EXPECT_NE(why({{{{2, 0, 0, 1}}}}).find("names no node"), std::string::npos);
}

TEST(ScheduleStats, MatchingStepCostsItsLargestPiece) {
  const VolumeGraph g = two_by_two();
  Schedule s;
  s.steps = {{{{0, 0, 0, 4}, {1, 1, 0, 5}}}, {{{0, 1, 0, 3}, {1, 0, 0, 2}}}};
  const CostModel model{1.0, 0.5, 0.25};
  const ScheduleStats st = schedule_stats(s, model, 2);
  EXPECT_EQ(st.steps, 2);
  EXPECT_EQ(st.pieces, 4);
  EXPECT_EQ(st.elements, 14);
  EXPECT_EQ(st.sum_step_max, 8);
  EXPECT_EQ(st.largest_piece, 5);
  EXPECT_EQ(st.max_node_pieces, 1);
  // (1 + 0.5*2*5 + 0.25) + (1 + 0.5*2*3 + 0.25)
  EXPECT_DOUBLE_EQ(st.seconds, 6.25 + 4.25);
}

TEST(ScheduleStats, AllAtOnceCostsTheBusiestNode) {
  const VolumeGraph g = two_by_two();
  const Schedule s = schedule_all_at_once(g);
  const ScheduleStats st = schedule_stats(s, {1.0, 1.0, 0.0}, 1);
  EXPECT_EQ(st.steps, 1);
  EXPECT_EQ(st.max_node_pieces, 2);
  // receiver 1 gets 3 + 5 elements in 2 messages; sender 1 sends 2 + 5
  EXPECT_DOUBLE_EQ(st.seconds, 2.0 + 8.0);
}

TEST(Strategies, NamesRoundTripAndUnknownIsRefused) {
  for (const Strategy s : {Strategy::automatic, Strategy::all_at_once, Strategy::caterpillar,
                           Strategy::stepwise, Strategy::greedy, Strategy::circulant, Strategy::ggp,
                           Strategy::oggp, Strategy::multiphase}) {
    ASSERT_EQ(parse_strategy(strategy_name(s)), s);
  }
  EXPECT_FALSE(parse_strategy("fastest").has_value());
  EXPECT_FALSE(parse_strategy("").has_value());
  EXPECT_NE(strategy_names().find("all-at-once"), std::string::npos);
}

TEST(Caterpillar, MaxPQStepsEmptyPairsKeptAndValid) {
  Random rng(test_seed(13));
  for (int trial = 0; trial < 1000; ++trial) {
    const VolumeGraph g = random_graph(rng, 12, rng.uniform_int(0, 100), 50);
    Schedule s = schedule_caterpillar(g);
    assign_offsets(s);
    ASSERT_TRUE(valid_schedule(g, s, {}));
    ASSERT_EQ(static_cast<int>(s.steps.size()), std::max(g.senders, g.receivers));
  }
}

TEST(Caterpillar, EqualsThePairwiseEnumeration) {
  // Oracle: Prylli & Tourancheau's definition enumerated pair by pair, step t trying every
  // sender i with receiver (i + t) mod max(P, Q); the schedule places each message directly.
  Random rng(test_seed(16));
  const CostModel model{1e-6, 1e-9, 1e-7};
  for (int trial = 0; trial < 500; ++trial) {
    const VolumeGraph g = random_graph(rng, 20, rng.uniform_int(0, 100), 60);
    const int width = std::max(g.senders, g.receivers);
    std::vector<std::vector<Message>> pairs(static_cast<std::size_t>(width));
    for (int t = 0; t < width; ++t) {
      for (int i = 0; i < g.senders; ++i) {
        if ((i + t) % width < g.receivers)
          pairs[static_cast<std::size_t>(t)].push_back({i, (i + t) % width, 0});
      }
    }
    const Schedule expected = schedule_from_pairs(g, pairs, true);
    const Schedule s = schedule_caterpillar(g);
    ASSERT_EQ(s.steps.size(), expected.steps.size());
    for (std::size_t t = 0; t < s.steps.size(); ++t) {
      ASSERT_EQ(s.steps[t].pieces.size(), expected.steps[t].pieces.size()) << "step " << t;
      for (std::size_t j = 0; j < s.steps[t].pieces.size(); ++j) {
        const Piece &a = s.steps[t].pieces[j];
        const Piece &b = expected.steps[t].pieces[j];
        ASSERT_EQ(std::tie(a.src, a.dst, a.offset, a.volume),
                  std::tie(b.src, b.dst, b.offset, b.volume));
      }
    }
    const ScheduleStats got = schedule_stats(s, model, 8);
    const ScheduleStats want = schedule_stats(expected, model, 8);
    ASSERT_EQ(got.steps, want.steps);
    ASSERT_EQ(got.sum_step_max, want.sum_step_max);
    ASSERT_EQ(got.pieces, want.pieces);
    ASSERT_DOUBLE_EQ(got.seconds, want.seconds);
  }
}

TEST(AllAtOnce, OneStepWithEveryMessage) {
  Random rng(test_seed(14));
  for (int trial = 0; trial < 1000; ++trial) {
    const VolumeGraph g = random_graph(rng, 12, rng.uniform_int(0, 100), 50);
    const Schedule s = schedule_all_at_once(g);
    ASSERT_TRUE(valid_schedule(g, s, {false, 0}));
    ASSERT_EQ(s.steps.size(), g.messages.empty() ? 0U : 1U);
  }
}

TEST(ProductSchedule, ProductOfMatchingsIsAValidTwoDimensionalSchedule) {
  // Caterpillar per dimension on a 2-D transfer: N = N_rows * N_cols, each step a matching.
  Random rng(test_seed(15));
  for (int trial = 0; trial < 300; ++trial) {
    int comm_size = 0;
    const Transfer t = random_transfer_2d(rng, 60, 5, 4, comm_size);
    const Transfer1D r = t.rows();
    const Transfer1D c = t.cols();
    const VolumeGraph g = volume_graph(t);
    Schedule s =
        product_schedule(g, schedule_caterpillar(volume_graph(r)),
                         schedule_caterpillar(volume_graph(c)), r.src.nprocs, r.dst.nprocs);
    assign_offsets(s);
    ASSERT_TRUE(valid_schedule(g, s, {}));
  }
}

} // namespace
} // namespace redist::test
