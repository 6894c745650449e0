! 'use mpi_f08' on 2 ranks: 5 ping-pongs of 10 integers (tag 72 from rank 0,
! tag 73 back, each element plus 1), then MPI_Allreduce. (MPICH's mpi_f08 calls
! the C MPI_ functions for these; for the calls it routes to PMPI_ directly, see
! f08_pmpi.f90.)
! MPICH's mpi_f08 MPI_Init calls PMPI_Init directly, so the tracing layer starts
! late, on the first call it sees; the trace must still hold every call after
! that. Statuses and data are checked; the program stops with code 1 on any
! mismatch. Expectations: f08_pingpong.expect.
program f08_pingpong
    use mpi_f08
    implicit none
    integer :: rank, nprocs, i, j, errs, isum, ione, cnt, wlen
    character(len=32) :: want, have
    integer :: buf(10)
    type(MPI_Status) :: status

    errs = 0
    call MPI_Init()
    call MPI_Comm_rank(MPI_COMM_WORLD, rank)
    call MPI_Comm_size(MPI_COMM_WORLD, nprocs)
    ! In the modes with headers the layer raises UCX's eager limit by the header before
    ! PMPI_Init (src/mpid/pb_env.c), here from its load since MPI_Init is not wrapped:
    ! F08_WANT_RNDV (testlist) is the value it must have set.
    call get_environment_variable('F08_WANT_RNDV', want, status=wlen)
    if (wlen == 0) then
        call get_environment_variable('UCX_RNDV_THRESH', have)
        if (trim(have) /= trim(want)) then
            print *, 'UCX_RNDV_THRESH is "', trim(have), '", expected ', trim(want)
            errs = errs + 1
        end if
    end if
    if (nprocs /= 2) then
        print *, 'f08_pingpong needs 2 ranks'
        call MPI_Abort(MPI_COMM_WORLD, 2)
    end if
    do i = 1, 5
        if (rank == 0) then
            do j = 1, 10
                buf(j) = 100 * i + j
            end do
            call MPI_Send(buf, 10, MPI_INTEGER, 1, 72, MPI_COMM_WORLD)
            call MPI_Recv(buf, 10, MPI_INTEGER, 1, 73, MPI_COMM_WORLD, status)
            call MPI_Get_count(status, MPI_INTEGER, cnt)
            if (status%MPI_SOURCE /= 1 .or. status%MPI_TAG /= 73 .or. cnt /= 10) then
                print *, 'rank 0: bad status', status%MPI_SOURCE, status%MPI_TAG, cnt
                errs = errs + 1
            end if
            do j = 1, 10
                if (buf(j) /= 100 * i + j + 1) then
                    print *, 'rank 0: round', i, 'element', j, buf(j)
                    errs = errs + 1
                end if
            end do
        else
            call MPI_Recv(buf, 10, MPI_INTEGER, 0, 72, MPI_COMM_WORLD, status)
            if (status%MPI_SOURCE /= 0 .or. status%MPI_TAG /= 72) then
                print *, 'rank 1: bad status', status%MPI_SOURCE, status%MPI_TAG
                errs = errs + 1
            end if
            do j = 1, 10
                if (buf(j) /= 100 * i + j) then
                    print *, 'rank 1: round', i, 'element', j, buf(j)
                    errs = errs + 1
                end if
                buf(j) = buf(j) + 1
            end do
            call MPI_Send(buf, 10, MPI_INTEGER, 0, 73, MPI_COMM_WORLD)
        end if
    end do
    ione = rank + 1
    call MPI_Allreduce(ione, isum, 1, MPI_INTEGER, MPI_SUM, MPI_COMM_WORLD)
    if (isum /= 3) then
        print *, 'MPI_Allreduce gave', isum
        errs = errs + 1
    end if
    call MPI_Finalize()
    if (errs /= 0) stop 1
end program f08_pingpong
