// B := alpha op(A) + beta B: PBLAS's PxTRAN, PxTRANU, PxTRANC, PxGEADD and PxTRADD
// served by redist, against Debian's PBLAS bit for bit. This program is linked with the
// drop-in library (redist_scalapack) ahead of ScaLAPACK, so the unprefixed names (pdtran_,
// PZGEADD, ...) are redist's (dladdr checks it); PBLAS's own routines are looked up in the
// ScaLAPACK library with dlopen/dlsym. Each random case (type, routine, TRANS, UPLO, M, N,
// block sizes, grid shape and order, RSRC/CSRC, IA/JA/IC/JC, LLD padding, alpha and beta among
// 0, 1, -1 and random values, real and complex; each of A's and C's descriptors, in about
// half the cases, an 11-integer DTYPE_ = 2 one whose IMB_ / INB_ range from 1 to beyond MB_ /
// NB_ and now and then beyond M_ / N_) runs PBLAS and redist (prefixed redist_p?...
// entries or an unprefixed spelling, at random) on identical inputs; on every rank C's whole
// buffer (padding and a guard zone included) must equal PBLAS's bit for bit, A must be
// unchanged and the call must report success. With beta = 0, C starts with NaN and Inf, which
// must not reach the result. Error cases (bad TRANS, UPLO, M, N, descriptors, NULL alpha; for
// 11-integer descriptors IMB_ / INB_ below 1, DTYPE_ = 3, LLD_ below the local rows counted
// with IMB_) must fail on every rank with C untouched, the message naming the argument.

#include "../errors/error_support.hpp"
#include "harness.hpp"

#include <redist.h>
#include <redist_scalapack.h>

#include "../common/scalapack_decls.h"

#include <dlfcn.h>
#include <gtest/gtest.h>
#include <mpi.h>

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstring>
#include <functional>
#include <limits>
#include <numeric>
#include <random>
#include <string>
#include <vector>

namespace mpitest {
namespace {

using Tran = void (*)(const int *, const int *, const void *, const void *, const int *,
                      const int *, const int *, const void *, void *, const int *, const int *,
                      const int *);
using Geadd = void (*)(const char *, const int *, const int *, const void *, const void *,
                       const int *, const int *, const int *, const void *, void *, const int *,
                       const int *, const int *);
using Tradd = void (*)(const char *, const char *, const int *, const int *, const void *,
                       const void *, const int *, const int *, const int *, const void *, void *,
                       const int *, const int *, const int *);

void *scalapack_handle() {
  static void *handle = dlopen("libscalapack-openmpi.so.2.2", RTLD_NOW | RTLD_NOLOAD);
  if (handle == nullptr) {
    handle = dlopen("libscalapack-openmpi.so.2.2", RTLD_NOW);
  }
  return handle;
}

void *pblas(const std::string &name) {
  return dlsym(scalapack_handle(), name.c_str());
}

// The symbol the program resolves (the drop-in's), and the library it is in.
void *resolved(const std::string &name, std::string *library) {
  void *f = dlsym(RTLD_DEFAULT, name.c_str());
  Dl_info info{};
  if (f != nullptr && dladdr(f, &info) != 0 && info.dli_fname != nullptr) {
    *library = info.dli_fname;
  }
  return f;
}

enum class Routine { tran, geadd, tradd };

struct Case {
  char x = 'd'; // s d c z
  Routine routine = Routine::tran;
  char trans = 'T'; // tran: 'T' (tran, tranu) or 'C' (tranc)
  char uplo = 'U';
  int m = 0, n = 0;
  int nprow = 1, npcol = 1;
  bool column_major = false;
  int a_rows = 0, a_cols = 0, mb_a = 1, nb_a = 1, rsrc_a = 0, csrc_a = 0, ia = 1, ja = 1;
  int c_rows = 0, c_cols = 0, mb_c = 1, nb_c = 1, rsrc_c = 0, csrc_c = 0, ic = 1, jc = 1;
  int pad_a = 0, pad_c = 0;
  // An 11-integer descriptor (DTYPE_ = 2) for A / C: first block of imb x inb.
  bool inb_desc_a = false, inb_desc_c = false;
  int imb_a = 1, inb_a = 1, imb_c = 1, inb_c = 1;
  int alpha_kind = 0, beta_kind = 0; // 0, 1, -1, random
  double alpha[2] = {0, 0}, beta[2] = {0, 0};
  int spelling = 0; // 0: redist_ prefixed, 1..4: unprefixed spellings
};

std::size_t element_size(char x) {
  return x == 's' ? 4 : x == 'z' ? 16 : 8;
}
bool is_complex(char x) {
  return x == 'c' || x == 'z';
}

std::string routine_name(const Case &c) {
  std::string s = "p";
  s += c.x;
  switch (c.routine) {
  case Routine::tran:
    s += !is_complex(c.x) ? "tran" : c.trans == 'C' ? "tranc" : "tranu";
    break;
  case Routine::geadd:
    s += "geadd";
    break;
  case Routine::tradd:
    s += "tradd";
    break;
  }
  return s;
}

std::string describe(const Case &c) {
  char buf[512];
  std::snprintf(buf, sizeof buf,
                "%s trans=%c uplo=%c m=%d n=%d grid %dx%d%s A %dx%d mb=%d nb=%d src=(%d,%d) "
                "ia=%d ja=%d C %dx%d mb=%d nb=%d src=(%d,%d) ic=%d jc=%d alpha=(%g,%g) "
                "beta=(%g,%g) spelling=%d",
                routine_name(c).c_str(), c.trans, c.uplo, c.m, c.n, c.nprow, c.npcol,
                c.column_major ? " C" : " R", c.a_rows, c.a_cols, c.mb_a, c.nb_a, c.rsrc_a,
                c.csrc_a, c.ia, c.ja, c.c_rows, c.c_cols, c.mb_c, c.nb_c, c.rsrc_c, c.csrc_c, c.ic,
                c.jc, c.alpha[0], c.alpha[1], c.beta[0], c.beta[1], c.spelling);
  std::string out = buf;
  if (c.inb_desc_a)
    out += " DESCA 11-integer imb=" + std::to_string(c.imb_a) + " inb=" + std::to_string(c.inb_a);
  if (c.inb_desc_c)
    out += " DESCC 11-integer imb=" + std::to_string(c.imb_c) + " inb=" + std::to_string(c.inb_c);
  return out;
}

void draw_scalar(Rng &rng, char x, int kind, double *v) {
  v[0] = v[1] = 0;
  if (kind == 1) v[0] = 1;
  if (kind == 2) v[0] = -1;
  if (kind == 3) {
    v[0] = static_cast<double>(rng.uniform(-1000, 1000)) / 37.0;
    if (is_complex(x)) v[1] = static_cast<double>(rng.uniform(-1000, 1000)) / 41.0;
  }
  if (kind == 4 && is_complex(x)) v[1] = 1; // i
}

Case draw(Rng &rng, int size) {
  Case c;
  c.x = rng.pick(std::vector<char>{'s', 'd', 'c', 'z'});
  c.routine = static_cast<Routine>(rng.uniform(0, 2));
  c.trans = c.routine == Routine::tran ? (is_complex(c.x) && rng.coin(0.5) ? 'C' : 'T')
                                       : rng.pick(std::vector<char>{'N', 'T', 'C', 'n', 't', 'c'});
  c.uplo = rng.pick(std::vector<char>{'U', 'L', 'u', 'l'});
  const int procs = static_cast<int>(rng.uniform(1, size));
  c.nprow = static_cast<int>(rng.uniform(1, procs));
  c.npcol = procs / c.nprow;
  c.column_major = rng.coin(0.5);
  c.m = rng.coin(0.05) ? 0 : static_cast<int>(rng.uniform(1, 60));
  c.n = rng.coin(0.05) ? 0 : static_cast<int>(rng.uniform(1, 60));
  const bool transposed = c.routine == Routine::tran || (c.trans != 'N' && c.trans != 'n');
  const int am = transposed ? c.n : c.m;
  const int an = transposed ? c.m : c.n;
  c.ia = static_cast<int>(rng.uniform(1, 6));
  c.ja = static_cast<int>(rng.uniform(1, 6));
  c.ic = static_cast<int>(rng.uniform(1, 6));
  c.jc = static_cast<int>(rng.uniform(1, 6));
  c.a_rows = c.ia - 1 + am + static_cast<int>(rng.uniform(0, 5));
  c.a_cols = c.ja - 1 + an + static_cast<int>(rng.uniform(0, 5));
  c.c_rows = c.ic - 1 + c.m + static_cast<int>(rng.uniform(0, 5));
  c.c_cols = c.jc - 1 + c.n + static_cast<int>(rng.uniform(0, 5));
  c.mb_a = static_cast<int>(rng.uniform(1, 12));
  c.nb_a = static_cast<int>(rng.uniform(1, 12));
  c.mb_c = static_cast<int>(rng.uniform(1, 12));
  c.nb_c = static_cast<int>(rng.uniform(1, 12));
  c.rsrc_a = static_cast<int>(rng.uniform(0, c.nprow - 1));
  c.csrc_a = static_cast<int>(rng.uniform(0, c.npcol - 1));
  c.rsrc_c = static_cast<int>(rng.uniform(0, c.nprow - 1));
  c.csrc_c = static_cast<int>(rng.uniform(0, c.npcol - 1));
  c.pad_a = static_cast<int>(rng.uniform(0, 3));
  c.pad_c = static_cast<int>(rng.uniform(0, 3));
  c.alpha_kind = static_cast<int>(rng.uniform(0, 4));
  c.beta_kind = static_cast<int>(rng.uniform(0, 4));
  draw_scalar(rng, c.x, c.alpha_kind, c.alpha);
  draw_scalar(rng, c.x, c.beta_kind, c.beta);
  c.spelling = static_cast<int>(rng.uniform(0, 4));
  // About half the sides: an 11-integer descriptor, first blocks from 1 to beyond the blocks
  // and now and then beyond the matrix.
  c.inb_desc_a = rng.coin(0.5);
  c.inb_desc_c = rng.coin(0.5);
  c.imb_a = static_cast<int>(random_first_block(rng, c.mb_a, c.a_rows));
  c.inb_a = static_cast<int>(random_first_block(rng, c.nb_a, c.a_cols));
  c.imb_c = static_cast<int>(random_first_block(rng, c.mb_c, c.c_rows));
  c.inb_c = static_cast<int>(random_first_block(rng, c.nb_c, c.c_cols));
  // Now and then a matrix replicated over the process rows or columns (RSRC_ / CSRC_ = -1).
  for (int *src : {&c.rsrc_a, &c.csrc_a, &c.rsrc_c, &c.csrc_c})
    if (rng.coin(0.12)) *src = -1;
  return c;
}

// The scalar in the element type's bytes.
std::vector<unsigned char> scalar_bytes(char x, const double *v) {
  std::vector<unsigned char> out(element_size(x));
  if (x == 's' || x == 'c') {
    const float f[2] = {static_cast<float>(v[0]), static_cast<float>(v[1])};
    std::memcpy(out.data(), f, out.size());
  } else {
    std::memcpy(out.data(), v, out.size());
  }
  return out;
}

struct Grid {
  int ctxt = -1;
  int myrow = -1, mycol = -1;
  [[nodiscard]] bool member() const { return myrow >= 0; }
};

Grid make_grid(const Case &c) {
  Grid g;
  Cblacs_get(0, 0, &g.ctxt);
  Cblacs_gridinit(&g.ctxt, c.column_major ? "C" : "R", c.nprow, c.npcol);
  int nr = 0, nc = 0;
  Cblacs_gridinfo(g.ctxt, &nr, &nc, &g.myrow, &g.mycol);
  if (g.myrow < 0 || g.myrow >= c.nprow) g.myrow = -1;
  return g;
}

// Fill with random bits of finite values.
void fill(std::vector<unsigned char> &buf, char x, std::mt19937_64 &gen, bool specials) {
  const std::size_t n = buf.size() / (x == 's' || x == 'c' ? 4 : 8);
  for (std::size_t i = 0; i < n; ++i) {
    const double v =
        std::ldexp(static_cast<double>(gen() % 2000001) - 1000000.0, -static_cast<int>(gen() % 20));
    double w = v;
    if (specials && gen() % 3 == 0) {
      w = gen() % 2 == 0 ? std::numeric_limits<double>::quiet_NaN()
                         : std::numeric_limits<double>::infinity();
    }
    if (x == 's' || x == 'c') {
      const auto f = static_cast<float>(w);
      std::memcpy(buf.data() + 4 * i, &f, 4);
    } else {
      std::memcpy(buf.data() + 8 * i, &w, 8);
    }
  }
}

struct Arrays {
  int desca[11] = {}, descc[11] = {}; // 9 integers, or 11 (DTYPE_ = 2)
  std::vector<unsigned char> a, c;
};

constexpr std::size_t kGuard = 64; // bytes after C's array

// `pblas_lld`: LLD_ as PBLAS checks it (below the local rows where that is allowed); the C API
// wants lld >= the local rows wherever the process is in the grid.
// `shared_seed`: the same on every process, for the values of replicated matrices.
Arrays make_arrays(const Case &k, const Grid &g, std::mt19937_64 &gen, bool pblas_lld = true,
                   std::uint64_t shared_seed = 0) {
  Arrays out;
  const auto local = [&](int rows, int cols, int mb, int nb, int rsrc, int csrc, int pad,
                         bool inb_desc, int imb, int inb, int *desc) {
    int lr = numroc_(&rows, &mb, &g.myrow, &rsrc, &k.nprow);
    int lc = numroc_(&cols, &nb, &g.mycol, &csrc, &k.npcol);
    if (inb_desc) {
      lr = static_cast<int>(FirstBlockDim{rows, imb, mb, rsrc, k.nprow}.count(g.myrow));
      lc = static_cast<int>(FirstBlockDim{cols, inb, nb, csrc, k.npcol}.count(g.mycol));
    }
    // Replicated: every process row (column) holds all the rows (columns).
    if (rsrc == -1) lr = rows;
    if (csrc == -1) lc = cols;
    // PBLAS checks LLD_ against the local rows only where the process holds columns and the
    // call's window is not empty: otherwise half the cases pass LLD_ = 1.
    const bool empty_window = pblas_lld && (k.m == 0 || k.n == 0);
    const bool lld_one = (lc == 0 && (inb_desc || empty_window) && (rows + cols) % 2 == 0) ||
                         (empty_window && (rows + cols) % 2 == 1);
    const int lld = lld_one ? 1 : std::max(1, lr) + pad;
    if (inb_desc) {
      const int d[11] = {2, g.ctxt, rows, cols, imb, inb, mb, nb, rsrc, csrc, lld};
      std::copy(d, d + 11, desc);
    } else if (lld_one || rsrc == -1 || csrc == -1) {
      // DESCINIT would raise LLD_ to the local rows, and refuses a replicated matrix.
      const int d[9] = {1, g.ctxt, rows, cols, mb, nb, rsrc, csrc, lld};
      std::copy(d, d + 9, desc);
    } else {
      int info = 0;
      descinit_(desc, &rows, &cols, &mb, &nb, &rsrc, &csrc, &g.ctxt, &lld, &info);
    }
    return static_cast<std::size_t>(lld) * static_cast<std::size_t>(std::max(lc, 1)) *
           element_size(k.x);
  };
  out.a.resize(local(k.a_rows, k.a_cols, k.mb_a, k.nb_a, k.rsrc_a, k.csrc_a, k.pad_a, k.inb_desc_a,
                     k.imb_a, k.inb_a, out.desca));
  out.c.resize(local(k.c_rows, k.c_cols, k.mb_c, k.nb_c, k.rsrc_c, k.csrc_c, k.pad_c, k.inb_desc_c,
                     k.imb_c, k.inb_c, out.descc) +
               kGuard);
  // The copies of a replicated matrix hold the same values (PBLAS reads A's copy on its
  // process and updates one copy of C for all): its values drawn from the grid coordinates it
  // is distributed along only.
  const auto values = [&](int rsrc, int csrc, std::uint64_t salt) {
    if (rsrc != -1 && csrc != -1) return std::mt19937_64(gen());
    return std::mt19937_64(shared_seed + salt +
                           0x9e3779b97f4a7c15ULL *
                               static_cast<std::uint64_t>((rsrc == -1 ? 0 : g.myrow + 1) * 4096 +
                                                          (csrc == -1 ? 0 : g.mycol + 1)));
  };
  std::mt19937_64 a_values = values(k.rsrc_a, k.csrc_a, 1);
  std::mt19937_64 c_values = values(k.rsrc_c, k.csrc_c, 2);
  fill(out.a, k.x, a_values, false);
  fill(out.c, k.x, c_values, k.beta_kind == 0);
  return out;
}

std::string spelled(const Case &k, int spelling) {
  std::string name = routine_name(k);
  switch (spelling) {
  case 0:
    return "redist_" + name + "_";
  case 1:
    return name;
  case 2:
    return name + "_";
  case 3:
    return name + "__";
  default:
    for (char &ch : name)
      ch = static_cast<char>(std::toupper(static_cast<unsigned char>(ch)));
    return name;
  }
}

// Run routine `f` (PBLAS's or redist's) on the case. Called as a Fortran caller calls it,
// through one signature with untyped scalars and arrays (the routines take float *, double *,
// ...: the same ABI), which clang's -fsanitize=function would report.
#if defined(__clang__)
__attribute__((no_sanitize("function")))
#endif
void call(const Case &k, void *f, const Arrays &in, std::vector<unsigned char> &c, int m, int n,
          const void *alpha, const void *beta) {
  const char trans[2] = {k.trans, 0};
  const char uplo[2] = {k.uplo, 0};
  switch (k.routine) {
  case Routine::tran:
    reinterpret_cast<Tran>(f)(&m, &n, alpha, in.a.data(), &k.ia, &k.ja, in.desca, beta, c.data(),
                              &k.ic, &k.jc, in.descc);
    break;
  case Routine::geadd:
    reinterpret_cast<Geadd>(f)(trans, &m, &n, alpha, in.a.data(), &k.ia, &k.ja, in.desca, beta,
                               c.data(), &k.ic, &k.jc, in.descc);
    break;
  case Routine::tradd:
    reinterpret_cast<Tradd>(f)(uplo, trans, &m, &n, alpha, in.a.data(), &k.ia, &k.ja, in.desca,
                               beta, c.data(), &k.ic, &k.jc, in.descc);
    break;
  }
}

// Whether a float/double slot of C holds NaN.
bool has_nan(const std::vector<unsigned char> &buf, char x) {
  const std::size_t n = (buf.size() - kGuard) / (x == 's' || x == 'c' ? 4 : 8);
  for (std::size_t i = 0; i < n; ++i) {
    if (x == 's' || x == 'c') {
      float f = 0;
      std::memcpy(&f, buf.data() + 4 * i, 4);
      if (std::isnan(f)) return true;
    } else {
      double d = 0;
      std::memcpy(&d, buf.data() + 8 * i, 8);
      if (std::isnan(d)) return true;
    }
  }
  return false;
}

// What redist prints when it refuses the case under the REDIST_* environment, as
// docs/guide.md says ("": it does not): a C replicated over several process rows or columns
// under a REDIST_SCHEDULE other than auto or all-at-once, or a limit or memory cap; a
// REDIST_SCHEDULE that needs block-cyclic owners (any but auto, all-at-once and multiphase)
// where a first block larger than the block size lies in the window, along a dimension of
// several processes: IMB_ - (IA-1) rows of the first block from the window's first row on, more
// than MB_ of them in the window.
std::string schedule_refused(const Case &k) {
  const char *schedule = std::getenv("REDIST_SCHEDULE");
  if (k.m == 0 || k.n == 0) return "";
  const auto set = [](const char *name) {
    const char *v = std::getenv(name);
    return v != nullptr && *v != '\0' && std::strcmp(v, "0") != 0;
  };
  const bool replicated_c = (k.rsrc_c == -1 && k.nprow > 1) || (k.csrc_c == -1 && k.npcol > 1);
  const bool other_schedule = schedule != nullptr && *schedule != '\0' &&
                              std::strcmp(schedule, "auto") != 0 &&
                              std::strcmp(schedule, "all-at-once") != 0;
  if (replicated_c && (other_schedule || set("REDIST_MAX_MEMORY") || set("REDIST_MAX_CONCURRENT")))
    return "is written all at once";
  if (schedule == nullptr) return "";
  for (const char *any : {"", "auto", "all-at-once", "multiphase"})
    if (std::strcmp(schedule, any) == 0) return "";
  const auto too_large = [](bool eleven, int first, int block, int start, int length, int nprocs) {
    const int rest = first - (start - 1);
    return eleven && nprocs > 1 && rest > block && length > block;
  };
  const bool transposed = k.routine == Routine::tran || (k.trans != 'N' && k.trans != 'n');
  const int am = transposed ? k.n : k.m, an = transposed ? k.m : k.n;
  // A replicated dimension has no first block: one block of all of it on one process.
  const bool refused =
      too_large(k.inb_desc_a && k.rsrc_a != -1, k.imb_a, k.mb_a, k.ia, am, k.nprow) ||
      too_large(k.inb_desc_a && k.csrc_a != -1, k.inb_a, k.nb_a, k.ja, an, k.npcol) ||
      too_large(k.inb_desc_c && k.rsrc_c != -1, k.imb_c, k.mb_c, k.ic, k.m, k.nprow) ||
      too_large(k.inb_desc_c && k.csrc_c != -1, k.inb_c, k.nb_c, k.jc, k.n, k.npcol);
  return refused ? "needs block-cyclic owners" : "";
}

TEST(PblasOps, RandomCasesBitForBitAgainstPblas) {
  ASSERT_NE(scalapack_handle(), nullptr) << dlerror();
  const std::uint64_t seed = shared_seed("PblasOps.RandomCasesBitForBitAgainstPblas", 20201);
  Rng rng(seed);
  const int cases = options().cases;
  int failures = 0;
  for (int i = 0; i < cases; ++i) {
    Case k = draw(rng, world_size());
    if (options().only_case >= 0 && options().only_case != i) continue;
    if (options().verbose) print0(std::to_string(i) + ": " + describe(k) + "\n");
    watchdog_arm("case " + std::to_string(i) + ": " + describe(k));
    const Grid g = make_grid(k);
    if (g.member()) {
      std::mt19937_64 gen(seed * 1000003 + static_cast<std::uint64_t>(i) * 131 +
                          static_cast<std::uint64_t>(world_rank()));
      Arrays in = make_arrays(k, g, gen, true, seed * 7 + static_cast<std::uint64_t>(i));
      const auto alpha = scalar_bytes(k.x, k.alpha);
      const auto beta = scalar_bytes(k.x, k.beta);
      std::vector<unsigned char> want = in.c;
      std::vector<unsigned char> got = in.c;
      const std::vector<unsigned char> a_before = in.a;
      std::string library;
      void *mine = resolved(spelled(k, k.spelling), &library);
      std::string problem;
      if (mine == nullptr) {
        problem = "no symbol " + spelled(k, k.spelling);
      } else if (k.spelling != 0 && library.find("redist_scalapack") == std::string::npos) {
        problem = spelled(k, k.spelling) + " resolves to " + library + ", not the drop-in";
      } else {
        const std::string refusal = schedule_refused(k);
        const bool refused = !refusal.empty();
        void *theirs = pblas(routine_name(k) + "_");
        if (!refused) call(k, theirs, in, want, k.m, k.n, alpha.data(), beta.data());
        errtest::StderrCapture capture;
        call(k, mine, in, got, k.m, k.n, alpha.data(), beta.data());
        const std::string said = capture.finish();
        if (refused) {
          if (redist_scalapack_last_status() == 0 || said.find(refusal) == std::string::npos)
            problem = "the REDIST_* environment should be refused (\"" + refusal +
                      "\"); printed: " + said;
        } else if (redist_scalapack_last_status() != 0) {
          problem = "redist reported an error: " + said;
        }
        if (got != want) {
          std::size_t at = 0;
          while (at < got.size() && got[at] == want[at])
            ++at;
          problem += " C differs from PBLAS at byte " + std::to_string(at) + " of " +
                     std::to_string(got.size());
        }
        if (in.a != a_before) problem += " A changed";
        // beta = 0: C's NaN never reaches the result (alpha finite, A finite).
        if (k.beta_kind == 0 && has_nan(got, k.x) && !has_nan(in.c, k.x)) {
          problem += " NaN appeared";
        }
      }
      if (!problem.empty()) {
        ++failures;
        ADD_FAILURE() << "rank " << world_rank() << " case " << i << ": " << describe(k) << ":"
                      << problem;
      }
      Cblacs_gridexit(g.ctxt);
    }
    watchdog_disarm();
    if (on_any_rank(failures > 5) != 0) break;
  }
}

// The error cases' call: C 7 x 5 := op(A 5 x 7), blocks of 2 on an nprow x npcol grid.
Case error_case(int nprow, int npcol) {
  Case k;
  k.x = 'd';
  k.m = 7;
  k.n = 5;
  k.nprow = nprow;
  k.npcol = npcol;
  k.a_rows = 5;
  k.a_cols = 7;
  k.c_rows = 7;
  k.c_cols = 5;
  k.mb_a = k.nb_a = k.mb_c = k.nb_c = 2;
  return k;
}

// Bad arguments: every rank of the grid reports failure, C untouched.
TEST(PblasOps, ErrorsOnEveryRankLeaveCUntouched) {
  const Case k = error_case(1, world_size());
  const Grid g = make_grid(k);
  std::mt19937_64 gen(77);
  Arrays in = make_arrays(k, g, gen);
  const double one = 1, two = 2;
  const int bad_m = -1;
  const int bad_ia = 4; // A's window 5 x 7 from row 4 does not fit
  int bad_desc[9];
  std::memcpy(bad_desc, in.descc, sizeof bad_desc);
  bad_desc[4] = 0; // MB_
  struct Bad {
    const char *what;
    std::function<void(std::vector<unsigned char> &)> run;
  };
  const std::vector<Bad> bad = {
      {"TRANS = 'X'",
       [&](std::vector<unsigned char> &c) {
         redist_pdgeadd_("X", &k.m, &k.n, &one, reinterpret_cast<const double *>(in.a.data()),
                         &k.ia, &k.ja, in.desca, &two, reinterpret_cast<double *>(c.data()), &k.ic,
                         &k.jc, in.descc);
       }},
      {"UPLO = 'Q'",
       [&](std::vector<unsigned char> &c) {
         redist_pdtradd_("Q", "T", &k.m, &k.n, &one, reinterpret_cast<const double *>(in.a.data()),
                         &k.ia, &k.ja, in.desca, &two, reinterpret_cast<double *>(c.data()), &k.ic,
                         &k.jc, in.descc);
       }},
      {"M = -1",
       [&](std::vector<unsigned char> &c) {
         redist_pdtran_(&bad_m, &k.n, &one, reinterpret_cast<const double *>(in.a.data()), &k.ia,
                        &k.ja, in.desca, &two, reinterpret_cast<double *>(c.data()), &k.ic, &k.jc,
                        in.descc);
       }},
      {"IA out of A",
       [&](std::vector<unsigned char> &c) {
         redist_pdtran_(&k.m, &k.n, &one, reinterpret_cast<const double *>(in.a.data()), &bad_ia,
                        &k.ja, in.desca, &two, reinterpret_cast<double *>(c.data()), &k.ic, &k.jc,
                        in.descc);
       }},
      {"DESCC(MB_) = 0",
       [&](std::vector<unsigned char> &c) {
         redist_pdtran_(&k.m, &k.n, &one, reinterpret_cast<const double *>(in.a.data()), &k.ia,
                        &k.ja, in.desca, &two, reinterpret_cast<double *>(c.data()), &k.ic, &k.jc,
                        bad_desc);
       }},
      {"ALPHA = NULL",
       [&](std::vector<unsigned char> &c) {
         redist_pdtran_(&k.m, &k.n, nullptr, reinterpret_cast<const double *>(in.a.data()), &k.ia,
                        &k.ja, in.desca, &two, reinterpret_cast<double *>(c.data()), &k.ic, &k.jc,
                        in.descc);
       }},
  };
  for (const Bad &b : bad) {
    std::vector<unsigned char> c = in.c;
    b.run(c);
    EXPECT_NE(redist_scalapack_last_status(), 0) << b.what << " on rank " << world_rank();
    EXPECT_TRUE(c == in.c) << b.what << ": C changed on rank " << world_rank();
  }
  Cblacs_gridexit(g.ctxt);
}

// Bad 11-integer descriptors (DTYPE_ = 2): every rank of the grid reports failure, C
// untouched, and the message names the argument: "PDTRAN: argument 12 (DESCC(IMB_)) = 0: ..."
// where the bad value was passed, "... argument 12 is invalid on another process ..." on the
// other ranks. The grid is P x 1 and C's first block of 5 rows is larger than its blocks of 2,
// so that where C's local rows counted with IMB_ exceed those counted with MB_ alone (P >= 2),
// an LLD_ of the latter is too small.
TEST(PblasOps, ElevenIntegerDescriptorErrorsOnEveryRank) {
  Case k = error_case(world_size(), 1);
  k.inb_desc_a = k.inb_desc_c = true;
  k.imb_a = 3;
  k.inb_a = 4;
  k.imb_c = 5;
  k.inb_c = 3;
  const Grid g = make_grid(k);
  std::mt19937_64 gen(78);
  const Arrays in = make_arrays(k, g, gen);
  const double one = 1, two = 2;
  const auto *a = reinterpret_cast<const double *>(in.a.data());
  // C's local rows counted as a 9-integer descriptor would (blocks of MB_ = 2 from row 0).
  const int nine_rows = numroc_(&k.c_rows, &k.mb_c, &g.myrow, &k.rsrc_c, &k.nprow);
  struct Bad {
    const char *what;
    const char *routine;
    int position; // of the descriptor
    const char *field;
    bool here; // the bad value is passed on this rank
    std::function<void(const int *desca, const int *descc, double *c)> run;
    int desca[11], descc[11];
  };
  const auto tran = [&](const int *da, const int *dc, double *c) {
    redist_pdtran_(&k.m, &k.n, &one, a, &k.ia, &k.ja, da, &two, c, &k.ic, &k.jc, dc);
  };
  const auto geadd = [&](const int *da, const int *dc, double *c) {
    redist_pdgeadd_("T", &k.m, &k.n, &one, a, &k.ia, &k.ja, da, &two, c, &k.ic, &k.jc, dc);
  };
  const auto tradd = [&](const int *da, const int *dc, double *c) {
    redist_pdtradd_("L", "T", &k.m, &k.n, &one, a, &k.ia, &k.ja, da, &two, c, &k.ic, &k.jc, dc);
  };
  std::vector<Bad> bad = {
      {"DESCC(IMB_) = 0", "PDTRAN", 12, "DESCC(IMB_)", true, tran, {}, {}},
      {"DESCA(IMB_) = 0", "PDGEADD", 8, "DESCA(IMB_)", true, geadd, {}, {}},
      {"DESCA(INB_) = -1", "PDTRAN", 7, "DESCA(INB_)", true, tran, {}, {}},
      {"DESCC(INB_) = 0", "PDTRADD", 14, "DESCC(INB_)", true, tradd, {}, {}},
      {"DESCA(DTYPE_) = 3", "PDTRAN", 7, "DESCA(DTYPE_)", true, tran, {}, {}},
      {"DESCC(DTYPE_) = 3", "PDGEADD", 13, "DESCC(DTYPE_)", true, geadd, {}, {}},
      {"DESCC(LLD_) = local rows counted with IMB_, minus 1, where C has rows",
       "PDTRADD",
       14,
       "DESCC(LLD_)",
       false,
       tradd,
       {},
       {}},
      {"DESCC(LLD_) = local rows counted with MB_ only",
       "PDGEADD",
       13,
       "DESCC(LLD_)",
       false,
       geadd,
       {},
       {}},
  };
  for (Bad &b : bad) {
    std::copy(in.desca, in.desca + 11, b.desca);
    std::copy(in.descc, in.descc + 11, b.descc);
  }
  bad[0].descc[4] = 0;
  bad[1].desca[4] = 0;
  bad[2].desca[5] = -1;
  bad[3].descc[5] = 0;
  bad[4].desca[0] = 3;
  bad[5].descc[0] = 3;
  const int rows_here = in.descc[10]; // LLD_ = max(1, local rows counted with IMB_)
  if (rows_here > 1) {
    bad[6].descc[10] = rows_here - 1;
    bad[6].here = true;
  }
  if (std::max(1, nine_rows) < rows_here) {
    bad[7].descc[10] = std::max(1, nine_rows);
    bad[7].here = true;
  }
  for (const Bad &b : bad) {
    // Every rank takes part in every case, even where no rank passes a bad value (the last
    // one on one rank: C's rows counted with MB_ and with IMB_ agree).
    if (on_any_rank(b.here) == 0) continue;
    std::vector<unsigned char> c = in.c;
    errtest::StderrCapture capture;
    b.run(b.desca, b.descc, reinterpret_cast<double *>(c.data()));
    const int status = redist_scalapack_last_status();
    const std::string said = capture.finish();
    EXPECT_NE(status, 0) << b.what << " on rank " << world_rank();
    EXPECT_TRUE(c == in.c) << b.what << ": C changed on rank " << world_rank();
    const std::string position = "argument " + std::to_string(b.position);
    const std::string expected = std::string("{ redist } ") + b.routine + ": " + position +
                                 (b.here ? std::string(" (") + b.field + ")" : std::string());
    EXPECT_NE(said.find(expected), std::string::npos)
        << b.what << " on rank " << world_rank() << ": expected \"" << expected
        << "\" in what was printed: " << said;
    EXPECT_EQ(errtest::count_lines(said), 1U) << b.what << ": " << said;
  }
  Cblacs_gridexit(g.ctxt);
}

// The C API (redist_plan_create_op + redist_plan_execute_op) on the random cases' layouts
// against PBLAS, bit for bit; each plan executed four times, alternating two alpha, beta.
TEST(PblasOps, CApiAgainstPblas) {
  const std::uint64_t seed = shared_seed("PblasOps.CApiAgainstPblas", 20202);
  Rng rng(seed);
  const int cases = std::max(1, options().cases / 4);
  int failures = 0;
  for (int i = 0; i < cases; ++i) {
    Case k = draw(rng, world_size());
    k.inb_desc_a = k.inb_desc_c = false; // the C API's layouts have no first blocks
    for (int *src : {&k.rsrc_a, &k.csrc_a, &k.rsrc_c, &k.csrc_c}) // nor replication
      *src = std::max(*src, 0);
    Case k2 = k; // the second execution's coefficients
    k2.alpha_kind = static_cast<int>(rng.uniform(0, 4));
    k2.beta_kind = static_cast<int>(rng.uniform(1, 4));
    draw_scalar(rng, k.x, k2.alpha_kind, k2.alpha);
    draw_scalar(rng, k.x, k2.beta_kind, k2.beta);
    watchdog_arm("C API case " + std::to_string(i) + ": " + describe(k));
    const Grid g = make_grid(k);
    MPI_Comm comm = MPI_COMM_NULL; // the grid's processes
    MPI_Comm_split(MPI_COMM_WORLD, g.member() ? 0 : MPI_UNDEFINED, world_rank(), &comm);
    if (g.member()) {
      std::mt19937_64 gen(seed + static_cast<std::uint64_t>(i) * 7919 +
                          static_cast<std::uint64_t>(world_rank()));
      Arrays in = make_arrays(k, g, gen, false);
      const bool transposed = k.routine == Routine::tran || (k.trans != 'N' && k.trans != 'n');
      const char trans = static_cast<char>(std::toupper(static_cast<unsigned char>(k.trans)));
      // Grid position (pr, pc) -> rank in comm (Cblacs_pnum assumes row-major order).
      int comm_size = 0;
      MPI_Comm_size(comm, &comm_size);
      const int mine[2] = {g.myrow, g.mycol};
      std::vector<int> positions(2 * static_cast<std::size_t>(comm_size));
      MPI_Allgather(mine, 2, MPI_INT, positions.data(), 2, MPI_INT, comm);
      std::vector<int> in_comm(static_cast<std::size_t>(k.nprow * k.npcol), -1);
      for (int r = 0; r < comm_size; ++r)
        in_comm[static_cast<std::size_t>(positions[2 * static_cast<std::size_t>(r)] +
                                         positions[2 * static_cast<std::size_t>(r) + 1] *
                                             k.nprow)] = r;
      const auto layout = [&](const int *d, int i0, int j0) {
        return redist_layout{d[2], d[3], d[4],           d[5],   k.nprow, k.npcol,
                             d[6], d[7], in_comm.data(), i0 - 1, j0 - 1,  d[8]};
      };
      const redist_layout la = layout(in.desca, k.ia, k.ja);
      const redist_layout lc = layout(in.descc, k.ic, k.jc);
      const redist_type type = k.x == 's'   ? REDIST_FLOAT
                               : k.x == 'd' ? REDIST_DOUBLE
                               : k.x == 'c' ? REDIST_COMPLEX_FLOAT
                                            : REDIST_COMPLEX_DOUBLE;
      const redist_op op = !transposed ? REDIST_OP_N : trans == 'C' ? REDIST_OP_C : REDIST_OP_T;
      const redist_region region = k.routine != Routine::tradd        ? REDIST_REGION_FULL
                                   : (k.uplo == 'U' || k.uplo == 'u') ? REDIST_REGION_UPPER
                                                                      : REDIST_REGION_LOWER;
      redist_plan plan = nullptr;
      std::string problem;
      if (redist_plan_create_op(comm, op, k.m, k.n, type, &la, &lc, region, nullptr, &plan) !=
          REDIST_SUCCESS) {
        problem = std::string("redist_plan_create_op failed: ") + redist_last_error();
      } else {
        std::vector<unsigned char> want = in.c;
        std::vector<unsigned char> got = in.c;
        void *theirs = pblas(routine_name(k) + "_");
        // Four executions, alternating the coefficients, of one plan.
        for (const Case *coefficients : {&k, &k2, &k, &k2}) {
          const auto alpha = scalar_bytes(k.x, coefficients->alpha);
          const auto beta = scalar_bytes(k.x, coefficients->beta);
          call(k, theirs, in, want, k.m, k.n, alpha.data(), beta.data());
          if (redist_plan_execute_op(plan, alpha.data(), in.a.data(), beta.data(), got.data()) !=
              REDIST_SUCCESS)
            problem += " execute_op failed";
          if (got != want) problem += " C differs from PBLAS";
        }
        redist_plan_destroy(&plan);
      }
      if (!problem.empty()) {
        ++failures;
        ADD_FAILURE() << "rank " << world_rank() << " C API case " << i << ": " << describe(k)
                      << ":" << problem;
      }
      MPI_Comm_free(&comm);
      Cblacs_gridexit(g.ctxt);
    }
    watchdog_disarm();
    if (on_any_rank(failures > 5) != 0) break;
  }
}

// Integer plans only copy or transpose; a copy plan is not executed with an operation. Both
// fail on every rank with B untouched.
TEST(PblasOps, CApiIntegerOperationsAndCopyPlansAreErrors) {
  const int size = world_size();
  std::vector<int> ranks(static_cast<std::size_t>(size));
  std::iota(ranks.begin(), ranks.end(), 0);
  const int64_t m = 9, n = 7;
  // A is n x m (transposed), B m x n, both 1 x size, blocks of 2.
  const auto local = [&](int64_t cols) {
    return static_cast<int64_t>((cols / 2 + size - 1) / size * 2 + 2);
  };
  const redist_layout la{n, m, 2, 2, 1, size, 0, 0, ranks.data(), 0, 0, n};
  const redist_layout lb{m, n, 2, 2, 1, size, 0, 0, ranks.data(), 0, 0, m};
  std::vector<std::int32_t> a(static_cast<std::size_t>(n * local(m)), 5);
  std::vector<std::int32_t> b(static_cast<std::size_t>(m * local(n)), -3);
  const std::vector<std::int32_t> b_before = b;
  redist_plan plan = nullptr;
  ASSERT_EQ(redist_plan_create_op(MPI_COMM_WORLD, REDIST_OP_T, m, n, REDIST_INT32, &la, &lb,
                                  REDIST_REGION_FULL, nullptr, &plan),
            REDIST_SUCCESS);
  const std::int32_t one = 1, zero = 0, two = 2;
  EXPECT_EQ(redist_plan_execute_op(plan, &two, a.data(), &zero, b.data()), REDIST_ERR_ARGUMENT);
  EXPECT_NE(std::string(redist_last_error()).find("alpha"), std::string::npos)
      << redist_last_error();
  EXPECT_EQ(redist_plan_execute_op(plan, &one, a.data(), &one, b.data()), REDIST_ERR_ARGUMENT);
  EXPECT_EQ(redist_plan_execute_op(plan, nullptr, a.data(), &zero, b.data()), REDIST_ERR_ARGUMENT);
  EXPECT_TRUE(b == b_before);
  // alpha = 1, beta = 0: the transpose, every element of B's window a 5.
  EXPECT_EQ(redist_plan_execute_op(plan, &one, a.data(), &zero, b.data()), REDIST_SUCCESS);
  EXPECT_EQ(std::count(b.begin(), b.end(), 5) + std::count(b.begin(), b.end(), -3),
            static_cast<std::ptrdiff_t>(b.size()));
  redist_plan_destroy(&plan);
  redist_plan copy = nullptr;
  ASSERT_EQ(redist_plan_create(MPI_COMM_WORLD, m, n, REDIST_INT32, &lb, &lb, REDIST_REGION_FULL, 0,
                               &copy),
            REDIST_SUCCESS);
  std::vector<std::int32_t> b2 = b_before;
  EXPECT_EQ(redist_plan_execute_op(copy, &one, b2.data(), &zero, b2.data()), REDIST_ERR_ARGUMENT);
  EXPECT_NE(std::string(redist_last_error()).find("redist_plan_create_op"), std::string::npos);
  redist_plan_destroy(&copy);
}

} // namespace
} // namespace mpitest
