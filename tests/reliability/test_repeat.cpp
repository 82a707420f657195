// Repeated execution of one plan (the ADI pattern): after the first execution, further
// executions allocate nothing from the C++ heap on any process, whatever the schedule and the
// way messages move (ctest runs it under each REDIST_SINGLE_COPY value), and every execution
// copies correctly (the MPI tests' element oracle, tests/mpi/harness.hpp). The allocations are
// counted by replacing the global operator new in this program, which the library's calls resolve
// to.
#include "../errors/error_support.hpp"
#include "../mpi/harness.hpp"

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

using mpitest::GridSpec;
using mpitest::LocalBuf;
using mpitest::MatSpec;

// Ranks 0, 1, ... in an nprow x (world size / nprow) grid, column-major.
GridSpec grid(int nprow) {
  std::vector<int> ranks(static_cast<std::size_t>(mpitest::world_size() / nprow * nprow));
  for (std::size_t r = 0; r < ranks.size(); ++r)
    ranks[r] = static_cast<int>(r);
  return errtest::map_grid(nprow, mpitest::world_size() / nprow, std::move(ranks));
}

MatSpec matrix(GridSpec g, std::int64_t mg, std::int64_t ng, std::int64_t mb, std::int64_t nb,
               std::int64_t ia, std::int64_t ja, std::int64_t lld_extra) {
  return errtest::matrix(std::move(g), mg, ng, mb, nb, 0, 0, ia, ja, lld_extra);
}

struct Case {
  const char *name;
  MatSpec a, b;
  std::int64_t m, n; // window
  int schedule;
  std::int64_t max_memory;
};

TEST(Repeat, LaterExecutionsAllocateNothing) {
  const int rank = mpitest::world_rank();
  const int half = mpitest::world_size() % 2 == 0 ? 2 : 1;
  const Case cases[] = {
      {"blocks 64 -> 100", matrix(grid(1), 700, 600, 64, 64, 1, 1, 3),
       matrix(grid(1), 700, 600, 100, 100, 1, 1, 2), 700, 600, REDIST_SCHEDULE_AUTO, 0},
      {"grid change, offsets", matrix(grid(half), 650, 610, 32, 48, 4, 6, 3),
       matrix(grid(1), 650, 610, 50, 20, 8, 2, 0), 640, 600, REDIST_SCHEDULE_ALL_AT_ONCE, 0},
      {"1x1 -> 64 blocks", matrix(grid(1), 400, 420, 1, 1, 1, 1, 0),
       matrix(grid(half), 400, 420, 64, 64, 1, 1, 5), 400, 420, REDIST_SCHEDULE_AUTO, 0},
      {"stepwise under a cap", matrix(grid(half), 500, 520, 16, 16, 3, 3, 1),
       matrix(grid(1), 500, 520, 40, 40, 1, 1, 0), 490, 510, REDIST_SCHEDULE_STEPWISE, 20000},
      {"multiphase", matrix(grid(1), 600, 600, 2, 2, 1, 1, 0),
       matrix(grid(1), 600, 600, 3, 3, 1, 1, 0), 600, 600, REDIST_SCHEDULE_MULTIPHASE, 0},
      {"small messages", matrix(grid(1), 40, 36, 4, 4, 1, 1, 1),
       matrix(grid(half), 40, 36, 8, 8, 2, 1, 0), 38, 36, REDIST_SCHEDULE_AUTO, 0},
  };
  for (const Case &c : cases) {
    SCOPED_TRACE(c.name);
    const LocalBuf la = mpitest::local_buf(c.a, rank);
    const LocalBuf lb = mpitest::local_buf(c.b, rank);
    const redist_layout a = mpitest::c_layout(c.a, c.a.grid.ranks.data(), la.lld);
    const redist_layout b = mpitest::c_layout(c.b, c.b.grid.ranks.data(), lb.lld);
    redist_options options;
    redist_options_init(&options);
    options.schedule = c.schedule;
    options.max_memory = c.max_memory;
    redist_plan plan = nullptr;
    ASSERT_EQ(redist_plan_create_opt(MPI_COMM_WORLD, c.m, c.n, REDIST_DOUBLE, &a, &b,
                                     REDIST_REGION_FULL, 0, &options, &plan),
              REDIST_SUCCESS)
        << redist_last_error();

    // Two source arrays at different addresses, alternated: the address moves each time.
    std::vector<std::vector<double>> sources(2);
    std::vector<double> target;
    mpitest::fill_sentinel(lb, 0, target);
    const mpitest::CopySpec copy{mpitest::Region::Full, false, c.m, c.n};
    long long counted = 0;
    std::int64_t wrong = 0;
    std::string report;
    for (int round = 0; round < 6; ++round) {
      std::vector<double> &source = sources[static_cast<std::size_t>(round % 2)];
      mpitest::fill_a(c.a, la, round + 1, source);
      const long long before = allocations.load();
      ASSERT_EQ(redist_plan_execute(plan, source.data(), target.data()), REDIST_SUCCESS)
          << redist_last_error();
      if (round > 0) {
        counted += allocations.load() - before;
      }
      wrong += mpitest::check_b(copy, c.a, c.b, lb, target.data(), round + 1, 0, report);
    }
    long long most = counted;
    MPI_Allreduce(MPI_IN_PLACE, &most, 1, MPI_LONG_LONG, MPI_MAX, MPI_COMM_WORLD);
    EXPECT_EQ(wrong, 0) << report;
    EXPECT_EQ(most, 0) << "operator new calls in executions 2-6 on the busiest process";
    ASSERT_EQ(redist_plan_destroy(&plan), REDIST_SUCCESS);
  }
}

} // namespace
