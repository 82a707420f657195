#include "exchange_buffers.hpp"

#include <algorithm>
#include <cstdint>

namespace redist {
namespace {

std::vector<std::size_t> offsets_of(const std::vector<Peer> &peers, std::size_t element_size) {
  std::vector<std::size_t> offsets;
  offsets.reserve(peers.size() + 1);
  std::size_t offset = 0;
  for (const Peer &peer : peers) {
    offsets.push_back(offset);
    offset += static_cast<std::size_t>(peer.elements) * element_size;
  }
  offsets.push_back(offset);
  return offsets;
}

} // namespace

ExchangeBuffers::ExchangeBuffers(const RankPlan &plan, std::size_t element_size,
                                 const ScheduleChoice &schedule, bool shareable)
    : all_at_once_(schedule.strategy == Strategy::all_at_once),
      send_offsets_(offsets_of(plan.sends, element_size)),
      recv_offsets_(offsets_of(plan.recvs, element_size)) {
  const Index chunk = schedule.chunk_elements > 0 ? schedule.chunk_elements : INT64_MAX;
  for (const RankStep &step : schedule.steps) {
    step_send_bytes_ =
        std::max(step_send_bytes_,
                 static_cast<std::size_t>(std::min(step.send_count, chunk)) * element_size);
    step_recv_bytes_ =
        std::max(step_recv_bytes_,
                 static_cast<std::size_t>(std::min(step.recv_count, chunk)) * element_size);
  }
  if (!all_at_once_) { // one step's buffer, reused by every step: its pages fault in once
    segment_ = single_copy::SharedBuffer(step_send_bytes_, shareable);
  } else if (!plan.sends.empty()) {
    send_buffer_ = std::make_unique_for_overwrite<std::byte[]>(send_offsets_.back());
    if (shareable) {
      segment_ = single_copy::SharedBuffer(send_offsets_.back(), true);
    }
  }
  recv_buffer_ = std::make_unique_for_overwrite<std::byte[]>(all_at_once_ ? recv_offsets_.back()
                                                                          : step_recv_bytes_);
}

std::byte *ExchangeBuffers::send(std::size_t i, bool shared) const {
  if (!all_at_once_) {
    return segment_.data();
  }
  return (shared || !send_buffer_ ? segment_.data() : send_buffer_.get()) + send_offsets_[i];
}

std::byte *ExchangeBuffers::plain_send(std::size_t i) const {
  return all_at_once_ && send_buffer_ ? send_buffer_.get() + send_offsets_[i] : nullptr;
}

std::byte *ExchangeBuffers::receive(std::size_t i) const {
  return recv_buffer_.get() + (all_at_once_ ? recv_offsets_[i] : 0);
}

std::size_t ExchangeBuffers::bytes() const {
  if (all_at_once_) {
    return send_offsets_.back() + recv_offsets_.back();
  }
  return step_send_bytes_ + step_recv_bytes_;
}

} // namespace redist
