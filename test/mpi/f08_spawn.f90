! f90_spawn.f90 with 'use mpi_f08' (its mpi_x_f08_ entry points, hidden lengths after an
! optional ierror): the same calls and the same log, f90_spawn.RANK.log, which
! test/mpi/f90_spawn.sh compares with the plain 'use mpi' build's, as the stand-ins' log.
program f08_spawn
    use mpi_f08
    implicit none
    integer :: ierr, rank, errcodes(3), maxprocs(2), u
    type(MPI_Comm) :: inter
    type(MPI_Info) :: info2, infos(2)
    character(len=24) :: cmd, argv(4), cmds(2), argvs(2, 3), port
    character(len=20) :: logname

    call MPI_Init()
    call MPI_Comm_rank(MPI_COMM_WORLD, rank)
    write (logname, '(A,I0,A)') 'f90_spawn.', rank, '.log'
    open (newunit=u, file=logname, status='replace', action='write')

    cmd = '  ./child --opt  '
    argv(1) = 'one'
    argv(2) = '  two words  '
    argv(3) = ' '
    argv(4) = 'after the blank'
    errcodes = -7
    call MPI_Comm_spawn(cmd, argv, 3, MPI_INFO_NULL, 0, MPI_COMM_WORLD, inter, errcodes, ierr)
    call result('spawn')
    errcodes = -7
    call MPI_Comm_spawn(cmd, MPI_ARGV_NULL, 1, MPI_INFO_NULL, 0, MPI_COMM_WORLD, inter, errcodes, ierr)
    call result('spawn argv null')
    argv(1) = ' '
    call MPI_Comm_spawn('x', argv, 2, MPI_INFO_NULL, 0, MPI_COMM_WORLD, inter, MPI_ERRCODES_IGNORE)
    call result('spawn empty argv, errcodes ignored')

    cmds(1) = 'a.out'
    cmds(2) = ' '
    argvs(1, 1) = '-x'
    argvs(1, 2) = ' 1 '
    argvs(1, 3) = ' '
    argvs(2, 1) = '-y'
    argvs(2, 2) = ' '
    argvs(2, 3) = 'unused'
    maxprocs = (/ 1, 2 /)
    call MPI_Info_create(info2)
    call MPI_Info_set(info2, 'wdir', '/tmp')
    infos = (/ MPI_INFO_NULL, info2 /)
    errcodes = -7
    call MPI_Comm_spawn_multiple(2, cmds, argvs, maxprocs, infos, 0, MPI_COMM_WORLD, inter, errcodes, ierr)
    call result('spawn_multiple')
    errcodes = -7
    call MPI_Comm_spawn_multiple(2, cmds, MPI_ARGVS_NULL, maxprocs, infos, 0, MPI_COMM_WORLD, inter, &
                                 MPI_ERRCODES_IGNORE, ierr)
    call result('spawn_multiple argvs null, errcodes ignored')
    call MPI_Info_free(info2)

    port = '   port-a  '
    call MPI_Comm_accept(port, MPI_INFO_NULL, 0, MPI_COMM_SELF, inter, ierr)
    call result('accept')
    call MPI_Comm_connect(port, MPI_INFO_NULL, 0, MPI_COMM_SELF, inter)
    call result('connect')
    close (u)
    call MPI_Finalize()

contains

    subroutine result(what)
        character(len=*), intent(in) :: what
        write (u, '(2A,I0,A,L1,A,3(1X,I0))') what, ': ierr ', ierr, ' null ', inter == MPI_COMM_NULL, &
            ' errcodes', errcodes
    end subroutine result
end program f08_spawn
