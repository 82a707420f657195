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
    : length_(window_length) {
  last_.period = period;
  last_.src_stride = src_stride;
  last_.dst_stride = dst_stride;
}

RunPattern::RunPattern(const RunPattern &other)
    : length_(other.length_), total_(other.total_), last_(other.last_),
      head_(other.head_ ? std::make_unique<Head>(*other.head_) : nullptr) {}

RunPattern &RunPattern::operator=(const RunPattern &other) {
  if (this != &other) {
    *this = RunPattern(other);
  }
  return *this;
}

RunPattern::Head &RunPattern::head() {
  if (head_ == nullptr) {
    head_ = std::make_unique<Head>();
    head_->last_end = length_;
  }
  return *head_;
}

void RunPattern::begin_segment(Index begin, Index end, Index period, Index src_stride,
                               Index dst_stride) {
  if (!last_.runs.empty()) { // the segment so far joins the head
    Head &h = head();
    h.segments.push_back({h.last_begin, h.last_end, 0, std::move(last_)});
  }
  last_ = Periodic{period, src_stride, dst_stride, 0, {}, {}};
  if (head_ != nullptr || begin != 0 || end != length_) {
    head().last_begin = begin;
    head_->last_end = end;
  }
}

void RunPattern::append(const Run &piece) {
  std::vector<Run> &runs = last_.runs;
  if (!runs.empty()) {
    Run &before = runs.back();
    if (before.k + before.length == piece.k &&
        before.src_local + before.length == piece.src_local &&
        before.dst_local + before.length == piece.dst_local) {
      before.length += piece.length;
      return;
    }
  }
  runs.push_back(piece);
}

inline Index RunPattern::count_periodic(const Periodic &p, Index x) {
  if (p.runs.empty()) {
    return 0;
  }
  const Index periods = x / p.period;
  const Index rest = x % p.period;
  // runs entirely below `rest`, then the one that straddles it
  const auto it = std::partition_point(p.runs.begin(), p.runs.end(),
                                       [rest](const Run &r) { return r.k + r.length <= rest; });
  const auto idx = static_cast<std::size_t>(it - p.runs.begin());
  Index count = periods * p.per_period + p.prefix[idx];
  if (it != p.runs.end() && it->k < rest) {
    count += rest - it->k;
  }
  return count;
}

void RunPattern::finish_periodic(Periodic &p) {
  p.runs.shrink_to_fit();
  p.prefix.assign(p.runs.size() + 1, 0);
  for (std::size_t idx = 0; idx < p.runs.size(); ++idx) {
    p.prefix[idx + 1] = p.prefix[idx] + p.runs[idx].length;
  }
  p.per_period = p.prefix.back();
}

void RunPattern::finish() {
  finish_periodic(last_);
  if (head_ == nullptr) {
    total_ = count_below(length_);
    return;
  }
  head_->segments.shrink_to_fit();
  for (Segment &s : head_->segments) {
    finish_periodic(s.periodic);
    s.total = count_periodic(s.periodic, s.end - s.begin);
  }
  total_ = count_below_segments(length_);
}

std::size_t RunPattern::memory_bytes() const {
  const auto held = [](const Periodic &p) {
    return p.runs.capacity() * sizeof(Run) + p.prefix.capacity() * sizeof(Index);
  };
  std::size_t bytes = held(last_);
  if (head_ != nullptr) {
    bytes += sizeof(Head) + head_->segments.capacity() * sizeof(Segment);
    for (const Segment &s : head_->segments) {
      bytes += held(s.periodic);
    }
  }
  return bytes;
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
  if (head_ != nullptr) {
    return count_below_segments(x);
  }
  if (x <= 0) {
    return 0;
  }
  return count_periodic(last_, std::min(x, length_));
}

Run RunPattern::visit_segments(Index lo, Index hi, const Visitor &f) const {
  Run pending;
  const auto visit = [&](const Periodic &p, Index begin, Index end) {
    const Index from = std::max(lo, begin);
    const Index to = std::min(hi, end);
    if (!p.runs.empty() && from < to) {
      pending = visit_periods(p, begin, from, to, pending, f);
    }
  };
  for (const Segment &s : head_->segments) {
    visit(s.periodic, s.begin, s.end);
  }
  visit(last_, head_->last_begin, head_->last_end);
  return pending;
}

Index RunPattern::count_below_segments(Index x) const {
  Index count = 0;
  for (const Segment &s : head_->segments) {
    if (x <= s.begin) {
      return count;
    }
    count += x >= s.end ? s.total : count_periodic(s.periodic, x - s.begin);
  }
  if (x <= head_->last_begin) {
    return count;
  }
  return count + count_periodic(last_, std::min(x, head_->last_end) - head_->last_begin);
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

// A window of a dimension over window indices [a, ...), seen as a window of a uniform
// block-cyclic dimension `dim` from global index `start`. A first block of another size than
// the others is made uniform by (block - first) virtual elements in front of it on its owner,
// whose local indices then differ by `shift` from the view's; where more than one block of
// the first block remains in the window, that part of the window is one process: `single`.
struct UniformView {
  BlockCyclic dim;
  Index start = 0;
  int single = -1;  ///< >= 0: dim is one process standing for this process
  int shifted = -1; ///< the process whose local indices are the view's plus shift
  Index shift = 0;

  [[nodiscard]] int process(int view_process) const { return single >= 0 ? single : view_process; }
  [[nodiscard]] Index local(int process, Index view_local) const {
    return process == shifted ? view_local + shift : view_local;
  }
};

// Window indices [0, result) lie in the first block with more than one block of it after them
// (there the view is a single process).
Index single_until(const BlockCyclic &d, Index start, Index length) {
  const Index rest = d.first() - start; // elements of the first block from the window on
  return d.nprocs > 1 && rest > d.block ? std::min(length, rest - d.block) : 0;
}

UniformView view_from(const BlockCyclic &d, Index start, Index a, Index single_end) {
  UniformView v;
  const Index g = start + a;
  if (a < single_end) {
    v.dim = BlockCyclic{d.first(), d.first(), 1, 0};
    v.start = g;
    v.single = d.src;
    return v;
  }
  if (d.nprocs == 1) {
    v.dim = BlockCyclic{d.extent, d.block, 1, 0};
    v.start = g;
    return v;
  }
  const Index lead = d.block - d.first(); // virtual elements in front, < 0 never here
  v.dim = BlockCyclic{std::max<Index>(0, d.extent + lead), d.block, d.nprocs, d.src};
  v.start = g + lead;
  v.shifted = d.src;
  v.shift = -lead;
  return v;
}

struct Segment1D {
  Index begin = 0;
  Index end = 0;
  PeriodInfo info;
};

struct SegmentPiece {
  int peer = 0;
  std::size_t segment = 0;
  Run run; ///< k from the segment's first window index
};

// The pieces of one period of each segment of the window between `proc` on one side and the
// processes of the other side, segment by segment, in increasing k within each.
std::vector<SegmentPiece> segment_pieces(const Transfer1D &t, int proc, bool as_source,
                                         std::vector<Segment1D> &segments) {
  const Index src_cut = single_until(t.src, t.src_start, t.length);
  const Index dst_cut = single_until(t.dst, t.dst_start, t.length);
  std::vector<Index> bounds{0, std::min(src_cut, dst_cut), std::max(src_cut, dst_cut), t.length};
  bounds.erase(std::unique(bounds.begin(), bounds.end()), bounds.end());
  std::vector<SegmentPiece> pieces;
  for (std::size_t i = 0; i + 1 < bounds.size(); ++i) {
    const Index a = bounds[i];
    const UniformView src = view_from(t.src, t.src_start, a, src_cut);
    const UniformView dst = view_from(t.dst, t.dst_start, a, dst_cut);
    const Transfer1D sub{src.dim, dst.dim, src.start, dst.start, bounds[i + 1] - a};
    const PeriodInfo info = period_info(sub);
    segments.push_back({a, bounds[i + 1], info});
    const UniformView &fixed = as_source ? src : dst;
    const UniformView &other = as_source ? dst : src;
    if (fixed.single >= 0 && fixed.single != proc) {
      continue;
    }
    const std::size_t segment = segments.size() - 1;
    enumerate_pieces(
        fixed.dim, fixed.start, other.dim, other.start, info.period, fixed.single >= 0 ? 0 : proc,
        [&](int view_peer, Index k, Index fixed_local, Index other_local, Index len) {
          const int peer = other.process(view_peer);
          const Index f = fixed.local(proc, fixed_local);
          const Index o = other.local(peer, other_local);
          pieces.push_back({peer, segment, as_source ? Run{k, len, f, o} : Run{k, len, o, f}});
        });
  }
  return pieces;
}

// Runs between `proc` on one side (the source when as_source) and the processes of the other
// side it exchanges data with: the pieces of one period gathered per peer (stable, so each
// peer's pieces stay in increasing k and merge into runs as they are appended).
std::vector<PeerRuns> runs_of_process(const Transfer1D &t, int proc, bool as_source) {
  std::vector<PeerRuns> result;
  if (t.length <= 0) {
    return result;
  }
  std::vector<Segment1D> segments;
  std::vector<SegmentPiece> pieces = segment_pieces(t, proc, as_source, segments);
  std::stable_sort(pieces.begin(), pieces.end(),
                   [](const SegmentPiece &a, const SegmentPiece &b) { return a.peer < b.peer; });
  std::size_t segment = 0;
  for (const SegmentPiece &piece : pieces) {
    const bool new_peer = result.empty() || result.back().peer != piece.peer;
    if (new_peer) {
      result.push_back({piece.peer, RunPattern(t.length, 1, 0, 0)});
    }
    if (new_peer || segment != piece.segment) {
      const Segment1D &s = segments[piece.segment];
      result.back().runs.begin_segment(s.begin, s.end, s.info.period, s.info.src_stride,
                                       s.info.dst_stride);
      segment = piece.segment;
    }
    result.back().runs.append(piece.run);
  }
  for (PeerRuns &r : result) {
    r.runs.finish();
  }
  result.shrink_to_fit();
  return result;
}

} // namespace

bool uniform_owners(const Transfer1D &t, Transfer1D &uniform) {
  // A window inside one block of the first block is a window inside the source's first block
  // of a uniform dimension; otherwise the view's virtual elements make it uniform.
  const auto side = [&](const BlockCyclic &d, Index start, BlockCyclic &dim, Index &from) {
    const Index rest = d.first() - start;
    if (d.nprocs > 1 && rest >= t.length && t.length <= d.block) {
      dim = BlockCyclic{d.block, d.block, d.nprocs, d.src};
      from = 0;
      return true;
    }
    if (single_until(d, start, t.length) > 0) {
      return false;
    }
    const UniformView v = view_from(d, start, 0, 0);
    dim = v.dim;
    from = v.start;
    return true;
  };
  uniform.length = t.length;
  return side(t.src, t.src_start, uniform.src, uniform.src_start) &&
         side(t.dst, t.dst_start, uniform.dst, uniform.dst_start);
}

namespace {

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
