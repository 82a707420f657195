#pragma once
// Random block grids for the tests (test_block_grid.cpp, test_grid_exec.cpp): whole grids as
// the tests know them (splits, the owner and placement of every block), 2-D block-cyclic sides
// dealt block by block, and random transfers between them. Written apart from src/.
#include "block_grid.hpp"
#include "kinds_support.hpp"
#include "reference.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <utility>
#include <vector>

namespace redist::test::grids {

// A whole block grid as the test knows it: splits, the owner and placement of every block.
struct FullGrid {
  std::vector<Index> row_splits;
  std::vector<Index> col_splits;
  std::vector<int> owner;         // block (r, c) at r + c * block_rows
  std::vector<LocalBlock> placed; // likewise
  bool row_major = false;
  Index i = 0;
  Index j = 0;

  [[nodiscard]] std::size_t at(Index r, Index c) const {
    return static_cast<std::size_t>(r + c * (static_cast<Index>(row_splits.size()) - 1));
  }
  // This rank's view: its blocks only, owners asked through a function.
  [[nodiscard]] BlockGrid view(int rank) const {
    BlockGrid g;
    g.row_splits = row_splits;
    g.col_splits = col_splits;
    g.owner = [this](Index r, Index c) { return owner[at(r, c)]; };
    g.row_major = row_major;
    g.i = i;
    g.j = j;
    for (std::size_t k = 0; k < owner.size(); ++k) {
      if (owner[k] == rank) g.local.push_back(placed[k]);
    }
    return g;
  }
};

// The block of `splits` holding g, by a scan.
inline Index block_holding(const std::vector<Index> &splits, Index g) {
  for (std::size_t b = 0; b + 1 < splits.size(); ++b) {
    if (splits[b] <= g && g < splits[b + 1]) return static_cast<Index>(b);
  }
  ADD_FAILURE() << "no block holds " << g;
  return 0;
}

// Owner and local offset of global element (gi, gj).
inline std::pair<int, Index> locate(const FullGrid &f, Index gi, Index gj) {
  const Index r = block_holding(f.row_splits, gi);
  const Index c = block_holding(f.col_splits, gj);
  const LocalBlock &b = f.placed[f.at(r, c)];
  const Index lr = gi - f.row_splits[static_cast<std::size_t>(r)];
  const Index lc = gj - f.col_splits[static_cast<std::size_t>(c)];
  return {f.owner[f.at(r, c)], b.offset + (f.row_major ? lr * b.ld + lc : lr + lc * b.ld)};
}

inline std::vector<Index> random_splits(Random &rng, Index extent, int max_blocks) {
  const int blocks = rng.uniform_int(1, max_blocks);
  std::vector<Index> cuts;
  for (int b = 1; b < blocks; ++b)
    cuts.push_back(rng.uniform(0, extent)); // repeats: empty
  std::sort(cuts.begin(), cuts.end());
  std::vector<Index> splits{0};
  splits.insert(splits.end(), cuts.begin(), cuts.end());
  splits.push_back(extent);
  return splits;
}

inline FullGrid random_grid(Random &rng, Index rows, Index cols, int comm_size) {
  FullGrid f;
  f.row_splits = random_splits(rng, rows, 6);
  f.col_splits = random_splits(rng, cols, 6);
  f.row_major = rng.chance(50);
  const std::size_t blocks = (f.row_splits.size() - 1) * (f.col_splits.size() - 1);
  const int only = rng.chance(15) ? rng.uniform_int(0, comm_size - 1) : -1;
  for (std::size_t k = 0; k < blocks; ++k) {
    f.owner.push_back(only >= 0 ? only : rng.uniform_int(0, comm_size - 1));
  }
  // Each rank's blocks one after the other in its memory, in a random order, with gaps.
  f.placed.resize(blocks);
  std::vector<Index> used(static_cast<std::size_t>(comm_size), 0);
  std::vector<std::size_t> order(blocks);
  for (std::size_t k = 0; k < blocks; ++k)
    order[k] = k;
  for (std::size_t k = blocks; k > 1; --k) {
    std::swap(order[k - 1],
              order[static_cast<std::size_t>(rng.uniform(0, static_cast<Index>(k) - 1))]);
  }
  const auto block_rows = static_cast<Index>(f.row_splits.size()) - 1;
  for (const std::size_t k : order) {
    const Index r = static_cast<Index>(k) % block_rows;
    const Index c = static_cast<Index>(k) / block_rows;
    const Index height =
        f.row_splits[static_cast<std::size_t>(r) + 1] - f.row_splits[static_cast<std::size_t>(r)];
    const Index width =
        f.col_splits[static_cast<std::size_t>(c) + 1] - f.col_splits[static_cast<std::size_t>(c)];
    const Index along = f.row_major ? width : height;
    const Index across = f.row_major ? height : width;
    Index &top = used[static_cast<std::size_t>(f.owner[k])];
    top += rng.uniform(0, 3);
    const Index ld = std::max<Index>(1, along) + rng.uniform(0, 2);
    f.placed[k] = {r, c, top, ld};
    top += ld * across;
  }
  return f;
}

// A 2-D block-cyclic side: its layout and every rank's leading dimension. Owners and local
// indices are dealt block by block: the first block to the source process, then blocks of
// `block` round-robin (PBLAS's IMB_ / MB_).
struct CyclicSide {
  Layout layout;
  std::vector<Index> lld;
};

inline std::pair<int, Index> dealt(const BlockCyclic &d, Index g) {
  int process = d.src;
  Index left = d.first_block > 0 ? d.first_block : d.block;
  std::vector<Index> count(static_cast<std::size_t>(d.nprocs), 0);
  for (Index x = 0; x < g; ++x) {
    ++count[static_cast<std::size_t>(process)];
    if (--left == 0) {
      process = (process + 1) % d.nprocs;
      left = d.block;
    }
  }
  return {process, count[static_cast<std::size_t>(process)]};
}

inline std::pair<int, Index> locate(const CyclicSide &c, Index gi, Index gj) {
  const auto [pr, lr] = dealt(c.layout.rows, gi);
  const auto [pc, lc] = dealt(c.layout.cols, gj);
  const int rank = c.layout.grid.rank_at(pr, pc);
  const Index lld = c.lld[static_cast<std::size_t>(rank)];
  return {rank, c.layout.row_major ? lr * lld + lc : lr + lc * lld};
}

inline CyclicSide random_cyclic(Random &rng, Index rows, Index cols, int comm_size) {
  CyclicSide c;
  c.layout.grid = test::random_grid(rng, comm_size);
  const Grid &g = c.layout.grid;
  const auto dim = [&](Index extent, int nprocs) {
    BlockCyclic d{extent, rng.uniform(1, 5), nprocs, rng.uniform_int(0, nprocs - 1)};
    d.first_block = rng.chance(50) ? 0 : rng.uniform(1, 2 * d.block + 3);
    return d;
  };
  c.layout.rows = dim(rows, g.nprow);
  c.layout.cols = dim(cols, g.npcol);
  c.layout.row_major = rng.chance(50);
  c.lld.assign(static_cast<std::size_t>(comm_size), 1);
  for (int r = 0; r < comm_size; ++r) {
    int pr = 0;
    int pc = 0;
    if (g.find(r, pr, pc)) {
      const Index along =
          c.layout.row_major ? c.layout.cols.local_extent(pc) : c.layout.rows.local_extent(pr);
      c.lld[static_cast<std::size_t>(r)] = std::max<Index>(1, along) + rng.uniform(0, 2);
    }
  }
  return c;
}

// A and B: block grids, or one of them block-cyclic (a_cyclic / b_cyclic).
struct Case {
  FullGrid a;
  FullGrid b;
  bool a_cyclic = false;
  bool b_cyclic = false;
  CyclicSide ca;
  CyclicSide cb;
  Index m = 0;
  Index n = 0;
  bool transposed = false;
  int comm_size = 1;

  [[nodiscard]] std::pair<int, Index> locate_a(Index gi, Index gj) const {
    return a_cyclic ? locate(ca, gi, gj) : locate(a, gi, gj);
  }
  [[nodiscard]] std::pair<int, Index> locate_b(Index gi, Index gj) const {
    return b_cyclic ? locate(cb, gi, gj) : locate(b, gi, gj);
  }
  [[nodiscard]] Index a_i() const { return a_cyclic ? ca.layout.i : a.i; }
  [[nodiscard]] Index a_j() const { return a_cyclic ? ca.layout.j : a.j; }
  [[nodiscard]] Index b_i() const { return b_cyclic ? cb.layout.i : b.i; }
  [[nodiscard]] Index b_j() const { return b_cyclic ? cb.layout.j : b.j; }
};

// `kind`: 0 two grids, 1 A block-cyclic, 2 B block-cyclic.
inline Case random_case(Random &rng, int kind = 0) {
  Case c;
  c.comm_size = rng.uniform_int(1, 8);
  c.transposed = rng.chance(30);
  const Index b_rows = rng.uniform(1, 24);
  const Index b_cols = rng.uniform(1, 24);
  const Index a_rows = rng.uniform(1, 24);
  const Index a_cols = rng.uniform(1, 24);
  c.a = random_grid(rng, a_rows, a_cols, c.comm_size);
  c.b = random_grid(rng, b_rows, b_cols, c.comm_size);
  c.a_cyclic = kind == 1;
  c.b_cyclic = kind == 2;
  if (c.a_cyclic) c.ca = random_cyclic(rng, a_rows, a_cols, c.comm_size);
  if (c.b_cyclic) c.cb = random_cyclic(rng, b_rows, b_cols, c.comm_size);
  // B's window fits in both (A's is n x m when transposed)
  const Index max_m = std::min(b_rows, c.transposed ? a_cols : a_rows);
  const Index max_n = std::min(b_cols, c.transposed ? a_rows : a_cols);
  c.m = rng.chance(10) ? 0 : rng.uniform(0, max_m);
  c.n = rng.uniform(0, max_n);
  const Index am = c.transposed ? c.n : c.m;
  const Index an = c.transposed ? c.m : c.n;
  c.a.i = c.ca.layout.i = rng.uniform(0, a_rows - am);
  c.a.j = c.ca.layout.j = rng.uniform(0, a_cols - an);
  c.b.i = c.cb.layout.i = rng.uniform(0, b_rows - c.m);
  c.b.j = c.cb.layout.j = rng.uniform(0, b_cols - c.n);
  return c;
}

// Rank r's transfer of case c, its grids' views a and b.
inline GridTransfer grid_transfer_of(const Case &c, const BlockGrid &a, const BlockGrid &b, int r) {
  GridTransfer t{c.a_cyclic ? nullptr : &a, c.b_cyclic ? nullptr : &b, c.m, c.n, c.transposed};
  if (c.a_cyclic) {
    t.src_cyclic = &c.ca.layout;
    t.src_lld = c.ca.lld[static_cast<std::size_t>(r)];
  }
  if (c.b_cyclic) {
    t.dst_cyclic = &c.cb.layout;
    t.dst_lld = c.cb.lld[static_cast<std::size_t>(r)];
  }
  return t;
}

} // namespace redist::test::grids
