// costa_bench: ScaLAPACK's PxGEMR2D, redist's redist_pxgemr2d_ and COSTA's costa_pxgemr2d in
// the same process, on the same inputs, alternating; every output checked against
// ScaLAPACK's bit for bit. Optional: built only with -DREDIST_COSTA_DIR=<COSTA prefix>.
// Uses redist_bench's cases (make_cases) and helpers: redist_bench.cpp is included without
// its main. PxTRMR2D and integer cases are skipped (COSTA has no such entries).
//
//   mpirun -n 2 costa_bench [--size N] [--reps R] [--case NAME]

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
  int bme = 0, bnp = 0, sysctxt = 0, ictxt = 0;
  Cblacs_pinfo(&bme, &bnp);
  Cblacs_get(-1, 0, &sysctxt);
  ictxt = sysctxt;
  Cblacs_gridinit(&ictxt, "R", 1, np);

  if (me == 0)
    std::printf("# costa_bench: %d ranks, size %d, %d reps; medians of the max over ranks [s]\n"
                "%-11s %-2s %-11s %-36s %10s %10s %10s %8s %8s  %s\n",
                np, size, reps, "case", "t", "dims", "layout A -> B", "scalapack", "redist",
                "costa", "costa/r", "scal/r", "status");
  bool bad = false;
  for (const CaseSpec &c : make_cases(np, size)) {
    if (c.trmr || c.ty == Ty::I || c.min_procs > np) continue;
    if (!only.empty() && c.name.find(only) == std::string::npos) continue;
    const Grid ga = make_grid(sysctxt, c.a, me);
    const Grid gb = make_grid(sysctxt, c.b, me);
    Local A = make_local(c.a, ga, c.ty);
    Local B = make_local(c.b, gb, c.ty);
    if (ga.member) fill(A, c.ty, kSeedA);
    if (gb.member) fill(B, c.ty, kSeedB);
    std::vector<unsigned char> bs = B.data, br = B.data, bc = B.data;
    int desca[9], descb[9];
    fill_desc(desca, c.a, ga, A.lld);
    fill_desc(descb, c.b, gb, B.lld);
    const Call k{&c, desca, descb, ictxt};
    auto scal = [&] { run_scalapack(k, A.data.data(), bs.data()); };
    auto red = [&] { run_redist(k, A.data.data(), br.data()); };
    auto cos = [&] { run_costa(k, A.data.data(), bc.data()); };
    timed(scal); // warm-up each
    timed(red);
    timed(cos);
    std::vector<double> vs, vr, vc;
    for (int r = 0; r < reps; ++r) {
      vs.push_back(timed(scal));
      vr.push_back(timed(red));
      vc.push_back(timed(cos));
    }
    const double ts = median(vs), tr = median(vr), tc = median(vc);
    const i64 dr = count_diff(gb, B, c.ty, bs, br), dc = count_diff(gb, B, c.ty, bs, bc);
    std::string st = "ok";
    if (dr > 0 || dc > 0) {
      bad = true;
      st = "MISMATCH(redist " + std::to_string(dr) + ", costa " + std::to_string(dc) + ")";
    }
    if (me == 0)
      std::printf("%-11s %-2c %-11s %-36s %10.5f %10.5f %10.5f %8.2f %8.2f  %s\n",
                  c.name.c_str(), type_char(c.ty),
                  (std::to_string(c.m) + "x" + std::to_string(c.n)).c_str(), c.what.c_str(), ts,
                  tr, tc, tr > 0 ? tc / tr : 0.0, tr > 0 ? ts / tr : 0.0, st.c_str());
    std::fflush(stdout);
    if (ga.member) Cblacs_gridexit(ga.ctxt);
    if (gb.member) Cblacs_gridexit(gb.ctxt);
  }
  Cblacs_gridexit(ictxt);
  Cblacs_exit(1);
  MPI_Finalize();
  return bad ? 1 : 0;
}
