!> redist for Fortran: plans that copy a (sub)matrix between two 2-D block-cyclic layouts, or an
!> N-d array (rank 1 to 7) between two HPF-style distributions (docs/nd.md, section Fortran), and
!> plans for B := alpha op(A) + beta B, alone, as a batch of many, or between arbitrary block
!> grids and block-cyclic layouts (redist_grid_plan_create); blocking or split (begin, then end)
!> execution.
!>
!> A plan is created collectively (from ScaLAPACK descriptors and a BLACS context, or from
!> explicit layouts and an MPI communicator), executed collectively any number of times on
!> arrays of one of six types, and destroyed collectively. Every procedure returns its result in
!> `status` (REDIST_SUCCESS or an error code, the same on every process of the call);
!> redist_message() then says which argument was wrong and why. Nothing here stops the program.
!>
!> Index conventions are ScaLAPACK's: the window starts at the 1-based global row `ia` and
!> column `ja`; grid coordinates and the source process `rsrc`/`csrc` are 0-based; ranks are
!> ranks of the communicator.
module redist
  use, intrinsic :: iso_c_binding, only: c_associated, c_char, c_double, c_f_pointer, c_int, &
                                         c_int64_t, c_loc, c_null_char, c_null_ptr, c_ptr, &
                                         c_size_t
  use, intrinsic :: iso_fortran_env, only: int32, int64, real32, real64
  use mpi_f08, only: MPI_Comm
  implicit none
  private

  integer, parameter, public :: REDIST_SUCCESS = 0, REDIST_ERR_ARGUMENT = 1, &
                                REDIST_ERR_REMOTE = 2, REDIST_ERR_MISMATCH = 3, &
                                REDIST_ERR_MPI = 4, REDIST_ERR_NO_MEMORY = 5, &
                                REDIST_ERR_INTERNAL = 6

  integer, parameter, public :: REDIST_FLOAT = 0, REDIST_DOUBLE = 1, &
                                REDIST_COMPLEX_FLOAT = 2, REDIST_COMPLEX_DOUBLE = 3, &
                                REDIST_INT32 = 4, REDIST_INT64 = 5

  integer, parameter, public :: REDIST_REGION_FULL = 0, REDIST_REGION_UPPER = 1, &
                                REDIST_REGION_LOWER = 2

  integer, parameter, public :: REDIST_SCHEDULE_AUTO = 0, REDIST_SCHEDULE_ALL_AT_ONCE = 1, &
                                REDIST_SCHEDULE_CATERPILLAR = 2, REDIST_SCHEDULE_STEPWISE = 3, &
                                REDIST_SCHEDULE_GREEDY = 4, REDIST_SCHEDULE_CIRCULANT = 5, &
                                REDIST_SCHEDULE_GGP = 6, REDIST_SCHEDULE_OGGP = 7, &
                                REDIST_SCHEDULE_MULTIPHASE = 8

  !> op(A) of redist_plan_create_op: A, A transposed, A conjugated and transposed.
  integer, parameter, public :: REDIST_OP_N = 0, REDIST_OP_T = 1, REDIST_OP_C = 2

  !> The kind of a side of type(redist_any_layout) (redist.h: redist_layout_kind).
  integer, parameter, public :: REDIST_LAYOUT_BLOCK_CYCLIC = 0, REDIST_LAYOUT_BLOCK_GRID = 1

  !> Distribution kinds of one dimension of an N-d array (type(redist_distribution)).
  integer, parameter, public :: REDIST_DIST_NONE = 0, REDIST_DIST_BLOCK = 1, &
                                REDIST_DIST_CYCLIC = 2, REDIST_DIST_GEN_BLOCK = 3
  !> Local storage order of an N-d array: Fortran's (first index fastest) or C's.
  integer, parameter, public :: REDIST_ORDER_FORTRAN = 0, REDIST_ORDER_C = 1

  !> A plan. Default-initialized to "no plan"; redist_plan_destroy returns it to that state.
  type, public :: redist_plan
    private
    type(c_ptr) :: handle = c_null_ptr
    integer :: element_bytes = 0
    integer :: type = -1
    integer :: batch_count = -1 !< operations of a batch plan; -1: not a batch
  end type redist_plan

  !> How one dimension of an N-d array is distributed, in HPF's terms: made by redist_block(),
  !> redist_cyclic(k), redist_gen_block(extents) or redist_star() ('*', not distributed), or
  !> from HPF's text: redist_distribution('CYCLIC(4)'), redist_distribution('GEN_BLOCK', extents).
  type, public :: redist_distribution
    integer :: kind = REDIST_DIST_NONE
    !> BLOCK(k) / CYCLIC(k): the block k; 0 = the default (BLOCK: ceiling(n / p), CYCLIC: 1)
    integer(int64) :: block = 0
    !> GEN_BLOCK: the extent held by each grid coordinate along this dimension (zeros allowed)
    integer(int64), allocatable :: extents(:)
    !> kind -1: the text redist_distribution did not recognise (for the message)
    character(len=:), allocatable :: text
  end type redist_distribution

  !> An N-d array (rank 1..7) distributed over a process grid: MPI_Type_create_darray's model
  !> plus GEN_BLOCK (docs/nd.md). Every process passes the same values except local_extents.
  !> Made with the structure constructor or redist_nd_layout(gsizes, dist, psizes [, ranks,
  !> starts, subsizes, local_extents, order]) taking default integers.
  type, public :: redist_nd_layout
    integer(int64), allocatable :: gsizes(:)              !< global extents
    type(redist_distribution), allocatable :: dist(:)     !< one per dimension
    integer, allocatable :: psizes(:)                     !< process grid extents
    !> rank of each grid position, positions numbered row-major (the LAST grid dimension
    !> fastest, as MPI_Type_create_darray and MPI_Cart_create number them); unallocated:
    !> position p is rank p
    integer, allocatable :: ranks(:)
    !> the window: first global index per dimension (1-based) and extents; unallocated: all
    integer(int64), allocatable :: starts(:), subsizes(:)
    !> this process's allocated local extents (>= its local counts); unallocated: dense
    integer(int64), allocatable :: local_extents(:)
    integer :: order = REDIST_ORDER_FORTRAN               !< REDIST_ORDER_FORTRAN or _C
  end type redist_nd_layout

  interface redist_nd_layout
    module procedure make_nd_layout
  end interface redist_nd_layout

  interface redist_distribution
    module procedure distribution_from_text
  end interface redist_distribution

  !> One block-cyclic layout and the window copied from or to it. Every process passes the same
  !> values, except `lld`, its own local leading dimension (ignored outside the grid).
  type, public :: redist_layout
    integer(int64) :: m = 0, n = 0    !< global rows and columns (M_, N_)
    integer(int64) :: mb = 1, nb = 1  !< block rows and columns (MB_, NB_)
    integer :: rsrc = 0, csrc = 0     !< grid row and column of the first block, 0-based
    !> ranks(pr + 1, pc + 1): rank in the communicator at grid position (pr, pc); the shape of
    !> the array is the grid's shape (like BLACS_GRIDMAP's USERMAP)
    integer, allocatable :: ranks(:, :)
    integer(int64) :: ia = 1, ja = 1  !< first row and column of the window, 1-based
    integer(int64) :: lld = 1         !< local leading dimension on this process
  end type redist_layout

  !> Local storage orders of a 2-D layout (type(redist_layout_ext)): column-major, local
  !> element (r, c) at r + c*lld (0-based; a Fortran array b(lld, *) holds it in b(r+1, c+1)),
  !> or row-major, at r*lld + c (b(lld, *) holds it in b(c+1, r+1); lld >= local columns).
  integer, parameter, public :: REDIST_ORDER_COLUMN_MAJOR = 0, REDIST_ORDER_ROW_MAJOR = 1

  !> A block-cyclic layout with a first block of its own and a local storage order (redist.h:
  !> redist_layout_ext; PBLAS's 11-integer descriptors): redist_layout's fields, and the first
  !> block row holds imb rows on grid row rsrc, then blocks of mb rows go round-robin from grid
  !> row rsrc + 1 (IMB_; inb, nb and csrc likewise along the columns). imb = 0 (inb = 0) means
  !> mb (nb): redist_layout's distribution.
  type, public, extends(redist_layout) :: redist_layout_ext
    integer(int64) :: imb = 0, inb = 0               !< first block rows and columns (IMB_, INB_)
    integer :: order = REDIST_ORDER_COLUMN_MAJOR     !< REDIST_ORDER_COLUMN_MAJOR or _ROW_MAJOR
  end type redist_layout_ext

  !> One operation of a batch (redist_plan_create_batch): B := alpha op(A) + beta B on the
  !> m x n window of layout b, as redist_plan_create_op takes it (for REDIST_OP_T and _C A's
  !> window is n x m). Every process passes the same values (but the layouts' lld).
  type, public :: redist_batch_op
    integer :: op = REDIST_OP_N                !< REDIST_OP_N, _T or _C
    integer(int64) :: m = 0, n = 0             !< the window of b
    integer :: type = REDIST_DOUBLE            !< a REDIST_* element type
    type(redist_layout) :: a, b
    integer :: region = REDIST_REGION_FULL     !< REDIST_REGION_FULL, _UPPER or _LOWER
  end type redist_batch_op

  !> One operation of a batch on layouts with first blocks or row-major local arrays
  !> (redist_plan_create_batch with type(redist_batch_op_ext) operations).
  type, public :: redist_batch_op_ext
    integer :: op = REDIST_OP_N                !< REDIST_OP_N, _T or _C
    integer(int64) :: m = 0, n = 0             !< the window of b
    integer :: type = REDIST_DOUBLE            !< a REDIST_* element type
    type(redist_layout_ext) :: a, b
    integer :: region = REDIST_REGION_FULL     !< REDIST_REGION_FULL, _UPPER or _LOWER
  end type redist_batch_op_ext

  !> Where one of this process's blocks of a block grid lives in its local array (redist.h:
  !> redist_grid_block). All four are C's: block_row and block_col are 0-based grid
  !> coordinates, offset is the 0-based element offset of the block's first element from the
  !> local array's start (a Fortran array x(:) holds that element in x(offset + 1)); ld is the
  !> elements between the block's columns (column-major) or rows (row_major).
  type, public :: redist_grid_block
    integer(int64) :: block_row = 0, block_col = 0 !< 0-based, < size(splits) - 1
    integer(int64) :: offset = 0                   !< 0-based, in elements
    integer(int64) :: ld = 1                       !< >= max(1, the block's rows / columns)
  end type redist_grid_block

  !> An arbitrary block grid (redist.h: redist_block_grid; docs/guide.md, "Block grids";
  !> COSTA's custom layouts): the global rows cut at row_splits (0 = row_splits(1) <= ... <=
  !> row_splits(block_rows + 1) = the global rows, 0-based offsets as in C), the columns at
  !> col_splits; owners(r + 1, c + 1) is the rank of the communicator owning block (r, c) (the
  !> array's shape is the grid's: size(row_splits) - 1 by size(col_splits) - 1, column-major
  !> as C's owners[r + c * block_rows]); every block column-major, or row-major with
  !> `row_major`; `local` lists each block this process owns, once (unallocated or empty if
  !> none). The window copied starts at the 1-based global row ia and column ja, as in
  !> type(redist_layout). Every process passes the same values except `local`.
  type, public :: redist_block_grid
    integer(int64), allocatable :: row_splits(:), col_splits(:)
    integer, allocatable :: owners(:, :)
    logical :: row_major = .false.
    type(redist_grid_block), allocatable :: local(:)
    integer(int64) :: ia = 1, ja = 1  !< first row and column of the window, 1-based
  end type redist_block_grid

  !> One side of an operation of redist_grid_batch_create (redist.h: redist_any_layout): a
  !> block grid (kind REDIST_LAYOUT_BLOCK_GRID, the default: `grid`) or a 2-D block-cyclic
  !> layout (kind REDIST_LAYOUT_BLOCK_CYCLIC: `cyclic`); the other one is unused.
  type, public :: redist_any_layout
    integer :: kind = REDIST_LAYOUT_BLOCK_GRID
    type(redist_block_grid) :: grid
    type(redist_layout_ext) :: cyclic
  end type redist_any_layout

  !> One operation of redist_grid_batch_create (redist.h: redist_grid_batch_op): B := alpha
  !> op(A) + beta B on the m x n window of b (for REDIST_OP_T and _C A's window is n x m), each
  !> side a block grid or a block-cyclic layout. Every process passes the same values (but the
  !> grids' `local` and the layouts' lld).
  type, public :: redist_grid_batch_op
    integer :: op = REDIST_OP_N                !< REDIST_OP_N, _T or _C
    integer(int64) :: m = 0, n = 0             !< the window of b
    integer :: type = REDIST_DOUBLE            !< a REDIST_* element type
    type(redist_any_layout) :: a, b
  end type redist_grid_batch_op

  !> Plan options (redist.h: redist_options); the defaults choose everything automatically.
  type, public, bind(c) :: redist_options
    integer(c_int) :: schedule = REDIST_SCHEDULE_AUTO !< a REDIST_SCHEDULE_* value
    integer(c_int) :: max_concurrent = 0              !< transfers per step; 0 = no limit
    integer(c_int64_t) :: max_memory = 0              !< extra buffer bytes per process; 0 = no cap
    real(c_double) :: alpha = 0                       !< seconds per message; 0 = built-in
    real(c_double) :: beta = 0                        !< seconds per byte; 0 = built-in
  end type redist_options

  !> This process's part of a plan (redist.h: redist_plan_info).
  type, public, bind(c) :: redist_plan_info
    integer(c_int64_t) :: send_peers = 0, recv_peers = 0
    integer(c_int64_t) :: bytes_sent = 0, bytes_received = 0, bytes_local = 0
    integer(c_int) :: schedule = 0
    integer(c_int64_t) :: steps = 0
    integer(c_int64_t) :: buffer_bytes = 0
    real(c_double) :: predicted_seconds = 0
  end type redist_plan_info

  !> redist_plan_create(plan, comm, m, n, type, a, b, status [, region, unit_diag, options])
  !>   from explicit layouts (type(redist_layout)); comm an integer handle or a type(MPI_Comm).
  !>   Collective over comm.
  !> redist_plan_create(plan, m, n, type, desca, ia, ja, descb, ib, jb, ictxt, status
  !>                    [, region, unit_diag, options])
  !>   from ScaLAPACK descriptors, exactly as PxGEMR2D / PxTRMR2D take them (DESCx(CTXT_) = -1
  !>   on processes outside a grid). Collective over every process of ictxt.
  !>   Descriptors of 9 integers (DTYPE_ = 1) or of PBLAS's 11 (DTYPE_ = 2, first blocks).
  !> redist_plan_create(plan, comm, m, n, type, a, b, status [, region, unit_diag, options])
  !>   with a, b of type(redist_layout_ext): first blocks and row-major local arrays
  !>   (redist_plan_create_ext; its messages name the fields "b->layout.lld", "b->imb").
  !> region: REDIST_REGION_FULL (default), _UPPER or _LOWER (PxTRMR2D's trapezoids);
  !> unit_diag: .true. leaves the diagonal out of a trapezoid (DIAG = 'U').
  public :: redist_plan_create
  interface redist_plan_create
    module procedure create_from_layouts, create_from_layouts_f08, create_from_descriptors, &
                     create_ext, create_ext_f08
  end interface redist_plan_create

  !> redist_plan_execute(plan, a, b, status): copy from local array a to local array b
  !> (column-major, leading dimension lld; any rank). Both arrays have the plan's element type.
  !> Collective over the plan's processes.
  public :: redist_plan_execute
  interface redist_plan_execute
    module procedure execute_real32, execute_real64, execute_complex32, execute_complex64, &
                     execute_int32, execute_int64
  end interface redist_plan_execute

  !> redist_nd_plan_create(plan, comm, type, a, b, status [, perm, options]): a plan copying
  !>   the window of N-d array a (type(redist_nd_layout)) onto the window of b; comm an integer
  !>   handle or a type(MPI_Comm). perm (1-based): b's dimension d holds a's dimension perm(d).
  !>   Executed by redist_plan_execute on the local arrays themselves (any rank), or split.
  !>   Collective over comm.
  public :: redist_nd_plan_create
  interface redist_nd_plan_create
    module procedure nd_create, nd_create_f08
  end interface redist_nd_plan_create

  !> redist_plan_create_op(plan, comm, op, m, n, type, a, b, status [, region, options]):
  !>   B := alpha op(A) + beta B on the m x n window of layout b (op = REDIST_OP_N, _T or _C;
  !>   for _T and _C A's window is n x m); region: the whole window, or its upper / lower
  !>   trapezoid through the window's top-left corner (PxTRADD). Collective over comm.
  !>   a, b of type(redist_layout_ext): first blocks and row-major local arrays
  !>   (redist_plan_create_op_ext).
  public :: redist_plan_create_op
  interface redist_plan_create_op
    module procedure create_op, create_op_f08, create_op_ext, create_op_ext_f08
  end interface redist_plan_create_op

  !> redist_grid_plan_create(plan, comm, op, m, n, type, a, b, status [, options]):
  !>   B := alpha op(A) + beta B on the m x n window of b where a side is a block grid
  !>   (type(redist_block_grid)) and the other a block grid or a block-cyclic layout
  !>   (type(redist_layout_ext)); for REDIST_OP_T and _C A's window is n x m (redist.h:
  !>   redist_grid_plan_create). comm an integer handle or a type(MPI_Comm). Executed by
  !>   redist_plan_execute (a copy) and redist_plan_execute_op, or split, on local arrays
  !>   holding this process's blocks at their offsets; options%schedule REDIST_SCHEDULE_AUTO
  !>   or _ALL_AT_ONCE. Collective over comm; messages name C's fields
  !>   ("b->grid->owners[3]": the owners counted from 0 in column-major order).
  public :: redist_grid_plan_create
  interface redist_grid_plan_create
    module procedure grid_create_grid_grid, grid_create_grid_grid_f08, &
                     grid_create_grid_cyclic, grid_create_grid_cyclic_f08, &
                     grid_create_cyclic_grid, grid_create_cyclic_grid_f08
  end interface redist_grid_plan_create

  !> redist_grid_batch_create(plan, comm, ops, status [, options]): one plan for the
  !>   operations ops(1:k) (type(redist_grid_batch_op)) on block grids and block-cyclic layouts
  !>   moved together, one message per pair of processes (redist.h: redist_grid_batch_create;
  !>   both sides of an operation may be block-cyclic); comm an integer handle or a
  !>   type(MPI_Comm). Executed as a batch of redist_plan_create_batch
  !>   (redist_plan_execute_batch, or _batch_begin and redist_plan_execute_end), on local arrays
  !>   holding this process's blocks at their offsets. Messages name an operation as C does
  !>   (ops[k - 1] for ops(k)), or, for what only Fortran can see, as ops(k)%a%grid%owners.
  !>   Collective over comm.
  public :: redist_grid_batch_create
  interface redist_grid_batch_create
    module procedure grid_batch_create, grid_batch_create_f08
  end interface redist_grid_batch_create

  !> redist_plan_execute_op(plan, alpha, a, beta, b, status): B := alpha op(A) + beta B;
  !>   alpha and beta scalars of the arrays' type (that of the plan), the same on every process.
  public :: redist_plan_execute_op
  interface redist_plan_execute_op
    module procedure execute_op_real32, execute_op_real64, execute_op_complex32, &
                     execute_op_complex64, execute_op_int32, execute_op_int64
  end interface redist_plan_execute_op

  !> redist_plan_execute_begin(plan, a, b, status) / redist_plan_execute_op_begin(plan, alpha,
  !>   a, beta, b, status), then redist_plan_execute_end(plan, status): split execution.
  !>   a and b must be contiguous (they are used after the begin returns; a section is refused)
  !>   and, in the caller, TARGET or ASYNCHRONOUS; until the end, a must not change and b must not
  !>   be read or written.
  public :: redist_plan_execute_begin, redist_plan_execute_op_begin, redist_plan_execute_end
  interface redist_plan_execute_begin
    module procedure begin_real32, begin_real64, begin_complex32, begin_complex64, &
                     begin_int32, begin_int64
  end interface redist_plan_execute_begin
  interface redist_plan_execute_op_begin
    module procedure op_begin_real32, op_begin_real64, op_begin_complex32, op_begin_complex64, &
                     op_begin_int32, op_begin_int64
  end interface redist_plan_execute_op_begin

  integer, parameter :: CALL_OP = 1, CALL_BEGIN = 2, CALL_OP_BEGIN = 3

  !> redist_plan_create_batch(plan, comm, ops, status [, options]): one plan for the
  !>   operations ops(1:k) (type(redist_batch_op)) moved together, one message per pair of
  !>   processes (docs/guide.md, "Batches"); comm an integer handle or a type(MPI_Comm).
  !>   Messages name an operation as C does: ops[k - 1] for ops(k). Collective over comm.
  !>   ops of type(redist_batch_op_ext): layouts with first blocks or row-major local arrays
  !>   (redist_plan_create_batch_ext).
  !> redist_plan_execute_batch(plan, a, b, status [, alphas, betas]) and
  !>   redist_plan_execute_batch_begin(plan, a, b, status [, alphas, betas]), completed by
  !>   redist_plan_execute_end: for every k, B_k := alphas(k) op_k(A_k) + betas(k) B_k. a(k),
  !>   b(k) are type(c_ptr) to operation k's local arrays (c_loc(a1), ...; c_null_ptr where this
  !>   process owns nothing of that array); alphas(k), betas(k) are type(c_ptr) each to ONE
  !>   value of operation k's element type (the same on every process). Without alphas, alpha
  !>   = 1; without betas, beta = 0. a and b have one entry per operation, alphas and betas too
  !>   when given. After a begin the local arrays (TARGET or ASYNCHRONOUS in the caller) are
  !>   used until the end; the arrays of pointers and the values are read in the begin.
  public :: redist_plan_create_batch, redist_plan_execute_batch, redist_plan_execute_batch_begin
  interface redist_plan_create_batch
    module procedure create_batch, create_batch_f08, create_batch_ext, create_batch_ext_f08
  end interface redist_plan_create_batch

  public :: redist_block, redist_cyclic, redist_gen_block, redist_star

  !> redist_calibrate(comm, alpha, beta, status): measure the cost model's seconds per message
  !> and per byte (collective).
  public :: redist_calibrate
  interface redist_calibrate
    module procedure calibrate, calibrate_f08
  end interface redist_calibrate

  !> redist_propose_grid_ranks(comm, m, n, type, a, b, ranks, status [, bytes_kept_before,
  !>   bytes_kept_after]): the ranks of comm to put on a destination grid being created so that
  !>   the most of a copy of the m x n window from a to b stays on its own process (redist.h;
  !>   a copy of the whole window). The grid's shape is that of ranks (nprow x npcol): b's
  !>   ranks are ignored and may be unallocated. On success ranks(pr + 1, pc + 1) is the
  !>   proposed rank at grid position (pr, pc), the same on every process (b%ranks = ranks
  !>   then describes the grid), and the optional integer(int64) arguments receive the bytes
  !>   that stay on their process with the identity order (rank pr + pc*nprow at (pr, pc)) and
  !>   with the proposed one. On error nothing is changed. Collective over comm (an integer
  !>   handle or a type(MPI_Comm)).
  public :: redist_propose_grid_ranks
  interface redist_propose_grid_ranks
    module procedure propose_grid_ranks, propose_grid_ranks_f08
  end interface redist_propose_grid_ranks

  public :: redist_plan_destroy, redist_plan_get_info, redist_message, redist_status_name, &
            redist_get_version, &
            redist_schedule_name, redist_alloc, redist_free

  type, bind(c) :: c_layout
    integer(c_int64_t) :: m, n, mb, nb
    integer(c_int) :: nprow, npcol, rsrc, csrc
    type(c_ptr) :: ranks
    integer(c_int64_t) :: i, j, lld
  end type c_layout

  !> redist.h's redist_layout_ext.
  type, bind(c) :: c_layout_ext
    type(c_layout) :: layout
    integer(c_int64_t) :: imb, inb
    integer(c_int) :: order
  end type c_layout_ext

  !> redist.h's redist_grid_block and redist_block_grid.
  type, bind(c) :: c_grid_block
    integer(c_int64_t) :: block_row, block_col, offset, ld
  end type c_grid_block

  type, bind(c) :: c_block_grid
    integer(c_int64_t) :: m, n, block_rows, block_cols
    type(c_ptr) :: row_splits, col_splits, owners
    integer(c_int) :: row_major
    integer(c_int64_t) :: local_count
    type(c_ptr) :: local
    integer(c_int64_t) :: i, j
  end type c_block_grid

  !> The C arrays behind one c_block_grid, kept while the C call runs.
  type :: grid_arrays
    integer(c_int64_t), allocatable :: row_splits(:), col_splits(:)
    integer(c_int), allocatable :: owners(:)
    type(c_grid_block), allocatable :: local(:)
  end type grid_arrays

  type, bind(c) :: c_batch_op
    integer(c_int) :: op
    integer(c_int64_t) :: m, n
    integer(c_int) :: type
    type(c_ptr) :: a, b
    integer(c_int) :: region
  end type c_batch_op

  !> redist.h's redist_any_layout and redist_grid_batch_op (enums as c_int, as in c_batch_op).
  type, bind(c) :: c_any_layout
    integer(c_int) :: kind
    type(c_ptr) :: cyclic, grid
  end type c_any_layout

  type, bind(c) :: c_grid_batch_op
    integer(c_int) :: op
    integer(c_int64_t) :: m, n
    integer(c_int) :: type
    type(c_ptr) :: a, b
  end type c_grid_batch_op

  !> The rank map of one C layout, kept while the C call runs.
  type :: rank_map
    integer(c_int), allocatable :: ranks(:)
  end type rank_map

  type, bind(c) :: c_nd_layout
    integer(c_int) :: ndims, order
    type(c_ptr) :: gsizes, kinds, blocks, gen_block_extents, psizes, ranks, starts, subsizes, &
                   local_extents
  end type c_nd_layout

  !> The C arrays behind one c_nd_layout, kept while the C call runs.
  type :: nd_arrays
    integer(c_int64_t), allocatable :: gsizes(:), blocks(:), gen_block_extents(:), starts(:), &
                                       subsizes(:), local_extents(:)
    integer(c_int), allocatable :: kinds(:), psizes(:), ranks(:)
  end type nd_arrays

  interface
    function c_nd_plan_create(comm, type, a, b, perm, options, plan) &
        bind(c, name='redist_f_nd_plan_create') result(status)
      import :: c_int, c_nd_layout, c_ptr
      integer(c_int), value :: comm, type
      type(c_nd_layout), intent(in) :: a, b
      type(c_ptr), value :: perm, options
      type(c_ptr), intent(out) :: plan
      integer(c_int) :: status
    end function c_nd_plan_create

    function c_plan_create_op(comm, op, m, n, type, a, b, region, options, plan) &
        bind(c, name='redist_f_plan_create_op') result(status)
      import :: c_int, c_int64_t, c_layout, c_ptr
      integer(c_int), value :: comm, op
      integer(c_int64_t), value :: m, n
      integer(c_int), value :: type, region
      type(c_layout), intent(in) :: a, b
      type(c_ptr), value :: options
      type(c_ptr), intent(out) :: plan
      integer(c_int) :: status
    end function c_plan_create_op

    function c_plan_create_ext(comm, m, n, type, a, b, region, unit_diag, options, plan) &
        bind(c, name='redist_f_plan_create_ext') result(status)
      import :: c_int, c_int64_t, c_layout_ext, c_ptr
      integer(c_int), value :: comm
      integer(c_int64_t), value :: m, n
      integer(c_int), value :: type, region, unit_diag
      type(c_layout_ext), intent(in) :: a, b
      type(c_ptr), value :: options
      type(c_ptr), intent(out) :: plan
      integer(c_int) :: status
    end function c_plan_create_ext

    function c_plan_create_op_ext(comm, op, m, n, type, a, b, region, options, plan) &
        bind(c, name='redist_f_plan_create_op_ext') result(status)
      import :: c_int, c_int64_t, c_layout_ext, c_ptr
      integer(c_int), value :: comm, op
      integer(c_int64_t), value :: m, n
      integer(c_int), value :: type, region
      type(c_layout_ext), intent(in) :: a, b
      type(c_ptr), value :: options
      type(c_ptr), intent(out) :: plan
      integer(c_int) :: status
    end function c_plan_create_op_ext

    !> ops: redist_batch_op_ext, whose fields are redist_batch_op's (a, b point to
    !> c_layout_ext).
    function c_plan_create_batch_ext(comm, count, ops, options, plan) &
        bind(c, name='redist_f_plan_create_batch_ext') result(status)
      import :: c_batch_op, c_int, c_ptr
      integer(c_int), value :: comm, count
      type(c_batch_op), intent(in) :: ops(*)
      type(c_ptr), value :: options
      type(c_ptr), intent(out) :: plan
      integer(c_int) :: status
    end function c_plan_create_batch_ext

    function c_grid_plan_create(comm, op, m, n, type, a_kind, a_cyclic, a_grid, b_kind, &
                                b_cyclic, b_grid, options, plan) &
        bind(c, name='redist_f_grid_plan_create') result(status)
      import :: c_block_grid, c_int, c_int64_t, c_layout_ext, c_ptr
      integer(c_int), value :: comm, op
      integer(c_int64_t), value :: m, n
      integer(c_int), value :: type, a_kind, b_kind
      type(c_layout_ext), intent(in) :: a_cyclic, b_cyclic
      type(c_block_grid), intent(in) :: a_grid, b_grid
      type(c_ptr), value :: options
      type(c_ptr), intent(out) :: plan
      integer(c_int) :: status
    end function c_grid_plan_create

    function c_grid_batch_create(comm, count, ops, options, plan) &
        bind(c, name='redist_f_grid_batch_create') result(status)
      import :: c_grid_batch_op, c_int, c_ptr
      integer(c_int), value :: comm, count
      type(c_grid_batch_op), intent(in) :: ops(*)
      type(c_ptr), value :: options
      type(c_ptr), intent(out) :: plan
      integer(c_int) :: status
    end function c_grid_batch_create

    function c_plan_create_batch(comm, count, ops, options, plan) &
        bind(c, name='redist_f_plan_create_batch') result(status)
      import :: c_batch_op, c_int, c_ptr
      integer(c_int), value :: comm, count
      type(c_batch_op), intent(in) :: ops(*)
      type(c_ptr), value :: options
      type(c_ptr), intent(out) :: plan
      integer(c_int) :: status
    end function c_plan_create_batch

    function c_plan_execute_batch(plan, alphas, a, betas, b) &
        bind(c, name='redist_plan_execute_batch') result(status)
      import :: c_int, c_ptr
      type(c_ptr), value :: plan, alphas, a, betas, b
      integer(c_int) :: status
    end function c_plan_execute_batch

    function c_plan_execute_batch_begin(plan, alphas, a, betas, b) &
        bind(c, name='redist_plan_execute_batch_begin') result(status)
      import :: c_int, c_ptr
      type(c_ptr), value :: plan, alphas, a, betas, b
      integer(c_int) :: status
    end function c_plan_execute_batch_begin

    function c_plan_execute_op(plan, alpha, a, beta, b) bind(c, name='redist_plan_execute_op') &
        result(status)
      import :: c_int, c_ptr
      type(c_ptr), value :: plan, alpha, a, beta, b
      integer(c_int) :: status
    end function c_plan_execute_op

    function c_plan_execute_begin(plan, a, b) bind(c, name='redist_plan_execute_begin') &
        result(status)
      import :: c_int, c_ptr
      type(c_ptr), value :: plan, a, b
      integer(c_int) :: status
    end function c_plan_execute_begin

    function c_plan_execute_op_begin(plan, alpha, a, beta, b) &
        bind(c, name='redist_plan_execute_op_begin') result(status)
      import :: c_int, c_ptr
      type(c_ptr), value :: plan, alpha, a, beta, b
      integer(c_int) :: status
    end function c_plan_execute_op_begin

    function c_plan_execute_end(plan) bind(c, name='redist_plan_execute_end') result(status)
      import :: c_int, c_ptr
      type(c_ptr), value :: plan
      integer(c_int) :: status
    end function c_plan_execute_end

    function c_plan_create(comm, m, n, type, a, b, region, unit_diag, options, plan) &
        bind(c, name='redist_f_plan_create') result(status)
      import :: c_int, c_int64_t, c_layout, c_ptr
      integer(c_int), value :: comm
      integer(c_int64_t), value :: m, n
      integer(c_int), value :: type, region, unit_diag
      type(c_layout), intent(in) :: a, b
      type(c_ptr), value :: options
      type(c_ptr), intent(out) :: plan
      integer(c_int) :: status
    end function c_plan_create

    function c_plan_create_desc(m, n, type, desca, ia, ja, descb, ib, jb, ictxt, region, &
                                unit_diag, options, plan) &
        bind(c, name='redist_f_plan_create_desc') result(status)
      import :: c_int, c_ptr
      integer(c_int), value :: m, n, ia, ja, ib, jb, ictxt, type, region, unit_diag
      integer(c_int), intent(in) :: desca(11), descb(11)
      type(c_ptr), value :: options
      type(c_ptr), intent(out) :: plan
      integer(c_int) :: status
    end function c_plan_create_desc

    function c_plan_execute(plan, a, b) bind(c, name='redist_plan_execute') result(status)
      import :: c_int, c_ptr
      type(c_ptr), value :: plan, a, b
      integer(c_int) :: status
    end function c_plan_execute

    function c_plan_destroy(plan) bind(c, name='redist_plan_destroy') result(status)
      import :: c_int, c_ptr
      type(c_ptr), intent(inout) :: plan
      integer(c_int) :: status
    end function c_plan_destroy

    function c_plan_get_info(plan, info) bind(c, name='redist_plan_get_info') result(status)
      import :: c_int, c_ptr, redist_plan_info
      type(c_ptr), value :: plan
      type(redist_plan_info), intent(out) :: info
      integer(c_int) :: status
    end function c_plan_get_info

    function c_alloc(bytes, memory) bind(c, name='redist_alloc') result(status)
      import :: c_int, c_ptr, c_size_t
      integer(c_size_t), value :: bytes
      type(c_ptr), intent(out) :: memory
      integer(c_int) :: status
    end function c_alloc

    function c_free(memory) bind(c, name='redist_free') result(status)
      import :: c_int, c_ptr
      type(c_ptr), value :: memory
      integer(c_int) :: status
    end function c_free

    function c_propose_grid_ranks(comm, m, n, type, a, b, ranks, bytes_kept_before, &
                                  bytes_kept_after) &
        bind(c, name='redist_f_propose_grid_ranks') result(status)
      import :: c_int, c_int64_t, c_layout
      integer(c_int), value :: comm
      integer(c_int64_t), value :: m, n
      integer(c_int), value :: type
      type(c_layout), intent(in) :: a, b
      integer(c_int), intent(out) :: ranks(*)
      integer(c_int64_t), intent(out) :: bytes_kept_before, bytes_kept_after
      integer(c_int) :: status
    end function c_propose_grid_ranks

    function c_calibrate(comm, alpha, beta) bind(c, name='redist_f_calibrate') result(status)
      import :: c_double, c_int
      integer(c_int), value :: comm
      real(c_double), intent(out) :: alpha, beta
      integer(c_int) :: status
    end function c_calibrate

    function c_message() bind(c, name='redist_f_message') result(text)
      import :: c_ptr
      type(c_ptr) :: text
    end function c_message

    subroutine c_set_message(text) bind(c, name='redist_f_set_message')
      import :: c_char
      character(kind=c_char), intent(in) :: text(*)
    end subroutine c_set_message

    subroutine c_refuse_next_execution(text) &
        bind(c, name='redist_internal_refuse_next_execution')
      import :: c_char
      character(kind=c_char), intent(in) :: text(*)
    end subroutine c_refuse_next_execution

    function c_status_name(status) bind(c, name='redist_status_name') result(text)
      import :: c_int, c_ptr
      integer(c_int), value :: status
      type(c_ptr) :: text
    end function c_status_name

    function c_schedule_name(schedule) bind(c, name='redist_schedule_name') result(text)
      import :: c_int, c_ptr
      integer(c_int), value :: schedule
      type(c_ptr) :: text
    end function c_schedule_name

    function c_get_version(major, minor, patch) bind(c, name='redist_get_version') result(status)
      import :: c_int
      integer(c_int), intent(out) :: major, minor, patch
      integer(c_int) :: status
    end function c_get_version

    function c_type_size(type) bind(c, name='redist_type_size') result(bytes)
      import :: c_int
      integer(c_int), value :: type
      integer(c_int) :: bytes
    end function c_type_size

    function c_strlen(text) bind(c, name='strlen') result(length)
      import :: c_ptr, c_size_t
      type(c_ptr), value :: text
      integer(c_size_t) :: length
    end function c_strlen
  end interface

contains

  subroutine create_from_layouts(plan, comm, m, n, type, a, b, status, region, unit_diag, options)
    type(redist_plan), intent(out) :: plan
    integer, intent(in) :: comm, m, n, type
    type(redist_layout), intent(in) :: a, b
    integer, intent(out) :: status
    integer, intent(in), optional :: region
    logical, intent(in), optional :: unit_diag
    type(redist_options), intent(in), optional :: options
    call create_either(plan, comm, m, n, type, redist_layout_ext(redist_layout=a), &
                       redist_layout_ext(redist_layout=b), .false., status, region, unit_diag, &
                       options)
  end subroutine create_from_layouts

  subroutine create_from_layouts_f08(plan, comm, m, n, type, a, b, status, region, unit_diag, &
                                     options)
    type(redist_plan), intent(out) :: plan
    type(MPI_Comm), intent(in) :: comm
    integer, intent(in) :: m, n, type
    type(redist_layout), intent(in) :: a, b
    integer, intent(out) :: status
    integer, intent(in), optional :: region
    logical, intent(in), optional :: unit_diag
    type(redist_options), intent(in), optional :: options

    call create_from_layouts(plan, comm%MPI_VAL, m, n, type, a, b, status, region, unit_diag, &
                             options)
  end subroutine create_from_layouts_f08

  subroutine create_from_descriptors(plan, m, n, type, desca, ia, ja, descb, ib, jb, ictxt, &
                                     status, region, unit_diag, options)
    type(redist_plan), intent(out) :: plan
    integer, intent(in) :: m, n, type, desca(:), ia, ja, descb(:), ib, jb, ictxt
    integer, intent(out) :: status
    integer, intent(in), optional :: region
    logical, intent(in), optional :: unit_diag
    type(redist_options), intent(in), optional, target :: options
    type(c_ptr) :: options_ptr

    call c_set_message(c_null_char)
    options_ptr = options_address(options)
    status = c_plan_create_desc(int(m, c_int), int(n, c_int), int(type, c_int), &
                                c_descriptor(desca), int(ia, c_int), int(ja, c_int), &
                                c_descriptor(descb), int(ib, c_int), int(jb, c_int), &
                                int(ictxt, c_int), region_code(region), diag_code(unit_diag), &
                                options_ptr, plan%handle)
    call set_plan_type(plan, status, type)
  end subroutine create_from_descriptors

  !> A descriptor of 9 or 11 integers as the C call reads it: 11 integers, zeros past the end.
  function c_descriptor(desc) result(c)
    integer, intent(in) :: desc(:)
    integer(c_int) :: c(11)
    c = 0
    c(1:min(11, size(desc))) = int(desc(1:min(11, size(desc))), c_int)
  end function c_descriptor

  subroutine create_ext(plan, comm, m, n, type, a, b, status, region, unit_diag, options)
    type(redist_plan), intent(out) :: plan
    integer, intent(in) :: comm, m, n, type
    type(redist_layout_ext), intent(in) :: a, b
    integer, intent(out) :: status
    integer, intent(in), optional :: region
    logical, intent(in), optional :: unit_diag
    type(redist_options), intent(in), optional :: options
    call create_either(plan, comm, m, n, type, a, b, .true., status, region, unit_diag, options)
  end subroutine create_ext

  !> The plan of a copy (redist_plan_create / _opt) or, with `op`, of B := alpha op(A) + beta B
  !> (redist_plan_create_op) on layouts a, b given to C as redist_layout (their C layouts'
  !> first member), or with `ext` as redist_layout_ext (redist_plan_create_ext, _op_ext).
  subroutine create_either(plan, comm, m, n, type, a, b, ext, status, region, unit_diag, &
                           options, op)
    type(redist_plan), intent(inout) :: plan
    integer, intent(in) :: comm, m, n, type
    type(redist_layout_ext), intent(in) :: a, b
    logical, intent(in) :: ext
    integer, intent(out) :: status
    integer, intent(in), optional :: region
    logical, intent(in), optional :: unit_diag
    type(redist_options), intent(in), optional :: options
    integer, intent(in), optional :: op
    integer(c_int), allocatable, target :: ranks_a(:), ranks_b(:)
    type(c_layout_ext) :: ca, cb
    integer(c_int) :: c_comm, c_type
    integer(c_int64_t) :: c_m, c_n

    call c_set_message(c_null_char)
    ca = to_c_layout_ext(a, ranks_a)
    cb = to_c_layout_ext(b, ranks_b)
    c_comm = int(comm, c_int)
    c_type = int(type, c_int)
    c_m = int(m, c_int64_t)
    c_n = int(n, c_int64_t)
    if (.not. present(op) .and. ext) then
      status = c_plan_create_ext(c_comm, c_m, c_n, c_type, ca, cb, region_code(region), &
                                 diag_code(unit_diag), options_address(options), plan%handle)
    else if (.not. present(op)) then
      status = c_plan_create(c_comm, c_m, c_n, c_type, ca%layout, cb%layout, &
                             region_code(region), diag_code(unit_diag), &
                             options_address(options), plan%handle)
    else if (ext) then
      status = c_plan_create_op_ext(c_comm, int(op, c_int), c_m, c_n, c_type, ca, cb, &
                                    region_code(region), options_address(options), plan%handle)
    else
      status = c_plan_create_op(c_comm, int(op, c_int), c_m, c_n, c_type, ca%layout, cb%layout, &
                                region_code(region), options_address(options), plan%handle)
    end if
    call set_plan_type(plan, status, type)
  end subroutine create_either

  subroutine create_ext_f08(plan, comm, m, n, type, a, b, status, region, unit_diag, options)
    type(redist_plan), intent(out) :: plan
    type(MPI_Comm), intent(in) :: comm
    integer, intent(in) :: m, n, type
    type(redist_layout_ext), intent(in) :: a, b
    integer, intent(out) :: status
    integer, intent(in), optional :: region
    logical, intent(in), optional :: unit_diag
    type(redist_options), intent(in), optional :: options
    call create_ext(plan, comm%MPI_VAL, m, n, type, a, b, status, region, unit_diag, options)
  end subroutine create_ext_f08

  subroutine set_plan_type(plan, status, type)
    type(redist_plan), intent(inout) :: plan
    integer, intent(in) :: status, type
    if (status /= REDIST_SUCCESS) return
    plan%element_bytes = c_type_size(int(type, c_int))
    plan%type = type
  end subroutine set_plan_type

  !> The C description of `layout`; `ranks` holds the rank map while the C layout is in use.
  function to_c_layout(layout, ranks) result(c)
    type(redist_layout), intent(in) :: layout
    integer(c_int), allocatable, target, intent(out) :: ranks(:)
    type(c_layout) :: c

    c = c_layout(m=layout%m, n=layout%n, mb=layout%mb, nb=layout%nb, nprow=1, npcol=1, &
                 rsrc=layout%rsrc, csrc=layout%csrc, ranks=c_null_ptr, i=layout%ia - 1, &
                 j=layout%ja - 1, lld=layout%lld)
    if (allocated(layout%ranks)) then
      c%nprow = size(layout%ranks, 1)
      c%npcol = size(layout%ranks, 2)
      ranks = reshape(layout%ranks, [size(layout%ranks)])
      if (size(ranks) > 0) c%ranks = c_loc(ranks)
    end if
  end function to_c_layout

  !> The C description of `layout` with its first blocks and storage order.
  function to_c_layout_ext(layout, ranks) result(c)
    type(redist_layout_ext), intent(in) :: layout
    integer(c_int), allocatable, target, intent(out) :: ranks(:)
    type(c_layout_ext) :: c
    c%layout = to_c_layout(layout%redist_layout, ranks)
    c%imb = layout%imb
    c%inb = layout%inb
    c%order = int(layout%order, c_int)
  end function to_c_layout_ext

  integer(c_int) function region_code(region)
    integer, intent(in), optional :: region
    region_code = REDIST_REGION_FULL
    if (present(region)) region_code = int(region, c_int)
  end function region_code

  integer(c_int) function diag_code(unit_diag)
    logical, intent(in), optional :: unit_diag
    diag_code = 0
    if (present(unit_diag)) then
      if (unit_diag) diag_code = 1
    end if
  end function diag_code

  !> Executes with the addresses of the local arrays. An array whose element size is not the
  !> plan's is never touched: this process passes no array (redist then fails collectively if
  !> this process owns elements, and needs none from it otherwise) and reports the mismatch.
  subroutine execute_addresses(plan, a, b, element_bytes, status)
    type(redist_plan), intent(in) :: plan
    type(c_ptr), intent(in) :: a, b
    integer, intent(in) :: element_bytes
    integer, intent(out) :: status
    character(len=160) :: text

    call c_set_message(c_null_char)
    if (element_bytes == plan%element_bytes .or. .not. c_associated(plan%handle) .or. &
        plan%batch_count >= 0) then
      status = c_plan_execute(plan%handle, a, b)
      return
    end if
    status = c_plan_execute(plan%handle, c_null_ptr, c_null_ptr)
    if (status == REDIST_SUCCESS .or. status == REDIST_ERR_ARGUMENT) then
      write (text, '(a, i0, a, i0, a)') 'redist_plan_execute: arguments a, b have ', &
        element_bytes, '-byte elements, the plan was created for ', plan%element_bytes, &
        '-byte elements'
      call c_set_message(trim(text)//c_null_char)
      status = REDIST_ERR_ARGUMENT
    end if
  end subroutine execute_addresses

  subroutine execute_real32(plan, a, b, status)
    type(redist_plan), intent(in) :: plan
    real(real32), intent(in), target, contiguous :: a(..)
    real(real32), intent(inout), target, contiguous :: b(..)
    integer, intent(out) :: status
    call execute_addresses(plan, c_loc(a), c_loc(b), storage_size(a) / 8, status)
  end subroutine execute_real32

  subroutine execute_real64(plan, a, b, status)
    type(redist_plan), intent(in) :: plan
    real(real64), intent(in), target, contiguous :: a(..)
    real(real64), intent(inout), target, contiguous :: b(..)
    integer, intent(out) :: status
    call execute_addresses(plan, c_loc(a), c_loc(b), storage_size(a) / 8, status)
  end subroutine execute_real64

  subroutine execute_complex32(plan, a, b, status)
    type(redist_plan), intent(in) :: plan
    complex(real32), intent(in), target, contiguous :: a(..)
    complex(real32), intent(inout), target, contiguous :: b(..)
    integer, intent(out) :: status
    call execute_addresses(plan, c_loc(a), c_loc(b), storage_size(a) / 8, status)
  end subroutine execute_complex32

  subroutine execute_complex64(plan, a, b, status)
    type(redist_plan), intent(in) :: plan
    complex(real64), intent(in), target, contiguous :: a(..)
    complex(real64), intent(inout), target, contiguous :: b(..)
    integer, intent(out) :: status
    call execute_addresses(plan, c_loc(a), c_loc(b), storage_size(a) / 8, status)
  end subroutine execute_complex64

  subroutine execute_int32(plan, a, b, status)
    type(redist_plan), intent(in) :: plan
    integer(int32), intent(in), target, contiguous :: a(..)
    integer(int32), intent(inout), target, contiguous :: b(..)
    integer, intent(out) :: status
    call execute_addresses(plan, c_loc(a), c_loc(b), storage_size(a) / 8, status)
  end subroutine execute_int32

  subroutine execute_int64(plan, a, b, status)
    type(redist_plan), intent(in) :: plan
    integer(int64), intent(in), target, contiguous :: a(..)
    integer(int64), intent(inout), target, contiguous :: b(..)
    integer, intent(out) :: status
    call execute_addresses(plan, c_loc(a), c_loc(b), storage_size(a) / 8, status)
  end subroutine execute_int64


  !> HPF's BLOCK, or BLOCK(k) with k given (k * p >= the extent).
  function redist_block(k) result(d)
    integer, intent(in), optional :: k
    type(redist_distribution) :: d
    d%kind = REDIST_DIST_BLOCK
    if (present(k)) d%block = k
  end function redist_block

  !> HPF's CYCLIC (k = 1) or CYCLIC(k).
  function redist_cyclic(k) result(d)
    integer, intent(in), optional :: k
    type(redist_distribution) :: d
    d%kind = REDIST_DIST_CYCLIC
    if (present(k)) d%block = k
  end function redist_cyclic

  !> HPF's GEN_BLOCK(extents): grid coordinate c holds extents(c + 1) consecutive indices.
  function redist_gen_block(extents) result(d)
    integer, intent(in) :: extents(:)
    type(redist_distribution) :: d
    d%kind = REDIST_DIST_GEN_BLOCK
    allocate (d%extents, source=int(extents, int64))
  end function redist_gen_block

  !> HPF's '*': the dimension is not distributed (its grid extent must be 1).
  function redist_star() result(d)
    type(redist_distribution) :: d
    d%kind = REDIST_DIST_NONE
  end function redist_star

  !> A distribution from HPF's spelling, in any case: 'BLOCK', 'BLOCK(k)', 'CYCLIC',
  !> 'CYCLIC(k)', '*', or 'GEN_BLOCK' with `extents`. Anything else gives a distribution of kind
  !> -1, which plan creation reports (on every process) quoting the text.
  function distribution_from_text(text, extents) result(d)
    character(len=*), intent(in) :: text
    integer, intent(in), optional :: extents(:)
    type(redist_distribution) :: d
    character(len=len(text)) :: upper
    integer :: k, open, io

    upper = adjustl(text)
    do k = 1, len(upper)
      if (upper(k:k) >= 'a' .and. upper(k:k) <= 'z') &
        upper(k:k) = achar(iachar(upper(k:k)) - iachar('a') + iachar('A'))
    end do
    d%kind = -1
    open = index(upper, '(')
    if (open == 0) then
      select case (trim(upper))
      case ('BLOCK')
        d%kind = REDIST_DIST_BLOCK
      case ('CYCLIC')
        d%kind = REDIST_DIST_CYCLIC
      case ('*')
        d%kind = REDIST_DIST_NONE
      case ('GEN_BLOCK')
        if (present(extents)) d = redist_gen_block(extents)
      end select
    else if (upper(len_trim(upper):len_trim(upper)) == ')' .and. &
             verify(upper(open + 1:len_trim(upper) - 1), ' 0123456789') == 0 .and. &
             len_trim(upper(open + 1:len_trim(upper) - 1)) > 0) then
      read (upper(open + 1:len_trim(upper) - 1), *, iostat=io) d%block
      if (io == 0 .and. d%block > 0) then
        select case (trim(upper(1:open - 1)))
        case ('BLOCK')
          d%kind = REDIST_DIST_BLOCK
        case ('CYCLIC')
          d%kind = REDIST_DIST_CYCLIC
        end select
      end if
    end if
    if (d%kind == -1) then
      d%block = 0
      d%text = trim(text)
    end if
  end function distribution_from_text

  function make_nd_layout(gsizes, dist, psizes, ranks, starts, subsizes, local_extents, &
                          order) result(layout)
    integer, intent(in) :: gsizes(:)
    type(redist_distribution), intent(in) :: dist(:)
    integer, intent(in) :: psizes(:)
    integer, intent(in), optional :: ranks(:), starts(:), subsizes(:), local_extents(:), order
    type(redist_nd_layout) :: layout
    allocate (layout%gsizes, source=int(gsizes, int64))
    allocate (layout%dist, source=dist)
    allocate (layout%psizes, source=psizes)
    if (present(ranks)) allocate (layout%ranks, source=ranks)
    if (present(starts)) allocate (layout%starts, source=int(starts, int64))
    if (present(subsizes)) allocate (layout%subsizes, source=int(subsizes, int64))
    if (present(local_extents)) allocate (layout%local_extents, source=int(local_extents, int64))
    if (present(order)) layout%order = order
  end function make_nd_layout

  subroutine nd_create(plan, comm, type, a, b, status, perm, options)
    type(redist_plan), intent(out) :: plan
    integer, intent(in) :: comm, type
    type(redist_nd_layout), intent(in) :: a, b
    integer, intent(out) :: status
    integer, intent(in), optional :: perm(:)
    type(redist_options), intent(in), optional, target :: options
    type(nd_arrays), target :: arrays_a, arrays_b
    integer(c_int), allocatable, target :: perm0(:)
    type(c_nd_layout) :: c_a, c_b
    type(c_ptr) :: options_ptr, perm_ptr
    character(len=:), allocatable :: problem

    call c_set_message(c_null_char)
    problem = ''
    call to_c_nd_layout(a, 'a', arrays_a, c_a, problem)
    call to_c_nd_layout(b, 'b', arrays_b, c_b, problem)
    perm_ptr = c_null_ptr
    if (present(perm)) then
      if (c_b%ndims /= size(perm) .and. len(problem) == 0) &
        problem = 'perm: has '//decimal(size(perm, kind=int64))//' entries, b has '// &
                  decimal(int(c_b%ndims, int64))//' dimensions'
      allocate (perm0, source=int(perm - 1, c_int))
      if (size(perm0) > 0) perm_ptr = c_loc(perm0)
    end if
    ! A problem seen here makes the C call fail here (ndims 0) and on the other processes.
    if (len(problem) > 0) c_a%ndims = 0
    options_ptr = options_address(options)
    status = c_nd_plan_create(int(comm, c_int), int(type, c_int), c_a, c_b, perm_ptr, &
                              options_ptr, plan%handle)
    if (len(problem) > 0 .and. status == REDIST_ERR_ARGUMENT) &
      call c_set_message('redist_nd_plan_create: '//problem//c_null_char)
    call set_plan_type(plan, status, type)
  end subroutine nd_create

  subroutine nd_create_f08(plan, comm, type, a, b, status, perm, options)
    type(redist_plan), intent(out) :: plan
    type(MPI_Comm), intent(in) :: comm
    integer, intent(in) :: type
    type(redist_nd_layout), intent(in) :: a, b
    integer, intent(out) :: status
    integer, intent(in), optional :: perm(:)
    type(redist_options), intent(in), optional :: options
    call nd_create(plan, comm%MPI_VAL, type, a, b, status, perm, options)
  end subroutine nd_create_f08

  !> The C description of `layout` (argument `name`), its arrays in `arrays`. The first
  !> inconsistency of the arrays' sizes (what the C side cannot see) goes to `problem` if that
  !> is empty.
  subroutine to_c_nd_layout(layout, name, arrays, c, problem)
    type(redist_nd_layout), intent(in) :: layout
    character(len=*), intent(in) :: name
    type(nd_arrays), intent(inout), target :: arrays
    type(c_nd_layout), intent(out) :: c
    character(len=:), allocatable, intent(inout) :: problem
    integer :: ndims, d, positions

    c = c_nd_layout(ndims=0, order=int(layout%order, c_int), gsizes=c_null_ptr, &
                    kinds=c_null_ptr, blocks=c_null_ptr, gen_block_extents=c_null_ptr, &
                    psizes=c_null_ptr, ranks=c_null_ptr, starts=c_null_ptr, &
                    subsizes=c_null_ptr, local_extents=c_null_ptr)
    if (.not. allocated(layout%gsizes)) then
      call note(name//'%gsizes: not allocated')
      return
    end if
    ndims = size(layout%gsizes)
    if (ndims < 1 .or. ndims > 7) then
      call note(name//'%gsizes: '//decimal(int(ndims, int64))//' dimensions, not 1..7')
      return
    end if
    if (.not. has_size(allocated(layout%dist), size(layout%dist, kind=int64), 'dist')) return
    if (.not. has_size(allocated(layout%psizes), size(layout%psizes, kind=int64), 'psizes')) &
      return
    allocate (arrays%gsizes, source=int(layout%gsizes, c_int64_t))
    allocate (arrays%psizes, source=int(layout%psizes, c_int))
    allocate (arrays%kinds(ndims), arrays%blocks(ndims))
    allocate (arrays%gen_block_extents(0))
    do d = 1, ndims
      if (allocated(layout%dist(d)%text)) then
        call note(name//'%dist('//decimal(int(d, int64))//'): "'//layout%dist(d)%text// &
                  '" is not BLOCK, BLOCK(k), CYCLIC, CYCLIC(k), * or GEN_BLOCK with extents')
        return
      end if
      arrays%kinds(d) = int(layout%dist(d)%kind, c_int)
      arrays%blocks(d) = int(layout%dist(d)%block, c_int64_t)
      if (layout%dist(d)%kind /= REDIST_DIST_GEN_BLOCK) cycle
      if (.not. allocated(layout%dist(d)%extents)) then
        call note(name//'%dist('//decimal(int(d, int64))//')%extents: not allocated')
        return
      end if
      if (size(layout%dist(d)%extents) /= max(1, layout%psizes(d))) then
        call note(name//'%dist('//decimal(int(d, int64))//')%extents: '// &
                  decimal(size(layout%dist(d)%extents, kind=int64))// &
                  ' entries, not psizes('//decimal(int(d, int64))//')')
        return
      end if
      arrays%gen_block_extents = [arrays%gen_block_extents, &
                                  int(layout%dist(d)%extents, c_int64_t)]
    end do
    if (allocated(layout%ranks)) then
      positions = product(max(1, layout%psizes))
      if (size(layout%ranks) /= positions) then
        call note(name//'%ranks: '//decimal(size(layout%ranks, kind=int64))// &
                  ' entries, the grid has '//decimal(int(positions, int64))//' positions')
        return
      end if
      allocate (arrays%ranks, source=int(layout%ranks, c_int))
    end if
    if (allocated(layout%starts) .neqv. allocated(layout%subsizes)) then
      call note(name//'%starts, '//name//'%subsizes: give both or neither')
      return
    end if
    if (allocated(layout%starts)) then
      if (.not. has_size(.true., size(layout%starts, kind=int64), 'starts')) return
      if (.not. has_size(.true., size(layout%subsizes, kind=int64), 'subsizes')) return
      allocate (arrays%starts, source=int(layout%starts - 1, c_int64_t))
      allocate (arrays%subsizes, source=int(layout%subsizes, c_int64_t))
    end if
    if (allocated(layout%local_extents)) then
      if (.not. has_size(.true., size(layout%local_extents, kind=int64), 'local_extents')) &
        return
      allocate (arrays%local_extents, source=int(layout%local_extents, c_int64_t))
    end if
    c%ndims = int(ndims, c_int)
    c%gsizes = c_loc(arrays%gsizes)
    c%kinds = c_loc(arrays%kinds)
    c%blocks = c_loc(arrays%blocks)
    if (size(arrays%gen_block_extents) > 0) c%gen_block_extents = c_loc(arrays%gen_block_extents)
    c%psizes = c_loc(arrays%psizes)
    if (allocated(arrays%ranks)) c%ranks = c_loc(arrays%ranks)
    if (allocated(arrays%starts)) then
      c%starts = c_loc(arrays%starts)
      c%subsizes = c_loc(arrays%subsizes)
    end if
    if (allocated(arrays%local_extents)) c%local_extents = c_loc(arrays%local_extents)

  contains

    subroutine note(text)
      character(len=*), intent(in) :: text
      if (len(problem) == 0) problem = text
    end subroutine note

    logical function has_size(present, entries, field)
      logical, intent(in) :: present
      integer(int64), intent(in) :: entries
      character(len=*), intent(in) :: field
      has_size = present .and. entries == ndims
      if (.not. present) then
        call note(name//'%'//field//': not allocated')
      else if (.not. has_size) then
        call note(name//'%'//field//': '//decimal(entries)//' entries, '//name// &
                  '%gsizes has '//decimal(int(ndims, int64)))
      end if
    end function has_size
  end subroutine to_c_nd_layout

  function decimal(value) result(text)
    integer(int64), intent(in) :: value
    character(len=:), allocatable :: text
    character(len=24) :: buffer
    write (buffer, '(i0)') value
    text = trim(buffer)
  end function decimal

  subroutine create_op(plan, comm, op, m, n, type, a, b, status, region, options)
    type(redist_plan), intent(out) :: plan
    integer, intent(in) :: comm, op, m, n, type
    type(redist_layout), intent(in) :: a, b
    integer, intent(out) :: status
    integer, intent(in), optional :: region
    type(redist_options), intent(in), optional :: options
    call create_either(plan, comm, m, n, type, redist_layout_ext(redist_layout=a), &
                       redist_layout_ext(redist_layout=b), .false., status, region, &
                       options=options, op=op)
  end subroutine create_op

  subroutine create_op_f08(plan, comm, op, m, n, type, a, b, status, region, options)
    type(redist_plan), intent(out) :: plan
    type(MPI_Comm), intent(in) :: comm
    integer, intent(in) :: op, m, n, type
    type(redist_layout), intent(in) :: a, b
    integer, intent(out) :: status
    integer, intent(in), optional :: region
    type(redist_options), intent(in), optional :: options
    call create_op(plan, comm%MPI_VAL, op, m, n, type, a, b, status, region, options)
  end subroutine create_op_f08

  subroutine create_op_ext(plan, comm, op, m, n, type, a, b, status, region, options)
    type(redist_plan), intent(out) :: plan
    integer, intent(in) :: comm, op, m, n, type
    type(redist_layout_ext), intent(in) :: a, b
    integer, intent(out) :: status
    integer, intent(in), optional :: region
    type(redist_options), intent(in), optional :: options
    call create_either(plan, comm, m, n, type, a, b, .true., status, region, options=options, &
                       op=op)
  end subroutine create_op_ext

  subroutine create_op_ext_f08(plan, comm, op, m, n, type, a, b, status, region, options)
    type(redist_plan), intent(out) :: plan
    type(MPI_Comm), intent(in) :: comm
    integer, intent(in) :: op, m, n, type
    type(redist_layout_ext), intent(in) :: a, b
    integer, intent(out) :: status
    integer, intent(in), optional :: region
    type(redist_options), intent(in), optional :: options
    call create_op_ext(plan, comm%MPI_VAL, op, m, n, type, a, b, status, region, options)
  end subroutine create_op_ext_f08

  !> The address of a's first element if a is contiguous, else c_null_ptr (never used then).
  function address(a) result(pointer)
    type(*), intent(in), target :: a(..)
    type(c_ptr) :: pointer
    pointer = c_null_ptr
    if (is_contiguous(a)) pointer = c_loc(a)
  end function address

  !> Runs redist_plan_execute_op (which = CALL_OP), _begin or _op_begin on the addresses of
  !> alpha, a, beta, b of type `type`. Arrays of another type than the plan's, or not
  !> contiguous (for a begin), are never touched: this process passes none and refuses the
  !> call (c_refuse_next_execution), which then fails on every process as for an invalid
  !> argument of this process, with this process's message saying why.
  subroutine execute_split(plan, which, type, alpha, a, beta, b, contiguous_arrays, status)
    type(redist_plan), intent(in) :: plan
    integer, intent(in) :: which, type
    type(c_ptr), intent(in) :: alpha, a, beta, b
    logical, intent(in) :: contiguous_arrays
    integer, intent(out) :: status
    character(len=:), allocatable :: name, problem

    call c_set_message(c_null_char)
    select case (which)
    case (CALL_OP)
      name = 'redist_plan_execute_op'
    case (CALL_BEGIN)
      name = 'redist_plan_execute_begin'
    case default
      name = 'redist_plan_execute_op_begin'
    end select
    problem = ''
    if (c_associated(plan%handle) .and. plan%batch_count < 0) then
      if (type /= plan%type) then
        problem = name//': arguments a, b are '//type_name(type)// &
                  ', the plan was created for '//type_name(plan%type)
      else if (.not. contiguous_arrays) then
        problem = name//': argument a or b is not contiguous (a split execution uses the '// &
                  'arrays after the begin returns, so no copy can stand in for them)'
      end if
    end if
    if (len(problem) == 0) then
      status = start(alpha, a, beta, b)
      return
    end if
    ! The C call takes the problem as this process's invalid argument: an error on every
    ! process (a begin posts nothing anywhere), whether or not this process owns elements.
    call c_refuse_next_execution(problem//c_null_char)
    status = start(c_null_ptr, c_null_ptr, c_null_ptr, c_null_ptr)

  contains

    integer function start(alpha, a, beta, b)
      type(c_ptr), intent(in) :: alpha, a, beta, b
      select case (which)
      case (CALL_OP)
        start = c_plan_execute_op(plan%handle, alpha, a, beta, b)
      case (CALL_BEGIN)
        start = c_plan_execute_begin(plan%handle, a, b)
      case default
        start = c_plan_execute_op_begin(plan%handle, alpha, a, beta, b)
      end select
    end function start
  end subroutine execute_split

  subroutine create_batch(plan, comm, ops, status, options)
    type(redist_plan), intent(out) :: plan
    integer, intent(in) :: comm
    type(redist_batch_op), intent(in) :: ops(:)
    integer, intent(out) :: status
    type(redist_options), intent(in), optional :: options
    type(redist_batch_op_ext), allocatable :: as_ext(:)
    integer :: k

    allocate (as_ext(size(ops)))
    do k = 1, size(ops)
      as_ext(k) = redist_batch_op_ext(op=ops(k)%op, m=ops(k)%m, n=ops(k)%n, type=ops(k)%type, &
                                      a=redist_layout_ext(redist_layout=ops(k)%a), &
                                      b=redist_layout_ext(redist_layout=ops(k)%b), &
                                      region=ops(k)%region)
    end do
    call submit_batch(plan, comm, as_ext, .false., status, options)
  end subroutine create_batch

  !> redist_plan_create_batch of ops (their layouts as redist_layout: each C layout's first
  !> member), or with `ext` redist_plan_create_batch_ext; the plan then knows it is a batch.
  subroutine submit_batch(plan, comm, ops, ext, status, options)
    type(redist_plan), intent(inout) :: plan
    integer, intent(in) :: comm
    type(redist_batch_op_ext), intent(in) :: ops(:)
    logical, intent(in) :: ext
    integer, intent(out) :: status
    type(redist_options), intent(in), optional, target :: options
    type(c_layout_ext), allocatable, target :: layouts(:, :)
    type(rank_map), allocatable, target :: maps(:, :)
    type(c_batch_op), allocatable :: c_ops(:)
    integer :: k

    call c_set_message(c_null_char)
    allocate (layouts(2, size(ops)), maps(2, size(ops)), c_ops(size(ops)))
    do k = 1, size(ops)
      layouts(1, k) = to_c_layout_ext(ops(k)%a, maps(1, k)%ranks)
      layouts(2, k) = to_c_layout_ext(ops(k)%b, maps(2, k)%ranks)
      c_ops(k) = c_batch_op(op=int(ops(k)%op, c_int), m=int(ops(k)%m, c_int64_t), &
                            n=int(ops(k)%n, c_int64_t), type=int(ops(k)%type, c_int), &
                            a=c_loc(layouts(1, k)%layout), b=c_loc(layouts(2, k)%layout), &
                            region=int(ops(k)%region, c_int))
      if (ext) c_ops(k)%a = c_loc(layouts(1, k))
      if (ext) c_ops(k)%b = c_loc(layouts(2, k))
    end do
    if (ext) then
      status = c_plan_create_batch_ext(int(comm, c_int), int(size(ops), c_int), c_ops, &
                                       options_address(options), plan%handle)
    else
      status = c_plan_create_batch(int(comm, c_int), int(size(ops), c_int), c_ops, &
                                   options_address(options), plan%handle)
    end if
    if (status == REDIST_SUCCESS) plan%batch_count = size(ops)
  end subroutine submit_batch

  subroutine grid_create_grid_grid(plan, comm, op, m, n, type, a, b, status, options)
    type(redist_plan), intent(out) :: plan
    integer, intent(in) :: comm, op, m, n, type
    type(redist_block_grid), intent(in) :: a, b
    integer, intent(out) :: status
    type(redist_options), intent(in), optional :: options
    call grid_create(plan, comm, op, m, n, type, status, options, a_grid=a, b_grid=b)
  end subroutine grid_create_grid_grid

  subroutine grid_create_grid_grid_f08(plan, comm, op, m, n, type, a, b, status, options)
    type(redist_plan), intent(out) :: plan
    type(MPI_Comm), intent(in) :: comm
    integer, intent(in) :: op, m, n, type
    type(redist_block_grid), intent(in) :: a, b
    integer, intent(out) :: status
    type(redist_options), intent(in), optional :: options
    call grid_create(plan, comm%MPI_VAL, op, m, n, type, status, options, a_grid=a, b_grid=b)
  end subroutine grid_create_grid_grid_f08

  subroutine grid_create_grid_cyclic(plan, comm, op, m, n, type, a, b, status, options)
    type(redist_plan), intent(out) :: plan
    integer, intent(in) :: comm, op, m, n, type
    type(redist_block_grid), intent(in) :: a
    type(redist_layout_ext), intent(in) :: b
    integer, intent(out) :: status
    type(redist_options), intent(in), optional :: options
    call grid_create(plan, comm, op, m, n, type, status, options, a_grid=a, b_cyclic=b)
  end subroutine grid_create_grid_cyclic

  subroutine grid_create_grid_cyclic_f08(plan, comm, op, m, n, type, a, b, status, options)
    type(redist_plan), intent(out) :: plan
    type(MPI_Comm), intent(in) :: comm
    integer, intent(in) :: op, m, n, type
    type(redist_block_grid), intent(in) :: a
    type(redist_layout_ext), intent(in) :: b
    integer, intent(out) :: status
    type(redist_options), intent(in), optional :: options
    call grid_create(plan, comm%MPI_VAL, op, m, n, type, status, options, a_grid=a, b_cyclic=b)
  end subroutine grid_create_grid_cyclic_f08

  subroutine grid_create_cyclic_grid(plan, comm, op, m, n, type, a, b, status, options)
    type(redist_plan), intent(out) :: plan
    integer, intent(in) :: comm, op, m, n, type
    type(redist_layout_ext), intent(in) :: a
    type(redist_block_grid), intent(in) :: b
    integer, intent(out) :: status
    type(redist_options), intent(in), optional :: options
    call grid_create(plan, comm, op, m, n, type, status, options, a_cyclic=a, b_grid=b)
  end subroutine grid_create_cyclic_grid

  subroutine grid_create_cyclic_grid_f08(plan, comm, op, m, n, type, a, b, status, options)
    type(redist_plan), intent(out) :: plan
    type(MPI_Comm), intent(in) :: comm
    integer, intent(in) :: op, m, n, type
    type(redist_layout_ext), intent(in) :: a
    type(redist_block_grid), intent(in) :: b
    integer, intent(out) :: status
    type(redist_options), intent(in), optional :: options
    call grid_create(plan, comm%MPI_VAL, op, m, n, type, status, options, a_cyclic=a, b_grid=b)
  end subroutine grid_create_cyclic_grid_f08

  !> redist_grid_plan_create with side a given by a_grid or a_cyclic, b by b_grid or b_cyclic.
  !> A grid whose arrays are missing or of the wrong shape (what C cannot see) fails on every
  !> process: its C grid goes with block_rows = 0, and this process's message names the array.
  subroutine grid_create(plan, comm, op, m, n, type, status, options, a_grid, a_cyclic, b_grid, &
                         b_cyclic)
    type(redist_plan), intent(inout) :: plan
    integer, intent(in) :: comm, op, m, n, type
    integer, intent(out) :: status
    type(redist_options), intent(in), optional :: options
    type(redist_block_grid), intent(in), optional :: a_grid, b_grid
    type(redist_layout_ext), intent(in), optional :: a_cyclic, b_cyclic
    type(grid_arrays) :: arrays_a, arrays_b
    integer(c_int), allocatable, target :: ranks_a(:), ranks_b(:)
    type(c_layout_ext) :: cyclic_a, cyclic_b
    type(c_block_grid) :: grid_a, grid_b
    integer(c_int) :: kind_a, kind_b
    character(len=:), allocatable :: problem

    call c_set_message(c_null_char)
    problem = ''
    call grid_side(a_grid, a_cyclic, 'a', arrays_a, ranks_a, kind_a, grid_a, cyclic_a, problem)
    call grid_side(b_grid, b_cyclic, 'b', arrays_b, ranks_b, kind_b, grid_b, cyclic_b, problem)
    status = c_grid_plan_create(int(comm, c_int), int(op, c_int), int(m, c_int64_t), &
                                int(n, c_int64_t), int(type, c_int), kind_a, cyclic_a, grid_a, &
                                kind_b, cyclic_b, grid_b, options_address(options), plan%handle)
    if (len(problem) > 0 .and. status == REDIST_ERR_ARGUMENT) &
      call c_set_message('redist_grid_plan_create: '//problem//c_null_char)
    call set_plan_type(plan, status, type)
  end subroutine grid_create

  !> The C description of one side (argument `name`) of redist_grid_plan_create: its kind and
  !> its grid (arrays in `arrays`) or its block-cyclic layout (rank map in `ranks`); the other
  !> one stays unused (zeros). The first problem C cannot see goes to `problem` if that is empty.
  subroutine grid_side(grid, cyclic, name, arrays, ranks, kind, c_grid, c_cyclic, problem)
    type(redist_block_grid), intent(in), optional :: grid
    type(redist_layout_ext), intent(in), optional :: cyclic
    character(len=*), intent(in) :: name
    type(grid_arrays), intent(inout), target :: arrays
    integer(c_int), allocatable, target, intent(out) :: ranks(:)
    integer(c_int), intent(out) :: kind
    type(c_block_grid), intent(out) :: c_grid
    type(c_layout_ext), intent(out) :: c_cyclic
    character(len=:), allocatable, intent(inout) :: problem
    integer :: k

    c_grid = c_block_grid(m=0, n=0, block_rows=0, block_cols=0, row_splits=c_null_ptr, &
                          col_splits=c_null_ptr, owners=c_null_ptr, row_major=0, &
                          local_count=0, local=c_null_ptr, i=0, j=0)
    c_cyclic = to_c_layout_ext(redist_layout_ext(), ranks)
    if (present(cyclic)) then
      kind = REDIST_LAYOUT_BLOCK_CYCLIC
      c_cyclic = to_c_layout_ext(cyclic, ranks)
      return
    end if
    kind = REDIST_LAYOUT_BLOCK_GRID
    if (.not. allocated(grid%row_splits) .or. .not. allocated(grid%col_splits) .or. &
        .not. allocated(grid%owners)) then
      call note(name//'%row_splits, %col_splits and %owners must be allocated')
      return
    end if
    if (size(grid%row_splits) < 2 .or. size(grid%col_splits) < 2) then
      call note(name//'%row_splits, %col_splits: at least 2 entries each (one block)')
      return
    end if
    if (size(grid%owners, 1) /= size(grid%row_splits) - 1 .or. &
        size(grid%owners, 2) /= size(grid%col_splits) - 1) then
      call note(name//'%owners: shape '//decimal(size(grid%owners, 1, int64))//' x '// &
                decimal(size(grid%owners, 2, int64))//', not size(row_splits) - 1 x '// &
                'size(col_splits) - 1 = '//decimal(size(grid%row_splits, kind=int64) - 1)// &
                ' x '//decimal(size(grid%col_splits, kind=int64) - 1))
      return
    end if
    allocate (arrays%row_splits, source=int(grid%row_splits, c_int64_t))
    allocate (arrays%col_splits, source=int(grid%col_splits, c_int64_t))
    allocate (arrays%owners, source=int(reshape(grid%owners, [size(grid%owners)]), c_int))
    c_grid%block_rows = size(arrays%row_splits) - 1
    c_grid%block_cols = size(arrays%col_splits) - 1
    c_grid%m = arrays%row_splits(size(arrays%row_splits))
    c_grid%n = arrays%col_splits(size(arrays%col_splits))
    c_grid%row_splits = c_loc(arrays%row_splits)
    c_grid%col_splits = c_loc(arrays%col_splits)
    c_grid%owners = c_loc(arrays%owners)
    if (grid%row_major) c_grid%row_major = 1
    c_grid%i = grid%ia - 1
    c_grid%j = grid%ja - 1
    if (.not. allocated(grid%local)) return
    allocate (arrays%local(size(grid%local)))
    do k = 1, size(grid%local)
      arrays%local(k) = c_grid_block(block_row=grid%local(k)%block_row, &
                                     block_col=grid%local(k)%block_col, &
                                     offset=grid%local(k)%offset, ld=grid%local(k)%ld)
    end do
    c_grid%local_count = size(arrays%local)
    if (size(arrays%local) > 0) c_grid%local = c_loc(arrays%local)

  contains

    subroutine note(text)
      character(len=*), intent(in) :: text
      if (len(problem) == 0) problem = text
    end subroutine note
  end subroutine grid_side

  subroutine grid_batch_create(plan, comm, ops, status, options)
    type(redist_plan), intent(out) :: plan
    integer, intent(in) :: comm
    type(redist_grid_batch_op), intent(in) :: ops(:)
    integer, intent(out) :: status
    type(redist_options), intent(in), optional :: options
    type(grid_arrays), allocatable, target :: arrays(:, :)
    type(rank_map), allocatable, target :: maps(:, :)
    type(c_block_grid), allocatable, target :: grids(:, :)
    type(c_layout_ext), allocatable, target :: cyclics(:, :)
    type(c_any_layout), allocatable, target :: anys(:, :)
    type(c_grid_batch_op), allocatable :: c_ops(:)
    character(len=:), allocatable :: problem
    integer :: k, problem_at

    call c_set_message(c_null_char)
    allocate (arrays(2, size(ops)), maps(2, size(ops)), grids(2, size(ops)), &
              cyclics(2, size(ops)), anys(2, size(ops)), c_ops(size(ops)))
    problem = ''
    problem_at = 0
    do k = 1, size(ops)
      call batch_side(ops(k)%a, 'ops('//decimal(int(k, int64))//')%a', 1)
      call batch_side(ops(k)%b, 'ops('//decimal(int(k, int64))//')%b', 2)
      c_ops(k) = c_grid_batch_op(op=int(ops(k)%op, c_int), m=int(ops(k)%m, c_int64_t), &
                                 n=int(ops(k)%n, c_int64_t), type=int(ops(k)%type, c_int), &
                                 a=c_loc(anys(1, k)), b=c_loc(anys(2, k)))
    end do
    status = c_grid_batch_create(int(comm, c_int), int(size(ops), c_int), c_ops, &
                                 options_address(options), plan%handle)
    ! This process's first problem C cannot see fails its operation in C (an empty grid); the
    ! message names it where C's names that operation.
    if (problem_at > 0 .and. status == REDIST_ERR_ARGUMENT) then
      if (index(redist_message(), 'ops['//decimal(int(problem_at - 1, int64))//']') > 0) &
        call c_set_message('redist_grid_batch_create: '//problem//c_null_char)
    end if
    if (status == REDIST_SUCCESS) plan%batch_count = size(ops)

  contains

    !> Side `side` (1: a, 2: b) of operation k, named `name`, into anys(side, k) and what it
    !> points to.
    subroutine batch_side(any, name, side)
      type(redist_any_layout), intent(in) :: any
      character(len=*), intent(in) :: name
      integer, intent(in) :: side
      character(len=:), allocatable :: found
      integer(c_int) :: kind

      found = ''
      if (any%kind == REDIST_LAYOUT_BLOCK_GRID) then
        call grid_side(any%grid, name=name//'%grid', arrays=arrays(side, k), &
                       ranks=maps(side, k)%ranks, kind=kind, c_grid=grids(side, k), &
                       c_cyclic=cyclics(side, k), problem=found)
      else
        call grid_side(cyclic=any%cyclic, name=name//'%cyclic', arrays=arrays(side, k), &
                       ranks=maps(side, k)%ranks, kind=kind, c_grid=grids(side, k), &
                       c_cyclic=cyclics(side, k), problem=found)
        kind = int(any%kind, c_int) ! an unknown kind as it is, for C to name
      end if
      anys(side, k) = c_any_layout(kind=kind, cyclic=c_loc(cyclics(side, k)), &
                                   grid=c_loc(grids(side, k)))
      if (len(found) > 0 .and. problem_at == 0) then
        problem = found
        problem_at = k
      end if
    end subroutine batch_side
  end subroutine grid_batch_create

  subroutine grid_batch_create_f08(plan, comm, ops, status, options)
    type(redist_plan), intent(out) :: plan
    type(MPI_Comm), intent(in) :: comm
    type(redist_grid_batch_op), intent(in) :: ops(:)
    integer, intent(out) :: status
    type(redist_options), intent(in), optional :: options
    call grid_batch_create(plan, comm%MPI_VAL, ops, status, options)
  end subroutine grid_batch_create_f08

  !> The address of options, or c_null_ptr without them (the defaults).
  function options_address(options) result(pointer)
    type(redist_options), intent(in), optional, target :: options
    type(c_ptr) :: pointer
    pointer = c_null_ptr
    if (present(options)) pointer = c_loc(options)
  end function options_address

  subroutine create_batch_f08(plan, comm, ops, status, options)
    type(redist_plan), intent(out) :: plan
    type(MPI_Comm), intent(in) :: comm
    type(redist_batch_op), intent(in) :: ops(:)
    integer, intent(out) :: status
    type(redist_options), intent(in), optional :: options
    call create_batch(plan, comm%MPI_VAL, ops, status, options)
  end subroutine create_batch_f08

  subroutine create_batch_ext(plan, comm, ops, status, options)
    type(redist_plan), intent(out) :: plan
    integer, intent(in) :: comm
    type(redist_batch_op_ext), intent(in) :: ops(:)
    integer, intent(out) :: status
    type(redist_options), intent(in), optional :: options
    call submit_batch(plan, comm, ops, .true., status, options)
  end subroutine create_batch_ext

  subroutine create_batch_ext_f08(plan, comm, ops, status, options)
    type(redist_plan), intent(out) :: plan
    type(MPI_Comm), intent(in) :: comm
    type(redist_batch_op_ext), intent(in) :: ops(:)
    integer, intent(out) :: status
    type(redist_options), intent(in), optional :: options
    call create_batch_ext(plan, comm%MPI_VAL, ops, status, options)
  end subroutine create_batch_ext_f08

  subroutine redist_plan_execute_batch(plan, a, b, status, alphas, betas)
    type(redist_plan), intent(in) :: plan
    type(c_ptr), intent(in) :: a(:), b(:)
    integer, intent(out) :: status
    type(c_ptr), intent(in), optional :: alphas(:), betas(:)
    call execute_batch(plan, .false., a, b, status, alphas, betas)
  end subroutine redist_plan_execute_batch

  subroutine redist_plan_execute_batch_begin(plan, a, b, status, alphas, betas)
    type(redist_plan), intent(in) :: plan
    type(c_ptr), intent(in) :: a(:), b(:)
    integer, intent(out) :: status
    type(c_ptr), intent(in), optional :: alphas(:), betas(:)
    call execute_batch(plan, .true., a, b, status, alphas, betas)
  end subroutine redist_plan_execute_batch_begin

  !> Runs redist_plan_execute_batch (or its begin, with `split`) on copies of the arrays of
  !> pointers. Arrays of pointers of the wrong size are never read: this process then passes
  !> NULL alphas(1) (so that the C call fails on every process), or, for a batch of no
  !> operations, ends a begin at once, and its message says why.
  subroutine execute_batch(plan, split, a, b, status, alphas, betas)
    type(redist_plan), intent(in) :: plan
    logical, intent(in) :: split
    type(c_ptr), intent(in) :: a(:), b(:)
    integer, intent(out) :: status
    type(c_ptr), intent(in), optional :: alphas(:), betas(:)
    type(c_ptr), allocatable, target :: a_ptrs(:), b_ptrs(:), alpha_ptrs(:), beta_ptrs(:)
    character(len=:), allocatable :: name, problem

    call c_set_message(c_null_char)
    name = 'redist_plan_execute_batch'
    if (split) name = name//'_begin'
    problem = ''
    if (c_associated(plan%handle) .and. plan%batch_count >= 0) then
      call check_size('a', size(a))
      call check_size('b', size(b))
      if (present(alphas)) call check_size('alphas', size(alphas))
      if (present(betas)) call check_size('betas', size(betas))
    end if
    if (len(problem) == 0) then
      a_ptrs = a
      b_ptrs = b
      if (present(alphas)) alpha_ptrs = alphas
      if (present(betas)) beta_ptrs = betas
      status = start(pointers(alpha_ptrs), pointers(a_ptrs), pointers(beta_ptrs), &
                     pointers(b_ptrs))
      return
    end if
    allocate (alpha_ptrs(plan%batch_count), beta_ptrs(plan%batch_count))
    alpha_ptrs = c_null_ptr
    beta_ptrs = c_null_ptr
    status = start(pointers(alpha_ptrs), c_null_ptr, pointers(beta_ptrs), c_null_ptr)
    if (status == REDIST_SUCCESS .and. split) status = c_plan_execute_end(plan%handle)
    if (status == REDIST_SUCCESS .or. status == REDIST_ERR_ARGUMENT) then
      call c_set_message(name//': '//problem//c_null_char)
      status = REDIST_ERR_ARGUMENT
    end if

  contains

    subroutine check_size(argument, entries)
      character(len=*), intent(in) :: argument
      integer, intent(in) :: entries
      if (entries /= plan%batch_count .and. len(problem) == 0) &
        problem = 'argument '//argument//': '//decimal(int(entries, int64))// &
                  ' entries, the plan has '//decimal(int(plan%batch_count, int64))//' operations'
    end subroutine check_size

    !> The address of `array`'s first entry; c_null_ptr if it is absent or empty.
    function pointers(array) result(pointer)
      type(c_ptr), allocatable, target, intent(in) :: array(:)
      type(c_ptr) :: pointer
      pointer = c_null_ptr
      if (allocated(array)) then
        if (size(array) > 0) pointer = c_loc(array)
      end if
    end function pointers

    integer function start(alphas, a, betas, b)
      type(c_ptr), intent(in) :: alphas, a, betas, b
      if (split) then
        start = c_plan_execute_batch_begin(plan%handle, alphas, a, betas, b)
      else
        start = c_plan_execute_batch(plan%handle, alphas, a, betas, b)
      end if
    end function start
  end subroutine execute_batch

  !> Complete the execution begun by redist_plan_execute_begin, _op_begin or _batch_begin
  !> (collective).
  subroutine redist_plan_execute_end(plan, status)
    type(redist_plan), intent(in) :: plan
    integer, intent(out) :: status
    call c_set_message(c_null_char)
    status = c_plan_execute_end(plan%handle)
  end subroutine redist_plan_execute_end

  function type_name(type) result(text)
    integer, intent(in) :: type
    character(len=:), allocatable :: text
    select case (type)
    case (REDIST_FLOAT)
      text = 'real(real32)'
    case (REDIST_DOUBLE)
      text = 'real(real64)'
    case (REDIST_COMPLEX_FLOAT)
      text = 'complex(real32)'
    case (REDIST_COMPLEX_DOUBLE)
      text = 'complex(real64)'
    case (REDIST_INT32)
      text = 'integer(int32)'
    case (REDIST_INT64)
      text = 'integer(int64)'
    case default
      text = 'an unknown type'
    end select
  end function type_name

  subroutine execute_op_real32(plan, alpha, a, beta, b, status)
    type(redist_plan), intent(in) :: plan
    real(real32), intent(in), target :: alpha, beta
    real(real32), intent(in), target, contiguous :: a(..)
    real(real32), intent(inout), target, contiguous :: b(..)
    integer, intent(out) :: status
    call execute_split(plan, CALL_OP, REDIST_FLOAT, c_loc(alpha), c_loc(a), c_loc(beta), c_loc(b), &
                       .true., status)
  end subroutine execute_op_real32

  subroutine begin_real32(plan, a, b, status)
    type(redist_plan), intent(in) :: plan
    real(real32), intent(in), target, asynchronous :: a(..)
    real(real32), intent(inout), target, asynchronous :: b(..)
    integer, intent(out) :: status
    call execute_split(plan, CALL_BEGIN, REDIST_FLOAT, c_null_ptr, address(a), c_null_ptr, address(b), &
                       is_contiguous(a) .and. is_contiguous(b), status)
  end subroutine begin_real32

  subroutine op_begin_real32(plan, alpha, a, beta, b, status)
    type(redist_plan), intent(in) :: plan
    real(real32), intent(in), target :: alpha, beta
    real(real32), intent(in), target, asynchronous :: a(..)
    real(real32), intent(inout), target, asynchronous :: b(..)
    integer, intent(out) :: status
    call execute_split(plan, CALL_OP_BEGIN, REDIST_FLOAT, c_loc(alpha), address(a), c_loc(beta), &
                       address(b), is_contiguous(a) .and. is_contiguous(b), status)
  end subroutine op_begin_real32

  subroutine execute_op_real64(plan, alpha, a, beta, b, status)
    type(redist_plan), intent(in) :: plan
    real(real64), intent(in), target :: alpha, beta
    real(real64), intent(in), target, contiguous :: a(..)
    real(real64), intent(inout), target, contiguous :: b(..)
    integer, intent(out) :: status
    call execute_split(plan, CALL_OP, REDIST_DOUBLE, c_loc(alpha), c_loc(a), c_loc(beta), c_loc(b), &
                       .true., status)
  end subroutine execute_op_real64

  subroutine begin_real64(plan, a, b, status)
    type(redist_plan), intent(in) :: plan
    real(real64), intent(in), target, asynchronous :: a(..)
    real(real64), intent(inout), target, asynchronous :: b(..)
    integer, intent(out) :: status
    call execute_split(plan, CALL_BEGIN, REDIST_DOUBLE, c_null_ptr, address(a), c_null_ptr, address(b), &
                       is_contiguous(a) .and. is_contiguous(b), status)
  end subroutine begin_real64

  subroutine op_begin_real64(plan, alpha, a, beta, b, status)
    type(redist_plan), intent(in) :: plan
    real(real64), intent(in), target :: alpha, beta
    real(real64), intent(in), target, asynchronous :: a(..)
    real(real64), intent(inout), target, asynchronous :: b(..)
    integer, intent(out) :: status
    call execute_split(plan, CALL_OP_BEGIN, REDIST_DOUBLE, c_loc(alpha), address(a), c_loc(beta), &
                       address(b), is_contiguous(a) .and. is_contiguous(b), status)
  end subroutine op_begin_real64

  subroutine execute_op_complex32(plan, alpha, a, beta, b, status)
    type(redist_plan), intent(in) :: plan
    complex(real32), intent(in), target :: alpha, beta
    complex(real32), intent(in), target, contiguous :: a(..)
    complex(real32), intent(inout), target, contiguous :: b(..)
    integer, intent(out) :: status
    call execute_split(plan, CALL_OP, REDIST_COMPLEX_FLOAT, c_loc(alpha), c_loc(a), c_loc(beta), c_loc(b), &
                       .true., status)
  end subroutine execute_op_complex32

  subroutine begin_complex32(plan, a, b, status)
    type(redist_plan), intent(in) :: plan
    complex(real32), intent(in), target, asynchronous :: a(..)
    complex(real32), intent(inout), target, asynchronous :: b(..)
    integer, intent(out) :: status
    call execute_split(plan, CALL_BEGIN, REDIST_COMPLEX_FLOAT, c_null_ptr, address(a), c_null_ptr, address(b), &
                       is_contiguous(a) .and. is_contiguous(b), status)
  end subroutine begin_complex32

  subroutine op_begin_complex32(plan, alpha, a, beta, b, status)
    type(redist_plan), intent(in) :: plan
    complex(real32), intent(in), target :: alpha, beta
    complex(real32), intent(in), target, asynchronous :: a(..)
    complex(real32), intent(inout), target, asynchronous :: b(..)
    integer, intent(out) :: status
    call execute_split(plan, CALL_OP_BEGIN, REDIST_COMPLEX_FLOAT, c_loc(alpha), address(a), c_loc(beta), &
                       address(b), is_contiguous(a) .and. is_contiguous(b), status)
  end subroutine op_begin_complex32

  subroutine execute_op_complex64(plan, alpha, a, beta, b, status)
    type(redist_plan), intent(in) :: plan
    complex(real64), intent(in), target :: alpha, beta
    complex(real64), intent(in), target, contiguous :: a(..)
    complex(real64), intent(inout), target, contiguous :: b(..)
    integer, intent(out) :: status
    call execute_split(plan, CALL_OP, REDIST_COMPLEX_DOUBLE, c_loc(alpha), c_loc(a), c_loc(beta), c_loc(b), &
                       .true., status)
  end subroutine execute_op_complex64

  subroutine begin_complex64(plan, a, b, status)
    type(redist_plan), intent(in) :: plan
    complex(real64), intent(in), target, asynchronous :: a(..)
    complex(real64), intent(inout), target, asynchronous :: b(..)
    integer, intent(out) :: status
    call execute_split(plan, CALL_BEGIN, REDIST_COMPLEX_DOUBLE, c_null_ptr, address(a), c_null_ptr, address(b), &
                       is_contiguous(a) .and. is_contiguous(b), status)
  end subroutine begin_complex64

  subroutine op_begin_complex64(plan, alpha, a, beta, b, status)
    type(redist_plan), intent(in) :: plan
    complex(real64), intent(in), target :: alpha, beta
    complex(real64), intent(in), target, asynchronous :: a(..)
    complex(real64), intent(inout), target, asynchronous :: b(..)
    integer, intent(out) :: status
    call execute_split(plan, CALL_OP_BEGIN, REDIST_COMPLEX_DOUBLE, c_loc(alpha), address(a), c_loc(beta), &
                       address(b), is_contiguous(a) .and. is_contiguous(b), status)
  end subroutine op_begin_complex64

  subroutine execute_op_int32(plan, alpha, a, beta, b, status)
    type(redist_plan), intent(in) :: plan
    integer(int32), intent(in), target :: alpha, beta
    integer(int32), intent(in), target, contiguous :: a(..)
    integer(int32), intent(inout), target, contiguous :: b(..)
    integer, intent(out) :: status
    call execute_split(plan, CALL_OP, REDIST_INT32, c_loc(alpha), c_loc(a), c_loc(beta), c_loc(b), &
                       .true., status)
  end subroutine execute_op_int32

  subroutine begin_int32(plan, a, b, status)
    type(redist_plan), intent(in) :: plan
    integer(int32), intent(in), target, asynchronous :: a(..)
    integer(int32), intent(inout), target, asynchronous :: b(..)
    integer, intent(out) :: status
    call execute_split(plan, CALL_BEGIN, REDIST_INT32, c_null_ptr, address(a), c_null_ptr, address(b), &
                       is_contiguous(a) .and. is_contiguous(b), status)
  end subroutine begin_int32

  subroutine op_begin_int32(plan, alpha, a, beta, b, status)
    type(redist_plan), intent(in) :: plan
    integer(int32), intent(in), target :: alpha, beta
    integer(int32), intent(in), target, asynchronous :: a(..)
    integer(int32), intent(inout), target, asynchronous :: b(..)
    integer, intent(out) :: status
    call execute_split(plan, CALL_OP_BEGIN, REDIST_INT32, c_loc(alpha), address(a), c_loc(beta), &
                       address(b), is_contiguous(a) .and. is_contiguous(b), status)
  end subroutine op_begin_int32

  subroutine execute_op_int64(plan, alpha, a, beta, b, status)
    type(redist_plan), intent(in) :: plan
    integer(int64), intent(in), target :: alpha, beta
    integer(int64), intent(in), target, contiguous :: a(..)
    integer(int64), intent(inout), target, contiguous :: b(..)
    integer, intent(out) :: status
    call execute_split(plan, CALL_OP, REDIST_INT64, c_loc(alpha), c_loc(a), c_loc(beta), c_loc(b), &
                       .true., status)
  end subroutine execute_op_int64

  subroutine begin_int64(plan, a, b, status)
    type(redist_plan), intent(in) :: plan
    integer(int64), intent(in), target, asynchronous :: a(..)
    integer(int64), intent(inout), target, asynchronous :: b(..)
    integer, intent(out) :: status
    call execute_split(plan, CALL_BEGIN, REDIST_INT64, c_null_ptr, address(a), c_null_ptr, address(b), &
                       is_contiguous(a) .and. is_contiguous(b), status)
  end subroutine begin_int64

  subroutine op_begin_int64(plan, alpha, a, beta, b, status)
    type(redist_plan), intent(in) :: plan
    integer(int64), intent(in), target :: alpha, beta
    integer(int64), intent(in), target, asynchronous :: a(..)
    integer(int64), intent(inout), target, asynchronous :: b(..)
    integer, intent(out) :: status
    call execute_split(plan, CALL_OP_BEGIN, REDIST_INT64, c_loc(alpha), address(a), c_loc(beta), &
                       address(b), is_contiguous(a) .and. is_contiguous(b), status)
  end subroutine op_begin_int64

  !> Destroy the plan (collective); a plan never created is accepted.
  subroutine redist_plan_destroy(plan, status)
    type(redist_plan), intent(inout) :: plan
    integer, intent(out) :: status
    call c_set_message(c_null_char)
    status = c_plan_destroy(plan%handle)
    plan%element_bytes = 0
    plan%type = -1
    plan%batch_count = -1
  end subroutine redist_plan_destroy

  !> This process's part of the plan (local).
  subroutine redist_plan_get_info(plan, info, status)
    type(redist_plan), intent(in) :: plan
    type(redist_plan_info), intent(out) :: info
    integer, intent(out) :: status
    call c_set_message(c_null_char)
    status = c_plan_get_info(plan%handle, info)
  end subroutine redist_plan_get_info

  !> Memory for a local array that the other processes of the node can map and copy from
  !> (redist_alloc in redist.h); c_f_pointer makes an array of it. Local.
  subroutine redist_alloc(bytes, memory, status)
    integer(c_size_t), intent(in) :: bytes
    type(c_ptr), intent(out) :: memory
    integer, intent(out) :: status
    call c_set_message(c_null_char)
    status = c_alloc(bytes, memory)
  end subroutine redist_alloc

  !> Free memory from redist_alloc (c_null_ptr is accepted). Local.
  subroutine redist_free(memory, status)
    type(c_ptr), intent(in) :: memory
    integer, intent(out) :: status
    call c_set_message(c_null_char)
    status = c_free(memory)
  end subroutine redist_free

  subroutine calibrate(comm, alpha, beta, status)
    integer, intent(in) :: comm
    real(real64), intent(out) :: alpha, beta
    integer, intent(out) :: status
    call c_set_message(c_null_char)
    status = c_calibrate(int(comm, c_int), alpha, beta)
  end subroutine calibrate

  subroutine calibrate_f08(comm, alpha, beta, status)
    type(MPI_Comm), intent(in) :: comm
    real(real64), intent(out) :: alpha, beta
    integer, intent(out) :: status
    call calibrate(comm%MPI_VAL, alpha, beta, status)
  end subroutine calibrate_f08

  subroutine propose_grid_ranks(comm, m, n, type, a, b, ranks, status, bytes_kept_before, &
                                bytes_kept_after)
    integer, intent(in) :: comm, m, n, type
    type(redist_layout), intent(in) :: a, b
    integer, intent(inout) :: ranks(:, :)
    integer, intent(out) :: status
    integer(int64), intent(inout), optional :: bytes_kept_before, bytes_kept_after
    integer(c_int), allocatable, target :: ranks_a(:), ranks_b(:)
    integer(c_int) :: proposed(max(1, size(ranks)))
    integer(c_int64_t) :: before, after
    type(c_layout) :: grid

    call c_set_message(c_null_char)
    grid = to_c_layout(b, ranks_b)
    grid%nprow = size(ranks, 1)
    grid%npcol = size(ranks, 2)
    grid%ranks = c_null_ptr
    status = c_propose_grid_ranks(int(comm, c_int), int(m, c_int64_t), int(n, c_int64_t), &
                                  int(type, c_int), to_c_layout(a, ranks_a), grid, proposed, &
                                  before, after)
    if (status /= REDIST_SUCCESS) return
    ranks = reshape(int(proposed(1:size(ranks))), shape(ranks))
    if (present(bytes_kept_before)) bytes_kept_before = before
    if (present(bytes_kept_after)) bytes_kept_after = after
  end subroutine propose_grid_ranks

  subroutine propose_grid_ranks_f08(comm, m, n, type, a, b, ranks, status, bytes_kept_before, &
                                    bytes_kept_after)
    type(MPI_Comm), intent(in) :: comm
    integer, intent(in) :: m, n, type
    type(redist_layout), intent(in) :: a, b
    integer, intent(inout) :: ranks(:, :)
    integer, intent(out) :: status
    integer(int64), intent(inout), optional :: bytes_kept_before, bytes_kept_after
    call propose_grid_ranks(comm%MPI_VAL, m, n, type, a, b, ranks, status, bytes_kept_before, &
                            bytes_kept_after)
  end subroutine propose_grid_ranks_f08

  !> The message of the last error of a redist call on this thread ("" if none): the call, the
  !> argument and the reason.
  function redist_message() result(text)
    character(len=:), allocatable :: text
    text = from_c_string(c_message())
  end function redist_message

  !> The version of the library this program runs with (major.minor.patch).
  subroutine redist_get_version(major, minor, patch)
    integer, intent(out) :: major, minor, patch
    integer(c_int) :: c_major, c_minor, c_patch, status

    status = c_get_version(c_major, c_minor, c_patch)
    major = int(c_major)
    minor = int(c_minor)
    patch = int(c_patch)
  end subroutine redist_get_version

  !> A short name for a status code ("REDIST_ERR_ARGUMENT", ...).
  function redist_status_name(status) result(text)
    integer, intent(in) :: status
    character(len=:), allocatable :: text
    text = from_c_string(c_status_name(int(status, c_int)))
  end function redist_status_name

  !> The name of a schedule ("auto", "stepwise", ...), or "" if unknown.
  function redist_schedule_name(schedule) result(text)
    integer, intent(in) :: schedule
    character(len=:), allocatable :: text
    text = from_c_string(c_schedule_name(int(schedule, c_int)))
  end function redist_schedule_name

  function from_c_string(pointer) result(text)
    type(c_ptr), intent(in) :: pointer
    character(len=:), allocatable :: text
    character(kind=c_char), pointer :: chars(:)
    integer :: length, k

    length = 0
    if (c_associated(pointer)) length = int(c_strlen(pointer))
    allocate (character(len=length) :: text)
    if (length == 0) return
    call c_f_pointer(pointer, chars, [length])
    do k = 1, length
      text(k:k) = chars(k)
    end do
  end function from_c_string

end module redist
