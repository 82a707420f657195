#pragma once
// Shared by the error-case tests: capture of what a process writes to stderr, bytewise
// comparison of buffers, and the fixed, valid redistribution every error case starts from
// (each case then spoils one argument on one or every process).
//
// The valid redistribution on P processes (P = 1, 2, 3, 4, 6, ...):
//   A: 13 x 11, MB_ = 2, NB_ = 3 on a BLACS_GRIDINIT 'C' grid of all P processes (nprow =
//      the smallest divisor d of P with d*d >= P), RSRC_ = nprow-1, CSRC_ = 0, window at
//      (IA, JA) = (2, 3), LLD_ = local rows + 2 (padding rows that must stay untouched);
//   B: 12 x 10, MB_ = 3, NB_ = 2 on a BLACS_GRIDMAP grid of the transposed shape with the
//      ranks in reverse order, RSRC_ = 0, CSRC_ = npcol-1, window at (IB, JB) = (3, 2),
//      LLD_ = local rows + 1;
//   window M x N = 9 x 7 (so M+1 and N+1 still fit in both matrices);
//   ICTXT: BLACS_GRIDINIT 'R' 1 x P (position in ICTXT = world rank).

#include "../mpi/harness.hpp"

#include <cstdint>
#include <cstdio>
#include <cstring>
#include <string>
#include <vector>

namespace errtest {

/// Redirects file descriptor 2 of this process to an anonymous temporary file from
/// construction until finish(), which restores it and returns what was written.
class StderrCapture {
public:
  StderrCapture();
  ~StderrCapture();
  StderrCapture(const StderrCapture &) = delete;
  StderrCapture &operator=(const StderrCapture &) = delete;
  std::string finish();

private:
  std::FILE *file_ = nullptr;
  int saved_ = -1;
};

std::size_t count_lines(const std::string &text);
bool starts_with(const std::string &text, const std::string &prefix);

/// "" when both buffers are equal byte for byte, else the first differing element and the
/// number of differing elements.
template <class T>
std::string byte_diff(const std::vector<T> &before, const std::vector<T> &after) {
  if (before.size() != after.size()) return "buffer size changed";
  std::size_t count = 0;
  std::string first;
  for (std::size_t k = 0; k < before.size(); ++k) {
    if (std::memcmp(&before[k], &after[k], sizeof(T)) != 0) {
      if (count == 0) {
        first = "element " + std::to_string(k) + ": " + mpitest::show(before[k]) + " -> " +
                mpitest::show(after[k]);
      }
      ++count;
    }
  }
  if (count == 0) return "";
  return std::to_string(count) + " element(s) changed, first " + first;
}

/// The valid redistribution of the file comment (or a variant of it).
struct Scenario {
  mpitest::MatSpec a, b;
  mpitest::GridSpec ictxt;
  std::int64_t m = 9, n = 7;
};

mpitest::GridSpec init_grid(char order, int nprow, int npcol);
mpitest::GridSpec map_grid(int nprow, int npcol, std::vector<int> ranks);
/// A matrix on grid g: M_ x N_ = mg x ng, blocks mb x nb, first block on (rsrc, csrc), window at
/// (ia, ja) (1-based), every process's LLD its local rows plus lld_extra.
mpitest::MatSpec matrix(mpitest::GridSpec g, std::int64_t mg, std::int64_t ng, std::int64_t mb,
                        std::int64_t nb, int rsrc, int csrc, std::int64_t ia, std::int64_t ja,
                        std::int64_t lld_extra);

/// The standard scenario of the file comment.
Scenario standard_scenario();
/// Processes 0 .. P-2 in a (P-1) x 1 BLACS_GRIDMAP grid, reverse order (needs P >= 2).
mpitest::GridSpec subset_grid();
/// The A matrix of the standard scenario on subset_grid() instead (needs P >= 2).
mpitest::MatSpec subset_a();
/// The B matrix of the standard scenario on a 1 x (P-1) BLACS_GRIDMAP grid of processes
/// 0 .. P-2 in order (needs P >= 2).
mpitest::MatSpec subset_b();

/// Highest world rank that holds an element of the M x N window of `s` (-1: none).
int window_holder(const mpitest::MatSpec &s, std::int64_t m, std::int64_t n);
/// World size - 1: the process that spoils an argument in the "on one process" cases.
int last_rank();

/// This process's local arrays of a scenario: A filled with the oracle's codes (salt a_salt),
/// B with sentinels (salt b_salt); both with LLD padding and a guard zone.
template <class T> struct Data {
  mpitest::LocalBuf la, lb;
  std::vector<T> a, b;
  Data(const Scenario &s, int a_salt, int b_salt)
      : la(mpitest::local_buf(s.a, mpitest::world_rank())),
        lb(mpitest::local_buf(s.b, mpitest::world_rank())) {
    mpitest::fill_a(s.a, la, a_salt, a);
    mpitest::fill_sentinel(lb, b_salt, b);
  }
};

} // namespace errtest
