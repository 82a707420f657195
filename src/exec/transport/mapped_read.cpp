#include "mapped_read.hpp"

#include <cerrno>

namespace redist {

int MappedRead::read(std::size_t i, const single_copy::Identity &sender,
                     const single_copy::Address &at, Index lo, Index hi, std::byte *b,
                     Index &done) {
  done = lo;
  if (at.array.fd >= 0) { // the sender's shared array, not packed: copied from it or nothing
    const int copied = arrays_.copy(i, sender.pid, sender.lld, at, lo, hi, b);
    done = copied == 0 ? hi : lo;
    return copied;
  }
  const std::byte *in =
      buffers_[i].at(at.address, static_cast<std::size_t>(hi - lo) * pieces_.element_size());
  if (in == nullptr) {
    return EFAULT;
  }
  pieces_.unpack(pieces_.plan().recvs[i], in, b, lo, hi);
  done = hi;
  return 0;
}

} // namespace redist
