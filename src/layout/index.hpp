#pragma once
// Layout layer: what moves between one source and one destination process along one dimension.
//
// The owner/local-index pattern of a window copy repeats with period
// lcm(P*r, Q*s) in the window index (Desprez et al. 1998, Sec. 2; the "basic cycle" of
// Chung, Hsu & Bai). A RunPattern stores the runs of one period for one (source, destination)
// pair plus the per-period strides of the local indices, so memory and time do not grow with
// the extent. A run is a maximal interval of window indices that is contiguous in both local
// arrays.
//
// A first block of its own size (PBLAS's IMB_ / INB_) is made uniform for the period engine:
// (block - first) virtual elements in front of it on its owner give a uniform dimension whose
// local indices on that process are shifted; where the window holds more than one block's worth
// of the first block, that part of the window is one process. A pattern is then up to three
// segments of window indices, each with its own period (index.cpp's UniformView).

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
/// A pattern is one or more segments of consecutive window indices, each with its own period
/// and strides: one segment for uniform block-cyclic dimensions; a first block larger than a
/// block (PBLAS's IMB_ > MB_) adds one in front, where that side is one process.
class RunPattern {
public:
  RunPattern() = default;
  RunPattern(Index window_length, Index period, Index src_stride, Index dst_stride);

  /// Window indices [begin, end) (after the pieces appended so far): pieces appended next
  /// repeat there with `period` and these strides. Without it one segment covers the window
  /// with the constructor's period and strides.
  void begin_segment(Index begin, Index end, Index period, Index src_stride, Index dst_stride);
  /// Append a piece of the current segment's first period, k counted from the segment's first
  /// window index, in increasing k; merged with the previous run when contiguous.
  void append(const Run &piece);
  /// Call when all pieces of the period are appended.
  void finish();

  [[nodiscard]] bool empty() const { return total_ == 0; }
  /// Elements in the whole window.
  [[nodiscard]] Index total() const { return total_; }
  /// Elements with window index < x (0 <= x <= window length).
  [[nodiscard]] Index count_below(Index x) const;
  /// Window index of the element with `c` elements below it (0 <= c < total()).
  [[nodiscard]] Index index_of(Index c) const;
  /// The last segment's runs of one period (window indices from head_length()), its period
  /// and strides; the window indices before head_length() are the other segments'.
  [[nodiscard]] const std::vector<Run> &period_runs() const { return last().runs; }
  [[nodiscard]] Index period() const { return last().period; }
  [[nodiscard]] Index src_stride() const { return last().src_stride; }
  [[nodiscard]] Index dst_stride() const { return last().dst_stride; }
  [[nodiscard]] Index head_length() const { return last().begin; }
  /// Window index after the last segment: no runs from there on.
  [[nodiscard]] Index segments_end() const { return last().end; }
  [[nodiscard]] Index window_length() const { return length_; }

  /// Visit, in increasing k, the runs clipped to window indices [lo, hi); runs that are
  /// contiguous across a period or segment boundary are merged before f sees them. f(const
  /// Run&).
  template <class F> void for_each(Index lo, Index hi, F &&f) const;
  template <class F> void for_each(F &&f) const { for_each(0, length_, f); }

  /// Bytes of memory held (for the scaling checks).
  [[nodiscard]] std::size_t memory_bytes() const;

private:
  // Window indices [begin, end): runs_ of one period (k from begin) repeated every `period`.
  struct Segment {
    Index begin = 0;
    Index end = 0;
    Index period = 1;
    Index src_stride = 0;
    Index dst_stride = 0;
    Index per_period = 0;
    Index total = 0;
    std::vector<Run> runs;
    std::vector<Index> prefix; // prefix[i] = elements in runs[0..i)
  };
  [[nodiscard]] const Segment &last() const { return later_.empty() ? first_ : later_.back(); }
  [[nodiscard]] Segment &last() { return later_.empty() ? first_ : later_.back(); }
  [[nodiscard]] static Index count_in(const Segment &s, Index x);
  template <class F>
  static void visit_segment(const Segment &s, Index lo, Index hi, Run &pending, F &f);

  Index length_ = 0;
  Index total_ = 0;
  Segment first_;              // kept inline: uniform layouts have this one segment only
  std::vector<Segment> later_; // after a first block's single-process part
};

/// The period (in window indices) over which runs are stored for this transfer, and the
/// advance of source and destination local indices per period.
struct PeriodInfo {
  Index period = 1;
  Index src_stride = 0;
  Index dst_stride = 0;
};
PeriodInfo period_info(const Transfer1D &t);

/// A transfer of uniform dimensions (BlockCyclic::uniform) with the same owners at every window
/// index as t, when there is one: when neither window holds more than a block's worth of its
/// side's first block (always so for first blocks no larger than the others). Computations on
/// owners alone written for uniform dimensions (closed-form schedules) take it; its local
/// indices are not t's.
[[nodiscard]] bool uniform_owners(const Transfer1D &t, Transfer1D &uniform);

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

template <class F>
void RunPattern::visit_segment(const Segment &s, Index lo, Index hi, Run &pending, F &f) {
  hi = std::min(hi, s.end) - s.begin;
  lo = std::max(lo, s.begin) - s.begin;
  if (s.runs.empty() || lo >= hi) {
    return;
  }
  const Index first_period = lo / s.period;
  for (Index t = first_period; t * s.period < hi; ++t) {
    const Index base = t * s.period;
    auto it = s.runs.begin();
    if (t == first_period) {
      const Index offset = lo - base; // skip runs ending at or before lo
      it = std::partition_point(s.runs.begin(), s.runs.end(),
                                [offset](const Run &r) { return r.k + r.length <= offset; });
    }
    for (; it != s.runs.end(); ++it) {
      const Index k0 = it->k + base;
      if (k0 >= hi) {
        break;
      }
      const Index start = std::max(k0, lo);
      const Index len = std::min(k0 + it->length, hi) - start;
      const Index skip = start - k0;
      const Run r{start + s.begin, len, it->src_local + t * s.src_stride + skip,
                  it->dst_local + t * s.dst_stride + skip};
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
}

template <class F> void RunPattern::for_each(Index lo, Index hi, F &&f) const {
  hi = std::min(hi, length_);
  lo = std::max(lo, Index{0});
  if (total_ == 0 || lo >= hi) {
    return;
  }
  Run pending;
  visit_segment(first_, lo, hi, pending, f);
  for (const Segment &s : later_) {
    visit_segment(s, lo, hi, pending, f);
  }
  if (pending.length > 0) {
    f(pending);
  }
}

} // namespace redist
