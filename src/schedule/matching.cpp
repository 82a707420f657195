#include "matching.hpp"

#include <algorithm>
#include <array>
#include <compare>
#include <cstdint>
#include <functional>
#include <limits>
#include <queue>
#include <span>
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

/// The edges at each left vertex, in edge order, in one array (compressed rows).
class Adjacency {
public:
  explicit Adjacency(const BipartiteGraph &graph)
      : first_(at(graph.left) + 1, 0), edges_(graph.edges.size()) {
    for (const WeightedEdge &e : graph.edges) {
      ++first_[at(e.left) + 1];
    }
    for (std::size_t l = 1; l < first_.size(); ++l) {
      first_[l] += first_[l - 1];
    }
    std::vector<std::size_t> next(first_.begin(), first_.end() - 1);
    for (std::size_t e = 0; e < graph.edges.size(); ++e) {
      edges_[next[at(graph.edges[e].left)]++] = e;
    }
  }

  [[nodiscard]] std::span<const std::size_t> operator[](std::size_t left) const {
    return {edges_.data() + first_[left], first_[left + 1] - first_[left]};
  }

private:
  std::vector<std::size_t> first_; ///< edges of left vertex l: edges_[first_[l], first_[l + 1])
  std::vector<std::size_t> edges_;
};

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

/// Sorts values in decreasing order and drops repeats. A least-significant-digit radix sort of
/// the offsets from the smallest value, a byte per pass over the bytes the largest offset
/// uses: OGGP calls this on every step with the weights of its whole graph, where comparison
/// sorting took over 40% of its time.
void sort_distinct_decreasing(std::vector<Index> &values) {
  if (values.empty()) {
    return;
  }
  const auto [smallest, largest] = std::minmax_element(values.begin(), values.end());
  const auto base = static_cast<std::uint64_t>(*smallest);
  const std::uint64_t span = static_cast<std::uint64_t>(*largest) - base;
  const auto digit = [base](Index v, int shift) {
    return 255 - ((static_cast<std::uint64_t>(v) - base) >> shift & 255); // reversed: decreasing
  };
  std::vector<Index> buffer(values.size());
  for (int shift = 0; shift < 64 && span >> shift > 0; shift += 8) {
    std::array<std::size_t, 257> start{};
    for (const Index v : values) {
      ++start[digit(v, shift) + 1];
    }
    for (std::size_t d = 1; d < start.size(); ++d) {
      start[d] += start[d - 1];
    }
    for (const Index v : values) {
      buffer[start[digit(v, shift)]++] = v;
    }
    values.swap(buffer);
  }
  values.erase(std::unique(values.begin(), values.end()), values.end());
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
  friend bool operator==(const TieredWeight &, const TieredWeight &) = default;
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

/// Maximum weight matching by the Hungarian method, adding the left vertices one at a time
/// (Kuhn; Dijkstra form as in Jonker & Volgenant). Dual prices y (left) and z (right) stay
/// >= 0 with y(i) + z(j) >= w(i, j) on every edge, equality on matched edges, and zero on
/// uncovered vertices; then no matching weighs more (weak duality, which holds for the tiered
/// weights as for numbers). A new left vertex is either matched along a shortest alternating
/// path in slack y + z - w to a free right vertex, or left uncovered (or another left vertex
/// uncovered) once its price has fallen to 0. The search stops at its first end, so vertices
/// that find a free partner at once cost only their own edges.
class HungarianSearch {
public:
  HungarianSearch(const BipartiteGraph &graph, const std::vector<TieredWeight> &weight)
      : graph_(graph), weight_(weight), adjacency_(graph), left_count_(at(graph.left)),
        first_uncover_(left_count_ + at(graph.right)), left_price_(left_count_),
        right_price_(at(graph.right)), distance_(first_uncover_ + left_count_),
        reached_(first_uncover_ + left_count_, false), settled_(first_uncover_, false),
        arrival_(at(graph.right), kFree), mates_(graph) {}

  Matching run() {
    for (std::size_t root = 0; root < left_count_; ++root) {
      add_left_vertex(root);
    }
    Matching result = mates_.edges();
    std::erase_if(result, [&](std::size_t e) { return weight_[e] <= TieredWeight{}; });
    return result;
  }

private:
  using Entry = std::pair<TieredWeight, std::size_t>;

  void add_left_vertex(std::size_t root) {
    TieredWeight price{};
    for (const std::size_t e : adjacency_[root]) {
      price = std::max(price, weight_[e] - right_price_[at(graph_.edges[e].right)]);
    }
    left_price_[root] = price;
    if (price == TieredWeight{}) {
      return; // uncovered at price 0: every condition already holds
    }
    const std::size_t end = shortest_path_end(root);
    update_prices(distance_[end]);
    flip_path(root, end);
    clear_search();
  }

  bool relax(std::size_t node, const TieredWeight &d) {
    if (!reached_[node] || d < distance_[node]) {
      if (!reached_[node]) {
        touched_.push_back(node);
      }
      reached_[node] = true;
      distance_[node] = d;
      heap_.emplace(d, node);
      return true;
    }
    return false;
  }

  // Search nodes: left vertex i, right vertex left_count_ + j, "uncover left vertex i" at
  // first_uncover_ + i. Returns the first end reached: an uncover node or a free right vertex.
  std::size_t shortest_path_end(std::size_t root) {
    relax(root, TieredWeight{});
    for (;;) {
      const auto [d, node] = heap_.top(); // the uncover node of the root is always reachable
      heap_.pop();
      if (node >= first_uncover_) {
        return node;
      }
      if (settled_[node]) {
        continue;
      }
      settled_[node] = true;
      if (node < left_count_) {
        relax_edges_of(node, d);
      } else if (const std::size_t e = mates_.right[node - left_count_]; e == kFree) {
        return node;
      } else {
        relax(at(graph_.edges[e].left), d);
      }
    }
  }

  void relax_edges_of(std::size_t left, const TieredWeight &d) {
    relax(first_uncover_ + left, d + left_price_[left]);
    for (const std::size_t e : adjacency_[left]) {
      if (e == mates_.left[left]) {
        continue;
      }
      const std::size_t j = at(graph_.edges[e].right);
      const TieredWeight slack = left_price_[left] + right_price_[j] - weight_[e];
      if (relax(left_count_ + j, d + slack)) {
        arrival_[j] = e;
      }
    }
  }

  void update_prices(const TieredWeight &length) {
    for (const std::size_t node : touched_) {
      if (node < first_uncover_ && settled_[node] && distance_[node] < length) {
        if (node < left_count_) {
          left_price_[node] = left_price_[node] - (length - distance_[node]);
        } else {
          right_price_[node - left_count_] =
              right_price_[node - left_count_] + (length - distance_[node]);
        }
      }
    }
  }

  // Flips the alternating path from `root` that ends at `end`.
  void flip_path(std::size_t root, std::size_t end) {
    std::size_t free_right = kFree;
    if (end >= first_uncover_) {
      const std::size_t uncovered = end - first_uncover_;
      if (uncovered != root) {
        free_right = at(graph_.edges[mates_.left[uncovered]].right);
        mates_.left[uncovered] = kFree;
      }
    } else {
      free_right = end - left_count_;
    }
    while (free_right != kFree) {
      const std::size_t e = arrival_[free_right];
      const std::size_t i = at(graph_.edges[e].left);
      const std::size_t previous = mates_.left[i];
      mates_.match(graph_, e);
      free_right = i == root ? kFree : at(graph_.edges[previous].right);
    }
  }

  void clear_search() {
    for (const std::size_t node : touched_) {
      reached_[node] = false;
      if (node < first_uncover_) {
        settled_[node] = false;
      }
    }
    touched_.clear();
    while (!heap_.empty()) {
      heap_.pop();
    }
  }

  const BipartiteGraph &graph_;
  const std::vector<TieredWeight> &weight_;
  const Adjacency adjacency_;
  std::size_t left_count_;
  std::size_t first_uncover_;
  std::vector<TieredWeight> left_price_;
  std::vector<TieredWeight> right_price_;
  std::vector<TieredWeight> distance_;
  std::vector<bool> reached_;
  std::vector<bool> settled_;
  std::vector<std::size_t> arrival_; // edge by which a right vertex is reached
  std::vector<std::size_t> touched_;
  Mates mates_;
  std::priority_queue<Entry, std::vector<Entry>, std::greater<>> heap_;
};

Matching hungarian_maximum_weight(const BipartiteGraph &graph,
                                  const std::vector<TieredWeight> &weight) {
  return HungarianSearch(graph, weight).run();
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
  hopcroft_karp(graph, Adjacency(graph), kAnyWeight, mates);
  return mates.edges();
}

Matching maximum_weight_matching(const BipartiteGraph &graph, const std::vector<Index> &tie_break) {
  require_valid_edges(graph);
  return hungarian_maximum_weight(graph, tiered_weights(graph, {}, {}, tie_break));
}

Matching maximum_weight_matching_covering(const BipartiteGraph &graph,
                                          const std::vector<bool> &left_marked,
                                          const std::vector<bool> &right_marked,
                                          const std::vector<Index> &tie_break) {
  require_valid_edges(graph);
  if (left_marked.size() != at(graph.left) || right_marked.size() != at(graph.right)) {
    throw std::invalid_argument("maximum_weight_matching_covering: one mark per vertex needed");
  }
  return hungarian_maximum_weight(graph,
                                  tiered_weights(graph, left_marked, right_marked, tie_break));
}

std::optional<Matching> perfect_matching(const BipartiteGraph &graph, const Matching &start) {
  require_valid_edges(graph);
  if (graph.left != graph.right) {
    return std::nullopt;
  }
  Mates mates = mates_of(graph, start);
  hopcroft_karp(graph, Adjacency(graph), kAnyWeight, mates);
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
  sort_distinct_decreasing(thresholds);

  const Adjacency adjacency(graph);
  const auto perfect = [&](const Mates &m) { return m.size() == at(graph.left); };
  // Feasibility falls as the threshold rises. `lower` is a maximum matching at the highest
  // threshold known to fail, a valid start at every lower threshold; `upper` a perfect
  // matching at the highest threshold known to work. The ceiling is tried first, then the
  // whole graph, then thresholds upward from the bottom at doubling strides (in WRGP the
  // lightest edge often decides), then bisection.
  Mates lower = keep_heavy(graph, mates_of(graph, start), thresholds.front());
  hopcroft_karp(graph, adjacency, thresholds.front(), lower);
  if (perfect(lower)) {
    return lower.edges();
  }
  std::size_t failing = 0;
  std::size_t working = thresholds.size() - 1;
  Mates upper = lower;
  hopcroft_karp(graph, adjacency, thresholds[working], upper);
  if (!perfect(upper)) {
    return std::nullopt;
  }
  const auto works = [&](std::size_t index) {
    Mates trial = keep_heavy(graph, upper, thresholds[index]);
    if (trial.size() < lower.size()) {
      trial = lower;
    }
    hopcroft_karp(graph, adjacency, thresholds[index], trial);
    const bool found = perfect(trial);
    (found ? working : failing) = index;
    (found ? upper : lower) = std::move(trial);
    return found;
  };
  for (std::size_t stride = 1; working - failing > 1; stride *= 2) {
    if (!works(working - std::min(stride, working - failing - 1))) {
      break;
    }
  }
  while (working - failing > 1) {
    works(failing + (working - failing) / 2);
  }
  return upper.edges();
}

} // namespace redist
