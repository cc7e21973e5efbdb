#!/usr/bin/env python3
"""Two agents side by side on the same busy workloads: steady CPU, minor faults, high-water (issue 22).

    bench/agent_pair.py HZ SECONDS OMNIPROF_A OMNIPROF_B [EXTRA ARGS]

Starts bench_chain and py_loop.py (built in OMNIPROF_A's build), then each
omniprof's `agent -F HZ --interval 5 -v` to its own local OTLP/HTTP receiver
at once (EXTRA ARGS appended to both; PIDS in them becomes the two
workloads' pids, e.g. `-p PIDS`). Between 10 s and SECONDS it counts each
agent's CPU (utime + stime) and minor faults from /proc/PID/stat, then prints
those, its high-water (VmHWM) and the last `frames named N (MS ms)` of its
-v log (stderr in /tmp/agent_pair.N.err). Needs root and a build.
"""
import os
import re
import signal
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import benchlib as bl  # noqa: E402


def stat(pid):
    """(minor faults, CPU seconds) of pid so far."""
    f = open(f"/proc/{pid}/stat").read().rsplit(")", 1)[1].split()
    return int(f[7]), (int(f[11]) + int(f[12])) / os.sysconf("SC_CLK_TCK")


def main():
    if len(sys.argv) < 5:
        sys.exit(__doc__)
    hz, secs, exes, extra = sys.argv[1], int(sys.argv[2]), sys.argv[3:5], sys.argv[5:]
    if secs <= 10:
        sys.exit("SECONDS must be over 10")
    bwl = os.path.join(os.path.dirname(os.path.abspath(exes[0])), "bench", "workloads")
    chain = subprocess.Popen([os.path.join(bwl, "bench_chain"), str(secs + 20)],
                             stdout=subprocess.DEVNULL)
    py = subprocess.Popen(["python3", os.path.join(HERE, "workloads", "py_loop.py"),
                           str(secs + 20), "30"], stdout=subprocess.DEVNULL)
    time.sleep(1)
    extra = [x.replace("PIDS", f"{chain.pid},{py.pid}") for x in extra]
    kids = []
    for i, exe in enumerate(exes):
        sink = bl.OtlpHttpSink()
        argv = [exe, "agent", "-F", hz, "--interval", "5", "--otlp-endpoint",
                f"127.0.0.1:{sink.port}", "--otlp-protocol", "http", "--insecure", "-v"] + extra
        err = open(f"/tmp/agent_pair.{i}.err", "w")
        kids.append((exe, subprocess.Popen(argv, stdout=subprocess.DEVNULL, stderr=err), sink))
    time.sleep(10)
    before = [stat(c.pid) for _, c, _ in kids]
    time.sleep(secs - 10)
    after = [stat(c.pid) for _, c, _ in kids]
    hwm = [int(re.search(r"VmHWM:\s+(\d+)", open(f"/proc/{c.pid}/status").read()).group(1))
           for _, c, _ in kids]
    for _, c, _ in kids:
        c.send_signal(signal.SIGTERM)
    for _, c, sink in kids:
        c.wait()
        sink.close()
    chain.kill()
    py.kill()
    for i, (exe, _, _) in enumerate(kids):
        named = [ln for ln in open(f"/tmp/agent_pair.{i}.err") if "frames named" in ln]
        m = re.search(r"frames named (\d+) \(([\d.]+) ms\)", named[-1]) if named else None
        cpu = after[i][1] - before[i][1]
        print(f"{exe}: steady {cpu:.2f} s CPU ({cpu / (secs - 10) * 100:.2f}%), minor faults "
              f"{after[i][0] - before[i][0]}, high-water {hwm[i] / 1024:.1f} MiB, frames named "
              f"{m.group(1) if m else '?'} in {m.group(2) if m else '?'} ms")


if __name__ == "__main__":
    main()
