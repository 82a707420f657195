#include "negotiation.hpp"

#include "transport.hpp"

#include <algorithm>

namespace redist {

Negotiation::Negotiation(Pieces &pieces, const NodeMap &nodes, int tag, Index lld_src,
                         ArrayCopy &arrays, MappedRead &mapped)
    : pieces_(pieces), nodes_(nodes), tag_(tag), lld_src_(lld_src), arrays_(arrays),
      mapped_(mapped), mode_(single_copy::mode_from_environment()),
      senders_(pieces.plan().recvs.size()), ways_in_(pieces.plan().sends.size()),
      ways_out_(pieces.plan().recvs.size()),
      send_way_(pieces.plan().sends.size(), single_copy::Way::sent),
      recv_way_(pieces.plan().recvs.size(), single_copy::Way::sent), later_send_way_(send_way_),
      later_recv_way_(recv_way_) {}

void Negotiation::run(Requests &requests, const std::byte *a,
                      const single_copy::SharedBuffer &send_buffer) {
  const RankPlan &plan = pieces_.plan();
  // A batch's `a` is its arrays' pointers: no receiver reads them.
  identity_ = single_copy::identify(probe_, lld_src_, send_buffer,
                                    pieces_.batch_operations().empty() ? a : nullptr);
  identity_.strides = pieces_.source_strides();
  const single_copy::Mode mode = mode_; // read when the plan was made, not now
  // Readable by the peers as the plan's mode says (never: node 0, nobody reads this process).
  identity_.node = mode == single_copy::Mode::never ? 0 : single_copy::node_identity();
  requests.clear();
  // A receiver answers every sender, whether its identity arrived or not (then: sent), so
  // that no sender waits for an answer that never comes.
  const auto answer = [&](std::size_t i) {
    ways_out_[i] = static_cast<std::int64_t>(recv_way_[i]) |
                   static_cast<std::int64_t>(later_recv_way_[i]) << 8;
    requests.post(true, bytes_of(ways_out_[i]), sizeof(std::int64_t), tag_ + kReplyTag,
                  {nullptr, kSend, static_cast<int>(i), plan.recvs[i].rank, 0, 0, nullptr}, true);
  };
  std::vector<char> lost(plan.recvs.size(), 0); // identities whose post failed: answered now
  for (std::size_t i = 0; i < plan.recvs.size(); ++i) {
    const bool posted = requests.post(
        false, bytes_of(senders_[i]), sizeof(single_copy::Identity), tag_ + kAddressTag,
        {nullptr, kIdentity, static_cast<int>(i), plan.recvs[i].rank, 0, 0, nullptr}, true);
    lost[i] = posted ? 0 : 1;
  }
  const std::size_t identities = requests.size();
  for (std::size_t i = 0; i < plan.sends.size(); ++i) {
    const int rank = plan.sends[i].rank;
    requests.post(false, bytes_of(ways_in_[i]), sizeof(std::int64_t), tag_ + kReplyTag,
                  {nullptr, kWays, static_cast<int>(i), rank, 0, 0, nullptr}, true);
    requests.post(true, bytes_of(identity_), sizeof identity_, tag_ + kAddressTag,
                  {nullptr, kSend, static_cast<int>(i), rank, 0, 0, nullptr}, true);
  }
  for (std::size_t i = 0; i < plan.recvs.size(); ++i) {
    if (lost[i] != 0) {
      answer(i);
    }
  }
  const auto lost_identity = [&](std::size_t k) {
    answer(static_cast<std::size_t>(requests.info(k).peer));
  };
  requests.wait_each(
      0, identities, "MPI_Waitany (single-copy negotiation)",
      [&](std::size_t k) {
        const auto i = static_cast<std::size_t>(requests.info(k).peer);
        const single_copy::Identity &sender = senders_[i];
        // Single copy only inside a node as MPI sees it (a virtual cluster's nodes may share
        // the boot id and pid namespace that can_read trusts), and where the kernel allows.
        if (mode != single_copy::Mode::never && nodes_.recv_inside(i) &&
            single_copy::can_read(sender)) {
          pieces_.set_sender_strides(i, sender.strides);
          single_copy::PieceCounts counts = pieces_.estimate_pieces(plan.recvs[i]);
          counts.combines = pieces_.combines(); // this (the first) execution's operation
          const bool array = arrays_.map(i, sender.pid, sender.array);
          const single_copy::Way unmapped =
              single_copy::cheapest_way(counts, mode, {.buffer = false, .array = array});
          single_copy::Way later =
              single_copy::cheapest_way(counts, mode, {.buffer = true, .array = array});
          if (later == single_copy::Way::mapped && !mapped_.map(i, sender.pid, sender.buffer)) {
            later = unmapped;
          }
          const bool by_model = mode == single_copy::Mode::automatic ||
                                mode == single_copy::Mode::always; // else forced from the start
          recv_way_[i] = later == single_copy::Way::mapped && by_model ? unmapped : later;
          later_recv_way_[i] = later;
        }
        answer(i);
      },
      lost_identity);
  requests.wait_each(
      identities, requests.size(), "MPI_Waitany (single-copy negotiation)",
      [&](std::size_t k) {
        if (requests.info(k).kind == kWays) {
          const auto i = static_cast<std::size_t>(requests.info(k).peer);
          send_way_[i] = static_cast<single_copy::Way>(ways_in_[i] & 0xFF);
          later_send_way_[i] = static_cast<single_copy::Way>(ways_in_[i] >> 8 & 0xFF);
        }
      },
      [](std::size_t) {});
  // Agreed before any message relies on it: if a control message failed anywhere, the two
  // ends of a message could disagree on its way, so every message of the plan is sent
  // through MPI from now on, on every rank. The failure itself does not fail the execution.
  int failed = requests.failure().empty() ? 0 : 1;
  const int rc = MPI_Allreduce(MPI_IN_PLACE, &failed, 1, MPI_INT, MPI_MAX, requests.comm());
  if (rc != MPI_SUCCESS) {
    requests.record(rc, "MPI_Allreduce (single-copy negotiation)", -1);
    failed = 1;
  } else {
    requests.forget_failure();
  }
  if (failed != 0) {
    send_all();
    failed_ = true;
  }
  done_ = true;
}

void Negotiation::send_all() {
  std::fill(send_way_.begin(), send_way_.end(), single_copy::Way::sent);
  std::fill(recv_way_.begin(), recv_way_.end(), single_copy::Way::sent);
  later_send_way_ = send_way_;
  later_recv_way_ = recv_way_;
}

void Negotiation::fall_back(bool send, std::size_t i) {
  if (send) {
    send_way_[i] = single_copy::Way::sent;
    later_send_way_[i] = single_copy::Way::sent;
  } else {
    recv_way_[i] = single_copy::Way::sent;
    later_recv_way_[i] = single_copy::Way::sent;
  }
}

void Negotiation::settle_all_sent() {
  send_all();
  done_ = true;
  later_in_use_ = true;
}

void Negotiation::use_later() {
  // Same sizes: copying allocates nothing.
  send_way_ = later_send_way_;
  recv_way_ = later_recv_way_;
  later_in_use_ = true;
}

bool Negotiation::later_all_sent() const {
  const auto sent = [](single_copy::Way way) { return way == single_copy::Way::sent; };
  return std::all_of(later_send_way_.begin(), later_send_way_.end(), sent) &&
         std::all_of(later_recv_way_.begin(), later_recv_way_.end(), sent);
}

std::size_t Negotiation::single_copy_sends() const {
  return send_way_.size() - static_cast<std::size_t>(std::count(send_way_.begin(), send_way_.end(),
                                                                single_copy::Way::sent));
}

std::size_t Negotiation::single_copy_receives() const {
  return recv_way_.size() - static_cast<std::size_t>(std::count(recv_way_.begin(), recv_way_.end(),
                                                                single_copy::Way::sent));
}

std::size_t Negotiation::mapped_receives() const {
  return static_cast<std::size_t>(
      std::count(recv_way_.begin(), recv_way_.end(), single_copy::Way::mapped));
}

} // namespace redist
