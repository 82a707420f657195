#include "array_copy.hpp"

#include <algorithm>
#include <cerrno>

namespace redist {

ArrayCopy::ArrayCopy(const Pieces &pieces)
    : pieces_(pieces), arrays_(pieces.plan().recvs.size()), copied_(pieces.plan().recvs.size()) {}

bool ArrayCopy::map(std::size_t i, std::int64_t pid, const single_copy::Segment &array) {
  return arrays_[i].map(pid, array);
}

int ArrayCopy::copy(std::size_t i, std::int64_t pid, Index sender_lld,
                    const single_copy::Address &at, Index lo, Index hi, std::byte *b) {
  if (arrays_[i].id() != at.array.id) { // another array than the last one: map it
    arrays_[i].map(pid, at.array);
  }
  if (arrays_[i].empty()) {
    return -1;
  }
  const Peer &peer = pieces_.plan().recvs[i];
  const auto extent = static_cast<std::size_t>(pieces_.source_extent(peer, sender_lld));
  const std::byte *a = arrays_[i].at(at.address, extent * pieces_.element_size());
  if (a == nullptr) {
    return EFAULT; // the sender's array ends before the message does
  }
  pieces_.copy_from_array(peer, a, sender_lld, b, lo, hi);
  copied_[i] = 1;
  return 0;
}

std::size_t ArrayCopy::copies() const {
  return static_cast<std::size_t>(std::count(copied_.begin(), copied_.end(), 1));
}

void ArrayCopy::forget_copies() {
  std::fill(copied_.begin(), copied_.end(), 0);
}

} // namespace redist
