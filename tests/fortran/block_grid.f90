!> Module redist's block grids (type(redist_block_grid), redist_grid_plan_create) against an
!> element-by-element oracle written here from the definitions (global row g in block r where
!> row_splits(r + 1) <= g < row_splits(r + 2); block (r, c) on rank owners(r + 1, c + 1), its
!> element (i, j) at offset + i + j*ld column-major or offset + i*ld + j row-major; the
!> block-cyclic side as in layout_ext.f90), not from src/:
!>   - random grids: splits at random offsets (empty blocks), random owners, this rank's blocks
!>     in a shuffled order at scattered offsets with padded ld, either order; grid -> grid,
!>     grid -> block-cyclic redist_layout_ext and back (first blocks, either order, padded
!>     lld), windows inside larger matrices;
!>   - copies (redist_plan_execute) and ops N / T (and C for complex) with alpha and beta
!>     (redist_plan_execute_op), blocking or split (begin / end), real(real64) and
!>     complex(real64); every element of every local array checked, padding included;
!>   - errors: splits not increasing, an owner outside the communicator (everywhere, and on one
!>     rank), owners of the wrong shape on one rank: the status on every rank.
!> Usage: redist_fortran_block_grid [--cases=N]; prints "..., 0 failures" and PASS.
!> The cases and the oracle are in block_grid_cases.f90.
program redist_fortran_block_grid
  use, intrinsic :: iso_fortran_env, only: output_unit
  use mpi_f08
  use block_grid_cases
  implicit none
  integer :: total_failures, cases, k
  character(len=64) :: argument

  call MPI_Init()
  call MPI_Comm_rank(MPI_COMM_WORLD, me)
  call MPI_Comm_size(MPI_COMM_WORLD, nprocs)
  cases = 240
  do k = 1, command_argument_count()
    call get_command_argument(k, argument)
    if (argument(1:8) == '--cases=') read (argument(9:), *) cases
  end do
  seed = 20261129
  failures = 0
  checks = 0
  do k = 1, cases
    call random_case(k)
  end do
  call error_cases()

  call MPI_Allreduce(failures, total_failures, 1, MPI_INTEGER, MPI_SUM, MPI_COMM_WORLD)
  if (me == 0) then
    write (output_unit, '(a, i0, a, i0, a, i0, a)') 'redist_fortran_block_grid: np ', nprocs, &
      ', ', checks, ' checks on rank 0, ', total_failures, ' failures'
    if (total_failures == 0) write (output_unit, '(a)') 'PASS'
  end if
  call MPI_Finalize()
  if (total_failures /= 0) error stop 1
end program redist_fortran_block_grid
