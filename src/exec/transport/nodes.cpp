#include "nodes.hpp"

#include "environment.hpp"
#include "error.hpp"

#include <memory>
#include <mutex>
#include <new>
#include <string>
#include <utility>

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
  return static_cast<int>(
      environment::integer("REDIST_TEST_NODES", 1, 1 << 20, "a test hook").value.value_or(1));
}

namespace {

// A communicator's nodes, kept as its attribute (MPI's caching, MPI 4.0 section 7.7) so that a
// communicator pays the node query once, and its duplicates (a plan's own communicator, the
// ScaLAPACK entries' cached one) inherit the answer. `split` is the REDIST_TEST_NODES split they
// were made under. Kept as runs of consecutive ranks on one node (a node's ranks are usually
// consecutive: about one run per node, not one entry per rank).
struct KnownNodes {
  int split = 1;
  std::vector<std::pair<int, int>> runs; // (node, ranks)

  KnownNodes(int split_, const std::vector<int> &ids) : split(split_) {
    for (const int id : ids) {
      if (runs.empty() || runs.back().first != id) {
        runs.emplace_back(id, 0);
      }
      ++runs.back().second;
    }
  }
  [[nodiscard]] std::vector<int> ids() const {
    std::vector<int> out;
    for (const auto &[node, ranks] : runs) {
      out.insert(out.end(), static_cast<std::size_t>(ranks), node);
    }
    return out;
  }
};
using KnownNodesRef = std::shared_ptr<const KnownNodes>;

int copy_known_nodes(MPI_Comm, int, void *, void *in, void *out, int *flag) {
  try {
    *static_cast<KnownNodesRef **>(out) = new KnownNodesRef(*static_cast<KnownNodesRef *>(in));
    *flag = 1;
  } catch (const std::bad_alloc &) {
    *flag = 0; // the duplicate asks MPI again
  }
  return MPI_SUCCESS;
}

int delete_known_nodes(MPI_Comm, int, void *value, void *) {
  delete static_cast<KnownNodesRef *>(value);
  return MPI_SUCCESS;
}

int known_nodes_key() {
  static std::once_flag once;
  static int key = MPI_KEYVAL_INVALID;
  std::call_once(once, [] {
    check(MPI_Comm_create_keyval(copy_known_nodes, delete_known_nodes, &key, nullptr),
          "MPI_Comm_create_keyval");
  });
  return key;
}

std::vector<int> ask_node_ids(MPI_Comm comm, int split) {
  int rank = 0;
  int size = 0;
  check(MPI_Comm_rank(comm, &rank), "MPI_Comm_rank");
  check(MPI_Comm_size(comm, &size), "MPI_Comm_size");
  int world = 0;
  check(MPI_Comm_rank(MPI_COMM_WORLD, &world), "MPI_Comm_rank");
  CommGuard shared;
  check(MPI_Comm_split_type(comm, MPI_COMM_TYPE_SHARED, rank, MPI_INFO_NULL, &shared.comm),
        "MPI_Comm_split_type");
  CommGuard split_comm; // the test hook's nodes inside MPI's
  MPI_Comm node = shared.comm;
  if (split > 1) {
    check(MPI_Comm_split(shared.comm, rank % split, rank, &split_comm.comm), "MPI_Comm_split");
    node = split_comm.comm;
  }
  int id = world;
  check(MPI_Allreduce(MPI_IN_PLACE, &id, 1, MPI_INT, MPI_MIN, node), "MPI_Allreduce");
  std::vector<int> ids(static_cast<std::size_t>(size));
  check(MPI_Allgather(&id, 1, MPI_INT, ids.data(), 1, MPI_INT, comm), "MPI_Allgather");
  return ids;
}

// The nodes kept with comm, asked of MPI first where none are (or under another split).
// Whether to ask, and under which split, is agreed: asking is collective, and one process may
// have lost its attribute (a failed MPI_Comm_set_attr) or read another REDIST_TEST_NODES.
const KnownNodes &known_nodes(MPI_Comm comm) {
  const int key = known_nodes_key();
  void *value = nullptr;
  int found = 0;
  check(MPI_Comm_get_attr(comm, key, &value, &found), "MPI_Comm_get_attr");
  const KnownNodes *known = found != 0 ? static_cast<KnownNodesRef *>(value)->get() : nullptr;
  // The maxima of the split and of the kept split (0: none kept) and of their negations: the
  // split is the largest asked for, and the nodes are asked again unless every process keeps
  // them under that split.
  const int local_split = NodeMap::test_split();
  const int kept = known != nullptr ? known->split : 0;
  int words[3] = {local_split, kept, -kept};
  check(MPI_Allreduce(MPI_IN_PLACE, words, 3, MPI_INT, MPI_MAX, comm), "MPI_Allreduce");
  const int split = words[0];
  if (words[1] == split && -words[2] == split) return *known;
  auto attribute = std::make_unique<KnownNodesRef>(
      std::make_shared<KnownNodes>(split, ask_node_ids(comm, split)));
  check(MPI_Comm_set_attr(comm, key, attribute.get()), "MPI_Comm_set_attr");
  // comm owns it now: delete_known_nodes frees it
  return **attribute.release();
}

} // namespace

std::vector<int> node_ids(MPI_Comm comm) {
  return known_nodes(comm).ids();
}

void learn_node_ids(MPI_Comm comm) {
  static_cast<void>(known_nodes(comm));
}

void share_node_ids(MPI_Comm from, MPI_Comm to) {
  const int key = known_nodes_key();
  void *value = nullptr;
  int found = 0;
  check(MPI_Comm_get_attr(from, key, &value, &found), "MPI_Comm_get_attr");
  if (found == 0) return;
  auto attribute = std::make_unique<KnownNodesRef>(*static_cast<KnownNodesRef *>(value));
  check(MPI_Comm_set_attr(to, key, attribute.get()), "MPI_Comm_set_attr");
  static_cast<void>(attribute.release()); // `to` owns it now: delete_known_nodes frees it
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
