# SPDX-License-Identifier: Apache-2.0
"""A busy Python workload for the benchmarks: DEPTH nested Python calls, then a
loop of pure-Python arithmetic until SECONDS have passed (or SIGTERM),
printing "progress TIME_NS ITERATIONS" (CLOCK_MONOTONIC) four times a second
and "iterations_per_s N" at the end. It prints "ready" once running. With
THREADS > 1, as many threads run the same loop (sharing the GIL; only the
main thread reports progress), so samples land in a long list of thread states.

Usage: python3 py_loop.py SECONDS DEPTH [THREADS]
"""

import signal
import sys
import threading
import time

stop = False


def on_term(*_):
    global stop
    stop = True


def leaf_loop(deadline, report=True):
    n, x, last = 0, 1, 0
    while not stop:
        for _ in range(1000):
            x = (x * 1103515245 + 12345) & 0xFFFFFFFF
        n += 1
        if n % 16 == 0:
            now = time.monotonic_ns()
            if report and now - last >= 250_000_000:
                print(f"progress {now} {n * 1000}", flush=True)
                last = now
            if now >= deadline * 1e9:
                break
    if report:
        print(f"progress {time.monotonic_ns()} {n * 1000}", flush=True)
    return n


def nest(depth, deadline, report=True):
    if depth > 1:
        return nest(depth - 1, deadline, report)
    return leaf_loop(deadline, report)


def name_process(name):
    """Sets the process name (comm) so profiles tell this workload from other
    Python processes on the machine."""
    try:
        import ctypes
        ctypes.CDLL(None).prctl(15, name.encode(), 0, 0, 0)  # PR_SET_NAME
    except (OSError, AttributeError):
        pass


def main():
    name_process("py_loop")
    seconds = float(sys.argv[1]) if len(sys.argv) > 1 else 10
    depth = int(sys.argv[2]) if len(sys.argv) > 2 else 20
    threads = int(sys.argv[3]) if len(sys.argv) > 3 else 1
    sys.setrecursionlimit(depth + 100)
    signal.signal(signal.SIGTERM, on_term)
    start = time.monotonic()
    for _ in range(threads - 1):
        threading.Thread(target=nest, args=(depth, start + seconds, False), daemon=True).start()
    print("ready", flush=True)
    n = nest(depth, start + seconds)
    print(f"iterations_per_s {n * 1000 / (time.monotonic() - start):.1f}", flush=True)


if __name__ == "__main__":
    main()
