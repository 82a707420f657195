#include "planner.hpp"

#include "schedule_cyclic.hpp"
#include "schedule_matching.hpp"

#include <algorithm>
#include <cmath>
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

// Desprez et al.'s step-optimal 1-D schedule: a closed form where its conditions hold
// (class-based, Walker & Otto, Park et al.), else their Stepwise matchings.
Schedule step_optimal(const Transfer1D &t, const VolumeGraph &g, const CostModel &model,
                      std::size_t element_bytes, std::string &how) {
  if (auto closed = schedule_closed_form(t, model, element_bytes)) {
    how = "closed form";
    return std::move(*closed);
  }
  how = "stepwise matchings";
  return schedule_stepwise(g);
}

// The 1-D schedule of a strategy along one dimension.
Schedule one_dimension(Strategy s, const Transfer1D &t, const CostModel &model,
                       std::size_t element_bytes, std::string &how) {
  const VolumeGraph g = volume_graph(t);
  switch (s) {
  case Strategy::caterpillar:
    how = "caterpillar";
    return schedule_caterpillar(g);
  case Strategy::greedy:
    how = "greedy matchings";
    return schedule_greedy(g);
  case Strategy::circulant:
    if (auto circulant = schedule_circulant(t)) {
      how = "circulant";
      return std::move(*circulant);
    }
    break; // not CYCLIC(x) -> CYCLIC(kx) here: the step-optimal schedule instead
  default:
    break;
  }
  return step_optimal(t, g, model, element_bytes, how);
}

// Direct 2-D schedules (on the full graph of grid positions) are computed only up to this
// many sender-receiver pairs; beyond, the product of 1-D schedules is used.
constexpr Index kDirectPairs = 4096;

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

// `graph` is the 2-D volume graph, computed here on first need when the caller has none.
std::string build_two_dimensional(const Transfer &t, const ScheduleOptions &o,
                                  std::size_t element_bytes, std::optional<VolumeGraph> &graph,
                                  TwoDimensional &out) {
  const Strategy s = o.strategy;
  const auto graph_2d = [&]() -> const VolumeGraph & {
    if (!graph) graph = volume_graph(t);
    return *graph;
  };
  const auto pairs =
      static_cast<Index>(t.src.grid.nprow) * t.src.grid.npcol * t.dst.grid.nprow * t.dst.grid.npcol;
  if (s == Strategy::ggp || s == Strategy::oggp) {
    // Jeannot & Wagner: the step setup as elements, messages split across steps.
    const double per_element = o.model.beta * static_cast<double>(element_bytes);
    const auto setup = static_cast<Index>(std::max(
        1.0, std::round((o.model.alpha + o.model.step_setup) / std::max(per_element, 1e-30))));
    const VolumeGraph &g = graph_2d();
    out.product = false;
    out.direct = s == Strategy::ggp ? schedule_ggp(g, o.max_concurrent, setup)
                                    : schedule_oggp(g, o.max_concurrent, setup);
    out.detail = std::string(strategy_name(s)) + " on the 2-D graph, k = " +
                 (o.max_concurrent > 0 ? std::to_string(o.max_concurrent) : "unlimited") +
                 ", step setup = " + std::to_string(setup) + " elements";
    return {};
  }
  if (s == Strategy::multiphase) {
    // The two phases are planned and costed (multiphase_intermediates, multiphase_cost), but
    // plans do not execute through an intermediate layout yet: refused, never replaced.
    return "schedule 'multiphase' cannot be executed yet (two-phase plans through an "
           "intermediate layout are not built); choose another schedule";
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
    const VolumeGraph &g = graph_2d();
    Schedule direct = s == Strategy::stepwise ? schedule_stepwise(g) : schedule_greedy(g);
    const ScheduleStats direct_stats = schedule_stats(direct, o.model, element_bytes);
    const ScheduleStats product =
        schedule_stats(product_schedule(g, out.rows, out.cols, t.src.grid.nprow, t.dst.grid.nprow),
                       o.model, element_bytes);
    if (direct_stats.seconds < product.seconds) {
      out.product = false;
      out.direct = std::move(direct);
      out.detail = std::string(strategy_name(s)) + " on the 2-D graph";
    }
  }
  return {};
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

std::string global_schedule(const Transfer &t, const ScheduleOptions &options,
                            std::size_t element_bytes, Schedule &out, std::string &detail) {
  Index chunk = 0;
  if (std::string why = check_options(options, element_bytes, chunk); !why.empty()) {
    return why;
  }
  ScheduleOptions resolved = options;
  if (options.strategy == Strategy::automatic) {
    // The choice every rank would make: from the maxima over all ranks of the transfer.
    int comm_size = 0;
    for (const auto *grid : {&t.src.grid, &t.dst.grid}) {
      for (const int r : grid->ranks) {
        comm_size = std::max(comm_size, r + 1);
      }
    }
    ScheduleInputs inputs;
    for (int r = 0; r < comm_size; ++r) {
      const ScheduleInputs local =
          all_at_once_local(make_rank_plan(t, r, comm_size), options.model, element_bytes);
      inputs.all_at_once_buffer_max =
          std::max(inputs.all_at_once_buffer_max, local.all_at_once_buffer_max);
      inputs.all_at_once_seconds = std::max(inputs.all_at_once_seconds, local.all_at_once_seconds);
    }
    ScheduleChoice choice;
    if (std::string why = choose_schedule(t, make_rank_plan(t, 0, comm_size), options, inputs,
                                          element_bytes, choice);
        !why.empty()) {
      return why;
    }
    resolved.strategy = choice.strategy;
  }
  std::optional<VolumeGraph> graph_storage{volume_graph(t)};
  const VolumeGraph &graph = *graph_storage;
  if (resolved.strategy == Strategy::all_at_once) {
    out = without_self(t, schedule_all_at_once(graph), false);
    detail = "all messages at once";
    return {};
  }
  TwoDimensional two;
  if (std::string why = build_two_dimensional(t, resolved, element_bytes, graph_storage, two);
      !why.empty()) {
    return why;
  }
  const bool caterpillar = resolved.strategy == Strategy::caterpillar;
  Schedule s = two.product ? product_schedule(graph, two.rows, two.cols, t.src.grid.nprow,
                                              t.dst.grid.nprow, caterpillar)
                           : two.direct;
  s = without_self(t, s, caterpillar);
  assign_offsets(s);
  out = cut_pieces(limit_concurrency(s, options.max_concurrent), chunk);
  detail = (options.strategy == Strategy::automatic ? "auto: " : "") +
           std::string(strategy_name(resolved.strategy)) + ", " + two.detail;
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
    // On the linear model without contention no step schedule beats posting everything at
    // once (a step costs its largest message); steps pay off when limits are set. Then the
    // cheapest step schedule by the model wins.
    if (options.max_concurrent == 0 && all_at_once_fits) {
      strategy = Strategy::all_at_once;
    } else {
      std::vector<Strategy> candidates = {Strategy::stepwise, Strategy::greedy};
      if (options.max_concurrent > 0) {
        candidates.push_back(Strategy::oggp);
        candidates.push_back(Strategy::ggp);
      }
      ScheduleOptions explicit_options = options;
      bool found = false;
      for (const Strategy candidate : candidates) {
        explicit_options.strategy = candidate;
        ScheduleChoice trial;
        if (choose_schedule(t, plan, explicit_options, inputs, element_bytes, trial).empty() &&
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
  std::optional<VolumeGraph> graph;
  if (std::string why = build_two_dimensional(t, resolved, element_bytes, graph, two);
      !why.empty()) {
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
  if (std::string why = global_schedule(t, resolved, element_bytes, s, detail); !why.empty()) {
    return why;
  }
  choice.steps = rank_steps_of_schedule(t, plan, s);
  choice.stats = schedule_stats(s, options.model, element_bytes);
  return {};
}

} // namespace redist
