#pragma once
// Copying the pieces of large arrays. A redistribution writes each destination element once
// and does not read it again, so the pieces of a large copy bypass the cache (x86-64
// streaming stores): no read-for-ownership of the destination lines. On this project's
// machine that copies 512-byte to 4 KiB pieces 1.6-1.8x faster (docs/studies/performance.md). No
// MPI.

#include <cstddef>

namespace redist {

/// Copies of at least this many bytes in total stream their pieces.
inline constexpr std::size_t kStreamingBytes = std::size_t{8} << 20;
/// ... each piece of at least this many bytes (four cache lines; shorter ones are stored).
inline constexpr std::size_t kStreamedPieceBytes = 4 * std::size_t{64};

/// Copy n bytes. With `streaming`, the whole cache lines of the destination are written with
/// streaming stores (call streaming_fence() before another process or thread reads them).
/// Overlapping ranges are copied as memmove does.
void copy_bytes(std::byte *to, const std::byte *from, std::size_t n, bool streaming);

/// `count` elements of `size` bytes, element e from `from + e * from_step`, to consecutive
/// places from `to` (a column of a transposition into a large destination): on x86-64, for
/// sizes 4, 8 and 16, the destination's whole cache lines with streaming stores; otherwise,
/// and the partial lines at the ends, element by element.
void stream_gather(std::byte *to, const std::byte *from, std::ptrdiff_t from_step,
                   std::size_t count, std::size_t size);

/// stream_gather of two columns of 8-byte elements at once: element e of column c (0 or 1) from
/// `from + e * from_step + c * 8` to `to + c * to_step + e * 8`, to_step a multiple of the
/// cache line (both columns start at the same place in a line). On x86-64, two 16-byte loads,
/// two unpacks and two streaming stores for four elements.
void stream_gather_pair_8(std::byte *to, std::ptrdiff_t to_step, const std::byte *from,
                          std::ptrdiff_t from_step, std::size_t count);

/// A height x width block of 8-byte elements transposed, in the cache: element (e, w) from
/// `from + e * from_step + w * 8` to `to + e * 8 + w * to_step` (steps in bytes; `from`
/// contiguous along w, `to` along e). On x86-64, 2 x 2 blocks through vector registers: two
/// 16-byte loads, two unpacks and two 16-byte stores for four elements.
void transpose_8(std::byte *to, std::ptrdiff_t to_step, const std::byte *from,
                 std::ptrdiff_t from_step, std::size_t height, std::size_t width);

/// transpose_8 for 4-byte elements: element (e, w) from `from + e * from_step + w * 4` to
/// `to + e * 4 + w * to_step`. On x86-64, 4 x 4 blocks through vector registers.
void transpose_4(std::byte *to, std::ptrdiff_t to_step, const std::byte *from,
                 std::ptrdiff_t from_step, std::size_t height, std::size_t width);

/// Orders the streaming stores before everything after it.
void streaming_fence();

} // namespace redist
