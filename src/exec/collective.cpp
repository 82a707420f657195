#include "collective.hpp"

#include <algorithm>
#include <iterator>
#include <vector>

namespace redist::collective {
namespace {

/// How one nonblocking collective ended on this process.
enum class Round {
  done,    ///< completed with its result
  lost,    ///< completed elsewhere, but its completion failed here: no result here
  unposted ///< its post failed twice: the others wait for this process (two faults)
};

struct Outcome {
  Round round = Round::done;
  int rc = MPI_SUCCESS; ///< the failed call's code
};

template <class Post> Outcome run(Post &&post) {
  MPI_Request request = MPI_REQUEST_NULL;
  int rc = post(&request);
  if (rc != MPI_SUCCESS) {
    request = MPI_REQUEST_NULL;
    rc = post(&request);
    if (rc != MPI_SUCCESS) return {Round::unposted, rc};
  }
  rc = MPI_Wait(&request, MPI_STATUS_IGNORE);
  return rc == MPI_SUCCESS ? Outcome{} : Outcome{Round::lost, rc};
}

/// The second round: whether any process lost the first one's result (`lost_here`). 1 or 0,
/// the same everywhere; -1 where this process can know nothing (two of its calls failed).
int anyone_lost(MPI_Comm comm, bool lost_here, int &rc) {
  int lost = lost_here ? 1 : 0;
  const Outcome second = run([&](MPI_Request *r) {
    return MPI_Iallreduce(MPI_IN_PLACE, &lost, 1, MPI_INT, MPI_MAX, comm, r);
  });
  if (second.round == Round::done) return lost;
  rc = second.rc;
  // This round's failure is the one failure: no process lost the first round's result.
  return lost_here ? -1 : 0;
}

/// Runs `once` (a collective whose result decides what comes next), then anyone_lost(), and
/// `once` again everywhere where some process lost the first result; `restore` puts this
/// process's input back before that.
template <class Once, class Restore> int confirmed(MPI_Comm comm, Once &&once, Restore &&restore) {
  const Outcome first = once();
  if (first.round == Round::unposted) return first.rc;
  int rc = first.rc;
  const int lost = anyone_lost(comm, first.round == Round::lost, rc);
  if (lost == 0) return MPI_SUCCESS;
  if (lost < 0) return rc;
  restore();
  const Outcome again = once();
  return again.round == Round::done ? MPI_SUCCESS : again.rc;
}

template <class T> MPI_Datatype datatype();
template <> MPI_Datatype datatype<long long>() {
  return MPI_LONG_LONG;
}
template <> MPI_Datatype datatype<int>() {
  return MPI_INT;
}
template <> MPI_Datatype datatype<double>() {
  return MPI_DOUBLE;
}

template <class T> int agree_max_of(MPI_Comm comm, std::span<T> words) {
  // This process's words, for the second run (on the stack for a call's few words: cached
  // calls allocate nothing).
  T kept[16];
  std::vector<T> kept_on_heap;
  T *mine = kept;
  if (words.size() > std::size(kept)) {
    kept_on_heap.resize(words.size());
    mine = kept_on_heap.data();
  }
  std::copy(words.begin(), words.end(), mine);
  return confirmed(
      comm,
      [&] {
        return run([&](MPI_Request *r) {
          return MPI_Iallreduce(MPI_IN_PLACE, words.data(), static_cast<int>(words.size()),
                                datatype<T>(), MPI_MAX, comm, r);
        });
      },
      [&] { std::copy(mine, mine + words.size(), words.begin()); });
}

template <class T> int gather_of(MPI_Comm comm, std::span<const T> mine, std::span<T> all) {
  return confirmed(
      comm,
      [&] {
        return run([&](MPI_Request *r) {
          return MPI_Iallgather(mine.data(), static_cast<int>(mine.size()), datatype<T>(),
                                all.data(), static_cast<int>(mine.size()), datatype<T>(), comm,
                                r);
        });
      },
      [] {});
}

} // namespace

int agree_max(MPI_Comm comm, std::span<long long> words) {
  return agree_max_of(comm, words);
}

int agree_max(MPI_Comm comm, std::span<int> words) {
  return agree_max_of(comm, words);
}

int agree_max(MPI_Comm comm, std::span<double> words) {
  return agree_max_of(comm, words);
}

int gather(MPI_Comm comm, std::span<const long long> mine, std::span<long long> all) {
  return gather_of(comm, mine, all);
}

int gather(MPI_Comm comm, std::span<const int> mine, std::span<int> all) {
  return gather_of(comm, mine, all);
}

Flags max_of_flags(MPI_Comm comm, std::span<long long> words) {
  long long mine[kMaxFlags];
  const bool kept = words.size() <= kMaxFlags;
  if (kept) std::copy(words.begin(), words.end(), mine);
  const Outcome outcome = run([&](MPI_Request *r) {
    return MPI_Iallreduce(MPI_IN_PLACE, words.data(), static_cast<int>(words.size()),
                          MPI_LONG_LONG, MPI_MAX, comm, r);
  });
  if (outcome.round == Round::done) return Flags::agreed;
  if (kept) std::copy(mine, mine + words.size(), words.begin());
  return outcome.round == Round::lost ? Flags::deduced : Flags::failed;
}

int duplicate(MPI_Comm comm, MPI_Comm *out) {
  *out = MPI_COMM_NULL;
  int rc = MPI_SUCCESS;
  for (int attempt = 0; attempt < 2; ++attempt) {
    MPI_Comm dup = MPI_COMM_NULL;
    const Outcome made = run([&](MPI_Request *r) { return MPI_Comm_idup(comm, &dup, r); });
    if (made.round == Round::unposted) return made.rc;
    rc = made.rc;
    bool lost = made.round != Round::done || dup == MPI_COMM_NULL;
    if (!lost) {
      const int set = MPI_Comm_set_errhandler(dup, MPI_ERRORS_RETURN);
      lost = set != MPI_SUCCESS;
      if (lost) rc = set;
    }
    const int anyone = anyone_lost(comm, lost, rc);
    if (anyone == 0) {
      *out = dup;
      return MPI_SUCCESS;
    }
    if (dup != MPI_COMM_NULL) MPI_Comm_free(&dup);
    if (anyone < 0) return rc;
  }
  return rc == MPI_SUCCESS ? MPI_ERR_OTHER : rc;
}

} // namespace redist::collective
