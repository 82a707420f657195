#pragma once
// The single-copy ways (direct, bounced, read_packed, mapped) as transports: the sender packs
// the message if its way needs it and sends its address; the receiver moves the message with
// the way's MessageRead and replies 0 or the errno of the failure; the sender checks the
// reply. One instance per way, each with its own per-peer addresses and replies. Control
// messages are never split. A failed read, or a failed control message, marks the message for
// the executor's repair (sent again through MPI); a receiver whose address message failed
// still replies (kAddressLost), so its sender never waits for a reply that does not come.

#include "message_read.hpp"
#include "pieces.hpp"
#include "single_copy.hpp"
#include "transport.hpp"

#include <cstdint>
#include <vector>

namespace redist {

class SingleCopyTransport final : public Transport {
public:
  /// `senders`: the identity of each receive's sender; `from_array`: per send, whether its
  /// receiver copies a `mapped` message from this rank's source array when that is a shared
  /// array (both negotiated, outlive this).
  SingleCopyTransport(const Pieces &pieces, int tag, single_copy::Way way, MessageRead &read,
                      const std::vector<single_copy::Identity> &senders,
                      const std::vector<char> &from_array);

  [[nodiscard]] SendBuffer send_buffer() const override;
  /// `mapped` from a shared array (redist_alloc) to a receiver that copies from it: not packed.
  [[nodiscard]] bool packs(std::size_t i, const std::byte *a) const override;
  void post_receive(Requests &requests, std::size_t i, Index lo, Index hi,
                    std::byte *buffer) override;
  void post_send(Requests &requests, std::size_t i, Index lo, Index hi, const std::byte *a,
                 std::byte *buffer, bool packed) override;
  void complete(Requests &requests, RequestInfo info, std::byte *b) override;
  void failed(Requests &requests, RequestInfo info) override;

  /// The reply of a receiver whose address message failed: nothing was read.
  static constexpr std::int64_t kAddressLost = -2;

private:
  /// kSend, kReply: the sender's address out and reply in (plan.sends[peer]); kAddress,
  /// kReplySent: the receiver's address in and reply out (plan.recvs[peer]).
  enum Kind : std::uint8_t { kSend, kAddress, kReply, kReplySent };
  void reply(Requests &requests, const RequestInfo &info, std::int64_t value);
  /// The shared array holding `a` where send i's receiver may read or copy from it (a reading
  /// way; `mapped` to a receiver that copies from arrays), else none: one lookup a send.
  [[nodiscard]] single_copy::Segment array_read(std::size_t i, const std::byte *a) const;
  /// Whether the sender packs, given array_read's answer.
  [[nodiscard]] bool packs_given(const single_copy::Segment &array) const;
  const Pieces &pieces_;
  int tag_;
  single_copy::Way way_;
  MessageRead &read_;
  const std::vector<single_copy::Identity> &senders_;
  const std::vector<char> &from_array_;
  std::vector<single_copy::Address> address_out_; // per send: what the reader reads
  std::vector<std::int64_t> reply_in_;            // per send: 0 or the reader's errno
  std::vector<single_copy::Address> address_in_;  // per receive
  std::vector<std::int64_t> reply_out_;           // per receive
};

} // namespace redist
