#!/bin/sh
# The folders of src/ are layers: an #include "dir/x.h" may only go to the
# same folder or a lower one (docs/architecture.md, "Folders and layers"):
#   util < elf < unwind < proc < interp < symbol < profile < engine < export < serve < cli
# sampler sits above util and below engine (it includes util only; engine,
# export and cli include it). Prints each include that breaks this and ends
# the count of includes checked, then "1 passed, 0 failed" (or "0 passed, 1
# failed"), as tests/run.sh counts a suite. Usage: scripts/check-layers.sh [SRC_DIR]
src=${1:-src}
order="util elf unwind proc interp symbol profile engine export serve cli"

rank() {
	i=0
	for d in $order; do
		[ "$d" = "$1" ] && { echo $i; return; }
		i=$((i + 1))
	done
	echo -1
}

allowed() { # from to
	[ "$1" = "$2" ] && return 0
	if [ "$1" = sampler ]; then
		[ "$2" = util ]
		return
	fi
	if [ "$2" = sampler ]; then
		[ "$(rank "$1")" -ge "$(rank engine)" ]
		return
	fi
	r_from=$(rank "$1")
	r_to=$(rank "$2")
	# A folder not in the order: not layered here.
	[ "$r_from" -lt 0 ] || [ "$r_to" -lt 0 ] && return 0
	[ "$r_to" -le "$r_from" ]
}

passed=0
failed=0
for f in $(find "$src" -name '*.[ch]' | sort); do
	from=${f#"$src"/}
	from=${from%%/*}
	for to in $(sed -n 's|^[[:space:]]*#[[:space:]]*include[[:space:]]*"\([a-z_]*\)/.*|\1|p' "$f"); do
		[ -d "$src/$to" ] || continue
		if allowed "$from" "$to"; then
			passed=$((passed + 1))
		else
			echo "$f: includes $to/ (a higher folder than $from/)"
			failed=$((failed + 1))
		fi
	done
done
echo "layers: $passed includes checked, $failed going up"
if [ "$failed" -eq 0 ]; then
	echo "1 passed, 0 failed"
else
	echo "0 passed, 1 failed"
	exit 1
fi
