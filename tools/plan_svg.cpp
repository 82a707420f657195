#include "plan_svg.hpp"

#include "svg.hpp"

#include <algorithm>
#include <cmath>
#include <map>
#include <numeric>
#include <string>
#include <utility>
#include <vector>

namespace redist::plan_svg {

namespace {

// Budgets: the panels of one phase stay under 20,000 elements whatever the problem size.
constexpr std::size_t kMapRects = 3000;       // per ownership map
constexpr std::size_t kMapPerSide = 200;      // rows or columns of rectangles per map
constexpr int kHeatSide = 64;                 // heat map cells per side
constexpr std::size_t kSchedulePieces = 1500; // pieces drawn in the schedule panel
constexpr int kScheduleSenders = 40;          // sender columns drawn
constexpr std::size_t kScheduleSteps = 64;    // step rows drawn
constexpr int kSlotsPerCell = 8;              // pieces of one sender drawn in one step

constexpr double kMargin = 20;
constexpr double kMapBox = 420;  // largest side of an ownership map, pixels
constexpr double kMapGap = 70;   // between the two maps
constexpr double kHeatBox = 512; // largest side of the heat map
constexpr double kSlot = 26;     // height of one piece in the schedule panel
constexpr const char *kArrow = "\xe2\x86\x92";

/// Estimated width of `chars` characters of DejaVu Sans at `font` pixels (digits are 0.64 em).
double text_width(std::size_t chars, double font) {
  return static_cast<double>(chars) * 0.64 * font;
}

std::string count_text(Index v) {
  std::string digits = std::to_string(v < 0 ? -v : v);
  std::string out;
  for (std::size_t k = 0; k < digits.size(); ++k) {
    if (k > 0 && (digits.size() - k) % 3 == 0) out += ',';
    out += digits[k];
  }
  return (v < 0 ? "-" : "") + out;
}

std::string fill_attribute(svg::Rgb c) {
  return "fill=\"" + svg::hex(c) + "\"";
}

/// `c` mixed with white: what lies outside the window.
svg::Rgb faded(svg::Rgb c) {
  const auto mix = [](int v) { return 255 - static_cast<int>(std::lround((255 - v) * 0.3)); };
  return {mix(c.r), mix(c.g), mix(c.b)};
}

// --- Ownership maps ---

/// The next cut after x along one dimension: a block boundary, a window edge or the end.
Index next_cut(Index x, Index block, Index window_lo, Index window_hi, Index end) {
  Index next = std::min((x / block + 1) * block, end);
  if (window_lo > x) next = std::min(next, window_lo);
  if (window_hi > x) next = std::min(next, window_hi);
  return next;
}

/// Segments of [0, extent) between cuts.
Index segment_count(Index extent, Index block, Index window_lo, Index window_hi) {
  if (extent <= 0) return 0;
  Index cuts = (extent - 1) / block;
  const auto extra_cut = [&](Index edge) { return edge > 0 && edge < extent && edge % block != 0; };
  cuts += (extra_cut(window_lo) ? 1 : 0) + (window_hi != window_lo && extra_cut(window_hi) ? 1 : 0);
  return cuts + 1;
}

/// Boundaries start = b0 < b1 < ... of at most `segments` segments, ending at extent or earlier.
std::vector<Index> cuts_from(Index start, Index segments, Index extent, Index block, Index lo,
                             Index hi) {
  std::vector<Index> b{start};
  while (b.back() < extent && static_cast<Index>(b.size()) <= segments) {
    b.push_back(next_cut(b.back(), block, lo, hi, extent));
  }
  return b;
}

} // namespace

OwnershipMap ownership_map(const Layout &layout, Index m, Index n, std::size_t max_rects,
                           std::size_t max_per_side) {
  OwnershipMap map;
  map.rows = layout.rows.extent;
  map.cols = layout.cols.extent;
  const Index row_segments = segment_count(map.rows, layout.rows.block, layout.i, layout.i + m);
  const Index col_segments = segment_count(map.cols, layout.cols.block, layout.j, layout.j + n);
  const auto rect_budget = static_cast<Index>(max_rects);
  const auto side = static_cast<Index>(max_per_side);
  Index draw_rows = row_segments;
  Index draw_cols = col_segments;
  Index first_row = 0;
  Index first_col = 0;
  if (row_segments * col_segments > rect_budget || row_segments > side || col_segments > side) {
    const auto square = static_cast<Index>(std::sqrt(static_cast<double>(rect_budget)));
    draw_cols = std::min(
        {col_segments, side, std::max(square, rect_budget / std::max(row_segments, Index{1}))});
    draw_rows = std::min({row_segments, side, rect_budget / std::max(draw_cols, Index{1})});
    // A crop starts at the block holding the window's first element (at that element when
    // only one segment fits; an empty window may start at the end).
    const auto crop_start = [](Index first, Index extent, Index block, Index segments) {
      const Index at = std::min(first, extent - 1);
      return segments > 1 ? at / block * block : at;
    };
    if (draw_rows < row_segments)
      first_row = crop_start(layout.i, map.rows, layout.rows.block, draw_rows);
    if (draw_cols < col_segments)
      first_col = crop_start(layout.j, map.cols, layout.cols.block, draw_cols);
  }
  const std::vector<Index> rb =
      cuts_from(first_row, draw_rows, map.rows, layout.rows.block, layout.i, layout.i + m);
  const std::vector<Index> cb =
      cuts_from(first_col, draw_cols, map.cols, layout.cols.block, layout.j, layout.j + n);
  map.first_row = rb.front();
  map.end_row = rb.back();
  map.first_col = cb.front();
  map.end_col = cb.back();
  for (std::size_t a = 0; a + 1 < rb.size(); ++a) {
    const bool rows_in = rb[a] >= layout.i && rb[a] < layout.i + m;
    for (std::size_t b = 0; b + 1 < cb.size(); ++b) {
      const bool cols_in = cb[b] >= layout.j && cb[b] < layout.j + n;
      const int node = layout.rows.owner(rb[a]) + layout.cols.owner(cb[b]) * layout.rows.nprocs;
      map.rects.push_back({rb[a], rb[a + 1], cb[b], cb[b + 1], node, rows_in && cols_in});
    }
  }
  return map;
}

OwnershipMap ownership_map_1d(const BlockCyclic &dim, Index start, Index length, Index fold,
                              std::size_t max_rects, std::size_t max_per_side) {
  OwnershipMap map;
  map.fold = std::max(fold, Index{1});
  map.cols = map.fold;
  map.rows = (dim.extent + map.fold - 1) / map.fold;
  map.first_col = 0;
  map.end_col = map.cols;
  // Whole rows from `first`, as many as the budgets allow; false when a row did not fit.
  const auto fill_from = [&](Index first) {
    map.rects.clear();
    map.first_row = map.end_row = first;
    for (Index row = first; row < map.rows; ++row) {
      if (static_cast<std::size_t>(row - first) >= max_per_side) return false;
      const std::size_t before = map.rects.size();
      const Index row_end = std::min((row + 1) * map.fold, dim.extent);
      for (Index g = row * map.fold; g < row_end;) {
        const Index next = next_cut(g, dim.block, start, start + length, row_end);
        map.rects.push_back({row, row + 1, g - row * map.fold, next - row * map.fold, dim.owner(g),
                             g >= start && g < start + length});
        g = next;
      }
      if (map.rects.size() > max_rects) {
        map.rects.resize(before);
        return false;
      }
      map.end_row = row + 1;
    }
    return true;
  };
  if (!fill_from(0)) fill_from(std::min(start, dim.extent - 1) / map.fold);
  return map;
}

Index fold_width(const Transfer1D &t) {
  const Index longest = std::max(t.src.extent, t.dst.extent);
  if (longest <= 64) return std::max(longest, Index{1});
  const Index block = std::min(t.src.block, t.dst.block);
  const Index period = t.src.block * t.src.nprocs;
  if (period >= 16 && period <= 48 * block && period < longest) return period;
  return std::min(32 * block, longest);
}

HeatMap heat_map(const VolumeGraph &graph, int max_side) {
  HeatMap h;
  h.senders_per_cell = std::max(1, (graph.senders + max_side - 1) / max_side);
  h.receivers_per_cell = std::max(1, (graph.receivers + max_side - 1) / max_side);
  h.rows = (graph.senders + h.senders_per_cell - 1) / h.senders_per_cell;
  h.cols = (graph.receivers + h.receivers_per_cell - 1) / h.receivers_per_cell;
  h.volume.assign(static_cast<std::size_t>(h.rows) * static_cast<std::size_t>(h.cols), 0);
  for (const Message &msg : graph.messages) {
    const auto row = static_cast<std::size_t>(msg.src / h.senders_per_cell);
    const auto col = static_cast<std::size_t>(msg.dst / h.receivers_per_cell);
    h.volume[row * static_cast<std::size_t>(h.cols) + col] += msg.volume;
  }
  return h;
}

namespace {

// --- Drawing ---

/// Pixel position of the cells of a map.
struct Frame {
  double x = 0;
  double y = 0;
  double sx = 1; ///< pixels per cell column
  double sy = 1; ///< pixels per cell row
  Index first_row = 0;
  Index first_col = 0;
  [[nodiscard]] double px(Index col) const { return x + static_cast<double>(col - first_col) * sx; }
  [[nodiscard]] double py(Index row) const { return y + static_cast<double>(row - first_row) * sy; }
};

/// The process (rank) colour of grid position `node`.
svg::Rgb node_colour(const Grid &grid, int node) {
  return svg::process_colour(grid.ranks[static_cast<std::size_t>(node)]);
}

std::string node_label(const Grid &grid, int node, bool with_position) {
  std::string s = std::to_string(node);
  if (with_position) {
    s += " (" + std::to_string(node % grid.nprow) + "," + std::to_string(node / grid.nprow) + ")";
  }
  return s;
}

/// Legend of a grid's nodes in their process colours, `width` pixels wide; returns its height.
double node_legend(svg::Document &doc, double x, double y, double width, const Grid &grid) {
  constexpr int kShown = 48;
  const int nodes = grid.nprow * grid.npcol;
  const bool positions = grid.nprow > 1 && grid.npcol > 1;
  const std::size_t chars = node_label(grid, nodes - 1, positions).size();
  const double entry = 16 + text_width(chars, 11) + 10;
  const int per_row = std::max(1, static_cast<int>(width / entry));
  const int shown = std::min(nodes, kShown);
  for (int k = 0; k < shown; ++k) {
    const double ex = x + static_cast<double>(k % per_row) * entry;
    const int row = k / per_row;
    const double ey = y + 16.0 * row;
    doc.rect(ex, ey, 12, 12,
             fill_attribute(node_colour(grid, k)) + R"( stroke="#333" stroke-width="0.5")");
    doc.text(ex + 16, ey + 10, node_label(grid, k, positions), R"(font-size="11")");
  }
  double height = std::ceil(static_cast<double>(shown) / per_row) * 16;
  if (shown < nodes) {
    doc.text(x, y + height + 10, "... and " + count_text(nodes - shown) + " more",
             R"(font-size="11" fill="#555")");
    height += 16;
  }
  return height;
}

/// Outline of the folded range [a, b) (1-D window) as polygons in cells.
void folded_range_outline(svg::Document &doc, const Frame &f, Index a, Index b, Index fold,
                          std::string_view attributes) {
  if (a >= b) return;
  const Index ra = a / fold;
  const Index ca = a % fold;
  const Index rb = (b - 1) / fold;
  const Index cb = (b - 1) % fold + 1;
  const auto box = [&](Index r0, Index c0, Index r1, Index c1) {
    doc.rect(f.px(c0), f.py(r0), f.px(c1) - f.px(c0), f.py(r1) - f.py(r0), attributes);
  };
  if (ra == rb) {
    box(ra, ca, ra + 1, cb);
  } else if (ra + 1 == rb && cb <= ca) {
    box(ra, ca, ra + 1, fold);
    box(rb, 0, rb + 1, cb);
  } else {
    std::string points;
    for (const auto &[c, r] : {std::pair{ca, ra},
                               {fold, ra},
                               {fold, rb},
                               {cb, rb},
                               {cb, rb + 1},
                               {Index{0}, rb + 1},
                               {Index{0}, ra + 1},
                               {ca, ra + 1}}) {
      points += svg::point(f.px(c), f.py(r));
    }
    doc.poly(true, points, attributes);
  }
}

/// The copied part's lower (upper trapezoid) or upper (lower trapezoid) edge, in cells.
void trapezoid_edge(svg::Document &doc, const Frame &f, const Layout &l, Index m, Index n,
                    const Region &region) {
  if (region.kind == Region::Kind::full || m == 0 || n == 0) return;
  const Index stride = std::max(Index{1}, n / 400);
  std::string points;
  for (Index c = 0; c < n; c += stride) {
    const auto [first, last] = region.rows_in_column(c, m, n);
    const Index edge = l.i + (region.kind == Region::Kind::upper ? last : first);
    const Index end = std::min(c + stride, n);
    points += svg::point(f.px(l.j + c), f.py(edge)) + svg::point(f.px(l.j + end), f.py(edge));
  }
  doc.poly(false, points,
           R"(fill="none" stroke="black" stroke-width="1.5" stroke-dasharray="5 3")");
}

struct MapSide {
  std::string caption;
  const Layout *layout = nullptr; ///< the whole layout (grid, window start)
  OwnershipMap map;
  Index window_start = 0; ///< 1-D: first element of the window
  Index window_length = 0;
};

/// One ownership map with its caption, crop note and legend at (x, y); returns the height.
double draw_map(svg::Document &doc, double x, double y, const MapSide &side, const Transfer &t,
                const std::string &clip) {
  const OwnershipMap &map = side.map;
  const Layout &l = *side.layout;
  const bool folded = map.fold > 0;
  doc.text(x, y + 12, side.caption, R"(font-weight="bold")");
  double cy = y + 20;
  const Index drawn_rows = map.end_row - map.first_row;
  const Index drawn_cols = map.end_col - map.first_col;
  if (drawn_rows <= 0 || drawn_cols <= 0) {
    doc.text(x, cy + 14, folded ? "(empty vector)" : "(empty matrix)", R"(fill="#555")");
    return cy + 24 - y;
  }
  std::vector<std::string> notes;
  if (folded) {
    notes.push_back("vector folded into rows of " + count_text(map.fold) + " elements");
    if (map.cropped()) {
      notes.push_back("cropped to rows " + count_text(map.first_row) + "-" +
                      count_text(map.end_row - 1) + " of " + count_text(map.rows) +
                      " (too many blocks to draw)");
    }
  } else if (map.cropped()) {
    notes.push_back("cropped to rows " + count_text(map.first_row) + "-" +
                    count_text(map.end_row - 1) + ", columns " + count_text(map.first_col) + "-" +
                    count_text(map.end_col - 1) + " of " + count_text(map.rows) + " x " +
                    count_text(map.cols) + ";");
    notes.push_back("the pattern repeats every " + count_text(l.rows.block * l.rows.nprocs) +
                    " rows and " + count_text(l.cols.block * l.cols.nprocs) + " columns");
  }
  for (const std::string &note : notes) {
    doc.text(x, cy + 11, note, R"(font-size="11" fill="#555")");
    cy += 15;
  }
  cy += 4;
  const double scale = std::min(kMapBox / static_cast<double>(drawn_cols),
                                kMapBox / static_cast<double>(drawn_rows));
  Frame f{x, cy, scale, scale, map.first_row, map.first_col};
  // Thin shapes are stretched so that cells stay readable where the box has room.
  f.sx = std::max(f.sx, std::min(16.0, kMapBox / static_cast<double>(drawn_cols)));
  f.sy = std::max(f.sy, std::min(16.0, kMapBox / static_cast<double>(drawn_rows)));
  const double width = f.sx * static_cast<double>(drawn_cols);
  const double height = f.sy * static_cast<double>(drawn_rows);
  const bool labels = map.rects.size() <= 1500;
  for (const OwnedRect &r : map.rects) {
    const svg::Rgb base = node_colour(l.grid, r.node);
    const svg::Rgb fill = r.in_window ? base : faded(base);
    const double rx = f.px(r.col0);
    const double ry = f.py(r.row0);
    const double rw = f.px(r.col1) - rx;
    const double rh = f.py(r.row1) - ry;
    doc.rect(rx, ry, rw, rh, fill_attribute(fill) + R"( class="own")");
    const std::string label = std::to_string(r.node);
    if (labels && rw >= text_width(label.size(), 10) + 3 && rh >= 12) {
      doc.text(rx + rw / 2, ry + rh / 2 + 3.5, label,
               std::string(R"(font-size="10" text-anchor="middle" fill=")") +
                   svg::text_colour(fill) + "\"");
    }
  }
  doc.rect(x, cy, width, height, R"(fill="none" stroke="#888" stroke-width="0.5")");
  // Window outline (and trapezoid edge), clipped to the drawn part.
  doc.raw("<clipPath id=\"" + clip + "\"><rect x=\"" + svg::number(x) + "\" y=\"" +
          svg::number(cy) + "\" width=\"" + svg::number(width) + "\" height=\"" +
          svg::number(height) + "\"/></clipPath>");
  doc.raw("<g clip-path=\"url(#" + clip + ")\">");
  constexpr const char *kOutline = R"(fill="none" stroke="black" stroke-width="2.5")";
  if (folded) {
    folded_range_outline(doc, f, side.window_start, side.window_start + side.window_length,
                         map.fold, kOutline);
  } else if (t.m > 0 && t.n > 0) {
    doc.rect(f.px(l.j), f.py(l.i), f.px(l.j + t.n) - f.px(l.j), f.py(l.i + t.m) - f.py(l.i),
             kOutline);
    trapezoid_edge(doc, f, l, t.m, t.n, t.region);
  }
  doc.raw("</g>");
  cy += height + 8;
  if (map.cropped() && !folded) {
    // Where the crop lies in the whole matrix.
    const double tw = 90;
    const double th = std::clamp(tw * static_cast<double>(map.rows) /
                                     static_cast<double>(std::max(map.cols, Index{1})),
                                 12.0, 90.0);
    const double ux = tw / static_cast<double>(map.cols);
    const double uy = th / static_cast<double>(map.rows);
    doc.rect(x, cy, tw, th, R"(fill="#f2f2f2" stroke="#888")");
    doc.rect(x + ux * static_cast<double>(l.j), cy + uy * static_cast<double>(l.i),
             std::max(1.0, ux * static_cast<double>(t.n)),
             std::max(1.0, uy * static_cast<double>(t.m)),
             R"(fill="none" stroke="black" stroke-width="1.5")");
    doc.rect(x + ux * static_cast<double>(map.first_col),
             cy + uy * static_cast<double>(map.first_row),
             std::max(2.0, ux * static_cast<double>(drawn_cols)),
             std::max(2.0, uy * static_cast<double>(drawn_rows)), R"(fill="#c0392b")");
    doc.text(x + tw + 8, cy + 12, "whole matrix: window outlined,",
             R"(font-size="11" fill="#555")");
    doc.text(x + tw + 8, cy + 26, "the drawn part in red", R"(font-size="11" fill="#555")");
    cy += th + 10;
  }
  cy += node_legend(doc, x, cy, kMapBox, l.grid);
  return cy - y;
}

/// Panel (a); returns its height.
double ownership_panel(svg::Document &doc, double y, const Transfer &t, bool one_d,
                       const std::string &ids) {
  doc.text(kMargin, y + 14,
           "(a) Ownership: each block coloured by its process, numbered by grid position",
           R"(font-size="14" font-weight="bold")");
  const bool shared = std::any_of(t.src.grid.ranks.begin(), t.src.grid.ranks.end(), [&](int r) {
    return std::find(t.dst.grid.ranks.begin(), t.dst.grid.ranks.end(), r) != t.dst.grid.ranks.end();
  });
  std::string note = std::string("The window being copied is outlined, the rest of the ") +
                     (one_d ? "vector" : "matrix") + " faded; " +
                     (one_d ? "" : "node k = (pr,pc), k = pr + pc*nprow; ") +
                     (shared ? "equal colours = the same process."
                             : "source and destination are distinct processes.");
  if (t.region.kind != Region::Kind::full) note += " Dashed: the edge of the copied trapezoid.";
  doc.text(kMargin, y + 32, note, R"(font-size="11" fill="#555")");
  std::vector<MapSide> sides(2);
  for (int k = 0; k < 2; ++k) {
    const Layout &l = k == 0 ? t.src : t.dst;
    MapSide &s = sides[static_cast<std::size_t>(k)];
    s.layout = &l;
    if (one_d) {
      const Index fold = fold_width(t.rows());
      s.window_start = l.i;
      s.window_length = t.m;
      s.map = ownership_map_1d(l.rows, l.i, t.m, fold, kMapRects, kMapPerSide);
      s.caption = std::string(k == 0 ? "source" : "destination") + ": CYCLIC(" +
                  count_text(l.rows.block) + ") on " + count_text(l.rows.nprocs) +
                  " processes, window at " + count_text(l.i);
    } else {
      s.map = ownership_map(l, t.m, t.n, kMapRects, kMapPerSide);
      s.caption = std::string(k == 0 ? "source A" : "destination B") + ": " +
                  count_text(l.rows.block) + " x " + count_text(l.cols.block) + " blocks, " +
                  std::to_string(l.grid.nprow) + " x " + std::to_string(l.grid.npcol) +
                  " grid, window at (" + count_text(l.i) + ", " + count_text(l.j) + ")";
    }
  }
  // Cropped folded vectors with their windows on the same row show the same rows.
  OwnershipMap &src = sides[0].map;
  OwnershipMap &dst = sides[1].map;
  if (one_d && src.cropped() && dst.cropped() && src.first_row == dst.first_row &&
      src.end_row != dst.end_row) {
    const auto rows = static_cast<std::size_t>(std::min(src.end_row, dst.end_row) - src.first_row);
    OwnershipMap &longer = src.end_row > dst.end_row ? src : dst;
    const Layout &l = src.end_row > dst.end_row ? t.src : t.dst;
    longer = ownership_map_1d(l.rows, l.i, t.m, longer.fold, kMapRects, rows);
  }
  const double top = y + 44;
  const double left = draw_map(doc, kMargin, top, sides[0], t, ids + "clip-a");
  const double right = draw_map(doc, kMargin + kMapBox + kMapGap, top, sides[1], t, ids + "clip-b");
  return 44 + std::max(left, right) + 10;
}

/// The nodes of heat map bin `bin`: "k" or "k-l".
std::string node_range(int bin, int per_bin, int nodes) {
  const int first = bin * per_bin;
  const int last = std::min(first + per_bin, nodes) - 1;
  return first == last ? std::to_string(first) : std::to_string(first) + "-" + std::to_string(last);
}

/// Panel (b); returns its height; `width` gets its width.
double volume_panel(svg::Document &doc, double y, const Transfer &t, const VolumeGraph &graph,
                    const std::string &ids, double &width) {
  const HeatMap h = heat_map(graph, kHeatSide);
  const bool binned = h.senders_per_cell > 1 || h.receivers_per_cell > 1;
  doc.text(kMargin, y + 14,
           "(b) Volume: elements each sender (row) sends to each receiver (column)",
           R"(font-size="14" font-weight="bold")");
  std::string note = binned ? "aggregated: each cell sums " + count_text(h.senders_per_cell) +
                                  " senders x " + count_text(h.receivers_per_cell) + " receivers"
                            : "white: no message";
  // Pairs of grid positions that are one process: copied locally, not part of the schedule.
  std::vector<std::pair<int, int>> local;
  if (!binned) {
    for (int a = 0; a < h.rows; ++a) {
      for (int b = 0; b < h.cols; ++b) {
        if (t.src.grid.ranks[static_cast<std::size_t>(a)] ==
            t.dst.grid.ranks[static_cast<std::size_t>(b)])
          local.emplace_back(a, b);
      }
    }
  }
  if (!local.empty())
    note += "; dashed: the same process on both sides (a local copy, not scheduled)";
  doc.text(kMargin, y + 32, note, R"(font-size="11" fill="#555")");
  const double cell = std::clamp(std::floor(kHeatBox / std::max({h.rows, h.cols, 1})), 4.0, 32.0);
  const double label_w = 52;
  const double x0 = kMargin + label_w;
  const double y0 = y + 64;
  const double mw = cell * h.cols;
  const double mh = cell * h.rows;
  doc.text(x0, y + 50,
           "receiver (destination node)" + std::string(binned ? ", first of each bin" : ""),
           R"(font-size="11")");
  doc.rect(x0, y0, mw, mh, R"(fill="white" stroke="#888" stroke-width="0.5")");
  Index largest = 0;
  for (const Index v : h.volume) {
    largest = std::max(largest, v);
  }
  // Axis labels: every one when cells are tall enough, else every k-th.
  const int every = std::max(1, static_cast<int>(std::ceil(13.0 / cell)));
  for (int a = 0; a < h.rows; a += every) {
    doc.text(x0 - 4, y0 + cell * a + cell / 2 + 3.5, std::to_string(a * h.senders_per_cell),
             R"(font-size="10" text-anchor="end")");
  }
  const int every_col =
      std::max(every, static_cast<int>(std::ceil(
                          (text_width(std::to_string(graph.receivers).size(), 10) + 3) / cell)));
  for (int b = 0; b < h.cols; b += every_col) {
    doc.text(x0 + cell * b + cell / 2, y0 - 4, std::to_string(b * h.receivers_per_cell),
             R"(font-size="10" text-anchor="middle")");
  }
  doc.text(x0 - label_w + 2, y0 + mh + 16, "sender (source node)", R"(font-size="11")");
  const double value_font = cell >= 16 ? 10 : 8;
  std::vector<std::pair<Index, int>> unlabelled; // (volume, cell) not annotated
  for (int a = 0; a < h.rows; ++a) {
    for (int b = 0; b < h.cols; ++b) {
      const Index v = h.at(a, b);
      if (v == 0) continue;
      const svg::Rgb c = svg::heat_colour(static_cast<double>(v) / static_cast<double>(largest));
      const double cx = x0 + cell * b;
      const double cy = y0 + cell * a;
      doc.rect(cx, cy, cell, cell, fill_attribute(c) + R"( class="volume")");
      const std::string text = count_text(v);
      if (cell >= 11 && text_width(text.size(), value_font) <= cell - 2) {
        doc.text(cx + cell / 2, cy + cell / 2 + value_font * 0.35, text,
                 R"(font-size=")" + svg::number(value_font) + R"(" text-anchor="middle" fill=")" +
                     svg::text_colour(c) + "\"");
      } else {
        unlabelled.emplace_back(v, a * h.cols + b);
      }
    }
  }
  for (const auto &[a, b] : local) {
    const Index v = h.at(a, b);
    const char *ink = v == 0 ? "black"
                             : svg::text_colour(svg::heat_colour(static_cast<double>(v) /
                                                                 static_cast<double>(largest)));
    doc.rect(x0 + cell * b + 1.5, y0 + cell * a + 1.5, cell - 3, cell - 3,
             std::string(R"(fill="none" stroke-width="1.2" stroke-dasharray="3 2" stroke=")") +
                 ink + "\"");
  }
  const double sx = x0 + mw + 30;
  if (largest == 0) {
    doc.text(sx, y0 + 12, "(no messages)", R"(fill="#555")");
    width = sx + 120;
    return std::max(mh, 20.0) + y0 + 30 - y;
  }
  // Colour scale: 0 at the bottom, the largest cell at the top.
  const double sh = std::clamp(mh, 80.0, 240.0);
  const std::string scale_id = ids + "heatscale";
  std::string gradient =
      "<defs><linearGradient id=\"" + scale_id + R"(" x1="0" y1="1" x2="0" y2="0">)";
  for (int k = 0; k <= 8; ++k) {
    gradient += "<stop offset=\"" + svg::number(k / 8.0) + "\" stop-color=\"" +
                svg::hex(svg::heat_colour(k / 8.0)) + "\"/>";
  }
  doc.raw(gradient + "</linearGradient></defs>");
  doc.rect(sx, y0, 14, sh,
           "fill=\"url(#" + scale_id + R"svg()" stroke="#888" stroke-width="0.5")svg");
  for (int k = 0; k <= 2; ++k) {
    const double ty = y0 + sh - sh * k / 2.0;
    doc.line(sx + 14, ty, sx + 18, ty, R"(stroke="#333")");
    const Index half = largest * k / 2;
    const std::string value = largest * k % 2 == 0 ? count_text(half) : count_text(half) + ".5";
    doc.text(sx + 21, ty + 4, value, R"(font-size="10")");
  }
  doc.text(sx, y0 + sh + 16, "elements", R"(font-size="11")");
  doc.rect(sx, y0 + sh + 26, 14, 14, R"(fill="white" stroke="#888" stroke-width="0.5")");
  doc.text(sx + 21, y0 + sh + 37, "no message", R"(font-size="10")");
  double bottom = std::max(y0 + mh + 22, y0 + sh + 46);
  if (!unlabelled.empty()) {
    std::sort(unlabelled.begin(), unlabelled.end(),
              [](const auto &p, const auto &q) { return p.first > q.first; });
    std::string line = "largest cells not labelled above:";
    for (std::size_t k = 0; k < std::min<std::size_t>(5, unlabelled.size()); ++k) {
      const int a = unlabelled[k].second / h.cols;
      const int b = unlabelled[k].second % h.cols;
      line += (k ? ", " : " ") + node_range(a, h.senders_per_cell, graph.senders) + kArrow +
              node_range(b, h.receivers_per_cell, graph.receivers) + ": " +
              count_text(unlabelled[k].first);
    }
    doc.text(kMargin, bottom + 6, line, R"(font-size="11")");
    bottom += 16;
  }
  width = sx + 90;
  return bottom - y + 10;
}

/// Panel (c); returns its height; `width` gets its width.
double schedule_panel(svg::Document &doc, double y, const Transfer &t, const VolumeGraph &graph,
                      const Schedule &schedule, double &width) {
  const ScheduleStats stats = schedule_stats(schedule, CostModel{}, 1);
  const int senders = std::min(graph.senders, kScheduleSenders);
  // Steps drawn: all, unless the budgets stop earlier.
  std::size_t steps = 0;
  std::size_t drawn_pieces = 0;
  while (steps < schedule.steps.size() && steps < kScheduleSteps) {
    const auto &pieces = schedule.steps[steps].pieces;
    const auto n = static_cast<std::size_t>(std::count_if(
        pieces.begin(), pieces.end(), [senders](const Piece &p) { return p.src < senders; }));
    if (steps > 0 && drawn_pieces + n > kSchedulePieces) break;
    drawn_pieces += n;
    ++steps;
  }
  Index largest_piece = 1;
  std::size_t widest = 1;
  for (std::size_t s = 0; s < steps; ++s) {
    for (const Piece &p : schedule.steps[s].pieces) {
      largest_piece = std::max(largest_piece, p.volume);
      widest = std::max({widest, count_text(p.volume).size(), std::to_string(p.dst).size() + 1});
    }
  }
  Index largest_step = 1;
  for (const Step &s : schedule.steps) {
    largest_step = std::max(largest_step, s.largest());
  }
  doc.text(kMargin, y + 14,
           "(c) Schedule: steps x senders; a cell is one piece: its receiver and size",
           R"(font-size="14" font-weight="bold")");
  doc.text(kMargin, y + 32,
           "N = " + count_text(stats.steps) + " steps, T = " + count_text(stats.sum_step_max) +
               " elements (the sum of the step maxima, right), " + count_text(stats.pieces) +
               " pieces; colour: the receiver's process; bold outline: the largest piece of its "
               "step.",
           R"(font-size="11" fill="#555")");
  double notes = 0;
  if (steps < schedule.steps.size() || senders < graph.senders) {
    doc.text(kMargin, y + 48,
             "showing steps 0-" + count_text(static_cast<Index>(steps) - 1) + " of " +
                 count_text(static_cast<Index>(schedule.steps.size())) + " and senders 0-" +
                 count_text(senders - 1) + " of " + count_text(graph.senders) +
                 " (the step maxima and T count every sender)",
             R"(font-size="11" fill="#c0392b")");
    notes = 16;
  }
  const double cw = std::max(30.0, text_width(widest, 10) + 8);
  const double x0 = kMargin + 56;
  const double header = y + 50 + notes;
  doc.text(x0, header, "sender (source node)", R"(font-size="11")");
  const int every = std::max(1, static_cast<int>(std::ceil(18.0 / cw)));
  for (int p = 0; p < senders; p += every) {
    doc.text(x0 + cw * p + cw / 2, header + 16, std::to_string(p),
             R"(font-size="10" text-anchor="middle")");
  }
  const double mx = x0 + cw * senders + 16; // step maxima column
  const double bar_w = 110;
  doc.text(mx, header + 16, "step maximum", R"(font-size="11")");
  double ry = header + 22;
  if (schedule.steps.empty()) {
    doc.text(x0, ry + 16, "(no messages between processes)", R"(fill="#555")");
    ry += 24;
  }
  std::vector<std::vector<const Piece *>> cells(static_cast<std::size_t>(senders));
  for (std::size_t s = 0; s < steps; ++s) {
    const Step &step = schedule.steps[s];
    for (auto &c : cells) {
      c.clear();
    }
    for (const Piece &p : step.pieces) {
      if (p.src < senders) cells[static_cast<std::size_t>(p.src)].push_back(&p);
    }
    std::size_t slots = 1;
    for (auto &c : cells) {
      std::sort(c.begin(), c.end(), [](const Piece *a, const Piece *b) { return a->dst < b->dst; });
      slots = std::max(slots, c.size());
    }
    const bool overflow = slots > kSlotsPerCell;
    slots = std::min<std::size_t>(slots, kSlotsPerCell);
    const double rh = kSlot * static_cast<double>(slots);
    doc.text(x0 - 8, ry + std::min(rh, kSlot) / 2 + 4, "step " + std::to_string(s),
             R"(class="step" font-size="11" text-anchor="end")");
    doc.rect(x0, ry, cw * senders, rh, R"(fill="#f4f4f4")");
    const Index step_max = step.largest();
    for (int p = 0; p < senders; ++p) {
      const auto &c = cells[static_cast<std::size_t>(p)];
      for (std::size_t k = 0; k < std::min(c.size(), slots); ++k) {
        const Piece &piece = *c[k];
        const svg::Rgb colour = node_colour(t.dst.grid, piece.dst);
        const double px = x0 + cw * p;
        const double py = ry + kSlot * static_cast<double>(k);
        const bool top = piece.volume == step_max;
        doc.rect(px + 1, py + 1, cw - 2, kSlot - 2,
                 fill_attribute(colour) +
                     (top ? R"( stroke="black" stroke-width="2.5")"
                          : R"( stroke="white" stroke-width="0.5")") +
                     R"( class="piece")");
        const std::string ink = std::string(R"(font-size="10" text-anchor="middle" fill=")") +
                                svg::text_colour(colour) + "\"";
        doc.text(px + cw / 2, py + 11.5, kArrow + std::to_string(piece.dst), ink);
        doc.text(px + cw / 2, py + 22, count_text(piece.volume), ink);
      }
    }
    if (overflow) {
      doc.text(x0 + cw * senders + 4, ry + rh - 4, "+", R"(font-size="11" fill="#c0392b")");
    }
    const double bw = bar_w * static_cast<double>(step_max) / static_cast<double>(largest_step);
    doc.rect(mx, ry + 4, std::max(bw, step_max > 0 ? 1.0 : 0.0), std::min(rh, kSlot) - 8,
             R"(fill="#5d6d7e")");
    doc.text(mx + bar_w + 6, ry + std::min(rh, kSlot) / 2 + 4, count_text(step_max),
             R"(font-size="11")");
    ry += rh;
  }
  std::string total = "T = " + count_text(stats.sum_step_max) +
                      " elements over N = " + count_text(stats.steps) + " steps";
  if (steps < schedule.steps.size()) {
    Index drawn_sum = 0;
    for (std::size_t s = 0; s < steps; ++s) {
      drawn_sum += schedule.steps[s].largest();
    }
    total += " (the steps drawn: " + count_text(drawn_sum) + ")";
  }
  doc.line(mx, ry + 4, mx + bar_w + 40, ry + 4, R"(stroke="#333")");
  doc.text(mx, ry + 20, total, R"(font-size="11" font-weight="bold")");
  bool overflowed = false;
  for (std::size_t s = 0; s < steps && !overflowed; ++s) {
    std::vector<int> per_sender(static_cast<std::size_t>(graph.senders), 0);
    for (const Piece &p : schedule.steps[s].pieces) {
      overflowed = overflowed || ++per_sender[static_cast<std::size_t>(p.src)] > kSlotsPerCell;
    }
  }
  if (overflowed) {
    doc.text(kMargin, ry + 38,
             "+: a sender has more than " + std::to_string(kSlotsPerCell) +
                 " pieces in that step; the first " + std::to_string(kSlotsPerCell) +
                 " (by receiver) are drawn",
             R"(font-size="11" fill="#c0392b")");
    ry += 16;
  }
  width = std::max(mx + bar_w + 60, mx + text_width(total.size(), 11) + 10);
  return ry + 30 - y;
}

std::string title(const Transfer &t, bool one_d) {
  if (one_d) {
    return "1-D: CYCLIC(" + count_text(t.src.rows.block) + ") on " + count_text(t.src.rows.nprocs) +
           " -> CYCLIC(" + count_text(t.dst.rows.block) + ") on " + count_text(t.dst.rows.nprocs) +
           " processes, " + count_text(t.m) + " elements";
  }
  const char *region = t.region.kind == Region::Kind::upper   ? ", upper trapezoid"
                       : t.region.kind == Region::Kind::lower ? ", lower trapezoid"
                                                              : "";
  return "2-D: " + count_text(t.m) + " x " + count_text(t.n) + " window" + region +
         (t.region.kind != Region::Kind::full && t.region.unit_diag ? " without the diagonal"
                                                                    : "") +
         ", " + std::to_string(t.src.grid.nprow) + " x " + std::to_string(t.src.grid.npcol) +
         " -> " + std::to_string(t.dst.grid.nprow) + " x " + std::to_string(t.dst.grid.npcol) +
         " processes";
}

} // namespace

std::string plan_svg(const std::vector<GlobalPhase> &phases, bool one_d, std::string_view detail) {
  svg::Document doc;
  double width = kMargin + 2 * kMapBox + kMapGap + kMargin;
  double y = 0;
  for (std::size_t k = 0; k < phases.size(); ++k) {
    const GlobalPhase &phase = phases[k];
    const Transfer &t = phase.transfer;
    const VolumeGraph graph = volume_graph(t);
    std::string heading = "redist-plan: ";
    if (phases.size() > 1) {
      heading += "phase " + std::to_string(k + 1) + " of " + std::to_string(phases.size()) + ", ";
    }
    if (k > 0) {
      doc.line(0, y + 10, width, y + 10, R"(stroke="#333" stroke-width="2")");
      y += 20;
    }
    doc.text(kMargin, y + 26, heading + title(t, one_d), R"(font-size="16" font-weight="bold")");
    doc.text(kMargin, y + 46,
             "schedule: " + phase.detail + "; " + count_text(graph.senders) + " senders, " +
                 count_text(graph.receivers) + " receivers, " +
                 count_text(static_cast<Index>(graph.messages.size())) + " messages, " +
                 count_text(graph.total()) + " elements",
             R"(font-size="12" fill="#333")");
    y += 62;
    if (phases.size() > 1) {
      doc.text(kMargin, y, "plan: " + std::string(detail), R"(font-size="12" fill="#333")");
      y += 16;
    }
    const std::string ids = "phase" + std::to_string(k + 1) + "-";
    y += ownership_panel(doc, y, t, one_d, ids);
    double panel_width = 0;
    y += volume_panel(doc, y, t, graph, ids, panel_width) + 10;
    width = std::max(width, panel_width);
    y += schedule_panel(doc, y, t, graph, phase.schedule, panel_width);
    width = std::max(width, panel_width);
  }
  return doc.finish(static_cast<int>(std::ceil(width)), static_cast<int>(std::ceil(y)));
}

} // namespace redist::plan_svg
