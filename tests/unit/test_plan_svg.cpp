// redist-plan --svg (tools/plan_svg.hpp): the ownership rectangles against the owner of every
// element, the heat map bins against sums over the volume graph, and the schedule panel drawing
// every piece of random schedules.
#include "plan_svg.hpp"
#include "planner.hpp"
#include "schedule_support.hpp"

#include <string>

namespace redist::test {
namespace {

/// Every drawn cell covered once, by a rectangle whose owner and window flag are those of the
/// cell's element; `element(row, col)` gives the element's (owner node, in window), or
/// owner -1 for a cell past the end of a folded vector.
template <class F>
void expect_tiles(const plan_svg::OwnershipMap &map, std::size_t max_rects, F element,
                  const std::string &what) {
  ASSERT_LE(map.rects.size(), max_rects) << what;
  const Index rows = map.end_row - map.first_row;
  const Index cols = map.end_col - map.first_col;
  std::vector<int> cover(static_cast<std::size_t>(rows * cols), 0);
  for (const plan_svg::OwnedRect &r : map.rects) {
    ASSERT_TRUE(r.row0 >= map.first_row && r.row0 < r.row1 && r.row1 <= map.end_row) << what;
    ASSERT_TRUE(r.col0 >= map.first_col && r.col0 < r.col1 && r.col1 <= map.end_col) << what;
    for (Index row = r.row0; row < r.row1; ++row) {
      for (Index col = r.col0; col < r.col1; ++col) {
        const auto [node, in_window] = element(row, col);
        ASSERT_EQ(r.node, node) << what << " cell " << row << "," << col;
        ASSERT_EQ(r.in_window, in_window) << what << " cell " << row << "," << col;
        ++cover[static_cast<std::size_t>((row - map.first_row) * cols + col - map.first_col)];
      }
    }
  }
  for (Index row = map.first_row; row < map.end_row; ++row) {
    for (Index col = map.first_col; col < map.end_col; ++col) {
      const int expected = element(row, col).first >= 0 ? 1 : 0;
      ASSERT_EQ(cover[static_cast<std::size_t>((row - map.first_row) * cols + col - map.first_col)],
                expected)
          << what << " cell " << row << "," << col;
    }
  }
}

TEST(PlanSvg, OwnershipMapTilesTheMatrixByOwner) {
  Random rng(test_seed(71));
  for (int trial = 0; trial < 400; ++trial) {
    int comm_size = 0;
    const Transfer t = random_transfer_2d(rng, 60, 7, 4, comm_size);
    const bool generous = trial % 2 == 0;
    const auto max_rects = static_cast<std::size_t>(generous ? 100000 : rng.uniform(1, 40));
    const auto per_side = static_cast<std::size_t>(generous ? 1000 : rng.uniform(1, 30));
    for (const Layout *l : {&t.src, &t.dst}) {
      const plan_svg::OwnershipMap map = plan_svg::ownership_map(*l, t.m, t.n, max_rects, per_side);
      const std::string what = "trial " + std::to_string(trial);
      ASSERT_EQ(map.rows, l->rows.extent);
      ASSERT_EQ(map.cols, l->cols.extent);
      expect_tiles(
          map, max_rects,
          [&](Index row, Index col) {
            const int node = ref_owner(l->rows, row) + ref_owner(l->cols, col) * l->grid.nprow;
            const bool in = row >= l->i && row < l->i + t.m && col >= l->j && col < l->j + t.n;
            return std::pair{node, in};
          },
          what);
      if (map.rows > 0 && map.cols > 0) {
        ASSERT_FALSE(map.rects.empty()) << what;
      }
      // A crop starts at the block holding the window's first element, or at that element
      // (an empty window may start at the end of the matrix).
      const auto crop_start = [](Index drawn_first, Index window_first, Index extent, Index block) {
        const Index at = std::min(window_first, extent - 1);
        return drawn_first == 0 || drawn_first == at - at % block || drawn_first == at;
      };
      ASSERT_TRUE(crop_start(map.first_row, l->i, l->rows.extent, l->rows.block)) << what;
      ASSERT_TRUE(crop_start(map.first_col, l->j, l->cols.extent, l->cols.block)) << what;
      if (generous) {
        ASSERT_FALSE(map.cropped())
            << what << " rows " << l->rows.extent << "/" << l->rows.block << " i " << l->i << " m "
            << t.m << " cols " << l->cols.extent << "/" << l->cols.block << " j " << l->j << " n "
            << t.n << " drawn " << map.first_row << "-" << map.end_row << " x " << map.first_col
            << "-" << map.end_col;
      }
      if (t.m > 0 && t.n > 0) { // the window's first element is drawn
        ASSERT_TRUE(l->i >= map.first_row && l->i < map.end_row) << what;
        ASSERT_TRUE(l->j >= map.first_col && l->j < map.end_col) << what;
      }
    }
  }
}

TEST(PlanSvg, FoldedVectorTilesByOwner) {
  Random rng(test_seed(72));
  for (int trial = 0; trial < 400; ++trial) {
    const Transfer1D t = random_transfer(rng, 300, 9, 7);
    const Index fold = rng.uniform(1, 40);
    const bool generous = trial % 2 == 0;
    // A row has at most fold + 2 rectangles (block pieces and the window's two edges).
    const auto max_rects = static_cast<std::size_t>(generous ? 100000 : fold + rng.uniform(2, 60));
    const auto per_side = static_cast<std::size_t>(generous ? 1000 : rng.uniform(1, 20));
    const plan_svg::OwnershipMap map =
        plan_svg::ownership_map_1d(t.src, t.src_start, t.length, fold, max_rects, per_side);
    const std::string what = "trial " + std::to_string(trial) + " fold " + std::to_string(fold);
    ASSERT_EQ(map.fold, fold);
    ASSERT_EQ(map.rows, (t.src.extent + fold - 1) / fold);
    ASSERT_LE(map.end_row - map.first_row, static_cast<Index>(per_side)) << what;
    expect_tiles(
        map, max_rects,
        [&](Index row, Index col) {
          const Index g = row * fold + col;
          if (g >= t.src.extent) return std::pair{-1, false};
          return std::pair{ref_owner(t.src, g), g >= t.src_start && g < t.src_start + t.length};
        },
        what);
    if (map.first_row > 0) {
      ASSERT_EQ(map.first_row, std::min(t.src_start, t.src.extent - 1) / fold) << what;
    }
    if (generous) {
      ASSERT_FALSE(map.cropped()) << what;
    }
    if (t.src.extent > 0) {
      ASSERT_GT(map.end_row, map.first_row) << what;
    }
  }
}

TEST(PlanSvg, HeatMapBinsSumTheMessages) {
  Random rng(test_seed(73));
  for (int trial = 0; trial < 300; ++trial) {
    const VolumeGraph g = random_graph(rng, 40, 40, 50);
    const int side = rng.uniform_int(1, 45);
    const plan_svg::HeatMap h = plan_svg::heat_map(g, side);
    ASSERT_LE(h.rows, side);
    ASSERT_LE(h.cols, side);
    ASSERT_GE(h.rows * h.senders_per_cell, g.senders);
    ASSERT_GE(h.cols * h.receivers_per_cell, g.receivers);
    for (int a = 0; a < h.rows; ++a) {
      for (int b = 0; b < h.cols; ++b) {
        Index expected = 0;
        for (int p = a * h.senders_per_cell; p < (a + 1) * h.senders_per_cell; ++p) {
          for (int q = b * h.receivers_per_cell; q < (b + 1) * h.receivers_per_cell; ++q) {
            if (p < g.senders && q < g.receivers) expected += g.volume(p, q);
          }
        }
        ASSERT_EQ(h.at(a, b), expected) << describe(g) << " side " << side;
      }
    }
  }
}

std::size_t occurrences(const std::string &text, const std::string &what) {
  std::size_t count = 0;
  for (std::size_t at = text.find(what); at != std::string::npos; at = text.find(what, at + 1)) {
    ++count;
  }
  return count;
}

TEST(PlanSvg, ScheduleDrawsEveryPiece) {
  Random rng(test_seed(74));
  for (int trial = 0; trial < 60; ++trial) {
    int comm_size = 0;
    const Transfer t = random_transfer_2d(rng, 30, 4, 3, comm_size);
    ScheduleOptions options;
    options.strategy = trial % 3 == 0 ? Strategy::greedy : Strategy::stepwise;
    std::vector<GlobalPhase> phases;
    std::string detail;
    ASSERT_EQ(global_phases(t, options, 8, phases, detail), "");
    ASSERT_EQ(phases.size(), 1U);
    const Schedule &schedule = phases.front().schedule;
    const std::string picture = plan_svg::plan_svg(phases, false, detail);
    Index pieces = 0;
    for (const Step &s : schedule.steps) {
      pieces += static_cast<Index>(s.pieces.size());
    }
    // Grids of at most 3 x 3 and windows of at most 30 x 30: under every drawing budget.
    ASSERT_EQ(occurrences(picture, "class=\"piece\""), static_cast<std::size_t>(pieces));
    ASSERT_EQ(occurrences(picture, "class=\"step\""), schedule.steps.size());
    ASSERT_EQ(picture.rfind("</svg>\n"), picture.size() - 7);
  }
}

} // namespace
} // namespace redist::test
