#pragma once
// The way `mapped`: the sender packs the message into a memory file (SharedBuffer) the
// receiver has mapped; the receiver unpacks it from its mapping. Owns the mappings, per
// receive.

#include "message_read.hpp"
#include "pieces.hpp"

#include <vector>

namespace redist {

class MappedRead final : public MessageRead {
public:
  explicit MappedRead(const Pieces &pieces)
      : pieces_(pieces), buffers_(pieces.plan().recvs.size()) {}

  /// Map process pid's send buffer `buffer` for receive i; false if it cannot be.
  bool map(std::size_t i, std::int64_t pid, const single_copy::Segment &buffer) {
    return buffers_[i].map(pid, buffer);
  }
  int read(std::size_t i, const single_copy::Identity &sender, const single_copy::Address &at,
           Index lo, Index hi, std::byte *b, Index &done) override;

private:
  const Pieces &pieces_;
  std::vector<single_copy::Mapping> buffers_; // per receive
};

} // namespace redist
