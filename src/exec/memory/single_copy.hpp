#pragma once
// Single-copy transfer between processes of one node: the receiver reads the pieces of a
// message straight from the sender's array with Linux cross-memory attach (process_vm_readv),
// as Open MPI's vader BTL does for contiguous messages. No packing, no message buffers. Where
// pieces are too short for that, the sender packs into a memory file the receiver maps, and
// the receiver unpacks from there. No MPI here: the executor exchanges the identities and
// decides.

#include "index.hpp"
#include "nd_layout.hpp"

#include <sys/uio.h>

#include <array>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace redist::single_copy {

/// A memory file another process of the node can map: its descriptor in the owner, where the
/// owner maps it and how long it is. `id` names it in its owner for good (never reused, unlike
/// descriptors and addresses). fd -1: none.
struct Segment {
  std::int64_t fd = -1;
  std::uint64_t address = 0;
  std::uint64_t bytes = 0;
  std::uint64_t id = 0;
};

/// What a sender tells each of its receivers once per plan (plain data, sent as bytes).
struct Identity {
  std::int64_t pid = 0;
  std::uint64_t node = 0;          ///< the sender's boot and pid namespace; 0: not readable
  std::uint64_t probe_address = 0; ///< a word the receiver reads to prove it can
  std::uint64_t probe_value = 0;   ///< what it holds
  std::int64_t lld = 1;            ///< the sender's leading dimension
  Strides strides{}; ///< N-d plans: the sender's local strides of A (by A's dimension)
  Segment buffer;    ///< its send buffer's memory file (SharedBuffer)
  Segment array;     ///< the memory file holding its source array, if allocate_shared_array's
  /// A block grid plan's tile sources for its receivers (Pieces::grid_directory and
  /// grid_sources): their addresses here and the directory's entries; 0: none.
  std::uint64_t grid_directory = 0;
  std::uint64_t grid_sources = 0;
  std::int64_t grid_entries = 0;
};

/// Where a sender's message is, each execution: its source array or its packed buffer, and
/// the shared array holding that address, if any.
struct Address {
  std::uint64_t address = 0;
  Segment array;
};

class SharedBuffer;

/// This process's boot and pid namespace (computed once), whatever REDIST_SINGLE_COPY says;
/// 0 when /proc cannot tell.
std::uint64_t node_identity();

/// This process's identity (node 0, unreadable, when REDIST_SINGLE_COPY is `never` now), with lld,
/// the send buffer receivers may map and the source array `a` of the first execution. `probe` must
/// stay alive and unchanged while receivers may probe it; it is filled here.
Identity identify(std::uint64_t &probe, Index lld, const SharedBuffer &send_buffer,
                  const void *a = nullptr);

/// Memory for a program's local arrays (redist_alloc) that receivers of the node can map, so
/// that they copy the pieces they need from it in user space: zero-filled, in a memory file
/// whose descriptor stays open until free_shared_array. Null when the system gives none.
void *allocate_shared_array(std::size_t bytes);
/// False when `memory` did not come from allocate_shared_array (or was freed).
bool free_shared_array(void *memory);
/// The shared array holding `address`, or a Segment with fd -1.
Segment shared_array_of(const void *address);

/// True when this process can read the sender's memory: same kernel and pid namespace, cross
/// memory attach permitted, and the probe word reads back as announced.
bool can_read(const Identity &sender);

enum class Mode : std::uint8_t { automatic, always, never, direct, bounced, read_packed, mapped };
/// REDIST_SINGLE_COPY = auto (default) | always | never | direct | bounced | read-packed |
/// mapped. `always` reads every message from a readable peer, the cheapest read; the last
/// four force that read (the tests use them to run each path on small messages); `mapped`
/// falls back to `read-packed` where the sender's buffer cannot be mapped.
Mode mode_from_environment();
/// "" when REDIST_SINGLE_COPY is unset, empty or valid, else why not (plans refuse to be made).
std::string environment_error();

/// The pieces of one message, joined where contiguous on each side.
struct PieceCounts {
  std::size_t bytes = 0;
  std::size_t remote_pieces = 0; ///< contiguous stretches in the sender's array
  std::size_t local_pieces = 0;  ///< contiguous stretches in the receiver's array
  /// A transposed message: packing it transposes, and a read from the sender's array goes
  /// through the bounce buffer and is transposed out of it (never `direct`).
  bool transposes = false;
  /// A message only its sender can pack (a batch's: the pieces of several arrays): it is
  /// `sent` or, from a mapped buffer, `mapped`, whatever the mode asks.
  bool packed_only = false;
  /// The receiver combines the message into B (an operation, alpha and beta): a read of the
  /// sender's array, unless mapped, goes through the bounce buffer and is combined out of it,
  /// which unpacking from the sender's mapped buffer beats (pblas_bench,
  /// docs/studies/performance.md).
  bool combines = false;
  /// Under `mapped`, the receiver can copy the message from the sender's source array when
  /// that is a shared array (redist_alloc) instead of unpacking it: every message but a batch's
  /// and a block grid message whose tile sources the sender did not publish. Such a copy is
  /// not piece by piece, so a packed_only message may have it (a grid message strided in the
  /// sender's array or in B: a transposition, or a row-major side facing a column-major one).
  bool from_array = true;
};

/// How one message moves (the sender learns it from the receiver on the first execution).
enum class Way : std::uint8_t {
  sent,        ///< packed, sent and received by MPI, unpacked
  direct,      ///< read from the sender's array straight into the receiver's
  bounced,     ///< read from the sender's array into a cache-sized bounce buffer, copied out
  read_packed, ///< packed by the sender, read into the bounce buffer, unpacked from there
  mapped,      ///< packed by the sender into a SharedBuffer the receiver maps, unpacked from it
};

/// Whether the message is read from the sender's array as it is (no packing).
inline bool reads_array(Way way) {
  return way == Way::direct || way == Way::bounced;
}

/// What of the sender's a receiver has mapped: its send buffer, its source array.
struct Mapped {
  bool buffer = false;
  bool array = false;
};

/// The cheapest way to move a message with these pieces, given that this process can read
/// the sender's memory (or the way `mode` forces) and what it mapped of the sender's. With the
/// source array mapped, `direct` and `bounced` copy its pieces in user space.
/// Costs per byte and per piece measured on this project's 2-core machine
/// (docs/studies/performance.md): a cross-memory read moves bytes as MPI does for a packed message,
/// but costs about 300 ns per remote piece (the kernel pins its pages) and 100 ns per local
/// piece read directly (two processes per core); packing or unpacking costs a memory copy
/// (0.085 ns per byte), unpacking from the cache much less; a read needs a round trip.
/// Unpacking from a mapped buffer, or copying from a mapped array, is itself the move between
/// the processes; with the buffer mapped, `mapped` replaces both reads through the bounce
/// buffer (measured faster than either wherever they were chosen).
Way cheapest_way(const PieceCounts &counts, Mode mode, Mapped mapped);

/// Whether a receiver under `mode` may unpack a message of `bytes` from the sender's mapped
/// buffer: under `automatic`, only where cheapest_way would find it cheaper than sending;
/// under `always` and `mapped`, always; otherwise never. A sender whose messages all answer
/// no keeps its send buffer in ordinary memory (no memory file to create and map).
bool may_be_mapped(std::size_t bytes, Mode mode);

/// Whether a receiver under `mode` takes Way::sent for a message of `bytes` in `elements`
/// elements however its pieces fall, whoever sends it: under `automatic`, cheapest_way finds
/// `sent` cheapest with 1 and 2 × `elements` pieces on each side, the sender's buffer and array
/// mapped or not, copied or combined (each way's cost is linear in the pieces, so `sent` is
/// then cheapest for every count in between); under `never`, always; under a mode that forces
/// a read, never. `transposes` and `packed_only` as in PieceCounts.
bool sent_whatever_the_pieces(std::size_t bytes, std::size_t elements, bool transposes,
                              bool packed_only, Mode mode);

/// Bytes in a memory file (memfd) when the system gives one, so that a receiver with the
/// rights of a cross-memory read can map them (Mapping); else in ordinary memory. Pages are
/// not initialised. The file descriptor is closed by release_fd() once receivers have mapped;
/// at most kMaxOpenSegments buffers hold one at a time (plans made and not yet executed), so
/// that the program's own descriptors never run out: the others use ordinary memory.
class SharedBuffer {
public:
  SharedBuffer() = default;
  /// `shareable` false: ordinary memory only.
  SharedBuffer(std::size_t bytes, bool shareable);
  SharedBuffer(const SharedBuffer &) = delete;
  SharedBuffer &operator=(const SharedBuffer &) = delete;
  SharedBuffer(SharedBuffer &&other) noexcept;
  SharedBuffer &operator=(SharedBuffer &&other) noexcept;
  ~SharedBuffer();

  [[nodiscard]] std::byte *data() const { return data_; }
  [[nodiscard]] std::size_t size() const { return bytes_; }
  /// The memory file's descriptor, -1 when the bytes are not in one or it was released.
  [[nodiscard]] int fd() const { return fd_; }
  [[nodiscard]] Segment segment() const;
  void release_fd();

  static constexpr int kMaxOpenSegments = 64;

private:
  void reset();

  std::byte *data_ = nullptr;
  std::size_t bytes_ = 0;
  int fd_ = -1;
  bool mapped_ = false; // data_ from mmap, else from new[]
  std::uint64_t id_ = 0;
};

/// Another process's memory file (a SharedBuffer or a shared array) mapped read-only here,
/// through /proc/PID/fd/FD (which asks for the same permission as a cross-memory read).
class Mapping {
public:
  Mapping() = default;
  Mapping(const Mapping &) = delete;
  Mapping &operator=(const Mapping &) = delete;
  Mapping(Mapping &&other) noexcept;
  Mapping &operator=(Mapping &&other) noexcept;
  ~Mapping();

  /// Maps process pid's `segment`; false (and nothing mapped) if there is none or the system
  /// refuses.
  bool map(std::int64_t pid, const Segment &segment);
  [[nodiscard]] bool empty() const { return data_ == nullptr; }
  /// The id of the segment mapped (0 if none).
  [[nodiscard]] std::uint64_t id() const { return id_; }
  /// The owner's bytes [address, address + bytes), or null when they lie outside the segment.
  [[nodiscard]] const std::byte *at(std::uint64_t address, std::size_t bytes) const;

private:
  void reset();

  const std::byte *data_ = nullptr;
  std::size_t bytes_ = 0;
  std::uint64_t sender_address_ = 0;
  std::uint64_t id_ = 0;
};

/// Test hook (docs/reliability.md, Faults): make this process's single-copy operations fail.
/// The matching operations are counted from inject_failures(); the first `skip` work, the
/// next `count` fail (count -1: every one; 0: none, the default). Checked once per operation
/// (a relaxed atomic load when nothing is armed), never per piece.
enum class Injected : std::uint8_t {
  probe,  ///< can_read: the sender's probe word does not read (cross-memory reads forbidden)
  read,   ///< a process_vm_readv batch of Reader fails with EIO, after scribbling over its
          ///< destination (a read that moved part of the message, wrongly)
  map,    ///< Mapping::map refuses
  mapped, ///< Mapping::at finds nothing: a copy from a mapped buffer or array fails (EFAULT)
};
void inject_failures(Injected what, long long skip, long long count);
/// Operations of that kind failed by injection since the start.
long long injected_failures(Injected what);

/// Bytes of the bounce buffer: well inside a core's L2 cache.
inline constexpr std::size_t kBounceBytes = std::size_t{256} << 10;

/// Reads the pieces of a message, given in message order as (remote offset, local offset,
/// bytes), from another process's memory into this one's. Joins contiguous pieces and issues
/// one process_vm_readv per IOV_MAX pieces (direct) or per bounce buffer (bounced); counts the
/// joined pieces (counts()). Reused
/// across messages and executions: its storage grows once.
class Reader {
public:
  /// Read from process pid's memory at remote_base into local_base; through `bounce`
  /// (kBounceBytes) when not null, copied out with streaming stores if `streaming` (copy.hpp).
  void start(std::int64_t pid, std::uint64_t remote_base, std::byte *local_base, std::byte *bounce,
             bool streaming = false);

  void add(std::size_t remote_offset, std::size_t local_offset, std::size_t bytes);
  /// Reads what is still gathered; true when every byte arrived (else error() says why).
  bool finish();

  [[nodiscard]] const PieceCounts &counts() const { return counts_; }
  /// errno of the failed read, or -1 when it read fewer bytes than asked; 0 if none failed.
  [[nodiscard]] int error() const { return error_; }

private:
  void read();

  static constexpr std::size_t kMaxPieces = 1024; // IOV_MAX on Linux
  std::int64_t pid_ = -1;
  std::uint64_t remote_base_ = 0;
  std::byte *local_base_ = nullptr;
  std::byte *bounce_ = nullptr;
  bool streaming_ = false;
  std::array<iovec, kMaxPieces> remote_{};
  std::array<iovec, kMaxPieces> local_{}; // direct: where the pieces go
  std::vector<iovec> bounced_;            // bounced: where the bounce buffer's pieces go
  std::size_t remote_count_ = 0;
  std::size_t local_count_ = 0;
  std::size_t gathered_ = 0; // bytes in the gathered pieces
  std::uint64_t next_remote_ = 0;
  std::uintptr_t next_local_ = 0;
  PieceCounts counts_;
  int error_ = 0;
};

} // namespace redist::single_copy
