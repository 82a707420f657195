!> redist for Fortran: load rebalancing on processor rings (include/redist_ring.h; docs/ring.md).
!>
!> Process k of a communicator holds L_k consecutive items (columns of a local array, or
!> elements) and must end with a target number of them; items move between ring neighbours
!> (ring order = rank order) so that the cyclic order of all items is kept. A link cost of
!> +infinity (ieee_value(1.0_real64, ieee_positive_inf)) forbids a direction: the wrap link at
!> +infinity makes the ring a path.
!>
!> Every procedure returns REDIST_SUCCESS or an error code in `status`; collective procedures
!> return the same verdict on every process, and redist_message() names the call, the argument
!> and the reason. Nothing here stops the program. Process numbers in flows and moves are
!> 0-based (ranks); flow(k + 1) is the net number of items crossing from rank k to rank k+1.
module redist_ring
  use, intrinsic :: iso_c_binding, only: c_associated, c_char, c_double, c_int, c_int64_t, &
                                         c_loc, c_null_char, c_null_ptr, c_ptr
  use, intrinsic :: iso_fortran_env, only: int32, int64, real32, real64
  use mpi_f08, only: MPI_Comm, MPI_Comm_size
  use redist, only: REDIST_SUCCESS, REDIST_ERR_ARGUMENT, REDIST_ERR_REMOTE, REDIST_ERR_MISMATCH, &
                    REDIST_ERR_MPI, REDIST_ERR_NO_MEMORY, REDIST_ERR_INTERNAL, redist_message, &
                    redist_status_name
  implicit none
  private

  public :: REDIST_SUCCESS, REDIST_ERR_ARGUMENT, REDIST_ERR_REMOTE, REDIST_ERR_MISMATCH, &
            REDIST_ERR_MPI, REDIST_ERR_NO_MEMORY, REDIST_ERR_INTERNAL, redist_message, &
            redist_status_name

  integer, parameter, public :: REDIST_RING_UNIDIRECTIONAL = 0, REDIST_RING_BIDIRECTIONAL = 1
  integer, parameter, public :: REDIST_RING_NEIGHBOUR = 0, REDIST_RING_DIRECT = 1, &
                                REDIST_RING_AUTO = 2
  integer, parameter, public :: REDIST_RING_NONE = 0, REDIST_RING_ALGORITHM1 = 1, &
                                REDIST_RING_ALGORITHM2 = 2, REDIST_RING_ALGORITHM3 = 3, &
                                REDIST_RING_SYSTEM6 = 4, REDIST_RING_HEURISTIC = 5

  !> What a plan or schedule predicts (redist_ring.h: redist_ring_info). Times in link-cost units.
  type, public, bind(c) :: redist_ring_info
    real(c_double) :: predicted_time = 0 !< the neighbour schedule's time
    real(c_double) :: lower_bound = 0    !< Lemma 1, Theorem 2, Lemma 6 or Lemma 12
    real(c_double) :: system6 = 0        !< bidirectional: System 6's integer optimum (a bound)
    real(c_double) :: direct_time = 0    !< model time of the direct transfer
    integer(c_int64_t) :: steps = 0      !< homogeneous algorithms: synchronous steps
    integer(c_int64_t) :: items_sent = 0, items_received = 0 !< plan: this process; schedule: all
    integer(c_int) :: algorithm = REDIST_RING_NONE !< REDIST_RING_NONE ... REDIST_RING_HEURISTIC
    integer(c_int) :: transport = REDIST_RING_NEIGHBOUR
    integer(c_int) :: light = 0               !< 1 if no process sends more than it holds
    integer(c_int) :: algorithm3_repaired = 0 !< 1 if Algorithm 3 as printed was infeasible
  end type redist_ring_info

  !> A rebalance planned locally (no MPI).
  type, public :: redist_ring_schedule
    private
    type(c_ptr) :: handle = c_null_ptr
    integer :: n = 0
  end type redist_ring_schedule

  !> A rebalance planned on a communicator.
  type, public :: redist_ring_plan
    private
    type(c_ptr) :: handle = c_null_ptr
    integer :: size = 0
    integer(int64) :: load = 0, target = 0, item_bytes = 0
  end type redist_ring_plan

  public :: redist_ring_schedule_create, redist_ring_schedule_get_info, &
            redist_ring_schedule_get_flows, redist_ring_schedule_get_moves, &
            redist_ring_schedule_destroy, redist_ring_targets_from_weights, &
            redist_ring_plan_get_info, redist_ring_plan_get_flows, redist_ring_plan_destroy

  !> redist_ring_target_from_weight(comm, load, weight, target, status): this process's target
  !> in proportion to `weight` (finite, > 0), the total being the sum of the loads. Collective.
  public :: redist_ring_target_from_weight
  interface redist_ring_target_from_weight
    module procedure target_from_weight, target_from_weight_f08
  end interface redist_ring_target_from_weight

  !> redist_ring_plan_create(plan, comm, direction, transport, load, target, item_bytes, status
  !>                         [, cost_next, cost_prev, chunk_items])
  !> comm: an integer handle or a type(MPI_Comm); load, target, item_bytes, chunk_items:
  !> integer(int64). cost_next / cost_prev: time of one item to rank+1 / rank-1 (default 1,
  !> +infinity forbids the link). chunk_items: items per forwarded message (default 0: about
  !> 1 MiB). Collective.
  public :: redist_ring_plan_create
  interface redist_ring_plan_create
    module procedure plan_create, plan_create_f08
  end interface redist_ring_plan_create

  !> redist_ring_plan_execute(plan, a, b, status): item i of this process is a(..., i) (the
  !> last dimension counts items; a column of a 2-D array, an element of a 1-D one), of which
  !> the plan's first item_bytes bytes move. a needs at least `load` items, b at least `target`;
  !> both of one of six types, any rank >= 1, contiguous. Bytes of b outside the first
  !> item_bytes of its first `target` items are not written. Collective.
  public :: redist_ring_plan_execute
  interface redist_ring_plan_execute
    module procedure execute_real32, execute_real64, execute_complex32, execute_complex64, &
                     execute_int32, execute_int64
  end interface redist_ring_plan_execute

  interface
    function c_schedule_create(n, direction, loads, targets, c_next, c_prev, schedule) &
        bind(c, name='redist_ring_schedule_create') result(status)
      import :: c_int, c_int64_t, c_ptr
      integer(c_int), value :: n, direction
      integer(c_int64_t), intent(in) :: loads(*), targets(*)
      type(c_ptr), value :: c_next, c_prev
      type(c_ptr), intent(out) :: schedule
      integer(c_int) :: status
    end function c_schedule_create

    function c_schedule_get_info(schedule, info) bind(c, name='redist_ring_schedule_get_info') &
        result(status)
      import :: c_int, c_ptr, redist_ring_info
      type(c_ptr), value :: schedule
      type(redist_ring_info), intent(out) :: info
      integer(c_int) :: status
    end function c_schedule_get_info

    function c_schedule_get_flows(schedule, flow) &
        bind(c, name='redist_ring_schedule_get_flows') result(status)
      import :: c_int, c_int64_t, c_ptr
      type(c_ptr), value :: schedule
      integer(c_int64_t), intent(out) :: flow(*)
      integer(c_int) :: status
    end function c_schedule_get_flows

    function c_schedule_get_moves(schedule, count, from, to, items, start, finish) &
        bind(c, name='redist_ring_schedule_get_moves') result(status)
      import :: c_int, c_int64_t, c_ptr
      type(c_ptr), value :: schedule
      integer(c_int64_t), intent(inout) :: count
      type(c_ptr), value :: from, to, items, start, finish
      integer(c_int) :: status
    end function c_schedule_get_moves

    function c_schedule_destroy(schedule) bind(c, name='redist_ring_schedule_destroy') &
        result(status)
      import :: c_int, c_ptr
      type(c_ptr), intent(inout) :: schedule
      integer(c_int) :: status
    end function c_schedule_destroy

    function c_targets_from_weights(n, total, weights, targets) &
        bind(c, name='redist_ring_targets_from_weights') result(status)
      import :: c_double, c_int, c_int64_t
      integer(c_int), value :: n
      integer(c_int64_t), value :: total
      real(c_double), intent(in) :: weights(*)
      integer(c_int64_t), intent(out) :: targets(*)
      integer(c_int) :: status
    end function c_targets_from_weights

    function c_target_from_weight(comm, load, weight, target) &
        bind(c, name='redist_f_ring_target_from_weight') result(status)
      import :: c_double, c_int, c_int64_t
      integer(c_int), value :: comm
      integer(c_int64_t), value :: load
      real(c_double), value :: weight
      integer(c_int64_t), intent(out) :: target
      integer(c_int) :: status
    end function c_target_from_weight

    function c_plan_create(comm, direction, transport, load, target, cost_next, cost_prev, &
                           item_bytes, chunk_items, plan) &
        bind(c, name='redist_f_ring_plan_create') result(status)
      import :: c_double, c_int, c_int64_t, c_ptr
      integer(c_int), value :: comm, direction, transport
      integer(c_int64_t), value :: load, target
      real(c_double), value :: cost_next, cost_prev
      integer(c_int64_t), value :: item_bytes, chunk_items
      type(c_ptr), intent(out) :: plan
      integer(c_int) :: status
    end function c_plan_create

    function c_plan_execute(plan, in, in_stride, out, out_stride) &
        bind(c, name='redist_ring_plan_execute') result(status)
      import :: c_int, c_int64_t, c_ptr
      type(c_ptr), value :: plan, in, out
      integer(c_int64_t), value :: in_stride, out_stride
      integer(c_int) :: status
    end function c_plan_execute

    function c_plan_get_info(plan, info) bind(c, name='redist_ring_plan_get_info') &
        result(status)
      import :: c_int, c_ptr, redist_ring_info
      type(c_ptr), value :: plan
      type(redist_ring_info), intent(out) :: info
      integer(c_int) :: status
    end function c_plan_get_info

    function c_plan_get_flows(plan, flow) bind(c, name='redist_ring_plan_get_flows') &
        result(status)
      import :: c_int, c_int64_t, c_ptr
      type(c_ptr), value :: plan
      integer(c_int64_t), intent(out) :: flow(*)
      integer(c_int) :: status
    end function c_plan_get_flows

    function c_plan_destroy(plan) bind(c, name='redist_ring_plan_destroy') result(status)
      import :: c_int, c_ptr
      type(c_ptr), intent(inout) :: plan
      integer(c_int) :: status
    end function c_plan_destroy

    subroutine c_set_message(text) bind(c, name='redist_f_set_message')
      import :: c_char
      character(kind=c_char), intent(in) :: text(*)
    end subroutine c_set_message
  end interface

contains

  !> Plan a rebalance of size(loads) processes without MPI. Local.
  !> direction: REDIST_RING_UNIDIRECTIONAL or REDIST_RING_BIDIRECTIONAL; loads, targets: items
  !> before and after (each >= 1, same sums); c_next(k+1) = c(k -> k+1), c_prev(k+1) =
  !> c(k -> k-1), > 0 or +infinity (absent: all 1; c_prev is ignored unidirectionally).
  subroutine redist_ring_schedule_create(schedule, direction, loads, targets, status, c_next, &
                                         c_prev)
    type(redist_ring_schedule), intent(out) :: schedule
    integer, intent(in) :: direction
    integer(int64), intent(in) :: loads(:), targets(:)
    integer, intent(out) :: status
    real(real64), intent(in), optional, target, contiguous :: c_next(:), c_prev(:)
    integer :: n
    type(c_ptr) :: next_ptr, prev_ptr

    call c_set_message(c_null_char)
    n = size(loads)
    if (size(targets) /= n) then
      call size_error('redist_ring_schedule_create', 'targets', size(targets), n, status)
      return
    end if
    next_ptr = c_null_ptr
    prev_ptr = c_null_ptr
    if (present(c_next)) then
      if (size(c_next) /= n) then
        call size_error('redist_ring_schedule_create', 'c_next', size(c_next), n, status)
        return
      end if
      if (n > 0) next_ptr = c_loc(c_next)
    end if
    if (present(c_prev)) then
      if (size(c_prev) /= n) then
        call size_error('redist_ring_schedule_create', 'c_prev', size(c_prev), n, status)
        return
      end if
      if (n > 0) prev_ptr = c_loc(c_prev)
    end if
    status = c_schedule_create(int(n, c_int), int(direction, c_int), loads, targets, next_ptr, &
                               prev_ptr, schedule%handle)
    if (status == REDIST_SUCCESS) schedule%n = n
  end subroutine redist_ring_schedule_create

  subroutine size_error(call_name, argument, have, want, status)
    character(len=*), intent(in) :: call_name, argument
    integer, intent(in) :: have, want
    integer, intent(out) :: status
    character(len=200) :: text

    write (text, '(a, a, a, a, i0, a, i0, a)') call_name, ': argument ', argument, ' has ', &
      have, ' elements, loads has ', want
    call c_set_message(trim(text)//c_null_char)
    status = REDIST_ERR_ARGUMENT
  end subroutine size_error

  !> Bounds, predicted times and algorithm of the schedule. Local.
  subroutine redist_ring_schedule_get_info(schedule, info, status)
    type(redist_ring_schedule), intent(in) :: schedule
    type(redist_ring_info), intent(out) :: info
    integer, intent(out) :: status
    call c_set_message(c_null_char)
    status = c_schedule_get_info(schedule%handle, info)
  end subroutine redist_ring_schedule_get_info

  !> flow(k + 1): net items from process k to k+1 (negative: from k+1 to k). Local.
  subroutine redist_ring_schedule_get_flows(schedule, flow, status)
    type(redist_ring_schedule), intent(in) :: schedule
    integer(int64), allocatable, intent(out) :: flow(:)
    integer, intent(out) :: status
    call c_set_message(c_null_char)
    allocate (flow(max(schedule%n, 1)))
    status = c_schedule_get_flows(schedule%handle, flow)
    if (status /= REDIST_SUCCESS .or. schedule%n == 0) deallocate (flow)
    if (.not. allocated(flow)) allocate (flow(0))
  end subroutine redist_ring_schedule_get_flows

  !> The timed moves: move i carries items(i) consecutive items from process from(i) to its
  !> neighbour to(i) (0-based) during [start(i), finish(i)). Local.
  subroutine redist_ring_schedule_get_moves(schedule, from, to, items, start, finish, status)
    type(redist_ring_schedule), intent(in) :: schedule
    integer(c_int), allocatable, target, intent(out) :: from(:), to(:)
    integer(int64), allocatable, target, intent(out) :: items(:)
    real(real64), allocatable, target, intent(out) :: start(:), finish(:)
    integer, intent(out) :: status
    integer(c_int64_t) :: count

    call c_set_message(c_null_char)
    count = 0
    status = c_schedule_get_moves(schedule%handle, count, c_null_ptr, c_null_ptr, c_null_ptr, &
                                  c_null_ptr, c_null_ptr)
    if (status /= REDIST_SUCCESS) count = 0
    allocate (from(count), to(count), items(count), start(count), finish(count))
    if (status /= REDIST_SUCCESS .or. count == 0) return
    status = c_schedule_get_moves(schedule%handle, count, c_loc(from), c_loc(to), c_loc(items), &
                                  c_loc(start), c_loc(finish))
  end subroutine redist_ring_schedule_get_moves

  !> Destroy a schedule (a schedule never created is accepted). Local.
  subroutine redist_ring_schedule_destroy(schedule, status)
    type(redist_ring_schedule), intent(inout) :: schedule
    integer, intent(out) :: status
    call c_set_message(c_null_char)
    status = c_schedule_destroy(schedule%handle)
    schedule%n = 0
  end subroutine redist_ring_schedule_destroy

  !> targets (size(weights)): proportional to weights (finite, > 0) for `total` items, each at
  !> least 1, largest remainders first. Local.
  subroutine redist_ring_targets_from_weights(total, weights, targets, status)
    integer(int64), intent(in) :: total
    real(real64), intent(in) :: weights(:)
    integer(int64), allocatable, intent(out) :: targets(:)
    integer, intent(out) :: status
    call c_set_message(c_null_char)
    allocate (targets(max(size(weights), 1)))
    status = c_targets_from_weights(int(size(weights), c_int), int(total, c_int64_t), weights, &
                                    targets)
    if (status /= REDIST_SUCCESS .or. size(weights) == 0) then
      deallocate (targets)
      allocate (targets(0))
    end if
  end subroutine redist_ring_targets_from_weights

  subroutine target_from_weight(comm, load, weight, target, status)
    integer, intent(in) :: comm
    integer(int64), intent(in) :: load
    real(real64), intent(in) :: weight
    integer(int64), intent(out) :: target
    integer, intent(out) :: status
    call c_set_message(c_null_char)
    target = 0
    status = c_target_from_weight(int(comm, c_int), load, weight, target)
  end subroutine target_from_weight

  subroutine target_from_weight_f08(comm, load, weight, target, status)
    type(MPI_Comm), intent(in) :: comm
    integer(int64), intent(in) :: load
    real(real64), intent(in) :: weight
    integer(int64), intent(out) :: target
    integer, intent(out) :: status
    call target_from_weight(comm%MPI_VAL, load, weight, target, status)
  end subroutine target_from_weight_f08

  subroutine plan_create(plan, comm, direction, transport, load, target, item_bytes, status, &
                         cost_next, cost_prev, chunk_items)
    type(redist_ring_plan), intent(out) :: plan
    integer, intent(in) :: comm, direction, transport
    integer(int64), intent(in) :: load, target, item_bytes
    integer, intent(out) :: status
    real(real64), intent(in), optional :: cost_next, cost_prev
    integer(int64), intent(in), optional :: chunk_items
    real(c_double) :: next, prev
    integer(c_int64_t) :: chunk

    call c_set_message(c_null_char)
    next = 1
    prev = 1
    chunk = 0
    if (present(cost_next)) next = cost_next
    if (present(cost_prev)) prev = cost_prev
    if (present(chunk_items)) chunk = chunk_items
    status = c_plan_create(int(comm, c_int), int(direction, c_int), int(transport, c_int), &
                           load, target, next, prev, item_bytes, chunk, plan%handle)
    if (status /= REDIST_SUCCESS) return
    call MPI_Comm_size(MPI_Comm(comm), plan%size)
    plan%load = load
    plan%target = target
    plan%item_bytes = item_bytes
  end subroutine plan_create

  subroutine plan_create_f08(plan, comm, direction, transport, load, target, item_bytes, status, &
                             cost_next, cost_prev, chunk_items)
    type(redist_ring_plan), intent(out) :: plan
    type(MPI_Comm), intent(in) :: comm
    integer, intent(in) :: direction, transport
    integer(int64), intent(in) :: load, target, item_bytes
    integer, intent(out) :: status
    real(real64), intent(in), optional :: cost_next, cost_prev
    integer(int64), intent(in), optional :: chunk_items
    call plan_create(plan, comm%MPI_VAL, direction, transport, load, target, item_bytes, status, &
                     cost_next, cost_prev, chunk_items)
  end subroutine plan_create_f08

  !> Executes with the arrays' addresses and item strides (bytes). Arrays too small for the plan
  !> are never touched: this process passes no arrays, so the call fails on every process before
  !> any data moves, and this process reports why.
  subroutine execute_addresses(plan, a, b, a_shape, b_shape, element_bytes, status)
    type(redist_ring_plan), intent(in) :: plan
    type(c_ptr), intent(in) :: a, b
    integer(int64), intent(in) :: a_shape(:), b_shape(:)
    integer, intent(in) :: element_bytes
    integer, intent(out) :: status
    character(len=240) :: text
    integer(int64) :: a_stride, b_stride

    call c_set_message(c_null_char)
    text = ''
    a_stride = element_bytes * product(a_shape(:size(a_shape) - 1))
    b_stride = element_bytes * product(b_shape(:size(b_shape) - 1))
    if (.not. c_associated(plan%handle)) then
      continue
    else if (size(a_shape) == 0 .or. size(b_shape) == 0) then
      text = 'redist_ring_plan_execute: arguments a, b must be arrays (rank >= 1)'
    else if (a_stride < plan%item_bytes .or. b_stride < plan%item_bytes) then
      write (text, '(a, i0, a, i0, a, i0, a)') 'redist_ring_plan_execute: arguments a, b: an &
        &item (all but the last dimension) has ', min(a_stride, b_stride), ' bytes in a or b, &
        &the plan moves ', plan%item_bytes, '-byte items'
    else if (a_shape(size(a_shape)) < plan%load) then
      write (text, '(a, i0, a, i0, a)') 'redist_ring_plan_execute: argument a has ', &
        a_shape(size(a_shape)), ' items (last dimension), this process holds ', plan%load, &
        ' (load)'
    else if (b_shape(size(b_shape)) < plan%target) then
      write (text, '(a, i0, a, i0, a)') 'redist_ring_plan_execute: argument b has room for ', &
        b_shape(size(b_shape)), ' items (last dimension), this process receives ', plan%target, &
        ' (target)'
    end if
    if (len_trim(text) == 0) then
      status = c_plan_execute(plan%handle, a, a_stride, b, b_stride)
      return
    end if
    status = c_plan_execute(plan%handle, c_null_ptr, max(a_stride, 1_int64), c_null_ptr, &
                            max(b_stride, 1_int64))
    call c_set_message(trim(text)//c_null_char)
    status = REDIST_ERR_ARGUMENT
  end subroutine execute_addresses

  subroutine execute_real32(plan, a, b, status)
    type(redist_ring_plan), intent(in) :: plan
    real(real32), intent(in), target, contiguous :: a(..)
    real(real32), intent(inout), target, contiguous :: b(..)
    integer, intent(out) :: status
    call execute_addresses(plan, c_loc(a), c_loc(b), int(shape(a), int64), int(shape(b), int64), &
                           storage_size(a) / 8, status)
  end subroutine execute_real32

  subroutine execute_real64(plan, a, b, status)
    type(redist_ring_plan), intent(in) :: plan
    real(real64), intent(in), target, contiguous :: a(..)
    real(real64), intent(inout), target, contiguous :: b(..)
    integer, intent(out) :: status
    call execute_addresses(plan, c_loc(a), c_loc(b), int(shape(a), int64), int(shape(b), int64), &
                           storage_size(a) / 8, status)
  end subroutine execute_real64

  subroutine execute_complex32(plan, a, b, status)
    type(redist_ring_plan), intent(in) :: plan
    complex(real32), intent(in), target, contiguous :: a(..)
    complex(real32), intent(inout), target, contiguous :: b(..)
    integer, intent(out) :: status
    call execute_addresses(plan, c_loc(a), c_loc(b), int(shape(a), int64), int(shape(b), int64), &
                           storage_size(a) / 8, status)
  end subroutine execute_complex32

  subroutine execute_complex64(plan, a, b, status)
    type(redist_ring_plan), intent(in) :: plan
    complex(real64), intent(in), target, contiguous :: a(..)
    complex(real64), intent(inout), target, contiguous :: b(..)
    integer, intent(out) :: status
    call execute_addresses(plan, c_loc(a), c_loc(b), int(shape(a), int64), int(shape(b), int64), &
                           storage_size(a) / 8, status)
  end subroutine execute_complex64

  subroutine execute_int32(plan, a, b, status)
    type(redist_ring_plan), intent(in) :: plan
    integer(int32), intent(in), target, contiguous :: a(..)
    integer(int32), intent(inout), target, contiguous :: b(..)
    integer, intent(out) :: status
    call execute_addresses(plan, c_loc(a), c_loc(b), int(shape(a), int64), int(shape(b), int64), &
                           storage_size(a) / 8, status)
  end subroutine execute_int32

  subroutine execute_int64(plan, a, b, status)
    type(redist_ring_plan), intent(in) :: plan
    integer(int64), intent(in), target, contiguous :: a(..)
    integer(int64), intent(inout), target, contiguous :: b(..)
    integer, intent(out) :: status
    call execute_addresses(plan, c_loc(a), c_loc(b), int(shape(a), int64), int(shape(b), int64), &
                           storage_size(a) / 8, status)
  end subroutine execute_int64

  !> Predictions and this process's traffic. Local.
  subroutine redist_ring_plan_get_info(plan, info, status)
    type(redist_ring_plan), intent(in) :: plan
    type(redist_ring_info), intent(out) :: info
    integer, intent(out) :: status
    call c_set_message(c_null_char)
    status = c_plan_get_info(plan%handle, info)
  end subroutine redist_ring_plan_get_info

  !> flow(k + 1): net items from rank k to rank k+1 (one per process of the communicator). Local.
  subroutine redist_ring_plan_get_flows(plan, flow, status)
    type(redist_ring_plan), intent(in) :: plan
    integer(int64), allocatable, intent(out) :: flow(:)
    integer, intent(out) :: status
    call c_set_message(c_null_char)
    allocate (flow(max(plan%size, 1)))
    status = c_plan_get_flows(plan%handle, flow)
    if (status /= REDIST_SUCCESS .or. plan%size == 0) then
      deallocate (flow)
      allocate (flow(0))
    end if
  end subroutine redist_ring_plan_get_flows

  !> Destroy a plan (a plan never created is accepted). Collective.
  subroutine redist_ring_plan_destroy(plan, status)
    type(redist_ring_plan), intent(inout) :: plan
    integer, intent(out) :: status
    call c_set_message(c_null_char)
    status = c_plan_destroy(plan%handle)
    plan%size = 0
    plan%load = 0
    plan%target = 0
    plan%item_bytes = 0
  end subroutine redist_ring_plan_destroy

end module redist_ring
