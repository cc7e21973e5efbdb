# Python -> C -> Python: call_into_c calls cb_outer (tests/workloads/lib/
# py_callback.c, through ctypes), whose cb_middle calls the Python function
# py_callback back, which spins in cb_leaf.
#   main -> call_into_c -> [ctypes] -> cb_outer -> cb_middle -> [ctypes
#   callback] -> py_callback -> cb_leaf
# Usage: python py_mixed.py SECONDS LIBRARY
import ctypes
import os
import sys
import time


def cb_leaf(i):
    x = i
    for k in range(3000):
        x = (x * 13 + k) % 10007
    return x


def py_callback(i):
    return cb_leaf(i)


def call_into_c(lib, fn, deadline):
    total = 0
    while time.time() < deadline:
        total += lib.cb_outer(fn, 50)
    return total


def main():
    lib = ctypes.CDLL(sys.argv[2])
    proto = ctypes.CFUNCTYPE(ctypes.c_long, ctypes.c_long)
    fn = proto(py_callback)
    lib.cb_outer.restype = ctypes.c_long
    lib.cb_outer.argtypes = [proto, ctypes.c_long]
    deadline = time.time() + float(sys.argv[1])
    os.write(1, b"ready\n")  # one write: the reader closes the pipe after it
    call_into_c(lib, fn, deadline)


main()
