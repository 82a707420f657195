#pragma once
// The ways `direct` and `bounced`: the receiver reads the pieces of the message from the
// sender's array as it is (no packing), straight into its array or through the bounce buffer
// with one process_vm_readv per bounce buffer; from a shared array it has mapped, it copies
// them instead (ArrayCopy). With an operation (Pieces::operation()) the pieces are read into
// the bounce buffer and combined into b from there (Pieces::read_combined), both ways alike;
// a transposed plan's message is read a rectangle of A at a time into the bounce buffer and
// transposed from there, both ways alike (Pieces::read_transposed).

#include "array_copy.hpp"
#include "message_read.hpp"
#include "pieces.hpp"

namespace redist {

class ArrayRead final : public MessageRead {
public:
  ArrayRead(const Pieces &pieces, ReadScratch &scratch, ArrayCopy &arrays, bool bounced)
      : pieces_(pieces), scratch_(scratch), arrays_(arrays), bounced_(bounced) {}

  int read(std::size_t i, const single_copy::Identity &sender, const single_copy::Address &at,
           Index lo, Index hi, std::byte *b, Index &done) override;
  [[nodiscard]] std::span<const std::pair<Index, Index>> combined_apart() const override {
    return scratch_.combined_apart;
  }

private:
  const Pieces &pieces_;
  ReadScratch &scratch_;
  ArrayCopy &arrays_;
  bool bounced_;
};

} // namespace redist
