#pragma once
// The block grid test oracle shared by test_grid.cpp and test_grid_batch.cpp, written apart
// from src/: random block grids and 2-D block-cyclic sides as every process knows them, where
// each global element lives (owner and local offset, from the splits and placements or the
// block-cyclic formulas), and the values A holds and B starts with.

#include "harness.hpp"

#include <redist.h>

#include <algorithm>
#include <complex>
#include <cstdint>
#include <type_traits>
#include <utility>
#include <vector>

namespace gridtest {

using mpitest::FirstBlockDim;
using mpitest::random_first_block;
using mpitest::Rng;
using Complex = std::complex<double>;

// A whole block grid as every process knows it in this test.
struct Grid {
  std::vector<int64_t> row_splits, col_splits;
  std::vector<int> owners;                           // block (r, c) at r + c * block_rows
  std::vector<redist_grid_block> placed;             // likewise
  std::vector<std::vector<redist_grid_block>> local; // per rank
  std::vector<int64_t> size;                         // per rank: local array elements
  int row_major = 0;
  int64_t i = 0, j = 0;

  [[nodiscard]] int64_t block_rows() const { return static_cast<int64_t>(row_splits.size()) - 1; }
  [[nodiscard]] int64_t block_cols() const { return static_cast<int64_t>(col_splits.size()) - 1; }
  [[nodiscard]] redist_block_grid view(int rank) const {
    redist_block_grid g{};
    g.m = row_splits.back();
    g.n = col_splits.back();
    g.block_rows = block_rows();
    g.block_cols = block_cols();
    g.row_splits = row_splits.data();
    g.col_splits = col_splits.data();
    g.owners = owners.data();
    g.row_major = row_major;
    const auto &mine = local[static_cast<std::size_t>(rank)];
    g.local_count = static_cast<int64_t>(mine.size());
    g.local = mine.empty() ? nullptr : mine.data();
    g.i = i;
    g.j = j;
    return g;
  }
};

inline std::vector<int64_t> random_splits(Rng &rng, int64_t extent) {
  const auto blocks = rng.uniform(1, 6);
  std::vector<int64_t> cuts;
  for (int64_t b = 1; b < blocks; ++b)
    cuts.push_back(rng.uniform(0, extent)); // repeated cuts: empty blocks
  std::sort(cuts.begin(), cuts.end());
  std::vector<int64_t> splits{0};
  splits.insert(splits.end(), cuts.begin(), cuts.end());
  splits.push_back(extent);
  return splits;
}

inline Grid random_grid(Rng &rng, int64_t rows, int64_t cols, int size) {
  Grid g;
  g.row_splits = random_splits(rng, rows);
  g.col_splits = random_splits(rng, cols);
  g.row_major = rng.coin(0.5) ? 1 : 0;
  const auto blocks = static_cast<std::size_t>(g.block_rows() * g.block_cols());
  const int only = rng.coin(0.15) ? static_cast<int>(rng.uniform(0, size - 1)) : -1;
  for (std::size_t k = 0; k < blocks; ++k)
    g.owners.push_back(only >= 0 ? only : static_cast<int>(rng.uniform(0, size - 1)));
  // Each rank's blocks one after another in a random order, with gaps and padded lds.
  std::vector<std::size_t> order(blocks);
  for (std::size_t k = 0; k < blocks; ++k)
    order[k] = k;
  rng.shuffle(order);
  g.placed.resize(blocks);
  g.local.resize(static_cast<std::size_t>(size));
  g.size.assign(static_cast<std::size_t>(size), 1);
  for (const std::size_t k : order) {
    const auto r = static_cast<int64_t>(k) % g.block_rows();
    const auto c = static_cast<int64_t>(k) / g.block_rows();
    const int64_t height =
        g.row_splits[static_cast<std::size_t>(r) + 1] - g.row_splits[static_cast<std::size_t>(r)];
    const int64_t width =
        g.col_splits[static_cast<std::size_t>(c) + 1] - g.col_splits[static_cast<std::size_t>(c)];
    const int64_t along = g.row_major != 0 ? width : height;
    const int64_t across = g.row_major != 0 ? height : width;
    const auto owner = static_cast<std::size_t>(g.owners[k]);
    const int64_t offset = g.size[owner] + rng.uniform(0, 3);
    const int64_t ld = std::max<int64_t>(1, along) + rng.uniform(0, 2);
    g.placed[k] = {r, c, offset, ld};
    g.local[owner].push_back(g.placed[k]);
    g.size[owner] = offset + ld * across;
  }
  for (auto &mine : g.local)
    rng.shuffle(mine);
  return g;
}

inline int64_t block_holding(const std::vector<int64_t> &splits, int64_t x) {
  for (std::size_t b = 0; b + 1 < splits.size(); ++b) {
    if (splits[b] <= x && x < splits[b + 1]) return static_cast<int64_t>(b);
  }
  return -1;
}

// A 2-D block-cyclic side (first blocks of any size, either local order) and every rank's lld.
struct Cyclic {
  redist_layout_ext l{};
  std::vector<int> ranks;
  std::vector<int64_t> lld, size;

  [[nodiscard]] FirstBlockDim rows() const {
    return {l.layout.m, l.imb > 0 ? l.imb : l.layout.mb, l.layout.mb, l.layout.rsrc,
            l.layout.nprow};
  }
  [[nodiscard]] FirstBlockDim cols() const {
    return {l.layout.n, l.inb > 0 ? l.inb : l.layout.nb, l.layout.nb, l.layout.csrc,
            l.layout.npcol};
  }
};

inline Cyclic random_cyclic(Rng &rng, int64_t rows, int64_t cols, int size) {
  Cyclic c;
  int nprow = static_cast<int>(rng.uniform(1, std::min(3, size)));
  int npcol = static_cast<int>(rng.uniform(1, size / nprow));
  std::vector<int> pool(static_cast<std::size_t>(size));
  for (int r = 0; r < size; ++r)
    pool[static_cast<std::size_t>(r)] = r;
  rng.shuffle(pool);
  c.ranks.assign(pool.begin(), pool.begin() + nprow * npcol);
  redist_layout &l = c.l.layout;
  l = {rows,
       cols,
       rng.uniform(1, 5),
       rng.uniform(1, 5),
       nprow,
       npcol,
       static_cast<int>(rng.uniform(0, nprow - 1)),
       static_cast<int>(rng.uniform(0, npcol - 1)),
       nullptr,
       0,
       0,
       1};
  // Half the sides with first blocks of their own (0: the block size), half row-major.
  c.l.imb = rng.coin(0.5) ? random_first_block(rng, l.mb, rows) : 0;
  c.l.inb = rng.coin(0.5) ? random_first_block(rng, l.nb, cols) : 0;
  c.l.order = rng.coin(0.5) ? REDIST_ORDER_ROW_MAJOR : REDIST_ORDER_COLUMN_MAJOR;
  c.lld.assign(static_cast<std::size_t>(size), 1);
  c.size.assign(static_cast<std::size_t>(size), 1);
  for (int pr = 0; pr < nprow; ++pr) {
    for (int pc = 0; pc < npcol; ++pc) {
      const auto r = static_cast<std::size_t>(c.ranks[static_cast<std::size_t>(pr + pc * nprow)]);
      const int64_t lr = c.rows().count(pr);
      const int64_t lc = c.cols().count(pc);
      const bool row_major = c.l.order == REDIST_ORDER_ROW_MAJOR;
      c.lld[r] = std::max<int64_t>(1, row_major ? lc : lr) + rng.uniform(0, 2);
      c.size[r] = std::max<int64_t>(1, c.lld[r] * (row_major ? lr : lc));
    }
  }
  return c;
}

// One side: a grid or a block-cyclic layout.
struct Side {
  bool is_grid = true;
  Grid grid;
  Cyclic cyclic;

  [[nodiscard]] int64_t wi() const { return is_grid ? grid.i : cyclic.l.layout.i; }
  [[nodiscard]] int64_t wj() const { return is_grid ? grid.j : cyclic.l.layout.j; }
  [[nodiscard]] int64_t size(int rank) const {
    return (is_grid ? grid.size : cyclic.size)[static_cast<std::size_t>(rank)];
  }
  // The owner and local offset of global element (gi, gj).
  [[nodiscard]] std::pair<int, int64_t> locate(int64_t gi, int64_t gj) const {
    if (is_grid) {
      const int64_t r = block_holding(grid.row_splits, gi);
      const int64_t c = block_holding(grid.col_splits, gj);
      const auto k = static_cast<std::size_t>(r + c * grid.block_rows());
      const redist_grid_block &b = grid.placed[k];
      const int64_t lr = gi - grid.row_splits[static_cast<std::size_t>(r)];
      const int64_t lc = gj - grid.col_splits[static_cast<std::size_t>(c)];
      return {grid.owners[k], b.offset + (grid.row_major != 0 ? lr * b.ld + lc : lr + lc * b.ld)};
    }
    const FirstBlockDim rows = cyclic.rows();
    const FirstBlockDim cols = cyclic.cols();
    const int pr = rows.owner(gi);
    const int pc = cols.owner(gj);
    const int64_t lr = rows.local(gi);
    const int64_t lc = cols.local(gj);
    const int rank = cyclic.ranks[static_cast<std::size_t>(pr + pc * cyclic.l.layout.nprow)];
    const int64_t lld = cyclic.lld[static_cast<std::size_t>(rank)];
    return {rank, cyclic.l.order == REDIST_ORDER_ROW_MAJOR ? lr * lld + lc : lr + lc * lld};
  }
  // This rank's view for the C API (`storage` keeps what it points to).
  [[nodiscard]] redist_any_layout view(int rank, redist_block_grid &g, redist_layout_ext &l) const {
    redist_any_layout out{};
    if (is_grid) {
      g = grid.view(rank);
      out.kind = REDIST_LAYOUT_BLOCK_GRID;
      out.grid = &g;
    } else {
      l = cyclic.l;
      l.layout.ranks = cyclic.ranks.data();
      l.layout.lld = cyclic.lld[static_cast<std::size_t>(rank)];
      out.kind = REDIST_LAYOUT_BLOCK_CYCLIC;
      out.cyclic = &l;
    }
    return out;
  }
};

inline Side random_side(Rng &rng, bool grid, int64_t rows, int64_t cols, int size) {
  Side s;
  s.is_grid = grid;
  if (grid) {
    s.grid = random_grid(rng, rows, cols, size);
  } else {
    s.cyclic = random_cyclic(rng, rows, cols, size);
  }
  return s;
}

// A fixed 6 x 5 grid of 2 x 2 blocks (rows cut at 3, columns at 2), block k owned by rank
// k % size (every block rank 0's when `one_owner`), each rank's blocks one after another.
inline Grid fixed_grid(int size, bool one_owner) {
  Grid g;
  g.row_splits = {0, 3, 6};
  g.col_splits = {0, 2, 5};
  g.local.resize(static_cast<std::size_t>(size));
  g.size.assign(static_cast<std::size_t>(size), 1);
  for (int64_t k = 0; k < 4; ++k) {
    const int owner = one_owner ? 0 : static_cast<int>(k % size);
    const int64_t r = k % 2, c = k / 2;
    g.owners.push_back(owner);
    int64_t &top = g.size[static_cast<std::size_t>(owner)];
    g.placed.push_back({r, c, top, 3});
    g.local[static_cast<std::size_t>(owner)].push_back(g.placed.back());
    top += 3 * (c == 0 ? 2 : 3);
  }
  return g;
}

template <class T> T a_value(int64_t gi, int64_t gj) {
  if constexpr (std::is_same_v<T, Complex>) {
    return {static_cast<double>(gi * 64 + gj + 1), static_cast<double>(gj - gi)};
  } else {
    return static_cast<T>(gi * 64 + gj + 1);
  }
}
template <class T> T sentinel(int rank, int64_t k) {
  return T(static_cast<double>(-(k + 1) - 10000 * rank));
}

} // namespace gridtest
