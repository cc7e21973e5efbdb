# main -> run -> link_01 .. link_10 -> py_leaf: the leaf spins on arithmetic,
# so nearly every sample lands in it with the whole chain below.
# Usage: python py_chain.py SECONDS [DEPTH]
#   DEPTH (default 0): extra recursion levels (rec) between link_10 and py_leaf.
import os
import sys
import time


def py_leaf(deadline):
    x = 0
    while time.time() < deadline:
        for i in range(2000):
            x = (x * 31 + i) % 1000003
    return x


def rec(n, deadline):
    if n == 0:
        return py_leaf(deadline)
    return rec(n - 1, deadline) + 1


def link_10(d, depth):
    return rec(depth, d)


def link_09(d, depth):
    return link_10(d, depth)


def link_08(d, depth):
    return link_09(d, depth)


def link_07(d, depth):
    return link_08(d, depth)


def link_06(d, depth):
    return link_07(d, depth)


def link_05(d, depth):
    return link_06(d, depth)


def link_04(d, depth):
    return link_05(d, depth)


def link_03(d, depth):
    return link_04(d, depth)


def link_02(d, depth):
    return link_03(d, depth)


def link_01(d, depth):
    return link_02(d, depth)


def run(seconds, depth):
    os.write(1, b"ready\n")  # one write: the reader closes the pipe after it
    return link_01(time.time() + seconds, depth)


def main():
    seconds = float(sys.argv[1])
    depth = int(sys.argv[2]) if len(sys.argv) > 2 else 0
    sys.setrecursionlimit(10000)
    run(seconds, depth)


main()
