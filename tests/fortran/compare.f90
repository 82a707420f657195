!> redist's Fortran modules against ScaLAPACK's own PxGEMR2D / PxTRMR2D on random cases (see
!> compare_cases), after the error contract (see contract_checks).
!> Usage: redist_fortran_compare [--cases=N] [--seed=S]; prints PASS and exits 0 when every
!> comparison on every process agrees.
program redist_fortran_compare
  use, intrinsic :: iso_fortran_env, only: int64, output_unit
  use mpi_f08
  use compare_cases
  use contract_checks
  use scalapack_reference, only: blacs_get, blacs_gridinit, blacs_gridexit, blacs_exit
  implicit none
  integer :: me, nprocs, ictxt, k, cases, failures, total_failures, comparisons
  integer(int64) :: seed
  type(rng_t) :: rng
  type(case_t) :: c

  cases = 100
  seed = 20260521
  call command_options(cases, seed)

  call MPI_Init()
  call MPI_Comm_rank(MPI_COMM_WORLD, me)
  call MPI_Comm_size(MPI_COMM_WORLD, nprocs)
  call blacs_get(-1, 0, ictxt)
  call blacs_gridinit(ictxt, 'R', 1, nprocs)

  failures = 0
  call check_contract(me, nprocs, ictxt, failures)

  rng%state = seed
  comparisons = 0
  do k = 1, cases
    call draw_case(rng, k, nprocs, me, ictxt, c)
    comparisons = comparisons + run_case(c, failures)
    call free_case(c)
  end do

  call MPI_Allreduce(failures, total_failures, 1, MPI_INTEGER, MPI_SUM, MPI_COMM_WORLD)
  if (me == 0) then
    write (output_unit, '(a, i0, a, i0, a, i0, a, i0, a, i0, a)') &
      'redist_fortran_compare: np ', nprocs, ', seed ', seed, ', ', cases, ' cases, ', &
      comparisons, ' comparisons with ScaLAPACK per process, ', total_failures, ' failures'
    if (total_failures == 0) write (output_unit, '(a)') 'PASS'
  end if
  call blacs_gridexit(ictxt)
  call blacs_exit(1)
  call MPI_Finalize()
  if (total_failures /= 0) error stop 1
end program redist_fortran_compare
