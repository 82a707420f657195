// The drop-in library (redist_scalapack, linked ahead of ScaLAPACK): every Fortran spelling
// (p?gemr2d, p?gemr2d_, p?gemr2d__, P?GEMR2D, same for trmr2d) and the by-value C entries
// (Cp?gemr2d, Cp?trmr2d) of all five types must resolve to redist (dladdr names the drop-in
// library, not ScaLAPACK), be counted by redist_scalapack_call_count(), and copy exactly
// (element oracle). ScaLAPACK itself is shadowed in this executable, so the oracle is the
// only judge here; test_scalapack_compare.cpp does the bit-for-bit comparison.

#include "harness.hpp"

#include <redist_scalapack.h>

#include <dlfcn.h>
#include <gtest/gtest.h>
#include <mpi.h>

#include <algorithm>
#include <cctype>
#include <complex>
#include <cstdint>
#include <numeric>
#include <string>
#include <vector>

namespace mpitest {
namespace {

using FortranGemr = void (*)(const int *, const int *, const void *, const int *, const int *,
                             const int *, void *, const int *, const int *, const int *,
                             const int *);
using FortranTrmr = void (*)(const char *, const char *, const int *, const int *, const void *,
                             const int *, const int *, const int *, void *, const int *,
                             const int *, const int *, const int *);
using CGemr = void (*)(int, int, void *, int, int, int *, void *, int, int, int *, int);
using CTrmr = void (*)(const char *, const char *, int, int, void *, int, int, int *, void *,
                       int, int, int *, int);

enum class Style { Lower, LowerUnderscore, LowerDoubleUnderscore, Upper, CByValue };

std::string symbol_name(char x, bool trmr, Style style) {
  const std::string op = trmr ? "trmr2d" : "gemr2d";
  const std::string lower = std::string("p") + x + op;
  switch (style) {
  case Style::Lower: return lower;
  case Style::LowerUnderscore: return lower + "_";
  case Style::LowerDoubleUnderscore: return lower + "__";
  case Style::Upper: {
    std::string up = lower;
    for (char &ch : up) ch = static_cast<char>(std::toupper(static_cast<unsigned char>(ch)));
    return up;
  }
  case Style::CByValue: return "C" + lower;
  }
  return lower;
}

template <class T>
std::string run_one(Rng &rng, bool trmr, Style style, void *sym) {
  const int np = world_size(), me = world_rank();
  std::vector<int> all(static_cast<std::size_t>(np));
  std::iota(all.begin(), all.end(), 0);
  std::int64_t m = 0, n = 0;
  do {
    random_window(rng, m, n);
  } while (m == 0 || n == 0);
  MatSpec a = random_matrix(rng, random_grid(rng, all, static_cast<int>(rng.uniform(1, np)), true), m, n);
  MatSpec b = random_matrix(rng, random_grid(rng, all, static_cast<int>(rng.uniform(1, np)), true), m, n);
  const char uplo = "UuLl"[rng.uniform(0, 3)];
  const char diag = "UuNn"[rng.uniform(0, 3)];
  GridSpec gi;
  gi.kind = GridKind::InitRow;
  gi.nprow = 1;
  gi.npcol = np;
  gi.ranks = all;
  std::string err;
  const int ca = create_context(a.grid, err), cb = create_context(b.grid, err),
            ci = create_context(gi, err);
  const LocalBuf la = local_buf(a, me), lb = local_buf(b, me);
  std::vector<T> abuf, bbuf;
  fill_a(a, la, 1, abuf);
  fill_sentinel(lb, 2, bbuf);
  const auto desc = [](const MatSpec &s, const LocalBuf &l, int ctxt, int d[9]) {
    const int v[9] = {1, l.member ? ctxt : -1, static_cast<int>(s.mg), static_cast<int>(s.ng),
                      static_cast<int>(s.mb), static_cast<int>(s.nb), s.rsrc, s.csrc,
                      static_cast<int>(l.lld)};
    std::copy(v, v + 9, d);
  };
  int da[9], db[9];
  desc(a, la, ca, da);
  desc(b, lb, cb, db);
  const int im = static_cast<int>(m), in = static_cast<int>(n);
  const int ia = static_cast<int>(a.ia), ja = static_cast<int>(a.ja);
  const int ib = static_cast<int>(b.ia), jb = static_cast<int>(b.ja);
  const long long before = redist_scalapack_call_count();
  if (style == Style::CByValue) {
    if (trmr)
      reinterpret_cast<CTrmr>(sym)(&uplo, &diag, im, in, abuf.data(), ia, ja, da, bbuf.data(), ib,
                                   jb, db, ci);
    else
      reinterpret_cast<CGemr>(sym)(im, in, abuf.data(), ia, ja, da, bbuf.data(), ib, jb, db, ci);
  } else {
    if (trmr)
      reinterpret_cast<FortranTrmr>(sym)(&uplo, &diag, &im, &in, abuf.data(), &ia, &ja, da,
                                         bbuf.data(), &ib, &jb, db, &ci);
    else
      reinterpret_cast<FortranGemr>(sym)(&im, &in, abuf.data(), &ia, &ja, da, bbuf.data(), &ib,
                                         &jb, db, &ci);
  }
  const long long calls = redist_scalapack_call_count() - before;
  if (calls != 1) err += "  call counter grew by " + std::to_string(calls) + "\n";
  if (redist_scalapack_last_status() != 0)
    err += "  last status " + std::to_string(redist_scalapack_last_status()) + "\n";
  CopySpec cs;
  cs.m = m;
  cs.n = n;
  if (trmr) {
    cs.region = (uplo == 'U' || uplo == 'u') ? Region::Upper : Region::Lower;
    cs.unit_diag = diag == 'U' || diag == 'u';
  }
  std::string rep;
  const std::int64_t bad = check_b(cs, a, b, lb, bbuf.data(), 1, 2, rep);
  if (bad > 0) err += "  " + std::to_string(bad) + " wrong elements in B, e.g.\n" + rep;
  free_context(ci);
  free_context(cb);
  free_context(ca);
  if (!err.empty()) {
    err = "  UPLO='" + std::string(1, uplo) + "' DIAG='" + std::string(1, diag) + "' M=" +
          std::to_string(m) + " N=" + std::to_string(n) + "\n  A: " + a.describe() +
          "\n  B: " + b.describe() + "\n" + err;
  }
  return err;
}

TEST(DropIn, EverySpellingIsRedist) {
  const std::uint64_t seed = shared_seed("DropIn.EverySpellingIsRedist", 99ULL);
  Rng rng(seed);
  const Style styles[] = {Style::Lower, Style::LowerUnderscore, Style::LowerDoubleUnderscore,
                          Style::Upper, Style::CByValue};
  for (char x : std::string("sdczi")) {
    for (bool trmr : {false, true}) {
      for (Style style : styles) {
        const std::string name = symbol_name(x, trmr, style);
        void *sym = dlsym(RTLD_DEFAULT, name.c_str());
        std::string where = "(not found)";
        Dl_info info{};
        if (sym != nullptr && dladdr(sym, &info) != 0 && info.dli_fname != nullptr)
          where = info.dli_fname;
        // Every rank resolves the same libraries, so skipping is collective-safe.
        if (sym == nullptr || where.find("redist_scalapack") == std::string::npos) {
          ADD_FAILURE() << name << " resolves to " << where
                        << ", expected the drop-in library redist_scalapack";
          continue;
        }
        std::string err;
        switch (x) {
        case 's': err = run_one<float>(rng, trmr, style, sym); break;
        case 'd': err = run_one<double>(rng, trmr, style, sym); break;
        case 'c': err = run_one<std::complex<float>>(rng, trmr, style, sym); break;
        case 'z': err = run_one<std::complex<double>>(rng, trmr, style, sym); break;
        default: err = run_one<int>(rng, trmr, style, sym); break;
        }
        EXPECT_TRUE(err.empty()) << "seed " << seed << ", " << name << ":\n" << err;
      }
    }
  }
}

} // namespace
} // namespace mpitest
