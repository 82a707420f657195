// The executor's copy loops (Pieces: pack, unpack, local copy) on block grid plans: random
// transfers between block grids, or a block grid and a 2-D block-cyclic layout
// (grid_support.hpp), run rank by rank in one process, messages packed and unpacked whole or in
// random windows, and every local array of B compared with an oracle written here: each
// element of B's window looked up in the whole grids, B := alpha op(A) + beta B computed from
// the definitions (small integers: exact), every other element of B untouched. Copies, op N
// and T on doubles, op C on complex doubles, alpha and beta among 0, 1 and others.
#include "grid_support.hpp"
#include "operation.hpp"
#include "pieces.hpp"

#include <gtest/gtest.h>

#include <complex>
#include <cstring>
#include <map>
#include <memory>
#include <sstream>
#include <string>
#include <type_traits>
#include <vector>

namespace redist::test::grids::exec {
namespace {

using Complex = std::complex<double>;

// Elements of rank r's local array of a grid side (the end of its furthest block), at least 1.
std::size_t grid_size(const FullGrid &f, int r) {
  Index size = 1;
  for (std::size_t k = 0; k < f.owner.size(); ++k) {
    if (f.owner[k] != r) continue;
    const LocalBlock &b = f.placed[k];
    const auto row = static_cast<std::size_t>(b.block_row);
    const auto col = static_cast<std::size_t>(b.block_col);
    const Index height = f.row_splits[row + 1] - f.row_splits[row];
    const Index width = f.col_splits[col + 1] - f.col_splits[col];
    size = std::max(size, b.offset + b.ld * (f.row_major ? height : width));
  }
  return static_cast<std::size_t>(size);
}

std::size_t cyclic_size(const CyclicSide &c, int r) {
  int pr = 0;
  int pc = 0;
  if (!c.layout.grid.find(r, pr, pc)) return 1;
  const Index across =
      c.layout.row_major ? c.layout.rows.local_extent(pr) : c.layout.cols.local_extent(pc);
  return static_cast<std::size_t>(std::max<Index>(1, c.lld[static_cast<std::size_t>(r)] * across));
}

// alpha * x + beta * y as the operation defines it (beta = 0: y not read).
template <class T> T combined(T alpha, T x, T beta, T y) {
  return beta == T(0) ? alpha * x : alpha * x + beta * y;
}

template <class T> T value_of(Random &rng) {
  if constexpr (std::is_same_v<T, Complex>) {
    return {static_cast<double>(rng.uniform(-9, 9)), static_cast<double>(rng.uniform(-9, 9))};
  } else {
    return static_cast<T>(rng.uniform(-9, 9));
  }
}

struct Mode {
  bool operation = false; // else a copy
  bool conjugate = false;
  bool windows = false;    // pack and unpack in random windows
  bool from_array = false; // receivers copy from the senders' arrays where the senders publish
                           // their tiles' offsets, as from a shared array
};

template <class T>
std::string run_case(const Case &c, Random &rng, const Mode &run, T alpha, T beta) {
  const auto size = static_cast<std::size_t>(c.comm_size);
  std::vector<BlockGrid> a_views;
  std::vector<BlockGrid> b_views;
  std::vector<std::vector<T>> a(size);
  std::vector<std::vector<T>> b(size);
  for (int r = 0; r < c.comm_size; ++r) {
    a_views.push_back(c.a.view(r));
    b_views.push_back(c.b.view(r));
    const auto ru = static_cast<std::size_t>(r);
    a[ru].resize(c.a_cyclic ? cyclic_size(c.ca, r) : grid_size(c.a, r));
    b[ru].resize(c.b_cyclic ? cyclic_size(c.cb, r) : grid_size(c.b, r));
    for (T &x : a[ru])
      x = value_of<T>(rng);
    for (T &x : b[ru])
      x = value_of<T>(rng);
  }
  // The oracle, from the whole grids.
  std::vector<std::vector<T>> expected = b;
  const T used_alpha = run.operation ? alpha : T(1);
  const T used_beta = run.operation ? beta : T(0);
  for (Index j = 0; j < c.n; ++j) {
    for (Index i = 0; i < c.m; ++i) {
      const auto [from, src] = c.transposed ? c.locate_a(c.a_i() + j, c.a_j() + i)
                                            : c.locate_a(c.a_i() + i, c.a_j() + j);
      const auto [to, dst] = c.locate_b(c.b_i() + i, c.b_j() + j);
      T x = a[static_cast<std::size_t>(from)][static_cast<std::size_t>(src)];
      if constexpr (std::is_same_v<T, Complex>) {
        if (run.conjugate) x = std::conj(x);
      }
      T &y = expected[static_cast<std::size_t>(to)][static_cast<std::size_t>(dst)];
      y = combined(used_alpha, x, used_beta, y);
    }
  }
  const Scalar type = std::is_same_v<T, Complex> ? Scalar::c64 : Scalar::f64;
  const Operation op = Operation::make(type, run.conjugate, &alpha, &beta);
  std::vector<Pieces> pieces;
  for (int r = 0; r < c.comm_size; ++r) {
    const auto ru = static_cast<std::size_t>(r);
    const GridTransfer t = grid_transfer_of(c, a_views[ru], b_views[ru], r);
    if (std::string why = check_grid_transfer(t, r, c.comm_size); !why.empty()) return why;
    pieces.emplace_back(std::make_shared<const GridRankPlan>(make_grid_rank_plan(t, r)), sizeof(T));
    if (run.operation) pieces.back().set_operation(&op);
  }
  // Pack every message (in windows when asked), then unpack them and copy the local parts;
  // with from_array, every message whose sender publishes its tiles' offsets is copied from
  // the sender's array instead, read no further than the extent the receiver computes.
  std::map<std::pair<int, int>, std::vector<T>> messages;
  std::map<std::pair<int, int>, Index> extents; // (from, to): A's elements up to the last read
  for (Index j = 0; j < c.n; ++j) {
    for (Index i = 0; i < c.m; ++i) {
      const auto [from, src] = c.transposed ? c.locate_a(c.a_i() + j, c.a_j() + i)
                                            : c.locate_a(c.a_i() + i, c.a_j() + j);
      const int to = c.locate_b(c.b_i() + i, c.b_j() + j).first;
      Index &extent = extents[{from, to}];
      extent = std::max(extent, src + 1);
    }
  }
  const auto windows = [&](Index elements, const auto &f) {
    for (Index lo = 0; lo < elements;) {
      const Index hi = run.windows ? std::min(elements, lo + rng.uniform(1, 7)) : elements;
      f(lo, hi);
      lo = hi;
    }
  };
  for (int r = 0; r < c.comm_size; ++r) {
    const auto *from = reinterpret_cast<const std::byte *>(a[static_cast<std::size_t>(r)].data());
    for (const Peer &peer : pieces[static_cast<std::size_t>(r)].plan().sends) {
      std::vector<T> &m = messages[{r, peer.rank}];
      m.resize(static_cast<std::size_t>(peer.elements));
      windows(peer.elements, [&](Index lo, Index hi) {
        pieces[static_cast<std::size_t>(r)].pack(
            peer, from, reinterpret_cast<std::byte *>(m.data() + lo), lo, hi);
      });
    }
  }
  for (int r = 0; r < c.comm_size; ++r) {
    Pieces &p = pieces[static_cast<std::size_t>(r)];
    auto *to = reinterpret_cast<std::byte *>(b[static_cast<std::size_t>(r)].data());
    for (std::size_t i = 0; i < p.plan().recvs.size(); ++i) {
      const Peer &peer = p.plan().recvs[i];
      if (run.from_array && p.grid_source_words(i) > 0) {
        const Pieces &sender = pieces[static_cast<std::size_t>(peer.rank)];
        const std::span<const Index> directory = sender.grid_directory();
        std::span<const Index> words;
        for (std::size_t e = 0; e + 2 < directory.size(); e += 3) {
          if (directory[e] == r) {
            words = sender.grid_sources().subspan(static_cast<std::size_t>(directory[e + 1]),
                                                  p.grid_source_words(i));
          }
        }
        // Words a copy could not trust are refused: an offset below A or past any address
        // space, in the first tile that has elements.
        for (std::size_t w = 0; w + Pieces::kGridSourceWords <= words.size();
             w += Pieces::kGridSourceWords) {
          if (words[w + 1] > 0 && words[w + 2] > 0) {
            std::vector<Index> bad(words.begin(), words.end());
            for (const Index offset : {Index{-1}, Index{1} << 50}) {
              bad[w + 3] = offset;
              if (p.set_grid_sources(i, bad))
                return "set_grid_sources took a tile at " + std::to_string(offset);
            }
            break;
          }
        }
        if (!p.set_grid_sources(i, words)) return "set_grid_sources refused its sender's words";
        if (p.source_extent(peer, 0) != extents[{peer.rank, r}]) {
          return "source_extent " + std::to_string(p.source_extent(peer, 0)) + " from rank " +
                 std::to_string(peer.rank) + ", expected " +
                 std::to_string(extents[{peer.rank, r}]);
        }
        const auto *src =
            reinterpret_cast<const std::byte *>(a[static_cast<std::size_t>(peer.rank)].data());
        windows(peer.elements,
                [&](Index lo, Index hi) { p.copy_from_array(peer, src, 0, to, lo, hi); });
        continue;
      }
      const std::vector<T> &m = messages[{peer.rank, r}];
      if (m.size() != static_cast<std::size_t>(peer.elements)) return "message sizes differ";
      windows(peer.elements, [&](Index lo, Index hi) {
        p.unpack(peer, reinterpret_cast<const std::byte *>(m.data() + lo), to, lo, hi);
      });
    }
    p.copy_local(reinterpret_cast<const std::byte *>(a[static_cast<std::size_t>(r)].data()), to);
  }
  for (std::size_t r = 0; r < size; ++r) {
    for (std::size_t k = 0; k < b[r].size(); ++k) {
      if (b[r][k] != expected[r][k]) {
        std::ostringstream why;
        why << "rank " << r << " element " << k << ": " << b[r][k] << ", expected "
            << expected[r][k];
        return why.str();
      }
    }
  }
  return {};
}

// `cases` random cases of element type T, alpha and beta among `scalars`; `complex`: every
// operation is one, transposed cases conjugated (op C).
template <class T, std::size_t K>
void run_cases(std::uint64_t seed, int cases, const T (&scalars)[K], bool complex) {
  Random rng(test_seed(seed));
  for (int iter = 0; iter < cases; ++iter) {
    const Case c = random_case(rng, iter % 3);
    Mode run;
    run.operation = complex || rng.chance(60);
    run.conjugate = complex && c.transposed;
    run.windows = rng.chance(40);
    run.from_array = rng.chance(50);
    const T alpha = scalars[rng.uniform(0, K - 1)];
    const T beta = scalars[rng.uniform(0, K - 1)];
    const std::string why = run_case<T>(c, rng, run, alpha, beta);
    ASSERT_TRUE(why.empty()) << "case " << iter << " (kind " << iter % 3
                             << (c.transposed ? (complex ? ", op C" : ", transposed") : "")
                             << ", alpha " << alpha << ", beta " << beta
                             << (run.operation ? "" : ", copy") << (run.windows ? ", windows" : "")
                             << (run.from_array ? ", from A" : "") << "): " << why;
  }
}

TEST(GridExec, CopiesAndOperationsMatchTheOracle) {
  const double scalars[] = {0.0, 1.0, 2.0, -1.0, 0.5};
  run_cases(20261129, 1500, scalars, false);
}

TEST(GridExec, ConjugatedComplexOperationsMatchTheOracle) {
  const Complex scalars[] = {{0.0, 0.0}, {1.0, 0.0}, {2.0, -1.0}, {0.0, 1.0}};
  run_cases(7, 600, scalars, true);
}

} // namespace
} // namespace redist::test::grids::exec
