// schedule_bench: every schedule measured on the same run, next to what the two-level cost model
// (calibrated on this run with redist_calibrate_nodes) and the backbone model (Jeannot & Wagner
// 2004, research/model/backbone.hpp) predict (docs/studies/cluster.md). Meant for the virtual
// cluster (bench/cluster/measure_schedules.sh) but runs anywhere.
//
//   mpirun -np P schedule_bench [--size N] [--reps R] [--label TEXT]
//
// For each case: plans for all-at-once, caterpillar, stepwise, GGP and OGGP with k = 1, 2, 4,
// auto with k = 2, and multiphase (two phases where an intermediate layout applies: "chosen"
// says multiphase); then R rounds, each executing every plan once (in turn, so that the
// machine's load falls on all of them alike); a time is the slowest rank's, the table gives the
// median. B is checked element by element against the source's formula after every plan's
// first execution. Prints CSV on rank 0:
//   label,case,schedule,k,runs,steps,median_s,min_s,two_level_s,backbone_s,bytes_across
// two_level_s: plan_info.predicted_seconds under the calibrated levels. backbone_s: the backbone
// model's cost in seconds (a stream at the calibrated inter-node rate; setup = the inter-node
// alpha), for all-at-once its fluid model of TCP sharing, for GGP/OGGP the schedule's cost;
// empty where the model does not apply (other schedules, or several ranks on a node: the model
// has one port per node).

#include "backbone.hpp"
#include "planner.hpp"

#include <redist.h>

#include <mpi.h>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

namespace {

struct Grid2 {
  int nprow, npcol;
  std::int64_t mb, nb;
};

struct Case {
  std::string name;
  Grid2 a, b;
};

struct Config {
  const char *name;
  int schedule;
  int k;
};

std::int64_t numroc(std::int64_t n, std::int64_t nb, int p, int nprocs) {
  const std::int64_t blocks = n / nb;
  std::int64_t local = (blocks / nprocs) * nb;
  const std::int64_t extra = blocks % nprocs;
  if (p < extra)
    local += nb;
  else if (p == extra)
    local += n % nb;
  return local;
}

double value(std::int64_t i, std::int64_t j, std::int64_t n) {
  return static_cast<double>(i * n + j);
}

struct Local {
  int pr = -1, pc = -1;
  std::int64_t rows = 0, cols = 0;
};

Local local_of(const Grid2 &g, std::int64_t n, int rank) {
  Local l;
  if (rank >= g.nprow * g.npcol) return l;
  l.pr = rank % g.nprow; // ranks[pr + pc * nprow] = pr + pc * nprow
  l.pc = rank / g.nprow;
  l.rows = numroc(n, g.mb, l.pr, g.nprow);
  l.cols = numroc(n, g.nb, l.pc, g.npcol);
  return l;
}

std::int64_t global_index(std::int64_t local, std::int64_t nb, int p, int nprocs) {
  return (local / nb) * nb * nprocs + p * nb + local % nb;
}

redist::Layout internal_layout(const Grid2 &g, std::int64_t n) {
  redist::Layout l;
  l.rows = {n, g.mb, g.nprow, 0};
  l.cols = {n, g.nb, g.npcol, 0};
  l.grid.nprow = g.nprow;
  l.grid.npcol = g.npcol;
  for (int r = 0; r < g.nprow * g.npcol; ++r)
    l.grid.ranks.push_back(r);
  return l;
}

} // namespace

int main(int argc, char **argv) {
  MPI_Init(&argc, &argv);
  int me = 0;
  int np = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &me);
  MPI_Comm_size(MPI_COMM_WORLD, &np);
  std::int64_t n = 1000;
  int reps = 5;
  std::string label = "run";
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    if (a == "--size" && i + 1 < argc)
      n = std::atoll(argv[++i]);
    else if (a == "--reps" && i + 1 < argc)
      reps = std::atoi(argv[++i]);
    else if (a == "--label" && i + 1 < argc)
      label = argv[++i];
    else {
      if (me == 0)
        std::fprintf(stderr, "usage: schedule_bench [--size N] [--reps R] [--label T]\n");
      MPI_Finalize();
      return 2;
    }
  }
  // A 2-D grid of the ranks: 1 x 2, 2 x 2, 2 x 4, ...
  int rows2 = 1;
  while (rows2 * 2 * rows2 * 2 <= np)
    rows2 *= 2;
  if (np % rows2 != 0) rows2 = 1;
  const std::vector<Case> cases = {
      {"1xP->Px1 64", {1, np, 64, 64}, {np, 1, 64, 64}},
      {"Px1 64->100", {np, 1, 64, 64}, {np, 1, 100, 100}},
      {"2D 1->7", {rows2, np / rows2, 1, 1}, {rows2, np / rows2, 7, 7}},
  };
  const std::vector<Config> configs = {
      {"all-at-once", REDIST_SCHEDULE_ALL_AT_ONCE, 0},
      {"caterpillar", REDIST_SCHEDULE_CATERPILLAR, 0},
      {"stepwise", REDIST_SCHEDULE_STEPWISE, 0},
      {"ggp", REDIST_SCHEDULE_GGP, 1},
      {"ggp", REDIST_SCHEDULE_GGP, 2},
      {"ggp", REDIST_SCHEDULE_GGP, 4},
      {"oggp", REDIST_SCHEDULE_OGGP, 1},
      {"oggp", REDIST_SCHEDULE_OGGP, 2},
      {"oggp", REDIST_SCHEDULE_OGGP, 4},
      {"auto", REDIST_SCHEDULE_AUTO, 2},
      {"multiphase", REDIST_SCHEDULE_MULTIPHASE, 0},
  };
  redist_calibration levels{};
  if (redist_calibrate_nodes(MPI_COMM_WORLD, &levels) != REDIST_SUCCESS) {
    std::fprintf(stderr, "schedule_bench: %s\n", redist_last_error());
    MPI_Abort(MPI_COMM_WORLD, 1);
  }
  // The node of every rank, for the model's side: the lowest rank sharing its memory.
  MPI_Comm shared = MPI_COMM_NULL;
  MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, me, MPI_INFO_NULL, &shared);
  int lowest = me;
  MPI_Allreduce(MPI_IN_PLACE, &lowest, 1, MPI_INT, MPI_MIN, shared);
  MPI_Comm_free(&shared);
  std::vector<int> node_of(static_cast<std::size_t>(np));
  MPI_Allgather(&lowest, 1, MPI_INT, node_of.data(), 1, MPI_INT, MPI_COMM_WORLD);
  int nodes = 0;
  for (int r = 0; r < np; ++r)
    nodes += node_of[static_cast<std::size_t>(r)] == r ? 1 : 0;
  if (me == 0) {
    std::printf("# %s: %d ranks on %d nodes, %lld x %lld doubles, %d rounds; calibrated: intra "
                "%.3g s + %.3g s/B, inter %.3g s + %.3g s/B (%s)\n",
                label.c_str(), np, nodes, static_cast<long long>(n), static_cast<long long>(n),
                reps, levels.intra_alpha, levels.intra_beta, levels.inter_alpha, levels.inter_beta,
                levels.has_inter ? "measured" : "absent");
    std::printf("label,case,schedule,k,chosen,steps,median_s,min_s,two_level_s,backbone_s,"
                "bytes_across\n");
  }
  std::vector<int> ranks(static_cast<std::size_t>(np));
  for (int r = 0; r < np; ++r)
    ranks[static_cast<std::size_t>(r)] = r;
  int failures = 0;
  for (const Case &c : cases) {
    const Local la = local_of(c.a, n, me);
    const Local lb = local_of(c.b, n, me);
    std::vector<double> a(static_cast<std::size_t>(std::max<std::int64_t>(1, la.rows * la.cols)));
    for (std::int64_t lj = 0; lj < la.cols; ++lj)
      for (std::int64_t li = 0; li < la.rows; ++li)
        a[static_cast<std::size_t>(lj * la.rows + li)] =
            value(global_index(li, c.a.mb, la.pr, c.a.nprow),
                  global_index(lj, c.a.nb, la.pc, c.a.npcol), n);
    std::vector<double> b(static_cast<std::size_t>(std::max<std::int64_t>(1, lb.rows * lb.cols)));
    const redist_layout layout_a{
        n, n, c.a.mb,       c.a.nb, c.a.nprow, c.a.npcol,
        0, 0, ranks.data(), 0,      0,         std::max<std::int64_t>(1, la.rows)};
    const redist_layout layout_b{
        n, n, c.b.mb,       c.b.nb, c.b.nprow, c.b.npcol,
        0, 0, ranks.data(), 0,      0,         std::max<std::int64_t>(1, lb.rows)};
    std::vector<redist_plan> plans(configs.size(), nullptr);
    for (std::size_t i = 0; i < configs.size(); ++i) {
      redist_options o;
      redist_options_init(&o);
      o.schedule = configs[i].schedule;
      o.max_concurrent = configs[i].k;
      if (redist_plan_create_calibrated(MPI_COMM_WORLD, n, n, REDIST_DOUBLE, &layout_a, &layout_b,
                                        REDIST_REGION_FULL, 0, &o, &levels,
                                        &plans[i]) != REDIST_SUCCESS) {
        if (me == 0)
          std::fprintf(stderr, "%s %s: %s\n", c.name.c_str(), configs[i].name, redist_last_error());
        plans[i] = nullptr;
      }
    }
    std::vector<std::vector<double>> times(configs.size());
    for (int round = -1; round < reps; ++round) { // round -1: warm-up and check
      for (std::size_t i = 0; i < configs.size(); ++i) {
        if (plans[i] == nullptr) continue;
        std::fill(b.begin(), b.end(), -1.0);
        MPI_Barrier(MPI_COMM_WORLD);
        const double start = MPI_Wtime();
        const int status = redist_plan_execute(plans[i], a.data(), b.data());
        double elapsed = MPI_Wtime() - start;
        MPI_Allreduce(MPI_IN_PLACE, &elapsed, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
        if (status != REDIST_SUCCESS) {
          std::fprintf(stderr, "rank %d: %s\n", me, redist_last_error());
          MPI_Abort(MPI_COMM_WORLD, 1);
        }
        if (round < 0) {
          long long wrong = 0;
          for (std::int64_t lj = 0; lj < lb.cols; ++lj)
            for (std::int64_t li = 0; li < lb.rows; ++li)
              wrong += b[static_cast<std::size_t>(lj * lb.rows + li)] !=
                       value(global_index(li, c.b.mb, lb.pr, c.b.nprow),
                             global_index(lj, c.b.nb, lb.pc, c.b.npcol), n);
          MPI_Allreduce(MPI_IN_PLACE, &wrong, 1, MPI_LONG_LONG, MPI_SUM, MPI_COMM_WORLD);
          if (wrong != 0 && me == 0)
            std::printf("# MISMATCH %s %s: %lld elements\n", c.name.c_str(), configs[i].name,
                        wrong);
          failures += wrong != 0;
        } else {
          times[i].push_back(elapsed);
        }
      }
    }
    // The backbone model (one port per node: only with one rank per node).
    redist::Transfer t;
    t.src = internal_layout(c.a, n);
    t.dst = internal_layout(c.b, n);
    t.m = t.n = n;
    redist::VolumeGraph graph = redist::volume_graph(t);
    std::erase_if(graph.messages, [&](const redist::Message &msg) {
      return t.src.grid.ranks[static_cast<std::size_t>(msg.src)] ==
             t.dst.grid.ranks[static_cast<std::size_t>(msg.dst)];
    });
    const double stream = levels.inter_beta * 8.0; // seconds per element on one link
    const bool one_per_node = nodes == np && levels.has_inter;
    const double setup = one_per_node ? levels.inter_alpha / stream : 0.0;
    for (std::size_t i = 0; i < configs.size(); ++i) {
      if (plans[i] == nullptr) continue;
      redist_plan_info info{};
      redist_plan_get_info(plans[i], &info);
      redist_plan_node_info node_info{};
      redist_plan_get_node_info(plans[i], &node_info);
      long long across = node_info.bytes_sent_across;
      MPI_Allreduce(MPI_IN_PLACE, &across, 1, MPI_LONG_LONG, MPI_SUM, MPI_COMM_WORLD);
      std::string backbone;
      if (one_per_node && me == 0) {
        double cost = -1.0;
        if (info.schedule == REDIST_SCHEDULE_ALL_AT_ONCE) {
          cost = redist::backbone_all_at_once_cost(graph, 0, setup);
        } else if (info.schedule == REDIST_SCHEDULE_GGP || info.schedule == REDIST_SCHEDULE_OGGP) {
          redist::ScheduleOptions so;
          so.strategy = static_cast<redist::Strategy>(info.schedule);
          so.max_concurrent = configs[i].k;
          so.model = {levels.intra_alpha, levels.intra_beta, 0.0};
          so.inter = {levels.inter_alpha, levels.inter_beta, 0.0};
          so.node_of_rank = node_of;
          redist::Schedule s;
          std::string detail;
          if (redist::global_schedule(t, so, 8, s, detail).empty()) {
            try {
              cost = redist::backbone_schedule_cost(graph, s, configs[i].k, setup);
            } catch (const std::exception &) {
              cost = -1.0;
            }
          }
        }
        if (cost >= 0.0) {
          char text[32];
          std::snprintf(text, sizeof text, "%.6g", cost * stream);
          backbone = text;
        }
      }
      if (me == 0) {
        std::vector<double> &ts = times[i];
        std::sort(ts.begin(), ts.end());
        const double median = ts.empty() ? 0.0 : ts[ts.size() / 2];
        std::printf("%s,%s,%s,%d,%s,%lld,%.6g,%.6g,%.6g,%s,%lld\n", label.c_str(), c.name.c_str(),
                    configs[i].name, configs[i].k, redist_schedule_name(info.schedule),
                    static_cast<long long>(info.steps), median, ts.empty() ? 0.0 : ts.front(),
                    info.predicted_seconds, backbone.c_str(), across);
      }
      redist_plan_destroy(&plans[i]);
    }
  }
  std::fflush(stdout);
  MPI_Finalize();
  return failures == 0 ? 0 : 1;
}
