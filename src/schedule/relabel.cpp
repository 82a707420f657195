#include "relabel.hpp"

#include "matching.hpp"
#include "schedule.hpp"

#include <algorithm>
#include <set>
#include <stdexcept>
#include <tuple>
#include <unordered_map>

namespace redist {

std::vector<int> default_candidates(const Layout &src, int positions) {
  std::vector<int> out;
  std::set<int> seen;
  for (const int r : src.grid.ranks) {
    if (seen.insert(r).second) out.push_back(r);
  }
  for (int r = 0; static_cast<int>(out.size()) < positions; ++r) {
    if (!seen.contains(r)) out.push_back(r);
  }
  return out;
}

namespace {

struct Weight {
  int position = 0;
  int candidate = 0;
  Index volume = 0;
};

// Every positive (destination position, candidate) volume, merged, sorted by (position, candidate).
std::vector<Weight> weights(const Transfer &t, const std::vector<int> &candidates) {
  if (t.region.kind != Region::Kind::full) {
    throw std::invalid_argument("relabelling needs a full window: a trapezoid's volumes are not "
                                "products of the 1-D ones");
  }
  const VolumeGraph rows = volume_graph(t.rows());
  const VolumeGraph cols = volume_graph(t.cols());
  // Source grid position -> candidate index (or -1), in O(positions + candidates): the
  // candidates may be every rank of a large communicator.
  std::unordered_map<int, int> index_of;
  index_of.reserve(candidates.size());
  for (std::size_t c = 0; c < candidates.size(); ++c)
    index_of.emplace(candidates[c], static_cast<int>(c));
  std::vector<int> candidate_of(t.src.grid.ranks.size(), -1);
  for (std::size_t s = 0; s < t.src.grid.ranks.size(); ++s) {
    const auto it = index_of.find(t.src.grid.ranks[s]);
    if (it != index_of.end()) candidate_of[s] = it->second;
  }
  std::vector<Weight> out;
  for (const Message &r : rows.messages) {
    for (const Message &c : cols.messages) {
      // r.src is A's coordinate along perm[0], c.src along perm[1].
      const int a_row = t.perm[0] == 0 ? r.src : c.src;
      const int a_col = t.perm[0] == 0 ? c.src : r.src;
      const int cand = candidate_of[static_cast<std::size_t>(a_row) +
                                    static_cast<std::size_t>(a_col) *
                                        static_cast<std::size_t>(t.src.grid.nprow)];
      if (cand < 0) continue;
      out.push_back({r.dst + c.dst * t.dst.grid.nprow, cand, r.volume * c.volume});
    }
  }
  std::sort(out.begin(), out.end(), [](const Weight &x, const Weight &y) {
    return std::tie(x.position, x.candidate) < std::tie(y.position, y.candidate);
  });
  std::vector<Weight> merged;
  for (const Weight &w : out) {
    if (!merged.empty() && merged.back().position == w.position &&
        merged.back().candidate == w.candidate) {
      merged.back().volume += w.volume;
    } else {
      merged.push_back(w);
    }
  }
  return merged;
}

} // namespace

Index kept_volume(const Transfer &t, int rank, int pr, int pc) {
  const int position = pr + pc * t.dst.grid.nprow;
  Index sum = 0;
  for (const Weight &w : weights(t, {rank})) {
    if (w.position == position) sum += w.volume;
  }
  return sum;
}

Relabelling propose_relabelling(const Transfer &t, std::vector<int> candidates,
                                std::size_t element_bytes) {
  const int positions = t.dst.grid.nprow * t.dst.grid.npcol;
  if (candidates.empty()) candidates = default_candidates(t.src, positions);
  if (std::set<int>(candidates.begin(), candidates.end()).size() != candidates.size() ||
      static_cast<int>(candidates.size()) < positions) {
    throw std::invalid_argument("relabelling needs at least nprow*npcol distinct candidate ranks");
  }
  const std::vector<Weight> w = weights(t, candidates);

  // Left: destination positions; right: candidates. Identity edges carry a tie-break of 1 so
  // that, among maximum-volume assignments, ranks stay where the identity order puts them.
  BipartiteGraph graph{positions, static_cast<int>(candidates.size()), {}};
  std::vector<Index> tie_break;
  std::vector<bool> has_identity(static_cast<std::size_t>(positions), false);
  for (const Weight &x : w) {
    graph.edges.push_back({x.position, x.candidate, x.volume});
    tie_break.push_back(x.position == x.candidate ? 1 : 0);
    if (x.position == x.candidate) has_identity[static_cast<std::size_t>(x.position)] = true;
  }
  for (int p = 0; p < positions; ++p) {
    if (!has_identity[static_cast<std::size_t>(p)]) {
      graph.edges.push_back({p, p, 0});
      tie_break.push_back(1);
    }
  }
  const Matching matching = maximum_weight_matching(graph, tie_break);

  Relabelling out;
  out.element_bytes = element_bytes;
  out.total_elements = t.m * t.n;
  out.identity = {t.dst.grid.nprow, t.dst.grid.npcol, {}};
  out.grid = out.identity;
  out.identity.ranks.assign(candidates.begin(), candidates.begin() + positions);
  std::vector<int> assigned(static_cast<std::size_t>(positions), -1);
  std::vector<bool> used(candidates.size(), false);
  for (const std::size_t e : matching) {
    const WeightedEdge &edge = graph.edges[e];
    assigned[static_cast<std::size_t>(edge.left)] = edge.right;
    used[static_cast<std::size_t>(edge.right)] = true;
  }
  // Positions left without a partner take the unused candidates in order.
  std::size_t next = 0;
  for (int &a : assigned) {
    if (a >= 0) continue;
    while (used[next])
      ++next;
    a = static_cast<int>(next);
    used[next] = true;
  }
  for (const int a : assigned)
    out.grid.ranks.push_back(candidates[static_cast<std::size_t>(a)]);
  for (const Weight &x : w) {
    if (x.position == x.candidate) out.kept_before += x.volume;
    if (assigned[static_cast<std::size_t>(x.position)] == x.candidate) out.kept_after += x.volume;
  }
  return out;
}

} // namespace redist
