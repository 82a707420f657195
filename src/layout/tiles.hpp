#pragma once
// Layout layer: which element of A goes to which element of B in one message of a plan, for
// any axis permutation (Transfer::perm; 2-D: copy or transpose), in the message's order -- the
// pure description the executor's pack, unpack and local copy follow.
//
// Message order is the same for every permutation: B's window column by column (the column
// pattern's runs), rows increasing within a column (the row pattern's runs), clipped to the
// region on B's window. Sender and receiver walk the same two patterns, so position p of the
// packed message is the same element on both sides. The receiver's side of a transposed
// message is that of a copy (contiguous runs of B's columns); the sender reads A along A's
// rows, with stride lld_src. for_each_piece (plan.hpp) is the copy's walk, kept as it is.
//
//   for_each_strided_piece  one column-piece at a time, in message order
//   for_each_tile           rectangles of the message (a row strip times a column strip) for
//                           a cache-blocked transposition; trapezoids give one-column tiles

#include "plan.hpp"

namespace redist {

/// `count` elements, consecutive in the message; element e is at src + e * src_step in A's
/// local array and dst + e in B's (src_step is 1 for a copy, lld_src for a transpose).
struct StridedPiece {
  Index src = 0;
  Index src_step = 1;
  Index dst = 0;
  Index count = 0;
};

/// Visit a message's pieces in message order: f(const StridedPiece&). Offsets are in elements
/// into the column-major local arrays of A (leading dimension lld_src) and B (lld_dst).
template <class F>
void for_each_strided_piece(const RunPattern &rows, const RunPattern &cols, const Region &region,
                            Index m, Index n, bool transposed, Index lld_src, Index lld_dst,
                            F &&f) {
  const Index src_step = transposed ? lld_src : 1;
  cols.for_each([&](const Run &c) {
    for (Index dc = 0; dc < c.length; ++dc) {
      // B's local column; A's local column for a copy, A's local row for a transpose.
      const Index src_base = transposed ? c.src_local + dc : (c.src_local + dc) * lld_src;
      const Index dst_col = (c.dst_local + dc) * lld_dst;
      const auto [lo, hi] = region.rows_in_column(c.k + dc, m, n);
      rows.for_each(lo, hi, [&](const Run &r) {
        f(StridedPiece{src_base + r.src_local * src_step, src_step, r.dst_local + dst_col,
                       r.length});
      });
    }
  });
}

/// A `height` x `width` rectangle of a message. Element (e, w), e < height, w < width, is at
///   A:        src + e * src_step + w * src_width_step
///   B:        dst + e * dst_step + w * dst_width_step
///   message:  position + e + w * position_width_step
/// e runs along one of B's columns, w across them. For a copy A and B are contiguous along e
/// when dst_step == 1; for a transpose A is contiguous along w (src_width_step == 1 for runs),
/// B along e: a tile is transposed in cache-sized sub-blocks.
struct Tile {
  Index src = 0;
  Index dst = 0;
  Index position = 0;
  Index height = 0;
  Index width = 0;
  Index src_step = 0;
  Index src_width_step = 0;
  Index dst_step = 0;
  Index dst_width_step = 0;
  Index position_width_step = 0;
};

/// Consecutive elements of one dimension's pattern: element e is at window index k.. (not
/// necessarily consecutive: single-element runs with constant local steps are joined, as
/// element-cyclic layouts give) and local indices src_local + e * src_step,
/// dst_local + e * dst_step.
struct Strip {
  Index count = 0;
  Index src_local = 0;
  Index src_step = 1;
  Index dst_local = 0;
  Index dst_step = 1;
};

/// The strips of a pattern's runs clipped to window indices [lo, hi), in order: a run of
/// several elements is one strip (steps 1); runs of one element with constant steps join.
template <class F> void for_each_strip(const RunPattern &pattern, Index lo, Index hi, F &&f) {
  Strip pending;
  bool singles = false; // pending is made of one-element runs
  pattern.for_each(lo, hi, [&](const Run &r) {
    if (r.length == 1 && singles) {
      if (pending.count == 1) {
        pending.src_step = r.src_local - pending.src_local;
        pending.dst_step = r.dst_local - pending.dst_local;
        pending.count = 2;
        return;
      }
      if (r.src_local == pending.src_local + pending.count * pending.src_step &&
          r.dst_local == pending.dst_local + pending.count * pending.dst_step) {
        ++pending.count;
        return;
      }
    }
    if (pending.count > 0) {
      f(pending);
    }
    pending = Strip{r.length, r.src_local, 1, r.dst_local, 1};
    singles = r.length == 1;
  });
  if (pending.count > 0) {
    f(pending);
  }
}

/// Visit the tiles of a message, f(const Tile&); together they hold each element of the
/// message once. Full regions: one tile per (row strip, column strip), column strips in order
/// and row strips in order within each. Trapezoids: one-column tiles in message order.
template <class F>
void for_each_tile(const RunPattern &rows, const RunPattern &cols, const Region &region, Index m,
                   Index n, bool transposed, Index lld_src, Index lld_dst, F &&f) {
  // A's offset of the element at local index `row` along B's rows and `col` along B's columns,
  // and the advance of A's offset per step along each.
  const auto src_offset = [&](Index row, Index col) {
    return transposed ? col + row * lld_src : row + col * lld_src;
  };
  const Index src_row_unit = transposed ? lld_src : 1;
  const Index src_col_unit = transposed ? 1 : lld_src;
  if (region.kind == Region::Kind::full) {
    const Index per_column = rows.total();
    if (per_column == 0) {
      return;
    }
    Index columns_before = 0;
    for_each_strip(cols, 0, cols.window_length(), [&](const Strip &c) {
      Index rows_before = 0;
      for_each_strip(rows, 0, rows.window_length(), [&](const Strip &r) {
        f(Tile{src_offset(r.src_local, c.src_local), r.dst_local + c.dst_local * lld_dst,
               columns_before * per_column + rows_before, r.count, c.count,
               r.src_step * src_row_unit, c.src_step * src_col_unit, r.dst_step,
               c.dst_step * lld_dst, per_column});
        rows_before += r.count;
      });
      columns_before += c.count;
    });
    return;
  }
  Index position = 0;
  cols.for_each([&](const Run &c) {
    for (Index dc = 0; dc < c.length; ++dc) {
      const auto [lo, hi] = region.rows_in_column(c.k + dc, m, n);
      for_each_strip(rows, lo, hi, [&](const Strip &r) {
        f(Tile{src_offset(r.src_local, c.src_local + dc),
               r.dst_local + (c.dst_local + dc) * lld_dst, position, r.count, 1,
               r.src_step * src_row_unit, 0, r.dst_step, 0, 0});
        position += r.count;
      });
    }
  });
}

} // namespace redist
