#pragma once
// The communicators of C API plans (MPI layer). A plan runs on its own duplicate of the
// caller's communicator, so that none of its messages or collectives meets the caller's, nor
// another plan's. MPI_Comm_dup was half of a small plan's creation (a 32 x 32 plan at 2 ranks:
// 7-8 us of 16; issue 18, item 3), so a destroyed plan's duplicate is kept as a spare with the
// caller's communicator (an attribute of it, which MPI_Comm_dup does not copy), and the next
// plan made on that communicator takes it instead of duplicating again.
//
// Every process must take the same spare: a spare's id is agreed when its duplicate is made
// (one more than the largest id any process has seen on that communicator), and a plan takes a
// spare only where every process offers the same id -- its largest -- in one reduction (the
// creation's agreement, for redist_plan_create); where
// they differ (a plan destroyed after a failure on some processes only), it duplicates anew.
// A spare is never shared: a plan owns its communicator until it is destroyed. A plan whose
// last execution failed, or left a message unmatched, frees its communicator instead (a message
// may still wait there). At most 4 per communicator (kSpares); freeing the caller's communicator
// frees its spares, and so does redist_scalapack_clear_cache().

#include <mpi.h>

#include <array>
#include <memory>

namespace redist {

class CommPool;

/// A plan's duplicate of a caller's communicator, fresh or a spare.
struct PlanComm {
  MPI_Comm handle = MPI_COMM_NULL;
  std::shared_ptr<CommPool> pool; ///< where it goes back (null: freed at release)
  long long id = 0;               ///< the same on every process of the communicator
};

/// What this process offers for a plan about to be made on `comm`: its spare of the largest id,
/// reserved out of the pool (nothing frees it meanwhile) until settle() uses it; given back
/// if the offer is destroyed unused. Local.
class CommOffer {
public:
  explicit CommOffer(MPI_Comm comm);
  CommOffer(const CommOffer &) = delete;
  CommOffer &operator=(const CommOffer &) = delete;
  ~CommOffer();

  /// The words to agree on, by their maxima over the communicator: the offered id, its
  /// negation, the largest id this process has seen.
  [[nodiscard]] std::array<long long, 3> words() const;

  /// Collective over the communicator, after the words' maxima are known everywhere (`agreed`):
  /// the spare where every process offered the same one, else a new duplicate (duplicate_comm:
  /// it returns MPI errors; REDIST_ERR_MPI naming `call` when MPI fails). The nodes of the
  /// communicator's ranks are learnt first (learn_node_ids), so that duplicates inherit them.
  PlanComm settle(const char *call, const std::array<long long, 3> &agreed);

private:
  MPI_Comm comm_;
  std::shared_ptr<CommPool> pool_;
  long long offered_ = 0;
  MPI_Comm spare_ = MPI_COMM_NULL;
  long long made_ = 0;
};

/// Collective over `comm`: a CommOffer settled by its own MPI_Allreduce of three words.
PlanComm acquire_plan_comm(const char *call, MPI_Comm comm);

/// Collective, as destroying a plan is: `c` back to its pool where `reusable` (no message of
/// the plan can still wait on it), its caller's communicator still exists and it has room;
/// otherwise MPI_Comm_free. `c` is empty afterwards.
void release_plan_comm(PlanComm &c, bool reusable);

/// Frees every spare of this process (redist_scalapack_clear_cache: local, as the entries'
/// cached communicators are freed; every process must call it at the same point).
void free_spare_comms();

} // namespace redist
