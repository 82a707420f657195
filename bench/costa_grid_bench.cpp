// costa_grid_bench: layouts beyond 9-integer block-cyclic ones -- arbitrary block grids (COSTA's
// custom layouts) and row-major local arrays -- moved by COSTA's costa::transform and by a redist
// plan, in the same process, on the same layouts and inputs, alternating within every round.
// Every rank checks both results element by element against the value each element must have
// (A's elements are a function of their global indices), before any timing. Optional: built
// only with -DREDIST_COSTA_DIR=<COSTA prefix>.
//
//   mpirun -n 2 costa_grid_bench [--size N] [--reps R] [--case NAME] [--arrays plain|shared|both]
//
// Each case runs with ordinary local arrays and (", redist_alloc") with local arrays from
// redist_alloc, memory the other ranks of the node can map: both libraries are given the same
// arrays; redist's receivers copy the pieces from a sender's array instead of unpacking them
// from its packed buffer (docs/performance.md, "Shared arrays").
//
// Timing: MPI_Barrier, MPI_Wtime around one call, maximum over ranks; one warm-up call of each
// (redist's plan is made before it, COSTA works out its exchange inside every call), then
// --reps rounds of one COSTA and one redist call. Reported: medians and COSTA / redist.

#include <mpi.h>

#include <costa/grid2grid/transform.hpp>
#include <costa/layout.hpp>

#include "redist.h"
#include "timing.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <numeric>
#include <random>
#include <string>
#include <utility>
#include <vector>

namespace {

using bench::median;
using bench::timed;

// The value of A's element (i, j): exact in a double, different for every element.
double a_value(long long i, long long j) {
  return static_cast<double>(i) * 65536.0 + static_cast<double>(j) + 0.25;
}
double b_value(long long i, long long j) {
  return -static_cast<double>(j) * 4096.0 - static_cast<double>(i) - 0.5;
}

// A block grid: splits of the rows and columns, an owner per block (row-major over the blocks,
// COSTA's order), one local order. Block-cyclic layouts are block grids too (their splits every
// block, owners dealt round-robin): both programs are given the same blocks.
struct GridSpec {
  std::vector<int> row_splits, col_splits;
  std::vector<int> owners; // block (r, c) at r * block_cols + c
  bool row_major = false;
  // When the layout is block-cyclic: its block size, grid (column-major ranks) and sources.
  int cyclic_block = 0, nprow = 1, npcol = 1;

  [[nodiscard]] int block_rows() const { return static_cast<int>(row_splits.size()) - 1; }
  [[nodiscard]] int block_cols() const { return static_cast<int>(col_splits.size()) - 1; }
  [[nodiscard]] int owner(int r, int c) const {
    return owners[static_cast<std::size_t>(r) * block_cols() + c];
  }
};

std::vector<int> random_splits(std::mt19937 &rng, int extent, int blocks) {
  std::vector<int> cuts(static_cast<std::size_t>(extent - 1));
  std::iota(cuts.begin(), cuts.end(), 1);
  std::shuffle(cuts.begin(), cuts.end(), rng);
  cuts.resize(static_cast<std::size_t>(std::min(blocks - 1, extent - 1)));
  cuts.push_back(0);
  cuts.push_back(extent);
  std::sort(cuts.begin(), cuts.end());
  return cuts;
}

GridSpec random_grid(std::mt19937 &rng, int extent, int blocks, int ranks, bool row_major) {
  GridSpec g;
  g.row_splits = random_splits(rng, extent, blocks);
  g.col_splits = random_splits(rng, extent, blocks);
  g.owners.resize(static_cast<std::size_t>(g.block_rows()) * g.block_cols());
  std::uniform_int_distribution<int> who(0, ranks - 1);
  for (int &o : g.owners)
    o = who(rng);
  g.row_major = row_major;
  return g;
}

GridSpec cyclic_grid(int extent, int block, int nprow, int npcol, bool row_major) {
  GridSpec g;
  for (int x = 0; x < extent; x += block)
    g.row_splits.push_back(x);
  g.row_splits.push_back(extent);
  g.col_splits = g.row_splits;
  g.owners.resize(static_cast<std::size_t>(g.block_rows()) * g.block_cols());
  for (int r = 0; r < g.block_rows(); ++r)
    for (int c = 0; c < g.block_cols(); ++c)
      g.owners[static_cast<std::size_t>(r) * g.block_cols() + c] = r % nprow + (c % npcol) * nprow;
  g.row_major = row_major;
  g.cyclic_block = block;
  g.nprow = nprow;
  g.npcol = npcol;
  return g;
}

// A rank's local array: ordinary memory, or memory from redist_alloc, which the other ranks of
// the node can map (redist's receivers then copy a sender's pieces from it in one pass, where
// they would unpack them from the sender's packed buffer; COSTA takes the same arrays).
class LocalArray {
public:
  explicit LocalArray(bool shared = false) : shared_memory_(shared) {}
  LocalArray(const LocalArray &) = delete;
  LocalArray &operator=(const LocalArray &) = delete;
  LocalArray(LocalArray &&o) noexcept
      : shared_memory_(o.shared_memory_), vector_(std::move(o.vector_)),
        shared_(std::exchange(o.shared_, nullptr)) {}
  LocalArray &operator=(LocalArray &&) = delete;
  ~LocalArray() { release(); }
  void assign(std::size_t n, double value) {
    release();
    if (shared_memory_) {
      void *memory = nullptr;
      if (redist_alloc(n * sizeof(double), &memory) != REDIST_SUCCESS) {
        std::fprintf(stderr, "redist_alloc: %s\n", redist_last_error());
        MPI_Abort(MPI_COMM_WORLD, 1);
      }
      shared_ = static_cast<double *>(memory);
      std::fill(shared_, shared_ + n, value);
    } else {
      vector_.assign(n, value);
    }
  }
  double *data() { return shared_ != nullptr ? shared_ : vector_.data(); }
  double &operator[](std::size_t k) { return data()[k]; }

private:
  void release() {
    if (shared_ != nullptr) redist_free(shared_);
    shared_ = nullptr;
  }
  bool shared_memory_;
  std::vector<double> vector_;
  double *shared_ = nullptr;
};

// One rank's blocks of a grid in one local array. Block grids: each block at its own offset with
// a leading dimension of its own (a little padding, blocks in a shuffled order). Block-cyclic:
// the usual local array (lld = local rows, or local columns when row-major), a block at its
// place in it.
struct Placed {
  struct Block {
    int brow, bcol;
    long long offset;
    int ld;
  };
  std::vector<Block> blocks;
  LocalArray data;
  long long lld = 1; // block-cyclic only
};

long long local_extent(int extent, int block, int p, int nprocs) {
  const long long blocks = extent / block;
  long long n = blocks / nprocs * block;
  const long long extra = blocks % nprocs;
  if (p < extra)
    n += block;
  else if (p == extra)
    n += extent % block;
  return n;
}

Placed place(const GridSpec &g, int rank, std::mt19937 &rng, bool shared) {
  Placed out{{}, LocalArray(shared), 1};
  const auto rows_of = [&](int r) { return g.row_splits[r + 1] - g.row_splits[r]; };
  const auto cols_of = [&](int c) { return g.col_splits[c + 1] - g.col_splits[c]; };
  if (g.cyclic_block > 0) {
    const int pr = rank % g.nprow, pc = rank / g.nprow;
    if (pc >= g.npcol) return out;
    const long long lr = local_extent(g.row_splits.back(), g.cyclic_block, pr, g.nprow);
    const long long lc = local_extent(g.col_splits.back(), g.cyclic_block, pc, g.npcol);
    out.lld = std::max<long long>(1, g.row_major ? lc : lr);
    out.data.assign(
        static_cast<std::size_t>(out.lld * std::max<long long>(1, g.row_major ? lr : lc)), 0.0);
    for (int r = pr; r < g.block_rows(); r += g.nprow)
      for (int c = pc; c < g.block_cols(); c += g.npcol) {
        const long long lrow = static_cast<long long>(r / g.nprow) * g.cyclic_block;
        const long long lcol = static_cast<long long>(c / g.npcol) * g.cyclic_block;
        out.blocks.push_back({r, c, g.row_major ? lrow * out.lld + lcol : lcol * out.lld + lrow,
                              static_cast<int>(out.lld)});
      }
    return out;
  }
  for (int r = 0; r < g.block_rows(); ++r)
    for (int c = 0; c < g.block_cols(); ++c)
      if (g.owner(r, c) == rank) out.blocks.push_back({r, c, 0, 0});
  std::shuffle(out.blocks.begin(), out.blocks.end(), rng);
  long long at = 0;
  for (Placed::Block &b : out.blocks) {
    const int along = g.row_major ? cols_of(b.bcol) : rows_of(b.brow);
    const int across = g.row_major ? rows_of(b.brow) : cols_of(b.bcol);
    b.ld = std::max(1, along + static_cast<int>(rng() % 3));
    at += static_cast<long long>(rng() % 5);
    b.offset = at;
    at += static_cast<long long>(b.ld) * std::max(across, 1);
  }
  out.data.assign(static_cast<std::size_t>(std::max<long long>(at, 1)), 0.0);
  return out;
}

// f(global row, global column, element) over this rank's elements of a placed grid.
template <class F> void for_each_local(const GridSpec &g, Placed &p, F &&f) {
  for (const Placed::Block &b : p.blocks) {
    for (int i = g.row_splits[b.brow]; i < g.row_splits[b.brow + 1]; ++i)
      for (int j = g.col_splits[b.bcol]; j < g.col_splits[b.bcol + 1]; ++j) {
        const long long li = i - g.row_splits[b.brow], lj = j - g.col_splits[b.bcol];
        f(i, j,
          p.data[static_cast<std::size_t>(b.offset +
                                          (g.row_major ? li * b.ld + lj : lj * b.ld + li))]);
      }
  }
}

costa::grid_layout<double> costa_layout(const GridSpec &g, Placed &p) {
  std::vector<costa::block_t> blocks;
  for (const Placed::Block &b : p.blocks)
    blocks.push_back({p.data.data() + b.offset, b.ld, b.brow, b.bcol});
  return costa::custom_layout<double>(
      g.block_rows(), g.block_cols(), g.row_splits.data(), g.col_splits.data(), g.owners.data(),
      static_cast<int>(blocks.size()), blocks.data(), g.row_major ? 'R' : 'C');
}

struct Case {
  std::string name;
  // A and B: block grids of `blocks` x `blocks` random blocks (0: block-cyclic of `block`).
  int a_blocks, a_block, b_blocks, b_block;
  bool row_major;
  char trans;
  double alpha, beta;
};

// redist's side of a case: one plan, made before the timed calls, executed by run().
struct RedistRun {
  redist_plan plan = nullptr;
  const double *a = nullptr;
  double *b = nullptr;
  double alpha = 1, beta = 0;
  void run() const {
    if (redist_plan_execute_op(plan, &alpha, a, &beta, b) != REDIST_SUCCESS) {
      std::fprintf(stderr, "redist: %s\n", redist_last_error());
      MPI_Abort(MPI_COMM_WORLD, 1);
    }
  }
};

// redist's description of one side: a block grid (owners column-major, as redist_layout's
// ranks), or a block-cyclic layout with its order.
struct RedistSide {
  std::vector<int64_t> row_splits, col_splits;
  std::vector<int> owners;
  std::vector<redist_grid_block> local;
  std::vector<int> ranks;
  redist_block_grid grid{};
  redist_layout_ext cyclic{};
  redist_any_layout any{};

  RedistSide(const GridSpec &g, const Placed &p) {
    if (g.cyclic_block > 0) {
      ranks.resize(static_cast<std::size_t>(g.nprow) * g.npcol);
      std::iota(ranks.begin(), ranks.end(), 0);
      const int64_t extent = g.row_splits.back();
      cyclic.layout = {
          extent, extent, g.cyclic_block, g.cyclic_block, g.nprow, g.npcol, 0, 0, ranks.data(),
          0,      0,      p.lld};
      cyclic.order = g.row_major ? REDIST_ORDER_ROW_MAJOR : REDIST_ORDER_COLUMN_MAJOR;
      any = {REDIST_LAYOUT_BLOCK_CYCLIC, &cyclic, nullptr};
      return;
    }
    row_splits.assign(g.row_splits.begin(), g.row_splits.end());
    col_splits.assign(g.col_splits.begin(), g.col_splits.end());
    owners.resize(g.owners.size());
    for (int r = 0; r < g.block_rows(); ++r)
      for (int c = 0; c < g.block_cols(); ++c)
        owners[static_cast<std::size_t>(r) + static_cast<std::size_t>(c) * g.block_rows()] =
            g.owner(r, c);
    for (const Placed::Block &b : p.blocks)
      local.push_back({b.brow, b.bcol, b.offset, b.ld});
    grid = {row_splits.back(),
            col_splits.back(),
            g.block_rows(),
            g.block_cols(),
            row_splits.data(),
            col_splits.data(),
            owners.data(),
            g.row_major ? 1 : 0,
            static_cast<int64_t>(local.size()),
            local.empty() ? nullptr : local.data(),
            0,
            0};
    any = {REDIST_LAYOUT_BLOCK_GRID, nullptr, &grid};
  }
};

RedistRun make_redist(const Case &c, const GridSpec &ga, Placed &pa, const GridSpec &gb, Placed &pb,
                      double &plan_seconds) {
  RedistSide a(ga, pa), b(gb, pb);
  RedistRun out;
  const int64_t m = gb.row_splits.back(), n = gb.col_splits.back();
  const redist_op op = c.trans == 'N' ? REDIST_OP_N : REDIST_OP_T;
  int status = REDIST_SUCCESS;
  plan_seconds = timed([&] {
    status = a.any.kind == REDIST_LAYOUT_BLOCK_GRID || b.any.kind == REDIST_LAYOUT_BLOCK_GRID
                 ? redist_grid_plan_create(MPI_COMM_WORLD, op, m, n, REDIST_DOUBLE, &a.any, &b.any,
                                           nullptr, &out.plan)
                 : redist_plan_create_op_ext(MPI_COMM_WORLD, op, m, n, REDIST_DOUBLE, &a.cyclic,
                                             &b.cyclic, REDIST_REGION_FULL, nullptr, &out.plan);
  });
  if (status != REDIST_SUCCESS) {
    std::fprintf(stderr, "redist: %s\n", redist_last_error());
    MPI_Abort(MPI_COMM_WORLD, 1);
  }
  out.a = pa.data.data();
  out.b = pb.data.data();
  out.alpha = c.alpha;
  out.beta = c.beta;
  return out;
}

} // namespace

int main(int argc, char **argv) {
  MPI_Init(&argc, &argv);
  int me = 0, np = 1;
  MPI_Comm_rank(MPI_COMM_WORLD, &me);
  MPI_Comm_size(MPI_COMM_WORLD, &np);
  int size = 4000, reps = 5;
  std::string only;
  std::string arrays = "both"; // plain, shared or both
  for (int i = 1; i < argc; ++i) {
    if (!std::strcmp(argv[i], "--size") && i + 1 < argc)
      size = std::atoi(argv[++i]);
    else if (!std::strcmp(argv[i], "--reps") && i + 1 < argc)
      reps = std::atoi(argv[++i]);
    else if (!std::strcmp(argv[i], "--case") && i + 1 < argc)
      only = argv[++i];
    else if (!std::strcmp(argv[i], "--arrays") && i + 1 < argc)
      arrays = argv[++i];
  }
  const std::vector<Case> cases = {
      {"grid 30 -> grid 45", 30, 0, 45, 0, false, 'N', 1, 0},
      {"grid 30 -> grid 45 row-major", 30, 0, 45, 0, true, 'N', 1, 0},
      {"grid 30 -> grid 45 T a=2 b=.5", 30, 0, 45, 0, false, 'T', 2, 0.5},
      {"cyclic 64 -> grid 45", 0, 64, 45, 0, false, 'N', 1, 0},
      {"grid 30 -> cyclic 100", 30, 0, 0, 100, false, 'N', 1, 0},
      {"cyclic 64 -> 100 row-major", 0, 64, 0, 100, true, 'N', 1, 0},
      {"cyclic 64 -> 100", 0, 64, 0, 100, false, 'N', 1, 0},
  };
  // Each case with ordinary local arrays, then with arrays from redist_alloc.
  std::vector<std::pair<Case, bool>> runs;
  for (const Case &c : cases)
    for (const bool shared : {false, true})
      if ((shared ? arrays != "plain" : arrays != "shared")) runs.emplace_back(c, shared);
  int gpr = 1;
  for (int d = 1; d * d <= np; ++d)
    if (np % d == 0) gpr = d;
  if (me == 0) {
    std::printf("costa_grid_bench: %d ranks, %d x %d doubles, median of %d (max over ranks)\n", np,
                size, size, reps);
    std::printf("%-44s %12s %12s %12s %8s\n", "case", "costa_s", "redist_s", "redist-plan",
                "ratio");
  }
  for (const auto &[c, shared] : runs) {
    if (c.name.find(only) == std::string::npos) continue;
    std::mt19937 rng(12345); // the same grids on every rank
    const GridSpec ga = c.a_blocks > 0 ? random_grid(rng, size, c.a_blocks, np, c.row_major)
                                       : cyclic_grid(size, c.a_block, gpr, np / gpr, c.row_major);
    const GridSpec gb = c.b_blocks > 0 ? random_grid(rng, size, c.b_blocks, np, c.row_major)
                                       : cyclic_grid(size, c.b_block, np / gpr, gpr, c.row_major);
    std::mt19937 local_rng(static_cast<unsigned>(me) + 7);
    Placed pa = place(ga, me, local_rng, shared);
    Placed pb = place(gb, me, local_rng, shared);
    for_each_local(ga, pa, [](int i, int j, double &x) { x = a_value(i, j); });
    const auto reset_b = [&] {
      for_each_local(gb, pb, [](int i, int j, double &x) { x = b_value(i, j); });
    };
    const auto check_b = [&](int calls) {
      // After `calls` calls from the same B: B = beta^calls b + alpha op(A) (1 + beta + ...).
      long long wrong = 0;
      double sum = 0, power = 1;
      for (int k = 0; k < calls; ++k) {
        sum += power;
        power *= c.beta;
      }
      for_each_local(gb, pb, [&](int i, int j, double &x) {
        const double a = c.trans == 'N' ? a_value(i, j) : a_value(j, i);
        const double want = power * b_value(i, j) + c.alpha * sum * a;
        if (c.beta == 0 && c.alpha == 1 ? x != want : std::abs(x - want) > 1e-9 * std::abs(want))
          ++wrong;
      });
      MPI_Allreduce(MPI_IN_PLACE, &wrong, 1, MPI_LONG_LONG, MPI_SUM, MPI_COMM_WORLD);
      return wrong;
    };
    costa::grid_layout<double> la = costa_layout(ga, pa);
    costa::grid_layout<double> lb = costa_layout(gb, pb);
    const auto run_costa = [&] {
      costa::transform<double>(la, lb, c.trans, c.alpha, c.beta, MPI_COMM_WORLD);
    };
    reset_b();
    run_costa();
    const long long costa_wrong = check_b(1);
    double plan_seconds = 0;
    RedistRun redist = make_redist(c, ga, pa, gb, pb, plan_seconds);
    reset_b();
    redist.run();
    const long long redist_wrong = check_b(1);
    std::vector<double> tc, tr;
    for (int r = 0; r < reps; ++r) {
      tc.push_back(timed(run_costa));
      tr.push_back(timed([&] { redist.run(); }));
    }
    redist_plan_destroy(&redist.plan);
    if (me == 0) {
      const double mc = median(tc), mr = median(tr);
      const std::string name = c.name + (shared ? ", redist_alloc" : "");
      std::printf("%-44s %12.5f %12.5f %12.5f %7.2fx%s%s\n", name.c_str(), mc, mr, plan_seconds,
                  mr > 0 ? mc / mr : 0.0, costa_wrong ? "  COSTA WRONG" : "",
                  redist_wrong ? "  REDIST WRONG" : "");
      std::fflush(stdout);
    }
  }
  MPI_Finalize();
  return 0;
}
