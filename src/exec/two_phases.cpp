#include "two_phases.hpp"

#include "collective.hpp"
#include "copy.hpp"
#include "error.hpp"
#include "nd_planner.hpp"

namespace redist {

TwoPhases::TwoPhases(MPI_Comm comm, const std::vector<int> &node_ids, RankPlan whole,
                     std::size_t element_size, Index lld_src, Index lld_dst,
                     ScheduleChoice schedule, int tag)
    : comm_(comm), schedule_(std::move(schedule)), whole_(std::move(whole)),
      element_size_(element_size), nodes_(node_ids, rank_in(comm), whole_) {
  const TwoPhase &two = *schedule_.phases;
  phases_[0] = std::make_unique<OnePhase>(comm, node_ids, two.plans[0], element_size, lld_src,
                                          two.mid_lld, two.choices[0], tag + 1);
  phases_[1] = std::make_unique<OnePhase>(comm, node_ids, two.plans[1], element_size, two.mid_lld,
                                          lld_dst, two.choices[1], tag + 2);
  mid_.resize(static_cast<std::size_t>(two.mid_elements) * element_size);
}

TwoPhases::TwoPhases(MPI_Comm comm, const std::vector<int> &node_ids, const NdRankPlan &whole,
                     std::size_t element_size, const Strides &src_strides,
                     const Strides &dst_strides, ScheduleChoice schedule, int tag)
    : comm_(comm), schedule_(std::move(schedule)), whole_(nd_skeleton(whole)),
      element_size_(element_size), nodes_(node_ids, rank_in(comm), whole_) {
  const NdTwoPhase &two = *schedule_.nd_phases;
  phases_[0] = std::make_unique<OnePhase>(comm, node_ids, two.plans[0], element_size, src_strides,
                                          two.mid_strides, two.choices[0], tag + 1);
  phases_[1] = std::make_unique<OnePhase>(comm, node_ids, two.plans[1], element_size,
                                          two.mid_strides, dst_strides, two.choices[1], tag + 2);
  mid_.resize(static_cast<std::size_t>(two.mid_elements) * element_size);
}

void TwoPhases::execute(const void *a, void *b) {
  begin(a, b, nullptr);
  end();
}

void TwoPhases::execute(const void *a, void *b, const Operation &op) {
  begin(a, b, &op);
  end();
}

void TwoPhases::begin(const void *a, void *b, const Operation *op) {
  if (flight_.in_flight) {
    throw Error(REDIST_ERR_ARGUMENT,
                "redist: an execution of this plan is in flight (begun and not ended)");
  }
  flight_ = {static_cast<const std::byte *>(a), static_cast<std::byte *>(b), op, true};
}

void TwoPhases::end() {
  if (!flight_.in_flight) {
    throw Error(REDIST_ERR_ARGUMENT, "redist: no execution of this plan is in flight");
  }
  flight_.in_flight = false;
  run(flight_.a, flight_.b, flight_.op);
  streaming_fence();
  if (!failure_.empty()) {
    throw Error(REDIST_ERR_MPI, failure_);
  }
}

void TwoPhases::run(const std::byte *a, std::byte *b, const Operation *op) {
  failure_.clear();
  const auto fail = [&](const std::string &why) {
    if (failure_.empty()) {
      failure_ = why;
    }
  };
  std::string first;
  try {
    phases_[0]->execute(a, mid_.data());
  } catch (const Error &e) {
    first = e.what();
  }
  // The intermediate array is right everywhere only where the first phase ended well
  // everywhere: a process whose peer's first phase failed received stale elements from it.
  // Agreed before the second phase, which then runs nowhere and leaves b as it was. Where this
  // agreement itself fails (the one failure), every first phase ended well.
  long long failed = first.empty() ? 0 : 1;
  const collective::Flags flags = collective::max_of_flags(comm_, std::span<long long>(&failed, 1));
  failed_anywhere_ = phases_[0]->failed_anywhere() || failed != 0;
  if (flags != collective::Flags::agreed) {
    fail("redist execute: the agreement between the phases failed here");
  }
  if (failed != 0) {
    fail(!first.empty() ? first
                        : "redist execute: the first phase failed on another process; nothing "
                          "was written to b");
    return;
  }
  // The second phase applies the operation; the first copies into the intermediate array.
  try {
    if (op != nullptr) {
      phases_[1]->execute(mid_.data(), b, *op);
    } else {
      phases_[1]->execute(mid_.data(), b);
    }
  } catch (const Error &e) {
    fail(e.what());
  }
  failed_anywhere_ = failed_anywhere_ || phases_[1]->failed_anywhere();
}

long long TwoPhases::execute_checked(const void *a, void *b, long long error, const Operation *op) {
  long long word = error;
  if (agree(&word, 1, nullptr) != MPI_SUCCESS) {
    throw Error(REDIST_ERR_MPI, "redist: the argument check's agreement failed");
  }
  if (word == 0) {
    begin(a, b, op);
    end();
  }
  return word;
}

int TwoPhases::agree(long long *words, int count, collective::Confirmation *later) {
  return collective::agree_max(comm_, {words, static_cast<std::size_t>(count)}, later);
}

bool TwoPhases::may_read_peers() const {
  return phases_[0]->may_read_peers() || phases_[1]->may_read_peers();
}

void TwoPhases::decide_ways(bool read_anywhere, bool /*deferrable_everywhere*/) {
  phases_[0]->decide_ways(read_anywhere, false);
  phases_[1]->decide_ways(read_anywhere, false);
}

std::size_t TwoPhases::buffer_bytes() const {
  return mid_.size() + phases_[0]->buffer_bytes() + phases_[1]->buffer_bytes();
}

std::size_t TwoPhases::single_copy_sends() const {
  return phases_[0]->single_copy_sends() + phases_[1]->single_copy_sends();
}

std::size_t TwoPhases::single_copy_receives() const {
  return phases_[0]->single_copy_receives() + phases_[1]->single_copy_receives();
}

std::size_t TwoPhases::mapped_receives() const {
  return phases_[0]->mapped_receives() + phases_[1]->mapped_receives();
}

std::size_t TwoPhases::repaired_messages() const {
  return phases_[0]->repaired_messages() + phases_[1]->repaired_messages();
}

bool TwoPhases::left_unmatched() const {
  return phases_[0]->left_unmatched() || phases_[1]->left_unmatched();
}

std::size_t TwoPhases::array_copies() const {
  return phases_[0]->array_copies() + phases_[1]->array_copies();
}

std::size_t TwoPhases::single_copy_across_nodes() const {
  return phases_[0]->single_copy_across_nodes() + phases_[1]->single_copy_across_nodes();
}

std::unique_ptr<Executor> make_executor(MPI_Comm comm, const std::vector<int> &node_ids,
                                        RankPlan plan, std::size_t element_size, Index lld_src,
                                        Index lld_dst, ScheduleChoice schedule, int tag) {
  if (schedule.phases) {
    return std::make_unique<TwoPhases>(comm, node_ids, std::move(plan), element_size, lld_src,
                                       lld_dst, std::move(schedule), tag);
  }
  return std::make_unique<OnePhase>(comm, node_ids, std::move(plan), element_size, lld_src, lld_dst,
                                    std::move(schedule), tag);
}

std::unique_ptr<Executor> make_executor(MPI_Comm comm, const std::vector<int> &node_ids,
                                        NdRankPlan plan, std::size_t element_size,
                                        const Strides &src_strides, const Strides &dst_strides,
                                        ScheduleChoice schedule, int tag) {
  if (schedule.nd_phases) {
    return std::make_unique<TwoPhases>(comm, node_ids, plan, element_size, src_strides, dst_strides,
                                       std::move(schedule), tag);
  }
  return std::make_unique<OnePhase>(comm, node_ids, std::move(plan), element_size, src_strides,
                                    dst_strides, std::move(schedule), tag);
}

std::unique_ptr<Executor> make_executor(MPI_Comm comm, RankPlan plan, std::size_t element_size,
                                        Index lld_src, Index lld_dst, ScheduleChoice schedule,
                                        int tag) {
  std::unique_ptr<Executor> executor =
      make_executor(comm, node_ids(comm), std::move(plan), element_size, lld_src, lld_dst,
                    std::move(schedule), tag);
  executor->decide_ways_alone();
  return executor;
}

} // namespace redist
