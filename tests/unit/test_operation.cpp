// The kernels of B := alpha op(A) + beta B (src/exec/transport/operation.hpp) alone: the BLAS
// rules for the special values (beta = 0 never reads B, alpha = 0 never reads A), conjugation,
// and each product rounded before the sum (compared with the formula evaluated here through
// volatile temporaries, which no compiler contracts). The bitwise comparison with PBLAS itself
// is tests/mpi/test_pblas_ops.cpp's.

#include "operation.hpp"

#include <gtest/gtest.h>

#include <cmath>
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

} // namespace
} // namespace redist
