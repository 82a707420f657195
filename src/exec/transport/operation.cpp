#include "operation.hpp"

#include "copy.hpp"

#include <algorithm>
#include <array>
#include <complex>
#include <cstring>
#include <type_traits>

#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
#define REDIST_AVX2_KERNELS 1
#include <immintrin.h>
#endif

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
// loop has no branch. With both steps 1 the compiler knows the operands are contiguous and
// vectorises (each element's products and sum stay rounded one by one).
template <class T, Case K, bool Conj, bool Contiguous>
void run_steps(std::byte *to, Index to_step, const std::byte *from, Index from_step, Index count,
               T alpha, T beta) {
  using A = Arith<T>;
  if constexpr (Contiguous) {
    to_step = 1;
    from_step = 1;
  }
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

template <class T, Case K, bool Conj>
void run(std::byte *to, Index to_step, const std::byte *from, Index from_step, Index count, T alpha,
         T beta) {
  if (to_step == 1 && from_step == 1) {
    run_steps<T, K, Conj, true>(to, 1, from, 1, count, alpha, beta);
  } else {
    run_steps<T, K, Conj, false>(to, to_step, from, from_step, count, alpha, beta);
  }
}

/// f(std::integral_constant<Case, k>{}) for the case k; nothing for Case::keep (B stays).
template <class F> void with_case(Case k, F &&f) {
  switch (k) {
  case Case::copy:
    return f(std::integral_constant<Case, Case::copy>{});
  case Case::add:
    return f(std::integral_constant<Case, Case::add>{});
  case Case::a_plus_beta_b:
    return f(std::integral_constant<Case, Case::a_plus_beta_b>{});
  case Case::scale_a:
    return f(std::integral_constant<Case, Case::scale_a>{});
  case Case::axpy:
    return f(std::integral_constant<Case, Case::axpy>{});
  case Case::general:
    return f(std::integral_constant<Case, Case::general>{});
  case Case::zero:
    return f(std::integral_constant<Case, Case::zero>{});
  case Case::keep:
    return;
  case Case::scale_b:
    return f(std::integral_constant<Case, Case::scale_b>{});
  }
}

#if defined(REDIST_AVX2_KERNELS)
bool has_avx2() {
  static const bool avx2 = __builtin_cpu_supports("avx2") != 0;
  return avx2;
}

// Every line of a block of `count` stretches of `bytes` bytes, `step` bytes apart, prefetched:
// the block's stretches lie pages apart, and fetched on demand each is a miss after the other.
void prefetch_block(const std::byte *p, Index step, Index count, Index bytes) {
  constexpr Index kLine = 64;
  for (Index k = 0; k < count; ++k, p += step) {
    for (Index at = 0; at < bytes; at += kLine) {
      _mm_prefetch(reinterpret_cast<const char *>(p + at), _MM_HINT_T0);
    }
    _mm_prefetch(reinterpret_cast<const char *>(p + bytes - 1), _MM_HINT_T0);
  }
}

// Case K's formula on four doubles: Arith's products and sums in the same order, each rounded
// (the target enables AVX2 only, no fused multiply-add). `scalars`: alpha, beta in every lane.
template <Case K>
__attribute__((target("avx2"))) inline __m256d formula_4(__m256d a, const double *b,
                                                         const std::array<double, 2> &scalars) {
  const __m256d alpha = _mm256_set1_pd(scalars[0]);
  const __m256d beta = _mm256_set1_pd(scalars[1]);
  if constexpr (K == Case::copy) {
    return a;
  } else if constexpr (K == Case::add) {
    return _mm256_add_pd(_mm256_loadu_pd(b), a);
  } else if constexpr (K == Case::a_plus_beta_b) {
    return _mm256_add_pd(a, _mm256_mul_pd(beta, _mm256_loadu_pd(b)));
  } else if constexpr (K == Case::scale_a) {
    return _mm256_mul_pd(alpha, a);
  } else if constexpr (K == Case::axpy) {
    return _mm256_add_pd(_mm256_loadu_pd(b), _mm256_mul_pd(alpha, a));
  } else {
    static_assert(K == Case::general);
    return _mm256_add_pd(_mm256_mul_pd(alpha, a), _mm256_mul_pd(beta, _mm256_loadu_pd(b)));
  }
}

// x * v for complex doubles, two to a register (re, im, re, im): (xr vr - xi vi,
// xr vi + xi vr), Arith's products and sums in the same order.
__attribute__((target("avx2"))) inline __m256d complex_product(double xr, double xi, __m256d v) {
  return _mm256_addsub_pd(_mm256_mul_pd(_mm256_set1_pd(xr), v),
                          _mm256_mul_pd(_mm256_set1_pd(xi), _mm256_permute_pd(v, 0x5)));
}

// Case K's formula on two complex doubles, as formula_4 on four doubles. `scalars`: alpha's
// and beta's parts.
template <Case K>
__attribute__((target("avx2"))) inline __m256d
complex_formula_2(__m256d a, const double *b, const std::array<double, 4> &scalars) {
  const auto &[alpha_re, alpha_im, beta_re, beta_im] = scalars;
  if constexpr (K == Case::copy) {
    return a;
  } else if constexpr (K == Case::add) {
    return _mm256_add_pd(_mm256_loadu_pd(b), a);
  } else if constexpr (K == Case::a_plus_beta_b) {
    return _mm256_add_pd(a, complex_product(beta_re, beta_im, _mm256_loadu_pd(b)));
  } else if constexpr (K == Case::scale_a) {
    return complex_product(alpha_re, alpha_im, a);
  } else if constexpr (K == Case::axpy) {
    return _mm256_add_pd(_mm256_loadu_pd(b), complex_product(alpha_re, alpha_im, a));
  } else {
    static_assert(K == Case::general);
    return _mm256_add_pd(complex_product(alpha_re, alpha_im, a),
                         complex_product(beta_re, beta_im, _mm256_loadu_pd(b)));
  }
}

// One 4 x 4 block of doubles: rows of A `from_e` doubles apart in, columns of B `to_w` apart
// out, combined as K says.
template <Case K>
__attribute__((target("avx2"))) inline void transposed_block(double *to, Index to_w,
                                                             const double *from, Index from_e,
                                                             const std::array<double, 2> &scalars) {
  const __m256d r0 = _mm256_loadu_pd(from);
  const __m256d r1 = _mm256_loadu_pd(from + from_e);
  const __m256d r2 = _mm256_loadu_pd(from + 2 * from_e);
  const __m256d r3 = _mm256_loadu_pd(from + 3 * from_e);
  const __m256d lo01 = _mm256_unpacklo_pd(r0, r1); // (0,0) (1,0) (0,2) (1,2)
  const __m256d hi01 = _mm256_unpackhi_pd(r0, r1); // (0,1) (1,1) (0,3) (1,3)
  const __m256d lo23 = _mm256_unpacklo_pd(r2, r3);
  const __m256d hi23 = _mm256_unpackhi_pd(r2, r3);
  _mm256_storeu_pd(to, formula_4<K>(_mm256_permute2f128_pd(lo01, lo23, 0x20), to, scalars));
  to += to_w;
  _mm256_storeu_pd(to, formula_4<K>(_mm256_permute2f128_pd(hi01, hi23, 0x20), to, scalars));
  to += to_w;
  _mm256_storeu_pd(to, formula_4<K>(_mm256_permute2f128_pd(lo01, lo23, 0x31), to, scalars));
  to += to_w;
  _mm256_storeu_pd(to, formula_4<K>(_mm256_permute2f128_pd(hi01, hi23, 0x31), to, scalars));
}

// One 2 x 2 block of complex doubles (a 128-bit lane each; steps in doubles), conjugated for
// Conj (the sign bits of the imaginary parts).
template <Case K, bool Conj>
__attribute__((target("avx2"))) inline void transposed_block(double *to, Index to_w,
                                                             const double *from, Index from_e,
                                                             const std::array<double, 4> &scalars) {
  __m256d r0 = _mm256_loadu_pd(from);          // (0, 0) (0, 1)
  __m256d r1 = _mm256_loadu_pd(from + from_e); // (1, 0) (1, 1)
  if constexpr (Conj) {
    const __m256d imaginary_signs = _mm256_set_pd(-0.0, 0.0, -0.0, 0.0);
    r0 = _mm256_xor_pd(r0, imaginary_signs);
    r1 = _mm256_xor_pd(r1, imaginary_signs);
  }
  _mm256_storeu_pd(to, complex_formula_2<K>(_mm256_permute2f128_pd(r0, r1, 0x20), to, scalars));
  to += to_w;
  _mm256_storeu_pd(to, complex_formula_2<K>(_mm256_permute2f128_pd(r0, r1, 0x31), to, scalars));
}

// Element (e, w) of a height x width block of doubles or complex doubles, A's rows e from_e
// apart and contiguous along w, combined into B's columns w to_w apart and contiguous along e:
// blocks of one 256-bit register a row (4 x 4 doubles, 2 x 2 complex doubles) transposed and
// combined in registers, the block's lines of both arrays prefetched first (a 4000^2
// transposition of doubles in 45 x 30 pieces took 29 ms, 18 ms prefetched).
template <class T, Case K, bool Conj>
__attribute__((target("avx2"))) void
combine_transposed_avx2(std::byte *to, Index to_w, const std::byte *from, Index from_e,
                        Index height, Index width, T alpha, T beta) {
  constexpr auto kSize = Index{sizeof(T)};
  constexpr Index kBlock = 32 / kSize;
  constexpr Index kDoubles = kSize / 8; // doubles an element
  prefetch_block(from, from_e * kSize, height, width * kSize);
  prefetch_block(to, to_w * kSize, width, height * kSize);
  const auto scalars = [&] {
    if constexpr (std::is_same_v<T, double>) {
      return std::array<double, 2>{alpha, beta};
    } else {
      return std::array<double, 4>{alpha.re, alpha.im, beta.re, beta.im};
    }
  }();
  const Index height_blocks = height - height % kBlock;
  Index w = 0;
  for (; w + kBlock <= width; w += kBlock) {
    for (Index e = 0; e < height_blocks; e += kBlock) {
      auto *t = reinterpret_cast<double *>(to + (w * to_w + e) * kSize);
      const auto *f = reinterpret_cast<const double *>(from + (e * from_e + w) * kSize);
      if constexpr (std::is_same_v<T, double>) {
        transposed_block<K>(t, to_w, f, from_e, scalars);
      } else {
        transposed_block<K, Conj>(t, to_w * kDoubles, f, from_e * kDoubles, scalars);
      }
    }
    for (Index k = 0; k < kBlock && height_blocks < height; ++k) {
      run_steps<T, K, Conj, false>(to + ((w + k) * to_w + height_blocks) * kSize, 1,
                                   from + (height_blocks * from_e + w + k) * kSize, from_e,
                                   height - height_blocks, alpha, beta);
    }
  }
  for (; w < width; ++w) {
    run_steps<T, K, Conj, false>(to + w * to_w * kSize, 1, from + w * kSize, from_e, height, alpha,
                                 beta);
  }
}
#endif

// Whether case K reads A (the transposition matters).
constexpr bool reads_a(Case k) {
  return k != Case::zero && k != Case::keep && k != Case::scale_b;
}

// A height x width rectangle in sub-blocks of kTile x kTile, which keep both sides of a
// transposition in the cache. Where B is contiguous along e and A is not (a transposition),
// each column of a sub-block is first gathered from A into `column`, so that the formula runs
// on contiguous operands.
template <class T, Case K, bool Conj>
void run_rectangle(std::byte *to, Index to_e, Index to_w, const std::byte *from, Index from_e,
                   Index from_w, Index height, Index width, T alpha, T beta) {
  constexpr Index kTile = 32;
  std::array<T, kTile> column{};
  const auto *gathered = reinterpret_cast<const std::byte *>(column.data());
  // 8-byte elements along A's rows: the whole sub-block transposed into `block` at once.
  constexpr bool kPairs = sizeof(T) == 8;
  // NOLINTNEXTLINE(cppcoreguidelines-pro-type-member-init): written before it is read
  std::array<T, kPairs ? kTile * kTile : 1> block;
  for (Index w0 = 0; w0 < width; w0 += kTile) {
    const Index w1 = std::min(width, w0 + kTile);
    for (Index e0 = 0; e0 < height; e0 += kTile) {
      const Index count = std::min(height, e0 + kTile) - e0;
#if defined(REDIST_AVX2_KERNELS)
      if constexpr ((std::is_same_v<T, double> || std::is_same_v<T, Complex<double>>)&&reads_a(K)) {
        if (to_e == 1 && from_e != 1 && from_w == 1 && has_avx2()) {
          combine_transposed_avx2<T, K, Conj>(to + (w0 * to_w + e0) * Index{sizeof(T)}, to_w,
                                              from + (w0 + e0 * from_e) * Index{sizeof(T)}, from_e,
                                              count, w1 - w0, alpha, beta);
          continue;
        }
      }
#endif
      if (kPairs && to_e == 1 && from_e != 1 && from_w == 1) {
        auto *columns = reinterpret_cast<std::byte *>(block.data());
        transpose_8(columns, kTile * Index{sizeof(T)},
                    from + static_cast<std::size_t>(w0 + e0 * from_e) * sizeof(T),
                    from_e * Index{sizeof(T)}, static_cast<std::size_t>(count),
                    static_cast<std::size_t>(w1 - w0));
        for (Index w = w0; w < w1; ++w) {
          run_steps<T, K, Conj, true>(to + static_cast<std::size_t>(w * to_w + e0) * sizeof(T), 1,
                                      columns +
                                          static_cast<std::size_t>((w - w0) * kTile) * sizeof(T),
                                      1, count, alpha, beta);
        }
        continue;
      }
      for (Index w = w0; w < w1; ++w) {
        std::byte *t = to + static_cast<std::size_t>(w * to_w + e0 * to_e) * sizeof(T);
        const std::byte *f = from + static_cast<std::size_t>(w * from_w + e0 * from_e) * sizeof(T);
        if (to_e == 1 && from_e != 1) {
          for (Index e = 0; e < count; ++e) {
            column[static_cast<std::size_t>(e)] =
                load<T>(f + static_cast<std::size_t>(e * from_e) * sizeof(T));
          }
          run_steps<T, K, Conj, true>(t, 1, gathered, 1, count, alpha, beta);
        } else {
          run<T, K, Conj>(t, to_e, f, from_e, count, alpha, beta);
        }
      }
    }
  }
}

/// f(alpha, beta, case, conjugation) for op, alpha and beta of its element type, the case and
/// the conjugation as compile-time constants (nothing for Case::keep: B stays).
template <class F> void with_formula(const Operation &op, F &&f) {
  const auto typed = [&](auto type_tag) {
    using T = decltype(type_tag);
    const T alpha = load<T>(op.alpha.data());
    const T beta = load<T>(op.beta.data());
    with_case(case_of(alpha, beta), [&](auto k) {
      if (op.conjugate) {
        f(alpha, beta, k, std::true_type{});
      } else {
        f(alpha, beta, k, std::false_type{});
      }
    });
  };
  switch (op.type) {
  case Scalar::f32:
    return typed(float{});
  case Scalar::f64:
    return typed(double{});
  case Scalar::c32:
    return typed(Complex<float>{});
  case Scalar::c64:
    return typed(Complex<double>{});
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

namespace {
template <class T, Case K, bool Conj>
void run_loaded(const Operation &op, std::byte *to, Index to_step, const std::byte *from,
                Index from_step, Index count) {
  run<T, K, Conj>(to, to_step, from, from_step, count, load<T>(op.alpha.data()),
                  load<T>(op.beta.data()));
}
void run_nothing(const Operation & /*op*/, std::byte * /*to*/, Index /*to_step*/,
                 const std::byte * /*from*/, Index /*from_step*/, Index /*count*/) {}
} // namespace

OperationKernel::OperationKernel(const Operation &op) : op_(&op), run_(run_nothing) {
  with_formula(op, [&](auto alpha, auto /*beta*/, auto k, auto conj) {
    run_ = &run_loaded<decltype(alpha), k.value, conj.value>;
  });
}

void apply_operation(const Operation &op, std::byte *to, Index to_step, const std::byte *from,
                     Index from_step, Index count) {
  const OperationKernel combine(op);
  combine(to, to_step, from, from_step, count);
}

void apply_operation(const Operation &op, std::byte *to, Index to_e, Index to_w,
                     const std::byte *from, Index from_e, Index from_w, Index height, Index width) {
  with_formula(op, [&](auto alpha, auto beta, auto k, auto conj) {
    run_rectangle<decltype(alpha), k.value, conj.value>(to, to_e, to_w, from, from_e, from_w,
                                                        height, width, alpha, beta);
  });
}

} // namespace redist
