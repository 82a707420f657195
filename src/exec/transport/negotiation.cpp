#include "negotiation.hpp"

#include "collective.hpp"
#include "transport.hpp"

#include <algorithm>
#include <climits>
#include <cstdint>

namespace redist {

Negotiation::Negotiation(Pieces &pieces, const NodeMap &nodes, int tag, Index lld_src,
                         MappedRead &mapped)
    : pieces_(pieces), nodes_(nodes), tag_(tag), lld_src_(lld_src), mapped_(mapped),
      mode_(single_copy::mode_from_environment()), senders_(pieces.plan().recvs.size()),
      ways_in_(pieces.plan().sends.size()), ways_out_(pieces.plan().recvs.size()),
      send_way_(pieces.plan().sends.size(), single_copy::Way::sent),
      recv_way_(pieces.plan().recvs.size(), single_copy::Way::sent),
      recv_from_array_(pieces.plan().recvs.size(), 0),
      send_from_array_(pieces.plan().sends.size(), 0) {}

single_copy::Way Negotiation::choose(std::size_t i, const single_copy::Identity &sender) {
  // Single copy only inside a node as MPI sees it (a virtual cluster's nodes may share the
  // boot id and pid namespace that can_read trusts), and where the kernel allows.
  if (mode_ == single_copy::Mode::never || !nodes_.recv_inside(i) ||
      !single_copy::can_read(sender)) {
    return single_copy::Way::sent;
  }
  pieces_.set_sender_strides(i, sender.strides);
  read_grid_sources(i, sender);
  const single_copy::PieceCounts counts = pieces_.estimate_pieces(pieces_.plan().recvs[i]);
  const single_copy::Way way = single_copy::cheapest_way(counts, mode_, {.buffer = true});
  if (way == single_copy::Way::mapped && !mapped_.map(i, sender.pid, sender.buffer)) {
    return single_copy::cheapest_way(counts, mode_, {.buffer = false});
  }
  recv_from_array_[i] = way == single_copy::Way::mapped && counts.from_array ? 1 : 0;
  return way;
}

void Negotiation::read_grid_sources(std::size_t i, const single_copy::Identity &sender) {
  const std::size_t words = pieces_.grid_source_words(i);
  if (words == 0 || sender.grid_directory == 0 || sender.grid_entries <= 0 ||
      sender.grid_entries > INT32_MAX) {
    return;
  }
  // A failed read leaves the message packed by its sender, as it was.
  single_copy::Reader reader;
  const auto read = [&](std::uint64_t address, std::vector<Index> &into) {
    reader.start(sender.pid, address, reinterpret_cast<std::byte *>(into.data()), nullptr);
    reader.add(0, 0, into.size() * sizeof(Index));
    return reader.finish();
  };
  std::vector<Index> directory(3 * static_cast<std::size_t>(sender.grid_entries));
  if (!read(sender.grid_directory, directory)) {
    return;
  }
  for (std::size_t e = 0; e < directory.size(); e += 3) {
    if (directory[e] == pieces_.plan().self.rank &&
        directory[e + 2] * Pieces::kGridSourceWords == words && directory[e + 1] >= 0) {
      std::vector<Index> sources(words);
      if (read(sender.grid_sources + static_cast<std::uint64_t>(directory[e + 1]) * sizeof(Index),
               sources)) {
        pieces_.set_grid_sources(i, sources);
      }
      return;
    }
  }
}

void Negotiation::exchange(Requests &requests, const single_copy::SharedBuffer &send_buffer) {
  const RankPlan &plan = pieces_.plan();
  // Readable by the peers as the plan's mode says (never: node 0, nobody reads this process).
  identity_ = single_copy::identify(probe_, lld_src_, send_buffer);
  identity_.strides = pieces_.source_strides();
  identity_.grid_directory = reinterpret_cast<std::uintptr_t>(pieces_.grid_directory().data());
  identity_.grid_sources = reinterpret_cast<std::uintptr_t>(pieces_.grid_sources().data());
  identity_.grid_entries = static_cast<std::int64_t>(pieces_.grid_directory().size() / 3);
  identity_.node = mode_ == single_copy::Mode::never ? 0 : single_copy::node_identity();
  requests.clear();
  // A receiver answers every sender, whether its identity arrived or not (then: sent), so
  // that no sender waits for an answer that never comes.
  const auto answer = [&](std::size_t i) {
    ways_out_[i] = static_cast<std::int64_t>(recv_way_[i]) | (recv_from_array_[i] != 0 ? 0x100 : 0);
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
  requests.wait_each(
      0, identities, "MPI_Waitany (single-copy negotiation)",
      [&](std::size_t k) {
        const auto i = static_cast<std::size_t>(requests.info(k).peer);
        recv_way_[i] = choose(i, senders_[i]);
        answer(i);
      },
      [&](std::size_t k) { answer(static_cast<std::size_t>(requests.info(k).peer)); });
  requests.wait_each(
      identities, requests.size(), "MPI_Waitany (single-copy negotiation)",
      [&](std::size_t k) {
        if (requests.info(k).kind == kWays) {
          const auto i = static_cast<std::size_t>(requests.info(k).peer);
          send_way_[i] = static_cast<single_copy::Way>(ways_in_[i] & 0xFF);
          send_from_array_[i] = (ways_in_[i] & 0x100) != 0 ? 1 : 0;
        }
      },
      [](std::size_t) {});
}

void Negotiation::run(Requests &requests, const single_copy::SharedBuffer &send_buffer) {
  exchange(requests, send_buffer);
  // Agreed before any message relies on it: if a control message failed anywhere, the two
  // ends of a message could disagree on its way, so every message of the plan is sent
  // through MPI, on every rank.
  const auto sent = [](single_copy::Way way) { return way == single_copy::Way::sent; };
  int words[2] = {requests.failure().empty() ? 0 : 1,
                  std::all_of(send_way_.begin(), send_way_.end(), sent) &&
                          std::all_of(recv_way_.begin(), recv_way_.end(), sent)
                      ? 0
                      : 1};
  const int rc = collective::agree_max(requests.comm(), words);
  requests.forget_failure();
  requests.clear();
  if (rc != MPI_SUCCESS || words[0] != 0) {
    send_all();
    return;
  }
  all_sent_everywhere_ = words[1] == 0;
}

void Negotiation::send_all() {
  std::fill(send_way_.begin(), send_way_.end(), single_copy::Way::sent);
  std::fill(recv_way_.begin(), recv_way_.end(), single_copy::Way::sent);
  std::fill(recv_from_array_.begin(), recv_from_array_.end(), 0);
  std::fill(send_from_array_.begin(), send_from_array_.end(), 0);
  all_sent_everywhere_ = true;
}

void Negotiation::settle_all_sent() {
  send_all();
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
