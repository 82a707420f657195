#pragma once
// Shared by the C API error tests (test_capi_errors.cpp, test_capi_fatal.cpp): the arguments
// of one redist_plan_create call built from an errtest::Scenario, expected outcomes, and the
// runner of one bad create followed by a valid plan.

#include "capi_raw.h"
#include "error_support.hpp"

#include <redist.h>

#include <cstdint>
#include <cstring>
#include <functional>
#include <string>
#include <vector>

namespace capitest {

using errtest::Scenario;
using mpitest::MatSpec;

/// The arguments of one redist_plan_create call on this rank. Not copyable: the layouts
/// point into the rank vectors.
struct CArgs {
  std::int64_t m = 0, n = 0;
  int type = REDIST_DOUBLE; ///< any int, as a C caller can pass (capi_raw.c)
  int region = REDIST_REGION_FULL;
  int unit_diag = 0;
  std::vector<int> ranks_a, ranks_b;
  redist_layout a{}, b{};
  const redist_layout *pa = &a, *pb = &b;
  bool null_plan_pointer = false;
  /// Create with redist_plan_create_opt(popt) instead of redist_plan_create.
  bool with_options = false;
  redist_options options{};
  const redist_options *popt = &options;

  explicit CArgs(const Scenario &s)
      : m(s.m), n(s.n), ranks_a(s.a.grid.ranks), ranks_b(s.b.grid.ranks) {
    a = layout(s.a, ranks_a);
    b = layout(s.b, ranks_b);
    redist_options_init(&options);
  }
  CArgs(const CArgs &) = delete;
  CArgs &operator=(const CArgs &) = delete;

  redist_layout &side(char s) { return s == 'a' ? a : b; }
  std::vector<int> &ranks(char s) { return s == 'a' ? ranks_a : ranks_b; }

  /// The layout of `s` as this rank passes it (lld = its local leading dimension).
  static redist_layout layout(const MatSpec &s, const std::vector<int> &ranks);
};

struct CExpect {
  int status = REDIST_SUCCESS;
  std::string message; ///< redist_last_error() must equal it
};
using CExpectFn = std::function<CExpect(int rank)>;
using CMutateFn = std::function<void(CArgs &, int rank)>;

/// `arg` is invalid on rank `bad` (every rank when bad < 0): REDIST_ERR_ARGUMENT and
/// "<call>: argument <arg> = <value>: <reason>" there, REDIST_ERR_REMOTE elsewhere.
CExpectFn invalid(const char *call, int bad, const std::string &arg, long long value,
                  const std::string &reason);
CExpectFn invalid(const char *call, int bad, const std::string &arg, const std::string &value,
                  const std::string &reason);
CExpectFn create_invalid(int bad, const std::string &arg, long long value,
                         const std::string &reason);
/// The same for redist_plan_create_opt.
CExpectFn create_opt_invalid(int bad, const std::string &arg, const std::string &value,
                             const std::string &reason);
/// REDIST_ERR_MISMATCH on every rank.
CExpectFn create_mismatch(const char *call = "redist_plan_create");

/// Whether `ok` holds on every rank (collective over MPI_COMM_WORLD).
bool everywhere(bool ok);

/// Create, execute and destroy a valid plan of the standard scenario; B must match the oracle.
void valid_plan_works(const std::string &where, redist_region region = REDIST_REGION_FULL,
                      int unit_diag = 0);

/// One redist_plan_create (or _opt) of the standard scenario spoilt by `mutate`: status, message
/// and *plan checked against `expect` on every rank; then valid_plan_works().
void create_case(const std::string &label, const CMutateFn &mutate, const CExpectFn &expect);
/// The same from scenario `s` instead of the standard one.
void create_case(const Scenario &s, const std::string &label, const CMutateFn &mutate,
                 const CExpectFn &expect);

} // namespace capitest
