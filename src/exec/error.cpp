#include "error.hpp"

namespace redist {
namespace {
thread_local std::string last_error_message;
} // namespace

void set_last_error(const std::string &message) {
  last_error_message = message;
}

void throw_argument(const std::string &call, const std::string &arg, long long value,
                    const std::string &reason) {
  throw_argument(call, arg, std::to_string(value), reason);
}

void throw_argument(const std::string &call, const std::string &arg, const std::string &value,
                    const std::string &reason) {
  throw Error(REDIST_ERR_ARGUMENT, call + ": argument " + arg + " = " + value + ": " + reason);
}

} // namespace redist

extern "C" const char *redist_last_error(void) {
  return redist::last_error_message.c_str();
}

extern "C" const char *redist_status_name(int status) {
  switch (status) {
  case REDIST_SUCCESS:
    return "REDIST_SUCCESS";
  case REDIST_ERR_ARGUMENT:
    return "REDIST_ERR_ARGUMENT";
  case REDIST_ERR_REMOTE:
    return "REDIST_ERR_REMOTE";
  case REDIST_ERR_MISMATCH:
    return "REDIST_ERR_MISMATCH";
  case REDIST_ERR_MPI:
    return "REDIST_ERR_MPI";
  case REDIST_ERR_NO_MEMORY:
    return "REDIST_ERR_NO_MEMORY";
  case REDIST_ERR_INTERNAL:
    return "REDIST_ERR_INTERNAL";
  default:
    return "unknown status";
  }
}

int redist::type_size(int type) {
  switch (type) {
  case REDIST_FLOAT:
  case REDIST_INT32:
    return 4;
  case REDIST_DOUBLE:
  case REDIST_COMPLEX_FLOAT:
  case REDIST_INT64:
    return 8;
  case REDIST_COMPLEX_DOUBLE:
    return 16;
  default:
    return 0;
  }
}

extern "C" int redist_type_size(redist_type type) {
  return redist::type_size(redist::enum_value(type));
}
