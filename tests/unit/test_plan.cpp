// make_rank_plan on large grids (1-D up to 65,536 processes, 2-D up to 256 x 256) against a
// brute-force enumeration of the sampled ranks' elements from the ScaLAPACK definitions
// (reference.hpp): the peers, the element counts, the order of the elements in each message
// and the local offsets packed and unpacked, and the send/receive order.
#include "plan.hpp"
#include "reference.hpp"

#include <gtest/gtest.h>

#include <map>
#include <numeric>
#include <random>

namespace redist::test {
namespace {

using Offsets = std::vector<Index>; // local offsets of a message's elements, in message order

// Window indices of one dimension owned by process p, by a scan of the whole window.
std::vector<Index> owned(const BlockCyclic &d, Index start, Index length, int p) {
  std::vector<Index> out;
  for (Index k = 0; k < length; ++k) {
    if (ref_owner(d, start + k) == p) {
      out.push_back(k);
    }
  }
  return out;
}

struct RankView {
  std::map<int, Offsets> sends; // peer rank -> source offsets (self included)
  std::map<int, Offsets> recvs; // peer rank -> destination offsets (self excluded)
};

// The rank's messages from the definitions: window element (i, j) goes from the owner of
// (src.i + i, src.j + j) to the owner of (dst.i + i, dst.j + j); messages list their elements
// column by column, rows increasing.
RankView brute_force(const Transfer &t, int rank, Index lld_src, Index lld_dst) {
  RankView view;
  const auto side = [&](const Layout &own, const Layout &other, bool as_source, Index lld) {
    int pr = 0;
    int pc = 0;
    if (!own.grid.find(rank, pr, pc)) {
      return;
    }
    const std::vector<Index> rows = owned(own.rows, own.i, t.m, pr);
    const std::vector<Index> cols = owned(own.cols, own.j, t.n, pc);
    for (const Index j : cols) {
      for (const Index i : rows) {
        if (!reference_copied(t.region.kind, t.region.unit_diag, i, j, t.m, t.n)) {
          continue;
        }
        const int peer = other.grid.rank_at(ref_owner(other.rows, other.i + i),
                                            ref_owner(other.cols, other.j + j));
        if (!as_source && peer == rank) {
          continue; // the local copy belongs to the sending side
        }
        (as_source ? view.sends : view.recvs)[peer].push_back(ref_local(own.rows, own.i + i) +
                                                              ref_local(own.cols, own.j + j) * lld);
      }
    }
  };
  side(t.src, t.dst, true, lld_src);
  side(t.dst, t.src, false, lld_dst);
  return view;
}

Offsets plan_offsets(const RankPlan &plan, const std::vector<RunPattern> &rows,
                     const std::vector<RunPattern> &cols, const Peer &peer, bool source,
                     Index lld) {
  Offsets out;
  for_each_piece(rows[static_cast<std::size_t>(peer.row_slot)],
                 cols[static_cast<std::size_t>(peer.col_slot)], plan.region, plan.m, plan.n, lld,
                 lld, [&](Index src, Index dst, Index count) {
                   for (Index e = 0; e < count; ++e) {
                     out.push_back((source ? src : dst) + e);
                   }
                 });
  return out;
}

std::string check_rank(const Transfer &t, int rank, int comm_size) {
  const RankPlan plan = make_rank_plan(t, rank, comm_size);
  int pr = 0;
  int pc = 0;
  const Index lld_src =
      t.src.grid.find(rank, pr, pc) ? std::max<Index>(1, t.src.rows.local_extent(pr)) : 1;
  const Index lld_dst =
      t.dst.grid.find(rank, pr, pc) ? std::max<Index>(1, t.dst.rows.local_extent(pr)) : 1;
  const RankView expected = brute_force(t, rank, lld_src, lld_dst);
  std::ostringstream err;
  err << "rank " << rank << ": ";
  RankView actual;
  for (const Peer &p : plan.sends) {
    actual.sends[p.rank] = plan_offsets(plan, plan.send_rows, plan.send_cols, p, true, lld_src);
    if (static_cast<Index>(actual.sends[p.rank].size()) != p.elements) {
      return err.str() + "message to " + std::to_string(p.rank) + " counts " +
             std::to_string(p.elements) + " elements but holds " +
             std::to_string(actual.sends[p.rank].size());
    }
    if (p.rank == rank) return err.str() + "a send to itself";
  }
  if (plan.self.elements > 0) {
    actual.sends[rank] =
        plan_offsets(plan, plan.send_rows, plan.send_cols, plan.self, true, lld_src);
  }
  for (const Peer &p : plan.recvs) {
    actual.recvs[p.rank] = plan_offsets(plan, plan.recv_rows, plan.recv_cols, p, false, lld_dst);
    if (static_cast<Index>(actual.recvs[p.rank].size()) != p.elements) {
      return err.str() + "message from " + std::to_string(p.rank) + " miscounted";
    }
  }
  for (const auto which : {&RankView::sends, &RankView::recvs}) {
    const auto &want = expected.*which;
    const auto &got = actual.*which;
    if (want.size() != got.size()) {
      return err.str() + std::to_string(got.size()) + " peers, expected " +
             std::to_string(want.size());
    }
    for (const auto &[peer, offsets] : want) {
      const auto it = got.find(peer);
      if (it == got.end()) return err.str() + "no message with " + std::to_string(peer);
      if (it->second != offsets)
        return err.str() + "elements with " + std::to_string(peer) + " differ";
    }
  }
  // Sends in rounds (peer - rank) mod comm_size, receives in rounds (rank - peer) mod comm_size.
  const auto round = [&](int a, int b) { return ((a - b) % comm_size + comm_size) % comm_size; };
  for (std::size_t i = 1; i < plan.sends.size(); ++i) {
    if (round(plan.sends[i - 1].rank, rank) >= round(plan.sends[i].rank, rank))
      return err.str() + "sends out of round order";
  }
  for (std::size_t i = 1; i < plan.recvs.size(); ++i) {
    if (round(rank, plan.recvs[i - 1].rank) >= round(rank, plan.recvs[i].rank))
      return err.str() + "receives out of round order";
  }
  return {};
}

Grid shuffled_grid(Random &rng, int nprow, int npcol, int comm_size) {
  Grid g{nprow, npcol, std::vector<int>(static_cast<std::size_t>(comm_size))};
  std::iota(g.ranks.begin(), g.ranks.end(), 0);
  std::mt19937 shuffle(static_cast<unsigned>(rng.uniform(0, 1 << 30)));
  std::shuffle(g.ranks.begin(), g.ranks.end(), shuffle);
  g.ranks.resize(static_cast<std::size_t>(nprow) * static_cast<std::size_t>(npcol));
  return g;
}

// One dimension with P -> Q processes, random blocks and first processes, a window at a random
// offset long enough that every process has data.
void random_dimension(Random &rng, int P, int Q, Index max_block, BlockCyclic &src,
                      BlockCyclic &dst, Index &src_start, Index &dst_start, Index &length) {
  const Index r = rng.uniform(1, max_block);
  const Index s = rng.uniform(1, max_block);
  length = rng.uniform(std::max(P * r, Q * s), 2 * std::max(P * r, Q * s));
  src_start = rng.uniform(0, 3 * r);
  dst_start = rng.uniform(0, 3 * s);
  src = {src_start + length + rng.uniform(0, 5), r, P, rng.uniform_int(0, P - 1)};
  dst = {dst_start + length + rng.uniform(0, 5), s, Q, rng.uniform_int(0, Q - 1)};
}

TEST(RankPlan, LargeGridsMatchBruteForceOnSampledRanks) {
  Random rng(test_seed(41));
  struct Shape {
    int src_rows, src_cols, dst_rows, dst_cols;
    Index max_block;
  };
  const std::vector<Shape> shapes = {
      {65536, 1, 65536, 1, 12}, {65536, 1, 40000, 1, 12}, {1, 50000, 1, 65536, 12},
      {256, 256, 256, 256, 6},  {256, 200, 240, 256, 6},
  };
  int ranks_checked = 0;
  for (const Shape &shape : shapes) {
    Transfer t;
    random_dimension(rng, shape.src_rows, shape.dst_rows, shape.max_block, t.src.rows, t.dst.rows,
                     t.src.i, t.dst.i, t.m);
    random_dimension(rng, shape.src_cols, shape.dst_cols, shape.max_block, t.src.cols, t.dst.cols,
                     t.src.j, t.dst.j, t.n);
    if (shape.src_rows == 1 || shape.src_cols == 1) { // 1-D: a few columns or rows
      (shape.src_rows == 1 ? t.m : t.n) = rng.uniform(1, 3);
      (shape.src_rows == 1 ? t.src.rows : t.src.cols).extent += 3;
      (shape.src_rows == 1 ? t.dst.rows : t.dst.cols).extent += 3;
    }
    t.region.kind = static_cast<Region::Kind>(rng.uniform_int(0, 2));
    t.region.unit_diag = rng.chance(30);
    const int comm_size =
        std::max(shape.src_rows * shape.src_cols, shape.dst_rows * shape.dst_cols);
    t.src.grid = shuffled_grid(rng, shape.src_rows, shape.src_cols, comm_size);
    t.dst.grid = shuffled_grid(rng, shape.dst_rows, shape.dst_cols, comm_size);
    for (int sample = 0; sample < 3; ++sample) {
      const int rank = rng.uniform_int(0, comm_size - 1);
      ASSERT_EQ(check_rank(t, rank, comm_size), "")
          << "shape " << shape.src_rows << "x" << shape.src_cols << " -> " << shape.dst_rows << "x"
          << shape.dst_cols << " rows " << describe(t.rows()) << " cols " << describe(t.cols())
          << " region " << static_cast<int>(t.region.kind);
      ++ranks_checked;
    }
  }
  EXPECT_EQ(ranks_checked, 15);
}

// A matrix replicated over process rows or columns (PBLAS's RSRC_ / CSRC_ = -1), planned in
// parts (replica_parts, make_part, keep_destinations) on random transfers, transposed too:
// - a part writes its copy of B (process row r, column c along B's replicated dimensions), every
//   element of the window held on that row (column) at its global index, and reads A's
//   elements from the copy on row (column) r or c mod A's processes where the parts run along
//   the dimension A's holds, else 0; the dimensions not replicated are left alone (checked
//   element by element against the reference owner and local index);
// - over all parts and ranks, the elements sent (or copied to the same rank) are each copy of B
//   once: the window times the copies of B; every kept message goes to the part's coordinates;
// - row-major local arrays on either side too;
// - with local reads, A and B the same layout on one grid (not transposed) and A replicated
//   where B is not, nothing leaves its process.
TEST(Replication, EveryCopyOfBIsWrittenFromACopyOfA) {
  std::mt19937 gen(20261129);
  const auto pick = [&](int lo, int hi) { return std::uniform_int_distribution<int>(lo, hi)(gen); };
  for (int trial = 0; trial < 2000; ++trial) {
    Transfer t;
    t.m = pick(1, 9);
    t.n = pick(1, 9);
    if (pick(0, 1) == 1) t.perm = {1, 0};
    const bool one_grid = pick(0, 2) == 0 && t.m == t.n;
    const auto layout = [&](Layout &l, Index rows, Index cols) {
      l.grid.nprow = pick(1, 4);
      l.grid.npcol = pick(1, 8 / l.grid.nprow); // at most 8 ranks
      l.i = pick(0, 3);
      l.j = pick(0, 3);
      l.rows = {l.i + rows + pick(0, 3), pick(1, 4), l.grid.nprow, pick(0, l.grid.nprow - 1)};
      l.cols = {l.j + cols + pick(0, 3), pick(1, 4), l.grid.npcol, pick(0, l.grid.npcol - 1)};
    };
    layout(t.src, t.transposed() ? t.n : t.m, t.transposed() ? t.m : t.n);
    layout(t.dst, t.m, t.n);
    if (one_grid) t.dst = t.src; // square windows: the same layout, the same ranks
    t.src.row_major = pick(0, 3) == 0;
    t.dst.row_major = one_grid ? t.src.row_major : pick(0, 3) == 0;
    const auto ranks = [](Layout &l, int offset) {
      const int count = l.grid.nprow * l.grid.npcol;
      l.grid.ranks.resize(static_cast<std::size_t>(count));
      for (int k = 0; k < count; ++k)
        l.grid.ranks[static_cast<std::size_t>(k)] = (k + offset) % 8;
    };
    ranks(t.src, 0);
    ranks(t.dst, one_grid ? 0 : pick(0, 7));
    const Replication a{pick(0, 1) == 1, pick(0, 1) == 1};
    const Replication b{pick(0, 1) == 1, pick(0, 1) == 1};
    const bool local_reads = pick(0, 1) == 1;
    const ReplicaParts parts = replica_parts(t, a, b, local_reads);
    const int copies = (b.rows ? t.dst.grid.nprow : 1) * (b.cols ? t.dst.grid.npcol : 1);
    Index moved = 0;
    Index remote = 0;
    for (int k = 0; k < parts.total(); ++k) {
      Transfer part = t;
      const std::array<int, 2> at = make_part(part, a, b, parts, k);
      const int c[2] = {k / parts.count[1], k % parts.count[1]};
      for (Index wi = 0; wi < t.m; ++wi) {
        for (Index wj = 0; wj < t.n; ++wj) {
          // B's element and, by the permutation, A's.
          const Index b_index[2] = {t.dst.i + wi, t.dst.j + wj};
          const Index a_index[2] = {t.src.i + (t.transposed() ? wj : wi),
                                    t.src.j + (t.transposed() ? wi : wj)};
          for (int d = 0; d < 2; ++d) {
            const auto dk = static_cast<std::size_t>(d);
            const BlockCyclic &was_b = t.dst.dim(d);
            const BlockCyclic &now_b = part.dst.dim(d);
            const Index g = b_index[d];
            if (b.along(d)) {
              ASSERT_EQ(ref_owner(now_b, g), c[d]) << "trial " << trial;
              ASSERT_EQ(ref_local(now_b, g), g) << "trial " << trial;
            } else {
              ASSERT_EQ(now_b.owner(g), was_b.owner(g)) << "trial " << trial;
              ASSERT_EQ(now_b.local_index(g), was_b.local_index(g)) << "trial " << trial;
            }
            const int axis = t.perm[dk];
            const BlockCyclic &was_a = t.src.dim(axis);
            const BlockCyclic &now_a = part.src.dim(axis);
            const Index ga = a_index[axis];
            if (a.along(axis)) {
              const int want = (parts.count[dk] > 1 ? c[d] : 0) % was_a.nprocs;
              ASSERT_EQ(ref_owner(now_a, ga), want) << "trial " << trial;
              ASSERT_EQ(ref_local(now_a, ga), ga) << "trial " << trial;
            } else {
              ASSERT_EQ(now_a.owner(ga), was_a.owner(ga)) << "trial " << trial;
              ASSERT_EQ(now_a.local_index(ga), was_a.local_index(ga)) << "trial " << trial;
            }
          }
        }
      }
      for (int rank = 0; rank < 8; ++rank) {
        RankPlan plan = make_rank_plan(part, rank, 8);
        keep_destinations(plan, part, rank, at);
        moved += plan.self.elements;
        for (const Peer &p : plan.sends) {
          moved += p.elements;
          remote += p.elements;
          // A row-major B is planned as its transpose: positions in the transposed grid.
          const int row = t.dst.row_major ? p.grid_col : p.grid_row;
          const int col = t.dst.row_major ? p.grid_row : p.grid_col;
          ASSERT_TRUE(at[0] < 0 || row == at[0]) << "trial " << trial;
          ASSERT_TRUE(at[1] < 0 || col == at[1]) << "trial " << trial;
        }
      }
    }
    ASSERT_EQ(moved, t.m * t.n * copies) << "trial " << trial;
    if (one_grid && local_reads && !b.any() && a.any() && !t.transposed()) {
      ASSERT_EQ(remote, 0) << "trial " << trial;
    }
  }
}

} // namespace
} // namespace redist::test
