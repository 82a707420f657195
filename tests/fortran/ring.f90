!> Module redist_ring from Fortran: worked schedules (numbers derived by hand in
!> tests/unit/test_ring.cpp), then rebalances of the columns of local arrays (LLD > rows) to
!> targets from weights, on rings and paths, each element checked against the item the test
!> itself expects there, then bad input (an error on every rank, arrays untouched).
program ring_test
  use, intrinsic :: ieee_arithmetic, only: ieee_positive_inf, ieee_value
  use, intrinsic :: iso_fortran_env, only: int64, real64
  use mpi_f08
  use redist_ring
  implicit none

  integer, parameter :: rows = 3, lld = 5
  real(real64), parameter :: pad = -7
  integer :: rank, nprocs, failures, checks, total_failures, total_checks
  real(real64) :: inf

  call MPI_Init()
  call MPI_Comm_rank(MPI_COMM_WORLD, rank)
  call MPI_Comm_size(MPI_COMM_WORLD, nprocs)
  inf = ieee_value(1.0_real64, ieee_positive_inf)
  failures = 0
  checks = 0

  call worked_schedules()
  call rebalance('ring, bidirectional, unequal costs', REDIST_RING_BIDIRECTIONAL, &
                 REDIST_RING_NEIGHBOUR, path=.false., f08=.true.)
  call rebalance('path, bidirectional', REDIST_RING_BIDIRECTIONAL, REDIST_RING_NEIGHBOUR, &
                 path=.true., f08=.false.)
  call rebalance('ring, unidirectional, direct', REDIST_RING_UNIDIRECTIONAL, REDIST_RING_DIRECT, &
                 path=.false., f08=.false.)
  call rebalance('path, unidirectional', REDIST_RING_UNIDIRECTIONAL, REDIST_RING_AUTO, &
                 path=.true., f08=.true.)
  call elements_as_items()
  call bad_input()

  call MPI_Allreduce(failures, total_failures, 1, MPI_INTEGER, MPI_SUM, MPI_COMM_WORLD)
  call MPI_Allreduce(checks, total_checks, 1, MPI_INTEGER, MPI_SUM, MPI_COMM_WORLD)
  if (rank == 0) then
    write (*, '(a, i0, a, i0, a, i0, a)') 'fortran ring: ', nprocs, ' ranks, ', total_checks, &
      ' checks, ', total_failures, ' failures'
    if (total_failures == 0) then
      write (*, '(a)') 'PASS'
    else
      write (*, '(a)') 'FAIL: see above'
    end if
  end if
  call MPI_Finalize()

contains

  !> Bit-for-bit equality (the values are exact: integers, or times on integer grids).
  elemental logical function same(x, y)
    real(real64), intent(in) :: x, y
    same = transfer(x, 0_int64) == transfer(y, 0_int64)
  end function same

  subroutine check(condition, what)
    logical, intent(in) :: condition
    character(len=*), intent(in) :: what
    checks = checks + 1
    if (condition) return
    failures = failures + 1
    if (failures <= 20) write (*, '(a, i0, a, a)') 'FAIL: rank ', rank, ': ', what
  end subroutine check

  subroutine check_status(status, expected, what)
    integer, intent(in) :: status, expected
    character(len=*), intent(in) :: what
    call check(status == expected, what//': status '//redist_status_name(status)//' ('// &
               redist_message()//'), expected '//redist_status_name(expected))
  end subroutine check_status

  !> Local planning on the unit tests' instances.
  subroutine worked_schedules()
    type(redist_ring_schedule) :: s
    type(redist_ring_info) :: info
    integer :: status, k
    integer(int64), allocatable :: flow(:), items(:), targets(:)
    integer, allocatable :: from(:), to(:)
    real(real64), allocatable :: start(:), finish(:)

    ! Algorithm2ForwardsWithoutDelay: P0 sends 3 items at cost 2, P1 and P2 forward: time 6.
    call redist_ring_schedule_create(s, REDIST_RING_UNIDIRECTIONAL, [4_int64, 1_int64, 1_int64, &
                                     1_int64], [1_int64, 1_int64, 1_int64, 4_int64], status, &
                                     c_next=[2.0_real64, 1.0_real64, 1.0_real64, 1.0_real64])
    call check_status(status, REDIST_SUCCESS, 'schedule_create (Algorithm 2)')
    call redist_ring_schedule_get_info(s, info, status)
    call check_status(status, REDIST_SUCCESS, 'schedule_get_info (Algorithm 2)')
    call check(info%algorithm == REDIST_RING_ALGORITHM2, 'Algorithm 2 expected')
    call check(same(info%predicted_time, 6.0_real64) .and. same(info%lower_bound, 6.0_real64), &
               'Algorithm 2: time and Theorem 2 bound 6 expected')
    call check(info%light == 0, 'Algorithm 2 instance is not light')
    call redist_ring_schedule_get_flows(s, flow, status)
    call check(status == REDIST_SUCCESS .and. size(flow) == 4, 'schedule_get_flows')
    if (size(flow) == 4) call check(all(flow == [3, 3, 3, 0]), 'Algorithm 2 flows (3, 3, 3, 0)')
    call redist_ring_schedule_get_moves(s, from, to, items, start, finish, status)
    call check_status(status, REDIST_SUCCESS, 'schedule_get_moves')
    call check(all(to == mod(from + 1, 4)), 'unidirectional moves go to the successor')
    do k = 0, 2
      call check(sum(items, mask=from == k) == 3, 'each of P0..P2 sends 3 items')
    end do
    call check(same(maxval(finish), 6.0_real64) .and. all(start >= 0 .and. start < finish), &
               'move times')
    call redist_ring_schedule_destroy(s, status)
    call check_status(status, REDIST_SUCCESS, 'schedule_destroy')

    ! Lemma12IsNotTight: Lemma 12 gives 2, System 6's integer optimum 3 is reached.
    call redist_ring_schedule_create(s, REDIST_RING_BIDIRECTIONAL, [10_int64, 10_int64, &
                                     10_int64], [8_int64, 11_int64, 11_int64], status, &
                                     c_next=[1.0_real64, 3.0_real64, 1.0_real64], &
                                     c_prev=[2.0_real64, 1.0_real64, 1.0_real64])
    call check_status(status, REDIST_SUCCESS, 'schedule_create (Lemma 12 not tight)')
    call redist_ring_schedule_get_info(s, info, status)
    call check(info%algorithm == REDIST_RING_SYSTEM6, 'System 6 expected')
    call check(same(info%lower_bound, 2.0_real64) .and. same(info%system6, 3.0_real64) .and. &
               same(info%predicted_time, 3.0_real64), &
               'Lemma 12 = 2, System 6 = 3, time 3 expected')
    call redist_ring_schedule_destroy(s, status)

    call redist_ring_schedule_create(s, REDIST_RING_BIDIRECTIONAL, [1_int64, 2_int64], &
                                     [3_int64], status)
    call check_status(status, REDIST_ERR_ARGUMENT, 'schedule_create with 1 target for 2 loads')
    call check(index(redist_message(), 'argument targets') > 0, 'message names targets: '// &
               redist_message())
    call redist_ring_schedule_create(s, REDIST_RING_BIDIRECTIONAL, [1_int64, 0_int64], &
                                     [1_int64, 1_int64], status)
    call check_status(status, REDIST_ERR_ARGUMENT, 'schedule_create with an empty process')
    call check(index(redist_message(), 'argument loads[1] = 0') > 0, 'message names loads[1]: '// &
               redist_message())

    call redist_ring_targets_from_weights(10_int64, [1.0_real64, 2.0_real64, 3.0_real64], &
                                          targets, status)
    call check(status == REDIST_SUCCESS .and. all(targets == [2, 3, 5]), &
               'targets_from_weights(10, (1, 2, 3)) = (2, 3, 5)')
  end subroutine worked_schedules

  integer(int64) function load_of(r)
    integer, intent(in) :: r
    load_of = 2 + 3 * (nprocs - 1 - r) + mod(r, 2)
  end function load_of

  real(real64) function weight_of(r)
    integer, intent(in) :: r
    weight_of = 1 + r + 0.5_real64 * mod(r, 3)
  end function weight_of

  !> Row i of global item g (items numbered in rank order before the rebalance).
  real(real64) function value_of(g, i)
    integer(int64), intent(in) :: g
    integer, intent(in) :: i
    value_of = real(1000 * g + i, real64)
  end function value_of

  !> Targets in proportion to the weights, gathered, and checked against the definition: each
  !> at least 1, within one item of its share, adding up to the loads.
  subroutine gathered_targets(comm, loads, targets)
    type(MPI_Comm), intent(in) :: comm
    integer(int64), intent(in) :: loads(0:)
    integer(int64), intent(out) :: targets(0:)
    integer(int64) :: mine, total
    integer(int64), allocatable :: local(:)
    real(real64) :: weights(0:nprocs - 1), share
    integer :: status, r

    total = sum(loads)
    weights = [(weight_of(r), r=0, nprocs - 1)]
    call redist_ring_target_from_weight(comm, loads(rank), weights(rank), mine, status)
    call check_status(status, REDIST_SUCCESS, 'target_from_weight')
    call MPI_Allgather(mine, 1, MPI_INTEGER8, targets, 1, MPI_INTEGER8, comm)
    call check(sum(targets) == total, 'targets add up to the loads')
    do r = 0, nprocs - 1
      share = 1 + real(total - nprocs, real64) * weights(r) / sum(weights)
      call check(targets(r) >= 1 .and. abs(real(targets(r), real64) - share) < 1, &
                 'target within one item of its share')
    end do
    call redist_ring_targets_from_weights(total, weights, local, status)
    call check(status == REDIST_SUCCESS .and. all(local == targets), &
               'collective and local targets agree')
  end subroutine gathered_targets

  subroutine rebalance(name, direction, transport, path, f08)
    character(len=*), intent(in) :: name
    integer, intent(in) :: direction, transport
    logical, intent(in) :: path, f08
    type(redist_ring_plan) :: plan
    type(redist_ring_info) :: info
    integer(int64) :: loads(0:nprocs - 1), targets(0:nprocs - 1), total, first, g
    integer(int64), allocatable :: flow(:)
    real(real64), allocatable :: a(:, :), b(:, :)
    real(real64) :: cost_next, cost_prev, expected
    integer :: status, r, i, j, bad

    loads = [(load_of(r), r=0, nprocs - 1)]
    total = sum(loads)
    call gathered_targets(MPI_COMM_WORLD, loads, targets)
    cost_next = 1
    cost_prev = 1
    if (direction == REDIST_RING_BIDIRECTIONAL) then
      cost_next = 1 + mod(rank, 2)
      cost_prev = 1 + 2 * mod(rank + 1, 3)
    end if
    if (path .and. rank == nprocs - 1) cost_next = inf
    if (path .and. rank == 0) cost_prev = inf

    if (f08) then
      call redist_ring_plan_create(plan, MPI_COMM_WORLD, direction, transport, loads(rank), &
                                   targets(rank), int(rows * 8, int64), status, &
                                   cost_next=cost_next, cost_prev=cost_prev, chunk_items=2_int64)
    else
      call redist_ring_plan_create(plan, MPI_COMM_WORLD%MPI_VAL, direction, transport, &
                                   loads(rank), targets(rank), int(rows * 8, int64), status, &
                                   cost_next=cost_next, cost_prev=cost_prev, chunk_items=2_int64)
    end if
    call check_status(status, REDIST_SUCCESS, name//': plan_create')
    if (status /= REDIST_SUCCESS) return
    call redist_ring_plan_get_info(plan, info, status)
    call check_status(status, REDIST_SUCCESS, name//': plan_get_info')
    call check(info%predicted_time + 1e-9_real64 >= info%lower_bound, &
               name//': predicted time below the lower bound')
    if (transport /= REDIST_RING_AUTO) call check(info%transport == transport, &
                                                  name//': transport')
    call redist_ring_plan_get_flows(plan, flow, status)
    call check(status == REDIST_SUCCESS .and. size(flow) == nprocs, name//': plan_get_flows')
    if (size(flow) /= nprocs) return
    ! Conservation (Lemma 10): what enters minus what leaves is what a process gains.
    do r = 0, nprocs - 1
      call check(flow(r + 1) - flow(modulo(r - 1, nprocs) + 1) == loads(r) - targets(r), &
                 name//': flows do not conserve items')
    end do
    if (path) call check(flow(nprocs) == 0, name//': an item crossed the missing link')
    if (direction == REDIST_RING_UNIDIRECTIONAL) call check(all(flow >= 0), &
                                                            name//': a flow goes backwards')

    first = sum(loads(:rank - 1))
    allocate (a(lld, loads(rank)), b(lld, targets(rank) + 1))
    a = pad
    do j = 1, int(loads(rank))
      do i = 1, rows
        a(i, j) = value_of(first + j - 1, i)
      end do
    end do
    b = pad
    call redist_ring_plan_execute(plan, a, b, status)
    call check_status(status, REDIST_SUCCESS, name//': plan_execute')

    ! After the move, this process holds the targets(rank) items that follow, cyclically, the
    ! items of the ranks before it, starting where its left link's flow says.
    first = modulo(sum(targets(:rank - 1)) - flow(nprocs), total)
    if (path) first = sum(targets(:rank - 1))
    bad = 0
    do j = 1, size(b, 2)
      g = modulo(first + j - 1, total)
      do i = 1, lld
        expected = pad
        if (j <= targets(rank) .and. i <= rows) expected = value_of(g, i)
        if (.not. same(b(i, j), expected)) bad = bad + 1
      end do
    end do
    call check(bad == 0, name//': elements wrong after execute')
    first = sum(loads(:rank - 1))
    bad = 0
    do j = 1, int(loads(rank))
      do i = 1, rows
        if (.not. same(a(i, j), value_of(first + j - 1, i))) bad = bad + 1
      end do
    end do
    call check(bad == 0, name//': input array changed')
    call redist_ring_plan_destroy(plan, status)
    call check_status(status, REDIST_SUCCESS, name//': plan_destroy')
  end subroutine rebalance

  !> A rank-1 integer(int64) array: each element is an item.
  subroutine elements_as_items()
    type(redist_ring_plan) :: plan
    integer(int64) :: loads(0:nprocs - 1), targets(0:nprocs - 1), first, j
    integer(int64), allocatable :: a(:), b(:)
    integer :: status, r

    loads = [(load_of(r), r=0, nprocs - 1)]
    call gathered_targets(MPI_COMM_WORLD, loads, targets)
    call redist_ring_plan_create(plan, MPI_COMM_WORLD, REDIST_RING_BIDIRECTIONAL, &
                                 REDIST_RING_NEIGHBOUR, loads(rank), targets(rank), 8_int64, &
                                 status, cost_prev=merge(inf, 1.0_real64, rank == 0), &
                                 cost_next=merge(inf, 1.0_real64, rank == nprocs - 1))
    call check_status(status, REDIST_SUCCESS, 'elements: plan_create')
    first = sum(loads(:rank - 1))
    allocate (a(loads(rank)), b(targets(rank)))
    do j = 1, loads(rank)
      a(j) = first + j - 1
    end do
    b = -1
    call redist_ring_plan_execute(plan, a, b, status)
    call check_status(status, REDIST_SUCCESS, 'elements: plan_execute')
    first = sum(targets(:rank - 1))
    call check(all(b == [(first + j, j=0, targets(rank) - 1)]), 'elements: wrong values')
    call redist_ring_plan_destroy(plan, status)
  end subroutine elements_as_items

  !> The last rank's output array is one column short; then rank 1 (or 0) passes cost_next < 0.
  !> Every rank gets an error, and no array changes.
  subroutine bad_input()
    type(redist_ring_plan) :: plan
    integer(int64) :: loads(0:nprocs - 1), targets(0:nprocs - 1), columns
    real(real64), allocatable :: a(:, :), b(:, :), a0(:, :)
    integer :: status, culprit, r

    loads = [(load_of(r), r=0, nprocs - 1)]
    call gathered_targets(MPI_COMM_WORLD, loads, targets)
    call redist_ring_plan_create(plan, MPI_COMM_WORLD, REDIST_RING_BIDIRECTIONAL, &
                                 REDIST_RING_NEIGHBOUR, loads(rank), targets(rank), &
                                 int(rows * 8, int64), status)
    call check_status(status, REDIST_SUCCESS, 'bad input: plan_create')
    columns = targets(rank)
    if (rank == nprocs - 1) columns = columns - 1
    allocate (a(lld, loads(rank)), b(lld, columns))
    allocate (a0(lld, loads(rank)))
    call random_number(a)
    a0(:, :) = a
    b = pad
    call redist_ring_plan_execute(plan, a, b, status)
    call check(status /= REDIST_SUCCESS, 'bad input: execute with a short b succeeded')
    call check(all(same(a, a0)) .and. all(same(b, pad)), 'bad input: an array changed')
    if (rank == nprocs - 1) then
      call check_status(status, REDIST_ERR_ARGUMENT, 'bad input: execute on the culprit')
      call check(index(redist_message(), 'redist_ring_plan_execute: argument b has room for') &
                 > 0, 'bad input: message: '//redist_message())
    end if
    call redist_ring_plan_destroy(plan, status)

    culprit = min(1, nprocs - 1)
    call redist_ring_plan_create(plan, MPI_COMM_WORLD, REDIST_RING_BIDIRECTIONAL, &
                                 REDIST_RING_NEIGHBOUR, loads(rank), targets(rank), 8_int64, &
                                 status, cost_next=merge(-1.0_real64, 1.0_real64, &
                                                         rank == culprit))
    call check(status /= REDIST_SUCCESS, 'bad input: plan_create with cost_next = -1 succeeded')
    if (rank == culprit) call check(index(redist_message(), 'argument cost_next = -1') > 0, &
                                    'bad input: message: '//redist_message())
    call redist_ring_plan_destroy(plan, status)
    call check_status(status, REDIST_SUCCESS, 'bad input: destroying a plan never created')
  end subroutine bad_input

end program ring_test
