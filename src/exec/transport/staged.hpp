#pragma once
// Issue 18: small messages between the ranks of one node, exchanged through memory files
// without any MPI message. Each sender packs its messages into one of two slots of a memory
// file its receivers have mapped, before an agreement every rank of the plan joins (the
// ScaLAPACK entries' hit check, or the executor's own); each receiver unpacks from the
// sender's slot after it. The slots alternate by execution: a sender packs slot s again two
// executions later, after an agreement every receiver joined only once done reading it.
// Set up once per plan (set_up(): where each message lies, sent by MPI); no failure is
// possible afterwards (no MPI call, no system call).

#include "pieces.hpp"
#include "requests.hpp"
#include "single_copy.hpp"

#include <array>
#include <cstddef>
#include <cstdint>
#include <vector>

namespace redist {

class StagedExchange {
public:
  /// Messages of at most this many bytes are staged: a larger one is cheaper read from the
  /// sender's array in one pass (Way::direct) than packed and unpacked, whatever the round
  /// trip and the agreement that read needs (docs/performance.md, "Staged exchange").
  static constexpr std::size_t kMaxMessageBytes = std::size_t{64} << 10;

  /// send_offsets: the byte offset of each send in a packed buffer, and its end.
  StagedExchange(const Pieces &pieces, const std::vector<std::size_t> &send_offsets, int tag);

  /// Whether every message of this rank is small enough.
  [[nodiscard]] bool small_enough() const;
  /// Collective over the plan's peers (sends and receives): makes the slots, tells each
  /// receiver where its message lies, maps each sender's slots. ready() says whether it all
  /// worked here; a failed MPI call is recorded in `requests` (the caller forgets it once
  /// agreed: the exchange is then not used) and no peer is left waiting.
  void set_up(Requests &requests);
  [[nodiscard]] bool ready() const { return ready_; }
  /// Close the slots' memory file once every receiver has mapped it (or given up).
  void release_fd() { slots_.release_fd(); }

  /// Pack every send of this rank from `a` into this execution's slot.
  void pack(const std::byte *a);
  /// Unpack every receive from its sender's slot of this execution into b (the pieces'
  /// operation applies), then move on to the next execution's slots.
  void unpack(std::byte *b);

private:
  /// What a sender tells a receiver once.
  struct Where {
    std::int64_t pid = 0;
    single_copy::Segment slots;
    std::uint64_t offset = 0;     // of the message in slot 0
    std::uint64_t slot_bytes = 0; // slot 1 is that much further
  };
  enum Kind : std::uint8_t { kWhere, kSend };

  const Pieces &pieces_;
  const std::vector<std::size_t> &send_offsets_;
  int tag_;
  std::size_t slot_bytes_ = 0;
  single_copy::SharedBuffer slots_;
  std::vector<Where> out_; // per send
  std::vector<Where> in_;  // per receive
  std::vector<single_copy::Mapping> mappings_;
  std::vector<std::array<const std::byte *, 2>> sources_; // per receive, per slot
  std::size_t slot_ = 0;
  bool ready_ = false;
};

} // namespace redist
