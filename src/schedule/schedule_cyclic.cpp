#include "schedule_cyclic.hpp"

#include "cyclic_pattern.hpp"

#include <algorithm>
#include <cstddef>
#include <memory>
#include <numeric>
#include <optional>
#include <utility>

namespace redist {

using namespace cyclic;

namespace {

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

} // namespace

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
    case ClosedFormKind::class_based:
      class_based_targets(p, f);
      break;
    case ClosedFormKind::walker_otto:
      walker_otto_targets(p, f);
      break;
    case ClosedFormKind::circulant:
      circulant_targets(p, f);
      break;
    }
  }

  template <class F> void class_based_targets(Index p, F &&f) const {
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
  }

  template <class F> void walker_otto_targets(Index p, F &&f) const {
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
  }

  template <class F> void circulant_targets(Index p, F &&f) const {
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
