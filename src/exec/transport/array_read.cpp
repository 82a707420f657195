#include "array_read.hpp"

namespace redist {

int ArrayRead::read(std::size_t i, const single_copy::Identity &sender,
                    const single_copy::Address &at, Index lo, Index hi, std::byte *b, Index &done) {
  done = lo;
  if (at.array.fd >= 0) {
    const int copied = arrays_.copy(i, sender.pid, sender.lld, at, lo, hi, b);
    if (copied >= 0) {
      done = copied == 0 ? hi : lo; // a copy from a mapping fails before it writes
      return copied;
    }
  }
  const Peer &peer = pieces_.plan().recvs[i];
  if (pieces_.plan().transposed()) {
    return pieces_.read_transposed(peer, sender.lld, lo, hi, scratch_, sender.pid, at.address, b,
                                   done);
  }
  if (pieces_.operation() != nullptr) {
    return pieces_.read_combined(peer, sender.lld, lo, hi, false, scratch_, sender.pid, at.address,
                                 b, done);
  }
  single_copy::Reader &reader = scratch_.reader;
  reader.start(sender.pid, at.address, b, bounced_ ? scratch_.bounce.get() : nullptr,
               pieces_.streams(peer));
  pieces_.gather(peer, sender.lld, lo, hi, false, reader);
  reader.finish();
  done = reader.error() == 0 ? hi : lo;
  return reader.error();
}

} // namespace redist
