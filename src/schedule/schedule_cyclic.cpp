#include "schedule_cyclic.hpp"

#include <algorithm>
#include <cstddef>
#include <limits>
#include <numeric>
#include <utility>

namespace redist {
namespace {

Index ceil_div(Index a, Index b) {
  return (a + b - 1) / b;
}

// lcm(a, b), or nullopt when it does not fit in an Index.
std::optional<Index> checked_lcm(Index a, Index b) {
  const Index a_over_g = a / std::gcd(a, b);
  if (a_over_g > std::numeric_limits<Index>::max() / b) {
    return std::nullopt;
  }
  return a_over_g * b;
}

// A side with one process owns everything whatever its block size.
Index effective_block(const BlockCyclic &d) {
  return d.nprocs == 1 ? 1 : d.block;
}

// The transfer as the aligned pattern (window index k on source process (k / r) mod P and
// destination process (k / s) mod Q) with the processes relabelled by a shift.
struct Aligned {
  Index r = 1;
  Index s = 1;
  Index P = 1;
  Index Q = 1;
  Index src_shift = 0;
  Index dst_shift = 0;
  Index length = 0;

  [[nodiscard]] int src_of(Index p) const { return static_cast<int>((p + src_shift) % P); }
  [[nodiscard]] int dst_of(Index q) const { return static_cast<int>((q + dst_shift) % Q); }
  /// Whole periods of lcm(P r, Q s) in the window, or nullopt when the window is not made of
  /// whole periods.
  [[nodiscard]] std::optional<Index> whole_periods() const {
    const std::optional<Index> period = checked_lcm(P * r, Q * s);
    if (!period || length % *period != 0) {
      return std::nullopt;
    }
    return length / *period;
  }
};

std::optional<Aligned> aligned(const Transfer1D &t) {
  Aligned a;
  a.P = t.src.nprocs;
  a.Q = t.dst.nprocs;
  a.r = effective_block(t.src);
  a.s = effective_block(t.dst);
  a.length = t.length;
  if (t.src_start % a.r != 0 || t.dst_start % a.s != 0) {
    return std::nullopt;
  }
  a.src_shift = (t.src.src + t.src_start / a.r) % a.P;
  a.dst_shift = (t.dst.src + t.dst_start / a.s) % a.Q;
  return a;
}

Transfer1D swapped(const Transfer1D &t) {
  return {t.dst, t.src, t.dst_start, t.src_start, t.length};
}

void transpose(Schedule &schedule) {
  for (Step &step : schedule.steps) {
    for (Piece &p : step.pieces) {
      std::swap(p.src, p.dst);
    }
  }
}

// Collects the pairs of a fixed number of steps, fetching volumes from the graph (pairs without
// data dropped, empty steps removed at the end). Callers add pairs sender by sender, so each
// lookup searches only that sender's messages, which stay in cache.
class StepTable {
public:
  StepTable(const VolumeGraph &graph, Index steps)
      : graph_(graph), first_(static_cast<std::size_t>(graph.senders) + 1, 0),
        steps_(static_cast<std::size_t>(steps)) {
    for (const Message &m : graph.messages) {
      ++first_[static_cast<std::size_t>(m.src) + 1];
    }
    std::partial_sum(first_.begin(), first_.end(), first_.begin());
  }
  [[nodiscard]] bool sends(int src) const {
    return first_[static_cast<std::size_t>(src)] != first_[static_cast<std::size_t>(src) + 1];
  }
  void add(Index step, int src, int dst) {
    const auto begin = graph_.messages.begin() + first_[static_cast<std::size_t>(src)];
    const auto end = graph_.messages.begin() + first_[static_cast<std::size_t>(src) + 1];
    const auto it =
        std::lower_bound(begin, end, dst, [](const Message &m, int d) { return m.dst < d; });
    if (it != end && it->dst == dst) {
      steps_[static_cast<std::size_t>(step)].pieces.push_back({src, dst, 0, it->volume});
    }
  }
  Schedule finish() {
    std::erase_if(steps_, [](const Step &s) { return s.pieces.empty(); });
    return Schedule{std::move(steps_)};
  }

private:
  const VolumeGraph &graph_;
  std::vector<std::ptrdiff_t> first_; // messages of sender p: [first_[p], first_[p + 1])
  std::vector<Step> steps_;
};

// Elements of window [0, length) in blocks b0, b0 + stride, b0 + 2 stride, ... of `block`
// elements each.
Index blocks_volume(Index b0, Index stride, Index block, Index length) {
  const Index full = length / block;
  const Index part = length % block;
  Index v = b0 < full ? ((full - 1 - b0) / stride + 1) * block : 0;
  if (part > 0 && full >= b0 && (full - b0) % stride == 0) {
    v += part;
  }
  return v;
}

ScheduleStats matching_stats(Index steps, Index pieces, Index elements, Index sum_step_max,
                             Index largest, const CostModel &model, std::size_t element_bytes) {
  ScheduleStats st;
  st.steps = steps;
  st.pieces = pieces;
  st.elements = elements;
  st.sum_step_max = sum_step_max;
  st.largest_piece = largest;
  st.max_node_pieces = steps > 0 ? 1 : 0;
  st.seconds = static_cast<double>(steps) * (model.alpha + model.step_setup) +
               model.beta * static_cast<double>(element_bytes) * static_cast<double>(sum_step_max);
  return st;
}

// --- Desprez et al. 1998, Sec. 4 ---

struct ClassParams {
  Index D = 1;  // gcd(r, s) (Lemma 1)
  Index r1 = 1; // r / D
  Index s1 = 1; // s / D
  Index g = 1;  // gcd(P, Q) = gcd(P r1, Q s1) under the condition of Prop. 3
};

std::optional<ClassParams> class_params(const Aligned &a) {
  ClassParams c;
  c.D = std::gcd(a.r, a.s);
  c.r1 = a.r / c.D;
  c.s1 = a.s / c.D;
  if (std::gcd(c.r1, a.Q) != 1 || std::gcd(c.s1, a.P) != 1) {
    return std::nullopt;
  }
  c.g = std::gcd(a.P, a.Q);
  return c;
}

// Classes f(p, q) = (p r1 - q s1) mod g that communicate: z mod g for z in [1 - r1, s1 - 1]
// (Lemma 2), each once; all g classes when g < r1 + s1 - 1 (Desprez et al. 1998, Sec. 4.3.2,
// regrouped).
std::vector<Index> communicating_classes(const ClassParams &c) {
  std::vector<Index> classes;
  const Index span = c.r1 + c.s1 - 1;
  std::vector<char> seen(static_cast<std::size_t>(std::min(c.g, span)), 0);
  for (Index z = 1 - c.r1; z <= c.s1 - 1; ++z) {
    const Index k = floor_mod(z, c.g);
    if (c.g >= span) {
      classes.push_back(k);
    } else if (seen[static_cast<std::size_t>(k)] == 0) {
      seen[static_cast<std::size_t>(k)] = 1;
      classes.push_back(k);
    }
  }
  return classes;
}

// Per-period message length in class k of the reduced problem: the sum of
// vol(z) = min(r1, s1, r1 + z, s1 - z) over z in [1 - r1, s1 - 1], z = k mod g (Prop. 2).
Index class_volume(const ClassParams &c, Index k) {
  Index v = 0;
  for (Index z = 1 - c.r1; z <= c.s1 - 1; ++z) {
    if (floor_mod(z, c.g) == k) {
      v += std::min({c.r1, c.s1, c.r1 + z, c.s1 - z});
    }
  }
  return v;
}

// --- Park, Prasanna & Raghavendra 1999 (Evers 2025 review, Sec. 4.2.6) ---

struct CirculantParams {
  Index k = 1;
  Index G1 = 1;
  Index P1 = 1;
  Index k1 = 1;
  Index G2 = 1;
  Index Q1 = 1;
  Index n = 0; // n k1 - m P1 = 1 (Evers 2025 review, Eq. 4.24)
  Index rows = 0;
};

CirculantParams circulant_params(const Aligned &a) {
  CirculantParams c;
  c.k = a.s / a.r;
  c.G1 = std::gcd(a.P, c.k);
  c.P1 = a.P / c.G1;
  c.k1 = c.k / c.G1;
  c.G2 = std::gcd(c.P1, a.Q);
  c.Q1 = a.Q / c.G2;
  c.n = mod_inverse(c.k1, c.P1);
  // G2 > k1: not all-to-all, lcm(P, kQ)/P = k1 Q1 rows; else fold block rows i1 >= G2 onto
  // i1 mod G2: Q rows.
  c.rows = std::min(c.k1, c.G2) * c.Q1;
  return c;
}

bool circulant_forward_applies(const Aligned &a) {
  return a.s % a.r == 0 && a.P <= a.Q;
}

// One-divides-the-other with a closed form: Walker & Otto on equal process counts, Park et al.
// with the smaller block on no more processes.
bool closed_form_shape(Index block1, Index procs1, Index block2, Index procs2) {
  if (procs1 == procs2) {
    return block1 % block2 == 0 || block2 % block1 == 0;
  }
  return (block2 % block1 == 0 && procs1 <= procs2) || (block1 % block2 == 0 && procs2 <= procs1);
}

} // namespace

CyclicCounts cyclic_counts(Index r, Index s, Index P, Index Q) {
  const Index D = std::gcd(r, s);
  r /= D;
  s /= D;
  CyclicCounts c;
  const Index g = std::gcd(P * r, Q * s);
  c.all_to_all = g <= r + s - 1;
  if (c.all_to_all) {
    c.m_r = Q;
    c.m_c = P;
  } else {
    // Prop. 5 with Lemma 3: s' = gcd(s, P), r' = gcd(r, Q), P' = P/s', Q' = Q/r', g0 =
    // gcd(P', Q').
    const Index s_p = std::gcd(s, P);
    const Index r_p = std::gcd(r, Q);
    const Index g0 = std::gcd(P / s_p, Q / r_p);
    c.m_r = (Q / r_p / g0) * ceil_div(r + s - 1, s_p);
    c.m_c = (P / s_p / g0) * ceil_div(r + s - 1, r_p);
  }
  c.steps_optimal = std::max(c.m_r, c.m_c);
  return c;
}

CyclicCounts cyclic_counts(const Transfer1D &t) {
  return cyclic_counts(effective_block(t.src), effective_block(t.dst), t.src.nprocs, t.dst.nprocs);
}

namespace {

// The volumes one source process sends to each destination process, from one sweep over its
// blocks in at most one period L = lcm(P r, Q s) of the window: O(L / (P r) + L / (Q s)) per
// process, O(Q) memory.
class SenderSweep {
public:
  explicit SenderSweep(const Transfer1D &t)
      : t_(t), acc_(static_cast<std::size_t>(t.dst.nprocs), 0), sweep_(t.length), rest_(t.length) {
    const Index P = t.src.nprocs;
    const Index Q = t.dst.nprocs;
    // The owner pattern in window indices repeats every lcm(P r, Q s) (1 for a single process).
    const std::optional<Index> period =
        checked_lcm(P == 1 ? 1 : P * t.src.block, Q == 1 ? 1 : Q * t.dst.block);
    if (period && *period <= t.length) {
      sweep_ = *period;
      whole_ = t.length / *period;
      rest_ = t.length % *period;
    }
  }

  /// Adds the volumes of source process p; every destination is left at 0 by clear().
  void run(Index p) {
    if (t_.length <= 0) {
      return;
    }
    const Index P = t_.src.nprocs;
    const Index rb = t_.src.block;
    if (P == 1) {
      visit(0, sweep_);
      return;
    }
    const Index first = t_.src_start / rb;
    for (Index b = first + floor_mod(p - t_.src.src - first, P); b * rb < t_.src_start + sweep_;
         b += P) {
      visit(std::max(b * rb, t_.src_start) - t_.src_start,
            std::min((b + 1) * rb, t_.src_start + sweep_) - t_.src_start);
    }
  }
  [[nodiscard]] Index volume(int q) const { return acc_[static_cast<std::size_t>(q)]; }
  /// The destinations with data since the last clear(), in no particular order.
  [[nodiscard]] std::vector<int> &touched() { return touched_; }
  void clear() {
    for (const int q : touched_) {
      acc_[static_cast<std::size_t>(q)] = 0;
    }
    touched_.clear();
  }

private:
  // Window indices [lo, hi) of the current sender, split at destination block boundaries.
  void visit(Index lo, Index hi) {
    const Index Q = t_.dst.nprocs;
    const Index sb = t_.dst.block;
    Index k = lo;
    while (k < hi) {
      Index q = 0;
      Index end = hi;
      if (Q > 1) {
        const Index gd = t_.dst_start + k;
        q = (gd / sb + t_.dst.src) % Q;
        end = std::min(hi, (gd / sb + 1) * sb - t_.dst_start);
      }
      Index &slot = acc_[static_cast<std::size_t>(q)];
      if (slot == 0) {
        touched_.push_back(static_cast<int>(q));
      }
      // The piece's elements in each whole period plus in the rest.
      slot += whole_ * (end - k) + std::max(Index{0}, std::min(end, rest_) - k);
      k = end;
    }
  }

  Transfer1D t_;
  std::vector<Index> acc_;
  std::vector<int> touched_;
  Index sweep_ = 0;
  Index whole_ = 0;
  Index rest_ = 0;
};

} // namespace

VolumeGraph volume_graph(const Transfer1D &t) {
  VolumeGraph graph;
  graph.senders = t.src.nprocs;
  graph.receivers = t.dst.nprocs;
  if (t.length <= 0) {
    return graph;
  }
  SenderSweep sweep(t);
  for (int p = 0; p < t.src.nprocs; ++p) {
    sweep.run(p);
    std::vector<int> &touched = sweep.touched();
    const auto emit = [&](int q) {
      if (const Index v = sweep.volume(q); v > 0) {
        graph.messages.push_back({p, q, v});
      }
    };
    if (static_cast<Index>(touched.size()) * 16 >= t.dst.nprocs) { // dense: scan, don't sort
      for (int q = 0; q < t.dst.nprocs; ++q) {
        emit(q);
      }
    } else {
      std::sort(touched.begin(), touched.end());
      std::for_each(touched.begin(), touched.end(), emit);
    }
    sweep.clear();
  }
  return graph;
}

// The formulas of the three closed forms on the aligned pattern of `built` (the transfer, or
// its swap when the form schedules the transposed problem): which receiver each sender has in
// each step. Schedules, step sizes and one process's partners are all read from
// for_each_target().
struct ClosedFormSchedule::Impl {
  ClosedFormKind kind = ClosedFormKind::class_based;
  Transfer1D built;
  bool transposed = false;
  Aligned a;
  Index steps = 0;
  // Desprez et al.: classes in schedule order, each in M = max(A, B) steps.
  ClassParams cls;
  std::vector<Index> classes;
  Index s1_inv = 0;
  Index A = 1;
  Index B = 1;
  Index M = 1;
  // Walker & Otto: CYCLIC(x) -> CYCLIC(k x), x = a.r.
  Index k = 1;
  Index g = 1;
  Index k1 = 1;
  Index P1 = 1;
  Index k1_inv = 0;
  // Park et al.
  CirculantParams circ;

  // f(step, receiver, block) for each formula step in which aligned sender p is busy, in step
  // order: receiver aligned, block the Walker & Otto block sent (-1 for the other forms). The
  // per-sender quantities are computed once, the per-step ones incrementally.
  template <class F> void for_each_target(Index p, F &&f) const {
    switch (kind) {
    case ClosedFormKind::class_based: {
      // Desprez et al. 1998, Sec. 4.3.2: in class k, sender p = a g + p1 sends to every
      // receiver q = b g + q1 with q1 = s1^-1 (p1 r1 - k) mod g; the g complete bipartite
      // blocks (P/g senders x Q/g receivers) are disjoint; step t pairs a with
      // b = (a + t) mod max(P,Q)/g.
      const Index p1_r1 = (p % cls.g) * cls.r1;
      for (std::size_t ci = 0; ci < classes.size(); ++ci) {
        const Index q1 = floor_mod(s1_inv * floor_mod(p1_r1 - classes[ci], cls.g), cls.g);
        const Index first = static_cast<Index>(ci) * M;
        Index b = p / cls.g;
        for (Index t = 0; t < M; ++t) {
          if (b < B) {
            f(first + t, b * cls.g + q1, Index{-1});
          }
          if (++b == M) {
            b = 0;
          }
        }
      }
      break;
    }
    case ClosedFormKind::walker_otto: {
      // Walker & Otto 1996 (Evers 2025 review, Sec. 4.2.3). Reduced system (Eq. 4.17): with
      // g = gcd(k, P), k1 = k/g, P1 = P/g, process p1 sends in step n1 its block
      // B1 = p1 mod P1, B1 = n1 mod k1 (unique by the Chinese remainder theorem, the diagonal
      // fill of Table 4.7). Expansion (Eq. 4.19): B = g B1 + P k1 beta + alpha with
      // alpha = p mod g, beta = (alpha - n) mod g, p1 = p / g, n1 = n / g (Tables 4.9, 4.10).
      const Index alpha = p % g;
      const Index p1 = p / g;
      Index n = 0;
      for (Index n1 = 0; n < k; ++n1) {
        const Index b1 = n1 + k1 * floor_mod(k1_inv * floor_mod(p1 - n1, P1), P1);
        for (Index n0 = 0; n0 < g; ++n0, ++n) {
          const Index beta = alpha >= n0 ? alpha - n0 : alpha - n0 + g;
          const Index block = g * b1 + a.P * k1 * beta + alpha;
          f(n, block / k, block);
        }
      }
      break;
    }
    case ClosedFormKind::circulant: {
      // Park, Prasanna & Raghavendra 1999 (Evers 2025 review, Sec. 4.2.6, Eq. 4.23, sign corrected
      // as in docs/references.md): step
      // i = i1 Q1 + i2 sends from j = j1 G1 + j2 to
      // (n (j1 - i1) mod P1 + ((j2 - i2) mod Q1) P1) mod Q.
      const CirculantParams &c = circ;
      const Index j1 = p / c.G1;
      const Index j2 = p % c.G1;
      for (Index i1 = 0; i1 * c.Q1 < steps; ++i1) {
        const Index x = floor_mod(c.n * floor_mod(j1 - i1, c.P1), c.P1);
        Index y = floor_mod(j2, c.Q1);
        for (Index i2 = 0; i2 < c.Q1; ++i2) {
          f(i1 * c.Q1 + i2, (x + y * c.P1) % a.Q, Index{-1});
          y = y == 0 ? c.Q1 - 1 : y - 1;
        }
      }
      break;
    }
    }
  }

  // Elements of a Walker & Otto piece: its block in every superblock of k P blocks.
  [[nodiscard]] Index block_volume(Index block) const {
    return blocks_volume(block, k * a.P, a.r, a.length);
  }

  // Each formula step's size for a window of whole periods (`periods` of them), from the
  // papers' message lengths: one class per step (Prop. 4), one block per Walker & Otto step,
  // and for Park et al. the block rows i1 + j G2 < k1 folded into step row i1.
  [[nodiscard]] std::vector<StepSize> whole_period_sizes(Index periods) const {
    std::vector<StepSize> sizes(static_cast<std::size_t>(steps));
    if (periods == 0) {
      return sizes;
    }
    for (Index i = 0; i < steps; ++i) {
      StepSize &size = sizes[static_cast<std::size_t>(i)];
      switch (kind) {
      case ClosedFormKind::class_based:
        size = {periods * cls.D * class_volume(cls, classes[static_cast<std::size_t>(i / M)]),
                std::min(a.P, a.Q)};
        break;
      case ClosedFormKind::walker_otto:
        size = {periods * a.r, a.P};
        break;
      case ClosedFormKind::circulant:
        size = {periods * a.r * ceil_div(circ.k1 - i / circ.Q1, circ.G2), a.P};
        break;
      }
    }
    return sizes;
  }
};

std::optional<ClosedFormSchedule> ClosedFormSchedule::make(ClosedFormKind kind,
                                                           const Transfer1D &t) {
  std::optional<Aligned> a = aligned(t);
  if (!a) {
    return std::nullopt;
  }
  auto m = std::make_shared<Impl>();
  m->kind = kind;
  m->built = t;
  // The transposed problem when the form applies to it instead.
  const auto transpose_if = [&](bool forward, bool backward) {
    if (forward) {
      return true;
    }
    if (!backward) {
      return false;
    }
    m->built = swapped(t);
    m->transposed = true;
    a = aligned(m->built);
    return true;
  };
  switch (kind) {
  case ClosedFormKind::class_based: {
    const std::optional<ClassParams> c = class_params(*a);
    if (!c) {
      return std::nullopt;
    }
    m->cls = *c;
    m->classes = communicating_classes(*c);
    m->s1_inv = mod_inverse(c->s1, c->g);
    m->A = a->P / c->g;
    m->B = a->Q / c->g;
    m->M = std::max(m->A, m->B);
    m->steps = static_cast<Index>(m->classes.size()) * m->M;
    break;
  }
  case ClosedFormKind::walker_otto:
    if (t.src.nprocs != t.dst.nprocs || !transpose_if(a->s % a->r == 0, a->r % a->s == 0)) {
      return std::nullopt;
    }
    m->k = a->s / a->r;
    m->g = std::gcd(m->k, a->P);
    m->k1 = m->k / m->g;
    m->P1 = a->P / m->g;
    m->k1_inv = mod_inverse(m->k1, m->P1);
    m->steps = m->k;
    break;
  case ClosedFormKind::circulant:
    if (!transpose_if(circulant_forward_applies(*a),
                      circulant_forward_applies(*aligned(swapped(t))))) {
      return std::nullopt;
    }
    m->circ = circulant_params(*a);
    m->steps = m->circ.rows;
    break;
  }
  m->a = *a;
  ClosedFormSchedule out;
  out.impl_ = std::move(m);
  return out;
}

ClosedFormKind ClosedFormSchedule::kind() const {
  return impl_->kind;
}

Index ClosedFormSchedule::formula_steps() const {
  return impl_->steps;
}

bool ClosedFormSchedule::splits_messages() const {
  return impl_->kind == ClosedFormKind::walker_otto && impl_->k > impl_->a.P;
}

Schedule ClosedFormSchedule::build() const {
  const Impl &m = *impl_;
  const Aligned &a = m.a;
  Schedule out;
  if (m.kind == ClosedFormKind::walker_otto) {
    out.steps.resize(static_cast<std::size_t>(m.steps));
    for (Index p = 0; p < a.P; ++p) {
      m.for_each_target(p, [&](Index n, Index receiver, Index block) {
        if (const Index v = m.block_volume(block); v > 0) {
          out.steps[static_cast<std::size_t>(n)].pieces.push_back(
              {a.src_of(p), a.dst_of(receiver), 0, v});
        }
      });
    }
    std::erase_if(out.steps, [](const Step &s) { return s.pieces.empty(); });
    if (splits_messages()) {
      assign_offsets(out);
    }
  } else {
    const VolumeGraph graph = volume_graph(m.built);
    StepTable table(graph, m.steps);
    for (Index p = 0; p < a.P; ++p) {
      if (!table.sends(a.src_of(p))) {
        continue;
      }
      m.for_each_target(p, [&](Index i, Index receiver, Index /*block*/) {
        table.add(i, a.src_of(p), a.dst_of(receiver));
      });
    }
    out = table.finish();
  }
  if (m.transposed) {
    transpose(out);
  }
  return out;
}

std::vector<StepSize> ClosedFormSchedule::step_sizes() const {
  const Impl &m = *impl_;
  const Aligned &a = m.a;
  if (const std::optional<Index> periods = a.whole_periods()) {
    return m.whole_period_sizes(*periods);
  }
  std::vector<StepSize> sizes(static_cast<std::size_t>(m.steps));
  const auto add = [&](Index step, Index volume) {
    if (volume > 0) {
      StepSize &size = sizes[static_cast<std::size_t>(step)];
      size.largest = std::max(size.largest, volume);
      ++size.pieces;
    }
  };
  if (m.kind == ClosedFormKind::walker_otto) {
    for (Index p = 0; p < a.P; ++p) {
      m.for_each_target(
          p, [&](Index n, Index /*receiver*/, Index block) { add(n, m.block_volume(block)); });
    }
    return sizes;
  }
  SenderSweep sweep(m.built);
  for (Index p = 0; p < a.P; ++p) {
    sweep.run(a.src_of(p));
    if (!sweep.touched().empty()) {
      m.for_each_target(p, [&](Index i, Index receiver, Index /*block*/) {
        add(i, sweep.volume(a.dst_of(receiver)));
      });
    }
    sweep.clear();
  }
  return sizes;
}

ScheduleStats ClosedFormSchedule::stats(const CostModel &model, std::size_t element_bytes) const {
  return matching_step_stats(step_sizes(), impl_->a.length, model, element_bytes);
}

std::vector<std::pair<int, int>>
ClosedFormSchedule::partners(int src, int dst, const std::vector<int> &receivers_of_src,
                             const std::vector<int> &senders_of_dst) const {
  const Impl &m = *impl_;
  const Aligned &a = m.a;
  std::vector<std::pair<int, int>> out(static_cast<std::size_t>(m.steps), {-1, -1});
  // f(step, receiver) for every step in which `sender` (of the built problem) is busy.
  const auto each_target = [&](int sender, auto &&f) {
    m.for_each_target(floor_mod(sender - a.src_shift, a.P),
                      [&](Index i, Index receiver, Index /*block*/) {
                        f(static_cast<std::size_t>(i), a.dst_of(receiver));
                      });
  };
  // The formula gives a sender of the built problem its receiver; a receiver of the built
  // problem finds its sender among the candidates it exchanges data with. A built sender is a
  // receiver of t when the form schedules the transposed problem.
  const auto slot = [&](std::size_t i, bool of_built_sender) -> int & {
    return of_built_sender != m.transposed ? out[i].first : out[i].second;
  };
  const int built_sender = m.transposed ? dst : src;
  const int built_receiver = m.transposed ? src : dst;
  if (built_sender >= 0) {
    each_target(built_sender, [&](std::size_t i, int q) { slot(i, true) = q; });
  }
  if (built_receiver >= 0) {
    for (const int c : m.transposed ? receivers_of_src : senders_of_dst) {
      each_target(c, [&](std::size_t i, int q) {
        if (q == built_receiver) {
          slot(i, false) = c;
        }
      });
    }
  }
  return out;
}

ScheduleStats matching_step_stats(const std::vector<StepSize> &steps, Index elements,
                                  const CostModel &model, std::size_t element_bytes) {
  ScheduleStats st;
  st.elements = elements;
  const auto bytes = static_cast<double>(element_bytes);
  for (const StepSize &step : steps) {
    if (step.pieces == 0) {
      continue;
    }
    ++st.steps;
    st.pieces += step.pieces;
    st.sum_step_max += step.largest;
    st.largest_piece = std::max(st.largest_piece, step.largest);
    st.max_node_pieces = 1;
    // As schedule_stats: the busiest node of a matching step sends its one piece.
    st.seconds += model.alpha * 1.0 + model.beta * bytes * static_cast<double>(step.largest) +
                  model.step_setup;
  }
  return st;
}

std::optional<Schedule> schedule_class_based(const Transfer1D &t) {
  const auto form = ClosedFormSchedule::make(ClosedFormKind::class_based, t);
  return form ? std::optional<Schedule>(form->build()) : std::nullopt;
}

std::optional<Schedule> schedule_walker_otto(const Transfer1D &t) {
  const auto form = ClosedFormSchedule::make(ClosedFormKind::walker_otto, t);
  return form ? std::optional<Schedule>(form->build()) : std::nullopt;
}

std::optional<Schedule> schedule_circulant(const Transfer1D &t) {
  const auto form = ClosedFormSchedule::make(ClosedFormKind::circulant, t);
  return form ? std::optional<Schedule>(form->build()) : std::nullopt;
}

std::optional<ClosedFormSchedule> best_closed_form(const Transfer1D &t, const CostModel &model,
                                                   std::size_t element_bytes) {
  std::optional<ClosedFormSchedule> best;
  double best_seconds = 0.0;
  for (const ClosedFormKind kind :
       {ClosedFormKind::class_based, ClosedFormKind::walker_otto, ClosedFormKind::circulant}) {
    std::optional<ClosedFormSchedule> form = ClosedFormSchedule::make(kind, t);
    if (!form) {
      continue;
    }
    const double seconds = form->stats(model, element_bytes).seconds;
    if (!best || seconds < best_seconds) {
      best = std::move(form);
      best_seconds = seconds;
    }
  }
  return best;
}

std::optional<Schedule> schedule_closed_form(const Transfer1D &t, const CostModel &model,
                                             std::size_t element_bytes) {
  const std::optional<ClosedFormSchedule> best = best_closed_form(t, model, element_bytes);
  return best ? std::optional<Schedule>(best->build()) : std::nullopt;
}

// The product of a row schedule R and a column schedule C of a full window (product_schedule):
// step (a, b) holds the pieces (r, c) for r in R_a and c in C_b, of r.volume * c.volume
// elements (message_elements of a full window is the product of the 1-D counts). So
//  - its largest piece is max_a * max_b (all volumes are positive), hence
//    T = sum_a sum_b max_a max_b = T_R * T_C and the largest piece is L_R * L_C;
//  - it holds |R_a| |C_b| pieces, none empty, so no step is empty: N = N_R * N_C and the
//    pieces add up to pieces_R * pieces_C, the elements to elements_R * elements_C;
//  - two of its pieces share a 2-D sender (pr, pc) only if they share the row sender pr and
//    the column sender pc, i.e. are the same piece, as R_a and C_b are matchings; receivers
//    alike. Each step is a matching, whose busiest node costs alpha + beta * bytes * max.
std::optional<ScheduleStats> product_closed_form_stats(const Transfer &t, const CostModel &model,
                                                       std::size_t element_bytes) {
  if (t.region.kind != Region::Kind::full) {
    return std::nullopt;
  }
  const std::optional<ClosedFormSchedule> rows = best_closed_form(t.rows(), model, element_bytes);
  const std::optional<ClosedFormSchedule> cols = best_closed_form(t.cols(), model, element_bytes);
  if (!rows || !cols) {
    return std::nullopt;
  }
  const ScheduleStats r = rows->stats(model, element_bytes);
  const ScheduleStats c = cols->stats(model, element_bytes);
  ScheduleStats st;
  st.steps = r.steps * c.steps;
  st.pieces = r.pieces * c.pieces;
  st.elements = r.elements * c.elements;
  st.sum_step_max = r.sum_step_max * c.sum_step_max;
  st.largest_piece = r.largest_piece * c.largest_piece;
  st.max_node_pieces = st.steps > 0 ? 1 : 0;
  st.seconds =
      static_cast<double>(st.steps) * (model.alpha + model.step_setup) +
      model.beta * static_cast<double>(element_bytes) * static_cast<double>(st.sum_step_max);
  return st;
}

std::optional<ScheduleStats> class_based_stats(const Transfer1D &t, const CostModel &model,
                                               std::size_t element_bytes) {
  const std::optional<Aligned> a = aligned(t);
  if (!a) {
    return std::nullopt;
  }
  const std::optional<ClassParams> c = class_params(*a);
  const std::optional<Index> periods = a->whole_periods();
  if (!c || !periods) {
    return std::nullopt;
  }
  if (*periods == 0) {
    return matching_stats(0, 0, 0, 0, 0, model, element_bytes);
  }
  // Prop. 4: every step holds messages of one class; the classes' lengths add up to r1 s1.
  const std::vector<Index> classes = communicating_classes(*c);
  const Index M = std::max(a->P, a->Q) / c->g;
  Index largest = 0;
  for (const Index k : classes) {
    largest = std::max(largest, class_volume(*c, k));
  }
  const Index scale = *periods * c->D;
  const auto steps = static_cast<Index>(classes.size()) * M;
  return matching_stats(steps, steps * std::min(a->P, a->Q), t.length, scale * c->r1 * c->s1 * M,
                        scale * largest, model, element_bytes);
}

std::optional<ScheduleStats> walker_otto_stats(const Transfer1D &t, const CostModel &model,
                                               std::size_t element_bytes) {
  if (t.src.nprocs != t.dst.nprocs) {
    return std::nullopt;
  }
  const std::optional<Aligned> a = aligned(t);
  if (!a || (a->s % a->r != 0 && a->r % a->s != 0)) {
    return std::nullopt;
  }
  const std::optional<Index> periods = a->whole_periods();
  if (!periods) {
    return std::nullopt;
  }
  if (*periods == 0) {
    return matching_stats(0, 0, 0, 0, 0, model, element_bytes);
  }
  // k steps; in each, every process sends one block of x per superblock.
  const Index x = std::min(a->r, a->s);
  const Index k = std::max(a->r, a->s) / x;
  const Index piece = *periods * x;
  return matching_stats(k, k * a->P, t.length, k * piece, piece, model, element_bytes);
}

std::optional<ScheduleStats> circulant_stats(const Transfer1D &t, const CostModel &model,
                                             std::size_t element_bytes) {
  std::optional<Aligned> a = aligned(t);
  if (!a) {
    return std::nullopt;
  }
  if (!circulant_forward_applies(*a)) {
    a = aligned(swapped(t));
    if (!circulant_forward_applies(*a)) {
      return std::nullopt;
    }
  }
  const std::optional<Index> periods = a->whole_periods();
  if (!periods) {
    return std::nullopt;
  }
  if (*periods == 0) {
    return matching_stats(0, 0, 0, 0, 0, model, element_bytes);
  }
  // A sender sends k1 Q1 blocks per period, in `rows` steps of one length each: one block when
  // not all-to-all, else ceil(k1/G2) or floor(k1/G2) blocks (Park et al. 1999; Evers 2025
  // review, Sec. 4.2.6).
  const CirculantParams c = circulant_params(*a);
  const Index block = *periods * a->r;
  return matching_stats(c.rows, c.rows * a->P, t.length, block * c.k1 * c.Q1,
                        block * ceil_div(c.k1, std::min(c.k1, c.G2)), model, element_bytes);
}

std::vector<BlockCyclic> multiphase_intermediates(const Transfer1D &t) {
  const Index x = effective_block(t.src);
  const Index y = effective_block(t.dst);
  const Index P = t.src.nprocs;
  const Index Q = t.dst.nprocs;
  std::vector<BlockCyclic> out;
  std::vector<Index> blocks{std::gcd(x, y)};
  if (const std::optional<Index> l = checked_lcm(x, y)) {
    blocks.insert(blocks.begin(), *l);
  }
  for (const Index f : blocks) {
    for (const Index M : {P, Q}) {
      const Index fe = M == 1 ? 1 : f;
      const bool is_src = fe == x && M == P;
      const bool is_dst = fe == y && M == Q;
      if (is_src || is_dst || !closed_form_shape(x, P, fe, M) || !closed_form_shape(fe, M, y, Q)) {
        continue;
      }
      const BlockCyclic mid{t.length, f, static_cast<int>(M), 0};
      const bool seen = std::any_of(out.begin(), out.end(), [&](const BlockCyclic &m) {
        return m.nprocs == mid.nprocs && (m.block == mid.block || m.nprocs == 1);
      });
      if (!seen) {
        out.push_back(mid);
      }
    }
  }
  return out;
}

std::array<Transfer1D, 2> multiphase_phases(const Transfer1D &t, const BlockCyclic &mid) {
  return {Transfer1D{t.src, mid, t.src_start, 0, t.length},
          Transfer1D{mid, t.dst, 0, t.dst_start, t.length}};
}

double multiphase_cost(const Transfer1D &t, const BlockCyclic &mid, const CostModel &model,
                       std::size_t element_bytes) {
  double seconds = 0.0;
  for (const Transfer1D &phase : multiphase_phases(t, mid)) {
    const std::optional<Schedule> closed = schedule_closed_form(phase, model, element_bytes);
    const Schedule s = closed ? *closed : schedule_caterpillar(volume_graph(phase));
    seconds += schedule_stats(s, model, element_bytes).seconds;
  }
  return seconds;
}

const char *closed_form_name(ClosedFormKind kind) {
  switch (kind) {
  case ClosedFormKind::class_based:
    return "class";
  case ClosedFormKind::walker_otto:
    return "W&O";
  case ClosedFormKind::circulant:
    return "circulant";
  }
  return "?";
}

} // namespace redist
