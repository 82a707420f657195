// Layout layer: where a rank keeps its blocks of a block grid (check_local_placement). Pure.

#include "block_grid.hpp"

#include <algorithm>
#include <map>
#include <optional>
#include <queue>
#include <utility>

namespace redist {
namespace {

// Block `index` in the local array: elements [begin, end), `across` runs of `along` elements,
// ld apart.
struct Span {
  Index begin = 0;
  Index end = 0;
  Index along = 0;
  Index across = 0;
  Index ld = 1;
  std::size_t index = 0;
};

using Pair = std::pair<std::size_t, std::size_t>;

// Whether two spans share an element: for each run of the one with fewer runs, the other's
// first run ending after its start must start before its end.
bool spans_meet(const Span &x0, const Span &y0) {
  const Span &x = x0.across <= y0.across ? x0 : y0;
  const Span &y = x0.across <= y0.across ? y0 : x0;
  for (Index c = 0; c < x.across; ++c) {
    const Index lo = x.begin + c * x.ld;
    const Index d = lo - y.begin - y.along; // y's run k ends after lo when k * ld > d
    const Index k = d < 0 ? 0 : d / y.ld + 1;
    if (k < y.across && y.begin + k * y.ld < lo + x.along) return true;
  }
  return false;
}

// Rows [r0, r1) x columns [c0, c1) of the local array seen as a matrix of ld rows.
struct Box {
  Index r0 = 0;
  Index r1 = 0;
  Index c0 = 0;
  Index c1 = 0;
  std::size_t index = 0;
};

// Two spans of one leading dimension L sharing an element, if any: each is one rectangle of
// the array seen as a matrix of L rows (two when its runs wrap into the next column), and a
// sweep along the columns keeps the row intervals of the rectangles it crosses, disjoint and
// sorted, where only the neighbours of a new one can meet it. O(k log k).
std::optional<Pair> same_ld_meeting(const std::vector<Span> &spans) {
  std::vector<Box> boxes;
  for (const Span &s : spans) {
    const Index r0 = s.begin % s.ld;
    const Index c0 = s.begin / s.ld;
    if (r0 + s.along <= s.ld) {
      boxes.push_back({r0, r0 + s.along, c0, c0 + s.across, s.index});
    } else {
      boxes.push_back({r0, s.ld, c0, c0 + s.across, s.index});
      boxes.push_back({0, r0 + s.along - s.ld, c0 + 1, c0 + 1 + s.across, s.index});
    }
  }
  std::sort(boxes.begin(), boxes.end(), [](const Box &x, const Box &y) { return x.c0 < y.c0; });
  std::map<Index, std::pair<Index, std::size_t>> active; // r0 -> (r1, block)
  std::priority_queue<std::pair<Index, Index>, std::vector<std::pair<Index, Index>>,
                      std::greater<>>
      ends; // (c1, r0) of the active boxes
  for (const Box &b : boxes) {
    while (!ends.empty() && ends.top().first <= b.c0) {
      active.erase(ends.top().second);
      ends.pop();
    }
    const auto next = active.lower_bound(b.r0);
    if (next != active.end() && next->first < b.r1) return Pair{next->second.second, b.index};
    if (next != active.begin()) {
      const auto before = std::prev(next);
      if (before->second.first > b.r0) return Pair{before->second.second, b.index};
    }
    active.emplace(b.r0, std::pair{b.r1, b.index});
    ends.emplace(b.c1, b.r0);
  }
  return std::nullopt;
}

// Two spans of different leading dimensions sharing an element, if any: the spans by their
// first element, each compared with those of other leading dimensions still open.
std::optional<Pair> cross_ld_meeting(std::vector<Span> spans) {
  std::sort(spans.begin(), spans.end(),
            [](const Span &x, const Span &y) { return x.begin < y.begin; });
  std::map<Index, std::vector<Span>> open; // by leading dimension
  for (const Span &s : spans) {
    for (auto &[ld, list] : open) {
      if (ld == s.ld) continue;
      std::erase_if(list, [&](const Span &o) { return o.end <= s.begin; });
      for (const Span &o : list) {
        if (spans_meet(o, s)) return Pair{o.index, s.index};
      }
    }
    open[s.ld].push_back(s);
  }
  return std::nullopt;
}

} // namespace

std::string check_local_placement(const BlockGrid &g, std::size_t element_size,
                                  const std::string &side) {
  const auto es = static_cast<Index>(element_size);
  std::map<Index, std::vector<Span>> by_ld;
  std::vector<Span> all;
  for (std::size_t k = 0; k < g.local.size(); ++k) {
    const LocalBlock &b = g.local[k];
    const auto r = static_cast<std::size_t>(b.block_row);
    const auto c = static_cast<std::size_t>(b.block_col);
    const Index rows = g.row_splits[r + 1] - g.row_splits[r];
    const Index cols = g.col_splits[c + 1] - g.col_splits[c];
    Span s{b.offset, 0, g.row_major ? cols : rows, g.row_major ? rows : cols, b.ld, k};
    if (s.along == 0 || s.across == 0) continue; // an empty block holds no element
    Index last = 0;
    if (__builtin_mul_overflow(s.across - 1, s.ld, &last) ||
        __builtin_add_overflow(last, s.begin + s.along, &s.end) || s.end > INT64_MAX / es) {
      return side + "local[" + std::to_string(k) + "].offset: " + std::to_string(b.offset) +
             ": the block's last element is beyond 2^63 bytes";
    }
    by_ld[s.ld].push_back(s);
    all.push_back(s);
  }
  std::optional<Pair> meeting;
  for (auto it = by_ld.begin(); it != by_ld.end() && !meeting; ++it) {
    meeting = same_ld_meeting(it->second);
  }
  if (!meeting && by_ld.size() > 1) meeting = cross_ld_meeting(std::move(all));
  if (!meeting) return {};
  const auto [first, second] = std::minmax(meeting->first, meeting->second);
  return side + "local[" + std::to_string(second) +
         "].offset: " + std::to_string(g.local[second].offset) +
         ": the block shares elements of the local array with local[" + std::to_string(first) + "]";
}

} // namespace redist
