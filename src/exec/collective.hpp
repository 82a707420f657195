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
//   without one: it must not post again alone.
// A result that decides what comes next is therefore confirmed by a second reduction, in which
// every process that has the result gives it and one that lost it gives nothing (the lowest
// value, under MPI_MAX): under the single-fault rule that second round cannot fail as well on
// the process that lost the first, so it learns the result there; and where the second round
// fails on another process, that process had its result and needs nothing. A process that has
// its result may leave the second round in flight while it works (Confirmation). Reductions
// that only carry failure flags need no second round (max_of_flags()).

#include <mpi.h>

#include <cstddef>
#include <span>
#include <vector>

namespace redist::collective {

/// The second round of a confirmed reduction, left in flight by a process that had the first
/// round's result (agree_max() with `later`): only another process may need it. Waited for by
/// finish() or the destructor, before the call that started it returns.
class Confirmation {
public:
  Confirmation() = default;
  Confirmation(const Confirmation &) = delete;
  Confirmation &operator=(const Confirmation &) = delete;
  ~Confirmation() { finish(); }
  void finish();

private:
  friend int agree_max(MPI_Comm, std::span<long long>, Confirmation *);
  MPI_Request request_ = MPI_REQUEST_NULL;
  long long words_[17] = {};
  std::vector<long long> words_on_heap_;
};

/// words := their element-wise maximum over comm's processes, the same on every process.
/// MPI_SUCCESS, or MPI's code where this process has no result (two of its calls failed).
/// With `later`, a process that had the first round's result leaves the second in *later.
int agree_max(MPI_Comm comm, std::span<long long> words, Confirmation *later = nullptr);
int agree_max(MPI_Comm comm, std::span<int> words);
int agree_max(MPI_Comm comm, std::span<double> words);

/// all := every process's `mine` in rank order (all.size() == mine.size() times comm's size),
/// the same on every process. MPI_SUCCESS, or MPI's code (two failures here).
int gather(MPI_Comm comm, std::span<const long long> mine, std::span<long long> all);
int gather(MPI_Comm comm, std::span<const int> mine, std::span<int> all);
int gather(MPI_Comm comm, std::span<const double> mine, std::span<double> all);

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
