// The planner: for every rank of random 2-D transfers, the steps it lays out cover that
// rank's messages exactly, agree pairwise with its peers' steps, and complete when executed
// by a step-by-step simulation of the non-blocking exchange (no deadlock).
#include "kinds_support.hpp"
#include "planner.hpp"
#include "rank_steps_support.hpp"
#include "schedule_cyclic.hpp"
#include "schedule_support.hpp"

#include <map>
#include <numeric>
#include <optional>
#include <string_view>
#include <tuple>

namespace redist::test {
namespace {

bool same_layout(const Layout &a, const Layout &b) {
  const auto same = [](const BlockCyclic &x, const BlockCyclic &y) {
    return x.extent == y.extent && x.block == y.block && x.nprocs == y.nprocs && x.src == y.src;
  };
  return same(a.rows, b.rows) && same(a.cols, b.cols) && a.grid.nprow == b.grid.nprow &&
         a.grid.npcol == b.grid.npcol && a.grid.ranks == b.grid.ranks && a.i == b.i && a.j == b.j;
}

// A two-phase plan: the phases chain the transfer's ends through one intermediate layout on the
// source or the destination grid, every rank agrees on it, each rank's phase plans are its
// plans of the phase transfers, and each phase passes check_views.
int g_two_phase_plans_checked = 0;

std::string check_two_phases(const Transfer &t, const std::vector<RankView> &views,
                             const ScheduleOptions &options, std::size_t es) {
  ++g_two_phase_plans_checked;
  const TwoPhase &first = *views.front().choice.phases;
  const Layout &mid = first.mid;
  if (!same_layout(first.transfers[0].src, t.src) || !same_layout(first.transfers[1].dst, t.dst) ||
      !same_layout(first.transfers[0].dst, mid) || !same_layout(first.transfers[1].src, mid))
    return "the phases do not chain source -> intermediate -> destination";
  if (mid.grid.ranks != t.src.grid.ranks && mid.grid.ranks != t.dst.grid.ranks)
    return "the intermediate grid is neither the source nor the destination grid";
  // On the source grid a transposed transfer's intermediate has A's shape (n x m).
  const bool a_shape = t.transposed() && mid.grid.ranks == t.src.grid.ranks &&
                       mid.grid.nprow == t.src.grid.nprow && first.transfers[1].transposed();
  if (mid.rows.extent != (a_shape ? t.n : t.m) || mid.cols.extent != (a_shape ? t.m : t.n) ||
      mid.i != 0 || mid.j != 0)
    return "the intermediate layout holds more than the window";
  if (first.transfers[0].transposed() + first.transfers[1].transposed() != (t.transposed() ? 1 : 0))
    return "the phases do not transpose exactly when the transfer does";
  const Index mid_bytes = [&] {
    Index most = 0;
    for (int pr = 0; pr < mid.grid.nprow; ++pr)
      for (int pc = 0; pc < mid.grid.npcol; ++pc)
        most = std::max(most, mid.rows.local_extent(pr) * mid.cols.local_extent(pc));
    return most * static_cast<Index>(es);
  }();
  if (options.max_memory > 0 && mid_bytes + 2 * first.phase_options.max_memory > options.max_memory)
    return "the intermediate array and the phases' buffers exceed max_memory";
  for (std::size_t phase = 0; phase < 2; ++phase) {
    std::vector<RankView> phase_views;
    for (std::size_t r = 0; r < views.size(); ++r) {
      const ScheduleChoice &c = views[r].choice;
      if (!c.phases || !same_layout(c.phases->mid, mid))
        return "rank " + std::to_string(r) + " chose another intermediate layout";
      const RankPlan expected = make_rank_plan(c.phases->transfers[phase], static_cast<int>(r),
                                               static_cast<int>(views.size()));
      const RankPlan &plan = c.phases->plans[phase];
      if (plan.sends.size() != expected.sends.size() ||
          plan.recvs.size() != expected.recvs.size() ||
          plan.self.elements != expected.self.elements)
        return "rank " + std::to_string(r) + ": phase " + std::to_string(phase + 1) +
               " plan differs from make_rank_plan";
      if (c.phases->choices[phase].strategy != views.front().choice.phases->choices[phase].strategy)
        return "ranks disagree on phase " + std::to_string(phase + 1) + "'s schedule";
      phase_views.push_back({plan, c.phases->choices[phase]});
    }
    if (std::string why = check_views(phase_views, first.phase_options.max_memory, es);
        !why.empty())
      return "phase " + std::to_string(phase + 1) + ": " + why;
  }
  return {};
}

std::string check_rank_steps(const Transfer &t, int comm_size, const ScheduleOptions &options,
                             std::size_t es) {
  std::vector<RankView> views(static_cast<std::size_t>(comm_size));
  ScheduleInputs inputs;
  for (int r = 0; r < comm_size; ++r) {
    views[static_cast<std::size_t>(r)].plan = make_rank_plan(t, r, comm_size);
    const ScheduleInputs local =
        all_at_once_local(views[static_cast<std::size_t>(r)].plan, options.model, es);
    inputs.all_at_once_buffer_max =
        std::max(inputs.all_at_once_buffer_max, local.all_at_once_buffer_max);
    inputs.all_at_once_seconds = std::max(inputs.all_at_once_seconds, local.all_at_once_seconds);
  }
  for (int r = 0; r < comm_size; ++r) {
    RankView &v = views[static_cast<std::size_t>(r)];
    const std::string why = choose_schedule(t, v.plan, options, inputs, es, v.choice);
    if (!why.empty()) return "rank " + std::to_string(r) + ": " + why;
    if ((v.choice.strategy == Strategy::multiphase) != (v.choice.phases != nullptr))
      return "rank " + std::to_string(r) + ": multiphase reported without two phases or back";
    if ((v.choice.phases != nullptr) != (views.front().choice.phases != nullptr))
      return "ranks disagree on running two phases: rank " + std::to_string(r) + " " +
             v.choice.detail + " / rank 0 " + views.front().choice.detail;
  }
  if (views.front().choice.phases) return check_two_phases(t, views, options, es);
  return check_views(views, options.max_memory, es);
}

std::string describe_transfer(const Transfer &t, int comm_size) {
  std::ostringstream os;
  os << "rows " << describe(t.rows()) << " cols " << describe(t.cols()) << " region "
     << static_cast<int>(t.region.kind) << " comm " << comm_size << " src ranks";
  for (int r : t.src.grid.ranks)
    os << " " << r;
  os << " dst ranks";
  for (int r : t.dst.grid.ranks)
    os << " " << r;
  return os.str();
}

// Any strategy, automatic and multiphase included, and but for all-at-once now and then a
// memory cap (40%) and a concurrency limit (30%).
ScheduleOptions random_options(Random &rng) {
  static const std::vector<Strategy> strategies = {
      Strategy::automatic, Strategy::all_at_once, Strategy::caterpillar,
      Strategy::stepwise,  Strategy::greedy,      Strategy::circulant,
      Strategy::ggp,       Strategy::oggp,        Strategy::multiphase};
  ScheduleOptions o;
  o.strategy = strategies[static_cast<std::size_t>(
      rng.uniform_int(0, static_cast<int>(strategies.size()) - 1))];
  if (o.strategy != Strategy::all_at_once) {
    if (rng.chance(40)) o.max_memory = 8 * rng.uniform(2, 60);
    if (rng.chance(30)) o.max_concurrent = rng.uniform_int(1, 4);
  }
  return o;
}

TEST(Planner, RankStepsCoverAgreeAndComplete) {
  Random rng(test_seed(21));
  const int two_phase_before = g_two_phase_plans_checked;
  for (int trial = 0; trial < 1500; ++trial) {
    int comm_size = 0;
    const Transfer t = random_transfer_2d(rng, 60, 6, 4, comm_size);
    const ScheduleOptions o = random_options(rng);
    const std::string why = check_rank_steps(t, comm_size, o, 4);
    ASSERT_EQ(why, "") << "trial " << trial << " " << strategy_name(o.strategy) << " "
                       << describe_transfer(t, comm_size);
  }
  EXPECT_GT(g_two_phase_plans_checked, two_phase_before + 20); // multiphase and auto engaged
}

// First blocks and row-major arrays (PBLAS's 11-integer descriptors, the C API's row-major
// layouts) are scheduled as the uniform column-major transfer with the same owners: every
// rank's steps still cover its own messages and agree with its peers'; they never run two
// phases; where no uniform transfer has their owners, only all-at-once is offered.
TEST(Planner, FirstBlocksAndRowMajorArraysGetValidSteps) {
  Random rng(test_seed(22));
  int stepped = 0;
  int refused = 0;
  for (int trial = 0; trial < 2000; ++trial) {
    const KindsCase c = random_kinds_case(rng, true);
    const ScheduleOptions o = random_options(rng);
    Transfer uniform;
    const bool has_uniform = uniform_owners(c.t, uniform);
    const std::string why = check_rank_steps(c.t, c.comm_size, o, 4);
    if (has_uniform) {
      ASSERT_EQ(why, "") << "trial " << trial << " " << strategy_name(o.strategy) << " "
                         << describe_transfer(c.t, c.comm_size);
      stepped += o.strategy != Strategy::all_at_once && o.strategy != Strategy::automatic;
      continue;
    }
    if (why.empty()) continue; // all at once within the limits
    ++refused;
    const bool only_all_at_once = why.find("only all-at-once applies") != std::string::npos;
    const bool all_at_once_limit = why.find("all-at-once") != std::string::npos;
    ASSERT_TRUE(only_all_at_once || all_at_once_limit)
        << "trial " << trial << " " << strategy_name(o.strategy) << ": " << why;
    const bool explicit_steps = o.strategy != Strategy::automatic &&
                                o.strategy != Strategy::multiphase &&
                                o.strategy != Strategy::all_at_once;
    ASSERT_EQ(only_all_at_once, explicit_steps) << "trial " << trial << ": " << why;
  }
  EXPECT_GT(stepped, 500);
  EXPECT_GT(refused, 20);
}

// The schedule of one phase is valid for the messages between distinct ranks of its transfer.
// The volume graph of `t` without the messages a rank sends to itself.
VolumeGraph remote_graph(const Transfer &t) {
  VolumeGraph remote = volume_graph(t);
  std::erase_if(remote.messages, [&](const Message &m) {
    return t.src.grid.ranks[static_cast<std::size_t>(m.src)] ==
           t.dst.grid.ranks[static_cast<std::size_t>(m.dst)];
  });
  return remote;
}

std::string valid_phase_schedule(const GlobalPhase &phase, int max_concurrent) {
  const VolumeGraph remote = remote_graph(phase.transfer);
  const bool matching = phase.detail.find("all messages at once") == std::string::npos;
  return check_schedule(remote, phase.schedule, {matching, max_concurrent});
}

// The whole schedule of every strategy is valid for the graph of messages between distinct
// ranks, under its limits.
TEST(Planner, GlobalSchedulesAreValid) {
  Random rng(test_seed(23));
  for (int trial = 0; trial < 1000; ++trial) {
    int comm_size = 0;
    const Transfer t = random_transfer_2d(rng, 50, 6, 4, comm_size);
    ScheduleOptions o;
    o.strategy = static_cast<Strategy>(rng.uniform_int(0, static_cast<int>(Strategy::multiphase)));
    if (o.strategy != Strategy::all_at_once && o.strategy != Strategy::automatic) {
      if (rng.chance(40)) o.max_memory = 8 * rng.uniform(2, 60);
      if (rng.chance(30)) o.max_concurrent = rng.uniform_int(1, 4);
    }
    std::vector<GlobalPhase> phases;
    std::string detail;
    ASSERT_EQ(global_phases(t, o, 8, phases, detail), "") << describe_transfer(t, comm_size);
    for (const GlobalPhase &phase : phases) {
      ASSERT_EQ(valid_phase_schedule(phase, o.max_concurrent), "")
          << "trial " << trial << " " << detail << " " << describe_transfer(t, comm_size);
      if (o.max_memory > 0) {
        for (const Step &step : phase.schedule.steps)
          ASSERT_LE(step.largest() * 2 * 8, o.max_memory);
      }
    }
  }
}

// Stepwise on the 2-D graph takes exactly Delta steps of the graph of messages between
// distinct ranks (Desprez et al. 1998, Thm. 1): local copies cost no step.
TEST(Planner, DirectStepwiseIsOptimalOnTheRemoteGraph) {
  Random rng(test_seed(25));
  int direct = 0;
  for (int trial = 0; trial < 400; ++trial) {
    int comm_size = 0;
    const Transfer t = random_transfer_2d(rng, 40, 6, 4, comm_size);
    ScheduleOptions o;
    o.strategy = Strategy::stepwise;
    Schedule s;
    std::string detail;
    ASSERT_EQ(global_schedule(t, o, 8, s, detail), "");
    if (detail.find("on the 2-D graph") == std::string::npos) continue;
    ++direct;
    ASSERT_EQ(static_cast<Index>(s.steps.size()), remote_graph(t).max_degree())
        << describe_transfer(t, comm_size);
  }
  EXPECT_GT(direct, 20);
}

// Kaushik et al. 1995's worked shape: CYCLIC(2) -> CYCLIC(3) rows on equal grids go through
// CYCLIC(6) or CYCLIC(1) rows; every phase's global schedule is valid for its own graph.
TEST(Planner, MultiphaseThroughLcmOrGcd) {
  Transfer t;
  t.m = 48;
  t.n = 10;
  t.src = Layout{{48, 2, 4, 0}, {10, 5, 2, 0}, Grid{4, 2, {0, 1, 2, 3, 4, 5, 6, 7}}, 0, 0};
  t.dst = Layout{{48, 3, 4, 1}, {10, 2, 2, 1}, Grid{4, 2, {7, 6, 5, 4, 3, 2, 1, 0}}, 0, 0};
  ScheduleOptions o;
  o.strategy = Strategy::multiphase;
  for (const int k : {0, 2}) {
    o.max_concurrent = k;
    std::vector<GlobalPhase> phases;
    std::string detail;
    ASSERT_EQ(global_phases(t, o, 8, phases, detail), "");
    ASSERT_EQ(phases.size(), 2U) << detail;
    const Layout &mid = phases[0].transfer.dst;
    EXPECT_TRUE(mid.rows.block == 6 || mid.rows.block == 1 || mid.cols.block == 10 ||
                mid.cols.block == 1)
        << detail;
    for (const GlobalPhase &phase : phases)
      EXPECT_EQ(valid_phase_schedule(phase, k), "") << phase.detail;
    Schedule single;
    EXPECT_NE(global_schedule(t, o, 8, single, detail).find("two phases"), std::string::npos);
    EXPECT_EQ(check_rank_steps(t, 8, o, 8), "");
  }
  // Blocks that divide each other on equal grids: no intermediate, one phase.
  t.dst.rows.block = 4;
  t.dst.cols.block = 5;
  std::vector<GlobalPhase> phases;
  std::string detail;
  ASSERT_EQ(global_phases(t, o, 8, phases, detail), "");
  EXPECT_EQ(phases.size(), 1U) << detail;
}

// auto takes two phases exactly when the model predicts them cheaper than one: with start-ups
// free they never are (the data moves twice).
TEST(Planner, AutoTakesTwoPhasesOnlyWhenTheyPay) {
  Random rng(test_seed(24));
  ScheduleOptions o;
  o.model.alpha = 0.0;
  for (int trial = 0; trial < 300; ++trial) {
    int comm_size = 0;
    const Transfer t = random_transfer_2d(rng, 60, 6, 4, comm_size);
    std::vector<GlobalPhase> phases;
    std::string detail;
    ASSERT_EQ(global_phases(t, o, 8, phases, detail), "");
    ASSERT_EQ(phases.size(), 1U) << detail << " " << describe_transfer(t, comm_size);
  }
}

// The strategy a global schedule's detail names: "all messages at once" or the strategy
// before the first comma, after the prefixes of `auto` and of multiphase's one-phase fallback.
std::optional<Strategy> named_strategy(std::string detail) {
  const std::string_view fallback = "multiphase: no intermediate layout applies, one phase: ";
  for (const std::string_view prefix : {fallback, std::string_view("auto: ")}) {
    if (detail.starts_with(prefix)) detail.erase(0, prefix.size());
  }
  if (detail.starts_with("all messages at once")) return Strategy::all_at_once;
  return parse_strategy(detail.substr(0, detail.find(',')));
}

// choose_schedule is the one place that decides; global_schedule and global_phases build what
// it decided for the transfer (from the maxima over all ranks): the same strategy, the same
// two phases through the same intermediate layout, or the same refusal.
TEST(Planner, GlobalSchedulesBuildTheDecidedStrategy) {
  Random rng(test_seed(26));
  int two_phase = 0;
  for (int trial = 0; trial < 600; ++trial) {
    int comm_size = 0;
    const Transfer t = random_transfer_2d(rng, 50, 6, 4, comm_size);
    ScheduleOptions o;
    o.strategy = static_cast<Strategy>(rng.uniform_int(0, static_cast<int>(Strategy::multiphase)));
    if (rng.chance(40)) o.max_memory = 8 * rng.uniform(1, 60);
    if (rng.chance(30)) o.max_concurrent = rng.uniform_int(1, 4);
    if (rng.chance(30)) o.model.alpha *= 100;
    ScheduleInputs inputs;
    for (int r = 0; r < comm_size; ++r) {
      const ScheduleInputs local = all_at_once_local(make_rank_plan(t, r, comm_size), o.model, 8);
      inputs.all_at_once_buffer_max =
          std::max(inputs.all_at_once_buffer_max, local.all_at_once_buffer_max);
      inputs.all_at_once_seconds = std::max(inputs.all_at_once_seconds, local.all_at_once_seconds);
    }
    ScheduleChoice choice;
    const std::string why =
        choose_schedule(t, make_rank_plan(t, 0, comm_size), o, inputs, 8, choice);
    const std::string what = "trial " + std::to_string(trial) + " " +
                             std::string(strategy_name(o.strategy)) + " " +
                             describe_transfer(t, comm_size);
    std::vector<GlobalPhase> phases;
    std::string detail;
    ASSERT_EQ(global_phases(t, o, 8, phases, detail), why) << what;
    if (!why.empty()) continue;
    Schedule single;
    std::string single_detail;
    const std::string single_why = global_schedule(t, o, 8, single, single_detail);
    if (choice.phases) {
      ++two_phase;
      ASSERT_EQ(phases.size(), 2U) << what;
      EXPECT_EQ(detail, choice.detail) << what;
      EXPECT_TRUE(same_layout(phases[0].transfer.dst, choice.phases->mid)) << what;
      EXPECT_TRUE(same_layout(phases[1].transfer.src, choice.phases->mid)) << what;
      for (std::size_t i = 0; i < 2; ++i)
        EXPECT_EQ(named_strategy(phases[i].detail), choice.phases->choices[i].strategy)
            << what << " phase " << i + 1 << ": " << phases[i].detail;
      EXPECT_NE(single_why.find("two phases"), std::string::npos) << what;
    } else {
      ASSERT_EQ(phases.size(), 1U) << what;
      EXPECT_EQ(named_strategy(detail), choice.strategy) << what << ": " << detail;
      EXPECT_EQ(single_why, "") << what;
      EXPECT_EQ(single_detail, detail) << what;
      EXPECT_EQ(single.steps.size(), phases[0].schedule.steps.size()) << what;
    }
  }
  EXPECT_GT(two_phase, 10);
}

TEST(Planner, RefusesOptionsItCannotHonour) {
  Random rng(test_seed(22));
  int comm_size = 0;
  Transfer t;
  do {
    t = random_transfer_2d(rng, 60, 6, 4, comm_size);
  } while (t.m * t.n == 0);
  const RankPlan plan = make_rank_plan(t, 0, comm_size);
  ScheduleChoice choice;
  ScheduleOptions o;
  o.strategy = Strategy::all_at_once;
  o.max_concurrent = 2;
  EXPECT_NE(choose_schedule(t, plan, o, {}, 8, choice).find("cannot honour max_concurrent"),
            std::string::npos);
  o.max_concurrent = 0;
  o.max_memory = 100;
  EXPECT_NE(choose_schedule(t, plan, o, {1000, 0.0}, 8, choice).find("more than max_memory"),
            std::string::npos);
  o.strategy = Strategy::caterpillar;
  o.max_memory = 15;
  EXPECT_NE(choose_schedule(t, plan, o, {}, 8, choice).find("below one element"),
            std::string::npos);
  o.strategy = Strategy::caterpillar;
  o.max_memory = -1;
  EXPECT_NE(choose_schedule(t, plan, o, {}, 8, choice).find(">= 0"), std::string::npos);
  // auto steps aside from all-at-once when it does not fit
  o.strategy = Strategy::automatic;
  o.max_memory = 100;
  EXPECT_EQ(choose_schedule(t, plan, o, {1000, 0.0}, 8, choice), "");
  EXPECT_NE(choice.strategy, Strategy::all_at_once);
  EXPECT_EQ(choose_schedule(t, plan, o, {100, 0.0}, 8, choice), "");
  EXPECT_EQ(choice.strategy, Strategy::all_at_once);
}

// On grids with more than 4,096 sender-receiver pairs, stepwise (and the circulant) lay out
// each rank's steps straight from the closed forms. They must be the rank's part of the
// product schedule built from the materialised 1-D closed forms (what the planner builds on
// smaller grids), with its statistics; the steps also pass the coverage, agreement and
// deadlock checks, with and without a memory cap.
TEST(Planner, ClosedFormRankStepsAreTheBuiltProduct) {
  Random rng(test_seed(24));
  const CostModel model;
  for (int trial = 0; trial < 16; ++trial) {
    const Transfer1D rows = closed_form_dimension(rng, 9, 11, 4);
    const Transfer1D cols = closed_form_dimension(rng, 9, 11, 4);
    Transfer t = transfer_2d(rows, cols);
    const int src_size = rows.src.nprocs * cols.src.nprocs;
    const int dst_size = rows.dst.nprocs * cols.dst.nprocs;
    const int comm_size = std::max(src_size, dst_size);
    std::vector<int> ranks(static_cast<std::size_t>(comm_size));
    std::iota(ranks.begin(), ranks.end(), 0);
    std::mt19937 shuffle(static_cast<unsigned>(rng.uniform(0, 1 << 30)));
    std::shuffle(ranks.begin(), ranks.end(), shuffle);
    t.src.grid.ranks.assign(ranks.begin(), ranks.begin() + src_size);
    std::shuffle(ranks.begin(), ranks.end(), shuffle);
    t.dst.grid.ranks.assign(ranks.begin(), ranks.begin() + dst_size);
    ASSERT_GT(src_size * dst_size, 4096);

    ScheduleOptions o;
    o.strategy = rng.chance(70) ? Strategy::stepwise : Strategy::circulant;
    const auto one_dimension = [&](const Transfer1D &d) {
      std::optional<Schedule> s;
      if (o.strategy == Strategy::circulant) s = schedule_circulant(d);
      return s ? *s : *schedule_closed_form(d, model, 8);
    };
    const VolumeGraph graph = volume_graph(t);
    const Schedule product = product_schedule(
        graph, one_dimension(t.rows()), one_dimension(t.cols()), rows.src.nprocs, rows.dst.nprocs);
    const ScheduleStats expected_stats = schedule_stats(product, model, 8);
    const std::string what = std::string(strategy_name(o.strategy)) + " rows " +
                             describe(t.rows()) + " cols " + describe(t.cols());
    for (int r = 0; r < comm_size; ++r) {
      const RankPlan plan = make_rank_plan(t, r, comm_size);
      ScheduleChoice choice;
      ASSERT_EQ(choose_schedule(t, plan, o, {}, 8, choice), "") << what;
      EXPECT_EQ(choice.stats.steps, expected_stats.steps) << what;
      EXPECT_EQ(choice.stats.sum_step_max, expected_stats.sum_step_max) << what;
      EXPECT_EQ(choice.stats.largest_piece, expected_stats.largest_piece) << what;
      EXPECT_EQ(choice.stats.pieces, expected_stats.pieces) << what;
      EXPECT_EQ(choice.stats.elements, expected_stats.elements) << what;
      EXPECT_NEAR(choice.stats.seconds, expected_stats.seconds, 1e-9 * expected_stats.seconds);
      // (peer sent to, elements, peer received from, elements) per step of this rank.
      using Entry = std::tuple<int, Index, int, Index>;
      std::vector<Entry> expected;
      for (const Step &step : product.steps) {
        Entry e{-1, 0, -1, 0};
        for (const Piece &p : step.pieces) {
          const int from = t.src.grid.ranks[static_cast<std::size_t>(p.src)];
          const int to = t.dst.grid.ranks[static_cast<std::size_t>(p.dst)];
          if (from == r && to != r) e = {to, p.volume, std::get<2>(e), std::get<3>(e)};
          if (to == r && from != r) e = {std::get<0>(e), std::get<1>(e), from, p.volume};
        }
        if (std::get<0>(e) >= 0 || std::get<2>(e) >= 0) expected.push_back(e);
      }
      std::vector<Entry> actual;
      for (const RankStep &s : choice.steps) {
        actual.emplace_back(
            s.send >= 0 ? plan.sends[static_cast<std::size_t>(s.send)].rank : -1, s.send_count,
            s.recv >= 0 ? plan.recvs[static_cast<std::size_t>(s.recv)].rank : -1, s.recv_count);
      }
      ASSERT_EQ(actual, expected) << what << " rank " << r;
    }
    if (trial < 4) {
      ASSERT_EQ(check_rank_steps(t, comm_size, o, 8), "") << what;
      o.max_memory = 8 * rng.uniform(2, 40);
      ASSERT_EQ(check_rank_steps(t, comm_size, o, 8), "") << what;
    }
  }
}

// The transposed form of an identity transfer: A's layout and grid transposed, perm = {1, 0}.
// Its 1-D problems (Transfer::rows, cols) are the identity's, but the senders along B's rows
// are A's grid columns: a schedule that pairs them with A's grid rows sends from the wrong
// processes.
Transfer transposed_source(const Transfer &t) {
  Transfer out = t;
  out.perm = {1, 0};
  out.src.rows = t.src.cols;
  out.src.cols = t.src.rows;
  out.src.i = t.src.j;
  out.src.j = t.src.i;
  out.src.grid.nprow = t.src.grid.npcol;
  out.src.grid.npcol = t.src.grid.nprow;
  for (int pr = 0; pr < t.src.grid.nprow; ++pr) {
    for (int pc = 0; pc < t.src.grid.npcol; ++pc) {
      const auto at = static_cast<std::size_t>(pc) +
                      static_cast<std::size_t>(pr) * static_cast<std::size_t>(out.src.grid.nprow);
      out.src.grid.ranks[at] = t.src.grid.rank_at(pr, pc);
    }
  }
  return out;
}

// Transposed transfers: every strategy's rank steps cover, agree and complete (two
// phases: check_two_phases), and every strategy's whole schedule (each phase's) is valid for
// its graph; multiphase takes two phases in some of them.
TEST(Planner, TransposedSchedulesAreValid) {
  Random rng(test_seed(25));
  int distinct = 0;
  int two_phases = 0;
  for (int trial = 0; trial < 1500; ++trial) {
    int comm_size = 0;
    const Transfer t = transposed_source(random_transfer_2d(rng, 60, 6, 4, comm_size));
    ASSERT_TRUE(t.transposed());
    distinct += t.src.grid.nprow != t.src.grid.npcol ? 1 : 0;
    const ScheduleOptions o = random_options(rng);
    ASSERT_EQ(check_rank_steps(t, comm_size, o, 4), "")
        << "trial " << trial << " " << strategy_name(o.strategy) << " "
        << describe_transfer(t, comm_size);
    std::vector<GlobalPhase> phases;
    std::string detail;
    ASSERT_EQ(global_phases(t, o, 8, phases, detail), "") << describe_transfer(t, comm_size);
    for (const GlobalPhase &phase : phases) {
      EXPECT_EQ(valid_phase_schedule(phase, o.max_concurrent), "")
          << "trial " << trial << " " << detail << " " << describe_transfer(t, comm_size);
    }
    two_phases += phases.size() == 2 ? 1 : 0;
  }
  EXPECT_GT(distinct, 300); // non-square source grids: rows and columns cannot be confused
  EXPECT_GT(two_phases, 20);
}

// The floor below which auto plans no intermediate layout (two_phase_floor: two start-ups)
// is sound: on random transfers, copies and transposes, one level and two, wherever a rank's
// one-phase plan is predicted at or below it, the cheapest two-phase plan (what multiphase
// finds, searched without a bound) is predicted no faster.
TEST(Planner, NoTwoPhasePlanBeatsOnePhaseBelowTheFloor) {
  Random rng(test_seed(26));
  const std::size_t es = 8;
  int below = 0;
  int compared = 0;
  for (int trial = 0; trial < 400; ++trial) {
    int comm_size = 0;
    Transfer t = random_transfer_2d(rng, 30, 6, 4, comm_size);
    if (rng.chance(40)) t = transposed_source(t);
    ScheduleOptions automatic;
    automatic.model = {rng.chance(50) ? 2e-6 : 1e-5, rng.chance(50) ? 2.5e-10 : 2e-9, 0.0};
    if (rng.chance(30)) { // two nodes, messages between them dearer or cheaper
      for (int r = 0; r < comm_size; ++r)
        automatic.node_of_rank.push_back(rng.uniform_int(0, 1));
      automatic.inter = {rng.chance(50) ? 2e-5 : 1e-6, 1e-9, 0.0};
    }
    ScheduleOptions multiphase = automatic;
    multiphase.strategy = Strategy::multiphase;
    const ScheduleInputs inputs = all_at_once_estimate(t, automatic.model, es);
    for (int r = 0; r < comm_size; ++r) {
      const RankPlan plan = make_rank_plan(t, r, comm_size);
      ScheduleChoice one;
      ASSERT_EQ(choose_schedule(t, plan, automatic, inputs, es, one), "");
      // As choose_schedule costs its one phase for the comparison.
      const double one_seconds = one.strategy == Strategy::all_at_once && !node_levels(t, automatic)
                                     ? inputs.all_at_once_seconds
                                     : one.stats.seconds;
      if (one_seconds > two_phase_floor(automatic)) continue;
      ++below;
      ASSERT_EQ(one.phases, nullptr) << describe_transfer(t, comm_size);
      ScheduleChoice two;
      ASSERT_EQ(choose_schedule(t, plan, multiphase, inputs, es, two), "");
      if (two.phases == nullptr) continue;
      ++compared;
      EXPECT_GE(two.stats.seconds, one_seconds)
          << "rank " << r << " " << two.detail << " " << describe_transfer(t, comm_size);
    }
  }
  EXPECT_GT(below, 200);
  EXPECT_GT(compared, 100);
}

// The all-at-once inputs estimated from the 1-D graphs are the maxima over every rank's plan for
// full windows, transposed or not (the two-phase decision costs its phases with them).
TEST(Planner, AllAtOnceEstimateIsExactForFullWindows) {
  Random rng(test_seed(26));
  for (int trial = 0; trial < 600; ++trial) {
    int comm_size = 0;
    Transfer t = random_transfer_2d(rng, 60, 6, 4, comm_size);
    t.region = Region{};
    if (trial % 2 == 1) t = transposed_source(t);
    ScheduleInputs exact;
    const CostModel model{1e-5, 1e-9, 0.0};
    for (int r = 0; r < comm_size; ++r) {
      const ScheduleInputs local = all_at_once_local(make_rank_plan(t, r, comm_size), model, 8);
      exact.all_at_once_buffer_max =
          std::max(exact.all_at_once_buffer_max, local.all_at_once_buffer_max);
      exact.all_at_once_seconds = std::max(exact.all_at_once_seconds, local.all_at_once_seconds);
    }
    const ScheduleInputs estimate = all_at_once_estimate(t, model, 8);
    ASSERT_EQ(estimate.all_at_once_buffer_max, exact.all_at_once_buffer_max)
        << "trial " << trial << " " << describe_transfer(t, comm_size);
    ASSERT_DOUBLE_EQ(estimate.all_at_once_seconds, exact.all_at_once_seconds)
        << "trial " << trial << " " << describe_transfer(t, comm_size);
  }
}

// On grids past 4,096 pairs, stepwise and the circulant lay out a transposed transfer's rank
// steps from the closed forms: they are the rank's part of the transposed product.
TEST(Planner, TransposedClosedFormRankStepsAreTheBuiltProduct) {
  Random rng(test_seed(26));
  const CostModel model;
  for (int trial = 0; trial < 6; ++trial) {
    const Transfer1D rows = closed_form_dimension(rng, 9, 11, 4);
    const Transfer1D cols = closed_form_dimension(rng, 9, 11, 4);
    Transfer identity = transfer_2d(rows, cols);
    const int src_size = rows.src.nprocs * cols.src.nprocs;
    const int dst_size = rows.dst.nprocs * cols.dst.nprocs;
    const int comm_size = std::max(src_size, dst_size);
    std::vector<int> ranks(static_cast<std::size_t>(comm_size));
    std::iota(ranks.begin(), ranks.end(), 0);
    std::mt19937 shuffle(static_cast<unsigned>(rng.uniform(0, 1 << 30)));
    std::shuffle(ranks.begin(), ranks.end(), shuffle);
    identity.src.grid.ranks.assign(ranks.begin(), ranks.begin() + src_size);
    std::shuffle(ranks.begin(), ranks.end(), shuffle);
    identity.dst.grid.ranks.assign(ranks.begin(), ranks.begin() + dst_size);
    const Transfer t = transposed_source(identity);
    ScheduleOptions o;
    o.strategy = rng.chance(70) ? Strategy::stepwise : Strategy::circulant;
    const auto one_dimension = [&](const Transfer1D &d) {
      std::optional<Schedule> s;
      if (o.strategy == Strategy::circulant) s = schedule_circulant(d);
      return s ? *s : *schedule_closed_form(d, model, 8);
    };
    const Schedule product =
        product_schedule(volume_graph(t), one_dimension(t.rows()), one_dimension(t.cols()),
                         t.src.grid.nprow, t.dst.grid.nprow, false, true);
    ASSERT_TRUE(valid_schedule(volume_graph(t), product, {true, 0}));
    const std::string what = std::string(strategy_name(o.strategy)) + " rows " +
                             describe(t.rows()) + " cols " + describe(t.cols());
    ASSERT_EQ(check_rank_steps(t, comm_size, o, 8), "") << what;
    if (trial < 2) {
      o.max_memory = 8 * rng.uniform(2, 40);
      ASSERT_EQ(check_rank_steps(t, comm_size, o, 8), "") << what;
    }
  }
}

} // namespace
} // namespace redist::test
