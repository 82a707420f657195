#pragma once
// The way `read_packed`: the sender packs the message, the receiver reads it into the bounce
// buffer and unpacks it from there, one bounce buffer at a time (with an operation:
// Pieces::read_combined, which combines each bounce buffer into b).

#include "message_read.hpp"
#include "pieces.hpp"

namespace redist {

class PackedRead final : public MessageRead {
public:
  PackedRead(const Pieces &pieces, ReadScratch &scratch) : pieces_(pieces), scratch_(scratch) {}

  int read(std::size_t i, const single_copy::Identity &sender, const single_copy::Address &at,
           Index lo, Index hi, std::byte *b, Index &done) override;

private:
  const Pieces &pieces_;
  ReadScratch &scratch_;
};

} // namespace redist
