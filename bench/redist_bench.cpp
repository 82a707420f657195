// redist_bench: ScaLAPACK's PxGEMR2D / PxTRMR2D against redist's drop-in entries.
//
// Every case runs ScaLAPACK's routine and redist's prefixed entry (redist_pdgemr2d_, ...) in
// the same process on the same input, checks that both outputs are bitwise equal (and equal
// to the value the copy must produce), and reports the median times, their ratio, and the
// redist time relative to one memcpy of the bytes the busiest rank moves.
//
//   mpirun -n 2 redist_bench [--size N] [--reps R] [--case NAME] [--csv FILE] [--cold]
//   mpirun -n 2 redist_bench --small [--reps R]   (small cached calls)
//   mpirun -n 2 redist_bench --list
//
// Timing: MPI_Barrier, MPI_Wtime around one call, maximum over ranks. One warm-up call of
// each implementation (reported for redist as "redist-1st": it includes building its plan),
// then --reps repetitions alternating ScaLAPACK and redist; medians are reported.
// "bw" = redist median / median of one memcpy of the bytes the busiest rank moves (its local
// copy + bytes sent + bytes received), done by every rank at the same time.
// "/best" = redist median / its fastest repetition (the same plan executed repeatedly).
#include <mpi.h>

#include <algorithm>
#include <atomic>
#include <cinttypes>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <string>
#include <vector>

#include <sched.h>

#include "redist.h"
#include "redist_scalapack.h"
#include "scalapack_decls.h"

namespace {

using i64 = std::int64_t;

// ---------------------------------------------------------------------------------------
// Element types
// ---------------------------------------------------------------------------------------
enum class Ty { S, D, C, Z, I };

struct CFloat {
  float re, im;
};
struct CDouble {
  double re, im;
};

std::size_t elem_size(Ty t) {
  switch (t) {
  case Ty::S:
    return sizeof(float);
  case Ty::D:
    return sizeof(double);
  case Ty::C:
    return sizeof(CFloat);
  case Ty::Z:
    return sizeof(CDouble);
  case Ty::I:
    return sizeof(int);
  }
  return 0;
}

char type_char(Ty t) {
  switch (t) {
  case Ty::S:
    return 's';
  case Ty::D:
    return 'd';
  case Ty::C:
    return 'c';
  case Ty::Z:
    return 'z';
  case Ty::I:
    return 'i';
  }
  return '?';
}

std::uint64_t mix(std::uint64_t x) { // splitmix64 finaliser
  x += 0x9E3779B97F4A7C15ULL;
  x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ULL;
  x = (x ^ (x >> 27)) * 0x94D049BB133111EBULL;
  return x ^ (x >> 31);
}

// A distinctive, finite value for global element (gi, gj) of a matrix tagged by seed.
std::uint64_t key(i64 gi, i64 gj, std::uint64_t seed) {
  return mix((static_cast<std::uint64_t>(gi) << 32) ^ static_cast<std::uint64_t>(gj) ^
             (seed << 56));
}
double unit(std::uint64_t h) {
  return static_cast<double>(h >> 11) * 0x1.0p-53 - 0.5;
}

template <class T> T gen(i64 gi, i64 gj, std::uint64_t seed);
template <> float gen<float>(i64 gi, i64 gj, std::uint64_t seed) {
  return static_cast<float>(unit(key(gi, gj, seed)));
}
template <> double gen<double>(i64 gi, i64 gj, std::uint64_t seed) {
  return unit(key(gi, gj, seed));
}
template <> CFloat gen<CFloat>(i64 gi, i64 gj, std::uint64_t seed) {
  std::uint64_t h = key(gi, gj, seed);
  return {static_cast<float>(unit(h)), static_cast<float>(unit(mix(h)))};
}
template <> CDouble gen<CDouble>(i64 gi, i64 gj, std::uint64_t seed) {
  std::uint64_t h = key(gi, gj, seed);
  return {unit(h), unit(mix(h))};
}
template <> int gen<int>(i64 gi, i64 gj, std::uint64_t seed) {
  return static_cast<int>(static_cast<std::uint32_t>(key(gi, gj, seed) >> 32));
}

// ---------------------------------------------------------------------------------------
// Layouts, grids, cases
// ---------------------------------------------------------------------------------------
struct MatSpec {
  int nprow = 1, npcol = 1;
  std::vector<int> ranks; // world rank of grid position (pr, pc) at ranks[pr * npcol + pc]
  int m = 0, n = 0;       // M_, N_
  int mb = 1, nb = 1;
  int rsrc = 0, csrc = 0;

  int rank_of(int pr, int pc) const { return ranks[static_cast<std::size_t>(pr * npcol + pc)]; }
};

struct CaseSpec {
  std::string name;
  std::string what; // short layout description
  Ty ty = Ty::D;
  bool trmr = false;
  char uplo = 'U', diag = 'N';
  int m = 0, n = 0; // copied window
  int ia = 1, ja = 1, ib = 1, jb = 1;
  MatSpec a, b;
  int min_procs = 1;
};

// Grid of nprow x npcol over world ranks first, first+1, ... in row-major ('R') or
// column-major ('C') order.
MatSpec grid(int nprow, int npcol, char order = 'R', int first = 0) {
  MatSpec s;
  s.nprow = nprow;
  s.npcol = npcol;
  s.ranks.resize(static_cast<std::size_t>(nprow * npcol));
  for (int pr = 0; pr < nprow; ++pr)
    for (int pc = 0; pc < npcol; ++pc)
      s.ranks[static_cast<std::size_t>(pr * npcol + pc)] =
          first + (order == 'R' ? pr * npcol + pc : pc * nprow + pr);
  return s;
}

MatSpec with(MatSpec s, int m, int n, int mb, int nb, int rsrc = 0, int csrc = 0) {
  s.m = m;
  s.n = n;
  s.mb = mb;
  s.nb = nb;
  s.rsrc = rsrc;
  s.csrc = csrc;
  return s;
}

std::string describe(const MatSpec &s) {
  char buf[96];
  int lo = *std::min_element(s.ranks.begin(), s.ranks.end());
  std::snprintf(buf, sizeof buf, "%dx%d/%d", s.nprow, s.npcol, s.mb);
  std::string r = buf;
  if (s.nb != s.mb) r += "x" + std::to_string(s.nb);
  if (s.rsrc != 0 || s.csrc != 0) r += "@" + std::to_string(s.rsrc) + "," + std::to_string(s.csrc);
  if (lo != 0) r += "{r" + std::to_string(lo) + "+}";
  return r;
}

int ceil_div(int a, int b) {
  return (a + b - 1) / b;
}

std::vector<CaseSpec> make_cases(int np, int size) {
  std::vector<CaseSpec> cs;
  const int S = size;
  // Near-square grid: pr = largest divisor of np not above sqrt(np).
  int gpr = 1;
  for (int d = 1; d * d <= np; ++d)
    if (np % d == 0) gpr = d;
  const int gpc = np / gpr;
  auto add = [&](CaseSpec c) {
    if (c.what.empty()) c.what = describe(c.a) + " -> " + describe(c.b);
    cs.push_back(std::move(c));
  };

  { // block size change
    CaseSpec c;
    c.name = "blocksize";
    c.m = c.n = S;
    c.a = with(grid(1, np), S, S, 64, 64);
    c.b = with(grid(1, np), S, S, 100, 100);
    add(c);
  }
  { // 1x1 blocks -> 64x64
    CaseSpec c;
    c.name = "tinyblocks";
    c.m = c.n = S;
    c.a = with(grid(gpr, gpc), S, S, 1, 1);
    c.b = with(grid(gpr, gpc), S, S, 64, 64);
    add(c);
  }
  { // grid shape change: 2x2 -> 1x4 at np=4, 2x1 -> 1x2 at np=2
    CaseSpec c;
    c.name = "gridshape";
    c.m = c.n = S;
    if (gpr == 1)
      c.a = with(grid(np, 1), S, S, 64, 64);
    else
      c.a = with(grid(gpr, gpc), S, S, 64, 64);
    c.b = with(grid(1, np), S, S, 64, 64);
    add(c);
  }
  { // P -> Q processes: all np ranks -> ranks 1..np-1 (rank 0 passes CTXT_ = -1 for B)
    CaseSpec c;
    c.name = "p-to-q";
    c.m = c.n = S;
    c.a = with(gpr == 1 ? grid(1, np) : grid(gpr, gpc), S, S, 64, 64);
    c.b = with(grid(1, std::max(np - 1, 1), 'R', 1), S, S, 64, 64);
    add(c);
    CaseSpec d = c; // and back: Q -> P, rank 0 idle for A
    d.name = "q-to-p";
    std::swap(d.a, d.b);
    d.what.clear();
    add(d);
  }
  { // row-block <-> column-block
    CaseSpec c;
    c.name = "rowcol";
    c.m = c.n = S;
    c.a = with(grid(np, 1), S, S, ceil_div(S, np), 64);
    c.b = with(grid(1, np), S, S, 64, ceil_div(S, np));
    add(c);
    CaseSpec d = c;
    d.name = "colrow";
    std::swap(d.a, d.b);
    d.what.clear();
    add(d);
  }
  { // window at an odd offset
    CaseSpec c;
    c.name = "window";
    c.m = c.n = S - 10;
    c.ia = c.ja = 3;
    c.ib = c.jb = 7;
    c.a = with(grid(gpr, gpc), S, S, 64, 64);
    c.b = with(grid(gpr, gpc), S, S, 64, 64);
    c.what = describe(c.a) + "(3,3) -> " + describe(c.b) + "(7,7)";
    add(c);
  }
  { // RSRC / CSRC != 0 (A's grid in column-major order)
    CaseSpec c;
    c.name = "srcoffset";
    c.m = c.n = S;
    c.a = with(grid(gpr, gpc, 'C'), S, S, 64, 64, gpr - 1, gpc - 1);
    c.b = with(grid(gpr, gpc), S, S, 64, 64, 0, 0);
    add(c);
  }
  { // TRMR2D upper, non-unit
    CaseSpec c;
    c.name = "trmr2d-UN";
    c.trmr = true;
    c.uplo = 'U';
    c.diag = 'N';
    c.m = c.n = S;
    c.a = with(grid(gpr, gpc), S, S, 64, 64);
    c.b = with(grid(gpr, gpc), S, S, 100, 100);
    add(c);
  }
  // All five types: block change 64 -> 100 at half the size.
  for (Ty t : {Ty::S, Ty::D, Ty::C, Ty::Z, Ty::I}) {
    const int h = std::max(S / 2, 1);
    CaseSpec c;
    c.name = std::string("types-") + type_char(t);
    c.ty = t;
    c.m = c.n = h;
    c.a = with(grid(1, np), h, h, 64, 64);
    c.b = with(grid(1, np), h, h, 100, 100);
    add(c);
  }
  for (auto &c : cs) {
    int need = 0;
    for (int r : c.a.ranks)
      need = std::max(need, r + 1);
    for (int r : c.b.ranks)
      need = std::max(need, r + 1);
    c.min_procs = std::max(c.min_procs, need);
  }
  return cs;
}

// ---------------------------------------------------------------------------------------
// Traffic: bytes the busiest rank copies locally, sends and receives.
// ---------------------------------------------------------------------------------------
struct Seg {
  i64 lo, hi; // window indices [lo, hi)
  int pa, pb; // grid coordinate (row or column) owning them in A and in B
};

// Split window dimension [0, len) into pieces owned by one grid row (column) of A and one of B.
std::vector<Seg> segments(i64 len, i64 offa, int mba, int srca, int pa, i64 offb, int mbb, int srcb,
                          int pb) {
  std::vector<Seg> out;
  i64 i = 0;
  while (i < len) {
    const i64 ga = offa + i, gb = offb + i;
    const i64 ea = (ga / mba + 1) * mba - offa;
    const i64 eb = (gb / mbb + 1) * mbb - offb;
    const i64 e = std::min({ea, eb, len});
    out.push_back(
        {i, e, static_cast<int>((ga / mba + srca) % pa), static_cast<int>((gb / mbb + srcb) % pb)});
    i = e;
  }
  return out;
}

bool in_trapezoid(const CaseSpec &c, i64 i, i64 j) {
  const i64 M = c.m, N = c.n;
  const i64 nonunit = c.diag == 'N' || c.diag == 'n' ? 1 : 0;
  if (c.uplo == 'U' || c.uplo == 'u') return i < std::min(std::max<i64>(M - N, 0) + j + nonunit, M);
  return i >= std::max<i64>(0, j - std::max<i64>(N - M, 0) + (1 - nonunit));
}

// The bytes the busiest rank sends, receives and keeps; *most_sent: the most one rank sends;
// *pairs (np x np, [source * np + destination]): the bytes of each message between two ranks.
i64 busiest_bytes(const CaseSpec &c, int np, i64 *most_sent = nullptr,
                  std::vector<i64> *pairs = nullptr) {
  const auto rows =
      segments(c.m, c.ia - 1, c.a.mb, c.a.rsrc, c.a.nprow, c.ib - 1, c.b.mb, c.b.rsrc, c.b.nprow);
  const auto cols =
      segments(c.n, c.ja - 1, c.a.nb, c.a.csrc, c.a.npcol, c.jb - 1, c.b.nb, c.b.csrc, c.b.npcol);
  std::vector<i64> local(static_cast<std::size_t>(np)), sent(local), recv(local);
  std::vector<i64> pair(static_cast<std::size_t>(np) * static_cast<std::size_t>(np));
  auto account = [&](int pra, int pca, int prb, int pcb, i64 count) {
    if (count <= 0) return;
    const int s = c.a.rank_of(pra, pca), d = c.b.rank_of(prb, pcb);
    if (s == d)
      local[static_cast<std::size_t>(s)] += count;
    else {
      sent[static_cast<std::size_t>(s)] += count;
      recv[static_cast<std::size_t>(d)] += count;
      pair[static_cast<std::size_t>(s) * static_cast<std::size_t>(np) +
           static_cast<std::size_t>(d)] += count;
    }
  };
  if (!c.trmr) {
    // Aggregate each dimension by (A coordinate, B coordinate), then combine.
    auto agg = [](const std::vector<Seg> &segs, int pa, int pb) {
      std::vector<i64> v(static_cast<std::size_t>(pa * pb));
      for (const Seg &s : segs)
        v[static_cast<std::size_t>(s.pa * pb + s.pb)] += s.hi - s.lo;
      return v;
    };
    const auto r = agg(rows, c.a.nprow, c.b.nprow);
    const auto q = agg(cols, c.a.npcol, c.b.npcol);
    for (int ra = 0; ra < c.a.nprow; ++ra)
      for (int rb = 0; rb < c.b.nprow; ++rb)
        for (int ca = 0; ca < c.a.npcol; ++ca)
          for (int cb = 0; cb < c.b.npcol; ++cb)
            account(ra, ca, rb, cb,
                    r[static_cast<std::size_t>(ra * c.b.nprow + rb)] *
                        q[static_cast<std::size_t>(ca * c.b.npcol + cb)]);
  } else {
    // Per column: the copied row range, intersected with the row segments.
    const i64 M = c.m, N = c.n;
    const i64 nonunit = c.diag == 'N' || c.diag == 'n' ? 1 : 0;
    const bool upper = c.uplo == 'U' || c.uplo == 'u';
    for (const Seg &cs : cols)
      for (i64 j = cs.lo; j < cs.hi; ++j) {
        i64 lo, hi;
        if (upper) {
          lo = 0;
          hi = std::min(std::max<i64>(M - N, 0) + j + nonunit, M);
        } else {
          lo = std::max<i64>(0, j - std::max<i64>(N - M, 0) + (1 - nonunit));
          hi = M;
        }
        if (hi <= lo) continue;
        auto it = std::upper_bound(rows.begin(), rows.end(), lo,
                                   [](i64 v, const Seg &s) { return v < s.hi; });
        for (; it != rows.end() && it->lo < hi; ++it)
          account(it->pa, cs.pa, it->pb, cs.pb, std::min(hi, it->hi) - std::max(lo, it->lo));
      }
  }
  if (static_cast<i64>(c.m) * c.n <= 512 * 512) {
    // Small windows: cross-check the block-wise count by enumerating every element.
    std::vector<i64> l2(local.size()), s2(local.size()), r2(local.size());
    auto owner = [](const MatSpec &s, i64 gi, i64 gj) {
      return s.rank_of(static_cast<int>((gi / s.mb + s.rsrc) % s.nprow),
                       static_cast<int>((gj / s.nb + s.csrc) % s.npcol));
    };
    for (i64 j = 0; j < c.n; ++j)
      for (i64 i = 0; i < c.m; ++i) {
        if (c.trmr && !in_trapezoid(c, i, j)) continue;
        const auto s = static_cast<std::size_t>(owner(c.a, c.ia - 1 + i, c.ja - 1 + j));
        const auto d = static_cast<std::size_t>(owner(c.b, c.ib - 1 + i, c.jb - 1 + j));
        if (s == d)
          ++l2[s];
        else {
          ++s2[s];
          ++r2[d];
        }
      }
    if (l2 != local || s2 != sent || r2 != recv) {
      std::fprintf(stderr, "redist_bench: internal error: traffic count of case %s\n",
                   c.name.c_str());
      MPI_Abort(MPI_COMM_WORLD, 3);
    }
  }
  i64 best = 0;
  for (int r = 0; r < np; ++r) {
    const auto k = static_cast<std::size_t>(r);
    best = std::max(best, local[k] + sent[k] + recv[k]);
  }
  if (most_sent)
    *most_sent = *std::max_element(sent.begin(), sent.end()) * static_cast<i64>(elem_size(c.ty));
  if (pairs) {
    for (i64 &b : pair)
      b *= static_cast<i64>(elem_size(c.ty));
    *pairs = std::move(pair);
  }
  return best * static_cast<i64>(elem_size(c.ty));
}

// ---------------------------------------------------------------------------------------
// Local matrices
// ---------------------------------------------------------------------------------------
struct Grid {
  int ctxt = -1;
  bool member = false;
  int myrow = -1, mycol = -1;
};

Grid make_grid(int sysctxt, const MatSpec &s, int me) {
  // BLACS_GRIDMAP is collective over the system context: every process calls.
  std::vector<int> usermap(static_cast<std::size_t>(s.nprow * s.npcol));
  for (int pr = 0; pr < s.nprow; ++pr)
    for (int pc = 0; pc < s.npcol; ++pc)
      usermap[static_cast<std::size_t>(pr + pc * s.nprow)] = s.rank_of(pr, pc);
  Grid g;
  int ctxt = sysctxt;
  Cblacs_gridmap(&ctxt, usermap.data(), s.nprow, s.nprow, s.npcol);
  for (int pr = 0; pr < s.nprow; ++pr)
    for (int pc = 0; pc < s.npcol; ++pc)
      if (s.rank_of(pr, pc) == me) {
        g.member = true;
        g.myrow = pr;
        g.mycol = pc;
      }
  if (g.member) {
    g.ctxt = ctxt;
    int nr, nc, r, q;
    Cblacs_gridinfo(ctxt, &nr, &nc, &r, &q);
    if (nr != s.nprow || nc != s.npcol || r != g.myrow || q != g.mycol) {
      std::fprintf(stderr, "redist_bench: BLACS grid does not match the requested map\n");
      MPI_Abort(MPI_COMM_WORLD, 3);
    }
  }
  return g;
}

struct Local {
  std::vector<i64> grow, gcol; // global row (column) of each local row (column)
  int lld = 1;
  std::vector<unsigned char> data;
};

std::vector<i64> local_to_global(int n, int nb, int me, int src, int np) {
  int loc = 0;
  if (me >= 0) {
    loc = numroc_(&n, &nb, &me, &src, &np);
  }
  std::vector<i64> g(static_cast<std::size_t>(std::max(loc, 0)));
  const i64 dist = (me - src + np) % np;
  for (i64 l = 0; l < static_cast<i64>(g.size()); ++l)
    g[static_cast<std::size_t>(l)] = ((l / nb) * np + dist) * nb + l % nb;
  return g;
}

Local make_local(const MatSpec &s, const Grid &g, Ty ty) {
  Local L;
  if (!g.member) {
    L.data.resize(16);
    return L;
  }
  L.grow = local_to_global(s.m, s.mb, g.myrow, s.rsrc, s.nprow);
  L.gcol = local_to_global(s.n, s.nb, g.mycol, s.csrc, s.npcol);
  L.lld = std::max<int>(1, static_cast<int>(L.grow.size()));
  L.data.resize(
      std::max<std::size_t>(16, static_cast<std::size_t>(L.lld) * L.gcol.size() * elem_size(ty)));
  return L;
}

template <class T> void fill_t(Local &L, std::uint64_t seed) {
  T *p = reinterpret_cast<T *>(L.data.data());
  const std::size_t lld = static_cast<std::size_t>(L.lld);
  for (std::size_t lj = 0; lj < L.gcol.size(); ++lj)
    for (std::size_t li = 0; li < L.grow.size(); ++li)
      p[li + lj * lld] = gen<T>(L.grow[li], L.gcol[lj], seed);
}

void fill(Local &L, Ty ty, std::uint64_t seed) {
  switch (ty) {
  case Ty::S:
    fill_t<float>(L, seed);
    break;
  case Ty::D:
    fill_t<double>(L, seed);
    break;
  case Ty::C:
    fill_t<CFloat>(L, seed);
    break;
  case Ty::Z:
    fill_t<CDouble>(L, seed);
    break;
  case Ty::I:
    fill_t<int>(L, seed);
    break;
  }
}

constexpr std::uint64_t kSeedA = 1, kSeedB = 2;

// Number of local elements of B that differ from the value the copy must produce.
template <class T>
i64 count_wrong_t(const CaseSpec &c, const Local &B, const std::vector<unsigned char> &data) {
  const T *p = reinterpret_cast<const T *>(data.data());
  const std::size_t lld = static_cast<std::size_t>(B.lld);
  i64 bad = 0;
  for (std::size_t lj = 0; lj < B.gcol.size(); ++lj) {
    const i64 j = B.gcol[lj] - (c.jb - 1);
    for (std::size_t li = 0; li < B.grow.size(); ++li) {
      const i64 i = B.grow[li] - (c.ib - 1);
      T want;
      if (i >= 0 && i < c.m && j >= 0 && j < c.n && (!c.trmr || in_trapezoid(c, i, j)))
        want = gen<T>(c.ia - 1 + i, c.ja - 1 + j, kSeedA);
      else
        want = gen<T>(B.grow[li], B.gcol[lj], kSeedB);
      if (std::memcmp(&want, &p[li + lj * lld], sizeof(T)) != 0) ++bad;
    }
  }
  return bad;
}

i64 count_wrong(const CaseSpec &c, const Local &B, const std::vector<unsigned char> &data) {
  switch (c.ty) {
  case Ty::S:
    return count_wrong_t<float>(c, B, data);
  case Ty::D:
    return count_wrong_t<double>(c, B, data);
  case Ty::C:
    return count_wrong_t<CFloat>(c, B, data);
  case Ty::Z:
    return count_wrong_t<CDouble>(c, B, data);
  case Ty::I:
    return count_wrong_t<int>(c, B, data);
  }
  return 0;
}

// ---------------------------------------------------------------------------------------
// The two implementations
// ---------------------------------------------------------------------------------------
struct Call {
  const CaseSpec *c;
  const int *desca;
  const int *descb;
  int ictxt;
};

void run_scalapack(const Call &k, const void *a, void *b) {
  const CaseSpec &c = *k.c;
  const char uplo[2] = {c.uplo, 0}, diag[2] = {c.diag, 0};
  if (!c.trmr) {
    switch (c.ty) {
    case Ty::S:
      psgemr2d_(&c.m, &c.n, static_cast<const float *>(a), &c.ia, &c.ja, k.desca,
                static_cast<float *>(b), &c.ib, &c.jb, k.descb, &k.ictxt);
      break;
    case Ty::D:
      pdgemr2d_(&c.m, &c.n, static_cast<const double *>(a), &c.ia, &c.ja, k.desca,
                static_cast<double *>(b), &c.ib, &c.jb, k.descb, &k.ictxt);
      break;
    case Ty::C:
      pcgemr2d_(&c.m, &c.n, a, &c.ia, &c.ja, k.desca, b, &c.ib, &c.jb, k.descb, &k.ictxt);
      break;
    case Ty::Z:
      pzgemr2d_(&c.m, &c.n, a, &c.ia, &c.ja, k.desca, b, &c.ib, &c.jb, k.descb, &k.ictxt);
      break;
    case Ty::I:
      pigemr2d_(&c.m, &c.n, static_cast<const int *>(a), &c.ia, &c.ja, k.desca,
                static_cast<int *>(b), &c.ib, &c.jb, k.descb, &k.ictxt);
      break;
    }
  } else {
    switch (c.ty) {
    case Ty::S:
      pstrmr2d_(uplo, diag, &c.m, &c.n, static_cast<const float *>(a), &c.ia, &c.ja, k.desca,
                static_cast<float *>(b), &c.ib, &c.jb, k.descb, &k.ictxt);
      break;
    case Ty::D:
      pdtrmr2d_(uplo, diag, &c.m, &c.n, static_cast<const double *>(a), &c.ia, &c.ja, k.desca,
                static_cast<double *>(b), &c.ib, &c.jb, k.descb, &k.ictxt);
      break;
    case Ty::C:
      pctrmr2d_(uplo, diag, &c.m, &c.n, a, &c.ia, &c.ja, k.desca, b, &c.ib, &c.jb, k.descb,
                &k.ictxt);
      break;
    case Ty::Z:
      pztrmr2d_(uplo, diag, &c.m, &c.n, a, &c.ia, &c.ja, k.desca, b, &c.ib, &c.jb, k.descb,
                &k.ictxt);
      break;
    case Ty::I:
      pitrmr2d_(uplo, diag, &c.m, &c.n, static_cast<const int *>(a), &c.ia, &c.ja, k.desca,
                static_cast<int *>(b), &c.ib, &c.jb, k.descb, &k.ictxt);
      break;
    }
  }
}

void run_redist(const Call &k, const void *a, void *b) {
  const CaseSpec &c = *k.c;
  const char uplo[2] = {c.uplo, 0}, diag[2] = {c.diag, 0};
  if (!c.trmr) {
    switch (c.ty) {
    case Ty::S:
      redist_psgemr2d_(&c.m, &c.n, static_cast<const float *>(a), &c.ia, &c.ja, k.desca,
                       static_cast<float *>(b), &c.ib, &c.jb, k.descb, &k.ictxt);
      break;
    case Ty::D:
      redist_pdgemr2d_(&c.m, &c.n, static_cast<const double *>(a), &c.ia, &c.ja, k.desca,
                       static_cast<double *>(b), &c.ib, &c.jb, k.descb, &k.ictxt);
      break;
    case Ty::C:
      redist_pcgemr2d_(&c.m, &c.n, a, &c.ia, &c.ja, k.desca, b, &c.ib, &c.jb, k.descb, &k.ictxt);
      break;
    case Ty::Z:
      redist_pzgemr2d_(&c.m, &c.n, a, &c.ia, &c.ja, k.desca, b, &c.ib, &c.jb, k.descb, &k.ictxt);
      break;
    case Ty::I:
      redist_pigemr2d_(&c.m, &c.n, static_cast<const int *>(a), &c.ia, &c.ja, k.desca,
                       static_cast<int *>(b), &c.ib, &c.jb, k.descb, &k.ictxt);
      break;
    }
  } else {
    switch (c.ty) {
    case Ty::S:
      redist_pstrmr2d_(uplo, diag, &c.m, &c.n, static_cast<const float *>(a), &c.ia, &c.ja, k.desca,
                       static_cast<float *>(b), &c.ib, &c.jb, k.descb, &k.ictxt);
      break;
    case Ty::D:
      redist_pdtrmr2d_(uplo, diag, &c.m, &c.n, static_cast<const double *>(a), &c.ia, &c.ja,
                       k.desca, static_cast<double *>(b), &c.ib, &c.jb, k.descb, &k.ictxt);
      break;
    case Ty::C:
      redist_pctrmr2d_(uplo, diag, &c.m, &c.n, a, &c.ia, &c.ja, k.desca, b, &c.ib, &c.jb, k.descb,
                       &k.ictxt);
      break;
    case Ty::Z:
      redist_pztrmr2d_(uplo, diag, &c.m, &c.n, a, &c.ia, &c.ja, k.desca, b, &c.ib, &c.jb, k.descb,
                       &k.ictxt);
      break;
    case Ty::I:
      redist_pitrmr2d_(uplo, diag, &c.m, &c.n, static_cast<const int *>(a), &c.ia, &c.ja, k.desca,
                       static_cast<int *>(b), &c.ib, &c.jb, k.descb, &k.ictxt);
      break;
    }
  }
}

// ---------------------------------------------------------------------------------------
// Timing
// ---------------------------------------------------------------------------------------
double median(std::vector<double> v) {
  if (v.empty()) return 0.0;
  std::sort(v.begin(), v.end());
  const std::size_t h = v.size() / 2;
  return v.size() % 2 ? v[h] : 0.5 * (v[h - 1] + v[h]);
}

// One barrier-separated call, maximum over ranks.
double timed(const std::function<void()> &f) {
  MPI_Barrier(MPI_COMM_WORLD);
  const double t0 = MPI_Wtime();
  f();
  double dt = MPI_Wtime() - t0, mx = 0.0;
  MPI_Allreduce(&dt, &mx, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
  return mx;
}

struct Timing {
  double first = 0.0, med = 0.0;
};

// Median time of one memcpy of `bytes` bytes, done by every rank at once (the ranks share the
// machine's memory bandwidth, as they do during a redistribution).
double memcpy_time(i64 bytes, int reps) {
  if (bytes <= 0) return 0.0;
  std::vector<unsigned char> src(static_cast<std::size_t>(bytes), 1), dst(src.size(), 0);
  auto f = [&] { std::memcpy(dst.data(), src.data(), src.size()); };
  timed(f);
  std::vector<double> v;
  for (int r = 0; r < reps; ++r)
    v.push_back(timed(f));
  return median(v);
}

// ---------------------------------------------------------------------------------------
// Driver
// ---------------------------------------------------------------------------------------
struct Row {
  std::string name, type, dims, what, status;
  double t_scal = 0, t_red = 0, t_red_first = 0, ratio = 0, t_memcpy = 0, bw = 0;
  double red_over_best = 0; // redist median / its fastest repetition
  i64 bytes = 0;
  bool skipped = false;
};

void fill_desc(int *d, const MatSpec &s, const Grid &g, int lld) {
  d[0] = 1;
  d[1] = g.member ? g.ctxt : -1;
  d[2] = s.m;
  d[3] = s.n;
  d[4] = s.mb;
  d[5] = s.nb;
  d[6] = s.rsrc;
  d[7] = s.csrc;
  d[8] = g.member ? lld : 1;
}

struct Options {
  int size = 0;
  int reps = 5;
  std::string filter;
  std::string csv;
  bool list = false;
  bool cold = false;
  bool plan_extents = false;
  bool shared_arrays = false;
  bool small = false;
};

void usage() {
  std::printf(
      "usage: mpirun -n P redist_bench [options]\n"
      "  --size N     matrix order (default 8000 with <= 2 ranks, 4000 otherwise)\n"
      "  --reps R     timed repetitions per implementation after one warm-up (default 5)\n"
      "  --case NAME  run only cases whose name contains NAME\n"
      "  --csv FILE   also write the table as CSV\n"
      "  --cold       clear redist's plan cache before every redist call\n"
      "  --shared-arrays  A (for both libraries) from redist_alloc: receivers map and copy it\n"
      "  --plan-extents  time plan creation (C API) for extents 10^3 ... 10^9 instead\n"
      "  --small      the small cached calls instead (>= 300 reps; >= 2 ranks)\n"
      "  --list       list the cases and exit\n");
}

// Plan creation (redist_plan_create + destroy, no data) against the extent E of the matrix, at
// fixed blocks and grids: the time must not grow with E (the plan stores one period of the
// pattern). Windows of E x 4 with the rows spread over the grid, E = 10^3 ... 10^9, and square
// E x E windows up to 10^5: a plan allocates (and does not touch) its message buffers, which
// must fit in this machine's memory. Medians over --reps, maximum over ranks.
void plan_extents(const Options &opt, int me, int np) {
  struct Shape {
    const char *name;
    int a_rows, b_rows; // grid rows; grid columns np / rows
    std::int64_t a_block, b_block;
    bool square;
    std::int64_t largest;
  };
  const Shape shapes[] = {{"Px1 64 -> 100, Ex4", np, np, 64, 100, false, 1000000000},
                          {"Px1 1 -> 64, Ex4", np, np, 1, 64, false, 1000000000},
                          {"Px1 -> 1xP 32 -> 48, Ex4", np, 1, 32, 48, false, 1000000000},
                          {"1xP 64 -> 100, ExE", 1, 1, 64, 100, true, 100000}};
  std::vector<int> ranks(static_cast<std::size_t>(np));
  for (int r = 0; r < np; ++r)
    ranks[static_cast<std::size_t>(r)] = r;
  if (me == 0)
    std::printf("plan creation (redist_plan_create + destroy), %d ranks, median of %d, max over "
                "ranks\n%-26s %12s %12s\n",
                np, opt.reps, "layouts, window", "E", "time");
  for (const Shape &s : shapes) {
    std::vector<double> medians;
    for (std::int64_t extent = 1000; extent <= s.largest; extent *= 10) {
      const std::int64_t columns = s.square ? extent : 4;
      const auto layout = [&](int rows, std::int64_t block) {
        redist_layout l{};
        l.m = extent;
        l.n = columns;
        l.mb = l.nb = block;
        l.nprow = rows;
        l.npcol = np / rows;
        l.ranks = ranks.data();
        // At most one block more than an even share of the rows: all lld has to cover.
        l.lld = (extent / (block * rows) + 1) * block;
        return l;
      };
      const redist_layout a = layout(s.a_rows, s.a_block);
      const redist_layout b = layout(s.b_rows, s.b_block);
      std::vector<double> times;
      for (int r = 0; r <= opt.reps; ++r) {
        redist_plan plan = nullptr;
        MPI_Barrier(MPI_COMM_WORLD);
        const double t0 = MPI_Wtime();
        const int rc = redist_plan_create(MPI_COMM_WORLD, extent, columns, REDIST_DOUBLE, &a, &b,
                                          REDIST_REGION_FULL, 0, &plan);
        if (rc != REDIST_SUCCESS) {
          if (me == 0) std::fprintf(stderr, "%s\n", redist_last_error());
          return;
        }
        redist_plan_destroy(&plan);
        double t = MPI_Wtime() - t0;
        MPI_Allreduce(MPI_IN_PLACE, &t, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
        if (r > 0) times.push_back(t); // the first creation warms up
      }
      medians.push_back(median(times));
      if (me == 0)
        std::printf("%-26s %12" PRId64 " %10.3f ms\n", s.name, extent, medians.back() * 1e3);
    }
    if (me == 0)
      std::printf("%-26s largest / smallest median: %.2f\n", s.name,
                  *std::max_element(medians.begin(), medians.end()) /
                      *std::min_element(medians.begin(), medians.end()));
  }
}

Row run_case(const CaseSpec &c, const Options &opt, int me, int np, int sysctxt, int ictxt) {
  Row row;
  row.name = c.name;
  row.type = std::string(1, type_char(c.ty));
  row.dims = std::to_string(c.m) + "x" + std::to_string(c.n);
  row.what = c.what;
  if (c.min_procs > np) {
    row.skipped = true;
    row.status = "skipped: needs " + std::to_string(c.min_procs) + " processes";
    return row;
  }

  row.bytes = busiest_bytes(c, np);
  row.t_memcpy = memcpy_time(row.bytes, opt.reps);

  const Grid ga = make_grid(sysctxt, c.a, me);
  const Grid gb = make_grid(sysctxt, c.b, me);
  Local A = make_local(c.a, ga, c.ty);
  Local B = make_local(c.b, gb, c.ty);
  if (ga.member) fill(A, c.ty, kSeedA);
  if (gb.member) fill(B, c.ty, kSeedB);
  std::vector<unsigned char> bs = B.data;  // ScaLAPACK's output
  std::vector<unsigned char> &br = B.data; // redist's output
  int desca[9], descb[9];
  fill_desc(desca, c.a, ga, A.lld);
  fill_desc(descb, c.b, gb, B.lld);
  const Call k{&c, desca, descb, ictxt};

  auto before = [&] {
    if (opt.cold) redist_scalapack_clear_cache();
  };
  int bad_status = 0;
  // --shared-arrays: the same A, copied into memory from redist_alloc, for both libraries.
  void *a = A.data.data();
  if (opt.shared_arrays) {
    if (redist_alloc(A.data.size(), &a) != REDIST_SUCCESS) {
      std::fprintf(stderr, "redist_bench: %s\n", redist_last_error());
      MPI_Abort(MPI_COMM_WORLD, 1);
    }
    std::memcpy(a, A.data.data(), A.data.size());
  }
  auto scal = [&] { run_scalapack(k, a, bs.data()); };
  auto red = [&] {
    run_redist(k, a, br.data());
    if (redist_scalapack_last_status() != 0) bad_status = 1;
  };
  // Warm-up each, then alternate the two so that drifts of the machine hit both alike.
  Timing ts, tr;
  ts.first = timed(scal);
  before();
  tr.first = timed(red);
  std::vector<double> vs, vr;
  for (int r = 0; r < opt.reps; ++r) {
    vs.push_back(timed(scal));
    before();
    vr.push_back(timed(red));
  }
  ts.med = median(vs);
  tr.med = median(vr);
  row.t_scal = ts.med;
  row.t_red = tr.med;
  row.t_red_first = tr.first;
  row.ratio = tr.med > 0 ? ts.med / tr.med : 0.0;
  row.bw = row.t_memcpy > 0 ? tr.med / row.t_memcpy : 0.0;
  const double best = *std::min_element(vr.begin(), vr.end());
  row.red_over_best = best > 0 ? tr.med / best : 0.0;

  // Bitwise comparison, and both outputs against the value the copy must produce.
  i64 diff = 0, wrong_s = 0, wrong_r = 0;
  i64 first_gi = -1, first_gj = -1;
  if (gb.member) {
    const std::size_t es = elem_size(c.ty), lld = static_cast<std::size_t>(B.lld);
    for (std::size_t lj = 0; lj < B.gcol.size(); ++lj) {
      const std::size_t off = lj * lld * es, len = B.grow.size() * es;
      if (std::memcmp(bs.data() + off, br.data() + off, len) == 0) continue;
      for (std::size_t li = 0; li < B.grow.size(); ++li)
        if (std::memcmp(bs.data() + off + li * es, br.data() + off + li * es, es) != 0) {
          if (diff == 0) {
            first_gi = B.grow[li];
            first_gj = B.gcol[lj];
          }
          ++diff;
        }
    }
    wrong_s = count_wrong(c, B, bs);
    wrong_r = diff == 0 ? wrong_s : count_wrong(c, B, br);
  }
  if (diff > 0)
    std::fprintf(stderr,
                 "*** MISMATCH in case %s on rank %d: %" PRId64
                 " local elements of B differ between ScaLAPACK and redist; first at global "
                 "B(%" PRId64 ",%" PRId64 ") (1-based)\n",
                 c.name.c_str(), me, diff, first_gi + 1, first_gj + 1);
  i64 loc[4] = {diff, wrong_s, wrong_r, bad_status}, tot[4];
  MPI_Allreduce(loc, tot, 4, MPI_INT64_T, MPI_SUM, MPI_COMM_WORLD);
  if (tot[0] > 0)
    row.status = "MISMATCH(" + std::to_string(tot[0]) + ")";
  else
    row.status = "ok";
  if (tot[1] > 0) row.status += " scalapack-wrong(" + std::to_string(tot[1]) + ")";
  if (tot[2] > 0 && tot[0] > 0) row.status += " redist-wrong(" + std::to_string(tot[2]) + ")";
  if (tot[3] > 0) row.status += " redist-status!=0";

  if (ga.member) Cblacs_gridexit(ga.ctxt);
  if (gb.member) Cblacs_gridexit(gb.ctxt);
  if (opt.shared_arrays) redist_free(a);
  return row;
}

// ---------------------------------------------------------------------------------------
// Small calls: cached calls at the latency floor
// ---------------------------------------------------------------------------------------
// The small cases, at any number of ranks >= 2 (the 2-rank grids at 2, 3, 5+):
// 32x32 blocks 4 -> 8 (1x2 -> 2x1; at 4 ranks 2x2 -> 4x1) and 128x128 blocks 16 -> 24 (1x2 ->
// 2x1; at 4 ranks complex, 2x2 -> 1x4).
std::vector<CaseSpec> small_cases(int np) {
  std::vector<CaseSpec> cs;
  const bool four = np == 4;
  // 64 x 64 (messages of 8 KiB at 2 ranks, 4-5 KiB at 4) between the two others: MPI's
  // shared-memory transport sends it in a rendezvous, as the larger one.
  for (const int order : {32, 64, 128}) {
    CaseSpec c;
    c.name = "small" + std::to_string(order);
    c.ty = four && order > 32 ? Ty::C : Ty::D;
    c.m = c.n = order;
    const int from = order / 8, to = order == 32 ? 8 : order * 3 / 16;
    c.a = with(four ? grid(2, 2) : grid(1, np), order, order, from, from);
    c.b = with(four ? (order == 32 ? grid(4, 1) : grid(1, 4)) : grid(np, 1), order, order, to, to);
    c.what = describe(c.a) + " -> " + describe(c.b);
    c.min_procs = np;
    cs.push_back(c);
  }
  return cs;
}

// The layout of one side for the C API (grid positions column-major, as redist_layout wants).
redist_layout c_layout(const MatSpec &s, const Local &L, const Grid &g, std::vector<int> &ranks,
                       int i, int j) {
  ranks.assign(static_cast<std::size_t>(s.nprow * s.npcol), 0);
  for (int pr = 0; pr < s.nprow; ++pr)
    for (int pc = 0; pc < s.npcol; ++pc)
      ranks[static_cast<std::size_t>(pr + pc * s.nprow)] = s.rank_of(pr, pc);
  return redist_layout{s.m,    s.n,    s.mb,         s.nb,  s.nprow, s.npcol,
                       s.rsrc, s.csrc, ranks.data(), i - 1, j - 1,   g.member ? L.lld : 1};
}

redist_type c_type(Ty t) {
  switch (t) {
  case Ty::S:
    return REDIST_FLOAT;
  case Ty::D:
    return REDIST_DOUBLE;
  case Ty::C:
    return REDIST_COMPLEX_FLOAT;
  case Ty::Z:
    return REDIST_COMPLEX_DOUBLE;
  case Ty::I:
    return REDIST_INT32;
  }
  return REDIST_DOUBLE;
}

// A reduction (maximum) of 5 words among ranks that share one node, through shared memory
// instead of MPI: each rank writes its words and the call's epoch into a cache line of its own
// (two, by the epoch's parity, so a rank ahead never overwrites words another still reads) and
// reads every other rank's once their epoch has arrived, yielding its core while it waits.
// What an agreement could cost inside a node (docs/performance.md, "Why two synchronisations
// remain"); usable() is false where the ranks span nodes.
class SharedAgreement {
public:
  explicit SharedAgreement(MPI_Comm comm) {
    MPI_Comm node;
    MPI_Comm_split_type(comm, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &node);
    int size = 0, node_size = 0;
    MPI_Comm_size(comm, &size);
    MPI_Comm_size(node, &node_size);
    MPI_Comm_free(&node);
    int everywhere = node_size == size ? 1 : 0;
    MPI_Allreduce(MPI_IN_PLACE, &everywhere, 1, MPI_INT, MPI_MIN, comm);
    if (everywhere == 0) return;
    MPI_Comm_rank(comm, &me_);
    Line *mine = nullptr;
    MPI_Win_allocate_shared(static_cast<MPI_Aint>(2 * sizeof(Line)), static_cast<int>(sizeof(Line)),
                            MPI_INFO_NULL, comm, &mine, &window_);
    for (int r = 0; r < size; ++r) {
      MPI_Aint bytes = 0;
      int unit = 0;
      Line *line = nullptr;
      MPI_Win_shared_query(window_, r, &bytes, &unit, &line);
      lines_.push_back(line);
    }
    MPI_Barrier(comm);
  }
  ~SharedAgreement() {
    if (window_ != MPI_WIN_NULL) MPI_Win_free(&window_);
  }
  SharedAgreement(const SharedAgreement &) = delete;
  SharedAgreement &operator=(const SharedAgreement &) = delete;
  bool usable() const { return window_ != MPI_WIN_NULL; }
  void run(long long *words) {
    ++epoch_;
    const auto parity = static_cast<std::size_t>(epoch_ & 1);
    Line &own = lines_[static_cast<std::size_t>(me_)][parity];
    std::copy(words, words + 5, own.words);
    std::atomic_ref<long long>(own.epoch).store(epoch_, std::memory_order_release);
    for (std::size_t r = 0; r < lines_.size(); ++r) {
      if (static_cast<int>(r) == me_) continue;
      Line &other = lines_[r][parity];
      for (int spins = 0;
           std::atomic_ref<long long>(other.epoch).load(std::memory_order_acquire) < epoch_;) {
        if (++spins == 64) {
          sched_yield();
          spins = 0;
        }
      }
      for (int k = 0; k < 5; ++k)
        words[k] = std::max(words[k], other.words[k]);
    }
  }

private:
  struct alignas(64) Line {
    long long epoch = 0;
    long long words[5] = {};
  };
  MPI_Win window_ = MPI_WIN_NULL;
  std::vector<Line *> lines_;
  int me_ = 0;
  long long epoch_ = 0;
};

// For every small case, in the same run, alternating: ScaLAPACK's PxGEMR2D, redist's (plan
// cached), redist_plan_execute (C API), one MPI ping-pong between ranks 0 and 1 of the most
// bytes one rank sends (there and back), the reductions of the agreements (67 long long: every
// field, what a cached ScaLAPACK-entry call once ran; 5: the hit agreement; 3: the executor's after
// the exchange), one memcpy of the busiest rank's bytes (the copies of a call), and the call's
// floors in MPI alone (its messages and one or both agreements, nothing copied). Then first
// calls: redist's entry with its cache cleared (plan, duplicate of the communicator,
// execution), its first call of a plan on contexts whose communicator it has (plan and
// execution), redist_plan_create + execute + destroy, and a new plan's second execution.
void small_calls(const Options &opt, int me, int np, int sysctxt, int ictxt) {
  const int reps = std::max(opt.reps, 300);
  const int cold_reps = std::max(reps / 10, 30);
  if (me == 0)
    std::printf("small calls, %d ranks: medians of %d cached calls (first calls: %d), max over "
                "ranks\n%-9s %-2s %-24s %9s %9s %6s %9s %9s %6s %8s %8s %8s %8s %9s %6s %9s "
                "%6s %9s %6s %8s %8s %8s %8s %9s  %s\n",
                np, reps, cold_reps, "case", "t", "layout A -> B", "scalapack", "redist", "ratio",
                "execute", "pingpong", "ex/pp", "allr67", "allr5", "allr3", "memcpy", "1st-entry",
                "/hit", "1st-plan", "/hit", "1st-capi", "/hit", "xchg+1", "xchg+2", "overlap",
                "shm5", "2nd-exec", "check");
  SharedAgreement shared(MPI_COMM_WORLD);
  for (const CaseSpec &c : small_cases(np)) {
    if (!opt.filter.empty() && c.name.find(opt.filter) == std::string::npos) continue;
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
    std::vector<int> ranks_a, ranks_b;
    const redist_layout la = c_layout(c.a, A, ga, ranks_a, c.ia, c.ja);
    const redist_layout lb = c_layout(c.b, B, gb, ranks_b, c.ib, c.jb);
    const auto create = [&](redist_plan *plan) {
      if (redist_plan_create(MPI_COMM_WORLD, c.m, c.n, c_type(c.ty), &la, &lb, REDIST_REGION_FULL,
                             0, plan) != REDIST_SUCCESS) {
        std::fprintf(stderr, "redist_bench: %s\n", redist_last_error());
        MPI_Abort(MPI_COMM_WORLD, 1);
      }
    };
    redist_plan plan = nullptr;
    create(&plan);
    int bad_status = 0;
    const auto scal = [&] { run_scalapack(k, A.data.data(), bs.data()); };
    const auto red = [&] {
      run_redist(k, A.data.data(), br.data());
      if (redist_scalapack_last_status() != 0) bad_status = 1;
    };
    const auto exec = [&] {
      if (redist_plan_execute(plan, A.data.data(), bc.data()) != REDIST_SUCCESS) bad_status = 1;
    };
    // Ping-pong: the most bytes one rank sends (at 2 ranks: the one message each way).
    i64 sent = 0;
    std::vector<i64> pairs;
    const i64 bytes = busiest_bytes(c, np, &sent, &pairs);
    std::vector<unsigned char> ping(static_cast<std::size_t>(std::max<i64>(sent, 1)));
    const auto pingpong = [&] {
      if (me == 0) {
        MPI_Send(ping.data(), static_cast<int>(sent), MPI_BYTE, 1, 5, MPI_COMM_WORLD);
        MPI_Recv(ping.data(), static_cast<int>(sent), MPI_BYTE, 1, 5, MPI_COMM_WORLD,
                 MPI_STATUS_IGNORE);
      } else if (me == 1) {
        MPI_Recv(ping.data(), static_cast<int>(sent), MPI_BYTE, 0, 5, MPI_COMM_WORLD,
                 MPI_STATUS_IGNORE);
        MPI_Send(ping.data(), static_cast<int>(sent), MPI_BYTE, 0, 5, MPI_COMM_WORLD);
      }
    };
    long long words[67] = {};
    const auto allreduce = [&](int count) {
      return [&words, count] {
        MPI_Allreduce(MPI_IN_PLACE, words, count, MPI_LONG_LONG, MPI_MAX, MPI_COMM_WORLD);
      };
    };
    // The floors of a call in MPI alone, nothing copied: the redistribution's own messages
    // (every pair of ranks, the bytes the layouts give it), all posted at once, then the
    // 3-word agreement after them (xchg+1: the least a call whose outcome every process learns
    // can take); and the 5-word agreement before them too (xchg+2: redist's two
    // synchronisations, docs/performance.md "Why two synchronisations remain").
    std::vector<std::vector<unsigned char>> inbox(static_cast<std::size_t>(np));
    for (int s = 0; s < np; ++s)
      inbox[static_cast<std::size_t>(s)].resize(
          static_cast<std::size_t>(pairs[static_cast<std::size_t>(s * np + me)]));
    std::vector<MPI_Request> requests;
    const auto exchange = [&] {
      requests.clear();
      for (int s = 0; s < np; ++s) {
        auto &in = inbox[static_cast<std::size_t>(s)];
        if (!in.empty())
          MPI_Irecv(in.data(), static_cast<int>(in.size()), MPI_BYTE, s, 6, MPI_COMM_WORLD,
                    &requests.emplace_back());
      }
      for (int d = 0; d < np; ++d) {
        const i64 n = pairs[static_cast<std::size_t>(me * np + d)];
        if (n > 0)
          MPI_Isend(ping.data(), static_cast<int>(n), MPI_BYTE, d, 6, MPI_COMM_WORLD,
                    &requests.emplace_back());
      }
      MPI_Waitall(static_cast<int>(requests.size()), requests.data(), MPI_STATUSES_IGNORE);
    };
    const auto floor1 = [&] {
      exchange();
      allreduce(3)();
    };
    const auto floor2 = [&] {
      allreduce(5)();
      floor1();
    };
    // xchg+2 with the first agreement overlapped with the exchange (`overlap`: an
    // MPI_Iallreduce posted before the messages, completed after them).
    const auto overlapped = [&] {
      MPI_Request hit;
      MPI_Iallreduce(MPI_IN_PLACE, words, 5, MPI_LONG_LONG, MPI_MAX, MPI_COMM_WORLD, &hit);
      exchange();
      MPI_Wait(&hit, MPI_STATUS_IGNORE);
      allreduce(3)();
    };
    // One 5-word agreement through shared memory (`shm5`; nothing where the ranks span nodes).
    const auto shared_agreement = [&] {
      if (shared.usable()) shared.run(words);
    };
    // The copies of a call: the busiest rank's bytes once (pack, unpack and local copy move
    // each element once at one end).
    std::vector<unsigned char> from(static_cast<std::size_t>(std::max<i64>(bytes, 1)), 1),
        to(from.size());
    const auto copy = [&] { std::memcpy(to.data(), from.data(), from.size()); };
    const std::function<void()> kinds[] = {
        scal,         red,  exec,   pingpong, allreduce(67), allreduce(5),
        allreduce(3), copy, floor1, floor2,   overlapped,    shared_agreement};
    constexpr int kKinds = 12;
    std::vector<double> t[kKinds];
    for (const auto &f : kinds)
      timed(f); // warm-up: plans built, ways negotiated
    for (int r = 0; r < reps; ++r)
      for (int i = 0; i < kKinds; ++i)
        t[i].push_back(timed(kinds[i]));
    double med[kKinds];
    for (int i = 0; i < kKinds; ++i)
      med[i] = median(t[i]);
    // First calls, alternating with cached ones of the same kind.
    // And a new plan's second execution (what it pays once beyond a cached one).
    std::vector<double> first_entry, first_plan, first_capi, second_exec;
    // A plan the entry has not cached, on contexts whose communicator it has (a new shape on
    // known grids): the plan cache held to one plan, and the window one row shorter called in
    // between, which takes the plan's place. (Its rows of B get the values the copy puts there.)
    CaseSpec shorter = c;
    shorter.m = c.m - 1;
    const Call k_shorter{&shorter, desca, descb, ictxt};
    const char *plan_cache_size = std::getenv("REDIST_PLAN_CACHE_SIZE");
    const std::string kept_plan_cache_size = plan_cache_size != nullptr ? plan_cache_size : "";
    // A C API plan's first call (plan_life_bench prints what each part costs).
    for (int r = 0; r < cold_reps; ++r) {
      first_capi.push_back(timed([&] {
        redist_plan fresh = nullptr;
        create(&fresh);
        if (redist_plan_execute(fresh, A.data.data(), bc.data()) != REDIST_SUCCESS) bad_status = 1;
        redist_plan_destroy(&fresh);
      }));
      // The entries read the environment at their first call after the cache is cleared.
      setenv("REDIST_PLAN_CACHE_SIZE", "1", 1);
      redist_scalapack_clear_cache();
      first_entry.push_back(timed(red));
      run_redist(k_shorter, A.data.data(), br.data());
      first_plan.push_back(timed(red));
      redist_plan fresh = nullptr;
      create(&fresh);
      if (redist_plan_execute(fresh, A.data.data(), bc.data()) != REDIST_SUCCESS) bad_status = 1;
      second_exec.push_back(timed([&] {
        if (redist_plan_execute(fresh, A.data.data(), bc.data()) != REDIST_SUCCESS) bad_status = 1;
      }));
      redist_plan_destroy(&fresh);
    }
    if (plan_cache_size != nullptr) {
      setenv("REDIST_PLAN_CACHE_SIZE", kept_plan_cache_size.c_str(), 1);
    } else {
      unsetenv("REDIST_PLAN_CACHE_SIZE");
    }
    redist_scalapack_clear_cache(); // the caller's environment read again
    redist_plan_destroy(&plan);
    // Every output against the value the copy must produce.
    i64 loc[2] = {gb.member ? count_wrong(c, B, bs) + count_wrong(c, B, br) + count_wrong(c, B, bc)
                            : 0,
                  bad_status};
    i64 tot[2];
    MPI_Allreduce(loc, tot, 2, MPI_INT64_T, MPI_SUM, MPI_COMM_WORLD);
    const double e1 = median(first_entry), p1 = median(first_plan), c1 = median(first_capi),
                 x2 = median(second_exec);
    char shm5[16] = "-";
    if (shared.usable()) std::snprintf(shm5, sizeof shm5, "%.2fus", med[11] * 1e6);
    if (me == 0)
      std::printf(
          "%-9s %-2c %-24s %7.2fus %7.2fus %6.2f %7.2fus %7.2fus %6.2f %6.2fus %6.2fus "
          "%6.2fus %6.2fus %7.1fus %6.1f %7.1fus %6.1f %7.1fus %6.1f %6.2fus %6.2fus %6.2fus %8s "
          "%7.2fus  %s\n",
          c.name.c_str(), type_char(c.ty), c.what.c_str(), med[0] * 1e6, med[1] * 1e6,
          med[0] / med[1], med[2] * 1e6, med[3] * 1e6, med[2] / med[3], med[4] * 1e6, med[5] * 1e6,
          med[6] * 1e6, med[7] * 1e6, e1 * 1e6, e1 / med[1], p1 * 1e6, p1 / med[1], c1 * 1e6,
          c1 / med[2], med[8] * 1e6, med[9] * 1e6, med[10] * 1e6, shm5, x2 * 1e6,
          tot[0] == 0 && tot[1] == 0 ? "ok" : "WRONG");
    if (ga.member) Cblacs_gridexit(ga.ctxt);
    if (gb.member) Cblacs_gridexit(gb.ctxt);
  }
  std::fflush(stdout);
}

void print_header() {
  std::printf("%-11s %-2s %-11s %-36s %11s %11s %11s %7s %11s %7s %6s  %s\n", "case", "t", "window",
              "layout A -> B", "scalapack", "redist", "redist-1st", "ratio", "memcpy", "bw",
              "/best", "check");
  std::fflush(stdout);
}

void print_row(const Row &r) {
  if (r.skipped) {
    std::printf("%-11s %-2s %-11s %-36s %s\n", r.name.c_str(), r.type.c_str(), r.dims.c_str(),
                r.what.c_str(), r.status.c_str());
  } else {
    std::printf("%-11s %-2s %-11s %-36s %9.3fms %9.3fms %9.3fms %7.2f %9.3fms %7.2f %6.2f  %s\n",
                r.name.c_str(), r.type.c_str(), r.dims.c_str(), r.what.c_str(), r.t_scal * 1e3,
                r.t_red * 1e3, r.t_red_first * 1e3, r.ratio, r.t_memcpy * 1e3, r.bw,
                r.red_over_best, r.status.c_str());
  }
  std::fflush(stdout);
}

} // namespace

#ifndef REDIST_BENCH_NO_MAIN // costa_bench.cpp includes this file for its cases and helpers
int main(int argc, char **argv) {
  MPI_Init(&argc, &argv);
  int me = 0, np = 1;
  MPI_Comm_rank(MPI_COMM_WORLD, &me);
  MPI_Comm_size(MPI_COMM_WORLD, &np);

  Options opt;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    auto next = [&]() -> const char * {
      if (i + 1 >= argc) {
        if (me == 0) std::fprintf(stderr, "redist_bench: %s needs a value\n", a.c_str());
        MPI_Finalize();
        std::exit(2);
      }
      return argv[++i];
    };
    if (a == "--size")
      opt.size = std::atoi(next());
    else if (a == "--reps")
      opt.reps = std::atoi(next());
    else if (a == "--case")
      opt.filter = next();
    else if (a == "--csv")
      opt.csv = next();
    else if (a == "--list")
      opt.list = true;
    else if (a == "--cold")
      opt.cold = true;
    else if (a == "--shared-arrays")
      opt.shared_arrays = true;
    else if (a == "--plan-extents")
      opt.plan_extents = true;
    else if (a == "--small")
      opt.small = true;
    else if (a == "--help" || a == "-h") {
      if (me == 0) usage();
      MPI_Finalize();
      return 0;
    } else {
      if (me == 0) {
        std::fprintf(stderr, "redist_bench: unknown option %s\n", a.c_str());
        usage();
      }
      MPI_Finalize();
      return 2;
    }
  }
  if (opt.size == 0) opt.size = np <= 2 ? 8000 : 4000;
  if (opt.size < 11 || opt.reps < 1) {
    if (me == 0) std::fprintf(stderr, "redist_bench: need --size >= 11 and --reps >= 1\n");
    MPI_Finalize();
    return 2;
  }

  if (opt.plan_extents) {
    plan_extents(opt, me, np);
    MPI_Finalize();
    return 0;
  }
  const std::vector<CaseSpec> cases = make_cases(np, opt.size);
  if (opt.list) {
    if (me == 0)
      for (const auto &c : cases)
        std::printf("%-11s %c %dx%d %s%s\n", c.name.c_str(), type_char(c.ty), c.m, c.n,
                    c.what.c_str(), c.min_procs > np ? "  (skipped: too few processes)" : "");
    MPI_Finalize();
    return 0;
  }

  int bme = 0, bnp = 0, sysctxt = 0, ictxt = 0;
  Cblacs_pinfo(&bme, &bnp);
  Cblacs_get(-1, 0, &sysctxt);
  ictxt = sysctxt;
  Cblacs_gridinit(&ictxt, "R", 1, np);

  if (opt.small) {
    if (np >= 2)
      small_calls(opt, me, np, sysctxt, ictxt);
    else if (me == 0)
      std::fprintf(stderr, "redist_bench: --small needs >= 2 ranks\n");
    Cblacs_gridexit(ictxt);
    Cblacs_exit(1);
    MPI_Finalize();
    return 0;
  }
  if (me == 0) {
    std::printf("redist_bench: %d ranks, size %d, %d reps (+1 warm-up)%s; times are medians, "
                "max over ranks\n",
                np, opt.size, opt.reps, opt.cold ? ", redist plan cache cleared per call" : "");
    std::printf("ratio = scalapack/redist; bw = redist / memcpy of the busiest rank's bytes "
                "(local + sent + received); /best = redist median / its fastest repetition\n");
    print_header();
  }

  std::vector<Row> rows;
  bool mismatch = false;
  for (const auto &c : cases) {
    if (!opt.filter.empty() && c.name.find(opt.filter) == std::string::npos) continue;
    Row r = run_case(c, opt, me, np, sysctxt, ictxt);
    if (r.status.rfind("MISMATCH", 0) == 0) mismatch = true;
    if (me == 0) print_row(r);
    rows.push_back(std::move(r));
  }

  if (me == 0) {
    std::vector<double> ratios;
    const Row *worst = nullptr;
    for (const auto &r : rows)
      if (!r.skipped) {
        ratios.push_back(r.ratio);
        if (!worst || r.ratio < worst->ratio) worst = &r;
      }
    if (worst)
      std::printf("median ratio %.2f, minimum ratio %.2f (%s) over %zu cases%s\n", median(ratios),
                  worst->ratio, worst->name.c_str(), ratios.size(),
                  mismatch ? "  *** MISMATCH: outputs differ ***" : "");
    else
      std::printf("no case run\n");
    if (!opt.csv.empty()) {
      FILE *f = std::fopen(opt.csv.c_str(), "w");
      if (!f) {
        std::fprintf(stderr, "redist_bench: cannot write %s\n", opt.csv.c_str());
      } else {
        std::fprintf(f, "case,type,window,layout,ranks,scalapack_s,redist_s,redist_first_s,ratio,"
                        "memcpy_s,busiest_bytes,bw_ratio,check,redist_median_over_best\n");
        for (const auto &r : rows)
          std::fprintf(
              f, "%s,%s,%s,\"%s\",%d,%.6g,%.6g,%.6g,%.4g,%.6g,%" PRId64 ",%.4g,\"%s\",%.4g\n",
              r.name.c_str(), r.type.c_str(), r.dims.c_str(), r.what.c_str(), np, r.t_scal, r.t_red,
              r.t_red_first, r.ratio, r.t_memcpy, r.bytes, r.bw, r.status.c_str(), r.red_over_best);
        std::fclose(f);
      }
    }
    std::fflush(stdout);
  }

  Cblacs_gridexit(ictxt);
  Cblacs_exit(1);
  MPI_Finalize();
  return mismatch ? 1 : 0;
}
#endif // REDIST_BENCH_NO_MAIN
