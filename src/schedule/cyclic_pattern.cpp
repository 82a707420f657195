// The aligned pattern of a 1-D block-cyclic transfer, the closed forms' parameters (Desprez et
// al. 1998, Sec. 4; Park, Prasanna & Raghavendra 1999 through the Evers 2025 review, Sec. 4.2.6),
// the step counts of Desprez et al. 1998 (Prop. 5, Thm. 1) and the 1-D volume graph from one
// sweep of a period. Pure code, no MPI.

#include "cyclic_pattern.hpp"
#include "schedule_cyclic.hpp"

#include <algorithm>
#include <cstddef>
#include <limits>
#include <numeric>
#include <optional>
#include <vector>

namespace redist::cyclic {

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

Index blocks_volume(Index b0, Index stride, Index block, Index length) {
  const Index full = length / block;
  const Index part = length % block;
  Index v = b0 < full ? ((full - 1 - b0) / stride + 1) * block : 0;
  if (part > 0 && full >= b0 && (full - b0) % stride == 0) {
    v += part;
  }
  return v;
}

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

Index class_volume(const ClassParams &c, Index k) {
  Index v = 0;
  for (Index z = 1 - c.r1; z <= c.s1 - 1; ++z) {
    if (floor_mod(z, c.g) == k) {
      v += std::min({c.r1, c.s1, c.r1 + z, c.s1 - z});
    }
  }
  return v;
}

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

SenderSweep::SenderSweep(const Transfer1D &t)
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

void SenderSweep::run(Index p) {
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

void SenderSweep::clear() {
  for (const int q : touched_) {
    acc_[static_cast<std::size_t>(q)] = 0;
  }
  touched_.clear();
}

void SenderSweep::visit(Index lo, Index hi) {
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

} // namespace redist::cyclic

namespace redist {

using namespace cyclic;

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

} // namespace redist
