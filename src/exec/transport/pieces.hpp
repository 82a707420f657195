#pragma once
// The pieces of one rank's messages, and the copies every way is made of: packing a message
// into a buffer, unpacking it, copying the rank-local part (the local-copy way), copying a
// message from a sender's array mapped here, and handing a message's pieces to a cross-memory
// reader. Hot loops only; no MPI, no choice of way.

#include "block_grid.hpp"
#include "message_read.hpp"
#include "nd_plan.hpp"
#include "operation.hpp"
#include "plan.hpp"
#include "single_copy.hpp"

#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <span>
#include <vector>

namespace redist {

class Copier;
struct BatchParts;

/// Where a batch's operations find their local arrays. Not `shared`: executions take arrays of
/// one local array pointer and of one Operation per entry, operation k using entry of[k] (k
/// where `of` is empty: an entry per operation; the parts of one transfer with replicated
/// sides, make_part, share theirs). `shared`: every operation reads and writes the same arrays
/// (the parts of one transfer), which executions take as a 2-D plan's, with one Operation.
struct BatchArrays {
  bool shared = false;
  std::vector<std::size_t> of;
  [[nodiscard]] std::size_t entry(std::size_t k) const { return of.empty() ? k : of[k]; }
};

/// A block grid plan's parts of Pieces (grid_pieces.cpp).
struct GridParts {
  std::shared_ptr<const GridRankPlan> plan; ///< shared with the caller, which may make it anew
  std::vector<Index> directory;             ///< Pieces::grid_directory()
  std::vector<Index> sources;               ///< Pieces::grid_sources()
  std::vector<std::vector<Tile>> reads;     ///< per receive: set_grid_sources' tiles
  /// per receive: some of those tiles are strided in the sender's array or in B (copied from a
  /// shared array only, never read piece by piece)
  std::vector<char> strided;
};

/// A long piece's copy, collected to be made later in the order of the source addresses
/// (Pieces::collect).
struct PieceCopy {
  std::byte *to;
  const std::byte *from;
  std::size_t bytes;
};
/// Pieces shorter than this are copied at once even while collecting.
inline constexpr std::size_t kCollectedPieceBytes = 256;

class Pieces {
public:
  /// lld_src / lld_dst: this rank's leading dimensions. `copies` false: the plan is only
  /// described (a two-phase plan's whole transfer), nothing is copied.
  Pieces(RankPlan plan, std::size_t element_size, Index lld_src, Index lld_dst, bool copies = true);

  /// An N-d plan: plan() is then its skeleton (nd_skeleton: peers' ranks and
  /// element counts, row_slot = the peer's index in the N-d plan's sends / recvs), and every
  /// copy walks the N-d messages (for_each_nd_piece). The single-copy ways address a sender's
  /// array with its strides (set_sender_strides), not with a leading dimension: gather,
  /// source_extent and copy_from_array ignore their sender_lld / src_lld for N-d plans.
  Pieces(NdRankPlan plan, std::size_t element_size, const Strides &src_strides,
         const Strides &dst_strides);
  /// A batch of operations (batch_pieces.hpp): plan() is then the skeleton of batch_skeleton
  /// (element size 1: a message's elements are bytes), and pack, unpack and copy_local walk
  /// each operation's Pieces in turn; their `a` and `b` point to arrays of one local array
  /// pointer per operation (objects of type const std::byte * and std::byte *), NULL where this
  /// rank has none of that operation (unless `arrays` is shared). All at once; its messages are
  /// packed by their senders (estimate_pieces: packed_only), sent or unpacked from a mapped
  /// buffer.
  explicit Pieces(std::vector<Pieces> operations, BatchArrays arrays = {});
  /// A block grid transfer's plan (block_grid.hpp, shared with its caller, which may make the
  /// executor anew from it): plan() is then its skeleton (grid_skeleton), and pack, unpack and
  /// copy_local walk its messages' tiles (grid_pieces.cpp). Packed only, as a batch.
  Pieces(std::shared_ptr<const GridRankPlan> plan, std::size_t element_size);
  /// Block grid plans: the sources of this rank's messages, for their receivers to read
  /// (Negotiation): per send that may be read piece by piece (its tiles; a message between a
  /// grid and a block-cyclic side only where their sources take at most a quarter of its
  /// bytes) (receiver rank, first word, tiles) in the directory, and kGridSourceWords words a
  /// tile in the sources (position, height, width, src, src_step, src_width_step).
  [[nodiscard]] std::span<const Index> grid_directory() const {
    return grid_ ? std::span<const Index>(grid_->directory) : std::span<const Index>();
  }
  [[nodiscard]] std::span<const Index> grid_sources() const {
    return grid_ ? std::span<const Index>(grid_->sources) : std::span<const Index>();
  }
  /// Words of receive i's sources (0: a message not read piece by piece, or not a block grid
  /// plan).
  [[nodiscard]] std::size_t grid_source_words(std::size_t i) const;
  /// Receive i's tiles with their sender's offsets: from now on the message may be read from
  /// the sender's array (estimate_pieces, gather, read_combined, copy_from_array), or, where a
  /// tile's columns are strided there or in B (a transposition, a row-major side facing a
  /// column-major one), only copied from it when it is a shared array (copy_from_array).
  /// False, the message still packed by its sender, when the words do not describe its tiles.
  bool set_grid_sources(std::size_t i, std::span<const Index> words);
  static constexpr std::size_t kGridSourceWords = 6;
  /// A batch's operations (empty: not a batch).
  [[nodiscard]] std::span<const Pieces> batch_operations() const;
  /// Whether messages are only ever packed by their senders (a batch): sent, or unpacked from
  /// a mapped buffer, never read piece by piece from a sender. (A block grid plan's message is
  /// read from its sender only once set_grid_sources took its sources.)
  [[nodiscard]] bool packed_only() const { return batch_ != nullptr; }
  /// Every message of the plan goes through MPI: a transposed 2-D plan on a trapezoid (no
  /// single-copy way walks it yet: read_transposed reads rectangles).
  [[nodiscard]] bool sent_only() const {
    return batch_ == nullptr && plan_.transposed() && plan_.region.kind != Region::Kind::full;
  }
  [[nodiscard]] const NdRankPlan *nd_plan() const { return nd_.get(); }
  /// N-d plans: this rank's strides of A, which its receivers read it with.
  [[nodiscard]] const Strides &source_strides() const { return nd_src_strides_; }
  /// N-d plans: this rank's strides of B.
  [[nodiscard]] const Strides &destination_strides() const { return nd_dst_strides_; }
  /// N-d plans: the strides of A of the sender of receive i (its Identity's), for the walks
  /// that read the sender's array.
  void set_sender_strides(std::size_t i, const Strides &strides) {
    if (nd_) nd_sender_strides_[i] = strides;
  }

  [[nodiscard]] const RankPlan &plan() const { return plan_; }
  [[nodiscard]] std::size_t element_size() const { return element_size_; }

  /// Pack send elements [lo, hi) of `peer` from a into out / unpack receive elements [lo, hi)
  /// of `peer` from in into b (the whole message by default).
  void pack(const Peer &peer, const std::byte *a, std::byte *out, Index lo = 0,
            Index hi = INT64_MAX) const;
  void unpack(const Peer &peer, const std::byte *in, std::byte *b, Index lo = 0,
              Index hi = INT64_MAX) const;
  /// The local-copy way: the elements this rank keeps, from a to b; only those at positions
  /// [lo, hi) of the local message if windows_local().
  void copy_local(const std::byte *a, std::byte *b, Index lo = 0, Index hi = INT64_MAX) const;
  /// copy_local in parts, `between` after each: a batch's operations, or windows of about
  /// `window_bytes` where windows_local(); else whole, then `between`.
  void copy_local_in_parts(const std::byte *a, std::byte *b, std::size_t window_bytes,
                           const std::function<void()> &between) const;
  /// Whether copy_local takes a window of the local message in time proportional to the
  /// window (an N-d plan, or a 2-D copy of a full region that is not transposed): the executor
  /// then interleaves it with the packing (OnePhase::pack_with_local_copy).
  [[nodiscard]] bool windows_local() const {
    return batch_ == nullptr && grid_ == nullptr &&
           (nd_ != nullptr || (!plan_.transposed() && operation_ == nullptr &&
                               plan_.region.kind == Region::Kind::full));
  }
  /// The contiguous stretches of A the local copy reads, estimated as estimate_pieces does
  /// (a 2-D column's stretches count apart from the next column's).
  [[nodiscard]] std::size_t local_source_stretches() const;
  /// Until collect(nullptr), pack and copy_local of a plan that windows_local() append the
  /// pieces of at least kCollectedPieceBytes to `copies` instead of copying them; the caller
  /// makes those copies (OnePhase::pack_with_local_copy).
  void collect(std::vector<PieceCopy> *copies) { collected_ = copies; }
  /// Transposed plans (RankPlan::transposed()): pack and copy_local walk tiles.hpp's tiles;
  /// unpack is a copy's (the receiver's side of a transposed message is), copy_from_array
  /// tiles too. A read from a sender's array is read_transposed's (gather, with the sender's
  /// array, is a copy's); a read of its packed message is a copy's.
  /// Copy receive elements [lo, hi) of `peer` from its sender's array `src` (mapped here,
  /// leading dimension src_lld) into b.
  void copy_from_array(const Peer &peer, const std::byte *src, Index src_lld, std::byte *b,
                       Index lo, Index hi) const;
  /// Elements of a sender's array (leading dimension lld) up to the last one the message from
  /// it to `peer` reads.
  [[nodiscard]] Index source_extent(const Peer &peer, Index lld) const;
  /// Give the pieces of receive elements [lo, hi) of `peer` to `reader`: byte offsets in the
  /// sender's array (its leading dimension sender_lld), or in its packed message from lo, and
  /// in b.
  void gather(const Peer &peer, Index sender_lld, Index lo, Index hi, bool packed,
              single_copy::Reader &reader) const;
  /// The pieces of a received message, estimated from its row pattern (for the choice of its
  /// way; O(row runs), not O(pieces)); a batch's, the sum over its operations' parts.
  [[nodiscard]] single_copy::PieceCounts estimate_pieces(const Peer &peer) const;
  /// With an operation (a plan that is not transposed): read receive elements [lo, hi) of
  /// `peer` from process pid's memory at `address` (its array, leading dimension sender_lld;
  /// or its packed message from lo when `packed`) into scratch.bounce (kBounceBytes), one
  /// bounce buffer at a time, each combined into b. 0, or the reader's error. `done`:
  /// elements [lo, done) are combined into b (hi on success; after a failure, the bounce
  /// buffers before the failed one).
  int read_combined(const Peer &peer, Index sender_lld, Index lo, Index hi, bool packed,
                    ReadScratch &scratch, std::int64_t pid, std::uint64_t address, std::byte *b,
                    Index &done) const;
  /// A transposed plan (full region): read receive elements [lo, hi) of `peer` from process
  /// pid's array at `address` (leading dimension sender_lld) into scratch.bounce, a rectangle
  /// of A at a time (long pieces along A's columns), and transpose each into b, combined as
  /// operation() says or copied. 0, or the reader's error. `done` and scratch.combined_apart:
  /// the elements combined into b before a failure ([lo, done) and those ranges; a rectangle
  /// spans columns of B, so what was combined need not be one range).
  int read_transposed(const Peer &peer, Index sender_lld, Index lo, Index hi, ReadScratch &scratch,
                      std::int64_t pid, std::uint64_t address, std::byte *b, Index &done) const;
  /// From now on unpack, copy_local and copy_from_array combine into b as `op` says (B :=
  /// alpha op(A) + beta B, operation.hpp) instead of copying; null (or a plain copy): copy.
  /// Pack stays a copy (of A's elements, transposed for a transposed plan); conjugation and
  /// alpha, beta are applied where the elements reach b. gather always copies: the readers
  /// use read_combined instead while operation() is set.
  /// A batch's `op` is an array of one Operation per operation (null: every one copies).
  void set_operation(const Operation *op) {
    if (batch_) {
      set_batch_operations(op);
      return;
    }
    operation_ = op != nullptr && !op->copies() ? op : nullptr;
  }
  [[nodiscard]] const Operation *operation() const { return operation_; }
  /// Whether unpacking combines into b instead of copying (an operation that is not a copy;
  /// for a batch, in any of its operations): a message must then be unpacked once
  /// (unpack_once).
  [[nodiscard]] bool combines() const;
  /// Whether copying a message's elements streams past the cache (copy.hpp).
  [[nodiscard]] bool streams(const Peer &peer) const;

private:
  void copy_message(const RunPattern &rows, const RowGroups &groups, const RunPattern &cols,
                    Copier &copier, Index src_lld) const;
  /// A transposed plan's message (tiles.hpp's for_each_tile, in cache-sized sub-blocks) from a
  /// (leading dimension src_lld) into `to`, message positions [lo, hi): packed (from position
  /// lo) when `packed`, else into B's local array; `streaming` for a large message
  /// (copy.hpp).
  void copy_transposed(const RunPattern &rows, const RunPattern &cols, const std::byte *a,
                       Index src_lld, std::byte *to, bool packed, Index lo, Index hi,
                       bool streaming) const;
  /// unpack / copy_local / copy_from_array with operation_: the pieces of (rows, cols) from
  /// `from` (packed from message position lo when `packed`, else an array of A with leading
  /// dimension src_lld) combined into b.
  void apply_pieces(const RunPattern &rows, const RowGroups &groups, const RunPattern &cols,
                    const std::byte *from, bool packed, std::byte *b, Index lo, Index hi,
                    Index src_lld) const;
  [[nodiscard]] std::vector<RowGroups> group_rows(const std::vector<RunPattern> &patterns,
                                                  const std::vector<Peer> &peers,
                                                  const Peer *self) const;

  /// The N-d plan's message `peer` (a skeleton peer) from [lo, hi) of its positions; A's
  /// strides src_strides (this rank's, or a sender's).
  void copy_nd(const NdPeer &peer, bool sending, PieceSide side, const Strides &src_strides,
               const std::byte *from, std::byte *to, Index lo, Index hi) const;
  /// The N-d forms of estimate_pieces, gather, source_extent (receive `peer`).
  [[nodiscard]] single_copy::PieceCounts estimate_nd_pieces(const Peer &peer) const;
  void gather_nd(const Peer &peer, Index lo, Index hi, bool packed,
                 single_copy::Reader &reader) const;
  [[nodiscard]] Index nd_source_extent(const Peer &peer) const;

  /// A batch's pack (`sending`) or unpack of message `peer`, positions [lo, hi), and its local
  /// copy (batch_pieces.cpp).
  void copy_batch(const Peer &peer, bool sending, const std::byte *from, std::byte *to, Index lo,
                  Index hi) const;
  /// A batch's local copy, operation by operation, `between` (when set) after each one.
  void copy_batch_local(const std::byte *a, std::byte *b,
                        const std::function<void()> &between = nullptr) const;
  [[nodiscard]] single_copy::PieceCounts estimate_batch_pieces(const Peer &peer) const;
  void set_batch_operations(const Operation *ops);

  /// A block grid plan's message `m` (pack: `sending`, from A's array into the packed buffer
  /// at position lo; unpack: from the packed buffer into b), positions [lo, hi); its local copy.
  void copy_grid(const GridMessage &m, bool sending, const std::byte *from, std::byte *to, Index lo,
                 Index hi) const;
  void copy_grid_local(const std::byte *a, std::byte *b) const;
  /// Tiles (offsets in a and b) at message positions [lo, hi) from a into b, combined as the
  /// operation says.
  void copy_tiles(std::span<const Tile> tiles, const std::byte *a, std::byte *b, Index lo,
                  Index hi) const;
  [[nodiscard]] single_copy::PieceCounts estimate_grid_pieces(const Peer &peer) const;
  [[nodiscard]] Index grid_source_extent(const Peer &peer) const;
  /// f(src, dst, count) for each column of tiles read from a sender (set_grid_sources), in
  /// message order.
  template <class F> static void for_each_grid_read(std::span<const Tile> tiles, F &&f) {
    for (const Tile &t : tiles) {
      for (Index w = 0; w < t.width; ++w) {
        f(t.src + w * t.src_width_step, t.dst + w * t.dst_width_step, t.height);
      }
    }
  }
  /// f(src, dst, count) for the pieces of receive `peer` a read from its sender's array takes,
  /// in message order (pieces_read.cpp).
  template <class F> void for_each_read_piece(const Peer &peer, Index sender_lld, F &&f) const;

  RankPlan plan_;
  std::size_t element_size_;
  Index lld_src_;
  Index lld_dst_;
  std::vector<RowGroups> send_groups_; // by row slot (full regions only)
  std::vector<RowGroups> recv_groups_;
  const Operation *operation_ = nullptr;        // set for one execution
  std::vector<PieceCopy> *collected_ = nullptr; // collect()
  std::shared_ptr<const NdRankPlan> nd_;        // an N-d plan; plan_ is then its skeleton
  Strides nd_src_strides_{};
  Strides nd_dst_strides_{};
  std::vector<Strides> nd_sender_strides_; // per receive
  std::shared_ptr<BatchParts> batch_;      // a batch; plan_ is then its skeleton
  std::shared_ptr<GridParts> grid_;        // a block grid plan; plan_ is then its skeleton
};

/// The 2-D view of an N-d plan the executor sequences: its peers' ranks and element counts,
/// row_slot the index in the N-d plan's sends / recvs (-1: self).
[[nodiscard]] RankPlan nd_skeleton(const NdRankPlan &plan);

/// The same for a block grid plan: row_slot the index in its sends / recvs (-1: self).
[[nodiscard]] RankPlan grid_skeleton(const GridRankPlan &plan);

// Hidden: internal to the library, not among the symbols it exports.
#pragma GCC visibility push(hidden)

/// Element (e, w) of a height x width rectangle of es-byte elements from `from` (steps from_e,
/// from_w, in elements) to `to` (to_e, to_w), in cache-sized sub-blocks so that both sides of a
/// transposition stay in the cache; `streaming` (a large copy): where `to` is contiguous along
/// e, its columns are written with streaming stores (pieces_transposed.cpp).
void copy_rectangle(std::byte *to, Index to_e, Index to_w, const std::byte *from, Index from_e,
                    Index from_w, Index height, Index width, std::size_t es,
                    bool streaming = false);

#pragma GCC visibility pop

} // namespace redist
