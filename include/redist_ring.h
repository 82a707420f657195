/**
 * @file redist_ring.h
 * @brief Load rebalancing of uneven block distributions on processor rings.
 *
 * Process k of a communicator holds a contiguous range of L_k items (HPF's GEN_BLOCK: matrix
 * columns, or items of any byte size) and must end with a given number of items. The
 * processes form a ring in rank order; items move between neighbours only and leave from the
 * ends of a range, so the cyclic order of all items along the ring is kept (Renard, Robert &
 * Vivien, "Data redistribution algorithms for heterogeneous processor rings", 2004):
 *
 * - unidirectional, equal link costs:  Algorithm 1 (optimal);
 * - unidirectional, unequal costs:     Algorithm 2, as soon as possible (optimal);
 * - bidirectional, equal costs:        Algorithm 3 (optimal);
 * - bidirectional, unequal costs:      System 6 with Proposition 1's rounding (optimal when no
 *                                      process sends more than it holds), else the best flow
 *                                      for a greedy schedule (never worse than System 12).
 *
 * A link cost is the time to move one item over it. A cost of +INFINITY forbids a direction:
 * the wrap link (process n-1 to 0 and back) at +INFINITY makes the ring a path, which keeps the
 * global order of the items (no wrap-around). The same rebalance can also be executed with
 * direct messages between any processes (REDIST_RING_DIRECT), or chosen by the cost model
 * (REDIST_RING_AUTO).
 *
 * Every process must hold at least one item before and after (the paper's assumption); a call
 * that breaks it fails with REDIST_ERR_ARGUMENT. Errors are returned on every process of the
 * communicator, with redist_last_error() naming the call, the argument and the reason; nothing
 * is written to the output then.
 *
 * All arguments are plain integers, 64-bit integers, doubles and pointers; the info structure
 * has plain fields only (binds as a BIND(C) derived type).
 */
#ifndef REDIST_RING_H
#define REDIST_RING_H

#include <mpi.h>
#include <stdint.h>

#include "redist.h"

#ifdef __cplusplus
extern "C" {
#endif

/** Ring direction. */
enum {
  REDIST_RING_UNIDIRECTIONAL = 0, /**< items move from k to k+1 only */
  REDIST_RING_BIDIRECTIONAL = 1   /**< both ways; a process sends one message at a time */
};

/** How the items travel. */
enum {
  REDIST_RING_NEIGHBOUR = 0, /**< neighbour messages only, forwarding in chunks */
  REDIST_RING_DIRECT = 1,    /**< one message per pair of processes that share items */
  REDIST_RING_AUTO = 2       /**< whichever the cost model predicts faster */
};

/** The algorithm a plan uses. */
enum {
  REDIST_RING_NONE = 0,       /**< nothing moves */
  REDIST_RING_ALGORITHM1 = 1, /**< homogeneous unidirectional */
  REDIST_RING_ALGORITHM2 = 2, /**< heterogeneous unidirectional */
  REDIST_RING_ALGORITHM3 = 3, /**< homogeneous bidirectional */
  REDIST_RING_SYSTEM6 = 4,    /**< heterogeneous bidirectional, light: optimal */
  REDIST_RING_HEURISTIC = 5   /**< heterogeneous bidirectional, not light */
};

/** What a plan or schedule predicts. Times are in link-cost units. */
typedef struct redist_ring_info {
  double predicted_time;   /**< the neighbour schedule's time */
  double lower_bound;      /**< Lemma 1, Theorem 2, Lemma 6 or Lemma 12 (bidirectional, unequal) */
  double system6;          /**< bidirectional: System 6's integer optimum, a lower bound on any
                                schedule; 0 otherwise */
  double direct_time;      /**< model time of the direct transfer (preemptive one-port; a message
                                p -> q costs items * max(p's cheapest outgoing link, q's cheapest
                                incoming link)) */
  int64_t steps;           /**< homogeneous algorithms: synchronous steps */
  int64_t items_sent;      /**< plan: by this process per execution; schedule: all moves */
  int64_t items_received;  /**< plan: by this process per execution; schedule: all moves */
  int algorithm;           /**< REDIST_RING_NONE ... REDIST_RING_HEURISTIC */
  int transport;           /**< plan: REDIST_RING_NEIGHBOUR or REDIST_RING_DIRECT */
  int light;               /**< 1 if no process sends more items than it holds before */
  int algorithm3_repaired; /**< 1 if Algorithm 3 as printed would have a process send an item
                                it does not hold yet; the plan then uses a feasible schedule */
} redist_ring_info;

/* ---- Pure planning (local, no communication) ------------------------------------------------ */

/** A rebalance planned without MPI (opaque; redist_ring_schedule_create). */
typedef struct redist_ring_schedule_s *redist_ring_schedule;

/**
 * Plan a rebalance of @p n processes without MPI. Local.
 * @param n         the number of processes on the ring.
 * @param direction REDIST_RING_UNIDIRECTIONAL or REDIST_RING_BIDIRECTIONAL.
 * @param loads     n items held before, each >= 1.
 * @param targets   n items held after, each >= 1, same sum as @p loads.
 * @param c_next    n costs c(k -> k+1) > 0 or +INFINITY; NULL means all 1.
 * @param c_prev    n costs c(k -> k-1) > 0 or +INFINITY (bidirectional only; NULL: all 1).
 * @param schedule  receives the schedule (NULL after an error).
 */
int redist_ring_schedule_create(int n, int direction, const int64_t *loads, const int64_t *targets,
                                const double *c_next, const double *c_prev,
                                redist_ring_schedule *schedule);

/** Bounds, predicted times and algorithm of @p schedule. Local. */
int redist_ring_schedule_get_info(redist_ring_schedule schedule, redist_ring_info *info);

/** The n net flows: flow[k] items cross from k to k+1 (negative: from k+1 to k). Local. */
int redist_ring_schedule_get_flows(redist_ring_schedule schedule, int64_t *flow);

/**
 * The timed moves: move i carries items[i] consecutive items from process from[i] to its
 * neighbour to[i] during [start[i], finish[i]). Pass NULL arrays to get only *count; otherwise
 * each array must hold *count entries on entry (the count from a first call). Local.
 */
int redist_ring_schedule_get_moves(redist_ring_schedule schedule, int64_t *count, int *from,
                                   int *to, int64_t *items, double *start, double *finish);

/** Destroy a schedule and set *schedule to NULL (NULL accepted). Local. */
int redist_ring_schedule_destroy(redist_ring_schedule *schedule);

/**
 * Targets proportional to @p weights (e.g. measured speeds; finite, > 0) for @p total items,
 * each at least 1, largest remainders first. Local.
 */
int redist_ring_targets_from_weights(int n, int64_t total, const double *weights, int64_t *targets);

/* ---- Execution over MPI -------------------------------------------------------------------- */

/** A rebalance planned over a communicator, to execute (opaque; redist_ring_plan_create). */
typedef struct redist_ring_plan_s *redist_ring_plan;

/**
 * This process's target for a rebalance in proportion to @p weight (finite, > 0), the total
 * being the sum of every process's @p load. Collective over @p comm.
 */
int redist_ring_target_from_weight(MPI_Comm comm, int64_t load, double weight, int64_t *target);

/**
 * Plan a rebalance over @p comm (ring order = rank order). Collective.
 * @param comm        the ring's processes; every one of them calls.
 * @param direction   same on every process.
 * @param transport   REDIST_RING_NEIGHBOUR, _DIRECT or _AUTO; same on every process.
 * @param load        items this process holds now (>= 1).
 * @param target      items it must hold after (>= 1); the targets add up to the loads.
 * @param cost_next   cost of one item from this process to rank+1 (> 0, or +INFINITY).
 * @param cost_prev   cost of one item to rank-1 (bidirectional; ignored otherwise).
 * @param item_bytes  bytes per item (1 .. INT_MAX); same on every process.
 * @param chunk_items neighbour transport: items per message when forwarding (0: about 1 MiB);
 *                    same on every process.
 * @param plan        receives the plan.
 * @return REDIST_SUCCESS, or an error on every process (then *plan is NULL).
 */
int redist_ring_plan_create(MPI_Comm comm, int direction, int transport, int64_t load,
                            int64_t target, double cost_next, double cost_prev, int64_t item_bytes,
                            int64_t chunk_items, redist_ring_plan *plan);

/**
 * Move the items. Item i (0 <= i < load) of this process is the @p item_bytes bytes at
 * in + i * in_stride; after the call its item j (0 <= j < target) is at out + j * out_stride.
 * For columns of a column-major local array of m rows and leading dimension lld, the item is a
 * column: item_bytes = m * element size, stride = lld * element size. @p in and @p out must not
 * overlap. Collective over the plan's communicator.
 * An MPI error during the exchange is agreed by every process and repaired: the exchange is
 * made again in direct messages, and the call succeeds with the right output. Where the repair
 * fails too, every process returns an error (REDIST_ERR_MPI where MPI failed,
 * REDIST_ERR_REMOTE elsewhere) once every request has completed; the output is then incomplete
 * and the plan stays usable.
 */
int redist_ring_plan_execute(redist_ring_plan plan, const void *in, int64_t in_stride, void *out,
                             int64_t out_stride);

/** Predictions and this process's traffic. Local. */
int redist_ring_plan_get_info(redist_ring_plan plan, redist_ring_info *info);

/** The net flows (one per process of the communicator), as redist_ring_schedule_get_flows. */
int redist_ring_plan_get_flows(redist_ring_plan plan, int64_t *flow);

/** Destroy a plan and set *plan to NULL (NULL accepted). Collective. */
int redist_ring_plan_destroy(redist_ring_plan *plan);

#ifdef __cplusplus
}
#endif

#endif /* REDIST_RING_H */
