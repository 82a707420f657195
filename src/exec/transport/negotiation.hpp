#pragma once
// Which way each message takes, decided once, when the plan is made: every sender tells its
// receivers who it is; each receiver chooses the way of each message from a sender on its node
// (as MPI groups nodes, nodes.hpp: others are always `sent`) (single_copy::cheapest_way, or the
// way REDIST_SINGLE_COPY forces), maps what that way reads, and answers with the way.

#include "mapped_read.hpp"
#include "nodes.hpp"
#include "pieces.hpp"
#include "requests.hpp"
#include "single_copy.hpp"

#include <cstdint>
#include <vector>

namespace redist {

class Negotiation {
public:
  /// `nodes` (kept by reference) says which peers share this rank's node. An N-d plan's
  /// pieces learn each sender's strides here (Pieces::set_sender_strides).
  Negotiation(Pieces &pieces, const NodeMap &nodes, int tag, Index lld_src, MappedRead &mapped);

  /// REDIST_SINGLE_COPY as it was when the plan was made (constructed): `never` keeps this
  /// process from reading its peers and from being read by them, for this plan.
  [[nodiscard]] single_copy::Mode mode() const { return mode_; }
  /// The exchange of identities and ways, when the plan is made; `send_buffer` is the memory
  /// file receivers may map. Collective over the plan's communicator: ends with an agreement
  /// (one MPI_Allreduce) on whether a control message failed anywhere, and then every message
  /// of the plan is `sent` on every rank, and on whether every message of every rank is `sent`
  /// (all_sent_everywhere()).
  void run(Requests &requests, const single_copy::SharedBuffer &send_buffer);
  /// Every message `sent`, without run(): every rank calls it (agreed where the plan was made)
  /// or none does.
  void settle_all_sent();
  /// Whether every message of every rank goes by Way::sent (agreed by run()).
  [[nodiscard]] bool all_sent_everywhere() const { return all_sent_everywhere_; }

  [[nodiscard]] single_copy::Way send_way(std::size_t i) const { return send_way_[i]; }
  [[nodiscard]] single_copy::Way recv_way(std::size_t i) const { return recv_way_[i]; }
  /// Each receive's sender (valid once run()).
  [[nodiscard]] const std::vector<single_copy::Identity> &senders() const { return senders_; }
  /// Per send: whether its receiver copies the message from this rank's source array when it
  /// goes `mapped` and that array is a shared array (MappedRead; valid once run()).
  [[nodiscard]] const std::vector<char> &from_array() const { return send_from_array_; }
  [[nodiscard]] std::size_t single_copy_sends() const;
  [[nodiscard]] std::size_t single_copy_receives() const;
  [[nodiscard]] std::size_t mapped_receives() const;

private:
  enum Kind : std::uint8_t { kSend, kIdentity, kWays };
  /// Every way Way::sent.
  void send_all();
  /// This process's part of run(): identities out, ways chosen and answered, ways in.
  void exchange(Requests &requests, const single_copy::SharedBuffer &send_buffer);
  /// A block grid plan's receive i: its tiles' offsets in the sender's array, read from the
  /// sender's memory (Pieces::grid_directory), so that the message may be read from there.
  void read_grid_sources(std::size_t i, const single_copy::Identity &sender);
  /// The way of a message from `sender` (plan.recvs[i]), mapping what that way reads.
  single_copy::Way choose(std::size_t i, const single_copy::Identity &sender);
  Pieces &pieces_;
  const NodeMap &nodes_;
  int tag_;
  Index lld_src_;
  MappedRead &mapped_;
  single_copy::Mode mode_;
  bool all_sent_everywhere_ = true;
  std::uint64_t probe_ = 0;
  single_copy::Identity identity_;
  std::vector<single_copy::Identity> senders_; // per receive
  std::vector<std::int64_t> ways_in_;          // per send: the receiver's answer
  std::vector<std::int64_t> ways_out_;         // per receive
  std::vector<single_copy::Way> send_way_;
  std::vector<single_copy::Way> recv_way_;
  std::vector<char> recv_from_array_; // per receive: the pieces can be found in the sender's array
  std::vector<char> send_from_array_; // per send: the receiver's answer
};

} // namespace redist
