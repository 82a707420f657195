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
#include "api_internal.hpp"
#include "exec.hpp"
#include "mpi_faults.hpp"
#include "operation.hpp"
#include "planner.hpp"
#include "single_copy.hpp"

#include <redist.h>
#include <redist_scalapack.h>

#include <gtest/gtest.h>
#include <mpi.h>

#include <array>
#include <bit>
#include <climits>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <memory>
#include <string>
#include <vector>

namespace {

using capitest::CArgs;
using errtest::Data;
using errtest::Scenario;
using mpitest::MatSpec;
using mpitest::world_rank;
using mpitest::world_size;

// The executor's tags: a one-phase plan uses kTag, a two-phase plan kTag + 1 and kTag + 2; each
// with offsets for the single-copy control messages and for the repair.
constexpr int kTag = redist::Executor::kTag;

/// The tags of one kind of message (offset 0: data; redist::kAddressTag: addresses and
/// identities; redist::kReplyTag: replies and the negotiation's answers; redist::kRepairTag:
/// messages sent again after a failure) in one- and two-phase plans.
std::vector<int> tags_of(int offset) {
  return {kTag + offset, kTag + 1 + offset, kTag + 2 + offset};
}

/// A failed link: the data messages and their repairs, every one with `peer`, as `mode` says.
faults::Fault link_fault(int peer, faults::Mode mode) {
  faults::Fault f;
  f.peer = peer;
  f.calls = mode == faults::Mode::post ? faults::posts : faults::completions;
  f.tags = tags_of(0);
  for (const int tag : tags_of(redist::kRepairTag))
    f.tags.push_back(tag);
  return f;
}

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

/// Compare B with the oracle of B := alpha A + beta B (op N) on an m x n window, B's old values
/// its sentinels (salt b_salt): in the window alpha a + beta b (exact: the codes and the
/// coefficients are small), elsewhere untouched. Returns the number of wrong elements.
std::int64_t check_b_after_operation(const MatSpec &a, const MatSpec &b,
                                     const mpitest::LocalBuf &lb, const std::vector<double> &buf,
                                     std::int64_t m, std::int64_t n, int a_salt, int b_salt,
                                     const std::array<double, 2> &alpha_beta, std::string &report,
                                     bool transposed) {
  mpitest::CopySpec c;
  c.m = m;
  c.n = n;
  c.transposed = transposed;
  std::int64_t wrong = 0;
  for (std::int64_t p = 0; p < lb.elems; ++p) {
    const std::int64_t code = mpitest::expected_code(c, a, b, lb, p, a_salt, b_salt);
    const auto old = static_cast<double>(mpitest::sentinel_code(p, b_salt));
    const double want =
        code > 0 ? alpha_beta[0] * static_cast<double>(code) + alpha_beta[1] * old : old;
    const double got = buf[static_cast<std::size_t>(p)];
    if (std::bit_cast<std::uint64_t>(want) != std::bit_cast<std::uint64_t>(got)) {
      if (wrong < 4) {
        report += "  B[" + std::to_string(p) + "] = " + std::to_string(got) + ", expected " +
                  std::to_string(want) + " (A's element " + std::to_string(code) + ")\n";
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
  if (peer >= 0) faults::arm(link_fault(peer, mode));
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
  // of P processes), every call on one link failing: the first phase's failure is agreed
  // before the second, which then runs nowhere, so that no process succeeds with the stale
  // intermediate elements of a failed peer.
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
  const Link l = link(true);
  for (const faults::Mode mode : {faults::Mode::post, faults::Mode::completion}) {
    const std::string where = std::string("[multiphase, ") + mode_name(mode) + "] ";
    CArgs x(s);
    redist_plan plan = nullptr;
    ASSERT_EQ(redist_plan_create_opt(MPI_COMM_WORLD, x.m, x.n, REDIST_DOUBLE, x.pa, x.pb,
                                     REDIST_REGION_FULL, 0, &multiphase, &plan),
              REDIST_SUCCESS)
        << where << redist_last_error();
    redist_plan_info info{};
    ASSERT_EQ(redist_plan_get_info(plan, &info), REDIST_SUCCESS);
    ASSERT_EQ(info.schedule, REDIST_SCHEDULE_MULTIPHASE) << where << "the plan runs in one phase";
    Data<double> d(s, 1, 2);
    const std::vector<double> b_before = d.b;
    const int peer = l.failing_peer();
    if (peer >= 0) faults::arm(link_fault(peer, mode));
    mpitest::watchdog_arm(where + "execution with a failed link");
    const int status = redist_plan_execute(plan, d.a.data(), d.b.data());
    mpitest::watchdog_disarm();
    faults::disarm();
    const std::string message = redist_last_error();
    if (peer >= 0) {
      EXPECT_EQ(status, REDIST_ERR_MPI) << where << "a process of the failed link: " << message;
    }
    // A process that succeeds has B right; where any B is not right, every process fails.
    std::int64_t lost = 0;
    std::string report;
    const std::int64_t wrong =
        check_b_after_fault(s.a, s.b, d.lb, d.b, s.m, s.n, 1, 2, -1, lost, report);
    const bool untouched = errtest::byte_diff(b_before, d.b).empty();
    if (status == REDIST_SUCCESS) {
      EXPECT_EQ(wrong, 0) << where << "success with a wrong B:\n" << report;
    }
    const bool any_wrong = sum_everywhere(wrong != 0 ? 1 : 0) > 0;
    const bool any_success = sum_everywhere(status == REDIST_SUCCESS ? 1 : 0) > 0;
    EXPECT_FALSE(any_wrong && any_success) << where << "a process succeeded while a B is wrong";
    if (status != REDIST_SUCCESS && peer < 0) {
      EXPECT_TRUE(untouched) << where << "B written although the first phase failed elsewhere";
    }
    EXPECT_EQ(faults::live_requests(), 0) << where << "requests left behind";

    Data<double> again(s, 3, 4);
    EXPECT_EQ(redist_plan_execute(plan, again.a.data(), again.b.data()), REDIST_SUCCESS)
        << where << "the same plan without the fault: " << redist_last_error();
    EXPECT_EQ(check_b_after_fault(s.a, s.b, again.lb, again.b, s.m, s.n, 3, 4, -1, lost, report), 0)
        << where << "B of the execution without the fault:\n"
        << report;
    EXPECT_EQ(redist_plan_destroy(&plan), REDIST_SUCCESS) << where << redist_last_error();
  }
}

TEST(Faults, ScalapackEntry) {
  // PDGEMR2D through the plan cache: the failed call reports REDIST_ERR_MPI on F and P (one
  // line on stderr each), the cached plan stays usable. The failed call is its plan's second
  // execution; each mode has contexts (and a plan) of its own.
  if (world_size() < 2) GTEST_SKIP() << "needs two processes";
  const Scenario s = errtest::standard_scenario();
  const int m = static_cast<int>(s.m);
  const int n = static_cast<int>(s.n);
  const auto ia = static_cast<int>(s.a.ia);
  const auto ja = static_cast<int>(s.a.ja);
  const auto ib = static_cast<int>(s.b.ia);
  const auto jb = static_cast<int>(s.b.ja);
  const Link l = link(true);
  for (const faults::Mode mode : {faults::Mode::post, faults::Mode::completion}) {
    std::string error;
    const int ctxt_a = mpitest::create_context(s.a.grid, error);
    const int ctxt_b = mpitest::create_context(s.b.grid, error);
    const int ictxt = mpitest::create_context(s.ictxt, error);
    ASSERT_EQ(error, "");
    const std::string where = std::string("[PDGEMR2D, ") + mode_name(mode) + "] ";
    for (const bool faulty : {false, true, false}) { // cached plan, then the fault, then reuse
      Data<double> d(s, faulty ? 5 : 6, 7);
      const std::array<int, 9> desca = mpitest::descriptor(s.a, ctxt_a, d.la);
      const std::array<int, 9> descb = mpitest::descriptor(s.b, ctxt_b, d.lb);
      const int peer = faulty ? l.failing_peer() : -1;
      if (peer >= 0) faults::arm(link_fault(peer, mode));
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
    mpitest::free_context(ctxt_a);
    mpitest::free_context(ctxt_b);
    mpitest::free_context(ictxt);
  }
}

// Running out of memory while planning, or while checking the arguments: the buffers of a
// 2^24 x 2^24 window of doubles sent
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
  {
    // Running out of memory while checking the arguments, on process 0 only (a batch whose
    // count its checks cannot allocate for; its one operation is never read): agreed like a
    // bad argument, so the others return too instead of waiting in the agreement.
    const Scenario s = errtest::standard_scenario();
    CArgs x(s);
    const redist_batch_op op{REDIST_OP_N, x.m, x.n, REDIST_DOUBLE, x.pa, x.pb, REDIST_REGION_FULL};
    const int count = me == 0 ? std::numeric_limits<int>::max() : 1;
    redist_plan plan = nullptr;
    mpitest::watchdog_arm("[batch] out of memory while checking the arguments");
    const int status = redist_plan_create_batch(MPI_COMM_WORLD, count, &op, nullptr, &plan);
    mpitest::watchdog_disarm();
    const std::string message = redist_last_error();
    if (me == 0) {
      EXPECT_EQ(status, REDIST_ERR_NO_MEMORY) << message;
      EXPECT_EQ(message, "redist_plan_create_batch: out of memory while checking the arguments");
    } else {
      EXPECT_EQ(status, REDIST_ERR_REMOTE) << message;
    }
    EXPECT_EQ(plan, nullptr);
    capitest::valid_plan_works("[after running out of memory while checking] ");
  }
}

// ---------------------------------------------------------------------------------------------
// One failed call, anywhere. The executor is driven directly (as the C API makes it)
// so that the test sees which way each message went and what the repair did.

namespace sc = redist::single_copy;

/// REDIST_SINGLE_COPY for the life of the object.
class SingleCopyMode {
public:
  explicit SingleCopyMode(const char *value) {
    if (const char *old = std::getenv("REDIST_SINGLE_COPY")) {
      had_ = true;
      old_ = old;
    }
    setenv("REDIST_SINGLE_COPY", value, 1);
    redist_scalapack_clear_cache(); // the entries read the environment again at their next call
  }
  SingleCopyMode(const SingleCopyMode &) = delete;
  SingleCopyMode &operator=(const SingleCopyMode &) = delete;
  ~SingleCopyMode() {
    if (had_) {
      setenv("REDIST_SINGLE_COPY", old_.c_str(), 1);
    } else {
      unsetenv("REDIST_SINGLE_COPY");
    }
    redist_scalapack_clear_cache();
  }

private:
  bool had_ = false;
  std::string old_;
};

/// Messages of ten to a few hundred KB (past any eager limit: a send completes only when
/// matched), on the standard scenario's grids: an m x n window (at most 280 x 190).
Scenario large_scenario(std::int64_t m = 280, std::int64_t n = 190) {
  const int p = world_size();
  const int nprow = p % 2 == 0 ? 2 : 1;
  const int npcol = p / nprow;
  std::vector<int> reversed(static_cast<std::size_t>(p));
  for (int k = 0; k < p; ++k)
    reversed[static_cast<std::size_t>(k)] = p - 1 - k;
  Scenario s;
  s.a = errtest::matrix(errtest::init_grid('C', nprow, npcol), 300, 200, 8, 16, 0, 0, 3, 2, 1);
  s.b = errtest::matrix(errtest::map_grid(npcol, nprow, reversed), 290, 210, 16, 8, npcol - 1, 0, 2,
                        5, 2);
  s.ictxt = errtest::init_grid('R', 1, p);
  s.m = m;
  s.n = n;
  return s;
}

long long max_everywhere(long long v) {
  MPI_Allreduce(MPI_IN_PLACE, &v, 1, MPI_LONG_LONG, MPI_MAX, MPI_COMM_WORLD);
  return v;
}

/// An executor of scenario s made as the C API makes one (its own communicator, with
/// MPI_ERRORS_RETURN), and what its executions did.
class TestExecutor {
public:
  /// `transposed`: B := A^T (Transfer::perm {1, 0}; s.a's window is then s.n x s.m).
  TestExecutor(const Scenario &s, redist::Strategy strategy, redist::Index max_memory = 0,
               bool transposed = false)
      : s_(s), transposed_(transposed) {
    MPI_Comm_dup(MPI_COMM_WORLD, &comm_);
    MPI_Comm_set_errhandler(comm_, MPI_ERRORS_RETURN);
    CArgs x(s);
    redist::Transfer t;
    t.src = redist::to_layout(*x.pa);
    t.dst = redist::to_layout(*x.pb);
    t.m = s.m;
    t.n = s.n;
    if (transposed) {
      t.perm = {1, 0};
    }
    redist::RankPlan plan = redist::make_rank_plan(t, world_rank(), world_size());
    redist::ScheduleOptions options;
    options.strategy = strategy;
    options.max_memory = max_memory;
    const redist::ScheduleInputs local =
        redist::all_at_once_local(plan, options.model, sizeof(double));
    double global[2] = {static_cast<double>(local.all_at_once_buffer_max),
                        local.all_at_once_seconds};
    MPI_Allreduce(MPI_IN_PLACE, global, 2, MPI_DOUBLE, MPI_MAX, comm_);
    redist::ScheduleInputs inputs;
    inputs.all_at_once_buffer_max = static_cast<redist::Index>(global[0]);
    inputs.all_at_once_seconds = global[1];
    redist::ScheduleChoice choice;
    why_ = redist::choose_schedule(t, plan, options, inputs, sizeof(double), choice);
    executor_ = redist::make_executor(comm_, std::move(plan), sizeof(double), x.pa->lld, x.pb->lld,
                                      std::move(choice));
  }
  TestExecutor(const TestExecutor &) = delete;
  TestExecutor &operator=(const TestExecutor &) = delete;
  ~TestExecutor() {
    // No message left unmatched (a control message sent twice, a reply nobody waits for).
    MPI_Barrier(comm_);
    int pending = 0;
    MPI_Status status;
    MPI_Iprobe(MPI_ANY_SOURCE, MPI_ANY_TAG, comm_, &pending, &status);
    EXPECT_EQ(pending, 0) << "a message from rank " << status.MPI_SOURCE << " with tag "
                          << status.MPI_TAG << " was never received";
    executor_.reset();
    MPI_Comm_free(&comm_);
  }

  redist::Executor &operator*() { return *executor_; }
  redist::Executor *operator->() { return executor_.get(); }
  [[nodiscard]] const std::string &why_not() const { return why_; }
  /// Executions from now on take A from a shared array (redist_alloc's memory, which its
  /// receivers map and copy from), if the system gives one.
  void share_source() { shared_source_ = true; }

  /// Execute from A(a_salt) into a fresh B(b_salt); "" if it returned, else its error. `wrong`:
  /// elements of B that differ from the oracle (bit for bit). With `alpha_beta`: B := alpha A
  /// + beta B (op N) instead of the copy, checked against check_b_after_operation.
  std::string run(int a_salt, int b_salt, std::int64_t &wrong, std::string &report,
                  const std::array<double, 2> *alpha_beta = nullptr) {
    Data<double> d(s_, a_salt, b_salt);
    const std::size_t a_bytes = d.a.size() * sizeof(double);
    std::unique_ptr<void, void (*)(void *)> shared(
        shared_source_ && a_bytes > 0 ? sc::allocate_shared_array(a_bytes) : nullptr,
        [](void *memory) { sc::free_shared_array(memory); });
    const double *a = d.a.data();
    if (shared) {
      std::memcpy(shared.get(), d.a.data(), a_bytes);
      a = static_cast<const double *>(shared.get());
    }
    std::string error;
    try {
      if (alpha_beta != nullptr) {
        const redist::Operation op = redist::Operation::make(redist::Scalar::f64, false,
                                                             &(*alpha_beta)[0], &(*alpha_beta)[1]);
        executor_->execute(a, d.b.data(), op);
      } else {
        executor_->execute(a, d.b.data());
      }
    } catch (const redist::Error &e) {
      error = e.what();
    }
    if (alpha_beta != nullptr) {
      wrong = check_b_after_operation(s_.a, s_.b, d.lb, d.b, s_.m, s_.n, a_salt, b_salt,
                                      *alpha_beta, report, transposed_);
      return error;
    }
    std::int64_t lost = 0;
    wrong =
        check_b_after_fault(s_.a, s_.b, d.lb, d.b, s_.m, s_.n, a_salt, b_salt, -1, lost, report);
    return error;
  }

private:
  Scenario s_;
  bool transposed_ = false;
  bool shared_source_ = false;
  MPI_Comm comm_ = MPI_COMM_NULL;
  std::unique_ptr<redist::Executor> executor_;
  std::string why_;
};

/// One execution with `fault` armed on the processes of `faulty` (the others run normally):
/// every process must return with B right (the failure repaired) and nothing left behind.
/// Returns whether the fault fired on any process.
bool expect_repaired(TestExecutor &x, const faults::Fault &fault, const std::vector<int> &faulty,
                     int salt, const std::string &where) {
  const bool here = std::find(faulty.begin(), faulty.end(), world_rank()) != faulty.end();
  const long long before = faults::injected();
  if (here) faults::arm(fault);
  mpitest::watchdog_arm(where);
  std::int64_t wrong = 0;
  std::string report;
  const std::string error = x.run(salt, salt + 1, wrong, report);
  mpitest::watchdog_disarm();
  faults::disarm();
  const bool fired = sum_everywhere(faults::injected() - before) > 0;
  EXPECT_EQ(error, "") << where << "a single failed call is repaired";
  EXPECT_EQ(wrong, 0) << where << "B after the repaired execution:\n" << report;
  EXPECT_EQ(faults::live_requests(), 0) << where << "requests left behind";
  return fired;
}

const char *call_name(unsigned call) {
  switch (call) {
  case faults::isend:
    return "MPI_Isend";
  case faults::irecv:
    return "MPI_Irecv";
  case faults::wait_send:
    return "wait of a send";
  default:
    return "wait of a receive";
  }
}

// Every point-to-point call of the executor, on every tag, at every position of an execution,
// made to fail once on one process (0, the last) or on two at once: no hang (watchdog), every
// process returns with B right (the repair), no request left, and the next execution works.
// Also while the plan is made: the exchange of identities (address tag) and answers (reply
// tag) of the ways, where a failure anywhere makes every message sent (agreed), and the plan
// works. Catches a failed Irecv of data (the peer's send was never matched: a hang), a failed
// identity or address (the reply was never posted: a hang) and a failed answer (the two ends
// disagreed on the way: a hang).
TEST(Faults, EveryCallFailingOnceAnywhereIsRepaired) {
  if (world_size() < 2) GTEST_SKIP() << "needs two processes";
  const Scenario s = large_scenario(150, 110);
  const int last = world_size() - 1;
  const std::vector<std::vector<int>> faulty_sets = {{0}, {last}, {0, last}};
  const std::pair<const char *, int> tag_kinds[] = {
      {"data", 0}, {"address/identity", redist::kAddressTag}, {"reply/answer", redist::kReplyTag}};
  const unsigned calls[] = {faults::isend, faults::irecv, faults::wait_send, faults::wait_recv};
  int fired_total = 0;
  // REDIST_FAULT_SWEEP=quick (valgrind): one mode, all at once, process 0 only.
  const char *sweep = std::getenv("REDIST_FAULT_SWEEP");
  const bool quick = sweep != nullptr && std::string(sweep) == "quick";
  std::vector<const char *> modes = {"always", "mapped", "never"};
  std::vector<redist::Strategy> strategies = {redist::Strategy::all_at_once,
                                              redist::Strategy::stepwise};
  std::vector<std::vector<int>> sets = faulty_sets;
  if (quick) {
    modes = {"always"};
    strategies = {redist::Strategy::all_at_once};
    sets = {{0}};
  }
  // "never" last: a process that first plans under it keeps its identity unreadable.
  for (const char *mode : modes) {
    const SingleCopyMode env(mode);
    for (const auto strategy : strategies) {
      for (const auto &[tag_name, offset] : tag_kinds) {
        for (const unsigned call : calls) {
          for (const std::vector<int> &faulty : sets) {
            // Execution 0: the fault while the plan is made. Without single copy the second
            // execution has the first's messages.
            const int executions = std::string(mode) == "never" ? 1 : 2;
            for (int execution = 0; execution <= executions; ++execution) {
              for (long long skip = 0; skip < 12; ++skip) {
                faults::Fault f;
                f.calls = call;
                f.tags = tags_of(offset);
                f.skip = skip;
                f.count = 1;
                const bool here =
                    std::find(faulty.begin(), faulty.end(), world_rank()) != faulty.end();
                const long long injected_before = faults::injected();
                if (execution == 0 && here) faults::arm(f);
                if (execution == 0) mpitest::watchdog_arm("a fault while the plan is made");
                TestExecutor x(s, strategy, strategy == redist::Strategy::stepwise ? 40000 : 0);
                if (execution == 0) mpitest::watchdog_disarm();
                faults::disarm();
                ASSERT_EQ(x.why_not(), "");
                const std::string where =
                    std::string("[REDIST_SINGLE_COPY=") + mode + ", " +
                    (strategy == redist::Strategy::all_at_once ? "all-at-once" : "stepwise") +
                    ", " + call_name(call) + " on the " + tag_name + " tag, occurrence " +
                    std::to_string(skip + 1) +
                    (execution == 0 ? std::string(" while the plan is made")
                                    : " of execution " + std::to_string(execution)) +
                    ", on " + std::to_string(faulty.size()) + " process(es)] ";
                std::int64_t wrong = 0;
                std::string report;
                if (execution == 2) {
                  EXPECT_EQ(x.run(1, 2, wrong, report), "") << where;
                }
                bool fired = false;
                if (execution == 0) {
                  fired = sum_everywhere(faults::injected() - injected_before) > 0;
                  EXPECT_EQ(faults::live_requests(), 0) << where << "requests left behind";
                  EXPECT_EQ(x.run(3, 4, wrong, report), "") << where << "the plan made";
                  EXPECT_EQ(wrong, 0) << where << "B:\n" << report;
                } else {
                  fired = expect_repaired(x, f, faulty, 3, where);
                }
                EXPECT_EQ(x.run(5, 6, wrong, report), "") << where << "the next execution";
                EXPECT_EQ(wrong, 0) << where << "B of the next execution:\n" << report;
                if (::testing::Test::HasFailure()) return;
                if (!fired) break; // past the last such call of the execution
                ++fired_total;
              }
            }
          }
        }
      }
    }
  }
  EXPECT_GT(fired_total, quick ? 10 : 100) << "the sweep injected too few faults to mean anything";
  mpitest::print0("  " + std::to_string(fired_total) + " positions swept\n");
}

// An MPI_Waitany of the executor that fails naming no request and completing nothing, at each
// occurrence of an execution, on process 0 or the last, all at once and stepwise, with and
// without single-copy ways: every process returns success with B right, nothing is left, and
// the next execution works. Before: that process abandoned the requests still pending and
// left its B half-written while the others succeeded.
TEST(Faults, WaitanyFailingWithoutNamingARequest) {
  if (world_size() < 2) GTEST_SKIP() << "needs two processes";
  const Scenario s = large_scenario(150, 110);
  const int last = world_size() - 1;
  int fired_total = 0;
  for (const char *mode : {"always", "never"}) {
    const SingleCopyMode env(mode);
    for (const auto strategy : {redist::Strategy::all_at_once, redist::Strategy::stepwise}) {
      for (const int faulty : {0, last}) {
        TestExecutor x(s, strategy, strategy == redist::Strategy::stepwise ? 40000 : 0);
        ASSERT_EQ(x.why_not(), "");
        for (long long skip = 0; skip < 40; ++skip) {
          faults::Fault f;
          f.calls = faults::waitany_unnamed;
          f.tags = tags_of(0);
          f.skip = skip;
          f.count = 1;
          const std::string where =
              std::string("[REDIST_SINGLE_COPY=") + mode + ", " +
              (strategy == redist::Strategy::all_at_once ? "all-at-once" : "stepwise") +
              ", MPI_Waitany failing unnamed at its occurrence " + std::to_string(skip + 1) +
              " on process " + std::to_string(faulty) + "] ";
          const bool fired = expect_repaired(x, f, {faulty}, 7, where);
          std::int64_t wrong = 0;
          std::string report;
          EXPECT_EQ(x.run(8, 9, wrong, report), "") << where << "the next execution";
          EXPECT_EQ(wrong, 0) << where << "B of the next execution:\n" << report;
          if (::testing::Test::HasFailure()) return;
          if (!fired) break;
          ++fired_total;
        }
      }
    }
  }
  EXPECT_GT(fired_total, 8) << "the sweep injected too few faults to mean anything";
  mpitest::print0("  " + std::to_string(fired_total) + " unnamed failures swept\n");
}

// As first reported: under the ScaLAPACK entry, an MPI_Irecv of a data message of one
// process returns an error and posts nothing. Before: that process reported the error and its
// peer's send was never matched (the run never ended). Now: retried, every process succeeds.
TEST(Faults, ScalapackEntryOneIrecvFailingOnOneProcess) {
  if (world_size() < 2) GTEST_SKIP() << "needs two processes";
  const Scenario s = large_scenario();
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
  for (const bool faulty : {true, false}) {
    Data<double> d(s, 5, 7);
    const std::array<int, 9> desca = mpitest::descriptor(s.a, ctxt_a, d.la);
    const std::array<int, 9> descb = mpitest::descriptor(s.b, ctxt_b, d.lb);
    if (faulty && world_rank() == 0) {
      faults::Fault f;
      f.calls = faults::irecv;
      f.tags = tags_of(0);
      f.count = 1;
      faults::arm(f);
    }
    errtest::StderrCapture capture;
    mpitest::watchdog_arm("[PDGEMR2D, one MPI_Irecv of data fails on process 0]");
    redist_pdgemr2d_(&m, &n, d.a.data(), &ia, &ja, desca.data(), d.b.data(), &ib, &jb, descb.data(),
                     &ictxt);
    mpitest::watchdog_disarm();
    faults::disarm();
    const std::string printed = capture.finish();
    EXPECT_EQ(redist_scalapack_last_status(), REDIST_SUCCESS) << printed;
    EXPECT_EQ(faults::live_requests(), 0);
    std::int64_t lost = 0;
    std::string report;
    EXPECT_EQ(check_b_after_fault(s.a, s.b, d.lb, d.b, s.m, s.n, 5, 7, -1, lost, report), 0)
        << report;
  }
  mpitest::free_context(ctxt_a);
  mpitest::free_context(ctxt_b);
  mpitest::free_context(ictxt);
}

// PDGEADD into a C replicated over the process rows (RSRC_ = -1: a batch writing every copy,
// its operations on the caller's two arrays), A distributed over the rows of the same P x 1
// grid: one MPI_Irecv of data, or one completion, failing on process 0 is repaired; every copy
// of C is right (C := 2 A + C / 2, exact in doubles), and without a fault too; the messages sent
// through MPI and mapped.
TEST(Faults, ScalapackEntryIntoAReplicatedC) {
  if (world_size() < 2) GTEST_SKIP() << "needs two processes";
  const int np = world_size();
  int ctxt = 0;
  Cblacs_get(0, 0, &ctxt);
  Cblacs_gridinit(&ctxt, "C", np, 1);
  int nprow = 0, npcol = 0, myrow = 0, mycol = 0;
  Cblacs_gridinfo(ctxt, &nprow, &npcol, &myrow, &mycol);
  const int m = 61, n = 37, mb = 3, one = 1, rsrc = 0;
  const int local_rows = numroc_(&m, &mb, &myrow, &rsrc, &np);
  const int lda = std::max(1, local_rows);
  const std::array<int, 9> desca = {1, ctxt, m, n, mb, mb, 0, 0, lda};
  const std::array<int, 9> descc = {1, ctxt, m, n, mb, mb, -1, 0, m};
  const auto a_value = [](int i, int j) { return static_cast<double>(i * 100 + j); };
  const auto c_value = [](int i, int j) { return static_cast<double>(j * 1000 - i); };
  std::vector<double> a(static_cast<std::size_t>(lda) * n);
  for (int j = 0; j < n; ++j)
    for (int li = 0; li < local_rows; ++li) {
      const int gi = (li / mb) * mb * np + myrow * mb + li % mb; // ScaLAPACK's INDXL2G
      a[static_cast<std::size_t>(li + j * lda)] = a_value(gi, j);
    }
  const double alpha = 2, beta = 0.5;
  for (const char *mode : {"never", "mapped"}) {
    const SingleCopyMode single_copy(mode);
    for (const unsigned calls : {unsigned{faults::irecv}, unsigned{faults::completions}, 0U}) {
      std::vector<double> c(static_cast<std::size_t>(m) * n);
      for (int j = 0; j < n; ++j)
        for (int i = 0; i < m; ++i)
          c[static_cast<std::size_t>(i + j * m)] = c_value(i, j);
      redist_scalapack_clear_cache();
      if (calls != 0 && world_rank() == 0) {
        faults::Fault f;
        f.calls = calls;
        f.tags = tags_of(0);
        f.count = 1;
        faults::arm(f);
      }
      const long long injected_before = faults::injected();
      errtest::StderrCapture capture;
      mpitest::watchdog_arm("[PDGEADD into a replicated C, one call failing on process 0]");
      redist_pdgeadd_("N", &m, &n, &alpha, a.data(), &one, &one, desca.data(), &beta, c.data(),
                      &one, &one, descc.data());
      mpitest::watchdog_disarm();
      faults::disarm();
      const std::string printed = capture.finish();
      EXPECT_EQ(redist_scalapack_last_status(), REDIST_SUCCESS) << printed;
      EXPECT_EQ(faults::live_requests(), 0);
      long long wrong = 0;
      for (int j = 0; j < n; ++j)
        for (int i = 0; i < m; ++i)
          wrong += c[static_cast<std::size_t>(i + j * m)] !=
                   beta * c_value(i, j) + alpha * a_value(i, j);
      EXPECT_EQ(wrong, 0) << mode << ", calls " << calls;
      // Through MPI, the fault was injected (mapped, the messages may take no MPI call it
      // watches).
      if (world_rank() == 0 && std::string(mode) == "never") {
        EXPECT_EQ(faults::injected() - injected_before, calls != 0 ? 1 : 0) << "calls " << calls;
      }
    }
  }
  Cblacs_gridexit(ctxt);
}

// A C API plan into a B replicated over the process rows (b.rsrc = -1: a batch of one operation
// per copy, on the caller's two arrays): one completion of a data receive failing on process 0
// in the first execution is repaired (every copy right), and the plan, made anew at the next
// execution from its parts, is right twice more; through MPI and mapped.
/// A C API plan into a B replicated over the process rows (`batch`: a batch of two operations,
/// that one and a copy of A into a second array laid out as A), one receive failing once in its
/// first execution: repaired, the plan made anew from its parts, right twice more.
void replicated_b_made_anew(bool batch) {
  const int np = world_size();
  const int me = world_rank();
  const std::int64_t m = 23, n = 9, mb = 2;
  std::vector<int> ranks(static_cast<std::size_t>(np));
  for (int r = 0; r < np; ++r)
    ranks[static_cast<std::size_t>(r)] = r;
  std::int64_t local_rows = 0;
  for (std::int64_t g = 0; g < m; ++g)
    local_rows += (g / mb) % np == me ? 1 : 0;
  const std::int64_t lda = std::max<std::int64_t>(1, local_rows);
  const redist_layout a = {m, n, mb, mb, np, 1, 0, 0, ranks.data(), 0, 0, lda};
  const redist_layout b = {m, n, 4, 4, np, 1, -1, 0, ranks.data(), 0, 0, m};
  const redist_batch_op ops[2] = {{REDIST_OP_N, m, n, REDIST_DOUBLE, &a, &b, REDIST_REGION_FULL},
                                  {REDIST_OP_N, m, n, REDIST_DOUBLE, &a, &a, REDIST_REGION_FULL}};
  const std::string what = batch ? "[C API batch into a replicated B, a receive failing once] "
                                 : "[C API plan into a replicated B, a receive failing once] ";
  for (const char *mode : {"never", "mapped"}) {
    const SingleCopyMode single_copy(mode);
    redist_plan plan = nullptr;
    ASSERT_EQ(batch ? redist_plan_create_batch(MPI_COMM_WORLD, 2, ops, nullptr, &plan)
                    : redist_plan_create(MPI_COMM_WORLD, m, n, REDIST_DOUBLE, &a, &b,
                                         REDIST_REGION_FULL, 0, &plan),
              REDIST_SUCCESS)
        << what << redist_last_error();
    for (int execution = 0; execution < 3; ++execution) {
      std::vector<double> av(static_cast<std::size_t>(lda * n));
      for (std::int64_t j = 0; j < n; ++j)
        for (std::int64_t li = 0; li < local_rows; ++li) {
          const std::int64_t gi = (li / mb) * mb * np + me * mb + li % mb;
          av[static_cast<std::size_t>(li + j * lda)] =
              static_cast<double>(gi * 100 + j + execution);
        }
      std::vector<double> bv(static_cast<std::size_t>(m * n), -1.0);
      std::vector<double> copy(av.size(), -1.0);
      if (execution == 0 && me == 0) {
        faults::Fault f;
        f.calls = faults::wait_recv;
        f.tags = tags_of(0);
        f.count = 1;
        faults::arm(f);
      }
      const long long injected_before = faults::injected();
      mpitest::watchdog_arm(what);
      const void *as[2] = {av.data(), av.data()};
      void *bs[2] = {bv.data(), copy.data()};
      const int status = batch ? redist_plan_execute_batch(plan, nullptr, as, nullptr, bs)
                               : redist_plan_execute(plan, av.data(), bv.data());
      mpitest::watchdog_disarm();
      faults::disarm();
      EXPECT_EQ(status, REDIST_SUCCESS) << what << redist_last_error();
      // Through MPI the fault was injected (mapped, no MPI call it watches may come).
      if (execution == 0 && me == 0 && std::string(mode) == "never") {
        EXPECT_EQ(faults::injected() - injected_before, 1) << what;
      }
      long long wrong = 0;
      for (std::int64_t j = 0; j < n; ++j)
        for (std::int64_t i = 0; i < m; ++i)
          wrong += bv[static_cast<std::size_t>(i + j * m)] !=
                   static_cast<double>(i * 100 + j + execution);
      if (batch) {
        for (std::int64_t j = 0; j < n; ++j)
          for (std::int64_t li = 0; li < local_rows; ++li)
            wrong += copy[static_cast<std::size_t>(li + j * lda)] !=
                     av[static_cast<std::size_t>(li + j * lda)];
      }
      EXPECT_EQ(wrong, 0) << what << mode << ", execution " << execution;
    }
    EXPECT_EQ(faults::live_requests(), 0) << what;
    redist_plan_destroy(&plan);
  }
}

TEST(Faults, CApiPlanIntoAReplicatedBMadeAnew) {
  if (world_size() < 2) GTEST_SKIP() << "needs two processes";
  replicated_b_made_anew(false);
}

TEST(Faults, CApiBatchIntoAReplicatedBMadeAnew) {
  if (world_size() < 2) GTEST_SKIP() << "needs two processes";
  replicated_b_made_anew(true);
}

/// Single-copy messages of this process (receives, sends) summed over the processes.
std::pair<long long, long long> single_copy_totals(redist::Executor &x) {
  return {sum_everywhere(static_cast<long long>(x.single_copy_receives())),
          sum_everywhere(static_cast<long long>(x.single_copy_sends()))};
}

// A single-copy read (or the copy from a mapped buffer, or, `mapped` from a shared source
// array, from that array's mapping) that fails on one process, once: the injected failure
// scribbles over what the read would have written. The message is sent again
// through MPI for that execution and unpacked over it, every process succeeds with B right,
// and every process learns that the execution failed somewhere (failed_anywhere(): its caller
// makes the plan anew). The plan itself does not change: its ways stay as they were decided
// when it was made, and the next execution reads again.
TEST(Faults, FailedSingleCopyReadIsRepairedThroughMpi) {
  if (world_size() < 2) GTEST_SKIP() << "needs two processes";
  const Scenario s = large_scenario();
  const int last = world_size() - 1;
  struct Case {
    const char *way;
    sc::Injected what;
    bool shared_source;
  };
  const Case cases[] = {{"direct", sc::Injected::read, false},
                        {"bounced", sc::Injected::read, false},
                        {"read-packed", sc::Injected::read, false},
                        {"mapped", sc::Injected::mapped, false},
                        {"mapped", sc::Injected::mapped, true}};
  for (const auto &[way, what, shared_source] : cases) {
    const SingleCopyMode env(way);
    for (const auto strategy : {redist::Strategy::all_at_once, redist::Strategy::stepwise}) {
      const std::string where =
          std::string("[REDIST_SINGLE_COPY=") + way + (shared_source ? ", A shared" : "") +
          (strategy == redist::Strategy::all_at_once ? ", all-at-once] " : ", stepwise] ");
      // Each read of the second execution in turn (a message read in several batches or
      // chunks fails after part of it was written).
      for (long long skip = 0; skip < 16; ++skip) {
        TestExecutor x(s, strategy, strategy == redist::Strategy::stepwise ? 40000 : 0);
        if (shared_source) x.share_source();
        std::int64_t wrong = 0;
        std::string report;
        ASSERT_EQ(x.run(1, 2, wrong, report), "") << where;
        ASSERT_EQ(wrong, 0) << where << report;
        const auto before = single_copy_totals(*x);
        if (before.first == 0) {
          GTEST_SKIP() << "cross-memory reads are not permitted between these processes";
        }
        if (shared_source) { // nothing packed: the receivers copied from the shared arrays
          EXPECT_GT(sum_everywhere(static_cast<long long>(x->array_copies())), 0) << where;
        }
        const long long reads_on_last = max_everywhere(
            world_rank() == last ? static_cast<long long>(x->single_copy_receives()) : 0);
        if (world_rank() == last) sc::inject_failures(what, skip, 1);
        const long long injected_before = sc::injected_failures(what);
        const std::string at = where + "failure " + std::to_string(skip + 1) + ": ";
        mpitest::watchdog_arm(at + "a failed read");
        EXPECT_EQ(x.run(3, 4, wrong, report), "") << at << "the failed read is repaired";
        mpitest::watchdog_disarm();
        sc::inject_failures(what, 0, 0);
        EXPECT_EQ(wrong, 0) << at << "B after the repaired read:\n" << report;
        const long long failed = sc::injected_failures(what) - injected_before;
        const long long fired = max_everywhere(failed);
        EXPECT_EQ(failed, world_rank() == last ? fired : 0) << at << "injected failures";
        if (skip == 0) {
          EXPECT_EQ(fired, reads_on_last > 0 ? 1 : 0) << at << "no read failed";
        }
        EXPECT_EQ(sum_everywhere(static_cast<long long>(x->repaired_messages())), fired)
            << at << "messages repaired";
        EXPECT_EQ(x->failed_anywhere(), fired != 0) << at << "the failure agreed everywhere";
        const auto after = single_copy_totals(*x);
        EXPECT_EQ(after.first, before.first) << at << "single-copy receives";
        EXPECT_EQ(after.second, before.second) << at << "single-copy sends";
        EXPECT_EQ(x.run(5, 6, wrong, report), "") << at << "the next execution";
        EXPECT_EQ(wrong, 0) << at << report;
        EXPECT_EQ(sum_everywhere(static_cast<long long>(x->repaired_messages())), 0) << at;
        EXPECT_FALSE(x->failed_anywhere()) << at << "the next execution";
        if (fired == 0 || ::testing::Test::HasFailure()) break;
      }
    }
  }
}

// Operation plans (B := alpha op(A) + beta B) combine what they read into B. A read that fails
// after some of its bounce buffers were combined, or a message of which some chunks were
// combined before another failed, is repaired by sending the whole message again: the repair
// must combine only the elements not combined yet (before the fix, beta != 0 made the others
// wrong). op N: messages of several bounce buffers (whole columns of 512 elements: one
// process_vm_readv per bounce buffer); on the last process the first read works, the second
// fails (the middle of its first message), or the first fails (nothing combined); stepwise,
// chunks of the packed message. op T (Pieces::read_transposed; 2 processes): a message of 256
// of B's rows (A's columns) by 400 of its columns is read in rectangles of 128 rows by 256
// columns, so the second read fails after the first rectangle -- the upper half of 256
// columns -- was combined (not a prefix of the message), the third after a whole block of
// columns. Sent
// through MPI (REDIST_SINGLE_COPY=never), stepwise: the second chunk's receive fails after the
// first chunk was combined.
TEST(Faults, FailedReadOfAnOperationCombinesEachElementOnce) {
  if (world_size() < 2) GTEST_SKIP() << "needs two processes";
  const int p = world_size();
  std::vector<int> reversed(static_cast<std::size_t>(p));
  for (int k = 0; k < p; ++k)
    reversed[static_cast<std::size_t>(k)] = p - 1 - k;
  struct Operation {
    Scenario s;
    bool transposed;
    long long failures; // which reads fail in turn: the first, the second, ...
    std::vector<const char *> ways;
  };
  Operation ops[2];
  ops[0].s.a = errtest::matrix(errtest::init_grid('R', 1, p), 512, 1600, 512, 8, 0, 0, 1, 1, 0);
  ops[0].s.b =
      errtest::matrix(errtest::map_grid(1, p, reversed), 512, 1600, 512, 10, 0, 1, 1, 1, 3);
  ops[0].s.n = 1600;
  ops[0].transposed = false;
  ops[0].failures = 2;
  ops[0].ways = {"direct", "bounced", "read-packed", "never"};
  ops[1].s.a = errtest::matrix(errtest::init_grid('R', 1, p), 800, 512, 800, 8, 0, 0, 1, 1, 2);
  ops[1].s.b =
      errtest::matrix(errtest::map_grid(1, p, reversed), 512, 800, 512, 100, 0, 1, 1, 1, 3);
  ops[1].s.n = 800;
  ops[1].transposed = true;
  ops[1].failures = 3;
  ops[1].ways = {"direct", "read-packed"}; // bounced reads as direct does; sent as for op N
  const std::array<double, 2> alpha_beta{-2.0, 0.5};
  const int last = p - 1;
  for (Operation &op : ops) {
    Scenario &s = op.s;
    s.ictxt = errtest::init_grid('R', 1, p);
    s.m = 512;
    for (const char *way : op.ways) {
      const bool sent = std::string(way) == "never";
      const SingleCopyMode env(way);
      for (const auto strategy : {redist::Strategy::all_at_once, redist::Strategy::stepwise}) {
        if (sent && strategy == redist::Strategy::all_at_once) continue; // whole or nothing
        for (long long skip = 0; skip < op.failures; ++skip) {
          const std::string where =
              std::string(op.transposed ? "[op T, " : "[op N, ") + "REDIST_SINGLE_COPY=" + way +
              (strategy == redist::Strategy::all_at_once ? ", all-at-once" : ", stepwise") +
              ", failure " + std::to_string(skip + 1) + "] ";
          TestExecutor x(s, strategy, strategy == redist::Strategy::stepwise ? 40000 : 0,
                         op.transposed);
          std::int64_t wrong = 0;
          std::string report;
          ASSERT_EQ(x.run(1, 2, wrong, report, &alpha_beta), "") << where;
          ASSERT_EQ(wrong, 0) << where << report;
          if (!sent && sum_everywhere(static_cast<long long>(x->single_copy_receives())) == 0) {
            GTEST_SKIP() << "cross-memory reads are not permitted between these processes";
          }
          const long long before =
              sent ? faults::injected() : sc::injected_failures(sc::Injected::read);
          if (world_rank() == last) {
            if (sent) {
              faults::Fault f;
              f.calls = faults::wait_recv;
              f.tags = tags_of(0);
              f.skip = skip + 1; // a later chunk: the first was combined
              f.count = 1;
              faults::arm(f);
            } else {
              sc::inject_failures(sc::Injected::read, skip, 1);
            }
          }
          mpitest::watchdog_arm(where + "a failed read of an operation");
          EXPECT_EQ(x.run(3, 4, wrong, report, &alpha_beta), "") << where << "repaired";
          mpitest::watchdog_disarm();
          faults::disarm();
          sc::inject_failures(sc::Injected::read, 0, 0);
          const long long fired = sum_everywhere(
              (sent ? faults::injected() : sc::injected_failures(sc::Injected::read)) - before);
          EXPECT_EQ(fired, 1) << where << "failures injected";
          EXPECT_EQ(sum_everywhere(static_cast<long long>(x->repaired_messages())), 1)
              << where << "messages repaired";
          EXPECT_EQ(wrong, 0) << where << "B after the repair:\n" << report;
          EXPECT_EQ(x.run(5, 6, wrong, report, &alpha_beta), "") << where << "the next execution";
          EXPECT_EQ(wrong, 0) << where << report;
          if (::testing::Test::HasFailure()) return;
        }
      }
    }
  }
}

// An N-d plan's oracle, apart from src/: which process coordinate owns global index g along a
// dimension and at which local index (MPI_Type_create_darray's definitions; BLOCK with the
// default darg, CYCLIC(k), NONE).
struct NdDim {
  int distrib;
  std::int64_t k; // CYCLIC's block
  int procs;
  [[nodiscard]] int owner(std::int64_t g, std::int64_t n) const {
    if (distrib == MPI_DISTRIBUTE_BLOCK) return static_cast<int>(g / ((n + procs - 1) / procs));
    if (distrib == MPI_DISTRIBUTE_CYCLIC) return static_cast<int>((g / k) % procs);
    return 0;
  }
  [[nodiscard]] std::int64_t local(std::int64_t g, std::int64_t n) const {
    if (distrib == MPI_DISTRIBUTE_BLOCK) return g % ((n + procs - 1) / procs);
    if (distrib == MPI_DISTRIBUTE_CYCLIC) return (g / (k * procs)) * k + g % k;
    return g;
  }
};

/// This process's local array of a 3-D layout (dense, C order, rank = row-major grid
/// position), each element holding its global linear index.
std::vector<double> nd_local(const std::array<NdDim, 3> &l, const std::array<std::int64_t, 3> &n,
                             int rank) {
  std::array<int, 3> c{};
  for (int d = 2, r = rank; d >= 0; --d) {
    c[static_cast<std::size_t>(d)] = r % l[static_cast<std::size_t>(d)].procs;
    r /= l[static_cast<std::size_t>(d)].procs;
  }
  std::array<std::int64_t, 3> ext{};
  for (std::size_t d = 0; d < 3; ++d)
    for (std::int64_t g = 0; g < n[d]; ++g)
      ext[d] += l[d].owner(g, n[d]) == c[d] ? 1 : 0;
  std::vector<double> out(static_cast<std::size_t>(ext[0] * ext[1] * ext[2]), -1.0);
  for (std::int64_t g0 = 0; g0 < n[0]; ++g0)
    for (std::int64_t g1 = 0; g1 < n[1]; ++g1)
      for (std::int64_t g2 = 0; g2 < n[2]; ++g2) {
        if (l[0].owner(g0, n[0]) != c[0] || l[1].owner(g1, n[1]) != c[1] ||
            l[2].owner(g2, n[2]) != c[2])
          continue;
        const std::int64_t at =
            (l[0].local(g0, n[0]) * ext[1] + l[1].local(g1, n[1])) * ext[2] + l[2].local(g2, n[2]);
        out[static_cast<std::size_t>(at)] = static_cast<double>((g0 * n[1] + g1) * n[2] + g2);
      }
  return out;
}

// N-d plans (redist_nd_plan_create) read their messages in a single copy as 2-D
// plans do, under each way REDIST_SINGLE_COPY forces, and a read (or mapped copy) failing on
// one process after the negotiation is repaired as there: sent again through MPI, B right,
// the message sent from then on at both ends.
// A 3-D layout of extents n as redist_darray (C order), with the arrays it points to.
struct NdDarray {
  std::array<int, 3> distribs{}, psizes{};
  std::array<std::int64_t, 3> dargs{};
  redist_darray view{};
  NdDarray(const std::array<std::int64_t, 3> &n, const std::array<NdDim, 3> &l) {
    for (std::size_t d = 0; d < 3; ++d) {
      distribs[d] = l[d].distrib;
      dargs[d] = l[d].distrib == MPI_DISTRIBUTE_CYCLIC ? l[d].k : MPI_DISTRIBUTE_DFLT_DARG;
      psizes[d] = l[d].procs;
    }
    view.ndims = 3;
    view.gsizes = n.data();
    view.distribs = distribs.data();
    view.dargs = dargs.data();
    view.psizes = psizes.data();
    view.order = MPI_ORDER_C;
  }
  NdDarray(const NdDarray &) = delete;
  NdDarray &operator=(const NdDarray &) = delete;
};

TEST(Faults, NdTwoPhasePlans) {
  // An N-d plan in two phases (CYCLIC(2) -> CYCLIC(3) along the first dimension, through
  // CYCLIC(6) or CYCLIC(1)), a link of the first phase failing: reported at both of its ends
  // naming the peer; the failure is agreed before the second phase, so every other process
  // fails too and no B is written (no process succeeds with a stale intermediate); no request
  // is left behind, and the plan runs right again.
  if (world_size() < 2) GTEST_SKIP() << "needs two processes";
  const int p = world_size();
  const std::array<std::int64_t, 3> n{37, 4, 5};
  const std::array<NdDim, 3> la{
      {{MPI_DISTRIBUTE_CYCLIC, 2, p}, {MPI_DISTRIBUTE_BLOCK, 0, 1}, {MPI_DISTRIBUTE_NONE, 0, 1}}};
  const std::array<NdDim, 3> lb{
      {{MPI_DISTRIBUTE_CYCLIC, 3, p}, {MPI_DISTRIBUTE_NONE, 0, 1}, {MPI_DISTRIBUTE_NONE, 0, 1}}};
  NdDarray a_view(n, la);
  NdDarray b_view(n, lb);
  const std::vector<double> a = nd_local(la, n, world_rank());
  const std::vector<double> want = nd_local(lb, n, world_rank());
  const redist_options multiphase = with_schedule(REDIST_SCHEDULE_MULTIPHASE);
  for (const faults::Mode mode : {faults::Mode::post, faults::Mode::completion}) {
    const std::string where = std::string("[N-d multiphase, ") + mode_name(mode) + "] ";
    redist_plan plan = nullptr;
    ASSERT_EQ(redist_nd_plan_create(MPI_COMM_WORLD, REDIST_DOUBLE, &a_view.view, &b_view.view,
                                    &multiphase, &plan),
              REDIST_SUCCESS)
        << where << redist_last_error();
    redist_plan_info info{};
    ASSERT_EQ(redist_plan_get_info(plan, &info), REDIST_SUCCESS);
    ASSERT_EQ(info.schedule, REDIST_SCHEDULE_MULTIPHASE) << where;
    std::vector<double> b(want.size(), -2.0);
    const Link l{0, 1, true}; // first phase: CYCLIC(2)'s process 0 sends 8, 9 to CYCLIC(6)'s 1
    const long long injected_before = faults::injected();
    const int peer = l.failing_peer();
    if (peer >= 0) faults::arm(link_fault(peer, mode));
    mpitest::watchdog_arm(where + "execution with a failed link");
    const int status = redist_plan_execute(plan, a.data(), b.data());
    mpitest::watchdog_disarm();
    faults::disarm();
    if (peer >= 0) {
      expect_fault_outcome(where, status, redist_last_error(), l, "redist execute: ");
    } else {
      EXPECT_EQ(status, REDIST_ERR_MPI) << where << redist_last_error();
      EXPECT_NE(std::string(redist_last_error()).find("the first phase failed on another process"),
                std::string::npos)
          << where << redist_last_error();
    }
    EXPECT_TRUE(std::all_of(b.begin(), b.end(), [](double v) { return v == -2.0; }))
        << where << "B written although the first phase failed";
    EXPECT_EQ(faults::injected() > injected_before, peer >= 0) << where << "faults injected";
    EXPECT_EQ(faults::live_requests(), 0) << where << "requests left behind";
    std::fill(b.begin(), b.end(), -2.0);
    EXPECT_EQ(redist_plan_execute(plan, a.data(), b.data()), REDIST_SUCCESS)
        << where << "the same plan without the fault: " << redist_last_error();
    long long wrong = 0;
    for (std::size_t e = 0; e < b.size(); ++e)
      wrong += std::bit_cast<std::uint64_t>(b[e]) != std::bit_cast<std::uint64_t>(want[e]) ? 1 : 0;
    EXPECT_EQ(sum_everywhere(wrong), 0) << where << "B of the execution without the fault";
    EXPECT_EQ(faults::live_requests(), 0) << where << "requests left behind";
    EXPECT_EQ(redist_plan_destroy(&plan), REDIST_SUCCESS) << where << redist_last_error();
  }
}

TEST(Faults, NdFailedSingleCopyReadIsRepairedThroughMpi) {
  if (world_size() < 2) GTEST_SKIP() << "needs two processes";
  const int p = world_size();
  const int last = p - 1;
  // (CYCLIC(2), BLOCK, *) on p x 1 x 1 -> (*, BLOCK, CYCLIC(3)) on 1 x 1 x p: pieces of 3 and
  // of 2 elements, messages of tens of KB.
  const std::array<std::int64_t, 3> n{26, 30, 34};
  const std::array<NdDim, 3> la{
      {{MPI_DISTRIBUTE_CYCLIC, 2, p}, {MPI_DISTRIBUTE_BLOCK, 0, 1}, {MPI_DISTRIBUTE_NONE, 0, 1}}};
  const std::array<NdDim, 3> lb{
      {{MPI_DISTRIBUTE_NONE, 0, 1}, {MPI_DISTRIBUTE_BLOCK, 0, 1}, {MPI_DISTRIBUTE_CYCLIC, 3, p}}};
  NdDarray a_view(n, la);
  NdDarray b_view(n, lb);
  const redist_darray &da = a_view.view;
  const redist_darray &db = b_view.view;
  const std::vector<double> a = nd_local(la, n, world_rank());
  const std::vector<double> want = nd_local(lb, n, world_rank());
  std::vector<double> b(want.size());
  const auto run = [&](redist_plan plan) {
    std::fill(b.begin(), b.end(), -2.0);
    const int status = redist_plan_execute(plan, a.data(), b.data());
    long long wrong = 0;
    for (std::size_t e = 0; e < b.size(); ++e)
      wrong += std::bit_cast<std::uint64_t>(b[e]) != std::bit_cast<std::uint64_t>(want[e]) ? 1 : 0;
    return std::pair<int, long long>{status, sum_everywhere(wrong)};
  };
  const std::pair<const char *, sc::Injected> cases[] = {{"direct", sc::Injected::read},
                                                         {"bounced", sc::Injected::read},
                                                         {"read-packed", sc::Injected::read},
                                                         {"mapped", sc::Injected::mapped}};
  for (const auto &[way, what] : cases) {
    const SingleCopyMode env(way);
    for (long long skip = 0; skip < 3; ++skip) {
      const std::string at = std::string("[N-d, REDIST_SINGLE_COPY=") + way + ", failure " +
                             std::to_string(skip + 1) + "] ";
      redist_plan plan = nullptr;
      ASSERT_EQ(redist_nd_plan_create(MPI_COMM_WORLD, REDIST_DOUBLE, &da, &db, nullptr, &plan),
                REDIST_SUCCESS);
      for (int first = 0; first < 2; ++first) {
        EXPECT_EQ(run(plan), (std::pair<int, long long>{REDIST_SUCCESS, 0})) << at;
      }
      redist::Executor &x = *plan->executor;
      const auto before = single_copy_totals(x);
      if (before.first == 0) {
        redist_plan_destroy(&plan);
        // Unless the processes cannot read each other (a 2-D plan reads nothing either).
        TestExecutor two_d(large_scenario(), redist::Strategy::all_at_once, 0);
        std::int64_t wrong = 0;
        std::string report;
        ASSERT_EQ(two_d.run(1, 2, wrong, report), "");
        ASSERT_EQ(single_copy_totals(*two_d).first, 0)
            << at << "a 2-D plan reads, this N-d one not";
        GTEST_SKIP() << "cross-memory reads are not permitted between these processes";
      }
      EXPECT_EQ(before.first, before.second) << at;
      const long long reads_on_last = max_everywhere(
          world_rank() == last ? static_cast<long long>(x.single_copy_receives()) : 0);
      if (world_rank() == last) sc::inject_failures(what, skip, 1);
      const long long injected_before = sc::injected_failures(what);
      mpitest::watchdog_arm(at + "a failed read");
      EXPECT_EQ(run(plan), (std::pair<int, long long>{REDIST_SUCCESS, 0}))
          << at << "the failed read is repaired";
      mpitest::watchdog_disarm();
      sc::inject_failures(what, 0, 0);
      const long long fired = max_everywhere(sc::injected_failures(what) - injected_before);
      if (skip == 0) {
        EXPECT_EQ(fired, reads_on_last > 0 ? 1 : 0) << at << "no read failed";
      }
      EXPECT_EQ(sum_everywhere(static_cast<long long>(x.repaired_messages())), fired)
          << at << "messages repaired";
      EXPECT_EQ(x.failed_anywhere(), fired != 0) << at << "the failure agreed everywhere";
      const auto after = single_copy_totals(x);
      EXPECT_EQ(after, before) << at << "the plan's ways changed";
      // The next execution makes the plan anew (the failure was agreed): its ways decided
      // again, it reads again.
      EXPECT_EQ(run(plan), (std::pair<int, long long>{REDIST_SUCCESS, 0})) << at << "next one";
      EXPECT_EQ(sum_everywhere(static_cast<long long>(plan->executor->repaired_messages())), 0)
          << at;
      EXPECT_EQ(single_copy_totals(*plan->executor), before) << at << "the plan made anew";
      redist_plan_destroy(&plan);
      if (fired == 0 || ::testing::Test::HasFailure()) break;
    }
  }
}

// The repair failing too: a data receive's wait fails on one process (its message is
// repaired), and a call of the repair fails as well (each call, each occurrence, on that
// process or on another). Every process returns; where the repair failed at completion,
// REDIST_ERR_MPI naming the call and the peer, elsewhere success with B right; nothing left
// behind; the next execution right.
TEST(Faults, RepairFailingToo) {
  if (world_size() < 2) GTEST_SKIP() << "needs two processes";
  const Scenario s = large_scenario(150, 110);
  const int last = world_size() - 1;
  const unsigned calls[] = {faults::isend, faults::irecv, faults::wait_send, faults::wait_recv};
  const SingleCopyMode env("never"); // the first fault is on the data tag
  int fired_total = 0;
  for (const auto strategy : {redist::Strategy::all_at_once, redist::Strategy::stepwise}) {
    for (const unsigned call : calls) {
      for (const int repair_fails_on : {0, last}) {
        for (long long skip = 0; skip < 8; ++skip) {
          TestExecutor x(s, strategy, strategy == redist::Strategy::stepwise ? 40000 : 0);
          const std::string where =
              std::string("[") +
              (strategy == redist::Strategy::all_at_once ? "all-at-once" : "stepwise") +
              ", data wait fails on process 0, then " + call_name(call) +
              " of the repair on process " + std::to_string(repair_fails_on) + ", occurrence " +
              std::to_string(skip + 1) + "] ";
          std::vector<faults::Fault> list;
          if (world_rank() == 0) {
            faults::Fault first;
            first.calls = faults::wait_recv;
            first.tags = tags_of(0);
            first.count = 1;
            list.push_back(first);
          }
          if (world_rank() == repair_fails_on) {
            faults::Fault repair;
            repair.calls = call;
            repair.tags = tags_of(redist::kRepairTag);
            repair.skip = skip;
            repair.count = 1;
            list.push_back(repair);
          }
          const long long before = faults::injected();
          faults::arm(list);
          mpitest::watchdog_arm(where);
          std::int64_t wrong = 0;
          std::string report;
          const std::string error = x.run(3, 4, wrong, report);
          mpitest::watchdog_disarm();
          faults::disarm();
          const long long here = faults::injected() - before;
          const bool fired = sum_everywhere(here) > 1; // the repair's fault fired too
          if (error.empty()) {
            EXPECT_EQ(wrong, 0) << where << "B of a process that succeeded:\n" << report;
          } else {
            EXPECT_NE(error.find("redist execute: "), std::string::npos) << where << error;
            EXPECT_NE(error.find(" with peer rank "), std::string::npos) << where << error;
          }
          EXPECT_EQ(faults::live_requests(), 0) << where << "requests left behind";
          EXPECT_EQ(x.run(5, 6, wrong, report), "") << where << "the next execution";
          EXPECT_EQ(wrong, 0) << where << report;
          if (::testing::Test::HasFailure()) return;
          if (!fired) break;
          ++fired_total;
        }
      }
    }
  }
  EXPECT_GT(fired_total, 4) << "the repair's faults never fired";
}

// Cross-memory reads forbidden on one process (process 0), deterministically
// on any host: its probes of the others fail (the negotiation falls back to sent for every
// message it receives), or its mappings fail (mapped falls back to reading packed). Its peers
// must take the other way for those messages only; B stays bit-identical to the oracle (the
// ScaLAPACK definition) on every process; the statistics say which way each message went.
TEST(Faults, CrossMemoryForbiddenOnOneProcess) {
  if (world_size() < 2) GTEST_SKIP() << "needs two processes";
  const Scenario s = large_scenario();
  for (const auto &[way, what] :
       {std::pair{"always", sc::Injected::probe}, std::pair{"mapped", sc::Injected::map}}) {
    const SingleCopyMode env(way);
    const std::string where = std::string("[REDIST_SINGLE_COPY=") + way + "] ";
    std::int64_t wrong = 0;
    std::string report;
    TestExecutor reference(s, redist::Strategy::all_at_once);
    for (int e = 0; e < 2; ++e)
      ASSERT_EQ(reference.run(1, 2, wrong, report), "") << where;
    if (single_copy_totals(*reference).first == 0) {
      GTEST_SKIP() << "cross-memory reads are not permitted between these processes";
    }
    if (world_rank() == 0) sc::inject_failures(what, 0, -1);
    TestExecutor x(s, redist::Strategy::all_at_once);
    for (int e = 0; e < 3; ++e) {
      EXPECT_EQ(x.run(1 + 2 * e, 2 + 2 * e, wrong, report), "") << where;
      EXPECT_EQ(wrong, 0) << where << "B, execution " << e + 1 << ":\n" << report;
    }
    sc::inject_failures(what, 0, 0);
    // Messages this process sends to process 0: the way process 0 could not take.
    long long to_zero = 0;
    for (const redist::Peer &peer : x->plan().sends)
      to_zero += peer.rank == 0 ? 1 : 0;
    if (what == sc::Injected::probe) {
      const long long want_receives =
          world_rank() == 0 ? 0 : static_cast<long long>(reference->single_copy_receives());
      EXPECT_EQ(static_cast<long long>(x->single_copy_receives()), want_receives) << where;
      EXPECT_EQ(static_cast<long long>(x->single_copy_sends()),
                static_cast<long long>(reference->single_copy_sends()) - to_zero)
          << where << "sends to process 0 go through MPI";
    } else {
      const long long want_mapped =
          world_rank() == 0 ? 0 : static_cast<long long>(reference->mapped_receives());
      EXPECT_EQ(static_cast<long long>(x->mapped_receives()), want_mapped) << where;
      EXPECT_EQ(x->single_copy_receives(), reference->single_copy_receives())
          << where << "still read, packed";
    }
  }
}

// A latent bug, found by reading: with the message limit below a control message (address 40
// bytes, identity about 100, reply 8), control messages were split and the receiver acted on
// each piece (a read from half an address, several replies). They are never split now.
TEST(Faults, ControlMessagesAreNeverSplit) {
  if (world_size() < 2) GTEST_SKIP() << "needs two processes";
  const Scenario s = errtest::standard_scenario();
  redist::Executor::set_max_message_bytes(8);
  for (const char *way : {"direct", "bounced", "read-packed", "mapped", "auto"}) {
    const SingleCopyMode env(way);
    TestExecutor x(s, redist::Strategy::all_at_once);
    for (int e = 0; e < 3; ++e) {
      std::int64_t wrong = 0;
      std::string report;
      mpitest::watchdog_arm(std::string("[control messages, limit 8 bytes, ") + way + "]");
      EXPECT_EQ(x.run(1 + 2 * e, 2 + 2 * e, wrong, report), "") << way;
      mpitest::watchdog_disarm();
      EXPECT_EQ(wrong, 0) << way << ", execution " << e + 1 << ":\n" << report;
      EXPECT_EQ(sum_everywhere(static_cast<long long>(x->repaired_messages())), 0) << way;
    }
  }
  redist::Executor::set_max_message_bytes(static_cast<std::size_t>(INT_MAX) / 64 * 64);
}

} // namespace
