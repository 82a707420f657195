// N-d plans against a brute-force enumeration written from MPI_Type_create_darray's
// definition (MPI 4.0 Sec. 5.1.4) and HPF's GEN_BLOCK, independently of src/: for every element
// of the window, its owner and local offset on each side; then the set of (source rank,
// destination rank, source offset, destination offset) must be what the plans' pieces give,
// with matching counts and the same element order on the sending and the receiving side.
// REDIST_ND_EXHAUSTIVE=1 runs many more random cases.
#include "nd_plan.hpp"
#include "nd_planner.hpp"
#include "pieces.hpp"
#include "rank_steps_support.hpp"
#include "reference.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <numeric>

namespace redist::test {
namespace {

// ---- the reference, from the definitions ----------------------------------------------------

// darray's distribution argument of a block-cyclic dimension: BLOCK's default is
// ceil(gsize / psize), CYCLIC's 1, NONE's the whole extent.
Index ref_darg(const NdDimension &d) {
  switch (d.kind) {
  case Distribution::block:
    return d.darg == kDefaultDistArg ? std::max<Index>(1, (d.extent + d.nprocs - 1) / d.nprocs)
                                     : d.darg;
  case Distribution::cyclic:
    return d.darg == kDefaultDistArg ? 1 : d.darg;
  default:
    return std::max<Index>(1, d.extent);
  }
}

// (grid coordinate, local index) of global index g.
std::pair<int, Index> ref_place(const NdDimension &d, Index g) {
  if (d.kind == Distribution::gen_block) {
    Index first = 0;
    for (std::size_t c = 0; c < d.gen_block.size(); ++c) {
      if (g < first + d.gen_block[c]) {
        return {static_cast<int>(c), g - first};
      }
      first += d.gen_block[c];
    }
    return {-1, -1};
  }
  if (d.kind == Distribution::none) {
    return {0, g};
  }
  const Index b = ref_darg(d);
  return {ref_owner(g, b, d.nprocs, d.first_process), ref_local(g, b, d.nprocs)};
}

Index ref_count(const NdDimension &d, int c) {
  Index n = 0;
  for (Index g = 0; g < d.extent; ++g) {
    n += ref_place(d, g).first == c ? 1 : 0;
  }
  return n;
}

// Row-major grid position -> rank.
int ref_rank(const NdLayout &l, const std::vector<int> &coords) {
  std::size_t pos = 0;
  for (std::size_t d = 0; d < l.dims.size(); ++d) {
    pos = pos * static_cast<std::size_t>(l.dims[d].nprocs) + static_cast<std::size_t>(coords[d]);
  }
  return l.ranks.empty() ? static_cast<int>(pos) : l.ranks[pos];
}

std::vector<int> ref_coords(const NdLayout &l, int rank) {
  std::vector<int> coords(l.dims.size(), 0);
  std::size_t pos = 0;
  if (l.ranks.empty()) {
    pos = static_cast<std::size_t>(rank);
  } else {
    const auto it = std::find(l.ranks.begin(), l.ranks.end(), rank);
    if (it == l.ranks.end()) return {};
    pos = static_cast<std::size_t>(it - l.ranks.begin());
  }
  std::size_t positions = 1;
  for (const NdDimension &d : l.dims)
    positions *= static_cast<std::size_t>(d.nprocs);
  if (pos >= positions) return {};
  for (std::size_t d = l.dims.size(); d-- > 0;) {
    coords[d] = static_cast<int>(pos % static_cast<std::size_t>(l.dims[d].nprocs));
    pos /= static_cast<std::size_t>(l.dims[d].nprocs);
  }
  return coords;
}

// Element offset of local indices in an array of allocated extents `alloc`, C or Fortran order.
Index ref_offset(const std::vector<Index> &local, const std::vector<Index> &alloc,
                 StorageOrder order) {
  Index offset = 0;
  const std::size_t n = local.size();
  for (std::size_t i = 0; i < n; ++i) {
    const std::size_t d = order == StorageOrder::c ? i : n - 1 - i;
    offset = offset * std::max<Index>(1, alloc[d]) + local[d];
  }
  return offset;
}

// Strides for the plan's walk from the same allocated extents.
Strides ref_strides(const std::vector<Index> &alloc, StorageOrder order) {
  Strides s{};
  for (std::size_t d = 0; d < alloc.size(); ++d) {
    std::vector<Index> unit(alloc.size(), 0);
    unit[d] = 1;
    s[d] = ref_offset(unit, alloc, order);
  }
  return s;
}

// A case: the transfer plus every rank's allocated local extents on each side.
struct Case {
  NdTransfer t;
  int comm_size = 1;
  std::vector<std::vector<Index>> src_alloc; // by rank (empty: not in A's grid)
  std::vector<std::vector<Index>> dst_alloc;
};

using Moves = std::vector<Move>; // (src rank, dst rank, src offset, dst offset)

Moves brute_force(const Case &c) {
  const NdTransfer &t = c.t;
  const std::size_t n = t.dst.dims.size();
  std::vector<Index> k(n, 0);
  Moves moves;
  std::vector<Index> sizes(n);
  Index total = 1;
  for (std::size_t d = 0; d < n; ++d) {
    sizes[d] = t.dst.subsizes.empty() ? t.dst.dims[d].extent : t.dst.subsizes[d];
    total *= sizes[d];
  }
  for (Index e = 0; e < total; ++e) {
    Index rest = e;
    for (std::size_t d = 0; d < n; ++d) {
      k[d] = rest % sizes[d];
      rest /= sizes[d];
    }
    std::vector<int> src_coords(n);
    std::vector<int> dst_coords(n);
    std::vector<Index> src_local(n);
    std::vector<Index> dst_local(n);
    for (std::size_t d = 0; d < n; ++d) {
      const std::size_t a = t.perm.empty() ? d : static_cast<std::size_t>(t.perm[d]);
      const Index ga = (t.src.starts.empty() ? 0 : t.src.starts[a]) + k[d];
      const Index gb = (t.dst.starts.empty() ? 0 : t.dst.starts[d]) + k[d];
      std::tie(src_coords[a], src_local[a]) = ref_place(t.src.dims[a], ga);
      std::tie(dst_coords[d], dst_local[d]) = ref_place(t.dst.dims[d], gb);
    }
    const int sr = ref_rank(t.src, src_coords);
    const int dr = ref_rank(t.dst, dst_coords);
    moves.emplace_back(
        sr, dr, ref_offset(src_local, c.src_alloc[static_cast<std::size_t>(sr)], t.src.order),
        ref_offset(dst_local, c.dst_alloc[static_cast<std::size_t>(dr)], t.dst.order));
  }
  std::sort(moves.begin(), moves.end());
  return moves;
}

// ---- the plans' view ----------------------------------------------------------------------

struct PlanView {
  std::map<std::pair<int, int>, std::vector<std::pair<Index, Index>>> sent; // by (src, dst)
  std::map<std::pair<int, int>, std::vector<std::pair<Index, Index>>> received;
  Index longest_piece = 0;
  Index shortest_piece = -1;
  Index pieces = 0;
};

std::vector<std::pair<Index, Index>> elements_of(const NdMessage &m, const Strides &src,
                                                 const Strides &dst, PlanView &view) {
  std::vector<std::pair<Index, Index>> out;
  for_each_piece_nd(m, src, dst, [&](Index s, Index d, Index count) {
    view.longest_piece = std::max(view.longest_piece, count);
    view.shortest_piece = view.shortest_piece < 0 ? count : std::min(view.shortest_piece, count);
    ++view.pieces;
    for (Index e = 0; e < count; ++e)
      out.emplace_back(s + e, d + e);
  });
  return out;
}

// A one-sided walk (pack or unpack) must address, at each message position, the same offset as
// the two-sided walk.
std::string check_one_sided(const NdMessage &m, PieceSide side, const Strides &src,
                            const Strides &dst, const std::vector<std::pair<Index, Index>> &both) {
  std::string why;
  Index seen = 0;
  for_each_nd_piece(m, side, src, dst, [&](const NdPiece &p) {
    if (p.position != seen && why.empty()) why = "pieces skip a message position";
    for (Index e = 0; e < p.count && why.empty(); ++e) {
      const auto at = static_cast<std::size_t>(p.position + e);
      if (at >= both.size()) {
        why = "position past the message";
      } else if (side == PieceSide::source && p.src + e * p.src_step != both[at].first) {
        why = "pack offset differs at position " + std::to_string(at);
      } else if (side == PieceSide::destination && p.dst + e * p.dst_step != both[at].second) {
        why = "unpack offset differs at position " + std::to_string(at);
      }
    }
    seen = p.position + p.count;
  });
  if (why.empty() && seen != static_cast<Index>(both.size())) why = "one-sided walk too short";
  // The executor's estimate of the pieces (its choice of a single-copy way) joins less than
  // the walk, never more, and counts at most one piece per element.
  Index pieces = 0;
  for_each_nd_piece(m, side, src, dst, [&](const NdPiece &p) {
    pieces += p.src_step == 1 && p.dst_step == 1 ? 1 : p.count;
  });
  const Index estimate = estimate_nd_pieces(m, side, src, dst);
  if (why.empty() && (estimate < pieces || estimate > static_cast<Index>(both.size())))
    why = "estimate_nd_pieces " + std::to_string(estimate) + " for " + std::to_string(pieces) +
          " pieces of " + std::to_string(both.size()) + " elements";
  // A window of the message (a chunk, a bounce buffer): its walk must give every position of
  // the window, at the same offset.
  const auto n = static_cast<Index>(both.size());
  const std::pair<Index, Index> windows[] = {
      {0, n}, {n / 3, n / 3 + n / 4 + 1}, {n - 1, n}, {n / 2, n / 2 + 1}, {1, n - 1}};
  for (const auto &window : windows) {
    const Index lo = window.first;
    const Index hi = window.second;
    if (!why.empty() || lo < 0 || lo >= hi) continue;
    std::vector<char> given(static_cast<std::size_t>(n), 0);
    for_each_nd_piece(m, side, src, dst, lo, hi, [&](const NdPiece &p) {
      for (Index e = 0; e < p.count && why.empty(); ++e) {
        const Index at = p.position + e;
        if (at < lo || at >= hi) continue;
        const auto u = static_cast<std::size_t>(at);
        given[u] = 1;
        const Index offset =
            side == PieceSide::source ? p.src + e * p.src_step : p.dst + e * p.dst_step;
        if (offset != (side == PieceSide::source ? both[u].first : both[u].second))
          why = "windowed walk: offset differs at position " + std::to_string(at);
      }
    });
    for (Index at = lo; at < std::min(hi, n) && why.empty(); ++at)
      if (given[static_cast<std::size_t>(at)] == 0)
        why = "windowed walk [" + std::to_string(lo) + ", " + std::to_string(hi) + ") misses " +
              std::to_string(at);
  }
  // The grouped walk (the copies') gives the walk's pieces, in order, as groups of equal
  // pieces; over a window, the window's pieces (and maybe a few around them) the same way.
  for (const auto &window : windows) {
    const Index lo = window.first;
    const Index hi = window.second;
    if (!why.empty() || lo < 0 || lo >= hi) continue;
    std::vector<NdPiece> flat;
    std::vector<NdPiece> grouped;
    for_each_nd_piece(m, side, src, dst, lo, hi, [&](const NdPiece &p) { flat.push_back(p); });
    for_each_nd_group(m, side, src, dst, lo, hi, [&](const NdPieceGroup &g) {
      if (g.pieces < 1 && why.empty()) why = "an empty group";
      for (Index i = 0; i < g.pieces; ++i)
        grouped.push_back(g.at(i));
    });
    const auto same = [](const NdPiece &x, const NdPiece &y) {
      return x.src == y.src && x.dst == y.dst && x.position == y.position && x.count == y.count &&
             x.src_step == y.src_step && x.dst_step == y.dst_step;
    };
    if (why.empty() && !std::equal(flat.begin(), flat.end(), grouped.begin(), grouped.end(), same))
      why = "grouped walk [" + std::to_string(lo) + ", " + std::to_string(hi) +
            ") gives other pieces than the walk";
  }
  return why;
}

// The executor's copies of this rank's messages (Pieces: pack, unpack, the local copy, the
// copy from a sender's array; the whole message and windows of it, as chunks and bounce
// buffers take them) against the elements the walk was checked to give: A's element at offset
// o holds o, so a packed message must hold both[p].first at position p, and B must hold it at
// both[p].second.
std::string check_copies(const Case &c, int rank, const NdRankPlan &plan) {
  const auto elements = [](const std::vector<Index> &alloc) {
    Index n = 1;
    for (const Index e : alloc)
      n *= std::max<Index>(1, e);
    return static_cast<std::size_t>(n);
  };
  const auto strides = [&](const std::vector<std::vector<Index>> &alloc, int r,
                           StorageOrder order) {
    return ref_strides(alloc[static_cast<std::size_t>(r)], order);
  };
  const Strides dst_strides = strides(c.dst_alloc, rank, c.t.dst.order);
  const Strides src_strides = plan.in_src ? strides(c.src_alloc, rank, c.t.src.order) : Strides{};
  Pieces pieces(plan, sizeof(double), src_strides, dst_strides);
  for (std::size_t i = 0; i < plan.recvs.size(); ++i)
    pieces.set_sender_strides(i, strides(c.src_alloc, plan.recvs[i].rank, c.t.src.order));
  const RankPlan &skeleton = pieces.plan();
  const auto filled = [](std::size_t n) {
    std::vector<double> v(n);
    std::iota(v.begin(), v.end(), 0.0);
    return v;
  };
  const std::size_t b_size =
      plan.in_dst ? elements(c.dst_alloc[static_cast<std::size_t>(rank)]) : 0;
  const auto windows_of = [](Index n) {
    return std::vector<std::pair<Index, Index>>{
        {0, n}, {0, n / 2}, {n / 2, n}, {n / 3, n / 3 + n / 4 + 1}, {n - 1, n}};
  };
  const auto from_walk = [&](const NdMessage &m, const Strides &a) {
    std::vector<std::pair<Index, Index>> both;
    for_each_piece_nd(m, a, dst_strides, [&](Index s, Index d, Index count) {
      for (Index e = 0; e < count; ++e)
        both.emplace_back(s + e, d + e);
    });
    return both;
  };
  for (std::size_t i = 0; i < plan.sends.size(); ++i) {
    const auto both = from_walk(plan.message(plan.sends[i], true), src_strides);
    const std::vector<double> a = filled(elements(c.src_alloc[static_cast<std::size_t>(rank)]));
    const auto n = static_cast<Index>(both.size());
    for (const auto &[lo, hi] : windows_of(n)) {
      if (lo >= hi) continue;
      std::vector<double> out(static_cast<std::size_t>(hi - lo), -1.0);
      pieces.pack(skeleton.sends[i], reinterpret_cast<const std::byte *>(a.data()),
                  reinterpret_cast<std::byte *>(out.data()), lo, hi);
      for (Index p = lo; p < hi; ++p)
        if (out[static_cast<std::size_t>(p - lo)] !=
            static_cast<double>(both[static_cast<std::size_t>(p)].first))
          return "pack to " + std::to_string(plan.sends[i].rank) + ": position " +
                 std::to_string(p) + " wrong in window [" + std::to_string(lo) + ", " +
                 std::to_string(hi) + ")";
    }
  }
  const auto check_b = [&](const std::vector<double> &b,
                           const std::vector<std::pair<Index, Index>> &both, Index lo, Index hi,
                           const std::string &what) -> std::string {
    std::vector<double> want(b.size(), -1.0);
    for (Index p = lo; p < hi; ++p) {
      const auto &e = both[static_cast<std::size_t>(p)];
      want[static_cast<std::size_t>(e.second)] = static_cast<double>(e.first);
    }
    return b == want
               ? std::string{}
               : what + " wrong in window [" + std::to_string(lo) + ", " + std::to_string(hi) + ")";
  };
  for (std::size_t i = 0; i < plan.recvs.size(); ++i) {
    const int sender = plan.recvs[i].rank;
    const Strides a_strides = strides(c.src_alloc, sender, c.t.src.order);
    const auto both = from_walk(plan.message(plan.recvs[i], false), a_strides);
    const auto n = static_cast<Index>(both.size());
    const std::vector<double> a = filled(elements(c.src_alloc[static_cast<std::size_t>(sender)]));
    for (const auto &[lo, hi] : windows_of(n)) {
      if (lo >= hi) continue;
      std::vector<double> in;
      for (Index p = lo; p < hi; ++p)
        in.push_back(static_cast<double>(both[static_cast<std::size_t>(p)].first));
      std::vector<double> b(b_size, -1.0);
      pieces.unpack(skeleton.recvs[i], reinterpret_cast<const std::byte *>(in.data()),
                    reinterpret_cast<std::byte *>(b.data()), lo, hi);
      const std::string from = " from " + std::to_string(sender);
      if (std::string why = check_b(b, both, lo, hi, "unpack" + from); !why.empty()) return why;
      std::fill(b.begin(), b.end(), -1.0);
      pieces.copy_from_array(skeleton.recvs[i], reinterpret_cast<const std::byte *>(a.data()), 0,
                             reinterpret_cast<std::byte *>(b.data()), lo, hi);
      if (std::string why = check_b(b, both, lo, hi, "copy_from_array" + from); !why.empty())
        return why;
    }
  }
  if (plan.self.elements > 0) {
    const auto both = from_walk(plan.message(plan.self, true), src_strides);
    const std::vector<double> a = filled(elements(c.src_alloc[static_cast<std::size_t>(rank)]));
    std::vector<double> b(b_size, -1.0);
    pieces.copy_local(reinterpret_cast<const std::byte *>(a.data()),
                      reinterpret_cast<std::byte *>(b.data()));
    if (std::string why = check_b(b, both, 0, static_cast<Index>(both.size()), "local copy");
        !why.empty())
      return why;
  }
  return {};
}

std::string check_plans(const Case &c, PlanView &view) {
  const auto strides = [&](const std::vector<std::vector<Index>> &alloc, int rank,
                           StorageOrder order) {
    return ref_strides(alloc[static_cast<std::size_t>(rank)], order);
  };
  for (int rank = 0; rank < c.comm_size; ++rank) {
    const NdRankPlan plan = make_nd_rank_plan(c.t, rank, c.comm_size);
    const std::string at = "rank " + std::to_string(rank) + ": ";
    if ((plan.in_src && c.src_alloc[static_cast<std::size_t>(rank)].empty()) ||
        (plan.in_dst && c.dst_alloc[static_cast<std::size_t>(rank)].empty())) {
      return at + "in a grid it is not in";
    }
    std::vector<const NdPeer *> outgoing;
    for (const NdPeer &p : plan.sends) {
      if (p.rank == rank) return at + "a send to itself";
      outgoing.push_back(&p);
    }
    if (plan.self.elements > 0) outgoing.push_back(&plan.self);
    for (const NdPeer *p : outgoing) {
      const NdMessage m = plan.message(*p, true);
      const Strides src = strides(c.src_alloc, rank, c.t.src.order);
      const Strides dst = strides(c.dst_alloc, p->rank, c.t.dst.order);
      auto elements = elements_of(m, src, dst, view);
      if (static_cast<Index>(elements.size()) != p->elements) {
        return at + "message to " + std::to_string(p->rank) + " counts " +
               std::to_string(p->elements) + " but holds " + std::to_string(elements.size());
      }
      if (std::string why = check_one_sided(m, PieceSide::source, src, dst, elements);
          !why.empty()) {
        return at + "to " + std::to_string(p->rank) + ": " + why;
      }
      if (p->rank == rank) { // the self copy is received here too
        view.received[{rank, rank}] = elements;
      }
      view.sent[{rank, p->rank}] = std::move(elements);
    }
    for (const NdPeer &p : plan.recvs) {
      if (p.rank == rank) return at + "a receive from itself";
      const NdMessage m = plan.message(p, false);
      const Strides src = strides(c.src_alloc, p.rank, c.t.src.order);
      const Strides dst = strides(c.dst_alloc, rank, c.t.dst.order);
      auto elements = elements_of(m, src, dst, view);
      if (static_cast<Index>(elements.size()) != p.elements) {
        return at + "message from " + std::to_string(p.rank) + " miscounted";
      }
      if (std::string why = check_one_sided(m, PieceSide::destination, src, dst, elements);
          !why.empty()) {
        return at + "from " + std::to_string(p.rank) + ": " + why;
      }
      view.received[{p.rank, rank}] = std::move(elements);
    }
    if (std::string why = check_copies(c, rank, plan); !why.empty()) return at + why;
    const auto round = [&](int a, int b) {
      return ((a - b) % c.comm_size + c.comm_size) % c.comm_size;
    };
    for (std::size_t i = 1; i < plan.sends.size(); ++i) {
      if (round(plan.sends[i - 1].rank, rank) >= round(plan.sends[i].rank, rank))
        return at + "sends out of round order";
    }
    for (std::size_t i = 1; i < plan.recvs.size(); ++i) {
      if (round(rank, plan.recvs[i - 1].rank) >= round(rank, plan.recvs[i].rank))
        return at + "receives out of round order";
    }
  }
  if (view.sent != view.received) {
    return "sender and receiver disagree on a message's elements or their order";
  }
  return {};
}

std::string describe(const Case &c) {
  std::ostringstream os;
  const auto side = [&](const char *name, const NdLayout &l) {
    os << name << " order=" << (l.order == StorageOrder::c ? "C" : "F") << " dims:";
    for (std::size_t d = 0; d < l.dims.size(); ++d) {
      const NdDimension &x = l.dims[d];
      const char *kinds[] = {"BLOCK", "CYCLIC", "*", "GEN"};
      os << " [" << kinds[static_cast<int>(x.kind)] << " g=" << x.extent << " darg=" << x.darg
         << " p=" << x.nprocs << " first=" << x.first_process;
      for (const Index e : x.gen_block)
        os << " " << e;
      os << " start=" << l.start(static_cast<int>(d)) << " sub=" << l.window(static_cast<int>(d))
         << "]";
    }
    os << " ranks:";
    for (const int r : l.ranks)
      os << " " << r;
    os << "\n";
  };
  side("A", c.t.src);
  side("B", c.t.dst);
  os << "perm:";
  for (const int p : c.t.perm)
    os << " " << p;
  os << " comm_size " << c.comm_size;
  return os.str();
}

// Allocated extents: each rank's counts plus `pad` (per dimension) where it is in the grid.
std::vector<std::vector<Index>> allocations(const NdLayout &l, int comm_size, Random *rng) {
  std::vector<std::vector<Index>> alloc(static_cast<std::size_t>(comm_size));
  for (int r = 0; r < comm_size; ++r) {
    const std::vector<int> coords = ref_coords(l, r);
    if (coords.empty()) continue;
    for (std::size_t d = 0; d < l.dims.size(); ++d) {
      const Index pad = rng != nullptr && rng->chance(30) ? rng->uniform(1, 2) : 0;
      alloc[static_cast<std::size_t>(r)].push_back(ref_count(l.dims[d], coords[d]) + pad);
    }
  }
  return alloc;
}

void run_case(Case c, Random *pad_rng, PlanView *out = nullptr) {
  SCOPED_TRACE(describe(c));
  ASSERT_EQ(check_nd_transfer(c.t, c.comm_size), "");
  c.src_alloc = allocations(c.t.src, c.comm_size, pad_rng);
  c.dst_alloc = allocations(c.t.dst, c.comm_size, pad_rng);
  PlanView view;
  ASSERT_EQ(check_plans(c, view), "");
  Moves planned;
  for (const auto &[pair, elements] : view.sent) {
    for (const auto &[s, d] : elements)
      planned.emplace_back(pair.first, pair.second, s, d);
  }
  std::sort(planned.begin(), planned.end());
  ASSERT_EQ(planned.size(), brute_force(c).size());
  ASSERT_TRUE(planned == brute_force(c)) << "the plans move other elements than the definition";
  if (out != nullptr) *out = view;
}

NdDimension dim(Distribution kind, Index extent, int nprocs, Index darg = kDefaultDistArg) {
  NdDimension d;
  d.kind = kind;
  d.extent = extent;
  d.nprocs = nprocs;
  d.darg = darg;
  return d;
}

NdDimension gen(std::vector<Index> extents) {
  NdDimension d;
  d.kind = Distribution::gen_block;
  d.nprocs = static_cast<int>(extents.size());
  d.extent = std::accumulate(extents.begin(), extents.end(), Index{0});
  d.gen_block = std::move(extents);
  return d;
}

constexpr auto kBlock = Distribution::block;
constexpr auto kCyclic = Distribution::cyclic;
constexpr auto kNone = Distribution::none;

// ---- hand-picked cases --------------------------------------------------------------------

TEST(NdPlan, PencilMovesMatchDefinitionAndMoveLongRuns) {
  // (BLOCK, BLOCK, *) <-> (*, BLOCK, BLOCK) on 2 x 2, C order, and the slab move
  // (*, BLOCK, BLOCK) -> (BLOCK, *, BLOCK) on 1x2x2 -> 2x1x2.
  const Index n0 = 8, n1 = 6, n2 = 10;
  Case c;
  c.comm_size = 4;
  c.t.src.dims = {dim(kBlock, n0, 2), dim(kBlock, n1, 2), dim(kNone, n2, 1)};
  c.t.dst.dims = {dim(kNone, n0, 1), dim(kBlock, n1, 2), dim(kBlock, n2, 2)};
  run_case(c, nullptr);
  { // docs/nd.md's worked example: rank 0's message to rank 1 is 12 rows of 5
    const NdRankPlan plan = make_nd_rank_plan(c.t, 0, 4);
    ASSERT_EQ(plan.sends.size(), 1u);
    ASSERT_EQ(plan.sends[0].rank, 1);
    const std::vector<Index> a_local = {4, 3, 10};
    const std::vector<Index> b_local = {8, 3, 5};
    std::vector<Index> pieces;
    for_each_piece_nd(plan.message(plan.sends[0], true), ref_strides(a_local, StorageOrder::c),
                      ref_strides(b_local, StorageOrder::c),
                      [&](Index, Index, Index count) { pieces.push_back(count); });
    EXPECT_EQ(pieces, std::vector<Index>(12, 5));
  }
  std::swap(c.t.src, c.t.dst);
  run_case(c, nullptr);

  c.t.src.dims = {dim(kNone, n0, 1), dim(kBlock, n1, 2), dim(kBlock, n2, 2)};
  c.t.dst.dims = {dim(kBlock, n0, 2), dim(kNone, n1, 1), dim(kBlock, n2, 2)};
  PlanView view;
  run_case(c, nullptr, &view);
  // Along dimension 2 both hold the same half; A's rows of n1/2 x n2/2 are contiguous in both.
  EXPECT_EQ(view.longest_piece, (n1 / 2) * (n2 / 2));
  EXPECT_EQ(view.shortest_piece, (n1 / 2) * (n2 / 2));
}

TEST(NdPlan, WholeLocalArraysMoveAsOnePiece) {
  // The same distribution on both sides with the window the whole array: every rank's local
  // array is one contiguous piece.
  Case c;
  c.comm_size = 6;
  c.t.src.dims = {dim(kBlock, 6, 3), dim(kCyclic, 7, 2, 2), dim(kNone, 5, 1)};
  c.t.dst = c.t.src;
  c.t.dst.ranks = {5, 4, 3, 2, 1, 0};
  PlanView view;
  run_case(c, nullptr, &view);
  EXPECT_EQ(view.pieces, 2 * 6); // counted once by the sender and once by the receiver
}

TEST(NdPlan, CyclicBlocksAcrossGridsMatchDefinition) {
  // CYCLIC(4, 8, 1) -> CYCLIC(16, 1, 2), both orders.
  for (const StorageOrder order : {StorageOrder::c, StorageOrder::fortran}) {
    Case c;
    c.comm_size = 8;
    c.t.src.dims = {dim(kCyclic, 37, 2, 4), dim(kCyclic, 29, 2, 8), dim(kCyclic, 5, 2, 1)};
    c.t.dst.dims = {dim(kCyclic, 37, 1, 16), dim(kCyclic, 29, 4, 1), dim(kCyclic, 5, 2, 2)};
    c.t.src.order = order;
    c.t.dst.order = order;
    Random rng(3);
    run_case(c, &rng);
  }
}

TEST(NdPlan, GenBlockWithZerosMatchesDefinition) {
  Case c;
  c.comm_size = 6;
  c.t.src.dims = {gen({0, 4, 0, 3}), dim(kBlock, 5, 1)};
  c.t.src.ranks = {3, 0, 5, 1};
  c.t.dst.dims = {gen({2, 0, 5}), gen({0, 5})};
  c.t.dst.ranks = {0, 1, 2, 3, 4, 5};
  run_case(c, nullptr);
  c.t.src.starts = {1, 2};
  c.t.src.subsizes = {5, 3};
  c.t.dst.starts = {2, 0};
  c.t.dst.subsizes = {5, 3};
  c.t.dst.order = StorageOrder::fortran;
  run_case(c, nullptr);
  c.t.dst.dims = {dim(kCyclic, 7, 3, 2), gen({3, 2})}; // GEN_BLOCK against block-cyclic
  run_case(c, nullptr);
  std::swap(c.t.src, c.t.dst);
  run_case(c, nullptr);
}

TEST(NdPlan, OneDimensionAndSevenDimensions) {
  Case one;
  one.comm_size = 5;
  one.t.src.dims = {dim(kCyclic, 23, 3, 2)};
  one.t.dst.dims = {gen({4, 0, 9, 10})};
  one.t.dst.ranks = {4, 2, 0, 1};
  one.t.src.starts = {3};
  one.t.src.subsizes = {17};
  one.t.dst.starts = {5};
  one.t.dst.subsizes = {17};
  run_case(one, nullptr);

  Case seven;
  seven.comm_size = 8;
  seven.t.src.dims = {dim(kBlock, 3, 2), dim(kCyclic, 2, 1), dim(kCyclic, 3, 2), dim(kNone, 2, 1),
                      dim(kBlock, 2, 1), gen({1, 2}),        dim(kCyclic, 2, 1)};
  seven.t.dst.dims = {dim(kNone, 3, 1), dim(kBlock, 2, 2), dim(kNone, 3, 1),  dim(kCyclic, 2, 2),
                      dim(kNone, 2, 1), dim(kNone, 3, 1),  dim(kCyclic, 2, 2)};
  seven.t.perm = {0, 1, 2, 3, 4, 5, 6};
  run_case(seven, nullptr);
  seven.t.perm = {2, 3, 0, 1, 6, 5, 4}; // swaps dimensions of equal extents
  seven.t.dst.order = StorageOrder::fortran;
  run_case(seven, nullptr);
}

TEST(NdPlan, TransposesMatchDefinition) {
  // A 3-D field (x, y, z) into (z, y, x), and a 2-D transpose on BLACS-like grids.
  Case c;
  c.comm_size = 4;
  c.t.src.dims = {dim(kBlock, 6, 2), dim(kBlock, 5, 2), dim(kNone, 7, 1)};
  c.t.dst.dims = {dim(kBlock, 7, 2), dim(kNone, 5, 1), dim(kBlock, 6, 2)};
  c.t.perm = {2, 1, 0};
  Random rng(5);
  run_case(c, &rng);
  Case t2;
  t2.comm_size = 6;
  t2.t.src.dims = {dim(kCyclic, 9, 2, 2), dim(kCyclic, 11, 3, 3)};
  t2.t.dst.dims = {dim(kCyclic, 11, 3, 2), dim(kCyclic, 9, 2, 1)};
  t2.t.src.order = StorageOrder::fortran;
  t2.t.dst.order = StorageOrder::fortran;
  t2.t.perm = {1, 0};
  run_case(t2, &rng);
}

// ---- random layouts ------------------------------------------------------------------------

// A dimension on at most max_procs processes.
NdDimension random_dimension(Random &rng, Index extent, int max_procs) {
  const int kind = rng.uniform_int(0, 3);
  const int nprocs = rng.uniform_int(1, std::max(1, std::min(3, max_procs)));
  NdDimension d;
  d.extent = extent;
  d.nprocs = nprocs;
  switch (kind) {
  case 0: { // BLOCK, default or a given block
    d.kind = kBlock;
    const Index least = std::max<Index>(1, (extent + nprocs - 1) / nprocs);
    d.darg = rng.chance(50) ? kDefaultDistArg : least + rng.uniform(0, 2);
    break;
  }
  case 1:
    d.kind = kCyclic;
    d.darg = rng.chance(25) ? kDefaultDistArg : rng.uniform(1, 4);
    break;
  case 2:
    d.kind = kNone;
    d.nprocs = 1;
    d.darg = rng.chance(50) ? kDefaultDistArg : rng.uniform(1, 5); // ignored, as in darray
    break;
  default: {
    d.kind = Distribution::gen_block;
    d.gen_block.assign(static_cast<std::size_t>(nprocs), 0);
    for (Index e = 0; e < extent; ++e) {
      ++d.gen_block[static_cast<std::size_t>(rng.uniform_int(0, nprocs - 1))];
    }
    break;
  }
  }
  if (d.kind != Distribution::gen_block && d.kind != kNone && rng.chance(20)) {
    d.first_process = rng.uniform_int(0, nprocs - 1); // ScaLAPACK's RSRC, for the 2-D case
  }
  return d;
}

// Ranks for a grid of `positions`: a random subset of the communicator, in random order.
std::vector<int> random_ranks(Random &rng, std::size_t positions, int comm_size) {
  std::vector<int> all(static_cast<std::size_t>(comm_size));
  std::iota(all.begin(), all.end(), 0);
  std::mt19937 shuffle(static_cast<unsigned>(rng.uniform(0, 1 << 30)));
  std::shuffle(all.begin(), all.end(), shuffle);
  all.resize(positions);
  return all;
}

Case random_case(Random &rng, int max_dims) {
  const int n = rng.uniform_int(1, max_dims);
  const Index max_window = n == 1 ? 60 : n == 2 ? 14 : n == 3 ? 7 : n == 4 ? 5 : 4;
  Case c;
  std::vector<int> perm(static_cast<std::size_t>(n));
  std::iota(perm.begin(), perm.end(), 0);
  if (rng.chance(50)) {
    std::mt19937 shuffle(static_cast<unsigned>(rng.uniform(0, 1 << 30)));
    std::shuffle(perm.begin(), perm.end(), shuffle);
  }
  c.t.perm = perm;
  c.t.src.dims.resize(static_cast<std::size_t>(n));
  c.t.dst.dims.resize(static_cast<std::size_t>(n));
  const bool windowed = rng.chance(60);
  int src_room = 12; // grids of at most 12 positions
  int dst_room = 12;
  for (int d = 0; d < n; ++d) {
    const auto du = static_cast<std::size_t>(d);
    const auto a = static_cast<std::size_t>(perm[du]);
    const Index size = rng.chance(5) ? 0 : rng.uniform(1, max_window);
    const Index src_start = windowed ? rng.uniform(0, 3) : 0;
    const Index dst_start = windowed ? rng.uniform(0, 3) : 0;
    c.t.src.dims[a] =
        random_dimension(rng, size + src_start + (windowed ? rng.uniform(0, 3) : 0), src_room);
    c.t.dst.dims[du] =
        random_dimension(rng, size + dst_start + (windowed ? rng.uniform(0, 3) : 0), dst_room);
    src_room /= c.t.src.dims[a].nprocs;
    dst_room /= c.t.dst.dims[du].nprocs;
    if (windowed) {
      c.t.src.starts.resize(static_cast<std::size_t>(n));
      c.t.src.subsizes.resize(static_cast<std::size_t>(n));
      c.t.dst.starts.resize(static_cast<std::size_t>(n));
      c.t.dst.subsizes.resize(static_cast<std::size_t>(n));
      c.t.src.starts[a] = src_start;
      c.t.src.subsizes[a] = size;
      c.t.dst.starts[du] = dst_start;
      c.t.dst.subsizes[du] = size;
    }
  }
  c.t.src.order = rng.chance(50) ? StorageOrder::c : StorageOrder::fortran;
  c.t.dst.order = rng.chance(50) ? StorageOrder::c : StorageOrder::fortran;
  std::size_t src_positions = 1;
  std::size_t dst_positions = 1;
  for (int d = 0; d < n; ++d) {
    src_positions *= static_cast<std::size_t>(c.t.src.dims[static_cast<std::size_t>(d)].nprocs);
    dst_positions *= static_cast<std::size_t>(c.t.dst.dims[static_cast<std::size_t>(d)].nprocs);
  }
  // Same, overlapping or disjoint rank sets.
  c.comm_size = static_cast<int>(std::max(src_positions, dst_positions)) + rng.uniform_int(0, 3);
  if (rng.chance(20)) c.comm_size = static_cast<int>(src_positions + dst_positions);
  c.t.src.ranks = random_ranks(rng, src_positions, c.comm_size);
  c.t.dst.ranks = random_ranks(rng, dst_positions, c.comm_size);
  return c;
}

std::size_t brute_force_size(const Case &c) {
  std::size_t n = 1;
  for (int d = 0; d < c.t.ndims(); ++d)
    n *= static_cast<std::size_t>(c.t.dst.window(d));
  return n;
}

bool exhaustive() {
  const char *env = std::getenv("REDIST_ND_EXHAUSTIVE");
  return env != nullptr && *env != '\0' && *env != '0';
}

TEST(NdPlan, RandomLayoutsMatchDefinition) {
  Random rng(test_seed(1601));
  const int cases = exhaustive() ? 30000 : 1500;
  Index elements = 0;
  for (int i = 0; i < cases; ++i) {
    const Case c = random_case(rng, 5);
    SCOPED_TRACE("case " + std::to_string(i));
    run_case(c, &rng);
    if (HasFatalFailure()) return;
    elements += static_cast<Index>(brute_force_size(c));
  }
  std::cout << "[   INFO   ] " << cases << " cases, " << elements << " elements checked\n";
}

TEST(NdPlan, LongDimensionsSpanManyPeriods) {
  // Windows of thousands of indices: the stored periods (and GEN_BLOCK intervals against
  // block-cyclic dimensions) repeat many times.
  Random rng(test_seed(1603));
  for (int i = 0; i < 24; ++i) {
    Case c;
    const int n = rng.uniform_int(1, 2);
    const Index length = n == 1 ? rng.uniform(2000, 6000) : rng.uniform(1500, 3000);
    for (int d = 0; d < n; ++d) {
      const Index size = d == 0 ? length : rng.uniform(1, 3);
      const Index src_start = rng.uniform(0, 50);
      const Index dst_start = rng.uniform(0, 50);
      c.t.src.dims.push_back(random_dimension(rng, size + src_start + rng.uniform(0, 9), 4));
      c.t.dst.dims.push_back(random_dimension(rng, size + dst_start + rng.uniform(0, 9), 4));
      c.t.src.starts.push_back(src_start);
      c.t.dst.starts.push_back(dst_start);
      c.t.src.subsizes.push_back(size);
      c.t.dst.subsizes.push_back(size);
    }
    c.comm_size = 16;
    std::size_t src_positions = 1;
    std::size_t dst_positions = 1;
    for (int d = 0; d < n; ++d) {
      src_positions *= static_cast<std::size_t>(c.t.src.dims[static_cast<std::size_t>(d)].nprocs);
      dst_positions *= static_cast<std::size_t>(c.t.dst.dims[static_cast<std::size_t>(d)].nprocs);
    }
    c.t.src.ranks = random_ranks(rng, src_positions, c.comm_size);
    c.t.dst.ranks = random_ranks(rng, dst_positions, c.comm_size);
    SCOPED_TRACE("case " + std::to_string(i));
    run_case(c, &rng);
    if (HasFatalFailure()) return;
  }
}

// ---- the layout description ---------------------------------------------------------------

TEST(NdLayout, LocalCountsAndStridesFollowTheDefinition) {
  Random rng(test_seed(1602));
  for (int i = 0; i < 300; ++i) {
    const Case c = random_case(rng, 5);
    const NdLayout &l = c.t.src;
    for (int r = 0; r < c.comm_size; ++r) {
      const std::vector<int> coords = ref_coords(l, r);
      Coords at{};
      ASSERT_EQ(grid_of(l).find(r, at), !coords.empty());
      if (coords.empty()) continue;
      std::vector<Index> counts;
      for (std::size_t d = 0; d < coords.size(); ++d) {
        ASSERT_EQ(at[d], coords[d]);
        counts.push_back(ref_count(l.dims[d], coords[d]));
      }
      ASSERT_EQ(local_counts(l, at), counts) << describe(c);
      ASSERT_EQ(local_strides(l, at), ref_strides(counts, l.order));
      for (std::size_t d = 0; d < coords.size(); ++d) {
        const DimDistribution dist = resolve(l.dims[d]);
        for (Index g = 0; g < l.dims[d].extent; ++g) {
          const auto [owner, local] = ref_place(l.dims[d], g);
          ASSERT_EQ(dist.owner(g), owner);
          ASSERT_EQ(dist.local_index(g), local);
        }
      }
    }
  }
}

TEST(NdLayout, ValidationNamesFieldAndDimension) {
  NdLayout good;
  good.dims = {dim(kBlock, 10, 2), dim(kCyclic, 7, 3, 2), gen({3, 0, 2})};
  ASSERT_EQ(check_nd_layout(good, 18), "");
  struct Bad {
    const char *expect;
    void (*spoil)(NdLayout &);
  };
  const Bad bad[] = {
      {"ndims:", [](NdLayout &l) { l.dims.clear(); }},
      {"ndims:", [](NdLayout &l) { l.dims.resize(8, dim(kNone, 1, 1)); }},
      {"gsizes[1]:", [](NdLayout &l) { l.dims[1].extent = -1; }},
      {"psizes[0]:", [](NdLayout &l) { l.dims[0].nprocs = 0; }},
      {"dargs[0]: BLOCK needs", [](NdLayout &l) { l.dims[0].darg = 4; }},
      {"dargs[1]:", [](NdLayout &l) { l.dims[1].darg = 0; }},
      {"psizes[1]: must be 1", [](NdLayout &l) { l.dims[1].kind = kNone; }},
      {"gen_blocks[2]: extents sum",
       [](NdLayout &l) {
         l.dims[2].gen_block = {3, 0, 1};
       }},
      {"gen_blocks[2]: extent -1",
       [](NdLayout &l) {
         l.dims[2].gen_block = {-1, 6, 0};
       }},
      {"gen_blocks[2]: needs", [](NdLayout &l) { l.dims[2].gen_block = {5}; }},
      {"first_process[1]:", [](NdLayout &l) { l.dims[1].first_process = 3; }},
      {"ranks: needs 18",
       [](NdLayout &l) {
         l.ranks = {0, 1};
       }},
      {"ranks[3]: rank 2 is at two",
       [](NdLayout &l) {
         l.ranks.resize(18);
         std::iota(l.ranks.begin(), l.ranks.end(), 0);
         l.ranks[3] = 2;
       }},
      {"ranks[0]: rank 18 is not",
       [](NdLayout &l) {
         l.ranks.resize(18);
         std::iota(l.ranks.begin(), l.ranks.end(), 0);
         l.ranks[0] = 18;
       }},
      {"starts: needs ndims", [](NdLayout &l) { l.starts = {0}; }},
      {"starts[2]: the window",
       [](NdLayout &l) {
         l.starts = {0, 0, 2};
         l.subsizes = {1, 1, 4};
       }},
      {"subsizes[0]:",
       [](NdLayout &l) {
         l.subsizes = {-1, 1, 1};
       }},
      {"local_extents[1]: 2 is below",
       [](NdLayout &l) {
         l.local_extents = {5, 2, 3};
       }},
      {"psizes[2]: the grid has more",
       [](NdLayout &l) {
         l.dims[2] = gen({1, 1, 1, 0, 0, 2});
       }},
      // Dense (no local_extents): rank 0's local counts, 2^40 x 2^20 x 2^4, past 2^63 elements.
      {"gsizes[2]: the local array has 2^63",
       [](NdLayout &l) {
         l.dims = {dim(kNone, Index{1} << 40, 1), dim(kNone, Index{1} << 20, 1),
                   dim(kNone, Index{1} << 4, 1)};
       }},
      {"local_extents[2]: the local array has 2^63",
       [](NdLayout &l) {
         l.local_extents = {Index{1} << 40, Index{1} << 20, Index{1} << 4};
       }},
  };
  for (const Bad &b : bad) {
    NdLayout l = good;
    b.spoil(l);
    const std::string why = check_nd_layout(l, 18, 0);
    EXPECT_EQ(why.rfind(b.expect, 0), 0u) << "expected '" << b.expect << "', got '" << why << "'";
  }
  NdTransfer t{good, good, {0, 2, 1}};
  EXPECT_EQ(check_nd_transfer(t, 18).rfind("b->subsizes[1]: 7 differs from a->subsizes[2] = 5", 0),
            0u)
      << check_nd_transfer(t, 18);
  t.perm = {0, 0, 1};
  EXPECT_EQ(check_nd_transfer(t, 18).rfind("perm[1]:", 0), 0u);
  t.perm = {};
  t.dst.dims[0].darg = 1;
  EXPECT_EQ(check_nd_transfer(t, 18).rfind("b->dargs[0]:", 0), 0u);
}

// ---- scale ---------------------------------------------------------------------------------

TEST(NdPlan, PlanMemoryDoesNotGrowWithExtents) {
  std::size_t memory_small = 0;
  for (const Index extent : {Index{100'000}, Index{1'000'000'000}, Index{1'000'000'000'000}}) {
    NdTransfer t;
    t.src.dims = {dim(kCyclic, extent, 2, 64), dim(kBlock, 3000, 2), dim(kCyclic, 2000, 2, 3)};
    t.dst.dims = {dim(kCyclic, extent + 7, 2, 100), dim(kCyclic, 3000, 2, 5), gen({700, 0, 1300})};
    t.src.starts = {37, 0, 0};
    t.src.subsizes = {extent - 37, 3000, 2000};
    t.dst.starts = {42, 0, 0};
    t.dst.subsizes = t.src.subsizes;
    ASSERT_EQ(check_nd_transfer(t, 12), "");
    std::size_t memory = 0;
    for (int rank = 0; rank < 12; ++rank) {
      const NdRankPlan plan = make_nd_rank_plan(t, rank, 12);
      memory = std::max(memory, plan.memory_bytes());
      if (rank < 8) {
        EXPECT_GT(plan.elements_sent() + plan.self.elements, 0);
      }
    }
    std::cout << "[   INFO   ] extent " << extent << ": largest N-d rank plan " << memory
              << " bytes\n";
    if (memory_small == 0) {
      memory_small = memory;
    } else {
      EXPECT_LE(memory, 2 * memory_small);
    }
    EXPECT_LE(memory, std::size_t{64} * 1024);
  }
}

// ---- schedules (nd_planner.hpp) ------------------------------------------------------------

// The elements each (source rank, destination rank) pair exchanges, from the brute force.
std::map<std::pair<int, int>, Index> pair_volumes(Case c) {
  c.src_alloc = allocations(c.t.src, c.comm_size, nullptr);
  c.dst_alloc = allocations(c.t.dst, c.comm_size, nullptr);
  std::map<std::pair<int, int>, Index> out;
  for (const Move &m : brute_force(c)) {
    ++out[{std::get<0>(m), std::get<1>(m)}];
  }
  return out;
}

TEST(NdSchedule, VolumesMatchDefinition) {
  // The graph is a product of per-dimension volumes (GEN_BLOCK, windows, perms, rank 1-4);
  // its numbering maps to ranks through NdScheduleGrids: both against the element count.
  Random rng(test_seed(1611));
  const int cases = exhaustive() ? 20000 : 1000;
  for (int i = 0; i < cases; ++i) {
    const Case c = random_case(rng, 4);
    SCOPED_TRACE("case " + std::to_string(i) + ": " + describe(c));
    const VolumeGraph g = nd_volume_graph(c.t);
    const NdScheduleGrids grids = nd_schedule_grids(c.t);
    ASSERT_EQ(static_cast<std::size_t>(g.senders), grids.src_ranks.size());
    ASSERT_EQ(static_cast<std::size_t>(g.receivers), grids.dst_ranks.size());
    std::map<std::pair<int, int>, Index> got;
    for (std::size_t m = 0; m < g.messages.size(); ++m) {
      const Message &msg = g.messages[m];
      ASSERT_GT(msg.volume, 0);
      if (m > 0) {
        const Message &before = g.messages[m - 1];
        ASSERT_TRUE(std::pair(before.src, before.dst) < std::pair(msg.src, msg.dst));
      }
      got[{grids.src_ranks[static_cast<std::size_t>(msg.src)],
           grids.dst_ranks[static_cast<std::size_t>(msg.dst)]}] += msg.volume;
    }
    ASSERT_EQ(got, pair_volumes(c));
  }
}

TEST(NdSchedule, VolumesOfHugeExtentsNeedNoEnumeration) {
  // Extents of 10^12: the per-dimension volumes come from one period per pair.
  NdTransfer t;
  const Index extent = 1'000'000'000'000;
  t.src.dims = {dim(kCyclic, extent, 3, 64), dim(kBlock, 3000, 2), gen({700, 0, 1300})};
  t.dst.dims = {dim(kCyclic, extent, 2, 100), gen({1000, 2000}), dim(kCyclic, 2000, 2, 3)};
  ASSERT_EQ(check_nd_transfer(t, 18), "");
  const VolumeGraph g = nd_volume_graph(t);
  EXPECT_EQ(g.total(), extent * 3000 * 2000);
  EXPECT_EQ(g.senders, 18);
  EXPECT_EQ(g.receivers, 8);
}

constexpr std::array<Strategy, 6> kExplicitStrategies = {Strategy::caterpillar, Strategy::stepwise,
                                                         Strategy::greedy,      Strategy::circulant,
                                                         Strategy::ggp,         Strategy::oggp};

// A two-phase N-d plan (choice.nd_phases): every rank agrees on the intermediate layout, which
// lies on the source or the destination grid and holds the window only; composed element by
// element (brute_force, from the definitions), the two phases move every element of the
// transfer where the transfer moves it; each rank's phase plans are make_nd_rank_plan's of the
// phase transfers, its intermediate array is the dense one, and each phase passes check_views
// within the memory cap left by the intermediate array.
bool same_layout(const NdLayout &x, const NdLayout &y) {
  const auto same = [](const NdDimension &a, const NdDimension &b) {
    return a.kind == b.kind && a.extent == b.extent && a.darg == b.darg && a.nprocs == b.nprocs &&
           a.gen_block == b.gen_block && a.first_process == b.first_process;
  };
  return std::equal(x.dims.begin(), x.dims.end(), y.dims.begin(), y.dims.end(), same) &&
         x.ranks == y.ranks && x.starts == y.starts && x.subsizes == y.subsizes &&
         x.order == y.order && x.local_extents == y.local_extents;
}

int g_nd_two_phase_plans_checked = 0;

std::string check_nd_two_phases(const Case &c, const std::vector<RankView> &views,
                                const ScheduleOptions &options, std::size_t es) {
  ++g_nd_two_phase_plans_checked;
  const NdTwoPhase &first = *views.front().choice.nd_phases;
  const NdLayout &mid = first.mid;
  const NdLayout &end = first.on_source ? c.t.src : c.t.dst;
  if (mid.ranks != end.ranks || mid.ndims() != c.t.ndims())
    return "the intermediate grid is not the grid of the end it names";
  for (int d = 0; d < mid.ndims(); ++d) {
    const auto du = static_cast<std::size_t>(d);
    if (mid.dims[du].nprocs != end.dims[du].nprocs || mid.dims[du].extent != end.window(d) ||
        mid.start(d) != 0 || mid.window(d) != end.window(d))
      return "the intermediate layout is not the window on its end's grid along dimension " +
             std::to_string(d);
  }
  // The phases composed element by element.
  const auto phase_case = [&](std::size_t phase) {
    Case p;
    p.t = first.transfers[phase];
    p.comm_size = c.comm_size;
    p.src_alloc = allocations(p.t.src, c.comm_size, nullptr);
    p.dst_alloc = allocations(p.t.dst, c.comm_size, nullptr);
    return p;
  };
  const Case one = phase_case(0);
  const Case two = phase_case(1);
  if (!same_layout(one.t.dst, mid) || !same_layout(two.t.src, mid))
    return "the phases do not meet in the intermediate layout";
  std::map<std::pair<int, Index>, std::pair<int, Index>> second; // mid (rank, offset) -> B's
  for (const auto &[mr, br, mo, bo] : brute_force(two))
    second[{mr, mo}] = {br, bo};
  Case whole = c;
  whole.src_alloc = one.src_alloc;
  whole.dst_alloc = two.dst_alloc;
  Moves composed;
  for (const auto &[ar, mr, ao, mo] : brute_force(one)) {
    const auto it = second.find({mr, mo});
    if (it == second.end()) return "an element reaches the intermediate array and stays there";
    composed.emplace_back(ar, it->second.first, ao, it->second.second);
  }
  std::sort(composed.begin(), composed.end());
  if (composed != brute_force(whole)) return "the phases move other elements than the transfer";
  Index mid_bytes = 0;
  const std::vector<std::vector<Index>> mid_alloc = one.dst_alloc;
  for (const std::vector<Index> &alloc : mid_alloc) {
    Index elements = 1;
    for (const Index e : alloc)
      elements *= e;
    mid_bytes = std::max(mid_bytes, alloc.empty() ? 0 : elements * static_cast<Index>(es));
  }
  if (options.max_memory > 0 && mid_bytes + 2 * first.phase_options.max_memory > options.max_memory)
    return "the intermediate array and the phases' buffers exceed max_memory";
  for (std::size_t phase = 0; phase < 2; ++phase) {
    std::vector<RankView> phase_views;
    for (std::size_t r = 0; r < views.size(); ++r) {
      const ScheduleChoice &choice = views[r].choice;
      const std::string at = "rank " + std::to_string(r) + ": ";
      if (!choice.nd_phases || !same_layout(choice.nd_phases->mid, mid) ||
          choice.nd_phases->on_source != first.on_source)
        return at + "another intermediate layout";
      const NdTwoPhase &mine = *choice.nd_phases;
      const std::vector<Index> &alloc = mid_alloc[r];
      Index elements = alloc.empty() ? 0 : 1;
      for (const Index e : alloc)
        elements *= e;
      if (mine.mid_elements != elements ||
          (!alloc.empty() && mine.mid_strides != ref_strides(alloc, mid.order)))
        return at +
               "its intermediate array is not the dense local array of the intermediate layout";
      const NdRankPlan expected = make_nd_rank_plan(mine.transfers[phase], static_cast<int>(r),
                                                    static_cast<int>(views.size()));
      const NdRankPlan &plan = mine.plans[phase];
      if (plan.sends.size() != expected.sends.size() ||
          plan.recvs.size() != expected.recvs.size() ||
          plan.self.elements != expected.self.elements)
        return at + "phase " + std::to_string(phase + 1) + " plan differs from make_nd_rank_plan";
      if (mine.choices[phase].strategy != first.choices[phase].strategy)
        return "ranks disagree on phase " + std::to_string(phase + 1) + "'s schedule";
      phase_views.push_back({nd_skeleton(plan), mine.choices[phase]});
    }
    if (std::string why = check_views(phase_views, first.phase_options.max_memory, es);
        !why.empty())
      return "phase " + std::to_string(phase + 1) + ": " + why;
  }
  return {};
}

TEST(NdSchedule, EveryStrategyAndLimitGivesValidStepsOnEveryRank) {
  // For random N-d transfers, every strategy with and without max_concurrent and max_memory:
  // the whole schedule is valid for the graph without self messages (contention-free steps of
  // at most k pieces), and every rank's steps cover its messages in order, agree with its
  // peers chunk by chunk, stay within the cap and do not deadlock (check_views, as 2-D).
  Random rng(test_seed(1613));
  const int cases = exhaustive() ? 3000 : 150;
  const std::size_t es = 8;
  int stepped = 0;
  for (int i = 0; i < cases; ++i) {
    const Case c = random_case(rng, 4);
    SCOPED_TRACE("case " + std::to_string(i) + ": " + describe(c));
    const NdScheduleGrids grids = nd_schedule_grids(c.t);
    VolumeGraph remote = nd_volume_graph(c.t);
    std::erase_if(remote.messages, [&](const Message &m) {
      return grids.src_ranks[static_cast<std::size_t>(m.src)] ==
             grids.dst_ranks[static_cast<std::size_t>(m.dst)];
    });
    std::vector<NdRankPlan> plans;
    ScheduleInputs inputs;
    for (int r = 0; r < c.comm_size; ++r) {
      plans.push_back(make_nd_rank_plan(c.t, r, c.comm_size));
      const ScheduleInputs local = all_at_once_local(nd_skeleton(plans.back()), {}, es);
      inputs.all_at_once_buffer_max =
          std::max(inputs.all_at_once_buffer_max, local.all_at_once_buffer_max);
      inputs.all_at_once_seconds = std::max(inputs.all_at_once_seconds, local.all_at_once_seconds);
    }
    // The estimate the phases are chosen with is exact for N-d windows.
    const ScheduleInputs estimate = nd_all_at_once_estimate(c.t, {}, es);
    ASSERT_EQ(estimate.all_at_once_buffer_max, inputs.all_at_once_buffer_max);
    ASSERT_DOUBLE_EQ(estimate.all_at_once_seconds, inputs.all_at_once_seconds);
    std::vector<Strategy> strategies(kExplicitStrategies.begin(), kExplicitStrategies.end());
    strategies.push_back(Strategy::automatic);
    strategies.push_back(Strategy::multiphase);
    for (const Strategy s : strategies) {
      ScheduleOptions o;
      o.strategy = s;
      o.max_concurrent = rng.chance(40) ? rng.uniform_int(1, 3) : 0;
      o.max_memory = rng.chance(40) ? static_cast<Index>(es) * rng.uniform(2, 12) : 0;
      SCOPED_TRACE(std::string(strategy_name(s)) + " k " + std::to_string(o.max_concurrent) +
                   " max_memory " + std::to_string(o.max_memory));
      if (s != Strategy::automatic && s != Strategy::multiphase) {
        Schedule whole;
        std::string how;
        ASSERT_EQ(nd_global_schedule(c.t, o, es, whole, how), "");
        ASSERT_EQ(check_schedule(remote, whole, {true, o.max_concurrent}), "") << how;
      }
      std::vector<RankView> views;
      for (int r = 0; r < c.comm_size; ++r) {
        ScheduleChoice choice;
        ASSERT_EQ(
            choose_nd_schedule(c.t, plans[static_cast<std::size_t>(r)], o, inputs, es, choice), "");
        ASSERT_NE(choice.strategy, Strategy::automatic);
        ASSERT_TRUE(choice.strategy != Strategy::all_at_once || choice.steps.empty());
        views.push_back({nd_skeleton(plans[static_cast<std::size_t>(r)]), std::move(choice)});
      }
      for (const RankView &v : views) {
        ASSERT_EQ(v.choice.strategy == Strategy::multiphase, v.choice.nd_phases != nullptr);
        ASSERT_EQ(v.choice.nd_phases != nullptr, views.front().choice.nd_phases != nullptr);
      }
      if (views.front().choice.nd_phases) {
        ASSERT_TRUE(s == Strategy::automatic || s == Strategy::multiphase);
        ASSERT_EQ(check_nd_two_phases(c, views, o, es), "");
        continue;
      }
      const bool all_at_once = views.front().choice.strategy == Strategy::all_at_once;
      // In one phase, the automatic choice takes steps exactly when a limit asks for them.
      if (s == Strategy::automatic || s == Strategy::multiphase) {
        EXPECT_EQ(all_at_once,
                  o.max_concurrent == 0 &&
                      (o.max_memory == 0 || inputs.all_at_once_buffer_max <= o.max_memory));
      }
      stepped += all_at_once ? 0 : 1;
      ASSERT_EQ(check_views(views, o.max_memory, es), "");
    }
  }
  EXPECT_GT(stepped, cases);
  EXPECT_GT(g_nd_two_phase_plans_checked, cases / 10);
  std::cout << "[   INFO   ] " << g_nd_two_phase_plans_checked << " two-phase plans checked\n";
}

TEST(NdSchedule, LimitsThatCannotBeHonouredAreRefused) {
  NdTransfer t;
  t.src.dims = {dim(kBlock, 40, 2), dim(kCyclic, 30, 2, 3)};
  t.dst.dims = {dim(kCyclic, 40, 2, 2), dim(kBlock, 30, 2)};
  const NdRankPlan plan = make_nd_rank_plan(t, 0, 4);
  const ScheduleInputs inputs = all_at_once_local(nd_skeleton(plan), {}, 8);
  ScheduleChoice choice;
  ScheduleOptions o;
  o.max_memory = 15; // below one element sent and one received
  EXPECT_NE(choose_nd_schedule(t, plan, o, inputs, 8, choice).find("max_memory of 15 bytes"),
            std::string::npos);
  o = {};
  o.strategy = Strategy::all_at_once;
  o.max_concurrent = 2;
  EXPECT_NE(choose_nd_schedule(t, plan, o, inputs, 8, choice).find("max_concurrent = 2"),
            std::string::npos);
  o.max_concurrent = 0;
  o.max_memory = 16;
  EXPECT_NE(choose_nd_schedule(t, plan, o, inputs, 8, choice).find("all-at-once needs"),
            std::string::npos);
  // Every block size here is the lcm or the gcd of the other end's: no intermediate layout.
  o.strategy = Strategy::multiphase;
  o.max_memory = 0;
  EXPECT_EQ(choose_nd_schedule(t, plan, o, inputs, 8, choice), "");
  EXPECT_NE(choice.detail.find("no intermediate layout applies, one phase"), std::string::npos)
      << choice.detail;
  EXPECT_NE(choice.strategy, Strategy::multiphase);
  // CYCLIC(3) -> CYCLIC(2) goes through CYCLIC(6) or CYCLIC(1), given room for the
  // intermediate array.
  t.src.dims[0] = dim(kCyclic, 40, 2, 3);
  const NdRankPlan cyclic = make_nd_rank_plan(t, 0, 4);
  const ScheduleInputs cyclic_inputs = all_at_once_local(nd_skeleton(cyclic), {}, 8);
  EXPECT_EQ(choose_nd_schedule(t, cyclic, o, cyclic_inputs, 8, choice), "");
  EXPECT_EQ(choice.strategy, Strategy::multiphase);
  EXPECT_NE(choice.detail.find("two phases through CYCLIC("), std::string::npos) << choice.detail;
  o.max_memory = 16 * 8;
  EXPECT_EQ(choose_nd_schedule(t, cyclic, o, cyclic_inputs, 8, choice), "");
  EXPECT_NE(choice.strategy, Strategy::multiphase) << choice.detail;
  EXPECT_NE(choice.detail.find("no intermediate layout applies, one phase"), std::string::npos);
}

// As for 2-D transfers (Planner.NoTwoPhasePlanBeatsOnePhaseBelowTheFloor): wherever an N-d
// transfer's one phase is predicted at or below two_phase_floor, where auto plans no
// intermediate layout, the cheapest two-phase plan is predicted no faster.
TEST(NdSchedule, NoTwoPhasePlanBeatsOnePhaseBelowTheFloor) {
  Random rng(test_seed(1614));
  const std::size_t es = 8;
  int below = 0;
  int compared = 0;
  for (int i = 0; i < (exhaustive() ? 2000 : 300); ++i) {
    const Case c = random_case(rng, 4);
    SCOPED_TRACE("case " + std::to_string(i) + ": " + describe(c));
    ScheduleOptions automatic;
    automatic.model = {rng.chance(50) ? 2e-6 : 1e-5, rng.chance(50) ? 2.5e-10 : 2e-9, 0.0};
    ScheduleOptions multiphase = automatic;
    multiphase.strategy = Strategy::multiphase;
    const ScheduleInputs inputs = nd_all_at_once_estimate(c.t, automatic.model, es);
    for (int r = 0; r < c.comm_size; ++r) {
      const NdRankPlan plan = make_nd_rank_plan(c.t, r, c.comm_size);
      ScheduleChoice one;
      ASSERT_EQ(choose_nd_schedule(c.t, plan, automatic, inputs, es, one), "");
      if (one.stats.seconds > two_phase_floor(automatic)) continue;
      ++below;
      ASSERT_EQ(one.nd_phases, nullptr);
      ScheduleChoice two;
      ASSERT_EQ(choose_nd_schedule(c.t, plan, multiphase, inputs, es, two), "");
      if (two.nd_phases == nullptr) continue;
      ++compared;
      EXPECT_GE(two.stats.seconds, one.stats.seconds) << "rank " << r << " " << two.detail;
    }
  }
  EXPECT_GT(below, 100);
  EXPECT_GT(compared, 30);
}

// Kaushik et al.'s intermediates per dimension (review Sec. 4.2.1): CYCLIC(2) -> CYCLIC(3) on
// two processes goes through CYCLIC(6) or CYCLIC(1); a GEN_BLOCK dimension keeps its own
// distribution, cut to the window; '*' dimensions stay whole.
TEST(NdSchedule, IntermediateLayoutsTakeEachDimensionsChoices) {
  NdTransfer t;
  NdDimension gen;
  gen.kind = Distribution::gen_block;
  gen.extent = 10;
  gen.nprocs = 2;
  gen.gen_block = {3, 7};
  t.src.dims = {dim(kCyclic, 24, 2, 2), gen, dim(kNone, 5, 1)};
  t.dst.dims = {dim(kCyclic, 24, 2, 3), dim(kBlock, 10, 2), dim(kNone, 5, 1)};
  t.src.starts = {0, 2, 0};
  t.dst.starts = {0, 2, 0};
  t.src.subsizes = t.dst.subsizes = {24, 6, 5};
  ASSERT_EQ(check_nd_transfer(t, 4), "");
  std::vector<std::string> seen;
  for (const NdMidLayout &mid : nd_mid_layouts(t)) {
    std::string name = mid.on_source ? "source:" : "destination:";
    for (const NdDimension &d : mid.layout.dims) {
      name += " " + std::to_string(static_cast<int>(d.kind)) + "/" + std::to_string(d.darg) + "/" +
              std::to_string(d.extent);
      for (const Index e : d.gen_block)
        name += "," + std::to_string(e);
    }
    seen.push_back(name);
  }
  // kinds: 1 cyclic, 3 gen_block; the GEN_BLOCK window [2, 8) holds 1 and 5 of its indices.
  const std::vector<std::string> expected = {
      "source: 1/6/24 3/-1/6,1,5 1/5/5", "source: 1/1/24 3/-1/6,1,5 1/5/5",
      "destination: 1/6/24 1/5/6 1/5/5", "destination: 1/1/24 1/5/6 1/5/5"};
  EXPECT_EQ(seen, expected);
}

} // namespace
} // namespace redist::test
