// Dimensions whose first block has its own size (PBLAS's 11-integer descriptors, IMB_ / INB_)
// against an oracle written from PBLAS's definition, apart from src/: the blocks are dealt one
// after the other -- the first (IMB elements) to the source process, then blocks of MB to the
// next processes round-robin -- and every element's owner and local index are counted out by
// a scan of the whole dimension. Checked: owner, local index, local extent (PB_Cnumroc with
// I = 0), the 1-D runs between every pair of processes for windows at any offset, the row
// groups the executor copies with, and 2-D rank plans (messages, their order, both ends'
// offsets) on random first-block layouts, transposed and trapezoidal too, with column-major
// and row-major local arrays (element (r, c) at r + c * lld or r * lld + c).
#include "index.hpp"
#include "kinds_support.hpp"
#include "plan.hpp"
#include "reference.hpp"
#include "tiles.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <string>
#include <tuple>
#include <vector>

namespace redist::test {
namespace {

std::string describe_dim(const BlockCyclic &d) {
  return describe(d) + " first_block=" + std::to_string(d.first_block);
}

TEST(FirstBlock, OwnerLocalIndexAndExtentMatchTheDealtBlocksExhaustively) {
  for (Index extent = 0; extent <= 23; ++extent) {
    for (Index block = 1; block <= 4; ++block) {
      for (int nprocs = 1; nprocs <= 4; ++nprocs) {
        for (int src = 0; src < nprocs; ++src) {
          for (Index first = 1; first <= 2 * block + 3; ++first) {
            const BlockCyclic d{extent, block, nprocs, src, first};
            const DealtDimension want = deal(extent, first, block, nprocs, src);
            for (Index g = 0; g < extent; ++g) {
              const auto gi = static_cast<std::size_t>(g);
              ASSERT_EQ(d.owner(g), want.owner[gi]) << describe_dim(d) << " g=" << g;
              ASSERT_EQ(d.local_index(g), want.local[gi]) << describe_dim(d) << " g=" << g;
            }
            for (int p = 0; p < nprocs; ++p) {
              ASSERT_EQ(d.local_extent(p), want.count[static_cast<std::size_t>(p)])
                  << describe_dim(d) << " p=" << p;
            }
          }
        }
      }
    }
  }
}

TEST(FirstBlock, HandPickedExtents) {
  // 10 elements, first block 4 on process 1, then blocks of 3 on 0, 1, 0: 1 holds 4 + 3.
  EXPECT_EQ((BlockCyclic{10, 3, 2, 1, 4}.local_extent(1)), 7);
  EXPECT_EQ((BlockCyclic{10, 3, 2, 1, 4}.local_extent(0)), 3);
  EXPECT_EQ((BlockCyclic{10, 3, 2, 1, 4}.local_index(7)), 4); // first of the block 7..9
  // A first block past the extent: everything on the source process.
  EXPECT_EQ((BlockCyclic{5, 2, 3, 2, 9}.local_extent(2)), 5);
  EXPECT_EQ((BlockCyclic{5, 2, 3, 2, 9}.owner(4)), 2);
  // first_block == block and first_block == 0 are the 9-integer layout.
  EXPECT_TRUE((BlockCyclic{10, 3, 2, 1, 3}.uniform()));
  EXPECT_TRUE((BlockCyclic{10, 3, 2, 1}.uniform()));
  EXPECT_FALSE((BlockCyclic{10, 3, 2, 1, 1}.uniform()));
}

// One window's elements between every (source, destination) pair from the dealt dimensions.
std::vector<std::vector<Element>> dealt_pairs(const Transfer1D &t) {
  const DealtDimension src = deal(t.src);
  const DealtDimension dst = deal(t.dst);
  const auto nq = static_cast<std::size_t>(t.dst.nprocs);
  std::vector<std::vector<Element>> pairs(static_cast<std::size_t>(t.src.nprocs) * nq);
  for (Index k = 0; k < t.length; ++k) {
    const auto gs = static_cast<std::size_t>(t.src_start + k);
    const auto gd = static_cast<std::size_t>(t.dst_start + k);
    pairs[static_cast<std::size_t>(src.owner[gs]) * nq + static_cast<std::size_t>(dst.owner[gd])]
        .push_back({k, src.local[gs], dst.local[gd]});
  }
  return pairs;
}

// A pattern against its pair's elements: the runs, clipped visits, counts and positions.
std::string check_pattern(const RunPattern &pattern, const std::vector<Element> &elements,
                          Random &rng) {
  if (std::string err = run_diff(merge_elements(elements), visit(pattern)); !err.empty()) {
    return "for_each: " + err;
  }
  if (pattern.total() != static_cast<Index>(elements.size())) {
    return "total " + std::to_string(pattern.total());
  }
  const Index length = pattern.window_length();
  for (int trial = 0; trial < 6; ++trial) {
    const Index lo = rng.uniform(0, length);
    const Index hi = rng.uniform(lo, length);
    std::vector<Element> inside;
    for (const Element &e : elements) {
      if (lo <= e.k && e.k < hi) inside.push_back(e);
    }
    if (std::string err = run_diff(merge_elements(inside), visit(pattern, lo, hi)); !err.empty()) {
      return "for_each(" + std::to_string(lo) + ", " + std::to_string(hi) + "): " + err;
    }
    if (pattern.count_below(hi) - pattern.count_below(lo) != static_cast<Index>(inside.size())) {
      return "count_below(" + std::to_string(hi) + ") - count_below(" + std::to_string(lo) + ")";
    }
  }
  for (std::size_t c = 0; c < elements.size(); c += 1 + elements.size() / 16) {
    if (pattern.index_of(static_cast<Index>(c)) != elements[c].k) {
      return "index_of(" + std::to_string(c) + ")";
    }
  }
  // The row groups the executor copies a message's rows with hold the same elements in order.
  std::vector<Element> grouped;
  row_groups(pattern).for_each([&](const RowGroup &g, Index src_shift, Index dst_shift) {
    for (Index i = 0; i < g.count; ++i) {
      for (Index e = 0; e < g.length; ++e) {
        grouped.push_back(
            {0, g.src + src_shift + i * g.src_step + e, g.dst + dst_shift + i * g.dst_step + e});
      }
    }
  });
  if (grouped.size() != elements.size()) {
    return "row groups hold " + std::to_string(grouped.size()) + " elements";
  }
  for (std::size_t e = 0; e < grouped.size(); ++e) {
    if (grouped[e].src_local != elements[e].src_local ||
        grouped[e].dst_local != elements[e].dst_local) {
      return "row group element " + std::to_string(e) + " differs";
    }
  }
  return {};
}

std::string check_transfer(const Transfer1D &t, Random &rng) {
  const std::vector<std::vector<Element>> pairs = dealt_pairs(t);
  const auto nq = static_cast<std::size_t>(t.dst.nprocs);
  for (int p = 0; p < t.src.nprocs; ++p) {
    std::vector<PeerRuns> runs = peer_runs_from_source(t, p);
    std::size_t next = 0;
    for (int q = 0; q < t.dst.nprocs; ++q) {
      const auto &want = pairs[static_cast<std::size_t>(p) * nq + static_cast<std::size_t>(q)];
      const bool listed = next < runs.size() && runs[next].peer == q;
      if (listed == want.empty()) {
        return "source " + std::to_string(p) + ": peer " + std::to_string(q) +
               (listed ? " listed without data" : " missing");
      }
      if (listed) {
        if (std::string err = check_pattern(runs[next++].runs, want, rng); !err.empty()) {
          return "source " + std::to_string(p) + " to " + std::to_string(q) + ": " + err;
        }
      }
    }
  }
  for (int q = 0; q < t.dst.nprocs; ++q) {
    for (const PeerRuns &r : peer_runs_to_destination(t, q)) {
      const auto &want = pairs[static_cast<std::size_t>(r.peer) * nq + static_cast<std::size_t>(q)];
      if (std::string err = check_pattern(r.runs, want, rng); !err.empty()) {
        return "destination " + std::to_string(q) + " from " + std::to_string(r.peer) + ": " + err;
      }
    }
  }
  return {};
}

TEST(FirstBlock, RunsBetweenEveryPairMatchTheDealtElementsOnRandomWindows) {
  Random rng(test_seed(0x11b10c));
  for (int trial = 0; trial < 3000; ++trial) {
    Transfer1D t;
    const bool large = trial % 10 == 0;
    t.src = random_first_block_dimension(rng, large ? 3000 : 80, large ? 40 : 7, 6);
    t.dst = random_first_block_dimension(rng, large ? 3000 : 80, large ? 40 : 7, 6);
    const Index fit = std::min(t.src.extent, t.dst.extent);
    t.length = rng.chance(15) ? fit : rng.uniform(0, fit);
    t.src_start = rng.uniform(0, t.src.extent - t.length);
    t.dst_start = rng.uniform(0, t.dst.extent - t.length);
    const std::string err = check_transfer(t, rng);
    ASSERT_EQ(err, "") << describe(t) << " src.first_block=" << t.src.first_block
                       << " dst.first_block=" << t.dst.first_block;
  }
}

TEST(FirstBlock, EverySourceProcessAndFirstBlockSizeOfASmallCase) {
  Random rng(7);
  for (Index first = 1; first <= 12; ++first) {
    for (int src = 0; src < 3; ++src) {
      for (Index start = 0; start <= 13; ++start) {
        Transfer1D t{BlockCyclic{40, 4, 3, src, first}, BlockCyclic{40, 3, 2, 1, 5}, start, 2, 25};
        ASSERT_EQ(check_transfer(t, rng), "") << "first=" << first << " src=" << src;
        std::swap(t.src, t.dst);
        std::swap(t.src_start, t.dst_start);
        ASSERT_EQ(check_transfer(t, rng), "") << "swapped first=" << first << " src=" << src;
      }
    }
  }
}

TEST(FirstBlock, AFirstBlockOfTheBlockSizeGivesTheNineIntegerPatternsExactly) {
  Random rng(test_seed(0x9));
  for (int trial = 0; trial < 500; ++trial) {
    Transfer1D uniform = random_transfer(rng, 200, 9, 5);
    Transfer1D same = uniform;
    same.src.first_block = same.src.block;
    same.dst.first_block = same.dst.block;
    for (int p = 0; p < uniform.src.nprocs; ++p) {
      const std::vector<PeerRuns> a = peer_runs_from_source(uniform, p);
      const std::vector<PeerRuns> b = peer_runs_from_source(same, p);
      ASSERT_EQ(a.size(), b.size());
      for (std::size_t i = 0; i < a.size(); ++i) {
        EXPECT_EQ(a[i].runs.head_length(), 0);
        EXPECT_EQ(b[i].runs.head_length(), 0);
        EXPECT_EQ(a[i].runs.period(), b[i].runs.period());
        EXPECT_EQ(run_diff(a[i].runs.period_runs(), b[i].runs.period_runs()), "");
      }
    }
  }
}

TEST(FirstBlock, AFirstBlockNoLargerThanABlockKeepsOneSegmentOverTheWindow) {
  // The virtual leading elements make such a dimension uniform over the whole window: its
  // patterns are one segment, walked and counted as 9-integer ones are.
  Random rng(test_seed(0xb));
  for (int trial = 0; trial < 300; ++trial) {
    Transfer1D t = random_transfer(rng, 200, 9, 5);
    t.src.first_block = rng.uniform(1, t.src.block);
    t.dst.first_block = rng.uniform(1, t.dst.block);
    for (int p = 0; p < t.src.nprocs; ++p) {
      for (const PeerRuns &r : peer_runs_from_source(t, p)) {
        ASSERT_EQ(r.runs.head_length(), 0);
        ASSERT_EQ(r.runs.segments_end(), r.runs.window_length());
      }
    }
  }
}

TEST(FirstBlock, CopiesOfPatternsWithSegmentsWalkAndCountAsTheOriginal) {
  // Process 1's first block of 23 holds window indices [0, 21): [0, 17) is a segment of its
  // own before the periodic one.
  const Transfer1D t{BlockCyclic{100, 4, 3, 1, 23}, BlockCyclic{100, 3, 2, 0, 5}, 2, 1, 90};
  const std::vector<PeerRuns> runs = peer_runs_from_source(t, 1);
  ASSERT_FALSE(runs.empty());
  for (const PeerRuns &r : runs) {
    EXPECT_EQ(r.runs.head_length(), 17);
    RunPattern copy(r.runs);
    RunPattern assigned;
    assigned = copy;
    const RunPattern moved(std::move(copy));
    for (const RunPattern *other : {static_cast<const RunPattern *>(&assigned), &moved}) {
      EXPECT_EQ(run_diff(visit(r.runs), visit(*other)), "");
      EXPECT_EQ(other->head_length(), r.runs.head_length());
      EXPECT_EQ(other->total(), r.runs.total());
      for (Index x = 0; x <= t.length; ++x) {
        ASSERT_EQ(other->count_below(x), r.runs.count_below(x)) << "x=" << x;
      }
    }
  }
}

TEST(FirstBlock, AHugeFirstBlockKeepsThePatternSmall) {
  // A window of 2^30 elements inside a first block of 1.5 * 10^9 on process 1, against an
  // element-cyclic side over 5 processes: one (stretched) period per segment, not one run per
  // element.
  const Index length = Index{1} << 30;
  const Transfer1D t{BlockCyclic{Index{1} << 31, 8, 4, 1, Index{1500000000}},
                     BlockCyclic{Index{1} << 31, 1, 5, 0}, 3, 7, length};
  const std::vector<PeerRuns> runs = peer_runs_from_source(t, 1);
  ASSERT_EQ(runs.size(), 5U);
  for (const PeerRuns &r : runs) {
    EXPECT_LT(r.runs.memory_bytes(), std::size_t{16} << 10);
    const Index residue = floor_mod(r.peer - 7, 5); // window indices k = residue mod 5
    EXPECT_EQ(r.runs.total(), length / 5 + (length % 5 > residue ? 1 : 0));
  }
  EXPECT_TRUE(peer_runs_from_source(t, 0).empty());
}

TEST(FirstBlock, UniformOwnersKeepEveryOwnerWhereTheyExist) {
  Random rng(test_seed(0x0e));
  int equivalent = 0;
  for (int trial = 0; trial < 3000; ++trial) {
    Transfer1D t;
    t.src = random_first_block_dimension(rng, 60, 6, 5);
    t.dst = random_first_block_dimension(rng, 60, 6, 5);
    const Index fit = std::min(t.src.extent, t.dst.extent);
    t.length = rng.uniform(0, fit);
    t.src_start = rng.uniform(0, t.src.extent - t.length);
    t.dst_start = rng.uniform(0, t.dst.extent - t.length);
    Transfer1D u;
    // a window holding more than a block of a first block has no uniform equivalent
    const auto fits = [&](const BlockCyclic &d, Index start) {
      const Index first = d.first_block > 0 ? d.first_block : d.block;
      return d.nprocs == 1 || std::min(first - start, t.length) <= d.block;
    };
    const bool expected = fits(t.src, t.src_start) && fits(t.dst, t.dst_start);
    ASSERT_EQ(uniform_owners(t, u), expected) << describe(t);
    if (!expected) continue;
    ++equivalent;
    ASSERT_TRUE(u.src.uniform() && u.dst.uniform());
    ASSERT_EQ(u.length, t.length);
    for (Index k = 0; k < t.length; ++k) {
      ASSERT_EQ(u.src.owner(u.src_start + k), t.src.owner(t.src_start + k)) << describe(t);
      ASSERT_EQ(u.dst.owner(u.dst_start + k), t.dst.owner(t.dst_start + k)) << describe(t);
    }
  }
  EXPECT_GT(equivalent, 1000);
}

// ---- 2-D rank plans -------------------------------------------------------------------------

struct Moved {
  Index src_offset;
  Index dst_offset;
  bool operator==(const Moved &) const = default;
};
using Messages = std::map<std::pair<int, int>, std::vector<Moved>>; // (sender, receiver)

// Local offset of the element at local row r, local column c.
Index offset(Index r, Index c, Index lld, bool row_major) {
  return row_major ? r * lld + c : r + c * lld;
}

// Every message from the dealt dimensions: B's window element (i, j) in the region, from A's
// (i, j), or (j, i) when transposed. Messages run along B's storage: column by column with rows
// increasing for a column-major B, row by row for a row-major one. Local offsets with leading
// dimension lld(rank), in each layout's order.
template <class Lld>
Messages dealt_messages(const Transfer &t, const Lld &lld_src, const Lld &lld_dst) {
  const bool transposed = t.perm[0] == 1;
  const DealtDimension ar = deal(t.src.rows);
  const DealtDimension ac = deal(t.src.cols);
  const DealtDimension br = deal(t.dst.rows);
  const DealtDimension bc = deal(t.dst.cols);
  Messages out;
  const auto move = [&](Index i, Index j) {
    if (!reference_copied(t.region.kind, t.region.unit_diag, i, j, t.m, t.n,
                          t.region.diagonal == Region::Diagonal::top_left)) {
      return;
    }
    const auto ai = static_cast<std::size_t>(t.src.i + (transposed ? j : i));
    const auto aj = static_cast<std::size_t>(t.src.j + (transposed ? i : j));
    const auto bi = static_cast<std::size_t>(t.dst.i + i);
    const auto bj = static_cast<std::size_t>(t.dst.j + j);
    const int from = t.src.grid.rank_at(ar.owner[ai], ac.owner[aj]);
    const int to = t.dst.grid.rank_at(br.owner[bi], bc.owner[bj]);
    out[{from, to}].push_back({offset(ar.local[ai], ac.local[aj], lld_src(from), t.src.row_major),
                               offset(br.local[bi], bc.local[bj], lld_dst(to), t.dst.row_major)});
  };
  const Index outer = t.dst.row_major ? t.m : t.n;
  const Index inner = t.dst.row_major ? t.n : t.m;
  for (Index o = 0; o < outer; ++o) {
    for (Index e = 0; e < inner; ++e) {
      t.dst.row_major ? move(o, e) : move(e, o);
    }
  }
  return out;
}

std::vector<Moved> walk(const RankPlan &plan, const Peer &peer, bool sending, Index lld_src,
                        Index lld_dst) {
  std::vector<Moved> out;
  const auto &rows = sending ? plan.send_rows : plan.recv_rows;
  const auto &cols = sending ? plan.send_cols : plan.recv_cols;
  for_each_strided_piece(rows[static_cast<std::size_t>(peer.row_slot)],
                         cols[static_cast<std::size_t>(peer.col_slot)], plan.region, plan.m, plan.n,
                         plan.transposed(), lld_src, lld_dst, [&](const StridedPiece &p) {
                           for (Index e = 0; e < p.count; ++e) {
                             out.push_back({p.src + e * p.src_step, p.dst + e});
                           }
                         });
  return out;
}

// Random 2-D transfers between first-block layouts, some transposed, some trapezoidal, and
// with row-major local arrays on either side when `row_major`; every rank's plan walked with
// the leading dimensions against the dealt messages.
void check_random_rank_plans(std::uint64_t seed, bool row_major) {
  Random rng(test_seed(seed));
  for (int trial = 0; trial < 2000; ++trial) {
    const KindsCase c = random_kinds_case(rng, row_major);
    const Transfer &t = c.t;
    const int comm_size = c.comm_size;
    const std::vector<Index> &lld_src = c.lld_src;
    const std::vector<Index> &lld_dst = c.lld_dst;
    const auto lld_of = [](const std::vector<Index> &v) {
      return [&v](int r) { return v[static_cast<std::size_t>(r)]; };
    };
    const Messages want = dealt_messages(t, lld_of(lld_src), lld_of(lld_dst));
    Messages sent;
    Messages received;
    for (int r = 0; r < comm_size; ++r) {
      const RankPlan plan = make_rank_plan(t, r, comm_size);
      const Index ls = lld_src[static_cast<std::size_t>(r)];
      const Index ld = lld_dst[static_cast<std::size_t>(r)];
      std::vector<Peer> sends = plan.sends;
      if (plan.self.elements > 0) sends.push_back(plan.self);
      for (const Peer &p : sends) {
        // the receiver's leading dimension addresses B's side of a sent message
        sent[{r, p.rank}] = walk(plan, p, true, ls, lld_dst[static_cast<std::size_t>(p.rank)]);
        ASSERT_EQ(static_cast<Index>(sent[{r, p.rank}].size()), p.elements);
      }
      for (const Peer &p : plan.recvs) {
        received[{p.rank, r}] = walk(plan, p, false, lld_src[static_cast<std::size_t>(p.rank)], ld);
        ASSERT_EQ(static_cast<Index>(received[{p.rank, r}].size()), p.elements);
      }
    }
    ASSERT_TRUE(sent == want) << "trial " << trial;
    std::size_t remote = 0;
    for (const auto &[pair, moved] : want) {
      if (pair.first != pair.second) {
        ASSERT_TRUE(received[pair] == moved) << "trial " << trial;
        ++remote;
      }
    }
    ASSERT_EQ(received.size(), remote) << "trial " << trial;
  }
}

TEST(FirstBlock, RankPlansCarryTheDealtElementsInMessageOrder) {
  check_random_rank_plans(0x2d1b, false);
}

TEST(RowMajor, RankPlansCarryTheElementsAlongBsRowsWithRowMajorOffsets) {
  check_random_rank_plans(0x20a, true);
}

TEST(FirstBlock, UniformOwnersOfA2DTransferGiveTheSamePeersAndMessageSizes) {
  Random rng(test_seed(0x5c));
  int equivalent = 0;
  for (int trial = 0; trial < 1000; ++trial) {
    const KindsCase c = random_kinds_case(rng, true);
    Transfer u;
    if (!uniform_owners(c.t, u)) continue;
    ++equivalent;
    for (const BlockCyclic *d : {&u.src.rows, &u.src.cols, &u.dst.rows, &u.dst.cols}) {
      ASSERT_TRUE(d->uniform());
    }
    ASSERT_FALSE(u.src.row_major || u.dst.row_major);
    for (int r = 0; r < c.comm_size; ++r) {
      const RankPlan want = make_rank_plan(c.t, r, c.comm_size);
      const RankPlan got = make_rank_plan(u, r, c.comm_size);
      const auto peers = [](const RankPlan &p, bool sends) {
        std::vector<std::pair<int, Index>> out;
        for (const Peer &q : sends ? p.sends : p.recvs)
          out.emplace_back(q.rank, q.elements);
        std::sort(out.begin(), out.end());
        return out;
      };
      ASSERT_EQ(peers(got, true), peers(want, true)) << "trial " << trial << " rank " << r;
      ASSERT_EQ(peers(got, false), peers(want, false)) << "trial " << trial << " rank " << r;
      ASSERT_EQ(got.self.elements, want.self.elements) << "trial " << trial << " rank " << r;
    }
  }
  EXPECT_GT(equivalent, 300);
}

TEST(RowMajor, ColumnMajorEquivalentOfAHandPickedTrapezoid) {
  // B row-major 3 x 5 upper trapezoid (PxTRMR2D's diagonal): its transpose is a 5 x 3 lower
  // trapezoid of a column-major B^T, which receives A's transpose.
  Transfer t;
  t.src = Layout{{4, 2, 1, 0}, {6, 2, 2, 1}, Grid{1, 2, {1, 0}}, 1, 0};
  t.dst = Layout{{3, 1, 3, 2}, {5, 2, 1, 0}, Grid{3, 1, {0, 1, 2}}, 0, 0, true};
  t.m = 3;
  t.n = 5;
  t.region.kind = Region::Kind::upper;
  const Transfer c = column_major_equivalent(t);
  EXPECT_EQ(c.m, 5);
  EXPECT_EQ(c.n, 3);
  EXPECT_EQ(c.region.kind, Region::Kind::lower);
  EXPECT_TRUE(c.transposed());
  EXPECT_EQ(c.dst.grid.nprow, 1);
  EXPECT_EQ(c.dst.grid.npcol, 3);
  EXPECT_EQ(c.dst.grid.ranks, (std::vector<int>{0, 1, 2}));
  EXPECT_EQ(c.dst.rows.block, 2);
  EXPECT_EQ(c.src.i, 1); // A stays column-major
  const Transfer same = column_major_equivalent(c);
  EXPECT_EQ(same.m, c.m);
  EXPECT_EQ(same.perm, c.perm);
}

} // namespace
} // namespace redist::test
