#include "nd_index.hpp"

#include <algorithm>
#include <tuple>
#include <utility>

namespace redist {
namespace {

// Window indices [lo, hi) of GEN_BLOCK process p's interval, for a window of `length` starting
// at global index `start`.
std::pair<Index, Index> interval_in_window(const DimDistribution &d, Index start, Index length,
                                           int p) {
  const auto c = static_cast<std::size_t>(p);
  return {std::max<Index>(0, d.bounds[c] - start), std::min(length, d.bounds[c + 1] - start)};
}

// One side of the Transfer1D over window indices [lo, ...): a block-cyclic side keeps its
// geometry; GEN_BLOCK process p is a one-process dimension over its interval.
std::pair<BlockCyclic, Index> side_over(const DimDistribution &d, Index start, Index lo, int p) {
  if (!d.gen_block) {
    return {d.cyclic, start + lo};
  }
  const auto c = static_cast<std::size_t>(p);
  return {BlockCyclic{d.bounds[c + 1] - d.bounds[c], 1, 1, 0}, start + lo - d.bounds[c]};
}

} // namespace

std::vector<DimPeerRuns> dim_peer_runs(const DimTransfer &t, int proc, bool as_source) {
  std::vector<DimPeerRuns> result;
  if (t.length <= 0) {
    return result;
  }
  const DimDistribution &fixed = as_source ? t.src : t.dst;
  const DimDistribution &other = as_source ? t.dst : t.src;
  const Index fixed_start = as_source ? t.src_start : t.dst_start;
  const Index other_start = as_source ? t.dst_start : t.src_start;
  Index lo = 0;
  Index hi = t.length;
  if (fixed.gen_block) {
    std::tie(lo, hi) = interval_in_window(fixed, fixed_start, t.length, proc);
  }
  // The runs over window indices [sub_lo, sub_hi), with other-side process other_proc when that
  // side is GEN_BLOCK.
  const auto add = [&](Index sub_lo, Index sub_hi, int other_proc) {
    const auto [fixed_dim, fixed_from] = side_over(fixed, fixed_start, sub_lo, proc);
    const auto [other_dim, other_from] = side_over(other, other_start, sub_lo, other_proc);
    Transfer1D sub;
    sub.length = sub_hi - sub_lo;
    (as_source ? sub.src : sub.dst) = fixed_dim;
    (as_source ? sub.src_start : sub.dst_start) = fixed_from;
    (as_source ? sub.dst : sub.src) = other_dim;
    (as_source ? sub.dst_start : sub.src_start) = other_from;
    const int fixed_proc = fixed.gen_block ? 0 : proc;
    for (PeerRuns &r : as_source ? peer_runs_from_source(sub, fixed_proc)
                                 : peer_runs_to_destination(sub, fixed_proc)) {
      result.push_back({other.gen_block ? other_proc : r.peer, sub_lo, std::move(r.runs)});
    }
  };
  if (lo >= hi) {
    return result;
  }
  if (!other.gen_block) {
    add(lo, hi, 0);
    return result;
  }
  // The other side's processes whose intervals meet [lo, hi), in increasing order.
  const int first = other.owner(other_start + lo);
  const int last = other.owner(other_start + hi - 1);
  for (int x = first; x <= last; ++x) {
    const auto [x_lo, x_hi] = interval_in_window(other, other_start, t.length, x);
    const Index sub_lo = std::max(lo, x_lo);
    const Index sub_hi = std::min(hi, x_hi);
    if (sub_lo < sub_hi) {
      add(sub_lo, sub_hi, x);
    }
  }
  return result;
}

std::vector<DimVolume> dim_volumes(const DimTransfer &t) {
  std::vector<DimVolume> out;
  for (int p = 0; p < t.src.nprocs(); ++p) {
    for (const DimPeerRuns &r : dim_peer_runs(t, p, true)) {
      if (r.runs.total() > 0) {
        out.push_back({p, r.peer, r.runs.total()});
      }
    }
  }
  return out;
}

} // namespace redist
