// Kaushik et al. 1994/1995's two-phase redistribution through CYCLIC(lcm) or CYCLIC(gcd)
// (Evers 2025 review, Secs. 4.2.1-4.2.2): the intermediate distributions whose two phases both
// have a closed form, the phases, and their predicted cost. Pure code, no MPI.

#include "cyclic_pattern.hpp"
#include "schedule_cyclic.hpp"

#include <algorithm>
#include <array>
#include <cstddef>
#include <numeric>
#include <optional>
#include <vector>

namespace redist {

using namespace cyclic;

namespace {

// One-divides-the-other with a closed form: Walker & Otto on equal process counts, Park et al.
// with the smaller block on no more processes.
bool closed_form_shape(Index block1, Index procs1, Index block2, Index procs2) {
  if (procs1 == procs2) {
    return block1 % block2 == 0 || block2 % block1 == 0;
  }
  return (block2 % block1 == 0 && procs1 <= procs2) || (block1 % block2 == 0 && procs2 <= procs1);
}

} // namespace

std::vector<BlockCyclic> multiphase_intermediates(const Transfer1D &t) {
  const Index x = effective_block(t.src);
  const Index y = effective_block(t.dst);
  const Index P = t.src.nprocs;
  const Index Q = t.dst.nprocs;
  std::vector<BlockCyclic> out;
  std::vector<Index> blocks{std::gcd(x, y)};
  if (const std::optional<Index> l = checked_lcm(x, y)) {
    blocks.insert(blocks.begin(), *l);
  }
  for (const Index f : blocks) {
    for (const Index M : {P, Q}) {
      const Index fe = M == 1 ? 1 : f;
      const bool is_src = fe == x && M == P;
      const bool is_dst = fe == y && M == Q;
      if (is_src || is_dst || !closed_form_shape(x, P, fe, M) || !closed_form_shape(fe, M, y, Q)) {
        continue;
      }
      const BlockCyclic mid{t.length, f, static_cast<int>(M), 0};
      const bool seen = std::any_of(out.begin(), out.end(), [&](const BlockCyclic &m) {
        return m.nprocs == mid.nprocs && (m.block == mid.block || m.nprocs == 1);
      });
      if (!seen) {
        out.push_back(mid);
      }
    }
  }
  return out;
}

std::array<Transfer1D, 2> multiphase_phases(const Transfer1D &t, const BlockCyclic &mid) {
  return {Transfer1D{t.src, mid, t.src_start, 0, t.length},
          Transfer1D{mid, t.dst, 0, t.dst_start, t.length}};
}

double multiphase_cost(const Transfer1D &t, const BlockCyclic &mid, const CostModel &model,
                       std::size_t element_bytes) {
  double seconds = 0.0;
  for (const Transfer1D &phase : multiphase_phases(t, mid)) {
    const std::optional<Schedule> closed = schedule_closed_form(phase, model, element_bytes);
    const Schedule s = closed ? *closed : schedule_caterpillar(volume_graph(phase));
    seconds += schedule_stats(s, model, element_bytes).seconds;
  }
  return seconds;
}

} // namespace redist
