// ScaLAPACK-compatible entries (redist_p?gemr2d_, redist_p?trmr2d_, redist_Cp?...).
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

#include "api_internal.hpp"
#include "blacs.hpp"
#include "call_timers.hpp"
#include "environment.hpp"
#include "front_end.hpp"

#include <atomic>
#include <cctype>
#include <cerrno>
#include <climits>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <mutex>
#include <optional>
#include <tuple>

namespace redist {
namespace {

enum Desc { DTYPE_ = 0, CTXT_, M_, N_, MB_, NB_, RSRC_, CSRC_, LLD_, DLEN_ };
constexpr const char *kDescName[DLEN_] = {"DTYPE_", "CTXT_", "M_",    "N_",  "MB_",
                                          "NB_",    "RSRC_", "CSRC_", "LLD_"};

thread_local int last_status = REDIST_SUCCESS;
std::atomic<long long> call_count{0};

/// Argument positions of one routine (1-based, as PXERBLA counts them).
struct Positions {
  int uplo = 0, diag = 0, m = 0, n = 0, a = 0, ia = 0, ja = 0, desca = 0, b = 0, ib = 0, jb = 0,
      descb = 0, ictxt = 0, trans = 0, alpha = 0, beta = 0;
};
constexpr Positions kGemr{0, 0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11};
constexpr Positions kTrmr{1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13};
// PBLAS: C is "B"; the context is DESCC(CTXT_)'s.
constexpr Positions kTran{0, 0, 1, 2, 4, 5, 6, 7, 9, 10, 11, 12, 12, 0, 3, 8};
constexpr Positions kGeadd{0, 0, 2, 3, 5, 6, 7, 8, 10, 11, 12, 13, 13, 1, 4, 9};
constexpr Positions kTradd{1, 0, 3, 4, 6, 7, 8, 9, 11, 12, 13, 14, 14, 2, 5, 10};

/// One side (A or B) of a call as this process sees it.
struct Side {
  char name = 'A';
  const redist_int *desc = nullptr; // may be garbage on non-members (except CTXT_)
  redist_int i = 1;                 // 1-based window start
  redist_int j = 1;
  const void *data = nullptr;
  blacs::GridInfo grid;
  int pos_desc = 0, pos_i = 0, pos_j = 0, pos_data = 0;
};

struct Call {
  const char *routine = "";
  std::size_t element_size = 0;
  bool trapezoid = false;
  char uplo = ' ', diag = ' ';
  redist_int m = 0, n = 0, ictxt = -1;
  Side a, b;
  void *destination = nullptr; // == b.data, writable
  Positions pos;
  // PxTRAN, PxGEADD, PxTRADD: B := alpha op(A) + beta B (A's window is N x M for op T, C).
  const Operation *operation = nullptr;
  char trans = ' '; // 'N', 'T' or 'C' as given (' ': a copy)
  [[nodiscard]] bool transposed() const { return operation != nullptr && trans != 'N'; }
};

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

// The global arguments are limited to 2^53 (once carried as doubles, now part of the contract);
// only an ILP64 build can pass larger values.
constexpr long long kLargestAgreed = (1LL << 53) - 1;
constexpr const char *kAgreedLimit = "must be below 2^53 = 9007199254740992";
// A function, not a comparison in place: with 32-bit redist_int the test is always false.
bool above_agreed(long long v) {
  return v > kLargestAgreed;
}

std::string quoted(char ch) {
  return ch == '\0' ? "''" : std::string("'") + ch + "'";
}

Index numroc(Index extent, Index block, int proc, int src, int nprocs) {
  return BlockCyclic{extent, block, nprocs, src}.local_extent(proc);
}

void check_side(const Call &c, const Side &s) {
  const redist_int *d = s.desc;
  const auto field = [&](Desc f) {
    return std::string("DESC") + s.name + "(" + kDescName[f] + ")";
  };
  if (d[DTYPE_] != 1) fail(c, s.pos_desc, field(DTYPE_), d[DTYPE_], "descriptor type must be 1");
  if (d[M_] < 0) fail(c, s.pos_desc, field(M_), d[M_], "must be >= 0");
  if (d[N_] < 0) fail(c, s.pos_desc, field(N_), d[N_], "must be >= 0");
  if (d[MB_] < 1) fail(c, s.pos_desc, field(MB_), d[MB_], "block size must be >= 1");
  if (d[NB_] < 1) fail(c, s.pos_desc, field(NB_), d[NB_], "block size must be >= 1");
  for (const Desc f : {M_, N_, MB_, NB_}) {
    if (above_agreed(d[f])) fail(c, s.pos_desc, field(f), d[f], kAgreedLimit);
  }
  // The distribution's period, block size times processes, must be an Index.
  if (d[MB_] > INT64_MAX / s.grid.nprow)
    fail(c, s.pos_desc, field(MB_), d[MB_], "block size times grid rows must be below 2^63");
  if (d[NB_] > INT64_MAX / s.grid.npcol)
    fail(c, s.pos_desc, field(NB_), d[NB_], "block size times grid columns must be below 2^63");
  if (d[RSRC_] < 0 || d[RSRC_] >= s.grid.nprow)
    fail(c, s.pos_desc, field(RSRC_), d[RSRC_],
         "must be in [0, " + std::to_string(s.grid.nprow) + ") (grid rows)");
  if (d[CSRC_] < 0 || d[CSRC_] >= s.grid.npcol)
    fail(c, s.pos_desc, field(CSRC_), d[CSRC_],
         "must be in [0, " + std::to_string(s.grid.npcol) + ") (grid columns)");
  const Index local_rows = numroc(d[M_], d[MB_], static_cast<int>(s.grid.myrow),
                                  static_cast<int>(d[RSRC_]), static_cast<int>(s.grid.nprow));
  const Index local_cols = numroc(d[N_], d[NB_], static_cast<int>(s.grid.mycol),
                                  static_cast<int>(d[CSRC_]), static_cast<int>(s.grid.npcol));
  if (d[LLD_] < std::max<Index>(1, local_rows))
    fail(c, s.pos_desc, field(LLD_), d[LLD_],
         "must be >= max(1, local rows) = " + std::to_string(std::max<Index>(1, local_rows)));
  const auto i_name = [&] { return std::string("I") + s.name; };
  const auto j_name = [&] { return std::string("J") + s.name; };
  if (above_agreed(s.i)) fail(c, s.pos_i, i_name(), s.i, kAgreedLimit);
  if (above_agreed(s.j)) fail(c, s.pos_j, j_name(), s.j, kAgreedLimit);
  // A transposed operation's A window is N x M.
  const bool swap = s.name == 'A' && c.transposed();
  const redist_int rows = swap ? c.n : c.m;
  const redist_int cols = swap ? c.m : c.n;
  const char *rows_name = swap ? "N" : "M";
  const char *cols_name = swap ? "M" : "N";
  if (c.m > 0 && c.n > 0) {
    if (s.i < 1 || s.i > d[M_] - rows + 1)
      fail(c, s.pos_i, i_name(), s.i,
           "rows " + i_name() + ".." + i_name() + "+" + rows_name + "-1 (" + rows_name + " = " +
               std::to_string(rows) + ") must lie in 1.." + std::to_string(d[M_]));
    if (s.j < 1 || s.j > d[N_] - cols + 1)
      fail(c, s.pos_j, j_name(), s.j,
           "columns " + j_name() + ".." + j_name() + "+" + cols_name + "-1 (" + cols_name + " = " +
               std::to_string(cols) + ") must lie in 1.." + std::to_string(d[N_]));
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

/// The MPI communicator BLACS uses for a context (ranks in row-major grid order).
MPI_Comm context_comm(redist_int ctxt) {
  redist_int handle = -1;
  Cblacs_get(ctxt, blacs::kGetContextComm, &handle);
  MPI_Comm comm = Cblacs2sys_handle(handle);
  Cfree_blacs_system_handle(handle);
  return comm;
}

long long comm_identity_of(MPI_Comm comm) {
  long long id = 0;
  static_assert(sizeof(MPI_Comm) <= sizeof(long long));
  std::memcpy(&id, &comm, sizeof(MPI_Comm));
  return id;
}

void report(const std::string &message) {
  std::fprintf(stderr, "{ redist } %s\n", message.c_str());
  std::fflush(stderr);
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
    const redist_int *d = s->desc;
    *fields = {d[M_],    d[N_], d[MB_], d[NB_],        d[RSRC_],
               d[CSRC_], s->i,  s->j,   s->grid.nprow, s->grid.npcol};
    *position = {true, s->grid.myrow, s->grid.mycol, d[LLD_]};
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
  try {
    if (c.operation != nullptr) {
      cache.plan->executor->execute(c.a.data, c.destination, *c.operation);
    } else {
      cache.plan->executor->execute(c.a.data, c.destination);
    }
  } catch (const Error &e) {
    // A plan whose execution failed is not reused, nor its communicator (a message of the
    // failed execution may still wait there to be matched): the next call misses here, so
    // every process builds afresh (front_end::drop).
    front_end::drop(cache);
    report(std::string(c.routine) + ": " + e.what());
    return e.status();
  }
  if (cache.plan->executor->left_unmatched() || cache.plan->executor->failed_anywhere()) {
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
    report(std::string(c.routine) + ": MPI_Comm_dup of ICTXT's communicator failed");
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

int run_call(Call &c) {
  ++call_count;
  const blacs::GridInfo ig = blacs::grid_info(c.ictxt);
  c.a.grid = blacs::grid_info(c.a.desc[CTXT_]);
  c.b.grid = blacs::grid_info(c.b.desc[CTXT_]);

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
  const bool hit = front_end::agree_hit(comm, error, cache);
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

void entry(const char *routine, std::size_t element_size, bool trapezoid, const char *uplo,
           const char *diag, redist_int m, redist_int n, const void *a, redist_int ia,
           redist_int ja, const redist_int *desca, void *b, redist_int ib, redist_int jb,
           const redist_int *descb, redist_int ictxt) {
  static const redist_int kNoGrid[DLEN_] = {1, -1, 0, 0, 1, 1, 0, 0, 1};
  const Positions pos = trapezoid ? kTrmr : kGemr;
  Call c{
      routine,
      element_size,
      trapezoid,
      trapezoid && uplo ? static_cast<char>(std::toupper(static_cast<unsigned char>(*uplo))) : ' ',
      trapezoid && diag ? static_cast<char>(std::toupper(static_cast<unsigned char>(*diag))) : ' ',
      m,
      n,
      ictxt,
      Side{'A', desca ? desca : kNoGrid, ia, ja, a, {}, pos.desca, pos.ia, pos.ja, pos.a},
      Side{'B', descb ? descb : kNoGrid, ib, jb, b, {}, pos.descb, pos.ib, pos.jb, pos.b},
      b,
      pos};
  last_status = c_barrier(routine, [&] {
    call_timers::begin_call();
    const int status = run_call(c);
    call_timers::end_call();
    if (status != REDIST_SUCCESS) throw Error(static_cast<redist_status>(status), "");
  });
  // Not yet reported: an exception run_call did not catch (its own errors carry no message).
  if ((last_status == REDIST_ERR_INTERNAL || last_status == REDIST_ERR_NO_MEMORY) &&
      *redist_last_error() != '\0') {
    report(redist_last_error());
  }
}

char upper(const char *ch) {
  return ch != nullptr ? static_cast<char>(std::toupper(static_cast<unsigned char>(*ch))) : '\0';
}

/// PBLAS PxTRAN, PxTRANU, PxTRANC (trans 'T' or 'C', no TRANS argument), PxGEADD (trans from
/// its argument) and PxTRADD (uplo too): sub(C) := beta sub(C) + alpha op(sub(A)) on the
/// processes of DESCC(CTXT_), through run_call as the copies.
void operation_entry(const char *routine, Scalar type, const Positions &pos, char trans,
                     const char *uplo, redist_int m, redist_int n, const void *alpha, const void *a,
                     redist_int ia, redist_int ja, const redist_int *desca, const void *beta,
                     void *c, redist_int ic, redist_int jc, const redist_int *descc) {
  static const redist_int kNoGrid[DLEN_] = {1, -1, 0, 0, 1, 1, 0, 0, 1};
  const bool trapezoid = pos.uplo > 0;
  static const unsigned char kZero[16] = {};
  // A NULL alpha or beta is reported as an argument (checked before any use).
  const Operation op =
      Operation::make(type, trans == 'C', alpha ? alpha : kZero, beta ? beta : kZero);
  Call call{routine,
            op.element_size(),
            trapezoid,
            trapezoid ? (uplo != nullptr ? upper(uplo) : '\0') : ' ',
            trapezoid ? 'N' : ' ',
            m,
            n,
            descc != nullptr ? descc[CTXT_] : -1,
            Side{'A', desca ? desca : kNoGrid, ia, ja, a, {}, pos.desca, pos.ia, pos.ja, pos.a},
            Side{'C', descc ? descc : kNoGrid, ic, jc, c, {}, pos.descb, pos.ib, pos.jb, pos.b},
            c,
            pos,
            &op,
            trans};
  last_status = c_barrier(routine, [&] {
    if (alpha == nullptr || beta == nullptr) {
      const bool a_missing = alpha == nullptr;
      report(std::string(routine) + ": argument " +
             std::to_string(a_missing ? pos.alpha : pos.beta) + " (" +
             (a_missing ? "ALPHA" : "BETA") + "): NULL pointer; nothing was computed");
      throw Error(REDIST_ERR_ARGUMENT, "");
    }
    const int status = run_call(call);
    if (status != REDIST_SUCCESS) throw Error(static_cast<redist_status>(status), "");
  });
  if ((last_status == REDIST_ERR_INTERNAL || last_status == REDIST_ERR_NO_MEMORY) &&
      *redist_last_error() != '\0') {
    report(redist_last_error());
  }
}

/// The fields of a plan from descriptors (redist_plan_create_scalapack) for the sides whose
/// grid holds this process (`rank` of ICTXT); throws the first bad argument.
void describe_descriptors(const redist_int *desca, redist_int ia, redist_int ja,
                          const redist_int *descb, redist_int ib, redist_int jb, int rank,
                          front_end::CallArgs &args) {
  static const char *call = "redist_plan_create";
  for (const auto &[name, desc, i, j, fields, position] :
       {std::tuple{'A', desca, ia, ja, &args.fields.a, &args.a},
        std::tuple{'B', descb, ib, jb, &args.fields.b, &args.b}}) {
    const std::string arg = std::string("desc") + static_cast<char>(std::tolower(name));
    if (desc == nullptr) throw_argument(call, arg, 0, "NULL descriptor");
    const std::string field = std::string("DESC") + name + "(";
    if (desc[CTXT_] != -1 && !blacs::context_handle_valid(desc[CTXT_]))
      throw_argument(call, field + "CTXT_)", desc[CTXT_],
                     "not a BLACS context (use -1 on processes outside the grid)");
    const blacs::GridInfo g = blacs::grid_info(desc[CTXT_]);
    if (!g.member()) continue;
    if (desc[DTYPE_] != 1)
      throw Error(REDIST_ERR_ARGUMENT,
                  std::string(call) + ": " + field + "DTYPE_) = " + std::to_string(desc[DTYPE_]) +
                      " on rank " + std::to_string(rank) + " of ICTXT: descriptor type must be 1");
    *fields = {desc[M_],    desc[N_], desc[MB_], desc[NB_], desc[RSRC_],
               desc[CSRC_], i,        j,         g.nprow,   g.npcol};
    *position = {true, g.myrow, g.mycol, desc[LLD_]};
  }
}

/// Throws REDIST_ERR_MISMATCH naming the first field of A or B whose processes disagree.
void throw_if_sides_differ(front_end::CallFields<front_end::Range> &ranges) {
  static const char *call = "redist_plan_create";
  front_end::each_field(
      [&](front_end::Arg arg, const char *field, const front_end::Range &r) {
        using front_end::Arg;
        const bool on_a = arg == Arg::desca || arg == Arg::ia || arg == Arg::ja;
        const bool on_b = arg == Arg::descb || arg == Arg::ib || arg == Arg::jb;
        if (!(on_a || on_b) || !r.differs()) return;
        const char name = on_a ? 'A' : 'B';
        const bool index = arg == Arg::ia || arg == Arg::ja || arg == Arg::ib || arg == Arg::jb;
        const std::string what = index ? std::string(field) + name
                                 : field[std::strlen(field) - 1] == '_'
                                     ? std::string("DESC") + name + "(" + field + ")"
                                     : std::string(field);
        throw Error(REDIST_ERR_MISMATCH, std::string(call) + ": processes of " + name +
                                             "'s grid disagree on " + what + " (values from " +
                                             std::to_string(r.min) + " to " +
                                             std::to_string(r.max) + ")");
      },
      ranges);
}

/// A plan of the C API (redist.h) from ScaLAPACK descriptors: the descriptor checks and the
/// agreement of the front end, then redist_plan_create_opt on ICTXT's communicator with the
/// layouts every process now knows (its checks name the layout fields, "b->mb").
int plan_from_descriptors(redist_int m, redist_int n, int type, const redist_int *desca,
                          redist_int ia, redist_int ja, const redist_int *descb, redist_int ib,
                          redist_int jb, redist_int ictxt, int region, int unit_diag,
                          const redist_options *options, redist_plan *plan) {
  static const char *call = "redist_plan_create";
  MPI_Comm comm = MPI_COMM_NULL;
  redist_layout layouts[2]{};
  std::vector<int> ranks[2];
  const int status = c_barrier(call, [&] {
    if (plan == nullptr) throw_argument(call, "plan", 0, "NULL output pointer");
    *plan = nullptr;
    // Without a valid ICTXT there is no communicator to agree over: a local error.
    if (!blacs::context_handle_valid(ictxt))
      throw_argument(call, "ictxt", ictxt, "not a BLACS context of this process");
    const blacs::GridInfo ig = blacs::grid_info(ictxt);
    if (!ig.member())
      throw_argument(call, "ictxt", ictxt, "this process is not in the grid of ICTXT");
    comm = context_comm(ictxt);
    const CommPosition where = comm_position(call, comm);
    front_end::CallArgs args;
    args.routine = call;
    args.index_base = 1;
    args.fields.m = m;
    args.fields.n = n;
    args.fields.uplo = static_cast<unsigned char>(region == REDIST_REGION_UPPER   ? 'U'
                                                  : region == REDIST_REGION_LOWER ? 'L'
                                                                                  : ' ');
    args.fields.diag = static_cast<unsigned char>(args.fields.uplo == ' ' ? ' '
                                                  : unit_diag != 0        ? 'U'
                                                                          : 'N');
    std::optional<Error> local;
    try {
      describe_descriptors(desca, ia, ja, descb, ib, jb, where.rank, args);
    } catch (const Error &e) {
      local = e;
    }
    // The lowest failing rank is named: the order is reversed.
    const front_end::Agreement agreed = front_end::agree(
        comm, args, local ? front_end::error_word(1, where.size - 1 - where.rank) : 0, {});
    if (local) throw *local;
    if (agreed.error != 0)
      throw Error(REDIST_ERR_REMOTE, std::string(call) + ": an argument is invalid on rank " +
                                         std::to_string(where.size - 1 - agreed.error_rank()) +
                                         " of ICTXT (see its message)");
    front_end::CallFields<front_end::Range> ranges = agreed.fields;
    for (const auto &[name, side] : {std::pair{'A', &ranges.a}, std::pair{'B', &ranges.b}}) {
      if (!side->m.present)
        throw Error(REDIST_ERR_ARGUMENT, std::string(call) + ": no process of ICTXT is in " + name +
                                             "'s grid (DESC" + name + "(CTXT_) = -1 everywhere)");
    }
    throw_if_sides_differ(ranges);
    Transfer t;
    const front_end::Gathered missing = front_end::gather_transfer(comm, args, agreed, t);
    if (missing.status == REDIST_ERR_NO_MEMORY)
      throw Error(REDIST_ERR_NO_MEMORY, std::string(call) + ": out of memory while planning" +
                                            (missing.here ? "" : " on another process"));
    if (missing.status != REDIST_SUCCESS)
      throw Error(REDIST_ERR_ARGUMENT, std::string(call) + ": position (" +
                                           std::to_string(missing.row) + ", " +
                                           std::to_string(missing.col) + ") of " + missing.side +
                                           "'s grid is not a process of ICTXT");
    for (int s = 0; s < 2; ++s) {
      const Layout &l = s == 0 ? t.src : t.dst;
      const front_end::Position &p = s == 0 ? args.a : args.b;
      ranks[s] = l.grid.ranks;
      layouts[s] =
          redist_layout{l.rows.extent,   l.cols.extent, l.rows.block, l.cols.block,
                        l.grid.nprow,    l.grid.npcol,  l.rows.src,   l.cols.src,
                        ranks[s].data(), l.i,           l.j,          p.member ? p.lld : 1};
    }
  });
  if (status != REDIST_SUCCESS) return status;
  return options == nullptr
             ? redist_plan_create(comm, m, n, static_cast<redist_type>(type), &layouts[0],
                                  &layouts[1], static_cast<redist_region>(region), unit_diag, plan)
             : redist_plan_create_opt(comm, m, n, static_cast<redist_type>(type), &layouts[0],
                                      &layouts[1], static_cast<redist_region>(region), unit_diag,
                                      options, plan);
}

} // namespace
} // namespace redist

using redist::entry;

extern "C" int redist_plan_create_scalapack(redist_int m, redist_int n, int type,
                                            const redist_int *desca, redist_int ia, redist_int ja,
                                            const redist_int *descb, redist_int ib, redist_int jb,
                                            redist_int ictxt, int region, int unit_diag,
                                            const redist_options *options, redist_plan *plan) {
  return redist::plan_from_descriptors(m, n, type, desca, ia, ja, descb, ib, jb, ictxt, region,
                                       unit_diag, options, plan);
}

#define REDIST_DEFINE_ENTRIES(x, X, T, SIZE)                                                       \
  extern "C" void redist_p##x##gemr2d_(                                                            \
      const redist_int *m, const redist_int *n, const T *a, const redist_int *ia,                  \
      const redist_int *ja, const redist_int *desca, T *b, const redist_int *ib,                   \
      const redist_int *jb, const redist_int *descb, const redist_int *ictxt) {                    \
    entry("P" #X "GEMR2D", SIZE, false, nullptr, nullptr, *m, *n, a, *ia, *ja, desca, b, *ib, *jb, \
          descb, *ictxt);                                                                          \
  }                                                                                                \
  extern "C" void redist_p##x##trmr2d_(const char *uplo, const char *diag, const redist_int *m,    \
                                       const redist_int *n, const T *a, const redist_int *ia,      \
                                       const redist_int *ja, const redist_int *desca, T *b,        \
                                       const redist_int *ib, const redist_int *jb,                 \
                                       const redist_int *descb, const redist_int *ictxt) {         \
    entry("P" #X "TRMR2D", SIZE, true, uplo, diag, *m, *n, a, *ia, *ja, desca, b, *ib, *jb, descb, \
          *ictxt);                                                                                 \
  }                                                                                                \
  extern "C" void redist_Cp##x##gemr2d(redist_int m, redist_int n, T *a, redist_int ia,            \
                                       redist_int ja, redist_int *desca, T *b, redist_int ib,      \
                                       redist_int jb, redist_int *descb, redist_int ictxt) {       \
    entry("CP" #X "GEMR2D", SIZE, false, nullptr, nullptr, m, n, a, ia, ja, desca, b, ib, jb,      \
          descb, ictxt);                                                                           \
  }                                                                                                \
  extern "C" void redist_Cp##x##trmr2d(const char *uplo, const char *diag, redist_int m,           \
                                       redist_int n, T *a, redist_int ia, redist_int ja,           \
                                       redist_int *desca, T *b, redist_int ib, redist_int jb,      \
                                       redist_int *descb, redist_int ictxt) {                      \
    entry("CP" #X "TRMR2D", SIZE, true, uplo, diag, m, n, a, ia, ja, desca, b, ib, jb, descb,      \
          ictxt);                                                                                  \
  }

// PBLAS's names; TRANS of PxGEADD / PxTRADD passed as given (checked by run_call).
#define REDIST_DEFINE_OPERATIONS(x, X, T, SCALAR)                                                  \
  extern "C" void redist_p##x##geadd_(                                                             \
      const char *trans, const redist_int *m, const redist_int *n, const T *alpha, const T *a,     \
      const redist_int *ia, const redist_int *ja, const redist_int *desca, const T *beta, T *c,    \
      const redist_int *ic, const redist_int *jc, const redist_int *descc) {                       \
    redist::operation_entry("P" #X "GEADD", SCALAR, redist::kGeadd, redist::upper(trans), nullptr, \
                            *m, *n, alpha, a, *ia, *ja, desca, beta, c, *ic, *jc, descc);          \
  }                                                                                                \
  extern "C" void redist_p##x##tradd_(                                                             \
      const char *uplo, const char *trans, const redist_int *m, const redist_int *n,               \
      const T *alpha, const T *a, const redist_int *ia, const redist_int *ja,                      \
      const redist_int *desca, const T *beta, T *c, const redist_int *ic, const redist_int *jc,    \
      const redist_int *descc) {                                                                   \
    redist::operation_entry("P" #X "TRADD", SCALAR, redist::kTradd, redist::upper(trans), uplo,    \
                            *m, *n, alpha, a, *ia, *ja, desca, beta, c, *ic, *jc, descc);          \
  }
#define REDIST_DEFINE_TRAN(name, NAME, T, SCALAR, TRANS)                                           \
  extern "C" void redist_##name##_(                                                                \
      const redist_int *m, const redist_int *n, const T *alpha, const T *a, const redist_int *ia,  \
      const redist_int *ja, const redist_int *desca, const T *beta, T *c, const redist_int *ic,    \
      const redist_int *jc, const redist_int *descc) {                                             \
    redist::operation_entry(#NAME, SCALAR, redist::kTran, TRANS, nullptr, *m, *n, alpha, a, *ia,   \
                            *ja, desca, beta, c, *ic, *jc, descc);                                 \
  }

REDIST_DEFINE_OPERATIONS(s, S, float, redist::Scalar::f32)
REDIST_DEFINE_OPERATIONS(d, D, double, redist::Scalar::f64)
REDIST_DEFINE_OPERATIONS(c, C, void, redist::Scalar::c32)
REDIST_DEFINE_OPERATIONS(z, Z, void, redist::Scalar::c64)
REDIST_DEFINE_TRAN(pstran, PSTRAN, float, redist::Scalar::f32, 'T')
REDIST_DEFINE_TRAN(pdtran, PDTRAN, double, redist::Scalar::f64, 'T')
REDIST_DEFINE_TRAN(pctranu, PCTRANU, void, redist::Scalar::c32, 'T')
REDIST_DEFINE_TRAN(pztranu, PZTRANU, void, redist::Scalar::c64, 'T')
REDIST_DEFINE_TRAN(pctranc, PCTRANC, void, redist::Scalar::c32, 'C')
REDIST_DEFINE_TRAN(pztranc, PZTRANC, void, redist::Scalar::c64, 'C')

REDIST_DEFINE_ENTRIES(s, S, float, 4)
REDIST_DEFINE_ENTRIES(d, D, double, 8)
REDIST_DEFINE_ENTRIES(c, C, void, 8)
REDIST_DEFINE_ENTRIES(z, Z, void, 16)
REDIST_DEFINE_ENTRIES(i, I, redist_int, sizeof(redist_int))

extern "C" int redist_scalapack_last_status(void) {
  return redist::last_status;
}

extern "C" long long redist_scalapack_call_count(void) {
  return redist::call_count;
}

extern "C" void redist_scalapack_clear_cache(void) {
  redist::front_end::clear_cache();
  redist::environment_read.forget();
}
