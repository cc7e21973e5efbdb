#!/usr/bin/env bash
# The residual stops on simple Debian programs (issue 17): each program runs
# alone, started after a delay in a pid that is recorded from before its exec
# (so its tables are built as in a running agent), `omniprof record -v
# --max-frames 1024` for SECONDS; then, per program, the samples with user
# frames, those that start at the root (_start, the loader's entry, or a
# thread's clone3/clone) with
# no stop marker, and every stop by reason and by the outermost frame the
# walk reached (the code it could not leave). With --perf, `perf record
# --call-graph dwarf` runs on the same process and its share of samples
# ending at _start is printed beside. Measurements, not a test: run as root
# from the repository's top folder after `make`.
# Usage: [FREQ=HZ] [ONLY=PROGRAM] bench/residual_stops.sh [--perf] [SECONDS]
set -euo pipefail

perf=0
if [ "${1:-}" = "--perf" ]; then
	perf=1
	shift
fi
secs=${1:-6}
omniprof=${OMNIPROF:-build/omniprof}
freq=${FREQ:-499}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

# Input for the compressors: libraries, compressible but not trivially.
(set +o pipefail; cat /usr/lib/x86_64-linux-gnu/lib*.so* 2>/dev/null | head -c 96M >"$work/input")
printf '%s\n' "WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c WHERE x < 50000000)" \
	"SELECT sum(x * x % 7) FROM c;" >"$work/q.sql"

programs=(
	"xz|xz -T1 -6 -c $work/input"
	"zstd|zstd -T1 -19 -c $work/input"
	"bzip2|bzip2 -9 -c $work/input"
	"gzip|gzip -9 -c $work/input"
	"openssl|openssl speed -seconds 20 sha256 rsa2048"
	"sqlite3|sqlite3 :memory: -init $work/q.sql .quit"
	"python3.11|/usr/bin/python3.11 -c 'import re, json; d = [json.dumps({\"k\": i, \"v\": str(i) * 3}) for i in range(10**7)]; print(sum(len(re.sub(\"[0-9]\", \"x\", s)) for s in d))'"
)
if command -v rg >/dev/null; then
	programs+=("rg|rg -c --no-mmap -j1 '[a-z]+[0-9]{3}' -z -uuu /usr/share /usr/lib")
fi

printf '| program | samples with user frames | start at the root | perf dwarf: end at _start | stops: reason @ outermost frame reached (samples) |\n'
printf '|---|---|---|---|---|\n'
for entry in "${programs[@]}"; do
	comm=${entry%%|*}
	cmd=${entry#*|}
	# ONLY=name: that program alone.
	if [ -n "${ONLY:-}" ] && [ "$comm" != "$ONLY" ]; then
		continue
	fi
	sh -c "sleep 1.5; exec $cmd" >/dev/null 2>&1 &
	pid=$!
	if ((perf)); then
		perf record -q -F "$freq" --call-graph dwarf -p "$pid" -o "$work/perf.data" -- sleep "$secs" \
			>/dev/null 2>&1 &
		perf_pid=$!
	fi
	"$omniprof" record -v --max-frames 1024 -F "$freq" -p "$pid" -d "$secs" -o "$work/rec" \
		>"$work/log" 2>&1 || true
	perf_share="-"
	if ((perf)); then
		wait "$perf_pid" || true
		# Rooted: the outermost frame is _start (named, or unnamed in a stripped
		# program) right above __libc_start_main.
		perf_share=$(perf script -i "$work/perf.data" -F ip,sym 2>/dev/null | awk '
			function done() { n++; if (last == "_start" || last ~ /^clone3?$/ || (last == "[unknown]" && prev ~ /^__libc_start_main/)) r++; in_s = 0 }
			NF { prev = last; last = $2; in_s = 1; next }
			in_s { done() }
			END { if (in_s) done(); printf "%.1f%% of %d", n ? 100 * r / n : 0, n }')
	fi
	kill "$pid" 2>/dev/null || true
	wait "$pid" 2>/dev/null || true
	entry=$(readelf -h "$(command -v "${cmd%% *}")" | awk '/Entry point/ { print $NF }')
	awk -v comm="$comm" -v perf="$perf_share" -v entry="$entry" '
		function hex(s,    v, i, c) {
			sub(/^0x/, "", s); v = 0
			for (i = 1; i <= length(s); i++) {
				c = index("0123456789abcdef", tolower(substr(s, i, 1)))
				if (!c) break
				v = v * 16 + c - 1
			}
			return v
		}
		{
			count = $NF
			n = split(substr($0, 1, length($0) - length(count) - 1), f, ";")
			if (f[1] != comm || n < 2) next
			if (f[2] ~ /_\[k\]$/) next   # kernel only: no user frames
			user += count
			if (f[2] ~ /^\[unwind/) {
				reason = f[2]; sub(/^\[unwind stopped: /, "", reason); sub(/\]$/, "", reason)
				where = (n >= 3) ? f[3] : "?"
				stops[reason " @ " where] += count
				next
			}
			# The root: _start, named or (stripped) the entry point as comm+0xOFFSET,
			# or the entry of the loader while it loads the program.
			at = -1
			if (index(f[2], comm "+0x") == 1)
				at = hex(substr(f[2], length(comm) + 2)) - hex(entry)
			if (f[2] == "_start" || f[2] ~ /^ld-linux/ || (at >= 0 && at < 64) ||
			    f[2] == "clone3" || f[2] == "clone") rooted += count
		}
		END {
			s = ""
			for (k in stops) s = s sprintf("%s%s (%d)", s == "" ? "" : "; ", k, stops[k])
			printf "| %s | %d | %.1f%% | %s | %s |\n", comm, user, user ? 100 * rooted / user : 0, perf, s == "" ? "none" : s
		}' "$work/rec/stacks.folded" || echo "| $comm | record failed: $(tail -1 "$work/log") |"
	rm -rf "$work/rec" "$work/perf.data"
done
