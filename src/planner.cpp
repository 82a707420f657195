#include "planner.hpp"

#include <algorithm>
#include <map>
#include <optional>
#include <utility>

namespace redist {
namespace {

Index ceil_div(Index a, Index b) {
  return (a + b - 1) / b;
}

// A 2-D schedule either as the product of a row and a column schedule (Desprez et al.
// Sec. 6: never materialised, so its size grows with the 1-D problems only) or as an
// explicit schedule over the grid positions.
struct TwoDimensional {
  bool product = true;
  Schedule rows;
  Schedule cols;
  Schedule direct;
  std::string detail;
};

// The 1-D schedule of a strategy along one dimension, or nullopt when the strategy has no
// 1-D form here.
std::optional<Schedule> one_dimension(Strategy s, const VolumeGraph &g, std::string &how) {
  switch (s) {
  case Strategy::caterpillar:
    how = "caterpillar";
    return schedule_caterpillar(g);
  default:
    return std::nullopt;
  }
}

// Drop the pieces a rank sends to itself (the executor copies those locally) and the steps
// left empty, except for the caterpillar, whose empty steps are part of its definition.
Schedule without_self(const Transfer &t, const Schedule &s, bool keep_empty_steps) {
  Schedule out;
  for (const Step &step : s.steps) {
    Step kept;
    for (const Piece &p : step.pieces) {
      const int src = t.src.grid.ranks[static_cast<std::size_t>(p.src)];
      const int dst = t.dst.grid.ranks[static_cast<std::size_t>(p.dst)];
      if (src != dst) {
        kept.pieces.push_back(p);
      }
    }
    if (keep_empty_steps || !kept.pieces.empty()) {
      out.steps.push_back(std::move(kept));
    }
  }
  return out;
}

// Jeannot & Wagner's bound on concurrent transfers applied to a contention-free schedule:
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

std::string build_two_dimensional(const Transfer &t, const ScheduleOptions &o,
                                  TwoDimensional &out) {
  const Strategy s = o.strategy;
  if (s == Strategy::caterpillar) {
    std::string row_how;
    std::string col_how;
    auto rows = one_dimension(s, volume_graph(t.rows()), row_how);
    auto cols = one_dimension(s, volume_graph(t.cols()), col_how);
    out.rows = std::move(*rows);
    out.cols = std::move(*cols);
    out.detail = "rows: " + row_how + " x columns: " + col_how;
    return {};
  }
  return "schedule '" + std::string(strategy_name(s)) + "' is not available in this build";
}

// The product's statistics from the 1-D step maxima, without materialising it: step (a, b)
// is at most max_a * max_b elements (exact for full windows; an upper bound for trapezoids).
ScheduleStats product_stats(const TwoDimensional &two, const CostModel &model, Index chunk,
                            std::size_t element_bytes) {
  ScheduleStats st;
  const auto bytes = static_cast<double>(element_bytes);
  for (const Step &a : two.rows.steps) {
    for (const Step &b : two.cols.steps) {
      const Index largest = a.largest() * b.largest();
      const Index parts = chunk > 0 ? std::max<Index>(1, ceil_div(largest, chunk)) : 1;
      st.steps += parts;
      st.pieces += static_cast<Index>(a.pieces.size() * b.pieces.size()) * parts;
      st.sum_step_max += largest;
      st.largest_piece = std::max(st.largest_piece, chunk > 0 ? std::min(largest, chunk) : largest);
      st.max_node_pieces =
          std::max<Index>(st.max_node_pieces, a.pieces.empty() || b.pieces.empty() ? 0 : 1);
      st.seconds += static_cast<double>(parts) * (model.alpha + model.step_setup) +
                    model.beta * bytes * static_cast<double>(largest);
    }
  }
  return st;
}

// Index of a message in this rank's plan by the peer's grid position.
int find_peer(const std::vector<Peer> &peers, int row_slot, int col_slot) {
  for (std::size_t i = 0; i < peers.size(); ++i) {
    if (peers[i].row_slot == row_slot && peers[i].col_slot == col_slot) {
      return static_cast<int>(i);
    }
  }
  return -1;
}

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

std::vector<RankStep> rank_steps_of_product(const Transfer &t, const RankPlan &plan,
                                            const TwoDimensional &two) {
  int spr = -1;
  int spc = -1;
  int dpr = -1;
  int dpc = -1;
  if (plan.in_src) t.src.grid.find(plan.rank, spr, spc);
  if (plan.in_dst) t.dst.grid.find(plan.rank, dpr, dpc);
  const auto row_partner = partners(two.rows, spr, dpr);
  const auto col_partner = partners(two.cols, spc, dpc);
  std::vector<RankStep> steps;
  for (const auto &[row_to, row_from] : row_partner) {
    for (const auto &[col_to, col_from] : col_partner) {
      RankStep step;
      if (row_to >= 0 && col_to >= 0) {
        step.send = find_peer(plan.sends, row_to, col_to);
        if (step.send >= 0)
          step.send_count = plan.sends[static_cast<std::size_t>(step.send)].elements;
      }
      if (row_from >= 0 && col_from >= 0) {
        step.recv = find_peer(plan.recvs, row_from, col_from);
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
  std::vector<RankStep> steps;
  for (const Step &step : s.steps) {
    RankStep mine;
    for (const Piece &p : step.pieces) {
      if (p.src == src_node) {
        mine.send = find_peer(plan.sends, p.dst % t.dst.grid.nprow, p.dst / t.dst.grid.nprow);
        mine.send_offset = p.offset;
        mine.send_count = p.volume;
      }
      if (p.dst == dst_node) {
        mine.recv = find_peer(plan.recvs, p.src % t.src.grid.nprow, p.src / t.src.grid.nprow);
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

} // namespace

ScheduleInputs all_at_once_local(const RankPlan &plan, const CostModel &model,
                                 std::size_t element_bytes) {
  const auto es = static_cast<Index>(element_bytes);
  const Index sent = plan.elements_sent() * es;
  const Index received = plan.elements_received() * es;
  ScheduleInputs local;
  local.all_at_once_buffer_max = sent + received;
  const auto messages = static_cast<double>(std::max(plan.sends.size(), plan.recvs.size()));
  local.all_at_once_seconds =
      model.alpha * messages + model.beta * static_cast<double>(std::max(sent, received));
  return local;
}

std::string global_schedule(const Transfer &t, const ScheduleOptions &options, Schedule &out,
                            std::string &detail) {
  const VolumeGraph graph = volume_graph(t);
  if (options.strategy == Strategy::all_at_once || options.strategy == Strategy::automatic) {
    out = without_self(t, schedule_all_at_once(graph), false);
    detail = "all messages at once";
    return {};
  }
  TwoDimensional two;
  if (std::string why = build_two_dimensional(t, options, two); !why.empty()) {
    return why;
  }
  Schedule s = two.product
                   ? product_schedule(graph, two.rows, two.cols, t.src.grid.nprow, t.dst.grid.nprow)
                   : two.direct;
  out = without_self(t, s, options.strategy == Strategy::caterpillar);
  assign_offsets(out);
  detail = two.detail;
  return {};
}

std::string choose_schedule(const Transfer &t, const RankPlan &plan, const ScheduleOptions &options,
                            const ScheduleInputs &inputs, std::size_t element_bytes,
                            ScheduleChoice &choice) {
  choice = ScheduleChoice{};
  Index chunk = 0;
  if (std::string why = check_options(options, element_bytes, chunk); !why.empty()) {
    return why;
  }
  const bool all_at_once_fits =
      options.max_memory == 0 || inputs.all_at_once_buffer_max <= options.max_memory;
  Strategy strategy = options.strategy;
  if (strategy == Strategy::automatic) {
    // On the linear model without contention, no step schedule beats posting everything at
    // once (each step costs its largest message); steps pay off when limits are set.
    strategy = options.max_concurrent == 0 && all_at_once_fits ? Strategy::all_at_once
                                                               : Strategy::caterpillar;
  }
  choice.strategy = strategy;
  ScheduleOptions resolved = options;
  resolved.strategy = strategy;
  if (strategy == Strategy::all_at_once) {
    if (options.max_concurrent > 0) {
      return "all-at-once cannot honour max_concurrent = " + std::to_string(options.max_concurrent);
    }
    if (!all_at_once_fits) {
      return "all-at-once needs " + std::to_string(inputs.all_at_once_buffer_max) +
             " buffer bytes on the busiest process, more than max_memory = " +
             std::to_string(options.max_memory);
    }
    choice.detail = "all messages at once";
    choice.stats.steps = 1;
    choice.stats.elements = plan.m * plan.n;
    choice.stats.seconds = inputs.all_at_once_seconds;
    return {};
  }
  TwoDimensional two;
  if (std::string why = build_two_dimensional(t, resolved, two); !why.empty()) {
    return why;
  }
  choice.detail = two.detail;
  choice.chunk_elements = chunk;
  if (two.product && options.max_concurrent == 0) {
    choice.stats = product_stats(two, options.model, chunk, element_bytes);
    choice.stats.elements = plan.m * plan.n;
    choice.steps = rank_steps_of_product(t, plan, two);
    return {};
  }
  Schedule s;
  std::string detail;
  if (std::string why = global_schedule(t, resolved, s, detail); !why.empty()) {
    return why;
  }
  s = limit_concurrency(s, options.max_concurrent);
  choice.steps = rank_steps_of_schedule(t, plan, s);
  choice.stats = schedule_stats(cut_pieces(s, chunk), options.model, element_bytes);
  return {};
}

} // namespace redist
