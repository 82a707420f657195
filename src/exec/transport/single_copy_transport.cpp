#include "single_copy_transport.hpp"

#include "copy.hpp"

namespace redist {

SingleCopyTransport::SingleCopyTransport(const Pieces &pieces, int tag, single_copy::Way way,
                                         MessageRead &read,
                                         const std::vector<single_copy::Identity> &senders,
                                         const std::vector<char> &from_array)
    : pieces_(pieces), tag_(tag), way_(way), read_(read), senders_(senders),
      from_array_(from_array), address_out_(pieces.plan().sends.size()),
      reply_in_(pieces.plan().sends.size()), address_in_(pieces.plan().recvs.size()),
      reply_out_(pieces.plan().recvs.size()) {}

Transport::SendBuffer SingleCopyTransport::send_buffer() const {
  if (single_copy::reads_array(way_)) {
    return SendBuffer::none;
  }
  return way_ == single_copy::Way::mapped ? SendBuffer::shared : SendBuffer::plain;
}

single_copy::Segment SingleCopyTransport::array_read(std::size_t i, const std::byte *a) const {
  const bool may_read =
      single_copy::reads_array(way_) || (way_ == single_copy::Way::mapped && from_array_[i] != 0);
  return may_read ? single_copy::shared_array_of(a) : single_copy::Segment{};
}

bool SingleCopyTransport::packs_given(const single_copy::Segment &array) const {
  return !single_copy::reads_array(way_) && array.fd < 0;
}

bool SingleCopyTransport::packs(std::size_t i, const std::byte *a) const {
  return packs_given(array_read(i, a));
}

void SingleCopyTransport::post_receive(Requests &requests, std::size_t i, Index lo, Index hi,
                                       std::byte * /*buffer*/) {
  requests.post(
      false, bytes_of(address_in_[i]), sizeof(single_copy::Address), tag_ + kAddressTag,
      {this, kAddress, static_cast<int>(i), pieces_.plan().recvs[i].rank, lo, hi, nullptr}, true);
}

void SingleCopyTransport::post_send(Requests &requests, std::size_t i, Index lo, Index hi,
                                    const std::byte *a, std::byte *buffer, bool packed) {
  const Peer &peer = pieces_.plan().sends[i];
  const single_copy::Segment array = array_read(i, a);
  const bool packs = packs_given(array);
  if (packs) {
    if (!packed) {
      pieces_.pack(peer, a, buffer, lo, hi);
    }
    streaming_fence(); // the receiver reads the buffer from another process
  }
  reply_in_[i] = 0;
  requests.post(false, bytes_of(reply_in_[i]), sizeof(std::int64_t), tag_ + kReplyTag,
                {this, kReply, static_cast<int>(i), peer.rank, lo, hi, nullptr}, true);
  if (packs) {
    address_out_[i] = {reinterpret_cast<std::uintptr_t>(buffer), {}};
  } else {
    address_out_[i] = {reinterpret_cast<std::uintptr_t>(a), array};
  }
  requests.post(true, bytes_of(address_out_[i]), sizeof(single_copy::Address), tag_ + kAddressTag,
                {this, kSend, static_cast<int>(i), peer.rank, lo, hi, nullptr}, true);
}

void SingleCopyTransport::reply(Requests &requests, const RequestInfo &info, std::int64_t value) {
  const auto i = static_cast<std::size_t>(info.peer);
  reply_out_[i] = value;
  requests.post(true, bytes_of(reply_out_[i]), sizeof(std::int64_t), tag_ + kReplyTag,
                {this, kReplySent, info.peer, info.rank, 0, 0, nullptr}, true);
}

void SingleCopyTransport::complete(Requests &requests, RequestInfo info, std::byte *b) {
  const auto i = static_cast<std::size_t>(info.peer);
  if (info.kind == kAddress) {
    // A failed read may have written part of the message into b: the repair sends it again
    // through MPI and unpacks it over those elements, except those an operation combined
    // (docs/reliability.md, Faults).
    Index done = info.lo;
    const int error = read_.read(i, senders_[i], address_in_[i], info.lo, info.hi, b, done);
    if (pieces_.combines()) {
      requests.note_combined(i, info.lo, done);
      if (error != 0) {
        for (const auto &[first, second] : read_.combined_apart()) {
          requests.note_combined(i, first, second);
        }
      }
    }
    if (error != 0) {
      requests.mark_recv(i, Requests::kReadFailed);
    }
    reply(requests, info, error);
  } else if (info.kind == kReply && reply_in_[i] != 0) {
    requests.mark_send(i, reply_in_[i] == kAddressLost ? Requests::kTransferFailed
                                                       : Requests::kReadFailed);
  }
}

void SingleCopyTransport::failed(Requests &requests, RequestInfo info) {
  const auto i = static_cast<std::size_t>(info.peer);
  switch (info.kind) {
  case kAddress: // nothing read; the sender waits for a reply
    requests.mark_recv(i, Requests::kTransferFailed);
    reply(requests, info, kAddressLost);
    break;
  case kReplySent:
    requests.mark_recv(i, Requests::kTransferFailed);
    break;
  default: // kSend, kReply: whether the reader has the message is unknown here
    requests.mark_send(i, Requests::kTransferFailed);
    break;
  }
}

} // namespace redist
