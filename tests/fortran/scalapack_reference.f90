!> ScaLAPACK's own PxGEMR2D / PxTRMR2D (the reference the tests compare redist with) under
!> generic names, and the BLACS and TOOLS routines the tests use. Linked without the drop-in, so
!> the symbols pdgemr2d_ ... are ScaLAPACK's.
module scalapack_reference
  use, intrinsic :: iso_c_binding, only: c_char, c_double, c_double_complex, c_float, &
                                         c_float_complex, c_int
  implicit none
  private
  public :: reference_gemr2d, reference_trmr2d
  public :: blacs_pinfo, blacs_get, blacs_gridinit, blacs_gridmap, blacs_gridinfo, &
            blacs_gridexit, blacs_exit, numroc, indxl2g

  interface reference_gemr2d
    subroutine scalapack_psgemr2d(m, n, a, ia, ja, desca, b, ib, jb, descb, ictxt) &
        bind(c, name='psgemr2d_')
      import :: c_int, c_float
      integer(c_int), intent(in) :: m, n, ia, ja, desca(9), ib, jb, descb(9), ictxt
      real(c_float), intent(in) :: a(*)
      real(c_float), intent(inout) :: b(*)
    end subroutine scalapack_psgemr2d
    subroutine scalapack_pdgemr2d(m, n, a, ia, ja, desca, b, ib, jb, descb, ictxt) &
        bind(c, name='pdgemr2d_')
      import :: c_int, c_double
      integer(c_int), intent(in) :: m, n, ia, ja, desca(9), ib, jb, descb(9), ictxt
      real(c_double), intent(in) :: a(*)
      real(c_double), intent(inout) :: b(*)
    end subroutine scalapack_pdgemr2d
    subroutine scalapack_pcgemr2d(m, n, a, ia, ja, desca, b, ib, jb, descb, ictxt) &
        bind(c, name='pcgemr2d_')
      import :: c_int, c_float_complex
      integer(c_int), intent(in) :: m, n, ia, ja, desca(9), ib, jb, descb(9), ictxt
      complex(c_float_complex), intent(in) :: a(*)
      complex(c_float_complex), intent(inout) :: b(*)
    end subroutine scalapack_pcgemr2d
    subroutine scalapack_pzgemr2d(m, n, a, ia, ja, desca, b, ib, jb, descb, ictxt) &
        bind(c, name='pzgemr2d_')
      import :: c_int, c_double_complex
      integer(c_int), intent(in) :: m, n, ia, ja, desca(9), ib, jb, descb(9), ictxt
      complex(c_double_complex), intent(in) :: a(*)
      complex(c_double_complex), intent(inout) :: b(*)
    end subroutine scalapack_pzgemr2d
    subroutine scalapack_pigemr2d(m, n, a, ia, ja, desca, b, ib, jb, descb, ictxt) &
        bind(c, name='pigemr2d_')
      import :: c_int
      integer(c_int), intent(in) :: m, n, ia, ja, desca(9), ib, jb, descb(9), ictxt
      integer(c_int), intent(in) :: a(*)
      integer(c_int), intent(inout) :: b(*)
    end subroutine scalapack_pigemr2d
  end interface reference_gemr2d

  interface reference_trmr2d
    subroutine scalapack_pstrmr2d(uplo, diag, m, n, a, ia, ja, desca, b, ib, jb, descb, &
                                   ictxt) bind(c, name='pstrmr2d_')
      import :: c_char, c_int, c_float
      character(kind=c_char), intent(in) :: uplo, diag
      integer(c_int), intent(in) :: m, n, ia, ja, desca(9), ib, jb, descb(9), ictxt
      real(c_float), intent(in) :: a(*)
      real(c_float), intent(inout) :: b(*)
    end subroutine scalapack_pstrmr2d
    subroutine scalapack_pdtrmr2d(uplo, diag, m, n, a, ia, ja, desca, b, ib, jb, descb, &
                                   ictxt) bind(c, name='pdtrmr2d_')
      import :: c_char, c_int, c_double
      character(kind=c_char), intent(in) :: uplo, diag
      integer(c_int), intent(in) :: m, n, ia, ja, desca(9), ib, jb, descb(9), ictxt
      real(c_double), intent(in) :: a(*)
      real(c_double), intent(inout) :: b(*)
    end subroutine scalapack_pdtrmr2d
    subroutine scalapack_pctrmr2d(uplo, diag, m, n, a, ia, ja, desca, b, ib, jb, descb, &
                                   ictxt) bind(c, name='pctrmr2d_')
      import :: c_char, c_int, c_float_complex
      character(kind=c_char), intent(in) :: uplo, diag
      integer(c_int), intent(in) :: m, n, ia, ja, desca(9), ib, jb, descb(9), ictxt
      complex(c_float_complex), intent(in) :: a(*)
      complex(c_float_complex), intent(inout) :: b(*)
    end subroutine scalapack_pctrmr2d
    subroutine scalapack_pztrmr2d(uplo, diag, m, n, a, ia, ja, desca, b, ib, jb, descb, &
                                   ictxt) bind(c, name='pztrmr2d_')
      import :: c_char, c_int, c_double_complex
      character(kind=c_char), intent(in) :: uplo, diag
      integer(c_int), intent(in) :: m, n, ia, ja, desca(9), ib, jb, descb(9), ictxt
      complex(c_double_complex), intent(in) :: a(*)
      complex(c_double_complex), intent(inout) :: b(*)
    end subroutine scalapack_pztrmr2d
    subroutine scalapack_pitrmr2d(uplo, diag, m, n, a, ia, ja, desca, b, ib, jb, descb, &
                                   ictxt) bind(c, name='pitrmr2d_')
      import :: c_char, c_int
      character(kind=c_char), intent(in) :: uplo, diag
      integer(c_int), intent(in) :: m, n, ia, ja, desca(9), ib, jb, descb(9), ictxt
      integer(c_int), intent(in) :: a(*)
      integer(c_int), intent(inout) :: b(*)
    end subroutine scalapack_pitrmr2d
  end interface reference_trmr2d

  interface
    subroutine blacs_pinfo(mypnum, nprocs)
      integer, intent(out) :: mypnum, nprocs
    end subroutine blacs_pinfo
    subroutine blacs_get(ictxt, what, val)
      integer, intent(in) :: ictxt, what
      integer, intent(out) :: val
    end subroutine blacs_get
    subroutine blacs_gridinit(ictxt, order, nprow, npcol)
      integer, intent(inout) :: ictxt
      character, intent(in) :: order
      integer, intent(in) :: nprow, npcol
    end subroutine blacs_gridinit
    subroutine blacs_gridmap(ictxt, usermap, ldumap, nprow, npcol)
      integer, intent(inout) :: ictxt
      integer, intent(in) :: ldumap, nprow, npcol
      integer, intent(in) :: usermap(ldumap, *)
    end subroutine blacs_gridmap
    subroutine blacs_gridinfo(ictxt, nprow, npcol, myrow, mycol)
      integer, intent(in) :: ictxt
      integer, intent(out) :: nprow, npcol, myrow, mycol
    end subroutine blacs_gridinfo
    subroutine blacs_gridexit(ictxt)
      integer, intent(in) :: ictxt
    end subroutine blacs_gridexit
    subroutine blacs_exit(notdone)
      integer, intent(in) :: notdone
    end subroutine blacs_exit
    integer function numroc(n, nb, iproc, isrcproc, nprocs)
      integer, intent(in) :: n, nb, iproc, isrcproc, nprocs
    end function numroc
    integer function indxl2g(indxloc, nb, iproc, isrcproc, nprocs)
      integer, intent(in) :: indxloc, nb, iproc, isrcproc, nprocs
    end function indxl2g
  end interface

end module scalapack_reference
