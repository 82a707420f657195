!> Explicit interfaces for ScaLAPACK's PxGEMR2D and PxTRMR2D (x = S, D, C, Z, I) and PBLAS's
!> PxTRAN, PxTRANU, PxTRANC, PxGEADD, PxTRADD (x = S, D, C, Z), bound to
!> redist's prefixed entries (redist_pdgemr2d_, ...). Adding `use redist_scalapack` to a program
!> unit routes its calls to redist even when ScaLAPACK is linked, and lets the compiler check
!> every argument. Arguments and results are ScaLAPACK's; on bad input redist prints one line
!> per process, leaves B untouched and returns (redist_scalapack_last_status() tells).
!> Collective over every process of ICTXT.
!>
!> A and B are passed as arrays of their element type (any rank, or an array element); on a
!> process outside a grid, DESCx(CTXT_) = -1 and the array is not referenced. Descriptors are
!> assumed-size, DESCx(*): ScaLAPACK's 9 integers (DTYPE_ = 1) or PBLAS's 11 (DTYPE_ = 2, with
!> first blocks IMB_ x INB_), for the PBLAS routines and, as redist's extension, the copies.
module redist_scalapack
  use, intrinsic :: iso_c_binding, only: c_char, c_double, c_double_complex, c_float, &
                                         c_float_complex, c_int, c_long_long
  implicit none
  private

  public :: psgemr2d, pdgemr2d, pcgemr2d, pzgemr2d, pigemr2d
  public :: pstrmr2d, pdtrmr2d, pctrmr2d, pztrmr2d, pitrmr2d
  public :: psgeadd, pdgeadd, pcgeadd, pzgeadd, pstradd, pdtradd, pctradd, pztradd
  public :: pstran, pdtran, pctranu, pztranu, pctranc, pztranc
  public :: redist_scalapack_last_status, redist_scalapack_call_count, &
            redist_scalapack_clear_cache

  interface
    subroutine psgemr2d(m, n, a, ia, ja, desca, b, ib, jb, descb, ictxt) &
        bind(c, name='redist_psgemr2d_')
      import :: c_int, c_float
      integer(c_int), intent(in) :: m, n, ia, ja, desca(*), ib, jb, descb(*), ictxt
      real(c_float), intent(in) :: a(*)
      real(c_float), intent(inout) :: b(*)
    end subroutine psgemr2d

    subroutine pdgemr2d(m, n, a, ia, ja, desca, b, ib, jb, descb, ictxt) &
        bind(c, name='redist_pdgemr2d_')
      import :: c_int, c_double
      integer(c_int), intent(in) :: m, n, ia, ja, desca(*), ib, jb, descb(*), ictxt
      real(c_double), intent(in) :: a(*)
      real(c_double), intent(inout) :: b(*)
    end subroutine pdgemr2d

    subroutine pcgemr2d(m, n, a, ia, ja, desca, b, ib, jb, descb, ictxt) &
        bind(c, name='redist_pcgemr2d_')
      import :: c_int, c_float_complex
      integer(c_int), intent(in) :: m, n, ia, ja, desca(*), ib, jb, descb(*), ictxt
      complex(c_float_complex), intent(in) :: a(*)
      complex(c_float_complex), intent(inout) :: b(*)
    end subroutine pcgemr2d

    subroutine pzgemr2d(m, n, a, ia, ja, desca, b, ib, jb, descb, ictxt) &
        bind(c, name='redist_pzgemr2d_')
      import :: c_int, c_double_complex
      integer(c_int), intent(in) :: m, n, ia, ja, desca(*), ib, jb, descb(*), ictxt
      complex(c_double_complex), intent(in) :: a(*)
      complex(c_double_complex), intent(inout) :: b(*)
    end subroutine pzgemr2d

    subroutine pigemr2d(m, n, a, ia, ja, desca, b, ib, jb, descb, ictxt) &
        bind(c, name='redist_pigemr2d_')
      import :: c_int
      integer(c_int), intent(in) :: m, n, ia, ja, desca(*), ib, jb, descb(*), ictxt
      integer(c_int), intent(in) :: a(*)
      integer(c_int), intent(inout) :: b(*)
    end subroutine pigemr2d

    subroutine pstrmr2d(uplo, diag, m, n, a, ia, ja, desca, b, ib, jb, descb, ictxt) &
        bind(c, name='redist_pstrmr2d_')
      import :: c_char, c_float, c_int
      character(kind=c_char), intent(in) :: uplo, diag
      integer(c_int), intent(in) :: m, n, ia, ja, desca(*), ib, jb, descb(*), ictxt
      real(c_float), intent(in) :: a(*)
      real(c_float), intent(inout) :: b(*)
    end subroutine pstrmr2d

    subroutine pdtrmr2d(uplo, diag, m, n, a, ia, ja, desca, b, ib, jb, descb, ictxt) &
        bind(c, name='redist_pdtrmr2d_')
      import :: c_char, c_double, c_int
      character(kind=c_char), intent(in) :: uplo, diag
      integer(c_int), intent(in) :: m, n, ia, ja, desca(*), ib, jb, descb(*), ictxt
      real(c_double), intent(in) :: a(*)
      real(c_double), intent(inout) :: b(*)
    end subroutine pdtrmr2d

    subroutine pctrmr2d(uplo, diag, m, n, a, ia, ja, desca, b, ib, jb, descb, ictxt) &
        bind(c, name='redist_pctrmr2d_')
      import :: c_char, c_float_complex, c_int
      character(kind=c_char), intent(in) :: uplo, diag
      integer(c_int), intent(in) :: m, n, ia, ja, desca(*), ib, jb, descb(*), ictxt
      complex(c_float_complex), intent(in) :: a(*)
      complex(c_float_complex), intent(inout) :: b(*)
    end subroutine pctrmr2d

    subroutine pztrmr2d(uplo, diag, m, n, a, ia, ja, desca, b, ib, jb, descb, ictxt) &
        bind(c, name='redist_pztrmr2d_')
      import :: c_char, c_double_complex, c_int
      character(kind=c_char), intent(in) :: uplo, diag
      integer(c_int), intent(in) :: m, n, ia, ja, desca(*), ib, jb, descb(*), ictxt
      complex(c_double_complex), intent(in) :: a(*)
      complex(c_double_complex), intent(inout) :: b(*)
    end subroutine pztrmr2d

    subroutine pitrmr2d(uplo, diag, m, n, a, ia, ja, desca, b, ib, jb, descb, ictxt) &
        bind(c, name='redist_pitrmr2d_')
      import :: c_char, c_int
      character(kind=c_char), intent(in) :: uplo, diag
      integer(c_int), intent(in) :: m, n, ia, ja, desca(*), ib, jb, descb(*), ictxt
      integer(c_int), intent(in) :: a(*)
      integer(c_int), intent(inout) :: b(*)
    end subroutine pitrmr2d

    ! PBLAS: sub(C) := beta sub(C) + alpha op(sub(A)) (redist_scalapack.h).
    subroutine psgeadd(trans, m, n, alpha, a, ia, ja, desca, beta, c, ic, jc, descc) &
        bind(c, name='redist_psgeadd_')
      import :: c_char, c_float, c_int
      character(kind=c_char), intent(in) :: trans
      integer(c_int), intent(in) :: m, n, ia, ja, desca(*), ic, jc, descc(*)
      real(c_float), intent(in) :: alpha, beta, a(*)
      real(c_float), intent(inout) :: c(*)
    end subroutine psgeadd

    subroutine pstradd(uplo, trans, m, n, alpha, a, ia, ja, desca, beta, c, ic, jc, descc) &
        bind(c, name='redist_pstradd_')
      import :: c_char, c_float, c_int
      character(kind=c_char), intent(in) :: uplo, trans
      integer(c_int), intent(in) :: m, n, ia, ja, desca(*), ic, jc, descc(*)
      real(c_float), intent(in) :: alpha, beta, a(*)
      real(c_float), intent(inout) :: c(*)
    end subroutine pstradd

    subroutine pdgeadd(trans, m, n, alpha, a, ia, ja, desca, beta, c, ic, jc, descc) &
        bind(c, name='redist_pdgeadd_')
      import :: c_char, c_double, c_int
      character(kind=c_char), intent(in) :: trans
      integer(c_int), intent(in) :: m, n, ia, ja, desca(*), ic, jc, descc(*)
      real(c_double), intent(in) :: alpha, beta, a(*)
      real(c_double), intent(inout) :: c(*)
    end subroutine pdgeadd

    subroutine pdtradd(uplo, trans, m, n, alpha, a, ia, ja, desca, beta, c, ic, jc, descc) &
        bind(c, name='redist_pdtradd_')
      import :: c_char, c_double, c_int
      character(kind=c_char), intent(in) :: uplo, trans
      integer(c_int), intent(in) :: m, n, ia, ja, desca(*), ic, jc, descc(*)
      real(c_double), intent(in) :: alpha, beta, a(*)
      real(c_double), intent(inout) :: c(*)
    end subroutine pdtradd

    subroutine pcgeadd(trans, m, n, alpha, a, ia, ja, desca, beta, c, ic, jc, descc) &
        bind(c, name='redist_pcgeadd_')
      import :: c_char, c_float_complex, c_int
      character(kind=c_char), intent(in) :: trans
      integer(c_int), intent(in) :: m, n, ia, ja, desca(*), ic, jc, descc(*)
      complex(c_float_complex), intent(in) :: alpha, beta, a(*)
      complex(c_float_complex), intent(inout) :: c(*)
    end subroutine pcgeadd

    subroutine pctradd(uplo, trans, m, n, alpha, a, ia, ja, desca, beta, c, ic, jc, descc) &
        bind(c, name='redist_pctradd_')
      import :: c_char, c_float_complex, c_int
      character(kind=c_char), intent(in) :: uplo, trans
      integer(c_int), intent(in) :: m, n, ia, ja, desca(*), ic, jc, descc(*)
      complex(c_float_complex), intent(in) :: alpha, beta, a(*)
      complex(c_float_complex), intent(inout) :: c(*)
    end subroutine pctradd

    subroutine pzgeadd(trans, m, n, alpha, a, ia, ja, desca, beta, c, ic, jc, descc) &
        bind(c, name='redist_pzgeadd_')
      import :: c_char, c_double_complex, c_int
      character(kind=c_char), intent(in) :: trans
      integer(c_int), intent(in) :: m, n, ia, ja, desca(*), ic, jc, descc(*)
      complex(c_double_complex), intent(in) :: alpha, beta, a(*)
      complex(c_double_complex), intent(inout) :: c(*)
    end subroutine pzgeadd

    subroutine pztradd(uplo, trans, m, n, alpha, a, ia, ja, desca, beta, c, ic, jc, descc) &
        bind(c, name='redist_pztradd_')
      import :: c_char, c_double_complex, c_int
      character(kind=c_char), intent(in) :: uplo, trans
      integer(c_int), intent(in) :: m, n, ia, ja, desca(*), ic, jc, descc(*)
      complex(c_double_complex), intent(in) :: alpha, beta, a(*)
      complex(c_double_complex), intent(inout) :: c(*)
    end subroutine pztradd

    subroutine pstran(m, n, alpha, a, ia, ja, desca, beta, c, ic, jc, descc) &
        bind(c, name='redist_pstran_')
      import :: c_float, c_int
      integer(c_int), intent(in) :: m, n, ia, ja, desca(*), ic, jc, descc(*)
      real(c_float), intent(in) :: alpha, beta, a(*)
      real(c_float), intent(inout) :: c(*)
    end subroutine pstran

    subroutine pdtran(m, n, alpha, a, ia, ja, desca, beta, c, ic, jc, descc) &
        bind(c, name='redist_pdtran_')
      import :: c_double, c_int
      integer(c_int), intent(in) :: m, n, ia, ja, desca(*), ic, jc, descc(*)
      real(c_double), intent(in) :: alpha, beta, a(*)
      real(c_double), intent(inout) :: c(*)
    end subroutine pdtran

    subroutine pctranu(m, n, alpha, a, ia, ja, desca, beta, c, ic, jc, descc) &
        bind(c, name='redist_pctranu_')
      import :: c_float_complex, c_int
      integer(c_int), intent(in) :: m, n, ia, ja, desca(*), ic, jc, descc(*)
      complex(c_float_complex), intent(in) :: alpha, beta, a(*)
      complex(c_float_complex), intent(inout) :: c(*)
    end subroutine pctranu

    subroutine pztranu(m, n, alpha, a, ia, ja, desca, beta, c, ic, jc, descc) &
        bind(c, name='redist_pztranu_')
      import :: c_double_complex, c_int
      integer(c_int), intent(in) :: m, n, ia, ja, desca(*), ic, jc, descc(*)
      complex(c_double_complex), intent(in) :: alpha, beta, a(*)
      complex(c_double_complex), intent(inout) :: c(*)
    end subroutine pztranu

    subroutine pctranc(m, n, alpha, a, ia, ja, desca, beta, c, ic, jc, descc) &
        bind(c, name='redist_pctranc_')
      import :: c_float_complex, c_int
      integer(c_int), intent(in) :: m, n, ia, ja, desca(*), ic, jc, descc(*)
      complex(c_float_complex), intent(in) :: alpha, beta, a(*)
      complex(c_float_complex), intent(inout) :: c(*)
    end subroutine pctranc

    subroutine pztranc(m, n, alpha, a, ia, ja, desca, beta, c, ic, jc, descc) &
        bind(c, name='redist_pztranc_')
      import :: c_double_complex, c_int
      integer(c_int), intent(in) :: m, n, ia, ja, desca(*), ic, jc, descc(*)
      complex(c_double_complex), intent(in) :: alpha, beta, a(*)
      complex(c_double_complex), intent(inout) :: c(*)
    end subroutine pztranc

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
