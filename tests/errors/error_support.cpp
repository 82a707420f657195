#include "error_support.hpp"

#include <unistd.h>

#include <algorithm>

namespace errtest {

StderrCapture::StderrCapture() {
  std::fflush(stderr);
  file_ = std::tmpfile();
  if (file_ == nullptr) return;
  saved_ = dup(2);
  if (saved_ < 0 || dup2(fileno(file_), 2) < 0) {
    if (saved_ >= 0) close(saved_);
    saved_ = -1;
    std::fclose(file_);
    file_ = nullptr;
  }
}

StderrCapture::~StderrCapture() {
  if (file_ != nullptr) static_cast<void>(finish());
}

std::string StderrCapture::finish() {
  if (file_ == nullptr) return "<stderr capture failed>";
  std::fflush(stderr);
  dup2(saved_, 2);
  close(saved_);
  saved_ = -1;
  std::string text;
  std::rewind(file_);
  char chunk[4096];
  std::size_t got = 0;
  while ((got = std::fread(chunk, 1, sizeof chunk, file_)) > 0)
    text.append(chunk, got);
  std::fclose(file_);
  file_ = nullptr;
  return text;
}

std::size_t count_lines(const std::string &text) {
  return static_cast<std::size_t>(std::count(text.begin(), text.end(), '\n'));
}

bool starts_with(const std::string &text, const std::string &prefix) {
  return text.compare(0, prefix.size(), prefix) == 0;
}

mpitest::GridSpec init_grid(char order, int nprow, int npcol) {
  mpitest::GridSpec g;
  g.kind = order == 'R' ? mpitest::GridKind::InitRow : mpitest::GridKind::InitCol;
  g.nprow = nprow;
  g.npcol = npcol;
  g.ranks.assign(static_cast<std::size_t>(nprow * npcol), -1);
  for (int pr = 0; pr < nprow; ++pr) {
    for (int pc = 0; pc < npcol; ++pc) {
      g.ranks[static_cast<std::size_t>(pr + pc * nprow)] =
          order == 'R' ? pr * npcol + pc : pc * nprow + pr;
    }
  }
  return g;
}

mpitest::GridSpec map_grid(int nprow, int npcol, std::vector<int> ranks) {
  mpitest::GridSpec g;
  g.kind = mpitest::GridKind::Map;
  g.nprow = nprow;
  g.npcol = npcol;
  g.ranks = std::move(ranks);
  return g;
}

mpitest::MatSpec matrix(mpitest::GridSpec g, std::int64_t mg, std::int64_t ng, std::int64_t mb,
                        std::int64_t nb, int rsrc, int csrc, std::int64_t ia, std::int64_t ja,
                        std::int64_t lld_extra) {
  mpitest::MatSpec s;
  s.grid = std::move(g);
  s.mg = mg;
  s.ng = ng;
  s.mb = mb;
  s.nb = nb;
  s.rsrc = rsrc;
  s.csrc = csrc;
  s.ia = ia;
  s.ja = ja;
  s.lld_extra.assign(static_cast<std::size_t>(s.grid.size()), lld_extra);
  return s;
}

namespace {

void grid_shape(int p, int &nprow, int &npcol) {
  nprow = p;
  for (int d = 1; d <= p; ++d) {
    if (p % d == 0 && d * d >= p) {
      nprow = d;
      break;
    }
  }
  npcol = p / nprow;
}

} // namespace

Scenario standard_scenario() {
  const int p = mpitest::world_size();
  int nprow = 1;
  int npcol = 1;
  grid_shape(p, nprow, npcol);
  std::vector<int> reversed(static_cast<std::size_t>(p));
  for (int k = 0; k < p; ++k)
    reversed[static_cast<std::size_t>(k)] = p - 1 - k;
  Scenario s;
  s.a = matrix(init_grid('C', nprow, npcol), 13, 11, 2, 3, nprow - 1, 0, 2, 3, 2);
  s.b = matrix(map_grid(npcol, nprow, reversed), 12, 10, 3, 2, 0, nprow - 1, 3, 2, 1);
  s.ictxt = init_grid('R', 1, p);
  return s;
}

mpitest::GridSpec subset_grid() {
  const int p = mpitest::world_size();
  std::vector<int> ranks;
  for (int k = p - 2; k >= 0; --k)
    ranks.push_back(k);
  return map_grid(p - 1, 1, ranks);
}

mpitest::MatSpec subset_a() {
  const int p = mpitest::world_size();
  return matrix(subset_grid(), 13, 11, 2, 3, p - 2, 0, 2, 3, 2);
}

mpitest::MatSpec subset_b() {
  const int p = mpitest::world_size();
  std::vector<int> ranks;
  for (int k = 0; k < p - 1; ++k)
    ranks.push_back(k);
  return matrix(map_grid(1, p - 1, ranks), 12, 10, 3, 2, 0, p - 2, 3, 2, 1);
}

int window_holder(const mpitest::MatSpec &s, std::int64_t m, std::int64_t n) {
  mpitest::CopySpec c;
  c.m = m;
  c.n = n;
  for (int r = mpitest::world_size() - 1; r >= 0; --r) {
    if (mpitest::owned_region_count(c, s, mpitest::local_buf(s, r)) > 0) return r;
  }
  return -1;
}

int last_rank() {
  return mpitest::world_size() - 1;
}

} // namespace errtest
