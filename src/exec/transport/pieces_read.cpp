// The single-copy side of Pieces: what a receiver's read of a sender's memory needs (the pieces
// of a message estimated, handed to a reader, or read and combined or transposed into b
// through a bounce buffer) and how far into the sender's array a message reaches.

#include "pieces.hpp"

#include "tiles.hpp"

#include <algorithm>
#include <utility>
#include <vector>

namespace redist {
namespace {

// The rows of a rectangle a transposed read reads at once (Pieces::read_transposed): the bounce
// buffer holds 256 of its columns in doubles, pieces of A of 2 KiB.
constexpr Index kReadRectangleRows = 128;

// Elements of a sender's array (leading dimension lld) up to the last one a message reads:
// local indices grow with the window index, so that is its last column's last row.
Index source_extent(const RunPattern &rows, const RunPattern &cols, Index lld) {
  if (rows.total() == 0 || cols.total() == 0) {
    return 0;
  }
  Index row_end = 0;
  Index last_column = 0;
  rows.for_each(rows.index_of(rows.total() - 1), rows.window_length(),
                [&](const Run &r) { row_end = r.src_local + r.length; });
  cols.for_each(cols.index_of(cols.total() - 1), cols.window_length(),
                [&](const Run &c) { last_column = c.src_local + c.length - 1; });
  return last_column * lld + row_end;
}

// The pattern's stretches contiguous in the source's local indices and in the destination's.
std::pair<std::size_t, std::size_t> stretches(const RunPattern &pattern) {
  std::size_t src = 0;
  std::size_t dst = 0;
  Index next_src = -1;
  Index next_dst = -1;
  pattern.for_each([&](const Run &r) {
    src += r.src_local == next_src ? 0 : 1;
    dst += r.dst_local == next_dst ? 0 : 1;
    next_src = r.src_local + r.length;
    next_dst = r.dst_local + r.length;
  });
  return {src, dst};
}

// Adds to `reader` the part of each piece (src, dst, count) that lies in positions [lo, hi) of
// the message (pieces in message order); from the sender's array at src, or from its packed
// message (from lo) when `packed`.
class WindowReads {
public:
  WindowReads(single_copy::Reader &reader, std::size_t element_size, Index lo, Index hi,
              bool packed)
      : reader_(reader), es_(element_size), lo_(lo), hi_(hi), packed_(packed) {}
  void operator()(Index src, Index dst, Index count) {
    const Index begin = std::max(position_, lo_);
    const Index end = std::min(position_ + count, hi_);
    if (begin < end) {
      const Index skip = begin - position_;
      reader_.add(static_cast<std::size_t>(packed_ ? begin - lo_ : src + skip) * es_,
                  static_cast<std::size_t>(dst + skip) * es_,
                  static_cast<std::size_t>(end - begin) * es_);
    }
    position_ += count;
  }

private:
  single_copy::Reader &reader_;
  std::size_t es_;
  Index lo_;
  Index hi_;
  bool packed_;
  Index position_ = 0;
};

} // namespace

single_copy::PieceCounts Pieces::estimate_nd_pieces(const Peer &peer) const {
  const NdMessage m = nd_->message(nd_->recvs[static_cast<std::size_t>(peer.row_slot)], false);
  const Strides &sender = nd_sender_strides_[static_cast<std::size_t>(peer.row_slot)];
  return {static_cast<std::size_t>(peer.elements) * element_size_,
          static_cast<std::size_t>(
              redist::estimate_nd_pieces(m, PieceSide::source, sender, nd_dst_strides_)),
          static_cast<std::size_t>(
              redist::estimate_nd_pieces(m, PieceSide::destination, sender, nd_dst_strides_))};
}

void Pieces::gather_nd(const Peer &peer, Index lo, Index hi, bool packed,
                       single_copy::Reader &reader) const {
  const NdMessage m = nd_->message(nd_->recvs[static_cast<std::size_t>(peer.row_slot)], false);
  for_each_piece_nd(m, nd_sender_strides_[static_cast<std::size_t>(peer.row_slot)], nd_dst_strides_,
                    WindowReads(reader, element_size_, lo, hi, packed));
}

Index Pieces::nd_source_extent(const Peer &peer) const {
  // Local indices grow with the window index: each dimension's last run ends the furthest.
  const NdMessage m = nd_->message(nd_->recvs[static_cast<std::size_t>(peer.row_slot)], false);
  const Strides &sender = nd_sender_strides_[static_cast<std::size_t>(peer.row_slot)];
  Index last = 0;
  for (int d = 0; d < m.ndims; ++d) {
    const RunPattern &p = *m.dims[static_cast<std::size_t>(d)];
    if (p.total() == 0) {
      return 0;
    }
    Index end = 0;
    p.for_each(p.index_of(p.total() - 1), p.window_length(),
               [&](const Run &r) { end = r.src_local + r.length - 1; });
    last += end * sender[static_cast<std::size_t>(m.perm[static_cast<std::size_t>(d)])];
  }
  return last + 1;
}

std::size_t Pieces::local_source_stretches() const {
  if (nd_) {
    return static_cast<std::size_t>(redist::estimate_nd_pieces(
        nd_->message(nd_->self, true), PieceSide::source, nd_src_strides_, nd_dst_strides_));
  }
  return stretches(plan_.send_rows[static_cast<std::size_t>(plan_.self.row_slot)]).first *
         static_cast<std::size_t>(
             plan_.send_cols[static_cast<std::size_t>(plan_.self.col_slot)].total());
}

single_copy::PieceCounts Pieces::estimate_pieces(const Peer &peer) const {
  if (batch_) {
    return estimate_batch_pieces(peer);
  }
  if (grid_) {
    return estimate_grid_pieces(peer);
  }
  if (nd_) {
    return estimate_nd_pieces(peer);
  }
  const RunPattern &rows = plan_.recv_rows[static_cast<std::size_t>(peer.row_slot)];
  const RunPattern &cols = plan_.recv_cols[static_cast<std::size_t>(peer.col_slot)];
  const auto bytes = static_cast<std::size_t>(peer.elements) * element_size_;
  if (plan_.transposed()) {
    // read_transposed: each of A's columns (B's rows) in pieces along A's rows (B's columns),
    // cut where A is not contiguous and between rectangles; b written along B's columns.
    const auto rows_total = static_cast<std::size_t>(rows.total());
    const auto cols_total = static_cast<std::size_t>(cols.total());
    const std::size_t width = single_copy::kBounceBytes / element_size_ /
                              std::clamp<std::size_t>(rows_total, 1, kReadRectangleRows);
    return {bytes,
            (stretches(cols).first + cols_total / std::max<std::size_t>(width, 1)) * rows_total,
            (stretches(rows).second + rows_total / static_cast<std::size_t>(kReadRectangleRows)) *
                cols_total,
            true};
  }
  // Stretches contiguous on each side in one column, times the columns: a column's stretches
  // that continue into the next one (whole columns with lld = column length) count apart.
  const auto [remote, local] = stretches(rows);
  const auto columns = static_cast<std::size_t>(cols.total());
  return {bytes, remote * columns, local * columns};
}

template <class F>
void Pieces::for_each_read_piece(const Peer &peer, Index sender_lld, F &&f) const {
  if (grid_) {
    for_each_grid_read(grid_->reads[static_cast<std::size_t>(peer.row_slot)], f);
    return;
  }
  for_each_piece(plan_.recv_rows[static_cast<std::size_t>(peer.row_slot)],
                 plan_.recv_cols[static_cast<std::size_t>(peer.col_slot)], plan_.region, plan_.m,
                 plan_.n, sender_lld, lld_dst_, f);
}

void Pieces::gather(const Peer &peer, Index sender_lld, Index lo, Index hi, bool packed,
                    single_copy::Reader &reader) const {
  if (nd_) {
    gather_nd(peer, lo, hi, packed, reader);
    return;
  }
  WindowReads reads(reader, element_size_, lo, hi, packed);
  for_each_read_piece(peer, sender_lld, reads);
}

int Pieces::read_combined(const Peer &peer, Index sender_lld, Index lo, Index hi, bool packed,
                          ReadScratch &scratch, std::int64_t pid, std::uint64_t address,
                          std::byte *b, Index &done) const {
  const std::size_t es = element_size_;
  const auto capacity = static_cast<Index>(single_copy::kBounceBytes / es);
  single_copy::Reader &reader = scratch.reader;
  std::byte *bounce = scratch.bounce.get();
  std::vector<ReadScratch::BouncedPiece> &pending = scratch.bounced; // in the bounce buffer
  pending.clear();
  Index filled = 0; // elements in the bounce buffer
  int error = 0;    // the failed read's (reader.start() forgets it)
  // Read what is gathered, then combine it into b piece by piece.
  const auto combine = [&] {
    if (error != 0 || filled == 0) {
      return;
    }
    if (!reader.finish()) {
      error = reader.error();
      return;
    }
    const OperationKernel combine_piece(*operation_);
    Index offset = 0;
    for (const ReadScratch::BouncedPiece &p : pending) {
      combine_piece(b + static_cast<std::size_t>(p.dst) * es, 1,
                    bounce + static_cast<std::size_t>(offset) * es, 1, p.count);
      offset += p.count;
    }
    done += filled;
    pending.clear();
    filled = 0;
  };
  done = lo;
  reader.start(pid, address, bounce, nullptr);
  Index position = 0;
  for_each_read_piece(peer, sender_lld, [&](Index src, Index dst, Index count) {
    Index begin = std::max(position, lo);
    const Index end = std::min(position + count, hi);
    while (error == 0 && begin < end) {
      if (filled == capacity) {
        combine();
        reader.start(pid, address, bounce, nullptr);
        continue;
      }
      const Index skip = begin - position;
      const Index take = std::min(end - begin, capacity - filled);
      reader.add(static_cast<std::size_t>(packed ? begin - lo : src + skip) * es,
                 static_cast<std::size_t>(filled) * es, static_cast<std::size_t>(take) * es);
      pending.push_back({dst + skip, take});
      filled += take;
      begin += take;
    }
    position += count;
  });
  combine();
  return error;
}

int Pieces::read_transposed(const Peer &peer, Index sender_lld, Index lo, Index hi,
                            ReadScratch &scratch, std::int64_t pid, std::uint64_t address,
                            std::byte *b, Index &done) const {
  const RunPattern &rows = plan_.recv_rows[static_cast<std::size_t>(peer.row_slot)];
  const RunPattern &cols = plan_.recv_cols[static_cast<std::size_t>(peer.col_slot)];
  const std::size_t es = element_size_;
  const Index per_column = rows.total();
  scratch.combined_apart.clear();
  done = lo;
  hi = std::min(hi, peer.elements);
  if (per_column == 0 || lo >= hi) {
    return 0;
  }
  // Message element (s, t) -- B's local row of the message's row s, B's local column of its
  // column t; A's local column and row -- is message position t * per_column + s. A rectangle
  // [s0, s1) x [t0, t1) of the message is read into the bounce buffer row by row (element
  // (s, t) at (s - s0) * width + t - t0): each of its rows is one of A's columns, a few long
  // pieces of the sender's array; then it is transposed out of the cache into b.
  const auto capacity = static_cast<Index>(single_copy::kBounceBytes / es);
  single_copy::Reader &reader = scratch.reader;
  std::byte *bounce = scratch.bounce.get();
  const auto read_rectangle = [&](Index s0, Index s1, Index t0, Index t1) {
    const Index width = t1 - t0;
    const Index row_lo = rows.index_of(s0);
    const Index row_hi = rows.index_of(s1 - 1) + 1;
    const Index col_lo = cols.index_of(t0);
    const Index col_hi = cols.index_of(t1 - 1) + 1;
    reader.start(pid, address, bounce, nullptr);
    Index s = 0;
    rows.for_each(row_lo, row_hi, [&](const Run &r) {
      for (Index dr = 0; dr < r.length; ++dr, ++s) {
        const Index column = (r.src_local + dr) * sender_lld;
        Index t = 0;
        cols.for_each(col_lo, col_hi, [&](const Run &c) {
          reader.add(static_cast<std::size_t>(column + c.src_local) * es,
                     static_cast<std::size_t>(s * width + t) * es,
                     static_cast<std::size_t>(c.length) * es);
          t += c.length;
        });
      }
    });
    if (!reader.finish()) {
      return reader.error();
    }
    Index t = 0;
    cols.for_each(col_lo, col_hi, [&](const Run &c) {
      Index s_run = 0;
      rows.for_each(row_lo, row_hi, [&](const Run &r) {
        std::byte *to = b + static_cast<std::size_t>(r.dst_local + c.dst_local * lld_dst_) * es;
        const std::byte *from = bounce + static_cast<std::size_t>(s_run * width + t) * es;
        if (operation_ != nullptr) {
          apply_operation(*operation_, to, 1, lld_dst_, from, width, 1, r.length, c.length);
        } else {
          copy_rectangle(to, 1, lld_dst_, from, width, 1, r.length, c.length, es);
        }
        s_run += r.length;
      });
      t += c.length;
    });
    return 0;
  };
  Index position = lo;
  while (position < hi) {
    const Index t0 = position / per_column;
    const Index s0 = position % per_column;
    if (s0 != 0 || hi - position < per_column) {
      // Part of one column (a window of the message starts or ends inside it).
      const Index s1 = std::min({per_column, s0 + capacity, s0 + (hi - position)});
      if (const int error = read_rectangle(s0, s1, t0, t0 + 1); error != 0) {
        return error;
      }
      position += s1 - s0;
      done = position;
      continue;
    }
    // Whole columns [t0, t1), a band of kReadRectangleRows rows at a time.
    const Index height = std::min(per_column, kReadRectangleRows);
    const Index t1 =
        t0 + std::max<Index>(1, std::min(capacity / height, (hi - position) / per_column));
    for (Index s = 0; s < per_column; s += height) {
      if (const int error = read_rectangle(s, std::min(per_column, s + height), t0, t1);
          error != 0) {
        // Rows [0, s) of columns [t0, t1) are combined: the first continues [lo, done).
        done = t0 * per_column + s;
        for (Index t = t0 + 1; t < t1 && s > 0; ++t) {
          scratch.combined_apart.emplace_back(t * per_column, t * per_column + s);
        }
        return error;
      }
    }
    position = t1 * per_column;
    done = position;
  }
  return 0;
}

Index Pieces::source_extent(const Peer &peer, Index lld) const {
  if (grid_) {
    return grid_source_extent(peer);
  }
  if (nd_) {
    return nd_source_extent(peer);
  }
  if (plan_.transposed()) { // B's rows are A's columns
    return redist::source_extent(plan_.recv_cols[static_cast<std::size_t>(peer.col_slot)],
                                 plan_.recv_rows[static_cast<std::size_t>(peer.row_slot)], lld);
  }
  return redist::source_extent(plan_.recv_rows[static_cast<std::size_t>(peer.row_slot)],
                               plan_.recv_cols[static_cast<std::size_t>(peer.col_slot)], lld);
}

} // namespace redist
