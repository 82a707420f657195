// Ring rebalancing over MPI (redist_ring.h) against an element oracle independent of the
// library: items are numbered in ring order before the call; afterwards process k must hold,
// in order, the items at cyclic positions (T_0 + ... + T_{k-1} - W) mod N, where T are the
// targets and W the items the plan moves over the wrap link (0 on a path, which then keeps the
// global order). Every byte of every item encodes its number; padding between strided items
// and a guard zone after the output must stay untouched. Cases: random loads, targets, costs,
// ring or path, uni- or bidirectional, neighbour / direct / auto transport, item sizes, strides
// and forwarding chunk sizes, drawn identically on every rank.

#include "harness.hpp"

#include <redist_ring.h>

#include <gtest/gtest.h>
#include <mpi.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <numeric>
#include <string>
#include <vector>

namespace mpitest {
namespace {

constexpr unsigned char pad_byte = 0xEE;
constexpr std::int64_t guard_bytes = 13;
const double inf = std::numeric_limits<double>::infinity();

unsigned char item_byte(std::int64_t item, std::int64_t b, int salt) {
  const auto v = static_cast<std::uint64_t>(item) * 0x9E3779B97F4A7C15ULL +
                 static_cast<std::uint64_t>(b) * 0xBF58476D1CE4E5B9ULL +
                 static_cast<std::uint64_t>(salt);
  return static_cast<unsigned char>((v >> 29) ^ (v >> 47) ^ static_cast<std::uint64_t>(item));
}

struct RingCase {
  int index = 0;
  int direction = REDIST_RING_BIDIRECTIONAL;
  int transport = REDIST_RING_NEIGHBOUR;
  bool path = false;
  std::vector<std::int64_t> loads, targets;
  std::vector<double> c_next, c_prev;
  std::int64_t item_bytes = 1;
  std::vector<std::int64_t> in_pad, out_pad; // stride - item_bytes, per rank
  std::int64_t chunk = 0;
  int salt = 0;

  [[nodiscard]] std::string describe() const {
    std::string s = "ring case " + std::to_string(index) + ": " +
                    (direction == REDIST_RING_BIDIRECTIONAL ? "bidirectional" : "unidirectional") +
                    (path ? " path" : " ring") + " transport " + std::to_string(transport) +
                    " item_bytes " + std::to_string(item_bytes) + " chunk " +
                    std::to_string(chunk) + "\n    loads";
    for (const auto v : loads)
      s += " " + std::to_string(v);
    s += "\n    targets";
    for (const auto v : targets)
      s += " " + std::to_string(v);
    s += "\n    c_next";
    for (const auto v : c_next)
      s += " " + std::to_string(v);
    s += "\n    c_prev";
    for (const auto v : c_prev)
      s += " " + std::to_string(v);
    return s + "\n";
  }
};

/// A random case; `transport` / `direction` >= 0 force them, `path` forces a path.
RingCase draw_case(Rng &rng, int np, int index, int transport, int direction, bool path) {
  RingCase c;
  c.index = index;
  const auto n = static_cast<std::size_t>(np);
  c.direction = rng.coin(0.5) ? REDIST_RING_BIDIRECTIONAL : REDIST_RING_UNIDIRECTIONAL;
  c.transport = static_cast<int>(rng.uniform(0, 2));
  c.path = rng.coin(0.4) || path;
  if (transport >= 0) c.transport = transport;
  if (direction >= 0) c.direction = direction;
  const bool equal_costs = rng.coin(0.3);
  for (std::size_t k = 0; k < n; ++k) {
    c.loads.push_back(rng.uniform(1, rng.coin(0.3) ? 3 : 40));
    c.c_next.push_back(equal_costs ? 1.0 : static_cast<double>(rng.uniform(1, 8)));
    c.c_prev.push_back(equal_costs ? 1.0 : static_cast<double>(rng.uniform(1, 8)));
  }
  const std::int64_t total = std::accumulate(c.loads.begin(), c.loads.end(), std::int64_t{0});
  // Targets: one each, the rest spread at random.
  c.targets.assign(n, 1);
  for (std::int64_t i = 0; i < total - np; ++i)
    ++c.targets[static_cast<std::size_t>(rng.uniform(0, np - 1))];
  if (c.path) {
    c.c_next[n - 1] = inf;
    c.c_prev[0] = inf;
    if (c.direction == REDIST_RING_UNIDIRECTIONAL) {
      // Items only move forward on a unidirectional path: every prefix of the targets must
      // not exceed the same prefix of the loads. Cap the targets from the front; the last
      // process takes the rest.
      std::int64_t held = 0;
      std::int64_t given = 0;
      for (std::size_t k = 0; k < n; ++k) {
        held += c.loads[k];
        c.targets[k] = k + 1 == n ? held - given : std::min(c.targets[k], held - given);
        given += c.targets[k];
      }
    }
  }
  const std::int64_t sizes[] = {1, 3, 8, 16, 24};
  c.item_bytes = sizes[rng.uniform(0, 4)];
  for (std::size_t k = 0; k < n; ++k) {
    c.in_pad.push_back(rng.coin(0.5) ? 0 : rng.uniform(1, 9));
    c.out_pad.push_back(rng.coin(0.5) ? 0 : rng.uniform(1, 9));
  }
  c.chunk = rng.coin(0.3) ? 0 : rng.uniform(1, 5);
  c.salt = static_cast<int>(rng.uniform(0, 1000));
  return c;
}

/// Run one case on MPI_COMM_WORLD; returns this rank's failure description ("" if fine).
std::string run_case(const RingCase &c) {
  const int me = world_rank();
  const int np = world_size();
  const auto k = static_cast<std::size_t>(me);
  const auto n = static_cast<std::size_t>(np);
  redist_ring_plan plan = nullptr;
  int rc =
      redist_ring_plan_create(MPI_COMM_WORLD, c.direction, c.transport, c.loads[k], c.targets[k],
                              c.c_next[k], c.c_prev[k], c.item_bytes, c.chunk, &plan);
  if (rc != REDIST_SUCCESS) {
    return std::string("redist_ring_plan_create: ") + redist_status_name(rc) + ": " +
           redist_last_error() + "\n";
  }
  std::string fail;
  std::vector<std::int64_t> flow(n);
  redist_ring_plan_get_flows(plan, flow.data());
  redist_ring_info info{};
  redist_ring_plan_get_info(plan, &info);
  // Conservation: R_k - R_{k-1} = L_k - T_k.
  for (std::size_t j = 0; j < n; ++j) {
    if (flow[j] - flow[(j + n - 1) % n] != c.loads[j] - c.targets[j])
      fail += "    flows break conservation at process " + std::to_string(j) + "\n";
  }
  const std::int64_t wrap = flow[n - 1];
  if (c.path && wrap != 0) fail += "    a path moved items over the wrap link\n";
  if (c.direction == REDIST_RING_UNIDIRECTIONAL) {
    for (const auto f : flow)
      if (f < 0) fail += "    unidirectional plan moves items backwards\n";
  }
  const std::int64_t total = std::accumulate(c.loads.begin(), c.loads.end(), std::int64_t{0});
  std::int64_t first = 0; // ring number of this rank's first item before
  for (std::size_t j = 0; j < k; ++j)
    first += c.loads[j];
  std::int64_t tfirst = 0;
  for (std::size_t j = 0; j < k; ++j)
    tfirst += c.targets[j];
  const std::int64_t ib = c.item_bytes;
  const std::int64_t is = ib + c.in_pad[k];
  const std::int64_t os = ib + c.out_pad[k];
  std::vector<unsigned char> in(static_cast<std::size_t>(c.loads[k] * is), pad_byte);
  for (std::int64_t i = 0; i < c.loads[k]; ++i)
    for (std::int64_t b = 0; b < ib; ++b)
      in[static_cast<std::size_t>(i * is + b)] = item_byte(first + i, b, c.salt);
  const std::int64_t out_bytes = c.targets[k] * os;
  // A plan runs any number of times. Every rank runs both (collective) executions, whatever it
  // found in the first.
  for (int rep = 0; rep < 2; ++rep) {
    std::vector<unsigned char> out(static_cast<std::size_t>(out_bytes + guard_bytes), pad_byte);
    rc = redist_ring_plan_execute(plan, in.data(), is, out.data(), os);
    if (rc != REDIST_SUCCESS) {
      fail +=
          std::string("    execute: ") + redist_status_name(rc) + ": " + redist_last_error() + "\n";
      break;
    }
    int wrong = 0;
    for (std::int64_t p = 0; p < out_bytes + guard_bytes; ++p) {
      const std::int64_t j = p / os;
      const std::int64_t b = p % os;
      unsigned char want = pad_byte;
      std::int64_t item = -1;
      if (p < out_bytes && b < ib) {
        item = ((tfirst + j - wrap) % total + total) % total;
        want = item_byte(item, b, c.salt);
      }
      if (out[static_cast<std::size_t>(p)] != want && wrong++ < 3)
        fail += "    rank " + std::to_string(me) + " output byte " + std::to_string(p) +
                (item >= 0 ? " (item " + std::to_string(j) + " should be ring item " +
                                 std::to_string(item) + ")"
                           : " (padding/guard)") +
                " wrong\n";
    }
  }
  // Traffic adds up: everything sent is received.
  std::int64_t mine[2] = {info.items_sent, info.items_received};
  std::int64_t sums[2] = {0, 0};
  MPI_Allreduce(mine, sums, 2, MPI_INT64_T, MPI_SUM, MPI_COMM_WORLD);
  if (sums[0] != sums[1]) fail += "    items sent != items received over all ranks\n";
  if (c.transport != REDIST_RING_AUTO && info.transport != c.transport)
    fail += "    transport not honoured\n";
  if (info.predicted_time + 1e-9 < info.lower_bound)
    fail += "    predicted time below the lower bound\n";
  redist_ring_plan_destroy(&plan);
  if (plan != nullptr) fail += "    destroy left the handle set\n";
  return fail;
}

int run_cases(const char *name, std::uint64_t fallback, int forced_transport, bool force_path,
              int forced_direction) {
  const int np = world_size();
  const std::uint64_t seed = shared_seed(name, fallback + static_cast<unsigned>(np));
  Rng rng(seed);
  int failed = 0;
  int run = 0;
  for (int index = 0; index < options().cases; ++index) {
    const RingCase c = draw_case(rng, np, index, forced_transport, forced_direction, force_path);
    if (options().only_case >= 0 && options().only_case != index) continue;
    if (options().verbose) print0(c.describe());
    ++run;
    watchdog_arm("seed " + std::to_string(seed) + " np " + std::to_string(np) + ", " +
                 c.describe());
    const std::string fail = run_case(c);
    watchdog_disarm();
    if (!fail.empty())
      ADD_FAILURE() << "seed " << seed << " np " << np << ", " << c.describe() << fail;
    int bad = fail.empty() ? 0 : 1;
    int any = 0;
    MPI_Allreduce(&bad, &any, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
    failed += any;
  }
  print0("[  CASES   ] " + std::to_string(run) + " ring cases (" + name + ") on " +
         std::to_string(np) + " ranks, " + std::to_string(failed) + " failed\n");
  return failed;
}

TEST(Ring, NeighbourMatchesOracle) {
  EXPECT_EQ(run_cases("Ring.NeighbourMatchesOracle", 5100, REDIST_RING_NEIGHBOUR, false, -1), 0);
}

TEST(Ring, DirectMatchesOracle) {
  EXPECT_EQ(run_cases("Ring.DirectMatchesOracle", 5200, REDIST_RING_DIRECT, false, -1), 0);
}

TEST(Ring, AutoMatchesOracle) {
  EXPECT_EQ(run_cases("Ring.AutoMatchesOracle", 5300, REDIST_RING_AUTO, false, -1), 0);
}

TEST(Ring, PathBothDirections) {
  EXPECT_EQ(run_cases("Ring.PathUnidirectional", 5400, -1, true, REDIST_RING_UNIDIRECTIONAL), 0);
  EXPECT_EQ(run_cases("Ring.PathBidirectional", 5500, -1, true, REDIST_RING_BIDIRECTIONAL), 0);
}

TEST(Ring, ForwardingThroughOneItemProcesses) {
  // Everything flows from rank 0 to the last rank through processes holding one item each, in
  // chunks of one item: every intermediate process forwards far more than it holds.
  const int np = world_size();
  const auto n = static_cast<std::size_t>(np);
  for (const int direction : {REDIST_RING_UNIDIRECTIONAL, REDIST_RING_BIDIRECTIONAL}) {
    RingCase c;
    c.direction = direction;
    c.transport = REDIST_RING_NEIGHBOUR;
    c.path = true;
    c.loads.assign(n, 1);
    c.targets.assign(n, 1);
    c.loads[0] = 30;
    c.targets[n - 1] = 30;
    if (np == 1) c.targets[0] = 30;
    c.c_next.assign(n, 1.0);
    c.c_prev.assign(n, 1.0);
    c.c_next[n - 1] = inf;
    c.c_prev[0] = inf;
    c.item_bytes = 8;
    c.in_pad.assign(n, 3);
    c.out_pad.assign(n, 0);
    c.chunk = 1;
    c.salt = 9;
    watchdog_arm("forwarding chain, " + c.describe());
    const std::string fail = run_case(c);
    watchdog_disarm();
    EXPECT_EQ(fail, "") << c.describe();
  }
}

TEST(Ring, ColumnsOfLocalArray) {
  // Columns of a column-major local array (m rows, leading dimension lld > m) of doubles: the
  // item is a column, item_bytes = 8m, stride = 8 lld; LLD padding rows stay untouched.
  const int np = world_size();
  const int me = world_rank();
  const std::int64_t m = 5;
  const std::int64_t lld = 7;
  // Columns now: decreasing along the path, so that even a unidirectional path can flatten it.
  const std::int64_t load = 2 + (np - 1 - me);
  std::int64_t total = 0;
  for (int r = 0; r < np; ++r)
    total += 2 + r;
  const std::int64_t flat = total / np + (me < total % np ? 1 : 0);
  std::int64_t first = 0;
  for (int r = 0; r < me; ++r)
    first += 2 + (np - 1 - r);
  std::vector<double> a(static_cast<std::size_t>(lld * load), -1.0);
  for (std::int64_t j = 0; j < load; ++j)
    for (std::int64_t i = 0; i < m; ++i)
      a[static_cast<std::size_t>(i + j * lld)] = static_cast<double>(i + 1000 * (first + j));
  for (const int direction : {REDIST_RING_UNIDIRECTIONAL, REDIST_RING_BIDIRECTIONAL}) {
    redist_ring_plan plan = nullptr;
    // A path (wrap link forbidden) keeps the global column order.
    const double cn = me == np - 1 ? inf : 1.0 + me % 3;
    const double cp = me == 0 ? inf : 2.0;
    ASSERT_EQ(redist_ring_plan_create(MPI_COMM_WORLD, direction, REDIST_RING_NEIGHBOUR, load, flat,
                                      cn, cp, m * 8, 1, &plan),
              REDIST_SUCCESS)
        << redist_last_error();
    std::vector<double> b(static_cast<std::size_t>(lld * flat), -2.0);
    ASSERT_EQ(redist_ring_plan_execute(plan, a.data(), lld * 8, b.data(), lld * 8), REDIST_SUCCESS)
        << redist_last_error();
    std::int64_t tfirst = 0;
    for (int r = 0; r < me; ++r)
      tfirst += total / np + (r < total % np ? 1 : 0);
    for (std::int64_t j = 0; j < flat; ++j) {
      for (std::int64_t i = 0; i < lld; ++i) {
        const double want = i < m ? static_cast<double>(i + 1000 * (tfirst + j)) : -2.0;
        EXPECT_EQ(b[static_cast<std::size_t>(i + j * lld)], want)
            << "rank " << me << " column " << j << " row " << i;
      }
    }
    redist_ring_plan_destroy(&plan);
  }
}

// --- Errors: a status on every rank, nothing written, no deadlock ------------------------------

TEST(Ring, ErrorsAreCollective) {
  const int np = world_size();
  const int me = world_rank();
  const int bad = np - 1;
  redist_ring_plan plan = nullptr;
  // Empty process on one rank: REDIST_ERR_ARGUMENT there, REDIST_ERR_REMOTE elsewhere.
  int rc = redist_ring_plan_create(MPI_COMM_WORLD, REDIST_RING_BIDIRECTIONAL, REDIST_RING_NEIGHBOUR,
                                   me == bad ? 0 : 3, 3, 1.0, 1.0, 8, 0, &plan);
  if (me == bad) {
    EXPECT_EQ(rc, REDIST_ERR_ARGUMENT);
    EXPECT_NE(std::string(redist_last_error()).find("argument load = 0"), std::string::npos)
        << redist_last_error();
  } else {
    EXPECT_EQ(rc, np > 1 ? REDIST_ERR_REMOTE : REDIST_ERR_ARGUMENT) << redist_last_error();
  }
  EXPECT_EQ(plan, nullptr);
  // Targets that do not add up: the same error on every rank.
  rc = redist_ring_plan_create(MPI_COMM_WORLD, REDIST_RING_UNIDIRECTIONAL, REDIST_RING_DIRECT, 3,
                               me == 0 ? 4 : 3, 1.0, 1.0, 8, 0, &plan);
  EXPECT_EQ(rc, REDIST_ERR_ARGUMENT);
  EXPECT_NE(std::string(redist_last_error()).find("target (sum over the ranks)"), std::string::npos)
      << redist_last_error();
  // A unidirectional path cannot move items backwards.
  if (np > 1) {
    rc = redist_ring_plan_create(MPI_COMM_WORLD, REDIST_RING_UNIDIRECTIONAL, REDIST_RING_NEIGHBOUR,
                                 me == 1 ? 4 : 3, me == 0 ? 4 : 3, me == np - 1 ? inf : 1.0, 1.0, 8,
                                 0, &plan);
    EXPECT_EQ(rc, REDIST_ERR_ARGUMENT);
    EXPECT_NE(std::string(redist_last_error()).find("only move forward"), std::string::npos)
        << redist_last_error();
    // Ranks disagreeing on the direction.
    rc = redist_ring_plan_create(MPI_COMM_WORLD, me == 0 ? 0 : 1, REDIST_RING_NEIGHBOUR, 3, 3, 1.0,
                                 1.0, 8, 0, &plan);
    EXPECT_EQ(rc, REDIST_ERR_MISMATCH) << redist_last_error();
  }
  // A bad cost.
  rc = redist_ring_plan_create(MPI_COMM_WORLD, REDIST_RING_BIDIRECTIONAL, REDIST_RING_NEIGHBOUR, 3,
                               3, 1.0, me == 0 ? -1.0 : 1.0, 8, 0, &plan);
  EXPECT_NE(rc, REDIST_SUCCESS);
  if (me == 0) {
    EXPECT_NE(std::string(redist_last_error()).find("cost_prev = -1"), std::string::npos)
        << redist_last_error();
  }
  // Execute with a NULL output on one rank: every rank fails, nothing is written.
  const std::int64_t load = 2 + (me % 2);
  std::int64_t total = 0;
  for (int r = 0; r < np; ++r)
    total += 2 + (r % 2);
  const std::int64_t target = total / np + (me < total % np ? 1 : 0);
  ASSERT_EQ(redist_ring_plan_create(MPI_COMM_WORLD, REDIST_RING_BIDIRECTIONAL,
                                    REDIST_RING_NEIGHBOUR, load, target, 1.0, 1.0, 4, 0, &plan),
            REDIST_SUCCESS)
      << redist_last_error();
  std::vector<int> in(static_cast<std::size_t>(load), 7);
  std::vector<int> out(static_cast<std::size_t>(target), -5);
  rc = redist_ring_plan_execute(plan, in.data(), 4, me == bad ? nullptr : out.data(), 4);
  EXPECT_EQ(rc,
            me == bad ? REDIST_ERR_ARGUMENT : (np > 1 ? REDIST_ERR_REMOTE : REDIST_ERR_ARGUMENT));
  EXPECT_TRUE(std::all_of(out.begin(), out.end(), [](int v) { return v == -5; }));
  rc = redist_ring_plan_execute(plan, in.data(), 2, out.data(), 4);
  EXPECT_EQ(rc, REDIST_ERR_ARGUMENT);
  EXPECT_NE(std::string(redist_last_error()).find("in_stride"), std::string::npos);
  EXPECT_EQ(redist_ring_plan_destroy(&plan), REDIST_SUCCESS);
  EXPECT_EQ(redist_ring_plan_destroy(&plan), REDIST_SUCCESS); // NULL accepted
}

TEST(Ring, ScheduleApiIsLocal) {
  // The pure planner through C: the worked example of Algorithm 2 (see the unit tests).
  const std::int64_t loads[] = {4, 1, 1, 1};
  const std::int64_t targets[] = {1, 1, 1, 4};
  const double cn[] = {2, 1, 1, 1};
  redist_ring_schedule s = nullptr;
  ASSERT_EQ(
      redist_ring_schedule_create(4, REDIST_RING_UNIDIRECTIONAL, loads, targets, cn, nullptr, &s),
      REDIST_SUCCESS)
      << redist_last_error();
  redist_ring_info info{};
  ASSERT_EQ(redist_ring_schedule_get_info(s, &info), REDIST_SUCCESS);
  EXPECT_EQ(info.algorithm, REDIST_RING_ALGORITHM2);
  EXPECT_EQ(info.predicted_time, 6.0);
  EXPECT_EQ(info.lower_bound, 6.0);
  std::int64_t flow[4] = {};
  ASSERT_EQ(redist_ring_schedule_get_flows(s, flow), REDIST_SUCCESS);
  EXPECT_EQ(flow[0], 3);
  EXPECT_EQ(flow[1], 3);
  EXPECT_EQ(flow[2], 3);
  EXPECT_EQ(flow[3], 0);
  std::int64_t count = 0;
  ASSERT_EQ(redist_ring_schedule_get_moves(s, &count, nullptr, nullptr, nullptr, nullptr, nullptr),
            REDIST_SUCCESS);
  std::vector<int> from(static_cast<std::size_t>(count)), to(static_cast<std::size_t>(count));
  std::vector<std::int64_t> items(static_cast<std::size_t>(count));
  std::vector<double> st(static_cast<std::size_t>(count)), fin(static_cast<std::size_t>(count));
  ASSERT_EQ(redist_ring_schedule_get_moves(s, &count, from.data(), to.data(), items.data(),
                                           st.data(), fin.data()),
            REDIST_SUCCESS);
  EXPECT_EQ(std::accumulate(items.begin(), items.end(), std::int64_t{0}), 9);
  EXPECT_EQ(*std::max_element(fin.begin(), fin.end()), 6.0);
  EXPECT_EQ(redist_ring_schedule_destroy(&s), REDIST_SUCCESS);
  EXPECT_EQ(s, nullptr);
  const std::int64_t zero[] = {4, 0, 1, 1};
  EXPECT_EQ(
      redist_ring_schedule_create(4, REDIST_RING_UNIDIRECTIONAL, zero, targets, cn, nullptr, &s),
      REDIST_ERR_ARGUMENT);
  EXPECT_NE(
      std::string(redist_last_error()).find("redist_ring_schedule_create: argument loads[1] = 0"),
      std::string::npos)
      << redist_last_error();
  const double w[] = {1, 2, 3};
  std::int64_t t[3] = {};
  EXPECT_EQ(redist_ring_targets_from_weights(3, 10, w, t), REDIST_SUCCESS);
  EXPECT_EQ(t[0] + t[1] + t[2], 10);
  std::int64_t mine = 0;
  EXPECT_EQ(redist_ring_target_from_weight(MPI_COMM_WORLD, 5, 1.0, &mine), REDIST_SUCCESS);
  EXPECT_GE(mine, 4);
  EXPECT_LE(mine, 6);
}

} // namespace
} // namespace mpitest
