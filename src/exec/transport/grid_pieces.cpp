// Block grid plans (block_grid.hpp) in Pieces: every message a list of tiles in message order,
// packed by its sender from A's local array, unpacked by its receiver into B's (combined as the
// operation says), and the rank's message to itself copied from A to B directly; or read by
// its receiver from the sender's array, tile by tile, with the offsets the sender publishes.

#include "pieces.hpp"

#include <algorithm>
#include <span>

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

// The tiles a message is read by from its sender's array (its tiles, whose columns are
// consecutive in the message), or 0 where it is not read piece by piece: a message of tiles (two
// block grids) always, each of its tiles being one in the plan already; a message of parts (a grid
// and a block-cyclic side, stored one period of the cyclic pattern per block) when the sources of
// its tiles take at most a quarter of its bytes (with a cyclic side of small blocks they would cost
// more memory than the message). The same answer at both ends.
std::size_t read_tiles(const GridMessage &m, std::size_t element_size) {
  if (m.parts.empty()) {
    return m.tiles.size();
  }
  std::size_t tiles = 0;
  m.for_each_tile([&](const Tile &) { ++tiles; });
  const std::size_t bytes = static_cast<std::size_t>(m.elements) * element_size;
  return tiles * Pieces::kGridSourceWords * sizeof(Index) * 4 <= bytes ? tiles : 0;
}

// One past the furthest element of A a tile reads (its offset and steps), or -1 where that
// lies past any address space: a sender's words are checked with it before any copy trusts
// them, and the copy's bounds check never sees an overflowed extent.
Index tile_end(const Tile &t) {
  constexpr Index kMost = Index{1} << 47;
  Index down = 0;
  Index across = 0;
  Index end = 0;
  if (t.src < 0 || t.src_step < 0 || t.src_width_step < 0 ||
      __builtin_mul_overflow(t.height - 1, t.src_step, &down) ||
      __builtin_mul_overflow(t.width - 1, t.src_width_step, &across) ||
      __builtin_add_overflow(t.src, down, &end) || __builtin_add_overflow(end, across, &end) ||
      end >= kMost) {
    return -1;
  }
  return end + 1;
}

} // namespace

Pieces::Pieces(std::shared_ptr<const GridRankPlan> plan, std::size_t element_size)
    : plan_(grid_skeleton(*plan)), element_size_(element_size), lld_src_(0), lld_dst_(0),
      grid_(std::make_shared<GridParts>()) {
  grid_->plan = std::move(plan);
  grid_->reads.resize(plan_.recvs.size());
  grid_->strided.resize(plan_.recvs.size(), 0);
  // The sources of the messages for their receivers, in the order they are read:
  // (receiver, first word, tiles) in the directory, kGridSourceWords words a tile.
  for (const GridMessage &m : grid_->plan->sends) {
    const std::size_t tiles = read_tiles(m, element_size);
    if (tiles == 0) {
      continue;
    }
    grid_->directory.insert(
        grid_->directory.end(),
        {m.rank, static_cast<Index>(grid_->sources.size()), static_cast<Index>(tiles)});
    m.for_each_tile([&](const Tile &t) {
      grid_->sources.insert(grid_->sources.end(),
                            {t.position, t.height, t.width, t.src, t.src_step, t.src_width_step});
    });
  }
}

std::size_t Pieces::grid_source_words(std::size_t i) const {
  if (!grid_) {
    return 0;
  }
  return read_tiles(grid_->plan->recvs[i], element_size_) * kGridSourceWords;
}

bool Pieces::set_grid_sources(std::size_t i, std::span<const Index> words) {
  std::vector<Tile> reads;
  if (words.size() != grid_source_words(i) || words.empty()) {
    return false;
  }
  reads.reserve(words.size() / kGridSourceWords);
  bool valid = true;
  bool strided = false;
  grid_->plan->recvs[i].for_each_tile([&](Tile t) {
    const Index *w = words.data() + reads.size() * kGridSourceWords;
    // The tiles in message order. A piece is a column of a tile where it is contiguous in
    // the sender's array, in B and in the message; otherwise the tiles are only copied.
    valid = valid && w[0] == t.position && w[1] == t.height && w[2] == t.width;
    strided = strided || w[4] != 1 || t.dst_step != 1 || t.position_width_step != t.height;
    t.src = w[3];
    t.src_step = w[4];
    t.src_width_step = w[5];
    valid = valid && (t.height <= 0 || t.width <= 0 || tile_end(t) > 0);
    reads.push_back(t);
  });
  if (!valid) {
    return false;
  }
  grid_->reads[i] = std::move(reads);
  grid_->strided[i] = strided ? 1 : 0;
  return true;
}

void Pieces::copy_tiles(std::span<const Tile> tiles, const std::byte *a, std::byte *b, Index lo,
                        Index hi) const {
  const auto es = static_cast<Index>(element_size_);
  for (const Tile &tile : tiles) {
    clip_tile(tile, lo, hi, [&](const Tile &t) {
      if (operation_ != nullptr) {
        apply_operation(*operation_, b + t.dst * es, t.dst_step, t.dst_width_step, a + t.src * es,
                        t.src_step, t.src_width_step, t.height, t.width);
      } else {
        copy_rectangle(b + t.dst * es, t.dst_step, t.dst_width_step, a + t.src * es, t.src_step,
                       t.src_width_step, t.height, t.width, element_size_);
      }
    });
  }
}

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
  grid_->plan->self.for_each_tile(
      [&](const Tile &t) { copy_tiles(std::span(&t, 1), a, b, 0, INT64_MAX); });
}

single_copy::PieceCounts Pieces::estimate_grid_pieces(const Peer &peer) const {
  single_copy::PieceCounts counts;
  counts.bytes = static_cast<std::size_t>(peer.elements) * element_size_;
  const auto i = static_cast<std::size_t>(peer.row_slot);
  const std::vector<Tile> &reads = grid_->reads[i];
  if (reads.empty() || grid_->strided[i] != 0) {
    // Packed by the sender, or copied from its shared array: a tile's columns are its pieces
    // on the receiver's side.
    std::size_t pieces = 0;
    grid_->plan->recvs[i].for_each_tile(
        [&](const Tile &t) { pieces += static_cast<std::size_t>(std::max<Index>(t.width, 0)); });
    counts.remote_pieces = pieces;
    counts.local_pieces = pieces;
    counts.packed_only = true;
    counts.from_array = !reads.empty();
    return counts;
  }
  // Stretches contiguous in the sender's array and in B's: a tile's columns, joined where one
  // ends where the next begins.
  Index next_src = -1;
  Index next_dst = -1;
  for_each_grid_read(reads, [&](Index src, Index dst, Index count) {
    if (count <= 0) {
      return;
    }
    counts.remote_pieces += src == next_src ? 0 : 1;
    counts.local_pieces += dst == next_dst ? 0 : 1;
    next_src = src + count;
    next_dst = dst + count;
  });
  return counts;
}

Index Pieces::grid_source_extent(const Peer &peer) const {
  Index end = 0;
  for (const Tile &t : grid_->reads[static_cast<std::size_t>(peer.row_slot)]) {
    if (t.height > 0 && t.width > 0) {
      end = std::max(end, tile_end(t));
    }
  }
  return end;
}

} // namespace redist
