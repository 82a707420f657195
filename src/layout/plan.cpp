#include "plan.hpp"

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

// Splits per-peer runs into the patterns (kept in `patterns`) and their peers' grid indices.
std::vector<int> take_patterns(std::vector<PeerRuns> runs, std::vector<RunPattern> &patterns) {
  std::vector<int> peers;
  peers.reserve(runs.size());
  patterns.reserve(runs.size());
  for (PeerRuns &r : runs) {
    peers.push_back(r.peer);
    patterns.push_back(std::move(r.runs));
  }
  return peers;
}

} // namespace

RankPlan make_rank_plan(const Transfer &t, int rank, int comm_size) {
  RankPlan plan;
  plan.rank = rank;
  plan.m = t.m;
  plan.n = t.n;
  plan.region = t.region;
  plan.perm = t.perm;
  if (t.m == 0 || t.n == 0) {
    return plan;
  }
  int spr = 0;
  int spc = 0;
  int dpr = 0;
  int dpc = 0;
  plan.in_src = t.src.grid.find(rank, spr, spc);
  plan.in_dst = t.dst.grid.find(rank, dpr, dpc);
  const Transfer1D rows = t.rows();
  const Transfer1D cols = t.cols();
  const auto send_round = [&](int peer) {
    return ((peer - rank) % comm_size + comm_size) % comm_size;
  };
  const auto recv_round = [&](int peer) {
    return ((rank - peer) % comm_size + comm_size) % comm_size;
  };

  if (plan.in_src) {
    // Transposed: B's rows are A's columns, so the row patterns start at A's grid column.
    const std::vector<int> qrs =
        take_patterns(peer_runs_from_source(rows, t.src_coordinate(0, spr, spc)), plan.send_rows);
    const std::vector<int> qcs =
        take_patterns(peer_runs_from_source(cols, t.src_coordinate(1, spr, spc)), plan.send_cols);
    for (std::size_t c = 0; c < qcs.size(); ++c) {
      for (std::size_t r = 0; r < qrs.size(); ++r) {
        const Index count =
            message_elements(plan.send_rows[r], plan.send_cols[c], t.region, t.m, t.n);
        if (count == 0) {
          continue;
        }
        const Peer peer{t.dst.grid.rank_at(qrs[r], qcs[c]),
                        static_cast<int>(r),
                        static_cast<int>(c),
                        count,
                        qrs[r],
                        qcs[c]};
        if (peer.rank == rank) {
          plan.self = peer;
        } else {
          plan.sends.push_back(peer);
        }
      }
    }
    std::sort(plan.sends.begin(), plan.sends.end(), [&](const Peer &a, const Peer &b) {
      return send_round(a.rank) < send_round(b.rank);
    });
  }
  if (plan.in_dst) {
    const std::vector<int> prs = take_patterns(peer_runs_to_destination(rows, dpr), plan.recv_rows);
    const std::vector<int> pcs = take_patterns(peer_runs_to_destination(cols, dpc), plan.recv_cols);
    for (std::size_t c = 0; c < pcs.size(); ++c) {
      for (std::size_t r = 0; r < prs.size(); ++r) {
        // prs / pcs are A's grid positions along A's dimensions perm[0] / perm[1].
        const int peer_row = t.transposed() ? pcs[c] : prs[r];
        const int peer_col = t.transposed() ? prs[r] : pcs[c];
        const int peer_rank = t.src.grid.rank_at(peer_row, peer_col);
        if (peer_rank == rank) {
          continue; // the local copy is planned from the sending side
        }
        const Index count =
            message_elements(plan.recv_rows[r], plan.recv_cols[c], t.region, t.m, t.n);
        if (count > 0) {
          plan.recvs.push_back(
              {peer_rank, static_cast<int>(r), static_cast<int>(c), count, peer_row, peer_col});
        }
      }
    }
    // Receive first from the peers that send to this rank first.
    std::sort(plan.recvs.begin(), plan.recvs.end(), [&](const Peer &a, const Peer &b) {
      return recv_round(a.rank) < recv_round(b.rank);
    });
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
  groups.periods = rows.window_length() / rows.period();
  groups.src_stride = rows.src_stride();
  groups.dst_stride = rows.dst_stride();
  if (groups.periods > 0) {
    groups.period = row_groups_between(rows, 0, rows.period());
  }
  groups.tail = row_groups_between(rows, groups.periods * rows.period(), rows.window_length());
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
