// Batches of block grid operations through the C API (redist_grid_batch_create) against the
// oracle of grid_oracle.hpp (written apart from src/): random batches of 1 to 5 operations, each
// grid to grid, block-cyclic to grid, grid to block-cyclic or block-cyclic to block-cyclic,
// op N, T or C, on doubles or complex doubles, with its own alpha and beta (NULL alphas: 1,
// NULL betas: 0), executed blocking (redist_plan_execute_batch) or split (_batch_begin /
// redist_plan_execute_end), twice on the same plan. Every element of every B is compared with
// the oracle's; those outside the windows keep their sentinels. Bad arguments in operation k:
// the argument error naming ops[k] where it is wrong, REDIST_ERR_REMOTE naming ops[k]
// elsewhere, REDIST_ERR_MISMATCH naming ops[k] when the processes disagree, no plan; a bad
// execution argument of operation k: the same on every process, every B untouched. A failed
// completion repaired, and the plan made anew from its kept operations (mpi_faults.cpp).

#include "grid_oracle.hpp"
#include "harness.hpp"
#include "mpi_faults.hpp"

#include <redist.h>

#include <gtest/gtest.h>
#include <mpi.h>

#include <algorithm>
#include <complex>
#include <cstdint>
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
using gridtest::sentinel;
using gridtest::Side;
using mpitest::Rng;

// One operation of a batch.
struct OpCase {
  Side a, b;
  int64_t m = 0, n = 0;
  int op = REDIST_OP_N;
  bool complex = false;
  double alpha = 1, beta = 0;
  [[nodiscard]] bool transposed() const { return op == REDIST_OP_T || op == REDIST_OP_C; }
  [[nodiscard]] std::string describe() const {
    return std::string("op ") + std::to_string(op) + (complex ? " complex" : " real") +
           (a.is_grid ? " A grid" : " A cyclic") + (b.is_grid ? " B grid" : " B cyclic") + " m " +
           std::to_string(m) + " n " + std::to_string(n) + " alpha " + std::to_string(alpha) +
           " beta " + std::to_string(beta);
  }
};

struct BatchCase {
  std::vector<OpCase> ops;
  bool split = false;
  bool null_alphas = false; // alpha 1 for every operation
  bool null_betas = false;  // beta 0 for every operation
};

OpCase random_op(Rng &rng, int size, bool unit_alpha, bool zero_beta) {
  OpCase c;
  const int kind = static_cast<int>(rng.uniform(0, 3)); // grids, A cyclic, B cyclic, both cyclic
  c.op = static_cast<int>(rng.uniform(0, 2));
  c.complex = rng.coin(0.4);
  const double scalars[] = {0.0, 1.0, 2.0, -1.0, 0.5};
  c.alpha = unit_alpha ? 1.0 : scalars[rng.uniform(0, 4)];
  c.beta = zero_beta ? 0.0 : scalars[rng.uniform(0, 4)];
  const int64_t b_rows = rng.uniform(1, 24), b_cols = rng.uniform(1, 24);
  const int64_t a_rows = rng.uniform(1, 24), a_cols = rng.uniform(1, 24);
  c.a = random_side(rng, kind == 0 || kind == 2, a_rows, a_cols, size);
  c.b = random_side(rng, kind == 0 || kind == 1, b_rows, b_cols, size);
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

BatchCase random_batch(Rng &rng, int size) {
  BatchCase c;
  c.split = rng.coin(0.35);
  c.null_alphas = rng.coin(0.15);
  c.null_betas = rng.coin(0.15);
  const auto count = rng.uniform(1, 5);
  for (int64_t k = 0; k < count; ++k)
    c.ops.push_back(random_op(rng, size, c.null_alphas, c.null_betas));
  return c;
}

// One operation's local arrays on this rank, its scalars and the B the oracle expects.
template <class T> struct Arrays {
  std::vector<T> a, b, initial, expected;
  T alpha, beta;
  int64_t written = 0; // elements of B's window here
};

template <class T> Arrays<T> arrays_of(const OpCase &c, int rank) {
  Arrays<T> out;
  out.a.assign(static_cast<std::size_t>(c.a.size(rank)), T(-7.0));
  out.b.resize(static_cast<std::size_t>(c.b.size(rank)));
  for (std::size_t k = 0; k < out.b.size(); ++k)
    out.b[k] = sentinel<T>(rank, static_cast<int64_t>(k));
  out.initial = out.b;
  out.expected = out.b;
  out.alpha = T(c.alpha);
  out.beta = T(c.beta);
  for (int64_t j = 0; j < c.n; ++j) {
    for (int64_t i = 0; i < c.m; ++i) {
      const int64_t gi = c.transposed() ? c.a.wi() + j : c.a.wi() + i;
      const int64_t gj = c.transposed() ? c.a.wj() + i : c.a.wj() + j;
      const auto [from, src] = c.a.locate(gi, gj);
      if (from == rank) out.a[static_cast<std::size_t>(src)] = a_value<T>(gi, gj);
      const auto [to, dst] = c.b.locate(c.b.wi() + i, c.b.wj() + j);
      if (to != rank) continue;
      ++out.written;
      T x = a_value<T>(gi, gj);
      if constexpr (std::is_same_v<T, Complex>) {
        if (c.op == REDIST_OP_C) x = std::conj(x);
      }
      T &y = out.expected[static_cast<std::size_t>(dst)];
      y = c.beta == 0.0 ? out.alpha * x : out.alpha * x + out.beta * y;
    }
  }
  return out;
}

// Every operation's arrays (real or complex) and the pointer arrays the execution takes.
struct Local {
  std::vector<Arrays<double>> real;
  std::vector<Arrays<Complex>> complex;
  std::vector<const void *> a, alphas, betas;
  std::vector<void *> b;
  int64_t bytes = 0; // of the windows of B here

  Local(const BatchCase &c, int rank) {
    real.reserve(c.ops.size());
    complex.reserve(c.ops.size());
    for (const OpCase &op : c.ops) {
      if (op.complex) {
        add(complex.emplace_back(arrays_of<Complex>(op, rank)));
      } else {
        add(real.emplace_back(arrays_of<double>(op, rank)));
      }
    }
  }
  template <class T> void add(Arrays<T> &x) {
    a.push_back(x.a.data());
    b.push_back(x.b.data());
    alphas.push_back(&x.alpha);
    betas.push_back(&x.beta);
    bytes += x.written * static_cast<int64_t>(sizeof(T));
  }
  void reset() {
    for (auto &x : real)
      x.b = x.initial;
    for (auto &x : complex)
      x.b = x.initial;
  }
  // "" or the first element of some B that is not the oracle's.
  [[nodiscard]] std::string wrong() const {
    std::string out = first_wrong(real);
    return out.empty() ? first_wrong(complex) : out;
  }
  template <class T> static std::string first_wrong(const std::vector<Arrays<T>> &xs) {
    for (std::size_t op = 0; op < xs.size(); ++op) {
      for (std::size_t k = 0; k < xs[op].b.size(); ++k) {
        if (xs[op].b[k] != xs[op].expected[k])
          return std::string(std::is_same_v<T, Complex> ? "complex" : "real") + " operation " +
                 std::to_string(op) + ": b[" + std::to_string(k) +
                 "] = " + std::to_string(std::real(xs[op].b[k])) + ", expected " +
                 std::to_string(std::real(xs[op].expected[k]));
      }
    }
    return "";
  }
  [[nodiscard]] bool untouched() const {
    const auto same = [](const auto &xs) {
      return std::all_of(xs.begin(), xs.end(), [](const auto &x) { return x.b == x.initial; });
    };
    return same(real) && same(complex);
  }
};

// This rank's views of a batch for the C API (`grids`, `cyclics`, `anys` keep what they point
// to).
struct Views {
  std::vector<redist_block_grid> grids;
  std::vector<redist_layout_ext> cyclics;
  std::vector<redist_any_layout> anys;
  std::vector<redist_grid_batch_op> ops;

  Views(const std::vector<OpCase> &cases, int rank)
      : grids(2 * cases.size()), cyclics(2 * cases.size()), anys(2 * cases.size()) {
    for (std::size_t k = 0; k < cases.size(); ++k) {
      const OpCase &c = cases[k];
      anys[2 * k] = c.a.view(rank, grids[2 * k], cyclics[2 * k]);
      anys[2 * k + 1] = c.b.view(rank, grids[2 * k + 1], cyclics[2 * k + 1]);
      const redist_type type = c.complex ? REDIST_COMPLEX_DOUBLE : REDIST_DOUBLE;
      ops.push_back({static_cast<redist_op>(c.op), c.m, c.n, type, &anys[2 * k], &anys[2 * k + 1]});
    }
  }
};

int execute(redist_plan plan, Local &x, bool split, bool null_alphas, bool null_betas) {
  const void *const *alphas = null_alphas ? nullptr : x.alphas.data();
  const void *const *betas = null_betas ? nullptr : x.betas.data();
  if (!split) return redist_plan_execute_batch(plan, alphas, x.a.data(), betas, x.b.data());
  int rc = redist_plan_execute_batch_begin(plan, alphas, x.a.data(), betas, x.b.data());
  if (rc == REDIST_SUCCESS) rc = redist_plan_execute_end(plan);
  return rc;
}

// Run batch c on this rank, executed `executions` times (B reset before each), before(e)
// before execution e and before(-1) after it; "" or the first problem.
std::string run(const BatchCase &c, int rank, int executions = 2,
                const std::function<void(int)> &before = nullptr) {
  Local x(c, rank);
  Views v(c.ops, rank);
  redist_plan plan = nullptr;
  int rc = redist_grid_batch_create(MPI_COMM_WORLD, static_cast<int>(v.ops.size()), v.ops.data(),
                                    nullptr, &plan);
  if (rc != REDIST_SUCCESS) return "create: " + std::string(redist_last_error());
  std::string why;
  redist_plan_info info{};
  if (redist_plan_get_info(plan, &info) != REDIST_SUCCESS ||
      info.bytes_received + info.bytes_local != x.bytes)
    why = "redist_plan_get_info: not the " + std::to_string(x.bytes) + " bytes of B here";
  // Both executions on every rank whatever this one found (they are collective); a failed
  // execution fails everywhere.
  for (int e = 0; e < executions; ++e) {
    x.reset();
    if (before) before(e);
    rc = execute(plan, x, c.split, c.null_alphas, c.null_betas);
    if (before) before(-1);
    if (rc != REDIST_SUCCESS) {
      why = "execution " + std::to_string(e) + ": " + redist_last_error();
      break;
    }
    if (const std::string wrong = x.wrong(); why.empty() && !wrong.empty())
      why = "execution " + std::to_string(e) + ": " + wrong;
  }
  redist_plan_destroy(&plan);
  return why;
}

TEST(GridBatches, RandomBatchesMatchTheOracle) {
  const int size = mpitest::world_size();
  const int rank = mpitest::world_rank();
  Rng rng(mpitest::shared_seed("GridBatches.RandomBatchesMatchTheOracle", 20261129));
  int kinds[4] = {0, 0, 0, 0}; // grid/grid, cyclic/grid, grid/cyclic, cyclic/cyclic
  for (int k = 0; k < mpitest::options().cases; ++k) {
    const BatchCase c = random_batch(rng, size);
    if (mpitest::options().only_case >= 0 && k != mpitest::options().only_case) continue;
    std::string what = "case " + std::to_string(k) + (c.split ? " (split)" : "") +
                       (c.null_alphas ? " (NULL alphas)" : "") +
                       (c.null_betas ? " (NULL betas)" : "") + ":";
    for (const OpCase &op : c.ops) {
      what += " [" + op.describe() + "]";
      ++kinds[(op.a.is_grid ? 0 : 1) + (op.b.is_grid ? 0 : 2)];
    }
    mpitest::watchdog_arm(what);
    const std::string why = run(c, rank);
    mpitest::watchdog_disarm();
    ASSERT_EQ(mpitest::on_any_rank(!why.empty()), 0) << what << " on rank " << rank << ": " << why;
  }
  if (mpitest::options().only_case < 0 && mpitest::options().cases >= 40) {
    for (const int n : kinds)
      EXPECT_GT(n, 0) << "every kind of operation drawn";
  }
}

// A valid batch of three grid to grid operations on fixed grids (6 x 5, blocks of rank
// k % size); `change` edits this rank's copy of operation `at`.
struct BadBatch {
  std::string name;
  int at = 0;
  std::function<void(Grid &a, redist_any_layout &va, redist_grid_batch_op &op, int rank)> change;
  std::function<bool(int rank)> wrong_here;
  int status = REDIST_ERR_ARGUMENT;
  std::string words; // a part of the message where the arguments are wrong
};

std::vector<BadBatch> bad_batches(int size) {
  const auto everywhere = [](int) { return true; };
  const auto only = [](int who) { return [who](int r) { return r == who; }; };
  using V = redist_any_layout;
  using O = redist_grid_batch_op;
  std::vector<BadBatch> out = {
      {"last split not the extent", 2,
       [](Grid &a, V &, O &, int) {
         a.row_splits = {0, 3, 4};
       },
       everywhere, REDIST_ERR_ARGUMENT,
       "redist_grid_batch_create: argument ops[2].a->grid->row_splits[2]"},
      {"owner out of range", 1, [size](Grid &a, V &, O &, int) { a.owners[3] = size; }, everywhere,
       REDIST_ERR_ARGUMENT, "ops[1].a->grid->owners[3]"},
      {"unknown op", 0,
       [](Grid &, V &, O &op, int) {
         const int unknown = 9;
         std::memcpy(&op.op, &unknown, sizeof unknown);
       },
       everywhere, REDIST_ERR_ARGUMENT, "ops[0].op"},
      {"NULL layout", 2, [](Grid &, V &, O &op, int) { op.b = nullptr; }, everywhere,
       REDIST_ERR_ARGUMENT, "ops[2].b"},
      {"window outside", 1, [](Grid &a, V &, O &, int) { a.i = 2; }, everywhere,
       REDIST_ERR_ARGUMENT, "ops[1].a->grid->i"},
      {"block listed twice on rank 0", 2,
       [](Grid &a, V &, O &, int r) {
         if (r == 0) a.local[0].push_back(a.local[0][0]);
       },
       only(0), REDIST_ERR_ARGUMENT, "ops[2].a->grid->local"},
      {"block-cyclic side with mb 0", 1,
       [](Grid &, V &va, O &, int) {
         static redist_layout_ext l{};
         static const int ranks[1] = {0};
         l.layout = {6, 5, 0, 2, 1, 1, 0, 0, ranks, 0, 0, 6};
         va.kind = REDIST_LAYOUT_BLOCK_CYCLIC;
         va.cyclic = &l;
       },
       everywhere, REDIST_ERR_ARGUMENT, "ops[1].a->cyclic->layout.mb"},
  };
  // Both sides block-cyclic (a 1 x 1 grid on rank 0), B's lld below its 6 local rows there.
  out.push_back({"both block-cyclic, lld too small on rank 0", 2,
                 [](Grid &, V &, O &op, int r) {
                   static const int ranks[1] = {0};
                   static redist_layout_ext a{}, b{};
                   static redist_any_layout va{}, vb{};
                   a.layout = {6, 5, 2, 2, 1, 1, 0, 0, ranks, 0, 0, r == 0 ? 6 : 1};
                   b = a;
                   b.layout.lld = 1; // below 6 on rank 0; ignored outside the grid
                   va = {REDIST_LAYOUT_BLOCK_CYCLIC, &a, nullptr};
                   vb = {REDIST_LAYOUT_BLOCK_CYCLIC, &b, nullptr};
                   op.a = &va;
                   op.b = &vb;
                 },
                 only(0), REDIST_ERR_ARGUMENT, "ops[2].b->cyclic->layout.lld"});
  if (size > 1) {
    out.push_back({"window differs on rank 1", 1,
                   [](Grid &a, V &, O &, int r) {
                     if (r == 1) a.j = 1;
                   },
                   everywhere, REDIST_ERR_MISMATCH, "ops[1]"});
    out.push_back({"block not this rank's", 0,
                   [size](Grid &a, V &, O &, int r) {
                     if (r == size - 1) a.local[static_cast<std::size_t>(r)].push_back(a.placed[0]);
                   },
                   only(size - 1), REDIST_ERR_ARGUMENT, "ops[0].a->grid->local"});
  }
  return out;
}

TEST(GridBatches, CreationErrorsNameTheOperationEverywhere) {
  const int size = mpitest::world_size();
  const int rank = mpitest::world_rank();
  for (const BadBatch &bad : bad_batches(size)) {
    std::vector<Grid> as(3, fixed_grid(size, false));
    const Grid b = fixed_grid(size, true);
    std::vector<redist_block_grid> ga(3), gb(3, b.view(rank));
    std::vector<redist_any_layout> va(3), vb(3);
    std::vector<redist_grid_batch_op> ops(3);
    for (std::size_t k = 0; k < 3; ++k) {
      va[k] = {REDIST_LAYOUT_BLOCK_GRID, nullptr, &ga[k]};
      vb[k] = {REDIST_LAYOUT_BLOCK_GRID, nullptr, &gb[k]};
      ops[k] = {REDIST_OP_N, 5, 4, REDIST_DOUBLE, &va[k], &vb[k]};
    }
    const auto at = static_cast<std::size_t>(bad.at);
    bad.change(as[at], va[at], ops[at], rank);
    for (std::size_t k = 0; k < 3; ++k)
      ga[k] = as[k].view(rank);
    if (bad.name == "last split not the extent") ga[at].m = 6;
    redist_plan plan = nullptr;
    const int rc = redist_grid_batch_create(MPI_COMM_WORLD, 3, ops.data(), nullptr, &plan);
    const std::string message = rc == REDIST_SUCCESS ? "" : redist_last_error();
    const int expected = bad.wrong_here(rank) ? bad.status : REDIST_ERR_REMOTE;
    EXPECT_EQ(rc, expected) << bad.name << " on rank " << rank << ": " << message;
    EXPECT_EQ(plan, nullptr) << bad.name;
    const std::string words =
        rc == REDIST_ERR_REMOTE ? "ops[" + std::to_string(bad.at) + "]" : bad.words;
    EXPECT_NE(message.find(words), std::string::npos)
        << bad.name << " on rank " << rank << ": " << message;
    if (plan != nullptr) redist_plan_destroy(&plan);
  }
}

TEST(GridBatches, BatchArgumentsChecked) {
  const int size = mpitest::world_size();
  const int rank = mpitest::world_rank();
  const Grid g = fixed_grid(size, false);
  redist_block_grid view = g.view(rank);
  const redist_any_layout any{REDIST_LAYOUT_BLOCK_GRID, nullptr, &view};
  const redist_grid_batch_op op{REDIST_OP_N, 6, 5, REDIST_DOUBLE, &any, &any};
  redist_plan plan = nullptr;
  EXPECT_EQ(redist_grid_batch_create(MPI_COMM_WORLD, 0, &op, nullptr, &plan), REDIST_ERR_ARGUMENT);
  EXPECT_NE(std::string(redist_last_error()).find("count"), std::string::npos);
  EXPECT_EQ(redist_grid_batch_create(MPI_COMM_WORLD, 1, nullptr, nullptr, &plan),
            REDIST_ERR_ARGUMENT);
  EXPECT_NE(std::string(redist_last_error()).find("ops"), std::string::npos);
  EXPECT_EQ(redist_grid_batch_create(MPI_COMM_WORLD, 1, &op, nullptr, nullptr),
            REDIST_ERR_ARGUMENT);
  redist_options o;
  redist_options_init(&o);
  o.schedule = REDIST_SCHEDULE_STEPWISE;
  EXPECT_EQ(redist_grid_batch_create(MPI_COMM_WORLD, 1, &op, &o, &plan), REDIST_ERR_ARGUMENT);
  EXPECT_NE(std::string(redist_last_error()).find("all at once"), std::string::npos);
  if (size > 1) { // counts differ
    const redist_grid_batch_op two[2] = {op, op};
    EXPECT_EQ(redist_grid_batch_create(MPI_COMM_WORLD, rank == 0 ? 1 : 2, two, nullptr, &plan),
              REDIST_ERR_MISMATCH);
  }
  EXPECT_EQ(plan, nullptr);
  // A plan of a grid batch is not run by redist_plan_execute.
  ASSERT_EQ(redist_grid_batch_create(MPI_COMM_WORLD, 1, &op, nullptr, &plan), REDIST_SUCCESS)
      << redist_last_error();
  std::vector<double> x(static_cast<std::size_t>(g.size[static_cast<std::size_t>(rank)]));
  std::vector<double> y = x;
  EXPECT_EQ(redist_plan_execute(plan, x.data(), y.data()), REDIST_ERR_ARGUMENT);
  redist_plan_destroy(&plan);
}

// An execution whose a[1] is NULL on the rank owning block 3 of operation 1's A: the argument
// error there naming a[1], REDIST_ERR_REMOTE naming ops[1] elsewhere, every B untouched; the
// plan then runs.
TEST(GridBatches, ExecutionErrorsLeaveEveryBUntouched) {
  const int size = mpitest::world_size();
  const int rank = mpitest::world_rank();
  Rng rng(mpitest::shared_seed("GridBatches.ExecutionErrorsLeaveEveryBUntouched", 11));
  BatchCase c;
  c.ops.push_back(random_op(rng, size, false, false));
  OpCase fixed;
  fixed.a.grid = fixed_grid(size, false);
  fixed.b = random_side(rng, false, 6, 5, size); // block-cyclic B
  fixed.m = 6;
  fixed.n = 5;
  fixed.alpha = 2.0;
  fixed.beta = 1.0;
  c.ops.push_back(fixed);
  c.ops.push_back(random_op(rng, size, false, false));
  for (const bool split : {false, true}) {
    Local x(c, rank);
    Views v(c.ops, rank);
    redist_plan plan = nullptr;
    ASSERT_EQ(redist_grid_batch_create(MPI_COMM_WORLD, 3, v.ops.data(), nullptr, &plan),
              REDIST_SUCCESS)
        << redist_last_error();
    const bool null_here = rank == 3 % size; // owns block 3 of operation 1's A
    if (null_here) x.a[1] = nullptr;
    int rc = execute(plan, x, split, false, false);
    const std::string message = rc == REDIST_SUCCESS ? "" : redist_last_error();
    EXPECT_EQ(rc, null_here ? REDIST_ERR_ARGUMENT : REDIST_ERR_REMOTE) << message;
    EXPECT_NE(message.find(null_here ? "a[1]" : "ops[1]"), std::string::npos) << message;
    EXPECT_TRUE(x.untouched()) << "split " << split;
    x = Local(c, rank);
    rc = execute(plan, x, split, false, false);
    EXPECT_EQ(rc, REDIST_SUCCESS) << redist_last_error();
    EXPECT_EQ(x.wrong(), "");
    redist_plan_destroy(&plan);
  }
}

// A receive whose completion fails on rank 0 in the second execution: the executor repairs it
// (every B right), the third execution makes the plan anew from its kept block grid plans and
// block-cyclic transfers (every B right again).
TEST(GridBatches, FailedCompletionRepairedAndPlanMadeAnew) {
  const int size = mpitest::world_size();
  const int rank = mpitest::world_rank();
  if (size < 2) GTEST_SKIP() << "no messages between processes on one";
  Rng rng(mpitest::shared_seed("GridBatches.FailedCompletionRepairedAndPlanMadeAnew", 78));
  long long injected = 0;
  for (int k = 0; k < 30; ++k) {
    const BatchCase c = random_batch(rng, size);
    const long long before_case = faults::injected();
    const auto arm = faults::one_receive_fails_in_second_execution(rank);
    const std::string why = run(c, rank, 3, arm);
    injected += faults::injected() - before_case;
    ASSERT_EQ(mpitest::on_any_rank(!why.empty()), 0)
        << "case " << k << " on rank " << rank << ": " << why;
  }
  long long total = 0;
  MPI_Allreduce(&injected, &total, 1, MPI_LONG_LONG, MPI_SUM, MPI_COMM_WORLD);
  EXPECT_GT(total, 0);
}

} // namespace
