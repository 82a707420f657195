!> What every random Fortran test program does around its cases: MPI started, this rank and the
!> size, --cases=N read; each check counted (a failed one printed with redist's message); at the
!> end the failures summed over the ranks and one line on rank 0 ("<name>: np P, C checks on
!> rank 0<detail>, F failures", then PASS when there are none).
module test_run
  use, intrinsic :: iso_fortran_env, only: output_unit
  use mpi_f08
  use redist, only: redist_message
  implicit none
  private
  public :: me, nprocs, failures, checks, start_run, report_run, check

  integer :: me = 0, nprocs = 1, failures = 0, checks = 0

contains

  !> MPI_Init; me, nprocs on MPI_COMM_WORLD; `cases` (its default on entry) from --cases=N;
  !> no check made yet.
  subroutine start_run(cases)
    integer, intent(inout) :: cases
    character(len=64) :: argument
    integer :: k

    call MPI_Init()
    call MPI_Comm_rank(MPI_COMM_WORLD, me)
    call MPI_Comm_size(MPI_COMM_WORLD, nprocs)
    failures = 0
    checks = 0
    do k = 1, command_argument_count()
      call get_command_argument(k, argument)
      if (argument(1:8) == '--cases=') read (argument(9:), *) cases
    end do
  end subroutine start_run

  !> The failures of every rank, summed (on every rank), and the line on rank 0; `detail` goes
  !> after "checks on rank 0".
  function report_run(name, detail) result(total)
    character(len=*), intent(in) :: name
    character(len=*), intent(in), optional :: detail
    integer :: total

    call MPI_Allreduce(failures, total, 1, MPI_INTEGER, MPI_SUM, MPI_COMM_WORLD)
    if (me /= 0) return
    if (present(detail)) then
      write (output_unit, '(a, i0, a, i0, a, a, a, i0, a)') name // ': np ', nprocs, ', ', &
        checks, ' checks on rank 0', detail, ', ', total, ' failures'
    else
      write (output_unit, '(a, i0, a, i0, a, i0, a)') name // ': np ', nprocs, ', ', checks, &
        ' checks on rank 0, ', total, ' failures'
    end if
    if (total == 0) write (output_unit, '(a)') 'PASS'
  end function report_run

  !> One check: counted, and printed with redist's last message when it fails.
  subroutine check(ok, what)
    logical, intent(in) :: ok
    character(len=*), intent(in) :: what
    checks = checks + 1
    if (ok) return
    failures = failures + 1
    write (output_unit, '(a, i0, a, a, a, a)') 'FAIL: rank ', me, ': ', what, ': ', &
      trim(redist_message())
  end subroutine check

end module test_run
