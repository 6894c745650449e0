#!/bin/sh
# Every command under a small descriptor limit (ulimit -n 8: stdin, stdout, stderr and
# five more, fewer than the trace's 17 files; 10 for report, which holds the trace open
# several times at once): the reader's pool of rank files gives up descriptors when an
# open fails with EMFILE (src/format/reader_io.c, pool_shrink), so each output equals
# the one without a limit. Run from the top build directory.
set -u
top=$(pwd)
vtrace=$top/vtrace
work=$top/test/reader/few_fds.work
rm -rf "$work" && mkdir -p "$work" || exit 99
"$vtrace" synth -n 16 -i 20 "$work/t" > /dev/null || exit 99
fail=0
# T: the trace; O: an output path (a file or directory, compared as a listing and bytes)
for cmd in "info T" "dump T" "whatif -s all=-10% T" "domino T" "critical-path T" "patterns T" "period T" \
    "clusters T" "reduce T O" "compensate T O" "export --format=paraver T O" "10 report -o O T"; do
    few=8
    case $cmd in [0-9]*) few=${cmd%% *} cmd=${cmd#* } ;; esac
    for lim in unlimited $few; do
        rm -rf "$work/o.$lim"*
        args=$(echo "$cmd" | sed "s|T|$work/t|; s|O|$work/o.$lim|")
        (if [ $lim != unlimited ]; then ulimit -n $lim || exit 99; fi; exec "$vtrace" $args) \
            > "$work/out.$lim" 2> "$work/err.$lim"
        echo "exit $?" > "$work/rc.$lim"
        cat "$work/rc.$lim" >> "$work/out.$lim"
        # a directory's or a file's bytes, with the output's own path blanked out
        if [ -e "$work/o.$lim" ]; then
            (cd "$work" && find "o.$lim"* -type f | sort | while read -r f; do echo "== ${f#o.$lim}"; cat "$f"; done) |
                sed "s|o\\.$lim||g" >> "$work/out.$lim"
        fi
        sed -i "s|$work/o\\.$lim||g" "$work/out.$lim"
    done
    if [ "$(cat "$work/rc.unlimited")" != "exit 0" ]; then
        echo "FAIL: vtrace $cmd without a limit: $(cat "$work/rc.unlimited")"
        head -3 "$work/err.unlimited"
        fail=1
    elif ! cmp -s "$work/out.unlimited" "$work/out.$few"; then
        echo "FAIL: vtrace $cmd under ulimit -n $few differs:"
        diff "$work/out.unlimited" "$work/out.$few" | head -5
        head -3 "$work/err.$few"
        fail=1
    else
        echo "ok: $cmd"
    fi
done
[ $fail = 0 ] && rm -rf "$work"
exit $fail
