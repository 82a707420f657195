// redist-plan: print the communication schedule of a redistribution without running it (no
// MPI): the volume graph, the steps of a strategy, N, T and the predicted time; or a ring
// rebalance (--ring): flows, timed moves, bounds, optionally drawn as SVG.

#include "backbone.hpp"
#include "plan_svg.hpp"
#include "planner.hpp"
#include "relabel.hpp"
#include "ring.hpp"
#include "schedule.hpp"
#include "schedule_cyclic.hpp"
#include "schedule_matching.hpp"
#include "svg.hpp"
#include "torus.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <iomanip>
#include <iostream>
#include <limits>
#include <numeric>
#include <optional>
#include <sstream>
#include <stdexcept>
#include <string>
#include <vector>

namespace {

using redist::Index;

constexpr const char *kHelp =
    R"(usage: redist-plan (--1d P,Q,r,s,EXTENT | --2d M,N --a LAYOUT --b LAYOUT) [options]
       redist-plan --ring L1,L2,... (--targets T1,... | --weights W1,...) [ring options]

Prints the schedule of a block-cyclic redistribution: the volume graph (who sends how many
elements to whom), the steps of the chosen strategy, the number of steps N, the sum T of the
steps' largest messages, and the time the cost model predicts. Needs no MPI.

Problem
  --1d P,Q,r,s,EXTENT   CYCLIC(r) on P processes -> CYCLIC(s) on Q processes, EXTENT elements
                        (the two process sets are distinct, as in the papers)
  --src-start K, --dst-start K
                        1-D: the window starts at global index K of the source / destination
  --src-proc p, --dst-proc q
                        1-D: the process holding the first block (default 0)
  --2d M,N              2-D: copy an M x N window between the layouts --a and --b
  --a MB,NB,NPROW,NPCOL[,RSRC,CSRC,I,J]
  --b MB,NB,NPROW,NPCOL[,RSRC,CSRC,I,J]
                        block sizes, grid shape, source process (0-based) and window start
                        (0-based global row and column); the global matrix is sized to fit
  --region full|upper|lower
                        2-D: the part of the window copied (PxTRMR2D's trapezoids)
  --unit-diag           2-D trapezoids: the diagonal is not copied
  --disjoint            2-D: the destination grid uses other processes than the source
                        (default: both grids start at process 0, column-major)
  --relabel             2-D: instead of a schedule, propose the rank order of a destination
                        grid being created that keeps the most data on its own process (a
                        maximum-weight assignment of the source ranks to --b's positions), and
                        print the volume kept local and moved before (ranks in order) and after,
                        and the bytes saved (docs/schedules.md, Relabelling)

Schedule
  --schedule NAME       one of: )";

constexpr const char *kHelpTail = R"( (default auto)
  --max-concurrent K    at most K transfers per step (0: no limit)
  --max-memory BYTES    buffer bytes per process (0: no cap); longer messages are cut

Cost model
  --alpha SECONDS       start-up per message (default 2e-6)
  --beta SECONDS        per byte (default 2.5e-10)
  --element-bytes N     element size (default 8)

Output
  --steps               list every step's pieces (sender->receiver:elements); beyond 4,096
                        pieces the first 32 steps of up to 32 pieces each, and says so
  --materialise-max M   build schedules of up to M messages whole (default 1,048,576); larger
                        ones are evaluated one step at a time (docs/studies/scaling.md)
  --ranks-per-node K    nodes of K ranks (ranks 0..K-1 on the first, ...): print the bytes
                        moved between processes of one node and across the network (redist
                        uses single copy only inside a node; docs/performance.md), and the
                        time the two-level model predicts (--alpha, --beta inside a node,
                        --inter-alpha, --inter-beta between nodes; docs/across-nodes.md);
                        auto and multiphase then decide with the two-level model
  --inter-alpha SECONDS start-up per message between nodes (default 2e-5)
  --inter-beta SECONDS  per byte on a node's network link, shared by its ranks (default 1e-9)
  --json                machine-readable output
  --svg FILE            draw the plan: source and destination ownership maps, the volume
                        matrix as a heat map, the schedule as steps x senders (each phase of
                        a two-phase plan, one below the other)
  --help                this text

Nodes are numbered as grid positions, pr + pc * nprow. Pieces a process sends to itself are
local copies and not part of the schedule.

Ring rebalancing (Renard, Robert & Vivien; docs/ring.md)
  --ring L1,L2,...      items each process of the ring holds now (each >= 1)
  --targets T1,...      items each must hold after (each >= 1, same sum), or
  --weights W1,...      targets in proportion to these weights (e.g. speeds)
  --cost-next C | C1,...
                        time of one item from process k to k+1 (one value: every link;
                        default 1; inf: no such link, e.g. inf for the last process = a path)
  --cost-prev C | C1,...
                        time of one item from process k to k-1 (bidirectional only)
  --direction uni|bi    items move rightward only, or both ways (default bi)
  --json                machine-readable output
  --svg FILE            draw the plan: processes on a circle with the net flow of each link,
                        and the moves over time
Prints the mode and algorithm (Algorithm 1, 2, 3, System 6 or the heuristic), the net flow over
each link, every move (when, from, to, how many items), the predicted time and the lower bound
the planner reports (Lemma 1, Theorem 2, Lemma 6 or Lemma 12; bidirectional with unequal costs
also System 6's optimum), and the model time of direct messages. Times are in link-cost units.
)";

[[noreturn]] void usage_error(const std::string &message) {
  std::cerr << "redist-plan: " << message << " (see --help)\n";
  std::exit(2);
}

std::vector<Index> numbers(const std::string &option, const std::string &text, std::size_t min,
                           std::size_t max) {
  std::vector<Index> out;
  std::stringstream in(text);
  std::string item;
  while (std::getline(in, item, ',')) {
    char *end = nullptr;
    const long long v = std::strtoll(item.c_str(), &end, 10);
    if (item.empty() || *end != '\0') {
      std::string message = option;
      message += ": '" + item + "' is not an integer";
      usage_error(message);
    }
    out.push_back(v);
  }
  if (out.size() < min || out.size() > max) {
    usage_error(option + " takes " + std::to_string(min) +
                (min == max ? "" : " to " + std::to_string(max)) + " comma-separated integers");
  }
  return out;
}

double real_number(const std::string &option, const std::string &text) {
  char *end = nullptr;
  const double v = std::strtod(text.c_str(), &end);
  if (text.empty() || *end != '\0' || !(v >= 0.0)) usage_error(option + " needs a number >= 0");
  return v;
}

redist::Layout layout_2d(const std::string &option, const std::vector<Index> &v, Index m, Index n,
                         int first_rank) {
  for (std::size_t k = 0; k < 4; ++k) {
    if (v[k] < 1) usage_error(option + ": block sizes and grid shape must be >= 1");
  }
  redist::Layout l;
  const auto get = [&](std::size_t k) { return k < v.size() ? v[k] : 0; };
  l.i = get(6);
  l.j = get(7);
  if (get(4) < 0 || get(4) >= v[2] || get(5) < 0 || get(5) >= v[3] || l.i < 0 || l.j < 0) {
    usage_error(option + ": RSRC, CSRC must lie in the grid and I, J be >= 0");
  }
  l.rows = {l.i + m, v[0], static_cast<int>(v[2]), static_cast<int>(get(4))};
  l.cols = {l.j + n, v[1], static_cast<int>(v[3]), static_cast<int>(get(5))};
  l.grid.nprow = static_cast<int>(v[2]);
  l.grid.npcol = static_cast<int>(v[3]);
  for (int r = 0; r < l.grid.nprow * l.grid.npcol; ++r) {
    l.grid.ranks.push_back(first_rank + r);
  }
  return l;
}

std::string json_string(const std::string &s) {
  std::string out = "\"";
  for (const char c : s) {
    if (c == '"' || c == '\\') out += '\\';
    out += c;
  }
  return out + "\"";
}

// Kaushik et al.'s two phases: each phase's transfer layouts, schedule and statistics; the
// predicted time is their sum. phase_network[i]: what --topology adds to phase i (text lines,
// or a JSON member), empty for the crossbar.
int print_two_phases(const std::vector<redist::GlobalPhase> &phases, const std::string &detail,
                     const redist::CostModel &model, std::size_t element_bytes, bool json,
                     bool list_steps, const std::vector<std::string> &phase_network,
                     const std::string &node_lines) {
  const auto block_sizes = [](const redist::Layout &l) {
    return std::to_string(l.rows.block) + "x" + std::to_string(l.cols.block) + " on " +
           std::to_string(l.grid.nprow) + "x" + std::to_string(l.grid.npcol);
  };
  double seconds = 0.0;
  if (json) std::cout << "{\"schedule\":" << json_string(detail) << ",\"phases\":[";
  for (std::size_t i = 0; i < phases.size(); ++i) {
    const redist::GlobalPhase &phase = phases[i];
    const redist::ScheduleStats st = redist::schedule_stats(phase.schedule, model, element_bytes);
    seconds += st.seconds;
    if (json) {
      std::cout << (i ? "," : "") << "{\"from\":" << json_string(block_sizes(phase.transfer.src))
                << ",\"to\":" << json_string(block_sizes(phase.transfer.dst))
                << ",\"schedule\":" << json_string(phase.detail) << ",\"steps\":" << st.steps
                << ",\"pieces\":" << st.pieces << ",\"sum_step_max\":" << st.sum_step_max
                << ",\"largest_piece\":" << st.largest_piece
                << ",\"predicted_seconds\":" << st.seconds << phase_network[i] << "}";
      continue;
    }
    std::cout << "phase " << i + 1 << ":      blocks " << block_sizes(phase.transfer.src) << " -> "
              << block_sizes(phase.transfer.dst) << "; " << phase.detail << "\n";
    std::cout << "  N (steps):  " << st.steps << ", T (sum of step maxima): " << st.sum_step_max
              << " elements, pieces " << st.pieces << ", largest " << st.largest_piece
              << ", predicted " << st.seconds << " s\n";
    if (list_steps) {
      for (std::size_t k = 0; k < phase.schedule.steps.size(); ++k) {
        std::cout << "  step " << k << ":";
        for (const redist::Piece &p : phase.schedule.steps[k].pieces)
          std::cout << " " << p.src << "->" << p.dst << ":" << p.volume;
        std::cout << "\n";
      }
    }
    std::cout << phase_network[i];
  }
  if (json) {
    std::cout << "],\"predicted_seconds\":" << seconds << node_lines << "}\n";
  } else {
    std::cout << "schedule:     " << detail << "\npredicted:    " << seconds << " s in all\n"
              << node_lines;
  }
  return 0;
}

/// Bytes the phases move between processes of one node and across nodes of `per_node` ranks
/// (rank r on node r / per_node), and the two-level model's time (options.node_of_rank holds
/// those nodes): text lines, or JSON members. Empty when per_node is 0.
std::string node_report(const std::vector<redist::GlobalPhase> &phases, Index per_node,
                        const redist::ScheduleOptions &options, std::size_t element_bytes,
                        bool json) {
  if (per_node <= 0) return "";
  Index inside = 0;
  Index across = 0;
  double two_level = 0.0;
  for (const redist::GlobalPhase &phase : phases) {
    const std::optional<redist::NodeLevels> levels = redist::node_levels(phase.transfer, options);
    two_level +=
        levels
            ? redist::schedule_stats(phase.schedule, options.model, *levels, element_bytes).seconds
            : redist::schedule_stats(phase.schedule, options.model, element_bytes).seconds;
    const std::vector<int> &src_ranks = phase.transfer.src.grid.ranks;
    const std::vector<int> &dst_ranks = phase.transfer.dst.grid.ranks;
    for (const redist::Step &step : phase.schedule.steps) {
      for (const redist::Piece &p : step.pieces) {
        const int from = src_ranks[static_cast<std::size_t>(p.src)];
        const int to = dst_ranks[static_cast<std::size_t>(p.dst)];
        if (from == to) continue; // a local copy
        (from / per_node == to / per_node ? inside : across) += p.volume;
      }
    }
  }
  const auto bytes = static_cast<Index>(element_bytes);
  std::ostringstream os;
  if (json) {
    os << ",\"nodes\":{\"ranks_per_node\":" << per_node << ",\"bytes_inside\":" << inside * bytes
       << ",\"bytes_across\":" << across * bytes << ",\"inter_alpha\":" << options.inter.alpha
       << ",\"inter_beta\":" << options.inter.beta
       << ",\"two_level_predicted_seconds\":" << two_level << "}";
  } else {
    os << "nodes:        " << per_node << " ranks per node: " << inside * bytes
       << " bytes inside nodes, " << across * bytes << " bytes across the network\n"
       << "two-level:    " << two_level << " s predicted (inter-node alpha " << options.inter.alpha
       << " s, beta " << options.inter.beta << " s/byte per node link)\n";
  }
  return os.str();
}

struct RingArgs {
  std::vector<Index> loads;
  std::optional<std::vector<Index>> targets;
  std::optional<std::vector<double>> weights;
  std::optional<std::vector<double>> c_next;
  std::optional<std::vector<double>> c_prev;
  redist::ring::Direction direction = redist::ring::Direction::bidirectional;
  std::string svg;
};

std::vector<double> reals(const std::string &option, const std::string &text) {
  std::vector<double> out;
  std::stringstream in(text);
  std::string item;
  while (std::getline(in, item, ',')) {
    char *end = nullptr;
    const double v = std::strtod(item.c_str(), &end);
    if (item.empty() || *end != '\0') usage_error(option + ": '" + item + "' is not a number");
    out.push_back(v);
  }
  if (out.empty()) usage_error(option + " needs comma-separated numbers");
  return out;
}

/// A cost list: one value for every link, or one per process.
std::vector<double> per_process(const std::string &option,
                                const std::optional<std::vector<double>> &v, std::size_t n) {
  if (!v) return std::vector<double>(n, 1.0);
  if (v->size() == 1) return std::vector<double>(n, v->front());
  if (v->size() != n)
    usage_error(option + " has " + std::to_string(v->size()) + " values for " + std::to_string(n) +
                " processes (give one, or one per process)");
  return *v;
}

std::string num(double v) {
  if (std::isinf(v)) return "inf";
  std::ostringstream os;
  os << std::setprecision(12) << v;
  return os.str();
}

std::string json_num(double v) {
  return std::isfinite(v) ? num(v) : "null";
}

template <class T, class F> std::string joined(const std::vector<T> &v, const char *sep, F f) {
  std::string out;
  for (std::size_t k = 0; k < v.size(); ++k) {
    if (k) out += sep;
    out += f(v[k]);
  }
  return out;
}

const char *bound_name(redist::ring::Algorithm a) {
  using redist::ring::Algorithm;
  switch (a) {
  case Algorithm::homogeneous_uni:
    return "Lemma 1";
  case Algorithm::heterogeneous_uni:
    return "Theorem 2";
  case Algorithm::homogeneous_bi:
    return "Lemma 6";
  case Algorithm::light_bi:
  case Algorithm::heuristic_bi:
    return "Lemma 12";
  case Algorithm::none:
    break;
  }
  return "nothing moves";
}

/// Processes on a circle with the net flow over each link, and the moves over time (one row per
/// process: a bar from start to finish, labelled with the receiver and the item count).
std::string ring_svg(const redist::ring::Problem &p, const redist::ring::Plan &plan) {
  const std::size_t n = p.loads.size();
  const double cx = 230;
  const double cy = 270;
  const double radius = 150;
  const double node = std::min(22.0, 0.4 * 2 * 3.14159265358979 * radius / static_cast<double>(n));
  const double gx = 440;
  const double gw = 420;
  const double row = 24;
  const double height = std::max(480.0, 110 + row * static_cast<double>(n));
  const double time = plan.time > 0 ? plan.time : 1.0;
  std::ostringstream s;
  s << "<defs><marker id=\"head\" viewBox=\"0 0 10 10\" refX=\"10\" refY=\"5\" markerWidth=\"7\" "
       "markerHeight=\"7\" orient=\"auto\"><path d=\"M0,0 L10,5 L0,10 z\" fill=\"#c0392b\"/>"
       "</marker></defs>\n"
    << "<text x=\"20\" y=\"24\" font-size=\"15\">ring rebalance: "
    << (p.direction == redist::ring::Direction::bidirectional ? "bidirectional" : "unidirectional")
    << ", " << redist::ring::algorithm_name(plan.algorithm) << ", time " << num(plan.time)
    << ", lower bound " << num(plan.lower_bound) << " (" << bound_name(plan.algorithm)
    << ")</text>\n"
    << "<text x=\"20\" y=\"44\" fill=\"#555\">net flow per link (items); node: P k, load -&gt; "
       "target; dashed: no link</text>\n";
  std::vector<double> x(n);
  std::vector<double> y(n);
  for (std::size_t k = 0; k < n; ++k) {
    const double a = 2 * 3.14159265358979 * static_cast<double>(k) / static_cast<double>(n) -
                     3.14159265358979 / 2;
    x[k] = cx + radius * std::cos(a);
    y[k] = cy + radius * std::sin(a);
  }
  for (std::size_t k = 0; k < n && n > 1; ++k) {
    const std::size_t j = (k + 1) % n;
    const double dx = x[j] - x[k];
    const double dy = y[j] - y[k];
    const double len = std::hypot(dx, dy);
    const double ux = dx / len;
    const double uy = dy / len;
    const double side = n == 2 ? (k == 0 ? 8.0 : -8.0) : 0.0;
    const double ox = -uy * side;
    const double oy = ux * side;
    const bool closed =
        std::isinf(p.c_next[k]) &&
        (p.direction == redist::ring::Direction::unidirectional || std::isinf(p.c_prev[j]));
    const double x0 = x[k] + ux * node + ox;
    const double y0 = y[k] + uy * node + oy;
    const double x1 = x[j] - ux * node + ox;
    const double y1 = y[j] - uy * node + oy;
    s << "<line x1=\"" << num(x0) << "\" y1=\"" << num(y0) << "\" x2=\"" << num(x1) << "\" y2=\""
      << num(y1) << "\" stroke=\"#bbb\"" << (closed ? " stroke-dasharray=\"4 4\"" : "") << "/>\n";
    const Index f = plan.flow[k];
    if (f == 0) continue;
    const bool right = f > 0;
    s << "<line x1=\"" << num(right ? x0 : x1) << "\" y1=\"" << num(right ? y0 : y1) << "\" x2=\""
      << num(right ? x1 : x0) << "\" y2=\"" << num(right ? y1 : y0)
      << "\" stroke=\"#c0392b\" stroke-width=\"2\" marker-end=\"url(#head)\"/>\n";
    const double mx = (x0 + x1) / 2 - uy * 14 + ox;
    const double my = (y0 + y1) / 2 + ux * 14 + oy;
    s << "<text x=\"" << num(mx) << "\" y=\"" << num(my + 4)
      << "\" text-anchor=\"middle\" fill=\"#c0392b\">" << (right ? f : -f) << "</text>\n";
  }
  for (std::size_t k = 0; k < n; ++k) {
    s << "<circle cx=\"" << num(x[k]) << "\" cy=\"" << num(y[k]) << "\" r=\"" << num(node)
      << "\" fill=\"#eaf2fb\" stroke=\"#2c3e50\"/>\n"
      << "<text x=\"" << num(x[k]) << "\" y=\"" << num(y[k] + 4) << "\" text-anchor=\"middle\">P"
      << k << "</text>\n";
    const double lx = cx + (x[k] - cx) * (radius + node + 16) / radius;
    const double ly = cy + (y[k] - cy) * (radius + node + 16) / radius;
    s << "<text x=\"" << num(lx) << "\" y=\"" << num(ly + 4)
      << "\" text-anchor=\"middle\" fill=\"#555\">" << p.loads[k] << " -&gt; " << p.targets[k]
      << "</text>\n";
  }
  s << "<text x=\"" << num(gx)
    << "\" y=\"72\">moves over time (bar: the sender's port; label: "
       "receiver, items)</text>\n";
  for (std::size_t k = 0; k < n; ++k) {
    const double ry = 84 + row * static_cast<double>(k);
    s << "<text x=\"" << num(gx - 8) << "\" y=\"" << num(ry + 16) << "\" text-anchor=\"end\">P" << k
      << "</text>\n"
      << "<line x1=\"" << num(gx) << "\" y1=\"" << num(ry + row) << "\" x2=\"" << num(gx + gw)
      << "\" y2=\"" << num(ry + row) << "\" stroke=\"#eee\"/>\n";
  }
  for (const redist::ring::Move &m : plan.moves) {
    const double ry = 84 + row * static_cast<double>(m.from);
    const double bx = gx + gw * m.start / time;
    const double bw = std::max(1.0, gw * (m.finish - m.start) / time);
    s << "<rect x=\"" << num(bx) << "\" y=\"" << num(ry + 3) << "\" width=\"" << num(bw)
      << "\" height=\"" << num(row - 6) << "\" fill=\"" << (m.rightward ? "#5dade2" : "#f5b041")
      << "\" stroke=\"#2c3e50\" stroke-width=\"0.5\"/>\n"
      << "<text x=\"" << num(bx + 2) << "\" y=\"" << num(ry + 16) << "\" font-size=\"10\">P" << m.to
      << " x" << m.items << "</text>\n";
  }
  const double axis = 84 + row * static_cast<double>(n) + 16;
  s << "<text x=\"" << num(gx) << "\" y=\"" << num(axis) << "\">0</text>\n"
    << "<text x=\"" << num(gx + gw) << "\" y=\"" << num(axis)
    << "\" text-anchor=\"end\">t = " << num(plan.time) << "</text>\n"
    << "<text x=\"" << num(gx) << "\" y=\"" << num(axis + 20)
    << "\" fill=\"#555\">blue: to P k+1, orange: to P k-1</text>";
  redist::svg::Document doc;
  doc.raw(s.str());
  return doc.finish(900, static_cast<int>(std::ceil(height)));
}

/// The planner names arrays of the problem; the command names options.
std::string option_of(const std::string &argument) {
  const std::string base = argument.substr(0, argument.find('['));
  const std::string index = argument.size() > base.size() ? argument.substr(base.size()) : "";
  if (base == "loads") return "--ring" + index;
  if (base == "targets") return (index.empty() ? "--targets" : "--targets" + index);
  if (base == "c_next") return "--cost-next" + index;
  if (base == "c_prev") return "--cost-prev" + index;
  if (base == "weights") return "--weights" + index;
  if (base == "total") return "--ring (total items)";
  if (base == "n") return "--ring (processes)";
  if (argument == "c_next, c_prev") return "--cost-next, --cost-prev";
  return argument;
}

int run_ring(const RingArgs &a, bool json) {
  namespace ring = redist::ring;
  const std::size_t n = a.loads.size();
  if (a.targets.has_value() == a.weights.has_value())
    usage_error("--ring needs exactly one of --targets and --weights");
  if (a.direction == ring::Direction::unidirectional && a.c_prev)
    usage_error("--cost-prev needs --direction bi");
  ring::Problem p;
  p.direction = a.direction;
  p.loads = a.loads;
  p.c_next = per_process("--cost-next", a.c_next, n);
  if (a.direction == ring::Direction::bidirectional)
    p.c_prev = per_process("--cost-prev", a.c_prev, n);
  ring::Plan plan;
  double direct = 0.0;
  try {
    if (a.weights) {
      if (a.weights->size() != n)
        usage_error("--weights has " + std::to_string(a.weights->size()) + " values for " +
                    std::to_string(n) + " processes");
      const Index total = std::accumulate(p.loads.begin(), p.loads.end(), Index{0});
      p.targets = ring::targets_from_weights(total, *a.weights);
    } else {
      if (a.targets->size() != n)
        usage_error("--targets has " + std::to_string(a.targets->size()) + " values for " +
                    std::to_string(n) + " processes");
      p.targets = *a.targets;
    }
    plan = ring::plan(p);
    direct = ring::direct_time(p, ring::direct_pieces(p.loads, plan.flow));
  } catch (const ring::InputError &e) {
    std::cerr << "redist-plan: " << option_of(e.argument()) << " = " << e.value() << ": "
              << e.what() << "\n";
    return 1;
  }
  const bool bi = p.direction == ring::Direction::bidirectional;
  const bool equal_costs = [&] {
    for (std::size_t k = 0; k < n; ++k) {
      if (p.c_next[k] != p.c_next[0] || (bi && p.c_prev[k] != p.c_next[0])) return false;
    }
    return std::isfinite(p.c_next[0]);
  }();
  const std::string mode = std::string(bi ? "bidirectional" : "unidirectional") +
                           (equal_costs ? ", equal costs" : ", unequal costs");
  const auto index = [](Index v) { return std::to_string(v); };
  if (!a.svg.empty()) {
    if (const std::string why = redist::svg::write_file(a.svg, ring_svg(p, plan)); !why.empty()) {
      std::cerr << "redist-plan: --svg " << a.svg << ": " << why << "\n";
      return 1;
    }
  }
  if (json) {
    std::cout << "{\"mode\":" << json_string(mode) << ",\"direction\":\"" << (bi ? "bi" : "uni")
              << "\",\"algorithm\":" << json_string(ring::algorithm_name(plan.algorithm))
              << ",\"loads\":[" << joined(p.loads, ",", index) << "],\"targets\":["
              << joined(p.targets, ",", index) << "],\"cost_next\":["
              << joined(p.c_next, ",", json_num) << "],\"cost_prev\":["
              << joined(p.c_prev, ",", json_num) << "],\"flows\":[" << joined(plan.flow, ",", index)
              << "],\"predicted_time\":" << num(plan.time)
              << ",\"lower_bound\":" << num(plan.lower_bound)
              << ",\"lower_bound_name\":" << json_string(bound_name(plan.algorithm));
    if (bi && !equal_costs) {
      std::cout << ",\"system6_rational\":" << num(plan.system6_rational)
                << ",\"system6_integer\":" << num(plan.system6_integer);
    }
    std::cout << ",\"direct_time\":" << num(direct) << ",\"steps\":" << plan.steps
              << ",\"light\":" << (plan.light ? "true" : "false")
              << ",\"algorithm3_repaired\":" << (plan.algorithm3_repaired ? "true" : "false")
              << ",\"moves\":[";
    for (std::size_t k = 0; k < plan.moves.size(); ++k) {
      const ring::Move &m = plan.moves[k];
      std::cout << (k ? "," : "") << "{\"from\":" << m.from << ",\"to\":" << m.to
                << ",\"items\":" << m.items << ",\"start\":" << num(m.start)
                << ",\"finish\":" << num(m.finish) << "}";
    }
    std::cout << "]}\n";
    return 0;
  }
  std::cout << "ring:         " << n << " processes, " << mode << "\n";
  std::cout << "loads:        " << joined(p.loads, " ", index) << "\n";
  std::cout << "targets:      " << joined(p.targets, " ", index) << "\n";
  std::cout << "algorithm:    " << ring::algorithm_name(plan.algorithm)
            << (plan.light ? " (light)" : " (not light)")
            << (plan.algorithm3_repaired ? ", Algorithm 3 as printed repaired" : "") << "\n";
  std::cout << "flows:       ";
  for (std::size_t k = 0; k < n; ++k) {
    const Index f = plan.flow[k];
    const std::size_t j = (k + 1) % n;
    std::cout << " P" << (f >= 0 ? k : j) << "->P" << (f >= 0 ? j : k) << ":" << (f >= 0 ? f : -f);
  }
  std::cout << "\n";
  std::cout << "predicted:    " << num(plan.time) << " (link-cost units)\n";
  std::cout << "lower bound:  " << num(plan.lower_bound) << " (" << bound_name(plan.algorithm)
            << ")\n";
  if (bi && !equal_costs) {
    std::cout << "System 6:     " << num(plan.system6_integer) << " integer optimum (a bound on "
              << "every schedule), " << num(plan.system6_rational) << " rational\n";
  }
  if (plan.steps > 0) std::cout << "steps:        " << plan.steps << " synchronous\n";
  std::cout << "direct:       " << num(direct) << " (model time of direct messages)\n";
  std::cout << "moves:        " << plan.moves.size() << "\n";
  for (const ring::Move &m : plan.moves) {
    std::cout << "  [" << num(m.start) << ", " << num(m.finish) << ") P" << m.from << " -> P"
              << m.to << ": " << m.items << (m.items == 1 ? " item\n" : " items\n");
  }
  return 0;
}

// --- Network topology (--topology, --routing, --link-bandwidth, --step-setup): the torus
// link-load model (research/model/torus.hpp, docs/studies/torus.md) and the backbone bound
// (schedule_matching.hpp).

constexpr const char *kHelpNetwork = R"(
Network topology (with --1d, --2d; docs/studies/torus.md)
  --topology crossbar|torus:K^D|torus:K^D:linear[:c1,...,cD,c]|backbone:K
                        crossbar (default): each process has its own port, nothing more.
                        torus:K^D: ranks on the nodes of a D-dimensional K-torus (K >= 2), rank
                        r at the node whose coordinates are the base-K digits of r, first
                        coordinate least significant. :linear: on Azizoglu & Egecioglu's linear
                        placement c1 p1 + ... + cD pD = c (mod K), at most K^(D-1) ranks
                        (default every ci = 1, c = 0; each in [0, K), c1 and cD coprime to K).
                        Prints each step's largest link load, the total, their lower bounds and
                        the time predicted on the torus.
                        backbone:K: senders on one cluster, receivers on another (2-D: implies
                        --disjoint), joined by a backbone carrying at most K transfers per step:
                        sets --max-concurrent K and prints Jeannot & Wagner's lower bound.
  --routing odr|udr     torus: ordered dimensional routing, the dimensions in order (default),
                        or unordered, the average over all orders; each dimension is crossed
                        the shorter way round, at a tie (K/2 hops) in the + direction
  --link-bandwidth B    torus: bytes per second of one directed link (default 1/beta)
  --step-setup SECONDS  fixed cost of every step (the backbone's setup beta; default 0)
Ranks: --1d: sources 0..P-1, destinations P..P+Q-1; --2d: position pr + pc * nprow of either
grid is that rank (--disjoint: --b's ranks follow --a's).
)";

struct Network {
  enum class Kind { crossbar, torus, backbone };
  Kind kind = Kind::crossbar;
  std::string topology = "crossbar"; ///< the --topology value, for messages
  redist::torus::Spec torus;
  redist::torus::Routing routing = redist::torus::Routing::ordered;
  bool routing_given = false;
  int backbone_k = 0;
  std::optional<double> link_bandwidth;
  std::optional<double> step_setup;
};

/// One non-negative integer of a --topology value, else a usage error naming the value.
int topology_integer(const std::string &topology, const std::string &item, const char *what,
                     const char *form) {
  char *end = nullptr;
  const long long v = std::strtoll(item.c_str(), &end, 10);
  if (item.empty() || *end != '\0' || v < 0 || v > 1 << 30)
    usage_error("--topology " + topology + ": " + what + " '" + item +
                "' is not a non-negative integer (expected " + form + ")");
  return static_cast<int>(v);
}

void parse_topology(const std::string &value, Network &net) {
  net.topology = value;
  std::vector<std::string> parts;
  std::stringstream in(value);
  for (std::string part; std::getline(in, part, ':');)
    parts.push_back(part);
  if (!value.empty() && value.back() == ':') parts.emplace_back();
  const std::string kind = parts.empty() ? "" : parts[0];
  if (kind == "crossbar" && parts.size() == 1) {
    net.kind = Network::Kind::crossbar;
  } else if (kind == "backbone") {
    const char *form = "backbone:K";
    if (parts.size() != 2) usage_error("--topology " + value + ": expected " + form);
    net.kind = Network::Kind::backbone;
    net.backbone_k = topology_integer(value, parts[1], "K", form);
    if (net.backbone_k < 1) usage_error("--topology " + value + ": K must be >= 1");
  } else if (kind == "torus") {
    const char *form = "torus:K^D[:linear[:c1,...,cD,c]]";
    const std::size_t caret = parts.size() > 1 ? parts[1].find('^') : std::string::npos;
    if (parts.size() < 2 || parts.size() > 4 || caret == std::string::npos ||
        (parts.size() > 2 && parts[2] != "linear"))
      usage_error("--topology " + value + ": expected " + form);
    net.kind = Network::Kind::torus;
    net.torus.k = topology_integer(value, parts[1].substr(0, caret), "K", form);
    net.torus.d = topology_integer(value, parts[1].substr(caret + 1), "D", form);
    if (net.torus.k < 2) usage_error("--topology " + value + ": K must be >= 2");
    if (net.torus.d < 1) usage_error("--topology " + value + ": D must be >= 1");
    if (parts.size() > 2) net.torus.placement = redist::torus::Placement::linear;
    if (parts.size() == 4) {
      std::vector<int> c;
      std::stringstream list(parts[3]);
      for (std::string item; std::getline(list, item, ',');)
        c.push_back(topology_integer(value, item, "coefficient", form));
      if (c.size() != static_cast<std::size_t>(net.torus.d) + 1)
        usage_error("--topology " + value +
                    ": the linear placement takes D + 1 = " + std::to_string(net.torus.d + 1) +
                    " numbers c1,...,cD,c, not " + std::to_string(c.size()));
      net.torus.constant = c.back();
      c.pop_back();
      net.torus.coefficients = c;
    }
  } else {
    usage_error("--topology " + value +
                ": unknown topology (known: crossbar, torus:K^D, torus:K^D:linear[:c1,...,cD,c], "
                "backbone:K)");
  }
}

/// Checks the network options against each other and applies them to the schedule options.
void apply_network(const Network &net, bool max_concurrent_given, bool two_d,
                   redist::ScheduleOptions &options, bool &disjoint) {
  if (net.kind != Network::Kind::torus && (net.link_bandwidth || net.routing_given))
    usage_error("--link-bandwidth and --routing need --topology torus:K^D");
  if (net.link_bandwidth && !(*net.link_bandwidth > 0.0))
    usage_error("--link-bandwidth must be > 0 bytes per second");
  if (net.step_setup) options.model.step_setup = *net.step_setup;
  if (net.kind != Network::Kind::backbone) return;
  if (max_concurrent_given && options.max_concurrent != net.backbone_k)
    usage_error("--max-concurrent " + std::to_string(options.max_concurrent) +
                " contradicts --topology " + net.topology + " (at most " +
                std::to_string(net.backbone_k) + " transfers per step)");
  options.max_concurrent = net.backbone_k;
  if (two_d) disjoint = true;
}

std::string link_name(const redist::torus::Torus &t, Index id) {
  const redist::torus::Link l = t.link(id);
  std::string name = "(";
  name += joined(t.coordinates(l.node), ",", [](int x) { return std::to_string(x); });
  name += ") dim " + std::to_string(l.dim) + (l.direction > 0 ? " +" : " -");
  return name;
}

std::string slab_name(const redist::torus::LoadBounds &b) {
  return "dim " + std::to_string(b.slab_dim) + " [" + std::to_string(b.slab_start) + ", " +
         std::to_string(b.slab_start + b.slab_width) + ")";
}

std::string bounds_json(const redist::torus::LoadBounds &b) {
  return "{\"distance\":" + num(b.distance) + ",\"node\":" + num(b.node) +
         ",\"slab\":" + num(b.slab) + ",\"slab_dim\":" + std::to_string(b.slab_dim) +
         ",\"slab_start\":" + std::to_string(b.slab_start) +
         ",\"slab_width\":" + std::to_string(b.slab_width) + ",\"best\":" + num(b.best()) + "}";
}

/// What --topology adds to the output: text lines, or a JSON member (",\"topology\":{...}").
/// Empty for the crossbar.
std::string network_report(const Network &net, const redist::Transfer &t,
                           const redist::VolumeGraph &graph, const redist::Schedule &schedule,
                           const redist::CostModel &model, std::size_t element_bytes, bool json);

/// network_report of each phase of a two-phase plan (a torus routes each phase on its own
/// grids' ranks). The backbone models one transfer between two clusters: a two-phase plan,
/// whose intermediate layout lives on one of them, is refused.
std::vector<std::string> two_phase_network_reports(const Network &net,
                                                   const std::vector<redist::GlobalPhase> &phases,
                                                   const redist::CostModel &model,
                                                   std::size_t element_bytes, bool json) {
  if (net.kind == Network::Kind::backbone)
    usage_error("--topology " + net.topology +
                ": the plan runs in two phases (multiphase), which the backbone model does not "
                "cover; give a one-phase --schedule (e.g. ggp or oggp)");
  std::vector<std::string> out;
  for (const redist::GlobalPhase &p : phases) {
    out.push_back(network_report(net, p.transfer, redist::volume_graph(p.transfer), p.schedule,
                                 model, element_bytes, json));
  }
  return out;
}

/// What --topology adds to the output: text lines, or a JSON member (",\"topology\":{...}").
/// Empty for the crossbar.
std::string network_report(const Network &net, const redist::Transfer &t,
                           const redist::VolumeGraph &graph, const redist::Schedule &schedule,
                           const redist::CostModel &model, std::size_t element_bytes, bool json) {
  namespace torus = redist::torus;
  std::ostringstream os;
  const auto bytes = static_cast<double>(element_bytes);
  if (net.kind == Network::Kind::backbone) {
    // backbone_lower_bound is beta * steps + volume in elements: split it into its two terms
    // so each gets its own unit (setup seconds per step, beta seconds per byte).
    const double volume = redist::backbone_lower_bound(graph, net.backbone_k, 0.0);
    const double steps = redist::backbone_lower_bound(graph, net.backbone_k, 1.0) - volume;
    const double seconds = model.step_setup * steps + model.beta * bytes * volume;
    // Jeannot & Wagner's costs are in elements with the setup as elements too.
    const double element_seconds = model.beta * bytes;
    const double setup_elements = model.step_setup / element_seconds;
    const double all_at_once =
        redist::backbone_all_at_once_cost(graph, net.backbone_k, setup_elements) * element_seconds;
    std::string schedule_error;
    double schedule_seconds = 0.0;
    try {
      schedule_seconds =
          redist::backbone_schedule_cost(graph, schedule, net.backbone_k, setup_elements) *
          element_seconds;
    } catch (const std::invalid_argument &e) {
      schedule_error = e.what();
    }
    if (json) {
      os << ",\"topology\":{\"kind\":\"backbone\",\"k\":" << net.backbone_k
         << ",\"step_setup\":" << num(model.step_setup) << ",\"lower_bound_steps\":" << num(steps)
         << ",\"lower_bound_elements\":" << num(volume)
         << ",\"lower_bound_seconds\":" << num(seconds)
         << ",\"all_at_once_seconds\":" << num(all_at_once);
      if (schedule_error.empty()) os << ",\"schedule_seconds\":" << num(schedule_seconds);
      os << "}";
    } else {
      os << "topology:     backbone, at most " << net.backbone_k
         << (net.backbone_k == 1 ? " transfer" : " transfers") << " per step, "
         << num(model.step_setup) << " s setup per step\n"
         << "lower bound:  " << num(seconds) << " s for step schedules = " << num(model.step_setup)
         << " s x " << num(steps) << " steps + beta x " << element_bytes << " bytes x "
         << num(volume)
         << " elements (Jeannot & Wagner: setup max(Delta, ceil(m/k)) + max(W, P/k))\n";
      if (schedule_error.empty())
        os << "this schedule: " << num(schedule_seconds)
           << " s on the backbone (sum over steps of setup + largest piece)\n";
      else
        os << "this schedule: not a backbone schedule (" << schedule_error << ")\n";
      os << "all at once:  " << num(all_at_once)
         << " s (every message started at once, the backbone's k streams shared max-min fairly; "
            "docs/studies/backbone.md)\n";
    }
    return os.str();
  }
  if (net.kind != Network::Kind::torus) return "";
  const std::vector<int> &src_ranks = t.src.grid.ranks;
  const std::vector<int> &dst_ranks = t.dst.grid.ranks;
  int ranks = 0;
  for (const auto *side : {&src_ranks, &dst_ranks})
    for (const int r : *side)
      ranks = std::max(ranks, r + 1);
  std::optional<torus::Torus> tor;
  try {
    tor.emplace(net.torus, ranks);
  } catch (const std::invalid_argument &e) {
    usage_error("--topology " + net.topology + ": " + e.what());
  }
  const double bandwidth =
      net.link_bandwidth
          ? *net.link_bandwidth
          : (model.beta > 0 ? 1.0 / model.beta : std::numeric_limits<double>::infinity());
  const torus::ScheduleLoads loads =
      torus::schedule_loads(*tor, schedule, src_ranks, dst_ranks, element_bytes, net.routing);
  const std::vector<double> seconds =
      torus::step_seconds(schedule, loads, model, element_bytes, bandwidth);
  const double total_seconds = std::accumulate(seconds.begin(), seconds.end(), 0.0);
  const torus::Spec &spec = tor->spec();
  const auto coefficients = joined(spec.coefficients, ",", [](int c) { return std::to_string(c); });
  if (json) {
    os << ",\"topology\":{\"kind\":\"torus\",\"k\":" << spec.k << ",\"d\":" << spec.d
       << ",\"placement\":\"" << torus::placement_name(spec.placement) << "\"";
    if (spec.placement == torus::Placement::linear)
      os << ",\"coefficients\":[" << coefficients << "],\"constant\":" << spec.constant;
    os << ",\"routing\":\"" << torus::routing_name(net.routing) << "\",\"ranks\":" << ranks
       << ",\"nodes\":" << tor->nodes() << ",\"links\":" << tor->links()
       << ",\"link_bandwidth\":" << json_num(bandwidth) << ",\"step_max_link_bytes\":["
       << joined(loads.step_max, ",", num) << "],\"step_bounds\":["
       << joined(loads.step_bounds, ",", bounds_json) << "],\"step_seconds\":["
       << joined(seconds, ",", num) << "],\"sum_step_max_link_bytes\":" << num(loads.sum_step_max)
       << ",\"sum_step_bounds\":" << num(loads.sum_step_bounds)
       << ",\"total_max_link_bytes\":" << num(loads.total.max)
       << ",\"total_bounds\":" << bounds_json(loads.total_bounds)
       << ",\"predicted_seconds\":" << num(total_seconds) << "}";
    return os.str();
  }
  os << "topology:     torus " << spec.k << "^" << spec.d << " (" << tor->nodes() << " nodes, "
     << tor->links() << " directed links), " << torus::placement_name(spec.placement)
     << " placement";
  if (spec.placement == torus::Placement::linear)
    os << " (c = " << coefficients << "; " << spec.constant << ")";
  os << ", " << torus::routing_name(net.routing) << " routing, " << ranks << " ranks\n";
  constexpr std::size_t shown = 32;
  std::vector<double> first(
      loads.step_max.begin(),
      loads.step_max.begin() + static_cast<std::ptrdiff_t>(std::min(shown, loads.step_max.size())));
  os << "link load per step (bytes on the busiest link): " << joined(first, " ", num);
  if (loads.step_max.size() > shown)
    os << " ... (" << loads.step_max.size() - shown << " more: --json lists all)";
  os << "\nsum of step maxima: " << num(loads.sum_step_max)
     << " bytes (lower bound: sum of step bounds " << num(loads.sum_step_bounds) << ")\n";
  os << "total link load:    " << num(loads.total.max) << " bytes";
  if (loads.total.busiest >= 0) os << " on link " << link_name(*tor, loads.total.busiest);
  os << "\n";
  const torus::LoadBounds &b = loads.total_bounds;
  os << "bounds (total):     " << num(b.best()) << " bytes = max(distance " << num(b.distance)
     << ", node " << num(b.node) << ", slab " << num(b.slab);
  if (b.slab_dim >= 0) os << " at " << slab_name(b);
  os << ")\n";
  os << "torus predicted:    " << num(total_seconds) << " s (link bandwidth " << num(bandwidth)
     << " bytes/s; a step takes max(busiest port, busiest link) + setup)\n";
  return os.str();
}

// --- Scale (docs/studies/scaling.md, "redist-plan at scale"): what the tool materialises, what it
// evaluates step by step, and what it refuses.

// Schedules of at most this many messages of the 2-D volume graph are built whole; beyond, a
// product schedule (caterpillar, stepwise, circulant, greedy) or all-at-once is evaluated one
// step at a time (stream_product), never held.
constexpr Index kMaterialiseMessages = Index{1} << 20;
// Matching schedules without a closed form cost about messages x max degree of the graph they
// match (Stepwise: ~2 s per million on one core, Greedy and ggp/oggp less); beyond this product
// they are refused before starting (measured in docs/studies/scaling.md).
constexpr Index kMatchingWork = Index{1} << 21;
// auto and multiphase decide as every rank would: a rank plan per rank, O(ranks^2) lookups.
constexpr int kDecisionRanks = 16384;
// --steps and the JSON step list show this many steps of this many pieces at most when the
// schedule is larger.
constexpr std::size_t kSampleSteps = 32;
constexpr std::size_t kSamplePieces = 32;

std::string thousands(Index v) {
  const std::string digits = std::to_string(v);
  std::string out;
  for (std::size_t k = 0; k < digits.size(); ++k) {
    if (k > 0 && digits[k - 1] != '-' && (digits.size() - k) % 3 == 0) out.push_back(',');
    out.push_back(digits[k]);
  }
  return out;
}

/// Messages x the largest degree of `g`: the work estimate of its matchings.
Index matching_work(const redist::VolumeGraph &g) {
  return static_cast<Index>(g.messages.size()) * g.max_degree();
}

/// The volume graph's line of the text output (and JSON members) of a full-window 2-D transfer
/// from its row and column graphs: message (pr + pc nprow, qr + qc nprow) has the product of
/// the 1-D volumes, so counts, degrees and node volumes are products. O(1-D messages).
struct GraphSummary {
  int senders = 0;
  int receivers = 0;
  Index messages = 0;
  Index elements = 0;
  Index max_degree = 0;
  Index max_node_elements = 0;
};

GraphSummary graph_summary(const redist::VolumeGraph &g) {
  return {g.senders, g.receivers,    static_cast<Index>(g.messages.size()),
          g.total(), g.max_degree(), g.max_node_volume()};
}

GraphSummary product_summary(const redist::VolumeGraph &rows, const redist::VolumeGraph &cols) {
  struct Side {
    Index degree = 0;
    Index elements = 0;
  };
  const auto maxima = [](const redist::VolumeGraph &g, bool sender) {
    std::vector<Side> nodes(static_cast<std::size_t>(sender ? g.senders : g.receivers));
    for (const redist::Message &m : g.messages) {
      Side &n = nodes[static_cast<std::size_t>(sender ? m.src : m.dst)];
      ++n.degree;
      n.elements += m.volume;
    }
    Side best;
    for (const Side &n : nodes) {
      best.degree = std::max(best.degree, n.degree);
      best.elements = std::max(best.elements, n.elements);
    }
    return best;
  };
  const Side rs = maxima(rows, true);
  const Side cs = maxima(cols, true);
  const Side rr = maxima(rows, false);
  const Side cr = maxima(cols, false);
  GraphSummary out;
  out.senders = rows.senders * cols.senders;
  out.receivers = rows.receivers * cols.receivers;
  out.messages = static_cast<Index>(rows.messages.size() * cols.messages.size());
  out.elements = rows.total() * cols.total();
  out.max_degree = std::max(rs.degree * cs.degree, rr.degree * cr.degree);
  out.max_node_elements = std::max(rs.elements * cs.elements, rr.elements * cr.elements);
  return out;
}

/// A step of a schedule as --steps and the JSON step list show it: its largest piece, its
/// number of pieces and its first pieces.
struct SampleStep {
  Index largest = 0;
  std::size_t pieces = 0;
  std::vector<redist::Piece> first;
};

struct Streamed {
  struct Step {
    Index largest = 0;
    Index pieces = 0;
    std::vector<redist::Piece> first;
  };
  redist::ScheduleStats stats;
  std::vector<SampleStep> sample; ///< the first kSampleSteps steps
};

/// The schedule build_schedule would materialise for a product strategy on a full window (the
/// product of `rows` and `cols` over grid positions, pieces within one rank dropped, steps left
/// empty dropped unless keep_empty, at most max_concurrent pieces per step, pieces cut at
/// `chunk` elements), evaluated one step at a time: schedule_stats of it and its first steps,
/// in O(pieces) time and O(nodes + 1-D schedules) memory. All-at-once is the product of the
/// one-step schedules of all 1-D messages.
Streamed stream_product(const redist::Transfer &t, const redist::VolumeGraph &row_graph,
                        const redist::VolumeGraph &col_graph, const redist::Schedule &rows,
                        const redist::Schedule &cols, bool keep_empty, int max_concurrent,
                        Index chunk, const redist::CostModel &model, std::size_t element_bytes) {
  using redist::Piece;
  const auto bytes = static_cast<double>(element_bytes);
  const int snr = t.src.grid.nprow;
  const int dnr = t.dst.grid.nprow;
  const std::vector<int> &src_ranks = t.src.grid.ranks;
  const std::vector<int> &dst_ranks = t.dst.grid.ranks;
  // The 2-D volume of a pair is the product of its 1-D messages' volumes (full window).
  const auto volumes = [](const redist::VolumeGraph &g, const redist::Schedule &s) {
    std::vector<std::vector<Index>> v;
    for (const redist::Step &step : s.steps) {
      v.emplace_back();
      for (const Piece &p : step.pieces)
        v.back().push_back(g.volume(p.src, p.dst));
    }
    return v;
  };
  const std::vector<std::vector<Index>> row_volumes = volumes(row_graph, rows);
  const std::vector<std::vector<Index>> col_volumes = volumes(col_graph, cols);
  struct Node {
    Index pieces = 0;
    Index elements = 0;
  };
  std::vector<Node> out_nodes(src_ranks.size());
  std::vector<Node> in_nodes(dst_ranks.size());
  std::vector<int> touched_out;
  std::vector<int> touched_in;
  Streamed result;
  redist::ScheduleStats &st = result.stats;
  // schedule_stats of one step (step_port_time with arrays instead of maps), piece by piece.
  const auto add_piece = [&](Streamed::Step &acc, const Piece &p) {
    ++acc.pieces;
    ++st.pieces;
    st.elements += p.volume;
    acc.largest = std::max(acc.largest, p.volume);
    Node &o = out_nodes[static_cast<std::size_t>(p.src)];
    if (o.pieces++ == 0) touched_out.push_back(p.src);
    o.elements += p.volume;
    Node &i = in_nodes[static_cast<std::size_t>(p.dst)];
    if (i.pieces++ == 0) touched_in.push_back(p.dst);
    i.elements += p.volume;
    if (result.sample.size() < kSampleSteps && acc.first.size() < kSamplePieces)
      acc.first.push_back(p);
  };
  const auto close_step = [&](Streamed::Step &acc) {
    ++st.steps;
    const Index largest = acc.largest;
    st.largest_piece = std::max(st.largest_piece, largest);
    st.sum_step_max += largest;
    double seconds = acc.pieces == 0 ? model.alpha : 0.0;
    for (auto *side : {&out_nodes, &in_nodes}) {
      std::vector<int> &touched = side == &out_nodes ? touched_out : touched_in;
      for (const int n : touched) {
        Node &node = (*side)[static_cast<std::size_t>(n)];
        st.max_node_pieces = std::max(st.max_node_pieces, node.pieces);
        seconds = std::max(seconds, model.alpha * static_cast<double>(node.pieces) +
                                        model.beta * bytes * static_cast<double>(node.elements));
        node = Node{};
      }
      touched.clear();
    }
    st.seconds += seconds + model.step_setup;
    if (result.sample.size() < kSampleSteps)
      result.sample.push_back(
          {largest, static_cast<std::size_t>(acc.pieces), std::move(acc.first)});
  };
  const auto account = [&](const std::vector<Piece> &pieces) {
    Streamed::Step acc;
    for (const Piece &p : pieces)
      add_piece(acc, p);
    close_step(acc);
  };
  // cut_pieces of one step.
  std::vector<Piece> part;
  const auto cut = [&](const std::vector<Piece> &pieces) {
    if (chunk <= 0) {
      account(pieces);
      return;
    }
    Index largest = 0;
    for (const Piece &p : pieces)
      largest = std::max(largest, p.volume);
    const Index parts = std::max<Index>(1, (largest + chunk - 1) / chunk);
    for (Index j = 0; j < parts; ++j) {
      part.clear();
      const Index begin = j * chunk;
      for (const Piece &p : pieces)
        if (begin < p.volume)
          part.push_back({p.src, p.dst, p.offset + begin, std::min(chunk, p.volume - begin)});
      account(part);
    }
  };
  std::vector<Piece> step;
  std::vector<Piece> group;
  for (std::size_t a = 0; a < rows.steps.size(); ++a) {
    const std::vector<Piece> &row_pieces = rows.steps[a].pieces;
    for (std::size_t b = 0; b < cols.steps.size(); ++b) {
      const std::vector<Piece> &col_pieces = cols.steps[b].pieces;
      step.clear();
      if (max_concurrent <= 0 && chunk <= 0) {
        // No limits: the step is accounted piece by piece, only its first pieces held (an
        // all-at-once step has every message).
        Streamed::Step acc;
        for (std::size_t j = 0; j < col_pieces.size(); ++j) {
          const Piece &c = col_pieces[j];
          const Index vc = col_volumes[b][j];
          for (std::size_t i = 0; i < row_pieces.size(); ++i) {
            const Piece &r = row_pieces[i];
            const Index v = row_volumes[a][i] * vc;
            const int src = r.src + c.src * snr;
            const int dst = r.dst + c.dst * dnr;
            if (v > 0 && src_ranks[static_cast<std::size_t>(src)] !=
                             dst_ranks[static_cast<std::size_t>(dst)])
              add_piece(acc, {src, dst, 0, v});
          }
        }
        if (acc.pieces > 0 || keep_empty) close_step(acc);
        continue;
      }
      for (std::size_t j = 0; j < col_pieces.size(); ++j) {
        const Piece &c = col_pieces[j];
        const Index vc = col_volumes[b][j];
        for (std::size_t i = 0; i < row_pieces.size(); ++i) {
          const Piece &r = row_pieces[i];
          const Index v = row_volumes[a][i] * vc;
          const int src = r.src + c.src * snr;
          const int dst = r.dst + c.dst * dnr;
          if (v > 0 &&
              src_ranks[static_cast<std::size_t>(src)] != dst_ranks[static_cast<std::size_t>(dst)])
            step.push_back({src, dst, 0, v});
        }
      }
      if (step.empty()) {
        if (keep_empty) cut(step);
        continue;
      }
      // limit_concurrency of one step.
      if (max_concurrent <= 0) {
        cut(step);
        continue;
      }
      for (std::size_t first = 0; first < step.size();
           first += static_cast<std::size_t>(max_concurrent)) {
        const std::size_t last =
            std::min(step.size(), first + static_cast<std::size_t>(max_concurrent));
        group.assign(step.begin() + static_cast<std::ptrdiff_t>(first),
                     step.begin() + static_cast<std::ptrdiff_t>(last));
        cut(group);
      }
    }
  }
  return result;
}

/// The one-step schedule of every message of `g` (all-at-once along one dimension).
redist::Schedule all_messages(const redist::VolumeGraph &g) {
  redist::Schedule s;
  s.steps.emplace_back();
  for (const redist::Message &m : g.messages)
    s.steps.back().pieces.push_back({m.src, m.dst, 0, m.volume});
  return s;
}

// Schedules listed whole by --steps and the JSON step list up to this many pieces.
constexpr std::size_t kListPieces = 4096;

/// The output of a one-phase plan. `steps`: every step, or the first ones when `scale` (what
/// was done at this size) is not empty, each with its first pieces.
int print_one_phase(const GraphSummary &graph, const std::string &detail,
                    const redist::ScheduleStats &st, const std::vector<SampleStep> &steps,
                    const redist::CostModel &model, std::size_t element_bytes, bool json,
                    bool list_steps, const std::string &network_lines, const std::string &scale) {
  const bool sampled = !scale.empty();
  if (json) {
    std::cout << R"({"graph":{"senders":)" << graph.senders << ",\"receivers\":" << graph.receivers
              << ",\"messages\":" << graph.messages << ",\"elements\":" << graph.elements
              << ",\"max_degree\":" << graph.max_degree
              << ",\"max_node_elements\":" << graph.max_node_elements
              << "},\"schedule\":" << json_string(detail) << ",\"steps\":" << st.steps
              << ",\"pieces\":" << st.pieces << ",\"sum_step_max\":" << st.sum_step_max
              << ",\"largest_piece\":" << st.largest_piece << ",\"alpha\":" << model.alpha
              << ",\"beta\":" << model.beta << ",\"element_bytes\":" << element_bytes
              << ",\"predicted_seconds\":" << st.seconds;
    if (sampled)
      std::cout << ",\"scale\":" << json_string(scale)
                << ",\"step_list_sampled\":{\"steps\":" << kSampleSteps
                << ",\"pieces_per_step\":" << kSamplePieces << "}";
    std::cout << ",\"step_list\":[";
    for (std::size_t k = 0; k < steps.size(); ++k) {
      std::cout << (k ? "," : "") << "{\"largest\":" << steps[k].largest << ",\"pieces\":[";
      const auto &pieces = steps[k].first;
      for (std::size_t p = 0; p < pieces.size(); ++p) {
        std::cout << (p ? "," : "") << "[" << pieces[p].src << "," << pieces[p].dst << ","
                  << pieces[p].offset << "," << pieces[p].volume << "]";
      }
      std::cout << "]}";
    }
    std::cout << "]" << network_lines << "}\n";
    return 0;
  }
  std::cout << "volume graph: " << graph.senders << " senders, " << graph.receivers
            << " receivers, " << graph.messages << " messages, " << graph.elements
            << " elements; max degree " << graph.max_degree << ", busiest node "
            << graph.max_node_elements << " elements\n";
  std::cout << "schedule:     " << detail << "\n";
  std::cout << "N (steps):    " << st.steps << "\n";
  std::cout << "T (sum of step maxima): " << st.sum_step_max << " elements\n";
  std::cout << "pieces:       " << st.pieces << ", largest " << st.largest_piece << " elements\n";
  std::cout << "predicted:    " << st.seconds << " s (alpha " << model.alpha << " s, beta "
            << model.beta << " s/byte, " << element_bytes << "-byte elements)\n";
  if (sampled) std::cout << "scale:        " << scale << "\n";
  if (list_steps) {
    if (sampled)
      std::cout << "steps:        a sample: the first " << steps.size() << " of " << st.steps
                << " steps, at most " << kSamplePieces << " pieces each (" << thousands(st.pieces)
                << " pieces in all)\n";
    for (std::size_t k = 0; k < steps.size(); ++k) {
      std::cout << "step " << k << " (largest " << steps[k].largest << "):";
      for (const redist::Piece &p : steps[k].first) {
        std::cout << " " << p.src << "->" << p.dst << ":" << p.volume;
      }
      if (steps[k].first.size() < steps[k].pieces)
        std::cout << " ... (" << steps[k].pieces - steps[k].first.size() << " more)";
      std::cout << "\n";
    }
  }
  std::cout << network_lines;
  return 0;
}
} // namespace

// --relabel: the destination grid's proposed rank order (schedule/relabel.hpp).
int run_relabel(const redist::Transfer &t, std::size_t element_bytes, bool json) {
  redist::Relabelling r;
  try {
    r = redist::propose_relabelling(t, {}, element_bytes);
  } catch (const std::invalid_argument &e) {
    std::cerr << "redist-plan: --relabel: " << e.what() << "\n";
    return 1;
  }
  const auto ranks = [](const std::vector<int> &v, const char *sep) {
    std::string out;
    for (std::size_t k = 0; k < v.size(); ++k)
      out += (k ? sep : "") + std::to_string(v[k]);
    return out;
  };
  const Index total = r.bytes_total();
  if (json) {
    std::cout << "{\"relabel\":{\"nprow\":" << r.grid.nprow << ",\"npcol\":" << r.grid.npcol
              << ",\"identity\":[" << ranks(r.identity.ranks, ",") << "],\"proposed\":["
              << ranks(r.grid.ranks, ",") << "],\"elements\":" << r.total_elements
              << ",\"element_bytes\":" << element_bytes
              << ",\"kept_bytes_before\":" << r.bytes_kept_before()
              << ",\"kept_bytes_after\":" << r.bytes_kept_after()
              << ",\"moved_bytes_before\":" << total - r.bytes_kept_before()
              << ",\"moved_bytes_after\":" << total - r.bytes_kept_after()
              << ",\"saved_bytes\":" << r.bytes_saved() << "}}\n";
    return 0;
  }
  const auto percent = [total](Index v) {
    std::ostringstream os;
    os << std::fixed << std::setprecision(1)
       << (total > 0 ? 100.0 * static_cast<double>(v) / static_cast<double>(total) : 0.0) << "%";
    return os.str();
  };
  std::cout << "relabel:      destination grid " << r.grid.nprow << "x" << r.grid.npcol
            << ", ranks column-major (position pr + pc * nprow)\n";
  std::cout << "identity:     " << ranks(r.identity.ranks, " ") << "\n";
  std::cout << "proposed:     " << ranks(r.grid.ranks, " ") << "\n";
  std::cout << "window:       " << thousands(total) << " bytes (" << thousands(r.total_elements)
            << " elements of " << element_bytes << " bytes)\n";
  std::cout << "before:       kept local " << thousands(r.bytes_kept_before()) << " bytes ("
            << percent(r.bytes_kept_before()) << "), moved "
            << thousands(total - r.bytes_kept_before()) << " bytes\n";
  std::cout << "after:        kept local " << thousands(r.bytes_kept_after()) << " bytes ("
            << percent(r.bytes_kept_after()) << "), moved "
            << thousands(total - r.bytes_kept_after()) << " bytes\n";
  std::cout << "saved:        " << thousands(r.bytes_saved())
            << " bytes no longer cross the network (" << percent(r.bytes_saved())
            << " of the window)\n";
  return 0;
}

int main(int argc, char **argv) {
  std::vector<std::string> args(argv + 1, argv + argc);
  std::optional<std::vector<Index>> one_d;
  std::optional<std::vector<Index>> two_d;
  std::optional<std::vector<Index>> a_spec;
  std::optional<std::vector<Index>> b_spec;
  Index src_start = 0;
  Index dst_start = 0;
  Index src_proc = 0;
  Index dst_proc = 0;
  redist::Region region;
  bool disjoint = false;
  bool relabel = false;
  bool list_steps = false;
  bool json = false;
  Index ranks_per_node = 0;
  std::size_t element_bytes = 8;
  redist::ScheduleOptions options;
  bool ring = false;
  RingArgs ring_options;
  Network network;
  bool max_concurrent_given = false;
  std::string svg_file;
  Index materialise_max = kMaterialiseMessages;
  for (std::size_t k = 0; k < args.size(); ++k) {
    const std::string &opt = args[k];
    const auto value = [&]() -> const std::string & {
      if (k + 1 >= args.size()) usage_error(opt + " needs a value");
      return args[++k];
    };
    const auto integer = [&]() { return numbers(opt, value(), 1, 1)[0]; };
    if (opt == "--help" || opt == "-h") {
      std::cout << kHelp << redist::strategy_names() << kHelpTail << kHelpNetwork;
      return 0;
    } else if (opt == "--1d") {
      one_d = numbers(opt, value(), 5, 5);
    } else if (opt == "--2d") {
      two_d = numbers(opt, value(), 2, 2);
    } else if (opt == "--a") {
      a_spec = numbers(opt, value(), 4, 8);
    } else if (opt == "--b") {
      b_spec = numbers(opt, value(), 4, 8);
    } else if (opt == "--src-start") {
      src_start = integer();
    } else if (opt == "--dst-start") {
      dst_start = integer();
    } else if (opt == "--src-proc") {
      src_proc = integer();
    } else if (opt == "--dst-proc") {
      dst_proc = integer();
    } else if (opt == "--region") {
      const std::string &r = value();
      if (r == "full")
        region.kind = redist::Region::Kind::full;
      else if (r == "upper")
        region.kind = redist::Region::Kind::upper;
      else if (r == "lower")
        region.kind = redist::Region::Kind::lower;
      else
        usage_error("--region must be full, upper or lower");
    } else if (opt == "--unit-diag") {
      region.unit_diag = true;
    } else if (opt == "--disjoint") {
      disjoint = true;
    } else if (opt == "--relabel") {
      relabel = true;
    } else if (opt == "--schedule") {
      const auto s = redist::parse_strategy(value());
      if (!s)
        usage_error("unknown schedule '" + args[k] + "' (known: " + redist::strategy_names() + ")");
      options.strategy = *s;
    } else if (opt == "--max-concurrent") {
      const Index v = integer();
      if (v < 0 || v > 1 << 30) usage_error("--max-concurrent must be >= 0");
      options.max_concurrent = static_cast<int>(v);
      max_concurrent_given = true;
    } else if (opt == "--max-memory") {
      options.max_memory = integer();
      if (options.max_memory < 0) usage_error("--max-memory must be >= 0");
    } else if (opt == "--alpha") {
      options.model.alpha = real_number(opt, value());
    } else if (opt == "--beta") {
      options.model.beta = real_number(opt, value());
    } else if (opt == "--inter-alpha") {
      options.inter.alpha = real_number(opt, value());
    } else if (opt == "--inter-beta") {
      options.inter.beta = real_number(opt, value());
    } else if (opt == "--element-bytes") {
      const Index v = integer();
      if (v < 1 || v > 1 << 20) usage_error("--element-bytes must be >= 1");
      element_bytes = static_cast<std::size_t>(v);
    } else if (opt == "--materialise-max") {
      materialise_max = integer();
      if (materialise_max < 0) usage_error("--materialise-max must be >= 0");
    } else if (opt == "--steps") {
      list_steps = true;
    } else if (opt == "--ranks-per-node") {
      ranks_per_node = integer();
      if (ranks_per_node < 1) usage_error("--ranks-per-node must be >= 1");
    } else if (opt == "--json") {
      json = true;
    } else if (opt == "--ring") {
      ring = true;
      ring_options.loads = numbers(opt, value(), 1, 1 << 20);
    } else if (opt == "--targets") {
      ring_options.targets = numbers(opt, value(), 1, 1 << 20);
    } else if (opt == "--weights") {
      ring_options.weights = reals(opt, value());
    } else if (opt == "--cost-next") {
      ring_options.c_next = reals(opt, value());
    } else if (opt == "--cost-prev") {
      ring_options.c_prev = reals(opt, value());
    } else if (opt == "--direction") {
      const std::string &d = value();
      if (d == "uni")
        ring_options.direction = redist::ring::Direction::unidirectional;
      else if (d == "bi")
        ring_options.direction = redist::ring::Direction::bidirectional;
      else
        usage_error("--direction must be uni or bi");
    } else if (opt == "--svg") {
      svg_file = value();
      if (svg_file.empty()) usage_error("--svg needs a file name");
    } else if (opt == "--topology") {
      parse_topology(value(), network);
    } else if (opt == "--routing") {
      const std::string &r = value();
      if (r != "odr" && r != "udr") usage_error("--routing must be odr or udr");
      network.routing =
          r == "udr" ? redist::torus::Routing::unordered : redist::torus::Routing::ordered;
      network.routing_given = true;
    } else if (opt == "--link-bandwidth") {
      network.link_bandwidth = real_number(opt, value());
    } else if (opt == "--step-setup") {
      network.step_setup = real_number(opt, value());
    } else {
      usage_error("unknown option '" + opt + "'");
    }
  }
  if (ranks_per_node > 0 && (ring || relabel))
    usage_error("--ranks-per-node needs --1d or --2d, without --relabel");
  if (ring) {
    if (one_d || two_d) usage_error("--ring cannot be combined with --1d or --2d");
    if (network.kind != Network::Kind::crossbar || network.routing_given ||
        network.link_bandwidth || network.step_setup)
      usage_error("--topology, --routing, --link-bandwidth and --step-setup need --1d or --2d");
    ring_options.svg = svg_file;
    return run_ring(ring_options, json);
  }
  if (ring_options.targets || ring_options.weights || ring_options.c_next || ring_options.c_prev)
    usage_error("--targets, --weights, --cost-next and --cost-prev need --ring");
  if (one_d.has_value() == two_d.has_value())
    usage_error("give exactly one of --1d, --2d and --ring");
  if (relabel && (!two_d || disjoint))
    usage_error("--relabel needs --2d without --disjoint (the destination grid is made of the "
                "source's ranks)");
  apply_network(network, max_concurrent_given, two_d.has_value(), options, disjoint);

  redist::Transfer t;
  if (one_d) {
    const auto &v = *one_d;
    if (v[0] < 1 || v[1] < 1 || v[2] < 1 || v[3] < 1 || v[4] < 0)
      usage_error("--1d: P, Q, r, s must be >= 1 and EXTENT >= 0");
    if (src_proc < 0 || src_proc >= v[0] || dst_proc < 0 || dst_proc >= v[1] || src_start < 0 ||
        dst_start < 0)
      usage_error("--src-proc/--dst-proc must lie in the process sets, starts be >= 0");
    const auto P = static_cast<int>(v[0]);
    const auto Q = static_cast<int>(v[1]);
    t.m = v[4];
    t.n = 1;
    t.src.rows = {src_start + t.m, v[2], P, static_cast<int>(src_proc)};
    t.dst.rows = {dst_start + t.m, v[3], Q, static_cast<int>(dst_proc)};
    t.src.cols = t.dst.cols = {1, 1, 1, 0};
    t.src.i = src_start;
    t.dst.i = dst_start;
    t.src.grid = {P, 1, {}};
    t.dst.grid = {Q, 1, {}};
    for (int r = 0; r < P; ++r)
      t.src.grid.ranks.push_back(r);
    for (int r = 0; r < Q; ++r)
      t.dst.grid.ranks.push_back(P + r);
  } else {
    if (!a_spec || !b_spec) usage_error("--2d needs --a and --b");
    const Index m = (*two_d)[0];
    const Index n = (*two_d)[1];
    if (m < 0 || n < 0) usage_error("--2d: M and N must be >= 0");
    t.m = m;
    t.n = n;
    t.region = region;
    t.src = layout_2d("--a", *a_spec, m, n, 0);
    t.dst = layout_2d("--b", *b_spec, m, n, disjoint ? t.src.grid.nprow * t.src.grid.npcol : 0);
  }
  if (relabel) return run_relabel(t, element_bytes, json);

  const auto refuse = [](const std::string &why) {
    std::cerr << "redist-plan: " << why << "\n";
    return 1;
  };
  // Scale (docs/studies/scaling.md): the 1-D graphs take one sweep of a period; the 2-D graph holds
  // the product of their messages.
  const redist::VolumeGraph row_graph = redist::volume_graph(t.rows());
  const redist::VolumeGraph col_graph = redist::volume_graph(t.cols());
  const Index messages_2d =
      static_cast<Index>(row_graph.messages.size() * col_graph.messages.size());
  const redist::Strategy strategy = options.strategy;
  const std::string schedule_name(redist::strategy_name(strategy));
  int ranks = 0;
  for (const auto *grid : {&t.src.grid, &t.dst.grid})
    for (const int r : grid->ranks)
      ranks = std::max(ranks, r + 1);
  if (ranks_per_node > 0) {
    for (int r = 0; r < ranks; ++r)
      options.node_of_rank.push_back(static_cast<int>(r / ranks_per_node));
  }
  if ((strategy == redist::Strategy::automatic || strategy == redist::Strategy::multiphase) &&
      ranks > kDecisionRanks)
    return refuse("--schedule " + schedule_name + ": deciding as every rank would takes a rank " +
                  "plan of each of the " + thousands(ranks) +
                  " ranks and O(ranks^2) time; this tool decides up to " +
                  thousands(kDecisionRanks) +
                  " ranks. Name the schedule instead (e.g. --schedule stepwise, caterpillar or "
                  "all-at-once)");
  {
    // Matching schedules without a closed form: refused before they start when too large.
    Index work = 0;
    std::string where;
    const auto dimension = [&](const char *name, const redist::Transfer1D &d,
                               const redist::VolumeGraph &g) {
      bool matchings = strategy == redist::Strategy::greedy;
      if (strategy == redist::Strategy::stepwise || strategy == redist::Strategy::circulant) {
        matchings = !redist::best_closed_form(d, options.model, element_bytes) &&
                    !(strategy == redist::Strategy::circulant &&
                      redist::ClosedFormSchedule::make(redist::ClosedFormKind::circulant, d));
      }
      if (!matchings || g.messages.empty()) return;
      work += matching_work(g);
      where += std::string(where.empty() ? "" : "; ") + name + " (" + thousands(g.senders) +
               " -> " + thousands(g.receivers) + " processes): " + thousands(g.messages.size()) +
               " messages of degree up to " + thousands(g.max_degree());
    };
    std::string what;
    if (strategy == redist::Strategy::ggp || strategy == redist::Strategy::oggp) {
      const GraphSummary g = product_summary(row_graph, col_graph);
      work = g.messages * g.max_degree;
      where = "the 2-D graph: " + thousands(g.messages) + " messages of degree up to " +
              thousands(g.max_degree);
      what = "Jeannot & Wagner's " + schedule_name + " matchings run on ";
    } else {
      dimension("rows", t.rows(), row_graph);
      dimension("columns", t.cols(), col_graph);
      what = strategy == redist::Strategy::greedy
                 ? "greedy matchings run on the 1-D volume graphs, "
                 : "no closed form applies, so Desprez et al.'s Stepwise matchings run on ";
    }
    if (work > kMatchingWork)
      return refuse(
          "--schedule " + schedule_name + ": " + what + where + ": " + thousands(work) +
          " messages x degree, beyond the " + thousands(kMatchingWork) +
          " this tool matches (about 4 s; the time grows with that product, "
          "docs/studies/scaling.md). Schedules with closed forms (all-at-once, caterpillar; "
          "stepwise when one block size divides the other or gcd(r', Q) = gcd(s', P) "
          "= 1) have no such limit");
  }
  const bool product_strategy =
      strategy == redist::Strategy::stepwise || strategy == redist::Strategy::circulant ||
      strategy == redist::Strategy::caterpillar || strategy == redist::Strategy::greedy;
  if (messages_2d > materialise_max &&
      (product_strategy || strategy == redist::Strategy::all_at_once)) {
    // Too large to hold: the schedule is evaluated one step at a time.
    const std::string size = thousands(messages_2d) + " messages, more than the " +
                             thousands(materialise_max) + " this tool materialises";
    if (t.region.kind != redist::Region::Kind::full)
      return refuse("--region: a trapezoid of " + size +
                    ": its messages are not products of 1-D ones; copy the full window or use "
                    "a smaller one");
    if (network.kind != Network::Kind::crossbar)
      return refuse("--topology " + network.topology + ": " + size +
                    "; the link loads route every message of every step and are computed up to "
                    "that size only");
    if (ranks_per_node > 0)
      return refuse("--ranks-per-node: " + size +
                    "; the bytes per node are counted up to that "
                    "size only");
    if (!svg_file.empty())
      return refuse("--svg: " + size +
                    "; the picture bins the whole volume graph and is drawn "
                    "up to that size only");
    if (strategy == redist::Strategy::all_at_once &&
        (options.max_concurrent > 0 || options.max_memory > 0))
      return refuse("--schedule all-at-once with --max-concurrent or --max-memory: " + size);
    Index chunk = 0;
    if (options.max_memory > 0) chunk = options.max_memory / static_cast<Index>(2 * element_bytes);
    if (options.max_memory > 0 && chunk < 1)
      return refuse("max_memory of " + std::to_string(options.max_memory) +
                    " bytes is below one element sent and one received (" +
                    std::to_string(2 * element_bytes) + " bytes)");
    std::string detail;
    Streamed streamed;
    if (strategy == redist::Strategy::all_at_once) {
      detail = "all messages at once";
      streamed = stream_product(t, row_graph, col_graph, all_messages(row_graph),
                                all_messages(col_graph), false, 0, 0, options.model, element_bytes);
    } else {
      std::string row_how;
      std::string col_how;
      const redist::Schedule rows =
          redist::dimension_schedule(strategy, t.rows(), options.model, element_bytes, row_how);
      const redist::Schedule cols =
          redist::dimension_schedule(strategy, t.cols(), options.model, element_bytes, col_how);
      detail = schedule_name + ", rows: " + row_how + " x columns: " + col_how;
      streamed = stream_product(t, row_graph, col_graph, rows, cols,
                                strategy == redist::Strategy::caterpillar, options.max_concurrent,
                                chunk, options.model, element_bytes);
    }
    return print_one_phase(product_summary(row_graph, col_graph), detail, streamed.stats,
                           streamed.sample, options.model, element_bytes, json, list_steps, "",
                           "evaluated one step at a time (" + size + ")");
  }

  std::vector<redist::GlobalPhase> phases;
  std::string detail;
  const bool explicit_one_phase = strategy != redist::Strategy::automatic &&
                                  strategy != redist::Strategy::multiphase &&
                                  !(strategy == redist::Strategy::all_at_once &&
                                    (options.max_concurrent > 0 || options.max_memory > 0));
  if (explicit_one_phase) {
    // The schedule asked for, without the decision every rank would make (which only resolves
    // auto and multiphase, and checks all-at-once's limits).
    redist::GlobalPhase one{t, {}, {}};
    if (const std::string why =
            redist::global_schedule(t, options, element_bytes, one.schedule, one.detail);
        !why.empty())
      return refuse(why);
    detail = one.detail;
    phases.push_back(std::move(one));
  } else if (const std::string why =
                 redist::global_phases(t, options, element_bytes, phases, detail);
             !why.empty()) {
    return refuse(why);
  }
  if (!svg_file.empty()) {
    const std::string picture = redist::plan_svg::plan_svg(phases, one_d.has_value(), detail);
    if (const std::string why = redist::svg::write_file(svg_file, picture); !why.empty()) {
      std::cerr << "redist-plan: --svg " << svg_file << ": " << why << "\n";
      return 1;
    }
  }
  if (phases.size() == 2) {
    const std::vector<std::string> phase_network =
        two_phase_network_reports(network, phases, options.model, element_bytes, json);
    return print_two_phases(phases, detail, options.model, element_bytes, json, list_steps,
                            phase_network,
                            node_report(phases, ranks_per_node, options, element_bytes, json));
  }
  const redist::VolumeGraph graph = redist::volume_graph(t);
  const redist::Schedule &schedule = phases.front().schedule;
  const redist::ScheduleStats st = redist::schedule_stats(schedule, options.model, element_bytes);
  const std::string network_lines =
      network_report(network, t, graph, schedule, options.model, element_bytes, json) +
      node_report(phases, ranks_per_node, options, element_bytes, json);
  std::vector<SampleStep> steps;
  const bool whole = st.pieces <= static_cast<Index>(kListPieces);
  for (const redist::Step &step : schedule.steps) {
    if (!whole && steps.size() >= kSampleSteps) break;
    const std::size_t shown =
        whole ? step.pieces.size() : std::min(step.pieces.size(), kSamplePieces);
    steps.push_back(
        {step.largest(),
         step.pieces.size(),
         {step.pieces.begin(), step.pieces.begin() + static_cast<std::ptrdiff_t>(shown)}});
  }
  return print_one_phase(graph_summary(graph), detail, st, steps, options.model, element_bytes,
                         json, list_steps, network_lines,
                         whole ? ""
                               : "materialised (" + thousands(st.pieces) +
                                     " pieces; --steps and --json list a sample)");
}
