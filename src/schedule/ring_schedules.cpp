// The schedules of Renard, Robert & Vivien 2004: the greedy one-port schedule (Algorithm 2,
// Sec. 4; for a light flow the schedule of Lemma 9, Sec. 6) and Algorithm 3's synchronous steps
// (Sec. 5). Pure, no MPI.

#include "ring.hpp"
#include "ring_arithmetic.hpp"

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <numeric>
#include <queue>
#include <stdexcept>
#include <utility>
#include <vector>

namespace redist::ring {

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

} // namespace redist::ring
