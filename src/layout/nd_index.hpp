#pragma once
// Layout layer: the runs of one dimension of an N-d transfer, where either side may be
// block-cyclic or GEN_BLOCK -- the one per-dimension engine (index.hpp) for both.
//
// Block-cyclic on both sides: the dimension is a Transfer1D and its runs are index.hpp's, one
// period lcm(P*r, Q*s) stored (Desprez et al. 1998, Sec. 2). A GEN_BLOCK side has no period:
// along the window indices inside one process's interval, that process is a one-process
// block-cyclic dimension whose local index is the offset into the interval. So a GEN_BLOCK pair
// is a Transfer1D over the intersection of the interval(s) with the window (interval
// intersection), and the runs come from the same code. Time and memory grow with one period for
// block-cyclic pairs and with the intervals intersected for GEN_BLOCK.
//
// A pattern's window indices k count from the start of its sub-window: the whole window for a
// block-cyclic pair, the intersection with the GEN_BLOCK interval(s) otherwise (k_offset below).

#include "index.hpp"
#include "nd_layout.hpp"

#include <vector>

namespace redist {

/// One dimension of an N-d window copy: `length` elements from global index src_start of src
/// to global index dst_start of dst.
struct DimTransfer {
  DimDistribution src;
  DimDistribution dst;
  Index src_start = 0;
  Index dst_start = 0;
  Index length = 0;
};

/// The runs between one process and one process of the other side along a dimension; the
/// runs' k are window indices minus k_offset.
struct DimPeerRuns {
  int peer = 0;
  Index k_offset = 0;
  RunPattern runs;
};

/// Runs between `proc` (a source process when as_source, else a destination process) and the
/// processes of the other side it exchanges data with, by increasing peer; peers without data
/// are absent. Source and destination compute the same pattern for a pair.
std::vector<DimPeerRuns> dim_peer_runs(const DimTransfer &t, int proc, bool as_source);

/// Elements source process `src` sends destination process `dst` along one dimension.
struct DimVolume {
  int src = 0;
  int dst = 0;
  Index volume = 0;
};
/// Every pair of processes with data along the dimension, by (src, dst): the totals of
/// dim_peer_runs from each source process (one period per pair, or the intervals met), so the
/// time grows with the source processes and their periods, not with the extent.
std::vector<DimVolume> dim_volumes(const DimTransfer &t);

} // namespace redist
