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
