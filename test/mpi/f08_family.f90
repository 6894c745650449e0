! 'use mpi_f08' on 2 ranks: the routines without a choice buffer, which MPICH 4.0's
! mpi_f08 module routes to PMPI_ directly and libvtrace intercepts by name
! (src/mpi/wrappers_f08.c, maint/f08_direct.txt). Every exchange is between the two
! ranks, with the tag named below; statuses, handles, flags and data are checked, and
! the program stops with code 1 on any mismatch (it must behave the same linked with
! libvtrace or not). Expectations: f08_family.expect.
!   Waitall (80/81 with statuses, 82/83 with MPI_STATUSES_IGNORE, 10 + 10 requests with
!   105), Waitany (84/85),
!   Waitsome (86/87), Testall (88/89), Test (90), Testany (91/92), Testsome (93/94):
!   the *any/*some calls see 8 requests of which the odd positions are active and the
!   even ones MPI_REQUEST_NULL, then only null ones (MPI_UNDEFINED);
!   rank 0 -> rank 1: Iprobe (95), Mprobe + Mrecv (96), Improbe + Imrecv (97), and an
!   Iprobe that finds nothing; persistent Recv_init/Send_init (98): Start + Wait once,
!   Startall + Waitall twice, Request_free; Comm_split with reversed ranks + Send/Recv
!   (99) + Comm_free, Comm_split with MPI_UNDEFINED; Ibarrier + Wait; Barrier_init +
!   Start + Wait + Request_free; Request_get_status until done (100); Cancel of a
!   receive nobody matches (101); communicators: Comm_dup_with_info, Comm_idup + Wait,
!   Comm_split_type, Comm_create, Comm_create_group (102), Cart_create, Cart_sub,
!   Graph_create, Intercomm_create (103), Intercomm_merge, all freed (one disconnected);
!   a file (opened through PMPI_File_open, which has no shim): File_set_size,
!   File_preallocate, File_set_atomicity, File_seek, File_write, File_sync,
!   File_seek_shared, File_close; MPI_Wtime and MPI_Comm_rank/size, which are counted,
!   not recorded.
! MPICH 4.0's mpi_f08 returns 0-based indices from Waitany/Testany/Waitsome/Testsome
! (pmodels/mpich#6270, fixed in 4.1, 1-based since): libvtrace's shims must return the
! base of MPICH's own binding, which the program takes from MPI_Get_library_version.
program f08_family
    use mpi_f08
    implicit none
    integer, parameter :: n = 4
    integer :: rank, nprocs, other, errs, off, j, k, idx, cnt, outcount, ndone
    integer :: subrank, sz
    ! buffers of nonblocking and persistent calls (MPI_F_sync_reg after completion)
    integer, asynchronous :: sbuf(n), rbuf(n, 2), pbuf(n), sbig(10), rbig(10)
    integer :: indices(8), dims(1), gindex(2), gedges(2)
    logical :: flag, done(8), periods(1), remain(1)
    type(MPI_Request) :: reqs(8), preq(2), req, rreq, sreq, big(20)
    type(MPI_Status) :: st, sts(8), bigsts(20)
    type(MPI_Message) :: msg
    type(MPI_Comm) :: sub, c1, c2, c3, c4, c5, cart, csub, graph, half, inter, merged
    type(MPI_Group) :: grp
    type(MPI_File) :: fh
    integer(kind=MPI_OFFSET_KIND) :: offs
    double precision :: t0, t1

    errs = 0
    call MPI_Init()
    off = index_offset()
    call MPI_Comm_rank(MPI_COMM_WORLD, rank)
    call MPI_Comm_size(MPI_COMM_WORLD, nprocs)
    if (nprocs /= 2) then
        print *, 'f08_family needs 2 ranks'
        call MPI_Abort(MPI_COMM_WORLD, 2)
    end if
    other = 1 - rank
    call MPI_Barrier(MPI_COMM_WORLD)
    t0 = MPI_Wtime()

    ! ---------------------------------------------------------------- Waitall
    call fill(80)
    call MPI_Irecv(rbuf(:, 1), n, MPI_INTEGER, other, 80, MPI_COMM_WORLD, reqs(1))
    call MPI_Irecv(rbuf(:, 2), n, MPI_INTEGER, other, 81, MPI_COMM_WORLD, reqs(2))
    call MPI_Isend(sbuf, n, MPI_INTEGER, other, 80, MPI_COMM_WORLD, reqs(3))
    call MPI_Isend(sbuf, n, MPI_INTEGER, other, 81, MPI_COMM_WORLD, reqs(4))
    call MPI_Waitall(4, reqs, sts)
    call check_recv(sts(1), other, 80, n, 'Waitall 1')
    call check_recv(sts(2), other, 81, n, 'Waitall 2')
    call check_data(1, 80, 'Waitall')
    call check_null(reqs, 4, 'Waitall')
    call fill(82)
    call MPI_Irecv(rbuf(:, 1), n, MPI_INTEGER, other, 82, MPI_COMM_WORLD, reqs(1))
    call MPI_Irecv(rbuf(:, 2), n, MPI_INTEGER, other, 83, MPI_COMM_WORLD, reqs(2))
    call MPI_Isend(sbuf, n, MPI_INTEGER, other, 82, MPI_COMM_WORLD, reqs(3))
    call MPI_Isend(sbuf, n, MPI_INTEGER, other, 83, MPI_COMM_WORLD, reqs(4))
    call MPI_Waitall(4, reqs, MPI_STATUSES_IGNORE)
    call check_data(1, 82, 'Waitall ignore')
    call check_data(2, 82, 'Waitall ignore')
    ! 20 requests: more than the shim copies on its stack
    do j = 1, 10
        sbig(j) = 100 * rank + j
        rbig(j) = -1
        call MPI_Irecv(rbig(j), 1, MPI_INTEGER, other, 105, MPI_COMM_WORLD, big(j))
        call MPI_Isend(sbig(j), 1, MPI_INTEGER, other, 105, MPI_COMM_WORLD, big(10 + j))
    end do
    call MPI_Waitall(20, big, bigsts)
    call MPI_F_sync_reg(rbig)
    do j = 1, 10
        if (rbig(j) /= 100 * other + j) call bad('Waitall of 20: data', rbig(j))
        call check_recv(bigsts(j), other, 105, 1, 'Waitall of 20')
        if (big(j) /= MPI_REQUEST_NULL .or. big(10 + j) /= MPI_REQUEST_NULL) call bad('Waitall of 20: not freed', j)
    end do

    ! ---------------------------------------------------------------- Waitany
    call post_odd(84)
    do k = 1, 4
        call MPI_Waitany(8, reqs, idx, st)
        call completed(idx, st, 84, 'Waitany')
    end do
    call MPI_Waitany(8, reqs, idx, MPI_STATUS_IGNORE)
    if (idx /= MPI_UNDEFINED) call bad('Waitany on null requests: index', idx)
    call check_data(1, 84, 'Waitany')
    call check_data(2, 84, 'Waitany')

    ! ---------------------------------------------------------------- Waitsome
    call post_odd(86)
    do while (ndone < 4)
        call MPI_Waitsome(8, reqs, outcount, indices, sts)
        if (outcount == MPI_UNDEFINED .or. outcount < 1) then
            call bad('Waitsome: outcount', outcount)
            exit
        end if
        do j = 1, outcount
            call completed(indices(j), sts(j), 86, 'Waitsome')
        end do
    end do
    call MPI_Waitsome(8, reqs, outcount, indices, MPI_STATUSES_IGNORE)
    if (outcount /= MPI_UNDEFINED) call bad('Waitsome on null requests: outcount', outcount)
    call check_data(1, 86, 'Waitsome')

    ! ---------------------------------------------------------------- Testall, Test
    call fill(88)
    call MPI_Irecv(rbuf(:, 1), n, MPI_INTEGER, other, 88, MPI_COMM_WORLD, reqs(1))
    call MPI_Irecv(rbuf(:, 2), n, MPI_INTEGER, other, 89, MPI_COMM_WORLD, reqs(2))
    call MPI_Isend(sbuf, n, MPI_INTEGER, other, 88, MPI_COMM_WORLD, reqs(3))
    call MPI_Isend(sbuf, n, MPI_INTEGER, other, 89, MPI_COMM_WORLD, reqs(4))
    flag = .false.
    do while (.not. flag)
        call MPI_Testall(4, reqs, flag, sts)
    end do
    if (transfer(flag, 0) /= 1) call bad('Testall: logical true is not 1', transfer(flag, 0))
    call check_recv(sts(1), other, 88, n, 'Testall 1')
    call check_recv(sts(2), other, 89, n, 'Testall 2')
    call check_data(2, 88, 'Testall')
    call check_null(reqs, 4, 'Testall')
    call fill(90)
    call MPI_Irecv(rbuf(:, 1), n, MPI_INTEGER, other, 90, MPI_COMM_WORLD, rreq)
    call MPI_Isend(sbuf, n, MPI_INTEGER, other, 90, MPI_COMM_WORLD, sreq)
    flag = .false.
    do while (.not. flag)
        call MPI_Test(rreq, flag, st)
    end do
    call check_recv(st, other, 90, n, 'Test')
    flag = .false.
    do while (.not. flag)
        call MPI_Test(sreq, flag, MPI_STATUS_IGNORE)
    end do
    if (rreq /= MPI_REQUEST_NULL .or. sreq /= MPI_REQUEST_NULL) call bad('Test: request not freed', 0)
    call check_data(1, 90, 'Test')

    ! ---------------------------------------------------------------- Testany, Testsome
    call post_odd(91)
    do while (ndone < 4)
        call MPI_Testany(8, reqs, idx, flag, st)
        if (flag) call completed(idx, st, 91, 'Testany')
    end do
    call MPI_Testany(8, reqs, idx, flag, MPI_STATUS_IGNORE)
    if (.not. flag .or. idx /= MPI_UNDEFINED) call bad('Testany on null requests: index', idx)
    call check_data(2, 91, 'Testany')
    call post_odd(93)
    do while (ndone < 4)
        call MPI_Testsome(8, reqs, outcount, indices, sts)
        if (outcount == MPI_UNDEFINED) then
            call bad('Testsome: outcount', outcount)
            exit
        end if
        do j = 1, outcount
            call completed(indices(j), sts(j), 93, 'Testsome')
        end do
    end do
    call MPI_Testsome(8, reqs, outcount, indices, MPI_STATUSES_IGNORE)
    if (outcount /= MPI_UNDEFINED) call bad('Testsome on null requests: outcount', outcount)
    call check_data(1, 93, 'Testsome')

    ! ---------------------------------------------------------------- probes
    if (rank == 0) then
        call fill(95)
        call MPI_Send(sbuf, n, MPI_INTEGER, 1, 95, MPI_COMM_WORLD)
        call MPI_Send(sbuf, 2, MPI_INTEGER, 1, 96, MPI_COMM_WORLD)
        call MPI_Send(sbuf, 3, MPI_INTEGER, 1, 97, MPI_COMM_WORLD)
    else
        call MPI_Iprobe(0, 999, MPI_COMM_WORLD, flag, MPI_STATUS_IGNORE)
        if (flag) call bad('Iprobe found a message with tag 999', 0)
        flag = .false.
        do while (.not. flag)
            call MPI_Iprobe(0, 95, MPI_COMM_WORLD, flag, st)
        end do
        call check_recv(st, 0, 95, n, 'Iprobe')
        call MPI_Recv(rbuf(:, 1), n, MPI_INTEGER, 0, 95, MPI_COMM_WORLD, st)
        call MPI_Mprobe(MPI_ANY_SOURCE, 96, MPI_COMM_WORLD, msg, st)
        call check_recv(st, 0, 96, 2, 'Mprobe')
        call MPI_Mrecv(rbuf(:, 2), 2, MPI_INTEGER, msg, st)
        if (msg /= MPI_MESSAGE_NULL) call bad('Mrecv: message not null', 0)
        call check_recv(st, 0, 96, 2, 'Mrecv')
        flag = .false.
        do while (.not. flag)
            call MPI_Improbe(0, 97, MPI_COMM_WORLD, flag, msg, MPI_STATUS_IGNORE)
        end do
        if (msg == MPI_MESSAGE_NULL) call bad('Improbe: no message', 0)
        call MPI_Imrecv(rbuf(:, 2), 3, MPI_INTEGER, msg, req)
        call MPI_Wait(req, st)
        call check_recv(st, 0, 97, 3, 'Imrecv')
        call check_data(1, 95, 'Iprobe')
    end if

    ! ---------------------------------------------------------------- persistent
    call fill(98)
    call MPI_Recv_init(pbuf, n, MPI_INTEGER, other, 98, MPI_COMM_WORLD, preq(1))
    call MPI_Send_init(sbuf, n, MPI_INTEGER, other, 98, MPI_COMM_WORLD, preq(2))
    call MPI_Start(preq(1))
    call MPI_Start(preq(2))
    call MPI_Wait(preq(1), st)
    call MPI_Wait(preq(2), MPI_STATUS_IGNORE)
    call check_recv(st, other, 98, n, 'persistent Wait')
    if (preq(1) == MPI_REQUEST_NULL .or. preq(2) == MPI_REQUEST_NULL) call bad('persistent request freed', 0)
    do k = 1, 2
        pbuf = -1
        call MPI_Startall(2, preq)
        call MPI_Waitall(2, preq, MPI_STATUSES_IGNORE)
        call MPI_F_sync_reg(pbuf)
        rbuf(:, 1) = pbuf
        call check_data(1, 98, 'Startall')
    end do
    call MPI_Request_free(preq(1))
    call MPI_Request_free(preq(2))
    if (preq(1) /= MPI_REQUEST_NULL .or. preq(2) /= MPI_REQUEST_NULL) call bad('Request_free', 0)

    ! ---------------------------------------------------------------- Comm_split
    call MPI_Comm_split(MPI_COMM_WORLD, 0, nprocs - rank, sub)
    call MPI_Comm_rank(sub, subrank)
    if (subrank /= 1 - rank) call bad('Comm_split: rank in sub', subrank)
    call fill(99)
    if (subrank == 0) then
        call MPI_Send(sbuf, n, MPI_INTEGER, 1, 99, sub)
    else
        call MPI_Recv(rbuf(:, 1), n, MPI_INTEGER, 0, 99, sub, st)
        call check_recv(st, 0, 99, n, 'Recv on split')
        call check_data(1, 99, 'Recv on split')
    end if
    call MPI_Comm_free(sub)
    if (sub /= MPI_COMM_NULL) call bad('Comm_free: not null', 0)
    if (rank == 0) then
        call MPI_Comm_split(MPI_COMM_WORLD, 5, 0, sub)
        call MPI_Comm_size(sub, sz)
        if (sz /= 1) call bad('Comm_split: size', sz)
        call MPI_Comm_free(sub)
    else
        call MPI_Comm_split(MPI_COMM_WORLD, MPI_UNDEFINED, 0, sub)
        if (sub /= MPI_COMM_NULL) call bad('Comm_split MPI_UNDEFINED: not null', 0)
    end if

    ! ---------------------------------------------------------------- collectives without buffers
    call MPI_Ibarrier(MPI_COMM_WORLD, req)
    call MPI_Wait(req, MPI_STATUS_IGNORE)
    if (req /= MPI_REQUEST_NULL) call bad('Ibarrier: request not freed', 0)
    call MPI_Barrier_init(MPI_COMM_WORLD, MPI_INFO_NULL, req)
    call MPI_Start(req)
    call MPI_Wait(req, st)
    call MPI_Request_free(req)

    ! ---------------------------------------------------------------- Request_get_status, Cancel
    call fill(100)
    call MPI_Irecv(rbuf(:, 1), n, MPI_INTEGER, other, 100, MPI_COMM_WORLD, rreq)
    call MPI_Isend(sbuf, n, MPI_INTEGER, other, 100, MPI_COMM_WORLD, sreq)
    flag = .false.
    do while (.not. flag)
        call MPI_Request_get_status(rreq, flag, st)
    end do
    call check_recv(st, other, 100, n, 'Request_get_status')
    if (rreq == MPI_REQUEST_NULL) call bad('Request_get_status freed the request', 0)
    call MPI_Wait(rreq, st)
    call MPI_Wait(sreq, MPI_STATUS_IGNORE)
    call check_data(1, 100, 'Request_get_status')
    call MPI_Irecv(rbuf(:, 2), n, MPI_INTEGER, other, 101, MPI_COMM_WORLD, req)
    call MPI_Request_get_status(req, flag, MPI_STATUS_IGNORE)
    if (flag) call bad('Request_get_status: unmatched receive done', 0)
    call MPI_Cancel(req)
    call MPI_Wait(req, st)
    call MPI_Test_cancelled(st, flag)
    if (.not. flag) call bad('Cancel: not cancelled', 0)

    ! ---------------------------------------------------------------- communicators
    call MPI_Comm_dup_with_info(MPI_COMM_WORLD, MPI_INFO_NULL, c1)
    call MPI_Comm_idup(MPI_COMM_WORLD, c2, req)
    call MPI_Wait(req, MPI_STATUS_IGNORE)
    call MPI_Barrier(c2)
    call MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, rank, MPI_INFO_NULL, c3)
    call MPI_Comm_group(MPI_COMM_WORLD, grp)
    call MPI_Comm_create(MPI_COMM_WORLD, grp, c4)
    call MPI_Comm_create_group(MPI_COMM_WORLD, grp, 102, c5)
    call MPI_Group_free(grp)
    call MPI_Comm_size(c1, sz)
    if (sz /= 2) call bad('Comm_dup_with_info: size', sz)
    call MPI_Comm_size(c5, sz)
    if (sz /= 2) call bad('Comm_create_group: size', sz)
    dims(1) = 2
    periods(1) = .true.
    call MPI_Cart_create(MPI_COMM_WORLD, 1, dims, periods, .false., cart)
    periods(1) = .false.
    call MPI_Cart_get(cart, 1, dims, periods, gindex(1:1))
    if (.not. periods(1) .or. dims(1) /= 2) call bad('Cart_create: periods, dims', dims(1))
    remain(1) = .true.
    call MPI_Cart_sub(cart, remain, csub)
    call MPI_Comm_size(csub, sz)
    if (sz /= 2) call bad('Cart_sub: size', sz)
    gindex = [1, 2]
    gedges = [1, 0]
    call MPI_Graph_create(MPI_COMM_WORLD, 2, gindex, gedges, .false., graph)
    call MPI_Graph_neighbors_count(graph, rank, cnt)
    if (cnt /= 1) call bad('Graph_create: neighbours', cnt)
    call MPI_Comm_split(MPI_COMM_WORLD, rank, 0, half)
    call MPI_Intercomm_create(half, 0, MPI_COMM_WORLD, other, 103, inter)
    call MPI_Comm_remote_size(inter, sz)
    if (sz /= 1) call bad('Intercomm_create: remote size', sz)
    call MPI_Intercomm_merge(inter, rank == 1, merged)
    call MPI_Comm_rank(merged, sz)
    if (sz /= rank) call bad('Intercomm_merge: rank', sz)
    call MPI_Barrier(merged)
    call MPI_Comm_free(c1)
    call MPI_Comm_free(c2)
    call MPI_Comm_free(c3)
    call MPI_Comm_free(c4)
    call MPI_Comm_disconnect(c5)
    call MPI_Comm_free(cart)
    call MPI_Comm_free(csub)
    call MPI_Comm_free(graph)
    call MPI_Comm_free(merged)
    call MPI_Comm_free(inter)
    call MPI_Comm_free(half)
    if (c5 /= MPI_COMM_NULL .or. half /= MPI_COMM_NULL) call bad('Comm_disconnect/free: not null', 0)

    ! ---------------------------------------------------------------- MPI-IO
    ! (MPI_File_open has a string argument: no shim, so the trace does not see it)
    call MPI_File_open(MPI_COMM_WORLD, 'f08_family.dat', &
                       MPI_MODE_CREATE + MPI_MODE_RDWR + MPI_MODE_DELETE_ON_CLOSE, MPI_INFO_NULL, fh)
    call MPI_File_set_size(fh, 64_MPI_OFFSET_KIND)
    call MPI_File_preallocate(fh, 128_MPI_OFFSET_KIND)
    call MPI_File_get_size(fh, offs)
    if (offs /= 128) call bad('File_preallocate: size', int(offs))
    call MPI_File_set_atomicity(fh, .true.)
    call MPI_File_get_atomicity(fh, flag)
    if (.not. flag) call bad('File_set_atomicity: not atomic', 0)
    call MPI_File_seek(fh, int(4 * n * rank, MPI_OFFSET_KIND), MPI_SEEK_SET)
    call MPI_File_get_position(fh, offs)
    if (offs /= 4 * n * rank) call bad('File_seek: position', int(offs))
    call fill(104)
    call MPI_File_write(fh, sbuf, n, MPI_INTEGER, MPI_STATUS_IGNORE)
    call MPI_File_sync(fh)
    call MPI_File_seek_shared(fh, 0_MPI_OFFSET_KIND, MPI_SEEK_SET)
    call MPI_File_close(fh)
    if (fh /= MPI_FILE_NULL) call bad('File_close: not null', 0)

    t1 = MPI_Wtime()
    if (t1 < t0) call bad('MPI_Wtime went back', 0)
    if (rank == 0) print '(a, i0, a)', 'f08_family: indices from *any/*some are ', 1 - off, '-based'
    call MPI_Finalize()
    if (errs /= 0) stop 1

contains
    ! what to add to an index from *any/*some for a Fortran position: 1 on MPICH 4.0
    integer function index_offset()
        character(len=MPI_MAX_LIBRARY_VERSION_STRING) :: version
        integer :: vlen, at
        call MPI_Get_library_version(version, vlen)
        at = index(version(1:vlen), 'MPICH Version:')
        if (at == 0) then
            print *, 'f08_family: no "MPICH Version:" in MPI_Get_library_version: ', version(1:vlen)
            call MPI_Abort(MPI_COMM_WORLD, 2)
        end if
        at = at + 14   ! the number follows blanks and tabs
        at = at - 1 + verify(version(at:vlen), ' ' // achar(9))
        index_offset = 0
        if (version(at:min(at + 3, vlen)) == '4.0.') index_offset = 1
    end function index_offset


    subroutine bad(what, v)
        character(len=*), intent(in) :: what
        integer, intent(in) :: v
        print *, 'rank', rank, ': ', what, v
        errs = errs + 1
    end subroutine bad

    ! the values sent with tag t (the receive side checks them with check_data)
    subroutine fill(t)
        integer, intent(in) :: t
        integer :: i
        do i = 1, n
            sbuf(i) = 1000 * rank + 10 * t + i
        end do
        rbuf = -1
    end subroutine fill

    subroutine check_data(col, t, what)
        integer, intent(in) :: col, t
        character(len=*), intent(in) :: what
        integer :: i
        call MPI_F_sync_reg(rbuf)
        do i = 1, n
            if (rbuf(i, col) /= 1000 * other + 10 * t + i) call bad(what // ': data', rbuf(i, col))
        end do
    end subroutine check_data

    subroutine check_recv(s, src, t, count, what)
        type(MPI_Status), intent(in) :: s
        integer, intent(in) :: src, t, count
        character(len=*), intent(in) :: what
        integer :: c
        call MPI_Get_count(s, MPI_INTEGER, c)
        if (s%MPI_SOURCE /= src) call bad(what // ': source', s%MPI_SOURCE)
        if (s%MPI_TAG /= t) call bad(what // ': tag', s%MPI_TAG)
        if (c /= count) call bad(what // ': count', c)
    end subroutine check_recv

    subroutine check_null(r, m, what)
        type(MPI_Request), intent(in) :: r(:)
        integer, intent(in) :: m
        character(len=*), intent(in) :: what
        integer :: i
        do i = 1, m
            if (r(i) /= MPI_REQUEST_NULL) call bad(what // ': request not freed', i)
        end do
    end subroutine check_null

    ! receives of tags t and t+1 at positions 1 and 3, their sends at 5 and 7; the even
    ! positions are null
    subroutine post_odd(t)
        integer, intent(in) :: t
        reqs = MPI_REQUEST_NULL
        done = .false.
        ndone = 0
        call fill(t)
        call MPI_Irecv(rbuf(:, 1), n, MPI_INTEGER, other, t, MPI_COMM_WORLD, reqs(1))
        call MPI_Irecv(rbuf(:, 2), n, MPI_INTEGER, other, t + 1, MPI_COMM_WORLD, reqs(3))
        call MPI_Isend(sbuf, n, MPI_INTEGER, other, t, MPI_COMM_WORLD, reqs(5))
        call MPI_Isend(sbuf, n, MPI_INTEGER, other, t + 1, MPI_COMM_WORLD, reqs(7))
    end subroutine post_odd

    ! request at index i (as the binding returns it) completed with status s
    subroutine completed(i, s, t, what)
        integer, intent(in) :: i, t
        type(MPI_Status), intent(in) :: s
        character(len=*), intent(in) :: what
        integer :: p
        p = i + off
        if (i == MPI_UNDEFINED .or. p < 1 .or. p > 8) then
            call bad(what // ': index', i)
            ndone = 4
            return
        end if
        if (mod(p, 2) /= 1 .or. done(p)) call bad(what // ': index of a null or done request', i)
        if (reqs(p) /= MPI_REQUEST_NULL) call bad(what // ': completed request not freed', i)
        done(p) = .true.
        ndone = ndone + 1
        if (p == 1) call check_recv(s, other, t, n, what)
        if (p == 3) call check_recv(s, other, t + 1, n, what)
    end subroutine completed
end program f08_family
