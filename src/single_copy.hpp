#pragma once
// Single-copy transfer between processes of one node: the receiver reads the pieces of a
// message straight from the sender's array with Linux cross-memory attach (process_vm_readv),
// as Open MPI's vader BTL does for contiguous messages. No packing, no message buffers. No MPI
// here: the executor exchanges the identities and decides.

#include "index.hpp"

#include <sys/uio.h>

#include <array>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace redist::single_copy {

/// What a sender tells each of its receivers once per plan (plain data, sent as bytes).
struct Identity {
  std::int64_t pid = 0;
  std::uint64_t node = 0;          ///< the sender's boot and pid namespace; 0: not readable
  std::uint64_t probe_address = 0; ///< a word the receiver reads to prove it can
  std::uint64_t probe_value = 0;   ///< what it holds
  std::int64_t lld = 1;            ///< the sender's leading dimension
};

/// This process's identity, with lld. `probe` must stay alive and unchanged while receivers
/// may probe it; it is filled here.
Identity identify(std::uint64_t &probe, Index lld);

/// True when this process can read the sender's memory: same kernel and pid namespace, cross
/// memory attach permitted, and the probe word reads back as announced.
bool can_read(const Identity &sender);

enum class Mode : std::uint8_t { automatic, always, never, direct, bounced, read_packed };
/// REDIST_SINGLE_COPY = auto (default) | always | never | direct | bounced | read-packed.
/// `always` reads every message from a readable peer, the cheapest read; the last three force
/// that read (the tests use them to run each path on small messages).
Mode mode_from_environment();
/// "" when REDIST_SINGLE_COPY is unset, empty or valid, else why not (plans refuse to be made).
std::string environment_error();

/// The pieces of one message, joined where contiguous on each side.
struct PieceCounts {
  std::size_t bytes = 0;
  std::size_t remote_pieces = 0; ///< contiguous stretches in the sender's array
  std::size_t local_pieces = 0;  ///< contiguous stretches in the receiver's array
};

/// How one message moves (the sender learns it from the receiver on the first execution).
enum class Way : std::uint8_t {
  sent,        ///< packed, sent and received by MPI, unpacked
  direct,      ///< read from the sender's array straight into the receiver's
  bounced,     ///< read from the sender's array into a cache-sized bounce buffer, copied out
  read_packed, ///< packed by the sender, read into the bounce buffer, unpacked from there
};

/// Whether the message is read from the sender's array as it is (no packing).
inline bool reads_array(Way way) {
  return way == Way::direct || way == Way::bounced;
}

/// The cheapest way to move a message with these pieces, given that this process can read
/// the sender's memory (or the way `mode` forces). Costs per byte and per piece measured on
/// this project's 2-core machine (docs/performance.md): a cross-memory read moves 6 GB/s, as
/// MPI does for a packed message, but costs about 175 ns per remote piece (the kernel pins its
/// pages) and 25 ns per local piece read directly; packing or unpacking costs a memory copy
/// (0.085 ns per byte), unpacking from the cache much less; a read needs a round trip.
Way cheapest_way(const PieceCounts &counts, Mode mode);

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
