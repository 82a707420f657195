!> Module redist's N-d plans, plans for B := alpha op(A) + beta B, and split execution, against
!> an element-by-element oracle written here from the definitions (docs/nd.md, "The model";
!> ScaLAPACK's block-cyclic map), not from src/:
!>   - N-d: random layouts of rank 1-4 and rank 7 (BLOCK, BLOCK(k), CYCLIC(k), GEN_BLOCK with
!>     zeros, '*'; grids on random subsets of the ranks in random order; windows; padding; both
!>     storage orders; a random axis permutation in a third of the cases), every type. Every
!>     element of A holds its global linear index; after the plan every local position of B
!>     must hold the index of the element of A that lands there, or its old value (outside the
!>     window, padding). Executed on rank-N arrays (pointer-remapped), blocking or split with
!>     computation between begin and end.
!>   - op: random 2-D block-cyclic layouts, op N / T / C, full and trapezoids, alpha and beta
!>     (0, 1, -1, others, complex), every float type, blocking or split; integer copies and
!>     transposes.
!>   - errors: a bad distribution on one rank, inconsistent array sizes on one rank, wrong
!>     element type, a non-contiguous section at a begin, the wrong type at a begin on a rank
!>     that owns nothing: an error on every rank, B unchanged.
!> All ranks draw the same cases from one seed. Usage: redist_fortran_nd [--cases=N]; prints
!> "..., 0 failures" and PASS when every check holds on every process.
module nd_cases
  use, intrinsic :: iso_fortran_env, only: int32, int64, real32, real64, output_unit
  use, intrinsic :: ieee_arithmetic, only: ieee_is_nan
  use mpi_f08
  use redist
  use test_run, only: me, nprocs, failures, checks
  implicit none

  integer, parameter :: max_dims = 7
  real(real64), parameter :: untouched = -7, padding = -9
  integer(int64) :: seed
  real(real64) :: work !< of the computation between begins and ends

  interface equal
    module procedure same, equal_complex
  end interface equal

contains

  include 'oracle_2d.inc'

  !> x and y are the same number (neither NaN; -0 equals 0).
  elemental logical function equal_complex(x, y)
    complex(real64), intent(in) :: x, y
    equal_complex = same(real(x), real(y)) .and. same(aimag(x), aimag(y))
  end function equal_complex

  elemental logical function same(x, y)
    real(real64), intent(in) :: x, y
    same = .not. (ieee_is_nan(x) .or. ieee_is_nan(y) .or. x < y .or. x > y)
  end function same

  ! ---------------------------------------------------------------------------------------
  ! The N-d oracle: who holds a global index along one dimension, and where.

  !> Coordinate holding 0-based global index g along dimension d of `l`, and its local index.
  subroutine owner(l, d, g, coord, local)
    type(redist_nd_layout), intent(in) :: l
    integer, intent(in) :: d
    integer(int64), intent(in) :: g
    integer, intent(out) :: coord
    integer(int64), intent(out) :: local
    integer(int64) :: b, first
    integer :: p, c
    p = l%psizes(d)
    select case (l%dist(d)%kind)
    case (REDIST_DIST_NONE)
      coord = 0
      local = g
    case (REDIST_DIST_BLOCK)
      b = l%dist(d)%block
      if (b == 0) b = (l%gsizes(d) + p - 1) / p
      coord = int(g / b)
      local = g - coord * b
    case (REDIST_DIST_CYCLIC)
      b = max(1_int64, l%dist(d)%block)
      coord = int(mod(g / b, int(p, int64)))
      local = (g / (b * p)) * b + mod(g, b)
    case default
      first = 0
      do c = 0, p - 1
        if (g < first + l%dist(d)%extents(c + 1)) exit
        first = first + l%dist(d)%extents(c + 1)
      end do
      coord = c
      local = g - first
    end select
  end subroutine owner

  !> This rank's grid coordinates in `l` (0-based), or .false. outside the grid.
  logical function coordinates(l, coords)
    type(redist_nd_layout), intent(in) :: l
    integer, intent(out) :: coords(:)
    integer :: position, d
    position = me
    if (allocated(l%ranks)) position = findloc(l%ranks, me, 1) - 1
    coordinates = position >= 0 .and. position < product(l%psizes)
    do d = size(l%psizes), 1, -1 ! row-major: the last grid dimension fastest
      coords(d) = mod(position, l%psizes(d))
      position = position / l%psizes(d)
    end do
  end function coordinates

  !> Local counts of this rank's coordinates, by enumerating every global index.
  function local_counts(l, coords) result(counts)
    type(redist_nd_layout), intent(in) :: l
    integer, intent(in) :: coords(:)
    integer(int64) :: counts(size(l%gsizes)), g, local
    integer :: d, c
    counts = 0
    do d = 1, size(l%gsizes)
      do g = 0, l%gsizes(d) - 1
        call owner(l, d, g, c, local)
        if (c == coords(d)) counts(d) = counts(d) + 1
      end do
    end do
  end function local_counts

  !> 0-based offset of local index `local` (per dimension) in storage of extents `extents`.
  integer(int64) function offset(local, extents, order)
    integer(int64), intent(in) :: local(:), extents(:)
    integer, intent(in) :: order
    integer :: d, n
    n = size(local)
    offset = 0
    if (order == REDIST_ORDER_FORTRAN) then
      do d = n, 1, -1
        offset = offset * extents(d) + local(d)
      end do
    else
      do d = 1, n
        offset = offset * extents(d) + local(d)
      end do
    end if
  end function offset

  !> Every global element held by this rank (0-based, one per column of `globals`) and its
  !> 0-based offset in local storage of extents `extents`.
  subroutine held_elements(l, coords, extents, globals, offsets)
    type(redist_nd_layout), intent(in) :: l
    integer, intent(in) :: coords(:)
    integer(int64), intent(in) :: extents(:)
    integer(int64), allocatable, intent(out) :: globals(:, :), offsets(:)
    integer(int64) :: g(size(coords)), local(size(coords)), count
    integer :: n, d, c
    logical :: mine
    n = size(coords)
    count = product(local_counts(l, coords))
    allocate (globals(n, count), offsets(count))
    g = 0
    count = 0
    if (any(l%gsizes == 0)) return
    do
      mine = .true.
      do d = 1, n
        call owner(l, d, g(d), c, local(d))
        if (c /= coords(d)) mine = .false.
      end do
      if (mine) then
        count = count + 1
        globals(:, count) = g
        offsets(count) = offset(local, extents, l%order)
      end if
      ! next global index, first dimension fastest
      d = 1
      do while (d <= n)
        g(d) = g(d) + 1
        if (g(d) < l%gsizes(d)) exit
        g(d) = 0
        d = d + 1
      end do
      if (d > n) exit
    end do
  end subroutine held_elements

  !> A random distribution of extent n over p coordinates.
  function random_distribution(n, p) result(dist)
    integer, intent(in) :: n, p
    type(redist_distribution) :: dist
    integer :: extents(p), c, left
    character(len=12) :: text
    select case (draw(merge(7, 6, p == 1)))
    case (0)
      dist = redist_block()
    case (1)
      dist = redist_block((n + p - 1) / p + draw(3))
    case (2)
      dist = redist_cyclic(1 + draw(3))
    case (4) ! HPF's text
      write (text, '(a, i0, a)') 'cyclic(', 1 + draw(3), ')'
      dist = redist_distribution(text)
    case (5)
      dist = redist_distribution(' Block ')
    case (3)
      left = n
      do c = 1, p - 1
        extents(c) = draw(left + 1)
        left = left - extents(c)
      end do
      extents(p) = left
      dist = redist_gen_block(extents)
    case default
      dist = redist_distribution('*')
    end select
  end function random_distribution

  !> A random grid of `ndims` dimensions on a random subset of the ranks, in random order.
  subroutine random_grid(l, ndims)
    type(redist_nd_layout), intent(inout) :: l
    integer, intent(in) :: ndims
    integer :: d, tries, order(nprocs)
    allocate (l%psizes(ndims))
    l%psizes = 1
    do tries = 1, draw(4)
      d = 1 + draw(ndims)
      if (product(l%psizes) * 2 <= nprocs) l%psizes(d) = l%psizes(d) * 2
    end do
    if (draw(3) == 0 .and. product(l%psizes) * 3 <= nprocs) then
      d = 1 + draw(ndims)
      l%psizes(d) = l%psizes(d) * 3
    end if
    if (draw(2) == 0) then
      order = shuffled(nprocs) - 1
      allocate (l%ranks, source=order(1:product(l%psizes)))
    end if
  end subroutine random_grid

  !> A random layout with global extents `gsizes`: grid, distributions, order.
  function random_layout(gsizes) result(l)
    integer, intent(in) :: gsizes(:)
    type(redist_nd_layout) :: l
    integer :: d
    allocate (l%gsizes, source=int(gsizes, int64))
    call random_grid(l, size(gsizes))
    allocate (l%dist(size(gsizes)))
    do d = 1, size(gsizes)
      l%dist(d) = random_distribution(gsizes(d), l%psizes(d))
    end do
    if (draw(4) == 0) l%order = REDIST_ORDER_C
  end function random_layout

  !> One random N-d case of rank `ndims`.
  subroutine nd_case(ndims, index)
    integer, intent(in) :: ndims, index
    type(redist_nd_layout) :: la, lb
    type(redist_plan) :: plan
    integer :: gsizes_a(ndims), gsizes_b(ndims), window(ndims), window_b(ndims), starts_a(ndims)
    integer :: starts_b(ndims), perm(ndims), d, type, status, coords_a(ndims), coords_b(ndims)
    integer(int64) :: extents_a(ndims), extents_b(ndims), expected_global(ndims)
    logical :: in_a, in_b, use_perm, windowed, split
    real(real64), allocatable, target :: a(:), b(:), expected(:), result(:)
    character(len=160) :: what
    integer :: upper, pad, e
    integer(int64) :: inside(ndims)
    integer(int64), allocatable :: globals(:, :), offsets(:)
    type(redist_options) :: options

    upper = merge(3, 7, ndims == 7)
    do d = 1, ndims
      gsizes_a(d) = 1 + draw(upper)
    end do
    use_perm = draw(3) == 0
    perm = [(d, d = 1, ndims)]
    if (use_perm) perm = shuffled(ndims)
    windowed = draw(2) == 0
    do d = 1, ndims
      window(d) = gsizes_a(d)
      starts_a(d) = 1
      if (windowed) then
        window(d) = 1 + draw(gsizes_a(d))
        starts_a(d) = 1 + draw(gsizes_a(d) - window(d) + 1)
      end if
    end do
    window_b = window(perm)
    do d = 1, ndims
      gsizes_b(d) = window_b(d)
      starts_b(d) = 1
      if (windowed) then
        gsizes_b(d) = window_b(d) + draw(3)
        starts_b(d) = 1 + draw(gsizes_b(d) - window_b(d) + 1)
      end if
    end do
    la = random_layout(gsizes_a)
    lb = random_layout(gsizes_b)
    if (windowed) then
      allocate (la%starts, source=int(starts_a, int64))
      allocate (la%subsizes, source=int(window, int64))
      allocate (lb%starts, source=int(starts_b, int64))
      allocate (lb%subsizes, source=int(window_b, int64))
    end if
    in_a = coordinates(la, coords_a)
    in_b = coordinates(lb, coords_b)
    extents_a = 0
    extents_b = 0
    if (in_a) extents_a = local_counts(la, coords_a)
    if (in_b) extents_b = local_counts(lb, coords_b)
    if (draw(2) == 0) then ! padding, drawn alike everywhere, where this rank holds elements
      do d = 1, ndims
        pad = draw(2)
        if (in_a) extents_a(d) = extents_a(d) + pad
        pad = draw(2)
        if (in_b) extents_b(d) = extents_b(d) + pad
      end do
      allocate (la%local_extents, source=extents_a)
      allocate (lb%local_extents, source=extents_b)
    end if
    type = draw(6)
    split = draw(2) == 0

    allocate (a(max(1_int64, product(extents_a))), b(max(1_int64, product(extents_b))))
    a = padding
    b = untouched
    if (in_a) then
      call held_elements(la, coords_a, extents_a, globals, offsets)
      do e = 1, size(offsets)
        a(offsets(e) + 1) = real(linear(globals(:, e), la%gsizes), real64)
      end do
    end if
    allocate (expected(size(b)))
    expected = b
    if (in_b) then
      ! B's element `global` holds A's element in A's dimension perm(d) at A's window start
      ! plus its offset in B's window along d.
      call held_elements(lb, coords_b, extents_b, globals, offsets)
      do e = 1, size(offsets)
        inside = globals(:, e) - (starts_b - 1)
        if (any(inside < 0 .or. inside >= window_b)) cycle
        expected_global(perm) = inside + (starts_a(perm) - 1)
        expected(offsets(e) + 1) = real(linear(expected_global, la%gsizes), real64)
      end do
    end if

    ! Every schedule in turn, with a transfer limit or a memory cap of 16-64 elements (of 16
    ! bytes, the largest type) on some: the same result.
    options%schedule = mod(index, REDIST_SCHEDULE_MULTIPHASE + 1)
    if (options%schedule /= REDIST_SCHEDULE_ALL_AT_ONCE) then
      select case (draw(3))
      case (1)
        options%max_concurrent = 1 + draw(3)
      case (2)
        options%max_memory = 16 * (16 + draw(49))
      end select
    end if
    if (use_perm) then
      call redist_nd_plan_create(plan, MPI_COMM_WORLD, type, la, lb, status, perm=perm, &
                                 options=options)
    else
      call redist_nd_plan_create(plan, MPI_COMM_WORLD, type, la, lb, status, options=options)
    end if
    write (what, '(a, i0, a, i0, a, i0, a, i0, a, i0, a, i0)') 'N-d case ', index, ', rank ', &
      ndims, ', type ', type, ', schedule ', options%schedule, ', k ', options%max_concurrent, &
      ', max_memory ', options%max_memory
    call check(status == REDIST_SUCCESS, trim(what)//': create: '//redist_message())
    if (status /= REDIST_SUCCESS) return
    call run(result)
    call check(all(same(result, expected)), trim(what)//': wrong elements')
    ! A plan runs again with the same result.
    b = untouched
    call run(result)
    call check(all(same(result, expected)), trim(what)//': wrong elements the second time')
    call redist_plan_destroy(plan, status)
    call check(status == REDIST_SUCCESS, trim(what)//': destroy')

  contains

    !> Executes the plan on arrays of the case's type; `out` is B as real(real64).
    subroutine run(out)
      real(real64), allocatable, intent(out) :: out(:)
      real(real32), allocatable, target :: a4(:), b4(:)
      complex(real32), allocatable, target :: ac(:), bc(:)
      complex(real64), allocatable, target :: az(:), bz(:)
      integer(int32), allocatable, target :: ai(:), bi(:)
      integer(int64), allocatable, target :: al(:), bl(:)
      select case (type)
      case (REDIST_DOUBLE)
        call execute_ranked(a, b)
        out = b
      case (REDIST_FLOAT)
        a4 = real(a, real32)
        b4 = real(b, real32)
        call execute_flat(a4, b4)
        out = real(b4, real64)
      case (REDIST_COMPLEX_FLOAT)
        ac = cmplx(a, -a, real32)
        bc = cmplx(b, -b, real32)
        call execute_flat(ac, bc)
        out = real(bc, real64)
        call check(all(same(real(aimag(bc), real64), -real(bc, real64))), trim(what)//': imaginary parts')
      case (REDIST_COMPLEX_DOUBLE)
        az = cmplx(a, -a, real64)
        bz = cmplx(b, -b, real64)
        call execute_flat(az, bz)
        out = real(bz, real64)
        call check(all(same(aimag(bz), -real(bz))), trim(what)//': imaginary parts')
      case (REDIST_INT32)
        ai = int(a, int32)
        bi = int(b, int32)
        call execute_flat(ai, bi)
        out = real(bi, real64)
      case default
        al = int(a, int64)
        bl = int(b, int64)
        call execute_flat(al, bl)
        out = real(bl, real64)
      end select
    end subroutine run

    !> Blocking, or begin / some computation / end.
    subroutine execute_flat(x, y)
      class(*), intent(in), target :: x(:)
      class(*), intent(inout), target :: y(:)
      select type (x)
      type is (real(real32))
        select type (y)
        type is (real(real32))
          if (split) call redist_plan_execute_begin(plan, x, y, status)
          if (.not. split) call redist_plan_execute(plan, x, y, status)
        end select
      type is (complex(real32))
        select type (y)
        type is (complex(real32))
          if (split) call redist_plan_execute_begin(plan, x, y, status)
          if (.not. split) call redist_plan_execute(plan, x, y, status)
        end select
      type is (complex(real64))
        select type (y)
        type is (complex(real64))
          if (split) call redist_plan_execute_begin(plan, x, y, status)
          if (.not. split) call redist_plan_execute(plan, x, y, status)
        end select
      type is (integer(int32))
        select type (y)
        type is (integer(int32))
          if (split) call redist_plan_execute_begin(plan, x, y, status)
          if (.not. split) call redist_plan_execute(plan, x, y, status)
        end select
      type is (integer(int64))
        select type (y)
        type is (integer(int64))
          if (split) call redist_plan_execute_begin(plan, x, y, status)
          if (.not. split) call redist_plan_execute(plan, x, y, status)
        end select
      end select
      call finish()
    end subroutine execute_flat

    !> real(real64) arrays passed as rank-N arrays of the local extents (Fortran order).
    subroutine execute_ranked(x, y)
      real(real64), intent(in), target :: x(:)
      real(real64), intent(inout), target :: y(:)
      real(real64), pointer :: x1(:), y1(:), x2(:, :), y2(:, :), x3(:, :, :), y3(:, :, :)
      real(real64), pointer :: x4(:, :, :, :), y4(:, :, :, :)
      real(real64), pointer :: x7(:, :, :, :, :, :, :), y7(:, :, :, :, :, :, :)
      integer(int64) :: ea(max_dims), eb(max_dims)
      ea = 1
      eb = 1
      ea(1:ndims) = extents_a
      eb(1:ndims) = extents_b
      if (la%order == REDIST_ORDER_C) ea(1:ndims) = extents_a(ndims:1:-1)
      if (lb%order == REDIST_ORDER_C) eb(1:ndims) = extents_b(ndims:1:-1)
      if (.not. in_a .or. product(ea) == 0) ea = [size(x, kind=int64), 1_int64, 1_int64, &
                                                  1_int64, 1_int64, 1_int64, 1_int64]
      if (.not. in_b .or. product(eb) == 0) eb = [size(y, kind=int64), 1_int64, 1_int64, &
                                                  1_int64, 1_int64, 1_int64, 1_int64]
      select case (ndims)
      case (1)
        x1(1:ea(1)) => x
        y1(1:eb(1)) => y
        call go(x1, y1)
      case (2)
        x2(1:ea(1), 1:ea(2)) => x
        y2(1:eb(1), 1:eb(2)) => y
        call go(x2, y2)
      case (3)
        x3(1:ea(1), 1:ea(2), 1:ea(3)) => x
        y3(1:eb(1), 1:eb(2), 1:eb(3)) => y
        call go(x3, y3)
      case (4)
        x4(1:ea(1), 1:ea(2), 1:ea(3), 1:ea(4)) => x
        y4(1:eb(1), 1:eb(2), 1:eb(3), 1:eb(4)) => y
        call go(x4, y4)
      case default
        x7(1:ea(1), 1:ea(2), 1:ea(3), 1:ea(4), 1:ea(5), 1:ea(6), 1:ea(7)) => x
        y7(1:eb(1), 1:eb(2), 1:eb(3), 1:eb(4), 1:eb(5), 1:eb(6), 1:eb(7)) => y
        call go(x7, y7)
      end select
    end subroutine execute_ranked

    subroutine go(x, y)
      real(real64), intent(in), target, contiguous :: x(..)
      real(real64), intent(inout), target, contiguous :: y(..)
      if (split) then
        call redist_plan_execute_begin(plan, x, y, status)
      else
        call redist_plan_execute(plan, x, y, status)
      end if
      call finish()
    end subroutine go

    !> After a begin: computation on other data, then the end.
    subroutine finish()
      call check(status == REDIST_SUCCESS, trim(what)//': execute: '//redist_message())
      if (.not. split .or. status /= REDIST_SUCCESS) return
      work = work + busy_work(2000)
      call redist_plan_execute_end(plan, status)
      call check(status == REDIST_SUCCESS, trim(what)//': end: '//redist_message())
    end subroutine finish
  end subroutine nd_case

  !> 1 + the column-major linear index of 0-based `global` in extents `gsizes`.
  integer(int64) function linear(global, gsizes)
    integer(int64), intent(in) :: global(:), gsizes(:)
    integer :: d
    linear = 0
    do d = size(global), 1, -1
      linear = linear * gsizes(d) + global(d)
    end do
    linear = linear + 1
  end function linear

  ! ---------------------------------------------------------------------------------------
  ! Plans for B := alpha op(A) + beta B on 2-D block-cyclic layouts.

  subroutine op_case(index)
    integer, intent(in) :: index
    integer :: m, n, op, type, region, status, ra, rb
    type(redist_layout) :: la, lb
    type(redist_plan) :: plan
    integer(int64), allocatable :: rows_a(:), cols_a(:), rows_b(:), cols_b(:)
    integer(int64) :: i, j, wi, wj
    complex(real64) :: alpha, beta, candidates(6)
    complex(real64), allocatable :: a(:), b(:), expected(:), result(:)
    logical :: split, is_complex, in_window
    character(len=100) :: what
    candidates = [complex(real64) :: (0, 0), (1, 0), (-1, 0), (2, 0), (0.5_real64, 0), &
                  (1.5_real64, -2)]

    m = 1 + draw(9)
    n = 1 + draw(9)
    op = draw(3)
    type = draw(6)
    region = draw(3)
    split = draw(2) == 0
    is_complex = type == REDIST_COMPLEX_FLOAT .or. type == REDIST_COMPLEX_DOUBLE
    alpha = candidates(1 + draw(merge(6, 5, is_complex)))
    beta = candidates(1 + draw(merge(6, 5, is_complex)))
    if (type == REDIST_INT32 .or. type == REDIST_INT64) then
      alpha = 1
      beta = 0
    end if
    if (op == REDIST_OP_N) then
      la = random_2d(m + draw(3), n + draw(3))
    else
      la = random_2d(n + draw(3), m + draw(3))
    end if
    lb = random_2d(m + draw(3), n + draw(3))
    la%ia = 1 + draw(int(la%m) - merge(m, n, op == REDIST_OP_N) + 1)
    la%ja = 1 + draw(int(la%n) - merge(n, m, op == REDIST_OP_N) + 1)
    lb%ia = 1 + draw(int(lb%m) - m + 1)
    lb%ja = 1 + draw(int(lb%n) - n + 1)
    call local_maps(la, rows_a, cols_a)
    call local_maps(lb, rows_b, cols_b)
    ra = int(la%lld)
    rb = int(lb%lld)
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
    expected = b
    do j = 1, size(cols_b)
      do i = 1, size(rows_b)
        wi = rows_b(i) - (lb%ia - 1)
        wj = cols_b(j) - (lb%ja - 1)
        in_window = wi >= 0 .and. wi < m .and. wj >= 0 .and. wj < n
        if (region == REDIST_REGION_UPPER) in_window = in_window .and. wi <= wj
        if (region == REDIST_REGION_LOWER) in_window = in_window .and. wi >= wj
        if (in_window) expected(i + (j - 1) * rb) = alpha * op_a(wi, wj) + beta * &
                                                    expected(i + (j - 1) * rb)
      end do
    end do

    write (what, '(a, i0, a, i0, a, i0, a, i0, a, l1)') 'op case ', index, ': op ', op, &
      ', type ', type, ', region ', region, ', split ', split
    call redist_plan_create_op(plan, MPI_COMM_WORLD, op, m, n, type, la, lb, status, &
                               region=region)
    call check(status == REDIST_SUCCESS, trim(what)//': create: '//redist_message())
    if (status /= REDIST_SUCCESS) return
    call run(result)
    call check(all(equal(result, expected)), trim(what)//': wrong elements')
    call redist_plan_destroy(plan, status)

  contains

    !> op(A) at B's window position (wi, wj), A's values as the arrays hold them.
    complex(real64) function op_a(wi, wj)
      integer(int64), intent(in) :: wi, wj
      if (op == REDIST_OP_N) then
        op_a = a_value(la%ia - 1 + wi, la%ja - 1 + wj)
      else
        op_a = a_value(la%ia - 1 + wj, la%ja - 1 + wi)
        if (op == REDIST_OP_C) op_a = conjg(op_a)
      end if
      if (.not. is_complex) op_a = real(op_a)
    end function op_a

    subroutine run(out)
      complex(real64), allocatable, intent(out) :: out(:)
      real(real32), allocatable, target :: a4(:), b4(:)
      real(real64), allocatable, target :: a8(:), b8(:)
      complex(real32), allocatable, target :: ac(:), bc(:)
      complex(real64), allocatable, target :: az(:), bz(:)
      integer(int32), allocatable, target :: ai(:), bi(:)
      integer(int64), allocatable, target :: al(:), bl(:)
      select case (type)
      case (REDIST_FLOAT)
        a4 = real(a, real32)
        b4 = real(b, real32)
        if (split) then
          call redist_plan_execute_op_begin(plan, real(alpha, real32), a4, real(beta, real32), &
                                            b4, status)
          call finish()
        else
          call redist_plan_execute_op(plan, real(alpha, real32), a4, real(beta, real32), b4, &
                                      status)
        end if
        out = b4
      case (REDIST_DOUBLE)
        a8 = real(a, real64)
        b8 = real(b, real64)
        if (split) then
          call redist_plan_execute_op_begin(plan, real(alpha, real64), a8, real(beta, real64), &
                                            b8, status)
          call finish()
        else
          call redist_plan_execute_op(plan, real(alpha, real64), a8, real(beta, real64), b8, &
                                      status)
        end if
        out = b8
      case (REDIST_COMPLEX_FLOAT)
        ac = cmplx(a, kind=real32)
        bc = cmplx(b, kind=real32)
        if (split) then
          call redist_plan_execute_op_begin(plan, cmplx(alpha, kind=real32), ac, &
                                            cmplx(beta, kind=real32), bc, status)
          call finish()
        else
          call redist_plan_execute_op(plan, cmplx(alpha, kind=real32), ac, &
                                      cmplx(beta, kind=real32), bc, status)
        end if
        out = bc
      case (REDIST_COMPLEX_DOUBLE)
        az = a
        bz = b
        if (split) then
          call redist_plan_execute_op_begin(plan, alpha, az, beta, bz, status)
          call finish()
        else
          call redist_plan_execute_op(plan, alpha, az, beta, bz, status)
        end if
        out = bz
      case (REDIST_INT32)
        ai = int(real(a), int32)
        bi = int(real(b), int32)
        if (split) then
          call redist_plan_execute_op_begin(plan, 1_int32, ai, 0_int32, bi, status)
          call finish()
        else
          call redist_plan_execute_op(plan, 1_int32, ai, 0_int32, bi, status)
        end if
        out = bi
      case default
        al = int(real(a), int64)
        bl = int(real(b), int64)
        if (split) then
          call redist_plan_execute_op_begin(plan, 1_int64, al, 0_int64, bl, status)
          call finish()
        else
          call redist_plan_execute_op(plan, 1_int64, al, 0_int64, bl, status)
        end if
        out = bl
      end select
      call check(status == REDIST_SUCCESS, trim(what)//': execute: '//redist_message())
    end subroutine run

    subroutine finish()
      call check(status == REDIST_SUCCESS, trim(what)//': begin: '//redist_message())
      if (status /= REDIST_SUCCESS) return
      work = work + busy_work(2000)
      call redist_plan_execute_end(plan, status)
    end subroutine finish
  end subroutine op_case

  ! ---------------------------------------------------------------------------------------
  ! Errors: on every rank, B unchanged.

  subroutine error_cases()
    type(redist_nd_layout) :: good, bad
    type(redist_plan) :: plan
    type(redist_layout) :: la
    real(real64), allocatable, target :: a(:), b(:)
    real(real32), allocatable :: a4(:), b4(:)
    real(real64) :: b0(2 * 3 * 4)
    integer :: status, n1, i

    ! A 3-D array (BLOCK, *, CYCLIC(2)) on a P x 1 x 1 grid, to (*, *, BLOCK) on 1 x 1 x P.
    n1 = 2 * nprocs
    good = redist_nd_layout(gsizes=[n1, 3, 4], dist=[redist_block(), redist_star(), &
                            redist_cyclic(2)], psizes=[nprocs, 1, 1])
    allocate (a(2 * 3 * 4), b(2 * 3 * 4))
    a = 1
    b = [(real(i, real64), i = 1, size(b))]
    b0 = b

    ! A bad distribution on the last rank only: a negative CYCLIC block there.
    bad = good
    if (me == nprocs - 1) bad%dist(3) = redist_cyclic(-3)
    call redist_nd_plan_create(plan, MPI_COMM_WORLD, REDIST_DOUBLE, good, bad, status)
    call expect_error('CYCLIC(-3) on the last rank', 'dargs[2]')
    call redist_plan_execute(plan, a, b, status)
    call check(status /= REDIST_SUCCESS .and. all(same(b, b0)), 'executing the absent plan')

    ! GEN_BLOCK extents that do not sum to the extent, on rank 0 only.
    bad = good
    if (me == 0) then
      bad%dist(1) = redist_gen_block([(1, i = 1, nprocs)])
    else
      bad%dist(1) = redist_gen_block([2 * nprocs, (0, i = 2, nprocs)])
    end if
    call redist_nd_plan_create(plan, MPI_COMM_WORLD, REDIST_DOUBLE, bad, good, status)
    call expect_error('GEN_BLOCK extents not summing to the extent on rank 0', 'gen_blocks[0]')

    ! A misspelt distribution on rank 0 only.
    bad = good
    if (me == 0) bad%dist(2) = redist_distribution('CYCLIC(x)')
    call redist_nd_plan_create(plan, MPI_COMM_WORLD, REDIST_DOUBLE, bad, good, status)
    call expect_error('CYCLIC(x) on rank 0', 'a%dist(2): "CYCLIC(x)"')

    ! Sizes only the Fortran layer sees: dist shorter than gsizes on the last rank.
    bad = good
    if (me == nprocs - 1) bad%dist = bad%dist(1:2)
    call redist_nd_plan_create(plan, MPI_COMM_WORLD, REDIST_DOUBLE, good, bad, status)
    call expect_error('dist too short on the last rank', 'b%dist: 2 entries')

    ! A perm that is not a permutation.
    call redist_nd_plan_create(plan, MPI_COMM_WORLD, REDIST_DOUBLE, good, good, status, &
                               perm=[1, 1, 2])
    call expect_error('perm [1, 1, 2]', 'perm')

    ! Wrong element type at an op execution: real(real32) arrays on a real(real64) plan.
    la = redist_layout(m=4, n=nprocs, mb=2, nb=1, ranks=reshape([(i, i = 0, nprocs - 1)], &
                       [1, nprocs]), lld=4)
    call redist_plan_create_op(plan, MPI_COMM_WORLD, REDIST_OP_N, 4, nprocs, REDIST_DOUBLE, la, &
                               la, status)
    call check(status == REDIST_SUCCESS, 'op plan: '//redist_message())
    allocate (a4(4), b4(4))
    a4 = 1
    b4 = 5
    if (me == 0) then
      call redist_plan_execute_op(plan, 2.0_real32, a4, 1.0_real32, b4, status)
      call check(all(same(real(b4, real64), 5.0_real64)), 'real(real32) arrays: B changed')
    else
      b(1:4) = 5
      call redist_plan_execute_op(plan, 2.0_real64, a(1:4), 1.0_real64, b(1:4), status)
      call check(all(same(b(1:4), 5.0_real64)), 'real(real32) arrays elsewhere: B changed')
    end if
    call expect_error('real(real32) arrays on rank 0 of a real(real64) plan', 'real(real32)')

    ! A non-contiguous section at a begin, on every rank.
    b = b0
    call redist_plan_execute_op_begin(plan, 2.0_real64, a(1:8:2), 1.0_real64, b(1:8:2), status)
    call expect_error('strided sections at a begin', 'not contiguous')
    call check(all(same(b, b0)), 'strided sections at a begin: B changed')
    ! The plan still works: B := 2 A + B.
    b(1:4) = 5
    call redist_plan_execute_op_begin(plan, 2.0_real64, a(1:4), 1.0_real64, b(1:4), status)
    call check(status == REDIST_SUCCESS, 'after the errors: begin: '//redist_message())
    call redist_plan_execute_end(plan, status)
    call check(status == REDIST_SUCCESS .and. all(same(b(1:4), 7.0_real64)), 'after the errors: B := 2A + B')
    call redist_plan_destroy(plan, status)

    ! Wrong element type at a begin (a copy: no alpha) on a process that owns nothing of the
    ! plan: the begin fails on every process (nothing is in flight anywhere, so a barrier
    ! between the begin and where the end would be cannot deadlock), B unchanged.
    if (nprocs >= 2) then
      la = redist_layout(m=4, n=nprocs - 1, mb=2, nb=1, &
                         ranks=reshape([(i, i = 0, nprocs - 2)], [1, nprocs - 1]), lld=4)
      call redist_plan_create(plan, MPI_COMM_WORLD, 4, nprocs - 1, REDIST_DOUBLE, la, la, status)
      call check(status == REDIST_SUCCESS, 'plan on P-1 ranks: '//redist_message())
      b(1:4) = 5
      if (me == nprocs - 1) then
        call redist_plan_execute_begin(plan, a4(1:0), b4(1:0), status)
      else
        call redist_plan_execute_begin(plan, a(1:4), b(1:4), status)
      end if
      call expect_error('real(real32) arrays at a begin on the rank that owns nothing', &
                        'real(real32)')
      call MPI_Barrier(MPI_COMM_WORLD)
      call check(all(same(b(1:4), 5.0_real64)), 'wrong type where nothing is owned: B changed')
      ! The plan still works.
      call redist_plan_execute(plan, a(1:4), b(1:4), status)
      call check(status == REDIST_SUCCESS, 'after a refused begin: '//redist_message())
      if (me < nprocs - 1) call check(all(same(b(1:4), 1.0_real64)), 'after a refused begin: B')
      call redist_plan_destroy(plan, status)
    end if

  contains

    !> An error on every rank; where this rank's own (ARGUMENT), the message names `name`.
    subroutine expect_error(what, name)
      character(len=*), intent(in) :: what, name
      integer :: statuses(nprocs)
      call check(status /= REDIST_SUCCESS, what//': no error')
      call MPI_Allgather(status, 1, MPI_INTEGER, statuses, 1, MPI_INTEGER, MPI_COMM_WORLD)
      call check(all(statuses /= REDIST_SUCCESS), what//': not an error on every rank')
      call check(count(statuses == REDIST_ERR_ARGUMENT) >= 1, what//': no rank says ARGUMENT')
      if (status == REDIST_ERR_ARGUMENT) &
        call check(index(redist_message(), name) > 0, what//': message "'//redist_message()// &
                   '" does not name '//name)
    end subroutine expect_error
  end subroutine error_cases

end module nd_cases

program redist_fortran_nd
  use mpi_f08
  use test_run, only: start_run, report_run
  use nd_cases
  implicit none
  integer :: cases, k
  character(len=64) :: detail

  cases = 60
  call start_run(cases)
  seed = 20261124
  work = 0
  do k = 1, cases
    call nd_case(1 + mod(k - 1, 4), k)
  end do
  do k = 1, 3
    call nd_case(7, k)
  end do
  do k = 1, cases
    call op_case(k)
  end do
  call error_cases()

  write (detail, '(a, es9.2, a)') ' (work between begins and ends ', work, ')'
  k = report_run('redist_fortran_nd', trim(detail))
  call MPI_Finalize()
  if (k /= 0) error stop 1
end program redist_fortran_nd
