#!/bin/sh
# MPICH 4.1 and later define MPI_F08_STATUS_IGNORE and MPI_F08_STATUSES_IGNORE in the
# Fortran library only (libmpifort), not in libmpi: the run-time library may refer to
# them only weakly, or every C program traced with it fails to link there (Debian
# trixie's MPICH 4.2.1: "undefined reference to MPI_F08_STATUS_IGNORE"). Checked on
# .libs/libvtrace.so; then the check itself must find a strong reference in an object.
set -u
command -v nm > /dev/null 2>&1 || { echo "SKIP: no nm"; exit 77; }
lib=.libs/libvtrace.so
[ -f "$lib" ] || { echo "FAIL: $lib is not built"; exit 1; }
work=$(pwd)/test/build/fortran_symbols.work
rm -rf "$work" && mkdir -p "$work" || exit 99
# the Fortran-only symbols an object or library refers to strongly (nm: U; weak: w or v)
strong_refs() {
    nm "$@" | awk '$1 == "U" && ($2 == "MPI_F08_STATUS_IGNORE" || $2 == "MPI_F08_STATUSES_IGNORE") { print $2 }'
}
status=0
refs=$(strong_refs -D "$lib")
[ -z "$refs" ] || { echo "FAIL: $lib refers strongly to a Fortran-only symbol: $refs"; status=1; }

printf 'extern int MPI_F08_STATUS_IGNORE;\nint *vt_probe_ref(void) { return &MPI_F08_STATUS_IGNORE; }\n' > "$work/strong.c"
{ printf '#pragma weak MPI_F08_STATUS_IGNORE\n'; cat "$work/strong.c"; } > "$work/weak.c"
${CC:-cc} -c -o "$work/strong.o" "$work/strong.c" && ${CC:-cc} -c -o "$work/weak.o" "$work/weak.c" || exit 99
[ "$(strong_refs "$work/strong.o")" = MPI_F08_STATUS_IGNORE ] ||
    { echo "FAIL: the check missed a strong reference"; status=1; }
[ -z "$(strong_refs "$work/weak.o")" ] || { echo "FAIL: the check took a weak reference for a strong one"; status=1; }
[ $status -eq 0 ] && rm -rf "$work"
exit $status
