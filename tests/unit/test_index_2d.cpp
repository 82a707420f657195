#include "index.hpp"
#include "layout.hpp"
#include "reference.hpp"

#include <gtest/gtest.h>

#include <sstream>
#include <string>
#include <vector>

namespace redist::test {
namespace {

struct Element2D {
  Index i, j;
  Index src_row, src_col;
  Index dst_row, dst_col;
  bool operator==(const Element2D &) const = default;
};

std::string to_string(const Element2D &e) {
  std::ostringstream os;
  os << "(i=" << e.i << " j=" << e.j << " src=(" << e.src_row << "," << e.src_col << ") dst=("
     << e.dst_row << "," << e.dst_col << "))";
  return os.str();
}

struct Case2D {
  Transfer1D rows;
  Transfer1D cols;
  Region region;

  [[nodiscard]] std::string describe() const {
    std::ostringstream os;
    os << "rows " << test::describe(rows) << "\n  cols " << test::describe(cols)
       << "\n  region kind=" << static_cast<int>(region.kind) << " unit_diag=" << region.unit_diag;
    return os.str();
  }
};

// Pair index of ((pr, pc), (qr, qc)).
struct PairIndex {
  int src_rows, src_cols, dst_rows, dst_cols;
  [[nodiscard]] std::size_t operator()(int pr, int pc, int qr, int qc) const {
    return ((static_cast<std::size_t>(pr) * static_cast<std::size_t>(src_cols) +
             static_cast<std::size_t>(pc)) *
                static_cast<std::size_t>(dst_rows) +
            static_cast<std::size_t>(qr)) *
               static_cast<std::size_t>(dst_cols) +
           static_cast<std::size_t>(qc);
  }
  [[nodiscard]] std::size_t size() const {
    return static_cast<std::size_t>(src_rows) * src_cols * dst_rows * dst_cols;
  }
};

// Column-major enumeration of the copied window elements, grouped by process pair.
std::vector<std::vector<Element2D>> brute_force_2d(const Case2D &c, const PairIndex &index) {
  std::vector<std::vector<Element2D>> pairs(index.size());
  const Index m = c.rows.length;
  const Index n = c.cols.length;
  for (Index j = 0; j < n; ++j) {
    const Index gs_col = c.cols.src_start + j;
    const Index gd_col = c.cols.dst_start + j;
    for (Index i = 0; i < m; ++i) {
      if (!reference_copied(c.region.kind, c.region.unit_diag, i, j, m, n)) {
        continue;
      }
      const Index gs_row = c.rows.src_start + i;
      const Index gd_row = c.rows.dst_start + i;
      pairs[index(ref_owner(c.rows.src, gs_row), ref_owner(c.cols.src, gs_col),
                  ref_owner(c.rows.dst, gd_row), ref_owner(c.cols.dst, gd_col))]
          .push_back({i, j, ref_local(c.rows.src, gs_row), ref_local(c.cols.src, gs_col),
                      ref_local(c.rows.dst, gd_row), ref_local(c.cols.dst, gd_col)});
    }
  }
  return pairs;
}

// The elements of one pair as the product of a column pattern and a row pattern, the rows of
// each column limited by the region.
std::vector<Element2D> product(const RunPattern &row_pattern, const RunPattern &col_pattern,
                               const Case2D &c) {
  std::vector<Element2D> out;
  col_pattern.for_each([&](const Run &col_run) {
    for (Index x = 0; x < col_run.length; ++x) {
      const Index j = col_run.k + x;
      const auto [first, last] = c.region.rows_in_column(j, c.rows.length, c.cols.length);
      row_pattern.for_each(first, last, [&](const Run &row_run) {
        for (Index y = 0; y < row_run.length; ++y) {
          out.push_back({row_run.k + y, j, row_run.src_local + y, col_run.src_local + x,
                         row_run.dst_local + y, col_run.dst_local + x});
        }
      });
    }
  });
  return out;
}

Index product_volume(const RunPattern &row_pattern, const RunPattern &col_pattern,
                     const Case2D &c) {
  Index volume = 0;
  col_pattern.for_each([&](const Run &col_run) {
    for (Index j = col_run.k; j < col_run.k + col_run.length; ++j) {
      const auto [first, last] = c.region.rows_in_column(j, c.rows.length, c.cols.length);
      volume += row_pattern.count_below(last) - row_pattern.count_below(first);
    }
  });
  return volume;
}

std::string element_diff(const std::vector<Element2D> &expected,
                         const std::vector<Element2D> &actual) {
  const std::size_t common = std::min(expected.size(), actual.size());
  for (std::size_t i = 0; i < common; ++i) {
    if (!(expected[i] == actual[i])) {
      return "element " + std::to_string(i) + ": expected " + to_string(expected[i]) + ", got " +
             to_string(actual[i]);
    }
  }
  if (expected.size() != actual.size()) {
    return "expected " + std::to_string(expected.size()) + " elements, got " +
           std::to_string(actual.size());
  }
  return {};
}

std::string check_case(const Case2D &c) {
  const PairIndex index{c.rows.src.nprocs, c.cols.src.nprocs, c.rows.dst.nprocs, c.cols.dst.nprocs};
  const auto expected = brute_force_2d(c, index);

  const auto all = [](int count, auto make) {
    std::vector<std::vector<RunPattern>> out(static_cast<std::size_t>(count));
    for (int p = 0; p < count; ++p) {
      out[static_cast<std::size_t>(p)] = make(p);
    }
    return out;
  };
  const auto rows_from = all(index.src_rows, [&](int p) { return runs_from_source(c.rows, p); });
  const auto cols_from = all(index.src_cols, [&](int p) { return runs_from_source(c.cols, p); });
  const auto rows_to = all(index.dst_rows, [&](int q) { return runs_to_destination(c.rows, q); });
  const auto cols_to = all(index.dst_cols, [&](int q) { return runs_to_destination(c.cols, q); });
  const auto u = [](int v) { return static_cast<std::size_t>(v); };
  for (int pr = 0; pr < index.src_rows; ++pr) {
    for (int pc = 0; pc < index.src_cols; ++pc) {
      for (int qr = 0; qr < index.dst_rows; ++qr) {
        for (int qc = 0; qc < index.dst_cols; ++qc) {
          const auto &want = expected[index(pr, pc, qr, qc)];
          const auto where = [&](const std::string &what) {
            std::ostringstream os;
            os << "pair ((" << pr << "," << pc << "),(" << qr << "," << qc << ")): " << what;
            return os.str();
          };
          const RunPattern &row_from = rows_from[u(pr)][u(qr)];
          const RunPattern &col_from = cols_from[u(pc)][u(qc)];
          if (std::string err = element_diff(want, product(row_from, col_from, c)); !err.empty()) {
            return where("from source: " + err);
          }
          const RunPattern &row_to = rows_to[u(qr)][u(pr)];
          const RunPattern &col_to = cols_to[u(qc)][u(pc)];
          if (std::string err = element_diff(want, product(row_to, col_to, c)); !err.empty()) {
            return where("to destination: " + err);
          }
          const Index volume = product_volume(row_from, col_from, c);
          if (volume != static_cast<Index>(want.size())) {
            return where("volume " + std::to_string(volume) + ", expected " +
                         std::to_string(want.size()));
          }
          if (c.region.kind == Region::Kind::full &&
              row_from.total() * col_from.total() != volume) {
            return where("row total * column total != volume");
          }
        }
      }
    }
  }
  return {};
}

void run_random_2d(std::uint64_t default_seed, int cases, bool with_regions, Index max_extent,
                   Index max_block, int max_procs) {
  Random rng(test_seed(default_seed));
  constexpr Region::Kind kinds[] = {Region::Kind::full, Region::Kind::upper, Region::Kind::lower};
  int failures = 0;
  for (int n = 0; n < cases && failures < 5; ++n) {
    Case2D c{random_transfer(rng, max_extent, max_block, max_procs),
             random_transfer(rng, max_extent, max_block, max_procs),
             {}};
    if (with_regions) {
      c.region.kind = kinds[rng.uniform_int(0, 2)];
      c.region.unit_diag = rng.chance(50);
    }
    if (const std::string err = check_case(c); !err.empty()) {
      ADD_FAILURE() << "case " << n << "\n  " << c.describe() << "\n  " << err;
      ++failures;
    }
  }
}

TEST(Index2D, ProductOfDimensionsMatchesBruteForce) {
  run_random_2d(11, 3000, false, 60, 10, 4);
  run_random_2d(13, 150, false, 250, 40, 6);
}

TEST(Index2D, TrapezoidsMatchBruteForce) {
  run_random_2d(12, 5000, true, 60, 10, 4);
  run_random_2d(14, 300, true, 250, 40, 6);
}

TEST(Index2D, HandPickedTrapezoids) {
  using K = Region::Kind;
  const Transfer1D tall{{40, 3, 2, 1}, {30, 4, 3, 0}, 5, 2, 25};
  const Transfer1D wide{{50, 5, 3, 2}, {60, 2, 2, 1}, 1, 20, 37};
  const Transfer1D square{{17, 4, 2, 0}, {17, 3, 2, 1}, 0, 0, 17};
  const Case2D cases[] = {
      {tall, wide, {K::upper, false}},     {tall, wide, {K::upper, true}},
      {tall, wide, {K::lower, false}},     {tall, wide, {K::lower, true}},
      {wide, tall, {K::upper, false}},     {wide, tall, {K::lower, true}},
      {square, square, {K::upper, false}}, {square, square, {K::lower, true}},
      {square, square, {K::full, true}},
  };
  for (const Case2D &c : cases) {
    EXPECT_EQ(check_case(c), "") << c.describe();
  }
}

} // namespace
} // namespace redist::test
