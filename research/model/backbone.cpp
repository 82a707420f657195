#include "backbone.hpp"

#include <algorithm>
#include <array>
#include <limits>
#include <stdexcept>
#include <string>
#include <vector>

namespace redist {
namespace {

void require_setup(const char *call, double beta) {
  if (!(beta >= 0.0)) {
    throw std::invalid_argument(std::string(call) + ": beta = " + std::to_string(beta) +
                                ": the step setup time must be >= 0");
  }
}

/// The capacities a message uses in the fluid model: its sender's card, its receiver's card
/// and the backbone, as indices into the capacity vector.
using Links = std::array<std::size_t, 3>;

/// Max-min fair rates of the `active` messages by progressive filling (Bertsekas & Gallager,
/// "Data Networks", Sec. 6.5.2): the rates of all messages not yet frozen rise together until a
/// capacity fills; the messages through a full capacity keep their rate, the others rise on.
void max_min_fair_rates(const std::vector<Links> &links, const std::vector<std::size_t> &active,
                        const std::vector<double> &capacity, std::vector<double> &rate) {
  std::vector<double> room = capacity;
  std::vector<Index> rising_through(capacity.size(), 0);
  for (const std::size_t m : active) {
    for (const std::size_t c : links[m]) {
      ++rising_through[c];
    }
  }
  std::vector<std::size_t> rising = active;
  std::vector<char> full(capacity.size(), 0);
  double level = 0.0;
  while (!rising.empty()) {
    double raise = std::numeric_limits<double>::infinity();
    std::size_t first_full = 0;
    for (std::size_t c = 0; c < capacity.size(); ++c) {
      if (rising_through[c] > 0 && room[c] / static_cast<double>(rising_through[c]) < raise) {
        raise = room[c] / static_cast<double>(rising_through[c]);
        first_full = c;
      }
    }
    level += raise;
    for (std::size_t c = 0; c < capacity.size(); ++c) {
      if (rising_through[c] > 0) {
        room[c] -= raise * static_cast<double>(rising_through[c]);
        full[c] = c == first_full || room[c] <= 1e-12 * capacity[c] ? 1 : 0;
      }
    }
    std::erase_if(rising, [&](std::size_t m) {
      const Links &through = links[m];
      if (std::none_of(through.begin(), through.end(), [&](std::size_t c) { return full[c]; })) {
        return false;
      }
      rate[m] = level;
      for (const std::size_t c : through) {
        --rising_through[c];
      }
      return true;
    });
  }
}

} // namespace

double backbone_schedule_cost(const VolumeGraph &graph, const Schedule &schedule, int k,
                              double beta) {
  require_setup("backbone_schedule_cost", beta);
  const std::string why =
      check_schedule(graph, schedule, ScheduleLimits{true, backbone_streams(graph, k)});
  if (!why.empty()) {
    throw std::invalid_argument("backbone_schedule_cost: not a schedule of the backbone model: " +
                                why);
  }
  // For matching steps the busiest node of a step sends its largest piece.
  return schedule_stats(schedule, CostModel{0.0, 1.0, beta}, 1).seconds;
}

double backbone_all_at_once_cost(const VolumeGraph &graph, int k, double beta) {
  require_setup("backbone_all_at_once_cost", beta);
  std::vector<Links> links;
  std::vector<double> left;
  const auto senders = static_cast<std::size_t>(graph.senders);
  const auto receivers = static_cast<std::size_t>(graph.receivers);
  const std::size_t backbone = senders + receivers;
  for (const Message &m : graph.messages) {
    if (m.volume > 0) {
      links.push_back(
          {static_cast<std::size_t>(m.src), senders + static_cast<std::size_t>(m.dst), backbone});
      left.push_back(static_cast<double>(m.volume));
    }
  }
  if (links.empty()) {
    return 0.0;
  }
  std::vector<double> capacity(backbone + 1, 1.0);
  capacity[backbone] = backbone_streams(graph, k);
  std::vector<std::size_t> active(links.size());
  for (std::size_t m = 0; m < active.size(); ++m) {
    active[m] = m;
  }
  std::vector<double> rate(links.size(), 0.0);
  double now = 0.0;
  while (!active.empty()) {
    max_min_fair_rates(links, active, capacity, rate);
    double next = std::numeric_limits<double>::infinity();
    for (const std::size_t m : active) {
      next = std::min(next, left[m] / rate[m]);
    }
    now += next;
    // Messages due within rounding of the next completion complete with it.
    std::erase_if(active, [&](std::size_t m) {
      if (left[m] / rate[m] <= next * (1.0 + 1e-9)) {
        return true;
      }
      left[m] -= rate[m] * next;
      return false;
    });
  }
  return beta + now;
}

} // namespace redist
