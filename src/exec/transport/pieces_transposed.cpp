// Rectangles copied in cache-sized sub-blocks (a transposition in the cache, copy_rectangle) and
// the copies of transposed plans (Pieces::copy_transposed, tiles.hpp's tiles).

#include "pieces.hpp"

#include "copy.hpp"
#include "tiles.hpp"

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <utility>

namespace redist {
namespace {

// Element (e, w) of a height x width rectangle from `from` (steps from_e, from_w, in elements)
// to `to` (to_e, to_w), in kTransposeTile x kTransposeTile sub-blocks so that both sides of a
// transposition stay in the cache. N: the element size, 0 for `es` given at run time.
// `streaming` (a large copy): where `to` is contiguous along e, its columns are written with
// streaming stores (copy.hpp's stream_gather).
constexpr Index kTransposeTile = 32;

constexpr Index kCacheLine = 64;

// The first element at or after e (of a column starting at `column`, `height` elements of
// `size` bytes) that starts a cache line of the destination; e itself where lines and elements
// do not meet.
Index line_edge(const std::byte *column, Index e, Index height, std::size_t size) {
  constexpr auto kLine = static_cast<std::size_t>(kCacheLine);
  if (e <= 0 || e >= height) {
    return std::clamp<Index>(e, 0, height);
  }
  const std::size_t into =
      reinterpret_cast<std::uintptr_t>(column + static_cast<std::size_t>(e) * size) % kLine;
  if (into == 0 || (kLine - into) % size != 0) {
    return e;
  }
  return std::min(height, e + static_cast<Index>((kLine - into) / size));
}

template <std::size_t N, bool Gather>
void copy_rectangle(std::byte *to, Index to_e, Index to_w, const std::byte *from, Index from_e,
                    Index from_w, Index height, Index width, std::size_t es) {
  const std::size_t size = N > 0 ? N : es;
  for (Index w0 = 0; w0 < width; w0 += kTransposeTile) {
    const Index w1 = std::min(width, w0 + kTransposeTile);
    for (Index e0 = 0; e0 < height; e0 += kTransposeTile) {
      const Index e1 = std::min(height, e0 + kTransposeTile);
      if constexpr ((N == 8 || N == 4) && !Gather) {
        if (to_e == 1 && from_w == 1 && from_e != 1) { // a transposition, along its two axes
          (N == 8 ? transpose_8 : transpose_4)(
              to + static_cast<std::size_t>(e0 + w0 * to_w) * N, to_w * Index{N},
              from + static_cast<std::size_t>(e0 * from_e + w0) * N, from_e * Index{N},
              static_cast<std::size_t>(e1 - e0), static_cast<std::size_t>(w1 - w0));
          continue;
        }
      }
      for (Index w = w0; w < w1; ++w) {
        std::byte *t = to + static_cast<std::size_t>(w * to_w) * size;
        const std::byte *f = from + static_cast<std::size_t>(w * from_w) * size;
        if constexpr (Gather) { // to_e == 1
          // A sub-block's edges inside the column fall on the destination's cache lines: a
          // line split between two sub-blocks would be written through the cache, twice,
          // instead of streamed (with columns at 16 bytes past a line, pdtran 4000^2 at 2
          // ranks took 1.7x as long as with aligned ones).
          const Index lo = line_edge(t, e0, height, size);
          const Index hi = line_edge(t, e1, height, size);
          if constexpr (N == 8) {
            // Two columns at the same place in their lines: read in pairs along A's rows.
            if (w + 1 < w1 && from_w == 1 && to_w * Index{N} % kCacheLine == 0) {
              stream_gather_pair_8(t + static_cast<std::size_t>(lo) * N, to_w * Index{N},
                                   f + static_cast<std::size_t>(lo * from_e) * N, from_e * Index{N},
                                   static_cast<std::size_t>(hi - lo));
              ++w;
              continue;
            }
          }
          stream_gather(t + static_cast<std::size_t>(lo) * size,
                        f + static_cast<std::size_t>(lo * from_e) * size,
                        static_cast<std::ptrdiff_t>(from_e * static_cast<Index>(size)),
                        static_cast<std::size_t>(hi - lo), size);
        } else {
          for (Index e = e0; e < e1; ++e) {
            std::memcpy(t + static_cast<std::size_t>(e * to_e) * size,
                        f + static_cast<std::size_t>(e * from_e) * size, N > 0 ? N : es);
          }
        }
      }
    }
  }
}

template <std::size_t N>
void copy_rectangle(std::byte *to, Index to_e, Index to_w, const std::byte *from, Index from_e,
                    Index from_w, Index height, Index width, std::size_t es, bool streaming) {
  // Transpositions of 4-byte elements stay in the cache even when large: transpose_4's 4 x 4
  // blocks move 64 MiB of floats in 21 ms here, streaming stores a column at a time in 61 ms
  // and four columns at once in 31 ms (copy_bench).
  const bool floats_transposed = N == 4 && from_w == 1 && from_e != 1;
  // So do transpositions of doubles whose destination columns are at different places in their
  // cache lines (a leading dimension not a multiple of 8), which stream_gather_pair_8 cannot
  // pair: transpose_8's 2 x 2 blocks took 15.3-15.8 ms for 64 MiB, streaming a column at a
  // time 24.5-25.2 ms (copy_bench, "columns n + 1 apart").
  const bool doubles_unpaired =
      N == 8 && from_w == 1 && from_e != 1 && to_w * static_cast<Index>(N) % kCacheLine != 0;
  if (streaming && to_e == 1 && !floats_transposed && !doubles_unpaired) {
    copy_rectangle<N, true>(to, to_e, to_w, from, from_e, from_w, height, width, es);
  } else {
    copy_rectangle<N, false>(to, to_e, to_w, from, from_e, from_w, height, width, es);
  }
}

} // namespace

void copy_rectangle(std::byte *to, Index to_e, Index to_w, const std::byte *from, Index from_e,
                    Index from_w, Index height, Index width, std::size_t es, bool streaming) {
  // Contiguous across on both sides (row-major blocks at both ends), or a transposition into
  // an array contiguous across (a packed message unpacked into row-major blocks): the same
  // rectangle with its axes exchanged, so that the copy runs along the contiguous axis, or is
  // the transposition the sub-block loops below do in the cache.
  if ((to_w == 1 && from_w == 1 && (to_e != 1 || from_e != 1)) ||
      (to_w == 1 && from_e == 1 && to_e != 1 && from_w != 1)) {
    std::swap(to_e, to_w);
    std::swap(from_e, from_w);
    std::swap(height, width);
  }
  if (to_e == 1 && from_e == 1) {
    for (Index w = 0; w < width; ++w) {
      std::memcpy(to + static_cast<std::size_t>(w * to_w) * es,
                  from + static_cast<std::size_t>(w * from_w) * es,
                  static_cast<std::size_t>(height) * es);
    }
    return;
  }
  switch (es) {
  case 4:
    return copy_rectangle<4>(to, to_e, to_w, from, from_e, from_w, height, width, es, streaming);
  case 8:
    return copy_rectangle<8>(to, to_e, to_w, from, from_e, from_w, height, width, es, streaming);
  case 16:
    return copy_rectangle<16>(to, to_e, to_w, from, from_e, from_w, height, width, es, streaming);
  default:
    return copy_rectangle<0>(to, to_e, to_w, from, from_e, from_w, height, width, es, streaming);
  }
}

void Pieces::copy_transposed(const RunPattern &rows, const RunPattern &cols, const std::byte *a,
                             Index src_lld, std::byte *to, bool packed, Index lo, Index hi,
                             bool streaming) const {
  const std::size_t es = element_size_;
  for_each_tile(
      rows, cols, plan_.region, plan_.m, plan_.n, true, src_lld, lld_dst_, [&](const Tile &tile) {
        // Only message positions [lo, hi): column w of the tile holds positions
        // base(w) + [0, height), base(w) = position + w * position_width_step.
        const Index step = tile.position_width_step;
        Index w_begin = 0;
        Index w_end = tile.width;
        if (tile.width > 1) {                                   // then step >= height > 0
          const Index below = lo - tile.position - tile.height; // base(w) <= below: out
          w_begin = below < 0 ? 0 : below / step + 1;
          w_end = hi <= tile.position
                      ? 0
                      : std::min(tile.width, (hi - tile.position + step - 1) / step);
        }
        // Elements [e0, e1) x [w0, w1) of the tile.
        const auto copy = [&](Index e0, Index e1, Index w0, Index w1) {
          if (e0 >= e1 || w0 >= w1) {
            return;
          }
          const std::byte *from = a + static_cast<std::size_t>(tile.src + e0 * tile.src_step +
                                                               w0 * tile.src_width_step) *
                                          es;
          if (packed) {
            copy_rectangle(to + static_cast<std::size_t>(tile.position + w0 * step + e0 - lo) * es,
                           1, step, from, tile.src_step, tile.src_width_step, e1 - e0, w1 - w0, es,
                           streaming);
          } else if (operation_ != nullptr) {
            apply_operation(*operation_,
                            to + static_cast<std::size_t>(tile.dst + e0 * tile.dst_step +
                                                          w0 * tile.dst_width_step) *
                                     es,
                            tile.dst_step, tile.dst_width_step, from, tile.src_step,
                            tile.src_width_step, e1 - e0, w1 - w0);
          } else {
            copy_rectangle(to + static_cast<std::size_t>(tile.dst + e0 * tile.dst_step +
                                                         w0 * tile.dst_width_step) *
                                    es,
                           tile.dst_step, tile.dst_width_step, from, tile.src_step,
                           tile.src_width_step, e1 - e0, w1 - w0, es, streaming);
          }
        };
        // Whole columns in one blocked copy; only the first and last may be clipped.
        const auto clip = [&](Index w) {
          const Index base = tile.position + w * step;
          return std::pair<Index, Index>{std::max<Index>(0, lo - base),
                                         std::min(tile.height, hi - base)};
        };
        Index w0 = w_begin;
        Index w1 = w_end;
        if (w0 < w1) {
          if (const auto [e0, e1] = clip(w0); e0 > 0 || e1 < tile.height) {
            copy(e0, e1, w0, w0 + 1);
            ++w0;
          }
        }
        if (w0 < w1) {
          if (const auto [e0, e1] = clip(w1 - 1); e0 > 0 || e1 < tile.height) {
            copy(e0, e1, w1 - 1, w1);
            --w1;
          }
        }
        copy(0, tile.height, w0, w1);
      });
}

} // namespace redist
