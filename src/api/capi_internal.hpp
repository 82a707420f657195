#pragma once
// Shared by the files of the C API (capi.cpp, capi_execute.cpp, capi_batch.cpp, capi_nd.cpp,
// capi_relabel.cpp).

#include "api_internal.hpp"
#include "front_end.hpp"

#include <redist.h>

#include <cstdint>
#include <functional>
#include <optional>
#include <span>
#include <string>
#include <vector>

namespace redist {

// Hidden: internal to the library, not among the symbols it exports.
#pragma GCC visibility push(hidden)

/// A layout argument of a C API call: a redist_layout (`ext` false: no first blocks of its
/// own, column-major) or a redist_layout_ext, as one redist_layout_ext; `given` false for NULL.
struct LayoutArg {
  redist_layout_ext value{};
  bool given = false;
  bool ext = false;
};
LayoutArg layout_arg(const redist_layout *l);
LayoutArg layout_arg(const redist_layout_ext *l);

/// The checked schedule options of a C caller's redist_options; throws naming `call`.
ScheduleOptions schedule_options(const std::string &call, const redist_options &o);

/// The front end's description of a C API call (fields from the layouts; what has no field
/// of its own goes into the digest).
front_end::CallArgs describe(const char *call, int64_t m, int64_t n, int type, int region,
                             int unit_diag, const redist_layout_ext &a, const redist_layout_ext &b,
                             int rank, const ScheduleOptions &options);

/// The checks of one call's m, n, type, layouts, region and op (-1: a copy), on this process;
/// `prefix` comes before each argument's name ("ops[3]." in a batch). `a_checks`, `b_checks`:
/// what of each layout is checked beyond its shape (validate_layout).
void check_call(const char *call, const std::string &prefix, int64_t m, int64_t n, int type,
                const LayoutArg &a, const LayoutArg &b, int region, int op, int size, int rank,
                LayoutChecks a_checks = {}, LayoutChecks b_checks = {});

/// The transfer of a checked call (op -1: a copy).
Transfer transfer_of(int64_t m, int64_t n, const redist_layout_ext &a, const redist_layout_ext &b,
                     int region, int unit_diag, int op);

/// One operation of a batch as redist_plan_create_batch / _ext pass it.
struct BatchArg {
  int op = 0, type = 0, region = 0;
  int64_t m = 0, n = 0;
  LayoutArg a, b;
};

/// redist_plan_create_batch and _ext: `count` operations, `op_at(k)` the k-th (called only
/// when `ops_given` and count >= 1).
int create_batch(const char *call, MPI_Comm comm, int count, bool ops_given,
                 const std::function<BatchArg(int)> &op_at, const redist_options *options,
                 redist_plan *plan);

/// A fingerprint of every field of a call's description (what every process must pass alike).
std::uint64_t fingerprint_of(front_end::CallFields<long long> fields);

/// A batch's checks agreed over `comm` (redist_plan_create_batch, redist_grid_batch_create):
/// every process calls it with its error if any (`at`: the operation it was checking, -1 the
/// batch's own arguments); the first failing operation wins, then the lowest failing rank;
/// then count, options (`options_print`) and each operation's fingerprint (`prints`) must
/// agree (`op_fields`: what an operation's fingerprint covers, for the message). Throws on
/// every process alike. Collective: one reduction, and one more naming the operation when
/// fingerprints differ.
void agree_batch(MPI_Comm comm, const char *call, const CommPosition &position,
                 const std::optional<Error> &local, long long at, int count,
                 std::uint64_t options_print, const std::vector<std::uint64_t> &prints,
                 const char *op_fields);

/// The front end's operation field of a call (op -1: a copy).
long long operation_field(int op);

/// The agreed failure of front_end::plan_everywhere / plan_nd_everywhere as `call`'s error.
void throw_if_failed(const char *call, const front_end::Planned &planned);

/// The executor of a batch's operations on `comm` (front_end::plan_batch_everywhere): each a
/// block grid plan (BatchOp::grid), or the block grid transfer grid_transfers[k] (non-null;
/// its plan then kept in batch[k].grid), or a 2-D transfer (BatchOp::transfer).
front_end::Planned plan_batch(int rank, int size, MPI_Comm comm,
                              std::vector<redist_plan_s::BatchOp> &batch,
                              std::span<const GridTransfer *const> grid_transfers = {});

#pragma GCC visibility pop

} // namespace redist
