#!/usr/bin/env bash
# Runs every test binary: unit tests, end-to-end tests (root + BPF), then the
# unit tests again as built with ASan + UBSan, a subset of the end-to-end
# tests against omniprof built with ASan + UBSan (ASAN_E2E), then the replay
# suite (normal and ASan + UBSan) and the folders' layering
# (scripts/check-layers.sh). Ends with "N passed, M failed".
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

# The end-to-end tests run again against the sanitizer build of omniprof:
# the agent's and record's whole life (sampling, naming, export, signals,
# exit) with every leak and undefined behaviour fatal. A subset, to keep
# `make test` short: the agent's four transports and its outage, and the
# lifecycle suite (record and agent stopped by signals, hotplug, flush
# deadlines, a hostile reply). Another list: ASAN_E2E="test_x test_y".
ASAN_E2E=${ASAN_E2E:-test_agent test_lifecycle}

run_one() {
	local bin=$1 label=$2 tbuild=${3:-$build} log rc ok start=$SECONDS
	log=$(mktemp)
	echo "== $label"
	OMNIPROF_BUILD=$tbuild "$bin" 2>&1 | tee "$log"
	rc=${PIPESTATUS[0]}
	timings+=("$((SECONDS - start)) $label")
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
	rm -f "$log"
}

# A suite that prints its own "N passed, M failed" line (the replay suite).
run_suite() {
	local label=$1 log rc line start=$SECONDS
	shift
	log=$(mktemp)
	echo "== $label"
	OMNIPROF_BUILD=$build "$@" 2>&1 | tee "$log"
	rc=${PIPESTATUS[0]}
	timings+=("$((SECONDS - start)) $label")
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
	rm -f "$log"
}

for bin in "$build"/tests/unit/test_* "$build"/tests/e2e/test_*; do
	[ -x "$bin" ] || continue
	run_one "$bin" "${bin#"$build"/tests/}"
done
for bin in "$asan"/tests/unit/test_*; do
	[ -x "$bin" ] || continue
	run_one "$bin" "asan/${bin#"$asan"/tests/}"
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

# No include from a lower folder of src/ to a higher one.
run_suite layers scripts/check-layers.sh src

cases=(tests/replay/cases/*.case)
run_suite replay "$build"/tests/replay/replay "${cases[@]}"
run_suite asan/replay "$asan"/tests/replay/replay "${cases[@]}"

# Fuzz targets over their committed seeds and every crash input kept.
for bin in "$build"/tests/fuzz/fuzz_* "$asan"/tests/fuzz/fuzz_*; do
	[ -x "$bin" ] || continue
	name=${bin##*/}
	inputs=()
	for d in tests/fuzz/seeds/"$name" tests/fuzz/regressions/"$name"; do
		[ -d "$d" ] && inputs+=("$d")
	done
	label=${bin#"$build"/tests/}
	[ "${bin#"$asan"/}" != "$bin" ] && label=asan/${bin#"$asan"/tests/}
	run_suite "$label" "$bin" "${inputs[@]}"
done

echo
echo "slowest (seconds, of $SECONDS in all):"
printf '%s\n' "${timings[@]}" | sort -rn | head -n 12 | sed 's/^/  /'
if ((${#failed_names[@]})); then
	printf 'failed: %s\n' "${failed_names[@]}"
fi
echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ] && [ "$passed" -gt 0 ]
