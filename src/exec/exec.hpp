#pragma once
// Exec layer (docs/architecture.md): the MPI executor. Moves one rank's part of a plan: one
// aggregated message per peer, all non-blocking; the rank-local part is copied directly while
// messages are in flight. It builds each step's requests and sequences them (all at once, in
// steps and chunks, or in two phases through an intermediate array), and records the first
// failure. How a message travels is a transport's (transport/transport.hpp): sent by MPI
// (transport/sent.hpp), or read in a single copy by a receiver on the same node
// (transport/single_copy_transport.hpp: from the sender's array, directly or bounced, from its
// packed buffer, or unpacked from its mapped memory file). Which way each message takes is
// decided when the plan is made (transport/negotiation.hpp); the copies themselves are
// transport/pieces.hpp's.

#include "collective.hpp"
#include "copy.hpp"
#include "exchange_buffers.hpp"
#include "nodes.hpp"
#include "pieces.hpp"
#include "plan.hpp"
#include "planner.hpp"
#include "progress.hpp"
#include "requests.hpp"
#include "single_copy.hpp"
#include "transports.hpp"

#include <mpi.h>

#include <array>
#include <cstddef>
#include <memory>
#include <span>
#include <vector>

namespace redist {

/// One plan's execution. OnePhase (below) moves one rank plan's messages; TwoPhases
/// (two_phases.hpp) runs two OnePhase plans through an intermediate array it owns. Made by
/// make_executor, which picks the one a ScheduleChoice asks for; every call below is the same
/// for both.
class Executor {
public:
  Executor() = default;
  Executor(const Executor &) = delete;
  Executor &operator=(const Executor &) = delete;
  virtual ~Executor() = default;

  /// Copy from a to b (this rank's local arrays). Collective over the plan's ranks.
  /// When MPI reports an error, or a single-copy read fails, the other transfers still run to
  /// completion (a failed post is retried once; no request is left behind, no peer waits for a
  /// message this rank skipped, a failed control message is still answered). Then every rank
  /// agrees (one MPI_Allreduce per execution) whether anything failed; if so, the failed
  /// messages, as either end saw them, are sent again through MPI (the repair), and a message
  /// whose read failed is sent from then on. Repaired: b is right and execute() returns.
  /// Still failing: throws redist::Error (REDIST_ERR_MPI) naming the MPI call and the peer of
  /// the first failure on the ranks where it failed; those messages' elements of b keep their
  /// values (or what a failed read wrote; two-phase plans: unspecified).
  virtual void execute(const void *a, void *b) = 0;
  /// B := alpha op(A) + beta B (operation.hpp) instead of the copy: unpacking and the local
  /// copy apply `op` (a transposed plan's op is T or C); the message exchange is execute()'s.
  /// The single-copy ways stay: their readers combine what they read into b
  /// (Pieces::read_combined, read_transposed, copy_from_array, unpack); a transposed
  /// trapezoid's messages are all sent (Pieces::sent_only()).
  virtual void execute(const void *a, void *b, const Operation &op) = 0;
  /// Split execution: begin() then end() is execute(a, b) (with `op`: execute(a, b, *op)),
  /// and between them this rank may compute on other data. a must not change and b must not
  /// be read until end(); `op` must live until end(). All at once: begin() posts every
  /// receive and send (packing the sends) and copies the rank-local part; end() waits,
  /// unpacks, agrees and repairs. Stepwise and two-phase plans: begin() only records the
  /// call (their steps reuse one buffer and wait on each other) and the whole exchange runs
  /// inside end(). Each is collective as execute() is. begin() while an execution is in
  /// flight, or end() with none, throws Error (REDIST_ERR_ARGUMENT) and changes nothing.
  /// Under REDIST_PROGRESS=thread (read when the executor is made) an all-at-once begin()
  /// with messages to other ranks leaves a thread driving MPI's progress until end()
  /// (progress.hpp).
  virtual void begin(const void *a, void *b, const Operation *op = nullptr) = 0;
  virtual void end() = 0;
  /// Whether begin() was called and end() not yet.
  [[nodiscard]] virtual bool in_flight() const = 0;
  /// "" when the environment variables the executor reads (REDIST_SINGLE_COPY,
  /// REDIST_PROGRESS) are unset or valid, else why not: plans refuse to be made.
  static std::string environment_error();

  /// Whether an execution can carry the caller's argument check (execute_checked()), the same
  /// on every rank (decided with the ways, decide_ways()): every message of the plan, on every
  /// rank, travels through MPI into this executor's buffers (no single-copy way writes b or
  /// reads a), all at once (no step reuses a buffer), and no rank writes more than
  /// kDeferredBytes into b.
  [[nodiscard]] virtual bool defers() const = 0;
  /// Whether the last execution failed on some rank (agreed after its exchange; a repaired
  /// execution too): the same on every rank. Its caller makes the plan anew before the next.
  [[nodiscard]] virtual bool failed_anywhere() const = 0;
  /// Whether some message of this rank (of either phase) could take a single-copy way, by its
  /// size and element count (single_copy::sent_whatever_the_pieces under the plan's
  /// REDIST_SINGLE_COPY): false where every one is sent through MPI whoever its peer is.
  [[nodiscard]] virtual bool may_read_peers() const = 0;
  /// Whether this rank's part lets the plan carry the caller's check (defers()): all at once,
  /// in one phase, and no more than kDeferredBytes written into b here.
  [[nodiscard]] virtual bool deferrable() const = 0;
  /// Collective over the plan's ranks, once, when the plan is made, before its first
  /// execution: which way each message travels (negotiation.hpp), where any rank
  /// may_read_peers() (`read_anywhere`, agreed by the caller), else every message Way::sent
  /// without exchanging anything; and whether executions defer the caller's check, where
  /// every rank is deferrable() (`deferrable_everywhere`, agreed by the caller).
  virtual void decide_ways(bool read_anywhere, bool deferrable_everywhere) = 0;
  /// decide_ways() after an agreement of its own on its two arguments (make_executor's
  /// collective forms).
  void decide_ways_alone();
  /// execute() with this rank's argument check (`error`: 0, or the caller's error word) in
  /// its agreement after the exchange; unpacking and the local copy wait for that agreement.
  /// Returns the maximum of the error words over the ranks; non-zero: no rank wrote to b (a
  /// rank whose a is NULL sends its buffers unfilled, one whose b is NULL unpacks nothing).
  /// Only when defers(). With `op`, execute(a, b, *op) instead of the copy.
  virtual long long execute_checked(const void *a, void *b, long long error,
                                    const Operation *op = nullptr) = 0;

  /// words[0, count) := their maximum over the plan's ranks (collective::agree_max, its second
  /// round left in `later` where given): a caller's check before an execution. Collective over
  /// the plan's ranks; MPI_SUCCESS or MPI's code.
  virtual int agree(long long *words, int count, collective::Confirmation *later = nullptr) = 0;

  /// This rank's plan of the whole transfer (a two-phase plan's too: its messages are the
  /// phases').
  [[nodiscard]] virtual const RankPlan &plan() const = 0;
  /// A batch's operations, each with its own plan (empty: not a batch).
  [[nodiscard]] virtual std::span<const Pieces> batch_operations() const = 0;
  [[nodiscard]] virtual std::size_t element_size() const = 0;
  [[nodiscard]] virtual const ScheduleChoice &schedule() const = 0;
  /// Bytes of message buffers (and a two-phase plan's intermediate array) execute() uses,
  /// allocated when the executor is made (std::bad_alloc there), then reused. Messages read
  /// in a single copy never touch their part.
  [[nodiscard]] virtual std::size_t buffer_bytes() const = 0;
  /// Messages this rank sends / receives in a single copy (decided by decide_ways();
  /// two-phase plans: both phases' messages).
  [[nodiscard]] virtual std::size_t single_copy_sends() const = 0;
  [[nodiscard]] virtual std::size_t single_copy_receives() const = 0;
  /// Of those receives, the ones unpacked from the sender's mapped buffer (Way::mapped).
  [[nodiscard]] virtual std::size_t mapped_receives() const = 0;
  /// Receives of the last execution that the repair received again after a failure.
  [[nodiscard]] virtual std::size_t repaired_messages() const = 0;
  /// Whether the last execution left a message of this rank's peers unmatched on the
  /// communicator (a post failed twice; the call may still have succeeded through the repair):
  /// the communicator must not carry another execution's messages.
  [[nodiscard]] virtual bool left_unmatched() const = 0;
  /// Receives of the last execution copied from the sender's shared array, mapped here.
  [[nodiscard]] virtual std::size_t array_copies() const = 0;

  /// Which node this rank and the peers of plan() are on.
  [[nodiscard]] virtual const NodeMap &nodes() const = 0;
  /// Bytes of plan() this rank sends to / receives from peers on its node and on other nodes,
  /// per execution (as plan()'s elements_sent(): a two-phase plan's whole transfer).
  struct NodeBytes {
    std::int64_t sent_inside = 0;
    std::int64_t sent_across = 0;
    std::int64_t received_inside = 0;
    std::int64_t received_across = 0;
  };
  [[nodiscard]] NodeBytes node_bytes() const;
  /// Messages this rank sends or receives in a single copy with a peer on another node (the
  /// ways agreed so far; two-phase plans: both phases). Always 0: the tests check it.
  [[nodiscard]] virtual std::size_t single_copy_across_nodes() const = 0;

  /// Largest number of bytes sent in one MPI message; larger messages go in several pieces.
  /// Tests lower it to exercise the splitting.
  static void set_max_message_bytes(std::size_t bytes);

  static constexpr int kTag = 7411;
  /// Most bytes a rank writes into b (received and copied locally) in an execution that
  /// defers(): a deferred execution writes b only after its agreement, so its local copy and
  /// unpacking cannot overlap the transfer; past this size (on any rank) the overlap saves
  /// more than the agreement before the exchange costs (across a 1 Gbit/s link a batch of 64
  /// PDGEADD of 256 x 256 took 14.8 ms deferred, 13.4 not; BENCHMARKS.md, "Batches in their
  /// steady state, and across nodes").
  static constexpr std::size_t kDeferredBytes = std::size_t{256} << 10;
};

/// The executor of one rank plan: all at once or in steps (never two phases: make_executor
/// makes a TwoPhases for those). comm is not owned and must outlive the executor; its error
/// handler must be MPI_ERRORS_RETURN. lld_src/lld_dst are this rank's leading dimensions.
/// Messages carry `tag`. Local: node_ids(comm) (nodes.hpp) made by the caller, once per plan;
/// single copy only between ranks of one node (and that can read each other). The ways are
/// decided by decide_ways() (collective), which the front end folds into its planning
/// agreement.
class OnePhase final : public Executor {
public:
  /// A 2-D plan; `schedule` says how to order the messages: all at once or in steps.
  OnePhase(MPI_Comm comm, const std::vector<int> &node_ids, RankPlan plan, std::size_t element_size,
           Index lld_src, Index lld_dst, ScheduleChoice schedule = {}, int tag = kTag);
  /// An N-d plan, its messages sent or read in a single copy as for 2-D plans:
  /// strides are this rank's local strides of A (by A's dimension) and B (local_strides).
  OnePhase(MPI_Comm comm, const std::vector<int> &node_ids, NdRankPlan plan,
           std::size_t element_size, const Strides &src_strides, const Strides &dst_strides,
           ScheduleChoice schedule, int tag = kTag);
  /// A batch (transport/batch_pieces.hpp): one Pieces per operation, each
  /// with its own plan, element size and leading dimensions; all at once, every message sent
  /// through MPI, one per peer carrying the pieces of every operation. Its executions take,
  /// as `a` and `b`, arrays of one local array pointer per entry of `arrays` (objects of type
  /// const std::byte * and std::byte *; NULL where this rank has none of its operations), and
  /// as `op` an array of one Operation per entry; with `arrays` shared, this rank's two local
  /// arrays and one Operation, as a 2-D plan.
  OnePhase(MPI_Comm comm, const std::vector<int> &node_ids, std::vector<Pieces> operations,
           BatchArrays arrays = {}, int tag = kTag);
  /// A block grid transfer's plan (block_grid.hpp; shared, so that its caller can make the
  /// executor anew from it): all at once; executions take this rank's local arrays of A and B
  /// (every block at its offset) and an Operation as 2-D plans do.
  OnePhase(MPI_Comm comm, const std::vector<int> &node_ids,
           std::shared_ptr<const GridRankPlan> plan, std::size_t element_size, int tag = kTag);
  ~OnePhase() override;

  void execute(const void *a, void *b) override;
  void execute(const void *a, void *b, const Operation &op) override;
  void begin(const void *a, void *b, const Operation *op) override;
  void end() override;
  [[nodiscard]] bool in_flight() const override { return flight_.in_flight; }
  [[nodiscard]] bool defers() const override { return defers_; }
  [[nodiscard]] bool failed_anywhere() const override { return last_.failed_anywhere; }
  [[nodiscard]] bool may_read_peers() const override;
  [[nodiscard]] bool deferrable() const override;
  void decide_ways(bool read_anywhere, bool deferrable_everywhere) override;
  long long execute_checked(const void *a, void *b, long long error, const Operation *op) override;
  int agree(long long *words, int count, collective::Confirmation *later) override;
  [[nodiscard]] const RankPlan &plan() const override { return pieces_.plan(); }
  [[nodiscard]] std::span<const Pieces> batch_operations() const override {
    return pieces_.batch_operations();
  }
  [[nodiscard]] std::size_t element_size() const override { return pieces_.element_size(); }
  [[nodiscard]] const ScheduleChoice &schedule() const override { return schedule_; }
  [[nodiscard]] std::size_t buffer_bytes() const override { return buffers_.bytes(); }
  [[nodiscard]] std::size_t single_copy_sends() const override;
  [[nodiscard]] std::size_t single_copy_receives() const override;
  [[nodiscard]] std::size_t mapped_receives() const override;
  [[nodiscard]] std::size_t repaired_messages() const override { return last_.repaired; }
  [[nodiscard]] bool left_unmatched() const override;
  [[nodiscard]] std::size_t array_copies() const override;
  [[nodiscard]] const NodeMap &nodes() const override { return nodes_; }
  [[nodiscard]] std::size_t single_copy_across_nodes() const override;

private:
  OnePhase(MPI_Comm comm, const std::vector<int> &node_ids, Pieces &&pieces, Index lld_src,
           ScheduleChoice &&schedule, int tag);
  /// begin() without the progress thread (execute() ends at once); `check`: the caller's
  /// error word where the execution carries it (execute_checked()), else null.
  void start(const void *a, void *b, const Operation *op, const long long *check = nullptr);
  /// What the last execution left to be asked (copies, marks, repairs).
  void forget_last_execution();
  /// Post every receive and send and copy the local part; the receives are requests
  /// [0, flight_.receives).
  void post_all_at_once(const std::byte *a, std::byte *b);
  /// The local part, after the messages are posted: where one of them goes through MPI to
  /// another node, MPI moves it only inside MPI calls (the rendezvous, then each fragment), so
  /// a copy of milliseconds would hold the transfer up; the copy then drives MPI's progress
  /// after each of a batch's operations, or each kProgressWindowBytes of a local copy that
  /// takes windows.
  void copy_local(const std::byte *a, std::byte *b);
  static constexpr std::size_t kProgressWindowBytes = std::size_t{1} << 20;
  /// Whether a message of this rank goes through MPI (Way::sent) to or from another node.
  [[nodiscard]] bool sent_across_nodes() const;
  void execute_steps(const std::byte *a, std::byte *b);
  /// Post this rank's part of receive elements [lo, hi) of plan().recvs[i] (into `buffer`
  /// where its way needs one) / of send elements [lo, hi) of plan().sends[i] (packed where
  /// send_buffer_of() says).
  void post_receive(std::size_t i, Index lo, Index hi, std::byte *buffer);
  void post_send(std::size_t i, Index lo, Index hi, const std::byte *a, bool packed = false);
  /// Where send i's way packs it.
  std::byte *send_buffer_of(std::size_t i);
  /// All at once: pack every message this rank packs and copy its local part a window of
  /// each at a time, when that pays (large, and the local copy takes windows). Whether it
  /// did; then the packed messages only need posting.
  bool pack_with_local_copy(const std::byte *a, std::byte *b);
  /// Wait for requests [first, end), handing each one to its transport as it completes.
  void complete(std::size_t first, std::size_t end, std::byte *b, const char *what);
  /// After the exchange: the agreement on whether anything failed, and the repair if it did.
  void settle(const std::byte *a, std::byte *b);
  /// After a failure anywhere (agreed): the messages that failed at either end, learnt from
  /// every rank, sent again through MPI (tag + kRepairTag) and unpacked over b; a failure that
  /// remains is the execution's.
  void repair(const std::byte *a, std::byte *b);

  ScheduleChoice schedule_;
  Pieces pieces_;
  NodeMap nodes_;
  ExchangeBuffers buffers_;
  Requests requests_; // receives first, then sends; the first failure of an execution
  Transports transports_;
  // pack_with_local_copy: from how many bytes (the local part and the packed messages) it
  // interleaves, and how many bytes of A a window reads (the second-level cache of this
  // project's machine; nd_bench was fastest with windows of 1 to 8 MiB, its CYCLIC case 25%
  // slower with 512 KiB, whose walks restart four times as often); REDIST_TEST_INTERLEAVING
  // lowers both. `packed_sends`: the sends packed in this execution; `collected`: the pieces
  // of one window.
  struct Interleaving {
    std::size_t from_bytes = kStreamingBytes;
    std::size_t window_bytes = std::size_t{2} << 20;
    std::vector<std::size_t> packed_sends;
    std::vector<PieceCopy> collected;
  };
  Interleaving interleaving_;
  bool defers_ = false; // decided with the ways
  // The execution in flight, from begin() (or execute()) to its end.
  struct Flight {
    const std::byte *a = nullptr;
    std::byte *b = nullptr;
    bool in_flight = false;
    bool operation = false;   // begin() set an operation on pieces_
    bool posted = false;      // all at once: begin() posted the exchange
    std::size_t receives = 0; // then: its receive requests
    bool deferring = false;   // execute_checked()'s: it carries the caller's check
    long long check = 0;      // its error word, then the agreed maximum
  };
  Flight flight_;
  // What the last execution left, for its caller.
  struct Outcome {
    std::size_t repaired = 0;     // receives repaired
    bool failed_anywhere = false; // agreed by settle()
    bool unrepaired = false;      // failed transfers left unrepaired (an argument error)
  };
  Outcome last_;
  ProgressMode progress_mode_ = ProgressMode::none; // REDIST_PROGRESS when made
  ProgressThread progress_;
};

/// This process's rank in comm (Error REDIST_ERR_MPI if MPI cannot tell).
int rank_in(MPI_Comm comm);

/// The executor a ScheduleChoice asks for: a TwoPhases where it has phases (each phase's
/// OnePhase tagging its messages tag + 1 and tag + 2, so that a fast rank's second phase never
/// meets a slow rank's first), else a OnePhase. Local, as OnePhase's constructors.
std::unique_ptr<Executor> make_executor(MPI_Comm comm, const std::vector<int> &node_ids,
                                        RankPlan plan, std::size_t element_size, Index lld_src,
                                        Index lld_dst, ScheduleChoice schedule = {},
                                        int tag = Executor::kTag);
std::unique_ptr<Executor> make_executor(MPI_Comm comm, const std::vector<int> &node_ids,
                                        NdRankPlan plan, std::size_t element_size,
                                        const Strides &src_strides, const Strides &dst_strides,
                                        ScheduleChoice schedule, int tag = Executor::kTag);
/// The same, collective over comm: node_ids(comm) made, and the ways decided
/// (decide_ways_alone()).
std::unique_ptr<Executor> make_executor(MPI_Comm comm, RankPlan plan, std::size_t element_size,
                                        Index lld_src, Index lld_dst, ScheduleChoice schedule = {},
                                        int tag = Executor::kTag);

} // namespace redist
