// Single-copy reads (single_copy.hpp), streaming copies (copy.hpp) and RunPattern::index_of,
// against plain memcpy / memmove and enumeration. Reads go to this process's own memory, so no
// MPI is needed; where the kernel forbids cross-memory attach the read tests are skipped
// (and say so).
#include "copy.hpp"
#include "environment.hpp"
#include "index.hpp"
#include "plan.hpp"
#include "reference.hpp"
#include "single_copy.hpp"

#include <gtest/gtest.h>

#include <sys/mman.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <cerrno>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <map>
#include <random>
#include <string>
#include <thread>
#include <utility>
#include <vector>

namespace redist {
namespace {

std::vector<std::byte> random_bytes(std::size_t n, std::mt19937_64 &rng) {
  std::vector<std::byte> v(n);
  for (auto &b : v) {
    b = static_cast<std::byte>(rng() & 0xFF);
  }
  return v;
}

TEST(CopyBytes, MatchesMemmoveWithAndWithoutStreaming) {
  std::mt19937_64 rng(11);
  for (int trial = 0; trial < 4000; ++trial) {
    const std::size_t size = 1 + rng() % 12000;
    std::vector<std::byte> data = random_bytes(size, rng);
    std::vector<std::byte> expected = data;
    const std::size_t n = rng() % (size + 1);
    const std::size_t from = rng() % (size - n + 1);
    // A third of the trials overlap source and destination.
    const std::size_t to =
        trial % 3 == 0 ? std::min(size - n, from + rng() % 80) : rng() % (size - n + 1);
    const bool streaming = (trial & 1) != 0;
    std::memmove(expected.data() + to, expected.data() + from, n);
    copy_bytes(data.data() + to, data.data() + from, n, streaming);
    streaming_fence();
    ASSERT_EQ(data, expected) << "trial " << trial << " n " << n << " from " << from << " to " << to
                              << " streaming " << streaming;
  }
}

// stream_gather against an element-by-element copy: element sizes with and without the
// streaming loop, destinations at every offset within 16 bytes, source steps forward and back.
TEST(StreamGather, MatchesAnElementByElementCopy) {
  std::mt19937_64 rng(12);
  for (int trial = 0; trial < 3000; ++trial) {
    const std::size_t size = std::array<std::size_t, 5>{4, 8, 16, 2, 12}[trial % 5];
    const std::size_t count = rng() % 70;
    const auto step = static_cast<std::ptrdiff_t>(size * (1 + rng() % 5));
    const bool backwards = rng() % 4 == 0;
    const std::size_t span = count * static_cast<std::size_t>(step) + size;
    std::vector<std::byte> source = random_bytes(span, rng);
    std::vector<std::byte> out(count * size + 32, std::byte{0x5A});
    std::vector<std::byte> expected = out;
    const std::size_t offset = rng() % 16;
    const std::byte *first =
        backwards ? source.data() + (count > 0 ? (count - 1) * static_cast<std::size_t>(step) : 0)
                  : source.data();
    const std::ptrdiff_t from_step = backwards ? -step : step;
    for (std::size_t e = 0; e < count; ++e) {
      std::memcpy(expected.data() + offset + e * size,
                  first + static_cast<std::ptrdiff_t>(e) * from_step, size);
    }
    stream_gather(out.data() + offset, first, from_step, count, size);
    streaming_fence();
    ASSERT_EQ(out, expected) << "trial " << trial << " size " << size << " count " << count
                             << " step " << from_step << " offset " << offset;
  }
}

TEST(StreamGatherPair8, MatchesAnElementByElementCopy) {
  std::mt19937_64 rng(14);
  constexpr std::size_t kSize = 8;
  for (int trial = 0; trial < 3000; ++trial) {
    const std::size_t count = rng() % 70;
    const auto from_step = static_cast<std::ptrdiff_t>(kSize * (2 + rng() % 5));
    const auto to_step = static_cast<std::ptrdiff_t>(64 * (1 + (count * kSize + 64) / 64));
    const std::size_t offset = rng() % 16;
    std::vector<std::byte> source =
        random_bytes(count * static_cast<std::size_t>(from_step) + kSize * 2, rng);
    std::vector<std::byte> out(offset + 2 * static_cast<std::size_t>(to_step) + 64,
                               std::byte{0x5A});
    std::vector<std::byte> expected = out;
    for (std::size_t c = 0; c < 2; ++c) {
      for (std::size_t e = 0; e < count; ++e) {
        std::memcpy(expected.data() + offset + c * static_cast<std::size_t>(to_step) + e * kSize,
                    source.data() + e * static_cast<std::size_t>(from_step) + c * kSize, kSize);
      }
    }
    stream_gather_pair_8(out.data() + offset, to_step, source.data(), from_step, count);
    streaming_fence();
    ASSERT_EQ(out, expected) << "trial " << trial << " count " << count << " steps " << from_step
                             << ", " << to_step << " offset " << offset;
  }
}

TEST(TransposeBlocks, MatchEachAnElementByElementTransposition) {
  std::mt19937_64 rng(13);
  for (int trial = 0; trial < 6000; ++trial) {
    // 8-byte elements (transpose_8) in even trials, 4-byte ones (transpose_4) in odd ones.
    const std::size_t size = trial % 2 == 0 ? 8 : 4;
    const std::size_t height = rng() % 40;
    const std::size_t width = rng() % 40;
    // Steps of any 8-byte multiple at least the block's extent, and unaligned arrays.
    const auto from_step = static_cast<std::ptrdiff_t>(size * (width + rng() % 5));
    const auto to_step = static_cast<std::ptrdiff_t>(size * (height + rng() % 5));
    const std::size_t from_offset = rng() % 16;
    const std::size_t to_offset = rng() % 16;
    std::vector<std::byte> source =
        random_bytes(from_offset + height * static_cast<std::size_t>(from_step) + size, rng);
    std::vector<std::byte> out(to_offset + width * static_cast<std::size_t>(to_step) + size,
                               std::byte{0x5A});
    std::vector<std::byte> expected = out;
    for (std::size_t e = 0; e < height; ++e) {
      for (std::size_t w = 0; w < width; ++w) {
        std::memcpy(
            expected.data() + to_offset + e * size + w * static_cast<std::size_t>(to_step),
            source.data() + from_offset + e * static_cast<std::size_t>(from_step) + w * size, size);
      }
    }
    (size == 8 ? transpose_8 : transpose_4)(out.data() + to_offset, to_step,
                                            source.data() + from_offset, from_step, height, width);
    ASSERT_EQ(out, expected) << "trial " << trial << " height " << height << " width " << width
                             << " steps " << from_step << ", " << to_step;
  }
}

// Whether this process may use process_vm_readv at all (seccomp or the kernel may forbid it).
bool cross_memory_attach_works() {
  std::uint64_t source = 0x1234'5678'9ABC'DEF0ULL;
  std::uint64_t target = 0;
  iovec local{&target, sizeof target};
  iovec remote{&source, sizeof source};
  return process_vm_readv(getpid(), &local, 1, &remote, 1, 0) ==
             static_cast<ssize_t>(sizeof target) &&
         target == source;
}

struct Piece {
  std::size_t remote;
  std::size_t local;
  std::size_t bytes;
};

// Random pieces in message order: the local side visits disjoint ranges (each byte of the
// destination written at most once), the remote side may repeat and run backwards; runs of
// pieces contiguous on one side or both, so joining and batching are exercised.
std::vector<Piece> random_pieces(std::size_t remote_size, std::size_t local_size,
                                 std::size_t max_piece, std::mt19937_64 &rng) {
  std::vector<Piece> pieces;
  std::size_t local = rng() % 64;
  std::size_t remote = rng() % (remote_size / 2);
  while (true) {
    const std::size_t bytes = 1 + rng() % max_piece;
    if (local + bytes > local_size) {
      break;
    }
    if (remote + bytes > remote_size) {
      remote = rng() % (remote_size / 2);
    }
    if (remote + bytes > remote_size) {
      break;
    }
    pieces.push_back({remote, local, bytes});
    local += bytes + (rng() % 3 == 0 ? rng() % 40 : 0);
    switch (rng() % 4) {
    case 0:
      remote += bytes; // contiguous on the remote side
      break;
    case 1:
      remote += bytes + rng() % 100;
      break;
    default:
      remote = rng() % (remote_size - std::min(remote_size, bytes));
      break;
    }
  }
  return pieces;
}

// Joined pieces on one side, counted independently of Reader.
std::size_t stretches(const std::vector<Piece> &pieces, bool remote_side) {
  std::size_t count = 0;
  std::size_t next = SIZE_MAX;
  for (const Piece &p : pieces) {
    const std::size_t start = remote_side ? p.remote : p.local;
    count += start == next ? 0 : 1;
    next = start + p.bytes;
  }
  return count;
}

TEST(SingleCopyReader, ReadsEveryPieceDirectAndBounced) {
  if (!cross_memory_attach_works()) {
    GTEST_SKIP() << "process_vm_readv is not permitted here: single copy falls back to MPI";
  }
  std::mt19937_64 rng(5);
  std::vector<std::byte> bounce(single_copy::kBounceBytes);
  single_copy::Reader reader;
  for (int trial = 0; trial < 120; ++trial) {
    // Small pieces give more than IOV_MAX per batch; large ones span several bounce buffers.
    const std::size_t max_piece = trial % 3 == 0 ? 16 : trial % 3 == 1 ? 700 : 300'000;
    const std::size_t remote_size = trial % 3 == 2 ? 3'000'000 : 200'000;
    const std::size_t local_size = trial % 3 == 2 ? 4'000'000 : 120'000;
    const std::vector<std::byte> source = random_bytes(remote_size, rng);
    const std::vector<Piece> pieces = random_pieces(remote_size, local_size, max_piece, rng);
    std::vector<std::byte> expected = random_bytes(local_size, rng);
    std::vector<std::byte> got = expected;
    for (const Piece &p : pieces) {
      std::memcpy(expected.data() + p.local, source.data() + p.remote, p.bytes);
    }
    const bool bounced = (trial & 1) != 0;
    reader.start(getpid(), reinterpret_cast<std::uintptr_t>(source.data()), got.data(),
                 bounced ? bounce.data() : nullptr, (trial & 2) != 0);
    std::size_t bytes = 0;
    for (const Piece &p : pieces) {
      reader.add(p.remote, p.local, p.bytes);
      bytes += p.bytes;
    }
    ASSERT_TRUE(reader.finish()) << "errno " << reader.error();
    streaming_fence();
    ASSERT_EQ(got, expected) << "trial " << trial << ", " << pieces.size() << " pieces";
    EXPECT_EQ(reader.counts().bytes, bytes);
    EXPECT_EQ(reader.counts().remote_pieces, stretches(pieces, true));
    EXPECT_EQ(reader.counts().local_pieces, stretches(pieces, false));
  }
}

TEST(SingleCopyReader, ReportsAnUnreadableAddress) {
  if (!cross_memory_attach_works()) {
    GTEST_SKIP() << "process_vm_readv is not permitted here";
  }
  const auto page = static_cast<std::size_t>(sysconf(_SC_PAGESIZE));
  void *mapped = mmap(nullptr, page, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  ASSERT_NE(mapped, MAP_FAILED);
  ASSERT_EQ(munmap(mapped, page), 0);
  std::vector<std::byte> target(64);
  single_copy::Reader reader;
  reader.start(getpid(), reinterpret_cast<std::uintptr_t>(mapped), target.data(), nullptr);
  reader.add(0, 0, target.size());
  EXPECT_FALSE(reader.finish());
  EXPECT_EQ(reader.error(), EFAULT);
}

TEST(SingleCopyIdentity, ReadableOnlyWithTheRightNodeAndProbe) {
  std::uint64_t probe = 0;
  const single_copy::Identity self = single_copy::identify(probe, 17, single_copy::SharedBuffer());
  EXPECT_EQ(self.pid, getpid());
  EXPECT_EQ(self.lld, 17);
  EXPECT_EQ(self.probe_address, reinterpret_cast<std::uintptr_t>(&probe));
  EXPECT_EQ(self.probe_value, probe);
  if (!cross_memory_attach_works() || self.node == 0) {
    EXPECT_FALSE(single_copy::can_read(self));
    GTEST_SKIP() << "single copy is not available here (node key " << self.node << ")";
  }
  EXPECT_TRUE(single_copy::can_read(self));
  single_copy::Identity other_node = self;
  other_node.node ^= 1;
  EXPECT_FALSE(single_copy::can_read(other_node));
  single_copy::Identity wrong_probe = self;
  wrong_probe.probe_value ^= 1;
  EXPECT_FALSE(single_copy::can_read(wrong_probe));
  single_copy::Identity no_node = self;
  no_node.node = 0;
  EXPECT_FALSE(single_copy::can_read(no_node));
}

TEST(SharedBuffer, MapsThroughProcFdAndSeesLaterWrites) {
  std::mt19937_64 rng(21);
  const std::size_t bytes = 3 * 4096 + 100; // not a whole number of pages
  single_copy::SharedBuffer buffer(bytes, true);
  ASSERT_EQ(buffer.size(), bytes);
  if (buffer.fd() < 0) {
    GTEST_SKIP() << "memfd_create is not available here: send buffers are ordinary memory";
  }
  std::uint64_t probe = 0;
  const single_copy::Identity self = single_copy::identify(probe, 1, buffer);
  EXPECT_EQ(self.buffer.fd, buffer.fd());
  EXPECT_EQ(self.buffer.address, reinterpret_cast<std::uintptr_t>(buffer.data()));
  EXPECT_EQ(self.buffer.bytes, bytes);
  single_copy::Mapping mapping;
  ASSERT_TRUE(mapping.map(self.pid, self.buffer));
  // The receiver sees what the sender writes after mapping, at the sender's addresses.
  const std::vector<std::byte> data = random_bytes(bytes, rng);
  std::memcpy(buffer.data(), data.data(), bytes);
  for (int trial = 0; trial < 200; ++trial) {
    const std::size_t offset = rng() % bytes;
    const std::size_t n = rng() % (bytes - offset + 1);
    const std::byte *seen = mapping.at(self.buffer.address + offset, n);
    ASSERT_NE(seen, nullptr) << "offset " << offset << " bytes " << n;
    EXPECT_EQ(std::memcmp(seen, data.data() + offset, n), 0) << "offset " << offset;
  }
  // Outside the segment: refused, not read.
  EXPECT_EQ(mapping.at(self.buffer.address - 1, 1), nullptr);
  EXPECT_EQ(mapping.at(self.buffer.address + bytes, 1), nullptr);
  EXPECT_EQ(mapping.at(self.buffer.address + 8, bytes), nullptr);
  EXPECT_EQ(mapping.at(self.buffer.address, SIZE_MAX), nullptr);
  EXPECT_NE(mapping.at(self.buffer.address + bytes, 0), nullptr);
  // Moved, the mapping still reads the same bytes; the moved-from one is empty.
  single_copy::Mapping moved = std::move(mapping);
  EXPECT_TRUE(mapping.empty()); // NOLINT(bugprone-use-after-move): checks the moved-from state
  ASSERT_FALSE(moved.empty());
  EXPECT_EQ(std::memcmp(moved.at(self.buffer.address, bytes), data.data(), bytes), 0);
  // Once the descriptor is released no one else maps it; existing mappings stay.
  buffer.release_fd();
  EXPECT_EQ(buffer.fd(), -1);
  single_copy::Mapping late;
  EXPECT_FALSE(late.map(self.pid, self.buffer));
  EXPECT_TRUE(late.empty());
  buffer.data()[5] = std::byte{0x5A};
  EXPECT_EQ(moved.at(self.buffer.address + 5, 1)[0], std::byte{0x5A});
}

TEST(SharedBuffer, OrdinaryMemoryAnnouncesNoSegment) {
  single_copy::SharedBuffer plain(1000, false);
  EXPECT_EQ(plain.fd(), -1);
  ASSERT_NE(plain.data(), nullptr);
  std::memset(plain.data(), 1, plain.size());
  std::uint64_t probe = 0;
  const single_copy::Identity self = single_copy::identify(probe, 1, plain);
  EXPECT_EQ(self.buffer.fd, -1);
  single_copy::Mapping mapping;
  EXPECT_FALSE(mapping.map(self.pid, self.buffer));
  EXPECT_EQ(mapping.at(reinterpret_cast<std::uintptr_t>(plain.data()), 1), nullptr);
  const single_copy::SharedBuffer empty(0, true);
  EXPECT_EQ(empty.data(), nullptr);
  EXPECT_EQ(empty.fd(), -1);
  // A number that names another file (of another size) is not mapped.
  single_copy::SharedBuffer shared(4096, true);
  if (shared.fd() >= 0) {
    single_copy::Identity wrong_size = single_copy::identify(probe, 1, shared);
    wrong_size.buffer.bytes = 8192;
    EXPECT_FALSE(mapping.map(wrong_size.pid, wrong_size.buffer));
  }
}

TEST(SharedBuffer, AtMostSoManyHoldADescriptorAtOnce) {
  constexpr int kMax = single_copy::SharedBuffer::kMaxOpenSegments;
  std::vector<single_copy::SharedBuffer> held;
  held.reserve(kMax);
  for (int i = 0; i < kMax; ++i) {
    held.emplace_back(4096, true);
  }
  if (held[0].fd() < 0) {
    GTEST_SKIP() << "memfd_create is not available here";
  }
  for (const single_copy::SharedBuffer &b : held) {
    EXPECT_GE(b.fd(), 0);
  }
  const single_copy::SharedBuffer beyond(4096, true);
  EXPECT_EQ(beyond.fd(), -1);
  ASSERT_NE(beyond.data(), nullptr); // ordinary memory instead
  std::memset(beyond.data(), 7, beyond.size());
  held[3].release_fd();
  const single_copy::SharedBuffer after_release(4096, true);
  EXPECT_GE(after_release.fd(), 0);
  held.clear(); // destroyed buffers give their descriptors back
  for (int i = 0; i + 1 < kMax; ++i) {
    held.emplace_back(4096, true);
    EXPECT_GE(held.back().fd(), 0) << "buffer " << i;
  }
}

TEST(SharedArray, AllocatedZeroedFoundMappedAndFreed) {
  std::mt19937_64 rng(31);
  constexpr std::size_t kBytes = 5 * 4096 + 24;
  void *first = single_copy::allocate_shared_array(kBytes);
  if (first == nullptr) {
    GTEST_SKIP() << "memfd_create is not available here: " << std::strerror(errno);
  }
  void *second = single_copy::allocate_shared_array(100);
  ASSERT_NE(second, nullptr);
  const auto *bytes = static_cast<const unsigned char *>(first);
  EXPECT_TRUE(std::all_of(bytes, bytes + kBytes, [](unsigned char b) { return b == 0; }));
  const auto start = reinterpret_cast<std::uintptr_t>(first);
  // Every address inside names the array; the byte after it and before it do not.
  const single_copy::Segment at_start = single_copy::shared_array_of(first);
  ASSERT_GE(at_start.fd, 0);
  EXPECT_EQ(at_start.address, start);
  EXPECT_EQ(at_start.bytes, kBytes);
  for (int trial = 0; trial < 100; ++trial) {
    const std::size_t offset = rng() % kBytes;
    EXPECT_EQ(single_copy::shared_array_of(static_cast<char *>(first) + offset).id, at_start.id);
  }
  // NOLINTNEXTLINE(performance-no-int-to-ptr): addresses next to the array, never dereferenced
  EXPECT_EQ(single_copy::shared_array_of(reinterpret_cast<void *>(start + kBytes)).id ==
                at_start.id,
            false);
  // NOLINTNEXTLINE(performance-no-int-to-ptr)
  EXPECT_NE(single_copy::shared_array_of(reinterpret_cast<void *>(start - 1)).id, at_start.id);
  EXPECT_EQ(single_copy::shared_array_of(nullptr).fd, -1);
  std::vector<int> ordinary(10);
  EXPECT_EQ(single_copy::shared_array_of(ordinary.data()).fd, -1);
  const single_copy::Segment other = single_copy::shared_array_of(second);
  EXPECT_NE(other.id, at_start.id);
  // A receiver maps it (here this process itself) and sees what the owner writes.
  single_copy::Mapping mapping;
  ASSERT_TRUE(mapping.map(getpid(), at_start));
  EXPECT_EQ(mapping.id(), at_start.id);
  const std::vector<std::byte> data = random_bytes(kBytes, rng);
  std::memcpy(first, data.data(), kBytes);
  EXPECT_EQ(std::memcmp(mapping.at(start, kBytes), data.data(), kBytes), 0);
  EXPECT_NE(mapping.at(start + 10, kBytes - 10), nullptr);
  EXPECT_EQ(mapping.at(start + 10, kBytes - 9), nullptr);
  EXPECT_EQ(mapping.at(start + kBytes + 1, 0), nullptr);
  EXPECT_EQ(mapping.at(start - 1, 0), nullptr);
  // The identity announces the array holding the source.
  std::uint64_t probe = 0;
  const single_copy::Identity self =
      single_copy::identify(probe, 1, single_copy::SharedBuffer(), static_cast<char *>(first) + 64);
  EXPECT_EQ(self.array.id, at_start.id);
  EXPECT_EQ(single_copy::identify(probe, 1, single_copy::SharedBuffer(), ordinary.data()).array.fd,
            -1);
  // Freed once; then unknown. The mapping made before stays readable.
  EXPECT_TRUE(single_copy::free_shared_array(first));
  EXPECT_FALSE(single_copy::free_shared_array(first));
  EXPECT_EQ(single_copy::shared_array_of(first).fd, -1);
  EXPECT_FALSE(single_copy::free_shared_array(ordinary.data()));
  EXPECT_EQ(std::memcmp(mapping.at(start, kBytes), data.data(), kBytes), 0);
  single_copy::Mapping late;
  EXPECT_FALSE(late.map(getpid(), at_start)); // its descriptor is closed
  EXPECT_TRUE(single_copy::free_shared_array(second));
  EXPECT_EQ(single_copy::allocate_shared_array(0), nullptr);
}

TEST(SingleCopyWay, FollowsThePiecesAndTheMode) {
  using single_copy::Mode;
  using single_copy::Way;
  const std::size_t mib = std::size_t{1} << 20;
  // Whole columns on both sides: read straight in.
  EXPECT_EQ(single_copy::cheapest_way({64 * mib, 1024, 1024}, Mode::automatic, {}), Way::direct);
  // Whole columns at the sender, 512-byte pieces here: through the bounce buffer.
  EXPECT_EQ(single_copy::cheapest_way({64 * mib, 1024, 64 * mib / 512}, Mode::automatic, {}),
            Way::bounced);
  // 64-byte pieces at the sender: pinning a page per piece costs more than packing.
  EXPECT_EQ(single_copy::cheapest_way({64 * mib, mib, mib}, Mode::automatic, {}), Way::read_packed);
  // The same pieces with the sender's buffer mapped: unpacked straight from it; and so are
  // whole columns at the sender going to 512-byte pieces here.
  EXPECT_EQ(single_copy::cheapest_way({64 * mib, mib, mib}, Mode::automatic, {.buffer = true}),
            Way::mapped);
  EXPECT_EQ(single_copy::cheapest_way({64 * mib, 1024, 64 * mib / 512}, Mode::automatic,
                                      {.buffer = true}),
            Way::mapped);
  // Whole columns still read straight in, mapped or not.
  EXPECT_EQ(single_copy::cheapest_way({64 * mib, 1024, 1024}, Mode::automatic, {.buffer = true}),
            Way::direct);
  // From the sender's mapped array even 64-byte pieces are copied straight.
  EXPECT_EQ(single_copy::cheapest_way({64 * mib, mib, mib}, Mode::automatic, {.array = true}),
            Way::direct);
  EXPECT_EQ(single_copy::cheapest_way({64 * mib, mib, mib}, Mode::automatic,
                                      {.buffer = true, .array = true}),
            Way::direct);
  // A few hundred bytes: MPI's eager message beats a round trip.
  EXPECT_EQ(single_copy::cheapest_way({512, 4, 4}, Mode::automatic, {}), Way::sent);
  EXPECT_EQ(single_copy::cheapest_way({512, 4, 4}, Mode::automatic, {.buffer = true}), Way::sent);
  for (const single_copy::PieceCounts counts :
       {single_copy::PieceCounts{512, 4, 4}, single_copy::PieceCounts{64 * mib, mib, mib}}) {
    EXPECT_NE(single_copy::cheapest_way(counts, Mode::always, {}), Way::sent);
    EXPECT_EQ(single_copy::cheapest_way(counts, Mode::direct, {}), Way::direct);
    EXPECT_EQ(single_copy::cheapest_way(counts, Mode::bounced, {}), Way::bounced);
    EXPECT_EQ(single_copy::cheapest_way(counts, Mode::read_packed, {}), Way::read_packed);
    EXPECT_EQ(single_copy::cheapest_way(counts, Mode::read_packed, {.buffer = true}),
              Way::read_packed);
    EXPECT_EQ(single_copy::cheapest_way(counts, Mode::mapped, {.buffer = true}), Way::mapped);
    EXPECT_EQ(single_copy::cheapest_way(counts, Mode::mapped, {}), Way::read_packed);
    EXPECT_NE(single_copy::cheapest_way(counts, Mode::always, {}), Way::mapped);
  }
  // A transposed message (pdtran 4000^2 at 2 ranks: 40000 pieces of 800 bytes at the sender):
  // reading it from the sender's array was measured slower than packing it (transposed) and
  // reading or mapping the packed message; the forced ways stay forced.
  const single_copy::PieceCounts transposed{32 * mib, 40000, 40000, true};
  EXPECT_EQ(single_copy::cheapest_way(transposed, Mode::automatic, {}), Way::read_packed);
  EXPECT_EQ(single_copy::cheapest_way(transposed, Mode::automatic, {.buffer = true}), Way::mapped);
  EXPECT_EQ(single_copy::cheapest_way(transposed, Mode::bounced, {}), Way::bounced);
  EXPECT_EQ(single_copy::cheapest_way(transposed, Mode::direct, {}), Way::direct);
}

TEST(SingleCopyWay, CombinedMessagesAreMappedRatherThanReadFromAnUnmappedArray) {
  using single_copy::Mode;
  using single_copy::Way;
  const std::size_t mib = std::size_t{1} << 20;
  // Whole columns: read straight in for a copy; combined, unpacked from the mapped buffer,
  // unless the sender's array is mapped too (then combined straight from it).
  single_copy::PieceCounts columns{2 * mib, 128, 128};
  EXPECT_EQ(single_copy::cheapest_way(columns, Mode::automatic, {.buffer = true}), Way::direct);
  columns.combines = true;
  EXPECT_EQ(single_copy::cheapest_way(columns, Mode::automatic, {.buffer = true}), Way::mapped);
  EXPECT_EQ(single_copy::cheapest_way(columns, Mode::automatic, {.buffer = true, .array = true}),
            Way::direct);
  // A forced way stays forced.
  EXPECT_EQ(single_copy::cheapest_way(columns, Mode::direct, {.buffer = true}), Way::direct);
}

TEST(SingleCopyWay, PackedOnlyMessagesAreSentOrMapped) {
  using single_copy::Mode;
  using single_copy::Way;
  const std::size_t mib = std::size_t{1} << 20;
  // A batch's message: whole columns, which a single array would have read straight in, are
  // unpacked from the mapped buffer; without it, sent, whatever the mode forces.
  const single_copy::PieceCounts large{64 * mib, 1024, 1024, false, true};
  const single_copy::PieceCounts small{512, 4, 4, false, true};
  EXPECT_EQ(single_copy::cheapest_way(large, Mode::automatic, {.buffer = true, .array = true}),
            Way::mapped);
  EXPECT_EQ(single_copy::cheapest_way(large, Mode::automatic, {}), Way::sent);
  // A few hundred bytes: MPI's eager message, unless a mode asks for a read.
  EXPECT_EQ(single_copy::cheapest_way(small, Mode::automatic, {.buffer = true}), Way::sent);
  EXPECT_EQ(single_copy::cheapest_way(small, Mode::always, {.buffer = true}), Way::mapped);
  EXPECT_EQ(single_copy::cheapest_way(small, Mode::mapped, {.buffer = true}), Way::mapped);
  for (const single_copy::PieceCounts &counts : {large, small}) {
    for (const Mode mode : {Mode::never, Mode::direct, Mode::bounced, Mode::read_packed}) {
      EXPECT_EQ(single_copy::cheapest_way(counts, mode, {.buffer = true, .array = true}),
                Way::sent);
    }
    for (const Mode mode : {Mode::automatic, Mode::always, Mode::mapped}) {
      EXPECT_EQ(single_copy::cheapest_way(counts, mode, {.array = true}), Way::sent);
    }
  }
}

TEST(SingleCopyWay, MayBeMappedWhereverAReceiverWouldMap) {
  using single_copy::Mode;
  using single_copy::Way;
  // Every way cheapest_way can pick with the sender's buffer mapped, over messages of 8 bytes
  // to 64 MiB in pieces of every size, copied or combined, transposed or not, packed only or
  // not, the sender's array mapped or not: `mapped` only for sizes may_be_mapped admits. And
  // the boundary is tight: some message of the first size admitted is mapped.
  // (Under `never` no receiver asks cheapest_way: it reads nothing.)
  EXPECT_FALSE(single_copy::may_be_mapped(std::size_t{64} << 20, Mode::never));
  const Mode modes[] = {Mode::automatic, Mode::always, Mode::direct,
                        Mode::bounced,   Mode::mapped, Mode::read_packed};
  for (const Mode mode : modes) {
    std::size_t first_admitted = 0;
    bool mapped_at_first_admitted = false;
    for (std::size_t bytes = 8; bytes <= std::size_t{64} << 20; bytes += bytes / 8 + 8) {
      const bool admitted = single_copy::may_be_mapped(bytes, mode);
      if (admitted && first_admitted == 0) first_admitted = bytes;
      for (const std::size_t piece : {std::size_t{8}, std::size_t{64}, std::size_t{512}, bytes}) {
        const std::size_t pieces = std::max<std::size_t>(bytes / piece, 1);
        for (const std::size_t local : {std::size_t{1}, pieces, 4 * pieces}) {
          for (const unsigned flags : {0U, 1U, 2U, 4U, 7U}) {
            single_copy::PieceCounts counts{bytes, pieces, local, (flags & 1U) != 0,
                                            (flags & 2U) != 0};
            counts.combines = (flags & 4U) != 0;
            for (const bool array : {false, true}) {
              const Way way =
                  single_copy::cheapest_way(counts, mode, {.buffer = true, .array = array});
              if (way == Way::mapped) {
                ASSERT_TRUE(admitted) << "bytes " << bytes << ", mode " << static_cast<int>(mode)
                                      << ", flags " << flags;
                if (bytes == first_admitted) mapped_at_first_admitted = true;
              }
            }
          }
        }
      }
    }
    const bool maps = mode == Mode::automatic || mode == Mode::always || mode == Mode::mapped;
    EXPECT_EQ(first_admitted != 0, maps) << static_cast<int>(mode);
    if (maps) {
      EXPECT_TRUE(mapped_at_first_admitted) << static_cast<int>(mode);
    }
  }
  // Under `automatic`: none of the 2 KiB messages of a 32 x 32 copy, nor any MPI sends
  // eagerly; the 8 KiB ones of 64 x 64 and the 32 KiB ones of 128 x 128, which MPI would send
  // in a rendezvous.
  EXPECT_FALSE(single_copy::may_be_mapped(2048, Mode::automatic));
  EXPECT_FALSE(single_copy::may_be_mapped(4096, Mode::automatic));
  EXPECT_TRUE(single_copy::may_be_mapped(4097, Mode::automatic));
  EXPECT_TRUE(single_copy::may_be_mapped(8192, Mode::automatic));
  EXPECT_TRUE(single_copy::may_be_mapped(32768, Mode::automatic));
}

TEST(SingleCopyWay, SentWhateverThePiecesHoldsForEveryPieceCount) {
  using single_copy::Mode;
  using single_copy::Way;
  // For messages of 1 to 600 elements of 4, 8 and 16 bytes, every flag and mode: where
  // sent_whatever_the_pieces says so, cheapest_way sends every piece count on either side,
  // mapped buffer and array or not, copied or combined. Both answers occur under `automatic`.
  int sent_everywhere = 0;
  int not_sent_somewhere = 0;
  for (const std::size_t element : {std::size_t{4}, std::size_t{8}, std::size_t{16}}) {
    for (std::size_t elements = 1; elements <= 600; elements += elements < 40 ? 1 : 37) {
      const std::size_t bytes = elements * element;
      for (const Mode mode : {Mode::automatic, Mode::always, Mode::never, Mode::direct,
                              Mode::bounced, Mode::mapped, Mode::read_packed}) {
        for (const unsigned flags : {0U, 1U, 2U, 3U}) {
          const bool transposes = (flags & 1U) != 0;
          const bool packed_only = (flags & 2U) != 0;
          const bool answer =
              single_copy::sent_whatever_the_pieces(bytes, elements, transposes, packed_only, mode);
          if (mode == Mode::automatic) (answer ? sent_everywhere : not_sent_somewhere) += 1;
          if (!answer || mode == Mode::never) continue; // never: nobody asks cheapest_way
          for (std::size_t remote = 1; remote <= elements; remote += 1 + elements / 16) {
            for (std::size_t local = 1; local <= elements; local += 1 + elements / 16) {
              for (const bool combines : {false, true}) {
                const single_copy::PieceCounts counts{bytes,      remote,      local,
                                                      transposes, packed_only, combines};
                for (const single_copy::Mapped mapped :
                     {single_copy::Mapped{}, single_copy::Mapped{.buffer = true},
                      single_copy::Mapped{.array = true},
                      single_copy::Mapped{.buffer = true, .array = true}}) {
                  ASSERT_EQ(single_copy::cheapest_way(counts, mode, mapped), Way::sent)
                      << bytes << " bytes, " << remote << " / " << local << " pieces, flags "
                      << flags << ", combines " << combines;
                }
              }
            }
          }
        }
      }
    }
  }
  EXPECT_GT(sent_everywhere, 0);
  EXPECT_GT(not_sent_somewhere, 0);
  // A 32 x 32 copy's 2 KiB messages are sent whatever; a 64 x 64 copy's 8 KiB and a 64 KiB
  // one are not.
  EXPECT_TRUE(single_copy::sent_whatever_the_pieces(2048, 256, false, false, Mode::automatic));
  EXPECT_FALSE(single_copy::sent_whatever_the_pieces(8192, 1024, false, false, Mode::automatic));
  EXPECT_FALSE(single_copy::sent_whatever_the_pieces(65536, 8192, false, false, Mode::automatic));
  EXPECT_TRUE(single_copy::sent_whatever_the_pieces(65536, 8192, false, false, Mode::never));
  EXPECT_FALSE(single_copy::sent_whatever_the_pieces(8, 1, false, false, Mode::always));
}

TEST(RunPattern, IndexOfInvertsCountBelow) {
  test::Random rng(3);
  int checked = 0;
  for (int trial = 0; trial < 300; ++trial) {
    const Transfer1D t = test::random_transfer(rng, 950, 40, 5);
    for (const RunPattern &pattern : runs_from_source(t, rng.uniform_int(0, t.src.nprocs - 1))) {
      std::vector<Index> indices; // window index of every element, in order
      pattern.for_each([&](const redist::Run &r) {
        for (Index e = 0; e < r.length; ++e) {
          indices.push_back(r.k + e);
        }
      });
      ASSERT_EQ(static_cast<Index>(indices.size()), pattern.total());
      for (std::size_t c = 0; c < indices.size(); ++c) {
        ASSERT_EQ(pattern.index_of(static_cast<Index>(c)), indices[c]) << "element " << c;
        ++checked;
      }
    }
  }
  EXPECT_GT(checked, 10000);
}

// RowGroups keep one stored period of groups (at least 1,024 window indices): replayed over
// the window they give every element of the pattern, in order, at its local indices.
TEST(RowGroups, ReplayEveryElementOfThePattern) {
  test::Random rng(8);
  int periods_replayed = 0;
  int single_groups = 0;
  int collapsed = 0;
  for (int trial = 0; trial < 400; ++trial) {
    // Small blocks give periods far shorter than the window.
    const Transfer1D t = test::random_transfer(rng, 30000, trial % 2 == 0 ? 8 : 40, 4);
    for (const RunPattern &pattern : runs_from_source(t, 0)) {
      std::vector<std::pair<Index, Index>> expected; // (src, dst) local index of each element
      pattern.for_each([&](const redist::Run &r) {
        for (Index e = 0; e < r.length; ++e) {
          expected.emplace_back(r.src_local + e, r.dst_local + e);
        }
      });
      const RowGroups groups = row_groups(pattern);
      std::vector<std::pair<Index, Index>> got;
      groups.for_each([&](const RowGroup &g, Index src_shift, Index dst_shift) {
        for (Index i = 0; i < g.count; ++i) {
          for (Index e = 0; e < g.length; ++e) {
            got.emplace_back(g.src + src_shift + i * g.src_step + e,
                             g.dst + dst_shift + i * g.dst_step + e);
          }
        }
      });
      ASSERT_EQ(got, expected) << "trial " << trial;
      // only(): the one group for_each visits, exactly when it visits one.
      int visits = 0;
      const RowGroup *visited = nullptr;
      groups.for_each([&](const RowGroup &g, Index src_shift, Index dst_shift) {
        ++visits;
        visited = src_shift == 0 && dst_shift == 0 ? &g : nullptr;
      });
      ASSERT_EQ(groups.only(), visits == 1 ? visited : nullptr) << "trial " << trial;
      single_groups += visits == 1 ? 1 : 0;
      // Periods that continue one another at the same steps collapse into one group.
      collapsed += visits == 1 && pattern.window_length() >= 2 * pattern.period() ? 1 : 0;
      periods_replayed += groups.periods > 1 ? 1 : 0;
      // Memory follows one period of the pattern, not the window.
      EXPECT_LE(groups.period.size() + groups.tail.size(), 2 * pattern.period_runs().size() + 2);
    }
  }
  EXPECT_GT(periods_replayed, 100);
  EXPECT_GT(single_groups, 10);
  EXPECT_GT(collapsed, 10);
}

} // namespace
} // namespace redist

