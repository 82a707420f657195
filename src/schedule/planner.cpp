#include "planner.hpp"

#include "schedule_cyclic.hpp"
#include "schedule_matching.hpp"

#include <algorithm>
#include <array>
#include <cmath>
#include <limits>
#include <map>
#include <optional>
#include <utility>

namespace redist {
namespace {

Index ceil_div(Index a, Index b) {
  return (a + b - 1) / b;
}

// Communicator size implied by the grids: one more than the largest rank in either.
int comm_size_of(const Transfer &t) {
  int size = 0;
  for (const auto *grid : {&t.src.grid, &t.dst.grid}) {
    for (const int r : grid->ranks) {
      size = std::max(size, r + 1);
    }
  }
  return size;
}

// A 2-D schedule either as the product of a row and a column schedule (Desprez et al. 1998,
// Sec. 6: never materialised, so its size grows with the 1-D problems only) or as an
// explicit schedule over the grid positions.
struct TwoDimensional {
  bool product = true;
  Schedule rows;
  Schedule cols;
  Schedule direct;
  std::string detail;
};

// The 1-D schedule of a strategy along one dimension: the circulant where asked for and
// applicable, else Desprez et al.'s step-optimal closed form where its conditions hold
// (class-based, Walker & Otto, Park et al.) for every strategy but the caterpillar and greedy,
// else the strategy on the dimension's graph.
Schedule one_dimension(Strategy s, const Transfer1D &t, const CostModel &model,
                       std::size_t element_bytes, std::string &how) {
  if (s == Strategy::circulant) {
    if (auto circulant = schedule_circulant(t)) {
      how = "circulant";
      return std::move(*circulant);
    }
    // not CYCLIC(x) -> CYCLIC(kx) here: the step-optimal schedule instead
  }
  if (s != Strategy::caterpillar && s != Strategy::greedy) {
    if (auto closed = schedule_closed_form(t, model, element_bytes)) {
      how = "closed form";
      return std::move(*closed);
    }
  }
  return graph_schedule(s, volume_graph(t), how);
}

// Direct 2-D schedules (on the full graph of grid positions) are computed only up to this
// many sender-receiver pairs; beyond, the product of 1-D schedules is used.
constexpr Index kDirectPairs = 4096;

Index grid_pairs(const Transfer &t) {
  return static_cast<Index>(t.src.grid.nprow) * t.src.grid.npcol * t.dst.grid.nprow *
         t.dst.grid.npcol;
}

// The two-level model is costed exactly on materialised schedules, which are built up to
// kDirectPairs grid pairs. Beyond, where only 1-D step sizes are known, the one-level model
// with the inter-node level stands for it: every message costed as if it crossed the network
// (an upper bound at each rank's port, blind to a node link its ranks share).
bool two_level_exact(const Transfer &t) {
  return grid_pairs(t) <= kDirectPairs;
}

// The model one-level formulas use: the options' model, or the inter-node level where the
// two-level model applies but is not costed exactly.
const CostModel &flat_model(const Transfer &t, const ScheduleOptions &o) {
  return node_levels(t, o) && !two_level_exact(t) ? o.inter : o.model;
}

// A materialised schedule's statistics under the options' model, one- or two-level.
ScheduleStats stats_of(const Transfer &t, const ScheduleOptions &o, const Schedule &s,
                       std::size_t element_bytes) {
  const std::optional<NodeLevels> levels = node_levels(t, o);
  return levels ? schedule_stats(s, o.model, *levels, element_bytes)
                : schedule_stats(s, o.model, element_bytes);
}

Schedule without_self(const Transfer &t, const Schedule &s, bool keep_empty_steps) {
  return redist::without_self(s, t.src.grid.ranks, t.dst.grid.ranks, keep_empty_steps);
}

} // namespace

Schedule without_self(const Schedule &s, std::span<const int> src_ranks,
                      std::span<const int> dst_ranks, bool keep_empty_steps) {
  Schedule out;
  for (const Step &step : s.steps) {
    Step kept;
    for (const Piece &p : step.pieces) {
      if (src_ranks[static_cast<std::size_t>(p.src)] !=
          dst_ranks[static_cast<std::size_t>(p.dst)]) {
        kept.pieces.push_back(p);
      }
    }
    if (keep_empty_steps || !kept.pieces.empty()) {
      out.steps.push_back(std::move(kept));
    }
  }
  return out;
}

// Jeannot & Wagner 2004's bound on concurrent transfers applied to a contention-free schedule:
// each step cut into consecutive groups of at most k pieces.
Schedule limit_concurrency(const Schedule &s, int k) {
  if (k <= 0) {
    return s;
  }
  Schedule out;
  for (const Step &step : s.steps) {
    if (step.pieces.empty()) {
      out.steps.push_back(step);
      continue;
    }
    for (std::size_t first = 0; first < step.pieces.size(); first += static_cast<std::size_t>(k)) {
      Step part;
      const std::size_t last = std::min(step.pieces.size(), first + static_cast<std::size_t>(k));
      part.pieces.assign(step.pieces.begin() + static_cast<std::ptrdiff_t>(first),
                         step.pieces.begin() + static_cast<std::ptrdiff_t>(last));
      out.steps.push_back(std::move(part));
    }
  }
  return out;
}

// The memory cap: every piece longer than `chunk` elements cut into chunks sent in
// consecutive sub-steps (sub-step j of a step carries chunk j of each of its pieces).
Schedule cut_pieces(const Schedule &s, Index chunk) {
  if (chunk <= 0) {
    return s;
  }
  Schedule out;
  for (const Step &step : s.steps) {
    const Index parts = std::max<Index>(1, ceil_div(step.largest(), chunk));
    for (Index j = 0; j < parts; ++j) {
      Step part;
      for (const Piece &p : step.pieces) {
        const Index begin = j * chunk;
        if (begin < p.volume) {
          part.pieces.push_back(
              {p.src, p.dst, p.offset + begin, std::min(chunk, p.volume - begin)});
        }
      }
      out.steps.push_back(std::move(part));
    }
  }
  return out;
}

Schedule graph_schedule(Strategy s, const VolumeGraph &g, std::string &how) {
  switch (s) {
  case Strategy::caterpillar:
    how = "caterpillar";
    return schedule_caterpillar(g);
  case Strategy::greedy:
    how = "greedy matchings";
    return schedule_greedy(g);
  default:
    how = "stepwise matchings";
    return schedule_stepwise(g);
  }
}

std::string check_options(const ScheduleOptions &o, std::size_t element_bytes, Index &chunk) {
  chunk = 0;
  if (o.max_concurrent < 0) return "max_concurrent must be >= 0";
  if (o.max_memory < 0) return "max_memory must be >= 0";
  if (o.max_memory > 0) {
    chunk = o.max_memory / static_cast<Index>(2 * element_bytes);
    if (chunk < 1) {
      return "max_memory of " + std::to_string(o.max_memory) +
             " bytes is below one element sent and one received (" +
             std::to_string(2 * element_bytes) + " bytes)";
    }
  }
  return {};
}

Index step_setup_elements(const ScheduleOptions &o, const CostModel &level,
                          std::size_t element_bytes) {
  const double per_element = level.beta * static_cast<double>(element_bytes);
  return static_cast<Index>(
      std::max(1.0, std::round((level.alpha + o.model.step_setup) / std::max(per_element, 1e-30))));
}

namespace {

// `graph` is the 2-D volume graph, computed here on first need when the caller has none.
std::string build_two_dimensional(const Transfer &t, const ScheduleOptions &o,
                                  std::size_t element_bytes, std::optional<VolumeGraph> &graph,
                                  TwoDimensional &out) {
  const Strategy s = o.strategy;
  const auto graph_2d = [&]() -> const VolumeGraph & {
    if (!graph) graph = volume_graph(t);
    return *graph;
  };
  // Direct 2-D schedules see only the messages between distinct ranks: what a rank sends to
  // itself is copied locally and must not cost a step.
  const auto remote_graph = [&] {
    VolumeGraph remote = graph_2d();
    std::erase_if(remote.messages, [&](const Message &m) {
      return t.src.grid.ranks[static_cast<std::size_t>(m.src)] ==
             t.dst.grid.ranks[static_cast<std::size_t>(m.dst)];
    });
    return remote;
  };
  const auto pairs =
      static_cast<Index>(t.src.grid.nprow) * t.src.grid.npcol * t.dst.grid.nprow * t.dst.grid.npcol;
  if (s == Strategy::ggp || s == Strategy::oggp) {
    // Jeannot & Wagner: the step setup as elements, messages split across steps.
    // With two levels, the steps wait on the network: its start-up and rate set the size.
    const Index setup =
        step_setup_elements(o, node_levels(t, o) ? o.inter : o.model, element_bytes);
    const VolumeGraph g = remote_graph();
    out.product = false;
    out.direct = s == Strategy::ggp ? schedule_ggp(g, o.max_concurrent, setup)
                                    : schedule_oggp(g, o.max_concurrent, setup);
    out.detail = std::string(strategy_name(s)) + " on the 2-D graph, k = " +
                 (o.max_concurrent > 0 ? std::to_string(o.max_concurrent) : "unlimited") +
                 ", step setup = " + std::to_string(setup) + " elements";
    return {};
  }
  std::string row_how;
  std::string col_how;
  out.product = true;
  out.rows = one_dimension(s, t.rows(), o.model, element_bytes, row_how);
  out.cols = one_dimension(s, t.cols(), o.model, element_bytes, col_how);
  out.detail = "rows: " + row_how + " x columns: " + col_how;
  // Stepwise and Greedy also run on the full 2-D graph when it is small; the cheaper wins
  // (the product is step-optimal for full windows, but trapezoids are not products).
  if ((s == Strategy::stepwise || s == Strategy::greedy) && pairs <= kDirectPairs) {
    const VolumeGraph remote = remote_graph();
    Schedule direct = s == Strategy::stepwise ? schedule_stepwise(remote) : schedule_greedy(remote);
    const ScheduleStats direct_stats = stats_of(t, o, direct, element_bytes);
    const ScheduleStats product =
        stats_of(t, o,
                 without_self(t,
                              product_schedule(graph_2d(), out.rows, out.cols, t.src.grid.nprow,
                                               t.dst.grid.nprow, false, t.transposed()),
                              false),
                 element_bytes);
    if (direct_stats.seconds < product.seconds) {
      out.product = false;
      out.direct = std::move(direct);
      out.detail = std::string(strategy_name(s)) + " on the 2-D graph";
    }
  }
  return {};
}

// The product's statistics from the 1-D step sizes, without materialising it: step (a, b)
// is at most max_a * max_b elements (exact for full windows; an upper bound for trapezoids).
ScheduleStats product_stats(const std::vector<StepSize> &rows, const std::vector<StepSize> &cols,
                            const CostModel &model, Index chunk, std::size_t element_bytes) {
  ScheduleStats st;
  const auto bytes = static_cast<double>(element_bytes);
  for (const StepSize &a : rows) {
    for (const StepSize &b : cols) {
      const Index largest = a.largest * b.largest;
      const Index parts = chunk > 0 ? std::max<Index>(1, ceil_div(largest, chunk)) : 1;
      st.steps += parts;
      st.pieces += a.pieces * b.pieces * parts;
      st.sum_step_max += largest;
      st.largest_piece = std::max(st.largest_piece, chunk > 0 ? std::min(largest, chunk) : largest);
      st.max_node_pieces =
          std::max<Index>(st.max_node_pieces, a.pieces == 0 || b.pieces == 0 ? 0 : 1);
      st.seconds += static_cast<double>(parts) * (model.alpha + model.step_setup) +
                    model.beta * bytes * static_cast<double>(largest);
    }
  }
  return st;
}

std::vector<StepSize> step_sizes(const Schedule &s) {
  std::vector<StepSize> sizes;
  sizes.reserve(s.steps.size());
  for (const Step &step : s.steps) {
    sizes.push_back({step.largest(), static_cast<Index>(step.pieces.size())});
  }
  return sizes;
}

ScheduleStats product_stats(const TwoDimensional &two, const CostModel &model, Index chunk,
                            std::size_t element_bytes) {
  return product_stats(step_sizes(two.rows), step_sizes(two.cols), model, chunk, element_bytes);
}

// A rank's messages by the peer's grid position: O(log peers) lookups.
class PeerIndex {
public:
  explicit PeerIndex(const std::vector<Peer> &peers) {
    keys_.reserve(peers.size());
    for (std::size_t i = 0; i < peers.size(); ++i) {
      keys_.push_back({peers[i].grid_row, peers[i].grid_col, static_cast<int>(i)});
    }
    std::sort(keys_.begin(), keys_.end());
  }
  /// Index into the peers, -1 when there is no message with that peer.
  [[nodiscard]] int find(int grid_row, int grid_col) const {
    const auto it =
        std::lower_bound(keys_.begin(), keys_.end(), std::array<int, 3>{grid_row, grid_col, -1});
    return it != keys_.end() && (*it)[0] == grid_row && (*it)[1] == grid_col ? (*it)[2] : -1;
  }

private:
  std::vector<std::array<int, 3>> keys_;
};

// For each step of a 1-D schedule, the partner of `node` as sender (its receiver) and as
// receiver (its sender); -1 when idle.
std::vector<std::pair<int, int>> partners(const Schedule &s, int src_node, int dst_node) {
  std::vector<std::pair<int, int>> out(s.steps.size(), {-1, -1});
  for (std::size_t a = 0; a < s.steps.size(); ++a) {
    for (const Piece &p : s.steps[a].pieces) {
      if (p.src == src_node) out[a].first = p.dst;
      if (p.dst == dst_node) out[a].second = p.src;
    }
  }
  return out;
}

// The rank's grid positions, -1 where it is not in a grid.
struct GridPosition {
  int spr = -1;
  int spc = -1;
  int dpr = -1;
  int dpc = -1;
};

GridPosition grid_position(const Transfer &t, const RankPlan &plan) {
  GridPosition at;
  if (plan.in_src) t.src.grid.find(plan.rank, at.spr, at.spc);
  if (plan.in_dst) t.dst.grid.find(plan.rank, at.dpr, at.dpc);
  return at;
}

// The rank's steps of a product schedule, from its partners in each row and column step:
// product step (a, b) pairs it with (row partner in a, column partner in b). Transposed
// (RankPlan::transposed()): a row partner as sender is A's grid column, a column partner A's
// grid row.
std::vector<RankStep> rank_steps_of_product(const RankPlan &plan,
                                            const std::vector<std::pair<int, int>> &row_partner,
                                            const std::vector<std::pair<int, int>> &col_partner) {
  const bool transposed = plan.transposed();
  const PeerIndex sends(plan.sends);
  const PeerIndex recvs(plan.recvs);
  std::vector<RankStep> steps;
  for (const auto &[row_to, row_from] : row_partner) {
    if (row_to < 0 && row_from < 0) continue;
    for (const auto &[col_to, col_from] : col_partner) {
      RankStep step;
      if (row_to >= 0 && col_to >= 0) {
        step.send = sends.find(row_to, col_to);
        if (step.send >= 0)
          step.send_count = plan.sends[static_cast<std::size_t>(step.send)].elements;
      }
      if (row_from >= 0 && col_from >= 0) {
        step.recv = transposed ? recvs.find(col_from, row_from) : recvs.find(row_from, col_from);
        if (step.recv >= 0)
          step.recv_count = plan.recvs[static_cast<std::size_t>(step.recv)].elements;
      }
      if (step.send >= 0 || step.recv >= 0) {
        steps.push_back(step);
      }
    }
  }
  return steps;
}

std::vector<RankStep> rank_steps_of_product(const Transfer &t, const RankPlan &plan,
                                            const TwoDimensional &two) {
  const GridPosition at = grid_position(t, plan);
  // The row schedule's senders are A's grid coordinates along perm[0] (src_coordinate).
  const int row_src = t.src_coordinate(0, at.spr, at.spc);
  const int col_src = t.src_coordinate(1, at.spr, at.spc);
  return rank_steps_of_product(plan, partners(two.rows, row_src, at.dpr),
                               partners(two.cols, col_src, at.dpc));
}

// The stepwise (or circulant) product when both dimensions have a closed form, laid out for
// one rank without building the 1-D schedules: the choice the product path of
// build_two_dimensional yields (same 1-D schedules, statistics and steps), in time and memory
// that grow with the steps and the rank's peers instead of the processes (a 1-D schedule of
// 65,536 processes has millions of pieces). False when it does not apply: other strategies,
// limits on concurrency, trapezoids (not products), small grids where stepwise may take the
// direct 2-D schedule, and closed forms that split messages across steps.
bool closed_form_product_choice(const Transfer &t, const RankPlan &plan, const ScheduleOptions &o,
                                std::size_t element_bytes, ScheduleChoice &choice) {
  if ((o.strategy != Strategy::stepwise && o.strategy != Strategy::circulant) ||
      o.max_concurrent != 0 || t.region.kind != Region::Kind::full) {
    return false;
  }
  const auto pairs = grid_pairs(t);
  if (o.strategy == Strategy::stepwise && pairs <= kDirectPairs) {
    return false;
  }
  if (node_levels(t, o) && two_level_exact(t)) {
    return false; // the two-level model costs the materialised schedule
  }
  // As one_dimension: the circulant when asked for and applicable, else the step-optimal
  // closed form.
  const auto form_of = [&](const Transfer1D &d, std::string &how) {
    if (o.strategy == Strategy::circulant) {
      if (auto circulant = ClosedFormSchedule::make(ClosedFormKind::circulant, d)) {
        how = "circulant";
        return circulant;
      }
    }
    how = "closed form";
    return best_closed_form(d, o.model, element_bytes);
  };
  std::string row_how;
  std::string col_how;
  const std::optional<ClosedFormSchedule> rows = form_of(t.rows(), row_how);
  const std::optional<ClosedFormSchedule> cols = form_of(t.cols(), col_how);
  if (!rows || !cols || rows->splits_messages() || cols->splits_messages()) {
    return false;
  }
  const auto nonempty = [](std::vector<StepSize> sizes) {
    std::erase_if(sizes, [](const StepSize &s) { return s.pieces == 0; });
    return sizes;
  };
  choice.detail = "rows: " + row_how + " x columns: " + col_how;
  choice.stats = product_stats(nonempty(rows->step_sizes()), nonempty(cols->step_sizes()),
                               flat_model(t, o), choice.chunk_elements, element_bytes);
  choice.stats.elements = plan.m * plan.n;
  // The partners the formulas do not give directly are searched among the grid rows and
  // columns of the rank's messages (self messages are never laid out, so they need none).
  const auto grid_lines = [](const std::vector<Peer> &peers, int Peer::*line) {
    std::vector<int> lines;
    lines.reserve(peers.size());
    for (const Peer &p : peers) {
      lines.push_back(p.*line);
    }
    std::sort(lines.begin(), lines.end());
    lines.erase(std::unique(lines.begin(), lines.end()), lines.end());
    return lines;
  };
  // Senders along B's rows are A's grid coordinates along perm[0] (src_coordinate): A's
  // grid columns when transposed; a receive's Peer names A's grid row and column.
  const GridPosition at = grid_position(t, plan);
  const bool transposed = t.transposed();
  const auto row_src = transposed ? &Peer::grid_col : &Peer::grid_row;
  const auto col_src = transposed ? &Peer::grid_row : &Peer::grid_col;
  choice.steps = rank_steps_of_product(
      plan,
      rows->partners(t.src_coordinate(0, at.spr, at.spc), at.dpr,
                     grid_lines(plan.sends, &Peer::grid_row), grid_lines(plan.recvs, row_src)),
      cols->partners(t.src_coordinate(1, at.spr, at.spc), at.dpc,
                     grid_lines(plan.sends, &Peer::grid_col), grid_lines(plan.recvs, col_src)));
  return true;
}

std::vector<RankStep> rank_steps_of_schedule(const Transfer &t, const RankPlan &plan,
                                             const Schedule &s) {
  int spr = -1;
  int spc = -1;
  int dpr = -1;
  int dpc = -1;
  const int src_node =
      plan.in_src && t.src.grid.find(plan.rank, spr, spc) ? spr + spc * t.src.grid.nprow : -1;
  const int dst_node =
      plan.in_dst && t.dst.grid.find(plan.rank, dpr, dpc) ? dpr + dpc * t.dst.grid.nprow : -1;
  const PeerIndex sends(plan.sends);
  const PeerIndex recvs(plan.recvs);
  std::vector<RankStep> steps;
  for (const Step &step : s.steps) {
    RankStep mine;
    for (const Piece &p : step.pieces) {
      if (p.src == src_node) {
        mine.send = sends.find(p.dst % t.dst.grid.nprow, p.dst / t.dst.grid.nprow);
        mine.send_offset = p.offset;
        mine.send_count = p.volume;
      }
      if (p.dst == dst_node) {
        mine.recv = recvs.find(p.src % t.src.grid.nprow, p.src / t.src.grid.nprow);
        mine.recv_offset = p.offset;
        mine.recv_count = p.volume;
      }
    }
    if (mine.send >= 0 || mine.recv >= 0) {
      steps.push_back(mine);
    }
  }
  return steps;
}

} // namespace

ScheduleInputs all_at_once_maxima(std::span<const AllAtOnceTotals> ranks, const CostModel &model,
                                  std::size_t element_bytes) {
  const auto es = static_cast<Index>(element_bytes);
  ScheduleInputs out;
  for (const AllAtOnceTotals &r : ranks) {
    out.all_at_once_buffer_max = std::max(out.all_at_once_buffer_max, (r.sent + r.received) * es);
    out.all_at_once_seconds =
        std::max(out.all_at_once_seconds,
                 model.alpha * static_cast<double>(std::max(r.sent_messages, r.received_messages)) +
                     model.beta * static_cast<double>(std::max(r.sent, r.received) * es));
  }
  return out;
}

ScheduleInputs all_at_once_local(const RankPlan &plan, const CostModel &model,
                                 std::size_t element_bytes) {
  const AllAtOnceTotals totals{static_cast<Index>(plan.sends.size()), plan.elements_sent(),
                               static_cast<Index>(plan.recvs.size()), plan.elements_received()};
  return all_at_once_maxima({&totals, 1}, model, element_bytes);
}

ScheduleInputs all_at_once_estimate(const Transfer &t, const CostModel &model,
                                    std::size_t element_bytes) {
  struct NodeTotals {
    std::vector<Index> messages;
    std::vector<Index> elements;
  };
  const auto totals = [](const VolumeGraph &g, bool as_sender) {
    const int nodes = as_sender ? g.senders : g.receivers;
    NodeTotals out{std::vector<Index>(static_cast<std::size_t>(nodes), 0),
                   std::vector<Index>(static_cast<std::size_t>(nodes), 0)};
    for (const Message &msg : g.messages) {
      const auto node = static_cast<std::size_t>(as_sender ? msg.src : msg.dst);
      ++out.messages[node];
      out.elements[node] += msg.volume;
    }
    return out;
  };
  const VolumeGraph rows = volume_graph(t.rows());
  const VolumeGraph cols = volume_graph(t.cols());
  const NodeTotals send_rows = totals(rows, true);
  const NodeTotals send_cols = totals(cols, true);
  const NodeTotals recv_rows = totals(rows, false);
  const NodeTotals recv_cols = totals(cols, false);
  std::vector<AllAtOnceTotals> ranks(static_cast<std::size_t>(comm_size_of(t)));
  // What a rank keeps: its source position's part of its destination position's data. The
  // row graph's senders are A's coordinates along perm[0] (A's grid columns when transposed).
  const auto kept = [&](int rank, int pr, int pc) {
    int qr = -1;
    int qc = -1;
    return t.dst.grid.find(rank, qr, qc) ? rows.volume(t.src_coordinate(0, pr, pc), qr) *
                                               cols.volume(t.src_coordinate(1, pr, pc), qc)
                                         : Index{0};
  };
  // A grid node's messages and elements: products of its row and column totals.
  const auto add = [](const NodeTotals &by_row, const NodeTotals &by_col, int row, int col,
                      Index self, Index &messages, Index &elements) {
    const auto r = static_cast<std::size_t>(row);
    const auto c = static_cast<std::size_t>(col);
    messages += by_row.messages[r] * by_col.messages[c] - (self > 0 ? 1 : 0);
    elements += by_row.elements[r] * by_col.elements[c] - self;
  };
  for (int pc = 0; pc < t.src.grid.npcol; ++pc) {
    for (int pr = 0; pr < t.src.grid.nprow; ++pr) {
      const int rank = t.src.grid.rank_at(pr, pc);
      const Index self = kept(rank, pr, pc);
      AllAtOnceTotals &r = ranks[static_cast<std::size_t>(rank)];
      add(send_rows, send_cols, t.src_coordinate(0, pr, pc), t.src_coordinate(1, pr, pc), self,
          r.sent_messages, r.sent);
    }
  }
  for (int qc = 0; qc < t.dst.grid.npcol; ++qc) {
    for (int qr = 0; qr < t.dst.grid.nprow; ++qr) {
      const int rank = t.dst.grid.rank_at(qr, qc);
      int pr = -1;
      int pc = -1;
      const Index self = t.src.grid.find(rank, pr, pc) ? kept(rank, pr, pc) : 0;
      AllAtOnceTotals &r = ranks[static_cast<std::size_t>(rank)];
      add(recv_rows, recv_cols, qr, qc, self, r.received_messages, r.received);
    }
  }
  return all_at_once_maxima(ranks, model, element_bytes);
}

std::optional<NodeLevels> node_levels(const Transfer &t, const ScheduleOptions &options) {
  return node_levels(t.src.grid.ranks, t.dst.grid.ranks, options);
}

std::optional<NodeLevels> node_levels(std::span<const int> src_ranks,
                                      std::span<const int> dst_ranks,
                                      const ScheduleOptions &options) {
  if (options.node_of_rank.empty()) {
    return std::nullopt;
  }
  NodeLevels levels{options.inter, {}, {}};
  bool several = false;
  const int first = options.node_of_rank.front();
  for (const auto &[ranks, nodes] :
       {std::pair{src_ranks, &levels.src_node}, std::pair{dst_ranks, &levels.dst_node}}) {
    nodes->reserve(ranks.size());
    for (const int rank : ranks) {
      if (rank < 0 || static_cast<std::size_t>(rank) >= options.node_of_rank.size()) {
        return std::nullopt;
      }
      nodes->push_back(options.node_of_rank[static_cast<std::size_t>(rank)]);
      several = several || nodes->back() != first;
    }
  }
  if (!several) {
    return std::nullopt;
  }
  return levels;
}

std::string all_at_once_choice(const ScheduleOptions &o, const ScheduleInputs &inputs,
                               Index elements, double seconds, ScheduleChoice &choice) {
  if (o.max_concurrent > 0) {
    return "all-at-once cannot honour max_concurrent = " + std::to_string(o.max_concurrent);
  }
  if (o.max_memory != 0 && inputs.all_at_once_buffer_max > o.max_memory) {
    return "all-at-once needs " + std::to_string(inputs.all_at_once_buffer_max) +
           " buffer bytes on the busiest process, more than max_memory = " +
           std::to_string(o.max_memory);
  }
  choice.detail = "all messages at once";
  choice.stats.steps = 1;
  choice.stats.elements = elements;
  choice.stats.seconds = seconds;
  return {};
}

std::string choose_one_phase(const ScheduleOptions &options, const ScheduleInputs &inputs,
                             std::size_t element_bytes, const OnePhaseBuilder &build,
                             ScheduleChoice &choice) {
  choice = ScheduleChoice{};
  Index chunk = 0;
  if (std::string why = check_options(options, element_bytes, chunk); !why.empty()) {
    return why;
  }
  if (options.strategy != Strategy::automatic) {
    return build(options, choice);
  }
  ScheduleOptions explicit_options = options;
  // On the linear model without contention no step schedule beats posting everything at
  // once (a step costs its largest message); steps pay off when limits are set. Then the
  // cheapest step schedule by the model wins.
  const bool all_at_once_fits =
      options.max_memory == 0 || inputs.all_at_once_buffer_max <= options.max_memory;
  if (options.max_concurrent == 0 && all_at_once_fits) {
    explicit_options.strategy = Strategy::all_at_once;
    return build(explicit_options, choice);
  }
  std::vector<Strategy> candidates = {Strategy::stepwise, Strategy::greedy};
  if (options.max_concurrent > 0) {
    candidates.push_back(Strategy::oggp);
    candidates.push_back(Strategy::ggp);
  }
  bool found = false;
  for (const Strategy candidate : candidates) {
    explicit_options.strategy = candidate;
    ScheduleChoice trial;
    if (build(explicit_options, trial).empty() &&
        (!found || trial.stats.seconds < choice.stats.seconds)) {
      choice = std::move(trial);
      found = true;
    }
  }
  if (!found) {
    return "no schedule honours the limits";
  }
  choice.detail = "auto: " + choice.detail;
  return {};
}

namespace {

// The predicted time of all-at-once: `inputs` (the busiest rank's part, one level), or with two
// levels all messages in one step (every rank port and node link loaded at once).
double all_at_once_seconds(const Transfer &t, const ScheduleOptions &o,
                           const ScheduleInputs &inputs, std::size_t element_bytes) {
  const std::optional<NodeLevels> levels = node_levels(t, o);
  if (!levels) {
    return inputs.all_at_once_seconds;
  }
  if (!two_level_exact(t)) {
    return all_at_once_estimate(t, o.inter, element_bytes).all_at_once_seconds;
  }
  const Schedule all = without_self(t, schedule_all_at_once(volume_graph(t)), false);
  return schedule_stats(all, o.model, *levels, element_bytes).seconds;
}

// --- Computing: what one strategy, already chosen, yields ---

// The whole schedule `two` stands for (the 2-D form of `o.strategy`, from
// build_two_dimensional), over grid positions: self messages removed, the concurrency and
// memory limits applied. `chunk` is check_options' chunk for `o`.
Schedule materialise(const Transfer &t, const ScheduleOptions &o, Index chunk,
                     const TwoDimensional &two, std::optional<VolumeGraph> &graph) {
  if (!graph) graph = volume_graph(t);
  const bool caterpillar = o.strategy == Strategy::caterpillar;
  Schedule s = two.product ? product_schedule(*graph, two.rows, two.cols, t.src.grid.nprow,
                                              t.dst.grid.nprow, caterpillar, t.transposed())
                           : two.direct;
  s = without_self(t, s, caterpillar);
  assign_offsets(s);
  return cut_pieces(limit_concurrency(s, o.max_concurrent), chunk);
}

// The whole schedule of `o.strategy`, which is neither automatic nor multiphase; `how` says
// how it was built.
std::string build_schedule(const Transfer &t, const ScheduleOptions &o, std::size_t element_bytes,
                           Schedule &out, std::string &how) {
  Index chunk = 0;
  if (std::string why = check_options(o, element_bytes, chunk); !why.empty()) {
    return why;
  }
  std::optional<VolumeGraph> graph{volume_graph(t)};
  if (o.strategy == Strategy::all_at_once) {
    out = without_self(t, schedule_all_at_once(*graph), false);
    how = "all messages at once";
    return {};
  }
  TwoDimensional two;
  if (std::string why = build_two_dimensional(t, o, element_bytes, graph, two); !why.empty()) {
    return why;
  }
  out = materialise(t, o, chunk, two, graph);
  how = std::string(strategy_name(o.strategy)) + ", " + two.detail;
  return {};
}

// The choice of `o.strategy`, which is neither automatic nor multiphase, for the rank of
// `plan`: its statistics and the rank's steps, or why the options cannot be honoured.
// `choice` comes in empty; `chunk` is check_options' chunk for `o`.
std::string build_one_phase(const Transfer &t, const RankPlan &plan, const ScheduleOptions &o,
                            const ScheduleInputs &inputs, std::size_t element_bytes, Index chunk,
                            ScheduleChoice &choice) {
  choice.strategy = o.strategy;
  if (o.strategy == Strategy::all_at_once) {
    return all_at_once_choice(o, inputs, plan.m * plan.n,
                              all_at_once_seconds(t, o, inputs, element_bytes), choice);
  }
  choice.chunk_elements = chunk;
  if (closed_form_product_choice(t, plan, o, element_bytes, choice)) {
    return {};
  }
  TwoDimensional two;
  std::optional<VolumeGraph> graph;
  if (std::string why = build_two_dimensional(t, o, element_bytes, graph, two); !why.empty()) {
    return why;
  }
  choice.detail = two.detail;
  if (two.product && o.max_concurrent == 0 && !(node_levels(t, o) && two_level_exact(t))) {
    choice.stats = product_stats(two, flat_model(t, o), chunk, element_bytes);
    choice.stats.elements = plan.m * plan.n;
    choice.steps = rank_steps_of_product(t, plan, two);
    return {};
  }
  const Schedule s = materialise(t, o, chunk, two, graph);
  choice.steps = rank_steps_of_schedule(t, plan, s);
  choice.stats = stats_of(t, o, s, element_bytes);
  return {};
}

// --- Deciding: choose_schedule's one-phase and two-phase parts ---

// The one-phase part of the decision: `options.strategy` itself, or for `automatic` the
// cheapest one-phase strategy by the model. `options.strategy` is not multiphase.
std::string choose_one_phase(const Transfer &t, const RankPlan &plan,
                             const ScheduleOptions &options, const ScheduleInputs &inputs,
                             std::size_t element_bytes, ScheduleChoice &choice) {
  Index chunk = 0;
  static_cast<void>(check_options(options, element_bytes, chunk));
  return choose_one_phase(
      options, inputs, element_bytes,
      [&](const ScheduleOptions &o, ScheduleChoice &c) {
        return build_one_phase(t, plan, o, inputs, element_bytes, chunk, c);
      },
      choice);
}

// The two phases to try: through an intermediate layout on the source grid and on the
// destination grid, every combination of dimension choices with at least one intermediate.
// On the source grid the intermediate has A's shape (a transposed transfer's first phase
// copies, its second transposes), on the destination grid B's (the first phase transposes,
// the second copies). A transposed trapezoid's region is stated on B's window: its
// intermediate lies on the destination grid only.
std::vector<std::array<Transfer, 2>> two_phase_candidates(const Transfer &t) {
  std::vector<std::array<Transfer, 2>> out;
  for (const bool source : {true, false}) {
    if (source && t.transposed() && t.region.kind != Region::Kind::full) {
      continue;
    }
    const Layout &end = source ? t.src : t.dst;
    // Along the end's axis a: B's dimension d holding it, and d's 1-D transfer.
    const auto choices = [&](int a) {
      const int d = source && t.transposed() ? 1 - a : a;
      const Transfer1D along = t.dim(d);
      return mid_dimensions(along.length, end.dim(a), end.start(a),
                            multiphase_intermediates(along));
    };
    const std::vector<MidDimension> rows = choices(0);
    const std::vector<MidDimension> cols = choices(1);
    for (const MidDimension &r : rows) {
      for (const MidDimension &c : cols) {
        if (!r.intermediate && !c.intermediate) {
          continue;
        }
        const Layout mid{r.layout, c.layout, end.grid, 0, 0};
        if (source) {
          out.push_back({Transfer{t.src, mid, r.layout.extent, c.layout.extent, t.region},
                         Transfer{mid, t.dst, t.m, t.n, t.region, t.perm}});
        } else {
          out.push_back({Transfer{t.src, mid, t.m, t.n, t.region, t.perm},
                         Transfer{mid, t.dst, t.m, t.n, t.region}});
        }
      }
    }
  }
  return out;
}

// Bytes of the largest intermediate array of `mid` over its grid.
Index mid_bytes_max(const Layout &mid, std::size_t element_bytes) {
  Index rows = 0;
  Index cols = 0;
  for (int p = 0; p < mid.grid.nprow; ++p)
    rows = std::max(rows, mid.rows.local_extent(p));
  for (int p = 0; p < mid.grid.npcol; ++p)
    cols = std::max(cols, mid.cols.local_extent(p));
  return rows * cols * static_cast<Index>(element_bytes);
}

// The two-phase part of the decision: Kaushik et al.'s two phases through the intermediate
// layout the model finds cheapest, each phase chosen as `automatic` would under the options'
// limits (the intermediate array counted against max_memory). False when no intermediate
// layout applies or fits, or none is predicted faster than `bound` seconds (a candidate is
// dropped as soon as its first phase alone reaches the bound or the best candidate's time).
bool choose_two_phase(const Transfer &t, const RankPlan &plan, const ScheduleOptions &options,
                      std::size_t element_bytes, ScheduleChoice &choice, double bound) {
  const int comm_size = std::max(comm_size_of(t), plan.rank + 1);
  std::shared_ptr<TwoPhase> best;
  const auto seconds = [](const TwoPhase &p) {
    return p.choices[0].stats.seconds + p.choices[1].stats.seconds;
  };
  for (const std::array<Transfer, 2> &phases : two_phase_candidates(t)) {
    const Layout &mid = phases[0].dst;
    ScheduleOptions phase_options;
    if (!two_phase_options(options, mid_bytes_max(mid, element_bytes), element_bytes,
                           phase_options)) {
      continue;
    }
    auto two = std::make_shared<TwoPhase>();
    two->mid = mid;
    two->transfers = phases;
    const double to_beat = best ? std::min(bound, seconds(*best)) : bound;
    bool feasible = true;
    for (std::size_t phase = 0; phase < 2 && feasible; ++phase) {
      const Transfer &pt = two->transfers[phase];
      two->plans[phase] = make_rank_plan(pt, plan.rank, comm_size);
      feasible = choose_one_phase(pt, two->plans[phase], phase_options,
                                  all_at_once_estimate(pt, options.model, element_bytes),
                                  element_bytes, two->choices[phase])
                     .empty() &&
                 two->choices[phase].stats.seconds < to_beat;
    }
    if (feasible && seconds(*two) < to_beat) {
      two->phase_options = phase_options;
      two->phase_options.node_of_rank = {}; // O(ranks): not kept by an executing plan
      best = std::move(two);
    }
  }
  if (!best) {
    return false;
  }
  int pr = -1;
  int pc = -1;
  if (best->mid.grid.find(plan.rank, pr, pc)) {
    best->mid_lld = std::max<Index>(1, best->mid.rows.local_extent(pr));
    best->mid_elements = best->mid_lld * best->mid.cols.local_extent(pc);
  }
  choice = ScheduleChoice{};
  choice.strategy = Strategy::multiphase;
  const auto side = [&](const Layout &mid) {
    return mid.grid.ranks == t.src.grid.ranks && mid.grid.nprow == t.src.grid.nprow ? "source"
                                                                                    : "destination";
  };
  const auto dimension = [](const BlockCyclic &d) {
    return "CYCLIC(" + std::to_string(d.block) + ")";
  };
  choice.detail = "two phases through " + dimension(best->mid.rows) + " x " +
                  dimension(best->mid.cols) + " on the " + side(best->mid) +
                  " grid: " + std::string(strategy_name(best->choices[0].strategy)) + " then " +
                  std::string(strategy_name(best->choices[1].strategy));
  choice.stats = two_phase_stats(best->choices);
  choice.phases = std::move(best);
  return true;
}

// The choice every rank makes for `t` (choose_schedule's, for rank 0), from the maxima over
// all ranks of the transfer: how the offline callers get the decision.
std::string whole_transfer_choice(const Transfer &t, const ScheduleOptions &options,
                                  std::size_t element_bytes, ScheduleChoice &choice) {
  const int comm_size = comm_size_of(t);
  ScheduleInputs inputs;
  for (int r = 0; r < comm_size; ++r) {
    const ScheduleInputs local =
        all_at_once_local(make_rank_plan(t, r, comm_size), options.model, element_bytes);
    inputs.all_at_once_buffer_max =
        std::max(inputs.all_at_once_buffer_max, local.all_at_once_buffer_max);
    inputs.all_at_once_seconds = std::max(inputs.all_at_once_seconds, local.all_at_once_seconds);
  }
  return choose_schedule(t, make_rank_plan(t, 0, comm_size), options, inputs, element_bytes,
                         choice);
}

} // namespace

std::vector<MidDimension> mid_dimensions(Index length, const BlockCyclic &own, Index own_start,
                                         std::span<const BlockCyclic> intermediates) {
  std::vector<MidDimension> out;
  const auto first_owner =
      static_cast<int>((own_start / own.block + own.src) % static_cast<Index>(own.nprocs));
  out.push_back({BlockCyclic{length, own.block, own.nprocs, first_owner}, false});
  if (own.nprocs > 1) {
    for (const BlockCyclic &mid : intermediates) {
      if (mid.nprocs == own.nprocs) {
        out.push_back({mid, true});
      }
    }
  }
  return out;
}

bool two_phase_options(const ScheduleOptions &options, Index mid_bytes, std::size_t element_bytes,
                       ScheduleOptions &phase_options) {
  phase_options = options;
  phase_options.strategy = Strategy::automatic;
  if (options.max_memory > 0) {
    phase_options.max_memory = (options.max_memory - mid_bytes) / 2;
    return phase_options.max_memory >= static_cast<Index>(2 * element_bytes);
  }
  return true;
}

ScheduleStats two_phase_stats(const std::array<ScheduleChoice, 2> &phases) {
  ScheduleStats st;
  for (const ScheduleChoice &phase : phases) {
    const ScheduleStats &p = phase.stats;
    st.steps += p.steps;
    st.pieces += p.pieces;
    st.elements += p.elements;
    st.sum_step_max += p.sum_step_max;
    st.largest_piece = std::max(st.largest_piece, p.largest_piece);
    st.max_node_pieces = std::max(st.max_node_pieces, p.max_node_pieces);
    st.seconds += p.seconds;
  }
  return st;
}

double two_phase_floor(const ScheduleOptions &options) {
  const double alpha = options.node_of_rank.empty()
                           ? options.model.alpha
                           : std::min(options.model.alpha, options.inter.alpha);
  return 2 * alpha;
}

std::string choose_phases(const ScheduleOptions &options, std::size_t element_bytes,
                          const OnePhaseBuilder &one, const TwoPhaseBuilder &two,
                          const std::function<double(const ScheduleChoice &)> &one_phase_seconds,
                          const std::string &why_one_phase, ScheduleChoice &choice) {
  if (options.strategy == Strategy::multiphase) {
    Index chunk = 0;
    if (std::string why = check_options(options, element_bytes, chunk); !why.empty()) {
      return why;
    }
    if (two(std::numeric_limits<double>::infinity(), choice)) {
      return {};
    }
    ScheduleOptions automatic = options;
    automatic.strategy = Strategy::automatic;
    std::string why = one(automatic, choice);
    choice.detail = why_one_phase + ", one phase: " + choice.detail;
    return why;
  }
  if (std::string why = one(options, choice);
      !why.empty() || options.strategy != Strategy::automatic) {
    return why;
  }
  const double bound = one_phase_seconds(choice);
  if (ScheduleChoice faster; bound > two_phase_floor(options) && two(bound, faster)) {
    choice = std::move(faster);
    choice.detail = "auto: " + choice.detail;
  }
  return {};
}

std::string choose_schedule(const Transfer &t, const RankPlan &plan, const ScheduleOptions &options,
                            const ScheduleInputs &inputs, std::size_t element_bytes,
                            ScheduleChoice &choice) {
  return choose_phases(
      options, element_bytes,
      [&](const ScheduleOptions &o, ScheduleChoice &c) {
        return choose_one_phase(t, plan, o, inputs, element_bytes, c);
      },
      [&](double bound, ScheduleChoice &c) {
        return choose_two_phase(t, plan, options, element_bytes, c, bound);
      },
      // All-at-once is compared on the estimate the phases are costed with.
      [&](const ScheduleChoice &one) {
        return one.strategy == Strategy::all_at_once && !node_levels(t, options)
                   ? all_at_once_estimate(t, options.model, element_bytes).all_at_once_seconds
                   : one.stats.seconds;
      },
      kNoIntermediateLayout, choice);
}

namespace {

// The whole schedule of `chosen`, the one-phase strategy choose_schedule chose for a transfer
// planned under `options`; the detail says how it was built and whether it was chosen for
// `automatic` or `multiphase`.
std::string chosen_schedule(const Transfer &t, const ScheduleOptions &options, Strategy chosen,
                            std::size_t element_bytes, Schedule &out, std::string &detail) {
  ScheduleOptions resolved = options;
  resolved.strategy = chosen;
  std::string how;
  if (std::string why = build_schedule(t, resolved, element_bytes, out, how); !why.empty()) {
    return why;
  }
  if (options.strategy == Strategy::multiphase) {
    detail = std::string(kNoIntermediateLayout) + ", one phase: " + how;
  } else if (options.strategy == Strategy::automatic && chosen != Strategy::all_at_once) {
    detail = "auto: " + how;
  } else {
    detail = how;
  }
  return {};
}

} // namespace

Schedule dimension_schedule(Strategy s, const Transfer1D &t, const CostModel &model,
                            std::size_t element_bytes, std::string &how) {
  return one_dimension(s, t, model, element_bytes, how);
}

std::string global_schedule(const Transfer &t, const ScheduleOptions &options,
                            std::size_t element_bytes, Schedule &out, std::string &detail) {
  Index chunk = 0;
  if (std::string why = check_options(options, element_bytes, chunk); !why.empty()) {
    return why;
  }
  Strategy chosen = options.strategy;
  if (options.strategy == Strategy::automatic || options.strategy == Strategy::multiphase) {
    ScheduleChoice choice;
    if (std::string why = whole_transfer_choice(t, options, element_bytes, choice); !why.empty()) {
      return why;
    }
    if (choice.phases) {
      return "the plan runs in two phases (" + choice.detail + "); each phase has its own schedule";
    }
    chosen = choice.strategy;
  }
  return chosen_schedule(t, options, chosen, element_bytes, out, detail);
}

std::string global_phases(const Transfer &t, const ScheduleOptions &options,
                          std::size_t element_bytes, std::vector<GlobalPhase> &phases,
                          std::string &detail) {
  phases.clear();
  ScheduleChoice choice;
  if (std::string why = whole_transfer_choice(t, options, element_bytes, choice); !why.empty()) {
    return why;
  }
  if (!choice.phases) {
    GlobalPhase one{t, {}, {}};
    std::string why =
        chosen_schedule(t, options, choice.strategy, element_bytes, one.schedule, one.detail);
    detail = one.detail;
    phases.push_back(std::move(one));
    return why;
  }
  detail = choice.detail;
  for (std::size_t i = 0; i < 2; ++i) {
    // Each phase as if its strategy had been asked for: the detail names no `auto`.
    ScheduleOptions phase_options = choice.phases->phase_options;
    phase_options.strategy = choice.phases->choices[i].strategy;
    phase_options.node_of_rank = options.node_of_rank;
    GlobalPhase phase{choice.phases->transfers[i], {}, {}};
    if (std::string why = chosen_schedule(phase.transfer, phase_options, phase_options.strategy,
                                          element_bytes, phase.schedule, phase.detail);
        !why.empty()) {
      return why;
    }
    phases.push_back(std::move(phase));
  }
  return {};
}

} // namespace redist
