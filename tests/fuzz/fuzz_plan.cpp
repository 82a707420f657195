// libFuzzer target over the pure layers (layout, index, plan): the input bytes describe one
// redistribution (two 2-D block-cyclic layouts with windows, a region, a communicator size,
// grid rank maps, leading dimensions) and one 1-D transfer, possibly at 64-bit offsets. Every
// plan is checked against brute-force enumeration of every element, written from the
// ScaLAPACK definitions in tests/unit/reference.hpp, independently of src/:
//   - 1-D: runs_from_source / runs_to_destination equal the maximal runs of the enumerated
//     elements, pair by pair; count_below and local_extent agree with counting;
//   - 2-D: make_rank_plan for every rank of the communicator; each message is replayed the
//     way the executor packs and unpacks it (for_each_piece, and RowGroup expansion for full
//     windows), the sender's packed offsets zipped with the receiver's unpacked offsets; the
//     multiset of (source rank, destination rank, source offset, destination offset) must be
//     exactly the enumerated one, every element of the region once, nothing outside it;
//     message sizes agree on both sides; no rank messages itself;
//   - the same 2-D case again as a transpose (Transfer::perm = {1, 0}, A's window n x m,
//     B(i, j) <- A(j, i) on the region of B's window), walked with tiles.hpp's strided pieces
//     and tiles (the tiles, placed by message position, must equal the piece walk).
// A failure prints the decoded case and aborts, so libFuzzer keeps the input.
//
// Built two ways: with -fsanitize=fuzzer (REDIST_FUZZ=ON, clang) as `redist_fuzz_plan`, and
// with replay_main.cpp as `redist_fuzz_replay`, which runs the checked-in corpus in every
// build (ctest fuzz_corpus_replay).

#include "../unit/reference.hpp"
#include "plan.hpp"
#include "tiles.hpp"

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <sstream>
#include <string>
#include <tuple>
#include <vector>

namespace {

using redist::BlockCyclic;
using redist::Index;
using redist::Layout;
using redist::Region;
using redist::Run;
using redist::RunPattern;
using redist::Transfer;
using redist::Transfer1D;
namespace ref = redist::test;

/// Consumes the fuzzer's bytes; past the end every value is 0 (the smallest choice).
class Bytes {
public:
  Bytes(const std::uint8_t *data, std::size_t size) : data_(data), size_(size) {}
  std::uint64_t raw(int bytes) {
    std::uint64_t v = 0;
    for (int b = 0; b < bytes; ++b) {
      v = (v << 8) | (pos_ < size_ ? data_[pos_] : 0U);
      ++pos_;
    }
    return v;
  }
  /// A value in [lo, hi].
  Index in(Index lo, Index hi) {
    const auto span = static_cast<std::uint64_t>(hi - lo) + 1;
    const int bytes = span <= 256 ? 1 : span <= 65536 ? 2 : span <= (1ULL << 32) ? 4 : 8;
    return lo + static_cast<Index>(raw(bytes) % span);
  }
  int in_int(int lo, int hi) { return static_cast<int>(in(lo, hi)); }

private:
  const std::uint8_t *data_;
  std::size_t size_;
  std::size_t pos_ = 0;
};

std::string describe(const Layout &l) {
  std::ostringstream os;
  os << "rows " << ref::describe(l.rows) << " cols " << ref::describe(l.cols) << " grid "
     << l.grid.nprow << "x" << l.grid.npcol << " ranks [";
  for (const int r : l.grid.ranks)
    os << ' ' << r;
  os << " ] window at (" << l.i << ", " << l.j << ")";
  return os.str();
}

[[noreturn]] void fail(const std::string &what, const std::string &case_text) {
  std::fprintf(stderr, "fuzz_plan: %s\n  case: %s\n", what.c_str(), case_text.c_str());
  std::fflush(stderr);
  std::abort();
}

/// fail() with "<what><where>: <detail>".
[[noreturn]] void fail(const char *what, const std::string &where, const std::string &detail,
                       const std::string &case_text) {
  std::fprintf(stderr, "fuzz_plan: %s%s: %s\n  case: %s\n", what, where.c_str(), detail.c_str(),
               case_text.c_str());
  std::fflush(stderr);
  std::abort();
}

// ---- 1-D: the index layer ---------------------------------------------------------------------

BlockCyclic dimension(Bytes &in, Index extent) {
  BlockCyclic d;
  d.extent = extent;
  const int mode = in.in_int(0, 3);
  d.block = mode == 0 ? in.in(1, 4) : mode == 1 ? in.in(1, 64) : in.in(1, 4096);
  d.nprocs = in.in_int(1, 7);
  d.src = in.in_int(0, d.nprocs - 1);
  return d;
}

void check_1d(Bytes &in) {
  Transfer1D t;
  t.length = in.in(0, 600);
  // Window starts anywhere up to 2^40: element offsets are 64-bit throughout.
  const bool far = in.in_int(0, 3) == 0;
  t.src_start = far ? in.in(0, Index{1} << 40) : in.in(0, 300);
  t.dst_start = far ? in.in(0, Index{1} << 40) : in.in(0, 300);
  t.src = dimension(in, t.src_start + t.length + in.in(0, 50));
  t.dst = dimension(in, t.dst_start + t.length + in.in(0, 50));
  const std::string text = ref::describe(t);

  const auto pairs = ref::brute_force_pairs(t);
  const auto np = static_cast<std::size_t>(t.src.nprocs);
  const auto nq = static_cast<std::size_t>(t.dst.nprocs);
  std::vector<std::vector<RunPattern>> from(np);
  for (std::size_t p = 0; p < np; ++p) {
    from[p] = redist::runs_from_source(t, static_cast<int>(p));
    if (from[p].size() != nq) fail("runs_from_source: wrong number of destinations", text);
  }
  for (std::size_t q = 0; q < nq; ++q) {
    const std::vector<RunPattern> to = redist::runs_to_destination(t, static_cast<int>(q));
    if (to.size() != np) fail("runs_to_destination: wrong number of sources", text);
    for (std::size_t p = 0; p < np; ++p) {
      const std::vector<Run> want = ref::merge_elements(pairs[p * nq + q]);
      const std::string where = " (p=" + std::to_string(p) + ", q=" + std::to_string(q) + ")";
      std::string diff = ref::run_diff(want, ref::visit(from[p][q]));
      if (!diff.empty()) fail("runs_from_source", where, diff, text);
      diff = ref::run_diff(want, ref::visit(to[p]));
      if (!diff.empty()) fail("runs_to_destination", where, diff, text);
      const auto count = static_cast<Index>(pairs[p * nq + q].size());
      if (from[p][q].total() != count) fail("total()" + where, text);
      // count_below at a few points against counting.
      for (const Index x : {Index{0}, t.length / 3, t.length / 2, t.length}) {
        const auto below = std::count_if(pairs[p * nq + q].begin(), pairs[p * nq + q].end(),
                                         [&](const ref::Element &e) { return e.k < x; });
        if (from[p][q].count_below(x) != below)
          fail("count_below(" + std::to_string(x) + ")" + where, text);
      }
      // A clipped visit equals the brute-force elements of the clipped range.
      const Index lo = t.length / 4;
      const Index hi = t.length - t.length / 5;
      std::vector<ref::Element> clipped;
      for (const ref::Element &e : pairs[p * nq + q])
        if (e.k >= lo && e.k < hi) clipped.push_back(e);
      diff = ref::run_diff(ref::merge_elements(clipped), ref::visit(from[p][q], lo, hi));
      if (!diff.empty()) fail("for_each(lo, hi)", where, diff, text);
    }
  }
  // NUMROC against counting owners (small extents only: brute force is O(extent)).
  if (t.src.extent <= 5000) {
    for (int p = 0; p < t.src.nprocs; ++p) {
      Index count = 0;
      for (Index g = 0; g < t.src.extent; ++g)
        count += ref::ref_owner(t.src, g) == p ? 1 : 0;
      if (t.src.local_extent(p) != count) fail("local_extent", text);
    }
  }
}

// ---- 2-D: the plan layer ----------------------------------------------------------------------

Layout layout(Bytes &in, Index m, Index n, int comm_size) {
  Layout l;
  l.grid.nprow = in.in_int(1, 4);
  l.grid.npcol = in.in_int(1, 4);
  while (l.grid.nprow * l.grid.npcol > comm_size) {
    if (l.grid.npcol > 1)
      --l.grid.npcol;
    else
      --l.grid.nprow;
  }
  // A random injective rank map: a partial Fisher-Yates shuffle of the communicator.
  std::vector<int> all(static_cast<std::size_t>(comm_size));
  for (int r = 0; r < comm_size; ++r)
    all[static_cast<std::size_t>(r)] = r;
  const int positions = l.grid.nprow * l.grid.npcol;
  for (int k = 0; k < positions; ++k) {
    const int pick = in.in_int(k, comm_size - 1);
    std::swap(all[static_cast<std::size_t>(k)], all[static_cast<std::size_t>(pick)]);
  }
  l.grid.ranks.assign(all.begin(), all.begin() + positions);
  l.i = in.in(0, 12);
  l.j = in.in(0, 12);
  const auto dim = [&](Index extent, int nprocs) {
    BlockCyclic d;
    d.extent = extent;
    d.block = in.in_int(0, 4) == 0 ? in.in(1, 200) : in.in(1, 6);
    d.nprocs = nprocs;
    d.src = in.in_int(0, nprocs - 1);
    return d;
  };
  l.rows = dim(l.i + m + in.in(0, 5), l.grid.nprow);
  l.cols = dim(l.j + n + in.in(0, 5), l.grid.npcol);
  return l;
}

/// (source rank, destination rank, source offset, destination offset) of one element.
using Move = ref::Move;

/// transposed: the same bytes decoded as B := A^T (perm = {1, 0}): A's window is n x m.
void check_2d(Bytes &in, bool transposed) {
  Transfer t;
  t.m = in.in(0, 40);
  t.n = in.in(0, 40);
  if (transposed) t.perm = {1, 0};
  const int comm_size = in.in_int(1, 9);
  t.src = transposed ? layout(in, t.n, t.m, comm_size) : layout(in, t.m, t.n, comm_size);
  t.dst = layout(in, t.m, t.n, comm_size);
  const int kind = in.in_int(0, 2);
  t.region.kind = kind == 0   ? Region::Kind::full
                  : kind == 1 ? Region::Kind::upper
                              : Region::Kind::lower;
  t.region.unit_diag = in.in_int(0, 1) == 1;
  // Leading dimensions: local rows plus some padding, per rank.
  std::vector<Index> lld_src(static_cast<std::size_t>(comm_size), 1);
  std::vector<Index> lld_dst(static_cast<std::size_t>(comm_size), 1);
  for (int r = 0; r < comm_size; ++r) {
    int pr = 0;
    int pc = 0;
    if (t.src.grid.find(r, pr, pc))
      lld_src[static_cast<std::size_t>(r)] =
          std::max<Index>(1, t.src.rows.local_extent(pr)) + in.in(0, 3);
    if (t.dst.grid.find(r, pr, pc))
      lld_dst[static_cast<std::size_t>(r)] =
          std::max<Index>(1, t.dst.rows.local_extent(pr)) + in.in(0, 3);
  }
  // The transposed pass (the same bytes again) also draws the diagonal's anchor, from one more
  // byte, so that the copy's decoding of the corpus stays as it was.
  if (transposed && in.in_int(0, 1) == 1) t.region.diagonal = Region::Diagonal::top_left;
  std::ostringstream os;
  os << "m=" << t.m << " n=" << t.n << (transposed ? " transposed" : "") << " P=" << comm_size
     << " region=" << kind << " unit_diag=" << t.region.unit_diag
     << " top_left=" << (t.region.diagonal == Region::Diagonal::top_left) << "\n    src "
     << describe(t.src) << "\n    dst " << describe(t.dst);
  const std::string text = os.str();

  // Brute force: every element of the region, from the definitions.
  std::vector<Move> want = ref::brute_force_moves(t, lld_src, lld_dst);

  std::vector<redist::RankPlan> plans;
  plans.reserve(static_cast<std::size_t>(comm_size));
  for (int r = 0; r < comm_size; ++r)
    plans.push_back(redist::make_rank_plan(t, r, comm_size));

  // The (source, destination) offsets of a message's elements in message order: for_each_piece
  // for a copy, the strided pieces of tiles.hpp for a transpose.
  const auto pieces = [&](const RunPattern &rows, const RunPattern &cols, Index lld_s, Index lld_d,
                          std::vector<Index> &s_off, std::vector<Index> &d_off) {
    if (!transposed) {
      redist::for_each_piece(rows, cols, t.region, t.m, t.n, lld_s, lld_d,
                             [&](Index s, Index d, Index count) {
                               for (Index e = 0; e < count; ++e) {
                                 s_off.push_back(s + e);
                                 d_off.push_back(d + e);
                               }
                             });
      return;
    }
    redist::for_each_strided_piece(rows, cols, t.region, t.m, t.n, true, lld_s, lld_d,
                                   [&](const redist::StridedPiece &piece) {
                                     for (Index e = 0; e < piece.count; ++e) {
                                       s_off.push_back(piece.src + e * piece.src_step);
                                       d_off.push_back(piece.dst + e);
                                     }
                                   });
  };
  // The offsets one side of a message visits, in message order: the piece walk above; the
  // tiles of tiles.hpp placed by their message positions; for full windows of a copy also the
  // executor's RowGroup walk. All must visit the same sequence.
  const auto walk = [&](const RunPattern &rows, const RunPattern &cols, Index lld_s, Index lld_d,
                        bool source_side, const std::string &what) {
    std::vector<Index> s_off;
    std::vector<Index> d_off;
    pieces(rows, cols, lld_s, lld_d, s_off, d_off);
    const std::vector<Index> offsets = source_side ? s_off : d_off;
    std::vector<Index> tiled(offsets.size(), -1);
    redist::for_each_tile(
        rows, cols, t.region, t.m, t.n, transposed, lld_s, lld_d, [&](const redist::Tile &tile) {
          for (Index w = 0; w < tile.width; ++w) {
            for (Index e = 0; e < tile.height; ++e) {
              const Index pos = tile.position + e + w * tile.position_width_step;
              if (pos < 0 || pos >= static_cast<Index>(tiled.size()) ||
                  tiled[static_cast<std::size_t>(pos)] != -1)
                fail(what + ": tiles outside the message or overlapping", text);
              tiled[static_cast<std::size_t>(pos)] =
                  source_side ? tile.src + e * tile.src_step + w * tile.src_width_step
                              : tile.dst + e * tile.dst_step + w * tile.dst_width_step;
            }
          }
        });
    if (tiled != offsets) fail(what + ": the tiles differ from the piece walk", text);
    if (!transposed && t.region.kind == Region::Kind::full) {
      const redist::RowGroups groups = redist::row_groups(rows);
      std::vector<Index> grouped;
      cols.for_each([&](const Run &c) {
        for (Index dc = 0; dc < c.length; ++dc) {
          const Index col = source_side ? (c.src_local + dc) * lld_s : (c.dst_local + dc) * lld_d;
          groups.for_each([&](const redist::RowGroup &g, Index src_shift, Index dst_shift) {
            for (Index k = 0; k < g.count; ++k) {
              const Index first = source_side ? g.src + src_shift + k * g.src_step
                                              : g.dst + dst_shift + k * g.dst_step;
              for (Index e = 0; e < g.length; ++e)
                grouped.push_back(col + first + e);
            }
          });
        }
      });
      if (grouped != offsets) fail(what + ": RowGroup walk differs from the piece walk", text);
    }
    return offsets;
  };

  std::vector<Move> got;
  for (int r = 0; r < comm_size; ++r) {
    const redist::RankPlan &p = plans[static_cast<std::size_t>(r)];
    const auto ur = static_cast<std::size_t>(r);
    if (p.self.elements > 0) {
      if (p.self.rank != r) fail("self peer of rank " + std::to_string(r) + " is not itself", text);
      std::vector<Index> s_off;
      std::vector<Index> d_off;
      const auto &rows = p.send_rows[static_cast<std::size_t>(p.self.row_slot)];
      const auto &cols = p.send_cols[static_cast<std::size_t>(p.self.col_slot)];
      pieces(rows, cols, lld_src[ur], lld_dst[ur], s_off, d_off);
      if (static_cast<Index>(s_off.size()) != p.self.elements)
        fail("self copy size of rank " + std::to_string(r), text);
      const std::vector<Index> s_walk =
          walk(rows, cols, lld_src[ur], lld_dst[ur], true, "self copy");
      const std::vector<Index> d_walk =
          walk(rows, cols, lld_src[ur], lld_dst[ur], false, "self copy");
      if (s_walk != s_off || d_walk != d_off) fail("self copy walks differ", text);
      for (std::size_t e = 0; e < s_off.size(); ++e)
        got.emplace_back(r, r, s_off[e], d_off[e]);
    }
    for (const redist::Peer &send : p.sends) {
      const std::string what = "message " + std::to_string(r) + " -> " + std::to_string(send.rank);
      if (send.rank == r) fail(what + ": a rank sends to itself", text);
      if (send.rank < 0 || send.rank >= comm_size) fail(what + ": peer out of range", text);
      const redist::RankPlan &q = plans[static_cast<std::size_t>(send.rank)];
      const auto match = std::find_if(q.recvs.begin(), q.recvs.end(),
                                      [&](const redist::Peer &x) { return x.rank == r; });
      if (match == q.recvs.end()) fail(what + ": the receiver does not expect it", text);
      if (match->elements != send.elements) fail(what + ": sizes differ on the two sides", text);
      const auto uq = static_cast<std::size_t>(send.rank);
      const std::vector<Index> packed = walk(p.send_rows[static_cast<std::size_t>(send.row_slot)],
                                             p.send_cols[static_cast<std::size_t>(send.col_slot)],
                                             lld_src[ur], lld_dst[uq], true, what + " (pack)");
      const std::vector<Index> unpacked =
          walk(q.recv_rows[static_cast<std::size_t>(match->row_slot)],
               q.recv_cols[static_cast<std::size_t>(match->col_slot)], lld_src[ur], lld_dst[uq],
               false, what + " (unpack)");
      if (static_cast<Index>(packed.size()) != send.elements ||
          static_cast<Index>(unpacked.size()) != send.elements)
        fail(what + ": the walks do not match the message size", text);
      for (std::size_t e = 0; e < packed.size(); ++e)
        got.emplace_back(r, send.rank, packed[e], unpacked[e]);
    }
    for (const redist::Peer &recv : p.recvs) {
      const redist::RankPlan &s = plans[static_cast<std::size_t>(recv.rank)];
      if (std::none_of(s.sends.begin(), s.sends.end(),
                       [&](const redist::Peer &x) { return x.rank == r; }))
        fail("rank " + std::to_string(r) + " expects a message from " + std::to_string(recv.rank) +
                 " that is never sent",
             text);
    }
  }
  std::sort(want.begin(), want.end());
  std::sort(got.begin(), got.end());
  if (got != want) {
    std::string detail = std::to_string(want.size()) + " elements expected, " +
                         std::to_string(got.size()) + " planned";
    const auto [w, g] = std::mismatch(want.begin(), want.end(), got.begin(), got.end());
    const auto show = [](const Move &mv) {
      return "(" + std::to_string(std::get<0>(mv)) + " -> " + std::to_string(std::get<1>(mv)) +
             ", src offset " + std::to_string(std::get<2>(mv)) + ", dst offset " +
             std::to_string(std::get<3>(mv)) + ")";
    };
    if (w != want.end()) detail += "; first expected not planned or out of order: " + show(*w);
    if (g != got.end()) detail += "; first planned: " + show(*g);
    fail("the plans do not move exactly the region's elements: " + detail, text);
  }
}

} // namespace

// NOLINTNEXTLINE(readability-identifier-naming): libFuzzer's entry point
extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t *data, std::size_t size) {
  Bytes in(data, size);
  check_2d(in, false);
  check_1d(in);
  Bytes again(data, size); // every input also as a transpose
  check_2d(again, true);
  return 0;
}
