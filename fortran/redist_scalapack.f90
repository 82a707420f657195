!> Explicit interfaces for ScaLAPACK's PxGEMR2D and PxTRMR2D (x = S, D, C, Z, I), bound to
!> redist's prefixed entries (redist_pdgemr2d_, ...). Adding `use redist_scalapack` to a program
!> unit routes its calls to redist even when ScaLAPACK is linked, and lets the compiler check
!> every argument. Arguments and results are ScaLAPACK's; on bad input redist prints one line
!> per process, leaves B untouched and returns (redist_scalapack_last_status() tells).
!> Collective over every process of ICTXT.
!>
!> A and B are passed as arrays of their element type (any rank, or an array element); on a
!> process outside a grid, DESCx(CTXT_) = -1 and the array is not referenced.
module redist_scalapack
  use, intrinsic :: iso_c_binding, only: c_char, c_double, c_double_complex, c_float, &
                                         c_float_complex, c_int, c_long_long
  implicit none
  private

  public :: psgemr2d, pdgemr2d, pcgemr2d, pzgemr2d, pigemr2d
  public :: pstrmr2d, pdtrmr2d, pctrmr2d, pztrmr2d, pitrmr2d
  public :: redist_scalapack_last_status, redist_scalapack_call_count, &
            redist_scalapack_clear_cache

  interface
    subroutine psgemr2d(m, n, a, ia, ja, desca, b, ib, jb, descb, ictxt) &
        bind(c, name='redist_psgemr2d_')
      import :: c_int, c_float
      integer(c_int), intent(in) :: m, n, ia, ja, desca(9), ib, jb, descb(9), ictxt
      real(c_float), intent(in) :: a(*)
      real(c_float), intent(inout) :: b(*)
    end subroutine psgemr2d

    subroutine pdgemr2d(m, n, a, ia, ja, desca, b, ib, jb, descb, ictxt) &
        bind(c, name='redist_pdgemr2d_')
      import :: c_int, c_double
      integer(c_int), intent(in) :: m, n, ia, ja, desca(9), ib, jb, descb(9), ictxt
      real(c_double), intent(in) :: a(*)
      real(c_double), intent(inout) :: b(*)
    end subroutine pdgemr2d

    subroutine pcgemr2d(m, n, a, ia, ja, desca, b, ib, jb, descb, ictxt) &
        bind(c, name='redist_pcgemr2d_')
      import :: c_int, c_float_complex
      integer(c_int), intent(in) :: m, n, ia, ja, desca(9), ib, jb, descb(9), ictxt
      complex(c_float_complex), intent(in) :: a(*)
      complex(c_float_complex), intent(inout) :: b(*)
    end subroutine pcgemr2d

    subroutine pzgemr2d(m, n, a, ia, ja, desca, b, ib, jb, descb, ictxt) &
        bind(c, name='redist_pzgemr2d_')
      import :: c_int, c_double_complex
      integer(c_int), intent(in) :: m, n, ia, ja, desca(9), ib, jb, descb(9), ictxt
      complex(c_double_complex), intent(in) :: a(*)
      complex(c_double_complex), intent(inout) :: b(*)
    end subroutine pzgemr2d

    subroutine pigemr2d(m, n, a, ia, ja, desca, b, ib, jb, descb, ictxt) &
        bind(c, name='redist_pigemr2d_')
      import :: c_int
      integer(c_int), intent(in) :: m, n, ia, ja, desca(9), ib, jb, descb(9), ictxt
      integer(c_int), intent(in) :: a(*)
      integer(c_int), intent(inout) :: b(*)
    end subroutine pigemr2d

    subroutine pstrmr2d(uplo, diag, m, n, a, ia, ja, desca, b, ib, jb, descb, ictxt) &
        bind(c, name='redist_pstrmr2d_')
      import :: c_char, c_float, c_int
      character(kind=c_char), intent(in) :: uplo, diag
      integer(c_int), intent(in) :: m, n, ia, ja, desca(9), ib, jb, descb(9), ictxt
      real(c_float), intent(in) :: a(*)
      real(c_float), intent(inout) :: b(*)
    end subroutine pstrmr2d

    subroutine pdtrmr2d(uplo, diag, m, n, a, ia, ja, desca, b, ib, jb, descb, ictxt) &
        bind(c, name='redist_pdtrmr2d_')
      import :: c_char, c_double, c_int
      character(kind=c_char), intent(in) :: uplo, diag
      integer(c_int), intent(in) :: m, n, ia, ja, desca(9), ib, jb, descb(9), ictxt
      real(c_double), intent(in) :: a(*)
      real(c_double), intent(inout) :: b(*)
    end subroutine pdtrmr2d

    subroutine pctrmr2d(uplo, diag, m, n, a, ia, ja, desca, b, ib, jb, descb, ictxt) &
        bind(c, name='redist_pctrmr2d_')
      import :: c_char, c_float_complex, c_int
      character(kind=c_char), intent(in) :: uplo, diag
      integer(c_int), intent(in) :: m, n, ia, ja, desca(9), ib, jb, descb(9), ictxt
      complex(c_float_complex), intent(in) :: a(*)
      complex(c_float_complex), intent(inout) :: b(*)
    end subroutine pctrmr2d

    subroutine pztrmr2d(uplo, diag, m, n, a, ia, ja, desca, b, ib, jb, descb, ictxt) &
        bind(c, name='redist_pztrmr2d_')
      import :: c_char, c_double_complex, c_int
      character(kind=c_char), intent(in) :: uplo, diag
      integer(c_int), intent(in) :: m, n, ia, ja, desca(9), ib, jb, descb(9), ictxt
      complex(c_double_complex), intent(in) :: a(*)
      complex(c_double_complex), intent(inout) :: b(*)
    end subroutine pztrmr2d

    subroutine pitrmr2d(uplo, diag, m, n, a, ia, ja, desca, b, ib, jb, descb, ictxt) &
        bind(c, name='redist_pitrmr2d_')
      import :: c_char, c_int
      character(kind=c_char), intent(in) :: uplo, diag
      integer(c_int), intent(in) :: m, n, ia, ja, desca(9), ib, jb, descb(9), ictxt
      integer(c_int), intent(in) :: a(*)
      integer(c_int), intent(inout) :: b(*)
    end subroutine pitrmr2d

    !> Status (REDIST_SUCCESS = 0 or an error code of module redist) of the last call on this
    !> thread.
    function redist_scalapack_last_status() bind(c) result(status)
      import :: c_int
      integer(c_int) :: status
    end function redist_scalapack_last_status

    !> Number of ScaLAPACK-style calls redist has served in this process.
    function redist_scalapack_call_count() bind(c) result(calls)
      import :: c_long_long
      integer(c_long_long) :: calls
    end function redist_scalapack_call_count

    !> Free every cached plan and communicator (local).
    subroutine redist_scalapack_clear_cache() bind(c)
    end subroutine redist_scalapack_clear_cache
  end interface

end module redist_scalapack
