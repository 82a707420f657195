#pragma once
// The way `mapped`: the sender packs the message into a memory file (SharedBuffer) the
// receiver has mapped; the receiver unpacks it from its mapping. Where the sender's source
// array is a shared array (redist_alloc) and the receiver can find the message's pieces in it,
// the sender packs nothing and the receiver copies the pieces from the array's mapping: one
// pass instead of two. Owns the buffers' mappings, per receive.

#include "array_copy.hpp"
#include "message_read.hpp"
#include "pieces.hpp"

#include <vector>

namespace redist {

class MappedRead final : public MessageRead {
public:
  MappedRead(const Pieces &pieces, ArrayCopy &arrays)
      : pieces_(pieces), arrays_(arrays), buffers_(pieces.plan().recvs.size()) {}

  /// Map process pid's send buffer `buffer` for receive i; false if it cannot be.
  bool map(std::size_t i, std::int64_t pid, const single_copy::Segment &buffer) {
    return buffers_[i].map(pid, buffer);
  }
  int read(std::size_t i, const single_copy::Identity &sender, const single_copy::Address &at,
           Index lo, Index hi, std::byte *b, Index &done) override;

private:
  const Pieces &pieces_;
  ArrayCopy &arrays_;
  std::vector<single_copy::Mapping> buffers_; // per receive
};

} // namespace redist
