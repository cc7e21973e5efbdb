#!/usr/bin/env python3
"""Start-up cost of two builds, launches alternating: CPU (user + system) and peak RSS
(rusage) of `record -p PID -d 2` and of `agent -p PID` stopped after 4 s, PID a sleeping
process (so the figures are start-up, the BPF load and the exit, not the profiling of a
busy host). Prints medians. Needs root.

    bench/start_pair.py BUILD_A BUILD_B [RUNS]
"""
import os
import resource
import signal
import socket
import statistics
import subprocess
import sys
import tempfile
import time


def run(argv, stop_after=None):
    """CPU seconds and max RSS (MiB) of one child."""
    p = subprocess.Popen(argv, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    if stop_after is not None:
        time.sleep(stop_after)
        p.send_signal(signal.SIGTERM)
    _, status, ru = os.wait4(p.pid, 0)
    if not os.WIFEXITED(status) or os.WEXITSTATUS(status) != 0:
        print(f"  {' '.join(argv[:2])}: exit status {status}", file=sys.stderr)
    return ru.ru_utime + ru.ru_stime, ru.ru_maxrss / 1024


def main():
    builds = sys.argv[1:3]
    runs = int(sys.argv[3]) if len(sys.argv) > 3 else 10
    sleeper = subprocess.Popen(["sleep", "3600"])
    # Nothing listens on this port: each export fails at once, alike for both builds.
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
    s.close()
    res = {(b, m): [] for b in builds for m in ("record", "agent")}
    with tempfile.TemporaryDirectory() as tmp:
        for i in range(runs):
            for b in (builds if i % 2 == 0 else builds[::-1]):
                exe = os.path.join(b, "omniprof")
                res[(b, "record")].append(run([exe, "record", "-p", str(sleeper.pid), "-d", "2",
                                               "-F", "20", "--table-cache", "off",
                                               "-o", os.path.join(tmp, f"r{i}")]))
                res[(b, "agent")].append(run([exe, "agent", "-p", str(sleeper.pid), "-F", "20",
                                              "--interval", "2", "--table-cache", "off",
                                              "--otlp-endpoint", f"127.0.0.1:{port}",
                                              "--otlp-protocol", "http", "--insecure"],
                                             stop_after=4))
    sleeper.kill()
    print(f"| build | record -d 2: CPU | record: peak RSS | agent, 4 s: CPU | agent: peak RSS |")
    print("|---|---|---|---|---|")
    for b in builds:
        r, a = res[(b, "record")], res[(b, "agent")]
        print(f"| {b} | {statistics.median(x[0] for x in r) * 1000:.0f} ms "
              f"| {statistics.median(x[1] for x in r):.1f} MiB "
              f"| {statistics.median(x[0] for x in a) * 1000:.0f} ms "
              f"| {statistics.median(x[1] for x in a):.1f} MiB |")
    print(f"(medians of {runs} launches each, alternating)")


if __name__ == "__main__":
    main()
