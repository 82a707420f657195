#pragma once
// Shared machinery of the MPI tests: a random-number stream every rank draws identically,
// random process grids (BLACS_GRIDINIT 'R'/'C', BLACS_GRIDMAP with any rank order), random
// block-cyclic matrices with windows, and the element oracle.
//
// The oracle is independent of redist and of ScaLAPACK: element (gi, gj) of A holds a value
// that encodes (gi, gj) and a "salt"; every element of B's local buffer (including LLD padding
// rows and a guard zone after the array) starts as a sentinel that encodes its local position.
// After a copy, each element of B's buffer must hold exactly the value of the A element the
// definition of PxGEMR2D / PxTRMR2D maps to it, or its untouched sentinel.

#include <mpi.h>
#include <redist.h>

#include <array>
#include <complex>
#include <cstdint>
#include <cstring>
#include <random>
#include <string>
#include <vector>

namespace mpitest {

// ---------------------------------------------------------------------------------------------
// Process-wide options (set by the gtest main from the command line / environment).
struct Options {
  int cases = 100;         ///< --cases=N: random cases per random test
  bool seed_given = false; ///< --seed=S or REDIST_TEST_SEED=S
  std::uint64_t seed = 0;
  int only_case = -1;       ///< --case=K: run only case K (the others are drawn, not run)
  bool verbose = false;     ///< --verbose: print every case on rank 0
  bool clear_cache = false; ///< --clear-cache: redist_scalapack_clear_cache() after each case
};
Options &options();

int world_rank();
int world_size();

/// Print on rank 0 only (one fprintf + fflush).
void print0(const std::string &s);

/// 1 when `here` is true on any rank of MPI_COMM_WORLD, else 0. Collective.
int on_any_rank(bool here);

/// Seed for a test: --seed / REDIST_TEST_SEED if given, else `fallback`; rank 0's value is
/// broadcast so every rank draws the same cases. Rank 0 prints it with `test_name`.
std::uint64_t shared_seed(const char *test_name, std::uint64_t fallback);

/// Hang detector: arm it with a description before a collective piece of work (a case) and
/// disarm it afterwards. If it stays armed longer than REDIST_TEST_CASE_TIMEOUT seconds
/// (default 60), the process prints the description ("... appears to hang") and exits with
/// status 124, so a deadlock fails fast and names its case instead of running into the ctest
/// timeout silently.
void watchdog_arm(const std::string &what);
void watchdog_disarm();

// ---------------------------------------------------------------------------------------------
/// Deterministic random stream (same on every rank given the same seed). Uses only
/// std::mt19937_64's raw output, whose sequence the standard fixes.
class Rng {
public:
  explicit Rng(std::uint64_t seed) : eng_(seed) {}
  std::int64_t uniform(std::int64_t lo, std::int64_t hi); ///< inclusive
  bool coin(double p);
  template <class T> void shuffle(std::vector<T> &v) {
    for (std::size_t i = v.size(); i > 1; --i) {
      const auto j = static_cast<std::size_t>(uniform(0, static_cast<std::int64_t>(i) - 1));
      std::swap(v[i - 1], v[j]);
    }
  }
  template <class T> const T &pick(const std::vector<T> &v) {
    return v[static_cast<std::size_t>(uniform(0, static_cast<std::int64_t>(v.size()) - 1))];
  }

private:
  std::mt19937_64 eng_;
};

// ---------------------------------------------------------------------------------------------
// Grids.
enum class GridKind { InitRow, InitCol, Map };

struct GridSpec {
  GridKind kind = GridKind::Map;
  int nprow = 1, npcol = 1;
  std::vector<int> ranks; ///< world rank of position (pr, pc) at ranks[pr + pc*nprow]

  [[nodiscard]] int size() const { return nprow * npcol; }
  [[nodiscard]] bool find(int rank, int &pr, int &pc) const;
  [[nodiscard]] bool contains(int rank) const {
    int pr = 0, pc = 0;
    return find(rank, pr, pc);
  }
  [[nodiscard]] std::string describe() const;
};

/// A grid of `count` processes drawn from `pool` (world ranks). With `allow_init`, and when the
/// pool holds ranks 0..count-1, the grid may be a BLACS_GRIDINIT 'R' or 'C' grid (which takes
/// the first count processes); otherwise a BLACS_GRIDMAP grid with a random rank order.
GridSpec random_grid(Rng &rng, const std::vector<int> &pool, int count, bool allow_init);

/// Random factorization count = nprow * npcol.
void random_shape(Rng &rng, int count, int &nprow, int &npcol);

/// Create the BLACS context of `g` (collective over every world rank: Cblacs_get(-1, 0) then
/// Cblacs_gridinit / Cblacs_gridmap). Returns the handle (-1 on non-members). Checks that
/// BLACS placed this process where `g` says; on a mismatch appends to `error`.
int create_context(const GridSpec &g, std::string &error);
/// Cblacs_gridexit on members (ctxt >= 0).
void free_context(int ctxt);
/// Whether any test created a BLACS context (then main calls Cblacs_exit(1)).
bool blacs_used();

// ---------------------------------------------------------------------------------------------
// Block-cyclic arithmetic (0-based, independent of the library under test).
std::int64_t numroc(std::int64_t n, std::int64_t nb, int p, int src, int np);
std::int64_t local_to_global(std::int64_t l, std::int64_t nb, int p, int src, int np);

/// One dimension of an 11-integer (DTYPE_ = 2, BLOCK_CYCLIC_2D_INB) descriptor: the first
/// `first` indices (IMB_ / INB_, >= 1, any size, beyond the extent too) on process `src`, then
/// blocks of `block` (MB_ / NB_) round-robin from src + 1. Written from that definition,
/// global index -> (owner, local index), apart from the library and from numroc above.
struct FirstBlockDim {
  std::int64_t extent = 0, first = 1, block = 1;
  int src = 0, nprocs = 1;
  /// Block number of global index g (0: the first block).
  [[nodiscard]] std::int64_t block_of(std::int64_t g) const {
    return g < first ? 0 : 1 + (g - first) / block;
  }
  [[nodiscard]] int owner(std::int64_t g) const {
    return static_cast<int>((src + block_of(g)) % nprocs);
  }
  /// Local index of g on its owner: the blocks the owner holds before g's, then g's offset.
  [[nodiscard]] std::int64_t local(std::int64_t g) const {
    if (g < first) return g;
    const std::int64_t b = block_of(g), offset = (g - first) % block;
    const std::int64_t earlier = b / nprocs; // the owner's blocks before block b
    if (b % nprocs == 0) return first + (earlier - 1) * block + offset; // src: first block
    return earlier * block + offset;
  }
  /// Number of indices process p holds (counted).
  [[nodiscard]] std::int64_t count(int p) const {
    std::int64_t k = 0;
    for (std::int64_t g = 0; g < extent; ++g)
      k += owner(g) == p ? 1 : 0;
    return k;
  }
};

/// A random IMB_ / INB_ for blocks of `block` over `extent` indices: below the block, the
/// block, above it, or beyond the extent.
std::int64_t random_first_block(Rng &rng, std::int64_t block, std::int64_t extent);

/// One distributed matrix and its window's position.
struct MatSpec {
  GridSpec grid;
  std::int64_t mg = 0, ng = 0;         ///< M_, N_
  std::int64_t mb = 1, nb = 1;         ///< MB_, NB_
  int rsrc = 0, csrc = 0;              ///< RSRC_, CSRC_
  std::int64_t ia = 1, ja = 1;         ///< 1-based window start
  std::vector<std::int64_t> lld_extra; ///< per grid position: LLD - max(1, LOCr)

  [[nodiscard]] std::int64_t locr(int pr) const { return numroc(mg, mb, pr, rsrc, grid.nprow); }
  [[nodiscard]] std::int64_t locc(int pc) const { return numroc(ng, nb, pc, csrc, grid.npcol); }
  [[nodiscard]] std::int64_t lld(int pr, int pc) const;
  [[nodiscard]] std::string describe() const;
};

/// The C API's description of `s` (0-based window; `ranks` column-major in the plan's
/// communicator; `lld` is this process's local leading dimension).
redist_layout c_layout(const MatSpec &s, const int *ranks, std::int64_t lld);

/// Random matrix of `grid` holding an m x n window (block sizes from 1 to beyond the matrix,
/// source processes, offsets, LLD padding).
MatSpec random_matrix(Rng &rng, GridSpec grid, std::int64_t m, std::int64_t n);

/// Random window extent (0 now and then; tall, wide, square).
void random_window(Rng &rng, std::int64_t &m, std::int64_t &n);

// ---------------------------------------------------------------------------------------------
// Copy regions (PxTRMR2D convention, see SCALAPACK-SEMANTICS.md).
enum class Region { Full, Upper, Lower };
/// Is element (i, j) (0-based, inside the m x n window) copied?
bool in_region(Region r, bool unit_diag, std::int64_t m, std::int64_t n, std::int64_t i,
               std::int64_t j);
/// Number of copied elements of the m x n window.
std::int64_t region_count(Region r, bool unit_diag, std::int64_t m, std::int64_t n);

// ---------------------------------------------------------------------------------------------
// Element values. A "code" is a small signed integer; each element type turns it into a value
// exactly (floats hold integers below 2^24 exactly).
//   A element (gi, gj), salt s:      1 + gi + gj*M_ + s*CodeSaltStride          (> 0)
//   B buffer position p, salt s:   -(1 + p + s*CodeSaltStride)                   (< 0)
//   A buffer padding position p:   -(APaddingCode + p)  (never read by a correct copy)
// Matrices stay below CodeSaltStride elements, and float tests use salts <= 9.
constexpr std::int64_t CodeSaltStride = 1000000;
constexpr std::int64_t APaddingCode = 50000000;
constexpr std::int64_t GuardElems = 7; ///< guard elements after every local buffer

inline std::int64_t a_code(const MatSpec &a, std::int64_t gi, std::int64_t gj, int salt) {
  return 1 + gi + gj * a.mg + salt * CodeSaltStride;
}
inline std::int64_t sentinel_code(std::int64_t p, int salt) {
  return -(1 + p + salt * CodeSaltStride);
}

template <class T> struct Elem {
  static T make(std::int64_t code) { return static_cast<T>(code); }
};
template <class R> struct Elem<std::complex<R>> {
  static std::complex<R> make(std::int64_t code) {
    return {static_cast<R>(code), static_cast<R>(-static_cast<double>(code) - 0.5)};
  }
};

/// Local buffer of one matrix on this rank: lld*locc elements + guard (non-members: guard only).
struct LocalBuf {
  bool member = false;
  int pr = -1, pc = -1;
  std::int64_t locr = 0, locc = 0, lld = 1;
  std::int64_t elems = 0; ///< allocated elements (lld*locc + GuardElems)
};
LocalBuf local_buf(const MatSpec &s, int rank);

/// The ScaLAPACK descriptor of `s` on the process whose local buffer is `lb` (BLACS context
/// `ctxt`); outside the grid CTXT_ = -1 and valid-looking values elsewhere.
std::array<int, 9> descriptor(const MatSpec &s, int ctxt, const LocalBuf &lb);

/// Fill A's buffer: global-index codes in the array, padding codes elsewhere.
template <class T>
void fill_a(const MatSpec &a, const LocalBuf &lb, int salt, std::vector<T> &buf) {
  buf.assign(static_cast<std::size_t>(lb.elems), T{});
  for (std::int64_t p = 0; p < lb.elems; ++p) {
    std::int64_t code = -(APaddingCode + p);
    if (lb.member && p < lb.lld * lb.locc) {
      const std::int64_t li = p % lb.lld, lj = p / lb.lld;
      if (li < lb.locr) {
        const std::int64_t gi = local_to_global(li, a.mb, lb.pr, a.rsrc, a.grid.nprow);
        const std::int64_t gj = local_to_global(lj, a.nb, lb.pc, a.csrc, a.grid.npcol);
        code = a_code(a, gi, gj, salt);
      }
    }
    buf[static_cast<std::size_t>(p)] = Elem<T>::make(code);
  }
}

/// Fill B's buffer with sentinels.
template <class T> void fill_sentinel(const LocalBuf &lb, int salt, std::vector<T> &buf) {
  buf.assign(static_cast<std::size_t>(lb.elems), T{});
  for (std::int64_t p = 0; p < lb.elems; ++p)
    buf[static_cast<std::size_t>(p)] = Elem<T>::make(sentinel_code(p, salt));
}

/// What a copy must produce in B's buffer, element by element.
struct CopySpec {
  Region region = Region::Full;
  bool unit_diag = false;
  std::int64_t m = 0, n = 0;
  bool transposed = false; ///< B(i, j) <- A(j, i): A's window is n x m
};

/// The code expected at buffer position p of B after copying A (salt a_salt) into B whose
/// sentinels had salt b_salt (re-executing with other A data changes only a_salt).
std::int64_t expected_code(const CopySpec &c, const MatSpec &a, const MatSpec &b,
                           const LocalBuf &lb, std::int64_t p, int a_salt, int b_salt);

/// Compare B's buffer with the oracle. Returns the number of wrong elements; describes the
/// first `max_report` of them in `report`.
template <class T>
std::int64_t check_b(const CopySpec &c, const MatSpec &a, const MatSpec &b, const LocalBuf &lb,
                     const T *buf, int a_salt, int b_salt, std::string &report, int max_report = 4);

/// Number of elements of the copied region held by this rank in matrix s (0 for non-members).
std::int64_t owned_region_count(const CopySpec &c, const MatSpec &s, const LocalBuf &lb);

/// Code held by a value (its real part), and a readable meaning of a code for messages:
/// "A(gi,gj)" for an A value, "sentinel@p" for an untouched B element, "A-padding@p".
template <class T> std::int64_t code_of(const T &v) {
  return static_cast<std::int64_t>(v);
}
template <class R> std::int64_t code_of(const std::complex<R> &v) {
  return static_cast<std::int64_t>(v.real());
}
std::string describe_code(std::int64_t code, const MatSpec &a);

/// Render a value for messages.
std::string show(float v);
std::string show(double v);
std::string show(int v);
std::string show(long long v);
std::string show(long v);
std::string show(std::complex<float> v);
std::string show(std::complex<double> v);

template <class T>
std::int64_t check_b(const CopySpec &c, const MatSpec &a, const MatSpec &b, const LocalBuf &lb,
                     const T *buf, int a_salt, int b_salt, std::string &report, int max_report) {
  std::int64_t bad = 0;
  for (std::int64_t p = 0; p < lb.elems; ++p) {
    const T want = Elem<T>::make(expected_code(c, a, b, lb, p, a_salt, b_salt));
    if (std::memcmp(&want, &buf[p], sizeof(T)) != 0) {
      if (bad < max_report) {
        std::string where;
        if (lb.member && p < lb.lld * lb.locc) {
          const std::int64_t li = p % lb.lld, lj = p / lb.lld;
          where = "local (" + std::to_string(li) + "," + std::to_string(lj) + ")";
          if (li < lb.locr) {
            const std::int64_t gi = local_to_global(li, b.mb, lb.pr, b.rsrc, b.grid.nprow);
            const std::int64_t gj = local_to_global(lj, b.nb, lb.pc, b.csrc, b.grid.npcol);
            where += " = global (" + std::to_string(gi) + "," + std::to_string(gj) + ")";
          } else {
            where += " (LLD padding row)";
          }
        } else {
          where = lb.member ? "guard element " + std::to_string(p - lb.lld * lb.locc)
                            : "non-member buffer element " + std::to_string(p);
        }
        report += "    " + where + ": expected " + show(want) + " = " +
                  describe_code(code_of(want), a) + ", got " + show(buf[p]) + " = " +
                  describe_code(code_of(buf[p]), a) + "\n";
      }
      ++bad;
    }
  }
  return bad;
}

} // namespace mpitest
