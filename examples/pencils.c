/* The pencil transposes of a 3-D FFT with redist's N-d plans (docs/nd.md, "Worked example").
 *
 * A field u(x, y, z) of NX x NY x NZ doubles, C order (z fastest), on a P0 x P1 process grid,
 * is held in turn as
 *   z-pencils (BLOCK, BLOCK, *)   every process holds whole lines along z
 *   x-pencils (*, BLOCK, BLOCK)   ... along x
 *   y-pencils (BLOCK, *, BLOCK)   ... along y
 * A 3-D FFT transforms along the whole dimension in each; here a stand-in adds 1 to every
 * element. Four plans, created once: z -> x -> y, then back y -> x -> z. After every move each
 * process checks every element it holds against the global formula. Run with any number of
 * processes: mpirun -n 4 ./redist_example_pencils
 */
#include <redist.h>

#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>

enum { NX = 12, NY = 10, NZ = 8 };

/* One pencil layout: which dimension is whole, and this process's block of the other two. */
typedef struct pencil {
  const char *name;
  int distribs[3];
  int psizes[3];
  int64_t first[3], count[3]; /* this process's global start and extent per dimension */
} pencil;

static const int64_t gsizes[3] = {NX, NY, NZ};

/* The pencil whose dimension `whole` is not distributed; the grid P0 x P1 over the other two. */
static pencil make_pencil(const char *name, int whole, int p0, int p1, int rank) {
  pencil p = {.name = name};
  int next = 0;
  int coords[3] = {0, 0, 0};
  const int grid[2] = {p0, p1};
  const int grid_coords[2] = {rank / p1, rank % p1}; /* row-major, as darray numbers them */
  for (int d = 0; d < 3; ++d) {
    if (d == whole) {
      p.distribs[d] = MPI_DISTRIBUTE_NONE;
      p.psizes[d] = 1;
    } else {
      p.distribs[d] = MPI_DISTRIBUTE_BLOCK;
      p.psizes[d] = grid[next];
      coords[d] = grid_coords[next];
      ++next;
    }
    const int64_t block = (gsizes[d] + p.psizes[d] - 1) / p.psizes[d];
    int64_t end = (coords[d] + 1) * block;
    p.first[d] = coords[d] * block < gsizes[d] ? coords[d] * block : gsizes[d];
    p.count[d] = (end < gsizes[d] ? end : gsizes[d]) - p.first[d];
  }
  return p;
}

static redist_darray darray_of(const pencil *p) {
  redist_darray a = {.ndims = 3,
                     .gsizes = gsizes,
                     .distribs = p->distribs,
                     .psizes = p->psizes,
                     .order = MPI_ORDER_C};
  return a;
}

static int64_t elements(const pencil *p) {
  return p->count[0] * p->count[1] * p->count[2];
}

/* Whole numbers, so that the stand-in transforms are exact. */
static double field(int64_t x, int64_t y, int64_t z) {
  return (double)(x + 100 * y + 10000 * z);
}

/* Elements of `u` (held as pencil p) that differ from field + `added`. */
static long wrong_elements(const pencil *p, const double *u, double added) {
  long wrong = 0;
  int64_t at = 0;
  for (int64_t x = 0; x < p->count[0]; ++x)
    for (int64_t y = 0; y < p->count[1]; ++y)
      for (int64_t z = 0; z < p->count[2]; ++z, ++at)
        if (u[at] != field(p->first[0] + x, p->first[1] + y, p->first[2] + z) + added) ++wrong;
  return wrong;
}

static void stop_on_error(int status, const char *what) {
  if (status == REDIST_SUCCESS) return;
  fprintf(stderr, "%s: %s: %s\n", what, redist_status_name(status), redist_last_error());
  MPI_Abort(MPI_COMM_WORLD, 1);
}

int main(int argc, char **argv) {
  MPI_Init(&argc, &argv);
  int rank = 0, size = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  int p0 = 1;
  for (int d = 1; d * d <= size; ++d)
    if (size % d == 0) p0 = d;
  const int p1 = size / p0;

  pencil pencils[3] = {make_pencil("z-pencils (BLOCK, BLOCK, *)", 2, p0, p1, rank),
                       make_pencil("x-pencils (*, BLOCK, BLOCK)", 0, p0, p1, rank),
                       make_pencil("y-pencils (BLOCK, *, BLOCK)", 1, p0, p1, rank)};
  redist_darray darrays[3];
  double *u[3];
  for (int k = 0; k < 3; ++k) {
    darrays[k] = darray_of(&pencils[k]);
    u[k] = calloc((size_t)(elements(&pencils[k]) > 0 ? elements(&pencils[k]) : 1), sizeof(double));
  }
  /* The path: z -> x -> y -> x -> z, one plan per move, created once. */
  const int path[5] = {0, 1, 2, 1, 0};
  redist_plan plans[4];
  for (int s = 0; s < 4; ++s)
    stop_on_error(redist_nd_plan_create(MPI_COMM_WORLD, REDIST_DOUBLE, &darrays[path[s]],
                                        &darrays[path[s + 1]], NULL, &plans[s]),
                  "creating a plan");

  const pencil *z = &pencils[0];
  int64_t at = 0;
  for (int64_t x = 0; x < z->count[0]; ++x)
    for (int64_t y = 0; y < z->count[1]; ++y)
      for (int64_t k = 0; k < z->count[2]; ++k)
        u[0][at++] = field(z->first[0] + x, z->first[1] + y, z->first[2] + k);

  long wrong = 0;
  for (int s = 0; s < 4; ++s) {
    const int from = path[s], to = path[s + 1];
    for (int64_t e = 0; e < elements(&pencils[from]); ++e)
      u[from][e] += 1.0; /* the 1-D transforms along the whole dimension */
    stop_on_error(redist_plan_execute(plans[s], u[from], u[to]), "moving the field");
    const long here = wrong_elements(&pencils[to], u[to], s + 1.0);
    long total = 0;
    MPI_Allreduce(&here, &total, 1, MPI_LONG, MPI_SUM, MPI_COMM_WORLD);
    if (rank == 0)
      printf("%s -> %s: %ld elements wrong\n", pencils[from].name, pencils[to].name, total);
    wrong += total;
  }
  if (rank == 0)
    printf("%s: %d x %d grid, %d x %d x %d field, %ld elements wrong\n",
           wrong == 0 ? "OK" : "FAILED", p0, p1, NX, NY, NZ, wrong);
  for (int s = 0; s < 4; ++s)
    redist_plan_destroy(&plans[s]);
  for (int k = 0; k < 3; ++k)
    free(u[k]);
  MPI_Finalize();
  return wrong == 0 ? 0 : 1;
}
