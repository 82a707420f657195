// Block grids (make_grid_rank_plan), with each other and with 2-D block-cyclic layouts, against
// an oracle written apart from src/: every element of B's window is looked up by a linear scan
// of the splits (grids) or by dealing the blocks one by one (block-cyclic, first blocks
// included), its owners in the owner tables and its offsets in the placement tables or from
// the leading dimensions, for random layouts (empty blocks, one rank owning all, several blocks
// per rank, blocks outside the window, both storage orders, transposed). Every rank's plan must
// move exactly those elements, and sender and receiver must put the same element at each
// message position.
#include "block_grid.hpp"
#include "reference.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <string>
#include <utility>
#include <vector>

namespace redist::test {
namespace {

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
Index block_holding(const std::vector<Index> &splits, Index g) {
  for (std::size_t b = 0; b + 1 < splits.size(); ++b) {
    if (splits[b] <= g && g < splits[b + 1]) return static_cast<Index>(b);
  }
  ADD_FAILURE() << "no block holds " << g;
  return 0;
}

// Owner and local offset of global element (gi, gj).
std::pair<int, Index> locate(const FullGrid &f, Index gi, Index gj) {
  const Index r = block_holding(f.row_splits, gi);
  const Index c = block_holding(f.col_splits, gj);
  const LocalBlock &b = f.placed[f.at(r, c)];
  const Index lr = gi - f.row_splits[static_cast<std::size_t>(r)];
  const Index lc = gj - f.col_splits[static_cast<std::size_t>(c)];
  return {f.owner[f.at(r, c)], b.offset + (f.row_major ? lr * b.ld + lc : lr + lc * b.ld)};
}

std::vector<Index> random_splits(Random &rng, Index extent, int max_blocks) {
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

FullGrid random_grid(Random &rng, Index rows, Index cols, int comm_size) {
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

std::pair<int, Index> dealt(const BlockCyclic &d, Index g) {
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

std::pair<int, Index> locate(const CyclicSide &c, Index gi, Index gj) {
  const auto [pr, lr] = dealt(c.layout.rows, gi);
  const auto [pc, lc] = dealt(c.layout.cols, gj);
  const int rank = c.layout.grid.rank_at(pr, pc);
  const Index lld = c.lld[static_cast<std::size_t>(rank)];
  return {rank, c.layout.row_major ? lr * lld + lc : lr + lc * lld};
}

CyclicSide random_cyclic(Random &rng, Index rows, Index cols, int comm_size) {
  CyclicSide c;
  Grid &g = c.layout.grid;
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
Case random_case(Random &rng, int kind = 0) {
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

using Moves = std::map<std::pair<int, int>, std::vector<std::pair<Index, Index>>>;

Moves oracle(const Case &c) {
  Moves out;
  for (Index j = 0; j < c.n; ++j) {
    for (Index i = 0; i < c.m; ++i) {
      const auto [from, src] = c.transposed ? c.locate_a(c.a_i() + j, c.a_j() + i)
                                            : c.locate_a(c.a_i() + i, c.a_j() + j);
      const auto [to, dst] = c.locate_b(c.b_i() + i, c.b_j() + j);
      out[{from, to}].emplace_back(src, dst);
    }
  }
  for (auto &[pair, moves] : out)
    std::sort(moves.begin(), moves.end());
  return out;
}

// The offsets a message's tiles give by position, from the source side or the destination
// side; empty with a failure when the positions are not 0 .. elements-1 once each.
std::vector<Index> by_position(const GridMessage &m, bool source) {
  std::vector<Index> out(static_cast<std::size_t>(m.elements), -1);
  bool ok = true;
  m.for_each_tile([&](const Tile &t) {
    for (Index w = 0; w < t.width && ok; ++w) {
      for (Index e = 0; e < t.height && ok; ++e) {
        const Index p = t.position + e + w * t.position_width_step;
        if (p < 0 || p >= m.elements || out[static_cast<std::size_t>(p)] != -1) {
          ADD_FAILURE() << "position " << p << " of " << m.elements << " given twice or outside";
          ok = false;
          return;
        }
        out[static_cast<std::size_t>(p)] = source ? t.src + e * t.src_step + w * t.src_width_step
                                                  : t.dst + e * t.dst_step + w * t.dst_width_step;
      }
    }
  });
  return ok ? out : std::vector<Index>{};
}

GridTransfer transfer_of(const Case &c, const BlockGrid &a, const BlockGrid &b, int r) {
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

std::string run_case(const Case &c) {
  std::vector<BlockGrid> a_views;
  std::vector<BlockGrid> b_views;
  for (int r = 0; r < c.comm_size; ++r) {
    a_views.push_back(c.a.view(r));
    b_views.push_back(c.b.view(r));
  }
  std::map<std::pair<int, int>, std::vector<Index>> sent;
  std::map<std::pair<int, int>, std::vector<Index>> received;
  Moves planned;
  for (int r = 0; r < c.comm_size; ++r) {
    const GridTransfer t = transfer_of(c, a_views[static_cast<std::size_t>(r)],
                                       b_views[static_cast<std::size_t>(r)], r);
    if (std::string why = check_grid_transfer(t, r, c.comm_size); !why.empty()) {
      return "rank " + std::to_string(r) + " rejected a valid transfer: " + why;
    }
    const GridRankPlan plan = make_grid_rank_plan(t, r);
    Index last = -1;
    for (const GridMessage &m : plan.sends) {
      if (m.rank <= last || m.rank == r) return "sends not by increasing remote peer";
      last = m.rank;
      sent[{r, m.rank}] = by_position(m, true);
    }
    last = -1;
    for (const GridMessage &m : plan.recvs) {
      if (m.rank <= last || m.rank == r) return "receives not by increasing remote peer";
      last = m.rank;
      received[{m.rank, r}] = by_position(m, false);
    }
    if (plan.self.elements > 0) {
      const std::vector<Index> src = by_position(plan.self, true);
      const std::vector<Index> dst = by_position(plan.self, false);
      for (std::size_t p = 0; p < src.size(); ++p)
        planned[{r, r}].emplace_back(src[p], dst[p]);
    }
  }
  for (const auto &[pair, src] : sent) {
    const auto it = received.find(pair);
    if (it == received.end() || it->second.size() != src.size()) {
      return "message " + std::to_string(pair.first) + " -> " + std::to_string(pair.second) +
             ": receiver expects another size";
    }
    for (std::size_t p = 0; p < src.size(); ++p) {
      planned[pair].emplace_back(src[p], it->second[p]);
    }
  }
  if (sent.size() != received.size()) return "a receive without a send";
  for (auto &[pair, moves] : planned)
    std::sort(moves.begin(), moves.end());
  if (planned != oracle(c)) return "the planned moves differ from the oracle's";
  return {};
}

TEST(BlockGrid, RandomGridsMoveEveryElementOnceWithBothEndsAgreeing) {
  Random rng(test_seed(0xb10c));
  for (int trial = 0; trial < 3000; ++trial) {
    const Case c = random_case(rng);
    ASSERT_EQ(run_case(c), "") << "trial " << trial << " m=" << c.m << " n=" << c.n
                               << " transposed=" << c.transposed << " ranks=" << c.comm_size;
  }
}

TEST(BlockGrid, GridsAgainstBlockCyclicLayoutsEitherWay) {
  Random rng(test_seed(0xc7c1));
  for (int trial = 0; trial < 3000; ++trial) {
    const int kind = 1 + trial % 2;
    const Case c = random_case(rng, kind);
    ASSERT_EQ(run_case(c), "") << "trial " << trial << (kind == 1 ? " A" : " B")
                               << " block-cyclic m=" << c.m << " n=" << c.n
                               << " transposed=" << c.transposed << " ranks=" << c.comm_size;
  }
}

TEST(BlockGrid, AnElementCyclicSideCostsOnePeriodPerBlock) {
  // One 600 x 600 block of A on rank 0 into an element-cyclic B over 2 x 2 ranks: four parts
  // of one short period each, not a tile per element.
  BlockGrid a;
  a.row_splits = {0, 600};
  a.col_splits = {0, 600};
  a.owner = [](Index, Index) { return 0; };
  a.local = {{0, 0, 0, 600}};
  Layout b{{600, 1, 2, 0}, {600, 1, 2, 1}, Grid{2, 2, {0, 1, 2, 3}}, 0, 0};
  GridTransfer t{&a, nullptr, 600, 600, false};
  t.dst_cyclic = &b;
  t.dst_lld = 300;
  ASSERT_EQ(check_grid_transfer(t, 0, 4), "");
  const GridRankPlan plan = make_grid_rank_plan(t, 0);
  EXPECT_EQ(plan.sends.size(), 3U);
  EXPECT_EQ(plan.self.elements, 300 * 300);
  EXPECT_LT(plan.memory_bytes(), std::size_t{256} << 10);
  // The grid's owners must be ranks; B's window inside; this rank's leading dimension large
  // enough.
  a.owner = [](Index, Index) { return 4; };
  a.local.clear();
  EXPECT_NE(check_grid_transfer(t, 0, 4).find("a->owner: rank 4"), std::string::npos);
  t.dst_lld = 299;
  EXPECT_NE(check_grid_transfer(t, 0, 4).find("b->lld: 299"), std::string::npos);
}

TEST(BlockGrid, ACyclicSourceNeedsTheGridBlocksThisRankOwns) {
  Layout a{{4, 2, 1, 0}, {4, 2, 1, 0}, Grid{1, 1, {0}}, 0, 0};
  BlockGrid b;
  b.row_splits = {0, 4};
  b.col_splits = {0, 2, 4};
  b.owner = [](Index, Index c) { return static_cast<int>(c); };
  b.local = {{0, 0, 0, 4}};
  GridTransfer t{nullptr, &b, 4, 4, false};
  t.src_cyclic = &a;
  t.src_lld = 4;
  EXPECT_EQ(check_grid_transfer(t, 0, 2), "");
  b.owner = [](Index, Index) { return 0; }; // block (0, 1) is rank 0's too, but not listed
  EXPECT_NE(check_grid_transfer(t, 0, 2).find("b->local: block (0, 1)"), std::string::npos);
}

TEST(BlockGrid, OneBlockPerRankAgainstManySmallBlocks) {
  // A: one block per rank (a 1-D row split); B: 1 x 1 blocks dealt round-robin, row-major.
  Case c;
  c.comm_size = 3;
  c.a.row_splits = {0, 4, 4, 9};
  c.a.col_splits = {0, 5};
  c.a.owner = {2, 0, 1};
  c.a.placed = {{0, 0, 0, 4}, {1, 0, 0, 1}, {2, 0, 3, 6}};
  c.b.row_splits = {0, 1, 2, 3, 4, 5, 6, 7, 8, 9};
  c.b.col_splits = {0, 1, 2, 3, 4, 5};
  c.b.row_major = true;
  for (int k = 0; k < 45; ++k) {
    c.b.owner.push_back(k % 3);
    c.b.placed.push_back({k % 9, k / 9, k / 3, 1});
  }
  c.m = 9;
  c.n = 5;
  EXPECT_EQ(run_case(c), "");
  c.m = 3;
  c.n = 2;
  c.a.i = 3;
  c.a.j = 1;
  c.b.i = 5;
  EXPECT_EQ(run_case(c), "");
}

TEST(BlockGrid, PlanningAsksOnlyTheBlocksThatMeetTheRanksOwn) {
  // 4000 x 4000 blocks on each side; rank 0 owns four blocks of A and two of B. Planning it
  // must ask the owners of the few blocks met, not sweep the grids.
  const auto splits = [](Index blocks, Index size) {
    std::vector<Index> s;
    for (Index b = 0; b <= blocks; ++b)
      s.push_back(b * size);
    return s;
  };
  Index asked = 0;
  BlockGrid a;
  a.row_splits = splits(4000, 3);
  a.col_splits = splits(4000, 3);
  a.owner = [&asked](Index r, Index c) {
    ++asked;
    return r < 2 && c < 2 ? 0 : static_cast<int>(1 + (r + c) % 7);
  };
  for (Index r = 0; r < 2; ++r) {
    for (Index c = 0; c < 2; ++c)
      a.local.push_back({r, c, 9 * (r + 2 * c), 3});
  }
  BlockGrid b;
  b.row_splits = splits(4000, 3);
  b.col_splits = splits(6000, 2);
  b.row_major = true;
  b.owner = [&asked](Index r, Index c) {
    ++asked;
    return (r == 0 && c < 2) ? 0 : static_cast<int>(1 + (r * 3 + c) % 7);
  };
  b.local = {{0, 0, 0, 2}, {0, 1, 6, 2}};
  const GridTransfer t{&a, &b, 12000, 12000, false};
  ASSERT_EQ(check_grid_transfer(t, 0, 8), "");
  asked = 0;
  const GridRankPlan plan = make_grid_rank_plan(t, 0);
  auto tiles = static_cast<Index>(plan.self.tiles.size());
  for (const auto *side : {&plan.sends, &plan.recvs}) {
    for (const GridMessage &m : *side)
      tiles += static_cast<Index>(m.tiles.size());
  }
  EXPECT_EQ(
      plan.self.elements +
          [&] {
            Index sent = 0;
            for (const GridMessage &m : plan.sends)
              sent += m.elements;
            return sent;
          }(),
      36); // A's four 3 x 3 blocks
  EXPECT_LE(asked, tiles + 8);
  EXPECT_LT(plan.memory_bytes(), std::size_t{8} << 10);
}

TEST(BlockGrid, ChecksNameTheField) {
  FullGrid f;
  f.row_splits = {0, 2, 4};
  f.col_splits = {0, 3};
  f.owner = {0, 1};
  f.placed = {{0, 0, 0, 2}, {1, 0, 0, 2}};
  BlockGrid a = f.view(0);
  BlockGrid b = f.view(0);
  const GridTransfer t{&a, &b, 4, 3, false};
  EXPECT_EQ(check_grid_transfer(t, 0, 2), "");
  b.row_splits = {0, 3, 2, 4};
  EXPECT_NE(check_grid_transfer(t, 0, 2).find("b->row_splits[2]"), std::string::npos);
  b = f.view(0);
  b.local[0].ld = 1;
  EXPECT_NE(check_grid_transfer(t, 0, 2).find("b->local[0].ld"), std::string::npos);
  b = f.view(0);
  b.local.push_back({1, 0, 9, 2});
  EXPECT_NE(check_grid_transfer(t, 0, 2).find("owned by rank 1"), std::string::npos);
  b = f.view(0);
  b.local.clear();
  EXPECT_NE(check_grid_transfer(t, 0, 2).find("b->local: block (0, 0)"), std::string::npos);
  // One block of B on rank 0 meets both blocks of A, one of them rank 1's.
  FullGrid whole;
  whole.row_splits = {0, 4};
  whole.col_splits = {0, 3};
  whole.owner = {0};
  whole.placed = {{0, 0, 0, 4}};
  b = whole.view(0);
  EXPECT_EQ(check_grid_transfer(t, 0, 2), "");
  EXPECT_NE(check_grid_transfer(t, 0, 1).find("a->owner: block (1, 0) is owned by rank 1"),
            std::string::npos);
  b.j = 1;
  EXPECT_NE(check_grid_transfer(t, 0, 2).find("b->j"), std::string::npos);
}

} // namespace
} // namespace redist::test
