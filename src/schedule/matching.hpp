#pragma once
// Bipartite matching primitives for the schedulers (schedule_matching.hpp): maximum
// cardinality (Hopcroft-Karp), maximum weight (Hungarian method with Dijkstra),
// maximum weight among the matchings that cover the most marked vertices (Desprez et al. 1998's
// Stepwise), perfect and bottleneck perfect matchings (Jeannot & Wagner 2004's WRGP and OGGP).
//
// Pure and deterministic: a result depends only on the graph, including the order of its
// edges, never on addresses or hashing, so every process computes the same matchings. No MPI.

#include "layout.hpp"

#include <cstddef>
#include <optional>
#include <string>
#include <vector>

namespace redist {

struct WeightedEdge {
  int left = 0;
  int right = 0;
  Index weight = 0;
};

/// Vertices 0..left-1 on one side and 0..right-1 on the other; parallel edges are allowed.
struct BipartiteGraph {
  int left = 0;
  int right = 0;
  std::vector<WeightedEdge> edges;
};

/// Indices into BipartiteGraph::edges, increasing; no two of the edges share a vertex.
using Matching = std::vector<std::size_t>;

/// Empty when `matching` is a matching of `graph` (valid, increasing edge indices, no shared
/// vertex), else the first problem found.
[[nodiscard]] std::string matching_problem(const BipartiteGraph &graph, const Matching &matching);

[[nodiscard]] Index matching_weight(const BipartiteGraph &graph, const Matching &matching);

/// A matching of maximum cardinality (Hopcroft-Karp, O(E sqrt(V))), grown from `start`.
/// @pre every edge's endpoints are vertices of the graph; `start` is a matching of `graph`
/// (std::invalid_argument otherwise).
[[nodiscard]] Matching maximum_cardinality_matching(const BipartiteGraph &graph,
                                                    const Matching &start = {});

/// A matching of maximum total weight; among those, one of maximum total `tie_break` (one
/// value per edge; empty means none). Edges that add nothing (weight and tie-break <= 0) are
/// never taken. The Hungarian method adding one left vertex at a time, each a Dijkstra search
/// on the dual slacks that stops at its first end: O(V E log V) at worst, about O(E log V)
/// when most vertices find a free partner at once.
[[nodiscard]] Matching maximum_weight_matching(const BipartiteGraph &graph,
                                               const std::vector<Index> &tie_break = {});

/// Among the matchings that cover the largest number of marked vertices, one of maximum
/// weight, and among those one of maximum total `tie_break`. When a matching covering every
/// marked vertex exists, the result covers them all. `left_marked` has graph.left entries,
/// `right_marked` graph.right entries.
[[nodiscard]] Matching maximum_weight_matching_covering(const BipartiteGraph &graph,
                                                        const std::vector<bool> &left_marked,
                                                        const std::vector<bool> &right_marked,
                                                        const std::vector<Index> &tie_break = {});

/// A perfect matching (every vertex covered; needs left == right), grown from `start`;
/// std::nullopt when there is none.
[[nodiscard]] std::optional<Matching> perfect_matching(const BipartiteGraph &graph,
                                                       const Matching &start = {});

/// A perfect matching whose lightest edge is as heavy as possible (bottleneck, max-min): a
/// search over the distinct weights, each threshold tested with Hopcroft-Karp (O(log) tests,
/// O(E sqrt(V)) each). std::nullopt when the graph has no perfect matching. `start` seeds the
/// first test.
[[nodiscard]] std::optional<Matching> bottleneck_perfect_matching(const BipartiteGraph &graph,
                                                                  const Matching &start = {});

} // namespace redist
