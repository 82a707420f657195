// Plan once, execute many times: a plan holds everything that does not depend on the data, so
// each execution only packs, moves and unpacks. Moves an n x n matrix of doubles from a
// 2 x (P/2) grid with 64 x 64 blocks to a (P/2) x 2 grid with 100 x 100 blocks 100 times, and
// prints the time per execution and the bytes moved.
// Usage: mpirun -n 4 ./redist_example_plan_timing [n]   (n defaults to 1000; P even)
#include <redist.h>

#include <mpi.h>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <numeric>
#include <vector>

namespace {

constexpr int kExecutions = 100;

struct Grid {
  int nprow, npcol;
  std::int64_t block;
  std::vector<int> ranks; // column-major: ranks[pr + pc * nprow]
};

std::int64_t local_extent(std::int64_t n, std::int64_t block, int p, int nprocs) {
  const std::int64_t blocks = n / block;
  std::int64_t extent = blocks / nprocs * block;
  if (p < blocks % nprocs) {
    extent += block;
  } else if (p == blocks % nprocs) {
    extent += n % block;
  }
  return extent;
}

std::int64_t global_index(std::int64_t local, std::int64_t block, int p, int nprocs) {
  return (local / block * nprocs + p) * block + local % block;
}

struct Local {
  int row = 0, col = 0;
  std::int64_t rows = 0, cols = 0, lld = 1;
  std::vector<double> data;
};

Local local_part(const Grid &g, std::int64_t n, int rank) {
  Local l;
  const int position =
      static_cast<int>(std::find(g.ranks.begin(), g.ranks.end(), rank) - g.ranks.begin());
  l.row = position % g.nprow;
  l.col = position / g.nprow;
  l.rows = local_extent(n, g.block, l.row, g.nprow);
  l.cols = local_extent(n, g.block, l.col, g.npcol);
  l.lld = std::max<std::int64_t>(1, l.rows);
  l.data.assign(static_cast<std::size_t>(l.lld * std::max<std::int64_t>(1, l.cols)), 0.0);
  return l;
}

redist_layout layout_of(const Grid &g, std::int64_t n, const Local &l) {
  return redist_layout{n, n, g.block, g.block, g.nprow, g.npcol, 0, 0, g.ranks.data(), 0, 0, l.lld};
}

void check(int status, const char *what) {
  if (status != REDIST_SUCCESS) {
    std::fprintf(stderr, "%s: %s\n", what, redist_last_error());
    MPI_Abort(MPI_COMM_WORLD, 1);
  }
}

} // namespace

int main(int argc, char **argv) {
  MPI_Init(&argc, &argv);
  int rank = 0;
  int size = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  const std::int64_t n = argc > 1 ? std::atoll(argv[1]) : 1000;
  if (size % 2 != 0 || n < 1) {
    if (rank == 0) std::fprintf(stderr, "needs an even number of processes and n >= 1\n");
    MPI_Finalize();
    return 1;
  }
  std::vector<int> ranks(static_cast<std::size_t>(size));
  std::iota(ranks.begin(), ranks.end(), 0);
  const Grid from{2, size / 2, 64, ranks}, to{size / 2, 2, 100, ranks};
  Local a = local_part(from, n, rank), b = local_part(to, n, rank);
  for (std::int64_t c = 0; c < a.cols; ++c) {
    for (std::int64_t r = 0; r < a.rows; ++r) {
      const std::int64_t gi = global_index(r, from.block, a.row, from.nprow);
      const std::int64_t gj = global_index(c, from.block, a.col, from.npcol);
      a.data[static_cast<std::size_t>(r + c * a.lld)] = static_cast<double>(gi * n + gj);
    }
  }

  const redist_layout la = layout_of(from, n, a), lb = layout_of(to, n, b);
  redist_plan plan = nullptr;
  const double plan_start = MPI_Wtime();
  check(redist_plan_create(MPI_COMM_WORLD, n, n, REDIST_DOUBLE, &la, &lb, REDIST_REGION_FULL, 0,
                           &plan),
        "redist_plan_create");
  const double plan_seconds = MPI_Wtime() - plan_start;

  MPI_Barrier(MPI_COMM_WORLD);
  const double start = MPI_Wtime();
  for (int k = 0; k < kExecutions; ++k) {
    check(redist_plan_execute(plan, a.data.data(), b.data.data()), "redist_plan_execute");
  }
  const double seconds = MPI_Wtime() - start;

  long long wrong = 0;
  for (std::int64_t c = 0; c < b.cols; ++c) {
    for (std::int64_t r = 0; r < b.rows; ++r) {
      const std::int64_t gi = global_index(r, to.block, b.row, to.nprow);
      const std::int64_t gj = global_index(c, to.block, b.col, to.npcol);
      if (b.data[static_cast<std::size_t>(r + c * b.lld)] != static_cast<double>(gi * n + gj)) {
        ++wrong;
      }
    }
  }
  redist_plan_info info{};
  check(redist_plan_get_info(plan, &info), "redist_plan_get_info");
  long long moved[2] = {info.bytes_sent, info.bytes_local};
  double times[2] = {seconds, plan_seconds};
  MPI_Allreduce(MPI_IN_PLACE, moved, 2, MPI_LONG_LONG, MPI_SUM, MPI_COMM_WORLD);
  MPI_Allreduce(MPI_IN_PLACE, times, 2, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
  MPI_Allreduce(MPI_IN_PLACE, &wrong, 1, MPI_LONG_LONG, MPI_SUM, MPI_COMM_WORLD);
  if (rank == 0) {
    std::printf("%lld x %lld doubles, 2 x %d grid (64 x 64 blocks) -> %d x 2 grid (100 x 100 "
                "blocks), %d processes\n",
                static_cast<long long>(n), static_cast<long long>(n), size / 2, size / 2, size);
    std::printf("plan created once in %.3f ms, executed %d times: %.3f ms per execution\n",
                times[1] * 1e3, kExecutions, times[0] / kExecutions * 1e3);
    std::printf("per execution: %lld bytes sent between processes, %lld bytes copied locally "
                "(%.1f MB/s between processes)\n",
                moved[0], moved[1], static_cast<double>(moved[0]) / (times[0] / kExecutions) / 1e6);
    std::printf("%s: %lld elements wrong\n", wrong == 0 ? "OK" : "FAILED", wrong);
  }
  check(redist_plan_destroy(&plan), "redist_plan_destroy");
  MPI_Finalize();
  return wrong == 0 ? 0 : 1;
}
