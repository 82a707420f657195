// batch_bench: one batch of K matrices (redist_plan_execute_batch) against the same K
// operations as K separate redist_plan_execute_op calls and as K PBLAS calls (PDTRAN, PDGEADD
// 'N'), in the same process on the same input. Each case checks that the
// three outputs are bitwise equal, then reports median times and the ratios.
//
//   mpirun -n 2 batch_bench [--count K] [--sizes 32,64,256] [--reps R] [--warmups W]
//                           [--batch-only]
//
// --batch-only times the batches alone, unchecked (for a profiler).
//
// Every matrix is N x N on one BLACS grid (1 x P ... as square as P allows), A in blocks of
// N/4, C in blocks of N/4 + 3 (a real redistribution). Timing: MPI_Barrier, MPI_Wtime around
// the K operations, maximum over ranks; --warmups untimed runs of each, then --reps
// repetitions in turn.
// Plans are made before timing (the batch's once, the separate calls' once per matrix).
#include <mpi.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <random>
#include <string>
#include <vector>

#include "redist.h"
#include "scalapack_decls.h"
#include "timing.hpp"

extern "C" {
void pdtran_(const int *, const int *, const double *, const double *, const int *, const int *,
             const int *, const double *, double *, const int *, const int *, const int *);
void pdgeadd_(const char *, const int *, const int *, const double *, const double *, const int *,
              const int *, const int *, const double *, double *, const int *, const int *,
              const int *);
}

namespace {

using bench::median;
using bench::timed;

void check(int status, const char *what) {
  if (status != REDIST_SUCCESS) {
    std::fprintf(stderr, "batch_bench: %s: %s\n", what, redist_last_error());
    MPI_Abort(MPI_COMM_WORLD, 1);
  }
}

} // namespace

int main(int argc, char **argv) {
  MPI_Init(&argc, &argv);
  int me = 0;
  int np = 1;
  MPI_Comm_rank(MPI_COMM_WORLD, &me);
  MPI_Comm_size(MPI_COMM_WORLD, &np);
  int count = 64;
  int reps = 21;
  int warmups = 20;
  std::vector<int> sizes = {32, 64, 256};
  bool batch_only = false;
  for (int i = 1; i < argc; ++i) {
    if (!std::strcmp(argv[i], "--count") && i + 1 < argc) {
      count = std::atoi(argv[++i]);
    } else if (!std::strcmp(argv[i], "--reps") && i + 1 < argc) {
      reps = std::atoi(argv[++i]);
    } else if (!std::strcmp(argv[i], "--warmups") && i + 1 < argc) {
      warmups = std::atoi(argv[++i]);
    } else if (!std::strcmp(argv[i], "--batch-only")) {
      batch_only = true;
    } else if (!std::strcmp(argv[i], "--sizes") && i + 1 < argc) {
      sizes.clear();
      for (char *s = std::strtok(argv[++i], ","); s != nullptr; s = std::strtok(nullptr, ",")) {
        sizes.push_back(std::atoi(s));
      }
    }
  }
  int nprow = 1;
  for (int d = 1; d * d <= np; ++d) {
    if (np % d == 0) nprow = d;
  }
  const int npcol = np / nprow;
  int ctxt = 0;
  Cblacs_get(0, 0, &ctxt);
  Cblacs_gridinit(&ctxt, "R", nprow, npcol);
  int nr = 0;
  int nc = 0;
  int myr = -1;
  int myc = -1;
  Cblacs_gridinfo(ctxt, &nr, &nc, &myr, &myc);
  // BLACS 'R': grid position (pr, pc) is process pr * npcol + pc.
  std::vector<int> ranks(static_cast<std::size_t>(np));
  for (int pr = 0; pr < nprow; ++pr) {
    for (int pc = 0; pc < npcol; ++pc) {
      ranks[static_cast<std::size_t>(pr + pc * nprow)] = pr * npcol + pc;
    }
  }
  if (me == 0) {
    std::printf("batch_bench: %d ranks (%dx%d grid), %d matrices per batch, median of %d (max "
                "over ranks)\n",
                np, nprow, npcol, count, reps);
    std::printf("%-26s %11s %11s %11s %10s %10s\n", "case", "pblas_s", "separate_s", "batch_s",
                "sep/batch", "pblas/bat");
  }
  const int one = 1;
  const int zero = 0;
  for (const int n : sizes) {
    for (const bool transpose : {true, false}) {
      const int mb_a = std::max(1, n / 4);
      const int mb_c = n / 4 + 3;
      const int lra = numroc_(&n, &mb_a, &myr, &zero, &nprow);
      const int lca = numroc_(&n, &mb_a, &myc, &zero, &npcol);
      const int lrc = numroc_(&n, &mb_c, &myr, &zero, &nprow);
      const int lcc = numroc_(&n, &mb_c, &myc, &zero, &npcol);
      const int llda = std::max(1, lra);
      const int lldc = std::max(1, lrc);
      int desca[9] = {};
      int descc[9] = {};
      int info = 0;
      descinit_(desca, &n, &n, &mb_a, &mb_a, &zero, &zero, &ctxt, &llda, &info);
      descinit_(descc, &n, &n, &mb_c, &mb_c, &zero, &zero, &ctxt, &lldc, &info);
      const double alpha = transpose ? 1.0 : 2.0;
      const double beta = transpose ? 0.0 : 0.5;
      std::mt19937_64 gen(static_cast<unsigned>(me) + 1);
      std::uniform_real_distribution<double> u(-1, 1);
      const auto k = static_cast<std::size_t>(count);
      std::vector<std::vector<double>> a(k);
      std::vector<std::vector<double>> c0(k);
      for (std::size_t i = 0; i < k; ++i) {
        a[i].resize(static_cast<std::size_t>(llda) * std::max(1, lca));
        c0[i].resize(static_cast<std::size_t>(lldc) * std::max(1, lcc));
        for (double &x : a[i])
          x = u(gen);
        for (double &x : c0[i])
          x = u(gen);
      }
      std::vector<std::vector<double>> cp = c0;
      std::vector<std::vector<double>> cs = c0;
      std::vector<std::vector<double>> cb = c0;

      redist_layout la{};
      la.m = la.n = n;
      la.mb = la.nb = mb_a;
      la.nprow = nprow;
      la.npcol = npcol;
      la.ranks = ranks.data();
      la.lld = llda;
      redist_layout lc = la;
      lc.mb = lc.nb = mb_c;
      lc.lld = lldc;
      const redist_op op = transpose ? REDIST_OP_T : REDIST_OP_N;
      std::vector<redist_batch_op> ops(k, {op, n, n, REDIST_DOUBLE, &la, &lc, REDIST_REGION_FULL});
      redist_plan batch = nullptr;
      check(redist_plan_create_batch(MPI_COMM_WORLD, count, ops.data(), nullptr, &batch),
            "redist_plan_create_batch");
      std::vector<redist_plan> separate(k, nullptr);
      for (redist_plan &p : separate) {
        check(redist_plan_create_op(MPI_COMM_WORLD, op, n, n, REDIST_DOUBLE, &la, &lc,
                                    REDIST_REGION_FULL, nullptr, &p),
              "redist_plan_create_op");
      }
      std::vector<const void *> alphas(k, &alpha);
      std::vector<const void *> betas(k, &beta);
      std::vector<const void *> a_ptrs(k);
      std::vector<void *> b_ptrs(k);
      for (std::size_t i = 0; i < k; ++i) {
        a_ptrs[i] = a[i].data();
        b_ptrs[i] = cb[i].data();
      }
      const auto run_pblas = [&] {
        for (std::size_t i = 0; i < k; ++i) {
          if (transpose) {
            pdtran_(&n, &n, &alpha, a[i].data(), &one, &one, desca, &beta, cp[i].data(), &one, &one,
                    descc);
          } else {
            pdgeadd_("N", &n, &n, &alpha, a[i].data(), &one, &one, desca, &beta, cp[i].data(), &one,
                     &one, descc);
          }
        }
      };
      const auto run_separate = [&] {
        for (std::size_t i = 0; i < k; ++i) {
          check(redist_plan_execute_op(separate[i], &alpha, a[i].data(), &beta, cs[i].data()),
                "redist_plan_execute_op");
        }
      };
      const auto run_batch = [&] {
        check(redist_plan_execute_batch(batch, alphas.data(), a_ptrs.data(), betas.data(),
                                        b_ptrs.data()),
              "redist_plan_execute_batch");
      };
      // One call of each from the same C: the three must agree bit for bit. Then timings
      // (C accumulates: fine).
      if (!batch_only) {
        run_pblas();
        run_separate();
      }
      run_batch();
      int equal = 1;
      for (std::size_t i = 0; i < k && !batch_only; ++i) {
        const std::size_t bytes = cp[i].size() * sizeof(double);
        if (std::memcmp(cp[i].data(), cs[i].data(), bytes) != 0 ||
            std::memcmp(cp[i].data(), cb[i].data(), bytes) != 0) {
          equal = 0;
        }
      }
      MPI_Allreduce(MPI_IN_PLACE, &equal, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
      for (int w = 0; w < warmups; ++w) {
        if (!batch_only) {
          run_pblas();
          run_separate();
        }
        run_batch();
      }
      std::vector<double> tp;
      std::vector<double> ts;
      std::vector<double> tb;
      for (int r = 0; r < reps; ++r) {
        tp.push_back(batch_only ? 0.0 : timed(run_pblas));
        ts.push_back(batch_only ? 0.0 : timed(run_separate));
        tb.push_back(timed(run_batch));
      }
      const double p = median(tp);
      const double s = median(ts);
      const double b = median(tb);
      if (me == 0) {
        const std::string name = std::to_string(count) + "x " +
                                 (transpose ? "pdtran " : "pdgeadd N ") + std::to_string(n) + "x" +
                                 std::to_string(n);
        std::printf("%-26s %11.6f %11.6f %11.6f %9.2fx %9.2fx%s\n", name.c_str(), p, s, b, s / b,
                    p / b, equal ? "" : "  MISMATCH");
        std::fflush(stdout);
      }
      for (redist_plan &plan : separate) {
        redist_plan_destroy(&plan);
      }
      redist_plan_destroy(&batch);
    }
  }
  Cblacs_gridexit(ctxt);
  MPI_Finalize();
  return 0;
}
