#pragma once
// The front end shared by the entry families: the description of a call, its agreement across
// the processes of the call, the plan cache and plan creation with agreement on failures.
// Independent of the BLACS integer width (scalapack_call.cpp, compiled LP64 and ILP64, fills in
// a description from its descriptors).

#include "api_internal.hpp"
#include "collective.hpp"

#include <mpi.h>

#include <array>
#include <cstdint>
#include <list>
#include <memory>
#include <mutex>
#include <span>
#include <string>
#include <vector>

namespace redist::front_end {

/// The argument a value comes from, for messages (each family names its arguments).
enum class Arg { none, m, n, uplo, diag, desca, ia, ja, descb, ib, jb, environment };

/// The values of one side (A or B) that every process in that side's grid must agree on:
/// imb, inb the first block's rows and columns (PBLAS's IMB_, INB_; mb, nb without one), order
/// 1 for row-major local arrays.
template <class V> struct SideFields {
  V m{}, n{}, mb{}, nb{}, rsrc{}, csrc{}, i{}, j{}, nprow{}, npcol{}, imb{}, inb{}, order{};
};

/// The values of a call that must agree everywhere; V is a value, or its agreed range.
/// `digest`: a hash of what else must agree and has no field of its own (the C API's element
/// type, rank maps and cost model; 0 in the ScaLAPACK entries).
template <class V> struct CallFields {
  V m{}, n{}, uplo{}, diag{};
  V operation{}; ///< kCopy, or B := alpha op(A) + beta B with op N or transposed (T, C)
  SideFields<V> a, b;
  V strategy{}, max_concurrent{}, max_memory{};
  V digest{};
};

/// Calls f(arg, name, x...) for each field, x being that field in each of `fields`; `name`
/// is the field's name in a descriptor for a side field ("MB_"), else the argument's. The one
/// list of the fields.
template <class F, class... T> void each_field(F &&f, T &...fields) {
  f(Arg::m, "M", fields.m...);
  f(Arg::n, "N", fields.n...);
  f(Arg::uplo, "UPLO", fields.uplo...);
  f(Arg::diag, "DIAG", fields.diag...);
  f(Arg::none, "TRANS", fields.operation...);
  const auto side = [&](Arg desc, Arg i, Arg j, auto &...s) {
    f(desc, "M_", s.m...);
    f(desc, "N_", s.n...);
    f(desc, "MB_", s.mb...);
    f(desc, "NB_", s.nb...);
    f(desc, "RSRC_", s.rsrc...);
    f(desc, "CSRC_", s.csrc...);
    f(i, "I", s.i...);
    f(j, "J", s.j...);
    f(desc, "grid rows", s.nprow...);
    f(desc, "grid columns", s.npcol...);
    f(desc, "IMB_", s.imb...);
    f(desc, "INB_", s.inb...);
    f(desc, "order", s.order...);
  };
  side(Arg::desca, Arg::ia, Arg::ja, fields.a...);
  side(Arg::descb, Arg::ib, Arg::jb, fields.b...);
  f(Arg::environment, "schedule", fields.strategy...);
  f(Arg::environment, "max_concurrent", fields.max_concurrent...);
  f(Arg::environment, "max_memory", fields.max_memory...);
  f(Arg::none, "digest", fields.digest...);
}

/// CallFields::operation: a copy (PxGEMR2D, PxTRMR2D, redist_plan_create), or a plan for
/// B := alpha op(A) + beta B (PxTRAN, PxGEADD, PxTRADD, redist_plan_create_op), whose
/// Transfer is transposed for op T or C (Transfer::perm; its messages are all sent, op N's
/// may go in a single copy).
inline constexpr long long kCopy = 0;
inline constexpr long long kOperationN = 1;
inline constexpr long long kOperationTransposed = 2;

/// Where this process stands in one side's grid.
struct Position {
  bool member = false;
  long long row = -1, col = -1;
  long long lld = 1;
};

/// One call as this process sees it.
struct CallArgs {
  const char *routine = "";
  std::size_t element_size = 0;
  CallFields<long long> fields; // uplo and diag: ' ' for a full copy; i, j from index_base
  long long index_base = 0;
  Position a, b;
  bool whole_layouts = false; // every process describes both sides (else only their members)
  ScheduleOptions options;
  single_copy::Mode single_copy_mode = single_copy::Mode::automatic; // REDIST_SINGLE_COPY
};

/// The range of one field over the processes that contributed it.
struct Range {
  bool present = false;
  long long min = 0, max = 0;
  [[nodiscard]] bool differs() const { return present && min != max; }
};

/// Identity of a cache entry, the same on every process that built it together: the
/// generation agreed at that call (max over its processes of their last generation, plus one)
/// and the lowest world rank among them. No two builds share it, because the lowest-ranked
/// process takes part in both and its generation only grows.
struct BuildId {
  long long generation = 0;
  long long creator = -1;
};

struct OwnedComm {
  MPI_Comm comm = MPI_COMM_NULL;
  BuildId id;
  OwnedComm(MPI_Comm c, BuildId built) : comm(c), id(built) {}
  OwnedComm(const OwnedComm &) = delete;
  OwnedComm &operator=(const OwnedComm &) = delete;
  ~OwnedComm();
};

struct CachedPlan {
  BuildId id;
  std::shared_ptr<OwnedComm> comm;
  std::unique_ptr<Executor> executor;
};

/// A cache key: the values a lookup compares, in place (a lookup allocates nothing), and
/// their hash, compared first.
struct Key {
  static constexpr std::size_t kCapacity = 72;
  std::array<long long, kCapacity> values{};
  std::size_t size = 0;
  std::uint64_t hash = 0;
  void push(long long x) {
    if (size == kCapacity) too_long();
    // A sum of products, one per value and position: no chain of multiplications through the
    // key (FNV's was a tenth of a cached ScaLAPACK call). A filter before the comparison.
    hash += (static_cast<std::uint64_t>(x) ^ size) * 0x9E3779B97F4A7C15ULL;
    values[size++] = x;
  }
  void push(std::span<const long long> xs) {
    for (const long long x : xs)
      push(x);
  }
  bool operator==(const Key &other) const;

private:
  [[noreturn]] static void too_long();
};

/// What a process found in the caches for this call (null: a miss).
struct CacheLookup {
  Key plan_key, comm_key;
  std::shared_ptr<CachedPlan> plan;
  std::shared_ptr<OwnedComm> comm;
};

/// The verdict of one agreement, the same on every process.
struct Agreement {
  long long error = 0;      // max of the error words (0: none)
  CallFields<Range> fields; // over the processes without a local error
  bool plan_hit = false;    // every process found the same cached plan
  bool comm_hit = false;    // ... and the same cached communicator
  BuildId new_id;           // for entries built at this call
  [[nodiscard]] long long error_priority() const;
  [[nodiscard]] long long error_rank() const; // rank in the agreement's communicator
};

/// An error word for agree(): the highest priority wins, then the highest `order` (a rank,
/// or lowest_first(rank, size) to make the lowest rank win).
long long error_word(long long priority, int order);
/// The `order` of an error word.
int error_order(long long word);
inline int lowest_first(int rank, int size) {
  return size - 1 - rank;
}

/// The reduction under every agreement of the library: the maximum over `comm` of error words
/// and of values sent as (x, -x), whose maxima give max(x) and -min(x). Returns MPI's code.
int reduce(MPI_Comm comm, long long *words, int count);

/// One collective over `comm` (every process of the call): the error words, every field of
/// `call` (side fields from the members of that side's grid only unless whole_layouts,
/// nothing from a process with an error), and whether every process holds the same cached
/// entries; `extra` words ride along, replaced by their maxima over `comm`.
Agreement agree(MPI_Comm comm, const CallArgs &call, long long error, const CacheLookup &cache,
                std::span<long long> extra = {});

/// An error word for a batch: the error of operation `op` (-1: an argument of the batch as a
/// whole, which wins), the lowest operation winning, then the highest `order` (error_word).
long long batch_error_word(long long op, int order);

/// The operation of a batch_error_word (-1: the batch's own argument).
long long batch_error_op(long long word);

/// The agreement of a call this process found cached, before agree(): one reduction over
/// `comm` of the error words and the cached plan's build id (5 words instead of every field).
/// True: no process has an error and every process holds the plan of the same build, so all
/// were built together from the same agreed fields and the call executes it. False on every
/// process otherwise (a miss, an error, a mismatch anywhere): the caller runs agree(), whose
/// verdict names the error or the field, as without this round.
bool agree_hit(MPI_Comm comm, long long error, const CacheLookup &cache,
               collective::Confirmation &confirmation);

/// Look up `call` in the plan cache; `identity` names what the description does not (the
/// communicators and contexts of the call).
CacheLookup look_up(const CallArgs &call, std::span<const long long> identity,
                    std::span<const long long> comm_identity);

/// The dimensions of a side the agreed fields replicate (RSRC_ or CSRC_ = -1).
Replication replication_of(const SideFields<Range> &side);

/// The transfer the agreed fields describe (a replicated dimension's source process left 0:
/// make_part places its copies), its grids from every process's grid positions
/// (gathered over `comm`, in rank order). Every process returns the same status:
/// REDIST_ERR_ARGUMENT when no process holds a position of a grid (`side` 'A' or 'B',
/// `row`, `col`), REDIST_ERR_NO_MEMORY when a process could not allocate (`here`: this one).
struct Gathered {
  int status = REDIST_SUCCESS;
  char side = 0;
  long long row = -1, col = -1;
  bool here = false;
};
Gathered gather_transfer(MPI_Comm comm, const CallArgs &call, const Agreement &agreed, Transfer &t);

/// The executor for `t` on `exec_comm`, planned on every process of `comm` (same ranks);
/// failures are agreed in one reduction, so every process takes the same branch: out of
/// memory anywhere, then a schedule option that cannot be honoured (`why`). `predict`: also
/// exchange the all-at-once inputs when no memory cap asks for them (for the predicted time).
struct Planned {
  int status = REDIST_SUCCESS; // REDIST_ERR_NO_MEMORY or REDIST_ERR_ARGUMENT everywhere
  bool here = false;           // the failure happened on this process
  int first = -1;              // the lowest rank where it happened
  std::string why;             // this process's reason, for REDIST_ERR_ARGUMENT
  std::unique_ptr<Executor> executor;
};
Planned plan_everywhere(MPI_Comm comm, int rank, int size, MPI_Comm exec_comm, const Transfer &t,
                        const ScheduleOptions &options, std::size_t element_size, Index lld_a,
                        Index lld_b, bool predict);

/// plan_everywhere() for an N-d transfer (redist_nd_plan_create): its executor on `comm`, with
/// the schedule choose_nd_schedule picks under `options` (the all-at-once inputs exchanged, for
/// the memory cap and the predicted time) and this rank's strides of A and B.
Planned plan_nd_everywhere(MPI_Comm comm, int rank, int size, const NdTransfer &t,
                           const ScheduleOptions &options, std::size_t element_size);

/// One operation of a batch: a 2-D block-cyclic transfer (`transfer`, with this process's
/// leading dimensions), or a block grid transfer (`grid_transfer`, or its plan `grid` already
/// made; redist_grid_batch_create).
struct BatchMember {
  const Transfer *transfer = nullptr;
  Index lld_a = 1, lld_b = 1;
  /// A transfer with replicated sides, planned as its parts (replica_parts, reading a
  /// replicated A locally), which share the operation's arrays.
  Replication replicated_a, replicated_b;
  /// Set by plan_batch_everywhere: how many of the executor's operations this one became.
  int operations = 1;
  const GridTransfer *grid_transfer = nullptr;
  /// This rank's plan of grid_transfer: made here when null (then kept, for making the
  /// executor anew), else used as it is (grid_transfer unused).
  std::shared_ptr<const GridRankPlan> grid;
  std::size_t element_size = 0;
};

/// plan_everywhere() for a batch (redist_plan_create_batch, redist_grid_batch_create): the
/// executor of the operations `ops` moved together, one message per pair of processes
/// (Executor's batch constructor), all at once.
Planned plan_batch_everywhere(MPI_Comm comm, int rank, int size, MPI_Comm exec_comm,
                              std::span<BatchMember> ops);

/// plan_everywhere() for a transfer with replicated sides in several parts (replica_parts): a
/// batch of one operation per part (make_part, keep_destinations), all at once, every one on
/// the caller's two local arrays.
Planned plan_parts_everywhere(MPI_Comm comm, int rank, int size, MPI_Comm exec_comm,
                              const Transfer &t, Replication a, Replication b,
                              const ReplicaParts &parts, std::size_t element_size, Index lld_a,
                              Index lld_b);

/// plan_everywhere() for a transfer whose sides may be replicated (a and b: which dimensions):
/// one plan of the transfer when it has one part (replica_parts; `t` made that part's, A then
/// read from its copy on process row or column 0 unless `options` run all at once), else
/// plan_parts_everywhere(); `parts` says which. A replicated B in several parts under options
/// asking for another schedule, a limit or a cap: REDIST_ERR_ARGUMENT on every process (`why`;
/// the options agree, so nothing else is agreed).
Planned plan_replicated_everywhere(MPI_Comm comm, int rank, int size, MPI_Comm exec_comm,
                                   Transfer &t, Replication a, Replication b,
                                   const ScheduleOptions &options, std::size_t element_size,
                                   Index lld_a, Index lld_b, bool predict, ReplicaParts &parts);

/// plan_everywhere() for a block grid transfer (redist_grid_plan_create): `plan` is this rank's
/// plan of `t` (made here, then kept for making the executor anew, when null; `t` unused
/// otherwise), its executor on `comm` all at once (Executor's block grid constructor).
Planned plan_grid_everywhere(MPI_Comm comm, int rank, int size, const GridTransfer *t,
                             std::shared_ptr<const GridRankPlan> &plan, std::size_t element_size);

/// Build the plan for `t` on every process of `comm` and cache it under `lookup` (for a
/// replicated side, the plan of its parts, replica_parts: a batch of one operation per part when
/// there are several, which needs a schedule of all at once; `t` is left as the first part's
/// transfer when there is one); failures
/// (out of memory on any process, options that cannot be honoured) are agreed, so every
/// process returns the same status: REDIST_ERR_NO_MEMORY (`here`: on this process) or
/// REDIST_ERR_ARGUMENT with the reason in `why`; REDIST_ERR_MPI if duplicating `comm` fails
/// (local). `comm` is duplicated for the plan unless the agreement found it cached.
struct Built {
  int status = REDIST_SUCCESS;
  bool here = false;
  std::string why;
  std::shared_ptr<CachedPlan> plan;
};
Built build_plan(MPI_Comm comm, int rank, int size, const CallArgs &call, Transfer &t,
                 const Agreement &agreed, CacheLookup &lookup);

/// The caches' capacities (REDIST_PLAN_CACHE_SIZE, REDIST_COMM_CACHE_SIZE, read at each call;
/// local: a process that holds fewer entries only makes the hit agreement miss more often).
inline constexpr std::size_t kDefaultPlanCache = 16;
inline constexpr std::size_t kDefaultCommCache = 8;
inline constexpr long long kMaxCacheSize = 4096;
void set_cache_capacity(std::size_t plans, std::size_t comms);

/// Forget this call's plan and communicator (local), after its execution failed here: the
/// next call with the same key misses on this process, so the hit agreement (every process
/// must hold the same build id) makes every process build a new plan on a new duplicate of
/// the communicator, where no message of the failed execution can be matched.
void drop(const CacheLookup &lookup);

/// Free every cached plan and communicator (local).
void clear_cache();

} // namespace redist::front_end
