#pragma once
// Helpers shared by the scheduler tests: random volume graphs and a checker wrapper.

#include "reference.hpp"
#include "schedule.hpp"

#include <gtest/gtest.h>

#include <numeric>

namespace redist::test {

/// A random bipartite graph: up to max_nodes senders and receivers, each pair present with
/// probability density_percent, volumes in [1, max_volume].
inline VolumeGraph random_graph(Random &rng, int max_nodes, int density_percent, Index max_volume) {
  VolumeGraph g;
  g.senders = rng.uniform_int(1, max_nodes);
  g.receivers = rng.uniform_int(1, max_nodes);
  for (int p = 0; p < g.senders; ++p) {
    for (int q = 0; q < g.receivers; ++q) {
      if (rng.chance(density_percent)) {
        g.messages.push_back({p, q, rng.uniform(1, max_volume)});
      }
    }
  }
  return g;
}

inline std::string describe(const VolumeGraph &g) {
  std::ostringstream os;
  os << "VolumeGraph{" << g.senders << "x" << g.receivers << ":";
  for (const Message &m : g.messages) {
    os << " " << m.src << "->" << m.dst << ":" << m.volume;
  }
  os << "}";
  return os.str();
}

/// The 2-D transfer of a row and a column transfer: full window, grids with no ranks yet.
inline Transfer transfer_2d(const Transfer1D &rows, const Transfer1D &cols) {
  Transfer t;
  t.m = rows.length;
  t.n = cols.length;
  t.src = {
      rows.src, cols.src, {rows.src.nprocs, cols.src.nprocs, {}}, rows.src_start, cols.src_start};
  t.dst = {
      rows.dst, cols.dst, {rows.dst.nprocs, cols.dst.nprocs, {}}, rows.dst_start, cols.dst_start};
  return t;
}

/// One dimension of a transfer for which a closed form of schedule_cyclic.hpp applies, the
/// conditions restated from the papers: r divides s or s divides r with the smaller block on
/// no more processes (Park et al.; Walker & Otto when P == Q), or gcd(r', Q) = gcd(s', P) = 1
/// with r' = r / gcd(r, s), s' = s / gcd(r, s) (Desprez et al.). Starts on block boundaries,
/// random first processes; the window is whole periods, or any length up to two periods, or
/// shorter than one block.
inline Transfer1D closed_form_dimension(Random &rng, int min_procs, int max_procs,
                                        Index max_block) {
  for (;;) {
    const int P = rng.uniform_int(min_procs, max_procs);
    const int Q = rng.chance(35) ? P : rng.uniform_int(min_procs, max_procs);
    Index r = rng.uniform(1, max_block);
    Index s = rng.uniform(1, max_block);
    if (rng.chance(50)) {
      (rng.chance(50) ? s : r) *= rng.uniform(1, 3);
    }
    const Index d = std::gcd(r, s);
    const bool park = (s % r == 0 && P <= Q) || (r % s == 0 && Q <= P);
    const bool desprez = std::gcd(r / d, Index{Q}) == 1 && std::gcd(s / d, Index{P}) == 1;
    if (!park && !desprez) {
      continue;
    }
    const Index period = std::lcm(P * r, Q * s);
    const int mode = rng.uniform_int(0, 9);
    Transfer1D t;
    t.length = mode < 4   ? period * rng.uniform(1, 2)
               : mode < 8 ? rng.uniform(1, 2 * period)
                          : rng.uniform(0, std::min(r, s));
    t.src_start = r * rng.uniform(0, 3);
    t.dst_start = s * rng.uniform(0, 3);
    t.src = {t.src_start + t.length + rng.uniform(0, 5), r, P, rng.uniform_int(0, P - 1)};
    t.dst = {t.dst_start + t.length + rng.uniform(0, 5), s, Q, rng.uniform_int(0, Q - 1)};
    return t;
  }
}

/// A random 2-D transfer: dimensions from random_transfer, a random region, grids whose ranks
/// are drawn from 0..comm_size-1 (each grid a random subset in random order; the two grids
/// may overlap). comm_size >= the larger grid.
inline Transfer random_transfer_2d(Random &rng, Index max_extent, Index max_block, int max_procs,
                                   int &comm_size) {
  const Transfer1D r = random_transfer(rng, max_extent, max_block, max_procs);
  const Transfer1D c = random_transfer(rng, max_extent, max_block, max_procs);
  Transfer t = transfer_2d(r, c);
  t.region.kind = static_cast<Region::Kind>(rng.uniform_int(0, 2));
  t.region.unit_diag = rng.chance(30);
  const int src_size = r.src.nprocs * c.src.nprocs;
  const int dst_size = r.dst.nprocs * c.dst.nprocs;
  comm_size = std::max(src_size, dst_size) + rng.uniform_int(0, 2);
  std::vector<int> ranks(static_cast<std::size_t>(comm_size));
  for (int i = 0; i < comm_size; ++i) {
    ranks[static_cast<std::size_t>(i)] = i;
  }
  std::mt19937 shuffle(static_cast<unsigned>(rng.uniform(0, 1 << 30)));
  std::shuffle(ranks.begin(), ranks.end(), shuffle);
  t.src.grid.ranks.assign(ranks.begin(), ranks.begin() + src_size);
  std::shuffle(ranks.begin(), ranks.end(), shuffle);
  t.dst.grid.ranks.assign(ranks.begin(), ranks.begin() + dst_size);
  return t;
}

/// gtest assertion: `schedule` is valid for `graph` under `limits`.
inline ::testing::AssertionResult valid_schedule(const VolumeGraph &graph, const Schedule &schedule,
                                                 const ScheduleLimits &limits) {
  const std::string why = check_schedule(graph, schedule, limits);
  if (why.empty()) {
    return ::testing::AssertionSuccess();
  }
  return ::testing::AssertionFailure() << why << " in " << describe(graph);
}

} // namespace redist::test
