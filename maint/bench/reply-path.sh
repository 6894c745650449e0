#!/bin/sh
# Instructions on the reply path of a ping-pong: from the moment MPI_Recv's message is
# in (PMPI_Recv returns) to the moment the next MPI_Send hands its message to MPI (PMPI_Send
# is entered), per round trip leg, counted by callgrind on both ranks. This is the layer's
# work that adds to the latency one-for-one (what it does after PMPI_Send, or before
# PMPI_Recv, overlaps the message's flight and the peer's work). plain: the application's
# loop alone.
#   maint/bench/reply-path.sh BUILDDIR [SIZES]      (default: 8 64 1024)
# Run with VTRACE_THRESHOLD=100s for the reduced mode's folded path (as pair-instructions.sh).
set -eu
build=${1:?usage: reply-path.sh BUILDDIR [SIZES]}
sizes=${2:-8 64 1024}
here=$(cd "$(dirname "$0")" && pwd)
lib=$(cd "$build" && pwd)/.libs/libvtrace.so
command -v valgrind > /dev/null 2>&1 || { echo "reply-path.sh: needs valgrind" >&2; exit 2; }
[ -f "$lib" ] || { echo "reply-path.sh: $lib: not built" >&2; exit 2; }
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
"${MPICC:-mpicc.mpich}" -O2 -DCGPAIR_NO_TOGGLE -o "$work/cgpair" "$here/cgpair.c"
"${MPICC:-mpicc.mpich}" -O2 -shared -fPIC -o "$work/cgreply.so" "$here/cgreply.c" -ldl
UCX_BUILTIN_MEMCPY_MIN=${UCX_BUILTIN_MEMCPY_MIN:-inf}
export UCX_BUILTIN_MEMCPY_MIN
printf '#!/bin/sh\nexec valgrind -q --tool=callgrind --collect-atstart=no --callgrind-out-file="$CGOUT.$PMI_RANK" "$@"\n' \
    > "$work/vg.sh"
chmod +x "$work/vg.sh"
trips=2000
printf "%-8s %8s %9s   (instructions per reply: PMPI_Recv returned .. PMPI_Send entered)\n" bytes mode reply
for n in $sizes; do
    for mode in plain full reduced; do
        out=$work/cg.$mode.$n
        pre=$work/cgreply.so
        [ "$mode" = plain ] || pre="$lib $work/cgreply.so"
        CGOUT=$out VTRACE_MODE=$mode VTRACE_DIR="$work/trace.$mode.$n" LD_PRELOAD="$pre" \
            "${MPIEXEC:-mpiexec.mpich}" -n 2 "$work/vg.sh" "$work/cgpair" pingpong "$n" "$trips" > "$out.log" 2>&1 ||
            { cat "$out.log" >&2; exit 1; }
        w=$(awk '/^cgreply: / { s += $2 } END { print s + 0 }' "$out.log")
        [ "$w" -eq $((2 * trips - 1)) ] || { echo "reply-path.sh: $w windows, expected $((2 * trips - 1))" >&2; cat "$out.log" >&2; exit 1; }
        ir=$(cat "$out.0" "$out.1" | awk '/^summary:/ { s += $2 } END { print s + 0 }')
        printf "%-8s %8s %9.1f\n" "$n" "$mode" "$(echo "$ir $w" | awk '{ print $1 / $2 }')"
    done
done
