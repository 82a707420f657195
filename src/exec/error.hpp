#pragma once
// Errors are values at the C boundary: library code throws redist::Error, and every extern "C"
// body runs inside c_barrier(), which turns any exception into a status code and a
// thread-local message. Nothing escapes into C or Fortran.

#include "redist.h"

#include <cstring>
#include <exception>
#include <string>
#include <utility>

namespace redist {

class Error : public std::exception {
public:
  Error(redist_status status, std::string message)
      : status_(status), message_(std::move(message)) {}
  [[nodiscard]] redist_status status() const { return status_; }
  [[nodiscard]] const char *what() const noexcept override { return message_.c_str(); }

private:
  redist_status status_;
  std::string message_;
};

/// Throw REDIST_ERR_ARGUMENT: "<call>: argument <arg> = <value>: <reason>".
[[noreturn]] void throw_argument(const std::string &call, const std::string &arg, long long value,
                                 const std::string &reason);
/// The same with the value already written as text (e.g. a floating-point value).
[[noreturn]] void throw_argument(const std::string &call, const std::string &arg,
                                 const std::string &value, const std::string &reason);

void set_last_error(const std::string &message);

/// The int a C caller passed for an enum argument. A C caller may pass any int, but in C++
/// reading an enum object that holds a value outside its enumerators' range is undefined
/// (UBSan's enum check); copying the bytes is not.
template <class E> int enum_value(const E &e) {
  static_assert(sizeof(E) == sizeof(int));
  int v = 0;
  std::memcpy(&v, &e, sizeof v);
  return v;
}

/// Bytes of one element of redist_type `type`, 0 for an unknown value.
int type_size(int type);

/// Run f, translating every exception into a status; clears the message on success.
template <class F> int c_barrier(const char *call, F &&f) noexcept {
  try {
    f();
    set_last_error("");
    return REDIST_SUCCESS;
  } catch (const Error &e) {
    set_last_error(e.what());
    return e.status();
  } catch (const std::bad_alloc &) {
    set_last_error(std::string(call) + ": out of memory");
    return REDIST_ERR_NO_MEMORY;
  } catch (const std::exception &e) {
    set_last_error(std::string(call) + ": internal error: " + e.what());
    return REDIST_ERR_INTERNAL;
  } catch (...) {
    set_last_error(std::string(call) + ": internal error: unknown exception");
    return REDIST_ERR_INTERNAL;
  }
}

} // namespace redist
