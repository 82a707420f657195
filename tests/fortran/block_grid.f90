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
  use mpi_f08
  use test_run, only: start_run, report_run
  use block_grid_cases
  implicit none
  integer :: cases, k

  cases = 240
  call start_run(cases)
  seed = 20261129
  do k = 1, cases
    call random_case(k)
  end do
  call error_cases()

  k = report_run('redist_fortran_block_grid')
  call MPI_Finalize()
  if (k /= 0) error stop 1
end program redist_fortran_block_grid
