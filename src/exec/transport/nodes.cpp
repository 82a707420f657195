#include "nodes.hpp"

#include "collective.hpp"
#include "environment.hpp"
#include "error.hpp"

#include <algorithm>
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

// Keeps `attribute` with comm, which then owns it (delete_known_nodes frees it). Where
// MPI_Comm_set_attr fails, comm keeps nothing, and its next query asks again on every process
// (agreed); a set that failed after attaching the attribute leaves it to comm.
void keep(MPI_Comm comm, int key, std::unique_ptr<KnownNodesRef> attribute) {
  if (MPI_Comm_set_attr(comm, key, attribute.get()) != MPI_SUCCESS) {
    void *value = nullptr;
    int found = 0;
    if (MPI_Comm_get_attr(comm, key, &value, &found) == MPI_SUCCESS &&
        (found == 0 || value != attribute.get())) {
      return; // not attached: freed here
    }
  }
  static_cast<void>(attribute.release());
}

// This process's node: the lowest MPI_COMM_WORLD rank among the processes of comm that share
// its memory (MPI_COMM_TYPE_SHARED) and, under the test hook, its rank modulo `split`; -1 where
// an MPI call failed here. The node's ranks are read from its group, so no collective runs on
// the node's communicator, which a process whose split failed would not have.
int own_node(MPI_Comm comm, int rank, int split) {
  CommGuard shared;
  if (MPI_Comm_split_type(comm, MPI_COMM_TYPE_SHARED, rank, MPI_INFO_NULL, &shared.comm) !=
          MPI_SUCCESS ||
      shared.comm == MPI_COMM_NULL) {
    return -1;
  }
  MPI_Group node = MPI_GROUP_NULL;
  MPI_Group in_comm = MPI_GROUP_NULL;
  MPI_Group world = MPI_GROUP_NULL;
  int id = -1;
  int members = 0;
  if (MPI_Comm_group(shared.comm, &node) == MPI_SUCCESS &&
      MPI_Comm_group(comm, &in_comm) == MPI_SUCCESS &&
      MPI_Comm_group(MPI_COMM_WORLD, &world) == MPI_SUCCESS &&
      MPI_Group_size(node, &members) == MPI_SUCCESS) {
    std::vector<int> ranks(static_cast<std::size_t>(members));
    for (int k = 0; k < members; ++k)
      ranks[static_cast<std::size_t>(k)] = k;
    std::vector<int> comm_ranks(ranks.size());
    std::vector<int> world_ranks(ranks.size());
    if (MPI_Group_translate_ranks(node, members, ranks.data(), in_comm, comm_ranks.data()) ==
            MPI_SUCCESS &&
        MPI_Group_translate_ranks(node, members, ranks.data(), world, world_ranks.data()) ==
            MPI_SUCCESS) {
      for (std::size_t k = 0; k < ranks.size(); ++k) {
        if (comm_ranks[k] % split == rank % split && (id < 0 || world_ranks[k] < id)) {
          id = world_ranks[k];
        }
      }
    }
  }
  for (MPI_Group *g : {&node, &in_comm, &world}) {
    if (*g != MPI_GROUP_NULL) MPI_Group_free(g);
  }
  return id;
}

// Every process's node. Where the node query failed on some process, every process is taken to
// be a node of its own (nothing is read in a single copy) and nothing is kept.
std::vector<int> ask_node_ids(MPI_Comm comm, int split, bool &complete) {
  int rank = 0;
  int size = 0;
  check(MPI_Comm_rank(comm, &rank), "MPI_Comm_rank");
  check(MPI_Comm_size(comm, &size), "MPI_Comm_size");
  const int mine = own_node(comm, rank, split);
  std::vector<int> ids(static_cast<std::size_t>(size));
  check(collective::gather(comm, std::span<const int>(&mine, 1), ids), "MPI_Iallgather");
  complete = std::find(ids.begin(), ids.end(), -1) == ids.end();
  if (!complete) {
    for (int r = 0; r < size; ++r)
      ids[static_cast<std::size_t>(r)] = r;
  }
  return ids;
}

// The nodes kept with comm, asked of MPI first where none are (or under another split).
// Whether to ask, and under which split, is agreed: asking is collective, and one process may
// have lost its attribute (a failed MPI_Comm_get_attr or MPI_Comm_set_attr) or read another
// REDIST_TEST_NODES.
std::vector<int> known_nodes(MPI_Comm comm) {
  const int key = known_nodes_key();
  void *value = nullptr;
  int found = 0;
  if (MPI_Comm_get_attr(comm, key, &value, &found) != MPI_SUCCESS) found = 0;
  const KnownNodes *known = found != 0 ? static_cast<KnownNodesRef *>(value)->get() : nullptr;
  // The maxima of the split and of the kept split (0: none kept) and of their negations: the
  // split is the largest asked for, and the nodes are asked again unless every process keeps
  // them under that split.
  const int local_split = NodeMap::test_split();
  const int kept = known != nullptr ? known->split : 0;
  int words[3] = {local_split, kept, -kept};
  check(collective::agree_max(comm, words), "MPI_Iallreduce");
  const int split = words[0];
  if (words[1] == split && -words[2] == split) return known->ids();
  bool complete = false;
  std::vector<int> ids = ask_node_ids(comm, split, complete);
  if (complete)
    keep(comm, key, std::make_unique<KnownNodesRef>(std::make_shared<KnownNodes>(split, ids)));
  return ids;
}

} // namespace

std::vector<int> node_ids(MPI_Comm comm) {
  return known_nodes(comm);
}

void learn_node_ids(MPI_Comm comm) {
  static_cast<void>(known_nodes(comm));
}

void share_node_ids(MPI_Comm from, MPI_Comm to) {
  const int key = known_nodes_key();
  void *value = nullptr;
  int found = 0;
  if (MPI_Comm_get_attr(from, key, &value, &found) != MPI_SUCCESS || found == 0) return;
  keep(to, key, std::make_unique<KnownNodesRef>(*static_cast<KnownNodesRef *>(value)));
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
