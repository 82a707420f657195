#include "environment.hpp"

#include <cerrno>
#include <cstdlib>
#include <string>
#include <string_view>

namespace redist::environment {

const char *value(const char *variable) {
  const char *text = std::getenv(variable);
  return text != nullptr && *text != '\0' ? text : nullptr;
}

std::string error(const char *variable, const char *text, const std::string &reason) {
  return std::string("environment variable ") + variable + " = '" + text + "': " + reason;
}

Integer integer(const char *variable, long long min, long long max, const char *meaning) {
  Integer out;
  const char *text = value(variable);
  if (text == nullptr) return out;
  // strtoll alone would accept leading blanks: the text must start with a sign or a digit.
  const char first = *text == '+' || *text == '-' ? text[1] : text[0];
  char *end = nullptr;
  errno = 0;
  const long long v = std::strtoll(text, &end, 10);
  if (first < '0' || first > '9' || end == text || *end != '\0') {
    out.error = error(variable, text, meaning);
  } else if (errno == ERANGE || v < min || v > max) {
    out.error = error(variable, text,
                      std::string(meaning) + "; out of range [" + std::to_string(min) + ", " +
                          std::to_string(max) + "]");
  } else {
    out.value = v;
  }
  return out;
}

Choice choice(const char *variable, std::initializer_list<std::string_view> names,
              const char *meaning) {
  Choice out;
  const char *text = value(variable);
  if (text == nullptr) return out;
  std::size_t index = 0;
  for (const std::string_view name : names) {
    if (name == text) {
      out.index = index;
      return out;
    }
    ++index;
  }
  out.error = error(variable, text, meaning);
  return out;
}

} // namespace redist::environment
