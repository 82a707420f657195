// The C API's relabelling: redist_propose_grid_ranks, the rank order of a destination grid
// being created that keeps the most of a copy on its own process (schedule/relabel.hpp, pure,
// computed alike on every process; no data moves).

#include "capi_internal.hpp"
#include "relabel.hpp"

#include <algorithm>
#include <cstdint>
#include <numeric>
#include <stdexcept>
#include <string>
#include <vector>

using namespace redist;

namespace {

// Everything of a layout that must agree across processes, but lld and (for a grid being
// chosen) the rank map.
void add_layout(Fingerprint &f, const redist_layout &l, bool with_ranks) {
  f.add(l.m).add(l.n).add(l.mb).add(l.nb).add(l.nprow).add(l.npcol).add(l.rsrc).add(l.csrc);
  f.add(l.i).add(l.j);
  if (!with_ranks) return;
  for (long long idx = 0; idx < static_cast<long long>(l.nprow) * l.npcol; ++idx)
    f.add(l.ranks[idx]);
}

} // namespace

extern "C" int redist_propose_grid_ranks(MPI_Comm comm, int64_t m, int64_t n, redist_type type,
                                         const redist_layout *a, const redist_layout *b, int *ranks,
                                         int64_t *bytes_kept_before, int64_t *bytes_kept_after) {
  static const char *call = "redist_propose_grid_ranks";
  return c_barrier(call, [&] {
    const CommPosition position = comm_position(call, comm);
    const int kind = enum_value(type);
    Relabelling proposal;
    // The proposal is made inside the checks: pure and the same on every process given the
    // same arguments, and a failure there (out of memory) is agreed like a bad argument.
    agree(comm, call, "m, n, type or layouts (all but lld and b->ranks must agree)", [&] {
      if (ranks == nullptr) throw_argument(call, "ranks", 0, "NULL output array");
      const LayoutArg source = layout_arg(a);
      LayoutArg destination = layout_arg(b);
      check_call(call, "", m, n, kind, source, destination, REDIST_REGION_FULL, -1, position.size,
                 position.rank, {.ranks = true, .lld = false}, {.ranks = false, .lld = false});
      const Index element_bytes = type_size(kind);
      if (n > 0 && m > INT64_MAX / element_bytes / n)
        throw_argument(call, "n", n,
                       "the window's m x n elements of " + std::to_string(element_bytes) +
                           " bytes must be below 2^63 bytes (m = " + std::to_string(m) + ")");
      // Every rank of comm is a candidate; the identity order puts rank p at position p.
      std::vector<int> candidates(static_cast<std::size_t>(position.size));
      std::iota(candidates.begin(), candidates.end(), 0);
      destination.value.layout.ranks = candidates.data();
      try {
        proposal = propose_relabelling(
            transfer_of(m, n, source.value, destination.value, REDIST_REGION_FULL, 0, -1),
            candidates, static_cast<std::size_t>(element_bytes));
      } catch (const std::invalid_argument &e) {
        // Checked above: a full window, nprow*npcol <= size distinct candidates.
        throw Error(REDIST_ERR_INTERNAL, std::string(call) + ": internal error: " + e.what());
      }
      Fingerprint f;
      f.add(m).add(n).add(kind);
      add_layout(f, *a, true);
      add_layout(f, *b, false);
      return f.value();
    });
    std::copy(proposal.grid.ranks.begin(), proposal.grid.ranks.end(), ranks);
    if (bytes_kept_before != nullptr) *bytes_kept_before = proposal.bytes_kept_before();
    if (bytes_kept_after != nullptr) *bytes_kept_after = proposal.bytes_kept_after();
  });
}
