#include "staged.hpp"

#include "copy.hpp"
#include "transport.hpp"

#include <unistd.h>

#include <algorithm>

namespace redist {

namespace {

// Apart from the data, the single-copy control messages and the repair (transport.hpp).
constexpr int kStagedTag = 64;
constexpr std::size_t kLineBytes = 64;

std::size_t message_bytes(const Peer &peer, std::size_t element_size) {
  return static_cast<std::size_t>(peer.elements) * element_size;
}

} // namespace

StagedExchange::StagedExchange(const Pieces &pieces, const std::vector<std::size_t> &send_offsets,
                               int tag)
    : pieces_(pieces), send_offsets_(send_offsets), tag_(tag + kStagedTag),
      out_(pieces.plan().sends.size()), in_(pieces.plan().recvs.size()),
      mappings_(pieces.plan().recvs.size()), sources_(pieces.plan().recvs.size()) {}

bool StagedExchange::small_enough() const {
  const RankPlan &plan = pieces_.plan();
  const auto small = [&](const Peer &peer) {
    return message_bytes(peer, pieces_.element_size()) <= kMaxMessageBytes;
  };
  return std::all_of(plan.sends.begin(), plan.sends.end(), small) &&
         std::all_of(plan.recvs.begin(), plan.recvs.end(), small);
}

void StagedExchange::set_up(Requests &requests) {
  const RankPlan &plan = pieces_.plan();
  ready_ = false;
  slot_ = 0;
  slot_bytes_ = (send_offsets_.back() + kLineBytes - 1) / kLineBytes * kLineBytes;
  bool shared = true;
  if (slot_bytes_ > 0) {
    slots_ = single_copy::SharedBuffer(2 * slot_bytes_, true);
    shared = slots_.fd() >= 0;
  }
  for (std::size_t i = 0; i < plan.sends.size(); ++i) {
    // pid 0: no receiver maps it, so none is ready.
    out_[i] = {shared ? static_cast<std::int64_t>(getpid()) : 0, slots_.segment(), send_offsets_[i],
               slot_bytes_};
  }
  requests.clear();
  for (std::size_t i = 0; i < plan.recvs.size(); ++i) {
    requests.post(false, bytes_of(in_[i]), sizeof(Where), tag_,
                  {nullptr, kWhere, static_cast<int>(i), plan.recvs[i].rank, 0, 0, nullptr}, true);
  }
  const std::size_t receives = requests.size();
  for (std::size_t i = 0; i < plan.sends.size(); ++i) {
    requests.post(true, bytes_of(out_[i]), sizeof(Where), tag_,
                  {nullptr, kSend, static_cast<int>(i), plan.sends[i].rank, 0, 0, nullptr}, true);
  }
  std::size_t mapped = 0;
  requests.wait_each(
      0, receives, "MPI_Waitany (staged exchange)",
      [&](std::size_t k) {
        const auto i = static_cast<std::size_t>(requests.info(k).peer);
        const Where &where = in_[i];
        if (!mappings_[i].map(where.pid, where.slots)) {
          return;
        }
        const std::size_t bytes = message_bytes(plan.recvs[i], pieces_.element_size());
        for (std::size_t slot = 0; slot < 2; ++slot) {
          sources_[i][slot] =
              mappings_[i].at(where.slots.address + slot * where.slot_bytes + where.offset, bytes);
        }
        if (sources_[i][0] != nullptr && sources_[i][1] != nullptr) {
          ++mapped;
        }
      },
      [](std::size_t) {});
  requests.wait_each(
      receives, requests.size(), "MPI_Waitany (staged exchange)", [](std::size_t) {},
      [](std::size_t) {});
  ready_ = shared && mapped == plan.recvs.size() && requests.failure().empty();
  requests.clear();
}

void StagedExchange::pack(const std::byte *a) {
  const RankPlan &plan = pieces_.plan();
  std::byte *slot = slots_.data() + slot_ * slot_bytes_;
  for (std::size_t i = 0; i < plan.sends.size(); ++i) {
    pieces_.pack(plan.sends[i], a, slot + send_offsets_[i]);
  }
  streaming_fence(); // the receivers read the slot from other processes
}

void StagedExchange::unpack(std::byte *b) {
  const RankPlan &plan = pieces_.plan();
  for (std::size_t i = 0; i < plan.recvs.size(); ++i) {
    pieces_.unpack(plan.recvs[i], sources_[i][slot_], b);
  }
  slot_ ^= 1U;
}

} // namespace redist
