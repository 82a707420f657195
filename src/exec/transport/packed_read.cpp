#include "packed_read.hpp"

#include <algorithm>

namespace redist {

int PackedRead::read(std::size_t i, const single_copy::Identity &sender,
                     const single_copy::Address &at, Index lo, Index hi, std::byte *b,
                     Index &done) {
  done = lo;
  const Peer &peer = pieces_.plan().recvs[i];
  const std::size_t es = pieces_.element_size();
  single_copy::Reader &reader = scratch_.reader;
  std::byte *bounce = scratch_.bounce.get();
  if (pieces_.operation() != nullptr) { // one walk of the pieces, a bounce buffer at a time
    return pieces_.read_combined(peer, sender.lld, lo, hi, true, scratch_, sender.pid, at.address,
                                 b, done);
  }
  if (pieces_.plan().region.kind == Region::Kind::full) {
    // Bounce-sized windows of the message: unpack visits only their columns.
    const auto chunk = static_cast<Index>(single_copy::kBounceBytes / es);
    for (Index position = lo; position < hi; position += chunk) {
      const Index n = std::min(chunk, hi - position);
      reader.start(sender.pid, at.address + static_cast<std::size_t>(position - lo) * es, bounce,
                   nullptr);
      reader.add(0, 0, static_cast<std::size_t>(n) * es);
      if (!reader.finish()) {
        return reader.error();
      }
      pieces_.unpack(peer, bounce, b, position, position + n);
      done = position + n;
    }
    return 0;
  }
  reader.start(sender.pid, at.address, b, bounce, pieces_.streams(peer));
  pieces_.gather(peer, sender.lld, lo, hi, true, reader);
  reader.finish();
  done = reader.error() == 0 ? hi : lo;
  return reader.error();
}

} // namespace redist
