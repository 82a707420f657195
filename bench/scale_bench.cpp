// scale_bench: time and memory of the pure layers at machine scale, no MPI.
//
//   scale_bench [--reps R] [--max-procs N] [--matching-max N] [--nd-ranks K] [--nd-only]
//
// (a) One rank's part: make_rank_plan, then choose_schedule for `stepwise` (the rank's steps
//     and the whole transfer's statistics), for 1-D grids P x 1 -> P x 1 (P = 1,024 ... 65,536)
//     and 2-D grids p x p -> p x p (p = 16 ... 256).
// (b) The whole machine's schedule statistics in closed form (product_closed_form_stats: N, T,
//     largest piece, predicted time; a 1-D grid is the product with a one-process dimension).
//
// Block sizes r -> s in both dimensions: 64 -> 100, 1 -> 64, 32 -> 48, 64 -> 32. Two window
// extents per case, both giving every process data: "period", the pattern's period
// lcm(P r, Q s) (whole periods), and "partial", 5 max(P r, Q s) + 17 (not whole periods).
// Windows start at (0, 0); source and destination grids hold the same ranks.
//
// Time: median over --reps runs (one run when a run takes over a second). Memory: "peak" is
// the most bytes held at once through operator new during one call, above what was held
// before it (replaced operator new/delete below; the result returned counts), the most over
// the runs; "rss+" is the growth of the process's ru_maxrss over the case's runs, in KiB: a
// high-water mark of the whole process, so 0 when the case stays under an earlier peak.
// Stepwise without a closed form falls back to matchings of the whole 1-D graph; those are
// run only up to --matching-max processes per dimension (default 1,024) and reported as
// skipped beyond.
// (c) One rank's N-d plan (make_nd_rank_plan) of a 3-D array on 4,096 ranks,
//     alone and with the `auto` schedule choice (choose_nd_schedule, which may try two phases):
//     the pencil moves (BLOCK, BLOCK, *) -> (*, BLOCK, BLOCK) -> (BLOCK, *, BLOCK) on 64 x 64
//     grids, CYCLIC(4, 8, 1) -> CYCLIC(16, 1, 2) and (BLOCK, BLOCK, BLOCK) -> CYCLIC(1, 1, 1)
//     (every rank a peer of every rank) on 16 x 16 x 16, for --nd-ranks ranks
//     spread over the communicator (rank 0 and the last among them); per rank the median of
//     --reps plans, then the median and the maximum over those ranks. --nd-only: (c) alone.
#include "nd_plan.hpp"
#include "nd_planner.hpp"
#include "planner.hpp"
#include "schedule_cyclic.hpp"

#include <sys/resource.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <new>
#include <numeric>
#include <optional>
#include <string>
#include <tuple>
#include <vector>

namespace {

// --- allocation counting -------------------------------------------------------------------

std::size_t bytes_held = 0;
std::size_t bytes_peak = 0;
constexpr std::size_t kHeader = alignof(std::max_align_t);

void *counted_alloc(std::size_t n) {
  void *raw = std::malloc(n + kHeader);
  if (raw == nullptr) {
    throw std::bad_alloc();
  }
  *static_cast<std::size_t *>(raw) = n;
  bytes_held += n;
  bytes_peak = std::max(bytes_peak, bytes_held);
  return static_cast<char *>(raw) + kHeader;
}

void counted_free(void *p) noexcept {
  if (p == nullptr) {
    return;
  }
  char *raw = static_cast<char *>(p) - kHeader;
  bytes_held -= *reinterpret_cast<std::size_t *>(raw);
  std::free(raw);
}

} // namespace

void *operator new(std::size_t n) {
  return counted_alloc(n);
}
void *operator new[](std::size_t n) {
  return counted_alloc(n);
}
void operator delete(void *p) noexcept {
  counted_free(p);
}
void operator delete[](void *p) noexcept {
  counted_free(p);
}
void operator delete(void *p, std::size_t) noexcept {
  counted_free(p);
}
void operator delete[](void *p, std::size_t) noexcept {
  counted_free(p);
}

namespace {

using redist::Index;

long max_rss_kib() {
  rusage usage{};
  getrusage(RUSAGE_SELF, &usage);
  return usage.ru_maxrss;
}

struct Measure {
  double median_ms = 0;
  std::size_t peak_bytes = 0;
  long rss_growth_kib = 0;
};

// Runs f (which returns the object whose construction is measured) `reps` times.
template <class F> Measure measure(int reps, F &&f) {
  Measure out;
  std::vector<double> ms;
  const long rss_before = max_rss_kib();
  for (int i = 0; i < reps; ++i) {
    const std::size_t held_before = bytes_held;
    bytes_peak = bytes_held;
    const auto start = std::chrono::steady_clock::now();
    {
      [[maybe_unused]] const auto result = f();
      ms.push_back(
          std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start)
              .count());
      out.peak_bytes = std::max(out.peak_bytes, bytes_peak - held_before);
    }
    if (ms.back() > 1000.0) {
      break;
    }
  }
  std::sort(ms.begin(), ms.end());
  out.median_ms = ms[ms.size() / 2];
  out.rss_growth_kib = max_rss_kib() - rss_before;
  return out;
}

struct Blocks {
  Index r;
  Index s;
};

struct Shape {
  int rows; // processes per grid column
  int cols; // processes per grid row
};

redist::Grid identity_grid(const Shape &g) {
  redist::Grid grid;
  grid.nprow = g.rows;
  grid.npcol = g.cols;
  grid.ranks.resize(static_cast<std::size_t>(g.rows) * static_cast<std::size_t>(g.cols));
  std::iota(grid.ranks.begin(), grid.ranks.end(), 0);
  return grid;
}

// Extent of one dimension with `procs` processes on both sides: whole periods or partial.
Index extent_of(int procs, const Blocks &b, bool whole) {
  const Index r = procs == 1 ? 1 : b.r;
  const Index s = procs == 1 ? 1 : b.s;
  if (whole) {
    return std::lcm(procs * r, procs * s);
  }
  return 5 * std::max(procs * r, procs * s) + 17;
}

redist::Transfer make_transfer(const Shape &g, const Blocks &b, bool whole) {
  redist::Transfer t;
  t.m = g.rows == 1 ? 64 : extent_of(g.rows, b, whole);
  t.n = g.cols == 1 ? 64 : extent_of(g.cols, b, whole);
  t.src.rows = {t.m, b.r, g.rows, 0};
  t.src.cols = {t.n, b.r, g.cols, 0};
  t.dst.rows = {t.m, b.s, g.rows, 0};
  t.dst.cols = {t.n, b.s, g.cols, 0};
  t.src.grid = identity_grid(g);
  t.dst.grid = identity_grid(g);
  return t;
}

std::string kib(std::size_t bytes) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.0f", static_cast<double>(bytes) / 1024.0);
  return buf;
}

std::string ms_text(double ms) {
  char buf[32];
  std::snprintf(buf, sizeof buf, ms < 10 ? "%.3f" : "%.1f", ms);
  return buf;
}

struct Options {
  int reps = 5;
  int max_procs = 65536;
  int matching_max = 1024;
  int nd_ranks = 64;
  bool nd_only = false;
};

void usage() {
  std::puts("usage: scale_bench [--reps R] [--max-procs N] [--matching-max N] [--nd-ranks K]\n"
            "                   [--nd-only]\n"
            "  --reps R          runs per measurement, median reported (default 5)\n"
            "  --max-procs N     largest number of processes per grid (default 65536)\n"
            "  --matching-max N  run stepwise matchings (no closed form) only up to N processes\n"
            "                    per dimension (default 1024)\n"
            "  --nd-ranks K      ranks sampled for the N-d plans at 4,096 ranks (default 64)\n"
            "  --nd-only         only the N-d plans (c)");
}

bool parse(int argc, char **argv, Options &o) {
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    if (arg == "--help" || arg == "-h") {
      usage();
      std::exit(0);
    }
    if (arg == "--nd-only") {
      o.nd_only = true;
      continue;
    }
    if (i + 1 >= argc) {
      std::fprintf(stderr, "scale_bench: option %s needs a value\n", arg.c_str());
      return false;
    }
    char *end = nullptr;
    const long value = std::strtol(argv[++i], &end, 10);
    if (*end != '\0' || value < 1 || value > (1L << 30)) {
      std::fprintf(stderr, "scale_bench: option %s: '%s' is not a positive integer\n", arg.c_str(),
                   argv[i]);
      return false;
    }
    if (arg == "--reps") {
      o.reps = static_cast<int>(value);
    } else if (arg == "--max-procs") {
      o.max_procs = static_cast<int>(value);
    } else if (arg == "--matching-max") {
      o.matching_max = static_cast<int>(value);
    } else if (arg == "--nd-ranks") {
      o.nd_ranks = static_cast<int>(value);
    } else {
      std::fprintf(stderr, "scale_bench: unknown option %s\n", arg.c_str());
      usage();
      return false;
    }
  }
  return true;
}

// An N-d layout of an n^3 array, C order: per dimension (distribution, darg, processes).
redist::NdLayout nd_layout(Index n,
                           const std::vector<std::tuple<redist::Distribution, Index, int>> &dims) {
  redist::NdLayout l;
  for (const auto &[kind, darg, procs] : dims) {
    redist::NdDimension d;
    d.kind = kind;
    d.extent = n;
    d.darg = darg;
    d.nprocs = procs;
    l.dims.push_back(d);
  }
  return l;
}

void nd_plans(const Options &opt) {
  using redist::Distribution;
  constexpr int kRanks = 4096;
  constexpr Index kN = 4096; // extents do not change the planning (one period per dimension)
  const auto block = [](int p) {
    return std::tuple{Distribution::block, redist::kDefaultDistArg, p};
  };
  const auto none = [] { return std::tuple{Distribution::none, redist::kDefaultDistArg, 1}; };
  const auto cyclic = [](Index k, int p) { return std::tuple{Distribution::cyclic, k, p}; };
  struct NdCase {
    const char *name;
    redist::NdTransfer t;
  };
  const std::vector<NdCase> cases = {
      {"(B,B,*) 64x64x1 -> (*,B,B) 1x64x64",
       {nd_layout(kN, {block(64), block(64), none()}),
        nd_layout(kN, {none(), block(64), block(64)}),
        {}}},
      {"(*,B,B) 1x64x64 -> (B,*,B) 64x1x64",
       {nd_layout(kN, {none(), block(64), block(64)}),
        nd_layout(kN, {block(64), none(), block(64)}),
        {}}},
      {"(B,B,B) -> C(1,1,1) 16x16x16 (all peers)",
       {nd_layout(kN, {block(16), block(16), block(16)}),
        nd_layout(kN, {cyclic(1, 16), cyclic(1, 16), cyclic(1, 16)}),
        {}}},
      {"C(4,8,1) -> C(16,1,2) 16x16x16",
       {nd_layout(kN, {cyclic(4, 16), cyclic(8, 16), cyclic(1, 16)}),
        nd_layout(kN, {cyclic(16, 16), cyclic(1, 16), cyclic(2, 16)}),
        {}}},
  };
  std::printf("## (c) one rank's N-d plan at %d ranks: make_nd_rank_plan, %d ranks sampled\n\n",
              kRanks, opt.nd_ranks);
  std::puts("| case | n^3 | median ms | max ms (rank) | with the auto schedule choice: median / "
            "max ms (chosen) | peers (send / receive) of the slowest | plan KiB of the slowest |");
  std::puts("|---|---|---|---|---|---|---|");
  for (const NdCase &c : cases) {
    const std::string why = redist::check_nd_transfer(c.t, kRanks);
    if (!why.empty()) {
      std::fprintf(stderr, "scale_bench: %s: %s\n", c.name, why.c_str());
      std::exit(1);
    }
    // The inputs every rank gets from one reduction (exact: nd_all_at_once_estimate).
    const redist::ScheduleInputs inputs =
        redist::nd_all_at_once_estimate(c.t, redist::ScheduleOptions{}.model, sizeof(double));
    std::vector<double> per_rank;
    std::vector<double> with_choice;
    double slowest = -1;
    int slowest_rank = 0;
    std::string chosen;
    const int samples = std::min(opt.nd_ranks, kRanks);
    for (int i = 0; i < samples; ++i) {
      const int rank =
          samples == 1 ? 0 : static_cast<int>(static_cast<long>(i) * (kRanks - 1) / (samples - 1));
      const Measure m =
          measure(opt.reps, [&] { return redist::make_nd_rank_plan(c.t, rank, kRanks); });
      per_rank.push_back(m.median_ms);
      if (m.median_ms > slowest) {
        slowest = m.median_ms;
        slowest_rank = rank;
      }
      with_choice.push_back(
          measure(opt.reps, [&] {
            const redist::NdRankPlan plan = redist::make_nd_rank_plan(c.t, rank, kRanks);
            redist::ScheduleChoice choice;
            const std::string refused = redist::choose_nd_schedule(
                c.t, plan, redist::ScheduleOptions{}, inputs, sizeof(double), choice);
            chosen =
                refused.empty() ? std::string(redist::strategy_name(choice.strategy)) : refused;
            return plan.sends.size() + choice.steps.size();
          }).median_ms);
    }
    std::vector<double> sorted = per_rank;
    std::sort(sorted.begin(), sorted.end());
    std::sort(with_choice.begin(), with_choice.end());
    const redist::NdRankPlan plan = redist::make_nd_rank_plan(c.t, slowest_rank, kRanks);
    std::printf("| %s | %lld^3 | %s | %s (%d) | %s / %s (%s) | %zu / %zu | %s |\n", c.name,
                static_cast<long long>(kN), ms_text(sorted[sorted.size() / 2]).c_str(),
                ms_text(slowest).c_str(), slowest_rank,
                ms_text(with_choice[with_choice.size() / 2]).c_str(),
                ms_text(with_choice.back()).c_str(), chosen.c_str(), plan.sends.size(),
                plan.recvs.size(), kib(plan.memory_bytes()).c_str());
    std::fflush(stdout);
  }
}

} // namespace

int main(int argc, char **argv) {
  Options opt;
  if (!parse(argc, argv, opt)) {
    return 2;
  }
  if (opt.nd_only) {
    nd_plans(opt);
    return 0;
  }
  std::vector<Shape> shapes;
  for (int p = 1024; p <= 65536; p *= 4) {
    shapes.push_back({p, 1});
  }
  for (int p = 16; p <= 256; p *= 2) {
    shapes.push_back({p, p});
  }
  std::erase_if(shapes, [&](const Shape &g) { return g.rows * g.cols > opt.max_procs; });
  const std::vector<Blocks> block_pairs = {{64, 100}, {1, 64}, {32, 48}, {64, 32}};
  const auto for_each_case = [&](auto &&f) {
    for (const Shape &g : shapes) {
      for (const Blocks &b : block_pairs) {
        for (const bool whole : {true, false}) {
          f(g, b, whole, make_transfer(g, b, whole));
        }
      }
    }
  };
  const redist::CostModel model;
  constexpr std::size_t kElementBytes = 8;

  std::puts("## (a) one rank: make_rank_plan and choose_schedule(stepwise)\n");
  std::puts("| grid | r -> s | window | m x n | plan ms | plan peak KiB | plan rss+ KiB | "
            "choose ms | choose peak KiB | choose rss+ KiB | rank steps | rows x columns |");
  std::puts("|---|---|---|---|---|---|---|---|---|---|---|---|");
  for_each_case([&](const Shape &g, const Blocks &b, bool whole, const redist::Transfer &t) {
    const int comm = g.rows * g.cols;
    const int rank = comm / 3;
    const Measure plan_m = measure(opt.reps, [&] { return redist::make_rank_plan(t, rank, comm); });
    const redist::RankPlan plan = redist::make_rank_plan(t, rank, comm);
    redist::ScheduleOptions so;
    so.strategy = redist::Strategy::stepwise;
    const bool rows_closed = redist::best_closed_form(t.rows(), model, kElementBytes).has_value();
    const bool cols_closed = redist::best_closed_form(t.cols(), model, kElementBytes).has_value();
    const bool matchings = !rows_closed || !cols_closed;
    std::string choose_ms = "skipped";
    std::string choose_peak = "-";
    std::string choose_rss = "-";
    std::string steps = "-";
    std::string detail = "matchings beyond --matching-max";
    if (!matchings || std::max(g.rows, g.cols) <= opt.matching_max) {
      redist::ScheduleChoice last;
      const Measure m = measure(opt.reps, [&] {
        redist::ScheduleChoice choice;
        const std::string why = redist::choose_schedule(t, plan, so, {}, kElementBytes, choice);
        if (!why.empty()) {
          std::fprintf(stderr, "choose_schedule: %s\n", why.c_str());
          std::exit(1);
        }
        last = choice;
        return 0;
      });
      choose_ms = ms_text(m.median_ms);
      choose_peak = kib(m.peak_bytes);
      choose_rss = std::to_string(m.rss_growth_kib);
      steps = std::to_string(last.steps.size());
      detail = last.detail;
    }
    std::printf("| %dx%d | %lld -> %lld | %s | %lld x %lld | %s | %s | %ld | %s | %s | %s | %s | "
                "%s |\n",
                g.rows, g.cols, static_cast<long long>(b.r), static_cast<long long>(b.s),
                whole ? "period" : "partial", static_cast<long long>(t.m),
                static_cast<long long>(t.n), ms_text(plan_m.median_ms).c_str(),
                kib(plan_m.peak_bytes).c_str(), plan_m.rss_growth_kib, choose_ms.c_str(),
                choose_peak.c_str(), choose_rss.c_str(), steps.c_str(), detail.c_str());
    std::fflush(stdout);
  });

  std::puts("\n## (b) whole machine: closed-form statistics of the stepwise product\n");
  std::puts("| grid | r -> s | window | forms (rows, columns) | N | T (elements) | largest | "
            "predicted s | ms | peak KiB |");
  std::puts("|---|---|---|---|---|---|---|---|---|---|");
  for_each_case([&](const Shape &g, const Blocks &b, bool whole, const redist::Transfer &t) {
    const auto rows = redist::best_closed_form(t.rows(), model, kElementBytes);
    const auto cols = redist::best_closed_form(t.cols(), model, kElementBytes);
    std::optional<redist::ScheduleStats> stats;
    const Measure m = measure(opt.reps, [&] {
      stats = redist::product_closed_form_stats(t, model, kElementBytes);
      return 0;
    });
    const auto prefix = [&] {
      std::printf("| %dx%d | %lld -> %lld | %s | ", g.rows, g.cols, static_cast<long long>(b.r),
                  static_cast<long long>(b.s), whole ? "period" : "partial");
    };
    prefix();
    if (!stats) {
      const redist::CyclicCounts c = redist::cyclic_counts(g.rows == 1 ? t.cols() : t.rows());
      std::printf("none (stepwise matchings; N_opt = %lld per dimension) | - | - | - | - | %s | "
                  "%s |\n",
                  static_cast<long long>(c.steps_optimal), ms_text(m.median_ms).c_str(),
                  kib(m.peak_bytes).c_str());
      return;
    }
    std::printf("%s, %s | %lld | %lld | %lld | %.4g | %s | %s |\n",
                redist::closed_form_name(rows->kind()), redist::closed_form_name(cols->kind()),
                static_cast<long long>(stats->steps), static_cast<long long>(stats->sum_step_max),
                static_cast<long long>(stats->largest_piece), stats->seconds,
                ms_text(m.median_ms).c_str(), kib(m.peak_bytes).c_str());
    std::fflush(stdout);
  });
  std::puts("");
  nd_plans(opt);
  return 0;
}
