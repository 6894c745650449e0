# The host's phase, for the latency benchmarks (sourced by run-bench.sh and
# clock-floor.sh). The 2-core VMs of this project switch every few seconds between two
# phases in which MPICH's 8-byte latency is about 220 and 700 ns, so a ratio of runs in
# different phases says nothing. line-bounce.c reads the phase (the one-way time of a
# cache line between two threads: about 50 ns fast, over 200 slow); a run read fast before
# and after is kept. The limit is BOUNCE_NS, by default twice the smallest reading seen
# (at least 100 ns).
#   phase_init WORKDIR HEREDIR   builds the reader
#   phase_read                   prints a reading, in ns
#   phase_fast B1 B2             true when both readings are within the limit
phase_init() {
    phase_bin=$1/line-bounce
    phase_best=
    "${CC:-cc}" -O2 -pthread -o "$phase_bin" "$2/line-bounce.c"
}
phase_read() { "$phase_bin"; }
phase_fast() {
    phase_best=$(echo "${phase_best:-$1} $1 $2" | awk '{ m = $1; if ($2 < m) m = $2; if ($3 < m) m = $3; print m }')
    phase_limit=${BOUNCE_NS:-$(echo "$phase_best" | awk '{ l = 2 * $1; print (l < 100 ? 100 : l) }')}
    awk -v a="$1" -v b="$2" -v l="$phase_limit" 'BEGIN { exit !(a <= l && b <= l) }'
}
