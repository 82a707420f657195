#include "nd_layout.hpp"

#include <algorithm>
#include <limits>

namespace redist {

int DimDistribution::owner(Index g) const {
  if (!gen_block) {
    return cyclic.owner(g);
  }
  // the last process whose first index is <= g (processes holding zero indices are skipped)
  const auto it = std::upper_bound(bounds.begin(), bounds.end() - 1, g);
  return static_cast<int>(it - bounds.begin()) - 1;
}

Index DimDistribution::local_index(Index g) const {
  return gen_block ? g - bounds[static_cast<std::size_t>(owner(g))] : cyclic.local_index(g);
}

Index DimDistribution::local_extent(int p) const {
  if (!gen_block) {
    return cyclic.local_extent(p);
  }
  const auto c = static_cast<std::size_t>(p);
  return bounds[c + 1] - bounds[c];
}

DimDistribution resolve(const NdDimension &d) {
  DimDistribution out;
  switch (d.kind) {
  case Distribution::gen_block:
    out.gen_block = true;
    out.bounds.assign(1, 0);
    for (const Index e : d.gen_block) {
      out.bounds.push_back(out.bounds.back() + e);
    }
    return out;
  case Distribution::none:
    out.cyclic = {d.extent, std::max<Index>(1, d.extent), 1, 0};
    return out;
  case Distribution::block: {
    const Index block = d.darg == kDefaultDistArg ? (d.extent + d.nprocs - 1) / d.nprocs : d.darg;
    out.cyclic = {d.extent, std::max<Index>(1, block), d.nprocs, d.first_process};
    return out;
  }
  case Distribution::cyclic:
    out.cyclic = {d.extent, d.darg == kDefaultDistArg ? 1 : d.darg, d.nprocs, d.first_process};
    return out;
  }
  return out;
}

DimDistribution resolve(const BlockCyclic &d) {
  DimDistribution out;
  out.cyclic = d;
  return out;
}

std::size_t GridView::positions() const {
  std::size_t n = 1;
  for (int d = 0; d < ndims; ++d) {
    n *= static_cast<std::size_t>(extents[static_cast<std::size_t>(d)]);
  }
  return n;
}

std::size_t GridView::position(const Coords &c) const {
  std::size_t pos = 0;
  for (int i = 0; i < ndims; ++i) {
    const auto d = static_cast<std::size_t>(first_fastest ? ndims - 1 - i : i);
    pos = pos * static_cast<std::size_t>(extents[d]) + static_cast<std::size_t>(c[d]);
  }
  return pos;
}

int GridView::rank_at(const Coords &c) const {
  const std::size_t pos = position(c);
  return ranks == nullptr ? static_cast<int>(pos) : ranks[pos];
}

bool GridView::find(int rank, Coords &c) const {
  const std::size_t n = positions();
  std::size_t pos = n;
  if (ranks == nullptr) {
    pos = rank >= 0 ? static_cast<std::size_t>(rank) : n;
  } else {
    pos = static_cast<std::size_t>(std::find(ranks, ranks + n, rank) - ranks);
  }
  if (pos >= n) {
    return false;
  }
  c = coords(pos);
  return true;
}

Coords GridView::coords(std::size_t pos) const {
  Coords c{};
  for (int i = ndims - 1; i >= 0; --i) {
    const auto d = static_cast<std::size_t>(first_fastest ? ndims - 1 - i : i);
    const auto e = static_cast<std::size_t>(extents[d]);
    c[d] = static_cast<int>(pos % e);
    pos /= e;
  }
  return c;
}

GridView grid_of(const NdLayout &l) {
  GridView g;
  g.ndims = l.ndims();
  for (int d = 0; d < g.ndims; ++d) {
    g.extents[static_cast<std::size_t>(d)] = l.dims[static_cast<std::size_t>(d)].nprocs;
  }
  g.ranks = l.ranks.empty() ? nullptr : l.ranks.data();
  return g;
}

GridView grid_of(const Grid &grid) {
  GridView g;
  g.ndims = 2;
  g.extents[0] = grid.nprow;
  g.extents[1] = grid.npcol;
  g.ranks = grid.ranks.data();
  g.first_fastest = true;
  return g;
}

Strides local_strides(int ndims, const Index *extents, StorageOrder order) {
  Strides s{};
  Index stride = 1;
  for (int i = 0; i < ndims; ++i) {
    const auto d = static_cast<std::size_t>(order == StorageOrder::c ? ndims - 1 - i : i);
    s[d] = stride;
    stride *= std::max<Index>(1, extents[d]);
  }
  return s;
}

std::vector<Index> local_counts(const NdLayout &l, const Coords &c) {
  std::vector<Index> counts;
  counts.reserve(static_cast<std::size_t>(l.ndims()));
  for (int d = 0; d < l.ndims(); ++d) {
    counts.push_back(
        resolve(l.dims[static_cast<std::size_t>(d)]).local_extent(c[static_cast<std::size_t>(d)]));
  }
  return counts;
}

Strides local_strides(const NdLayout &l, const Coords &c) {
  const std::vector<Index> extents = l.local_extents.empty() ? local_counts(l, c) : l.local_extents;
  return local_strides(l.ndims(), extents.data(), l.order);
}

namespace {

std::string field(const char *name, int d) {
  return std::string(name) + "[" + std::to_string(d) + "]: ";
}

constexpr Index kIndexMax = std::numeric_limits<Index>::max();

std::string check_dimension(const NdDimension &dim, int d) {
  if (dim.extent < 0) return field("gsizes", d) + "must be >= 0";
  if (dim.nprocs < 1) return field("psizes", d) + "must be >= 1";
  switch (dim.kind) {
  case Distribution::none:
    if (dim.nprocs != 1) {
      return field("psizes", d) + "must be 1 for a dimension distributed as NONE, not " +
             std::to_string(dim.nprocs);
    }
    return {};
  case Distribution::gen_block: {
    if (static_cast<Index>(dim.gen_block.size()) != dim.nprocs) {
      return field("gen_blocks", d) + "needs psizes[" + std::to_string(d) +
             "] = " + std::to_string(dim.nprocs) + " extents, got " +
             std::to_string(dim.gen_block.size());
    }
    Index sum = 0;
    for (std::size_t c = 0; c < dim.gen_block.size(); ++c) {
      const Index e = dim.gen_block[c];
      if (e < 0) {
        return field("gen_blocks", d) + "extent " + std::to_string(e) + " of process " +
               std::to_string(c) + " is negative";
      }
      if (e > dim.extent - sum) {
        return field("gen_blocks", d) + "extents sum to more than gsizes[" + std::to_string(d) +
               "] = " + std::to_string(dim.extent);
      }
      sum += e;
    }
    if (sum != dim.extent) {
      return field("gen_blocks", d) + "extents sum to " + std::to_string(sum) + ", not gsizes[" +
             std::to_string(d) + "] = " + std::to_string(dim.extent);
    }
    return {};
  }
  case Distribution::block:
  case Distribution::cyclic:
    break;
  }
  if (dim.kind != Distribution::block && dim.kind != Distribution::cyclic) {
    return field("distribs", d) + "must be BLOCK, CYCLIC, NONE or GEN_BLOCK";
  }
  if (dim.darg != kDefaultDistArg && dim.darg < 1) {
    return field("dargs", d) + "must be >= 1 or the default (DFLT_DARG), not " +
           std::to_string(dim.darg);
  }
  if (dim.first_process < 0 || dim.first_process >= dim.nprocs) {
    return field("first_process", d) + "must be in [0, psizes[" + std::to_string(d) + "])";
  }
  const Index block = resolve(dim).cyclic.block;
  if (block > kIndexMax / dim.nprocs) {
    return field("dargs", d) + "block size times psizes must be below 2^63";
  }
  if (dim.kind == Distribution::block && block * dim.nprocs < dim.extent) {
    return field("dargs", d) + "BLOCK needs dargs * psizes >= gsizes (" + std::to_string(block) +
           " * " + std::to_string(dim.nprocs) + " < " + std::to_string(dim.extent) + ")";
  }
  return {};
}

} // namespace

std::string check_nd_layout(const NdLayout &l, int comm_size, int rank) {
  const int n = l.ndims();
  if (n < 1 || n > kMaxDims) {
    return "ndims: must be in [1, " + std::to_string(kMaxDims) + "], not " + std::to_string(n);
  }
  Index positions = 1;
  for (int d = 0; d < n; ++d) {
    const NdDimension &dim = l.dims[static_cast<std::size_t>(d)];
    if (std::string why = check_dimension(dim, d); !why.empty()) {
      return why;
    }
    if (dim.nprocs > comm_size / positions) {
      return field("psizes", d) + "the grid has more positions than the " +
             std::to_string(comm_size) + " ranks of the communicator";
    }
    positions *= dim.nprocs;
  }
  if (!l.ranks.empty()) {
    if (static_cast<Index>(l.ranks.size()) != positions) {
      return "ranks: needs " + std::to_string(positions) +
             " entries (the product of psizes), got " + std::to_string(l.ranks.size());
    }
    std::vector<bool> seen(static_cast<std::size_t>(comm_size), false);
    for (std::size_t p = 0; p < l.ranks.size(); ++p) {
      const int r = l.ranks[p];
      if (r < 0 || r >= comm_size) {
        return "ranks[" + std::to_string(p) + "]: rank " + std::to_string(r) + " is not in [0, " +
               std::to_string(comm_size) + ")";
      }
      if (seen[static_cast<std::size_t>(r)]) {
        return "ranks[" + std::to_string(p) + "]: rank " + std::to_string(r) +
               " is at two grid positions";
      }
      seen[static_cast<std::size_t>(r)] = true;
    }
  }
  if (l.order != StorageOrder::c && l.order != StorageOrder::fortran) {
    return "order: must be C or Fortran";
  }
  for (const auto *v : {&l.starts, &l.subsizes, &l.local_extents}) {
    if (!v->empty() && static_cast<int>(v->size()) != n) {
      const char *name = v == &l.starts     ? "starts"
                         : v == &l.subsizes ? "subsizes"
                                            : "local_extents";
      return std::string(name) + ": needs ndims = " + std::to_string(n) + " entries, got " +
             std::to_string(v->size());
    }
  }
  for (int d = 0; d < n; ++d) {
    const Index extent = l.dims[static_cast<std::size_t>(d)].extent;
    if (l.start(d) < 0) return field("starts", d) + "must be >= 0";
    if (l.window(d) < 0) return field("subsizes", d) + "must be >= 0";
    if (l.start(d) > extent - l.window(d)) {
      return field("starts", d) + "the window " + std::to_string(l.start(d)) + " + " +
             std::to_string(l.window(d)) + " ends past gsizes = " + std::to_string(extent);
    }
  }
  // This process's local array (local_extents, or dense: its local counts) must hold fewer
  // than 2^63 elements, so that its offsets are indices.
  Coords c{};
  if (rank >= 0 && grid_of(l).find(rank, c)) {
    const std::vector<Index> counts = local_counts(l, c);
    const bool dense = l.local_extents.empty();
    Index elements = 1;
    for (int d = 0; d < n; ++d) {
      const Index count = counts[static_cast<std::size_t>(d)];
      const Index e = dense ? count : l.local_extents[static_cast<std::size_t>(d)];
      if (e < count) {
        return field("local_extents", d) + std::to_string(e) + " is below this process's " +
               std::to_string(count) + " indices";
      }
      if (e > 0 && elements > kIndexMax / e) {
        return field(dense ? "gsizes" : "local_extents", d) +
               "the local array has 2^63 elements or more";
      }
      elements *= std::max<Index>(1, e);
    }
  }
  return {};
}

} // namespace redist
