/* C side of the Fortran module `redist_ring`: communicators arrive as Fortran handles (MPI_Fint)
 * and become MPI_Comm with MPI_Comm_f2c, as in redist_fortran_support.c. Not a public API. */
#include <redist_ring.h>

int redist_f_ring_target_from_weight(MPI_Fint comm, int64_t load, double weight, int64_t *target);
int redist_f_ring_plan_create(MPI_Fint comm, int direction, int transport, int64_t load,
                              int64_t target, double cost_next, double cost_prev,
                              int64_t item_bytes, int64_t chunk_items, redist_ring_plan *plan);

int redist_f_ring_target_from_weight(MPI_Fint comm, int64_t load, double weight, int64_t *target) {
  return redist_ring_target_from_weight(MPI_Comm_f2c(comm), load, weight, target);
}

int redist_f_ring_plan_create(MPI_Fint comm, int direction, int transport, int64_t load,
                              int64_t target, double cost_next, double cost_prev,
                              int64_t item_bytes, int64_t chunk_items, redist_ring_plan *plan) {
  return redist_ring_plan_create(MPI_Comm_f2c(comm), direction, transport, load, target, cost_next,
                                 cost_prev, item_bytes, chunk_items, plan);
}
