// Repeated execution of one plan (the ADI pattern): after the first execution, further
// executions allocate nothing from the C++ heap on any process, whatever the schedule and the
// way messages move (ctest runs it under each REDIST_SINGLE_COPY value), and every execution
// copies correctly (element oracle from global indices). The allocations are counted by
// replacing the global operator new in this program, which the library's calls resolve to.
#include <redist.h>

#include <gtest/gtest.h>
#include <mpi.h>

#include <atomic>
#include <cstdint>
#include <cstdlib>
#include <new>
#include <string>
#include <vector>

namespace {
std::atomic<long long> allocations{0};
} // namespace

void *operator new(std::size_t size) {
  ++allocations;
  if (void *p = std::malloc(size == 0 ? 1 : size)) {
    return p;
  }
  throw std::bad_alloc();
}
void *operator new[](std::size_t size) {
  return operator new(size);
}
void *operator new(std::size_t size, const std::nothrow_t &) noexcept {
  ++allocations;
  return std::malloc(size == 0 ? 1 : size);
}
void *operator new[](std::size_t size, const std::nothrow_t &tag) noexcept {
  return operator new(size, tag);
}
void operator delete(void *p) noexcept {
  std::free(p);
}
void operator delete[](void *p) noexcept {
  std::free(p);
}
void operator delete(void *p, std::size_t) noexcept {
  std::free(p);
}
void operator delete[](void *p, std::size_t) noexcept {
  std::free(p);
}

namespace {

struct Dimension {
  std::int64_t extent, block;
  int nprocs, first;

  [[nodiscard]] int owner(std::int64_t g) const {
    return static_cast<int>((g / block + first) % nprocs);
  }
  [[nodiscard]] std::int64_t local(std::int64_t g) const {
    return g / (block * nprocs) * block + g % block;
  }
  [[nodiscard]] std::int64_t local_extent(int p) const {
    std::int64_t count = 0;
    for (std::int64_t g = 0; g < extent; g += block) {
      if (owner(g) == p) {
        count += std::min(block, extent - g);
      }
    }
    return count;
  }
};

double value(std::int64_t gi, std::int64_t gj, int round) {
  return static_cast<double>(gi) * 1e5 + static_cast<double>(gj) + 0.25 * round;
}

struct Case {
  const char *name;
  std::int64_t m, n; // whole matrices (both the same size), window = whole - offsets
  std::int64_t amb, anb, bmb, bnb;
  int anprow, bnprow; // grids nprow x (P / nprow)
  std::int64_t ai, aj, bi, bj;
  int schedule;
  std::int64_t max_memory;
};

TEST(Repeat, LaterExecutionsAllocateNothing) {
  int size = 0;
  int rank = 0;
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  const int half = size % 2 == 0 ? 2 : 1;
  const Case cases[] = {
      {"blocks 64 -> 100", 700, 600, 64, 64, 100, 100, 1, 1, 0, 0, 0, 0, REDIST_SCHEDULE_AUTO, 0},
      {"grid change, offsets", 650, 610, 32, 48, 50, 20, half, 1, 3, 5, 7, 1,
       REDIST_SCHEDULE_ALL_AT_ONCE, 0},
      {"1x1 -> 64 blocks", 400, 420, 1, 1, 64, 64, 1, half, 0, 0, 0, 0, REDIST_SCHEDULE_AUTO, 0},
      {"stepwise under a cap", 500, 520, 16, 16, 40, 40, half, 1, 2, 2, 0, 0,
       REDIST_SCHEDULE_STEPWISE, 20000},
      {"multiphase", 600, 600, 2, 2, 3, 3, 1, 1, 0, 0, 0, 0, REDIST_SCHEDULE_MULTIPHASE, 0},
  };
  std::vector<int> ranks(static_cast<std::size_t>(size));
  for (int r = 0; r < size; ++r) {
    ranks[static_cast<std::size_t>(r)] = r;
  }
  for (const Case &c : cases) {
    SCOPED_TRACE(c.name);
    const std::int64_t m = c.m - std::max(c.ai, c.bi);
    const std::int64_t n = c.n - std::max(c.aj, c.bj);
    const Dimension arow{c.m, c.amb, c.anprow, 0};
    const Dimension acol{c.n, c.anb, size / c.anprow, 0};
    const Dimension brow{c.m, c.bmb, c.bnprow, 0};
    const Dimension bcol{c.n, c.bnb, size / c.bnprow, 0};
    // Column-major grids (redist_layout::ranks): position (pr, pc) is rank pr + pc * nprow.
    const int apr = rank % arow.nprocs;
    const int apc = rank / arow.nprocs;
    const int bpr = rank % brow.nprocs;
    const int bpc = rank / brow.nprocs;
    const std::int64_t alld = std::max<std::int64_t>(1, arow.local_extent(apr)) + 3;
    const std::int64_t blld = std::max<std::int64_t>(1, brow.local_extent(bpr)) + 2;
    redist_layout a{c.m, c.n, c.amb,        c.anb, arow.nprocs, acol.nprocs,
                    0,   0,   ranks.data(), c.ai,  c.aj,        alld};
    redist_layout b{c.m, c.n, c.bmb,        c.bnb, brow.nprocs, bcol.nprocs,
                    0,   0,   ranks.data(), c.bi,  c.bj,        blld};
    redist_options options;
    redist_options_init(&options);
    options.schedule = c.schedule;
    options.max_memory = c.max_memory;
    redist_plan plan = nullptr;
    ASSERT_EQ(redist_plan_create_opt(MPI_COMM_WORLD, m, n, REDIST_DOUBLE, &a, &b,
                                     REDIST_REGION_FULL, 0, &options, &plan),
              REDIST_SUCCESS)
        << redist_last_error();

    // Two source arrays at different addresses, alternated: the address moves each time.
    const auto a_size = static_cast<std::size_t>(alld * acol.local_extent(apc));
    std::vector<std::vector<double>> sources(2, std::vector<double>(a_size, -1.0));
    std::vector<double> target(static_cast<std::size_t>(blld * bcol.local_extent(bpc)), -2.0);
    const auto fill = [&](std::vector<double> &source, int round) {
      for (std::int64_t gj = 0; gj < c.n; ++gj) {
        for (std::int64_t gi = 0; gi < c.m; ++gi) {
          if (arow.owner(gi) == apr && acol.owner(gj) == apc) {
            source[static_cast<std::size_t>(arow.local(gi) + alld * acol.local(gj))] =
                value(gi, gj, round);
          }
        }
      }
    };
    long long counted = 0;
    int wrong = 0;
    for (int round = 0; round < 6; ++round) {
      std::vector<double> &source = sources[static_cast<std::size_t>(round % 2)];
      fill(source, round);
      const long long before = allocations.load();
      ASSERT_EQ(redist_plan_execute(plan, source.data(), target.data()), REDIST_SUCCESS)
          << redist_last_error();
      if (round > 0) {
        counted += allocations.load() - before;
      }
      // Oracle: B's window element (bi + k, bj + l) holds A's (ai + k, aj + l) of this round.
      for (std::int64_t gj = 0; gj < c.n; ++gj) {
        for (std::int64_t gi = 0; gi < c.m; ++gi) {
          if (brow.owner(gi) != bpr || bcol.owner(gj) != bpc) {
            continue;
          }
          const std::int64_t k = gi - c.bi;
          const std::int64_t l = gj - c.bj;
          const bool inside = k >= 0 && k < m && l >= 0 && l < n;
          const double expected = inside ? value(c.ai + k, c.aj + l, round) : -2.0;
          if (target[static_cast<std::size_t>(brow.local(gi) + blld * bcol.local(gj))] !=
              expected) {
            ++wrong;
          }
        }
      }
    }
    long long most = counted;
    MPI_Allreduce(MPI_IN_PLACE, &most, 1, MPI_LONG_LONG, MPI_MAX, MPI_COMM_WORLD);
    int wrong_anywhere = wrong;
    MPI_Allreduce(MPI_IN_PLACE, &wrong_anywhere, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    EXPECT_EQ(wrong_anywhere, 0);
    EXPECT_EQ(most, 0) << "operator new calls in executions 2-6 on the busiest process";
    ASSERT_EQ(redist_plan_destroy(&plan), REDIST_SUCCESS);
  }
}

} // namespace

int main(int argc, char **argv) {
  MPI_Init(&argc, &argv);
  ::testing::InitGoogleTest(&argc, argv);
  int rank = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  if (rank != 0) {
    ::testing::TestEventListeners &listeners = ::testing::UnitTest::GetInstance()->listeners();
    delete listeners.Release(listeners.default_result_printer());
  }
  const int result = RUN_ALL_TESTS();
  MPI_Finalize();
  return result;
}
