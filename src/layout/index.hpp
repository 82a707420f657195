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

#include <algorithm>
#include <memory>
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
/// and strides: one segment over the whole window for uniform block-cyclic dimensions (and
/// first blocks no larger than a block), held inline as one period's runs and nothing else; a
/// first block larger than a block (PBLAS's IMB_ > MB_) adds one in front, where that side is
/// one process. The segments before the last, and the last's window indices when it does not
/// span the window, are kept apart (Head), so that walks and counts of one-segment patterns run
/// as they do without segments.
class RunPattern {
public:
  RunPattern() = default;
  RunPattern(Index window_length, Index period, Index src_stride, Index dst_stride);
  RunPattern(const RunPattern &other);
  RunPattern(RunPattern &&other) noexcept = default;
  RunPattern &operator=(const RunPattern &other);
  RunPattern &operator=(RunPattern &&other) noexcept = default;
  ~RunPattern() = default;

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
  [[nodiscard]] const std::vector<Run> &period_runs() const { return last_.runs; }
  [[nodiscard]] Index period() const { return last_.period; }
  /// Advance of the source / destination local indices from one period to the next.
  [[nodiscard]] Index src_stride() const { return last_.src_stride; }
  [[nodiscard]] Index dst_stride() const { return last_.dst_stride; }
  [[nodiscard]] Index head_length() const { return head_ ? head_->last_begin : 0; }
  /// Window index after the last segment: no runs from there on.
  [[nodiscard]] Index segments_end() const { return head_ ? head_->last_end : length_; }
  [[nodiscard]] Index window_length() const { return length_; }

  /// Visit, in increasing k, the runs clipped to window indices [lo, hi); runs that are
  /// contiguous across a period or segment boundary are merged before f sees them. f(const
  /// Run&).
  template <class F> void for_each(Index lo, Index hi, F &&f) const;
  template <class F> void for_each(F &&f) const { for_each(0, length_, f); }

  /// Bytes of memory held (for the scaling checks).
  [[nodiscard]] std::size_t memory_bytes() const;

private:
  // The runs of one period, repeated every `period` window indices from the segment's first.
  struct Periodic {
    Index period = 1;
    Index src_stride = 0;
    Index dst_stride = 0;
    Index per_period = 0;
    std::vector<Run> runs;
    std::vector<Index> prefix; // prefix[i] = elements in runs[0..i)
  };
  // A segment before the last: window indices [begin, end).
  struct Segment {
    Index begin = 0;
    Index end = 0;
    Index total = 0;
    Periodic periodic;
  };
  // What a pattern of more than one segment, or of one not spanning the window, adds.
  struct Head {
    std::vector<Segment> segments; // before the last, in window order
    Index last_begin = 0;          // the last segment's window indices
    Index last_end = 0;
  };

  Head &head();
  static void finish_periodic(Periodic &p);
  /// Elements of p's repetition with index < x, x > 0 counted from its first index. Inlined
  /// (like visit_periods) so that one-segment patterns count and walk without a further call.
  [[nodiscard, gnu::always_inline]] static Index count_periodic(const Periodic &p, Index x);
  [[nodiscard]] Index count_below_segments(Index x) const;
  /// p's runs repeated from window index `begin`, clipped to [lo, hi) (both >= begin), merged
  /// after `pending`; f sees each run that the next one does not continue. Returns the run
  /// still pending (a value, so that the walk keeps it in registers).
  template <class F>
  [[nodiscard, gnu::always_inline]] static Run visit_periods(const Periodic &p, Index begin,
                                                             Index lo, Index hi, Run pending, F &f);
  /// A visitor of runs without its type, for the walk of patterns with a head: compiled once
  /// in index.cpp, not for every visitor beside the one-segment walk it would crowd.
  class Visitor {
  public:
    template <class F>
    explicit Visitor(F &f)
        : context_(const_cast<void *>(static_cast<const void *>(std::addressof(f)))),
          call_([](void *context, const Run &run) { (*static_cast<F *>(context))(run); }) {}
    void operator()(const Run &run) const { call_(context_, run); }

  private:
    void *context_;
    void (*call_)(void *context, const Run &run);
  };
  /// for_each's walk of a pattern with a head.
  [[nodiscard]] Run visit_segments(Index lo, Index hi, const Visitor &f) const;

  Index length_ = 0;
  Index total_ = 0;
  Periodic last_;              // the only segment of a uniform dimension's pattern
  std::unique_ptr<Head> head_; // null: last_ spans the window
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
inline Run RunPattern::visit_periods(const Periodic &p, Index begin, Index lo, Index hi,
                                     Run pending, F &f) {
  lo -= begin;
  hi -= begin;
  const Index first_period = lo / p.period;
  for (Index t = first_period; t * p.period < hi; ++t) {
    const Index base = t * p.period;
    auto it = p.runs.begin();
    if (t == first_period) {
      const Index offset = lo - base; // skip runs ending at or before lo
      it = std::partition_point(p.runs.begin(), p.runs.end(),
                                [offset](const Run &r) { return r.k + r.length <= offset; });
    }
    for (; it != p.runs.end(); ++it) {
      const Index k0 = it->k + base;
      if (k0 >= hi) {
        break;
      }
      const Index start = std::max(k0, lo);
      const Index len = std::min(k0 + it->length, hi) - start;
      const Index skip = start - k0;
      const Run r{start + begin, len, it->src_local + t * p.src_stride + skip,
                  it->dst_local + t * p.dst_stride + skip};
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
  return pending;
}

template <class F> void RunPattern::for_each(Index lo, Index hi, F &&f) const {
  hi = std::min(hi, length_);
  lo = std::max(lo, Index{0});
  if (total_ == 0 || lo >= hi) {
    return;
  }
  const Run pending = head_ == nullptr ? visit_periods(last_, 0, lo, hi, Run{}, f)
                                       : visit_segments(lo, hi, Visitor(f));
  if (pending.length > 0) {
    f(pending);
  }
}

} // namespace redist
