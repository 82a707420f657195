#include "operation.hpp"

#include <algorithm>
#include <complex>
#include <cstring>

// Bit-identical results need every product rounded before the sum: no contraction into fused
// multiply-adds (also set by CMake on this file) and no reassociation.
#if defined(__clang__)
#pragma clang fp contract(off)
#pragma clang fp reassociate(off)
#elif defined(__GNUC__)
#pragma GCC optimize("fp-contract=off")
#endif

namespace redist {
namespace {

template <class R> struct Complex { R re, im; };

template <class T> struct Arith {
  static T mul(T x, T y) { return x * y; }
  static T add(T x, T y) { return x + y; }
  static T conj(T x) { return x; }
  static bool is(T x, int v) { return x == static_cast<T>(v); }
  static T zero() { return T(0); }
};

template <class R> struct Arith<Complex<R>> {
  using C = Complex<R>;
  static C mul(C x, C y) { return {x.re * y.re - x.im * y.im, x.re * y.im + x.im * y.re}; }
  static C add(C x, C y) { return {x.re + y.re, x.im + y.im}; }
  static C conj(C x) { return {x.re, -x.im}; }
  static bool is(C x, int v) { return x.re == static_cast<R>(v) && x.im == R(0); }
  static C zero() { return {R(0), R(0)}; }
};

enum class Case { copy, add, a_plus_beta_b, scale_a, axpy, general, zero, keep, scale_b };

template <class T> Case case_of(T alpha, T beta) {
  using A = Arith<T>;
  if (A::is(alpha, 1)) {
    return A::is(beta, 0) ? Case::copy : A::is(beta, 1) ? Case::add : Case::a_plus_beta_b;
  }
  if (!A::is(alpha, 0)) {
    return A::is(beta, 0) ? Case::scale_a : A::is(beta, 1) ? Case::axpy : Case::general;
  }
  return A::is(beta, 0) ? Case::zero : A::is(beta, 1) ? Case::keep : Case::scale_b;
}

template <class T> T load(const std::byte *p) {
  T v{};
  std::memcpy(&v, p, sizeof(T));
  return v;
}
template <class T> void store(std::byte *p, T v) {
  std::memcpy(p, &v, sizeof(T));
}

// One formula over `count` elements; the case and conjugation are template arguments, so the
// loop has no branch.
template <class T, Case K, bool Conj>
void run(std::byte *to, Index to_step, const std::byte *from, Index from_step, Index count, T alpha,
         T beta) {
  using A = Arith<T>;
  for (Index e = 0; e < count; ++e) {
    std::byte *b = to + static_cast<std::size_t>(e * to_step) * sizeof(T);
    const std::byte *pa = from + static_cast<std::size_t>(e * from_step) * sizeof(T);
    const auto a = [&] {
      const T x = load<T>(pa);
      return Conj ? A::conj(x) : x;
    };
    if constexpr (K == Case::copy) {
      store(b, a());
    } else if constexpr (K == Case::add) {
      store(b, A::add(load<T>(b), a()));
    } else if constexpr (K == Case::a_plus_beta_b) {
      store(b, A::add(a(), A::mul(beta, load<T>(b))));
    } else if constexpr (K == Case::scale_a) {
      store(b, A::mul(alpha, a()));
    } else if constexpr (K == Case::axpy) {
      store(b, A::add(load<T>(b), A::mul(alpha, a())));
    } else if constexpr (K == Case::general) {
      store(b, A::add(A::mul(alpha, a()), A::mul(beta, load<T>(b))));
    } else if constexpr (K == Case::zero) {
      store(b, A::zero());
    } else if constexpr (K == Case::scale_b) {
      store(b, A::mul(beta, load<T>(b)));
    }
  }
}

template <class T, bool Conj>
void run_case(Case k, std::byte *to, Index to_step, const std::byte *from, Index from_step,
              Index count, T alpha, T beta) {
  switch (k) {
  case Case::copy:
    return run<T, Case::copy, Conj>(to, to_step, from, from_step, count, alpha, beta);
  case Case::add:
    return run<T, Case::add, Conj>(to, to_step, from, from_step, count, alpha, beta);
  case Case::a_plus_beta_b:
    return run<T, Case::a_plus_beta_b, Conj>(to, to_step, from, from_step, count, alpha, beta);
  case Case::scale_a:
    return run<T, Case::scale_a, Conj>(to, to_step, from, from_step, count, alpha, beta);
  case Case::axpy:
    return run<T, Case::axpy, Conj>(to, to_step, from, from_step, count, alpha, beta);
  case Case::general:
    return run<T, Case::general, Conj>(to, to_step, from, from_step, count, alpha, beta);
  case Case::zero:
    return run<T, Case::zero, Conj>(to, to_step, from, from_step, count, alpha, beta);
  case Case::keep:
    return;
  case Case::scale_b:
    return run<T, Case::scale_b, Conj>(to, to_step, from, from_step, count, alpha, beta);
  }
}

template <class T>
void apply_typed(const Operation &op, std::byte *to, Index to_step, const std::byte *from,
                 Index from_step, Index count) {
  const T alpha = load<T>(op.alpha.data());
  const T beta = load<T>(op.beta.data());
  const Case k = case_of(alpha, beta);
  if (op.conjugate) {
    run_case<T, true>(k, to, to_step, from, from_step, count, alpha, beta);
  } else {
    run_case<T, false>(k, to, to_step, from, from_step, count, alpha, beta);
  }
}

} // namespace

Operation Operation::make(Scalar type, bool conjugate, const void *alpha, const void *beta) {
  Operation op;
  op.type = type;
  op.conjugate = conjugate && (type == Scalar::c32 || type == Scalar::c64);
  std::memcpy(op.alpha.data(), alpha, op.element_size());
  std::memcpy(op.beta.data(), beta, op.element_size());
  return op;
}

std::size_t Operation::element_size() const {
  switch (type) {
  case Scalar::f32:
    return 4;
  case Scalar::f64:
  case Scalar::c32:
    return 8;
  case Scalar::c64:
    return 16;
  }
  return 0;
}

namespace {
template <class T> Case case_of(const Operation &op) {
  return case_of(load<T>(op.alpha.data()), load<T>(op.beta.data()));
}
Case case_of(const Operation &op) {
  switch (op.type) {
  case Scalar::f32:
    return case_of<float>(op);
  case Scalar::f64:
    return case_of<double>(op);
  case Scalar::c32:
    return case_of<Complex<float>>(op);
  case Scalar::c64:
    return case_of<Complex<double>>(op);
  }
  return Case::general;
}
} // namespace

bool Operation::copies() const {
  return !conjugate && case_of(*this) == Case::copy;
}

bool Operation::leaves_b() const {
  return case_of(*this) == Case::keep;
}

void apply_operation(const Operation &op, std::byte *to, Index to_step, const std::byte *from,
                     Index from_step, Index count) {
  switch (op.type) {
  case Scalar::f32:
    return apply_typed<float>(op, to, to_step, from, from_step, count);
  case Scalar::f64:
    return apply_typed<double>(op, to, to_step, from, from_step, count);
  case Scalar::c32:
    return apply_typed<Complex<float>>(op, to, to_step, from, from_step, count);
  case Scalar::c64:
    return apply_typed<Complex<double>>(op, to, to_step, from, from_step, count);
  }
}

void apply_operation(const Operation &op, std::byte *to, Index to_e, Index to_w,
                     const std::byte *from, Index from_e, Index from_w, Index height, Index width) {
  // Sub-blocks of kTile x kTile keep both sides of a transposition in the cache.
  constexpr Index kTile = 32;
  const std::size_t es = op.element_size();
  for (Index w0 = 0; w0 < width; w0 += kTile) {
    const Index w1 = std::min(width, w0 + kTile);
    for (Index e0 = 0; e0 < height; e0 += kTile) {
      const Index e1 = std::min(height, e0 + kTile);
      for (Index w = w0; w < w1; ++w) {
        apply_operation(op, to + static_cast<std::size_t>(w * to_w + e0 * to_e) * es, to_e,
                        from + static_cast<std::size_t>(w * from_w + e0 * from_e) * es, from_e,
                        e1 - e0);
      }
    }
  }
}

} // namespace redist
