#include "single_copy_transport.hpp"

#include "copy.hpp"

#include <cstring>
#include <string>

namespace redist {

SingleCopyTransport::SingleCopyTransport(const Pieces &pieces, int tag, single_copy::Way way,
                                         MessageRead &read,
                                         const std::vector<single_copy::Identity> &senders)
    : pieces_(pieces), tag_(tag), way_(way), read_(read), senders_(senders),
      address_out_(pieces.plan().sends.size()), reply_in_(pieces.plan().sends.size()),
      address_in_(pieces.plan().recvs.size()), reply_out_(pieces.plan().recvs.size()) {}

Transport::SendBuffer SingleCopyTransport::send_buffer() const {
  if (single_copy::reads_array(way_)) {
    return SendBuffer::none;
  }
  return way_ == single_copy::Way::mapped ? SendBuffer::shared : SendBuffer::plain;
}

void SingleCopyTransport::post_receive(Requests &requests, std::size_t i, Index lo, Index hi,
                                       std::byte * /*buffer*/) {
  requests.post(
      false, bytes_of(address_in_[i]), sizeof(single_copy::Address), tag_ + kAddressTag,
      {this, kAddress, static_cast<int>(i), pieces_.plan().recvs[i].rank, lo, hi, nullptr});
}

void SingleCopyTransport::post_send(Requests &requests, std::size_t i, Index lo, Index hi,
                                    const std::byte *a, std::byte *buffer) {
  const Peer &peer = pieces_.plan().sends[i];
  const bool packs = !single_copy::reads_array(way_);
  if (packs) {
    pieces_.pack(peer, a, buffer, lo, hi);
    streaming_fence(); // the receiver reads the buffer from another process
  }
  requests.post(false, bytes_of(reply_in_[i]), sizeof(std::int64_t), tag_ + kReplyTag,
                {this, kReply, static_cast<int>(i), peer.rank, lo, hi, nullptr});
  if (packs) {
    address_out_[i] = {reinterpret_cast<std::uintptr_t>(buffer), {}};
  } else {
    address_out_[i] = {reinterpret_cast<std::uintptr_t>(a), single_copy::shared_array_of(a)};
  }
  requests.post(true, bytes_of(address_out_[i]), sizeof(single_copy::Address), tag_ + kAddressTag,
                {this, kSend, static_cast<int>(i), peer.rank, lo, hi, nullptr});
}

void SingleCopyTransport::complete(Requests &requests, RequestInfo info, std::byte *b) {
  const auto i = static_cast<std::size_t>(info.peer);
  if (info.kind == kAddress) {
    const int error = read_.read(i, senders_[i], address_in_[i], info.lo, info.hi, b);
    reply_out_[i] = error;
    if (error != 0) {
      requests.fail("redist execute: single-copy read from rank " + std::to_string(info.rank) +
                    " failed: " + (error > 0 ? std::strerror(error) : "short read"));
    }
    requests.post(true, bytes_of(reply_out_[i]), sizeof(std::int64_t), tag_ + kReplyTag,
                  {this, kSend, info.peer, info.rank, 0, 0, nullptr});
  } else if (info.kind == kReply && reply_in_[i] != 0) {
    requests.fail("redist execute: rank " + std::to_string(info.rank) +
                  " could not read this rank's array in a single copy (errno " +
                  std::to_string(reply_in_[i]) + ")");
  }
}

} // namespace redist
