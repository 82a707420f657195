#pragma once
// A two-phase plan (Kaushik et al.'s two-phase redistribution; planner.hpp's TwoPhase and
// nd_planner.hpp's NdTwoPhase) as a wrapper of two one-phase executors: the first moves A into
// an intermediate array this wrapper owns, the second moves that array into B, with one
// agreement between them so that the second runs only where the first ended well everywhere.

#include "exec.hpp"

#include <mpi.h>

#include <array>
#include <cstddef>
#include <memory>
#include <span>
#include <string>
#include <vector>

namespace redist {

class TwoPhases final : public Executor {
public:
  /// `whole`: this rank's plan of the whole transfer (plan(), nodes()); schedule.phases its
  /// phases' plans and choices. Local, as OnePhase's constructors.
  TwoPhases(MPI_Comm comm, const std::vector<int> &node_ids, RankPlan whole,
            std::size_t element_size, Index lld_src, Index lld_dst, ScheduleChoice schedule,
            int tag);
  /// The same for an N-d plan (schedule.nd_phases).
  TwoPhases(MPI_Comm comm, const std::vector<int> &node_ids, const NdRankPlan &whole,
            std::size_t element_size, const Strides &src_strides, const Strides &dst_strides,
            ScheduleChoice schedule, int tag);

  void execute(const void *a, void *b) override;
  void execute(const void *a, void *b, const Operation &op) override;
  /// Only records the call: the phases run in end().
  void begin(const void *a, void *b, const Operation *op) override;
  void end() override;
  [[nodiscard]] bool in_flight() const override { return flight_.in_flight; }
  [[nodiscard]] bool defers() const override { return false; }
  [[nodiscard]] bool failed_anywhere() const override { return failed_anywhere_; }
  [[nodiscard]] bool may_read_peers() const override;
  [[nodiscard]] bool deferrable() const override { return false; }
  void decide_ways(bool read_anywhere, bool deferrable_everywhere) override;
  /// Never asked for (defers() is false); agrees on `error` first, then executes where it is 0.
  long long execute_checked(const void *a, void *b, long long error, const Operation *op) override;
  int agree(long long *words, int count, collective::Confirmation *later) override;
  [[nodiscard]] const RankPlan &plan() const override { return whole_; }
  [[nodiscard]] std::span<const Pieces> batch_operations() const override { return {}; }
  [[nodiscard]] std::size_t element_size() const override { return element_size_; }
  [[nodiscard]] const ScheduleChoice &schedule() const override { return schedule_; }
  [[nodiscard]] std::size_t buffer_bytes() const override;
  [[nodiscard]] std::size_t single_copy_sends() const override;
  [[nodiscard]] std::size_t single_copy_receives() const override;
  [[nodiscard]] std::size_t mapped_receives() const override;
  [[nodiscard]] std::size_t repaired_messages() const override;
  [[nodiscard]] bool left_unmatched() const override;
  [[nodiscard]] std::size_t array_copies() const override;
  [[nodiscard]] const NodeMap &nodes() const override { return nodes_; }
  [[nodiscard]] std::size_t single_copy_across_nodes() const override;

private:
  /// Both phases, with the agreement between them; the first failure is kept in failure_.
  void run(const std::byte *a, std::byte *b, const Operation *op);

  MPI_Comm comm_;
  ScheduleChoice schedule_;
  RankPlan whole_;
  std::size_t element_size_;
  NodeMap nodes_;
  std::array<std::unique_ptr<OnePhase>, 2> phases_;
  std::vector<std::byte> mid_; // the intermediate array
  struct Flight {              // begin()'s call, run by end()
    const std::byte *a = nullptr;
    std::byte *b = nullptr;
    const Operation *op = nullptr;
    bool in_flight = false;
  };
  Flight flight_;
  bool failed_anywhere_ = false; // the last execution's, agreed
  std::string failure_;          // the last execution's first failure here
};

} // namespace redist
