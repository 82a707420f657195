#include "index.hpp"

#include <algorithm>
#include <numeric>
#include <utility>

namespace redist {
namespace {

// A period shorter than this is stretched to a multiple of itself (at most the window), so
// that tiny periods (e.g. one process on each side) do not turn into per-element loops.
constexpr Index kMinStoredPeriod = 1024;

// lcm(a, b), or `cap` when the result would be >= cap (or overflow).
Index lcm_capped(Index a, Index b, Index cap) {
  const Index g = std::gcd(a, b);
  const Index a_over_g = a / g;
  if (a_over_g > cap / b) {
    return cap;
  }
  return std::min(a_over_g * b, cap);
}

// Local index advance per `period` window indices along one side.
Index local_stride(const BlockCyclic &d, Index period) {
  return d.nprocs == 1 ? period : period / d.nprocs;
}

// Visit the pieces of window indices [0, period) whose `fixed`-side owner is `proc`, split at
// every block boundary of both sides: emit(other_owner, k, fixed_local, other_local, length).
template <class Emit>
void enumerate_pieces(const BlockCyclic &fixed, Index fixed_start, const BlockCyclic &other,
                      Index other_start, Index period, int proc, Emit &&emit) {
  const Index end = fixed_start + period; // in fixed-side global indices
  // With one process on a side there are no block boundaries that change the owner or break
  // local contiguity.
  const Index fixed_block = fixed.nprocs == 1 ? end : fixed.block;
  const Index fixed_stride = fixed.nprocs == 1 ? end : fixed.block * fixed.nprocs;
  Index first_block = fixed_start / fixed_block;
  if (fixed.nprocs > 1) {
    const Index shift =
        ((proc - fixed.src - first_block) % fixed.nprocs + fixed.nprocs) % fixed.nprocs;
    first_block += shift;
  } else if (proc != 0) {
    return;
  }
  for (Index block_start = first_block * fixed_block; block_start < end;
       block_start += fixed_stride) {
    const Index seg_begin = std::max(block_start, fixed_start) - fixed_start;
    const Index seg_end = std::min(block_start + fixed_block, end) - fixed_start;
    Index k = seg_begin;
    while (k < seg_end) {
      const Index g_other = other_start + k;
      Index piece_end = seg_end;
      if (other.nprocs > 1) {
        piece_end = std::min(seg_end, (g_other / other.block + 1) * other.block - other_start);
      }
      emit(other.owner(g_other), k, fixed.local_index(fixed_start + k), other.local_index(g_other),
           piece_end - k);
      k = piece_end;
    }
  }
}

} // namespace

RunPattern::RunPattern(Index window_length, Index period, Index src_stride, Index dst_stride)
    : length_(window_length), period_(period), src_stride_(src_stride), dst_stride_(dst_stride) {}

void RunPattern::append(const Run &piece) {
  if (!runs_.empty()) {
    Run &last = runs_.back();
    if (last.k + last.length == piece.k && last.src_local + last.length == piece.src_local &&
        last.dst_local + last.length == piece.dst_local) {
      last.length += piece.length;
      return;
    }
  }
  runs_.push_back(piece);
}

void RunPattern::finish() {
  runs_.shrink_to_fit();
  prefix_.assign(runs_.size() + 1, 0);
  for (std::size_t idx = 0; idx < runs_.size(); ++idx) {
    prefix_[idx + 1] = prefix_[idx] + runs_[idx].length;
  }
  per_period_ = prefix_.back();
  total_ = count_below(length_);
}

Index RunPattern::index_of(Index c) const {
  Index lo = 0; // count_below(lo) <= c < count_below(hi)
  Index hi = length_;
  while (hi - lo > 1) {
    const Index mid = lo + (hi - lo) / 2;
    (count_below(mid) <= c ? lo : hi) = mid;
  }
  return lo;
}

Index RunPattern::count_below(Index x) const {
  if (runs_.empty() || x <= 0) {
    return 0;
  }
  x = std::min(x, length_);
  const Index periods = x / period_;
  const Index rest = x % period_;
  // runs entirely below `rest`, then the one that straddles it
  const auto it = std::partition_point(runs_.begin(), runs_.end(),
                                       [rest](const Run &r) { return r.k + r.length <= rest; });
  const auto idx = static_cast<std::size_t>(it - runs_.begin());
  Index count = periods * per_period_ + prefix_[idx];
  if (it != runs_.end() && it->k < rest) {
    count += rest - it->k;
  }
  return count;
}

PeriodInfo period_info(const Transfer1D &t) {
  PeriodInfo info;
  if (t.length <= 0) {
    return info;
  }
  Index period = lcm_capped(t.src.period(), t.dst.period(), t.length);
  if (period < t.length && period < kMinStoredPeriod) {
    const Index cap = std::min(t.length, kMinStoredPeriod);
    period *= std::max(Index{1}, cap / period);
  }
  info.period = period;
  info.src_stride = local_stride(t.src, period);
  info.dst_stride = local_stride(t.dst, period);
  return info;
}

namespace {

// Runs between `proc` on one side (the source when as_source) and the processes of the other
// side it exchanges data with: the pieces of one period gathered per peer (stable, so each
// peer's pieces stay in increasing k and merge into runs as they are appended).
std::vector<PeerRuns> runs_of_process(const Transfer1D &t, int proc, bool as_source) {
  std::vector<PeerRuns> result;
  if (t.length <= 0) {
    return result;
  }
  const PeriodInfo info = period_info(t);
  const BlockCyclic &fixed = as_source ? t.src : t.dst;
  const BlockCyclic &other = as_source ? t.dst : t.src;
  std::vector<std::pair<int, Run>> pieces;
  enumerate_pieces(fixed, as_source ? t.src_start : t.dst_start, other,
                   as_source ? t.dst_start : t.src_start, info.period, proc,
                   [&](int peer, Index k, Index fixed_local, Index other_local, Index len) {
                     pieces.emplace_back(peer, as_source ? Run{k, len, fixed_local, other_local}
                                                         : Run{k, len, other_local, fixed_local});
                   });
  std::stable_sort(pieces.begin(), pieces.end(),
                   [](const auto &a, const auto &b) { return a.first < b.first; });
  for (const auto &[peer, piece] : pieces) {
    if (result.empty() || result.back().peer != peer) {
      result.push_back({peer, RunPattern(t.length, info.period, info.src_stride, info.dst_stride)});
    }
    result.back().runs.append(piece);
  }
  for (PeerRuns &r : result) {
    r.runs.finish();
  }
  result.shrink_to_fit();
  return result;
}

// One pattern per process of the other side, empty for those without data.
std::vector<RunPattern> dense(const Transfer1D &t, std::vector<PeerRuns> sparse, int nprocs) {
  const PeriodInfo info = period_info(t);
  std::vector<RunPattern> result(
      static_cast<std::size_t>(nprocs),
      RunPattern(t.length, info.period, info.src_stride, info.dst_stride));
  for (PeerRuns &r : sparse) {
    result[static_cast<std::size_t>(r.peer)] = std::move(r.runs);
  }
  for (RunPattern &pattern : result) {
    if (pattern.empty()) {
      pattern.finish();
    }
  }
  return result;
}

} // namespace

std::vector<PeerRuns> peer_runs_from_source(const Transfer1D &t, int p) {
  return runs_of_process(t, p, true);
}

std::vector<PeerRuns> peer_runs_to_destination(const Transfer1D &t, int q) {
  return runs_of_process(t, q, false);
}

std::vector<RunPattern> runs_from_source(const Transfer1D &t, int p) {
  return dense(t, runs_of_process(t, p, true), t.dst.nprocs);
}

std::vector<RunPattern> runs_to_destination(const Transfer1D &t, int q) {
  return dense(t, runs_of_process(t, q, false), t.src.nprocs);
}

} // namespace redist
