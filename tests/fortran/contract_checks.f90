!> Errors come back as a status on every process, with a message naming the argument; nothing
!> stops the program and B is left untouched.
module contract_checks
  use, intrinsic :: iso_fortran_env, only: int64, real32, real64, output_unit
  use, intrinsic :: iso_c_binding, only: c_ptr, c_f_pointer, c_size_t
  use mpi_f08, only: MPI_COMM_WORLD
  use redist
  use redist_scalapack, only: pdgemr2d, redist_scalapack_last_status
  use compare_cases, only: same_bits
  implicit none
  private
  public :: check_contract

contains

  elemental logical function same_bits_each(x, y)
    real(real64), intent(in) :: x, y
    same_bits_each = transfer(x, 0_int64) == transfer(y, 0_int64)
  end function same_bits_each

  subroutine expect(ok, what, failures)
    logical, intent(in) :: ok
    character(len=*), intent(in) :: what
    integer, intent(inout) :: failures
    if (ok) return
    failures = failures + 1
    write (output_unit, '(4a)') 'FAIL: ', what, '; message: ', redist_message()
  end subroutine expect

  !> A 1 x nprocs grid over every world rank: every rank owns part of a matrix of 4*nprocs
  !> columns.
  function row_of_processes(nprocs, block) result(layout)
    integer, intent(in) :: nprocs, block
    type(redist_layout) :: layout
    integer :: k
    layout%m = 4
    layout%n = 4 * nprocs
    layout%mb = block
    layout%nb = block
    allocate (layout%ranks, source=reshape([(k - 1, k = 1, nprocs)], [1, nprocs]))
    layout%lld = 4
  end function row_of_processes

  !> Execute `plan` (4 x 4*nprocs doubles) from `a`, all one value, into a fresh B: every
  !> process must receive 16 copies of that value.
  subroutine expect_sixteen_copies(plan, a, what, failures)
    type(redist_plan), intent(in) :: plan
    real(real64), intent(in), contiguous :: a(:)
    character(len=*), intent(in) :: what
    integer, intent(inout) :: failures
    real(real64) :: b(64)
    integer :: status
    b = -1
    call redist_plan_execute(plan, a, b, status)
    call expect(status == REDIST_SUCCESS .and. count(same_bits_each(b, a(1))) == 16, &
                what // ' copies 16 elements per process', failures)
  end subroutine expect_sixteen_copies

  subroutine check_contract(me, nprocs, ictxt, failures)
    integer, intent(in) :: me, nprocs, ictxt
    integer, intent(inout) :: failures
    type(redist_layout) :: a, b
    type(redist_plan) :: plan
    integer :: status, desca(9), descb(9)
    character(len=:), allocatable :: message
    real(real32) :: a32(64), b32(64)
    real(real64) :: a64(64), b64(64)
    real(real64), pointer :: shared_a(:)
    type(c_ptr) :: memory

    a = row_of_processes(nprocs, 2)
    b = row_of_processes(nprocs, 4)

    a%mb = 0
    call redist_plan_create(plan, MPI_COMM_WORLD, 4, 4 * nprocs, REDIST_DOUBLE, a, b, status)
    message = redist_message()
    call expect(status == REDIST_ERR_ARGUMENT .and. index(message, 'a->mb') > 0, &
                'block size 0 must give REDIST_ERR_ARGUMENT naming a->mb', failures)
    a%mb = 2

    deallocate (b%ranks)
    call redist_plan_create(plan, MPI_COMM_WORLD, 4, 4 * nprocs, REDIST_DOUBLE, a, b, status)
    message = redist_message()
    call expect(status == REDIST_ERR_ARGUMENT .and. index(message, 'ranks') > 0, &
                'a layout without ranks must give REDIST_ERR_ARGUMENT naming the ranks', failures)
    b = row_of_processes(nprocs, 4)

    call redist_plan_create(plan, MPI_COMM_WORLD, 4, 4 * nprocs, REDIST_DOUBLE, a, b, status)
    call expect(status == REDIST_SUCCESS, 'valid plan', failures)
    a32 = 1
    b32 = -1
    call redist_plan_execute(plan, a32, b32, status)
    message = redist_message()
    call expect(status == REDIST_ERR_ARGUMENT .and. index(message, '4-byte elements') > 0 .and. &
                same_bits(b32, spread(-1.0_real32, 1, size(b32))), &
                'real(4) arrays on a REDIST_DOUBLE plan must give REDIST_ERR_ARGUMENT and leave &
                &b untouched', failures)
    a64 = 1
    call expect_sixteen_copies(plan, a64, 'the same plan with real(8) arrays', failures)
    ! A source array from redist_alloc, which the receivers of the node map.
    call redist_alloc(64_c_size_t * 8, memory, status)
    call expect(status == REDIST_SUCCESS, 'redist_alloc of 64 real(8)', failures)
    if (status == REDIST_SUCCESS) then
      call c_f_pointer(memory, shared_a, [64])
      shared_a = 2
      call expect_sixteen_copies(plan, shared_a, 'the plan from memory of redist_alloc', failures)
      call redist_free(memory, status)
      call expect(status == REDIST_SUCCESS, 'redist_free', failures)
      call redist_free(memory, status)
      call expect(status == REDIST_ERR_ARGUMENT, 'redist_free twice must give &
                  &REDIST_ERR_ARGUMENT', failures)
    end if
    call redist_plan_destroy(plan, status)
    call expect(status == REDIST_SUCCESS, 'plan destruction', failures)
    call redist_plan_destroy(plan, status)
    call expect(status == REDIST_SUCCESS, 'destroying a destroyed plan is accepted', failures)

    desca = [1, ictxt, 4, 4 * nprocs, 2, 2, 0, 0, 4]
    descb = [1, ictxt, 4, 4 * nprocs, 4, 4, 0, 0, 4]
    if (me == 0) desca(1) = 3
    call redist_plan_create(plan, 4, 4 * nprocs, REDIST_DOUBLE, desca, 1, 1, descb, 1, 1, ictxt, &
                            status)
    message = redist_message()
    if (me == 0) then
      call expect(status == REDIST_ERR_ARGUMENT .and. index(message, 'DTYPE_') > 0, &
                  'DESCA(DTYPE_) = 3 must give REDIST_ERR_ARGUMENT on its process', failures)
    else
      call expect(status == REDIST_ERR_REMOTE, &
                  'DESCA(DTYPE_) = 3 on rank 0 must give REDIST_ERR_REMOTE elsewhere', failures)
    end if

    desca(1) = 1
    desca(5) = 0
    b64 = -1
    call pdgemr2d(4, 4 * nprocs, a64, 1, 1, desca, b64, 1, 1, descb, ictxt)
    call expect(redist_scalapack_last_status() == REDIST_ERR_ARGUMENT .and. &
                same_bits(b64, spread(-1.0_real64, 1, size(b64))), &
                'PDGEMR2D through redist_scalapack with MB_ = 0 returns REDIST_ERR_ARGUMENT, &
                &B untouched', failures)

    call expect(redist_status_name(REDIST_ERR_MISMATCH) == 'REDIST_ERR_MISMATCH', &
                'redist_status_name', failures)
    call check_options(nprocs, failures)
  end subroutine check_contract

  !> Options reach the C API: a schedule is honoured (and reported by the plan), an unknown one
  !> and a memory cap below one element are refused naming the option; calibration works.
  subroutine check_options(nprocs, failures)
    integer, intent(in) :: nprocs
    integer, intent(inout) :: failures
    type(redist_layout) :: a, b
    type(redist_plan) :: plan
    type(redist_options) :: options
    type(redist_plan_info) :: info
    integer :: status
    character(len=:), allocatable :: message
    real(real64) :: a64(16), alpha, beta

    a = row_of_processes(nprocs, 2)
    b = row_of_processes(nprocs, 4)
    call expect(redist_schedule_name(REDIST_SCHEDULE_CATERPILLAR) == 'caterpillar', &
                'redist_schedule_name of caterpillar', failures)
    call expect(redist_schedule_name(-1) == '', 'redist_schedule_name of -1', failures)

    options%schedule = REDIST_SCHEDULE_CATERPILLAR
    options%max_concurrent = 1
    call redist_plan_create(plan, MPI_COMM_WORLD, 4, 4 * nprocs, REDIST_DOUBLE, a, b, status, &
                            options=options)
    call expect(status == REDIST_SUCCESS, 'caterpillar plan with max_concurrent = 1', failures)
    call redist_plan_get_info(plan, info, status)
    call expect(status == REDIST_SUCCESS .and. info%schedule == REDIST_SCHEDULE_CATERPILLAR, &
                'the plan reports the caterpillar schedule', failures)
    a64 = 1
    call expect_sixteen_copies(plan, a64, 'the caterpillar plan', failures)
    call redist_plan_destroy(plan, status)

    options = redist_options(schedule=99)
    call redist_plan_create(plan, MPI_COMM_WORLD, 4, 4 * nprocs, REDIST_DOUBLE, a, b, status, &
                            options=options)
    message = redist_message()
    call expect(status == REDIST_ERR_ARGUMENT .and. index(message, 'options->schedule') > 0, &
                'an unknown schedule must give REDIST_ERR_ARGUMENT naming options->schedule', &
                failures)

    options = redist_options(schedule=REDIST_SCHEDULE_CATERPILLAR, max_memory=8)
    call redist_plan_create(plan, MPI_COMM_WORLD, 4, 4 * nprocs, REDIST_DOUBLE, a, b, status, &
                            options=options)
    message = redist_message()
    call expect(status == REDIST_ERR_ARGUMENT .and. index(message, 'max_memory') > 0, &
                'max_memory below one element sent and received must be refused', failures)

    call redist_calibrate(MPI_COMM_WORLD, alpha, beta, status)
    call expect(status == REDIST_SUCCESS .and. alpha > 0 .and. beta > 0, 'redist_calibrate', &
                failures)
  end subroutine check_options

end module contract_checks
