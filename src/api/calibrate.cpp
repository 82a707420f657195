// redist_calibrate and redist_calibrate_nodes: the cost model measured by ping-pong, on one
// level or on both (inside a node, between nodes; docs/studies/cluster.md).

#include "api_internal.hpp"
#include "nodes.hpp"

#include <redist.h>

#include <algorithm>
#include <memory>
#include <vector>

namespace redist {
namespace {

// Median one-way time of `reps` ping-pongs of `bytes` between ranks `a` and `b` (seconds;
// other ranks take no part and return 0).
double ping_pong(MPI_Comm comm, int rank, int a, int b, std::vector<char> &buffer, int bytes,
                 int reps, const char *call) {
  if (rank != a && rank != b) return 0.0;
  std::vector<double> times;
  for (int r = 0; r < reps; ++r) {
    const double start = MPI_Wtime();
    if (rank == a) {
      check_mpi(MPI_Send(buffer.data(), bytes, MPI_BYTE, b, 0, comm), call, "MPI_Send");
      check_mpi(MPI_Recv(buffer.data(), bytes, MPI_BYTE, b, 0, comm, MPI_STATUS_IGNORE), call,
                "MPI_Recv");
    } else {
      check_mpi(MPI_Recv(buffer.data(), bytes, MPI_BYTE, a, 0, comm, MPI_STATUS_IGNORE), call,
                "MPI_Recv");
      check_mpi(MPI_Send(buffer.data(), bytes, MPI_BYTE, a, 0, comm), call, "MPI_Send");
    }
    times.push_back((MPI_Wtime() - start) / 2.0);
  }
  std::nth_element(times.begin(), times.begin() + reps / 2, times.end());
  return times[static_cast<std::size_t>(reps / 2)];
}

// alpha from the median of small ping-pongs between ranks a and b, beta from the slope to
// 4 MiB messages; every rank of `comm` gets the values (collective).
CostModel measure_pair(MPI_Comm comm, int rank, int a, int b, const char *call) {
  constexpr int kLarge = 1 << 22;
  std::vector<char> buffer(rank == a || rank == b ? kLarge : 0);
  ping_pong(comm, rank, a, b, buffer, 8, 5, call); // warm-up
  const double small = ping_pong(comm, rank, a, b, buffer, 8, 51, call);
  const double large = ping_pong(comm, rank, a, b, buffer, kLarge, 9, call);
  double model[2] = {std::max(small, 1e-9), std::max((large - small) / kLarge, 1e-13)};
  check_mpi(MPI_Bcast(model, 2, MPI_DOUBLE, a, comm), call, "MPI_Bcast");
  return CostModel{model[0], model[1], 0.0};
}

// A duplicate of comm that returns MPI errors, freed with the guard.
using OwnComm = std::unique_ptr<MPI_Comm, void (*)(MPI_Comm *)>;
OwnComm duplicate(MPI_Comm comm, MPI_Comm &own, const char *call) {
  own = duplicate_comm(call, comm);
  return {&own, [](MPI_Comm *c) { MPI_Comm_free(c); }};
}

} // namespace
} // namespace redist

using namespace redist;

extern "C" int redist_calibrate(MPI_Comm comm, double *alpha, double *beta) {
  static const char *call = "redist_calibrate";
  return c_barrier(call, [&] {
    // Not a structured binding: clang before 16 cannot capture those in the lambdas below.
    const CommPosition position = comm_position(call, comm);
    const int rank = position.rank;
    const int size = position.size;
    agree(comm, call, "", [&] {
      if (alpha == nullptr) throw_argument(call, "alpha", 0, "NULL output pointer");
      if (beta == nullptr) throw_argument(call, "beta", 0, "NULL output pointer");
      return std::uint64_t{0};
    });
    CostModel model;
    if (size > 1) {
      MPI_Comm own = MPI_COMM_NULL;
      const OwnComm guard = duplicate(comm, own, call);
      model = measure_pair(own, rank, 0, 1, call);
    }
    *alpha = model.alpha;
    *beta = model.beta;
  });
}

extern "C" int redist_calibrate_nodes(MPI_Comm comm, redist_calibration *out) {
  static const char *call = "redist_calibrate_nodes";
  return c_barrier(call, [&] {
    const CommPosition position = comm_position(call, comm);
    const int rank = position.rank;
    const int size = position.size;
    agree(comm, call, "", [&] {
      if (out == nullptr) throw_argument(call, "out", 0, "NULL output pointer");
      return std::uint64_t{0};
    });
    const std::vector<int> nodes = node_ids(comm); // the same on every rank; kept with comm
    MPI_Comm own = MPI_COMM_NULL;
    const OwnComm guard = duplicate(comm, own, call);
    // Inside a node: the lowest rank that shares its node with a higher one.
    int intra_a = -1;
    int intra_b = -1;
    for (int a = 0; a < size && intra_a < 0; ++a) {
      for (int b = a + 1; b < size; ++b) {
        if (nodes[static_cast<std::size_t>(b)] == nodes[static_cast<std::size_t>(a)]) {
          intra_a = a;
          intra_b = b;
          break;
        }
      }
    }
    // Across: rank 0 and the lowest rank on another node.
    int inter_b = -1;
    for (int b = 1; b < size && inter_b < 0; ++b) {
      if (nodes[static_cast<std::size_t>(b)] != nodes.front()) inter_b = b;
    }
    redist_calibration result{};
    const CostModel defaults;
    result.intra_alpha = defaults.alpha;
    result.intra_beta = defaults.beta;
    if (intra_a >= 0) {
      const CostModel intra = measure_pair(own, rank, intra_a, intra_b, call);
      result.intra_alpha = intra.alpha;
      result.intra_beta = intra.beta;
      result.has_intra = 1;
    }
    if (inter_b >= 0) {
      const CostModel inter = measure_pair(own, rank, 0, inter_b, call);
      result.inter_alpha = inter.alpha;
      result.inter_beta = inter.beta;
      result.has_inter = 1;
    }
    *out = result;
  });
}
