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

void streaming_fence() {
#if defined(__x86_64__)
  _mm_sfence();
#endif
}

} // namespace redist
