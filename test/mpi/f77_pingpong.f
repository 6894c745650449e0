C     Fixed-form Fortran with mpif.h on 2 ranks: 5 ping-pongs of 10
C     integers (tag 70 from rank 0, tag 71 back, each element plus 1),
C     then an MPI_ALLREDUCE and an MPI_BARRIER. Statuses and data are
C     checked; the program stops with code 1 on any mismatch.
C     Expectations: f77_pingpong.expect.
      PROGRAM F77PP
      IMPLICIT NONE
      INCLUDE 'mpif.h'
      INTEGER IERR, RANK, NPROCS, I, J, ERRS, ISUM, IONE, CNT
      INTEGER BUF(10), STATUS(MPI_STATUS_SIZE)
      ERRS = 0
      CALL MPI_INIT(IERR)
      CALL MPI_COMM_RANK(MPI_COMM_WORLD, RANK, IERR)
      CALL MPI_COMM_SIZE(MPI_COMM_WORLD, NPROCS, IERR)
      IF (NPROCS .NE. 2) THEN
         PRINT *, 'f77_pingpong needs 2 ranks'
         CALL MPI_ABORT(MPI_COMM_WORLD, 2, IERR)
      END IF
      DO 40 I = 1, 5
         IF (RANK .EQ. 0) THEN
            DO 10 J = 1, 10
               BUF(J) = 100 * I + J
   10       CONTINUE
            CALL MPI_SEND(BUF, 10, MPI_INTEGER, 1, 70, MPI_COMM_WORLD,
     &                    IERR)
            CALL MPI_RECV(BUF, 10, MPI_INTEGER, 1, 71, MPI_COMM_WORLD,
     &                    STATUS, IERR)
            CALL MPI_GET_COUNT(STATUS, MPI_INTEGER, CNT, IERR)
            IF (STATUS(MPI_SOURCE) .NE. 1 .OR. STATUS(MPI_TAG) .NE. 71
     &          .OR. CNT .NE. 10) THEN
               PRINT *, 'rank 0: bad status', STATUS(MPI_SOURCE),
     &                  STATUS(MPI_TAG), CNT
               ERRS = ERRS + 1
            END IF
            DO 20 J = 1, 10
               IF (BUF(J) .NE. 100 * I + J + 1) THEN
                  PRINT *, 'rank 0: round', I, 'element', J, BUF(J)
                  ERRS = ERRS + 1
               END IF
   20       CONTINUE
         ELSE
            CALL MPI_RECV(BUF, 10, MPI_INTEGER, 0, 70, MPI_COMM_WORLD,
     &                    STATUS, IERR)
            IF (STATUS(MPI_SOURCE) .NE. 0 .OR. STATUS(MPI_TAG) .NE. 70)
     &      THEN
               PRINT *, 'rank 1: bad status', STATUS(MPI_SOURCE),
     &                  STATUS(MPI_TAG)
               ERRS = ERRS + 1
            END IF
            DO 30 J = 1, 10
               IF (BUF(J) .NE. 100 * I + J) THEN
                  PRINT *, 'rank 1: round', I, 'element', J, BUF(J)
                  ERRS = ERRS + 1
               END IF
               BUF(J) = BUF(J) + 1
   30       CONTINUE
            CALL MPI_SEND(BUF, 10, MPI_INTEGER, 0, 71, MPI_COMM_WORLD,
     &                    IERR)
         END IF
   40 CONTINUE
      IONE = RANK + 1
      CALL MPI_ALLREDUCE(IONE, ISUM, 1, MPI_INTEGER, MPI_SUM,
     &                   MPI_COMM_WORLD, IERR)
      IF (ISUM .NE. 3) THEN
         PRINT *, 'MPI_ALLREDUCE gave', ISUM
         ERRS = ERRS + 1
      END IF
      CALL MPI_BARRIER(MPI_COMM_WORLD, IERR)
      CALL MPI_FINALIZE(IERR)
      IF (ERRS .NE. 0) STOP 1
      END
