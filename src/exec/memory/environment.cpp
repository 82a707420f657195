#include "environment.hpp"

#include <cerrno>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <new>
#include <string>
#include <string_view>
#include <vector>

#include <unistd.h>

namespace redist::environment {

namespace {

constexpr std::string_view kPrefix = "REDIST_";
thread_local const Snapshot *active = nullptr;

// What the last snapshot on this thread saw: every entry of the environment (its address),
// and the REDIST_* entries it kept with a copy of their text.
struct LastPass {
  std::vector<const char *> environment;
  std::vector<const char *> kept;
  std::vector<std::string> kept_text;
  bool complete = true;
  std::uint64_t generation = 0; // passes that found the environment changed
};
thread_local LastPass last_pass;

bool same_entries_as_last_pass() {
  const std::vector<const char *> &seen = last_pass.environment;
  std::size_t n = 0;
  for (char **entry = environ; *entry != nullptr; ++entry, ++n) {
    if (n == seen.size() || seen[n] != *entry) return false;
  }
  return n == seen.size() && n > 0;
}

} // namespace

Snapshot::Snapshot() : outer_(active) {
  pass_over_environment();
  active = this;
}

void Snapshot::pass_over_environment() {
  if (same_entries_as_last_pass()) {
    complete_ = last_pass.complete;
    bool unchanged = true;
    for (const char *entry : last_pass.kept) {
      entries_[count_] = entry;
      // The same string; its text may still have been written in place (putenv's).
      if (last_pass.kept_text[static_cast<std::size_t>(count_)] != entry) unchanged = false;
      ++count_;
    }
    if (unchanged) {
      generation_ = last_pass.generation;
      return;
    }
  } else {
    for (char **entry = environ; *entry != nullptr; ++entry) {
      // The first letter alone turns most entries away, without a call.
      if ((*entry)[0] == 'R' && std::strncmp(*entry, kPrefix.data(), kPrefix.size()) == 0) {
        if (count_ == kMaxVariables) {
          complete_ = false;
          break;
        }
        entries_[count_++] = *entry;
      }
    }
  }
  generation_ = ++last_pass.generation;
  // Remembered for the next snapshot (nothing, where memory runs out: it passes again).
  try {
    last_pass.environment.clear();
    for (char **entry = environ; *entry != nullptr; ++entry)
      last_pass.environment.push_back(*entry);
    last_pass.kept.assign(entries_, entries_ + count_);
    last_pass.kept_text.assign(entries_, entries_ + count_);
    last_pass.complete = complete_;
  } catch (const std::bad_alloc &) {
    last_pass.environment.clear();
  }
}

Snapshot::~Snapshot() {
  active = outer_;
}

const char *Snapshot::find(const char *variable) const {
  const std::string_view name(variable);
  for (int k = 0; k < count_; ++k) {
    const std::string_view entry(entries_[k]);
    if (entry.size() > name.size() && entry[name.size()] == '=' && entry.starts_with(name)) {
      return entries_[k] + name.size() + 1;
    }
  }
  return nullptr;
}

std::uint64_t generation() {
  return active != nullptr ? active->generation() : 0;
}

const char *value(const char *variable) {
  const char *text =
      active != nullptr && active->complete() && std::string_view(variable).starts_with(kPrefix)
          ? active->find(variable)
          : std::getenv(variable);
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
