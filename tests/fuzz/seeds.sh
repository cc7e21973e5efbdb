#!/usr/bin/env bash
# Writes a seed corpus for one fuzz target into OUT, from real files of this
# machine and of the build (workloads), plus the committed seeds and every
# regression input. Usage: tests/fuzz/seeds.sh TARGET OUT WORKLOADS_DIR
set -eu
target=$1 out=$2 wl=$3
here=$(dirname "$0")
mkdir -p "$out"
for d in "$here/seeds/$target" "$here/regressions/$target"; do
	[ -d "$d" ] && cp -f "$d"/* "$out"/ 2>/dev/null || true
done
elfs=()
for f in "$wl"/nofp_gcc "$wl"/nofp_clang "$wl"/plt_calls "$wl"/cpp_templates "$wl"/lib/late_lib.so "$wl"/lib/ruby_stripped.so; do
	[ -f "$f" ] && elfs+=("$f")
done
# A section's bytes, optionally prefixed with one byte (the target's options).
section() { # FILE SECTION OUT [PREFIX_BYTE]
	local tmp
	tmp=$(mktemp)
	if objcopy --dump-section "$2=$tmp" "$1" /dev/null 2>/dev/null && [ -s "$tmp" ]; then
		if [ $# -ge 4 ]; then printf "\\x$4" >"$3"; else : >"$3"; fi
		cat "$tmp" >>"$3"
	fi
	rm -f "$tmp"
}
case $target in
fuzz_elf_file)
	for f in "${elfs[@]}"; do
		strip -o "$out/$(basename "$f").stripped" "$f"
	done
	;;
fuzz_eh_frame)
	for f in "${elfs[@]}"; do
		section "$f" .eh_frame "$out/$(basename "$f").eh_frame" 00
	done
	# .debug_frame: what GCC writes without asynchronous unwind tables.
	obj=$(mktemp --suffix=.o)
	echo 'int f(int x) { volatile int a[8]; a[x & 7] = x; return a[1] + x; }' |
		gcc -O1 -g -fno-asynchronous-unwind-tables -fno-exceptions -x c -c - -o "$obj"
	section "$obj" .debug_frame "$out/debug_frame" 01
	rm -f "$obj"
	;;
fuzz_fde_rows)
	# Real .eh_frame_hdr and .eh_frame, framed as the target reads them.
	for f in "${elfs[@]}"; do
		python3 - "$f" "$out/$(basename "$f").fde" <<'PY' || true
import struct, subprocess, sys
src, dst = sys.argv[1], sys.argv[2]
secs = {}
for line in subprocess.run(["readelf", "-SW", src], capture_output=True, text=True).stdout.splitlines():
    p = line.replace("[ ", "[").split()
    if len(p) > 6 and p[1] in (".eh_frame", ".eh_frame_hdr"):
        secs[p[1]] = (int(p[3], 16), int(p[4], 16), int(p[5], 16))
if len(secs) == 2:
    data = open(src, "rb").read()
    (ea, eo, es), (ha, ho, hs) = secs[".eh_frame"], secs[".eh_frame_hdr"]
    with open(dst, "wb") as o:
        o.write(struct.pack("<Ii", hs, ha - ea) + data[ho:ho + hs] + data[eo:eo + es])
PY
		cp "$f" "$out/$(basename "$f").elf" # read as an ELF file too
	done
	;;
fuzz_build_id)
	for f in "${elfs[@]}"; do
		section "$f" .note.gnu.build-id "$out/$(basename "$f").note"
	done
	;;
fuzz_proc_maps)
	cat /proc/self/maps >"$out/self_maps"
	;;
fuzz_user_unwind)
	# Registers (pc odd: sp and fp land in the stack), frame-pointer rules, a stack.
	{
		printf '\x01\x10\x40\x00\x00\x00\x00\x00'
		printf '\x00\x00\x00\x00\x00\x00\x00\x00%.0s' 1 2
		for i in 1 2 3 4 5 6 7 8; do printf '\x00\x01\xf0\xff\x10\x00\x00\x00'; done
		head -c 512 /dev/urandom
	} >"$out/fp_rules"
	;;
fuzz_gopclntab)
	# The table of the Go workload (TEXT_START of the target is Go's amd64 .text).
	[ -f "$wl/go_chain" ] && section "$wl/go_chain" .gopclntab "$out/go_chain.gopclntab"
	;;
fuzz_go_deltas)
	# The Go workloads' tables, and one whole binary (its pclntab found by the magic).
	[ -f "$wl/go_deep" ] && section "$wl/go_deep" .gopclntab "$out/go_deep.gopclntab"
	[ -f "$wl/go_chain" ] && cp "$wl/go_chain" "$out/go_chain.elf"
	;;
fuzz_go_func_rows)
	# A Go workload's table alone, and whole binaries (read through their section headers).
	[ -f "$wl/go_deep" ] && section "$wl/go_deep" .gopclntab "$out/go_deep.gopclntab"
	[ -f "$wl/go_chain" ] && cp "$wl/go_chain" "$out/go_chain.elf"
	[ -f "$wl/go_cgo" ] && cp "$wl/go_cgo" "$out/go_cgo.elf"
	;;
fuzz_dwarf_lines)
	# Line programs and their strings, framed as the target reads them (length, .debug_line, .debug_line_str).
	for f in "$wl"/cpp_inline "$wl"/cpp_templates "$wl"/nofp_gcc; do
		[ -f "$f" ] || continue
		tl=$(mktemp) ts=$(mktemp)
		if objcopy --dump-section .debug_line="$tl" "$f" /dev/null 2>/dev/null && [ -s "$tl" ]; then
			objcopy --dump-section .debug_line_str="$ts" "$f" /dev/null 2>/dev/null || : >"$ts"
			python3 -c 'import struct,sys; l=open(sys.argv[1],"rb").read(); s=open(sys.argv[2],"rb").read(); open(sys.argv[3],"wb").write(struct.pack("<I",len(l))+l+s)' \
				"$tl" "$ts" "$out/$(basename "$f").lines"
		fi
		rm -f "$tl" "$ts"
	done
	;;
fuzz_kallsyms)
	# A slice of the real table, with and without module symbols.
	[ -r /proc/kallsyms ] && head -n 2000 /proc/kallsyms >"$out/kallsyms_head"
	[ -r /proc/kallsyms ] && tail -n 2000 /proc/kallsyms >"$out/kallsyms_tail"
	;;
fuzz_kernel_btf)
	# The BPF object's own BTF (the kernel types it names, in the same format), and
	# the running kernel's whole BTF (5.5 MB: the reader's real input).
	llvm-objcopy --dump-section ".BTF=$out/sampler_bpf.btf" "$wl/../bpf/sampler.bpf.o" \
		/dev/null 2>/dev/null || true # binutils' objcopy knows no BPF ELF
	[ -r /sys/kernel/btf/vmlinux ] && cp /sys/kernel/btf/vmlinux "$out/vmlinux.btf"
	;;
esac
# A target with no seed still gets one input.
[ -n "$(ls -A "$out")" ] || printf 'x' >"$out/empty"
