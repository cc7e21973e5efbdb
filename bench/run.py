#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""omniprof benchmarks. `make bench` runs them all and writes bench/RESULTS.md.

    bench/run.py [--build DIR] [--out FILE] [--quick] [SECTION...]

Sections: bpf-cost, agent, startup, offcpu, latency, tables, compare (default: all). Needs
root, a build (`make tests bench-tools`), and for `compare` linux-perf and
bpftrace (scripts/install-deps.sh --bench installs them). Every figure is a
median over repeated intervals or runs, measured on this machine now.

bpf-cost's native rows come with their frame-pointer floor (issue 22; --floor):
bench/fp_floor.bpf.c, a perf_event program doing only bpf_get_stack(BPF_F_USER_STACK)
into a per-CPU buffer ("walk"), or that and a ring buffer send ("walk + send"), runs
on deep_recursion_fp (the same code built with frame pointers, same depth) in 0.5 s
rounds alternating with the row's workers, and the table gives omniprof's BPF ns per
sample as a ratio to it, with both walks' frames per sample: gross (runs for other
processes charged to the walked ones, as in the rows) and net (their mean cost, from
each program's rounds with its workers stopped, taken off). The kernel's walk stops
at kernel.perf_event_max_stack (127 frames), so past that depth the ratio is not of
equal walks.
"""

import argparse
import json
import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import benchlib as bl  # noqa: E402

HERE = os.path.dirname(os.path.abspath(__file__))
FP_FLOOR_STAT_BYTES = 3  # enum fp_floor_stat in bench/fp_floor.h
ROOT = os.path.dirname(HERE)


class Bench:
    def __init__(self, args):
        self.build = os.path.abspath(args.build)
        self.quick = args.quick
        self.omniprof = os.path.join(self.build, "omniprof")
        # bpf-cost --against: another build's omniprof, profiling the same workload at the same time
        self.against = os.path.join(os.path.abspath(args.against), "omniprof") if args.against else None
        # bpf-cost --paired N: each Java row in rounds alternating with a native N-frame stack
        self.paired = getattr(args, "paired", None)
        # --table-cache DIR: each build's cache folder under DIR, emptied before each long
        # start-up run (a cold start: every table built); without it /var/cache's, kept warm
        self.table_cache = os.path.abspath(args.table_cache) if getattr(args, "table_cache", None) \
            else None
        self.rows = [w for w in args.rows.split(",") if w] if getattr(args, "rows", None) else None
        # bpf-cost --floor: the native rows' frame-pointer floor, in rounds, together, or off
        self.floor = getattr(args, "floor", None) or "rounds"
        self.wl = os.path.join(self.build, "workloads")
        self.bwl = os.path.join(self.build, "bench", "workloads")
        self.python = os.environ.get("OMNIPROF_BENCH_PYTHON", "/usr/bin/python3")
        self.ruby = os.environ.get("OMNIPROF_BENCH_RUBY", "/usr/bin/ruby")
        self.perl = os.environ.get("OMNIPROF_BENCH_PERL", "/usr/bin/perl")
        self.node = os.environ.get("OMNIPROF_BENCH_NODE", "/usr/bin/node")
        self.php = os.environ.get("OMNIPROF_BENCH_PHP", "/usr/bin/php8.2")
        self.tmp = tempfile.mkdtemp(prefix="omniprof-bench-")
        self.sections = {}

    def out_dir(self, name):
        d = os.path.join(self.tmp, name)
        os.makedirs(d, exist_ok=True)
        return d

    def start_ready(self, argv):
        c = bl.Child(argv, stdout=subprocess.PIPE)
        if not c.wait_line("ready"):
            c.signal(signal.SIGKILL)
            c.wait()
            raise RuntimeError(f"workload did not start: {argv}")
        return c

    def cache_args(self, exe):
        """With --against, each build keeps its tables in a cache folder of its own: two
        builds of different cache formats in one folder evict each other's files at its
        256 MiB bound, and both then rebuild tables they would have read back."""
        if not self.against and not self.table_cache:
            return []
        tag = "against" if self.against and \
            os.path.realpath(exe) == os.path.realpath(self.against) else "this"
        root = self.table_cache or "/var/cache/omniprof-bench"
        os.makedirs(root, mode=0o700, exist_ok=True)
        return ["--table-cache", f"{root}/{tag}"]

    def empty_table_caches(self):
        """--table-cache: both builds' folders emptied (the next runs start cold)."""
        if not self.table_cache:
            return
        for tag in ("this", "against"):
            shutil.rmtree(os.path.join(self.table_cache, tag), ignore_errors=True)

    def record(self, extra, seconds, hz, out, verbose=False, omniprof=None):
        argv = [omniprof or self.omniprof, "record", "-d", str(seconds), "-F", str(hz), "-o", out]
        argv += self.cache_args(argv[0])
        if verbose:
            argv.append("-v")
        return bl.Child(argv + extra, stdout=subprocess.DEVNULL,
                        stderr=open(out + ".stderr", "w"))

    # ---- BPF time per sample ------------------------------------------------
    def bpf_cost_one(self, label, make_workload, seconds, extra=(), floor_depth=None):
        if self.rows and not any(w in label for w in self.rows):
            return {"label": label, "ns": None, "p90": None, "intervals": 0, "frames": None,
                    "against": None}
        workers = [make_workload() for _ in range(os.cpu_count() or 1)]
        floor = self.floor_start(floor_depth, seconds) if floor_depth else None
        # The floor's rounds alternate with omniprof's: twice the time, the same rounds each.
        span = 2 * seconds if floor and self.floor == "rounds" else seconds
        out = self.out_dir(f"bpf-cost-{label}")
        pids = ["-p", ",".join(str(w.pid) for w in workers), *extra]
        rec = self.record(pids, span + (5 if floor else 3), 999, out, verbose=True)
        other = None
        if self.against:
            other = self.record(pids, span + (5 if floor else 3), 999, out + "-against", omniprof=self.against)
        series = other_series = []
        phases = other_phases = None
        floor_cells = {}
        if floor and not all(bl.wait_for_prog(f.pid) for f in floor["loaders"].values()):
            floor = None
        if bl.wait_for_prog(rec.pid) and (not other or bl.wait_for_prog(other.pid)):
            start = time.monotonic()
            pids = [rec.pid, other.pid] if other else [rec.pid]
            maps = [phase_maps(p) for p in pids]
            time.sleep(max(0.0, 1.0 - (time.monotonic() - start)))  # tables built and loaded
            if floor:
                before = [phase_snap(m) for m in maps]
                all_series, floor_cells = self.floor_rounds(pids, workers, floor, span)
                split = [phase_split(b, phase_snap(m)) for b, m in zip(before, maps)]
                phases, other_phases = split[0], (split[1] if other else None)
            elif any(maps):
                # OP_BPF_PHASES builds: the phases over the first half, read while the
                # recordings surely still run.
                before = [phase_snap(m) for m in maps]
                halves = [bl.ns_per_sample_series_of(pids, seconds / 2)]
                split = [phase_split(b, phase_snap(m)) for b, m in zip(before, maps)]
                halves.append(bl.ns_per_sample_series_of(pids, seconds / 2))
                all_series = [a + b for a, b in zip(halves[0], halves[1])]
                phases, other_phases = split[0], (split[1] if other else None)
            else:
                all_series = bl.ns_per_sample_series_of(pids, seconds)
            series = all_series[0]
            if other:
                other_series = all_series[1]
        rec.wait(timeout=60)
        if other:
            other.wait(timeout=60)
        for w in workers + (self.floor_stop(floor) if floor_depth else []):
            w.signal(signal.SIGKILL)
            w.signal(signal.SIGCONT)
            w.wait()
        return {
            **floor_cells,
            "label": label,
            "ns": bl.median(series),
            "p90": sorted(series)[int(len(series) * 0.9)] if series else None,
            "intervals": len(series),
            "frames": frames_per_sample(out + ".stderr"),
            "against": bl.median(other_series),
            "phases": phases,
            "against_phases": other_phases,
        }

    # ---- the frame-pointer floor beside the native rows ----------------------
    FLOOR_VARIANTS = ("walk", "send")

    def floor_start(self, depth, seconds):
        """The frame-pointer floor of a native row: deep_recursion_fp (the same code built
        with frame pointers) at depth on every CPU, and one bench/fp_floor per variant
        (walk: bpf_get_stack into a per-CPU buffer; send: and through a ring buffer) on
        those workers, at 999 Hz like the recordings. None when not built or --floor off."""
        exe = os.path.join(self.build, "bench", "fp_floor")
        wl = os.path.join(self.bwl, "deep_recursion_fp")
        if self.floor == "off" or not os.path.exists(exe) or not os.path.exists(wl):
            return None
        workers = [self.start_ready([wl, "600", str(depth)]) for _ in range(os.cpu_count() or 1)]
        if self.floor == "rounds":
            for w in workers:
                w.signal(signal.SIGSTOP)
        pids = ",".join(str(w.pid) for w in workers)
        loaders = {}
        for v in self.FLOOR_VARIANTS:
            argv = [exe, "-F", "999", "-d", str(3 * seconds + 30), "-p", pids]
            loaders[v] = bl.Child(argv + (["--send"] if v == "send" else []), stdout=subprocess.PIPE)
            if not loaders[v].wait_line("ready"):
                raise RuntimeError(f"fp_floor did not start: {argv}")
        return {"workers": workers, "loaders": loaders}

    @staticmethod
    def floor_stop(floor):
        """The floor's processes, for the caller to kill and reap (none when it did not start)."""
        return (floor["workers"] + list(floor["loaders"].values())) if floor else []

    def floor_rounds(self, pids, workers, floor, seconds, interval=0.5):
        """BPF ns per walked sample of the recordings pids (one series each) and of the floor's
        loaders, over seconds. --floor rounds: 0.5 s rounds alternating between the row's
        workers and the floor's (the others stopped), each program's figure from its own
        rounds, so each stack has the CPUs as the row alone would; --floor together: both
        running, every interval counts for all. Also the cells of the floor table: the floor's
        frames per walk (bpf_get_stack's bytes / 8), ns per walked sample, and the ratios.

        "Net" figures (rounds only): each program's runs that walk nothing (other processes,
        idle CPUs) are charged to its walked ones in the gross figure, as in the rows above; on
        a loaded host they are most runs, and the same charge on both sides of a ratio pulls it
        towards 1. A program's rounds where its workers are stopped have only such runs: their
        mean cost, taken off its own rounds' time, leaves the walked runs' own."""
        loaders = [floor["loaders"][v] for v in self.FLOOR_VARIANTS]
        every = list(pids) + [f.pid for f in loaders]
        maps = [bl.stats_map_id(p) for p in every]
        nrec = len(pids)

        def snap():
            progs = [bl.sampler_prog_stats(p) for p in every]
            ctrs = bl.read_counters_of(maps)
            return [None if p is None or c is None else
                    (p[0], bl.walked_samples(c), c.get(FP_FLOOR_STAT_BYTES, 0), p[1])
                    for p, c in zip(progs, ctrs)]

        groups = {"row": workers, "floor": floor["workers"]}
        own = [{} for _ in every]  # round -> (ns, walked, runs, bytes) of the program's own rounds
        idle = [[0, 0] for _ in every]  # (ns, runs) of its rounds that walked nothing
        end, k = time.monotonic() + seconds, 0
        while time.monotonic() < end:
            kind = ("row", "floor")[k % 2] if self.floor == "rounds" else None
            if kind:
                for w in groups["floor" if kind == "row" else "row"]:
                    w.signal(signal.SIGSTOP)
                for w in groups[kind]:
                    w.signal(signal.SIGCONT)
                time.sleep(0.1)  # the stopped stack's last samples are in
            before = snap()
            time.sleep(interval)
            after = snap()
            for i, (a, b) in enumerate(zip(before, after)):
                if not a or not b:
                    continue
                d = (b[0] - a[0], b[1] - a[1], b[3] - a[3], b[2] - a[2])
                if kind is None or (kind == "row") == (i < nrec):
                    if d[1] > 0:
                        own[i][k] = d
                elif d[1] == 0 and d[2] > 0:
                    idle[i][0] += d[0]
                    idle[i][1] += d[2]
            k += 1
        for w in workers:
            w.signal(signal.SIGCONT)

        def gross(i):
            return {k: d[0] / d[1] for k, d in own[i].items()}

        def net(i):
            if not idle[i][1]:
                return {}
            other = idle[i][0] / idle[i][1]
            return {k: (d[0] - (d[2] - d[1]) * other) / d[1] for k, d in own[i].items()}

        def pair_ratio(r, i, per):
            # Each recording's round over the floor's next one (together: the same interval),
            # so the host's drift between rounds a second apart weighs on both halves.
            step = 1 if self.floor == "rounds" else 0
            a, b = per(r), per(i)
            return bl.median([ns / b[k + step] for k, ns in a.items() if b.get(k + step)]), \
                len([k for k in a if b.get(k + step)])

        cells = {"floor_other_run": [idle[i][0] / idle[i][1] if idle[i][1] else None
                                     for i in range(len(every))]}
        for r, key in zip(range(nrec), ("this", "against")):
            cells[f"net_{key}"] = bl.median(list(net(r).values()))
        for j, v in enumerate(self.FLOOR_VARIANTS):
            i = nrec + j
            cells[f"floor_{v}"] = bl.median(list(gross(i).values()))
            cells[f"floor_{v}_net"] = bl.median(list(net(i).values()))
            walked = sum(d[1] for d in own[i].values())
            cells[f"floor_{v}_frames"] = (sum(d[3] for d in own[i].values()) / 8 / walked
                                          if walked else None)
            for r, key in zip(range(nrec), ("this", "against")):
                cells[f"floor_{v}_ratio_{key}"], cells[f"floor_{v}_pairs_{key}"] = \
                    pair_ratio(r, i, gross)
                cells[f"floor_{v}_net_ratio_{key}"], _ = pair_ratio(r, i, net)
        return [list(gross(r).values()) for r in range(nrec)], cells

    def bpf_cost_paired(self, label, make_workload, seconds, extra=(), interval=0.5):
        """label's workload and the native reference stack (deep_recursion at self.paired
        frames), both running, both targets of one agent (and, with --against, of one of
        that build's too), in alternating rounds: in each round one of the two is stopped
        (SIGSTOP) and the other runs, so the round's BPF time per walked sample and its
        frames (the native frames and HotSpot's, read from the agent's counters) are that
        stack's alone; each row round's per-frame cost is divided by the next native
        round's. Rows measured one after the other, 8 s each, mix the host's drift between
        rows into their ratio (1.08-2.19x for one build in three quiet runs); here the two
        halves of a ratio are a second apart, with the same agents. Only for the native and
        HotSpot rows (their frames are the ones counted per round)."""
        if (self.rows and not any(w in label for w in self.rows)) or not label.startswith("Java"):
            return None
        ref = (lambda: self.start_ready([os.path.join(self.wl, "deep_recursion"), "600",
                                         str(self.paired)]))
        builds = [self.omniprof] + ([self.against] if self.against else [])
        ncpu = os.cpu_count() or 1
        groups = {"row": [], "ref": []}
        recs, rounds = [], []  # rounds: (kind, per agent (ns, walked, frames) or None)
        cfi = bl.op_stat_index("OP_STAT_FRAMES_CFI")
        fp = bl.op_stat_index("OP_STAT_FRAMES_FP")
        jvm = [bl.jvm_stat_index(n) for n in ("OP_JVM_STAT_INTERPRETED", "OP_JVM_STAT_COMPILED",
                                               "OP_JVM_STAT_STUB", "OP_JVM_STAT_INLINED")]
        try:
            groups["row"] = [make_workload() for _ in range(ncpu)]
            groups["ref"] = [ref() for _ in range(ncpu)]
            for w in groups["ref"]:
                w.signal(signal.SIGSTOP)
            pids = ["-p", ",".join(str(w.pid) for w in groups["row"] + groups["ref"]), *extra]
            for i, exe in enumerate(builds):
                out = self.out_dir(f"bpf-cost-paired-{label}-{i}")
                recs.append(self.record(pids, 3 * seconds + 60, 999, out, omniprof=exe))
            if all(bl.wait_for_prog(r.pid) for r in recs):
                time.sleep(1.0)  # tables built and loaded
                stats = [bl.stats_map_id(r.pid) for r in recs]
                jstats = [bl.named_map_id(r.pid, "jvm_stats") for r in recs]

                def snap():
                    progs = [bl.sampler_prog_stats(r.pid) for r in recs]
                    maps = bl.read_counters_of(stats + jstats)
                    out = []
                    for k, prog in enumerate(progs):
                        c, j = maps[k], maps[len(recs) + k]
                        out.append(None if prog is None or c is None or j is None else
                                   (prog[0], bl.walked_samples(c),
                                    c.get(cfi, 0) + c.get(fp, 0) + sum(j.get(x, 0) for x in jvm)))
                    return out

                end, k = time.monotonic() + seconds, 0
                while time.monotonic() < end:
                    kind = ("row", "ref")[k % 2]
                    for w in groups["ref" if kind == "row" else "row"]:
                        w.signal(signal.SIGSTOP)
                    for w in groups[kind]:
                        w.signal(signal.SIGCONT)
                    time.sleep(0.1)  # the stopped stack's last samples are in
                    before = snap()
                    time.sleep(interval)
                    after = snap()
                    rounds.append((kind, [None if x is None or y is None or y[1] <= x[1] else
                                          tuple(b - a for a, b in zip(x, y))
                                          for x, y in zip(before, after)]))
                    k += 1
            for r in recs:
                r.signal(signal.SIGINT)
                r.wait(timeout=60)
        finally:
            for w in groups["row"] + groups["ref"]:
                w.signal(signal.SIGKILL)
                w.signal(signal.SIGCONT)
                w.wait()
        result = {"label": label}
        for i in range(len(builds)):
            def total(kind, f):
                ds = [d[i] for kd, d in rounds if kd == kind and d[i]]
                return sum(x[f] for x in ds)

            fr = total("row", 2) / total("row", 1) if total("row", 1) else None
            ff = total("ref", 2) / total("ref", 1) if total("ref", 1) else None
            row_ns = [d[i][0] / d[i][1] for kd, d in rounds if kd == "row" and d[i]]
            ref_ns = [d[i][0] / d[i][1] for kd, d in rounds if kd == "ref" and d[i]]
            ratios = []
            for j in range(0, len(rounds) - 1, 2):
                a, b = rounds[j][1][i], rounds[j + 1][1][i]
                if a and b and a[2] and b[2]:
                    ratios.append((a[0] / a[2]) / (b[0] / b[2]))
            result["against" if i else "this"] = {
                "ns": bl.median(row_ns), "ref_ns": bl.median(ref_ns), "frames": fr,
                "ref_frames": ff, "ratio": bl.median(ratios), "rounds": len(ratios),
                "p10": sorted(ratios)[len(ratios) // 10] if ratios else None,
                "p90": sorted(ratios)[len(ratios) * 9 // 10] if ratios else None,
            }
        return result

    def bpf_cost_paired_lines(self, rows):
        head = ("| stack | user frames per sample | BPF ns per sample (median of rounds) | native "
                f"{self.paired} in the rounds between: frames, ns | per-frame ratio to native, "
                "median of round pairs | p10–p90 of pairs | pairs |")
        cells = ["this", "against"] if self.against else ["this"]
        lines = []
        for key in cells:
            if self.against:
                lines.append(f"\n{'this build' if key == 'this' else '--against build'}:\n")
            lines += [head, "|---|---|---|---|---|---|---|"]
            for r in rows:
                c = r[key]
                lines.append(f"| {r['label']} | {bl.fmt(c['frames'])} | {bl.fmt(c['ns'], '{:.0f}')} "
                             f"| {bl.fmt(c['ref_frames'])}, {bl.fmt(c['ref_ns'], '{:.0f}')} "
                             f"| {bl.fmt(c['ratio'], '{:.2f}')}× "
                             f"| {bl.fmt(c['p10'], '{:.2f}')}–{bl.fmt(c['p90'], '{:.2f}')} "
                             f"| {c['rounds']} |")
        return lines

    def java_argv(self, main, *args, flags=()):
        """A bench/workloads/<main>.java program (compiled here once) on the JDK, small heap,
        with the JVM flags flags."""
        jdk = os.environ.get("OMNIPROF_BENCH_JDK", "/usr/lib/jvm/java-17-openjdk-amd64")
        classes = os.path.join(self.bwl, "java")
        if not os.path.exists(os.path.join(classes, main + ".class")):
            os.makedirs(classes, exist_ok=True)
            subprocess.run([os.path.join(jdk, "bin", "javac"), "-d", classes,
                            os.path.join(HERE, "workloads", main + ".java")], check=True)
        return [os.path.join(jdk, "bin", "java"), "-Xmx64m", "-XX:+UseSerialGC", *flags, "-cp",
                classes, main, *args]

    def bpf_cost(self, depths=None):
        seconds = 3 if self.quick else 8
        specs = []
        add = specs.append
        for depth in depths or (10, 40, 256, 1024):
            add((
                f"native, {depth} frames",
                lambda d=depth: self.start_ready(
                    [os.path.join(self.wl, "deep_recursion"), "600", str(d)]),
                # Past the default 256 frames, the depth perf walks (issue 17).
                seconds, ["--max-frames", "1024"] if depth > 256 else [], depth))
        add((
            "Python, 30 Python frames",
            lambda: self.start_ready([self.python, os.path.join(HERE, "workloads", "py_loop.py"),
                                      "600", "30"]),
            seconds))
        add((
            "Perl, 40 Perl frames",
            lambda: self.start_ready([self.perl, os.path.join(HERE, "workloads", "perl_loop.pl"),
                                      "600", "40"]),
            seconds))
        add((
            "V8, 40 JavaScript frames (optimized)",
            lambda: self.start_ready([self.node, os.path.join(HERE, "workloads", "v8_loop.js"),
                                      "600", "40"]),
            seconds))
        add((
            "Python, 30 Python frames, 16 threads",
            lambda: self.start_ready([self.python, os.path.join(HERE, "workloads", "py_loop.py"),
                                      "600", "30", "16"]),
            seconds))
        add((
            "Ruby, 40 Ruby frames",
            lambda: self.start_ready([self.ruby, os.path.join(HERE, "workloads", "rb_loop.rb"),
                                      "600", "40"]),
            seconds))
        add((
            "Java (C2), 40 Java frames",
            lambda: self.start_ready(self.java_argv("JavaDeep", "600", "40")),
            seconds))
        add((
            "Java (C2), 40 distinct methods, each its own nmethod",
            lambda: self.start_ready(self.java_argv(
                "JavaWide", "600", flags=("-XX:CompileCommand=quiet",
                                          "-XX:CompileCommand=dontinline,JavaWide::m*"))),
            seconds))
        add((
            "Java (C2), 40 distinct methods, inlined as C2 chooses",
            lambda: self.start_ready(self.java_argv("JavaWide", "600")),
            seconds))
        if os.path.exists(self.php):
            add((
                "PHP, 40 PHP frames (php8.2, JIT off)",
                lambda: self.start_ready([self.php, "-n", os.path.join(HERE, "workloads", "php_loop.php"),
                                          "600", "40"]),
                seconds))
        with bl.BpfStats():
            if self.paired:
                # Each Java row in rounds alternating with the native reference (the
                # native rows would be paired with their own kind); 30 s: 20-30 rounds
                # of 0.5 s and the counters' reads.
                specs = [(sp[0], sp[1], 6 if self.quick else 30, *sp[3:4]) for sp in specs]
                rows = [r for r in (self.bpf_cost_paired(*sp) for sp in specs
                                    if not sp[0].startswith("native,")) if r]
                lines = self.bpf_cost_paired_lines(rows)
                self.sections["bpf-cost"] = ([], lines)
                return lines
            rows = [self.bpf_cost_one(*sp) for sp in specs]
        lines = ["| stack | user frames per sample | BPF ns per sample (median) | p90 | intervals |"
                 + (" --against build, same time (median) |" if self.against else ""),
                 "|---|---|---|---|---|" + ("---|" if self.against else "")]
        for r in rows:
            lines.append(f"| {r['label']} | {bl.fmt(r['frames'])} | {bl.fmt(r['ns'], '{:.0f}')} "
                         f"| {bl.fmt(r['p90'], '{:.0f}')} | {r['intervals']} |"
                         + (f" {bl.fmt(r['against'], '{:.0f}')} |" if self.against else ""))
        if self.rows:
            rows = [r for r in rows if any(w in r["label"] for w in self.rows)]
            lines = lines[:2] + [l for l in lines[2:] if any(w in l for w in self.rows)]
        lines += self.floor_lines(rows)
        lines += phase_lines(rows)
        self.sections["bpf-cost"] = (rows, lines)
        return lines


    def floor_lines(self, rows):
        """The native rows beside their frame-pointer floor (bench/fp_floor.bpf.c)."""
        rows = [r for r in rows if "floor_walk" in r]
        if not rows:
            return []
        how = ("in 0.5 s rounds alternating with the row's (the other workers stopped)"
               if self.floor == "rounds" else "at the same time as the row's")
        builds = [("this", "ns", "this")] + ([("--against", "against", "against")]
                                             if self.against else [])
        out = ["", "The frame-pointer floor: bench/fp_floor.bpf.c's bpf_get_stack(BPF_F_USER_STACK, "
               "128 frames) on deep_recursion built with frame pointers at the same depth, "
               f"{how}, 999 Hz; walk: into a per-CPU buffer only; walk + send: and through a ring "
               "buffer. BPF ns per walked sample, median of 0.5 s intervals: gross, the runs that "
               "walk nothing (other processes) charged to the walked ones as in the rows above; "
               "net, their mean cost (from each program's rounds with its workers stopped, last "
               "column) taken off. Ratios: medians of neighbouring rounds' ratios (pairs). The "
               "kernel's walk stops at kernel.perf_event_max_stack (127) and where libc's frames "
               "have no frame pointer:",
               "", "| stack | build | omniprof frames | omniprof ns gross / net | floor frames "
               "| walk ns gross / net | ratio to walk gross / net | walk + send ns gross / net "
               "| ratio to walk + send gross / net | pairs | a run walking nothing, ns "
               "(omniprof / walk / send) |",
               "|---|---|---|---|---|---|---|---|---|---|---|"]

        def two(a, b, spec="{:.0f}", unit=""):
            return " / ".join(bl.fmt(x, spec) + (unit if x is not None else "") for x in (a, b))

        for r in rows:
            for n, (name, key, tag) in enumerate(builds):
                other = r.get("floor_other_run") or []
                runs = [other[n] if n < len(other) else None] + other[-2:]
                out.append(f"| {r['label']} | {name} | {bl.fmt(r['frames'])} "
                           f"| {two(r.get(key), r.get(f'net_{tag}'))} "
                           f"| {bl.fmt(r.get('floor_walk_frames'))} "
                           f"| {two(r.get('floor_walk'), r.get('floor_walk_net'))} "
                           f"| {two(r.get(f'floor_walk_ratio_{tag}'), r.get(f'floor_walk_net_ratio_{tag}'), '{:.2f}', '×')} "
                           f"| {two(r.get('floor_send'), r.get('floor_send_net'))} "
                           f"| {two(r.get(f'floor_send_ratio_{tag}'), r.get(f'floor_send_net_ratio_{tag}'), '{:.2f}', '×')} "
                           f"| {r.get(f'floor_walk_pairs_{tag}', 0)} "
                           f"| {' / '.join(bl.fmt(x, '{:.0f}') for x in runs)} |")
        return out

    # ---- HotSpot naming: cost per new Method*, RSS with 10,000 methods --------
    def jvm_naming(self, n_methods=10000):
        """A generated class of n_methods static methods, each a leaf for about a millisecond
        in turn (javac's output, interpreted and compiled as the JVM sees fit), recorded at
        999 Hz: every method sampled is read once (name, class, source, line table)."""
        seconds = 6 if self.quick else 15
        classes = os.path.join(self.bwl, "java-many")
        os.makedirs(classes, exist_ok=True)
        src = os.path.join(classes, "JavaMany.java")
        with open(src, "w") as f:
            f.write("public class JavaMany {\n  static volatile long sink;\n")
            for i in range(n_methods):
                f.write(f"  static long m{i}(long x) {{ for (int k = 0; k < 20000; k++) "
                        f"x = x * 31 + {i} + (x >>> 7); return x; }}\n")
            # One dispatcher per 1000 methods: a method's bytecode is at most 64 KiB.
            for d in range(0, n_methods, 1000):
                f.write(f"  static long d{d}(int i, long x) {{ switch (i) {{\n")
                for i in range(d, min(d + 1000, n_methods)):
                    f.write(f"    case {i}: return m{i}(x);\n")
                f.write("    default: return x; } }\n")
            f.write("  public static void main(String[] a) throws Exception {\n"
                    "    long end = System.nanoTime() + Long.parseLong(a[0]) * 1000000000L;\n"
                    "    System.out.println(\"ready\"); System.out.flush(); long x = 1;\n"
                    "    for (int i = 0; System.nanoTime() < end; i = (i + 1) % "
                    f"{n_methods}) {{\n      switch (i / 1000) {{\n")
            for d in range(0, n_methods, 1000):
                f.write(f"        case {d // 1000}: x = d{d}(i, x); break;\n")
            f.write("      }\n    }\n    sink = x;\n  }\n}\n")
        jdk = os.environ.get("OMNIPROF_BENCH_JDK", "/usr/lib/jvm/java-17-openjdk-amd64")
        subprocess.run([os.path.join(jdk, "bin", "javac"), "-d", classes, src], check=True)
        w = self.start_ready([os.path.join(jdk, "bin", "java"), "-Xmx64m", "-XX:+UseSerialGC",
                              "-cp", classes, "JavaMany", str(seconds + 20)])
        out = self.out_dir("jvm-naming")
        rec = self.record(["-p", str(w.pid)], seconds, 999, out, verbose=True)
        rec.wait(timeout=seconds + 120)
        w.signal(signal.SIGKILL)
        w.wait()
        text = open(out + ".stderr").read()

        def counter(name):
            m = re.search(re.escape(name) + r"\s+(\d+)", text)
            return int(m.group(1)) if m else 0

        methods, ns = counter("hotspot: methods read"), counter("hotspot: ns reading methods")
        named = 0
        try:
            with open(os.path.join(out, "stacks.folded")) as f:
                named = len({m for line in f for m in re.findall(r"JavaMany\.m\d+", line)})
        except OSError:
            pass
        row = {"methods": methods, "ns": ns / methods if methods else None,
               "named": named, "bytes": counter("hotspot: method bytes now"),
               "rss": rec.maxrss_mib}
        lines = ["| generated methods | distinct m* named | Method* read | ns per new Method* "
                "| method bytes held | omniprof peak RSS |",
                "|---|---|---|---|---|---|",
                f"| {n_methods} | {named} | {methods} | {bl.fmt(row['ns'], '{:.0f}')} "
                f"| {row['bytes']} | {row['rss']:.1f} MiB |"]
        self.sections["jvm-naming"] = (row, lines)
        return lines

    # ---- Ruby naming: cost per new iseq, RSS with 10,000 methods --------------
    def ruby_naming(self, n_methods=10000):
        """A generated Ruby class of n_methods methods, each a leaf for about a millisecond in
        turn (Debian's ruby, interpreted), recorded at 999 Hz: every method sampled is read
        once (label, class, path, line table)."""
        seconds = 6 if self.quick else 15
        src = os.path.join(self.bwl, "ruby_many.rb")
        os.makedirs(self.bwl, exist_ok=True)
        with open(src, "w") as f:
            f.write("class RubyMany\n")
            for i in range(n_methods):
                f.write(f"  def m{i}(x)\n    k = 0\n    while k < 20000\n"
                        f"      x = (x * 31 + {i}) & 0xffffffff\n      k += 1\n    end\n"
                        "    x\n  end\n")
            f.write("end\nnames = (0...%d).map { |i| :\"m#{i}\" }\n" % n_methods)
            f.write("deadline = Process.clock_gettime(Process::CLOCK_MONOTONIC) + ARGV[0].to_f\n"
                    "o = RubyMany.new\nx = 1\ni = 0\nputs \"ready\"\n$stdout.flush\n"
                    "while Process.clock_gettime(Process::CLOCK_MONOTONIC) < deadline\n"
                    f"  x = o.public_send(names[i], x)\n  i = (i + 1) % {n_methods}\nend\n")
        ruby = os.environ.get("OMNIPROF_BENCH_RUBY", "/usr/bin/ruby")
        w = self.start_ready([ruby, src, str(seconds + 20)])
        out = self.out_dir("ruby-naming")
        rec = self.record(["-p", str(w.pid)], seconds, 999, out, verbose=True)
        rec.wait(timeout=seconds + 120)
        w.signal(signal.SIGKILL)
        w.wait()
        text = open(out + ".stderr").read()

        def counter(name):
            m = re.search(re.escape(name) + r"\s+(\d+)", text)
            return int(m.group(1)) if m else 0

        iseqs, ns = counter("ruby: iseqs and method entries read"), counter("ruby: ns reading iseqs")
        named = 0
        try:
            with open(os.path.join(out, "stacks.folded")) as f:
                named = len({m for line in f for m in re.findall(r"RubyMany#m\d+", line)})
        except OSError:
            pass
        row = {"iseqs": iseqs, "ns": ns / iseqs if iseqs else None, "named": named,
               "bytes": counter("ruby: iseq bytes now"), "rss": rec.maxrss_mib}
        lines = ["| generated methods | distinct m* named | iseqs read | ns per new iseq "
                 "| iseq bytes held | omniprof peak RSS |",
                 "|---|---|---|---|---|---|",
                 f"| {n_methods} | {named} | {iseqs} | {bl.fmt(row['ns'], '{:.0f}')} "
                 f"| {row['bytes']} | {row['rss']:.1f} MiB |"]
        self.sections["ruby-naming"] = (row, lines)
        return lines

    def v8_naming(self, n_functions=5000):
        """A generated script of n_functions functions, each a leaf for about a millisecond in
        turn (interpreted, baseline or optimized as V8 sees fit), run by the installed node and
        recorded at 999 Hz: every function sampled is read once (name, script, lines)."""
        seconds = 6 if self.quick else 15
        os.makedirs(self.bwl, exist_ok=True)
        src = os.path.join(self.bwl, "v8_many.js")
        with open(src, "w") as f:
            f.write("'use strict';\n")
            for i in range(n_functions):
                f.write(f"function f{i}(x) {{ for (let k = 0; k < 20000; k++) "
                        f"x = (x * 31 + {i} + (x >>> 7)) | 0; return x; }}\n")
            f.write("const fs = [" + ",".join(f"f{i}" for i in range(n_functions)) + "];\n"
                    "const end = Date.now() + Number(process.argv[2]) * 1000;\n"
                    "process.stdout.write('ready\\n'); let x = 1;\n"
                    f"for (let i = 0; Date.now() < end; i = (i + 1) % {n_functions}) "
                    "x = fs[i](x);\n")
        w = self.start_ready(["/usr/bin/node", src, str(seconds + 20)])
        out = self.out_dir("v8-naming")
        rec = self.record(["-p", str(w.pid)], seconds, 999, out, verbose=True)
        rec.wait(timeout=seconds + 120)
        w.signal(signal.SIGKILL)
        w.wait()
        text = open(out + ".stderr").read()

        def counter(name):
            m = re.search(re.escape(name) + r"\s+(\d+)", text)
            return int(m.group(1)) if m else 0

        objects, ns = counter("v8: frame objects read"), counter("v8: ns reading frame objects")
        named = 0
        try:
            with open(os.path.join(out, "stacks.folded")) as f:
                named = len({m for line in f for m in re.findall(r";f\d+(?=;|\s)", line)})
        except OSError:
            pass
        row = {"objects": objects, "ns": ns / objects if objects else None, "named": named,
               "bytes": counter("v8: frame object bytes now"), "rss": rec.maxrss_mib}
        lines = ["| generated functions | distinct f* named | frame objects read "
                 "| ns per new object | object bytes held | omniprof peak RSS |",
                 "|---|---|---|---|---|---|",
                 f"| {n_functions} | {named} | {objects} | {bl.fmt(row['ns'], '{:.0f}')} "
                 f"| {row['bytes']} | {row['rss']:.1f} MiB |"]
        self.sections["v8-naming"] = (row, lines)
        return lines

    # ---- workloads with progress lines ---------------------------------------
    def start_busy(self, seconds):
        """The busy workloads: the no-frame-pointer native chain and the Python
        loop, one each (on a 2-CPU machine they fill it)."""
        chain = self.start_ready([os.path.join(self.bwl, "bench_chain"), str(seconds)])
        py = self.start_ready([self.python, os.path.join(HERE, "workloads", "py_loop.py"),
                               str(seconds), "30"])
        return {"chain": chain, "python": py}

    def start_compiler_loop(self, out):
        """`gcc -O2 -c` of a generated 300-function C file in a loop: a new cc1 (a large
        binary without frame pointers) every few seconds, as on a build host."""
        src = out + "-loop.c"
        with open(src, "w") as f:
            for i in range(300):
                f.write(f"int f{i}(int *a, int n) {{ int s = {i}; for (int j = 0; j < n; j++) "
                        f"{{ switch ((a[j] + {i}) % 7) {{ case 0: s += a[j] * {i % 13 + 1}; break; "
                        f"case 1: s ^= a[j] << {i % 5}; break; case 2: s -= a[j] / {i % 3 + 1}; "
                        f"break; default: s += j; }} }} return s; }}\n")
        return bl.Child(["bash", "-c", f"echo ready; while :; do gcc -O2 -c '{src}' -o '{src}.o' "
                         f"|| exit 1; done"], stdout=subprocess.PIPE)

    @staticmethod
    def finish_busy(workloads):
        """Stops the workloads; returns their progress lines as [(ns, iterations)]."""
        out = {}
        for name, w in workloads.items():
            try:  # each is a session leader: the compiler loop's gcc goes with its shell
                os.killpg(w.pid, signal.SIGTERM)
            except ProcessLookupError:
                pass
        for name, w in workloads.items():
            text = w.proc.stdout.read().decode(errors="replace")
            w.wait(timeout=10)
            out[name] = [(int(a), int(b)) for a, b in
                         re.findall(r"^progress (\d+) (\d+)$", text, re.M)]
        return out

    @staticmethod
    def rate(progress, t1, t2):
        """Iterations per second between monotonic times t1 and t2 (ns), from the
        progress lines nearest inside the window."""
        inside = [p for p in progress if t1 <= p[0] <= t2]
        if len(inside) < 2 or inside[-1][0] == inside[0][0]:
            return None
        return (inside[-1][1] - inside[0][1]) * 1e9 / (inside[-1][0] - inside[0][0])

    # ---- agent cost ------------------------------------------------------------
    def start_agent(self, omniprof, hz, out, extra=()):
        """The long-running agent: whole system (or extra's targets), a report every 5 s
        over OTLP/HTTP to a local sink. Returns (child, sink)."""
        sink = bl.OtlpHttpSink()
        rec = bl.Child([omniprof, "agent", "-F", str(hz), "--interval", "5",
                        "--otlp-endpoint", f"127.0.0.1:{sink.port}",
                        "--otlp-protocol", "http", "--insecure", "-v",
                        *self.cache_args(omniprof), *extra],
                       stderr=open(out + ".stderr", "w"))
        return rec, sink

    def agent(self):
        seconds = 10 if self.quick else 60
        rows = []
        with bl.BpfStats():
            # "agent -p": only the two busy workloads, so the steady state is the agent's
            # own interval path, not the tables of every process a busy host starts.
            # "agent, compiler loop": the issue's fifth target, the busy workloads plus a
            # new large compiler process (cc1) every few seconds beside them.
            for hz, mode in ((20, "record"), (99, "record"), (20, "agent"), (99, "agent"),
                             (20, "agent -p"), (99, "agent -p"), (20, "agent, compiler loop")):
                if self.rows and not any(w in f"{mode} {hz}" for w in self.rows):
                    continue
                busy = self.start_busy(seconds + 30)
                out = self.out_dir(f"agent-{hz}-{re.sub('[^a-z-]', '', mode)}")
                if "compiler" in mode:
                    busy["compiler loop"] = self.start_compiler_loop(out)
                sink = other = None
                if mode.startswith("agent"):
                    extra = (["-p", f"{busy['chain'].pid},{busy['python'].pid}"]
                             if mode == "agent -p" else [])
                    rec, sink = self.start_agent(self.omniprof, hz, out, extra)
                    if self.against:
                        # The other build's agent beside it: same workloads, same window.
                        other = self.start_agent(self.against, hz, out + "-against", extra)
                else:
                    rec = self.record([], seconds, hz, out, verbose=True)
                mem = (0, 0)
                first = last = cpu_first = other_first = None
                cpu_last = other_last = (0, None)
                if bl.wait_for_prog(rec.pid) and (not other or bl.wait_for_prog(other[0].pid)):
                    t_end = time.monotonic() + seconds - 2
                    time.sleep(10)  # start-up done: /proc scanned, tables built
                    first = (time.monotonic(), bl.sampler_prog_stats(rec.pid))
                    cpu_first = bl.proc_run_s(rec.pid)
                    other_first = bl.proc_run_s(other[0].pid) if other else None
                    while time.monotonic() < t_end and rec.proc.poll() is None:
                        time.sleep(1)
                        cpu_last = (time.monotonic(), bl.proc_run_s(rec.pid))
                        if other:
                            other_last = (time.monotonic(), bl.proc_run_s(other[0].pid))
                        m = bl.bpf_map_memory(rec.pid)
                        if m[0] > mem[0]:
                            mem = m
                        s = bl.sampler_prog_stats(rec.pid)
                        if s:
                            last = (time.monotonic(), s)
                if sink:
                    while time.monotonic() < rec.start + seconds:
                        time.sleep(0.2)
                    rec.signal(signal.SIGTERM)
                    if other:
                        other[0].signal(signal.SIGTERM)
                rec.wait(timeout=120)
                if other:
                    other[0].wait(timeout=120)
                    other[1].close()
                self.finish_busy(busy)
                exports = None
                if sink:
                    exports = (sink.requests, sink.bytes)
                    sink.close()
                bpf_pct = ns = steady = steady_other = None
                if first and cpu_first is not None and cpu_last[1] is not None:
                    steady = (cpu_last[1] - cpu_first) / (cpu_last[0] - first[0]) * 100
                if first and other_first is not None and other_last[1] is not None:
                    steady_other = (other_last[1] - other_first) / (other_last[0] - first[0]) * 100
                if first and last and first[1] and last[1][1] > first[1][1]:
                    bpf_pct = (last[1][0] - first[1][0]) / ((last[0] - first[0]) * 1e9) * 100
                    ns = (last[1][0] - first[1][0]) / (last[1][1] - first[1][1])
                rows.append({
                    "hz": hz, "mode": mode, "exports": exports, "seconds": seconds, "wall": rec.wall,
                    "cpu_pct": rec.cpu_s / rec.wall * 100, "cpu_s": rec.cpu_s,
                    "utime": rec.rusage.ru_utime, "stime": rec.rusage.ru_stime,
                    "rss": rec.maxrss_mib, "map_mib": mem[0] / 2**20, "maps": mem[1],
                    "bpf_pct": bpf_pct, "bpf_ns_run": ns, "status": rec.status, "steady": steady,
                    "steady_against": steady_other,
                    "rss_against": other[0].maxrss_mib if other else None,
                })
        lines = ["Agent CPU counts the whole run: loading the BPF programs, scanning every "
                 "process, building their tables, and writing the profile at the end; the steady "
                 "state column is the CPU used between 10 s after start and the end of sampling "
                 "(/proc/PID/task/*/schedstat, nanoseconds). BPF time is charged to the interrupted "
                 "processes. `record` writes one profile at the end; `agent` symbolizes, encodes and "
                 "sends an OTLP/HTTP report every 5 s to a local receiver (bench/benchlib.py "
                 "OtlpHttpSink) and is stopped with SIGTERM after the same time."
                 + (" With --against, that build's agent runs beside each agent row (same workloads, "
                    "same window, its own receiver): its steady state and peak RSS are the last "
                    "columns." if self.against else ""),
                 "",
                 "| mode, frequency | agent CPU (user+sys) | % of one CPU | steady state | peak RSS | BPF map memory "
                 "| BPF time, % of one CPU (all CPUs) | BPF ns per program run (all processes) |"
                 + (" steady state, --against build | peak RSS, --against build |"
                    if self.against else ""),
                 "|---|---|---|---|---|---|---|---|" + ("---|---|" if self.against else "")]
        for r in rows:
            sent = ""
            if r["exports"]:
                sent = f", {r['exports'][0]} reports ({r['exports'][1] / 1024:.0f} KiB) sent"
            lines.append(
                f"| `{r['mode']}`, {r['hz']} Hz, {r['seconds']} s{sent} | {r['cpu_s']:.2f} s ({r['utime']:.2f} user, "
                f"{r['stime']:.2f} sys) in {r['wall']:.1f} s | **{r['cpu_pct']:.2f}%** "
                f"| {bl.fmt(r['steady'], '{:.2f}%')} "
                f"| **{r['rss']:.1f} MiB** | {r['map_mib']:.1f} MiB in {r['maps']} maps "
                f"| {bl.fmt(r['bpf_pct'], '{:.2f}%')} | {bl.fmt(r['bpf_ns_run'], '{:.0f}')} |"
                + (f" {bl.fmt(r['steady_against'], '{:.2f}%')} "
                   f"| {bl.fmt(r.get('rss_against'), '{:.1f} MiB')} |" if self.against else ""))
        self.sections["agent"] = (rows, lines)
        return lines

    # ---- start-up: time to first sample, CPU of the first 60 s, peak RSS ---------------
    def startup(self):
        """This build and, with --against, the other one, in the same run: launches
        alternate (time to first sample), the long runs go side by side on the same
        busy workloads (agent's first 60 s, record's peak RSS)."""
        builds = [("this build", self.omniprof)]
        if self.against:
            builds.append(("--against", self.against))
        launches = 3 if self.quick else 7
        seconds = 10 if self.quick else 60
        res = {name: {"first": [], "cpu": None, "peak": {}, "maxrss": {}, "maps": (0, 0)}
               for name, _ in builds}
        with bl.BpfStats():
            for i in range(launches):
                for name, exe in (builds if i % 2 == 0 else builds[::-1]):
                    c = bl.Child([exe, "record", "-d", "1", "-F", "20", *self.cache_args(exe), "-o",
                                  self.out_dir(f"first-{i}-{len(res[name]['first'])}")])
                    t = bl.first_prog_run(c.pid, c.start)
                    c.wait(timeout=60)
                    res[name]["first"].append(t)
            for mode in ("agent", "record"):
                self.empty_table_caches()
                busy = self.start_busy(seconds + 40)
                sinks, kids = [], []
                for name, exe in builds:
                    if mode == "agent":
                        sink = bl.OtlpHttpSink()
                        sinks.append(sink)
                        argv = [exe, "agent", "-F", "20", "--interval", "5", "--otlp-endpoint",
                                f"127.0.0.1:{sink.port}", "--otlp-protocol", "http", "--insecure",
                                *self.cache_args(exe)]
                    else:
                        argv = [exe, "record", "-d", str(seconds), "-F", "20", *self.cache_args(exe),
                                "-o", self.out_dir(f"startup-record-{len(kids)}")]
                    kids.append((name, bl.Child(argv)))
                end = time.monotonic() + seconds + 40
                while time.monotonic() < end:
                    running = [(n, c) for n, c in kids if bl.alive(c.pid)]
                    if not running:
                        break
                    for name, c in running:
                        parts = bl.rss_parts(c.pid)
                        peak = res[name]["peak"].get(mode)
                        if parts and (not peak or sum(parts.values()) > sum(peak.values())):
                            res[name]["peak"][mode] = parts
                        m = bl.bpf_map_memory(c.pid)
                        if m[0] > res[name]["maps"][0]:
                            res[name]["maps"] = m
                        if mode == "agent" and res[name]["cpu"] is None and \
                                time.monotonic() - c.start >= seconds:
                            res[name]["cpu"] = bl.proc_cpu_s(c.pid)
                            c.signal(signal.SIGTERM)
                    time.sleep(0.2)
                for name, c in kids:
                    c.wait(timeout=120)
                    res[name]["maxrss"][mode] = c.maxrss_mib
                for sink in sinks:
                    sink.close()
                self.finish_busy(busy)

        def parts(p):
            if not p:
                return "n/a"
            return (f"ring {p['ring'] / 1024:.0f}, code {p['code'] / 1024:.0f}, heap "
                    f"{p['heap'] / 1024:.0f}, files {p['files'] / 1024:.0f}")

        rows = []
        lines = [f"Time to first sample: from the launch of `record -F 20` (whole system, nothing of "
                 f"ours running beside it) to the first run of its sampling program (the events "
                 f"start when start-up is done; `kernel.bpf_stats_enabled`, polled every 5 ms): "
                 f"median of {launches} launches, the builds alternating. Agent CPU: "
                 f"`agent -F 20 --interval 5` to a local OTLP/HTTP receiver, user + system time "
                 f"over its first {seconds} s (/proc/PID/stat, 10 ms ticks), start-up included. "
                 f"Peak RSS: the kernel's high-water mark (rusage) of that agent and of "
                 f"`record -d {seconds} -F 20`, the builds side by side on the same busy "
                 f"workloads; beside it the largest /proc/PID/smaps total seen (every 0.2 s) "
                 f"split in MiB: the BPF ring buffer's mapping (kernel memory, "
                 f"mapped once by util/bpf_ring.c, all resident), code (binary and shared libraries), heap (malloc and "
                 f"anonymous mappings), mapped files.", "",
                 "| build | time to first sample (median; min–max) | agent CPU, first "
                 f"{seconds} s | % of one CPU | agent peak RSS | record peak RSS | BPF map memory |",
                 "|---|---|---|---|---|---|---|"]
        for name, _ in builds:
            r = res[name]
            firsts = [t * 1000 for t in r["first"] if t is not None]
            row = {"build": name, "first_ms": bl.median(firsts), "cpu_s": r["cpu"],
                   "cpu_pct": r["cpu"] / seconds * 100 if r["cpu"] is not None else None,
                   "rss": r["maxrss"], "peak": r["peak"], "maps": r["maps"]}
            rows.append(row)
            lines.append(
                f"| {name} | **{bl.fmt(row['first_ms'], '{:.0f} ms')}**"
                f" ({bl.fmt(min(firsts) if firsts else None, '{:.0f}')}–"
                f"{bl.fmt(max(firsts) if firsts else None, '{:.0f}')}; "
                f"{len(firsts)} of {len(r['first'])}) "
                f"| {bl.fmt(row['cpu_s'], '{:.2f} s')} | **{bl.fmt(row['cpu_pct'], '{:.2f}%')}** "
                f"| **{bl.fmt(r['maxrss'].get('agent'), '{:.1f} MiB')}** "
                f"({parts(r['peak'].get('agent'))}) "
                f"| **{bl.fmt(r['maxrss'].get('record'), '{:.1f} MiB')}** "
                f"({parts(r['peak'].get('record'))}) "
                f"| {r['maps'][0] / 2**20:.1f} MiB in {r['maps'][1]} maps |")
        self.sections["startup"] = (rows, lines)
        return lines

    # ---- off-CPU: BPF time per context switch, agent CPU --------------------------
    def offcpu(self):
        """Two threads ping-ponging over pipes (bench/workloads/pingpong.c, 25,000 round trips
        a second: 50,000 switch-outs of user threads), profiled by `agent -p` without and with
        --off-cpu at P = 1, 0.1, 0.01."""
        seconds = 8 if self.quick else 30
        rows = []
        with bl.BpfStats():
            for p in (None, 1, 0.1, 0.01):
                wl = self.start_ready([os.path.join(self.bwl, "pingpong"), str(seconds + 12)])
                out = self.out_dir(f"offcpu-{p}")
                sink = bl.OtlpHttpSink()
                argv = [self.omniprof, "agent", "-p", str(wl.pid), "--interval", "5",
                        "--otlp-endpoint", f"127.0.0.1:{sink.port}", "--otlp-protocol", "http",
                        "--insecure", "-v"]
                if p is not None:
                    argv.append(f"--off-cpu={p}")
                rec = bl.Child(argv, stderr=open(out + ".stderr", "w"))
                series, first, last = [], None, None
                if bl.wait_for_prog(rec.pid):
                    time.sleep(3)  # start-up done
                    map_id = bl.stats_map_id(rec.pid)

                    def snap():
                        ctr = bl.read_counters(map_id) if map_id else None
                        return (time.monotonic(), bl.named_prog_stats(rec.pid, "on_switch"),
                                bl.proc_cpu_s(rec.pid), ctr or {})
                    first = prev = snap()
                    end = time.monotonic() + seconds
                    while time.monotonic() < end and rec.proc.poll() is None:
                        time.sleep(1)
                        now = snap()
                        if now[1] and prev[1] and now[1][1] > prev[1][1]:
                            series.append((now[1][0] - prev[1][0]) / (now[1][1] - prev[1][1]))
                        prev = last = now
                rec.signal(signal.SIGTERM)
                rec.wait(timeout=60)
                sink.close()
                wl.signal()
                text = wl.proc.stdout.read().decode(errors="replace")
                wl.wait(timeout=10)
                m = re.search(r"round_trips_per_s (\d+)", text)
                row = {"p": p, "rate": int(m.group(1)) if m else None, "ns": bl.median(series),
                       "cpu_pct": None, "switches_s": None, "recorded_s": None, "bpf_pct": None,
                       "requests": sink.requests}
                if first and last and last[0] > first[0]:
                    dt = last[0] - first[0]
                    if first[2] is not None and last[2] is not None:
                        row["cpu_pct"] = (last[2] - first[2]) / dt * 100
                    for key, idx in (("switches_s", bl.OP_STAT_OFFCPU_SWITCHES),
                                     ("recorded_s", bl.OP_STAT_OFFCPU_SAMPLED)):
                        row[key] = (last[3].get(idx, 0) - first[3].get(idx, 0)) / dt
                    if first[1] and last[1]:
                        row["bpf_pct"] = (last[1][0] - first[1][0]) / (dt * 1e9) * 100
                rows.append(row)
        lines = ["`agent -p PINGPONG --interval 5` to a local OTLP/HTTP receiver, while two "
                 "threads ping-pong a byte over pipes (bench/workloads/pingpong.c, paced at "
                 "25,000 round trips a second: two blocking reads each). BPF ns per switch: the "
                 "context-switch program's run time ÷ runs (`kernel.bpf_stats_enabled`), median "
                 "over 1 s intervals, over every context switch of the machine (other processes' "
                 "are filtered at once, idle and kernel threads too); BPF % is that time in % of "
                 "one CPU. Agent CPU: /proc/PID/stat between 3 s after start and the end "
                 "(10 ms ticks). The workload's own rate shows what the switches cost it.", "",
                 "| --off-cpu | user-thread switch-outs/s | recorded/s | BPF ns per switch "
                 "(median) | BPF, % of one CPU | agent CPU, % of one CPU | workload round "
                 "trips/s |",
                 "|---|---|---|---|---|---|---|"]
        for r in rows:
            lines.append(
                f"| {'off' if r['p'] is None else 'P = ' + str(r['p'])} "
                f"| {bl.fmt(r['switches_s'], '{:.0f}')} | {bl.fmt(r['recorded_s'], '{:.0f}')} "
                f"| {bl.fmt(r['ns'], '{:.0f}')} | {bl.fmt(r['bpf_pct'], '{:.2f}%')} "
                f"| {bl.fmt(r['cpu_pct'], '{:.2f}%')} | {bl.fmt(r['rate'], '{:.0f}')} |")
        self.sections["offcpu"] = (rows, lines)
        return lines

    # ---- exec to first complete sample ------------------------------------------
    def latency(self):
        launches = 4 if self.quick else 10
        rows = []
        exe = os.path.join(self.bwl, "exec_phases")
        for hz in (99, 20):
            out = self.out_dir(f"latency-{hz}")
            rec = self.record([], 4 + launches * 0.8, hz, out)
            names = []
            if bl.wait_for_prog(rec.pid):
                time.sleep(1.0)
                for i in range(launches):
                    # A distinct name (comm) per launch tells the launches apart.
                    name = f"lat{hz}_{i:02d}"
                    link = os.path.join(self.tmp, name)
                    if not os.path.exists(link):
                        os.symlink(exe, link)
                    t0 = time.monotonic_ns()
                    c = bl.Child([link, str(t0), "300"])
                    c.wait(timeout=10)
                    names.append(name)
                    time.sleep(0.4)
            rec.wait(timeout=120)
            firsts = self.first_complete_phase(os.path.join(out, "stacks.folded"), names)
            found = [f for f in firsts.values() if f is not None]
            rows.append({"hz": hz, "launches": launches, "found": len(found),
                         "median": bl.median(found), "max": max(found) if found else None})
        lines = ["| frequency | launches | with a complete sample | first complete sample after exec, "
                 "median | worst |", "|---|---|---|---|---|"]
        for r in rows:
            lines.append(f"| {r['hz']} Hz | {r['launches']} | {r['found']} "
                         f"| **≤ {bl.fmt(r['median'], '{:.0f}')} ms** | ≤ {bl.fmt(r['max'], '{:.0f}')} ms |")
        self.sections["latency"] = (rows, lines)
        return lines

    @staticmethod
    def first_complete_phase(folded, names):
        """Per launch name: the end (ms after exec) of the first 5 ms phase with a
        sample unwound from phase_NN up to main; None if there is none."""
        first = {n: None for n in names}
        try:
            text = open(folded).read()
        except OSError:
            return first
        for line in text.splitlines():
            body = line.rsplit(" ", 1)[0]
            frames = body.split(";")
            if frames[0] not in first or "[unwind stopped" in body:
                continue
            m = re.search(r";main;step_a;step_b;phase_(\d\d|late)(;|$)", body)
            if not m:
                continue
            end_ms = 205.0 if m.group(1) == "late" else (int(m.group(1)) + 1) * 5.0
            if first[frames[0]] is None or end_ms < first[frames[0]]:
                first[frames[0]] = end_ms
        return first

    # ---- table build time and size ---------------------------------------------
    def tables(self):
        files = largest_eh_frame_files(5)
        libc = "/usr/lib/x86_64-linux-gnu/libc.so.6"
        if os.path.exists(libc) and libc not in [f for f, _ in files]:
            files.append((libc, eh_frame_size(libc)))
        r = subprocess.run([os.path.join(self.build, "bench", "stack_deltas_bench")] +
                           [f for f, _ in files], capture_output=True, text=True)
        rows = []
        for path, eh in files:
            block = r.stdout.split(path + " (", 1)
            if len(block) < 2:
                continue
            body = block[1].split("\n/", 1)[0]
            d = re.search(r"deltas (\d+),.* (\d+) pages in (\d+) levels, (\d+) bytes in BPF", body)
            t = re.search(r"build ([\d.]+) ms", body)
            c = re.search(r"from the table cache ([\d.]+) ms", body)
            if not d or not t:
                continue
            ms = float(t.group(1))
            cached_ms = float(c.group(1)) if c else None
            rows.append({"file": path, "eh_mib": eh / 2**20, "deltas": int(d.group(1)),
                         "levels": int(d.group(3)), "bpf_mib": int(d.group(4)) / 2**20, "ms": ms,
                         "mib_s": eh / 2**20 / (ms / 1000) if ms else None, "cached_ms": cached_ms})
        lines = ["| file | .eh_frame | deltas | tree levels | in BPF maps | build time (best of 10) "
                 "| throughput | from the disk cache (id + read back) |", "|---|---|---|---|---|---|---|---|"]
        for x in rows:
            lines.append(f"| `{x['file']}` | {x['eh_mib']:.2f} MiB | {x['deltas']} | {x['levels']} "
                         f"| {x['bpf_mib']:.2f} MiB | {x['ms']:.1f} ms | **{bl.fmt(x['mib_s'])} MiB/s** "
                         f"| {bl.fmt(x['cached_ms'])} ms |")
        self.sections["tables"] = (rows, lines)
        return lines

    # ---- verifier ------------------------------------------------------------------
    def verifier(self):
        r = subprocess.run([os.path.join(self.build, "bench", "verifier_stats")],
                           capture_output=True, text=True)
        if r.returncode:
            raise RuntimeError(f"verifier_stats failed: {r.stderr.strip()}")
        rows, prog = [], None
        for line in r.stdout.splitlines():
            m = re.match(r"program (\S+): (\d+) instructions, (\d+) verified", line)
            if m:
                prog = m.group(1)
                rows.append({"program": prog, "function": "(total)", "insns": int(m.group(2)),
                             "verified": int(m.group(3))})
                continue
            m = re.match(r"  verification time (\d+) usec", line)
            if m and rows:
                rows[-1]["usec"] = int(m.group(1))
                continue
            m = re.match(r"  ([^:]+): (\d+)$", line)
            if m and prog:
                rows.append({"program": prog, "function": m.group(1), "insns": None,
                             "verified": int(m.group(2))})
        limit = 1000000
        lines = ["Instructions the verifier processed when the agent loads its programs (kernel "
                 "stacks on): the kernel's `verified_insns`, against its limit of 1,000,000. Global "
                 "functions (the rule lookup, each runtime's step) are verified once, on their own; "
                 "their share is the count of instruction lines in the level-2 log between the "
                 "verifier's \"Validating\" markers (an approximate split). A runtime's step past "
                 "half the limit moves into a tail-called program of its own. When the level-2 "
                 "log outgrows its 16 MiB, only the totals are given. Verification time: the "
                 "kernel's, wall clock (a loaded host inflates it).", "",
                 "| program | function | instructions | processed | % of the limit | "
                 "verification time |",
                 "|---|---|---|---|---|---|"]
        for x in rows:
            usec = f"{x['usec'] / 1000:.1f} ms" if x.get("usec") is not None else ""
            lines.append(f"| `{x['program']}` | {x['function']} | "
                         f"{x['insns'] if x['insns'] is not None else ''} | {x['verified']} | "
                         f"{100.0 * x['verified'] / limit:.2f}% | {usec} |")
        self.sections["verifier"] = (rows, lines)
        return lines

    # ---- side by side ------------------------------------------------------------
    def compare(self):
        seconds = 8 if self.quick else 30
        hz = 99
        tools = [("none (baseline)", None)]
        have_perf = shutil.which("perf") and subprocess.run(
            ["perf", "--version"], capture_output=True).returncode == 0
        if have_perf:
            tools += [("perf record -g (frame pointers)", "perf-fp"),
                      ("perf record --call-graph dwarf", "perf-dwarf")]
        if shutil.which("bpftrace"):
            tools.append(("bpftrace profile:hz + ustack", "bpftrace"))
        tools += [("omniprof", "omniprof"), ("none (baseline, again)", None)]
        rows = []
        with bl.BpfStats():
            for label, kind in tools:
                rows.append(self.compare_one(label, kind, seconds, hz))
        base = {}
        for w in ("chain", "python"):
            rates = [r["rates"].get(w) for r in rows if r["kind"] is None]
            base[w] = bl.median(rates)
        for r in rows:
            for w in ("chain", "python"):
                rr = r["rates"].get(w)
                r[f"slow_{w}"] = (1 - rr / base[w]) * 100 if rr and base[w] else None
        lines = [f"All at {hz} Hz on every CPU (whole system) for {seconds} s, while the two "
                 "workloads run; one tool at a time, in this order.", "",
                 "| tool | tool CPU (user+sys) | % of one CPU | post-processing CPU | peak RSS "
                 "| data / kernel maps | BPF time, % of one CPU | native chain: slowdown "
                 "| Python loop: slowdown | native leaf samples complete | Python samples complete |",
                 "|---|---|---|---|---|---|---|---|---|---|---|"]
        for r in rows:
            if r["kind"] is None:
                lines.append(f"| {r['label']} | – | – | – | – | – | – "
                             f"| {bl.fmt(r['rates'].get('chain'), '{:.0f}')} it/s "
                             f"| {bl.fmt(r['rates'].get('python'), '{:.0f}')} it/s | – | – |")
                continue
            lines.append(
                f"| {r['label']} | {r['cpu_s']:.2f} s | **{r['cpu_pct']:.2f}%** "
                f"| {bl.fmt(r.get('post_cpu_s'), '{:.1f} s', '–')} | {r['rss']:.1f} MiB "
                f"| {r['data']} | {bl.fmt(r.get('bpf_pct'), '{:.2f}%', '–')} "
                f"| {bl.fmt(r['slow_chain'], '{:+.1f}%')} | {bl.fmt(r['slow_python'], '{:+.1f}%')} "
                f"| {self.share(r.get('chain_complete'))} | {self.share(r.get('py_complete'))} |")
        self.sections["compare"] = (rows, lines)
        return lines

    @staticmethod
    def share(pair):
        if not pair or not pair[1]:
            return "n/a"
        return f"**{pair[0] * 100.0 / pair[1]:.1f}%** of {pair[1]}"

    def compare_one(self, label, kind, seconds, hz):
        out = self.out_dir("compare-" + (kind or "none") + str(int(time.monotonic())))
        busy = self.start_busy(seconds + 60)
        tool = None
        row = {"label": label, "kind": kind, "rates": {}}
        data = os.path.join(out, "perf.data")
        if kind == "perf-fp":
            tool = bl.Child(["perf", "record", "-a", "-g", "-F", str(hz), "-o", data, "-q"])
        elif kind == "perf-dwarf":
            tool = bl.Child(["perf", "record", "-a", "--call-graph", "dwarf", "-F", str(hz), "-o",
                             data, "-q"])
        elif kind == "bpftrace":
            tool = bl.Child(["bpftrace", "-e",
                             f"profile:hz:{hz} {{ @[comm, ustack] = count(); }}"],
                            stdout=open(os.path.join(out, "bpftrace.txt"), "w"))
        elif kind == "omniprof":
            tool = bl.Child([self.omniprof, "record", "-F", str(hz), "-o", out],
                            stderr=open(out + ".stderr", "w"))
        if tool and kind in ("bpftrace", "omniprof"):
            bl.wait_for_prog(tool.pid)
        time.sleep(2.0)  # the tool is running (perf has no ready signal)
        t1 = time.monotonic_ns()
        s1 = bl.sampler_prog_stats(tool.pid) if tool else None
        mem = 0
        end = time.monotonic() + seconds
        while time.monotonic() < end:
            time.sleep(1)
            if tool and kind in ("bpftrace", "omniprof"):
                mem = max(mem, bl.bpf_map_memory(tool.pid)[0])
        t2 = time.monotonic_ns()
        s2 = bl.sampler_prog_stats(tool.pid) if tool else None
        if tool:
            tool.signal(signal.SIGINT)
            tool.wait(timeout=300)
        progress = self.finish_busy(busy)
        for w, prog in progress.items():
            row["rates"][w] = self.rate(prog, t1, t2)
        if not tool:
            return row
        row.update(cpu_s=tool.cpu_s, cpu_pct=tool.cpu_s / tool.wall * 100, rss=tool.maxrss_mib)
        if s1 and s2:
            row["bpf_pct"] = (s2[0] - s1[0]) / (t2 - t1) * 100
        if kind.startswith("perf"):
            size = os.path.getsize(data) if os.path.exists(data) else 0
            row["data"] = f"{size / 2**20:.1f} MiB perf.data"
            script = bl.Child(["perf", "script", "-i", data, "-F", "comm,pid,ip,sym,dso"],
                              stdout=open(os.path.join(out, "script.txt"), "w"))
            script.wait(timeout=1800)
            row["post_cpu_s"] = script.cpu_s
            stacks = parse_perf_script(os.path.join(out, "script.txt"))
        elif kind == "bpftrace":
            row["data"] = f"{mem / 2**20:.1f} MiB maps"
            stacks = parse_bpftrace(os.path.join(out, "bpftrace.txt"))
        else:
            row["data"] = f"{mem / 2**20:.1f} MiB maps"
            stacks = parse_folded(os.path.join(out, "stacks.folded"))
        row["chain_complete"] = chain_completeness(stacks)
        row["py_complete"] = python_completeness(stacks)
        return row

    # ---- the results file ----------------------------------------------------------
    def markdown(self, started, load_before):
        m = bl.machine_description()
        lines = ["# omniprof benchmarks: latest results", "",
                 f"Written by `make bench` (bench/run.py) on {time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime(started))}, "
                 f"in {(time.time() - started) / 60:.1f} minutes.", "",
                 "## Machine", "",
                 f"- CPU: {m['cpu']}, {m['cpus']} CPUs; {m['mem_gib']:.1f} GiB RAM; "
                 f"virtualization: {m['virt']}",
                 f"- {m['os']}, kernel {m['kernel']}",
                 f"- load average before: {load_before}; after: {m['load']} "
                 "(other work on the machine inflates every figure here)",
                 f"- Python workload: `{self.python}`",
                 f"- omniprof: commit {git_commit()}", "",
                 "## How to rerun", "",
                 "```sh",
                 "scripts/install-deps.sh --bench   # linux-perf, bpftrace",
                 "make -j2 bench                    # all sections, rewrites bench/RESULTS.md",
                 "python3 bench/run.py --quick bpf-cost   # one section, short runs, to the terminal",
                 "```", "",
                 "Each figure is measured in this run, side by side where compared. Medians are over "
                 "0.5 s intervals (BPF time) or launches (latency). BPF time per sample is the "
                 "kernel's own accounting (`kernel.bpf_stats_enabled`: run time ÷ runs, for the runs "
                 "that walked a stack); it is charged to the interrupted process, not to the agent.", ""]
        titles = {
            "agent": "Agent cost: whole system, busy workloads (native no-FP chain + Python loop)",
            "startup": "Start-up and memory: time to first sample, the agent's first minute, "
                       "peak RSS (whole system, 20 Hz)",
            "bpf-cost": "Kernel cost: BPF time per sample by stack depth (999 Hz, only the workload's pids)",
            "latency": "Latency: exec of a new program to its first completely unwound sample "
                       "(5 ms phases; a bound, not an exact time)",
            "tables": "Tables: stack-delta build time and size, largest .eh_frame on this machine",
            "verifier": "Verifier: instructions processed per BPF program and global function",
            "compare": "Side by side: perf, bpftrace and omniprof, same workloads, same run",
            "jvm-naming": "HotSpot naming: cost per new Method*, RSS with a 10,000-method class",
            "ruby-naming": "Ruby naming: cost per new iseq, RSS with a 10,000-method class",
            "v8-naming": "V8 naming: cost per new frame object, RSS with a 5,000-function script",
            "offcpu": "Off-CPU: BPF time per context switch and agent CPU, 50,000 switch-outs/s",
            "serve": "omniprof serve: ingest and queries over a fleet's hour (previous run beside)",
        }
        for key in ("agent", "startup", "bpf-cost", "offcpu", "latency", "tables", "verifier", "compare",
                    "jvm-naming", "ruby-naming", "v8-naming", "serve"):
            if key in self.sections:
                lines += [f"## {titles[key]}", ""] + self.sections[key][1] + [""]
        lines += ["## Targets", ""] + self.targets() + [""]
        return "\n".join(lines)

    # ---- omniprof serve -------------------------------------------------------------
    def serve(self):
        """serve_bench over a fleet's hour (10 hosts x 2 CPUs x 20 Hz), then `omniprof serve`
        on that database: flame graphs over HTTP and the server's peak RSS."""
        seconds = 600 if self.quick else 3600
        db = os.path.join(self.out_dir("serve"), "serve.db")
        r = subprocess.run([os.path.join(self.build, "bench", "serve_bench"), db, str(seconds)],
                           capture_output=True, text=True)
        if r.returncode:
            raise RuntimeError(f"serve_bench failed: {r.stderr.strip()}")
        out = r.stdout
        row = {"seconds": seconds}
        m = re.search(r"ingest: (\d+) samples in ([\d.]+) s: (\d+) samples/s; cpu ([\d.]+) s: (\d+)", out)
        if m:
            row.update(samples=int(m.group(1)), ingest_s=float(m.group(3)),
                       ingest_cpu_s=float(m.group(5)))
        for q in ("flame", "top", "flame-host"):
            m = re.search(q + r": p50 ([\d.]+) ms, p95 ([\d.]+) ms.*cpu p50 ([\d.]+) ms, p95 ([\d.]+) ms",
                          out)
            if m:
                row[q] = tuple(float(m.group(i)) for i in range(1, 5))
        m = re.search(r"db: (\d+) bytes in use, ([\d.]+) bytes/sample", out)
        if m:
            row.update(db_bytes=int(m.group(1)), bytes_per_sample=float(m.group(2)))
        rng = re.search(r"range: (\d+) (\d+)", out)
        # The server on that database: HTTP flame graphs of the whole hour, peak RSS.
        port = 17000 + os.getpid() % 1000
        srv = bl.Child([self.omniprof, "serve", "--db", db, "--retention", "0",
                        "--listen", f"127.0.0.1:{port}", "--grpc-listen", f"127.0.0.1:{port + 1}"])
        times = []
        try:
            import urllib.request
            url = f"http://127.0.0.1:{port}/api/flame?from={rng.group(1)}&to={rng.group(2)}" if rng else None
            for _ in range(50):
                try:
                    urllib.request.urlopen(f"http://127.0.0.1:{port}/healthz", timeout=2).read()
                    break
                except OSError:
                    time.sleep(0.1)
            for _ in range(10 if url else 0):
                t0 = time.monotonic()
                urllib.request.urlopen(url, timeout=60).read()
                times.append((time.monotonic() - t0) * 1000)
            with open(f"/proc/{srv.pid}/status") as f:
                hwm = re.search(r"VmHWM:\s+(\d+) kB", f.read())
            row["serve_rss_mib"] = int(hwm.group(1)) / 1024 if hwm else None
        finally:
            srv.signal(signal.SIGTERM)
            srv.wait(timeout=10)
        times.sort()
        row["http_flame"] = (times[len(times) // 2], times[-1]) if times else None
        prev = self.previous_serve()

        def cell(v, spec="{:.1f}"):
            return bl.fmt(v, spec)

        def q(key, i):
            return row[key][i] if key in row else None

        lines = [f"serve_bench: {row.get('samples', 0):,} samples ({seconds} s of 10 hosts x 2 CPUs at "
                 "20 Hz, an OTLP request per host every 5 s, encoded by the agent's encoder), then "
                 "20 runs of each query over the whole range on a read connection. Wall times count "
                 "the other work on the machine (see the load above); CPU times are the query's own. "
                 "Then `omniprof serve` on that database: 10 flame graphs of the range over HTTP and "
                 "the server's peak RSS.", "",
                 "| figure | this run | previous run |", "|---|---|---|",
                 f"| ingest, samples/s (wall) | **{cell(row.get('ingest_s'), '{:,.0f}')}** | {prev.get('ingest', '')} |",
                 f"| ingest, samples per CPU-second | {cell(row.get('ingest_cpu_s'), '{:,.0f}')} | {prev.get('ingest-cpu', '')} |",
                 f"| flame, whole range: p50 / p95 wall (CPU) | **{cell(q('flame', 0))} / {cell(q('flame', 1))} ms** ({cell(q('flame', 2))} / {cell(q('flame', 3))} ms) | {prev.get('flame', '')} |",
                 f"| top, whole range: p50 / p95 wall (CPU) | **{cell(q('top', 0))} / {cell(q('top', 1))} ms** ({cell(q('top', 2))} / {cell(q('top', 3))} ms) | {prev.get('top', '')} |",
                 f"| flame, one host: p50 / p95 wall (CPU) | {cell(q('flame-host', 0))} / {cell(q('flame-host', 1))} ms ({cell(q('flame-host', 2))} / {cell(q('flame-host', 3))} ms) | {prev.get('flame-host', '')} |",
                 f"| flame over HTTP (client side): median / max of 10 | {cell(row['http_flame'][0] if row['http_flame'] else None)} / {cell(row['http_flame'][1] if row['http_flame'] else None)} ms | {prev.get('http', '')} |",
                 f"| database: bytes per sample | {cell(row.get('bytes_per_sample'))} ({cell((row.get('db_bytes') or 0) / 2**20)} MiB) | {prev.get('bytes', '')} |",
                 f"| serve's peak RSS (VmHWM) | {cell(row.get('serve_rss_mib'))} MiB | {prev.get('rss', '')} |"]
        self.sections["serve"] = (row, lines)
        return lines

    def previous_serve(self):
        """This section's figures in the RESULTS.md being replaced, by row."""
        prev = {}
        try:
            text = open(os.path.join(ROOT, "bench", "RESULTS.md")).read()
        except OSError:
            return prev
        keys = {"ingest, samples/s": "ingest", "ingest, samples per CPU": "ingest-cpu",
                "flame, whole range": "flame", "top, whole range": "top", "flame, one host": "flame-host",
                "flame over HTTP": "http", "database: bytes": "bytes", "serve's peak RSS": "rss"}
        for line in text.splitlines():
            cells = [c.strip() for c in line.strip().strip("|").split("|")]
            for k, v in keys.items():
                if len(cells) >= 2 and cells[0].startswith(k):
                    prev[v] = cells[1]
        return prev

    def targets(self):
        out = ["| target | measured | met |", "|---|---|---|"]

        def row(name, value, ok):
            out.append(f"| {name} | {value} | {'yes' if ok else ('no' if ok is not None else 'not measured')} |")

        agent = {(r["mode"], r["hz"]): r for r in self.sections.get("agent", ([], []))[0]}
        at20 = [agent[k] for k in (("record", 20), ("agent", 20)) if k in agent]
        if at20:
            row("agent CPU ≤ 1% of one CPU at 20 Hz (aim ≤ 0.2%)",
                "; ".join(f"`{r['mode']}` {r['cpu_pct']:.2f}% over the whole run, "
                          f"{bl.fmt(r['steady'], '{:.2f}%')} in steady state" for r in at20),
                all(r["cpu_pct"] <= 1.0 for r in at20))
            rss = max(r["rss"] for r in agent.values())
            row("peak RSS ≤ 64 MiB (aim ≤ 32 MiB)", f"{rss:.1f} MiB", rss <= 64)
        start = [r for r in self.sections.get("startup", ([], []))[0] if r["build"] == "this build"]
        if start:
            r = start[0]
            row("time to first sample ≤ 300 ms (idle host)", bl.fmt(r["first_ms"], "{:.0f} ms"),
                r["first_ms"] is not None and r["first_ms"] <= 300)
            row("agent CPU over its first 60 s ≤ 0.5% of one CPU", bl.fmt(r["cpu_pct"], "{:.2f}%"),
                r["cpu_pct"] is not None and r["cpu_pct"] <= 0.5)
            rss = [v for v in r["rss"].values() if v is not None]
            row("peak RSS ≤ 32 MiB, agent and record", "; ".join(
                f"`{k}` {v:.1f} MiB" for k, v in r["rss"].items()), bool(rss) and max(rss) <= 32)
        cost = self.sections.get("bpf-cost", ([], []))[0]
        forty = [r for r in cost if r["label"].startswith("native, 40")]
        if forty:
            ns = forty[0]["ns"]
            row("BPF ≤ 3 µs per 40-frame sample", f"{bl.fmt(ns and ns / 1000, '{:.2f}')} µs",
                ns is not None and ns <= 3000)
        lat = self.sections.get("latency", ([], []))[0]
        for r in lat:
            row(f"first complete sample ≤ 100 ms after exec ({r['hz']} Hz, worst launch)",
                f"≤ {bl.fmt(r['max'], '{:.0f}')} ms", r["max"] is not None and r["max"] <= 100
                and r["found"] == r["launches"])
        comp = {r["kind"]: r for r in self.sections.get("compare", ([], []))[0]}
        if "omniprof" in comp and "perf-dwarf" in comp:
            o, d = comp["omniprof"], comp["perf-dwarf"]

            def pct(p):
                return p[0] / p[1] if p and p[1] else 0

            row("complete chains wherever perf --call-graph dwarf gets them",
                f"native {pct(o['chain_complete']) * 100:.1f}% vs {pct(d['chain_complete']) * 100:.1f}%",
                pct(o["chain_complete"]) >= pct(d["chain_complete"]) - 0.01)
            row("lower cost than perf (tool CPU incl. post-processing)",
                f"{o['cpu_s']:.1f} s vs {d['cpu_s'] + d.get('post_cpu_s', 0):.1f} s (dwarf)",
                o["cpu_s"] < d["cpu_s"] + d.get("post_cpu_s", 0))
        sv = self.sections.get("serve", ({}, []))[0]
        if sv.get("ingest_s"):
            row("serve ingest ≥ 50,000 samples/s", f"{sv['ingest_s']:,.0f} samples/s",
                sv["ingest_s"] >= 50000)
        if sv.get("flame"):
            row("serve flame graph over 1 h (≈1.4 M samples) p95 ≤ 300 ms",
                f"{sv['flame'][1]:.1f} ms (CPU {sv['flame'][3]:.1f} ms)", sv["flame"][1] <= 300)
        if sv.get("top"):
            row("serve top table p95 ≤ 200 ms", f"{sv['top'][1]:.1f} ms (CPU {sv['top'][3]:.1f} ms)",
                sv["top"][1] <= 200)
        return out


def frames_per_sample(stderr_path):
    """User frames per walked sample from a `record -v` run's counters, or None."""
    with open(stderr_path) as f:
        text = f.read()

    def counter(name):
        m = re.search(re.escape(name) + r"\s+(\d+)", text)
        return int(m.group(1)) if m else 0

    samples = counter("user: trace records")
    frames = counter("frames: unwound with stack deltas") + \
        counter("frames: unwound with frame pointers") + \
        counter("v8: frames walked in BPF") + \
        counter("ruby: Ruby frames walked in BPF") + \
        counter("ruby: C function frames walked in BPF") + \
        counter("python: frames walked in BPF") + \
        counter("perl: frames walked in BPF") + \
        counter("php: frames walked in BPF") + \
        sum(counter("hotspot: %s frames walked in BPF" % k)
            for k in ("interpreted", "compiled", "stub", "inlined"))
    return frames / samples if samples else None


def git_commit():
    r = subprocess.run(["git", "-C", ROOT, "describe", "--always", "--dirty"],
                       capture_output=True, text=True)
    return r.stdout.strip() or "unknown"


# ---- stacks from each tool: lists of frames, leaf first ---------------------------
CHAIN = ["leaf"] + [f"a_{i:02d}" for i in range(12, 0, -1)] + ["main"]


def parse_folded(path):
    stacks = []
    try:
        lines = open(path).read().splitlines()
    except OSError:
        return stacks
    for line in lines:
        body, _, count = line.rpartition(" ")
        frames = body.split(";")
        user = [f for f in frames[1:] if not f.endswith("_[k]")]
        stacks.append((frames[0], list(reversed(user)), int(count)))
    return stacks


def parse_perf_script(path):
    stacks, comm, frames = [], None, []
    try:
        f = open(path, errors="replace")
    except OSError:
        return stacks
    with f:
        for line in f:
            if not line.strip():
                if comm is not None:
                    stacks.append((comm, frames, 1))
                comm, frames = None, []
            elif not line[0].isspace():
                comm, frames = line.split()[0], []
            else:
                parts = line.split(None, 1)
                # Kernel frames are not compared; inlined frames only omniprof lacks.
                if len(parts) < 2 or "[kernel.kallsyms]" in parts[1] or "(inlined)" in parts[1]:
                    continue
                sym = parts[1].rsplit(" (", 1)[0].strip()
                frames.append(sym.split("+0x")[0])
    if comm is not None:
        stacks.append((comm, frames, 1))
    return stacks


def parse_bpftrace(path):
    stacks = []
    try:
        text = open(path, errors="replace").read()
    except OSError:
        return stacks
    for m in re.finditer(r"@\[([^,\n]*),\s*\n(.*?)\]: (\d+)", text, re.S):
        frames = [f.strip().split("+")[0] for f in m.group(2).splitlines() if f.strip()]
        stacks.append((m.group(1).strip(), frames, int(m.group(3))))
    return stacks


def chain_completeness(stacks):
    """(complete, total) over the native chain's samples in leaf(): complete when
    every link up to main follows in order."""
    done = total = 0
    for comm, frames, n in stacks:
        # omniprof names inlined calls below leaf() (wl_spin_n); perf's
        # "(inlined)" frames are skipped above, so compare from leaf() on.
        if comm == "bench_chain" and "leaf" in frames[:3]:
            frames = frames[frames.index("leaf"):]
        if comm != "bench_chain" or not frames or frames[0] != "leaf":
            continue
        total += n
        if frames[:len(CHAIN)] == CHAIN:
            done += n
    return done, total


def python_completeness(stacks, comm="py_loop"):
    """(complete, total) over the Python workload's samples: complete when the
    native stack reaches libc's __libc_start_call_main (under the interpreter's
    main, which the compiler may inline)."""
    done = total = 0
    for c, frames, n in stacks:
        if c != comm or not frames:
            continue
        total += n
        if "__libc_start_call_main" in frames and \
                not any(f.startswith("[unwind stopped") for f in frames):
            done += n
    return done, total


# ---- the largest .eh_frame sections on this machine --------------------------------
def eh_frame_size(path):
    import struct
    try:
        with open(path, "rb") as f:
            h = f.read(64)
            if len(h) < 64 or h[:4] != b"\x7fELF" or h[4] != 2 or h[5] != 1:
                return 0
            shoff, = struct.unpack_from("<Q", h, 0x28)
            shentsize, shnum, shstrndx = struct.unpack_from("<HHH", h, 0x3A)
            if not shoff or shentsize != 64 or shstrndx >= shnum:
                return 0
            f.seek(shoff)
            sh = f.read(shnum * 64)
            stroff, strsize = struct.unpack_from("<QQ", sh, shstrndx * 64 + 24)
            f.seek(stroff)
            names = f.read(min(strsize, 1 << 20))
            for i in range(shnum):
                name, = struct.unpack_from("<I", sh, i * 64)
                size, = struct.unpack_from("<Q", sh, i * 64 + 32)
                if names[name:name + 10] == b".eh_frame\0":
                    return size
    except (OSError, struct.error):
        pass
    return 0


def largest_eh_frame_files(n):
    roots = ["/usr/bin", "/usr/sbin", "/usr/lib", "/usr/libexec", "/usr/local", "/opt"]
    seen, found = set(), []
    for root in roots:
        for d, _, files in os.walk(root):
            for name in files:
                p = os.path.join(d, name)
                try:
                    st = os.lstat(p)
                except OSError:
                    continue
                if not os.path.isfile(p) or os.path.islink(p) or st.st_size < (1 << 20):
                    continue
                if (st.st_dev, st.st_ino) in seen:
                    continue
                seen.add((st.st_dev, st.st_ino))
                size = eh_frame_size(p)
                if size:
                    found.append((p, size))
    found.sort(key=lambda x: -x[1])
    return found[:n]


# bpf-cost with a build whose BPF object has OP_BPF_PHASES (bpf/sampler.bpf.c: enum
# sample_phase): where a walked sample's time goes. Such a build, beside the default one:
#   make BUILD=build-phases CLANG="clang -DOP_BPF_PHASES" build-phases/omniprof
# (workloads: a symlink build-phases/workloads -> ../build/workloads, or a full build).
SAMPLE_PHASES = ["setup", "known", "header", "walk", "size", "wakeup", "ring"]


def phase_maps(pid):
    """(phase_ns map id, stats map id) of pid's sampler when its BPF object has the
    phase_ns map, else None."""
    phase_map = stats_map = None
    for _, info in bl.fdinfo(pid):
        if info.get("map_type") != str(bl.BPF_MAP_TYPE_PERCPU_ARRAY):
            continue
        r = subprocess.run(["bpftool", "-j", "map", "show", "id", info["map_id"]],
                           capture_output=True, text=True)
        name = json.loads(r.stdout).get("name") if r.returncode == 0 else None
        if name == "phase_ns":
            phase_map = info["map_id"]
        elif name == "stats":
            stats_map = info["map_id"]
    if phase_map is None or stats_map is None:
        return None
    return phase_map, stats_map


def phase_snap(maps):
    """(walked samples, [ns per phase]) from phase_maps()' maps, None without them."""
    if not maps:
        return None
    phases, ctrs = bl.read_counters_of(list(maps))
    if phases is None or ctrs is None:
        return None
    return bl.walked_samples(ctrs), [phases.get(i, 0) for i in range(len(SAMPLE_PHASES))]


def phase_split(before, after):
    """ns per walked sample in each phase between two phase_snap()s, None without them."""
    if not before or not after or after[0] <= before[0]:
        return None
    n = after[0] - before[0]
    return [(a - b) / n for b, a in zip(before[1], after[1])]


def phase_lines(rows):
    """The phase table of bpf-cost rows measured with an OP_BPF_PHASES build."""
    found = [(r["label"], "this", r.get("phases")) for r in rows] + \
        [(r["label"], "--against", r.get("against_phases")) for r in rows]
    found = [f for f in found if f[2]]
    if not found:
        return []
    out = ["", "Where a walked sample's time goes (OP_BPF_PHASES builds; ns per walked sample, "
           "bpf_ktime_get_ns around each part of sample(); the rest of the BPF time per sample is "
           "the program's entry and exit and the runs filtered early, charged to the walked ones):",
           "", "| stack | build | " + " | ".join(SAMPLE_PHASES) + " | sum |",
           "|---|---|" + "---|" * (len(SAMPLE_PHASES) + 1)]
    for label, build, ph in found:
        out.append(f"| {label} | {build} | " + " | ".join(f"{v:.0f}" for v in ph) +
                   f" | {sum(ph):.0f} |")
    return out


SECTIONS = ["bpf-cost", "agent", "startup", "offcpu", "latency", "tables", "verifier", "compare",
            "jvm-naming", "ruby-naming", "v8-naming", "serve"]


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--build", default=os.environ.get("OMNIPROF_BUILD", "build"))
    ap.add_argument("--out", default=None, help="write the markdown results here")
    ap.add_argument("--quick", action="store_true", help="shorter runs (a smoke test)")
    ap.add_argument("--depths", default=None, help="bpf-cost depths, e.g. 10,40")
    ap.add_argument("--rows", default=None,
                    help="bpf-cost: only the rows whose label contains one of these "
                         "comma-separated words, e.g. 'native,Java'; agent: of its "
                         "'MODE HZ' labels, e.g. 'agent -p'")
    ap.add_argument("--against", default=None, metavar="BUILD",
                    help="bpf-cost, startup and agent: also run this build's omniprof on the same workload "
                         "at the same time (before/after comparisons on a busy machine)")
    ap.add_argument("--paired", type=int, default=None, metavar="FRAMES",
                    help="bpf-cost: the Java rows only, each in 0.5 s rounds alternating with a native "
                         "FRAMES-frame stack (the other one stopped), profiled by the same agent; reports "
                         "the median of the round pairs' per-frame ratios (the host's drift between "
                         "rows does not move it)")
    ap.add_argument("--floor", choices=("rounds", "together", "off"), default="rounds",
                    help="bpf-cost: each native row's frame-pointer floor (bench/fp_floor on "
                         "deep_recursion_fp at the same depth) in 0.5 s rounds alternating with the "
                         "row's workers (default), running at the same time, or not at all")
    ap.add_argument("--table-cache", default=None, metavar="DIR",
                    help="startup: each build's table cache in a folder under DIR, emptied before "
                         "the agent's and the record's long runs (a cold start)")
    ap.add_argument("sections", nargs="*", help=", ".join(SECTIONS))
    args = ap.parse_args()
    if os.geteuid() != 0:
        sys.exit("bench: run as root (BPF, perf and bpf_stats need it)")
    for s in args.sections:
        if s not in SECTIONS:
            sys.exit(f"bench: unknown section {s} (sections: {', '.join(SECTIONS)})")
    b = Bench(args)
    started, load_before = time.time(), bl.machine_description()["load"]
    try:
        for s in args.sections or SECTIONS:
            print(f"== {s}", flush=True)
            if s == "bpf-cost":
                depths = [int(x) for x in args.depths.split(",")] if args.depths else None
                lines = b.bpf_cost(depths)
            else:
                lines = getattr(b, s.replace("-", "_"))()
            print("\n".join(lines), flush=True)
        if args.out:
            with open(args.out, "w") as f:
                f.write(b.markdown(started, load_before))
            print(f"wrote {args.out}")
    finally:
        shutil.rmtree(b.tmp, ignore_errors=True)


if __name__ == "__main__":
    main()
