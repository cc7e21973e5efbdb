# A thread that waits in time.sleep under a known chain, for the off-CPU test
# (tests/e2e/test_offcpu.c): napper -> nap_outer -> nap_inner -> time.sleep
# (2 ms) in a loop, on a thread of its own while the main thread joins it.
# Usage: python py_sleep.py SECONDS
import os
import sys
import threading
import time


def nap_inner(deadline):
    while time.time() < deadline:
        time.sleep(0.002)


def nap_outer(deadline):
    nap_inner(deadline)


def napper(deadline):
    nap_outer(deadline)


def main():
    deadline = time.time() + float(sys.argv[1] if len(sys.argv) > 1 else 10)
    t = threading.Thread(target=napper, args=(deadline,))
    t.start()
    os.write(1, b"ready\n")  # one write: the reader closes the pipe after it
    t.join()


main()
