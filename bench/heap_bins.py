#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""The agent's heap by part, from heaptrack's folded stacks:

    heaptrack_print -f X.zst --flamegraph-cost-type peak -F X.stacks   # alive at the heap peak
    heaptrack_print -f X.zst --flamegraph-cost-type leaked -F X.stacks # alive at a SIGKILL
    python3 bench/heap_bins.py X.stacks

Parts: line tables, kallsyms, BPF load, encode/export, unwind tables, libdw
units/DIEs/abbrevs, other symbols, traces/profile, other. Python 3 standard library only."""
import collections, re, sys
TABLES = ("table_cache", "stack_deltas", "eh_frame", "unwind_maps", "delta_pages", "file_worker", "go_deltas", "table_job", "debug_frame", "arm_exidx")
def innermost_own(fr):
    for f in reversed(fr):
        if "(" in f and ".c)" in f and not re.search(r"\((malloc|calloc|realloc|libc|pthread|clone|stdlib|msort|x_)", f):
            return f
    return fr[-1] if fr else "?"
def classify(fr):
    s = ";".join(fr)
    if any(k in s for k in ("dwarf_getsrclines", "dwfl_module_getsrc", "dwarf_getsrcfiles", "dwarf_lines")):
        return "symbols: line tables"
    if "kallsyms" in s:
        return "symbols: kallsyms"
    if any(k in s for k in ("libbpf", "bpf_object", "bpf_map__", "bpf_program", "skel", "btf__")):
        return "BPF load"
    if any(k in s for k in ("curl", "Curl", "ssl", "SSL", "gnutls", "nghttp", "otlp", "export_", "gzip", "deflate", "encode", "protobuf", "pprof")) and "export_interval (agent.c);session__take_profile" not in s:
        return "encode/export"
    if any(k in s for k in TABLES):
        return "tables"
    libdw = [f for f in fr if f.startswith("dwfl_") or f.startswith("dwarf_")]
    if libdw:
        return "symbols: libdw " + libdw[0]
    if any(k in s for k in ("native_symbols", "symbol_cache", "dwarf_index", "frame_memo", "elf_symtab", "plt.c", "symbolizer", "elf_pages", "build_table", "python_symbols", "jit")):
        return "symbols: other (" + innermost_own(fr).split(" ")[0] + ")"
    if any(k in s for k in ("session__take_profile", "profile_builder", "trace", "sample", "intervals", "ring")):
        return "traces/profile (" + innermost_own(fr).split(" ")[0] + ")"
    return "other (" + innermost_own(fr).split(" ")[0] + ")"
tot = collections.Counter(); grp = collections.Counter()
for line in open(sys.argv[1]):
    line = line.rstrip("\n")
    if not line: continue
    st, _, n = line.rpartition(" ")
    fr = [f for f in st.split(";") if f]
    c = classify(fr); n = int(n)
    tot[c] += n
    g = c.split(" (")[0] if c.startswith(("symbols: other", "traces", "other")) else c
    g = "symbols: libdw units/DIEs/abbrevs" if g.startswith("symbols: libdw") else g
    grp[g] += n
T = sum(tot.values())
print(f"total at peak {T/2**20:.2f} MiB")
for g, n in grp.most_common():
    print(f"  {n/2**20:7.2f} MiB  {g}")
print("detail:")
for c, n in tot.most_common(30):
    print(f"  {n/2**20:7.3f} MiB  {c}")
