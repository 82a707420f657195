// The fast path of cached calls (docs/performance.md "Small calls"), on the error
// tests' standard scenario and the MPI tests' oracle (mpitest::check_b):
//  - a ScaLAPACK-entry call every process finds cached runs one small agreement (5 words)
//    before its exchange and the executor's after it; a mismatch on such a call, one process
//    missing the cache, gives on every process the status and message of the same call with
//    the cache empty everywhere, B untouched, and the next call works;
//  - redist_plan_execute of a plan whose messages all travel through MPI (REDIST_SINGLE_COPY
//    = never) runs no collective of its own from its first execution on (only the
//    executor's, after the exchange); a NULL array on one process then gives the messages of
//    a first execution (which checks before the exchange), B and A untouched everywhere, and
//    the plan works afterwards.
//  - the nodes of a communicator's ranks are asked of MPI (MPI_Comm_split_type) once: later
//    plans on it, or on its duplicates, and ScaLAPACK-entry calls that miss the cache on a
//    known context, ask none, and a change of the REDIST_TEST_NODES split asks again.
// MPI_Allreduce, MPI_Iallreduce and MPI_Comm_split_type are counted by interposing them (this
// executable only),
// MPI_Isend and MPI_Irecv by mpi_posted.cpp.
#include "../errors/capi_support.hpp"
#include "../errors/error_support.hpp"
#include "exec.hpp"
#include "mpi_posted.hpp"

#include <gtest/gtest.h>
#include <mpi.h>
#include <redist.h>
#include <redist_scalapack.h>

#include <array>
#include <cstdlib>
#include <string>
#include <vector>

namespace {

// The element count of each reduction since reset (the library's are MPI_Iallreduce).
std::vector<int> allreduce_counts;

} // namespace

extern "C" int MPI_Allreduce(const void *send, void *recv, int count, MPI_Datatype type, MPI_Op op,
                             MPI_Comm comm) {
  allreduce_counts.push_back(count);
  return PMPI_Allreduce(send, recv, count, type, op, comm);
}

extern "C" int MPI_Iallreduce(const void *send, void *recv, int count, MPI_Datatype type, MPI_Op op,
                              MPI_Comm comm, MPI_Request *request) {
  allreduce_counts.push_back(count);
  return PMPI_Iallreduce(send, recv, count, type, op, comm, request);
}

namespace {
int node_queries = 0;            // MPI_Comm_split_type calls since reset
int progress_probes = 0;         // MPI_Iprobe calls with redist's probe tag since reset
constexpr int kProbeTag = 32767; // src/exec/progress.cpp
} // namespace

extern "C" int MPI_Iprobe(int source, int tag, MPI_Comm comm, int *flag, MPI_Status *status) {
  if (tag == kProbeTag) ++progress_probes;
  return PMPI_Iprobe(source, tag, comm, flag, status);
}

extern "C" int MPI_Comm_split_type(MPI_Comm comm, int type, int key, MPI_Info info, MPI_Comm *out) {
  ++node_queries;
  return PMPI_Comm_split_type(comm, type, key, info, out);
}

namespace {

using capitest::everywhere;
using errtest::Data;
using errtest::Scenario;
using mpitest::world_rank;

std::string counts_text(const std::vector<int> &counts) {
  std::string out = "{";
  for (const int c : counts)
    out += " " + std::to_string(c);
  return out + " }";
}

/// The descriptors and context of the standard scenario (contexts kept for the program).
struct Descriptors {
  std::array<redist_int, 9> a{}, b{};
  redist_int ictxt = -1;
};

int context(const mpitest::GridSpec &g) {
  std::string error;
  const int handle = mpitest::create_context(g, error);
  EXPECT_TRUE(error.empty()) << error;
  return handle;
}

std::array<redist_int, 9> descriptor(const mpitest::MatSpec &s, int ctxt) {
  const mpitest::LocalBuf lb = mpitest::local_buf(s, world_rank());
  std::array<redist_int, 9> d{1, -1, 0, 0, 1, 1, 0, 0, 1}; // outside the grid: CTXT_ = -1
  if (!lb.member) return d;
  const std::array<int, 9> values = mpitest::descriptor(s, ctxt, lb);
  std::copy(values.begin(), values.end(), d.begin());
  return d;
}

const Descriptors &standard_descriptors() {
  static const Descriptors d = [] {
    const Scenario s = errtest::standard_scenario();
    Descriptors out;
    out.a = descriptor(s.a, context(s.a.grid));
    out.b = descriptor(s.b, context(s.b.grid));
    out.ictxt = context(s.ictxt);
    return out;
  }();
  return d;
}

struct Outcome {
  int status = 0;
  std::string text;
  std::vector<int> allreduces;
  int point_to_point = 0; // messages posted, summed over the processes
};

int summed(int v) {
  MPI_Allreduce(MPI_IN_PLACE, &v, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
  return v;
}

/// PDGEMR2D on the standard scenario's arrays, with the last process's IA increased by
/// `ia_shift`.
Outcome pdgemr2d(const Scenario &s, Data<double> &d, redist_int ia_shift) {
  const Descriptors &desc = standard_descriptors();
  const redist_int m = static_cast<redist_int>(s.m), n = static_cast<redist_int>(s.n);
  const redist_int ia =
      static_cast<redist_int>(s.a.ia) + (world_rank() == errtest::last_rank() ? ia_shift : 0);
  const redist_int ja = static_cast<redist_int>(s.a.ja), ib = static_cast<redist_int>(s.b.ia),
                   jb = static_cast<redist_int>(s.b.ja);
  Outcome out;
  errtest::StderrCapture capture;
  allreduce_counts.clear();
  const long long posted_before = posted::messages();
  redist_pdgemr2d_(&m, &n, d.a.data(), &ia, &ja, desc.a.data(), d.b.data(), &ib, &jb, desc.b.data(),
                   &desc.ictxt);
  out.allreduces = allreduce_counts;
  out.point_to_point = summed(static_cast<int>(posted::messages() - posted_before));
  out.text = capture.finish();
  out.status = redist_scalapack_last_status();
  return out;
}

std::int64_t wrong_elements(const Scenario &s, const Data<double> &d, int a_salt, int b_salt,
                            std::string &report) {
  mpitest::CopySpec c;
  c.m = s.m;
  c.n = s.n;
  return mpitest::check_b(c, s.a, s.b, d.lb, d.b.data(), a_salt, b_salt, report);
}

/// REDIST_TEST_NODES=k while it lives (k = 2: the ranks of one machine on two nodes by parity).
class TestNodes {
public:
  explicit TestNodes(const char *k) { setenv("REDIST_TEST_NODES", k, 1); }
  ~TestNodes() { unsetenv("REDIST_TEST_NODES"); }
  TestNodes(const TestNodes &) = delete;
  TestNodes &operator=(const TestNodes &) = delete;
};

/// The reductions of a cached call: the hit agreement (5 words) and its second round (the same
/// 5, src/exec/collective.hpp), then the executor's (2: whether anything failed, and the
/// caller's check where it rides on the exchange).
std::vector<int> cached_call_allreduces() {
  return {5, 5, 2};
}

TEST(FastPath, ScalapackCallFoundEverywhereRunsOneSmallAgreement) {
  const Scenario s = errtest::standard_scenario();
  for (const char *split : {"1", "2"}) {
    const TestNodes nodes(split);
    redist_scalapack_clear_cache();
    for (int call = 0; call < 4; ++call) {
      const std::string where =
          std::string("REDIST_TEST_NODES=") + split + ", call " + std::to_string(call) + ": ";
      Data<double> d(s, 3 + call, 4 + call);
      const Outcome got = pdgemr2d(s, d, 0);
      EXPECT_EQ(got.status, REDIST_SUCCESS) << where << got.text;
      std::string report;
      EXPECT_EQ(wrong_elements(s, d, 3 + call, 4 + call, report), 0) << where << report;
      if (call > 0) {
        EXPECT_EQ(got.allreduces, cached_call_allreduces())
            << where << "MPI_Allreduce counts " << counts_text(got.allreduces);
      }
      if (mpitest::world_size() > 1) {
        EXPECT_GT(got.point_to_point, 0) << where << "messages posted";
      }
    }
  }
}

TEST(FastPath, MismatchWhereOthersHitGivesTheMessageOfAnEmptyCache) {
  if (mpitest::world_size() < 2) GTEST_SKIP() << "needs two processes";
  const Scenario s = errtest::standard_scenario();
  // The oracle: the mismatched call with every cache empty (the agreement of every field).
  redist_scalapack_clear_cache();
  Data<double> cold(s, 1, 2);
  const std::vector<double> cold_before = cold.b;
  const Outcome want = pdgemr2d(s, cold, 1);
  EXPECT_EQ(want.status, REDIST_ERR_MISMATCH) << want.text;
  EXPECT_EQ(errtest::byte_diff(cold_before, cold.b), "") << "B was modified (cold)";
  // The valid call, twice: cached everywhere; then the last process passes IA + 1 (a miss
  // there, a hit elsewhere).
  for (int call = 0; call < 2; ++call) {
    Data<double> warm(s, 5, 6);
    EXPECT_EQ(pdgemr2d(s, warm, 0).status, REDIST_SUCCESS);
  }
  Data<double> d(s, 1, 2);
  const std::vector<double> a_before = d.a, b_before = d.b;
  const Outcome got = pdgemr2d(s, d, 1);
  EXPECT_EQ(got.status, want.status) << got.text;
  EXPECT_EQ(got.text, want.text);
  EXPECT_EQ(errtest::byte_diff(b_before, d.b), "") << "B was modified";
  EXPECT_EQ(errtest::byte_diff(a_before, d.a), "") << "A was modified";
  // And the valid call works right after, from the cache.
  Data<double> after(s, 7, 8);
  const Outcome ok = pdgemr2d(s, after, 0);
  EXPECT_EQ(ok.status, REDIST_SUCCESS) << ok.text;
  std::string report;
  EXPECT_EQ(wrong_elements(s, after, 7, 8, report), 0) << report;
}

/// REDIST_SINGLE_COPY=never (or `mode`) while plans are made: every message through MPI.
class SentOnly {
public:
  explicit SentOnly(const char *mode = "never") { setenv("REDIST_SINGLE_COPY", mode, 1); }
  ~SentOnly() { unsetenv("REDIST_SINGLE_COPY"); }
  SentOnly(const SentOnly &) = delete;
  SentOnly &operator=(const SentOnly &) = delete;
};

redist_plan create(const Scenario &s, const char *mode = "never") {
  capitest::CArgs x(s);
  redist_plan plan = nullptr;
  const SentOnly sent_only(mode);
  EXPECT_EQ(redist_plan_create(MPI_COMM_WORLD, x.m, x.n, REDIST_DOUBLE, x.pa, x.pb,
                               REDIST_REGION_FULL, 0, &plan),
            REDIST_SUCCESS)
      << redist_last_error();
  return plan;
}

struct Executed {
  int status = 0;
  std::string message;
  std::vector<int> allreduces;
  int point_to_point = 0; // messages posted, summed over the processes
};

Executed execute(redist_plan plan, const void *a, void *b) {
  Executed out;
  allreduce_counts.clear();
  const long long posted_before = posted::messages();
  out.status = redist_plan_execute(plan, a, b);
  out.allreduces = allreduce_counts;
  out.point_to_point = summed(static_cast<int>(posted::messages() - posted_before));
  out.message = redist_last_error();
  return out;
}

/// execute() on fresh arrays (A of salt a_salt, B of sentinels of salt b_salt), expected to
/// succeed and to give the oracle's B.
Executed execute_checked(redist_plan plan, const Scenario &s, int a_salt, int b_salt,
                         const std::string &where) {
  Data<double> d(s, a_salt, b_salt);
  const Executed got = execute(plan, d.a.data(), d.b.data());
  EXPECT_EQ(got.status, REDIST_SUCCESS) << where << got.message;
  std::string report;
  EXPECT_EQ(wrong_elements(s, d, a_salt, b_salt, report), 0) << where << report;
  return got;
}

/// The MPI_Allreduce calls of an execution of a C API plan whose messages all travel through
/// MPI: the executor's agreement after the exchange (2 words), which carries the check.
std::vector<int> execution_allreduces() {
  return {2};
}

TEST(FastPath, CapiExecutionRunsNoCollectiveOfItsOwn) {
  for (const bool subset : {false, true}) {
    for (const char *split : {"1", "2"}) {
      if (subset && mpitest::world_size() < 2) continue;
      const TestNodes nodes(split);
      Scenario s = errtest::standard_scenario();
      if (subset) s.a = errtest::subset_a(); // the last rank holds nothing of A
      redist_plan plan = create(s);
      if (!everywhere(plan != nullptr)) return;
      for (int run = 0; run < 4; ++run) {
        const std::string where = std::string(subset ? "A on P-1 ranks" : "standard") +
                                  ", REDIST_TEST_NODES=" + split + ", execution " +
                                  std::to_string(run) + ": ";
        const Executed got = execute_checked(plan, s, 10 + run, 20 + run, where);
        // From the first execution on: made under REDIST_SINGLE_COPY=never, the plan sends
        // every message without negotiating (agreed when it was made).
        EXPECT_EQ(got.allreduces, execution_allreduces())
            << where << "MPI_Allreduce counts " << counts_text(got.allreduces);
      }
      EXPECT_EQ(redist_plan_destroy(&plan), REDIST_SUCCESS);
    }
  }
}

// A plan that writes more than Executor::kDeferredBytes into B on some process (16 MiB of
// doubles, 64-column blocks to 65-column blocks on a 1 x P grid: most columns stay) carries
// no argument check in its agreement after the exchange, which would hold its local copy and
// unpacking until every message has arrived: from its first execution on it checks before
// the exchange (2 words and their second round, then 2 after it). Across nodes, a process
// whose local copy spans two 1 MiB windows or more enters MPI's progress after each (an MPI_Iprobe
// with redist's probe tag), so that its messages travel meanwhile.
TEST(FastPath, CapiLargePlanChecksBeforeTheExchangeAndCopiesWhileItTravels) {
  const int p = mpitest::world_size();
  const int me = world_rank();
  Scenario s;
  s.m = 2048;
  s.n = 1024;
  const mpitest::GridSpec row = errtest::init_grid('R', 1, p);
  s.a = errtest::matrix(row, s.m, s.n, s.m, 64, 0, 0, 1, 1, 0);
  s.b = errtest::matrix(row, s.m, s.n, s.m, 65, 0, 0, 1, 1, 3);
  s.ictxt = row;
  std::int64_t local_bytes = 0; // columns this process holds in A and in B
  for (std::int64_t j = 0; j < s.n; ++j) {
    if ((j / 64) % p == me && (j / 65) % p == me) local_bytes += s.m * 8;
  }
  for (const char *split : {"1", "2"}) {
    const TestNodes nodes(split);
    redist_plan plan = create(s);
    if (!everywhere(plan != nullptr)) return;
    for (int run = 0; run < 3; ++run) {
      const std::string where =
          std::string("REDIST_TEST_NODES=") + split + ", execution " + std::to_string(run) + ": ";
      progress_probes = 0;
      const Executed got = execute_checked(plan, s, 70 + run, 80 + run, where);
      const int probes = progress_probes;
      const std::vector<int> expected{2, 2, 2}; // the check and its second round, the executor's
      EXPECT_EQ(got.allreduces, expected)
          << where << "MPI_Allreduce counts " << counts_text(got.allreduces);
      if (std::string(split) == "2" && p >= 2 && run >= 1 && local_bytes >= (2 << 20)) {
        EXPECT_GE(probes, static_cast<int>(local_bytes >> 20))
            << where << local_bytes << " bytes copied locally";
      }
    }
    EXPECT_EQ(redist_plan_destroy(&plan), REDIST_SUCCESS);
  }
}

// A plan whose messages are read in a single copy (REDIST_SINGLE_COPY=always, between
// processes of one node) checks its arguments before each exchange (2 words, and its second round)
// and agrees after it (2 words).
TEST(FastPath, CapiCheckBeforeTheExchangeWhereMessagesAreRead) {
  const Scenario s = errtest::standard_scenario();
  for (const char *split : {"1", "2"}) {
    const TestNodes nodes(split);
    redist_plan plan = create(s, "always");
    if (!everywhere(plan != nullptr)) return;
    for (int run = 0; run < 4; ++run) {
      const std::string where =
          std::string("REDIST_TEST_NODES=") + split + ", execution " + std::to_string(run) + ": ";
      const Executed got = execute_checked(plan, s, 50 + run, 60 + run, where);
      if (run >= 1) { // the check where a message is read in a single copy, then 2 words
        const std::vector<int> sent_only{2};
        const std::vector<int> checked{2, 2, 2};
        EXPECT_TRUE(got.allreduces == sent_only || got.allreduces == checked)
            << where << "MPI_Allreduce counts " << counts_text(got.allreduces);
      }
    }
    EXPECT_EQ(redist_plan_destroy(&plan), REDIST_SUCCESS);
  }
}

TEST(FastPath, NullArrayOnAnExecutionWithoutCollectiveLeavesBUntouchedEverywhere) {
  const int rank = world_rank();
  const Scenario s = errtest::standard_scenario();
  for (const char *split : {"1", "2"}) {
    const TestNodes nodes(split);
    for (const char side : {'a', 'b'}) {
      const int bad = errtest::window_holder(side == 'a' ? s.a : s.b, s.m, s.n);
      const std::string where = std::string("REDIST_TEST_NODES=") + split + ", NULL " + side +
                                " on rank " + std::to_string(bad);
      const auto null_call = [&](redist_plan plan, Data<double> &d) {
        const void *a = d.a.data();
        void *b = d.b.data();
        if (rank == bad && side == 'a') a = nullptr;
        if (rank == bad && side == 'b') b = nullptr;
        return execute(plan, a, b);
      };
      // The oracle: a plan's first execution, which checks its arguments before the exchange
      // (made under `always`, it negotiates its ways first: it cannot defer its check).
      redist_plan first = create(s, "always");
      if (!everywhere(first != nullptr)) return;
      Data<double> cold(s, 1, 2);
      const Executed want = null_call(first, cold);
      EXPECT_NE(want.status, REDIST_SUCCESS) << where;
      EXPECT_EQ(redist_plan_destroy(&first), REDIST_SUCCESS);

      for (const char *mode : {"never", "auto"}) {
        redist_plan plan = create(s, mode);
        if (!everywhere(plan != nullptr)) return;
        // Executions 1 and 3 pass the NULL array; the plan works after each.
        for (int run = 0; run < 5; ++run) {
          const std::string at = where + ", " + mode + ", execution " + std::to_string(run);
          if (run % 2 == 1) {
            Data<double> d(s, 1, 2);
            const std::vector<double> a_before = d.a, b_before = d.b;
            const Executed got = null_call(plan, d);
            EXPECT_EQ(got.status, want.status) << at << ": " << got.message;
            EXPECT_EQ(got.message, want.message) << at;
            EXPECT_EQ(got.allreduces, execution_allreduces())
                << at << ": MPI_Allreduce counts " << counts_text(got.allreduces);
            EXPECT_EQ(errtest::byte_diff(b_before, d.b), "") << at << ": B was modified";
            EXPECT_EQ(errtest::byte_diff(a_before, d.a), "") << at << ": A was modified";
            continue;
          }
          Data<double> next(s, 5 + run, 6 + run);
          const Executed ok = execute(plan, next.a.data(), next.b.data());
          EXPECT_EQ(ok.status, REDIST_SUCCESS) << at << ": " << ok.message;
          std::string report;
          EXPECT_EQ(wrong_elements(s, next, 5 + run, 6 + run, report), 0) << at << report;
        }
        EXPECT_EQ(redist_plan_destroy(&plan), REDIST_SUCCESS);
      }
    }
  }
}

/// redist_plan_create of the standard scenario on `comm` (its ranks those of MPI_COMM_WORLD),
/// executed once and checked; the MPI_Comm_split_type calls of the creation.
int node_queries_of_a_plan(const Scenario &s, MPI_Comm comm, const std::string &where) {
  capitest::CArgs x(s);
  redist_plan plan = nullptr;
  node_queries = 0;
  EXPECT_EQ(
      redist_plan_create(comm, x.m, x.n, REDIST_DOUBLE, x.pa, x.pb, REDIST_REGION_FULL, 0, &plan),
      REDIST_SUCCESS)
      << where << redist_last_error();
  const int queries = node_queries;
  if (!everywhere(plan != nullptr)) return -1;
  Data<double> d(s, 31, 32);
  EXPECT_EQ(redist_plan_execute(plan, d.a.data(), d.b.data()), REDIST_SUCCESS)
      << where << redist_last_error();
  std::string report;
  EXPECT_EQ(wrong_elements(s, d, 31, 32, report), 0) << where << report;
  EXPECT_EQ(redist_plan_destroy(&plan), REDIST_SUCCESS);
  return queries;
}

// Whether to ask MPI for a communicator's nodes, and under which REDIST_TEST_NODES split, is
// agreed: set on one process only, every process asks once, under the largest split, and the
// plan is made and right (before, that process alone ran the split's collectives: a hang).
TEST(FastPath, NodeSplitOnOneProcessOnlyIsAgreed) {
  if (mpitest::world_size() < 2) GTEST_SKIP() << "needs two processes";
  const Scenario s = errtest::standard_scenario();
  MPI_Comm fresh = MPI_COMM_NULL;
  ASSERT_EQ(MPI_Comm_split(MPI_COMM_WORLD, 0, world_rank(), &fresh), MPI_SUCCESS);
  const SentOnly sent_only; // two nodes of one machine: no single copy between them
  if (world_rank() == 0) setenv("REDIST_TEST_NODES", "2", 1);
  mpitest::watchdog_arm("a plan with REDIST_TEST_NODES set on rank 0 only");
  const int queries = node_queries_of_a_plan(s, fresh, "REDIST_TEST_NODES=2 on rank 0 only: ");
  mpitest::watchdog_disarm();
  unsetenv("REDIST_TEST_NODES");
  EXPECT_EQ(queries, 1);
  MPI_Comm_free(&fresh);
}

TEST(FastPath, NodesOfACommunicatorAreAskedOnce) {
  const Scenario s = errtest::standard_scenario();
  MPI_Comm fresh = MPI_COMM_NULL; // the ranks of MPI_COMM_WORLD, nothing known of them yet
  ASSERT_EQ(MPI_Comm_split(MPI_COMM_WORLD, 0, world_rank(), &fresh), MPI_SUCCESS);
  EXPECT_EQ(node_queries_of_a_plan(s, fresh, "first plan: "), 1);
  EXPECT_EQ(node_queries_of_a_plan(s, fresh, "second plan: "), 0);
  MPI_Comm copy = MPI_COMM_NULL;
  ASSERT_EQ(MPI_Comm_dup(fresh, &copy), MPI_SUCCESS);
  EXPECT_EQ(node_queries_of_a_plan(s, copy, "plan on a duplicate: "), 0);
  MPI_Comm_free(&copy);
  {
    const SentOnly sent_only; // two nodes of one machine: no single copy between them
    setenv("REDIST_TEST_NODES", "2", 1);
    EXPECT_EQ(node_queries_of_a_plan(s, fresh, "REDIST_TEST_NODES=2: "), 1);
    EXPECT_EQ(node_queries_of_a_plan(s, fresh, "REDIST_TEST_NODES=2 again: "), 0);
    unsetenv("REDIST_TEST_NODES");
  }
  EXPECT_EQ(node_queries_of_a_plan(s, fresh, "REDIST_TEST_NODES unset: "), 1);
  MPI_Comm_free(&fresh);
  // The ScaLAPACK entries: a call that misses the cache on a context whose nodes are known.
  for (int call = 0; call < 2; ++call) {
    redist_scalapack_clear_cache();
    Data<double> d(s, 41 + call, 42 + call);
    node_queries = 0;
    const Outcome got = pdgemr2d(s, d, 0);
    EXPECT_EQ(got.status, REDIST_SUCCESS) << got.text;
    if (call > 0) {
      EXPECT_EQ(node_queries, 0) << "a second call with the cache cleared";
    }
    std::string report;
    EXPECT_EQ(wrong_elements(s, d, 41 + call, 42 + call, report), 0) << report;
  }
}

} // namespace
