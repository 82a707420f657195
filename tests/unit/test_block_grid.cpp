// Block grids (make_grid_rank_plan), with each other and with 2-D block-cyclic layouts, against
// an oracle written apart from src/: every element of B's window is looked up by a linear scan
// of the splits (grids) or by dealing the blocks one by one (block-cyclic, first blocks
// included), its owners in the owner tables and its offsets in the placement tables or from
// the leading dimensions, for random layouts (empty blocks, one rank owning all, several blocks
// per rank, blocks outside the window, both storage orders, transposed). Every rank's plan must
// move exactly those elements, and sender and receiver must put the same element at each
// message position.
#include "grid_support.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <array>
#include <map>
#include <string>
#include <utility>
#include <vector>

namespace redist::test::grids {
namespace {

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
    const GridTransfer t = grid_transfer_of(c, a_views[static_cast<std::size_t>(r)],
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

// A message's tiles, their columns taken in turn, run through positions 0 .. elements-1 in
// order (a receiver reads a message from its sender's array so), and have the same shapes at
// both ends (the receiver matches the sender's offsets to its own tiles by them).
std::string tile_order_case(const Case &c) {
  std::map<std::pair<int, int>, std::vector<std::array<Index, 3>>> shapes[2]; // sends, receives
  for (int r = 0; r < c.comm_size; ++r) {
    const BlockGrid a = c.a.view(r);
    const BlockGrid b = c.b.view(r);
    const GridRankPlan plan = make_grid_rank_plan(grid_transfer_of(c, a, b, r), r);
    for (const bool sending : {true, false}) {
      for (const GridMessage &m : sending ? plan.sends : plan.recvs) {
        auto &shape =
            shapes[sending ? 0 : 1][sending ? std::pair{r, m.rank} : std::pair{m.rank, r}];
        Index next = 0;
        std::string wrong;
        m.for_each_tile([&](const Tile &t) {
          shape.push_back({t.position, t.height, t.width});
          for (Index w = 0; w < t.width; ++w) {
            if (t.position + w * t.position_width_step != next && wrong.empty()) {
              wrong = "column at position " +
                      std::to_string(t.position + w * t.position_width_step) + ", expected " +
                      std::to_string(next);
            }
            next += t.height;
          }
        });
        if (wrong.empty() && next != m.elements) wrong = "not every position read";
        if (!wrong.empty()) {
          return "rank " + std::to_string(r) + (sending ? " send to " : " receive from ") +
                 std::to_string(m.rank) + ": " + wrong;
        }
      }
    }
  }
  return shapes[0] == shapes[1] ? "" : "the two ends read their messages in other shapes";
}

TEST(BlockGrid, TilesRunThroughTheMessageInOrderAtBothEnds) {
  Random rng(test_seed(0x4ead));
  for (int trial = 0; trial < 3000; ++trial) {
    const Case c = random_case(rng, trial % 3); // two grids, A or B block-cyclic
    ASSERT_EQ(tile_order_case(c), "") << "trial " << trial << " m=" << c.m << " n=" << c.n
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

// check_local_placement against marking every element of every block: random placements of a
// rank's blocks, often packed into one local matrix (one leading dimension, interleaved
// columns), sometimes with offsets drawn close together so that blocks meet.
TEST(BlockGridPlacement, FindsExactlyTheBlocksThatShareElements) {
  Random rng(test_seed(31));
  int meetings = 0;
  for (int iter = 0; iter < 3000; ++iter) {
    FullGrid f = random_grid(rng, rng.uniform(1, 12), rng.uniform(1, 12), 1);
    const bool one_matrix = rng.chance(50);
    const Index rows = f.row_splits.back();
    const Index cols = f.col_splits.back();
    const Index matrix_ld = (f.row_major ? cols : rows) + rng.uniform(0, 2);
    for (LocalBlock &b : f.placed) {
      const auto r = static_cast<std::size_t>(b.block_row);
      const auto c = static_cast<std::size_t>(b.block_col);
      const Index height = f.row_splits[r + 1] - f.row_splits[r];
      const Index width = f.col_splits[c + 1] - f.col_splits[c];
      if (one_matrix) { // the block where it is in the whole matrix, sometimes shifted
        b.ld = matrix_ld;
        b.offset = f.row_major ? f.row_splits[r] * matrix_ld + f.col_splits[c]
                               : f.row_splits[r] + f.col_splits[c] * matrix_ld;
        if (rng.chance(5)) b.offset += rng.uniform(0, 3);
      } else {
        b.ld = std::max<Index>(1, f.row_major ? width : height) + rng.uniform(0, 3);
        b.offset = rng.uniform(0, 60);
      }
    }
    const BlockGrid g = f.view(0);
    std::vector<int> owner_of;
    bool meet = false;
    for (std::size_t k = 0; k < g.local.size(); ++k) {
      const LocalBlock &b = g.local[k];
      const auto r = static_cast<std::size_t>(b.block_row);
      const auto c = static_cast<std::size_t>(b.block_col);
      const Index height = f.row_splits[r + 1] - f.row_splits[r];
      const Index width = f.col_splits[c + 1] - f.col_splits[c];
      for (Index i = 0; i < height; ++i) {
        for (Index j = 0; j < width; ++j) {
          const auto at =
              static_cast<std::size_t>(b.offset + (f.row_major ? i * b.ld + j : i + j * b.ld));
          if (owner_of.size() <= at) owner_of.resize(at + 1, -1);
          meet = meet || owner_of[at] != -1;
          owner_of[at] = static_cast<int>(k);
        }
      }
    }
    meetings += meet ? 1 : 0;
    const std::string why = check_local_placement(g, 8, "a->");
    ASSERT_EQ(why.empty(), !meet) << "case " << iter << ": " << why;
  }
  EXPECT_GT(meetings, 100);
  EXPECT_LT(meetings, 2900);
}

TEST(BlockGridPlacement, RefusesBlocksBeyond2To63Bytes) {
  BlockGrid g;
  g.row_splits = {0, 4};
  g.col_splits = {0, 3};
  g.owner = [](Index, Index) { return 0; };
  g.local = {{0, 0, INT64_MAX / 8 - 10, 4}};
  EXPECT_NE(check_local_placement(g, 8, "b->").find("b->local[0].offset"), std::string::npos);
  g.local[0].offset = INT64_MAX / 8 - 12;
  EXPECT_EQ(check_local_placement(g, 8, "b->"), "");
}

} // namespace
} // namespace redist::test::grids
