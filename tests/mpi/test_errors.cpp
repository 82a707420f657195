// Bad arguments: redist returns a status on EVERY rank (never a deadlock, never exit()), the
// failing rank gets REDIST_ERR_ARGUMENT and the others REDIST_ERR_REMOTE, no plan is left
// behind, and B is left untouched (ScaLAPACK-style entries: redist_scalapack_last_status()).

#include "../common/scalapack_decls.h"
#include "harness.hpp"

#include <redist.h>
#include <redist_scalapack.h>

#include <gtest/gtest.h>
#include <mpi.h>

#include <cstdlib>
#include <cstring>
#include <numeric>
#include <string>
#include <vector>

namespace mpitest {
namespace {

/// A column of all ranks (np x 1), MB = 1, 3 rows per rank, 4 columns.
struct Column {
  std::vector<int> ranks;
  redist_layout layout{};
  Column() {
    ranks.resize(static_cast<std::size_t>(world_size()));
    std::iota(ranks.begin(), ranks.end(), 0);
    layout.m = 3 * world_size();
    layout.n = 4;
    layout.mb = 1;
    layout.nb = 2;
    layout.nprow = world_size();
    layout.npcol = 1;
    layout.ranks = ranks.data();
    layout.lld = 3;
  }
};

/// Status of every rank, gathered everywhere.
std::vector<int> all_statuses(int st) {
  std::vector<int> all(static_cast<std::size_t>(world_size()));
  MPI_Allgather(&st, 1, MPI_INT, all.data(), 1, MPI_INT, MPI_COMM_WORLD);
  return all;
}

std::string list(const std::vector<int> &v) {
  std::string s;
  for (std::size_t i = 0; i < v.size(); ++i)
    s += (i ? "," : "") + std::to_string(v[i]);
  return s;
}

TEST(Errors, CApiBadBlockSizeEverywhere) {
  Column a, b;
  a.layout.mb = 0;
  redist_plan plan = reinterpret_cast<redist_plan>(&a); // must be overwritten with NULL
  const int st = redist_plan_create(MPI_COMM_WORLD, 3, 4, REDIST_DOUBLE, &a.layout, &b.layout,
                                    REDIST_REGION_FULL, 0, &plan);
  EXPECT_EQ(st, REDIST_ERR_ARGUMENT) << redist_last_error();
  EXPECT_EQ(plan, nullptr);
  EXPECT_NE(std::string(redist_last_error()), "");
  if (plan != nullptr && plan != reinterpret_cast<redist_plan>(&a)) redist_plan_destroy(&plan);
}

TEST(Errors, CApiBadLldOnOneRank) {
  Column a, b;
  if (world_rank() == world_size() - 1) a.layout.lld = 2; // holds 3 rows
  redist_plan plan = nullptr;
  const int st = redist_plan_create(MPI_COMM_WORLD, 3, 4, REDIST_FLOAT, &a.layout, &b.layout,
                                    REDIST_REGION_UPPER, 1, &plan);
  const std::vector<int> all = all_statuses(st);
  for (int r = 0; r < world_size(); ++r) {
    const int want = r == world_size() - 1 ? REDIST_ERR_ARGUMENT : REDIST_ERR_REMOTE;
    EXPECT_EQ(all[static_cast<std::size_t>(r)], want) << "statuses by rank: " << list(all);
  }
  EXPECT_EQ(plan, nullptr);
  EXPECT_NE(std::string(redist_last_error()), "");
  if (plan != nullptr) redist_plan_destroy(&plan);
}

TEST(Errors, CApiWindowOutsideMatrix) {
  Column a, b;
  b.layout.j = 1; // columns [1, 5) of 4
  redist_plan plan = nullptr;
  const int st = redist_plan_create(MPI_COMM_WORLD, 3, 4, REDIST_INT32, &a.layout, &b.layout,
                                    REDIST_REGION_FULL, 0, &plan);
  EXPECT_EQ(st, REDIST_ERR_ARGUMENT) << redist_last_error();
  EXPECT_EQ(plan, nullptr);
  if (plan != nullptr) redist_plan_destroy(&plan);
}

TEST(Errors, CApiMismatchedGlobalArgument) {
  if (world_size() < 2) GTEST_SKIP() << "needs two ranks";
  Column a, b;
  const std::int64_t m = world_rank() == 0 ? 2 : 3; // valid locally, inconsistent globally
  redist_plan plan = nullptr;
  const int st = redist_plan_create(MPI_COMM_WORLD, m, 4, REDIST_DOUBLE, &a.layout, &b.layout,
                                    REDIST_REGION_FULL, 0, &plan);
  const std::vector<int> all = all_statuses(st);
  for (int s : all)
    EXPECT_EQ(s, REDIST_ERR_MISMATCH) << "statuses by rank: " << list(all);
  EXPECT_EQ(plan, nullptr);
  if (plan != nullptr) redist_plan_destroy(&plan);
}

TEST(Errors, CApiLocalQueries) {
  EXPECT_NE(redist_plan_execute(nullptr, nullptr, nullptr), REDIST_SUCCESS);
  redist_plan_info info{};
  EXPECT_NE(redist_plan_get_info(nullptr, &info), REDIST_SUCCESS);
  EXPECT_EQ(redist_type_size(REDIST_FLOAT), 4);
  EXPECT_EQ(redist_type_size(REDIST_DOUBLE), 8);
  EXPECT_EQ(redist_type_size(REDIST_COMPLEX_FLOAT), 8);
  EXPECT_EQ(redist_type_size(REDIST_COMPLEX_DOUBLE), 16);
  EXPECT_EQ(redist_type_size(REDIST_INT32), 4);
  EXPECT_EQ(redist_type_size(REDIST_INT64), 8);
  for (int s = REDIST_SUCCESS; s <= REDIST_ERR_INTERNAL; ++s) {
    ASSERT_NE(redist_status_name(s), nullptr);
    EXPECT_GT(std::strlen(redist_status_name(s)), 0U);
  }
}

/// ScaLAPACK-style entry with a bad descriptor: status on every rank of ICTXT, B untouched,
/// also on the ranks whose own arguments are fine.
/// A and B on an np x 1 grid (gridinit 'C'), 3 * np x 4 with MB = 1, NB = 2: the matrix, its
/// BLACS context (free it with free_context) and this rank's local buffer.
struct ColumnGrid {
  MatSpec spec;
  int ctxt = -1;
  LocalBuf local;
};

ColumnGrid column_grid() {
  const int np = world_size();
  ColumnGrid out;
  GridSpec &g = out.spec.grid;
  g.kind = GridKind::InitCol;
  g.nprow = np;
  g.npcol = 1;
  g.ranks.resize(static_cast<std::size_t>(np));
  std::iota(g.ranks.begin(), g.ranks.end(), 0);
  std::string harness_error;
  out.ctxt = create_context(g, harness_error);
  EXPECT_EQ(harness_error, "");
  out.spec.mg = 3 * np;
  out.spec.ng = 4;
  out.spec.mb = 1;
  out.spec.nb = 2;
  out.spec.lld_extra.assign(static_cast<std::size_t>(np), 0);
  out.local = local_buf(out.spec, world_rank());
  return out;
}

TEST(Errors, ScalapackEntryLeavesBUntouched) {
  const int np = world_size();
  const int me = world_rank();
  const ColumnGrid grid = column_grid();
  const MatSpec &s = grid.spec;
  const int ctxt = grid.ctxt;
  const LocalBuf &lb = grid.local;

  struct Bad {
    const char *what;
    int field; // descriptor index to corrupt (Fortran index - 1), or -1: IA
    int value;
    bool only_last_rank;
  };
  const Bad bads[] = {{"DESCA(MB_) = 0", 4, 0, false},
                      {"DESCB(NB_) = -1", 5 + 9, -1, false},
                      {"DESCA(RSRC_) = nprow", 6, np, false},
                      {"DESCB(LLD_) too small on the last rank", 8 + 9, 1, true},
                      {"IA + M - 1 > M_", -1, 0, false}};
  for (const Bad &bad : bads) {
    std::vector<double> a, b, b_orig;
    fill_a(s, lb, 1, a);
    fill_sentinel(lb, 2, b);
    b_orig = b;
    int desc[18] = {1, ctxt, static_cast<int>(s.mg), 4, 1, 2, 0, 0, static_cast<int>(lb.lld),
                    1, ctxt, static_cast<int>(s.mg), 4, 1, 2, 0, 0, static_cast<int>(lb.lld)};
    int m = 2, n = 4, ia = 1, ja = 1, ib = 2, jb = 1;
    if (bad.field >= 0 && (!bad.only_last_rank || me == np - 1)) desc[bad.field] = bad.value;
    if (bad.field < 0) ia = static_cast<int>(s.mg); // rows M_..M_+1
    redist_pdgemr2d_(&m, &n, a.data(), &ia, &ja, desc, b.data(), &ib, &jb, desc + 9, &ctxt);
    const int st = redist_scalapack_last_status();
    const std::vector<int> all = all_statuses(st);
    for (int x : all)
      EXPECT_NE(x, REDIST_SUCCESS) << bad.what << ": statuses " << list(all);
    EXPECT_EQ(std::memcmp(b.data(), b_orig.data(), b.size() * sizeof(double)), 0)
        << bad.what << ": B was modified";
  }
  // And a good call afterwards still works (no state left behind by the errors).
  {
    std::vector<double> a, b;
    fill_a(s, lb, 1, a);
    fill_sentinel(lb, 2, b);
    int desc[9] = {1, ctxt, static_cast<int>(s.mg), 4, 1, 2, 0, 0, static_cast<int>(lb.lld)};
    int m = 2, n = 4, ia = 1, ja = 1, ib = 2, jb = 1;
    redist_pdgemr2d_(&m, &n, a.data(), &ia, &ja, desc, b.data(), &ib, &jb, desc, &ctxt);
    EXPECT_EQ(redist_scalapack_last_status(), REDIST_SUCCESS);
    MatSpec sb = s;
    sb.ia = 2;
    std::string rep;
    EXPECT_EQ(check_b(CopySpec{Region::Full, false, 2, 4}, s, sb, lb, b.data(), 1, 2, rep), 0)
        << rep;
  }
  free_context(ctxt);
}

// REDIST_SCHEDULE / REDIST_MAX_CONCURRENT / REDIST_MAX_MEMORY: an invalid value is an error
// naming the variable on every rank with B untouched, never a silent default; options the
// schedule cannot honour likewise; valid values give the right result.
TEST(Errors, ScalapackEntryEnvironmentOptions) {
  const ColumnGrid grid = column_grid();
  const MatSpec &s = grid.spec;
  const int ctxt = grid.ctxt;
  const LocalBuf &lb = grid.local;
  struct Setting {
    const char *variable;
    const char *value;
    const char *expect; // substring of the message; nullptr: must succeed
  };
  const Setting settings[] = {
      {"REDIST_SCHEDULE", "fastest", "REDIST_SCHEDULE = 'fastest': unknown schedule"},
      {"REDIST_MAX_CONCURRENT", "-2", "REDIST_MAX_CONCURRENT = '-2': must be an integer >= 0"},
      {"REDIST_MAX_MEMORY", "12kB", "REDIST_MAX_MEMORY = '12kB': must be a number of bytes"},
      {"REDIST_SCHEDULE", "all-at-once", nullptr},
      {"REDIST_SCHEDULE", "caterpillar", nullptr},
      {"REDIST_MAX_MEMORY", "8", "below one element sent and one received"},
      {"REDIST_MAX_MEMORY", "16", nullptr},
      {"REDIST_SINGLE_COPY", "sometimes", "REDIST_SINGLE_COPY = 'sometimes': unknown"},
      {"REDIST_SINGLE_COPY", "never", nullptr},
  };
  for (const Setting &setting : settings) {
    setenv(setting.variable, setting.value, 1);
    redist_scalapack_clear_cache(); // the entries read the environment again at their next call
    std::vector<double> a, b, b_orig;
    fill_a(s, lb, 1, a);
    fill_sentinel(lb, 2, b);
    b_orig = b;
    int desc[9] = {1, ctxt, static_cast<int>(s.mg), 4, 1, 2, 0, 0, static_cast<int>(lb.lld)};
    int m = 2, n = 4, ia = 1, ja = 1, ib = 2, jb = 1;
    ::testing::internal::CaptureStderr();
    redist_pdgemr2d_(&m, &n, a.data(), &ia, &ja, desc, b.data(), &ib, &jb, desc, &ctxt);
    const std::string message = ::testing::internal::GetCapturedStderr();
    unsetenv(setting.variable);
    redist_scalapack_clear_cache();
    const std::string what = std::string(setting.variable) + "=" + setting.value;
    const std::vector<int> all = all_statuses(redist_scalapack_last_status());
    if (setting.expect != nullptr) {
      for (int x : all)
        EXPECT_EQ(x, REDIST_ERR_ARGUMENT) << what << ": statuses " << list(all);
      EXPECT_NE(message.find(setting.expect), std::string::npos) << what << ": " << message;
      EXPECT_NE(message.find("PDGEMR2D"), std::string::npos) << what << ": " << message;
      EXPECT_EQ(std::memcmp(b.data(), b_orig.data(), b.size() * sizeof(double)), 0)
          << what << ": B was modified";
    } else {
      for (int x : all)
        EXPECT_EQ(x, REDIST_SUCCESS) << what << ": " << message;
      MatSpec sb = s;
      sb.ia = 2;
      std::string rep;
      EXPECT_EQ(check_b(CopySpec{Region::Full, false, 2, 4}, s, sb, lb, b.data(), 1, 2, rep), 0)
          << what << ": " << rep;
    }
  }
  free_context(ctxt);
}

} // namespace
} // namespace mpitest
