#include "schedule_cyclic.hpp"

#include <algorithm>
#include <cstddef>
#include <limits>
#include <numeric>
#include <utility>

namespace redist {
namespace {

Index floor_mod(Index a, Index m) {
  const Index r = a % m;
  return r < 0 ? r + m : r;
}

Index ceil_div(Index a, Index b) {
  return (a + b - 1) / b;
}

// Inverse of a modulo m for gcd(a, m) = 1 (extended Euclid); 0 when m == 1.
Index mod_inverse(Index a, Index m) {
  Index old_r = floor_mod(a, m);
  Index r = m;
  Index old_s = 1;
  Index s = 0;
  while (r != 0) {
    const Index q = old_r / r;
    old_r = std::exchange(r, old_r - q * r);
    old_s = std::exchange(s, old_s - q * s);
  }
  return floor_mod(old_s, m);
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
// (Lemma 2), each once; all g classes when g < r1 + s1 - 1 (Sec. 4.3.2, regrouped).
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

// --- Walker & Otto 1996 (review Sec. 4.2.3) ---

// CYCLIC(x) to CYCLIC(kx) on P processes, aligned. Reduced system (Eq. 4.17): with g =
// gcd(k, P), k1 = k/g, P1 = P/g, process p1 sends in step n1 its block B1 = p1 mod P1,
// B1 = n1 mod k1 (unique by the Chinese remainder theorem, the diagonal fill of Table 4.7).
// Expansion (Eq. 4.19): B = g B1 + P k1 beta + alpha with alpha = p mod g, beta = (alpha - n)
// mod g, p1 = p / g, n1 = n / g (Tables 4.9 and 4.10).
Schedule walker_otto_forward(const Aligned &a) {
  const Index P = a.P;
  const Index x = a.r;
  const Index k = a.s / a.r;
  const Index g = std::gcd(k, P);
  const Index k1 = k / g;
  const Index P1 = P / g;
  const Index k1_inv = mod_inverse(k1, P1);
  Schedule out;
  for (Index n = 0; n < k; ++n) {
    Step step;
    const Index n1 = n / g;
    for (Index p = 0; p < P; ++p) {
      const Index p1 = p / g;
      const Index alpha = p % g;
      const Index beta = floor_mod(alpha - n % g, g);
      const Index b1 = n1 + k1 * floor_mod(k1_inv * floor_mod(p1 - n1, P1), P1);
      const Index b = g * b1 + P * k1 * beta + alpha;
      const Index v = blocks_volume(b, k * P, x, a.length);
      if (v > 0) {
        step.pieces.push_back({a.src_of(p), a.dst_of(b / k), 0, v});
      }
    }
    if (!step.pieces.empty()) {
      out.steps.push_back(std::move(step));
    }
  }
  if (k > P) { // a pair meets in several steps only then
    assign_offsets(out);
  }
  return out;
}

// --- Park, Prasanna & Raghavendra 1999 (review Sec. 4.2.6) ---

struct CirculantParams {
  Index k = 1;
  Index G1 = 1;
  Index P1 = 1;
  Index k1 = 1;
  Index G2 = 1;
  Index Q1 = 1;
  Index n = 0; // n k1 - m P1 = 1 (Eq. 4.24)
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

// CYCLIC(x) on P to CYCLIC(kx) on Q, P <= Q, aligned (Eq. 4.23).
Schedule circulant_forward(const Aligned &a, const VolumeGraph &graph) {
  const CirculantParams c = circulant_params(a);
  StepTable table(graph, c.rows);
  for (Index j = 0; j < a.P; ++j) {
    if (!table.sends(a.src_of(j))) {
      continue;
    }
    const Index j1 = j / c.G1;
    const Index j2 = j % c.G1;
    for (Index i = 0; i < c.rows; ++i) {
      const Index i1 = i / c.Q1;
      const Index i2 = i % c.Q1;
      const Index dst =
          (floor_mod(c.n * floor_mod(j1 - i1, c.P1), c.P1) + floor_mod(j2 - i2, c.Q1) * c.P1) % a.Q;
      table.add(i, a.src_of(j), a.dst_of(dst));
    }
  }
  return table.finish();
}

std::optional<Schedule> best_of(std::optional<Schedule> best, std::optional<Schedule> other,
                                const CostModel &model, std::size_t element_bytes) {
  if (!other) {
    return best;
  }
  if (!best || schedule_stats(*other, model, element_bytes).seconds <
                   schedule_stats(*best, model, element_bytes).seconds) {
    return other;
  }
  return best;
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

// One sweep over at most one period L = lcm(P r, Q s) of the window.
VolumeGraph volume_graph(const Transfer1D &t) {
  VolumeGraph graph;
  graph.senders = t.src.nprocs;
  graph.receivers = t.dst.nprocs;
  if (t.length <= 0) {
    return graph;
  }
  const Index P = t.src.nprocs;
  const Index Q = t.dst.nprocs;
  const Index rb = t.src.block;
  const Index sb = t.dst.block;
  // The owner pattern in window indices repeats every lcm(P r, Q s) (1 for a single process).
  const std::optional<Index> period = checked_lcm(P == 1 ? 1 : P * rb, Q == 1 ? 1 : Q * sb);
  Index sweep = t.length;
  Index whole = 0;
  Index rest = t.length;
  if (period && *period <= t.length) {
    sweep = *period;
    whole = t.length / *period;
    rest = t.length % *period;
  }
  // Volume of one sweep piece [k, end): its elements in each whole period plus in the rest.
  const auto piece = [&](Index k, Index end) {
    return whole * (end - k) + std::max(Index{0}, std::min(end, rest) - k);
  };
  std::vector<Index> acc(static_cast<std::size_t>(Q), 0);
  std::vector<int> touched;
  for (Index p = 0; p < P; ++p) {
    const auto visit = [&](Index lo, Index hi) { // window indices of sender p
      Index k = lo;
      while (k < hi) {
        Index q = 0;
        Index end = hi;
        if (Q > 1) {
          const Index gd = t.dst_start + k;
          q = (gd / sb + t.dst.src) % Q;
          end = std::min(hi, (gd / sb + 1) * sb - t.dst_start);
        }
        Index &slot = acc[static_cast<std::size_t>(q)];
        if (slot == 0) {
          touched.push_back(static_cast<int>(q));
        }
        slot += piece(k, end);
        k = end;
      }
    };
    if (P == 1) {
      visit(0, sweep);
    } else {
      const Index first = t.src_start / rb;
      for (Index b = first + floor_mod(p - t.src.src - first, P); b * rb < t.src_start + sweep;
           b += P) {
        visit(std::max(b * rb, t.src_start) - t.src_start,
              std::min((b + 1) * rb, t.src_start + sweep) - t.src_start);
      }
    }
    const auto flush = [&](int q) {
      Index &slot = acc[static_cast<std::size_t>(q)];
      if (slot > 0) {
        graph.messages.push_back({static_cast<int>(p), q, slot});
      }
      slot = 0;
    };
    if (static_cast<Index>(touched.size()) * 16 >= Q) { // dense: scan instead of sorting
      for (int q = 0; q < static_cast<int>(Q); ++q) {
        flush(q);
      }
    } else {
      std::sort(touched.begin(), touched.end());
      std::for_each(touched.begin(), touched.end(), flush);
    }
    touched.clear();
  }
  return graph;
}

// Desprez et al. 1998, Sec. 4.3.2: in class k, sender p = a g + p1 sends to every receiver
// q = b g + q1 with q1 = s1^-1 (p1 r1 - k) mod g. The g complete bipartite blocks
// (P/g senders x Q/g receivers) are disjoint; step t pairs a with b = (a + t) mod max(P,Q)/g.
std::optional<Schedule> schedule_class_based(const Transfer1D &t) {
  const std::optional<Aligned> a = aligned(t);
  if (!a) {
    return std::nullopt;
  }
  const std::optional<ClassParams> c = class_params(*a);
  if (!c) {
    return std::nullopt;
  }
  const VolumeGraph graph = volume_graph(t);
  const Index s1_inv = mod_inverse(c->s1, c->g);
  const Index A = a->P / c->g;
  const Index B = a->Q / c->g;
  const Index M = std::max(A, B);
  const std::vector<Index> classes = communicating_classes(*c);
  StepTable table(graph, static_cast<Index>(classes.size()) * M);
  for (Index p = 0; p < a->P; ++p) {
    if (!table.sends(a->src_of(p))) {
      continue;
    }
    const Index ab = p / c->g;
    const Index p1 = p % c->g;
    for (std::size_t ci = 0; ci < classes.size(); ++ci) {
      const Index q1 = floor_mod(s1_inv * floor_mod(p1 * c->r1 - classes[ci], c->g), c->g);
      for (Index step = 0; step < M; ++step) {
        const Index b = (ab + step) % M;
        if (b < B) {
          table.add(static_cast<Index>(ci) * M + step, a->src_of(p), a->dst_of(b * c->g + q1));
        }
      }
    }
  }
  return table.finish();
}

std::optional<Schedule> schedule_walker_otto(const Transfer1D &t) {
  if (t.src.nprocs != t.dst.nprocs) {
    return std::nullopt;
  }
  const std::optional<Aligned> a = aligned(t);
  if (!a) {
    return std::nullopt;
  }
  if (a->s % a->r == 0) {
    return walker_otto_forward(*a);
  }
  if (a->r % a->s == 0) {
    const std::optional<Aligned> b = aligned(swapped(t));
    Schedule out = walker_otto_forward(*b);
    transpose(out);
    return out;
  }
  return std::nullopt;
}

std::optional<Schedule> schedule_circulant(const Transfer1D &t) {
  const std::optional<Aligned> a = aligned(t);
  if (!a) {
    return std::nullopt;
  }
  if (circulant_forward_applies(*a)) {
    return circulant_forward(*a, volume_graph(t));
  }
  const Transfer1D back = swapped(t);
  const std::optional<Aligned> b = aligned(back);
  if (circulant_forward_applies(*b)) {
    Schedule out = circulant_forward(*b, volume_graph(back));
    transpose(out);
    return out;
  }
  return std::nullopt;
}

std::optional<Schedule> schedule_closed_form(const Transfer1D &t, const CostModel &model,
                                             std::size_t element_bytes) {
  std::optional<Schedule> best = schedule_class_based(t);
  best = best_of(std::move(best), schedule_walker_otto(t), model, element_bytes);
  best = best_of(std::move(best), schedule_circulant(t), model, element_bytes);
  return best;
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
  // not all-to-all, else ceil(k1/G2) or floor(k1/G2) blocks (review Sec. 4.2.6).
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

} // namespace redist
