#include "nodes.hpp"

#include "error.hpp"

#include <cstdlib>
#include <string>

namespace redist {
namespace {

void check(int rc, const char *what) {
  if (rc != MPI_SUCCESS) {
    throw Error(REDIST_ERR_MPI, std::string("redist: ") + what + " failed (node map)");
  }
}

// Frees a communicator made here, whatever happens.
struct CommGuard {
  MPI_Comm comm = MPI_COMM_NULL;
  CommGuard() = default;
  CommGuard(const CommGuard &) = delete;
  CommGuard &operator=(const CommGuard &) = delete;
  ~CommGuard() {
    if (comm != MPI_COMM_NULL) MPI_Comm_free(&comm);
  }
};

} // namespace

int NodeMap::test_split() {
  const char *value = std::getenv("REDIST_TEST_NODES");
  if (value == nullptr || *value == '\0') return 1;
  char *end = nullptr;
  const long k = std::strtol(value, &end, 10);
  return *end == '\0' && k >= 1 && k <= 1 << 20 ? static_cast<int>(k) : 1;
}

std::vector<int> node_ids(MPI_Comm comm) {
  int rank = 0;
  int size = 0;
  check(MPI_Comm_rank(comm, &rank), "MPI_Comm_rank");
  check(MPI_Comm_size(comm, &size), "MPI_Comm_size");
  int world = 0;
  check(MPI_Comm_rank(MPI_COMM_WORLD, &world), "MPI_Comm_rank");
  CommGuard shared;
  check(MPI_Comm_split_type(comm, MPI_COMM_TYPE_SHARED, rank, MPI_INFO_NULL, &shared.comm),
        "MPI_Comm_split_type");
  CommGuard split; // the test hook's nodes inside MPI's
  MPI_Comm node = shared.comm;
  if (const int k = NodeMap::test_split(); k > 1) {
    check(MPI_Comm_split(shared.comm, rank % k, rank, &split.comm), "MPI_Comm_split");
    node = split.comm;
  }
  int id = world;
  check(MPI_Allreduce(MPI_IN_PLACE, &id, 1, MPI_INT, MPI_MIN, node), "MPI_Allreduce");
  std::vector<int> ids(static_cast<std::size_t>(size));
  check(MPI_Allgather(&id, 1, MPI_INT, ids.data(), 1, MPI_INT, comm), "MPI_Allgather");
  return ids;
}

NodeMap::NodeMap(const std::vector<int> &ids, int rank, const RankPlan &plan)
    : node_(ids.at(static_cast<std::size_t>(rank))) {
  send_nodes_.reserve(plan.sends.size());
  for (const Peer &peer : plan.sends) {
    send_nodes_.push_back(ids.at(static_cast<std::size_t>(peer.rank)));
  }
  recv_nodes_.reserve(plan.recvs.size());
  for (const Peer &peer : plan.recvs) {
    recv_nodes_.push_back(ids.at(static_cast<std::size_t>(peer.rank)));
  }
}

} // namespace redist
