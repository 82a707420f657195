#include "layout.hpp"
#include "reference.hpp"

#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace redist::test {
namespace {

// Walk the dimension block by block (block b belongs to process (src + b) mod P) and hand out
// local indices in order: the definition, without the closed forms. Returns the first
// disagreement with BlockCyclic, or an empty string.
std::string check_against_enumeration(const BlockCyclic &d) {
  std::vector<Index> next_local(static_cast<std::size_t>(d.nprocs), 0);
  int block_owner = d.src;
  for (Index block_start = 0; block_start < d.extent; block_start += d.block) {
    const Index block_end = std::min(block_start + d.block, d.extent);
    for (Index g = block_start; g < block_end; ++g) {
      Index &expected_local = next_local[static_cast<std::size_t>(block_owner)];
      if (d.owner(g) != block_owner) {
        return "owner(" + std::to_string(g) + ") = " + std::to_string(d.owner(g)) + ", expected " +
               std::to_string(block_owner);
      }
      if (d.local_index(g) != expected_local) {
        return "local_index(" + std::to_string(g) + ") = " + std::to_string(d.local_index(g)) +
               ", expected " + std::to_string(expected_local);
      }
      ++expected_local;
    }
    block_owner = (block_owner + 1) % d.nprocs;
  }
  for (int p = 0; p < d.nprocs; ++p) {
    if (d.local_extent(p) != next_local[static_cast<std::size_t>(p)]) {
      return "local_extent(" + std::to_string(p) + ") = " + std::to_string(d.local_extent(p)) +
             ", expected " + std::to_string(next_local[static_cast<std::size_t>(p)]);
    }
  }
  return {};
}

std::string check_period(const BlockCyclic &d) {
  const Index period = d.period();
  const Index local_step = d.nprocs == 1 ? period : period / d.nprocs;
  if (d.nprocs > 1 && period % d.nprocs != 0) {
    return "period " + std::to_string(period) + " is not a multiple of nprocs";
  }
  for (Index g = 0; g + period < d.extent; ++g) {
    if (d.owner(g + period) != d.owner(g) ||
        d.local_index(g + period) != d.local_index(g) + local_step) {
      return "pattern does not repeat with period " + std::to_string(period) +
             " at g=" + std::to_string(g);
    }
  }
  return {};
}

TEST(BlockCyclic, MatchesEnumerationOnRandomParameters) {
  Random rng(test_seed(20240611));
  constexpr int cases = 20000;
  int failures = 0;
  for (int c = 0; c < cases && failures < 5; ++c) {
    const BlockCyclic d = random_dimension(rng, 500, 40, 17);
    if (const std::string err = check_against_enumeration(d); !err.empty()) {
      ADD_FAILURE() << describe(d) << ": " << err;
      ++failures;
    }
    if (const std::string err = check_period(d); !err.empty()) {
      ADD_FAILURE() << describe(d) << ": " << err;
      ++failures;
    }
  }
}

TEST(BlockCyclic, MatchesEnumerationExhaustivelyOnSmallParameters) {
  int failures = 0;
  for (Index extent = 0; extent <= 48; ++extent) {
    for (Index block = 1; block <= 12; ++block) {
      for (int nprocs = 1; nprocs <= 7; ++nprocs) {
        for (int src = 0; src < nprocs && failures < 5; ++src) {
          const BlockCyclic d{extent, block, nprocs, src};
          if (const std::string err = check_against_enumeration(d); !err.empty()) {
            ADD_FAILURE() << describe(d) << ": " << err;
            ++failures;
          }
        }
      }
    }
  }
}

TEST(BlockCyclic, LocalExtentsSumToExtentAtLargeSizes) {
  Random rng(test_seed(77));
  const Index extents[] = {
      0, 1, 999, 1'000'000, 1'000'000'007, Index{1} << 40, (Index{1} << 50) + 12345};
  for (const Index extent : extents) {
    for (int c = 0; c < 200; ++c) {
      const Index block = rng.uniform(1, 1000);
      const int nprocs = rng.uniform_int(1, 300);
      const BlockCyclic d{extent, block, nprocs, rng.uniform_int(0, nprocs - 1)};
      Index sum = 0;
      Index smallest = extent;
      Index largest = 0;
      for (int p = 0; p < nprocs; ++p) {
        const Index n = d.local_extent(p);
        sum += n;
        smallest = std::min(smallest, n);
        largest = std::max(largest, n);
      }
      ASSERT_EQ(sum, extent) << describe(d);
      ASSERT_LE(largest - smallest, block) << describe(d);
      ASSERT_EQ(d.local_extent(d.src), largest) << describe(d);
      if (extent > 0) {
        const Index last = extent - 1;
        ASSERT_EQ(d.local_index(last), d.local_extent(d.owner(last)) - 1) << describe(d);
      }
    }
  }
}

TEST(BlockCyclic, HandPickedValues) {
  struct Case {
    BlockCyclic d;
    Index g = 0;
    int owner = 0;
    Index local = 0;
  };
  const Case cases[] = {
      {{10, 3, 2, 0}, 0, 0, 0},  {{10, 3, 2, 0}, 3, 1, 0}, {{10, 3, 2, 0}, 6, 0, 3},
      {{10, 3, 2, 0}, 9, 1, 3},  {{10, 3, 2, 1}, 0, 1, 0}, {{10, 3, 2, 1}, 4, 0, 1},
      {{7, 100, 4, 3}, 6, 3, 6}, {{20, 1, 3, 2}, 5, 1, 1}, {{20, 4, 1, 0}, 17, 0, 17},
  };
  for (const Case &c : cases) {
    EXPECT_EQ(c.d.owner(c.g), c.owner) << describe(c.d) << " g=" << c.g;
    EXPECT_EQ(c.d.local_index(c.g), c.local) << describe(c.d) << " g=" << c.g;
  }
  // Blocks 0 and 2 on process 1, blocks 1 and 3 (the short one) on process 0.
  EXPECT_EQ((BlockCyclic{10, 3, 2, 1}.local_extent(1)), 6);
  EXPECT_EQ((BlockCyclic{10, 3, 2, 1}.local_extent(0)), 4);
  EXPECT_EQ((BlockCyclic{7, 100, 4, 3}.local_extent(3)), 7);
  EXPECT_EQ((BlockCyclic{7, 100, 4, 3}.local_extent(0)), 0);
  EXPECT_EQ((BlockCyclic{0, 5, 3, 1}.local_extent(1)), 0);
}

TEST(Grid, RankAtAndFindAreInverse) {
  const Grid grid{2, 3, {5, 1, 4, 0, 7, 2}};
  EXPECT_EQ(grid.rank_at(0, 0), 5);
  EXPECT_EQ(grid.rank_at(1, 0), 1);
  EXPECT_EQ(grid.rank_at(0, 1), 4);
  EXPECT_EQ(grid.rank_at(1, 2), 2);
  for (int pr = 0; pr < grid.nprow; ++pr) {
    for (int pc = 0; pc < grid.npcol; ++pc) {
      int found_r = -1;
      int found_c = -1;
      ASSERT_TRUE(grid.find(grid.rank_at(pr, pc), found_r, found_c));
      EXPECT_EQ(found_r, pr);
      EXPECT_EQ(found_c, pc);
    }
  }
  int r = -1;
  int c = -1;
  EXPECT_FALSE(grid.find(3, r, c));
  EXPECT_FALSE(grid.find(-1, r, c));
}

constexpr Region::Kind kAllKinds[] = {Region::Kind::full, Region::Kind::upper, Region::Kind::lower};

TEST(Region, RowsInColumnMatchesPredicateExhaustively) {
  for (const Region::Kind kind : kAllKinds) {
    for (const bool unit_diag : {false, true}) {
      const Region region{kind, unit_diag};
      for (Index m = 0; m <= 40; ++m) {
        for (Index n = 0; n <= 40; ++n) {
          for (Index j = 0; j < n; ++j) {
            const auto [first, last] = region.rows_in_column(j, m, n);
            ASSERT_LE(0, first);
            ASSERT_LE(first, last);
            ASSERT_LE(last, m);
            for (Index i = 0; i < m; ++i) {
              ASSERT_EQ(first <= i && i < last, reference_copied(kind, unit_diag, i, j, m, n))
                  << "kind=" << static_cast<int>(kind) << " unit_diag=" << unit_diag << " m=" << m
                  << " n=" << n << " i=" << i << " j=" << j;
            }
          }
        }
      }
    }
  }
}

TEST(Region, HandPickedColumns) {
  using K = Region::Kind;
  struct Case {
    Region region;
    Index j = 0, m = 0, n = 0, first = 0, last = 0;
  };
  const Case cases[] = {
      {{K::upper, false}, 0, 3, 3, 0, 1}, {{K::upper, false}, 2, 3, 3, 0, 3},
      {{K::upper, true}, 0, 3, 3, 0, 0},  {{K::upper, true}, 2, 3, 3, 0, 2},
      {{K::upper, false}, 0, 5, 3, 0, 3}, {{K::upper, false}, 2, 5, 3, 0, 5},
      {{K::upper, false}, 0, 3, 5, 0, 1}, {{K::upper, false}, 4, 3, 5, 0, 3},
      {{K::lower, false}, 0, 3, 3, 0, 3}, {{K::lower, false}, 2, 3, 3, 2, 3},
      {{K::lower, true}, 0, 3, 3, 1, 3},  {{K::lower, true}, 2, 3, 3, 3, 3},
      {{K::lower, false}, 0, 3, 5, 0, 3}, {{K::lower, false}, 2, 3, 5, 0, 3},
      {{K::lower, false}, 4, 3, 5, 2, 3}, {{K::lower, false}, 0, 5, 3, 0, 5},
      {{K::lower, false}, 2, 5, 3, 2, 5}, {{K::full, true}, 1, 4, 2, 0, 4},
      {{K::upper, false}, 0, 0, 3, 0, 0}, {{K::lower, true}, 1, 1, 2, 1, 1},
  };
  for (const Case &c : cases) {
    const auto [first, last] = c.region.rows_in_column(c.j, c.m, c.n);
    EXPECT_EQ(first, c.first) << "kind=" << static_cast<int>(c.region.kind)
                              << " unit=" << c.region.unit_diag << " j=" << c.j << " m=" << c.m
                              << " n=" << c.n;
    EXPECT_EQ(last, c.last) << "kind=" << static_cast<int>(c.region.kind)
                            << " unit=" << c.region.unit_diag << " j=" << c.j << " m=" << c.m
                            << " n=" << c.n;
  }
}

} // namespace
} // namespace redist::test
