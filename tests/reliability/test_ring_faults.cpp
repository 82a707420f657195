// MPI errors during a ring execution (redist_ring.h; docs/reliability.md, Faults), injected by
// mpi_faults.cpp as MPI would report them under MPI_ERRORS_RETURN: MPI_Isend / MPI_Irecv fail at
// once, or the transfer completes and the wait reports the error. Process 0 holds almost every
// item and the ring is a path, so with one item per message many messages are in flight when
// the fault strikes, and the processes after process 1 wait for items forwarded through it.
//
// One failed call (OneFailedCallIsRepaired*), at every position an execution reaches, on
// process 0 or 1: every process returns success with every item right (the repair), under the
// harness's hang watchdog, no request left behind.
//
// A broken link (NeighbourTransport, DirectTransport): every ring message between processes 0
// and 1 fails on both ends, the repair's too. Checked on every process, under the watchdog:
//   - every process returns an error: REDIST_ERR_MPI where MPI failed (naming the MPI call),
//     REDIST_ERR_REMOTE elsewhere (naming a failing rank); nobody waits for a skipped message;
//   - no request of the ring is left behind (the fault layer counts the live requests of the
//     ring's tags);
//   - the same plan, executed again without faults, moves every item right: no message of the
//     failed execution is left for the next one.
// (mpi_counters.cpp counts every request too, but it interposes the same MPI calls as
// mpi_faults.cpp, so the two cannot be linked into one executable.)

#include "../mpi/harness.hpp"
#include "mpi_faults.hpp"

#include <redist.h>
#include <redist_ring.h>

#include <gtest/gtest.h>
#include <mpi.h>

#include <cmath>
#include <cstdint>
#include <string>
#include <vector>

namespace {

using mpitest::world_rank;
using mpitest::world_size;

// The ring's tags (src/api/ring_exec.cpp): rightward, leftward, direct, repair.
constexpr int kTagLo = 0x52494e;
constexpr int kTagHi = 0x524951;
constexpr std::int64_t kTarget = 6;  // items per process after the rebalance
constexpr std::int64_t kDoubles = 3; // per item

long long sum_everywhere(long long v) {
  MPI_Allreduce(MPI_IN_PLACE, &v, 1, MPI_LONG_LONG, MPI_SUM, MPI_COMM_WORLD);
  return v;
}

/// Process 0 holds every item but one per other process (the last ones, in rank order).
std::int64_t load_of(int rank) {
  const int np = world_size();
  return rank == 0 ? kTarget * np - (np - 1) : 1;
}

std::int64_t first_item(int rank) {
  std::int64_t first = 0;
  for (int r = 0; r < rank; ++r)
    first += load_of(r);
  return first;
}

double value(std::int64_t item, std::int64_t k, int salt) {
  return static_cast<double>(item * 16 + k) + 0.25 * salt;
}

/// One execution of `plan`; the number of wrong items of the output when `check`.
int execute(redist_ring_plan plan, int salt, bool check, std::int64_t &wrong) {
  const int me = world_rank();
  const std::int64_t load = load_of(me);
  std::vector<double> in(static_cast<std::size_t>(load * kDoubles));
  const std::int64_t first = first_item(me);
  for (std::int64_t i = 0; i < load; ++i)
    for (std::int64_t k = 0; k < kDoubles; ++k)
      in[static_cast<std::size_t>(i * kDoubles + k)] = value(first + i, k, salt);
  std::vector<double> out(static_cast<std::size_t>(kTarget * kDoubles), -1.0);
  const int status =
      redist_ring_plan_execute(plan, in.data(), kDoubles * 8, out.data(), kDoubles * 8);
  wrong = 0;
  if (check) {
    for (std::int64_t j = 0; j < kTarget; ++j)
      for (std::int64_t k = 0; k < kDoubles; ++k)
        wrong += out[static_cast<std::size_t>(j * kDoubles + k)] != value(me * kTarget + j, k, salt)
                     ? 1
                     : 0;
  }
  return status;
}

/// A plan on a path (no wrap link: the items keep their global order), one item per message;
/// NULL after a failure (reported).
redist_ring_plan make_plan(int transport) {
  const int me = world_rank();
  const double inf = INFINITY;
  redist_ring_plan plan = nullptr;
  if (redist_ring_plan_create(MPI_COMM_WORLD, REDIST_RING_BIDIRECTIONAL, transport, load_of(me),
                              kTarget, me == world_size() - 1 ? inf : 1.0, me == 0 ? inf : 1.0,
                              kDoubles * 8, 1, &plan) != REDIST_SUCCESS) {
    ADD_FAILURE() << redist_last_error();
    return nullptr;
  }
  return plan;
}

void run_case(int transport, faults::Mode mode) {
  const int me = world_rank();
  const std::string where = std::string("[") +
                            (transport == REDIST_RING_DIRECT ? "direct" : "neighbour") + ", " +
                            (mode == faults::Mode::post ? "Isend/Irecv fail" : "waits fail") + "] ";
  redist_ring_plan plan = make_plan(transport);
  if (plan == nullptr) return;

  const int peer = me == 0 ? 1 : me == 1 ? 0 : -1;
  const long long injected_before = faults::injected();
  faults::watch_any_type(true);
  if (peer >= 0) faults::arm(peer, mode, kTagLo, kTagHi);
  mpitest::watchdog_arm(where + "ring execution with a failed link");
  std::int64_t wrong = 0;
  const int status = execute(plan, 1, false, wrong);
  mpitest::watchdog_disarm();
  faults::disarm();
  const std::string message = redist_last_error();

  EXPECT_NE(status, REDIST_SUCCESS) << where << "every process must fail";
  if (status == REDIST_ERR_MPI) {
    EXPECT_LE(me, 1) << where << "MPI failed off the faulty link: " << message;
    EXPECT_NE(message.find("redist_ring_plan_execute: MPI_"), std::string::npos)
        << where << message;
  } else {
    EXPECT_EQ(status, REDIST_ERR_REMOTE) << where << redist_status_name(status) << ": " << message;
    EXPECT_NE(message.find("redist_ring_plan_execute: the exchange failed on rank "),
              std::string::npos)
        << where << message;
  }
  EXPECT_GT(sum_everywhere(status == REDIST_ERR_MPI ? 1 : 0), 0) << where << "nobody saw MPI fail";
  EXPECT_GT(sum_everywhere(faults::injected() - injected_before), 0) << where << "no fault";
  EXPECT_EQ(faults::live_requests(), 0) << where << "requests left behind";

  // The plan again, without faults: every item where it belongs.
  EXPECT_EQ(execute(plan, 2, true, wrong), REDIST_SUCCESS) << where << redist_last_error();
  EXPECT_EQ(wrong, 0) << where << "wrong output after the failed execution";
  EXPECT_EQ(faults::live_requests(), 0) << where << "requests left behind";
  faults::watch_any_type(false);
  EXPECT_EQ(redist_ring_plan_destroy(&plan), REDIST_SUCCESS) << where << redist_last_error();
}

/// One MPI call of the ring's messages fails on process `faulty` (the single-fault rule): the
/// `skip`-th call of the kinds `calls` selects, for every position the execution reaches. Every
/// process must return success with every item right: a failed post is posted again, a failed
/// completion is agreed and the exchange made again in direct messages (without that repair,
/// the processes return an error: checked by breaking it).
/// Returns, per kind of call, how many positions were swept.
std::vector<long long> sweep_single_faults(int transport, int faulty) {
  std::vector<long long> swept;
  const int me = world_rank();
  const std::string name = transport == REDIST_RING_DIRECT ? "direct" : "neighbour";
  redist_ring_plan plan = make_plan(transport);
  if (plan == nullptr) return swept;
  const std::vector<int> tags{kTagLo, kTagLo + 1, kTagLo + 2};
  for (const unsigned calls :
       {unsigned{faults::isend}, unsigned{faults::irecv}, unsigned{faults::wait_send},
        unsigned{faults::wait_recv}, unsigned{faults::waitany_unnamed}}) {
    // How many calls of these kinds one execution makes on the faulty process.
    faults::Fault counting;
    counting.calls = calls;
    counting.tags = tags;
    counting.skip = 1LL << 40;
    if (me == faulty) faults::arm(counting);
    std::int64_t wrong = 0;
    EXPECT_EQ(execute(plan, 0, true, wrong), REDIST_SUCCESS) << redist_last_error();
    long long positions = me == faulty ? faults::matched() : 0;
    faults::disarm();
    MPI_Bcast(&positions, 1, MPI_LONG_LONG, faulty, MPI_COMM_WORLD);
    for (long long skip = 0; skip < positions; ++skip) {
      const std::string where = "[" + name + ", calls " + std::to_string(calls) + ", rank " +
                                std::to_string(faulty) + ", call " + std::to_string(skip) + "] ";
      faults::Fault fault = counting;
      fault.skip = skip;
      fault.count = 1;
      const long long injected_before = faults::injected();
      if (me == faulty) faults::arm(fault);
      mpitest::watchdog_arm(where + "ring execution with one failed call");
      const int status = execute(plan, static_cast<int>(skip % 7) + 3, true, wrong);
      mpitest::watchdog_disarm();
      faults::disarm();
      EXPECT_EQ(status, REDIST_SUCCESS) << where << redist_last_error();
      EXPECT_EQ(wrong, 0) << where << "items wrong after the repair";
      EXPECT_EQ(sum_everywhere(faults::injected() - injected_before), 1) << where << "no fault";
      EXPECT_EQ(faults::live_requests(), 0) << where << "requests left behind";
    }
    swept.push_back(positions);
  }
  std::int64_t wrong = 0;
  EXPECT_EQ(execute(plan, 11, true, wrong), REDIST_SUCCESS) << redist_last_error();
  EXPECT_EQ(wrong, 0) << name << ": wrong output after the sweep";
  EXPECT_EQ(redist_ring_plan_destroy(&plan), REDIST_SUCCESS) << redist_last_error();
  return swept;
}

/// The sweeps on processes 0 (which only sends) and 1 (which receives): every kind of call
/// failed somewhere.
void sweep_both_ends(int transport) {
  const std::vector<long long> sender = sweep_single_faults(transport, 0);
  const std::vector<long long> receiver = sweep_single_faults(transport, 1);
  ASSERT_EQ(sender.size(), receiver.size());
  for (std::size_t kind = 0; kind < sender.size(); ++kind)
    EXPECT_GT(sender[kind] + receiver[kind], 0) << "no call of the " << kind << "th kind failed";
}

/// Every message of the exchange between processes 0 and 1 fails on both ends, the repair's
/// not: the repair alone moves them, and every item must be right everywhere (without the
/// repair's direct messages, the items process 1 should get from 0 stay -1: checked by
/// breaking it).
void broken_link_repaired(int transport, faults::Mode mode) {
  const int me = world_rank();
  redist_ring_plan plan = make_plan(transport);
  if (plan == nullptr) return;
  const int peer = me == 0 ? 1 : me == 1 ? 0 : -1;
  const long long injected_before = faults::injected();
  if (peer >= 0) faults::arm(peer, mode, kTagLo, kTagHi - 1); // kTagHi: the repair's
  mpitest::watchdog_arm("ring execution repaired past a broken link");
  std::int64_t wrong = 0;
  const int status = execute(plan, 5, true, wrong);
  mpitest::watchdog_disarm();
  faults::disarm();
  EXPECT_EQ(status, REDIST_SUCCESS) << redist_last_error();
  EXPECT_EQ(wrong, 0) << "items wrong after the repair";
  EXPECT_GT(sum_everywhere(faults::injected() - injected_before), 0) << "no fault";
  EXPECT_EQ(faults::live_requests(), 0) << "requests left behind";
  EXPECT_EQ(redist_ring_plan_destroy(&plan), REDIST_SUCCESS) << redist_last_error();
}

TEST(RingFaults, BrokenLinkRepaired) {
  if (world_size() < 2) GTEST_SKIP() << "needs two processes";
  for (const int transport : {REDIST_RING_NEIGHBOUR, REDIST_RING_DIRECT})
    for (const faults::Mode mode : {faults::Mode::post, faults::Mode::completion})
      broken_link_repaired(transport, mode);
}

TEST(RingFaults, NeighbourTransport) {
  if (world_size() < 2) GTEST_SKIP() << "needs two processes";
  for (const faults::Mode mode : {faults::Mode::post, faults::Mode::completion})
    run_case(REDIST_RING_NEIGHBOUR, mode);
}

TEST(RingFaults, DirectTransport) {
  if (world_size() < 2) GTEST_SKIP() << "needs two processes";
  for (const faults::Mode mode : {faults::Mode::post, faults::Mode::completion})
    run_case(REDIST_RING_DIRECT, mode);
}

TEST(RingFaults, OneFailedCallIsRepairedNeighbour) {
  if (world_size() < 2) GTEST_SKIP() << "needs two processes";
  sweep_both_ends(REDIST_RING_NEIGHBOUR);
}

TEST(RingFaults, OneFailedCallIsRepairedDirect) {
  if (world_size() < 2) GTEST_SKIP() << "needs two processes";
  sweep_both_ends(REDIST_RING_DIRECT);
}

} // namespace
