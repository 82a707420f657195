      PROGRAM LEGACY
*
*     A ScaLAPACK program as it was written in the 1990s, unchanged:
*     it copies a 40 x 30 matrix from a 2 x 2 grid (4 x 4 blocks) onto
*     a 1 x NPROCS grid (3 x 5 blocks) with PDGEMR2D and checks every
*     element.  Processes outside the 2 x 2 grid pass DESCA(CTXT_) = -1.
*
*     Linked with -lredist_scalapack -lredist ahead of ScaLAPACK, its
*     PDGEMR2D is redist's, with no source change:
*       mpif90 legacy_pdgemr2d.f -lredist_scalapack -lredist \
*              -lscalapack-openmpi
*
*     Run with 4 processes or more.
*
      INTEGER            M, N, MB1, NB1, MB2, NB2, LDA, LDB
      PARAMETER          ( M = 40, N = 30, MB1 = 4, NB1 = 4, MB2 = 3,
     $                     NB2 = 5, LDA = 40, LDB = 40 )
      INTEGER            CTXT_
      PARAMETER          ( CTXT_ = 2 )
      INTEGER            IAM, NPROCS, ICTXT, CTXT1, CTXT2, NPROW, NPCOL,
     $                   MYROW, MYCOL, INFO, I, J, II, JJ, LOCR, LOCC,
     $                   NBAD
      INTEGER            DESCA( 9 ), DESCB( 9 )
      DOUBLE PRECISION   A( LDA, N ), B( LDB, N ), WRONG( 1 )
      INTEGER            NUMROC, INDXL2G
      EXTERNAL           NUMROC, INDXL2G
*
      CALL BLACS_PINFO( IAM, NPROCS )
      IF( NPROCS.LT.4 ) THEN
         IF( IAM.EQ.0 ) WRITE( *, * ) 'Run with 4 processes or more'
         CALL BLACS_EXIT( 0 )
         STOP 1
      END IF
*
*     ICTXT holds every process; CTXT1 the 2 x 2 source grid; CTXT2 the
*     1 x NPROCS destination grid.
*
      CALL BLACS_GET( -1, 0, ICTXT )
      CALL BLACS_GRIDINIT( ICTXT, 'Row-major', 1, NPROCS )
      CALL BLACS_GET( -1, 0, CTXT1 )
      CALL BLACS_GRIDINIT( CTXT1, 'Row-major', 2, 2 )
      CALL BLACS_GET( -1, 0, CTXT2 )
      CALL BLACS_GRIDINIT( CTXT2, 'Row-major', 1, NPROCS )
*
      DESCA( CTXT_ ) = -1
      CALL BLACS_GRIDINFO( CTXT1, NPROW, NPCOL, MYROW, MYCOL )
      IF( MYROW.GE.0 ) THEN
         LOCR = NUMROC( M, MB1, MYROW, 0, NPROW )
         LOCC = NUMROC( N, NB1, MYCOL, 0, NPCOL )
         CALL DESCINIT( DESCA, M, N, MB1, NB1, 0, 0, CTXT1, LDA, INFO )
         DO 20 JJ = 1, LOCC
            J = INDXL2G( JJ, NB1, MYCOL, 0, NPCOL )
            DO 10 II = 1, LOCR
               I = INDXL2G( II, MB1, MYROW, 0, NPROW )
               A( II, JJ ) = DBLE( I ) + 1000.0D0 * DBLE( J )
   10       CONTINUE
   20    CONTINUE
      END IF
*
      CALL BLACS_GRIDINFO( CTXT2, NPROW, NPCOL, MYROW, MYCOL )
      CALL DESCINIT( DESCB, M, N, MB2, NB2, 0, 0, CTXT2, LDB, INFO )
*
      CALL PDGEMR2D( M, N, A, 1, 1, DESCA, B, 1, 1, DESCB, ICTXT )
*
      NBAD = 0
      LOCR = NUMROC( M, MB2, MYROW, 0, NPROW )
      LOCC = NUMROC( N, NB2, MYCOL, 0, NPCOL )
      DO 40 JJ = 1, LOCC
         J = INDXL2G( JJ, NB2, MYCOL, 0, NPCOL )
         DO 30 II = 1, LOCR
            I = INDXL2G( II, MB2, MYROW, 0, NPROW )
            IF( ABS( B( II, JJ ) - DBLE( I ) - 1000.0D0 * DBLE( J ) )
     $          .GT.0.0D0 ) NBAD = NBAD + 1
   30    CONTINUE
   40 CONTINUE
      WRONG( 1 ) = DBLE( NBAD )
      CALL DGSUM2D( ICTXT, 'All', ' ', 1, 1, WRONG, 1, -1, -1 )
      IF( IAM.EQ.0 ) WRITE( *, FMT = 9999 ) M, N, NPROCS,
     $   INT( WRONG( 1 ) )
 9999 FORMAT( 'PDGEMR2D: ', I0, ' x ', I0, ' matrix, 2 x 2 grid to ',
     $        '1 x ', I0, ' grid, ', I0, ' elements wrong' )
*
      IF( DESCA( CTXT_ ).GE.0 ) CALL BLACS_GRIDEXIT( CTXT1 )
      CALL BLACS_GRIDEXIT( CTXT2 )
      CALL BLACS_GRIDEXIT( ICTXT )
      CALL BLACS_EXIT( 0 )
      IF( NINT( WRONG( 1 ) ).NE.0 ) STOP 1
      END
