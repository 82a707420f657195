#pragma once
// Which peers of a plan share this rank's node, as MPI sees it (MPI_Comm_split_type with
// MPI_COMM_TYPE_SHARED), not as /proc does: in a virtual cluster every node may share the boot
// id and the PID namespace of the others, and on a real one a node's processes are the ones
// MPI groups. Single copy is used only between ranks of one node (negotiation.hpp), and the
// plan statistics count bytes inside a node and across the network apart.
//
// A node is named by the lowest rank, in MPI_COMM_WORLD, of its shared-memory
// sub-communicator. node_ids() asks MPI once per communicator: one MPI_Comm_split_type, one
// MPI_Allreduce on the node's sub-communicator, and one MPI_Allgather of one int per rank (O(P)
// bytes, only while a plan is made). The answer stays with the communicator as an attribute
// (a run per block of consecutive ranks on one node: about one per node), freed with it and
// inherited by its duplicates, so that later plans on the communicator, or on a duplicate made
// after the query, run none of them; a NodeMap keeps one node per peer, O(peers).
//
// Test hook: REDIST_TEST_NODES=k (k >= 1) splits each node further by the rank in the plan's
// communicator modulo k (k = 2: by parity), so that one machine behaves as several nodes.

#include "plan.hpp"

#include <mpi.h>

#include <cstddef>
#include <vector>

namespace redist {

/// The node of every rank of comm, by rank in comm. Collective over comm (the first time on a
/// communicator and its later duplicates); throws redist::Error (REDIST_ERR_MPI) when an MPI
/// call fails.
std::vector<int> node_ids(MPI_Comm comm);
/// node_ids() kept with comm, without making the list: for a communicator about to be
/// duplicated, whose duplicates then inherit the answer.
void learn_node_ids(MPI_Comm comm);
/// `to` (a duplicate of `from`, made earlier) takes what `from` knows of its nodes now, as a
/// duplicate made now would inherit it; nothing where `from` knows nothing. Local.
void share_node_ids(MPI_Comm from, MPI_Comm to);

class NodeMap {
public:
  NodeMap() = default;
  /// The nodes of this rank (`rank` in the communicator) and of its peers in `plan`, from
  /// node_ids() of the plan's communicator.
  NodeMap(const std::vector<int> &ids, int rank, const RankPlan &plan);

  /// This rank's node (the lowest world rank on it).
  [[nodiscard]] int node() const { return node_; }
  /// The node of plan.sends[i] / plan.recvs[i].
  [[nodiscard]] int send_node(std::size_t i) const { return send_nodes_[i]; }
  [[nodiscard]] int recv_node(std::size_t i) const { return recv_nodes_[i]; }
  [[nodiscard]] bool send_inside(std::size_t i) const { return send_nodes_[i] == node_; }
  [[nodiscard]] bool recv_inside(std::size_t i) const { return recv_nodes_[i] == node_; }

  /// The REDIST_TEST_NODES split (1 when unset or invalid: nodes as MPI gives them).
  static int test_split();

private:
  int node_ = 0;
  std::vector<int> send_nodes_;
  std::vector<int> recv_nodes_;
};

} // namespace redist
