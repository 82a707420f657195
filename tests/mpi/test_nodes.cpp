// Node-aware execution (src/exec/transport/nodes.hpp): the executor's node map against
// MPI_Comm_split_type, and no message between ranks of different nodes moved in a single copy.
// Run on one machine (every rank on one node) and with REDIST_TEST_NODES=2, which splits the
// ranks by parity into two nodes. The transfer sends from every rank to every other rank
// (columns cyclic on a 1 x P grid to rows cyclic on a P x 1 grid), so both kinds of pairs
// carry messages.

#include "api_internal.hpp"
#include "exec.hpp"
#include "nodes.hpp"
#include "redist.h"
#include "single_copy.hpp"

#include <gtest/gtest.h>
#include <mpi.h>

#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <random>
#include <string>
#include <vector>

namespace single_copy = redist::single_copy;

namespace {

int comm_rank(MPI_Comm comm) {
  int r = 0;
  MPI_Comm_rank(comm, &r);
  return r;
}

int comm_size(MPI_Comm comm) {
  int s = 0;
  MPI_Comm_size(comm, &s);
  return s;
}

/// World ranks of comm's ranks, by rank in comm.
std::vector<int> world_ranks_of(MPI_Comm comm) {
  MPI_Group world_group = MPI_GROUP_NULL;
  MPI_Group group = MPI_GROUP_NULL;
  MPI_Comm_group(MPI_COMM_WORLD, &world_group);
  MPI_Comm_group(comm, &group);
  const int size = comm_size(comm);
  std::vector<int> in_comm(static_cast<std::size_t>(size));
  std::vector<int> in_world(static_cast<std::size_t>(size));
  for (int i = 0; i < size; ++i)
    in_comm[static_cast<std::size_t>(i)] = i;
  MPI_Group_translate_ranks(group, size, in_comm.data(), world_group, in_world.data());
  MPI_Group_free(&group);
  MPI_Group_free(&world_group);
  return in_world;
}

/// The test's own view of nodes: for every rank of MPI_COMM_WORLD, whether it shares this
/// rank's node, from MPI_Comm_split_type (split by rank modulo REDIST_TEST_NODES when set).
std::vector<char> same_node_as_me() {
  const int rank = comm_rank(MPI_COMM_WORLD);
  const int size = comm_size(MPI_COMM_WORLD);
  MPI_Comm shared = MPI_COMM_NULL;
  MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, rank, MPI_INFO_NULL, &shared);
  const char *env = std::getenv("REDIST_TEST_NODES");
  const int k = env != nullptr ? std::atoi(env) : 1;
  MPI_Comm node = shared;
  if (k > 1) {
    MPI_Comm_split(shared, rank % k, rank, &node);
    MPI_Comm_free(&shared);
  }
  std::vector<char> same(static_cast<std::size_t>(size), 0);
  for (const int r : world_ranks_of(node))
    same[static_cast<std::size_t>(r)] = 1;
  MPI_Comm_free(&node);
  return same;
}

/// Whether this rank can read each rank's memory (process_vm_readv), by its identity.
std::vector<char> readable_by_me() {
  const int size = comm_size(MPI_COMM_WORLD);
  std::uint64_t probe = 0;
  const single_copy::SharedBuffer buffer(4096, true);
  const single_copy::Identity mine = single_copy::identify(probe, 1, buffer);
  std::vector<single_copy::Identity> all(static_cast<std::size_t>(size));
  MPI_Allgather(&mine, sizeof mine, MPI_BYTE, all.data(), sizeof mine, MPI_BYTE, MPI_COMM_WORLD);
  std::vector<char> readable(static_cast<std::size_t>(size), 0);
  for (int r = 0; r < size; ++r) {
    readable[static_cast<std::size_t>(r)] = single_copy::can_read(all[static_cast<std::size_t>(r)]);
  }
  MPI_Barrier(MPI_COMM_WORLD); // the others' probes read ours before it goes
  return readable;
}

/// Every rank sends (m/P)(n/P) elements to every other rank: A's columns cyclic over a 1 x P
/// grid, B's rows cyclic over a P x 1 grid. m and n are multiples of P.
struct AllToAll {
  int p = 1;
  int me = 0;
  std::int64_t m = 0, n = 0;
  std::vector<int> ranks;
  std::vector<double> a, b;

  explicit AllToAll(std::int64_t per) {
    p = comm_size(MPI_COMM_WORLD);
    me = comm_rank(MPI_COMM_WORLD);
    m = per * p;
    n = 2 * per * p;
    ranks.resize(static_cast<std::size_t>(p));
    for (int r = 0; r < p; ++r)
      ranks[static_cast<std::size_t>(r)] = r;
    a.resize(static_cast<std::size_t>(m * (n / p)));
    for (std::int64_t lj = 0; lj < n / p; ++lj) {
      for (std::int64_t i = 0; i < m; ++i) {
        a[static_cast<std::size_t>(lj * m + i)] = value(i, lj * p + me);
      }
    }
    b.assign(static_cast<std::size_t>((m / p) * n), -1.0);
  }
  static double value(std::int64_t i, std::int64_t j) {
    return static_cast<double>(i * 100000 + j);
  }
  [[nodiscard]] redist_layout layout_a() const {
    return {m, n, m, 1, 1, p, 0, 0, ranks.data(), 0, 0, m};
  }
  [[nodiscard]] redist_layout layout_b() const {
    return {m, n, 1, n, p, 1, 0, 0, ranks.data(), 0, 0, m / p};
  }
  /// Elements of B wrong.
  [[nodiscard]] std::int64_t wrong() const {
    std::int64_t bad = 0;
    for (std::int64_t j = 0; j < n; ++j) {
      for (std::int64_t li = 0; li < m / p; ++li) {
        bad += b[static_cast<std::size_t>(j * (m / p) + li)] != value(li * p + me, j) ? 1 : 0;
      }
    }
    return bad;
  }
};

class Nodes : public ::testing::TestWithParam<int> {};

TEST_P(Nodes, MapMatchesSplitTypeAndNoSingleCopyCrossesNodes) {
  const int me = comm_rank(MPI_COMM_WORLD);
  const int size = comm_size(MPI_COMM_WORLD);
  const std::vector<char> same = same_node_as_me();
  const std::vector<char> readable = readable_by_me();
  if (const char *env = std::getenv("REDIST_TEST_NODES"); env != nullptr && std::atoi(env) == 2) {
    for (int r = 0; r < size; ++r) {
      if ((r - me) % 2 != 0) {
        ASSERT_EQ(same[static_cast<std::size_t>(r)], 0) << "ranks " << me << " and " << r;
      }
    }
  }
  // The node ids themselves: the same on two ranks exactly when they share a node.
  const std::vector<int> ids = redist::node_ids(MPI_COMM_WORLD);
  for (int r = 0; r < size; ++r) {
    EXPECT_EQ(ids[static_cast<std::size_t>(r)] == ids[static_cast<std::size_t>(me)],
              same[static_cast<std::size_t>(r)] != 0)
        << "rank " << me << ", peer " << r;
  }

  AllToAll t(3);
  redist_options options;
  redist_options_init(&options);
  options.schedule = GetParam();
  const redist_layout la = t.layout_a();
  const redist_layout lb = t.layout_b();
  redist_plan plan = nullptr;
  ASSERT_EQ(redist_plan_create_opt(MPI_COMM_WORLD, t.m, t.n, REDIST_DOUBLE, &la, &lb,
                                   REDIST_REGION_FULL, 0, &options, &plan),
            REDIST_SUCCESS)
      << redist_last_error();
  const redist::Executor &executor = *plan->executor;
  const redist::NodeMap &nodes = executor.nodes();
  const redist::RankPlan &rp = executor.plan();
  ASSERT_EQ(rp.sends.size(), static_cast<std::size_t>(size - 1));
  std::size_t inside_readable = 0; // receives from readable ranks of this node
  for (std::size_t i = 0; i < rp.sends.size(); ++i) {
    EXPECT_EQ(nodes.send_inside(i), same[static_cast<std::size_t>(rp.sends[i].rank)] != 0)
        << "rank " << me << " sending to " << rp.sends[i].rank;
  }
  for (std::size_t i = 0; i < rp.recvs.size(); ++i) {
    const auto peer = static_cast<std::size_t>(rp.recvs[i].rank);
    EXPECT_EQ(nodes.recv_inside(i), same[peer] != 0)
        << "rank " << me << " receiving from " << rp.recvs[i].rank;
    inside_readable += same[peer] != 0 && readable[peer] != 0 ? 1 : 0;
  }
  // Bytes inside the node and across, from the transfer: (m/P)(n/P) doubles each way between
  // any two ranks.
  std::int64_t peers_inside = 0;
  for (int r = 0; r < size; ++r)
    peers_inside += r != me && same[static_cast<std::size_t>(r)] != 0;
  const std::int64_t per_peer = (t.m / size) * (t.n / size) * 8;
  redist_plan_node_info node_info{};
  ASSERT_EQ(redist_plan_get_node_info(plan, &node_info), REDIST_SUCCESS) << redist_last_error();
  EXPECT_EQ(node_info.bytes_sent_inside, peers_inside * per_peer);
  EXPECT_EQ(node_info.bytes_received_inside, peers_inside * per_peer);
  EXPECT_EQ(node_info.bytes_sent_across, (size - 1 - peers_inside) * per_peer);
  EXPECT_EQ(node_info.bytes_received_across, (size - 1 - peers_inside) * per_peer);
  EXPECT_EQ(node_info.send_peers_inside, peers_inside);
  EXPECT_EQ(node_info.recv_peers_inside, peers_inside);
  redist_plan_info info{};
  ASSERT_EQ(redist_plan_get_info(plan, &info), REDIST_SUCCESS);
  EXPECT_EQ(node_info.bytes_sent_inside + node_info.bytes_sent_across, info.bytes_sent);
  EXPECT_EQ(node_info.bytes_received_inside + node_info.bytes_received_across, info.bytes_received);
  EXPECT_EQ(redist_plan_get_node_info(plan, nullptr), REDIST_ERR_ARGUMENT);
  EXPECT_EQ(redist_plan_get_node_info(nullptr, &node_info), REDIST_ERR_ARGUMENT);
  for (int e = 0; e < 3; ++e) {
    ASSERT_EQ(redist_plan_execute(plan, t.a.data(), t.b.data()), REDIST_SUCCESS)
        << redist_last_error();
    EXPECT_EQ(t.wrong(), 0) << "execution " << e + 1 << " on rank " << me;
    EXPECT_EQ(executor.single_copy_across_nodes(), 0U) << "execution " << e + 1;
  }
  // REDIST_SINGLE_COPY=always reads every message from a readable rank of the node: the
  // node map does not turn single copy off inside a node. Two-phase plans: more messages.
  const char *mode = std::getenv("REDIST_SINGLE_COPY");
  if (mode != nullptr && std::string(mode) == "always" &&
      GetParam() != REDIST_SCHEDULE_MULTIPHASE) {
    EXPECT_EQ(executor.single_copy_receives(), inside_readable) << "rank " << me;
  }
  ASSERT_EQ(redist_plan_destroy(&plan), REDIST_SUCCESS);
}

INSTANTIATE_TEST_SUITE_P(Schedules, Nodes,
                         ::testing::Values(REDIST_SCHEDULE_ALL_AT_ONCE, REDIST_SCHEDULE_STEPWISE,
                                           REDIST_SCHEDULE_MULTIPHASE));

} // namespace

namespace {

// redist_calibrate_nodes measures a level exactly where MPI sees a pair of ranks for it: inside
// a node when two ranks share one, across when two ranks are on different nodes (never on one
// machine without REDIST_TEST_NODES; always with the parity split or on the virtual cluster,
// bench/cluster). Every rank gets the same values; a plan made with them runs correctly.
TEST(CalibrateNodes, LevelsWhereMpiSeesThem) {
  const int me = comm_rank(MPI_COMM_WORLD);
  const std::vector<char> same = same_node_as_me();
  int expected[2] = {0, 0}; // has_intra, has_inter
  for (std::size_t r = 0; r < same.size(); ++r) {
    expected[0] |= same[r] != 0 && static_cast<int>(r) != me ? 1 : 0;
    expected[1] |= same[r] == 0 ? 1 : 0;
  }
  MPI_Allreduce(MPI_IN_PLACE, expected, 2, MPI_INT, MPI_LOR, MPI_COMM_WORLD);

  redist_calibration c{};
  ASSERT_EQ(redist_calibrate_nodes(MPI_COMM_WORLD, &c), REDIST_SUCCESS) << redist_last_error();
  EXPECT_EQ(c.has_intra != 0, expected[0] != 0) << "rank " << me;
  EXPECT_EQ(c.has_inter != 0, expected[1] != 0) << "rank " << me;
  // On the virtual cluster (bench/cluster/calibrate_test.sh) the ranks must span nodes.
  if (const char *env = std::getenv("REDIST_TEST_EXPECT_NODES"); env != nullptr) {
    ASSERT_NE(c.has_inter, 0) << "REDIST_TEST_EXPECT_NODES=" << env << " but one node";
  }
  if (me == 0) {
    std::printf("calibration: intra %g s + %g s/byte (%s), inter %g s + %g s/byte (%s)\n",
                c.intra_alpha, c.intra_beta, c.has_intra ? "measured" : "absent", c.inter_alpha,
                c.inter_beta, c.has_inter ? "measured" : "absent");
  }
  EXPECT_GT(c.intra_alpha, 0.0);
  EXPECT_GT(c.intra_beta, 0.0);
  EXPECT_TRUE(std::isfinite(c.intra_alpha) && std::isfinite(c.intra_beta));
  if (c.has_inter != 0) {
    EXPECT_GT(c.inter_alpha, 0.0);
    EXPECT_GT(c.inter_beta, 0.0);
    EXPECT_TRUE(std::isfinite(c.inter_alpha) && std::isfinite(c.inter_beta));
  } else {
    EXPECT_EQ(c.inter_alpha, 0.0);
    EXPECT_EQ(c.inter_beta, 0.0);
  }
  double mine[4] = {c.intra_alpha, c.intra_beta, c.inter_alpha, c.inter_beta};
  double low[4];
  double high[4];
  MPI_Allreduce(mine, low, 4, MPI_DOUBLE, MPI_MIN, MPI_COMM_WORLD);
  MPI_Allreduce(mine, high, 4, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
  for (int k = 0; k < 4; ++k)
    EXPECT_EQ(low[k], high[k]) << "value " << k << " differs between ranks";
  // The one-level calibration still answers, between ranks 0 and 1.
  double alpha = 0.0;
  double beta = 0.0;
  ASSERT_EQ(redist_calibrate(MPI_COMM_WORLD, &alpha, &beta), REDIST_SUCCESS);
  EXPECT_GT(alpha, 0.0);
  EXPECT_GT(beta, 0.0);
  EXPECT_EQ(redist_calibrate_nodes(MPI_COMM_WORLD, nullptr), REDIST_ERR_ARGUMENT);

  // A plan on the measured levels, with a limit so that `auto` weighs step schedules.
  AllToAll t(3);
  redist_options options;
  redist_options_init(&options);
  options.max_concurrent = 2;
  const redist_layout la = t.layout_a();
  const redist_layout lb = t.layout_b();
  redist_plan plan = nullptr;
  ASSERT_EQ(redist_plan_create_calibrated(MPI_COMM_WORLD, t.m, t.n, REDIST_DOUBLE, &la, &lb,
                                          REDIST_REGION_FULL, 0, &options, &c, &plan),
            REDIST_SUCCESS)
      << redist_last_error();
  ASSERT_EQ(redist_plan_execute(plan, t.a.data(), t.b.data()), REDIST_SUCCESS)
      << redist_last_error();
  EXPECT_EQ(t.wrong(), 0) << "rank " << me;
  redist_plan_info info{};
  ASSERT_EQ(redist_plan_get_info(plan, &info), REDIST_SUCCESS);
  EXPECT_NE(info.schedule, REDIST_SCHEDULE_AUTO);
  EXPECT_NE(info.schedule, REDIST_SCHEDULE_ALL_AT_ONCE); // cannot honour max_concurrent
  ASSERT_EQ(redist_plan_destroy(&plan), REDIST_SUCCESS);
  // Bad levels: an argument error on every rank, no plan.
  redist_calibration bad = c;
  bad.inter_beta = -1.0;
  EXPECT_EQ(redist_plan_create_calibrated(MPI_COMM_WORLD, t.m, t.n, REDIST_DOUBLE, &la, &lb,
                                          REDIST_REGION_FULL, 0, &options, &bad, &plan),
            REDIST_ERR_ARGUMENT);
  EXPECT_EQ(plan, nullptr);
  EXPECT_NE(std::string(redist_last_error()).find("levels->inter_beta"), std::string::npos)
      << redist_last_error();
}

} // namespace
