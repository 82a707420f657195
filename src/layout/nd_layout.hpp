#pragma once
// Layout layer: N-dimensional distributed arrays, rank 1 to 7, as pure index
// arithmetic (no MPI).
//
// The meaning is MPI_Type_create_darray's (MPI 4.0, Sec. 5.1.4 "Distributed Array Datatype
// Constructor"), extended by HPF's GEN_BLOCK and ScaLAPACK's first process:
//   BLOCK         block darg, or ceil(gsize / psize) for the default darg; a given darg must
//                 satisfy darg * psize >= gsize
//   CYCLIC(darg)  blocks of darg dealt round-robin; the default darg is 1
//   NONE ('*')    the whole dimension on one process; psize must be 1
//   GEN_BLOCK     process c holds the gen_block[c] consecutive indices after those of
//                 processes 0..c-1 (zeros allowed; they sum to gsize)
// BLOCK, CYCLIC and NONE are block-cyclic (BlockCyclic, layout.hpp): block darg, psize
// processes, first block on process first_process (0 in MPI; ScaLAPACK's RSRC).
// The process grid numbers its positions row-major (the last dimension varies fastest), as
// MPI_Type_create_darray and MPI_Cart_create do; ranks[position] is the communicator rank there.
// A process stores its elements as a dense array whose extent along dimension d is its count
// of owned indices there (padded to local_extents when given), in C or Fortran order; along each
// dimension its owned global indices keep their increasing order -- the local order of the
// darray type's typemap.

#include "layout.hpp"

#include <array>
#include <string>
#include <vector>

namespace redist {

constexpr int kMaxDims = 7;               ///< Fortran's limit on array rank
constexpr Index kDefaultDistArg = -1;     ///< MPI_DISTRIBUTE_DFLT_DARG
using Coords = std::array<int, kMaxDims>; ///< a grid position, one coordinate per dimension
using Strides = std::array<Index, kMaxDims>;

enum class Distribution { block, cyclic, none, gen_block };
enum class StorageOrder { c, fortran };

/// One dimension of an N-d layout, in MPI_Type_create_darray's terms.
struct NdDimension {
  Distribution kind = Distribution::none;
  Index extent = 0;             ///< gsizes[d]
  Index darg = kDefaultDistArg; ///< dargs[d], BLOCK and CYCLIC
  int nprocs = 1;               ///< psizes[d]
  std::vector<Index> gen_block; ///< GEN_BLOCK: one extent per process
  int first_process = 0;        ///< grid coordinate holding the first block (block-cyclic)
};

/// An N-d layout with the window being copied and this process's local storage.
struct NdLayout {
  std::vector<NdDimension> dims; ///< 1..kMaxDims dimensions
  std::vector<int> ranks;    ///< rank of each grid position, row-major; empty: position p is rank p
  std::vector<Index> starts; ///< window start per dimension; empty: all zero
  std::vector<Index> subsizes; ///< window extent per dimension; empty: the whole array
  StorageOrder order = StorageOrder::c;
  std::vector<Index> local_extents; ///< this process's allocated extents; empty: dense

  [[nodiscard]] int ndims() const { return static_cast<int>(dims.size()); }
  [[nodiscard]] Index start(int d) const {
    return starts.empty() ? 0 : starts[static_cast<std::size_t>(d)];
  }
  [[nodiscard]] Index window(int d) const {
    return subsizes.empty() ? dims[static_cast<std::size_t>(d)].extent
                            : subsizes[static_cast<std::size_t>(d)];
  }
};

/// One dimension resolved for index arithmetic: block-cyclic, or GEN_BLOCK with the first
/// global index of every process (bounds[c] .. bounds[c+1]-1 on process c).
struct DimDistribution {
  bool gen_block = false;
  BlockCyclic cyclic;        ///< when !gen_block
  std::vector<Index> bounds; ///< when gen_block: nprocs + 1 entries

  [[nodiscard]] int nprocs() const {
    return gen_block ? static_cast<int>(bounds.size()) - 1 : cyclic.nprocs;
  }
  [[nodiscard]] int owner(Index g) const;
  [[nodiscard]] Index local_index(Index g) const;
  [[nodiscard]] Index local_extent(int p) const;
};

/// The distribution of a (valid) dimension.
[[nodiscard]] DimDistribution resolve(const NdDimension &d);
/// A block-cyclic dimension as an N-d one (CYCLIC(block) from process src).
[[nodiscard]] DimDistribution resolve(const BlockCyclic &d);

/// A process grid: extents and the rank at each position, positions numbered row-major (as
/// darray), or column-major (first_fastest, as BLACS' 2-D grids).
struct GridView {
  int ndims = 0;
  std::array<int, kMaxDims> extents{};
  const int *ranks = nullptr; ///< nullptr: position p is rank p
  bool first_fastest = false;

  [[nodiscard]] std::size_t positions() const;
  [[nodiscard]] std::size_t position(const Coords &c) const;
  [[nodiscard]] int rank_at(const Coords &c) const;
  /// The grid position of `rank`, or false when it is not in the grid.
  bool find(int rank, Coords &c) const;
  /// The coordinates of position `pos` (< positions()).
  [[nodiscard]] Coords coords(std::size_t pos) const;
};
[[nodiscard]] GridView grid_of(const NdLayout &l);
[[nodiscard]] GridView grid_of(const Grid &g);

/// Element strides of a local array with these allocated extents, in storage order `order`.
[[nodiscard]] Strides local_strides(int ndims, const Index *extents, StorageOrder order);
/// This process's count of owned indices along each dimension (its dense local extents) at
/// grid position c.
[[nodiscard]] std::vector<Index> local_counts(const NdLayout &l, const Coords &c);
/// Strides of this process's local array, c being its grid position: its local_extents when
/// given, else its dense extents (local_counts). A peer's strides need the peer's extents
/// (local_strides(ndims, extents, order)); its dense ones are local_counts at its position.
[[nodiscard]] Strides local_strides(const NdLayout &l, const Coords &c);

/// Empty when the layout is valid for a communicator of comm_size ranks, else the first
/// problem, naming the field and the dimension ("dargs[1]: ..."). local_extents is checked
/// against `rank`'s own counts (rank < 0: not checked).
[[nodiscard]] std::string check_nd_layout(const NdLayout &l, int comm_size, int rank = -1);

} // namespace redist
