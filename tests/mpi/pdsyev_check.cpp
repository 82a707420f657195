// ScaLAPACK through redist: PDSYEV with JOBZ='V' computes the eigenvectors on an NPROCS x 1
// grid (SL_GRIDRESHAPE) and moves them onto Z's grid with PDGEMR2D (ICTXT = that reshaped
// context; processes of the grid's context, IA/JA of the call). This program runs PDSYEV on
// several matrices / grids (2x3, 3x2 gridmap in a random order, 1x6, 6x1, a 2x2 sub-grid of 6
// processes with offsets IA = JA = IZ = JZ = 9 and RSRC_/CSRC_ != 0).
//
// Built twice from this source:
//   redist_mpi_pdsyev_ref     plain ScaLAPACK:        --write PREFIX   stores W and local Z
//   redist_mpi_pdsyev_redist  REDIST_PDSYEV_INTERPOSED, redist_scalapack linked before
//                             ScaLAPACK:              --compare PREFIX  requires the same
//                             eigenvalues and eigenvectors BIT FOR BIT, and that redist
//                             served PDSYEV's internal PDGEMR2D calls (call counter > 0).
// With repeatable BLACS combines (BLACS_SET 15/16 on the grid; by default, combines over more
// than two processes sum in message-arrival order and two runs of plain ScaLAPACK differ in
// the last bits), PDSYEV is deterministic for a fixed process count and grid, so the two
// programs agree bit for bit exactly when every redistribution copied exactly.
// Both also sanity-check the result: INFO = 0, W ascending, sum(W) = trace(A).

#include "../common/scalapack_decls.h"
#include "harness.hpp"

#ifdef REDIST_PDSYEV_INTERPOSED
#include <redist_scalapack.h>
#endif

#include <mpi.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <string>
#include <vector>

namespace {

using mpitest::GridKind;
using mpitest::GridSpec;

struct Config {
  int n;
  int nb;
  GridSpec grid;
  char uplo;
  int offset; ///< IA = JA = IZ = JZ = offset + 1 (a multiple of NB)
  int rsrc, csrc;
  bool repeatable = true;
};

double a_value(int i, int j) { // symmetric, well-separated diagonal
  return std::cos(0.37 * (i + 1) * (j + 1)) + (i == j ? 0.5 * i : 0.0);
}

std::string rank_prefix() { return "[rank " + std::to_string(mpitest::world_rank()) + "] "; }

GridSpec grid_of(GridKind kind, int nprow, int npcol, std::vector<int> ranks) {
  GridSpec g;
  g.kind = kind;
  g.nprow = nprow;
  g.npcol = npcol;
  g.ranks = std::move(ranks);
  return g;
}

std::vector<Config> configs(int np) {
  std::vector<Config> out;
  std::vector<int> all(static_cast<std::size_t>(np));
  for (int r = 0; r < np; ++r) all[static_cast<std::size_t>(r)] = r;
  int nprow = 1;
  for (int d = 1; d * d <= np; ++d)
    if (np % d == 0) nprow = d;
  const int npcol = np / nprow;
  // gridinit 'R': position (pr, pc) is rank pr*npcol + pc
  std::vector<int> rowmajor(static_cast<std::size_t>(np));
  for (int pr = 0; pr < nprow; ++pr)
    for (int pc = 0; pc < npcol; ++pc)
      rowmajor[static_cast<std::size_t>(pr + pc * nprow)] = pr * npcol + pc;
  out.push_back({37, 4, grid_of(GridKind::InitRow, nprow, npcol, rowmajor), 'L', 0, 0, 0});
  std::vector<int> shuffled = all;
  mpitest::Rng rng(12345);
  rng.shuffle(shuffled);
  out.push_back({50, 5, grid_of(GridKind::Map, npcol, nprow, shuffled), 'U', 0, 0, 0});
  out.push_back({29, 3, grid_of(GridKind::Map, 1, np, all), 'L', 0, 0, 0});
  out.push_back({33, 2, grid_of(GridKind::InitCol, np, 1, all), 'U', 0, 0, 0});
  if (np >= 4) {
    std::vector<int> sub(shuffled.begin(), shuffled.begin() + 4);
    out.push_back({40, 8, grid_of(GridKind::Map, 2, 2, sub), 'U', 8, 1, 1});
  }
  return out;
}

struct Result {
  std::vector<double> w, z;
  int info = 0;
  long long served = 0;
};

bool run_config(const Config &c, Result &res, std::string &err) {
  const int me = mpitest::world_rank();
  std::string herr;
  const int ctxt = mpitest::create_context(c.grid, herr);
  if (!herr.empty()) err += herr;
  int pr = -1, pc = -1;
  if (!c.grid.find(me, pr, pc)) return false;
  if (c.repeatable) {
    // BLACS combines (DGSUM2D, ...) are not repeatable by default on grids with more than two
    // processes in a row or column: the summation order follows message arrival, so two runs
    // of plain ScaLAPACK differ in the last bits. Ask for repeatable, coherent combines.
    int one = 1;
    Cblacs_set(ctxt, 15, &one);
    Cblacs_set(ctxt, 16, &one);
  }
  const int nprow = c.grid.nprow, npcol = c.grid.npcol;
  const int mg = c.n + c.offset;
  const int locr = static_cast<int>(mpitest::numroc(mg, c.nb, pr, c.rsrc, nprow));
  const int locc = static_cast<int>(mpitest::numroc(mg, c.nb, pc, c.csrc, npcol));
  const int lld = std::max(1, locr) + 3;
  int desc[9] = {1, ctxt, mg, mg, c.nb, c.nb, c.rsrc, c.csrc, lld};
  std::vector<double> a(static_cast<std::size_t>(lld) * std::max(1, locc), -7.0);
  for (int lj = 0; lj < locc; ++lj) {
    for (int li = 0; li < locr; ++li) {
      const auto gi = static_cast<int>(mpitest::local_to_global(li, c.nb, pr, c.rsrc, nprow));
      const auto gj = static_cast<int>(mpitest::local_to_global(lj, c.nb, pc, c.csrc, npcol));
      a[static_cast<std::size_t>(li + lj * lld)] = a_value(gi - c.offset, gj - c.offset);
    }
  }
  res.z.assign(a.size(), -3.0);
  res.w.assign(static_cast<std::size_t>(c.n), 0.0);
  const int ia = c.offset + 1;
  double wkopt = 0;
  int lwork = -1;
  pdsyev_("V", &c.uplo, &c.n, a.data(), &ia, &ia, desc, res.w.data(), res.z.data(), &ia, &ia,
          desc, &wkopt, &lwork, &res.info);
  lwork = static_cast<int>(wkopt) + 64;
  std::vector<double> work(static_cast<std::size_t>(lwork));
#ifdef REDIST_PDSYEV_INTERPOSED
  const long long before = redist_scalapack_call_count();
#endif
  pdsyev_("V", &c.uplo, &c.n, a.data(), &ia, &ia, desc, res.w.data(), res.z.data(), &ia, &ia,
          desc, work.data(), &lwork, &res.info);
#ifdef REDIST_PDSYEV_INTERPOSED
  res.served = redist_scalapack_call_count() - before;
  if (redist_scalapack_last_status() != 0)
    err += "redist_scalapack_last_status() = " + std::to_string(redist_scalapack_last_status()) +
           " after PDSYEV\n";
#endif
  if (res.info != 0) err += "PDSYEV INFO = " + std::to_string(res.info) + "\n";
  double trace = 0, sum = 0;
  for (int i = 0; i < c.n; ++i) trace += a_value(i, i);
  for (int i = 0; i < c.n; ++i) {
    sum += res.w[static_cast<std::size_t>(i)];
    if (i > 0 && res.w[static_cast<std::size_t>(i)] < res.w[static_cast<std::size_t>(i - 1)])
      err += "eigenvalues not ascending at " + std::to_string(i) + "\n";
  }
  if (!(std::fabs(sum - trace) <= 1e-10 * (1 + std::fabs(trace))))
    err += "sum of eigenvalues " + std::to_string(sum) + " != trace " + std::to_string(trace) + "\n";
  mpitest::free_context(ctxt);
  return true;
}

std::string file_name(const std::string &prefix, int cfg) {
  return prefix + ".np" + std::to_string(mpitest::world_size()) + ".cfg" + std::to_string(cfg) +
         ".rank" + std::to_string(mpitest::world_rank()) + ".bin";
}

} // namespace

int main(int argc, char **argv) {
  MPI_Init(&argc, &argv);
  const int me = mpitest::world_rank();
  std::string mode, prefix;
  if (argc == 3) {
    mode = argv[1];
    prefix = argv[2];
  }
#ifdef REDIST_PDSYEV_INTERPOSED
  const char *usage = "--compare";
#else
  const char *usage = "--write";
#endif
  if (mode != usage) {
    if (me == 0) std::fprintf(stderr, "usage: %s %s PREFIX\n", argv[0], usage);
    MPI_Abort(MPI_COMM_WORLD, 2);
  }

  int failures = 0;
  const std::vector<Config> cfgs = configs(mpitest::world_size());
  for (std::size_t k = 0; k < cfgs.size(); ++k) {
    const Config &c = cfgs[k];
    Result res;
    std::string err;
    const bool member = run_config(c, res, err);
    std::string note;
    if (member) {
      const std::string path = file_name(prefix, static_cast<int>(k));
#ifdef REDIST_PDSYEV_INTERPOSED
      if (res.served <= 0)
        err += "redist served " + std::to_string(res.served) +
               " calls during PDSYEV: its pdgemr2d_ did not interpose ScaLAPACK's\n";
      std::ifstream in(path, std::ios::binary);
      std::vector<double> w(res.w.size()), z(res.z.size());
      int info = -1;
      in.read(reinterpret_cast<char *>(&info), sizeof info);
      in.read(reinterpret_cast<char *>(w.data()), static_cast<std::streamsize>(w.size() * sizeof(double)));
      in.read(reinterpret_cast<char *>(z.data()), static_cast<std::streamsize>(z.size() * sizeof(double)));
      char extra = 0;
      if (!in || in.read(&extra, 1)) {
        err += "cannot read the reference " + path + " (or its size differs)\n";
      } else {
        const auto max_rel = [](const std::vector<double> &x, const std::vector<double> &y) {
          double worst = 0, scale = 0;
          for (std::size_t i = 0; i < x.size(); ++i) {
            worst = std::max(worst, std::fabs(x[i] - y[i]));
            scale = std::max(scale, std::fabs(y[i]));
          }
          char buf[64];
          std::snprintf(buf, sizeof buf, "%.3g", worst / std::max(scale, 1e-300));
          return std::string(buf);
        };
        if (std::memcmp(w.data(), res.w.data(), w.size() * sizeof(double)) != 0)
          err += "eigenvalues differ from plain ScaLAPACK's (max relative difference " +
                 max_rel(res.w, w) + ")\n";
        if (std::memcmp(z.data(), res.z.data(), z.size() * sizeof(double)) != 0)
          err += "local eigenvector block Z differs from plain ScaLAPACK's (max relative "
                 "difference " + max_rel(res.z, z) + ")\n";
      }
      note = ", redist served " + std::to_string(res.served) + " PDGEMR2D calls";
#else
      std::ofstream out(path, std::ios::binary | std::ios::trunc);
      out.write(reinterpret_cast<const char *>(&res.info), sizeof res.info);
      out.write(reinterpret_cast<const char *>(res.w.data()), static_cast<std::streamsize>(res.w.size() * sizeof(double)));
      out.write(reinterpret_cast<const char *>(res.z.data()), static_cast<std::streamsize>(res.z.size() * sizeof(double)));
      if (!out) err += "cannot write " + path + "\n";
#endif
    }
    if (!err.empty()) {
      std::printf("%sPDSYEV config %zu (N=%d NB=%d UPLO=%c IA=JA=%d RSRC=%d CSRC=%d grid %s): "
                  "FAILED\n%s",
                  rank_prefix().c_str(), k, c.n, c.nb, c.uplo, c.offset + 1, c.rsrc, c.csrc,
                  c.grid.describe().c_str(), err.c_str());
      std::fflush(stdout);
    }
    int bad = err.empty() ? 0 : 1, any = 0;
    MPI_Allreduce(&bad, &any, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
    failures += any;
    if (me == c.grid.ranks[0]) {
      std::printf("PDSYEV config %zu (N=%d NB=%d UPLO=%c IA=JA=%d grid %s): %s%s\n", k, c.n,
                  c.nb, c.uplo, c.offset + 1, c.grid.describe().c_str(),
                  any ? "FAILED" : "ok", note.c_str());
      std::fflush(stdout);
    }
    MPI_Barrier(MPI_COMM_WORLD);
  }
  if (mpitest::blacs_used()) Cblacs_exit(1);
  MPI_Finalize();
  return failures == 0 ? 0 : 1;
}
