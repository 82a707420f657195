#pragma once
// Single-copy transfer between processes of one node: the receiver reads the pieces of a
// message straight from the sender's array into its own with Linux cross-memory attach
// (process_vm_readv), as Open MPI's vader BTL does for contiguous messages. No packing, no
// message buffers. No MPI here: the executor exchanges the identities and decides.

#include "index.hpp"

#include <sys/uio.h>

#include <array>
#include <cstddef>
#include <cstdint>

namespace redist::single_copy {

/// What a sender tells each of its receivers once per plan (plain data, sent as bytes).
struct Identity {
  std::int64_t pid = 0;
  std::uint64_t node = 0;          ///< node_key() of the sender; 0: cannot be read from
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

enum class Mode { automatic, always, never };
/// REDIST_SINGLE_COPY = auto (default) | always | never. `always` reads every message of a
/// readable peer directly (the tests use it to run the path on small messages).
Mode mode_from_environment();

/// The pieces of one message, joined where contiguous on each side.
struct PieceCounts {
  std::size_t bytes = 0;
  std::size_t remote_pieces = 0; ///< contiguous stretches in the sender's array
  std::size_t local_pieces = 0;  ///< contiguous stretches in the receiver's array
};

/// Whether reading a message directly beats packing, sending and unpacking it. Costs measured
/// on this project's 2-core machine (docs/performance.md): a cross-memory read moves
/// 6 GB/s, the same rate as the MPI transfer of a packed message, so reading directly saves
/// the pack and the unpack (two memory copies, about 0.17 ns per byte together) and costs
/// about 175 ns per remote piece (the kernel pins its pages) and 25 ns per local piece.
bool pays(const PieceCounts &counts);

/// Reads the pieces of a message, given in message order as (remote offset, local offset,
/// bytes), from another process's memory into this one's: joins contiguous pieces and issues
/// one process_vm_readv per IOV_MAX pieces. With pid < 0 it only counts (PieceCounts).
class Reader {
public:
  Reader(std::int64_t pid, std::uint64_t remote_base, std::byte *local_base)
      : pid_(pid), remote_base_(remote_base), local_base_(local_base) {}

  void add(std::size_t remote_offset, std::size_t local_offset, std::size_t bytes);
  /// Reads what is still gathered; true when every byte arrived (else error() says why).
  bool finish();

  [[nodiscard]] const PieceCounts &counts() const { return counts_; }
  /// errno of the failed read, or -1 when it read fewer bytes than asked; 0 if none failed.
  [[nodiscard]] int error() const { return error_; }

private:
  void read();

  static constexpr std::size_t kMaxPieces = 1024; // IOV_MAX on Linux
  std::int64_t pid_;
  std::uint64_t remote_base_;
  std::byte *local_base_;
  std::array<iovec, kMaxPieces> remote_{};
  std::array<iovec, kMaxPieces> local_{};
  std::size_t remote_count_ = 0;
  std::size_t local_count_ = 0;
  std::size_t gathered_ = 0; // bytes in the gathered pieces
  std::size_t next_remote_ = SIZE_MAX;
  std::size_t next_local_ = SIZE_MAX;
  PieceCounts counts_;
  int error_ = 0;
};

} // namespace redist::single_copy
