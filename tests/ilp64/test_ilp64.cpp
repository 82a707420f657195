// libredist_ilp64 -- the ScaLAPACK-compatible entries with 64-bit integers (REDIST_ILP64) --
// against the element-by-element oracle of tests/unit/reference.hpp (written from the
// ScaLAPACK definitions). No ILP64 ScaLAPACK exists here to compare with, and BLACS comes from
// the ILP64 stand-in blacs_standin.c (what it does and does not do: docs/reliability.md).
//
// Random cases, the same on every process: A and B on random grids (BLACS_GRIDINIT 'R'/'C' or
// BLACS_GRIDMAP in any rank order, possibly a subset of the processes, whose other processes
// pass DESCx(CTXT_) = -1 and garbage), ICTXT a 1 x P row; PDGEMR2D (Fortran and C entries),
// PDTRMR2D, PSTRMR2D and PIGEMR2D (64-bit integer elements). In two cases of three A, B or both are
// huge: M_ or N_ up to 2^33, block sizes past 2^31, LLD_ past 2^31, windows starting past 2^31;
// their local arrays are reserved with mmap(MAP_NORESERVE) and only the pages near the window
// are touched. Checked on every process: the status, every element of the window in B, and
// that nothing else changed (the whole local array of small matrices, its LLD padding and a
// guard zone; for huge ones every element within 3 rows and one column of the window).
// Then bad values that 32-bit truncation would make valid (DESCA(RSRC_) = 2^32, a context
// handle + 2^32, M = 2^32 + M) and values the agreement cannot carry exactly (>= 2^53) must be
// refused on every process, B untouched.
//
// Usage: redist_ilp64_tests [--cases=N]; REDIST_TEST_SEED=S replays. Prints "..., 0 failures"
// and PASS when every check holds on every process.

#include "blacs_standin.h"
#include "reference.hpp"

#include <redist_scalapack.h>

#include <mpi.h>
#include <sys/mman.h>

#include <algorithm>
#include <array>
#include <bit>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <map>
#include <string>
#include <type_traits>
#include <vector>

static_assert(sizeof(redist_int) == 8, "the ILP64 test needs redist_int = 64-bit (REDIST_ILP64)");

namespace {

using redist::Index;
using redist::Region;
using redist::test::Random;
using redist::test::ref_local;
using redist::test::ref_owner;
using redist::test::reference_copied;

constexpr Index k2to31 = Index{1} << 31;
constexpr Index k2to32 = Index{1} << 32;
constexpr Index k2to33 = Index{1} << 33;
constexpr Index kGuard = 5; // elements after a small local array that must stay untouched

int world_rank = 0;
int world_size = 1;
long long failures = 0;
long long checks = 0;

void fail(const std::string &where, const std::string &what) {
  ++failures;
  std::printf("FAIL: rank %d: %s: %s\n", world_rank, where.c_str(), what.c_str());
  std::fflush(stdout);
}

/// A local array reserved with mmap(MAP_NORESERVE): address space only, pages appear (zeroed)
/// when touched.
template <class T> class LocalArray {
public:
  explicit LocalArray(Index elements) : elements_(std::max<Index>(elements, 1)) {
    bytes_ = static_cast<std::size_t>(elements_) * sizeof(T);
    void *p = mmap(nullptr, bytes_, PROT_READ | PROT_WRITE,
                   MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
    if (p == MAP_FAILED) {
      std::fprintf(stderr, "rank %d: cannot reserve %zu bytes of address space\n", world_rank,
                   bytes_);
      MPI_Abort(MPI_COMM_WORLD, 2);
    }
    data_ = static_cast<T *>(p);
  }
  LocalArray(const LocalArray &) = delete;
  LocalArray &operator=(const LocalArray &) = delete;
  ~LocalArray() { munmap(data_, bytes_); }
  T *data() { return data_; }
  T &operator[](Index k) { return data_[k]; }
  [[nodiscard]] Index size() const { return elements_; }

private:
  Index elements_;
  std::size_t bytes_ = 0;
  T *data_ = nullptr;
};

/// One distributed matrix with its window, as this process sees it.
struct Matrix {
  Index m = 0, n = 0, mb = 1, nb = 1; // M_, N_, MB_, NB_
  int rsrc = 0, csrc = 0;
  int nprow = 1, npcol = 1;
  std::vector<int> ranks; // world rank at grid position pr + pc*nprow
  Index i = 1, j = 1;     // 1-based window start
  bool huge = false;
  // This process:
  standin_int ctxt = -1;
  int myrow = -1, mycol = -1;
  Index locr = 0, locc = 0, lld = 1;

  [[nodiscard]] bool member() const { return ctxt >= 0; }
  [[nodiscard]] Index elements() const { return member() ? lld * locc + (huge ? 0 : kGuard) : 0; }
  /// Local offset of global element (gi, gj) (0-based) on its owner; -1 elsewhere.
  [[nodiscard]] Index offset_here(Index gi, Index gj) const {
    if (!member() || ref_owner(gi, mb, nprow, rsrc) != myrow ||
        ref_owner(gj, nb, npcol, csrc) != mycol)
      return -1;
    return ref_local(gi, mb, nprow) + ref_local(gj, nb, npcol) * lld;
  }
  [[nodiscard]] std::array<redist_int, 9> descriptor() const {
    if (!member()) return {0, -1, 0, 0, 0, 0, 0, 0, 0}; // garbage but CTXT_ on non-members
    return {1, ctxt, m, n, mb, nb, rsrc, csrc, lld};
  }
  [[nodiscard]] std::string describe() const {
    std::string map;
    for (const int r : ranks)
      map += (map.empty() ? "" : ",") + std::to_string(r);
    return std::to_string(nprow) + "x" + std::to_string(npcol) + " {" + map +
           "} M_=" + std::to_string(m) + " N_=" + std::to_string(n) + " MB_=" + std::to_string(mb) +
           " NB_=" + std::to_string(nb) + " RSRC_=" + std::to_string(rsrc) +
           " CSRC_=" + std::to_string(csrc) + " at (" + std::to_string(i) + "," +
           std::to_string(j) + ")";
  }
};

Index numroc(Index extent, Index block, int p, int src, int nprocs) {
  return redist::BlockCyclic{extent, block, nprocs, src}.local_extent(p);
}

/// A grid of `count` random processes, random shape, random placement; contexts created.
void random_grid(Random &rng, Matrix &x) {
  std::vector<int> pool(static_cast<std::size_t>(world_size));
  for (int r = 0; r < world_size; ++r)
    pool[static_cast<std::size_t>(r)] = r;
  const int count = rng.chance(70) ? world_size : rng.uniform_int(1, world_size);
  std::vector<int> divisors;
  for (int d = 1; d <= count; ++d)
    if (count % d == 0) divisors.push_back(d);
  x.nprow =
      divisors[static_cast<std::size_t>(rng.uniform_int(0, static_cast<int>(divisors.size()) - 1))];
  x.npcol = count / x.nprow;
  for (std::size_t k = pool.size(); k > 1; --k)
    std::swap(pool[k - 1],
              pool[static_cast<std::size_t>(rng.uniform(0, static_cast<Index>(k) - 1))]);
  x.ranks.assign(pool.begin(), pool.begin() + count);
  std::vector<standin_int> map(x.ranks.begin(), x.ranks.end());
  standin_gridmap(&x.ctxt, map.data(), x.nprow, x.nprow, x.npcol);
  x.myrow = x.mycol = -1;
  for (int pc = 0; pc < x.npcol; ++pc)
    for (int pr = 0; pr < x.nprow; ++pr)
      if (x.ranks[static_cast<std::size_t>(pr) +
                  static_cast<std::size_t>(pc) * static_cast<std::size_t>(x.nprow)] == world_rank) {
        x.myrow = pr;
        x.mycol = pc;
      }
}

/// This process's local rows and columns, and LLD_ = local rows + pad.
void local_sizes(Matrix &x, Index pad) {
  if (!x.member()) return;
  x.locr = numroc(x.m, x.mb, x.myrow, x.rsrc, x.nprow);
  x.locc = numroc(x.n, x.nb, x.mycol, x.csrc, x.npcol);
  x.lld = std::max<Index>(1, x.locr) + pad;
}

/// Sizes, blocks, sources and window start for an m x n window; lld for this process.
void random_layout(Random &rng, Matrix &x, Index wm, Index wn) {
  const bool tall = rng.chance(50);
  const auto extent = [&](Index w, bool big) {
    return big ? rng.uniform(k2to31 + 1, k2to33) : w + rng.uniform(0, x.huge ? 5 : 30);
  };
  const auto block = [&](bool big) {
    if (!x.huge) return rng.uniform(1, 12);
    if (!big) return rng.uniform(1, 4);
    return rng.chance(50) ? rng.uniform(1, 64) : rng.uniform(k2to31, k2to33 + 5);
  };
  x.m = extent(wm, x.huge && tall);
  x.n = extent(wn, x.huge && !tall);
  x.mb = block(x.huge && tall);
  x.nb = block(x.huge && !tall);
  x.rsrc = rng.uniform_int(0, x.nprow - 1);
  x.csrc = rng.uniform_int(0, x.npcol - 1);
  // Huge: mostly near the end (offsets past 2^31), sometimes anywhere.
  const auto start = [&](Index extent_, Index w) {
    const Index last = extent_ - w + 1;
    if (x.huge && rng.chance(75)) return rng.uniform(std::max<Index>(1, last - 1000), last);
    return rng.uniform(1, last);
  };
  x.i = start(x.m, wm);
  x.j = start(x.n, wn);
  local_sizes(x, rng.uniform(0, 3));
}

enum class Routine { pdgemr2d, Cpdgemr2d, pdtrmr2d, pstrmr2d, pigemr2d };
const char *const kRoutineName[] = {"PDGEMR2D", "Cpdgemr2d", "PDTRMR2D", "PSTRMR2D", "PIGEMR2D"};

/// The integer arguments exactly as passed.
struct Arguments {
  redist_int m, n, ia, ja, ib, jb, ictxt;
  std::array<redist_int, 9> desca, descb;
};

struct Call {
  Routine routine = Routine::pdgemr2d;
  Index m = 0, n = 0;
  char uplo = 'U', diag = 'N';
  Matrix a, b;
  standin_int ictxt = -1;
  std::function<void(Arguments &)> spoil; ///< bad values, applied on every process
  const char *schedule = "";              ///< REDIST_SCHEDULE ("": unset, automatic)
  [[nodiscard]] Region::Kind region() const {
    if (routine != Routine::pdtrmr2d && routine != Routine::pstrmr2d) return Region::Kind::full;
    return uplo == 'U' ? Region::Kind::upper : Region::Kind::lower;
  }
  [[nodiscard]] bool copied(Index wi, Index wj) const {
    return reference_copied(region(), region() != Region::Kind::full && diag == 'U', wi, wj, m, n);
  }
  [[nodiscard]] std::string describe() const {
    std::string s = std::string(kRoutineName[static_cast<int>(routine)]) + " " + std::to_string(m) +
                    "x" + std::to_string(n);
    if (region() != Region::Kind::full) s += std::string(" uplo ") + uplo + " diag " + diag;
    if (*schedule != '\0') s += std::string(" REDIST_SCHEDULE=") + schedule;
    return s + "; A " + a.describe() + "; B " + b.describe();
  }
};

template <class T> T code(Index wi, Index wj, Index m) {
  const Index value = 1 + wi + wj * m;
  return static_cast<T>(value);
}
template <class T> T sentinel(Index p) {
  return static_cast<T>(-1 - p);
}

template <class T> void invoke(Call &c, T *a, T *b) {
  Arguments x{c.m, c.n, c.a.i, c.a.j, c.b.i, c.b.j, c.ictxt, c.a.descriptor(), c.b.descriptor()};
  if (c.spoil) c.spoil(x);
  if (*c.schedule != '\0')
    setenv("REDIST_SCHEDULE", c.schedule, 1);
  else
    unsetenv("REDIST_SCHEDULE");
  redist_scalapack_clear_cache(); // the entries read the environment again at their next call
  if constexpr (std::is_same_v<T, double>) {
    if (c.routine == Routine::pdgemr2d)
      redist_pdgemr2d_(&x.m, &x.n, a, &x.ia, &x.ja, x.desca.data(), b, &x.ib, &x.jb, x.descb.data(),
                       &x.ictxt);
    else if (c.routine == Routine::Cpdgemr2d)
      redist_Cpdgemr2d(x.m, x.n, a, x.ia, x.ja, x.desca.data(), b, x.ib, x.jb, x.descb.data(),
                       x.ictxt);
    else
      redist_pdtrmr2d_(&c.uplo, &c.diag, &x.m, &x.n, a, &x.ia, &x.ja, x.desca.data(), b, &x.ib,
                       &x.jb, x.descb.data(), &x.ictxt);
  } else if constexpr (std::is_same_v<T, float>) {
    redist_pstrmr2d_(&c.uplo, &c.diag, &x.m, &x.n, a, &x.ia, &x.ja, x.desca.data(), b, &x.ib, &x.jb,
                     x.descb.data(), &x.ictxt);
  } else {
    redist_pigemr2d_(&x.m, &x.n, a, &x.ia, &x.ja, x.desca.data(), b, &x.ib, &x.jb, x.descb.data(),
                     &x.ictxt);
  }
}

/// Run one call and check B on this process. `expect_error`: the call must be refused on
/// every process and leave B alone.
template <class T> void run(Call &c, const std::string &where, bool expect_error = false) {
  LocalArray<T> a(c.a.elements());
  LocalArray<T> b(c.b.elements());
  if (!c.a.huge) {
    for (Index p = 0; p < a.size(); ++p)
      a[p] = static_cast<T>(-1000 - p); // never copied: only window elements are
  }
  if (!c.b.huge) {
    for (Index p = 0; p < b.size(); ++p)
      b[p] = sentinel<T>(p);
  }
  // Window elements: A's values where this process owns them; B's expected values.
  std::map<Index, T> expected;
  for (Index wj = 0; wj < c.n; ++wj) {
    for (Index wi = 0; wi < c.m; ++wi) {
      const Index pa = c.a.offset_here(c.a.i - 1 + wi, c.a.j - 1 + wj);
      if (pa >= 0) a[pa] = code<T>(wi, wj, c.m);
      const Index pb = c.b.offset_here(c.b.i - 1 + wi, c.b.j - 1 + wj);
      if (pb >= 0 && c.copied(wi, wj) && !expect_error) expected[pb] = code<T>(wi, wj, c.m);
    }
  }
  invoke(c, a.data(), b.data());
  const int status = redist_scalapack_last_status();
  ++checks;
  if (expect_error != (status != 0)) {
    fail(where, std::string(expect_error ? "expected an error" : "expected success") +
                    ", got status " + std::to_string(status) + "; " + c.describe());
  }
  // The positions to compare: all of a small B; around the window in a huge one.
  std::vector<Index> positions;
  if (!c.b.huge) {
    for (Index p = 0; p < b.size(); ++p)
      positions.push_back(p);
  } else if (c.b.member()) {
    std::map<Index, std::pair<Index, Index>> rows_by_column;
    for (const auto &[p, value] : expected) {
      auto [it, fresh] = rows_by_column.try_emplace(p / c.b.lld, p % c.b.lld, p % c.b.lld);
      it->second.first = std::min(it->second.first, p % c.b.lld);
      it->second.second = std::max(it->second.second, p % c.b.lld);
    }
    for (const auto &[column, rows] : rows_by_column) {
      for (Index lc = std::max<Index>(0, column - 1); lc <= std::min(c.b.locc - 1, column + 1);
           ++lc) {
        for (Index lr = std::max<Index>(0, rows.first - 3);
             lr <= std::min(c.b.lld - 1, rows.second + 3); ++lr)
          positions.push_back(lr + lc * c.b.lld);
      }
    }
  }
  Index wrong = 0;
  std::string first;
  for (const Index p : positions) {
    const auto it = expected.find(p);
    const T want = it != expected.end() ? it->second : c.b.huge ? T{0} : sentinel<T>(p);
    using Bytes = std::array<unsigned char, sizeof(T)>;
    if (std::bit_cast<Bytes>(want) != std::bit_cast<Bytes>(b[p])) {
      if (wrong == 0) {
        first = "B[" + std::to_string(p) + "] = " + std::to_string(b[p]) + ", expected " +
                std::to_string(want);
      }
      ++wrong;
    }
  }
  ++checks;
  if (wrong > 0)
    fail(where,
         std::to_string(wrong) + " elements of B wrong, first " + first + "; " + c.describe());
}

void free_grids(Call &c) {
  for (Matrix *x : {&c.a, &c.b}) {
    if (x->member()) standin_gridexit(x->ctxt);
  }
}

Call random_call(Random &rng, standin_int ictxt, int index) {
  Call c;
  c.ictxt = ictxt;
  c.routine = static_cast<Routine>(rng.uniform_int(0, 4));
  c.uplo = rng.chance(50) ? 'U' : 'L';
  c.diag = rng.chance(50) ? 'U' : 'N';
  c.a.huge = index % 3 == 1 || (index % 3 == 2 && rng.chance(50));
  c.b.huge = index % 3 == 2 || (index % 3 == 1 && rng.chance(50));
  const bool huge = c.a.huge || c.b.huge;
  c.m = rng.uniform(huge ? 1 : 0, huge ? 8 : 14);
  c.n = rng.uniform(huge ? 1 : 0, huge ? 8 : 14);
  // Huge matrices are not given to the automatic choice: it may take two phases through an
  // intermediate array as long as the matrix (docs/reliability.md, ILP64).
  static const char *const kSchedules[] = {"all-at-once", "caterpillar", "stepwise", "",
                                           "multiphase"};
  c.schedule = kSchedules[rng.uniform_int(0, huge ? 2 : 4)];
  random_grid(rng, c.a);
  random_grid(rng, c.b);
  random_layout(rng, c.a, c.m, c.n);
  random_layout(rng, c.b, c.m, c.n);
  return c;
}

void random_cases(int cases, std::uint64_t seed, int &huge_cases) {
  Random rng(seed);
  standin_int ictxt = -1;
  standin_gridinit(&ictxt, 'R', 1, world_size);
  for (int k = 0; k < cases; ++k) {
    Call c = random_call(rng, ictxt, k);
    const std::string where = "case " + std::to_string(k);
    huge_cases += c.a.huge || c.b.huge ? 1 : 0;
    switch (c.routine) {
    case Routine::pstrmr2d:
      run<float>(c, where);
      break;
    case Routine::pigemr2d:
      run<redist_int>(c, where);
      break;
    default:
      run<double>(c, where);
    }
    free_grids(c);
  }
  standin_gridexit(ictxt);
}

/// A small PDGEMR2D, A and B on a P x 1 grid; `change` alters the call (its integer arguments
/// through Call::spoil); `refuse`: it must fail on every process, B untouched.
void fixed_case(const std::string &label, bool refuse, const std::function<void(Call &)> &change) {
  Random rng(7);
  Call c;
  standin_gridinit(&c.ictxt, 'R', 1, world_size);
  c.m = 5;
  c.n = 4;
  for (Matrix *x : {&c.a, &c.b}) {
    standin_gridinit(&x->ctxt, 'C', world_size, 1);
    x->nprow = world_size;
    x->npcol = 1;
    for (int r = 0; r < world_size; ++r)
      x->ranks.push_back(r);
    x->myrow = world_rank;
    x->mycol = 0;
    random_layout(rng, *x, c.m, c.n);
  }
  change(c);
  run<double>(c, label, refuse);
  free_grids(c);
  standin_gridexit(c.ictxt);
}

void fixed_cases() {
  // Values that a 32-bit truncation would turn into valid ones.
  fixed_case("DESCA(RSRC_) = 2^32", true,
             [](Call &c) { c.spoil = [](Arguments &x) { x.desca[6] = k2to32; }; });
  fixed_case("DESCB(CTXT_) = its handle + 2^32", true,
             [](Call &c) { c.spoil = [](Arguments &x) { x.descb[1] += k2to32; }; });
  fixed_case("M = 2^32 + 5", true, [](Call &c) { c.spoil = [](Arguments &x) { x.m += k2to32; }; });
  fixed_case("IB = 2^32 + IB", true,
             [](Call &c) { c.spoil = [](Arguments &x) { x.ib += k2to32; }; });
  // Values the agreement cannot carry exactly (doubles): refused, not garbled.
  fixed_case("DESCA(MB_) = 2^53", true,
             [](Call &c) { c.spoil = [](Arguments &x) { x.desca[4] = Index{1} << 53; }; });
  fixed_case("JA = 2^53", true,
             [](Call &c) { c.spoil = [](Arguments &x) { x.ja = Index{1} << 53; }; });
  // The largest block accepted: one block holds A's rows; the copy must be right.
  fixed_case("DESCA(MB_) = 2^53 - 1", false, [](Call &c) {
    c.a.mb = (Index{1} << 53) - 1;
    local_sizes(c.a, 1);
  });
}

} // namespace

int main(int argc, char **argv) {
  MPI_Init(&argc, &argv);
  MPI_Comm_rank(MPI_COMM_WORLD, &world_rank);
  MPI_Comm_size(MPI_COMM_WORLD, &world_size);
  int cases = 60;
  for (int k = 1; k < argc; ++k) {
    if (std::strncmp(argv[k], "--cases=", 8) == 0) cases = std::atoi(argv[k] + 8);
  }
  const std::uint64_t seed = redist::test::test_seed(64064);
  int huge_cases = 0;
  random_cases(cases, seed, huge_cases);
  fixed_cases();
  ++checks;
  if (standin_live_system_handles() != 0)
    fail("system handles",
         std::to_string(standin_live_system_handles()) + " BLACS system handles never freed");

  long long total = 0;
  MPI_Allreduce(&failures, &total, 1, MPI_LONG_LONG, MPI_SUM, MPI_COMM_WORLD);
  if (world_rank == 0) {
    std::printf("redist_ilp64_tests: np %d, %d cases (%d with extents, blocks or offsets past "
                "2^31), %lld checks on rank 0, %lld failures\n",
                world_size, cases, huge_cases, checks, total);
    if (total == 0) std::printf("PASS\n");
  }
  MPI_Finalize();
  return total == 0 ? 0 : 1;
}
