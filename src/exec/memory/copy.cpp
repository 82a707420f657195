#include "copy.hpp"

#include <cstdint>
#include <cstring>

#if defined(__x86_64__)
#include <emmintrin.h>
#endif

namespace redist {

void copy_bytes(std::byte *to, const std::byte *from, std::size_t n, bool streaming) {
#if defined(__x86_64__)
  constexpr std::size_t kLine = 64;
  const bool overlap = to < from + n && from < to + n;
  if (streaming && n >= 4 * kLine && !overlap) {
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

void streaming_fence() {
#if defined(__x86_64__)
  _mm_sfence();
#endif
}

} // namespace redist
