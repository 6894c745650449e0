! 'use mpi' calls with CHARACTER arguments that create or connect processes, on 2 ranks:
! MPI_Comm_spawn (command with leading and trailing blanks, argv ended by a blank string,
! MPI_ARGV_NULL, an empty argv, a literal command, MPI_ERRCODES_IGNORE),
! MPI_Comm_spawn_multiple (argv(count, *) row by row, a blank command, an info with a key,
! MPI_ARGVS_NULL), MPI_Comm_accept and MPI_Comm_connect (a padded port name). The C entry
! points are test/mpi/spawn_stub.c's stand-ins, which log what they receive; this program
! logs what comes back (f90_spawn.RANK.log). test/mpi/f90_spawn.sh compares both logs
! of the build linked with libvtrace and of the plain one.
program f90_spawn
    use mpi
    implicit none
    integer :: ierr, rank, inter, errcodes(3), info2, infos(2), maxprocs(2), u
    character(len=24) :: cmd, argv(4), cmds(2), argvs(2, 3), port
    character(len=20) :: logname

    call MPI_Init(ierr)
    call MPI_Comm_rank(MPI_COMM_WORLD, rank, ierr)
    write (logname, '(A,I0,A)') 'f90_spawn.', rank, '.log'
    open (newunit=u, file=logname, status='replace', action='write')

    cmd = '  ./child --opt  '
    argv(1) = 'one'
    argv(2) = '  two words  '
    argv(3) = ' '
    argv(4) = 'after the blank'
    errcodes = -7
    inter = -5
    call MPI_Comm_spawn(cmd, argv, 3, MPI_INFO_NULL, 0, MPI_COMM_WORLD, inter, errcodes, ierr)
    call result('spawn')
    errcodes = -7
    call MPI_Comm_spawn(cmd, MPI_ARGV_NULL, 1, MPI_INFO_NULL, 0, MPI_COMM_WORLD, inter, errcodes, ierr)
    call result('spawn argv null')
    argv(1) = ' '
    call MPI_Comm_spawn('x', argv, 2, MPI_INFO_NULL, 0, MPI_COMM_WORLD, inter, MPI_ERRCODES_IGNORE, ierr)
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
    call MPI_Info_create(info2, ierr)
    call MPI_Info_set(info2, 'wdir', '/tmp', ierr)
    infos = (/ MPI_INFO_NULL, info2 /)
    errcodes = -7
    call MPI_Comm_spawn_multiple(2, cmds, argvs, maxprocs, infos, 0, MPI_COMM_WORLD, inter, errcodes, ierr)
    call result('spawn_multiple')
    errcodes = -7
    call MPI_Comm_spawn_multiple(2, cmds, MPI_ARGVS_NULL, maxprocs, infos, 0, MPI_COMM_WORLD, inter, &
                                 MPI_ERRCODES_IGNORE, ierr)
    call result('spawn_multiple argvs null, errcodes ignored')
    call MPI_Info_free(info2, ierr)

    port = '   port-a  '
    call MPI_Comm_accept(port, MPI_INFO_NULL, 0, MPI_COMM_SELF, inter, ierr)
    call result('accept')
    call MPI_Comm_connect(port, MPI_INFO_NULL, 0, MPI_COMM_SELF, inter, ierr)
    call result('connect')
    close (u)
    call MPI_Finalize(ierr)

contains

    subroutine result(what)
        character(len=*), intent(in) :: what
        write (u, '(2A,I0,A,L1,A,3(1X,I0))') what, ': ierr ', ierr, ' null ', inter == MPI_COMM_NULL, &
            ' errcodes', errcodes
    end subroutine result
end program f90_spawn
