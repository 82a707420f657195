// The C API (redist.h): plans created on random layouts (0-based windows, column-major rank
// maps, communicators that are MPI_COMM_WORLD or a reordered subset of it), executed several
// times on different data and into different buffers, checked element by element against the
// oracle (LLD padding, guard zones and elements outside the window / trapezoid included), and
// redist_plan_get_info checked against the counts the oracle derives.

#include "harness.hpp"

#include <redist.h>

#include <gtest/gtest.h>
#include <mpi.h>

#include <complex>
#include <cstdint>
#include <cstring>
#include <numeric>
#include <string>
#include <vector>

namespace mpitest {
namespace {

// The schedules this build implements, REDIST_SCHEDULE_AUTO .. kLastSchedule.
constexpr int kLastSchedule = REDIST_SCHEDULE_MULTIPHASE;

// Plans that reported running in two phases (redist_plan_get_info), on this rank.
int g_two_phase_plans = 0;

const char *type_name(redist_type t) {
  switch (t) {
  case REDIST_FLOAT:
    return "FLOAT";
  case REDIST_DOUBLE:
    return "DOUBLE";
  case REDIST_COMPLEX_FLOAT:
    return "COMPLEX_FLOAT";
  case REDIST_COMPLEX_DOUBLE:
    return "COMPLEX_DOUBLE";
  case REDIST_INT32:
    return "INT32";
  case REDIST_INT64:
    return "INT64";
  }
  return "?";
}

struct PlanCase {
  int index = 0;
  redist_type type = REDIST_DOUBLE;
  Region region = Region::Full;
  bool unit_diag = false;
  std::int64_t m = 0, n = 0;
  std::vector<int> members; ///< world ranks of the communicator, in communicator-rank order
  MatSpec a, b;             ///< grids hold communicator ranks
  bool null_when_empty = false;
  int nonmember_lld = 0;
  bool with_options = false; ///< created with redist_plan_create_opt(options)
  redist_options options{};

  [[nodiscard]] CopySpec copy() const { return {region, unit_diag, m, n}; }
  [[nodiscard]] std::string describe() const {
    std::string s = "plan case " + std::to_string(index) + ": type " + type_name(type) +
                    " region " +
                    (region == Region::Full    ? "FULL"
                     : region == Region::Upper ? "UPPER"
                                               : "LOWER") +
                    " unit_diag " + std::to_string(unit_diag) + " m=" + std::to_string(m) +
                    " n=" + std::to_string(n) + "\n    comm = world ranks [";
    for (std::size_t i = 0; i < members.size(); ++i)
      s += (i ? "," : "") + std::to_string(members[i]);
    s += "]";
    if (with_options) {
      s += " schedule " + std::string(redist_schedule_name(options.schedule)) + " max_concurrent " +
           std::to_string(options.max_concurrent) + " max_memory " +
           std::to_string(options.max_memory);
    }
    s += " (comm rank = position)\n    a: " + a.describe() +
         "  (0-based i=" + std::to_string(a.ia - 1) + " j=" + std::to_string(a.ja - 1) +
         ")\n    b: " + b.describe() + "  (0-based i=" + std::to_string(b.ia - 1) +
         " j=" + std::to_string(b.ja - 1) + ")\n";
    return s;
  }
};

PlanCase draw_plan_case(Rng &rng, int np, int index) {
  PlanCase c;
  c.index = index;
  c.type = static_cast<redist_type>(rng.uniform(0, 5));
  const std::int64_t r = rng.uniform(0, 2);
  c.region = r == 0 ? Region::Full : r == 1 ? Region::Upper : Region::Lower;
  c.unit_diag = rng.coin(0.5);
  random_window(rng, c.m, c.n);
  std::vector<int> all(static_cast<std::size_t>(np));
  std::iota(all.begin(), all.end(), 0);
  if (np > 1 && rng.coin(0.3)) {
    rng.shuffle(all);
    all.resize(static_cast<std::size_t>(rng.uniform(1, np - 1)));
  } else if (rng.coin(0.3)) {
    rng.shuffle(all);
  }
  c.members = all;
  const int k = static_cast<int>(all.size());
  std::vector<int> pool(static_cast<std::size_t>(k));
  std::iota(pool.begin(), pool.end(), 0);
  GridSpec ga = random_grid(rng, pool, static_cast<int>(rng.uniform(1, k)), true);
  GridSpec gb =
      rng.coin(0.2) ? ga : random_grid(rng, pool, static_cast<int>(rng.uniform(1, k)), true);
  c.a = random_matrix(rng, std::move(ga), c.m, c.n);
  c.b = random_matrix(rng, std::move(gb), c.m, c.n);
  c.null_when_empty = rng.coin(0.5);
  c.nonmember_lld = static_cast<int>(rng.uniform(-3, 3));
  redist_options_init(&c.options);
  c.with_options = rng.coin(0.6);
  if (c.with_options) {
    // Every schedule, each with and without limits; all-at-once only where it can honour them.
    c.options.schedule = static_cast<int>(rng.uniform(REDIST_SCHEDULE_AUTO, kLastSchedule));
    const bool limits = c.options.schedule != REDIST_SCHEDULE_ALL_AT_ONCE;
    if (limits && rng.coin(0.5))
      c.options.max_memory = 2 * redist_type_size(c.type) * rng.uniform(1, 40);
    if (limits && rng.coin(0.3)) c.options.max_concurrent = static_cast<int>(rng.uniform(1, 4));
  }
  return c;
}

/// Communicator of the case (MPI_COMM_NULL on ranks outside it). Collective over the world.
MPI_Comm make_comm(const PlanCase &c) {
  bool identity = c.members.size() == static_cast<std::size_t>(world_size());
  for (std::size_t i = 0; identity && i < c.members.size(); ++i)
    identity = c.members[i] == static_cast<int>(i);
  if (identity) return MPI_COMM_WORLD; // the same decision on every rank
  const int me = world_rank();
  int pos = -1;
  for (std::size_t i = 0; i < c.members.size(); ++i)
    if (c.members[i] == me) pos = static_cast<int>(i);
  MPI_Comm comm = MPI_COMM_NULL;
  MPI_Comm_split(MPI_COMM_WORLD, pos >= 0 ? 0 : MPI_UNDEFINED, pos, &comm);
  return comm;
}

void free_comm(MPI_Comm &comm) {
  if (comm != MPI_COMM_NULL && comm != MPI_COMM_WORLD) MPI_Comm_free(&comm);
  comm = MPI_COMM_NULL;
}

redist_layout make_layout(const MatSpec &s, const LocalBuf &lb, int nonmember_lld) {
  return c_layout(s, s.grid.ranks.data(), lb.member ? lb.lld : nonmember_lld);
}

/// Number of window elements (not only the region) this rank holds in s.
std::int64_t owned_window(const PlanCase &c, const MatSpec &s, const LocalBuf &lb) {
  return owned_region_count({Region::Full, false, c.m, c.n}, s, lb);
}

struct Exec {
  int a_salt, b_salt;
  bool fresh_b; ///< start from a fresh sentinel buffer (else reuse the previous B)
};

template <class T>
std::string run_plan_case(const PlanCase &c, MPI_Comm comm, redist_plan *keep = nullptr) {
  std::string fail;
  int crank = 0;
  MPI_Comm_rank(comm, &crank);
  const LocalBuf la = local_buf(c.a, crank), lb = local_buf(c.b, crank);
  const redist_layout lay_a = make_layout(c.a, la, c.nonmember_lld);
  const redist_layout lay_b = make_layout(c.b, lb, c.nonmember_lld);
  redist_plan plan = nullptr;
  const redist_region region = c.region == Region::Full    ? REDIST_REGION_FULL
                               : c.region == Region::Upper ? REDIST_REGION_UPPER
                                                           : REDIST_REGION_LOWER;
  int st = c.with_options ? redist_plan_create_opt(comm, c.m, c.n, c.type, &lay_a, &lay_b, region,
                                                   c.unit_diag ? 1 : 0, &c.options, &plan)
                          : redist_plan_create(comm, c.m, c.n, c.type, &lay_a, &lay_b, region,
                                               c.unit_diag ? 1 : 0, &plan);
  if (st != REDIST_SUCCESS || plan == nullptr) {
    return "  redist_plan_create returned " + std::string(redist_status_name(st)) + ": " +
           redist_last_error() + "\n";
  }
  const CopySpec cs = c.copy();
  const bool a_null = c.null_when_empty && owned_window(c, c.a, la) == 0;
  const bool b_null = c.null_when_empty && owned_window(c, c.b, lb) == 0;

  // Execute 1: A(salt 1) -> fresh B1; 2: A(salt 2) -> fresh B2; 3: A(salt 3) -> B1 again;
  // then B2 and B1 again.
  const Exec execs[] = {{1, 4, true}, {2, 5, true}, {3, 4, false}, {6, 5, false}, {7, 4, false}};
  std::vector<T> a, a_orig, b1, b2;
  for (const Exec &e : execs) {
    fill_a(c.a, la, e.a_salt, a);
    a_orig = a;
    std::vector<T> &b = e.b_salt == 4 ? b1 : b2;
    if (e.fresh_b) fill_sentinel(lb, e.b_salt, b);
    st = redist_plan_execute(plan, a_null ? nullptr : a.data(), b_null ? nullptr : b.data());
    const std::string what = "execution with A salt " + std::to_string(e.a_salt) + " into " +
                             (e.fresh_b ? "a fresh B" : "the B of the first execution");
    if (st != REDIST_SUCCESS) {
      fail += "  " + what + ": redist_plan_execute returned " + redist_status_name(st) + ": " +
              redist_last_error() + "\n";
      continue;
    }
    if (std::memcmp(a.data(), a_orig.data(), a.size() * sizeof(T)) != 0)
      fail += "  " + what + ": A's local buffer was modified\n";
    std::string rep;
    const std::int64_t bad = check_b(cs, c.a, c.b, lb, b.data(), e.a_salt, e.b_salt, rep);
    if (bad > 0) {
      fail += "  " + what + ": " + std::to_string(bad) +
              " elements of B's local buffer differ from the oracle, e.g.\n" + rep;
    }
  }

  redist_plan_info info{};
  st = redist_plan_get_info(plan, &info);
  if (st != REDIST_SUCCESS) {
    fail += "  redist_plan_get_info returned " + std::string(redist_status_name(st)) + "\n";
  } else {
    const std::int64_t es = redist_type_size(c.type);
    const std::int64_t mine_a = owned_region_count(cs, c.a, la) * es;
    const std::int64_t mine_b = owned_region_count(cs, c.b, lb) * es;
    if (info.bytes_sent + info.bytes_local != mine_a ||
        info.bytes_received + info.bytes_local != mine_b) {
      fail += "  plan info: bytes_sent " + std::to_string(info.bytes_sent) + " received " +
              std::to_string(info.bytes_received) + " local " + std::to_string(info.bytes_local) +
              ", but this rank holds " + std::to_string(mine_a) +
              " bytes of the source region and " + std::to_string(mine_b) +
              " bytes of the destination region\n";
    }
    if (c.options.max_memory > 0 && info.buffer_bytes > c.options.max_memory) {
      fail += "  plan info: buffer_bytes " + std::to_string(info.buffer_bytes) +
              " above max_memory " + std::to_string(c.options.max_memory) + "\n";
    }
    // multiphase runs one phase, as auto would, when no intermediate layout applies.
    const bool as_requested = c.options.schedule == REDIST_SCHEDULE_AUTO ||
                              info.schedule == c.options.schedule ||
                              c.options.schedule == REDIST_SCHEDULE_MULTIPHASE;
    if (info.schedule == REDIST_SCHEDULE_MULTIPHASE) ++g_two_phase_plans;
    if (info.schedule == REDIST_SCHEDULE_AUTO || redist_schedule_name(info.schedule) == nullptr ||
        !as_requested) {
      fail += "  plan info: schedule " + std::to_string(info.schedule) + " for requested " +
              std::to_string(c.options.schedule) + "\n";
    }
    if ((info.bytes_sent > 0) != (info.send_peers > 0) ||
        (info.bytes_received > 0) != (info.recv_peers > 0)) {
      fail += "  plan info: peers (" + std::to_string(info.send_peers) + " send, " +
              std::to_string(info.recv_peers) + " recv) inconsistent with bytes\n";
    }
  }
  if (keep != nullptr) {
    *keep = plan;
    return fail;
  }
  st = redist_plan_destroy(&plan);
  if (st != REDIST_SUCCESS)
    fail += "  redist_plan_destroy returned " + std::string(redist_status_name(st)) + "\n";
  if (plan != nullptr) fail += "  redist_plan_destroy did not set the plan to NULL\n";
  return fail;
}

std::string run_plan_typed(const PlanCase &c, MPI_Comm comm) {
  switch (c.type) {
  case REDIST_FLOAT:
    return run_plan_case<float>(c, comm);
  case REDIST_DOUBLE:
    return run_plan_case<double>(c, comm);
  case REDIST_COMPLEX_FLOAT:
    return run_plan_case<std::complex<float>>(c, comm);
  case REDIST_COMPLEX_DOUBLE:
    return run_plan_case<std::complex<double>>(c, comm);
  case REDIST_INT32:
    return run_plan_case<std::int32_t>(c, comm);
  case REDIST_INT64:
    return run_plan_case<std::int64_t>(c, comm);
  }
  return "unknown type";
}

// Runs case c on its communicator under the watchdog; 1 when it failed on any world rank (a
// failure is reported where it happened). With `two_phases`, the plan must run in two phases.
int run_case_everywhere(const PlanCase &c, std::uint64_t seed, bool two_phases) {
  const int np = world_size();
  watchdog_arm("seed " + std::to_string(seed) + " np " + std::to_string(np) + ", " + c.describe());
  // Every world rank takes part in the split (a subset communicator needs it).
  MPI_Comm comm = make_comm(c);
  std::string fail;
  if (comm != MPI_COMM_NULL) {
    const int before = g_two_phase_plans;
    fail = run_plan_typed(c, comm);
    if (two_phases && fail.empty() && g_two_phase_plans != before + 1)
      fail = "  the plan did not run in two phases\n";
  }
  free_comm(comm);
  watchdog_disarm();
  if (!fail.empty())
    ADD_FAILURE() << "seed " << seed << " np " << np << ", " << c.describe() << fail;
  int bad = fail.empty() ? 0 : 1, any = 0;
  MPI_Allreduce(&bad, &any, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
  return any;
}

TEST(CApi, RandomPlansExecutedRepeatedly) {
  const int np = world_size();
  const std::uint64_t seed =
      shared_seed("CApi.RandomPlansExecutedRepeatedly", 777000ULL + static_cast<unsigned>(np));
  Rng rng(seed);
  int failed = 0, run = 0;
  for (int index = 0; index < options().cases; ++index) {
    const PlanCase c = draw_plan_case(rng, np, index);
    if (options().only_case >= 0 && options().only_case != index) continue;
    if (options().verbose) print0(c.describe());
    ++run;
    failed += run_case_everywhere(c, seed, false);
  }
  print0("[  CASES   ] " + std::to_string(run) + " plan cases on " + std::to_string(np) +
         " ranks, " + std::to_string(failed) + " failed\n");
  EXPECT_EQ(failed, 0);
}

// Block sizes with Kaushik et al. 1995's intermediates (CYCLIC(lcm) and CYCLIC(gcd)) on equal row
// grids: multiphase must run two phases, and give the oracle's result.
TEST(CApi, MultiphaseRunsInTwoPhases) {
  const int np = world_size();
  if (np < 2) GTEST_SKIP() << "a row grid of one process needs no redistribution of rows";
  const std::uint64_t seed =
      shared_seed("CApi.MultiphaseRunsInTwoPhases", 778000ULL + static_cast<unsigned>(np));
  Rng rng(seed);
  constexpr std::int64_t kBlockPairs[][2] = {{2, 3}, {3, 2}, {4, 6}, {6, 4}, {2, 5}, {3, 4}};
  int failed = 0;
  int run = 0;
  for (int index = 0; run < std::max(1, options().cases / 10); ++index) {
    PlanCase c = draw_plan_case(rng, np, index);
    if (c.a.grid.nprow < 2 || c.a.grid.nprow != c.b.grid.nprow) continue;
    const auto &blocks = kBlockPairs[rng.uniform(0, std::size(kBlockPairs) - 1)];
    c.a.mb = blocks[0];
    c.b.mb = blocks[1];
    c.with_options = true;
    redist_options_init(&c.options);
    c.options.schedule = REDIST_SCHEDULE_MULTIPHASE;
    if (rng.coin(0.3)) c.options.max_concurrent = static_cast<int>(rng.uniform(1, 4));
    ++run;
    failed += run_case_everywhere(c, seed, true);
  }
  print0("[  CASES   ] " + std::to_string(run) + " multiphase plan cases on " + std::to_string(np) +
         " ranks, " + std::to_string(failed) + " failed\n");
  EXPECT_EQ(failed, 0);
}

// Several plans alive at once on the same communicator, executed interleaved and destroyed in
// another order than created.
TEST(CApi, InterleavedPlans) {
  const int np = world_size();
  const std::uint64_t seed =
      shared_seed("CApi.InterleavedPlans", 4242ULL + static_cast<unsigned>(np));
  Rng rng(seed);
  constexpr int kPlans = 3;
  std::vector<PlanCase> cases;
  while (static_cast<int>(cases.size()) < kPlans) {
    PlanCase c = draw_plan_case(rng, np, static_cast<int>(cases.size()));
    if (c.members.size() != static_cast<std::size_t>(np)) continue; // all on MPI_COMM_WORLD
    c.members.resize(static_cast<std::size_t>(np));
    std::iota(c.members.begin(), c.members.end(), 0);
    c.type = REDIST_DOUBLE;
    cases.push_back(std::move(c));
  }
  std::string fail;
  redist_plan plans[kPlans] = {nullptr, nullptr, nullptr};
  // Create all (each already executed three times by run_plan_case), then run more rounds.
  for (int p = 0; p < kPlans; ++p)
    fail += run_plan_case<double>(cases[static_cast<std::size_t>(p)], MPI_COMM_WORLD, &plans[p]);
  const int order[] = {2, 0, 1, 2, 0};
  int salt = 6;
  for (int p : order) {
    if (plans[p] == nullptr) continue;
    const PlanCase &c = cases[static_cast<std::size_t>(p)];
    const LocalBuf la = local_buf(c.a, world_rank()), lb = local_buf(c.b, world_rank());
    std::vector<double> a, b;
    fill_a(c.a, la, salt, a);
    fill_sentinel(lb, salt + 1, b);
    const int st = redist_plan_execute(plans[p], a.data(), b.data());
    if (st != REDIST_SUCCESS) {
      fail += "  interleaved execution of plan " + std::to_string(p) + " returned " +
              redist_status_name(st) + "\n";
    } else {
      std::string rep;
      const std::int64_t bad = check_b(c.copy(), c.a, c.b, lb, b.data(), salt, salt + 1, rep);
      if (bad > 0) {
        fail += "  interleaved execution of plan " + std::to_string(p) + ": " +
                std::to_string(bad) + " wrong elements, e.g.\n" + rep + c.describe();
      }
    }
    salt += 2;
  }
  for (int p : {1, 0, 2}) {
    if (redist_plan_destroy(&plans[p]) != REDIST_SUCCESS || plans[p] != nullptr)
      fail += "  destroying plan " + std::to_string(p) + " failed\n";
  }
  redist_plan none = nullptr;
  if (redist_plan_destroy(&none) != REDIST_SUCCESS) fail += "  destroying a NULL plan failed\n";
  EXPECT_TRUE(fail.empty()) << "seed " << seed << "\n" << fail;
}

} // namespace
} // namespace mpitest
