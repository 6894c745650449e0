! 'use mpi' on 2 ranks: the routines whose Fortran bindings convert more than handles
! (under Open MPI, libvtrace's own Fortran entry points, src/mpi/wrappers_ompi.c):
!  - LOGICAL arguments in and out: MPI_Initialized, MPI_Comm_test_inter, MPI_Cart_create
!    (periods, reorder) and MPI_Cart_get, MPI_Test, MPI_Testall, MPI_Iprobe,
!    MPI_Test_cancelled, MPI_Op_commutative; the raw bits of each LOGICAL are logged
!    (transfer to an integer), so a .TRUE. other than the compiler's shows;
!  - CHARACTER arguments (a hidden length each, blank-padded): MPI_File_open with a
!    name padded with blanks, MPI_File_set_view's datarep, and MPI_Error_string (a
!    string out, not traced);
!  - arrays of datatype handles: MPI_Alltoallw (a derived receive type, and with
!    MPI_IN_PLACE), MPI_Ialltoallw (predefined types), MPI_Neighbor_alltoallw and MPI_Ineighbor_alltoallw
!    on a periodic Cartesian line.
! Each rank writes what it sees to f90_usempi.RANK.log; the tests compare the logs with
! those of an untraced run (RUN_COMPARE in testlist) and the trace with
! f90_usempi.expect. Stops with code 1 when a result is not what MPI defines.
program f90_usempi
    use mpi
    implicit none
    integer :: ierr, rank, nprocs, errs, u, i, fh, cart, pair, req, reqs(2)
    integer :: sbuf(4), rbuf(4), ibuf(20), dims(1), coords(1), status(MPI_STATUS_SIZE)
    integer :: counts(2), displs(2), types(2), rtypes(2), one(2), zero(2)
    integer(kind=MPI_ADDRESS_KIND) :: adispls(2)
    integer(kind=MPI_OFFSET_KIND) :: disp
    logical :: flag, periods(1), periods_out(1)
    character(len=40) :: fname, rep
    character(len=MPI_MAX_ERROR_STRING) :: msg
    character(len=16) :: logname
    integer :: msglen

    errs = 0
    call MPI_Initialized(flag, ierr)
    call check(.not. flag, 'MPI_Initialized before MPI_Init')
    i = transfer(flag, i)
    call MPI_Init(ierr)
    call MPI_Comm_rank(MPI_COMM_WORLD, rank, ierr)
    call MPI_Comm_size(MPI_COMM_WORLD, nprocs, ierr)
    if (nprocs /= 2) then
        print *, 'f90_usempi needs 2 ranks'
        call MPI_Abort(MPI_COMM_WORLD, 2, ierr)
    end if
    write (logname, '(A,I0,A)') 'f90_usempi.', rank, '.log'
    open (newunit=u, file=logname, status='replace', action='write')
    write (u, '(A,I0)') 'initialized before init: ', i
    call MPI_Initialized(flag, ierr)
    call check(flag, 'MPI_Initialized after MPI_Init')
    call logical_line('initialized', flag)
    call MPI_Comm_test_inter(MPI_COMM_WORLD, flag, ierr)
    call check(.not. flag, 'MPI_Comm_test_inter')
    call logical_line('test_inter', flag)
    call MPI_Op_commutative(MPI_SUM, flag, ierr)
    call check(flag, 'MPI_Op_commutative')
    call logical_line('commutative', flag)

    ! a periodic Cartesian line of 2 ranks (logical in: periods, reorder)
    dims(1) = 2
    periods(1) = .true.
    call MPI_Cart_create(MPI_COMM_WORLD, 1, dims, periods, .false., cart, ierr)
    call MPI_Cart_get(cart, 1, dims, periods_out, coords, ierr)
    call check(periods_out(1) .and. dims(1) == 2 .and. coords(1) == rank, 'MPI_Cart_get')
    call logical_line('cart periods', periods_out(1))
    write (u, '(A,I0,A,I0,A,I0)') 'cart ierr ', ierr, ' dims ', dims(1), ' coords ', coords(1)

    ! logical out of the test and probe calls
    pair = 1 - rank
    req = MPI_REQUEST_NULL
    call MPI_Test(req, flag, status, ierr)
    call check(flag, 'MPI_Test of MPI_REQUEST_NULL')
    call logical_line('test null', flag)
    call MPI_Irecv(rbuf, 1, MPI_INTEGER, pair, 5, MPI_COMM_WORLD, req, ierr)
    call MPI_Test(req, flag, status, ierr)
    call check(.not. flag, 'MPI_Test before the message is sent')
    call logical_line('test pending', flag)
    call MPI_Barrier(MPI_COMM_WORLD, ierr)
    sbuf(1) = 10 + rank
    call MPI_Send(sbuf, 1, MPI_INTEGER, pair, 5, MPI_COMM_WORLD, ierr)
    flag = .false.
    do while (.not. flag)
        call MPI_Test(req, flag, status, ierr)
    end do
    call check(rbuf(1) == 10 + pair .and. status(MPI_SOURCE) == pair .and. status(MPI_TAG) == 5, 'MPI_Test')
    call logical_line('test done', flag)
    call MPI_Test_cancelled(status, flag, ierr)
    call check(.not. flag, 'MPI_Test_cancelled')
    call logical_line('cancelled', flag)
    call MPI_Isend(sbuf, 2, MPI_INTEGER, pair, 6, MPI_COMM_WORLD, reqs(1), ierr)
    call MPI_Irecv(rbuf, 2, MPI_INTEGER, pair, 6, MPI_COMM_WORLD, reqs(2), ierr)
    flag = .false.
    do while (.not. flag)
        call MPI_Testall(2, reqs, flag, MPI_STATUSES_IGNORE, ierr)
    end do
    call check(reqs(1) == MPI_REQUEST_NULL .and. reqs(2) == MPI_REQUEST_NULL, 'MPI_Testall')
    call logical_line('testall', flag)
    call MPI_Send(sbuf, 3, MPI_INTEGER, pair, 7, MPI_COMM_WORLD, ierr)
    flag = .false.
    do while (.not. flag)
        call MPI_Iprobe(pair, 7, MPI_COMM_WORLD, flag, status, ierr)
    end do
    call logical_line('iprobe', flag)
    call MPI_Recv(rbuf, 3, MPI_INTEGER, pair, 7, MPI_COMM_WORLD, status, ierr)
    call MPI_Barrier(MPI_COMM_WORLD, ierr)
    call MPI_Iprobe(pair, 99, MPI_COMM_WORLD, flag, MPI_STATUS_IGNORE, ierr)
    call check(.not. flag, 'MPI_Iprobe of a tag never sent')
    call logical_line('iprobe none', flag)

    ! strings: a file name and a datarep padded with blanks
    fname = 'f90_usempi.dat'
    rep = 'native'
    call MPI_File_open(MPI_COMM_WORLD, fname, MPI_MODE_CREATE + MPI_MODE_WRONLY, MPI_INFO_NULL, fh, ierr)
    call check(ierr == MPI_SUCCESS, 'MPI_File_open for writing')
    disp = rank * 40
    call MPI_File_set_view(fh, disp, MPI_INTEGER, MPI_INTEGER, rep, MPI_INFO_NULL, ierr)
    call check(ierr == MPI_SUCCESS, 'MPI_File_set_view')
    do i = 1, 10
        ibuf(i) = 100 * rank + i
    end do
    call MPI_File_write_all(fh, ibuf, 10, MPI_INTEGER, status, ierr)
    call MPI_File_close(fh, ierr)
    call MPI_File_open(MPI_COMM_WORLD, fname, MPI_MODE_RDONLY, MPI_INFO_NULL, fh, ierr)
    call MPI_File_set_view(fh, 0_MPI_OFFSET_KIND, MPI_INTEGER, MPI_INTEGER, rep, MPI_INFO_NULL, ierr)
    ibuf = 0
    call MPI_File_read_all(fh, ibuf, 20, MPI_INTEGER, status, ierr)
    call MPI_File_close(fh, ierr)
    do i = 1, 10
        call check(ibuf(i) == i .and. ibuf(10 + i) == 100 + i, 'the file read back')
    end do
    write (u, '(A,20(1X,I0))') 'file', ibuf
    ! a string out (not traced): blank-padded
    msg = repeat('x', len(msg))
    call MPI_Error_string(MPI_ERR_TRUNCATE, msg, msglen, ierr)
    call check(msg(msglen + 1:) == ' ', 'MPI_Error_string: blank padding')
    write (u, '(A,I0,3A)') 'error string ', msglen, ' [', trim(msg), ']'

    ! Alltoallw: 2 integers to each rank; received through a derived type
    call MPI_Type_contiguous(2, MPI_INTEGER, rtypes(1), ierr)
    call MPI_Type_commit(rtypes(1), ierr)
    rtypes(2) = rtypes(1)
    types = MPI_INTEGER
    counts = 2
    one = 1
    zero = 0
    displs(1) = 0
    displs(2) = 8
    sbuf = (/ (1000 * rank + i, i = 1, 4) /)
    rbuf = 0
    call MPI_Alltoallw(sbuf(1), counts, displs, types, rbuf, one, displs, rtypes, MPI_COMM_WORLD, ierr)
    call check(all(rbuf == (/ 2 * rank + 1, 2 * rank + 2, 1001 + 2 * rank, 1002 + 2 * rank /)), 'MPI_Alltoallw')
    write (u, '(A,I0,4(1X,I0))') 'alltoallw ', ierr, rbuf
    rbuf = (/ (2000 * rank + i, i = 1, 4) /)
    call MPI_Alltoallw(MPI_IN_PLACE, zero, zero, types, rbuf, counts, displs, types, MPI_COMM_WORLD, ierr)
    write (u, '(A,I0,4(1X,I0))') 'alltoallw in place ', ierr, rbuf
    call check(all(rbuf == (/ 2 * rank + 1, 2 * rank + 2, 2001 + 2 * rank, 2002 + 2 * rank /)), &
               'MPI_Alltoallw with MPI_IN_PLACE')
    rbuf = 0
    ! (predefined types only: Open MPI 4.1.4's own Fortran MPI_Ialltoallw frees its array of
    ! C datatypes at return, and with a derived type its request reads them at completion:
    ! a crash without vtrace too)
    call MPI_Ialltoallw(sbuf, counts, displs, types, rbuf, counts, displs, types, MPI_COMM_WORLD, req, ierr)
    call MPI_Wait(req, status, ierr)
    write (u, '(A,I0,4(1X,I0))') 'ialltoallw ', ierr, rbuf
    call check(all(rbuf == (/ 2 * rank + 1, 2 * rank + 2, 1001 + 2 * rank, 1002 + 2 * rank /)), 'MPI_Ialltoallw')
    ! on the periodic line both neighbours are the other rank: 1 integer each way (which
    ! of the two goes where is the MPI's choice; the log holds it)
    adispls(1) = 0
    adispls(2) = 4
    rbuf = 0
    call MPI_Neighbor_alltoallw(sbuf, one, adispls, types, rbuf, one, adispls, types, cart, ierr)
    write (u, '(A,I0,4(1X,I0))') 'neighbor_alltoallw ', ierr, rbuf
    call check(rbuf(1) + rbuf(2) == 2000 * pair + 3 .and. abs(rbuf(1) - rbuf(2)) == 1, 'MPI_Neighbor_alltoallw')
    rbuf = 0
    call MPI_Ineighbor_alltoallw(sbuf, one, adispls, types, rbuf, one, adispls, types, cart, req, ierr)
    call MPI_Wait(req, status, ierr)
    write (u, '(A,I0,4(1X,I0))') 'ineighbor_alltoallw ', ierr, rbuf
    call check(rbuf(1) + rbuf(2) == 2000 * pair + 3 .and. abs(rbuf(1) - rbuf(2)) == 1, 'MPI_Ineighbor_alltoallw')
    call MPI_Type_free(rtypes(1), ierr)
    call MPI_Comm_free(cart, ierr)

    close (u)
    call MPI_Finalize(ierr)
    if (errs /= 0) stop 1

contains

    subroutine logical_line(what, l)
        character(len=*), intent(in) :: what
        logical, intent(in) :: l
        write (u, '(2A,I0)') what, ': ', transfer(l, 0)
    end subroutine logical_line

    subroutine check(ok, what)
        logical, intent(in) :: ok
        character(len=*), intent(in) :: what
        if (.not. ok) then
            print *, 'rank', rank, ': wrong result of ', what
            errs = errs + 1
        end if
    end subroutine check
end program f90_usempi
