#!/bin/sh
# Instructions the layer executes per MPI call in an 8-byte ping-pong, counted exactly by
# valgrind's callgrind on both ranks (doc/piggyback.md, "Where the time of an 8-byte
# message goes"): plain timing on these virtual machines is noisy and has no hardware
# counters, instruction counts are not.
#   maint/bench/instructions.sh BUILDDIR [ROUND_TRIPS]
# BUILDDIR is a configured and built vtrace tree (its .libs/libvtrace.so is preloaded).
# Prints, for rank 1, the instructions per call spent in vtrace's own source files with
# full tracing and with VTRACE_MODE=reduced, and the functions that take the most.
set -eu
build=${1:?usage: instructions.sh BUILDDIR [ROUND_TRIPS]}
trips=${2:-20000}
here=$(cd "$(dirname "$0")" && pwd)
src=$(cd "$here/../.." && pwd)
lib=$(cd "$build" && pwd)/.libs/libvtrace.so
if ! command -v valgrind > /dev/null 2>&1; then
    echo "instructions.sh: needs valgrind (apt-get install valgrind)" >&2
    exit 2
fi
[ -f "$lib" ] || { echo "instructions.sh: $lib: not built" >&2; exit 2; }
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
cat > "$work/pp.c" <<'EOF'
#include <mpi.h>
#include <stdlib.h>
int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int rank;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    char buf[8] = {0};
    int n = atoi(argv[1]);
    for (int i = 0; i < n; i++) {
        if (rank == 0) {
            MPI_Send(buf, 8, MPI_BYTE, 1, 0, MPI_COMM_WORLD);
            MPI_Recv(buf, 8, MPI_BYTE, 1, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        } else {
            MPI_Recv(buf, 8, MPI_BYTE, 0, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
            MPI_Send(buf, 8, MPI_BYTE, 0, 0, MPI_COMM_WORLD);
        }
    }
    MPI_Finalize();
    return 0;
}
EOF
"${MPICC:-mpicc.mpich}" -O2 -o "$work/pp" "$work/pp.c"
cat > "$work/vg.sh" <<EOF
#!/bin/sh
exec valgrind --tool=callgrind --callgrind-out-file=$work/cg.\$MODE.\$PMI_RANK.out "\$@"
EOF
chmod +x "$work/vg.sh"
for mode in full reduced; do
    MODE=$mode VTRACE_MODE=$mode VTRACE_DIR="$work/trace.$mode" LD_PRELOAD="$lib" \
        "${MPIEXEC:-mpiexec.mpich}" -n 2 "$work/vg.sh" "$work/pp" "$trips" > "$work/$mode.out" 2>&1 ||
        { cat "$work/$mode.out" >&2; exit 1; }
done
calls=$((2 * trips))
for mode in full reduced; do
    # self instructions of every function whose source is vtrace's (inlined ones too)
    (cd / && callgrind_annotate --auto=no --show-percs=no "$work/cg.$mode.1.out" 2> /dev/null) |
        awk -v src="$src/" -v calls="$calls" -v mode="$mode" '
            $2 ~ "^" src { n = $1; gsub(",", "", n); total += n; f = $2; sub(src, "", f); by[f] += n }
            END {
                printf "%-8s %6.0f instructions per call (rank 1, %d calls)\n", mode, total / calls, calls
                for (f in by) if (by[f] / calls >= 10) printf "    %6.1f  %s\n", by[f] / calls, f | "sort -rn"
                close("sort -rn")
            }'
done
