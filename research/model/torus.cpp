#include "torus.hpp"

#include <algorithm>
#include <cmath>
#include <numeric>
#include <stdexcept>
#include <utility>

namespace redist::torus {
namespace {

constexpr Index kMaxLinks = Index{1} << 28;

[[noreturn]] void invalid(const std::string &what, long long value, const std::string &reason) {
  throw std::invalid_argument(what + " = " + std::to_string(value) + ": " + reason);
}

/// The way a message crosses one dimension: `hops` links in `direction` (the tie k/2 goes +).
struct Leg {
  int hops = 0;
  int direction = 1;
};

Leg leg(int from, int to, int k) {
  const int forward = static_cast<int>(floor_mod(to - from, k));
  if (forward == 0) return {0, 1};
  if (2 * forward <= k) return {forward, 1};
  return {k - forward, -1};
}

/// Bytes per link, with the links touched since the last reset listed (a step's links are
/// read and cleared without scanning the whole torus).
class Accumulator {
public:
  explicit Accumulator(Index links) : bytes_(static_cast<std::size_t>(links), 0.0) {}

  void add(Index link, double b) {
    double &slot = bytes_[static_cast<std::size_t>(link)];
    if (slot == 0.0) touched_.push_back(link);
    slot += b;
  }
  [[nodiscard]] const std::vector<Index> &touched() const { return touched_; }
  [[nodiscard]] double at(Index link) const { return bytes_[static_cast<std::size_t>(link)]; }
  void clear() {
    for (const Index l : touched_)
      bytes_[static_cast<std::size_t>(l)] = 0.0;
    touched_.clear();
  }
  std::vector<double> release() { return std::move(bytes_); }

private:
  std::vector<double> bytes_;
  std::vector<Index> touched_;
};

/// Walks messages along their ODR or UDR paths, adding their bytes to an Accumulator.
class Router {
public:
  Router(const Torus &torus, Routing routing)
      : torus_(torus), routing_(routing), src_(static_cast<std::size_t>(torus.d())),
        dst_(static_cast<std::size_t>(torus.d())), legs_(static_cast<std::size_t>(torus.d())) {}

  void send(Index src, Index dst, double bytes, Accumulator &out) {
    if (src == dst || bytes == 0.0) return;
    coordinates(src, src_);
    coordinates(dst, dst_);
    differing_.clear();
    for (int i = 0; i < torus_.d(); ++i) {
      const auto u = static_cast<std::size_t>(i);
      legs_[u] = leg(src_[u], dst_[u], torus_.k());
      if (legs_[u].hops > 0) differing_.push_back(i);
    }
    if (routing_ == Routing::ordered || differing_.size() == 1) {
      Index node = src;
      for (const int i : differing_) {
        node = walk(node, i, bytes, out);
      }
      return;
    }
    // UDR: dimension j's segment starts where the dimensions corrected before it (a subset of
    // the other s - 1) hold the destination's coordinates; t! (s-1-t)! of the s! orders put a
    // given subset of size t first, weight 1 / (s * C(s-1, t)).
    const auto s = static_cast<int>(differing_.size());
    weight_.resize(static_cast<std::size_t>(s));
    double binomial = 1.0;
    for (int t = 0; t < s; ++t) {
      weight_[static_cast<std::size_t>(t)] = bytes / (s * binomial);
      binomial = binomial * (s - 1 - t) / (t + 1);
    }
    for (int jj = 0; jj < s; ++jj) {
      const int j = differing_[static_cast<std::size_t>(jj)];
      for (unsigned mask = 0; mask < (1U << (s - 1)); ++mask) {
        Index start = src;
        int before = 0;
        for (int b = 0, bit = 0; b < s; ++b) {
          if (b == jj) continue;
          if ((mask >> bit++) & 1U) {
            const int i = differing_[static_cast<std::size_t>(b)];
            const auto u = static_cast<std::size_t>(i);
            start += (dst_[u] - src_[u]) * torus_.stride(i);
            ++before;
          }
        }
        walk(start, j, weight_[static_cast<std::size_t>(before)], out);
      }
    }
  }

private:
  void coordinates(Index node, std::vector<int> &c) const {
    for (int i = 0; i < torus_.d(); ++i) {
      c[static_cast<std::size_t>(i)] = static_cast<int>(node % torus_.k());
      node /= torus_.k();
    }
  }

  /// Crosses dimension `dim` from `node` (coordinate src_[dim] there) along legs_[dim].
  Index walk(Index node, int dim, double bytes, Accumulator &out) const {
    const auto u = static_cast<std::size_t>(dim);
    const int k = torus_.k();
    const Index stride = torus_.stride(dim);
    const Leg l = legs_[u];
    int coord = src_[u];
    for (int h = 0; h < l.hops; ++h) {
      out.add(torus_.link_id(node, dim, l.direction), bytes);
      if (l.direction > 0) {
        node += coord == k - 1 ? -(k - 1) * stride : stride;
        coord = coord == k - 1 ? 0 : coord + 1;
      } else {
        node += coord == 0 ? (k - 1) * stride : -stride;
        coord = coord == 0 ? k - 1 : coord - 1;
      }
    }
    return node;
  }

  const Torus &torus_;
  Routing routing_;
  std::vector<int> src_;
  std::vector<int> dst_;
  std::vector<Leg> legs_;
  std::vector<int> differing_;
  std::vector<double> weight_; ///< UDR: bytes per order-subset of size t
};

void check_traffic(const Torus &torus, const std::vector<Message> &traffic) {
  for (const Message &m : traffic) {
    if (m.src < 0 || m.src >= torus.ranks())
      invalid("traffic source rank", m.src,
              "outside the " + std::to_string(torus.ranks()) + " ranks of the torus");
    if (m.dst < 0 || m.dst >= torus.ranks())
      invalid("traffic destination rank", m.dst,
              "outside the " + std::to_string(torus.ranks()) + " ranks of the torus");
    if (m.volume < 0) invalid("traffic volume", m.volume, "must be >= 0");
  }
}

void route_into(const Torus &torus, const std::vector<Message> &traffic, std::size_t element_bytes,
                Routing routing, Accumulator &out) {
  Router router(torus, routing);
  const auto bytes = static_cast<double>(element_bytes);
  for (const Message &m : traffic) {
    router.send(torus.node_of_rank(m.src), torus.node_of_rank(m.dst),
                static_cast<double>(m.volume) * bytes, out);
  }
}

/// Adds v to diff over the cyclic range [start, start + length) of Z_k, 0 < length <= k.
void add_cyclic(std::vector<double> &diff, Index start, Index length, double v) {
  const auto k = static_cast<Index>(diff.size()) - 1;
  start = floor_mod(start, k);
  const Index end = start + length;
  diff[static_cast<std::size_t>(start)] += v;
  if (end <= k) {
    diff[static_cast<std::size_t>(end)] -= v;
  } else {
    diff[static_cast<std::size_t>(k)] -= v;
    diff[0] += v;
    diff[static_cast<std::size_t>(end - k)] -= v;
  }
}

/// coefficients[i] is the paper's c_{i+1}.
std::string coefficient_name(std::size_t i) {
  return "coefficients[" + std::to_string(i) + "] (c_" + std::to_string(i + 1) + ")";
}

struct CoordinatePair {
  int from = 0;
  int to = 0;
  double bytes = 0.0;
};

/// Lemma 1 on the slabs of dimension `dim`: updates bounds.slab when a slab does better.
void slab_bounds(const Torus &torus, int dim, std::vector<CoordinatePair> &pairs,
                 LoadBounds &bounds) {
  std::sort(pairs.begin(), pairs.end(), [](const CoordinatePair &a, const CoordinatePair &b) {
    return a.from != b.from ? a.from < b.from : a.to < b.to;
  });
  std::vector<CoordinatePair> merged;
  for (const CoordinatePair &p : pairs) {
    if (!merged.empty() && merged.back().from == p.from && merged.back().to == p.to)
      merged.back().bytes += p.bytes;
    else
      merged.push_back(p);
  }
  const int k = torus.k();
  // Links leaving (entering) a slab: one per node of each of its two faces, one face for k = 2.
  const Index face = torus.nodes() / k;
  const auto links_each_way = static_cast<double>(face * (k == 2 ? 1 : 2));
  std::vector<double> leaving(static_cast<std::size_t>(k) + 1);
  std::vector<double> entering(static_cast<std::size_t>(k) + 1);
  for (int w = 1; 2 * w <= k; ++w) {
    std::fill(leaving.begin(), leaving.end(), 0.0);
    std::fill(entering.begin(), entering.end(), 0.0);
    // Slab [a, a + w) holds coordinate x iff a lies in the cyclic range [x - w + 1, x].
    for (const CoordinatePair &p : merged) {
      add_cyclic(leaving, p.from - w + 1, w, p.bytes);
      add_cyclic(entering, p.to - w + 1, w, p.bytes);
      const int ahead = static_cast<int>(floor_mod(p.to - p.from, k));
      Index both_start = 0;
      Index both_length = 0;
      if (ahead < w) {
        both_start = p.to - w + 1;
        both_length = w - ahead;
      } else if (k - ahead < w) {
        both_start = p.from - w + 1;
        both_length = w - (k - ahead);
      }
      if (both_length > 0) {
        add_cyclic(leaving, both_start, both_length, -p.bytes);
        add_cyclic(entering, both_start, both_length, -p.bytes);
      }
    }
    double out = 0.0;
    double in = 0.0;
    for (int a = 0; a < k; ++a) {
      out += leaving[static_cast<std::size_t>(a)];
      in += entering[static_cast<std::size_t>(a)];
      const double bound = std::max(out, in) / links_each_way;
      if (bound > bounds.slab) {
        bounds.slab = bound;
        bounds.slab_dim = dim;
        bounds.slab_start = a;
        bounds.slab_width = w;
      }
    }
  }
}

/// Largest load among the accumulator's touched links.
void take_max(const Accumulator &acc, double &max, Index &busiest) {
  max = 0.0;
  busiest = -1;
  for (const Index l : acc.touched()) {
    if (acc.at(l) > max || (acc.at(l) == max && l < busiest)) {
      max = acc.at(l);
      busiest = l;
    }
  }
}

} // namespace

const char *placement_name(Placement p) {
  return p == Placement::linear ? "linear" : "rank-order";
}

const char *routing_name(Routing r) {
  return r == Routing::unordered ? "udr" : "odr";
}

Torus::Torus(const Spec &spec, int ranks) : spec_(spec) {
  if (spec.k < 2) invalid("k", spec.k, "must be >= 2");
  if (spec.d < 1) invalid("d", spec.d, "must be >= 1");
  if (ranks < 0) invalid("ranks", ranks, "must be >= 0");
  const auto too_large = [&] {
    throw std::invalid_argument("torus " + std::to_string(spec.k) + "^" + std::to_string(spec.d) +
                                ": more than 2^28 links (the loads are kept per link)");
  };
  nodes_ = 1;
  for (int i = 0; i < spec.d; ++i) {
    strides_.push_back(nodes_);
    if (nodes_ > kMaxLinks / spec.k) too_large();
    nodes_ *= spec.k;
  }
  if (links() > kMaxLinks) too_large();
  const Index k = spec.k;
  rank_nodes_.resize(static_cast<std::size_t>(ranks));
  if (spec.placement == Placement::rank_order) {
    if (ranks > nodes_)
      invalid("ranks", ranks, "more than the " + std::to_string(nodes_) + " nodes of the torus");
    std::iota(rank_nodes_.begin(), rank_nodes_.end(), Index{0});
    return;
  }
  if (spec_.coefficients.empty()) spec_.coefficients.assign(static_cast<std::size_t>(spec.d), 1);
  const std::vector<int> &c = spec_.coefficients;
  if (c.size() != static_cast<std::size_t>(spec.d))
    invalid("coefficients (count)", static_cast<long long>(c.size()),
            "the linear placement needs d = " + std::to_string(spec.d));
  for (std::size_t i = 0; i < c.size(); ++i) {
    if (c[i] < 0 || c[i] >= k)
      invalid(coefficient_name(i), c[i], "must lie in [0, k) = [0, " + std::to_string(k) + ")");
  }
  if (spec.constant < 0 || spec.constant >= k)
    invalid("constant", spec.constant, "must lie in [0, k) = [0, " + std::to_string(k) + ")");
  for (const std::size_t i : {std::size_t{0}, c.size() - 1}) {
    if (std::gcd(Index{c[i]}, k) != 1)
      invalid(coefficient_name(i), c[i],
              "not coprime to k = " + std::to_string(k) +
                  " (the linear placement needs c_1 and c_d coprime to k)");
  }
  const Index capacity = nodes_ / k;
  if (ranks > capacity)
    invalid("ranks", ranks,
            "more than the " + std::to_string(capacity) + " nodes of the linear placement");
  const Index last_inverse = mod_inverse(c.back(), k);
  for (int r = 0; r < ranks; ++r) {
    Index node = 0;
    Index sum = 0;
    Index digits = r;
    for (int i = 0; i + 1 < spec.d; ++i) {
      const Index p = digits % k;
      digits /= k;
      sum += c[static_cast<std::size_t>(i)] * p;
      node += p * stride(i);
    }
    const Index last = floor_mod((spec.constant - sum) * last_inverse, k);
    rank_nodes_[static_cast<std::size_t>(r)] = node + last * stride(spec.d - 1);
  }
}

Index Torus::node_of_rank(int rank) const {
  if (rank < 0 || rank >= ranks())
    invalid("rank", rank, "outside the " + std::to_string(ranks()) + " ranks of the torus");
  return rank_nodes_[static_cast<std::size_t>(rank)];
}

std::vector<int> Torus::coordinates(Index node) const {
  if (node < 0 || node >= nodes_)
    invalid("node", node, "outside the " + std::to_string(nodes_) + " nodes");
  std::vector<int> c(static_cast<std::size_t>(d()));
  for (auto &x : c) {
    x = static_cast<int>(node % k());
    node /= k();
  }
  return c;
}

Index Torus::node_at(const std::vector<int> &coordinates) const {
  if (coordinates.size() != static_cast<std::size_t>(d()))
    invalid("coordinates (count)", static_cast<long long>(coordinates.size()),
            "the torus has d = " + std::to_string(d()));
  Index node = 0;
  for (int i = 0; i < d(); ++i) {
    const int x = coordinates[static_cast<std::size_t>(i)];
    if (x < 0 || x >= k())
      invalid("coordinates[" + std::to_string(i) + "]", x,
              "must lie in [0, " + std::to_string(k()) + ")");
    node += x * stride(i);
  }
  return node;
}

Index Torus::link_id(Index node, int dim, int direction) const {
  return (node * d() + dim) * directions() + (direction > 0 || k() == 2 ? 0 : 1);
}

Link Torus::link(Index id) const {
  if (id < 0 || id >= links())
    invalid("link", id, "outside the " + std::to_string(links()) + " links");
  Link l;
  l.direction = id % directions() == 0 ? 1 : -1;
  id /= directions();
  l.dim = static_cast<int>(id % d());
  l.node = id / d();
  return l;
}

int Torus::distance(Index a, Index b) const {
  int sum = 0;
  for (int i = 0; i < d(); ++i) {
    sum += leg(static_cast<int>(a % k()), static_cast<int>(b % k()), k()).hops;
    a /= k();
    b /= k();
  }
  return sum;
}

double LoadBounds::best() const {
  return std::max({distance, node, slab});
}

LinkLoads route(const Torus &torus, const std::vector<Message> &traffic, std::size_t element_bytes,
                Routing routing) {
  check_traffic(torus, traffic);
  Accumulator acc(torus.links());
  route_into(torus, traffic, element_bytes, routing, acc);
  LinkLoads out;
  take_max(acc, out.max, out.busiest);
  out.bytes = acc.release();
  return out;
}

LoadBounds load_bounds(const Torus &torus, const std::vector<Message> &traffic,
                       std::size_t element_bytes) {
  check_traffic(torus, traffic);
  struct Flow {
    Index src;
    Index dst;
    double bytes;
  };
  std::vector<Flow> flows;
  for (const Message &m : traffic) {
    const Index src = torus.node_of_rank(m.src);
    const Index dst = torus.node_of_rank(m.dst);
    if (src != dst && m.volume > 0)
      flows.push_back(
          {src, dst, static_cast<double>(m.volume) * static_cast<double>(element_bytes)});
  }
  LoadBounds b;
  if (flows.empty()) return b;
  double byte_hops = 0.0;
  for (const Flow &f : flows) {
    byte_hops += f.bytes * torus.distance(f.src, f.dst);
  }
  b.distance = byte_hops / static_cast<double>(torus.links());
  std::vector<std::pair<Index, double>> at_node(flows.size());
  for (const bool sending : {true, false}) {
    for (std::size_t i = 0; i < flows.size(); ++i) {
      at_node[i] = {sending ? flows[i].src : flows[i].dst, flows[i].bytes};
    }
    std::sort(at_node.begin(), at_node.end());
    for (std::size_t i = 0; i < at_node.size();) {
      const Index node = at_node[i].first;
      double sum = 0.0;
      for (; i < at_node.size() && at_node[i].first == node; ++i) {
        sum += at_node[i].second;
      }
      const double bound = sum / torus.degree();
      if (bound > b.node || (bound == b.node && node < b.node_at)) {
        b.node = bound;
        b.node_at = node;
      }
    }
  }
  std::vector<CoordinatePair> pairs;
  for (int dim = 0; dim < torus.d(); ++dim) {
    pairs.clear();
    for (const Flow &f : flows) {
      const auto from = static_cast<int>((f.src / torus.stride(dim)) % torus.k());
      const auto to = static_cast<int>((f.dst / torus.stride(dim)) % torus.k());
      if (from != to) pairs.push_back({from, to, f.bytes});
    }
    slab_bounds(torus, dim, pairs, b);
  }
  return b;
}

std::vector<Message> step_traffic(const Step &step, const std::vector<int> &src_ranks,
                                  const std::vector<int> &dst_ranks) {
  std::vector<Message> out;
  out.reserve(step.pieces.size());
  for (const Piece &p : step.pieces) {
    if (p.src < 0 || static_cast<std::size_t>(p.src) >= src_ranks.size())
      invalid("piece source position", p.src,
              "outside the " + std::to_string(src_ranks.size()) + " source positions");
    if (p.dst < 0 || static_cast<std::size_t>(p.dst) >= dst_ranks.size())
      invalid("piece destination position", p.dst,
              "outside the " + std::to_string(dst_ranks.size()) + " destination positions");
    const int src = src_ranks[static_cast<std::size_t>(p.src)];
    const int dst = dst_ranks[static_cast<std::size_t>(p.dst)];
    if (src != dst) out.push_back({src, dst, p.volume});
  }
  return out;
}

ScheduleLoads schedule_loads(const Torus &torus, const Schedule &schedule,
                             const std::vector<int> &src_ranks, const std::vector<int> &dst_ranks,
                             std::size_t element_bytes, Routing routing) {
  ScheduleLoads out;
  Accumulator step(torus.links());
  Accumulator total(torus.links());
  std::vector<Message> everything;
  for (const Step &s : schedule.steps) {
    const std::vector<Message> traffic = step_traffic(s, src_ranks, dst_ranks);
    check_traffic(torus, traffic);
    route_into(torus, traffic, element_bytes, routing, step);
    double max = 0.0;
    Index busiest = -1;
    take_max(step, max, busiest);
    for (const Index l : step.touched())
      total.add(l, step.at(l));
    step.clear();
    out.step_max.push_back(max);
    out.sum_step_max += max;
    out.step_bounds.push_back(load_bounds(torus, traffic, element_bytes));
    out.sum_step_bounds += out.step_bounds.back().best();
    everything.insert(everything.end(), traffic.begin(), traffic.end());
  }
  take_max(total, out.total.max, out.total.busiest);
  out.total.bytes = total.release();
  out.total_bounds = load_bounds(torus, everything, element_bytes);
  return out;
}

std::vector<double> step_seconds(const Schedule &schedule, const ScheduleLoads &loads,
                                 const CostModel &model, std::size_t element_bytes,
                                 double link_bandwidth) {
  if (!(link_bandwidth > 0.0))
    throw std::invalid_argument("link_bandwidth = " + std::to_string(link_bandwidth) +
                                ": must be > 0 bytes per second");
  if (loads.step_max.size() != schedule.steps.size())
    throw std::invalid_argument("loads: " + std::to_string(loads.step_max.size()) +
                                " steps for a schedule of " +
                                std::to_string(schedule.steps.size()));
  std::vector<double> out;
  out.reserve(schedule.steps.size());
  for (std::size_t s = 0; s < schedule.steps.size(); ++s) {
    const double port = step_port_time(schedule.steps[s], model, element_bytes).seconds;
    out.push_back(std::max(port, loads.step_max[s] / link_bandwidth) + model.step_setup);
  }
  return out;
}

} // namespace redist::torus
