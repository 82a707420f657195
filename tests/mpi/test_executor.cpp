// The executor (src/exec.hpp) driven directly, as the C API drives it: random transfers
// (grids over some of the ranks, block sizes from 1 to a few hundred, windows at offsets,
// RSRC/CSRC, padded leading dimensions, full and trapezoid regions, 4/8/16-byte elements;
// all-at-once, stepwise with and without a memory cap, multiphase), each executed three times
// from different source arrays (contents and addresses) and checked element by element against
// the harness's oracle (padding, guard zones and elements outside the region included).
//
// It also checks which way the messages went. Every rank learns from the others'
// single_copy::identify() which senders it can read (single_copy::can_read). Under
// REDIST_SINGLE_COPY = direct, bounced, read-packed or always, every message from a readable
// sender must be read in a single copy and every other one sent; under never, none is read;
// under auto (the default), none from an unreadable sender.
// Where process_vm_readv is not permitted (Yama ptrace_scope >= 1 between sibling processes,
// a seccomp filter, ranks under different users) can_read is false for every pair: then every
// forced mode must send every message, which the test checks (expected count 0) along with the
// copied elements. Rank 0 prints how many (reader, sender) pairs could read; 0 of N(N-1) means
// the ways were checked only for that fallback.

#include "harness.hpp"

#include "api_internal.hpp"
#include "exec.hpp"
#include "planner.hpp"
#include "single_copy.hpp"

#include <gtest/gtest.h>
#include <mpi.h>

#include <algorithm>
#include <complex>
#include <cstdint>
#include <cstring>
#include <memory>
#include <numeric>
#include <string>
#include <vector>

namespace mpitest {
namespace {

using redist::Executor;
using redist::RankPlan;
using redist::ScheduleChoice;
using redist::ScheduleOptions;
using redist::Strategy;
namespace single_copy = redist::single_copy;

const char *mode_name(single_copy::Mode mode) {
  switch (mode) {
  case single_copy::Mode::automatic:
    return "auto";
  case single_copy::Mode::always:
    return "always";
  case single_copy::Mode::never:
    return "never";
  case single_copy::Mode::direct:
    return "direct";
  case single_copy::Mode::bounced:
    return "bounced";
  case single_copy::Mode::read_packed:
    return "read-packed";
  case single_copy::Mode::mapped:
    return "mapped";
  }
  return "?";
}

/// Which rank can read which rank's memory (row: the reader), and which can also map its
/// shared send buffers, from every rank's identity.
class Readability {
public:
  /// Collective over `comm`.
  explicit Readability(MPI_Comm comm) {
    int rank = 0;
    MPI_Comm_rank(comm, &rank);
    MPI_Comm_size(comm, &size_);
    const single_copy::SharedBuffer buffer(4096, true);
    const single_copy::Identity mine = single_copy::identify(probe_, 1, buffer);
    std::vector<single_copy::Identity> all(static_cast<std::size_t>(size_));
    MPI_Allgather(&mine, sizeof mine, MPI_BYTE, all.data(), sizeof mine, MPI_BYTE, comm);
    std::vector<int> row(static_cast<std::size_t>(size_), 0);
    for (int sender = 0; sender < size_; ++sender) {
      const single_copy::Identity &id = all[static_cast<std::size_t>(sender)];
      single_copy::Mapping mapping;
      row[static_cast<std::size_t>(sender)] = sender != rank && single_copy::can_read(id)
                                                  ? (mapping.map(id.pid, id.buffer) ? 2 : 1)
                                                  : 0;
    }
    readable_.resize(static_cast<std::size_t>(size_) * static_cast<std::size_t>(size_));
    MPI_Allgather(row.data(), size_, MPI_INT, readable_.data(), size_, MPI_INT, comm);
  }
  Readability(const Readability &) = delete;
  Readability &operator=(const Readability &) = delete;

  [[nodiscard]] bool can_read(int reader, int sender) const { return at(reader, sender) != 0; }
  [[nodiscard]] bool can_map(int reader, int sender) const { return at(reader, sender) == 2; }
  [[nodiscard]] int pairs() const {
    return static_cast<int>(
        std::count_if(readable_.begin(), readable_.end(), [](int r) { return r != 0; }));
  }
  [[nodiscard]] int size() const { return size_; }

private:
  [[nodiscard]] int at(int reader, int sender) const {
    return readable_[static_cast<std::size_t>(reader) * static_cast<std::size_t>(size_) +
                     static_cast<std::size_t>(sender)];
  }

  std::uint64_t probe_ = 0; // the other ranks' can_read reads it between the two allgathers
  int size_ = 0;
  std::vector<int> readable_;
};

/// MPI_COMM_WORLD duplicated with MPI_ERRORS_RETURN (the executor needs it), and who can read
/// whom on it. Made once: every test runs on it.
struct World {
  MPI_Comm comm = MPI_COMM_NULL;
  Readability readable;
  single_copy::Mode mode = single_copy::mode_from_environment();

  World() : comm(duplicate()), readable(comm) {
    print0(std::string("[  WAYS    ] REDIST_SINGLE_COPY=") + mode_name(mode) + ": " +
           std::to_string(readable.pairs()) + " of " +
           std::to_string(readable.size() * (readable.size() - 1)) +
           " (reader, sender) pairs of ranks can read (process_vm_readv)\n");
  }
  static MPI_Comm duplicate() {
    MPI_Comm c = MPI_COMM_NULL;
    MPI_Comm_dup(MPI_COMM_WORLD, &c);
    MPI_Comm_set_errhandler(c, MPI_ERRORS_RETURN);
    return c;
  }
};

World &world() {
  static World w;
  return w;
}

struct ExecCase {
  int index = 0;
  int element_size = 8; ///< 4: float, 8: double, 16: complex<double>
  Region region = Region::Full;
  bool unit_diag = false;
  std::int64_t m = 0, n = 0;
  MatSpec a, b;
  ScheduleOptions options;
  bool two_phases = false; ///< the draw guarantees an intermediate layout: multiphase uses it

  [[nodiscard]] CopySpec copy() const { return {region, unit_diag, m, n}; }
  [[nodiscard]] std::string describe() const {
    return "executor case " + std::to_string(index) + ": element size " +
           std::to_string(element_size) + " region " +
           (region == Region::Full    ? "FULL"
            : region == Region::Upper ? "UPPER"
                                      : "LOWER") +
           " unit_diag " + std::to_string(unit_diag) + " m=" + std::to_string(m) +
           " n=" + std::to_string(n) + " schedule " +
           std::string(redist::strategy_name(options.strategy)) + " max_memory " +
           std::to_string(options.max_memory) + "\n    a: " + a.describe() +
           "\n    b: " + b.describe() + "\n";
  }
};

redist::Layout layout_of(const MatSpec &s) {
  return redist::to_layout(c_layout(s, s.grid.ranks.data(), 1));
}

/// Block sizes from 1 to a few hundred (long contiguous pieces), or the whole matrix.
std::int64_t draw_block(Rng &rng, std::int64_t extent) {
  const std::int64_t r = rng.uniform(0, 99);
  if (r < 25) return rng.uniform(1, 4);
  if (r < 55) return rng.uniform(5, 40);
  if (r < 85) return rng.uniform(41, 300);
  return std::max<std::int64_t>(extent, 1) + rng.uniform(0, 5);
}

MatSpec draw_matrix(Rng &rng, GridSpec grid, std::int64_t m, std::int64_t n) {
  MatSpec s = random_matrix(rng, std::move(grid), m, n);
  s.mb = draw_block(rng, s.mg);
  s.nb = rng.coin(0.3) ? s.mb : draw_block(rng, s.ng);
  return s;
}

ExecCase draw_case(Rng &rng, int np, int index) {
  ExecCase c;
  c.index = index;
  c.element_size = static_cast<int>(rng.pick(std::vector<std::int64_t>{4, 8, 16}));
  const std::int64_t r = rng.uniform(0, 2);
  c.region = r == 0 ? Region::Full : r == 1 ? Region::Upper : Region::Lower;
  c.unit_diag = rng.coin(0.5);
  if (rng.coin(0.5)) {
    random_window(rng, c.m, c.n);
  } else {
    c.m = rng.uniform(1, 320);
    c.n = rng.uniform(1, 320);
  }
  std::vector<int> pool(static_cast<std::size_t>(np));
  std::iota(pool.begin(), pool.end(), 0);
  GridSpec ga = random_grid(rng, pool, static_cast<int>(rng.uniform(1, np)), true);
  GridSpec gb =
      rng.coin(0.2) ? ga : random_grid(rng, pool, static_cast<int>(rng.uniform(1, np)), true);
  const Strategy strategies[] = {Strategy::all_at_once, Strategy::stepwise, Strategy::stepwise,
                                 Strategy::multiphase};
  c.options.strategy = strategies[rng.uniform(0, 3)];
  // Kaushik et al.'s intermediates (CYCLIC(lcm), CYCLIC(gcd)) apply to these row blocks on
  // row grids of equal height.
  constexpr std::int64_t kBlockPairs[][2] = {{2, 3}, {3, 2}, {4, 6}, {6, 4}, {2, 5}, {3, 4}};
  const bool force_two_phases =
      c.options.strategy == Strategy::multiphase && ga.nprow >= 2 && rng.coin(0.6);
  if (force_two_phases) {
    gb = ga;
    rng.shuffle(gb.ranks);
    gb.kind = GridKind::Map;
  }
  c.a = draw_matrix(rng, std::move(ga), c.m, c.n);
  c.b = draw_matrix(rng, std::move(gb), c.m, c.n);
  if (force_two_phases) {
    const auto &blocks = kBlockPairs[rng.uniform(0, std::size(kBlockPairs) - 1)];
    const std::int64_t scale = rng.coin(0.5) ? 1 : 16;
    c.a.mb = blocks[0] * scale;
    c.b.mb = blocks[1] * scale;
    c.two_phases = true;
  }
  const auto es = static_cast<std::int64_t>(c.element_size);
  if (c.options.strategy == Strategy::stepwise && rng.coin(0.6)) {
    // A chunk of a fraction of the window: packed pieces go in up to 50 sub-steps.
    const std::int64_t chunk = std::max<std::int64_t>(1, c.m * c.n / rng.uniform(2, 50));
    c.options.max_memory = 2 * es * chunk;
  } else if (c.options.strategy == Strategy::multiphase && rng.coin(0.3)) {
    c.options.max_memory = 4 * es * std::max<std::int64_t>(1, c.m * c.n);
  }
  return c;
}

/// Messages of `plan` this rank (`me`) receives from a rank it can read, and sends to a rank
/// that can read it.
struct WayCounts {
  std::size_t receives = 0;
  std::size_t sends = 0;
  std::size_t mappable_receives = 0; ///< of the receives, from a rank whose buffer maps here
};
WayCounts readable_messages(const RankPlan &plan, int me, const Readability &readable) {
  WayCounts counts;
  for (const redist::Peer &p : plan.recvs) {
    counts.receives += readable.can_read(me, p.rank) ? 1 : 0;
    counts.mappable_receives += readable.can_map(me, p.rank) ? 1 : 0;
  }
  for (const redist::Peer &p : plan.sends)
    counts.sends += readable.can_read(p.rank, me) ? 1 : 0;
  return counts;
}

/// What a run found beyond the copied elements.
struct Tally {
  int two_phase_plans = 0;
  int chunked_plans = 0; ///< stepwise with chunk_elements > 0
  std::size_t single_copy_receives = 0;
  std::size_t mapped_receives = 0;
  std::size_t array_copies = 0; ///< receives copied from a mapped source array
};

/// Frees memory from single_copy::allocate_shared_array.
struct SharedArrayFree {
  void operator()(void *memory) const { single_copy::free_shared_array(memory); }
};

/// Plan `c` on this rank exactly as the C API does (src/capi.cpp), then execute it three times
/// and check B and the ways its messages went. Collective over world().comm.
template <class T> std::string run_case(const ExecCase &c, Tally &tally) {
  World &w = world();
  int rank = 0;
  int size = 0;
  MPI_Comm_rank(w.comm, &rank);
  MPI_Comm_size(w.comm, &size);
  redist::Transfer t;
  t.src = layout_of(c.a);
  t.dst = layout_of(c.b);
  t.m = c.m;
  t.n = c.n;
  t.region.kind = c.region == Region::Upper   ? redist::Region::Kind::upper
                  : c.region == Region::Lower ? redist::Region::Kind::lower
                                              : redist::Region::Kind::full;
  t.region.unit_diag = c.unit_diag;
  const LocalBuf la = local_buf(c.a, rank);
  const LocalBuf lb = local_buf(c.b, rank);

  RankPlan plan = redist::make_rank_plan(t, rank, size);
  const redist::ScheduleInputs local = redist::all_at_once_local(plan, c.options.model, sizeof(T));
  double global[2] = {static_cast<double>(local.all_at_once_buffer_max), local.all_at_once_seconds};
  MPI_Allreduce(MPI_IN_PLACE, global, 2, MPI_DOUBLE, MPI_MAX, w.comm);
  redist::ScheduleInputs inputs;
  inputs.all_at_once_buffer_max = static_cast<redist::Index>(global[0]);
  inputs.all_at_once_seconds = global[1];
  ScheduleChoice choice;
  const std::string why = redist::choose_schedule(t, plan, c.options, inputs, sizeof(T), choice);
  if (!why.empty()) {
    return "  choose_schedule: " + why + "\n"; // the same answer on every rank
  }
  std::string fail;
  if (c.two_phases && !choice.phases) fail += "  the plan does not run in two phases\n";
  tally.two_phase_plans += choice.phases ? 1 : 0;
  tally.chunked_plans += choice.chunk_elements > 0 && !choice.steps.empty() ? 1 : 0;
  // Receives of the plan that reads the caller's source array (a two-phase plan's first phase)
  // from ranks whose memory files map here.
  const std::size_t source_mappable =
      readable_messages(choice.phases ? choice.phases->plans[0] : plan, rank, w.readable)
          .mappable_receives;
  WayCounts readable;
  if (choice.phases) {
    for (const RankPlan &phase : choice.phases->plans) {
      const WayCounts counts = readable_messages(phase, rank, w.readable);
      readable.receives += counts.receives;
      readable.sends += counts.sends;
      readable.mappable_receives += counts.mappable_receives;
    }
  } else {
    readable = readable_messages(plan, rank, w.readable);
  }
  const std::unique_ptr<Executor> made =
      make_executor(w.comm, std::move(plan), sizeof(T), la.lld, lb.lld, std::move(choice));
  Executor &executor = *made;

  // A(salt 1) -> fresh B1; A(salt 2) -> fresh B2; A(salt 3) -> B1 again. The three source
  // arrays live at once: each execution sends another address.
  struct Execution {
    int a_salt, b_salt;
    bool fresh_b;
  };
  const Execution executions[] = {{1, 4, true}, {2, 5, true}, {3, 4, false}};
  std::vector<std::vector<T>> sources(std::size(executions));
  // Odd cases copy the first and last sources into shared arrays (redist_alloc's memory),
  // which receivers map and copy from; the second stays in ordinary memory.
  const bool shared_sources = c.index % 2 == 1;
  std::vector<std::unique_ptr<void, SharedArrayFree>> shared(std::size(executions));
  std::vector<T> b1;
  std::vector<T> b2;
  for (std::size_t e = 0; e < std::size(executions); ++e) {
    const Execution &x = executions[e];
    std::vector<T> &a = sources[e];
    fill_a(c.a, la, x.a_salt, a);
    const std::vector<T> a_before = a;
    T *source = a.data();
    if (shared_sources && e != 1 && !a.empty()) {
      shared[e].reset(single_copy::allocate_shared_array(a.size() * sizeof(T)));
      if (shared[e]) {
        source = static_cast<T *>(shared[e].get());
        std::memcpy(source, a.data(), a.size() * sizeof(T));
      }
    }
    // Every rank's sources are shared, or none: the same case everywhere.
    const bool from_shared = on_any_rank(shared[e] != nullptr) != 0;
    std::vector<T> &b = x.b_salt == 4 ? b1 : b2;
    if (x.fresh_b) fill_sentinel(lb, x.b_salt, b);
    const std::string what = "execution " + std::to_string(e + 1) + " (A salt " +
                             std::to_string(x.a_salt) + (x.fresh_b ? ", fresh B" : ", B of 1") +
                             ")";
    try {
      executor.execute(source, b.data());
    } catch (const redist::Error &error) {
      fail += "  " + what + " threw: " + error.what() + "\n";
      continue;
    }
    if (std::memcmp(source, a_before.data(), a.size() * sizeof(T)) != 0)
      fail += "  " + what + ": the source array was modified\n";
    // Forced reads of the array copy every mappable message from the shared arrays, and so
    // does forced `mapped` (a shared array is not packed: its receivers copy from it); the
    // model may choose otherwise; the other ways never read the array.
    const std::size_t copies = executor.array_copies();
    tally.array_copies += copies;
    const bool reads = w.mode == single_copy::Mode::direct ||
                       w.mode == single_copy::Mode::bounced || w.mode == single_copy::Mode::mapped;
    const bool may_read =
        w.mode == single_copy::Mode::automatic || w.mode == single_copy::Mode::always;
    const std::size_t expected_copies = from_shared && (reads || may_read) ? source_mappable : 0;
    if (reads || !may_read ? copies != expected_copies : copies > expected_copies) {
      fail += "  " + what + ": " + std::to_string(copies) +
              " receives copied from a mapped source array, expected " +
              (reads || !may_read ? "" : "at most ") + std::to_string(expected_copies) + "\n";
    }
    std::string report;
    const std::int64_t bad = check_b(c.copy(), c.a, c.b, lb, b.data(), x.a_salt, x.b_salt, report);
    if (bad > 0) {
      fail += "  " + what + ": " + std::to_string(bad) +
              " elements of B's local buffer differ from the oracle, e.g.\n";
      fail += report;
    }
  }

  const std::size_t receives = executor.single_copy_receives();
  const std::size_t sends = executor.single_copy_sends();
  tally.single_copy_receives += receives;
  const auto counts = [](std::size_t r, std::size_t s) {
    return std::to_string(r) + " receives and " + std::to_string(s) + " sends";
  };
  const bool automatic = w.mode == single_copy::Mode::automatic;
  const WayCounts expected = w.mode == single_copy::Mode::never ? WayCounts{} : readable;
  if (automatic ? receives > expected.receives || sends > expected.sends
                : receives != expected.receives || sends != expected.sends) {
    fail += std::string("  single copy under REDIST_SINGLE_COPY=") + mode_name(w.mode) + ": " +
            counts(receives, sends) + ", expected " + (automatic ? "at most " : "") +
            counts(expected.receives, expected.sends) + " (messages from / to readable ranks)\n";
  }
  const std::size_t mapped = executor.mapped_receives();
  tally.mapped_receives += mapped;
  const bool chooses = automatic || w.mode == single_copy::Mode::always;
  const std::size_t mapped_expected =
      w.mode == single_copy::Mode::mapped ? expected.mappable_receives : 0;
  if (chooses ? mapped > expected.mappable_receives : mapped != mapped_expected) {
    fail += std::string("  mapped receives under REDIST_SINGLE_COPY=") + mode_name(w.mode) + ": " +
            std::to_string(mapped) + ", expected " + (chooses ? "at most " : "") +
            std::to_string(chooses ? expected.mappable_receives : mapped_expected) +
            " (messages from ranks whose buffers map here)\n";
  }
  return fail;
}

std::string run_typed(const ExecCase &c, Tally &tally) {
  switch (c.element_size) {
  case 4:
    return run_case<float>(c, tally);
  case 16:
    return run_case<std::complex<double>>(c, tally);
  default:
    return run_case<double>(c, tally);
  }
}

/// Runs c on every rank under the watchdog; 1 when it failed on any rank. `origin` says how
/// to draw it again ("seed S np N").
int run_everywhere(const ExecCase &c, const std::string &origin, Tally &tally) {
  watchdog_arm(origin + ", " + c.describe());
  const std::string fail = run_typed(c, tally);
  watchdog_disarm();
  if (!fail.empty()) ADD_FAILURE() << origin << ", " << c.describe() << fail;
  return on_any_rank(!fail.empty());
}

/// Runs hand-made cases; the number that failed.
int run_hand_made(const std::vector<ExecCase> &cases) {
  Tally tally;
  int failed = 0;
  for (const ExecCase &c : cases) {
    failed += run_everywhere(c, "hand-made, np " + std::to_string(world_size()), tally);
  }
  return failed;
}

/// Sum of `value` over the ranks.
long long total(long long value) {
  long long sum = 0;
  MPI_Allreduce(&value, &sum, 1, MPI_LONG_LONG, MPI_SUM, MPI_COMM_WORLD);
  return sum;
}

TEST(Executor, RandomTransfersExecutedRepeatedly) {
  const int np = world_size();
  const std::uint64_t seed = shared_seed("Executor.RandomTransfersExecutedRepeatedly",
                                         515000ULL + static_cast<unsigned>(np));
  Rng rng(seed);
  Tally tally;
  int failed = 0;
  int run = 0;
  for (int index = 0; index < options().cases; ++index) {
    const ExecCase c = draw_case(rng, np, index);
    if (options().only_case >= 0 && options().only_case != index) continue;
    if (options().verbose) print0(c.describe());
    ++run;
    failed +=
        run_everywhere(c, "seed " + std::to_string(seed) + " np " + std::to_string(np), tally);
  }
  print0("[  CASES   ] " + std::to_string(run) + " executor cases on " + std::to_string(np) +
         " ranks, " + std::to_string(failed) + " failed; plans in two phases " +
         std::to_string(total(tally.two_phase_plans)) + ", stepwise in chunks " +
         std::to_string(total(tally.chunked_plans)) + " (summed over ranks); messages read in a " +
         "single copy " +
         std::to_string(total(static_cast<long long>(tally.single_copy_receives))) +
         ", of them unpacked from a mapped buffer " +
         std::to_string(total(static_cast<long long>(tally.mapped_receives))) +
         ", copied from a mapped source array " +
         std::to_string(total(static_cast<long long>(tally.array_copies))) + "\n");
  EXPECT_EQ(failed, 0);
}

/// A hand-made case on ranks 0 (source) and 1 (destination), both 1 x 1 grids; the other
/// ranks are idle.
ExecCase pair_case(int index, std::int64_t m, std::int64_t n, int element_size) {
  ExecCase c;
  c.index = index;
  c.element_size = element_size;
  c.m = m;
  c.n = n;
  for (MatSpec *s : {&c.a, &c.b}) {
    s->grid.nprow = 1;
    s->grid.npcol = 1;
    s->mg = m;
    s->ng = n;
    s->mb = m;
    s->nb = n;
    s->lld_extra = {3};
  }
  c.a.grid.ranks = {0};
  c.b.grid.ranks = {1};
  c.b.lld_extra = {1};
  return c;
}

// One message of 9.6 MB from rank 0 to rank 1 in 600 columns apart in both arrays (padded
// leading dimensions): a bounced read refills the 256 KiB bounce buffer ~37 times, splitting
// columns at its end, and copies out with streaming stores (the message is above
// kStreamingBytes); read-packed reads it in bounce-sized windows. Full and trapezoid regions,
// all at once and in stepwise chunks.
TEST(Executor, LongMessageRefillsTheBounceBuffer) {
  if (world_size() < 2) GTEST_SKIP() << "needs two ranks";
  std::vector<ExecCase> cases;
  for (const Region region : {Region::Full, Region::Upper}) {
    for (const redist::Index cap : {redist::Index{0}, redist::Index{1} << 20}) {
      ExecCase c = pair_case(static_cast<int>(cases.size()), 1000, 600, 16);
      c.region = region;
      c.options.strategy = cap > 0 ? Strategy::stepwise : Strategy::all_at_once;
      c.options.max_memory = cap;
      cases.push_back(std::move(c));
    }
  }
  EXPECT_EQ(run_hand_made(cases), 0);
}

// Messages of single elements, apart on both sides: source rows CYCLIC(1) over ranks (0, 1),
// destination rows CYCLIC(2) over ranks (1, 0), so each rank receives every fourth row of
// the other's, 128 x 80 = 10240 pieces per message: a read gathers more pieces than one
// process_vm_readv takes (1024) and is issued in batches.
TEST(Executor, ManyPiecesAreReadInBatches) {
  if (world_size() < 2) GTEST_SKIP() << "needs two ranks";
  std::vector<ExecCase> cases;
  for (const int element_size : {4, 8, 16}) {
    ExecCase c = pair_case(static_cast<int>(cases.size()), 512, 80, element_size);
    c.a.grid = GridSpec{GridKind::Map, 2, 1, {0, 1}};
    c.b.grid = GridSpec{GridKind::Map, 2, 1, {1, 0}};
    c.a.mb = 1;
    c.b.mb = 2;
    c.a.lld_extra = {2, 0};
    c.b.lld_extra = {0, 5};
    cases.push_back(std::move(c));
  }
  EXPECT_EQ(run_hand_made(cases), 0);
}

} // namespace
} // namespace mpitest
