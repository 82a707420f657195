// The ring API of redist_ring.h without MPI: schedules planned from every process's load and
// target (redist_ring_schedule_*) and targets from weights; and the argument errors and plan
// figures the entries on a communicator (ring_plan.cpp) share. Planning is in ring.cpp. Every
// extern "C" body runs inside c_barrier().

#include "ring_internal.hpp"

#include <algorithm>
#include <memory>
#include <string>
#include <vector>

/// A schedule planned without MPI.
struct redist_ring_schedule_s {
  redist::ring::Problem problem;
  redist::ring::Plan plan;
  double direct_time = 0.0;
};

namespace redist {

[[noreturn]] void throw_value(const std::string &call, const std::string &arg,
                              const std::string &value, const std::string &reason) {
  throw Error(REDIST_ERR_ARGUMENT, call + ": argument " + arg + " = " + value + ": " + reason);
}

[[noreturn]] void rethrow_input(const std::string &call, const ring::InputError &e, bool per_rank) {
  std::string arg = e.argument();
  if (per_rank) {
    const auto open = arg.find('[');
    const std::string base = arg.substr(0, open);
    std::string name = base == "loads"     ? "load"
                       : base == "targets" ? "target"
                       : base == "c_next"  ? "cost_next"
                       : base == "c_prev"  ? "cost_prev"
                                           : base;
    if (arg == "c_next, c_prev") name = "cost_next, cost_prev";
    if (open != std::string::npos) {
      name += " (rank " + arg.substr(open + 1, arg.size() - open - 2) + ")";
    } else if (base == "targets") {
      name += " (sum over the ranks)";
    }
    arg = name;
  }
  throw_value(call, arg, e.value(), e.what());
}

namespace {

int algorithm_code(ring::Algorithm a) {
  switch (a) {
  case ring::Algorithm::none:
    return REDIST_RING_NONE;
  case ring::Algorithm::homogeneous_uni:
    return REDIST_RING_ALGORITHM1;
  case ring::Algorithm::heterogeneous_uni:
    return REDIST_RING_ALGORITHM2;
  case ring::Algorithm::homogeneous_bi:
    return REDIST_RING_ALGORITHM3;
  case ring::Algorithm::light_bi:
    return REDIST_RING_SYSTEM6;
  case ring::Algorithm::heuristic_bi:
    return REDIST_RING_HEURISTIC;
  }
  return REDIST_RING_NONE;
}

} // namespace

void fill_info(const ring::Plan &plan, double direct, redist_ring_info &info) {
  info.predicted_time = plan.time;
  info.lower_bound = plan.lower_bound;
  info.system6 = plan.direction == ring::Direction::bidirectional ? plan.system6_integer : 0.0;
  info.direct_time = direct;
  info.steps = plan.steps;
  info.algorithm = algorithm_code(plan.algorithm);
  info.light = plan.light ? 1 : 0;
  info.algorithm3_repaired = plan.algorithm3_repaired ? 1 : 0;
}

} // namespace redist

using namespace redist;

// --- Pure planning
// --------------------------------------------------------------------------------

extern "C" int redist_ring_schedule_create(int n, int direction, const int64_t *loads,
                                           const int64_t *targets, const double *c_next,
                                           const double *c_prev, redist_ring_schedule *schedule) {
  static const char *call = "redist_ring_schedule_create";
  return c_barrier(call, [&] {
    if (schedule == nullptr) throw_argument(call, "schedule", 0, "NULL output pointer");
    *schedule = nullptr;
    if (n < 1) throw_argument(call, "n", n, "the ring needs at least one process");
    if (direction != REDIST_RING_UNIDIRECTIONAL && direction != REDIST_RING_BIDIRECTIONAL)
      throw_argument(call, "direction", direction,
                     "must be REDIST_RING_UNIDIRECTIONAL (0) or REDIST_RING_BIDIRECTIONAL (1)");
    if (loads == nullptr) throw_argument(call, "loads", 0, "NULL array");
    if (targets == nullptr) throw_argument(call, "targets", 0, "NULL array");
    auto s = std::make_unique<redist_ring_schedule_s>();
    const auto un = static_cast<std::size_t>(n);
    ring::Problem &pb = s->problem;
    pb.direction = direction == REDIST_RING_BIDIRECTIONAL ? ring::Direction::bidirectional
                                                          : ring::Direction::unidirectional;
    pb.loads.assign(loads, loads + un);
    pb.targets.assign(targets, targets + un);
    pb.c_next = c_next ? std::vector<double>(c_next, c_next + un) : std::vector<double>(un, 1.0);
    if (pb.direction == ring::Direction::bidirectional)
      pb.c_prev = c_prev ? std::vector<double>(c_prev, c_prev + un) : std::vector<double>(un, 1.0);
    try {
      s->plan = ring::plan(pb);
      s->direct_time = ring::direct_time(pb, ring::direct_pieces(pb.loads, s->plan.flow));
    } catch (const ring::InputError &e) {
      rethrow_input(call, e, false);
    }
    *schedule = s.release();
  });
}

extern "C" int redist_ring_schedule_get_info(redist_ring_schedule schedule,
                                             redist_ring_info *info) {
  static const char *call = "redist_ring_schedule_get_info";
  return c_barrier(call, [&] {
    if (schedule == nullptr) throw_argument(call, "schedule", 0, "NULL schedule");
    if (info == nullptr) throw_argument(call, "info", 0, "NULL output pointer");
    *info = redist_ring_info{};
    fill_info(schedule->plan, schedule->direct_time, *info);
    info->transport = REDIST_RING_NEIGHBOUR;
    for (const ring::Move &m : schedule->plan.moves)
      info->items_sent += m.items;
    info->items_received = info->items_sent;
  });
}

extern "C" int redist_ring_schedule_get_flows(redist_ring_schedule schedule, int64_t *flow) {
  static const char *call = "redist_ring_schedule_get_flows";
  return c_barrier(call, [&] {
    if (schedule == nullptr) throw_argument(call, "schedule", 0, "NULL schedule");
    if (flow == nullptr) throw_argument(call, "flow", 0, "NULL array");
    std::copy(schedule->plan.flow.begin(), schedule->plan.flow.end(), flow);
  });
}

extern "C" int redist_ring_schedule_get_moves(redist_ring_schedule schedule, int64_t *count,
                                              int *from, int *to, int64_t *items, double *start,
                                              double *finish) {
  static const char *call = "redist_ring_schedule_get_moves";
  return c_barrier(call, [&] {
    if (schedule == nullptr) throw_argument(call, "schedule", 0, "NULL schedule");
    if (count == nullptr) throw_argument(call, "count", 0, "NULL pointer");
    const std::vector<ring::Move> &moves = schedule->plan.moves;
    const auto have = static_cast<int64_t>(moves.size());
    const bool want = from || to || items || start || finish;
    if (want) {
      if (!from || !to || !items || !start || !finish)
        throw_argument(call, "from/to/items/start/finish", 0, "all NULL (count only) or none");
      if (*count < have)
        throw_argument(call, "*count", *count,
                       "arrays too short for the " + std::to_string(have) + " moves");
      for (std::size_t i = 0; i < moves.size(); ++i) {
        from[i] = moves[i].from;
        to[i] = moves[i].to;
        items[i] = moves[i].items;
        start[i] = moves[i].start;
        finish[i] = moves[i].finish;
      }
    }
    *count = have;
  });
}

extern "C" int redist_ring_schedule_destroy(redist_ring_schedule *schedule) {
  return c_barrier("redist_ring_schedule_destroy", [&] {
    if (schedule == nullptr) return;
    delete *schedule;
    *schedule = nullptr;
  });
}

extern "C" int redist_ring_targets_from_weights(int n, int64_t total, const double *weights,
                                                int64_t *targets) {
  static const char *call = "redist_ring_targets_from_weights";
  return c_barrier(call, [&] {
    if (n < 1) throw_argument(call, "n", n, "at least one process");
    if (weights == nullptr) throw_argument(call, "weights", 0, "NULL array");
    if (targets == nullptr) throw_argument(call, "targets", 0, "NULL array");
    try {
      const std::vector<Index> t = ring::targets_from_weights(
          total, std::vector<double>(weights, weights + static_cast<std::size_t>(n)));
      std::copy(t.begin(), t.end(), targets);
    } catch (const ring::InputError &e) {
      rethrow_input(call, e, false);
    }
  });
}
