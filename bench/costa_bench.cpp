// costa_bench: ScaLAPACK's PxGEMR2D, redist's redist_pxgemr2d_ and COSTA's costa_pxgemr2d in
// the same process, on the same inputs, alternating within every round; COSTA's and redist's
// outputs checked against ScaLAPACK's bit for bit. A case where COSTA's B differs after its
// warm-up call is reported as wrong and not timed; a case COSTA would crash on (a process outside
// A's or B's grid) is skipped with the reason. Optional: built only with
// -DREDIST_COSTA_DIR=<COSTA prefix>. Uses redist_bench's cases (make_cases) and helpers:
// redist_bench.cpp is included without its main. PxTRMR2D and integer cases are left out (COSTA
// has no such entries).
//
//   mpirun -n 2 costa_bench [--size N] [--reps R] [--case NAME]
//   (--reps: rounds, each calling ScaLAPACK, redist and COSTA once; default 5)

#define REDIST_BENCH_NO_MAIN
#include "redist_bench.cpp"

// COSTA's prefixed ScaLAPACK entries (libcosta_prefixed_scalapack), as declared in its
// src/costa/pxgemr2d/prefixed_pxgemr2d.h, which COSTA does not install.
extern "C" {
#define COSTA_DECL(name, T)                                                                   \
  void name(const int *m, const int *n, const T *a, const int *ia, const int *ja,             \
            const int *desca, T *b, const int *ib, const int *jb, const int *descb,           \
            const int *ictxt);
COSTA_DECL(costa_psgemr2d, float)
COSTA_DECL(costa_pdgemr2d, double)
COSTA_DECL(costa_pcgemr2d, float)
COSTA_DECL(costa_pzgemr2d, double)
#undef COSTA_DECL
}

namespace {

void run_costa(const Call &k, const void *a, void *b) {
  const CaseSpec &c = *k.c;
  switch (c.ty) {
  case Ty::S:
    costa_psgemr2d(&c.m, &c.n, static_cast<const float *>(a), &c.ia, &c.ja, k.desca,
                   static_cast<float *>(b), &c.ib, &c.jb, k.descb, &k.ictxt);
    break;
  case Ty::D:
    costa_pdgemr2d(&c.m, &c.n, static_cast<const double *>(a), &c.ia, &c.ja, k.desca,
                   static_cast<double *>(b), &c.ib, &c.jb, k.descb, &k.ictxt);
    break;
  case Ty::C:
    costa_pcgemr2d(&c.m, &c.n, static_cast<const float *>(a), &c.ia, &c.ja, k.desca,
                   static_cast<float *>(b), &c.ib, &c.jb, k.descb, &k.ictxt);
    break;
  case Ty::Z:
    costa_pzgemr2d(&c.m, &c.n, static_cast<const double *>(a), &c.ia, &c.ja, k.desca,
                   static_cast<double *>(b), &c.ib, &c.jb, k.descb, &k.ictxt);
    break;
  default:
    break;
  }
}

// Local elements of B (over all ranks) that differ bitwise from ScaLAPACK's output.
i64 count_diff(const Grid &gb, const Local &B, Ty ty, const std::vector<unsigned char> &ref,
               const std::vector<unsigned char> &got) {
  i64 d = 0;
  if (gb.member) {
    const std::size_t es = elem_size(ty), lld = static_cast<std::size_t>(B.lld);
    for (std::size_t lj = 0; lj < B.gcol.size(); ++lj)
      for (std::size_t li = 0; li < B.grow.size(); ++li) {
        const std::size_t off = (lj * lld + li) * es;
        if (std::memcmp(ref.data() + off, got.data() + off, es) != 0) ++d;
      }
  }
  MPI_Allreduce(MPI_IN_PLACE, &d, 1, MPI_INT64_T, MPI_SUM, MPI_COMM_WORLD);
  return d;
}

// What COSTA's ScaLAPACK wrapper (costa::pxgemr2d, COSTA 2.3.2) assumes of its arguments:
//  - it asks BLACS for the communicator of both descriptors' contexts on every calling process,
//    so a process outside A's or B's grid (CTXT_ = -1) crashes in Cblacs_get;
//  - it takes the grid dimensions of A and of B both from ICTXT's grid;
//  - it maps grid position (pr, pc) to rank pr * npcol + pc of the union of the grids (row-major),
//    or pr + pc * nprow when the grid has one column (Cblacs_pcoord of process 1).
// The first one is checked before calling (skipped, with the reason); the other two show as a wrong
// B, so COSTA runs once on padded copies and is timed only if its B equals ScaLAPACK's.
bool all_ranks_in(const MatSpec &s, int np) {
  std::vector<char> in(static_cast<std::size_t>(np), 0);
  for (int r : s.ranks)
    if (r >= 0 && r < np) in[static_cast<std::size_t>(r)] = 1;
  return std::find(in.begin(), in.end(), 0) == in.end();
}

// Upper bound, in elements, of the local array COSTA may address for a descriptor when it takes
// the grid to be nprow x npcol (which is not A's or B's grid when COSTA misreads it).
std::size_t costa_extent(const MatSpec &s, int lld, int nprow, int npcol) {
  const std::size_t rows =
      static_cast<std::size_t>(ceil_div(ceil_div(s.m, s.mb), nprow)) * static_cast<std::size_t>(s.mb);
  const std::size_t cols =
      static_cast<std::size_t>(ceil_div(ceil_div(s.n, s.nb), npcol)) * static_cast<std::size_t>(s.nb);
  return cols * static_cast<std::size_t>(lld) + rows;
}

double min_of(const std::vector<double> &v) {
  return v.empty() ? 0.0 : *std::min_element(v.begin(), v.end());
}
double max_of(const std::vector<double> &v) {
  return v.empty() ? 0.0 : *std::max_element(v.begin(), v.end());
}

} // namespace

int main(int argc, char **argv) {
  MPI_Init(&argc, &argv);
  int me = 0, np = 1;
  MPI_Comm_rank(MPI_COMM_WORLD, &me);
  MPI_Comm_size(MPI_COMM_WORLD, &np);
  int size = 4000, reps = 5;
  std::string only;
  for (int i = 1; i + 1 < argc; i += 2) {
    const std::string a = argv[i];
    if (a == "--size")
      size = std::atoi(argv[i + 1]);
    else if (a == "--reps")
      reps = std::atoi(argv[i + 1]);
    else if (a == "--case")
      only = argv[i + 1];
  }
  reps = std::max(reps, 1);
  int bme = 0, bnp = 0, sysctxt = 0, ictxt = 0;
  Cblacs_pinfo(&bme, &bnp);
  Cblacs_get(-1, 0, &sysctxt);
  ictxt = sysctxt;
  Cblacs_gridinit(&ictxt, "R", 1, np);

  if (me == 0)
    std::printf("# costa_bench: %d ranks, size %d, %d rounds (each: ScaLAPACK, redist, COSTA) after "
                "one warm-up each; medians of the max over ranks [s], min-max over the rounds\n"
                "%-11s %-2s %-11s %-30s %10s %10s %10s %8s %8s  %-35s  %s\n",
                np, size, reps, "case", "t", "dims", "layout A -> B", "scalapack", "redist",
                "costa", "costa/r", "scal/r", "ranges: scal | redist | costa | costa/r | scal/r",
                "status");
  int redist_bad = 0;
  for (const CaseSpec &c : make_cases(np, size)) {
    if (c.trmr || c.ty == Ty::I || c.min_procs > np) continue;
    if (!only.empty() && c.name.find(only) == std::string::npos) continue;
    const Grid ga = make_grid(sysctxt, c.a, me);
    const Grid gb = make_grid(sysctxt, c.b, me);
    Local A = make_local(c.a, ga, c.ty);
    Local B = make_local(c.b, gb, c.ty);
    if (ga.member) fill(A, c.ty, kSeedA);
    if (gb.member) fill(B, c.ty, kSeedB);
    std::vector<unsigned char> bs = B.data, br = B.data;
    int desca[9], descb[9];
    fill_desc(desca, c.a, ga, A.lld);
    fill_desc(descb, c.b, gb, B.lld);
    const Call k{&c, desca, descb, ictxt};

    // COSTA: ICTXT is A's context when A's and B's grids have the same shape (COSTA reads both
    // grids' dimensions from ICTXT, as its own miniapp passes them), the 1 x np union otherwise.
    std::string costa_skip;
    if (!all_ranks_in(c.a, np) || !all_ranks_in(c.b, np))
      costa_skip = "COSTA skipped: a rank is outside A's or B's grid (COSTA calls Cblacs_get on "
                   "CTXT_ = -1 there and crashes)";
    const bool same_shape = c.a.nprow == c.b.nprow && c.a.npcol == c.b.npcol;
    const int costa_ctxt = same_shape && ga.member ? ga.ctxt : ictxt;
    const int cr = same_shape ? c.a.nprow : 1, cc = same_shape ? c.a.npcol : np;
    const std::size_t es = elem_size(c.ty);
    std::vector<unsigned char> ac(std::max(A.data.size(), costa_extent(c.a, A.lld, cr, cc) * es)),
        bc(std::max(B.data.size(), costa_extent(c.b, B.lld, cr, cc) * es));
    std::memcpy(ac.data(), A.data.data(), A.data.size());
    std::memcpy(bc.data(), B.data.data(), B.data.size());
    const Call kc{&c, desca, descb, costa_ctxt};

    auto scal = [&] { run_scalapack(k, A.data.data(), bs.data()); };
    auto red = [&] { run_redist(k, A.data.data(), br.data()); };
    auto cos = [&] { run_costa(kc, ac.data(), bc.data()); };
    // Warm-up, which is also the check of COSTA's B before it is timed.
    timed(scal);
    timed(red);
    i64 dc = -1;
    if (costa_skip.empty()) {
      timed(cos);
      dc = count_diff(gb, B, c.ty, bs, bc);
    }
    const bool time_costa = costa_skip.empty() && dc == 0;
    std::vector<double> vs, vr, vc, qc, qs;
    for (int r = 0; r < reps; ++r) {
      vs.push_back(timed(scal));
      vr.push_back(timed(red));
      if (time_costa) vc.push_back(timed(cos));
      qs.push_back(vr.back() > 0 ? vs.back() / vr.back() : 0.0);
      if (time_costa) qc.push_back(vr.back() > 0 ? vc.back() / vr.back() : 0.0);
    }
    const double ts = median(vs), tr = median(vr), tc = median(vc);
    const i64 dr = count_diff(gb, B, c.ty, bs, br);
    if (time_costa) dc = count_diff(gb, B, c.ty, bs, bc); // and after the timed calls
    std::string st;
    if (dr > 0) {
      ++redist_bad;
      st = "redist MISMATCH: " + std::to_string(dr) + " elements differ; ";
    }
    if (!costa_skip.empty())
      st += costa_skip;
    else if (dc > 0)
      st += "COSTA WRONG, not timed: " + std::to_string(dc) + " of " +
            std::to_string(static_cast<i64>(c.b.m) * c.b.n) + " elements of B differ";
    else
      st += "all equal";
    char rng[160];
    if (time_costa)
      std::snprintf(rng, sizeof rng, "%.4f-%.4f | %.4f-%.4f | %.4f-%.4f | %.2f-%.2f | %.2f-%.2f",
                    min_of(vs), max_of(vs), min_of(vr), max_of(vr), min_of(vc), max_of(vc),
                    min_of(qc), max_of(qc), min_of(qs), max_of(qs));
    else
      std::snprintf(rng, sizeof rng, "%.4f-%.4f | %.4f-%.4f | - | - | %.2f-%.2f", min_of(vs),
                    max_of(vs), min_of(vr), max_of(vr), min_of(qs), max_of(qs));
    if (me == 0) {
      char tcs[16] = "-", rcs[16] = "-";
      if (time_costa) {
        std::snprintf(tcs, sizeof tcs, "%.5f", tc);
        std::snprintf(rcs, sizeof rcs, "%.2f", median(qc));
      }
      std::printf("%-11s %-2c %-11s %-30s %10.5f %10.5f %10s %8s %8.2f  %-35s  %s\n",
                  c.name.c_str(), type_char(c.ty),
                  (std::to_string(c.m) + "x" + std::to_string(c.n)).c_str(), c.what.c_str(), ts,
                  tr, tcs, rcs, median(qs), rng, st.c_str());
    }
    std::fflush(stdout);
    if (ga.member) Cblacs_gridexit(ga.ctxt);
    if (gb.member) Cblacs_gridexit(gb.ctxt);
  }
  Cblacs_gridexit(ictxt);
  Cblacs_exit(1);
  MPI_Finalize();
  return redist_bad > 0 ? 1 : 0;
}
