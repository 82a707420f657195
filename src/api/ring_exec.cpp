// The ring rebalancing exchange over MPI: neighbour messages with forwarding in chunks, or
// direct messages. Planning is in ring.cpp (no MPI); the C API of redist_ring.h in
// ring_schedule.cpp and ring_plan.cpp.
//
// A failure follows the executor's protocol (docs/reliability.md, Faults), on its request list
// (requests.hpp): every request of the exchange is posted (a failed post is tried once more)
// and completed whatever fails, a chunk whose receive failed being forwarded as if it had
// arrived, so that no process waits for a message another one skipped. One agreement follows
// the exchange. Where anything failed anywhere, the exchange is made again in direct messages
// on a tag of its own (the input is untouched and the output written whole), and agreed
// again: the call succeeds if that repair did everywhere, and fails on every process if not.

#include "front_end.hpp"
#include "requests.hpp"
#include "ring_internal.hpp"

#include <algorithm>
#include <cstring>
#include <optional>
#include <string>
#include <vector>

namespace redist {
namespace {

constexpr int tag_rightward = 0x52494e; // items travelling from k to k+1
constexpr int tag_leftward = 0x52494f;  // from k to k-1
constexpr int tag_direct = 0x524950;
constexpr int tag_repair = 0x524951; // the direct messages of a repair

enum Kind : std::uint8_t { receive = 0, send = 1 };

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
  /// Allocates every buffer of the exchange.
  NeighbourExchange(const redist_ring_plan_s &p, const RingArrays &arrays, const char *call)
      : arrays_(arrays), call_(call), ib_(static_cast<std::size_t>(p.item_bytes)), q_(p.chunk) {
    const auto n = static_cast<std::size_t>(p.size);
    const auto k = static_cast<std::size_t>(p.rank);
    const Index rl = p.flow[(k + n - 1) % n];
    const Index rr = p.flow[k];
    Counts &c = counts_;
    c.load = p.loads[k];
    c.in_left = std::max<Index>(rl, 0);
    c.in_right = std::max<Index>(-rr, 0);
    c.send_right = std::max<Index>(rr, 0);
    c.send_left = std::max<Index>(-rl, 0);
    c.target = c.load - rr + rl;
    c.fwd_left = std::max<Index>(0, c.send_right - c.load); // left-incoming items passed right
    const Index fwd_right = std::max<Index>(0, c.send_left - c.load);
    const int left = (p.rank + p.size - 1) % p.size;
    const int right = (p.rank + 1) % p.size;
    if (c.in_left > 0)
      ins_.push_back(make_stream(left, tag_rightward, c.in_left, c.fwd_left, true));
    if (c.in_right > 0)
      ins_.push_back(make_stream(right, tag_leftward, c.in_right, fwd_right, false));
    if (c.send_right > 0) outs_.push_back(make_stream(right, tag_rightward, c.send_right, 0, true));
    if (c.send_left > 0) outs_.push_back(make_stream(left, tag_leftward, c.send_left, 0, false));
    for (Stream &out : outs_)
      out.own = std::min(out.total, c.load);
    if (c.fwd_left > 0 || fwd_right > 0) {
      fifo_.cap = 2 * q_;
      fifo_.items.resize(static_cast<std::size_t>(fifo_.cap) * ib_);
    }
  }

  /// The requests run() posts.
  [[nodiscard]] std::size_t requests() const {
    std::size_t n = 0;
    for (const std::vector<Stream> *streams : {&ins_, &outs_})
      for (const Stream &s : *streams)
        n += static_cast<std::size_t>(s.chunks);
    return n;
  }

  void run(Requests &requests) {
    requests_ = &requests;
    copy_own_kept();
    for (std::size_t s = 0; s < ins_.size(); ++s) {
      for (int slot = 0; slot < 2; ++slot)
        post(s);
    }
    std::size_t completed = 0;
    const auto complete = [&](std::size_t k) {
      const RequestInfo &info = requests.info(k);
      Stream &stream = (info.kind == receive ? ins_ : outs_)[static_cast<std::size_t>(info.peer)];
      stream.state[info.lo] = info.kind == receive ? State::done : State::idle;
      ++completed;
    };
    std::size_t first_active = 0;
    for (;;) {
      for (bool progress = true; progress;) {
        progress = false;
        for (std::size_t s = 0; s < ins_.size(); ++s)
          progress |= unpack_ready(s);
        for (std::size_t s = 0; s < outs_.size(); ++s)
          progress |= send_ready(s);
      }
      if (done()) break;
      while (first_active < requests.size() && !requests.active(first_active))
        ++first_active;
      const std::size_t before = completed;
      requests.wait_one(first_active, requests.size(), "MPI_Waitany", complete, complete);
      if (completed == before) { // nothing in flight, nothing to do: cannot happen
        requests.fail(std::string(call_) + ": the ring exchange stalled");
        break;
      }
    }
  }

private:
  enum class State { idle, busy, done };
  struct Stream {
    int peer = 0;
    int tag = 0;
    Index total = 0;
    Index fwd = 0;    // receiving: offsets [0, fwd) are forwarded
    Index own = 0;    // sending: offsets [0, own) are this process's items
    bool left = true; // receiving from the left, or sending to the right
    Index chunks = 0;
    Index next = 0;        // the next chunk to post (receiving) or to send
    Index next_unpack = 0; // receiving
    std::vector<char> buf[2];
    State state[2] = {State::idle, State::idle};
  };

  [[nodiscard]] Stream make_stream(int peer, int tag, Index total, Index fwd, bool left) const {
    Stream s;
    s.peer = peer;
    s.tag = tag;
    s.total = total;
    s.fwd = fwd;
    s.left = left;
    s.chunks = (total + q_ - 1) / q_;
    for (std::vector<char> &buf : s.buf)
      buf.resize(static_cast<std::size_t>(std::min(q_, total)) * ib_);
    return s;
  }

  [[nodiscard]] const char *in_item(Index i) const { return arrays_.in + i * arrays_.in_stride; }
  [[nodiscard]] char *out_item(Index j) const { return arrays_.out + j * arrays_.out_stride; }
  [[nodiscard]] char *stage_item(Index m) {
    return fifo_.items.data() + static_cast<std::size_t>(m % fifo_.cap) * ib_;
  }
  [[nodiscard]] int chunk_bytes(const Stream &s, Index chunk) const {
    return static_cast<int>(std::min(q_, s.total - chunk * q_) * static_cast<Index>(ib_));
  }

  void copy_own_kept() {
    const Counts &c = counts_;
    const Index lo = std::min(c.send_left, c.load);
    const Index hi = std::max(lo, c.load - c.send_right);
    const Index base = c.in_left - c.fwd_left;
    for (Index i = lo; i < hi; ++i)
      std::memcpy(out_item(base + i - lo), in_item(i), ib_);
  }

  /// Posts stream s's next receive; a receive that could not be posted counts as arrived (the
  /// failure is recorded, and the exchange is repaired).
  void post(std::size_t s) {
    Stream &in = ins_[s];
    if (in.next == in.chunks) return;
    const auto slot = static_cast<std::size_t>(in.next % 2);
    const RequestInfo info{nullptr, receive, static_cast<int>(s), in.peer, static_cast<Index>(slot),
                           0,       nullptr};
    const bool posted = requests_->post_one(false, in.buf[slot].data(), chunk_bytes(in, in.next),
                                            MPI_BYTE, in.tag, info);
    in.state[slot] = posted ? State::busy : State::done;
    ++in.next;
  }

  bool unpack_ready(std::size_t s) {
    Stream &in = ins_[s];
    bool progress = false;
    while (in.next_unpack < in.chunks) {
      const auto slot = static_cast<std::size_t>(in.next_unpack % 2);
      if (in.state[slot] != State::done) break;
      const Index o0 = in.next_unpack * q_;
      const Index o1 = std::min(o0 + q_, in.total);
      const Index fe = std::max(o0, std::min(o1, in.fwd));
      if (fifo_.staged - fifo_.consumed + (fe - o0) > fifo_.cap) break; // the FIFO is full
      const char *data = in.buf[slot].data();
      for (Index o = o0; o < o1; ++o, data += ib_) {
        if (o < fe) {
          std::memcpy(stage_item(fifo_.staged++), data, ib_);
        } else {
          const Index j = in.left ? counts_.in_left - 1 - o : counts_.target - counts_.in_right + o;
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
    Stream &out = outs_[s];
    bool progress = false;
    while (out.next < out.chunks) {
      const auto slot = static_cast<std::size_t>(out.next % 2);
      if (out.state[slot] != State::idle) break;
      const Index o0 = out.next * q_;
      const Index o1 = std::min(o0 + q_, out.total);
      if (o1 > out.own && fifo_.staged < o1 - out.own) break; // forwarded items not here yet
      char *data = out.buf[slot].data();
      for (Index o = o0; o < o1; ++o, data += ib_) {
        if (o < out.own) {
          std::memcpy(data, in_item(out.left ? counts_.load - 1 - o : o), ib_);
        } else {
          std::memcpy(data, stage_item(fifo_.consumed++), ib_);
        }
      }
      const RequestInfo info{
          nullptr, send, static_cast<int>(s), out.peer, static_cast<Index>(slot), 0, nullptr};
      const bool posted = requests_->post(true, reinterpret_cast<std::byte *>(out.buf[slot].data()),
                                          chunk_bytes(out, out.next), out.tag, info, true);
      out.state[slot] = posted ? State::busy : State::idle;
      ++out.next;
      progress = true;
    }
    return progress;
  }

  [[nodiscard]] bool done() const {
    for (const Stream &in : ins_) {
      if (in.next_unpack < in.chunks) return false;
    }
    for (const Stream &out : outs_) {
      if (out.next < out.chunks || out.state[0] == State::busy || out.state[1] == State::busy)
        return false;
    }
    return true;
  }

  /// This process's items: held, kept, sent and received over each link, forwarded.
  struct Counts {
    Index load = 0;
    Index target = 0;
    Index in_left = 0;
    Index in_right = 0;
    Index send_right = 0;
    Index send_left = 0;
    Index fwd_left = 0; // left-incoming items passed right
  };
  /// The forwarded items between their arrival and their sending.
  struct Fifo {
    std::vector<char> items;
    Index cap = 1;
    Index staged = 0;
    Index consumed = 0;
  };

  RingArrays arrays_;
  const char *call_;
  std::size_t ib_;
  Index q_;
  Counts counts_;
  std::vector<Stream> ins_;
  std::vector<Stream> outs_;
  Requests *requests_ = nullptr; // during run()
  Fifo fifo_;
};

// --- Direct transport ---------------------------------------------------------------------------

/// Every piece this process sends or receives goes as messages of at most `chunk` items, read
/// and written in place (through a strided datatype where the items are not contiguous).
class DirectExchange {
public:
  /// Makes every datatype of the exchange (Error where MPI fails, std::bad_alloc).
  DirectExchange(const redist_ring_plan_s &p, const RingArrays &arrays, int tag, const char *call)
      : p_(p), arrays_(arrays), ib_(static_cast<std::size_t>(p.item_bytes)), tag_(tag) {
    for (const ring::DirectPiece &pc : p_.direct) {
      if (pc.from == pc.to) continue;
      const bool receive = pc.to == p_.rank;
      const Index stride = receive ? arrays_.out_stride : arrays_.in_stride;
      for (Index c0 = 0; c0 < pc.items; c0 += p_.chunk) {
        Message m;
        m.receive = receive;
        m.peer = receive ? pc.from : pc.to;
        m.items_at = receive ? arrays_.out + (pc.to_offset + c0) * stride
                             : const_cast<char *>(arrays_.in) + (pc.from_offset + c0) * stride;
        const Index items = std::min(p_.chunk, pc.items - c0);
        if (stride == p_.item_bytes) {
          m.count = static_cast<int>(items * p_.item_bytes);
        } else {
          types_.push_back(MPI_DATATYPE_NULL);
          check_mpi(MPI_Type_create_hvector(static_cast<int>(items), static_cast<int>(ib_),
                                            static_cast<MPI_Aint>(stride), MPI_BYTE,
                                            &types_.back()),
                    call, "MPI_Type_create_hvector");
          check_mpi(MPI_Type_commit(&types_.back()), call, "MPI_Type_commit");
          m.count = 1;
          m.type = types_.back();
        }
        messages_.push_back(m);
      }
    }
  }
  DirectExchange(const DirectExchange &) = delete;
  DirectExchange &operator=(const DirectExchange &) = delete;
  ~DirectExchange() {
    for (MPI_Datatype &type : types_)
      if (type != MPI_DATATYPE_NULL) MPI_Type_free(&type);
  }

  [[nodiscard]] std::size_t requests() const { return messages_.size(); }

  void run(Requests &requests) {
    // Receives first, then sends, then the local pieces while messages fly.
    for (const bool receiving : {true, false}) {
      for (std::size_t i = 0; i < messages_.size(); ++i) {
        const Message &m = messages_[i];
        if (m.receive != receiving) continue;
        const RequestInfo info{
            nullptr, m.receive ? receive : send, static_cast<int>(i), m.peer, 0, 0, nullptr};
        requests.post_one(!m.receive, m.items_at, m.count, m.type, tag_, info);
      }
    }
    for (const ring::DirectPiece &pc : p_.direct) {
      if (pc.from != pc.to) continue;
      for (Index i = 0; i < pc.items; ++i)
        std::memcpy(arrays_.out + (pc.to_offset + i) * arrays_.out_stride,
                    arrays_.in + (pc.from_offset + i) * arrays_.in_stride, ib_);
    }
    const auto nothing = [](std::size_t) {};
    requests.wait_each(0, requests.size(), "MPI_Waitany", nothing, nothing);
  }

private:
  struct Message {
    bool receive = false;
    int peer = 0;
    char *items_at = nullptr; // the first item in the caller's array
    int count = 0;
    MPI_Datatype type = MPI_BYTE;
  };

  const redist_ring_plan_s &p_;
  RingArrays arrays_;
  std::size_t ib_;
  int tag_;
  std::vector<Message> messages_;
  std::vector<MPI_Datatype> types_; // made here, freed by the destructor
};

} // namespace

struct RingExchange::Parts {
  Parts(const redist_ring_plan_s &plan, const RingArrays &a, const char *c)
      : p(plan), arrays(a), call(c) {
    if (p.info.transport == REDIST_RING_DIRECT) {
      direct.emplace(p, arrays, tag_direct, call);
    } else {
      neighbour.emplace(p, arrays, call);
    }
    requests.emplace(p.comm, direct ? direct->requests() : neighbour->requests(), call);
  }
  const redist_ring_plan_s &p;
  RingArrays arrays;
  const char *call;
  std::optional<NeighbourExchange> neighbour; // one of the two
  std::optional<DirectExchange> direct;
  std::optional<Requests> requests;
};

RingExchange::RingExchange(const redist_ring_plan_s &p, const RingArrays &arrays, const char *call)
    : parts_(std::make_unique<Parts>(p, arrays, call)) {}

RingExchange::~RingExchange() = default;

namespace {

/// The agreement of a ring execution: `word` := its maximum over the processes. Where this
/// process's part failed (the one failure), every other word is 0 and `word` stays this
/// process's own; `lost` says so.
void agree_word(MPI_Comm comm, long long &word, bool &lost) {
  if (collective::max_of_flags(comm, std::span<long long>(&word, 1)) != collective::Flags::agreed)
    lost = true;
}

} // namespace

void RingExchange::run() {
  Parts &x = *parts_;
  const redist_ring_plan_s &p = x.p;
  const long long failed_here = front_end::error_word(2, front_end::lowest_first(p.rank, p.size));
  if (x.direct) {
    x.direct->run(*x.requests);
  } else {
    x.neighbour->run(*x.requests);
  }
  std::string failure = x.requests->failure();
  redist_status status = REDIST_ERR_MPI; // of `failure`
  long long word = failure.empty() ? 0 : failed_here;
  bool lost = false;
  agree_word(p.comm, word, lost);
  if (word != 0) {
    // The repair: every message again, direct; its datatypes and requests agreed first.
    std::optional<DirectExchange> repair;
    std::optional<Requests> requests;
    long long ready = 0;
    try {
      repair.emplace(p, x.arrays, tag_repair, x.call);
      requests.emplace(p.comm, repair->requests(), x.call);
    } catch (const Error &e) {
      ready = failed_here;
      if (failure.empty()) failure = e.what();
    } catch (const std::bad_alloc &) {
      ready = failed_here;
      if (failure.empty()) {
        status = REDIST_ERR_NO_MEMORY;
        failure = std::string(x.call) + ": out of memory for the repair of a failed exchange";
      }
    }
    agree_word(p.comm, ready, lost);
    word = ready;
    if (ready == 0) {
      repair->run(*requests);
      if (failure.empty()) failure = requests->failure();
      word = requests->failure().empty() ? 0 : failed_here;
      agree_word(p.comm, word, lost);
    }
  }
  if (word == 0 && !lost) return;
  if (!failure.empty()) throw Error(status, failure);
  if (word == 0) {
    throw Error(REDIST_ERR_MPI, std::string(x.call) +
                                    ": an agreement after the exchange failed here (the output "
                                    "was written as if nothing failed elsewhere)");
  }
  throw Error(REDIST_ERR_REMOTE,
              std::string(x.call) + ": the exchange failed on rank " +
                  std::to_string(front_end::lowest_first(front_end::error_order(word), p.size)) +
                  " (see its message); the output is incomplete");
}

} // namespace redist
