!> redist for Fortran: plans that copy a (sub)matrix between two 2-D block-cyclic layouts.
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

  !> A plan. Default-initialized to "no plan"; redist_plan_destroy returns it to that state.
  type, public :: redist_plan
    private
    type(c_ptr) :: handle = c_null_ptr
    integer :: element_bytes = 0
  end type redist_plan

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
  !> region: REDIST_REGION_FULL (default), _UPPER or _LOWER (PxTRMR2D's trapezoids);
  !> unit_diag: .true. leaves the diagonal out of a trapezoid (DIAG = 'U').
  public :: redist_plan_create
  interface redist_plan_create
    module procedure create_from_layouts, create_from_layouts_f08, create_from_descriptors
  end interface redist_plan_create

  !> redist_plan_execute(plan, a, b, status): copy from local array a to local array b
  !> (column-major, leading dimension lld; any rank). Both arrays have the plan's element type.
  !> Collective over the plan's processes.
  public :: redist_plan_execute
  interface redist_plan_execute
    module procedure execute_real32, execute_real64, execute_complex32, execute_complex64, &
                     execute_int32, execute_int64
  end interface redist_plan_execute

  !> redist_calibrate(comm, alpha, beta, status): measure the cost model's seconds per message
  !> and per byte (collective).
  public :: redist_calibrate
  interface redist_calibrate
    module procedure calibrate, calibrate_f08
  end interface redist_calibrate

  public :: redist_plan_destroy, redist_plan_get_info, redist_message, redist_status_name, &
            redist_schedule_name, redist_alloc, redist_free

  type, bind(c) :: c_layout
    integer(c_int64_t) :: m, n, mb, nb
    integer(c_int) :: nprow, npcol, rsrc, csrc
    type(c_ptr) :: ranks
    integer(c_int64_t) :: i, j, lld
  end type c_layout

  interface
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
      integer(c_int), intent(in) :: desca(9), descb(9)
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
    type(redist_options), intent(in), optional, target :: options
    integer(c_int), allocatable, target :: ranks_a(:), ranks_b(:)
    type(c_ptr) :: options_ptr

    call c_set_message(c_null_char)
    options_ptr = c_null_ptr
    if (present(options)) options_ptr = c_loc(options)
    status = c_plan_create(int(comm, c_int), int(m, c_int64_t), int(n, c_int64_t), int(type, c_int), &
                           to_c_layout(a, ranks_a), to_c_layout(b, ranks_b), &
                           region_code(region), diag_code(unit_diag), options_ptr, plan%handle)
    if (status == REDIST_SUCCESS) plan%element_bytes = c_type_size(int(type, c_int))
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
    integer, intent(in) :: m, n, type, desca(9), ia, ja, descb(9), ib, jb, ictxt
    integer, intent(out) :: status
    integer, intent(in), optional :: region
    logical, intent(in), optional :: unit_diag
    type(redist_options), intent(in), optional, target :: options
    type(c_ptr) :: options_ptr

    call c_set_message(c_null_char)
    options_ptr = c_null_ptr
    if (present(options)) options_ptr = c_loc(options)
    status = c_plan_create_desc(int(m, c_int), int(n, c_int), int(type, c_int), &
                                int(desca, c_int), int(ia, c_int), int(ja, c_int), &
                                int(descb, c_int), int(ib, c_int), int(jb, c_int), &
                                int(ictxt, c_int), region_code(region), diag_code(unit_diag), &
                                options_ptr, plan%handle)
    if (status == REDIST_SUCCESS) plan%element_bytes = c_type_size(int(type, c_int))
  end subroutine create_from_descriptors

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
    if (element_bytes == plan%element_bytes .or. .not. c_associated(plan%handle)) then
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

  !> Destroy the plan (collective); a plan never created is accepted.
  subroutine redist_plan_destroy(plan, status)
    type(redist_plan), intent(inout) :: plan
    integer, intent(out) :: status
    call c_set_message(c_null_char)
    status = c_plan_destroy(plan%handle)
    plan%element_bytes = 0
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

  !> The message of the last error of a redist call on this thread ("" if none): the call, the
  !> argument and the reason.
  function redist_message() result(text)
    character(len=:), allocatable :: text
    text = from_c_string(c_message())
  end function redist_message

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
