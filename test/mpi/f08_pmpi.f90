! 'use mpi_f08' on 2 ranks, with the calls that MPICH 4.0.2's mpi_f08 module
! routes to PMPI_ directly (libmpichfort.so.12 calls PMPI_Barrier, PMPI_Wait,
! PMPI_Comm_dup, PMPI_Probe, ... instead of MPI_*), so a PMPI tracing layer never
! sees them unless it also intercepts the Fortran entry points (libvtrace does:
! src/mpi/wrappers_f08.c, maint/f08_direct.txt):
!   MPI_Barrier; Irecv + Isend of 4 integers (tag 74) completed by MPI_Wait;
!   MPI_Comm_dup, Send/Recv on the duplicate (tag 75); MPI_Probe + MPI_Recv (tag 76)
!   from rank 0 to rank 1; MPI_Comm_free.
! Statuses and data are checked; the program stops with code 1 on any mismatch.
! Expectations: f08_pmpi.expect (what the program did).
program f08_pmpi
    use mpi_f08
    implicit none
    integer :: rank, nprocs, other, j, errs, cnt
    integer :: sbuf(4), rbuf(4)
    type(MPI_Status) :: status
    type(MPI_Request) :: rreq, sreq
    type(MPI_Comm) :: dup

    errs = 0
    call MPI_Init()
    call MPI_Comm_rank(MPI_COMM_WORLD, rank)
    call MPI_Comm_size(MPI_COMM_WORLD, nprocs)
    if (nprocs /= 2) then
        print *, 'f08_pmpi needs 2 ranks'
        call MPI_Abort(MPI_COMM_WORLD, 2)
    end if
    other = 1 - rank
    call MPI_Barrier(MPI_COMM_WORLD)

    do j = 1, 4
        sbuf(j) = 10 * rank + j
        rbuf(j) = -1
    end do
    call MPI_Irecv(rbuf, 4, MPI_INTEGER, other, 74, MPI_COMM_WORLD, rreq)
    call MPI_Isend(sbuf, 4, MPI_INTEGER, other, 74, MPI_COMM_WORLD, sreq)
    call MPI_Wait(rreq, status)
    call MPI_Wait(sreq, MPI_STATUS_IGNORE)
    call MPI_Get_count(status, MPI_INTEGER, cnt)
    if (status%MPI_SOURCE /= other .or. status%MPI_TAG /= 74 .or. cnt /= 4) then
        print *, 'Wait: bad status', status%MPI_SOURCE, status%MPI_TAG, cnt
        errs = errs + 1
    end if
    do j = 1, 4
        if (rbuf(j) /= 10 * other + j) then
            print *, 'Irecv: element', j, rbuf(j)
            errs = errs + 1
        end if
    end do

    call MPI_Comm_dup(MPI_COMM_WORLD, dup)
    if (rank == 0) then
        call MPI_Send(sbuf, 4, MPI_INTEGER, 1, 75, dup)
        call MPI_Send(sbuf, 2, MPI_INTEGER, 1, 76, MPI_COMM_WORLD)
    else
        call MPI_Recv(rbuf, 4, MPI_INTEGER, 0, 75, dup, status)
        if (status%MPI_SOURCE /= 0 .or. status%MPI_TAG /= 75 .or. rbuf(4) /= 4) then
            print *, 'Recv on dup: bad', status%MPI_SOURCE, status%MPI_TAG, rbuf(4)
            errs = errs + 1
        end if
        call MPI_Probe(MPI_ANY_SOURCE, MPI_ANY_TAG, MPI_COMM_WORLD, status)
        call MPI_Get_count(status, MPI_INTEGER, cnt)
        if (status%MPI_SOURCE /= 0 .or. status%MPI_TAG /= 76 .or. cnt /= 2) then
            print *, 'Probe: bad status', status%MPI_SOURCE, status%MPI_TAG, cnt
            errs = errs + 1
        end if
        call MPI_Recv(rbuf, cnt, MPI_INTEGER, status%MPI_SOURCE, status%MPI_TAG, &
                      MPI_COMM_WORLD, status)
    end if
    call MPI_Comm_free(dup)
    call MPI_Finalize()
    if (errs /= 0) stop 1
end program f08_pmpi
