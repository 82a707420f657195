// The executions of the C API's plans: redist_plan_execute and its _op, _begin, _end and
// _batch forms. Every body runs inside c_barrier().

#include "capi_internal.hpp"

#include <array>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <optional>
#include <span>
#include <string>
#include <utility>

using namespace redist;

namespace {

/// After an execution failed on some process: the plan made anew on every process, on a
/// fresh duplicate of its communicator (messages of the failed execution may still wait on
/// the old one; its executor's state may be half-way). Collective; every process calls it
/// (the decision was agreed). On failure the plan stays marked as failed.
void make_anew(const char *call, redist_plan_s &plan) {
  PlanComm fresh(call, plan.comm.handle);
  front_end::Planned planned =
      plan.grid ? front_end::plan_grid_everywhere(fresh.handle, plan.rank, plan.size, nullptr,
                                                  plan.grid, plan.executor->element_size())
      : plan.replicated
          ? front_end::plan_parts_everywhere(fresh.handle, plan.rank, plan.size, fresh.handle,
                                             plan.transfer, plan.replicated->a, plan.replicated->b,
                                             plan.replicated->parts, plan.replicated->element_size,
                                             plan.lld_a, plan.lld_b)
      : plan.nd ? front_end::plan_nd_everywhere(fresh.handle, plan.rank, plan.size, *plan.nd,
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
namespace {

/// A refusal of this thread's next execution call by a language module
/// (redist_internal_refuse_next_execution()).
thread_local std::string module_refusal;

} // namespace

template <class Check>
int run_execution(const char *call, redist_plan plan, bool split, Check &&check) {
  std::string refused;
  refused.swap(module_refusal);
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
      if (!refused.empty()) throw Error(REDIST_ERR_ARGUMENT, refused);
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
      throw remote_argument_error(
          call, front_end::lowest_first(front_end::error_order(agreed), plan->size),
          batch ? front_end::batch_error_op(agreed) : -1);
    };
    // No agreement of its own where the executor can carry the check (defers(): every
    // message through its buffers; and the last execution clean everywhere, which every
    // process learnt in its agreement): its agreement after the exchange, before anything is
    // written to b. Otherwise one agreement first: the arguments of every process, and
    // whether the last execution failed anywhere (then the plan is made anew everywhere
    // before any data moves). A split execution checks first: its errors appear at the begin.
    const bool deferred = !split && plan->executor->defers() && !plan->executor->failed_anywhere();
    // The check's second round stays in flight during the execution (collective.hpp).
    collective::Confirmation confirmation;
    if (!deferred) {
      if (plan->executor->agree(v, 2, &confirmation) != MPI_SUCCESS)
        throw Error(REDIST_ERR_MPI,
                    std::string(call) + ": MPI_Iallreduce failed twice while checking arguments");
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
    std::size_t next = 0; // the executor's first operation of ops[k] (its parts)
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
      bool reads = false;
      bool writes = false;
      for (int part = 0; part < batch_op.operations; ++part) {
        const RankPlan &rp = ops[next++].plan();
        reads = reads || !rp.sends.empty() || rp.self.elements > 0;
        writes = writes || !rp.recvs.empty() || rp.self.elements > 0;
      }
      plan->flight_a[k] = static_cast<const std::byte *>(a != nullptr ? a[k] : nullptr);
      plan->flight_b[k] = static_cast<std::byte *>(b != nullptr ? b[k] : nullptr);
      if (plan->flight_a[k] == nullptr && reads)
        throw_argument(call, name("a"), 0,
                       std::string("NULL local array but this rank owns source elements of ") +
                           name("ops"));
      if (plan->flight_b[k] == nullptr && writes)
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

// Not in the public headers: the Fortran module's (fortran/redist_fortran_support.h). The next
// execution call of this thread fails with `message` as an invalid argument of this process
// would, agreed with the other processes as any argument error (so a begin fails on every
// process, nothing posted).
extern "C" void redist_internal_refuse_next_execution(const char *message) {
  module_refusal = message != nullptr && message[0] != '\0' ? message : "refused";
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
