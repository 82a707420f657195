#include "sent.hpp"

#include "call_timers.hpp"
#include "copy.hpp"

namespace redist {

void Sent::post_receive(Requests &requests, std::size_t i, Index lo, Index hi, std::byte *buffer) {
  const int rank = pieces_.plan().recvs[i].rank;
  const std::size_t before = requests.size();
  requests.post(false, buffer, static_cast<std::size_t>(hi - lo) * pieces_.element_size(), tag_,
                {this, kData, static_cast<int>(i), rank, lo, hi, buffer});
  pieces_pending_[i] = static_cast<int>(requests.size() - before);
}

void Sent::post_send(Requests &requests, std::size_t i, Index lo, Index hi, const std::byte *a,
                     std::byte *buffer, bool packed) {
  const Peer &peer = pieces_.plan().sends[i];
  if (a != nullptr && !packed) { // NULL: an argument error of a deferred execution, sent unfilled
    call_timers::lap(call_timers::post_sends);
    pieces_.pack(peer, a, buffer, lo, hi);
    call_timers::lap(call_timers::pack);
  }
  streaming_fence(); // MPI reads the buffer, maybe from another process
  requests.post(true, buffer, static_cast<std::size_t>(hi - lo) * pieces_.element_size(), tag_,
                {this, kSend, static_cast<int>(i), peer.rank, lo, hi, nullptr});
}

void Sent::complete(Requests &requests, RequestInfo info, std::byte *b) {
  const auto i = static_cast<std::size_t>(info.peer);
  // A message with a failed piece never reaches zero pending pieces: not unpacked.
  if (info.kind == kData && --pieces_pending_[i] == 0 && !deferred_) {
    call_timers::lap(call_timers::wait_receives);
    unpack_once(pieces_, requests, i, info.buffer, b, info.lo, info.hi);
    call_timers::lap(call_timers::unpack);
  }
}

void unpack_once(const Pieces &pieces, Requests &requests, std::size_t i, const std::byte *in,
                 std::byte *b, Index lo, Index hi) {
  const Peer &peer = pieces.plan().recvs[i];
  if (!pieces.combines()) { // a copy: writing an element again does no harm
    pieces.unpack(peer, in, b, lo, hi);
    return;
  }
  requests.for_each_uncombined(i, lo, hi, [&](Index from, Index to) {
    pieces.unpack(peer, in + static_cast<std::size_t>(from - lo) * pieces.element_size(), b, from,
                  to);
  });
  requests.note_combined(i, lo, hi);
}

} // namespace redist

namespace redist {

void Sent::failed(Requests &requests, RequestInfo info) {
  // The message is not unpacked (its pieces never all arrive): marked for the repair.
  const auto i = static_cast<std::size_t>(info.peer);
  if (info.kind == kData) {
    requests.mark_recv(i, Requests::kTransferFailed);
  } else {
    requests.mark_send(i, Requests::kTransferFailed);
  }
}

} // namespace redist
