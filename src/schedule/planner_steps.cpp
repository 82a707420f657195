// One rank's steps of a chosen 2-D schedule: read from a materialised schedule, or from the
// rank's partners in each row and column step of a product (Desprez et al. 1998, Sec. 6), those
// partners given by the closed forms' formulas (schedule_cyclic.hpp) when the 1-D schedules are
// too large to build. Pure, no MPI.

#include "planner.hpp"
#include "planner_internal.hpp"
#include "schedule_cyclic.hpp"

#include <algorithm>
#include <array>
#include <cstddef>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace redist {

using namespace planning;

namespace {

// A rank's messages by the peer's grid position: O(log peers) lookups.
class PeerIndex {
public:
  explicit PeerIndex(const std::vector<Peer> &peers) {
    keys_.reserve(peers.size());
    for (std::size_t i = 0; i < peers.size(); ++i) {
      keys_.push_back({peers[i].grid_row, peers[i].grid_col, static_cast<int>(i)});
    }
    std::sort(keys_.begin(), keys_.end());
  }
  /// Index into the peers, -1 when there is no message with that peer.
  [[nodiscard]] int find(int grid_row, int grid_col) const {
    const auto it =
        std::lower_bound(keys_.begin(), keys_.end(), std::array<int, 3>{grid_row, grid_col, -1});
    return it != keys_.end() && (*it)[0] == grid_row && (*it)[1] == grid_col ? (*it)[2] : -1;
  }

private:
  std::vector<std::array<int, 3>> keys_;
};

// For each step of a 1-D schedule, the partner of `node` as sender (its receiver) and as
// receiver (its sender); -1 when idle.
std::vector<std::pair<int, int>> partners(const Schedule &s, int src_node, int dst_node) {
  std::vector<std::pair<int, int>> out(s.steps.size(), {-1, -1});
  for (std::size_t a = 0; a < s.steps.size(); ++a) {
    for (const Piece &p : s.steps[a].pieces) {
      if (p.src == src_node) out[a].first = p.dst;
      if (p.dst == dst_node) out[a].second = p.src;
    }
  }
  return out;
}

// The rank's grid positions, -1 where it is not in a grid.
struct GridPosition {
  int spr = -1;
  int spc = -1;
  int dpr = -1;
  int dpc = -1;
};

GridPosition grid_position(const Transfer &t, const RankPlan &plan) {
  GridPosition at;
  if (plan.in_src) t.src.grid.find(plan.rank, at.spr, at.spc);
  if (plan.in_dst) t.dst.grid.find(plan.rank, at.dpr, at.dpc);
  return at;
}

// The rank's steps of a product schedule, from its partners in each row and column step:
// product step (a, b) pairs it with (row partner in a, column partner in b). Transposed
// (RankPlan::transposed()): a row partner as sender is A's grid column, a column partner A's
// grid row.
std::vector<RankStep>
rank_steps_from_partners(const RankPlan &plan, const std::vector<std::pair<int, int>> &row_partner,
                         const std::vector<std::pair<int, int>> &col_partner) {
  const bool transposed = plan.transposed();
  const PeerIndex sends(plan.sends);
  const PeerIndex recvs(plan.recvs);
  std::vector<RankStep> steps;
  for (const auto &[row_to, row_from] : row_partner) {
    if (row_to < 0 && row_from < 0) continue;
    for (const auto &[col_to, col_from] : col_partner) {
      RankStep step;
      if (row_to >= 0 && col_to >= 0) {
        step.send = sends.find(row_to, col_to);
        if (step.send >= 0)
          step.send_count = plan.sends[static_cast<std::size_t>(step.send)].elements;
      }
      if (row_from >= 0 && col_from >= 0) {
        step.recv = transposed ? recvs.find(col_from, row_from) : recvs.find(row_from, col_from);
        if (step.recv >= 0)
          step.recv_count = plan.recvs[static_cast<std::size_t>(step.recv)].elements;
      }
      if (step.send >= 0 || step.recv >= 0) {
        steps.push_back(step);
      }
    }
  }
  return steps;
}

} // namespace

namespace planning {

std::vector<RankStep> rank_steps_of_product(const Transfer &t, const RankPlan &plan,
                                            const TwoDimensional &two) {
  const GridPosition at = grid_position(t, plan);
  // The row schedule's senders are A's grid coordinates along perm[0] (src_coordinate).
  const int row_src = t.src_coordinate(0, at.spr, at.spc);
  const int col_src = t.src_coordinate(1, at.spr, at.spc);
  return rank_steps_from_partners(plan, partners(two.rows, row_src, at.dpr),
                                  partners(two.cols, col_src, at.dpc));
}

bool closed_form_product_choice(const Transfer &t, const RankPlan &plan, const ScheduleOptions &o,
                                std::size_t element_bytes, ScheduleChoice &choice) {
  if ((o.strategy != Strategy::stepwise && o.strategy != Strategy::circulant) ||
      o.max_concurrent != 0 || t.region.kind != Region::Kind::full) {
    return false;
  }
  const auto pairs = grid_pairs(t);
  if (o.strategy == Strategy::stepwise && pairs <= kDirectPairs) {
    return false;
  }
  if (node_levels(t, o) && two_level_exact(t)) {
    return false; // the two-level model costs the materialised schedule
  }
  // As one_dimension: the circulant when asked for and applicable, else the step-optimal
  // closed form.
  const auto form_of = [&](const Transfer1D &d, std::string &how) {
    if (o.strategy == Strategy::circulant) {
      if (auto circulant = ClosedFormSchedule::make(ClosedFormKind::circulant, d)) {
        how = "circulant";
        return circulant;
      }
    }
    how = "closed form";
    return best_closed_form(d, o.model, element_bytes);
  };
  std::string row_how;
  std::string col_how;
  const std::optional<ClosedFormSchedule> rows = form_of(t.rows(), row_how);
  const std::optional<ClosedFormSchedule> cols = form_of(t.cols(), col_how);
  if (!rows || !cols || rows->splits_messages() || cols->splits_messages()) {
    return false;
  }
  const auto nonempty = [](std::vector<StepSize> sizes) {
    std::erase_if(sizes, [](const StepSize &s) { return s.pieces == 0; });
    return sizes;
  };
  choice.detail = "rows: " + row_how + " x columns: " + col_how;
  choice.stats = product_stats(nonempty(rows->step_sizes()), nonempty(cols->step_sizes()),
                               flat_model(t, o), choice.chunk_elements, element_bytes);
  choice.stats.elements = plan.m * plan.n;
  // The partners the formulas do not give directly are searched among the grid rows and
  // columns of the rank's messages (self messages are never laid out, so they need none).
  const auto grid_lines = [](const std::vector<Peer> &peers, int Peer::*line) {
    std::vector<int> lines;
    lines.reserve(peers.size());
    for (const Peer &p : peers) {
      lines.push_back(p.*line);
    }
    std::sort(lines.begin(), lines.end());
    lines.erase(std::unique(lines.begin(), lines.end()), lines.end());
    return lines;
  };
  // Senders along B's rows are A's grid coordinates along perm[0] (src_coordinate): A's
  // grid columns when transposed; a receive's Peer names A's grid row and column.
  const GridPosition at = grid_position(t, plan);
  const bool transposed = t.transposed();
  const auto row_src = transposed ? &Peer::grid_col : &Peer::grid_row;
  const auto col_src = transposed ? &Peer::grid_row : &Peer::grid_col;
  choice.steps = rank_steps_from_partners(
      plan,
      rows->partners(t.src_coordinate(0, at.spr, at.spc), at.dpr,
                     grid_lines(plan.sends, &Peer::grid_row), grid_lines(plan.recvs, row_src)),
      cols->partners(t.src_coordinate(1, at.spr, at.spc), at.dpc,
                     grid_lines(plan.sends, &Peer::grid_col), grid_lines(plan.recvs, col_src)));
  return true;
}

std::vector<RankStep> rank_steps_of_schedule(const Transfer &t, const RankPlan &plan,
                                             const Schedule &s) {
  int spr = -1;
  int spc = -1;
  int dpr = -1;
  int dpc = -1;
  const int src_node =
      plan.in_src && t.src.grid.find(plan.rank, spr, spc) ? spr + spc * t.src.grid.nprow : -1;
  const int dst_node =
      plan.in_dst && t.dst.grid.find(plan.rank, dpr, dpc) ? dpr + dpc * t.dst.grid.nprow : -1;
  const PeerIndex sends(plan.sends);
  const PeerIndex recvs(plan.recvs);
  std::vector<RankStep> steps;
  for (const Step &step : s.steps) {
    RankStep mine;
    for (const Piece &p : step.pieces) {
      if (p.src == src_node) {
        mine.send = sends.find(p.dst % t.dst.grid.nprow, p.dst / t.dst.grid.nprow);
        mine.send_offset = p.offset;
        mine.send_count = p.volume;
      }
      if (p.dst == dst_node) {
        mine.recv = recvs.find(p.src % t.src.grid.nprow, p.src / t.src.grid.nprow);
        mine.recv_offset = p.offset;
        mine.recv_count = p.volume;
      }
    }
    if (mine.send >= 0 || mine.recv >= 0) {
      steps.push_back(mine);
    }
  }
  return steps;
}

} // namespace planning

} // namespace redist
