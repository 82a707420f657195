#pragma once
// The way `sent`: packed, sent and received by MPI, and unpacked as soon as every piece of the
// message arrived (or, deferred, after the executor's agreement).

#include "pieces.hpp"
#include "transport.hpp"

#include <vector>

namespace redist {

class Sent final : public Transport {
public:
  Sent(const Pieces &pieces, int tag)
      : pieces_(pieces), tag_(tag), pieces_pending_(pieces.plan().recvs.size()) {}

  [[nodiscard]] SendBuffer send_buffer() const override { return SendBuffer::plain; }
  void post_receive(Requests &requests, std::size_t i, Index lo, Index hi,
                    std::byte *buffer) override;
  void post_send(Requests &requests, std::size_t i, Index lo, Index hi, const std::byte *a,
                 std::byte *buffer, bool packed) override;
  void complete(Requests &requests, RequestInfo info, std::byte *b) override;
  void failed(Requests &requests, RequestInfo info) override;
  /// Deferred: a message whose pieces all arrived is left in its buffer (arrived() says so)
  /// for the executor to unpack after its agreement, instead of at once.
  void defer(bool on) { deferred_ = on; }
  [[nodiscard]] bool arrived(std::size_t i) const { return pieces_pending_[i] == 0; }

private:
  enum Kind : std::uint8_t { kSend, kData };
  const Pieces &pieces_;
  int tag_;
  std::vector<int> pieces_pending_; // per receive: MPI messages not yet arrived
  bool deferred_ = false;
};

/// Unpack receive elements [lo, hi) of plan().recvs[i] from `in` (packed from lo) into b. With
/// an operation only those not combined yet in this execution (Requests::note_combined; the
/// repair receives a whole message again), and they are noted.
void unpack_once(const Pieces &pieces, Requests &requests, std::size_t i, const std::byte *in,
                 std::byte *b, Index lo, Index hi);

} // namespace redist
