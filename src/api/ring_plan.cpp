// The ring API of redist_ring.h on a communicator: redist_ring_target_from_weight and the
// plans (redist_ring_plan_*): every process's arguments checked and agreed, the loads, targets
// and costs gathered, the same problem planned on every process; the exchange is ring_exec.cpp's.
// Planning is in ring.cpp (no MPI). Every extern "C" body runs inside c_barrier().

#include "collective.hpp"
#include "front_end.hpp"
#include "ring_internal.hpp"

#include <algorithm>
#include <climits>
#include <cmath>
#include <memory>
#include <new>
#include <numeric>
#include <optional>
#include <sstream>
#include <string>
#include <vector>

namespace redist {
namespace {

std::string show(double v) {
  std::ostringstream os;
  os << v;
  return os.str();
}

/// The items this process sends and receives in direct messages (the direct transport's).
void direct_traffic(const redist_ring_plan_s &p, Index &sent, Index &received) {
  sent = 0;
  received = 0;
  for (const ring::DirectPiece &pc : p.direct) {
    if (pc.from == pc.to) continue;
    (pc.from == p.rank ? sent : received) += pc.items;
  }
}

} // namespace
} // namespace redist

using namespace redist;

// --- MPI
// ------------------------------------------------------------------------------------------

extern "C" int redist_ring_target_from_weight(MPI_Comm comm, int64_t load, double weight,
                                              int64_t *target) {
  static const char *call = "redist_ring_target_from_weight";
  return c_barrier(call, [&] {
    // Not a structured binding: clang before 16 cannot capture those in the lambdas below.
    const CommPosition position = comm_position(call, comm);
    const int rank = position.rank;
    const int size = position.size;
    // No argument must agree: every field of the description stays 0.
    agree(comm, call, "", [&] {
      if (target == nullptr) throw_argument(call, "target", 0, "NULL output pointer");
      if (load < 1)
        throw_argument(call, "load", load,
                       "every process must hold at least one item (leave empty processes out of "
                       "the communicator)");
      if (!(weight > 0.0) || std::isinf(weight))
        throw_value(call, "weight", show(weight), "must be finite and > 0");
      return std::uint64_t{0};
    });
    std::vector<double> all(static_cast<std::size_t>(size));
    std::vector<long long> loads(static_cast<std::size_t>(size));
    const long long my_load = load;
    check_mpi(collective::gather(comm, std::span<const double>(&weight, 1), all), call,
              "MPI_Iallgather");
    check_mpi(collective::gather(comm, std::span<const long long>(&my_load, 1), loads), call,
              "MPI_Iallgather");
    const Index total = std::accumulate(loads.begin(), loads.end(), Index{0});
    try {
      *target = ring::targets_from_weights(total, all)[static_cast<std::size_t>(rank)];
    } catch (const ring::InputError &e) {
      rethrow_input(call, e, true);
    }
  });
}

namespace {

/// redist_ring_plan_create's local checks of its arguments (every but `plan`).
void check_ring_arguments(int direction, int transport, int64_t load, int64_t target,
                          double cost_next, double cost_prev, int64_t item_bytes,
                          int64_t chunk_items) {
  static const char *call = "redist_ring_plan_create";
  const bool bi = direction == REDIST_RING_BIDIRECTIONAL;
  if (direction != REDIST_RING_UNIDIRECTIONAL && !bi)
    throw_argument(call, "direction", direction,
                   "must be REDIST_RING_UNIDIRECTIONAL (0) or REDIST_RING_BIDIRECTIONAL (1)");
  if (transport != REDIST_RING_NEIGHBOUR && transport != REDIST_RING_DIRECT &&
      transport != REDIST_RING_AUTO)
    throw_argument(call, "transport", transport,
                   "must be REDIST_RING_NEIGHBOUR (0), REDIST_RING_DIRECT (1) or "
                   "REDIST_RING_AUTO (2)");
  if (load < 1)
    throw_argument(call, "load", load,
                   "every process must hold at least one item before the rebalance (the ring "
                   "algorithms assume L_k >= 1); leave empty processes out of the "
                   "communicator");
  if (target < 1)
    throw_argument(call, "target", target,
                   "every process must keep at least one item after the rebalance (the ring "
                   "algorithms assume L_k - delta_k >= 1); leave empty processes out of the "
                   "communicator");
  if (!(cost_next > 0.0))
    throw_value(call, "cost_next", show(cost_next), "must be > 0 (or +INFINITY)");
  if (bi && !(cost_prev > 0.0))
    throw_value(call, "cost_prev", show(cost_prev), "must be > 0 (or +INFINITY)");
  if (item_bytes < 1 || item_bytes > INT_MAX)
    throw_argument(call, "item_bytes", item_bytes, "must be in [1, INT_MAX]");
  if (chunk_items < 0) throw_argument(call, "chunk_items", chunk_items, "must be >= 0");
}

} // namespace
extern "C" int redist_ring_plan_create(MPI_Comm comm, int direction, int transport, int64_t load,
                                       int64_t target, double cost_next, double cost_prev,
                                       int64_t item_bytes, int64_t chunk_items,
                                       redist_ring_plan *plan) {
  static const char *call = "redist_ring_plan_create";
  return c_barrier(call, [&] {
    if (plan != nullptr) *plan = nullptr;
    // Not a structured binding: clang before 16 cannot capture those in the lambdas below.
    const CommPosition position = comm_position(call, comm);
    const int rank = position.rank;
    const int size = position.size;
    const bool bi = direction == REDIST_RING_BIDIRECTIONAL;
    agree(comm, call,
          "direction, transport, item_bytes or chunk_items (must be equal on every process)", [&] {
            if (plan == nullptr) throw_argument(call, "plan", 0, "NULL output pointer");
            check_ring_arguments(direction, transport, load, target, cost_next, cost_prev,
                                 item_bytes, chunk_items);
            Fingerprint f;
            f.add(direction).add(transport).add(item_bytes).add(chunk_items);
            return f.value();
          });
    const auto un = static_cast<std::size_t>(size);
    std::vector<long long> lt(2 * un);
    std::vector<double> costs(2 * un);
    const long long mine[2] = {load, target};
    const double my_costs[2] = {cost_next, bi ? cost_prev : 1.0};
    check_mpi(collective::gather(comm, std::span<const long long>(mine), lt), call,
              "MPI_Iallgather");
    check_mpi(collective::gather(comm, std::span<const double>(my_costs), costs), call,
              "MPI_Iallgather");
    ring::Problem pb;
    pb.direction = bi ? ring::Direction::bidirectional : ring::Direction::unidirectional;
    for (std::size_t k = 0; k < un; ++k) {
      pb.loads.push_back(lt[2 * k]);
      pb.targets.push_back(lt[2 * k + 1]);
      pb.c_next.push_back(costs[2 * k]);
      if (bi) pb.c_prev.push_back(costs[2 * k + 1]);
    }
    auto result = std::make_unique<redist_ring_plan_s>();
    result->rank = rank;
    result->size = size;
    result->item_bytes = item_bytes;
    const Index max_chunk = std::max<Index>(1, INT_MAX / item_bytes);
    const Index default_chunk = std::max<Index>(1, (Index{1} << 20) / item_bytes);
    result->chunk = std::min(chunk_items > 0 ? chunk_items : default_chunk, max_chunk);
    // Every process plans the same problem: an invalid one fails everywhere alike; running out
    // of memory is local, hence the agreement.
    agree(comm, call, "", [&] {
      try {
        const ring::Plan rp = ring::plan(pb);
        const double direct = ring::direct_time(pb, ring::direct_pieces(pb.loads, rp.flow));
        fill_info(rp, direct, result->info);
        result->flow = rp.flow;
        result->direct = ring::direct_pieces(pb.loads, rp.flow, rank);
      } catch (const ring::InputError &e) {
        rethrow_input(call, e, true);
      } catch (const std::bad_alloc &) {
        throw Error(REDIST_ERR_NO_MEMORY, std::string(call) + ": out of memory while planning");
      }
      return std::uint64_t{0};
    });
    result->loads = std::move(pb.loads);
    redist_ring_info &info = result->info;
    info.transport = transport;
    if (transport == REDIST_RING_AUTO)
      info.transport =
          info.direct_time < info.predicted_time ? REDIST_RING_DIRECT : REDIST_RING_NEIGHBOUR;
    if (info.transport == REDIST_RING_DIRECT) {
      direct_traffic(*result, info.items_sent, info.items_received);
    } else {
      const Index rl = result->flow[(static_cast<std::size_t>(rank) + un - 1) % un];
      const Index rr = result->flow[static_cast<std::size_t>(rank)];
      info.items_sent = std::max<Index>(rr, 0) + std::max<Index>(-rl, 0);
      info.items_received = std::max<Index>(rl, 0) + std::max<Index>(-rr, 0);
    }
    result->comm = duplicate_comm(call, comm);
    *plan = result.release();
  });
}

extern "C" int redist_ring_plan_execute(redist_ring_plan plan, const void *in, int64_t in_stride,
                                        void *out, int64_t out_stride) {
  static const char *call = "redist_ring_plan_execute";
  return c_barrier(call, [&] {
    if (plan == nullptr) throw_argument(call, "plan", 0, "NULL plan");
    const auto k = static_cast<std::size_t>(plan->rank);
    const auto n = static_cast<std::size_t>(plan->size);
    const Index load = plan->loads[k];
    const Index target = load - plan->flow[k] + plan->flow[(k + n - 1) % n];
    std::optional<RingExchange> exchange;
    agree(plan->comm, call, "", [&] {
      if (in == nullptr) throw_argument(call, "in", 0, "NULL input array");
      if (out == nullptr) throw_argument(call, "out", 0, "NULL output array");
      if (in_stride < plan->item_bytes)
        throw_argument(call, "in_stride", in_stride,
                       "must be >= item_bytes = " + std::to_string(plan->item_bytes));
      if (out_stride < plan->item_bytes)
        throw_argument(call, "out_stride", out_stride,
                       "must be >= item_bytes = " + std::to_string(plan->item_bytes));
      const auto *i0 = static_cast<const char *>(in);
      const auto *o0 = static_cast<const char *>(out);
      const char *i1 = i0 + (load - 1) * in_stride + plan->item_bytes;
      const char *o1 = o0 + (target - 1) * out_stride + plan->item_bytes;
      if (i0 < o1 && o0 < i1) throw_argument(call, "out", 0, "overlaps the input array");
      try {
        exchange.emplace(*plan,
                         RingArrays{static_cast<const char *>(in), in_stride,
                                    static_cast<char *>(out), out_stride},
                         call);
      } catch (const std::bad_alloc &) {
        throw Error(REDIST_ERR_NO_MEMORY,
                    std::string(call) + ": out of memory for the exchange's buffers");
      } // an Error: a datatype MPI could not make, agreed as an argument error is

      return std::uint64_t{0};
    });
    exchange->run();
  });
}

extern "C" int redist_ring_plan_get_info(redist_ring_plan plan, redist_ring_info *info) {
  static const char *call = "redist_ring_plan_get_info";
  return c_barrier(call, [&] {
    if (plan == nullptr) throw_argument(call, "plan", 0, "NULL plan");
    if (info == nullptr) throw_argument(call, "info", 0, "NULL output pointer");
    *info = plan->info;
  });
}

extern "C" int redist_ring_plan_get_flows(redist_ring_plan plan, int64_t *flow) {
  static const char *call = "redist_ring_plan_get_flows";
  return c_barrier(call, [&] {
    if (plan == nullptr) throw_argument(call, "plan", 0, "NULL plan");
    if (flow == nullptr) throw_argument(call, "flow", 0, "NULL array");
    std::copy(plan->flow.begin(), plan->flow.end(), flow);
  });
}

extern "C" int redist_ring_plan_destroy(redist_ring_plan *plan) {
  return c_barrier("redist_ring_plan_destroy", [&] {
    if (plan == nullptr || *plan == nullptr) return;
    MPI_Comm_free(&(*plan)->comm);
    delete *plan;
    *plan = nullptr;
  });
}
