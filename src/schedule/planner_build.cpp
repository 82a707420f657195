// Building a strategy the planner chose: 1-D schedules (closed forms of Desprez et al. 1998,
// Walker & Otto 1996 and Park et al. 1999, else matchings), their product or a schedule of the
// whole 2-D graph (Desprez et al. 1998, Sec. 6), GGP / OGGP (Jeannot & Wagner 2004, Sec. 4),
// then the limits applied: self messages removed, at most k pieces per step (Jeannot & Wagner
// 2004) and pieces cut to the memory cap. Pure, no MPI.

#include "planner.hpp"
#include "planner_internal.hpp"
#include "schedule_cyclic.hpp"
#include "schedule_matching.hpp"

#include <algorithm>
#include <cstddef>
#include <optional>
#include <span>
#include <string>
#include <utility>
#include <vector>

namespace redist {

using namespace planning;

namespace {

Index ceil_div(Index a, Index b) {
  return (a + b - 1) / b;
}

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

} // namespace

namespace planning {

Schedule without_self(const Transfer &t, const Schedule &s, bool keep_empty_steps) {
  return redist::without_self(s, t.src.grid.ranks, t.dst.grid.ranks, keep_empty_steps);
}

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

} // namespace planning

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

Schedule dimension_schedule(Strategy s, const Transfer1D &t, const CostModel &model,
                            std::size_t element_bytes, std::string &how) {
  return one_dimension(s, t, model, element_bytes, how);
}

} // namespace redist
