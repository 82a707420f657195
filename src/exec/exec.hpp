#pragma once
// Layer 5: the MPI executor. Moves one rank's part of a plan: one aggregated message per peer,
// all non-blocking; the rank-local part is copied directly while messages are in flight.
// A message goes one of two ways, chosen per peer on the first execution:
// - packed: packed, sent, received, and unpacked as soon as it arrives;
// - single copy (peers on one node, messages of long pieces, single_copy.hpp): the sender
//   sends its array's address, the receiver reads the pieces straight into its array and
//   replies when done.

#include "plan.hpp"
#include "planner.hpp"
#include "single_copy.hpp"

#include <mpi.h>

#include <array>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

namespace redist {

class Copier;

class Executor {
public:
  /// comm is not owned and must outlive the executor; its error handler must be
  /// MPI_ERRORS_RETURN. lld_src/lld_dst are this rank's leading dimensions.
  /// `schedule` says how to order the messages: all at once (the default), in steps, or in
  /// two phases through an intermediate array this executor owns. Messages carry `tag`.
  Executor(MPI_Comm comm, RankPlan plan, std::size_t element_size, Index lld_src, Index lld_dst,
           ScheduleChoice schedule = {}, int tag = kTag);

  /// Copy from a to b (this rank's local arrays). Collective over the plan's ranks.
  /// When MPI reports an error, the other transfers still run to completion (no request is
  /// left behind, no peer waits for a message this rank skipped); then throws redist::Error
  /// (REDIST_ERR_MPI) naming the MPI call and the peer of the first failure. A failed receive
  /// is not unpacked: those elements of b keep their values (two-phase plans: unspecified).
  void execute(const void *a, void *b);

  [[nodiscard]] const RankPlan &plan() const { return plan_; }
  [[nodiscard]] std::size_t element_size() const { return element_size_; }
  [[nodiscard]] const ScheduleChoice &schedule() const { return schedule_; }
  /// Bytes of message buffers (and a two-phase plan's intermediate array) execute() uses,
  /// allocated by the constructor (std::bad_alloc there), then reused. Messages read in a
  /// single copy never touch their part.
  [[nodiscard]] std::size_t buffer_bytes() const;
  /// Messages this rank sends / receives in a single copy (decided by the first execute();
  /// two-phase plans: both phases' messages).
  [[nodiscard]] std::size_t single_copy_sends() const;
  [[nodiscard]] std::size_t single_copy_receives() const;
  /// Of those receives, the ones unpacked from the sender's mapped buffer (Way::mapped).
  [[nodiscard]] std::size_t mapped_receives() const;
  /// Receives of the last execution copied from the sender's shared array, mapped here.
  [[nodiscard]] std::size_t array_copies() const;

  /// Largest number of bytes sent in one MPI message; larger messages go in several pieces.
  /// Tests lower it to exercise the splitting.
  static void set_max_message_bytes(std::size_t bytes);

  static constexpr int kTag = 7411;

private:
  enum class RequestKind : std::uint8_t { data_receive, address_receive, reply_receive, send };
  struct RequestInfo {
    RequestKind kind = RequestKind::send;
    int peer = 0; // index into plan_.recvs (receives) or plan_.sends (reply receives, sends)
    int rank = -1;
    Index lo = 0; // message elements [lo, hi) this request moves (receives)
    Index hi = 0;
    std::byte *buffer = nullptr; // data receives: where the packed elements land
  };

  /// First execution: every sender tells its receivers who it is (and whether its source
  /// array `a` is a shared array); each receiver answers whether it will read that message in
  /// a single copy.
  void negotiate(const std::byte *a);
  /// Copy receive elements [lo, hi) of plan_.recvs[i] from the sender's shared array, mapped
  /// here: 0, or EFAULT when the pieces reach past it.
  int copy_from_array(std::size_t i, Index lo, Index hi, std::byte *b);
  /// Give the pieces of receive elements [lo, hi) of plan_.recvs[i] to reader_: offsets in
  /// the sender's array (its leading dimension), or in its packed buffer, and in b.
  void gather(std::size_t i, Index lo, Index hi, bool packed = false);
  /// The pieces of a received message, estimated from its row pattern (for the choice of
  /// its way; O(row runs), not O(pieces)).
  [[nodiscard]] single_copy::PieceCounts estimate_pieces(const Peer &peer) const;
  void execute_two_phases(const std::byte *a, std::byte *b);
  void execute_all_at_once(const std::byte *a, std::byte *b);
  void execute_steps(const std::byte *a, std::byte *b);
  /// Post a non-blocking send or receive of `bytes` with `tag`, in several messages when
  /// larger than the message limit; the requests are appended to requests_, each with `info`.
  void post(bool send, std::byte *buffer, std::size_t bytes, int tag, const RequestInfo &info);
  /// Post this rank's part of moving receive elements [lo, hi) of plan_.recvs[i] (data into
  /// `buffer` or, in a single copy, the sender's address) / send elements [lo, hi) of
  /// plan_.sends[i] (packed from `a` at byte `offset` of send_buffer_, or of segment_ when
  /// mapped; or this rank's address).
  void post_receive(std::size_t i, Index lo, Index hi, std::byte *buffer);
  void post_send(std::size_t i, Index lo, Index hi, const std::byte *a, std::size_t offset);
  /// From the second execution on: the ways agreed for it, and the pages of send_buffer_
  /// that only messages now mapped used given back.
  void use_later_ways();
  /// Wait for requests_[first, end), handling each as it completes: unpack data, read
  /// single-copy messages and reply, check replies.
  void complete(std::size_t first, std::size_t end, std::byte *b, const char *what);

  /// Pack / unpack message elements [lo, hi) (the whole message by default).
  void pack(const Peer &peer, const std::byte *a, std::byte *out, Index lo = 0,
            Index hi = INT64_MAX) const;
  void unpack(const Peer &peer, const std::byte *in, std::byte *b, Index lo = 0,
              Index hi = INT64_MAX) const;
  void copy_local(const std::byte *a, std::byte *b) const;
  /// Whether copying a message's elements streams past the cache (copy.hpp).
  [[nodiscard]] bool streams(const Peer &peer) const;
  /// Read receive elements [lo, hi) of plan_.recvs[i] from its sender (the address arrived):
  /// 0, or the errno of the failure (-1: fewer bytes than asked).
  int read(std::size_t i, Index lo, Index hi, std::byte *b);
  /// Copy one message's pieces with `copier`; the source's leading dimension is src_lld
  /// (this rank's, or a sender's whose array is mapped here).
  void copy_message(const RunPattern &rows, const RowGroups &groups, const RunPattern &cols,
                    Copier &copier, Index src_lld) const;
  std::vector<RowGroups> group_rows(const std::vector<RunPattern> &patterns,
                                    const std::vector<Peer> &peers, const Peer *self) const;
  /// Remember the first MPI failure of this execution; execute() throws it at the end.
  void record(int mpi_code, const char *what, int peer);
  /// Wait for requests_[first, end) one at a time: done(k) for each one that completed,
  /// a failure recorded against peer_rank(k).
  template <class PeerRank, class Done>
  void wait_each(std::size_t first, std::size_t end, const char *what, PeerRank peer_rank,
                 Done done);

  MPI_Comm comm_;
  int tag_;
  RankPlan plan_;
  ScheduleChoice schedule_;
  std::size_t element_size_;
  Index lld_src_;
  Index lld_dst_;
  std::vector<std::size_t> send_offsets_; // byte offset of each send in send_buffer_
  std::vector<std::size_t> recv_offsets_;
  std::size_t step_send_bytes_ = 0; // stepwise: largest chunk sent / received
  std::size_t step_recv_bytes_ = 0;
  // All-at-once: send_buffer_ holds the packed messages, and segment_, the same layout in a
  // memory file, those receivers unpack from their mapping (Way::mapped; shared pages cost
  // more to fault in). Stepwise: segment_ alone holds one step's message, whatever its way.
  // Neither is initialised: untouched pages stay free.
  std::unique_ptr<std::byte[]> send_buffer_;
  single_copy::SharedBuffer segment_;
  std::unique_ptr<std::byte[]> recv_buffer_;
  std::vector<MPI_Request> requests_; // receives first, then sends
  std::vector<RequestInfo> request_info_;
  std::vector<int> pieces_pending_; // per receive peer
  // Single copy: decided on the first execution, per peer.
  bool negotiated_ = false;
  std::vector<single_copy::Way> send_way_; // per plan_.sends
  std::vector<single_copy::Way> recv_way_; // per plan_.recvs
  // The ways from the second execution on. `mapped` waits for it: its first pack faults in
  // the pages of the memory file, which costs more than a single plan execution gains (a
  // plan executed once reads the sender's array, touching no buffer).
  std::vector<single_copy::Way> later_send_way_;
  std::vector<single_copy::Way> later_recv_way_;
  bool later_ways_in_use_ = false;
  single_copy::Reader reader_;
  std::unique_ptr<std::byte[]> bounce_;                // bounced receives
  std::vector<single_copy::Identity> sender_identity_; // per plan_.recvs
  std::uint64_t probe_ = 0;
  single_copy::Identity identity_;
  std::vector<single_copy::Address> address_out_;  // per plan_.sends: what the reader reads
  std::vector<single_copy::Address> peer_address_; // per plan_.recvs
  std::vector<single_copy::Mapping> peer_array_;   // per plan_.recvs: mapped source arrays
  std::vector<char> copied_from_array_;            // per plan_.recvs, last execution
  std::vector<single_copy::Mapping> peer_segment_; // per plan_.recvs: mapped send buffers
  std::vector<std::int64_t> reply_in_;             // per plan_.sends: 0 or the reader's errno
  std::vector<std::int64_t> reply_out_;            // per plan_.recvs
  std::vector<RowGroups> send_groups_;             // by row slot (full regions only)
  std::vector<RowGroups> recv_groups_;
  std::array<std::unique_ptr<Executor>, 2> phases_; // two-phase plans
  std::vector<std::byte> mid_;                      // their intermediate array
  std::string failure_; // first MPI failure of the running execute(), "" if none
};

} // namespace redist
