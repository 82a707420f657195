// Split execution (redist_plan_execute_begin / _end): random layouts and every
// schedule; between begin and end each process runs a real computation on other data whose
// result is checked; B compared element by element with the harness's oracle and byte for byte
// with the blocking redist_plan_execute; a second begin, an execute, and an end with nothing in
// flight are errors on every process that leave the plan working; A changed only after the end
// takes effect in the next execution; argument errors appear at the begin, B untouched; the
// operation's begin equals redist_plan_execute_op; redist_plan_destroy completes an execution in
// flight; a failed completion injected in the end is repaired there, and the plan keeps working.

#include "harness.hpp"
#include "mpi_faults.hpp"

#include <redist.h>

#include <gtest/gtest.h>
#include <mpi.h>

#include <cstdint>
#include <cstring>
#include <numeric>
#include <string>
#include <vector>

namespace mpitest {
namespace {

constexpr int kSchedules = REDIST_SCHEDULE_MULTIPHASE - REDIST_SCHEDULE_AUTO + 1;

/// The computation done between begin and end: a recurrence over `n` values, checked against
/// its closed form (sum of i*i for i < n), so the caller's work is real and its result right.
bool compute_between(std::int64_t n) {
  std::vector<double> work(static_cast<std::size_t>(n));
  std::iota(work.begin(), work.end(), 0.0);
  double sum = 0.0;
  for (const double v : work)
    sum += v * v;
  const double expected = static_cast<double>((n - 1) * n * (2 * n - 1) / 6);
  return sum == expected;
}

std::string status(int st) {
  return std::string(redist_status_name(st)) + " (" + redist_last_error() + ")";
}

struct SplitCase {
  MatSpec a, b;
  std::int64_t m = 0, n = 0;
  redist_options options{};
  [[nodiscard]] std::string describe() const {
    return "m " + std::to_string(m) + " n " + std::to_string(n) + " schedule " +
           redist_schedule_name(options.schedule) + "\n  A: " + a.describe() +
           "\n  B: " + b.describe();
  }
};

SplitCase draw_case(Rng &rng, int np, int index) {
  SplitCase c;
  random_window(rng, c.m, c.n);
  std::vector<int> pool(static_cast<std::size_t>(np));
  std::iota(pool.begin(), pool.end(), 0);
  GridSpec ga = random_grid(rng, pool, static_cast<int>(rng.uniform(1, np)), false);
  GridSpec gb = random_grid(rng, pool, static_cast<int>(rng.uniform(1, np)), false);
  c.a = random_matrix(rng, std::move(ga), c.m, c.n);
  c.b = random_matrix(rng, std::move(gb), c.m, c.n);
  redist_options_init(&c.options);
  c.options.schedule = REDIST_SCHEDULE_AUTO + index % kSchedules; // every schedule in turn
  if (c.options.schedule != REDIST_SCHEDULE_ALL_AT_ONCE && rng.coin(0.5))
    c.options.max_memory = 2 * 8 * rng.uniform(1, 40);
  return c;
}

/// One case on MPI_COMM_WORLD: what failed here ("" if nothing).
std::string run_case(const SplitCase &c, int index) {
  std::string fail;
  const int rank = world_rank();
  const LocalBuf la = local_buf(c.a, rank), lb = local_buf(c.b, rank);
  const redist_layout lay_a = c_layout(c.a, c.a.grid.ranks.data(), la.member ? la.lld : 1);
  const redist_layout lay_b = c_layout(c.b, c.b.grid.ranks.data(), lb.member ? lb.lld : 1);
  redist_plan plan = nullptr;
  int st = redist_plan_create_opt(MPI_COMM_WORLD, c.m, c.n, REDIST_DOUBLE, &lay_a, &lay_b,
                                  REDIST_REGION_FULL, 0, &c.options, &plan);
  if (st != REDIST_SUCCESS) return "  redist_plan_create_opt: " + status(st) + "\n";
  const CopySpec cs{Region::Full, false, c.m, c.n};
  std::vector<double> a, a_orig, b, b_blocking;
  const auto check = [&](const char *what, int a_salt, int b_salt) {
    std::string rep;
    const std::int64_t bad = check_b(cs, c.a, c.b, lb, b.data(), a_salt, b_salt, rep);
    if (bad > 0)
      fail += std::string("  ") + what + ": " + std::to_string(bad) +
              " elements of B differ from the oracle, e.g.\n" + rep;
  };

  // begin, a computation on other data, end: the oracle's B, and the blocking call's.
  fill_a(c.a, la, 1, a);
  a_orig = a;
  fill_sentinel(lb, 4, b);
  st = redist_plan_execute_begin(plan, a.data(), b.data());
  if (st != REDIST_SUCCESS) fail += "  begin: " + status(st) + "\n";
  if (index % 3 == 0) { // one execution in flight: everything else is an error, changing nothing
    st = redist_plan_execute_begin(plan, a.data(), b.data());
    if (st != REDIST_ERR_ARGUMENT) fail += "  a second begin: " + status(st) + "\n";
    st = redist_plan_execute(plan, a.data(), b.data());
    if (st != REDIST_ERR_ARGUMENT) fail += "  execute while in flight: " + status(st) + "\n";
  }
  if (!compute_between(1000 + index)) fail += "  the computation between begin and end\n";
  st = redist_plan_execute_end(plan);
  if (st != REDIST_SUCCESS) fail += "  end: " + status(st) + "\n";
  if (a != a_orig) fail += "  A was modified\n";
  check("begin/end", 1, 4);
  fill_sentinel(lb, 4, b_blocking);
  st = redist_plan_execute(plan, a.data(), b_blocking.data());
  if (st != REDIST_SUCCESS) fail += "  blocking execute: " + status(st) + "\n";
  if (b != b_blocking) fail += "  begin/end and the blocking execute differ\n";
  st = redist_plan_execute_end(plan);
  if (st != REDIST_ERR_ARGUMENT) fail += "  end with nothing in flight: " + status(st) + "\n";

  // A changed after the end: the next split execution moves the new values into the same B.
  fill_a(c.a, la, 2, a);
  st = redist_plan_execute_begin(plan, a.data(), b.data());
  if (st == REDIST_SUCCESS) st = redist_plan_execute_end(plan);
  if (st != REDIST_SUCCESS) fail += "  second begin/end: " + status(st) + "\n";
  check("begin/end with A changed after the first end", 2, 4);

  // redist_plan_destroy with an execution in flight completes it.
  st = redist_plan_execute_begin(plan, a.data(), b.data());
  if (st != REDIST_SUCCESS) fail += "  begin before destroy: " + status(st) + "\n";
  st = redist_plan_destroy(&plan);
  if (st != REDIST_SUCCESS) fail += "  destroy in flight: " + status(st) + "\n";
  check("destroy with an execution in flight", 2, 4);
  return fail;
}

int run_everywhere(const std::string &what, const std::string &fail) {
  if (!fail.empty()) ADD_FAILURE() << what << "\n" << fail;
  int bad = fail.empty() ? 0 : 1, any = 0;
  MPI_Allreduce(&bad, &any, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
  return any;
}

TEST(Split, RandomLayoutsEverySchedule) {
  const int np = world_size();
  const std::uint64_t seed =
      shared_seed("Split.RandomLayoutsEverySchedule", 2005000ULL + static_cast<unsigned>(np));
  Rng rng(seed);
  int failed = 0;
  for (int index = 0; index < options().cases; ++index) {
    const SplitCase c = draw_case(rng, np, index);
    if (options().only_case >= 0 && options().only_case != index) continue;
    const std::string what = "seed " + std::to_string(seed) + " np " + std::to_string(np) +
                             " case " + std::to_string(index) + ", " + c.describe();
    watchdog_arm(what);
    failed += run_everywhere(what, run_case(c, index));
    watchdog_disarm();
  }
  print0("[  CASES   ] " + std::to_string(options().cases) + " split cases on " +
         std::to_string(np) + " ranks, " + std::to_string(failed) + " failed\n");
  EXPECT_EQ(failed, 0);
}

// The operation's begin (B := alpha A^T + beta B) equals redist_plan_execute_op byte for byte.
TEST(Split, OperationBeginEqualsBlocking) {
  const int np = world_size();
  const std::uint64_t seed =
      shared_seed("Split.OperationBeginEqualsBlocking", 2006000ULL + static_cast<unsigned>(np));
  Rng rng(seed);
  int failed = 0;
  for (int index = 0; index < options().cases / 4; ++index) {
    SplitCase c = draw_case(rng, np, index);
    // A's window is n x m for a transpose.
    std::vector<int> pool(static_cast<std::size_t>(np));
    std::iota(pool.begin(), pool.end(), 0);
    c.a = random_matrix(rng, random_grid(rng, pool, static_cast<int>(rng.uniform(1, np)), false),
                        c.n, c.m);
    const std::string what =
        "seed " + std::to_string(seed) + " case " + std::to_string(index) + ", " + c.describe();
    watchdog_arm(what);
    std::string fail;
    const int rank = world_rank();
    const LocalBuf la = local_buf(c.a, rank), lb = local_buf(c.b, rank);
    const redist_layout lay_a = c_layout(c.a, c.a.grid.ranks.data(), la.member ? la.lld : 1);
    const redist_layout lay_b = c_layout(c.b, c.b.grid.ranks.data(), lb.member ? lb.lld : 1);
    redist_plan plan = nullptr;
    int st = redist_plan_create_op(MPI_COMM_WORLD, REDIST_OP_T, c.m, c.n, REDIST_DOUBLE, &lay_a,
                                   &lay_b, REDIST_REGION_FULL, &c.options, &plan);
    if (st != REDIST_SUCCESS) {
      fail += "  redist_plan_create_op: " + status(st) + "\n";
    } else {
      std::vector<double> a, split, blocking;
      fill_a(c.a, la, 1, a);
      fill_sentinel(lb, 4, split);
      blocking = split;
      const double alpha = 0.5 + static_cast<double>(index % 5);
      const double beta = -1.25;
      st = redist_plan_execute_op_begin(plan, &alpha, a.data(), &beta, split.data());
      if (!compute_between(500 + index)) fail += "  the computation between begin and end\n";
      if (st == REDIST_SUCCESS) st = redist_plan_execute_end(plan);
      if (st != REDIST_SUCCESS) fail += "  op begin/end: " + status(st) + "\n";
      st = redist_plan_execute_op(plan, &alpha, a.data(), &beta, blocking.data());
      if (st != REDIST_SUCCESS) fail += "  execute_op: " + status(st) + "\n";
      if (std::memcmp(split.data(), blocking.data(), split.size() * sizeof(double)) != 0)
        fail += "  op begin/end and execute_op differ\n";
      redist_plan_destroy(&plan);
    }
    failed += run_everywhere(what, fail);
    watchdog_disarm();
  }
  EXPECT_EQ(failed, 0);
}

// Argument errors are reported by the begin on every process (ARGUMENT where the argument is
// bad, REMOTE elsewhere), B untouched, nothing in flight; the plan works afterwards.
TEST(Split, ArgumentErrorsAtBegin) {
  const int np = world_size();
  const std::uint64_t seed =
      shared_seed("Split.ArgumentErrorsAtBegin", 2008000ULL + static_cast<unsigned>(np));
  Rng rng(seed);
  EXPECT_EQ(redist_plan_execute_begin(nullptr, nullptr, nullptr), REDIST_ERR_ARGUMENT);
  EXPECT_EQ(redist_plan_execute_end(nullptr), REDIST_ERR_ARGUMENT);
  int failed = 0;
  for (int index = 0; index < options().cases / 4; ++index) {
    const SplitCase c = draw_case(rng, np, index);
    const std::string what =
        "seed " + std::to_string(seed) + " case " + std::to_string(index) + ", " + c.describe();
    watchdog_arm(what);
    std::string fail;
    const int rank = world_rank();
    const LocalBuf la = local_buf(c.a, rank), lb = local_buf(c.b, rank);
    const redist_layout lay_a = c_layout(c.a, c.a.grid.ranks.data(), la.member ? la.lld : 1);
    const redist_layout lay_b = c_layout(c.b, c.b.grid.ranks.data(), lb.member ? lb.lld : 1);
    redist_plan plan = nullptr;
    int st = redist_plan_create_opt(MPI_COMM_WORLD, c.m, c.n, REDIST_DOUBLE, &lay_a, &lay_b,
                                    REDIST_REGION_FULL, 0, &c.options, &plan);
    const CopySpec cs{Region::Full, false, c.m, c.n};
    // The lowest rank that owns source elements passes a NULL A.
    const int owns = owned_region_count(cs, c.a, la) > 0 ? rank : np;
    int bad_rank = np;
    MPI_Allreduce(&owns, &bad_rank, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
    if (st != REDIST_SUCCESS || bad_rank == np) {
      if (st != REDIST_SUCCESS) fail += "  redist_plan_create_opt: " + status(st) + "\n";
      redist_plan_destroy(&plan);
      failed += run_everywhere(what, fail);
      watchdog_disarm();
      continue;
    }
    std::vector<double> a, b, b_orig;
    fill_a(c.a, la, 1, a);
    fill_sentinel(lb, 4, b);
    b_orig = b;
    st = redist_plan_execute_begin(plan, rank == bad_rank ? nullptr : a.data(), b.data());
    const int expected = rank == bad_rank ? REDIST_ERR_ARGUMENT : REDIST_ERR_REMOTE;
    if (st != expected)
      fail +=
          "  begin with a NULL A on rank " + std::to_string(bad_rank) + ": " + status(st) + "\n";
    if (b != b_orig) fail += "  B was written by a failed begin\n";
    st = redist_plan_execute_end(plan);
    if (st != REDIST_ERR_ARGUMENT) fail += "  end after a failed begin: " + status(st) + "\n";
    st = redist_plan_execute_begin(plan, a.data(), b.data());
    if (st == REDIST_SUCCESS) st = redist_plan_execute_end(plan);
    if (st != REDIST_SUCCESS) fail += "  begin/end after the error: " + status(st) + "\n";
    std::string rep;
    const std::int64_t wrong = check_b(cs, c.a, c.b, lb, b.data(), 1, 4, rep);
    if (wrong > 0)
      fail += "  after the error: " + std::to_string(wrong) +
              " elements of B differ from the oracle, e.g.\n" + rep;
    redist_plan_destroy(&plan);
    failed += run_everywhere(what, fail);
    watchdog_disarm();
  }
  EXPECT_EQ(failed, 0);
}

// The executor's message tags (redist::Executor::kTag; a two-phase plan's phases add 1 and 2).
constexpr int kExecutorTag = 7411;

// A receive whose completion fails on rank 0 between begin and end: the end repairs it (the
// message is sent again), B is the oracle's on every process, the plan keeps working.
TEST(Split, FailedCompletionRepairedInEnd) {
  const int np = world_size();
  const std::uint64_t seed =
      shared_seed("Split.FailedCompletionRepairedInEnd", 2007000ULL + static_cast<unsigned>(np));
  Rng rng(seed);
  int failed = 0;
  long long injected = 0;
  for (int index = 0; index < options().cases / 4; ++index) {
    const SplitCase c = draw_case(rng, np, index);
    const std::string what =
        "seed " + std::to_string(seed) + " case " + std::to_string(index) + ", " + c.describe();
    watchdog_arm(what);
    std::string fail;
    const int rank = world_rank();
    const LocalBuf la = local_buf(c.a, rank), lb = local_buf(c.b, rank);
    const redist_layout lay_a = c_layout(c.a, c.a.grid.ranks.data(), la.member ? la.lld : 1);
    const redist_layout lay_b = c_layout(c.b, c.b.grid.ranks.data(), lb.member ? lb.lld : 1);
    redist_plan plan = nullptr;
    int st = redist_plan_create_opt(MPI_COMM_WORLD, c.m, c.n, REDIST_DOUBLE, &lay_a, &lay_b,
                                    REDIST_REGION_FULL, 0, &c.options, &plan);
    if (st != REDIST_SUCCESS) fail += "  redist_plan_create_opt: " + status(st) + "\n";
    const CopySpec cs{Region::Full, false, c.m, c.n};
    std::vector<double> a, b;
    for (int salt = 1; plan != nullptr && salt <= 2; ++salt) {
      fill_a(c.a, la, salt, a);
      fill_sentinel(lb, 4, b);
      st = redist_plan_execute_begin(plan, a.data(), b.data());
      if (st != REDIST_SUCCESS) fail += "  begin: " + status(st) + "\n";
      const long long before = faults::injected();
      if (salt == 1 && rank == 0) {
        faults::Fault f;
        f.calls = faults::wait_recv;
        f.tags = {kExecutorTag, kExecutorTag + 1, kExecutorTag + 2};
        f.count = 1;
        faults::arm(f);
      }
      st = redist_plan_execute_end(plan);
      faults::disarm();
      injected += faults::injected() - before;
      if (st != REDIST_SUCCESS)
        fail += "  end (salt " + std::to_string(salt) + "): " + status(st) + "\n";
      std::string rep;
      const std::int64_t bad = check_b(cs, c.a, c.b, lb, b.data(), salt, 4, rep);
      if (bad > 0)
        fail += "  salt " + std::to_string(salt) + ": " + std::to_string(bad) +
                " elements of B differ from the oracle, e.g.\n" + rep;
    }
    redist_plan_destroy(&plan);
    failed += run_everywhere(what, fail);
    watchdog_disarm();
  }
  long long total = 0;
  MPI_Allreduce(&injected, &total, 1, MPI_LONG_LONG, MPI_SUM, MPI_COMM_WORLD);
  print0("[  FAULTS  ] " + std::to_string(total) + " failed completions injected\n");
  EXPECT_GT(total, 0);
  EXPECT_EQ(failed, 0);
}

} // namespace
} // namespace mpitest
