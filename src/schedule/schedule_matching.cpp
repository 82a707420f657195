#include "schedule_matching.hpp"

#include "matching.hpp"

#include <algorithm>
#include <iterator>
#include <optional>
#include <stdexcept>
#include <utility>

namespace redist {
namespace {

std::size_t at(int vertex) {
  return static_cast<std::size_t>(vertex);
}

Index ceil_div(Index a, Index b) {
  return (a + b - 1) / b;
}

std::vector<Message> nonempty_messages(const VolumeGraph &graph) {
  std::vector<Message> out;
  std::copy_if(graph.messages.begin(), graph.messages.end(), std::back_inserter(out),
               [](const Message &m) { return m.volume > 0; });
  return out;
}

/// Steps of whole messages: `pick` chooses a matching of the messages left (a BipartiteGraph
/// over senders x receivers, weight = volume), which becomes the next step.
template <class PickMatching>
Schedule peel_whole_messages(const VolumeGraph &graph, PickMatching pick) {
  Schedule out;
  std::vector<Message> left = nonempty_messages(graph);
  while (!left.empty()) {
    BipartiteGraph remaining{graph.senders, graph.receivers, {}};
    remaining.edges.reserve(left.size());
    for (const Message &m : left) {
      remaining.edges.push_back({m.src, m.dst, m.volume});
    }
    const Matching matching = pick(remaining);
    if (matching.empty()) {
      throw std::logic_error("matching scheduler: no message taken from a non-empty graph");
    }
    Step step;
    std::vector<bool> taken(left.size(), false);
    for (const std::size_t e : matching) {
      step.pieces.push_back({left[e].src, left[e].dst, 0, left[e].volume});
      taken[e] = true;
    }
    std::size_t kept = 0;
    for (std::size_t e = 0; e < left.size(); ++e) {
      if (!taken[e]) {
        left[kept++] = left[e];
      }
    }
    left.resize(kept);
    out.steps.push_back(std::move(step));
  }
  assign_offsets(out);
  return out;
}

/// Ties between matchings of equal weight go to the one covering the nodes with the most
/// elements left: the rest of the schedule costs at least the largest of those (each step
/// sends at most its largest piece from a node). The papers leave ties open; block-cyclic
/// graphs, whose volumes take few values, are full of them.
std::vector<Index> heaviest_nodes_first(const BipartiteGraph &remaining) {
  std::vector<Index> load(at(remaining.left) + at(remaining.right), 0);
  for (const WeightedEdge &e : remaining.edges) {
    load[at(e.left)] += e.weight;
    load[at(remaining.left) + at(e.right)] += e.weight;
  }
  std::vector<Index> tie_break;
  tie_break.reserve(remaining.edges.size());
  for (const WeightedEdge &e : remaining.edges) {
    tie_break.push_back(load[at(e.left)] + load[at(remaining.left) + at(e.right)]);
  }
  return tie_break;
}

/// Jeannot & Wagner 2004, Sec. 4.2.2: a weight-regular supergraph J of the message graph
/// (weights in whole units of beta) in which every perfect matching holds at most k messages.
struct RegularizedGraph {
  BipartiteGraph graph; ///< J; its first `messages` edges are the messages, in order
  std::size_t messages = 0;
};

/// Adds edges from node first_node + i (holding load[i]) to fresh nodes on the other side
/// (first_fresh, first_fresh + 1, ...) until every node holds `target`; the fresh nodes end
/// with exactly `target` each.
void fill_to_target(const std::vector<Index> &load, int first_node, int first_fresh, Index target,
                    bool nodes_are_left, std::vector<WeightedEdge> &edges) {
  int fresh = first_fresh;
  Index room = target;
  for (std::size_t i = 0; i < load.size(); ++i) {
    Index missing = target - load[i];
    while (missing > 0) {
      const Index amount = std::min(missing, room);
      const int node = first_node + static_cast<int>(i);
      edges.push_back(nodes_are_left ? WeightedEdge{node, fresh, amount}
                                     : WeightedEdge{fresh, node, amount});
      missing -= amount;
      room -= amount;
      if (room == 0) {
        ++fresh;
        room = target;
      }
    }
  }
}

RegularizedGraph regularize(const VolumeGraph &graph, const std::vector<Message> &messages,
                            Index limit, Index beta) {
  const int senders = graph.senders;
  const int receivers = graph.receivers;
  RegularizedGraph out;
  out.messages = messages.size();
  std::vector<WeightedEdge> &edges = out.graph.edges;
  std::vector<Index> sent(at(senders), 0);
  std::vector<Index> received(at(receivers), 0);
  Index total = 0;
  for (const Message &m : messages) {
    const Index weight = ceil_div(m.volume, beta);
    edges.push_back({m.src, m.dst, weight});
    sent[at(m.src)] += weight;
    received[at(m.dst)] += weight;
    total += weight;
  }
  const Index heaviest_node = std::max(*std::max_element(sent.begin(), sent.end()),
                                       *std::max_element(received.begin(), received.end()));
  // Case 2 of Jeannot & Wagner 2004, Sec. 4.2.2: edges between new node pairs, none heavier
  // than the target, raise the total to k * target, so that W(G') <= P(G') / k and k divides
  // P(G').
  const Index target = std::max(heaviest_node, ceil_div(total, limit));
  const Index padding = limit * target - total;
  const auto pairs = static_cast<int>(ceil_div(padding, target));
  for (int t = 0; t < pairs; ++t) {
    const Index weight = std::min(target, padding - static_cast<Index>(t) * target);
    edges.push_back({senders + t, receivers + t, weight});
    sent.push_back(weight);
    received.push_back(weight);
  }
  // Case 1: |V2'| - k new senders and |V1'| - k new receivers fill every node to the target;
  // they take every node but k of each side in any perfect matching.
  const int new_senders = receivers + pairs - static_cast<int>(limit);
  const int new_receivers = senders + pairs - static_cast<int>(limit);
  fill_to_target(sent, 0, receivers + pairs, target, true, edges);
  fill_to_target(received, 0, senders + pairs, target, false, edges);
  out.graph.left = senders + pairs + new_senders;
  out.graph.right = receivers + pairs + new_receivers;
  return out;
}

/// Jeannot & Wagner 2004's GGP (Fig. 5) with WRGP (Fig. 3) at its core; OGGP (Sec. 4.3) when
/// `bottleneck` is set.
Schedule peel_weight_regular(const VolumeGraph &graph, int k, Index beta_elements,
                             bool bottleneck) {
  const Index beta = std::max<Index>(beta_elements, 1);
  const std::vector<Message> messages = nonempty_messages(graph);
  if (messages.empty()) {
    return {};
  }
  const Index limit = backbone_streams(graph, k);
  RegularizedGraph regular = regularize(graph, messages, limit, beta);
  std::vector<WeightedEdge> &regular_edges = regular.graph.edges;

  std::vector<Index> elements_left;
  elements_left.reserve(messages.size());
  for (const Message &m : messages) {
    elements_left.push_back(m.volume);
  }
  std::vector<std::size_t> alive(regular_edges.size());
  for (std::size_t e = 0; e < alive.size(); ++e) {
    alive[e] = e;
  }
  std::vector<std::size_t> position(regular_edges.size());
  std::vector<std::size_t> kept_from_last_step; // edges of J, increasing
  Schedule out;
  while (!alive.empty()) {
    BipartiteGraph current{regular.graph.left, regular.graph.right, {}};
    current.edges.reserve(alive.size());
    for (std::size_t e = 0; e < alive.size(); ++e) {
      current.edges.push_back(regular_edges[alive[e]]);
      position[alive[e]] = e;
    }
    Matching start;
    for (const std::size_t e : kept_from_last_step) {
      start.push_back(position[e]);
    }
    const std::optional<Matching> matching =
        bottleneck ? bottleneck_perfect_matching(current, start) : perfect_matching(current, start);
    if (!matching) {
      throw std::logic_error("GGP: the weight-regular graph has no perfect matching");
    }
    Index step_weight = 0;
    for (const std::size_t e : *matching) {
      const Index w = current.edges[e].weight;
      step_weight = step_weight == 0 ? w : std::min(step_weight, w);
    }
    Step step;
    kept_from_last_step.clear();
    for (const std::size_t e : *matching) {
      const std::size_t edge = alive[e];
      regular_edges[edge].weight -= step_weight;
      if (edge < regular.messages) {
        const Index elements = std::min(step_weight * beta, elements_left[edge]);
        elements_left[edge] -= elements;
        const Message &m = messages[edge];
        step.pieces.push_back({m.src, m.dst, 0, elements});
      }
      if (regular_edges[edge].weight > 0) {
        kept_from_last_step.push_back(edge);
      }
    }
    std::erase_if(alive, [&](std::size_t edge) { return regular_edges[edge].weight == 0; });
    if (!step.pieces.empty()) {
      out.steps.push_back(std::move(step));
    }
  }
  assign_offsets(out);
  return out;
}

} // namespace

Schedule schedule_stepwise(const VolumeGraph &graph) {
  return peel_whole_messages(graph, [&](const BipartiteGraph &remaining) {
    std::vector<int> degree(at(remaining.left) + at(remaining.right), 0);
    for (const WeightedEdge &e : remaining.edges) {
      ++degree[at(e.left)];
      ++degree[at(remaining.left) + at(e.right)];
    }
    const int max_degree = *std::max_element(degree.begin(), degree.end());
    std::vector<bool> left_marked(at(remaining.left));
    std::vector<bool> right_marked(at(remaining.right));
    for (std::size_t v = 0; v < left_marked.size(); ++v) {
      left_marked[v] = degree[v] == max_degree;
    }
    for (std::size_t v = 0; v < right_marked.size(); ++v) {
      right_marked[v] = degree[left_marked.size() + v] == max_degree;
    }
    return maximum_weight_matching_covering(remaining, left_marked, right_marked,
                                            heaviest_nodes_first(remaining));
  });
}

Schedule schedule_greedy(const VolumeGraph &graph) {
  return peel_whole_messages(graph, [](const BipartiteGraph &remaining) {
    return maximum_weight_matching(remaining, heaviest_nodes_first(remaining));
  });
}

Schedule schedule_ggp(const VolumeGraph &graph, int k, Index beta_elements) {
  return peel_weight_regular(graph, k, beta_elements, false);
}

Schedule schedule_oggp(const VolumeGraph &graph, int k, Index beta_elements) {
  return peel_weight_regular(graph, k, beta_elements, true);
}

int backbone_streams(const VolumeGraph &graph, int k) {
  const int smaller_side = std::min(graph.senders, graph.receivers);
  return k <= 0 || k >= smaller_side ? smaller_side : k;
}

// Proof of the bound. Take any schedule of s steps M_1..M_s, each a matching of at most k pieces
// of any real sizes, W(M_i) its largest piece. Every message has a piece in some step and a step
// holds at most k pieces, so s >= ceil(m / k); a node meets at most one piece per step and each
// of its Delta messages needs one, so s >= Delta. A node's pieces lie in distinct steps, each
// at most W(M_i), so W <= sum_i W(M_i); step i moves at most k W(M_i) elements, so
// P <= k sum_i W(M_i). The cost s beta + sum_i W(M_i) is thus at least the bound. (The bound of
// Cohen, Jeannot & Padoy 2003 that Jeannot & Wagner 2004, Sec. 5.1 measure against without
// stating it; docs/references.md.)
double backbone_lower_bound(const VolumeGraph &graph, int k, double beta) {
  VolumeGraph sent{graph.senders, graph.receivers, nonempty_messages(graph)};
  if (sent.messages.empty()) {
    return 0.0;
  }
  const Index limit = backbone_streams(graph, k);
  const auto messages = static_cast<Index>(sent.messages.size());
  const Index steps = std::max<Index>(sent.max_degree(), ceil_div(messages, limit));
  const double busiest = std::max(static_cast<double>(sent.max_node_volume()),
                                  static_cast<double>(sent.total()) / static_cast<double>(limit));
  return beta * static_cast<double>(steps) + busiest;
}

} // namespace redist
