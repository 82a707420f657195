#include "matching.hpp"

#include <algorithm>
#include <compare>
#include <functional>
#include <limits>
#include <queue>
#include <stdexcept>
#include <tuple>
#include <utility>

namespace redist {
namespace {

constexpr std::size_t kFree = std::numeric_limits<std::size_t>::max();
constexpr int kUnreached = std::numeric_limits<int>::max();
constexpr Index kAnyWeight = std::numeric_limits<Index>::min();

std::size_t at(int vertex) {
  return static_cast<std::size_t>(vertex);
}

void require_valid_edges(const BipartiteGraph &graph) {
  if (graph.left < 0 || graph.right < 0) {
    throw std::invalid_argument("bipartite graph: negative vertex count");
  }
  for (std::size_t e = 0; e < graph.edges.size(); ++e) {
    const WeightedEdge &edge = graph.edges[e];
    if (edge.left < 0 || edge.left >= graph.left || edge.right < 0 || edge.right >= graph.right) {
      throw std::invalid_argument("bipartite graph: edge " + std::to_string(e) + " (" +
                                  std::to_string(edge.left) + ", " + std::to_string(edge.right) +
                                  ") names no vertex");
    }
  }
}

using Adjacency = std::vector<std::vector<std::size_t>>;

/// The edges at each left vertex, in edge order.
Adjacency left_adjacency(const BipartiteGraph &graph) {
  Adjacency adjacency(at(graph.left));
  for (std::size_t e = 0; e < graph.edges.size(); ++e) {
    adjacency[at(graph.edges[e].left)].push_back(e);
  }
  return adjacency;
}

/// The matched edge at each vertex, kFree when the vertex is not covered.
struct Mates {
  std::vector<std::size_t> left;
  std::vector<std::size_t> right;

  explicit Mates(const BipartiteGraph &graph)
      : left(at(graph.left), kFree), right(at(graph.right), kFree) {}

  void match(const BipartiteGraph &graph, std::size_t e) {
    left[at(graph.edges[e].left)] = e;
    right[at(graph.edges[e].right)] = e;
  }

  [[nodiscard]] Matching edges() const {
    Matching out;
    for (const std::size_t e : left) {
      if (e != kFree) {
        out.push_back(e);
      }
    }
    std::sort(out.begin(), out.end());
    return out;
  }

  [[nodiscard]] std::size_t size() const {
    return static_cast<std::size_t>(
        std::count_if(left.begin(), left.end(), [](std::size_t e) { return e != kFree; }));
  }
};

Mates mates_of(const BipartiteGraph &graph, const Matching &matching) {
  if (const std::string why = matching_problem(graph, matching); !why.empty()) {
    throw std::invalid_argument("start matching: " + why);
  }
  Mates mates(graph);
  for (const std::size_t e : matching) {
    mates.match(graph, e);
  }
  return mates;
}

/// The mates whose edges weigh at least min_weight.
Mates keep_heavy(const BipartiteGraph &graph, const Mates &mates, Index min_weight) {
  Mates kept(graph);
  for (const std::size_t e : mates.left) {
    if (e != kFree && graph.edges[e].weight >= min_weight) {
      kept.match(graph, e);
    }
  }
  return kept;
}

/// Hopcroft-Karp: grows `mates` into a maximum matching of the edges weighing at least
/// min_weight. Each phase layers the graph by a breadth-first search from the free left
/// vertices and augments along vertex-disjoint shortest paths found depth-first (iteratively,
/// so long paths do not exhaust the call stack).
void hopcroft_karp(const BipartiteGraph &graph, const Adjacency &adjacency, Index min_weight,
                   Mates &mates) {
  const std::size_t left_count = at(graph.left);
  std::vector<int> layer(left_count);
  std::vector<std::size_t> next_arc(left_count);
  std::vector<std::size_t> via(left_count);
  std::vector<std::size_t> queue;
  std::vector<std::size_t> path;
  for (;;) {
    queue.clear();
    for (std::size_t l = 0; l < left_count; ++l) {
      layer[l] = mates.left[l] == kFree ? 0 : kUnreached;
      if (layer[l] == 0) {
        queue.push_back(l);
      }
    }
    int free_layer = kUnreached;
    for (std::size_t head = 0; head < queue.size(); ++head) {
      const std::size_t l = queue[head];
      if (layer[l] >= free_layer) {
        continue;
      }
      for (const std::size_t e : adjacency[l]) {
        if (graph.edges[e].weight < min_weight) {
          continue;
        }
        const std::size_t mate = mates.right[at(graph.edges[e].right)];
        if (mate == kFree) {
          free_layer = std::min(free_layer, layer[l] + 1);
        } else if (const std::size_t next = at(graph.edges[mate].left); layer[next] == kUnreached) {
          layer[next] = layer[l] + 1;
          queue.push_back(next);
        }
      }
    }
    if (free_layer == kUnreached) {
      return;
    }
    std::fill(next_arc.begin(), next_arc.end(), 0);
    bool augmented = false;
    for (std::size_t root = 0; root < left_count; ++root) {
      if (mates.left[root] != kFree || layer[root] != 0) {
        continue;
      }
      path.assign(1, root);
      while (!path.empty()) {
        const std::size_t l = path.back();
        bool moved = false;
        while (!moved && next_arc[l] < adjacency[l].size()) {
          const std::size_t e = adjacency[l][next_arc[l]++];
          if (graph.edges[e].weight < min_weight) {
            continue;
          }
          const std::size_t mate = mates.right[at(graph.edges[e].right)];
          if (mate == kFree) {
            if (layer[l] + 1 == free_layer) {
              via[l] = e;
              for (const std::size_t on_path : path) {
                mates.match(graph, via[on_path]);
                layer[on_path] = kUnreached;
              }
              path.clear();
              augmented = true;
              moved = true;
            }
          } else if (const std::size_t next = at(graph.edges[mate].left);
                     layer[next] != kUnreached && layer[next] == layer[l] + 1) {
            via[l] = e;
            path.push_back(next);
            moved = true;
          }
        }
        if (!moved) {
          layer[l] = kUnreached;
          path.pop_back();
        }
      }
    }
    if (!augmented) {
      return;
    }
  }
}

/// A weight compared lexicographically: marked vertices covered, then weight, then tie-break.
/// Stepwise's weight c(e) + B |e n S| with B > sum c, without the overflow of forming B.
struct TieredWeight {
  Index covered = 0;
  Index weight = 0;
  Index tie = 0;
  friend std::strong_ordering operator<=>(const TieredWeight &a, const TieredWeight &b) {
    return std::tie(a.covered, a.weight, a.tie) <=> std::tie(b.covered, b.weight, b.tie);
  }
  friend TieredWeight operator+(const TieredWeight &a, const TieredWeight &b) {
    return {a.covered + b.covered, a.weight + b.weight, a.tie + b.tie};
  }
  friend TieredWeight operator-(const TieredWeight &a, const TieredWeight &b) {
    return {a.covered - b.covered, a.weight - b.weight, a.tie - b.tie};
  }
};

std::vector<TieredWeight> tiered_weights(const BipartiteGraph &graph,
                                         const std::vector<bool> &left_marked,
                                         const std::vector<bool> &right_marked,
                                         const std::vector<Index> &tie_break) {
  if ((!left_marked.empty() && left_marked.size() != at(graph.left)) ||
      (!right_marked.empty() && right_marked.size() != at(graph.right))) {
    throw std::invalid_argument("maximum weight matching: one mark per vertex needed");
  }
  if (!tie_break.empty() && tie_break.size() != graph.edges.size()) {
    throw std::invalid_argument("maximum weight matching: one tie-break value per edge needed");
  }
  std::vector<TieredWeight> weight;
  weight.reserve(graph.edges.size());
  for (std::size_t e = 0; e < graph.edges.size(); ++e) {
    const WeightedEdge &edge = graph.edges[e];
    const bool left = !left_marked.empty() && left_marked[at(edge.left)];
    const bool right = !right_marked.empty() && right_marked[at(edge.right)];
    weight.push_back(
        {(left ? 1 : 0) + (right ? 1 : 0), edge.weight, tie_break.empty() ? 0 : tie_break[e]});
  }
  return weight;
}

/// Maximum weight matching as a min-cost flow source -> left -> right -> sink with edge cost
/// -weight, by successive shortest augmenting paths (Dijkstra on costs reduced by vertex
/// potentials, stopped when the sink is settled); the augmentation stops at the first path
/// that does not increase the weight (path costs never decrease, so that is the optimum).
Matching successive_shortest_paths(const BipartiteGraph &graph,
                                   const std::vector<TieredWeight> &weight) {
  const std::size_t left_count = at(graph.left);
  const std::size_t right_count = at(graph.right);
  const std::size_t sink = left_count + right_count;
  const auto right_node = [&](int right) { return left_count + at(right); };
  const Adjacency adjacency = left_adjacency(graph);

  // Feasible start: left potentials 0, right potential = -(heaviest edge at the vertex), so
  // every reduced cost -w(i,j) + pi(i) - pi(j) is >= 0; the sink lies below every right vertex.
  std::vector<TieredWeight> potential(sink + 1);
  std::vector<bool> has_edge(right_count, false);
  for (std::size_t e = 0; e < graph.edges.size(); ++e) {
    const std::size_t j = at(graph.edges[e].right);
    const TieredWeight cost = TieredWeight{} - weight[e];
    if (!has_edge[j] || cost < potential[left_count + j]) {
      potential[left_count + j] = cost;
      has_edge[j] = true;
    }
  }
  for (std::size_t j = 0; j < right_count; ++j) {
    potential[sink] = std::min(potential[sink], potential[left_count + j]);
  }

  Mates mates(graph);
  std::vector<TieredWeight> distance(sink + 1);
  std::vector<bool> reached(sink + 1);
  std::vector<bool> settled(sink + 1);
  std::vector<std::size_t> arrival(right_count, kFree); // edge by which a right vertex is reached
  std::size_t sink_arrival = 0;                         // free right vertex before the sink
  using Entry = std::pair<TieredWeight, std::size_t>;
  std::priority_queue<Entry, std::vector<Entry>, std::greater<>> heap;
  for (;;) {
    std::fill(reached.begin(), reached.end(), false);
    std::fill(settled.begin(), settled.end(), false);
    const auto relax = [&](std::size_t node, const TieredWeight &d) {
      if (!reached[node] || d < distance[node]) {
        reached[node] = true;
        distance[node] = d;
        heap.emplace(d, node);
        return true;
      }
      return false;
    };
    for (std::size_t i = 0; i < left_count; ++i) {
      if (mates.left[i] == kFree) {
        relax(i, TieredWeight{} - potential[i]);
      }
    }
    while (!heap.empty()) {
      const auto [d, node] = heap.top();
      heap.pop();
      if (settled[node]) {
        continue;
      }
      settled[node] = true;
      if (node == sink) {
        break;
      }
      if (node < left_count) {
        for (const std::size_t e : adjacency[node]) {
          if (e == mates.left[node]) {
            continue;
          }
          const std::size_t j = right_node(graph.edges[e].right);
          if (relax(j, d - weight[e] + potential[node] - potential[j])) {
            arrival[j - left_count] = e;
          }
        }
      } else if (const std::size_t e = mates.right[node - left_count]; e == kFree) {
        if (relax(sink, d + potential[node] - potential[sink])) {
          sink_arrival = node - left_count;
        }
      } else {
        const std::size_t i = at(graph.edges[e].left);
        relax(i, d + weight[e] + potential[node] - potential[i]);
      }
    }
    while (!heap.empty()) {
      heap.pop();
    }
    if (!settled[sink]) {
      break;
    }
    const TieredWeight path_cost = distance[sink] + potential[sink];
    if (path_cost >= TieredWeight{}) {
      break;
    }
    for (std::size_t node = 0; node <= sink; ++node) {
      potential[node] = potential[node] + (settled[node] ? distance[node] : distance[sink]);
    }
    for (std::size_t j = sink_arrival;;) {
      const std::size_t e = arrival[j];
      const std::size_t i = at(graph.edges[e].left);
      const std::size_t previous = mates.left[i];
      mates.match(graph, e);
      if (previous == kFree) {
        break;
      }
      j = at(graph.edges[previous].right);
    }
  }
  Matching result = mates.edges();
  std::erase_if(result, [&](std::size_t e) { return weight[e] <= TieredWeight{}; });
  return result;
}

} // namespace

std::string matching_problem(const BipartiteGraph &graph, const Matching &matching) {
  std::vector<bool> left_used(at(std::max(graph.left, 0)), false);
  std::vector<bool> right_used(at(std::max(graph.right, 0)), false);
  for (std::size_t n = 0; n < matching.size(); ++n) {
    const std::size_t e = matching[n];
    if (e >= graph.edges.size()) {
      return "edge index " + std::to_string(e) + " out of range";
    }
    if (n > 0 && e <= matching[n - 1]) {
      return "edge indices not increasing at " + std::to_string(e);
    }
    const WeightedEdge &edge = graph.edges[e];
    if (edge.left < 0 || edge.left >= graph.left || edge.right < 0 || edge.right >= graph.right) {
      return "edge " + std::to_string(e) + " names no vertex";
    }
    if (left_used[at(edge.left)] || right_used[at(edge.right)]) {
      return "edge " + std::to_string(e) + " shares a vertex with an earlier edge";
    }
    left_used[at(edge.left)] = true;
    right_used[at(edge.right)] = true;
  }
  return {};
}

Index matching_weight(const BipartiteGraph &graph, const Matching &matching) {
  Index sum = 0;
  for (const std::size_t e : matching) {
    sum += graph.edges[e].weight;
  }
  return sum;
}

Matching maximum_cardinality_matching(const BipartiteGraph &graph, const Matching &start) {
  require_valid_edges(graph);
  Mates mates = mates_of(graph, start);
  hopcroft_karp(graph, left_adjacency(graph), kAnyWeight, mates);
  return mates.edges();
}

Matching maximum_weight_matching(const BipartiteGraph &graph, const std::vector<Index> &tie_break) {
  require_valid_edges(graph);
  return successive_shortest_paths(graph, tiered_weights(graph, {}, {}, tie_break));
}

Matching maximum_weight_matching_covering(const BipartiteGraph &graph,
                                          const std::vector<bool> &left_marked,
                                          const std::vector<bool> &right_marked,
                                          const std::vector<Index> &tie_break) {
  require_valid_edges(graph);
  if (left_marked.size() != at(graph.left) || right_marked.size() != at(graph.right)) {
    throw std::invalid_argument("maximum_weight_matching_covering: one mark per vertex needed");
  }
  return successive_shortest_paths(graph,
                                   tiered_weights(graph, left_marked, right_marked, tie_break));
}

std::optional<Matching> perfect_matching(const BipartiteGraph &graph, const Matching &start) {
  require_valid_edges(graph);
  if (graph.left != graph.right) {
    return std::nullopt;
  }
  Mates mates = mates_of(graph, start);
  hopcroft_karp(graph, left_adjacency(graph), kAnyWeight, mates);
  if (mates.size() != at(graph.left)) {
    return std::nullopt;
  }
  return mates.edges();
}

std::optional<Matching> bottleneck_perfect_matching(const BipartiteGraph &graph,
                                                    const Matching &start) {
  require_valid_edges(graph);
  if (graph.left != graph.right) {
    return std::nullopt;
  }
  if (graph.left == 0) {
    return Matching{};
  }
  // Every vertex is matched by one of its edges, so no threshold above the lightest of the
  // vertices' heaviest edges can work.
  std::vector<std::optional<Index>> heaviest(at(graph.left) + at(graph.right));
  for (const WeightedEdge &e : graph.edges) {
    for (const std::size_t v : {at(e.left), at(graph.left) + at(e.right)}) {
      heaviest[v] = std::max(heaviest[v].value_or(e.weight), e.weight);
    }
  }
  if (std::any_of(heaviest.begin(), heaviest.end(), [](const auto &h) { return !h; })) {
    return std::nullopt; // a vertex without edges
  }
  Index ceiling = *heaviest.front();
  for (const auto &h : heaviest) {
    ceiling = std::min(ceiling, *h);
  }
  std::vector<Index> thresholds;
  for (const WeightedEdge &e : graph.edges) {
    if (e.weight <= ceiling) {
      thresholds.push_back(e.weight);
    }
  }
  std::sort(thresholds.begin(), thresholds.end(), std::greater<>());
  thresholds.erase(std::unique(thresholds.begin(), thresholds.end()), thresholds.end());

  const Adjacency adjacency = left_adjacency(graph);
  const auto perfect = [&](const Mates &m) { return m.size() == at(graph.left); };
  // Feasibility falls as the threshold rises. `lower` holds a maximum matching at the highest
  // threshold known to fail: it is a valid start at every lower threshold.
  Mates lower = keep_heavy(graph, mates_of(graph, start), thresholds.front());
  hopcroft_karp(graph, adjacency, thresholds.front(), lower);
  if (perfect(lower)) {
    return lower.edges();
  }
  Mates upper = lower;
  hopcroft_karp(graph, adjacency, thresholds.back(), upper);
  if (!perfect(upper)) {
    return std::nullopt;
  }
  std::size_t failing = 0;
  std::size_t working = thresholds.size() - 1;
  while (working - failing > 1) {
    const std::size_t middle = failing + (working - failing) / 2;
    Mates trial = lower;
    hopcroft_karp(graph, adjacency, thresholds[middle], trial);
    if (perfect(trial)) {
      working = middle;
      upper = std::move(trial);
    } else {
      failing = middle;
      lower = std::move(trial);
    }
  }
  return upper.edges();
}

} // namespace redist
