// copy_bench: the per-byte and per-piece costs behind single_copy::cheapest_way and
// copy_bytes (docs/performance.md), measured on this machine. No MPI: cross-memory reads go to
// this process's own memory, which takes the same kernel path (pages pinned per piece).
//
//   bench/copy_bench [--mib N] [--reps R]
//
// Prints medians of R repetitions, each moving N MiB:
//  1. one memcpy of the whole buffer;
//  2. process_vm_readv with remote pieces of each size (local side contiguous), then with
//     local pieces of each size (remote side contiguous);
//  3. pieces of each size copied with memcpy and with copy_bytes' streaming stores into every
//     other slot of the destination (the layout of a block-cyclic column half of which arrives
//     from another process);
//  4. a square matrix of doubles (N MiB) transposed in 32 x 32 sub-blocks: in the cache, an
//     element at a time and with transpose_8's 2 x 2 vector blocks; streamed, a column at a time
//     (stream_gather) and in column pairs (stream_gather_pair_8); and one square of 1/16 the
//     size (in the last-level cache) in the cache, both ways; then the same two squares of
//     floats in the cache, an element at a time and with transpose_4's 4 x 4 blocks, and the
//     large one streamed a column at a time (which 4-byte transpositions no longer take).
#include "copy.hpp"

#include <sys/uio.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <string>
#include <vector>

namespace {

double median_seconds(int reps, const std::function<void()> &run) {
  std::vector<double> times;
  for (int r = 0; r < reps; ++r) {
    const auto start = std::chrono::steady_clock::now();
    run();
    times.push_back(
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count());
  }
  std::sort(times.begin(), times.end());
  return times[times.size() / 2];
}

// Read `bytes` from `from` into `to` with process_vm_readv, in remote (or local) pieces of
// `piece` bytes, IOV_MAX pieces per call. False if the kernel refuses.
bool read_in_pieces(std::byte *to, const std::byte *from, std::size_t bytes, std::size_t piece,
                    bool remote_pieces) {
  constexpr std::size_t kMaxPieces = 1024;
  std::vector<iovec> pieces(kMaxPieces);
  for (std::size_t done = 0; done < bytes;) {
    const std::size_t start = done;
    std::size_t count = 0;
    while (done < bytes && count < kMaxPieces) {
      const std::size_t n = std::min(piece, bytes - done);
      pieces[count++] = {const_cast<std::byte *>(remote_pieces ? from + done : to + done), n};
      done += n;
    }
    iovec whole{const_cast<std::byte *>(remote_pieces ? to + start : from + start), done - start};
    const ssize_t got = remote_pieces
                            ? process_vm_readv(getpid(), &whole, 1, pieces.data(), count, 0)
                            : process_vm_readv(getpid(), pieces.data(), count, &whole, 1, 0);
    if (got != static_cast<ssize_t>(done - start)) {
      return false;
    }
  }
  return true;
}

} // namespace

// An n x n matrix of kSize-byte elements (doubles or floats; n rounded down) from `from`
// transposed into `to` in 32 x 32 sub-blocks, each way; each result checked against the first.
// `padded`: the columns of `to` one element apart more than n (a leading dimension that puts
// consecutive columns at different places in their cache lines; `to` must hold n (n + 1)).
template <std::size_t kSize>
void transpositions(int reps, const std::byte *from, std::byte *to, std::size_t bytes,
                    bool streamed, bool padded = false) {
  constexpr std::size_t kTile = 32;
  std::size_t n = 1;
  while ((n + 1) * (n + 1) * kSize <= bytes) {
    ++n;
  }
  const auto step = static_cast<std::ptrdiff_t>(n * kSize);
  const std::size_t to_column = (n + (padded ? 1 : 0)) * kSize;
  const auto to_step = static_cast<std::ptrdiff_t>(to_column);
  const auto blocks =
      [&](const std::function<void(std::size_t, std::size_t, std::size_t, std::size_t)> &block) {
        for (std::size_t w0 = 0; w0 < n; w0 += kTile) {
          for (std::size_t e0 = 0; e0 < n; e0 += kTile) {
            block(e0, std::min(n, e0 + kTile), w0, std::min(n, w0 + kTile));
          }
        }
      };
  // Element (e, w) of the result, column w, is element w of the source's column e.
  const auto at_to = [&](std::size_t e, std::size_t w) { return to + e * kSize + w * to_column; };
  const auto at_from = [&](std::size_t e, std::size_t w) {
    return from + w * kSize + e * n * kSize;
  };
  struct Way {
    const char *name;
    std::function<void()> run;
  };
  std::vector<Way> ways;
  if (streamed) {
    ways.push_back({"streamed, a column at a time", [&] {
                      blocks([&](std::size_t e0, std::size_t e1, std::size_t w0, std::size_t w1) {
                        for (std::size_t w = w0; w < w1; ++w) {
                          redist::stream_gather(at_to(e0, w), at_from(e0, w), step, e1 - e0, kSize);
                        }
                      });
                      redist::streaming_fence();
                    }});
    if (kSize == 8 && to_column % 64 == 0) { // pairs need columns at one place in their lines
      ways.push_back(
          {"streamed, column pairs", [&] {
             blocks([&](std::size_t e0, std::size_t e1, std::size_t w0, std::size_t w1) {
               std::size_t w = w0;
               for (; w + 2 <= w1; w += 2) {
                 redist::stream_gather_pair_8(at_to(e0, w), to_step, at_from(e0, w), step,
                                              e1 - e0);
               }
               if (w < w1) {
                 redist::stream_gather(at_to(e0, w), at_from(e0, w), step, e1 - e0, kSize);
               }
             });
             redist::streaming_fence();
           }});
    }
  }
  ways.push_back({"in the cache, an element at a time", [&] {
                    blocks([&](std::size_t e0, std::size_t e1, std::size_t w0, std::size_t w1) {
                      // Locals, as the executor's loop has them: the stores cannot change them.
                      const std::ptrdiff_t from_step = step;
                      for (std::size_t w = w0; w < w1; ++w) {
                        std::byte *t = at_to(0, w);
                        const std::byte *f = at_from(0, w);
                        for (std::size_t e = e0; e < e1; ++e) {
                          std::memcpy(t + e * kSize, f + static_cast<std::ptrdiff_t>(e) * from_step,
                                      kSize);
                        }
                      }
                    });
                  }});
  ways.push_back({kSize == 8 ? "in the cache, 2 x 2 blocks" : "in the cache, 4 x 4 blocks", [&] {
                    blocks([&](std::size_t e0, std::size_t e1, std::size_t w0, std::size_t w1) {
                      (kSize == 8 ? redist::transpose_8 : redist::transpose_4)(
                          at_to(e0, w0), to_step, at_from(e0, w0), step, e1 - e0, w1 - w0);
                    });
                  }});
  std::vector<std::byte> first;
  for (const Way &way : ways) {
    const double t = median_seconds(reps, way.run);
    std::vector<std::byte> result;
    for (std::size_t w = 0; w < n; ++w) {
      result.insert(result.end(), at_to(0, w), at_to(0, w) + n * kSize);
    }
    const bool same = first.empty() || result == first;
    if (first.empty()) {
      first = result;
    }
    std::printf("transposition of %5zu x %-5zu %-7s %-34s %8.2f ms  %6.2f GB/s%s\n", n, n,
                kSize == 8 ? (padded ? "doubles, columns n + 1 apart," : "doubles")
                           : "floats",
                way.name, t * 1e3,
                static_cast<double>(n * n * kSize) / t / 1e9, same ? "" : "  DIFFERS");
  }
}

int main(int argc, char **argv) {
  std::size_t mib = 128;
  int reps = 5;
  for (int i = 1; i + 1 < argc; i += 2) {
    const std::string arg = argv[i];
    if (arg == "--mib") {
      mib = std::strtoull(argv[i + 1], nullptr, 10);
    } else if (arg == "--reps") {
      reps = std::atoi(argv[i + 1]);
    } else {
      std::fprintf(stderr, "usage: copy_bench [--mib N] [--reps R]\n");
      return 2;
    }
  }
  const std::size_t bytes = mib << 20;
  std::vector<std::byte> source(bytes, std::byte{1});
  std::vector<std::byte> target(2 * bytes, std::byte{0});
  const auto rate = [&](double seconds) { return static_cast<double>(bytes) / seconds / 1e9; };

  const double whole =
      median_seconds(reps, [&] { std::memcpy(target.data(), source.data(), bytes); });
  std::printf("copy_bench: %zu MiB, median of %d\n", mib, reps);
  std::printf("memcpy, whole buffer                 %8.2f ms  %6.2f GB/s\n", whole * 1e3,
              rate(whole));

  // Largest first: the 1 MiB rate is the base the per-piece cost is measured against.
  const std::size_t sizes[] = {std::size_t{1} << 20, 65536, 8192, 2048, 512, 256, 64};
  for (const bool remote_pieces : {true, false}) {
    double base = 0.0;
    for (const std::size_t piece : sizes) {
      bool ok = true;
      const double t = median_seconds(reps, [&] {
        ok = ok && read_in_pieces(target.data(), source.data(), bytes, piece, remote_pieces);
      });
      if (!ok) {
        std::printf("process_vm_readv is not permitted here\n");
        return 0;
      }
      if (base == 0.0) {
        base = t;
      }
      const auto pieces = static_cast<double>(bytes) / static_cast<double>(piece);
      std::printf("cross-memory read, %s pieces %7zu B  %8.2f ms  %6.2f GB/s  %6.1f ns/piece "
                  "beyond the 1 MiB rate\n",
                  remote_pieces ? "remote" : "local ", piece, t * 1e3, rate(t),
                  (t - base) / pieces * 1e9);
    }
  }
  for (const std::size_t piece : {std::size_t{64}, std::size_t{512}, std::size_t{4096}}) {
    for (const bool streaming : {false, true}) {
      const double t = median_seconds(reps, [&] {
        for (std::size_t offset = 0; offset + piece <= bytes; offset += piece) {
          redist::copy_bytes(target.data() + 2 * offset, source.data() + offset, piece, streaming);
        }
        redist::streaming_fence();
      });
      std::printf("pieces of %5zu B to every other slot, %-9s %8.2f ms  %6.2f GB/s\n", piece,
                  streaming ? "streaming" : "memmove", t * 1e3, rate(t));
    }
  }
  for (const std::size_t divisor : {std::size_t{1}, std::size_t{16}}) {
    transpositions<8>(reps, source.data(), target.data(), bytes / divisor, divisor == 1);
    transpositions<8>(reps, source.data(), target.data(), bytes / divisor, divisor == 1, true);
  }
  for (const std::size_t divisor : {std::size_t{1}, std::size_t{16}}) {
    transpositions<4>(reps, source.data(), target.data(), bytes / divisor, divisor == 1);
  }
  return 0;
}
