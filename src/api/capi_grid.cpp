// Block grid plans of the C API: redist_grid_plan_create (block_grid.hpp's transfers between
// two block grids, or a block grid and a 2-D block-cyclic layout) and redist_grid_batch_create
// (a batch of them, 2-D block-cyclic pairs allowed), one check of an operation for both.

#include "capi_internal.hpp"

#include <algorithm>
#include <bit>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <new>
#include <optional>
#include <string>
#include <utility>
#include <vector>

using namespace redist;

namespace {

/// One side of the call as this process sees it: a block grid (its owners read from the
/// caller's array while the plan is made) or a 2-D block-cyclic layout.
struct Side {
  bool is_grid = false;
  BlockGrid grid;
  Layout cyclic;
  redist_layout_ext cyclic_arg{}; // the caller's block-cyclic layout (its ranks not copied)
  Index lld = 1;
};

/// The caller's block grid of side `arg` ("a" or "b"): pointers, counts and owners checked
/// here (the splits, window and local blocks by check_grid_transfer and check_placement), and
/// everything every process must agree on added to `f`.
BlockGrid to_block_grid(const char *call, const std::string &arg, const redist_block_grid &g,
                        int comm_size, Fingerprint &f) {
  const auto name = [&](const std::string &field) { return arg + "->" + field; };
  if (g.block_rows < 1) throw_argument(call, name("block_rows"), g.block_rows, "must be >= 1");
  if (g.block_cols < 1) throw_argument(call, name("block_cols"), g.block_cols, "must be >= 1");
  if (g.block_rows > INT64_MAX / g.block_cols)
    throw_argument(call, name("block_cols"), g.block_cols,
                   "block_rows * block_cols must be below 2^63");
  if (g.row_splits == nullptr) throw_argument(call, name("row_splits"), 0, "NULL pointer");
  if (g.col_splits == nullptr) throw_argument(call, name("col_splits"), 0, "NULL pointer");
  if (g.owners == nullptr) throw_argument(call, name("owners"), 0, "NULL pointer");
  if (g.row_major != 0 && g.row_major != 1)
    throw_argument(call, name("row_major"), g.row_major, "must be 0 or 1");
  if (g.local_count < 0) throw_argument(call, name("local_count"), g.local_count, "must be >= 0");
  if (g.local_count > 0 && g.local == nullptr)
    throw_argument(call, name("local"), 0, "NULL pointer with local_count > 0");
  BlockGrid out;
  out.row_splits.assign(g.row_splits, g.row_splits + g.block_rows + 1);
  out.col_splits.assign(g.col_splits, g.col_splits + g.block_cols + 1);
  if (g.m < 0) throw_argument(call, name("m"), g.m, "global rows must be >= 0");
  if (g.n < 0) throw_argument(call, name("n"), g.n, "global columns must be >= 0");
  if (out.row_splits.back() != g.m)
    throw_argument(call, name("row_splits[" + std::to_string(g.block_rows) + "]"),
                   out.row_splits.back(), "the last split must be m = " + std::to_string(g.m));
  if (out.col_splits.back() != g.n)
    throw_argument(call, name("col_splits[" + std::to_string(g.block_cols) + "]"),
                   out.col_splits.back(), "the last split must be n = " + std::to_string(g.n));
  const Index blocks = g.block_rows * g.block_cols;
  f.add(g.m).add(g.n).add(g.block_rows).add(g.block_cols).add(g.row_major).add(g.i).add(g.j);
  for (const Index s : out.row_splits)
    f.add(s);
  for (const Index s : out.col_splits)
    f.add(s);
  for (Index k = 0; k < blocks; ++k) {
    const int owner = g.owners[k];
    if (owner < 0 || owner >= comm_size)
      throw_argument(call, name("owners[" + std::to_string(k) + "]"), owner,
                     "not a rank of the communicator (its size is " + std::to_string(comm_size) +
                         ")");
    f.add(owner);
  }
  out.owner = [owners = g.owners, rows = g.block_rows](Index r, Index c) {
    return owners[r + c * rows];
  };
  out.row_major = g.row_major != 0;
  for (Index k = 0; k < g.local_count; ++k) {
    const redist_grid_block &b = g.local[k];
    out.local.push_back({b.block_row, b.block_col, b.offset, b.ld});
  }
  out.i = g.i;
  out.j = g.j;
  return out;
}

/// Side `arg` of the call, checked as far as it alone can be; window_m x window_n its window.
Side side_of(const char *call, const char *arg, const redist_any_layout *l, Index window_m,
             Index window_n, const CommPosition &position, Fingerprint &f) {
  const std::string name(arg);
  if (l == nullptr) throw_argument(call, name, 0, "NULL layout");
  Side side;
  const int kind = enum_value(l->kind);
  f.add(kind);
  if (kind == REDIST_LAYOUT_BLOCK_GRID) {
    if (l->grid == nullptr) throw_argument(call, name + "->grid", 0, "NULL pointer");
    side.is_grid = true;
    side.grid = to_block_grid(call, name + "->grid", *l->grid, position.size, f);
    return side;
  }
  if (kind != REDIST_LAYOUT_BLOCK_CYCLIC)
    throw_argument(call, name + "->kind", kind,
                   "not REDIST_LAYOUT_BLOCK_CYCLIC or REDIST_LAYOUT_BLOCK_GRID");
  if (l->cyclic == nullptr) throw_argument(call, name + "->cyclic", 0, "NULL pointer");
  const redist_layout_ext &x = *l->cyclic;
  const redist_layout &c = x.layout;
  validate_layout(call, name + "->cyclic", x, true, window_m, window_n, position.size,
                  position.rank);
  side.cyclic = to_layout(x);
  side.cyclic_arg = x;
  side.lld = c.lld;
  f.add(c.m).add(c.n).add(c.mb).add(c.nb).add(c.nprow).add(c.npcol).add(c.rsrc).add(c.csrc);
  f.add(c.i).add(c.j).add(x.imb).add(x.inb).add(x.order);
  for (long long k = 0; k < static_cast<long long>(c.nprow) * c.npcol; ++k)
    f.add(c.ranks[k]);
  return side;
}

/// The transfer between the two sides.
GridTransfer transfer_between(const Side &a, const Side &b, Index m, Index n, bool transposed) {
  GridTransfer t;
  t.src = a.is_grid ? &a.grid : nullptr;
  t.dst = b.is_grid ? &b.grid : nullptr;
  t.src_cyclic = a.is_grid ? nullptr : &a.cyclic;
  t.dst_cyclic = b.is_grid ? nullptr : &b.cyclic;
  t.src_lld = a.lld;
  t.dst_lld = b.lld;
  t.m = m;
  t.n = n;
  t.transposed = transposed;
  return t;
}

/// check_grid_transfer's reason, its side ("a->...") named as the caller's argument
/// ("a->grid->..." or "a->cyclic->..."), after `prefix` ("ops[2]." in a batch).
std::string named(const std::string &why, const std::string &prefix, const Side &a, const Side &b) {
  for (const auto &[arrow, side] : {std::pair{"a->", &a}, std::pair{"b->", &b}}) {
    if (why.starts_with(arrow)) {
      return prefix + arrow + std::string(side->is_grid ? "grid->" : "cyclic->") + why.substr(3);
    }
  }
  return prefix + why;
}

/// The schedule options of the call: all at once (block grid plans have no other schedule).
ScheduleOptions grid_schedule_options(const char *call, const redist_options *options,
                                      Fingerprint &f) {
  redist_options defaults;
  redist_options_init(&defaults);
  const ScheduleOptions o = schedule_options(call, options != nullptr ? *options : defaults);
  if (o.strategy != Strategy::automatic && o.strategy != Strategy::all_at_once)
    throw_argument(call, "options->schedule", static_cast<long long>(o.strategy),
                   "block grid plans run all at once: REDIST_SCHEDULE_AUTO or "
                   "REDIST_SCHEDULE_ALL_AT_ONCE");
  f.add(static_cast<std::int64_t>(o.strategy)).add(o.max_concurrent).add(o.max_memory);
  f.add(std::bit_cast<std::int64_t>(o.model.alpha)).add(std::bit_cast<std::int64_t>(o.model.beta));
  return o;
}

/// One operation of a call, checked as far as this process can: its sides and window.
struct GridOp {
  int op = 0;
  int type = 0;
  Index m = 0;
  Index n = 0;
  bool transposed = false;
  Side a;
  Side b;

  [[nodiscard]] GridTransfer transfer() const { return transfer_between(a, b, m, n, transposed); }
  [[nodiscard]] bool cyclic_pair() const { return !a.is_grid && !b.is_grid; }
};

/// The checks of one operation (redist_grid_plan_create's, or a batch's ops[k] with `prefix`
/// "ops[k]." before each argument's name), everything every process must agree on added to
/// `f`. Two block-cyclic sides only where `cyclic_pair` (a batch).
GridOp check_grid_op(const char *call, const std::string &prefix, int op, Index m, Index n,
                     int type, const redist_any_layout *a, const redist_any_layout *b,
                     const CommPosition &position, bool cyclic_pair, Fingerprint &f) {
  GridOp out;
  out.op = op;
  out.type = type;
  out.m = m;
  out.n = n;
  out.transposed = op == REDIST_OP_T || op == REDIST_OP_C;
  if (op != REDIST_OP_N && !out.transposed)
    throw_argument(call, prefix + "op", op, "unknown redist_op");
  if (m < 0) throw_argument(call, prefix + "m", m, "must be >= 0");
  if (n < 0) throw_argument(call, prefix + "n", n, "must be >= 0");
  if (type_size(type) == 0) throw_argument(call, prefix + "type", type, "unknown redist_type");
  f.add(op).add(m).add(n).add(type);
  const Index am = out.transposed ? n : m;
  const Index an = out.transposed ? m : n;
  out.a = side_of(call, (prefix + "a").c_str(), a, am, an, position, f);
  out.b = side_of(call, (prefix + "b").c_str(), b, m, n, position, f);
  if (out.cyclic_pair()) {
    if (!cyclic_pair)
      throw_argument(call, prefix + "a->kind", enum_value(a->kind),
                     "one side must be a block grid (two block-cyclic layouts: "
                     "redist_plan_create_op_ext)");
    return out; // validate_layout checked both sides (redist_plan_create_op_ext's checks)
  }
  const GridTransfer t = out.transfer();
  std::string why = check_grid_transfer(t, position.rank, position.size);
  const auto es = static_cast<std::size_t>(type_size(type));
  if (why.empty() && out.a.is_grid) why = check_local_placement(out.a.grid, es, "a->");
  if (why.empty() && out.b.is_grid) why = check_local_placement(out.b.grid, es, "b->");
  if (!why.empty())
    throw Error(REDIST_ERR_ARGUMENT, std::string(call) + ": " + named(why, prefix, out.a, out.b));
  return out;
}

/// The plan's fields every kind of plan has, and the plan returned through `plan`.
void finish_plan(std::unique_ptr<redist_plan_s> result, const ScheduleOptions &options,
                 const CommPosition &position, redist_plan *plan) {
  result->options = options;
  result->rank = position.rank;
  result->size = position.size;
  *plan = result.release();
}

} // namespace

extern "C" int redist_grid_plan_create(MPI_Comm comm, redist_op op_enum, int64_t m, int64_t n,
                                       redist_type type_enum, const redist_any_layout *a,
                                       const redist_any_layout *b, const redist_options *options,
                                       redist_plan *plan) {
  static const char *call = "redist_grid_plan_create";
  const int op = enum_value(op_enum);
  const int type = enum_value(type_enum);
  return c_barrier(call, [&] {
    if (plan != nullptr) *plan = nullptr;
    const CommPosition position = comm_position(call, comm);
    GridOp checked;
    ScheduleOptions schedule_opts;
    agree(comm, call, "m, n, op, type, options or layouts (all but local blocks must agree)", [&] {
      if (plan == nullptr) throw_argument(call, "plan", 0, "NULL output pointer");
      Fingerprint f;
      schedule_opts = grid_schedule_options(call, options, f);
      checked = check_grid_op(call, "", op, m, n, type, a, b, position, false, f);
      return f.value();
    });
    auto result = std::make_unique<redist_plan_s>();
    result->comm = PlanComm(call, comm);
    const GridTransfer t = checked.transfer();
    front_end::Planned planned =
        front_end::plan_grid_everywhere(result->comm.handle, position.rank, position.size, &t,
                                        result->grid, static_cast<std::size_t>(type_size(type)));
    throw_if_failed(call, planned);
    result->executor = std::move(planned.executor);
    result->op = op;
    result->type = type;
    finish_plan(std::move(result), schedule_opts, position, plan);
  });
}

namespace {

/// The batch's operations as the plan keeps them, and the block grid transfers to plan.
std::vector<redist_plan_s::BatchOp> batch_ops(const std::vector<GridOp> &checked,
                                              std::vector<GridTransfer> &transfers,
                                              std::vector<const GridTransfer *> &pointers) {
  std::vector<redist_plan_s::BatchOp> out(checked.size());
  transfers.resize(checked.size());
  pointers.assign(checked.size(), nullptr);
  for (std::size_t k = 0; k < checked.size(); ++k) {
    const GridOp &op = checked[k];
    out[k].op = op.op;
    out[k].type = op.type;
    if (op.cyclic_pair()) {
      out[k].transfer =
          transfer_of(op.m, op.n, op.a.cyclic_arg, op.b.cyclic_arg, REDIST_REGION_FULL, 0, op.op);
      out[k].lld_a = op.a.lld;
      out[k].lld_b = op.b.lld;
    } else {
      transfers[k] = op.transfer();
      pointers[k] = &transfers[k];
    }
  }
  return out;
}

} // namespace

extern "C" int redist_grid_batch_create(MPI_Comm comm, int count, const redist_grid_batch_op *ops,
                                        const redist_options *options, redist_plan *plan) {
  static const char *call = "redist_grid_batch_create";
  return c_barrier(call, [&] {
    if (plan != nullptr) *plan = nullptr;
    const CommPosition position = comm_position(call, comm);
    std::vector<GridOp> checked;
    std::vector<std::uint64_t> prints;
    ScheduleOptions schedule_opts;
    Fingerprint options_print;
    std::optional<Error> local;
    long long at = -1; // the operation being checked (-1: the batch's own arguments)
    try {
      if (plan == nullptr) throw_argument(call, "plan", 0, "NULL output pointer");
      if (count < 1) throw_argument(call, "count", count, "must be >= 1");
      if (ops == nullptr) throw_argument(call, "ops", 0, "NULL array");
      schedule_opts = grid_schedule_options(call, options, options_print);
      checked.reserve(static_cast<std::size_t>(count));
      prints.reserve(static_cast<std::size_t>(count));
      for (at = 0; at < count; ++at) {
        const redist_grid_batch_op &o = ops[at];
        Fingerprint f;
        checked.push_back(check_grid_op(call, "ops[" + std::to_string(at) + "].", enum_value(o.op),
                                        o.m, o.n, enum_value(o.type), o.a, o.b, position, true, f));
        prints.push_back(f.value());
      }
    } catch (const Error &e) {
      local = e;
    } catch (const std::bad_alloc &) {
      local = out_of_memory_checking(call);
    }
    agree_batch(comm, call, position, local, at, count, options_print.value(), prints,
                "op, m, n, type or layouts (all but local blocks and lld must agree)");
    auto result = std::make_unique<redist_plan_s>();
    result->comm = PlanComm(call, comm);
    std::vector<GridTransfer> transfers;
    std::vector<const GridTransfer *> pointers;
    result->batch = batch_ops(checked, transfers, pointers);
    front_end::Planned planned =
        plan_batch(position.rank, position.size, result->comm.handle, result->batch, pointers);
    throw_if_failed(call, planned);
    result->executor = std::move(planned.executor);
    finish_plan(std::move(result), schedule_opts, position, plan);
  });
}
