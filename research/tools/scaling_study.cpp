// scaling-study: predicted cost of the caterpillar, stepwise, circulant and all-at-once schedules
// of 1-D block-cyclic redistributions, on a crossbar and on a 3-D torus (docs/studies/scaling.md,
// "Schedules at scale"; scripts/scaling_study.py runs it). Pure layers only, no MPI.
//
// Every schedule is built from the volume graph's messages, never from a P x Q table: the
// caterpillar places each message in its step (schedule_caterpillar), the closed forms evaluate
// their formula per sender (ClosedFormSchedule::build), and the torus routes only the pieces.

#include "schedule.hpp"
#include "schedule_cyclic.hpp"
#include "schedule_matching.hpp"
#include "torus.hpp"

#include <algorithm>
#include <charconv>
#include <chrono>
#include <cstddef>
#include <iostream>
#include <optional>
#include <sstream>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

namespace {

using redist::Index;

constexpr std::size_t kElementBytes = 8;
constexpr int kTorusDims = 3;

constexpr std::string_view kHelp =
    R"(usage: scaling-study --case P,Q,r,s,EXTENT [--case ...] [--matching-max N]

For each case, CYCLIC(r) on P processes -> CYCLIC(s) on Q other processes, EXTENT elements of
8 bytes (window from index 0), prints one tab-separated row per schedule:
  caterpillar   max(P, Q) steps (Prylli & Tourancheau, as in ScaLAPACK)
  stepwise      the cheapest closed form that applies (class, W&O, circulant), else Desprez et
                al.'s stepwise matchings when max(P, Q) <= --matching-max (default 4096)
  circulant     Park, Prasanna & Raghavendra's generalised circulant, where it applies
  all-at-once   every message in one step
Columns: N (steps), T (sum of step maxima, elements), the predicted time on a crossbar (default
cost model: alpha 2 us, beta 0.25 ns/byte) and on the smallest 3-D torus k^3 >= P + Q (sources
on ranks 0..P-1, destinations on P..P+Q-1, rank-order placement, ordered dimensional routing,
link bandwidth 1/beta), and the seconds this program spent on the row.
)";

struct Case {
  int P = 0;
  int Q = 0;
  Index r = 0;
  Index s = 0;
  Index extent = 0;
};

[[noreturn]] void usage_error(const std::string &what) {
  throw std::invalid_argument(what + " (see --help)");
}

Case parse_case(const std::string &text) {
  std::vector<Index> v;
  std::string_view rest = text;
  while (true) {
    const std::size_t comma = rest.find(',');
    const std::string_view item = rest.substr(0, comma);
    Index x = 0;
    const auto [end, ec] = std::from_chars(item.data(), item.data() + item.size(), x);
    if (ec != std::errc() || end != item.data() + item.size())
      usage_error("--case " + text + ": '" + std::string(item) + "' is not an integer");
    v.push_back(x);
    if (comma == std::string_view::npos) break;
    rest.remove_prefix(comma + 1);
  }
  if (v.size() != 5) usage_error("--case " + text + ": needs 5 numbers P,Q,r,s,EXTENT");
  if (v[0] < 1 || v[1] < 1 || v[2] < 1 || v[3] < 1 || v[4] < 1)
    usage_error("--case " + text + ": P, Q, r, s and EXTENT must be >= 1");
  if (v[0] > (1 << 24) || v[1] > (1 << 24))
    usage_error("--case " + text + ": P and Q must be <= 16,777,216");
  return {static_cast<int>(v[0]), static_cast<int>(v[1]), v[2], v[3], v[4]};
}

int smallest_cube_side(int ranks) {
  int k = 2;
  while (static_cast<Index>(k) * k * k < ranks)
    ++k;
  return k;
}

struct Network {
  redist::torus::Torus torus;
  std::vector<int> src_ranks;
  std::vector<int> dst_ranks;
};

Network make_network(const Case &c) {
  redist::torus::Spec spec;
  spec.k = smallest_cube_side(c.P + c.Q);
  spec.d = kTorusDims;
  Network net{redist::torus::Torus(spec, c.P + c.Q), {}, {}};
  for (int p = 0; p < c.P; ++p)
    net.src_ranks.push_back(p);
  for (int q = 0; q < c.Q; ++q)
    net.dst_ranks.push_back(c.P + q);
  return net;
}

void print_header() {
  std::cout << "P\tQ\tr\ts\textent\tmessages\tmax_degree\ttorus_k\tstrategy\tform\tsteps\t"
               "sum_step_max\tlargest_piece\tcrossbar_seconds\ttorus_link_sum_step_max\t"
               "torus_seconds\tcompute_seconds\n";
}

class CaseRows {
public:
  CaseRows(const Case &c, const redist::VolumeGraph &graph, const Network &net)
      : case_(c), graph_(graph), net_(net) {}

  void schedule_row(const std::string &strategy, const std::string &form,
                    const redist::Schedule &schedule,
                    std::chrono::steady_clock::time_point started) const {
    const redist::CostModel model;
    const redist::ScheduleStats st = redist::schedule_stats(schedule, model, kElementBytes);
    const redist::torus::ScheduleLoads loads =
        redist::torus::schedule_loads(net_.torus, schedule, net_.src_ranks, net_.dst_ranks,
                                      kElementBytes, redist::torus::Routing::ordered);
    double torus_seconds = 0.0;
    for (const double t :
         redist::torus::step_seconds(schedule, loads, model, kElementBytes, 1.0 / model.beta))
      torus_seconds += t;
    const std::chrono::duration<double> spent = std::chrono::steady_clock::now() - started;
    std::ostringstream row;
    row.precision(10);
    row << prefix() << strategy << '\t' << form << '\t' << st.steps << '\t' << st.sum_step_max
        << '\t' << st.largest_piece << '\t' << st.seconds << '\t' << loads.sum_step_max << '\t'
        << torus_seconds << '\t' << spent.count() << '\n';
    std::cout << row.str() << std::flush;
  }

  /// A strategy without a row of numbers: form says why ("n/a: ...", "skipped: ...").
  void empty_row(const std::string &strategy, const std::string &form) const {
    std::cout << prefix() << strategy << '\t' << form << "\t-\t-\t-\t-\t-\t-\t-\n" << std::flush;
  }

private:
  [[nodiscard]] std::string prefix() const {
    std::ostringstream out;
    out << case_.P << '\t' << case_.Q << '\t' << case_.r << '\t' << case_.s << '\t' << case_.extent
        << '\t' << graph_.messages.size() << '\t' << graph_.max_degree() << '\t' << net_.torus.k()
        << '\t';
    return out.str();
  }

  Case case_;
  const redist::VolumeGraph &graph_;
  const Network &net_;
};

void study(const Case &c, int matching_max) {
  using Clock = std::chrono::steady_clock;
  const redist::Transfer1D t{{c.extent, c.r, c.P, 0}, {c.extent, c.s, c.Q, 0}, 0, 0, c.extent};
  const redist::VolumeGraph graph = redist::volume_graph(t);
  const Network net = make_network(c);
  const CaseRows rows(c, graph, net);

  auto started = Clock::now();
  rows.schedule_row("caterpillar", "-", redist::schedule_caterpillar(graph), started);

  started = Clock::now();
  const redist::CostModel model;
  if (const auto form = redist::best_closed_form(t, model, kElementBytes)) {
    rows.schedule_row("stepwise", redist::closed_form_name(form->kind()), form->build(), started);
  } else if (std::max(c.P, c.Q) <= matching_max) {
    rows.schedule_row("stepwise", "matchings", redist::schedule_stepwise(graph), started);
  } else {
    rows.empty_row("stepwise", "skipped: no closed form, max(P, Q) > --matching-max " +
                                   std::to_string(matching_max));
  }

  started = Clock::now();
  if (const auto circulant =
          redist::ClosedFormSchedule::make(redist::ClosedFormKind::circulant, t)) {
    rows.schedule_row("circulant", "circulant", circulant->build(), started);
  } else {
    rows.empty_row("circulant", "n/a: neither block size is a multiple of the other on the "
                                "right process counts");
  }

  started = Clock::now();
  rows.schedule_row("all-at-once", "-", redist::schedule_all_at_once(graph), started);
}

int run(int argc, char **argv) {
  std::vector<Case> cases;
  int matching_max = 4096;
  for (int i = 1; i < argc; ++i) {
    const std::string opt = argv[i];
    if (opt == "--help" || opt == "-h") {
      std::cout << kHelp;
      return 0;
    }
    if (i + 1 >= argc)
      usage_error(opt == "--case" || opt == "--matching-max" ? opt + " needs a value"
                                                             : "unknown option " + opt);
    const std::string value = argv[++i];
    if (opt == "--case") {
      cases.push_back(parse_case(value));
    } else if (opt == "--matching-max") {
      int x = 0;
      const auto [end, ec] = std::from_chars(value.data(), value.data() + value.size(), x);
      if (ec != std::errc() || end != value.data() + value.size() || x < 0)
        usage_error("--matching-max " + value + ": must be an integer >= 0");
      matching_max = x;
    } else {
      usage_error("unknown option " + opt);
    }
  }
  if (cases.empty()) usage_error("give at least one --case P,Q,r,s,EXTENT");
  print_header();
  for (const Case &c : cases)
    study(c, matching_max);
  return 0;
}

} // namespace

int main(int argc, char **argv) {
  try {
    return run(argc, argv);
  } catch (const std::exception &e) {
    std::cerr << "scaling-study: " << e.what() << '\n';
    return 2;
  }
}
