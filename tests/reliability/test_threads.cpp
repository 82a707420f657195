// Threads (MPI_THREAD_MULTIPLE). This executable's MPI_Init asks for MPI_THREAD_MULTIPLE (it
// interposes MPI_Init, which the shared GoogleTest main calls), so the tests below run with
// several threads calling MPI at once.
//   - ThreadsCApi: every rank runs kThreads threads; thread t owns its own duplicate of
//     MPI_COMM_WORLD and creates, executes (several times) and destroys plans of random
//     redistributions on it, concurrently with the other threads; every B is checked against
//     the element oracle. One create in five is invalid on one rank: the error status and the
//     thread-local message of that thread must name its own bad argument.
//   - ThreadsScalapack: BLACS is not thread-safe, so one thread per process calls the
//     ScaLAPACK entries (random descriptors, every B checked) while another thread of the
//     same process empties redist's plan cache at random moments
//     (redist_scalapack_clear_cache) and reads the status/counters. Processes clear at
//     different moments, so hits and misses disagree between processes and the agreement on
//     the cache's build ids must force a rebuild everywhere; results must stay exact.
//   - Progress: under REDIST_PROGRESS=thread a split execution leaves a thread entering MPI
//     (MPI_Iprobe from a thread of redist's, counted here by interposing MPI_Iprobe) between
//     begin and end, on every rank whose all-at-once plan has messages to other ranks, and
//     none after end or around a blocking execute; B is checked against the element oracle.
// Stress, not proof: run under ThreadSanitizer for more (docs/reliability.md).

#include "../common/scalapack_decls.h"
#include "../errors/error_support.hpp"
#include "mpi_posted.hpp"

#include <redist.h>
#include <redist_scalapack.h>

#include <gtest/gtest.h>
#include <mpi.h>

#include <algorithm>
#include <array>
#include <atomic>
#include <chrono>
#include <complex>
#include <cstdio>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

static_assert(sizeof(redist_int) == sizeof(int), "the tests use the LP64 BLACS integer");

namespace {
int provided_level = -1;
// The progress thread's probes: MPI_Iprobe from a thread other than the one that initialised
// MPI (which probes too, with the same tag, while it waits or copies; progress.hpp).
std::atomic<long long> progress_probes{0};
std::thread::id main_thread;
} // namespace

// NOLINTBEGIN(readability-identifier-naming): the MPI names, interposed
extern "C" int MPI_Init(int *argc, char ***argv) {
  main_thread = std::this_thread::get_id();
  return PMPI_Init_thread(argc, argv, MPI_THREAD_MULTIPLE, &provided_level);
}
extern "C" int MPI_Iprobe(int source, int tag, MPI_Comm comm, int *flag, MPI_Status *status) {
  if (std::this_thread::get_id() != main_thread) ++progress_probes;
  return PMPI_Iprobe(source, tag, comm, flag, status);
}
// NOLINTEND(readability-identifier-naming)

namespace {

using mpitest::GridSpec;
using mpitest::MatSpec;
using mpitest::world_rank;
using mpitest::world_size;

constexpr int kThreads = 4;

bool everywhere_on(MPI_Comm comm, bool ok) {
  int v = ok ? 1 : 0;
  MPI_Allreduce(MPI_IN_PLACE, &v, 1, MPI_INT, MPI_MIN, comm);
  return v == 1;
}

std::vector<GridSpec> grid_pool() {
  const int p = world_size();
  std::vector<GridSpec> grids;
  grids.push_back(errtest::init_grid('R', 1, p));
  grids.push_back(errtest::init_grid('C', p, 1));
  std::vector<int> reversed;
  for (int r = p - 1; r >= 0; --r)
    reversed.push_back(r);
  grids.push_back(errtest::map_grid(1, p, reversed));
  if (p >= 2) grids.push_back(errtest::subset_grid());
  return grids;
}

/// One thread's work: `rounds` plans on `comm`. Returns a description of what went wrong.
std::string plan_rounds(MPI_Comm comm, std::uint64_t seed, int rounds, int thread) {
  mpitest::Rng rng(seed);
  const std::vector<GridSpec> grids = grid_pool();
  const auto pick = [&]() -> const GridSpec & {
    return grids[static_cast<std::size_t>(rng.uniform(0, static_cast<long>(grids.size()) - 1))];
  };
  std::string failures;
  for (int k = 0; k < rounds; ++k) {
    const std::int64_t m = rng.uniform(0, 40);
    const std::int64_t n = rng.uniform(0, 40);
    const MatSpec a = mpitest::random_matrix(rng, pick(), m, n);
    const MatSpec b = mpitest::random_matrix(rng, pick(), m, n);
    const int region_pick = static_cast<int>(rng.uniform(0, 2));
    const bool unit_diag = rng.coin(0.5);
    const bool spoil = k % 5 == 4;
    const int rank = world_rank();
    const mpitest::LocalBuf la = mpitest::local_buf(a, rank);
    const mpitest::LocalBuf lb = mpitest::local_buf(b, rank);
    redist_layout ca = mpitest::c_layout(a, a.grid.ranks.data(), la.lld);
    const redist_layout cb = mpitest::c_layout(b, b.grid.ranks.data(), lb.lld);
    const bool bad_here = spoil && rank == (k + thread) % world_size();
    if (bad_here) ca.nb = -3 - thread; // a value only this thread uses
    const redist_region region = region_pick == 0   ? REDIST_REGION_FULL
                                 : region_pick == 1 ? REDIST_REGION_UPPER
                                                    : REDIST_REGION_LOWER;
    redist_plan plan = nullptr;
    const int status = redist_plan_create(comm, m, n, REDIST_COMPLEX_DOUBLE, &ca, &cb, region,
                                          unit_diag ? 1 : 0, &plan);
    const std::string where = "thread " + std::to_string(thread) + " round " + std::to_string(k);
    if (spoil) {
      const std::string message = redist_last_error();
      const std::string want =
          bad_here ? "redist_plan_create: argument a->nb = " + std::to_string(-3 - thread) +
                         ": block size must be >= 1"
                   : "redist_plan_create: an argument is invalid on rank " +
                         std::to_string((k + thread) % world_size()) + " (see its message)";
      if (status == REDIST_SUCCESS || message != want) {
        failures += where;
        failures += ": invalid create gave status " + std::to_string(status);
        failures += " and message \"" + message;
        failures += "\", expected \"" + want + "\"\n";
      }
      if (plan != nullptr) redist_plan_destroy(&plan);
      continue;
    }
    if (!everywhere_on(comm, status == REDIST_SUCCESS)) {
      failures += where + ": create failed: " + redist_last_error() + "\n";
      if (plan != nullptr) redist_plan_destroy(&plan);
      continue;
    }
    std::vector<std::complex<double>> abuf;
    std::vector<std::complex<double>> bbuf;
    mpitest::fill_sentinel(lb, 2, bbuf);
    mpitest::CopySpec cs;
    cs.region = region_pick == 0   ? mpitest::Region::Full
                : region_pick == 1 ? mpitest::Region::Upper
                                   : mpitest::Region::Lower;
    cs.unit_diag = unit_diag;
    cs.m = m;
    cs.n = n;
    for (int salt = 1; salt <= 3; salt += 2) { // execute again with other data
      mpitest::fill_a(a, la, salt, abuf);
      if (redist_plan_execute(plan, abuf.data(), bbuf.data()) != REDIST_SUCCESS)
        failures += where + ": execute failed: " + redist_last_error() + "\n";
      std::string report;
      if (mpitest::check_b(cs, a, b, lb, bbuf.data(), salt, 2, report) != 0) {
        failures += where;
        failures += ": wrong B (salt " + std::to_string(salt) + ")\n";
        failures += report;
      }
    }
    if (redist_plan_destroy(&plan) != REDIST_SUCCESS)
      failures += where + ": destroy failed: " + redist_last_error() + "\n";
  }
  return failures;
}

TEST(ThreadsCApi, ConcurrentPlansOnDistinctCommunicators) {
  ASSERT_EQ(provided_level, MPI_THREAD_MULTIPLE) << "MPI does not provide MPI_THREAD_MULTIPLE";
  const int rounds = std::max(5, mpitest::options().cases);
  const std::uint64_t seed = mpitest::shared_seed("ThreadsCApi", 4242);
  std::vector<MPI_Comm> comms(kThreads, MPI_COMM_NULL);
  for (MPI_Comm &c : comms)
    MPI_Comm_dup(MPI_COMM_WORLD, &c);
  std::vector<std::string> failures(kThreads);
  std::vector<std::thread> threads;
  threads.reserve(kThreads);
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&, t] {
      failures[static_cast<std::size_t>(t)] = plan_rounds(
          comms[static_cast<std::size_t>(t)], seed + static_cast<std::uint64_t>(t), rounds, t);
    });
  }
  for (std::thread &th : threads)
    th.join();
  for (int t = 0; t < kThreads; ++t)
    EXPECT_EQ(failures[static_cast<std::size_t>(t)], "") << "thread " << t;
  for (MPI_Comm &c : comms)
    MPI_Comm_free(&c);
}

/// REDIST_PROGRESS=thread for the life of the object.
struct ProgressThreadSetting {
  ProgressThreadSetting() { setenv("REDIST_PROGRESS", "thread", 1); }
  ~ProgressThreadSetting() { unsetenv("REDIST_PROGRESS"); }
  ProgressThreadSetting(const ProgressThreadSetting &) = delete;
  ProgressThreadSetting &operator=(const ProgressThreadSetting &) = delete;
};

TEST(Progress, ThreadEntersMpiBetweenBeginAndEnd) {
  ASSERT_EQ(provided_level, MPI_THREAD_MULTIPLE) << "MPI does not provide MPI_THREAD_MULTIPLE";
  const ProgressThreadSetting setting;
  const int rounds = std::max(5, mpitest::options().cases);
  mpitest::Rng rng(mpitest::shared_seed("Progress", 777));
  const std::vector<GridSpec> grids = grid_pool();
  const auto pick = [&]() -> const GridSpec & {
    return grids[static_cast<std::size_t>(rng.uniform(0, static_cast<long>(grids.size()) - 1))];
  };
  const int rank = world_rank();
  int progressed = 0; // rounds in which this rank's thread ran
  for (int k = 0; k < rounds; ++k) {
    const std::int64_t m = rng.uniform(1, 300);
    const std::int64_t n = rng.uniform(1, 300);
    const MatSpec a = mpitest::random_matrix(rng, pick(), m, n);
    const MatSpec b = mpitest::random_matrix(rng, pick(), m, n);
    const mpitest::LocalBuf la = mpitest::local_buf(a, rank);
    const mpitest::LocalBuf lb = mpitest::local_buf(b, rank);
    const redist_layout ca = mpitest::c_layout(a, a.grid.ranks.data(), la.lld);
    const redist_layout cb = mpitest::c_layout(b, b.grid.ranks.data(), lb.lld);
    redist_plan plan = nullptr;
    ASSERT_EQ(redist_plan_create(MPI_COMM_WORLD, m, n, REDIST_COMPLEX_DOUBLE, &ca, &cb,
                                 REDIST_REGION_FULL, 0, &plan),
              REDIST_SUCCESS)
        << redist_last_error();
    redist_plan_info info{};
    ASSERT_EQ(redist_plan_get_info(plan, &info), REDIST_SUCCESS);
    const bool all_at_once_with_peers =
        info.schedule == REDIST_SCHEDULE_ALL_AT_ONCE && info.send_peers + info.recv_peers > 0;
    std::vector<std::complex<double>> abuf;
    std::vector<std::complex<double>> bbuf;
    mpitest::CopySpec cs;
    cs.m = m;
    cs.n = n;
    const std::string where = "round " + std::to_string(k);
    for (int salt = 1; salt <= 5; salt += 2) {
      mpitest::fill_a(a, la, salt, abuf);
      mpitest::fill_sentinel(lb, 2, bbuf);
      long long before = progress_probes.load();
      if (salt == 3) { // a blocking execute runs no thread
        ASSERT_EQ(redist_plan_execute(plan, abuf.data(), bbuf.data()), REDIST_SUCCESS)
            << redist_last_error();
        EXPECT_EQ(progress_probes.load(), before) << where << ": probes around execute";
      } else {
        const long long messages_before = posted::messages();
        ASSERT_EQ(redist_plan_execute_begin(plan, abuf.data(), bbuf.data()), REDIST_SUCCESS)
            << redist_last_error();
        // A thread runs where begin posted messages to other ranks.
        const bool posted = posted::messages() > messages_before;
        const bool threaded = all_at_once_with_peers && posted;
        if (salt == 1) {
          EXPECT_EQ(posted, all_at_once_with_peers) << where << ": messages posted by begin";
        }
        // Ten intervals of the thread (200 us each), unless it is already probing.
        for (int wait = 0; wait < 100 && progress_probes.load() == before; ++wait)
          std::this_thread::sleep_for(std::chrono::microseconds(200));
        const long long between = progress_probes.load();
        ASSERT_EQ(redist_plan_execute_end(plan), REDIST_SUCCESS) << redist_last_error();
        const long long ended = progress_probes.load();
        std::this_thread::sleep_for(std::chrono::milliseconds(2));
        EXPECT_EQ(progress_probes.load(), ended) << where << ": probes after end";
        if (threaded) {
          EXPECT_GT(between, before) << where << ": no probe between begin and end";
          progressed += between > before ? 1 : 0;
        } else {
          EXPECT_EQ(ended, before) << where << ": a thread without messages to other ranks";
        }
        before = ended;
      }
      std::string report;
      EXPECT_EQ(mpitest::check_b(cs, a, b, lb, bbuf.data(), salt, 2, report), 0)
          << where << " salt " << salt << "\n"
          << report;
    }
    ASSERT_EQ(redist_plan_destroy(&plan), REDIST_SUCCESS);
  }
  std::printf("[ MEASURED ] rank %d: the progress thread ran in %d split executions of %d\n", rank,
              progressed, 2 * rounds);
  std::fflush(stdout);
}

TEST(ThreadsScalapack, CacheClearedConcurrentlyWhileCalling) {
  ASSERT_EQ(provided_level, MPI_THREAD_MULTIPLE) << "MPI does not provide MPI_THREAD_MULTIPLE";
  const int calls = std::max(20, 40 * mpitest::options().cases);
  const std::uint64_t seed = mpitest::shared_seed("ThreadsScalapack", 99);
  mpitest::Rng rng(seed);
  const std::vector<GridSpec> grids = grid_pool();
  std::string error;
  std::vector<int> ctxt;
  ctxt.reserve(grids.size());
  for (const GridSpec &g : grids)
    ctxt.push_back(mpitest::create_context(g, error));
  const int ictxt = mpitest::create_context(errtest::init_grid('R', 1, world_size()), error);
  ASSERT_TRUE(everywhere_on(MPI_COMM_WORLD, error.empty())) << error;

  std::atomic<bool> stop{false};
  std::atomic<long long> clears{0};
  std::thread clearer([&] {
    unsigned state = 12345U + static_cast<unsigned>(world_rank()) * 7919U;
    while (!stop) {
      state = state * 1103515245U + 12345U;
      std::this_thread::sleep_for(std::chrono::microseconds(50 + (state >> 16) % 2000));
      redist_scalapack_clear_cache();
      static_cast<void>(redist_scalapack_call_count());
      ++clears;
    }
  });

  long long wrong = 0;
  long long failed = 0;
  std::string report;
  // A few descriptors, repeated, so that the cache is hit often between clears.
  std::vector<std::uint64_t> case_seeds;
  case_seeds.reserve(6);
  for (int k = 0; k < 6; ++k)
    case_seeds.push_back(static_cast<std::uint64_t>(rng.uniform(1, 1 << 30)));
  for (int k = 0; k < calls; ++k) {
    mpitest::Rng c(case_seeds[static_cast<std::size_t>(rng.uniform(0, 5))]);
    const auto gi = static_cast<std::size_t>(c.uniform(0, static_cast<long>(grids.size()) - 1));
    const auto gj = static_cast<std::size_t>(c.uniform(0, static_cast<long>(grids.size()) - 1));
    const std::int64_t m = c.uniform(1, 30);
    const std::int64_t n = c.uniform(1, 30);
    const MatSpec a = mpitest::random_matrix(c, grids[gi], m, n);
    const MatSpec b = mpitest::random_matrix(c, grids[gj], m, n);
    const mpitest::LocalBuf la = mpitest::local_buf(a, world_rank());
    const mpitest::LocalBuf lb = mpitest::local_buf(b, world_rank());
    std::vector<double> abuf;
    std::vector<double> bbuf;
    mpitest::fill_a(a, la, 1, abuf);
    mpitest::fill_sentinel(lb, 2, bbuf);
    const auto desc = [](const MatSpec &s, int handle, const mpitest::LocalBuf &l, redist_int *d) {
      const std::array<int, 9> v = mpitest::descriptor(s, handle, l);
      std::copy(v.begin(), v.end(), d);
    };
    redist_int desca[9];
    redist_int descb[9];
    desc(a, ctxt[gi], la, desca);
    desc(b, ctxt[gj], lb, descb);
    const auto mi = static_cast<redist_int>(m);
    const auto ni = static_cast<redist_int>(n);
    const auto ia = static_cast<redist_int>(a.ia);
    const auto ja = static_cast<redist_int>(a.ja);
    const auto ib = static_cast<redist_int>(b.ia);
    const auto jb = static_cast<redist_int>(b.ja);
    redist_pdgemr2d_(&mi, &ni, abuf.data(), &ia, &ja, desca, bbuf.data(), &ib, &jb, descb, &ictxt);
    if (redist_scalapack_last_status() != REDIST_SUCCESS) ++failed;
    mpitest::CopySpec cs;
    cs.m = m;
    cs.n = n;
    std::string r;
    wrong += mpitest::check_b(cs, a, b, lb, bbuf.data(), 1, 2, r);
    if (!r.empty() && report.size() < 2000) report += "call " + std::to_string(k) + ":\n" + r;
  }
  stop = true;
  clearer.join();
  EXPECT_EQ(failed, 0) << "calls that failed";
  EXPECT_EQ(wrong, 0) << report;
  std::printf("[ MEASURED ] rank %d: %d calls, %lld concurrent cache clears\n", world_rank(), calls,
              clears.load());
  std::fflush(stdout);
  redist_scalapack_clear_cache();
  mpitest::free_context(ictxt);
  for (const int c : ctxt)
    mpitest::free_context(c);
}

} // namespace
