#pragma once
// Arithmetic on ring indices and link costs shared by the ring*.cpp files (Renard, Robert &
// Vivien 2004, Sec. 2's model: indices modulo n, one item over a link costs c); not part of
// ring.hpp's interface.

#include "ring.hpp"

#include <cstddef>
#include <limits>
#include <sstream>
#include <string>

namespace redist::ring {

inline constexpr double inf = std::numeric_limits<double>::infinity();

inline std::size_t wrap(Index k, std::size_t n) {
  const auto m = static_cast<Index>(n);
  return static_cast<std::size_t>(((k % m) + m) % m);
}

/// items * cost, with no items costing nothing even over a forbidden link.
inline double cost_of(Index items, double cost) {
  return items > 0 ? static_cast<double>(items) * cost : 0.0;
}

inline Index ceil_half(Index v) {
  return (v + 1) / 2;
}

inline std::string show(double v) {
  std::ostringstream os;
  os << v;
  return os.str();
}

inline std::string indexed(const char *name, std::size_t k) {
  return std::string(name) + "[" + std::to_string(k) + "]";
}

} // namespace redist::ring
