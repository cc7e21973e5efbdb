#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""omniprof benchmarks. `make bench` runs them all and writes bench/RESULTS.md.

    bench/run.py [--build DIR] [--out FILE] [--quick] [SECTION...]

Sections: bpf-cost, agent, latency, tables, compare (default: all). Needs
root, a build (`make tests bench-tools`), and for `compare` linux-perf and
bpftrace (scripts/install-deps.sh --bench installs them). Every figure is a
median over repeated intervals or runs, measured on this machine now.
"""

import argparse
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
ROOT = os.path.dirname(HERE)


class Bench:
    def __init__(self, args):
        self.build = os.path.abspath(args.build)
        self.quick = args.quick
        self.omniprof = os.path.join(self.build, "omniprof")
        self.wl = os.path.join(self.build, "workloads")
        self.bwl = os.path.join(self.build, "bench", "workloads")
        self.python = os.environ.get("OMNIPROF_BENCH_PYTHON", "/usr/bin/python3")
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

    def record(self, extra, seconds, hz, out, verbose=False):
        argv = [self.omniprof, "record", "-d", str(seconds), "-F", str(hz), "-o", out]
        if verbose:
            argv.append("-v")
        return bl.Child(argv + extra, stdout=subprocess.DEVNULL,
                        stderr=open(out + ".stderr", "w"))

    # ---- BPF time per sample ------------------------------------------------
    def bpf_cost_one(self, label, make_workload, seconds):
        workers = [make_workload() for _ in range(os.cpu_count() or 1)]
        out = self.out_dir(f"bpf-cost-{label}")
        rec = self.record(["-p", ",".join(str(w.pid) for w in workers)], seconds + 3, 999, out,
                          verbose=True)
        series = []
        if bl.wait_for_prog(rec.pid):
            time.sleep(1.0)  # tables built and loaded
            series = bl.ns_per_sample_series(rec.pid, seconds)
        rec.wait(timeout=60)
        for w in workers:
            w.signal(signal.SIGKILL)
            w.wait()
        text = open(out + ".stderr").read()

        def counter(name):
            m = re.search(re.escape(name) + r"\s+(\d+)", text)
            return int(m.group(1)) if m else 0

        samples = counter("user: trace records")
        frames = counter("frames: unwound with stack deltas") + \
            counter("frames: unwound with frame pointers")
        return {
            "label": label,
            "ns": bl.median(series),
            "p90": sorted(series)[int(len(series) * 0.9)] if series else None,
            "intervals": len(series),
            "frames": frames / samples if samples else None,
        }

    def bpf_cost(self, depths=None):
        seconds = 3 if self.quick else 8
        rows = []
        with bl.BpfStats():
            for depth in depths or (10, 40, 256):
                rows.append(self.bpf_cost_one(
                    f"native, {depth} frames",
                    lambda d=depth: self.start_ready(
                        [os.path.join(self.wl, "deep_recursion"), "600", str(d)]),
                    seconds))
            rows.append(self.bpf_cost_one(
                "Python, 30 Python frames",
                lambda: self.start_ready([self.python, os.path.join(HERE, "workloads", "py_loop.py"),
                                          "600", "30"]),
                seconds))
        lines = ["| stack | user frames per sample | BPF ns per sample (median) | p90 | intervals |",
                 "|---|---|---|---|---|"]
        for r in rows:
            lines.append(f"| {r['label']} | {bl.fmt(r['frames'])} | {bl.fmt(r['ns'], '{:.0f}')} "
                         f"| {bl.fmt(r['p90'], '{:.0f}')} | {r['intervals']} |")
        self.sections["bpf-cost"] = (rows, lines)
        return lines


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--build", default=os.environ.get("OMNIPROF_BUILD", "build"))
    ap.add_argument("--out", default=None, help="write the markdown results here")
    ap.add_argument("--quick", action="store_true", help="shorter runs (a smoke test)")
    ap.add_argument("--depths", default=None, help="bpf-cost depths, e.g. 10,40")
    ap.add_argument("sections", nargs="*")
    args = ap.parse_args()
    if os.geteuid() != 0:
        sys.exit("bench: run as root (BPF, perf and bpf_stats need it)")
    b = Bench(args)
    try:
        for s in args.sections or ["bpf-cost"]:
            if s == "bpf-cost":
                depths = [int(x) for x in args.depths.split(",")] if args.depths else None
                print("\n".join(b.bpf_cost(depths)), flush=True)
    finally:
        shutil.rmtree(b.tmp, ignore_errors=True)


if __name__ == "__main__":
    main()
