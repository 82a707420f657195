// Block grid plans (block_grid.hpp) in Pieces: every message a list of tiles in message order,
// packed by its sender from A's local array, unpacked by its receiver into B's (combined as the
// operation says), and the rank's message to itself copied from A to B directly.

#include "pieces.hpp"

#include <algorithm>

namespace redist {

namespace {

// The elements of tile t at message positions [lo, hi): t itself when it lies inside, else
// the clipped part of each of its columns, f(const Tile &).
template <class F> void clip_tile(const Tile &t, Index lo, Index hi, F &&f) {
  if (t.height <= 0 || t.width <= 0) {
    return;
  }
  const Index first = t.position;
  const Index end = t.position + (t.width - 1) * t.position_width_step + t.height;
  if (end <= lo || first >= hi) {
    return;
  }
  if (first >= lo && end <= hi) {
    f(t);
    return;
  }
  for (Index w = 0; w < t.width; ++w) {
    const Index column = t.position + w * t.position_width_step;
    const Index e0 = std::max<Index>(0, lo - column);
    const Index e1 = std::min<Index>(t.height, hi - column);
    if (e0 < e1) {
      f(Tile{t.src + e0 * t.src_step + w * t.src_width_step,
             t.dst + e0 * t.dst_step + w * t.dst_width_step, column + e0, e1 - e0, 1, t.src_step, 0,
             t.dst_step, 0, 0});
    }
  }
}

} // namespace

Pieces::Pieces(std::shared_ptr<const GridRankPlan> plan, std::size_t element_size)
    : plan_(grid_skeleton(*plan)), element_size_(element_size), lld_src_(0), lld_dst_(0),
      grid_(std::move(plan)) {}

void Pieces::copy_grid(const GridMessage &m, bool sending, const std::byte *from, std::byte *to,
                       Index lo, Index hi) const {
  const auto es = static_cast<Index>(element_size_);
  m.for_each_tile([&](const Tile &tile) {
    clip_tile(tile, lo, hi, [&](const Tile &t) {
      // The packed side: contiguous along e, position_width_step across.
      const Index packed = (t.position - lo) * es;
      if (sending) {
        copy_rectangle(to + packed, 1, t.position_width_step, from + t.src * es, t.src_step,
                       t.src_width_step, t.height, t.width, element_size_);
      } else if (operation_ != nullptr) {
        apply_operation(*operation_, to + t.dst * es, t.dst_step, t.dst_width_step, from + packed,
                        1, t.position_width_step, t.height, t.width);
      } else {
        copy_rectangle(to + t.dst * es, t.dst_step, t.dst_width_step, from + packed, 1,
                       t.position_width_step, t.height, t.width, element_size_);
      }
    });
  });
}

void Pieces::copy_grid_local(const std::byte *a, std::byte *b) const {
  const auto es = static_cast<Index>(element_size_);
  grid_->self.for_each_tile([&](const Tile &t) {
    if (t.height <= 0 || t.width <= 0) {
      return;
    }
    if (operation_ != nullptr) {
      apply_operation(*operation_, b + t.dst * es, t.dst_step, t.dst_width_step, a + t.src * es,
                      t.src_step, t.src_width_step, t.height, t.width);
    } else {
      copy_rectangle(b + t.dst * es, t.dst_step, t.dst_width_step, a + t.src * es, t.src_step,
                     t.src_width_step, t.height, t.width, element_size_);
    }
  });
}

single_copy::PieceCounts Pieces::estimate_grid_pieces(const Peer &peer) const {
  // A tile's columns are its pieces on either side (the sender's placement is its own).
  std::size_t pieces = 0;
  grid_->recvs[static_cast<std::size_t>(peer.row_slot)].for_each_tile(
      [&](const Tile &t) { pieces += static_cast<std::size_t>(std::max<Index>(t.width, 0)); });
  single_copy::PieceCounts counts;
  counts.bytes = static_cast<std::size_t>(peer.elements) * element_size_;
  counts.remote_pieces = pieces;
  counts.local_pieces = pieces;
  counts.packed_only = true;
  return counts;
}

} // namespace redist
