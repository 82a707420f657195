#pragma once
// The receiver's half of a single-copy way, once the sender's address has arrived: moving the
// message into this rank's array. No MPI: the single-copy transport posts the messages.

#include "index.hpp"
#include "single_copy.hpp"

#include <cstddef>
#include <memory>
#include <span>
#include <utility>
#include <vector>

namespace redist {

/// What the reading ways share: one reader and one bounce buffer (kBounceBytes) per executor.
struct ReadScratch {
  /// A piece read into the bounce buffer that an operation combines into b from there: its
  /// offset in b and its elements (Pieces::read_combined).
  struct BouncedPiece {
    Index dst;
    Index count;
  };
  single_copy::Reader reader;
  std::unique_ptr<std::byte[]> bounce;
  std::vector<BouncedPiece> bounced; // kept between messages: a read allocates nothing
  /// After a failed transposed read: receive elements combined into b besides [lo, done)
  /// (Pieces::read_transposed); empty otherwise.
  std::vector<std::pair<Index, Index>> combined_apart;
};

class MessageRead {
public:
  MessageRead() = default;
  MessageRead(const MessageRead &) = delete;
  MessageRead &operator=(const MessageRead &) = delete;
  virtual ~MessageRead() = default;

  /// Move receive elements [lo, hi) of plan().recvs[i] from `sender`, whose message is at `at`,
  /// into b: 0, or the errno of the failure (-1: fewer bytes than asked). `done`: receive
  /// elements [lo, done) are final in b (hi on success; after a failure, those an operation
  /// combined before it, Pieces::read_combined; a copy's failed read may have written any).
  virtual int read(std::size_t i, const single_copy::Identity &sender,
                   const single_copy::Address &at, Index lo, Index hi, std::byte *b,
                   Index &done) = 0;
  /// After a failed read: receive elements combined into b besides [lo, done) (a transposed
  /// read combines rectangles of the message); empty otherwise.
  [[nodiscard]] virtual std::span<const std::pair<Index, Index>> combined_apart() const {
    return {};
  }
};

} // namespace redist
