#include "plan.hpp"

#include "nd_plan.hpp"

#include <algorithm>
#include <utility>

namespace redist {

Index message_elements(const RunPattern &rows, const RunPattern &cols, const Region &region,
                       Index m, Index n) {
  if (rows.empty() || cols.empty()) {
    return 0;
  }
  if (region.kind == Region::Kind::full) {
    return rows.total() * cols.total();
  }
  Index count = 0;
  cols.for_each([&](const Run &c) {
    for (Index dc = 0; dc < c.length; ++dc) {
      const auto [lo, hi] = region.rows_in_column(c.k + dc, m, n);
      if (lo < hi) {
        count += rows.count_below(hi) - rows.count_below(lo);
      }
    }
  });
  return count;
}

namespace {

Peer peer_2d(const NdPeer &p) {
  return {p.rank, p.slots[0], p.slots[1], p.elements, p.grid[0], p.grid[1]};
}

} // namespace

Transfer column_major_equivalent(const Transfer &t) {
  if (!t.src.row_major && !t.dst.row_major) {
    return t;
  }
  Transfer out = t;
  bool transposes = t.transposed();
  if (t.src.row_major) {
    out.src = transposed_layout(t.src);
    transposes = !transposes;
  }
  if (t.dst.row_major) {
    // B's transpose receives op(A)'s transpose: its window is n x m and its region the
    // mirror image (B(i, j) is B^T(j, i); diagonal offsets change sign).
    out.dst = transposed_layout(t.dst);
    out.m = t.n;
    out.n = t.m;
    if (t.region.kind != Region::Kind::full) {
      out.region.kind =
          t.region.kind == Region::Kind::upper ? Region::Kind::lower : Region::Kind::upper;
    }
    transposes = !transposes;
  }
  out.perm = transposes ? std::array<int, 2>{1, 0} : std::array<int, 2>{0, 1};
  return out;
}

bool uniform_owners(const Transfer &t, Transfer &uniform) {
  uniform = column_major_equivalent(t);
  for (int d = 0; d < 2; ++d) {
    Transfer1D same;
    if (!uniform_owners(uniform.dim(d), same)) {
      return false;
    }
    const int a = uniform.perm[static_cast<std::size_t>(d)];
    (a == 0 ? uniform.src.rows : uniform.src.cols) = same.src;
    (a == 0 ? uniform.src.i : uniform.src.j) = same.src_start;
    (d == 0 ? uniform.dst.rows : uniform.dst.cols) = same.dst;
    (d == 0 ? uniform.dst.i : uniform.dst.j) = same.dst_start;
  }
  return true;
}

namespace {

/// A replicated dimension's copy on process `p`: one block of the whole extent there (uniform
/// blocks, so that every schedule applies).
BlockCyclic whole_on(const BlockCyclic &d, int p) {
  return {d.extent, std::max<Index>(d.extent, 1), d.nprocs, p, 0};
}

} // namespace

ReplicaParts replica_parts(const Transfer &t, Replication a, Replication b, bool local_reads) {
  ReplicaParts parts;
  for (int d = 0; d < 2; ++d) {
    const auto k = static_cast<std::size_t>(d);
    const bool a_along = a.along(t.perm[k]);
    if (b.along(d) || (a_along && local_reads)) parts.count[k] = t.dst.grid_extent(d);
    parts.restricted[k] = !b.along(d) && a_along && local_reads;
  }
  return parts;
}

std::array<int, 2> make_part(Transfer &t, Replication a, Replication b, const ReplicaParts &parts,
                             int part) {
  const std::array<int, 2> at{part / parts.count[1], part % parts.count[1]};
  std::array<int, 2> restricted{-1, -1};
  for (int d = 0; d < 2; ++d) {
    const auto k = static_cast<std::size_t>(d);
    if (b.along(d)) (d == 0 ? t.dst.rows : t.dst.cols) = whole_on(t.dst.dim(d), at[k]);
    // B's dimension d holds A's dimension perm[d]: A's copy follows the part along it.
    const int axis = t.perm[k];
    if (a.along(axis)) {
      BlockCyclic &dim = axis == 0 ? t.src.rows : t.src.cols;
      dim = whole_on(dim, at[k] % dim.nprocs);
    }
    if (parts.restricted[k]) restricted[k] = at[k];
  }
  return restricted;
}

void keep_destinations(RankPlan &plan, const Transfer &t, int rank, std::array<int, 2> at) {
  const auto away = [&](int row, int col) {
    return (at[0] >= 0 && row != at[0]) || (at[1] >= 0 && col != at[1]);
  };
  // A row-major B is planned as its transpose (column_major_equivalent): its peers' positions
  // are in the transposed grid.
  std::erase_if(plan.sends, [&](const Peer &p) {
    return t.dst.row_major ? away(p.grid_col, p.grid_row) : away(p.grid_row, p.grid_col);
  });
  int row = -1;
  int col = -1;
  if (!t.dst.grid.find(rank, row, col) || away(row, col)) {
    plan.recvs.clear();
    plan.recv_rows.clear();
    plan.recv_cols.clear();
    plan.self.elements = 0;
  }
}

// The 2-D plan is the N-d plan with m = 2 (nd_plan.hpp's plan_rank): BLACS' column-major grids,
// and for trapezoids a message count clipped to the region.
RankPlan make_rank_plan(const Transfer &given, int rank, int comm_size) {
  const Transfer t = column_major_equivalent(given);
  RankPlan plan;
  plan.rank = rank;
  plan.m = t.m;
  plan.n = t.n;
  plan.region = t.region;
  plan.perm = t.perm;
  NdPlanInput in;
  in.ndims = 2;
  for (int d = 0; d < 2; ++d) {
    const Transfer1D dim = t.dim(d);
    in.dims[static_cast<std::size_t>(d)] = {resolve(dim.src), resolve(dim.dst), dim.src_start,
                                            dim.dst_start, dim.length};
    in.perm[static_cast<std::size_t>(d)] = t.perm[static_cast<std::size_t>(d)];
  }
  in.src_grid = grid_of(t.src.grid);
  in.dst_grid = grid_of(t.dst.grid);
  in.order = StorageOrder::fortran;
  MessageCount count;
  if (t.region.kind != Region::Kind::full) {
    count = [&](const std::array<const RunPattern *, kMaxDims> &message) {
      return message_elements(*message[0], *message[1], t.region, t.m, t.n);
    };
  }
  NdRankPlan nd = plan_rank(in, rank, comm_size, count);
  plan.in_src = nd.in_src;
  plan.in_dst = nd.in_dst;
  plan.send_rows = std::move(nd.send_patterns[0]);
  plan.send_cols = std::move(nd.send_patterns[1]);
  plan.recv_rows = std::move(nd.recv_patterns[0]);
  plan.recv_cols = std::move(nd.recv_patterns[1]);
  plan.sends.reserve(nd.sends.size());
  for (const NdPeer &p : nd.sends) {
    plan.sends.push_back(peer_2d(p));
  }
  plan.recvs.reserve(nd.recvs.size());
  for (const NdPeer &p : nd.recvs) {
    plan.recvs.push_back(peer_2d(p));
  }
  if (nd.self.elements > 0) {
    plan.self = peer_2d(nd.self);
  }
  return plan;
}

namespace {

std::vector<RowGroup> row_groups_between(const RunPattern &rows, Index lo, Index hi) {
  std::vector<RowGroup> groups;
  rows.for_each(lo, hi, [&](const Run &r) {
    if (!groups.empty()) {
      RowGroup &g = groups.back();
      if (g.length == r.length) {
        if (g.count == 1) {
          g.src_step = r.src_local - g.src;
          g.dst_step = r.dst_local - g.dst;
          g.count = 2;
          return;
        }
        if (r.src_local == g.src + g.count * g.src_step &&
            r.dst_local == g.dst + g.count * g.dst_step) {
          ++g.count;
          return;
        }
      }
    }
    groups.push_back({r.src_local, r.dst_local, r.length, 1, 0, 0});
  });
  groups.shrink_to_fit();
  return groups;
}

} // namespace

RowGroups row_groups(const RunPattern &rows) {
  RowGroups groups;
  const Index head = rows.head_length();
  if (head > 0) {
    groups.head = row_groups_between(rows, 0, head);
  }
  const Index end = rows.segments_end();
  groups.periods = (end - head) / rows.period();
  groups.src_stride = rows.src_stride();
  groups.dst_stride = rows.dst_stride();
  if (groups.periods > 0) {
    groups.period = row_groups_between(rows, head, head + rows.period());
  }
  groups.tail = row_groups_between(rows, head + groups.periods * rows.period(), end);
  // One group per period that the next period continues at the same steps (blocks of the
  // destination's rows at constant distances): the whole window is one group.
  if (groups.periods > 1 && groups.period.size() == 1) {
    RowGroup whole = groups.period.front();
    const Index src_step = whole.count == 1 ? groups.src_stride : whole.src_step;
    const Index dst_step = whole.count == 1 ? groups.dst_stride : whole.dst_step;
    const bool continues =
        groups.src_stride == whole.count * src_step && groups.dst_stride == whole.count * dst_step;
    const auto continued_by = [&](const RowGroup &next, Index after) {
      return next.length == whole.length && next.src == whole.src + after * src_step &&
             next.dst == whole.dst + after * dst_step &&
             (next.count == 1 || (next.src_step == src_step && next.dst_step == dst_step));
    };
    const Index count = groups.periods * whole.count;
    if (continues &&
        (groups.tail.empty() || (groups.tail.size() == 1 && continued_by(groups.tail[0], count)))) {
      whole.count = count + (groups.tail.empty() ? 0 : groups.tail[0].count);
      whole.src_step = src_step;
      whole.dst_step = dst_step;
      groups.periods = 1;
      groups.period = {whole};
      groups.tail.clear();
    }
  }
  return groups;
}

Index RankPlan::elements_sent() const {
  Index total = 0;
  for (const Peer &p : sends) {
    total += p.elements;
  }
  return total;
}

Index RankPlan::elements_received() const {
  Index total = 0;
  for (const Peer &p : recvs) {
    total += p.elements;
  }
  return total;
}

std::size_t RankPlan::memory_bytes() const {
  std::size_t bytes = sizeof(RankPlan);
  for (const auto *patterns : {&send_rows, &send_cols, &recv_rows, &recv_cols}) {
    for (const RunPattern &p : *patterns) {
      bytes += sizeof(RunPattern) + p.memory_bytes();
    }
  }
  return bytes + (sends.capacity() + recvs.capacity()) * sizeof(Peer);
}

} // namespace redist
