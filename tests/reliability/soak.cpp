// The soak (docs/reliability.md "Soak"): --cases=N random calls, each drawn from a
// seed every process shares (call k from the seed and k alone, so `--case=K` replays call K):
//   - an entry point: the C API (redist_plan_create_opt / execute 1-3 times / destroy), the
//     ScaLAPACK-style entries by reference (redist_pxgemr2d_, redist_pxtrmr2d_) and by value
//     (redist_Cpxgemr2d, redist_Cpxtrmr2d), or redist_plan_create_scalapack + execute;
//   - a type (float, double, complex float and double, the integer types each entry takes),
//     a region (full, upper or lower trapezoid, unit diagonal or not), random matrices,
//     blocks, grids (BLACS_GRIDINIT / GRIDMAP in any order, subsets of the processes),
//     window offsets and LLD padding;
//   - a schedule, a limit on concurrent transfers now and then, a memory cap (none, tight,
//     moderate, huge), REDIST_SINGLE_COPY (every way), and A in redist_alloc memory or not;
//   - on 1% of calls (REDIST_SOAK_FAULT_PERCENT) an injected fault. 40% of them: one
//     collective, communicator or attribute call of the library (MPI_Iallreduce,
//     MPI_Iallgather, MPI_Comm_idup, MPI_Comm_split_type, MPI_Comm_get_attr, MPI_Comm_set_attr;
//     done, or not_done where mpi_faults.hpp says it applies) failing once on one process, at
//     a random position among that process's calls of the kind, in a plan's creation or one
//     of its executions (or the whole ScaLAPACK-entry call); C API calls with such a fault
//     run on a new communicator some of the time, so that the library asks it for its nodes.
//     Otherwise: one point-to-point call of the executor (post or completion of a send or a
//     receive, data or control tag, a random occurrence) or one single-copy operation (probe,
//     read, map, copy from a mapping) failing on a random process, sometimes on two.
// Every B is checked element by element against the oracle of tests/mpi/harness (written from
// the ScaLAPACK definitions, apart from src/), LLD padding and guard zones included:
//   - a call that succeeds on every process: B exactly the oracle's;
//   - a faulted call: a single failed point-to-point or single-copy call is repaired
//     (docs/reliability.md, Faults), so the same (success everywhere, B right), and the call
//     after it succeeds;
//   - a collective fault that fired: a plan creation succeeds everywhere or fails everywhere
//     (then the plan is made again, nothing armed), a plan exactly where the status is
//     success; an execution or ScaLAPACK-entry call: a process that returns success has B
//     equal to the oracle, and wherever a B differs from the oracle every process returns an
//     error; the later executions and calls as any other. A collective fault that did not fire
//     leaves a call judged as any other. The outcomes are counted per kind: success
//     everywhere, an error on the faulty process only (B right everywhere), refused everywhere
//     (limits, as without a fault), another error everywhere, another mix;
//   - a call refused on every process (an explicit schedule or a limit the plan cannot honour;
//     never the automatic schedule without limits): B bytewise unchanged;
//   - anything else fails the soak: statuses that differ between processes, an error without
//     an explicit schedule or limit, an error on a faulted call.
// Resources, after every call: no live group, datatype, op or info beyond the start, no
// request of the executor's tags and no nonblocking collective alive, communicators within
// what the caches may hold (counted by mpi_coll_faults.cpp's interposers and mpi_counters.cpp's);
// at the end, after redist_scalapack_clear_cache(), every count back to the start. Memory: RSS
// (/proc/self/statm) and heap in use at the start and every tenth of the calls (the first
// checkpoint is the warm-up point), each time also right after redist_scalapack_clear_cache();
// "flat" means, on every process, from the warm-up to the end: heap growth below
// kHeapGrowthBound, heap growth with the caches emptied below kClearedHeapGrowthBound, and RSS
// growth below kRssGrowthBound (not under ASan, whose quarantine and shadow memory make RSS grow
// by design).
// Hangs: every call runs under the harness's watchdog (--case-timeout, default 60 s).
// --verbose prints every faulted call. To narrow a failure down: REDIST_SOAK_ENTRY=0..3 and
// REDIST_SOAK_WAY=0..6 force the entry point and the REDIST_SINGLE_COPY way of every call.
// Rank 0 prints a summary (calls per entry, type, schedule, single-copy way, cap; faults armed
// and fired, per kind; collective faults armed, fired and their outcomes, per kind; refusals;
// wrong elements; RSS, heap and MPI objects at start, warm-up and end; wall time).
// A call's draw depends on the seed and its index alone, but the library's caches (plans,
// duplicates, the nodes kept with a communicator) depend on the calls before it: `--case=K`
// runs call K on empty caches, `--cases=K+1` runs it after the same calls as the soak did.

#include "../common/scalapack_decls.h"
#include "../errors/error_support.hpp"
#include "exec.hpp"
#include "mpi_counters.hpp"
#include "mpi_faults.hpp"
#include "single_copy.hpp"

#include <redist.h>
#include <redist_scalapack.h>

#include <gtest/gtest.h>
#include <mpi.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <chrono>
#include <complex>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <map>
#include <string>
#include <vector>

#if defined(__has_feature)
#if __has_feature(address_sanitizer)
#define REDIST_TEST_ASAN 1
#endif
#endif
#if defined(__SANITIZE_ADDRESS__)
#define REDIST_TEST_ASAN 1
#endif
#ifdef REDIST_TEST_ASAN
#include <sanitizer/allocator_interface.h>
#else
#include <malloc.h>
#endif

static_assert(sizeof(redist_int) == sizeof(int), "the soak uses the LP64 BLACS integer");

namespace {

using mpitest::GridSpec;
using mpitest::MatSpec;
using mpitest::Region;
using mpitest::world_rank;
using mpitest::world_size;
namespace sc = redist::single_copy;

constexpr long long kHeapGrowthBound = 8LL << 20;        // bytes, warm-up to end
constexpr long long kClearedHeapGrowthBound = 2LL << 20; // the same, caches emptied
constexpr long long kRssGrowthBound = 16LL << 20;        // bytes, warm-up to end (not under ASan)
#ifdef REDIST_TEST_ASAN
constexpr bool kAsan = true;
#else
constexpr bool kAsan = false;
#endif
constexpr long long kCommCache = 8;  // defaults of REDIST_COMM_CACHE_SIZE and
constexpr long long kPlanCache = 16; // REDIST_PLAN_CACHE_SIZE

long long heap_in_use() {
#ifdef REDIST_TEST_ASAN
  return static_cast<long long>(__sanitizer_get_current_allocated_bytes());
#else
  const struct mallinfo2 mi = mallinfo2();
  return static_cast<long long>(mi.uordblks) + static_cast<long long>(mi.hblkhd);
#endif
}

/// Resident set size in bytes (/proc/self/statm, second field).
long long rss_bytes() {
  std::ifstream statm("/proc/self/statm");
  long long size = 0;
  long long resident = 0;
  statm >> size >> resident;
  return resident * static_cast<long long>(sysconf(_SC_PAGESIZE));
}

// ---------------------------------------------------------------------------------------------
// What a call draws.

enum class Entry { capi, by_reference, by_value, plan_scalapack };
constexpr std::array<const char *, 4> kEntryNames = {
    "C API (create_opt/execute/destroy)", "ScaLAPACK entry by reference (redist_pxgemr2d_)",
    "ScaLAPACK entry by value (redist_Cpxgemr2d)", "redist_plan_create_scalapack + execute"};
constexpr std::array<const char *, 6> kTypeNames = {"float",          "double", "complex float",
                                                    "complex double", "int32",  "int64"};
constexpr std::array<const char *, 7> kWays = {"auto",    "never",       "always", "direct",
                                               "bounced", "read-packed", "mapped"};
constexpr std::array<const char *, 4> kCapNames = {"none", "tight (2-64 elements each way)",
                                                   "moderate (1-64 KiB)", "huge (2^40)"};

/// The library's collective, communicator and attribute calls a collective fault picks from
/// (docs/reliability.md, "A collective, communicator or attribute call failing on one
/// process"); not_done only where faults::not_done_applies() says so.
constexpr std::array<unsigned, 6> kCollKinds = {faults::iallreduce,    faults::iallgather,
                                                faults::comm_idup,     faults::comm_split_type,
                                                faults::comm_get_attr, faults::comm_set_attr};
constexpr double kCollShare = 0.4; // of the faulted calls: a collective fault
constexpr long long kCollMaxSkip = 20;

/// One injected fault: on process `rank`, an MPI call (`mpi`), a single-copy operation, or
/// (`coll`) a collective, communicator or attribute call.
struct FaultPlan {
  int rank = 0;
  bool mpi = true;
  faults::Fault fault;
  const char *tag_kind = "";
  sc::Injected what = sc::Injected::read;
  long long skip = 0;
  bool coll = false;
  faults::CollFault coll_fault;
  /// What fails, without where: "MPI_Irecv, data tags", "single-copy read",
  /// "MPI_Iallreduce not_done", ...
  [[nodiscard]] std::string kind() const {
    if (coll) {
      return std::string(faults::coll_call_name(coll_fault.calls)) +
             (coll_fault.mode == faults::CollMode::done ? " done" : " not_done");
    }
    if (!mpi) {
      static constexpr std::array<const char *, 4> names = {"probe", "read", "map", "mapped copy"};
      return std::string("single-copy ") + names[static_cast<std::size_t>(what)];
    }
    static const std::map<unsigned, const char *> calls = {{faults::isend, "MPI_Isend"},
                                                           {faults::irecv, "MPI_Irecv"},
                                                           {faults::wait_send, "wait of a send"},
                                                           {faults::wait_recv, "wait of a recv"}};
    return calls.at(fault.calls) + std::string(", ") + tag_kind;
  }
  [[nodiscard]] std::string describe() const {
    return "process " + std::to_string(rank) + ": " + kind() + ", occurrence " +
           std::to_string((coll ? coll_fault.skip : fault.skip + skip) + 1);
  }
};

struct Draw {
  Entry entry = Entry::capi;
  int type = 1; ///< index into kTypeNames
  Region region = Region::Full;
  bool unit_diag = false;
  std::int64_t m = 0, n = 0;
  MatSpec a, b;
  int ctxt_a = -1, ctxt_b = -1, ictxt = -1; ///< ScaLAPACK entries: this process's handles
  int schedule = REDIST_SCHEDULE_AUTO;
  int max_concurrent = 0;
  int cap_class = 0;
  std::int64_t max_memory = 0;
  int way = 0; ///< index into kWays
  bool shared_a = false;
  int executions = 1;
  std::vector<FaultPlan> faults; ///< empty: no fault
  int fault_execution = 0;       ///< which execution the fault is armed for; -1: the creation
  /// The C API call runs on a new communicator (MPI_Comm_split of MPI_COMM_WORLD, which copies
  /// no attribute): the library asks it for its nodes (MPI_Comm_split_type, the attribute
  /// calls) as at a first call. Drawn for collective faults only.
  bool fresh_comm = false;

  [[nodiscard]] bool coll_fault() const { return !faults.empty() && faults[0].coll; }

  [[nodiscard]] bool limited() const {
    return schedule != REDIST_SCHEDULE_AUTO || max_concurrent != 0 || max_memory != 0;
  }
  [[nodiscard]] std::string describe() const {
    std::string s = std::string(kEntryNames[static_cast<std::size_t>(entry)]) + ", " +
                    kTypeNames[static_cast<std::size_t>(type)] + ", " +
                    (region == Region::Full    ? "full"
                     : region == Region::Upper ? "upper"
                                               : "lower") +
                    (unit_diag ? " unit" : "") + ", " + std::to_string(m) + " x " +
                    std::to_string(n) + ", schedule " + redist_schedule_name(schedule) +
                    ", max_concurrent " + std::to_string(max_concurrent) + ", max_memory " +
                    std::to_string(max_memory) +
                    ", REDIST_SINGLE_COPY=" + kWays[static_cast<std::size_t>(way)] +
                    (shared_a ? ", A shared" : "") + ", executions " + std::to_string(executions) +
                    (fresh_comm ? ", on a new communicator" : "") + "\n    A: " + a.describe() +
                    "\n    B: " + b.describe();
    for (const FaultPlan &f : faults)
      s += "\n    fault (" +
           (fault_execution < 0 ? std::string("plan creation")
                                : "execution " + std::to_string(fault_execution + 1)) +
           "): " + f.describe();
    return s;
  }
};

/// The BLACS grids the ScaLAPACK entries draw A and B from, with this process's handles.
struct ContextPool {
  std::vector<GridSpec> grids;
  std::vector<int> ctxt;
  std::vector<int> ictxts; ///< more ICTXT contexts than the communicator cache holds
};

ContextPool make_contexts(std::uint64_t seed, std::string &error) {
  ContextPool pool;
  const int p = world_size();
  pool.grids.push_back(errtest::init_grid('R', 1, p));
  pool.grids.push_back(errtest::init_grid('C', p, 1));
  for (int d = 2; d < p; ++d)
    if (p % d == 0) pool.grids.push_back(errtest::init_grid('C', d, p / d));
  if (p >= 2) pool.grids.push_back(errtest::subset_grid());
  mpitest::Rng rng(seed ^ 0x9e3779b97f4a7c15ULL);
  std::vector<int> all(static_cast<std::size_t>(p));
  for (int r = 0; r < p; ++r)
    all[static_cast<std::size_t>(r)] = r;
  for (int k = 0; k < 12; ++k) { // random orders and subsets of the processes
    std::vector<int> members = all;
    rng.shuffle(members);
    members.resize(static_cast<std::size_t>(rng.uniform(1, p)));
    pool.grids.push_back(
        mpitest::random_grid(rng, members, static_cast<int>(members.size()), true));
  }
  for (const GridSpec &g : pool.grids)
    pool.ctxt.push_back(mpitest::create_context(g, error));
  for (int k = 0; k < 10; ++k)
    pool.ictxts.push_back(mpitest::create_context(errtest::init_grid('R', 1, p), error));
  return pool;
}

std::vector<int> executor_tags(int offset) {
  constexpr int tag = redist::Executor::kTag;
  return {tag + offset, tag + 1 + offset, tag + 2 + offset};
}

/// A fault on process `rank`; single-copy operations only where they may happen.
FaultPlan draw_fault(mpitest::Rng &rng, int rank, bool single_copy) {
  FaultPlan f;
  f.rank = rank;
  f.mpi = !single_copy || rng.coin(0.75);
  if (f.mpi) {
    static constexpr std::array<unsigned, 4> calls = {faults::isend, faults::irecv,
                                                      faults::wait_send, faults::wait_recv};
    f.fault.calls = calls[static_cast<std::size_t>(rng.uniform(0, 3))];
    // Data (and repair) tags, control tags (single-copy addresses, identities, replies,
    // answers), or both: the first matching call fails, whichever it is.
    const std::int64_t r = rng.uniform(0, 3);
    const std::int64_t tags = !single_copy ? 0 : r < 2 ? 2 : r - 2;
    f.tag_kind = tags == 0 ? "data tags" : tags == 1 ? "control tags" : "any tag";
    if (tags != 1) f.fault.tags = executor_tags(0);
    if (tags != 0) {
      for (const int offset : {redist::kAddressTag, redist::kReplyTag})
        for (const int t : executor_tags(offset))
          f.fault.tags.push_back(t);
    }
    f.fault.skip = tags == 1 ? 0 : rng.uniform(0, 1);
    f.fault.count = 1;
  } else {
    f.what = static_cast<sc::Injected>(rng.uniform(0, 3));
    f.skip = rng.uniform(0, 1);
  }
  return f;
}

/// Fraction of calls with an injected fault: 1%, or REDIST_SOAK_FAULT_PERCENT (the short CI
/// runs take more, so that their few hundred calls see faults that need a repair).
double fault_rate() {
  static const double rate = [] {
    const char *env = std::getenv("REDIST_SOAK_FAULT_PERCENT");
    return env != nullptr ? std::atof(env) / 100 : 0.01;
  }();
  return rate;
}

/// The processes holding part of the m x n window of s.
std::vector<int> window_holders(const MatSpec &s, std::int64_t m, std::int64_t n) {
  std::vector<bool> rows(static_cast<std::size_t>(s.grid.nprow));
  std::vector<bool> cols(static_cast<std::size_t>(s.grid.npcol));
  for (std::int64_t i = 0; i < m; ++i)
    rows[static_cast<std::size_t>(((s.ia - 1 + i) / s.mb + s.rsrc) % s.grid.nprow)] = true;
  for (std::int64_t j = 0; j < n; ++j)
    cols[static_cast<std::size_t>(((s.ja - 1 + j) / s.nb + s.csrc) % s.grid.npcol)] = true;
  std::vector<int> holders;
  for (int pr = 0; pr < s.grid.nprow; ++pr)
    for (int pc = 0; pc < s.grid.npcol; ++pc)
      if (rows[static_cast<std::size_t>(pr)] && cols[static_cast<std::size_t>(pc)])
        holders.push_back(s.grid.ranks[static_cast<std::size_t>(pr + pc * s.grid.nprow)]);
  return holders;
}

Draw draw_call(mpitest::Rng &rng, const ContextPool &pool) {
  Draw d;
  const int p = world_size();
  d.entry = static_cast<Entry>(rng.uniform(0, 3));
  if (const char *only = std::getenv("REDIST_SOAK_ENTRY"))
    d.entry = static_cast<Entry>(std::atoi(only));
  const bool scalapack_entry = d.entry == Entry::by_reference || d.entry == Entry::by_value;
  d.type = static_cast<int>(rng.uniform(0, scalapack_entry ? 4 : 5));
  if (rng.coin(0.35)) {
    d.region = rng.coin(0.5) ? Region::Upper : Region::Lower;
    d.unit_diag = rng.coin(0.5);
  }
  mpitest::random_window(rng, d.m, d.n);
  if (d.entry == Entry::capi) {
    std::vector<int> all(static_cast<std::size_t>(p));
    for (int r = 0; r < p; ++r)
      all[static_cast<std::size_t>(r)] = r;
    const auto grid = [&] {
      std::vector<int> members = all;
      rng.shuffle(members);
      members.resize(static_cast<std::size_t>(rng.coin(0.6) ? p : rng.uniform(1, p)));
      return mpitest::random_grid(rng, members, static_cast<int>(members.size()), true);
    };
    d.a = mpitest::random_matrix(rng, grid(), d.m, d.n);
    d.b = mpitest::random_matrix(rng, grid(), d.m, d.n);
  } else {
    const auto last = static_cast<std::int64_t>(pool.grids.size()) - 1;
    const auto ga = static_cast<std::size_t>(rng.uniform(0, last));
    const auto gb = static_cast<std::size_t>(rng.uniform(0, last));
    d.a = mpitest::random_matrix(rng, pool.grids[ga], d.m, d.n);
    d.b = mpitest::random_matrix(rng, pool.grids[gb], d.m, d.n);
    d.ctxt_a = pool.ctxt[ga];
    d.ctxt_b = pool.ctxt[gb];
    d.ictxt = pool.ictxts[static_cast<std::size_t>(
        rng.uniform(0, static_cast<std::int64_t>(pool.ictxts.size()) - 1))];
  }
  d.schedule =
      rng.coin(0.4)
          ? REDIST_SCHEDULE_AUTO
          : static_cast<int>(rng.uniform(REDIST_SCHEDULE_ALL_AT_ONCE, REDIST_SCHEDULE_MULTIPHASE));
  if (d.schedule != REDIST_SCHEDULE_ALL_AT_ONCE && rng.coin(0.1))
    d.max_concurrent = static_cast<int>(rng.uniform(1, 3));
  static constexpr std::array<std::int64_t, 6> element_bytes = {4, 8, 8, 16, 4, 8};
  const std::int64_t es = element_bytes[static_cast<std::size_t>(d.type)];
  const std::int64_t r = rng.uniform(0, 99);
  d.cap_class = r < 55 ? 0 : r < 75 ? 1 : r < 92 ? 2 : 3;
  d.max_memory = d.cap_class == 0   ? 0
                 : d.cap_class == 1 ? 2 * es * rng.uniform(1, 64)
                 : d.cap_class == 2 ? 1024 * rng.uniform(1, 64) + 8
                                    : std::int64_t{1} << 40;
  d.way = rng.coin(0.3) ? 0 : static_cast<int>(rng.uniform(1, 6));
  if (const char *only = std::getenv("REDIST_SOAK_WAY")) d.way = std::atoi(only);
  d.shared_a = rng.coin(0.25);
  d.executions = d.entry == Entry::capi || d.entry == Entry::plan_scalapack
                     ? static_cast<int>(rng.uniform(1, 3))
                     : 1;
  const bool faulted = rng.coin(fault_rate());
  if (faulted && rng.coin(kCollShare)) {
    // One collective, communicator or attribute call failing on one process (every process
    // takes part in the library's collectives): a kind, done or not_done, a position among
    // that process's calls of the kind, in the creation or an execution of a plan (or the
    // whole ScaLAPACK-entry call). A plan's creation or execution makes about ten
    // MPI_Iallreduce calls per process on average and at most one or two of each other kind, so the
    // position is drawn 60% of the time where the calls are (skip 0-9 for MPI_Iallreduce, 0-1
    // for the others), else anywhere in 0..kCollMaxSkip. The node query (MPI_Comm_split_type,
    // the attribute calls, a gather) and the duplicate of the caller's communicator run when
    // a plan is made: those kinds fall on the creation 80% of the time, and the C API call runs
    // on a new communicator 80% of the time for the node query's kinds (its nodes kept on a
    // communicator that already had them asked, a plan on MPI_COMM_WORLD skips the query).
    FaultPlan f;
    f.coll = true;
    f.mpi = false;
    f.rank = static_cast<int>(rng.uniform(0, p - 1));
    const unsigned kind = kCollKinds[static_cast<std::size_t>(
        rng.uniform(0, static_cast<std::int64_t>(kCollKinds.size()) - 1))];
    f.coll_fault.calls = kind;
    f.coll_fault.mode = faults::not_done_applies(kind) && rng.coin(0.5) ? faults::CollMode::not_done
                                                                        : faults::CollMode::done;
    f.coll_fault.skip = rng.coin(0.6) ? rng.uniform(0, kind == faults::iallreduce ? 9 : 1)
                                      : rng.uniform(0, kCollMaxSkip);
    f.coll_fault.count = 1;
    const bool plan_entry = d.entry == Entry::capi || d.entry == Entry::plan_scalapack;
    const bool node_query = kind == faults::comm_split_type || kind == faults::comm_get_attr ||
                            kind == faults::comm_set_attr;
    const bool at_creation = kind != faults::iallreduce && rng.coin(0.8);
    d.fault_execution = !plan_entry   ? 0
                        : at_creation ? -1
                                      : static_cast<int>(rng.uniform(-1, d.executions - 1));
    d.fresh_comm = d.entry == Entry::capi && rng.coin(node_query ? 0.8 : 0.3);
    d.faults.push_back(f);
  } else if (faulted) {
    // On processes that hold part of A's or B's window (the others move nothing).
    std::vector<int> movers = window_holders(d.a, d.m, d.n);
    for (const int rank : window_holders(d.b, d.m, d.n))
      if (std::find(movers.begin(), movers.end(), rank) == movers.end()) movers.push_back(rank);
    if (movers.empty()) movers.push_back(0);
    rng.shuffle(movers);
    d.fault_execution = static_cast<int>(rng.uniform(0, d.executions - 1));
    d.faults.push_back(draw_fault(rng, movers[0], d.way != 1));
    if (movers.size() > 1 && rng.coin(0.2))
      d.faults.push_back(draw_fault(rng, movers[1], d.way != 1));
  }
  return d;
}

// ---------------------------------------------------------------------------------------------
// The ScaLAPACK-style entries of each type, both calling conventions.

struct Args {
  char uplo = 'U', diag = 'N';
  redist_int m = 0, n = 0, ia = 1, ja = 1, ib = 1, jb = 1, ictxt = -1;
  redist_int desca[9] = {}, descb[9] = {};
};

template <class T> struct Entries;
#define SOAK_ENTRIES(x, T, P)                                                                      \
  template <> struct Entries<T> {                                                                  \
    static void call(bool by_value, bool trapezoid, Args &c, const T *a, T *b) {                   \
      auto *pa = reinterpret_cast<P *>(const_cast<T *>(a));                                        \
      auto *pb = reinterpret_cast<P *>(b);                                                         \
      if (by_value && trapezoid)                                                                   \
        redist_Cp##x##trmr2d(&c.uplo, &c.diag, c.m, c.n, pa, c.ia, c.ja, c.desca, pb, c.ib, c.jb,  \
                             c.descb, c.ictxt);                                                    \
      else if (by_value)                                                                           \
        redist_Cp##x##gemr2d(c.m, c.n, pa, c.ia, c.ja, c.desca, pb, c.ib, c.jb, c.descb, c.ictxt); \
      else if (trapezoid)                                                                          \
        redist_p##x##trmr2d_(&c.uplo, &c.diag, &c.m, &c.n, pa, &c.ia, &c.ja, c.desca, pb, &c.ib,   \
                             &c.jb, c.descb, &c.ictxt);                                            \
      else                                                                                         \
        redist_p##x##gemr2d_(&c.m, &c.n, pa, &c.ia, &c.ja, c.desca, pb, &c.ib, &c.jb, c.descb,     \
                             &c.ictxt);                                                            \
    }                                                                                              \
  };
SOAK_ENTRIES(s, float, float)
SOAK_ENTRIES(d, double, double)
SOAK_ENTRIES(c, std::complex<float>, void)
SOAK_ENTRIES(z, std::complex<double>, void)
SOAK_ENTRIES(i, redist_int, redist_int)
#undef SOAK_ENTRIES

template <class T> constexpr redist_type type_of() {
  if constexpr (std::is_same_v<T, float>) return REDIST_FLOAT;
  if constexpr (std::is_same_v<T, double>) return REDIST_DOUBLE;
  if constexpr (std::is_same_v<T, std::complex<float>>) return REDIST_COMPLEX_FLOAT;
  if constexpr (std::is_same_v<T, std::complex<double>>) return REDIST_COMPLEX_DOUBLE;
  if constexpr (std::is_same_v<T, std::int32_t>) return REDIST_INT32;
  return REDIST_INT64;
}

// ---------------------------------------------------------------------------------------------
// Running one call and judging it.

struct Tally {
  long long calls = 0, executions = 0, wrong = 0, failures = 0;
  long long refused = 0, faulted_calls = 0, faults_fired = 0, errors_returned = 0;
  long long repaired_ok = 0, shared_arrays = 0;
  std::map<std::string, std::array<long long, 2>> faults_by_kind; ///< armed, fired (all ranks)
  /// Collective faults, per kind: [0] armed, [1] fired, then the outcomes of those that fired:
  /// [2] success everywhere (B right), [3] an error on the faulty process only (B right
  /// everywhere), [4] refused everywhere (an explicit schedule or limit the plan cannot
  /// honour, as without a fault), [5] another error everywhere, [6] another mix of errors (B
  /// right wherever success); [7] the calls of the kind the faulty process made while armed.
  std::map<std::string, std::array<long long, 8>> coll_by_kind;
  long long coll_faulted_calls = 0;
  std::vector<std::string> coll_other;      ///< rank 0: a few of the calls with another mix
  std::vector<std::string> coll_everywhere; ///< rank 0: a few errors everywhere, what it said
  std::map<std::string, long long> by_entry, by_type, by_schedule, by_way, by_cap, refused_by;
  std::string report; ///< this process's failures (first few)
};

/// Set (or, with nullptr, unset) an environment variable on this process; whether its value
/// changed. glibc's setenv keeps every distinct NAME=VALUE string it was given until exit
/// (getenv's results must stay valid), so the values drawn come from small sets: otherwise the
/// heap grows with the calls.
bool set_env(const char *name, const char *value) {
  const char *old = std::getenv(name);
  if (old == nullptr ? value == nullptr : value != nullptr && std::string(old) == value)
    return false;
  if (value == nullptr)
    unsetenv(name);
  else
    setenv(name, value, 1);
  return true;
}

void arm(const Draw &d) {
  std::vector<faults::Fault> mpi;
  for (const FaultPlan &f : d.faults) {
    if (f.rank != world_rank()) continue;
    if (f.coll)
      faults::arm_collectives(f.coll_fault);
    else if (f.mpi)
      mpi.push_back(f.fault);
    else
      sc::inject_failures(f.what, f.skip, 1);
  }
  if (!mpi.empty()) faults::arm(mpi);
}

void disarm() {
  faults::disarm();
  faults::disarm_collectives();
  for (int w = 0; w <= static_cast<int>(sc::Injected::mapped); ++w)
    sc::inject_failures(static_cast<sc::Injected>(w), 0, 0);
}

long long faults_fired_here() {
  long long n = faults::injected();
  for (int w = 0; w <= static_cast<int>(sc::Injected::mapped); ++w)
    n += sc::injected_failures(static_cast<sc::Injected>(w));
  return n;
}

/// What every process saw of one execution (or one ScaLAPACK call).
struct Verdict {
  long long successes = 0, wrong = 0, fired = 0;
};

Verdict agree(bool success, long long wrong, long long fired) {
  std::array<long long, 3> v = {success ? 1 : 0, wrong, fired};
  MPI_Allreduce(MPI_IN_PLACE, v.data(), 3, MPI_LONG_LONG, MPI_SUM, MPI_COMM_WORLD);
  return {v[0], v[1], v[2]};
}

/// A buffer for A: std::vector storage, or redist_alloc memory (shared with peers).
template <class T> class ABuffer {
public:
  ABuffer(const std::vector<T> &values, bool shared) : size_(values.size()) {
    if (shared && redist_alloc(size_ * sizeof(T), &shared_) == REDIST_SUCCESS) {
      std::memcpy(shared_, values.data(), size_ * sizeof(T));
    } else {
      shared_ = nullptr;
      local_ = values;
    }
  }
  ~ABuffer() {
    if (shared_ != nullptr) redist_free(shared_);
  }
  ABuffer(const ABuffer &) = delete;
  ABuffer &operator=(const ABuffer &) = delete;
  void assign(const std::vector<T> &values) {
    std::memcpy(data(), values.data(), size_ * sizeof(T));
  }
  T *data() { return shared_ != nullptr ? static_cast<T *>(shared_) : local_.data(); }

private:
  std::size_t size_;
  void *shared_ = nullptr;
  std::vector<T> local_;
};

class Soak {
public:
  Soak(std::uint64_t seed, const ContextPool &pool) : seed_(seed), pool_(pool) {}

  void run(long long k) {
    mpitest::Rng rng(seed_ + 0x9e3779b97f4a7c15ULL * static_cast<std::uint64_t>(k + 1));
    const Draw d = draw_call(rng, pool_);
    const std::string what = "soak call " + std::to_string(k) +
                             " (--seed=" + std::to_string(seed_) + " --case=" + std::to_string(k) +
                             "): " + d.describe();
    mpitest::watchdog_arm(what);
    switch (d.type) {
    case 0:
      run_typed<float>(d, what);
      break;
    case 1:
      run_typed<double>(d, what);
      break;
    case 2:
      run_typed<std::complex<float>>(d, what);
      break;
    case 3:
      run_typed<std::complex<double>>(d, what);
      break;
    case 4:
      run_typed<std::int32_t>(d, what);
      break;
    default:
      run_typed<std::int64_t>(d, what);
      break;
    }
    mpitest::watchdog_disarm();
    ++t_.calls;
    ++t_.by_entry[kEntryNames[static_cast<std::size_t>(d.entry)]];
    ++t_.by_type[kTypeNames[static_cast<std::size_t>(d.type)]];
    ++t_.by_schedule[redist_schedule_name(d.schedule)];
    ++t_.by_way[kWays[static_cast<std::size_t>(d.way)]];
    ++t_.by_cap[kCapNames[static_cast<std::size_t>(d.cap_class)]];
    if (!d.faults.empty()) ++t_.faulted_calls;
    if (d.coll_fault()) ++t_.coll_faulted_calls;
    if (!d.faults.empty() && mpitest::options().verbose && world_rank() == 0) {
      std::printf("[ FAULTED  ] %s\n", what.c_str());
      std::fflush(stdout);
    }
    if (d.shared_a) ++t_.shared_arrays;
  }

  [[nodiscard]] const Tally &tally() const { return t_; }

private:
  void fail(const std::string &what, const std::string &why) {
    ++t_.failures;
    if (t_.report.size() < 6000) t_.report += what + "\n  " + why + "\n";
  }

  template <class T> void run_typed(const Draw &d, const std::string &what) {
    const int rank = world_rank();
    const mpitest::LocalBuf la = mpitest::local_buf(d.a, rank);
    const mpitest::LocalBuf lb = mpitest::local_buf(d.b, rank);
    std::vector<T> avalues;
    std::vector<T> b;
    mpitest::fill_a(d.a, la, 1, avalues);
    mpitest::fill_sentinel(lb, 2, b);
    ABuffer<T> a(avalues, d.shared_a);
    mpitest::CopySpec cs;
    cs.region = d.region;
    cs.unit_diag = d.unit_diag;
    cs.m = d.m;
    cs.n = d.n;
    // The ScaLAPACK entries read the environment at their first call after
    // redist_scalapack_clear_cache().
    if (set_env("REDIST_SINGLE_COPY", kWays[static_cast<std::size_t>(d.way)]))
      redist_scalapack_clear_cache();
    if constexpr (!std::is_same_v<T, std::int64_t>) { // the entries have no 64-bit integers
      if (d.entry == Entry::by_reference || d.entry == Entry::by_value) {
        scalapack_call<T>(d, what, la, lb, a, b, cs);
        return;
      }
    }
    plan_calls<T>(d, what, la, lb, avalues, a, b, cs);
  }

  Args scalapack_args(const Draw &d, const mpitest::LocalBuf &la,
                      const mpitest::LocalBuf &lb) const {
    Args c;
    c.uplo = d.region == Region::Lower ? 'L' : 'U';
    c.diag = d.unit_diag ? 'U' : 'N';
    c.m = static_cast<redist_int>(d.m);
    c.n = static_cast<redist_int>(d.n);
    c.ia = static_cast<redist_int>(d.a.ia);
    c.ja = static_cast<redist_int>(d.a.ja);
    c.ib = static_cast<redist_int>(d.b.ia);
    c.jb = static_cast<redist_int>(d.b.ja);
    c.ictxt = d.ictxt;
    const std::array<int, 9> da = mpitest::descriptor(d.a, d.ctxt_a, la);
    const std::array<int, 9> db = mpitest::descriptor(d.b, d.ctxt_b, lb);
    std::copy(da.begin(), da.end(), c.desca);
    std::copy(db.begin(), db.end(), c.descb);
    return c;
  }

  template <class T>
  void scalapack_call(const Draw &d, const std::string &what, const mpitest::LocalBuf &la,
                      const mpitest::LocalBuf &lb, ABuffer<T> &a, std::vector<T> &b,
                      const mpitest::CopySpec &cs) {
    const std::string cap = std::to_string(d.max_memory);
    const std::string concurrent = std::to_string(d.max_concurrent);
    // Each set (not short-circuited), then the entries read the environment again.
    const bool schedule_changed = set_env("REDIST_SCHEDULE", redist_schedule_name(d.schedule));
    const bool cap_changed =
        set_env("REDIST_MAX_MEMORY", d.max_memory != 0 ? cap.c_str() : nullptr);
    const bool limit_changed =
        set_env("REDIST_MAX_CONCURRENT", d.max_concurrent != 0 ? concurrent.c_str() : nullptr);
    if (schedule_changed || cap_changed || limit_changed) redist_scalapack_clear_cache();
    Args c = scalapack_args(d, la, lb);
    const std::vector<T> before = b;
    const long long fired_before = faults_fired_here();
    std::string said;
    {
      // A refused call prints its reason on every process: kept, not shown.
      errtest::StderrCapture capture;
      arm(d);
      Entries<T>::call(d.entry == Entry::by_value, d.region != Region::Full, c, a.data(), b.data());
      disarm();
      said = capture.finish();
    }
    const int status = redist_scalapack_last_status();
    ++t_.executions;
    if (d.coll_fault()) {
      judge_coll<T>(d, what, status, said, lb, b, before, cs, 1,
                    faults_fired_here() - fired_before);
    } else {
      judge<T>(d, what, status, said, lb, b, before, cs, 1, faults_fired_here() - fired_before,
               !d.faults.empty());
    }
  }

  template <class T>
  void plan_calls(const Draw &d, const std::string &what, const mpitest::LocalBuf &la,
                  const mpitest::LocalBuf &lb, std::vector<T> &avalues, ABuffer<T> &a,
                  std::vector<T> &b, const mpitest::CopySpec &cs) {
    redist_options o;
    redist_options_init(&o);
    o.schedule = d.schedule;
    o.max_concurrent = d.max_concurrent;
    o.max_memory = d.max_memory;
    // A new communicator (no attribute copied from MPI_COMM_WORLD, so the library asks it for
    // its nodes), with MPI_ERRORS_RETURN: a fault calls its error handler as MPI would.
    MPI_Comm comm = MPI_COMM_WORLD;
    if (d.fresh_comm) {
      MPI_Comm_split(MPI_COMM_WORLD, 0, world_rank(), &comm);
      MPI_Comm_set_errhandler(comm, MPI_ERRORS_RETURN);
    }
    redist_plan plan = nullptr;
    const auto create = [&] {
      if (d.entry == Entry::capi) {
        const redist_layout ca = mpitest::c_layout(d.a, d.a.grid.ranks.data(), la.lld);
        const redist_layout cb = mpitest::c_layout(d.b, d.b.grid.ranks.data(), lb.lld);
        return redist_plan_create_opt(comm, d.m, d.n, type_of<T>(), &ca, &cb,
                                      d.region == Region::Full    ? REDIST_REGION_FULL
                                      : d.region == Region::Upper ? REDIST_REGION_UPPER
                                                                  : REDIST_REGION_LOWER,
                                      d.unit_diag ? 1 : 0, &o, &plan);
      }
      Args c = scalapack_args(d, la, lb);
      return redist_plan_create_scalapack(c.m, c.n, type_of<T>(), c.desca, c.ia, c.ja, c.descb,
                                          c.ib, c.jb, c.ictxt,
                                          d.region == Region::Full    ? REDIST_REGION_FULL
                                          : d.region == Region::Upper ? REDIST_REGION_UPPER
                                                                      : REDIST_REGION_LOWER,
                                          d.unit_diag ? 1 : 0, &o, &plan);
    };
    const bool coll_creation = d.coll_fault() && d.fault_execution < 0;
    const long long fired_at_creation = faults_fired_here();
    if (coll_creation) arm(d);
    int status = create();
    if (coll_creation) disarm();
    std::string said = status == REDIST_SUCCESS ? "" : redist_last_error();
    if (coll_creation && judge_coll_creation(d, what + " [plan creation]", status, plan != nullptr,
                                             said, faults_fired_here() - fired_at_creation)) {
      // No plan anywhere after a fault that fired: made again with nothing armed, then judged
      // as any other creation.
      if (plan != nullptr) redist_plan_destroy(&plan);
      plan = nullptr;
      status = create();
      said = status == REDIST_SUCCESS ? "" : redist_last_error();
    }
    const Verdict created = agree(status == REDIST_SUCCESS, 0, 0);
    if (created.successes != world_size()) {
      // Refused: the B untouched check is trivial (nothing executed); the statuses judged.
      judge<T>(d, what, status, said, lb, b, b, cs, 1, 0, false);
    } else {
      for (int e = 0; e < d.executions; ++e) {
        if (e > 0) {
          mpitest::fill_a(d.a, la, 1 + e, avalues);
          a.assign(avalues);
        }
        const std::vector<T> before = b;
        const long long fired_before = faults_fired_here();
        const bool faulted = !d.faults.empty() && e == d.fault_execution;
        if (faulted) arm(d);
        status = redist_plan_execute(plan, a.data(), b.data());
        if (faulted) disarm();
        ++t_.executions;
        const std::string step = what + " [execution " + std::to_string(e + 1) + "]";
        const std::string message = status == REDIST_SUCCESS ? "" : redist_last_error();
        if (faulted && d.coll_fault()) {
          judge_coll<T>(d, step, status, message, lb, b, before, cs, 1 + e,
                        faults_fired_here() - fired_before);
        } else {
          judge<T>(d, step, status, message, lb, b, before, cs, 1 + e,
                   faults_fired_here() - fired_before, faulted);
        }
      }
    }
    if (plan != nullptr && redist_plan_destroy(&plan) != REDIST_SUCCESS)
      fail(what, std::string("redist_plan_destroy failed: ") + redist_last_error());
    if (comm != MPI_COMM_WORLD) MPI_Comm_free(&comm);
  }

  /// The tally of a collective fault's kind: armed, fired, outcomes (Tally::coll_by_kind).
  std::array<long long, 8> &coll_counts(const Draw &d) {
    return t_.coll_by_kind[d.faults[0].kind()];
  }

  /// A plan creation under a collective fault (every process takes part). The fault fired:
  /// a plan everywhere or nowhere, and a plan exactly where the status is success. Not fired:
  /// the creation is judged as any other. Returns whether there is no plan anywhere after a
  /// fault that fired (the caller makes it again).
  bool judge_coll_creation(const Draw &d, const std::string &what, int status, bool plan,
                           const std::string &said, long long fired) {
    const bool ok = status == REDIST_SUCCESS;
    if (ok != plan) {
      fail(what, std::string("status ") + redist_status_name(status) + " but " +
                     (plan ? "a plan" : "no plan") + " returned");
    }
    const bool faulty = world_rank() == d.faults[0].rank;
    std::array<long long, 4> w = {ok ? 1 : 0, fired, faulty ? faults::collectives_matched() : 0,
                                  refused_here(d, status) ? 1 : 0};
    MPI_Allreduce(MPI_IN_PLACE, w.data(), 4, MPI_LONG_LONG, MPI_SUM, MPI_COMM_WORLD);
    const Verdict v{w[0], 0, w[1]};
    t_.faults_fired += fired;
    auto &counts = coll_counts(d);
    ++counts[0];
    counts[7] += w[2];
    if (v.fired == 0) return false;
    ++counts[1];
    note_coll_fired(d, what, status, said);
    if (v.successes == world_size()) {
      ++counts[2];
      return false;
    }
    if (v.successes == 0) {
      if (w[3] == world_size()) {
        ++counts[4];
      } else {
        ++counts[5];
        note_everywhere(what, status, said);
      }
      return true;
    }
    fail(what, "plan creation under a collective fault: success on " + std::to_string(v.successes) +
                   " of " + std::to_string(world_size()) +
                   " processes (a plan on some, none on others); here " +
                   redist_status_name(status) + (ok ? "" : ": " + said));
    ++counts[6];
    return false;
  }

  /// An execution (or a ScaLAPACK-entry call) under a collective fault. The fault fired: a
  /// process that returns success has B equal to the oracle, and wherever a B differs from
  /// the oracle every process returns an error; the outcome is counted. Not fired: judged as
  /// any other call.
  template <class T>
  void judge_coll(const Draw &d, const std::string &what, int status, const std::string &said,
                  const mpitest::LocalBuf &lb, const std::vector<T> &b,
                  const std::vector<T> &before, const mpitest::CopySpec &cs, int a_salt,
                  long long fired) {
    const bool ok = status == REDIST_SUCCESS;
    std::string report;
    const long long wrong = mpitest::check_b(cs, d.a, d.b, lb, b.data(), a_salt, 2, report);
    const bool faulty_error = world_rank() == d.faults[0].rank && !ok;
    const long long positions =
        world_rank() == d.faults[0].rank ? faults::collectives_matched() : 0;
    std::array<long long, 6> v = {ok ? 1 : 0, wrong != 0 ? 1 : 0,
                                  fired,      faulty_error ? 1 : 0,
                                  positions,  refused_here(d, status) ? 1 : 0};
    MPI_Allreduce(MPI_IN_PLACE, v.data(), 6, MPI_LONG_LONG, MPI_SUM, MPI_COMM_WORLD);
    const long long successes = v[0];
    const long long wrong_somewhere = v[1];
    t_.faults_fired += fired;
    auto &counts = coll_counts(d);
    ++counts[0];
    counts[7] += v[4];
    if (v[2] == 0) {
      judge<T>(d, what, status, said, lb, b, before, cs, a_salt, 0, false);
      return;
    }
    ++counts[1];
    note_coll_fired(d, what, status, said);
    if (!ok) ++t_.errors_returned;
    if (ok && wrong != 0) {
      t_.wrong += wrong;
      fail(what, "success with a wrong B under a collective fault (" + std::to_string(wrong) +
                     " elements):\n" + report);
    } else if (wrong_somewhere != 0 && successes != 0) {
      t_.wrong += wrong;
      fail(what,
           "B wrong on " + std::to_string(wrong_somewhere) + " process(es) while " +
               std::to_string(successes) + " returned success; here " + redist_status_name(status) +
               (wrong != 0 ? ", B wrong:\n" + report : ", B right") + (ok ? "" : ": " + said));
    }
    const int p = world_size();
    if (successes == p) {
      ++counts[2];
    } else if (successes == p - 1 && v[3] == 1) {
      ++counts[3];
    } else if (successes == 0 && v[5] == p) {
      ++counts[4];
    } else if (successes == 0) {
      ++counts[5];
      note_everywhere(what, status, said);
    } else {
      ++counts[6];
      if (world_rank() == 0 && t_.coll_other.size() < 4)
        t_.coll_other.push_back(what + ": " + std::to_string(successes) + " of " +
                                std::to_string(p) + " succeeded");
    }
  }

  /// Whether `status` here is a refusal of explicit limits (as judge() accepts without a fault).
  static bool refused_here(const Draw &d, int status) {
    return d.limited() && (status == REDIST_ERR_ARGUMENT || status == REDIST_ERR_REMOTE);
  }

  /// Rank 0 keeps a few errors everywhere under a collective fault (the call, what it said).
  void note_everywhere(const std::string &what, int status, const std::string &said) {
    if (world_rank() != 0 || t_.coll_everywhere.size() >= 6) return;
    std::size_t step = what.find(" [plan creation]");
    if (step == std::string::npos) step = what.find(" [execution ");
    t_.coll_everywhere.push_back(
        what.substr(0, what.find(':')) + (step == std::string::npos ? "" : what.substr(step)) +
        ": " + redist_status_name(status) + ": " + said.substr(0, said.find('\n')));
  }

  /// --verbose: the faulty process prints what a collective fault that fired led to.
  static void note_coll_fired(const Draw &d, const std::string &what, int status,
                              const std::string &said) {
    if (!mpitest::options().verbose || world_rank() != d.faults[0].rank) return;
    std::printf("[ COLL     ] rank %d, %s: %s\n  %s%s%s\n", world_rank(),
                d.faults[0].describe().c_str(), what.substr(0, what.find(':')).c_str(),
                redist_status_name(status), said.empty() ? "" : ": ", said.c_str());
    std::fflush(stdout);
  }

  /// Judge one execution (every process takes part: one allreduce).
  template <class T>
  void judge(const Draw &d, const std::string &what, int status, const std::string &said,
             const mpitest::LocalBuf &lb, const std::vector<T> &b, const std::vector<T> &before,
             const mpitest::CopySpec &cs, int a_salt, long long fired, bool faulted) {
    std::string report;
    long long wrong = 0;
    if (status == REDIST_SUCCESS) {
      wrong = mpitest::check_b(cs, d.a, d.b, lb, b.data(), a_salt, 2, report);
    } else {
      const std::string diff = errtest::byte_diff(before, b);
      if (!diff.empty()) {
        wrong = 1;
        report = "B changed by a call that failed here: " + diff + "\n";
      }
    }
    const Verdict v = agree(status == REDIST_SUCCESS, wrong, fired);
    t_.wrong += wrong;
    if (faulted) {
      t_.faults_fired += fired;
      auto &counts = t_.faults_by_kind[d.faults.size() > 1 ? "two faults" : d.faults[0].kind()];
      ++counts[0];
      counts[1] += v.fired > 0 ? 1 : 0;
    }
    if (status != REDIST_SUCCESS) ++t_.errors_returned;
    if (wrong != 0) fail(what, "wrong elements here: " + std::to_string(wrong) + "\n" + report);
    if (v.successes == world_size()) {
      if (faulted && v.fired > 0) ++t_.repaired_ok;
      return;
    }
    // Not a success everywhere. Accepted only as a refusal of explicit limits, on every
    // process, before any execution.
    const bool refusal = v.successes == 0 && d.limited() && v.fired == 0 &&
                         (status == REDIST_ERR_ARGUMENT || status == REDIST_ERR_REMOTE);
    if (refusal) {
      ++t_.refused;
      ++t_.refused_by[std::string(redist_schedule_name(d.schedule)) +
                      (d.max_memory != 0 ? " + cap" : "") +
                      (d.max_concurrent != 0 ? " + max_concurrent" : "")];
      if (rank0_refusals_.size() < 4 && world_rank() == 0 && !said.empty())
        rank0_refusals_.push_back(said.substr(0, said.find('\n')));
      return;
    }
    fail(what, "status " + std::string(redist_status_name(status)) + " here, " +
                   std::to_string(v.successes) + " of " + std::to_string(world_size()) +
                   " processes succeeded, " + std::to_string(v.fired) + " faults fired: " + said);
  }

  std::uint64_t seed_;
  const ContextPool &pool_;
  Tally t_;

public:
  std::vector<std::string> rank0_refusals_; ///< a few reasons given for refusals
};

// ---------------------------------------------------------------------------------------------
// Resources.

struct Sample {
  long long call = 0, rss = 0, heap = 0, requests = 0;
  counters::Snapshot objects;
};

Sample sample(long long call) {
  Sample s;
  s.call = call;
  s.rss = rss_bytes();
  s.heap = heap_in_use();
  s.requests = faults::live_requests();
  s.objects = counters::now();
  return s;
}

long long max_everywhere(long long v) {
  MPI_Allreduce(MPI_IN_PLACE, &v, 1, MPI_LONG_LONG, MPI_MAX, MPI_COMM_WORLD);
  return v;
}
long long sum_everywhere(long long v) {
  MPI_Allreduce(MPI_IN_PLACE, &v, 1, MPI_LONG_LONG, MPI_SUM, MPI_COMM_WORLD);
  return v;
}

std::string mib(long long bytes) {
  char text[32];
  std::snprintf(text, sizeof text, "%.1f MiB", static_cast<double>(bytes) / (1 << 20));
  return text;
}

void print_counts(std::string &out, const char *title, const std::map<std::string, long long> &m) {
  out += std::string("  ") + title + ":";
  for (const auto &[name, count] : m)
    out += " " + name + " " + std::to_string(count) + ";";
  out += "\n";
}

TEST(Soak, RandomCallsUnderFaults) {
  const long long calls = mpitest::options().cases;
  const std::uint64_t seed = mpitest::shared_seed("Soak", 20261124);
  const long long only = mpitest::options().only_case;
  std::string error;
  // A collective fault calls the error handler of the communicator of the failing call, the
  // caller's among them (MPI_COMM_WORLD, BLACS's communicators, which copy it): MPI_ERRORS_RETURN
  // before BLACS makes any, as the library's own communicators have.
  MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
  const ContextPool pool = make_contexts(seed, error);
  EXPECT_EQ(sum_everywhere(error.empty() ? 0 : 1), 0) << error;
  // Track every executor tag's requests (a fault that never fires: count 0).
  faults::Fault track;
  track.count = 0;
  for (const int offset : {0, redist::kAddressTag, redist::kReplyTag, redist::kRepairTag})
    for (const int t : executor_tags(offset))
      track.tags.push_back(t);
  faults::arm(track);
  faults::disarm();

  redist_scalapack_clear_cache();
  const Sample start = sample(0);
  // Checkpoints every tenth of the calls; the first is the warm-up point.
  const long long checkpoint_every = std::max(1LL, calls / 10);
  std::vector<Sample> checkpoints;
  std::vector<Sample> cleared_checkpoints; ///< right after redist_scalapack_clear_cache()
  long long max_comms = start.objects.comms;
  long long max_requests = 0;
  long long leaks = 0;
  std::string leak_report;
  Soak soak(seed, pool);
  const auto t0 = std::chrono::steady_clock::now();
  for (long long k = 0; k < calls; ++k) {
    if (only >= 0 && k != only) continue;
    soak.run(k);
    const counters::Snapshot now = counters::now();
    // Executor requests, and the library's nonblocking collectives (none may outlive a call).
    const long long requests = faults::live_requests() + faults::live_collective_requests();
    max_comms = std::max(max_comms, now.comms);
    max_requests = std::max(max_requests, requests);
    counters::Snapshot expected = start.objects;
    expected.comms = now.comms;
    if (!(now == expected) || requests != 0 ||
        now.comms > start.objects.comms + kCommCache + kPlanCache) {
      if (++leaks <= 4)
        leak_report += "after call " + std::to_string(k) + ": " + now.describe() +
                       ", executor requests and nonblocking collectives " +
                       std::to_string(requests) + "\n";
    }
    if ((k + 1) % checkpoint_every == 0 && k + 1 < calls) {
      checkpoints.push_back(sample(k + 1));
      redist_scalapack_clear_cache(); // the heap without cached plans, compared below
      cleared_checkpoints.push_back(sample(k + 1));
    }
  }
  const double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  checkpoints.push_back(sample(calls));
  redist_scalapack_clear_cache();
  cleared_checkpoints.push_back(sample(calls));
  const Sample &warm = checkpoints.front();
  const Sample &warm_cleared = cleared_checkpoints.front();
  const Sample &end = checkpoints.back();
  const Sample &cleared = cleared_checkpoints.back();

  const Tally &t = soak.tally();
  const long long wrong = sum_everywhere(t.wrong);
  const long long failures = sum_everywhere(t.failures);
  const long long fired = sum_everywhere(t.faults_fired);
  const long long errors = sum_everywhere(t.errors_returned);
  const long long all_leaks = sum_everywhere(leaks);
  const long long heap_growth = max_everywhere(end.heap - warm.heap);
  const long long cleared_growth = max_everywhere(cleared.heap - warm_cleared.heap);
  const long long rss_growth = max_everywhere(end.rss - warm.rss);
  const long long rss_end = max_everywhere(end.rss);
  const long long comms_above = max_everywhere(max_comms - start.objects.comms);

  EXPECT_EQ(wrong, 0) << "wrong elements";
  EXPECT_EQ(failures, 0) << t.report;
  EXPECT_EQ(all_leaks, 0) << leak_report;
  EXPECT_EQ(cleared.objects, start.objects)
      << "after redist_scalapack_clear_cache(): " << cleared.objects.describe() << "; at the start "
      << start.objects.describe();
  EXPECT_EQ(cleared.requests, 0);
  if (only < 0 && calls >= 200) {
    EXPECT_GT(counters::communicators_created(), 0) << "the MPI interposition is not active";
    if (calls >= 1000) {
      EXPECT_GT(fired, 0) << "no injected fault fired: the fault layer is not active";
    }
    EXPECT_LT(heap_growth, kHeapGrowthBound) << "heap grew after the warm-up";
    EXPECT_LT(cleared_growth, kClearedHeapGrowthBound)
        << "heap without cached plans grew after the warm-up";
    if (!kAsan) {
      EXPECT_LT(rss_growth, kRssGrowthBound) << "RSS grew after the warm-up";
    }
  }

  if (world_rank() == 0) {
    std::string out =
        "[ SOAK     ] " + std::to_string(t.calls) + " calls (" + std::to_string(t.executions) +
        " executions) at " + std::to_string(world_size()) + " ranks in " + std::to_string(seconds) +
        " s (" + std::to_string(static_cast<long long>(static_cast<double>(t.calls) / seconds)) +
        " calls/s), seed " + std::to_string(seed) + "\n";
    print_counts(out, "entry points", t.by_entry);
    print_counts(out, "types", t.by_type);
    print_counts(out, "schedules", t.by_schedule);
    print_counts(out, "REDIST_SINGLE_COPY", t.by_way);
    print_counts(out, "memory caps", t.by_cap);
    out += "  A in redist_alloc memory: " + std::to_string(t.shared_arrays) + " calls\n";
    out += "  faulted calls " + std::to_string(t.faulted_calls) + ", faults fired (all ranks) " +
           std::to_string(fired) + ", faulted executions repaired with success everywhere " +
           std::to_string(t.repaired_ok) + "\n";
    out += "  faulted executions by kind (armed / fired somewhere):";
    for (const auto &[kind, counts] : t.faults_by_kind)
      out += " " + kind + " " + std::to_string(counts[0]) + "/" + std::to_string(counts[1]) + ";";
    out += "\n";
    out += "  calls with a collective fault " + std::to_string(t.coll_faulted_calls) +
           "; per kind, armed / fired, then of those fired: success everywhere (B right) / error "
           "on the faulty process only (B right everywhere) / refused everywhere (limits) / "
           "another error everywhere / other; and the calls of the kind the faulty process made "
           "while armed:\n";
    for (const auto &[kind, c] : t.coll_by_kind)
      out += "    " + kind + " " + std::to_string(c[0]) + " / " + std::to_string(c[1]) + ": " +
             std::to_string(c[2]) + " / " + std::to_string(c[3]) + " / " + std::to_string(c[4]) +
             " / " + std::to_string(c[5]) + " / " + std::to_string(c[6]) + "; calls " +
             std::to_string(c[7]) + "\n";
    for (const std::string &o : t.coll_other)
      out += "    other: " + o + "\n";
    for (const std::string &o : t.coll_everywhere)
      out += "    error everywhere, e.g. " + o + "\n";
    out += "  refused on every process (explicit schedule or limits the plan cannot honour) " +
           std::to_string(t.refused) + "\n";
    print_counts(out, "refused by", t.refused_by);
    for (const std::string &r : soak.rank0_refusals_)
      out += "    e.g. " + r + "\n";
    out += "  error statuses returned (all ranks, refusals included) " + std::to_string(errors) +
           "; wrong elements " + std::to_string(wrong) + "; failed checks " +
           std::to_string(failures) + "; resource checks failed " + std::to_string(all_leaks) +
           "\n";
    const auto series = [](const std::vector<Sample> &v, long long Sample::*field) {
      std::string text;
      for (const Sample &x : v)
        text += " " + std::to_string(x.call) + ": " + mib(x.*field) + ";";
      return text;
    };
    out += "  rank 0 RSS: start " + mib(start.rss) + ";" + series(checkpoints, &Sample::rss) +
           " largest growth from the warm-up (first checkpoint) to the end on any rank " +
           mib(rss_growth) + ", largest RSS " + mib(rss_end) + "\n";
    out += "  rank 0 heap in use: start " + mib(start.heap) + ";" +
           series(checkpoints, &Sample::heap) + " largest growth after warm-up on any rank " +
           std::to_string(heap_growth) + " bytes\n";
    out += "  rank 0 heap in use with the caches emptied:" +
           series(cleared_checkpoints, &Sample::heap) + " largest growth on any rank " +
           std::to_string(cleared_growth) + " bytes\n";
    out += "  rank 0 MPI objects: start " + start.objects.describe() + "; warm-up " +
           warm.objects.describe() + "; end " + end.objects.describe() + "; after clear_cache " +
           cleared.objects.describe() + "; executor requests alive at most " +
           std::to_string(max_requests) + "; communicators at most " + std::to_string(comms_above) +
           " above the start on any rank\n";
    std::fputs(out.c_str(), stdout);
    std::fflush(stdout);
  }
  set_env("REDIST_SINGLE_COPY", nullptr);
  set_env("REDIST_SCHEDULE", nullptr);
  set_env("REDIST_MAX_MEMORY", nullptr);
  set_env("REDIST_MAX_CONCURRENT", nullptr);
  redist_scalapack_clear_cache(); // before the contexts its keys name go away
  for (const int ctxt : pool.ictxts)
    mpitest::free_context(ctxt);
  for (const int ctxt : pool.ctxt)
    mpitest::free_context(ctxt);
}

} // namespace
