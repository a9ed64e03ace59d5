#!/usr/bin/env bash
# Cargo's target runner for the test suite (scripts/test.sh sets it for
# nextest only): runs one test process as it would have run, then appends
# its wall and CPU time to $SHOOTOUT_TEST_TIMES as
# `binary <TAB> test <TAB> wall_s <TAB> cpu_s`, which scripts/test-totals.py
# sums per binary for the "slowest test binaries" table. CPU time is the
# process tree's (the test and every server it started and waited for),
# from this shell's cutime and cstime once the test has exited. Listing
# (`--list`) is not recorded. The test's exit status is this script's.
start=$EPOCHREALTIME
"$@"
status=$?
end=$EPOCHREALTIME
if [ -n "${SHOOTOUT_TEST_TIMES:-}" ]; then
    list=false test=""
    prev=""
    for a in "$@"; do
        [ "$a" = --list ] && list=true
        [ "$prev" = --exact ] && test=$a
        prev=$a
    done
    if ! $list; then
        # /proc/self/stat fields 16 and 17: children's user and system
        # time in clock ticks; bash's name has no space, so split on spaces.
        read -r -a stat </proc/$$/stat
        ticks=$(getconf CLK_TCK)
        bin=${1##*/}
        awk -v b="${bin%-*}" -v t="$test" -v s="$start" -v e="$end" \
            -v u="${stat[15]}" -v y="${stat[16]}" -v k="$ticks" \
            'BEGIN { printf "%s\t%s\t%.3f\t%.3f\n", b, t, e - s, (u + y) / k }' \
            >>"$SHOOTOUT_TEST_TIMES"
    fi
fi
exit "$status"
