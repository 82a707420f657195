// Statistics of the closed forms without building them: N, T and the predicted time of
// whole-period transfers from the papers' message lengths (Desprez et al. 1998, Sec. 4, Prop. 4;
// Walker & Otto 1996 and Park, Prasanna & Raghavendra 1999 through the Evers 2025 review,
// Secs. 4.2.3 and 4.2.6), and of a 2-D product from its dimensions' (Desprez et al. 1998,
// Sec. 6). Pure code, no MPI.

#include "cyclic_pattern.hpp"
#include "schedule_cyclic.hpp"

#include <algorithm>
#include <cstddef>
#include <optional>
#include <vector>

namespace redist {

using namespace cyclic;

namespace {

ScheduleStats matching_stats(Index steps, Index pieces, Index elements, Index sum_step_max,
                             Index largest, const CostModel &model, std::size_t element_bytes) {
  ScheduleStats st;
  st.steps = steps;
  st.pieces = pieces;
  st.elements = elements;
  st.sum_step_max = sum_step_max;
  st.largest_piece = largest;
  st.max_node_pieces = steps > 0 ? 1 : 0;
  st.seconds = static_cast<double>(steps) * (model.alpha + model.step_setup) +
               model.beta * static_cast<double>(element_bytes) * static_cast<double>(sum_step_max);
  return st;
}

} // namespace

ScheduleStats matching_step_stats(const std::vector<StepSize> &steps, Index elements,
                                  const CostModel &model, std::size_t element_bytes) {
  ScheduleStats st;
  st.elements = elements;
  const auto bytes = static_cast<double>(element_bytes);
  for (const StepSize &step : steps) {
    if (step.pieces == 0) {
      continue;
    }
    ++st.steps;
    st.pieces += step.pieces;
    st.sum_step_max += step.largest;
    st.largest_piece = std::max(st.largest_piece, step.largest);
    st.max_node_pieces = 1;
    // As schedule_stats: the busiest node of a matching step sends its one piece.
    st.seconds += model.alpha * 1.0 + model.beta * bytes * static_cast<double>(step.largest) +
                  model.step_setup;
  }
  return st;
}

// The product of a row schedule R and a column schedule C of a full window (product_schedule):
// step (a, b) holds the pieces (r, c) for r in R_a and c in C_b, of r.volume * c.volume
// elements (message_elements of a full window is the product of the 1-D counts). So
//  - its largest piece is max_a * max_b (all volumes are positive), hence
//    T = sum_a sum_b max_a max_b = T_R * T_C and the largest piece is L_R * L_C;
//  - it holds |R_a| |C_b| pieces, none empty, so no step is empty: N = N_R * N_C and the
//    pieces add up to pieces_R * pieces_C, the elements to elements_R * elements_C;
//  - two of its pieces share a 2-D sender (pr, pc) only if they share the row sender pr and
//    the column sender pc, i.e. are the same piece, as R_a and C_b are matchings; receivers
//    alike. Each step is a matching, whose busiest node costs alpha + beta * bytes * max.
std::optional<ScheduleStats> product_closed_form_stats(const Transfer &t, const CostModel &model,
                                                       std::size_t element_bytes) {
  if (t.region.kind != Region::Kind::full) {
    return std::nullopt;
  }
  const std::optional<ClosedFormSchedule> rows = best_closed_form(t.rows(), model, element_bytes);
  const std::optional<ClosedFormSchedule> cols = best_closed_form(t.cols(), model, element_bytes);
  if (!rows || !cols) {
    return std::nullopt;
  }
  const ScheduleStats r = rows->stats(model, element_bytes);
  const ScheduleStats c = cols->stats(model, element_bytes);
  ScheduleStats st;
  st.steps = r.steps * c.steps;
  st.pieces = r.pieces * c.pieces;
  st.elements = r.elements * c.elements;
  st.sum_step_max = r.sum_step_max * c.sum_step_max;
  st.largest_piece = r.largest_piece * c.largest_piece;
  st.max_node_pieces = st.steps > 0 ? 1 : 0;
  st.seconds =
      static_cast<double>(st.steps) * (model.alpha + model.step_setup) +
      model.beta * static_cast<double>(element_bytes) * static_cast<double>(st.sum_step_max);
  return st;
}

std::optional<ScheduleStats> class_based_stats(const Transfer1D &t, const CostModel &model,
                                               std::size_t element_bytes) {
  const std::optional<Aligned> a = aligned(t);
  if (!a) {
    return std::nullopt;
  }
  const std::optional<ClassParams> c = class_params(*a);
  const std::optional<Index> periods = a->whole_periods();
  if (!c || !periods) {
    return std::nullopt;
  }
  if (*periods == 0) {
    return matching_stats(0, 0, 0, 0, 0, model, element_bytes);
  }
  // Prop. 4: every step holds messages of one class; the classes' lengths add up to r1 s1.
  const std::vector<Index> classes = communicating_classes(*c);
  const Index M = std::max(a->P, a->Q) / c->g;
  Index largest = 0;
  for (const Index k : classes) {
    largest = std::max(largest, class_volume(*c, k));
  }
  const Index scale = *periods * c->D;
  const auto steps = static_cast<Index>(classes.size()) * M;
  return matching_stats(steps, steps * std::min(a->P, a->Q), t.length, scale * c->r1 * c->s1 * M,
                        scale * largest, model, element_bytes);
}

std::optional<ScheduleStats> walker_otto_stats(const Transfer1D &t, const CostModel &model,
                                               std::size_t element_bytes) {
  if (t.src.nprocs != t.dst.nprocs) {
    return std::nullopt;
  }
  const std::optional<Aligned> a = aligned(t);
  if (!a || (a->s % a->r != 0 && a->r % a->s != 0)) {
    return std::nullopt;
  }
  const std::optional<Index> periods = a->whole_periods();
  if (!periods) {
    return std::nullopt;
  }
  if (*periods == 0) {
    return matching_stats(0, 0, 0, 0, 0, model, element_bytes);
  }
  // k steps; in each, every process sends one block of x per superblock.
  const Index x = std::min(a->r, a->s);
  const Index k = std::max(a->r, a->s) / x;
  const Index piece = *periods * x;
  return matching_stats(k, k * a->P, t.length, k * piece, piece, model, element_bytes);
}

std::optional<ScheduleStats> circulant_stats(const Transfer1D &t, const CostModel &model,
                                             std::size_t element_bytes) {
  std::optional<Aligned> a = aligned(t);
  if (!a) {
    return std::nullopt;
  }
  if (!circulant_forward_applies(*a)) {
    a = aligned(swapped(t));
    if (!circulant_forward_applies(*a)) {
      return std::nullopt;
    }
  }
  const std::optional<Index> periods = a->whole_periods();
  if (!periods) {
    return std::nullopt;
  }
  if (*periods == 0) {
    return matching_stats(0, 0, 0, 0, 0, model, element_bytes);
  }
  // A sender sends k1 Q1 blocks per period, in `rows` steps of one length each: one block when
  // not all-to-all, else ceil(k1/G2) or floor(k1/G2) blocks (Park et al. 1999; Evers 2025
  // review, Sec. 4.2.6).
  const CirculantParams c = circulant_params(*a);
  const Index block = *periods * a->r;
  return matching_stats(c.rows, c.rows * a->P, t.length, block * c.k1 * c.Q1,
                        block * ceil_div(c.k1, std::min(c.k1, c.G2)), model, element_bytes);
}

} // namespace redist
