#include "nd_plan.hpp"

#include <algorithm>
#include <utility>

namespace redist {

DimTransfer NdTransfer::dim(int d) const {
  const int a = perm_at(d);
  return {resolve(src.dims[static_cast<std::size_t>(a)]),
          resolve(dst.dims[static_cast<std::size_t>(d)]), src.start(a), dst.start(d),
          dst.window(d)};
}

std::string check_nd_transfer(const NdTransfer &t, int comm_size, int rank) {
  if (std::string why = check_nd_layout(t.src, comm_size, rank); !why.empty()) {
    return "a->" + why;
  }
  if (std::string why = check_nd_layout(t.dst, comm_size, rank); !why.empty()) {
    return "b->" + why;
  }
  const int n = t.ndims();
  if (t.src.ndims() != n) {
    return "b->ndims: " + std::to_string(n) +
           " differs from a->ndims = " + std::to_string(t.src.ndims());
  }
  if (!t.perm.empty()) {
    if (static_cast<int>(t.perm.size()) != n) {
      return "perm: needs ndims = " + std::to_string(n) + " entries, got " +
             std::to_string(t.perm.size());
    }
    std::vector<bool> seen(static_cast<std::size_t>(n), false);
    for (int d = 0; d < n; ++d) {
      const int a = t.perm[static_cast<std::size_t>(d)];
      if (a < 0 || a >= n || seen[static_cast<std::size_t>(a)]) {
        return "perm[" + std::to_string(d) + "]: " + std::to_string(a) +
               " makes perm no permutation of 0.." + std::to_string(n - 1);
      }
      seen[static_cast<std::size_t>(a)] = true;
    }
  }
  for (int d = 0; d < n; ++d) {
    const int a = t.perm_at(d);
    if (t.src.window(a) != t.dst.window(d)) {
      return "b->subsizes[" + std::to_string(d) + "]: " + std::to_string(t.dst.window(d)) +
             " differs from a->subsizes[" + std::to_string(a) +
             "] = " + std::to_string(t.src.window(a));
    }
  }
  return {};
}

bool locally_contiguous(const RunPattern &pattern, Run &run) {
  const Index total = pattern.total();
  if (total == 0) {
    return false;
  }
  // Local indices increase with the window index between two processes, so the elements are
  // contiguous in both arrays when the first and the last are total - 1 apart on both sides.
  Run first;
  Run last;
  const Index first_k = pattern.index_of(0);
  const Index last_k = pattern.index_of(total - 1);
  pattern.for_each(first_k, first_k + 1, [&](const Run &r) { first = r; });
  pattern.for_each(last_k, last_k + 1, [&](const Run &r) { last = r; });
  if (last.src_local - first.src_local != total - 1 ||
      last.dst_local - first.dst_local != total - 1) {
    return false;
  }
  run = first;
  run.length = total;
  return true;
}

NdMessage NdRankPlan::message(const NdPeer &peer, bool sending) const {
  NdMessage m;
  m.ndims = ndims;
  m.perm = perm;
  m.order = order;
  for (int d = 0; d < ndims; ++d) {
    const auto du = static_cast<std::size_t>(d);
    m.dims[du] =
        &(sending ? send_patterns : recv_patterns)[du][static_cast<std::size_t>(peer.slots[du])];
  }
  return m;
}

Index NdRankPlan::elements_sent() const {
  Index total = 0;
  for (const NdPeer &p : sends) {
    total += p.elements;
  }
  return total;
}

Index NdRankPlan::elements_received() const {
  Index total = 0;
  for (const NdPeer &p : recvs) {
    total += p.elements;
  }
  return total;
}

std::size_t NdRankPlan::memory_bytes() const {
  std::size_t bytes = sizeof(NdRankPlan);
  for (const auto *side : {&send_patterns, &recv_patterns}) {
    for (const std::vector<RunPattern> &patterns : *side) {
      bytes += patterns.capacity() * sizeof(RunPattern);
      for (const RunPattern &p : patterns) {
        bytes += p.memory_bytes();
      }
    }
  }
  return bytes + (sends.capacity() + recvs.capacity()) * sizeof(NdPeer);
}

namespace {

// Visit the product of per-dimension index ranges [0, sizes[d]), dimension 0 fastest.
template <class F> void for_each_product(int ndims, const Coords &sizes, F &&f) {
  for (int d = 0; d < ndims; ++d) {
    if (sizes[static_cast<std::size_t>(d)] == 0) {
      return;
    }
  }
  Coords idx{};
  while (true) {
    f(idx);
    int d = 0;
    for (; d < ndims; ++d) {
      const auto du = static_cast<std::size_t>(d);
      if (++idx[du] < sizes[du]) {
        break;
      }
      idx[du] = 0;
    }
    if (d == ndims) {
      return;
    }
  }
}

// One side of the plan: per dimension of B the patterns with this rank's peers and their grid
// coordinates, then the messages of the product.
std::vector<NdPeer> side_messages(const NdPlanInput &in, const Coords &own, bool as_source,
                                  std::array<std::vector<RunPattern>, kMaxDims> &patterns,
                                  const MessageCount &count) {
  std::array<std::vector<int>, kMaxDims> peers;
  Coords sizes{};
  for (int d = 0; d < in.ndims; ++d) {
    const auto du = static_cast<std::size_t>(d);
    const int coordinate = own[static_cast<std::size_t>(as_source ? in.perm[du] : d)];
    std::vector<DimPeerRuns> runs = dim_peer_runs(in.dims[du], coordinate, as_source);
    patterns[du].reserve(runs.size());
    for (DimPeerRuns &r : runs) {
      peers[du].push_back(r.peer);
      patterns[du].push_back(std::move(r.runs));
    }
    sizes[du] = static_cast<int>(runs.size());
  }
  std::vector<NdPeer> out;
  for_each_product(in.ndims, sizes, [&](const Coords &idx) {
    NdPeer peer;
    std::array<const RunPattern *, kMaxDims> message{};
    Index elements = 1;
    for (int d = 0; d < in.ndims; ++d) {
      const auto du = static_cast<std::size_t>(d);
      const auto slot = static_cast<std::size_t>(idx[du]);
      peer.slots[du] = idx[du];
      // As a source the peer is at B's coordinate peers[d] along d; as a destination at A's
      // coordinate peers[d] along A's dimension perm[d].
      peer.grid[static_cast<std::size_t>(as_source ? d : in.perm[du])] = peers[du][slot];
      message[du] = &patterns[du][slot];
      elements *= message[du]->total();
    }
    peer.elements = count ? count(message) : elements;
    peer.rank = (as_source ? in.dst_grid : in.src_grid).rank_at(peer.grid);
    out.push_back(peer);
  });
  return out;
}

} // namespace

NdRankPlan plan_rank(const NdPlanInput &in, int rank, int comm_size, const MessageCount &count) {
  NdRankPlan plan;
  plan.rank = rank;
  plan.ndims = in.ndims;
  plan.perm = in.perm;
  plan.order = in.order;
  for (int d = 0; d < in.ndims; ++d) {
    if (in.dims[static_cast<std::size_t>(d)].length == 0) {
      return plan;
    }
  }
  Coords src_at{};
  Coords dst_at{};
  plan.in_src = in.src_grid.find(rank, src_at);
  plan.in_dst = in.dst_grid.find(rank, dst_at);
  const auto round = [&](int from, int to) {
    return ((to - from) % comm_size + comm_size) % comm_size;
  };
  if (plan.in_src) {
    for (const NdPeer &peer : side_messages(in, src_at, true, plan.send_patterns, count)) {
      if (peer.elements == 0) {
        continue;
      }
      if (peer.rank == rank) {
        plan.self = peer;
      } else {
        plan.sends.push_back(peer);
      }
    }
    std::sort(plan.sends.begin(), plan.sends.end(), [&](const NdPeer &a, const NdPeer &b) {
      return round(rank, a.rank) < round(rank, b.rank);
    });
  }
  if (plan.in_dst) {
    for (const NdPeer &peer : side_messages(in, dst_at, false, plan.recv_patterns, count)) {
      // the local copy is planned from the sending side
      if (peer.rank != rank && peer.elements > 0) {
        plan.recvs.push_back(peer);
      }
    }
    // Receive first from the peers that send to this rank first.
    std::sort(plan.recvs.begin(), plan.recvs.end(), [&](const NdPeer &a, const NdPeer &b) {
      return round(a.rank, rank) < round(b.rank, rank);
    });
  }
  return plan;
}

NdRankPlan make_nd_rank_plan(const NdTransfer &t, int rank, int comm_size) {
  NdPlanInput in;
  in.ndims = t.ndims();
  for (int d = 0; d < in.ndims; ++d) {
    in.dims[static_cast<std::size_t>(d)] = t.dim(d);
    in.perm[static_cast<std::size_t>(d)] = t.perm_at(d);
  }
  in.src_grid = grid_of(t.src);
  in.dst_grid = grid_of(t.dst);
  in.order = t.dst.order;
  return plan_rank(in, rank, comm_size);
}

Index estimate_nd_pieces(const NdMessage &m, PieceSide side, const Strides &src_strides,
                         const Strides &dst_strides) {
  if (m.ndims == 0) {
    return 0;
  }
  const auto ignore = [](const NdPiece &) {};
  const detail::NdWalk<decltype(ignore) const> walk(m, side, src_strides, dst_strides, ignore);
  return walk.estimate();
}

} // namespace redist
