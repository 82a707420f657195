// Transposed transfers (Transfer::perm = {1, 0}, B(i, j) <- A(j, i)) against brute force
// (reference.hpp's brute_force_moves, from the PBLAS definitions): every rank's plan is
// replayed as the executor would -- the sender's walk of a message (tiles and strided pieces,
// which must agree) zipped by message position with the receiver's walk, plus the local part
// -- and the moves must be exactly the region's, each once. Also: message sizes on both sides,
// the planner's volume graph, the identity walks against for_each_piece, and plan memory and
// time flat in the extent.
#include "plan.hpp"
#include "reference.hpp"
#include "schedule.hpp"
#include "tiles.hpp"

#include <gtest/gtest.h>

#include <chrono>
#include <map>
#include <numeric>

namespace redist::test {
namespace {

struct Case {
  Transfer t;
  int comm_size = 1;
  std::vector<Index> lld_src; // per rank
  std::vector<Index> lld_dst;
};

std::string describe_layout(const Layout &l) {
  std::ostringstream os;
  os << "rows " << describe(l.rows) << " cols " << describe(l.cols) << " grid " << l.grid.nprow
     << "x" << l.grid.npcol << " ranks [";
  for (const int r : l.grid.ranks) {
    os << ' ' << r;
  }
  os << " ] window at (" << l.i << ", " << l.j << ")";
  return os.str();
}

std::string describe(const Case &c) {
  std::ostringstream os;
  os << "m=" << c.t.m << " n=" << c.t.n << " perm=(" << c.t.perm[0] << "," << c.t.perm[1]
     << ") P=" << c.comm_size << " region=" << static_cast<int>(c.t.region.kind)
     << " unit_diag=" << c.t.region.unit_diag
     << " top_left=" << (c.t.region.diagonal == Region::Diagonal::top_left) << "\n  src "
     << describe_layout(c.t.src) << "\n  dst " << describe_layout(c.t.dst);
  return os.str();
}

// A layout of a rows x cols window on a random grid of at most comm_size positions, ranks a
// random injective map (so the two sides' process sets overlap, nest or are disjoint).
Layout random_layout(Random &rng, Index rows, Index cols, int comm_size) {
  Layout l;
  l.grid.nprow = rng.uniform_int(1, 4);
  l.grid.npcol = rng.uniform_int(1, 4);
  while (l.grid.nprow * l.grid.npcol > comm_size) {
    (l.grid.npcol > 1 ? l.grid.npcol : l.grid.nprow) -= 1;
  }
  std::vector<int> all(static_cast<std::size_t>(comm_size));
  std::iota(all.begin(), all.end(), 0);
  std::mt19937 shuffle(static_cast<unsigned>(rng.uniform(0, 1 << 30)));
  std::shuffle(all.begin(), all.end(), shuffle);
  all.resize(static_cast<std::size_t>(l.grid.nprow) * static_cast<std::size_t>(l.grid.npcol));
  l.grid.ranks = all;
  l.i = rng.chance(30) ? 0 : rng.uniform(0, 40);
  l.j = rng.chance(30) ? 0 : rng.uniform(0, 40);
  const auto dim = [&](Index extent, int nprocs) {
    const int mode = rng.uniform_int(0, 3);
    const Index block = mode == 0   ? 1
                        : mode == 1 ? rng.uniform(1, 5)
                        : mode == 2 ? rng.uniform(1, 17)
                                    : rng.uniform(1, 300);
    return BlockCyclic{extent, block, nprocs, rng.uniform_int(0, nprocs - 1)};
  };
  l.rows = dim(l.i + rows + rng.uniform(0, 7), l.grid.nprow);
  l.cols = dim(l.j + cols + rng.uniform(0, 7), l.grid.npcol);
  return l;
}

Case random_case(Random &rng, bool transposed) {
  Case c;
  c.t.m = rng.chance(5) ? 0 : rng.uniform(1, 37);
  c.t.n = rng.chance(5) ? 0 : rng.uniform(1, 37);
  c.t.perm = transposed ? std::array<int, 2>{1, 0} : std::array<int, 2>{0, 1};
  c.comm_size = rng.uniform_int(1, 9);
  // A's window is n x m when transposed.
  c.t.src = random_layout(rng, transposed ? c.t.n : c.t.m, transposed ? c.t.m : c.t.n, c.comm_size);
  c.t.dst = random_layout(rng, c.t.m, c.t.n, c.comm_size);
  c.t.region.kind = static_cast<Region::Kind>(rng.uniform_int(0, 2));
  c.t.region.unit_diag = rng.chance(50);
  c.t.region.diagonal = rng.chance(50) ? Region::Diagonal::top_left : Region::Diagonal::trmr2d;
  c.lld_src.assign(static_cast<std::size_t>(c.comm_size), 1);
  c.lld_dst.assign(static_cast<std::size_t>(c.comm_size), 1);
  for (int r = 0; r < c.comm_size; ++r) {
    int pr = 0;
    int pc = 0;
    if (c.t.src.grid.find(r, pr, pc)) {
      c.lld_src[static_cast<std::size_t>(r)] =
          std::max<Index>(1, c.t.src.rows.local_extent(pr)) + rng.uniform(0, 3);
    }
    if (c.t.dst.grid.find(r, pr, pc)) {
      c.lld_dst[static_cast<std::size_t>(r)] =
          std::max<Index>(1, c.t.dst.rows.local_extent(pr)) + rng.uniform(0, 3);
    }
  }
  return c;
}

// One side of a message by message position: A's offsets (sender) or B's (receiver), from the
// tiles; empty with `error` set when the tiles do not cover positions 0..elements-1 once, or
// when the strided pieces visit a different sequence.
std::vector<Index> walk(const RankPlan &plan, const std::vector<RunPattern> &rows,
                        const std::vector<RunPattern> &cols, const Peer &peer, bool source,
                        Index lld_src, Index lld_dst, std::string &error) {
  const RunPattern &r = rows[static_cast<std::size_t>(peer.row_slot)];
  const RunPattern &c = cols[static_cast<std::size_t>(peer.col_slot)];
  const auto size = static_cast<std::size_t>(peer.elements);
  std::vector<Index> by_position(size, -1);
  bool ok = true;
  for_each_tile(r, c, plan.region, plan.m, plan.n, plan.transposed(), lld_src, lld_dst,
                [&](const Tile &tile) {
                  for (Index w = 0; w < tile.width; ++w) {
                    for (Index e = 0; e < tile.height; ++e) {
                      const Index pos = tile.position + e + w * tile.position_width_step;
                      if (pos < 0 || pos >= peer.elements ||
                          by_position[static_cast<std::size_t>(pos)] != -1) {
                        ok = false;
                        continue;
                      }
                      by_position[static_cast<std::size_t>(pos)] =
                          source ? tile.src + e * tile.src_step + w * tile.src_width_step
                                 : tile.dst + e * tile.dst_step + w * tile.dst_width_step;
                    }
                  }
                });
  if (!ok || std::count(by_position.begin(), by_position.end(), Index{-1}) != 0) {
    error = "the tiles do not cover the message's positions once each";
    return {};
  }
  std::vector<Index> pieces;
  for_each_strided_piece(r, c, plan.region, plan.m, plan.n, plan.transposed(), lld_src, lld_dst,
                         [&](const StridedPiece &p) {
                           for (Index e = 0; e < p.count; ++e) {
                             pieces.push_back(source ? p.src + e * p.src_step : p.dst + e);
                           }
                         });
  if (pieces != by_position) {
    error = "the strided pieces and the tiles visit different sequences";
    return {};
  }
  if (!plan.transposed()) { // the copy's walk is for_each_piece, which must agree
    std::vector<Index> copy;
    for_each_piece(r, c, plan.region, plan.m, plan.n, lld_src, lld_dst,
                   [&](Index s, Index d, Index count) {
                     for (Index e = 0; e < count; ++e) {
                       copy.push_back((source ? s : d) + e);
                     }
                   });
    if (copy != by_position) {
      error = "for_each_piece and the tiles visit different sequences";
      return {};
    }
  }
  return by_position;
}

// Replays every rank's plan; empty when the moves are exactly the brute-force ones.
std::string replay(const Case &c) {
  const Transfer &t = c.t;
  std::vector<RankPlan> plans;
  for (int r = 0; r < c.comm_size; ++r) {
    plans.push_back(make_rank_plan(t, r, c.comm_size));
  }
  std::vector<Move> got;
  std::string error;
  for (int r = 0; r < c.comm_size; ++r) {
    const RankPlan &p = plans[static_cast<std::size_t>(r)];
    const Index lld_s = c.lld_src[static_cast<std::size_t>(r)];
    if (p.self.elements > 0) {
      if (p.self.rank != r) return "rank " + std::to_string(r) + ": self peer is another rank";
      const Index lld_d = c.lld_dst[static_cast<std::size_t>(r)];
      const auto s = walk(p, p.send_rows, p.send_cols, p.self, true, lld_s, lld_d, error);
      const auto d = walk(p, p.send_rows, p.send_cols, p.self, false, lld_s, lld_d, error);
      if (!error.empty()) return "rank " + std::to_string(r) + " local part: " + error;
      for (std::size_t e = 0; e < s.size(); ++e) {
        got.emplace_back(r, r, s[e], d[e]);
      }
    }
    for (const Peer &send : p.sends) {
      const std::string what =
          "message " + std::to_string(r) + " -> " + std::to_string(send.rank) + ": ";
      if (send.rank == r || send.rank < 0 || send.rank >= c.comm_size) {
        return what + "bad peer";
      }
      const RankPlan &q = plans[static_cast<std::size_t>(send.rank)];
      const auto match =
          std::find_if(q.recvs.begin(), q.recvs.end(), [&](const Peer &x) { return x.rank == r; });
      if (match == q.recvs.end()) return what + "the receiver does not expect it";
      if (match->elements != send.elements) return what + "sizes differ on the two sides";
      int pr = 0;
      int pc = 0;
      if (!t.src.grid.find(r, pr, pc) || match->grid_row != pr || match->grid_col != pc) {
        return what + "the receiver names the sender's grid position wrongly";
      }
      const Index lld_d = c.lld_dst[static_cast<std::size_t>(send.rank)];
      const auto packed = walk(p, p.send_rows, p.send_cols, send, true, lld_s, lld_d, error);
      if (!error.empty()) return what + "pack: " + error;
      const auto unpacked = walk(q, q.recv_rows, q.recv_cols, *match, false, lld_s, lld_d, error);
      if (!error.empty()) return what + "unpack: " + error;
      for (std::size_t e = 0; e < packed.size(); ++e) {
        got.emplace_back(r, send.rank, packed[e], unpacked[e]);
      }
    }
    for (const Peer &recv : p.recvs) {
      const RankPlan &s = plans[static_cast<std::size_t>(recv.rank)];
      if (std::none_of(s.sends.begin(), s.sends.end(),
                       [&](const Peer &x) { return x.rank == r; })) {
        return "rank " + std::to_string(r) + " expects a message never sent";
      }
    }
  }
  std::vector<Move> want = brute_force_moves(t, c.lld_src, c.lld_dst);
  std::sort(want.begin(), want.end());
  std::sort(got.begin(), got.end());
  if (got != want) {
    std::ostringstream os;
    os << want.size() << " moves expected, " << got.size() << " planned";
    const auto [w, g] = std::mismatch(want.begin(), want.end(), got.begin(), got.end());
    if (w != want.end()) {
      os << "; first expected not planned: (" << std::get<0>(*w) << " -> " << std::get<1>(*w)
         << ", " << std::get<2>(*w) << " -> " << std::get<3>(*w) << ")";
    }
    return os.str();
  }
  return {};
}

// The planner's volume graph (senders and receivers by grid index) against brute force.
std::string check_volumes(const Case &c) {
  const Transfer &t = c.t;
  const std::vector<Index> ones(static_cast<std::size_t>(c.comm_size), 1);
  std::map<std::pair<int, int>, Index> want;
  const auto grid_index = [](const Grid &g, int rank) {
    int pr = 0;
    int pc = 0;
    g.find(rank, pr, pc);
    return pr + pc * g.nprow;
  };
  for (const Move &mv : brute_force_moves(t, ones, ones)) {
    ++want[{grid_index(t.src.grid, std::get<0>(mv)), grid_index(t.dst.grid, std::get<1>(mv))}];
  }
  std::map<std::pair<int, int>, Index> got;
  for (const Message &msg : volume_graph(t).messages) {
    got[{msg.src, msg.dst}] += msg.volume;
  }
  return got == want ? std::string{} : "the volume graph differs from brute force";
}

TEST(Transpose, RandomTransfersMoveExactlyTheTransposedRegion) {
  Random rng(test_seed(2020));
  int cases = 0;
  int nonempty = 0;
  int trapezoids = 0;
  for (int i = 0; i < 3000; ++i) {
    const Case c = random_case(rng, true);
    const std::string error = replay(c);
    ASSERT_EQ(error, "") << "case " << i << ": " << describe(c);
    ASSERT_EQ(check_volumes(c), "") << "case " << i << ": " << describe(c);
    ++cases;
    nonempty += c.t.m > 0 && c.t.n > 0 ? 1 : 0;
    trapezoids += c.t.region.kind != Region::Kind::full ? 1 : 0;
  }
  EXPECT_EQ(cases, 3000);
  EXPECT_GT(nonempty, 2500);
  EXPECT_GT(trapezoids, 1500);
}

// The walks of tiles.hpp on copies equal for_each_piece (checked inside walk()), and the
// identity plan still moves B(i, j) <- A(i, j).
TEST(Transpose, IdentityWalksMatchTheCopy) {
  Random rng(test_seed(1616));
  for (int i = 0; i < 1000; ++i) {
    const Case c = random_case(rng, false);
    ASSERT_EQ(replay(c), "") << "case " << i << ": " << describe(c);
    ASSERT_EQ(check_volumes(c), "") << "case " << i << ": " << describe(c);
  }
}

// A square transpose on one grid whose rows and columns are alike (PxTRAN's common case):
// every process of a 3 x 3 grid sends its (p, q) blocks to (q, p).
TEST(Transpose, SquareGridSendsBlocksToTheMirrorProcess) {
  Transfer t;
  t.m = 12;
  t.n = 12;
  t.perm = {1, 0};
  const Grid g{3, 3, {0, 1, 2, 3, 4, 5, 6, 7, 8}};
  t.src = Layout{{12, 2, 3, 0}, {12, 2, 3, 0}, g, 0, 0};
  t.dst = t.src;
  for (int rank = 0; rank < 9; ++rank) {
    const RankPlan plan = make_rank_plan(t, rank, 9);
    const int mirror = (rank / 3) + (rank % 3) * 3;
    ASSERT_EQ(plan.sends.size() + (plan.self.elements > 0 ? 1 : 0), 1U) << rank;
    ASSERT_EQ(plan.recvs.size(), rank == mirror ? 0U : 1U) << rank;
    const Peer &to = rank == mirror ? plan.self : plan.sends[0];
    EXPECT_EQ(to.rank, mirror);
    EXPECT_EQ(to.elements, 16);
  }
}

// The trapezoid is on B's window: a tall 4 x 2 upper B holds 3 elements with PxTRADD's diagonal
// (i <= j) and 7 with PxTRMR2D's (i <= j + m - n); A's window is 2 x 4 either way.
TEST(Transpose, TrapezoidIsStatedOnTheDestinationWindow) {
  Transfer t;
  t.m = 4;
  t.n = 2;
  t.perm = {1, 0};
  t.region.kind = Region::Kind::upper;
  t.src = Layout{{2, 1, 2, 0}, {4, 1, 1, 0}, Grid{2, 1, {0, 1}}, 0, 0};
  t.dst = Layout{{4, 1, 1, 0}, {2, 1, 2, 1}, Grid{1, 2, {1, 0}}, 0, 0};
  const auto total = [&] {
    Index elements = 0;
    for (int rank = 0; rank < 2; ++rank) {
      const RankPlan plan = make_rank_plan(t, rank, 2);
      elements += plan.elements_sent() + plan.self.elements;
    }
    return elements;
  };
  EXPECT_EQ(total(), 7);
  t.region.diagonal = Region::Diagonal::top_left;
  EXPECT_EQ(total(), 3);
  t.region.unit_diag = true;
  EXPECT_EQ(total(), 1);
}

// Plan memory and time do not grow with the extent: one period stored per dimension.
TEST(Transpose, PlanMemoryAndTimeAreFlatInTheExtent) {
  const auto plan_of = [](Index extent) {
    Transfer t;
    t.perm = {1, 0};
    t.m = extent;
    t.n = extent - 5;
    const Grid src{3, 4, {0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11}};
    const Grid dst{4, 2, {11, 10, 9, 8, 7, 6, 5, 4}};
    t.src = Layout{{extent + 7, 5, 3, 1}, {extent + 9, 3, 4, 2}, src, 7, 3};
    t.dst = Layout{{extent + 4, 7, 4, 0}, {extent + 1, 2, 2, 1}, dst, 2, 1};
    return t;
  };
  std::size_t small_bytes = 0;
  double small_seconds = 0;
  for (const Index extent : {Index{1000}, Index{1000000}, Index{1000000000}}) {
    const Transfer t = plan_of(extent);
    std::size_t bytes = 0;
    Index elements = 0;
    const auto start = std::chrono::steady_clock::now();
    for (int rank = 0; rank < 12; ++rank) {
      const RankPlan plan = make_rank_plan(t, rank, 12);
      bytes = std::max(bytes, plan.memory_bytes());
      elements += plan.elements_sent() + plan.self.elements;
    }
    const double seconds =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    EXPECT_EQ(elements, t.m * t.n) << extent;
    if (extent == 1000) {
      small_bytes = bytes;
      small_seconds = seconds;
    } else {
      EXPECT_LE(bytes, small_bytes * 2) << extent;
      EXPECT_LE(seconds, 20 * small_seconds + 0.05) << extent;
    }
  }
}

} // namespace
} // namespace redist::test
