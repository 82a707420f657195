#pragma once
// The aligned pattern of a 1-D block-cyclic transfer and the parameters the closed forms read
// from it, shared by schedule_cyclic.cpp (the schedules), cyclic_stats.cpp (their statistics)
// and cyclic_multiphase.cpp (the two-phase intermediates); not part of schedule_cyclic.hpp's
// interface. Desprez et al. 1998, Sec. 4 (the classes of Lemma 2 and Prop. 2) and Park,
// Prasanna & Raghavendra 1999 (Evers 2025 review, Sec. 4.2.6; the circulant's parameters).
// Pure code, no MPI.

#include "schedule.hpp"

#include <cstddef>
#include <limits>
#include <numeric>
#include <optional>
#include <vector>

namespace redist::cyclic {

inline Index ceil_div(Index a, Index b) {
  return (a + b - 1) / b;
}

// lcm(a, b), or nullopt when it does not fit in an Index.
inline std::optional<Index> checked_lcm(Index a, Index b) {
  const Index a_over_g = a / std::gcd(a, b);
  if (a_over_g > std::numeric_limits<Index>::max() / b) {
    return std::nullopt;
  }
  return a_over_g * b;
}

// A side with one process owns everything whatever its block size.
inline Index effective_block(const BlockCyclic &d) {
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

// The aligned pattern of `t`, or nullopt when a window does not start on a block boundary.
std::optional<Aligned> aligned(const Transfer1D &t);

// The transfer the other way round: destination to source.
Transfer1D swapped(const Transfer1D &t);

// Elements of window [0, length) in blocks b0, b0 + stride, b0 + 2 stride, ... of `block`
// elements each.
Index blocks_volume(Index b0, Index stride, Index block, Index length);

// --- Desprez et al. 1998, Sec. 4 ---

struct ClassParams {
  Index D = 1;  // gcd(r, s) (Lemma 1)
  Index r1 = 1; // r / D
  Index s1 = 1; // s / D
  Index g = 1;  // gcd(P, Q) = gcd(P r1, Q s1) under the condition of Prop. 3
};

// The parameters of the reduced problem, or nullopt when gcd(r1, Q) or gcd(s1, P) is not 1.
std::optional<ClassParams> class_params(const Aligned &a);

// Classes f(p, q) = (p r1 - q s1) mod g that communicate: z mod g for z in [1 - r1, s1 - 1]
// (Lemma 2), each once; all g classes when g < r1 + s1 - 1 (Desprez et al. 1998, Sec. 4.3.2,
// regrouped).
std::vector<Index> communicating_classes(const ClassParams &c);

// Per-period message length in class k of the reduced problem: the sum of
// vol(z) = min(r1, s1, r1 + z, s1 - z) over z in [1 - r1, s1 - 1], z = k mod g (Prop. 2).
Index class_volume(const ClassParams &c, Index k);

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

CirculantParams circulant_params(const Aligned &a);

// CYCLIC(x) on P -> CYCLIC(kx) on Q >= P: the circulant applies as it stands.
bool circulant_forward_applies(const Aligned &a);

// --- Volumes ---

// The volumes one source process sends to each destination process, from one sweep over its
// blocks in at most one period L = lcm(P r, Q s) of the window: O(L / (P r) + L / (Q s)) per
// process, O(Q) memory.
class SenderSweep {
public:
  explicit SenderSweep(const Transfer1D &t);

  /// Adds the volumes of source process p; every destination is left at 0 by clear().
  void run(Index p);
  [[nodiscard]] Index volume(int q) const { return acc_[static_cast<std::size_t>(q)]; }
  /// The destinations with data since the last clear(), in no particular order.
  [[nodiscard]] std::vector<int> &touched() { return touched_; }
  void clear();

private:
  // Window indices [lo, hi) of the current sender, split at destination block boundaries.
  void visit(Index lo, Index hi);

  Transfer1D t_;
  std::vector<Index> acc_;
  std::vector<int> touched_;
  Index sweep_ = 0;
  Index whole_ = 0;
  Index rest_ = 0;
};

} // namespace redist::cyclic
