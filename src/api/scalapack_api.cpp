// ScaLAPACK-compatible entries (redist_p?gemr2d_, redist_p?trmr2d_, redist_Cp?...).
//
// One call:
//  1. local checks of every argument this process can see;
//  2. round 1, one BLACS max-combine over ICTXT: errors, the global arguments (which must
//     agree), and whether every process has this call's plan and communicator cached;
//  3. on a miss, round 2: every process's coordinates in A's and B's grids, then the plan
//     (and, if needed, a duplicate of ICTXT's communicator) is built and cached;
//  4. execution.
// All processes of ICTXT take the same branch at every step, so none waits for another.

#include "api_internal.hpp"
#include "blacs.hpp"
#include "single_copy.hpp"

#include <atomic>
#include <cctype>
#include <cerrno>
#include <climits>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <list>
#include <mutex>
#include <optional>
#include <tuple>

namespace redist {
namespace {

enum Desc { DTYPE_ = 0, CTXT_, M_, N_, MB_, NB_, RSRC_, CSRC_, LLD_, DLEN_ };
constexpr const char *kDescName[DLEN_] = {"DTYPE_", "CTXT_", "M_",    "N_",  "MB_",
                                          "NB_",    "RSRC_", "CSRC_", "LLD_"};

thread_local int last_status = REDIST_SUCCESS;
constexpr long long kSlotRange = 1LL << 24; // processes of ICTXT, for the error flag
std::atomic<long long> call_count{0};

/// Argument positions of one routine (1-based, as PXERBLA counts them).
struct Positions {
  int uplo = 0, diag = 0, m = 0, n = 0, a = 0, ia = 0, ja = 0, desca = 0, b = 0, ib = 0, jb = 0,
      descb = 0, ictxt = 0;
};
constexpr Positions kGemr{0, 0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11};
constexpr Positions kTrmr{1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13};

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

// Round 1 carries the global arguments as doubles, exact up to 2^53; only an ILP64 build can
// pass larger values.
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
  const std::string i_name = s.name == 'A' ? "IA" : "IB";
  const std::string j_name = s.name == 'A' ? "JA" : "JB";
  if (above_agreed(s.i)) fail(c, s.pos_i, i_name, s.i, kAgreedLimit);
  if (above_agreed(s.j)) fail(c, s.pos_j, j_name, s.j, kAgreedLimit);
  if (c.m > 0 && c.n > 0) {
    if (s.i < 1 || s.i > d[M_] - c.m + 1)
      fail(c, s.pos_i, i_name, s.i,
           "rows " + i_name + ".." + i_name + "+M-1 (M = " + std::to_string(c.m) +
               ") must lie in 1.." + std::to_string(d[M_]));
    if (s.j < 1 || s.j > d[N_] - c.n + 1)
      fail(c, s.pos_j, j_name, s.j,
           "columns " + j_name + ".." + j_name + "+N-1 (N = " + std::to_string(c.n) +
               ") must lie in 1.." + std::to_string(d[N_]));
    if (s.data == nullptr && local_rows > 0 && local_cols > 0)
      fail(c, s.pos_data, std::string(1, s.name), 0,
           "NULL local array on a process that holds part of the matrix");
  }
}

void check_local(const Call &c, const blacs::GridInfo &ictxt_grid) {
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

/// The values exchanged in round 1, combined over ICTXT with BLACS's DGAMX2D. That is an
/// absolute-value maximum, so everything is encoded as non-negative doubles (exact up to
/// 2^53): a plain flag as itself; a value that must agree between its contributors as
/// (x + 1, 2^53 - x), whose maxima give max(x) + 1 and 2^53 - min(x); 0 means "no
/// contributor".
class Round1 {
public:
  static constexpr double kBig = 9007199254740992.0; // 2^53

  void flag(long long v) { values_.push_back(static_cast<double>(v)); }
  /// A value agreed like an argument but never reported as one (position -1).
  void internal(long long x) { agreed(x, true, -1); }
  void agreed(long long x, bool contributes, int position) {
    const double v = static_cast<double>(std::max(x, 0LL));
    values_.push_back(contributes ? v + 1 : 0);
    values_.push_back(contributes ? kBig - v : 0);
    positions_.push_back(position);
  }
  void combine(redist_int ictxt) {
    const auto count = static_cast<redist_int>(values_.size());
    Cdgamx2d(ictxt, "All", " ", count, 1, values_.data(), count, nullptr, nullptr, -1, -1, -1);
    flags_ = values_.size() - 2 * positions_.size();
  }
  [[nodiscard]] long long flag_at(std::size_t idx) const {
    return static_cast<long long>(values_[idx]);
  }
  [[nodiscard]] bool present(std::size_t k) const { return values_[flags_ + 2 * k] > 0; }
  [[nodiscard]] long long max_of(std::size_t k) const {
    return static_cast<long long>(values_[flags_ + 2 * k]) - 1;
  }
  [[nodiscard]] long long min_of(std::size_t k) const {
    return static_cast<long long>(kBig - values_[flags_ + 2 * k + 1]);
  }
  [[nodiscard]] const std::vector<int> &positions() const { return positions_; }

private:
  std::vector<double> values_;
  std::vector<int> positions_;
  std::size_t flags_ = 0;
};

// ---- caches ------------------------------------------------------------------------------

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
  ~OwnedComm() {
    int finalized = 0;
    MPI_Finalized(&finalized);
    if (!finalized && comm != MPI_COMM_NULL) MPI_Comm_free(&comm);
  }
};

struct CachedPlan {
  BuildId id;
  std::shared_ptr<OwnedComm> comm;
  std::unique_ptr<Executor> executor;
};

using Key = std::vector<long long>;

template <class Value> class LruCache {
public:
  explicit LruCache(std::size_t capacity) : capacity_(capacity) {}
  std::shared_ptr<Value> find(const Key &key) {
    for (auto it = entries_.begin(); it != entries_.end(); ++it) {
      if (it->first == key) {
        entries_.splice(entries_.begin(), entries_, it);
        return entries_.front().second;
      }
    }
    return nullptr;
  }
  void insert(const Key &key, std::shared_ptr<Value> value) {
    erase(key);
    entries_.emplace_front(key, std::move(value));
    while (entries_.size() > capacity_)
      entries_.pop_back();
  }
  void erase(const Key &key) {
    entries_.remove_if([&](const auto &e) { return e.first == key; });
  }
  void clear() { entries_.clear(); }

private:
  std::size_t capacity_;
  std::list<std::pair<Key, std::shared_ptr<Value>>> entries_;
};

std::size_t cache_capacity(const char *variable, std::size_t fallback) {
  const char *text = std::getenv(variable);
  if (text == nullptr || *text == '\0') return fallback;
  char *end = nullptr;
  const long long v = std::strtoll(text, &end, 10);
  return (end != nullptr && *end == '\0' && v >= 1 && v <= 4096) ? static_cast<std::size_t>(v)
                                                                 : fallback;
}

struct Caches {
  std::mutex mutex;
  long long generation = 0; // of the last entry built here
  LruCache<CachedPlan> plans{cache_capacity("REDIST_PLAN_CACHE_SIZE", 16)};
  LruCache<OwnedComm> comms{cache_capacity("REDIST_COMM_CACHE_SIZE", 8)};
};

Caches &caches() {
  static auto *instance = new Caches; // never destroyed: MPI may be finalized before exit
  return *instance;
}

/// The MPI communicator BLACS uses for a context (ranks in row-major grid order).
MPI_Comm context_comm(redist_int ctxt) {
  redist_int handle = -1;
  Cblacs_get(ctxt, blacs::kGetContextComm, &handle);
  MPI_Comm comm = Cblacs2sys_handle(handle);
  Cfree_blacs_system_handle(handle);
  return comm;
}

long long comm_identity(MPI_Comm comm) {
  long long id = 0;
  static_assert(sizeof(MPI_Comm) <= sizeof(long long));
  std::memcpy(&id, &comm, sizeof(MPI_Comm));
  return id;
}

void append(Key &key, std::initializer_list<long long> values) {
  for (const long long v : values)
    key.push_back(v);
}

Key side_key(const Side &s) {
  Key k;
  if (!s.grid.member()) {
    k.push_back(-1);
    return k;
  }
  for (int f = 0; f < DLEN_; ++f)
    k.push_back(s.desc[f]);
  append(k, {s.i, s.j, s.grid.nprow, s.grid.npcol, s.grid.myrow, s.grid.mycol,
             comm_identity(context_comm(s.desc[CTXT_]))});
  return k;
}

void report(const std::string &message) {
  std::fprintf(stderr, "{ redist } %s\n", message.c_str());
  std::fflush(stderr);
}

// A non-negative integer, the whole text; false otherwise.
bool parse_count(const char *text, long long &value) {
  char *end = nullptr;
  errno = 0;
  value = std::strtoll(text, &end, 10);
  return end != text && *end == '\0' && errno == 0 && value >= 0;
}

/// The schedule options of the ScaLAPACK entries, from REDIST_SCHEDULE, REDIST_MAX_CONCURRENT
/// and REDIST_MAX_MEMORY (unset or empty: the default). An invalid value is an error.
std::optional<ArgumentError> environment_options(const Call &c, ScheduleOptions &out) {
  const auto bad = [&](const char *variable, const char *value, const std::string &reason) {
    return ArgumentError{0, std::string(c.routine) + ": environment variable " + variable + " = '" +
                                value + "': " + reason};
  };
  out = ScheduleOptions{};
  if (const char *v = std::getenv("REDIST_SCHEDULE"); v != nullptr && *v != '\0') {
    const auto strategy = parse_strategy(v);
    if (!strategy)
      return bad("REDIST_SCHEDULE", v, "unknown schedule (known: " + strategy_names() + ")");
    out.strategy = *strategy;
  }
  long long value = 0;
  if (const char *v = std::getenv("REDIST_MAX_CONCURRENT"); v != nullptr && *v != '\0') {
    if (!parse_count(v, value) || value > INT_MAX)
      return bad("REDIST_MAX_CONCURRENT", v, "must be an integer >= 0 (0 = no limit)");
    out.max_concurrent = static_cast<int>(value);
  }
  if (const char *v = std::getenv("REDIST_MAX_MEMORY"); v != nullptr && *v != '\0') {
    if (!parse_count(v, value))
      return bad("REDIST_MAX_MEMORY", v, "must be a number of bytes >= 0 (0 = no cap)");
    out.max_memory = value;
  }
  if (const std::string why = single_copy::environment_error(); !why.empty()) {
    return ArgumentError{0, std::string(c.routine) + ": " + why};
  }
  return std::nullopt;
}

int run_call(Call &c) {
  ++call_count;
  const blacs::GridInfo ig = blacs::grid_info(c.ictxt);
  c.a.grid = blacs::grid_info(c.a.desc[CTXT_]);
  c.b.grid = blacs::grid_info(c.b.desc[CTXT_]);

  ScheduleOptions options;
  std::optional<ArgumentError> local_error = environment_options(c, options);
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
  const redist_int nslots = ig.nprow * ig.npcol;

  // Local cache keys: if every process of ICTXT finds both, all cached plans were built
  // together from the same global picture.
  Key comm_key{c.ictxt,  ig.nprow, ig.npcol,
               ig.myrow, ig.mycol, comm_identity(context_comm(c.ictxt))};
  Key plan_key = comm_key;
  std::shared_ptr<CachedPlan> plan;
  std::shared_ptr<OwnedComm> comm;
  if (!local_error) {
    append(plan_key,
           {static_cast<long long>(c.element_size), c.trapezoid, c.uplo, c.diag, c.m, c.n,
            static_cast<long long>(options.strategy), options.max_concurrent, options.max_memory});
    for (const Side *s : {&c.a, &c.b}) {
      const Key k = side_key(*s);
      for (const long long v : k)
        plan_key.push_back(v);
    }
    std::lock_guard lock(caches().mutex);
    plan = caches().plans.find(plan_key);
    comm = caches().comms.find(comm_key);
  }

  // ---- round 1 ----
  Round1 r1;
  // The first failing argument and a process that saw it, as one value: the maximum picks the
  // lowest position, and a process slot paired with it.
  r1.flag(local_error ? (1000 - local_error->position) * kSlotRange + slot + 1 : 0);
  long long generation = 0;
  {
    std::lock_guard lock(caches().mutex);
    generation = caches().generation;
  }
  r1.flag(generation);
  const bool ok = !local_error;
  r1.agreed(c.m, ok, c.pos.m);
  r1.agreed(c.n, ok, c.pos.n);
  r1.agreed(c.uplo, ok, c.pos.uplo);
  r1.agreed(c.diag, ok, c.pos.diag);
  constexpr std::size_t kSideFields = 10;
  for (const Side *s : {&c.a, &c.b}) {
    const bool in = ok && s->grid.member();
    for (Desc f : {M_, N_, MB_, NB_, RSRC_, CSRC_})
      r1.agreed(in ? s->desc[f] : 0, in, s->pos_desc);
    r1.agreed(s->i, in, s->pos_i);
    r1.agreed(s->j, in, s->pos_j);
    r1.agreed(s->grid.nprow, in, s->pos_desc);
    r1.agreed(s->grid.npcol, in, s->pos_desc);
  }
  const std::size_t options_first = r1.positions().size();
  r1.agreed(static_cast<long long>(options.strategy), ok, 0);
  r1.agreed(options.max_concurrent, ok, 0);
  r1.agreed(options.max_memory, ok, 0);
  // A cache hit counts only if every process found an entry with the same build id.
  const std::size_t ids_first = r1.positions().size();
  r1.internal(plan ? plan->id.generation : 0);
  r1.internal(plan ? plan->id.creator : 0);
  r1.internal(comm ? comm->id.generation : 0);
  r1.internal(comm ? comm->id.creator : 0);
  int world_rank = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &world_rank);
  r1.internal(world_rank);
  r1.combine(c.ictxt);
  const auto same_everywhere = [&](std::size_t k) {
    return r1.max_of(k) == r1.min_of(k) && r1.max_of(k + 1) == r1.min_of(k + 1) && r1.min_of(k) > 0;
  };
  const bool plan_hit = same_everywhere(ids_first);
  const bool comm_hit = same_everywhere(ids_first + 2);
  const BuildId new_id{r1.flag_at(1) + 1, r1.min_of(ids_first + 4)};

  if (r1.flag_at(0) != 0) {
    if (local_error) {
      report(local_error->message + "; nothing was copied");
      return REDIST_ERR_ARGUMENT;
    }
    const long long position = 1000 - r1.flag_at(0) / kSlotRange;
    report(std::string(c.routine) + ": " +
           (position == 0 ? std::string("the REDIST_* environment")
                          : "argument " + std::to_string(position)) +
           " is invalid on another process (process " +
           std::to_string(r1.flag_at(0) % kSlotRange - 1) + " of ICTXT); nothing was copied");
    return REDIST_ERR_REMOTE;
  }
  for (std::size_t k = options_first; k < options_first + 3; ++k) {
    if (r1.max_of(k) != r1.min_of(k)) {
      report(std::string(c.routine) +
             ": REDIST_SCHEDULE, REDIST_MAX_CONCURRENT or REDIST_MAX_MEMORY differ between "
             "processes; nothing was copied");
      return REDIST_ERR_MISMATCH;
    }
  }
  const std::size_t agreed_count = r1.positions().size();
  for (std::size_t k = 0; k < agreed_count; ++k) {
    if (r1.positions()[k] > 0 && r1.present(k) && r1.max_of(k) != r1.min_of(k)) {
      report(std::string(c.routine) + ": argument " + std::to_string(r1.positions()[k]) +
             " differs between processes (values from " + std::to_string(r1.min_of(k)) + " to " +
             std::to_string(r1.max_of(k)) + "); nothing was copied");
      return REDIST_ERR_MISMATCH;
    }
  }
  if (c.m == 0 || c.n == 0) {
    return REDIST_SUCCESS;
  }
  const std::size_t a_first = 4;
  const std::size_t b_first = a_first + kSideFields;
  for (const auto &[side, first] : {std::pair{&c.a, a_first}, std::pair{&c.b, b_first}}) {
    if (!r1.present(first)) {
      report(std::string(c.routine) + ": argument " + std::to_string(side->pos_desc) + " (DESC" +
             side->name + "(CTXT_)): no process of ICTXT is in the grid of DESC" + side->name +
             "; nothing was copied");
      return REDIST_ERR_ARGUMENT;
    }
  }

  if (!plan_hit) {
    // ---- round 2: everyone's grid coordinates ----
    // Stored as coordinate + 2 (a non-member's -1 becomes 1), 0 in the other slots, so the
    // absolute-value maximum picks each slot's own entry.
    std::vector<redist_int> coords(4 * static_cast<std::size_t>(nslots), 0);
    const auto own = 4 * static_cast<std::size_t>(slot);
    coords[own + 0] = (c.a.grid.member() ? c.a.grid.myrow : -1) + 2;
    coords[own + 1] = (c.a.grid.member() ? c.a.grid.mycol : -1) + 2;
    coords[own + 2] = (c.b.grid.member() ? c.b.grid.myrow : -1) + 2;
    coords[own + 3] = (c.b.grid.member() ? c.b.grid.mycol : -1) + 2;
    Cigamx2d(c.ictxt, "All", " ", static_cast<redist_int>(coords.size()), 1, coords.data(),
             static_cast<redist_int>(coords.size()), nullptr, nullptr, -1, -1, -1);

    Transfer t;
    t.m = c.m;
    t.n = c.n;
    t.region.kind = !c.trapezoid    ? Region::Kind::full
                    : c.uplo == 'U' ? Region::Kind::upper
                                    : Region::Kind::lower;
    t.region.unit_diag = c.trapezoid && c.diag == 'U';
    for (const auto &[side, first, offset, layout] :
         {std::tuple{&c.a, a_first, std::size_t{0}, &t.src},
          std::tuple{&c.b, b_first, std::size_t{2}, &t.dst}}) {
      const std::size_t side_first = first;
      const auto agreed = [&](std::size_t k) {
        return static_cast<Index>(r1.max_of(side_first + k));
      };
      const int nprow = static_cast<int>(agreed(8));
      const int npcol = static_cast<int>(agreed(9));
      layout->rows = {agreed(0), agreed(2), nprow, static_cast<int>(agreed(4))};
      layout->cols = {agreed(1), agreed(3), npcol, static_cast<int>(agreed(5))};
      layout->i = agreed(6) - 1;
      layout->j = agreed(7) - 1;
      layout->grid.nprow = nprow;
      layout->grid.npcol = npcol;
      layout->grid.ranks.assign(static_cast<std::size_t>(nprow) * npcol, -1);
      for (redist_int s = 0; s < nslots; ++s) {
        const redist_int pr = coords[4 * static_cast<std::size_t>(s) + offset] - 2;
        const redist_int pc = coords[4 * static_cast<std::size_t>(s) + offset + 1] - 2;
        if (pr >= 0 && pr < nprow && pc >= 0 && pc < npcol) {
          layout->grid.ranks[static_cast<std::size_t>(pr) + static_cast<std::size_t>(pc) * nprow] =
              static_cast<int>(s);
        }
      }
      for (int pc = 0; pc < npcol; ++pc) {
        for (int pr = 0; pr < nprow; ++pr) {
          if (layout->grid.rank_at(pr, pc) < 0) {
            report(std::string(c.routine) + ": argument " + std::to_string(c.pos.ictxt) +
                   " (ICTXT): the process at (" + std::to_string(pr) + ", " + std::to_string(pc) +
                   ") of the grid of DESC" + side->name + " is not in ICTXT (or passed DESC" +
                   side->name + "(CTXT_) = -1); nothing was copied");
            return REDIST_ERR_ARGUMENT;
          }
        }
      }
    }
    {
      std::lock_guard lock(caches().mutex);
      caches().generation = std::max(caches().generation, new_id.generation);
    }
    if (!comm_hit) {
      MPI_Comm dup = MPI_COMM_NULL;
      if (MPI_Comm_dup(context_comm(c.ictxt), &dup) != MPI_SUCCESS) {
        report(std::string(c.routine) + ": MPI_Comm_dup of ICTXT's communicator failed");
        return REDIST_ERR_MPI;
      }
      MPI_Comm_set_errhandler(dup, MPI_ERRORS_RETURN);
      comm = std::make_shared<OwnedComm>(dup, new_id);
      std::lock_guard lock(caches().mutex);
      caches().comms.insert(comm_key, comm);
    }
    // Planning (and the executor's buffers) may run out of memory on some processes only:
    // every process learns it in one more combine, before any data moves.
    bool out_of_memory = false;
    RankPlan rank_plan;
    try {
      rank_plan = make_rank_plan(t, static_cast<int>(slot), static_cast<int>(nslots));
    } catch (const std::bad_alloc &) {
      out_of_memory = true;
    }
    // The busiest process's all-at-once buffer, for the memory cap: one more combine, only
    // when a cap is set (the predicted time is not reported through these entries).
    double global[3] = {0.0, 0.0, 0.0};
    if (options.max_memory > 0) {
      if (!out_of_memory) {
        const ScheduleInputs local = all_at_once_local(rank_plan, options.model, c.element_size);
        global[0] = static_cast<double>(local.all_at_once_buffer_max);
        global[1] = local.all_at_once_seconds;
      }
      global[2] = out_of_memory ? 1.0 : 0.0;
      Cdgamx2d(c.ictxt, "All", " ", 3, 1, global, 3, nullptr, nullptr, -1, -1, -1);
    }
    std::string why;
    std::shared_ptr<CachedPlan> built;
    if (!out_of_memory && global[2] == 0.0) {
      try {
        ScheduleChoice choice;
        why = choose_schedule(t, rank_plan, options,
                              ScheduleInputs{static_cast<Index>(global[0]), global[1]},
                              c.element_size, choice);
        if (why.empty()) {
          built = std::make_shared<CachedPlan>();
          built->id = new_id;
          built->comm = comm;
          built->executor =
              std::make_unique<Executor>(comm->comm, std::move(rank_plan), c.element_size,
                                         c.a.grid.member() ? c.a.desc[LLD_] : 1,
                                         c.b.grid.member() ? c.b.desc[LLD_] : 1, std::move(choice));
        }
      } catch (const std::bad_alloc &) {
        out_of_memory = true;
      }
    }
    redist_int failed = out_of_memory ? 1 : 0;
    Cigamx2d(c.ictxt, "All", " ", 1, 1, &failed, 1, nullptr, nullptr, -1, -1, -1);
    if (failed != 0) {
      report(std::string(c.routine) + ": out of memory while planning" +
             (out_of_memory ? "" : " on another process") + "; nothing was copied");
      return REDIST_ERR_NO_MEMORY;
    }
    if (!why.empty()) {
      report(std::string(c.routine) + ": the REDIST_* environment cannot be honoured: " + why +
             "; nothing was copied");
      return REDIST_ERR_ARGUMENT;
    }
    plan = std::move(built);
    std::lock_guard lock(caches().mutex);
    caches().plans.insert(plan_key, plan);
  }
  try {
    plan->executor->execute(c.a.data, c.destination);
  } catch (const Error &e) {
    report(std::string(c.routine) + ": " + e.what());
    return e.status();
  }
  return REDIST_SUCCESS;
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
    const int status = run_call(c);
    if (status != REDIST_SUCCESS) throw Error(static_cast<redist_status>(status), "");
  });
  // Not yet reported: an exception run_call did not catch (its own errors carry no message).
  if ((last_status == REDIST_ERR_INTERNAL || last_status == REDIST_ERR_NO_MEMORY) &&
      *redist_last_error() != '\0') {
    report(redist_last_error());
  }
}

} // namespace
} // namespace redist

using redist::entry;

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
  std::lock_guard lock(redist::caches().mutex);
  redist::caches().plans.clear();
  redist::caches().comms.clear();
}
