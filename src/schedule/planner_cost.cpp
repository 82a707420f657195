// The planner's predictions: the cost model applied to schedules, products of 1-D schedules
// costed from their step sizes (Desprez et al. 1998, Sec. 6), all-at-once estimated from the
// 1-D volume graphs, the node levels of the two-level model (schedule.hpp's NodeLevels), and
// the statistics and floor of Kaushik et al.'s two phases (Evers 2025 review,
// Secs. 4.2.1-4.2.2). Pure, no MPI.

#include "planner.hpp"
#include "planner_internal.hpp"

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <optional>
#include <span>
#include <vector>

namespace redist {

using namespace planning;

namespace {

Index ceil_div(Index a, Index b) {
  return (a + b - 1) / b;
}

std::vector<StepSize> step_sizes(const Schedule &s) {
  std::vector<StepSize> sizes;
  sizes.reserve(s.steps.size());
  for (const Step &step : s.steps) {
    sizes.push_back({step.largest(), static_cast<Index>(step.pieces.size())});
  }
  return sizes;
}

} // namespace

namespace planning {

int comm_size_of(const Transfer &t) {
  int size = 0;
  for (const auto *grid : {&t.src.grid, &t.dst.grid}) {
    for (const int r : grid->ranks) {
      size = std::max(size, r + 1);
    }
  }
  return size;
}

Index grid_pairs(const Transfer &t) {
  return static_cast<Index>(t.src.grid.nprow) * t.src.grid.npcol * t.dst.grid.nprow *
         t.dst.grid.npcol;
}

bool two_level_exact(const Transfer &t) {
  return grid_pairs(t) <= kDirectPairs;
}

const CostModel &flat_model(const Transfer &t, const ScheduleOptions &o) {
  return node_levels(t, o) && !two_level_exact(t) ? o.inter : o.model;
}

ScheduleStats stats_of(const Transfer &t, const ScheduleOptions &o, const Schedule &s,
                       std::size_t element_bytes) {
  const std::optional<NodeLevels> levels = node_levels(t, o);
  return levels ? schedule_stats(s, o.model, *levels, element_bytes)
                : schedule_stats(s, o.model, element_bytes);
}

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

ScheduleStats product_stats(const TwoDimensional &two, const CostModel &model, Index chunk,
                            std::size_t element_bytes) {
  return product_stats(step_sizes(two.rows), step_sizes(two.cols), model, chunk, element_bytes);
}

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

} // namespace planning

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

Index step_setup_elements(const ScheduleOptions &o, const CostModel &level,
                          std::size_t element_bytes) {
  const double per_element = level.beta * static_cast<double>(element_bytes);
  return static_cast<Index>(
      std::max(1.0, std::round((level.alpha + o.model.step_setup) / std::max(per_element, 1e-30))));
}

} // namespace redist
