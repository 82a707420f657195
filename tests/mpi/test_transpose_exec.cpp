// Transposed plans (Transfer::perm = {1, 0}: B(i, j) <- A(j, i)) executed by the
// Executor directly, planned as the C API plans: random transfers (grids over some of the
// ranks, block sizes from 1 to a few hundred, windows at offsets, RSRC/CSRC, padded leading
// dimensions, full and trapezoid regions, 4/8/16-byte elements; all at once, stepwise with and
// without a memory cap, multiphase, in two phases where an intermediate layout applies), each
// executed three times from different source arrays and checked element by element against this
// file's oracle: B(i, j) = A(j, i) over the region of B's window, every other element of B's buffer
// (padding and guard zones included) untouched. Messages between processes of a node take the
// single-copy ways on full regions (the way REDIST_SINGLE_COPY forces, or the cost model's);
// every message of a transposed trapezoid is sent, which the test checks too.
//
// For doubles on a full region with A and B in one BLACS context, B is also compared bit for
// bit with PBLAS's own PDTRAN (alpha = 1, beta = 0) over B's window, the only part of C PDTRAN
// defines.

#include "harness.hpp"

#include "api_internal.hpp"
#include "exec.hpp"
#include "planner.hpp"

#include <gtest/gtest.h>
#include <mpi.h>

#include <array>
#include <complex>
#include <cstdint>
#include <cstring>
#include <memory>
#include <numeric>
#include <string>
#include <type_traits>
#include <vector>

extern "C" void pdtran_(const int *m, const int *n, const double *alpha, const double *a,
                        const int *ia, const int *ja, const int *desca, const double *beta,
                        double *c, const int *ic, const int *jc, const int *descc);

namespace mpitest {
namespace {

using redist::Executor;
using redist::RankPlan;
using redist::ScheduleChoice;
using redist::ScheduleOptions;
using redist::Strategy;

MPI_Comm exec_comm() {
  static MPI_Comm comm = [] {
    MPI_Comm c = MPI_COMM_NULL;
    MPI_Comm_dup(MPI_COMM_WORLD, &c);
    MPI_Comm_set_errhandler(c, MPI_ERRORS_RETURN);
    return c;
  }();
  return comm;
}

struct TransposeCase {
  int index = 0;
  int element_size = 8; ///< 4: float, 8: double, 16: complex<double>
  Region region = Region::Full;
  bool unit_diag = false;
  std::int64_t m = 0, n = 0; ///< B's window; A's is n x m
  MatSpec a, b;
  ScheduleOptions options;
  bool same_grid = false; ///< A and B on one BLACS grid: PDTRAN applies

  [[nodiscard]] std::string describe() const {
    return "transpose case " + std::to_string(index) + ": element size " +
           std::to_string(element_size) + " region " +
           (region == Region::Full    ? "FULL"
            : region == Region::Upper ? "UPPER"
                                      : "LOWER") +
           " unit_diag " + std::to_string(unit_diag) + " m=" + std::to_string(m) +
           " n=" + std::to_string(n) + " schedule " +
           std::string(redist::strategy_name(options.strategy)) + " max_memory " +
           std::to_string(options.max_memory) + "\n    a: " + a.describe() +
           "\n    b: " + b.describe() + "\n";
  }
};

/// Block sizes from 1 to a few hundred (long contiguous pieces, tiles past 32 x 32), or the
/// whole matrix.
std::int64_t draw_block(Rng &rng, std::int64_t extent) {
  const std::int64_t r = rng.uniform(0, 99);
  if (r < 25) return rng.uniform(1, 4);
  if (r < 55) return rng.uniform(5, 40);
  if (r < 85) return rng.uniform(41, 300);
  return std::max<std::int64_t>(extent, 1) + rng.uniform(0, 5);
}

MatSpec draw_matrix(Rng &rng, GridSpec grid, std::int64_t rows, std::int64_t cols) {
  MatSpec s = random_matrix(rng, std::move(grid), rows, cols);
  s.mb = draw_block(rng, s.mg);
  s.nb = rng.coin(0.3) ? s.mb : draw_block(rng, s.ng);
  return s;
}

TransposeCase draw_case(Rng &rng, int np, int index) {
  TransposeCase c;
  c.index = index;
  c.element_size = static_cast<int>(rng.pick(std::vector<std::int64_t>{4, 8, 8, 16}));
  const std::int64_t r = rng.uniform(0, 3);
  c.region = r <= 1 ? Region::Full : r == 2 ? Region::Upper : Region::Lower;
  c.unit_diag = rng.coin(0.5);
  if (rng.coin(0.5)) {
    random_window(rng, c.m, c.n);
  } else {
    c.m = rng.uniform(1, 200);
    c.n = rng.uniform(1, 200);
  }
  std::vector<int> pool(static_cast<std::size_t>(np));
  std::iota(pool.begin(), pool.end(), 0);
  GridSpec ga = random_grid(rng, pool, static_cast<int>(rng.uniform(1, np)), true);
  c.same_grid = rng.coin(0.35);
  if (c.same_grid && rng.coin(0.6)) { // what PDTRAN computes: doubles, the whole window
    c.element_size = 8;
    c.region = Region::Full;
  }
  GridSpec gb =
      c.same_grid ? ga : random_grid(rng, pool, static_cast<int>(rng.uniform(1, np)), true);
  const Strategy strategies[] = {Strategy::all_at_once, Strategy::stepwise, Strategy::stepwise,
                                 Strategy::multiphase, Strategy::automatic};
  c.options.strategy = strategies[rng.uniform(0, 4)];
  c.a = draw_matrix(rng, std::move(ga), c.n, c.m); // A's window is n x m
  c.b = draw_matrix(rng, std::move(gb), c.m, c.n);
  const auto es = static_cast<std::int64_t>(c.element_size);
  if (c.options.strategy == Strategy::stepwise && rng.coin(0.6)) {
    // A chunk of a fraction of the window: messages go in up to 50 sub-steps, split inside
    // columns and tiles.
    const std::int64_t chunk = std::max<std::int64_t>(1, c.m * c.n / rng.uniform(2, 50));
    c.options.max_memory = 2 * es * chunk;
  } else if (c.options.strategy == Strategy::automatic && rng.coin(0.5)) {
    c.options.max_memory = 2 * es * std::max<std::int64_t>(1, c.m * c.n / rng.uniform(2, 8));
  }
  return c;
}

/// The oracle: B's buffer position p after B := A^T on the region (A salt a_salt), B's
/// sentinels of salt b_salt elsewhere.
std::int64_t transposed_code(const TransposeCase &c, const LocalBuf &lb, std::int64_t p, int a_salt,
                             int b_salt) {
  if (lb.member && p < lb.lld * lb.locc) {
    const std::int64_t li = p % lb.lld, lj = p / lb.lld;
    if (li < lb.locr) {
      const MatSpec &b = c.b;
      const std::int64_t gi = local_to_global(li, b.mb, lb.pr, b.rsrc, b.grid.nprow);
      const std::int64_t gj = local_to_global(lj, b.nb, lb.pc, b.csrc, b.grid.npcol);
      const std::int64_t wi = gi - (b.ia - 1), wj = gj - (b.ja - 1);
      if (wi >= 0 && wi < c.m && wj >= 0 && wj < c.n &&
          in_region(c.region, c.unit_diag, c.m, c.n, wi, wj)) {
        return a_code(c.a, c.a.ia - 1 + wj, c.a.ja - 1 + wi, a_salt); // A(j, i)
      }
    }
  }
  return sentinel_code(p, b_salt);
}

template <class T>
std::int64_t check_transposed(const TransposeCase &c, const LocalBuf &lb, const T *buf, int a_salt,
                              int b_salt, std::string &report) {
  std::int64_t bad = 0;
  for (std::int64_t p = 0; p < lb.elems; ++p) {
    const T want = Elem<T>::make(transposed_code(c, lb, p, a_salt, b_salt));
    if (std::memcmp(&want, &buf[p], sizeof(T)) != 0) {
      if (bad < 4) {
        report += "    position " + std::to_string(p) + " (local " + std::to_string(p % lb.lld) +
                  "," + std::to_string(p / lb.lld) + "): expected " +
                  describe_code(code_of(want), c.a) + ", got " +
                  describe_code(code_of(buf[p]), c.a) + "\n";
      }
      ++bad;
    }
  }
  return bad;
}

redist::Transfer transfer_of(const TransposeCase &c) {
  redist::Transfer t;
  t.src = redist::to_layout(c_layout(c.a, c.a.grid.ranks.data(), 1));
  t.dst = redist::to_layout(c_layout(c.b, c.b.grid.ranks.data(), 1));
  t.m = c.m;
  t.n = c.n;
  t.perm = {1, 0};
  t.region.kind = c.region == Region::Upper   ? redist::Region::Kind::upper
                  : c.region == Region::Lower ? redist::Region::Kind::lower
                                              : redist::Region::Kind::full;
  t.region.unit_diag = c.unit_diag;
  return t;
}

struct Tally {
  int chunked_plans = 0;
  int pdtran_compared = 0;
  long long elements_checked = 0;
  int single_copy_plans = 0; ///< plans with a message in a single copy on this rank
  int two_phase_plans = 0;   ///< multiphase plans that run in two phases (the same on every rank)
};

/// B from PBLAS's PDTRAN (alpha 1, beta 0) against the executor's B over B's window, bit for
/// bit (doubles, full region, one context). Collective over every world rank.
std::string compare_with_pdtran(const TransposeCase &c, const LocalBuf &la, const LocalBuf &lb,
                                const std::vector<double> &a, const std::vector<double> &b) {
  std::string error;
  const int ctxt = create_context(c.a.grid, error);
  std::string fail = error.empty() ? "" : "  BLACS: " + error + "\n";
  if (ctxt >= 0 && c.m > 0 && c.n > 0) {
    const std::array<int, 9> desca = descriptor(c.a, ctxt, la);
    const std::array<int, 9> descc = descriptor(c.b, ctxt, lb);
    std::vector<double> pblas;
    fill_sentinel(lb, 6, pblas);
    const int m = static_cast<int>(c.m);
    const int n = static_cast<int>(c.n);
    const int ia = static_cast<int>(c.a.ia);
    const int ja = static_cast<int>(c.a.ja);
    const int ic = static_cast<int>(c.b.ia);
    const int jc = static_cast<int>(c.b.ja);
    const double one = 1.0;
    const double zero = 0.0;
    pdtran_(&m, &n, &one, a.data(), &ia, &ja, desca.data(), &zero, pblas.data(), &ic, &jc,
            descc.data());
    std::int64_t bad = 0;
    std::string report;
    for (std::int64_t lj = 0; lj < lb.locc; ++lj) {
      const std::int64_t wj =
          local_to_global(lj, c.b.nb, lb.pc, c.b.csrc, c.b.grid.npcol) - (c.b.ja - 1);
      for (std::int64_t li = 0; li < lb.locr; ++li) {
        const std::int64_t wi =
            local_to_global(li, c.b.mb, lb.pr, c.b.rsrc, c.b.grid.nprow) - (c.b.ia - 1);
        if (wi < 0 || wi >= c.m || wj < 0 || wj >= c.n) continue; // PDTRAN defines the window
        const auto p = static_cast<std::size_t>(li + lj * lb.lld);
        if (std::memcmp(&pblas[p], &b[p], sizeof(double)) != 0) {
          if (bad < 4) {
            report += "    window (" + std::to_string(wi) + "," + std::to_string(wj) +
                      "): PDTRAN " + show(pblas[p]) + ", redist " + show(b[p]) + "\n";
          }
          ++bad;
        }
      }
    }
    if (bad > 0) {
      fail += "  " + std::to_string(bad) + " elements differ from PDTRAN's, e.g.\n" + report;
    }
  }
  free_context(ctxt);
  return fail;
}

/// Plan `c` on this rank as the C API does, execute it three times and check B. Collective
/// over the world.
template <class T> std::string run_case(const TransposeCase &c, Tally &tally) {
  const MPI_Comm comm = exec_comm();
  int rank = 0;
  int size = 0;
  MPI_Comm_rank(comm, &rank);
  MPI_Comm_size(comm, &size);
  const redist::Transfer t = transfer_of(c);
  const LocalBuf la = local_buf(c.a, rank);
  const LocalBuf lb = local_buf(c.b, rank);
  RankPlan plan = redist::make_rank_plan(t, rank, size);
  const redist::ScheduleInputs local = redist::all_at_once_local(plan, c.options.model, sizeof(T));
  double global[2] = {static_cast<double>(local.all_at_once_buffer_max), local.all_at_once_seconds};
  MPI_Allreduce(MPI_IN_PLACE, global, 2, MPI_DOUBLE, MPI_MAX, comm);
  redist::ScheduleInputs inputs;
  inputs.all_at_once_buffer_max = static_cast<redist::Index>(global[0]);
  inputs.all_at_once_seconds = global[1];
  ScheduleChoice choice;
  const std::string why = redist::choose_schedule(t, plan, c.options, inputs, sizeof(T), choice);
  if (!why.empty()) {
    return "  choose_schedule: " + why + "\n";
  }
  std::string fail;
  const bool two_phases = choice.phases != nullptr;
  tally.two_phase_plans += two_phases ? 1 : 0;
  tally.chunked_plans += choice.chunk_elements > 0 && !choice.steps.empty() ? 1 : 0;
  const std::unique_ptr<Executor> made =
      make_executor(comm, std::move(plan), sizeof(T), la.lld, lb.lld, std::move(choice));
  Executor &executor = *made;

  struct Execution {
    int a_salt, b_salt;
    bool fresh_b;
  };
  const Execution executions[] = {{1, 4, true}, {2, 5, true}, {3, 4, false}};
  std::vector<std::vector<T>> sources(std::size(executions));
  std::vector<T> b1;
  std::vector<T> b2;
  for (std::size_t e = 0; e < std::size(executions); ++e) {
    const Execution &x = executions[e];
    std::vector<T> &a = sources[e];
    fill_a(c.a, la, x.a_salt, a);
    const std::vector<T> a_before = a;
    std::vector<T> &b = x.b_salt == 4 ? b1 : b2;
    if (x.fresh_b) fill_sentinel(lb, x.b_salt, b);
    const std::string what = "execution " + std::to_string(e + 1);
    try {
      executor.execute(a.data(), b.data());
    } catch (const redist::Error &error) {
      fail += "  " + what + " threw: " + error.what() + "\n";
      continue;
    }
    if (a != a_before) fail += "  " + what + ": the source array was modified\n";
    std::string report;
    const std::int64_t bad = check_transposed(c, lb, b.data(), x.a_salt, x.b_salt, report);
    tally.elements_checked += lb.elems;
    if (bad > 0) {
      fail += "  " + what + ": " + std::to_string(bad) +
              " elements of B's local buffer differ from the oracle, e.g.\n" + report;
    }
  }
  const bool single_copy =
      executor.single_copy_receives() != 0 || executor.single_copy_sends() != 0;
  // (In two phases, the phase that copies the trapezoid without transposing may.)
  if (single_copy && c.region != Region::Full && !two_phases) {
    fail += "  a transposed trapezoid's messages went in a single copy\n";
  }
  tally.single_copy_plans += single_copy ? 1 : 0;
  if constexpr (std::is_same_v<T, double>) {
    if (c.same_grid && c.region == Region::Full) {
      fail += compare_with_pdtran(c, la, lb, sources[2], b1);
      ++tally.pdtran_compared;
    }
  }
  return fail;
}

std::string run_typed(const TransposeCase &c, Tally &tally) {
  switch (c.element_size) {
  case 4:
    return run_case<float>(c, tally);
  case 16:
    return run_case<std::complex<double>>(c, tally);
  default:
    return run_case<double>(c, tally);
  }
}

int run_everywhere(const TransposeCase &c, const std::string &origin, Tally &tally) {
  watchdog_arm(origin + ", " + c.describe());
  const std::string fail = run_typed(c, tally);
  watchdog_disarm();
  if (!fail.empty()) ADD_FAILURE() << origin << ", " << c.describe() << fail;
  return on_any_rank(!fail.empty());
}

long long total(long long value) {
  long long sum = 0;
  MPI_Allreduce(&value, &sum, 1, MPI_LONG_LONG, MPI_SUM, MPI_COMM_WORLD);
  return sum;
}

TEST(TransposeExec, RandomTransposesExecutedRepeatedly) {
  const int np = world_size();
  const std::uint64_t seed = shared_seed("TransposeExec.RandomTransposesExecutedRepeatedly",
                                         620000ULL + static_cast<unsigned>(np));
  Rng rng(seed);
  Tally tally;
  int failed = 0;
  int run = 0;
  for (int index = 0; index < options().cases; ++index) {
    const TransposeCase c = draw_case(rng, np, index);
    if (options().only_case >= 0 && options().only_case != index) continue;
    if (options().verbose) print0(c.describe());
    ++run;
    failed +=
        run_everywhere(c, "seed " + std::to_string(seed) + " np " + std::to_string(np), tally);
  }
  print0("[  CASES   ] " + std::to_string(run) + " transpose cases on " + std::to_string(np) +
         " ranks, " + std::to_string(failed) + " failed; stepwise in chunks " +
         std::to_string(total(tally.chunked_plans)) + " (summed over ranks); compared with " +
         "PDTRAN " + std::to_string(tally.pdtran_compared) + "; with a single-copy message " +
         std::to_string(total(tally.single_copy_plans)) + " (summed over ranks); in two phases " +
         std::to_string(tally.two_phase_plans) + "; buffer elements checked " +
         std::to_string(total(tally.elements_checked)) + "\n");
  EXPECT_EQ(failed, 0);
  if (np > 1 && options().only_case < 0) {
    EXPECT_GT(tally.two_phase_plans, 0); // multiphase cases with an intermediate layout
  }
}

/// Rank 0's n x m A (a window at (ia, ja) of an (n + 2) x (m + 1) matrix) to rank 1's (or, on
/// one rank, its own) m x n B, 1 x 1 grids, blocks of `block`, padded leading dimensions.
TransposeCase rank_to_rank_case(int index, int element_size, std::int64_t m, std::int64_t n,
                                std::int64_t block, std::int64_t lld_extra) {
  TransposeCase c;
  c.index = index;
  c.element_size = element_size;
  c.m = m;
  c.n = n;
  c.a.grid.ranks = {0};
  c.b.grid.ranks = {world_size() > 1 ? 1 : 0};
  c.a.mg = n + 2;
  c.a.ng = m + 1;
  c.b.mg = m;
  c.b.ng = n;
  for (MatSpec *s : {&c.a, &c.b}) {
    s->mb = block;
    s->nb = block;
    s->lld_extra = {lld_extra};
  }
  return c;
}

/// Hand-made: tiles of many 32 x 32 sub-blocks; all at once and in stepwise chunks that split
/// columns.
TEST(TransposeExec, LargeTilesInChunks) {
  const int np = world_size();
  Tally tally;
  int failed = 0;
  int index = 0;
  for (const int es : {4, 8, 16}) {
    for (const std::int64_t chunk : {std::int64_t{0}, std::int64_t{977}, std::int64_t{4096}}) {
      TransposeCase c = rank_to_rank_case(index++, es, 131, 97, 300, 3);
      c.a.ia = 3;
      c.a.ja = 2;
      c.options.strategy = chunk > 0 ? Strategy::stepwise : Strategy::all_at_once;
      c.options.max_memory = 2 * es * chunk;
      failed += run_everywhere(c, "hand-made np " + std::to_string(np), tally);
    }
  }
  EXPECT_EQ(failed, 0);
}

/// Hand-made: messages (and at one rank the local part) above kStreamingBytes, whose packing
/// and local transposition write B's columns with streaming stores (copy.hpp's
/// stream_gather), at offsets that start columns off a 16-byte boundary.
TEST(TransposeExec, LargeMessagesStream) {
  const int np = world_size();
  Tally tally;
  int failed = 0;
  int index = 0;
  for (const int es : {4, 8, 16}) {
    TransposeCase c = rank_to_rank_case(index++, es, 1601, 1600, 2000, 1);
    c.a.ia = 2;
    c.a.ja = 2;
    c.b.mg = c.m + 1;
    c.b.ia = 2;
    failed += run_everywhere(c, "hand-made np " + std::to_string(np), tally);
  }
  EXPECT_EQ(failed, 0);
}

} // namespace
} // namespace mpitest
