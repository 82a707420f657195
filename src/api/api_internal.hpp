#pragma once
// Shared by the C API and the ScaLAPACK-compatible entries (MPI layer).

#include "block_grid.hpp"
#include "error.hpp"
#include "exec.hpp"
#include "plan.hpp"

#include <mpi.h>

#include <new>
#include <utility>

#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace redist {

/// Which fields of a layout validate_layout checks beyond its shape, blocks, source process
/// and window: its rank map, and this process's lld (which needs the rank map). A layout that
/// only describes a grid (redist_propose_grid_ranks's destination, whose ranks are being
/// chosen) is checked without them.
struct LayoutChecks {
  bool ranks = true;
  bool lld = true;
  /// rsrc / csrc = -1 taken: a matrix replicated over the process rows / columns (every process
  /// row holds all the rows at their global indices), as PBLAS's RSRC_ / CSRC_ = -1.
  bool replicated = false;
};

/// The largest value of a global argument that every process agrees on (2^53 - 1: once carried
/// as doubles, now part of the contract), and the reason given for a larger one.
inline constexpr long long kLargestAgreed = (1LL << 53) - 1;
inline constexpr const char *kAgreedLimit = "must be below 2^53 = 9007199254740992";

/// Check one layout's arguments on this rank; throws REDIST_ERR_ARGUMENT naming
/// `call` and `name` (e.g. "a") and the field ("a->m"; with `ext`, a redist_layout_ext's
/// "a->layout.m" and "a->imb"). `window_m/n` is the copied window.
void validate_layout(const std::string &call, const std::string &name, const redist_layout_ext &l,
                     bool ext, Index window_m, Index window_n, int comm_size, int rank,
                     LayoutChecks checks = {});

/// Throw REDIST_ERR_MPI "<call>: <what> failed" unless code is MPI_SUCCESS.
void check_mpi(int code, const char *call, const char *what);

/// A duplicate of `comm` that returns MPI errors, for the caller to free; REDIST_ERR_MPI
/// naming `call` when MPI_Comm_dup or MPI_Comm_set_errhandler fails (nothing is left then).
/// Collective over comm.
MPI_Comm duplicate_comm(const char *call, MPI_Comm comm);

/// A plan's own duplicate of the caller's communicator (duplicate_comm), so that none of its
/// messages or collectives meets the caller's, nor another plan's; freed with the plan.
struct PlanComm {
  MPI_Comm handle = MPI_COMM_NULL;
  PlanComm() = default;
  /// Collective over comm: the nodes of its ranks learnt first (learn_node_ids), so that the
  /// duplicate inherits them.
  PlanComm(const char *call, MPI_Comm comm);
  PlanComm(PlanComm &&other) noexcept : handle(std::exchange(other.handle, MPI_COMM_NULL)) {}
  PlanComm &operator=(PlanComm &&other) noexcept {
    std::swap(handle, other.handle);
    return *this;
  }
  PlanComm(const PlanComm &) = delete;
  PlanComm &operator=(const PlanComm &) = delete;
  ~PlanComm();
};

/// This process's rank and the size of `comm`; an argument error for MPI_COMM_NULL.
struct CommPosition {
  int rank = 0;
  int size = 0;
};
CommPosition comm_position(const char *call, MPI_Comm comm);

/// Convert a validated C layout (a replicated dimension's source process 0: make_part places
/// its copies).
Layout to_layout(const redist_layout &l);
/// The dimensions a validated C layout replicates (rsrc / csrc = -1).
Replication replication_of(const redist_layout &l);
/// Convert a validated C layout with first blocks and storage order.
Layout to_layout(const redist_layout_ext &l);

/// Run `local_checks` on every rank (it returns a fingerprint of the arguments that must be
/// equal on all ranks), then agree across `comm`: if any rank failed, every rank throws (the
/// failing ones their own error, the others REDIST_ERR_REMOTE naming the first failing
/// rank); if the fingerprints differ, every rank throws REDIST_ERR_MISMATCH with
/// `mismatch_what`. Collective: one front_end::reduce() of three words. For calls without a
/// front_end::CallArgs description (executing a plan, the ring API, calibration).
template <class F>
void agree(MPI_Comm comm, const std::string &call, const char *mismatch_what, F &&local_checks);

void agree_impl(MPI_Comm comm, const std::string &call, std::uint64_t fingerprint,
                const char *mismatch_what, const Error *local_error);

/// The error every other process returns when process `rank` found an argument of `call`
/// invalid (operation `op` of a batch when >= 0; `of`: where `rank` counts, " of ICTXT").
inline Error remote_argument_error(const std::string &call, long long rank, long long op = -1,
                                   const char *of = "") {
  return {REDIST_ERR_REMOTE, call +
                                 (op >= 0 ? ": ops[" + std::to_string(op) + "]" : std::string()) +
                                 ": an argument is invalid on rank " + std::to_string(rank) + of +
                                 " (see its message)"};
}

/// The error of running out of memory while checking `call`'s arguments: agreed like a bad
/// argument, never returned by one process alone.
inline Error out_of_memory_checking(const std::string &call) {
  return {REDIST_ERR_NO_MEMORY, call + ": out of memory while checking the arguments"};
}

template <class F>
void agree(MPI_Comm comm, const std::string &call, const char *mismatch_what, F &&local_checks) {
  std::uint64_t fingerprint = 0;
  try {
    fingerprint = local_checks();
  } catch (const Error &e) {
    agree_impl(comm, call, 0, mismatch_what, &e);
  } catch (const std::bad_alloc &) {
    const Error e = out_of_memory_checking(call);
    agree_impl(comm, call, 0, mismatch_what, &e);
  }
  agree_impl(comm, call, fingerprint, mismatch_what, nullptr);
}

/// FNV-1a over 64-bit words, for fingerprints of arguments that must agree across ranks.
class Fingerprint {
public:
  Fingerprint &add(std::int64_t v) {
    for (int byte = 0; byte < 8; ++byte) {
      hash_ ^= static_cast<std::uint64_t>(v >> (8 * byte)) & 0xffU;
      hash_ *= 0x100000001b3ULL;
    }
    return *this;
  }
  [[nodiscard]] std::uint64_t value() const { return hash_; }

private:
  std::uint64_t hash_ = 0xcbf29ce484222325ULL;
};

} // namespace redist

/// The C API's opaque plan.
struct redist_plan_s {
  redist::PlanComm comm; // its own duplicate
  std::unique_ptr<redist::Executor> executor;
  // A plan whose layouts replicate a matrix over process rows or columns, made in several
  // parts (replica_parts): the replication and the parts, `transfer` before make_part.
  struct Replicated {
    redist::Replication a, b;
    redist::ReplicaParts parts;
    std::size_t element_size = 0; // the executor's is a batch's: 1 (bytes)
  };
  std::optional<Replicated> replicated;
  // What the plan was made from, to make it anew on a fresh duplicate of the communicator
  // after an execution failed on some process (redist_plan_execute).
  redist::Transfer transfer;
  redist::ScheduleOptions options;
  redist::Index lld_a = 1, lld_b = 1;
  int rank = 0, size = 0;
  bool failed = false; // the last execution failed on this process
  // redist_plan_create_op: op (a redist_op) and element type; -1: a copy plan.
  int op = -1;
  int type = 0;
  // The operation(s) of the execution running or in flight (redist_plan_execute_op_begin's
  // alpha and beta; a batch's, one per operation), read by the executor until the end; and a
  // batch's local array pointers, one per operation.
  std::vector<redist::Operation> flight_ops;
  std::vector<const std::byte *> flight_a; // the executor reads them as such (Pieces)
  std::vector<std::byte *> flight_b;
  // redist_plan_create_batch, redist_grid_batch_create: what each operation was made from
  // (empty: not a batch).
  struct BatchOp {
    redist::Transfer transfer;
    int op = 0;   // a redist_op
    int type = 0; // a redist_type
    redist::Index lld_a = 1, lld_b = 1;
    // redist_grid_batch_create: this process's plan of a block grid operation (then
    // `transfer` is unused), shared with the executor; null for a 2-D block-cyclic one.
    std::shared_ptr<const redist::GridRankPlan> grid;
    // A side replicated over process rows or columns: the operation is the executor's next
    // `operations` operations, its parts (set when planned: front_end::BatchMember), else one.
    redist::Replication replicated_a, replicated_b;
    int operations = 1;
  };
  std::vector<BatchOp> batch;
  // redist_nd_plan_create: the N-d transfer (then `transfer` is unused).
  std::shared_ptr<const redist::NdTransfer> nd;
  // redist_grid_plan_create: this process's plan of the block grid transfer (then `transfer`
  // is unused), shared with the executor.
  std::shared_ptr<const redist::GridRankPlan> grid;
};
