#!/bin/bash
# Issue 22, session 21: N idle processes (bench/workloads/idle_nofp: a 20-frame
# chain without frame pointers, asleep in its leaf) started before a whole-system
# `record -F HZ` with an empty table cache, all woken at once 4 s into it (each
# then spins SPIN s and exits). Prints how many of their samples in the leaf have
# frames rooted at _start (a stack copy handled once the process is gone is named
# [unknown]+ADDR: not rooted), and the record's copy counters.
# Usage: bench/idle_storm.sh BUILD [N [HZ [SPIN]]]   (root; BUILD holds omniprof and
# bench/workloads/idle_nofp, e.g. build)
set -u
B=$(cd "$1" && pwd); N=${2:-300}; F=${3:-99}; SPIN=${4:-2}
OUT=$(mktemp -d /tmp/omniprof-idle-storm.XXXXXX)
WL=$(cd "$(dirname "$0")/.." && pwd)/build/bench/workloads/idle_nofp
[ -x "$B/bench/workloads/idle_nofp" ] && WL=$B/bench/workloads/idle_nofp
mkdir -m 700 "$OUT/tc"
pids=()
for _ in $(seq "$N"); do "$WL" "$SPIN" > /dev/null 2>&1 & pids+=($!); done
sleep 1
"$B/omniprof" record -v -d 10 -F "$F" --table-cache "$OUT/tc" -o "$OUT/out" > "$OUT/log" 2>&1 &
rec=$!
sleep 4
kill -USR1 "${pids[@]}"
wait "$rec"
kill "${pids[@]}" 2> /dev/null
wait 2> /dev/null
# Of their samples: those with user frames (not only the kernel's, as at exit), those
# rooted at _start, and those in the leaf with the whole chain (complete).
awk '/^idle_nofp;/ { n += $NF; split($1, f, ";")
	if (f[2] ~ /_\[k\]$/) { k += $NF; next }
	if (f[2] == "_start") r += $NF
	if ($0 ~ /;leaf/) l += $NF
	if ($0 ~ /^idle_nofp;_start;__libc_start_main;__libc_start_call_main;main;a_01;a_02;a_03;a_04;a_05;a_06;a_07;a_08;a_09;a_10;a_11;a_12;a_13;a_14;a_15;a_16;a_17;a_18;a_19;a_20;leaf/) c += $NF }
	END { u = n - k; printf "idle_nofp: %d samples, %d with user frames: %d rooted at _start (%.1f%%); %d in the leaf, %d of them complete\n", n, u, r, u ? 100 * r / u : 0, l, c }' \
	"$OUT/out/stacks.folded"
grep -h "start-up\|not copied\|maps never read\|user stack unreadable\|left without" "$OUT/log"
rm -rf "$OUT"
