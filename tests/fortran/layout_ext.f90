!> Module redist's plans on layouts with first blocks and row-major local arrays
!> (type(redist_layout_ext), type(redist_batch_op_ext)) against an element-by-element oracle
!> written here from the definitions (the first block row holds imb rows on grid row rsrc, then
!> blocks of mb rows from rsrc + 1; column-major local element (r, c) at r + c*lld, row-major
!> at r*lld + c), not from src/:
!>   - random copies (redist_plan_create with layout_ext, regions full / upper / lower), ops
!>     N / T (redist_plan_create_op, alpha and beta) blocking and split, batches of two
!>     operations; real(real64); first blocks from 1 to beyond the block and the matrix, either
!>     order on either side, windows, grids on all or some ranks in rotated order;
!>   - redist_plan_create from descriptors: A's of 9 integers, B's of PBLAS's 11 (DTYPE_ = 2,
!>     IMB_ = 3, INB_ = 1);
!>   - errors: imb = -1 on one rank, an unknown order everywhere, a row-major lld too small on
!>     one rank: the status on every rank, no plan.
!> Usage: redist_fortran_layout_ext [--cases=N]; prints "..., 0 failures" and PASS.
module layout_ext_cases
  use, intrinsic :: iso_c_binding, only: c_loc, c_ptr
  use, intrinsic :: iso_fortran_env, only: int64, real64, output_unit
  use mpi_f08
  use redist
  use test_run, only: me, nprocs, failures, checks, check
  use scalapack_reference, only: blacs_get, blacs_gridinit, blacs_gridexit, blacs_exit
  implicit none

  integer(int64) :: seed

  !> One side: its layout and this rank's place and local array size.
  type :: side
    type(redist_layout_ext) :: l
    logical :: member = .false.
    integer :: pr = -1, pc = -1
    integer(int64) :: locr = 0, locc = 0, elems = 1
  end type side

contains

  integer function draw(n)
    integer, intent(in) :: n
    seed = mod(seed * 48271_int64, 2147483647_int64)
    draw = int(mod(seed, int(max(n, 1), int64)))
  end function draw

  !> Grid coordinate owning global index g (0-based) of a dimension with first block fb.
  integer function owner(g, fb, b, np, src)
    integer(int64), intent(in) :: g, fb, b
    integer, intent(in) :: np, src
    if (g < fb) then
      owner = src
    else
      owner = int(mod((g - fb) / b + src + 1, int(np, int64)))
    end if
  end function owner

  !> Local index (0-based) of global index g on its owner.
  integer(int64) function local_index(g, fb, b, np, src)
    integer(int64), intent(in) :: g, fb, b
    integer, intent(in) :: np, src
    integer(int64) :: after
    if (g < fb) then
      local_index = g
      return
    end if
    after = g - fb
    local_index = (after / b / np) * b + mod(after, b)
    if (owner(g, fb, b, np, src) == src) local_index = local_index + fb
  end function local_index

  integer(int64) function first_rows(s)
    type(side), intent(in) :: s
    first_rows = s%l%imb
    if (first_rows == 0) first_rows = s%l%mb
  end function first_rows

  integer(int64) function first_cols(s)
    type(side), intent(in) :: s
    first_cols = s%l%inb
    if (first_cols == 0) first_cols = s%l%nb
  end function first_cols

  logical function owns(s, gi, gj)
    type(side), intent(in) :: s
    integer(int64), intent(in) :: gi, gj
    owns = s%member
    if (.not. owns) return
    owns = owner(gi, first_rows(s), s%l%mb, size(s%l%ranks, 1), s%l%rsrc) == s%pr .and. &
           owner(gj, first_cols(s), s%l%nb, size(s%l%ranks, 2), s%l%csrc) == s%pc
  end function owns

  !> 1-based position of global (gi, gj) in its owner's local array.
  integer(int64) function position(s, gi, gj)
    type(side), intent(in) :: s
    integer(int64), intent(in) :: gi, gj
    integer(int64) :: r, c
    r = local_index(gi, first_rows(s), s%l%mb, size(s%l%ranks, 1), s%l%rsrc)
    c = local_index(gj, first_cols(s), s%l%nb, size(s%l%ranks, 2), s%l%csrc)
    if (s%l%order == REDIST_ORDER_ROW_MAJOR) then
      position = 1 + r * s%l%lld + c
    else
      position = 1 + r + c * s%l%lld
    end if
  end function position

  !> A random side holding a wm x wn window on a grid of some ranks in rotated order.
  subroutine random_side(s, wm, wn)
    type(side), intent(out) :: s
    integer(int64), intent(in) :: wm, wn
    integer :: count, nprow, npcol, shift, p, q, pick
    integer(int64) :: g, extra

    count = nprocs
    pick = draw(3)
    if (nprocs > 1 .and. pick == 0) count = nprocs - 1
    nprow = 1
    if (draw(2) == 0) nprow = count
    pick = draw(3)
    if (mod(count, 2) == 0 .and. pick == 0) nprow = 2
    npcol = count / nprow
    shift = draw(nprocs)
    allocate (s%l%ranks(nprow, npcol))
    do q = 1, npcol
      do p = 1, nprow
        s%l%ranks(p, q) = mod(p - 1 + (q - 1) * nprow + shift, nprocs)
      end do
    end do
    s%l%m = wm + draw(5)
    s%l%n = wn + draw(5)
    s%l%mb = 1 + draw(4)
    s%l%nb = 1 + draw(4)
    s%l%imb = first_block(s%l%mb, s%l%m)
    s%l%inb = first_block(s%l%nb, s%l%n)
    s%l%rsrc = draw(nprow)
    s%l%csrc = draw(npcol)
    s%l%ia = 1 + draw(int(s%l%m - wm + 1))
    s%l%ja = 1 + draw(int(s%l%n - wn + 1))
    s%l%order = merge(REDIST_ORDER_ROW_MAJOR, REDIST_ORDER_COLUMN_MAJOR, draw(2) == 0)
    extra = draw(3)
    do q = 1, npcol
      do p = 1, nprow
        if (s%l%ranks(p, q) == me) then
          s%member = .true.
          s%pr = p - 1
          s%pc = q - 1
        end if
      end do
    end do
    s%l%lld = 1
    if (s%member) then
      do g = 0, s%l%m - 1
        if (owner(g, first_rows(s), s%l%mb, nprow, s%l%rsrc) == s%pr) s%locr = s%locr + 1
      end do
      do g = 0, s%l%n - 1
        if (owner(g, first_cols(s), s%l%nb, npcol, s%l%csrc) == s%pc) s%locc = s%locc + 1
      end do
      if (s%l%order == REDIST_ORDER_ROW_MAJOR) then
        s%l%lld = max(1_int64, s%locc) + extra
        s%elems = s%l%lld * max(1_int64, s%locr)
      else
        s%l%lld = max(1_int64, s%locr) + extra
        s%elems = s%l%lld * max(1_int64, s%locc)
      end if
    end if
  end subroutine random_side

  !> A first block: 0 (the block size), below, equal to, beyond the block or the matrix.
  integer(int64) function first_block(b, extent)
    integer(int64), intent(in) :: b, extent
    select case (draw(5))
    case (0)
      first_block = 0
    case (1)
      first_block = 1 + draw(int(b))
    case (2)
      first_block = b
    case (3)
      first_block = b + 1 + draw(int(2 * b))
    case default
      first_block = extent + 1 + draw(3)
    end select
  end function first_block

  subroutine fill(s, a, value_of_a)
    type(side), intent(in) :: s
    real(real64), intent(out) :: a(:)
    logical, intent(in) :: value_of_a
    integer(int64) :: gi, gj, p
    do p = 1, size(a, kind=int64)
      a(p) = -real(p, real64)
    end do
    if (.not. value_of_a) return
    do gj = 0, s%l%n - 1
      do gi = 0, s%l%m - 1
        if (owns(s, gi, gj)) a(position(s, gi, gj)) = a_value(s, gi, gj)
      end do
    end do
  end subroutine fill

  real(real64) function a_value(s, gi, gj)
    type(side), intent(in) :: s
    integer(int64), intent(in) :: gi, gj
    a_value = real(1 + gi + gj * s%l%m, real64)
  end function a_value

  !> B after B := alpha op(A) + beta B (op 'C' a copy with region `region`, PxTRMR2D's
  !> trapezoid, else N or T with PxTRADD's).
  subroutine expect(sa, sb, op, m, n, region, alpha, beta, b)
    type(side), intent(in) :: sa, sb
    character, intent(in) :: op
    integer(int64), intent(in) :: m, n
    integer, intent(in) :: region
    real(real64), intent(in) :: alpha, beta
    real(real64), intent(inout) :: b(:)
    integer(int64) :: i, j, gi, gj, p
    logical :: inside
    do j = 0, n - 1
      do i = 0, m - 1
        gi = sb%l%ia - 1 + i
        gj = sb%l%ja - 1 + j
        if (.not. owns(sb, gi, gj)) cycle
        if (op == 'C') then ! PxTRMR2D: upper i <= j + max(0, m - n), lower j <= i + max(0, n - m)
          inside = region == REDIST_REGION_FULL .or. &
                   (region == REDIST_REGION_UPPER .and. i <= j + max(0_int64, m - n)) .or. &
                   (region == REDIST_REGION_LOWER .and. j <= i + max(0_int64, n - m))
        else
          inside = region == REDIST_REGION_FULL .or. &
                   (region == REDIST_REGION_UPPER .and. i <= j) .or. &
                   (region == REDIST_REGION_LOWER .and. i >= j)
        end if
        if (.not. inside) cycle
        p = position(sb, gi, gj)
        if (op == 'T') then
          b(p) = alpha * a_value(sa, sa%l%ia - 1 + j, sa%l%ja - 1 + i) + beta * b(p)
        else if (op == 'N') then
          b(p) = alpha * a_value(sa, sa%l%ia - 1 + i, sa%l%ja - 1 + j) + beta * b(p)
        else
          b(p) = a_value(sa, sa%l%ia - 1 + i, sa%l%ja - 1 + j)
        end if
      end do
    end do
  end subroutine expect

  !> x and y differ (exact comparison: every value here is exact).
  elemental logical function differs(x, y)
    real(real64), intent(in) :: x, y
    differs = x < y .or. x > y
  end function differs

  subroutine random_case(k)
    integer, intent(in) :: k
    type(side) :: sa, sb, sa2, sb2
    type(redist_plan) :: plan
    integer(int64) :: m, n
    integer :: status, mode, region
    character :: op
    real(real64) :: alpha, beta
    real(real64), allocatable, target :: a(:), b(:), want(:), a2(:), b2(:), want2(:)
    real(real64), target :: alphas(2), betas(2)
    type(redist_batch_op_ext) :: ops(2)
    type(redist_options) :: options
    character(len=40) :: what
    real(real64), parameter :: scalars(4) = [0.0_real64, 1.0_real64, -2.0_real64, 0.5_real64]

    m = 1 + draw(12)
    n = 1 + draw(12)
    mode = mod(k, 4)
    op = 'C'
    if (mode /= 0) op = merge('N', 'T', draw(2) == 0)
    region = draw(3)
    alpha = 1
    beta = 0
    if (op /= 'C') then
      alpha = scalars(1 + draw(4))
      beta = scalars(1 + draw(4))
    end if
    if (op == 'T') then
      call random_side(sa, n, m)
    else
      call random_side(sa, m, n)
    end if
    call random_side(sb, m, n)
    allocate (a(sa%elems), b(sb%elems))
    call fill(sa, a, .true.)
    call fill(sb, b, .false.)
    want = b
    call expect(sa, sb, op, m, n, region, alpha, beta, want)
    write (what, '(a, i0, a, i0)') 'case ', k, ' mode ', mode

    select case (mode)
    case (0) ! a copy, with a stepwise schedule now and then
      if (draw(2) == 0) then
        options%schedule = REDIST_SCHEDULE_ALL_AT_ONCE
        call redist_plan_create(plan, MPI_COMM_WORLD, int(m), int(n), REDIST_DOUBLE, sa%l, &
                                sb%l, status, region=region, options=options)
      else
        call redist_plan_create(plan, MPI_COMM_WORLD%MPI_VAL, int(m), int(n), REDIST_DOUBLE, &
                                sa%l, sb%l, status, region=region)
      end if
      call check(status == REDIST_SUCCESS, trim(what)//' create')
      if (status /= REDIST_SUCCESS) return
      call redist_plan_execute(plan, a, b, status)
    case (1, 2) ! an op, blocking or split
      call redist_plan_create_op(plan, MPI_COMM_WORLD, merge(REDIST_OP_N, REDIST_OP_T, &
                                 op == 'N'), int(m), int(n), REDIST_DOUBLE, sa%l, sb%l, status, &
                                 region=region)
      call check(status == REDIST_SUCCESS, trim(what)//' create_op')
      if (status /= REDIST_SUCCESS) return
      if (mode == 1) then
        call redist_plan_execute_op(plan, alpha, a, beta, b, status)
      else
        call redist_plan_execute_op_begin(plan, alpha, a, beta, b, status)
        if (status == REDIST_SUCCESS) call redist_plan_execute_end(plan, status)
      end if
    case default ! a batch: this op and a copy of A onto a second B
      call random_side(sb2, m, n)
      sa2 = sa
      if (op == 'T') call random_side(sa2, m, n)
      allocate (a2(sa2%elems), b2(sb2%elems))
      call fill(sa2, a2, .true.)
      call fill(sb2, b2, .false.)
      want2 = b2
      call expect(sa2, sb2, 'N', m, n, REDIST_REGION_FULL, 1.0_real64, 0.0_real64, want2)
      ops(1) = redist_batch_op_ext(op=merge(REDIST_OP_N, REDIST_OP_T, op == 'N'), m=m, n=n, &
                                   type=REDIST_DOUBLE, a=sa%l, b=sb%l, region=region)
      ops(2) = redist_batch_op_ext(op=REDIST_OP_N, m=m, n=n, type=REDIST_DOUBLE, a=sa2%l, &
                                   b=sb2%l, region=REDIST_REGION_FULL)
      call redist_plan_create_batch(plan, MPI_COMM_WORLD, ops, status)
      call check(status == REDIST_SUCCESS, trim(what)//' create_batch')
      if (status /= REDIST_SUCCESS) return
      alphas = [alpha, 1.0_real64]
      betas = [beta, 0.0_real64]
      call redist_plan_execute_batch(plan, [c_loc(a), c_loc(a2)], [c_loc(b), c_loc(b2)], &
                                     status, alphas=[c_loc(alphas(1)), c_loc(alphas(2))], &
                                     betas=[c_loc(betas(1)), c_loc(betas(2))])
      call check(.not. any(differs(b2, want2)), trim(what)//' second B')
    end select
    call check(status == REDIST_SUCCESS, trim(what)//' execute')
    call check(.not. any(differs(b, want)), trim(what)//' B')
    call redist_plan_destroy(plan, status)
  end subroutine random_case

  !> A plan from descriptors: A 7 x 9 (9 integers, blocks 2 x 2), B with first blocks of 3 rows
  !> and 1 column, then 2 x 2 (11 integers, DTYPE_ = 2), both on a 1 x nprocs BLACS grid.
  subroutine descriptor_case()
    integer, parameter :: m = 7, n = 9
    integer :: ictxt, desca(9), descb(11), status
    integer(int64) :: gi, gj
    real(real64), allocatable :: a(:), b(:), want(:)
    real(real64) :: value
    type(redist_plan) :: plan

    call blacs_get(-1, 0, ictxt)
    call blacs_gridinit(ictxt, 'R', 1, nprocs)
    desca = [1, ictxt, m, n, 2, 2, 0, 0, m]
    descb = [2, ictxt, m, n, 3, 1, 2, 2, 0, 0, m]
    allocate (a(m * n), b(m * n), want(m * n))
    a = -1
    b = -2
    want = b
    do gj = 0, n - 1
      do gi = 0, m - 1
        value = real(1 + gi + gj * m, real64)
        if (owner(gj, 2_int64, 2_int64, nprocs, 0) == me) &
          a(1 + gi + local_index(gj, 2_int64, 2_int64, nprocs, 0) * m) = value
        if (owner(gj, 1_int64, 2_int64, nprocs, 0) == me) &
          want(1 + gi + local_index(gj, 1_int64, 2_int64, nprocs, 0) * m) = value
      end do
    end do
    call redist_plan_create(plan, m, n, REDIST_DOUBLE, desca, 1, 1, descb, 1, 1, ictxt, status)
    call check(status == REDIST_SUCCESS, 'plan from an 11-integer descriptor')
    if (status == REDIST_SUCCESS) then
      call redist_plan_execute(plan, a, b, status)
      call check(status == REDIST_SUCCESS .and. .not. any(differs(b, want)), &
                 'B from an 11-integer descriptor')
      call redist_plan_destroy(plan, status)
    end if
    call blacs_gridexit(ictxt)
  end subroutine descriptor_case

  !> Bad input: the status on every rank, no plan.
  subroutine error_cases()
    type(side) :: sa, sb
    type(redist_layout_ext) :: bad
    type(redist_plan) :: plan
    integer :: status, last
    logical :: short, any_short
    character(len=:), allocatable :: message

    last = nprocs - 1
    seed = 99
    call random_side(sa, 4_int64, 3_int64)
    call random_side(sb, 4_int64, 3_int64)
    ! imb = -1 on the last rank.
    bad = sb%l
    if (me == last) bad%imb = -1
    call redist_plan_create(plan, MPI_COMM_WORLD, 4, 3, REDIST_DOUBLE, sa%l, bad, status)
    message = redist_message()
    if (me == last) then
      call check(status == REDIST_ERR_ARGUMENT .and. &
                 index(message, 'redist_plan_create_ext: argument b->imb = -1') == 1, &
                 'imb = -1 on its rank')
    else
      call check(status == REDIST_ERR_REMOTE, 'imb = -1 on another rank')
    end if
    ! An unknown order everywhere.
    bad = sb%l
    bad%order = 7
    call redist_plan_create_op(plan, MPI_COMM_WORLD, REDIST_OP_N, 4, 3, REDIST_DOUBLE, sa%l, &
                               bad, status)
    message = redist_message()
    call check(status == REDIST_ERR_ARGUMENT .and. &
               index(message, 'redist_plan_create_op_ext: argument b->order = 7') == 1, &
               'order = 7')
    ! A row-major lld below the local columns on the last rank (where it holds some).
    bad = sb%l
    bad%order = REDIST_ORDER_ROW_MAJOR
    bad%lld = max(1_int64, sb%locc) + 1
    short = me == last .and. sb%member .and. sb%locc > 1
    if (short) bad%lld = sb%locc - 1
    call MPI_Allreduce(short, any_short, 1, MPI_LOGICAL, MPI_LOR, MPI_COMM_WORLD)
    call redist_plan_create(plan, MPI_COMM_WORLD, 4, 3, REDIST_DOUBLE, sa%l, bad, status)
    message = redist_message()
    if (short) then
      call check(status == REDIST_ERR_ARGUMENT .and. &
                 index(message, 'argument b->layout.lld') > 0, 'row-major lld')
    else if (any_short) then
      call check(status == REDIST_ERR_REMOTE, 'row-major lld on another rank')
    else
      call check(status == REDIST_SUCCESS, 'row-major lld enough everywhere')
      call redist_plan_destroy(plan, status)
    end if
  end subroutine error_cases

end module layout_ext_cases

program redist_fortran_layout_ext
  use mpi_f08
  use test_run, only: start_run, report_run
  use layout_ext_cases
  use scalapack_reference, only: blacs_exit
  implicit none
  integer :: cases, k

  cases = 80
  call start_run(cases)
  seed = 20261129
  do k = 1, cases
    call random_case(k)
  end do
  call error_cases()
  call descriptor_case()

  k = report_run('redist_fortran_layout_ext')
  call blacs_exit(1)
  call MPI_Finalize()
  if (k /= 0) error stop 1
end program redist_fortran_layout_ext
