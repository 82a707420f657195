#pragma once
// Layout layer (docs/architecture.md): block-cyclic layouts as pure index arithmetic (no MPI).
//
// Index vocabulary (all 0-based, all 64-bit):
//   global index g   position in the whole matrix dimension, 0 <= g < extent
//   window index k   position inside the copied window, g = window_start + k
//   local index l    position in the owning process's local array
// Conversions: owner(g), local_index(g) below; g -> k by subtracting the window start.

#include <algorithm>
#include <cstdint>
#include <utility>
#include <vector>

namespace redist {

using Index = std::int64_t;

/// a mod m in [0, m), for m >= 1 and any sign of a.
[[nodiscard]] inline Index floor_mod(Index a, Index m) {
  const Index r = a % m;
  return r < 0 ? r + m : r;
}

/// The inverse of a modulo m for gcd(a, m) = 1 (extended Euclid); 0 when m == 1.
[[nodiscard]] inline Index mod_inverse(Index a, Index m) {
  Index old_r = floor_mod(a, m);
  Index r = m;
  Index old_s = 1;
  Index s = 0;
  while (r != 0) {
    const Index q = old_r / r;
    old_r = std::exchange(r, old_r - q * r);
    old_s = std::exchange(s, old_s - q * s);
  }
  return floor_mod(old_s, m);
}

/// NUMROC: elements process p holds of `extent` elements dealt in blocks of `block` from
/// process src over nprocs processes.
[[nodiscard]] inline Index uniform_local_extent(Index extent, Index block, int nprocs, int src,
                                                int p) {
  const Index dist = (p - src + nprocs) % nprocs;
  const Index blocks = extent / block;
  Index count = (blocks / nprocs) * block;
  const Index extra = blocks % nprocs;
  if (dist < extra) {
    count += block;
  } else if (dist == extra) {
    count += extent % block;
  }
  return count;
}

/// One dimension of a block-cyclic distribution (ScaLAPACK's M_/MB_/nprow/RSRC_, and PBLAS's
/// IMB_ for the 11-integer descriptor): the first block holds first() elements on process src,
/// the following blocks of `block` elements go round-robin from process src + 1 (PBLAS
/// PB_Cnumroc, PB_Cinfog2l). first_block may be below, equal to or above block.
struct BlockCyclic {
  Index extent = 0;      ///< global extent of the dimension
  Index block = 1;       ///< block size, >= 1
  int nprocs = 1;        ///< processes along this dimension, >= 1
  int src = 0;           ///< process owning the first block, 0 <= src < nprocs
  Index first_block = 0; ///< size of the first block (IMB_ / INB_); 0: `block`

  [[nodiscard]] Index first() const { return first_block > 0 ? first_block : block; }
  /// Every block of the same size (ScaLAPACK's 9-integer descriptors).
  [[nodiscard]] bool uniform() const { return first() == block; }

  [[nodiscard]] int owner(Index g) const {
    if (uniform()) {
      return static_cast<int>((g / block + src) % nprocs);
    }
    return g < first() ? src : static_cast<int>(((g - first()) / block + src + 1) % nprocs);
  }
  [[nodiscard]] Index local_index(Index g) const {
    if (uniform()) {
      return (g / (block * nprocs)) * block + g % block;
    }
    if (g < first()) {
      return g;
    }
    const Index after_first = g - first();
    const Index own_first = owner(g) == src ? first() : 0;
    return own_first + (after_first / (block * nprocs)) * block + after_first % block;
  }
  /// Number of elements process p holds (ScaLAPACK NUMROC; PBLAS PB_Cnumroc with I = 0).
  [[nodiscard]] Index local_extent(int p) const {
    if (uniform()) {
      return uniform_local_extent(extent, block, nprocs, src, p);
    }
    const Index in_first = std::min(extent, first());
    const Index after_first =
        uniform_local_extent(extent - in_first, block, nprocs, (src + 1) % nprocs, p);
    return (p == src ? in_first : 0) + after_first;
  }
  /// Length of one period of the owner pattern of a uniform dimension: nprocs*block, or 1 when
  /// one process owns all (then local index == global index, so any period works).
  [[nodiscard]] Index period() const { return nprocs == 1 ? 1 : block * nprocs; }
};

/// The process grid of a 2-D layout: grid position (pr, pc) is process ranks[pr + pc*nprow]
/// of the communicator (column-major, as BLACS_GRIDMAP's usermap).
struct Grid {
  int nprow = 1;
  int npcol = 1;
  std::vector<int> ranks;

  [[nodiscard]] int rank_at(int pr, int pc) const {
    return ranks[static_cast<std::size_t>(pr) + static_cast<std::size_t>(pc) * nprow];
  }
  /// Grid position of a communicator rank, or false when the rank is not in the grid.
  bool find(int rank, int &pr, int &pc) const;
};

/// A 2-D block-cyclic layout with the window being copied.
struct Layout {
  BlockCyclic rows;
  BlockCyclic cols;
  Grid grid;
  Index i = 0;            ///< window's first global row
  Index j = 0;            ///< window's first global column
  bool row_major = false; ///< local element (r, c) at r * lld + c instead of r + c * lld

  /// Dimension `axis` (0: rows, 1: columns), its window start, and the grid position of a
  /// process along it.
  [[nodiscard]] const BlockCyclic &dim(int axis) const { return axis == 0 ? rows : cols; }
  [[nodiscard]] Index start(int axis) const { return axis == 0 ? i : j; }
  [[nodiscard]] int grid_extent(int axis) const { return axis == 0 ? grid.nprow : grid.npcol; }
};

/// The same layout of the transposed matrix: rows and columns, window corner and grid
/// swapped, the other local order (a row-major local array is the column-major array of its
/// transpose with the same leading dimension).
[[nodiscard]] Layout transposed_layout(const Layout &l);

/// Which elements of the m x n window are copied; always stated on B's (the destination's)
/// window, also when A is transposed (PBLAS PxTRADD's UPLO refers to sub(C)).
struct Region {
  enum class Kind { full, upper, lower };
  /// Where the diagonal of a non-square window runs. trmr2d: through the bottom-right corner of
  /// a tall upper or a wide lower trapezoid (pdtrmr2d), unlike LAPACK's xLACPY. top_left:
  /// through the top-left corner, upper i <= j and lower i >= j whatever the shape (PBLAS
  /// PB_Cptradd, LAPACK).
  enum class Diagonal { trmr2d, top_left };
  Kind kind = Kind::full;
  bool unit_diag = false; ///< the diagonal is not copied
  Diagonal diagonal = Diagonal::trmr2d;

  /// Half-open range [first, last) of window rows copied in window column j of an m x n
  /// window.
  [[nodiscard]] std::pair<Index, Index> rows_in_column(Index j, Index m, Index n) const {
    const Index diag = unit_diag ? 0 : 1;
    const bool trmr2d = diagonal == Diagonal::trmr2d;
    switch (kind) {
    case Kind::upper:
      return {0, std::min((trmr2d ? std::max(m - n, Index{0}) : 0) + j + diag, m)};
    case Kind::lower:
      return {
          std::min(std::max(Index{0}, j - (trmr2d ? std::max(n - m, Index{0}) : 0) + 1 - diag), m),
          m};
    case Kind::full:
      break;
    }
    return {0, m};
  }
};

} // namespace redist
