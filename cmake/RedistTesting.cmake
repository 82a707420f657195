# add_mpi_test(NAME name COMMAND target [args...] RANKS n [TIMEOUT seconds])
# Registers `name` to run under mpiexec with n ranks (oversubscribed: the test machines have
# two cores). Every MPI test gets a timeout so that a deadlock fails instead of hanging.
set(REDIST_MPIEXEC_FLAGS --oversubscribe CACHE STRING "Extra flags for mpiexec in tests")
function(add_mpi_test)
  cmake_parse_arguments(T "" "NAME;RANKS;TIMEOUT" "COMMAND" ${ARGN})
  if(NOT T_TIMEOUT)
    set(T_TIMEOUT 300)
  endif()
  list(POP_FRONT T_COMMAND exe)
  add_test(NAME ${T_NAME}
           COMMAND ${MPIEXEC_EXECUTABLE} ${MPIEXEC_NUMPROC_FLAG} ${T_RANKS} ${REDIST_MPIEXEC_FLAGS}
                   ${MPIEXEC_PREFLAGS} $<TARGET_FILE:${exe}> ${MPIEXEC_POSTFLAGS} ${T_COMMAND})
  set_tests_properties(${T_NAME} PROPERTIES TIMEOUT ${T_TIMEOUT} PROCESSORS ${T_RANKS}
    LABELS mpi
    ENVIRONMENT "OMPI_ALLOW_RUN_AS_ROOT=1;OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1;OMPI_MCA_mpi_yield_when_idle=1;OMP_NUM_THREADS=1;OMPI_MCA_rmaps_base_oversubscribe=1")
endfunction()
