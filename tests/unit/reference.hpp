#pragma once
// Brute-force references and random-case helpers shared by the unit tests. Everything here is
// written from the ScaLAPACK definitions, independently of src/.

#include "index.hpp"
#include "layout.hpp"
#include "plan.hpp"

#include <algorithm>
#include <cstdint>
#include <cstdlib>
#include <iostream>
#include <random>
#include <sstream>
#include <string>
#include <tuple>
#include <vector>

namespace redist::test {

inline int ref_owner(Index g, Index block, int nprocs, int src) {
  return static_cast<int>((g / block + src) % nprocs);
}

inline Index ref_local(Index g, Index block, int nprocs) {
  return (g / (block * nprocs)) * block + g % block;
}

inline int ref_owner(const BlockCyclic &d, Index g) {
  return ref_owner(g, d.block, d.nprocs, d.src);
}
inline Index ref_local(const BlockCyclic &d, Index g) {
  return ref_local(g, d.block, d.nprocs);
}

/// Elements of [lo, hi) owned by process p, counted with NUMROC on prefixes.
inline Index owned_in_range(const BlockCyclic &d, int p, Index lo, Index hi) {
  const auto prefix = [&](Index x) {
    return BlockCyclic{x, d.block, d.nprocs, d.src}.local_extent(p);
  };
  return prefix(hi) - prefix(lo);
}

struct Element {
  Index k;
  Index src_local;
  Index dst_local;
  bool operator==(const Element &) const = default;
};

inline bool same_run(const Run &a, const Run &b) {
  return a.k == b.k && a.length == b.length && a.src_local == b.src_local &&
         a.dst_local == b.dst_local;
}

inline std::string to_string(const Run &r) {
  std::ostringstream os;
  os << "{k=" << r.k << " len=" << r.length << " src_local=" << r.src_local
     << " dst_local=" << r.dst_local << "}";
  return os.str();
}

/// Empty when the run lists are equal, else where they first differ.
inline std::string run_diff(const std::vector<Run> &expected, const std::vector<Run> &actual) {
  const std::size_t common = std::min(expected.size(), actual.size());
  for (std::size_t i = 0; i < common; ++i) {
    if (!same_run(expected[i], actual[i])) {
      return "run " + std::to_string(i) + ": expected " + to_string(expected[i]) + ", got " +
             to_string(actual[i]);
    }
  }
  if (expected.size() != actual.size()) {
    std::string msg = "expected " + std::to_string(expected.size()) + " runs, got " +
                      std::to_string(actual.size());
    if (common < actual.size()) {
      msg += "; first extra " + to_string(actual[common]);
    } else {
      msg += "; first missing " + to_string(expected[common]);
    }
    return msg;
  }
  return {};
}

inline std::string describe(const BlockCyclic &d) {
  std::ostringstream os;
  os << "{extent=" << d.extent << " block=" << d.block << " nprocs=" << d.nprocs << " src=" << d.src
     << "}";
  return os.str();
}

inline std::string describe(const Transfer1D &t) {
  std::ostringstream os;
  os << "Transfer1D{src=" << describe(t.src) << " dst=" << describe(t.dst)
     << " src_start=" << t.src_start << " dst_start=" << t.dst_start << " length=" << t.length
     << "}";
  return os.str();
}

/// Window elements grouped by (source process, destination process), in increasing k:
/// result[p * Q + q].
inline std::vector<std::vector<Element>> brute_force_pairs(const Transfer1D &t) {
  const auto nq = static_cast<std::size_t>(t.dst.nprocs);
  std::vector<std::vector<Element>> pairs(static_cast<std::size_t>(t.src.nprocs) * nq);
  for (Index k = 0; k < t.length; ++k) {
    const Index gs = t.src_start + k;
    const Index gd = t.dst_start + k;
    const auto p = static_cast<std::size_t>(ref_owner(t.src, gs));
    const auto q = static_cast<std::size_t>(ref_owner(t.dst, gd));
    pairs[p * nq + q].push_back({k, ref_local(t.src, gs), ref_local(t.dst, gd)});
  }
  return pairs;
}

/// Maximal runs of a k-sorted element list.
inline std::vector<Run> merge_elements(const std::vector<Element> &elements) {
  std::vector<Run> runs;
  for (const Element &e : elements) {
    if (!runs.empty()) {
      Run &last = runs.back();
      if (last.k + last.length == e.k && last.src_local + last.length == e.src_local &&
          last.dst_local + last.length == e.dst_local) {
        ++last.length;
        continue;
      }
    }
    runs.push_back({e.k, 1, e.src_local, e.dst_local});
  }
  return runs;
}

inline std::vector<Run> visit(const RunPattern &pattern, Index lo, Index hi) {
  std::vector<Run> runs;
  pattern.for_each(lo, hi, [&](const Run &r) { runs.push_back(r); });
  return runs;
}

inline std::vector<Run> visit(const RunPattern &pattern) {
  std::vector<Run> runs;
  pattern.for_each([&](const Run &r) { runs.push_back(r); });
  return runs;
}

// The copied region of PxTRMR2D, stated on the diagonal offset d = i - j of window element
// (i, j): an upper trapezoid keeps d <= max(M-N, 0), a lower one d >= -max(N-M, 0); a unit
// diagonal moves that bound one step inward. top_left (PBLAS PxTRADD, LAPACK): the bounds are
// d <= 0 and d >= 0 whatever the shape.
inline bool reference_copied(Region::Kind kind, bool unit_diag, Index i, Index j, Index m, Index n,
                             bool top_left = false) {
  const Index d = i - j;
  const Index inward = unit_diag ? 1 : 0;
  switch (kind) {
  case Region::Kind::upper:
    return d <= (top_left ? 0 : std::max(m - n, Index{0})) - inward;
  case Region::Kind::lower:
    return d >= (top_left ? 0 : -std::max(n - m, Index{0})) + inward;
  case Region::Kind::full:
    return true;
  }
  return false;
}

/// One element moved: (source rank, destination rank, offset in the source's local array,
/// offset in the destination's).
using Move = std::tuple<int, int, Index, Index>;

/// Every element a transfer moves, from the definitions (PBLAS PxTRAN / PxTRADD): element
/// (i, j) of B's m x n window, when in the region (stated on B's window), receives element
/// (i, j) of A's window, or (j, i) when perm = {1, 0} (A's window is then n x m). Local
/// offsets are column-major with the per-rank leading dimensions lld_src[rank], lld_dst[rank].
inline std::vector<Move> brute_force_moves(const Transfer &t, const std::vector<Index> &lld_src,
                                           const std::vector<Index> &lld_dst) {
  std::vector<Move> moves;
  const bool transposed = t.perm[0] == 1;
  for (Index j = 0; j < t.n; ++j) {
    for (Index i = 0; i < t.m; ++i) {
      if (!reference_copied(t.region.kind, t.region.unit_diag, i, j, t.m, t.n,
                            t.region.diagonal == Region::Diagonal::top_left)) {
        continue;
      }
      const Index ai = t.src.i + (transposed ? j : i); // A's global row and column
      const Index aj = t.src.j + (transposed ? i : j);
      const Index bi = t.dst.i + i;
      const Index bj = t.dst.j + j;
      const int src_rank = t.src.grid.ranks[static_cast<std::size_t>(
          ref_owner(t.src.rows, ai) + ref_owner(t.src.cols, aj) * t.src.grid.nprow)];
      const int dst_rank = t.dst.grid.ranks[static_cast<std::size_t>(
          ref_owner(t.dst.rows, bi) + ref_owner(t.dst.cols, bj) * t.dst.grid.nprow)];
      moves.emplace_back(
          src_rank, dst_rank,
          ref_local(t.src.rows, ai) +
              ref_local(t.src.cols, aj) * lld_src[static_cast<std::size_t>(src_rank)],
          ref_local(t.dst.rows, bi) +
              ref_local(t.dst.cols, bj) * lld_dst[static_cast<std::size_t>(dst_rank)]);
    }
  }
  return moves;
}

/// The seed of a randomized test: REDIST_TEST_SEED when set, else `fallback`; printed so that
/// a failure can be replayed.
inline std::uint64_t test_seed(std::uint64_t fallback) {
  std::uint64_t seed = fallback;
  if (const char *env = std::getenv("REDIST_TEST_SEED"); env != nullptr && *env != '\0') {
    seed = std::strtoull(env, nullptr, 0);
  }
  std::cout << "[   SEED   ] " << seed << " (replay with REDIST_TEST_SEED=" << seed << ")\n";
  return seed;
}

class Random {
public:
  explicit Random(std::uint64_t seed) : engine_(seed) {}
  Index uniform(Index lo, Index hi) { // inclusive
    return std::uniform_int_distribution<Index>(lo, hi)(engine_);
  }
  int uniform_int(int lo, int hi) { return std::uniform_int_distribution<int>(lo, hi)(engine_); }
  bool chance(int percent) { return uniform_int(0, 99) < percent; }

private:
  std::mt19937_64 engine_;
};

inline BlockCyclic random_dimension(Random &rng, Index max_extent, Index max_block, int max_procs) {
  BlockCyclic d;
  d.extent = rng.uniform(0, max_extent);
  d.block = rng.uniform(1, max_block);
  d.nprocs = rng.uniform_int(1, max_procs);
  d.src = rng.uniform_int(0, d.nprocs - 1);
  return d;
}

/// A random window copy whose window fits in both extents; the length is sometimes the
/// largest possible, sometimes zero.
inline Transfer1D random_transfer(Random &rng, Index max_extent, Index max_block, int max_procs) {
  Transfer1D t;
  t.src = random_dimension(rng, max_extent, max_block, max_procs);
  t.dst = random_dimension(rng, max_extent, max_block, max_procs);
  const Index fit = std::min(t.src.extent, t.dst.extent);
  const int mode = rng.uniform_int(0, 9);
  t.length = mode == 0 ? fit : mode == 1 ? 0 : rng.uniform(0, fit);
  t.src_start = rng.uniform(0, t.src.extent - t.length);
  t.dst_start = rng.uniform(0, t.dst.extent - t.length);
  return t;
}

} // namespace redist::test
