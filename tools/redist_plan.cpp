// redist-plan: print the communication schedule of a redistribution without running it (no
// MPI): the volume graph, the steps of a strategy, N, T and the predicted time; or a ring
// rebalance (--ring): flows, timed moves, bounds, optionally drawn as SVG.

#include "planner.hpp"
#include "ring.hpp"
#include "schedule.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <iomanip>
#include <iostream>
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
  --steps               list every step's pieces (sender->receiver:elements)
  --json                machine-readable output
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
  for (std::size_t k = 0; k < v.size(); ++k)
    out += (k ? sep : "") + f(v[k]);
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
  s << "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"
    << "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"900\" height=\"" << num(height)
    << "\" font-family=\"sans-serif\" font-size=\"12\">\n"
    << "<defs><marker id=\"head\" viewBox=\"0 0 10 10\" refX=\"10\" refY=\"5\" markerWidth=\"7\" "
       "markerHeight=\"7\" orient=\"auto\"><path d=\"M0,0 L10,5 L0,10 z\" fill=\"#c0392b\"/>"
       "</marker></defs>\n"
    << "<rect width=\"100%\" height=\"100%\" fill=\"white\"/>\n"
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
    << "\" fill=\"#555\">blue: to P k+1, orange: to P k-1</text>\n"
    << "</svg>\n";
  return s.str();
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
    std::ofstream out(a.svg);
    out << ring_svg(p, plan);
    if (!out) {
      std::cerr << "redist-plan: --svg " << a.svg << ": cannot write the file\n";
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

} // namespace

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
  bool list_steps = false;
  bool json = false;
  std::size_t element_bytes = 8;
  redist::ScheduleOptions options;
  bool ring = false;
  RingArgs ring_options;
  for (std::size_t k = 0; k < args.size(); ++k) {
    const std::string &opt = args[k];
    const auto value = [&]() -> const std::string & {
      if (k + 1 >= args.size()) usage_error(opt + " needs a value");
      return args[++k];
    };
    const auto integer = [&]() { return numbers(opt, value(), 1, 1)[0]; };
    if (opt == "--help" || opt == "-h") {
      std::cout << kHelp << redist::strategy_names() << kHelpTail;
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
    } else if (opt == "--schedule") {
      const auto s = redist::parse_strategy(value());
      if (!s)
        usage_error("unknown schedule '" + args[k] + "' (known: " + redist::strategy_names() + ")");
      options.strategy = *s;
    } else if (opt == "--max-concurrent") {
      const Index v = integer();
      if (v < 0 || v > 1 << 30) usage_error("--max-concurrent must be >= 0");
      options.max_concurrent = static_cast<int>(v);
    } else if (opt == "--max-memory") {
      options.max_memory = integer();
      if (options.max_memory < 0) usage_error("--max-memory must be >= 0");
    } else if (opt == "--alpha") {
      options.model.alpha = real_number(opt, value());
    } else if (opt == "--beta") {
      options.model.beta = real_number(opt, value());
    } else if (opt == "--element-bytes") {
      const Index v = integer();
      if (v < 1 || v > 1 << 20) usage_error("--element-bytes must be >= 1");
      element_bytes = static_cast<std::size_t>(v);
    } else if (opt == "--steps") {
      list_steps = true;
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
      ring_options.svg = value();
    } else {
      usage_error("unknown option '" + opt + "'");
    }
  }
  if (ring) {
    if (one_d || two_d) usage_error("--ring cannot be combined with --1d or --2d");
    return run_ring(ring_options, json);
  }
  if (ring_options.targets || ring_options.weights || ring_options.c_next || ring_options.c_prev ||
      !ring_options.svg.empty())
    usage_error("--targets, --weights, --cost-next, --cost-prev and --svg need --ring");
  if (one_d.has_value() == two_d.has_value())
    usage_error("give exactly one of --1d, --2d and --ring");

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

  const redist::VolumeGraph graph = redist::volume_graph(t);
  redist::Schedule schedule;
  std::string detail;
  if (const std::string why = redist::global_schedule(t, options, element_bytes, schedule, detail);
      !why.empty()) {
    std::cerr << "redist-plan: " << why << "\n";
    return 1;
  }
  const redist::ScheduleStats st = redist::schedule_stats(schedule, options.model, element_bytes);
  if (json) {
    std::cout << R"({"graph":{"senders":)" << graph.senders << ",\"receivers\":" << graph.receivers
              << ",\"messages\":" << graph.messages.size() << ",\"elements\":" << graph.total()
              << ",\"max_degree\":" << graph.max_degree()
              << ",\"max_node_elements\":" << graph.max_node_volume()
              << "},\"schedule\":" << json_string(detail) << ",\"steps\":" << st.steps
              << ",\"pieces\":" << st.pieces << ",\"sum_step_max\":" << st.sum_step_max
              << ",\"largest_piece\":" << st.largest_piece << ",\"alpha\":" << options.model.alpha
              << ",\"beta\":" << options.model.beta << ",\"element_bytes\":" << element_bytes
              << ",\"predicted_seconds\":" << st.seconds << ",\"step_list\":[";
    for (std::size_t k = 0; k < schedule.steps.size(); ++k) {
      std::cout << (k ? "," : "") << "{\"largest\":" << schedule.steps[k].largest()
                << ",\"pieces\":[";
      const auto &pieces = schedule.steps[k].pieces;
      for (std::size_t p = 0; p < pieces.size(); ++p) {
        std::cout << (p ? "," : "") << "[" << pieces[p].src << "," << pieces[p].dst << ","
                  << pieces[p].offset << "," << pieces[p].volume << "]";
      }
      std::cout << "]}";
    }
    std::cout << "]}\n";
    return 0;
  }
  std::cout << "volume graph: " << graph.senders << " senders, " << graph.receivers
            << " receivers, " << graph.messages.size() << " messages, " << graph.total()
            << " elements; max degree " << graph.max_degree() << ", busiest node "
            << graph.max_node_volume() << " elements\n";
  std::cout << "schedule:     " << detail << "\n";
  std::cout << "N (steps):    " << st.steps << "\n";
  std::cout << "T (sum of step maxima): " << st.sum_step_max << " elements\n";
  std::cout << "pieces:       " << st.pieces << ", largest " << st.largest_piece << " elements\n";
  std::cout << "predicted:    " << st.seconds << " s (alpha " << options.model.alpha << " s, beta "
            << options.model.beta << " s/byte, " << element_bytes << "-byte elements)\n";
  if (list_steps) {
    for (std::size_t k = 0; k < schedule.steps.size(); ++k) {
      const redist::Step &step = schedule.steps[k];
      std::cout << "step " << k << " (largest " << step.largest() << "):";
      for (const redist::Piece &p : step.pieces) {
        std::cout << " " << p.src << "->" << p.dst << ":" << p.volume;
      }
      std::cout << "\n";
    }
  }
  return 0;
}
