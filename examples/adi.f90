!> ADI-style alternation with module redist: a 96 x 80 field is swept along rows while each
!> process holds whole rows (row blocks on a P x 1 grid), then along columns while each holds
!> whole columns (column blocks on a 1 x P grid). Two plans, created once, move the field back
!> and forth; every iteration executes both. The result is compared bit for bit with the same
!> sweeps done on one process.
!> Run with any number of processes: mpirun -n 4 ./redist_example_adi
program adi
  use, intrinsic :: iso_fortran_env, only: int64, real64, output_unit
  use mpi_f08
  use redist
  implicit none
  integer, parameter :: m = 96, n = 80, iterations = 50
  real(real64), parameter :: r = 0.4_real64
  type(redist_layout) :: by_rows, by_columns
  type(redist_plan) :: rows_to_columns, columns_to_rows
  real(real64), allocatable :: u_rows(:, :), u_columns(:, :), serial(:, :)
  integer :: me, nprocs, status, p, it, i, j, row_block, column_block, first_row, first_column
  integer :: my_rows, my_columns, wrong, total_wrong

  call MPI_Init()
  call MPI_Comm_rank(MPI_COMM_WORLD, me)
  call MPI_Comm_size(MPI_COMM_WORLD, nprocs)

  row_block = (m + nprocs - 1) / nprocs
  column_block = (n + nprocs - 1) / nprocs
  first_row = min(m, me * row_block)
  first_column = min(n, me * column_block)
  my_rows = min(m, first_row + row_block) - first_row
  my_columns = min(n, first_column + column_block) - first_column

  by_rows = redist_layout(m=m, n=n, mb=row_block, nb=n, ranks=reshape([(p, p = 0, nprocs - 1)], &
                          [nprocs, 1]), lld=max(1, my_rows))
  by_columns = redist_layout(m=m, n=n, mb=m, nb=column_block, &
                             ranks=reshape([(p, p = 0, nprocs - 1)], [1, nprocs]), lld=m)
  call redist_plan_create(rows_to_columns, MPI_COMM_WORLD, m, n, REDIST_DOUBLE, by_rows, &
                          by_columns, status)
  call stop_on_error('creating the rows-to-columns plan')
  call redist_plan_create(columns_to_rows, MPI_COMM_WORLD, m, n, REDIST_DOUBLE, by_columns, &
                          by_rows, status)
  call stop_on_error('creating the columns-to-rows plan')

  allocate (serial(m, n), u_rows(max(1, my_rows), n), u_columns(m, my_columns))
  do j = 1, n
    do i = 1, m
      serial(i, j) = sin(0.1_real64 * i) * cos(0.07_real64 * j)
    end do
  end do
  u_rows(1:my_rows, :) = serial(first_row + 1:first_row + my_rows, :)

  do it = 1, iterations
    do i = 1, my_rows
      call implicit_sweep(u_rows(i, :))
    end do
    call redist_plan_execute(rows_to_columns, u_rows, u_columns, status)
    call stop_on_error('moving rows to columns')
    do j = 1, my_columns
      call implicit_sweep(u_columns(:, j))
    end do
    call redist_plan_execute(columns_to_rows, u_columns, u_rows, status)
    call stop_on_error('moving columns to rows')

    do i = 1, m
      call implicit_sweep(serial(i, :))
    end do
    do j = 1, n
      call implicit_sweep(serial(:, j))
    end do
  end do

  wrong = count(.not. same_bits(u_rows(1:my_rows, :), serial(first_row + 1:first_row + my_rows, :)))
  call MPI_Reduce(wrong, total_wrong, 1, MPI_INTEGER, MPI_SUM, 0, MPI_COMM_WORLD)
  if (me == 0) then
    write (output_unit, '(a, i0, a, i0, a, i0, a, i0, a, i0, a)') 'ADI: ', iterations, &
      ' iterations on a ', m, ' x ', n, ' field over ', nprocs, &
      ' processes, 2 plans created once, executed ', 2 * iterations, ' times'
    write (output_unit, '(a, i0, a)') 'ADI: ', total_wrong, &
      ' elements differ from the serial sweeps'
    if (total_wrong == 0) write (output_unit, '(a)') 'OK'
  end if

  call redist_plan_destroy(rows_to_columns, status)
  call redist_plan_destroy(columns_to_rows, status)
  call MPI_Finalize()
  if (total_wrong /= 0 .and. me == 0) error stop 1

contains

  subroutine stop_on_error(what)
    character(len=*), intent(in) :: what
    if (status == REDIST_SUCCESS) return
    write (output_unit, '(4a)') 'ADI: error while ', what, ': ', redist_message()
    call MPI_Abort(MPI_COMM_WORLD, 1)
  end subroutine stop_on_error

  !> One implicit step along a line: solve (1 + 2r) y(k) - r y(k-1) - r y(k+1) = x(k) with
  !> y = 0 beyond both ends (Thomas algorithm), in place.
  subroutine implicit_sweep(x)
    real(real64), intent(inout) :: x(:)
    real(real64) :: c(size(x)), denominator
    integer :: k
    c(1) = -r / (1 + 2 * r)
    x(1) = x(1) / (1 + 2 * r)
    do k = 2, size(x)
      denominator = 1 + 2 * r + r * c(k - 1)
      c(k) = -r / denominator
      x(k) = (x(k) + r * x(k - 1)) / denominator
    end do
    do k = size(x) - 1, 1, -1
      x(k) = x(k) - c(k) * x(k + 1)
    end do
  end subroutine implicit_sweep

  elemental logical function same_bits(x, y)
    real(real64), intent(in) :: x, y
    same_bits = transfer(x, 0_int64) == transfer(y, 0_int64)
  end function same_bits

end program adi
