#!/usr/bin/env bash
# Runs every test: the replay suite; then, POOL_JOBS at a time, the unit
# tests (plain and as built with ASan + UBSan), the replay suite's snapshots
# replayed by its ASan + UBSan build, the fuzz targets over their inputs and
# the folders' layering (scripts/check-layers.sh); then, one at a time, the
# end-to-end tests (root + BPF), a subset of them (ASAN_E2E) against omniprof
# built with ASan + UBSan instead. Ends with "N passed, M failed".
# Usage: tests/run.sh BUILD_DIR ASAN_BUILD_DIR
set -u
build=${1:-build}
asan=${2:-build/asan}
passed=0
failed=0
failed_names=()
timings=() # "SECONDS LABEL" per binary: the slowest are printed at the end

export ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=1:abort_on_error=0}
export UBSAN_OPTIONS=${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1}

# The end-to-end tests of this list run against the sanitizer build of
# omniprof instead of the plain one: the agent's and record's whole life
# (sampling, naming, export, signals, exit) with every leak and undefined
# behaviour fatal. Only those: the agent's four transports and its outage,
# and the lifecycle suite (record and agent stopped by signals, hotplug,
# flush deadlines, a hostile reply). Once, not twice: the same test binary
# makes the same assertions (floors, deadlines, the RSS bound) against the
# same code at the same -O2, the sanitizers only adding checks; the plain
# build runs every other end-to-end test. Another list: ASAN_E2E="test_x".
ASAN_E2E=${ASAN_E2E:-test_agent test_lifecycle}

# Counts the outcome of a binary: its log and its exit status.
count_outcome() {
	local label=$1 log=$2 rc=$3 ok
	ok=$(grep -c '^\[       OK \]' "$log")
	passed=$((passed + ok))
	if [ "$rc" -ne 0 ]; then
		# cmocka exits with the number of failed tests; a crash counts as one.
		if [ "$rc" -lt 128 ]; then failed=$((failed + rc)); else failed=$((failed + 1)); fi
		failed_names+=("$label (exit $rc)")
	fi
	if grep -qE '^(==[0-9]+==ERROR|.*runtime error:)' "$log"; then
		failed=$((failed + 1))
		failed_names+=("$label (sanitizer report)")
	fi
}

run_one() {
	local bin=$1 label=$2 tbuild=${3:-$build} log rc start=$SECONDS
	log=$(mktemp)
	echo "== $label"
	OMNIPROF_BUILD=$tbuild "$bin" 2>&1 | tee "$log"
	rc=${PIPESTATUS[0]}
	timings+=("$((SECONDS - start)) $label")
	count_outcome "$label" "$log" "$rc"
	rm -f "$log"
}

# A suite's outcome: it prints its own "N passed, M failed" line (the replay
# suite, the fuzz targets over their inputs, the layering check).
count_suite() {
	local label=$1 log=$2 rc=$3 line
	line=$(grep -E '^[0-9]+ passed, [0-9]+ failed$' "$log" | tail -n1)
	if [ -n "$line" ]; then
		passed=$((passed + ${line%% *}))
		line=${line#*, }
		failed=$((failed + ${line%% *}))
	else
		failed=$((failed + 1))
	fi
	[ "$rc" -eq 0 ] || failed_names+=("$label (exit $rc)")
	if grep -qE '^(==[0-9]+==ERROR|.*runtime error:)' "$log"; then
		failed=$((failed + 1))
		failed_names+=("$label (sanitizer report)")
	fi
}

# What needs no quiet machine (the unit tests, plain and sanitizer builds, the
# fuzz targets over their inputs, snapshots replayed, the layering check) runs
# POOL_JOBS at a time (default 4), each one's output printed whole, in the
# order added. The end-to-end tests measure samples and deadlines, and the
# replay suite's captures stop live programs at random until they are where
# its cases want them: one at a time.
pool_kinds=()
pool_labels=()
pool_cmds=()

# pool_add bin|suite LABEL COMMAND ARGS...
pool_add() {
	pool_kinds+=("$1")
	pool_labels+=("$2")
	shift 2
	pool_cmds+=("$(printf '%q ' "$@")")
}

pool_run() {
	local jobs=${POOL_JOBS:-4} tmp i start=$SECONDS
	tmp=$(mktemp -d)
	for ((i = 0; i < ${#pool_cmds[@]}; i++)); do
		while (($(jobs -rp | wc -l) >= jobs)); do wait -n; done
		(
			t0=$SECONDS
			eval "OMNIPROF_BUILD=\$build ${pool_cmds[$i]}" >"$tmp/$i.log" 2>&1
			echo $? >"$tmp/$i.rc"
			echo $((SECONDS - t0)) >"$tmp/$i.secs"
		) &
	done
	wait
	timings+=("$((SECONDS - start)) (${#pool_cmds[@]} binaries and suites, $jobs at a time: wall time)")
	for ((i = 0; i < ${#pool_cmds[@]}; i++)); do
		echo "== ${pool_labels[$i]}"
		cat "$tmp/$i.log"
		timings+=("$(cat "$tmp/$i.secs") ${pool_labels[$i]}")
		if [ "${pool_kinds[$i]}" = bin ]; then
			count_outcome "${pool_labels[$i]}" "$tmp/$i.log" "$(cat "$tmp/$i.rc")"
		else
			count_suite "${pool_labels[$i]}" "$tmp/$i.log" "$(cat "$tmp/$i.rc")"
		fi
	done
	rm -rf "$tmp"
}

# A suite run alone, its output shown as it goes.
run_suite() {
	local label=$1 log rc start=$SECONDS
	shift
	log=$(mktemp)
	echo "== $label"
	OMNIPROF_BUILD=$build "$@" 2>&1 | tee "$log"
	rc=${PIPESTATUS[0]}
	timings+=("$((SECONDS - start)) $label")
	count_suite "$label" "$log" "$rc"
	rm -f "$log"
}

# The replay suite first, alone: it captures each case's live program
# (snapshots kept in $snaps). The sanitizer build of the suite then replays
# those snapshots, one case each, in the pool: the agent's code under the
# sanitizers over the same captures (a case with no snapshot, e.g. its
# capture failed, is captured again).
snaps=$(mktemp -d)
cases=(tests/replay/cases/*.case)
run_suite replay "$build"/tests/replay/replay -s "$snaps" "${cases[@]}"

# The slowest first (the sanitizer builds: a few take minutes).
for bin in "$asan"/tests/unit/test_*; do
	[ -x "$bin" ] || continue
	pool_add bin "asan/${bin#"$asan"/tests/}" "$bin"
done
for case in "${cases[@]}"; do
	name=${case##*/}
	name=${name%.case}
	if [ -f "$snaps/$name.snap" ]; then
		pool_add suite "asan/replay/$name" "$asan"/tests/replay/replay -r "$snaps/$name.snap" "$case"
	else
		pool_add suite "asan/replay/$name" "$asan"/tests/replay/replay "$case"
	fi
done
for bin in "$build"/tests/unit/test_*; do
	[ -x "$bin" ] || continue
	pool_add bin "${bin#"$build"/tests/}" "$bin"
done
# Fuzz targets over their committed seeds and every crash input kept.
for bin in "$asan"/tests/fuzz/fuzz_* "$build"/tests/fuzz/fuzz_*; do
	[ -x "$bin" ] || continue
	name=${bin##*/}
	inputs=()
	for d in tests/fuzz/seeds/"$name" tests/fuzz/regressions/"$name"; do
		[ -d "$d" ] && inputs+=("$d")
	done
	label=${bin#"$build"/tests/}
	[ "${bin#"$asan"/}" != "$bin" ] && label=asan/${bin#"$asan"/tests/}
	pool_add suite "$label" "$bin" "${inputs[@]}"
done
# No include from a lower folder of src/ to a higher one.
pool_add suite layers scripts/check-layers.sh src
pool_run

for bin in "$build"/tests/e2e/test_*; do
	[ -x "$bin" ] || continue
	# ASAN_E2E's run against the sanitizer build below (when it is built).
	[ -x "$asan/omniprof" ] && [[ " $ASAN_E2E " == *" ${bin##*/} "* ]] && continue
	run_one "$bin" "${bin#"$build"/tests/}"
done

# A build folder for them whose omniprof is the sanitizer one; the workloads
# are hard links (the tests compare executable paths), node's packages shared.
if [ -x "$asan/omniprof" ]; then
	e2e=$asan/e2e
	rm -rf "$e2e"
	mkdir -p "$e2e"
	ln -s "$(realpath "$asan/omniprof")" "$e2e/omniprof"
	ln -s "$(realpath "$build/node")" "$e2e/node"
	cp -al "$build/workloads" "$e2e/workloads"
	for name in $ASAN_E2E; do
		bin=$build/tests/e2e/$name
		[ -x "$bin" ] || continue
		run_one "$bin" "asan/e2e/$name" "$e2e"
	done
else
	failed=$((failed + 1))
	failed_names+=("asan/omniprof (not built)")
fi

rm -rf "$snaps"

echo
echo "slowest (seconds, of $SECONDS in all):"
printf '%s\n' "${timings[@]}" | sort -rn | head -n 12 | sed 's/^/  /'
if ((${#failed_names[@]})); then
	printf 'failed: %s\n' "${failed_names[@]}"
fi
echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ] && [ "$passed" -gt 0 ]
