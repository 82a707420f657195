#pragma once
// The message buffers of one rank's part of a plan, sized and allocated when the plan is made
// (where running out of memory is agreed between the processes, never in an execution) and
// reused by every execution. Not initialised: untouched pages stay free.

#include "plan.hpp"
#include "planner.hpp"
#include "single_copy.hpp"

#include <cstddef>
#include <memory>
#include <vector>

namespace redist {

class ExchangeBuffers {
public:
  ExchangeBuffers() = default;
  /// All at once: a buffer holding every send packed (and, where `shareable`, the same layout
  /// in a memory file receivers may map: Way::mapped), and one holding every receive.
  /// In steps: one step's send (a memory file where `shareable`) and one step's receive,
  /// at most a chunk each, reused by every step.
  ExchangeBuffers(const RankPlan &plan, std::size_t element_size, const ScheduleChoice &schedule,
                  bool shareable);

  /// Where send i is packed: at its offset in the all-at-once buffers, or at the start of a
  /// step's; in the memory file where `shared` (its way maps it) or there is no plain buffer.
  [[nodiscard]] std::byte *send(std::size_t i, bool shared) const;
  /// Send i's plain buffer (all at once), null in steps.
  [[nodiscard]] std::byte *plain_send(std::size_t i) const;
  /// Where receive i lands: at its offset in the all-at-once buffer, or at the start of a
  /// step's.
  [[nodiscard]] std::byte *receive(std::size_t i) const;
  /// The memory file receivers map.
  [[nodiscard]] single_copy::SharedBuffer &segment() { return segment_; }
  /// Bytes received by every message (all at once).
  [[nodiscard]] std::size_t received_bytes() const { return recv_offsets_.back(); }
  /// Bytes of the buffers an execution uses.
  [[nodiscard]] std::size_t bytes() const;

private:
  bool all_at_once_ = true;
  std::vector<std::size_t> send_offsets_; // byte offset of each send, and the end
  std::vector<std::size_t> recv_offsets_;
  std::size_t step_send_bytes_ = 0; // in steps: largest chunk sent / received
  std::size_t step_recv_bytes_ = 0;
  std::unique_ptr<std::byte[]> send_buffer_;
  single_copy::SharedBuffer segment_;
  std::unique_ptr<std::byte[]> recv_buffer_;
};

} // namespace redist
