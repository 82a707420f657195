#include "collective.hpp"

#include <algorithm>
#include <iterator>
#include <limits>

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

/// Posts (again, once, where the post fails); MPI_SUCCESS or the second post's code.
template <class Post> int post_twice(Post &&post, MPI_Request *request) {
  if (post(request) == MPI_SUCCESS) return MPI_SUCCESS;
  *request = MPI_REQUEST_NULL;
  return post(request);
}

template <class Post> Outcome run(Post &&post) {
  MPI_Request request = MPI_REQUEST_NULL;
  if (const int rc = post_twice(post, &request); rc != MPI_SUCCESS) return {Round::unposted, rc};
  const int rc = MPI_Wait(&request, MPI_STATUS_IGNORE);
  return rc == MPI_SUCCESS ? Outcome{} : Outcome{Round::lost, rc};
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

/// Room for a second round of `count` words: `inline_words` where they fit.
template <class T>
std::span<T> room(T *inline_words, std::size_t fit, std::vector<T> &heap, std::size_t count) {
  if (count <= fit) return {inline_words, count};
  heap.resize(count);
  return heap;
}

/// The post of a reduction of `words` over `comm` with MPI_MAX, in place, on a given request.
template <class T> auto max_post(MPI_Comm comm, std::span<T> words) {
  return [comm, words](MPI_Request *r) {
    return MPI_Iallreduce(MPI_IN_PLACE, words.data(), static_cast<int>(words.size()), datatype<T>(),
                          MPI_MAX, comm, r);
  };
}

/// The second round after `first` produced `result` here (or lost it): the result reduced with
/// MPI_MAX, this process giving the lowest values where it lost it.
/// `second` holds the round's words; with `request`, a process that has the result leaves the
/// round in flight there.
template <class T>
int confirm(MPI_Comm comm, const Outcome &first, std::span<T> result, std::span<T> second,
            MPI_Request *request) {
  if (first.round == Round::unposted) return first.rc;
  const bool lost = first.round == Round::lost;
  if (lost) {
    std::fill(second.begin(), second.end(), std::numeric_limits<T>::lowest());
  } else {
    std::copy(result.begin(), result.end(), second.begin());
  }
  const auto post = max_post(comm, second);
  if (!lost && request != nullptr) {
    // A second post failing is a second failure here: the others would wait.
    return post_twice(post, request);
  }
  const Outcome again = run(post);
  if (!lost) return MPI_SUCCESS; // had its result: a failure here is the one failure
  if (again.round != Round::done) return again.rc != MPI_SUCCESS ? again.rc : first.rc;
  std::copy(second.begin(), second.end(), result.begin());
  return MPI_SUCCESS;
}

/// The maximum of `words` over `comm`, confirmed: the second round's words in `second`, left in
/// flight in `request` where given (a Confirmation's), else waited for here.
template <class T>
int agree_max_of(MPI_Comm comm, std::span<T> words, std::span<T> second, MPI_Request *request) {
  return confirm(comm, run(max_post(comm, words)), words, second, request);
}

template <class T> int agree_max_of(MPI_Comm comm, std::span<T> words) {
  T inline_words[17];
  std::vector<T> heap;
  return agree_max_of(comm, words, room(inline_words, std::size(inline_words), heap, words.size()),
                      nullptr);
}

template <class T> int gather_of(MPI_Comm comm, std::span<const T> mine, std::span<T> all) {
  std::vector<T> heap;
  const Outcome first = run([&](MPI_Request *r) {
    return MPI_Iallgather(mine.data(), static_cast<int>(mine.size()), datatype<T>(), all.data(),
                          static_cast<int>(mine.size()), datatype<T>(), comm, r);
  });
  return confirm(comm, first, all, room<T>(nullptr, 0, heap, all.size()), nullptr);
}

} // namespace

void Confirmation::finish() {
  if (request_ == MPI_REQUEST_NULL) return;
  // This process had the first round's result: a failure here is the one failure, and the
  // process that needed this round has it.
  MPI_Wait(&request_, MPI_STATUS_IGNORE);
  request_ = MPI_REQUEST_NULL;
}

int agree_max(MPI_Comm comm, std::span<long long> words, Confirmation *later) {
  if (later == nullptr) return agree_max_of(comm, words);
  later->finish();
  return agree_max_of(
      comm, words,
      room(later->words_, std::size(later->words_), later->words_on_heap_, words.size()),
      &later->request_);
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

int gather(MPI_Comm comm, std::span<const double> mine, std::span<double> all) {
  return gather_of(comm, mine, all);
}

Flags max_of_flags(MPI_Comm comm, std::span<long long> words) {
  long long mine[kMaxFlags];
  const bool kept = words.size() <= kMaxFlags;
  if (kept) std::copy(words.begin(), words.end(), mine);
  const Outcome outcome = run(max_post(comm, words));
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
    bool lost = made.round != Round::done || dup == MPI_COMM_NULL;
    if (!lost && MPI_Comm_set_errhandler(dup, MPI_ERRORS_RETURN) != MPI_SUCCESS) lost = true;
    if (lost) rc = made.rc != MPI_SUCCESS ? made.rc : MPI_ERR_OTHER;
    // Whether any process lost its duplicate: a failure flag (where this reduction fails, it
    // is the one failure, and no process lost its duplicate).
    long long anyone[1] = {lost ? 1 : 0};
    if (max_of_flags(comm, anyone) != Flags::agreed && lost) return rc;
    if (anyone[0] == 0) {
      *out = dup;
      return MPI_SUCCESS;
    }
    if (dup != MPI_COMM_NULL) MPI_Comm_free(&dup);
  }
  return rc != MPI_SUCCESS ? rc : MPI_ERR_OTHER;
}

} // namespace redist::collective
