// redist-plan: print the communication schedule of a redistribution without running it (no
// MPI): the volume graph, the steps of a strategy, N, T and the predicted time.

#include "planner.hpp"
#include "schedule.hpp"

#include <cstdio>
#include <cstdlib>
#include <iostream>
#include <optional>
#include <sstream>
#include <stdexcept>
#include <string>
#include <vector>

namespace {

using redist::Index;

constexpr const char *kHelp =
    R"(usage: redist-plan (--1d P,Q,r,s,EXTENT | --2d M,N --a LAYOUT --b LAYOUT) [options]

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
    if (item.empty() || *end != '\0') usage_error(option + ": '" + item + "' is not an integer");
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
    } else {
      usage_error("unknown option '" + opt + "'");
    }
  }
  if (one_d.has_value() == two_d.has_value()) usage_error("give exactly one of --1d and --2d");

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
    std::cout << "{\"graph\":{\"senders\":" << graph.senders << ",\"receivers\":" << graph.receivers
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
