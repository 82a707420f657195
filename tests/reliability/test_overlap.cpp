// A and B in the same memory (docs/reliability.md, "Overlapping A and B"):
//   - InPlaceIdentityLeavesTheArrayUnchanged: A and B are the same local array, the same
//     layout and the same window: every element is copied onto itself; the array (LLD padding
//     and guard included) must be unchanged byte for byte, on every rank count.
//   - OverlappingWindowsStayInBounds: A and B are the same local array with the destination
//     window shifted against the source window, so that sources are overwritten while the copy
//     runs. The result inside the destination window is unspecified (documented), but the call
//     must succeed, write nothing outside the destination window (checked bytewise), and
//     every written element must hold some element of the original window; the sanitizer and
//     valgrind jobs run this test to show no out-of-bounds or overlapping-memcpy access.
// C API and ScaLAPACK entries (which share the executor) both.

#include "../common/scalapack_decls.h"
#include "../errors/error_support.hpp"

#include <redist.h>
#include <redist_scalapack.h>

#include <gtest/gtest.h>
#include <mpi.h>

#include <cstring>
#include <set>
#include <string>
#include <vector>

namespace {

using mpitest::MatSpec;
using mpitest::world_rank;
using mpitest::world_size;

MatSpec matrix(std::int64_t ia, std::int64_t ja) {
  MatSpec s;
  const int p = world_size();
  s.grid = errtest::init_grid('C', p >= 4 ? 2 : 1, p >= 4 ? p / 2 : p);
  if (p >= 4 && p % 2 != 0) s.grid = errtest::init_grid('R', 1, p);
  s.mg = 23;
  s.ng = 19;
  s.mb = 3;
  s.nb = 2;
  s.rsrc = 0;
  s.csrc = s.grid.npcol - 1;
  s.ia = ia;
  s.ja = ja;
  s.lld_extra.assign(static_cast<std::size_t>(s.grid.size()), 2);
  return s;
}

/// Create a plan from `a` to `b` on MPI_COMM_WORLD and execute it three times with the same
/// array as A and B. Returns the first failing execute status.
int run_in_place(const MatSpec &a, const MatSpec &b, std::int64_t m, std::int64_t n,
                 std::vector<double> &buf, const mpitest::LocalBuf &lb) {
  const redist_layout la = mpitest::c_layout(a, a.grid.ranks.data(), lb.lld);
  const redist_layout lbl = mpitest::c_layout(b, b.grid.ranks.data(), lb.lld);
  redist_plan plan = nullptr;
  int status = redist_plan_create(MPI_COMM_WORLD, m, n, REDIST_DOUBLE, &la, &lbl,
                                  REDIST_REGION_FULL, 0, &plan);
  EXPECT_EQ(status, REDIST_SUCCESS) << redist_last_error();
  if (status != REDIST_SUCCESS) return status;
  for (int run = 0; run < 3 && status == REDIST_SUCCESS; ++run) {
    status = redist_plan_execute(plan, buf.data(), buf.data());
  }
  EXPECT_EQ(redist_plan_destroy(&plan), REDIST_SUCCESS);
  return status;
}

TEST(Overlap, InPlaceIdentityLeavesTheArrayUnchanged) {
  const MatSpec s = matrix(2, 3);
  const mpitest::LocalBuf lb = mpitest::local_buf(s, world_rank());
  std::vector<double> buf;
  mpitest::fill_a(s, lb, 1, buf);
  const std::vector<double> before = buf;
  EXPECT_EQ(run_in_place(s, s, 17, 13, buf, lb), REDIST_SUCCESS) << redist_last_error();
  EXPECT_EQ(errtest::byte_diff(before, buf), "");

  // The same through a ScaLAPACK entry: DESCA == DESCB, A == B.
  std::string error;
  const int ctxt = mpitest::create_context(s.grid, error);
  const int ictxt = mpitest::create_context(errtest::init_grid('R', 1, world_size()), error);
  EXPECT_EQ(error, "");
  const redist_int desc[9] = {1, ctxt, 23, 19, 3, 2, 0, s.csrc, static_cast<redist_int>(lb.lld)};
  const redist_int m = 17;
  const redist_int n = 13;
  const redist_int i = 2;
  const redist_int j = 3;
  redist_pdgemr2d_(&m, &n, buf.data(), &i, &j, desc, buf.data(), &i, &j, desc, &ictxt);
  EXPECT_EQ(redist_scalapack_last_status(), REDIST_SUCCESS);
  EXPECT_EQ(errtest::byte_diff(before, buf), "");
  redist_scalapack_clear_cache();
  mpitest::free_context(ictxt);
  mpitest::free_context(ctxt);
}

TEST(Overlap, OverlappingWindowsStayInBounds) {
  // Source window at (1, 1), destination at (3, 4): they overlap, shifted by (2, 3).
  const std::int64_t m = 15;
  const std::int64_t n = 12;
  const MatSpec a = matrix(1, 1);
  const MatSpec b = matrix(3, 4);
  const mpitest::LocalBuf lb = mpitest::local_buf(a, world_rank());
  std::vector<double> buf;
  mpitest::fill_a(a, lb, 1, buf);
  const std::vector<double> before = buf;
  std::set<std::int64_t> source_codes; // every code of the source window, on any rank
  for (std::int64_t gj = 0; gj < n; ++gj)
    for (std::int64_t gi = 0; gi < m; ++gi)
      source_codes.insert(mpitest::a_code(a, a.ia - 1 + gi, a.ja - 1 + gj, 1));
  EXPECT_EQ(run_in_place(a, b, m, n, buf, lb), REDIST_SUCCESS) << redist_last_error();

  // Positions of the destination window in this rank's buffer.
  std::int64_t outside_changed = 0;
  std::int64_t inside_foreign = 0;
  for (std::int64_t p = 0; p < lb.elems; ++p) {
    bool in_window = false;
    if (lb.member && p < lb.lld * lb.locc && p % lb.lld < lb.locr) {
      const std::int64_t gi =
          mpitest::local_to_global(p % lb.lld, b.mb, lb.pr, b.rsrc, b.grid.nprow);
      const std::int64_t gj =
          mpitest::local_to_global(p / lb.lld, b.nb, lb.pc, b.csrc, b.grid.npcol);
      in_window = gi >= b.ia - 1 && gi < b.ia - 1 + m && gj >= b.ja - 1 && gj < b.ja - 1 + n;
    }
    const auto k = static_cast<std::size_t>(p);
    if (!in_window) {
      // Bytes, not values: a write of an equal value would still be a write.
      outside_changed += std::memcmp(&before[k], &buf[k], sizeof(double)) != 0 // NOLINT
                             ? 1
                             : 0;
    } else {
      inside_foreign += source_codes.count(mpitest::code_of(buf[k])) == 0 ? 1 : 0;
    }
  }
  EXPECT_EQ(outside_changed, 0) << "elements outside the destination window were written";
  EXPECT_EQ(inside_foreign, 0)
      << "destination elements hold values that were never in the source window";
}

} // namespace
