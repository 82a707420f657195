#pragma once
// Shared by the files of the ring API of redist_ring.h: ring_schedule.cpp (planning without
// MPI), ring_plan.cpp (plans on a communicator) and ring_exec.cpp (their execution).

#include "api_internal.hpp"
#include "redist_ring.h"
#include "ring.hpp"

#include <mpi.h>

#include <memory>
#include <string>
#include <vector>

/// A rebalance planned on a communicator.
struct redist_ring_plan_s {
  MPI_Comm comm = MPI_COMM_NULL; // owned duplicate
  int rank = 0;
  int size = 1;
  std::vector<redist::Index> loads; // every process's load (the planner needs them all)
  std::vector<redist::Index> flow;
  std::vector<redist::ring::DirectPiece> direct; // the pieces this process sends or receives
  redist::Index item_bytes = 1;
  redist::Index chunk = 1;
  redist_ring_info info{};
};

namespace redist {

// Hidden: internal to the library, not among the symbols it exports.
#pragma GCC visibility push(hidden)

/// Throws REDIST_ERR_ARGUMENT "<call>: argument <arg> = <value>: <reason>".
[[noreturn]] void throw_value(const std::string &call, const std::string &arg,
                              const std::string &value, const std::string &reason);

/// The planner's argument names are arrays over processes; on a communicator they are one
/// argument per rank.
[[noreturn]] void rethrow_input(const std::string &call, const ring::InputError &e, bool per_rank);

/// The planned figures of `info` (`direct`: the predicted time of direct messages); the
/// transport and the items sent and received are the caller's.
void fill_info(const ring::Plan &plan, double direct, redist_ring_info &info);

/// The caller's arrays of one execution: items `in_stride` / `out_stride` bytes apart.
struct RingArrays {
  const char *in = nullptr;
  Index in_stride = 0;
  char *out = nullptr;
  Index out_stride = 0;
};

/// The exchange of one redist_ring_plan_execute on p.comm: this process's items from `in` to
/// `out`, by the transport p.info.transport names. Made with every buffer it needs (std::bad_alloc
/// there, before any message: inside the execution's argument agreement), then run().
class RingExchange {
public:
  RingExchange(const redist_ring_plan_s &p, const RingArrays &arrays, const char *call);
  RingExchange(const RingExchange &) = delete;
  RingExchange &operator=(const RingExchange &) = delete;
  ~RingExchange();
  /// Collective. Returns when the output is right on every process (a failed exchange
  /// repaired); throws on every process otherwise (ring_exec.cpp).
  void run();

private:
  struct Parts;
  std::unique_ptr<Parts> parts_;
};

#pragma GCC visibility pop

} // namespace redist
