// Error cases of the C API (redist.h): redist_plan_create / redist_plan_execute /
// redist_plan_destroy / redist_plan_get_info.
//
// Each create case starts from the valid redistribution of error_support.hpp (as redist_layout
// structs over MPI_COMM_WORLD), spoils one argument on one rank or on every rank, and checks
// on every rank: the status (REDIST_ERR_ARGUMENT where the bad value was passed,
// REDIST_ERR_REMOTE elsewhere, REDIST_ERR_MISMATCH everywhere when ranks disagree), the text of
// redist_last_error(), that *plan is NULL, and that a valid plan created right after copies
// correctly. Execute cases check that B is left untouched byte for byte.

#include "capi_support.hpp"

#include <redist.h>

#include <gtest/gtest.h>
#include <mpi.h>

#include <algorithm>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <initializer_list>
#include <limits>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

namespace {

using namespace capitest;
using errtest::Data;
using errtest::Scenario;
using mpitest::MatSpec;
using mpitest::world_rank;
using mpitest::world_size;

const char kSides[2] = {'a', 'b'};

std::string field(char side, const char *name) {
  return std::string(1, side) + "->" + name;
}

// ---- redist_plan_create --------------------------------------------------------------------

TEST(CApiErrors, WindowExtentNegative) {
  const int bad = errtest::last_rank();
  create_case(
      "m = -1 everywhere", [](CArgs &x, int) { x.m = -1; },
      create_invalid(-1, "m", -1, "must be >= 0"));
  create_case(
      "m = -1 on the last rank",
      [=](CArgs &x, int rank) {
        if (rank == bad) x.m = -1;
      },
      create_invalid(bad, "m", -1, "must be >= 0"));
  create_case(
      "n = -4 everywhere", [](CArgs &x, int) { x.n = -4; },
      create_invalid(-1, "n", -4, "must be >= 0"));
}

TEST(CApiErrors, UnknownTypeOrRegion) {
  const int bad = errtest::last_rank();
  create_case(
      "type = 42 everywhere", [](CArgs &x, int) { x.type = 42; },
      create_invalid(-1, "type", 42, "unknown redist_type"));
  create_case(
      "type = 6 on the last rank",
      [=](CArgs &x, int rank) {
        if (rank == bad) x.type = 6;
      },
      create_invalid(bad, "type", 6, "unknown redist_type"));
  create_case(
      "region = 9 everywhere", [](CArgs &x, int) { x.region = 9; },
      create_invalid(-1, "region", 9, "unknown redist_region"));
}

TEST(CApiErrors, NegativeEnumValueIsReportedAsPassed) {
  // A C caller passes an int: the message should show -1, not the value converted to an
  // unsigned 32-bit integer (4294967295).
  create_case(
      "type = -1 everywhere", [](CArgs &x, int) { x.type = -1; },
      create_invalid(-1, "type", -1, "unknown redist_type"));
  create_case(
      "region = -2 everywhere", [](CArgs &x, int) { x.region = -2; },
      create_invalid(-1, "region", -2, "unknown redist_region"));
}

TEST(CApiErrors, NullLayout) {
  const int bad = errtest::last_rank();
  create_case(
      "a = NULL everywhere", [](CArgs &x, int) { x.pa = nullptr; },
      create_invalid(-1, "a", 0, "NULL layout"));
  create_case(
      "b = NULL on the last rank",
      [=](CArgs &x, int rank) {
        if (rank == bad) x.pb = nullptr;
      },
      create_invalid(bad, "b", 0, "NULL layout"));
}

TEST(CApiErrors, NullCommunicatorEverywhere) {
  const Scenario s = errtest::standard_scenario();
  CArgs x(s);
  redist_plan plan = nullptr;
  EXPECT_EQ(capitest_plan_create(MPI_COMM_NULL, x.m, x.n, x.type, x.pa, x.pb, x.region, 0, &plan),
            REDIST_ERR_ARGUMENT);
  EXPECT_EQ(std::string(redist_last_error()),
            "redist_plan_create: argument comm = 0: MPI_COMM_NULL");
  EXPECT_EQ(plan, nullptr);
  valid_plan_works("[comm = MPI_COMM_NULL] ");
}

TEST(CApiErrors, NullPlanPointerEverywhere) {
  create_case(
      "plan = NULL everywhere", [](CArgs &x, int) { x.null_plan_pointer = true; },
      create_invalid(-1, "plan", 0, "NULL output pointer"));
}

TEST(CApiErrors, BlockSizeNotPositive) {
  const int bad = errtest::last_rank();
  for (const char side : kSides) {
    create_case(
        field(side, "mb") + " = 0 everywhere", [=](CArgs &x, int) { x.side(side).mb = 0; },
        create_invalid(-1, field(side, "mb"), 0, "block size must be >= 1"));
    create_case(
        field(side, "nb") + " = -1 on the last rank",
        [=](CArgs &x, int rank) {
          if (rank == bad) x.side(side).nb = -1;
        },
        create_invalid(bad, field(side, "nb"), -1, "block size must be >= 1"));
  }
}

TEST(CApiErrors, BlockSizeTimesGridOverflows) {
  // mb * nprow is the period of the row distribution: past INT64_MAX it cannot be computed.
  const Scenario s = errtest::standard_scenario();
  const int nprow = s.a.grid.nprow;
  const int npcol = s.b.grid.npcol;
  if (nprow > 1) {
    const std::int64_t mb = INT64_MAX / nprow + 1;
    create_case(
        "a->mb * nprow > INT64_MAX everywhere", [=](CArgs &x, int) { x.a.mb = mb; },
        create_invalid(-1, "a->mb", mb, "block size times grid rows must be below 2^63"));
  }
  if (npcol > 1) {
    const std::int64_t nb = INT64_MAX / npcol + 1;
    create_case(
        "b->nb * npcol > INT64_MAX on the last rank",
        [=](CArgs &x, int rank) {
          if (rank == errtest::last_rank()) x.b.nb = nb;
        },
        create_invalid(errtest::last_rank(), "b->nb", nb,
                       "block size times grid columns must be below 2^63"));
  }
  // The largest blocks that fit: one block holds all of A's rows / B's columns; the copy
  // must match the oracle.
  Scenario big = s;
  big.a.mb = INT64_MAX / nprow;
  big.b.nb = INT64_MAX / npcol;
  CArgs x(big);
  redist_plan plan = nullptr;
  EXPECT_EQ(redist_plan_create(MPI_COMM_WORLD, x.m, x.n, REDIST_DOUBLE, x.pa, x.pb,
                               REDIST_REGION_FULL, 0, &plan),
            REDIST_SUCCESS)
      << redist_last_error();
  if (everywhere(plan != nullptr)) {
    Data<double> d(big, 1, 2);
    EXPECT_EQ(redist_plan_execute(plan, d.a.data(), d.b.data()), REDIST_SUCCESS)
        << redist_last_error();
    mpitest::CopySpec c;
    c.m = big.m;
    c.n = big.n;
    std::string report;
    EXPECT_EQ(mpitest::check_b(c, big.a, big.b, d.lb, d.b.data(), 1, 2, report), 0) << report;
    EXPECT_EQ(redist_plan_destroy(&plan), REDIST_SUCCESS);
  }
}

TEST(CApiErrors, GlobalExtentNegative) {
  const int bad = errtest::last_rank();
  create_case(
      "a->m = -1 on the last rank",
      [=](CArgs &x, int rank) {
        if (rank == bad) x.a.m = -1;
      },
      create_invalid(bad, "a->m", -1, "global rows must be >= 0"));
  create_case(
      "b->n = -2 everywhere", [](CArgs &x, int) { x.b.n = -2; },
      create_invalid(-1, "b->n", -2, "global columns must be >= 0"));
}

TEST(CApiErrors, GridShapeInvalid) {
  const int p = world_size();
  create_case(
      "a->nprow = 0 everywhere", [](CArgs &x, int) { x.a.nprow = 0; },
      create_invalid(-1, "a->nprow", 0, "grid rows must be >= 1"));
  create_case(
      "b->npcol = -2 everywhere", [](CArgs &x, int) { x.b.npcol = -2; },
      create_invalid(-1, "b->npcol", -2, "grid columns must be >= 1"));
  create_case(
      "a is (P+1) x 1 everywhere",
      [=](CArgs &x, int) {
        x.a.nprow = p + 1;
        x.a.npcol = 1;
        x.a.rsrc = 0;
        x.a.csrc = 0;
      },
      create_invalid(-1, "a->nprow*npcol", p + 1,
                     "grid has more positions than the communicator has processes (" +
                         std::to_string(p) + ")"));
}

TEST(CApiErrors, SourceProcessOutOfRange) {
  const int bad = errtest::last_rank();
  const Scenario s = errtest::standard_scenario();
  const int nprow_a = s.a.grid.nprow;
  // -1 is a matrix replicated over the process rows or columns; below it nothing.
  create_case(
      "a->rsrc = nprow everywhere", [=](CArgs &x, int) { x.a.rsrc = nprow_a; },
      create_invalid(-1, "a->rsrc", nprow_a, "must be -1 (replicated) or in [0, nprow)"));
  create_case(
      "b->csrc = -2 on the last rank",
      [=](CArgs &x, int rank) {
        if (rank == bad) x.b.csrc = -2;
      },
      create_invalid(bad, "b->csrc", -2, "must be -1 (replicated) or in [0, npcol)"));
}

TEST(CApiErrors, RankMapInvalid) {
  const int p = world_size();
  const int bad = errtest::last_rank();
  create_case(
      "a->ranks = NULL everywhere", [](CArgs &x, int) { x.a.ranks = nullptr; },
      create_invalid(-1, "a->ranks", 0, "NULL rank map"));
  create_case(
      "a->ranks[0] = P (out of range) everywhere", [=](CArgs &x, int) { x.ranks_a[0] = p; },
      create_invalid(-1, "a->ranks[0]", p, "not a rank of the communicator"));
  const auto last = static_cast<int>(errtest::standard_scenario().b.grid.ranks.size()) - 1;
  create_case(
      "b->ranks[last] = -1 on the last rank",
      [=](CArgs &x, int rank) {
        if (rank == bad) x.ranks_b[static_cast<std::size_t>(last)] = -1;
      },
      create_invalid(bad, "b->ranks[" + std::to_string(last) + "]", -1,
                     "not a rank of the communicator"));
  if (p >= 2) {
    for (const char side : kSides) {
      create_case(
          field(side, "ranks") + " with a duplicate everywhere",
          [=](CArgs &x, int) { x.ranks(side).back() = x.ranks(side).front(); },
          [=](int rank) {
            // The duplicated value is ranks[0] of the standard grid.
            const Scenario st = errtest::standard_scenario();
            const int dup = (side == 'a' ? st.a : st.b).grid.ranks.front();
            return create_invalid(-1, field(side, "ranks"), dup,
                                  "rank appears twice in the grid")(rank);
          });
    }
    create_case(
        "a->ranks with a duplicate on the last rank only",
        [=](CArgs &x, int rank) {
          if (rank == bad) x.ranks_a.back() = x.ranks_a.front();
        },
        create_invalid(bad, "a->ranks", errtest::standard_scenario().a.grid.ranks.front(),
                       "rank appears twice in the grid"));
  }
}

TEST(CApiErrors, WindowOutsideTheMatrix) {
  const int bad = errtest::last_rank();
  const Scenario s = errtest::standard_scenario();
  const std::string m = std::to_string(s.m);
  const std::string n = std::to_string(s.n);
  create_case(
      "a->i = -1 everywhere", [](CArgs &x, int) { x.a.i = -1; },
      create_invalid(-1, "a->i", -1,
                     "window rows [i, i+" + m + ") outside the " + std::to_string(s.a.mg) +
                         " rows of the matrix"));
  const std::int64_t i_high = s.a.mg - s.m + 1;
  create_case(
      "a->i + m = a->m + 1 on the last rank",
      [=](CArgs &x, int rank) {
        if (rank == bad) x.a.i = i_high;
      },
      create_invalid(bad, "a->i", i_high,
                     "window rows [i, i+" + m + ") outside the " + std::to_string(s.a.mg) +
                         " rows of the matrix"));
  const std::int64_t j_high = s.b.ng - s.n + 1;
  create_case(
      "b->j + n = b->n + 1 everywhere", [=](CArgs &x, int) { x.b.j = j_high; },
      create_invalid(-1, "b->j", j_high,
                     "window columns [j, j+" + n + ") outside the " + std::to_string(s.b.ng) +
                         " columns of the matrix"));
  create_case(
      "m larger than b's rows everywhere", [=](CArgs &x, int) { x.m = s.b.mg; },
      create_invalid(-1, "b->i", s.b.ia - 1,
                     "window rows [i, i+" + std::to_string(s.b.mg) + ") outside the " +
                         std::to_string(s.b.mg) + " rows of the matrix"));
}

TEST(CApiErrors, LeadingDimensionTooSmallOnOneRank) {
  const int bad = errtest::last_rank();
  const Scenario s = errtest::standard_scenario();
  for (const char side : kSides) {
    const MatSpec &ms = side == 'a' ? s.a : s.b;
    const std::int64_t need = std::max<std::int64_t>(1, mpitest::local_buf(ms, bad).locr);
    create_case(
        field(side, "lld") + " = local rows - 1 on the last rank only",
        [=](CArgs &x, int rank) {
          if (rank == bad) x.side(side).lld = need - 1;
        },
        create_invalid(bad, field(side, "lld"), need - 1,
                       "must be >= max(1, local rows) = " + std::to_string(need) + " on rank " +
                           std::to_string(bad)));
  }
}

// A leading dimension whose local array (lld times local columns) would overflow 64-bit
// offsets is refused, naming lld, on the rank that passed it.
TEST(CApiErrors, LeadingDimensionOverflowingOnOneRank) {
  const int bad = errtest::last_rank();
  const Scenario s = errtest::standard_scenario();
  for (const char side : kSides) {
    const MatSpec &ms = side == 'a' ? s.a : s.b;
    const std::int64_t cols = std::max<std::int64_t>(1, mpitest::local_buf(ms, bad).locc);
    const std::int64_t huge = std::int64_t{1} << 62;
    create_case(
        field(side, "lld") + " = 2^62 on the last rank only",
        [=](CArgs &x, int rank) {
          if (rank == bad) x.side(side).lld = huge;
        },
        create_invalid(bad, field(side, "lld"), huge,
                       "lld times the " + std::to_string(cols) +
                           " local columns must be below 2^59 on rank " + std::to_string(bad)));
  }
}

TEST(CApiErrors, ArgumentsDifferBetweenRanks) {
  if (world_size() < 2) GTEST_SKIP() << "needs two ranks";
  const int bad = errtest::last_rank();
  create_case(
      "m + 1 on the last rank",
      [=](CArgs &x, int rank) {
        if (rank == bad) ++x.m;
      },
      create_mismatch());
  create_case(
      "a->mb + 1 on the last rank (lld raised to stay valid)",
      [=](CArgs &x, int rank) {
        if (rank != bad) return;
        ++x.a.mb;
        x.a.lld += x.a.mb;
      },
      create_mismatch());
  create_case(
      "b->ranks permuted on the last rank",
      [=](CArgs &x, int rank) {
        if (rank == bad) std::reverse(x.ranks_b.begin(), x.ranks_b.end());
      },
      create_mismatch());
  create_case(
      "region UPPER on the last rank, FULL elsewhere",
      [=](CArgs &x, int rank) {
        if (rank == bad) x.region = REDIST_REGION_UPPER;
      },
      create_mismatch());
  create_case(
      "type FLOAT on the last rank, DOUBLE elsewhere",
      [=](CArgs &x, int rank) {
        if (rank == bad) x.type = REDIST_FLOAT;
      },
      create_mismatch());
}

TEST(CApiErrors, LayoutDiffersOnAProcessInNeitherGrid) {
  // The last rank holds no position of A's or B's grid (both over processes 0 .. P-2), yet its
  // layouts enter the agreement: a different one is REDIST_ERR_MISMATCH on every rank, not a
  // plan built from the members' view while the outsider believes another transfer.
  if (world_size() < 2) GTEST_SKIP() << "needs two ranks";
  const int outsider = errtest::last_rank();
  Scenario s = errtest::standard_scenario();
  s.a = errtest::subset_a();
  s.b = errtest::subset_b();
  create_case(
      s, "the same layouts everywhere (valid)", [](CArgs &, int) {},
      [](int) {
        return CExpect{REDIST_SUCCESS, ""};
      });
  create_case(
      s, "a->mb + 1 on the rank in neither grid",
      [=](CArgs &x, int rank) {
        if (rank == outsider) ++x.a.mb;
      },
      create_mismatch());
  create_case(
      s, "b->ranks reversed on the rank in neither grid",
      [=](CArgs &x, int rank) {
        if (rank == outsider) std::reverse(x.ranks_b.begin(), x.ranks_b.end());
      },
      create_mismatch());
  create_case(
      s, "a->m + 2 on the rank in neither grid",
      [=](CArgs &x, int rank) {
        if (rank == outsider) x.a.m += 2;
      },
      create_mismatch());
}

TEST(CApiErrors, LldDiffersBetweenRanksIsFine) {
  // lld is this rank's own value: a larger one on one rank is not a mismatch.
  const int bad = errtest::last_rank();
  create_case(
      "a->lld + 5 on the last rank (valid)",
      [=](CArgs &x, int rank) {
        if (rank == bad) x.a.lld += 5;
      },
      [](int) {
        return CExpect{REDIST_SUCCESS, ""};
      });
}

// ---- redist_plan_create_opt: options ---------------------------------------------------------

/// A create_opt case: `set` spoils the options of the ranks it is given (all or the last).
void options_case(const std::string &label, const std::function<void(redist_options &)> &set,
                  int bad, const CExpectFn &expect) {
  create_case(
      label,
      [&](CArgs &x, int rank) {
        x.with_options = true;
        if (bad < 0 || rank == bad) set(x.options);
      },
      expect);
}

std::string known_schedules() {
  std::string names;
  for (int k = 0; redist_schedule_name(k) != nullptr; ++k)
    names += std::string(names.empty() ? "" : ", ") + redist_schedule_name(k);
  return names;
}

TEST(CApiErrors, OptionsInvalid) {
  const int last = errtest::last_rank();
  const std::string unknown = "unknown redist_schedule (known: " + known_schedules() + ")";
  options_case(
      "options->schedule = 99 everywhere", [](redist_options &o) { o.schedule = 99; }, -1,
      create_opt_invalid(-1, "options->schedule", "99", unknown));
  options_case(
      "options->schedule = -1 on the last rank", [](redist_options &o) { o.schedule = -1; }, last,
      create_opt_invalid(last, "options->schedule", "-1", unknown));
  options_case(
      "options->max_concurrent = -1 everywhere", [](redist_options &o) { o.max_concurrent = -1; },
      -1, create_opt_invalid(-1, "options->max_concurrent", "-1", "must be >= 0 (0 = no limit)"));
  options_case(
      "options->max_concurrent = -3 on the last rank",
      [](redist_options &o) { o.max_concurrent = -3; }, last,
      create_opt_invalid(last, "options->max_concurrent", "-3", "must be >= 0 (0 = no limit)"));
  options_case(
      "options->max_memory = -8 everywhere", [](redist_options &o) { o.max_memory = -8; }, -1,
      create_opt_invalid(-1, "options->max_memory", "-8", "must be >= 0 (0 = no cap)"));
  const std::string finite = "must be a finite number >= 0 (0 = default)";
  const double nan = std::numeric_limits<double>::quiet_NaN();
  const double inf = std::numeric_limits<double>::infinity();
  options_case(
      "options->alpha = NaN everywhere", [=](redist_options &o) { o.alpha = nan; }, -1,
      create_opt_invalid(-1, "options->alpha", "nan", finite));
  options_case(
      "options->alpha = +inf on the last rank", [=](redist_options &o) { o.alpha = inf; }, last,
      create_opt_invalid(last, "options->alpha", "inf", finite));
  options_case(
      "options->alpha = -1e-06 everywhere", [](redist_options &o) { o.alpha = -1e-6; }, -1,
      create_opt_invalid(-1, "options->alpha", "-1e-06", finite));
  options_case(
      "options->beta = -inf everywhere (alpha valid)",
      [=](redist_options &o) {
        o.alpha = 1e-5;
        o.beta = -inf;
      },
      -1, create_opt_invalid(-1, "options->beta", "-inf", finite));
  options_case(
      "options->beta = NaN on the last rank", [=](redist_options &o) { o.beta = nan; }, last,
      create_opt_invalid(last, "options->beta", "nan", finite));
  // Valid values that no schedule can honour: refused on every rank, naming the option.
  options_case(
      "options->max_memory = 15 bytes (below one double each way) everywhere",
      [](redist_options &o) { o.max_memory = 15; }, -1,
      [](int) {
        return CExpect{REDIST_ERR_ARGUMENT,
                       "redist_plan_create_opt: argument options: max_memory of 15 bytes is "
                       "below one element sent and one received (16 bytes)"};
      });
}

TEST(CApiErrors, OptionsNullMeansDefaults) {
  const int last = errtest::last_rank();
  const CExpectFn success = [](int) { return CExpect{REDIST_SUCCESS, ""}; };
  create_case(
      "options = NULL everywhere",
      [](CArgs &x, int) {
        x.with_options = true;
        x.popt = nullptr;
      },
      success);
  create_case(
      "options = NULL on the last rank, the defaults elsewhere",
      [=](CArgs &x, int rank) {
        x.with_options = true;
        if (rank == last) x.popt = nullptr;
      },
      success);
}

/// redist_plan_create under each value of `variable`: refused on every rank with
/// "environment variable VARIABLE = 'VALUE': reason" (REDIST_ERR_ARGUMENT, no plan; a valid
/// plan works after it), or made where the reason is null.
void expect_environment(const char *variable,
                        std::initializer_list<std::pair<const char *, const char *>> cases) {
  const Scenario s = errtest::standard_scenario();
  for (const auto &[value, reason] : cases) {
    CArgs x(s);
    redist_plan plan = nullptr;
    setenv(variable, value, 1);
    const int status = capitest_plan_create(MPI_COMM_WORLD, x.m, x.n, x.type, x.pa, x.pb,
                                            REDIST_REGION_FULL, 0, &plan);
    unsetenv(variable);
    const std::string where = std::string("[") + variable + " = '" + value + "'] ";
    if (reason == nullptr) {
      EXPECT_EQ(status, REDIST_SUCCESS) << where << redist_last_error();
      EXPECT_EQ(redist_plan_destroy(&plan), REDIST_SUCCESS);
      continue;
    }
    EXPECT_EQ(status, REDIST_ERR_ARGUMENT) << where;
    EXPECT_EQ(std::string(redist_last_error()), std::string("redist_plan_create: environment "
                                                            "variable ") +
                                                    variable + " = '" + value + "': " + reason)
        << where;
    EXPECT_EQ(plan, nullptr) << where;
    capitest::valid_plan_works(where);
  }
}

TEST(CApiErrors, UnknownSingleCopyEnvironment) {
  // The one rule of environment.hpp: garbage, a number, blanks or another case are refused;
  // empty is unset (the default).
  const char *unknown =
      "unknown (known: auto, never, always, direct, bounced, read-packed, mapped)";
  expect_environment("REDIST_SINGLE_COPY", {{"sometimes", unknown},
                                            {"-1", unknown},
                                            {" never", unknown},
                                            {"NEVER", unknown},
                                            {"", nullptr}});
}

TEST(CApiErrors, ProgressEnvironment) {
  const char *unknown = "unknown (known: none, thread)";
  expect_environment(
      "REDIST_PROGRESS",
      {{"sometimes", unknown},
       {"Thread", unknown},
       // This program's MPI_Init gives MPI_THREAD_SINGLE.
       {"thread", "needs MPI initialised with MPI_THREAD_MULTIPLE (MPI_Init_thread)"},
       {"none", nullptr},
       {"", nullptr}});
}

// REDIST_SINGLE_COPY and REDIST_PROGRESS are refused by every plan kind, not only by 2-D
// plans: N-d plans and batches give the same status and message on every rank, and no plan.
TEST(CApiErrors, EnvironmentRefusedByEveryPlanKind) {
  const int p = world_size();
  const std::int64_t extent = 4 * p;
  const int block_distrib = MPI_DISTRIBUTE_BLOCK;
  const int cyclic_distrib = MPI_DISTRIBUTE_CYCLIC;
  const std::int64_t default_arg = MPI_DISTRIBUTE_DFLT_DARG;
  const std::int64_t one = 1;
  redist_darray a{};
  a.ndims = 1;
  a.gsizes = &extent;
  a.distribs = &block_distrib;
  a.dargs = &default_arg;
  a.psizes = &p;
  a.order = MPI_ORDER_FORTRAN;
  redist_darray b = a;
  b.distribs = &cyclic_distrib;
  b.dargs = &one;
  const Scenario s = errtest::standard_scenario();
  CArgs x(s);
  const redist_batch_op op{REDIST_OP_N, x.m, x.n, REDIST_DOUBLE, x.pa, x.pb, REDIST_REGION_FULL};
  for (const auto &[variable, value, reason] :
       {std::tuple{"REDIST_SINGLE_COPY", "sometimes", "unknown (known: "},
        std::tuple{"REDIST_PROGRESS", "always", "unknown (known: none, thread)"}}) {
    const std::string setting =
        std::string("environment variable ") + variable + " = '" + value + "': " + reason;
    setenv(variable, value, 1);
    redist_plan nd = nullptr;
    const int nd_status =
        redist_nd_plan_create(MPI_COMM_WORLD, REDIST_DOUBLE, &a, &b, nullptr, &nd);
    const std::string nd_message = redist_last_error();
    redist_plan batch = nullptr;
    const int batch_status = redist_plan_create_batch(MPI_COMM_WORLD, 1, &op, nullptr, &batch);
    const std::string batch_message = redist_last_error();
    unsetenv(variable);
    EXPECT_EQ(nd_status, REDIST_ERR_ARGUMENT) << variable << ": " << nd_message;
    EXPECT_EQ(nd, nullptr) << variable;
    EXPECT_EQ(nd_message.rfind("redist_nd_plan_create: " + setting, 0), 0U) << nd_message;
    EXPECT_EQ(batch_status, REDIST_ERR_ARGUMENT) << variable << ": " << batch_message;
    EXPECT_EQ(batch, nullptr) << variable;
    EXPECT_EQ(batch_message.rfind("redist_plan_create_batch: " + setting, 0), 0U) << batch_message;
  }
  // Unset again: both are made.
  redist_plan nd = nullptr;
  EXPECT_EQ(redist_nd_plan_create(MPI_COMM_WORLD, REDIST_DOUBLE, &a, &b, nullptr, &nd),
            REDIST_SUCCESS)
      << redist_last_error();
  EXPECT_EQ(redist_plan_destroy(&nd), REDIST_SUCCESS);
}

// A GEN_BLOCK dimension's psizes is bounded by the communicator before its extents are read:
// psizes 2^28 with an array of one extent is refused naming psizes (before, 2^28 extents were
// read from it).
TEST(CApiErrors, GenBlockPsizesBoundedBeforeItsExtentsAreRead) {
  const std::int64_t extent = 8;
  const int gen_block = REDIST_DISTRIBUTE_GEN_BLOCK;
  const int too_many = 1 << 28;
  const std::int64_t one_extent[1] = {8};
  const std::int64_t *const gen_blocks[1] = {one_extent};
  redist_darray a{};
  a.ndims = 1;
  a.gsizes = &extent;
  a.distribs = &gen_block;
  a.gen_blocks = gen_blocks;
  a.psizes = &too_many;
  a.order = MPI_ORDER_FORTRAN;
  redist_plan plan = nullptr;
  EXPECT_EQ(redist_nd_plan_create(MPI_COMM_WORLD, REDIST_DOUBLE, &a, &a, nullptr, &plan),
            REDIST_ERR_ARGUMENT);
  EXPECT_EQ(plan, nullptr);
  EXPECT_EQ(std::string(redist_last_error())
                .rfind("redist_nd_plan_create: argument a->psizes = 268435456: the grid has more "
                       "positions than the communicator's",
                       0),
            0U)
      << redist_last_error();
}

// An intercommunicator is refused on every rank, naming the argument.
TEST(CApiErrors, IntercommunicatorRefused) {
  if (world_size() < 2) GTEST_SKIP() << "needs two ranks";
  const int rank = world_rank();
  MPI_Comm half = MPI_COMM_NULL;
  ASSERT_EQ(MPI_Comm_split(MPI_COMM_WORLD, rank % 2, rank, &half), MPI_SUCCESS);
  MPI_Comm inter = MPI_COMM_NULL;
  ASSERT_EQ(MPI_Intercomm_create(half, 0, MPI_COMM_WORLD, rank % 2 == 0 ? 1 : 0, 77, &inter),
            MPI_SUCCESS);
  const Scenario s = errtest::standard_scenario();
  CArgs x(s);
  redist_plan plan = nullptr;
  EXPECT_EQ(
      redist_plan_create(inter, x.m, x.n, REDIST_DOUBLE, x.pa, x.pb, REDIST_REGION_FULL, 0, &plan),
      REDIST_ERR_ARGUMENT);
  EXPECT_EQ(plan, nullptr);
  EXPECT_STREQ(redist_last_error(), "redist_plan_create: argument comm: an intercommunicator "
                                    "(redist needs an intracommunicator)");
  MPI_Comm_free(&inter);
  MPI_Comm_free(&half);
}

// redist_alloc / redist_free are local: each rank's mistakes are its own.
TEST(CApiErrors, SharedArrayAllocation) {
  EXPECT_EQ(redist_alloc(64, nullptr), REDIST_ERR_ARGUMENT);
  EXPECT_STREQ(redist_last_error(),
               "redist_alloc: argument memory = 0: NULL pointer to the result");
  void *memory = &memory;
  EXPECT_EQ(redist_alloc(0, &memory), REDIST_SUCCESS);
  EXPECT_EQ(memory, nullptr);
  EXPECT_EQ(redist_free(nullptr), REDIST_SUCCESS);
  int not_allocated = 0;
  EXPECT_EQ(redist_free(&not_allocated), REDIST_ERR_ARGUMENT);
  EXPECT_NE(std::string(redist_last_error()).find("redist_free: argument memory = "),
            std::string::npos)
      << redist_last_error();
  EXPECT_NE(std::string(redist_last_error()).find(": not from redist_alloc, or freed already"),
            std::string::npos)
      << redist_last_error();
  ASSERT_EQ(redist_alloc(1000, &memory), REDIST_SUCCESS) << redist_last_error();
  ASSERT_NE(memory, nullptr);
  static_cast<char *>(memory)[999] = 1;
  EXPECT_EQ(redist_free(memory), REDIST_SUCCESS);
  EXPECT_EQ(redist_free(memory), REDIST_ERR_ARGUMENT); // twice
  // Far more than memory and swap: refused with a reason, nothing allocated.
  memory = &memory;
  EXPECT_EQ(redist_alloc(std::size_t{1} << 60, &memory), REDIST_ERR_NO_MEMORY);
  EXPECT_EQ(memory, nullptr);
  EXPECT_NE(std::string(redist_last_error()).find("redist_alloc: no memory file of "),
            std::string::npos)
      << redist_last_error();
}

TEST(CApiErrors, OptionsDifferBetweenRanks) {
  if (world_size() < 2) GTEST_SKIP() << "needs two ranks";
  const int last = errtest::last_rank();
  const CExpectFn mismatch = create_mismatch("redist_plan_create_opt");
  options_case(
      "options->schedule = caterpillar on the last rank, auto elsewhere",
      [](redist_options &o) { o.schedule = REDIST_SCHEDULE_CATERPILLAR; }, last, mismatch);
  options_case(
      "options->max_concurrent = 1 on the last rank, 0 elsewhere",
      [](redist_options &o) { o.max_concurrent = 1; }, last, mismatch);
  options_case(
      "options->max_memory = 4096 on the last rank, 0 elsewhere",
      [](redist_options &o) { o.max_memory = 4096; }, last, mismatch);
  // The cost model chooses the automatic schedule: ranks with different models could choose
  // different schedules and never match each other's messages.
  options_case(
      "options->alpha = 1e-3 on the last rank, the default elsewhere",
      [](redist_options &o) { o.alpha = 1e-3; }, last, mismatch);
  options_case(
      "options->beta = 1e-6 on the last rank, the default elsewhere",
      [](redist_options &o) { o.beta = 1e-6; }, last, mismatch);
}

// max_memory above 2^53, different by one between ranks: as doubles (the old agreement of
// the ScaLAPACK entries' environment) 2^53 and 2^53 + 1 are the same value; the 64-bit
// agreement must see them differ.
TEST(CApiErrors, MaxMemoryAbove2To53DifferingByOne) {
  if (world_size() < 2) GTEST_SKIP() << "needs two ranks";
  const int last = errtest::last_rank();
  const int rank = world_rank();
  const CExpectFn mismatch = create_mismatch("redist_plan_create_opt");
  for (const std::int64_t base : {std::int64_t{1} << 53, INT64_MAX - 1}) {
    create_case(
        "options->max_memory = " + std::to_string(base + 1) + " on the last rank, " +
            std::to_string(base) + " elsewhere",
        [=](CArgs &x, int) {
          x.with_options = true;
          x.options.max_memory = rank == last ? base + 1 : base;
        },
        mismatch);
  }
}

// ---- redist_plan_execute -------------------------------------------------------------------

/// Execute a valid plan with a NULL local array on `bad`; then execute properly.
void execute_null_case(const Scenario &s, char side, int bad, bool expect_error) {
  const int rank = world_rank();
  const std::string where =
      std::string("[redist_plan_execute] NULL ") + side + " on rank " + std::to_string(bad) + ": ";
  CArgs x(s);
  redist_plan plan = nullptr;
  const int created =
      capitest_plan_create(MPI_COMM_WORLD, x.m, x.n, x.type, x.pa, x.pb, x.region, 0, &plan);
  EXPECT_EQ(created, REDIST_SUCCESS) << where << redist_last_error();
  if (!everywhere(created == REDIST_SUCCESS && plan != nullptr)) return;

  Data<double> d(s, 1, 2);
  const std::vector<double> a_before = d.a;
  const std::vector<double> b_before = d.b;
  const void *a = d.a.data();
  void *b = d.b.data();
  if (rank == bad && side == 'a') a = nullptr;
  if (rank == bad && side == 'b') b = nullptr;
  const int status = redist_plan_execute(plan, a, b);
  const std::string message = redist_last_error();
  if (expect_error) {
    const CExpect want = invalid("redist_plan_execute", bad, std::string(1, side), 0,
                                 std::string("NULL local array but this rank owns ") +
                                     (side == 'a' ? "source" : "destination") + " elements")(rank);
    EXPECT_EQ(status, want.status)
        << where << "status " << redist_status_name(status) << "; message: " << message;
    EXPECT_EQ(message, want.message) << where;
    EXPECT_EQ(errtest::byte_diff(b_before, d.b), "") << where << "B was modified";
  } else {
    EXPECT_EQ(status, REDIST_SUCCESS) << where << message;
    EXPECT_EQ(message, "") << where;
  }
  EXPECT_EQ(errtest::byte_diff(a_before, d.a), "") << where << "A was modified";
  if (!expect_error) {
    mpitest::CopySpec c;
    c.m = s.m;
    c.n = s.n;
    std::string report;
    EXPECT_EQ(mpitest::check_b(c, s.a, s.b, d.lb, d.b.data(), 1, 2, report), 0) << where << report;
  }

  // The same plan, executed properly, still works.
  Data<double> d2(s, 5, 6);
  EXPECT_EQ(redist_plan_execute(plan, d2.a.data(), d2.b.data()), REDIST_SUCCESS)
      << where << "executing the plan again: " << redist_last_error();
  mpitest::CopySpec c;
  c.m = s.m;
  c.n = s.n;
  std::string report;
  EXPECT_EQ(mpitest::check_b(c, s.a, s.b, d2.lb, d2.b.data(), 5, 6, report), 0)
      << where << "executing the plan again copied wrongly:\n"
      << report;
  EXPECT_EQ(redist_plan_destroy(&plan), REDIST_SUCCESS) << where;
}

TEST(CApiErrors, ExecuteWithNullArrayOnAnOwner) {
  const Scenario s = errtest::standard_scenario();
  execute_null_case(s, 'a', errtest::window_holder(s.a, s.m, s.n), true);
  execute_null_case(s, 'b', errtest::window_holder(s.b, s.m, s.n), true);
}

TEST(CApiErrors, ExecuteWithNullArrayOnANonOwnerIsFine) {
  if (world_size() < 2) GTEST_SKIP() << "needs two ranks";
  Scenario s = errtest::standard_scenario();
  s.a = errtest::subset_a(); // the last rank holds nothing of A
  execute_null_case(s, 'a', errtest::last_rank(), false);
}

TEST(CApiErrors, EmptyWindow) {
  // m = 0: create and execute succeed with NULL arrays everywhere and copy nothing.
  for (const bool rows : {true, false}) {
    const Scenario s = errtest::standard_scenario();
    CArgs x(s);
    if (rows)
      x.m = 0;
    else
      x.n = 0;
    redist_plan plan = nullptr;
    EXPECT_EQ(
        capitest_plan_create(MPI_COMM_WORLD, x.m, x.n, x.type, x.pa, x.pb, x.region, 0, &plan),
        REDIST_SUCCESS)
        << redist_last_error();
    if (!everywhere(plan != nullptr)) continue;
    EXPECT_EQ(redist_plan_execute(plan, nullptr, nullptr), REDIST_SUCCESS) << redist_last_error();
    Data<double> d(s, 1, 2);
    const std::vector<double> b_before = d.b;
    EXPECT_EQ(redist_plan_execute(plan, d.a.data(), d.b.data()), REDIST_SUCCESS)
        << redist_last_error();
    EXPECT_EQ(errtest::byte_diff(b_before, d.b), "") << "an empty window modified B";
    EXPECT_EQ(redist_plan_destroy(&plan), REDIST_SUCCESS);
  }
}

TEST(CApiErrors, NullPlanHandles) {
  // Every rank passes the NULL plan (a NULL plan on some ranks only cannot be collective).
  EXPECT_EQ(redist_plan_destroy(nullptr), REDIST_SUCCESS) << redist_last_error();
  redist_plan plan = nullptr;
  EXPECT_EQ(redist_plan_destroy(&plan), REDIST_SUCCESS) << redist_last_error();
  EXPECT_EQ(plan, nullptr);
  double x = 0;
  EXPECT_EQ(redist_plan_execute(nullptr, &x, &x), REDIST_ERR_ARGUMENT);
  EXPECT_EQ(std::string(redist_last_error()), "redist_plan_execute: argument plan = 0: NULL plan");
  redist_plan_info info{};
  EXPECT_EQ(redist_plan_get_info(nullptr, &info), REDIST_ERR_ARGUMENT);
  EXPECT_EQ(std::string(redist_last_error()), "redist_plan_get_info: argument plan = 0: NULL plan");
  {
    // get_info with a NULL output on a real plan (local, no collective).
    const Scenario s = errtest::standard_scenario();
    CArgs args(s);
    redist_plan real = nullptr;
    EXPECT_EQ(capitest_plan_create(MPI_COMM_WORLD, args.m, args.n, args.type, args.pa, args.pb,
                                   args.region, 0, &real),
              REDIST_SUCCESS)
        << redist_last_error();
    if (everywhere(real != nullptr)) {
      EXPECT_EQ(redist_plan_get_info(real, nullptr), REDIST_ERR_ARGUMENT);
      EXPECT_EQ(std::string(redist_last_error()),
                "redist_plan_get_info: argument info = 0: NULL output pointer");
      EXPECT_EQ(redist_plan_get_info(real, &info), REDIST_SUCCESS) << redist_last_error();
      EXPECT_EQ(redist_plan_destroy(&real), REDIST_SUCCESS);
    }
  }
  valid_plan_works("[null plan handles] ");
}

TEST(CApiErrors, TrapezoidPlansStillWorkAfterErrors) {
  create_case(
      "unit_diag with region = 5",
      [](CArgs &x, int) {
        x.region = 5;
        x.unit_diag = 1;
      },
      create_invalid(-1, "region", 5, "unknown redist_region"));
  valid_plan_works("[trapezoid upper] ", REDIST_REGION_UPPER, 0);
  valid_plan_works("[trapezoid lower, unit diagonal] ", REDIST_REGION_LOWER, 1);
}

} // namespace
