#pragma once
// The way `sent`: packed, sent and received by MPI, and unpacked as soon as every piece of the
// message arrived.

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
                 std::byte *buffer) override;
  void complete(Requests &requests, RequestInfo info, std::byte *b) override;
  void failed(Requests &requests, RequestInfo info) override;

private:
  enum Kind : std::uint8_t { kSend, kData };
  const Pieces &pieces_;
  int tag_;
  std::vector<int> pieces_pending_; // per receive: MPI messages not yet arrived
};

} // namespace redist
