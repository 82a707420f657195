!> Module redist's redist_propose_grid_ranks: a 5 x 4*nprocs matrix on a 1 x nprocs grid
!> numbered backwards, to a new 1 x nprocs grid of the same blocks. The proposal must number
!> it backwards too (every element stays in place: the bytes kept with it are the whole
!> matrix, with the identity order only the middle rank's part), the same on every process,
!> with an integer and a type(MPI_Comm) communicator; a plan onto the proposed grid copies
!> every element within its process (B equals A locally). Bad input (b%mb = 0, a grid larger
!> than the communicator): REDIST_ERR_ARGUMENT on every process, the message naming the
!> argument, nothing changed. Prints "..., 0 failures" and PASS when every check holds.
program relabel
  use, intrinsic :: iso_fortran_env, only: int64, real64, output_unit
  use mpi_f08
  use redist
  implicit none

  integer, parameter :: rows = 5, block = 2
  integer :: me, nprocs, failures, total_failures, status, k
  type(redist_layout) :: a, b
  integer, allocatable :: order(:, :), backwards(:, :), everyone(:)
  integer(int64) :: before, after, whole
  real(real64), allocatable :: la(:, :), lb(:, :)
  type(redist_plan) :: plan
  type(redist_plan_info) :: info

  call MPI_Init()
  call MPI_Comm_rank(MPI_COMM_WORLD, me)
  call MPI_Comm_size(MPI_COMM_WORLD, nprocs)
  failures = 0
  whole = int(rows, int64) * 2 * block * nprocs * 8

  backwards = reshape([(nprocs - k, k = 1, nprocs)], [1, nprocs])
  a%m = rows
  a%n = 2 * block * nprocs
  a%mb = block
  a%nb = block
  a%ranks = backwards
  a%lld = rows
  b = a
  deallocate (b%ranks) ! the grid being created: its ranks are proposed

  ! An integer handle, then a type(MPI_Comm).
  allocate (order(1, nprocs))
  order = -1
  before = -1
  after = -1
  call redist_propose_grid_ranks(MPI_COMM_WORLD%MPI_VAL, rows, 2 * block * nprocs, &
                                 REDIST_DOUBLE, a, b, order, status, before, after)
  call expect(status == REDIST_SUCCESS, 'proposal (integer comm)')
  call expect(all(order == backwards), 'the proposal numbers the grid backwards')
  call expect(after == whole, 'every byte is kept with the proposal')
  call expect(before == merge(whole / nprocs, 0_int64, mod(nprocs, 2) == 1), &
              'the identity keeps only the middle rank''s part')
  allocate (everyone(nprocs * nprocs))
  call MPI_Allgather(order, nprocs, MPI_INTEGER, everyone, nprocs, MPI_INTEGER, MPI_COMM_WORLD)
  call expect(all(everyone == reshape(spread(order(1, :), 2, nprocs), [nprocs * nprocs])), &
              'every process got the same proposal')
  order = -1
  call redist_propose_grid_ranks(MPI_COMM_WORLD, rows, 2 * block * nprocs, REDIST_DOUBLE, a, b, &
                                 order, status)
  call expect(status == REDIST_SUCCESS .and. all(order == backwards), &
              'proposal (type(MPI_Comm), no byte counts)')

  ! A copy onto the proposed grid: every element stays on its process, B equals A.
  b%ranks = order
  allocate (la(rows, 2 * block), lb(rows, 2 * block))
  call random_number(la)
  lb = -1
  call redist_plan_create(plan, MPI_COMM_WORLD, rows, 2 * block * nprocs, REDIST_DOUBLE, a, b, &
                          status)
  call expect(status == REDIST_SUCCESS, 'plan onto the proposed grid')
  call redist_plan_execute(plan, la, lb, status)
  call expect(status == REDIST_SUCCESS .and. &
              all(transfer(lb, [0_int64]) == transfer(la, [0_int64])), &
              'B equals A bit for bit on every process')
  call redist_plan_get_info(plan, info, status)
  call expect(info%bytes_local == whole / nprocs .and. info%bytes_sent == 0, &
              'the plan copies within the process only')
  call redist_plan_destroy(plan, status)

  ! Bad input: nothing changed, the argument named, on every process.
  order = -1
  before = -1
  b%mb = 0
  call redist_propose_grid_ranks(MPI_COMM_WORLD, rows, 2 * block * nprocs, REDIST_DOUBLE, a, b, &
                                 order, status, before)
  call expect(status == REDIST_ERR_ARGUMENT .and. all(order == -1) .and. before == -1, &
              'b%mb = 0: REDIST_ERR_ARGUMENT, nothing changed')
  call expect(index(redist_message(), 'redist_propose_grid_ranks: argument b->mb = 0') > 0, &
              'the message names b->mb')
  b%mb = block
  deallocate (order)
  allocate (order(2, nprocs))
  order = -1
  call redist_propose_grid_ranks(MPI_COMM_WORLD, rows, 2 * block * nprocs, REDIST_DOUBLE, a, b, &
                                 order, status)
  call expect(status == REDIST_ERR_ARGUMENT .and. all(order == -1), &
              'a 2 x nprocs grid: REDIST_ERR_ARGUMENT, nothing changed')
  call expect(index(redist_message(), 'argument b->nprow*npcol') > 0, &
              'the message names b->nprow*npcol')

  call MPI_Allreduce(failures, total_failures, 1, MPI_INTEGER, MPI_SUM, MPI_COMM_WORLD)
  if (me == 0) then
    write (output_unit, '(a, i0, a, i0, a)') 'relabel: ', nprocs, ' processes, ', &
      total_failures, ' failures'
    if (total_failures == 0) write (output_unit, '(a)') 'PASS'
  end if
  call MPI_Finalize()
  if (total_failures /= 0) error stop 1

contains

  subroutine expect(ok, what)
    logical, intent(in) :: ok
    character(len=*), intent(in) :: what
    if (ok) return
    failures = failures + 1
    write (output_unit, '(a, i0, 4a)') 'FAIL: rank ', me, ': ', what, '; message: ', &
      redist_message()
  end subroutine expect

end program relabel
