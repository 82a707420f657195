#include "transports.hpp"

namespace redist {

Transports::Transports(Pieces &pieces, const NodeMap &nodes, int tag, Index lld_src)
    : array_copy_(pieces), direct_read_(pieces, scratch_, array_copy_, false),
      bounced_read_(pieces, scratch_, array_copy_, true), packed_read_(pieces, scratch_),
      mapped_read_(pieces, array_copy_), negotiation_(pieces, nodes, tag, lld_src, mapped_read_),
      sent_(pieces, tag), direct_(pieces, tag, single_copy::Way::direct, direct_read_,
                                  negotiation_.senders(), negotiation_.from_array()),
      bounced_(pieces, tag, single_copy::Way::bounced, bounced_read_, negotiation_.senders(),
               negotiation_.from_array()),
      read_packed_(pieces, tag, single_copy::Way::read_packed, packed_read_, negotiation_.senders(),
                   negotiation_.from_array()),
      mapped_(pieces, tag, single_copy::Way::mapped, mapped_read_, negotiation_.senders(),
              negotiation_.from_array()),
      repair_(pieces, tag + kRepairTag) {
  if (!pieces.plan().recvs.empty()) { // pages touched only if a message is bounced or read packed
    scratch_.bounce = std::make_unique_for_overwrite<std::byte[]>(single_copy::kBounceBytes);
  }
}

Transport &Transports::of(single_copy::Way way) {
  switch (way) {
  case single_copy::Way::sent:
    break;
  case single_copy::Way::direct:
    return direct_;
  case single_copy::Way::bounced:
    return bounced_;
  case single_copy::Way::read_packed:
    return read_packed_;
  case single_copy::Way::mapped:
    return mapped_;
  }
  return sent_;
}

} // namespace redist
