// plan_life_bench: what a C API plan costs over its life: its creation, first
// and second execution and destruction, in a loop (each plan after the last was destroyed,
// as a program that makes a plan per shape or per step does), and MPI_Comm_dup + MPI_Comm_free
// of the same communicator for scale. Each time is the maximum over ranks after a barrier;
// medians of --reps. The plan copies an N x N matrix of doubles (default 32) from a 1 x P grid
// in blocks of N/8 to a P x 1 grid in blocks of N/4 (redist_bench --small's case); B is checked
// element by element after the last execution.
//   mpirun -n 2 bench/plan_life_bench [--size N] [--reps R]
#include <mpi.h>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <vector>

#include "redist.h"
#include "timing.hpp"

using bench::median;
using bench::timed;

namespace {

void check(int status) {
  if (status != REDIST_SUCCESS) {
    std::fprintf(stderr, "plan_life_bench: %s\n", redist_last_error());
    MPI_Abort(MPI_COMM_WORLD, 1);
  }
}

/// Local index of global index g of a block-cyclic dimension (block b over p processes; g on
/// this process).
std::int64_t local_of(std::int64_t g, std::int64_t b, int p) {
  return g / (b * p) * b + g % b;
}

} // namespace

int main(int argc, char **argv) {
  MPI_Init(&argc, &argv);
  int me = 0;
  int np = 1;
  MPI_Comm_rank(MPI_COMM_WORLD, &me);
  MPI_Comm_size(MPI_COMM_WORLD, &np);
  std::int64_t n = 32;
  int reps = 300;
  for (int i = 1; i + 1 < argc; i += 2) {
    if (!std::strcmp(argv[i], "--size")) n = std::max<std::int64_t>(8, std::atoll(argv[i + 1]));
    if (!std::strcmp(argv[i], "--reps")) reps = std::max(1, std::atoi(argv[i + 1]));
  }
  const std::int64_t nb_a = n / 8;
  const std::int64_t mb_b = n / 4;
  const auto local_count = [&](std::int64_t b) {
    std::int64_t count = 0;
    for (std::int64_t g = 0; g < n; ++g)
      count += (g / b) % np == me ? 1 : 0;
    return count;
  };
  const std::int64_t a_cols = local_count(nb_a);
  const std::int64_t b_rows = std::max<std::int64_t>(1, local_count(mb_b));
  std::vector<int> ranks(static_cast<std::size_t>(np));
  for (int r = 0; r < np; ++r)
    ranks[static_cast<std::size_t>(r)] = r;
  const redist_layout la = {n, n, nb_a, nb_a, 1, np, 0, 0, ranks.data(), 0, 0, n};
  const redist_layout lb = {n, n, mb_b, mb_b, np, 1, 0, 0, ranks.data(), 0, 0, b_rows};
  std::vector<double> a(static_cast<std::size_t>(n * std::max<std::int64_t>(1, a_cols)));
  std::vector<double> b(static_cast<std::size_t>(b_rows * n), -1.0);
  for (std::int64_t j = 0; j < n; ++j) {
    if ((j / nb_a) % np != me) continue;
    for (std::int64_t i = 0; i < n; ++i)
      a[static_cast<std::size_t>(local_of(j, nb_a, np) * n + i)] = static_cast<double>(i * n + j);
  }
  const auto create = [&](redist_plan *plan) {
    check(redist_plan_create(MPI_COMM_WORLD, n, n, REDIST_DOUBLE, &la, &lb, REDIST_REGION_FULL, 0,
                             plan));
  };
  std::vector<double> t_create, t_exec1, t_exec2, t_destroy, t_dup;
  for (int r = 0; r < reps + 1; ++r) { // the first round warms up, untimed
    redist_plan plan = nullptr;
    const double c = timed([&] { create(&plan); });
    const double e1 = timed([&] { check(redist_plan_execute(plan, a.data(), b.data())); });
    const double e2 = timed([&] { check(redist_plan_execute(plan, a.data(), b.data())); });
    const double d = timed([&] { check(redist_plan_destroy(&plan)); });
    const double u = timed([&] {
      MPI_Comm dup = MPI_COMM_NULL;
      MPI_Comm_dup(MPI_COMM_WORLD, &dup);
      MPI_Comm_free(&dup);
    });
    if (r == 0) continue;
    t_create.push_back(c);
    t_exec1.push_back(e1);
    t_exec2.push_back(e2);
    t_destroy.push_back(d);
    t_dup.push_back(u);
  }
  long long wrong = 0;
  for (std::int64_t i = 0; i < n; ++i) {
    if ((i / mb_b) % np != me) continue;
    for (std::int64_t j = 0; j < n; ++j) {
      const double got = b[static_cast<std::size_t>(j * b_rows + local_of(i, mb_b, np))];
      wrong += got == static_cast<double>(i * n + j) ? 0 : 1;
    }
  }
  MPI_Allreduce(MPI_IN_PLACE, &wrong, 1, MPI_LONG_LONG, MPI_SUM, MPI_COMM_WORLD);
  if (me == 0) {
    const double cached = median(t_exec2);
    std::printf("plan_life_bench: %d ranks, %lld x %lld doubles, 1 x %d / %lld -> %d x 1 / %lld, "
                "medians of %d (max over ranks)\n",
                np, static_cast<long long>(n), static_cast<long long>(n), np,
                static_cast<long long>(nb_a), np, static_cast<long long>(mb_b), reps);
    std::printf("create %8.2f us\nexec1  %8.2f us\nexec2  %8.2f us\ndestroy %7.2f us\n"
                "create+exec1 / exec2 %.1f\nMPI_Comm_dup+free %.2f us\n%s\n",
                median(t_create) * 1e6, median(t_exec1) * 1e6, cached * 1e6,
                median(t_destroy) * 1e6, (median(t_create) + median(t_exec1)) / cached,
                median(t_dup) * 1e6, wrong == 0 ? "check ok" : "check WRONG");
  }
  MPI_Finalize();
  return wrong == 0 ? 0 : 1;
}
