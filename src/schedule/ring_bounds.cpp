// Lower bounds and the flow system of Renard, Robert & Vivien 2004: Lemma 1 (Sec. 3),
// Theorem 2 (Sec. 4), Lemma 6 (Sec. 5), and Lemma 10, System 6 and Lemma 12 (Sec. 6), with the
// convexity of System 6 in R_0 that docs/references.md derives. Pure, no MPI.

#include "ring.hpp"
#include "ring_arithmetic.hpp"

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <limits>
#include <vector>

namespace redist::ring {
namespace {

/// Prefix sums P_{-1} = 0, P_0, ..., P_{n-1} (= 0); every slice sum is a difference of two.
void prefix_range(const std::vector<Index> &delta, Index &lo, Index &hi) {
  Index s = 0;
  lo = 0;
  hi = 0;
  for (const Index d : delta) {
    s += d;
    lo = std::min(lo, s);
    hi = std::max(hi, s);
  }
}

} // namespace

std::vector<Index> unbalances(const Problem &p) {
  std::vector<Index> d(p.loads.size());
  for (std::size_t k = 0; k < d.size(); ++k)
    d[k] = p.loads[k] - p.targets[k];
  return d;
}

Index lemma1_delta_max(const std::vector<Index> &delta) {
  Index lo = 0;
  Index hi = 0;
  prefix_range(delta, lo, hi);
  return hi - lo;
}

std::vector<Index> unidirectional_flows(const std::vector<Index> &delta) {
  Index lo = 0;
  Index hi = 0;
  prefix_range(delta, lo, hi);
  // P_{start-1} is a minimum of the prefix sums, so delta_{start,start+l} = P_{start+l} - min.
  std::vector<Index> flow(delta.size());
  Index s = 0;
  for (std::size_t k = 0; k < delta.size(); ++k) {
    s += delta[k];
    flow[k] = s - lo;
  }
  return flow;
}

double theorem2_bound(const std::vector<Index> &delta, const std::vector<double> &c_next) {
  const std::size_t n = delta.size();
  double bound = 0.0;
  for (std::size_t k = 0; k < n; ++k) {
    Index s = 0;
    for (std::size_t len = 1; len < n; ++len) {
      const std::size_t l = wrap(static_cast<Index>(k + len - 1), n);
      s += delta[l];
      if (s > 0) bound = std::max(bound, cost_of(s, c_next[l]));
      if (s < 0) bound = std::max(bound, cost_of(-s, c_next[wrap(static_cast<Index>(k) - 1, n)]));
    }
  }
  return bound;
}

Index lemma6_steps(const std::vector<Index> &delta) {
  Index single = 0;
  for (const Index d : delta)
    single = std::max(single, d < 0 ? -d : d);
  return std::max(single, ceil_half(lemma1_delta_max(delta)));
}

double lemma12_bound(const std::vector<Index> &delta, const std::vector<double> &c_next,
                     const std::vector<double> &c_prev) {
  const std::size_t n = delta.size();
  // min over integer i in [0, d] of max(i * a, (d - i) * b): the crossing, rounded both ways.
  const auto split = [](Index d, double a, double b) {
    if (std::isinf(a)) return cost_of(d, b);
    if (std::isinf(b)) return cost_of(d, a);
    const double cross = static_cast<double>(d) * b / (a + b);
    double best = inf;
    for (const double r : {std::floor(cross), std::ceil(cross)}) {
      const Index i = std::clamp(static_cast<Index>(r), Index{0}, d);
      best = std::min(best, std::max(cost_of(i, a), cost_of(d - i, b)));
    }
    return best;
  };
  double bound = 0.0;
  for (std::size_t k = 0; k < n; ++k) {
    const std::size_t prev = wrap(static_cast<Index>(k) - 1, n);
    const std::size_t next = wrap(static_cast<Index>(k) + 1, n);
    if (delta[k] > 0) bound = std::max(bound, cost_of(delta[k], std::min(c_prev[k], c_next[k])));
    if (delta[k] < 0)
      bound = std::max(bound, cost_of(-delta[k], std::min(c_next[prev], c_prev[next])));
  }
  for (std::size_t k = 0; k < n; ++k) {
    Index s = delta[k];
    for (std::size_t l = 1; l + 1 < n; ++l) {
      const std::size_t last = wrap(static_cast<Index>(k + l), n);
      s += delta[last];
      if (s > 0) {
        bound = std::max(bound, split(s, c_prev[k], c_next[last]));
      } else if (s < 0) {
        const std::size_t before = wrap(static_cast<Index>(k) - 1, n);
        const std::size_t after = wrap(static_cast<Index>(k + l) + 1, n);
        bound = std::max(bound, split(-s, c_next[before], c_prev[after]));
      }
    }
  }
  return bound;
}

std::vector<Index> flows_with(Index x, const std::vector<Index> &delta) {
  std::vector<Index> flow(delta.size());
  Index r = x;
  for (std::size_t k = 0; k < delta.size(); ++k) {
    if (k > 0) r += delta[k];
    flow[k] = r;
  }
  return flow;
}

// --- System 6 as a function of R_0 (Lemma 10) --------------------------------------------------

System6::System6(const Problem &p) : p_(p), q_(flows_with(0, unbalances(p))) {
  const std::size_t n = q_.size();
  Index lower = std::numeric_limits<Index>::min();
  Index upper = std::numeric_limits<Index>::max();
  Index bmin = std::numeric_limits<Index>::max();
  Index bmax = std::numeric_limits<Index>::min();
  for (std::size_t k = 0; k < n; ++k) {
    bmin = std::min(bmin, -q_[k]);
    bmax = std::max(bmax, -q_[k]);
    if (std::isinf(p.c_next[k])) upper = std::min(upper, -q_[k]); // R_k <= 0
    if (std::isinf(p.c_prev[wrap(static_cast<Index>(k) + 1, n)]))
      lower = std::max(lower, -q_[k]); // R_k >= 0
  }
  if (lower > upper)
    throw InputError("c_next, c_prev", "inf",
                     "the links of infinite cost leave no way to move the items (every flow "
                     "crosses a forbidden link)");
  // Outside the breakpoints every flow grows with |x|, and so does the value.
  lo_ = std::max(lower, bmin);
  hi_ = std::min(upper, bmax);
}

double System6::component(std::size_t j, double x) const {
  const std::size_t n = q_.size();
  const std::size_t i = j % n;
  const std::size_t prev = wrap(static_cast<Index>(i) - 1, n);
  const std::size_t next = wrap(static_cast<Index>(i) + 1, n);
  const double r_i = x + static_cast<double>(q_[i]);
  const double r_prev = x + static_cast<double>(q_[prev]);
  const auto term = [](double amount, double cost) { return amount > 0.0 ? amount * cost : 0.0; };
  if (j < n) return term(r_i, p_.c_next[i]) + term(-r_prev, p_.c_prev[i]); // P_i sends
  return term(r_prev, p_.c_next[prev]) + term(-r_i, p_.c_prev[next]);      // P_i receives
}

double System6::operator()(double x) const {
  double v = 0.0;
  for (std::size_t j = 0; j < 2 * q_.size(); ++j)
    v = std::max(v, component(j, x));
  return v;
}

Index System6::integer_argmin() const {
  // Convex: the forward difference is non-decreasing; find the first x where it is >= 0.
  Index a = lo_;
  Index b = hi_;
  while (a < b) {
    const Index m = a + (b - a) / 2;
    if (at(m + 1) >= at(m)) {
      b = m;
    } else {
      a = m + 1;
    }
  }
  return a;
}

double System6::rational_min(double &x) const {
  const Index xi = integer_argmin();
  x = static_cast<double>(xi);
  double best = at(xi);
  const std::size_t m = 2 * q_.size();
  for (const Index u : {xi - 1, xi}) {
    if (u < lo_ || u + 1 > hi_) continue;
    // On [u, u+1] every component is linear (its breakpoints are integers): f is the upper
    // envelope of m lines, convex; ternary search locates the minimum, then the crossing of the
    // highest rising and highest falling line there gives it exactly.
    std::vector<double> v0(m);
    std::vector<double> slope(m);
    for (std::size_t j = 0; j < m; ++j) {
      v0[j] = component(j, static_cast<double>(u));
      slope[j] = component(j, static_cast<double>(u + 1)) - v0[j];
    }
    const auto env = [&](double t) {
      double v = 0.0;
      for (std::size_t j = 0; j < m; ++j)
        v = std::max(v, v0[j] + slope[j] * t);
      return v;
    };
    double a = 0.0;
    double b = 1.0;
    for (int it = 0; it < 200; ++it) {
      const double t1 = a + (b - a) / 3.0;
      const double t2 = b - (b - a) / 3.0;
      if (env(t1) <= env(t2)) {
        b = t2;
      } else {
        a = t1;
      }
    }
    const double ts = (a + b) / 2.0;
    std::vector<double> cands = {0.0, 1.0, ts};
    std::size_t up = m;
    std::size_t down = m;
    for (std::size_t j = 0; j < m; ++j) {
      const double v = v0[j] + slope[j] * ts;
      if (slope[j] > 0.0 && (up == m || v > v0[up] + slope[up] * ts)) up = j;
      if (slope[j] < 0.0 && (down == m || v > v0[down] + slope[down] * ts)) down = j;
    }
    if (up != m && down != m) {
      const double t = (v0[down] - v0[up]) / (slope[up] - slope[down]);
      if (t >= 0.0 && t <= 1.0) cands.push_back(t);
    }
    for (const double t : cands) {
      const double v = env(t);
      if (v < best) {
        best = v;
        x = static_cast<double>(u) + t;
      }
    }
  }
  return best;
}

Index System6::sends(std::size_t i, Index x) const {
  const std::size_t n = q_.size();
  const Index r_i = x + q_[i];
  const Index r_prev = x + q_[wrap(static_cast<Index>(i) - 1, n)];
  return std::max<Index>(r_i, 0) + std::max<Index>(-r_prev, 0);
}

bool System6::is_light(Index x) const {
  for (std::size_t i = 0; i < q_.size(); ++i) {
    if (sends(i, x) > p_.loads[i]) return false;
  }
  return true;
}

bool System6::light_interval(Index &lo, Index &hi) const {
  // g(x) = max_i (sends_i(x) - L_i) is convex; light flows are where g <= 0. Outside the
  // breakpoints every process sends more as |x| grows, so the interval lies in [lo_, hi_].
  const auto g = [&](Index x) {
    Index v = std::numeric_limits<Index>::min();
    for (std::size_t i = 0; i < q_.size(); ++i)
      v = std::max(v, sends(i, x) - p_.loads[i]);
    return v;
  };
  Index a = lo_;
  Index b = hi_;
  while (a < b) {
    const Index m = a + (b - a) / 2;
    if (g(m + 1) >= g(m)) {
      b = m;
    } else {
      a = m + 1;
    }
  }
  const Index xm = a;
  if (g(xm) > 0) return false;
  Index l = lo_;
  Index r = xm;
  while (l < r) { // first x in [lo_, xm] with g <= 0 (g non-increasing there)
    const Index m = l + (r - l) / 2;
    if (g(m) <= 0) {
      r = m;
    } else {
      l = m + 1;
    }
  }
  lo = l;
  l = xm;
  r = hi_;
  while (l < r) { // last x in [xm, hi_] with g <= 0
    const Index m = l + (r - l + 1) / 2;
    if (g(m) <= 0) {
      l = m;
    } else {
      r = m - 1;
    }
  }
  hi = l;
  return true;
}

} // namespace redist::ring
