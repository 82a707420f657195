// Each transport of the executor (src/exec/transport/) driven alone between the ranks, with no
// Executor: the rank plans are made with the pure layers as tests/mpi/test_executor.cpp makes
// them; one transport of one way (Sent, or a SingleCopyTransport of way direct, bounced,
// read_packed or mapped, with its MessageRead) posts every message through a Requests, in
// rounds of chunks [lo, hi) or whole; the test waits and hands each completed request to the
// transport as the executor does. The local-copy way (Pieces::copy_local) runs alone too.
//
// The identities, addresses and mappings the negotiation would exchange are wired here: every
// rank's single_copy::identify() is allgathered; the mapped way's receivers map their senders'
// memory file (the SharedBuffer the senders pack into); the array-copy cases copy from source
// arrays made with redist_alloc (include/redist.h), which direct and bounced reads copy from in
// user space (ArrayCopy), and the test checks that they did.
//
// Every element of B's local buffer (padding rows and guard elements included) is compared with
// the harness's oracle restricted to what that way moves: the elements whose source element
// another rank holds (a transport) or this rank holds (the local copy); every other element
// keeps its sentinel. Who holds a source element is block-cyclic arithmetic written here.
//
// Where process_vm_readv (or mapping another rank's memory file, or redist_alloc) is not
// permitted between the ranks, the single-copy tests are skipped with the reason, never passed.
// Two tests make a single-copy read fail (the sender's address on a page it cannot read; a
// message reaching past the sender's shared array) and check that both sides mark the message
// for the executor's repair (Requests::kReadFailed) and B keeps its sentinels.

#include "harness.hpp"

#include "api_internal.hpp"
#include "array_copy.hpp"
#include "array_read.hpp"
#include "mapped_read.hpp"
#include "message_read.hpp"
#include "packed_read.hpp"
#include "pieces.hpp"
#include "plan.hpp"
#include "requests.hpp"
#include "sent.hpp"
#include "single_copy.hpp"
#include "single_copy_transport.hpp"
#include "transport.hpp"

#include <gtest/gtest.h>
#include <mpi.h>
#include <redist.h>
#include <sys/mman.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <climits>
#include <complex>
#include <cstdint>
#include <cstring>
#include <fstream>
#include <memory>
#include <numeric>
#include <string>
#include <vector>

namespace mpitest {
namespace {

using redist::Index;
using redist::Pieces;
using redist::RankPlan;
using redist::Requests;
using redist::Transport;
namespace single_copy = redist::single_copy;

constexpr int kTag = 7411;

/// The ways tested, each alone.
enum class Way {
  sent,
  direct,
  bounced,
  read_packed,
  mapped,
  array_direct,  ///< direct from a redist_alloc source array: copied from its mapping
  array_bounced, ///< bounced from a redist_alloc source array: copied from its mapping
  array_mapped,  ///< mapped from a redist_alloc source array: not packed, copied from its mapping
  local,         ///< Pieces::copy_local, no transport
};

const char *way_name(Way way) {
  switch (way) {
  case Way::sent:
    return "sent";
  case Way::direct:
    return "direct";
  case Way::bounced:
    return "bounced";
  case Way::read_packed:
    return "read_packed";
  case Way::mapped:
    return "mapped";
  case Way::array_direct:
    return "array_direct";
  case Way::array_bounced:
    return "array_bounced";
  case Way::array_mapped:
    return "array_mapped";
  case Way::local:
    return "local";
  }
  return "?";
}

bool single_copy_way(Way way) {
  return way != Way::sent && way != Way::local;
}
bool from_shared_array(Way way) {
  return way == Way::array_direct || way == Way::array_bounced || way == Way::array_mapped;
}

std::string ptrace_scope() {
  std::ifstream in("/proc/sys/kernel/yama/ptrace_scope");
  std::string value;
  return in >> value ? value : "unknown";
}

/// What the ranks of the world may do to each other's memory: read it (process_vm_readv), map
/// their memory files, map their redist_alloc arrays. Computed once, the same on every rank.
struct Abilities {
  MPI_Comm comm = MPI_COMM_NULL;
  std::string cannot_read;      ///< "" when every rank can read every other, else why not
  std::string cannot_map;       ///< ... map every other's send buffer
  std::string cannot_map_array; ///< ... map every other's redist_alloc array

  Abilities() {
    MPI_Comm_dup(MPI_COMM_WORLD, &comm);
    MPI_Comm_set_errhandler(comm, MPI_ERRORS_RETURN);
    int rank = 0;
    int size = 0;
    MPI_Comm_rank(comm, &rank);
    MPI_Comm_size(comm, &size);
    std::uint64_t probe = 0;
    const single_copy::SharedBuffer buffer(4096, true);
    void *array = nullptr;
    const int alloc_status = redist_alloc(4096, &array);
    const single_copy::Identity mine = single_copy::identify(probe, 1, buffer, array);
    std::vector<single_copy::Identity> all(static_cast<std::size_t>(size));
    MPI_Allgather(&mine, sizeof mine, MPI_BYTE, all.data(), sizeof mine, MPI_BYTE, comm);
    // Per (reader, sender): bit 0 read, bit 1 map the buffer, bit 2 map the array.
    std::vector<int> row(static_cast<std::size_t>(size), 7);
    for (int sender = 0; sender < size; ++sender) {
      if (sender == rank) continue;
      const single_copy::Identity &id = all[static_cast<std::size_t>(sender)];
      single_copy::Mapping buffer_map;
      single_copy::Mapping array_map;
      row[static_cast<std::size_t>(sender)] = (single_copy::can_read(id) ? 1 : 0) |
                                              (buffer_map.map(id.pid, id.buffer) ? 2 : 0) |
                                              (array_map.map(id.pid, id.array) ? 4 : 0);
    }
    std::vector<int> table(static_cast<std::size_t>(size) * static_cast<std::size_t>(size));
    MPI_Allgather(row.data(), size, MPI_INT, table.data(), size, MPI_INT, comm);
    const auto first_without = [&](int bit, const std::string &what) -> std::string {
      for (int reader = 0; reader < size; ++reader) {
        for (int sender = 0; sender < size; ++sender) {
          if ((table[(static_cast<std::size_t>(reader) * static_cast<std::size_t>(size)) +
                     static_cast<std::size_t>(sender)] &
               bit) == 0) {
            return "rank " + std::to_string(reader) + " cannot " + what + " rank " +
                   std::to_string(sender) + "'s memory (Yama ptrace_scope " + ptrace_scope() +
                   ", seccomp or other users)";
          }
        }
      }
      return "";
    };
    cannot_read = first_without(1, "read (single_copy::can_read, process_vm_readv)");
    cannot_map = first_without(2, "map the send buffer in");
    cannot_map_array = first_without(4, "map the redist_alloc array in");
    if (on_any_rank(alloc_status != REDIST_SUCCESS) != 0) {
      cannot_map_array = "redist_alloc gives no memory file";
    }
    MPI_Barrier(comm); // the others have probed and mapped: the probe and memory may go
    if (array != nullptr) redist_free(array);
  }
};

Abilities &abilities() {
  static Abilities a;
  return a;
}

/// Why `way` cannot run here, "" if it can.
std::string why_not(Way way) {
  const Abilities &a = abilities();
  if (!single_copy_way(way)) return "";
  if (!a.cannot_read.empty()) return a.cannot_read;
  if (way == Way::mapped || way == Way::array_mapped) {
    if (!a.cannot_map.empty()) return a.cannot_map;
  }
  if (from_shared_array(way)) return a.cannot_map_array;
  return "";
}

struct TransportCase {
  int index = 0;
  int element_size = 8; ///< 4: float, 8: double, 16: complex<double>
  Region region = Region::Full;
  bool unit_diag = false;
  std::int64_t m = 0, n = 0;
  MatSpec a, b;
  Index chunk = 0;                   ///< elements per round of a message; 0: whole messages
  std::size_t max_message_bytes = 0; ///< 0: the default limit

  [[nodiscard]] CopySpec copy() const { return {region, unit_diag, m, n}; }
  [[nodiscard]] std::string describe() const {
    return "transport case " + std::to_string(index) + ": element size " +
           std::to_string(element_size) + " region " +
           (region == Region::Full    ? "FULL"
            : region == Region::Upper ? "UPPER"
                                      : "LOWER") +
           " unit_diag " + std::to_string(unit_diag) + " m=" + std::to_string(m) +
           " n=" + std::to_string(n) + " chunk " + std::to_string(chunk) + " max message bytes " +
           std::to_string(max_message_bytes) + "\n    a: " + a.describe() +
           "\n    b: " + b.describe() + "\n";
  }
};

std::int64_t draw_block(Rng &rng, std::int64_t extent) {
  const std::int64_t r = rng.uniform(0, 99);
  if (r < 30) return rng.uniform(1, 4);
  if (r < 60) return rng.uniform(5, 40);
  if (r < 85) return rng.uniform(41, 300);
  return std::max<std::int64_t>(extent, 1) + rng.uniform(0, 5);
}

TransportCase draw_case(Rng &rng, int np, int index) {
  TransportCase c;
  c.index = index;
  c.element_size = static_cast<int>(rng.pick(std::vector<std::int64_t>{4, 8, 16}));
  const std::int64_t r = rng.uniform(0, 2);
  c.region = r == 0 ? Region::Full : r == 1 ? Region::Upper : Region::Lower;
  c.unit_diag = rng.coin(0.5);
  if (rng.coin(0.5)) {
    random_window(rng, c.m, c.n);
  } else {
    c.m = rng.uniform(1, 200);
    c.n = rng.uniform(1, 200);
  }
  std::vector<int> pool(static_cast<std::size_t>(np));
  std::iota(pool.begin(), pool.end(), 0);
  GridSpec ga = random_grid(rng, pool, static_cast<int>(rng.uniform(1, np)), true);
  GridSpec gb =
      rng.coin(0.2) ? ga : random_grid(rng, pool, static_cast<int>(rng.uniform(1, np)), true);
  for (auto [spec, grid] : {std::pair{&c.a, &ga}, std::pair{&c.b, &gb}}) {
    *spec = random_matrix(rng, std::move(*grid), c.m, c.n);
    spec->mb = draw_block(rng, spec->mg);
    spec->nb = rng.coin(0.3) ? spec->mb : draw_block(rng, spec->ng);
  }
  if (rng.coin(0.4)) c.chunk = std::max<Index>(1, c.m * c.n / rng.uniform(2, 20));
  if (rng.coin(0.15)) c.max_message_bytes = static_cast<std::size_t>(rng.uniform(1, 600));
  return c;
}

redist::Layout layout_of(const MatSpec &s) {
  return redist::to_layout(c_layout(s, s.grid.ranks.data(), 1));
}

/// The rank of `s`'s grid holding global element (gi, gj).
int owner(const MatSpec &s, std::int64_t gi, std::int64_t gj) {
  const auto pr = static_cast<int>((gi / s.mb + s.rsrc) % s.grid.nprow);
  const auto pc = static_cast<int>((gj / s.nb + s.csrc) % s.grid.npcol);
  return s.grid.ranks[static_cast<std::size_t>(pr) +
                      (static_cast<std::size_t>(pc) * static_cast<std::size_t>(s.grid.nprow))];
}

/// The oracle's code at B position p when only the elements whose source element `rank`
/// holds (`local`) or another rank holds (!local) are moved.
std::int64_t expected(const TransportCase &c, const LocalBuf &lb, std::int64_t p, int a_salt,
                      int b_salt, int rank, bool local) {
  const std::int64_t code = expected_code(c.copy(), c.a, c.b, lb, p, a_salt, b_salt);
  if (code <= 0) return code; // a sentinel: not copied
  const std::int64_t global = code - 1 - a_salt * CodeSaltStride;
  const bool held_here = owner(c.a, global % c.a.mg, global / c.a.mg) == rank;
  return held_here == local ? code : sentinel_code(p, b_salt);
}

template <class T>
std::string check(const TransportCase &c, const LocalBuf &lb, const std::vector<T> &b, int a_salt,
                  int b_salt, int rank, bool local, std::int64_t &moved) {
  std::string report;
  std::int64_t bad = 0;
  for (std::int64_t p = 0; p < lb.elems; ++p) {
    const std::int64_t code = expected(c, lb, p, a_salt, b_salt, rank, local);
    moved += code > 0 ? 1 : 0;
    const T want = Elem<T>::make(code);
    const T &got = b[static_cast<std::size_t>(p)];
    // NOLINTNEXTLINE(bugprone-suspicious-memory-comparison): bit for bit, as the harness does
    if (std::memcmp(&want, &got, sizeof(T)) != 0) {
      if (bad < 4) {
        report += "    B position " + std::to_string(p) + " (local (" + std::to_string(p % lb.lld) +
                  "," + std::to_string(p / lb.lld) + ")): expected " + describe_code(code, c.a) +
                  ", got " + describe_code(code_of(got), c.a) + "\n";
      }
      ++bad;
    }
  }
  if (bad == 0) return "";
  return "  " + std::to_string(bad) + " elements of B differ from the oracle, e.g.\n" + report;
}

/// Frees redist_alloc memory.
struct RedistFree {
  void operator()(void *memory) const { redist_free(memory); }
};

/// Wait for requests [first, end) and hand each completed one to its transport, as the
/// executor does (OnePhase::complete).
void complete(Requests &requests, std::size_t first, std::size_t end, std::byte *b,
              const char *what) {
  requests.wait_each(
      first, end, what,
      [&](std::size_t k) {
        const redist::RequestInfo info = requests.info(k); // the transport may post
        if (info.transport != nullptr) info.transport->complete(requests, info, b);
      },
      [&](std::size_t k) {
        const redist::RequestInfo info = requests.info(k);
        if (info.transport != nullptr) info.transport->failed(requests, info);
      });
}

/// One way's part of a transfer on this rank: the plan's pieces, the buffers, the readers
/// and the transport, wired as the executor and its negotiation wire them.
class Rig {
public:
  Rig(const TransportCase &c, Way way, RankPlan plan, Index lld_src, Index lld_dst,
      std::size_t element_size)
      : way_(way), pieces_(std::move(plan), element_size, lld_src, lld_dst),
        requests_(abilities().comm,
                  2 * (pieces_.plan().sends.size() + pieces_.plan().recvs.size()) + 4),
        arrays_(pieces_),
        array_read_(pieces_, scratch_, arrays_, way == Way::bounced || way == Way::array_bounced),
        packed_read_(pieces_, scratch_), mapped_read_(pieces_, arrays_),
        senders_(pieces_.plan().recvs.size()),
        // As the negotiation answers for messages whose pieces the receiver finds in the
        // sender's array: `mapped` from ordinary memory still packs.
        from_array_(pieces_.plan().sends.size(), mapped(way) ? 1 : 0), chunk_(c.chunk) {
    const RankPlan &p = pieces_.plan();
    requests_.set_messages(p.sends.size(), p.recvs.size());
    const std::size_t es = element_size;
    for (const redist::Peer &peer : p.sends) {
      send_offsets_.push_back(send_bytes_);
      send_bytes_ += static_cast<std::size_t>(peer.elements) * es;
    }
    for (const redist::Peer &peer : p.recvs) {
      recv_offsets_.push_back(recv_bytes_);
      recv_bytes_ += static_cast<std::size_t>(peer.elements) * es;
    }
    send_plain_.resize(send_bytes_);
    recv_buffer_.resize(recv_bytes_);
    segment_ = single_copy::SharedBuffer(send_bytes_, mapped(way));
    scratch_.bounce = std::make_unique<std::byte[]>(single_copy::kBounceBytes);
    switch (way) {
    case Way::sent:
      transport_ = std::make_unique<redist::Sent>(pieces_, kTag);
      break;
    case Way::direct:
    case Way::array_direct:
      transport_ = make(single_copy::Way::direct, array_read_);
      break;
    case Way::bounced:
    case Way::array_bounced:
      transport_ = make(single_copy::Way::bounced, array_read_);
      break;
    case Way::read_packed:
      transport_ = make(single_copy::Way::read_packed, packed_read_);
      break;
    case Way::mapped:
    case Way::array_mapped:
      transport_ = make(single_copy::Way::mapped, mapped_read_);
      break;
    case Way::local:
      break;
    }
  }

  [[nodiscard]] const RankPlan &plan() const { return pieces_.plan(); }
  Requests &requests() { return requests_; }
  redist::ArrayCopy &arrays() { return arrays_; }

  /// The negotiation's exchange, collective: every rank's identity (source array `a`, its
  /// leading dimension, the memory file it packs into), and the mapped way's mappings.
  /// "" or what failed here.
  std::string exchange_identities(const std::byte *a, Index lld_src) {
    const single_copy::Identity mine = single_copy::identify(probe_, lld_src, segment_, a);
    int size = 0;
    MPI_Comm_size(abilities().comm, &size);
    std::vector<single_copy::Identity> all(static_cast<std::size_t>(size));
    MPI_Allgather(&mine, sizeof mine, MPI_BYTE, all.data(), sizeof mine, MPI_BYTE,
                  abilities().comm);
    std::string fail;
    for (std::size_t i = 0; i < plan().recvs.size(); ++i) {
      senders_[i] = all[static_cast<std::size_t>(plan().recvs[i].rank)];
      if (single_copy_way(way_) && !single_copy::can_read(senders_[i])) {
        fail += "  cannot read rank " + std::to_string(plan().recvs[i].rank) + "\n";
      }
      if (mapped(way_) && !mapped_read_.map(i, senders_[i].pid, senders_[i].buffer)) {
        fail += "  cannot map rank " + std::to_string(plan().recvs[i].rank) + "'s buffer\n";
      }
    }
    MPI_Barrier(abilities().comm); // mapped and probed: the senders may close their files
    segment_.release_fd();
    return fail;
  }

  /// Move this rank's part of the transfer from a to b with the way alone, in rounds of chunks.
  void move(const std::byte *a, std::byte *b) {
    requests_.forget_failure();
    arrays_.forget_copies();
    if (way_ == Way::local) {
      pieces_.copy_local(a, b);
      return;
    }
    const RankPlan &p = plan();
    const std::size_t es = pieces_.element_size();
    Index longest = 0;
    for (const redist::Peer &peer : p.sends)
      longest = std::max(longest, peer.elements);
    for (const redist::Peer &peer : p.recvs)
      longest = std::max(longest, peer.elements);
    const Index chunk = chunk_ > 0 ? chunk_ : std::max<Index>(longest, 1);
    std::byte *send_base = nullptr; // none: the sender's array is read, no buffer
    if (transport_->send_buffer() == Transport::SendBuffer::plain) send_base = send_plain_.data();
    if (transport_->send_buffer() == Transport::SendBuffer::shared) send_base = segment_.data();
    for (Index begin = 0; begin < longest; begin += chunk) {
      requests_.clear();
      for (std::size_t i = 0; i < p.recvs.size(); ++i) {
        if (begin >= p.recvs[i].elements) continue;
        const Index hi = std::min(p.recvs[i].elements, begin + chunk);
        transport_->post_receive(requests_, i, begin, hi,
                                 recv_buffer_.data() + recv_offsets_[i] +
                                     static_cast<std::size_t>(begin) * es);
      }
      const std::size_t receives = requests_.size();
      for (std::size_t i = 0; i < p.sends.size(); ++i) {
        if (begin >= p.sends[i].elements) continue;
        const Index hi = std::min(p.sends[i].elements, begin + chunk);
        std::byte *buffer = send_base == nullptr ? nullptr
                                                 : send_base + send_offsets_[i] +
                                                       static_cast<std::size_t>(begin) * es;
        transport_->post_send(requests_, i, begin, hi, a, buffer, false);
      }
      complete(requests_, 0, receives, b, "MPI_Waitany (receive)");
      complete(requests_, receives, requests_.size(), b, "MPI_Waitany (send)");
    }
  }

private:
  std::unique_ptr<Transport> make(single_copy::Way way, redist::MessageRead &read) {
    return std::make_unique<redist::SingleCopyTransport>(pieces_, kTag, way, read, senders_,
                                                         from_array_);
  }
  static bool mapped(Way way) { return way == Way::mapped || way == Way::array_mapped; }

  Way way_;
  Pieces pieces_;
  Requests requests_;
  redist::ReadScratch scratch_;
  redist::ArrayCopy arrays_;
  redist::ArrayRead array_read_;
  redist::PackedRead packed_read_;
  redist::MappedRead mapped_read_;
  std::vector<single_copy::Identity> senders_;
  std::vector<char> from_array_;
  std::uint64_t probe_ = 0;
  Index chunk_;
  std::vector<std::size_t> send_offsets_;
  std::vector<std::size_t> recv_offsets_;
  std::size_t send_bytes_ = 0;
  std::size_t recv_bytes_ = 0;
  std::vector<std::byte> send_plain_;
  std::vector<std::byte> recv_buffer_;
  single_copy::SharedBuffer segment_;
  std::unique_ptr<Transport> transport_;
};

/// The message limit of a case, restored afterwards.
class MessageLimit {
public:
  explicit MessageLimit(std::size_t bytes) {
    if (bytes > 0) Requests::set_max_message_bytes(bytes);
  }
  MessageLimit(const MessageLimit &) = delete;
  MessageLimit &operator=(const MessageLimit &) = delete;
  ~MessageLimit() { Requests::set_max_message_bytes(static_cast<std::size_t>(INT_MAX) / 64 * 64); }
};

redist::Transfer transfer_of(const TransportCase &c) {
  redist::Transfer t;
  t.src = layout_of(c.a);
  t.dst = layout_of(c.b);
  t.m = c.m;
  t.n = c.n;
  t.region.kind = c.region == Region::Upper   ? redist::Region::Kind::upper
                  : c.region == Region::Lower ? redist::Region::Kind::lower
                                              : redist::Region::Kind::full;
  t.region.unit_diag = c.unit_diag;
  return t;
}

struct Tally {
  long long messages = 0; ///< receives moved by the way (summed over executions)
  long long elements = 0; ///< elements of B the way had to write
};

/// Plan `c`, move it twice with `way` alone (two source arrays at two addresses, two fresh
/// B arrays) and check B. Collective over abilities().comm.
template <class T> std::string run_case(const TransportCase &c, Way way, Tally &tally) {
  MPI_Comm comm = abilities().comm;
  int rank = 0;
  int size = 0;
  MPI_Comm_rank(comm, &rank);
  MPI_Comm_size(comm, &size);
  const LocalBuf la = local_buf(c.a, rank);
  const LocalBuf lb = local_buf(c.b, rank);
  // The message limit splits MPI messages in pieces; only `sent` handles a message in pieces.
  // The single-copy control messages (an address, 40 bytes; a reply, 8) must arrive whole:
  // SingleCopyTransport::complete() acts on each request, so under a limit below their size
  // a receiver reads from half an address and replies once per piece, and the extra replies
  // release later senders early. The executor's limit (~2 GiB) never splits them.
  const MessageLimit limit(way == Way::sent ? c.max_message_bytes : 0);
  Rig rig(c, way, redist::make_rank_plan(transfer_of(c), rank, size), la.lld, lb.lld, sizeof(T));

  constexpr int kExecutions = 2;
  std::vector<std::vector<T>> a(kExecutions);
  std::vector<std::unique_ptr<void, RedistFree>> shared(kExecutions);
  std::vector<T *> sources(kExecutions);
  std::string fail;
  for (int e = 0; e < kExecutions; ++e) {
    const auto ue = static_cast<std::size_t>(e);
    fill_a(c.a, la, 1 + e, a[ue]);
    sources[ue] = a[ue].data();
    if (from_shared_array(way)) {
      void *memory = nullptr;
      if (redist_alloc(a[ue].size() * sizeof(T), &memory) != REDIST_SUCCESS) {
        fail += "  redist_alloc failed\n";
      } else {
        shared[ue].reset(memory);
        sources[ue] = static_cast<T *>(memory);
        std::memcpy(memory, a[ue].data(), a[ue].size() * sizeof(T));
      }
    }
  }
  fail += rig.exchange_identities(reinterpret_cast<const std::byte *>(sources[0]), la.lld);
  if (on_any_rank(!fail.empty()) != 0) return fail.empty() ? "" : fail;

  for (int e = 0; e < kExecutions; ++e) {
    const auto ue = static_cast<std::size_t>(e);
    std::vector<T> b;
    fill_sentinel(lb, 4 + e, b);
    rig.move(reinterpret_cast<const std::byte *>(sources[ue]),
             reinterpret_cast<std::byte *>(b.data()));
    const std::string what =
        "  " + std::string(way_name(way)) + ", execution " + std::to_string(e + 1) + ":\n";
    if (!rig.requests().failure().empty()) {
      fail += what + "  recorded a failure: " + rig.requests().failure() + "\n";
    }
    if (std::memcmp(sources[ue], a[ue].data(), a[ue].size() * sizeof(T)) != 0) {
      fail += what + "  the source array was modified\n";
    }
    const std::size_t copies = rig.arrays().copies();
    const std::size_t expected_copies = from_shared_array(way) ? rig.plan().recvs.size() : 0;
    if (copies != expected_copies) {
      fail += what + "  " + std::to_string(copies) +
              " receives copied from a mapped shared array, expected " +
              std::to_string(expected_copies) + "\n";
    }
    std::int64_t moved = 0;
    const std::string wrong = check(c, lb, b, 1 + e, 4 + e, rank, way == Way::local, moved);
    if (!wrong.empty()) fail += what + wrong;
    tally.elements += moved;
    tally.messages += static_cast<long long>(way == Way::local ? (rig.plan().self.elements > 0)
                                                               : rig.plan().recvs.size());
  }
  return fail;
}

std::string run_typed(const TransportCase &c, Way way, Tally &tally) {
  switch (c.element_size) {
  case 4:
    return run_case<float>(c, way, tally);
  case 16:
    return run_case<std::complex<double>>(c, way, tally);
  default:
    return run_case<double>(c, way, tally);
  }
}

int run_everywhere(const TransportCase &c, Way way, const std::string &origin, Tally &tally) {
  watchdog_arm(origin + ", " + way_name(way) + ", " + c.describe());
  const std::string fail = run_typed(c, way, tally);
  watchdog_disarm();
  if (!fail.empty())
    ADD_FAILURE() << origin << ", way " << way_name(way) << ", " << c.describe() << fail;
  return on_any_rank(!fail.empty());
}

long long total(long long value) {
  long long sum = 0;
  MPI_Allreduce(&value, &sum, 1, MPI_LONG_LONG, MPI_SUM, MPI_COMM_WORLD);
  return sum;
}

/// A case on ranks 0 (source) and 1 (destination), both 1 x 1 grids, padded leading
/// dimensions; the other ranks are idle.
TransportCase pair_case(int index, std::int64_t m, std::int64_t n, int element_size) {
  TransportCase c;
  c.index = index;
  c.element_size = element_size;
  c.m = m;
  c.n = n;
  for (MatSpec *s : {&c.a, &c.b}) {
    s->grid = GridSpec{GridKind::Map, 1, 1, {0}};
    s->mg = m;
    s->ng = n;
    s->mb = m;
    s->nb = n;
    s->lld_extra = {3};
  }
  c.b.grid.ranks = {1};
  c.b.lld_extra = {1};
  return c;
}

std::vector<TransportCase> hand_picked() {
  std::vector<TransportCase> cases;
  const auto add = [&](TransportCase c) {
    c.index = static_cast<int>(cases.size());
    cases.push_back(std::move(c));
  };
  // One long message (1.9 MB, > 7 bounce buffers), columns apart on both sides: full and a
  // trapezoid, whole and in chunks.
  for (const Region region : {Region::Full, Region::Upper}) {
    for (const Index chunk : {Index{0}, Index{50000}}) {
      TransportCase c = pair_case(0, 400, 300, 16);
      c.region = region;
      c.chunk = chunk;
      add(c);
    }
  }
  // Single elements apart on both sides: rows CYCLIC(1) over (0, 1) to CYCLIC(2) over (1, 0):
  // 64 x 40 = 2560 pieces per message, more than one process_vm_readv takes.
  for (const int element_size : {4, 8, 16}) {
    TransportCase c = pair_case(0, 256, 40, element_size);
    c.a.grid = GridSpec{GridKind::Map, 2, 1, {0, 1}};
    c.b.grid = GridSpec{GridKind::Map, 2, 1, {1, 0}};
    c.a.mb = 1;
    c.b.mb = 2;
    c.a.lld_extra = {2, 0};
    c.b.lld_extra = {0, 5};
    add(c);
  }
  // A lower trapezoid with a unit diagonal, 2 x 1 blocks of 3 to 1 x 2 of 5, windows at
  // offsets, messages split into MPI messages of 40 bytes (sent: several per message).
  {
    TransportCase c = pair_case(0, 37, 23, 8);
    c.region = Region::Lower;
    c.unit_diag = true;
    c.a.grid = GridSpec{GridKind::Map, 2, 1, {1, 0}};
    c.b.grid = GridSpec{GridKind::Map, 1, 2, {0, 1}};
    c.a.mg = 40;
    c.a.ng = 30;
    c.a.ia = 3;
    c.a.ja = 5;
    c.a.mb = 3;
    c.a.nb = 3;
    c.a.lld_extra = {1, 4};
    c.b.mg = 37;
    c.b.ng = 25;
    c.b.ja = 2;
    c.b.mb = 5;
    c.b.nb = 5;
    c.b.lld_extra = {2, 0};
    c.max_message_bytes = 40;
    c.chunk = 17;
    add(c);
  }
  return cases;
}

class Transports : public ::testing::TestWithParam<Way> {};

TEST_P(Transports, RandomTransfers) {
  const Way way = GetParam();
  const std::string why = why_not(way);
  if (!why.empty()) GTEST_SKIP() << way_name(way) << " skipped: " << why;
  const int np = world_size();
  const std::uint64_t seed =
      shared_seed((std::string("Transports.RandomTransfers/") + way_name(way)).c_str(),
                  615000ULL + static_cast<unsigned>(np));
  Rng rng(seed);
  Tally tally;
  int failed = 0;
  int run = 0;
  for (int index = 0; index < options().cases; ++index) {
    const TransportCase c = draw_case(rng, np, index);
    if (options().only_case >= 0 && options().only_case != index) continue;
    if (options().verbose) print0(c.describe());
    ++run;
    failed +=
        run_everywhere(c, way, "seed " + std::to_string(seed) + " np " + std::to_string(np), tally);
  }
  const long long messages = total(tally.messages);
  print0("[  CASES   ] " + std::to_string(run) + " cases of way " + way_name(way) + " on " +
         std::to_string(np) + " ranks, " + std::to_string(failed) + " failed; " +
         std::to_string(messages) + " messages, " + std::to_string(total(tally.elements)) +
         " elements moved (summed over ranks and executions)\n");
  EXPECT_EQ(failed, 0);
  if (options().only_case < 0) {
    EXPECT_GT(messages, 0) << "no message moved: the cases test nothing";
  }
}

TEST_P(Transports, HandPicked) {
  const Way way = GetParam();
  const std::string why = why_not(way);
  if (!why.empty()) GTEST_SKIP() << way_name(way) << " skipped: " << why;
  Tally tally;
  int failed = 0;
  for (const TransportCase &c : hand_picked()) {
    failed += run_everywhere(c, way, "hand-picked, np " + std::to_string(world_size()), tally);
  }
  EXPECT_EQ(failed, 0);
}

INSTANTIATE_TEST_SUITE_P(Ways, Transports,
                         ::testing::Values(Way::sent, Way::direct, Way::bounced, Way::read_packed,
                                           Way::mapped, Way::array_direct, Way::array_bounced,
                                           Way::array_mapped, Way::local),
                         [](const ::testing::TestParamInfo<Way> &param) {
                           return std::string(way_name(param.param));
                         });

/// A direct read from rank 0 to rank 1 whose source is `a` (rank 0) and must fail with
/// EFAULT: both ranks must mark the message as a failed read (the sender from the reader's
/// reply), so that the executor's repair sends it again, and B keep its sentinels. The other
/// ranks take no part.
void expect_failed_read(const TransportCase &c, const std::byte *a, Way way) {
  MPI_Comm comm = abilities().comm;
  const int rank = world_rank();
  const LocalBuf la = local_buf(c.a, rank);
  const LocalBuf lb = local_buf(c.b, rank);
  Rig rig(c, way, redist::make_rank_plan(transfer_of(c), rank, world_size()), la.lld, lb.lld,
          sizeof(double));
  ASSERT_EQ(on_any_rank(!rig.exchange_identities(a, la.lld).empty()), 0);
  std::vector<double> b;
  fill_sentinel(lb, 4, b);
  watchdog_arm(std::string("a failing single-copy read, ") + way_name(way));
  rig.move(a, reinterpret_cast<std::byte *>(b.data()));
  watchdog_disarm();
  const Requests &r = rig.requests();
  EXPECT_EQ(r.failure(), "") << "a failed read is marked for the repair, not an MPI failure";
  const auto read_failed = [](const std::vector<std::uint8_t> &marks) {
    return std::count_if(marks.begin(), marks.end(),
                         [](std::uint8_t m) { return (m & Requests::kReadFailed) != 0; });
  };
  EXPECT_EQ(read_failed(r.send_marks()), rank == 0 ? 1 : 0) << "the sender's marks";
  EXPECT_EQ(read_failed(r.recv_marks()), rank == 1 ? 1 : 0) << "the receiver's marks";
  if (rank == 1) {
    EXPECT_EQ(rig.arrays().copies(), 0U);
  }
  std::int64_t moved = 0;
  EXPECT_EQ(check(c, lb, b, 1, 4, -1, true, moved), "") << "a failed read changed B";
  MPI_Barrier(comm); // the receiver is done with the sender's memory
}

// The sender's address lies on pages it cannot read itself (PROT_NONE): process_vm_readv
// fails with EFAULT before moving a byte.
TEST(TransportFailures, ReadFromUnreadablePagesIsReported) {
  const std::string why = why_not(Way::direct);
  if (!why.empty()) GTEST_SKIP() << "direct skipped: " << why;
  const TransportCase c = pair_case(0, 60, 20, 8);
  const std::size_t bytes = static_cast<std::size_t>(local_buf(c.a, 0).elems) * sizeof(double);
  void *pages = mmap(nullptr, bytes, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  ASSERT_NE(pages, MAP_FAILED);
  expect_failed_read(c, static_cast<const std::byte *>(pages), Way::direct);
  munmap(pages, bytes);
}

// The sender's address is inside its shared array (redist_alloc) but the message reaches past
// its end: the receiver finds it out on its mapping (ArrayCopy: EFAULT) and copies nothing,
// whether the message was to be read there (direct) or, not packed, copied from there (mapped).
class TransportArrayFailures : public ::testing::TestWithParam<Way> {};

TEST_P(TransportArrayFailures, CopyPastTheSendersSharedArrayIsReported) {
  const Way way = GetParam();
  const std::string why = why_not(way);
  if (!why.empty()) GTEST_SKIP() << way_name(way) << " skipped: " << why;
  const TransportCase c = pair_case(0, 60, 20, 8);
  const std::size_t bytes = static_cast<std::size_t>(local_buf(c.a, 0).elems) * sizeof(double);
  void *memory = nullptr;
  ASSERT_EQ(redist_alloc(bytes, &memory), REDIST_SUCCESS);
  std::vector<double> a;
  fill_a(c.a, local_buf(c.a, world_rank()), 1, a);
  std::memcpy(memory, a.data(), std::min(bytes, a.size() * sizeof(double)));
  // The last element of the array: the message's 60 x 20 elements run past its end.
  const std::byte *last = static_cast<const std::byte *>(memory) + bytes - sizeof(double);
  expect_failed_read(c, last, way);
  redist_free(memory);
}

INSTANTIATE_TEST_SUITE_P(Ways, TransportArrayFailures,
                         ::testing::Values(Way::array_direct, Way::array_mapped),
                         [](const ::testing::TestParamInfo<Way> &param) {
                           return std::string(way_name(param.param));
                         });

} // namespace
} // namespace mpitest
