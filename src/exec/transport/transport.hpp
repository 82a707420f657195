#pragma once
// One way a message travels between two ranks, behind the interface the executor sequences:
// each side posts its part of moving a message (or a chunk of it), and the transport reacts
// to the completion of the requests it posted. A transport holds the per-peer state of its
// way; which way each message takes is the negotiation's (negotiation.hpp).

#include "index.hpp"
#include "requests.hpp"

#include <cstddef>
#include <cstdint>

namespace redist {

/// Tags of the single-copy control messages, apart from the data (tag) and from the other
/// phase's executors (tag + 1, tag + 2): the address of a message and the reader's reply each
/// execution; the negotiation's identities (on the address tag) and answers (on the reply tag)
/// on the first. Messages repaired after a failure travel on tag + kRepairTag.
inline constexpr int kAddressTag = 16;
inline constexpr int kReplyTag = 32;
inline constexpr int kRepairTag = 48;

template <class T> std::byte *bytes_of(T &value) {
  return reinterpret_cast<std::byte *>(&value);
}

class Transport {
public:
  /// Where the sender packs a message of this way.
  enum class SendBuffer : std::uint8_t {
    none,   ///< nowhere: read from the sender's array, and moved whole in one step
    plain,  ///< the executor's send buffer
    shared, ///< the memory file receivers map
  };

  Transport() = default;
  Transport(const Transport &) = delete;
  Transport &operator=(const Transport &) = delete;
  virtual ~Transport() = default;

  [[nodiscard]] virtual SendBuffer send_buffer() const = 0;
  /// Whether the sender packs send i of an execution from `a` (else its receiver reads `a`).
  [[nodiscard]] virtual bool packs(std::size_t /*i*/, const std::byte * /*a*/) const {
    return send_buffer() != SendBuffer::none;
  }
  /// The receiver's part of moving receive elements [lo, hi) of plan.recvs[i]; `buffer` holds
  /// hi - lo elements if the way needs it.
  virtual void post_receive(Requests &requests, std::size_t i, Index lo, Index hi,
                            std::byte *buffer) = 0;
  /// The sender's part of moving send elements [lo, hi) of plan.sends[i] from `a`; `buffer`
  /// (hi - lo elements, where send_buffer() says) is where it packs, or where the executor has
  /// packed them already if `packed`.
  virtual void post_send(Requests &requests, std::size_t i, Index lo, Index hi, const std::byte *a,
                         std::byte *buffer, bool packed) = 0;
  /// A request this transport posted completed without error; b is the receiver's array.
  virtual void complete(Requests &requests, RequestInfo info, std::byte *b) = 0;
  /// A request this transport posted failed (at its post, or completed with an error): mark
  /// its message for the repair, and post what the peer waits for, if anything.
  virtual void failed(Requests &requests, RequestInfo info) = 0;
};

} // namespace redist
