#pragma once
// The one reader of redist's environment variables (REDIST_SCHEDULE, REDIST_MAX_CONCURRENT,
// REDIST_MAX_MEMORY, REDIST_PLAN_CACHE_SIZE, REDIST_COMM_CACHE_SIZE, REDIST_SINGLE_COPY,
// REDIST_PROGRESS, and the test hooks REDIST_TEST_NODES, REDIST_TEST_INTERLEAVING and
// REDIST_TEST_STAGING_AFTER).
// One rule for all: unset or empty means the default; any other value must be valid as a
// whole, else the error names the variable, the value and the reason:
//   environment variable REDIST_MAX_MEMORY = '12kB': must be a number of bytes >= 0 ...
// The callers read them when a plan is made (a ScaLAPACK call, redist_plan_create), turn an
// error into a refusal agreed by every process of the call, and copy nothing.

#include <cstdint>
#include <initializer_list>
#include <optional>
#include <string>
#include <string_view>

namespace redist::environment {

/// The value of `variable`, or null when it is unset or empty (the default applies).
const char *value(const char *variable);

/// While one lives on a thread, value() there finds REDIST_* variables among those one pass
/// over the environment found when it was made, instead of passing over the environment each
/// time (about 60 ns with an MPI launcher's hundred variables): for a call that reads several
/// (a ScaLAPACK entry's hit reads eight). The environment must not change while it lives.
/// Where the environment holds the same entries as at the last snapshot made on this thread
/// (the same strings, by address: what setenv, putenv and unsetenv change) and the same
/// REDIST_* values (by content), the snapshot takes that one's REDIST_* entries without a pass
/// and its generation: what a caller read from the environment under a snapshot of the same
/// generation on this thread still holds. (An entry rewritten in place into a REDIST_* name is
/// not seen until the environment changes otherwise.)
class Snapshot {
public:
  Snapshot();
  ~Snapshot();
  Snapshot(const Snapshot &) = delete;
  Snapshot &operator=(const Snapshot &) = delete;
  /// The value of a REDIST_* variable, or null (unset, empty, or beyond kMaxVariables).
  [[nodiscard]] const char *find(const char *variable) const;
  /// Whether every REDIST_* variable was kept (else value() asks the environment).
  [[nodiscard]] bool complete() const { return complete_; }
  /// Equal on this thread exactly while the environment does not change (never 0).
  [[nodiscard]] std::uint64_t generation() const { return generation_; }

  static constexpr int kMaxVariables = 32;

private:
  void pass_over_environment();

  const char *entries_[kMaxVariables] = {}; // "REDIST_NAME=value"
  int count_ = 0;
  bool complete_ = true; // every REDIST_* variable is in entries_
  std::uint64_t generation_ = 0;
  const Snapshot *outer_ = nullptr;
};

/// The generation of the snapshot living on this thread (the innermost), 0 where none does.
std::uint64_t generation();

/// What `read()` gave, taken again on this thread while snapshots of the same generation live
/// (the environment has not changed); read anew where no snapshot lives. One per place that
/// reads, as a thread_local: `thread_local environment::Remembered<int> split;`.
template <class T> class Remembered {
public:
  template <class Read> const T &get(Read &&read) {
    const std::uint64_t now = generation();
    if (now == 0 || now != generation_) {
      value_ = read();
      generation_ = now;
    }
    return value_;
  }

private:
  std::uint64_t generation_ = 0;
  T value_{};
};

/// "environment variable NAME = 'VALUE': reason".
std::string error(const char *variable, const char *text, const std::string &reason);

/// An integer in [min, max]: decimal digits with an optional sign, nothing else (no blanks,
/// no suffix). `error` stays empty when the variable is unset or empty (`value` empty then),
/// else it says why the text is refused; `meaning` is the reason given for any bad value,
/// followed by the range where the number is outside it (or outside 64 bits).
struct Integer {
  std::optional<long long> value;
  std::string error;
};
/// `meaning` is a literal: nothing is allocated unless the value is refused.
Integer integer(const char *variable, long long min, long long max, const char *meaning);

/// Which of `names` the variable holds (its index); the same rule and error as integer().
struct Choice {
  std::optional<std::size_t> index;
  std::string error;
};
Choice choice(const char *variable, std::initializer_list<std::string_view> names,
              const char *meaning);

} // namespace redist::environment
