#pragma once
// Schedules built from bipartite matchings (matching.hpp):
//  - Desprez, Dongarra, Petitet, Randriamaro & Robert, "Scheduling Block-Cyclic Array
//    Redistribution", IEEE TPDS 1998, Sec. 4.5: Stepwise (the fewest steps, Delta(G), by
//    Koenig's theorem) and Greedy (repeated maximum weight matchings, aiming at a lower total
//    cost). Messages are never split.
//  - Jeannot & Wagner, "Two Fast and Efficient Message Scheduling Algorithms for Data
//    Redistribution through a Backbone", IPDPS 2004, Sec. 4: GGP and OGGP for K-PBS, at most
//    k transfers per step, messages split across steps, a setup cost beta per step.
// Every schedule returned has its offsets set and passes check_schedule with matching steps
// (and at most k pieces per step for GGP/OGGP). Pure functions, no MPI.

#include "schedule.hpp"

namespace redist {

/// Desprez et al.'s Stepwise: each step is a maximum weight matching among those covering every
/// vertex of maximum remaining degree. Exactly graph.max_degree() steps. Ties between such
/// matchings go to the one covering the nodes with the most elements left.
[[nodiscard]] Schedule schedule_stepwise(const VolumeGraph &graph);

/// Desprez et al.'s Greedy: each step is a maximum weight matching of the remaining messages,
/// ties broken as in schedule_stepwise.
[[nodiscard]] Schedule schedule_greedy(const VolumeGraph &graph);

/// Jeannot & Wagner's GGP (Generic Graph Peeling).
/// @param k at most k pieces per step; k <= 0 or k >= min(senders, receivers) means no limit
///   beyond the matching itself.
/// @param beta_elements the setup cost of a step, as the number of elements that could be sent
///   in that time; volumes are normalised by it and rounded up, so a message is cut into pieces
///   of whole multiples of beta elements (its last piece holds the remainder). Values below 1
///   count as 1.
[[nodiscard]] Schedule schedule_ggp(const VolumeGraph &graph, int k, Index beta_elements);

/// Jeannot & Wagner's OGGP: GGP where each step is a bottleneck (max-min) perfect matching of
/// the weight-regular graph, so steps are as long as possible and fewer.
[[nodiscard]] Schedule schedule_oggp(const VolumeGraph &graph, int k, Index beta_elements);

/// The transfers one step may hold: k, or min(senders, receivers) when k <= 0 or k is larger
/// (a matching holds no more).
[[nodiscard]] int backbone_streams(const VolumeGraph &graph, int k);

/// The K-PBS lower bound beta * max(Delta, ceil(m / k)) + max(W, P / k), in elements: volumes
/// count elements and `beta` is the step setup cost expressed in elements (the time to send
/// that many). m = messages, P = total elements, W = max_node_volume(), Delta = max_degree()
/// (empty messages ignored), k = backbone_streams(graph, k). No schedule of at most k pieces per
/// step, each step costing beta plus its largest piece, is cheaper, even with pieces of any
/// real size (proof in schedule_matching.cpp).
[[nodiscard]] double backbone_lower_bound(const VolumeGraph &graph, int k, double beta);

} // namespace redist
