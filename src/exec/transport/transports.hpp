#pragma once
// The ways one plan's messages travel, one transport each (transport.hpp), with the readers
// their receivers use and the ways chosen for each message (negotiation.hpp); made with the
// plan, over its pieces.

#include "array_copy.hpp"
#include "array_read.hpp"
#include "mapped_read.hpp"
#include "message_read.hpp"
#include "negotiation.hpp"
#include "nodes.hpp"
#include "packed_read.hpp"
#include "pieces.hpp"
#include "sent.hpp"
#include "single_copy_transport.hpp"

namespace redist {

class Transports {
public:
  /// `pieces` and `nodes` outlive this. Messages carry `tag`; repaired ones tag + kRepairTag.
  /// The bounce buffer is allocated where this rank receives.
  Transports(Pieces &pieces, const NodeMap &nodes, int tag, Index lld_src);
  Transports(const Transports &) = delete;
  Transports &operator=(const Transports &) = delete;

  /// The transport of messages going `way`.
  Transport &of(single_copy::Way way);
  /// The transport of send i / receive i, by the way decided for it.
  Transport &of_send(std::size_t i) { return of(negotiation_.send_way(i)); }
  Transport &of_receive(std::size_t i) { return of(negotiation_.recv_way(i)); }

  [[nodiscard]] Negotiation &negotiation() { return negotiation_; }
  [[nodiscard]] const Negotiation &negotiation() const { return negotiation_; }
  /// Way::sent's transport.
  [[nodiscard]] Sent &sent() { return sent_; }
  /// Messages sent again after a failure.
  [[nodiscard]] Sent &repair() { return repair_; }
  [[nodiscard]] ArrayCopy &array_copy() { return array_copy_; }
  [[nodiscard]] const ArrayCopy &array_copy() const { return array_copy_; }

private:
  ReadScratch scratch_;
  ArrayCopy array_copy_;
  ArrayRead direct_read_;
  ArrayRead bounced_read_;
  PackedRead packed_read_;
  MappedRead mapped_read_;
  Negotiation negotiation_;
  Sent sent_;
  SingleCopyTransport direct_;
  SingleCopyTransport bounced_;
  SingleCopyTransport read_packed_;
  SingleCopyTransport mapped_;
  Sent repair_;
};

} // namespace redist
