#include "exec.hpp"

#include "call_timers.hpp"
#include "collective.hpp"
#include "copy.hpp"
#include "environment.hpp"
#include "error.hpp"
#include "nd_planner.hpp"

#include <sys/mman.h>
#include <unistd.h>

#include <algorithm>
#include <climits>
#include <cstdint>
#include <cstdlib>
#include <functional>
#include <string>

namespace redist {

void Executor::set_max_message_bytes(std::size_t bytes) {
  Requests::set_max_message_bytes(bytes);
}

namespace {

// Test hook: REDIST_TEST_INTERLEAVING=w (w >= 1) makes pack_with_local_copy interleave every
// plan it can, in windows of w bytes of A; 0 when unset or invalid.
// pack_with_local_copy interleaves when the local part's stretches of A are shorter than this
// on average.
constexpr std::size_t kInterleavedStretchBytes = std::size_t{8} << 10;

std::size_t test_interleaving() {
  return static_cast<std::size_t>(
      environment::integer("REDIST_TEST_INTERLEAVING", 1, LLONG_MAX, "a test hook")
          .value.value_or(0));
}

} // namespace

int rank_in(MPI_Comm comm) {
  int rank = 0;
  if (MPI_Comm_rank(comm, &rank) != MPI_SUCCESS) {
    throw Error(REDIST_ERR_MPI, "redist: MPI_Comm_rank failed (executor)");
  }
  return rank;
}

OnePhase::OnePhase(MPI_Comm comm, const std::vector<int> &node_ids, RankPlan plan,
                   std::size_t element_size, Index lld_src, Index lld_dst, ScheduleChoice schedule,
                   int tag)
    : OnePhase(comm, node_ids, Pieces(std::move(plan), element_size, lld_src, lld_dst), lld_src,
               std::move(schedule), tag) {}

OnePhase::OnePhase(MPI_Comm comm, const std::vector<int> &node_ids, NdRankPlan plan,
                   std::size_t element_size, const Strides &src_strides, const Strides &dst_strides,
                   ScheduleChoice schedule, int tag)
    : OnePhase(comm, node_ids, Pieces(std::move(plan), element_size, src_strides, dst_strides), 0,
               std::move(schedule), tag) {}

OnePhase::OnePhase(MPI_Comm comm, const std::vector<int> &node_ids, std::vector<Pieces> operations,
                   BatchArrays arrays, int tag)
    : OnePhase(comm, node_ids, Pieces(std::move(operations), std::move(arrays)), 0,
               ScheduleChoice{}, tag) {}

OnePhase::OnePhase(MPI_Comm comm, const std::vector<int> &node_ids,
                   std::shared_ptr<const GridRankPlan> plan, std::size_t element_size, int tag)
    : OnePhase(comm, node_ids, Pieces(std::move(plan), element_size), 0, ScheduleChoice{}, tag) {}

OnePhase::OnePhase(MPI_Comm comm, const std::vector<int> &node_ids, Pieces &&pieces, Index lld_src,
                   ScheduleChoice &&schedule, int tag)
    : schedule_(std::move(schedule)), pieces_(std::move(pieces)),
      nodes_(node_ids, rank_in(comm), pieces_.plan()),
      requests_(comm, 2 * (pieces_.plan().sends.size() + pieces_.plan().recvs.size()) + 4),
      transports_(pieces_, nodes_, tag, lld_src) {
  if (progress_environment_error().empty()) {
    progress_mode_ = progress_mode();
  }
  if (const std::size_t window = test_interleaving(); window > 0) {
    interleaving_.from_bytes = 0;
    interleaving_.window_bytes = window;
  }
  requests_.set_messages(pieces_.plan().sends.size(), pieces_.plan().recvs.size());
  interleaving_.packed_sends.reserve(pieces_.plan().sends.size());
  const std::size_t element_size = pieces_.element_size();
  const RankPlan &p = pieces_.plan();
  // A memory file to share only where a receiver may map it: not for plans whose messages are
  // all sent (decide_ways()), nor where every message is too small for `mapped` to pay.
  const single_copy::Mode mode = transports_.negotiation().mode();
  const bool shareable =
      !pieces_.sent_only() && std::any_of(p.sends.begin(), p.sends.end(), [&](const Peer &peer) {
        return single_copy::may_be_mapped(static_cast<std::size_t>(peer.elements) * element_size,
                                          mode);
      });
  buffers_ = ExchangeBuffers(p, element_size, schedule_, shareable);
}

OnePhase::~OnePhase() = default;

void OnePhase::post_receive(std::size_t i, Index lo, Index hi, std::byte *buffer) {
  transports_.of_receive(i).post_receive(requests_, i, lo, hi, buffer);
}

std::byte *OnePhase::send_buffer_of(std::size_t i) {
  return buffers_.send(i, transports_.of_send(i).send_buffer() == Transport::SendBuffer::shared);
}

void OnePhase::post_send(std::size_t i, Index lo, Index hi, const std::byte *a, bool packed) {
  transports_.of_send(i).post_send(requests_, i, lo, hi, a, send_buffer_of(i), packed);
}

void OnePhase::complete(std::size_t first, std::size_t end, std::byte *b, const char *what) {
  requests_.wait_each(
      first, end, what,
      [&](std::size_t k) {
        // Copied: the transport may post while the request list grows.
        const RequestInfo info = requests_.info(k);
        if (info.transport != nullptr) {
          info.transport->complete(requests_, info, b);
        }
      },
      [&](std::size_t k) {
        const RequestInfo info = requests_.info(k);
        if (info.transport != nullptr) {
          info.transport->failed(requests_, info);
        }
      });
}

void OnePhase::execute(const void *a, void *b) {
  start(a, b, nullptr);
  end();
}

void OnePhase::forget_last_execution() {
  transports_.array_copy().forget_copies();
  requests_.clear_marks();
  requests_.forget_combined();
  last_ = {};
}

std::string Executor::environment_error() {
  std::string why = single_copy::environment_error();
  return why.empty() ? progress_environment_error() : why;
}

void OnePhase::begin(const void *a, void *b, const Operation *op) {
  start(a, b, op);
  if (flight_.posted && progress_mode_ == ProgressMode::thread &&
      !(pieces_.plan().sends.empty() && pieces_.plan().recvs.empty())) {
    progress_.start(requests_.comm());
  }
}

void OnePhase::start(const void *a_void, void *b_void, const Operation *op,
                     const long long *check) {
  if (flight_.in_flight) {
    throw Error(REDIST_ERR_ARGUMENT,
                "redist: an execution of this plan is in flight (begun and not ended)");
  }
  flight_ = {};
  flight_.a = static_cast<const std::byte *>(a_void);
  flight_.b = static_cast<std::byte *>(b_void);
  flight_.deferring = check != nullptr;
  flight_.check = check != nullptr ? *check : 0;
  requests_.forget_failure();
  requests_.forget_unposted();
  if (op != nullptr) {
    pieces_.set_operation(op);
    flight_.operation = true;
  }
  try {
    forget_last_execution();
    call_timers::lap(call_timers::prepare);
    if (schedule_.strategy == Strategy::all_at_once) {
      post_all_at_once(flight_.a, flight_.b);
      flight_.posted = true;
    }
  } catch (...) {
    if (flight_.operation) {
      pieces_.set_operation(nullptr);
    }
    throw;
  }
  flight_.in_flight = true;
}

void OnePhase::end() {
  if (!flight_.in_flight) {
    throw Error(REDIST_ERR_ARGUMENT, "redist: no execution of this plan is in flight");
  }
  flight_.in_flight = false;
  progress_.stop();
  const Flight flight = flight_;
  struct Reset { // the operation is begin()'s, whatever happens here
    Pieces &pieces;
    bool operation;
    ~Reset() {
      if (operation) {
        pieces.set_operation(nullptr);
      }
    }
  } reset{pieces_, flight.operation};
  if (flight.posted) {
    complete(0, flight.receives, flight.b, "MPI_Waitany (receive)");
    call_timers::lap(call_timers::wait_receives);
    complete(flight.receives, requests_.size(), flight.b, "MPI_Waitany (send)");
    call_timers::lap(call_timers::wait_sends);
  } else {
    execute_steps(flight.a, flight.b);
  }
  settle(flight.a, flight.b);
  streaming_fence();
  if (!requests_.failure().empty()) {
    throw Error(REDIST_ERR_MPI, requests_.failure());
  }
}

long long OnePhase::execute_checked(const void *a, void *b, long long error, const Operation *op) {
  struct Deferring { // arrivals unpacked after the agreement, whatever happens
    Sent &sent;
    explicit Deferring(Sent &s) : sent(s) { sent.defer(true); }
    Deferring(const Deferring &) = delete;
    Deferring &operator=(const Deferring &) = delete;
    ~Deferring() { sent.defer(false); }
  } deferring{transports_.sent()};
  start(a, b, op, &error);
  end();
  return flight_.check;
}

void OnePhase::execute(const void *a, void *b, const Operation &op) {
  pieces_.set_operation(&op);
  try {
    execute(a, b);
  } catch (...) {
    pieces_.set_operation(nullptr);
    throw;
  }
  pieces_.set_operation(nullptr);
}

void OnePhase::settle(const std::byte *a, std::byte *b) {
  // Every request of the exchange has completed (or failed and was told to its transport),
  // on every rank. One agreement: did anything fail anywhere? Nothing did in the common case.
  // In the same reduction: the caller's argument check (execute_checked()).
  long long agreed[2] = {requests_.failure().empty() && !requests_.marked() ? 0 : 1, flight_.check};
  call_timers::lap(call_timers::wait_sends);
  const collective::Flags flags = collective::max_of_flags(requests_.comm(), agreed);
  call_timers::lap(call_timers::settle_agreement);
  if (flags != collective::Flags::agreed) {
    // Where this agreement's completion failed (the one failure), nothing failed elsewhere and
    // every other process's check passed: this process goes on with its own words, and reports
    // the failure, so that it never returns success on a deduction.
    requests_.fail(flags == collective::Flags::deduced
                       ? "redist execute: MPI_Wait of the agreement after the exchange failed "
                         "here (b was written as if nothing failed elsewhere)"
                       : "redist execute: MPI_Iallreduce of the agreement after the exchange "
                         "failed twice");
  }
  const long long failed = agreed[0];
  last_.failed_anywhere = failed != 0;
  flight_.check = agreed[1];
  if (flight_.deferring) {
    if (flight_.check != 0) {
      // An argument error somewhere: b stays as it was on every rank. A failed transfer is
      // not repaired, but the plan is made anew before its next execution (left_unmatched(),
      // on every rank: `failed` is agreed).
      last_.unrepaired = failed != 0;
      requests_.forget_failure();
      return;
    }
    const RankPlan &plan = pieces_.plan();
    for (std::size_t i = 0; i < plan.recvs.size(); ++i) {
      if (transports_.sent().arrived(i) && requests_.recv_marks()[i] == 0) {
        unpack_once(pieces_, requests_, i, buffers_.receive(i), b, 0, plan.recvs[i].elements);
      }
    }
    pieces_.copy_local(a, b);
  }
  if (failed != 0) {
    repair(a, b);
  }
}

void OnePhase::repair(const std::byte *a, std::byte *b) {
  // Which messages failed, at either end: each rank tells each other rank what it saw of the
  // messages between them (low byte: its send to that rank, next byte: its receive from it).
  const RankPlan &plan = pieces_.plan();
  int size = 0;
  MPI_Comm_size(requests_.comm(), &size);
  std::vector<int> out(static_cast<std::size_t>(size), 0);
  std::vector<int> in(static_cast<std::size_t>(size), 0);
  for (std::size_t i = 0; i < plan.sends.size(); ++i) {
    out[static_cast<std::size_t>(plan.sends[i].rank)] |= requests_.send_marks()[i];
  }
  for (std::size_t i = 0; i < plan.recvs.size(); ++i) {
    out[static_cast<std::size_t>(plan.recvs[i].rank)] |= requests_.recv_marks()[i] << 8;
  }
  const int rc = MPI_Alltoall(out.data(), 1, MPI_INT, in.data(), 1, MPI_INT, requests_.comm());
  if (rc != MPI_SUCCESS) {
    requests_.record(rc, "MPI_Alltoall (repair)", -1);
    return;
  }
  std::vector<std::uint8_t> resend(plan.sends.size());
  std::vector<std::uint8_t> rereceive(plan.recvs.size());
  for (std::size_t i = 0; i < plan.sends.size(); ++i) {
    resend[i] = static_cast<std::uint8_t>(requests_.send_marks()[i] |
                                          in[static_cast<std::size_t>(plan.sends[i].rank)] >> 8);
  }
  for (std::size_t i = 0; i < plan.recvs.size(); ++i) {
    rereceive[i] = static_cast<std::uint8_t>(
        requests_.recv_marks()[i] | (in[static_cast<std::size_t>(plan.recvs[i].rank)] & 0xFF));
  }
  const std::string first = requests_.failure();
  requests_.forget_failure();
  requests_.clear_marks();
  requests_.clear();
  // The repair: each failed message sent again whole through MPI, into fresh buffers where
  // the plan has none of its size, and unpacked over whatever a failed read left in b.
  const bool all_at_once = schedule_.strategy == Strategy::all_at_once;
  std::vector<std::vector<std::byte>> buffers;
  buffers.reserve(plan.sends.size() + plan.recvs.size());
  const auto buffer_for = [&](Index elements) {
    buffers.emplace_back(static_cast<std::size_t>(elements) * pieces_.element_size());
    return buffers.back().data();
  };
  for (std::size_t i = 0; i < plan.recvs.size(); ++i) {
    if (rereceive[i] == 0) {
      continue;
    }
    const Index elements = plan.recvs[i].elements;
    transports_.repair().post_receive(requests_, i, 0, elements,
                                      all_at_once ? buffers_.receive(i) : buffer_for(elements));
    ++last_.repaired;
  }
  const std::size_t receives = requests_.size();
  for (std::size_t i = 0; i < plan.sends.size(); ++i) {
    if (resend[i] == 0) {
      continue;
    }
    const Index elements = plan.sends[i].elements;
    std::byte *buffer = buffers_.plain_send(i);
    transports_.repair().post_send(requests_, i, 0, elements, a,
                                   buffer != nullptr ? buffer : buffer_for(elements), false);
  }
  complete(0, receives, b, "MPI_Waitany (repair, receive)");
  complete(receives, requests_.size(), b, "MPI_Waitany (repair, send)");
  // Repaired: b is right here and the call succeeds. Still failing: report the first failure.
  if (!requests_.failure().empty() || requests_.marked()) {
    const std::string now = requests_.failure();
    requests_.forget_failure();
    requests_.fail(!first.empty() ? first
                   : !now.empty() ? now
                                  : "redist execute: a message could not be repaired");
  }
}

void OnePhase::post_all_at_once(const std::byte *a, std::byte *b) {
  const RankPlan &plan = pieces_.plan();
  requests_.clear();
  for (std::size_t i = 0; i < plan.recvs.size(); ++i) {
    post_receive(i, 0, plan.recvs[i].elements, buffers_.receive(i));
  }
  call_timers::lap(call_timers::post_receives);
  flight_.receives = requests_.size();
  const bool packed = !flight_.deferring && pack_with_local_copy(a, b);
  for (std::size_t i = 0; i < plan.sends.size(); ++i) {
    post_send(i, 0, plan.sends[i].elements, a, packed);
  }
  call_timers::lap(call_timers::post_sends);
  if (!flight_.deferring && !packed) { // else after the agreement (settle())
    copy_local(a, b);
    call_timers::lap(call_timers::local_copy);
  }
}

void OnePhase::copy_local(const std::byte *a, std::byte *b) {
  const Index elements = pieces_.plan().self.elements;
  const std::size_t element_size = pieces_.element_size();
  if (static_cast<std::size_t>(elements) * element_size < 2 * kProgressWindowBytes ||
      !sent_across_nodes()) {
    pieces_.copy_local(a, b);
    return;
  }
  pieces_.copy_local_in_parts(a, b, kProgressWindowBytes,
                              [this] { drive_progress(requests_.comm()); });
}

bool OnePhase::sent_across_nodes() const {
  const RankPlan &plan = pieces_.plan();
  for (std::size_t i = 0; i < plan.sends.size(); ++i) {
    if (transports_.negotiation().send_way(i) == single_copy::Way::sent && !nodes_.send_inside(i)) {
      return true;
    }
  }
  for (std::size_t i = 0; i < plan.recvs.size(); ++i) {
    if (transports_.negotiation().recv_way(i) == single_copy::Way::sent && !nodes_.recv_inside(i)) {
      return true;
    }
  }
  return false;
}

bool OnePhase::pack_with_local_copy(const std::byte *a, std::byte *b) {
  // Each message takes its own pieces of A, and the pieces of different messages can lie side
  // by side (a pencil's row split between two ranks, a 2-D column's rows split between
  // destinations). Copied a message at a time, each pass reads A across all of its memory,
  // jumping over the others' pieces every few KiB, at a fraction of the memory's speed. Here
  // every message and the local part are walked a window of A at a time, and their long
  // pieces copied in the order of A: A is read once, in order. The pencil moves of nd_bench
  // pack and copy locally in about half the time (BENCHMARKS.md).
  const RankPlan &plan = pieces_.plan();
  if (a == nullptr || plan.self.elements == 0 || !pieces_.windows_local()) {
    return false;
  }
  const std::size_t element_size = pieces_.element_size();
  auto bytes = static_cast<std::size_t>(plan.self.elements) * element_size;
  std::vector<std::size_t> &packed_sends = interleaving_.packed_sends;
  packed_sends.clear();
  for (std::size_t i = 0; i < plan.sends.size(); ++i) {
    if (transports_.of_send(i).packs(i, a)) {
      packed_sends.push_back(i);
      bytes += static_cast<std::size_t>(plan.sends[i].elements) * element_size;
    }
  }
  if (packed_sends.empty() || bytes < interleaving_.from_bytes) {
    return false;
  }
  // Only where the local part's stretches of A are short; past a few pages each message
  // reads A at memory speed already, and posting every message early pays more.
  const std::size_t self_bytes = static_cast<std::size_t>(plan.self.elements) * element_size;
  if (interleaving_.from_bytes > 0 &&
      self_bytes >=
          kInterleavedStretchBytes * std::max<std::size_t>(pieces_.local_source_stretches(), 1)) {
    return false;
  }
  const auto windows =
      static_cast<Index>((bytes + interleaving_.window_bytes - 1) / interleaving_.window_bytes);
  // Window k of n elements: [k * (n / windows) + min(k, n % windows), ...), without overflow.
  const auto window_start = [windows](Index n, Index k) {
    return k * (n / windows) + std::min(k, n % windows);
  };
  struct Collecting { // the pieces' copies, put off until the window is walked
    Pieces &pieces;
    Collecting(Pieces &p, std::vector<PieceCopy> &copies) : pieces(p) { pieces.collect(&copies); }
    Collecting(const Collecting &) = delete;
    Collecting &operator=(const Collecting &) = delete;
    ~Collecting() { pieces.collect(nullptr); }
  } collecting{pieces_, interleaving_.collected};
  for (Index k = 0; k < windows; ++k) {
    interleaving_.collected.clear();
    for (const std::size_t i : packed_sends) {
      const Peer &peer = plan.sends[i];
      const Index lo = window_start(peer.elements, k);
      const Index hi = window_start(peer.elements, k + 1);
      pieces_.pack(peer, a, send_buffer_of(i) + static_cast<std::size_t>(lo) * element_size, lo,
                   hi);
    }
    pieces_.copy_local(a, b, window_start(plan.self.elements, k),
                       window_start(plan.self.elements, k + 1));
    std::sort(interleaving_.collected.begin(), interleaving_.collected.end(),
              [](const PieceCopy &x, const PieceCopy &y) { return std::less<>{}(x.from, y.from); });
    for (const PieceCopy &c : interleaving_.collected) {
      copy_bytes(c.to, c.from, c.bytes, true);
    }
  }
  call_timers::lap(call_timers::pack);
  return true;
}

// Stepwise execution: in each step this rank exchanges only with that step's partners (no
// barrier: a step waits for its own two messages only); packed pieces longer than the chunk
// go in sub-steps, so the buffers never exceed one chunk each way. A piece read from the
// sender's array moves whole in the first sub-step: it needs no buffer.
void OnePhase::execute_steps(const std::byte *a, std::byte *b) {
  bool local_done = false;
  for (const RankStep &step : schedule_.steps) {
    const auto recv = static_cast<std::size_t>(step.recv);
    const auto send = static_cast<std::size_t>(step.send);
    const bool recv_direct = step.recv_count > 0 && transports_.of_receive(recv).send_buffer() ==
                                                        Transport::SendBuffer::none;
    const bool send_direct = step.send_count > 0 &&
                             transports_.of_send(send).send_buffer() == Transport::SendBuffer::none;
    const Index recv_packed = recv_direct ? 0 : step.recv_count;
    const Index send_packed = send_direct ? 0 : step.send_count;
    const Index longest = std::max(recv_packed, send_packed);
    const Index chunk =
        schedule_.chunk_elements > 0 ? schedule_.chunk_elements : std::max<Index>(longest, 1);
    for (Index begin = 0; begin == 0 || begin < longest; begin += chunk) {
      requests_.clear();
      const Index recv_n = std::clamp<Index>(recv_packed - begin, 0, chunk);
      const Index send_n = std::clamp<Index>(send_packed - begin, 0, chunk);
      if (begin == 0 && recv_direct) {
        post_receive(recv, step.recv_offset, step.recv_offset + step.recv_count, nullptr);
      }
      if (recv_n > 0) {
        const Index lo = step.recv_offset + begin;
        post_receive(recv, lo, lo + recv_n, buffers_.receive(recv));
      }
      const std::size_t receives = requests_.size();
      if (begin == 0 && send_direct) {
        post_send(send, step.send_offset, step.send_offset + step.send_count, a);
      }
      if (send_n > 0) {
        const Index lo = step.send_offset + begin;
        post_send(send, lo, lo + send_n, a);
      }
      if (!local_done) {
        pieces_.copy_local(a, b);
        local_done = true;
      }
      complete(0, receives, b, "MPI_Waitany (receive)");
      complete(receives, requests_.size(), b, "MPI_Waitany (send)");
    }
  }
  if (!local_done) {
    pieces_.copy_local(a, b);
  }
}

Executor::NodeBytes Executor::node_bytes() const {
  const RankPlan &p = plan();
  const auto es = static_cast<std::int64_t>(element_size());
  NodeBytes bytes;
  for (std::size_t i = 0; i < p.sends.size(); ++i) {
    (nodes().send_inside(i) ? bytes.sent_inside : bytes.sent_across) += p.sends[i].elements * es;
  }
  for (std::size_t i = 0; i < p.recvs.size(); ++i) {
    (nodes().recv_inside(i) ? bytes.received_inside : bytes.received_across) +=
        p.recvs[i].elements * es;
  }
  return bytes;
}

std::size_t OnePhase::single_copy_across_nodes() const {
  std::size_t across = 0;
  for (std::size_t i = 0; i < pieces_.plan().sends.size(); ++i) {
    across +=
        transports_.negotiation().send_way(i) != single_copy::Way::sent && !nodes_.send_inside(i)
            ? 1
            : 0;
  }
  for (std::size_t i = 0; i < pieces_.plan().recvs.size(); ++i) {
    across +=
        transports_.negotiation().recv_way(i) != single_copy::Way::sent && !nodes_.recv_inside(i)
            ? 1
            : 0;
  }
  return across;
}

bool OnePhase::may_read_peers() const {
  if (pieces_.sent_only()) {
    return false;
  }
  const RankPlan &p = pieces_.plan();
  const bool packed_only = pieces_.packed_only();
  const std::size_t element_size = pieces_.element_size();
  // Messages of a plan take few sizes: the last one's answer is kept.
  std::size_t last_elements = 0;
  bool last_sent = true;
  const auto may_read = [&](const Peer &peer) {
    const auto elements = static_cast<std::size_t>(peer.elements);
    if (elements != last_elements) {
      last_elements = elements;
      last_sent =
          single_copy::sent_whatever_the_pieces(elements * element_size, elements, p.transposed(),
                                                packed_only, transports_.negotiation().mode());
    }
    return !last_sent;
  };
  return std::any_of(p.sends.begin(), p.sends.end(), may_read) ||
         std::any_of(p.recvs.begin(), p.recvs.end(), may_read);
}

bool OnePhase::deferrable() const {
  return schedule_.strategy == Strategy::all_at_once &&
         buffers_.received_bytes() +
                 static_cast<std::size_t>(pieces_.plan().self.elements) * pieces_.element_size() <=
             kDeferredBytes;
}

int OnePhase::agree(long long *words, int count, collective::Confirmation *later) {
  return collective::agree_max(requests_.comm(), {words, static_cast<std::size_t>(count)}, later);
}

void Executor::decide_ways_alone() {
  long long words[2] = {may_read_peers() ? 1 : 0, deferrable() ? 0 : 1};
  if (agree(words, 2) != MPI_SUCCESS) {
    throw Error(REDIST_ERR_MPI, "redist: MPI_Iallreduce failed twice (executor's ways)");
  }
  decide_ways(words[0] != 0, words[1] == 0);
}

void OnePhase::decide_ways(bool read_anywhere, bool deferrable_everywhere) {
  // A transposed trapezoid's messages are all sent (Pieces::sent_only): every rank has the
  // same Transfer, so both ends of each message skip the exchange of identities.
  if (read_anywhere && !pieces_.sent_only()) {
    transports_.negotiation().run(requests_, buffers_.segment());
  } else {
    transports_.negotiation().settle_all_sent();
  }
  buffers_.segment().release_fd(); // every receiver has mapped it or chosen otherwise
  defers_ = deferrable_everywhere && transports_.negotiation().all_sent_everywhere();
}

std::size_t OnePhase::single_copy_sends() const {
  return transports_.negotiation().single_copy_sends();
}

std::size_t OnePhase::single_copy_receives() const {
  return transports_.negotiation().single_copy_receives();
}

std::size_t OnePhase::mapped_receives() const {
  return transports_.negotiation().mapped_receives();
}

bool OnePhase::left_unmatched() const {
  return requests_.unposted() || last_.unrepaired;
}

std::size_t OnePhase::array_copies() const {
  return transports_.array_copy().copies();
}

} // namespace redist
