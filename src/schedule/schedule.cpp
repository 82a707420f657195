#include "schedule.hpp"

#include <algorithm>
#include <array>
#include <map>
#include <sstream>
#include <utility>

namespace redist {
namespace {

constexpr std::array<std::pair<Strategy, std::string_view>, 9> kStrategyNames{{
    {Strategy::automatic, "auto"},
    {Strategy::all_at_once, "all-at-once"},
    {Strategy::caterpillar, "caterpillar"},
    {Strategy::stepwise, "stepwise"},
    {Strategy::greedy, "greedy"},
    {Strategy::circulant, "circulant"},
    {Strategy::ggp, "ggp"},
    {Strategy::oggp, "oggp"},
    {Strategy::multiphase, "multiphase"},
}};

bool pair_less(const Message &a, const Message &b) {
  return a.src != b.src ? a.src < b.src : a.dst < b.dst;
}

} // namespace

Index VolumeGraph::volume(int src, int dst) const {
  const Message key{src, dst, 0};
  const auto it = std::lower_bound(messages.begin(), messages.end(), key, pair_less);
  return it != messages.end() && it->src == src && it->dst == dst ? it->volume : 0;
}

Index VolumeGraph::total() const {
  Index sum = 0;
  for (const Message &m : messages) {
    sum += m.volume;
  }
  return sum;
}

int VolumeGraph::max_degree() const {
  std::vector<int> out(static_cast<std::size_t>(senders), 0);
  std::vector<int> in(static_cast<std::size_t>(receivers), 0);
  for (const Message &m : messages) {
    ++out[static_cast<std::size_t>(m.src)];
    ++in[static_cast<std::size_t>(m.dst)];
  }
  int best = 0;
  for (const int d : out) {
    best = std::max(best, d);
  }
  for (const int d : in) {
    best = std::max(best, d);
  }
  return best;
}

Index VolumeGraph::max_node_volume() const {
  std::vector<Index> out(static_cast<std::size_t>(senders), 0);
  std::vector<Index> in(static_cast<std::size_t>(receivers), 0);
  for (const Message &m : messages) {
    out[static_cast<std::size_t>(m.src)] += m.volume;
    in[static_cast<std::size_t>(m.dst)] += m.volume;
  }
  Index best = 0;
  for (const Index v : out) {
    best = std::max(best, v);
  }
  for (const Index v : in) {
    best = std::max(best, v);
  }
  return best;
}

void VolumeGraph::normalize() {
  std::sort(messages.begin(), messages.end(), pair_less);
  std::vector<Message> merged;
  merged.reserve(messages.size());
  for (const Message &m : messages) {
    if (!merged.empty() && merged.back().src == m.src && merged.back().dst == m.dst) {
      merged.back().volume += m.volume;
    } else {
      merged.push_back(m);
    }
  }
  std::erase_if(merged, [](const Message &m) { return m.volume == 0; });
  messages = std::move(merged);
}

Index Step::largest() const {
  Index best = 0;
  for (const Piece &p : pieces) {
    best = std::max(best, p.volume);
  }
  return best;
}

std::string_view strategy_name(Strategy s) {
  for (const auto &[strategy, name] : kStrategyNames) {
    if (strategy == s) {
      return name;
    }
  }
  return "unknown";
}

std::optional<Strategy> parse_strategy(std::string_view name) {
  for (const auto &[strategy, known] : kStrategyNames) {
    if (known == name) {
      return strategy;
    }
  }
  return std::nullopt;
}

std::string strategy_names() {
  std::string out;
  for (const auto &[strategy, name] : kStrategyNames) {
    if (!out.empty()) {
      out += ", ";
    }
    out += name;
  }
  return out;
}

std::string check_schedule(const VolumeGraph &graph, const Schedule &schedule,
                           const ScheduleLimits &limits) {
  std::ostringstream why;
  // Per message: the pieces seen, as (offset, volume), to check they tile [0, volume).
  std::map<std::pair<int, int>, std::vector<std::pair<Index, Index>>> seen;
  for (std::size_t s = 0; s < schedule.steps.size(); ++s) {
    const Step &step = schedule.steps[s];
    if (limits.max_concurrent > 0 &&
        step.pieces.size() > static_cast<std::size_t>(limits.max_concurrent)) {
      why << "step " << s << " has " << step.pieces.size() << " pieces, more than the limit "
          << limits.max_concurrent;
      return why.str();
    }
    std::vector<char> sending(static_cast<std::size_t>(graph.senders), 0);
    std::vector<char> receiving(static_cast<std::size_t>(graph.receivers), 0);
    for (const Piece &p : step.pieces) {
      if (p.src < 0 || p.src >= graph.senders || p.dst < 0 || p.dst >= graph.receivers) {
        why << "step " << s << ": piece " << p.src << "->" << p.dst << " names no node";
        return why.str();
      }
      if (p.volume <= 0 || p.offset < 0) {
        why << "step " << s << ": piece " << p.src << "->" << p.dst << " is empty or negative";
        return why.str();
      }
      if (graph.volume(p.src, p.dst) == 0) {
        why << "step " << s << ": piece " << p.src << "->" << p.dst << " is not a message";
        return why.str();
      }
      auto &sent = sending[static_cast<std::size_t>(p.src)];
      auto &received = receiving[static_cast<std::size_t>(p.dst)];
      if (limits.matching && (sent != 0 || received != 0)) {
        why << "step " << s << " is not a matching: " << (sent != 0 ? "sender " : "receiver ")
            << (sent != 0 ? p.src : p.dst) << " appears twice";
        return why.str();
      }
      sent = 1;
      received = 1;
      seen[{p.src, p.dst}].emplace_back(p.offset, p.volume);
    }
  }
  for (const Message &m : graph.messages) {
    auto it = seen.find({m.src, m.dst});
    if (it == seen.end()) {
      why << "message " << m.src << "->" << m.dst << " (" << m.volume << " elements) is never sent";
      return why.str();
    }
    auto &pieces = it->second;
    std::sort(pieces.begin(), pieces.end());
    Index next = 0;
    for (const auto &[offset, volume] : pieces) {
      if (offset != next) {
        why << "message " << m.src << "->" << m.dst << ": pieces "
            << (offset < next ? "overlap" : "leave a gap") << " at element "
            << std::min(offset, next);
        return why.str();
      }
      next += volume;
    }
    if (next != m.volume) {
      why << "message " << m.src << "->" << m.dst << ": pieces add up to " << next << " of "
          << m.volume << " elements";
      return why.str();
    }
  }
  return {};
}

StepPortTime step_port_time(const Step &step, const CostModel &model, std::size_t element_bytes) {
  const auto bytes = static_cast<double>(element_bytes);
  std::map<int, std::pair<Index, Index>> out; // node -> (pieces, elements)
  std::map<int, std::pair<Index, Index>> in;
  for (const Piece &p : step.pieces) {
    auto &o = out[p.src];
    ++o.first;
    o.second += p.volume;
    auto &i = in[p.dst];
    ++i.first;
    i.second += p.volume;
  }
  StepPortTime t;
  t.seconds = step.pieces.empty() ? model.alpha : 0.0; // an empty step still synchronises
  for (const auto *side : {&out, &in}) {
    for (const auto &[node, load] : *side) {
      t.max_node_pieces = std::max(t.max_node_pieces, load.first);
      t.seconds = std::max(t.seconds, model.alpha * static_cast<double>(load.first) +
                                          model.beta * bytes * static_cast<double>(load.second));
    }
  }
  return t;
}

StepPortTime step_port_time(const Step &step, const CostModel &intra, const NodeLevels &levels,
                            std::size_t element_bytes) {
  const auto bytes = static_cast<double>(element_bytes);
  // Counts, multiplied out at the end: with no piece between nodes this is step_port_time's
  // one-level sum, term for term.
  struct Load {
    Index intra_pieces = 0;
    Index intra_elements = 0;
    Index inter_pieces = 0;
  };
  std::map<int, Load> out; // rank port as sender -> load
  std::map<int, Load> in;
  std::map<int, Index> link_out; // machine node -> elements on its link, each direction
  std::map<int, Index> link_in;
  for (const Piece &p : step.pieces) {
    const int from = levels.src_node[static_cast<std::size_t>(p.src)];
    const int to = levels.dst_node[static_cast<std::size_t>(p.dst)];
    for (Load *load : {&out[p.src], &in[p.dst]}) {
      if (from == to) {
        ++load->intra_pieces;
        load->intra_elements += p.volume;
      } else {
        ++load->inter_pieces;
      }
    }
    if (from != to) {
      link_out[from] += p.volume;
      link_in[to] += p.volume;
    }
  }
  StepPortTime t;
  t.seconds = step.pieces.empty() ? intra.alpha : 0.0; // an empty step still synchronises
  for (const auto *side : {&out, &in}) {
    for (const auto &[node, load] : *side) {
      t.max_node_pieces = std::max(t.max_node_pieces, load.intra_pieces + load.inter_pieces);
      t.seconds =
          std::max(t.seconds, intra.alpha * static_cast<double>(load.intra_pieces) +
                                  intra.beta * bytes * static_cast<double>(load.intra_elements) +
                                  levels.inter.alpha * static_cast<double>(load.inter_pieces));
    }
  }
  for (const auto *side : {&link_out, &link_in}) {
    for (const auto &[node, elements] : *side) {
      t.seconds = std::max(t.seconds, levels.inter.beta * bytes * static_cast<double>(elements));
    }
  }
  return t;
}

ScheduleStats schedule_stats(const Schedule &schedule, const CostModel &intra,
                             const NodeLevels &levels, std::size_t element_bytes) {
  ScheduleStats st = schedule_stats(schedule, intra, element_bytes);
  st.seconds = 0.0;
  st.max_node_pieces = 0;
  for (const Step &step : schedule.steps) {
    const StepPortTime port = step_port_time(step, intra, levels, element_bytes);
    st.max_node_pieces = std::max(st.max_node_pieces, port.max_node_pieces);
    st.seconds += port.seconds + intra.step_setup;
  }
  return st;
}

ScheduleStats schedule_stats(const Schedule &schedule, const CostModel &model,
                             std::size_t element_bytes) {
  ScheduleStats st;
  st.steps = static_cast<Index>(schedule.steps.size());
  for (const Step &step : schedule.steps) {
    for (const Piece &p : step.pieces) {
      ++st.pieces;
      st.elements += p.volume;
      st.largest_piece = std::max(st.largest_piece, p.volume);
    }
    st.sum_step_max += step.largest();
    const StepPortTime port = step_port_time(step, model, element_bytes);
    st.max_node_pieces = std::max(st.max_node_pieces, port.max_node_pieces);
    st.seconds += port.seconds + model.step_setup;
  }
  return st;
}

VolumeGraph volume_graph(const Transfer &t) {
  VolumeGraph g;
  const int snr = t.src.grid.nprow;
  const int snc = t.src.grid.npcol;
  const int dnr = t.dst.grid.nprow;
  const int dnc = t.dst.grid.npcol;
  g.senders = snr * snc;
  g.receivers = dnr * dnc;
  if (t.m == 0 || t.n == 0) {
    return g;
  }
  // Only the peers each source row and column sends to: O(messages), not O(P * Q) patterns.
  // B's rows hold A's dimension perm[0]: the row patterns start at A's grid rows, or at its
  // grid columns when transposed.
  std::vector<std::vector<PeerRuns>> rows;
  std::vector<std::vector<PeerRuns>> cols;
  const int row_sources = t.src.grid_extent(t.perm[0]);
  const int col_sources = t.src.grid_extent(t.perm[1]);
  rows.reserve(static_cast<std::size_t>(row_sources));
  cols.reserve(static_cast<std::size_t>(col_sources));
  for (int p = 0; p < row_sources; ++p) {
    rows.push_back(peer_runs_from_source(t.rows(), p));
  }
  for (int p = 0; p < col_sources; ++p) {
    cols.push_back(peer_runs_from_source(t.cols(), p));
  }
  for (int pc = 0; pc < snc; ++pc) {
    for (int pr = 0; pr < snr; ++pr) {
      for (const PeerRuns &c : cols[static_cast<std::size_t>(t.src_coordinate(1, pr, pc))]) {
        for (const PeerRuns &r : rows[static_cast<std::size_t>(t.src_coordinate(0, pr, pc))]) {
          const Index v = message_elements(r.runs, c.runs, t.region, t.m, t.n);
          if (v > 0) {
            g.messages.push_back({pr + pc * snr, r.peer + c.peer * dnr, v});
          }
        }
      }
    }
  }
  g.normalize();
  return g;
}

Schedule schedule_from_pairs(const VolumeGraph &graph,
                             const std::vector<std::vector<Message>> &pair_steps,
                             bool keep_empty_steps) {
  Schedule out;
  for (const auto &pairs : pair_steps) {
    Step step;
    for (const Message &pair : pairs) {
      const Index v = graph.volume(pair.src, pair.dst);
      if (v > 0) {
        step.pieces.push_back({pair.src, pair.dst, 0, v});
      }
    }
    if (keep_empty_steps || !step.pieces.empty()) {
      out.steps.push_back(std::move(step));
    }
  }
  return out;
}

void assign_offsets(Schedule &schedule) {
  std::map<std::pair<int, int>, Index> sent;
  for (Step &step : schedule.steps) {
    for (Piece &p : step.pieces) {
      Index &before = sent[{p.src, p.dst}];
      p.offset = before;
      before += p.volume;
    }
  }
}

Schedule product_schedule(const VolumeGraph &graph, const Schedule &rows, const Schedule &cols,
                          int src_nprow, int dst_nprow, bool keep_empty_steps, bool transposed) {
  Schedule out;
  for (const Step &row_step : rows.steps) {
    for (const Step &col_step : cols.steps) {
      Step step;
      for (const Piece &c : col_step.pieces) {
        for (const Piece &r : row_step.pieces) {
          // Transposed: the row schedule's senders are A's grid columns, the column's its rows.
          const int src = transposed ? c.src + r.src * src_nprow : r.src + c.src * src_nprow;
          const int dst = r.dst + c.dst * dst_nprow;
          const Index v = graph.volume(src, dst);
          if (v > 0) {
            step.pieces.push_back({src, dst, 0, v});
          }
        }
      }
      if (keep_empty_steps || !step.pieces.empty()) {
        out.steps.push_back(std::move(step));
      }
    }
  }
  return out;
}

Schedule schedule_all_at_once(const VolumeGraph &graph) {
  Schedule out;
  if (graph.messages.empty()) {
    return out;
  }
  Step step;
  for (const Message &m : graph.messages) {
    step.pieces.push_back({m.src, m.dst, 0, m.volume});
  }
  out.steps.push_back(std::move(step));
  return out;
}

// Prylli & Tourancheau (as in ScaLAPACK's PxGEMR2D): in step t, sender i talks to receiver
// (i + t) mod max(P, Q); pairs without data are not skipped, so the step count is fixed.
Schedule schedule_caterpillar(const VolumeGraph &graph) {
  // Message (i, q) goes in the step t = (q - i) mod width that pairs i with q: each message is
  // placed once, O(width + messages), instead of trying all width x senders pairs. Messages are
  // sorted by sender, so each step lists its pieces by sender as the pairwise enumeration does.
  const int width = std::max(graph.senders, graph.receivers);
  Schedule out;
  out.steps.resize(static_cast<std::size_t>(width));
  for (const Message &m : graph.messages) {
    if (m.volume > 0) {
      const int t = ((m.dst - m.src) % width + width) % width;
      out.steps[static_cast<std::size_t>(t)].pieces.push_back({m.src, m.dst, 0, m.volume});
    }
  }
  return out;
}

} // namespace redist
