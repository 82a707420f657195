// The two-level cost model (docs/studies/cluster.md): step costs computed by hand, the
// one-level model unchanged when every rank is on one node, and `auto` choosing by the
// two-level model where the ranks are on several nodes.
#include "planner.hpp"
#include "schedule_support.hpp"

#include <string>
#include <vector>

namespace redist::test {
namespace {

constexpr CostModel kIntra{1.0, 0.1, 0.0};
constexpr CostModel kInter{10.0, 1.0, 0.0};

// Senders 0, 1 on node 0 and 2 on node 1; receivers 0 on node 0, 1 and 2 on node 1.
NodeLevels three_by_three() {
  return NodeLevels{kInter, {0, 0, 1}, {0, 1, 1}};
}

TEST(TwoLevelModel, StepCostsByHand) {
  const NodeLevels levels = three_by_three();
  // Intra pieces 0->0 (10 bytes) and 2->1 (3); inter pieces 0->1 (5) and 1->2 (20).
  // Rank ports: out 0 = (1 + 0.1 * 10) + 10 = 12, out 1 = 10, out 2 = 1 + 0.3 = 1.3;
  // in 0 = 2, in 1 = 10 + 1.3 = 11.3, in 2 = 10. Node 0's link out and node 1's link in
  // carry 5 + 20 bytes at 1 s each: 25, the busiest.
  const Step link_bound{{{0, 0, 0, 10}, {0, 1, 0, 5}, {1, 2, 0, 20}, {2, 1, 0, 3}}};
  const StepPortTime a = step_port_time(link_bound, kIntra, levels, 1);
  EXPECT_DOUBLE_EQ(a.seconds, 25.0);
  EXPECT_EQ(a.max_node_pieces, 2);
  // Small inter pieces: rank 0's port (2 + 10 = 12) outlasts the link (1 + 1 = 2).
  const Step port_bound{{{0, 0, 0, 10}, {0, 1, 0, 1}, {1, 2, 0, 1}}};
  EXPECT_DOUBLE_EQ(step_port_time(port_bound, kIntra, levels, 1).seconds, 12.0);
  // Element bytes scale the per-byte terms: 8-byte elements, inter piece 2->0 of 2 elements:
  // port 10, node 1's link out 16.
  const Step eight{{{2, 0, 0, 2}}};
  EXPECT_DOUBLE_EQ(step_port_time(eight, kIntra, levels, 8).seconds, 16.0);
  // An empty step synchronises: the intra-node alpha.
  EXPECT_DOUBLE_EQ(step_port_time(Step{}, kIntra, levels, 1).seconds, 1.0);
  // A schedule: the sum of its steps, plus the step setup per step.
  CostModel with_setup = kIntra;
  with_setup.step_setup = 0.5;
  const Schedule s{{link_bound, port_bound, Step{}}};
  const ScheduleStats st = schedule_stats(s, with_setup, levels, 1);
  EXPECT_DOUBLE_EQ(st.seconds, 25.0 + 12.0 + 1.0 + 3 * 0.5);
  EXPECT_EQ(st.steps, 3);
  EXPECT_EQ(st.pieces, 7);
  EXPECT_EQ(st.elements, 10 + 5 + 20 + 3 + 10 + 1 + 1);
  EXPECT_EQ(st.max_node_pieces, 2);
}

// Every sender and receiver on one node: the one-level model to the bit, on random schedules.
TEST(TwoLevelModel, OneNodeIsTheOneLevelModel) {
  Random rng(test_seed(91));
  for (int trial = 0; trial < 200; ++trial) {
    const VolumeGraph g = random_graph(rng, 7, 60, 1000);
    Schedule s = schedule_all_at_once(g);
    if (rng.chance(50)) s = schedule_caterpillar(g);
    const CostModel intra{static_cast<double>(rng.uniform(1, 100)) * 1e-6,
                          static_cast<double>(rng.uniform(1, 100)) * 1e-10, 0.0};
    const int node = rng.uniform_int(0, 5);
    const NodeLevels one{kInter, std::vector<int>(static_cast<std::size_t>(g.senders), node),
                         std::vector<int>(static_cast<std::size_t>(g.receivers), node)};
    const ScheduleStats flat = schedule_stats(s, intra, 8);
    const ScheduleStats two = schedule_stats(s, intra, one, 8);
    EXPECT_EQ(two.seconds, flat.seconds) << describe(g);
    EXPECT_EQ(two.max_node_pieces, flat.max_node_pieces);
    EXPECT_EQ(two.sum_step_max, flat.sum_step_max);
  }
}

// A node map with one node, or none, leaves every decision as it was: the same strategy, the
// same schedule and the same predicted time for every rank, on random transfers and options.
TEST(TwoLevelModel, OneNodeDecidesAsOneLevel) {
  Random rng(test_seed(92));
  for (int trial = 0; trial < 150; ++trial) {
    int comm_size = 0;
    const Transfer t = random_transfer_2d(rng, 40, 5, 3, comm_size);
    ScheduleOptions flat;
    flat.strategy =
        static_cast<Strategy>(rng.uniform_int(0, static_cast<int>(Strategy::multiphase)));
    if (rng.chance(30)) flat.max_memory = 8 * rng.uniform(1, 60);
    if (rng.chance(30)) flat.max_concurrent = rng.uniform_int(1, 4);
    ScheduleOptions one_node = flat;
    one_node.node_of_rank.assign(static_cast<std::size_t>(comm_size), 3);
    one_node.inter = CostModel{1e-3, 1e-7, 0.0}; // must not matter
    ASSERT_FALSE(node_levels(t, one_node).has_value());
    ScheduleInputs inputs;
    for (int r = 0; r < comm_size; ++r) {
      const ScheduleInputs local =
          all_at_once_local(make_rank_plan(t, r, comm_size), flat.model, 8);
      inputs.all_at_once_buffer_max =
          std::max(inputs.all_at_once_buffer_max, local.all_at_once_buffer_max);
      inputs.all_at_once_seconds = std::max(inputs.all_at_once_seconds, local.all_at_once_seconds);
    }
    for (int r = 0; r < comm_size; ++r) {
      const RankPlan plan = make_rank_plan(t, r, comm_size);
      ScheduleChoice a;
      ScheduleChoice b;
      const std::string why_a = choose_schedule(t, plan, flat, inputs, 8, a);
      const std::string why_b = choose_schedule(t, plan, one_node, inputs, 8, b);
      ASSERT_EQ(why_a, why_b);
      if (!why_a.empty()) continue;
      EXPECT_EQ(a.strategy, b.strategy);
      EXPECT_EQ(a.detail, b.detail);
      EXPECT_EQ(a.stats.seconds, b.stats.seconds);
      EXPECT_EQ(a.steps.size(), b.steps.size());
    }
  }
}

// 2000 x 2000 doubles from 1 x 1 to 7 x 7 blocks on 2 x 2 grids of ranks 0..3, at most 2
// transfers per step: the one-level model takes the stepwise product. With ranks 0, 1 on one
// node and 2, 3 on another, the two-level model prices the node links; where they are slow
// the stepwise product, priced on two levels, is slower than what `auto` then takes.
Transfer block_change() {
  Transfer t;
  t.m = 2000;
  t.n = 2000;
  t.src.rows = {2000, 1, 2, 0};
  t.src.cols = {2000, 1, 2, 0};
  t.dst.rows = {2000, 7, 2, 0};
  t.dst.cols = {2000, 7, 2, 0};
  t.src.grid = {2, 2, {0, 1, 2, 3}};
  t.dst.grid = {2, 2, {0, 1, 2, 3}};
  return t;
}

double two_level_seconds(const Transfer &t, const ScheduleOptions &o, Strategy s) {
  ScheduleOptions explicit_options = o;
  explicit_options.strategy = s;
  Schedule schedule;
  std::string detail;
  EXPECT_EQ(global_schedule(t, explicit_options, 8, schedule, detail), "");
  return schedule_stats(schedule, o.model, *node_levels(t, o), 8).seconds;
}

std::optional<Strategy> auto_choice(const Transfer &t, const ScheduleOptions &o) {
  Schedule schedule;
  std::string detail;
  EXPECT_EQ(global_schedule(t, o, 8, schedule, detail), "");
  const std::string prefix = "auto: ";
  if (!detail.starts_with(prefix)) return std::nullopt;
  return parse_strategy(detail.substr(prefix.size(), detail.find(',') - prefix.size()));
}

TEST(TwoLevelModel, AutoAvoidsASlowNodeLink) {
  const Transfer t = block_change();
  ScheduleOptions one_level;
  one_level.max_concurrent = 2;
  const std::optional<Strategy> flat = auto_choice(t, one_level);
  ASSERT_EQ(flat, Strategy::stepwise);
  for (const double inter_beta : {1e-9, 1e-8, 8e-8}) {
    ScheduleOptions two = one_level;
    two.node_of_rank = {0, 0, 1, 1};
    two.inter = CostModel{2e-5, inter_beta, 0.0};
    ASSERT_TRUE(node_levels(t, two).has_value());
    const std::optional<Strategy> chosen = auto_choice(t, two);
    ASSERT_TRUE(chosen.has_value());
    EXPECT_NE(*chosen, Strategy::stepwise) << "inter beta " << inter_beta;
    EXPECT_LT(two_level_seconds(t, two, *chosen), two_level_seconds(t, two, Strategy::stepwise))
        << "inter beta " << inter_beta << ": " << strategy_name(*chosen);
    // All-at-once is what `auto` takes without limits, on two levels too: it loads every node
    // link with the node's whole traffic at once, which no step schedule beats in the model.
    ScheduleOptions unlimited = two;
    unlimited.max_concurrent = 0;
    Schedule schedule;
    std::string detail;
    ASSERT_EQ(global_schedule(t, unlimited, 8, schedule, detail), "");
    EXPECT_EQ(detail, "all messages at once");
  }
}

// The node map covers the grids' ranks or the model stays one-level.
TEST(TwoLevelModel, NodeLevelsFromTheRanks) {
  Transfer t = block_change();
  t.dst.grid.ranks = {3, 2, 1, 0};
  ScheduleOptions o;
  o.node_of_rank = {5, 5, 7, 7};
  const std::optional<NodeLevels> levels = node_levels(t, o);
  ASSERT_TRUE(levels.has_value());
  EXPECT_EQ(levels->src_node, (std::vector<int>{5, 5, 7, 7}));
  EXPECT_EQ(levels->dst_node, (std::vector<int>{7, 7, 5, 5}));
  o.node_of_rank = {5, 5, 7}; // rank 3 unknown
  EXPECT_FALSE(node_levels(t, o).has_value());
  o.node_of_rank.clear();
  EXPECT_FALSE(node_levels(t, o).has_value());
}

} // namespace
} // namespace redist::test
