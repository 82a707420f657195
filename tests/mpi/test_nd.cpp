// N-d plans through the C API (redist_nd_plan_create, issue 16) against MPI's own darray
// datatypes: rank 0 builds a global array, scatters it with A's MPI_Type_create_darray types,
// redist moves it, rank 0 gathers B back with B's darray types and compares with the global
// array (axes permuted for redist_nd_plan_create_perm). Random layouts of rank 1-4 mixing
// BLOCK / CYCLIC(k) / NONE, both storage orders. Bad arguments: an error on every rank, B
// untouched. Every rank draws the same cases from one seed (REDIST_TEST_SEED).

#include <redist.h>

#include <gtest/gtest.h>
#include <mpi.h>

#include <algorithm>
#include <cstdint>
#include <cstdlib>
#include <numeric>
#include <random>
#include <string>
#include <vector>

namespace {

struct Darray {
  int ndims = 1;
  std::vector<int64_t> gsizes, dargs;
  std::vector<int> distribs, psizes;
  int order = MPI_ORDER_C;

  [[nodiscard]] redist_darray view() const {
    redist_darray d{};
    d.ndims = ndims;
    d.gsizes = gsizes.data();
    d.distribs = distribs.data();
    d.dargs = dargs.data();
    d.psizes = psizes.data();
    d.order = order;
    return d;
  }
  // MPI's darray type of `rank` over the global array (doubles, in this layout's order).
  [[nodiscard]] MPI_Datatype type(int size, int rank) const {
    std::vector<int> g(gsizes.begin(), gsizes.end());
    std::vector<int> a(dargs.begin(), dargs.end());
    MPI_Datatype t = MPI_DATATYPE_NULL;
    MPI_Type_create_darray(size, rank, ndims, g.data(), distribs.data(), a.data(), psizes.data(),
                           order, MPI_DOUBLE, &t);
    MPI_Type_commit(&t);
    return t;
  }
  [[nodiscard]] int local_count(int size, int rank) const {
    MPI_Datatype t = type(size, rank);
    int bytes = 0;
    MPI_Type_size(t, &bytes);
    MPI_Type_free(&t);
    return bytes / static_cast<int>(sizeof(double));
  }
  [[nodiscard]] int64_t elements() const {
    return std::accumulate(gsizes.begin(), gsizes.end(), int64_t{1}, std::multiplies<>());
  }
  // The multi-index at linear position p of the global array stored in this layout's order.
  [[nodiscard]] std::vector<int64_t> index_at(int64_t p) const {
    std::vector<int64_t> idx(static_cast<std::size_t>(ndims));
    for (int k = 0; k < ndims; ++k) {
      const int d = order == MPI_ORDER_C ? ndims - 1 - k : k; // fastest first
      idx[static_cast<std::size_t>(d)] = p % gsizes[static_cast<std::size_t>(d)];
      p /= gsizes[static_cast<std::size_t>(d)];
    }
    return idx;
  }
};

int comm_size() {
  int size = 0;
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  return size;
}
int comm_rank() {
  int rank = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  return rank;
}

// A uniform draw in [0, n).
int draw(std::mt19937 &rng, std::size_t n) {
  return static_cast<int>(rng() % n);
}

unsigned seed() {
  const char *s = std::getenv("REDIST_TEST_SEED");
  return s != nullptr ? static_cast<unsigned>(std::strtoul(s, nullptr, 10)) : 16u;
}

// A random layout over `size` processes of extents `gsizes`.
Darray random_layout(std::mt19937 &rng, const std::vector<int64_t> &gsizes, int size) {
  Darray d;
  d.ndims = static_cast<int>(gsizes.size());
  d.gsizes = gsizes;
  d.order = draw(rng, 2) == 0 ? MPI_ORDER_C : MPI_ORDER_FORTRAN;
  d.psizes.assign(gsizes.size(), 1);
  d.distribs.assign(gsizes.size(), MPI_DISTRIBUTE_NONE);
  d.dargs.assign(gsizes.size(), MPI_DISTRIBUTE_DFLT_DARG);
  for (std::size_t k = 0; k < gsizes.size(); ++k) {
    const int kind = draw(rng, 3);
    d.distribs[k] = kind == 0   ? MPI_DISTRIBUTE_NONE
                    : kind == 1 ? MPI_DISTRIBUTE_BLOCK
                                : MPI_DISTRIBUTE_CYCLIC;
  }
  if (std::count(d.distribs.begin(), d.distribs.end(), MPI_DISTRIBUTE_NONE) == d.ndims) {
    d.distribs[static_cast<std::size_t>(draw(rng, gsizes.size()))] = MPI_DISTRIBUTE_CYCLIC;
  }
  std::vector<std::size_t> distributed;
  for (std::size_t k = 0; k < gsizes.size(); ++k) {
    if (d.distribs[k] != MPI_DISTRIBUTE_NONE) distributed.push_back(k);
  }
  int rest = size;
  for (int f = 2; rest > 1; ++f) {
    while (rest % f == 0) {
      d.psizes[distributed[static_cast<std::size_t>(draw(rng, distributed.size()))]] *= f;
      rest /= f;
    }
  }
  for (std::size_t k = 0; k < gsizes.size(); ++k) {
    if (d.distribs[k] == MPI_DISTRIBUTE_CYCLIC && draw(rng, 2) == 0) {
      d.dargs[k] = 1 + draw(rng, 3);
    }
  }
  return d;
}

// Scatter the global array (values: the C-order linear index of A's multi-index) into A's
// local arrays with A's darray types.
std::vector<double> scatter(const Darray &a) {
  const int size = comm_size();
  const int rank = comm_rank();
  std::vector<double> global;
  std::vector<MPI_Request> sends;
  std::vector<MPI_Datatype> types;
  if (rank == 0) {
    global.resize(static_cast<std::size_t>(a.elements()));
    for (int64_t p = 0; p < a.elements(); ++p) {
      const auto idx = a.index_at(p);
      int64_t c = 0;
      for (int d = 0; d < a.ndims; ++d)
        c = c * a.gsizes[static_cast<std::size_t>(d)] + idx[d];
      global[static_cast<std::size_t>(p)] = static_cast<double>(c);
    }
    for (int r = 0; r < size; ++r) {
      types.push_back(a.type(size, r));
      sends.emplace_back();
      MPI_Isend(global.data(), 1, types.back(), r, 1, MPI_COMM_WORLD, &sends.back());
    }
  }
  std::vector<double> local(static_cast<std::size_t>(a.local_count(size, rank)));
  MPI_Recv(local.data(), static_cast<int>(local.size()), MPI_DOUBLE, 0, 1, MPI_COMM_WORLD,
           MPI_STATUS_IGNORE);
  MPI_Waitall(static_cast<int>(sends.size()), sends.data(), MPI_STATUSES_IGNORE);
  for (MPI_Datatype &t : types)
    MPI_Type_free(&t);
  return local;
}

// Gather B's local arrays into the global array of B (in B's order) on rank 0, and check
// element by element: B's multi-index m holds A's element with index m[d] along perm[d].
// Returns the number of wrong elements (the same on every rank).
long long gather_and_check(const Darray &a, const Darray &b, const std::vector<int> &perm,
                           const std::vector<double> &local) {
  const int size = comm_size();
  const int rank = comm_rank();
  MPI_Request send = MPI_REQUEST_NULL;
  MPI_Isend(local.data(), static_cast<int>(local.size()), MPI_DOUBLE, 0, 2, MPI_COMM_WORLD, &send);
  long long wrong = 0;
  if (rank == 0) {
    std::vector<double> global(static_cast<std::size_t>(b.elements()), -1.0);
    for (int r = 0; r < size; ++r) {
      MPI_Datatype t = b.type(size, r);
      MPI_Recv(global.data(), 1, t, r, 2, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
      MPI_Type_free(&t);
    }
    for (int64_t p = 0; p < b.elements(); ++p) {
      const auto m = b.index_at(p);
      std::vector<int64_t> ai(static_cast<std::size_t>(a.ndims));
      for (int d = 0; d < b.ndims; ++d)
        ai[static_cast<std::size_t>(perm[d])] = m[d];
      int64_t c = 0;
      for (int d = 0; d < a.ndims; ++d)
        c = c * a.gsizes[static_cast<std::size_t>(d)] + ai[d];
      wrong += global[static_cast<std::size_t>(p)] == static_cast<double>(c) ? 0 : 1;
    }
  }
  MPI_Wait(&send, MPI_STATUS_IGNORE);
  MPI_Bcast(&wrong, 1, MPI_LONG_LONG, 0, MPI_COMM_WORLD);
  return wrong;
}

TEST(NdPlan, RandomLayoutsAgainstDarray) {
  std::mt19937 rng(seed());
  const int size = comm_size();
  const int rank = comm_rank();
  for (int c = 0; c < 120; ++c) {
    const int ndims = 1 + draw(rng, 4);
    std::vector<int64_t> gsizes(static_cast<std::size_t>(ndims));
    for (auto &g : gsizes)
      g = 1 + draw(rng, ndims <= 2 ? 13 : 6);
    std::vector<int> perm(static_cast<std::size_t>(ndims));
    std::iota(perm.begin(), perm.end(), 0);
    const bool permuted = c % 3 == 2;
    if (permuted) std::shuffle(perm.begin(), perm.end(), rng);
    std::vector<int64_t> bsizes(gsizes.size());
    for (int d = 0; d < ndims; ++d)
      bsizes[d] = gsizes[static_cast<std::size_t>(perm[d])];
    const Darray a = random_layout(rng, gsizes, size);
    const Darray b = random_layout(rng, bsizes, size);
    const std::vector<double> a_local = scatter(a);
    std::vector<double> b_local(static_cast<std::size_t>(b.local_count(size, rank)), -1.0);
    const redist_darray av = a.view();
    const redist_darray bv = b.view();
    redist_plan plan = nullptr;
    const int rc =
        permuted ? redist_nd_plan_create_perm(MPI_COMM_WORLD, REDIST_DOUBLE, &av, &bv, perm.data(),
                                              nullptr, &plan)
                 : redist_nd_plan_create(MPI_COMM_WORLD, REDIST_DOUBLE, &av, &bv, nullptr, &plan);
    EXPECT_EQ(rc, REDIST_SUCCESS) << "case " << c << ": " << redist_last_error();
    if (rc != REDIST_SUCCESS) continue; // the same on every rank
    for (int run = 0; run < 2; ++run) { // a plan executes again
      EXPECT_EQ(redist_plan_execute(plan, a_local.data(), b_local.data()), REDIST_SUCCESS);
      EXPECT_EQ(gather_and_check(a, b, perm, b_local), 0) << "case " << c << " run " << run;
    }
    redist_plan_info info{};
    EXPECT_EQ(redist_plan_get_info(plan, &info), REDIST_SUCCESS);
    EXPECT_EQ(info.bytes_local + info.bytes_received,
              static_cast<int64_t>(b_local.size() * sizeof(double)));
    EXPECT_EQ(info.bytes_local + info.bytes_sent,
              static_cast<int64_t>(a_local.size() * sizeof(double)));
    EXPECT_EQ(redist_plan_destroy(&plan), REDIST_SUCCESS);
  }
}

// Each bad argument: an error on every rank, no plan, B untouched.
TEST(NdPlan, ErrorsOnEveryRank) {
  const int size = comm_size();
  Darray good;
  good.ndims = 2;
  good.gsizes = {6, 5};
  good.distribs = {MPI_DISTRIBUTE_BLOCK, MPI_DISTRIBUTE_NONE};
  good.dargs = {MPI_DISTRIBUTE_DFLT_DARG, MPI_DISTRIBUTE_DFLT_DARG};
  good.psizes = {size, 1};
  struct Bad {
    const char *what;
    Darray b;
  };
  std::vector<Bad> cases;
  Darray d = good;
  d.ndims = 8;
  cases.push_back({"ndims 8", d});
  d = good;
  d.ndims = 0;
  cases.push_back({"ndims 0", d});
  d = good;
  d.distribs[1] = 12345;
  cases.push_back({"bad distrib", d});
  d = good;
  d.dargs[0] = 6 / size > 1 ? 6 / size - 1 : 0; // darg * psize < gsize (or darg 0)
  cases.push_back({"small darg", d});
  d = good;
  d.gsizes = {6, 4};
  cases.push_back({"extents differ", d});
  d = good;
  d.order = 77;
  cases.push_back({"bad order", d});
  const redist_darray av = good.view();
  for (const Bad &bad : cases) {
    const redist_darray bv = bad.b.view();
    redist_plan plan = nullptr;
    const int rc = redist_nd_plan_create(MPI_COMM_WORLD, REDIST_DOUBLE, &av, &bv, nullptr, &plan);
    EXPECT_NE(rc, REDIST_SUCCESS) << bad.what;
    EXPECT_EQ(plan, nullptr) << bad.what;
    int failed = rc != REDIST_SUCCESS ? 1 : 0;
    MPI_Allreduce(MPI_IN_PLACE, &failed, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
    EXPECT_EQ(failed, 1) << bad.what << ": not an error on every rank";
  }
  // An option that N-d plans do not take yet: named, not ignored.
  redist_options options;
  redist_options_init(&options);
  options.max_concurrent = 2;
  redist_plan plan = nullptr;
  EXPECT_EQ(redist_nd_plan_create(MPI_COMM_WORLD, REDIST_DOUBLE, &av, &av, &options, &plan),
            REDIST_ERR_ARGUMENT);
  EXPECT_NE(std::string(redist_last_error()).find("max_concurrent"), std::string::npos);
  // B untouched by a failed execution's argument check (NULL a where this rank sends).
  EXPECT_EQ(redist_nd_plan_create(MPI_COMM_WORLD, REDIST_DOUBLE, &av, &av, nullptr, &plan),
            REDIST_SUCCESS);
  std::vector<double> b(static_cast<std::size_t>(good.local_count(size, comm_rank())), -1.0);
  EXPECT_NE(redist_plan_execute(plan, nullptr, b.data()), REDIST_SUCCESS);
  for (const double x : b)
    EXPECT_EQ(x, -1.0);
  redist_plan_destroy(&plan);
}

} // namespace
