// Block grid plans through the C API (redist_grid_plan_create) against an oracle written here:
// random block grids (empty blocks, one process owning all, blocks no window touches, several
// blocks per process at scattered offsets with gaps, both orders) to and from block grids and
// 2-D block-cyclic layouts, copies (redist_plan_execute) and B := alpha op(A) + beta B with op
// N, T, C on doubles and complex doubles (alpha, beta among 0, 1 and others), blocking or split
// (begin / end). Element (gi, gj) of A holds a small integer encoding it; every other element
// of A's local array is junk; B starts as sentinels encoding its local position, so the
// expected B (exact: small integers) is computed element by element from the definitions, and
// every element outside the window must keep its sentinel. Bad arguments: the same status on
// every process (the argument error where it is wrong, REDIST_ERR_REMOTE elsewhere,
// REDIST_ERR_MISMATCH when processes disagree), no plan made. A failed completion repaired
// and the plan made anew (mpi_faults.cpp).

#include "api_internal.hpp"
#include "grid_oracle.hpp"
#include "harness.hpp"
#include "mpi_faults.hpp"
#include "single_copy.hpp"

#include <redist.h>

#include <gtest/gtest.h>
#include <mpi.h>

#include <algorithm>
#include <complex>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <string>
#include <vector>

namespace {

using gridtest::a_value;
using gridtest::Complex;
using gridtest::fixed_grid;
using gridtest::Grid;
using gridtest::random_side;
using gridtest::random_splits;
using gridtest::sentinel;
using gridtest::Side;
using mpitest::Rng;

struct Case {
  Side a, b;
  int64_t m = 0, n = 0;
  int op = REDIST_OP_N; // the plan's redist_op
  bool copy = false;    // executed by redist_plan_execute: op(A) unconjugated, no alpha, beta
  bool complex = false;
  bool split = false;
  double alpha = 1, beta = 0;
  bool shared_a = false; // A's local array from redist_alloc: receivers may copy from its mapping
  [[nodiscard]] bool transposed() const { return op == REDIST_OP_T || op == REDIST_OP_C; }
};

Case random_case(Rng &rng, int size) {
  Case c;
  const int kind = static_cast<int>(rng.uniform(0, 2)); // 0 grids, 1 A cyclic, 2 B cyclic
  c.op = static_cast<int>(rng.uniform(0, 2));
  c.copy = rng.coin(0.25);
  c.complex = rng.coin(0.4);
  c.split = rng.coin(0.3);
  const double scalars[] = {0.0, 1.0, 2.0, -1.0, 0.5};
  c.alpha = scalars[rng.uniform(0, 4)];
  c.beta = scalars[rng.uniform(0, 4)];
  const int64_t b_rows = rng.uniform(1, 30), b_cols = rng.uniform(1, 30);
  const int64_t a_rows = rng.uniform(1, 30), a_cols = rng.uniform(1, 30);
  c.a = random_side(rng, kind != 1, a_rows, a_cols, size);
  c.b = random_side(rng, kind != 2, b_rows, b_cols, size);
  const int64_t max_m = std::min(b_rows, c.transposed() ? a_cols : a_rows);
  const int64_t max_n = std::min(b_cols, c.transposed() ? a_rows : a_cols);
  c.m = rng.coin(0.05) ? 0 : rng.uniform(0, max_m);
  c.n = rng.uniform(0, max_n);
  const int64_t am = c.transposed() ? c.n : c.m, an = c.transposed() ? c.m : c.n;
  c.a.grid.i = c.a.cyclic.l.layout.i = rng.uniform(0, a_rows - am);
  c.a.grid.j = c.a.cyclic.l.layout.j = rng.uniform(0, a_cols - an);
  c.b.grid.i = c.b.cyclic.l.layout.i = rng.uniform(0, b_rows - c.m);
  c.b.grid.j = c.b.cyclic.l.layout.j = rng.uniform(0, b_cols - c.n);
  return c;
}

// Messages of the plans made so far on this rank that a single-copy way reads from their
// sender (its array, or its packed buffer) instead of MPI; receives of their executions copied
// from the sender's shared array (redist_alloc).
long long single_copy_receives = 0;
long long array_copies[2] = {};     // between two grids, between a grid and a block-cyclic layout
long long strided_array_copies = 0; // between two grids, A strided along B's columns

// A's local array where the case wants it: a copy in redist_alloc's memory, freed with it.
template <class T> class SourceArray {
public:
  SourceArray(const std::vector<T> &a, bool shared) : a_(a) {
    if (shared && !a.empty() && redist_alloc(a.size() * sizeof(T), &memory_) == REDIST_SUCCESS)
      std::memcpy(memory_, a.data(), a.size() * sizeof(T));
  }
  SourceArray(const SourceArray &) = delete;
  SourceArray &operator=(const SourceArray &) = delete;
  ~SourceArray() { redist_free(memory_); }
  [[nodiscard]] const T *data() const {
    return memory_ != nullptr ? static_cast<const T *>(memory_) : a_.data();
  }

private:
  const std::vector<T> &a_;
  void *memory_ = nullptr;
};

// Run case c with element type T on this rank `executions` times (B reset before each),
// before(e) before execution e and before(-1) after it; "" or the first wrong element.
template <class T>
std::string run(const Case &c, int rank, int executions = 1,
                const std::function<void(int)> &before = nullptr) {
  std::vector<T> a(static_cast<std::size_t>(c.a.size(rank)), T(-7.0));
  std::vector<T> b(static_cast<std::size_t>(c.b.size(rank)));
  for (std::size_t k = 0; k < b.size(); ++k)
    b[k] = sentinel<T>(rank, static_cast<int64_t>(k));
  std::vector<T> expected = b;
  int64_t written = 0; // elements of B's window on this rank
  const bool operation = !c.copy;
  for (int64_t j = 0; j < c.n; ++j) {
    for (int64_t i = 0; i < c.m; ++i) {
      // A's element op(A)(i, j) and where it lives.
      const int64_t gi = c.transposed() ? c.a.wi() + j : c.a.wi() + i;
      const int64_t gj = c.transposed() ? c.a.wj() + i : c.a.wj() + j;
      const auto [from, src] = c.a.locate(gi, gj);
      if (from == rank) a[static_cast<std::size_t>(src)] = a_value<T>(gi, gj);
      const auto [to, dst] = c.b.locate(c.b.wi() + i, c.b.wj() + j);
      if (to != rank) continue;
      ++written;
      T x = a_value<T>(gi, gj);
      if constexpr (std::is_same_v<T, Complex>) {
        if (operation && c.op == REDIST_OP_C) x = std::conj(x);
      }
      T &y = expected[static_cast<std::size_t>(dst)];
      y = !operation ? x : c.beta == 0.0 ? T(c.alpha) * x : T(c.alpha) * x + T(c.beta) * y;
    }
  }
  redist_block_grid ga{}, gb{};
  redist_layout_ext la{}, lb{};
  const redist_any_layout va = c.a.view(rank, ga, la);
  const redist_any_layout vb = c.b.view(rank, gb, lb);
  const redist_type type = std::is_same_v<T, Complex> ? REDIST_COMPLEX_DOUBLE : REDIST_DOUBLE;
  redist_plan plan = nullptr;
  int rc = redist_grid_plan_create(MPI_COMM_WORLD, static_cast<redist_op>(c.op), c.m, c.n, type,
                                   &va, &vb, nullptr, &plan);
  if (rc != REDIST_SUCCESS) return "create: " + std::string(redist_last_error());
  single_copy_receives += static_cast<long long>(plan->executor->single_copy_receives());
  const SourceArray<T> source(a, c.shared_a);
  redist_plan_info info{};
  if (redist_plan_get_info(plan, &info) != REDIST_SUCCESS ||
      info.bytes_received + info.bytes_local != written * static_cast<int64_t>(sizeof(T))) {
    redist_plan_destroy(&plan);
    return "redist_plan_get_info: not the " + std::to_string(written) + " elements of B here";
  }
  const T alpha(c.alpha), beta(c.beta);
  const std::vector<T> initial = b;
  for (int e = 0; e < executions; ++e) {
    b = initial;
    if (before) before(e);
    if (!operation) {
      rc = c.split ? redist_plan_execute_begin(plan, source.data(), b.data())
                   : redist_plan_execute(plan, source.data(), b.data());
    } else {
      rc = c.split ? redist_plan_execute_op_begin(plan, &alpha, source.data(), &beta, b.data())
                   : redist_plan_execute_op(plan, &alpha, source.data(), &beta, b.data());
    }
    if (rc == REDIST_SUCCESS && c.split) rc = redist_plan_execute_end(plan);
    if (before) before(-1);
    if (rc == REDIST_SUCCESS) {
      const auto copies = static_cast<long long>(plan->executor->array_copies());
      array_copies[c.a.is_grid && c.b.is_grid ? 0 : 1] += copies;
      // Along B's contiguous direction A is strided: a transposition between sides of one
      // order, or a row-major side facing a column-major one.
      const bool a_strided =
          (c.a.grid.row_major != 0) != (c.transposed() != (c.b.grid.row_major != 0));
      strided_array_copies += c.a.is_grid && c.b.is_grid && a_strided ? copies : 0;
    }
    if (rc != REDIST_SUCCESS) {
      const std::string error = redist_last_error();
      redist_plan_destroy(&plan);
      return "execution " + std::to_string(e) + ": " + error;
    }
    for (std::size_t k = 0; k < b.size(); ++k) {
      if (b[k] != expected[k]) {
        redist_plan_destroy(&plan);
        return "execution " + std::to_string(e) + ": b[" + std::to_string(k) +
               "] = " + std::to_string(std::real(b[k])) + ", expected " +
               std::to_string(std::real(expected[k]));
      }
    }
  }
  redist_plan_destroy(&plan);
  return "";
}

TEST(GridPlans, RandomGridsMatchTheOracle) {
  const int size = mpitest::world_size();
  const int rank = mpitest::world_rank();
  Rng rng(mpitest::shared_seed("GridPlans.RandomGridsMatchTheOracle", 20261129));
  const long long receives_before = single_copy_receives;
  const long long copies_before[2] = {array_copies[0], array_copies[1]};
  const long long strided_before = strided_array_copies;
  for (int k = 0; k < mpitest::options().cases; ++k) {
    Case c = random_case(rng, size);
    c.shared_a = k % 2 == 1;
    if (mpitest::options().only_case >= 0 && k != mpitest::options().only_case) continue;
    const std::string what = "case " + std::to_string(k) + " (op " + std::to_string(c.op) +
                             (c.copy ? ", copy" : "") + (c.complex ? ", complex" : "") +
                             (c.split ? ", split" : "") + ", alpha " + std::to_string(c.alpha) +
                             ", beta " + std::to_string(c.beta) + ", m " + std::to_string(c.m) +
                             ", n " + std::to_string(c.n) + (c.a.is_grid ? "" : ", A cyclic") +
                             (c.b.is_grid ? "" : ", B cyclic") + ")";
    mpitest::watchdog_arm(what);
    const std::string why = c.complex ? run<Complex>(c, rank) : run<double>(c, rank);
    mpitest::watchdog_disarm();
    ASSERT_EQ(mpitest::on_any_rank(!why.empty()), 0) << what << " on rank " << rank << ": " << why;
  }
  // Where a way that reads from the sender is forced, messages between two column-major block
  // grids (not transposed) must have taken it.
  const char *mode = std::getenv("REDIST_SINGLE_COPY");
  const std::string forced = mode != nullptr ? mode : "";
  if (size > 1 && mpitest::options().only_case < 0 &&
      (forced == "direct" || forced == "bounced" || forced == "read-packed")) {
    long long receives = single_copy_receives - receives_before;
    MPI_Allreduce(MPI_IN_PLACE, &receives, 1, MPI_LONG_LONG, MPI_SUM, MPI_COMM_WORLD);
    EXPECT_GT(receives, 0) << "no message read from its sender with REDIST_SINGLE_COPY=" << forced;
  }
  // Where the sender's array is shared and a way that reads it or that maps is forced, such
  // messages must have been copied from the array (`mapped`: not packed), between two grids
  // and between a grid and a block-cyclic layout (the grid side's parts read one period of
  // the cyclic side each).
  if (size > 1 && mpitest::options().only_case < 0 &&
      (forced == "direct" || forced == "bounced" || forced == "mapped")) {
    long long copies[2] = {array_copies[0] - copies_before[0], array_copies[1] - copies_before[1]};
    MPI_Allreduce(MPI_IN_PLACE, copies, 2, MPI_LONG_LONG, MPI_SUM, MPI_COMM_WORLD);
    EXPECT_GT(copies[0], 0) << "no message between grids copied from a shared array with "
                            << "REDIST_SINGLE_COPY=" << forced;
    // Those between a grid and a block-cyclic layout need messages large enough to publish
    // their offsets (a quarter of their bytes at most): drawn in runs of the default 100
    // cases and more, not always in shorter ones (the valgrind job's 20).
    if (mpitest::options().cases >= 100) {
      EXPECT_GT(copies[1], 0) << "no message between a grid and a block-cyclic layout copied "
                              << "from a shared array with REDIST_SINGLE_COPY=" << forced;
    }
    // A message strided in its sender's array (a transposition, orders facing each other) is
    // never read piece by piece, but copied from a shared array where the receiver maps
    // (drawn in runs of 100 cases too).
    long long strided = strided_array_copies - strided_before;
    MPI_Allreduce(MPI_IN_PLACE, &strided, 1, MPI_LONG_LONG, MPI_SUM, MPI_COMM_WORLD);
    if (forced == "mapped" && mpitest::options().cases >= 100) {
      EXPECT_GT(strided, 0) << "no message strided in its sender's array copied from a shared "
                            << "array with REDIST_SINGLE_COPY=mapped";
    }
  }
}

// Blocks side by side in one local matrix (their columns interleaved in memory, none sharing
// an element) are accepted: every block of A is rank 0's, stored as one column-major (or
// row-major) 9 x 8 matrix with padding; B is a random grid.
TEST(GridPlans, BlocksOfOneLocalMatrix) {
  const int size = mpitest::world_size();
  const int rank = mpitest::world_rank();
  Rng rng(mpitest::shared_seed("GridPlans.BlocksOfOneLocalMatrix", 5));
  for (int k = 0; k < 40; ++k) {
    Case c;
    c.a.grid.row_splits = random_splits(rng, 9);
    c.a.grid.col_splits = random_splits(rng, 8);
    Grid &g = c.a.grid;
    g.row_major = rng.coin(0.5) ? 1 : 0;
    const int64_t ld = g.row_major != 0 ? 8 + rng.uniform(0, 2) : 9 + rng.uniform(0, 2);
    g.local.assign(static_cast<std::size_t>(size), {});
    g.size.assign(static_cast<std::size_t>(size), 1);
    g.size[0] = ld * (g.row_major != 0 ? 9 : 8);
    for (int64_t col = 0; col < g.block_cols(); ++col) {
      for (int64_t row = 0; row < g.block_rows(); ++row) {
        const int64_t r0 = g.row_splits[static_cast<std::size_t>(row)];
        const int64_t c0 = g.col_splits[static_cast<std::size_t>(col)];
        g.owners.push_back(0);
        g.placed.push_back({row, col, g.row_major != 0 ? r0 * ld + c0 : r0 + c0 * ld, ld});
        g.local[0].push_back(g.placed.back());
      }
    }
    c.b = random_side(rng, true, 9, 8, size);
    c.op = static_cast<int>(rng.uniform(0, 1));
    c.m = 8; // fits A (9 x 8) as it is and transposed
    c.n = 8;
    const std::string why = run<double>(c, rank);
    ASSERT_EQ(mpitest::on_any_rank(!why.empty()), 0)
        << "case " << k << " on rank " << rank << ": " << why;
  }
}

// One bad call: `change` edits this rank's copy of a valid grid-to-grid call; `wrong_here`:
// whether this rank's arguments are wrong (else REDIST_ERR_REMOTE), `status` the status
// expected where they are, `words` a part of its message.
struct BadCall {
  std::string name;
  bool one_owner = false;
  std::function<void(Grid &a, redist_any_layout &va, redist_options &o, int rank)> change;
  std::function<bool(int rank)> wrong_here;
  int status = REDIST_ERR_ARGUMENT;
  std::string words;
};

TEST(GridPlans, ErrorsAgreeEverywhere) {
  const int size = mpitest::world_size();
  const int rank = mpitest::world_rank();
  const auto everywhere = [](int) { return true; };
  const auto only = [](int who) { return [who](int r) { return r == who; }; };
  std::vector<BadCall> calls = {
      {"splits not increasing", false,
       [](Grid &a, redist_any_layout &, redist_options &, int) {
         a.row_splits = {0, 7, 6};
       },
       everywhere, REDIST_ERR_ARGUMENT, "row_splits"},
      {"last split not the extent", false,
       [](Grid &a, redist_any_layout &, redist_options &, int) {
         a.col_splits = {0, 2, 4};
       },
       everywhere, REDIST_ERR_ARGUMENT, "col_splits[2]"},
      {"owner out of range", false,
       [size](Grid &a, redist_any_layout &, redist_options &, int) { a.owners[1] = size; },
       everywhere, REDIST_ERR_ARGUMENT, "owners[1]"},
      {"window outside", false,
       [](Grid &a, redist_any_layout &, redist_options &, int) { a.i = 1; }, everywhere,
       REDIST_ERR_ARGUMENT, "a->grid->i"},
      {"block listed twice", false,
       [](Grid &a, redist_any_layout &, redist_options &, int r) {
         if (r == 0) a.local[0].push_back(a.local[0][0]);
       },
       only(0), REDIST_ERR_ARGUMENT, "twice"},
      {"ld too small", false,
       [](Grid &a, redist_any_layout &, redist_options &, int r) {
         if (r == 0) a.local[0][0].ld = 2;
       },
       only(0), REDIST_ERR_ARGUMENT, ".ld"},
      {"blocks overlap", true,
       [](Grid &a, redist_any_layout &, redist_options &, int r) {
         if (r == 0) a.local[0][2].offset = a.local[0][1].offset + 1;
       },
       only(0), REDIST_ERR_ARGUMENT, "shares elements"},
      {"offset beyond 2^63 bytes", false,
       [](Grid &a, redist_any_layout &, redist_options &, int r) {
         if (r == 0) a.local[0][0].offset = INT64_MAX / 8;
       },
       only(0), REDIST_ERR_ARGUMENT, "2^63"},
      {"no block grid", false,
       [](Grid &, redist_any_layout &va, redist_options &, int) {
         va.kind = REDIST_LAYOUT_BLOCK_CYCLIC;
         va.cyclic = nullptr;
       },
       everywhere, REDIST_ERR_ARGUMENT, "a->cyclic"},
      {"unknown kind", false,
       [](Grid &, redist_any_layout &va, redist_options &, int) {
         const int unknown = 7; // as a C caller may pass
         std::memcpy(&va.kind, &unknown, sizeof unknown);
       },
       everywhere, REDIST_ERR_ARGUMENT, "a->kind"},
      {"stepwise schedule", false,
       [](Grid &, redist_any_layout &, redist_options &o, int) {
         o.schedule = REDIST_SCHEDULE_STEPWISE;
       },
       everywhere, REDIST_ERR_ARGUMENT, "all at once"},
  };
  if (size > 1) {
    calls.push_back({"block not this rank's", false,
                     [size](Grid &a, redist_any_layout &, redist_options &, int r) {
                       if (r == size - 1)
                         a.local[static_cast<std::size_t>(r)].push_back(a.placed[0]);
                     },
                     only(size - 1), REDIST_ERR_ARGUMENT, "not by this rank"});
    calls.push_back({"windows differ", false,
                     [](Grid &a, redist_any_layout &, redist_options &, int r) {
                       if (r == 0) a.j = 1;
                     },
                     [](int) { return true; }, REDIST_ERR_MISMATCH, ""});
    calls.push_back({"splits differ", false,
                     [](Grid &a, redist_any_layout &, redist_options &, int r) {
                       if (r == 1) a.col_splits = {0, 1, 5};
                     },
                     [](int) { return true; }, REDIST_ERR_MISMATCH, ""});
  }
  for (const BadCall &bad : calls) {
    Grid a = fixed_grid(size, bad.one_owner);
    const Grid b = fixed_grid(size, false);
    redist_block_grid ga{}, gb = b.view(rank);
    redist_any_layout va{REDIST_LAYOUT_BLOCK_GRID, nullptr, &ga};
    const redist_any_layout vb{REDIST_LAYOUT_BLOCK_GRID, nullptr, &gb};
    redist_options o;
    redist_options_init(&o);
    bad.change(a, va, o, rank);
    ga = a.view(rank);
    if (bad.name == "last split not the extent") ga.n = 5;
    redist_plan plan = nullptr;
    const int64_t m = bad.name == "window outside" ? 6 : 5;
    const int rc = redist_grid_plan_create(MPI_COMM_WORLD, REDIST_OP_N, m, 4, REDIST_DOUBLE, &va,
                                           &vb, &o, &plan);
    const std::string message = rc == REDIST_SUCCESS ? "" : redist_last_error();
    const int expected = bad.wrong_here(rank) ? bad.status : REDIST_ERR_REMOTE;
    EXPECT_EQ(rc, expected) << bad.name << " on rank " << rank << ": " << message;
    EXPECT_EQ(plan, nullptr) << bad.name;
    if (rc == bad.status && !bad.words.empty()) {
      EXPECT_NE(message.find(bad.words), std::string::npos) << bad.name << ": " << message;
    }
    if (plan != nullptr) redist_plan_destroy(&plan);
  }
}

// An execution with a NULL local array where this process holds elements of A: the argument
// error here, REDIST_ERR_REMOTE elsewhere, B untouched everywhere; the plan then still runs.
TEST(GridPlans, ExecutionErrorsAgreeEverywhere) {
  const int size = mpitest::world_size();
  const int rank = mpitest::world_rank();
  Case c;
  c.a.grid = fixed_grid(size, false);
  c.b.grid = fixed_grid(size, true);
  c.m = 6;
  c.n = 5;
  c.copy = true;
  redist_block_grid ga{}, gb{};
  redist_layout_ext unused{};
  const redist_any_layout va = c.a.view(rank, ga, unused);
  const redist_any_layout vb = c.b.view(rank, gb, unused);
  redist_plan plan = nullptr;
  ASSERT_EQ(redist_grid_plan_create(MPI_COMM_WORLD, REDIST_OP_N, 6, 5, REDIST_DOUBLE, &va, &vb,
                                    nullptr, &plan),
            REDIST_SUCCESS)
      << redist_last_error();
  std::vector<double> a(static_cast<std::size_t>(c.a.size(rank)), 1.0);
  std::vector<double> b(static_cast<std::size_t>(c.b.size(rank)), -1.0);
  const bool null_here = rank == 3 % size; // owns block 3 of A
  int rc = redist_plan_execute(plan, null_here ? nullptr : a.data(), b.data());
  EXPECT_EQ(rc, null_here ? REDIST_ERR_ARGUMENT : REDIST_ERR_REMOTE) << redist_last_error();
  EXPECT_TRUE(std::all_of(b.begin(), b.end(), [](double x) { return x == -1.0; }));
  rc = redist_plan_execute(plan, a.data(), b.data());
  EXPECT_EQ(rc, REDIST_SUCCESS) << redist_last_error();
  if (rank == 0) { // B is rank 0's: its window all copied
    EXPECT_EQ(std::count(b.begin(), b.end(), 1.0), 30);
  }
  redist_plan_destroy(&plan);
}

// A receive whose completion fails on rank 0 in the second execution: the executor repairs it
// (B right), the third execution makes the plan anew from its kept rank plan (B right again).
// The first cross-memory read of one process fails (injected) while grid plans are made and
// run: where it is the read of a sender's rectangle offsets (Negotiation::read_grid_sources),
// that message stays packed by its sender; where it is an execution's read, the repair sends
// the message again. Either way B is the oracle's on every process.
TEST(GridPlans, FailedReadOfASendersOffsetsOrMessageLeavesBRight) {
  namespace sc = redist::single_copy;
  const int size = mpitest::world_size();
  const int rank = mpitest::world_rank();
  if (size < 2) GTEST_SKIP() << "no messages between processes on one";
  Rng rng(mpitest::shared_seed("GridPlans.FailedReadOfASendersOffsetsOrMessageLeavesBRight", 91));
  long long injected = 0;
  for (int k = 0; k < 40; ++k) {
    Case c = random_case(rng, size);
    if (!c.a.is_grid || !c.b.is_grid) continue;
    const long long before = sc::injected_failures(sc::Injected::read);
    if (rank == k % size) sc::inject_failures(sc::Injected::read, 0, 1);
    const std::string why = c.complex ? run<Complex>(c, rank, 2) : run<double>(c, rank, 2);
    sc::inject_failures(sc::Injected::read, 0, 0);
    injected += sc::injected_failures(sc::Injected::read) - before;
    ASSERT_EQ(mpitest::on_any_rank(!why.empty()), 0)
        << "case " << k << " on rank " << rank << ": " << why;
  }
  long long total = 0;
  MPI_Allreduce(&injected, &total, 1, MPI_LONG_LONG, MPI_SUM, MPI_COMM_WORLD);
  const char *mode = std::getenv("REDIST_SINGLE_COPY");
  if (mode != nullptr && std::string(mode) == "direct") {
    EXPECT_GT(total, 0);
  }
}

TEST(GridPlans, FailedCompletionRepairedAndPlanMadeAnew) {
  const int size = mpitest::world_size();
  const int rank = mpitest::world_rank();
  if (size < 2) GTEST_SKIP() << "no messages between processes on one";
  Rng rng(mpitest::shared_seed("GridPlans.FailedCompletionRepairedAndPlanMadeAnew", 77));
  long long injected = 0;
  for (int k = 0; k < 30; ++k) {
    const Case c = random_case(rng, size);
    const long long before_case = faults::injected();
    const auto arm = faults::one_receive_fails_in_second_execution(rank);
    const std::string why =
        c.complex ? run<Complex>(c, rank, 3, arm) : run<double>(c, rank, 3, arm);
    injected += faults::injected() - before_case;
    ASSERT_EQ(mpitest::on_any_rank(!why.empty()), 0)
        << "case " << k << " on rank " << rank << ": " << why;
  }
  long long total = 0;
  MPI_Allreduce(&injected, &total, 1, MPI_LONG_LONG, MPI_SUM, MPI_COMM_WORLD);
  EXPECT_GT(total, 0);
}

} // namespace
