// N-d plans through the C API (redist_nd_plan_create) against MPI's own darray
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
#include <cstring>
#include <iostream>
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

// The schedule dimension of the random cases: every third case c runs under schedule
// (c / 3) % 9 (every redist_schedule in turn), a third of those under a max_concurrent limit and
// a third under a memory cap of 16-64 elements per process (messages cut into chunks of 8-32),
// a quarter with their own cost model; the other cases under the defaults (steps synchronise
// the ranks: on 2 oversubscribed cores they cost the most time). Explicit all-at-once takes no
// limit (ErrorsOnEveryRank checks that refusal).
redist_options case_options(std::mt19937 &rng, int c) {
  redist_options o;
  redist_options_init(&o);
  const int limit = draw(rng, 3);
  const bool cost_model = draw(rng, 4) == 0;
  if (c % 3 != 0) return o;
  o.schedule = (c / 3) % (REDIST_SCHEDULE_MULTIPHASE + 1);
  if (o.schedule != REDIST_SCHEDULE_ALL_AT_ONCE) {
    if (limit == 1) o.max_concurrent = 1 + draw(rng, 3);
    if (limit == 2) o.max_memory = static_cast<int64_t>(sizeof(double)) * (16 + draw(rng, 49));
  }
  if (cost_model) {
    o.alpha = 1e-5;
    o.beta = 1e-8;
  }
  return o;
}

std::string describe(const redist_options &o) {
  return std::string(redist_schedule_name(o.schedule)) + " k " + std::to_string(o.max_concurrent) +
         " max_memory " + std::to_string(o.max_memory);
}

// What redist_plan_get_info reports of the schedule: the one asked for; for auto and
// multiphase, two phases or, in one phase, all at once exactly when no limit asks for steps;
// a memory cap bounds the buffers (with two phases, the intermediate array too).
void check_schedule_info(const redist_options &o, const redist_plan_info &info) {
  const bool asked = o.schedule != REDIST_SCHEDULE_AUTO && o.schedule != REDIST_SCHEDULE_MULTIPHASE;
  const bool at_once = info.schedule == REDIST_SCHEDULE_ALL_AT_ONCE;
  const bool two_phases = info.schedule == REDIST_SCHEDULE_MULTIPHASE;
  EXPECT_EQ(info.schedule, asked ? o.schedule : info.schedule);
  EXPECT_NE(info.schedule, REDIST_SCHEDULE_AUTO);
  // Unasked and in one phase, steps come exactly with a limit that asks for them.
  EXPECT_TRUE(asked || two_phases || o.max_concurrent > 0 || o.max_memory > 0 || at_once);
  EXPECT_TRUE(asked || o.max_concurrent == 0 || !at_once);
  EXPECT_TRUE(at_once || o.max_memory == 0 || info.buffer_bytes <= o.max_memory)
      << info.buffer_bytes;
  EXPECT_GE(info.predicted_seconds, 0.0);
}

namespace {

// Case c: random layouts of extents gsizes (B's permuted every third case), redistributed
// twice, B gathered and checked against the global array; under `forced` options, else drawn.
// True when the plan ran in two phases.
bool run_random_case(std::mt19937 &rng, int c, const std::vector<int64_t> &gsizes,
                     const redist_options *forced = nullptr) {
  const int size = comm_size();
  const int rank = comm_rank();
  const int ndims = static_cast<int>(gsizes.size());
  std::vector<int> perm(static_cast<std::size_t>(ndims));
  std::iota(perm.begin(), perm.end(), 0);
  const bool permuted = c % 3 == 2;
  if (permuted) std::shuffle(perm.begin(), perm.end(), rng);
  std::vector<int64_t> bsizes(gsizes.size());
  for (int d = 0; d < ndims; ++d)
    bsizes[d] = gsizes[static_cast<std::size_t>(perm[d])];
  const Darray a = random_layout(rng, gsizes, size);
  const Darray b = random_layout(rng, bsizes, size);
  const redist_options options = forced != nullptr ? *forced : case_options(rng, c);
  SCOPED_TRACE("case " + std::to_string(c) + ": " + describe(options));
  const std::vector<double> a_local = scatter(a);
  std::vector<double> b_local(static_cast<std::size_t>(b.local_count(size, rank)), -1.0);
  const redist_darray av = a.view();
  const redist_darray bv = b.view();
  redist_plan plan = nullptr;
  const int rc =
      permuted ? redist_nd_plan_create_perm(MPI_COMM_WORLD, REDIST_DOUBLE, &av, &bv, perm.data(),
                                            &options, &plan)
               : redist_nd_plan_create(MPI_COMM_WORLD, REDIST_DOUBLE, &av, &bv, &options, &plan);
  EXPECT_EQ(rc, REDIST_SUCCESS) << "case " << c << ": " << redist_last_error();
  if (rc != REDIST_SUCCESS) return false; // the same on every rank
  // A plan executes again; in odd cases from a copy of A in redist_alloc's memory, which
  // receivers copy from (direct, bounced, mapped) instead of reading or unpacking.
  void *shared = nullptr;
  if (c % 2 == 1 && !a_local.empty() &&
      redist_alloc(a_local.size() * sizeof(double), &shared) == REDIST_SUCCESS) {
    std::memcpy(shared, a_local.data(), a_local.size() * sizeof(double));
  }
  for (int run = 0; run < 2; ++run) {
    const double *source =
        run == 1 && shared != nullptr ? static_cast<const double *>(shared) : a_local.data();
    std::fill(b_local.begin(), b_local.end(), -1.0);
    EXPECT_EQ(redist_plan_execute(plan, source, b_local.data()), REDIST_SUCCESS);
    EXPECT_EQ(gather_and_check(a, b, perm, b_local), 0) << "case " << c << " run " << run;
  }
  redist_plan_info info{};
  EXPECT_EQ(redist_plan_get_info(plan, &info), REDIST_SUCCESS);
  EXPECT_EQ(info.bytes_local + info.bytes_received,
            static_cast<int64_t>(b_local.size() * sizeof(double)));
  EXPECT_EQ(info.bytes_local + info.bytes_sent,
            static_cast<int64_t>(a_local.size() * sizeof(double)));
  check_schedule_info(options, info);
  EXPECT_EQ(redist_plan_destroy(&plan), REDIST_SUCCESS);
  redist_free(shared); // after the plan: its receivers keep the array mapped while it lives
  return info.schedule == REDIST_SCHEDULE_MULTIPHASE;
}

} // namespace

TEST(NdPlan, RandomLayoutsAgainstDarray) {
  std::mt19937 rng(seed());
  for (int c = 0; c < 120; ++c) {
    const int ndims = 1 + draw(rng, 4);
    std::vector<int64_t> gsizes(static_cast<std::size_t>(ndims));
    for (auto &g : gsizes)
      g = 1 + draw(rng, ndims <= 2 ? 13 : 6);
    run_random_case(rng, c, gsizes);
  }
}

// Kaushik et al.'s two phases through an N-d intermediate layout (multiphase, with and
// without limits): random layouts of rank 2-4 against the darray oracle; most of them have an
// intermediate layout (CYCLIC blocks that differ along a distributed dimension).
TEST(NdPlan, TwoPhasesAgainstDarray) {
  std::mt19937 rng(seed() + 2);
  int two_phases = 0;
  const int cases = 40;
  for (int c = 0; c < cases; ++c) {
    std::vector<int64_t> gsizes(static_cast<std::size_t>(2 + draw(rng, 3)));
    for (auto &g : gsizes)
      g = 2 + draw(rng, 10);
    redist_options o;
    redist_options_init(&o);
    o.schedule = REDIST_SCHEDULE_MULTIPHASE;
    const int limit = draw(rng, 4);
    if (limit == 1) o.max_concurrent = 1 + draw(rng, 3);
    if (limit == 2) o.max_memory = static_cast<int64_t>(sizeof(double)) * (64 + draw(rng, 512));
    two_phases += run_random_case(rng, c, gsizes, &o) ? 1 : 0;
  }
  if (comm_size() > 1) {
    EXPECT_GT(two_phases, cases / 4);
  }
  if (comm_rank() == 0) std::cout << "[   INFO   ] " << two_phases << " plans in two phases\n";
}

// Long rows: a fastest dimension of 40-200 elements, so that pieces reach hundreds of bytes
// (the interleaved packing collects those of 256 bytes and more, mpi_nd_np3_interleaved_*).
TEST(NdPlan, LongRowsAgainstDarray) {
  std::mt19937 rng(seed() + 1);
  for (int c = 0; c < 24; ++c) {
    std::vector<int64_t> gsizes(static_cast<std::size_t>(2 + draw(rng, 2)));
    for (auto &g : gsizes)
      g = 1 + draw(rng, 6);
    gsizes[static_cast<std::size_t>(draw(rng, 2)) * (gsizes.size() - 1)] = 40 + draw(rng, 161);
    run_random_case(rng, c, gsizes);
  }
}

// The element-by-element oracle, written apart from src/: one dimension's owner coordinate
// and local index of global index i.
struct Dim {
  int kind = MPI_DISTRIBUTE_NONE;
  int64_t extent = 1, darg = MPI_DISTRIBUTE_DFLT_DARG;
  int nprocs = 1;
  std::vector<int64_t> gen_block;

  [[nodiscard]] std::pair<int, int64_t> place(int64_t i) const {
    if (kind == REDIST_DISTRIBUTE_GEN_BLOCK) {
      int64_t first = 0;
      for (int c = 0;; ++c) {
        if (i < first + gen_block[static_cast<std::size_t>(c)]) return {c, i - first};
        first += gen_block[static_cast<std::size_t>(c)];
      }
    }
    if (kind == MPI_DISTRIBUTE_NONE) return {0, i};
    if (kind == MPI_DISTRIBUTE_BLOCK) {
      const int64_t b = darg > 0 ? darg : (extent + nprocs - 1) / nprocs;
      return {static_cast<int>(i / b), i % b};
    }
    const int64_t k = darg > 0 ? darg : 1;
    return {static_cast<int>((i / k) % nprocs), (i / (k * nprocs)) * k + i % k};
  }
  [[nodiscard]] int64_t count(int c) const {
    int64_t n = 0;
    for (int64_t i = 0; i < extent; ++i)
      n += place(i).first == c ? 1 : 0;
    return n;
  }
};

struct Layout {
  std::vector<Dim> dims;
  std::vector<int> ranks; // rank of each grid position, row-major
  int order = MPI_ORDER_C;
  std::vector<int64_t> starts, subsizes, local_extents;
  // Storage behind view().
  std::vector<int64_t> gsizes, dargs;
  std::vector<int> distribs, psizes;
  std::vector<const int64_t *> gen_blocks;
  int64_t pad = 0;

  [[nodiscard]] int ndims() const { return static_cast<int>(dims.size()); }
  // This rank's grid coordinates, or empty when it is not in the grid.
  [[nodiscard]] std::vector<int> coords(int rank) const {
    for (std::size_t p = 0; p < ranks.size(); ++p) {
      if (ranks[p] != rank) continue;
      std::vector<int> c(dims.size());
      auto q = static_cast<int>(p);
      for (int d = ndims() - 1; d >= 0; --d) {
        c[static_cast<std::size_t>(d)] = q % dims[static_cast<std::size_t>(d)].nprocs;
        q /= dims[static_cast<std::size_t>(d)].nprocs;
      }
      return c;
    }
    return {};
  }
  // Local extents (padded by `pad` along every dimension) and strides of `rank`.
  void storage(int rank, std::vector<int64_t> &extents, std::vector<int64_t> &strides) const {
    const std::vector<int> c = coords(rank);
    extents.assign(dims.size(), 0);
    strides.assign(dims.size(), 0);
    if (c.empty()) return;
    for (std::size_t d = 0; d < dims.size(); ++d)
      extents[d] = dims[d].count(c[d]) + pad;
    int64_t s = 1;
    for (int k = 0; k < ndims(); ++k) {
      const auto d = static_cast<std::size_t>(order == MPI_ORDER_C ? ndims() - 1 - k : k);
      strides[d] = s;
      s *= extents[d];
    }
  }
  [[nodiscard]] int64_t local_size(int rank) const {
    std::vector<int64_t> e, st;
    storage(rank, e, st);
    if (coords(rank).empty()) return 0;
    return std::accumulate(e.begin(), e.end(), int64_t{1}, std::multiplies<>());
  }
  redist_darray view(int rank) {
    gsizes.clear();
    dargs.clear();
    distribs.clear();
    psizes.clear();
    gen_blocks.clear();
    for (const Dim &d : dims) {
      gsizes.push_back(d.extent);
      dargs.push_back(d.darg);
      distribs.push_back(d.kind);
      psizes.push_back(d.nprocs);
      gen_blocks.push_back(d.gen_block.empty() ? nullptr : d.gen_block.data());
    }
    std::vector<int64_t> e, st;
    storage(rank, e, st);
    local_extents = e;
    redist_darray v{};
    v.ndims = ndims();
    v.gsizes = gsizes.data();
    v.distribs = distribs.data();
    v.dargs = dargs.data();
    v.gen_blocks = gen_blocks.data();
    v.psizes = psizes.data();
    v.order = order;
    v.ranks = ranks.data();
    v.starts = starts.data();
    v.subsizes = subsizes.data();
    v.local_extents = coords(rank).empty() ? nullptr : local_extents.data();
    return v;
  }
  // Visit every global index this rank owns with its offset in the local array.
  template <class F> void for_each_owned(int rank, F &&f) const {
    const std::vector<int> c = coords(rank);
    if (c.empty()) return;
    std::vector<int64_t> e, st;
    storage(rank, e, st);
    std::vector<int64_t> g(dims.size(), 0);
    int64_t total = 1;
    for (const Dim &d : dims)
      total *= d.extent;
    for (int64_t n = 0; n < total; ++n) {
      int64_t q = n;
      for (int d = ndims() - 1; d >= 0; --d) {
        g[static_cast<std::size_t>(d)] = q % dims[static_cast<std::size_t>(d)].extent;
        q /= dims[static_cast<std::size_t>(d)].extent;
      }
      int64_t offset = 0;
      bool mine = true;
      for (std::size_t d = 0; d < dims.size() && mine; ++d) {
        const auto [owner, local] = dims[d].place(g[d]);
        mine = owner == c[d];
        offset += local * st[d];
      }
      if (mine) f(g, offset);
    }
  }
};

// A random layout of extents `gsizes` on a random subset of the ranks, in random order.
Layout random_oracle_layout(std::mt19937 &rng, const std::vector<int64_t> &gsizes, int size) {
  Layout l;
  l.order = draw(rng, 2) == 0 ? MPI_ORDER_C : MPI_ORDER_FORTRAN;
  l.pad = draw(rng, 3) == 0 ? 1 : 0;
  const int procs = 1 + draw(rng, static_cast<std::size_t>(size));
  std::vector<int> all(static_cast<std::size_t>(size));
  std::iota(all.begin(), all.end(), 0);
  std::shuffle(all.begin(), all.end(), rng);
  l.ranks.assign(all.begin(), all.begin() + procs);
  l.dims.resize(gsizes.size());
  for (std::size_t d = 0; d < gsizes.size(); ++d) {
    l.dims[d].extent = gsizes[d];
    const int kind = draw(rng, 4);
    l.dims[d].kind = kind == 0   ? MPI_DISTRIBUTE_NONE
                     : kind == 1 ? MPI_DISTRIBUTE_BLOCK
                     : kind == 2 ? MPI_DISTRIBUTE_CYCLIC
                                 : REDIST_DISTRIBUTE_GEN_BLOCK;
  }
  std::vector<std::size_t> distributed;
  for (std::size_t d = 0; d < gsizes.size(); ++d) {
    if (l.dims[d].kind != MPI_DISTRIBUTE_NONE) distributed.push_back(d);
  }
  if (distributed.empty()) {
    distributed.push_back(0);
    l.dims[0].kind = MPI_DISTRIBUTE_CYCLIC;
  }
  int rest = procs;
  for (int f = 2; rest > 1; ++f) {
    while (rest % f == 0) {
      l.dims[distributed[static_cast<std::size_t>(draw(rng, distributed.size()))]].nprocs *= f;
      rest /= f;
    }
  }
  for (Dim &d : l.dims) {
    if (d.kind == MPI_DISTRIBUTE_CYCLIC && draw(rng, 2) == 0) d.darg = 1 + draw(rng, 3);
    if (d.kind == MPI_DISTRIBUTE_BLOCK && draw(rng, 2) == 0)
      d.darg = std::max<int64_t>(1, (d.extent + d.nprocs - 1) / d.nprocs) + draw(rng, 2);
    if (d.kind == REDIST_DISTRIBUTE_GEN_BLOCK) {
      d.gen_block.assign(static_cast<std::size_t>(d.nprocs), 0);
      for (int64_t i = 0; i < d.extent; ++i)
        d.gen_block[static_cast<std::size_t>(draw(rng, static_cast<std::size_t>(d.nprocs)))]++;
    }
  }
  return l;
}

// GEN_BLOCK, windows, padding, process subsets in any order, against the element oracle.
TEST(NdPlan, WindowsGenBlockPaddingAgainstElementOracle) {
  std::mt19937 rng(seed() + 1);
  const int size = comm_size();
  const int rank = comm_rank();
  for (int c = 0; c < 150; ++c) {
    const int ndims = 1 + draw(rng, 4);
    std::vector<int64_t> ga(static_cast<std::size_t>(ndims)), gb(ga.size()), window(ga.size());
    for (std::size_t d = 0; d < ga.size(); ++d) {
      window[d] = draw(rng, ndims <= 2 ? 9 : 5);
      ga[d] = window[d] + draw(rng, 3);
      gb[d] = window[d] + draw(rng, 3);
    }
    Layout a = random_oracle_layout(rng, ga, size);
    Layout b = random_oracle_layout(rng, gb, size);
    a.subsizes = window;
    b.subsizes = window;
    for (std::size_t d = 0; d < ga.size(); ++d) {
      a.starts.push_back(draw(rng, static_cast<std::size_t>(ga[d] - window[d] + 1)));
      b.starts.push_back(draw(rng, static_cast<std::size_t>(gb[d] - window[d] + 1)));
    }
    const auto linear = [&](const std::vector<int64_t> &g) {
      int64_t x = 0;
      for (std::size_t d = 0; d < g.size(); ++d)
        x = x * ga[d] + g[d];
      return static_cast<double>(x);
    };
    std::vector<double> a_local(static_cast<std::size_t>(a.local_size(rank)), -7.0);
    a.for_each_owned(rank, [&](const std::vector<int64_t> &g, int64_t off) {
      a_local[static_cast<std::size_t>(off)] = linear(g);
    });
    std::vector<double> b_local(static_cast<std::size_t>(b.local_size(rank)), -1.0);
    const redist_darray av = a.view(rank);
    const redist_darray bv = b.view(rank);
    const redist_options options = case_options(rng, c);
    SCOPED_TRACE("case " + std::to_string(c) + ": " + describe(options));
    redist_plan plan = nullptr;
    const int rc = redist_nd_plan_create(MPI_COMM_WORLD, REDIST_DOUBLE, &av, &bv, &options, &plan);
    EXPECT_EQ(rc, REDIST_SUCCESS) << "case " << c << ": " << redist_last_error();
    if (rc != REDIST_SUCCESS) return; // the same on every rank
    EXPECT_EQ(redist_plan_execute(plan, a_local.data(), b_local.data()), REDIST_SUCCESS);
    redist_plan_info info{};
    EXPECT_EQ(redist_plan_get_info(plan, &info), REDIST_SUCCESS);
    check_schedule_info(options, info);
    redist_plan_destroy(&plan);
    std::vector<double> expected(b_local.size(), -1.0);
    b.for_each_owned(rank, [&](const std::vector<int64_t> &g, int64_t off) {
      std::vector<int64_t> src(g.size());
      bool inside = true;
      for (std::size_t d = 0; d < g.size(); ++d) {
        inside = inside && g[d] >= b.starts[d] && g[d] < b.starts[d] + window[d];
        src[d] = g[d] - b.starts[d] + a.starts[d];
      }
      if (inside) expected[static_cast<std::size_t>(off)] = linear(src);
    });
    long long wrong = 0;
    for (std::size_t i = 0; i < b_local.size(); ++i)
      wrong += b_local[i] == expected[i] ? 0 : 1;
    MPI_Allreduce(MPI_IN_PLACE, &wrong, 1, MPI_LONG_LONG, MPI_SUM, MPI_COMM_WORLD);
    EXPECT_EQ(wrong, 0) << "case " << c;
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
  d.psizes = {2 * size, 1}; // more grid positions than ranks
  cases.push_back({"grid too large", d});
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
  // Options that cannot be honoured, or are invalid: an error on every rank naming the option,
  // no plan.
  struct BadOptions {
    const char *what;
    redist_options options;
  };
  std::vector<BadOptions> bad_options;
  redist_options o;
  redist_options_init(&o);
  o.schedule = REDIST_SCHEDULE_ALL_AT_ONCE;
  o.max_concurrent = 2;
  bad_options.push_back({"max_concurrent", o}); // all at once cannot honour a limit
  redist_options_init(&o);
  o.schedule = REDIST_SCHEDULE_STEPWISE;
  o.max_memory = 15;
  bad_options.push_back({"max_memory", o}); // below one element sent and one received
  redist_options_init(&o);
  o.schedule = 99;
  bad_options.push_back({"options->schedule", o});
  redist_options_init(&o);
  o.max_concurrent = -1;
  bad_options.push_back({"options->max_concurrent", o});
  redist_options_init(&o);
  o.alpha = -1.0;
  bad_options.push_back({"options->alpha", o});
  redist_plan plan = nullptr;
  for (const BadOptions &bad : bad_options) {
    const int rc =
        redist_nd_plan_create(MPI_COMM_WORLD, REDIST_DOUBLE, &av, &av, &bad.options, &plan);
    EXPECT_EQ(rc, REDIST_ERR_ARGUMENT) << bad.what;
    EXPECT_EQ(plan, nullptr) << bad.what;
    EXPECT_NE(std::string(redist_last_error()).find(bad.what), std::string::npos)
        << bad.what << ": " << redist_last_error();
    int failed = rc != REDIST_SUCCESS ? 1 : 0;
    MPI_Allreduce(MPI_IN_PLACE, &failed, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
    EXPECT_EQ(failed, 1) << bad.what << ": not an error on every rank";
  }
  // (BLOCK, *) -> (CYCLIC, *): all at once under a cap of one element sent and one received is
  // refused on every rank when rows move (a row is 5 elements); stepwise under the same cap
  // runs in chunks of one element, and B is what the definition says.
  Darray cyclic = good;
  cyclic.distribs[0] = MPI_DISTRIBUTE_CYCLIC;
  const redist_darray cv = cyclic.view();
  redist_options_init(&o);
  o.schedule = REDIST_SCHEDULE_ALL_AT_ONCE;
  o.max_memory = 16;
  const int refused = redist_nd_plan_create(MPI_COMM_WORLD, REDIST_DOUBLE, &av, &cv, &o, &plan);
  if (size > 1 && size < 6) { // rows move (from 6 ranks on, both put row r on rank r)
    EXPECT_EQ(refused, REDIST_ERR_ARGUMENT);
    EXPECT_EQ(plan, nullptr);
    EXPECT_NE(std::string(redist_last_error()).find("more than max_memory = 16"), std::string::npos)
        << redist_last_error();
  }
  redist_plan_destroy(&plan);
  o.schedule = REDIST_SCHEDULE_STEPWISE;
  ASSERT_EQ(redist_nd_plan_create(MPI_COMM_WORLD, REDIST_DOUBLE, &av, &cv, &o, &plan),
            REDIST_SUCCESS)
      << redist_last_error();
  const int rank = comm_rank();
  const int64_t rows_per_rank = (6 + size - 1) / size;
  std::vector<double> a_rows(static_cast<std::size_t>(good.local_count(size, rank)));
  for (std::size_t i = 0; i < a_rows.size(); ++i)
    a_rows[i] = static_cast<double>(rank * rows_per_rank * 5 + static_cast<int64_t>(i));
  std::vector<double> b_rows(static_cast<std::size_t>(cyclic.local_count(size, rank)), -1.0);
  EXPECT_EQ(redist_plan_execute(plan, a_rows.data(), b_rows.data()), REDIST_SUCCESS);
  for (std::size_t i = 0; i < b_rows.size(); ++i) {
    const auto row = static_cast<int64_t>(i / 5) * size + rank; // CYCLIC(1) over the ranks
    EXPECT_EQ(b_rows[i], static_cast<double>(row * 5 + static_cast<int64_t>(i % 5))) << i;
  }
  redist_plan_info info{};
  EXPECT_EQ(redist_plan_get_info(plan, &info), REDIST_SUCCESS);
  EXPECT_EQ(info.schedule, REDIST_SCHEDULE_STEPWISE);
  EXPECT_LE(info.buffer_bytes, 16);
  // A bad argument at a stepwise execution: an error on every rank, B untouched.
  const std::vector<double> before = b_rows;
  EXPECT_NE(redist_plan_execute(plan, a_rows.empty() ? a_rows.data() : nullptr, b_rows.data()),
            REDIST_SUCCESS);
  EXPECT_EQ(b_rows, before);
  redist_plan_destroy(&plan);
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
