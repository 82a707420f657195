// The destination grid's rank order (schedule/relabel.hpp) against brute force: the kept volume
// is counted element by element from the ScaLAPACK owner formula (reference.hpp, independent of
// src/), and the best order by trying every permutation of the candidates.

#include "reference.hpp"
#include "relabel.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <numeric>
#include <set>
#include <stdexcept>
#include <vector>

namespace redist::test {
namespace {

// kept[rank][position]: elements that rank would keep at destination position pr + pc * nprow.
std::map<int, std::vector<Index>> brute_force_kept(const Transfer &t) {
  std::map<int, std::vector<Index>> kept;
  const std::size_t positions = static_cast<std::size_t>(t.dst.grid.nprow * t.dst.grid.npcol);
  for (const int r : t.src.grid.ranks)
    kept[r].assign(positions, 0);
  const bool transposed = t.perm[0] != 0;
  for (Index k = 0; k < t.m; ++k) {
    for (Index l = 0; l < t.n; ++l) {
      const int pr = ref_owner(t.dst.rows, t.dst.i + k);
      const int pc = ref_owner(t.dst.cols, t.dst.j + l);
      const Index ai = t.src.i + (transposed ? l : k);
      const Index aj = t.src.j + (transposed ? k : l);
      const int sr = ref_owner(t.src.rows, ai);
      const int sc = ref_owner(t.src.cols, aj);
      const int rank = t.src.grid.ranks[static_cast<std::size_t>(sr + sc * t.src.grid.nprow)];
      ++kept[rank][static_cast<std::size_t>(pr + pc * t.dst.grid.nprow)];
    }
  }
  return kept;
}

Index kept_by(const std::map<int, std::vector<Index>> &kept, const std::vector<int> &ranks) {
  Index sum = 0;
  for (std::size_t p = 0; p < ranks.size(); ++p) {
    if (const auto it = kept.find(ranks[p]); it != kept.end()) sum += it->second[p];
  }
  return sum;
}

BlockCyclic random_dim(Random &rng, Index start, Index length, int procs) {
  return {start + length + rng.uniform(0, 5), rng.uniform(1, 4), procs,
          rng.uniform_int(0, procs - 1)};
}

Transfer random_2d(Random &rng) {
  Transfer t;
  if (rng.chance(25)) t.perm = {1, 0};
  t.m = rng.uniform(0, 14);
  t.n = rng.uniform(0, 14);
  const int src_positions = rng.uniform_int(1, 8);
  const int dst_positions = rng.uniform_int(1, 8);
  const auto shape = [&](int positions, int &nprow, int &npcol) {
    std::vector<int> divisors;
    for (int d = 1; d <= positions; ++d)
      if (positions % d == 0) divisors.push_back(d);
    nprow = divisors[static_cast<std::size_t>(
        rng.uniform_int(0, static_cast<int>(divisors.size()) - 1))];
    npcol = positions / nprow;
  };
  int nprow = 1;
  int npcol = 1;
  shape(src_positions, nprow, npcol);
  t.src.i = rng.uniform(0, 3);
  t.src.j = rng.uniform(0, 3);
  t.src.rows = random_dim(rng, t.src.i, t.perm[0] == 0 ? t.m : t.n, nprow);
  t.src.cols = random_dim(rng, t.src.j, t.perm[0] == 0 ? t.n : t.m, npcol);
  t.src.grid = {nprow, npcol, {}};
  // The source ranks: a random permutation, sometimes of non-contiguous numbers.
  std::vector<int> ranks(static_cast<std::size_t>(src_positions));
  std::iota(ranks.begin(), ranks.end(), rng.chance(30) ? 3 : 0);
  std::shuffle(ranks.begin(), ranks.end(), std::mt19937_64(rng.uniform(0, 1 << 30)));
  t.src.grid.ranks = ranks;
  shape(dst_positions, nprow, npcol);
  t.dst.i = rng.uniform(0, 3);
  t.dst.j = rng.uniform(0, 3);
  t.dst.rows = random_dim(rng, t.dst.i, t.m, nprow);
  t.dst.cols = random_dim(rng, t.dst.j, t.n, npcol);
  t.dst.grid = {nprow, npcol, {}};
  return t;
}

TEST(Relabel, MatchesBruteForceOnSmallGrids) {
  Random rng(test_seed(0x5e1abe1));
  int improved = 0;
  for (int trial = 0; trial < 300; ++trial) {
    const Transfer t = random_2d(rng);
    const int positions = t.dst.grid.nprow * t.dst.grid.npcol;
    const auto kept = brute_force_kept(t);
    const std::vector<int> candidates = default_candidates(t.src, positions);
    ASSERT_LE(candidates.size(), 8u);
    ASSERT_EQ(std::set<int>(candidates.begin(), candidates.end()).size(), candidates.size());

    // The kept volume of every (rank, position), against the element count.
    for (const int r : t.src.grid.ranks) {
      for (int pc = 0; pc < t.dst.grid.npcol; ++pc) {
        for (int pr = 0; pr < t.dst.grid.nprow; ++pr) {
          ASSERT_EQ(kept_volume(t, r, pr, pc),
                    kept.at(r)[static_cast<std::size_t>(pr + pc * t.dst.grid.nprow)])
              << "trial " << trial << " rank " << r << " at (" << pr << ", " << pc << ")";
        }
      }
    }

    // The best order over every permutation of the candidates (the first `positions` of each).
    std::vector<int> perm = candidates;
    std::sort(perm.begin(), perm.end());
    Index best = 0;
    do {
      best = std::max(best, kept_by(kept, {perm.begin(), perm.begin() + positions}));
    } while (std::next_permutation(perm.begin(), perm.end()));

    const Relabelling r = propose_relabelling(t, {}, 8);
    const std::vector<int> identity(candidates.begin(), candidates.begin() + positions);
    EXPECT_EQ(r.identity.ranks, identity) << "trial " << trial;
    EXPECT_EQ(r.total_elements, t.m * t.n);
    EXPECT_EQ(r.kept_before, kept_by(kept, identity)) << "trial " << trial;
    EXPECT_EQ(r.kept_after, best) << "trial " << trial;
    EXPECT_EQ(kept_by(kept, r.grid.ranks), best) << "trial " << trial;
    EXPECT_EQ(r.bytes_saved(), 8 * (best - r.kept_before));
    ASSERT_EQ(r.grid.nprow, t.dst.grid.nprow);
    ASSERT_EQ(r.grid.npcol, t.dst.grid.npcol);
    ASSERT_EQ(r.grid.ranks.size(), static_cast<std::size_t>(positions));
    EXPECT_EQ(std::set<int>(r.grid.ranks.begin(), r.grid.ranks.end()).size(),
              static_cast<std::size_t>(positions));
    for (const int rank : r.grid.ranks) {
      EXPECT_NE(std::find(candidates.begin(), candidates.end(), rank), candidates.end());
    }
    if (best > r.kept_before) ++improved;
  }
  EXPECT_GT(improved, 20); // the random cases exercise relabelling, not only the identity
}

TEST(Relabel, KeepsTheIdentityWhenItIsBest) {
  // Same layout on both sides: everything stays; no rank moves.
  Transfer t;
  t.m = 12;
  t.n = 9;
  t.src.rows = t.dst.rows = {12, 2, 2, 0};
  t.src.cols = t.dst.cols = {9, 3, 3, 1};
  t.src.grid = {2, 3, {5, 1, 4, 0, 2, 3}};
  t.dst.grid = {2, 3, {}};
  const Relabelling r = propose_relabelling(t);
  EXPECT_EQ(r.grid.ranks, t.src.grid.ranks);
  EXPECT_EQ(r.kept_before, 108);
  EXPECT_EQ(r.kept_after, 108);
  EXPECT_EQ(r.bytes_saved(), 0);
}

TEST(Relabel, ExplicitCandidatesAndErrors) {
  Transfer t;
  t.m = 4;
  t.n = 1;
  t.src.rows = {4, 1, 2, 0};
  t.src.cols = t.dst.cols = {1, 1, 1, 0};
  t.src.grid = {2, 1, {0, 1}};
  t.dst.rows = {4, 1, 2, 1}; // RSRC 1: row 0 goes to position 1
  t.dst.grid = {2, 1, {}};
  const Relabelling r = propose_relabelling(t, {0, 1});
  EXPECT_EQ(r.grid.ranks, (std::vector<int>{1, 0}));
  EXPECT_EQ(r.kept_before, 0);
  EXPECT_EQ(r.kept_after, 4);
  // Candidates outside the source keep nothing.
  EXPECT_EQ(propose_relabelling(t, {7, 8}).kept_after, 0);
  EXPECT_THROW((void)propose_relabelling(t, {0}), std::invalid_argument);
  EXPECT_THROW((void)propose_relabelling(t, {0, 0}), std::invalid_argument);
  t.region.kind = Region::Kind::upper;
  EXPECT_THROW((void)propose_relabelling(t), std::invalid_argument);
}

} // namespace
} // namespace redist::test
