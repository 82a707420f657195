// The ring rebalancing executor over MPI: neighbour messages with forwarding in chunks, or
// direct messages. Planning is in ring.cpp (no MPI); the C API of redist_ring.h in
// ring_schedule.cpp and ring_plan.cpp.

#include "front_end.hpp"
#include "ring_internal.hpp"

#include <algorithm>
#include <cstring>
#include <new>
#include <optional>
#include <string>
#include <vector>

namespace redist {
namespace {

constexpr int tag_rightward = 0x52494e; // items travelling from k to k+1
constexpr int tag_leftward = 0x52494f;  // from k to k-1
constexpr int tag_direct = 0x524950;

// --- The requests of one execution --------------------------------------------------------------
//
// Every request an execution posts goes through a Flight, which knows what each one is (peer,
// tag, the how-manieth receive of that stream) and how many messages this process sent to each
// peer. When an MPI call fails (or memory runs out) on a process, that process stops posting and
// tells every other process (an empty message, tag_abort, for which each keeps a receive posted
// while it waits); a process told so stops too and tells the others, since a process that stops
// before finishing its part may leave others waiting for it. Then, in finish(), every process
// joins one agreement (front_end::reduce) on whether any process failed; if one did, they
// exchange how many messages each sent to each, every receive no message will match is cancelled,
// every message sent that no receive was posted for is received into scratch, and every request
// is waited for. Only then does the execution return (and its buffers go): no request is left
// behind, no message is left for the next execution, and every process returns an error.

constexpr int tag_abort = 0x524951;
constexpr int kKinds = 4; // tag_rightward, tag_leftward, tag_direct, tag_abort (consecutive)

int kind_of(int tag) {
  return tag - tag_rightward;
}

std::string mpi_error_text(int code) {
  char text[MPI_MAX_ERROR_STRING];
  int length = 0;
  if (MPI_Error_string(code, text, &length) != MPI_SUCCESS)
    return "MPI error " + std::to_string(code);
  return {text, static_cast<std::size_t>(length)};
}

class Flight {
public:
  /// A process stopped because another one told it to.
  struct Stopped {};

  Flight(const redist_ring_plan_s &p, const char *call)
      : comm_(p.comm), rank_(p.rank), size_(p.size), call_(call),
        sent_(static_cast<std::size_t>(kKinds) * static_cast<std::size_t>(p.size), 0),
        received_(sent_.size(), 0) {
    requests_.push_back(MPI_REQUEST_NULL);
    posted_.push_back({});
    if (size_ > 1) {
      start_ = MPI_Irecv(nullptr, 0, MPI_BYTE, MPI_ANY_SOURCE, tag_abort, comm_, &requests_[0]);
    }
  }

  Flight(const Flight &) = delete;
  Flight &operator=(const Flight &) = delete;
  ~Flight() = default; // finish() has completed every request

  /// Throws if the notice receive could not be posted (then the exchange must not start).
  void started() const { check(start_, "MPI_Irecv", MPI_ANY_SOURCE); }

  /// Room for `n` more requests: the exchange's slots 0 .. n-1 (after those reserved before).
  void reserve_slots(std::size_t n) {
    requests_.resize(requests_.size() + n, MPI_REQUEST_NULL);
    posted_.resize(requests_.size());
  }

  void isend(const void *buf, int count, MPI_Datatype type, int peer, int tag, std::size_t slot) {
    check(MPI_Isend(buf, count, type, peer, tag, comm_, &requests_[slot + 1]), "MPI_Isend", peer);
    posted_[slot + 1] = {peer, tag, counter(sent_, peer, tag)++, false};
    ++active_;
  }
  void irecv(void *buf, int count, MPI_Datatype type, int peer, int tag, std::size_t slot) {
    check(MPI_Irecv(buf, count, type, peer, tag, comm_, &requests_[slot + 1]), "MPI_Irecv", peer);
    posted_[slot + 1] = {peer, tag, counter(received_, peer, tag)++, true};
    ++active_;
  }

  /// Wait for one request of the exchange; its slot. Throws Stopped when another process
  /// stopped, Error when MPI fails.
  std::size_t wait_any() {
    // Nothing of the exchange in flight: only a notice could come, and none will.
    if (active_ == 0)
      throw Error(REDIST_ERR_INTERNAL, std::string(call_) + ": ring exchange stalled");
    int index = MPI_UNDEFINED;
    const int rc = MPI_Waitany(static_cast<int>(requests_.size()), requests_.data(), &index,
                               MPI_STATUS_IGNORE);
    if (rc != MPI_SUCCESS) {
      const bool known = index != MPI_UNDEFINED && index > 0;
      throw Error(REDIST_ERR_MPI,
                  std::string(call_) + ": MPI_Waitany" +
                      (known
                           ? " (a message with rank " +
                                 std::to_string(posted_[static_cast<std::size_t>(index)].peer) + ")"
                           : std::string()) +
                      " failed: " + mpi_error_text(rc));
    }
    if (index == 0) throw Stopped{};
    if (index == MPI_UNDEFINED)
      throw Error(REDIST_ERR_INTERNAL, std::string(call_) + ": ring exchange stalled");
    --active_;
    return static_cast<std::size_t>(index) - 1;
  }

  /// This process stops before finishing its part: tell every other process (once).
  void stop() noexcept {
    if (stopped_) return;
    stopped_ = true;
    for (int peer = 0; peer < size_; ++peer) {
      if (peer == rank_) continue;
      MPI_Request r = MPI_REQUEST_NULL;
      if (MPI_Isend(nullptr, 0, MPI_BYTE, peer, tag_abort, comm_, &r) != MPI_SUCCESS) continue;
      aborts_.push_back(r);
      ++counter(sent_, peer, tag_abort);
    }
  }

  /// The agreement after the exchange (collective): returns if no process failed; otherwise
  /// completes every request and throws, on every process (`local`: this one's error).
  void finish(const Error *local) {
    long long word =
        local != nullptr || stopped_
            ? front_end::error_word(local != nullptr ? 2 : 1, front_end::lowest_first(rank_, size_))
            : 0;
    const bool agreed = front_end::reduce(comm_, &word, 1) == MPI_SUCCESS;
    if (agreed && word == 0) {
      cancel_and_wait(requests_[0]); // nobody stopped, nobody sends tag_abort
      return;
    }
    if (agreed) {
      drain();
    } else {
      // Without the agreement the others cannot be counted on: cancel what can be.
      for (MPI_Request &r : requests_)
        if (r != MPI_REQUEST_NULL) MPI_Cancel(&r);
    }
    wait_all(requests_);
    wait_all(aborts_);
    if (local != nullptr) throw *local;
    if (!agreed) {
      throw Error(REDIST_ERR_MPI, std::string(call_) +
                                      ": MPI_Allreduce failed after the exchange; the output "
                                      "is incomplete");
    }
    throw Error(REDIST_ERR_REMOTE,
                std::string(call_) + ": the exchange failed on rank " +
                    std::to_string(front_end::lowest_first(front_end::error_order(word), size_)) +
                    " (see its message); the output is incomplete");
  }

private:
  struct Posted {
    int peer = -1;
    int tag = 0;
    Index ordinal = 0; // the how-manieth message of this peer and tag
    bool receive = false;
  };

  void check(int rc, const char *what, int peer) const {
    if (rc == MPI_SUCCESS) return;
    throw Error(
        REDIST_ERR_MPI,
        std::string(call_) + ": " + what +
            (peer == MPI_ANY_SOURCE ? std::string() : " with peer rank " + std::to_string(peer)) +
            " failed: " + mpi_error_text(rc));
  }

  Index &counter(std::vector<Index> &v, int peer, int tag) const {
    return v[static_cast<std::size_t>(peer) * kKinds + static_cast<std::size_t>(kind_of(tag))];
  }

  static void cancel_and_wait(MPI_Request &r) {
    if (r == MPI_REQUEST_NULL) return;
    MPI_Cancel(&r);
    MPI_Wait(&r, MPI_STATUS_IGNORE);
  }

  /// Completes (or frees) every request; errors are already being reported.
  static void wait_all(std::vector<MPI_Request> &requests) {
    for (;;) {
      int index = MPI_UNDEFINED;
      MPI_Waitany(static_cast<int>(requests.size()), requests.data(), &index, MPI_STATUS_IGNORE);
      if (index == MPI_UNDEFINED) break;
      // A failed wait may leave its request active (Open MPI frees it): free it rather than
      // wait for it again and again.
      MPI_Request &r = requests[static_cast<std::size_t>(index)];
      if (r != MPI_REQUEST_NULL) MPI_Request_free(&r);
    }
  }

  /// Match every message sent with a receive, and cancel the receives nothing will match.
  void drain() {
    std::vector<long long> mine(sent_.begin(), sent_.end());
    std::vector<long long> theirs(mine.size(), 0);
    if (MPI_Alltoall(mine.data(), kKinds, MPI_LONG_LONG, theirs.data(), kKinds, MPI_LONG_LONG,
                     comm_) != MPI_SUCCESS) {
      for (MPI_Request &r : requests_)
        if (r != MPI_REQUEST_NULL) MPI_Cancel(&r);
      return;
    }
    const auto sent_here = [&](int peer, int tag) {
      return theirs[static_cast<std::size_t>(peer) * kKinds +
                    static_cast<std::size_t>(kind_of(tag))];
    };
    // Receives no message will match: their peer sent fewer messages.
    for (std::size_t k = 1; k < requests_.size(); ++k) {
      const Posted &p = posted_[k];
      if (requests_[k] != MPI_REQUEST_NULL && p.receive && p.ordinal >= sent_here(p.peer, p.tag))
        MPI_Cancel(&requests_[k]);
    }
    // Messages no receive was posted for (every message was posted before the agreement).
    std::vector<char> scratch;
    const auto receive = [&](int peer, int tag) {
      MPI_Message message = MPI_MESSAGE_NULL;
      MPI_Status status;
      if (MPI_Mprobe(peer, tag, comm_, &message, &status) != MPI_SUCCESS) return;
      int bytes = 0;
      MPI_Get_count(&status, MPI_BYTE, &bytes);
      scratch.resize(static_cast<std::size_t>(std::max(bytes, 0)));
      MPI_Mrecv(scratch.data(), bytes, MPI_BYTE, &message, MPI_STATUS_IGNORE);
    };
    Index aborts = 0;
    for (int peer = 0; peer < size_; ++peer) {
      aborts += sent_here(peer, tag_abort);
      for (const int tag : {tag_rightward, tag_leftward, tag_direct}) {
        for (Index n = counter(received_, peer, tag); n < sent_here(peer, tag); ++n)
          receive(peer, tag);
      }
    }
    // The notices: the posted receive takes one (if any came), the rest are received here.
    if (aborts == 0) {
      cancel_and_wait(requests_[0]);
    } else if (requests_[0] != MPI_REQUEST_NULL) {
      MPI_Wait(&requests_[0], MPI_STATUS_IGNORE);
    }
    for (Index n = 1; n < aborts; ++n)
      receive(MPI_ANY_SOURCE, tag_abort);
  }

  MPI_Comm comm_;
  int rank_;
  int size_;
  const char *call_;
  std::vector<Index> sent_;           // messages posted to each peer, per tag
  std::vector<Index> received_;       // receives posted from each peer, per tag
  std::vector<MPI_Request> requests_; // [0]: the notice receive; then the exchange's slots
  std::vector<Posted> posted_;
  std::vector<MPI_Request> aborts_;
  bool stopped_ = false;
  int start_ = MPI_SUCCESS;
  std::size_t active_ = 0; // requests of the exchange posted and not yet completed
};

/// Runs `exchange(flight)` and finish()es the flight, whatever happened: the buffers the
/// exchange's requests use must outlive this call.
template <class Exchange>
void fly(const redist_ring_plan_s &p, const char *call, Exchange &&exchange) {
  Flight flight(p, call);
  std::optional<Error> failure;
  try {
    flight.started();
    exchange(flight);
  } catch (const Flight::Stopped &) {
    flight.stop();
  } catch (const Error &e) {
    failure = e;
    flight.stop();
  } catch (const std::bad_alloc &) {
    failure =
        Error(REDIST_ERR_NO_MEMORY, std::string(call) + ": out of memory during the exchange");
    flight.stop();
  }
  flight.finish(failure ? &*failure : nullptr);
}

// --- Neighbour transport ------------------------------------------------------------------------
//
// A stream is the items crossing one link in one direction, numbered by their offset from the
// link: a rightward stream of P_k starts with P_k's last item, a leftward one with its first.
// Chunk c of a stream carries offsets [cQ, (c+1)Q). A sender's own items come first; a process
// that must send more than it holds forwards the first items arriving from its other side (which
// are exactly the ones next to the link it sends over), through a bounded FIFO. Receives of a
// stream are posted two chunks ahead; sends use two buffers. Forwarding only ever waits for data
// from upstream, and the last process of a chain keeps everything it receives, so the exchange
// always completes.

class NeighbourExchange {
public:
  NeighbourExchange(const redist_ring_plan_s &p, const char *in, Index in_stride, char *out,
                    Index out_stride)
      : in_(in), out_(out), in_stride_(in_stride), out_stride_(out_stride),
        ib_(static_cast<std::size_t>(p.item_bytes)), q_(p.chunk) {
    const auto n = static_cast<std::size_t>(p.size);
    const auto k = static_cast<std::size_t>(p.rank);
    const Index rl = p.flow[(k + n - 1) % n];
    const Index rr = p.flow[k];
    load_ = p.loads[k];
    in_left_ = std::max<Index>(rl, 0);
    in_right_ = std::max<Index>(-rr, 0);
    send_right_ = std::max<Index>(rr, 0);
    send_left_ = std::max<Index>(-rl, 0);
    target_ = load_ - rr + rl;
    fwd_left_ = std::max<Index>(0, send_right_ - load_); // left-incoming items passed right
    fwd_right_ = std::max<Index>(0, send_left_ - load_);
    const int left = (p.rank + p.size - 1) % p.size;
    const int right = (p.rank + 1) % p.size;
    if (in_left_ > 0) ins_.push_back(make_in(left, tag_rightward, in_left_, fwd_left_, true));
    if (in_right_ > 0) ins_.push_back(make_in(right, tag_leftward, in_right_, fwd_right_, false));
    if (send_right_ > 0) outs_.push_back(make_out(right, tag_rightward, send_right_, true));
    if (send_left_ > 0) outs_.push_back(make_out(left, tag_leftward, send_left_, false));
    if (fwd_left_ > 0 || fwd_right_ > 0) {
      stage_cap_ = 2 * q_;
      stage_.resize(static_cast<std::size_t>(stage_cap_) * ib_);
    }
  }

  void run(Flight &flight) {
    f_ = &flight;
    flight.reserve_slots(2 * (ins_.size() + outs_.size()));
    copy_own_kept();
    for (std::size_t s = 0; s < ins_.size(); ++s) {
      for (int slot = 0; slot < 2; ++slot)
        post(s);
    }
    for (;;) {
      for (bool progress = true; progress;) {
        progress = false;
        for (std::size_t s = 0; s < ins_.size(); ++s)
          progress |= unpack_ready(s);
        for (std::size_t s = 0; s < outs_.size(); ++s)
          progress |= send_ready(s);
      }
      if (done()) break;
      const std::size_t r = flight.wait_any();
      const std::size_t nin = 2 * ins_.size();
      if (r < nin) {
        ins_[r / 2].state[r % 2] = State::done;
      } else {
        outs_[(r - nin) / 2].state[(r - nin) % 2] = State::idle;
      }
    }
  }

  [[nodiscard]] Index sent() const { return send_right_ + send_left_; }
  [[nodiscard]] Index received() const { return in_left_ + in_right_; }

private:
  enum class State { idle, busy, done };
  struct InStream {
    int peer = 0;
    int tag = 0;
    Index total = 0;
    Index fwd = 0; // offsets [0, fwd) are forwarded
    bool from_left = true;
    Index chunks = 0;
    Index next_post = 0;
    Index next_unpack = 0;
    std::vector<char> buf[2];
    State state[2] = {State::idle, State::idle};
  };
  struct OutStream {
    int peer = 0;
    int tag = 0;
    Index total = 0;
    Index own = 0; // offsets [0, own) are this process's items
    bool right = true;
    Index chunks = 0;
    Index next = 0;
    std::vector<char> buf[2];
    State state[2] = {State::idle, State::idle};
  };

  [[nodiscard]] InStream make_in(int peer, int tag, Index total, Index fwd, bool from_left) const {
    InStream s;
    s.peer = peer;
    s.tag = tag;
    s.total = total;
    s.fwd = fwd;
    s.from_left = from_left;
    s.chunks = (total + q_ - 1) / q_;
    return s;
  }
  [[nodiscard]] OutStream make_out(int peer, int tag, Index total, bool right) const {
    OutStream s;
    s.peer = peer;
    s.tag = tag;
    s.total = total;
    s.own = std::min(total, load_);
    s.right = right;
    s.chunks = (total + q_ - 1) / q_;
    return s;
  }

  [[nodiscard]] const char *in_item(Index i) const { return in_ + i * in_stride_; }
  [[nodiscard]] char *out_item(Index j) const { return out_ + j * out_stride_; }
  [[nodiscard]] char *stage_item(Index m) {
    return stage_.data() + static_cast<std::size_t>(m % stage_cap_) * ib_;
  }

  void copy_own_kept() {
    const Index lo = std::min(send_left_, load_);
    const Index hi = std::max(lo, load_ - send_right_);
    const Index base = in_left_ - fwd_left_;
    for (Index i = lo; i < hi; ++i)
      std::memcpy(out_item(base + i - lo), in_item(i), ib_);
  }

  void post(std::size_t s) {
    InStream &in = ins_[s];
    if (in.next_post == in.chunks) return;
    const auto slot = static_cast<std::size_t>(in.next_post % 2);
    const Index count = std::min(q_, in.total - in.next_post * q_);
    in.buf[slot].resize(static_cast<std::size_t>(count) * ib_);
    f_->irecv(in.buf[slot].data(), static_cast<int>(in.buf[slot].size()), MPI_BYTE, in.peer, in.tag,
              2 * s + slot);
    in.state[slot] = State::busy;
    ++in.next_post;
  }

  bool unpack_ready(std::size_t s) {
    InStream &in = ins_[s];
    bool progress = false;
    while (in.next_unpack < in.chunks) {
      const auto slot = static_cast<std::size_t>(in.next_unpack % 2);
      if (in.state[slot] != State::done) break;
      const Index o0 = in.next_unpack * q_;
      const Index o1 = std::min(o0 + q_, in.total);
      const Index fe = std::max(o0, std::min(o1, in.fwd));
      if (staged_ - consumed_ + (fe - o0) > stage_cap_) break; // wait for the FIFO to drain
      const char *data = in.buf[slot].data();
      for (Index o = o0; o < o1; ++o, data += ib_) {
        if (o < fe) {
          std::memcpy(stage_item(staged_++), data, ib_);
        } else {
          const Index j = in.from_left ? in_left_ - 1 - o : target_ - in_right_ + o;
          std::memcpy(out_item(j), data, ib_);
        }
      }
      in.state[slot] = State::idle;
      ++in.next_unpack;
      post(s);
      progress = true;
    }
    return progress;
  }

  bool send_ready(std::size_t s) {
    OutStream &out = outs_[s];
    bool progress = false;
    while (out.next < out.chunks) {
      const auto slot = static_cast<std::size_t>(out.next % 2);
      if (out.state[slot] != State::idle) break;
      const Index o0 = out.next * q_;
      const Index o1 = std::min(o0 + q_, out.total);
      if (o1 > out.own && staged_ < o1 - out.own) break; // forwarded items not here yet
      std::vector<char> &buf = out.buf[slot];
      buf.resize(static_cast<std::size_t>(o1 - o0) * ib_);
      char *data = buf.data();
      for (Index o = o0; o < o1; ++o, data += ib_) {
        if (o < out.own) {
          std::memcpy(data, in_item(out.right ? load_ - 1 - o : o), ib_);
        } else {
          std::memcpy(data, stage_item(consumed_++), ib_);
        }
      }
      const std::size_t r = 2 * ins_.size() + 2 * s + slot;
      f_->isend(buf.data(), static_cast<int>(buf.size()), MPI_BYTE, out.peer, out.tag, r);
      out.state[slot] = State::busy;
      ++out.next;
      progress = true;
    }
    return progress;
  }

  [[nodiscard]] bool done() const {
    for (const InStream &in : ins_) {
      if (in.next_unpack < in.chunks) return false;
    }
    for (const OutStream &out : outs_) {
      if (out.next < out.chunks || out.state[0] == State::busy || out.state[1] == State::busy)
        return false;
    }
    return true;
  }

  const char *in_;
  char *out_;
  Index in_stride_;
  Index out_stride_;
  std::size_t ib_;
  Index q_;
  Index load_ = 0;
  Index target_ = 0;
  Index in_left_ = 0;
  Index in_right_ = 0;
  Index send_right_ = 0;
  Index send_left_ = 0;
  Index fwd_left_ = 0;
  Index fwd_right_ = 0;
  std::vector<InStream> ins_;
  std::vector<OutStream> outs_;
  Flight *f_ = nullptr;     // the requests, during run()
  std::vector<char> stage_; // FIFO of forwarded items
  Index stage_cap_ = 1;
  Index staged_ = 0;
  Index consumed_ = 0;
};

// --- Direct transport ---------------------------------------------------------------------------

/// Every piece this process sends or receives goes as messages of at most `chunk` items, read
/// and written in place through strided datatypes.
void run_direct(const redist_ring_plan_s &p, const char *in, Index in_stride, char *out,
                Index out_stride, Flight &flight, const char *call) {
  const std::vector<ring::DirectPiece> pieces = ring::direct_pieces(p.loads, p.flow, p.rank);
  const auto ib = static_cast<int>(p.item_bytes);
  struct TypeGuard {
    MPI_Datatype t = MPI_DATATYPE_NULL;
    ~TypeGuard() {
      if (t != MPI_DATATYPE_NULL) MPI_Type_free(&t);
    }
  };
  const auto strided = [&](Index count, Index stride, TypeGuard &g) {
    check_mpi(MPI_Type_create_hvector(static_cast<int>(count), ib, static_cast<MPI_Aint>(stride),
                                      MPI_BYTE, &g.t),
              call, "MPI_Type_create_hvector");
    check_mpi(MPI_Type_commit(&g.t), call, "MPI_Type_commit");
    return g.t;
  };
  // Receives first, then sends, then the local pieces while messages fly.
  std::size_t messages = 0;
  for (const ring::DirectPiece &pc : pieces) {
    if (pc.from != pc.to) messages += static_cast<std::size_t>((pc.items + p.chunk - 1) / p.chunk);
  }
  flight.reserve_slots(messages);
  std::size_t slot = 0;
  for (const bool receiving : {true, false}) {
    for (const ring::DirectPiece &pc : pieces) {
      if (pc.from == pc.to || (receiving ? pc.to : pc.from) != p.rank) continue;
      for (Index c0 = 0; c0 < pc.items; c0 += p.chunk) {
        const Index count = std::min(p.chunk, pc.items - c0);
        TypeGuard g;
        if (receiving) {
          flight.irecv(out + (pc.to_offset + c0) * out_stride, 1, strided(count, out_stride, g),
                       pc.from, tag_direct, slot++);
        } else {
          flight.isend(in + (pc.from_offset + c0) * in_stride, 1, strided(count, in_stride, g),
                       pc.to, tag_direct, slot++);
        }
      }
    }
  }
  for (const ring::DirectPiece &pc : pieces) {
    if (pc.from != pc.to) continue;
    for (Index i = 0; i < pc.items; ++i)
      std::memcpy(out + (pc.to_offset + i) * out_stride, in + (pc.from_offset + i) * in_stride,
                  static_cast<std::size_t>(p.item_bytes));
  }
  for (std::size_t left = slot; left > 0; --left)
    flight.wait_any();
}

} // namespace

void execute_ring(const redist_ring_plan_s &p, const char *in, Index in_stride, char *out,
                  Index out_stride, const char *call) {
  if (p.info.transport == REDIST_RING_DIRECT) {
    fly(p, call,
        [&](Flight &flight) { run_direct(p, in, in_stride, out, out_stride, flight, call); });
  } else {
    // The exchange (its buffers) outlives the flight.
    NeighbourExchange exchange(p, in, in_stride, out, out_stride);
    fly(p, call, [&](Flight &flight) { exchange.run(flight); });
  }
}

} // namespace redist
