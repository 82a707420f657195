// The torus link-load model (Azizoğlu & Eğecioğlu 1998) against independent oracles: a brute force
// that places ranks by enumerating Z_k^d, walks every message hop by hop on coordinate vectors
// (ODR: one order; UDR: every permutation of the differing dimensions) and evaluates every
// lower bound from its definition (Lemma 1 on every slab, boundary links counted one by one);
// the exact values of docs/references.md; the fully populated ODR closed forms.
#include "reference.hpp"
#include "schedule_matching.hpp"
#include "schedule_support.hpp"
#include "torus.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <map>
#include <numeric>
#include <stdexcept>
#include <string>
#include <tuple>
#include <vector>

namespace redist::test {
namespace {

using torus::Placement;
using torus::Routing;
using torus::Spec;
using torus::Torus;

using Coordinates = std::vector<int>;
/// A directed link: where it starts, its dimension, its direction.
using LinkKey = std::tuple<Coordinates, int, int>;
using Loads = std::map<LinkKey, double>;

bool close(double a, double b) {
  return std::abs(a - b) <= 1e-9 * std::max({1.0, std::abs(a), std::abs(b)});
}

Index power(Index k, int d) {
  Index p = 1;
  for (int i = 0; i < d; ++i) {
    p *= k;
  }
  return p;
}

/// Every point of Z_k^d, the first coordinate varying fastest.
std::vector<Coordinates> all_points(int k, int d) {
  std::vector<Coordinates> out;
  Coordinates p(static_cast<std::size_t>(d), 0);
  for (Index n = 0; n < power(k, d); ++n) {
    out.push_back(p);
    for (auto &x : p) {
      if (++x < k) break;
      x = 0;
    }
  }
  return out;
}

/// The brute-force placement: rank order takes the points in order; the linear placement keeps
/// the points with sum c_i p_i = c (mod k) and numbers them by their first d-1 coordinates read
/// as base-k digits, p_0 the least significant.
std::vector<Coordinates> reference_placement(const Spec &spec, int ranks) {
  std::vector<Coordinates> points = all_points(spec.k, spec.d);
  if (spec.placement == Placement::linear) {
    std::vector<int> c = spec.coefficients;
    if (c.empty()) c.assign(static_cast<std::size_t>(spec.d), 1);
    std::erase_if(points, [&](const Coordinates &p) {
      long long sum = 0;
      for (std::size_t i = 0; i < p.size(); ++i) {
        sum += static_cast<long long>(c[i]) * p[i];
      }
      return sum % spec.k != spec.constant;
    });
    const auto number = [&](const Coordinates &p) {
      Index n = 0;
      for (int i = spec.d - 2; i >= 0; --i) {
        n = n * spec.k + p[static_cast<std::size_t>(i)];
      }
      return n;
    };
    std::sort(points.begin(), points.end(),
              [&](const Coordinates &a, const Coordinates &b) { return number(a) < number(b); });
  }
  points.resize(static_cast<std::size_t>(ranks));
  return points;
}

/// Walks dimension `dim` from `at` towards `to` the short way, the tie k/2 going +.
void walk_dimension(Coordinates &at, const Coordinates &to, int dim, int k, double bytes,
                    Loads &loads) {
  auto &x = at[static_cast<std::size_t>(dim)];
  const int target = to[static_cast<std::size_t>(dim)];
  const int forward = ((target - x) % k + k) % k;
  const int backward = (k - forward) % k;
  const int direction = forward <= backward ? +1 : -1;
  while (x != target) {
    loads[{at, dim, direction}] += bytes;
    x = ((x + direction) % k + k) % k;
  }
}

Loads reference_loads(int k, const std::vector<Coordinates> &where,
                      const std::vector<Message> &traffic, std::size_t element_bytes,
                      Routing routing) {
  Loads loads;
  for (const Message &m : traffic) {
    const Coordinates &p = where[static_cast<std::size_t>(m.src)];
    const Coordinates &q = where[static_cast<std::size_t>(m.dst)];
    const auto bytes = static_cast<double>(m.volume * static_cast<Index>(element_bytes));
    std::vector<int> order;
    for (std::size_t i = 0; i < p.size(); ++i) {
      if (p[i] != q[i]) order.push_back(static_cast<int>(i));
    }
    if (order.empty() || bytes == 0) continue;
    if (routing == Routing::ordered) {
      Coordinates at = p;
      for (const int dim : order) {
        walk_dimension(at, q, dim, k, bytes, loads);
      }
      continue;
    }
    std::vector<std::vector<int>> orders;
    do {
      orders.push_back(order);
    } while (std::next_permutation(order.begin(), order.end()));
    for (const auto &o : orders) {
      Coordinates at = p;
      for (const int dim : o) {
        walk_dimension(at, q, dim, k, bytes / static_cast<double>(orders.size()), loads);
      }
    }
  }
  std::erase_if(loads, [](const auto &entry) { return entry.second == 0.0; });
  return loads;
}

double max_load(const Loads &loads) {
  double best = 0.0;
  for (const auto &[link, bytes] : loads) {
    best = std::max(best, bytes);
  }
  return best;
}

/// The production loads, keyed like the reference through the torus's link decoding.
Loads production_loads(const Torus &t, const torus::LinkLoads &l) {
  Loads out;
  for (Index id = 0; id < static_cast<Index>(l.bytes.size()); ++id) {
    if (l.bytes[static_cast<std::size_t>(id)] == 0.0) continue;
    const torus::Link link = t.link(id);
    out[{t.coordinates(link.node), link.dim, link.direction}] =
        l.bytes[static_cast<std::size_t>(id)];
  }
  return out;
}

::testing::AssertionResult same_loads(const Loads &expected, const Loads &actual) {
  if (expected.size() != actual.size())
    return ::testing::AssertionFailure() << expected.size() << " links loaded by the reference, "
                                         << actual.size() << " by the model";
  for (const auto &[link, bytes] : expected) {
    const auto it = actual.find(link);
    if (it == actual.end() || !close(bytes, it->second))
      return ::testing::AssertionFailure()
             << "link dim " << std::get<1>(link) << " dir " << std::get<2>(link) << ": reference "
             << bytes << ", model " << (it == actual.end() ? 0.0 : it->second);
  }
  return ::testing::AssertionSuccess();
}

std::vector<Message> complete_exchange(int ranks) {
  std::vector<Message> out;
  for (int p = 0; p < ranks; ++p) {
    for (int q = 0; q < ranks; ++q) {
      if (p != q) out.push_back({p, q, 1});
    }
  }
  return out;
}

/// The bounds from their definitions: Lee distances summed, every node's traffic, and every
/// slab of every width with its boundary links found by enumerating all links.
torus::LoadBounds reference_bounds(int k, int d, const std::vector<Coordinates> &where,
                                   const std::vector<Message> &traffic, std::size_t element_bytes) {
  torus::LoadBounds b;
  const int directions = k == 2 ? 1 : 2;
  const Index links = power(k, d) * d * directions;
  std::vector<std::tuple<Coordinates, Coordinates, double>> flows;
  for (const Message &m : traffic) {
    const Coordinates &p = where[static_cast<std::size_t>(m.src)];
    const Coordinates &q = where[static_cast<std::size_t>(m.dst)];
    if (p != q && m.volume > 0)
      flows.emplace_back(p, q, static_cast<double>(m.volume * static_cast<Index>(element_bytes)));
  }
  double byte_hops = 0.0;
  std::map<Coordinates, double> sent;
  std::map<Coordinates, double> received;
  for (const auto &[p, q, bytes] : flows) {
    for (std::size_t i = 0; i < p.size(); ++i) {
      const int forward = ((q[i] - p[i]) % k + k) % k;
      byte_hops += bytes * std::min(forward, k - forward);
    }
    sent[p] += bytes;
    received[q] += bytes;
  }
  b.distance = byte_hops / static_cast<double>(links);
  for (const auto *side : {&sent, &received}) {
    for (const auto &[node, bytes] : *side) {
      b.node = std::max(b.node, bytes / (d * directions));
    }
  }
  const std::vector<Coordinates> points = all_points(k, d);
  for (int dim = 0; dim < d; ++dim) {
    for (int start = 0; start < k; ++start) {
      for (int width = 1; width < k; ++width) {
        const auto inside = [&](const Coordinates &p) {
          return ((p[static_cast<std::size_t>(dim)] - start) % k + k) % k < width;
        };
        double leaving_links = 0;
        double entering_links = 0;
        for (const Coordinates &p : points) {
          for (int i = 0; i < d; ++i) {
            for (const int dir : {+1, -1}) {
              if (k == 2 && dir < 0) continue; // one link each way
              Coordinates q = p;
              q[static_cast<std::size_t>(i)] = (q[static_cast<std::size_t>(i)] + dir + k) % k;
              if (inside(p) && !inside(q)) ++leaving_links;
              if (!inside(p) && inside(q)) ++entering_links;
            }
          }
        }
        double out = 0.0;
        double in = 0.0;
        for (const auto &[p, q, bytes] : flows) {
          if (inside(p) && !inside(q)) out += bytes;
          if (!inside(p) && inside(q)) in += bytes;
        }
        b.slab = std::max({b.slab, out / leaving_links, in / entering_links});
      }
    }
  }
  return b;
}

Spec spec_of(int k, int d, Placement placement = Placement::rank_order,
             std::vector<int> coefficients = {}, int constant = 0) {
  Spec s;
  s.k = k;
  s.d = d;
  s.placement = placement;
  s.coefficients = std::move(coefficients);
  s.constant = constant;
  return s;
}

/// A random torus with at most ~250 nodes and a random placement of some ranks on it.
Spec random_spec(Random &rng, int &ranks) {
  for (;;) {
    const int k = rng.uniform_int(2, 7);
    const int d = rng.uniform_int(1, 4);
    if (power(k, d) > 250) continue;
    Spec s = spec_of(k, d);
    Index capacity = power(k, d);
    if (d >= 2 && rng.chance(40)) {
      s.placement = Placement::linear;
      for (int i = 0; i < d; ++i) {
        int c = 0;
        do {
          c = rng.uniform_int(0, k - 1);
        } while ((i == 0 || i == d - 1) && std::gcd(c, k) != 1);
        s.coefficients.push_back(c);
      }
      s.constant = rng.uniform_int(0, k - 1);
      capacity = power(k, d - 1);
    }
    ranks = static_cast<int>(rng.uniform(1, capacity));
    return s;
  }
}

std::vector<Message> random_traffic(Random &rng, int ranks) {
  std::vector<Message> out;
  const int count = rng.uniform_int(0, 3 * ranks);
  out.reserve(static_cast<std::size_t>(count));
  for (int i = 0; i < count; ++i) {
    out.push_back(
        {rng.uniform_int(0, ranks - 1), rng.uniform_int(0, ranks - 1), rng.uniform(0, 9)});
  }
  return out;
}

std::string describe(const Spec &s, int ranks) {
  std::string out = std::to_string(s.k) + "^" + std::to_string(s.d) + " " +
                    torus::placement_name(s.placement) + " ranks=" + std::to_string(ranks);
  for (const int c : s.coefficients) {
    out += " " + std::to_string(c);
  }
  return out + " c=" + std::to_string(s.constant);
}

TEST(Torus, RejectsBadShapesAndPlacements) {
  const auto message = [](const Spec &s, int ranks) -> std::string {
    try {
      const Torus t(s, ranks);
    } catch (const std::invalid_argument &e) {
      return e.what();
    }
    return "accepted";
  };
  EXPECT_EQ(message(spec_of(1, 3), 1), "k = 1: must be >= 2");
  EXPECT_EQ(message(spec_of(4, 0), 1), "d = 0: must be >= 1");
  EXPECT_EQ(message(spec_of(3, 2), 10), "ranks = 10: more than the 9 nodes of the torus");
  EXPECT_EQ(message(spec_of(3, 2, Placement::linear), 4),
            "ranks = 4: more than the 3 nodes of the linear placement");
  EXPECT_EQ(
      message(spec_of(4, 3, Placement::linear, {2, 1, 1}), 1),
      "coefficients[0] (c_1) = 2: not coprime to k = 4 (the linear placement needs c_1 and c_d "
      "coprime to k)");
  EXPECT_EQ(message(spec_of(4, 3, Placement::linear, {1, 2, 6}), 1),
            "coefficients[2] (c_3) = 6: must lie in [0, k) = [0, 4)");
  EXPECT_EQ(
      message(spec_of(6, 3, Placement::linear, {1, 1, 3}), 1),
      "coefficients[2] (c_3) = 3: not coprime to k = 6 (the linear placement needs c_1 and c_d "
      "coprime to k)");
  EXPECT_EQ(message(spec_of(5, 3, Placement::linear, {1, 1}), 1),
            "coefficients (count) = 2: the linear placement needs d = 3");
  EXPECT_EQ(message(spec_of(5, 3, Placement::linear, {1, 1, 1}, 5), 1),
            "constant = 5: must lie in [0, k) = [0, 5)");
  EXPECT_EQ(message(spec_of(1 << 15, 2), 1),
            "torus 32768^2: more than 2^28 links (the loads are kept per link)");
  EXPECT_EQ(message(spec_of(2, 24), 1),
            "torus 2^24: more than 2^28 links (the loads are kept per link)");
  EXPECT_EQ(message(spec_of(2, 23), 1), "accepted"); // 23 * 2^23 links
  // A middle coefficient need not be coprime to k.
  EXPECT_EQ(message(spec_of(4, 3, Placement::linear, {1, 2, 3}, 2), 16), "accepted");

  const Torus t(spec_of(3, 2), 4);
  EXPECT_THROW((void)torus::route(t, {{0, 4, 1}}, 8, Routing::ordered), std::invalid_argument);
  EXPECT_THROW((void)torus::route(t, {{0, 1, -1}}, 8, Routing::ordered), std::invalid_argument);
  EXPECT_THROW((void)torus::load_bounds(t, {{-1, 1, 1}}, 8), std::invalid_argument);
  Step step;
  step.pieces.push_back({2, 0, 0, 1});
  EXPECT_THROW((void)torus::step_traffic(step, {0, 1}, {2}), std::invalid_argument);
}

TEST(Torus, NodesAreBaseKDigitsAndTwoIsAHypercube) {
  const Torus t(spec_of(3, 3), 27);
  EXPECT_EQ(t.nodes(), 27);
  EXPECT_EQ(t.links(), 2 * 3 * 27);
  EXPECT_EQ(t.degree(), 6);
  EXPECT_EQ(t.coordinates(5), (Coordinates{2, 1, 0}));
  EXPECT_EQ(t.coordinates(26), (Coordinates{2, 2, 2}));
  EXPECT_EQ(t.node_at({1, 0, 2}), 19);
  EXPECT_EQ(t.node_of_rank(11), 11);
  EXPECT_EQ(t.distance(t.node_at({0, 0, 0}), t.node_at({2, 1, 1})), 3);
  std::vector<char> seen(static_cast<std::size_t>(t.links()), 0);
  for (Index n = 0; n < t.nodes(); ++n) {
    for (int dim = 0; dim < 3; ++dim) {
      for (const int dir : {1, -1}) {
        const Index id = t.link_id(n, dim, dir);
        ASSERT_GE(id, 0);
        ASSERT_LT(id, t.links());
        EXPECT_EQ(seen[static_cast<std::size_t>(id)]++, 0);
        const torus::Link l = t.link(id);
        EXPECT_EQ(l.node, n);
        EXPECT_EQ(l.dim, dim);
        EXPECT_EQ(l.direction, dir);
      }
    }
  }
  // k = 2: one link each way per dimension (Definition 1's edge set), d 2^d links, degree d.
  const Torus cube(spec_of(2, 4), 16);
  EXPECT_EQ(cube.links(), 4 * 16);
  EXPECT_EQ(cube.degree(), 4);
  EXPECT_EQ(cube.link_id(5, 2, -1), cube.link_id(5, 2, +1));
  EXPECT_EQ(cube.link(cube.link_id(5, 2, -1)).direction, 1);
}

TEST(Torus, LinearPlacementMatchesEnumeration) {
  Random rng(71);
  for (int trial = 0; trial < 60; ++trial) {
    const int k = rng.uniform_int(2, 8);
    const int d = rng.uniform_int(1, 4);
    if (power(k, d) > 4096) continue;
    std::vector<int> c;
    for (int i = 0; i < d; ++i) {
      int v = 0;
      do {
        v = rng.uniform_int(0, k - 1);
      } while ((i == 0 || i == d - 1) && std::gcd(v, k) != 1);
      c.push_back(v);
    }
    const Spec s = spec_of(k, d, Placement::linear, c, rng.uniform_int(0, k - 1));
    const int ranks = static_cast<int>(power(k, d - 1));
    const Torus t(s, ranks);
    const std::vector<Coordinates> expected = reference_placement(s, ranks);
    ASSERT_EQ(expected.size(), static_cast<std::size_t>(ranks)) << describe(s, ranks);
    for (int r = 0; r < ranks; ++r) {
      EXPECT_EQ(t.coordinates(t.node_of_rank(r)), expected[static_cast<std::size_t>(r)])
          << describe(s, ranks) << " rank " << r;
    }
  }
}

// docs/references.md, Azizoğlu & Eğecioğlu 1998, "Exact values": linear placement c_i = 1,
// c = 0, complete exchange of unit messages. Columns: d, k, |P|, ODR E_max, UDR E_max,
// bound (1) = (|P| - 1)/(2d).
TEST(Torus, ReproducesTheNotesTable) {
  struct Row {
    int d, k, processors;
    double odr, udr, bound1;
  };
  const Row rows[] = {
      {2, 3, 3, 1, 1.0 / 2, 1.0 / 2}, {2, 5, 5, 2, 1, 1},          {2, 7, 7, 3, 3.0 / 2, 3.0 / 2},
      {3, 3, 9, 3, 4.0 / 3, 4.0 / 3}, {3, 5, 25, 10, 13.0 / 3, 4}, {3, 7, 49, 21, 9, 8},
      {4, 5, 125, 50, 20, 31.0 / 2},
  };
  for (const Row &row : rows) {
    SCOPED_TRACE("d=" + std::to_string(row.d) + " k=" + std::to_string(row.k));
    const Spec s = spec_of(row.k, row.d, Placement::linear);
    const Torus t(s, row.processors);
    EXPECT_THROW(Torus(s, row.processors + 1), std::invalid_argument); // |P| = k^(d-1)
    const std::vector<Message> all = complete_exchange(row.processors);
    EXPECT_DOUBLE_EQ(torus::route(t, all, 1, Routing::ordered).max, row.odr);
    EXPECT_NEAR(torus::route(t, all, 1, Routing::unordered).max, row.udr, 1e-12);
    const torus::LoadBounds b = torus::load_bounds(t, all, 1);
    EXPECT_DOUBLE_EQ(b.node, row.bound1);
    EXPECT_DOUBLE_EQ(b.node, static_cast<double>(row.processors - 1) / (2 * row.d));
    EXPECT_LE(b.best(), row.udr + 1e-12);
  }
}

// docs/references.md: ODR on the linear placement gives floor(k/2) k^(d-2) (Theorem 3 as printed,
// k^(d-1)/8, is wrong); UDR stays within Theorem 5's 2^(d-1) k^(d-1).
TEST(Torus, LinearPlacementTheorems) {
  for (int d = 2; d <= 4; ++d) {
    for (int k = 2; k <= 9 && power(k, d) <= 4096; ++k) {
      SCOPED_TRACE("d=" + std::to_string(d) + " k=" + std::to_string(k));
      const int processors = static_cast<int>(power(k, d - 1));
      const Torus t(spec_of(k, d, Placement::linear), processors);
      const std::vector<Message> all = complete_exchange(processors);
      const Index half_k = k / 2; // floor
      EXPECT_DOUBLE_EQ(torus::route(t, all, 1, Routing::ordered).max,
                       static_cast<double>(half_k * power(k, d - 2)));
      EXPECT_LE(torus::route(t, all, 1, Routing::unordered).max,
                static_cast<double>(power(2, d - 1) * power(k, d - 1)));
    }
  }
}

// docs/references.md: the fully populated torus with ODR has E_max = k^(d-1) (k^2 - 1)/8 for odd k
// and k^(d-1) k (k + 2)/8 for even k: (5,2) -> 15, (6,2) -> 36, (4,3) -> 48.
TEST(Torus, FullyPopulatedOdrClosedForm) {
  const auto closed_form = [](Index k, int d) {
    return k % 2 == 1 ? power(k, d - 1) * (k * k - 1) / 8 : power(k, d - 1) * k * (k + 2) / 8;
  };
  EXPECT_EQ(closed_form(5, 2), 15);
  EXPECT_EQ(closed_form(6, 2), 36);
  EXPECT_EQ(closed_form(4, 3), 48);
  for (int d = 1; d <= 4; ++d) {
    for (int k = 2; k <= 9 && power(k, d) <= 1024; ++k) {
      SCOPED_TRACE("d=" + std::to_string(d) + " k=" + std::to_string(k));
      const auto nodes = static_cast<int>(power(k, d));
      const Torus t(spec_of(k, d), nodes);
      EXPECT_DOUBLE_EQ(torus::route(t, complete_exchange(nodes), 1, Routing::ordered).max,
                       static_cast<double>(closed_form(k, d)));
    }
  }
}

TEST(Torus, RandomTrafficMatchesHopByHopReference) {
  Random rng(2024);
  for (int trial = 0; trial < 300; ++trial) {
    int ranks = 0;
    const Spec s = random_spec(rng, ranks);
    const Torus t(s, ranks);
    const std::vector<Coordinates> where = reference_placement(s, ranks);
    const std::vector<Message> traffic = random_traffic(rng, ranks);
    const auto element_bytes = static_cast<std::size_t>(rng.uniform_int(1, 16));
    SCOPED_TRACE(describe(s, ranks) + " messages=" + std::to_string(traffic.size()));
    const torus::LoadBounds bounds = torus::load_bounds(t, traffic, element_bytes);
    const torus::LoadBounds expected = reference_bounds(s.k, s.d, where, traffic, element_bytes);
    EXPECT_TRUE(close(bounds.distance, expected.distance)) << bounds.distance;
    EXPECT_TRUE(close(bounds.node, expected.node)) << bounds.node << " vs " << expected.node;
    EXPECT_TRUE(close(bounds.slab, expected.slab)) << bounds.slab << " vs " << expected.slab;
    for (const Routing routing : {Routing::ordered, Routing::unordered}) {
      const torus::LinkLoads loads = torus::route(t, traffic, element_bytes, routing);
      const Loads reference = reference_loads(s.k, where, traffic, element_bytes, routing);
      EXPECT_TRUE(same_loads(reference, production_loads(t, loads)))
          << torus::routing_name(routing);
      EXPECT_TRUE(close(loads.max, max_load(reference)));
      if (loads.busiest >= 0) {
        EXPECT_EQ(loads.bytes[static_cast<std::size_t>(loads.busiest)], loads.max);
      }
      EXPECT_LE(bounds.best(), loads.max * (1 + 1e-12)) << torus::routing_name(routing);
    }
  }
}

// Lemma 1 for a complete exchange: the slab bound is max over slabs of 2|S|(|P| - |S|)/|dS|,
// |S| the processors in the slab, |dS| = 4 k^(d-1) directed links (k >= 3).
TEST(Torus, SlabBoundIsLemma1ForCompleteExchange) {
  for (const auto &shape : {std::pair{5, 3}, {7, 2}, {4, 3}, {6, 2}}) {
    const int k = shape.first;
    const int d = shape.second;
    SCOPED_TRACE("d=" + std::to_string(d) + " k=" + std::to_string(k));
    const Spec s = spec_of(k, d, Placement::linear);
    const auto processors = static_cast<int>(power(k, d - 1));
    const std::vector<Coordinates> where = reference_placement(s, processors);
    double lemma1 = 0.0;
    for (int dim = 0; dim < d; ++dim) {
      for (int start = 0; start < k; ++start) {
        for (int width = 1; width < k; ++width) {
          const auto inside = std::count_if(where.begin(), where.end(), [&](const Coordinates &p) {
            return ((p[static_cast<std::size_t>(dim)] - start) % k + k) % k < width;
          });
          lemma1 = std::max(lemma1, 2.0 * static_cast<double>(inside * (processors - inside)) /
                                        static_cast<double>(4 * power(k, d - 1)));
        }
      }
    }
    const Torus t(s, processors);
    EXPECT_DOUBLE_EQ(torus::load_bounds(t, complete_exchange(processors), 1).slab, lemma1);
  }
}

TEST(Torus, ScheduleLoadsAddUpStepByStep) {
  Random rng(5);
  for (int trial = 0; trial < 60; ++trial) {
    const VolumeGraph g = random_graph(rng, 7, 50, 20);
    const Schedule schedule = rng.chance(50) ? schedule_stepwise(g) : schedule_all_at_once(g);
    int ranks = 0;
    Spec s;
    do {
      s = random_spec(rng, ranks);
    } while (ranks < std::max(g.senders, g.receivers));
    const Torus t(s, ranks);
    // Source and destination positions on random ranks; the two sets may overlap.
    std::vector<int> src_ranks(static_cast<std::size_t>(ranks));
    std::iota(src_ranks.begin(), src_ranks.end(), 0);
    std::vector<int> dst_ranks = src_ranks;
    for (std::size_t i = src_ranks.size(); i > 1; --i) {
      std::swap(src_ranks[i - 1],
                src_ranks[static_cast<std::size_t>(rng.uniform(0, Index(i) - 1))]);
      std::swap(dst_ranks[i - 1],
                dst_ranks[static_cast<std::size_t>(rng.uniform(0, Index(i) - 1))]);
    }
    src_ranks.resize(static_cast<std::size_t>(g.senders));
    dst_ranks.resize(static_cast<std::size_t>(g.receivers));
    const Routing routing = rng.chance(50) ? Routing::ordered : Routing::unordered;
    const torus::ScheduleLoads loads =
        torus::schedule_loads(t, schedule, src_ranks, dst_ranks, 4, routing);
    ASSERT_EQ(loads.step_max.size(), schedule.steps.size());
    const std::vector<Coordinates> where = reference_placement(s, ranks);
    Loads total;
    double sum_step_max = 0.0;
    for (std::size_t i = 0; i < schedule.steps.size(); ++i) {
      std::vector<Message> traffic;
      for (const Piece &p : schedule.steps[i].pieces) {
        traffic.push_back({src_ranks[static_cast<std::size_t>(p.src)],
                           dst_ranks[static_cast<std::size_t>(p.dst)], p.volume});
      }
      const Loads step = reference_loads(s.k, where, traffic, 4, routing);
      EXPECT_TRUE(close(loads.step_max[i], max_load(step))) << "step " << i;
      EXPECT_LE(loads.step_bounds[i].best(), loads.step_max[i] * (1 + 1e-12));
      sum_step_max += max_load(step);
      for (const auto &[link, bytes] : step) {
        total[link] += bytes;
      }
    }
    EXPECT_TRUE(close(loads.sum_step_max, sum_step_max));
    EXPECT_LE(loads.sum_step_bounds, loads.sum_step_max * (1 + 1e-12));
    EXPECT_TRUE(same_loads(total, production_loads(t, loads.total)));
    EXPECT_TRUE(close(loads.total.max, max_load(total)));
    EXPECT_LE(loads.total_bounds.best(), loads.total.max * (1 + 1e-12));
    EXPECT_LE(loads.total.max, loads.sum_step_max * (1 + 1e-12));
  }
}

// A 4-ring, ranks in order, 2-byte elements, alpha 1 s, beta 0.25 s/byte, 4 bytes/s per link,
// 0.5 s per step. Step 0: 0->2 and 1->3, 4 elements each: link 1->2 carries 16 bytes (0 -> 1 ->
// 2 takes the tie +), 4 s; the busiest port 1 + 0.25 * 8 = 3 s; 4.5 s with the setup. Step 1:
// 0->1, 1 element: port 1.5 s, link 0.5 s: 2 s. Step 2 is empty: alpha, 1.5 s.
TEST(Torus, PredictedTimeIsTheSlowerOfPortsAndLinks) {
  const Torus ring(spec_of(4, 1), 4);
  Schedule schedule;
  schedule.steps.resize(3);
  schedule.steps[0].pieces = {{0, 2, 0, 4}, {1, 3, 0, 4}};
  schedule.steps[1].pieces = {{0, 1, 0, 1}};
  const std::vector<int> identity{0, 1, 2, 3};
  const torus::ScheduleLoads loads =
      torus::schedule_loads(ring, schedule, identity, identity, 2, Routing::ordered);
  EXPECT_EQ(loads.step_max, (std::vector<double>{16, 2, 0}));
  EXPECT_EQ(loads.total.busiest, ring.link_id(1, 0, +1));
  CostModel model;
  model.alpha = 1.0;
  model.beta = 0.25;
  model.step_setup = 0.5;
  EXPECT_EQ(torus::step_seconds(schedule, loads, model, 2, 4.0),
            (std::vector<double>{4.5, 2.0, 1.5}));
  EXPECT_THROW((void)torus::step_seconds(schedule, loads, model, 2, 0.0), std::invalid_argument);
  // Step 0's bounds. Distance: 2 messages x 8 bytes x 2 hops over 8 links. Node: 8 bytes over
  // 2 out-links. Slab {0, 1}: both messages leave it, 16 bytes over 2 links.
  const torus::LoadBounds b =
      torus::load_bounds(ring, torus::step_traffic(schedule.steps[0], identity, identity), 2);
  EXPECT_DOUBLE_EQ(b.distance, 32.0 / 8);
  EXPECT_DOUBLE_EQ(b.node, 4.0);
  EXPECT_DOUBLE_EQ(b.slab, 8.0);
  EXPECT_EQ(b.slab_start, 0);
  EXPECT_EQ(b.slab_width, 2);
}

} // namespace
} // namespace redist::test
