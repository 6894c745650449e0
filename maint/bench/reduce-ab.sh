#!/bin/sh
# The bytes of a reduced trace against the full trace it comes from, for two builds of
# vtrace on the same full traces (issue 13): records (full, reduced), bytes of the rank
# files (full, reduced by OLD, reduced by NEW), whether both reductions hold the same
# records, and the event blocks' bytes (full, OLD, NEW). `vtrace reduce` writes what the
# run time writes, byte for byte (test/mpi/rt_equiv.sh), so this measures both.
# usage: OLD=path/to/old/vtrace NEW=path/to/vtrace maint/bench/reduce-ab.sh DIR...
#   (each DIR a VTRACE_MODE=both run's directory, holding full/)
set -u
: "${OLD:?set OLD to the vtrace to compare against}" "${NEW:=vtrace}"
work=$(mktemp -d) || exit 1
trap 'rm -rf "$work"' EXIT
info() { "$1" info --json --no-match "$2" | python3 -c 'import json,sys; d=json.load(sys.stdin); print(d["stored_records"], d["event_bytes_stored"])'; }
name() { case $(basename "$1") in trace) basename "$(dirname "$1")" ;; *) basename "$1" ;; esac; }
bytes() { cat "$1"/rank-*.vte | wc -c; }
printf "%-24s %7s %7s | %7s %7s %7s %5s | %7s %7s %7s\n" trace rec_full rec_red full red_old red_new same ev_full ev_old ev_new
for d in "$@"; do
    rm -rf "$work/o" "$work/n"
    "$OLD" reduce "$d/full" "$work/o" > /dev/null 2>&1 || { echo "$d: $OLD reduce failed"; continue; }
    "$NEW" reduce "$d/full" "$work/n" > /dev/null 2>&1 || { echo "$d: $NEW reduce failed"; continue; }
    "$OLD" dump --json "$work/o" > "$work/o.j"; "$NEW" dump --json "$work/n" > "$work/n.j"
    same=$(cmp -s "$work/o.j" "$work/n.j" && echo yes || echo NO)
    set -- $(info "$NEW" "$d/full") $(info "$OLD" "$work/o") $(info "$NEW" "$work/n")
    printf "%-24s %7d %7d | %7d %7d %7d %5s | %7d %7d %7d\n" "$(name "$d")" "$1" "$5" "$(bytes "$d/full")" \
        "$(bytes "$work/o")" "$(bytes "$work/n")" "$same" "$2" "$4" "$6"
    shift 6
done
