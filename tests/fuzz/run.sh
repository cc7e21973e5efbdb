#!/usr/bin/env bash
# `make fuzz`: runs each libFuzzer target for SECONDS with a seed corpus made
# from real files (seeds.sh). A crash is a failure: its input is left in
# BUILD/artifacts/TARGET/; fix the parser, then keep the input as
# tests/fuzz/regressions/TARGET/NAME so every `make test` replays it.
# Prints one line per target, then "N passed, M failed".
# Usage: tests/fuzz/run.sh FUZZ_BUILD WORKLOADS_DIR SECONDS TARGET...
set -u
build=$1 wl=$2 seconds=$3
shift 3
here=$(dirname "$0")
passed=0
failed=0
export ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=1}
export UBSAN_OPTIONS=${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1}
for target in "$@"; do
	corpus=$build/corpus/$target
	artifacts=$build/artifacts/$target/
	log=$build/logs/$target.log
	mkdir -p "$artifacts" "$(dirname "$log")"
	"$here/seeds.sh" "$target" "$corpus" "$wl"
	# -max_len: ELF files need room; a Go program's .gopclntab is hundreds of KiB.
	max_len=65536
	[ "$target" = fuzz_gopclntab ] && max_len=1048576
	[ "$target" = fuzz_go_func_rows ] && max_len=4194304
	"$build/libfuzzer/$target" -max_total_time="$seconds" -timeout=10 -rss_limit_mb=2048 \
		-max_len="$max_len" -print_final_stats=1 -artifact_prefix="$artifacts" "$corpus" \
		>"$log" 2>&1
	rc=$?
	runs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log" | tail -n1)
	if [ "$rc" -eq 0 ]; then
		echo "PASS $target: ${runs:-?} runs in ${seconds}s, corpus $(ls "$corpus" | wc -l) inputs"
		passed=$((passed + 1))
	else
		echo "FAIL $target (exit $rc): see $log; inputs in $artifacts"
		grep -m3 -E 'ERROR|runtime error|SUMMARY' "$log" | sed 's/^/     /'
		failed=$((failed + 1))
	fi
done
echo
echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ]
