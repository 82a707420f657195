#pragma once
// Every collective call redist makes on a communicator goes through here, so that one MPI call
// failing on one process (docs/reliability.md, "the single-fault rule") never sends the
// processes down different paths.
//
// Each collective is nonblocking, posted and then waited for, because the two ways a call can
// fail need opposite answers:
// - a post that fails posts nothing: the others wait for this process's part, so it posts
//   again (once);
// - a completion that fails did its work (the others have their result) but left this process
//   without one: it must not post again, and the others must learn that it has no result.
// agree_max() and gather() therefore run a second reduction of one word, "did any process lose
// the result?", and where one did every process runs the first one again: under the
// single-fault rule the second reduction cannot fail too on the process that lost the first,
// and where it fails elsewhere that process knows no one else lost anything. Reductions that
// only carry failure flags need no second round (max_of_flags()).

#include <mpi.h>

#include <cstddef>
#include <span>

namespace redist::collective {

/// words := their element-wise maximum over comm's processes, the same on every process.
/// MPI_SUCCESS, or MPI's code where this process has no result (two of its calls failed).
int agree_max(MPI_Comm comm, std::span<long long> words);
int agree_max(MPI_Comm comm, std::span<int> words);
int agree_max(MPI_Comm comm, std::span<double> words);

/// all := every process's `mine` in rank order (all.size() == mine.size() times comm's size),
/// the same on every process. MPI_SUCCESS, or MPI's code (two failures here).
int gather(MPI_Comm comm, std::span<const long long> mine, std::span<long long> all);
int gather(MPI_Comm comm, std::span<const int> mine, std::span<int> all);

/// What max_of_flags() could do here.
enum class Flags {
  agreed,  ///< words are the maximum over every process
  deduced, ///< this process's completion failed: words are its own, as every other process's
           ///< are 0 under the single-fault rule; the caller reports the failure here
  failed   ///< the post failed twice: words are this process's own (two faults)
};

/// words := their maximum over comm's processes, for at most kMaxFlags words that are 0 on a
/// process where nothing failed (no second round: see above).
Flags max_of_flags(MPI_Comm comm, std::span<long long> words);
inline constexpr std::size_t kMaxFlags = 8;

/// *out := a duplicate of comm with MPI_ERRORS_RETURN. A duplicate that failed on some process
/// is freed everywhere and made again, once; where that fails too, *out is MPI_COMM_NULL and
/// the result MPI's code on every process.
int duplicate(MPI_Comm comm, MPI_Comm *out);

} // namespace redist::collective
