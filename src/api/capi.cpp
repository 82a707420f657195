// The extern "C" API of redist.h: the checks its entries share, plan creation, destroy, the
// plan's information, redist_alloc and redist_free (executions in capi_execute.cpp, batches in
// capi_batch.cpp, N-d plans in capi_nd.cpp, the proposed order of a new grid in
// capi_relabel.cpp). Every body runs inside c_barrier().

#include "capi_internal.hpp"
#include "collective.hpp"
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
#include <tuple>
#include <vector>

namespace redist {

void validate_layout(const std::string &call, const std::string &name, const redist_layout_ext &x,
                     bool ext, Index window_m, Index window_n, int comm_size, int rank,
                     LayoutChecks checks) {
  const redist_layout &l = x.layout;
  const auto arg = [&](const char *field) { return name + (ext ? "->layout." : "->") + field; };
  if (l.m < 0) throw_argument(call, arg("m"), l.m, "global rows must be >= 0");
  if (l.n < 0) throw_argument(call, arg("n"), l.n, "global columns must be >= 0");
  if (l.mb < 1) throw_argument(call, arg("mb"), l.mb, "block size must be >= 1");
  if (l.nb < 1) throw_argument(call, arg("nb"), l.nb, "block size must be >= 1");
  // The first blocks of a redist_layout_ext, limited as the ScaLAPACK entries limit IMB_, INB_.
  for (const auto &[field, value] : {std::pair{"imb", x.imb}, std::pair{"inb", x.inb}}) {
    if (value < 0)
      throw_argument(call, name + "->" + field, value,
                     "first block size must be >= 1 (0 = the block size)");
    if (value > kLargestAgreed) throw_argument(call, name + "->" + field, value, kAgreedLimit);
  }
  if (x.order != REDIST_ORDER_COLUMN_MAJOR && x.order != REDIST_ORDER_ROW_MAJOR)
    throw_argument(call, name + "->order", x.order,
                   "unknown redist_order (REDIST_ORDER_COLUMN_MAJOR = 0 or "
                   "REDIST_ORDER_ROW_MAJOR = 1)");
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
  const std::string range =
      checks.replicated ? "must be -1 (replicated) or in [0, " : "must be in [0, ";
  if (!(checks.replicated && l.rsrc == -1) && (l.rsrc < 0 || l.rsrc >= l.nprow))
    throw_argument(call, arg("rsrc"), l.rsrc, range + "nprow)");
  if (!(checks.replicated && l.csrc == -1) && (l.csrc < 0 || l.csrc >= l.npcol))
    throw_argument(call, arg("csrc"), l.csrc, range + "npcol)");
  if (checks.ranks) {
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
  if (!checks.ranks || !checks.lld) return;
  const Layout layout = to_layout(x);
  int pr = 0;
  int pc = 0;
  if (layout.grid.find(rank, pr, pc)) {
    // lld strides over the local rows (column-major) or the local columns (row-major), each
    // counted with the first block.
    const bool row_major = layout.row_major;
    const Replication replicated = replication_of(l);
    const Index local_rows = replicated.rows ? l.m : layout.rows.local_extent(pr);
    const Index local_cols = replicated.cols ? l.n : layout.cols.local_extent(pc);
    const Index inner = std::max<Index>(1, row_major ? local_cols : local_rows);
    const Index outer = std::max<Index>(1, row_major ? local_rows : local_cols);
    const char *inner_name = row_major ? "local columns" : "local rows";
    const char *outer_name = row_major ? "local rows" : "local columns";
    if (l.lld < inner) {
      throw_argument(call, arg("lld"), l.lld,
                     std::string("must be >= max(1, ") + inner_name +
                         ") = " + std::to_string(inner) + " on rank " + std::to_string(rank));
    }
    // The local array's elements, lld times the local columns (rows, row-major), are offsets:
    // they must be an Index (of 16-byte elements, so that byte offsets are too).
    if (l.lld > INT64_MAX / 16 / outer) {
      throw_argument(call, arg("lld"), l.lld,
                     "lld times the " + std::to_string(outer) + " " + outer_name +
                         " must be below 2^59 on rank " + std::to_string(rank));
    }
  }
}

Layout to_layout(const redist_layout &l) {
  Layout out;
  out.rows = {l.m, l.mb, l.nprow, std::max(l.rsrc, 0)};
  out.cols = {l.n, l.nb, l.npcol, std::max(l.csrc, 0)};
  out.grid.nprow = l.nprow;
  out.grid.npcol = l.npcol;
  out.grid.ranks.assign(l.ranks, l.ranks + static_cast<std::size_t>(l.nprow) * l.npcol);
  out.i = l.i;
  out.j = l.j;
  return out;
}

Replication replication_of(const redist_layout &l) {
  return {l.rsrc == -1, l.csrc == -1};
}

Layout to_layout(const redist_layout_ext &l) {
  Layout out = to_layout(l.layout);
  out.rows.first_block = l.imb;
  out.cols.first_block = l.inb;
  out.row_major = l.order == REDIST_ORDER_ROW_MAJOR;
  return out;
}

LayoutArg layout_arg(const redist_layout *l) {
  LayoutArg out;
  if (l != nullptr) out = {{*l, 0, 0, REDIST_ORDER_COLUMN_MAJOR}, true, false};
  return out;
}

LayoutArg layout_arg(const redist_layout_ext *l) {
  LayoutArg out;
  out.ext = true;
  if (l != nullptr) {
    out.value = *l;
    out.given = true;
  }
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
    throw remote_argument_error(call, front_end::lowest_first(front_end::error_order(v[0]), size));
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
  check_mpi(collective::duplicate(comm, &own), call, "MPI_Comm_idup");
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

namespace {

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

front_end::CallArgs describe(const char *call, int64_t m, int64_t n, int type, int region,
                             int unit_diag, const redist_layout_ext &a, const redist_layout_ext &b,
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
  for (const auto &[x, fields, position] :
       {std::tuple{&a, &f.a, &args.a}, std::tuple{&b, &f.b, &args.b}}) {
    const redist_layout *l = &x->layout;
    // A first block of the block size is none (imb 0 says so too): both agree as mb.
    *fields = {l->m,
               l->n,
               l->mb,
               l->nb,
               l->rsrc,
               l->csrc,
               l->i,
               l->j,
               l->nprow,
               l->npcol,
               x->imb != 0 ? x->imb : l->mb,
               x->inb != 0 ? x->inb : l->nb,
               x->order};
    const Layout layout = to_layout(*x);
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
  for (const redist_layout *l : {&a.layout, &b.layout}) {
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

namespace {

bool transposes(int op) {
  return op == REDIST_OP_T || op == REDIST_OP_C;
}

} // namespace

void check_call(const char *call, const std::string &prefix, int64_t m, int64_t n, int type,
                const LayoutArg &a, const LayoutArg &b, int region, int op, int size, int rank,
                LayoutChecks a_checks, LayoutChecks b_checks) {
  if (m < 0) throw_argument(call, prefix + "m", m, "must be >= 0");
  if (n < 0) throw_argument(call, prefix + "n", n, "must be >= 0");
  if (type_size(type) == 0) throw_argument(call, prefix + "type", type, "unknown redist_type");
  if (region != REDIST_REGION_FULL && region != REDIST_REGION_UPPER &&
      region != REDIST_REGION_LOWER)
    throw_argument(call, prefix + "region", region, "unknown redist_region");
  if (op != -1 && op != REDIST_OP_N && !transposes(op))
    throw_argument(call, prefix + "op", op, "unknown redist_op");
  if (!a.given) throw_argument(call, prefix + "a", 0, "NULL layout");
  if (!b.given) throw_argument(call, prefix + "b", 0, "NULL layout");
  const bool transposed = transposes(op);
  validate_layout(call, prefix + "a", a.value, a.ext, transposed ? n : m, transposed ? m : n, size,
                  rank, a_checks);
  validate_layout(call, prefix + "b", b.value, b.ext, m, n, size, rank, b_checks);
}

Transfer transfer_of(int64_t m, int64_t n, const redist_layout_ext &a, const redist_layout_ext &b,
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

long long operation_field(int op) {
  return op == -1         ? front_end::kCopy
         : transposes(op) ? front_end::kOperationTransposed
                          : front_end::kOperationN;
}

std::uint64_t fingerprint_of(front_end::CallFields<long long> fields) {
  Fingerprint f;
  front_end::each_field([&](front_end::Arg, const char *, long long v) { f.add(v); }, fields);
  return f.value();
}

void throw_if_failed(const char *call, const front_end::Planned &planned) {
  if (planned.status != REDIST_SUCCESS && !planned.here) {
    throw remote_argument_error(call, planned.first);
  }
  if (planned.status == REDIST_ERR_NO_MEMORY)
    throw Error(REDIST_ERR_NO_MEMORY, std::string(call) + ": out of memory while planning");
  if (planned.status != REDIST_SUCCESS)
    throw Error(REDIST_ERR_ARGUMENT, std::string(call) + ": argument options: " + planned.why);
}

} // namespace redist

namespace {

// type and region are the ints the C caller passed (enum_value): any value may arrive.
// op: -1 for a copy, else the redist_op of redist_plan_create_op (any int the caller passed).
// a, b: the layouts of either kind (layout_arg), read once.
int create_plan(const char *call, MPI_Comm comm, int64_t m, int64_t n, int type, const LayoutArg &a,
                const LayoutArg &b, int region, int unit_diag, const redist_options *options,
                const redist_calibration *levels, redist_plan *plan, int op = -1) {
  return c_barrier(call, [&] {
    if (plan != nullptr) *plan = nullptr;
    const CommPosition position = comm_position(call, comm);
    const int rank = position.rank;
    const int size = position.size;
    front_end::CallArgs args;
    agree(comm, call, "m, n, type, region, unit_diag, options or layouts (all but lld must agree)",
          [&] {
            if (plan == nullptr) throw_argument(call, "plan", 0, "NULL output pointer");
            const LayoutChecks replicated{true, true, true};
            check_call(call, "", m, n, type, a, b, region, op, size, rank, replicated, replicated);
            redist_options defaults;
            redist_options_init(&defaults);
            ScheduleOptions schedule_opts =
                schedule_options(call, options != nullptr ? *options : defaults);
            if (levels != nullptr) apply_levels(call, *levels, schedule_opts);
            args = describe(call, m, n, type, region, unit_diag, a.value, b.value, rank,
                            schedule_opts);
            args.fields.operation = operation_field(op);
            return fingerprint_of(args.fields);
          });
    Transfer t = transfer_of(m, n, a.value, b.value, region, unit_diag, op);
    auto result = std::make_unique<redist_plan_s>();
    result->comm = PlanComm(call, comm);
    const Replication replicated_a = replication_of(a.value.layout);
    const Replication replicated_b = replication_of(b.value.layout);
    ReplicaParts parts;
    front_end::Planned planned = front_end::plan_replicated_everywhere(
        result->comm.handle, rank, size, result->comm.handle, t, replicated_a, replicated_b,
        args.options, args.element_size, a.value.layout.lld, b.value.layout.lld, true, parts);
    if (parts.total() > 1)
      result->replicated =
          redist_plan_s::Replicated{replicated_a, replicated_b, parts, args.element_size};
    throw_if_failed(call, planned);
    result->executor = std::move(planned.executor);
    result->op = op;
    result->type = type;
    result->transfer = std::move(t);
    result->options = args.options;
    result->lld_a = a.value.layout.lld;
    result->lld_b = b.value.layout.lld;
    result->rank = rank;
    result->size = size;
    *plan = result.release();
  });
}

} // namespace

extern "C" int redist_plan_create(MPI_Comm comm, int64_t m, int64_t n, redist_type type,
                                  const redist_layout *a, const redist_layout *b,
                                  redist_region region, int unit_diag, redist_plan *plan) {
  return create_plan("redist_plan_create", comm, m, n, enum_value(type), layout_arg(a),
                     layout_arg(b), enum_value(region), unit_diag, nullptr, nullptr, plan);
}

extern "C" int redist_plan_create_opt(MPI_Comm comm, int64_t m, int64_t n, redist_type type,
                                      const redist_layout *a, const redist_layout *b,
                                      redist_region region, int unit_diag,
                                      const redist_options *options, redist_plan *plan) {
  return create_plan("redist_plan_create_opt", comm, m, n, enum_value(type), layout_arg(a),
                     layout_arg(b), enum_value(region), unit_diag, options, nullptr, plan);
}

extern "C" int redist_plan_create_calibrated(MPI_Comm comm, int64_t m, int64_t n, redist_type type,
                                             const redist_layout *a, const redist_layout *b,
                                             redist_region region, int unit_diag,
                                             const redist_options *options,
                                             const redist_calibration *levels, redist_plan *plan) {
  return create_plan("redist_plan_create_calibrated", comm, m, n, enum_value(type), layout_arg(a),
                     layout_arg(b), enum_value(region), unit_diag, options, levels, plan);
}

extern "C" int redist_plan_create_op(MPI_Comm comm, redist_op op, int64_t m, int64_t n,
                                     redist_type type, const redist_layout *a,
                                     const redist_layout *b, redist_region region,
                                     const redist_options *options, redist_plan *plan) {
  return create_plan("redist_plan_create_op", comm, m, n, enum_value(type), layout_arg(a),
                     layout_arg(b), enum_value(region), 0, options, nullptr, plan, enum_value(op));
}

extern "C" int redist_plan_create_ext(MPI_Comm comm, int64_t m, int64_t n, redist_type type,
                                      const redist_layout_ext *a, const redist_layout_ext *b,
                                      redist_region region, int unit_diag,
                                      const redist_options *options, redist_plan *plan) {
  return create_plan("redist_plan_create_ext", comm, m, n, enum_value(type), layout_arg(a),
                     layout_arg(b), enum_value(region), unit_diag, options, nullptr, plan);
}

extern "C" int redist_plan_create_op_ext(MPI_Comm comm, redist_op op, int64_t m, int64_t n,
                                         redist_type type, const redist_layout_ext *a,
                                         const redist_layout_ext *b, redist_region region,
                                         const redist_options *options, redist_plan *plan) {
  return create_plan("redist_plan_create_op_ext", comm, m, n, enum_value(type), layout_arg(a),
                     layout_arg(b), enum_value(region), 0, options, nullptr, plan, enum_value(op));
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
