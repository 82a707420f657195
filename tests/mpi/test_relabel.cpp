// redist_propose_grid_ranks: the rank order of a destination grid being created that keeps the
// most of a copy on its own process. On random and hand-picked layouts (grids smaller than the
// communicator, 1 x 1 grids, windows, block sizes that do and do not align, communicators in
// another rank order than MPI_COMM_WORLD) it must give every rank the same order, of distinct
// ranks of the communicator; its bytes kept before (identity order) and after (proposed) must
// equal an element-by-element count written here from the block-cyclic formulas (no redist
// code), after >= before, and, on grids of up to 6 positions, after must be the best of every
// assignment of ranks to positions. A plan made with the proposed grid copies exactly `after`
// bytes within processes. Bad arguments: the documented status on every rank, nothing written.

#include "harness.hpp"

#include <redist.h>

#include <gtest/gtest.h>
#include <mpi.h>

#include <algorithm>
#include <cstdint>
#include <numeric>
#include <string>
#include <utility>
#include <vector>

namespace mpitest {
namespace {

constexpr int kUnwritten = -7; // what the outputs hold before the call

/// Grid position (pr + pc*nprow) of `s` holding global element (gi, gj), 0-based.
int position(const MatSpec &s, std::int64_t gi, std::int64_t gj) {
  const auto pr = static_cast<int>((s.rsrc + gi / s.mb) % s.grid.nprow);
  const auto pc = static_cast<int>((s.csrc + gj / s.nb) % s.grid.npcol);
  return pr + pc * s.grid.nprow;
}

/// The C layout of `s` with rank map `ranks` and this rank's lld (1 outside the grid).
redist_layout placed(const MatSpec &s, const std::vector<int> &ranks, int rank) {
  MatSpec with = s;
  with.grid.ranks = ranks;
  int pr = 0;
  int pc = 0;
  return c_layout(s, ranks.data(), with.grid.find(rank, pr, pc) ? with.lld(pr, pc) : 1);
}

struct Case {
  std::int64_t m = 0, n = 0;
  redist_type type = REDIST_DOUBLE;
  MatSpec a, b;               ///< b.grid.ranks is ignored: the order is being chosen
  bool reversed_comm = false; ///< the communicator numbers MPI_COMM_WORLD's ranks backwards
  bool b_ranks_null = true;   ///< pass b.ranks = NULL (else garbage, which must be ignored)
  // Hand-picked cases: the expected order and bytes (empty / -1: not given).
  std::vector<int> want_order;
  std::int64_t want_before = -1, want_after = -1;

  [[nodiscard]] int positions() const { return b.grid.size(); }
  [[nodiscard]] std::string describe() const {
    return "window " + std::to_string(m) + "x" + std::to_string(n) + " type " +
           std::to_string(static_cast<int>(type)) + (reversed_comm ? " reversed comm" : "") +
           "\n    a: " + a.describe() + "\n    b: " + b.describe();
  }
};

/// kept[pos * size + r]: elements of the window on rank r in A and at position pos in B,
/// counted element by element.
std::vector<std::int64_t> kept_table(const Case &c, int size) {
  std::vector<std::int64_t> kept(static_cast<std::size_t>(c.positions() * size), 0);
  for (std::int64_t y = 0; y < c.n; ++y) {
    for (std::int64_t x = 0; x < c.m; ++x) {
      const int owner_a =
          c.a.grid.ranks[static_cast<std::size_t>(position(c.a, c.a.ia - 1 + x, c.a.ja - 1 + y))];
      const int pos_b = position(c.b, c.b.ia - 1 + x, c.b.ja - 1 + y);
      ++kept[static_cast<std::size_t>(pos_b * size + owner_a)];
    }
  }
  return kept;
}

std::int64_t kept_with(const std::vector<std::int64_t> &kept, const std::vector<int> &order,
                       int size) {
  std::int64_t sum = 0;
  for (std::size_t pos = 0; pos < order.size(); ++pos)
    sum += kept[pos * static_cast<std::size_t>(size) + static_cast<std::size_t>(order[pos])];
  return sum;
}

/// The most any assignment of distinct ranks to positions keeps: every one tried.
std::int64_t best_of_all(const std::vector<std::int64_t> &kept, int positions, int size) {
  std::vector<int> order;
  std::vector<bool> used(static_cast<std::size_t>(size), false);
  std::int64_t best = 0;
  const auto place = [&](const auto &self) -> void {
    if (static_cast<int>(order.size()) == positions) {
      best = std::max(best, kept_with(kept, order, size));
      return;
    }
    for (int r = 0; r < size; ++r) {
      if (used[static_cast<std::size_t>(r)]) continue;
      used[static_cast<std::size_t>(r)] = true;
      order.push_back(r);
      self(self);
      order.pop_back();
      used[static_cast<std::size_t>(r)] = false;
    }
  };
  place(place);
  return best;
}

std::string join(const std::vector<int> &v) {
  std::string s;
  for (const int x : v)
    s += (s.empty() ? "" : " ") + std::to_string(x);
  return s;
}

// The checks of one case on `comm`; the failure text (empty: passed).
std::string check_case(const Case &c, MPI_Comm comm) {
  int rank = 0;
  int size = 0;
  MPI_Comm_rank(comm, &rank);
  MPI_Comm_size(comm, &size);
  const int positions = c.positions();
  const redist_layout a = c_layout(c.a, c.a.grid.ranks.data(), -5); // lld is ignored
  const std::vector<int> garbage(static_cast<std::size_t>(positions), -3);
  const redist_layout b = c_layout(c.b, c.b_ranks_null ? nullptr : garbage.data(), 0);
  std::vector<int> order(static_cast<std::size_t>(positions), kUnwritten);
  std::int64_t before = kUnwritten;
  std::int64_t after = kUnwritten;
  const int st =
      redist_propose_grid_ranks(comm, c.m, c.n, c.type, &a, &b, order.data(), &before, &after);
  int worst = st; // a status of any rank: every rank returns here, or none does
  MPI_Allreduce(&st, &worst, 1, MPI_INT, MPI_MAX, comm);
  if (worst != REDIST_SUCCESS)
    return "  status " + std::to_string(st) + " here, " + std::to_string(worst) +
           " on some rank: " + redist_last_error() + "\n";
  // (1) The same order on every rank, distinct ranks of comm: decided from every rank's order,
  // so that every rank goes on (to the plan below) or returns alike.
  std::vector<int> all(static_cast<std::size_t>(positions * size));
  MPI_Allgather(order.data(), positions, MPI_INT, all.data(), positions, MPI_INT, comm);
  for (int r = 1; r < size; ++r) {
    if (!std::equal(all.begin(), all.begin() + positions,
                    all.begin() + std::ptrdiff_t{r} * positions))
      return "  rank " + std::to_string(r) + " got another order than rank 0 (" +
             join(std::vector<int>(all.begin(), all.begin() + positions)) + ")\n";
  }
  std::vector<int> sorted = order;
  std::sort(sorted.begin(), sorted.end());
  if (sorted.front() < 0 || sorted.back() >= size ||
      std::adjacent_find(sorted.begin(), sorted.end()) != sorted.end())
    return "  not distinct ranks of the communicator: " + join(order) + "\n";
  std::string fail;
  // (2) The bytes against the element count.
  const std::int64_t bytes = redist_type_size(c.type);
  const std::vector<std::int64_t> kept = kept_table(c, size);
  std::vector<int> identity(static_cast<std::size_t>(positions));
  std::iota(identity.begin(), identity.end(), 0);
  const std::int64_t count_before = kept_with(kept, identity, size) * bytes;
  const std::int64_t count_after = kept_with(kept, order, size) * bytes;
  if (before != count_before)
    fail += "  bytes_kept_before " + std::to_string(before) + ", counted " +
            std::to_string(count_before) + "\n";
  if (after != count_after)
    fail += "  bytes_kept_after " + std::to_string(after) + ", counted " +
            std::to_string(count_after) + " for order " + join(order) + "\n";
  if (after < before) fail += "  bytes_kept_after < bytes_kept_before\n";
  // (3) The best of every assignment.
  if (positions <= 6) {
    const std::int64_t best = best_of_all(kept, positions, size) * bytes;
    if (after != best)
      fail += "  bytes_kept_after " + std::to_string(after) + ", but an order keeps " +
              std::to_string(best) + "\n";
  }
  if (!c.want_order.empty() && order != c.want_order)
    fail += "  order " + join(order) + ", expected " + join(c.want_order) + "\n";
  if (c.want_before >= 0 && before != c.want_before)
    fail += "  bytes_kept_before " + std::to_string(before) + ", expected " +
            std::to_string(c.want_before) + "\n";
  if (c.want_after >= 0 && after != c.want_after)
    fail += "  bytes_kept_after " + std::to_string(after) + ", expected " +
            std::to_string(c.want_after) + "\n";
  // A plan on the proposed grid copies `after` bytes within processes.
  const redist_layout pa = placed(c.a, c.a.grid.ranks, rank);
  const redist_layout pb = placed(c.b, order, rank);
  redist_plan plan = nullptr;
  const int created =
      redist_plan_create(comm, c.m, c.n, c.type, &pa, &pb, REDIST_REGION_FULL, 0, &plan);
  if (created != REDIST_SUCCESS)
    return fail + "  redist_plan_create on the proposed grid: " + redist_last_error() + "\n";
  redist_plan_info info{};
  redist_plan_get_info(plan, &info);
  redist_plan_destroy(&plan);
  std::int64_t local = 0;
  MPI_Allreduce(&info.bytes_local, &local, 1, MPI_INT64_T, MPI_SUM, comm);
  if (local != after)
    fail += "  the plan copies " + std::to_string(local) + " bytes within processes, not " +
            std::to_string(after) + "\n";
  return fail;
}

// Case c on its communicator under the watchdog; 1 when it failed on any rank.
int run_case(const Case &c, std::uint64_t seed, int index) {
  const std::string what = "seed " + std::to_string(seed) + " case " + std::to_string(index) +
                           " np " + std::to_string(world_size()) + ", " + c.describe();
  watchdog_arm(what);
  MPI_Comm comm = MPI_COMM_WORLD;
  if (c.reversed_comm) MPI_Comm_split(MPI_COMM_WORLD, 0, world_size() - world_rank(), &comm);
  const std::string fail = check_case(c, comm);
  if (c.reversed_comm) MPI_Comm_free(&comm);
  watchdog_disarm();
  if (!fail.empty()) ADD_FAILURE() << what << "\n" << fail;
  return on_any_rank(!fail.empty());
}

Case random_case(Rng &rng, int size) {
  Case c;
  random_window(rng, c.m, c.n);
  c.type = static_cast<redist_type>(rng.uniform(REDIST_FLOAT, REDIST_INT64));
  std::vector<int> pool(static_cast<std::size_t>(size));
  std::iota(pool.begin(), pool.end(), 0);
  c.a = random_matrix(rng, random_grid(rng, pool, static_cast<int>(rng.uniform(1, size)), true),
                      c.m, c.n);
  GridSpec grid;
  random_shape(rng, static_cast<int>(rng.uniform(1, size)), grid.nprow, grid.npcol);
  c.b = random_matrix(rng, grid, c.m, c.n);
  // Blocks that align with A's now and then: the same, or a multiple.
  for (auto [mine, theirs] : {std::pair{&c.b.mb, c.a.mb}, std::pair{&c.b.nb, c.a.nb}}) {
    const std::int64_t r = rng.uniform(0, 2);
    if (r == 0) *mine = theirs;
    if (r == 1) *mine = theirs * rng.uniform(2, 3);
  }
  c.reversed_comm = rng.coin(0.3);
  c.b_ranks_null = rng.coin(0.5);
  return c;
}

// A layout of the whole matrix (window at (0, 0); B's ranks are left empty).
MatSpec whole(std::int64_t mg, std::int64_t ng, std::int64_t mb, std::int64_t nb, int nprow,
              int npcol, std::vector<int> ranks = {}) {
  MatSpec s;
  s.mg = mg;
  s.ng = ng;
  s.mb = mb;
  s.nb = nb;
  s.grid.nprow = nprow;
  s.grid.npcol = npcol;
  s.grid.ranks = std::move(ranks);
  s.lld_extra.assign(static_cast<std::size_t>(nprow * npcol), 0);
  return s;
}

// A hand-picked case: the window, the layouts, and what is known of the answer (the order, the
// bytes kept before and after; empty / -1: checked against the count and brute force only).
Case picked(std::int64_t m, std::int64_t n, redist_type type, MatSpec a, MatSpec b,
            std::vector<int> want_order = {}, std::int64_t want_before = -1,
            std::int64_t want_after = -1) {
  Case c;
  c.m = m;
  c.n = n;
  c.type = type;
  c.a = std::move(a);
  c.b = std::move(b);
  c.want_order = std::move(want_order);
  c.want_before = want_before;
  c.want_after = want_after;
  return c;
}

std::vector<Case> hand_picked_cases(int size) {
  std::vector<Case> out;
  // 1 x 1 grids, smaller than the communicator: the one rank of A takes B's position.
  out.push_back(picked(5, 3, REDIST_DOUBLE, whole(5, 3, 2, 2, 1, 1, {size - 1}),
                       whole(5, 3, 4, 1, 1, 1), {size - 1}, size == 1 ? 5 * 3 * 8 : 0, 5 * 3 * 8));
  // An empty window: nothing to keep, the identity stays.
  std::vector<int> identity(static_cast<std::size_t>(size));
  std::iota(identity.begin(), identity.end(), 0);
  out.push_back(picked(0, 4, REDIST_INT32, whole(3, 4, 1, 1, 1, 1, {0}), whole(3, 4, 1, 1, size, 1),
                       identity, 0, 0));
  if (size >= 2) {
    // Aligned blocks, A's ranks backwards: B takes them backwards and keeps everything.
    std::vector<int> backwards(identity.rbegin(), identity.rend());
    out.push_back(picked(4, 6 * size, REDIST_DOUBLE, whole(4, 6 * size, 4, 3, 1, size, backwards),
                         whole(4, 6 * size, 2, 3, 1, size), backwards, -1, 4 * 6 * size * 8));
    // A grid smaller than the communicator and windows at offsets: A's rows 3..9 in blocks of
    // 3 from row 3 on ranks 0, 1, 0; B's rows 1..7: rows 0..2 at position 0, 3..5 at 1, 6..7
    // at 0.
    Case w = picked(7, 5, REDIST_COMPLEX_DOUBLE, whole(10, 9, 3, 2, 2, 1, {1, 0}),
                    whole(8, 5, 3, 5, 2, 1));
    w.a.ia = 4;
    w.a.ja = 5;
    w.b.ia = 2;
    out.push_back(w);
  }
  if (size >= 3) {
    // docs/schedules.md's example: 6 x 4, rows in blocks of 2 on ranks 0, 1, 2, to blocks of 3
    // on two positions; ranks 0 and 2 keep rows 0-1 and 4-5 (128 bytes) where 0 and 1 keep
    // rows 0-1 and 3 (96 bytes).
    out.push_back(picked(6, 4, REDIST_DOUBLE, whole(6, 4, 2, 4, 3, 1, {0, 1, 2}),
                         whole(6, 4, 3, 4, 2, 1), {0, 2}, 96, 128));
  }
  if (size >= 4) {
    // A 2 x 2 grid to a 1 x 4 grid with column blocks that do not align.
    Case c = picked(9, 11, REDIST_FLOAT, whole(9, 11, 2, 3, 2, 2, {3, 1, 2, 0}),
                    whole(9, 11, 9, 2, 1, 4));
    c.b.csrc = 2;
    out.push_back(c);
  }
  return out;
}

TEST(ProposeGrid, HandPickedLayouts) {
  int failed = 0;
  int index = 0;
  for (const Case &c : hand_picked_cases(world_size())) {
    failed += run_case(c, 0, index++);
    Case reversed = c; // the same in another rank order of the communicator
    reversed.reversed_comm = true;
    reversed.b_ranks_null = false;
    failed += run_case(reversed, 0, index++);
  }
  EXPECT_EQ(failed, 0);
}

TEST(ProposeGrid, RandomLayouts) {
  const int np = world_size();
  const std::uint64_t seed =
      shared_seed("ProposeGrid.RandomLayouts", 99100ULL + static_cast<unsigned>(np));
  Rng rng(seed);
  int failed = 0;
  int run = 0;
  for (int index = 0; index < options().cases; ++index) {
    const Case c = random_case(rng, np);
    if (options().only_case >= 0 && options().only_case != index) continue;
    if (options().verbose) print0(c.describe() + "\n");
    ++run;
    failed += run_case(c, seed, index);
  }
  print0("[  CASES   ] " + std::to_string(run) + " relabelling cases on " + std::to_string(np) +
         " ranks, " + std::to_string(failed) + " failed\n");
  EXPECT_EQ(failed, 0);
}

// ---------------------------------------------------------------------------------------------
// Bad arguments.

/// A column of every rank (np x 1), 3 rows per rank and 4 columns, to a 1 x np grid.
struct Column {
  std::vector<int> ranks;
  redist_layout a{};
  redist_layout b{};
  std::int64_t m = 0;
  std::int64_t n = 4;
  Column() {
    ranks.resize(static_cast<std::size_t>(world_size()));
    std::iota(ranks.begin(), ranks.end(), 0);
    m = 3 * world_size();
    a = {m, n, 3, 2, world_size(), 1, 0, 0, ranks.data(), 0, 0, 3};
    b = {m, n, 3, 1, 1, world_size(), 0, 0, nullptr, 0, 0, 1};
  }
};

struct Outcome {
  std::vector<int> statuses; ///< by rank
  std::string message;       ///< this rank's
  bool untouched = true;     ///< on this rank: nothing written to the outputs
};

Outcome propose(const Column &c, std::int64_t m, bool null_ranks = false) {
  const int positions = std::max(0, c.b.nprow) * std::max(0, c.b.npcol);
  std::vector<int> order(static_cast<std::size_t>(std::max(positions, 1)), kUnwritten);
  std::int64_t before = kUnwritten;
  std::int64_t after = kUnwritten;
  const int st = redist_propose_grid_ranks(MPI_COMM_WORLD, m, c.n, REDIST_DOUBLE, &c.a, &c.b,
                                           null_ranks ? nullptr : order.data(), &before, &after);
  Outcome out;
  out.statuses.resize(static_cast<std::size_t>(world_size()));
  MPI_Allgather(&st, 1, MPI_INT, out.statuses.data(), 1, MPI_INT, MPI_COMM_WORLD);
  out.message = redist_last_error();
  out.untouched = before == kUnwritten && after == kUnwritten &&
                  std::all_of(order.begin(), order.end(), [](int r) { return r == kUnwritten; });
  return out;
}

/// Every rank's status is `here` on the ranks of `where` and `elsewhere` on the others.
void expect_statuses(const Outcome &o, const std::vector<int> &where, int here, int elsewhere) {
  for (int r = 0; r < world_size(); ++r) {
    const bool at = std::find(where.begin(), where.end(), r) != where.end();
    EXPECT_EQ(o.statuses[static_cast<std::size_t>(r)], at ? here : elsewhere)
        << "rank " << r << "; statuses by rank: " << join(o.statuses);
  }
  if (here != REDIST_SUCCESS) {
    EXPECT_TRUE(o.untouched) << "an output was written; " << o.message;
  }
}

std::vector<int> every_rank() {
  std::vector<int> all(static_cast<std::size_t>(world_size()));
  std::iota(all.begin(), all.end(), 0);
  return all;
}

TEST(ProposeGrid, ValidArgumentsOfTheErrorTests) {
  const Column c;
  const Outcome o = propose(c, c.m);
  expect_statuses(o, every_rank(), REDIST_SUCCESS, REDIST_SUCCESS);
  EXPECT_FALSE(o.untouched) << "the outputs were not written";
}

TEST(ProposeGrid, BadBlockSizeEverywhere) {
  Column c;
  c.b.mb = 0;
  const Outcome o = propose(c, c.m);
  expect_statuses(o, every_rank(), REDIST_ERR_ARGUMENT, REDIST_ERR_ARGUMENT);
  EXPECT_NE(o.message.find("redist_propose_grid_ranks: argument b->mb = 0: "), std::string::npos)
      << o.message;
}

TEST(ProposeGrid, BadBlockSizeOnOneRank) {
  Column c;
  const int last = world_size() - 1;
  if (world_rank() == last) c.a.mb = -2;
  const Outcome o = propose(c, c.m);
  expect_statuses(o, {last}, REDIST_ERR_ARGUMENT, REDIST_ERR_REMOTE);
  const std::string want =
      world_rank() == last
          ? "redist_propose_grid_ranks: argument a->mb = -2: "
          : "redist_propose_grid_ranks: an argument is invalid on rank " + std::to_string(last);
  EXPECT_NE(o.message.find(want), std::string::npos) << o.message;
}

TEST(ProposeGrid, NullRanksEverywhere) {
  const Column c;
  const Outcome o = propose(c, c.m, true);
  expect_statuses(o, every_rank(), REDIST_ERR_ARGUMENT, REDIST_ERR_ARGUMENT);
  EXPECT_NE(o.message.find("redist_propose_grid_ranks: argument ranks = 0: NULL"),
            std::string::npos)
      << o.message;
}

TEST(ProposeGrid, NullRanksOnRankZero) {
  const Column c;
  const Outcome o = propose(c, c.m, world_rank() == 0);
  expect_statuses(o, {0}, REDIST_ERR_ARGUMENT, REDIST_ERR_REMOTE);
}

TEST(ProposeGrid, NullSourceRankMap) {
  Column c;
  c.a.ranks = nullptr;
  const Outcome o = propose(c, c.m);
  expect_statuses(o, every_rank(), REDIST_ERR_ARGUMENT, REDIST_ERR_ARGUMENT);
  EXPECT_NE(o.message.find("argument a->ranks"), std::string::npos) << o.message;
}

TEST(ProposeGrid, DestinationGridLargerThanTheCommunicator) {
  Column c;
  c.b.nprow = 2; // 2 x np positions, np ranks
  const Outcome o = propose(c, c.m);
  expect_statuses(o, every_rank(), REDIST_ERR_ARGUMENT, REDIST_ERR_ARGUMENT);
  EXPECT_NE(o.message.find("redist_propose_grid_ranks: argument b->nprow*npcol = " +
                           std::to_string(2 * world_size()) + ": grid has more positions"),
            std::string::npos)
      << o.message;
}

TEST(ProposeGrid, MismatchedWindowAcrossRanks) {
  if (world_size() < 2) GTEST_SKIP() << "needs two ranks";
  const Column c;
  const Outcome o = propose(c, world_rank() == 0 ? c.m - 1 : c.m); // valid on each rank
  expect_statuses(o, every_rank(), REDIST_ERR_MISMATCH, REDIST_ERR_MISMATCH);
  EXPECT_NE(o.message.find("redist_propose_grid_ranks: processes passed different"),
            std::string::npos)
      << o.message;
}

TEST(ProposeGrid, NullCommunicator) {
  const Column c;
  std::vector<int> order(static_cast<std::size_t>(world_size()), kUnwritten);
  const int st = redist_propose_grid_ranks(MPI_COMM_NULL, c.m, c.n, REDIST_DOUBLE, &c.a, &c.b,
                                           order.data(), nullptr, nullptr);
  EXPECT_EQ(st, REDIST_ERR_ARGUMENT) << redist_last_error();
  EXPECT_TRUE(std::all_of(order.begin(), order.end(), [](int r) { return r == kUnwritten; }));
}

} // namespace
} // namespace mpitest
