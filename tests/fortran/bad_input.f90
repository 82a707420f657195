!> Bad input through the Fortran modules `redist` (plans from layouts and from descriptors) and
!> `redist_scalapack`. Every case runs on every process and checks there: the status
!> (REDIST_ERR_ARGUMENT where the bad value was passed, REDIST_ERR_REMOTE elsewhere,
!> REDIST_ERR_MISMATCH where processes disagree), that the message names the argument (the
!> REMOTE message the process that passed it), and that B -- LLD padding included -- is bitwise
!> unchanged. After a failed create, executing the (absent) plan must fail too and touch nothing.
!> At the end, valid calls through both modules copy correctly (the library still works).
!> Usage: redist_fortran_bad_input; prints "..., 0 failures" and PASS when every check holds on
!> every process.
program redist_fortran_bad_input
  use, intrinsic :: iso_fortran_env, only: int8, int32, int64, real32, real64, output_unit
  use, intrinsic :: ieee_arithmetic, only: ieee_value, ieee_quiet_nan, ieee_negative_inf
  use mpi_f08
  use redist
  use redist_scalapack, only: psgemr2d, pdgemr2d, pztrmr2d, pitrmr2d, &
                              redist_scalapack_last_status
  use scalapack_reference, only: blacs_get, blacs_gridinit, blacs_gridexit, blacs_exit, numroc, &
                                 indxl2g
  implicit none

  !> The valid call every case spoils: a rows x 4P matrix of doubles, A in 2 x 2 blocks and
  !> B in 3 x 3 blocks, both on the 1 x P grid of ICTXT, whole matrix copied; local arrays
  !> with padding rows (LLD > local rows) that must stay untouched.
  integer, parameter :: rows = 6, pad_a = 3, pad_b = 2
  integer :: me, nprocs, last, ictxt, cols, failures, checks, total_failures
  integer :: lld_a, lld_b, local_cols_a, local_cols_b
  integer :: desca(9), descb(9)
  real(real64), allocatable :: a64(:), b64(:), b64_0(:)
  real(real32), allocatable :: a32(:), b32(:), b32_0(:)
  complex(real64), allocatable :: az(:), bz(:), bz_0(:)
  integer(int32), allocatable :: ai(:), bi(:), bi_0(:)
  real(real64) :: nan, minus_inf

  call MPI_Init()
  call MPI_Comm_rank(MPI_COMM_WORLD, me)
  call MPI_Comm_size(MPI_COMM_WORLD, nprocs)
  last = nprocs - 1
  call blacs_get(-1, 0, ictxt)
  call blacs_gridinit(ictxt, 'R', 1, nprocs)
  nan = ieee_value(0.0_real64, ieee_quiet_nan)
  minus_inf = ieee_value(0.0_real64, ieee_negative_inf)

  cols = 4 * nprocs
  lld_a = rows + pad_a
  lld_b = rows + pad_b
  local_cols_a = numroc(cols, 2, me, 0, nprocs)
  local_cols_b = numroc(cols, 3, me, 0, nprocs)
  desca = [1, ictxt, rows, cols, 2, 2, 0, 0, lld_a]
  descb = [1, ictxt, rows, cols, 3, 3, 0, 0, lld_b]
  allocate (a64(lld_a * local_cols_a), b64(lld_b * local_cols_b))
  allocate (a32(size(a64)), b32(size(b64)), az(size(a64)), bz(size(b64)))
  allocate (ai(size(a64)), bi(size(b64)))
  allocate (b64_0(size(b64)), b32_0(size(b64)), bz_0(size(b64)), bi_0(size(b64)))
  a64 = 1
  a32 = 1
  az = (1, 2)
  ai = 1

  failures = 0
  checks = 0
  call layout_cases()
  call option_cases()
  call descriptor_cases()
  call element_size_cases()
  call scalapack_cases()
  call still_works()

  call MPI_Allreduce(failures, total_failures, 1, MPI_INTEGER, MPI_SUM, MPI_COMM_WORLD)
  if (me == 0) then
    write (output_unit, '(a, i0, a, i0, a, i0, a)') 'redist_fortran_bad_input: np ', nprocs, &
      ', ', checks, ' checks per process, ', total_failures, ' failures'
    if (total_failures == 0) write (output_unit, '(a)') 'PASS'
  end if
  call blacs_gridexit(ictxt)
  call blacs_exit(1)
  call MPI_Finalize()
  if (total_failures /= 0) error stop 1

contains

  function itoa(value) result(text)
    integer, intent(in) :: value
    character(len=:), allocatable :: text
    character(len=16) :: buffer
    write (buffer, '(i0)') value
    text = trim(buffer)
  end function itoa

  subroutine fail(label, what)
    character(len=*), intent(in) :: label, what
    failures = failures + 1
    write (output_unit, '(a, i0, 4a)') 'FAIL: rank ', me, ': ', label, ': ', what
  end subroutine fail

  !> The status and message of one failed call on this process: `bad` passed the bad value
  !> (every process when bad < 0); `needle` must appear in its message.
  subroutine check_status(label, status, bad, needle, mismatch)
    character(len=*), intent(in) :: label, needle
    integer, intent(in) :: status, bad
    logical, intent(in), optional :: mismatch
    character(len=:), allocatable :: message, remote
    integer :: expected

    checks = checks + 1
    message = redist_message()
    expected = REDIST_ERR_ARGUMENT
    if (present(mismatch)) then
      if (mismatch) expected = REDIST_ERR_MISMATCH
    end if
    if (expected == REDIST_ERR_ARGUMENT .and. bad >= 0 .and. me /= bad) then
      expected = REDIST_ERR_REMOTE
      remote = 'invalid on rank '//itoa(bad)
      if (status /= expected .or. index(message, remote) == 0) &
        call fail(label, 'expected REDIST_ERR_REMOTE naming rank '//itoa(bad)//', got '// &
                  redist_status_name(status)//': '//message)
      return
    end if
    if (status /= expected .or. index(message, needle) == 0) &
      call fail(label, 'expected '//redist_status_name(expected)//' naming "'//needle// &
                '", got '//redist_status_name(status)//': '//message)
  end subroutine check_status

  !> The status of the last redist_scalapack call (its message goes to stderr).
  subroutine check_scalapack(label, bad)
    character(len=*), intent(in) :: label
    integer, intent(in) :: bad
    integer :: expected, status

    checks = checks + 1
    status = redist_scalapack_last_status()
    expected = REDIST_ERR_ARGUMENT
    if (bad >= 0 .and. me /= bad) expected = REDIST_ERR_REMOTE
    if (status /= expected) &
      call fail(label, 'expected '//redist_status_name(expected)//', got '// &
                redist_status_name(status))
  end subroutine check_scalapack

  !> B's sentinel: a different value in every element and on every process; kept in the *_0
  !> copies for the bitwise comparison.
  subroutine reset_b()
    integer :: k
    do k = 1, size(b64)
      b64_0(k) = -1000.0_real64 - k - 100.0_real64 * me
    end do
    b32_0 = real(b64_0, real32)
    bz_0 = cmplx(b64_0, -b64_0, real64)
    bi_0 = int(b64_0, int32)
    b64 = b64_0
    b32 = b32_0
    bz = bz_0
    bi = bi_0
  end subroutine reset_b

  !> Whether every B still holds its sentinel, bit for bit.
  logical function b_untouched()
    b_untouched = all(transfer(b64, [0_int8]) == transfer(b64_0, [0_int8])) .and. &
                  all(transfer(b32, [0_int8]) == transfer(b32_0, [0_int8])) .and. &
                  all(transfer(bz, [0_int8]) == transfer(bz_0, [0_int8])) .and. &
                  all(bi == bi_0)
  end function b_untouched

  subroutine check_b(label)
    character(len=*), intent(in) :: label
    checks = checks + 1
    if (.not. b_untouched()) call fail(label, 'B was modified')
  end subroutine check_b

  !> The layouts of the valid call.
  subroutine valid_layouts(a, b)
    type(redist_layout), intent(out) :: a, b
    integer :: k
    a = redist_layout(m=rows, n=cols, mb=2, nb=2, ranks=reshape([(k, k = 0, nprocs - 1)], &
                                                                 [1, nprocs]), lld=lld_a)
    b = redist_layout(m=rows, n=cols, mb=3, nb=3, ranks=a%ranks, lld=lld_b)
  end subroutine valid_layouts

  !> Create from layouts (an integer communicator on odd cases, type(MPI_Comm) on even ones),
  !> check the status, then execute whatever came back: it must fail and leave B alone.
  subroutine layout_case(label, a, b, bad, needle, type, region, options, mismatch)
    character(len=*), intent(in) :: label, needle
    type(redist_layout), intent(in) :: a, b
    integer, intent(in) :: bad
    integer, intent(in), optional :: type, region
    type(redist_options), intent(in), optional :: options
    logical, intent(in), optional :: mismatch
    type(redist_plan) :: plan
    integer :: status, element_type

    element_type = REDIST_DOUBLE
    if (present(type)) element_type = type
    call reset_b()
    if (mod(checks, 2) == 0) then
      call redist_plan_create(plan, MPI_COMM_WORLD, rows, cols, element_type, a, b, status, &
                              region=region, options=options)
    else
      call redist_plan_create(plan, MPI_COMM_WORLD%MPI_VAL, rows, cols, element_type, a, b, &
                              status, region=region, options=options)
    end if
    call check_status(label, status, bad, needle, mismatch)
    call redist_plan_execute(plan, a64, b64, status)
    call check_status(label//', then executing the plan', status, -1, 'NULL plan')
    call check_b(label)
  end subroutine layout_case

  subroutine layout_cases()
    type(redist_layout) :: a, b

    call valid_layouts(a, b)
    a%mb = 0
    call layout_case('a%mb = 0 everywhere', a, b, -1, 'a->mb')
    call valid_layouts(a, b)
    if (me == last) b%nb = -1
    call layout_case('b%nb = -1 on the last rank', a, b, last, 'b->nb')
    call valid_layouts(a, b)
    a%rsrc = 1
    call layout_case('a%rsrc = 1 on a one-row grid everywhere', a, b, -1, 'a->rsrc')
    call valid_layouts(a, b)
    if (me == 0) b%lld = rows - 1
    call layout_case('b%lld below the local rows on rank 0', a, b, 0, 'b->lld')
    call valid_layouts(a, b)
    b%ja = cols
    call layout_case('b%ja: window outside the matrix everywhere', a, b, -1, 'b->j')
    call valid_layouts(a, b)
    if (me == last) a%ranks(1, 1) = nprocs
    call layout_case('a%ranks(1,1) = P on the last rank', a, b, last, 'a->ranks[0]')
    call valid_layouts(a, b)
    call layout_case('type = 42 everywhere', a, b, -1, 'argument type = 42', type=42)
    call layout_case('region = 7 everywhere', a, b, -1, 'argument region = 7', region=7)
  end subroutine layout_cases

  subroutine option_cases()
    type(redist_layout) :: a, b
    type(redist_options) :: bad_options, options

    call valid_layouts(a, b)
    bad_options = redist_options(schedule=99)
    call layout_case('options%schedule = 99 everywhere', a, b, -1, 'options->schedule = 99', &
                     options=bad_options)
    options = redist_options()
    if (me == last) options%schedule = -1
    call layout_case('options%schedule = -1 on the last rank', a, b, last, &
                     'options->schedule = -1', options=options)
    bad_options = redist_options(max_concurrent=-1)
    call layout_case('options%max_concurrent = -1 everywhere', a, b, -1, &
                     'options->max_concurrent = -1', options=bad_options)
    options = redist_options()
    if (me == last) options%max_memory = -5
    call layout_case('options%max_memory = -5 on the last rank', a, b, last, &
                     'options->max_memory = -5', options=options)
    bad_options = redist_options(alpha=nan)
    call layout_case('options%alpha = NaN everywhere', a, b, -1, 'options->alpha = nan', &
                     options=bad_options)
    bad_options = redist_options(beta=minus_inf)
    call layout_case('options%beta = -inf everywhere', a, b, -1, 'options->beta = -inf', &
                     options=bad_options)
    options = redist_options()
    if (me == last) options%beta = -1
    call layout_case('options%beta = -1 on the last rank', a, b, last, 'options->beta = -1', &
                     options=options)
    ! Above 2^53 and one apart: one value as doubles, two as the 64-bit integers agreed on.
    if (nprocs > 1) then
      options = redist_options(max_memory=2_int64**53)
      if (me == last) options%max_memory = 2_int64**53 + 1
      call layout_case('options%max_memory = 2^53 + 1 on the last rank, 2^53 elsewhere', a, b, &
                       -1, 'processes passed different', options=options, mismatch=.true.)
    end if
    bad_options = redist_options(schedule=REDIST_SCHEDULE_CATERPILLAR, max_memory=15)
    call layout_case('options%max_memory = 15 bytes (below one double each way) everywhere', a, &
                     b, -1, 'max_memory of 15 bytes', options=bad_options)
  end subroutine option_cases

  !> Create from descriptors, check, then execute whatever came back.
  subroutine descriptor_case(label, da, db, context, bad, needle, mismatch, options)
    character(len=*), intent(in) :: label, needle
    integer, intent(in) :: da(9), db(9), context, bad
    logical, intent(in) :: mismatch
    type(redist_options), intent(in), optional :: options
    type(redist_plan) :: plan
    integer :: status

    call reset_b()
    call redist_plan_create(plan, rows, cols, REDIST_DOUBLE, da, 1, 1, db, 1, 1, context, status, &
                            options=options)
    call check_status(label, status, bad, needle, mismatch)
    call redist_plan_execute(plan, a64, b64, status)
    call check_status(label//', then executing the plan', status, -1, 'NULL plan')
    call check_b(label)
  end subroutine descriptor_case

  subroutine descriptor_cases()
    integer :: da(9), db(9)
    type(redist_options) :: bad_options

    da = desca
    da(1) = 3
    call descriptor_case('DESCA(DTYPE_) = 3 everywhere', da, descb, ictxt, -1, &
                         'DESCA(DTYPE_) = 3', .false.)
    db = descb
    if (me == last) db(1) = 7
    call descriptor_case('DESCB(DTYPE_) = 7 on the last rank', desca, db, ictxt, last, &
                         'DESCB(DTYPE_) = 7', .false.)
    db = descb
    db(5) = 0
    call descriptor_case('DESCB(MB_) = 0 everywhere', desca, db, ictxt, -1, 'b->mb', .false.)
    if (nprocs > 1) then
      db = descb
      if (me == last) db(6) = 4
      call descriptor_case('DESCB(NB_) = 4 on the last rank, 3 elsewhere', desca, db, ictxt, &
                           -1, 'disagree on DESCB(NB_)', .true.)
    end if
    da = desca
    da(9) = 1
    call descriptor_case('DESCA(LLD_) = 1 everywhere', da, descb, ictxt, -1, 'a->lld', .false.)
    call descriptor_case('ICTXT = -5 everywhere', desca, descb, -5, -1, 'ictxt = -5', .false.)
    call descriptor_case('ICTXT = 12345 (garbage) everywhere', desca, descb, 12345, -1, &
                         'ictxt = 12345', .false.)
    db = descb
    if (me == last) db(2) = 12345
    call descriptor_case('DESCB(CTXT_) = 12345 (garbage) on the last rank', desca, db, ictxt, &
                         last, 'DESCB(CTXT_) = 12345', .false.)
    da = desca
    if (me == 0) da(9) = 1
    call descriptor_case('DESCA(LLD_) = 1 on rank 0', da, descb, ictxt, 0, 'a->lld', .false.)
    bad_options = redist_options(max_concurrent=-2)
    call descriptor_case('options%max_concurrent = -2 everywhere', desca, descb, ictxt, -1, &
                         'options->max_concurrent = -2', .false., options=bad_options)
  end subroutine descriptor_cases

  !> A valid REDIST_DOUBLE plan executed with arrays of another element size.
  subroutine element_size_cases()
    type(redist_layout) :: a, b
    type(redist_plan) :: plan
    integer :: status

    call valid_layouts(a, b)
    call redist_plan_create(plan, MPI_COMM_WORLD, rows, cols, REDIST_DOUBLE, a, b, status)
    checks = checks + 1
    if (status /= REDIST_SUCCESS) then
      call fail('valid plan for the element-size cases', redist_message())
      return
    end if
    call reset_b()
    call redist_plan_execute(plan, a32, b32, status)
    call check_status('real(4) arrays on a REDIST_DOUBLE plan everywhere', status, -1, &
                      '4-byte elements')
    call check_b('real(4) arrays on a REDIST_DOUBLE plan everywhere')
    call reset_b()
    if (me == last) then
      call redist_plan_execute(plan, az, bz, status)
    else
      call redist_plan_execute(plan, a64, b64, status)
    end if
    call check_status('complex(8) arrays on the last rank, real(8) elsewhere', status, last, &
                      '16-byte elements')
    call check_b('complex(8) arrays on the last rank, real(8) elsewhere')
    call redist_plan_destroy(plan, status)
  end subroutine element_size_cases

  subroutine scalapack_cases()
    integer :: da(9), db(9)

    call reset_b()
    da = desca
    da(1) = 3
    call pdgemr2d(rows, cols, a64, 1, 1, da, b64, 1, 1, descb, ictxt)
    call check_scalapack('PDGEMR2D, DESCA(DTYPE_) = 3 everywhere', -1)
    call check_b('PDGEMR2D, DESCA(DTYPE_) = 3 everywhere')
    db = descb
    if (me == last) db(6) = 0
    call pdgemr2d(rows, cols, a64, 1, 1, desca, b64, 1, 1, db, ictxt)
    call check_scalapack('PDGEMR2D, DESCB(NB_) = 0 on the last rank', last)
    call check_b('PDGEMR2D, DESCB(NB_) = 0 on the last rank')
    da = desca
    da(5) = -3
    call psgemr2d(rows, cols, a32, 1, 1, da, b32, 1, 1, descb, ictxt)
    call check_scalapack('PSGEMR2D, DESCA(MB_) = -3 everywhere', -1)
    call check_b('PSGEMR2D, DESCA(MB_) = -3 everywhere')
    call pztrmr2d('X', 'N', rows, cols, az, 1, 1, desca, bz, 1, 1, descb, ictxt)
    call check_scalapack('PZTRMR2D, UPLO = ''X'' everywhere', -1)
    call check_b('PZTRMR2D, UPLO = ''X'' everywhere')
    if (me == last) then
      call pitrmr2d('U', 'Q', rows, cols, ai, 1, 1, desca, bi, 1, 1, descb, ictxt)
    else
      call pitrmr2d('U', 'N', rows, cols, ai, 1, 1, desca, bi, 1, 1, descb, ictxt)
    end if
    call check_scalapack('PITRMR2D, DIAG = ''Q'' on the last rank', last)
    call check_b('PITRMR2D, DIAG = ''Q'' on the last rank')
    call pdgemr2d(rows, cols, a64, 1, cols, desca, b64, 1, 1, descb, ictxt)
    call check_scalapack('PDGEMR2D, JA = N_ (window outside A) everywhere', -1)
    call check_b('PDGEMR2D, JA = N_ (window outside A) everywhere')
  end subroutine scalapack_cases

  !> After all that, both modules still copy: A holds 1000*i + j at global (i, j), B must too.
  subroutine still_works()
    type(redist_layout) :: a, b
    type(redist_plan) :: plan
    integer :: status, li, lj

    do lj = 1, local_cols_a
      do li = 1, rows
        a64(li + (lj - 1) * lld_a) = 1000 * li + indxl2g(lj, 2, me, 0, nprocs)
      end do
    end do
    call valid_layouts(a, b)
    call redist_plan_create(plan, MPI_COMM_WORLD, rows, cols, REDIST_DOUBLE, a, b, status)
    call reset_b()
    call redist_plan_execute(plan, a64, b64, status)
    call check_copy('module redist plan after the error cases', status)
    call redist_plan_destroy(plan, status)
    call reset_b()
    call pdgemr2d(rows, cols, a64, 1, 1, desca, b64, 1, 1, descb, ictxt)
    call check_copy('PDGEMR2D after the error cases', redist_scalapack_last_status())
  end subroutine still_works

  subroutine check_copy(label, status)
    character(len=*), intent(in) :: label
    integer, intent(in) :: status
    integer :: li, lj, wrong
    real(real64) :: expected

    checks = checks + 1
    if (status /= REDIST_SUCCESS) then
      call fail(label, 'status '//redist_status_name(status)//': '//redist_message())
      return
    end if
    wrong = 0
    do lj = 1, local_cols_b
      do li = 1, lld_b
        expected = b64_0(li + (lj - 1) * lld_b)
        if (li <= rows) expected = 1000 * li + indxl2g(lj, 3, me, 0, nprocs)
        if (transfer(b64(li + (lj - 1) * lld_b), 0_int64) /= transfer(expected, 0_int64)) &
          wrong = wrong + 1
      end do
    end do
    if (wrong > 0) call fail(label, itoa(wrong)//' elements of B wrong')
  end subroutine check_copy

end program redist_fortran_bad_input
