!> Module redist's batches of block grid operations (type(redist_grid_batch_op),
!> redist_grid_batch_create) against the element oracle of block_grid_cases.f90 (written in
!> Fortran from the definitions, not from src/):
!>   - random batches of 1 to 5 operations, each grid -> grid, grid -> block-cyclic,
!>     block-cyclic -> grid or block-cyclic -> block-cyclic, op N / T / C, real(real64) or
!>     complex(real64), its own alpha and beta; an integer or a type(MPI_Comm) communicator;
!>     executed blocking (redist_plan_execute_batch) or split (_batch_begin, then
!>     redist_plan_execute_end), twice; every element of every local array of B checked;
!>   - errors: an owner outside the communicator in ops(2) named ops[1] on every rank, owners of
!>     the wrong shape in ops(3) on rank 0 (the module's own check) named ops(3)%b%grid there and
!>     REDIST_ERR_REMOTE elsewhere.
!> Usage: redist_fortran_grid_batch [--cases=N]; prints "..., 0 failures" and PASS.
module grid_batch_cases
  use, intrinsic :: iso_c_binding, only: c_loc, c_ptr
  use, intrinsic :: iso_fortran_env, only: int64, real64
  use mpi_f08
  use redist
  use block_grid_cases
  implicit none

  !> One operation's local arrays (complex, or real for a real operation), its scalars and the
  !> B it must give.
  type :: op_data
    logical :: is_real = .false.
    complex(real64), allocatable :: a(:), b(:), initial(:), want(:)
    real(real64), allocatable :: ra(:), rb(:)
    complex(real64) :: alpha = 1, beta = 0
    real(real64) :: ralpha = 1, rbeta = 0
  end type op_data

contains

  !> A random operation: its sides into op, its arrays and expected B into d.
  subroutine random_op(op, d)
    type(redist_grid_batch_op), intent(out) :: op
    type(op_data), intent(out) :: d
    type(side) :: sa, sb
    integer :: kind, pick
    real(real64), parameter :: scalars(4) = [0.0_real64, 1.0_real64, -2.0_real64, 0.5_real64]

    kind = draw(4) ! 0 grid -> grid, 1 grid -> cyclic, 2 cyclic -> grid, 3 cyclic -> cyclic
    op%op = draw(3)
    d%is_real = draw(2) == 0
    op%type = merge(REDIST_DOUBLE, REDIST_COMPLEX_DOUBLE, d%is_real)
    op%m = draw(10)
    op%n = 1 + draw(10)
    d%alpha = scalars(1 + draw(4))
    d%beta = scalars(1 + draw(4))
    pick = draw(2)
    if (.not. d%is_real .and. pick == 0) d%alpha = d%alpha * (0, 1)
    if (kind == 0 .or. kind == 1) then
      call a_side(random_grid)
    else
      call a_side(random_cyclic)
    end if
    if (kind == 0 .or. kind == 2) then
      call random_grid(sb, op%m, op%n)
    else
      call random_cyclic(sb, op%m, op%n)
    end if
    call set_side(op%a, sa)
    call set_side(op%b, sb)
    allocate (d%a(sa%elems), d%b(sb%elems))
    call fill_a(sa, d%a)
    call fill_a(sb, d%b)
    d%initial = d%b
    d%want = d%b
    call expect(sa, sb, op%op, op%m, op%n, d%alpha, d%beta, d%want)
    if (d%is_real) then
      d%ra = real(d%a, real64)
      d%rb = real(d%b, real64)
      d%want = cmplx(real(d%want, real64), 0, real64)
      d%ralpha = real(d%alpha, real64)
      d%rbeta = real(d%beta, real64)
    end if

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
      if (op%op == REDIST_OP_N) then
        call make(sa, op%m, op%n)
      else
        call make(sa, op%n, op%m)
      end if
    end subroutine a_side
  end subroutine random_op

  subroutine set_side(any, s)
    type(redist_any_layout), intent(out) :: any
    type(side), intent(in) :: s
    if (s%is_grid) then
      any%kind = REDIST_LAYOUT_BLOCK_GRID
      any%grid = s%g
    else
      any%kind = REDIST_LAYOUT_BLOCK_CYCLIC
      any%cyclic = s%l
    end if
  end subroutine set_side

  !> Execute the batch (split or not) on d's arrays; B reset first.
  subroutine execute(plan, d, split, status)
    type(redist_plan), intent(in) :: plan
    type(op_data), intent(inout), target :: d(:)
    logical, intent(in) :: split
    integer, intent(out) :: status
    type(c_ptr) :: a(size(d)), b(size(d)), alphas(size(d)), betas(size(d))
    integer :: k

    do k = 1, size(d)
      if (d(k)%is_real) then
        d(k)%rb = real(d(k)%initial, real64)
        a(k) = c_loc(d(k)%ra)
        b(k) = c_loc(d(k)%rb)
        alphas(k) = c_loc(d(k)%ralpha)
        betas(k) = c_loc(d(k)%rbeta)
      else
        d(k)%b = d(k)%initial
        a(k) = c_loc(d(k)%a)
        b(k) = c_loc(d(k)%b)
        alphas(k) = c_loc(d(k)%alpha)
        betas(k) = c_loc(d(k)%beta)
      end if
    end do
    if (split) then
      call redist_plan_execute_batch_begin(plan, a, b, status, alphas=alphas, betas=betas)
      if (status == REDIST_SUCCESS) call redist_plan_execute_end(plan, status)
    else
      call redist_plan_execute_batch(plan, a, b, status, alphas=alphas, betas=betas)
    end if
  end subroutine execute

  !> Whether every B of d is the one expected.
  logical function all_right(d)
    type(op_data), intent(in) :: d(:)
    integer :: k
    all_right = .true.
    do k = 1, size(d)
      if (d(k)%is_real) then
        if (any(differs(cmplx(d(k)%rb, 0, real64), d(k)%want))) all_right = .false.
      else
        if (any(differs(d(k)%b, d(k)%want))) all_right = .false.
      end if
    end do
  end function all_right

  subroutine random_batch(k)
    integer, intent(in) :: k
    type(redist_grid_batch_op), allocatable :: ops(:)
    type(op_data), allocatable, target :: d(:)
    type(redist_plan) :: plan
    integer :: count, q, status, e
    logical :: split
    character(len=60) :: what

    count = 1 + draw(5)
    split = draw(3) == 0
    allocate (ops(count), d(count))
    do q = 1, count
      call random_op(ops(q), d(q))
    end do
    write (what, '(a, i0, a, i0, a, l1)') 'batch ', k, ' of ', count, ' split ', split
    if (mod(k, 2) == 0) then
      call redist_grid_batch_create(plan, MPI_COMM_WORLD, ops, status)
    else
      call redist_grid_batch_create(plan, MPI_COMM_WORLD%MPI_VAL, ops, status)
    end if
    call check(status == REDIST_SUCCESS, trim(what)//' create')
    if (status /= REDIST_SUCCESS) return
    do e = 1, 2
      call execute(plan, d, split, status)
      call check(status == REDIST_SUCCESS, trim(what)//' execute')
      call check(all_right(d), trim(what)//' B')
    end do
    call redist_plan_destroy(plan, status)
    call check(status == REDIST_SUCCESS, trim(what)//' destroy')
  end subroutine random_batch

  !> Bad operations: the status and the operation named on every rank.
  subroutine batch_errors()
    type(redist_grid_batch_op) :: ops(3)
    type(op_data) :: d(3)
    type(redist_plan) :: plan
    integer :: status, q
    character(len=:), allocatable :: message

    seed = 78
    do q = 1, 3
      call random_op(ops(q), d(q))
    end do
    ! ops(2)'s A a grid with an owner outside the communicator, everywhere.
    ! (Op N: A is laid out as B, as a block grid.)
    ops(2)%op = REDIST_OP_N
    ops(2)%a = ops(2)%b
    if (ops(2)%a%kind /= REDIST_LAYOUT_BLOCK_GRID) call random_grid_any(ops(2)%a)
    ops(2)%a%grid%owners(1, 1) = nprocs
    call redist_grid_batch_create(plan, MPI_COMM_WORLD, ops, status)
    message = redist_message()
    call check(status == REDIST_ERR_ARGUMENT .and. &
               index(message, 'redist_grid_batch_create:') == 1 .and. &
               index(message, 'ops[1].a->grid->owners[0]') > 0, &
               'an owner outside the communicator in ops(2)')
    ! ops(3)'s B a grid whose owners have the wrong shape on rank 0.
    seed = 78
    do q = 1, 3
      call random_op(ops(q), d(q))
    end do
    if (ops(3)%b%kind /= REDIST_LAYOUT_BLOCK_GRID) call random_grid_any(ops(3)%b)
    if (me == 0) then
      deallocate (ops(3)%b%grid%owners)
      allocate (ops(3)%b%grid%owners(size(ops(3)%b%grid%row_splits), 1))
      ops(3)%b%grid%owners = 0
    end if
    call redist_grid_batch_create(plan, MPI_COMM_WORLD%MPI_VAL, ops, status)
    message = redist_message()
    if (me == 0) then
      call check(status == REDIST_ERR_ARGUMENT .and. &
                 index(message, 'redist_grid_batch_create: ops(3)%b%grid%owners: shape') == 1, &
                 'owners of the wrong shape in ops(3) on its rank')
    else
      call check(status == REDIST_ERR_REMOTE .and. index(message, 'ops[2]') > 0, &
                 'owners of the wrong shape in ops(3) on another rank')
    end if
  end subroutine batch_errors

  !> A 1 x 1 block grid of the side's matrix, all of it rank 0's (its window the side's).
  subroutine random_grid_any(any)
    type(redist_any_layout), intent(inout) :: any
    integer(int64) :: m, n, ld
    m = any%cyclic%m
    n = any%cyclic%n
    ld = max(1_int64, m)
    any%kind = REDIST_LAYOUT_BLOCK_GRID
    any%grid%row_splits = [0_int64, m]
    any%grid%col_splits = [0_int64, n]
    any%grid%owners = reshape([0], [1, 1])
    any%grid%row_major = .false.
    any%grid%ia = any%cyclic%ia
    any%grid%ja = any%cyclic%ja
    if (me == 0) then
      any%grid%local = [redist_grid_block(block_row=0, block_col=0, offset=0, ld=ld)]
    else
      allocate (any%grid%local(0))
    end if
  end subroutine random_grid_any

end module grid_batch_cases

program redist_fortran_grid_batch
  use mpi_f08
  use test_run, only: start_run, report_run
  use block_grid_cases
  use grid_batch_cases
  implicit none
  integer :: cases, k

  cases = 120
  call start_run(cases)
  seed = 20261130
  do k = 1, cases
    call random_batch(k)
  end do
  call batch_errors()

  k = report_run('redist_fortran_grid_batch')
  call MPI_Finalize()
  if (k /= 0) error stop 1
end program redist_fortran_grid_batch
