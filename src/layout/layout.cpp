#include "layout.hpp"

namespace redist {

bool Grid::find(int rank, int &pr, int &pc) const {
  for (std::size_t idx = 0; idx < ranks.size(); ++idx) {
    if (ranks[idx] == rank) {
      pr = static_cast<int>(idx % static_cast<std::size_t>(nprow));
      pc = static_cast<int>(idx / static_cast<std::size_t>(nprow));
      return true;
    }
  }
  return false;
}

} // namespace redist
