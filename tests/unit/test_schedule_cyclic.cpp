// Closed-form schedules (schedule_cyclic.hpp) against the checker, brute-force degrees and the
// numbers printed in the papers: Desprez et al. 1998 (as reconstructed in docs/references.md)
// and the Evers 2025 review's Tables 4.8, 4.10 (Walker & Otto 1996) and 4.16 (Park, Prasanna
// & Raghavendra 1999).
#include "schedule_cyclic.hpp"
#include "schedule_support.hpp"

#include <map>
#include <numeric>

namespace redist::test {
namespace {

constexpr ScheduleLimits kMatching{true, 0};

Index eff_block(const BlockCyclic &d) {
  return d.nprocs == 1 ? 1 : d.block;
}

// The documented conditions, restated independently of src/.
bool aligned_ok(const Transfer1D &t) {
  return t.src_start % eff_block(t.src) == 0 && t.dst_start % eff_block(t.dst) == 0;
}
bool class_condition(const Transfer1D &t) {
  const Index r = eff_block(t.src);
  const Index s = eff_block(t.dst);
  const Index d = std::gcd(r, s);
  return aligned_ok(t) && std::gcd(r / d, Index{t.dst.nprocs}) == 1 &&
         std::gcd(s / d, Index{t.src.nprocs}) == 1;
}
bool walker_otto_condition(const Transfer1D &t) {
  const Index r = eff_block(t.src);
  const Index s = eff_block(t.dst);
  return aligned_ok(t) && t.src.nprocs == t.dst.nprocs && (s % r == 0 || r % s == 0);
}
bool circulant_condition(const Transfer1D &t) {
  const Index r = eff_block(t.src);
  const Index s = eff_block(t.dst);
  return aligned_ok(t) && ((s % r == 0 && t.src.nprocs <= t.dst.nprocs) ||
                           (r % s == 0 && t.dst.nprocs <= t.src.nprocs));
}

Index period_of(const Transfer1D &t) {
  return std::lcm(t.src.nprocs * eff_block(t.src), t.dst.nprocs * eff_block(t.dst));
}

// A random transfer between CYCLIC(r) on P and CYCLIC(s) on Q: whole periods, ragged or tiny
// windows, mostly on block boundaries, random first processes.
Transfer1D make_transfer(Random &rng, int P, int Q, Index r, Index s) {
  Transfer1D t;
  t.src = {0, r, P, rng.uniform_int(0, P - 1)};
  t.dst = {0, s, Q, rng.uniform_int(0, Q - 1)};
  const Index L = period_of(t);
  const int mode = rng.uniform_int(0, 9);
  if (mode < 5) {
    t.length = L * rng.uniform(1, 3);
  } else if (mode < 8) {
    t.length = rng.uniform(1, 3 * L);
  } else {
    t.length = rng.uniform(0, r + s);
  }
  const bool misaligned = rng.chance(10);
  t.src_start = misaligned ? rng.uniform(0, 30) : r * rng.uniform(0, 5);
  t.dst_start = misaligned ? rng.uniform(0, 30) : s * rng.uniform(0, 5);
  t.src.extent = t.src_start + t.length + rng.uniform(0, 10);
  t.dst.extent = t.dst_start + t.length + rng.uniform(0, 10);
  return t;
}

bool whole_periods(const Transfer1D &t) {
  return aligned_ok(t) && t.length % period_of(t) == 0;
}

Index sum_step_max(const Schedule &s) {
  Index total = 0;
  for (const Step &step : s.steps) {
    total += step.largest();
  }
  return total;
}

bool uniform_steps(const Schedule &s) {
  for (const Step &step : s.steps) {
    for (const Piece &p : step.pieces) {
      if (p.volume != step.pieces.front().volume) {
        return false;
      }
    }
  }
  return true;
}

// step -> (sender -> receiver), for comparison with the papers' send tables.
std::vector<std::map<int, int>> send_table(const Schedule &s) {
  std::vector<std::map<int, int>> rows;
  for (const Step &step : s.steps) {
    std::map<int, int> row;
    for (const Piece &p : step.pieces) {
      row[p.src] = p.dst;
    }
    rows.push_back(row);
  }
  return rows;
}

std::vector<std::map<int, int>> table_rows(const std::vector<std::vector<int>> &table) {
  std::vector<std::map<int, int>> rows;
  for (const auto &line : table) {
    std::map<int, int> row;
    for (std::size_t p = 0; p < line.size(); ++p) {
      row[static_cast<int>(p)] = line[p];
    }
    rows.push_back(row);
  }
  return rows;
}

void expect_stats_equal(const ScheduleStats &closed, const ScheduleStats &built) {
  EXPECT_EQ(closed.steps, built.steps);
  EXPECT_EQ(closed.pieces, built.pieces);
  EXPECT_EQ(closed.elements, built.elements);
  EXPECT_EQ(closed.sum_step_max, built.sum_step_max);
  EXPECT_EQ(closed.largest_piece, built.largest_piece);
  EXPECT_EQ(closed.max_node_pieces, built.max_node_pieces);
  EXPECT_NEAR(closed.seconds, built.seconds, 1e-9 * std::max(1.0, built.seconds));
}

const CostModel kModel{2e-6, 2.5e-10, 1e-7};

// --- counts and volumes ---

TEST(CyclicCounts, MatchBruteForceDegreesOverOnePeriod) {
  Random rng(test_seed(101));
  for (int trial = 0; trial < 1000; ++trial) {
    const Index r = rng.uniform(1, 12);
    const Index s = rng.uniform(1, 12);
    const int P = rng.uniform_int(1, 16);
    const int Q = rng.uniform_int(1, 16);
    const Index L = std::lcm(P * r, Q * s);
    std::vector<char> talks(static_cast<std::size_t>(P * Q), 0);
    for (Index k = 0; k < L; ++k) {
      talks[static_cast<std::size_t>(ref_owner(k, r, P, 0)) * static_cast<std::size_t>(Q) +
            static_cast<std::size_t>(ref_owner(k, s, Q, 0))] = 1;
    }
    Index m_r = 0;
    Index m_c = 0;
    Index pairs = 0;
    for (int p = 0; p < P; ++p) {
      Index d = 0;
      for (int q = 0; q < Q; ++q) {
        d += talks[static_cast<std::size_t>(Index{p} * Q + q)];
      }
      m_r = std::max(m_r, d);
      pairs += d;
    }
    for (int q = 0; q < Q; ++q) {
      Index d = 0;
      for (int p = 0; p < P; ++p) {
        d += talks[static_cast<std::size_t>(Index{p} * Q + q)];
      }
      m_c = std::max(m_c, d);
    }
    const CyclicCounts c = cyclic_counts(r, s, P, Q);
    ASSERT_EQ(c.m_r, m_r) << "r=" << r << " s=" << s << " P=" << P << " Q=" << Q;
    ASSERT_EQ(c.m_c, m_c) << "r=" << r << " s=" << s << " P=" << P << " Q=" << Q;
    ASSERT_EQ(c.steps_optimal, std::max(m_r, m_c));
    ASSERT_EQ(c.all_to_all, pairs == Index{P} * Q)
        << "r=" << r << " s=" << s << " P=" << P << " Q=" << Q;
  }
}

TEST(CyclicCounts, DesprezExamples) {
  // Desprez et al. 1998's examples (docs/references.md): (P, Q, r, s) -> m_R, m_C, N.
  struct Case {
    Index P, Q, r, s, m_r, m_c, steps;
    bool all;
  };
  for (const Case &c : {Case{16, 16, 3, 5, 7, 7, 7, false}, Case{16, 16, 7, 11, 16, 16, 16, true},
                        Case{15, 15, 3, 5, 10, 9, 10, false}, Case{12, 8, 4, 3, 2, 4, 4, false},
                        Case{15, 6, 2, 3, 6, 10, 10, false}}) {
    const CyclicCounts got = cyclic_counts(c.r, c.s, c.P, c.Q);
    EXPECT_EQ(got.m_r, c.m_r) << c.P << "," << c.Q << "," << c.r << "," << c.s;
    EXPECT_EQ(got.m_c, c.m_c) << c.P << "," << c.Q << "," << c.r << "," << c.s;
    EXPECT_EQ(got.steps_optimal, c.steps);
    EXPECT_EQ(got.all_to_all, c.all);
  }
}

// --- Desprez et al.: class-based ---

TEST(ClassBased, RandomInstancesAreValidAndOptimal) {
  Random rng(test_seed(103));
  int built = 0;
  int whole = 0;
  for (int trial = 0; trial < 1500; ++trial) {
    const int P = rng.uniform_int(1, 40);
    const int Q = rng.uniform_int(1, 40);
    Index r = rng.uniform(1, 20);
    Index s = rng.uniform(1, 20);
    // Mostly instances that satisfy gcd(r', Q) = gcd(s', P) = 1.
    for (int retry = 0; retry < 50 && rng.chance(80); ++retry) {
      const Index d = std::gcd(r, s);
      if (std::gcd(r / d, Index{Q}) == 1 && std::gcd(s / d, Index{P}) == 1) {
        break;
      }
      r = rng.uniform(1, 20);
      s = rng.uniform(1, 20);
    }
    const Transfer1D t = make_transfer(rng, P, Q, r, s);
    const std::optional<Schedule> sched = schedule_class_based(t);
    ASSERT_EQ(sched.has_value(), class_condition(t)) << describe(t);
    if (!sched) {
      continue;
    }
    ++built;
    const VolumeGraph g = volume_graph(t);
    ASSERT_TRUE(valid_schedule(g, *sched, kMatching)) << describe(t);
    const auto N = static_cast<Index>(sched->steps.size());
    const CyclicCounts counts = cyclic_counts(t);
    const Index caterpillar_steps = std::max(P, Q); // ScheduleStats of schedule_caterpillar
    ASSERT_LE(N, counts.steps_optimal) << describe(t);
    ASSERT_LE(N, caterpillar_steps);
    const std::optional<ScheduleStats> closed = class_based_stats(t, kModel, 8);
    ASSERT_EQ(closed.has_value(), whole_periods(t));
    if (!whole_periods(t) || t.length == 0) {
      continue;
    }
    ++whole;
    // Theorem 1 (Koenig): N = max degree = max(m_R, m_C); Prop. 4: T = D r' s' max(P,Q)/g
    // per period.
    ASSERT_EQ(N, g.max_degree()) << describe(t);
    ASSERT_EQ(N, counts.steps_optimal) << describe(t);
    const Index re = eff_block(t.src);
    const Index se = eff_block(t.dst);
    const Index D = std::gcd(re, se);
    const Index gr = std::gcd(P * (re / D), Q * (se / D));
    const Index periods = t.length / period_of(t);
    ASSERT_EQ(sum_step_max(*sched), D * (re / D) * (se / D) * std::max(P, Q) / gr * periods)
        << describe(t);
    ASSERT_TRUE(uniform_steps(*sched)) << describe(t);
    expect_stats_equal(*closed, schedule_stats(*sched, kModel, 8));
  }
  EXPECT_GE(built, 1000);
  EXPECT_GE(whole, 400);
}

Transfer1D aligned_period(int P, int Q, Index r, Index s, Index periods = 1) {
  const Index L = std::lcm(P * r, Q * s);
  return {{L * periods, r, P, 0}, {L * periods, s, Q, 0}, 0, 0, L * periods};
}

TEST(ClassBased, DesprezExamplesOneAndTwo) {
  // Example 1: P = Q = 16, r = 3, s = 5, L = 240: N = 7, T = 15 per period.
  const Transfer1D ex1 = aligned_period(16, 16, 3, 5);
  ASSERT_EQ(ex1.length, 240);
  const std::optional<Schedule> s1 = schedule_class_based(ex1);
  ASSERT_TRUE(s1.has_value());
  EXPECT_TRUE(valid_schedule(volume_graph(ex1), *s1, kMatching));
  EXPECT_EQ(s1->steps.size(), 7U);
  EXPECT_EQ(sum_step_max(*s1), 15);
  const ScheduleStats cat1 = schedule_stats(schedule_caterpillar(volume_graph(ex1)), kModel, 8);
  EXPECT_EQ(cat1.steps, 16);
  // Lemma 1: r = 12, s = 20 is the same schedule with lengths scaled by D = 4.
  const std::optional<Schedule> s1x4 = schedule_class_based(aligned_period(16, 16, 12, 20));
  ASSERT_TRUE(s1x4.has_value());
  EXPECT_EQ(s1x4->steps.size(), 7U);
  EXPECT_EQ(sum_step_max(*s1x4), 60);

  // Example 2: P = Q = 16, r = 7, s = 11, L = 1232: N = 16, T = 77; caterpillar T = 112.
  const Transfer1D ex2 = aligned_period(16, 16, 7, 11);
  ASSERT_EQ(ex2.length, 1232);
  const std::optional<Schedule> s2 = schedule_class_based(ex2);
  ASSERT_TRUE(s2.has_value());
  EXPECT_TRUE(valid_schedule(volume_graph(ex2), *s2, kMatching));
  EXPECT_EQ(s2->steps.size(), 16U);
  EXPECT_EQ(sum_step_max(*s2), 77);
  const ScheduleStats cat2 = schedule_stats(schedule_caterpillar(volume_graph(ex2)), kModel, 8);
  EXPECT_EQ(cat2.steps, 16);
  EXPECT_EQ(cat2.sum_step_max, 112);

  // Examples 3-5 break gcd(r, Q) = gcd(s, P) = 1.
  EXPECT_FALSE(schedule_class_based(aligned_period(15, 15, 3, 5)).has_value());
  EXPECT_FALSE(schedule_class_based(aligned_period(12, 8, 4, 3)).has_value());
  EXPECT_FALSE(schedule_class_based(aligned_period(15, 6, 2, 3)).has_value());
}

TEST(ClassBased, RelabelledWindowsAndMisalignedStarts) {
  Transfer1D t = aligned_period(16, 16, 3, 5, 2);
  t.src.src = 5;
  t.dst.src = 11;
  t.src_start = Index{3} * 7;
  t.dst_start = Index{5} * 2;
  t.src.extent += t.src_start;
  t.dst.extent += t.dst_start;
  const std::optional<Schedule> s = schedule_class_based(t);
  ASSERT_TRUE(s.has_value());
  EXPECT_TRUE(valid_schedule(volume_graph(t), *s, kMatching));
  EXPECT_EQ(s->steps.size(), 7U);
  EXPECT_EQ(sum_step_max(*s), 30);
  t.src_start += 1;
  EXPECT_FALSE(schedule_class_based(t).has_value());
  EXPECT_FALSE(class_based_stats(t, kModel, 8).has_value());
}

// --- Walker & Otto ---

TEST(WalkerOtto, RandomInstancesTakeKSteps) {
  Random rng(test_seed(104));
  int built = 0;
  for (int trial = 0; trial < 1500; ++trial) {
    const int P = rng.uniform_int(1, 40);
    const Index x = rng.uniform(1, 20);
    const Index k = rng.uniform(1, 12);
    int Q = P;
    Index other = k * x;
    if (rng.chance(8)) {
      Q = rng.uniform_int(1, 40);
    }
    if (rng.chance(8)) {
      other = rng.uniform(1, 40);
    }
    const bool reverse = rng.chance(50);
    const Transfer1D t =
        reverse ? make_transfer(rng, P, Q, other, x) : make_transfer(rng, P, Q, x, other);
    const std::optional<Schedule> sched = schedule_walker_otto(t);
    ASSERT_EQ(sched.has_value(), walker_otto_condition(t)) << describe(t);
    if (!sched) {
      continue;
    }
    ++built;
    const VolumeGraph g = volume_graph(t);
    ASSERT_TRUE(valid_schedule(g, *sched, kMatching)) << describe(t);
    const Index re = eff_block(t.src);
    const Index se = eff_block(t.dst);
    const Index kk = std::max(re, se) / std::min(re, se);
    ASSERT_LE(static_cast<Index>(sched->steps.size()), kk);
    const std::optional<ScheduleStats> closed = walker_otto_stats(t, kModel, 4);
    ASSERT_EQ(closed.has_value(), whole_periods(t));
    if (!whole_periods(t) || t.length == 0) {
      continue;
    }
    // k steps; in each, every process sends one block of x per superblock of kPx elements.
    ASSERT_EQ(static_cast<Index>(sched->steps.size()), kk) << describe(t);
    const Index periods = t.length / period_of(t);
    for (const Step &step : sched->steps) {
      ASSERT_EQ(static_cast<int>(step.pieces.size()), P);
      for (const Piece &p : step.pieces) {
        ASSERT_EQ(p.volume, periods * std::min(re, se)) << describe(t);
      }
    }
    if (kk <= P) { // one message per pair: k = max degree, optimal
      ASSERT_EQ(static_cast<Index>(g.max_degree()), kk) << describe(t);
    }
    expect_stats_equal(*closed, schedule_stats(*sched, kModel, 4));
  }
  EXPECT_GE(built, 1000);
}

TEST(WalkerOtto, ReproducesReviewTables) {
  // Evers 2025 review, Table 4.8: CYCLIC(1) -> CYCLIC(2) on 3 processes (the reduced system of
  // the example).
  const std::vector<std::vector<int>> table48 = {{0, 2, 1}, {1, 0, 2}};
  // Table 4.10: CYCLIC(1) -> CYCLIC(4) on 6 processes, alpha = p mod g, beta = (alpha - k_n) mod g.
  const std::vector<std::vector<int>> table410 = {
      {0, 3, 2, 5, 1, 4}, {3, 0, 5, 2, 4, 1}, {1, 4, 0, 3, 2, 5}, {4, 1, 3, 0, 5, 2}};
  for (const Index x : {1, 3}) {
    const std::optional<Schedule> s48 = schedule_walker_otto(aligned_period(3, 3, x, 2 * x));
    ASSERT_TRUE(s48.has_value());
    EXPECT_EQ(send_table(*s48), table_rows(table48));
    const Transfer1D t410 = aligned_period(6, 6, x, 4 * x);
    const std::optional<Schedule> s410 = schedule_walker_otto(t410);
    ASSERT_TRUE(s410.has_value());
    EXPECT_TRUE(valid_schedule(volume_graph(t410), *s410, kMatching));
    EXPECT_EQ(send_table(*s410), table_rows(table410));
    // The way back, CYCLIC(4x) -> CYCLIC(x), is the transpose: receiver p gets from table[n][p].
    const std::optional<Schedule> back = schedule_walker_otto(aligned_period(6, 6, 4 * x, x));
    ASSERT_TRUE(back.has_value());
    ASSERT_EQ(back->steps.size(), table410.size());
    for (std::size_t n = 0; n < table410.size(); ++n) {
      std::map<int, int> recv;
      for (const Piece &p : back->steps[n].pieces) {
        recv[p.dst] = p.src;
      }
      EXPECT_EQ(recv, table_rows(table410)[n]) << "step " << n;
    }
  }
}

TEST(WalkerOtto, MoreBlocksThanProcessesSplitMessages) {
  // CYCLIC(1) -> CYCLIC(5) on 2 processes: each process sends 5 blocks per superblock to 2
  // receivers, one block per step.
  const Transfer1D t = aligned_period(2, 2, 1, 5, 3);
  const std::optional<Schedule> s = schedule_walker_otto(t);
  ASSERT_TRUE(s.has_value());
  EXPECT_EQ(s->steps.size(), 5U);
  EXPECT_TRUE(valid_schedule(volume_graph(t), *s, kMatching));
}

// --- Park, Prasanna & Raghavendra ---

TEST(Circulant, RandomInstancesTakeTheMinimumSteps) {
  Random rng(test_seed(105));
  int built = 0;
  int not_all = 0;
  for (int trial = 0; trial < 1500; ++trial) {
    int P = rng.uniform_int(1, 40);
    int Q = rng.uniform_int(1, 40);
    const Index x = rng.uniform(1, 20);
    const Index k = rng.uniform(1, rng.chance(50) ? 4 : 12);
    const bool reverse = rng.chance(50);
    // Mostly the orientation the formula covers: the smaller block on no more processes.
    if (rng.chance(90) && (reverse ? Q > P : P > Q)) {
      std::swap(P, Q);
    }
    Index other = k * x;
    if (rng.chance(8)) {
      other = rng.uniform(1, 40);
    }
    const Transfer1D t =
        reverse ? make_transfer(rng, P, Q, other, x) : make_transfer(rng, P, Q, x, other);
    const std::optional<Schedule> sched = schedule_circulant(t);
    ASSERT_EQ(sched.has_value(), circulant_condition(t)) << describe(t);
    if (!sched) {
      continue;
    }
    ++built;
    const VolumeGraph g = volume_graph(t);
    ASSERT_TRUE(valid_schedule(g, *sched, kMatching)) << describe(t);
    const std::optional<ScheduleStats> closed = circulant_stats(t, kModel, 8);
    ASSERT_EQ(closed.has_value(), whole_periods(t));
    if (!whole_periods(t) || t.length == 0) {
      continue;
    }
    // In the orientation of the formula: x on Ps processes to kx on Qs >= Ps processes.
    const Index re = eff_block(t.src);
    const Index se = eff_block(t.dst);
    const bool forward = se % re == 0 && t.src.nprocs <= t.dst.nprocs;
    const Index Ps = forward ? t.src.nprocs : t.dst.nprocs;
    const Index Qs = forward ? t.dst.nprocs : t.src.nprocs;
    const Index kk = forward ? se / re : re / se;
    const auto N = static_cast<Index>(sched->steps.size());
    if (std::gcd(Ps, kk * Qs) > kk) { // not all-to-all: L_s = lcm(P, kQ)/P
      ++not_all;
      ASSERT_EQ(N, std::lcm(Ps, kk * Qs) / Ps) << describe(t);
    } else {
      ASSERT_EQ(N, Qs) << describe(t);
    }
    ASSERT_EQ(N, g.max_degree()) << describe(t);
    ASSERT_LE(N, std::max(t.src.nprocs, t.dst.nprocs)); // the caterpillar's N
    ASSERT_TRUE(uniform_steps(*sched)) << describe(t);
    expect_stats_equal(*closed, schedule_stats(*sched, kModel, 8));
  }
  EXPECT_GE(built, 1000);
  EXPECT_GE(not_all, 100);
}

TEST(Circulant, ReproducesTable416) {
  // CYCLIC(2) on 4 -> CYCLIC(4) on 6: 3 steps (Evers 2025 review, Table 4.16).
  const std::vector<std::vector<int>> table416 = {{0, 2, 1, 3}, {4, 0, 5, 1}, {2, 4, 3, 5}};
  const Transfer1D t = aligned_period(4, 6, 2, 4);
  const std::optional<Schedule> s = schedule_circulant(t);
  ASSERT_TRUE(s.has_value());
  EXPECT_TRUE(valid_schedule(volume_graph(t), *s, kMatching));
  EXPECT_EQ(send_table(*s), table_rows(table416));
}

TEST(Circulant, FoldedAllToAllSixByFour) {
  // CYCLIC(1) on 4 -> CYCLIC(3) on 6 (Evers 2025 review, Sec. 4.2.6): gcd(4, 18) = 2 < 3,
  // all-to-all; the 9 rows fold to 6 steps, the first 3 sending two blocks, the last 3 one
  // block. The table is Eq. 4.23 (sign as in docs/references.md) evaluated by hand (n = 3,
  // P1 = 4, Q1 = 3, G1 = 1, G2 = 2).
  const std::vector<std::vector<int>> folded = {{0, 3, 2, 1}, {2, 5, 4, 3}, {4, 1, 0, 5},
                                                {1, 0, 3, 2}, {3, 2, 5, 4}, {5, 4, 1, 0}};
  const Transfer1D t = aligned_period(4, 6, 1, 3);
  ASSERT_EQ(t.length, 36);
  const std::optional<Schedule> s = schedule_circulant(t);
  ASSERT_TRUE(s.has_value());
  EXPECT_TRUE(valid_schedule(volume_graph(t), *s, kMatching));
  ASSERT_EQ(s->steps.size(), 6U);
  for (std::size_t i = 0; i < 6; ++i) {
    ASSERT_EQ(s->steps[i].pieces.size(), 4U);
    for (const Piece &p : s->steps[i].pieces) {
      EXPECT_EQ(p.volume, i < 3 ? 2 : 1) << "step " << i;
    }
  }
  EXPECT_EQ(send_table(*s), table_rows(folded));
}

TEST(Circulant, ParkExamplesAgainstCaterpillar) {
  // Review Tables 4.19 and 4.20 (P, Q, k), x = 1, one period.
  struct Case {
    int P, Q;
    Index k;
  };
  for (const Case &c :
       {Case{18, 76, 8}, Case{30, 66, 15}, Case{46, 50, 25}, Case{30, 66, 8}, Case{46, 50, 18}}) {
    const Transfer1D t = aligned_period(c.P, c.Q, 1, c.k);
    const std::optional<Schedule> s = schedule_circulant(t);
    ASSERT_TRUE(s.has_value());
    const VolumeGraph g = volume_graph(t);
    EXPECT_TRUE(valid_schedule(g, *s, kMatching));
    const ScheduleStats park = schedule_stats(*s, kModel, 8);
    const ScheduleStats cat = schedule_stats(schedule_caterpillar(g), kModel, 8);
    EXPECT_EQ(park.steps, g.max_degree());
    EXPECT_EQ(cat.steps, c.Q);
    EXPECT_LE(park.sum_step_max, cat.sum_step_max);
    std::cout << "[  PARK    ] P=" << c.P << " Q=" << c.Q << " k=" << c.k
              << ": circulant N=" << park.steps << " T=" << park.sum_step_max
              << ", caterpillar N=" << cat.steps << " T=" << cat.sum_step_max << "\n";
  }
}

// --- Kaushik et al. 1994/1995: two phases ---

TEST(Multiphase, IntermediatesOfAWorkedCase) {
  // CYCLIC(2) on 4 -> CYCLIC(3) on 6: CYCLIC(6) on 6 (Park, then Walker & Otto) and CYCLIC(1)
  // on 4 (Walker & Otto, then Park); CYCLIC(6) on 4 and CYCLIC(1) on 6 would need Park with
  // the smaller block on more processes.
  const Transfer1D t{{120, 2, 4, 0}, {120, 3, 6, 0}, 0, 0, 120};
  const std::vector<BlockCyclic> mids = multiphase_intermediates(t);
  ASSERT_EQ(mids.size(), 2U);
  EXPECT_EQ(mids[0].block, 6);
  EXPECT_EQ(mids[0].nprocs, 6);
  EXPECT_EQ(mids[1].block, 1);
  EXPECT_EQ(mids[1].nprocs, 4);
  // One divides the other on equal process counts: nothing to gain from two phases.
  EXPECT_TRUE(multiphase_intermediates({{120, 2, 4, 0}, {120, 6, 4, 0}, 0, 0, 120}).empty());
}

TEST(Multiphase, PhasesAreClosedFormsAndComposeToTheDirectMapping) {
  Random rng(test_seed(106));
  int phases_checked = 0;
  for (int trial = 0; trial < 1000; ++trial) {
    const Transfer1D t = make_transfer(rng, rng.uniform_int(1, 12), rng.uniform_int(1, 12),
                                       rng.uniform(1, 10), rng.uniform(1, 10));
    for (const BlockCyclic &mid : multiphase_intermediates(t)) {
      const auto [one, two] = multiphase_phases(t, mid);
      for (const Transfer1D &phase : {one, two}) {
        const Index a = eff_block(phase.src);
        const Index b = eff_block(phase.dst);
        ASSERT_TRUE(a % b == 0 || b % a == 0) << describe(phase);
        ASSERT_EQ(phase.length, t.length);
        if (aligned_ok(phase)) {
          ASSERT_TRUE(walker_otto_condition(phase) || circulant_condition(phase))
              << describe(phase);
          const std::optional<Schedule> s = schedule_closed_form(phase, kModel, 8);
          ASSERT_TRUE(s.has_value()) << describe(phase);
          ASSERT_TRUE(valid_schedule(volume_graph(phase), *s, kMatching)) << describe(phase);
          ++phases_checked;
        }
      }
      // Follow every element through the intermediate's local storage.
      std::map<std::pair<int, Index>, Index> mid_to_window; // (owner, local) -> phase-2 index
      for (Index k = 0; k < two.length; ++k) {
        mid_to_window[{ref_owner(mid, two.src_start + k), ref_local(mid, two.src_start + k)}] = k;
      }
      for (Index k = 0; k < t.length; ++k) {
        const Index g1 = one.dst_start + k;
        const Index k2 = mid_to_window.at({ref_owner(mid, g1), ref_local(mid, g1)});
        const Index via = two.dst_start + k2;
        const Index direct = t.dst_start + k;
        ASSERT_EQ(ref_owner(one.src, one.src_start + k), ref_owner(t.src, t.src_start + k));
        ASSERT_EQ(ref_local(one.src, one.src_start + k), ref_local(t.src, t.src_start + k));
        ASSERT_EQ(ref_owner(two.dst, via), ref_owner(t.dst, direct)) << describe(t);
        ASSERT_EQ(ref_local(two.dst, via), ref_local(t.dst, direct)) << describe(t);
      }
      const double cost = multiphase_cost(t, mid, kModel, 8);
      if (aligned_ok(t)) {
        double expected = 0.0;
        for (const Transfer1D &phase : {one, two}) {
          expected += schedule_stats(*schedule_closed_form(phase, kModel, 8), kModel, 8).seconds;
        }
        ASSERT_DOUBLE_EQ(cost, expected);
      }
      ASSERT_GE(cost, 0.0);
    }
  }
  EXPECT_GE(phases_checked, 500);
}

TEST(ClosedForm, PicksTheCheapestApplicable) {
  Random rng(test_seed(107));
  for (int trial = 0; trial < 300; ++trial) {
    const int P = rng.uniform_int(1, 12);
    const Transfer1D t = make_transfer(rng, P, rng.chance(50) ? P : rng.uniform_int(1, 12),
                                       rng.uniform(1, 6), rng.uniform(1, 6));
    const std::optional<Schedule> best = schedule_closed_form(t, kModel, 8);
    const bool any = class_condition(t) || walker_otto_condition(t) || circulant_condition(t);
    ASSERT_EQ(best.has_value(), any) << describe(t);
    if (!best) {
      continue;
    }
    const double seconds = schedule_stats(*best, kModel, 8).seconds;
    for (const auto &other :
         {schedule_class_based(t), schedule_walker_otto(t), schedule_circulant(t)}) {
      if (other) {
        ASSERT_LE(seconds, schedule_stats(*other, kModel, 8).seconds);
      }
    }
  }
}

// --- closed forms evaluated on demand, and the 2-D product's statistics ---

std::optional<Schedule> built_form(ClosedFormKind kind, const Transfer1D &t) {
  switch (kind) {
  case ClosedFormKind::class_based:
    return schedule_class_based(t);
  case ClosedFormKind::walker_otto:
    return schedule_walker_otto(t);
  case ClosedFormKind::circulant:
    return schedule_circulant(t);
  }
  return std::nullopt;
}

// The step sizes, statistics and per-process partners of a form evaluated on demand agree
// with the schedule it builds: step by step, on whole periods and on partial windows.
TEST(ClosedFormSchedule, StepSizesAndPartnersMatchTheBuiltSchedule) {
  Random rng(test_seed(109));
  int checked = 0;
  int partial = 0;
  for (int trial = 0; trial < 400; ++trial) {
    const Transfer1D t = closed_form_dimension(rng, 1, 9, 6);
    ASSERT_TRUE(class_condition(t) || walker_otto_condition(t) || circulant_condition(t));
    const VolumeGraph g = volume_graph(t);
    for (const ClosedFormKind kind :
         {ClosedFormKind::class_based, ClosedFormKind::walker_otto, ClosedFormKind::circulant}) {
      const std::optional<ClosedFormSchedule> form = ClosedFormSchedule::make(kind, t);
      const std::optional<Schedule> built = built_form(kind, t);
      ASSERT_EQ(form.has_value(), built.has_value()) << describe(t);
      if (!form) {
        continue;
      }
      ++checked;
      partial += whole_periods(t) ? 0 : 1;
      const std::vector<StepSize> sizes = form->step_sizes();
      ASSERT_EQ(static_cast<Index>(sizes.size()), form->formula_steps());
      std::vector<std::size_t> formula_step; // of each built step
      for (std::size_t i = 0; i < sizes.size(); ++i) {
        if (sizes[i].pieces > 0) {
          formula_step.push_back(i);
        }
      }
      ASSERT_EQ(formula_step.size(), built->steps.size()) << describe(t);
      for (std::size_t j = 0; j < built->steps.size(); ++j) {
        const StepSize &size = sizes[formula_step[j]];
        ASSERT_EQ(size.largest, built->steps[j].largest()) << describe(t) << " step " << j;
        ASSERT_EQ(size.pieces, static_cast<Index>(built->steps[j].pieces.size())) << describe(t);
      }
      const ScheduleStats expected = schedule_stats(*built, kModel, 8);
      const ScheduleStats stats = form->stats(kModel, 8);
      expect_stats_equal(stats, expected);
      ASSERT_DOUBLE_EQ(stats.seconds, expected.seconds);
      if (form->splits_messages()) {
        continue; // a pair meets in several steps: partners name blocks, not messages
      }
      for (int p = 0; p < t.src.nprocs; ++p) {
        for (int q = 0; q < t.dst.nprocs; ++q) {
          std::vector<int> receivers_of_p;
          std::vector<int> senders_of_q;
          for (const Message &m : g.messages) {
            if (m.src == p) receivers_of_p.push_back(m.dst);
            if (m.dst == q) senders_of_q.push_back(m.src);
          }
          const auto partners = form->partners(p, q, receivers_of_p, senders_of_q);
          ASSERT_EQ(static_cast<Index>(partners.size()), form->formula_steps());
          std::vector<std::pair<int, int>> expected_partners(partners.size(), {-1, -1});
          for (std::size_t j = 0; j < built->steps.size(); ++j) {
            for (const Piece &piece : built->steps[j].pieces) {
              if (piece.src == p) expected_partners[formula_step[j]].first = piece.dst;
              if (piece.dst == q) expected_partners[formula_step[j]].second = piece.src;
            }
          }
          for (std::size_t i = 0; i < partners.size(); ++i) {
            // Pairs without data may be named; they carry nothing.
            const int to = partners[i].first >= 0 && g.volume(p, partners[i].first) > 0
                               ? partners[i].first
                               : -1;
            const int from = partners[i].second >= 0 && g.volume(partners[i].second, q) > 0
                                 ? partners[i].second
                                 : -1;
            ASSERT_EQ(to, expected_partners[i].first)
                << describe(t) << " sender " << p << " formula step " << i;
            ASSERT_EQ(from, expected_partners[i].second)
                << describe(t) << " receiver " << q << " formula step " << i;
          }
        }
      }
    }
  }
  EXPECT_GE(checked, 500);
  EXPECT_GE(partial, 150);
}

// product_closed_form_stats against schedule_stats of the product schedule built from the
// closed forms (product_schedule over the 2-D volume graph), on random 2-D instances.
TEST(ProductClosedFormStats, EqualTheBuiltProduct) {
  Random rng(test_seed(110));
  int compared = 0;
  int whole = 0;
  for (int trial = 0; trial < 300; ++trial) {
    const Transfer1D rows = closed_form_dimension(rng, 1, 5, 4);
    const Transfer1D cols = closed_form_dimension(rng, 1, 5, 4);
    Transfer t = transfer_2d(rows, cols);
    const std::optional<ScheduleStats> closed = product_closed_form_stats(t, kModel, 8);
    ASSERT_TRUE(closed.has_value()) << describe(rows) << " x " << describe(cols);
    const VolumeGraph graph = volume_graph(t);
    const Schedule product =
        product_schedule(graph, *schedule_closed_form(rows, kModel, 8),
                         *schedule_closed_form(cols, kModel, 8), rows.src.nprocs, rows.dst.nprocs);
    ASSERT_TRUE(valid_schedule(graph, product, kMatching));
    expect_stats_equal(*closed, schedule_stats(product, kModel, 8));
    ++compared;
    whole += whole_periods(rows) && whole_periods(cols) ? 1 : 0;
    // A trapezoid is not a product of 1-D transfers.
    t.region.kind = Region::Kind::upper;
    EXPECT_FALSE(product_closed_form_stats(t, kModel, 8).has_value());
  }
  EXPECT_GE(compared, 300);
  EXPECT_GE(whole, 60);
  // No closed form in one dimension: CYCLIC(2) -> CYCLIC(3) on 4 -> 6 processes.
  Transfer t;
  t.m = t.n = 24;
  t.src = {{24, 2, 4, 0}, {24, 1, 1, 0}, {4, 1, {}}, 0, 0};
  t.dst = {{24, 3, 6, 0}, {24, 1, 1, 0}, {6, 1, {}}, 0, 0};
  EXPECT_FALSE(product_closed_form_stats(t, kModel, 8).has_value());
}

} // namespace
} // namespace redist::test
