#pragma once
// The agreements of a call: the maximum of a few words over a communicator's ranks (the front
// end's on a cache hit, the executor's after the exchange). MPI_Allreduce, or, once shared
// (share()) where every rank is on one node, cache lines in memory the ranks share
// (single_copy::SharedLines): redist_bench --small measured a 5-word agreement that way at
// 0.6-0.8 us against MPI_Allreduce's 0.9-1.3 us at 2 ranks, 3.6-4.2 us against 7.7-7.9 us at 4
// (docs/performance.md, "Agreements inside a node").
//
// A rank waiting for the others yields its processor every SharedLines::kSpinsBeforeIdle checks
// of their lines, and now and then calls MPI_Iprobe: a peer still in an MPI call of its own
// before the agreement (a rendezvous send to this rank) may need this rank's progress, as it
// would get it inside MPI_Allreduce.

#include "single_copy.hpp"

#include <mpi.h>

#include <vector>

namespace redist {

class NodeAgreement {
public:
  /// Ranks the lines serve at most: each rank reads every other's line, O(ranks) per
  /// agreement; more ranks agree through MPI_Allreduce.
  static constexpr int kMaxRanks = 16;

  /// Whether ranks on these nodes (node_ids(), by rank) may share lines: 2 to kMaxRanks ranks,
  /// all on one node.
  static bool possible(const std::vector<int> &node_ids);

  /// Collective over comm, whose ranks' nodes are possible(). Rank 0 takes the lines from its
  /// arena, MPI_Bcast tells the others where they are, each maps them (no system call where
  /// it has that arena mapped already), and an MPI_Allreduce agrees whether every rank did:
  /// from then on, max() goes through them. Returns MPI_SUCCESS, or the code of the call that
  /// failed here (the lines are then not used here).
  int share(MPI_Comm comm);
  [[nodiscard]] bool shared() const { return !lines_.empty(); }

  /// share()'s steps, riding on agreements of the caller's, no collective of their own (the
  /// executor's: its plan's planning agreement, then its first agreement after an exchange).
  /// offer(): rank 0 takes the lines and returns where they are (the other ranks an empty
  /// address); the caller's agreement gives every rank their maximum, rank 0's; take() maps
  /// them; the caller's next agreement carries missing() (1 where they are not mapped), and
  /// confirm() with its maximum uses them from then on, or drops them, on every rank alike.
  /// Every rank of comm calls each step, with the same `size` (its ranks, possible()).
  single_copy::LinesAddress offer(int rank, int size);
  void take(const single_copy::LinesAddress &where);
  /// Whether take() awaits confirm().
  [[nodiscard]] bool pending() const { return pending_; }
  [[nodiscard]] long long missing() const { return pending_lines_.empty() ? 1 : 0; }
  void confirm(long long missing_anywhere);

  /// MPI_Allreduce(MPI_IN_PLACE, words, count, MPI_LONG_LONG, MPI_MAX, comm), or the same
  /// through the lines once shared, when count <= single_copy::SharedLines::kMaxWords.
  /// Collective over comm (the same count on every rank). Returns MPI_SUCCESS or MPI's code.
  int max(MPI_Comm comm, long long *words, int count);

private:
  single_copy::SharedLines lines_;
  single_copy::SharedLines pending_lines_;
  bool pending_ = false;
  int rank_ = 0;
  int size_ = 0;
};

/// The agreement kept with comm (its attribute, MPI 4.0 section 7.7, freed with it and not
/// inherited by its duplicates), for the front end's agreements on a context's communicator;
/// null until keep_agreement(comm) (or when it was kept under another REDIST_TEST_NODES
/// split).
NodeAgreement *kept_agreement(MPI_Comm comm);
/// Collective over comm: keeps an agreement with comm, shared where possible (node_ids(comm)).
/// Returns MPI_SUCCESS, or MPI's code of a call that failed here (nothing kept here).
int keep_agreement(MPI_Comm comm);

} // namespace redist
