#pragma once
// The one reader of redist's environment variables (REDIST_SCHEDULE, REDIST_MAX_CONCURRENT,
// REDIST_MAX_MEMORY, REDIST_PLAN_CACHE_SIZE, REDIST_COMM_CACHE_SIZE, REDIST_SINGLE_COPY,
// REDIST_PROGRESS, and the test hooks REDIST_TEST_NODES and REDIST_TEST_INTERLEAVING).
// One rule for all: unset or empty means the default; any other value must be valid as a
// whole, else the error names the variable, the value and the reason:
//   environment variable REDIST_MAX_MEMORY = '12kB': must be a number of bytes >= 0 ...
// The callers read them when a plan is made (a ScaLAPACK call, redist_plan_create), turn an
// error into a refusal agreed by every process of the call, and copy nothing.

#include <initializer_list>
#include <optional>
#include <string>
#include <string_view>

namespace redist::environment {

/// The value of `variable`, or null when it is unset or empty (the default applies).
const char *value(const char *variable);

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
