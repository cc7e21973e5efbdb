#!/usr/bin/env bash
# BPF time per sample (kernel.bpf_stats_enabled) for user stacks of a given depth.
# Usage: bench/bpf_cost.sh [DEPTH...]   (root; run `make tests` first)
# RECORD_FLAGS adds options to `record`, e.g. RECORD_FLAGS=--copy-all-stacks
# for the cost of sending stack copies instead of unwinding.
set -u
build=${OMNIPROF_BUILD:-build}
old=$(sysctl -n kernel.bpf_stats_enabled)
sysctl -qw kernel.bpf_stats_enabled=1
trap 'sysctl -qw kernel.bpf_stats_enabled=$old' EXIT
printf '| user frames | samples | ns per sample |\n|---|---|---|\n'
depths=("$@")
((${#depths[@]})) || depths=(10 40 256)
for depth in "${depths[@]}"; do
	# One busy process per CPU, so (nearly) every sample walks a stack of this depth.
	pids=()
	for _ in $(seq "$(nproc)"); do
		"$build/workloads/deep_recursion" 12 "$depth" >/dev/null &
		pids+=($!)
	done
	sleep 0.3
	"$build/omniprof" record -p "$(IFS=,; echo "${pids[*]}")" -d 8 -F 999 -o "$(mktemp -d)" ${RECORD_FLAGS:-} >/dev/null 2>&1 &
	rec=$!
	sleep 6
	line=$(bpftool prog show name on_sample | head -1)
	wait "$rec" || true
	kill "${pids[@]}" 2>/dev/null
	wait "${pids[@]}" 2>/dev/null
	ns=$(sed -n 's/.*run_time_ns \([0-9]*\).*/\1/p' <<<"$line")
	cnt=$(sed -n 's/.*run_cnt \([0-9]*\).*/\1/p' <<<"$line")
	printf '| %s | %s | %s |\n' "$depth" "$cnt" "$((ns / (cnt ? cnt : 1)))"
done
