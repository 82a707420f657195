#pragma once
// Batches: k operations moved in one exchange. This rank's messages of the
// k plans to one peer travel as one message: each operation's pieces for that peer one after
// another, in bytes (the operations' element types may differ). A batch's Pieces
// (Pieces(std::vector<Pieces>)) has a skeleton plan of one peer per rank, element size 1, and
// packs, unpacks and copies the local part through each operation's own Pieces, which apply
// that operation's Operation.

#include "pieces.hpp"

#include <cstddef>
#include <vector>

namespace redist {

/// One operation's message inside a batch's message to or from one peer.
struct BatchPart {
  std::size_t op = 0;   ///< which operation of the batch
  std::size_t peer = 0; ///< its index in that operation's plan().sends / recvs
  Index offset = 0;     ///< byte offset in the batch's message
  Index bytes = 0;
};

/// The operations of a batch and, per peer of the skeleton, the parts of its message.
struct BatchParts {
  std::vector<Pieces> ops;
  BatchArrays arrays;
  std::vector<std::vector<BatchPart>> sends;
  std::vector<std::vector<BatchPart>> recvs;
};

/// The skeleton plan of `parts.ops` (one peer per rank any operation exchanges with, by
/// increasing rank; elements are bytes; row_slot is the index into parts.sends / recvs), and
/// parts.sends / recvs filled.
[[nodiscard]] RankPlan batch_skeleton(BatchParts &parts);

} // namespace redist
