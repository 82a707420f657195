#pragma once
// An oracle for block-cyclic dimensions with a first block of its own size, written from
// PBLAS's definition apart from src/: the blocks are dealt one after the other -- the first
// (IMB elements) to the source process, then blocks of MB round-robin to the next processes --
// and every element's owner and local index are counted out by a scan of the whole dimension.
// And random 2-D transfers between such layouts, row-major ones too.

#include "layout.hpp"
#include "plan.hpp"
#include "reference.hpp"

#include <algorithm>
#include <utility>

#include <vector>

namespace redist::test {

struct DealtDimension {
  std::vector<int> owner;
  std::vector<Index> local;
  std::vector<Index> count; // elements per process
};

inline DealtDimension deal(Index extent, Index first, Index block, int nprocs, int src) {
  DealtDimension d;
  d.count.assign(static_cast<std::size_t>(nprocs), 0);
  int process = src;
  Index left_in_block = first;
  for (Index g = 0; g < extent; ++g) {
    if (left_in_block == 0) {
      process = (process + 1) % nprocs;
      left_in_block = block;
    }
    d.owner.push_back(process);
    d.local.push_back(d.count[static_cast<std::size_t>(process)]++);
    --left_in_block;
  }
  return d;
}

inline DealtDimension deal(const BlockCyclic &d) {
  return deal(d.extent, d.first_block > 0 ? d.first_block : d.block, d.block, d.nprocs, d.src);
}

inline BlockCyclic random_first_block_dimension(Random &rng, Index max_extent, Index max_block,
                                                int max_procs) {
  BlockCyclic d = random_dimension(rng, max_extent, max_block, max_procs);
  const int mode = rng.uniform_int(0, 9);
  // below, equal to and beyond the block; sometimes beyond the whole extent; sometimes 0 (the
  // 9-integer descriptor)
  d.first_block = mode == 0   ? 0
                  : mode == 1 ? d.block
                  : mode == 2 ? rng.uniform(d.extent, d.extent + 3) + 1
                              : rng.uniform(1, 3 * d.block + 2);
  return d;
}

inline Grid random_grid(Random &rng, int comm_size) {
  Grid g;
  g.nprow = rng.uniform_int(1, std::min(3, comm_size));
  g.npcol = rng.uniform_int(1, comm_size / g.nprow);
  std::vector<int> ranks(static_cast<std::size_t>(comm_size));
  for (int r = 0; r < comm_size; ++r)
    ranks[static_cast<std::size_t>(r)] = r;
  for (int r = comm_size - 1; r > 0; --r) {
    std::swap(ranks[static_cast<std::size_t>(r)],
              ranks[static_cast<std::size_t>(rng.uniform_int(0, r))]);
  }
  ranks.resize(static_cast<std::size_t>(g.nprow) * static_cast<std::size_t>(g.npcol));
  g.ranks = ranks;
  return g;
}

/// A random 2-D transfer between first-block layouts on comm_size ranks, some transposed, some
/// trapezoidal, row-major on either side when `row_major`; every rank's leading dimensions, at
/// or above its local extent along the contiguous axis.
struct KindsCase {
  Transfer t;
  int comm_size = 1;
  std::vector<Index> lld_src;
  std::vector<Index> lld_dst;
};

inline KindsCase random_kinds_case(Random &rng, bool row_major) {
  KindsCase c;
  c.comm_size = rng.uniform_int(1, 8);
  const int comm_size = c.comm_size;
  Transfer &t = c.t;
  t.src.grid = random_grid(rng, comm_size);
  t.dst.grid = random_grid(rng, comm_size);
  t.src.rows = random_first_block_dimension(rng, 30, 5, t.src.grid.nprow);
  t.src.cols = random_first_block_dimension(rng, 30, 5, t.src.grid.npcol);
  t.dst.rows = random_first_block_dimension(rng, 30, 5, t.dst.grid.nprow);
  t.dst.cols = random_first_block_dimension(rng, 30, 5, t.dst.grid.npcol);
  // random_dimension draws its own process count: take the grid's
  t.src.rows.nprocs = t.src.grid.nprow;
  t.src.cols.nprocs = t.src.grid.npcol;
  t.dst.rows.nprocs = t.dst.grid.nprow;
  t.dst.cols.nprocs = t.dst.grid.npcol;
  for (BlockCyclic *d : {&t.src.rows, &t.src.cols, &t.dst.rows, &t.dst.cols}) {
    d->src = rng.uniform_int(0, d->nprocs - 1);
  }
  if (row_major) {
    t.src.row_major = rng.chance(50);
    t.dst.row_major = rng.chance(50);
  }
  if (rng.chance(30)) t.perm = {1, 0};
  const BlockCyclic &a_rows = t.transposed() ? t.src.cols : t.src.rows;
  const BlockCyclic &a_cols = t.transposed() ? t.src.rows : t.src.cols;
  t.m = rng.uniform(0, std::min(a_rows.extent, t.dst.rows.extent));
  t.n = rng.uniform(0, std::min(a_cols.extent, t.dst.cols.extent));
  (t.transposed() ? t.src.j : t.src.i) = rng.uniform(0, a_rows.extent - t.m);
  (t.transposed() ? t.src.i : t.src.j) = rng.uniform(0, a_cols.extent - t.n);
  t.dst.i = rng.uniform(0, t.dst.rows.extent - t.m);
  t.dst.j = rng.uniform(0, t.dst.cols.extent - t.n);
  const int region = rng.uniform_int(0, 3);
  if (region > 0) {
    t.region.kind = region == 1 ? Region::Kind::upper : Region::Kind::lower;
    t.region.unit_diag = rng.chance(50);
    if (rng.chance(50)) t.region.diagonal = Region::Diagonal::top_left;
  }
  // Leading dimensions per rank, at or above the local extent along the contiguous axis.
  std::vector<Index> &lld_src = c.lld_src;
  std::vector<Index> &lld_dst = c.lld_dst;
  lld_src.assign(static_cast<std::size_t>(comm_size), 1);
  lld_dst.assign(static_cast<std::size_t>(comm_size), 1);
  for (int r = 0; r < comm_size; ++r) {
    int pr = 0;
    int pc = 0;
    for (auto [l, lld] : {std::pair{&t.src, &lld_src}, std::pair{&t.dst, &lld_dst}}) {
      if (l->grid.find(r, pr, pc)) {
        const Index along = l->row_major ? l->cols.local_extent(pc) : l->rows.local_extent(pr);
        (*lld)[static_cast<std::size_t>(r)] = std::max<Index>(1, along) + rng.uniform(0, 2);
      }
    }
  }
  return c;
}

} // namespace redist::test
