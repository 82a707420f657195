#pragma once
// Which way each message takes. On the first execution every sender tells its receivers who it
// is (and whether its source array is a shared array); each receiver chooses the way of each
// message from a sender on its node (as MPI groups nodes, nodes.hpp: others are always `sent`)
// (single_copy::cheapest_way, or the way REDIST_SINGLE_COPY forces), maps what that way reads, and
// answers with the way for this execution and the one from the second on. `mapped` waits for the
// second: its first pack faults in the pages of the memory file, which costs more than a single
// plan execution gains.

#include "array_copy.hpp"
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
  Negotiation(Pieces &pieces, const NodeMap &nodes, int tag, Index lld_src, ArrayCopy &arrays,
              MappedRead &mapped);

  [[nodiscard]] bool done() const { return done_; }
  /// REDIST_SINGLE_COPY as it was when the plan was made (constructed): `never` keeps this
  /// process from reading its peers and from being read by them, for this plan.
  [[nodiscard]] single_copy::Mode mode() const { return mode_; }
  /// The first execution's exchange, from source array a; `send_buffer` is the memory file
  /// receivers may map. Collective over the plan's communicator: ends with an agreement (one
  /// MPI_Allreduce) on whether a control message failed anywhere; if one did, every message
  /// of the plan is `sent` on every rank (failed() says so), and the execution goes on.
  void run(Requests &requests, const std::byte *a, const single_copy::SharedBuffer &send_buffer);
  /// Every message `sent`, from the first execution on, without run(): every rank calls it
  /// (agreed where the plan was made) or none does.
  void settle_all_sent();
  /// Whether the negotiation failed somewhere (every message `sent`).
  [[nodiscard]] bool failed() const { return failed_; }
  /// Send plan.sends[i] (send) or receive plan.recvs[i] through MPI from now on, after a failed
  /// single-copy read (both ends call it: the repair's agreement tells them).
  void fall_back(bool send, std::size_t i);
  /// Whether the ways from the second execution on are in use.
  [[nodiscard]] bool later_in_use() const { return later_in_use_; }
  void use_later();
  /// Whether every message of this rank goes by Way::sent from the next execution on (the
  /// later ways: in use from the second execution, and where fall_back() sends).
  [[nodiscard]] bool later_all_sent() const;

  [[nodiscard]] single_copy::Way send_way(std::size_t i) const { return send_way_[i]; }
  [[nodiscard]] single_copy::Way recv_way(std::size_t i) const { return recv_way_[i]; }
  /// Each receive's sender (valid once done()).
  [[nodiscard]] const std::vector<single_copy::Identity> &senders() const { return senders_; }
  [[nodiscard]] std::size_t single_copy_sends() const;
  [[nodiscard]] std::size_t single_copy_receives() const;
  [[nodiscard]] std::size_t mapped_receives() const;

private:
  enum Kind : std::uint8_t { kSend, kIdentity, kWays };
  /// Every way, now and later, Way::sent.
  void send_all();
  Pieces &pieces_;
  const NodeMap &nodes_;
  int tag_;
  Index lld_src_;
  ArrayCopy &arrays_;
  MappedRead &mapped_;
  single_copy::Mode mode_;
  bool done_ = false; // set once the ways are agreed, never before the exchange
  bool failed_ = false;
  bool later_in_use_ = false;
  std::uint64_t probe_ = 0;
  single_copy::Identity identity_;
  std::vector<single_copy::Identity> senders_; // per receive
  std::vector<std::int64_t> ways_in_;          // per send: the receiver's answer
  std::vector<std::int64_t> ways_out_;         // per receive
  std::vector<single_copy::Way> send_way_;
  std::vector<single_copy::Way> recv_way_;
  std::vector<single_copy::Way> later_send_way_;
  std::vector<single_copy::Way> later_recv_way_;
};

} // namespace redist
