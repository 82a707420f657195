// The transports' copies alone, without MPI (src/exec/transport/): the local copy, packing and
// unpacking in chunks, and the receiver's half of each single-copy way (read from the sender's
// array directly or bounced, read packed, unpacked from a mapped buffer, copied from a mapped
// shared array), with this process as both sender and receiver. Plans of ranks 0 and 1 of a
// two-rank transfer (full and upper-trapezoid windows); every element of each rank's
// destination array is checked against positions computed here from the block-cyclic
// definitions (reference.hpp). Cross-memory reads and mappings the kernel refuses are skipped.
#include "array_copy.hpp"
#include "array_read.hpp"
#include "copy.hpp"
#include "mapped_read.hpp"
#include "packed_read.hpp"
#include "pieces.hpp"
#include "plan.hpp"
#include "reference.hpp"
#include "single_copy.hpp"

#include <gtest/gtest.h>

#include <sys/uio.h>
#include <unistd.h>

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <vector>

namespace redist::test {
namespace {

constexpr Index kLldSrc = 43; // padded
constexpr Index kLldDst = 41;
constexpr double kUntouched = -1.0;

bool cross_memory_attach_works() {
  std::uint64_t source = 0x0123'4567'89AB'CDEFULL;
  std::uint64_t target = 0;
  iovec local{&target, sizeof target};
  iovec remote{&source, sizeof source};
  return process_vm_readv(getpid(), &local, 1, &remote, 1, 0) ==
             static_cast<ssize_t>(sizeof target) &&
         target == source;
}

// Rank 0 holds the whole source window; the destination's columns are cyclic over ranks 1, 0.
struct Case {
  Transfer t;
  RankPlan plans[2];
  std::vector<double> a; // rank 0's source array
  std::vector<double> expected[2];

  explicit Case(Region::Kind kind) {
    t.m = 37;
    t.n = 23;
    t.region.kind = kind;
    t.src.rows = {40, 5, 1, 0};
    t.src.cols = {25, 3, 1, 0};
    t.src.grid = {1, 1, {0}};
    t.src.i = 2;
    t.src.j = 1;
    t.dst.rows = {39, 4, 1, 0};
    t.dst.cols = {24, 2, 2, 1};
    t.dst.grid = {1, 2, {1, 0}};
    t.dst.i = 1;
    t.dst.j = 0;
    for (int r = 0; r < 2; ++r) {
      plans[r] = make_rank_plan(t, r, 2);
    }
    a.assign(static_cast<std::size_t>(kLldSrc * 25), 0.0);
    for (Index c = 0; c < 25; ++c) {
      for (Index r = 0; r < 40; ++r) {
        a[static_cast<std::size_t>(r + c * kLldSrc)] = 1.0 + static_cast<double>(r + 1000 * c);
      }
    }
    for (int r = 0; r < 2; ++r) {
      expected[r] = fresh(r);
    }
    for (Index wj = 0; wj < t.n; ++wj) {
      for (Index wi = 0; wi < t.m; ++wi) {
        if (!reference_copied(kind, false, wi, wj, t.m, t.n)) {
          continue;
        }
        const Index g = t.dst.j + wj;
        const int rank = t.dst.grid.ranks[static_cast<std::size_t>(ref_owner(t.dst.cols, g))];
        const Index to = t.dst.i + wi + ref_local(t.dst.cols, g) * kLldDst;
        const Index from = t.src.i + wi + (t.src.j + wj) * kLldSrc;
        expected[rank][static_cast<std::size_t>(to)] = a[static_cast<std::size_t>(from)];
      }
    }
  }

  [[nodiscard]] std::vector<double> fresh(int rank) const {
    return std::vector<double>(
        static_cast<std::size_t>(kLldDst *
                                 std::max<Index>(1, t.dst.cols.local_extent(rank == 1 ? 0 : 1))),
        kUntouched);
  }
  [[nodiscard]] Pieces pieces(int rank) const {
    return Pieces(plans[rank], sizeof(double), kLldSrc, kLldDst);
  }
};

const std::byte *bytes(const std::vector<double> &v) {
  return reinterpret_cast<const std::byte *>(v.data());
}
std::byte *bytes(std::vector<double> &v) {
  return reinterpret_cast<std::byte *>(v.data());
}

constexpr Region::Kind kKinds[] = {Region::Kind::full, Region::Kind::upper};

TEST(Transports, LocalCopy) {
  for (const Region::Kind kind : kKinds) {
    const Case c(kind);
    ASSERT_GT(c.plans[0].self.elements, 0);
    std::vector<double> b = c.fresh(0);
    c.pieces(0).copy_local(bytes(c.a), bytes(b));
    EXPECT_EQ(b, c.expected[0]) << static_cast<int>(kind);
  }
}

// A transposed local copy large enough to stream (kStreamingBytes), into B at every offset
// within a cache line, with leading dimensions of B that put its columns at one place in their
// lines (a multiple of 8: streamed in column pairs) and at every place (odd) or every other
// (even), which pieces_transposed.cpp transposes in the cache: the sub-blocks' edges move to B's
// cache lines (line_edge), and each element must still land once, where B(i, j) = A(j, i) puts it.
TEST(Transports, LargeTransposedLocalCopyAtEveryAlignment) {
  constexpr Index kN = 1030; // 8.1 MiB of doubles
  constexpr Index kLldA = kN + 3;
  for (const Index lld_b : {kN + 1, kN + 2, kN + 4}) {
    Transfer t;
    t.m = kN;
    t.n = kN;
    t.perm = {1, 0};
    t.src.rows = {kN, 64, 1, 0};
    t.src.cols = {kN, 64, 1, 0};
    t.src.grid = {1, 1, {0}};
    t.dst.rows = {kN, 100, 1, 0};
    t.dst.cols = {kN, 100, 1, 0};
    t.dst.grid = {1, 1, {0}};
    const RankPlan plan = make_rank_plan(t, 0, 1);
    ASSERT_GE(static_cast<std::size_t>(plan.self.elements) * sizeof(double), kStreamingBytes);
    std::vector<double> a(static_cast<std::size_t>(kLldA * kN));
    for (std::size_t k = 0; k < a.size(); ++k) {
      a[k] = static_cast<double>(k);
    }
    constexpr std::size_t kLineDoubles = 8;
    std::vector<double> storage(static_cast<std::size_t>(lld_b * kN) + 2 * kLineDoubles);
    const auto line_start =
        static_cast<std::size_t>((kLineDoubles - reinterpret_cast<std::uintptr_t>(storage.data()) /
                                                     sizeof(double) % kLineDoubles) %
                                 kLineDoubles);
    const Pieces pieces(plan, sizeof(double), kLldA, lld_b);
    for (std::size_t offset = 0; offset < kLineDoubles; ++offset) {
      std::fill(storage.begin(), storage.end(), kUntouched);
      double *b = storage.data() + line_start + offset;
      pieces.copy_local(bytes(a), reinterpret_cast<std::byte *>(b));
      streaming_fence();
      long long wrong = 0;
      for (Index j = 0; j < lld_b * kN; ++j) {
        const Index row = j % lld_b;
        const Index col = j / lld_b;
        const double want = row < kN ? a[static_cast<std::size_t>(col + row * kLldA)] : kUntouched;
        wrong += b[j] != want ? 1 : 0;
      }
      EXPECT_EQ(wrong, 0) << "B at " << offset << " doubles past a cache line, leading dimension "
                          << lld_b;
      const std::size_t end = line_start + offset + static_cast<std::size_t>(lld_b * kN);
      EXPECT_TRUE(std::all_of(storage.begin(),
                              storage.begin() + static_cast<std::ptrdiff_t>(line_start + offset),
                              [](double x) { return x == kUntouched; }) &&
                  std::all_of(storage.begin() + static_cast<std::ptrdiff_t>(end), storage.end(),
                              [](double x) { return x == kUntouched; }))
          << "written outside B at offset " << offset << ", leading dimension " << lld_b;
    }
  }
}

// The data path of the way `sent`: packed by the sender, unpacked by the receiver in chunks.
TEST(Transports, PackThenUnpackInChunks) {
  for (const Region::Kind kind : kKinds) {
    const Case c(kind);
    ASSERT_EQ(c.plans[0].sends.size(), 1U);
    ASSERT_EQ(c.plans[1].recvs.size(), 1U);
    const Pieces sender = c.pieces(0);
    const Pieces receiver = c.pieces(1);
    const Index n = c.plans[1].recvs[0].elements;
    std::vector<double> message(static_cast<std::size_t>(n));
    std::vector<double> b = c.fresh(1);
    for (Index lo = 0; lo < n; lo += 29) {
      const Index hi = std::min(n, lo + 29);
      sender.pack(c.plans[0].sends[0], bytes(c.a), bytes(message), lo, hi);
      receiver.unpack(c.plans[1].recvs[0], bytes(message), bytes(b), lo, hi);
    }
    EXPECT_EQ(b, c.expected[1]) << static_cast<int>(kind);
  }
}

// Pieces of every length from 1 to 40 elements of 4, 8 and 16 bytes: every fixed-size loop of
// the short-piece copy (4 to 192 bytes) and the lengths around them. Rank 0 holds whole
// columns; the destination's rows are block-cyclic over ranks 0 and 1 in blocks of that length
// (so each column is eight pieces of it and a shorter last one: groups of pieces at constant
// steps, as a long window has them). The local copy and a pack and
// unpack must put every element, byte for byte, where the block-cyclic definitions say.
TEST(Transports, PiecesOfEveryShortLength) {
  for (const std::size_t es : {std::size_t{4}, std::size_t{8}, std::size_t{16}}) {
    for (Index block = 1; block <= 40; ++block) {
      Transfer t;
      t.m = 8 * block + 5;
      t.n = 7;
      t.src.rows = {t.m, t.m, 1, 0};
      t.src.cols = {t.n, t.n, 1, 0};
      t.src.grid = {1, 1, {0}};
      t.dst.rows = {t.m, block, 2, 0};
      t.dst.cols = {t.n, t.n, 1, 0};
      t.dst.grid = {2, 1, {0, 1}};
      const Index lld_a = t.m + 3;
      const Index lld_b = t.m + 1;
      std::vector<std::byte> a(static_cast<std::size_t>(lld_a * t.n) * es);
      for (std::size_t k = 0; k < a.size(); ++k) {
        a[k] = static_cast<std::byte>((k * 131 + 7) % 251);
      }
      std::vector<std::byte> b[2];
      std::vector<std::byte> expected[2];
      for (int r = 0; r < 2; ++r) {
        b[r].assign(static_cast<std::size_t>(lld_b * t.n) * es, std::byte{0xEE});
        expected[r] = b[r];
      }
      for (Index gj = 0; gj < t.n; ++gj) {
        for (Index gi = 0; gi < t.m; ++gi) {
          const int rank = ref_owner(t.dst.rows, gi);
          const auto to = static_cast<std::size_t>(ref_local(t.dst.rows, gi) + gj * lld_b) * es;
          const auto from = static_cast<std::size_t>(gi + gj * lld_a) * es;
          std::memcpy(&expected[rank][to], &a[from], es);
        }
      }
      const RankPlan sender = make_rank_plan(t, 0, 2);
      const RankPlan receiver = make_rank_plan(t, 1, 2);
      ASSERT_EQ(sender.sends.size(), 1U);
      ASSERT_EQ(receiver.recvs.size(), 1U);
      const Pieces from_rank0(sender, es, lld_a, lld_b);
      const Pieces into_rank1(receiver, es, lld_a, lld_b);
      from_rank0.copy_local(a.data(), b[0].data());
      std::vector<std::byte> message(static_cast<std::size_t>(receiver.recvs[0].elements) * es);
      from_rank0.pack(sender.sends[0], a.data(), message.data());
      into_rank1.unpack(receiver.recvs[0], message.data(), b[1].data());
      EXPECT_EQ(b[0], expected[0]) << "local copy, " << es << "-byte elements, blocks of " << block;
      EXPECT_EQ(b[1], expected[1])
          << "pack and unpack, " << es << "-byte elements, blocks of " << block;
    }
  }
}

single_copy::Identity me() {
  single_copy::Identity id;
  id.pid = getpid();
  id.lld = kLldSrc;
  return id;
}

TEST(Transports, ArrayReadDirectAndBounced) {
  if (!cross_memory_attach_works()) {
    GTEST_SKIP() << "process_vm_readv is not permitted here";
  }
  for (const Region::Kind kind : kKinds) {
    for (const bool bounced : {false, true}) {
      const Case c(kind);
      const Pieces receiver = c.pieces(1);
      ReadScratch scratch;
      scratch.bounce = std::make_unique<std::byte[]>(single_copy::kBounceBytes);
      ArrayCopy arrays(receiver);
      ArrayRead way(receiver, scratch, arrays, bounced);
      const single_copy::Address at{reinterpret_cast<std::uintptr_t>(c.a.data()), {}};
      const Index n = c.plans[1].recvs[0].elements;
      std::vector<double> b = c.fresh(1);
      Index done = -1;
      ASSERT_EQ(way.read(0, me(), at, 0, n / 3, bytes(b), done), 0);
      EXPECT_EQ(done, n / 3);
      ASSERT_EQ(way.read(0, me(), at, n / 3, n, bytes(b), done), 0);
      EXPECT_EQ(done, n);
      EXPECT_EQ(b, c.expected[1]) << static_cast<int>(kind) << " bounced " << bounced;
      EXPECT_EQ(arrays.copies(), 0U);
      const single_copy::Address nowhere{8, {}};
      EXPECT_NE(way.read(0, me(), nowhere, 0, n, bytes(b), done), 0);
      EXPECT_EQ(done, 0);
    }
  }
}

// A transposed plan's message read from the sender's array (Pieces::read_transposed), copied
// and combined (B := -2 A^T + 0.5 B, exact in doubles): 300 of B's rows per column (bands of
// 128 rows in the bounce buffer) by 349 of B's columns in runs of 3 (blocks of 256 columns),
// read in three windows that start and end inside columns. Checked against positions from the
// block-cyclic definitions.
TEST(Transports, TransposedArrayReadInRectangles) {
  if (!cross_memory_attach_works()) {
    GTEST_SKIP() << "process_vm_readv is not permitted here";
  }
  constexpr Index kLldA = 705;
  constexpr Index kLldB = 301;
  Transfer t;
  t.m = 300;
  t.n = 700;
  t.perm = {1, 0};
  t.src.rows = {702, 7, 1, 0};
  t.src.cols = {303, 4, 1, 0};
  t.src.grid = {1, 1, {0}};
  t.src.i = 2;
  t.src.j = 3;
  t.dst.rows = {300, 10, 1, 0};
  t.dst.cols = {700, 3, 2, 1};
  t.dst.grid = {1, 2, {1, 0}};
  const RankPlan plan = make_rank_plan(t, 1, 2);
  ASSERT_EQ(plan.recvs.size(), 1U);
  std::vector<double> a(static_cast<std::size_t>(kLldA * 303), 0.0);
  for (Index c = 0; c < 303; ++c) {
    for (Index r = 0; r < 702; ++r) {
      a[static_cast<std::size_t>(r + c * kLldA)] = 1.0 + static_cast<double>(r + 1000 * c);
    }
  }
  const Index local_cols = t.dst.cols.local_extent(0); // rank 1 is grid column 0
  const double alpha = -2.0;
  const double beta = 0.5;
  for (const bool combines : {false, true}) {
    std::vector<double> expected(static_cast<std::size_t>(kLldB * local_cols), kUntouched);
    Index extent = 0; // A's elements up to the last one read
    for (Index wj = 0; wj < t.n; ++wj) {
      if (ref_owner(t.dst.cols, wj) != 0) {
        continue;
      }
      for (Index wi = 0; wi < t.m; ++wi) {
        extent = std::max(extent, t.src.i + wj + (t.src.j + wi) * kLldA + 1);
        const double from = a[static_cast<std::size_t>(t.src.i + wj + (t.src.j + wi) * kLldA)];
        expected[static_cast<std::size_t>(wi + ref_local(t.dst.cols, wj) * kLldB)] =
            combines ? alpha * from + beta * kUntouched : from;
      }
    }
    Pieces receiver(plan, sizeof(double), 1, kLldB);
    const Operation op = Operation::make(Scalar::f64, false, &alpha, &beta);
    if (combines) {
      receiver.set_operation(&op);
    }
    ReadScratch scratch;
    scratch.bounce = std::make_unique<std::byte[]>(single_copy::kBounceBytes);
    ArrayCopy arrays(receiver);
    ArrayRead way(receiver, scratch, arrays, true);
    single_copy::Identity sender = me();
    sender.lld = kLldA;
    const single_copy::Address at{reinterpret_cast<std::uintptr_t>(a.data()), {}};
    const Index n = plan.recvs[0].elements;
    ASSERT_EQ(n, 300 * local_cols);
    EXPECT_EQ(receiver.source_extent(plan.recvs[0], kLldA), extent); // for a mapped array
    std::vector<double> b(expected.size(), kUntouched);
    const Index cuts[] = {0, 1234, n - 77, n};
    for (int k = 0; k < 3; ++k) {
      Index done = -1;
      ASSERT_EQ(way.read(0, sender, at, cuts[k], cuts[k + 1], bytes(b), done), 0);
      EXPECT_EQ(done, cuts[k + 1]);
    }
    EXPECT_EQ(b, expected) << "combines " << combines;
    const single_copy::Address nowhere{8, {}};
    Index done = -1;
    EXPECT_NE(way.read(0, sender, nowhere, 0, n, bytes(b), done), 0);
    EXPECT_EQ(done, 0);
  }
}

TEST(Transports, PackedRead) {
  if (!cross_memory_attach_works()) {
    GTEST_SKIP() << "process_vm_readv is not permitted here";
  }
  for (const Region::Kind kind : kKinds) {
    const Case c(kind);
    const Pieces receiver = c.pieces(1);
    ReadScratch scratch;
    scratch.bounce = std::make_unique<std::byte[]>(single_copy::kBounceBytes);
    PackedRead way(receiver, scratch);
    const Index n = c.plans[1].recvs[0].elements;
    std::vector<double> message(static_cast<std::size_t>(n));
    std::vector<double> b = c.fresh(1);
    const Index half = n / 2;
    for (const auto &[lo, hi] : {std::pair{Index{0}, half}, std::pair{half, n}}) {
      c.pieces(0).pack(c.plans[0].sends[0], bytes(c.a), bytes(message), lo, hi);
      const single_copy::Address at{reinterpret_cast<std::uintptr_t>(message.data()), {}};
      Index done = -1;
      ASSERT_EQ(way.read(0, me(), at, lo, hi, bytes(b), done), 0);
      EXPECT_EQ(done, hi);
    }
    EXPECT_EQ(b, c.expected[1]) << static_cast<int>(kind);
  }
}

TEST(Transports, MappedRead) {
  for (const Region::Kind kind : kKinds) {
    const Case c(kind);
    const Pieces receiver = c.pieces(1);
    const Index n = c.plans[1].recvs[0].elements;
    const single_copy::SharedBuffer buffer(static_cast<std::size_t>(n) * sizeof(double), true);
    ArrayCopy arrays(receiver);
    MappedRead way(receiver, arrays);
    if (buffer.fd() < 0 || !way.map(0, getpid(), buffer.segment())) {
      GTEST_SKIP() << "no memory file can be mapped here";
    }
    c.pieces(0).pack(c.plans[0].sends[0], bytes(c.a), buffer.data());
    std::vector<double> b = c.fresh(1);
    const single_copy::Address at{reinterpret_cast<std::uintptr_t>(buffer.data()), {}};
    Index done = -1;
    ASSERT_EQ(way.read(0, me(), at, 0, n, bytes(b), done), 0);
    EXPECT_EQ(done, n);
    EXPECT_EQ(b, c.expected[1]) << static_cast<int>(kind);
    const single_copy::Address past{at.address + 8, {}}; // the message would end past the file
    EXPECT_EQ(way.read(0, me(), past, 0, n, bytes(b), done), EFAULT);
    EXPECT_EQ(done, 0);
  }
}

// A message whose sender's source is a shared array (redist_alloc): the address names the
// array, and the receiver copies the pieces from the array's mapping, whether the message was
// to be read from the sender's array (ArrayRead) or, not packed, went `mapped` (MappedRead).
TEST(Transports, ArrayCopyFromASharedArray) {
  for (const bool mapped : {false, true}) {
    for (const Region::Kind kind : kKinds) {
      const Case c(kind);
      const std::size_t size = c.a.size() * sizeof(double);
      void *shared = single_copy::allocate_shared_array(size);
      if (shared == nullptr) {
        GTEST_SKIP() << "no shared arrays here";
      }
      std::memcpy(shared, c.a.data(), size);
      const Pieces receiver = c.pieces(1);
      ReadScratch scratch; // no bounce buffer: a copy from the mapped array needs none
      ArrayCopy arrays(receiver);
      ArrayRead array_read(receiver, scratch, arrays, true);
      MappedRead mapped_read(receiver, arrays);
      MessageRead &way = mapped ? static_cast<MessageRead &>(mapped_read) : array_read;
      const single_copy::Address at{reinterpret_cast<std::uintptr_t>(shared),
                                    single_copy::shared_array_of(shared)};
      ASSERT_GE(at.array.fd, 0);
      const Index n = c.plans[1].recvs[0].elements;
      std::vector<double> b = c.fresh(1);
      Index done = -1;
      const int rc = way.read(0, me(), at, 0, n, bytes(b), done);
      if (arrays.copies() == 0 && !cross_memory_attach_works()) {
        single_copy::free_shared_array(shared);
        GTEST_SKIP() << "the shared array cannot be mapped here";
      }
      EXPECT_EQ(rc, 0) << mapped;
      EXPECT_EQ(done, n);
      EXPECT_EQ(arrays.copies(), 1U);
      EXPECT_EQ(b, c.expected[1]) << static_cast<int>(kind) << " " << mapped;
      arrays.forget_copies();
      EXPECT_EQ(arrays.copies(), 0U);
      // The message would reach past the array: nothing is copied, and the read fails.
      const single_copy::Address past{at.address + size - sizeof(double), at.array};
      std::vector<double> untouched = c.fresh(1);
      EXPECT_EQ(way.read(0, me(), past, 0, n, bytes(untouched), done), EFAULT) << mapped;
      EXPECT_EQ(done, 0);
      EXPECT_EQ(untouched, c.fresh(1));
      EXPECT_TRUE(single_copy::free_shared_array(shared));
    }
  }
}

} // namespace
} // namespace redist::test
