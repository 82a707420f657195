#pragma once
// Timing shared by the benchmarks that compare redist with ScaLAPACK / PBLAS in one run.

#include <mpi.h>

#include <algorithm>
#include <functional>
#include <vector>

namespace bench {

inline double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

/// MPI_Barrier, MPI_Wtime around f, the maximum over the ranks of MPI_COMM_WORLD.
inline double timed(const std::function<void()> &f) {
  MPI_Barrier(MPI_COMM_WORLD);
  const double t0 = MPI_Wtime();
  f();
  double t = MPI_Wtime() - t0;
  MPI_Allreduce(MPI_IN_PLACE, &t, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
  return t;
}

} // namespace bench
