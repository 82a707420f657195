#pragma once
// The element-wise arithmetic of B := alpha * op(A) + beta * B, per element as PBLAS
// computes it (its PTZBLAS ?mmadd / ?mmtadd / ?mmtcadd kernels, with Debian's reference BLAS
// for the ?axpy / ?scal cases), so that results are bit-identical. operation.cpp is compiled
// without floating-point contraction (-ffp-contract=off) and without reassociation.
//
// Which formula applies is decided once per call (never per element):
//   alpha = 1, beta = 0     b = a'                 (a copy; a' = conj(a) for op = C)
//   alpha = 1, beta = 1     b = b + a'
//   alpha = 1, other beta   b = a' + beta * b
//   alpha != 0, beta = 0    b = alpha * a'
//   alpha != 0, beta = 1    b = b + alpha * a'
//   alpha != 0, other beta  b = alpha * a' + beta * b
//   alpha = 0, beta = 0     b = 0                  (neither A nor B read)
//   alpha = 0, beta = 1     b unchanged
//   alpha = 0, other beta   b = beta * b           (A not read)
// With beta = 0, B is never read: NaN or Inf already in B does not reach the result.
// Complex products are (xr*yr - xi*yi) + i(xr*yi + xi*yr), each product rounded.

#include "plan.hpp"

#include <array>
#include <cstddef>

namespace redist {

/// The element types arithmetic is defined for (integers only copy).
enum class Scalar { f32, f64, c32, c64 };

struct Operation {
  Scalar type = Scalar::f64;
  bool conjugate = false;            ///< op = C on a complex type
  std::array<std::byte, 16> alpha{}; ///< of the element type
  std::array<std::byte, 16> beta{};

  /// An operation of `type` with alpha, beta read from the caller's values (element-sized).
  static Operation make(Scalar type, bool conjugate, const void *alpha, const void *beta);
  [[nodiscard]] std::size_t element_size() const;
  /// alpha = 1, beta = 0, no conjugation: a plain copy (the copy path is used).
  [[nodiscard]] bool copies() const;
  /// alpha = 0 and beta = 1: B stays as it is (PBLAS returns at once).
  [[nodiscard]] bool leaves_b() const;
};

/// Element e (e < count) of `from` (step from_step, in elements) combined into element e of
/// `to` (step to_step).
void apply_operation(const Operation &op, std::byte *to, Index to_step, const std::byte *from,
                     Index from_step, Index count);

/// apply_operation's element form with its formula (the type, the case of alpha and beta, the
/// conjugation) chosen once, for the many short pieces of one message. `op` must outlive it.
class OperationKernel {
public:
  explicit OperationKernel(const Operation &op);
  void operator()(std::byte *to, Index to_step, const std::byte *from, Index from_step,
                  Index count) const {
    run_(*op_, to, to_step, from, from_step, count);
  }
  [[nodiscard]] const Operation &operation() const { return *op_; }

private:
  using Run = void (*)(const Operation &, std::byte *, Index, const std::byte *, Index, Index);
  const Operation *op_;
  Run run_;
};

/// Element (e, w) of a height x width rectangle of `from` (steps from_e, from_w) combined into
/// `to` (steps to_e, to_w), in cache-sized sub-blocks (a transposition's local part).
void apply_operation(const Operation &op, std::byte *to, Index to_e, Index to_w,
                     const std::byte *from, Index from_e, Index from_w, Index height, Index width);

} // namespace redist
