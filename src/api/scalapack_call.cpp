// How the ScaLAPACK-compatible entries (scalapack_api.cpp) run one call (run_call), with the
// call count and the cache it keeps (redist_scalapack_call_count, redist_scalapack_clear_cache).
//
// One call:
//  1. local checks of every argument this process can see;
//  2. the front end's agreement over ICTXT's communicator: first whether every process holds
//     this call's plan (the same build) and no process has an error (5 words); if not,
//     errors, the global arguments (which must agree), and whether every process has this
//     call's plan and communicator cached;
//  3. on a miss, every process's coordinates in A's and B's grids, then the plan (and, if
//     needed, a duplicate of ICTXT's communicator) is built and cached (front_end.hpp);
//  4. execution.
// All processes of ICTXT take the same branch at every step, so none waits for another.

#include "scalapack_call.hpp"
#include "call_timers.hpp"
#include "environment.hpp"
#include "front_end.hpp"

#include <atomic>
#include <climits>
#include <cstdio>
#include <cstring>
#include <mutex>
#include <optional>
#include <tuple>

namespace redist::scalapack {

void report(const std::string &message) {
  std::fprintf(stderr, "{ redist } %s\n", message.c_str());
  std::fflush(stderr);
}

MPI_Comm context_comm(redist_int ctxt) {
  redist_int handle = -1;
  Cblacs_get(ctxt, blacs::kGetContextComm, &handle);
  MPI_Comm comm = Cblacs2sys_handle(handle);
  Cfree_blacs_system_handle(handle);
  return comm;
}

Descriptor read_descriptor(const redist_int *desc) {
  Descriptor d;
  d.dtype = desc[DTYPE_];
  d.ctxt = desc[CTXT_];
  if (d.dtype == kBlockCyclic2D) {
    d.m = desc[2];
    d.n = desc[3];
    d.mb = d.imb = desc[4];
    d.nb = d.inb = desc[5];
    d.rsrc = desc[6];
    d.csrc = desc[7];
    d.lld = desc[8];
  } else if (d.dtype == kBlockCyclic2DInb) {
    d.m = desc[2];
    d.n = desc[3];
    d.imb = desc[4];
    d.inb = desc[5];
    d.mb = desc[6];
    d.nb = desc[7];
    d.rsrc = desc[8];
    d.csrc = desc[9];
    d.lld = desc[10];
  }
  return d;
}

namespace {

std::atomic<long long> call_count{0};

struct ArgumentError {
  int position;
  std::string message;
};

[[noreturn]] void fail(const Call &c, int position, const std::string &what,
                       const std::string &value, const std::string &reason) {
  throw ArgumentError{position, std::string(c.routine) + ": argument " + std::to_string(position) +
                                    " (" + what + ") = " + value + ": " + reason};
}

[[noreturn]] void fail(const Call &c, int position, const std::string &what, long long value,
                       const std::string &reason) {
  fail(c, position, what, std::to_string(value), reason);
}

// The global arguments are limited to 2^53 (kLargestAgreed); only an ILP64 build can pass larger
// values.
// A function, not a comparison in place: with 32-bit redist_int the test is always false.
bool above_agreed(long long v) {
  return v > kLargestAgreed;
}

std::string quoted(char ch) {
  return ch == '\0' ? "''" : std::string("'") + ch + "'";
}

void check_side(const Call &c, const Side &s) {
  const Descriptor &d = s.d;
  const auto field = [&](const char *name) {
    return std::string("DESC") + s.name + "(" + name + ")";
  };
  if (d.dtype != kBlockCyclic2D && d.dtype != kBlockCyclic2DInb)
    fail(c, s.pos_desc, field("DTYPE_"), d.dtype,
         "descriptor type must be 1 (9 integers) or 2 (11 integers, PBLAS's BLOCK_CYCLIC_2D_INB)");
  // In the descriptor's order (IMB_ and INB_ where it has them: 11 integers), as PBLAS names
  // the first bad entry.
  const bool first_blocks = d.dtype == kBlockCyclic2DInb;
  struct Entry {
    const char *name;
    redist_int value, lowest;
    const char *reason;
    bool present;
  };
  const Entry entries[] = {{"M_", d.m, 0, "must be >= 0", true},
                           {"N_", d.n, 0, "must be >= 0", true},
                           {"IMB_", d.imb, 1, "first block size must be >= 1", first_blocks},
                           {"INB_", d.inb, 1, "first block size must be >= 1", first_blocks},
                           {"MB_", d.mb, 1, "block size must be >= 1", true},
                           {"NB_", d.nb, 1, "block size must be >= 1", true}};
  for (const Entry &e : entries) {
    if (e.present && e.value < e.lowest) fail(c, s.pos_desc, field(e.name), e.value, e.reason);
  }
  for (const Entry &e : entries) {
    if (e.present && above_agreed(e.value))
      fail(c, s.pos_desc, field(e.name), e.value, kAgreedLimit);
  }
  // The distribution's period, block size times processes, must be an Index.
  if (d.mb > INT64_MAX / s.grid.nprow)
    fail(c, s.pos_desc, field("MB_"), d.mb, "block size times grid rows must be below 2^63");
  if (d.nb > INT64_MAX / s.grid.npcol)
    fail(c, s.pos_desc, field("NB_"), d.nb, "block size times grid columns must be below 2^63");
  // -1: the matrix is replicated over the process rows (columns), as PBLAS takes it.
  if (d.rsrc < -1 || d.rsrc >= s.grid.nprow)
    fail(c, s.pos_desc, field("RSRC_"), d.rsrc,
         "must be -1 (replicated) or in [0, " + std::to_string(s.grid.nprow) + ") (grid rows)");
  if (d.csrc < -1 || d.csrc >= s.grid.npcol)
    fail(c, s.pos_desc, field("CSRC_"), d.csrc,
         "must be -1 (replicated) or in [0, " + std::to_string(s.grid.npcol) + ") (grid columns)");
  const auto local_extent = [](Index extent, Index first, Index block, redist_int src,
                               redist_int nprocs, redist_int p) {
    if (src == -1) return extent; // every process holds every row (column)
    return BlockCyclic{extent, block, static_cast<int>(nprocs), static_cast<int>(src), first}
        .local_extent(static_cast<int>(p));
  };
  const Index local_rows = local_extent(d.m, d.imb, d.mb, d.rsrc, s.grid.nprow, s.grid.myrow);
  const Index local_cols = local_extent(d.n, d.inb, d.nb, d.csrc, s.grid.npcol, s.grid.mycol);
  const auto i_name = [&] { return std::string("I") + s.name; };
  const auto j_name = [&] { return std::string("J") + s.name; };
  if (above_agreed(s.i)) fail(c, s.pos_i, i_name(), s.i, kAgreedLimit);
  if (above_agreed(s.j)) fail(c, s.pos_j, j_name(), s.j, kAgreedLimit);
  // A transposed operation's A window is N x M.
  const bool swap = s.name == 'A' && c.transposed();
  const redist_int rows = swap ? c.n : c.m;
  const redist_int cols = swap ? c.m : c.n;
  // As PBLAS's PB_Cchkmat: an empty window, or a process holding no column of the matrix,
  // needs LLD_ >= 1 only.
  if (d.lld < 1 || (rows > 0 && cols > 0 && local_cols > 0 && d.lld < local_rows))
    fail(c, s.pos_desc, field("LLD_"), d.lld,
         "must be >= max(1, local rows) = " + std::to_string(std::max<Index>(1, local_rows)));
  const char *rows_name = swap ? "N" : "M";
  const char *cols_name = swap ? "M" : "N";
  if (c.m > 0 && c.n > 0) {
    if (s.i < 1 || s.i > d.m - rows + 1)
      fail(c, s.pos_i, i_name(), s.i,
           "rows " + i_name() + ".." + i_name() + "+" + rows_name + "-1 (" + rows_name + " = " +
               std::to_string(rows) + ") must lie in 1.." + std::to_string(d.m));
    if (s.j < 1 || s.j > d.n - cols + 1)
      fail(c, s.pos_j, j_name(), s.j,
           "columns " + j_name() + ".." + j_name() + "+" + cols_name + "-1 (" + cols_name + " = " +
               std::to_string(cols) + ") must lie in 1.." + std::to_string(d.n));
    if (s.data == nullptr && local_rows > 0 && local_cols > 0)
      fail(c, s.pos_data, std::string(1, s.name), 0,
           "NULL local array on a process that holds part of the matrix");
  }
}

void check_local(const Call &c, const blacs::GridInfo &ictxt_grid) {
  if (c.operation != nullptr && c.pos.trans > 0 && c.trans != 'N' && c.trans != 'T' &&
      c.trans != 'C')
    fail(c, c.pos.trans, "TRANS", quoted(c.trans), "must be 'N', 'T' or 'C'");
  if (c.trapezoid) {
    if (c.uplo != 'U' && c.uplo != 'L')
      fail(c, c.pos.uplo, "UPLO", quoted(c.uplo), "must be 'U' or 'L'");
    if (c.diag != 'U' && c.diag != 'N')
      fail(c, c.pos.diag, "DIAG", quoted(c.diag), "must be 'U' or 'N'");
  }
  if (c.m < 0) fail(c, c.pos.m, "M", c.m, "must be >= 0");
  if (c.n < 0) fail(c, c.pos.n, "N", c.n, "must be >= 0");
  if (above_agreed(c.m)) fail(c, c.pos.m, "M", c.m, kAgreedLimit);
  if (above_agreed(c.n)) fail(c, c.pos.n, "N", c.n, kAgreedLimit);
  for (const Side *s : {&c.a, &c.b}) {
    const redist_int ctxt = s->desc[CTXT_];
    if (ctxt != -1 && !blacs::context_handle_valid(ctxt))
      fail(c, s->pos_desc, std::string("DESC") + s->name + "(CTXT_)", ctxt,
           "not a BLACS context (use -1 on processes outside the grid)");
    if (s->grid.member() && !ictxt_grid.member())
      fail(c, c.pos.ictxt, "ICTXT", c.ictxt,
           std::string("this process is in the grid of DESC") + s->name + " but not in ICTXT");
    if (s->grid.member()) check_side(c, *s);
  }
}

long long comm_identity_of(MPI_Comm comm) {
  long long id = 0;
  static_assert(sizeof(MPI_Comm) <= sizeof(long long));
  std::memcpy(&id, &comm, sizeof(MPI_Comm));
  return id;
}

/// What the ScaLAPACK entries read from the environment: the schedule options (REDIST_SCHEDULE,
/// REDIST_MAX_CONCURRENT, REDIST_MAX_MEMORY) and the cache sizes (REDIST_PLAN_CACHE_SIZE,
/// REDIST_COMM_CACHE_SIZE, applied to the caches when valid); REDIST_SINGLE_COPY and
/// REDIST_PROGRESS are checked too (the executor reads them when the plan is made). Unset or
/// empty: the default; `why` says what is invalid.
struct EnvironmentOptions {
  ScheduleOptions options;
  single_copy::Mode single_copy_mode = single_copy::Mode::automatic;
  std::string why;
};

EnvironmentOptions read_environment_options() {
  EnvironmentOptions out;
  if (const char *v = environment::value("REDIST_SCHEDULE"); v != nullptr) {
    const auto strategy = parse_strategy(v);
    if (!strategy) {
      out.why = environment::error("REDIST_SCHEDULE", v,
                                   "unknown schedule (known: " + strategy_names() + ")");
      return out;
    }
    out.options.strategy = *strategy;
  }
  const environment::Integer concurrent = environment::integer(
      "REDIST_MAX_CONCURRENT", 0, INT_MAX, "must be an integer >= 0 (0 = no limit)");
  const environment::Integer memory = environment::integer(
      "REDIST_MAX_MEMORY", 0, LLONG_MAX, "must be a number of bytes >= 0 (0 = no cap)");
  const environment::Integer plan_cache = environment::integer(
      "REDIST_PLAN_CACHE_SIZE", 1, front_end::kMaxCacheSize, "must be an integer >= 1");
  const environment::Integer comm_cache = environment::integer(
      "REDIST_COMM_CACHE_SIZE", 1, front_end::kMaxCacheSize, "must be an integer >= 1");
  for (const environment::Integer *read : {&concurrent, &memory, &plan_cache, &comm_cache}) {
    if (!read->error.empty()) {
      out.why = read->error;
      return out;
    }
  }
  out.options.max_concurrent = static_cast<int>(concurrent.value.value_or(0));
  out.options.max_memory = memory.value.value_or(0);
  out.why = Executor::environment_error();
  if (out.why.empty()) {
    out.single_copy_mode = single_copy::mode_from_environment();
    front_end::set_cache_capacity(
        static_cast<std::size_t>(plan_cache.value.value_or(front_end::kDefaultPlanCache)),
        static_cast<std::size_t>(comm_cache.value.value_or(front_end::kDefaultCommCache)));
  }
  return out;
}

/// The environment's options, read at the first call of an entry and again at the first call
/// after redist_scalapack_clear_cache() (whose reading applies the cache sizes).
class EnvironmentRead {
public:
  EnvironmentOptions get() {
    std::lock_guard lock(mutex_);
    if (!read_) read_ = read_environment_options();
    return *read_;
  }
  void forget() {
    std::lock_guard lock(mutex_);
    read_.reset();
  }

private:
  std::mutex mutex_;
  std::optional<EnvironmentOptions> read_;
};
EnvironmentRead environment_read;

/// The environment's options for this call. An invalid value is an error of this process,
/// agreed like an invalid argument.
std::optional<ArgumentError> environment_options(const Call &c, EnvironmentOptions &out) {
  out = environment_read.get();
  if (!out.why.empty()) return ArgumentError{0, std::string(c.routine) + ": " + out.why};
  return std::nullopt;
}

/// The call as the front end describes it; side fields only where this process is in the grid.
front_end::CallArgs describe(const Call &c, const ScheduleOptions &options) {
  front_end::CallArgs args;
  args.routine = c.routine;
  args.element_size = c.element_size;
  args.index_base = 1;
  args.options = options;
  auto &f = args.fields;
  f.m = c.m;
  f.n = c.n;
  f.uplo = static_cast<unsigned char>(c.uplo);
  f.diag = static_cast<unsigned char>(c.diag);
  f.operation = c.operation == nullptr ? front_end::kCopy
                : c.transposed()       ? front_end::kOperationTransposed
                                       : front_end::kOperationN;
  for (const auto &[s, fields, position] :
       {std::tuple{&c.a, &f.a, &args.a}, std::tuple{&c.b, &f.b, &args.b}}) {
    if (!s->grid.member()) continue;
    const Descriptor &d = s->d;
    *fields = {d.m,  d.n,           d.mb,          d.nb,  d.rsrc, d.csrc, s->i,
               s->j, s->grid.nprow, s->grid.npcol, d.imb, d.inb,  0};
    *position = {true, s->grid.myrow, s->grid.mycol, d.lld};
  }
  f.strategy = static_cast<long long>(options.strategy);
  f.max_concurrent = options.max_concurrent;
  f.max_memory = options.max_memory;
  return args;
}

int position_of(const Call &c, front_end::Arg arg) {
  using front_end::Arg;
  switch (arg) {
  case Arg::m:
    return c.pos.m;
  case Arg::n:
    return c.pos.n;
  case Arg::uplo:
    return c.pos.uplo;
  case Arg::diag:
    return c.pos.diag;
  case Arg::desca:
    return c.a.pos_desc;
  case Arg::ia:
    return c.a.pos_i;
  case Arg::ja:
    return c.a.pos_j;
  case Arg::descb:
    return c.b.pos_desc;
  case Arg::ib:
    return c.b.pos_i;
  case Arg::jb:
    return c.b.pos_j;
  case Arg::none:
  case Arg::environment:
    return 0;
  }
  return 0;
}

/// Execute the call's plan, every process of ICTXT having agreed to.
int execute(const Call &c, const front_end::CacheLookup &cache) {
  Executor &executor = *cache.plan->executor;
  try {
    if (c.operation != nullptr) {
      executor.execute(c.a.data, c.destination, *c.operation);
    } else {
      executor.execute(c.a.data, c.destination);
    }
  } catch (const Error &e) {
    // A plan whose execution failed is not reused, nor its communicator (a message of the
    // failed execution may still wait there to be matched): the next call misses here, so
    // every process builds afresh (front_end::drop).
    front_end::drop(cache);
    report(std::string(c.routine) + ": " + e.what());
    return e.status();
  }
  if (executor.left_unmatched() || executor.failed_anywhere()) {
    // Repaired, but a message may still wait on the communicator, and the ways are decided
    // again: made anew at the next call (the failure is agreed, so every process drops it).
    front_end::drop(cache);
  }
  return REDIST_SUCCESS;
}

/// The agreed verdict of a call that is not a hit everywhere: an error of some process's
/// arguments, options or fields that differ between processes; REDIST_SUCCESS if none, else
/// reported (the same status on every process).
int refuse(const Call &c, const std::optional<ArgumentError> &local_error,
           const front_end::Agreement &agreed) {
  if (agreed.error != 0) {
    if (local_error) {
      report(local_error->message + "; nothing was copied");
      return REDIST_ERR_ARGUMENT;
    }
    const long long position = 1000 - agreed.error_priority();
    report(std::string(c.routine) + ": " +
           (position == 0 ? std::string("the REDIST_* environment")
                          : "argument " + std::to_string(position)) +
           " is invalid on another process (process " + std::to_string(agreed.error_rank()) +
           " of ICTXT); nothing was copied");
    return REDIST_ERR_REMOTE;
  }
  const auto &f = agreed.fields;
  for (const front_end::Range *r : {&f.strategy, &f.max_concurrent, &f.max_memory}) {
    if (r->differs()) {
      report(std::string(c.routine) +
             ": REDIST_SCHEDULE, REDIST_MAX_CONCURRENT or REDIST_MAX_MEMORY differ between "
             "processes; nothing was copied");
      return REDIST_ERR_MISMATCH;
    }
  }
  std::optional<std::pair<int, front_end::Range>> mismatch;
  front_end::CallFields<front_end::Range> ranges = f;
  front_end::each_field(
      [&](front_end::Arg arg, const char *, const front_end::Range &r) {
        const int position = position_of(c, arg);
        if (!mismatch && position > 0 && r.differs()) mismatch.emplace(position, r);
      },
      ranges);
  if (mismatch) {
    report(std::string(c.routine) + ": argument " + std::to_string(mismatch->first) +
           " differs between processes (values from " + std::to_string(mismatch->second.min) +
           " to " + std::to_string(mismatch->second.max) + "); nothing was copied");
    return REDIST_ERR_MISMATCH;
  }
  return REDIST_SUCCESS;
}

/// REDIST_ERR_ARGUMENT, reported, where no process of ICTXT is in the grid of a side (agreed).
int missing_grid(const Call &c, const front_end::Agreement &agreed) {
  const auto &f = agreed.fields;
  for (const auto &[side, range] : {std::pair{&c.a, &f.a.m}, std::pair{&c.b, &f.b.m}}) {
    if (!range->present) {
      report(std::string(c.routine) + ": argument " + std::to_string(side->pos_desc) + " (DESC" +
             side->name + "(CTXT_)): no process of ICTXT is in the grid of DESC" + side->name +
             "; nothing was copied");
      return REDIST_ERR_ARGUMENT;
    }
  }
  return REDIST_SUCCESS;
}

/// The call's plan built on every process of ICTXT and cached (`cache` then holds it); the
/// failures agreed and reported.
int plan_call(const Call &c, MPI_Comm comm, int slot, const front_end::CallArgs &args,
              const front_end::Agreement &agreed, front_end::CacheLookup &cache) {
  Transfer t;
  const front_end::Gathered missing = front_end::gather_transfer(comm, args, agreed, t);
  if (missing.status == REDIST_ERR_NO_MEMORY) {
    report(std::string(c.routine) + ": out of memory while planning" +
           (missing.here ? "" : " on another process") + "; nothing was copied");
    return REDIST_ERR_NO_MEMORY;
  }
  if (missing.status != REDIST_SUCCESS) {
    report(std::string(c.routine) + ": argument " + std::to_string(c.pos.ictxt) +
           " (ICTXT): the process at (" + std::to_string(missing.row) + ", " +
           std::to_string(missing.col) + ") of the grid of DESC" + missing.side +
           " is not in ICTXT (or passed DESC" + missing.side + "(CTXT_) = -1); nothing was copied");
    return REDIST_ERR_ARGUMENT;
  }
  int size = 0;
  MPI_Comm_size(comm, &size);
  const front_end::Built built = front_end::build_plan(comm, slot, size, args, t, agreed, cache);
  if (built.status == REDIST_ERR_MPI) {
    report(std::string(c.routine) + ": MPI_Comm_idup of ICTXT's communicator failed twice");
    return REDIST_ERR_MPI;
  }
  if (built.status == REDIST_ERR_NO_MEMORY) {
    report(std::string(c.routine) + ": out of memory while planning" +
           (built.here ? "" : " on another process") + "; nothing was copied");
    return REDIST_ERR_NO_MEMORY;
  }
  if (built.status != REDIST_SUCCESS) {
    report(std::string(c.routine) + ": the REDIST_* environment cannot be honoured" +
           (built.here ? ": " + built.why : " on another process") + "; nothing was copied");
    return REDIST_ERR_ARGUMENT;
  }
  return REDIST_SUCCESS;
}

} // namespace

int run_call(Call &c) {
  ++call_count;
  const blacs::GridInfo ig = blacs::grid_info(c.ictxt);
  c.a.grid = blacs::grid_info(c.a.desc[CTXT_]);
  c.b.grid = blacs::grid_info(c.b.desc[CTXT_]);
  for (Side *s : {&c.a, &c.b}) {
    if (s->grid.member()) s->d = read_descriptor(s->desc);
  }

  EnvironmentOptions environment;
  std::optional<ArgumentError> local_error = environment_options(c, environment);
  if (!local_error) {
    try {
      check_local(c, ig);
    } catch (const ArgumentError &e) {
      local_error = e;
    }
  }
  if (!ig.member()) {
    // Not in ICTXT: nothing to exchange. An error here (e.g. in a grid but not in ICTXT)
    // is reported locally; the other processes detect the missing grid position.
    if (local_error) {
      report(local_error->message);
      return REDIST_ERR_ARGUMENT;
    }
    return REDIST_SUCCESS;
  }
  const redist_int slot = ig.myrow * ig.npcol + ig.mycol;
  const MPI_Comm comm = context_comm(c.ictxt);

  front_end::CallArgs args = describe(c, environment.options);
  args.single_copy_mode = environment.single_copy_mode;
  // Made in place (a CacheLookup holds two keys of half a kilobyte each).
  front_end::CacheLookup cache = [&] {
    if (local_error) return front_end::CacheLookup{};
    // If every process of ICTXT finds both entries, all were built together from the same
    // global picture.
    const long long comm_identity[] = {c.ictxt,  ig.nprow, ig.npcol,
                                       ig.myrow, ig.mycol, comm_identity_of(comm)};
    long long identity[4];
    long long *next = identity;
    for (const Side *s : {&c.a, &c.b}) {
      *next++ = s->grid.member() ? s->desc[CTXT_] : -1;
      *next++ = s->grid.member() ? comm_identity_of(context_comm(s->desc[CTXT_])) : 0;
    }
    return front_end::look_up(args, identity, comm_identity);
  }();
  // The first failing argument wins (the lowest position), then the highest process.
  const long long error =
      local_error ? front_end::error_word(1000 - local_error->position, static_cast<int>(slot)) : 0;
  // Every process holds the same plan (built together from agreed fields), no error anywhere:
  // execute it. Otherwise the agreement of every field below says why.
  call_timers::lap(call_timers::front);
  // Its second round stays in flight during the execution (collective.hpp).
  collective::Confirmation confirmation;
  const bool hit = front_end::agree_hit(comm, error, cache, confirmation);
  call_timers::lap(call_timers::hit_agreement);
  if (hit) return execute(c, cache);
  const front_end::Agreement agreed = front_end::agree(comm, args, error, cache);

  if (const int refused = refuse(c, local_error, agreed); refused != REDIST_SUCCESS) return refused;
  if (c.m == 0 || c.n == 0) return REDIST_SUCCESS;
  if (const int missing = missing_grid(c, agreed); missing != REDIST_SUCCESS) return missing;
  if (!agreed.plan_hit) {
    if (const int status = plan_call(c, comm, static_cast<int>(slot), args, agreed, cache);
        status != REDIST_SUCCESS)
      return status;
  }
  return execute(c, cache);
}

} // namespace redist::scalapack

extern "C" long long redist_scalapack_call_count(void) {
  return redist::scalapack::call_count;
}

extern "C" void redist_scalapack_clear_cache(void) {
  redist::front_end::clear_cache();
  redist::scalapack::environment_read.forget();
}
