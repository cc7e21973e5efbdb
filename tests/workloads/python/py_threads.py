# Three threads, each spinning in its own chain:
#   worker_a -> a_mid -> a_leaf, worker_b -> b_mid -> b_leaf,
#   worker_c -> c_mid -> c_leaf
# so a profile that mixed up the threads' interpreter states shows one
# thread's leaf under another thread's chain.
# Usage: python py_threads.py SECONDS
import os
import sys
import threading
import time


def spin(deadline):
    x = 0
    while time.time() < deadline:
        for i in range(1000):
            x = (x * 17 + i) % 65521
    return x


def a_leaf(d):
    return spin(d)


def a_mid(d):
    return a_leaf(d)


def worker_a(d):
    return a_mid(d)


def b_leaf(d):
    return spin(d)


def b_mid(d):
    return b_leaf(d)


def worker_b(d):
    return b_mid(d)


def c_leaf(d):
    return spin(d)


def c_mid(d):
    return c_leaf(d)


def worker_c(d):
    return c_mid(d)


def main():
    deadline = time.time() + float(sys.argv[1])
    threads = [threading.Thread(target=w, args=(deadline,)) for w in (worker_a, worker_b, worker_c)]
    for t in threads:
        t.start()
    os.write(1, b"ready\n")  # one write: the reader closes the pipe after it
    for t in threads:
        t.join()


main()
