#pragma once
// Copies from a sender's shared array (redist_alloc), mapped here: the pieces are copied in user
// space, no system call per piece. Owns the mappings, per receive. No MPI.

#include "pieces.hpp"
#include "single_copy.hpp"

#include <cstddef>
#include <vector>

namespace redist {

class ArrayCopy {
public:
  explicit ArrayCopy(const Pieces &pieces);

  /// Map process pid's shared array `array` for receive i; false if it cannot be.
  bool map(std::size_t i, std::int64_t pid, const single_copy::Segment &array);
  /// Copy receive elements [lo, hi) of receive i from the sender's shared array holding `at`
  /// (mapped now if another than the last one): 0, EFAULT when the pieces reach past it, or
  /// -1 when it cannot be mapped (then nothing is copied).
  int copy(std::size_t i, std::int64_t pid, Index sender_lld, const single_copy::Address &at,
           Index lo, Index hi, std::byte *b);
  /// Receives copied since forget_copies().
  [[nodiscard]] std::size_t copies() const;
  void forget_copies();

private:
  const Pieces &pieces_;
  std::vector<single_copy::Mapping> arrays_; // per receive
  std::vector<char> copied_;                 // per receive
};

} // namespace redist
