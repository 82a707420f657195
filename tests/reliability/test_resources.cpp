// Resource hygiene. Many calls with varying descriptors (--cases=N calls; ctest runs 10,000)
// leave no MPI handle behind and keep memory bounded:
//   - after every call, the live requests, groups, datatypes, ops and infos of this process
//     are what they were before the first call, and the live communicators never exceed the
//     baseline by more than the caches can hold (REDIST_COMM_CACHE_SIZE communicators, plus
//     those kept alive by the REDIST_PLAN_CACHE_SIZE cached plans);
//   - after redist_scalapack_clear_cache(), every count is back to the baseline;
//   - heap in use at the end is within a fixed bound of the heap in use after the first tenth
//     of the calls (the plan cache is bounded, nothing accumulates per call);
//   - every call's B matches the element oracle; one call in ten is invalid on one process
//     (every process must return an error status, and the error path must not leak either).
// Handles are counted by interposing the MPI calls (mpi_counters.cpp). The ScaLAPACK entries
// go through ten ICTXT contexts, more than the communicator cache holds, so evictions happen.
// C API plans run on their own duplicate of the caller's communicator, freed with the plan.

#include "../common/scalapack_decls.h"
#include "../errors/error_support.hpp"
#include "mpi_counters.hpp"

#include <redist.h>
#include <redist_scalapack.h>

#include <gtest/gtest.h>
#include <mpi.h>

#include <algorithm>
#include <array>
#include <complex>
#include <cstdio>
#include <string>
#include <vector>

#if defined(__has_feature)
#if __has_feature(address_sanitizer)
#define REDIST_TEST_ASAN 1
#endif
#endif
#if defined(__SANITIZE_ADDRESS__)
#define REDIST_TEST_ASAN 1
#endif
#ifdef REDIST_TEST_ASAN
#include <sanitizer/allocator_interface.h>
#else
#include <malloc.h>
#endif

static_assert(sizeof(redist_int) == sizeof(int), "the tests use the LP64 BLACS integer");

namespace {

using mpitest::GridSpec;
using mpitest::MatSpec;
using mpitest::world_rank;
using mpitest::world_size;

/// Bytes of heap in use by this process (the sanitizer's allocator under ASan).
long long heap_in_use() {
#ifdef REDIST_TEST_ASAN
  return static_cast<long long>(__sanitizer_get_current_allocated_bytes());
#else
  const struct mallinfo2 mi = mallinfo2();
  return static_cast<long long>(mi.uordblks) + static_cast<long long>(mi.hblkhd);
#endif
}

constexpr long long kHeapGrowthBound = 8LL << 20; // bytes
constexpr long long kCommCache = 8;               // defaults of REDIST_COMM_CACHE_SIZE and
constexpr long long kPlanCache = 16;              // REDIST_PLAN_CACHE_SIZE

bool everywhere(bool ok) {
  int v = ok ? 1 : 0;
  MPI_Allreduce(MPI_IN_PLACE, &v, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
  return v == 1;
}

void fill_desc(redist_int *d, const MatSpec &s, int ctxt, const mpitest::LocalBuf &lb) {
  const std::array<int, 9> desc = mpitest::descriptor(s, ctxt, lb);
  std::copy(desc.begin(), desc.end(), d);
}

struct Call {
  bool trapezoid = false;
  char uplo = 'U', diag = 'N';
  redist_int m = 0, n = 0, ia = 1, ja = 1, ib = 1, jb = 1, ictxt = -1;
  redist_int desca[9] = {}, descb[9] = {};
};

template <class T> void call_entry(Call &c, const T *a, T *b) {
  using std::complex;
  if constexpr (std::is_same_v<T, float>) {
    if (c.trapezoid)
      redist_pstrmr2d_(&c.uplo, &c.diag, &c.m, &c.n, a, &c.ia, &c.ja, c.desca, b, &c.ib, &c.jb,
                       c.descb, &c.ictxt);
    else
      redist_psgemr2d_(&c.m, &c.n, a, &c.ia, &c.ja, c.desca, b, &c.ib, &c.jb, c.descb, &c.ictxt);
  } else if constexpr (std::is_same_v<T, double>) {
    if (c.trapezoid)
      redist_pdtrmr2d_(&c.uplo, &c.diag, &c.m, &c.n, a, &c.ia, &c.ja, c.desca, b, &c.ib, &c.jb,
                       c.descb, &c.ictxt);
    else
      redist_Cpdgemr2d(c.m, c.n, const_cast<T *>(a), c.ia, c.ja, c.desca, b, c.ib, c.jb, c.descb,
                       c.ictxt);
  } else if constexpr (std::is_same_v<T, complex<float>>) {
    if (c.trapezoid)
      redist_Cpctrmr2d(&c.uplo, &c.diag, c.m, c.n, const_cast<T *>(a), c.ia, c.ja, c.desca, b, c.ib,
                       c.jb, c.descb, c.ictxt);
    else
      redist_pcgemr2d_(&c.m, &c.n, a, &c.ia, &c.ja, c.desca, b, &c.ib, &c.jb, c.descb, &c.ictxt);
  } else if constexpr (std::is_same_v<T, complex<double>>) {
    if (c.trapezoid)
      redist_pztrmr2d_(&c.uplo, &c.diag, &c.m, &c.n, a, &c.ia, &c.ja, c.desca, b, &c.ib, &c.jb,
                       c.descb, &c.ictxt);
    else
      redist_pzgemr2d_(&c.m, &c.n, a, &c.ia, &c.ja, c.desca, b, &c.ib, &c.jb, c.descb, &c.ictxt);
  } else {
    if (c.trapezoid)
      redist_pitrmr2d_(&c.uplo, &c.diag, &c.m, &c.n, a, &c.ia, &c.ja, c.desca, b, &c.ib, &c.jb,
                       c.descb, &c.ictxt);
    else
      redist_pigemr2d_(&c.m, &c.n, a, &c.ia, &c.ja, c.desca, b, &c.ib, &c.jb, c.descb, &c.ictxt);
  }
}

struct Outcome {
  long long wrong = 0; ///< wrong elements of B; for an invalid call, 1 if B changed at all
  int status = REDIST_SUCCESS;
  bool spoiled = false; ///< the call was made invalid
};

/// One call of a ScaLAPACK entry on a random redistribution. With spoil >= 0 (and a non-empty
/// window), process a.grid.ranks[spoil % size] passes DESCA(MB_) = 0.
template <class T>
Outcome one_call(mpitest::Rng &rng, const std::vector<GridSpec> &grids,
                 const std::vector<int> &grid_ctxt, const std::vector<int> &ictxts, int spoil,
                 std::string &report) {
  Outcome out;
  const auto gi = static_cast<std::size_t>(rng.uniform(0, static_cast<long>(grids.size()) - 1));
  const auto gj = static_cast<std::size_t>(rng.uniform(0, static_cast<long>(grids.size()) - 1));
  const std::int64_t m = rng.uniform(0, 14);
  const std::int64_t n = rng.uniform(0, 14);
  const MatSpec a = mpitest::random_matrix(rng, grids[gi], m, n);
  const MatSpec b = mpitest::random_matrix(rng, grids[gj], m, n);
  Call c;
  c.trapezoid = rng.coin(0.3);
  c.uplo = rng.coin(0.5) ? 'U' : 'L';
  c.diag = rng.coin(0.5) ? 'U' : 'N';
  c.m = static_cast<redist_int>(m);
  c.n = static_cast<redist_int>(n);
  c.ia = static_cast<redist_int>(a.ia);
  c.ja = static_cast<redist_int>(a.ja);
  c.ib = static_cast<redist_int>(b.ia);
  c.jb = static_cast<redist_int>(b.ja);
  c.ictxt = ictxts[static_cast<std::size_t>(rng.uniform(0, static_cast<long>(ictxts.size()) - 1))];
  const int rank = world_rank();
  const mpitest::LocalBuf la = mpitest::local_buf(a, rank);
  const mpitest::LocalBuf lb = mpitest::local_buf(b, rank);
  fill_desc(c.desca, a, grid_ctxt[gi], la);
  fill_desc(c.descb, b, grid_ctxt[gj], lb);
  const bool spoiled = spoil >= 0 && m > 0 && n > 0;
  out.spoiled = spoiled;
  if (spoiled && rank == a.grid.ranks[static_cast<std::size_t>(spoil % a.grid.size())]) {
    c.desca[4] = 0;
  }
  std::vector<T> abuf;
  std::vector<T> bbuf;
  mpitest::fill_a(a, la, 1, abuf);
  mpitest::fill_sentinel(lb, 2, bbuf);
  const std::vector<T> b_before = bbuf;
  if (spoiled) {
    errtest::StderrCapture quiet; // the expected one-line error message
    call_entry<T>(c, abuf.data(), bbuf.data());
    quiet.finish();
  } else {
    call_entry<T>(c, abuf.data(), bbuf.data());
  }
  out.status = redist_scalapack_last_status();
  if (spoiled) {
    out.wrong = errtest::byte_diff(b_before, bbuf).empty() ? 0 : 1;
    if (out.wrong != 0) report += "an invalid call modified B\n";
    return out;
  }
  mpitest::CopySpec cs;
  cs.region = !c.trapezoid    ? mpitest::Region::Full
              : c.uplo == 'U' ? mpitest::Region::Upper
                              : mpitest::Region::Lower;
  cs.unit_diag = c.trapezoid && c.diag == 'U';
  cs.m = m;
  cs.n = n;
  out.wrong = mpitest::check_b(cs, a, b, lb, bbuf.data(), 1, 2, report);
  return out;
}

/// The grids A and B are drawn from, with their contexts.
std::vector<GridSpec> grid_pool() {
  const int p = world_size();
  std::vector<GridSpec> grids;
  grids.push_back(errtest::init_grid('R', 1, p));
  grids.push_back(errtest::init_grid('C', p, 1));
  for (int d = 2; d < p; ++d)
    if (p % d == 0) grids.push_back(errtest::init_grid('C', d, p / d));
  std::vector<int> reversed;
  for (int r = p - 1; r >= 0; --r)
    reversed.push_back(r);
  grids.push_back(errtest::map_grid(1, p, reversed));
  if (p >= 2) grids.push_back(errtest::subset_grid());
  return grids;
}

TEST(Resources, ScalapackEntriesLeaveNothingBehind) {
  const int calls = mpitest::options().cases;
  const std::uint64_t seed = mpitest::shared_seed("Resources.ScalapackEntries", 20240611);
  mpitest::Rng rng(seed);
  std::string error;
  const std::vector<GridSpec> grids = grid_pool();
  std::vector<int> grid_ctxt;
  grid_ctxt.reserve(grids.size());
  for (const GridSpec &g : grids)
    grid_ctxt.push_back(mpitest::create_context(g, error));
  std::vector<int> ictxts; // more contexts than the communicator cache holds
  ictxts.reserve(10);
  for (int k = 0; k < 10; ++k)
    ictxts.push_back(mpitest::create_context(errtest::init_grid('R', 1, world_size()), error));
  ASSERT_TRUE(everywhere(error.empty())) << error;

  redist_scalapack_clear_cache();
  const counters::Snapshot base = counters::now();
  const long long created_before = counters::communicators_created();
  long long heap_early = 0;
  long long max_comms = base.comms;
  long long wrong = 0;
  long long failed_valid = 0;
  long long succeeded_invalid = 0;
  std::string report;
  for (int k = 0; k < calls; ++k) {
    const int spoil = k % 10 == 9 ? k / 10 : -1;
    std::string call_report;
    Outcome o;
    switch (k % 5) {
    case 0:
      o = one_call<float>(rng, grids, grid_ctxt, ictxts, spoil, call_report);
      break;
    case 1:
      o = one_call<double>(rng, grids, grid_ctxt, ictxts, spoil, call_report);
      break;
    case 2:
      o = one_call<std::complex<float>>(rng, grids, grid_ctxt, ictxts, spoil, call_report);
      break;
    case 3:
      o = one_call<std::complex<double>>(rng, grids, grid_ctxt, ictxts, spoil, call_report);
      break;
    default:
      o = one_call<redist_int>(rng, grids, grid_ctxt, ictxts, spoil, call_report);
      break;
    }
    wrong += o.wrong;
    if (!o.spoiled && o.status != REDIST_SUCCESS) ++failed_valid;
    if (!call_report.empty() && report.size() < 2000)
      report += "call " + std::to_string(k) + ":\n" + call_report;
    if (o.spoiled && o.status == REDIST_SUCCESS) ++succeeded_invalid;
    const counters::Snapshot s = counters::now();
    max_comms = std::max(max_comms, s.comms);
    // Nothing but cached communicators may outlive a call.
    counters::Snapshot expected = base;
    expected.comms = s.comms;
    if (!(s == expected)) {
      ADD_FAILURE() << "after call " << k << ": " << s.describe() << "; before the first call "
                    << base.describe();
      break;
    }
    if (k == calls / 10) heap_early = heap_in_use();
  }
  const long long heap_late = heap_in_use();
  const counters::Snapshot before_clear = counters::now();
  redist_scalapack_clear_cache();
  const counters::Snapshot after_clear = counters::now();

  EXPECT_EQ(wrong, 0) << "wrong elements in B (or B modified by an invalid call):\n" << report;
  EXPECT_EQ(failed_valid, 0) << "valid calls that failed";
  EXPECT_EQ(succeeded_invalid, 0) << "invalid calls that succeeded";
  EXPECT_GT(counters::communicators_created(), created_before)
      << "no communicator creation was seen: the MPI interposition is not active";
  EXPECT_LE(max_comms - base.comms, kCommCache + kPlanCache)
      << "more live communicators than the caches can hold";
  EXPECT_EQ(after_clear, base) << "after redist_scalapack_clear_cache(): " << after_clear.describe()
                               << "; before the first call " << base.describe();
  EXPECT_LT(heap_late - heap_early, kHeapGrowthBound)
      << "heap grew from " << heap_early << " to " << heap_late << " bytes";
  char line[512];
  std::snprintf(line, sizeof line,
                "[ MEASURED ] rank %d: %d calls, live communicators at most %lld above the "
                "baseline, %lld before / %lld after clear_cache (baseline %lld); heap in use "
                "%lld bytes at call %d, %lld at the end (growth %lld)\n",
                world_rank(), calls, max_comms - base.comms, before_clear.comms, after_clear.comms,
                base.comms, heap_early, calls / 10, heap_late, heap_late - heap_early);
  std::fputs(line, stdout);
  std::fflush(stdout);
  redist_scalapack_clear_cache(); // before the contexts its keys name go away
  for (const int ctxt : ictxts)
    mpitest::free_context(ctxt);
  for (const int ctxt : grid_ctxt)
    mpitest::free_context(ctxt);
}

/// A plan for the m x n windows of `a` and `b` on `comm`, and the arrays it copies between
/// (A filled with the oracle's values for `salt`, B with sentinels).
struct CApiCopy {
  std::int64_t m, n;
  int salt;
  MatSpec a, b;
  mpitest::LocalBuf la, lb;
  std::vector<double> abuf, bbuf;
  redist_plan plan = nullptr;
  int status = REDIST_SUCCESS;

  CApiCopy(MPI_Comm comm, std::int64_t rows, std::int64_t cols, const MatSpec &a_spec,
           const MatSpec &b_spec, int values, bool spoil = false)
      : m(rows), n(cols), salt(values), a(a_spec), b(b_spec),
        la(mpitest::local_buf(a, world_rank())), lb(mpitest::local_buf(b, world_rank())) {
    redist_layout ca = mpitest::c_layout(a, a.grid.ranks.data(), la.lld);
    const redist_layout cb = mpitest::c_layout(b, b.grid.ranks.data(), lb.lld);
    if (spoil) ca.mb = 0;
    status = redist_plan_create(comm, m, n, REDIST_DOUBLE, &ca, &cb, REDIST_REGION_FULL, 0, &plan);
    mpitest::fill_a(a, la, salt, abuf);
    mpitest::fill_sentinel(lb, salt + 1, bbuf);
  }
  /// Elements of B that differ from the oracle's (A's values in the window, B's sentinels
  /// elsewhere).
  long long wrong(std::string &report) const {
    mpitest::CopySpec cs;
    cs.m = m;
    cs.n = n;
    return mpitest::check_b(cs, a, b, lb, bbuf.data(), salt, salt + 1, report);
  }
};

// Plans made one after another on a communicator of the caller's, each on its own duplicate:
// after every plan is destroyed the live handles are the baseline's but for the caller's
// communicator.
TEST(Resources, CApiPlansLeaveNothingBehind) {
  const int plans = std::max(1, mpitest::options().cases / 10);
  const std::uint64_t seed = mpitest::shared_seed("Resources.CApiPlans", 777);
  mpitest::Rng rng(seed);
  const std::vector<GridSpec> grids = grid_pool();
  const counters::Snapshot base = counters::now();
  MPI_Comm own = MPI_COMM_NULL;
  ASSERT_EQ(MPI_Comm_dup(MPI_COMM_WORLD, &own), MPI_SUCCESS);
  const long long heap_start = heap_in_use();
  long long heap_early = heap_start;
  long long wrong = 0;
  int made = 0;
  std::string report;
  for (int k = 0; k < plans; ++k) {
    const std::int64_t m = rng.uniform(0, 14);
    const std::int64_t n = rng.uniform(0, 14);
    const MatSpec a = mpitest::random_matrix(
        rng, grids[static_cast<std::size_t>(rng.uniform(0, static_cast<long>(grids.size()) - 1))],
        m, n);
    const MatSpec b = mpitest::random_matrix(
        rng, grids[static_cast<std::size_t>(rng.uniform(0, static_cast<long>(grids.size()) - 1))],
        m, n);
    const bool spoil = k % 10 == 9;
    CApiCopy copy(own, m, n, a, b, 1, spoil && world_rank() == k % world_size());
    if (spoil) {
      EXPECT_NE(copy.status, REDIST_SUCCESS) << "plan " << k << ": an invalid create succeeded";
    } else if (everywhere(copy.status == REDIST_SUCCESS)) {
      ++made;
      for (int rep = 0; rep < 2; ++rep) {
        EXPECT_EQ(redist_plan_execute(copy.plan, copy.abuf.data(), copy.bbuf.data()),
                  REDIST_SUCCESS)
            << redist_last_error();
      }
      wrong += copy.wrong(report);
    } else {
      ADD_FAILURE() << "plan " << k << ": a valid create failed: " << redist_last_error();
    }
    if (copy.plan != nullptr) {
      EXPECT_EQ(redist_plan_destroy(&copy.plan), REDIST_SUCCESS);
    }
    const counters::Snapshot s = counters::now();
    counters::Snapshot expected = base;
    expected.comms = base.comms + 1; // the caller's
    if (!(s == expected)) {
      ADD_FAILURE() << "after plan " << k << ": " << s.describe() << "; expected "
                    << expected.describe();
      break;
    }
    if (k == plans / 10) heap_early = heap_in_use();
  }
  EXPECT_GT(made, 0) << "no valid plan was made";
  MPI_Comm_free(&own);
  EXPECT_EQ(counters::now(), base) << "after the caller's communicator was freed";
  EXPECT_EQ(wrong, 0) << report;
  EXPECT_LT(heap_in_use() - heap_early, kHeapGrowthBound);
}

// A plan's communicator is its own: plans alive together run on distinct duplicates (two
// executions in flight at once, each checked against the oracle) and free them when destroyed,
// in any order; a plan outlives the caller's communicator.
TEST(Resources, CApiPlansRunOnCommunicatorsOfTheirOwn) {
  const std::vector<GridSpec> grids = grid_pool();
  const MatSpec a = errtest::matrix(grids.front(), 40, 30, 3, 4, 0, 0, 1, 1, 0);
  const MatSpec b = errtest::matrix(grids[1], 40, 30, 5, 2, 0, 0, 1, 1, 0);
  const counters::Snapshot base = counters::now();
  MPI_Comm own = MPI_COMM_NULL;
  ASSERT_EQ(MPI_Comm_dup(MPI_COMM_WORLD, &own), MPI_SUCCESS);
  const auto live_above_base = [&] { return counters::now().comms - base.comms; };
  {
    CApiCopy x(own, 40, 30, a, b, 3);
    CApiCopy y(own, 40, 30, b, a, 5);
    ASSERT_TRUE(everywhere(x.status == REDIST_SUCCESS && y.status == REDIST_SUCCESS))
        << redist_last_error();
    EXPECT_EQ(live_above_base(), 3) << "the caller's communicator and a duplicate per plan";
    // Two plans in flight at once, then destroyed, in the opposite order on odd ranks.
    EXPECT_EQ(redist_plan_execute_begin(x.plan, x.abuf.data(), x.bbuf.data()), REDIST_SUCCESS)
        << redist_last_error();
    EXPECT_EQ(redist_plan_execute_begin(y.plan, y.abuf.data(), y.bbuf.data()), REDIST_SUCCESS)
        << redist_last_error();
    EXPECT_EQ(redist_plan_execute_end(y.plan), REDIST_SUCCESS) << redist_last_error();
    EXPECT_EQ(redist_plan_execute_end(x.plan), REDIST_SUCCESS) << redist_last_error();
    std::string report;
    EXPECT_EQ(x.wrong(report) + y.wrong(report), 0) << report;
    redist_plan &first = world_rank() % 2 == 0 ? x.plan : y.plan;
    redist_plan &second = world_rank() % 2 == 0 ? y.plan : x.plan;
    EXPECT_EQ(redist_plan_destroy(&first), REDIST_SUCCESS);
    EXPECT_EQ(redist_plan_destroy(&second), REDIST_SUCCESS);
    EXPECT_EQ(live_above_base(), 1) << "the plans' communicators freed with them";
  }
  {
    CApiCopy x(own, 40, 30, a, b, 11);
    ASSERT_TRUE(everywhere(x.status == REDIST_SUCCESS)) << redist_last_error();
    MPI_Comm_free(&own);
    EXPECT_EQ(live_above_base(), 1) << "the plan's communicator outlives the caller's";
    EXPECT_EQ(redist_plan_execute(x.plan, x.abuf.data(), x.bbuf.data()), REDIST_SUCCESS)
        << redist_last_error();
    std::string report;
    EXPECT_EQ(x.wrong(report), 0) << "[a plan whose caller's communicator is gone] " << report;
    EXPECT_EQ(redist_plan_destroy(&x.plan), REDIST_SUCCESS);
    EXPECT_EQ(counters::now(), base) << "its communicator freed";
  }
}

} // namespace
