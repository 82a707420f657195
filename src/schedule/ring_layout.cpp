// Targets and final layouts of ring rebalancing: targets in proportion to weights (the speeds
// of Renard, Robert & Vivien 2004, Sec. 8), where each process's items start after the flows,
// and the direct transfer of the same rebalance, costed as a preemptive open shop (Gonzalez &
// Sahni 1976). Pure, no MPI.

#include "ring.hpp"
#include "ring_arithmetic.hpp"

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <numeric>
#include <utility>
#include <vector>

namespace redist::ring {

// --- Targets and final layout --------------------------------------------------------------------

std::vector<Index> targets_from_weights(Index total, const std::vector<double> &weights) {
  const std::size_t n = weights.size();
  if (n == 0) throw InputError("n", "0", "at least one weight is needed");
  long double sum = 0.0L;
  for (std::size_t k = 0; k < n; ++k) {
    if (!(weights[k] > 0.0) || std::isinf(weights[k]))
      throw InputError(indexed("weights", k), show(weights[k]), "weights must be finite and > 0");
    sum += weights[k];
  }
  if (total < static_cast<Index>(n))
    throw InputError("total", std::to_string(total),
                     "fewer items than processes: every process must keep at least one (" +
                         std::to_string(n) + " processes)");
  // One item each, the rest in proportion to the weights, largest remainders first.
  const Index rest = total - static_cast<Index>(n);
  std::vector<Index> t(n, 1);
  std::vector<std::pair<long double, std::size_t>> remainders(n);
  Index given = 0;
  for (std::size_t k = 0; k < n; ++k) {
    const long double share = static_cast<long double>(rest) * weights[k] / sum;
    const auto whole = std::min(static_cast<Index>(std::floor(share)), rest - given);
    t[k] += whole;
    given += whole;
    remainders[k] = {share - static_cast<long double>(whole), k};
  }
  std::stable_sort(remainders.begin(), remainders.end(),
                   [](const auto &a, const auto &b) { return a.first > b.first; });
  for (std::size_t i = 0; given < rest; i = (i + 1) % n, ++given)
    ++t[remainders[i].second];
  return t;
}

std::vector<Index> final_starts(const std::vector<Index> &loads, const std::vector<Index> &flow) {
  const std::size_t n = loads.size();
  const Index total = std::accumulate(loads.begin(), loads.end(), Index{0});
  std::vector<Index> starts(n);
  Index a = 0;
  for (std::size_t k = 0; k < n; ++k) {
    const Index s = (a - flow[wrap(static_cast<Index>(k) - 1, n)]) % total;
    starts[k] = s < 0 ? s + total : s;
    a += loads[k];
  }
  return starts;
}

std::vector<DirectPiece> direct_pieces(const std::vector<Index> &loads,
                                       const std::vector<Index> &flow, int only_rank) {
  const std::size_t n = loads.size();
  const Index total = std::accumulate(loads.begin(), loads.end(), Index{0});
  const std::vector<Index> starts = final_starts(loads, flow);
  std::vector<Index> first(n + 1, 0); // initial ranges [first[k], first[k+1])
  for (std::size_t k = 0; k < n; ++k)
    first[k + 1] = first[k] + loads[k];
  std::vector<Index> targets(n);
  for (std::size_t k = 0; k < n; ++k)
    targets[k] = loads[k] - flow[k] + flow[wrap(static_cast<Index>(k) - 1, n)];
  std::vector<DirectPiece> pieces;
  const auto overlap = [&](std::size_t p, std::size_t q) {
    // Final range of q: cyclic [starts[q], starts[q] + targets[q]), cut at the end of the
    // sequence into at most two linear ranges.
    const Index s = starts[q];
    const Index e = s + targets[q];
    const Index parts[2][3] = {{s, std::min(e, total), 0}, {0, e - total, total - s}};
    for (const auto &part : parts) {
      const Index lo = std::max(part[0], first[p]);
      const Index hi = std::min(part[1], first[p + 1]);
      if (lo < hi)
        pieces.push_back({static_cast<int>(p), static_cast<int>(q), lo - first[p],
                          part[2] + lo - part[0], hi - lo});
    }
  };
  for (std::size_t p = 0; p < n; ++p) {
    for (std::size_t q = 0; q < n; ++q) {
      if (only_rank < 0 || static_cast<int>(p) == only_rank || static_cast<int>(q) == only_rank)
        overlap(p, q);
    }
  }
  std::sort(pieces.begin(), pieces.end(), [](const DirectPiece &a, const DirectPiece &b) {
    return a.from != b.from ? a.from < b.from
                            : (a.to != b.to ? a.to < b.to : a.from_offset < b.from_offset);
  });
  return pieces;
}

double direct_time(const Problem &p, const std::vector<DirectPiece> &pieces) {
  const std::size_t n = p.loads.size();
  const bool bi = p.direction == Direction::bidirectional;
  std::vector<double> out(n);
  std::vector<double> in(n);
  for (std::size_t k = 0; k < n; ++k) {
    const std::size_t prev = wrap(static_cast<Index>(k) - 1, n);
    const std::size_t next = wrap(static_cast<Index>(k) + 1, n);
    out[k] = bi ? std::min(p.c_next[k], p.c_prev[k]) : p.c_next[k];
    in[k] = bi ? std::min(p.c_next[prev], p.c_prev[next]) : p.c_next[prev];
  }
  std::vector<double> sending(n, 0.0);
  std::vector<double> receiving(n, 0.0);
  for (const DirectPiece &m : pieces) {
    if (m.from == m.to) continue;
    const auto f = static_cast<std::size_t>(m.from);
    const auto t = static_cast<std::size_t>(m.to);
    const double c = cost_of(m.items, std::max(out[f], in[t]));
    sending[f] += c;
    receiving[t] += c;
  }
  double time = 0.0;
  for (std::size_t k = 0; k < n; ++k)
    time = std::max({time, sending[k], receiving[k]});
  return time;
}

} // namespace redist::ring
