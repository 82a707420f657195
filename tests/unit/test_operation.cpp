// The kernels of B := alpha op(A) + beta B (src/exec/transport/operation.hpp) alone: the BLAS
// rules for the special values (beta = 0 never reads B, alpha = 0 never reads A), conjugation,
// and each product rounded before the sum (compared with the formula evaluated here through
// volatile temporaries, which no compiler contracts). The bitwise comparison with PBLAS itself
// is tests/mpi/test_pblas_ops.cpp's.

#include "operation.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <complex>
#include <cstdint>
#include <cstring>
#include <limits>
#include <random>
#include <vector>

namespace redist {
namespace {

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();
constexpr double kInf = std::numeric_limits<double>::infinity();

std::vector<double> apply(const Operation &op, const std::vector<double> &a, std::vector<double> b,
                          Index per_element = 1) {
  const auto count = static_cast<Index>(b.size()) / per_element;
  apply_operation(op, reinterpret_cast<std::byte *>(b.data()), 1,
                  reinterpret_cast<const std::byte *>(a.data()), 1, count);
  return b;
}

TEST(Operation, BetaZeroNeverReadsB) {
  const double alpha = 3, beta = 0;
  const auto op = Operation::make(Scalar::f64, false, &alpha, &beta);
  const auto b = apply(op, {1, 2, 3}, {kNaN, kInf, -kInf});
  EXPECT_EQ(b, (std::vector<double>{3, 6, 9}));
  const double one = 1;
  const auto copy = apply(Operation::make(Scalar::f64, false, &one, &beta), {1, 2}, {kNaN, kNaN});
  EXPECT_EQ(copy, (std::vector<double>{1, 2}));
  const double zero = 0;
  const auto zeros =
      apply(Operation::make(Scalar::f64, false, &zero, &beta), {kNaN, 1}, {kNaN, kInf});
  EXPECT_EQ(zeros, (std::vector<double>{0, 0}));
}

TEST(Operation, AlphaZeroNeverReadsA) {
  const double alpha = 0, beta = -2;
  const auto b = apply(Operation::make(Scalar::f64, false, &alpha, &beta), {kNaN, kInf}, {1.5, -4});
  EXPECT_EQ(b, (std::vector<double>{-3, 8}));
  const double one = 1;
  const auto kept =
      apply(Operation::make(Scalar::f64, false, &alpha, &one), {kNaN, kInf}, {1.5, -4});
  EXPECT_EQ(kept, (std::vector<double>{1.5, -4}));
  EXPECT_TRUE(Operation::make(Scalar::f64, false, &alpha, &one).leaves_b());
  EXPECT_TRUE(Operation::make(Scalar::f64, false, &one, &alpha).copies());
}

TEST(Operation, ProductsRoundedBeforeTheSum) {
  std::mt19937_64 gen(5);
  std::uniform_real_distribution<double> u(-1, 1);
  for (int i = 0; i < 2000; ++i) {
    const double alpha = u(gen), beta = u(gen), a = u(gen), b = u(gen);
    volatile double pa = alpha * a;
    volatile double pb = beta * b;
    const double want = pa + pb;
    const auto got = apply(Operation::make(Scalar::f64, false, &alpha, &beta), {a}, {b});
    EXPECT_EQ(std::memcmp(&got[0], &want, sizeof want), 0) << alpha << " " << a << " " << beta;
  }
}

TEST(Operation, ComplexConjugateAndProduct) {
  std::mt19937_64 gen(6);
  std::uniform_real_distribution<double> u(-1, 1);
  for (int i = 0; i < 500; ++i) {
    const double alpha[2] = {u(gen), u(gen)}, beta[2] = {u(gen), u(gen)};
    const std::vector<double> a = {u(gen), u(gen)};
    const std::vector<double> b = {u(gen), u(gen)};
    for (const bool conj : {false, true}) {
      const double ar = a[0], ai = conj ? -a[1] : a[1];
      volatile double t1 = alpha[0] * ar, t2 = alpha[1] * ai, t3 = alpha[0] * ai,
                      t4 = alpha[1] * ar;
      volatile double s1 = beta[0] * b[0], s2 = beta[1] * b[1], s3 = beta[0] * b[1],
                      s4 = beta[1] * b[0];
      volatile double xr = t1 - t2, xi = t3 + t4, yr = s1 - s2, yi = s3 + s4;
      const double want[2] = {xr + yr, xi + yi};
      const auto got = apply(Operation::make(Scalar::c64, conj, alpha, beta), a, b, 2);
      EXPECT_EQ(std::memcmp(got.data(), want, sizeof want), 0);
    }
  }
}

// The formula of one element, each product rounded (volatile temporaries), as the PBLAS kernels
// compute it for each case of alpha and beta (operation.hpp's table).
double expected_element(double alpha, double beta, double a, double b) {
  if (alpha == 0) {
    if (beta == 0) {
      return 0;
    }
    volatile double scaled = beta * b;
    return beta == 1 ? b : scaled;
  }
  volatile double pa = alpha * a;
  volatile double pb = beta * b;
  const double alpha_a = alpha == 1 ? a : pa;
  if (beta == 0) {
    return alpha_a;
  }
  return beta == 1 ? b + alpha_a : alpha_a + pb;
}

// The formula of one complex element as the PBLAS kernels compute it (operation.hpp's table;
// products (xr*yr - xi*yi) + i(xr*yi + xi*yr), each rounded), a' = conj(a) where asked.
std::complex<double> expected_complex(std::complex<double> alpha, std::complex<double> beta,
                                      std::complex<double> a, std::complex<double> b, bool conj) {
  const auto product = [](std::complex<double> x, std::complex<double> y) {
    volatile double t1 = x.real() * y.real(), t2 = x.imag() * y.imag(), t3 = x.real() * y.imag(),
                    t4 = x.imag() * y.real();
    volatile double re = t1 - t2, im = t3 + t4;
    return std::complex<double>(re, im);
  };
  const auto sum = [](std::complex<double> x, std::complex<double> y) {
    volatile double re = x.real() + y.real(), im = x.imag() + y.imag();
    return std::complex<double>(re, im);
  };
  const std::complex<double> a_op = conj ? std::complex<double>(a.real(), -a.imag()) : a;
  const std::complex<double> one(1, 0), zero(0, 0);
  if (alpha == zero) {
    return beta == zero ? zero : beta == one ? b : product(beta, b);
  }
  const std::complex<double> alpha_a = alpha == one ? a_op : product(alpha, a_op);
  if (beta == zero) {
    return alpha_a;
  }
  return beta == one ? sum(b, alpha_a) : sum(alpha_a, product(beta, b));
}

// B (height x width, leading dimension ldb) := alpha op(A) + beta B, A width x height with
// leading dimension lda, through the rectangle form with a transposition's steps: 600 random
// rectangles, every case of alpha and beta among `specials` (and random ones), conjugated in
// every other one where `conjugates`, heights and widths across the kernels' blocks and their
// edges, every element bitwise as expected(alpha, beta, a, b, conj). B's padding rows stay as
// they were. random(gen): an element.
template <class T, class Random, class Expected>
void check_transposed_rectangles(std::uint64_t seed, Scalar type, bool conjugates,
                                 const std::vector<T> &specials, Random random, Expected expected) {
  std::mt19937_64 gen(seed);
  std::uniform_int_distribution<Index> size(1, 75);
  for (int trial = 0; trial < 600; ++trial) {
    const Index height = size(gen);
    const Index width = size(gen);
    const Index lda = width + trial % 3;
    const Index ldb = height + trial % 5;
    const bool conj = conjugates && trial % 2 == 1;
    const T alpha =
        trial % 7 == 6 ? random(gen) : specials[static_cast<std::size_t>((trial / 2) % 4)];
    const T beta =
        trial % 5 == 4 ? random(gen) : specials[static_cast<std::size_t>((trial / 8) % 4)];
    std::vector<T> a(static_cast<std::size_t>(lda * height));
    std::vector<T> b(static_cast<std::size_t>(ldb * width));
    for (std::vector<T> *v : {&a, &b}) {
      for (T &x : *v) {
        x = random(gen);
      }
    }
    std::vector<T> got = b;
    apply_operation(Operation::make(type, conj, &alpha, &beta),
                    reinterpret_cast<std::byte *>(got.data()), 1, ldb,
                    reinterpret_cast<const std::byte *>(a.data()), lda, 1, height, width);
    for (Index w = 0; w < width; ++w) {
      for (Index e = 0; e < ldb; ++e) {
        const auto at = static_cast<std::size_t>(w * ldb + e);
        const T want = e < height ? expected(alpha, beta, a[static_cast<std::size_t>(e * lda + w)],
                                             b[at], conj)
                                  : b[at];
        ASSERT_EQ(std::memcmp(&got[at], &want, sizeof want), 0)
            << "height " << height << " width " << width << " alpha " << alpha << " beta " << beta
            << (conj ? " conjugated" : "") << " at (" << e << ", " << w << ")";
      }
    }
  }
}

TEST(Operation, TransposedRectanglesAsTheFormula) {
  std::uniform_real_distribution<double> u(-1, 1);
  check_transposed_rectangles<double>(
      7, Scalar::f64, false, {0, 1, 0.5, -3}, [&](std::mt19937_64 &gen) { return u(gen); },
      [](double alpha, double beta, double a, double b, bool /*conj*/) {
        return expected_element(alpha, beta, a, b);
      });
}

// The same for complex doubles, conjugated (op C) and not.
TEST(Operation, TransposedComplexRectanglesAsTheFormula) {
  using C = std::complex<double>;
  std::uniform_real_distribution<double> u(-1, 1);
  check_transposed_rectangles<C>(
      8, Scalar::c64, true, {C(0, 0), C(1, 0), C(0.5, -2), C(0, 1)},
      [&](std::mt19937_64 &gen) { return C(u(gen), u(gen)); }, expected_complex);
}

// The BLAS rules for the special values hold in the transposed rectangles too.
TEST(Operation, TransposedRectanglesKeepTheSpecialValueRules) {
  const Index n = 37;
  std::vector<double> a(static_cast<std::size_t>(n * n), kNaN);
  std::vector<double> b(static_cast<std::size_t>(n * n), kInf);
  const double zero = 0, one = 1, two = 2;
  const auto run = [&](double alpha, double beta, std::vector<double> to,
                       const std::vector<double> &from) {
    apply_operation(Operation::make(Scalar::f64, false, &alpha, &beta),
                    reinterpret_cast<std::byte *>(to.data()), 1, n,
                    reinterpret_cast<const std::byte *>(from.data()), n, 1, n, n);
    return to;
  };
  std::vector<double> finite_a(a.size());
  for (std::size_t i = 0; i < finite_a.size(); ++i) {
    finite_a[i] = static_cast<double>(i);
  }
  // beta = 0: B's infinities never reach the result.
  const auto scaled = run(two, zero, b, finite_a);
  for (Index w = 0; w < n; ++w) {
    for (Index e = 0; e < n; ++e) {
      ASSERT_EQ(scaled[static_cast<std::size_t>(w * n + e)],
                2 * finite_a[static_cast<std::size_t>(e * n + w)]);
    }
  }
  // alpha = 0: A's NaNs never reach the result.
  std::vector<double> finite_b(b.size(), 1.5);
  EXPECT_EQ(run(zero, two, finite_b, a), std::vector<double>(b.size(), 3.0));
  EXPECT_EQ(run(zero, one, finite_b, a), finite_b);
}

} // namespace
} // namespace redist
