// Batches of the C API: redist_plan_create_batch (executed by capi_execute.cpp).

#include "capi_internal.hpp"

#include <bit>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <new>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace redist {

front_end::Planned plan_batch(int rank, int size, MPI_Comm comm,
                              std::vector<redist_plan_s::BatchOp> &batch,
                              std::span<const GridTransfer *const> grid_transfers) {
  std::vector<front_end::BatchMember> members(batch.size());
  for (std::size_t k = 0; k < batch.size(); ++k) {
    const redist_plan_s::BatchOp &op = batch[k];
    front_end::BatchMember &member = members[k];
    member.element_size = static_cast<std::size_t>(type_size(op.type));
    member.grid = op.grid;
    member.grid_transfer = k < grid_transfers.size() ? grid_transfers[k] : nullptr;
    if (!op.grid && member.grid_transfer == nullptr) {
      member.transfer = &op.transfer;
      member.lld_a = op.lld_a;
      member.lld_b = op.lld_b;
      member.replicated_a = op.replicated_a;
      member.replicated_b = op.replicated_b;
    }
  }
  front_end::Planned planned = front_end::plan_batch_everywhere(comm, rank, size, comm, members);
  for (std::size_t k = 0; k < batch.size(); ++k) {
    batch[k].grid = members[k].grid;
    batch[k].operations = members[k].operations;
  }
  return planned;
}

void agree_batch(MPI_Comm comm, const char *call, const CommPosition &position,
                 const std::optional<Error> &local, long long at, int count,
                 std::uint64_t options_print, const std::vector<std::uint64_t> &prints,
                 const char *op_fields) {
  const int order = front_end::lowest_first(position.rank, position.size);
  Fingerprint all;
  for (const std::uint64_t p : prints)
    all.add(static_cast<std::int64_t>(p));
  const auto word = [](std::uint64_t print) { return static_cast<long long>(print >> 2); };
  long long v[7] = {local ? front_end::batch_error_word(at, order) : 0,
                    count,
                    -static_cast<long long>(count),
                    word(options_print),
                    -word(options_print),
                    word(all.value()),
                    -word(all.value())};
  if (front_end::reduce(comm, v, 7) != MPI_SUCCESS)
    throw Error(REDIST_ERR_MPI,
                std::string(call) + ": MPI_Allreduce failed while checking arguments");
  if (local) throw *local;
  if (v[0] != 0)
    throw remote_argument_error(
        call, front_end::lowest_first(front_end::error_order(v[0]), position.size),
        front_end::batch_error_op(v[0]));
  if (v[1] != -v[2])
    throw Error(REDIST_ERR_MISMATCH, std::string(call) + ": processes passed different count");
  if (v[3] != -v[4])
    throw Error(REDIST_ERR_MISMATCH, std::string(call) + ": processes passed different options");
  if (v[5] == -v[6]) return;
  std::vector<long long> each;
  for (const std::uint64_t p : prints) {
    each.push_back(word(p));
    each.push_back(-word(p));
  }
  if (front_end::reduce(comm, each.data(), static_cast<int>(each.size())) != MPI_SUCCESS)
    throw Error(REDIST_ERR_MPI,
                std::string(call) + ": MPI_Allreduce failed while checking arguments");
  std::size_t k = 0;
  while (k + 1 < prints.size() && each[2 * k] == -each[2 * k + 1])
    ++k;
  throw Error(REDIST_ERR_MISMATCH, std::string(call) + ": ops[" + std::to_string(k) +
                                       "]: processes passed different " + op_fields);
}

int create_batch(const char *call, MPI_Comm comm, int count, bool ops_given,
                 const std::function<BatchArg(int)> &op_at, const redist_options *options,
                 redist_plan *plan) {
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
      if (!ops_given) throw_argument(call, "ops", 0, "NULL array");
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
        const BatchArg op = op_at(static_cast<int>(at));
        const int kind = op.op;
        const int type = op.type;
        const int region = op.region;
        const LayoutChecks replicated{true, true, true};
        check_call(call, std::string("ops[") + std::to_string(at) + "].", op.m, op.n, type, op.a,
                   op.b, region, kind, size, rank, replicated, replicated);
        args.push_back(describe(call, op.m, op.n, type, region, 0, op.a.value, op.b.value, rank,
                                schedule_opts));
        front_end::CallFields<long long> &f = args.back().fields;
        f.operation = operation_field(kind);
        f.digest =
            static_cast<long long>(Fingerprint().add(f.digest).add(kind).value() >> 2); // T or C
        batch.push_back({transfer_of(op.m, op.n, op.a.value, op.b.value, region, 0, kind), kind,
                         type, op.a.value.layout.lld, op.b.value.layout.lld, nullptr,
                         replication_of(op.a.value.layout), replication_of(op.b.value.layout)});
      }
    } catch (const Error &e) {
      local = e;
    } catch (const std::bad_alloc &) {
      local = out_of_memory_checking(call);
    }
    // The options are every operation's (describe); each operation's fingerprint covers its
    // fields.
    Fingerprint options_print;
    std::vector<std::uint64_t> prints;
    prints.reserve(args.size());
    for (const front_end::CallArgs &one : args)
      prints.push_back(fingerprint_of(one.fields));
    if (!args.empty()) {
      const ScheduleOptions &o = args.front().options;
      options_print.add(static_cast<std::int64_t>(o.strategy)).add(o.max_concurrent);
      options_print.add(o.max_memory).add(std::bit_cast<std::int64_t>(o.model.alpha));
      options_print.add(std::bit_cast<std::int64_t>(o.model.beta));
    }
    agree_batch(comm, call, position, local, at, count, options_print.value(), prints,
                "op, m, n, type, region, options or layouts (all but lld must agree)");
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

} // namespace redist

using namespace redist;

namespace {

/// The BatchArg of either kind of operation (the ints the C caller passed: any value may arrive).
template <class Op> BatchArg batch_arg(const Op &op) {
  return {enum_value(op.op), enum_value(op.type), enum_value(op.region), op.m, op.n,
          layout_arg(op.a),  layout_arg(op.b)};
}

} // namespace

extern "C" int redist_plan_create_batch(MPI_Comm comm, int count, const redist_batch_op *ops,
                                        const redist_options *options, redist_plan *plan) {
  return create_batch(
      "redist_plan_create_batch", comm, count, ops != nullptr,
      [&](int k) { return batch_arg(ops[k]); }, options, plan);
}

extern "C" int redist_plan_create_batch_ext(MPI_Comm comm, int count,
                                            const redist_batch_op_ext *ops,
                                            const redist_options *options, redist_plan *plan) {
  return create_batch(
      "redist_plan_create_batch_ext", comm, count, ops != nullptr,
      [&](int k) { return batch_arg(ops[k]); }, options, plan);
}
