!> Random redistribution cases, each run three ways and compared element for element with
!> ScaLAPACK's own routine on the same input:
!>   1. the explicit interfaces of module redist_scalapack (`call pdgemr2d(...)` -> redist);
!>   2. a plan of module redist made from the same descriptors and BLACS context;
!>   3. a plan of module redist made from explicit layouts, on MPI_COMM_WORLD as an integer
!>      handle or as a type(MPI_Comm);
!> the plan path cycling through 2, 3 with an integer handle and 3 with a type(MPI_Comm), half
!> of the plans with options (schedule, concurrency limit, memory cap).
!> Results are compared bit for bit. Element values are small integers, exact in every type. A(gi, gj) holds 1 + gi + gj*M_ (0-based gi, gj), LLD padding
!> and guard elements of A hold -(100000 + position), every element of B's buffer starts as
!> -(1 + position).
module compare_cases
  use, intrinsic :: iso_fortran_env, only: int8, int32, int64, real32, real64, output_unit
  use mpi_f08, only: MPI_COMM_WORLD
  use redist
  use redist_scalapack, only: psgemr2d, pdgemr2d, pcgemr2d, pzgemr2d, pigemr2d, pstrmr2d, &
                              pdtrmr2d, pctrmr2d, pztrmr2d, pitrmr2d, &
                              redist_scalapack_last_status
  use scalapack_reference
  implicit none
  private
  public :: rng_t, case_t, draw_case, free_case, run_case, same_bits, command_options

  interface module_gemr2d
    procedure psgemr2d, pdgemr2d, pcgemr2d, pzgemr2d, pigemr2d
  end interface module_gemr2d
  interface module_trmr2d
    procedure pstrmr2d, pdtrmr2d, pctrmr2d, pztrmr2d, pitrmr2d
  end interface module_trmr2d
  !> Bitwise equality of two arrays of one type.
  interface same_bits
    module procedure same_bits_real32, same_bits_real64, same_bits_complex32, &
                     same_bits_complex64, same_bits_int32
  end interface same_bits
  interface from_codes
    module procedure from_codes_real32, from_codes_real64, from_codes_complex32, &
                     from_codes_complex64, from_codes_int32
  end interface from_codes

  integer, parameter :: guard_elements = 7
  character(len=*), parameter :: type_letters = 'sdczi'

  !> xorshift64: every rank draws the same stream from the same seed.
  type :: rng_t
    integer(int64) :: state = 88172645463325252_int64
  contains
    procedure :: uniform
    procedure :: coin
  end type rng_t

  type :: matrix_t
    integer :: nprow = 1, npcol = 1
    integer, allocatable :: usermap(:, :) !< world rank at grid position (pr + 1, pc + 1)
    integer :: ctxt = -1                  !< this process's BLACS context, -1 outside the grid
    integer :: myrow = -1, mycol = -1
    integer :: mg = 0, ng = 0, mb = 1, nb = 1, rsrc = 0, csrc = 0, i = 1, j = 1
    integer :: lld = 1, locr = 0, locc = 0
    integer :: desc(9) = 0
  end type matrix_t

  type :: case_t
    integer :: index = 0
    integer :: element = 1 !< position in type_letters
    integer :: region = REDIST_REGION_FULL
    character :: uplo = 'U', diag = 'N'
    integer :: m = 0, n = 0
    integer :: ictxt = -1
    logical :: garbage_descriptors = .false.
    logical :: with_options = .false.
    type(redist_options) :: options
    type(matrix_t) :: a, b
    integer(int64), allocatable :: a_codes(:), b_codes(:)
  end type case_t

contains

  integer function uniform(rng, lo, hi)
    class(rng_t), intent(inout) :: rng
    integer, intent(in) :: lo, hi
    rng%state = ieor(rng%state, ishft(rng%state, 13))
    rng%state = ieor(rng%state, ishft(rng%state, -7))
    rng%state = ieor(rng%state, ishft(rng%state, 17))
    uniform = lo + int(modulo(rng%state, int(hi - lo + 1, int64)))
  end function uniform

  logical function coin(rng, percent)
    class(rng_t), intent(inout) :: rng
    integer, intent(in) :: percent
    coin = rng%uniform(1, 100) <= percent
  end function coin

  !> --cases=N and --seed=S from the command line (left as they are when absent).
  subroutine command_options(cases, seed)
    integer, intent(inout) :: cases
    integer(int64), intent(inout) :: seed
    character(len=64) :: argument
    integer :: k
    do k = 1, command_argument_count()
      call get_command_argument(k, argument)
      if (argument(1:8) == '--cases=') read (argument(9:), *) cases
      if (argument(1:7) == '--seed=') read (argument(8:), *) seed
    end do
  end subroutine command_options

  !> A grid of 1..nprocs world processes in random order and shape, made with BLACS_GRIDMAP
  !> (collective over every world process).
  subroutine draw_grid(rng, nprocs, me, mat)
    type(rng_t), intent(inout) :: rng
    integer, intent(in) :: nprocs, me
    type(matrix_t), intent(inout) :: mat
    integer :: order(nprocs), count, k, swap, ctxt, nprow, npcol

    order = [(k - 1, k = 1, nprocs)]
    do k = nprocs, 2, -1
      swap = rng%uniform(1, k)
      order([k, swap]) = order([swap, k])
    end do
    count = rng%uniform(1, nprocs)
    do
      mat%nprow = rng%uniform(1, count)
      if (mod(count, mat%nprow) == 0) exit
    end do
    mat%npcol = count / mat%nprow
    mat%usermap = reshape(order(1:count), [mat%nprow, mat%npcol])
    call blacs_get(-1, 0, ctxt)
    call blacs_gridmap(ctxt, mat%usermap, mat%nprow, mat%nprow, mat%npcol)
    mat%ctxt = -1
    if (any(mat%usermap == me)) then
      mat%ctxt = ctxt
      call blacs_gridinfo(ctxt, nprow, npcol, mat%myrow, mat%mycol)
    end if
  end subroutine draw_grid

  !> Sizes, block sizes, source processes, window offset and LLD padding of one matrix holding
  !> an m x n window; this process's descriptor (garbage but CTXT_ = -1 outside the grid when
  !> `garbage`).
  subroutine draw_matrix(rng, m, n, garbage, mat)
    type(rng_t), intent(inout) :: rng
    integer, intent(in) :: m, n
    logical, intent(in) :: garbage
    type(matrix_t), intent(inout) :: mat
    integer :: lld_extra, k, junk(9)

    mat%mg = m + rng%uniform(0, 6)
    mat%ng = n + rng%uniform(0, 6)
    mat%mb = block_size(rng, mat%mg)
    mat%nb = block_size(rng, mat%ng)
    mat%rsrc = rng%uniform(0, mat%nprow - 1)
    mat%csrc = rng%uniform(0, mat%npcol - 1)
    mat%i = rng%uniform(1, mat%mg - m + 1)
    mat%j = rng%uniform(1, mat%ng - n + 1)
    lld_extra = rng%uniform(0, 2)
    junk = [(rng%uniform(-3, 40), k = 1, 9)]
    if (mat%ctxt >= 0) then
      mat%locr = numroc(mat%mg, mat%mb, mat%myrow, mat%rsrc, mat%nprow)
      mat%locc = numroc(mat%ng, mat%nb, mat%mycol, mat%csrc, mat%npcol)
      mat%lld = max(1, mat%locr) + lld_extra
      mat%desc = [1, mat%ctxt, mat%mg, mat%ng, mat%mb, mat%nb, mat%rsrc, mat%csrc, mat%lld]
    else if (garbage) then
      mat%desc = junk
      mat%desc(2) = -1
    else
      mat%desc = [1, -1, mat%mg, mat%ng, mat%mb, mat%nb, mat%rsrc, mat%csrc, 1]
    end if
  end subroutine draw_matrix

  integer function block_size(rng, extent)
    type(rng_t), intent(inout) :: rng
    integer, intent(in) :: extent
    if (rng%coin(40)) then
      block_size = rng%uniform(1, 4)
    else
      block_size = rng%uniform(1, extent + 3)
    end if
  end function block_size

  integer function window_extent(rng)
    type(rng_t), intent(inout) :: rng
    if (rng%coin(8)) then
      window_extent = 0
    else
      window_extent = rng%uniform(1, 36)
    end if
  end function window_extent

  subroutine draw_case(rng, index, nprocs, me, ictxt, c)
    type(rng_t), intent(inout) :: rng
    integer, intent(in) :: index, nprocs, me, ictxt
    type(case_t), intent(out) :: c

    c%index = index
    c%ictxt = ictxt
    c%element = rng%uniform(1, len(type_letters))
    c%region = rng%uniform(0, 2)
    c%uplo = merge('U', 'L', c%region /= REDIST_REGION_LOWER)
    c%diag = merge('U', 'N', rng%coin(50))
    c%m = window_extent(rng)
    c%n = window_extent(rng)
    c%garbage_descriptors = rng%coin(50)
    call draw_options(rng, c)
    call draw_grid(rng, nprocs, me, c%a)
    call draw_grid(rng, nprocs, me, c%b)
    call draw_matrix(rng, c%m, c%n, c%garbage_descriptors, c%a)
    call draw_matrix(rng, c%m, c%n, c%garbage_descriptors, c%b)
    call fill_codes(c)
  end subroutine draw_case

  !> Plan options for half the cases: any schedule (auto .. multiphase) and, except for
  !> all-at-once, a concurrency limit and a memory cap that it must
  !> honour (at least one 16-byte element sent and one received).
  subroutine draw_options(rng, c)
    type(rng_t), intent(inout) :: rng
    type(case_t), intent(inout) :: c
    c%with_options = rng%coin(50)
    c%options%schedule = rng%uniform(REDIST_SCHEDULE_AUTO, REDIST_SCHEDULE_MULTIPHASE)
    if (c%options%schedule == REDIST_SCHEDULE_ALL_AT_ONCE) return
    c%options%max_concurrent = rng%uniform(0, 3)
    if (rng%coin(50)) c%options%max_memory = rng%uniform(32, 4096)
  end subroutine draw_options

  subroutine fill_codes(c)
    type(case_t), intent(inout) :: c
    integer :: li, lj, gi, gj, p

    allocate (c%a_codes(c%a%lld * c%a%locc + guard_elements))
    allocate (c%b_codes(c%b%lld * c%b%locc + guard_elements))
    c%a_codes = [(-(100000_int64 + p), p = 1, size(c%a_codes))]
    c%b_codes = [(-(1_int64 + p), p = 1, size(c%b_codes))]
    do lj = 1, c%a%locc
      gj = indxl2g(lj, c%a%nb, c%a%mycol, c%a%csrc, c%a%npcol)
      do li = 1, c%a%locr
        gi = indxl2g(li, c%a%mb, c%a%myrow, c%a%rsrc, c%a%nprow)
        c%a_codes(li + (lj - 1) * c%a%lld) = int(gi, int64) + int(gj - 1, int64) * c%a%mg
      end do
    end do
  end subroutine fill_codes

  subroutine free_case(c)
    type(case_t), intent(inout) :: c
    if (c%a%ctxt >= 0) call blacs_gridexit(c%a%ctxt)
    if (c%b%ctxt >= 0) call blacs_gridexit(c%b%ctxt)
  end subroutine free_case

  function describe(c) result(text)
    type(case_t), intent(in) :: c
    character(len=400) :: text
    write (text, '(a, i0, 4a, i0, a, i0, a, i0, a, 2a, 2(a, i0, a, i0, a, i0, a, i0, a, i0, &
      &a, i0, a, i0, a, i0, a, i0, a, i0))') &
      'case ', c%index, ' p', type_letters(c%element:c%element), merge('gemr2d', 'trmr2d', &
      c%region == REDIST_REGION_FULL), ' ', c%m, ' x ', c%n, ' region ', c%region, ' uplo/diag ', &
      c%uplo, c%diag, &
      ' | A grid ', c%a%nprow, 'x', c%a%npcol, ' M_ ', c%a%mg, ' N_ ', c%a%ng, ' MB ', c%a%mb, &
      ' NB ', c%a%nb, ' src ', c%a%rsrc, ',', c%a%csrc, ' IA ', c%a%i, ' JA ', c%a%j, &
      ' | B grid ', c%b%nprow, 'x', c%b%npcol, ' M_ ', c%b%mg, ' N_ ', c%b%ng, ' MB ', c%b%mb, &
      ' NB ', c%b%nb, ' src ', c%b%rsrc, ',', c%b%csrc, ' IB ', c%b%i, ' JB ', c%b%j
  end function describe

  subroutine check(c, what, ok, failures)
    type(case_t), intent(in) :: c
    character(len=*), intent(in) :: what
    logical, intent(in) :: ok
    integer, intent(inout) :: failures
    if (ok) return
    failures = failures + 1
    if (failures <= 5) then
      write (output_unit, '(4a)') 'FAIL: ', what, ': ', trim(describe(c))
      if (len(redist_message()) > 0) write (output_unit, '(2a)') '  message: ', redist_message()
    end if
  end subroutine check

  !> The same window through a plan from explicit layouts: world ranks from the grid maps.
  function layout_of(mat) result(layout)
    type(matrix_t), intent(in) :: mat
    type(redist_layout) :: layout
    layout%m = mat%mg
    layout%n = mat%ng
    layout%mb = mat%mb
    layout%nb = mat%nb
    layout%rsrc = mat%rsrc
    layout%csrc = mat%csrc
    allocate (layout%ranks, source=mat%usermap)
    layout%ia = mat%i
    layout%ja = mat%j
    layout%lld = mat%lld
  end function layout_of

  !> A plan for case c: from descriptors, or (every third case each) from layouts with an integer
  !> communicator or a type(MPI_Comm); with the case's options if it has some, and then the
  !> plan must use the schedule asked for (multiphase: or its one-phase fallback).
  subroutine create_plan(c, element_type, plan, status, failures)
    type(case_t), intent(in) :: c
    integer, intent(in) :: element_type
    type(redist_plan), intent(out) :: plan
    integer, intent(out) :: status
    integer, intent(inout) :: failures
    type(redist_options), allocatable :: options !< unallocated: the optional argument is absent
    type(redist_plan_info) :: info
    logical :: unit_diag
    integer :: info_status
    character(len=:), allocatable :: schedule_name

    unit_diag = c%region /= REDIST_REGION_FULL .and. c%diag == 'U'
    if (c%with_options) allocate (options, source=c%options)
    select case (mod(c%index, 3))
    case (0)
      call redist_plan_create(plan, c%m, c%n, element_type, c%a%desc, c%a%i, c%a%j, c%b%desc, &
                              c%b%i, c%b%j, c%ictxt, status, region=c%region, &
                              unit_diag=unit_diag, options=options)
    case (1)
      call redist_plan_create(plan, MPI_COMM_WORLD%MPI_VAL, c%m, c%n, element_type, &
                              layout_of(c%a), layout_of(c%b), status, region=c%region, &
                              unit_diag=unit_diag, options=options)
    case default
      call redist_plan_create(plan, MPI_COMM_WORLD, c%m, c%n, element_type, layout_of(c%a), &
                              layout_of(c%b), status, region=c%region, unit_diag=unit_diag, &
                              options=options)
    end select
    if (status /= REDIST_SUCCESS .or. .not. c%with_options) return
    call redist_plan_get_info(plan, info, info_status)
    call check(c, 'plan info', info_status == REDIST_SUCCESS, failures)
    schedule_name = redist_schedule_name(info%schedule)
    call check(c, 'schedule of a plan with options', info%schedule /= REDIST_SCHEDULE_AUTO .and. &
               len(schedule_name) > 0 .and. &
               (c%options%schedule == REDIST_SCHEDULE_AUTO .or. &
                c%options%schedule == REDIST_SCHEDULE_MULTIPHASE .or. &
                info%schedule == c%options%schedule), failures)
  end subroutine create_plan

  !> Runs case c; returns the number of comparisons made.
  integer function run_case(c, failures) result(comparisons)
    type(case_t), intent(in) :: c
    integer, intent(inout) :: failures
    select case (type_letters(c%element:c%element))
    case ('s')
      comparisons = run_real32(c, failures)
    case ('d')
      comparisons = run_real64(c, failures)
    case ('c')
      comparisons = run_complex32(c, failures)
    case ('z')
      comparisons = run_complex64(c, failures)
    case default
      comparisons = run_int32(c, failures)
    end select
  end function run_case

  integer function run_real32(c, failures) result(comparisons)
    type(case_t), intent(in) :: c
    integer, intent(inout) :: failures
    real(real32), allocatable :: a(:), b_reference(:), b_module(:), b_plan(:)
    integer, parameter :: element_type = REDIST_FLOAT
    include 'case_body.inc'
  end function run_real32

  !> Also runs the case as integer(8) through a REDIST_INT64 plan (ScaLAPACK has no PxGEMR2D
  !> for 8-byte integers; the reference is PDGEMR2D's result converted).
  integer function run_real64(c, failures) result(comparisons)
    type(case_t), intent(in) :: c
    integer, intent(inout) :: failures
    real(real64), allocatable :: a(:), b_reference(:), b_module(:), b_plan(:)
    integer(int64), allocatable :: a64(:), b64(:)
    integer, parameter :: element_type = REDIST_DOUBLE
    include 'case_body.inc'
    allocate (a64, source=c%a_codes)
    allocate (b64, source=c%b_codes)
    call create_plan(c, REDIST_INT64, plan, status, failures)
    call check(c, 'integer(8) plan creation', status == REDIST_SUCCESS, failures)
    call redist_plan_execute(plan, a64, b64, status)
    call check(c, 'integer(8) plan execution', status == REDIST_SUCCESS, failures)
    call check(c, 'integer(8) plan result', all(b64 == nint(b_reference, int64)), failures)
    call redist_plan_destroy(plan, status)
    comparisons = comparisons + 1
  end function run_real64

  integer function run_complex32(c, failures) result(comparisons)
    type(case_t), intent(in) :: c
    integer, intent(inout) :: failures
    complex(real32), allocatable :: a(:), b_reference(:), b_module(:), b_plan(:)
    integer, parameter :: element_type = REDIST_COMPLEX_FLOAT
    include 'case_body.inc'
  end function run_complex32

  integer function run_complex64(c, failures) result(comparisons)
    type(case_t), intent(in) :: c
    integer, intent(inout) :: failures
    complex(real64), allocatable :: a(:), b_reference(:), b_module(:), b_plan(:)
    integer, parameter :: element_type = REDIST_COMPLEX_DOUBLE
    include 'case_body.inc'
  end function run_complex64

  integer function run_int32(c, failures) result(comparisons)
    type(case_t), intent(in) :: c
    integer, intent(inout) :: failures
    integer(int32), allocatable :: a(:), b_reference(:), b_module(:), b_plan(:)
    integer, parameter :: element_type = REDIST_INT32
    include 'case_body.inc'
  end function run_int32

  subroutine from_codes_real32(codes, values)
    integer(int64), intent(in) :: codes(:)
    real(real32), allocatable, intent(out) :: values(:)
    values = real(real(codes, real64), real32)
  end subroutine from_codes_real32

  subroutine from_codes_real64(codes, values)
    integer(int64), intent(in) :: codes(:)
    real(real64), allocatable, intent(out) :: values(:)
    values = real(codes, real64)
  end subroutine from_codes_real64

  subroutine from_codes_complex32(codes, values)
    integer(int64), intent(in) :: codes(:)
    complex(real32), allocatable, intent(out) :: values(:)
    values = cmplx(real(codes, real64), -real(codes, real64) - 0.5_real64, real32)
  end subroutine from_codes_complex32

  subroutine from_codes_complex64(codes, values)
    integer(int64), intent(in) :: codes(:)
    complex(real64), allocatable, intent(out) :: values(:)
    values = cmplx(codes, -codes - 0.5_real64, real64)
  end subroutine from_codes_complex64

  subroutine from_codes_int32(codes, values)
    integer(int64), intent(in) :: codes(:)
    integer(int32), allocatable, intent(out) :: values(:)
    values = int(codes, int32)
  end subroutine from_codes_int32

  logical function same_bits_real32(x, y)
    real(real32), intent(in) :: x(:), y(:)
    same_bits_real32 = size(x) == size(y) .and. &
                       all(transfer(x, [0_int8]) == transfer(y, [0_int8]))
  end function same_bits_real32

  logical function same_bits_real64(x, y)
    real(real64), intent(in) :: x(:), y(:)
    same_bits_real64 = size(x) == size(y) .and. &
                       all(transfer(x, [0_int8]) == transfer(y, [0_int8]))
  end function same_bits_real64

  logical function same_bits_complex32(x, y)
    complex(real32), intent(in) :: x(:), y(:)
    same_bits_complex32 = size(x) == size(y) .and. &
                          all(transfer(x, [0_int8]) == transfer(y, [0_int8]))
  end function same_bits_complex32

  logical function same_bits_complex64(x, y)
    complex(real64), intent(in) :: x(:), y(:)
    same_bits_complex64 = size(x) == size(y) .and. &
                          all(transfer(x, [0_int8]) == transfer(y, [0_int8]))
  end function same_bits_complex64

  logical function same_bits_int32(x, y)
    integer(int32), intent(in) :: x(:), y(:)
    same_bits_int32 = size(x) == size(y) .and. all(x == y)
  end function same_bits_int32

end module compare_cases
