!> The pencil transposes of a 3-D FFT with module redist's N-d plans (docs/nd.md, "Fortran").
!> A field u(x, y, z) of nx x ny x nz doubles, Fortran order, on a p0 x p1 process grid, is held
!> in turn as z-pencils (BLOCK, BLOCK, *), x-pencils (*, BLOCK, BLOCK) and y-pencils
!> (BLOCK, *, BLOCK); a stand-in for the 1-D transforms adds 1 to every element. Four plans,
!> created once, move it z -> x -> y -> x -> z, executed on the rank-3 arrays themselves; the
!> last move is split, with other data set up between begin and end. After every
!> move each process checks every element it holds against the global formula.
!> Run with any number of processes: mpirun -n 4 ./redist_example_pencils_f
program pencils
  use, intrinsic :: iso_fortran_env, only: int64, real64, output_unit
  use mpi_f08
  use redist
  implicit none
  integer, parameter :: nx = 12, ny = 10, nz = 8
  !> The three pencils: names, and the dimension held whole by each.
  character(len=*), parameter :: names(3) = [character(len=27) :: 'z-pencils (BLOCK, BLOCK, *)', &
                                             'x-pencils (*, BLOCK, BLOCK)', &
                                             'y-pencils (BLOCK, *, BLOCK)']
  integer, parameter :: whole(3) = [3, 1, 2], path(5) = [1, 2, 3, 2, 1]
  type(redist_nd_layout) :: layouts(3)
  type(redist_plan) :: plans(4)
  type :: field_part
    real(real64), allocatable :: u(:, :, :)
    integer :: first(3) !< 0-based global start per dimension
  end type field_part
  type(field_part), target :: parts(3)
  integer :: me, nprocs, p0, p1, d, k, s, status, wrong, total, all_wrong

  call MPI_Init()
  call MPI_Comm_rank(MPI_COMM_WORLD, me)
  call MPI_Comm_size(MPI_COMM_WORLD, nprocs)
  p0 = 1
  do d = 1, nprocs
    if (d * d > nprocs) exit
    if (mod(nprocs, d) == 0) p0 = d
  end do
  p1 = nprocs / p0

  do k = 1, 3
    call make_pencil(k)
  end do
  do s = 1, 4
    call redist_nd_plan_create(plans(s), MPI_COMM_WORLD, REDIST_DOUBLE, layouts(path(s)), &
                               layouts(path(s + 1)), status)
    call stop_on_error('creating a plan')
  end do

  call set_field(parts(1), 0)
  all_wrong = 0
  do s = 1, 4
    associate (from => parts(path(s)), to => parts(path(s + 1)))
      from%u = from%u + 1 ! the 1-D transforms along the whole dimension
      if (s < 4) then
        call redist_plan_execute(plans(s), from%u, to%u, status)
        call stop_on_error('moving the field')
      else
        call redist_plan_execute_begin(plans(s), from%u, to%u, status)
        call stop_on_error('beginning the last move')
        call set_field(parts(3), 0) ! work on other data (not A, not B) while the field moves
        call redist_plan_execute_end(plans(s), status)
        call stop_on_error('ending the last move')
      end if
      wrong = wrong_elements(to, real(s, real64))
    end associate
    call MPI_Allreduce(wrong, total, 1, MPI_INTEGER, MPI_SUM, MPI_COMM_WORLD)
    if (me == 0) write (output_unit, '(a, a, a, a, i0, a)') names(path(s)), ' -> ', &
      names(path(s + 1)), ': ', total, ' elements wrong'
    all_wrong = all_wrong + total
  end do
  if (me == 0) write (output_unit, '(a, a, i0, a, i0, a, 3(i0, a), i0, a)') &
    trim(merge('OK    ', 'FAILED', all_wrong == 0)), ': ', p0, ' x ', p1, ' grid, ', nx, ' x ', &
    ny, ' x ', nz, ' field, ', all_wrong, ' elements wrong'
  do s = 1, 4
    call redist_plan_destroy(plans(s), status)
  end do
  call MPI_Finalize()
  if (all_wrong /= 0) error stop 1

contains

  !> Pencil k: BLOCK on the two dimensions the p0 x p1 grid spans, '*' on the whole one; this
  !> process's part allocated with its local extents.
  subroutine make_pencil(k)
    integer, intent(in) :: k
    integer :: psizes(3), coords(3), counts(3), next, grid(2), grid_coords(2), block, d
    type(redist_distribution) :: dist(3)
    grid = [p0, p1]
    grid_coords = [me / p1, mod(me, p1)] ! row-major, as MPI_Type_create_darray numbers them
    next = 1
    do d = 1, 3
      if (d == whole(k)) then
        dist(d) = redist_star()
        psizes(d) = 1
        coords(d) = 0
      else
        dist(d) = redist_block()
        psizes(d) = grid(next)
        coords(d) = grid_coords(next)
        next = next + 1
      end if
      block = (extent(d) + psizes(d) - 1) / psizes(d)
      parts(k)%first(d) = min(extent(d), coords(d) * block)
      counts(d) = min(extent(d), (coords(d) + 1) * block) - parts(k)%first(d)
    end do
    layouts(k) = redist_nd_layout(gsizes=[nx, ny, nz], dist=dist, psizes=psizes)
    allocate (parts(k)%u(counts(1), counts(2), counts(3)))
  end subroutine make_pencil

  integer function extent(d)
    integer, intent(in) :: d
    integer, parameter :: extents(3) = [nx, ny, nz]
    extent = extents(d)
  end function extent

  !> Whole numbers, so that the stand-in transforms are exact.
  real(real64) function field(x, y, z)
    integer, intent(in) :: x, y, z
    field = real(x + 100 * y + 10000 * z, real64)
  end function field

  subroutine set_field(part, added)
    type(field_part), intent(inout) :: part
    integer, intent(in) :: added
    integer :: i, j, k
    do k = 1, size(part%u, 3)
      do j = 1, size(part%u, 2)
        do i = 1, size(part%u, 1)
          part%u(i, j, k) = field(part%first(1) + i - 1, part%first(2) + j - 1, &
                                  part%first(3) + k - 1) + added
        end do
      end do
    end do
  end subroutine set_field

  integer function wrong_elements(part, added)
    type(field_part), intent(in) :: part
    real(real64), intent(in) :: added
    integer :: i, j, k
    wrong_elements = 0
    do k = 1, size(part%u, 3)
      do j = 1, size(part%u, 2)
        do i = 1, size(part%u, 1)
          if (abs(part%u(i, j, k) - (field(part%first(1) + i - 1, part%first(2) + j - 1, &
                                           part%first(3) + k - 1) + added)) > 0) &
            wrong_elements = wrong_elements + 1
        end do
      end do
    end do
  end function wrong_elements

  subroutine stop_on_error(what)
    character(len=*), intent(in) :: what
    if (status == REDIST_SUCCESS) return
    write (output_unit, '(a, a, a, a, a)') what, ': ', redist_status_name(status), ': ', &
      redist_message()
    error stop 1
  end subroutine stop_on_error

end program pencils
