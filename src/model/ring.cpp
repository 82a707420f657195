#include "ring.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <numeric>
#include <queue>
#include <sstream>

namespace redist::ring {
namespace {

constexpr double inf = std::numeric_limits<double>::infinity();

std::size_t wrap(Index k, std::size_t n) {
  const auto m = static_cast<Index>(n);
  return static_cast<std::size_t>(((k % m) + m) % m);
}

/// items * cost, with no items costing nothing even over a forbidden link.
double cost_of(Index items, double cost) {
  return items > 0 ? static_cast<double>(items) * cost : 0.0;
}

std::string show(double v) {
  std::ostringstream os;
  os << v;
  return os.str();
}

std::string indexed(const char *name, std::size_t k) {
  return std::string(name) + "[" + std::to_string(k) + "]";
}

bool all_equal_finite(const std::vector<double> &a, const std::vector<double> &b, double &c) {
  c = a.empty() ? 1.0 : a.front();
  const auto same = [&](double v) { return v == c; };
  return std::isfinite(c) && std::all_of(a.begin(), a.end(), same) &&
         std::all_of(b.begin(), b.end(), same);
}

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

Index ceil_half(Index v) {
  return (v + 1) / 2;
}

} // namespace

const char *algorithm_name(Algorithm a) {
  switch (a) {
  case Algorithm::none:
    return "none";
  case Algorithm::homogeneous_uni:
    return "algorithm-1";
  case Algorithm::heterogeneous_uni:
    return "algorithm-2";
  case Algorithm::homogeneous_bi:
    return "algorithm-3";
  case Algorithm::light_bi:
    return "system-6";
  case Algorithm::heuristic_bi:
    return "heuristic";
  }
  return "?";
}

std::vector<Index> unbalances(const Problem &p) {
  std::vector<Index> d(p.loads.size());
  for (std::size_t k = 0; k < d.size(); ++k)
    d[k] = p.loads[k] - p.targets[k];
  return d;
}

void validate(const Problem &p) {
  const std::size_t n = p.loads.size();
  if (n == 0) throw InputError("n", "0", "the ring needs at least one process");
  if (n > static_cast<std::size_t>(std::numeric_limits<int>::max()))
    throw InputError("n", std::to_string(n), "too many processes");
  if (p.targets.size() != n)
    throw InputError("targets", std::to_string(p.targets.size()), "one target per process");
  if (p.c_next.size() != n)
    throw InputError("c_next", std::to_string(p.c_next.size()), "one cost per process");
  const bool bi = p.direction == Direction::bidirectional;
  if (bi && p.c_prev.size() != n)
    throw InputError("c_prev", std::to_string(p.c_prev.size()), "one cost per process");
  constexpr Index limit = Index{1} << 52;
  Index sum_loads = 0;
  Index sum_targets = 0;
  for (std::size_t k = 0; k < n; ++k) {
    if (p.loads[k] < 1)
      throw InputError(indexed("loads", k), std::to_string(p.loads[k]),
                       "every process must hold at least one item before the redistribution "
                       "(Renard, Robert & Vivien assume L_k >= 1); leave empty processes out of "
                       "the ring");
    if (p.targets[k] < 1)
      throw InputError(indexed("targets", k), std::to_string(p.targets[k]),
                       "every process must keep at least one item after the redistribution "
                       "(the paper assumes L_k - delta_k >= 1); leave empty processes out of the "
                       "ring");
    if (p.loads[k] > limit - sum_loads || p.targets[k] > limit - sum_targets)
      throw InputError(indexed("loads", k), std::to_string(p.loads[k]), "total items above 2^52");
    sum_loads += p.loads[k];
    sum_targets += p.targets[k];
  }
  if (sum_loads != sum_targets)
    throw InputError("targets", std::to_string(sum_targets),
                     "targets must add up to the items held, " + std::to_string(sum_loads));
  const auto check_costs = [&](const std::vector<double> &c, const char *name) {
    for (std::size_t k = 0; k < n; ++k) {
      if (!(c[k] > 0.0)) // NaN fails too
        throw InputError(indexed(name, k), show(c[k]),
                         "link cost must be > 0 (+infinity forbids the link)");
    }
  };
  check_costs(p.c_next, "c_next");
  if (bi) check_costs(p.c_prev, "c_prev");
  const std::vector<Index> delta = unbalances(p);
  if (!bi) {
    const std::vector<Index> flow = unidirectional_flows(delta);
    for (std::size_t k = 0; k < n; ++k) {
      if (flow[k] > 0 && std::isinf(p.c_next[k]))
        throw InputError(indexed("c_next", k), "inf",
                         "a unidirectional redistribution must move " + std::to_string(flow[k]) +
                             " items over this link (P" + std::to_string(k) + " -> P" +
                             std::to_string(wrap(static_cast<Index>(k) + 1, n)) +
                             "); on a path items only move forward");
    }
  } else if (n > 1) {
    static_cast<void>(System6(p)); // throws if the infinite links leave no feasible flow
  }
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

// --- Schedules ----------------------------------------------------------------------------------

namespace {

// The items crossing one link in one direction, sent one at a time: first `own` items its
// sender holds, then `fwd` items its feeder (the stream into the sender from its other side)
// delivers.
struct Stream {
  int from = 0;
  int to = 0;
  bool right = true;
  double cost = 0.0;
  Index total = 0;
  Index own = 0;
  Index fwd = 0;
  int feeder = -1;
  Index own_started = 0;
  Index fwd_started = 0;
  Index delivered = 0;
  std::size_t last_move = 0;
  bool has_move = false;
};

// One stream per link with a non-zero flow, each forwarding stream linked to its feeder.
std::vector<Stream> streams_of(const Problem &p, const std::vector<Index> &flow) {
  const std::size_t n = flow.size();
  std::vector<Stream> streams;
  std::vector<int> right_of(n, -1); // stream over link k, by direction
  std::vector<int> left_of(n, -1);
  for (std::size_t k = 0; k < n; ++k) {
    if (flow[k] == 0) continue;
    Stream s;
    const std::size_t k1 = wrap(static_cast<Index>(k) + 1, n);
    s.right = flow[k] > 0;
    s.from = static_cast<int>(s.right ? k : k1);
    s.to = static_cast<int>(s.right ? k1 : k);
    s.cost = s.right ? p.c_next[k] : p.c_prev[k1];
    s.total = s.right ? flow[k] : -flow[k];
    s.own = std::min(s.total, p.loads[static_cast<std::size_t>(s.from)]);
    s.fwd = s.total - s.own;
    (s.right ? right_of : left_of)[k] = static_cast<int>(streams.size());
    streams.push_back(s);
  }
  for (Stream &s : streams) {
    if (s.fwd == 0) continue;
    // Rightward from P_f is fed by the rightward stream over link f-1, leftward by link f.
    s.feeder = s.right ? right_of[wrap(s.from - 1, n)] : left_of[static_cast<std::size_t>(s.from)];
    if (s.feeder < 0) throw std::logic_error("ring: forwarding stream without a feeder");
  }
  return streams;
}

// The order in which the streams claim ports at every instant.
std::vector<std::size_t> claim_order(const std::vector<Stream> &streams, Priority priority) {
  std::vector<std::size_t> order(streams.size());
  std::iota(order.begin(), order.end(), std::size_t{0});
  std::vector<int> rank(streams.size(), 0);
  for (std::size_t si = 0; si < streams.size(); ++si) {
    const Stream &s = streams[si];
    const int dir = (s.right == (priority != Priority::leftward)) ? 0 : 1;
    bool feeds = false;
    for (const Stream &o : streams)
      feeds = feeds || (o.fwd > 0 && o.feeder == static_cast<int>(si));
    rank[si] = priority == Priority::feeders ? (feeds ? 0 : 2) + dir : dir;
  }
  std::stable_sort(order.begin(), order.end(),
                   [&](std::size_t a, std::size_t b) { return rank[a] < rank[b]; });
  return order;
}

// Starts the next item of `s` if it has one to send: an own item, else a forwarded one its
// feeder has delivered.
bool start_next_item(Stream &s, const std::vector<Stream> &streams) {
  if (s.own_started < s.own) {
    ++s.own_started;
    return true;
  }
  if (std::min(streams[static_cast<std::size_t>(s.feeder)].delivered, s.fwd) > s.fwd_started) {
    ++s.fwd_started;
    return true;
  }
  return false;
}

// Records one item of `s` sent in [start, finish), extending the stream's last move when the
// item follows it back to back.
void record_item(Stream &s, double start, double finish, std::vector<Move> &moves) {
  if (s.has_move && moves[s.last_move].finish == start) {
    ++moves[s.last_move].items;
    moves[s.last_move].finish = finish;
  } else {
    s.last_move = moves.size();
    s.has_move = true;
    moves.push_back({s.from, s.to, 1, start, finish, s.right});
  }
}

void sort_by_start(std::vector<Move> &moves) {
  std::stable_sort(moves.begin(), moves.end(), [](const Move &a, const Move &b) {
    return a.start < b.start || (a.start == b.start && a.from < b.from);
  });
}

} // namespace

std::vector<Move> greedy_schedule(const Problem &p, const std::vector<Index> &flow, double &time,
                                  Priority priority) {
  const std::size_t n = flow.size();
  std::vector<Stream> streams = streams_of(p, flow);
  const std::vector<std::size_t> order = claim_order(streams, priority);
  std::vector<Move> moves;
  std::vector<double> send_free(n, 0.0);
  std::vector<double> recv_free(n, 0.0);
  using Event = std::pair<double, int>; // an item of a stream arrives
  std::priority_queue<Event, std::vector<Event>, std::greater<>> events;
  double t = 0.0;
  time = 0.0;
  for (;;) {
    for (const std::size_t si : order) {
      Stream &s = streams[si];
      if (s.own_started + s.fwd_started == s.total) continue;
      const auto from = static_cast<std::size_t>(s.from);
      const auto to = static_cast<std::size_t>(s.to);
      if (send_free[from] > t || recv_free[to] > t || !start_next_item(s, streams)) continue;
      const double done = t + s.cost;
      send_free[from] = done;
      recv_free[to] = done;
      events.emplace(done, static_cast<int>(si));
      record_item(s, t, done, moves);
    }
    if (events.empty()) break;
    t = events.top().first;
    while (!events.empty() && events.top().first == t) {
      ++streams[static_cast<std::size_t>(events.top().second)].delivered;
      events.pop();
    }
    time = t;
  }
  for (const Stream &s : streams) {
    if (s.delivered != s.total) throw std::logic_error("ring: greedy schedule stalled");
  }
  sort_by_start(moves);
  return moves;
}

std::vector<Move> best_greedy_schedule(const Problem &p, const std::vector<Index> &flow,
                                       double &time) {
  std::vector<Move> best = greedy_schedule(p, flow, time, Priority::rightward);
  if (p.direction == Direction::unidirectional) return best;
  for (const Priority pr : {Priority::leftward, Priority::feeders}) {
    double t = 0.0;
    std::vector<Move> moves = greedy_schedule(p, flow, t, pr);
    if (t < time) {
      time = t;
      best = std::move(moves);
    }
  }
  return best;
}

std::vector<Move> algorithm3_schedule(const std::vector<Index> &delta_in, Index &steps) {
  const std::size_t n = delta_in.size();
  std::vector<Index> d = delta_in;
  std::vector<Move> moves;
  std::vector<std::size_t> last_right(n, SIZE_MAX);
  std::vector<std::size_t> last_left(n, SIZE_MAX);
  const Index bound = lemma6_steps(d);
  steps = 0;
  std::vector<char> right(n);
  std::vector<char> left(n);
  const auto nx = [&](std::size_t i) { return wrap(static_cast<Index>(i) + 1, n); };
  const auto pv = [&](std::size_t i) { return wrap(static_cast<Index>(i) - 1, n); };
  for (;;) {
    const Index dmax = lemma6_steps(d); // Step 1
    if (dmax == 0) break;
    if (steps == bound) throw std::logic_error("ring: Algorithm 3 did not converge (Lemma 8)");
    std::fill(right.begin(), right.end(), 0);
    std::fill(left.begin(), left.end(), 0);
    // Steps 3-18 over the non-trivial slices C_{k,l} (2 to n-1 processes).
    for (std::size_t k = 0; k < n; ++k) {
      Index s = d[k];
      for (std::size_t len = 2; len < n; ++len) {
        const std::size_t l = wrap(static_cast<Index>(k + len - 1), n);
        s += d[l];
        if (dmax != 2) {
          if (s > 1 && ceil_half(s) == dmax) { // Steps 4-6
            left[k] = 1;
            right[l] = 1;
          }
          if (s < -1 && ceil_half(-s) == dmax) { // Steps 7-9
            right[pv(k)] = 1;
            left[nx(l)] = 1;
          }
        } else {
          if (s >= 3) right[l] = 1;      // Steps 11-12
          if (s == 4) left[k] = 1;       // Steps 13-14
          if (s <= -3) right[pv(k)] = 1; // Steps 15-16
          if (s == -4) left[nx(l)] = 1;  // Steps 17-18
        }
      }
    }
    for (std::size_t i = 0; i < n; ++i) { // Steps 19-21
      if (d[i] == dmax && !right[i] && !left[i]) right[i] = 1;
    }
    for (std::size_t i = 0; i < n; ++i) { // Steps 22-24
      if (d[i] == -dmax && !right[pv(i)] && !left[nx(i)]) right[pv(i)] = 1;
    }
    if (dmax == 1) { // Steps 25-30, to a fixed point along chains of balanced processes
      for (bool changed = true; changed;) {
        changed = false;
        for (std::size_t i = 0; i < n; ++i) {
          if (d[i] != 0) continue;
          if (right[pv(i)] && !right[i]) {
            right[i] = 1;
            changed = true;
          }
          if (left[nx(i)] && !left[i]) {
            left[i] = 1;
            changed = true;
          }
        }
      }
    }
    const auto s0 = static_cast<double>(steps);
    std::vector<Index> next = d;
    for (std::size_t i = 0; i < n; ++i) {
      for (const bool r : {true, false}) {
        if (!(r ? right[i] : left[i])) continue;
        const std::size_t to = r ? nx(i) : pv(i);
        --next[i];
        ++next[to];
        std::size_t &last = (r ? last_right : last_left)[i];
        if (last != SIZE_MAX && moves[last].finish == s0) {
          ++moves[last].items;
          moves[last].finish = s0 + 1.0;
        } else {
          last = moves.size();
          moves.push_back({static_cast<int>(i), static_cast<int>(to), 1, s0, s0 + 1.0, r});
        }
      }
    }
    d.swap(next);
    ++steps;
  }
  sort_by_start(moves);
  return moves;
}

namespace {

std::vector<Index> net_flows(std::size_t n, const std::vector<Move> &moves) {
  std::vector<Index> flow(n, 0);
  for (const Move &m : moves)
    flow[static_cast<std::size_t>(m.rightward ? m.from : m.to)] += m.rightward ? m.items : -m.items;
  return flow;
}

/// Whether every process holds each item it sends when the send starts (an item received at t
/// may leave at t).
bool holds_every_item(const Problem &p, const std::vector<Move> &moves) {
  struct Event {
    double t;
    int arrival; // 1 before 0 at equal times
    std::size_t proc;
  };
  std::vector<Event> events;
  for (const Move &m : moves) {
    const double c = (m.finish - m.start) / static_cast<double>(m.items);
    for (Index j = 0; j < m.items; ++j) {
      events.push_back({m.start + static_cast<double>(j) * c, 0, static_cast<std::size_t>(m.from)});
      events.push_back(
          {m.start + static_cast<double>(j + 1) * c, 1, static_cast<std::size_t>(m.to)});
    }
  }
  std::sort(events.begin(), events.end(), [](const Event &a, const Event &b) {
    return a.t < b.t || (a.t == b.t && a.arrival > b.arrival);
  });
  std::vector<Index> load = p.loads;
  for (const Event &e : events) {
    load[e.proc] += e.arrival ? 1 : -1;
    if (load[e.proc] < 0) return false;
  }
  return true;
}

/// Bidirectional flows by System 6. Light optimum (Proposition 1's rounding x): optimal, with
/// Lemma 9's schedule. Otherwise every schedule with flow x takes at least s6(x) (each process
/// sends and receives serially), and the greedy schedule of a light flow takes exactly s6(x)
/// (Lemma 9). Walk the integers outward from the minimizer in increasing s6 order (convexity)
/// and stop once s6 reaches the best simulated time: the result is the best flow for the greedy
/// schedule, never worse than System 12's light optimum, which is tried first.
Plan search_flows(const Problem &p, const System6 &s6, Index x, const std::vector<Index> &delta) {
  Plan out;
  if (s6.is_light(x)) {
    out.algorithm = Algorithm::light_bi;
    out.flow = flows_with(x, delta);
    out.moves = greedy_schedule(p, out.flow, out.time);
    out.candidates = 1;
    return out;
  }
  double best = inf;
  Index best_x = x;
  const auto evaluate = [&](Index cand) {
    double t = 0.0;
    std::vector<Move> moves = best_greedy_schedule(p, flows_with(cand, delta), t);
    ++out.candidates;
    if (t < best) {
      best = t;
      best_x = cand;
      out.moves = std::move(moves);
    }
  };
  Index lo12 = 0;
  Index hi12 = 0;
  if (s6.light_interval(lo12, hi12)) evaluate(std::clamp(x, lo12, hi12)); // System 12
  evaluate(x);
  Index l = x - 1;
  Index r = x + 1;
  out.search_complete = false;
  while (out.candidates < heuristic_max_candidates) {
    const double fl = s6.at(l);
    const double fr = s6.at(r);
    if (!(std::min(fl, fr) < best)) {
      out.search_complete = true;
      break;
    }
    if (fl <= fr) {
      evaluate(l--);
    } else {
      evaluate(r++);
    }
  }
  out.flow = flows_with(best_x, delta);
  out.time = best;
  out.light = s6.is_light(best_x);
  out.algorithm = out.light && best == s6.at(best_x) && best == s6.at(x) ? Algorithm::light_bi
                                                                         : Algorithm::heuristic_bi;
  return out;
}

} // namespace

// --- The planner ---------------------------------------------------------------------------------

Plan plan(const Problem &p) {
  validate(p);
  const std::size_t n = p.loads.size();
  const std::vector<Index> delta = unbalances(p);
  Plan out;
  out.direction = p.direction;
  out.flow.assign(n, 0);
  if (std::all_of(delta.begin(), delta.end(), [](Index d) { return d == 0; })) return out;
  const auto light_of = [&](const std::vector<Move> &moves) {
    std::vector<Index> sent(n, 0);
    for (const Move &m : moves)
      sent[static_cast<std::size_t>(m.from)] += m.items;
    for (std::size_t k = 0; k < n; ++k) {
      if (sent[k] > p.loads[k]) return false;
    }
    return true;
  };
  double c = 1.0;
  if (p.direction == Direction::unidirectional) {
    out.flow = unidirectional_flows(delta);
    if (all_equal_finite(p.c_next, {}, c)) {
      // Algorithm 1: P_{start+l} sends in steps 1..delta_{start,start+l}, i.e. back to back.
      out.algorithm = Algorithm::homogeneous_uni;
      out.steps = lemma1_delta_max(delta);
      for (std::size_t k = 0; k < n; ++k) {
        if (out.flow[k] > 0)
          out.moves.push_back({static_cast<int>(k),
                               static_cast<int>(wrap(static_cast<Index>(k) + 1, n)), out.flow[k],
                               0.0, cost_of(out.flow[k], c), true});
      }
      out.time = cost_of(out.steps, c);
      out.lower_bound = out.time; // Lemma 1
    } else {
      out.algorithm = Algorithm::heterogeneous_uni; // Algorithm 2
      out.moves = greedy_schedule(p, out.flow, out.time);
      out.lower_bound = theorem2_bound(delta, p.c_next);
    }
    out.light = light_of(out.moves);
    return out;
  }
  const System6 s6(p);
  double xr = 0.0;
  out.system6_rational = s6.rational_min(xr);
  // Proposition 1: rounding R_0 down or up gives an integer optimum.
  auto x = static_cast<Index>(std::floor(xr));
  if (x < s6.feasible_lo() || (x + 1 <= s6.feasible_hi() && s6.at(x + 1) < s6.at(x))) ++x;
  out.system6_integer = s6.at(x);
  out.lower_bound = lemma12_bound(delta, p.c_next, p.c_prev);
  if (all_equal_finite(p.c_next, p.c_prev, c)) {
    out.algorithm = Algorithm::homogeneous_bi; // Algorithm 3
    out.lower_bound = cost_of(lemma6_steps(delta), c);
    std::vector<Move> moves = algorithm3_schedule(delta, out.steps);
    for (Move &m : moves) {
      m.start *= c;
      m.finish *= c;
    }
    if (holds_every_item(p, moves)) {
      out.moves = std::move(moves);
      out.flow = net_flows(n, out.moves);
      out.time = cost_of(out.steps, c);
      out.light = light_of(out.moves);
      return out;
    }
    // Algorithm 3 ignores loads: it may ask a process to send an item it will only receive
    // during the same step. Keep its net flows with the greedy schedule, or the flow search
    // below, whichever is faster.
    out.algorithm3_repaired = true;
    out.flow = net_flows(n, moves);
    out.moves = best_greedy_schedule(p, out.flow, out.time);
    const Plan searched = search_flows(p, s6, x, delta);
    out.candidates = searched.candidates;
    out.search_complete = searched.search_complete;
    if (searched.time < out.time) {
      out.flow = searched.flow;
      out.moves = searched.moves;
      out.time = searched.time;
    }
    out.light = light_of(out.moves);
    return out;
  }
  const Plan searched = search_flows(p, s6, x, delta);
  out.algorithm = searched.algorithm;
  out.flow = searched.flow;
  out.moves = searched.moves;
  out.time = searched.time;
  out.light = searched.light;
  out.candidates = searched.candidates;
  out.search_complete = searched.search_complete;
  return out;
}

// --- Targets and final layout --------------------------------------------------------------------

std::vector<Index> targets_from_weights(Index total, const std::vector<double> &weights) {
  const std::size_t n = weights.size();
  if (n == 0) throw InputError("n", "0", "at least one weight is needed");
  long double sum = 0.0L;
  for (std::size_t k = 0; k < n; ++k) {
    if (!(weights[k] > 0.0) || std::isinf(weights[k]))
      throw InputError(indexed("weights", k), show(weights[k]), "weights must be finite and > 0");
    sum += weights[k];
  }
  if (total < static_cast<Index>(n))
    throw InputError("total", std::to_string(total),
                     "fewer items than processes: every process must keep at least one (" +
                         std::to_string(n) + " processes)");
  // One item each, the rest in proportion to the weights, largest remainders first.
  const Index rest = total - static_cast<Index>(n);
  std::vector<Index> t(n, 1);
  std::vector<std::pair<long double, std::size_t>> remainders(n);
  Index given = 0;
  for (std::size_t k = 0; k < n; ++k) {
    const long double share = static_cast<long double>(rest) * weights[k] / sum;
    const auto whole = std::min(static_cast<Index>(std::floor(share)), rest - given);
    t[k] += whole;
    given += whole;
    remainders[k] = {share - static_cast<long double>(whole), k};
  }
  std::stable_sort(remainders.begin(), remainders.end(),
                   [](const auto &a, const auto &b) { return a.first > b.first; });
  for (std::size_t i = 0; given < rest; i = (i + 1) % n, ++given)
    ++t[remainders[i].second];
  return t;
}

std::vector<Index> final_starts(const std::vector<Index> &loads, const std::vector<Index> &flow) {
  const std::size_t n = loads.size();
  const Index total = std::accumulate(loads.begin(), loads.end(), Index{0});
  std::vector<Index> starts(n);
  Index a = 0;
  for (std::size_t k = 0; k < n; ++k) {
    const Index s = (a - flow[wrap(static_cast<Index>(k) - 1, n)]) % total;
    starts[k] = s < 0 ? s + total : s;
    a += loads[k];
  }
  return starts;
}

std::vector<DirectPiece> direct_pieces(const std::vector<Index> &loads,
                                       const std::vector<Index> &flow, int only_rank) {
  const std::size_t n = loads.size();
  const Index total = std::accumulate(loads.begin(), loads.end(), Index{0});
  const std::vector<Index> starts = final_starts(loads, flow);
  std::vector<Index> first(n + 1, 0); // initial ranges [first[k], first[k+1])
  for (std::size_t k = 0; k < n; ++k)
    first[k + 1] = first[k] + loads[k];
  std::vector<Index> targets(n);
  for (std::size_t k = 0; k < n; ++k)
    targets[k] = loads[k] - flow[k] + flow[wrap(static_cast<Index>(k) - 1, n)];
  std::vector<DirectPiece> pieces;
  const auto overlap = [&](std::size_t p, std::size_t q) {
    // Final range of q: cyclic [starts[q], starts[q] + targets[q]), cut at the end of the
    // sequence into at most two linear ranges.
    const Index s = starts[q];
    const Index e = s + targets[q];
    const Index parts[2][3] = {{s, std::min(e, total), 0}, {0, e - total, total - s}};
    for (const auto &part : parts) {
      const Index lo = std::max(part[0], first[p]);
      const Index hi = std::min(part[1], first[p + 1]);
      if (lo < hi)
        pieces.push_back({static_cast<int>(p), static_cast<int>(q), lo - first[p],
                          part[2] + lo - part[0], hi - lo});
    }
  };
  for (std::size_t p = 0; p < n; ++p) {
    for (std::size_t q = 0; q < n; ++q) {
      if (only_rank < 0 || static_cast<int>(p) == only_rank || static_cast<int>(q) == only_rank)
        overlap(p, q);
    }
  }
  std::sort(pieces.begin(), pieces.end(), [](const DirectPiece &a, const DirectPiece &b) {
    return a.from != b.from ? a.from < b.from
                            : (a.to != b.to ? a.to < b.to : a.from_offset < b.from_offset);
  });
  return pieces;
}

double direct_time(const Problem &p, const std::vector<DirectPiece> &pieces) {
  const std::size_t n = p.loads.size();
  const bool bi = p.direction == Direction::bidirectional;
  std::vector<double> out(n);
  std::vector<double> in(n);
  for (std::size_t k = 0; k < n; ++k) {
    const std::size_t prev = wrap(static_cast<Index>(k) - 1, n);
    const std::size_t next = wrap(static_cast<Index>(k) + 1, n);
    out[k] = bi ? std::min(p.c_next[k], p.c_prev[k]) : p.c_next[k];
    in[k] = bi ? std::min(p.c_next[prev], p.c_prev[next]) : p.c_next[prev];
  }
  std::vector<double> sending(n, 0.0);
  std::vector<double> receiving(n, 0.0);
  for (const DirectPiece &m : pieces) {
    if (m.from == m.to) continue;
    const auto f = static_cast<std::size_t>(m.from);
    const auto t = static_cast<std::size_t>(m.to);
    const double c = cost_of(m.items, std::max(out[f], in[t]));
    sending[f] += c;
    receiving[t] += c;
  }
  double time = 0.0;
  for (std::size_t k = 0; k < n; ++k)
    time = std::max({time, sending[k], receiving[k]});
  return time;
}

} // namespace redist::ring
