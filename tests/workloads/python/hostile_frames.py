# A CPython process (3.11 or 3.12) that damages its own interpreter state
# with ctypes, in ways the interpreter does not notice because it never goes
# back to what was damaged, while a profiler reads exactly those fields:
#   garbage  the running frame's `previous` points at unmapped memory
#   loop     the running frame's `previous` points at the frame itself
#   code     the caller's frame says its code object is a bytes object
#   tstate   the thread state's thread_id is garbage (no thread matches it)
# The process names itself "hp_MODE" (prctl) and spins in hp_MODE_inner,
# called from hp_MODE_outer, until SECONDS pass. Prints "ready" once damaged.
# Usage: python3 hostile_frames.py MODE SECONDS
import ctypes
import gc
import sys
import threading
import time

# _PyInterpreterFrame.previous and .f_code (Include/internal/pycore_frame.h),
# PyFrameObject.f_frame: offsets for x86-64 release builds.
LAYOUT = {(3, 11): (48, 32), (3, 12): (8, 0)}
F_FRAME = 24

mode = sys.argv[1]
deadline = time.time() + float(sys.argv[2])
PREVIOUS, F_CODE = LAYOUT[sys.version_info[:2]]
not_code = b"this is not a code object" * 4


def poke(addr, value):
    ctypes.c_void_p.from_address(addr).value = value


def peek(addr):
    return ctypes.c_void_p.from_address(addr).value or 0


def interp_frame(frame):
    return peek(id(frame) + F_FRAME)


def spin(name):
    ready()
    x = 1
    while time.time() < deadline:
        for i in range(20000):
            x = (x * 31 + i) & 0xFFFFFF
        time.sleep(0.006)  # most of the time: the machine has other work
    # The damaged frames must never be returned to.
    import os
    os._exit(0)


def ready():
    print("ready", flush=True)


def hp_garbage_inner():
    poke(interp_frame(sys._getframe()) + PREVIOUS, 0x4141414141414000)
    spin("garbage")


def hp_garbage_outer():
    hp_garbage_inner()


def hp_loop_inner():
    f = interp_frame(sys._getframe())
    poke(f + PREVIOUS, f)
    spin("loop")


def hp_loop_outer():
    hp_loop_inner()


def hp_code_inner():
    caller = interp_frame(sys._getframe(1))
    poke(caller + F_CODE, id(not_code))
    spin("code")


def hp_code_outer():
    hp_code_inner()


def hp_tstate_inner():
    ts = ctypes.pythonapi.PyThreadState_Get
    ts.restype = ctypes.c_void_p
    tstate = ts()
    ident = threading.get_ident()
    for off in range(0, 512, 8):
        if peek(tstate + off) == ident:
            poke(tstate + off, 0x5A5A5A5A5A5A5A5A)
            break
    else:
        raise SystemExit("thread_id not found in the thread state")
    spin("tstate")


def hp_tstate_outer():
    hp_tstate_inner()


gc.disable()
libc = ctypes.CDLL(None)
libc.prctl(15, ("hp_" + mode).encode(), 0, 0, 0)  # PR_SET_NAME
{"garbage": hp_garbage_outer, "loop": hp_loop_outer, "code": hp_code_outer,
 "tstate": hp_tstate_outer}[mode]()
