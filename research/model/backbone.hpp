#pragma once
// The backbone model of Jeannot & Wagner 2004, "Two Fast and Efficient Message Scheduling
// Algorithms for Data Redistribution through a Backbone", Sec. 2: senders in one cluster,
// receivers in another, joined by a backbone that carries at most k transfers at once; every
// transfer runs at the rate of one stream, a node takes part in one transfer at a time
// (1-port), and each step costs a setup time beta. Volumes are elements, times are elements
// sent at one stream's rate (beta is the setup time expressed that way).
//
// Predicted costs in that model: of a schedule (the paper's objective, Sec. 2.2), of sending
// everything at once and letting the transport share the backbone (the paper's TCP baseline,
// Sec. 5.2, as a fluid model), and the lower bound (backbone_lower_bound, schedule_matching.hpp).
// Pure functions, no MPI.

#include "schedule_matching.hpp"

namespace redist {

/// The paper's cost of `schedule`: the sum over its steps of beta + the largest piece.
/// @throws std::invalid_argument when the schedule is not one of the backbone model (a step is
///   not a matching, holds more than backbone_streams(graph, k) pieces, or the pieces do not
///   cover the messages exactly), naming the violation; or when beta < 0.
[[nodiscard]] double backbone_schedule_cost(const VolumeGraph &graph, const Schedule &schedule,
                                            int k, double beta);

/// All messages started at once and left to the transport, as a fluid model of TCP's bandwidth
/// sharing: at every instant the active messages get the max-min fair rates (progressive
/// filling) under the capacities of the model, one stream per sender, one per receiver, k
/// streams in the backbone (backbone_streams(graph, k)); the rates change when a message
/// completes, and the simulation runs from one completion to the next, exactly up to rounding.
/// The cost is one setup beta plus the time the last message completes; 0 without messages.
/// Idealised: no losses, retransmissions or slow start, which the paper's measurements include.
/// @throws std::invalid_argument when beta < 0.
[[nodiscard]] double backbone_all_at_once_cost(const VolumeGraph &graph, int k, double beta);

} // namespace redist
