// The planner: for every rank of random 2-D transfers, the steps it lays out cover that
// rank's messages exactly, agree pairwise with its peers' steps, and complete when executed
// by a step-by-step simulation of the non-blocking exchange (no deadlock).
#include "planner.hpp"
#include "schedule_support.hpp"

#include <map>
#include <tuple>

namespace redist::test {
namespace {

struct RankView {
  RankPlan plan;
  ScheduleChoice choice;
};

// The chunks a rank sends (or receives) in order, per peer: (offset, count) as the executor
// cuts them.
using Chunks = std::map<int, std::vector<std::pair<Index, Index>>>;

void cut(Index offset, Index count, Index chunk, std::vector<std::pair<Index, Index>> &out) {
  const Index step = chunk > 0 ? chunk : std::max<Index>(count, 1);
  for (Index begin = 0; begin < count; begin += step) {
    out.emplace_back(offset + begin, std::min(step, count - begin));
  }
}

// Simulates stepwise execution: at its current step a rank has posted its receive and send;
// a send completes when the receiver is at the step with the matching receive, a receive
// when the sender is at the step with the matching send. Returns false on a deadlock.
bool simulate(const std::vector<RankView> &views) {
  struct Op {
    int send_to = -1;
    int recv_from = -1;
  };
  std::vector<std::vector<Op>> ops(views.size());
  for (std::size_t r = 0; r < views.size(); ++r) {
    const ScheduleChoice &c = views[r].choice;
    for (const RankStep &s : c.steps) {
      const Index longest = std::max(s.send_count, s.recv_count);
      const Index chunk = c.chunk_elements > 0 ? c.chunk_elements : longest;
      for (Index begin = 0; begin < longest; begin += chunk) {
        Op op;
        if (begin < s.send_count)
          op.send_to = views[r].plan.sends[static_cast<std::size_t>(s.send)].rank;
        if (begin < s.recv_count)
          op.recv_from = views[r].plan.recvs[static_cast<std::size_t>(s.recv)].rank;
        ops[r].push_back(op);
      }
    }
  }
  // Per ordered pair, the number of messages completed so far: the k-th message of a pair
  // matches the k-th receive of that pair (MPI's non-overtaking rule).
  std::map<std::pair<int, int>, int> sent;
  std::map<std::pair<int, int>, int> posted_recv;
  std::vector<std::size_t> at(views.size(), 0);
  std::vector<std::pair<bool, bool>> done(views.size(), {false, false});
  bool progress = true;
  while (progress) {
    progress = false;
    for (std::size_t r = 0; r < views.size(); ++r) {
      if (at[r] >= ops[r].size()) continue;
      const Op &op = ops[r][at[r]];
      auto &[send_done, recv_done] = done[r];
      if (!send_done) {
        if (op.send_to < 0) {
          send_done = true;
        } else {
          const auto peer = static_cast<std::size_t>(op.send_to);
          if (at[peer] < ops[peer].size() && ops[peer][at[peer]].recv_from == static_cast<int>(r) &&
              !done[peer].second) {
            send_done = true;
            done[peer].second = true; // the matching receive completes with it
            progress = true;
          }
        }
      }
      if (!recv_done && op.recv_from < 0) recv_done = true;
      if (send_done && recv_done) {
        ++at[r];
        done[r] = {false, false};
        progress = true;
      }
    }
  }
  for (std::size_t r = 0; r < views.size(); ++r) {
    if (at[r] < ops[r].size()) return false;
  }
  return true;
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
  std::vector<Chunks> sends(views.size());
  std::vector<Chunks> recvs(views.size());
  for (int r = 0; r < comm_size; ++r) {
    RankView &v = views[static_cast<std::size_t>(r)];
    const std::string why = choose_schedule(t, v.plan, options, inputs, es, v.choice);
    if (!why.empty()) return "rank " + std::to_string(r) + ": " + why;
    if (v.choice.strategy == Strategy::all_at_once) continue;
    // Coverage: the ranges of each message tile it exactly.
    std::map<int, Index> send_next;
    std::map<int, Index> recv_next;
    for (const RankStep &s : v.choice.steps) {
      if (s.send >= 0) {
        const Peer &p = v.plan.sends[static_cast<std::size_t>(s.send)];
        if (s.send_offset != send_next[s.send])
          return "rank " + std::to_string(r) + ": send to " + std::to_string(p.rank) +
                 " out of order";
        send_next[s.send] += s.send_count;
        cut(s.send_offset, s.send_count, v.choice.chunk_elements,
            sends[static_cast<std::size_t>(r)][p.rank]);
      }
      if (s.recv >= 0) {
        const Peer &p = v.plan.recvs[static_cast<std::size_t>(s.recv)];
        if (s.recv_offset != recv_next[s.recv])
          return "rank " + std::to_string(r) + ": receive from " + std::to_string(p.rank) +
                 " out of order";
        recv_next[s.recv] += s.recv_count;
        cut(s.recv_offset, s.recv_count, v.choice.chunk_elements,
            recvs[static_cast<std::size_t>(r)][p.rank]);
      }
    }
    for (std::size_t i = 0; i < v.plan.sends.size(); ++i) {
      if (send_next[static_cast<int>(i)] != v.plan.sends[i].elements)
        return "rank " + std::to_string(r) + ": message to " +
               std::to_string(v.plan.sends[i].rank) + " covered " +
               std::to_string(send_next[static_cast<int>(i)]) + " of " +
               std::to_string(v.plan.sends[i].elements);
    }
    for (std::size_t i = 0; i < v.plan.recvs.size(); ++i) {
      if (recv_next[static_cast<int>(i)] != v.plan.recvs[i].elements)
        return "rank " + std::to_string(r) + ": message from " +
               std::to_string(v.plan.recvs[i].rank) + " covered " +
               std::to_string(recv_next[static_cast<int>(i)]) + " of " +
               std::to_string(v.plan.recvs[i].elements);
    }
    const Index cap_elements = options.max_memory / static_cast<Index>(es);
    for (const RankStep &s : v.choice.steps) {
      const Index chunk = v.choice.chunk_elements > 0 ? v.choice.chunk_elements : INT64_MAX;
      if (options.max_memory > 0 &&
          std::min(s.send_count, chunk) + std::min(s.recv_count, chunk) > cap_elements)
        return "rank " + std::to_string(r) + ": a step buffers more than max_memory";
    }
  }
  if (views.front().choice.strategy == Strategy::all_at_once) return {};
  // Pairwise agreement: what r sends to q, chunk by chunk, is what q receives from r.
  for (int r = 0; r < comm_size; ++r) {
    for (const auto &[q, chunks] : sends[static_cast<std::size_t>(r)]) {
      if (recvs[static_cast<std::size_t>(q)][r] != chunks)
        return "rank " + std::to_string(r) + " and rank " + std::to_string(q) +
               " disagree on their messages";
    }
  }
  if (!simulate(views)) return "the stepwise exchange deadlocks";
  return {};
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

TEST(Planner, RankStepsCoverAgreeAndComplete) {
  Random rng(test_seed(21));
  const std::vector<Strategy> strategies = {
      Strategy::automatic, Strategy::all_at_once, Strategy::caterpillar, Strategy::stepwise,
      Strategy::greedy,    Strategy::circulant,   Strategy::ggp,         Strategy::oggp};
  for (int trial = 0; trial < 1500; ++trial) {
    int comm_size = 0;
    const Transfer t = random_transfer_2d(rng, 60, 6, 4, comm_size);
    ScheduleOptions o;
    o.strategy = strategies[static_cast<std::size_t>(
        rng.uniform_int(0, static_cast<int>(strategies.size()) - 1))];
    if (o.strategy != Strategy::all_at_once) {
      if (rng.chance(40)) o.max_memory = 8 * rng.uniform(2, 60);
      if (rng.chance(30)) o.max_concurrent = rng.uniform_int(1, 4);
    }
    const std::string why = check_rank_steps(t, comm_size, o, 4);
    ASSERT_EQ(why, "") << "trial " << trial << " " << strategy_name(o.strategy) << " "
                       << describe_transfer(t, comm_size);
  }
}

// The whole schedule of every strategy is valid for the graph of messages between distinct
// ranks, under its limits.
TEST(Planner, GlobalSchedulesAreValid) {
  Random rng(test_seed(23));
  for (int trial = 0; trial < 1000; ++trial) {
    int comm_size = 0;
    const Transfer t = random_transfer_2d(rng, 50, 6, 4, comm_size);
    ScheduleOptions o;
    o.strategy = static_cast<Strategy>(rng.uniform_int(0, static_cast<int>(Strategy::oggp)));
    if (o.strategy != Strategy::all_at_once && o.strategy != Strategy::automatic) {
      if (rng.chance(40)) o.max_memory = 8 * rng.uniform(2, 60);
      if (rng.chance(30)) o.max_concurrent = rng.uniform_int(1, 4);
    }
    VolumeGraph remote = volume_graph(t);
    std::erase_if(remote.messages, [&](const Message &m) {
      return t.src.grid.ranks[static_cast<std::size_t>(m.src)] ==
             t.dst.grid.ranks[static_cast<std::size_t>(m.dst)];
    });
    Schedule s;
    std::string detail;
    ASSERT_EQ(global_schedule(t, o, 8, s, detail), "") << describe_transfer(t, comm_size);
    const bool matching = detail.find("all messages at once") == std::string::npos;
    ASSERT_TRUE(valid_schedule(remote, s, {matching, o.max_concurrent}))
        << "trial " << trial << " " << detail << " " << describe_transfer(t, comm_size);
    if (o.max_memory > 0) {
      for (const Step &step : s.steps)
        ASSERT_LE(step.largest() * 2 * 8, o.max_memory);
    }
  }
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
  o.max_memory = 0;
  o.strategy = Strategy::multiphase;
  EXPECT_NE(choose_schedule(t, plan, o, {}, 8, choice).find("cannot be executed yet"),
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

} // namespace
} // namespace redist::test
