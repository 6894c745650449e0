#!/bin/sh
# Whether two builds' vtrace commands print the same bytes: for a change that must not
# change any output (a faster reader or replay), run on the build before it and after.
#   maint/bench/compare-builds.sh BASE_BUILDDIR NEW_BUILDDIR [TRACEDIR...]
# Without trace directories, makes them with BASE's `vtrace synth` (halo1d, halo2d,
# allreduce, pipeline, master-worker at 2 ranks; halo2d and allreduce at 4, one with
# --jitter; one with --no-compress, whose EVENTS blocks are read as rows), a reduced
# trace (`vtrace reduce` of one), and, when mpiexec.mpich is there, runs of BASE's
# examples (halo, pipeline, groups) on 2 ranks, traced full and both (the full and the
# reduced trace of the run).
# For each trace it compares the standard output and exit status of
#   whatif -s all=-10%, whatif with 3 scenarios, critical-path, patterns, dump,
#   export --format=perfetto (the file written)
# and prints one line per trace; exit status 1 when anything differs (the differing
# outputs are kept under KEEP, default a temporary directory that is then removed).
set -eu
me=compare-builds.sh
die() {
    echo "$me: $*" >&2
    exit 2
}
[ $# -ge 2 ] || die "usage: compare-builds.sh BASE_BUILDDIR NEW_BUILDDIR [TRACEDIR...]"
base=$(cd "$1" && pwd) || die "$1: not a directory"
new=$(cd "$2" && pwd) || die "$2: not a directory"
shift 2
for b in "$base" "$new"; do
    [ -x "$b/vtrace" ] || die "$b/vtrace not found: build the tree first (make)"
done
tmp=$(mktemp -d)
if [ -n "${KEEP:-}" ]; then
    out=$KEEP
    mkdir -p "$out"
else
    out=$tmp/out
    mkdir -p "$out"
fi
trap 'rm -rf "$tmp"' EXIT

if [ $# -eq 0 ]; then
    s() { # NAME SYNTH-ARGS...
        name=$1
        shift
        "$base/vtrace" synth -q "$@" "$tmp/$name" >/dev/null || die "vtrace synth $* failed"
        traces="$traces $tmp/$name"
    }
    traces=
    s halo1d -p halo1d -n 2 -i 3000
    s halo2d -p halo2d -n 2 -i 3000
    s allreduce -p allreduce -n 2 -i 3000
    s pipeline -p pipeline -n 2 -i 3000
    s master-worker -p master-worker -n 2 -i 3000
    s halo2d-n4-jitter -p halo2d -n 4 -i 2000 --jitter 0.3
    s allreduce-n4 -p allreduce -n 4 -i 2000 --allreduce-every 1
    s halo2d-raw -p halo2d -n 2 -i 1000 --no-compress
    "$base/vtrace" reduce "$tmp/halo2d-n4-jitter" "$tmp/halo2d-n4-reduced" >/dev/null || die "vtrace reduce failed"
    traces="$traces $tmp/halo2d-n4-reduced"
    if command -v mpiexec.mpich >/dev/null 2>&1 && [ -x "$base/examples/halo" ]; then
        for ex in "halo 500" pipeline groups; do
            # shellcheck disable=SC2086
            set -- $ex
            for mode in full both; do
                # shellcheck disable=SC2086 # (no argument when there is none)
                VTRACE_MODE=$mode VTRACE_DIR=$tmp/ex-$1-$mode timeout 300 mpiexec.mpich -n 2 "$base/examples/$1" \
                    ${2:-} >/dev/null 2>&1 || die "mpiexec.mpich -n 2 examples/$1 (VTRACE_MODE=$mode) failed"
                if [ "$mode" = both ]; then
                    traces="$traces $tmp/ex-$1-$mode/full $tmp/ex-$1-$mode/reduced"
                else
                    traces="$traces $tmp/ex-$1-$mode"
                fi
            done
        done
    fi
    # shellcheck disable=SC2086 # (temporary paths without blanks)
    set -- $traces
fi

fail=0
for t in "$@"; do
    name=$(basename "$t")
    case $name in full | reduced) name=$(basename "$(dirname "$t")")-$name ;; esac
    diffs=
    n=0
    i=0
    while IFS='|' read -r label args; do
        i=$((i + 1))
        for side in base new; do
            if [ "$side" = base ]; then b=$base; else b=$new; fi
            o=$out/$name.$i.$side
            rc=0
            # shellcheck disable=SC2086 # (ARGS split into words)
            case $label in
            perfetto) "$b/vtrace" export --format=perfetto --quiet "$t" "$o.json" >"$o" 2>"$o.err" || rc=$? ;;
            *) "$b/vtrace" $args "$t" >"$o" 2>"$o.err" || rc=$? ;;
            esac
            echo "exit $rc" >>"$o"
        done
        n=$((n + 1))
        if ! cmp -s "$out/$name.$i.base" "$out/$name.$i.new" ||
            { [ "$label" = perfetto ] && { [ -f "$out/$name.$i.base.json" ] || [ -f "$out/$name.$i.new.json" ]; } &&
                ! cmp -s "$out/$name.$i.base.json" "$out/$name.$i.new.json"; }; then
            diffs="$diffs $label"
        fi
    done <<EOF
whatif|whatif -s all=-10%
whatif3|whatif -s all=-10% -s rank:0=-20% -s fn:MPI_Waitall=-50%
critical-path|critical-path
patterns|patterns
dump|dump
perfetto|
EOF
    if [ -n "$diffs" ]; then
        echo "$name: DIFFERS:$diffs"
        fail=1
    else
        echo "$name: $n outputs identical ($(tail -n 1 "$out/$name.1.base"))"
    fi
done
if [ "$fail" = 1 ]; then
    [ -n "${KEEP:-}" ] || trap - EXIT
    echo "$me: outputs differ (kept in $out)" >&2
    exit 1
fi
echo "$me: $# traces, all outputs identical"
