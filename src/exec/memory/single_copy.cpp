#include "single_copy.hpp"

#include "copy.hpp"
#include "environment.hpp"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/sysinfo.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <functional>
#include <iterator>
#include <limits>
#include <map>
#include <mutex>
#include <string>
#include <utility>

namespace redist::single_copy {
namespace {

constexpr std::size_t kMaxBatchBytes = std::size_t{1} << 30; // below the kernel's MAX_RW_COUNT

std::atomic<int> open_segments{0}; // SharedBuffers holding a descriptor
std::atomic<std::uint64_t> next_segment_id{1};

// The test hook's state: per kind of operation, how many to let through and to fail.
struct InjectedFailures {
  std::atomic<bool> armed{false};
  std::mutex mutex;
  long long skip[4] = {};
  long long count[4] = {};
  long long failed[4] = {};
};

InjectedFailures &injected_state() {
  static InjectedFailures s;
  return s;
}

bool injected(Injected what) {
  InjectedFailures &s = injected_state();
  if (!s.armed.load(std::memory_order_relaxed)) {
    return false;
  }
  std::lock_guard lock(s.mutex);
  const auto k = static_cast<std::size_t>(what);
  if (s.skip[k] > 0) {
    --s.skip[k];
    return false;
  }
  if (s.count[k] == 0) {
    return false;
  }
  if (s.count[k] > 0) {
    --s.count[k];
  }
  ++s.failed[k];
  return true;
}

// The shared arrays of this process, by start address.
struct SharedArrays {
  std::mutex mutex;
  std::map<std::uintptr_t, Segment> by_start;
};

SharedArrays &shared_arrays() {
  static SharedArrays arrays;
  return arrays;
}

// A memory file reserves nothing: larger than memory and swap, it would map and fail only
// when written. Such sizes take the ordinary allocation, which refuses them at once (as the
// kernel's overcommit heuristic does for a single allocation).
bool fits_in_memory(std::size_t bytes) {
  struct sysinfo info {};
  if (sysinfo(&info) != 0) {
    return false;
  }
  const std::uint64_t units = std::uint64_t{info.totalram} + info.totalswap;
  return bytes / std::max<std::uint64_t>(info.mem_unit, 1) <= units;
}

// A new memory file of `bytes` mapped shared and writable here; null (errno set, nothing
// left open) when the system gives none. Its descriptor goes to `fd`.
void *map_memory_file(const char *name, std::size_t bytes, int &fd) {
  fd = memfd_create(name, MFD_CLOEXEC);
  if (fd < 0) {
    return nullptr;
  }
  void *memory = ftruncate(fd, static_cast<off_t>(bytes)) == 0
                     ? mmap(nullptr, bytes, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0)
                     : MAP_FAILED;
  if (memory == MAP_FAILED) {
    const int error = errno;
    close(fd);
    fd = -1;
    errno = error;
    return nullptr;
  }
  return memory;
}

// Process pid's memory file `fd` mapped here with `protection` (PROT_READ, or with PROT_WRITE),
// if it is `bytes` long and, where `inode` is not 0, has that inode (the size and the inode
// tell the memory file from another file under that number); null where the system refuses.
// Allocates nothing: runs on later executions.
void *map_peer_file(std::int64_t pid, std::int64_t fd, std::size_t bytes, int protection,
                    std::uint64_t inode = 0) {
  char path[64];
  std::snprintf(path, sizeof path, "/proc/%lld/fd/%lld", static_cast<long long>(pid),
                static_cast<long long>(fd));
  const int file = open(path, ((protection & PROT_WRITE) != 0 ? O_RDWR : O_RDONLY) | O_CLOEXEC);
  if (file < 0) {
    return nullptr;
  }
  struct stat status {};
  void *memory = fstat(file, &status) == 0 && static_cast<std::uint64_t>(status.st_size) == bytes &&
                         (inode == 0 || status.st_ino == inode)
                     ? mmap(nullptr, bytes, protection, MAP_SHARED, file, 0)
                     : MAP_FAILED;
  close(file);
  return memory == MAP_FAILED ? nullptr : memory;
}

// Two processes with the same boot and pid namespace name each other by the same pid. The
// key is computed once (0 when /proc cannot tell); whether single copy is switched off is
// asked at each identify(), so that REDIST_SINGLE_COPY=never set later takes effect.
std::uint64_t compute_node_key() {
  std::ifstream boot("/proc/sys/kernel/random/boot_id");
  std::string boot_id;
  if (!std::getline(boot, boot_id) || boot_id.empty()) {
    return 0;
  }
  char ns[256] = {};
  const ssize_t length = readlink("/proc/self/ns/pid", ns, sizeof ns - 1);
  if (length <= 0) {
    return 0;
  }
  const std::uint64_t key =
      std::hash<std::string>{}(boot_id + '/' + std::string(ns, static_cast<std::size_t>(length)));
  return key == 0 ? 1 : key;
}

std::uint64_t node_key() {
  static const std::uint64_t key = compute_node_key();
  return key;
}

constexpr Mode kModes[] = {Mode::automatic, Mode::always,      Mode::never, Mode::direct,
                           Mode::bounced,   Mode::read_packed, Mode::mapped};

environment::Choice mode_choice() {
  return environment::choice(
      "REDIST_SINGLE_COPY",
      {"auto", "always", "never", "direct", "bounced", "read-packed", "mapped"},
      "unknown (known: auto, never, always, direct, bounced, read-packed, mapped)");
}

} // namespace

Mode mode_from_environment() {
  const environment::Choice c = mode_choice();
  return c.index ? kModes[*c.index] : Mode::automatic;
}

std::string environment_error() {
  return mode_choice().error;
}

std::uint64_t node_identity() {
  return node_key();
}

Identity identify(std::uint64_t &probe, Index lld, const SharedBuffer &send_buffer, const void *a) {
  Identity id;
  id.pid = getpid();
  id.node = mode_from_environment() == Mode::never ? 0 : node_key();
  probe = reinterpret_cast<std::uintptr_t>(&probe) ^ 0x5EC0'11C0'9E37'79B9ULL ^
          static_cast<std::uint64_t>(id.pid);
  id.probe_address = reinterpret_cast<std::uintptr_t>(&probe);
  id.probe_value = probe;
  id.lld = lld;
  id.buffer = send_buffer.segment();
  id.array = shared_array_of(a);
  return id;
}

void *allocate_shared_array(std::size_t bytes) {
  if (bytes == 0 || !fits_in_memory(bytes)) {
    errno = bytes == 0 ? EINVAL : ENOMEM;
    return nullptr;
  }
  int fd = -1;
  void *memory = map_memory_file("redist-array", bytes, fd);
  if (memory == nullptr) {
    return nullptr;
  }
  const auto start = reinterpret_cast<std::uintptr_t>(memory);
  try {
    SharedArrays &arrays = shared_arrays();
    const std::lock_guard lock(arrays.mutex);
    arrays.by_start.emplace(start, Segment{fd, start, bytes, next_segment_id++});
  } catch (...) {
    munmap(memory, bytes);
    close(fd);
    throw;
  }
  return memory;
}

bool free_shared_array(void *memory) {
  Segment segment;
  {
    SharedArrays &arrays = shared_arrays();
    const std::lock_guard lock(arrays.mutex);
    const auto found = arrays.by_start.find(reinterpret_cast<std::uintptr_t>(memory));
    if (found == arrays.by_start.end()) {
      return false;
    }
    segment = found->second;
    arrays.by_start.erase(found);
  }
  munmap(memory, segment.bytes);
  close(static_cast<int>(segment.fd));
  return true;
}

Segment shared_array_of(const void *address) {
  const auto at = reinterpret_cast<std::uintptr_t>(address);
  SharedArrays &arrays = shared_arrays();
  const std::lock_guard lock(arrays.mutex);
  auto after = arrays.by_start.upper_bound(at);
  if (address == nullptr || after == arrays.by_start.begin()) {
    return {};
  }
  const Segment &segment = std::prev(after)->second;
  return at - segment.address < segment.bytes ? segment : Segment{};
}

void inject_failures(Injected what, long long skip, long long count) {
  InjectedFailures &s = injected_state();
  std::lock_guard lock(s.mutex);
  const auto k = static_cast<std::size_t>(what);
  s.skip[k] = skip;
  s.count[k] = count;
  bool any = false;
  for (const long long c : s.count) {
    any = any || c != 0;
  }
  s.armed.store(any, std::memory_order_relaxed);
}

long long injected_failures(Injected what) {
  InjectedFailures &s = injected_state();
  std::lock_guard lock(s.mutex);
  return s.failed[static_cast<std::size_t>(what)];
}

bool can_read(const Identity &sender) {
  if (sender.node == 0 || sender.node != node_key() || sender.pid <= 0 ||
      injected(Injected::probe)) {
    return false;
  }
  std::uint64_t value = ~sender.probe_value;
  iovec local{&value, sizeof value};
  // An address in the sender's process, never dereferenced here.
  // NOLINTNEXTLINE(performance-no-int-to-ptr)
  iovec remote{reinterpret_cast<void *>(sender.probe_address), sizeof value};
  return process_vm_readv(static_cast<pid_t>(sender.pid), &local, 1, &remote, 1, 0) ==
             static_cast<ssize_t>(sizeof value) &&
         value == sender.probe_value;
}

namespace {

// Seconds beyond moving the bytes once across processes, which every way pays (cheapest_way).
constexpr double kCopyPerByte = 0.085e-9; // a pass over memory
// Address and reply; with redist_bench --small (docs/studies/performance.md) messages of 16-32 KiB
// moved faster mapped than sent, those of 2 KiB and less did not.
constexpr double kRoundTrip = 2.5e-6;
// Open MPI's shared-memory transport sends a message of more bytes than this in a rendezvous
// (btl_vader_eager_limit, its header included), which costs `sent` a round trip as well:
// redist_bench --small, 64 x 64 at 2 ranks (8 KiB messages), 7.5-9.8 us mapped against
// 10.3-16.1 us sent (docs/studies/performance.md, "The cost model").
constexpr double kEagerBytes = 4096;

// What `sent` pays beyond packing and the local pieces: MPI's two passes over the bytes, and
// above the eager limit its rendezvous.
double sent_transfer(double bytes) {
  return 2 * bytes * kCopyPerByte + (bytes > kEagerBytes ? kRoundTrip : 0);
}

} // namespace

bool may_be_mapped(std::size_t bytes, Mode mode) {
  switch (mode) {
  case Mode::automatic:
    // cheapest_way's `mapped` and `sent` pack alike and copy the same local pieces: `mapped`
    // saves sent's transfer and pays a round trip.
    return sent_transfer(static_cast<double>(bytes)) >= kRoundTrip;
  case Mode::always:
  case Mode::mapped:
    return true;
  default:
    return false;
  }
}

Way cheapest_way(const PieceCounts &counts, Mode mode, Mapped mapped) {
  constexpr double kFromCachePerByte = 0.03e-9;  // a pass out of the bounce buffer
  constexpr double kPerPieceCopied = 3e-9;       // a memmove call of pack or unpack
  constexpr double kPerRemotePieceRead = 300e-9; // the kernel pins its pages
  constexpr double kPerLocalPieceRead = 100e-9;  // 40 ns alone, 170 ns with 2 ranks per core
  constexpr double kPerLocalPieceBounced = 5e-9;
  const auto bytes = static_cast<double>(counts.bytes);
  const auto remote = static_cast<double>(counts.remote_pieces);
  const auto local = static_cast<double>(counts.local_pieces);
  // A transposition costs about 2.7 passes over memory (one side is read or written across
  // cache lines; docs/studies/performance.md).
  constexpr double kTransposePerByte = 0.23e-9;
  // A transposed message read from the sender's array: its pieces are short stretches of A's
  // columns, read cold across many pages; measured ~0.6 us each with their bytes (pdtran
  // 4000^2, 2 ranks: 40000 pieces of 800 bytes, 27 ms), 2-6x slower than packing.
  constexpr double kPerRemotePieceTransposed = 600e-9;
  const bool transposes = counts.transposes;
  const double pack =
      bytes * (transposes ? kTransposePerByte : kCopyPerByte) + remote * kPerPieceCopied;
  // A transposed message is read through the bounce buffer and transposed out of it.
  const double bounced =
      transposes ? remote * kPerRemotePieceTransposed + bytes * kCopyPerByte + kRoundTrip
                 : remote * kPerRemotePieceRead + local * kPerLocalPieceBounced +
                       bytes * kFromCachePerByte + kRoundTrip;
  // From a mapped array the copy is the move itself, a piece at a time.
  const double direct =
      mapped.array ? (remote + local) * kPerPieceCopied + kRoundTrip +
                         (transposes ? bytes * kTransposePerByte : 0)
      : transposes ? bounced
                   : remote * kPerRemotePieceRead + local * kPerLocalPieceRead + kRoundTrip;
  const double sent = pack + sent_transfer(bytes) + local * kPerPieceCopied;
  // With the buffer mapped, unpacking from it replaces the two reads through the bounce
  // buffer: the bench measured it faster than both wherever they were chosen (gridshape and
  // p-to-q at 4 ranks, docs/studies/performance.md), though the per-byte costs above would not say
  // so. Combined, a read of the sender's unmapped array is `bounced` (read_combined): slower than
  // `mapped` wherever measured (PDGEADD 'N', PDTRADD at 2 and 4 ranks: 22-30%).
  const bool reads_then_combines = counts.combines && !mapped.array;
  const std::pair<double, Way> mapped_ways[] = {
      {reads_then_combines ? std::numeric_limits<double>::infinity() : direct, Way::direct},
      {pack + local * kPerPieceCopied + kRoundTrip, Way::mapped},
      {sent, Way::sent},
  };
  const std::pair<double, Way> unmapped_ways[] = {
      {direct, Way::direct},
      {bounced, Way::bounced},
      {pack + bytes * kFromCachePerByte + local * kPerPieceCopied + kRoundTrip, Way::read_packed},
      {sent, Way::sent},
  };
  // `always` leaves out the last way, sending.
  const auto cheapest = [mode](const auto &ways) {
    const auto last = std::end(ways) - (mode == Mode::always ? 1 : 0);
    return std::min_element(std::begin(ways), last,
                            [](const auto &x, const auto &y) { return x.first < y.first; })
        ->second;
  };
  if (counts.packed_only) {
    // Neither the sender's array nor its buffer can be read piece by piece: sent, or unpacked
    // from the mapped buffer where the mode lets the receiver read (and, by the model, it pays).
    const bool reads = mode == Mode::automatic || mode == Mode::always || mode == Mode::mapped;
    const bool pays = mode != Mode::automatic || mapped_ways[1].first < sent;
    return mapped.buffer && reads && pays ? Way::mapped : Way::sent;
  }
  switch (mode) {
  case Mode::direct:
    return Way::direct;
  case Mode::bounced:
    return Way::bounced;
  case Mode::read_packed:
    return Way::read_packed;
  case Mode::mapped:
    return mapped.buffer ? Way::mapped : Way::read_packed;
  default:
    return mapped.buffer ? cheapest(mapped_ways) : cheapest(unmapped_ways);
  }
}

bool sent_whatever_the_pieces(std::size_t bytes, std::size_t elements, bool transposes,
                              bool packed_only, Mode mode) {
  if (mode == Mode::never) {
    return true;
  }
  if (mode != Mode::automatic) {
    return false;
  }
  // Pieces::estimate_pieces never counts more than twice the elements on a side (a transposed
  // message's columns cut at the bounce buffer's width and rows at its rectangles).
  const std::size_t most = 2 * std::max<std::size_t>(elements, 1);
  for (const bool combines : {false, true}) {
    for (const std::size_t remote : {std::size_t{1}, most}) {
      for (const std::size_t local : {std::size_t{1}, most}) {
        const PieceCounts counts{bytes, remote, local, transposes, packed_only, combines};
        for (const Mapped mapped : {Mapped{}, Mapped{.buffer = true}, Mapped{.array = true},
                                    Mapped{.buffer = true, .array = true}}) {
          if (cheapest_way(counts, mode, mapped) != Way::sent) {
            return false;
          }
        }
      }
    }
  }
  return true;
}

SharedBuffer::SharedBuffer(std::size_t bytes, bool shareable) : bytes_(bytes) {
  if (bytes == 0) {
    return;
  }
  shareable = shareable && fits_in_memory(bytes);
  if (shareable && open_segments.fetch_add(1) < kMaxOpenSegments) {
    if (void *memory = map_memory_file("redist-send-buffer", bytes, fd_); memory != nullptr) {
      data_ = static_cast<std::byte *>(memory);
      mapped_ = true;
      id_ = next_segment_id++;
      return;
    }
    --open_segments;
  } else if (shareable) {
    --open_segments;
  }
  data_ = new std::byte[bytes]; // NOLINT(cppcoreguidelines-owning-memory): freed in reset()
}

SharedBuffer::SharedBuffer(SharedBuffer &&other) noexcept
    : data_(std::exchange(other.data_, nullptr)), bytes_(std::exchange(other.bytes_, 0)),
      fd_(std::exchange(other.fd_, -1)), mapped_(std::exchange(other.mapped_, false)),
      id_(std::exchange(other.id_, 0)) {}

SharedBuffer &SharedBuffer::operator=(SharedBuffer &&other) noexcept {
  if (this != &other) {
    reset();
    data_ = std::exchange(other.data_, nullptr);
    bytes_ = std::exchange(other.bytes_, 0);
    fd_ = std::exchange(other.fd_, -1);
    mapped_ = std::exchange(other.mapped_, false);
    id_ = std::exchange(other.id_, 0);
  }
  return *this;
}

Segment SharedBuffer::segment() const {
  if (fd_ < 0) {
    return {};
  }
  return {fd_, reinterpret_cast<std::uintptr_t>(data_), bytes_, id_};
}

SharedBuffer::~SharedBuffer() {
  reset();
}

void SharedBuffer::release_fd() {
  if (fd_ >= 0) {
    close(fd_);
    fd_ = -1;
    --open_segments;
  }
}

void SharedBuffer::reset() {
  release_fd();
  if (mapped_) {
    munmap(data_, bytes_);
  } else {
    delete[] data_; // NOLINT(cppcoreguidelines-owning-memory)
  }
  data_ = nullptr;
  bytes_ = 0;
  mapped_ = false;
  id_ = 0;
}

Mapping::Mapping(Mapping &&other) noexcept
    : data_(std::exchange(other.data_, nullptr)), bytes_(std::exchange(other.bytes_, 0)),
      sender_address_(std::exchange(other.sender_address_, 0)), id_(std::exchange(other.id_, 0)) {}

Mapping &Mapping::operator=(Mapping &&other) noexcept {
  if (this != &other) {
    reset();
    data_ = std::exchange(other.data_, nullptr);
    bytes_ = std::exchange(other.bytes_, 0);
    sender_address_ = std::exchange(other.sender_address_, 0);
    id_ = std::exchange(other.id_, 0);
  }
  return *this;
}

Mapping::~Mapping() {
  reset();
}

void Mapping::reset() {
  if (data_ != nullptr) {
    // NOLINTNEXTLINE(cppcoreguidelines-pro-type-const-cast): munmap takes a void *
    munmap(const_cast<std::byte *>(data_), bytes_);
  }
  data_ = nullptr;
  bytes_ = 0;
  sender_address_ = 0;
  id_ = 0;
}

bool Mapping::map(std::int64_t pid, const Segment &segment) {
  reset();
  if (segment.fd < 0 || segment.bytes == 0 || pid <= 0 || injected(Injected::map)) {
    return false;
  }
  const auto bytes = static_cast<std::size_t>(segment.bytes);
  void *memory = map_peer_file(pid, segment.fd, bytes, PROT_READ);
  if (memory == nullptr) {
    return false;
  }
  data_ = static_cast<const std::byte *>(memory);
  bytes_ = bytes;
  sender_address_ = segment.address;
  id_ = segment.id;
  return true;
}

const std::byte *Mapping::at(std::uint64_t address, std::size_t bytes) const {
  if (data_ == nullptr || address < sender_address_ || address - sender_address_ > bytes_ ||
      bytes > bytes_ - (address - sender_address_) || injected(Injected::mapped)) {
    return nullptr;
  }
  return data_ + (address - sender_address_);
}

void Reader::start(std::int64_t pid, std::uint64_t remote_base, std::byte *local_base,
                   std::byte *bounce, bool streaming) {
  pid_ = pid;
  remote_base_ = remote_base;
  local_base_ = local_base;
  bounce_ = bounce;
  streaming_ = streaming;
  remote_count_ = 0;
  local_count_ = 0;
  bounced_.clear();
  gathered_ = 0;
  counts_ = {};
  error_ = 0;
}

void Reader::add(std::size_t remote_offset, std::size_t local_offset, std::size_t bytes) {
  if (bytes == 0) {
    return;
  }
  std::uint64_t remote = remote_base_ + remote_offset;
  std::uintptr_t local = reinterpret_cast<std::uintptr_t>(local_base_) + local_offset;
  bool joins_remote = counts_.bytes > 0 && remote == next_remote_;
  bool joins_local = counts_.bytes > 0 && local == next_local_;
  counts_.bytes += bytes;
  counts_.remote_pieces += joins_remote ? 0 : 1;
  counts_.local_pieces += joins_local ? 0 : 1;
  next_remote_ = remote + bytes;
  next_local_ = local + bytes;
  std::byte *to = local_base_ + local_offset;
  const std::size_t capacity = bounce_ != nullptr ? kBounceBytes : kMaxBatchBytes;
  while (bytes > 0) {
    if (gathered_ == capacity || (!joins_remote && remote_count_ == kMaxPieces) ||
        (bounce_ == nullptr && !joins_local && local_count_ == kMaxPieces)) {
      read();
      joins_remote = false;
      joins_local = false;
    }
    const std::size_t take = std::min(bytes, capacity - gathered_);
    if (joins_remote) {
      remote_[remote_count_ - 1].iov_len += take;
    } else {
      // An address in the sender's process, never dereferenced here.
      // NOLINTNEXTLINE(performance-no-int-to-ptr)
      remote_[remote_count_++] = {reinterpret_cast<void *>(remote), take};
    }
    if (bounce_ != nullptr) {
      if (joins_local) {
        bounced_.back().iov_len += take;
      } else {
        bounced_.push_back({to, take});
      }
    } else if (joins_local) {
      local_[local_count_ - 1].iov_len += take;
    } else {
      local_[local_count_++] = {to, take};
    }
    gathered_ += take;
    remote += take;
    to += take;
    bytes -= take;
    joins_remote = true; // the rest of a piece split at a full batch
    joins_local = true;
  }
}

void Reader::read() {
  if (gathered_ > 0 && error_ == 0 && injected(Injected::read)) {
    for (std::size_t k = 0; k < local_count_; ++k) { // as if some bytes had come, wrong
      std::memset(local_[k].iov_base, 0xA5, local_[k].iov_len);
    }
    for (const iovec &piece : bounced_) {
      std::memset(piece.iov_base, 0xA5, piece.iov_len);
    }
    error_ = EIO;
  }
  if (gathered_ > 0 && error_ == 0) {
    iovec into_bounce{bounce_, gathered_};
    const bool bounced = bounce_ != nullptr;
    const ssize_t got =
        process_vm_readv(static_cast<pid_t>(pid_), bounced ? &into_bounce : local_.data(),
                         bounced ? 1 : local_count_, remote_.data(), remote_count_, 0);
    if (got < 0) {
      error_ = errno;
    } else if (static_cast<std::size_t>(got) != gathered_) {
      error_ = -1;
    } else if (bounced) {
      const std::byte *from = bounce_;
      for (const iovec &piece : bounced_) {
        copy_bytes(static_cast<std::byte *>(piece.iov_base), from, piece.iov_len, streaming_);
        from += piece.iov_len;
      }
    }
  }
  remote_count_ = 0;
  local_count_ = 0;
  bounced_.clear();
  gathered_ = 0;
}

bool Reader::finish() {
  read();
  return error_ == 0;
}

} // namespace redist::single_copy
