# Runs that end abnormally: fatal signals, MPI_Abort, exit without MPI_Finalize, SIGKILL,
# a full disk (test/crash/crash.sh runs faults under mpiexec in every mode).
check_PROGRAMS += test/crash/faults
test_crash_faults_SOURCES = test/crash/faults.c
test_crash_faults_LDADD = libvtrace.la
test_crash_faults_LDFLAGS = -no-install
TESTS += test/crash/crash.sh
EXTRA_DIST += test/crash/crash.sh test/crash/check_crash.py
