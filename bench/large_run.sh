#!/usr/bin/env bash
# One real run with a local array of more than 2^31 elements (docs/reliability.md, "Large
# sizes"). Not part of CI: it needs about 9 GB of address space on rank 0 (most of it never
# touched, see below) and takes a few seconds.
#
# Rank 0 holds all of A: a 1 x 1 grid, M_ x N_ = 50,000 x 43,000 floats, LLD_ = 50,000, so
# its local array has 2,150,000,000 > 2^31 = 2,147,483,648 elements (8.6 GB). The copied
# window is the bottom-right corner, rows 48,000..49,999 and columns 41,000..42,999 (0-based),
# whose elements sit at local offsets up to 2,149,999,999 -- past 2^31, so any 32-bit
# offset arithmetic in redist reads the wrong place or faults. B is a 2000 x 2000 window on
# a 1 x P grid of all ranks (ranks in reverse order, 64 x 64 blocks); the copy goes through
# redist's C API (the ScaLAPACK entries share its planner and executor).
# A is allocated with calloc and only the window is written, so the pages outside it are
# never touched and the resident memory stays small (about 16 MB of A) while the offsets are
# real. Every element of B is checked against a function of its global index.
#
# Usage: bench/large_run.sh [ranks, default 2]     (build dir: $REDIST_BUILD_DIR or build/release)
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
source scripts/deps.sh
ranks=${1:-2}
build=${REDIST_BUILD_DIR:-build/release}
cmake -S . -B "$build" -DCMAKE_BUILD_TYPE=Release -DREDIST_BUILD_TESTS=OFF >/dev/null
cmake --build "$build" -j"$(nproc)" --target redist
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
cat >"$work/large_run.c" <<'EOF'
#include <redist.h>

#include <mpi.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

enum { MG = 50000, NG = 43000, WM = 2000, WN = 2000, WI = 48000, WJ = 41000, BB = 64 };

static float value(int64_t gi, int64_t gj) { return (float)((gi * 7 + gj * 13) % 1000003); }

static int64_t numroc(int64_t n, int64_t nb, int p, int np) {
  const int64_t blocks = n / nb;
  int64_t count = (blocks / np) * nb;
  const int64_t extra = blocks % np;
  if (p < extra) count += nb;
  else if (p == extra) count += n % nb;
  return count;
}

static double now(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

int main(int argc, char **argv) {
  MPI_Init(&argc, &argv);
  int rank = 0, size = 1;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  const int64_t a_elems = (int64_t)MG * NG;
  float *a = NULL;
  if (rank == 0) {
    a = calloc((size_t)a_elems, sizeof(float));
    if (a == NULL) {
      fprintf(stderr, "rank 0: cannot allocate %lld floats\n", (long long)a_elems);
      MPI_Abort(MPI_COMM_WORLD, 2);
    }
    for (int64_t j = WJ; j < WJ + WN; ++j)
      for (int64_t i = WI; i < WI + WM; ++i) a[i + j * (int64_t)MG] = value(i, j);
  }
  int a_ranks[1] = {0};
  int *b_ranks = malloc(sizeof(int) * (size_t)size);
  for (int k = 0; k < size; ++k) b_ranks[k] = size - 1 - k;
  const int b_col = size - 1 - rank; /* this rank's grid column in B */
  const int64_t b_cols = numroc(WN, BB, b_col, size);
  float *b = malloc(sizeof(float) * (size_t)(WM * (b_cols > 0 ? b_cols : 1)));
  redist_layout la = {MG, NG, BB, BB, 1, 1, 0, 0, a_ranks, WI, WJ, MG};
  redist_layout lb = {WM, WN, BB, BB, 1, size, 0, 0, b_ranks, 0, 0, WM};
  long long wrong = 0;
  for (int64_t k = 0; k < WM * b_cols; ++k) b[k] = -1.0f;
  const double t0 = now();
  redist_plan plan;
  int rc = redist_plan_create(MPI_COMM_WORLD, WM, WN, REDIST_FLOAT, &la, &lb, REDIST_REGION_FULL,
                              0, &plan);
  if (rc == REDIST_SUCCESS) rc = redist_plan_execute(plan, a, b);
  if (rc != REDIST_SUCCESS) {
    fprintf(stderr, "rank %d: %s\n", rank, redist_last_error());
    MPI_Abort(MPI_COMM_WORLD, 3);
  }
  redist_plan_destroy(&plan);
  const double t1 = now();
  for (int64_t lj = 0; lj < b_cols; ++lj) {
    const int64_t gj = (lj / BB) * BB * size + b_col * BB + lj % BB;
    for (int64_t i = 0; i < WM; ++i)
      if (b[i + lj * WM] != value(WI + i, WJ + gj)) ++wrong;
  }
  long long total = 0;
  MPI_Reduce(&wrong, &total, 1, MPI_LONG_LONG, MPI_SUM, 0, MPI_COMM_WORLD);
  if (rank == 0)
    printf("large_run: %d ranks, A local array %lld elements (%.2f GB, > 2^31 = %lld), window "
           "%dx%d at local offsets up to %lld; create+execute %.3f s; %lld wrong elements\n",
           size, (long long)a_elems, 4.0 * (double)a_elems / 1e9, 1LL << 31, WM, WN,
           (long long)(WI + WM - 1) + (long long)(WJ + WN - 1) * MG, t1 - t0, total);
  free(a);
  free(b);
  free(b_ranks);
  MPI_Finalize();
  return wrong != 0;
}
EOF
mpicc -O2 -std=gnu11 -I include "$work/large_run.c" -o "$work/large_run" -L"$build/src" -lredist \
  -Wl,-rpath,"$(cd "$build/src" && pwd)"
mpirun --oversubscribe -n "$ranks" "$work/large_run"
