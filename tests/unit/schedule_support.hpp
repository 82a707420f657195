#pragma once
// Helpers shared by the scheduler tests: random volume graphs and a checker wrapper.

#include "reference.hpp"
#include "schedule.hpp"

#include <gtest/gtest.h>

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

/// A random 2-D transfer: dimensions from random_transfer, a random region, grids whose ranks
/// are drawn from 0..comm_size-1 (each grid a random subset in random order; the two grids
/// may overlap). comm_size >= the larger grid.
inline Transfer random_transfer_2d(Random &rng, Index max_extent, Index max_block, int max_procs,
                                   int &comm_size) {
  const Transfer1D r = random_transfer(rng, max_extent, max_block, max_procs);
  const Transfer1D c = random_transfer(rng, max_extent, max_block, max_procs);
  Transfer t;
  t.m = r.length;
  t.n = c.length;
  t.src = {r.src, c.src, {r.src.nprocs, c.src.nprocs, {}}, r.src_start, c.src_start};
  t.dst = {r.dst, c.dst, {r.dst.nprocs, c.dst.nprocs, {}}, r.dst_start, c.dst_start};
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
