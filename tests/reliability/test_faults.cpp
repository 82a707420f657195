// MPI errors during execution (docs/reliability.md, Faults). mpi_faults.cpp makes the transfers
// between two processes F = 0 and P = last fail, as MPI would under MPI_ERRORS_RETURN: either
// MPI_Isend / MPI_Irecv fail at once (nothing posted), or the transfer completes and the wait
// reports the error. Checked on every process, under the harness's hang watchdog:
//   - the processes where MPI reported the error get REDIST_ERR_MPI naming the MPI call and the
//     peer; every other process gets REDIST_SUCCESS (nobody waits for a skipped message);
//   - B: every element the oracle expects, except those whose transfer failed, which keep
//     their old value; at least one element must be affected, or the case proves nothing;
//   - no request of the executor is left behind;
//   - the same plan, executed again without faults, gives the oracle's B everywhere.
// The library's communicators must have MPI_ERRORS_RETURN: an injected fault calls the
// communicator's error handler, which would abort the job otherwise.

#include "../common/scalapack_decls.h"
#include "../errors/capi_support.hpp"
#include "exec.hpp"
#include "mpi_faults.hpp"

#include <redist.h>
#include <redist_scalapack.h>

#include <gtest/gtest.h>
#include <mpi.h>

#include <array>
#include <bit>
#include <cstdint>
#include <string>
#include <vector>

namespace {

using capitest::CArgs;
using errtest::Data;
using errtest::Scenario;
using mpitest::MatSpec;
using mpitest::world_rank;
using mpitest::world_size;

// The executor's tags: a one-phase plan uses kTag, a two-phase plan kTag + 1 and kTag + 2.
constexpr int kTagLo = redist::Executor::kTag;
constexpr int kTagHi = redist::Executor::kTag + 2;

/// The processes whose transfers fail, and whether the fault shows on both ends.
struct Link {
  int first = 0;
  int second = 0;
  bool both_ends = true;
  /// The peer whose transfers fail on this process (-1: none).
  [[nodiscard]] int failing_peer() const {
    const int me = world_rank();
    if (me == first) return second;
    if (me == second && both_ends) return first;
    return -1;
  }
};

Link link(bool both_ends) {
  return {0, world_size() - 1, both_ends};
}

std::string mpi_error_text(int code) {
  char text[MPI_MAX_ERROR_STRING];
  int length = 0;
  MPI_Error_string(code, text, &length);
  return {text, static_cast<std::size_t>(length)};
}

/// World rank that owns element (gi, gj) of A.
int owner(const MatSpec &a, std::int64_t gi, std::int64_t gj) {
  const auto pr = static_cast<int>((gi / a.mb + a.rsrc) % a.grid.nprow);
  const auto pc = static_cast<int>((gj / a.nb + a.csrc) % a.grid.npcol);
  return a.grid.ranks[static_cast<std::size_t>(pr) +
                      static_cast<std::size_t>(pc) * static_cast<std::size_t>(a.grid.nprow)];
}

/// Compare B with the oracle of an m x n copy in which the transfers from `lost_source` to this
/// process failed (-1: none): those elements must keep their sentinel. Returns the number of
/// wrong elements; `lost` counts the elements that had to stay.
std::int64_t check_b_after_fault(const MatSpec &a, const MatSpec &b, const mpitest::LocalBuf &lb,
                                 const std::vector<double> &buf, std::int64_t m, std::int64_t n,
                                 int a_salt, int b_salt, int lost_source, std::int64_t &lost,
                                 std::string &report) {
  mpitest::CopySpec c;
  c.m = m;
  c.n = n;
  std::int64_t wrong = 0;
  lost = 0;
  for (std::int64_t p = 0; p < lb.elems; ++p) {
    std::int64_t code = mpitest::expected_code(c, a, b, lb, p, a_salt, b_salt);
    if (code > 0) {
      const std::int64_t rest = code - 1 - a_salt * mpitest::CodeSaltStride;
      if (owner(a, rest % a.mg, rest / a.mg) == lost_source) {
        code = mpitest::sentinel_code(p, b_salt);
        ++lost;
      }
    }
    const auto want = static_cast<double>(code);
    if (std::bit_cast<std::uint64_t>(want) !=
        std::bit_cast<std::uint64_t>(buf[static_cast<std::size_t>(p)])) {
      if (wrong < 4) {
        report += "  B[" + std::to_string(p) + "] = " +
                  mpitest::describe_code(mpitest::code_of(buf[static_cast<std::size_t>(p)]), a) +
                  ", expected " + mpitest::describe_code(code, a) + "\n";
      }
      ++wrong;
    }
  }
  return wrong;
}

long long sum_everywhere(long long v) {
  MPI_Allreduce(MPI_IN_PLACE, &v, 1, MPI_LONG_LONG, MPI_SUM, MPI_COMM_WORLD);
  return v;
}

/// Status and message after a faulty execution on this process.
void expect_fault_outcome(const std::string &where, int status, const std::string &message,
                          const Link &l, const char *prefix) {
  const int peer = l.failing_peer();
  if (peer < 0) {
    EXPECT_EQ(status, REDIST_SUCCESS) << where << "a process off the failed link: " << message;
    return;
  }
  EXPECT_EQ(status, REDIST_ERR_MPI) << where << redist_status_name(status) << ": " << message;
  const std::string named = " with peer rank " + std::to_string(peer) + " failed: ";
  EXPECT_NE(message.find(prefix), std::string::npos) << where << message;
  EXPECT_NE(message.find(named), std::string::npos) << where << message;
  EXPECT_NE(message.find(mpi_error_text(MPI_ERR_OTHER)), std::string::npos) << where << message;
}

const char *mode_name(faults::Mode mode) {
  return mode == faults::Mode::post ? "Isend/Irecv fail" : "waits fail";
}

/// One C API plan of scenario `s` with `options`, executed with the fault armed, then again
/// without. `check_data`: whether the oracle of check_b_after_fault applies (one-phase plans).
void run_c_case(const Scenario &s, const redist_options &options, faults::Mode mode, const Link &l,
                bool check_data, const std::string &label) {
  const std::string where = "[" + label + ", " + mode_name(mode) + "] ";
  CArgs x(s);
  redist_plan plan = nullptr;
  const int created = redist_plan_create_opt(MPI_COMM_WORLD, x.m, x.n, REDIST_DOUBLE, x.pa, x.pb,
                                             REDIST_REGION_FULL, 0, &options, &plan);
  ASSERT_EQ(created, REDIST_SUCCESS) << where << redist_last_error(); // same on every rank

  Data<double> d(s, 1, 2);
  const long long injected_before = faults::injected();
  const int peer = l.failing_peer();
  if (peer >= 0) faults::arm(peer, mode, kTagLo, kTagHi);
  mpitest::watchdog_arm(where + "execution with a failed link");
  const int status = redist_plan_execute(plan, d.a.data(), d.b.data());
  mpitest::watchdog_disarm();
  faults::disarm();
  expect_fault_outcome(where, status, redist_last_error(), l, "redist execute: ");
  EXPECT_EQ(faults::injected() > injected_before, peer >= 0) << where << "faults injected";
  EXPECT_EQ(faults::live_requests(), 0) << where << "requests left behind";
  if (check_data) {
    std::int64_t lost = 0;
    std::string report;
    EXPECT_EQ(check_b_after_fault(s.a, s.b, d.lb, d.b, s.m, s.n, 1, 2, peer, lost, report), 0)
        << where << "B after the failed execution:\n"
        << report;
    EXPECT_GT(sum_everywhere(lost), 0) << where << "no element crosses the failed link";
  }

  Data<double> again(s, 3, 4);
  EXPECT_EQ(redist_plan_execute(plan, again.a.data(), again.b.data()), REDIST_SUCCESS)
      << where << "the same plan without the fault: " << redist_last_error();
  std::int64_t lost = 0;
  std::string report;
  EXPECT_EQ(check_b_after_fault(s.a, s.b, again.lb, again.b, s.m, s.n, 3, 4, -1, lost, report), 0)
      << where << "B of the execution without the fault:\n"
      << report;
  EXPECT_EQ(faults::live_requests(), 0) << where << "requests left behind";
  EXPECT_EQ(redist_plan_destroy(&plan), REDIST_SUCCESS) << where << redist_last_error();
}

redist_options with_schedule(int schedule) {
  redist_options o;
  redist_options_init(&o);
  o.schedule = schedule;
  return o;
}

TEST(Faults, FailedLinkReportedAtBothEndsOthersFinish) {
  if (world_size() < 2) GTEST_SKIP() << "needs two processes";
  const Scenario s = errtest::standard_scenario();
  for (const faults::Mode mode : {faults::Mode::post, faults::Mode::completion}) {
    run_c_case(s, with_schedule(REDIST_SCHEDULE_ALL_AT_ONCE), mode, link(true), true,
               "all-at-once");
    run_c_case(s, with_schedule(REDIST_SCHEDULE_CATERPILLAR), mode, link(true), true,
               "caterpillar");
    redist_options capped = with_schedule(REDIST_SCHEDULE_STEPWISE);
    capped.max_memory = 48; // three doubles each way: messages go in several sub-steps
    run_c_case(s, capped, mode, link(true), true, "stepwise, max_memory 48");
  }
}

TEST(Faults, WaitFailingOnOneEndOnly) {
  // The data arrives, but the wait on F reports an error: F returns REDIST_ERR_MPI and does
  // not unpack what it received from P; P and the others finish normally.
  if (world_size() < 2) GTEST_SKIP() << "needs two processes";
  const Scenario s = errtest::standard_scenario();
  run_c_case(s, with_schedule(REDIST_SCHEDULE_ALL_AT_ONCE), faults::Mode::completion, link(false),
             true, "all-at-once, one end");
  run_c_case(s, with_schedule(REDIST_SCHEDULE_CATERPILLAR), faults::Mode::completion, link(false),
             true, "caterpillar, one end");
}

TEST(Faults, TwoPhasePlans) {
  // Kaushik et al. 1995's two phases (block rows 2 -> 3 through CYCLIC(6) / CYCLIC(1) on a column
  // of P processes): the second phase runs even when the first failed.
  if (world_size() < 2) GTEST_SKIP() << "needs two processes";
  const int p = world_size();
  std::vector<int> ranks(static_cast<std::size_t>(p));
  for (int k = 0; k < p; ++k)
    ranks[static_cast<std::size_t>(k)] = k;
  Scenario s;
  s.m = 37;
  s.n = 5;
  s.a.grid = errtest::map_grid(p, 1, ranks);
  s.a.mg = 40;
  s.a.ng = 6;
  s.a.mb = 2;
  s.a.nb = 2;
  s.a.ia = 2;
  s.a.ja = 1;
  s.a.lld_extra.assign(static_cast<std::size_t>(p), 1);
  s.b = s.a;
  s.b.mb = 3;
  s.b.ia = 1;
  s.b.ja = 2;
  redist_options multiphase = with_schedule(REDIST_SCHEDULE_MULTIPHASE);
  for (const faults::Mode mode : {faults::Mode::post, faults::Mode::completion}) {
    run_c_case(s, multiphase, mode, link(true), false, "multiphase");
  }
}

TEST(Faults, ScalapackEntry) {
  // PDGEMR2D through the plan cache: the failed call reports REDIST_ERR_MPI on F and P (one
  // line on stderr each), the cached plan stays usable.
  if (world_size() < 2) GTEST_SKIP() << "needs two processes";
  const Scenario s = errtest::standard_scenario();
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
  const Link l = link(true);
  for (const faults::Mode mode : {faults::Mode::post, faults::Mode::completion}) {
    const std::string where = std::string("[PDGEMR2D, ") + mode_name(mode) + "] ";
    for (const bool faulty : {false, true, false}) { // cached plan, then the fault, then reuse
      Data<double> d(s, faulty ? 5 : 6, 7);
      const std::array<int, 9> desca = mpitest::descriptor(s.a, ctxt_a, d.la);
      const std::array<int, 9> descb = mpitest::descriptor(s.b, ctxt_b, d.lb);
      const int peer = faulty ? l.failing_peer() : -1;
      if (peer >= 0) faults::arm(peer, mode, kTagLo, kTagHi);
      errtest::StderrCapture capture;
      mpitest::watchdog_arm(where + "call");
      redist_pdgemr2d_(&m, &n, d.a.data(), &ia, &ja, desca.data(), d.b.data(), &ib, &jb,
                       descb.data(), &ictxt);
      mpitest::watchdog_disarm();
      faults::disarm();
      const std::string printed = capture.finish();
      const int status = redist_scalapack_last_status();
      if (faulty) {
        expect_fault_outcome(where, status, printed, l, "{ redist } PDGEMR2D: redist execute: ");
      } else {
        EXPECT_EQ(status, REDIST_SUCCESS) << where << printed;
        EXPECT_EQ(printed, "") << where;
      }
      EXPECT_EQ(faults::live_requests(), 0) << where << "requests left behind";
      std::int64_t lost = 0;
      std::string report;
      EXPECT_EQ(
          check_b_after_fault(s.a, s.b, d.lb, d.b, s.m, s.n, faulty ? 5 : 6, 7, peer, lost, report),
          0)
          << where << (faulty ? "B after the failed call:\n" : "B of a call without fault:\n")
          << report;
    }
  }
  mpitest::free_context(ctxt_a);
  mpitest::free_context(ctxt_b);
  mpitest::free_context(ictxt);
}

// Running out of memory while planning: the buffers of a 2^24 x 2^24 window of doubles sent
// from one process to another (2^51 bytes each way) cannot be allocated. The processes that
// fail and the others learn it before any data moves; nothing hangs; the library works after.
// The local arrays are never touched (planning fails first), so small stand-ins are passed.
TEST(Faults, OutOfMemoryWhilePlanningIsAgreed) {
  if (world_size() < 2) GTEST_SKIP() << "needs two processes";
  constexpr std::int64_t kSide = std::int64_t{1} << 24;
  const int me = world_rank();
  const bool involved = me <= 1; // A on process 0, B on process 1
  {
    const int rank_a = 0;
    const int rank_b = 1;
    const redist_layout a{kSide, kSide, kSide, kSide, 1, 1, 0, 0, &rank_a, 0, 0, kSide};
    const redist_layout b{kSide, kSide, kSide, kSide, 1, 1, 0, 0, &rank_b, 0, 0, kSide};
    const redist_options options = with_schedule(REDIST_SCHEDULE_ALL_AT_ONCE);
    redist_plan plan = nullptr;
    mpitest::watchdog_arm("[C API] out of memory while planning");
    const int status = redist_plan_create_opt(MPI_COMM_WORLD, kSide, kSide, REDIST_DOUBLE, &a, &b,
                                              REDIST_REGION_FULL, 0, &options, &plan);
    mpitest::watchdog_disarm();
    const std::string message = redist_last_error();
    if (involved) {
      EXPECT_EQ(status, REDIST_ERR_NO_MEMORY) << redist_status_name(status) << ": " << message;
      EXPECT_EQ(message, "redist_plan_create_opt: out of memory while planning");
    } else {
      EXPECT_EQ(status, REDIST_ERR_REMOTE) << redist_status_name(status) << ": " << message;
    }
    EXPECT_EQ(plan, nullptr);
    capitest::valid_plan_works("[after running out of memory] ");
  }
  {
    std::string error;
    const int ctxt_a = mpitest::create_context(errtest::map_grid(1, 1, {0}), error);
    const int ctxt_b = mpitest::create_context(errtest::map_grid(1, 1, {1}), error);
    const int ictxt = mpitest::create_context(errtest::init_grid('R', 1, world_size()), error);
    ASSERT_EQ(error, "");
    const int side = static_cast<int>(kSide);
    const int one = 1;
    const int desca[9] = {1, ctxt_a, side, side, side, side, 0, 0, me == 0 ? side : 1};
    const int descb[9] = {1, ctxt_b, side, side, side, side, 0, 0, me == 1 ? side : 1};
    std::vector<double> a(16, 1.0);
    std::vector<double> b(16, -1.0);
    const std::vector<double> b_before = b;
    errtest::StderrCapture capture;
    mpitest::watchdog_arm("[PDGEMR2D] out of memory while planning");
    redist_pdgemr2d_(&side, &side, a.data(), &one, &one, desca, b.data(), &one, &one, descb,
                     &ictxt);
    mpitest::watchdog_disarm();
    const std::string printed = capture.finish();
    EXPECT_EQ(redist_scalapack_last_status(), REDIST_ERR_NO_MEMORY) << printed;
    const std::string expected = std::string("{ redist } PDGEMR2D: out of memory while planning") +
                                 (involved ? "" : " on another process") + "; nothing was copied\n";
    EXPECT_EQ(printed, expected);
    EXPECT_EQ(errtest::byte_diff(b_before, b), "") << "B was modified";
    mpitest::free_context(ctxt_a);
    mpitest::free_context(ctxt_b);
    mpitest::free_context(ictxt);
  }
}

} // namespace
