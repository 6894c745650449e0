#!/bin/sh
# Instructions per MPI_Send/MPI_Recv pair, plain MPICH, full tracing and VTRACE_MODE=reduced,
# counted exactly by valgrind's callgrind (wall-clock ratios on shared or virtual machines
# are noisy; instruction counts are not). For each payload size:
#   mpi    MPI's own work per pair (inclusive PMPI_Send + PMPI_Recv), from a batch of
#          messages that have all arrived when received: no polling loop is counted;
#   layer  vtrace's work per pair (its MPI_Send and MPI_Recv minus the PMPI calls in them),
#          from the benchmark's ping-pong, where the reduction decides as it does there;
#   total  mpi + layer, and its ratio to plain;
#   self   the layer's own code alone (its source files; a cross-check of layer, which
#          adds the library calls it makes);
#   copy   user-space memcpy/memmove per pair in the ping-pong (above the eager limit, where
#          MPI waits and polls, only this and the layer are shown: plain MPICH moves large
#          contiguous messages by the kernel's cross-memory attach, not by memcpy).
#   maint/bench/pair-instructions.sh BUILDDIR [SIZES] [KINDS]  (default: 8 64 1024 4194304)
# KINDS (default pingpong): the exchanges measured, of cgpair.c:
#   pingpong  blocking MPI_Send + MPI_Recv;
#   waitall   non-blocking, per trip and rank MPI_Irecv + MPI_Isend + MPI_Waitall(2);
#   wait      non-blocking ping-pong, per trip and rank MPI_Isend + MPI_Wait, MPI_Irecv + MPI_Wait;
#   waitany   as waitall, completed by two MPI_Waitany(2);
#   waitsome  as wait, each request completed by MPI_Waitsome(2) of it and MPI_REQUEST_NULL.
# The non-blocking kinds show the layer only (its entry points minus the PMPI calls they
# make): MPI's own Wait includes its polling.
# CGSIM=1 adds callgrind's simulated cache and branch misses of the layer per pair
# (D1: first-level misses, LL: last-level misses, Bm: mispredicted branches).
set -eu
build=${1:?usage: pair-instructions.sh BUILDDIR [SIZES]}
sizes=${2:-8 64 1024 4194304}
kinds=${3:-pingpong}
here=$(cd "$(dirname "$0")" && pwd)
lib=$(cd "$build" && pwd)/.libs/libvtrace.so
command -v valgrind > /dev/null 2>&1 || { echo "pair-instructions.sh: needs valgrind" >&2; exit 2; }
[ -f "$lib" ] || { echo "pair-instructions.sh: $lib: not built" >&2; exit 2; }
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
"${MPICC:-mpicc.mpich}" -O2 -o "$work/cgpair" "$here/cgpair.c"
# UCX copies messages above 1 KiB with `rep movsb` (UCX_BUILTIN_MEMCPY_MIN=auto), which
# callgrind counts once per byte: glibc's memcpy instead, so that sizes compare (a header
# pushes a 1 KiB payload over that limit: 1807 -> 3641 "instructions" per plain pair)
UCX_BUILTIN_MEMCPY_MIN=${UCX_BUILTIN_MEMCPY_MIN:-inf}
export UCX_BUILTIN_MEMCPY_MIN
sim=
[ "${CGSIM:-0}" = 1 ] && sim="--cache-sim=yes --branch-sim=yes"
printf '#!/bin/sh\nexec valgrind -q --tool=callgrind --collect-atstart=no %s --callgrind-out-file="$CGOUT.$PMI_RANK" "$@"\n' \
    "$sim" > "$work/vg.sh"
chmod +x "$work/vg.sh"
# run MODE KIND BYTES N: callgrind on both ranks; prints cgsum.py's sums
run() {
    out=$work/cg.$1.$2.$3
    if [ "$1" = plain ]; then
        CGOUT=$out "${MPIEXEC:-mpiexec.mpich}" -n 2 "$work/vg.sh" "$work/cgpair" "$2" "$3" "$4" > "$out.log" 2>&1
    else
        CGOUT=$out VTRACE_MODE=$1 VTRACE_DIR="$work/trace.$1.$2.$3" LD_PRELOAD="$lib" \
            "${MPIEXEC:-mpiexec.mpich}" -n 2 "$work/vg.sh" "$work/cgpair" "$2" "$3" "$4" > "$out.log" 2>&1
    fi || { cat "$out.log" >&2; exit 1; }
    python3 "$here/cgsum.py" "$out.0" "$out.1"
}
for kind in $kinds; do
    case $kind in
    pingpong) CGSUM_CALLS='Send|Recv' ;;
    waitall) CGSUM_CALLS='Isend|Irecv|Waitall' ;;
    wait) CGSUM_CALLS='Isend|Irecv|Wait' ;;
    waitany) CGSUM_CALLS='Isend|Irecv|Waitany' ;;
    waitsome) CGSUM_CALLS='Isend|Irecv|Waitsome' ;;
    *) echo "pair-instructions.sh: $kind: not one of pingpong waitall wait waitany waitsome" >&2; exit 2 ;;
    esac
    export CGSUM_CALLS
    [ "$kind" = pingpong ] || echo "$kind:"
    printf "%-8s %8s %9s %9s %9s %7s %10s %9s" bytes mode mpi layer total ratio copy self
    [ -n "$sim" ] && printf " %9s %9s %9s" layer_D1m layer_LLm layer_Bm
    [ "$kind" = pingpong ] && echo "   (per pair)" || echo "   (per trip and rank)"
    for n in $sizes; do
        plain_total=
        for mode in plain full reduced; do
            mpi=-
            if [ "$n" -lt 8192 ] && [ "$kind" = pingpong ]; then
                batches=50
                mpi=$(run "$mode" batch "$n" "$batches" | awk -v k=$((batches * 32)) -v m="$mode" \
                    '$1 == (m == "plain" ? "total" : "mpi") { printf "%.1f", $2 / k }')
            fi
            trips=$([ "$n" -le 65536 ] && echo 2000 || echo 20)
            run "$mode" "$kind" "$n" "$trips" > "$work/pp"
            # per pair: each rank makes `trips` sends and receives; both ranks' sums / 2
            set -- $(awk -v t="$trips" '
                function ev2(a, b, c) { return ((a in ev) ? $(ev[a] + 1) : 0) + ((b in ev) ? $(ev[b] + 1) : 0) + ((c in ev) ? $(ev[c] + 1) : 0) }
                NR == 1 { for (i = 1; i <= NF; i++) ev[$i] = i; next }
                $1 == "layer" { layer = $(ev["Ir"] + 1) / 2 / t; d1 = ev2("I1mr", "D1mr", "D1mw") / 2 / t
                                ll = ev2("ILmr", "DLmr", "DLmw") / 2 / t; bm = ev2("Bcm", "Bim") / 2 / t }
                $1 == "copy" { copy = $(ev["Ir"] + 1) / 2 / t }
                $1 == "self" { self = $(ev["Ir"] + 1) / 2 / t }
                END { printf "%.1f %.0f %.2f %.2f %.2f %.1f\n", layer, copy, d1, ll, bm, self }' "$work/pp")
            layer=$1 copy=$2 self=$6
            [ "$mode" = plain ] && layer=0
            total=- ratio=-
            if [ "$mpi" != - ]; then
                total=$(echo "$mpi $layer" | awk '{ printf "%.1f", $1 + $2 }')
                [ "$mode" = plain ] && plain_total=$total
                ratio=$(echo "$total $plain_total" | awk '{ printf "%.3f", $1 / $2 }')
            fi
            printf "%-8s %8s %9s %9s %9s %7s %10s %9s" "$n" "$mode" "$mpi" "$layer" "$total" "$ratio" "$copy" "$self"
            [ -n "$sim" ] && printf " %9s %9s %9s" "$3" "$4" "$5"
            # the layer's own code (self) plus the library calls it makes (a few dozen per
            # pair) is the layer: much more means MPI's polling was counted in it
            [ "$mpi" != - ] && awk -v l="$layer" -v s="$self" 'BEGIN { exit !(l > 1.5 * s + 500) }' &&
                printf "  (layer >> self: polling counted? run again)"
            echo
        done
    done
done
