// overlap_bench: how much of a transfer split execution (redist_plan_execute_begin / _end)
// hides behind computation on other data. In the same run, per case:
//   t_exec   redist_plan_execute alone;
//   t_comp   the computation alone, sized to take about t_exec;
//   t_split  begin, the computation, end;
//   exposed  the time spent inside begin and end during t_split (the rest is computation);
//   hidden = 1 - exposed / t_exec   (1: the whole execution hidden, 0: none of it);
//   saved  = (t_exec + t_comp - t_split) / t_exec: what the split saves against executing and
//            then computing, in units of the execution (below hidden when the transfer slows
//            the computation down, e.g. by taking its processor).
// The computation is re-sized after every repetition to take t_exec (the machine's speed
// drifts); t_comp / t_exec is printed.
// The local part is copied inside begin, so it counts as exposed. Every time is the maximum
// over ranks of one repetition, after a barrier; medians of --reps.
// B is checked against the element formula of A after the last split execution.
//   mpirun -n 2 bench/overlap_bench [--size N] [--reps R]
// The schedule comes from REDIST_SCHEDULE, the single-copy way from REDIST_SINGLE_COPY; with
// REDIST_PROGRESS=thread MPI is initialised with MPI_THREAD_MULTIPLE (the progress thread
// needs it), otherwise with MPI_Init.
#include <mpi.h>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "redist.h"
#include "timing.hpp"

namespace {

int64_t local_extent(int64_t n, int64_t nb, int p, int nprocs) {
  const int64_t blocks = n / nb;
  int64_t extent = (blocks / nprocs) * nb;
  const int64_t extra = blocks % nprocs;
  if (p < extra) {
    extent += nb;
  } else if (p == extra) {
    extent += n % nb;
  }
  return extent;
}

int64_t global_of(int64_t local, int64_t nb, int p, int nprocs) {
  return ((local / nb) * nprocs + p) * nb + local % nb;
}

double max_over_ranks(double t) {
  MPI_Allreduce(MPI_IN_PLACE, &t, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
  return t;
}

// Computation on data of its own (a cache-resident vector), `rounds` sweeps; returns a value
// the caller prints so the compiler keeps the work.
double compute(std::vector<double> &work, long rounds) {
  double sum = 0;
  for (long r = 0; r < rounds; ++r) {
    for (double &w : work) {
      w = w * 0.999999 + 1e-7;
    }
    sum += work[static_cast<std::size_t>(r) % work.size()];
  }
  return sum;
}

void check(int status, const char *what) {
  if (status != REDIST_SUCCESS) {
    std::fprintf(stderr, "overlap_bench: %s failed: %s\n", what, redist_last_error());
    MPI_Abort(MPI_COMM_WORLD, 1);
  }
}

} // namespace

int main(int argc, char **argv) {
  const char *progress = std::getenv("REDIST_PROGRESS");
  const bool progress_thread = progress != nullptr && std::strcmp(progress, "thread") == 0;
  if (progress_thread) {
    int provided = 0;
    MPI_Init_thread(&argc, &argv, MPI_THREAD_MULTIPLE, &provided);
  } else {
    MPI_Init(&argc, &argv);
  }
  int rank = 0;
  int np = 1;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &np);
  int64_t size = 4000;
  int reps = 7;
  for (int i = 1; i + 1 < argc; i += 2) {
    if (std::strcmp(argv[i], "--size") == 0) {
      size = std::atoll(argv[i + 1]);
    } else if (std::strcmp(argv[i], "--reps") == 0) {
      reps = std::atoi(argv[i + 1]);
    }
  }
  // A: a 1 x np grid of column blocks of 64; B: an np x 1 grid of row blocks of 100.
  std::vector<int> ranks(static_cast<std::size_t>(np));
  for (int p = 0; p < np; ++p) {
    ranks[static_cast<std::size_t>(p)] = p;
  }
  const int64_t a_cols = local_extent(size, 64, rank, np);
  const int64_t b_rows = local_extent(size, 100, rank, np);
  const redist_layout la = {size, size, 64, 64, 1, np, 0, 0, ranks.data(), 0, 0, size};
  const redist_layout lb = {size, size, 100,          100, np, 1,
                            0,    0,    ranks.data(), 0,   0,  std::max<int64_t>(1, b_rows)};
  std::vector<double> a(static_cast<std::size_t>(size * std::max<int64_t>(1, a_cols)));
  for (int64_t c = 0; c < a_cols; ++c) {
    const int64_t gc = global_of(c, 64, rank, np);
    for (int64_t r = 0; r < size; ++r) {
      a[static_cast<std::size_t>(c * size + r)] = static_cast<double>(gc * size + r);
    }
  }
  std::vector<double> b(static_cast<std::size_t>(std::max<int64_t>(1, b_rows) * size));
  redist_plan plan = nullptr;
  check(redist_plan_create(MPI_COMM_WORLD, size, size, REDIST_DOUBLE, &la, &lb, REDIST_REGION_FULL,
                           0, &plan),
        "redist_plan_create");
  check(redist_plan_execute(plan, a.data(), b.data()), "warm-up execute");

  std::vector<double> t_exec;
  for (int r = 0; r < reps; ++r) {
    MPI_Barrier(MPI_COMM_WORLD);
    const double t0 = MPI_Wtime();
    check(redist_plan_execute(plan, a.data(), b.data()), "redist_plan_execute");
    t_exec.push_back(max_over_ranks(MPI_Wtime() - t0));
  }
  const double exec = bench::median(t_exec);

  // Size the computation to take about `exec` on every rank (the slowest rank's rate).
  std::vector<double> work(4096, 1.0);
  double sink = 0;
  long rounds = 16;
  for (;;) {
    const double t0 = MPI_Wtime();
    sink += compute(work, rounds);
    const double t = max_over_ranks(MPI_Wtime() - t0);
    if (t >= exec * 0.5 || rounds > (1L << 40)) {
      rounds = std::max(1L, static_cast<long>(static_cast<double>(rounds) * exec / t));
      break;
    }
    rounds *= 2;
  }
  for (int refine = 0; refine < 3; ++refine) { // the first timings run in a cold, busy machine
    MPI_Barrier(MPI_COMM_WORLD);
    const double t0 = MPI_Wtime();
    sink += compute(work, rounds);
    const double t = max_over_ranks(MPI_Wtime() - t0);
    rounds = std::max(1L, static_cast<long>(static_cast<double>(rounds) * exec / t));
  }
  long agreed = 0;
  MPI_Allreduce(&rounds, &agreed, 1, MPI_LONG, MPI_MAX, MPI_COMM_WORLD);
  rounds = agreed;

  std::vector<double> t_comp;
  std::vector<double> t_split;
  std::vector<double> t_exposed;
  std::vector<double> t_inside; // the computation between begin and end
  for (int r = 0; r < reps; ++r) {
    MPI_Barrier(MPI_COMM_WORLD);
    double t0 = MPI_Wtime();
    sink += compute(work, rounds);
    const double comp_time = max_over_ranks(MPI_Wtime() - t0);
    t_comp.push_back(comp_time);
    rounds = std::max(1L, static_cast<long>(static_cast<double>(rounds) * exec / comp_time));

    std::fill(b.begin(), b.end(), -1.0);
    MPI_Barrier(MPI_COMM_WORLD);
    t0 = MPI_Wtime();
    check(redist_plan_execute_begin(plan, a.data(), b.data()), "redist_plan_execute_begin");
    const double begun = MPI_Wtime();
    sink += compute(work, rounds);
    const double computed = MPI_Wtime();
    check(redist_plan_execute_end(plan), "redist_plan_execute_end");
    const double ended = MPI_Wtime();
    t_split.push_back(max_over_ranks(ended - t0));
    t_exposed.push_back(max_over_ranks((begun - t0) + (ended - computed)));
    t_inside.push_back(max_over_ranks(computed - begun));
  }
  long wrong = 0;
  for (int64_t c = 0; c < size; ++c) {
    for (int64_t r = 0; r < b_rows; ++r) {
      const int64_t gr = global_of(r, 100, rank, np);
      wrong += b[static_cast<std::size_t>(c * b_rows + r)] != static_cast<double>(c * size + gr);
    }
  }
  long wrong_all = 0;
  MPI_Allreduce(&wrong, &wrong_all, 1, MPI_LONG, MPI_SUM, MPI_COMM_WORLD);

  const double comp = bench::median(t_comp);
  const double split = bench::median(t_split);
  const double exposed = bench::median(t_exposed);
  const double inside = bench::median(t_inside);
  if (rank == 0) {
    const char *schedule = std::getenv("REDIST_SCHEDULE");
    const char *way = std::getenv("REDIST_SINGLE_COPY");
    std::printf("overlap_bench: %d ranks, %lld x %lld doubles, blocks 64 (1 x %d) -> 100 (%d x 1), "
                "REDIST_SCHEDULE=%s REDIST_SINGLE_COPY=%s REDIST_PROGRESS=%s, median of %d (max "
                "over ranks)\n",
                np, static_cast<long long>(size), static_cast<long long>(size), np, np,
                schedule != nullptr ? schedule : "(unset)", way != nullptr ? way : "(unset)",
                progress != nullptr ? progress : "(unset)", reps);
    std::printf("t_exec %.4f s  t_comp %.4f s (%.2f t_exec, %.4f s between begin and end)  "
                "t_split %.4f s  exposed %.4f s  hidden %.0f%%  saved %.0f%%  wrong elements %ld  "
                "[%g]\n",
                exec, comp, comp / exec, inside, split, exposed, 100.0 * (1.0 - exposed / exec),
                100.0 * (exec + comp - split) / exec, wrong_all, sink > 0 ? 0.0 : 1.0);
  }
  redist_plan_destroy(&plan);
  MPI_Finalize();
  return wrong_all == 0 ? 0 : 1;
}
