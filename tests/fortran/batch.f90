!> Module redist's batch plans (redist_plan_create_batch, redist_plan_execute_batch and its
!> begin / end) against an element-by-element oracle written in the tests from the definitions
!> (ScaLAPACK's block-cyclic map in oracle_2d.inc, shared with nd.f90; here B_k := alpha_k
!> op_k(A_k) + beta_k B_k on the window of B_k, or its upper / lower trapezoid), not from src/:
!>   - random batches of 1-6 operations mixing real(real64), complex(real32) and
!>     integer(int32), ops N / T / C, regions full / upper / lower, random 2-D block-cyclic
!>     layouts (grids on random subsets of the ranks in random order, offsets, LLD padding),
!>     random alpha and beta for the floating types (or none: alpha = 1, beta = 0), c_null_ptr
!>     for the arrays of operations whose grid leaves this rank out; blocking or split with
!>     computation between begin and end. Small integer values: every result is exact in each
!>     type, so the check is exact.
!>   - errors: a bad field in ops(2) on one rank, an array of pointers of the wrong size on one
!>     rank, alpha = 2 for an integer operation: an error on every rank naming the operation,
!>     B unchanged.
!> All ranks draw the same cases from one seed. Usage: redist_fortran_batch [--cases=N]; prints
!> "..., 0 failures" and PASS when every check holds on every process.
module batch_cases
  use, intrinsic :: iso_c_binding, only: c_loc, c_null_ptr, c_ptr
  use, intrinsic :: iso_fortran_env, only: int32, int64, real32, real64, output_unit
  use, intrinsic :: ieee_arithmetic, only: ieee_is_nan
  use mpi_f08
  use redist
  use test_run, only: me, nprocs, failures, checks
  implicit none

  real(real64), parameter :: untouched = -7, padding = -9
  integer(int64) :: seed
  real(real64) :: work !< of the computation between begins and ends

  !> One operation of a batch and this rank's data of it: the local arrays of its type, the
  !> coefficients, and the expected local B.
  type :: operation
    type(redist_batch_op) :: op
    real(real64), allocatable :: a8(:), b8(:)
    complex(real32), allocatable :: ac(:), bc(:)
    integer(int32), allocatable :: ai(:), bi(:)
    real(real64) :: alpha8 = 1, beta8 = 0
    complex(real32) :: alphac = 1, betac = 0
    integer(int32) :: alphai = 1, betai = 0
    complex(real64), allocatable :: expected(:)
    logical :: holds_a = .false., holds_b = .false.
  end type operation

contains

  include 'oracle_2d.inc'

  !> x and y are the same number (neither NaN; -0 equals 0).
  elemental logical function same(x, y)
    complex(real64), intent(in) :: x, y
    same = .not. (ieee_is_nan(real(x)) .or. ieee_is_nan(aimag(x)) .or. ieee_is_nan(real(y)) &
                  .or. ieee_is_nan(aimag(y)) .or. real(x) < real(y) .or. real(x) > real(y) &
                  .or. aimag(x) < aimag(y) .or. aimag(x) > aimag(y))
  end function same

  !> A random operation of a batch, its local arrays filled and its expected B computed.
  !> `coefficients`: random alpha and beta for floating types, else alpha = 1, beta = 0.
  subroutine random_operation(x, coefficients)
    type(operation), intent(out) :: x
    logical, intent(in) :: coefficients
    integer, parameter :: types(3) = [REDIST_DOUBLE, REDIST_COMPLEX_FLOAT, REDIST_INT32]
    integer :: m, n, ra, rb
    integer(int64), allocatable :: rows_a(:), cols_a(:), rows_b(:), cols_b(:)
    integer(int64) :: i, j, wi, wj
    complex(real64) :: alpha, beta, candidates(6)
    complex(real64), allocatable :: a(:), b(:)
    logical :: is_complex, in_window
    candidates = [complex(real64) :: (0, 0), (1, 0), (-1, 0), (2, 0), (0.5_real64, 0), &
                  (1.5_real64, -2)]

    m = 1 + draw(8)
    n = 1 + draw(8)
    x%op%m = m
    x%op%n = n
    x%op%op = draw(3)
    x%op%type = types(1 + draw(3))
    x%op%region = draw(3)
    is_complex = x%op%type == REDIST_COMPLEX_FLOAT
    alpha = candidates(1 + draw(merge(6, 5, is_complex)))
    beta = candidates(1 + draw(merge(6, 5, is_complex)))
    if (x%op%type == REDIST_INT32 .or. .not. coefficients) then
      alpha = 1
      beta = 0
    end if
    if (x%op%op == REDIST_OP_N) then
      x%op%a = random_2d(m + draw(3), n + draw(3))
    else
      x%op%a = random_2d(n + draw(3), m + draw(3))
    end if
    x%op%b = random_2d(m + draw(3), n + draw(3))
    x%op%a%ia = 1 + draw(int(x%op%a%m) - merge(m, n, x%op%op == REDIST_OP_N) + 1)
    x%op%a%ja = 1 + draw(int(x%op%a%n) - merge(n, m, x%op%op == REDIST_OP_N) + 1)
    x%op%b%ia = 1 + draw(int(x%op%b%m) - m + 1)
    x%op%b%ja = 1 + draw(int(x%op%b%n) - n + 1)
    call local_maps(x%op%a, rows_a, cols_a)
    call local_maps(x%op%b, rows_b, cols_b)
    x%holds_a = any(x%op%a%ranks == me)
    x%holds_b = any(x%op%b%ranks == me)
    ra = int(x%op%a%lld)
    rb = int(x%op%b%lld)
    allocate (a(max(1, ra * size(cols_a))), b(max(1, rb * size(cols_b))))
    a = cmplx(padding, padding, real64)
    b = cmplx(untouched, untouched, real64)
    do j = 1, size(cols_a)
      do i = 1, size(rows_a)
        a(i + (j - 1) * ra) = a_value(rows_a(i), cols_a(j))
      end do
    end do
    do j = 1, size(cols_b)
      do i = 1, size(rows_b)
        b(i + (j - 1) * rb) = b_value(rows_b(i), cols_b(j))
      end do
    end do
    if (.not. is_complex) then
      a = real(a)
      b = real(b)
    end if
    x%expected = b
    do j = 1, size(cols_b)
      do i = 1, size(rows_b)
        wi = rows_b(i) - (x%op%b%ia - 1)
        wj = cols_b(j) - (x%op%b%ja - 1)
        in_window = wi >= 0 .and. wi < m .and. wj >= 0 .and. wj < n
        if (x%op%region == REDIST_REGION_UPPER) in_window = in_window .and. wi <= wj
        if (x%op%region == REDIST_REGION_LOWER) in_window = in_window .and. wi >= wj
        if (in_window) x%expected(i + (j - 1) * rb) = alpha * op_a(wi, wj) + beta * &
                                                      x%expected(i + (j - 1) * rb)
      end do
    end do
    select case (x%op%type)
    case (REDIST_DOUBLE)
      x%a8 = real(a, real64)
      x%b8 = real(b, real64)
      x%alpha8 = real(alpha, real64)
      x%beta8 = real(beta, real64)
    case (REDIST_COMPLEX_FLOAT)
      x%ac = cmplx(a, kind=real32)
      x%bc = cmplx(b, kind=real32)
      x%alphac = cmplx(alpha, kind=real32)
      x%betac = cmplx(beta, kind=real32)
    case default
      x%ai = int(real(a), int32)
      x%bi = int(real(b), int32)
    end select

  contains

    !> op(A) at B's window position (wi, wj), A's values as the arrays hold them.
    complex(real64) function op_a(wi, wj)
      integer(int64), intent(in) :: wi, wj
      if (x%op%op == REDIST_OP_N) then
        op_a = a_value(x%op%a%ia - 1 + wi, x%op%a%ja - 1 + wj)
      else
        op_a = a_value(x%op%a%ia - 1 + wj, x%op%a%ja - 1 + wi)
        if (x%op%op == REDIST_OP_C) op_a = conjg(op_a)
      end if
      if (.not. is_complex) op_a = real(op_a)
    end function op_a
  end subroutine random_operation

  !> The addresses of operation x's local arrays and coefficients (c_null_ptr for an array of
  !> a grid that leaves this rank out).
  subroutine addresses(x, a, b, alpha, beta)
    type(operation), intent(in), target :: x
    type(c_ptr), intent(out) :: a, b, alpha, beta
    select case (x%op%type)
    case (REDIST_DOUBLE)
      a = c_loc(x%a8)
      b = c_loc(x%b8)
      alpha = c_loc(x%alpha8)
      beta = c_loc(x%beta8)
    case (REDIST_COMPLEX_FLOAT)
      a = c_loc(x%ac)
      b = c_loc(x%bc)
      alpha = c_loc(x%alphac)
      beta = c_loc(x%betac)
    case default
      a = c_loc(x%ai)
      b = c_loc(x%bi)
      alpha = c_loc(x%alphai)
      beta = c_loc(x%betai)
    end select
    if (.not. x%holds_a) a = c_null_ptr
    if (.not. x%holds_b) b = c_null_ptr
  end subroutine addresses

  !> Operation x's local B as complex(real64).
  function result_of(x) result(out)
    type(operation), intent(in) :: x
    complex(real64), allocatable :: out(:)
    select case (x%op%type)
    case (REDIST_DOUBLE)
      out = x%b8
    case (REDIST_COMPLEX_FLOAT)
      out = x%bc
    case default
      out = x%bi
    end select
  end function result_of

  subroutine batch_case(index)
    integer, intent(in) :: index
    type(operation), allocatable, target :: ops(:)
    type(redist_batch_op), allocatable :: descriptions(:)
    type(c_ptr), allocatable :: a(:), b(:), alphas(:), betas(:)
    type(redist_plan) :: plan
    integer :: count, k, status
    logical :: split, coefficients
    character(len=100) :: what

    count = 1 + draw(6)
    split = draw(2) == 0
    coefficients = draw(3) /= 0
    allocate (ops(count), a(count), b(count), alphas(count), betas(count))
    do k = 1, count
      call random_operation(ops(k), coefficients)
      call addresses(ops(k), a(k), b(k), alphas(k), betas(k))
    end do
    descriptions = [(ops(k)%op, k = 1, count)]
    write (what, '(a, i0, a, i0, a, l1, a, l1)') 'batch case ', index, ': ', count, &
      ' operations, split ', split, ', coefficients ', coefficients

    call redist_plan_create_batch(plan, MPI_COMM_WORLD, descriptions, status)
    call check(status == REDIST_SUCCESS, trim(what)//': create: '//redist_message())
    if (status /= REDIST_SUCCESS) return
    if (split) then
      if (coefficients) then
        call redist_plan_execute_batch_begin(plan, a, b, status, alphas, betas)
      else
        call redist_plan_execute_batch_begin(plan, a, b, status)
      end if
      call check(status == REDIST_SUCCESS, trim(what)//': begin: '//redist_message())
      if (status == REDIST_SUCCESS) then
        work = work + busy_work(2000)
        call redist_plan_execute_end(plan, status)
      end if
    else if (coefficients) then
      call redist_plan_execute_batch(plan, a, b, status, alphas, betas)
    else
      call redist_plan_execute_batch(plan, a, b, status)
    end if
    call check(status == REDIST_SUCCESS, trim(what)//': execute: '//redist_message())
    do k = 1, count
      write (what(80:), '(a, i0, a)') ' ops(', k, ')'
      call check(all(same(result_of(ops(k)), ops(k)%expected)), trim(what)//': wrong elements')
    end do
    call redist_plan_destroy(plan, status)
  end subroutine batch_case

  ! ---------------------------------------------------------------------------------------
  ! Errors: on every rank, naming the operation, B unchanged.

  subroutine error_cases()
    type(redist_batch_op) :: ops(3)
    type(redist_layout) :: row
    type(redist_plan) :: plan
    real(real64), target :: a8(4), b8(4), c8(4)
    integer(int32), target :: ai(4), bi(4)
    real(real64), target :: alpha8, beta8
    integer(int32), target :: alphai, betai
    type(c_ptr) :: a(3), b(3), alphas(3), betas(3)
    integer :: status, i

    ! Three operations on a 1 x nprocs grid of 4 x nprocs matrices (one column per rank): B_1
    ! (b8) := 2 A_1 + B_1, B_2 (bi) := A_2 (integer), B_3 (c8) := 2 A_1 + B_3.
    row = redist_layout(m=4, n=nprocs, mb=4, nb=1, ranks=reshape([(i, i = 0, nprocs - 1)], &
                        [1, nprocs]), lld=4)
    ops(1) = redist_batch_op(op=REDIST_OP_N, m=4, n=nprocs, type=REDIST_DOUBLE, a=row, b=row)
    ops(2) = redist_batch_op(op=REDIST_OP_N, m=4, n=nprocs, type=REDIST_INT32, a=row, b=row)
    ops(3) = ops(1)
    a8 = 3
    ai = 3
    alpha8 = 2
    beta8 = 1
    alphai = 1
    betai = 0
    a = [c_loc(a8), c_loc(ai), c_loc(a8)]
    b = [c_loc(b8), c_loc(bi), c_loc(c8)]
    alphas = [c_loc(alpha8), c_loc(alphai), c_loc(alpha8)]
    betas = [c_loc(beta8), c_loc(betai), c_loc(beta8)]

    ! A block size of 0 in ops(2)%b on the last rank only.
    ops(2)%b%mb = merge(0_int64, 4_int64, me == nprocs - 1)
    call redist_plan_create_batch(plan, MPI_COMM_WORLD, ops, status)
    call expect_error('ops(2)%b%mb = 0 on the last rank', 'ops[1]', .true.)
    call reset()
    call redist_plan_execute_batch(plan, a, b, status)
    call check(status /= REDIST_SUCCESS .and. unchanged(), 'executing the absent plan')
    ops(2)%b%mb = 4

    call redist_plan_create_batch(plan, MPI_COMM_WORLD, ops, status)
    call check(status == REDIST_SUCCESS, 'the good batch: create: '//redist_message())

    ! b with 2 entries on rank 0 only.
    call reset()
    if (me == 0) then
      call redist_plan_execute_batch(plan, a, b(1:2), status, alphas, betas)
    else
      call redist_plan_execute_batch(plan, a, b, status, alphas, betas)
    end if
    call expect_error('b with 2 entries on rank 0', 'argument b: 2 entries', .false.)
    call check(unchanged(), 'b with 2 entries on rank 0: B changed')

    ! alpha = 2 for the integer operation ops(2), at a begin.
    call reset()
    alphas(2) = c_loc(alpha8)
    call redist_plan_execute_batch_begin(plan, a, b, status, alphas, betas)
    call expect_error('alpha = 2 for an integer operation', 'alphas[1]', .true.)
    call check(unchanged(), 'alpha = 2 for an integer operation: B changed')
    alphas(2) = c_loc(alphai)

    ! c_null_ptr for B of ops(3), which every rank owns a column of.
    call reset()
    b(3) = c_null_ptr
    call redist_plan_execute_batch(plan, a, b, status, alphas, betas)
    call expect_error('b(3) = c_null_ptr', 'b[2]', .false.)
    call check(unchanged(), 'b(3) = c_null_ptr: B changed')
    b(3) = c_loc(c8)

    ! The plan still works.
    call reset()
    call redist_plan_execute_batch(plan, a, b, status, alphas, betas)
    call check(status == REDIST_SUCCESS, 'after the errors: '//redist_message())
    call check(all(same(cmplx(b8, kind=real64), (11.0_real64, 0))) .and. all(bi == 3) .and. &
               all(same(cmplx(c8, kind=real64), (11.0_real64, 0))), 'after the errors: B')
    call redist_plan_destroy(plan, status)

  contains

    subroutine reset()
      b8 = 5
      bi = 5
      c8 = 5
    end subroutine reset

    logical function unchanged()
      unchanged = all(same(cmplx(b8, kind=real64), (5.0_real64, 0))) .and. all(bi == 5) .and. &
                  all(same(cmplx(c8, kind=real64), (5.0_real64, 0)))
    end function unchanged

    !> An error on every rank; the message of a rank with REDIST_ERR_ARGUMENT (and with
    !> `everywhere` every rank's) names `name`.
    subroutine expect_error(what, name, everywhere)
      character(len=*), intent(in) :: what, name
      logical, intent(in) :: everywhere
      integer :: statuses(nprocs)
      call check(status /= REDIST_SUCCESS, what//': no error')
      call MPI_Allgather(status, 1, MPI_INTEGER, statuses, 1, MPI_INTEGER, MPI_COMM_WORLD)
      call check(all(statuses /= REDIST_SUCCESS), what//': not an error on every rank')
      call check(count(statuses == REDIST_ERR_ARGUMENT) >= 1, what//': no rank says ARGUMENT')
      if (status == REDIST_ERR_ARGUMENT .or. everywhere) &
        call check(index(redist_message(), name) > 0, what//': message "'//redist_message()// &
                   '" does not name '//name)
    end subroutine expect_error
  end subroutine error_cases

end module batch_cases

program redist_fortran_batch
  use mpi_f08
  use test_run, only: start_run, report_run
  use batch_cases
  implicit none
  integer :: cases, k
  character(len=64) :: detail

  cases = 60
  call start_run(cases)
  seed = 20261124
  work = 0
  do k = 1, cases
    call batch_case(k)
  end do
  call error_cases()

  write (detail, '(a, es9.2, a)') ' (work between begins and ends ', work, ')'
  k = report_run('redist_fortran_batch', trim(detail))
  call MPI_Finalize()
  if (k /= 0) error stop 1
end program redist_fortran_batch
