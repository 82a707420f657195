#pragma once
// Layout layer: what moves between one source and one destination process along one dimension.
//
// The owner/local-index pattern of a window copy repeats with period
// lcm(P*r, Q*s) in the window index (Desprez et al. 1998, Sec. 2; the "basic cycle" of
// Chung, Hsu & Bai). A RunPattern stores the runs of one period for one (source, destination)
// pair plus the per-period strides of the local indices, so memory and time do not grow with
// the extent. A run is a maximal interval of window indices that is contiguous in both local
// arrays.

#include "layout.hpp"

#include <vector>

namespace redist {

/// k .. k+length-1 in window indices, stored at src_local.. and dst_local.. locally.
struct Run {
  Index k = 0;
  Index length = 0;
  Index src_local = 0;
  Index dst_local = 0;
};

/// One dimension of a window copy: `length` elements, from global index src_start of `src`
/// to global index dst_start of `dst`.
struct Transfer1D {
  BlockCyclic src;
  BlockCyclic dst;
  Index src_start = 0;
  Index dst_start = 0;
  Index length = 0;
};

/// The runs between one source process and one destination process, one period stored.
class RunPattern {
public:
  RunPattern() = default;
  RunPattern(Index window_length, Index period, Index src_stride, Index dst_stride);

  /// Append a piece (in increasing k); merged with the previous run when contiguous.
  void append(const Run &piece);
  /// Call when all pieces of the period are appended.
  void finish();

  [[nodiscard]] bool empty() const { return runs_.empty(); }
  /// Elements in the whole window.
  [[nodiscard]] Index total() const { return total_; }
  /// Elements with window index < x (0 <= x <= window length).
  [[nodiscard]] Index count_below(Index x) const;
  /// Window index of the element with `c` elements below it (0 <= c < total()).
  [[nodiscard]] Index index_of(Index c) const;
  [[nodiscard]] const std::vector<Run> &period_runs() const { return runs_; }
  [[nodiscard]] Index period() const { return period_; }
  /// Advance of the source / destination local indices from one period to the next.
  [[nodiscard]] Index src_stride() const { return src_stride_; }
  [[nodiscard]] Index dst_stride() const { return dst_stride_; }
  [[nodiscard]] Index window_length() const { return length_; }

  /// Visit, in increasing k, the runs clipped to window indices [lo, hi); runs that are
  /// contiguous across a period boundary are merged before f sees them. f(const Run&).
  template <class F> void for_each(Index lo, Index hi, F &&f) const;
  template <class F> void for_each(F &&f) const { for_each(0, length_, f); }

  /// Bytes of memory held (for the scaling checks).
  [[nodiscard]] std::size_t memory_bytes() const {
    return runs_.capacity() * sizeof(Run) + prefix_.capacity() * sizeof(Index);
  }

private:
  Index length_ = 0;
  Index period_ = 1;
  Index src_stride_ = 0;
  Index dst_stride_ = 0;
  Index per_period_ = 0;
  Index total_ = 0;
  std::vector<Run> runs_;
  std::vector<Index> prefix_; // prefix_[i] = elements in runs_[0..i)
};

/// The period (in window indices) over which runs are stored for this transfer, and the
/// advance of source and destination local indices per period.
struct PeriodInfo {
  Index period = 1;
  Index src_stride = 0;
  Index dst_stride = 0;
};
PeriodInfo period_info(const Transfer1D &t);

/// The runs between one process and one process of the other side.
struct PeerRuns {
  int peer = 0;
  RunPattern runs;
};

/// Runs from source process p to the destination processes it sends to, by increasing peer;
/// peers without data are absent. Time and memory grow with the pieces of one period of p, not
/// with the number of destination processes.
std::vector<PeerRuns> peer_runs_from_source(const Transfer1D &t, int p);
/// Runs to destination process q from the source processes that send to it, by increasing peer.
std::vector<PeerRuns> peer_runs_to_destination(const Transfer1D &t, int q);

/// Runs from source process p to every destination process: result[q], q < dst.nprocs (empty
/// patterns for the peers without data).
std::vector<RunPattern> runs_from_source(const Transfer1D &t, int p);
/// Runs from every source process to destination process q: result[p], p < src.nprocs.
std::vector<RunPattern> runs_to_destination(const Transfer1D &t, int q);

template <class F> void RunPattern::for_each(Index lo, Index hi, F &&f) const {
  hi = std::min(hi, length_);
  lo = std::max(lo, Index{0});
  if (runs_.empty() || lo >= hi) {
    return;
  }
  Run pending;
  const Index first_period = lo / period_;
  for (Index t = first_period; t * period_ < hi; ++t) {
    const Index base = t * period_;
    auto it = runs_.begin();
    if (t == first_period) {
      const Index offset = lo - base; // skip runs ending at or before lo
      it = std::partition_point(runs_.begin(), runs_.end(),
                                [offset](const Run &r) { return r.k + r.length <= offset; });
    }
    for (; it != runs_.end(); ++it) {
      const Index k0 = it->k + base;
      if (k0 >= hi) {
        break;
      }
      const Index start = std::max(k0, lo);
      const Index len = std::min(k0 + it->length, hi) - start;
      const Index skip = start - k0;
      const Run r{start, len, it->src_local + t * src_stride_ + skip,
                  it->dst_local + t * dst_stride_ + skip};
      if (pending.length > 0 && pending.k + pending.length == r.k &&
          pending.src_local + pending.length == r.src_local &&
          pending.dst_local + pending.length == r.dst_local) {
        pending.length += r.length;
      } else {
        if (pending.length > 0) {
          f(pending);
        }
        pending = r;
      }
    }
  }
  if (pending.length > 0) {
    f(pending);
  }
}

} // namespace redist
