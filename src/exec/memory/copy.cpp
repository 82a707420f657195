#include "copy.hpp"

#include <cstdint>
#include <cstring>

#if defined(__x86_64__)
#include <emmintrin.h>
#include <xmmintrin.h>
#endif

namespace redist {

void copy_bytes(std::byte *to, const std::byte *from, std::size_t n, bool streaming) {
#if defined(__x86_64__)
  constexpr std::size_t kLine = 64;
  const bool overlap = to < from + n && from < to + n;
  if (streaming && n >= kStreamedPieceBytes && !overlap) {
    // Head and tail lines are shared with other pieces: ordinary stores keep them whole.
    const std::size_t head =
        (kLine - (reinterpret_cast<std::uintptr_t>(to) & (kLine - 1))) & (kLine - 1);
    std::memcpy(to, from, head);
    to += head;
    from += head;
    n -= head;
    for (; n >= kLine; n -= kLine, to += kLine, from += kLine) {
      const __m128i a = _mm_loadu_si128(reinterpret_cast<const __m128i *>(from));
      const __m128i b = _mm_loadu_si128(reinterpret_cast<const __m128i *>(from + 16));
      const __m128i c = _mm_loadu_si128(reinterpret_cast<const __m128i *>(from + 32));
      const __m128i d = _mm_loadu_si128(reinterpret_cast<const __m128i *>(from + 48));
      _mm_stream_si128(reinterpret_cast<__m128i *>(to), a);
      _mm_stream_si128(reinterpret_cast<__m128i *>(to + 16), b);
      _mm_stream_si128(reinterpret_cast<__m128i *>(to + 32), c);
      _mm_stream_si128(reinterpret_cast<__m128i *>(to + 48), d);
    }
    std::memcpy(to, from, n);
    return;
  }
#else
  static_cast<void>(streaming);
#endif
  std::memmove(to, from, n);
}

void stream_gather(std::byte *to, const std::byte *from, std::ptrdiff_t from_step,
                   std::size_t count, std::size_t size) {
#if defined(__x86_64__)
  // Whole cache lines only: the lines at the ends are shared with the next piece of the same
  // column, and a streaming store to a line in the cache evicts it.
  constexpr std::size_t kVector = 16;
  constexpr std::size_t kLine = 64;
  const auto next = [&](std::size_t bytes) {
    std::uint64_t value = 0;
    std::memcpy(&value, from, bytes);
    from += from_step;
    return value;
  };
  if (size == 4 || size == 8 || size == 16) {
    for (; count > 0 && (reinterpret_cast<std::uintptr_t>(to) & (kLine - 1)) != 0;
         --count, to += size, from += from_step) {
      std::memcpy(to, from, size);
    }
    for (; count * size >= kLine; count -= kLine / size) {
      for (std::size_t v = 0; v < kLine / kVector; ++v, to += kVector) {
        __m128i vector;
        if (size == 16) {
          vector = _mm_loadu_si128(reinterpret_cast<const __m128i *>(from));
          from += from_step;
        } else if (size == 8) {
          const std::uint64_t low = next(8);
          const std::uint64_t high = next(8);
          vector = _mm_set_epi64x(static_cast<long long>(high), static_cast<long long>(low));
        } else {
          const auto e0 = static_cast<int>(next(4));
          const auto e1 = static_cast<int>(next(4));
          const auto e2 = static_cast<int>(next(4));
          const auto e3 = static_cast<int>(next(4));
          vector = _mm_set_epi32(e3, e2, e1, e0);
        }
        _mm_stream_si128(reinterpret_cast<__m128i *>(to), vector);
      }
    }
  }
#endif
  for (; count > 0; --count, to += size, from += from_step) {
    std::memcpy(to, from, size);
  }
}

void stream_gather_pair_8(std::byte *to, std::ptrdiff_t to_step, const std::byte *from,
                          std::ptrdiff_t from_step, std::size_t count) {
  constexpr std::size_t kSize = 8;
  const auto both = [&](std::size_t n) { // n elements of each column with ordinary stores
    for (; n > 0; --n, --count, to += kSize, from += from_step) {
      std::memcpy(to, from, kSize);
      std::memcpy(to + to_step, from + kSize, kSize);
    }
  };
#if defined(__x86_64__)
  constexpr std::size_t kLine = 64;
  while (count > 0 && (reinterpret_cast<std::uintptr_t>(to) & (kLine - 1)) != 0) {
    both(1); // never aligned if `to` is not on an element boundary: then all of them
  }
  for (; count * kSize >= kLine; count -= kLine / kSize) { // a whole line of each column
    for (std::size_t pair = 0; pair < kLine / kSize / 2;
         ++pair, to += 2 * kSize, from += 2 * from_step) {
      const __m128d upper = _mm_loadu_pd(reinterpret_cast<const double *>(from));
      const __m128d lower = _mm_loadu_pd(reinterpret_cast<const double *>(from + from_step));
      _mm_stream_pd(reinterpret_cast<double *>(to), _mm_unpacklo_pd(upper, lower));
      _mm_stream_pd(reinterpret_cast<double *>(to + to_step), _mm_unpackhi_pd(upper, lower));
    }
  }
#endif
  both(count);
}

namespace {

// Elements [e0, height) x [w0, w1) of a transposition of kSize-byte elements (as transpose_8
// places them), one at a time: what the vector blocks leave.
template <std::size_t kSize>
void transpose_elements(std::byte *to, std::ptrdiff_t to_step, const std::byte *from,
                        std::ptrdiff_t from_step, std::size_t e0, std::size_t height,
                        std::size_t w0, std::size_t w1) {
  for (std::size_t w = w0; w < w1; ++w) {
    for (std::size_t e = e0; e < height; ++e) {
      std::memcpy(to + e * kSize + static_cast<std::ptrdiff_t>(w) * to_step,
                  from + static_cast<std::ptrdiff_t>(e) * from_step + w * kSize, kSize);
    }
  }
}

} // namespace

void transpose_8(std::byte *to, std::ptrdiff_t to_step, const std::byte *from,
                 std::ptrdiff_t from_step, std::size_t height, std::size_t width) {
  constexpr std::size_t kSize = 8;
  std::size_t w = 0;
#if defined(__x86_64__)
  for (; w + 2 <= width; w += 2) {
    std::byte *column = to + static_cast<std::ptrdiff_t>(w) * to_step;
    const std::byte *row = from + w * kSize;
    std::size_t e = 0;
    for (; e + 2 <= height; e += 2) {
      // Rows e and e + 1 of columns w and w + 1 in, columns w and w + 1 of rows e, e + 1 out.
      const __m128d upper = _mm_loadu_pd(
          reinterpret_cast<const double *>(row + static_cast<std::ptrdiff_t>(e) * from_step));
      const __m128d lower = _mm_loadu_pd(
          reinterpret_cast<const double *>(row + static_cast<std::ptrdiff_t>(e + 1) * from_step));
      _mm_storeu_pd(reinterpret_cast<double *>(column + e * kSize), _mm_unpacklo_pd(upper, lower));
      _mm_storeu_pd(reinterpret_cast<double *>(column + to_step + e * kSize),
                    _mm_unpackhi_pd(upper, lower));
    }
    transpose_elements<kSize>(to, to_step, from, from_step, e, height, w, w + 2);
  }
#endif
  transpose_elements<kSize>(to, to_step, from, from_step, 0, height, w, width);
}

void transpose_4(std::byte *to, std::ptrdiff_t to_step, const std::byte *from,
                 std::ptrdiff_t from_step, std::size_t height, std::size_t width) {
  constexpr std::size_t kSize = 4;
  std::size_t w = 0;
#if defined(__x86_64__)
  for (; w + 4 <= width; w += 4) {
    std::size_t e = 0;
    for (; e + 4 <= height; e += 4) {
      // Rows e .. e + 3 of columns w .. w + 3 in, the same four columns of those rows out.
      const auto row = [&](std::size_t k) {
        return _mm_loadu_ps(reinterpret_cast<const float *>(
            from + static_cast<std::ptrdiff_t>(e + k) * from_step + w * kSize));
      };
      __m128 r0 = row(0);
      __m128 r1 = row(1);
      __m128 r2 = row(2);
      __m128 r3 = row(3);
      _MM_TRANSPOSE4_PS(r0, r1, r2, r3);
      std::byte *column = to + e * kSize + static_cast<std::ptrdiff_t>(w) * to_step;
      _mm_storeu_ps(reinterpret_cast<float *>(column), r0);
      _mm_storeu_ps(reinterpret_cast<float *>(column + to_step), r1);
      _mm_storeu_ps(reinterpret_cast<float *>(column + 2 * to_step), r2);
      _mm_storeu_ps(reinterpret_cast<float *>(column + 3 * to_step), r3);
    }
    transpose_elements<kSize>(to, to_step, from, from_step, e, height, w, w + 4);
  }
#endif
  transpose_elements<kSize>(to, to_step, from, from_step, 0, height, w, width);
}

void streaming_fence() {
#if defined(__x86_64__)
  _mm_sfence();
#endif
}

} // namespace redist
