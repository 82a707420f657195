!> The cases and the element oracle of module redist's block grid tests (block_grid.f90,
!> grid_batch.f90), written here from the definitions, not from src/: random block grids and
!> block-cyclic sides, where each global element lives, A's values and B's expected values.
module block_grid_cases
  use, intrinsic :: iso_fortran_env, only: int64, real64, output_unit
  use mpi_f08
  use redist
  use test_run, only: me, nprocs, failures, checks, check
  implicit none

  integer(int64) :: seed

  !> One side: a block grid (is_grid) or a block-cyclic layout, its global m x n, this rank's
  !> local array size, and for a grid which entry of g%local holds each block (0: not mine).
  type :: side
    logical :: is_grid = .true.
    type(redist_block_grid) :: g
    type(redist_layout_ext) :: l
    integer(int64) :: m = 0, n = 0, elems = 1
    integer, allocatable :: entry(:, :)
    integer :: pr = -1, pc = -1
  end type side

contains

  integer function draw(n)
    integer, intent(in) :: n
    seed = mod(seed * 48271_int64, 2147483647_int64)
    draw = int(mod(seed, int(max(n, 1), int64)))
  end function draw

  !> Splits of `extent` into `blocks` blocks at random offsets: sorted, equal ones (empty blocks)
  !> now and then, and always one empty block when `empty`.
  function random_splits(extent, blocks, empty) result(splits)
    integer(int64), intent(in) :: extent
    integer, intent(in) :: blocks
    logical, intent(in) :: empty
    integer(int64) :: splits(blocks + 1), t
    integer :: k, q
    splits(1) = 0
    splits(blocks + 1) = extent
    do k = 2, blocks
      splits(k) = draw(int(extent) + 1)
    end do
    do k = 2, blocks
      do q = k + 1, blocks
        if (splits(q) < splits(k)) then
          t = splits(q)
          splits(q) = splits(k)
          splits(k) = t
        end if
      end do
    end do
    if (empty .and. blocks > 1) splits(2) = 0
  end function random_splits

  !> A random block grid holding an wm x wn window.
  subroutine random_grid(s, wm, wn)
    type(side), intent(out) :: s
    integer(int64), intent(in) :: wm, wn
    integer :: rows, cols, r, c, k, t, count
    integer, allocatable :: order(:)
    integer(int64) :: next, extent, across, ld, gap, swap

    s%m = wm + draw(4)
    s%n = wn + draw(4)
    rows = 1 + draw(4)
    cols = 1 + draw(4)
    s%g%row_splits = random_splits(s%m, rows, draw(3) == 0)
    s%g%col_splits = random_splits(s%n, cols, draw(3) == 0)
    allocate (s%g%owners(rows, cols), s%entry(rows, cols))
    do c = 1, cols
      do r = 1, rows
        s%g%owners(r, c) = draw(nprocs)
      end do
    end do
    s%g%row_major = draw(2) == 0
    s%g%ia = 1 + draw(int(s%m - wm + 1))
    s%g%ja = 1 + draw(int(s%n - wn + 1))
    ! Every rank draws the same order and gaps; each places its own blocks in that order.
    order = [(k, k = 1, rows * cols)]
    do k = rows * cols, 2, -1
      t = 1 + draw(k)
      order([k, t]) = order([t, k])
    end do
    count = count_mine(s)
    allocate (s%g%local(count))
    s%entry = 0
    next = 0
    count = 0
    do k = 1, rows * cols
      r = 1 + mod(order(k) - 1, rows)
      c = 1 + (order(k) - 1) / rows
      gap = draw(4)
      ld = draw(3)
      if (s%g%owners(r, c) /= me) cycle
      extent = s%g%row_splits(r + 1) - s%g%row_splits(r)
      across = s%g%col_splits(c + 1) - s%g%col_splits(c)
      if (s%g%row_major) then
        swap = extent
        extent = across
        across = swap
      end if
      ld = ld + max(1_int64, extent)
      count = count + 1
      s%g%local(count) = redist_grid_block(block_row=r - 1, block_col=c - 1, offset=next + gap, &
                                           ld=ld)
      s%entry(r, c) = count
      next = next + gap + ld * across
    end do
    s%elems = next + 1
  end subroutine random_grid

  integer function count_mine(s)
    type(side), intent(in) :: s
    count_mine = count(s%g%owners == me)
  end function count_mine

  !> A random block-cyclic side on all ranks in rotated order holding an wm x wn window.
  subroutine random_cyclic(s, wm, wn)
    type(side), intent(out) :: s
    integer(int64), intent(in) :: wm, wn
    integer :: nprow, npcol, shift, p, q, pick
    integer(int64) :: locr, locc, g

    s%is_grid = .false.
    nprow = merge(1, nprocs, draw(2) == 0)
    pick = draw(3)
    if (mod(nprocs, 2) == 0 .and. pick == 0) nprow = 2
    npcol = nprocs / nprow
    shift = draw(nprocs)
    allocate (s%l%ranks(nprow, npcol))
    do q = 1, npcol
      do p = 1, nprow
        s%l%ranks(p, q) = mod(p - 1 + (q - 1) * nprow + shift, nprocs)
        if (s%l%ranks(p, q) == me) then
          s%pr = p - 1
          s%pc = q - 1
        end if
      end do
    end do
    s%m = wm + draw(4)
    s%n = wn + draw(4)
    s%l%m = s%m
    s%l%n = s%n
    s%l%mb = 1 + draw(4)
    s%l%nb = 1 + draw(4)
    s%l%imb = draw(int(s%l%mb) + 3)
    s%l%inb = draw(int(s%l%nb) + 3)
    s%l%rsrc = draw(nprow)
    s%l%csrc = draw(npcol)
    s%l%ia = 1 + draw(int(s%m - wm + 1))
    s%l%ja = 1 + draw(int(s%n - wn + 1))
    s%l%order = merge(REDIST_ORDER_ROW_MAJOR, REDIST_ORDER_COLUMN_MAJOR, draw(2) == 0)
    locr = 0
    locc = 0
    do g = 0, s%m - 1
      if (cyclic_owner(g, first(s%l%imb, s%l%mb), s%l%mb, nprow, s%l%rsrc) == s%pr) &
        locr = locr + 1
    end do
    do g = 0, s%n - 1
      if (cyclic_owner(g, first(s%l%inb, s%l%nb), s%l%nb, npcol, s%l%csrc) == s%pc) &
        locc = locc + 1
    end do
    if (s%l%order == REDIST_ORDER_ROW_MAJOR) then
      s%l%lld = max(1_int64, locc) + draw(3)
      s%elems = s%l%lld * max(1_int64, locr)
    else
      s%l%lld = max(1_int64, locr) + draw(3)
      s%elems = s%l%lld * max(1_int64, locc)
    end if
  end subroutine random_cyclic

  integer(int64) function first(fb, b)
    integer(int64), intent(in) :: fb, b
    first = merge(b, fb, fb == 0)
  end function first

  !> Grid coordinate owning global index g (0-based) with first block fb, then blocks of b.
  integer function cyclic_owner(g, fb, b, np, src)
    integer(int64), intent(in) :: g, fb, b
    integer, intent(in) :: np, src
    cyclic_owner = src
    if (g >= fb) cyclic_owner = int(mod((g - fb) / b + src + 1, int(np, int64)))
  end function cyclic_owner

  !> Local index (0-based) of global index g on its owner.
  integer(int64) function cyclic_local(g, fb, b, np, src)
    integer(int64), intent(in) :: g, fb, b
    integer, intent(in) :: np, src
    cyclic_local = g
    if (g < fb) return
    cyclic_local = ((g - fb) / b / np) * b + mod(g - fb, b)
    if (cyclic_owner(g, fb, b, np, src) == src) cyclic_local = cyclic_local + fb
  end function cyclic_local

  !> 1-based position of global (gi, gj) in this rank's local array of s, 0 if not this rank's.
  integer(int64) function position(s, gi, gj)
    type(side), intent(in) :: s
    integer(int64), intent(in) :: gi, gj
    integer(int64) :: r, c, fr, fc
    integer :: br, bc, k
    position = 0
    if (s%is_grid) then
      br = count(s%g%row_splits(2:) <= gi) + 1
      bc = count(s%g%col_splits(2:) <= gj) + 1
      k = s%entry(br, bc)
      if (k == 0) return
      r = gi - s%g%row_splits(br)
      c = gj - s%g%col_splits(bc)
      if (s%g%row_major) then
        position = 1 + s%g%local(k)%offset + r * s%g%local(k)%ld + c
      else
        position = 1 + s%g%local(k)%offset + r + c * s%g%local(k)%ld
      end if
      return
    end if
    fr = first(s%l%imb, s%l%mb)
    fc = first(s%l%inb, s%l%nb)
    if (cyclic_owner(gi, fr, s%l%mb, size(s%l%ranks, 1), s%l%rsrc) /= s%pr .or. &
        cyclic_owner(gj, fc, s%l%nb, size(s%l%ranks, 2), s%l%csrc) /= s%pc) return
    r = cyclic_local(gi, fr, s%l%mb, size(s%l%ranks, 1), s%l%rsrc)
    c = cyclic_local(gj, fc, s%l%nb, size(s%l%ranks, 2), s%l%csrc)
    if (s%l%order == REDIST_ORDER_ROW_MAJOR) then
      position = 1 + r * s%l%lld + c
    else
      position = 1 + r + c * s%l%lld
    end if
  end function position

  integer(int64) function window_row(s)
    type(side), intent(in) :: s
    window_row = merge(s%g%ia, s%l%ia, s%is_grid) - 1
  end function window_row

  integer(int64) function window_col(s)
    type(side), intent(in) :: s
    window_col = merge(s%g%ja, s%l%ja, s%is_grid) - 1
  end function window_col

  complex(real64) function a_value(gi, gj)
    integer(int64), intent(in) :: gi, gj
    a_value = cmplx(1 + gi + 100 * gj, 3 * gi - gj, real64)
  end function a_value

  !> A's local array: every element of the matrix A at its place, -position elsewhere.
  subroutine fill_a(s, a)
    type(side), intent(in) :: s
    complex(real64), intent(out) :: a(:)
    integer(int64) :: gi, gj, p
    a = [(cmplx(-p, 0, real64), p = 1, size(a, kind=int64))]
    do gj = 0, s%n - 1
      do gi = 0, s%m - 1
        p = position(s, gi, gj)
        if (p > 0) a(p) = a_value(gi, gj)
      end do
    end do
  end subroutine fill_a

  !> B's expected local array after B := alpha op(A) + beta B on the m x n window.
  subroutine expect(sa, sb, op, m, n, alpha, beta, b)
    type(side), intent(in) :: sa, sb
    integer, intent(in) :: op
    integer(int64), intent(in) :: m, n
    complex(real64), intent(in) :: alpha, beta
    complex(real64), intent(inout) :: b(:)
    integer(int64) :: i, j, p
    complex(real64) :: x
    do j = 0, n - 1
      do i = 0, m - 1
        p = position(sb, window_row(sb) + i, window_col(sb) + j)
        if (p == 0) cycle
        if (op == REDIST_OP_N) then
          x = a_value(window_row(sa) + i, window_col(sa) + j)
        else
          x = a_value(window_row(sa) + j, window_col(sa) + i)
          if (op == REDIST_OP_C) x = conjg(x)
        end if
        b(p) = alpha * x + beta * b(p)
      end do
    end do
  end subroutine expect

  !> x and y differ (exact comparison: every value here is exact).
  elemental logical function differs(x, y)
    complex(real64), intent(in) :: x, y
    differs = real(x) < real(y) .or. real(x) > real(y) .or. aimag(x) < aimag(y) .or. &
              aimag(x) > aimag(y)
  end function differs

  subroutine create(plan, sa, sb, op, m, n, type, status)
    type(redist_plan), intent(out) :: plan
    type(side), intent(in) :: sa, sb
    integer, intent(in) :: op, type
    integer(int64), intent(in) :: m, n
    integer, intent(out) :: status
    type(redist_options) :: options
    if (sa%is_grid .and. sb%is_grid) then
      options%schedule = REDIST_SCHEDULE_ALL_AT_ONCE
      call redist_grid_plan_create(plan, MPI_COMM_WORLD, op, int(m), int(n), type, sa%g, sb%g, &
                                   status, options=options)
    else if (sa%is_grid) then
      call redist_grid_plan_create(plan, MPI_COMM_WORLD%MPI_VAL, op, int(m), int(n), type, &
                                   sa%g, sb%l, status)
    else
      call redist_grid_plan_create(plan, MPI_COMM_WORLD, op, int(m), int(n), type, sa%l, sb%g, &
                                   status)
    end if
  end subroutine create

  subroutine random_case(k)
    integer, intent(in) :: k
    type(side) :: sa, sb
    type(redist_plan) :: plan
    integer(int64) :: m, n
    integer :: status, mode, op, type, pick
    complex(real64) :: alpha, beta
    complex(real64), allocatable, target :: a(:), b(:), want(:)
    real(real64), allocatable, target :: ra(:), rb(:)
    character(len=60) :: what
    real(real64), parameter :: scalars(4) = [0.0_real64, 1.0_real64, -2.0_real64, 0.5_real64]

    m = draw(10)
    n = 1 + draw(10)
    mode = mod(k / 3, 4) ! 0 a copy, 1 an op, 2 a split copy, 3 a split op
    type = merge(REDIST_DOUBLE, REDIST_COMPLEX_DOUBLE, mod(k / 12, 2) == 0)
    op = REDIST_OP_N
    alpha = 1
    beta = 0
    if (mode == 1 .or. mode == 3) then
      op = draw(merge(2, 3, type == REDIST_DOUBLE))
      alpha = scalars(1 + draw(4))
      beta = scalars(1 + draw(4))
      pick = draw(2)
      if (type == REDIST_COMPLEX_DOUBLE .and. pick == 0) alpha = alpha * (0, 1)
    end if
    select case (mod(k, 3))
    case (0)
      call a_side(random_grid)
      call random_grid(sb, m, n)
    case (1)
      call a_side(random_grid)
      call random_cyclic(sb, m, n)
    case default
      call a_side(random_cyclic)
      call random_grid(sb, m, n)
    end select
    allocate (a(sa%elems), b(sb%elems))
    call fill_a(sa, a)
    call fill_a(sb, b)
    want = b
    call expect(sa, sb, op, m, n, alpha, beta, want)
    write (what, '(a, i0, a, i0, a, i0, a, i0)') 'case ', k, ' sides ', mod(k, 3), ' mode ', &
      mode, ' op ', op

    call create(plan, sa, sb, op, m, n, type, status)
    call check(status == REDIST_SUCCESS, trim(what)//' create')
    if (status /= REDIST_SUCCESS) return
    if (type == REDIST_DOUBLE) then
      ra = real(a, real64)
      rb = real(b, real64)
      select case (mode)
      case (0)
        call redist_plan_execute(plan, ra, rb, status)
      case (1)
        call redist_plan_execute_op(plan, real(alpha, real64), ra, real(beta, real64), rb, status)
      case (2)
        call redist_plan_execute_begin(plan, ra, rb, status)
        if (status == REDIST_SUCCESS) call redist_plan_execute_end(plan, status)
      case default
        call redist_plan_execute_op_begin(plan, real(alpha, real64), ra, real(beta, real64), &
                                          rb, status)
        if (status == REDIST_SUCCESS) call redist_plan_execute_end(plan, status)
      end select
      b = cmplx(rb, 0, real64)
      want = cmplx(real(want, real64), 0, real64)
    else
      select case (mode)
      case (0)
        call redist_plan_execute(plan, a, b, status)
      case (1)
        call redist_plan_execute_op(plan, alpha, a, beta, b, status)
      case (2)
        call redist_plan_execute_begin(plan, a, b, status)
        if (status == REDIST_SUCCESS) call redist_plan_execute_end(plan, status)
      case default
        call redist_plan_execute_op_begin(plan, alpha, a, beta, b, status)
        if (status == REDIST_SUCCESS) call redist_plan_execute_end(plan, status)
      end select
    end if
    call check(status == REDIST_SUCCESS, trim(what)//' execute')
    call check(.not. any(differs(b, want)), trim(what)//' B')
    call redist_plan_destroy(plan, status)
    call check(status == REDIST_SUCCESS, trim(what)//' destroy')

  contains

    !> A's side from `make`: its window is n x m for op T and C.
    subroutine a_side(make)
      interface
        subroutine make(s, wm, wn)
          import :: side, int64
          type(side), intent(out) :: s
          integer(int64), intent(in) :: wm, wn
        end subroutine make
      end interface
      if (op == REDIST_OP_N) then
        call make(sa, m, n)
      else
        call make(sa, n, m)
      end if
    end subroutine a_side
  end subroutine random_case

  !> Bad input: the status on every rank.
  subroutine error_cases()
    type(side) :: sa, sb
    type(redist_block_grid) :: bad
    type(redist_plan) :: plan
    integer :: status, last
    character(len=:), allocatable :: message

    last = nprocs - 1
    seed = 77
    call random_grid(sa, 4_int64, 3_int64)
    call random_grid(sb, 4_int64, 3_int64)
    ! A split below the one before it, everywhere.
    bad = sb%g
    bad%row_splits = [0_int64, 3_int64, 2_int64, sb%m]
    deallocate (bad%owners, bad%local)
    allocate (bad%owners(3, size(sb%g%col_splits) - 1), bad%local(0))
    bad%owners = nprocs - 1
    call redist_grid_plan_create(plan, MPI_COMM_WORLD, REDIST_OP_N, 4, 3, REDIST_DOUBLE, sa%g, &
                                 bad, status)
    message = redist_message()
    call check(status == REDIST_ERR_ARGUMENT .and. index(message, 'row_splits[2]') > 0, &
               'a split not increasing')
    ! An owner outside the communicator, everywhere.
    bad = sa%g
    bad%owners(1, 1) = nprocs
    call redist_grid_plan_create(plan, MPI_COMM_WORLD, REDIST_OP_N, 4, 3, REDIST_DOUBLE, bad, &
                                 sb%g, status)
    message = redist_message()
    call check(status == REDIST_ERR_ARGUMENT .and. index(message, 'a->grid->owners[0]') > 0, &
               'an owner outside the communicator')
    ! An owner -1 on the last rank only.
    bad = sa%g
    if (me == last) bad%owners(1, 1) = -1
    call redist_grid_plan_create(plan, MPI_COMM_WORLD, REDIST_OP_N, 4, 3, REDIST_DOUBLE, bad, &
                                 sb%g, status)
    message = redist_message()
    if (me == last) then
      call check(status == REDIST_ERR_ARGUMENT .and. index(message, 'a->grid->owners[0]') > 0, &
                 'owner -1 on its rank')
    else
      call check(status == REDIST_ERR_REMOTE, 'owner -1 on another rank')
    end if
    ! Owners of the wrong shape on rank 0 (the module's own check).
    bad = sb%g
    if (me == 0) then
      deallocate (bad%owners)
      allocate (bad%owners(size(sb%g%row_splits), 1))
      bad%owners = 0
    end if
    call redist_grid_plan_create(plan, MPI_COMM_WORLD, REDIST_OP_N, 4, 3, REDIST_DOUBLE, sa%g, &
                                 bad, status)
    message = redist_message()
    if (me == 0) then
      call check(status == REDIST_ERR_ARGUMENT .and. &
                 index(message, 'redist_grid_plan_create: b%owners: shape') == 1, &
                 'owners of the wrong shape on its rank')
    else
      call check(status == REDIST_ERR_REMOTE, 'owners of the wrong shape on another rank')
    end if
    ! The library still works: a good plan after the errors.
    call redist_grid_plan_create(plan, MPI_COMM_WORLD, REDIST_OP_N, 4, 3, REDIST_DOUBLE, sa%g, &
                                 sb%g, status)
    call check(status == REDIST_SUCCESS, 'a plan after the errors')
    call redist_plan_destroy(plan, status)
  end subroutine error_cases

end module block_grid_cases

