// The executor's copy loops (Pieces: pack, unpack, local copy) on rank plans of first-block and
// row-major layouts, unchanged: a whole redistribution is run rank by rank in one process and
// every local array of B compared with the dealt oracle (kinds_support.hpp), elements outside
// the region untouched.
#include "kinds_support.hpp"
#include "pieces.hpp"
#include "plan.hpp"

#include <gtest/gtest.h>

#include <vector>

namespace redist::test::kinds_exec {
namespace {

constexpr double kUntouched = -1.0;

// Elements of `rank`'s local array of layout l (leading dimension lld), at least one.
std::size_t local_size(const Layout &l, int rank, Index lld) {
  int pr = 0;
  int pc = 0;
  if (!l.grid.find(rank, pr, pc)) return 1;
  const Index across = l.row_major ? l.rows.local_extent(pr) : l.cols.local_extent(pc);
  return static_cast<std::size_t>(std::max<Index>(1, lld * across));
}

Index offset(Index r, Index c, Index lld, bool row_major) {
  return row_major ? r * lld + c : r + c * lld;
}

// B's local arrays after the transfer, from the definitions.
std::vector<std::vector<double>> expected_b(const KindsCase &c,
                                            const std::vector<std::vector<double>> &a) {
  const Transfer &t = c.t;
  std::vector<std::vector<double>> b;
  b.reserve(static_cast<std::size_t>(c.comm_size));
  for (int r = 0; r < c.comm_size; ++r) {
    b.emplace_back(local_size(t.dst, r, c.lld_dst[static_cast<std::size_t>(r)]), kUntouched);
  }
  const DealtDimension ar = deal(t.src.rows);
  const DealtDimension ac = deal(t.src.cols);
  const DealtDimension br = deal(t.dst.rows);
  const DealtDimension bc = deal(t.dst.cols);
  for (Index j = 0; j < t.n; ++j) {
    for (Index i = 0; i < t.m; ++i) {
      if (!reference_copied(t.region.kind, t.region.unit_diag, i, j, t.m, t.n,
                            t.region.diagonal == Region::Diagonal::top_left)) {
        continue;
      }
      const auto ai = static_cast<std::size_t>(t.src.i + (t.transposed() ? j : i));
      const auto aj = static_cast<std::size_t>(t.src.j + (t.transposed() ? i : j));
      const auto bi = static_cast<std::size_t>(t.dst.i + i);
      const auto bj = static_cast<std::size_t>(t.dst.j + j);
      const auto from = static_cast<std::size_t>(t.src.grid.rank_at(ar.owner[ai], ac.owner[aj]));
      const auto to = static_cast<std::size_t>(t.dst.grid.rank_at(br.owner[bi], bc.owner[bj]));
      b[to][static_cast<std::size_t>(
          offset(br.local[bi], bc.local[bj], c.lld_dst[to], t.dst.row_major))] =
          a[from][static_cast<std::size_t>(
              offset(ar.local[ai], ac.local[aj], c.lld_src[from], t.src.row_major))];
    }
  }
  return b;
}

const std::byte *read_bytes(const std::vector<double> &v) {
  return reinterpret_cast<const std::byte *>(v.data());
}
std::byte *write_bytes(std::vector<double> &v) {
  return reinterpret_cast<std::byte *>(v.data());
}

TEST(LayoutKindsThroughPieces, FirstBlocksAndRowMajorArraysMoveThroughTheCopyLoops) {
  Random rng(test_seed(0x9e));
  for (int trial = 0; trial < 600; ++trial) {
    const KindsCase c = random_kinds_case(rng, true);
    const auto ranks = static_cast<std::size_t>(c.comm_size);
    std::vector<std::vector<double>> a(ranks);
    std::vector<std::vector<double>> b(ranks);
    std::vector<RankPlan> plans;
    std::vector<Pieces> pieces;
    for (std::size_t r = 0; r < ranks; ++r) {
      a[r].resize(local_size(c.t.src, static_cast<int>(r), c.lld_src[r]));
      for (std::size_t k = 0; k < a[r].size(); ++k) {
        a[r][k] = static_cast<double>(r * 100000 + k);
      }
      b[r].assign(local_size(c.t.dst, static_cast<int>(r), c.lld_dst[r]), kUntouched);
      plans.push_back(make_rank_plan(c.t, static_cast<int>(r), c.comm_size));
      pieces.emplace_back(plans.back(), sizeof(double), c.lld_src[r], c.lld_dst[r]);
    }
    for (std::size_t r = 0; r < ranks; ++r) {
      pieces[r].copy_local(read_bytes(a[r]), write_bytes(b[r]));
      for (const Peer &send : plans[r].sends) {
        std::vector<double> message(static_cast<std::size_t>(send.elements));
        pieces[r].pack(send, read_bytes(a[r]), write_bytes(message));
        const auto to = static_cast<std::size_t>(send.rank);
        const auto recv =
            std::find_if(plans[to].recvs.begin(), plans[to].recvs.end(),
                         [&](const Peer &p) { return p.rank == static_cast<int>(r); });
        ASSERT_NE(recv, plans[to].recvs.end()) << "trial " << trial;
        ASSERT_EQ(recv->elements, send.elements) << "trial " << trial;
        pieces[to].unpack(*recv, read_bytes(message), write_bytes(b[to]));
      }
    }
    ASSERT_EQ(b, expected_b(c, a)) << "trial " << trial;
  }
}

} // namespace
} // namespace redist::test::kinds_exec
