// redist's ScaLAPACK-compatible entries (redist_p?gemr2d_, redist_p?trmr2d_ and the by-value
// redist_Cp?gemr2d / redist_Cp?trmr2d) against ScaLAPACK's own PxGEMR2D / PxTRMR2D and against
// the element oracle, on random cases that every rank draws from one shared seed.
//
// Each case: random element type (s, d, c, z, i), gemr2d or trmr2d (UPLO U/u/L/l, DIAG
// U/u/N/n), random m x n window (0 sometimes, tall, wide), an ICTXT grid (all processes or a
// subset; gridinit 'R'/'C' or gridmap in a random order; sometimes A's or B's own context),
// grids of A and B inside it (same context, same processes in another shape/order, disjoint,
// or random overlap), random M_/N_, MB_/NB_ (1 .. beyond the matrix), RSRC_/CSRC_, IA/JA/IB/JB,
// LLD padding; processes outside a grid pass DESCx(CTXT_) = -1 (and, in half the cases,
// garbage in the rest of that descriptor, which the routines must not look at).
//
// Every rank of ICTXT calls both ScaLAPACK and redist (in a random order) on identical
// inputs; then, on every rank:
//   - redist's B buffer (LLD padding and a guard zone included) must equal ScaLAPACK's bit for
//     bit, and must equal the element oracle;
//   - A (and the descriptors) must be unchanged, redist_scalapack_last_status() == 0,
//     redist_scalapack_call_count() must have grown by one.
// When ScaLAPACK's own result disagrees with the oracle, the oracle is the judge for that case
// and the disagreement is reported as a ScaLAPACK quirk (none known so far; see the summary).

#include "../common/scalapack_decls.h"
#include "harness.hpp"

#include <redist_scalapack.h>

#include <gtest/gtest.h>
#include <mpi.h>

#include <algorithm>
#include <array>
#include <complex>
#include <cstring>
#include <map>
#include <numeric>
#include <string>
#include <vector>

namespace mpitest {
namespace {

enum class Ictxt { Own, OfA, OfB };
enum class Relation { SameContext, SameProcesses, Disjoint, Random };

const char *relation_name(Relation r) {
  switch (r) {
  case Relation::SameContext:
    return "same-context";
  case Relation::SameProcesses:
    return "same-processes";
  case Relation::Disjoint:
    return "disjoint";
  case Relation::Random:
    return "random-overlap";
  }
  return "?";
}

struct Case {
  int index = 0;
  char type = 'd';
  bool trmr = false;
  char uplo = 'U', diag = 'N';
  std::int64_t m = 0, n = 0;
  GridSpec ictxt;
  Ictxt ictxt_is = Ictxt::Own;
  Relation relation = Relation::Random;
  MatSpec a, b;
  bool garbage_desc = false;
  std::array<int, 18> garbage{};
  bool by_value = false;
  bool redist_first = false;
  bool repeat = false; ///< call both routines a second time on the same arguments, new data

  [[nodiscard]] CopySpec copy() const {
    CopySpec c;
    c.m = m;
    c.n = n;
    if (trmr) {
      c.region = (uplo == 'U' || uplo == 'u') ? Region::Upper : Region::Lower;
      c.unit_diag = diag == 'U' || diag == 'u';
    }
    return c;
  }

  [[nodiscard]] std::string describe() const {
    std::string s =
        "case " + std::to_string(index) + ": p" + std::string(1, type) +
        (trmr ? "trmr2d UPLO='" + std::string(1, uplo) + "' DIAG='" + std::string(1, diag) + "'"
              : std::string("gemr2d")) +
        " M=" + std::to_string(m) + " N=" + std::to_string(n) + " (" +
        (by_value ? "by-value C entry" : "Fortran entry") + ", " +
        (redist_first ? "redist first" : "ScaLAPACK first") + (repeat ? ", called twice" : "") +
        ")\n";
    s += "    ICTXT: ";
    s += ictxt_is == Ictxt::OfA   ? "A's context"
         : ictxt_is == Ictxt::OfB ? "B's context"
                                  : ictxt.describe();
    s += "\n    A: " + a.describe() + "\n    B: " + b.describe() + "  [" + relation_name(relation) +
         "]\n    non-member descriptors: " +
         (garbage_desc ? "garbage except CTXT_=-1" : "real values with CTXT_=-1") + "\n";
    return s;
  }
};

bool subset_of(const std::vector<int> &x, const std::vector<int> &y) {
  return std::all_of(x.begin(), x.end(),
                     [&](int r) { return std::find(y.begin(), y.end(), r) != y.end(); });
}

Case draw_case(Rng &rng, int np, int index) {
  Case c;
  c.index = index;
  c.type = "sdczi"[rng.uniform(0, 4)];
  c.trmr = rng.coin(0.5);
  c.uplo = "UuLl"[rng.uniform(0, 3)];
  c.diag = "UuNn"[rng.uniform(0, 3)];
  random_window(rng, c.m, c.n);

  std::vector<int> all(static_cast<std::size_t>(np));
  std::iota(all.begin(), all.end(), 0);
  const int k = (np == 1 || rng.coin(0.7)) ? np : static_cast<int>(rng.uniform(1, np - 1));
  c.ictxt = random_grid(rng, all, k, true);
  const std::vector<int> &pool = c.ictxt.ranks;
  const int s = static_cast<int>(pool.size());

  const int ka = static_cast<int>(rng.uniform(1, s));
  GridSpec ga = random_grid(rng, pool, ka, true);
  GridSpec gb;
  const std::int64_t r = rng.uniform(0, 99);
  if (r < 15) {
    c.relation = Relation::SameContext;
    gb = ga;
  } else if (r < 30) {
    c.relation = Relation::SameProcesses;
    gb = random_grid(rng, ga.ranks, ka, true);
  } else if (r < 55 && s > ka) {
    c.relation = Relation::Disjoint;
    std::vector<int> rest;
    for (int x : pool)
      if (std::find(ga.ranks.begin(), ga.ranks.end(), x) == ga.ranks.end()) rest.push_back(x);
    gb = random_grid(rng, rest, static_cast<int>(rng.uniform(1, static_cast<int>(rest.size()))),
                     true);
  } else {
    c.relation = Relation::Random;
    gb = random_grid(rng, pool, static_cast<int>(rng.uniform(1, s)), true);
  }
  // Sometimes ICTXT is A's or B's own context (allowed when it holds the other grid).
  if (rng.coin(0.25)) {
    if (subset_of(gb.ranks, ga.ranks))
      c.ictxt_is = Ictxt::OfA;
    else if (subset_of(ga.ranks, gb.ranks))
      c.ictxt_is = Ictxt::OfB;
  }
  c.a = random_matrix(rng, std::move(ga), c.m, c.n);
  c.b = random_matrix(rng, std::move(gb), c.m, c.n);
  c.garbage_desc = rng.coin(0.5);
  for (int &g : c.garbage)
    g = static_cast<int>(rng.uniform(-3, 40));
  c.by_value = rng.coin(0.25);
  c.redist_first = rng.coin(0.5);
  c.repeat = rng.coin(0.2);
  return c;
}

// ---------------------------------------------------------------------------------------------
// Calls, dispatched on the element type.
struct Args {
  const Case *c;
  void *a;
  int *desca;
  void *b;
  int *descb;
  int ictxt;
};

template <class T> struct Calls;

#define DEFINE_CALLS(T, x, RAW)                                                                    \
  template <> struct Calls<T> {                                                                    \
    static void scalapack(const Args &g) {                                                         \
      const int m = static_cast<int>(g.c->m), n = static_cast<int>(g.c->n);                        \
      const int ia = static_cast<int>(g.c->a.ia), ja = static_cast<int>(g.c->a.ja);                \
      const int ib = static_cast<int>(g.c->b.ia), jb = static_cast<int>(g.c->b.ja);                \
      if (g.c->trmr)                                                                               \
        p##x##trmr2d_(&g.c->uplo, &g.c->diag, &m, &n, static_cast<RAW *>(g.a), &ia, &ja, g.desca,  \
                      static_cast<RAW *>(g.b), &ib, &jb, g.descb, &g.ictxt);                       \
      else                                                                                         \
        p##x##gemr2d_(&m, &n, static_cast<RAW *>(g.a), &ia, &ja, g.desca, static_cast<RAW *>(g.b), \
                      &ib, &jb, g.descb, &g.ictxt);                                                \
    }                                                                                              \
    static void redist(const Args &g) {                                                            \
      const int m = static_cast<int>(g.c->m), n = static_cast<int>(g.c->n);                        \
      const int ia = static_cast<int>(g.c->a.ia), ja = static_cast<int>(g.c->a.ja);                \
      const int ib = static_cast<int>(g.c->b.ia), jb = static_cast<int>(g.c->b.ja);                \
      const char uplo[2] = {g.c->uplo, 0}, diag[2] = {g.c->diag, 0};                               \
      if (g.c->by_value) {                                                                         \
        if (g.c->trmr)                                                                             \
          redist_Cp##x##trmr2d(uplo, diag, m, n, static_cast<RAW *>(g.a), ia, ja, g.desca,         \
                               static_cast<RAW *>(g.b), ib, jb, g.descb, g.ictxt);                 \
        else                                                                                       \
          redist_Cp##x##gemr2d(m, n, static_cast<RAW *>(g.a), ia, ja, g.desca,                     \
                               static_cast<RAW *>(g.b), ib, jb, g.descb, g.ictxt);                 \
      } else {                                                                                     \
        if (g.c->trmr)                                                                             \
          redist_p##x##trmr2d_(&g.c->uplo, &g.c->diag, &m, &n, static_cast<RAW *>(g.a), &ia, &ja,  \
                               g.desca, static_cast<RAW *>(g.b), &ib, &jb, g.descb, &g.ictxt);     \
        else                                                                                       \
          redist_p##x##gemr2d_(&m, &n, static_cast<RAW *>(g.a), &ia, &ja, g.desca,                 \
                               static_cast<RAW *>(g.b), &ib, &jb, g.descb, &g.ictxt);              \
      }                                                                                            \
    }                                                                                              \
  };
DEFINE_CALLS(float, s, float)
DEFINE_CALLS(double, d, double)
DEFINE_CALLS(std::complex<float>, c, void)
DEFINE_CALLS(std::complex<double>, z, void)
DEFINE_CALLS(int, i, int)
#undef DEFINE_CALLS

// ---------------------------------------------------------------------------------------------
struct Outcome {
  bool participant = false;
  std::int64_t redist_bad = 0;    ///< redist's B vs the oracle
  std::int64_t scalapack_bad = 0; ///< ScaLAPACK's B vs the oracle
  std::int64_t differ = 0;        ///< elements where redist's B != ScaLAPACK's B
  std::string failure;            ///< everything that is redist's fault
  std::string quirk;              ///< ScaLAPACK disagreeing with the oracle
};

void make_desc(const MatSpec &s, const LocalBuf &lb, int ctxt, const Case &c, int which,
               int desc[9]) {
  if (lb.member) {
    const std::array<int, 9> d = descriptor(s, ctxt, lb);
    std::copy(d.begin(), d.end(), desc);
  } else if (c.garbage_desc) {
    std::copy(c.garbage.begin() + 9 * which, c.garbage.begin() + 9 * which + 9, desc);
    desc[1] = -1;
  } else {
    const int d[9] = {1,
                      -1,
                      static_cast<int>(s.mg),
                      static_cast<int>(s.ng),
                      static_cast<int>(s.mb),
                      static_cast<int>(s.nb),
                      s.rsrc,
                      s.csrc,
                      1};
    std::copy(d, d + 9, desc);
  }
}

template <class T>
Outcome run_case(const Case &c, bool participant, int ctxt_a, int ctxt_b, int ctxt_i) {
  Outcome out;
  out.participant = participant;
  if (!participant) return out; // not in ICTXT: not called; holds no part of A or B
  const int me = world_rank();
  const LocalBuf la = local_buf(c.a, me), lb = local_buf(c.b, me);
  int desca[9], descb[9];
  make_desc(c.a, la, ctxt_a, c, 0, desca);
  make_desc(c.b, lb, ctxt_b, c, 1, descb);
  int desca_orig[9], descb_orig[9];
  std::copy(desca, desca + 9, desca_orig);
  std::copy(descb, descb + 9, descb_orig);
  const auto desc_changed = [&] {
    return !std::equal(desca, desca + 9, desca_orig) || !std::equal(descb, descb + 9, descb_orig);
  };
  std::vector<T> a, a_orig, b_ref, b_test;

  // One round: both routines on fresh buffers; a repeated round (same grids, descriptors and
  // arguments, other data) exercises redist's plan cache hit.
  const auto round = [&](int a_salt, int b_salt, const std::string &label) {
    fill_a(c.a, la, a_salt, a);
    a_orig = a;
    fill_sentinel(lb, b_salt, b_ref);
    b_test = b_ref;
    const auto a_changed = [&] {
      return std::memcmp(a.data(), a_orig.data(), a.size() * sizeof(T)) != 0;
    };
    const Args sc{&c, a.data(), desca, b_ref.data(), descb, ctxt_i};
    const Args rd{&c, a.data(), desca, b_test.data(), descb, ctxt_i};
    const auto run_redist = [&] {
      const long long before = redist_scalapack_call_count();
      Calls<T>::redist(rd);
      const long long calls = redist_scalapack_call_count() - before;
      const int status = redist_scalapack_last_status();
      if (status != 0)
        out.failure += label + "redist_scalapack_last_status() = " + std::to_string(status) + "\n";
      if (calls != 1 && !(calls == 0 && (c.m == 0 || c.n == 0)))
        out.failure +=
            label + "redist_scalapack_call_count() grew by " + std::to_string(calls) + "\n";
      if (a_changed()) out.failure += label + "redist modified A's local buffer\n";
      if (desc_changed()) out.failure += label + "redist modified a descriptor\n";
    };
    const auto run_scalapack = [&] {
      Calls<T>::scalapack(sc);
      if (a_changed()) out.quirk += label + "ScaLAPACK modified A's local buffer\n";
      if (desc_changed()) out.quirk += label + "ScaLAPACK modified a descriptor\n";
    };
    const auto restore = [&] {
      a = a_orig;
      std::copy(desca_orig, desca_orig + 9, desca);
      std::copy(descb_orig, descb_orig + 9, descb);
    };
    if (c.redist_first) {
      run_redist();
      restore();
      run_scalapack();
    } else {
      run_scalapack();
      restore();
      run_redist();
    }
    restore();

    const CopySpec cs = c.copy();
    std::string rep_redist, rep_scalapack;
    const std::int64_t redist_bad =
        check_b(cs, c.a, c.b, lb, b_test.data(), a_salt, b_salt, rep_redist);
    const std::int64_t scalapack_bad =
        check_b(cs, c.a, c.b, lb, b_ref.data(), a_salt, b_salt, rep_scalapack);
    std::int64_t differ = 0;
    for (std::size_t p = 0; p < b_ref.size(); ++p)
      differ += std::memcmp(&b_ref[p], &b_test[p], sizeof(T)) != 0 ? 1 : 0;
    if (redist_bad > 0) {
      out.failure += label + "redist: " + std::to_string(redist_bad) +
                     " elements of B's local buffer differ from the oracle, e.g.\n" + rep_redist;
    }
    if (scalapack_bad > 0) {
      out.quirk += label + "ScaLAPACK: " + std::to_string(scalapack_bad) +
                   " elements of B's local buffer differ from the oracle, e.g.\n" + rep_scalapack;
    } else if (differ > 0) {
      out.failure += label + "redist's B differs from ScaLAPACK's in " + std::to_string(differ) +
                     " elements\n";
    }
    out.redist_bad += redist_bad;
    out.scalapack_bad += scalapack_bad;
    out.differ += differ;
  };
  // Salts stay <= 9 so that float values stay exact.
  round(1 + c.index % 3, 4, "  ");
  if (c.repeat) round(5 + c.index % 3, 8, "  (repeated call) ");
  return out;
}

Outcome run_typed(const Case &c, bool participant, int ca, int cb, int ci) {
  switch (c.type) {
  case 's':
    return run_case<float>(c, participant, ca, cb, ci);
  case 'd':
    return run_case<double>(c, participant, ca, cb, ci);
  case 'c':
    return run_case<std::complex<float>>(c, participant, ca, cb, ci);
  case 'z':
    return run_case<std::complex<double>>(c, participant, ca, cb, ci);
  default:
    return run_case<int>(c, participant, ca, cb, ci);
  }
}

/// The BLACS contexts of a case (collective over every world rank).
struct Contexts {
  int a = -1, b = -1, i = -1;
  bool participant = false; ///< this rank is in ICTXT
  std::string error;        ///< this rank's grid is not where the case says
  bool agreed = false;      ///< every rank's grids were built as drawn
};

Contexts make_contexts(const Case &c) {
  const int me = world_rank();
  Contexts x;
  x.a = create_context(c.a.grid, x.error);
  x.b = c.relation == Relation::SameContext ? x.a : create_context(c.b.grid, x.error);
  switch (c.ictxt_is) {
  case Ictxt::OfA:
    x.i = x.a;
    x.participant = c.a.grid.contains(me);
    break;
  case Ictxt::OfB:
    x.i = x.b;
    x.participant = c.b.grid.contains(me);
    break;
  case Ictxt::Own:
    x.i = create_context(c.ictxt, x.error);
    x.participant = c.ictxt.contains(me);
    break;
  }
  // Every rank must agree that the grids were built as drawn before anyone calls.
  x.agreed = on_any_rank(!x.error.empty()) == 0;
  return x;
}

void free_contexts(const Case &c, const Contexts &x) {
  if (c.ictxt_is == Ictxt::Own) free_context(x.i);
  if (c.relation != Relation::SameContext) free_context(x.b);
  free_context(x.a);
}

struct Stats {
  std::map<std::string, int> counts;
  void add(const std::string &k) { ++counts[k]; }
  [[nodiscard]] std::string str() const {
    std::string s;
    for (const auto &[k, v] : counts)
      s += "  " + k + "=" + std::to_string(v);
    return s;
  }
};

const char *kind_name(GridKind k) {
  return k == GridKind::InitRow ? "gridinit-R" : k == GridKind::InitCol ? "gridinit-C" : "gridmap";
}

TEST(ScalapackCompare, RandomCases) {
  const int np = world_size();
  const int me = world_rank();
  const std::uint64_t seed =
      shared_seed("ScalapackCompare.RandomCases", 20240601ULL + static_cast<unsigned>(np));
  Rng rng(seed);
  const int ncases = options().cases;
  int run = 0, failed_cases = 0, quirk_cases = 0;
  Stats stats;
  std::string quirk_list;
  for (int index = 0; index < ncases; ++index) {
    const Case c = draw_case(rng, np, index);
    if (options().only_case >= 0 && options().only_case != index) continue;
    if (options().verbose) print0(c.describe());
    ++run;
    watchdog_arm("seed " + std::to_string(seed) + " np " + std::to_string(np) + ", " +
                 c.describe());
    const Contexts ctxt = make_contexts(c);
    Outcome out;
    if (ctxt.agreed) {
      out = run_typed(c, ctxt.participant, ctxt.a, ctxt.b, ctxt.i);
    } else {
      out.failure = ctxt.error.empty() ? "" : "  " + ctxt.error;
    }
    free_contexts(c, ctxt);
    if (options().clear_cache) redist_scalapack_clear_cache();
    watchdog_disarm();

    if (!out.failure.empty())
      ADD_FAILURE() << "seed " << seed << " np " << np << ", " << c.describe() << out.failure;
    if (!out.quirk.empty()) {
      std::printf("[rank %d] ScaLAPACK quirk (oracle is the judge) in %s%s", me,
                  c.describe().c_str(), out.quirk.c_str());
      std::fflush(stdout);
    }
    int flags[2] = {out.failure.empty() ? 0 : 1, out.quirk.empty() ? 0 : 1}, any[2] = {0, 0};
    MPI_Allreduce(flags, any, 2, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
    failed_cases += any[0];
    quirk_cases += any[1];
    if (any[1]) quirk_list += " " + std::to_string(index);

    stats.add(std::string("type-") + c.type);
    stats.add(c.trmr ? std::string("trmr2d-") + c.uplo + c.diag : "gemr2d");
    stats.add(relation_name(c.relation));
    stats.add(c.ictxt_is == Ictxt::OfA   ? "ictxt=A"
              : c.ictxt_is == Ictxt::OfB ? "ictxt=B"
                                         : (c.ictxt.size() == np ? "ictxt=all" : "ictxt=subset"));
    stats.add(std::string("A-") + kind_name(c.a.grid.kind));
    stats.add(std::string("B-") + kind_name(c.b.grid.kind));
    if (c.m == 0 || c.n == 0) stats.add("empty");
    if (c.trmr && c.m > c.n) stats.add("trmr-tall");
    if (c.trmr && c.m < c.n) stats.add("trmr-wide");
    if (c.a.rsrc || c.a.csrc || c.b.rsrc || c.b.csrc) stats.add("src!=0");
    if (c.a.ia > 1 || c.a.ja > 1 || c.b.ia > 1 || c.b.ja > 1) stats.add("offsets");
    if (c.by_value) stats.add("by-value");
    if (c.repeat) stats.add("repeated");
  }
  print0("[  CASES   ] " + std::to_string(run) + " cases on " + std::to_string(np) + " ranks, " +
         std::to_string(failed_cases) + " failed, " + std::to_string(quirk_cases) +
         " where ScaLAPACK disagreed with the oracle" +
         (quirk_list.empty() ? "" : " (cases" + quirk_list + ")") + "\n[  COVER   ]" + stats.str() +
         "\n");
  EXPECT_EQ(failed_cases, 0);
}

// ---------------------------------------------------------------------------------------------
// 11-integer descriptors (DTYPE_ = 2, BLOCK_CYCLIC_2D_INB: a first block of IMB_ x INB_ on
// (RSRC_, CSRC_), then blocks of MB_ x NB_ round-robin from the next process row / column) in
// PxGEMR2D / PxTRMR2D: redist's documented extension. ScaLAPACK's routines read a descriptor
// as 9 integers whatever DTYPE_ says, so they are no oracle here: every global element is
// placed by FirstBlockDim (owner and local index from the IMB/MB formulas directly), apart
// from src/ and from the harness's numroc / local_to_global. Each case is a RandomCases case
// (grids, contexts, windows, types, trmr2d, by-value entries, repeated calls) whose A and B
// descriptors are, at random and at least one of them, 11-integer ones, IMB_ / INB_ from 1
// to beyond MB_ / NB_ and beyond M_ / N_; on every rank of ICTXT redist's B buffer (padding
// and guard included) must equal the oracle's, A and the descriptors must be unchanged and
// the call must succeed.

/// One side of a first-blocks case: IMB_ / INB_, or 0 for a 9-integer descriptor; and whether
/// the matrix is replicated over the process rows / columns (RSRC_ / CSRC_ = -1: every process
/// row holds all the rows at their global indices).
struct FirstBlocks {
  std::int64_t imb = 0, inb = 0;
  bool rows_replicated = false, cols_replicated = false;
  [[nodiscard]] bool eleven() const { return imb > 0; }
  [[nodiscard]] std::string describe() const {
    return (eleven() ? "11-integer IMB_=" + std::to_string(imb) + " INB_=" + std::to_string(inb)
                     : std::string("9-integer")) +
           (rows_replicated ? " RSRC_=-1" : "") + (cols_replicated ? " CSRC_=-1" : "");
  }
};

/// A side as this process holds it: rows and columns placed from the first blocks (or all of
/// them on every process row / column where replicated).
struct Placed {
  FirstBlockDim rows, cols;
  bool rows_replicated, cols_replicated;
  LocalBuf lb;
  Placed(const MatSpec &s, const FirstBlocks &f, int rank)
      : rows{s.mg, f.eleven() ? f.imb : s.mb, s.mb, s.rsrc, s.grid.nprow},
        cols{s.ng, f.eleven() ? f.inb : s.nb, s.nb, s.csrc, s.grid.npcol},
        rows_replicated(f.rows_replicated), cols_replicated(f.cols_replicated) {
    lb.member = s.grid.find(rank, lb.pr, lb.pc);
    if (lb.member) {
      lb.locr = rows_replicated ? s.mg : rows.count(lb.pr);
      lb.locc = cols_replicated ? s.ng : cols.count(lb.pc);
      lb.lld = std::max<std::int64_t>(1, lb.locr) +
               s.lld_extra[static_cast<std::size_t>(lb.pr + lb.pc * s.grid.nprow)];
    }
    lb.elems = lb.lld * lb.locc + GuardElems;
  }
  /// Buffer position of global (gi, gj) on this process, -1 if another process holds it.
  [[nodiscard]] std::int64_t position(std::int64_t gi, std::int64_t gj) const {
    if (!lb.member || (!rows_replicated && rows.owner(gi) != lb.pr) ||
        (!cols_replicated && cols.owner(gj) != lb.pc))
      return -1;
    return (rows_replicated ? gi : rows.local(gi)) +
           lb.lld * (cols_replicated ? gj : cols.local(gj));
  }
};

/// The descriptor (11 integers, or 9 and two unused) of side `which` (0: A, 1: B); outside
/// its grid CTXT_ = -1 and, as the case says, garbage or real values in the rest.
std::array<int, 11> first_blocks_desc(const Case &c, int which, const FirstBlocks &f,
                                      const Placed &p, int ctxt) {
  const MatSpec &s = which == 0 ? c.a : c.b;
  const auto i = [](std::int64_t v) { return static_cast<int>(v); };
  std::array<int, 11> d{};
  if (!p.lb.member && c.garbage_desc) {
    const auto *g = c.garbage.data() + 9 * which;
    std::copy(g, g + 9, d.begin());
    d[9] = g[0];
    d[10] = g[1];
  } else {
    const int rsrc = f.rows_replicated ? -1 : s.rsrc;
    const int csrc = f.cols_replicated ? -1 : s.csrc;
    if (f.eleven())
      d = {2,       ctxt,    i(s.mg), i(s.ng), i(f.imb),   i(f.inb),
           i(s.mb), i(s.nb), rsrc,    csrc,    i(p.lb.lld)};
    else
      d = {1, ctxt, i(s.mg), i(s.ng), i(s.mb), i(s.nb), rsrc, csrc, i(p.lb.lld), 0, 0};
  }
  if (!p.lb.member) d[1] = -1;
  return d;
}

/// Whether redist refuses a B replicated over several process rows or columns under the REDIST_*
/// environment (docs/guide.md: such a B is written all at once only).
bool replicated_b_refused(const Case &c, const FirstBlocks &fb) {
  if (!((fb.rows_replicated && c.b.grid.nprow > 1) || (fb.cols_replicated && c.b.grid.npcol > 1)))
    return false;
  const auto set = [](const char *name, const char *except) {
    const char *v = std::getenv(name);
    return v != nullptr && *v != '\0' && std::strcmp(v, except) != 0 &&
           std::strcmp(v, "all-at-once") != 0;
  };
  return set("REDIST_SCHEDULE", "auto") || set("REDIST_MAX_MEMORY", "0") ||
         set("REDIST_MAX_CONCURRENT", "0");
}

template <class T>
std::string run_first_blocks(const Case &c, const FirstBlocks &fa, const FirstBlocks &fb,
                             int ctxt_a, int ctxt_b, int ctxt_i) {
  const int me = world_rank();
  const Placed pa(c.a, fa, me), pb(c.b, fb, me);
  std::array<int, 11> desca = first_blocks_desc(c, 0, fa, pa, ctxt_a);
  std::array<int, 11> descb = first_blocks_desc(c, 1, fb, pb, ctxt_b);
  const std::array<int, 11> desca_orig = desca, descb_orig = descb;
  const CopySpec cs = c.copy();
  std::string failure;
  const auto round = [&](int a_salt, int b_salt, const std::string &label) {
    std::vector<T> a(static_cast<std::size_t>(pa.lb.elems));
    for (std::size_t p = 0; p < a.size(); ++p)
      a[p] = Elem<T>::make(-(APaddingCode + static_cast<std::int64_t>(p)));
    for (std::int64_t gj = 0; gj < c.a.ng; ++gj)
      for (std::int64_t gi = 0; gi < c.a.mg; ++gi)
        if (const std::int64_t p = pa.position(gi, gj); p >= 0)
          a[static_cast<std::size_t>(p)] = Elem<T>::make(a_code(c.a, gi, gj, a_salt));
    const std::vector<T> a_orig = a;
    std::vector<T> b, want;
    fill_sentinel(pb.lb, b_salt, b);
    want = b;
    const bool refused = replicated_b_refused(c, fb) && c.m > 0 && c.n > 0;
    for (std::int64_t wj = 0; wj < c.n && !refused; ++wj)
      for (std::int64_t wi = 0; wi < c.m; ++wi) {
        const std::int64_t p = pb.position(c.b.ia - 1 + wi, c.b.ja - 1 + wj);
        if (p < 0 || !in_region(cs.region, cs.unit_diag, c.m, c.n, wi, wj)) continue;
        want[static_cast<std::size_t>(p)] =
            Elem<T>::make(a_code(c.a, c.a.ia - 1 + wi, c.a.ja - 1 + wj, a_salt));
      }
    Calls<T>::redist(Args{&c, a.data(), desca.data(), b.data(), descb.data(), ctxt_i});
    const int status = redist_scalapack_last_status();
    if (status != 0 && !refused)
      failure += label + "redist_scalapack_last_status() = " + std::to_string(status) + "\n";
    if (status == 0 && refused)
      failure += label + "a replicated B under this REDIST_* environment was not refused\n";
    if (std::memcmp(a.data(), a_orig.data(), a.size() * sizeof(T)) != 0)
      failure += label + "redist modified A's local buffer\n";
    if (desca != desca_orig || descb != descb_orig)
      failure += label + "redist modified a descriptor\n";
    std::int64_t bad = 0;
    for (std::size_t p = 0; p < b.size(); ++p) {
      if (std::memcmp(&b[p], &want[p], sizeof(T)) == 0) continue;
      if (bad++ < 4) {
        const auto l = static_cast<std::int64_t>(p);
        const std::string where =
            l < pb.lb.lld * pb.lb.locc
                ? "local (" + std::to_string(l % pb.lb.lld) + "," + std::to_string(l / pb.lb.lld) +
                      ")"
                : "guard element " + std::to_string(l - pb.lb.lld * pb.lb.locc);
        failure += label + "  " + where + ": expected " + describe_code(code_of(want[p]), c.a) +
                   ", got " + show(b[p]) + " = " + describe_code(code_of(b[p]), c.a) + "\n";
      }
    }
    if (bad > 0)
      failure += label + std::to_string(bad) + " elements of B's local buffer differ from the " +
                 "oracle (rank " + std::to_string(me) + ")\n";
  };
  round(1 + c.index % 3, 4, "  ");
  if (c.repeat) round(5 + c.index % 3, 8, "  (repeated call) ");
  return failure;
}

std::string run_first_blocks_typed(const Case &c, const FirstBlocks &fa, const FirstBlocks &fb,
                                   int ca, int cb, int ci) {
  switch (c.type) {
  case 's':
    return run_first_blocks<float>(c, fa, fb, ca, cb, ci);
  case 'd':
    return run_first_blocks<double>(c, fa, fb, ca, cb, ci);
  case 'c':
    return run_first_blocks<std::complex<float>>(c, fa, fb, ca, cb, ci);
  case 'z':
    return run_first_blocks<std::complex<double>>(c, fa, fb, ca, cb, ci);
  default:
    return run_first_blocks<int>(c, fa, fb, ca, cb, ci);
  }
}

TEST(FirstBlockDescriptors, CopiesAgainstOracle) {
  const int np = world_size();
  const std::uint64_t seed = shared_seed("FirstBlockDescriptors.CopiesAgainstOracle",
                                         20261129ULL + static_cast<unsigned>(np));
  Rng rng(seed);
  int failed_cases = 0;
  for (int index = 0; index < options().cases; ++index) {
    const Case c = draw_case(rng, np, index);
    FirstBlocks fa, fb;
    const bool eleven_a = rng.coin(0.6);
    const bool eleven_b = !eleven_a || rng.coin(0.6);
    const std::int64_t imb_a = random_first_block(rng, c.a.mb, c.a.mg);
    const std::int64_t inb_a = random_first_block(rng, c.a.nb, c.a.ng);
    const std::int64_t imb_b = random_first_block(rng, c.b.mb, c.b.mg);
    const std::int64_t inb_b = random_first_block(rng, c.b.nb, c.b.ng);
    if (eleven_a) fa = {imb_a, inb_a};
    if (eleven_b) fb = {imb_b, inb_b};
    // Now and then a side replicated over the process rows or columns (an extension too).
    for (bool *replicated :
         {&fa.rows_replicated, &fa.cols_replicated, &fb.rows_replicated, &fb.cols_replicated})
      *replicated = rng.coin(0.12);
    if (options().only_case >= 0 && options().only_case != index) continue;
    const std::string what = c.describe() + "    DESCA " + fa.describe() + ", DESCB " +
                             fb.describe() + " (LLD: the padding above on the rows these place)\n";
    if (options().verbose) print0(what);
    watchdog_arm("seed " + std::to_string(seed) + " np " + std::to_string(np) + ", " + what);
    const Contexts ctxt = make_contexts(c);
    std::string failure = ctxt.error.empty() ? "" : "  " + ctxt.error;
    if (ctxt.agreed && ctxt.participant)
      failure = run_first_blocks_typed(c, fa, fb, ctxt.a, ctxt.b, ctxt.i);
    free_contexts(c, ctxt);
    if (options().clear_cache) redist_scalapack_clear_cache();
    watchdog_disarm();
    if (!failure.empty())
      ADD_FAILURE() << "seed " << seed << " np " << np << ", " << what << failure;
    failed_cases += on_any_rank(!failure.empty());
    if (failed_cases > 5) break;
  }
  EXPECT_EQ(failed_cases, 0);
}

} // namespace
} // namespace mpitest
