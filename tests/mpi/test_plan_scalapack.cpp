// redist_plan_create_scalapack (redist_scalapack.h): a C API plan from ScaLAPACK descriptors and
// a BLACS context, executed with redist_plan_execute, against ScaLAPACK's own PDGEMR2D /
// PDTRMR2D and the element oracle on random cases that every rank draws from one shared seed
// (ICTXT over all processes or a subset; grids of A and B drawn from ICTXT's processes, gridinit
// or gridmap; random M_/N_, MB_/NB_, RSRC_/CSRC_, IA/JA/IB/JB, LLD padding; processes outside a
// grid pass DESCx(CTXT_) = -1). On every rank of ICTXT: B bit for bit as ScaLAPACK's (LLD
// padding and guard zone included) and as the oracle's, A unchanged; the plan executed a second
// time on other data matches the oracle too. And its errors: an ICTXT that is no BLACS context
// on every process, a bad descriptor on one process: an error on every process, no plan, B
// untouched.

#include "../common/scalapack_decls.h"
#include "harness.hpp"

#include <redist.h>
#include <redist_scalapack.h>

#include <gtest/gtest.h>
#include <mpi.h>

#include <algorithm>
#include <array>
#include <cstring>
#include <numeric>
#include <string>
#include <vector>

namespace mpitest {
namespace {

struct PlanCase {
  int index = 0;
  bool trmr = false;
  char uplo = 'U', diag = 'N';
  std::int64_t m = 0, n = 0;
  GridSpec ictxt;
  MatSpec a, b;

  [[nodiscard]] CopySpec copy() const {
    CopySpec c;
    c.m = m;
    c.n = n;
    if (trmr) {
      c.region = uplo == 'U' ? Region::Upper : Region::Lower;
      c.unit_diag = diag == 'U';
    }
    return c;
  }
  [[nodiscard]] std::string describe() const {
    return "case " + std::to_string(index) + ": " +
           (trmr ? std::string("pdtrmr2d UPLO=") + uplo + " DIAG=" + diag
                 : std::string("pdgemr2d")) +
           " M=" + std::to_string(m) + " N=" + std::to_string(n) +
           "\n    ICTXT: " + ictxt.describe() + "\n    A: " + a.describe() +
           "\n    B: " + b.describe() + "\n";
  }
};

PlanCase draw(Rng &rng, int np, int index) {
  PlanCase c;
  c.index = index;
  c.trmr = rng.coin(0.3);
  c.uplo = rng.coin(0.5) ? 'U' : 'L';
  c.diag = rng.coin(0.5) ? 'U' : 'N';
  random_window(rng, c.m, c.n);
  std::vector<int> all(static_cast<std::size_t>(np));
  std::iota(all.begin(), all.end(), 0);
  const int k = (np == 1 || rng.coin(0.7)) ? np : static_cast<int>(rng.uniform(1, np - 1));
  c.ictxt = random_grid(rng, all, k, true);
  const std::vector<int> &pool = c.ictxt.ranks;
  const int s = static_cast<int>(pool.size());
  c.a = random_matrix(rng, random_grid(rng, pool, static_cast<int>(rng.uniform(1, s)), true), c.m,
                      c.n);
  c.b = random_matrix(rng, random_grid(rng, pool, static_cast<int>(rng.uniform(1, s)), true), c.m,
                      c.n);
  return c;
}

/// One case on a process of ICTXT: what went wrong (empty: nothing).
std::string run_case(const PlanCase &c, int ctxt_a, int ctxt_b, int ctxt_i) {
  const int me = world_rank();
  const LocalBuf la = local_buf(c.a, me);
  const LocalBuf lb = local_buf(c.b, me);
  const std::array<int, 9> desca = descriptor(c.a, ctxt_a, la);
  const std::array<int, 9> descb = descriptor(c.b, ctxt_b, lb);
  std::vector<double> a, a_orig, b_ref, b_test;
  fill_a(c.a, la, 1, a);
  a_orig = a;
  fill_sentinel(lb, 2, b_ref);
  b_test = b_ref;
  std::string failure;

  // ScaLAPACK's own routine: the reference.
  {
    std::array<int, 9> da = desca, db = descb;
    const int m = static_cast<int>(c.m), n = static_cast<int>(c.n);
    const int ia = static_cast<int>(c.a.ia), ja = static_cast<int>(c.a.ja);
    const int ib = static_cast<int>(c.b.ia), jb = static_cast<int>(c.b.ja);
    if (c.trmr) {
      pdtrmr2d_(&c.uplo, &c.diag, &m, &n, a.data(), &ia, &ja, da.data(), b_ref.data(), &ib, &jb,
                db.data(), &ctxt_i);
    } else {
      pdgemr2d_(&m, &n, a.data(), &ia, &ja, da.data(), b_ref.data(), &ib, &jb, db.data(), &ctxt_i);
    }
    a = a_orig;
  }

  redist_plan plan = nullptr;
  const int region = !c.trmr         ? REDIST_REGION_FULL
                     : c.uplo == 'U' ? REDIST_REGION_UPPER
                                     : REDIST_REGION_LOWER;
  const int created = redist_plan_create_scalapack(
      static_cast<redist_int>(c.m), static_cast<redist_int>(c.n), REDIST_DOUBLE, desca.data(),
      static_cast<redist_int>(c.a.ia), static_cast<redist_int>(c.a.ja), descb.data(),
      static_cast<redist_int>(c.b.ia), static_cast<redist_int>(c.b.ja), ctxt_i, region,
      c.trmr && c.diag == 'U' ? 1 : 0, nullptr, &plan);
  if (created != REDIST_SUCCESS) {
    return "  redist_plan_create_scalapack: " + std::string(redist_status_name(created)) + ": " +
           redist_last_error() + "\n";
  }
  const CopySpec cs = c.copy();
  for (const int salt : {1, 3}) { // the second execution reuses the plan on other data
    if (salt != 1) {
      fill_a(c.a, la, salt, a);
      a_orig = a;
      fill_sentinel(lb, 2, b_test);
    }
    const int executed = redist_plan_execute(plan, a.data(), b_test.data());
    const std::string label = salt == 1 ? "  " : "  (executed again) ";
    if (executed != REDIST_SUCCESS) {
      failure += label + "redist_plan_execute: " + redist_status_name(executed) + ": " +
                 redist_last_error() + "\n";
      continue;
    }
    if (std::memcmp(a.data(), a_orig.data(), a.size() * sizeof(double)) != 0)
      failure += label + "redist modified A's local buffer\n";
    std::string report;
    const std::int64_t bad = check_b(cs, c.a, c.b, lb, b_test.data(), salt, 2, report);
    if (bad > 0) {
      failure +=
          label + std::to_string(bad) + " elements of B differ from the oracle, e.g.\n" + report;
    }
    if (salt == 1) {
      std::int64_t differ = 0;
      for (std::size_t p = 0; p < b_ref.size(); ++p)
        differ += std::memcmp(&b_ref[p], &b_test[p], sizeof(double)) != 0 ? 1 : 0;
      std::string ref_report;
      const bool scalapack_right = check_b(cs, c.a, c.b, lb, b_ref.data(), 1, 2, ref_report) == 0;
      if (differ > 0 && scalapack_right)
        failure +=
            label + "B differs from ScaLAPACK's in " + std::to_string(differ) + " elements\n";
    }
  }
  if (redist_plan_destroy(&plan) != REDIST_SUCCESS)
    failure += "  redist_plan_destroy: " + std::string(redist_last_error()) + "\n";
  return failure;
}

TEST(PlanFromDescriptors, MatchesScalapack) {
  const int np = world_size();
  const int me = world_rank();
  const std::uint64_t seed =
      shared_seed("PlanFromDescriptors.MatchesScalapack", 20261124ULL + static_cast<unsigned>(np));
  Rng rng(seed);
  int failed_cases = 0;
  int run = 0;
  for (int index = 0; index < options().cases; ++index) {
    const PlanCase c = draw(rng, np, index);
    if (options().only_case >= 0 && options().only_case != index) continue;
    if (options().verbose) print0(c.describe());
    ++run;
    watchdog_arm("seed " + std::to_string(seed) + " np " + std::to_string(np) + ", " +
                 c.describe());
    std::string error;
    const int ctxt_a = create_context(c.a.grid, error);
    const int ctxt_b = create_context(c.b.grid, error);
    const int ctxt_i = create_context(c.ictxt, error);
    const int harness_bad = on_any_rank(!error.empty());
    std::string failure = error.empty() ? "" : "  " + error;
    if (harness_bad == 0 && c.ictxt.contains(me)) failure = run_case(c, ctxt_a, ctxt_b, ctxt_i);
    free_context(ctxt_i);
    free_context(ctxt_b);
    free_context(ctxt_a);
    watchdog_disarm();
    if (!failure.empty())
      ADD_FAILURE() << "seed " << seed << " np " << np << ", " << c.describe() << failure;
    failed_cases += on_any_rank(!failure.empty());
  }
  print0("[  CASES   ] " + std::to_string(run) + " plans from descriptors on " +
         std::to_string(np) + " ranks, " + std::to_string(failed_cases) + " failed\n");
  EXPECT_EQ(failed_cases, 0);
}

// --- Errors -------------------------------------------------------------------------------------

/// A 2 x (np/2) -ish case over every process: A 1 x np, B np x 1, both in ICTXT.
struct ErrorSetup {
  MatSpec a, b;
  GridSpec ictxt;
  int ctxt_a = -1, ctxt_b = -1, ctxt_i = -1;
  LocalBuf la, lb;
  std::vector<double> a_buf, b_buf;

  ErrorSetup() {
    const int np = world_size();
    std::vector<int> all(static_cast<std::size_t>(np));
    std::iota(all.begin(), all.end(), 0);
    ictxt.kind = GridKind::Map;
    ictxt.nprow = 1;
    ictxt.npcol = np;
    ictxt.ranks = all;
    a.grid = ictxt;
    b.grid.kind = GridKind::Map;
    b.grid.nprow = np;
    b.grid.npcol = 1;
    b.grid.ranks = all;
    std::reverse(b.grid.ranks.begin(), b.grid.ranks.end());
    for (MatSpec *s : {&a, &b}) {
      s->mg = 9;
      s->ng = 7;
      s->mb = 2;
      s->nb = 3;
      s->lld_extra.assign(static_cast<std::size_t>(np), 1);
    }
    std::string error;
    ctxt_a = create_context(a.grid, error);
    ctxt_b = create_context(b.grid, error);
    ctxt_i = create_context(ictxt, error);
    EXPECT_EQ(error, "");
    const int me = world_rank();
    la = local_buf(a, me);
    lb = local_buf(b, me);
    fill_a(a, la, 1, a_buf);
    fill_sentinel(lb, 2, b_buf);
  }
  ~ErrorSetup() {
    free_context(ctxt_i);
    free_context(ctxt_b);
    free_context(ctxt_a);
  }
  ErrorSetup(const ErrorSetup &) = delete;
  ErrorSetup &operator=(const ErrorSetup &) = delete;

  /// redist_plan_create_scalapack of the whole 9 x 7 matrix with these descriptors and ICTXT;
  /// executes the plan if one is made. Returns the status.
  int create(const std::array<int, 9> &desca, const std::array<int, 9> &descb, int ictxt_handle,
             redist_plan &plan) {
    plan = reinterpret_cast<redist_plan>(&plan); // must be set to NULL on failure
    const int status =
        redist_plan_create_scalapack(9, 7, REDIST_DOUBLE, desca.data(), 1, 1, descb.data(), 1, 1,
                                     ictxt_handle, REDIST_REGION_FULL, 0, nullptr, &plan);
    if (status == REDIST_SUCCESS) redist_plan_execute(plan, a_buf.data(), b_buf.data());
    return status;
  }

  [[nodiscard]] bool b_untouched() const {
    std::vector<double> fresh;
    fill_sentinel(lb, 2, fresh);
    return std::memcmp(fresh.data(), b_buf.data(), fresh.size() * sizeof(double)) == 0;
  }
};

TEST(PlanFromDescriptors, GarbageIctxtEverywhere) {
  ErrorSetup s;
  const std::array<int, 9> desca = descriptor(s.a, s.ctxt_a, s.la);
  const std::array<int, 9> descb = descriptor(s.b, s.ctxt_b, s.lb);
  for (const int garbage : {987654, -7}) {
    watchdog_arm("garbage ICTXT " + std::to_string(garbage));
    redist_plan plan = nullptr;
    const int status = s.create(desca, descb, garbage, plan);
    watchdog_disarm();
    EXPECT_EQ(status, REDIST_ERR_ARGUMENT) << redist_last_error();
    EXPECT_EQ(std::string(redist_last_error()),
              "redist_plan_create: argument ictxt = " + std::to_string(garbage) +
                  ": not a BLACS context of this process");
    EXPECT_EQ(plan, nullptr);
    EXPECT_TRUE(s.b_untouched()) << "B was modified";
  }
}

TEST(PlanFromDescriptors, BadDescriptorOnOneRank) {
  ErrorSetup s;
  const int np = world_size();
  const int me = world_rank();
  const int bad = np - 1; // rank in ICTXT (1 x np, rank order) = world rank
  struct Mutation {
    const char *what;
    bool on_b;
    int field;
    int value;
    std::string message; // on the bad rank
  };
  const std::vector<Mutation> mutations = {
      {"DESCA(DTYPE_) = 7", false, 0, 7,
       "redist_plan_create: DESCA(DTYPE_) = 7 on rank " + std::to_string(bad) +
           " of ICTXT: descriptor type must be 1 (9 integers) or 2 (11 integers, PBLAS's "
           "BLOCK_CYCLIC_2D_INB)"},
      {"DESCB(CTXT_) = 424242", true, 1, 424242,
       "redist_plan_create: argument DESCB(CTXT_) = 424242: not a BLACS context (use -1 on "
       "processes outside the grid)"},
      {"DESCB(LLD_) = 0", true, 8, 0, "redist_plan_create: argument b->lld = 0: must be >= "},
  };
  for (const Mutation &mu : mutations) {
    std::array<int, 9> desca = descriptor(s.a, s.ctxt_a, s.la);
    std::array<int, 9> descb = descriptor(s.b, s.ctxt_b, s.lb);
    if (me == bad) (mu.on_b ? descb : desca)[static_cast<std::size_t>(mu.field)] = mu.value;
    watchdog_arm(std::string("bad descriptor on one rank: ") + mu.what);
    redist_plan plan = nullptr;
    const int status = s.create(desca, descb, s.ctxt_i, plan);
    watchdog_disarm();
    const std::string message = redist_last_error();
    if (me == bad) {
      EXPECT_EQ(status, REDIST_ERR_ARGUMENT) << mu.what << ": " << message;
      EXPECT_EQ(message.rfind(mu.message, 0), 0U) << mu.what << ": " << message;
    } else {
      EXPECT_EQ(status, REDIST_ERR_REMOTE) << mu.what << ": " << message;
      EXPECT_NE(message.find("invalid on rank " + std::to_string(bad)), std::string::npos)
          << mu.what << ": " << message;
    }
    EXPECT_EQ(plan, nullptr) << mu.what;
    EXPECT_TRUE(s.b_untouched()) << mu.what << ": B was modified";
  }
  // And the library works right after.
  redist_plan plan = nullptr;
  EXPECT_EQ(
      s.create(descriptor(s.a, s.ctxt_a, s.la), descriptor(s.b, s.ctxt_b, s.lb), s.ctxt_i, plan),
      REDIST_SUCCESS)
      << redist_last_error();
  std::string report;
  CopySpec cs;
  cs.m = 9;
  cs.n = 7;
  EXPECT_EQ(check_b(cs, s.a, s.b, s.lb, s.b_buf.data(), 1, 2, report), 0) << report;
  redist_plan_destroy(&plan);
}

// B of the 11-integer tests: np x 1 grid (ranks reversed), 9 x 7, IMB_ 1, MB_ 2, INB_ 5, NB_ 3,
// sources 0, LLD_ 10.
std::array<int, 11> first_block_b(const ErrorSetup &s) {
  return {2, s.ctxt_b, 9, 7, 1, 5, 2, 3, 0, 0, 10};
}

// A plan from `desca` into first_block_b executed with this rank's local A `a`; B checked element
// by element: its rows dealt as a first block of 1 row on process row 0, then blocks of 2 from
// process row 1 on; every column local (one grid column).
void expect_copied_into_first_block_b(const ErrorSetup &s, const int *desca, const double *a) {
  const int np = world_size();
  const int pr = np - 1 - world_rank(); // B's grid row of this rank
  const auto row_owner = [&](int g) { return g < 1 ? 0 : ((g - 1) / 2 + 1) % np; };
  const auto row_local = [&](int g) {
    if (g < 1) return g;
    const int block = (g - 1) / 2;
    return (row_owner(g) == 0 ? 1 : 0) + (block / np) * 2 + (g - 1) % 2;
  };
  const std::array<int, 11> descb = first_block_b(s);
  std::vector<double> b(10 * 7 + 3, -1.0);
  redist_plan plan = nullptr;
  ASSERT_EQ(redist_plan_create_scalapack(9, 7, REDIST_DOUBLE, desca, 1, 1, descb.data(), 1, 1,
                                         s.ctxt_i, REDIST_REGION_FULL, 0, nullptr, &plan),
            REDIST_SUCCESS)
      << redist_last_error();
  ASSERT_EQ(redist_plan_execute(plan, a, b.data()), REDIST_SUCCESS) << redist_last_error();
  redist_plan_destroy(&plan);
  std::vector<double> want(b.size(), -1.0);
  for (int gi = 0; gi < 9; ++gi) {
    if (row_owner(gi) != pr) continue;
    for (int gj = 0; gj < 7; ++gj)
      want[static_cast<std::size_t>(row_local(gi) + gj * 10)] =
          Elem<double>::make(a_code(s.a, gi, gj, 1));
  }
  EXPECT_EQ(b, want);
}

// PBLAS's 11-integer descriptors (DTYPE_ = 2): B's first_block_b from A's 9-integer descriptor,
// checked element by element. IMB_ = 0 is an error on its process, REDIST_ERR_REMOTE elsewhere.
TEST(PlanFromDescriptors, ElevenIntegerDescriptors) {
  ErrorSetup s;
  const int np = world_size();
  const int me = world_rank();
  const std::array<int, 9> desca = descriptor(s.a, s.ctxt_a, s.la);
  expect_copied_into_first_block_b(s, desca.data(), s.a_buf.data());

  std::array<int, 11> bad = first_block_b(s);
  if (me == np - 1) bad[4] = 0; // IMB_
  redist_plan plan = nullptr;
  const int status =
      redist_plan_create_scalapack(9, 7, REDIST_DOUBLE, desca.data(), 1, 1, bad.data(), 1, 1,
                                   s.ctxt_i, REDIST_REGION_FULL, 0, nullptr, &plan);
  const std::string message = redist_last_error();
  if (me == np - 1) {
    EXPECT_EQ(status, REDIST_ERR_ARGUMENT) << message;
    EXPECT_EQ(message.rfind("redist_plan_create: argument DESCB(IMB_) = 0: first block size", 0),
              0U)
        << message;
  } else {
    EXPECT_EQ(status, REDIST_ERR_REMOTE) << message;
  }
  EXPECT_EQ(plan, nullptr);
}

// A replicated over the process rows (RSRC_ = -1: every process holds all 9 rows, the same
// values) is read into first_block_b, checked element by element; then into a B replicated over
// the process rows too, every process's copy checked whole.
TEST(PlanFromDescriptors, ReplicatedAAndB) {
  ErrorSetup s;
  const std::array<int, 9> desca = {1, s.ctxt_b, 9, 7, 2, 3, -1, 0, 9};
  std::vector<double> a(9 * 7);
  for (int gj = 0; gj < 7; ++gj)
    for (int gi = 0; gi < 9; ++gi)
      a[static_cast<std::size_t>(gi + gj * 9)] = Elem<double>::make(a_code(s.a, gi, gj, 1));
  expect_copied_into_first_block_b(s, desca.data(), a.data());

  std::array<int, 11> replicated_b = first_block_b(s);
  replicated_b[8] = -1; // RSRC_: every process holds rows 0..8 at their global index
  std::vector<double> b(10 * 7 + 3, -1.0);
  redist_plan plan = nullptr;
  ASSERT_EQ(redist_plan_create_scalapack(9, 7, REDIST_DOUBLE, desca.data(), 1, 1,
                                         replicated_b.data(), 1, 1, s.ctxt_i, REDIST_REGION_FULL, 0,
                                         nullptr, &plan),
            REDIST_SUCCESS)
      << redist_last_error();
  ASSERT_EQ(redist_plan_execute(plan, a.data(), b.data()), REDIST_SUCCESS) << redist_last_error();
  redist_plan_destroy(&plan);
  std::vector<double> want(b.size(), -1.0);
  for (int gi = 0; gi < 9; ++gi)
    for (int gj = 0; gj < 7; ++gj)
      want[static_cast<std::size_t>(gi + gj * 10)] = Elem<double>::make(a_code(s.a, gi, gj, 1));
  EXPECT_EQ(b, want);
}

} // namespace
} // namespace mpitest
