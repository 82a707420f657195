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

Layout transposed_layout(const Layout &l) {
  Layout out;
  out.rows = l.cols;
  out.cols = l.rows;
  out.i = l.j;
  out.j = l.i;
  out.grid.nprow = l.grid.npcol;
  out.grid.npcol = l.grid.nprow;
  out.grid.ranks.resize(l.grid.ranks.size());
  for (int pr = 0; pr < l.grid.nprow; ++pr) {
    for (int pc = 0; pc < l.grid.npcol; ++pc) {
      out.grid.ranks[static_cast<std::size_t>(pc) +
                     static_cast<std::size_t>(pr) * static_cast<std::size_t>(out.grid.nprow)] =
          l.grid.rank_at(pr, pc);
    }
  }
  out.row_major = !l.row_major;
  return out;
}

} // namespace redist
