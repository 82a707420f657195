// pblas_bench: PBLAS's PxTRAN / PxGEADD / PxTRANC / PxTRADD against redist's prefixed entries
// (redist_pdtran_, ...), in the same process on the same input. Each case checks
// that both outputs are bitwise equal, then reports median times and the ratio PBLAS / redist.
//
//   mpirun -n 2 pblas_bench [--size N] [--reps R] [--case SUBSTRING] [--redist-only]
//
// --case runs the cases whose name contains SUBSTRING; --redist-only times redist alone (for a
// profiler; the ratio column is then meaningless).
//
// Timing: MPI_Barrier, MPI_Wtime around one call, maximum over ranks; one warm-up call of each
// (redist's builds its plan), then --reps repetitions alternating PBLAS, redist and a memcpy.
// The memcpy moves, on every rank at once, as many bytes as the rank's part of C's window (of
// the trapezoid for PxTRADD): no implementation writes its part of C faster than that, so
// "pblas/cpy" (PBLAS's median over the memcpy's) bounds the ratio any implementation could
// reach on this machine in this run. The cases marked 11-int pass PBLAS's 11-integer
// descriptors for the same layouts as the 9-integer cases above them; IMB=17 gives A a first
// block of 17 rows and columns; "A repl" / "C repl" replicate that matrix over the process rows
// of a P x 1 grid (RSRC_ = -1: every process holds all of it).
#include <mpi.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <random>
#include <string>
#include <vector>

#include "redist_scalapack.h"
#include "scalapack_decls.h"
#include "timing.hpp"

extern "C" {
void pdtran_(const int *, const int *, const double *, const double *, const int *, const int *,
             const int *, const double *, double *, const int *, const int *, const int *);
void pztranc_(const int *, const int *, const void *, const void *, const int *, const int *,
              const int *, const void *, void *, const int *, const int *, const int *);
void pdgeadd_(const char *, const int *, const int *, const double *, const double *, const int *,
              const int *, const int *, const double *, double *, const int *, const int *,
              const int *);
void pdtradd_(const char *, const char *, const int *, const int *, const double *, const double *,
              const int *, const int *, const int *, const double *, double *, const int *,
              const int *, const int *);
}

namespace {

enum class Kind { tran, geadd_n, geadd_t, ztranc, tradd };

struct Case {
  std::string name;
  Kind kind;
  int nprow, npcol;
  int mb_a, mb_c;
  int offset = 0; // IA = JA = 1 + offset, IC = JC = 1 + 2 * offset, RSRC/CSRC of A: last
  double alpha[2], beta[2];
  // PBLAS's 11-integer descriptors (DTYPE_ = 2): A's with a first block of imb_a rows and
  // columns (0: 9 integers), C's with IMB_ = MB_ (the same layout as with 9).
  int imb_a = 0;
  bool eleven_c = false;
  char replicated = 0; // 'A' or 'C': that matrix replicated over the process rows
};

// Elements process p holds of `extent` dealt as a first block of `first` on src, then blocks
// of `block` from src + 1 (PBLAS's PB_Cnumroc at index 0).
int local_extent(int extent, int first, int block, int p, int src, int nprocs) {
  const int in_first = std::min(extent, first);
  const int rest = extent - in_first;
  const int next = (src + 1) % nprocs;
  return (p == src ? in_first : 0) + numroc_(&rest, &block, &p, &next, &nprocs);
}

// An 11-integer descriptor (BLOCK_CYCLIC_2D_INB).
void descinit_inb(int *d, int extent, int first, int block, int src_r, int src_c, int ctxt,
                  int lld) {
  const int fields[11] = {2, ctxt, extent, extent, first, first, block, block, src_r, src_c, lld};
  std::copy(fields, fields + 11, d);
}

using bench::median;
using bench::timed;

} // namespace

int main(int argc, char **argv) {
  MPI_Init(&argc, &argv);
  int me = 0, np = 1;
  MPI_Comm_rank(MPI_COMM_WORLD, &me);
  MPI_Comm_size(MPI_COMM_WORLD, &np);
  int size = 4000;
  int reps = 5;
  std::string only_case;
  bool redist_only = false;
  for (int i = 1; i < argc; ++i) {
    if (!std::strcmp(argv[i], "--size") && i + 1 < argc)
      size = std::atoi(argv[++i]);
    else if (!std::strcmp(argv[i], "--reps") && i + 1 < argc)
      reps = std::atoi(argv[++i]);
    else if (!std::strcmp(argv[i], "--case") && i + 1 < argc)
      only_case = argv[++i];
    else if (!std::strcmp(argv[i], "--redist-only"))
      redist_only = true;
  }
  int gpr = 1;
  for (int d = 1; d * d <= np; ++d)
    if (np % d == 0) gpr = d;
  const int gpc = np / gpr;
  const std::vector<Case> cases = {
      {"pdtran 1xP 64->100", Kind::tran, 1, np, 64, 100, 0, {1, 0}, {0, 0}},
      {"pdtran grid 64->100", Kind::tran, gpr, gpc, 64, 100, 0, {1, 0}, {0, 0}},
      {"pdtran grid 1->64", Kind::tran, gpr, gpc, 1, 64, 0, {1, 0}, {0, 0}},
      {"pdtran window+src", Kind::tran, gpr, gpc, 64, 64, 3, {1, 0}, {0, 0}},
      {"pdgeadd N 64->100 a=2 b=.5", Kind::geadd_n, 1, np, 64, 100, 0, {2, 0}, {0.5, 0}},
      {"pdgeadd T 64->100 a=2 b=.5", Kind::geadd_t, 1, np, 64, 100, 0, {2, 0}, {0.5, 0}},
      {"pztranc 64->100 (N/2)", Kind::ztranc, 1, np, 64, 100, 0, {1, 0.5}, {0.25, -1}},
      {"pdtradd U N 64->100 b=1", Kind::tradd, 1, np, 64, 100, 0, {-1, 0}, {1, 0}},
      {"pdgeadd N 64->100 11-int", Kind::geadd_n, 1, np, 64, 100, 0, {2, 0}, {0.5, 0}, 64, true},
      {"pdtran grid 64->100 11-int", Kind::tran, gpr, gpc, 64, 100, 0, {1, 0}, {0, 0}, 64, true},
      {"pdgeadd N IMB=17 64->100", Kind::geadd_n, 1, np, 64, 100, 0, {2, 0}, {0.5, 0}, 17},
      {"pdtran grid IMB=17 64->100", Kind::tran, gpr, gpc, 64, 100, 0, {1, 0}, {0, 0}, 17},
      {"pdgeadd N Px1 C repl", Kind::geadd_n, np, 1, 64, 100, 0, {2, 0}, {0.5, 0}, 0, false, 'C'},
      {"pdtran Px1 C repl", Kind::tran, np, 1, 64, 100, 0, {1, 0}, {0, 0}, 0, false, 'C'},
      {"pdgeadd N Px1 A repl", Kind::geadd_n, np, 1, 64, 100, 0, {2, 0}, {0.5, 0}, 0, false, 'A'},
  };
  if (me == 0) {
    std::printf("pblas_bench: %d ranks, N = %d, median of %d (max over ranks)\n", np, size, reps);
    std::printf("%-30s %12s %12s %12s %8s %12s %10s\n", "case", "pblas_s", "redist_s", "redist-1st",
                "ratio", "memcpy_s", "pblas/cpy");
  }
  for (const Case &c : cases) {
    if (c.name.find(only_case) == std::string::npos) {
      continue;
    }
    int ctxt = 0;
    Cblacs_get(0, 0, &ctxt);
    Cblacs_gridinit(&ctxt, "R", c.nprow, c.npcol);
    int nr = 0, nc = 0, myr = -1, myc = -1;
    Cblacs_gridinfo(ctxt, &nr, &nc, &myr, &myc);
    const bool member = myr >= 0 && myr < c.nprow;
    const bool z = c.kind == Kind::ztranc;
    const int n = z ? size / 2 : size;
    const int es = z ? 2 : 1; // doubles per element
    const int off = c.offset;
    const int ia = 1 + off, ic = 1 + 2 * off;
    const int extent = n + 2 * off;
    const int m = n - off; // window
    const int zero = 0;
    const int src_r = off > 0 ? c.nprow - 1 : 0, src_c = off > 0 ? c.npcol - 1 : 0;
    int desca[11] = {}, descc[11] = {}, info = 0;
    double t_p = 0, t_r = 0, t_first = 0, t_copy = 0;
    bool equal = true;
    if (member) {
      const int first_a = c.imb_a > 0 ? c.imb_a : c.mb_a;
      const int lra =
          c.replicated == 'A' ? extent : local_extent(extent, first_a, c.mb_a, myr, src_r, c.nprow);
      const int lca = local_extent(extent, first_a, c.mb_a, myc, src_c, c.npcol);
      const int lrc =
          c.replicated == 'C' ? extent : numroc_(&extent, &c.mb_c, &myr, &zero, &c.nprow);
      const int lcc = numroc_(&extent, &c.mb_c, &myc, &zero, &c.npcol);
      const int llda = std::max(1, lra), lldc = std::max(1, lrc);
      // A replicated matrix's descriptor by hand (DESCINIT refuses RSRC_ = -1).
      const auto replicated_desc = [&](int *d, int mb, int lld) {
        const int fields[9] = {1, ctxt, extent, extent, mb, mb, -1, src_c, lld};
        std::copy(fields, fields + 9, d);
      };
      if (c.replicated == 'A')
        replicated_desc(desca, c.mb_a, llda);
      else if (c.imb_a > 0)
        descinit_inb(desca, extent, c.imb_a, c.mb_a, src_r, src_c, ctxt, llda);
      else
        descinit_(desca, &extent, &extent, &c.mb_a, &c.mb_a, &src_r, &src_c, &ctxt, &llda, &info);
      if (c.replicated == 'C')
        replicated_desc(descc, c.mb_c, lldc);
      else if (c.eleven_c)
        descinit_inb(descc, extent, c.mb_c, c.mb_c, 0, 0, ctxt, lldc);
      else
        descinit_(descc, &extent, &extent, &c.mb_c, &c.mb_c, &zero, &zero, &ctxt, &lldc, &info);
      std::vector<double> a(static_cast<std::size_t>(llda) * std::max(1, lca) * es);
      std::vector<double> c0(static_cast<std::size_t>(lldc) * std::max(1, lcc) * es);
      // The copies of a replicated matrix hold the same values.
      std::mt19937_64 gen_a(c.replicated == 'A' ? 1000U : static_cast<unsigned>(me) + 1);
      std::mt19937_64 gen_c(c.replicated == 'C' ? 2000U : static_cast<unsigned>(me) + 101);
      std::uniform_real_distribution<double> u(-1, 1);
      for (double &x : a)
        x = u(gen_a);
      for (double &x : c0)
        x = u(gen_c);
      std::vector<double> cp = c0, cr = c0;
      // This rank's elements of C's window (columns jc of [ic - 1, ic - 1 + m); rows up to the
      // diagonal for the upper trapezoid of PxTRADD).
      long long window_elements = 0;
      for (int j = 0; j < m; ++j) {
        const int jc = ic - 1 + j;
        if ((jc / c.mb_c) % c.npcol != myc) continue;
        const int rows = c.kind == Kind::tradd ? j + 1 : m;
        const int first = ic - 1, last = ic - 1 + rows;
        window_elements += c.replicated == 'C'
                               ? rows
                               : numroc_(&last, &c.mb_c, &myr, &zero, &c.nprow) -
                                     numroc_(&first, &c.mb_c, &myr, &zero, &c.nprow);
      }
      std::vector<double> copy_from(static_cast<std::size_t>(window_elements) * es, 1.0);
      std::vector<double> copy_to(copy_from.size());
      const auto run_copy = [&] {
        std::memcpy(copy_to.data(), copy_from.data(), copy_from.size() * sizeof(double));
      };
      timed(run_copy);
      const auto run = [&](bool pblas, std::vector<double> &out) {
        const double *al = c.alpha;
        const double *be = c.beta;
        switch (c.kind) {
        case Kind::tran:
          (pblas ? pdtran_ : redist_pdtran_)(&m, &m, al, a.data(), &ia, &ia, desca, be, out.data(),
                                             &ic, &ic, descc);
          break;
        case Kind::geadd_n:
        case Kind::geadd_t:
          (pblas ? pdgeadd_ : redist_pdgeadd_)(c.kind == Kind::geadd_n ? "N" : "T", &m, &m, al,
                                               a.data(), &ia, &ia, desca, be, out.data(), &ic, &ic,
                                               descc);
          break;
        case Kind::ztranc:
          (pblas ? pztranc_ : redist_pztranc_)(&m, &m, al, a.data(), &ia, &ia, desca, be,
                                               out.data(), &ic, &ic, descc);
          break;
        case Kind::tradd:
          (pblas ? pdtradd_ : redist_pdtradd_)("U", "N", &m, &m, al, a.data(), &ia, &ia, desca, be,
                                               out.data(), &ic, &ic, descc);
          break;
        }
      };
      // Correctness on one call from the same input, then timings (C accumulates: fine).
      run(true, cp);
      t_first = MPI_Wtime();
      run(false, cr);
      t_first = MPI_Wtime() - t_first;
      equal = std::memcmp(cp.data(), cr.data(), cp.size() * sizeof(double)) == 0;
      std::vector<double> tp, tr, tc;
      for (int r = 0; r < reps; ++r) {
        if (!redist_only) {
          tp.push_back(timed([&] { run(true, cp); }));
        }
        tr.push_back(timed([&] { run(false, cr); }));
        tc.push_back(timed(run_copy));
      }
      t_p = tp.empty() ? 0.0 : median(tp);
      t_r = median(tr);
      t_copy = median(tc);
      Cblacs_gridexit(ctxt);
    } else {
      for (int r = 0; r < (redist_only ? 2 : 3) * reps + 1; ++r)
        timed([] {}); // the members' barriers and reductions
    }
    int ok = equal ? 1 : 0;
    MPI_Allreduce(MPI_IN_PLACE, &ok, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
    MPI_Allreduce(MPI_IN_PLACE, &t_first, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
    if (me == 0) {
      std::printf("%-30s %12.5f %12.5f %12.5f %7.2fx %12.5f %9.2fx%s\n", c.name.c_str(), t_p, t_r,
                  t_first, t_r > 0 ? t_p / t_r : 0.0, t_copy, t_copy > 0 ? t_p / t_copy : 0.0,
                  ok ? "" : "  MISMATCH");
      std::fflush(stdout);
    }
  }
  MPI_Finalize();
  return 0;
}
