// GoogleTest main for the MPI tests: MPI_Init / MPI_Finalize around RUN_ALL_TESTS, and a
// printer that makes sense with many ranks:
//   - rank 0 prints the progress lines ([ RUN ], [ OK ] / [ FAILED ]) and the summary;
//   - every rank prints its own failures immediately, prefixed with "[rank r]";
//   - the verdict of each test is agreed across ranks (a test failed if it failed on any rank;
//     the FAILED line lists the ranks), and so is the exit status;
//   - a test skipped (GTEST_SKIP) on some rank and failed on none is reported SKIPPED, never
//     OK, with rank 0's reason, and counted apart in the summary.
// Tests must never return early on one rank only (use EXPECT_*, not ASSERT_*, around
// collective code), because the other ranks would wait for it in the next collective.
//
// Extra options (after the gtest ones): --cases=N  --seed=S  --case=K  --verbose
//   --clear-cache (empty redist's plan cache after every case: isolates cache bugs)
//   --case-timeout=S (a case running longer than S seconds is reported as a hang; default 60)
// Environment: REDIST_TEST_SEED=S, REDIST_TEST_CASES=N.

#include "../common/scalapack_decls.h"
#include "harness.hpp"

#include <gtest/gtest.h>
#include <mpi.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

namespace {

class MpiPrinter : public testing::EmptyTestEventListener {
public:
  MpiPrinter() {
    MPI_Comm_rank(MPI_COMM_WORLD, &rank_);
    MPI_Comm_size(MPI_COMM_WORLD, &size_);
  }

  void OnTestProgramStart(const testing::UnitTest &u) override {
    if (rank_ == 0) {
      std::printf("[==========] Running %d tests from %d test suites on %d MPI ranks.\n",
                  u.test_to_run_count(), u.test_suite_to_run_count(), size_);
      std::fflush(stdout);
    }
  }

  void OnTestStart(const testing::TestInfo &t) override {
    if (rank_ == 0) {
      std::printf("[ RUN      ] %s.%s\n", t.test_suite_name(), t.name());
      std::fflush(stdout);
    }
  }

  void OnTestPartResult(const testing::TestPartResult &r) override {
    if (r.skipped() && rank_ == 0) {
      std::printf("[rank 0] %s:%d: Skipped\n%s\n", r.file_name() ? r.file_name() : "?",
                  r.line_number(), r.message());
      std::fflush(stdout);
    }
    if (!r.failed()) return;
    std::string text = "[rank " + std::to_string(rank_) + "] " +
                       (r.file_name() ? std::string(r.file_name()) : std::string("?")) + ":" +
                       std::to_string(r.line_number()) + ": Failure\n" + r.message() + "\n";
    std::fprintf(stdout, "%s", text.c_str());
    std::fflush(stdout);
  }

  void OnTestEnd(const testing::TestInfo &t) override {
    // 2: failed here, 1: skipped here, 0: passed.
    int outcome = t.result()->Failed() ? 2 : t.result()->Skipped() ? 1 : 0;
    std::vector<int> all(static_cast<std::size_t>(size_), 0);
    MPI_Gather(&outcome, 1, MPI_INT, all.data(), 1, MPI_INT, 0, MPI_COMM_WORLD);
    if (rank_ == 0) {
      std::string ranks;
      std::string skipped_on;
      for (int r = 0; r < size_; ++r) {
        const int o = all[static_cast<std::size_t>(r)];
        if (o == 2) ranks += (ranks.empty() ? "" : ",") + std::to_string(r);
        if (o == 1) skipped_on += (skipped_on.empty() ? "" : ",") + std::to_string(r);
      }
      const auto ms = static_cast<long long>(t.result()->elapsed_time());
      if (ranks.empty() && !skipped_on.empty()) {
        std::printf("[  SKIPPED ] %s.%s (%lld ms) on ranks %s\n", t.test_suite_name(), t.name(), ms,
                    skipped_on.c_str());
        skipped_tests_ += std::string("[  SKIPPED ] ") + t.test_suite_name() + "." + t.name() +
                          " (ranks " + skipped_on + ")\n";
        ++skipped_count_;
      } else if (ranks.empty()) {
        std::printf("[       OK ] %s.%s (%lld ms)\n", t.test_suite_name(), t.name(), ms);
      } else {
        std::printf("[  FAILED  ] %s.%s (%lld ms) on ranks %s\n", t.test_suite_name(), t.name(), ms,
                    ranks.c_str());
        failed_tests_ += std::string("[  FAILED  ] ") + t.test_suite_name() + "." + t.name() +
                         " (ranks " + ranks + ")\n";
        ++failed_count_;
      }
      std::fflush(stdout);
    }
  }

  void OnTestProgramEnd(const testing::UnitTest &u) override {
    if (rank_ == 0) {
      std::printf("[==========] %d tests ran on %d MPI ranks (%lld ms total).\n",
                  u.test_to_run_count(), size_, static_cast<long long>(u.elapsed_time()));
      std::printf("[  PASSED  ] %d tests.\n",
                  u.test_to_run_count() - failed_count_ - skipped_count_);
      if (skipped_count_ > 0) {
        std::printf("[  SKIPPED ] %d tests, listed below:\n%s", skipped_count_,
                    skipped_tests_.c_str());
      }
      if (failed_count_ > 0) {
        std::printf("[  FAILED  ] %d tests, listed below:\n%s", failed_count_,
                    failed_tests_.c_str());
      }
      std::fflush(stdout);
    }
  }

private:
  int rank_ = 0;
  int size_ = 1;
  int failed_count_ = 0;
  int skipped_count_ = 0;
  std::string failed_tests_;
  std::string skipped_tests_;
};

bool starts_with(const char *s, const char *prefix, const char **rest) {
  const std::size_t n = std::strlen(prefix);
  if (std::strncmp(s, prefix, n) != 0) return false;
  *rest = s + n;
  return true;
}

} // namespace

int main(int argc, char **argv) {
  MPI_Init(&argc, &argv);
  testing::InitGoogleTest(&argc, argv);

  mpitest::Options &opts = mpitest::options();
  if (const char *env = std::getenv("REDIST_TEST_SEED")) {
    opts.seed = std::strtoull(env, nullptr, 0);
    opts.seed_given = true;
  }
  if (const char *env = std::getenv("REDIST_TEST_CASES")) opts.cases = std::atoi(env);
  for (int i = 1; i < argc; ++i) {
    const char *rest = nullptr;
    if (starts_with(argv[i], "--cases=", &rest)) {
      opts.cases = std::atoi(rest);
    } else if (starts_with(argv[i], "--seed=", &rest)) {
      opts.seed = std::strtoull(rest, nullptr, 0);
      opts.seed_given = true;
    } else if (starts_with(argv[i], "--case=", &rest)) {
      opts.only_case = std::atoi(rest);
    } else if (std::strcmp(argv[i], "--verbose") == 0) {
      opts.verbose = true;
    } else if (starts_with(argv[i], "--case-timeout=", &rest)) {
      setenv("REDIST_TEST_CASE_TIMEOUT", rest, 1); // read by the hang detector (harness)
    } else if (std::strcmp(argv[i], "--clear-cache") == 0) {
      opts.clear_cache = true;
    } else {
      if (mpitest::world_rank() == 0) std::fprintf(stderr, "unknown argument %s\n", argv[i]);
      MPI_Abort(MPI_COMM_WORLD, 2);
    }
  }

  testing::TestEventListeners &listeners = testing::UnitTest::GetInstance()->listeners();
  delete listeners.Release(listeners.default_result_printer());
  listeners.Append(new MpiPrinter);

  int rc = RUN_ALL_TESTS();
  int global_rc = 0;
  MPI_Allreduce(&rc, &global_rc, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
  if (mpitest::blacs_used()) Cblacs_exit(1); // 1: leave MPI to us
  MPI_Finalize();
  return global_rc;
}
