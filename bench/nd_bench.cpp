// nd_bench: N-d redistributions -- 3-D pencil and slab transposes of an
// n^3 double array and CYCLIC(4, 8, 1) -> CYCLIC(16, 1, 2) -- through redist_nd_plan_create,
// against MPI_Alltoallw with one datatype per pair (as FFT libraries and hand-written MPI
// programs do it) and against one memcpy of the busiest rank's bytes, in the same run.
//
//   mpirun --oversubscribe -n 2|4 nd_bench [--n N] [--reps R] [--case NAME] [--shared]
//                                          [--schedule NAME]
//
// Datatypes of the competitor: for the BLOCK cases one MPI_Type_create_subarray per peer (the
// intersection of the two blocks, inside the local array); for the CYCLIC case, per peer and
// dimension the local indices of the intersection of the two block-cyclic sets as runs, nested
// from the fastest dimension out with MPI_Type_create_hindexed over the inner type resized to
// the dimension's stride (what MPI_Type_create_darray builds, restricted to one peer).
// Both sides list the pair's elements in increasing global index, so the types match.
//
// Grids (C order, rank = row-major grid position as in darray): at 2 ranks the source's first
// distributed dimension has 2 processes and the destination's last (so half of every array
// moves); at 4 ranks both distributed dimensions have 2.
//
// Timing: MPI_Barrier, MPI_Wtime around one call, maximum over ranks; one warm-up of each
// (redist negotiates its ways on its first execution, the mapped way from its second: two
// warm-ups), then --reps repetitions alternating redist, Alltoallw and memcpy; medians.
// The memcpy moves max over ranks of (bytes kept + sent + received) on every rank at once,
// from one buffer to another (first touched before timing). redist's B is compared element
// by element with Alltoallw's B after the timed runs.
// --shared: A and B from redist_alloc (receivers may map the sender's array).
// --schedule: redist's plans under that schedule (redist_schedule_name: stepwise, multiphase,
// ...; default auto); the plan line names the schedule each plan runs.
#include <mpi.h>

#include "redist.h"
#include "timing.hpp"

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <string>
#include <vector>

namespace {

constexpr int kDims = 3;

struct Dim {
  int distrib = MPI_DISTRIBUTE_NONE;
  int64_t darg = MPI_DISTRIBUTE_DFLT_DARG;
  int procs = 1;
};

struct Layout {
  Dim dims[kDims];
};

struct Case {
  std::string name;
  Layout a;
  Layout b;
  bool block; // Alltoallw with subarray types (else nested hindexed)
};

// Owner coordinate and local index of global index g along a dimension of extent n.
int64_t block_size(const Dim &d, int64_t n) {
  return d.darg == MPI_DISTRIBUTE_DFLT_DARG ? (n + d.procs - 1) / d.procs : d.darg;
}
int owner(const Dim &d, int64_t n, int64_t g) {
  switch (d.distrib) {
  case MPI_DISTRIBUTE_BLOCK:
    return static_cast<int>(g / block_size(d, n));
  case MPI_DISTRIBUTE_CYCLIC: {
    const int64_t k = d.darg == MPI_DISTRIBUTE_DFLT_DARG ? 1 : d.darg;
    return static_cast<int>((g / k) % d.procs);
  }
  default:
    return 0;
  }
}
int64_t local_index(const Dim &d, int64_t n, int64_t g) {
  switch (d.distrib) {
  case MPI_DISTRIBUTE_BLOCK:
    return g % block_size(d, n);
  case MPI_DISTRIBUTE_CYCLIC: {
    const int64_t k = d.darg == MPI_DISTRIBUTE_DFLT_DARG ? 1 : d.darg;
    return (g / (k * d.procs)) * k + g % k;
  }
  default:
    return g;
  }
}

struct Side {
  int coords[kDims]{};
  int64_t extents[kDims]{}; // local counts
  bool member = false;
};

Side side_of(const Layout &l, int64_t n, int rank) {
  Side s;
  const int size = l.dims[0].procs * l.dims[1].procs * l.dims[2].procs;
  s.member = rank < size;
  if (!s.member) return s;
  int r = rank;
  for (int d = kDims - 1; d >= 0; --d) {
    s.coords[d] = r % l.dims[d].procs;
    r /= l.dims[d].procs;
  }
  for (int d = 0; d < kDims; ++d) {
    int64_t count = 0;
    for (int64_t g = 0; g < n; ++g)
      count += owner(l.dims[d], n, g) == s.coords[d] ? 1 : 0;
    s.extents[d] = count;
  }
  return s;
}

// Local indices, on side `l` at coordinate `mine`, of the global indices along d owned by
// `mine` there and by `other` on the other side `o`, as runs (start, length).
std::vector<std::pair<int64_t, int64_t>> runs(const Dim &l, int mine, const Dim &o, int other,
                                              int64_t n) {
  std::vector<std::pair<int64_t, int64_t>> out;
  for (int64_t g = 0; g < n; ++g) {
    if (owner(l, n, g) != mine || owner(o, n, g) != other) continue;
    const int64_t i = local_index(l, n, g);
    if (!out.empty() && out.back().first + out.back().second == i)
      ++out.back().second;
    else
      out.push_back({i, 1});
  }
  return out;
}

// The datatype of the elements of the local array (extents `ext`, C order) whose per-dimension
// local indices are runs[d]; MPI_DATATYPE_NULL-like empty: count 0.
MPI_Datatype pair_type(const std::vector<std::pair<int64_t, int64_t>> (&r)[kDims],
                       const int64_t (&ext)[kDims], bool subarray, int64_t &elements) {
  elements = 1;
  for (int d = 0; d < kDims; ++d) {
    int64_t c = 0;
    for (const auto &run : r[d])
      c += run.second;
    elements *= c;
  }
  MPI_Datatype t = MPI_DOUBLE;
  if (elements == 0) {
    MPI_Type_contiguous(0, MPI_DOUBLE, &t);
    MPI_Type_commit(&t);
    return t;
  }
  if (subarray) {
    int sizes[kDims], subsizes[kDims], starts[kDims];
    for (int d = 0; d < kDims; ++d) {
      sizes[d] = static_cast<int>(ext[d]);
      subsizes[d] = static_cast<int>(r[d].front().second);
      starts[d] = static_cast<int>(r[d].front().first);
      if (r[d].size() != 1) {
        std::fprintf(stderr, "nd_bench: a BLOCK case with several runs\n");
        MPI_Abort(MPI_COMM_WORLD, 1);
      }
    }
    MPI_Type_create_subarray(kDims, sizes, subsizes, starts, MPI_ORDER_C, MPI_DOUBLE, &t);
    MPI_Type_commit(&t);
    return t;
  }
  MPI_Aint stride = sizeof(double);
  for (int d = kDims - 1; d >= 0; --d) {
    MPI_Datatype inner = MPI_DATATYPE_NULL;
    MPI_Type_create_resized(t, 0, stride, &inner);
    if (t != MPI_DOUBLE) MPI_Type_free(&t);
    std::vector<int> lengths;
    std::vector<MPI_Aint> displacements;
    for (const auto &run : r[d]) {
      lengths.push_back(static_cast<int>(run.second));
      displacements.push_back(static_cast<MPI_Aint>(run.first) * stride);
    }
    MPI_Type_create_hindexed(static_cast<int>(lengths.size()), lengths.data(), displacements.data(),
                             inner, &t);
    MPI_Type_free(&inner);
    stride *= static_cast<MPI_Aint>(ext[d]);
  }
  MPI_Type_commit(&t);
  return t;
}

redist_darray darray_of(const Layout &l, const int64_t (&gsizes)[kDims], int (&distribs)[kDims],
                        int64_t (&dargs)[kDims], int (&psizes)[kDims]) {
  for (int d = 0; d < kDims; ++d) {
    distribs[d] = l.dims[d].distrib;
    dargs[d] = l.dims[d].darg;
    psizes[d] = l.dims[d].procs;
  }
  redist_darray a{};
  a.ndims = kDims;
  a.gsizes = gsizes;
  a.distribs = distribs;
  a.dargs = dargs;
  a.psizes = psizes;
  a.order = MPI_ORDER_C;
  return a;
}

Dim block(int p) {
  return {MPI_DISTRIBUTE_BLOCK, MPI_DISTRIBUTE_DFLT_DARG, p};
}
Dim none() {
  return {MPI_DISTRIBUTE_NONE, MPI_DISTRIBUTE_DFLT_DARG, 1};
}
Dim cyclic(int64_t k, int p) {
  return {MPI_DISTRIBUTE_CYCLIC, k, p};
}

std::vector<Case> cases(int np) {
  // 2 ranks: the source's first distributed dimension split, the destination's last; 4: 2 x 2.
  const int f = np == 4 ? 2 : np; // first distributed dimension
  const int s = np == 4 ? 2 : 1;  // second
  const int ff = np == 4 ? 2 : 1; // destination: first distributed dimension
  const int ss = np == 4 ? 2 : np;
  return {
      {"(B,B,*)->(*,B,B)", {{block(f), block(s), none()}}, {{none(), block(ff), block(ss)}}, true},
      {"(*,B,B)->(B,*,B)", {{none(), block(f), block(s)}}, {{block(ff), none(), block(ss)}}, true},
      {"(B,*,B)->(B,B,*)", {{block(f), none(), block(s)}}, {{block(ff), block(ss), none()}}, true},
      {"C(4,8,1)->C(16,1,2)",
       {{cyclic(4, f), cyclic(8, s), cyclic(1, 1)}},
       {{cyclic(16, 1), cyclic(1, ff), cyclic(2, ss)}},
       false},
  };
}

} // namespace

int main(int argc, char **argv) {
  MPI_Init(&argc, &argv);
  int me = 0, np = 1;
  MPI_Comm_rank(MPI_COMM_WORLD, &me);
  MPI_Comm_size(MPI_COMM_WORLD, &np);
  int64_t n = 512;
  int reps = 7;
  bool shared = false;
  std::string only;
  redist_options options;
  redist_options_init(&options);
  for (int i = 1; i < argc; ++i) {
    if (!std::strcmp(argv[i], "--n") && i + 1 < argc)
      n = std::atoll(argv[++i]);
    else if (!std::strcmp(argv[i], "--reps") && i + 1 < argc)
      reps = std::max(1, std::atoi(argv[++i]));
    else if (!std::strcmp(argv[i], "--case") && i + 1 < argc)
      only = argv[++i];
    else if (!std::strcmp(argv[i], "--shared"))
      shared = true;
    else if (!std::strcmp(argv[i], "--schedule") && i + 1 < argc) {
      const char *name = argv[++i];
      options.schedule = -1;
      for (int s = 0; s <= REDIST_SCHEDULE_MULTIPHASE; ++s) {
        const char *known = redist_schedule_name(s);
        if (known != nullptr && !std::strcmp(known, name)) options.schedule = s;
      }
      if (options.schedule < 0) {
        if (me == 0) std::fprintf(stderr, "nd_bench: unknown schedule %s\n", name);
        MPI_Finalize();
        return 2;
      }
    }
  }
  if (np != 2 && np != 4) {
    if (me == 0) std::fprintf(stderr, "nd_bench: run on 2 or 4 ranks\n");
    MPI_Finalize();
    return 1;
  }
  const char *env = std::getenv("REDIST_SINGLE_COPY");
  if (me == 0)
    std::printf("nd_bench: %lld^3 doubles, %d ranks, %d reps, arrays from %s, "
                "REDIST_SINGLE_COPY=%s\n"
                "%-22s %12s %12s %12s %10s %10s\n",
                static_cast<long long>(n), np, reps, shared ? "redist_alloc" : "new",
                env ? env : "", "case", "redist s", "alltoallw s", "memcpy s", "a2aw/red",
                "red/memcpy");
  int failures = 0;
  const int64_t gsizes[kDims] = {n, n, n};
  for (const Case &c : cases(np)) {
    if (!only.empty() && c.name != only) continue;
    const Side sa = side_of(c.a, n, me);
    const Side sb = side_of(c.b, n, me);
    const int64_t na = sa.extents[0] * sa.extents[1] * sa.extents[2];
    const int64_t nb = sb.extents[0] * sb.extents[1] * sb.extents[2];
    const auto allocate = [&](int64_t elements) {
      void *p = nullptr;
      const size_t bytes = static_cast<size_t>(std::max<int64_t>(elements, 1)) * sizeof(double);
      if (shared) {
        if (redist_alloc(bytes, &p) != REDIST_SUCCESS) p = nullptr;
      } else {
        p = std::malloc(bytes);
      }
      if (p == nullptr) {
        std::fprintf(stderr, "nd_bench: out of memory\n");
        MPI_Abort(MPI_COMM_WORLD, 1);
      }
      return static_cast<double *>(p);
    };
    const auto release = [&](double *p) {
      if (shared)
        redist_free(p);
      else
        std::free(p);
    };
    double *a = allocate(na);
    double *b = allocate(nb);
    double *b_mpi = allocate(nb);
    // A holds each element's global linear index.
    {
      // Global index of each local element of A, dimension by dimension.
      std::vector<int64_t> globals[kDims];
      for (int d = 0; d < kDims; ++d)
        for (int64_t g = 0; g < n; ++g)
          if (owner(c.a.dims[d], n, g) == sa.coords[d]) globals[d].push_back(g);
      int64_t e = 0;
      for (int64_t i0 = 0; i0 < sa.extents[0]; ++i0)
        for (int64_t i1 = 0; i1 < sa.extents[1]; ++i1)
          for (int64_t i2 = 0; i2 < sa.extents[2]; ++i2)
            a[e++] =
                static_cast<double>((globals[0][i0] * n + globals[1][i1]) * n + globals[2][i2]);
    }
    std::fill(b, b + nb, -1.0);
    std::fill(b_mpi, b_mpi + nb, -2.0);

    // The competitor's datatypes: one per peer and direction.
    std::vector<MPI_Datatype> send_types(np), recv_types(np);
    std::vector<int> counts(np, 1), displs(np, 0);
    int64_t kept = 0, sent = 0, received = 0;
    for (int p = 0; p < np; ++p) {
      const Side pa = side_of(c.a, n, p);
      const Side pb = side_of(c.b, n, p);
      std::vector<std::pair<int64_t, int64_t>> r[kDims];
      int64_t elements = 0;
      for (int d = 0; d < kDims; ++d)
        r[d] = runs(c.a.dims[d], sa.coords[d], c.b.dims[d], pb.coords[d], n);
      send_types[p] = pair_type(r, sa.extents, c.block, elements);
      (p == me ? kept : sent) += elements;
      for (int d = 0; d < kDims; ++d)
        r[d] = runs(c.b.dims[d], sb.coords[d], c.a.dims[d], pa.coords[d], n);
      recv_types[p] = pair_type(r, sb.extents, c.block, elements);
      if (p != me) received += elements;
    }

    int distribs_a[kDims], distribs_b[kDims], psizes_a[kDims], psizes_b[kDims];
    int64_t dargs_a[kDims], dargs_b[kDims];
    const redist_darray da = darray_of(c.a, gsizes, distribs_a, dargs_a, psizes_a);
    const redist_darray db = darray_of(c.b, gsizes, distribs_b, dargs_b, psizes_b);
    redist_plan plan = nullptr;
    const double t_plan = bench::timed([&] {
      if (redist_nd_plan_create(MPI_COMM_WORLD, REDIST_DOUBLE, &da, &db, &options, &plan) !=
          REDIST_SUCCESS) {
        std::fprintf(stderr, "nd_bench: redist_nd_plan_create failed\n");
        MPI_Abort(MPI_COMM_WORLD, 1);
      }
    });
    redist_plan_info info{};
    redist_plan_get_info(plan, &info);
    long long busiest = (kept + sent + received) * static_cast<long long>(sizeof(double));
    const long long from_info = info.bytes_local + info.bytes_sent + info.bytes_received;
    if (from_info != busiest) {
      std::fprintf(stderr, "nd_bench: rank %d: redist moves %lld bytes, the types %lld\n", me,
                   from_info, busiest);
      ++failures;
    }
    MPI_Allreduce(MPI_IN_PLACE, &busiest, 1, MPI_LONG_LONG, MPI_MAX, MPI_COMM_WORLD);
    std::vector<char> copy_from(static_cast<size_t>(busiest), 1),
        copy_to(static_cast<size_t>(busiest), 0);

    const auto run_redist = [&] {
      if (redist_plan_execute(plan, a, b) != REDIST_SUCCESS) {
        std::fprintf(stderr, "nd_bench: redist_plan_execute failed\n");
        MPI_Abort(MPI_COMM_WORLD, 1);
      }
    };
    const auto run_mpi = [&] {
      MPI_Alltoallw(a, counts.data(), displs.data(), send_types.data(), b_mpi, counts.data(),
                    displs.data(), recv_types.data(), MPI_COMM_WORLD);
    };
    const auto run_memcpy = [&] {
      std::memcpy(copy_to.data(), copy_from.data(), copy_from.size());
    };
    const double t_first = bench::timed(run_redist);
    bench::timed(run_redist);
    bench::timed(run_mpi);
    bench::timed(run_memcpy);
    std::vector<double> t_redist, t_mpi, t_copy;
    for (int r = 0; r < reps; ++r) {
      t_redist.push_back(bench::timed(run_redist));
      t_mpi.push_back(bench::timed(run_mpi));
      t_copy.push_back(bench::timed(run_memcpy));
    }
    int64_t wrong = 0;
    for (int64_t e = 0; e < nb; ++e)
      wrong += b[e] != b_mpi[e] ? 1 : 0;
    MPI_Allreduce(MPI_IN_PLACE, &wrong, 1, MPI_INT64_T, MPI_SUM, MPI_COMM_WORLD);
    if (wrong != 0) ++failures;
    const double r = bench::median(t_redist), m = bench::median(t_mpi), k = bench::median(t_copy);
    if (me == 0) {
      std::printf("%-22s %12.4f %12.4f %12.4f %10.2f %10.2f%s\n", c.name.c_str(), r, m, k, m / r,
                  r / k, wrong != 0 ? "  MISMATCH" : "");
      std::printf("%-22s   plan %.4f s (%s), first execution %.4f s, busiest rank %.1f MiB\n", "",
                  t_plan, redist_schedule_name(info.schedule), t_first,
                  static_cast<double>(busiest) / (1 << 20));
      std::fflush(stdout);
    }
    redist_plan_destroy(&plan);
    for (int p = 0; p < np; ++p) {
      MPI_Type_free(&send_types[p]);
      MPI_Type_free(&recv_types[p]);
    }
    release(a);
    release(b);
    release(b_mpi);
  }
  MPI_Allreduce(MPI_IN_PLACE, &failures, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
  MPI_Finalize();
  return failures != 0 ? 1 : 0;
}
