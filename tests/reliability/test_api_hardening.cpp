// The API side of hardening (docs/reliability.md, "After a failure", "Environment variables",
// "Shared arrays"):
//   - after an execution that failed on one process, the next call (ScaLAPACK entry) or the
//     next execution of the same plan (C API) works on every process: a message that the
//     failed execution left unmatched must not be taken for the next one's (faults from
//     mpi_faults.cpp: process 0's receive from the last process fails at once, while the
//     last process's send goes out);
//   - REDIST_SINGLE_COPY is read when a plan is made: `never` set later keeps this process
//     from reading its peers and from being read, for the plans made after it (and only those);
//   - a receiver maps a sender's redist_alloc array for the plan's lifetime, and no longer.
// Data from the last process's A go to process 0's B only: one message, small enough to go
// eagerly, so that the sender finishes without its receiver.

#include "../common/scalapack_decls.h"
#include "../errors/capi_support.hpp"
#include "api_internal.hpp"
#include "mpi_faults.hpp"
#include "single_copy.hpp"

#include <redist.h>
#include <redist_scalapack.h>

#include <gtest/gtest.h>
#include <mpi.h>

#include <algorithm>
#include <array>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <string>
#include <vector>

namespace {

using capitest::CArgs;
using errtest::Data;
using errtest::Scenario;
using mpitest::world_rank;
using mpitest::world_size;

long long comm_dups = 0; // MPI_Comm_dup and MPI_Comm_idup calls of this process (below)

constexpr int kTagLo = redist::Executor::kTag;
constexpr int kTagHi = redist::Executor::kTag + 2;

/// A 9 x 7 window of doubles from the last process (A) to process 0 (B).
Scenario last_to_first() {
  Scenario s = errtest::standard_scenario();
  s.a = errtest::matrix(errtest::map_grid(1, 1, {world_size() - 1}), 13, 11, 2, 3, 0, 0, 2, 3, 2);
  s.b = errtest::matrix(errtest::map_grid(1, 1, {0}), 12, 10, 3, 2, 0, 0, 3, 2, 1);
  return s;
}

std::int64_t wrong_elements(const Scenario &s, const Data<double> &d, int a_salt, int b_salt,
                            std::string &report) {
  mpitest::CopySpec c;
  c.m = s.m;
  c.n = s.n;
  return mpitest::check_b(c, s.a, s.b, d.lb, d.b.data(), a_salt, b_salt, report);
}

long long sum_everywhere(long long v) {
  MPI_Allreduce(MPI_IN_PLACE, &v, 1, MPI_LONG_LONG, MPI_SUM, MPI_COMM_WORLD);
  return v;
}

/// Sets an environment variable for the scope of one test, then unsets it.
struct ScopedEnv {
  const char *name;
  // The ScaLAPACK entries read the environment at their first call after
  // redist_scalapack_clear_cache().
  ScopedEnv(const char *n, const char *value) : name(n) {
    setenv(n, value, 1);
    redist_scalapack_clear_cache();
  }
  ~ScopedEnv() {
    unsetenv(name);
    redist_scalapack_clear_cache();
  }
  ScopedEnv(const ScopedEnv &) = delete;
  ScopedEnv &operator=(const ScopedEnv &) = delete;
};

// ---- after a failed execution ----------------------------------------------------------------

// C API: the plan stays valid. Before, its next execution on process 0 received the message
// the failed one had left (the previous A) and reported success with a wrong B.
TEST(Hardening, CApiPlanAfterAFailedReceiveGetsNoStaleMessage) {
  if (world_size() < 2) GTEST_SKIP() << "needs two processes";
  const ScopedEnv sent_only("REDIST_SINGLE_COPY", "never"); // messages through MPI
  const Scenario s = last_to_first();
  CArgs x(s);
  MPI_Comm own = MPI_COMM_NULL;
  ASSERT_EQ(MPI_Comm_dup(MPI_COMM_WORLD, &own), MPI_SUCCESS);
  const auto create = [&](redist_plan *made) {
    return redist_plan_create(own, x.m, x.n, REDIST_DOUBLE, x.pa, x.pb, REDIST_REGION_FULL, 0,
                              made);
  };
  redist_plan plan = nullptr;
  ASSERT_EQ(create(&plan), REDIST_SUCCESS) << redist_last_error();
  const bool receiver = world_rank() == 0;
  {
    Data<double> d(s, 1, 2);
    if (receiver) faults::arm(world_size() - 1, faults::Mode::post, kTagLo, kTagHi);
    mpitest::watchdog_arm("[C API] execution with a failed receive");
    const int status = redist_plan_execute(plan, d.a.data(), d.b.data());
    mpitest::watchdog_disarm();
    faults::disarm();
    // The executor re-sends the message whose receive could not be posted on a tag of its own
    // (docs/reliability.md, "the repair"): success everywhere, B right; the original message
    // still waits on the plan's communicator.
    EXPECT_EQ(status, REDIST_SUCCESS) << redist_last_error();
    std::string report;
    EXPECT_EQ(wrong_elements(s, d, 1, 2, report), 0) << "[C API] the repaired execution:\n"
                                                     << report;
  }
  for (int salt = 3; salt <= 7; salt += 2) { // twice: no message is left for later either
    Data<double> d(s, salt, salt + 1);
    const long long dups = comm_dups;
    mpitest::watchdog_arm("[C API] execution after the failure");
    EXPECT_EQ(redist_plan_execute(plan, d.a.data(), d.b.data()), REDIST_SUCCESS)
        << redist_last_error();
    mpitest::watchdog_disarm();
    std::string report;
    EXPECT_EQ(wrong_elements(s, d, salt, salt + 1, report), 0)
        << "[C API] execution " << (salt - 1) / 2 << " after the failure:\n"
        << report;
    // Made anew once, on every process (the failure was agreed), then reused.
    EXPECT_EQ(comm_dups - dups, salt == 3 ? 1 : 0) << "[C API] communicators duplicated";
  }
  EXPECT_EQ(faults::live_requests(), 0);
  EXPECT_EQ(redist_plan_destroy(&plan), REDIST_SUCCESS);
  // Every plan made after it runs on a duplicate of its own.
  for (const long long expected_dups : {1, 1}) {
    const long long dups = comm_dups;
    ASSERT_EQ(create(&plan), REDIST_SUCCESS) << redist_last_error();
    EXPECT_EQ(comm_dups - dups, expected_dups) << "[C API] a plan made after the failed one";
    Data<double> d(s, 9, 10);
    EXPECT_EQ(redist_plan_execute(plan, d.a.data(), d.b.data()), REDIST_SUCCESS)
        << redist_last_error();
    std::string report;
    EXPECT_EQ(wrong_elements(s, d, 9, 10, report), 0) << report;
    EXPECT_EQ(redist_plan_destroy(&plan), REDIST_SUCCESS);
  }
  MPI_Comm_free(&own);
}

// ScaLAPACK entries: the cached plan (and its communicator) whose execution failed on process
// 0 is dropped there; at the next call the hit agreement misses on every process, which all
// build a plan on a new communicator; the call after hits the cache again.
TEST(Hardening, ScalapackEntryDropsThePlanThatFailed) {
  if (world_size() < 2) GTEST_SKIP() << "needs two processes";
  const ScopedEnv sent_only("REDIST_SINGLE_COPY", "never");
  const Scenario s = last_to_first();
  std::string error;
  const int ctxt_a = mpitest::create_context(s.a.grid, error);
  const int ctxt_b = mpitest::create_context(s.b.grid, error);
  const int ictxt = mpitest::create_context(s.ictxt, error);
  ASSERT_EQ(error, "");
  const int m = static_cast<int>(s.m);
  const int n = static_cast<int>(s.n);
  const auto ia = static_cast<int>(s.a.ia);
  const auto ja = static_cast<int>(s.a.ja);
  const auto ib = static_cast<int>(s.b.ia);
  const auto jb = static_cast<int>(s.b.ja);
  const bool receiver = world_rank() == 0;
  // Calls: valid (builds, caches), faulty, then three valid ones.
  const struct {
    bool faulty;
    long long dups; // communicators duplicated by the call, on every process
  } calls[] = {{false, -1}, {true, 0}, {false, 1}, {false, 0}, {false, 0}};
  int salt = 11;
  for (const auto &call : calls) {
    salt += 2;
    const std::string where =
        "[PDGEMR2D call " + std::to_string((salt - 11) / 2) + (call.faulty ? ", faulty] " : "] ");
    Data<double> d(s, salt, salt + 1);
    const std::array<int, 9> desca = mpitest::descriptor(s.a, ctxt_a, d.la);
    const std::array<int, 9> descb = mpitest::descriptor(s.b, ctxt_b, d.lb);
    if (call.faulty && receiver) faults::arm(world_size() - 1, faults::Mode::post, kTagLo, kTagHi);
    const long long dups = comm_dups;
    errtest::StderrCapture capture;
    mpitest::watchdog_arm(where);
    redist_pdgemr2d_(&m, &n, d.a.data(), &ia, &ja, desca.data(), d.b.data(), &ib, &jb, descb.data(),
                     &ictxt);
    mpitest::watchdog_disarm();
    faults::disarm();
    const std::string printed = capture.finish();
    const int status = redist_scalapack_last_status();
    // The faulty call is repaired by the executor (B right everywhere); the message its
    // receive missed still waits on the cached plan's communicator, so the plan is dropped.
    EXPECT_EQ(status, REDIST_SUCCESS) << where << printed;
    std::string report;
    EXPECT_EQ(wrong_elements(s, d, salt, salt + 1, report), 0) << where << "B:\n" << report;
    if (call.dups >= 0) {
      EXPECT_EQ(comm_dups - dups, call.dups) << where << "communicators duplicated";
    }
  }
  EXPECT_EQ(faults::live_requests(), 0);
  mpitest::free_context(ctxt_a);
  mpitest::free_context(ctxt_b);
  mpitest::free_context(ictxt);
}

// ---- REDIST_SINGLE_COPY read when a plan is made -----------------------------------------------

struct Ways {
  std::size_t reads = 0, read_from = 0; // single-copy receives, sends
};

/// Create a C API plan of last_to_first() (REDIST_SINGLE_COPY as this process has it now),
/// then set REDIST_SINGLE_COPY to `at_execution` and execute twice (both ways, the first's and
/// the later one); B checked.
Ways plan_and_execute(const char *at_execution, const std::string &where) {
  const Scenario s = last_to_first();
  CArgs x(s);
  redist_plan plan = nullptr;
  EXPECT_EQ(redist_plan_create(MPI_COMM_WORLD, x.m, x.n, REDIST_DOUBLE, x.pa, x.pb,
                               REDIST_REGION_FULL, 0, &plan),
            REDIST_SUCCESS)
      << where << redist_last_error();
  setenv("REDIST_SINGLE_COPY", at_execution, 1);
  Ways ways;
  for (int salt = 1; salt <= 3; salt += 2) {
    Data<double> d(s, salt, salt + 1);
    EXPECT_EQ(redist_plan_execute(plan, d.a.data(), d.b.data()), REDIST_SUCCESS)
        << where << redist_last_error();
    std::string report;
    EXPECT_EQ(wrong_elements(s, d, salt, salt + 1, report), 0) << where << "B:\n" << report;
    ways.reads += plan->executor->single_copy_receives();
    ways.read_from += plan->executor->single_copy_sends();
  }
  EXPECT_EQ(redist_plan_destroy(&plan), REDIST_SUCCESS);
  return ways;
}

TEST(Hardening, SingleCopyNeverSetLaterTakesEffect) {
  if (world_size() < 2) GTEST_SKIP() << "needs two processes";
  const int rank = world_rank();
  const int last = world_size() - 1;
  setenv("REDIST_SINGLE_COPY", "always", 1);
  const Ways first = plan_and_execute("always", "[always everywhere] ");
  if (sum_everywhere(static_cast<long long>(first.reads)) == 0) {
    unsetenv("REDIST_SINGLE_COPY");
    GTEST_SKIP() << "no process can read another's memory here (process_vm_readv)";
  }
  // `never` on the sender only, when the plan is made; `always` again before it executes.
  // Before, the sender's node identity (computed at the first plan) still let process 0 read
  // it, and the mode was read at the first execution.
  if (rank == last) setenv("REDIST_SINGLE_COPY", "never", 1);
  Ways w = plan_and_execute("always", "[never on the sender when made] ");
  EXPECT_EQ(w.reads, 0U) << "process 0 read the sender, which said never when the plan was made";
  EXPECT_EQ(w.read_from, 0U) << "the sender was read although it said never";
  // `never` on the receiver only.
  if (rank == 0) setenv("REDIST_SINGLE_COPY", "never", 1);
  w = plan_and_execute("always", "[never on the receiver when made] ");
  EXPECT_EQ(w.reads, 0U) << "process 0 read although it said never when the plan was made";
  // `never` when the plan executes does not change a plan made before.
  setenv("REDIST_SINGLE_COPY", "always", 1);
  w = plan_and_execute("never", "[never set after the plan was made] ");
  EXPECT_GT(sum_everywhere(static_cast<long long>(w.reads)), 0) << "the plan made under always";
  unsetenv("REDIST_SINGLE_COPY");
}

// The ScaLAPACK entries read REDIST_SINGLE_COPY at their first call after
// redist_scalapack_clear_cache(): a call made under `never` so read must not be served by a
// plan made under `direct` (nor the other way). Reads are detected by making every single-copy
// read of process 0 fail (injected; the executor repairs them, so B stays right): under
// `never` none may be attempted.
TEST(Hardening, ScalapackCacheKeepsNoPlanOfAnotherSingleCopyMode) {
  if (world_size() < 2) GTEST_SKIP() << "needs two processes";
  setenv("REDIST_SINGLE_COPY", "direct", 1);
  if (sum_everywhere(static_cast<long long>(plan_and_execute("direct", "[direct] ").reads)) == 0) {
    unsetenv("REDIST_SINGLE_COPY");
    GTEST_SKIP() << "no process can read another's memory here (process_vm_readv)";
  }
  namespace sc = redist::single_copy;
  const Scenario s = last_to_first();
  std::string error;
  const int ctxt_a = mpitest::create_context(s.a.grid, error);
  const int ctxt_b = mpitest::create_context(s.b.grid, error);
  const int ictxt = mpitest::create_context(s.ictxt, error);
  ASSERT_EQ(error, "");
  const int m = static_cast<int>(s.m);
  const int n = static_cast<int>(s.n);
  const auto ia = static_cast<int>(s.a.ia);
  const auto ja = static_cast<int>(s.a.ja);
  const auto ib = static_cast<int>(s.b.ia);
  const auto jb = static_cast<int>(s.b.ja);
  redist_scalapack_clear_cache();
  // Twice under `direct` (the second a cache hit), then under `never`, then `direct` again.
  const char *modes[] = {"direct", "direct", "never", "direct"};
  int salt = 21;
  const char *previous = "";
  for (const char *mode : modes) {
    salt += 2;
    const std::string where = std::string("[PDGEMR2D under ") + mode + "] ";
    setenv("REDIST_SINGLE_COPY", mode, 1);
    if (std::strcmp(mode, previous) != 0) redist_scalapack_clear_cache();
    previous = mode;
    const bool never = std::strcmp(mode, "never") == 0;
    if (never && world_rank() == 0) sc::inject_failures(sc::Injected::read, 0, -1);
    const long long failed_reads = sc::injected_failures(sc::Injected::read);
    Data<double> d(s, salt, salt + 1);
    const std::array<int, 9> desca = mpitest::descriptor(s.a, ctxt_a, d.la);
    const std::array<int, 9> descb = mpitest::descriptor(s.b, ctxt_b, d.lb);
    mpitest::watchdog_arm(where);
    redist_pdgemr2d_(&m, &n, d.a.data(), &ia, &ja, desca.data(), d.b.data(), &ib, &jb, descb.data(),
                     &ictxt);
    mpitest::watchdog_disarm();
    sc::inject_failures(sc::Injected::read, 0, 0);
    EXPECT_EQ(redist_scalapack_last_status(), REDIST_SUCCESS) << where;
    std::string report;
    EXPECT_EQ(wrong_elements(s, d, salt, salt + 1, report), 0) << where << "B:\n" << report;
    if (never) {
      EXPECT_EQ(sc::injected_failures(sc::Injected::read) - failed_reads, 0)
          << where << "process 0 read although REDIST_SINGLE_COPY=never at this call";
    }
  }
  unsetenv("REDIST_SINGLE_COPY");
  redist_scalapack_clear_cache();
  mpitest::free_context(ctxt_a);
  mpitest::free_context(ctxt_b);
  mpitest::free_context(ictxt);
}

// ---- shared arrays stay mapped by their receivers for the plan's lifetime ----------------------

/// Mappings of other processes' redist_alloc arrays in this process (memfd "redist-array").
int array_mappings() {
  std::ifstream maps("/proc/self/maps");
  std::string line;
  int count = 0;
  while (std::getline(maps, line))
    count += line.find("memfd:redist-array") != std::string::npos ? 1 : 0;
  return count;
}

TEST(Hardening, SharedArrayMappedByItsReceiverUntilThePlanIsDestroyed) {
  if (world_size() < 2) GTEST_SKIP() << "needs two processes";
  const ScopedEnv way("REDIST_SINGLE_COPY", "direct");
  const Scenario s = last_to_first();
  const bool sender = world_rank() == world_size() - 1;
  const bool receiver = world_rank() == 0;
  CArgs x(s);
  Data<double> d(s, 1, 2);
  void *shared = nullptr;
  const std::size_t bytes = std::max<std::size_t>(d.a.size(), 1) * sizeof(double);
  ASSERT_EQ(redist_alloc(bytes, &shared), REDIST_SUCCESS) << redist_last_error();
  std::memcpy(shared, d.a.data(), d.a.size() * sizeof(double));
  const int mapped_before = array_mappings();
  redist_plan plan = nullptr;
  ASSERT_EQ(redist_plan_create(MPI_COMM_WORLD, x.m, x.n, REDIST_DOUBLE, x.pa, x.pb,
                               REDIST_REGION_FULL, 0, &plan),
            REDIST_SUCCESS)
      << redist_last_error();
  ASSERT_EQ(redist_plan_execute(plan, shared, d.b.data()), REDIST_SUCCESS) << redist_last_error();
  std::string report;
  EXPECT_EQ(wrong_elements(s, d, 1, 2, report), 0) << report;
  const bool read =
      sum_everywhere(receiver ? static_cast<long long>(plan->executor->single_copy_receives())
                              : 0) > 0;
  const int mapped_after_execution = array_mappings();
  // The sender frees its array while the plan lives: its receiver still maps it.
  if (sender) {
    EXPECT_EQ(redist_free(shared), REDIST_SUCCESS);
  }
  MPI_Barrier(MPI_COMM_WORLD);
  const int mapped_after_free = array_mappings();
  EXPECT_EQ(redist_plan_destroy(&plan), REDIST_SUCCESS);
  const int mapped_after_destroy = array_mappings();
  if (!sender) {
    EXPECT_EQ(redist_free(shared), REDIST_SUCCESS);
  }
  if (!read) GTEST_SKIP() << "no process can read another's memory here (process_vm_readv)";
  if (receiver) {
    EXPECT_EQ(mapped_after_execution, mapped_before + 1) << "the sender's array mapped here";
    EXPECT_EQ(mapped_after_free, mapped_before + 1) << "documented: kept while the plan lives";
    EXPECT_EQ(mapped_after_destroy, mapped_before) << "released with the plan";
  }
}

} // namespace

// Counts the communicators this process duplicates (the library's plans and caches).
extern "C" int MPI_Comm_dup(MPI_Comm comm, MPI_Comm *out) {
  ++comm_dups;
  return PMPI_Comm_dup(comm, out);
}

extern "C" int MPI_Comm_idup(MPI_Comm comm, MPI_Comm *out, MPI_Request *request) {
  ++comm_dups;
  return PMPI_Comm_idup(comm, out, request);
}
