!> PBLAS's 11-integer descriptors (DTYPE_ = 2, BLOCK_CYCLIC_2D_INB: DTYPE_, CTXT_, M_, N_, IMB_,
!> INB_, MB_, NB_, RSRC_, CSRC_, LLD_; the first block of IMB_ rows and INB_ columns on (RSRC_,
!> CSRC_), then blocks of MB_ x NB_ dealt from the next process row and column) passed through
!> module redist_scalapack to redist's PZGEADD ('N', 'T', 'C'), PZTRANU, PZTRANC, PZTRADD and
!> PZGEMR2D. Random cases on a random P x Q grid of every process: IMB_ / INB_ below, equal to and
!> above the block sizes and beyond the matrix, every source process, windows, LLD padding,
!> A's descriptor of 11 or 9 integers, A or C now and then replicated over the process rows or
!> columns (RSRC_ / CSRC_ = -1: every process row holds every row at its global index), alpha
!> and beta among 0, 1 and complex integers. The
!> expected C (its padding rows included) is computed here element by element from the global
!> values, every element placed with the IMB/MB formulas; integer-valued complex numbers make
!> the arithmetic exact, so the comparison is exact.
!> Usage: redist_fortran_first_blocks [--cases=N] [--seed=S]; prints PASS and exits 0 when every
!> case on every process agrees.
program redist_fortran_first_blocks
  use, intrinsic :: iso_fortran_env, only: int64, output_unit
  use, intrinsic :: iso_c_binding, only: c_double_complex
  use mpi_f08
  use compare_cases, only: rng_t, command_options
  use redist_scalapack, only: pzgeadd, pztranu, pztranc, pztradd, pzgemr2d, &
                              redist_scalapack_last_status
  use scalapack_reference, only: blacs_get, blacs_gridinit, blacs_gridinfo, blacs_gridexit, &
                                 blacs_exit
  implicit none

  !> One distributed matrix on this process: the global extents, first blocks, blocks, sources,
  !> its window's start, this process's local extents and leading dimension, and its descriptor.
  type :: side_t
    integer :: mg = 0, ng = 0, imb = 1, inb = 1, mb = 1, nb = 1, rsrc = 0, csrc = 0
    integer :: i = 1, j = 1, locr = 0, locc = 0, lld = 1
    logical :: eleven = .true.
    integer :: desc(11) = 0
  end type side_t

  character(len=*), parameter :: routines(5) = &
    [character(len=8) :: 'PZGEADD', 'PZTRANU', 'PZTRANC', 'PZTRADD', 'PZGEMR2D']
  integer :: me, nprocs, k, cases, failures, total_failures
  integer(int64) :: seed
  type(rng_t) :: rng

  cases = 200
  seed = 20261129
  call command_options(cases, seed)

  call MPI_Init()
  call MPI_Comm_rank(MPI_COMM_WORLD, me)
  call MPI_Comm_size(MPI_COMM_WORLD, nprocs)
  rng%state = seed
  failures = 0
  do k = 1, cases
    call run_case(k, failures)
  end do
  call MPI_Allreduce(failures, total_failures, 1, MPI_INTEGER, MPI_SUM, MPI_COMM_WORLD)
  if (me == 0) then
    write (output_unit, '(a, i0, a, i0, a, i0, a, i0, a)') 'redist_fortran_first_blocks: np ', &
      nprocs, ', seed ', seed, ', ', cases, ' cases, ', total_failures, ' failures'
    if (total_failures == 0) write (output_unit, '(a)') 'PASS'
  end if
  call blacs_exit(1)
  call MPI_Finalize()
  if (total_failures /= 0) error stop 1

contains

  !> The process holding global index g (0-based) of a dimension whose first block holds
  !> `first` indices on process `src`, the next blocks `block` each from src + 1 on.
  integer function owner(g, first, block, src, np)
    integer, intent(in) :: g, first, block, src, np
    if (g < first) then
      owner = src
    else
      owner = modulo(src + 1 + (g - first) / block, np)
    end if
  end function owner

  !> The local index (0-based) of global index g on its owner: the owner's earlier blocks, then
  !> g's offset in its block.
  integer function local_index(g, first, block, np)
    integer, intent(in) :: g, first, block, np
    integer :: b
    if (g < first) then
      local_index = g
      return
    end if
    b = 1 + (g - first) / block
    if (modulo(b, np) == 0) then
      local_index = first + (b / np - 1) * block + modulo(g - first, block)
    else
      local_index = (b / np) * block + modulo(g - first, block)
    end if
  end function local_index

  !> The number of indices of 0 .. extent-1 process p holds (all of them where replicated,
  !> src = -1).
  integer function local_count(extent, first, block, p, src, np)
    integer, intent(in) :: extent, first, block, p, src, np
    integer :: g
    local_count = extent
    if (src == -1) return
    local_count = 0
    do g = 0, extent - 1
      if (owner(g, first, block, src, np) == p) local_count = local_count + 1
    end do
  end function local_count

  !> A first block for blocks of `block` over `extent` indices: below, equal to, above the block
  !> size, or beyond the extent.
  integer function first_block(block, extent)
    integer, intent(in) :: block, extent
    select case (rng%uniform(0, 3))
    case (0)
      first_block = rng%uniform(1, block)
    case (1)
      first_block = block
    case (2)
      first_block = rng%uniform(block + 1, 3 * block + 2)
    case default
      first_block = max(1, extent) + rng%uniform(0, 3)
    end select
  end function first_block

  !> A random side holding a rows x cols window, its descriptor (of 11 integers, or of 9 now and
  !> then where `nine` allows) and local extents.
  subroutine draw_side(rows, cols, ctxt, nprow, npcol, myrow, mycol, nine, s)
    integer, intent(in) :: rows, cols, ctxt, nprow, npcol, myrow, mycol
    logical, intent(in) :: nine
    type(side_t), intent(out) :: s
    integer :: pad
    logical :: nine_here
    s%i = rng%uniform(1, 4)
    s%j = rng%uniform(1, 4)
    s%mg = s%i - 1 + rows + rng%uniform(0, 3)
    s%ng = s%j - 1 + cols + rng%uniform(0, 3)
    s%mb = rng%uniform(1, 6)
    s%nb = rng%uniform(1, 6)
    s%imb = first_block(s%mb, s%mg)
    s%inb = first_block(s%nb, s%ng)
    s%rsrc = rng%uniform(0, nprow - 1)
    s%csrc = rng%uniform(0, npcol - 1)
    if (rng%coin(12)) s%rsrc = -1
    if (rng%coin(12)) s%csrc = -1
    pad = rng%uniform(0, 2)
    nine_here = rng%coin(30)
    s%eleven = .not. (nine .and. nine_here)
    if (.not. s%eleven) then ! a 9-integer descriptor: first blocks of MB_ x NB_
      s%imb = s%mb
      s%inb = s%nb
    end if
    s%locr = local_count(s%mg, s%imb, s%mb, myrow, s%rsrc, nprow)
    s%locc = local_count(s%ng, s%inb, s%nb, mycol, s%csrc, npcol)
    s%lld = max(1, s%locr) + pad
    if (s%eleven) then
      s%desc = [2, ctxt, s%mg, s%ng, s%imb, s%inb, s%mb, s%nb, s%rsrc, s%csrc, s%lld]
    else
      s%desc = [1, ctxt, s%mg, s%ng, s%mb, s%nb, s%rsrc, s%csrc, s%lld, 0, 0]
    end if
  end subroutine draw_side

  !> Position (1-based) of global (gi, gj) (0-based) in this process's local array, 0 if another
  !> process holds it.
  integer function position(s, gi, gj, nprow, npcol, myrow, mycol)
    type(side_t), intent(in) :: s
    integer, intent(in) :: gi, gj, nprow, npcol, myrow, mycol
    integer :: li, lj
    position = 0
    li = gi ! replicated: every process row holds every row at its global index
    lj = gj
    if (s%rsrc >= 0) then
      if (owner(gi, s%imb, s%mb, s%rsrc, nprow) /= myrow) return
      li = local_index(gi, s%imb, s%mb, nprow)
    end if
    if (s%csrc >= 0) then
      if (owner(gj, s%inb, s%nb, s%csrc, npcol) /= mycol) return
      lj = local_index(gj, s%inb, s%nb, npcol)
    end if
    position = 1 + li + s%lld * lj
  end function position

  !> Every element of side s this process holds set to its global value (A's or C's).
  subroutine place(s, of_a, nprow, npcol, myrow, mycol, x)
    type(side_t), intent(in) :: s
    logical, intent(in) :: of_a
    integer, intent(in) :: nprow, npcol, myrow, mycol
    complex(c_double_complex), intent(inout) :: x(:)
    integer :: gi, gj, r
    do gj = 0, s%ng - 1
      do gi = 0, s%mg - 1
        r = position(s, gi, gj, nprow, npcol, myrow, mycol)
        if (r == 0) cycle
        if (of_a) then
          x(r) = a_value(gi, gj)
        else
          x(r) = c_value(gi, gj)
        end if
      end do
    end do
  end subroutine place

  complex(c_double_complex) function a_value(gi, gj)
    integer, intent(in) :: gi, gj
    a_value = cmplx(1 + gi + 100 * gj, gi - 2 * gj, c_double_complex)
  end function a_value

  complex(c_double_complex) function c_value(gi, gj)
    integer, intent(in) :: gi, gj
    c_value = cmplx(-3 - gi + 50 * gj, 7 - gj, c_double_complex)
  end function c_value

  complex(c_double_complex) function scalar()
    select case (rng%uniform(0, 3))
    case (0)
      scalar = (0, 0)
    case (1)
      scalar = (1, 0)
    case default
      scalar = cmplx(rng%uniform(-3, 3), rng%uniform(-3, 3), c_double_complex)
    end select
  end function scalar

  subroutine run_case(index, failures)
    integer, intent(in) :: index
    integer, intent(inout) :: failures
    integer :: routine, m, n, am, an, nprow, npcol, ctxt, r, c, myrow, mycol, wi, wj, bad, k
    character :: trans, uplo
    complex(c_double_complex) :: alpha, beta, av
    complex(c_double_complex), allocatable :: a(:), cl(:), want(:)
    type(side_t) :: sa, sc

    routine = rng%uniform(1, 5)
    trans = 'N'
    if (routine == 1 .or. routine == 4) then
      k = rng%uniform(1, 3)
      trans = 'NTC'(k:k)
    end if
    if (routine == 2) trans = 'T'
    if (routine == 3) trans = 'C'
    k = rng%uniform(1, 2)
    uplo = 'UL'(k:k)
    m = rng%uniform(0, 20)
    n = rng%uniform(0, 20)
    nprow = rng%uniform(1, nprocs)
    do while (modulo(nprocs, nprow) /= 0)
      nprow = nprow - 1
    end do
    npcol = nprocs / nprow
    alpha = scalar()
    beta = scalar()
    call blacs_get(-1, 0, ctxt)
    call blacs_gridinit(ctxt, 'R', nprow, npcol)
    call blacs_gridinfo(ctxt, r, c, myrow, mycol)
    am = m
    an = n
    if (trans /= 'N') then
      am = n
      an = m
    end if
    call draw_side(am, an, ctxt, nprow, npcol, myrow, mycol, .true., sa)
    call draw_side(m, n, ctxt, nprow, npcol, myrow, mycol, .false., sc)

    allocate (a(max(1, sa%lld * sa%locc)), cl(sc%lld * sc%locc + 7))
    a = (0, 0)
    call place(sa, .true., nprow, npcol, myrow, mycol, a)
    cl = (-777, 777) ! LLD padding rows and the guard stay so
    call place(sc, .false., nprow, npcol, myrow, mycol, cl)
    want = cl
    do wj = 0, n - 1
      do wi = 0, m - 1
        r = position(sc, sc%i - 1 + wi, sc%j - 1 + wj, nprow, npcol, myrow, mycol)
        if (r == 0) cycle
        if (routine == 4) then
          if (uplo == 'U' .and. wi > wj) cycle
          if (uplo == 'L' .and. wi < wj) cycle
        end if
        if (trans == 'N') then
          av = a_value(sa%i - 1 + wi, sa%j - 1 + wj)
        else
          av = a_value(sa%i - 1 + wj, sa%j - 1 + wi)
        end if
        if (trans == 'C') av = conjg(av)
        if (routine == 5) then
          want(r) = av
        else
          want(r) = beta * cl(r) + alpha * av
        end if
      end do
    end do

    select case (routine)
    case (1)
      call pzgeadd(trans, m, n, alpha, a, sa%i, sa%j, sa%desc, beta, cl, sc%i, sc%j, sc%desc)
    case (2)
      call pztranu(m, n, alpha, a, sa%i, sa%j, sa%desc, beta, cl, sc%i, sc%j, sc%desc)
    case (3)
      call pztranc(m, n, alpha, a, sa%i, sa%j, sa%desc, beta, cl, sc%i, sc%j, sc%desc)
    case (4)
      call pztradd(uplo, trans, m, n, alpha, a, sa%i, sa%j, sa%desc, beta, cl, sc%i, sc%j, &
                   sc%desc)
    case default
      call pzgemr2d(m, n, a, sa%i, sa%j, sa%desc, cl, sc%i, sc%j, sc%desc, ctxt)
    end select

    bad = count(abs(cl - want) > 0) ! exact: every value is an integer-valued complex
    if (redist_scalapack_last_status() /= 0 .or. bad > 0) then
      failures = failures + 1
      write (output_unit, '(a, i0, a, i0, 5a, i0, a, i0, a, i0, a, i0)') 'FAIL: rank ', me, &
        ' case ', index, ': ', trim(routines(routine)), ' trans=', trans // ' uplo=' // uplo, &
        ' m=', m, ' n=', n, ' grid ', nprow, 'x', npcol
      write (output_unit, '(a, 11(1x, i0), a, i0, a, i0)') '  DESCA', sa%desc, ' IA=', sa%i, &
        ' JA=', sa%j
      write (output_unit, '(a, 11(1x, i0), a, i0, a, i0)') '  DESCC', sc%desc, ' IC=', sc%i, &
        ' JC=', sc%j
      write (output_unit, '(a, 4(1x, f0.1), a, i0, a, i0)') '  alpha, beta', alpha, beta, &
        '; status ', redist_scalapack_last_status(), ', elements wrong: ', bad
    end if
    call blacs_gridexit(ctxt)
  end subroutine run_case

end program redist_fortran_first_blocks
