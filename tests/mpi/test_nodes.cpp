// Node-aware execution (src/exec/transport/nodes.hpp): the executor's node map against
// MPI_Comm_split_type, and no message between ranks of different nodes moved in a single copy.
// Run on one machine (every rank on one node) and with REDIST_TEST_NODES=2, which splits the
// ranks by parity into two nodes. The transfer sends from every rank to every other rank
// (columns cyclic on a 1 x P grid to rows cyclic on a P x 1 grid), so both kinds of pairs
// carry messages.

#include "agreement.hpp"
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

// NodeAgreement (src/exec/transport/agreement.hpp) on communicators of every rank (in order and
// reversed), of pairs of ranks and of single ranks: it may share its lines exactly where 2 to
// kMaxRanks ranks are all on one node (the test's own view of nodes), shares them there (where
// every rank can read the memory of the communicator's rank 0), and gives, agreement after
// agreement, the maximum MPI_Allreduce gives of random words (1 to 9 of them, more than a line
// holds too, negative ones too), the agreements of two communicators interleaved. The agreement
// kept with a communicator is not inherited by its duplicates.
TEST(NodeAgreement, SharedWhereOnOneNodeAndAgreesAsMpiAllreduce) {
  const int me = comm_rank(MPI_COMM_WORLD);
  const int size = comm_size(MPI_COMM_WORLD);
  const std::vector<char> same = same_node_as_me();
  const std::vector<char> readable = readable_by_me();
  MPI_Comm comms[4] = {MPI_COMM_NULL, MPI_COMM_NULL, MPI_COMM_NULL, MPI_COMM_NULL};
  MPI_Comm_dup(MPI_COMM_WORLD, &comms[0]);
  MPI_Comm_split(MPI_COMM_WORLD, 0, size - me, &comms[1]);
  MPI_Comm_split(MPI_COMM_WORLD, me / 2, me, &comms[2]);
  MPI_Comm_split(MPI_COMM_WORLD, me, 0, &comms[3]);
  std::vector<redist::NodeAgreement> agreements(4);
  for (int c = 0; c < 4; ++c) {
    const MPI_Comm comm = comms[c];
    const std::string where = "communicator " + std::to_string(c) + ", rank " + std::to_string(me);
    const std::vector<int> members = world_ranks_of(comm);
    int on_one_node = 1;
    for (const int r : members)
      on_one_node &= same[static_cast<std::size_t>(r)];
    MPI_Allreduce(MPI_IN_PLACE, &on_one_node, 1, MPI_INT, MPI_MIN, comm);
    const bool possible =
        on_one_node == 1 && members.size() >= 2 &&
        members.size() <= static_cast<std::size_t>(redist::NodeAgreement::kMaxRanks);
    ASSERT_EQ(redist::NodeAgreement::possible(redist::node_ids(comm)), possible) << where;
    int can_map = readable[static_cast<std::size_t>(members[0])] != 0 ? 1 : 0;
    MPI_Allreduce(MPI_IN_PLACE, &can_map, 1, MPI_INT, MPI_MIN, comm);
    if (possible) {
      ASSERT_EQ(agreements[static_cast<std::size_t>(c)].share(comm), MPI_SUCCESS) << where;
    }
    EXPECT_EQ(agreements[static_cast<std::size_t>(c)].shared(), possible && can_map == 1) << where;

    ASSERT_EQ(redist::kept_agreement(comm), nullptr) << where;
    ASSERT_EQ(redist::keep_agreement(comm), MPI_SUCCESS) << where;
    const redist::NodeAgreement *kept = redist::kept_agreement(comm);
    ASSERT_NE(kept, nullptr) << where;
    EXPECT_EQ(kept->shared(), possible && can_map == 1) << where;
    MPI_Comm copy = MPI_COMM_NULL;
    MPI_Comm_dup(comm, &copy);
    EXPECT_EQ(redist::kept_agreement(copy), nullptr) << where << ": inherited by a duplicate";
    MPI_Comm_free(&copy);
  }
  // Up to two words more than a line holds (those agreements go through MPI_Allreduce).
  constexpr int kMostWords = redist::single_copy::SharedLines::kMaxWords + 2;
  std::mt19937_64 random(0x5eedULL + static_cast<std::uint64_t>(me));
  std::int64_t wrong = 0;
  for (int round = 0; round < 400; ++round) {
    for (int c = 0; c < 4; ++c) {
      // Every rank of a communicator draws the same count, its own words.
      const int count = 1 + (round * 5 + c) % kMostWords;
      long long words[kMostWords];
      long long want[kMostWords];
      for (int k = 0; k < count; ++k)
        words[k] = static_cast<long long>(random() >> (random() % 64)) * (k % 2 == 0 ? 1 : -1);
      MPI_Allreduce(words, want, count, MPI_LONG_LONG, MPI_MAX, comms[c]);
      ASSERT_EQ(agreements[static_cast<std::size_t>(c)].max(comms[c], words, count), MPI_SUCCESS);
      for (int k = 0; k < count; ++k)
        wrong += words[k] != want[k] ? 1 : 0;
    }
  }
  EXPECT_EQ(wrong, 0) << "rank " << me << ": words agreed otherwise than by MPI_Allreduce";
  agreements.clear(); // the lines go before their communicators (not that they need them)
  for (MPI_Comm &comm : comms)
    MPI_Comm_free(&comm);
}

// A rank waiting in a shared agreement still drives MPI's progress: rank 1 sends rank 0 a
// message of 1 MiB (a rendezvous: it completes only once rank 0's MPI answers) before its
// execution; rank 0 posts the receive, then executes, and waits for the message afterwards.
// The plan moves nothing between ranks (A's layout is B's), so nothing in the execution but the
// agreement waits on the others: were the waiting rank never to enter MPI, both would wait
// for good (the test's timeout).
TEST(NodeAgreement, WaitingRankDrivesMpiProgress) {
  const int me = comm_rank(MPI_COMM_WORLD);
  AllToAll t(2);
  const redist_layout la = t.layout_a();
  redist_plan plan = nullptr;
  ASSERT_EQ(redist_plan_create(MPI_COMM_WORLD, t.m, t.n, REDIST_DOUBLE, &la, &la,
                               REDIST_REGION_FULL, 0, &plan),
            REDIST_SUCCESS)
      << redist_last_error();
  std::vector<double> b(t.a.size(), -1.0);
  for (int run = 0; run < 3; ++run) { // later executions agree through the shared lines
    ASSERT_EQ(redist_plan_execute(plan, t.a.data(), b.data()), REDIST_SUCCESS)
        << redist_last_error();
  }
  std::vector<char> message(std::size_t{1} << 20, static_cast<char>(me));
  MPI_Request request = MPI_REQUEST_NULL;
  if (me == 0) {
    MPI_Irecv(message.data(), static_cast<int>(message.size()), MPI_CHAR, 1, 99, MPI_COMM_WORLD,
              &request);
  } else if (me == 1) {
    MPI_Send(message.data(), static_cast<int>(message.size()), MPI_CHAR, 0, 99, MPI_COMM_WORLD);
  }
  b.assign(b.size(), -1.0);
  EXPECT_EQ(redist_plan_execute(plan, t.a.data(), b.data()), REDIST_SUCCESS) << redist_last_error();
  EXPECT_EQ(b, t.a) << "rank " << me;
  MPI_Wait(&request, MPI_STATUS_IGNORE);
  if (me == 0) {
    EXPECT_EQ(message.front(), 1);
    EXPECT_EQ(message.back(), 1);
  }
  EXPECT_EQ(redist_plan_destroy(&plan), REDIST_SUCCESS);
}

// NodeAgreement shared in steps riding on the caller's agreements (the executor's: offer()
// and take() around its planning agreement, confirm() after its first exchange): shared on
// every rank where every rank mapped rank 0's lines, on none where one rank could not (here:
// told another file), and agreeing as MPI_Allreduce does either way.
TEST(NodeAgreement, SharedInStepsOnlyWhereEveryRankMappedTheLines) {
  const int me = comm_rank(MPI_COMM_WORLD);
  const int size = comm_size(MPI_COMM_WORLD);
  MPI_Comm comm = MPI_COMM_NULL;
  MPI_Comm_dup(MPI_COMM_WORLD, &comm);
  const bool possible = redist::NodeAgreement::possible(redist::node_ids(comm));
  const std::vector<char> readable = readable_by_me();
  int can_map = readable[0] != 0 ? 1 : 0;
  MPI_Allreduce(MPI_IN_PLACE, &can_map, 1, MPI_INT, MPI_MIN, comm);
  std::mt19937_64 random(0xab5eULL + static_cast<std::uint64_t>(me));
  for (const int refusing : {-1, size - 1}) {
    const std::string where =
        "rank " + std::to_string(me) + ", rank " + std::to_string(refusing) + " told another file";
    redist::NodeAgreement agreement;
    if (possible) {
      redist::single_copy::LinesAddress lines = agreement.offer(me, size);
      long long words[5] = {lines.pid, lines.fd, static_cast<long long>(lines.inode),
                            static_cast<long long>(lines.offset),
                            static_cast<long long>(lines.file_bytes)};
      MPI_Allreduce(MPI_IN_PLACE, words, 5, MPI_LONG_LONG, MPI_MAX, comm);
      lines = {words[0], words[1], static_cast<std::uint64_t>(words[2]),
               static_cast<std::uint64_t>(words[3]), static_cast<std::uint64_t>(words[4])};
      if (me == refusing && refusing != 0) lines.inode += 1;
      agreement.take(lines);
      EXPECT_TRUE(agreement.pending()) << where;
      long long missing = agreement.missing();
      MPI_Allreduce(MPI_IN_PLACE, &missing, 1, MPI_LONG_LONG, MPI_MAX, comm);
      agreement.confirm(missing);
      EXPECT_FALSE(agreement.pending()) << where;
    }
    const bool expected = possible && can_map == 1 && (refusing < 0 || refusing == 0);
    EXPECT_EQ(agreement.shared(), expected) << where;
    std::int64_t wrong = 0;
    for (int round = 0; round < 100; ++round) {
      long long words[3];
      long long want[3];
      for (long long &w : words)
        w = static_cast<long long>(random() % 1000) - 500;
      MPI_Allreduce(words, want, 3, MPI_LONG_LONG, MPI_MAX, comm);
      ASSERT_EQ(agreement.max(comm, words, 3), MPI_SUCCESS) << where;
      for (int k = 0; k < 3; ++k)
        wrong += words[k] != want[k] ? 1 : 0;
    }
    EXPECT_EQ(wrong, 0) << where;
  }
  MPI_Comm_free(&comm);
}
