// The extern "C" API of redist.h. Every body runs inside c_barrier().

#include "api_internal.hpp"
#include "front_end.hpp"
#include "single_copy.hpp"

#include <algorithm>
#include <array>
#include <bit>
#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <new>
#include <optional>
#include <span>
#include <tuple>
#include <vector>

namespace redist {

void validate_layout(const std::string &call, const std::string &name, const redist_layout &l,
                     Index window_m, Index window_n, int comm_size, int rank) {
  const auto arg = [&](const char *field) { return name + "->" + field; };
  if (l.m < 0) throw_argument(call, arg("m"), l.m, "global rows must be >= 0");
  if (l.n < 0) throw_argument(call, arg("n"), l.n, "global columns must be >= 0");
  if (l.mb < 1) throw_argument(call, arg("mb"), l.mb, "block size must be >= 1");
  if (l.nb < 1) throw_argument(call, arg("nb"), l.nb, "block size must be >= 1");
  if (l.nprow < 1) throw_argument(call, arg("nprow"), l.nprow, "grid rows must be >= 1");
  if (l.npcol < 1) throw_argument(call, arg("npcol"), l.npcol, "grid columns must be >= 1");
  // The distribution's period, block size times processes, must be an Index.
  if (l.mb > INT64_MAX / l.nprow)
    throw_argument(call, arg("mb"), l.mb, "block size times grid rows must be below 2^63");
  if (l.nb > INT64_MAX / l.npcol)
    throw_argument(call, arg("nb"), l.nb, "block size times grid columns must be below 2^63");
  if (static_cast<long long>(l.nprow) * l.npcol > comm_size) {
    throw_argument(call, arg("nprow*npcol"), static_cast<long long>(l.nprow) * l.npcol,
                   "grid has more positions than the communicator has processes (" +
                       std::to_string(comm_size) + ")");
  }
  if (l.rsrc < 0 || l.rsrc >= l.nprow)
    throw_argument(call, arg("rsrc"), l.rsrc, "must be in [0, nprow)");
  if (l.csrc < 0 || l.csrc >= l.npcol)
    throw_argument(call, arg("csrc"), l.csrc, "must be in [0, npcol)");
  if (l.ranks == nullptr) throw_argument(call, arg("ranks"), 0, "NULL rank map");
  const std::size_t positions = static_cast<std::size_t>(l.nprow) * l.npcol;
  std::vector<int> seen(l.ranks, l.ranks + positions);
  for (std::size_t idx = 0; idx < positions; ++idx) {
    if (seen[idx] < 0 || seen[idx] >= comm_size) {
      throw_argument(call, arg("ranks[") + std::to_string(idx) + "]", seen[idx],
                     "not a rank of the communicator");
    }
  }
  std::sort(seen.begin(), seen.end());
  const auto dup = std::adjacent_find(seen.begin(), seen.end());
  if (dup != seen.end()) {
    throw_argument(call, arg("ranks"), *dup, "rank appears twice in the grid");
  }
  if (l.i < 0 || l.i > l.m - window_m) {
    throw_argument(call, arg("i"), l.i,
                   "window rows [i, i+" + std::to_string(window_m) + ") outside the " +
                       std::to_string(l.m) + " rows of the matrix");
  }
  if (l.j < 0 || l.j > l.n - window_n) {
    throw_argument(call, arg("j"), l.j,
                   "window columns [j, j+" + std::to_string(window_n) + ") outside the " +
                       std::to_string(l.n) + " columns of the matrix");
  }
  const Layout layout = to_layout(l);
  int pr = 0;
  int pc = 0;
  if (layout.grid.find(rank, pr, pc)) {
    const Index local_rows = layout.rows.local_extent(pr);
    if (l.lld < std::max<Index>(1, local_rows)) {
      throw_argument(
          call, arg("lld"), l.lld,
          "must be >= max(1, local rows) = " + std::to_string(std::max<Index>(1, local_rows)) +
              " on rank " + std::to_string(rank));
    }
    // The local array's elements, lld times local columns, are offsets: they must be an Index
    // (of 16-byte elements, so that byte offsets are too).
    const Index local_cols = std::max<Index>(1, layout.cols.local_extent(pc));
    if (l.lld > INT64_MAX / 16 / local_cols) {
      throw_argument(call, arg("lld"), l.lld,
                     "lld times the " + std::to_string(local_cols) +
                         " local columns must be below 2^59 on rank " + std::to_string(rank));
    }
  }
}

Layout to_layout(const redist_layout &l) {
  Layout out;
  out.rows = {l.m, l.mb, l.nprow, l.rsrc};
  out.cols = {l.n, l.nb, l.npcol, l.csrc};
  out.grid.nprow = l.nprow;
  out.grid.npcol = l.npcol;
  out.grid.ranks.assign(l.ranks, l.ranks + static_cast<std::size_t>(l.nprow) * l.npcol);
  out.i = l.i;
  out.j = l.j;
  return out;
}

void agree_impl(MPI_Comm comm, const std::string &call, std::uint64_t fingerprint,
                const char *mismatch_what, const Error *local_error) {
  int rank = 0;
  int size = 0;
  MPI_Comm_rank(comm, &rank);
  MPI_Comm_size(comm, &size);
  // The first failing rank wins, then the fingerprint as a range (a mismatch when not a point).
  const auto hash = static_cast<long long>(fingerprint >> 2);
  long long v[3] = {local_error ? front_end::error_word(1, front_end::lowest_first(rank, size)) : 0,
                    hash, -hash};
  if (front_end::reduce(comm, v, 3) != MPI_SUCCESS) {
    throw Error(REDIST_ERR_MPI, call + ": MPI_Allreduce failed while checking arguments");
  }
  if (local_error != nullptr) {
    throw *local_error;
  }
  if (v[0] != 0) {
    throw Error(REDIST_ERR_REMOTE,
                call + ": an argument is invalid on rank " +
                    std::to_string(front_end::lowest_first(front_end::error_order(v[0]), size)) +
                    " (see its message)");
  }
  if (v[1] != -v[2]) {
    throw Error(REDIST_ERR_MISMATCH, call + ": processes passed different " + mismatch_what);
  }
}

void check_mpi(int code, const char *call, const char *what) {
  if (code != MPI_SUCCESS) {
    throw Error(REDIST_ERR_MPI, std::string(call) + ": " + what + " failed");
  }
}

MPI_Comm duplicate_comm(const char *call, MPI_Comm comm) {
  MPI_Comm own = MPI_COMM_NULL;
  check_mpi(MPI_Comm_dup(comm, &own), call, "MPI_Comm_dup");
  if (const int rc = MPI_Comm_set_errhandler(own, MPI_ERRORS_RETURN); rc != MPI_SUCCESS) {
    MPI_Comm_free(&own);
    check_mpi(rc, call, "MPI_Comm_set_errhandler");
  }
  return own;
}

PlanComm::PlanComm(const char *call, MPI_Comm comm) {
  learn_node_ids(comm);
  handle = duplicate_comm(call, comm);
}

PlanComm::~PlanComm() {
  if (handle != MPI_COMM_NULL) MPI_Comm_free(&handle);
}

CommPosition comm_position(const char *call, MPI_Comm comm) {
  if (comm == MPI_COMM_NULL) throw_argument(call, "comm", 0, "MPI_COMM_NULL");
  int inter = 0;
  check_mpi(MPI_Comm_test_inter(comm, &inter), call, "MPI_Comm_test_inter");
  if (inter != 0)
    throw Error(REDIST_ERR_ARGUMENT, std::string(call) +
                                         ": argument comm: an intercommunicator (redist needs an "
                                         "intracommunicator)");
  CommPosition p;
  check_mpi(MPI_Comm_size(comm, &p.size), call, "MPI_Comm_size");
  check_mpi(MPI_Comm_rank(comm, &p.rank), call, "MPI_Comm_rank");
  return p;
}

} // namespace redist

using namespace redist;

extern "C" void redist_options_init(redist_options *options) {
  if (options == nullptr) {
    return;
  }
  *options = redist_options{};
  options->schedule = REDIST_SCHEDULE_AUTO;
}

extern "C" const char *redist_schedule_name(int schedule) {
  if (schedule < REDIST_SCHEDULE_AUTO || schedule > REDIST_SCHEDULE_MULTIPHASE) {
    return nullptr;
  }
  return strategy_name(static_cast<Strategy>(schedule)).data();
}

namespace redist {
namespace {

ScheduleOptions schedule_options(const std::string &call, const redist_options &o) {
  if (o.schedule < REDIST_SCHEDULE_AUTO || o.schedule > REDIST_SCHEDULE_MULTIPHASE) {
    throw_argument(call, "options->schedule", o.schedule,
                   "unknown redist_schedule (known: " + strategy_names() + ")");
  }
  if (o.max_concurrent < 0)
    throw_argument(call, "options->max_concurrent", o.max_concurrent,
                   "must be >= 0 (0 = no limit)");
  if (o.max_memory < 0)
    throw_argument(call, "options->max_memory", o.max_memory, "must be >= 0 (0 = no cap)");
  // The value as text: converting NaN or an infinity to an integer is undefined.
  const auto number = [](double v) {
    char text[32];
    std::snprintf(text, sizeof text, "%g", v);
    return std::string(text);
  };
  if (!(o.alpha >= 0.0) || !std::isfinite(o.alpha))
    throw_argument(call, "options->alpha", number(o.alpha),
                   "must be a finite number >= 0 (0 = default)");
  if (!(o.beta >= 0.0) || !std::isfinite(o.beta))
    throw_argument(call, "options->beta", number(o.beta),
                   "must be a finite number >= 0 (0 = default)");
  ScheduleOptions out;
  out.strategy = static_cast<Strategy>(o.schedule);
  out.max_concurrent = o.max_concurrent;
  out.max_memory = o.max_memory;
  if (o.alpha > 0.0) out.model.alpha = o.alpha;
  if (o.beta > 0.0) out.model.beta = o.beta;
  // REDIST_SINGLE_COPY and REDIST_PROGRESS, which every plan kind's executor reads.
  if (const std::string why = Executor::environment_error(); !why.empty())
    throw Error(REDIST_ERR_ARGUMENT, call + ": " + why);
  return out;
}

// The two-level model of redist_plan_create_calibrated: the measured levels replace the
// options' alpha, beta (inside a node) and the inter-node defaults.
void apply_levels(const std::string &call, const redist_calibration &levels, ScheduleOptions &out) {
  for (const auto &[name, value] : {std::pair{"levels->intra_alpha", levels.intra_alpha},
                                    std::pair{"levels->intra_beta", levels.intra_beta},
                                    std::pair{"levels->inter_alpha", levels.inter_alpha},
                                    std::pair{"levels->inter_beta", levels.inter_beta}}) {
    if (!(value >= 0.0) || !std::isfinite(value)) {
      char text[32];
      std::snprintf(text, sizeof text, "%g", value);
      throw_argument(call, name, std::string(text), "must be a finite number >= 0");
    }
  }
  if (levels.has_intra != 0) {
    if (levels.intra_alpha > 0.0) out.model.alpha = levels.intra_alpha;
    if (levels.intra_beta > 0.0) out.model.beta = levels.intra_beta;
  }
  if (levels.has_inter != 0) {
    if (levels.inter_alpha > 0.0) out.inter.alpha = levels.inter_alpha;
    if (levels.inter_beta > 0.0) out.inter.beta = levels.inter_beta;
  }
}

} // namespace
} // namespace redist

namespace {

/// The front end's description of a C API call (fields from the layouts; what has no field
/// of its own goes into the digest).
front_end::CallArgs describe(const char *call, int64_t m, int64_t n, int type, int region,
                             int unit_diag, const redist_layout &a, const redist_layout &b,
                             int rank, const ScheduleOptions &options) {
  front_end::CallArgs args;
  args.routine = call;
  args.element_size = static_cast<std::size_t>(type_size(type));
  args.options = options;
  args.whole_layouts = true;
  auto &f = args.fields;
  f.m = m;
  f.n = n;
  f.uplo = static_cast<unsigned char>(region == REDIST_REGION_UPPER   ? 'U'
                                      : region == REDIST_REGION_LOWER ? 'L'
                                                                      : ' ');
  f.diag = static_cast<unsigned char>(unit_diag != 0 ? 'U' : 'N');
  for (const auto &[l, fields, position] :
       {std::tuple{&a, &f.a, &args.a}, std::tuple{&b, &f.b, &args.b}}) {
    *fields = {l->m, l->n, l->mb, l->nb, l->rsrc, l->csrc, l->i, l->j, l->nprow, l->npcol};
    const Layout layout = to_layout(*l);
    int pr = -1;
    int pc = -1;
    const bool member = layout.grid.find(rank, pr, pc);
    *position = {member, pr, pc, l->lld};
  }
  f.strategy = static_cast<long long>(options.strategy);
  f.max_concurrent = options.max_concurrent;
  f.max_memory = options.max_memory;
  Fingerprint digest;
  digest.add(type);
  for (const redist_layout *l : {&a, &b}) {
    for (long long idx = 0; idx < static_cast<long long>(l->nprow) * l->npcol; ++idx)
      digest.add(l->ranks[idx]);
  }
  // The cost model decides the automatic schedule: it must agree too.
  digest.add(std::bit_cast<std::int64_t>(options.model.alpha));
  digest.add(std::bit_cast<std::int64_t>(options.model.beta));
  digest.add(std::bit_cast<std::int64_t>(options.inter.alpha));
  digest.add(std::bit_cast<std::int64_t>(options.inter.beta));
  f.digest = static_cast<long long>(digest.value() >> 2);
  return args;
}

bool transposes(int op) {
  return op == REDIST_OP_T || op == REDIST_OP_C;
}

// The checks of one call's m, n, type, layouts, region and op (-1: a copy), on this process;
// `prefix` comes before each argument's name ("ops[3]." in a batch).
void check_call(const char *call, const std::string &prefix, int64_t m, int64_t n, int type,
                const redist_layout *a, const redist_layout *b, int region, int op, int size,
                int rank) {
  if (m < 0) throw_argument(call, prefix + "m", m, "must be >= 0");
  if (n < 0) throw_argument(call, prefix + "n", n, "must be >= 0");
  if (type_size(type) == 0) throw_argument(call, prefix + "type", type, "unknown redist_type");
  if (region != REDIST_REGION_FULL && region != REDIST_REGION_UPPER &&
      region != REDIST_REGION_LOWER)
    throw_argument(call, prefix + "region", region, "unknown redist_region");
  if (op != -1 && op != REDIST_OP_N && !transposes(op))
    throw_argument(call, prefix + "op", op, "unknown redist_op");
  if (a == nullptr) throw_argument(call, prefix + "a", 0, "NULL layout");
  if (b == nullptr) throw_argument(call, prefix + "b", 0, "NULL layout");
  const bool transposed = transposes(op);
  validate_layout(call, prefix + "a", *a, transposed ? n : m, transposed ? m : n, size, rank);
  validate_layout(call, prefix + "b", *b, m, n, size, rank);
}

// The transfer of a checked call (op -1: a copy).
Transfer transfer_of(int64_t m, int64_t n, const redist_layout &a, const redist_layout &b,
                     int region, int unit_diag, int op) {
  Transfer t;
  t.src = to_layout(a);
  t.dst = to_layout(b);
  t.m = m;
  t.n = n;
  t.region.kind = region == REDIST_REGION_UPPER   ? Region::Kind::upper
                  : region == REDIST_REGION_LOWER ? Region::Kind::lower
                                                  : Region::Kind::full;
  t.region.unit_diag = unit_diag != 0;
  if (op != -1) {
    t.region.diagonal = Region::Diagonal::top_left; // PxTRADD's trapezoid
    t.perm = transposes(op) ? std::array<int, 2>{1, 0} : std::array<int, 2>{0, 1};
  }
  return t;
}

// The front end's operation field of a call (op -1: a copy).
long long operation_field(int op) {
  return op == -1         ? front_end::kCopy
         : transposes(op) ? front_end::kOperationTransposed
                          : front_end::kOperationN;
}

// Whether some agreed field is not the same on every process.
bool differs(const front_end::CallFields<front_end::Range> &fields) {
  bool out = false;
  front_end::CallFields<front_end::Range> ranges = fields;
  front_end::each_field(
      [&](front_end::Arg, const char *, const front_end::Range &r) { out = out || r.differs(); },
      ranges);
  return out;
}

// The agreed failure of front_end::plan_everywhere / plan_nd_everywhere as `call`'s error.
void throw_if_failed(const char *call, const front_end::Planned &planned) {
  if (planned.status != REDIST_SUCCESS && !planned.here) {
    throw Error(REDIST_ERR_REMOTE, std::string(call) + ": an argument is invalid on rank " +
                                       std::to_string(planned.first) + " (see its message)");
  }
  if (planned.status == REDIST_ERR_NO_MEMORY)
    throw Error(REDIST_ERR_NO_MEMORY, std::string(call) + ": out of memory while planning");
  if (planned.status != REDIST_SUCCESS)
    throw Error(REDIST_ERR_ARGUMENT, std::string(call) + ": argument options: " + planned.why);
}

// type and region are the ints the C caller passed (enum_value): any value may arrive.
// op: -1 for a copy, else the redist_op of redist_plan_create_op (any int the caller passed).
int create_plan(const char *call, MPI_Comm comm, int64_t m, int64_t n, int type,
                const redist_layout *a, const redist_layout *b, int region, int unit_diag,
                const redist_options *options, const redist_calibration *levels, redist_plan *plan,
                int op = -1) {
  return c_barrier(call, [&] {
    if (plan != nullptr) *plan = nullptr;
    const CommPosition position = comm_position(call, comm);
    const int rank = position.rank;
    const int size = position.size;
    std::optional<Error> local;
    front_end::CallArgs args;
    try {
      if (plan == nullptr) throw_argument(call, "plan", 0, "NULL output pointer");
      check_call(call, "", m, n, type, a, b, region, op, size, rank);
      redist_options defaults;
      redist_options_init(&defaults);
      ScheduleOptions schedule_opts =
          schedule_options(call, options != nullptr ? *options : defaults);
      if (levels != nullptr) apply_levels(call, *levels, schedule_opts);
      args = describe(call, m, n, type, region, unit_diag, *a, *b, rank, schedule_opts);
      args.fields.operation = operation_field(op);
    } catch (const Error &e) {
      local = e;
    } catch (const std::bad_alloc &) { // agreed like a bad argument, not returned alone
      local = Error(REDIST_ERR_NO_MEMORY,
                    std::string(call) + ": out of memory while checking the arguments");
    }
    const front_end::Agreement agreed = front_end::agree(
        comm, args, local ? front_end::error_word(1, front_end::lowest_first(rank, size)) : 0, {});
    if (local) throw *local;
    if (agreed.error != 0) {
      throw Error(REDIST_ERR_REMOTE, std::string(call) + ": an argument is invalid on rank " +
                                         std::to_string(front_end::lowest_first(
                                             static_cast<int>(agreed.error_rank()), size)) +
                                         " (see its message)");
    }
    if (differs(agreed.fields)) {
      throw Error(REDIST_ERR_MISMATCH,
                  std::string(call) + ": processes passed different m, n, type, region, "
                                      "unit_diag, options or layouts (all but lld must agree)");
    }
    Transfer t = transfer_of(m, n, *a, *b, region, unit_diag, op);

    auto result = std::make_unique<redist_plan_s>();
    result->comm = PlanComm(call, comm);
    front_end::Planned planned =
        front_end::plan_everywhere(result->comm.handle, rank, size, result->comm.handle, t,
                                   args.options, args.element_size, a->lld, b->lld, true);
    throw_if_failed(call, planned);
    result->executor = std::move(planned.executor);
    result->op = op;
    result->type = type;
    result->transfer = std::move(t);
    result->options = args.options;
    result->lld_a = a->lld;
    result->lld_b = b->lld;
    result->rank = rank;
    result->size = size;
    *plan = result.release();
  });
}

} // namespace

extern "C" int redist_plan_create(MPI_Comm comm, int64_t m, int64_t n, redist_type type,
                                  const redist_layout *a, const redist_layout *b,
                                  redist_region region, int unit_diag, redist_plan *plan) {
  return create_plan("redist_plan_create", comm, m, n, enum_value(type), a, b, enum_value(region),
                     unit_diag, nullptr, nullptr, plan);
}

extern "C" int redist_plan_create_opt(MPI_Comm comm, int64_t m, int64_t n, redist_type type,
                                      const redist_layout *a, const redist_layout *b,
                                      redist_region region, int unit_diag,
                                      const redist_options *options, redist_plan *plan) {
  return create_plan("redist_plan_create_opt", comm, m, n, enum_value(type), a, b,
                     enum_value(region), unit_diag, options, nullptr, plan);
}

extern "C" int redist_plan_create_calibrated(MPI_Comm comm, int64_t m, int64_t n, redist_type type,
                                             const redist_layout *a, const redist_layout *b,
                                             redist_region region, int unit_diag,
                                             const redist_options *options,
                                             const redist_calibration *levels, redist_plan *plan) {
  return create_plan("redist_plan_create_calibrated", comm, m, n, enum_value(type), a, b,
                     enum_value(region), unit_diag, options, levels, plan);
}

namespace {

/// The executor of a batch's operations on `comm` (front_end::plan_batch_everywhere).
front_end::Planned plan_batch(int rank, int size, MPI_Comm comm,
                              const std::vector<redist_plan_s::BatchOp> &batch) {
  std::vector<Transfer> transfers;
  std::vector<std::size_t> sizes;
  std::vector<Index> lld_a;
  std::vector<Index> lld_b;
  for (const redist_plan_s::BatchOp &op : batch) {
    transfers.push_back(op.transfer);
    sizes.push_back(static_cast<std::size_t>(type_size(op.type)));
    lld_a.push_back(op.lld_a);
    lld_b.push_back(op.lld_b);
  }
  return front_end::plan_batch_everywhere(comm, rank, size, comm, transfers, sizes, lld_a, lld_b);
}

/// After an execution failed on some process: the plan made anew on every process, on a
/// fresh duplicate of its communicator (messages of the failed execution may still wait on
/// the old one; its executor's state may be half-way). Collective; every process calls it
/// (the decision was agreed). On failure the plan stays marked as failed.
void make_anew(const char *call, redist_plan_s &plan) {
  PlanComm fresh(call, plan.comm.handle);
  front_end::Planned planned =
      plan.nd ? front_end::plan_nd_everywhere(fresh.handle, plan.rank, plan.size, *plan.nd,
                                              plan.options, plan.executor->element_size())
      : plan.batch.empty()
          ? front_end::plan_everywhere(fresh.handle, plan.rank, plan.size, fresh.handle,
                                       plan.transfer, plan.options, plan.executor->element_size(),
                                       plan.lld_a, plan.lld_b, true)
          : plan_batch(plan.rank, plan.size, fresh.handle, plan.batch);
  if (planned.status != REDIST_SUCCESS) {
    throw Error(
        planned.here ? static_cast<redist_status>(planned.status) : REDIST_ERR_REMOTE,
        std::string(call) + ": the plan's previous execution failed and making it anew failed" +
            (planned.here ? "" : " on rank " + std::to_string(planned.first)) +
            (planned.status == REDIST_ERR_NO_MEMORY ? " (out of memory)" : "") + "; destroy it");
  }
  plan.executor = std::move(planned.executor);
  std::swap(plan.comm, fresh); // the old communicator goes with `fresh`
  plan.failed = false;
}

constexpr double kOne = 1.0;
constexpr double kZero = 0.0;
constexpr std::array<std::byte, 16> kZeros{}; // 0 of every element type

/// 1 of element type `type` (a redist_type).
const void *one_of(int type) {
  static constexpr float kFloat[2] = {1.0F, 0.0F}; // float and complex float
  static constexpr double kDouble[2] = {1.0, 0.0}; // double and complex double
  static constexpr std::int32_t kInt32 = 1;
  static constexpr std::int64_t kInt64 = 1;
  switch (type) {
  case REDIST_FLOAT:
  case REDIST_COMPLEX_FLOAT:
    return kFloat;
  case REDIST_INT32:
    return &kInt32;
  case REDIST_INT64:
    return &kInt64;
  default:
    return kDouble;
  }
}

/// alpha, beta of an operation `op` (a redist_op) on `type`, checked (throws naming `call` and
/// the argument `name("alpha")`, `name("beta")`: made only for a message).
template <class Name>
Operation operation_for(const char *call, int op, int type, const void *alpha, const void *beta,
                        Name &&name) {
  if (alpha == nullptr) throw_argument(call, name("alpha"), 0, "NULL pointer");
  if (beta == nullptr) throw_argument(call, name("beta"), 0, "NULL pointer");
  if (type == REDIST_INT32 || type == REDIST_INT64) {
    const auto value = [&](const void *p) {
      if (type == REDIST_INT32) {
        std::int32_t v = 0;
        std::memcpy(&v, p, sizeof v);
        return static_cast<long long>(v);
      }
      std::int64_t v = 0;
      std::memcpy(&v, p, sizeof v);
      return static_cast<long long>(v);
    };
    if (value(alpha) != 1)
      throw_argument(call, name("alpha"), value(alpha),
                     "integer types only copy or transpose: alpha must be 1");
    if (value(beta) != 0)
      throw_argument(call, name("beta"), value(beta),
                     "integer types only copy or transpose: beta must be 0");
    return Operation::make(Scalar::f64, false, &kOne, &kZero); // a copy
  }
  const Scalar scalar = type == REDIST_FLOAT           ? Scalar::f32
                        : type == REDIST_DOUBLE        ? Scalar::f64
                        : type == REDIST_COMPLEX_FLOAT ? Scalar::c32
                                                       : Scalar::c64;
  return Operation::make(scalar, op == REDIST_OP_C, alpha, beta);
}

/// What an execution moves, as the executor takes it: the local arrays (a batch's: arrays of
/// pointers) and the operation (a batch's: one per operation; null: a copy).
struct Execution {
  const void *a = nullptr;
  void *b = nullptr;
  const Operation *op = nullptr;
};

/// The one execution path of the C API's plans: this process's argument checks (`check`,
/// which returns the Execution or throws, and sets `op_index` to the batch operation it was
/// checking), agreed with the other processes' (before the exchange, or inside it where the
/// executor can carry them), the plan made anew after a failure, and the execution; with
/// `split`, only its begin (the execution is left in flight for redist_plan_execute_end).
template <class Check>
int run_execution(const char *call, redist_plan plan, bool split, Check &&check) {
  return c_barrier(call, [&] {
    if (plan == nullptr || !plan->executor) throw_argument(call, "plan", 0, "NULL plan");
    // In flight on every process alike when every process calls in the same order: an
    // error everywhere, no collective.
    if (plan->executor->in_flight())
      throw_argument(call, "plan", 0,
                     "an execution begun by redist_plan_execute_begin is in flight "
                     "(call redist_plan_execute_end first)");
    const bool batch = !plan->batch.empty();
    std::optional<Error> local;
    Execution run;
    long long op_index = -1;
    try {
      run = check(op_index);
    } catch (const Error &e) {
      local = e;
      plan->flight_ops.clear();
    }
    const int order = front_end::lowest_first(plan->rank, plan->size);
    long long v[2] = {!local  ? 0
                      : batch ? front_end::batch_error_word(op_index, order)
                              : front_end::error_word(1, order),
                      plan->failed ? 1 : 0};
    const auto throw_if_invalid = [&](long long agreed) {
      if (local) throw *local;
      if (agreed == 0) return;
      const long long k = batch ? front_end::batch_error_op(agreed) : -1;
      throw Error(
          REDIST_ERR_REMOTE,
          std::string(call) + (k >= 0 ? std::string(": ops[") + std::to_string(k) + "]" : "") +
              ": an argument is invalid on rank " +
              std::to_string(front_end::lowest_first(front_end::error_order(agreed), plan->size)) +
              " (see its message)");
    };
    // No agreement of its own where the executor can carry the check (defers(): every
    // message through its buffers; and the last execution clean everywhere, which every
    // process learnt in its agreement): its agreement after the exchange, before anything is
    // written to b. Otherwise one agreement first: the arguments of every process, and
    // whether the last execution failed anywhere (then the plan is made anew everywhere
    // before any data moves). A split execution checks first: its errors appear at the begin.
    const bool deferred = !split && plan->executor->defers() && !plan->executor->failed_anywhere();
    if (!deferred) {
      if (plan->executor->agree(v, 2) != MPI_SUCCESS)
        throw Error(REDIST_ERR_MPI,
                    std::string(call) + ": MPI_Allreduce failed while checking arguments");
      throw_if_invalid(v[0]);
      if (v[1] != 0) make_anew(call, *plan);
    }
    long long agreed = 0;
    try {
      if (split) {
        plan->executor->begin(run.a, run.b, run.op);
        return;
      }
      if (deferred) {
        agreed = plan->executor->execute_checked(run.a, run.b, v[0], run.op);
      } else if (run.op != nullptr) {
        plan->executor->execute(run.a, run.b, *run.op);
      } else {
        plan->executor->execute(run.a, run.b);
      }
    } catch (...) {
      plan->failed = true;
      plan->flight_ops.clear();
      throw;
    }
    plan->flight_ops.clear();
    // Repaired: made anew before the next execution, on a new communicator (a message may
    // still wait on this one), with its ways decided again.
    plan->failed = plan->executor->left_unmatched() || plan->executor->failed_anywhere();
    throw_if_invalid(agreed);
  });
}

/// redist_plan_execute (operation null) and redist_plan_execute_op; with `split`, their
/// _begin forms.
int execute_plan(const char *call, redist_plan plan, const void *alpha, const void *a,
                 const void *beta, void *b, bool operation, bool split = false) {
  return run_execution(call, plan, split, [&](long long &) {
    if (!plan->batch.empty())
      throw_argument(call, "plan", 0,
                     "a plan of redist_plan_create_batch: execute it with "
                     "redist_plan_execute_batch");
    Execution run{a, b, nullptr};
    if (operation) {
      if (plan->op == -1)
        throw_argument(call, "plan", 0, "not a plan of redist_plan_create_op (a copy plan)");
      const Operation op = operation_for(call, plan->op, plan->type, alpha, beta,
                                         [](const char *arg) { return std::string(arg); });
      if (!op.copies()) {
        plan->flight_ops.assign(1, op);
        run.op = plan->flight_ops.data();
      }
    }
    const RankPlan &rp = plan->executor->plan();
    if (a == nullptr && (!rp.sends.empty() || rp.self.elements > 0))
      throw_argument(call, "a", 0, "NULL local array but this rank owns source elements");
    if (b == nullptr && (!rp.recvs.empty() || rp.self.elements > 0))
      throw_argument(call, "b", 0, "NULL local array but this rank owns destination elements");
    return run;
  });
}

/// redist_plan_execute_batch, and with `split` its begin.
int execute_batch(const char *call, redist_plan plan, const void *const *alphas,
                  const void *const *a, const void *const *betas, void *const *b, bool split) {
  return run_execution(call, plan, split, [&](long long &op_index) {
    if (plan->batch.empty())
      throw_argument(call, "plan", 0, "not a plan of redist_plan_create_batch");
    const std::span<const Pieces> ops = plan->executor->batch_operations();
    const std::size_t count = plan->batch.size();
    plan->flight_ops.clear();
    plan->flight_a.assign(count, nullptr);
    plan->flight_b.assign(count, nullptr);
    for (std::size_t k = 0; k < count; ++k) {
      op_index = static_cast<long long>(k);
      // An argument's name, made only for a message: "alphas[3]", "a[3]", ...
      const auto name = [k](const char *arg) {
        return std::string(arg) + "[" + std::to_string(k) + "]";
      };
      const auto plural = [&](const char *arg) { return name((std::string(arg) + "s").c_str()); };
      const redist_plan_s::BatchOp &batch_op = plan->batch[k];
      // NULL alphas / betas: alpha = 1, beta = 0 for every operation.
      plan->flight_ops.push_back(operation_for(
          call, batch_op.op, batch_op.type, alphas != nullptr ? alphas[k] : one_of(batch_op.type),
          betas != nullptr ? betas[k] : kZeros.data(), plural));
      const RankPlan &rp = ops[k].plan();
      plan->flight_a[k] = static_cast<const std::byte *>(a != nullptr ? a[k] : nullptr);
      plan->flight_b[k] = static_cast<std::byte *>(b != nullptr ? b[k] : nullptr);
      if (plan->flight_a[k] == nullptr && (!rp.sends.empty() || rp.self.elements > 0))
        throw_argument(call, name("a"), 0,
                       std::string("NULL local array but this rank owns source elements of ") +
                           name("ops"));
      if (plan->flight_b[k] == nullptr && (!rp.recvs.empty() || rp.self.elements > 0))
        throw_argument(call, name("b"), 0,
                       std::string("NULL local array but this rank owns destination elements of ") +
                           name("ops"));
    }
    return Execution{plan->flight_a.data(), plan->flight_b.data(), plan->flight_ops.data()};
  });
}

} // namespace

extern "C" int redist_plan_execute(redist_plan plan, const void *a, void *b) {
  return execute_plan("redist_plan_execute", plan, nullptr, a, nullptr, b, false);
}

extern "C" int redist_plan_execute_op(redist_plan plan, const void *alpha, const void *a,
                                      const void *beta, void *b) {
  return execute_plan("redist_plan_execute_op", plan, alpha, a, beta, b, true);
}

extern "C" int redist_plan_execute_begin(redist_plan plan, const void *a, void *b) {
  return execute_plan("redist_plan_execute_begin", plan, nullptr, a, nullptr, b, false, true);
}

extern "C" int redist_plan_execute_op_begin(redist_plan plan, const void *alpha, const void *a,
                                            const void *beta, void *b) {
  return execute_plan("redist_plan_execute_op_begin", plan, alpha, a, beta, b, true, true);
}

extern "C" int redist_plan_execute_end(redist_plan plan) {
  static const char *call = "redist_plan_execute_end";
  return c_barrier(call, [&] {
    if (plan == nullptr || !plan->executor) throw_argument(call, "plan", 0, "NULL plan");
    if (!plan->executor->in_flight())
      throw_argument(call, "plan", 0,
                     "no execution in flight (redist_plan_execute_begin was not called, or "
                     "failed)");
    try {
      plan->executor->end();
    } catch (...) {
      plan->failed = true;
      plan->flight_ops.clear();
      throw;
    }
    plan->flight_ops.clear();
    // Repaired: made anew before the next execution, on a new communicator (a message may
    // still wait on this one), with its ways decided again.
    plan->failed = plan->executor->left_unmatched() || plan->executor->failed_anywhere();
  });
}

extern "C" int redist_plan_execute_batch(redist_plan plan, const void *const *alphas,
                                         const void *const *a, const void *const *betas,
                                         void *const *b) {
  return execute_batch("redist_plan_execute_batch", plan, alphas, a, betas, b, false);
}

extern "C" int redist_plan_execute_batch_begin(redist_plan plan, const void *const *alphas,
                                               const void *const *a, const void *const *betas,
                                               void *const *b) {
  return execute_batch("redist_plan_execute_batch_begin", plan, alphas, a, betas, b, true);
}

extern "C" int redist_plan_create_batch(MPI_Comm comm, int count, const redist_batch_op *ops,
                                        const redist_options *options, redist_plan *plan) {
  static const char *call = "redist_plan_create_batch";
  return c_barrier(call, [&] {
    if (plan != nullptr) *plan = nullptr;
    const CommPosition position = comm_position(call, comm);
    const int rank = position.rank;
    const int size = position.size;
    std::optional<Error> local;
    long long at = -1; // the operation being checked (-1: the batch's own arguments)
    std::vector<front_end::CallArgs> args;
    std::vector<redist_plan_s::BatchOp> batch;
    try {
      if (plan == nullptr) throw_argument(call, "plan", 0, "NULL output pointer");
      if (count < 1) throw_argument(call, "count", count, "must be >= 1");
      if (ops == nullptr) throw_argument(call, "ops", 0, "NULL array");
      redist_options defaults;
      redist_options_init(&defaults);
      const redist_options &o = options != nullptr ? *options : defaults;
      const ScheduleOptions schedule_opts = schedule_options(call, o);
      // A batch runs all at once: no option is ignored silently.
      if (o.schedule != REDIST_SCHEDULE_AUTO && o.schedule != REDIST_SCHEDULE_ALL_AT_ONCE)
        throw_argument(call, "options->schedule", o.schedule,
                       "a batch runs all at once (REDIST_SCHEDULE_AUTO or "
                       "REDIST_SCHEDULE_ALL_AT_ONCE)");
      if (o.max_concurrent != 0)
        throw_argument(call, "options->max_concurrent", o.max_concurrent,
                       "a batch takes no limit (0)");
      if (o.max_memory != 0)
        throw_argument(call, "options->max_memory", o.max_memory,
                       "a batch takes no memory cap (0)");
      args.reserve(static_cast<std::size_t>(count));
      batch.reserve(static_cast<std::size_t>(count));
      for (at = 0; at < count; ++at) {
        const redist_batch_op &op = ops[at];
        const int kind = enum_value(op.op);
        const int type = enum_value(op.type);
        const int region = enum_value(op.region);
        check_call(call, std::string("ops[") + std::to_string(at) + "].", op.m, op.n, type, op.a,
                   op.b, region, kind, size, rank);
        args.push_back(
            describe(call, op.m, op.n, type, region, 0, *op.a, *op.b, rank, schedule_opts));
        front_end::CallFields<long long> &f = args.back().fields;
        f.operation = operation_field(kind);
        f.digest =
            static_cast<long long>(Fingerprint().add(f.digest).add(kind).value() >> 2); // T or C
        batch.push_back({transfer_of(op.m, op.n, *op.a, *op.b, region, 0, kind), kind, type,
                         op.a->lld, op.b->lld});
      }
    } catch (const Error &e) {
      local = e;
    } catch (const std::bad_alloc &) { // agreed like a bad argument, not returned alone
      local = Error(REDIST_ERR_NO_MEMORY,
                    std::string(call) + ": out of memory while checking the arguments");
    }
    const front_end::BatchAgreement agreed = front_end::agree(
        comm, args, count,
        local ? front_end::batch_error_word(at, front_end::lowest_first(rank, size)) : 0);
    if (local) throw *local;
    if (agreed.error != 0) {
      const long long k = agreed.error_op();
      throw Error(
          REDIST_ERR_REMOTE,
          std::string(call) + (k >= 0 ? std::string(": ops[") + std::to_string(k) + "]" : "") +
              ": an argument is invalid on rank " +
              std::to_string(front_end::lowest_first(static_cast<int>(agreed.error_rank()), size)) +
              " (see its message)");
    }
    if (agreed.count_differs)
      throw Error(REDIST_ERR_MISMATCH, std::string(call) + ": processes passed different count");
    for (std::size_t k = 0; k < agreed.fields.size(); ++k) {
      if (differs(agreed.fields[k])) {
        throw Error(REDIST_ERR_MISMATCH,
                    std::string(call) + ": ops[" + std::to_string(k) +
                        "]: processes passed different op, m, n, type, region, options or "
                        "layouts (all but lld must agree)");
      }
    }
    auto result = std::make_unique<redist_plan_s>();
    result->comm = PlanComm(call, comm);
    front_end::Planned planned = plan_batch(rank, size, result->comm.handle, batch);
    if (planned.status != REDIST_SUCCESS && !planned.here) {
      throw Error(REDIST_ERR_REMOTE, std::string(call) + ": out of memory on rank " +
                                         std::to_string(planned.first) + " while planning");
    }
    if (planned.status != REDIST_SUCCESS)
      throw Error(REDIST_ERR_NO_MEMORY, std::string(call) + ": out of memory while planning");
    result->executor = std::move(planned.executor);
    result->batch = std::move(batch);
    result->options = args.front().options;
    result->rank = rank;
    result->size = size;
    *plan = result.release();
  });
}

extern "C" int redist_plan_create_op(MPI_Comm comm, redist_op op, int64_t m, int64_t n,
                                     redist_type type, const redist_layout *a,
                                     const redist_layout *b, redist_region region,
                                     const redist_options *options, redist_plan *plan) {
  return create_plan("redist_plan_create_op", comm, m, n, enum_value(type), a, b,
                     enum_value(region), 0, options, nullptr, plan, enum_value(op));
}

namespace {

// A redist_darray as an NdLayout; the pointers read are checked here, the values by
// check_nd_transfer (but the grid's size, bounding what `ranks` is read for). `arg`: "a" or
// "b".
NdLayout to_nd_layout(const char *call, const char *arg, const redist_darray &d, int comm_size) {
  const auto field = [&](const char *name) { return std::string(arg) + "->" + name; };
  if (d.ndims < 1 || d.ndims > kMaxDims)
    throw_argument(call, field("ndims"), d.ndims, "must be 1..7");
  if (d.gsizes == nullptr) throw_argument(call, field("gsizes"), 0, "NULL pointer");
  if (d.distribs == nullptr) throw_argument(call, field("distribs"), 0, "NULL pointer");
  if (d.psizes == nullptr) throw_argument(call, field("psizes"), 0, "NULL pointer");
  if ((d.starts == nullptr) != (d.subsizes == nullptr))
    throw_argument(call, field("starts"), 0,
                   "starts and subsizes must both be given or both be NULL");
  NdLayout l;
  const auto n = static_cast<std::size_t>(d.ndims);
  l.dims.resize(n);
  std::size_t positions = 1;
  for (std::size_t k = 0; k < n; ++k) {
    NdDimension &dim = l.dims[k];
    dim.extent = d.gsizes[k];
    dim.nprocs = d.psizes[k];
    dim.darg =
        d.dargs == nullptr || d.dargs[k] == MPI_DISTRIBUTE_DFLT_DARG ? kDefaultDistArg : d.dargs[k];
    const std::string name = field("distribs") + "[" + std::to_string(k) + "]";
    switch (d.distribs[k]) {
    case MPI_DISTRIBUTE_BLOCK:
      dim.kind = Distribution::block;
      break;
    case MPI_DISTRIBUTE_CYCLIC:
      dim.kind = Distribution::cyclic;
      break;
    case MPI_DISTRIBUTE_NONE:
      dim.kind = Distribution::none;
      break;
    case REDIST_DISTRIBUTE_GEN_BLOCK: {
      dim.kind = Distribution::gen_block;
      const std::string blocks = field("gen_blocks") + "[" + std::to_string(k) + "]";
      if (d.gen_blocks == nullptr || d.gen_blocks[k] == nullptr)
        throw_argument(call, blocks, 0, "NULL for a GEN_BLOCK dimension");
      if (dim.nprocs < 1)
        throw_argument(call, field("psizes") + "[" + std::to_string(k) + "]", dim.nprocs,
                       "must be >= 1");
      dim.gen_block.assign(d.gen_blocks[k], d.gen_blocks[k] + dim.nprocs);
      break;
    }
    default:
      throw_argument(call, name, d.distribs[k],
                     "not MPI_DISTRIBUTE_BLOCK, _CYCLIC, _NONE or REDIST_DISTRIBUTE_GEN_BLOCK");
    }
    if (dim.nprocs >= 1) positions *= static_cast<std::size_t>(dim.nprocs);
    if (positions > static_cast<std::size_t>(comm_size))
      throw_argument(call, field("psizes"), dim.nprocs,
                     "the grid has more positions than the communicator's " +
                         std::to_string(comm_size) + " ranks");
  }
  if (d.order == MPI_ORDER_C) {
    l.order = StorageOrder::c;
  } else if (d.order == MPI_ORDER_FORTRAN) {
    l.order = StorageOrder::fortran;
  } else {
    throw_argument(call, field("order"), d.order, "not MPI_ORDER_C or MPI_ORDER_FORTRAN");
  }
  if (d.ranks != nullptr) l.ranks.assign(d.ranks, d.ranks + positions);
  if (d.starts != nullptr) {
    l.starts.assign(d.starts, d.starts + n);
    l.subsizes.assign(d.subsizes, d.subsizes + n);
  }
  if (d.local_extents != nullptr) l.local_extents.assign(d.local_extents, d.local_extents + n);
  return l;
}

// Everything of a layout every process must agree on (all but local_extents).
void add_nd_layout(Fingerprint &f, const NdLayout &l) {
  f.add(l.ndims()).add(static_cast<std::int64_t>(l.order));
  for (const NdDimension &d : l.dims) {
    f.add(static_cast<std::int64_t>(d.kind)).add(d.extent).add(d.darg).add(d.nprocs);
    for (const Index g : d.gen_block)
      f.add(g);
  }
  f.add(static_cast<std::int64_t>(l.ranks.size()));
  for (const int r : l.ranks)
    f.add(r);
  for (const Index x : l.starts)
    f.add(x);
  for (const Index x : l.subsizes)
    f.add(x);
}

int create_nd_plan(const char *call, MPI_Comm comm, int type, const redist_darray *a,
                   const redist_darray *b, const int *perm, const redist_options *options,
                   redist_plan *plan) {
  return c_barrier(call, [&] {
    if (plan != nullptr) *plan = nullptr;
    const CommPosition position = comm_position(call, comm);
    auto t = std::make_shared<NdTransfer>();
    ScheduleOptions schedule_opts;
    agree(comm, call, "type, options, perm or layouts (all but local_extents must agree)", [&] {
      if (plan == nullptr) throw_argument(call, "plan", 0, "NULL output pointer");
      if (type_size(type) == 0) throw_argument(call, "type", type, "unknown redist_type");
      if (a == nullptr) throw_argument(call, "a", 0, "NULL layout");
      if (b == nullptr) throw_argument(call, "b", 0, "NULL layout");
      redist_options defaults;
      redist_options_init(&defaults);
      schedule_opts = schedule_options(call, options != nullptr ? *options : defaults);
      t->src = to_nd_layout(call, "a", *a, position.size);
      t->dst = to_nd_layout(call, "b", *b, position.size);
      if (perm != nullptr) {
        if (t->dst.ndims() != t->src.ndims())
          throw_argument(call, "b->ndims", t->dst.ndims(), "differs from a->ndims");
        t->perm.assign(perm, perm + t->dst.ndims());
      }
      if (const std::string why = check_nd_transfer(*t, position.size, position.rank); !why.empty())
        throw Error(REDIST_ERR_ARGUMENT, std::string(call) + ": " + why);
      Fingerprint f;
      f.add(type);
      add_nd_layout(f, t->src);
      add_nd_layout(f, t->dst);
      for (const int p : t->perm)
        f.add(p);
      f.add(static_cast<std::int64_t>(schedule_opts.strategy))
          .add(schedule_opts.max_concurrent)
          .add(schedule_opts.max_memory);
      // The cost model decides the automatic schedule: it must agree too.
      f.add(std::bit_cast<std::int64_t>(schedule_opts.model.alpha))
          .add(std::bit_cast<std::int64_t>(schedule_opts.model.beta));
      return f.value();
    });
    auto result = std::make_unique<redist_plan_s>();
    result->comm = PlanComm(call, comm);
    front_end::Planned planned = front_end::plan_nd_everywhere(
        result->comm.handle, position.rank, position.size, *t, schedule_opts, type_size(type));
    throw_if_failed(call, planned);
    result->executor = std::move(planned.executor);
    result->options = schedule_opts;
    result->type = type;
    result->nd = std::move(t);
    result->rank = position.rank;
    result->size = position.size;
    *plan = result.release();
  });
}

} // namespace

extern "C" int redist_nd_plan_create(MPI_Comm comm, redist_type type, const redist_darray *a,
                                     const redist_darray *b, const redist_options *options,
                                     redist_plan *plan) {
  return create_nd_plan("redist_nd_plan_create", comm, enum_value(type), a, b, nullptr, options,
                        plan);
}

extern "C" int redist_nd_plan_create_perm(MPI_Comm comm, redist_type type, const redist_darray *a,
                                          const redist_darray *b, const int *perm,
                                          const redist_options *options, redist_plan *plan) {
  return create_nd_plan("redist_nd_plan_create_perm", comm, enum_value(type), a, b, perm, options,
                        plan);
}

extern "C" int redist_plan_destroy(redist_plan *plan) {
  return c_barrier("redist_plan_destroy", [&] {
    if (plan == nullptr || *plan == nullptr) {
      return;
    }
    if ((*plan)->executor && (*plan)->executor->in_flight()) {
      // Completed, as redist_plan_execute_end would (collective as destroy is); its failure
      // does not matter: the plan goes.
      try {
        (*plan)->executor->end();
      } catch (...) {
      }
    }
    (*plan)->executor.reset();
    delete *plan;
    *plan = nullptr;
  });
}

extern "C" int redist_alloc(size_t bytes, void **memory) {
  static const char *call = "redist_alloc";
  return c_barrier(call, [&] {
    if (memory == nullptr) throw_argument(call, "memory", 0, "NULL pointer to the result");
    *memory = nullptr;
    if (bytes == 0) return;
    *memory = single_copy::allocate_shared_array(bytes);
    if (*memory == nullptr) {
      throw Error(REDIST_ERR_NO_MEMORY, std::string(call) + ": no memory file of " +
                                            std::to_string(bytes) +
                                            " bytes: " + std::strerror(errno));
    }
  });
}

extern "C" int redist_free(void *memory) {
  static const char *call = "redist_free";
  return c_barrier(call, [&] {
    if (memory != nullptr && !single_copy::free_shared_array(memory)) {
      throw_argument(call, "memory",
                     static_cast<long long>(reinterpret_cast<std::uintptr_t>(memory)),
                     "not from redist_alloc, or freed already");
    }
  });
}

extern "C" int redist_plan_get_info(redist_plan plan, redist_plan_info *info) {
  static const char *call = "redist_plan_get_info";
  return c_barrier(call, [&] {
    if (plan == nullptr || !plan->executor) throw_argument(call, "plan", 0, "NULL plan");
    if (info == nullptr) throw_argument(call, "info", 0, "NULL output pointer");
    const RankPlan &rp = plan->executor->plan();
    const auto es = static_cast<int64_t>(plan->executor->element_size());
    info->send_peers = static_cast<int64_t>(rp.sends.size());
    info->recv_peers = static_cast<int64_t>(rp.recvs.size());
    info->bytes_sent = rp.elements_sent() * es;
    info->bytes_received = rp.elements_received() * es;
    info->bytes_local = rp.self.elements * es;
    const ScheduleChoice &choice = plan->executor->schedule();
    info->schedule = static_cast<int>(choice.strategy);
    info->steps = choice.stats.steps;
    info->buffer_bytes = static_cast<int64_t>(plan->executor->buffer_bytes());
    info->predicted_seconds = choice.stats.seconds;
  });
}

extern "C" int redist_plan_get_node_info(redist_plan plan, redist_plan_node_info *info) {
  static const char *call = "redist_plan_get_node_info";
  return c_barrier(call, [&] {
    if (plan == nullptr || !plan->executor) throw_argument(call, "plan", 0, "NULL plan");
    if (info == nullptr) throw_argument(call, "info", 0, "NULL output pointer");
    const Executor::NodeBytes bytes = plan->executor->node_bytes();
    info->bytes_sent_inside = bytes.sent_inside;
    info->bytes_sent_across = bytes.sent_across;
    info->bytes_received_inside = bytes.received_inside;
    info->bytes_received_across = bytes.received_across;
    const RankPlan &rp = plan->executor->plan();
    const NodeMap &nodes = plan->executor->nodes();
    info->send_peers_inside = 0;
    for (std::size_t i = 0; i < rp.sends.size(); ++i) {
      info->send_peers_inside += nodes.send_inside(i) ? 1 : 0;
    }
    info->recv_peers_inside = 0;
    for (std::size_t i = 0; i < rp.recvs.size(); ++i) {
      info->recv_peers_inside += nodes.recv_inside(i) ? 1 : 0;
    }
  });
}
